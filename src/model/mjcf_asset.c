// mjcf_asset.c - MJCF <asset>: meshes, loaded from their files when read (folder: <compiler meshdir>,
// inside the model folder). A missing mesh file is a warning (its geoms are dropped, mjcf_body.c) unless
// physLoadOptions.strict_mesh; textures, materials, skins and height fields are for rendering, skipped.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "mjcf_reader.h"

// index of the mesh named name, -1 if none
int mjcf_find_mesh(const physSpec* s, const char* name) {
  for (int i = 0; i < s->nmesh; i++) {
    if (!strcmp(s->mesh[i].name, name)) return i;
  }
  return -1;
}

// PHYS_OK if no mesh (loaded or missing) is named name yet, else the error at el
static physStatus unused_name(mjcfCtx* c, xmlNode* el, const char* name) {
  if (mjcf_find_mesh(c->s, name) >= 0 || mjcf_strlist_has(&c->missing_mesh, name))
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "mesh name '%s' used twice", name);
  return PHYS_OK;
}

// a new mesh of the spec named name, at el's file and line; NULL out of memory
static physSpecMesh* add_mesh(mjcfCtx* c, xmlNode* el, const char* name) {
  int i = phys_spec_add_mesh(c->s);
  if (i < 0) return NULL;
  physSpecMesh* m = c->s->mesh + i;
  snprintf(m->name, sizeof m->name, "%s", name);
  m->line = (int)xmlGetLineNo(el);
  m->fileid = mjcf_elem_fileid(c, el);
  return m;
}

// issue 14 item 2: <mesh name vertex face> (as identify --write-model writes a learned shape): 3 N vertex numbers
// (N >= 4), 3 F face indices in [0, N) (required: physid takes the mass properties from the faces), scaled by scale
static physStatus inline_mesh(mjcfCtx* c, xmlNode* el, const double scale[3], physSpecMesh* m) {
  const char* vt = mjcf_attr_text(el, "vertex");
  const char* ft = mjcf_attr_text(el, "face");
  if (!ft) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "inline mesh data (vertex=) needs face= (physid takes the "
                                  "mass properties from the faces)");
  int nv = mjcf_count_tokens(vt), nf = mjcf_count_tokens(ft), n;
  if (nv % 3 || nv < 12 || nf % 3 || nf < 12)
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "inline mesh: vertex= has %d numbers and face= %d (multiples of "
                           "3: at least 4 vertices and 4 triangles)", nv, nf);
  m->vert = malloc(sizeof(double) * (size_t)nv);
  double* f = malloc(sizeof(double) * (size_t)nf);
  m->face = malloc(sizeof(int) * (size_t)nf);
  physStatus st = !m->vert || !f || !m->face ? phys_error(c->log, PHYS_ERR_NOMEM, "out of memory") : PHYS_OK;
  if (!st) st = mjcf_parse_numbers(c, el, "vertex", vt, m->vert, nv, &n);
  if (!st) st = mjcf_parse_numbers(c, el, "face", ft, f, nf, &n);
  for (int i = 0; !st && i < nf; i++) {
    if (!(f[i] >= 0 && f[i] < nv / 3 && f[i] == (int)f[i]))
      st = mjcf_elem_error(c, el, PHYS_ERR_MODEL, "inline mesh: face= entry %d (%g) is not a vertex index in [0, %d)",
                           i, f[i], nv / 3);
    else
      m->face[i] = (int)f[i];
  }
  free(f);
  if (st) return st;   // (vert and face are freed with the spec)
  for (int i = 0; i < nv; i++) m->vert[i] *= scale[i % 3];
  m->nvert = nv / 3, m->nface = nf / 3;
  snprintf(m->file, sizeof m->file, "inline vertex=");
  return PHYS_OK;
}

// <mesh name class file scale>: loaded now (the name defaults to the file name without folder and
// extension); or inline, <mesh name vertex face scale> (inline_mesh)
static physStatus parse_mesh(mjcfCtx* c, xmlNode* el) {
  int cls;
  physStatus st = mjcf_elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_MESH, cls};
  const char* file = mjcf_attr_text(el, "file");
  if ((!file || !file[0]) && mjcf_attr_text(el, "vertex")) {
    char name[PHYS_NAMELEN] = "";
    if ((st = mjcf_get_name(c, el, "name", name))) return st;
    if (!name[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "an inline mesh (vertex=) needs a name");
    if ((st = unused_name(c, el, name))) return st;
    double scale[3] = {1, 1, 1};
    if ((st = mjcf_get_vec(c, &e, "scale", 3, scale, NULL))) return st;
    physSpecMesh* m = add_mesh(c, el, name);
    return m ? inline_mesh(c, el, scale, m) : phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  }
  if (!file || !file[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute 'file' is required");
  char name[PHYS_NAMELEN] = "";
  if ((st = mjcf_get_name(c, el, "name", name))) return st;
  if (!name[0]) {   // file name without folder and extension
    const char* base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    snprintf(name, sizeof(name), "%s", base);
    char* dot = strrchr(name, '.');
    if (dot && dot != name) *dot = 0;
  }
  if ((st = unused_name(c, el, name))) return st;
  double scale[3] = {1, 1, 1};
  if ((st = mjcf_get_vec(c, &e, "scale", 3, scale, NULL))) return st;

  char path[PATH_MAX];
  physLog tmp = {0};
  physLog* keep = c->log;
  c->log = &tmp;   // a missing file is only a warning unless strict_mesh: decide after resolving
  st = mjcf_resolve_path(c, el, c->meshdir, file, path);
  int missing = st == PHYS_ERR_IO && errno == ENOENT;
  c->log = keep;
  if (st && !(missing && !c->strict_mesh)) return phys_error(c->log, st, "%s", tmp.error);
  if (st) {
    phys_warning(c->log, "%.200s; its geoms are dropped", tmp.error);
    if (!mjcf_strlist_add(&c->missing_mesh, name)) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
    return PHYS_OK;
  }
  physSpecMesh* m = add_mesh(c, el, name);
  if (!m) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physLog mlog = {0};   // the mesh file's own error, then where the model uses it
  if ((st = phys_mesh_load(path, scale, m, &mlog))) return mjcf_elem_error(c, el, st, "mesh: %s", mlog.error);
  return PHYS_OK;
}

// <material name class rgba>: kept for the geoms that reference it (their drawn colour, mjcf_material_rgba)
static physStatus add_material(mjcfCtx* c, xmlNode* el) {
  const char* name = mjcf_attr_text(el, "name");
  if (!name || !name[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a material needs a name");
  if (c->nmaterial == c->capmaterial) {
    int cap = c->capmaterial ? 2 * c->capmaterial : 16;
    xmlNode** grown = realloc(c->material, sizeof(xmlNode*) * (size_t)cap);
    if (!grown) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
    c->material = grown, c->capmaterial = cap;
  }
  c->material[c->nmaterial++] = el;
  return PHYS_OK;
}

physStatus mjcf_material_rgba(mjcfCtx* c, const xmlNode* user, const char* name, double rgba[4]) {
  for (int i = 0; i < c->nmaterial; i++) {
    const char* own = mjcf_attr_text(c->material[i], "name");
    if (strcmp(own, name) != 0) continue;
    int cls;
    physStatus st = mjcf_elem_class(c, c->material[i], "class", 0, &cls);
    if (st) return st;
    mjcfElem e = {c->material[i], K_MATERIAL, cls};
    rgba[0] = rgba[1] = rgba[2] = rgba[3] = 1;   // MuJoCo's default material colour
    return mjcf_get_vec(c, &e, "rgba", 4, rgba, NULL);
  }
  return mjcf_elem_error(c, user, PHYS_ERR_MODEL, "unknown material '%.100s'", name);
}

// <asset>: meshes and materials (their colours); textures and skins are for rendering
physStatus mjcf_parse_asset(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    int mesh = mjcf_is_elem(ch, "mesh"), material = mjcf_is_elem(ch, "material");
    physStatus st = mesh ? parse_mesh(c, ch) : material ? add_material(c, ch) : PHYS_OK;
    if (st) return st;
    if (!mesh && !material && !mjcf_is_elem(ch, "texture") && !mjcf_is_elem(ch, "skin") &&
        !mjcf_is_elem(ch, "hfield")) {
      mjcf_unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

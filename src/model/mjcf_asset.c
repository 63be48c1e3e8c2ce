// mjcf_asset.c - MJCF <asset>: meshes, loaded from their files when read (folder: <compiler meshdir>,
// inside the model folder). A missing mesh file is a warning (its geoms are dropped, mjcf_body.c) unless
// physLoadOptions.strict_mesh; textures, materials, skins and height fields are for rendering, skipped.
#include <errno.h>
#include <stdio.h>
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

// <mesh name class file scale>: loaded now (the name defaults to the file name without folder and
// extension; inline vertex= data is refused)
static physStatus parse_mesh(mjcfCtx* c, xmlNode* el) {
  int cls;
  physStatus st = mjcf_elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_MESH, cls};
  const char* file = mjcf_attr_text(el, "file");
  if (!file || !file[0]) {
    if (mjcf_attr_text(el, "vertex")) {
      return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "inline mesh data (vertex=) is not supported; use a file");
    }
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute 'file' is required");
  }
  char name[PHYS_NAMELEN] = "";
  if ((st = mjcf_get_name(c, el, "name", name))) return st;
  if (!name[0]) {   // file name without folder and extension
    const char* base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    snprintf(name, sizeof(name), "%s", base);
    char* dot = strrchr(name, '.');
    if (dot && dot != name) *dot = 0;
  }
  if (mjcf_find_mesh(c->s, name) >= 0 || mjcf_strlist_has(&c->missing_mesh, name)) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "mesh name '%s' used twice", name);
  }
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
  int i = phys_spec_add_mesh(c->s);
  if (i < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecMesh* m = c->s->mesh + i;
  strcpy(m->name, name);
  m->line = (int)xmlGetLineNo(el);
  m->fileid = mjcf_elem_fileid(c, el);
  physLog mlog = {0};   // the mesh file's own error, then where the model uses it
  if ((st = phys_mesh_load(path, scale, m, &mlog))) return mjcf_elem_error(c, el, st, "mesh: %s", mlog.error);
  return PHYS_OK;
}

// <asset>: meshes; textures, materials, skins are for rendering
physStatus mjcf_parse_asset(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (mjcf_is_elem(ch, "mesh")) {
      physStatus st = parse_mesh(c, ch);
      if (st) return st;
    } else if (!mjcf_is_elem(ch, "texture") && !mjcf_is_elem(ch, "material") && !mjcf_is_elem(ch, "skin") &&
               !mjcf_is_elem(ch, "hfield")) {
      mjcf_unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

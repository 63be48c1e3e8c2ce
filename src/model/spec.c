// spec.c - the editable model description: creation, growable lists, MJCF defaults.
#include "spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rot.h"

// grow a list to hold one more item; returns the new item's index or -1
static int grow(void** items, int* n, int* cap, size_t size) {
  if (*n == *cap) {
    int newcap = *cap ? 2 * *cap : 16;
    void* p = realloc(*items, (size_t)newcap * size);
    if (!p) return -1;
    *items = p;
    *cap = newcap;
  }
  memset((char*)*items + (size_t)(*n) * size, 0, size);
  return (*n)++;
}

#define GROW(s, list) grow((void**)&(s)->list, &(s)->n##list, &(s)->cap_##list, sizeof(*(s)->list))

// a new spec with the world body and MuJoCo's default options
physSpec* phys_spec_new(void) {
  physSpec* s = calloc(1, sizeof(physSpec));
  if (!s) return NULL;
  phys_default_option(&s->opt);
  s->inertiafromgeom = 2;
  if (phys_spec_add_body(s, -1) != 0) {
    phys_spec_free(s);
    return NULL;
  }
  strcpy(s->body[0].name, "world");
  return s;
}

void phys_spec_free(physSpec* s) {
  if (!s) return;
  for (int i = 0; i < s->nmesh; i++) {
    free(s->mesh[i].vert);
    free(s->mesh[i].face);
  }
  for (int i = 0; i < s->nkey; i++) {
    free(s->key[i].qpos);
    free(s->key[i].qvel);
    free(s->key[i].ctrl);
    free(s->key[i].act);
  }
  free(s->body);
  free(s->joint);
  free(s->geom);
  free(s->site);
  free(s->spring);
  free(s->actuator);
  free(s->sensor);
  free(s->mesh);
  free(s->key);
  free(s->pair);
  free(s->exclude);
  free(s->equality);
  for (int i = 1; i < s->nsrcfile; i++) free(s->srcfile[i]);
  free(s->srcfile);
  free(s);
}

// find or add name in the spec's file table
int phys_spec_add_file(physSpec* s, const char* name) {
  if (!name || !strcmp(name, s->filename)) return 0;
  for (int i = 1; i < s->nsrcfile; i++) {
    if (!strcmp(s->srcfile[i], name)) return i;
  }
  int n = s->nsrcfile ? s->nsrcfile : 1;   // slot 0 stays unused
  char** p = realloc(s->srcfile, (size_t)(n + 1) * sizeof(char*));
  if (!p) return -1;
  s->srcfile = p;
  s->srcfile[0] = NULL;
  size_t len = strlen(name) + 1;
  if (!(s->srcfile[n] = malloc(len))) return -1;
  memcpy(s->srcfile[n], name, len);
  s->nsrcfile = n + 1;
  return n;
}

// "file:line: " with the element's own file
const char* phys_spec_where(const physSpec* s, int file, int line, char* buf, size_t n) {
  const char* name = file > 0 && file < s->nsrcfile ? s->srcfile[file] : s->filename[0] ? s->filename : "<spec>";
  if (line > 0) {
    snprintf(buf, n, "%s:%d: ", name, line);
  } else {
    snprintf(buf, n, "%s: ", name);
  }
  return buf;
}

int phys_spec_add_body(physSpec* s, int parent) {
  int i = GROW(s, body);
  if (i < 0) return -1;
  physSpecBody* b = s->body + i;
  b->parent = parent;
  phys_quat_identity(b->quat);
  phys_quat_identity(b->iquat);
  return i;
}

int phys_spec_add_joint(physSpec* s, int body, int type) {
  int i = GROW(s, joint);
  if (i < 0) return -1;
  physSpecJoint* j = s->joint + i;
  j->body = body;
  j->type = type;
  j->axis[2] = 1;
  return i;
}

int phys_spec_add_geom(physSpec* s, int body, int type) {
  int i = GROW(s, geom);
  if (i < 0) return -1;
  physSpecGeom* g = s->geom + i;
  g->body = body;
  g->type = type;
  phys_quat_identity(g->quat);
  g->friction[0] = 1;
  g->friction[1] = 0.005;
  g->friction[2] = 0.0001;
  g->contype = 1;
  g->conaffinity = 1;
  g->condim = 3;
  g->density = 1000;
  g->mass = -1;
  g->mesh = -1;
  g->rgba[0] = g->rgba[1] = g->rgba[2] = 0.5;
  g->rgba[3] = 1;
  return i;
}

const double* phys_spec_geom_drawn_rgba(const physSpecGeom* g) {
  int own = g->rgba[0] != 0.5 || g->rgba[1] != 0.5 || g->rgba[2] != 0.5 || g->rgba[3] != 1;
  return g->has_material && !own ? g->matrgba : g->rgba;
}

int phys_spec_add_site(physSpec* s, int body) {
  int i = GROW(s, site);
  if (i < 0) return -1;
  s->site[i].body = body;
  phys_quat_identity(s->site[i].quat);
  s->site[i].type = PHYS_SITE_SPHERE;
  s->site[i].size[0] = s->site[i].size[1] = s->site[i].size[2] = 0.005;
  return i;
}

int phys_spec_add_spring(physSpec* s) {
  int i = GROW(s, spring);
  if (i < 0) return -1;
  s->spring[i].restlength = -1;
  return i;
}

int phys_spec_add_actuator(physSpec* s) {
  int i = GROW(s, actuator);
  if (i < 0) return -1;
  s->actuator[i].gear[0] = 1;
  s->actuator[i].gainprm[0] = 1;
  s->actuator[i].dynprm[0] = 1;   // MuJoCo's default dynprm
  s->actuator[i].trntype = PHYS_TRN_JOINT;
  return i;
}

// a sensor of type jointpos on no object, noise and cutoff 0
int phys_spec_add_sensor(physSpec* s) { return GROW(s, sensor); }

int phys_spec_add_mesh(physSpec* s) { return GROW(s, mesh); }

int phys_spec_add_key(physSpec* s) { return GROW(s, key); }

int phys_spec_add_pair(physSpec* s) {
  int i = GROW(s, pair);
  if (i < 0) return -1;
  s->pair[i].friction = s->pair[i].restitution = s->pair[i].margin = -1;
  return i;
}

int phys_spec_add_exclude(physSpec* s) { return GROW(s, exclude); }

int phys_spec_add_equality(physSpec* s) {
  int i = GROW(s, equality);
  if (i < 0) return i;
  physSpecEquality* e = s->equality + i;
  e->active = 1;
  e->solref[0] = 0.02, e->solref[1] = 1;
  const double imp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  memcpy(e->solimp, imp, sizeof imp);
  e->data[10] = 1;
  return i;
}

void phys_default_option(physOption* opt) {
  memset(opt, 0, sizeof(*opt));
  opt->timestep = 0.002;
  opt->gravity[2] = -9.81;
  opt->integrator = PHYS_INT_EULER;
  opt->contact = PHYS_CONTACT_LCP;
  opt->baumgarte = 0.2;
  opt->penalty_stiffness = 1e4;
  opt->penalty_damping = 1e2;
  opt->penalty_vslip = 1e-3;
  opt->solver_iterations = 100;
  opt->solver_tolerance = 1e-10;
  opt->pbd_substeps = 20;
  opt->pbd_iterations = 1;
}

static const char* const CONTACT_NAMES[PHYS_NCONTACTMODEL] = {"lcp", "cone", "ccp", "penalty"};

const char* phys_contact_name(int model) {
  return model >= 0 && model < PHYS_NCONTACTMODEL ? CONTACT_NAMES[model] : "unknown";
}

int phys_contact_from_name(const char* name) {
  for (int i = 0; name && i < PHYS_NCONTACTMODEL; i++)
    if (strcmp(name, CONTACT_NAMES[i]) == 0) return i;
  return -1;
}

//---------------------------------------------------------------------------------------------------------
// merging specs

// copy mesh m of src into dst (owned arrays duplicated); returns its index in dst or -1
static int attach_mesh(physSpec* dst, const physSpecMesh* sm) {
  int i = phys_spec_add_mesh(dst);
  if (i < 0) return -1;
  physSpecMesh* dm = dst->mesh + i;
  *dm = *sm;
  dm->vert = NULL;
  dm->face = NULL;
  size_t nv = (size_t)sm->nvert * 3, nf = (size_t)sm->nface * 3;
  if (nv) dm->vert = malloc(nv * sizeof(double));
  if (nf) dm->face = malloc(nf * sizeof(int));
  if ((nv && !dm->vert) || (nf && !dm->face)) return -1;   // freed with dst by phys_spec_free
  if (nv) memcpy(dm->vert, sm->vert, nv * sizeof(double));
  if (nf) memcpy(dm->face, sm->face, nf * sizeof(int));
  return i;
}

// append src's bodies (all but its world body, in src's order, after dst's bodies) with their joints,
// geoms, sites, springs, actuators, sensors, meshes, pairs and excludes to dst; src's world body becomes dst's body
// `parent` (its geoms and sites move there, its children hang from it; phys_compile refuses a free joint
// whose body does not hang from the world). dst keeps its options and name; src's keyframes are not copied (they describe src's state
// alone). Names are copied as they are: phys_compile reports duplicates. PHYS_OK, PHYS_ERR_ARG or
// PHYS_ERR_NOMEM (dst may then hold part of src; free it).
// dst's index of src's file index f (src's own file becomes one of dst's files); -1 out of memory
static int attach_file(physSpec* dst, const physSpec* src, int f) {
  return phys_spec_add_file(dst, f > 0 && f < src->nsrcfile ? src->srcfile[f] : src->filename);
}

// every element of dst from index `from` of a list: its file index mapped from src to dst
#define ATTACH_FILES(list, from)                                 \
  for (int k_ = (from); k_ < dst->n##list; k_++) {               \
    dst->list[k_].fileid = attach_file(dst, src, dst->list[k_].fileid); \
    if (dst->list[k_].fileid < 0) return PHYS_ERR_NOMEM;           \
  }

// src's bodies (parent p becomes `parent` when p is src's world, else body0 + p - 1), then its meshes, joints,
// geoms and sites on the mapped bodies (geom meshes shifted by dst's mesh count mesh0)
static physStatus attach_tree(physSpec* dst, const physSpec* src, int parent) {
  int body0 = dst->nbody, mesh0 = dst->nmesh;
  for (int b = 1; b < src->nbody; b++) {
    int i = phys_spec_add_body(dst, 0);
    if (i < 0) return PHYS_ERR_NOMEM;
    dst->body[i] = src->body[b];
    int p = src->body[b].parent;
    dst->body[i].parent = p == 0 ? parent : body0 + p - 1;
  }
  // body index of src's body b in dst
#define ATTACH_BODY(b) ((b) == 0 ? parent : body0 + (b) - 1)
  for (int k = 0; k < src->nmesh; k++)
    if (attach_mesh(dst, src->mesh + k) < 0) return PHYS_ERR_NOMEM;
  for (int k = 0; k < src->njoint; k++) {
    int i = phys_spec_add_joint(dst, 0, 0);
    if (i < 0) return PHYS_ERR_NOMEM;
    dst->joint[i] = src->joint[k];
    dst->joint[i].body = ATTACH_BODY(src->joint[k].body);
  }
  for (int k = 0; k < src->ngeom; k++) {
    int i = phys_spec_add_geom(dst, 0, 0);
    if (i < 0) return PHYS_ERR_NOMEM;
    dst->geom[i] = src->geom[k];
    dst->geom[i].body = ATTACH_BODY(src->geom[k].body);
    if (src->geom[k].mesh >= 0) dst->geom[i].mesh = mesh0 + src->geom[k].mesh;
  }
  for (int k = 0; k < src->nsite; k++) {
    int i = phys_spec_add_site(dst, 0);
    if (i < 0) return PHYS_ERR_NOMEM;
    dst->site[i] = src->site[k];
    dst->site[i].body = ATTACH_BODY(src->site[k].body);
  }
#undef ATTACH_BODY
  return PHYS_OK;
}

// src's springs; entries: joints (fixed) shift by joint0, sites by site0, geoms by geom0 (their side sites by
// site0); pulleys keep -1
static physStatus attach_springs(physSpec* dst, const physSpec* src, int joint0, int site0, int geom0) {
  for (int k = 0; k < src->nspring; k++) {
    int i = phys_spec_add_spring(dst);
    if (i < 0) return PHYS_ERR_NOMEM;
    dst->spring[i] = src->spring[k];
    for (int j = 0; j < src->spring[k].nsite; j++) {
      int type = src->spring[k].objtype[j], id = src->spring[k].site[j];
      int geom = type == PHYS_WRAP_SPHERE || type == PHYS_WRAP_CYLINDER;
      if (src->spring[k].type == PHYS_SPRING_FIXED) dst->spring[i].site[j] = joint0 + id;
      else if (type == PHYS_WRAP_SITE) dst->spring[i].site[j] = site0 + id;
      else if (geom) dst->spring[i].site[j] = geom0 + id;
      if (geom && src->spring[k].prm[j] >= 0) dst->spring[i].prm[j] = site0 + src->spring[k].prm[j];
    }
  }
  return PHYS_OK;
}

// every element of src's list appended to dst's as it is (add: dst's index of a new element, -1 out of memory)
#define ATTACH_COPY(list, add)                    \
  for (int k_ = 0; k_ < src->n##list; k_++) {     \
    int i_ = (add);                               \
    if (i_ < 0) return PHYS_ERR_NOMEM;            \
    dst->list[i_] = src->list[k_];                \
  }

physStatus phys_spec_attach(physSpec* dst, const physSpec* src, int parent) {
  if (!dst || !src || dst == src || parent < 0 || parent >= dst->nbody) return PHYS_ERR_ARG;
  const int from[11] = {dst->nbody, dst->njoint, dst->ngeom, dst->nsite, dst->nspring, dst->nactuator, dst->nmesh,
                        dst->nkey, dst->npair, dst->nexclude, dst->nsensor};
  int site0 = dst->nsite, joint0 = dst->njoint, geom0 = dst->ngeom;
  physStatus st = attach_tree(dst, src, parent);
  if (st == PHYS_OK) st = attach_springs(dst, src, joint0, site0, geom0);
  if (st != PHYS_OK) return st;
  ATTACH_COPY(actuator, phys_spec_add_actuator(dst))
  ATTACH_COPY(sensor, phys_spec_add_sensor(dst))
  ATTACH_COPY(pair, phys_spec_add_pair(dst))
  ATTACH_COPY(exclude, phys_spec_add_exclude(dst))
  int eq0 = dst->nequality;
  ATTACH_COPY(equality, phys_spec_add_equality(dst))
  ATTACH_FILES(equality, eq0)
  if (dst->nconmax > 0 && src->nconmax > 0) dst->nconmax += src->nconmax;
  ATTACH_FILES(body, from[0]) ATTACH_FILES(joint, from[1]) ATTACH_FILES(geom, from[2]) ATTACH_FILES(site, from[3])
  ATTACH_FILES(spring, from[4]) ATTACH_FILES(actuator, from[5]) ATTACH_FILES(mesh, from[6]) ATTACH_FILES(key, from[7])
  ATTACH_FILES(pair, from[8]) ATTACH_FILES(exclude, from[9]) ATTACH_FILES(sensor, from[10])
  return PHYS_OK;
}
#undef ATTACH_COPY
#undef ATTACH_FILES

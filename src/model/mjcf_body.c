// mjcf_body.c - MJCF <worldbody>: bodies (depth first, in file order) and what each holds: <inertial>,
// <joint>/<freejoint>, <geom> (type, sizes, fromto, contact and mass properties), <site>. A body's joints,
// geoms and sites come before its children's. Cameras and lights are skipped, composites refused.
#include <math.h>
#include <string.h>

#include "mjcf_reader.h"
#include "rot.h"

// <inertial pos orientation mass diaginertia|fullinertia>
static physStatus parse_inertial(mjcfCtx* c, xmlNode* el, physSpecBody* b) {
  mjcfElem e = {el, K_NONE, 0};
  physStatus st;
  int found, fdiag, ffull, norient;
  double quat[4];
  if ((st = mjcf_get_vec(c, &e, "pos", 3, b->ipos, &found))) return st;
  if (!found) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute 'pos' is required");
  if ((st = mjcf_get_real(c, &e, "mass", &b->mass, &found))) return st;
  if (!found) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute 'mass' is required");
  if (!(b->mass >= 0)) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "mass must be >= 0, got %g", b->mass);
  if ((st = mjcf_get_vec(c, &e, "diaginertia", 3, b->inertia, &fdiag))) return st;
  if ((st = mjcf_get_vec(c, &e, "fullinertia", 6, b->fullinertia, &ffull))) return st;
  if ((st = mjcf_get_orient(c, &e, quat, &norient))) return st;
  if (fdiag == ffull) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "give exactly one of 'diaginertia' and 'fullinertia'");
  }
  if (ffull && norient) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "fullinertia fixes the inertial frame: remove the orientation");
  }
  for (int i = 0; fdiag && i < 3; i++) {
    if (b->inertia[i] < 0) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "diaginertia must be >= 0");
  }
  b->has_inertial = 1;
  b->has_fullinertia = ffull;
  memcpy(b->iquat, quat, sizeof(quat));
  return PHYS_OK;
}

// <joint> (free = 0; defaults apply): name class type pos axis ref springref (angles for hinges) stiffness
// damping armature limited range frictionloss; or <freejoint name> (free = 1, no defaults)
static physStatus parse_joint(mjcfCtx* c, xmlNode* el, int body, int childclass, int free) {
  static const char* const TYPES[] = {"free", "ball", "slide", "hinge", NULL};   // = physJointType
  int cls = 0, type = PHYS_JNT_HINGE;
  physStatus st = free ? PHYS_OK : mjcf_elem_class(c, el, "class", childclass, &cls);
  if (st) return st;
  mjcfElem e = {el, free ? K_NONE : K_JOINT, cls};
  if (free) {
    type = PHYS_JNT_FREE;
  } else if ((st = mjcf_get_keyword(c, &e, "type", TYPES, &type, NULL))) {
    return st;
  }
  int id = phys_spec_add_joint(c->s, body, type);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecJoint* j = c->s->joint + id;
  j->line = (int)xmlGetLineNo(el);
  j->fileid = mjcf_elem_fileid(c, el);
  if ((st = mjcf_get_name(c, el, "name", j->name))) return st;
  if (free) return PHYS_OK;

  double deg = c->degree ? MJCF_DEG2RAD : 1;
  double angular = type == PHYS_JNT_HINGE ? deg : 1;   // ref and springref: angles for hinges
  if ((st = mjcf_get_vec(c, &e, "pos", 3, j->pos, NULL))) return st;
  if ((st = mjcf_get_vec(c, &e, "axis", 3, j->axis, NULL))) return st;
  if (phys_norm3(j->axis) < MJCF_EPS) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "axis is zero");
  if ((st = mjcf_get_real(c, &e, "ref", &j->ref, NULL))) return st;
  if ((st = mjcf_get_real(c, &e, "springref", &j->springref, NULL))) return st;
  j->ref *= angular;
  j->springref *= angular;
  if ((st = mjcf_get_nonneg(c, &e, "stiffness", &j->stiffness))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "damping", &j->damping))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "armature", &j->armature))) return st;
  if ((st = mjcf_get_limited(c, &e, "limited", "range", j->range, &j->limited))) return st;
  if (type == PHYS_JNT_HINGE || type == PHYS_JNT_BALL) {   // MuJoCo converts only when limited; we always
    j->range[0] *= deg;
    j->range[1] *= deg;
  }
  if ((st = mjcf_get_nonneg(c, &e, "frictionloss", &j->frictionloss))) return st;
  return PHYS_OK;
}

// number of sizes each geom type needs (without fromto)
static int geom_nsize(int type) {
  switch (type) {
    case PHYS_GEOM_SPHERE: return 1;
    case PHYS_GEOM_CAPSULE: case PHYS_GEOM_CYLINDER: return 2;
    case PHYS_GEOM_ELLIPSOID: case PHYS_GEOM_BOX: return 3;
    default: return 0;
  }
}

// fromto: pos = midpoint, z axis along from - to (MuJoCo's sign), half length into size[1] (capsule,
// cylinder) or size[2] with size[1] = size[0] (box, ellipsoid)
static physStatus apply_fromto(mjcfCtx* c, xmlNode* el, const double ft[6], physSpecGeom* g) {
  double vec[3] = {ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]};
  double len = phys_norm3(vec);
  if (len < MJCF_EPS) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "fromto points coincide");
  for (int i = 0; i < 3; i++) g->pos[i] = 0.5 * (ft[i] + ft[i + 3]);
  phys_quat_zaxis(g->quat, vec);
  if (g->type == PHYS_GEOM_CAPSULE || g->type == PHYS_GEOM_CYLINDER) {
    g->size[1] = 0.5 * len;
  } else {
    g->size[1] = g->size[0];
    g->size[2] = 0.5 * len;
  }
  return PHYS_OK;
}

// a geom's type, mesh, size, fromto, pos and orientation (own or default); *drop = 1 if its mesh's file
// was missing
static physStatus geom_shape(mjcfCtx* c, const mjcfElem* e, physSpecGeom* g, int* drop) {
  static const char* const TYPES[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder",
                                      "box", "mesh", "sdf", NULL};
  static const int MAP[] = {PHYS_GEOM_PLANE, -1, PHYS_GEOM_SPHERE, PHYS_GEOM_CAPSULE, PHYS_GEOM_ELLIPSOID,
                            PHYS_GEOM_CYLINDER, PHYS_GEOM_BOX, PHYS_GEOM_MESH, -1};
  int t = 2, nsize, found;
  double ft[6];
  physStatus st = mjcf_get_keyword(c, e, "type", TYPES, &t, NULL);
  if (st) return st;
  if (MAP[t] < 0) return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "geom type '%s' is not supported", TYPES[t]);
  g->type = MAP[t];
  const xmlNode* where;
  const char* mesh = mjcf_find_attr(c, e, "mesh", &where);
  *drop = 0;
  if (g->type == PHYS_GEOM_MESH) {
    if (!mesh) return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "a mesh geom needs attribute 'mesh'");
    g->mesh = mjcf_find_mesh(c->s, mesh);
    if (g->mesh < 0 && mjcf_strlist_has(&c->missing_mesh, mesh)) {
      mjcf_elem_warning(c, e->el, "geom dropped: the file of mesh '%.64s' is missing", mesh);
      *drop = 1;
      return PHYS_OK;
    }
    if (g->mesh < 0) return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "unknown mesh '%.64s'", mesh);
  } else if (mesh) {
    return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL,
                           "mesh='%.64s' on a %s geom (fitting a primitive to a mesh) is not supported", mesh,
                           TYPES[t]);
  }
  if ((st = mjcf_get_partial(c, e, "size", 3, g->size, &nsize))) return st;
  if ((st = mjcf_get_vec(c, e, "fromto", 6, ft, &found))) return st;
  int need = geom_nsize(g->type);
  if (found) {
    if (need < 2) {
      return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "fromto needs a capsule, cylinder, box or ellipsoid, not a %s",
                             TYPES[t]);
    }
    need = 1;
  }
  if (nsize < need) {
    return mjcf_elem_error(c, e->el, PHYS_ERR_SIZE, "size needs %d value%s for %s, found %d", need,
                           need == 1 ? "" : "s", TYPES[t], nsize);
  }
  for (int i = 0; i < need; i++) {
    if (!(g->size[i] > 0)) {
      return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "size[%d] = %g must be positive for %s", i, g->size[i],
                             TYPES[t]);
    }
  }
  if (found) return apply_fromto(c, e->el, ft, g);
  if ((st = mjcf_get_vec(c, e, "pos", 3, g->pos, NULL))) return st;
  return mjcf_get_orient(c, e, g->quat, NULL);
}

// <geom name class>: shape and frame (geom_shape), then friction density mass contype conaffinity condim
// margin rgba group (own or default)
static physStatus parse_geom(mjcfCtx* c, xmlNode* el, int body, int childclass) {
  int cls, drop = 0, nset;
  physStatus st = mjcf_elem_class(c, el, "class", childclass, &cls);
  if (st) return st;
  mjcfElem e = {el, K_GEOM, cls};
  int id = phys_spec_add_geom(c->s, body, PHYS_GEOM_SPHERE);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecGeom* g = c->s->geom + id;
  g->line = (int)xmlGetLineNo(el);
  g->fileid = mjcf_elem_fileid(c, el);
  if ((st = mjcf_get_name(c, el, "name", g->name))) return st;
  if ((st = geom_shape(c, &e, g, &drop))) return st;
  if (drop) {
    c->s->ngeom--;
    return PHYS_OK;
  }
  if ((st = mjcf_get_partial(c, &e, "friction", 3, g->friction, &nset))) return st;
  for (int i = 0; i < 3; i++) {
    if (g->friction[i] < 0) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "friction must be >= 0");
  }
  int found, condim = g->condim;
  double mass;
  if ((st = mjcf_get_nonneg(c, &e, "density", &g->density))) return st;
  if ((st = mjcf_get_real(c, &e, "mass", &mass, &found))) return st;
  if (found && mass < 0) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "mass must be >= 0, got %g", mass);
  if (found) g->mass = mass;
  if ((st = mjcf_get_int(c, &e, "contype", &g->contype, NULL))) return st;
  if ((st = mjcf_get_int(c, &e, "conaffinity", &g->conaffinity, NULL))) return st;
  if ((st = mjcf_get_int(c, &e, "condim", &condim, NULL))) return st;
  if (condim != 1 && condim != 3 && condim != 4 && condim != 6) {
    return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "condim must be 1, 3, 4 or 6, got %d", condim);
  }
  g->condim = condim;
  if ((st = mjcf_get_nonneg(c, &e, "margin", &g->margin))) return st;
  if ((st = mjcf_get_vec(c, &e, "rgba", 4, g->rgba, NULL))) return st;
  const xmlNode* at;
  const char* material = mjcf_find_attr(c, &e, "material", &at);
  g->has_material = material && material[0];
  if (g->has_material && (st = mjcf_material_rgba(c, el, material, g->matrgba))) return st;
  return mjcf_get_int(c, &e, "group", &g->group, NULL);
}

// <site name class pos orientation type size> (type and size: a touch sensor's zone)
static physStatus parse_site(mjcfCtx* c, xmlNode* el, int body, int childclass) {
  int cls;
  physStatus st = mjcf_elem_class(c, el, "class", childclass, &cls);
  if (st) return st;
  mjcfElem e = {el, K_SITE, cls};
  int id = phys_spec_add_site(c->s, body);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecSite* site = c->s->site + id;
  site->line = (int)xmlGetLineNo(el);
  site->fileid = mjcf_elem_fileid(c, el);
  if ((st = mjcf_get_name(c, el, "name", site->name))) return st;
  if ((st = mjcf_get_vec(c, &e, "pos", 3, site->pos, NULL))) return st;
  static const char* const TYPES[] = {"sphere", "capsule", "ellipsoid", "cylinder", "box", NULL};
  int n;
  if ((st = mjcf_get_keyword(c, &e, "type", TYPES, &site->type, NULL))) return st;
  if ((st = mjcf_get_partial(c, &e, "size", 3, site->size, &n))) return st;
  return mjcf_get_orient(c, &e, site->quat, NULL);
}

// elements inside a body that matter only for rendering or are MuJoCo extensions we skip silently
static int body_child_ignored(const xmlNode* ch) {
  return mjcf_is_elem(ch, "camera") || mjcf_is_elem(ch, "light");
}

// the joints, geoms, sites and inertial of one body (body 0: the world), not its child bodies
static physStatus parse_body_items(mjcfCtx* c, xmlNode* el, int body, int childclass) {
  physStatus st = PHYS_OK;
  int ninertial = 0, world = body == 0;
  for (xmlNode* ch = el->children; ch && !st; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || mjcf_is_elem(ch, "body") || body_child_ignored(ch)) continue;
    int isjoint = mjcf_is_elem(ch, "joint"), isfree = mjcf_is_elem(ch, "freejoint");
    if ((isjoint || isfree || mjcf_is_elem(ch, "inertial")) && world) {
      st = mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "not allowed in the world body");
    } else if (isjoint || isfree) {
      st = parse_joint(c, ch, body, childclass, isfree);
    } else if (mjcf_is_elem(ch, "inertial")) {
      st = ++ninertial > 1 ? mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "a body has at most one <inertial>")
                           : parse_inertial(c, ch, c->s->body + body);
    } else if (mjcf_is_elem(ch, "geom")) {
      st = parse_geom(c, ch, body, childclass);
    } else if (mjcf_is_elem(ch, "site")) {
      st = parse_site(c, ch, body, childclass);
    } else if (mjcf_is_elem(ch, "composite")) {
      st = mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "composite objects are not supported (MuJoCo expands them into "
                           "bodies, joints, tendons and equalities; physid refuses the model rather than load it "
                           "with other sizes)");
    } else {
      mjcf_unknown_element(c, ch);
    }
  }
  return st;
}

// a free joint must be the only joint of a child of the world
static physStatus check_free_joint(mjcfCtx* c, xmlNode* el, int body, int jnt0) {
  const physSpec* s = c->s;
  int nfree = 0;
  for (int j = jnt0; j < s->njoint; j++) nfree += s->joint[j].type == PHYS_JNT_FREE;
  if (!nfree) return PHYS_OK;
  if (nfree > 1 || s->njoint - jnt0 > 1) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a free joint must be the only joint of its body");
  }
  if (s->body[body].parent != 0) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a free joint is only allowed on a child of the world body");
  }
  return PHYS_OK;
}

// <body name pos orientation childclass mocap> (no defaults) and its subtree, depth first in file order
static physStatus parse_body(mjcfCtx* c, xmlNode* el, int parent, int childclass, int depth) {
  if (depth > PHYS_MJCF_MAXDEPTH) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "bodies nested too deeply");
  int id = phys_spec_add_body(c->s, parent);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecBody* b = c->s->body + id;
  mjcfElem e = {el, K_NONE, 0};
  int v, found;
  b->line = (int)xmlGetLineNo(el);
  b->fileid = mjcf_elem_fileid(c, el);
  physStatus st = mjcf_get_name(c, el, "name", b->name);
  if (!st) st = mjcf_get_vec(c, &e, "pos", 3, b->pos, NULL);
  if (!st) st = mjcf_get_orient(c, &e, b->quat, NULL);
  if (!st) st = mjcf_elem_class(c, el, "childclass", childclass, &childclass);
  if (!st) st = mjcf_get_keyword(c, &e, "mocap", MJCF_BOOL_WORDS, &v, &found);
  if (st) return st;
  if (found && v) mjcf_elem_warning(c, el, "mocap bodies are not supported; treated as a fixed body");

  int jnt0 = c->s->njoint;
  if ((st = parse_body_items(c, el, id, childclass))) return st;
  if ((st = check_free_joint(c, el, id, jnt0))) return st;
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (mjcf_is_elem(ch, "body") && (st = parse_body(c, ch, id, childclass, depth + 1))) return st;
  }
  return PHYS_OK;
}

// <worldbody>: its own geoms and sites, then its bodies
physStatus mjcf_parse_worldbody(mjcfCtx* c, xmlNode* el) {
  physStatus st = parse_body_items(c, el, 0, 0);
  for (xmlNode* ch = el->children; ch && !st; ch = ch->next) {
    if (mjcf_is_elem(ch, "body")) st = parse_body(c, ch, 0, 0, 1);
  }
  return st;
}

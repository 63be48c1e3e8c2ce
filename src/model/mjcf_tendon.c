// mjcf_tendon.c - MJCF <tendon> (issue 15 item 3): <spatial> tendons through <site>s, wrapping sphere and
// cylinder <geom>s (with a sidesite) and branching at <pulley>s, and <fixed> tendons through hinge and slide
// <joint>s with coefficients, both springs of the spec (stiffness, damping, springlength, length limits,
// frictionloss).
#include <string.h>

#include "mjcf_reader.h"

enum { OBJ_SITE, OBJ_JOINT, OBJ_GEOM };

// index of the site, joint or geom (kind OBJ_*) named name; -1 if none, -2 if several
static int find_named(const physSpec* s, int kind, const char* name) {
  int id = -1, n = kind == OBJ_JOINT ? s->njoint : (kind == OBJ_GEOM ? s->ngeom : s->nsite);
  for (int i = 0; i < n; i++) {
    const char* nm = kind == OBJ_JOINT ? s->joint[i].name : (kind == OBJ_GEOM ? s->geom[i].name : s->site[i].name);
    if (strcmp(nm, name)) continue;
    if (id >= 0) return -2;
    id = i;
  }
  return id;
}

// a new spring for tendon element el of type type (physSpringType) with name class stiffness damping
// springlength limited range frictionloss; *out = its index
static physStatus parse_common(mjcfCtx* c, xmlNode* el, int type, int* out) {
  int cls, limited;
  double range[2] = {0, 0};
  physStatus st = mjcf_elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_TENDON, cls};
  physSpecSpring* sp;
  MJCF_ADD(c, el, spring, spring, sp);
  sp->type = type;
  *out = (int)(sp - c->s->spring);
  if ((st = mjcf_get_name(c, el, "name", sp->name))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "stiffness", &sp->stiffness))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "damping", &sp->damping))) return st;
  if ((st = mjcf_get_real(c, &e, "springlength", &sp->restlength, NULL))) return st;
  if ((st = mjcf_get_limited(c, &e, "limited", "range", range, &limited))) return st;
  sp->limited = limited;
  sp->range[0] = range[0], sp->range[1] = range[1];
  return mjcf_get_nonneg(c, &e, "frictionloss", &sp->frictionloss);
}

// the index of the object (kind OBJ_*) that attribute attr of ch names (required unless optional: *id = -1)
static physStatus find_object(mjcfCtx* c, xmlNode* ch, const char* attr, int kind, int optional, int* id) {
  const char* name = mjcf_attr_text(ch, attr);
  *id = -1;
  if (!name && optional) return PHYS_OK;
  if (!name) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "attribute '%s' is required", attr);
  static const char* const KIND[] = {"site", "joint", "geom"};
  *id = find_named(c->s, kind, name);
  if (*id == -1) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "unknown %s '%.64s'", KIND[kind], name);
  if (*id == -2) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "%s name '%.64s' is not unique", KIND[kind], name);
  return PHYS_OK;
}

// one path entry of sp from child ch: <site site>, <geom geom sidesite> (a sphere or cylinder), <pulley
// divisor> (required, > 0) of a spatial tendon, <joint joint coef> (coef required, as MuJoCo) of a fixed one
static physStatus add_entry(mjcfCtx* c, xmlNode* ch, physSpecSpring* sp, int fixed) {
  int cap = (int)(sizeof(sp->site) / sizeof(sp->site[0])), k = sp->nsite, found, id = -1, side;
  if (k == cap) return mjcf_elem_error(c, ch, PHYS_ERR_SIZE, "a tendon has at most %d entries", cap);
  mjcfElem own = {ch, K_NONE, 0};
  physStatus st = PHYS_OK;
  sp->prm[k] = 0;
  if (fixed) {
    sp->objtype[k] = PHYS_WRAP_JOINT;
    if ((st = find_object(c, ch, "joint", OBJ_JOINT, 0, &id))) return st;
    if ((st = mjcf_get_real(c, &own, "coef", sp->prm + k, &found))) return st;
    if (!found) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "attribute 'coef' is required");
  } else if (mjcf_is_elem(ch, "site")) {
    sp->objtype[k] = PHYS_WRAP_SITE;
    if ((st = find_object(c, ch, "site", OBJ_SITE, 0, &id))) return st;
  } else if (mjcf_is_elem(ch, "geom")) {
    if ((st = find_object(c, ch, "geom", OBJ_GEOM, 0, &id))) return st;
    int type = c->s->geom[id].type;
    if (type != PHYS_GEOM_SPHERE && type != PHYS_GEOM_CYLINDER)
      return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "a tendon wraps sphere and cylinder geoms only");
    sp->objtype[k] = type == PHYS_GEOM_SPHERE ? PHYS_WRAP_SPHERE : PHYS_WRAP_CYLINDER;
    if ((st = find_object(c, ch, "sidesite", OBJ_SITE, 1, &side))) return st;
    sp->prm[k] = side;
  } else {   // pulley
    sp->objtype[k] = PHYS_WRAP_PULLEY;
    if ((st = mjcf_get_real(c, &own, "divisor", sp->prm + k, &found))) return st;
    if (!found) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "attribute 'divisor' is required");
    if (!(sp->prm[k] > 0)) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "divisor must be > 0");
  }
  sp->site[k] = id;
  sp->nsite++;
  return PHYS_OK;
}

// <spatial> through <site>, <geom> and <pulley> children, or <fixed> (fixed = 1) with <joint> children
// (add_entry); the path's rules (geoms between sites, pulleys inside the path, 2 sites) are phys_compile's
static physStatus parse_path(mjcfCtx* c, xmlNode* el, int fixed) {
  int id = -1;
  physStatus st = parse_common(c, el, fixed ? PHYS_SPRING_FIXED : PHYS_SPRING_PATH, &id);
  if (st) return st;
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    int known = fixed ? mjcf_is_elem(ch, "joint")
                      : mjcf_is_elem(ch, "site") || mjcf_is_elem(ch, "geom") || mjcf_is_elem(ch, "pulley");
    if (!known) {
      mjcf_unknown_element(c, ch);
      continue;
    }
    if ((st = add_entry(c, ch, c->s->spring + id, fixed))) return st;
  }
  const physSpecSpring* sp = c->s->spring + id;
  int nsite = 0;
  for (int k = 0; k < sp->nsite; k++) nsite += sp->objtype[k] == PHYS_WRAP_SITE;
  if (fixed && sp->nsite < 1) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a fixed tendon needs at least 1 joint");
  if (!fixed && nsite < 2) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a spatial tendon needs at least 2 sites");
  return PHYS_OK;
}

// <tendon>: spatial and fixed tendons become springs
physStatus mjcf_parse_tendon(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    physStatus st = PHYS_OK;
    if (mjcf_is_elem(ch, "spatial") || mjcf_is_elem(ch, "fixed"))
      st = parse_path(c, ch, mjcf_is_elem(ch, "fixed"));
    else
      mjcf_unknown_element(c, ch);
    if (st) return st;
  }
  return PHYS_OK;
}

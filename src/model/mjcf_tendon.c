// mjcf_tendon.c - MJCF <tendon> (issue 15 item 3): <spatial> tendons through <site>s and <fixed> tendons
// through hinge and slide <joint>s with coefficients, both springs of the spec (stiffness, damping,
// springlength); tendon length limits and frictionloss are warned about and ignored, wrapping around geoms
// and pulleys refused.
#include <string.h>

#include "mjcf_reader.h"

// index of the site (joint: 1) named name; -1 if none, -2 if several
static int find_named(const physSpec* s, int joint, const char* name) {
  int id = -1, n = joint ? s->njoint : s->nsite;
  for (int i = 0; i < n; i++) {
    if (strcmp(joint ? s->joint[i].name : s->site[i].name, name)) continue;
    if (id >= 0) return -2;
    id = i;
  }
  return id;
}

// a new spring for tendon element el of type type (physSpringType) with name class stiffness damping
// springlength limited range frictionloss (range and frictionloss are warned about); *out = its index
static physStatus parse_common(mjcfCtx* c, xmlNode* el, int type, int* out) {
  int cls, limited, found;
  double range[2] = {0, 0}, fl = 0;
  physStatus st = mjcf_elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_TENDON, cls};
  int id = phys_spec_add_spring(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecSpring* sp = c->s->spring + id;
  sp->line = (int)xmlGetLineNo(el);
  sp->fileid = mjcf_elem_fileid(c, el);
  sp->type = type;
  *out = id;
  if ((st = mjcf_get_name(c, el, "name", sp->name))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "stiffness", &sp->stiffness))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "damping", &sp->damping))) return st;
  if ((st = mjcf_get_real(c, &e, "springlength", &sp->restlength, NULL))) return st;
  if ((st = mjcf_get_limited(c, &e, "limited", "range", range, &limited))) return st;
  if (limited) mjcf_elem_warning(c, el, "tendon length limits are not supported; ignored");
  if ((st = mjcf_get_real(c, &e, "frictionloss", &fl, &found))) return st;
  if (fl != 0) mjcf_elem_warning(c, el, "frictionloss is not supported; ignored");
  return PHYS_OK;
}

// the site (joint: 1) named by attribute attr of path element ch, appended to spring sp's list
static physStatus add_object(mjcfCtx* c, xmlNode* ch, physSpecSpring* sp, int joint) {
  const char* attr = joint ? "joint" : "site";
  const char* name = mjcf_attr_text(ch, attr);
  if (!name) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "attribute '%s' is required", attr);
  int id = find_named(c->s, joint, name);
  if (id == -1) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "unknown %s '%.64s'", attr, name);
  if (id == -2) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "%s name '%.64s' is not unique", attr, name);
  int cap = (int)(sizeof(sp->site) / sizeof(sp->site[0]));
  if (sp->nsite == cap)
    return mjcf_elem_error(c, ch, PHYS_ERR_SIZE, "a tendon has at most %d %ss", cap, attr);
  sp->site[sp->nsite++] = id;
  return PHYS_OK;
}

// <spatial> through <site site> children only (a point-to-point spring path), or <fixed> (fixed = 1) with
// <joint joint coef> children: length sum coef q (MuJoCo requires coef; hinge and slide joints only, checked
// by phys_compile)
static physStatus parse_path(mjcfCtx* c, xmlNode* el, int fixed) {
  int id = -1;
  physStatus st = parse_common(c, el, fixed ? PHYS_SPRING_FIXED : PHYS_SPRING_PATH, &id);
  if (st) return st;
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (!fixed && (mjcf_is_elem(ch, "geom") || mjcf_is_elem(ch, "pulley"))) {
      return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "spatial tendons through <%s> are not supported (sites only)",
                             (const char*)ch->name);
    }
    if (!mjcf_is_elem(ch, fixed ? "joint" : "site")) {
      mjcf_unknown_element(c, ch);
      continue;
    }
    physSpecSpring* sp = c->s->spring + id;
    if ((st = add_object(c, ch, sp, fixed))) return st;
    if (!fixed) continue;
    int found;
    mjcfElem own = {ch, K_NONE, 0};
    if ((st = mjcf_get_real(c, &own, "coef", sp->coef + sp->nsite - 1, &found))) return st;
    if (!found) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "attribute 'coef' is required");
  }
  if (c->s->spring[id].nsite < 2 - fixed) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, fixed ? "a fixed tendon needs at least 1 joint"
                                                        : "a spatial tendon needs at least 2 sites");
  }
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

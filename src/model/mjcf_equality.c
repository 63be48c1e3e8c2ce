// mjcf_equality.c - MJCF <equality> (issue 15 item 1): connect, weld and joint constraints as MuJoCo 2.2.2
// reads them, with their default classes (<default><equality active solref solimp/>). Names are resolved and
// the qpos0-dependent data (connect's second anchor, weld's relative pose when relpose's quaternion is 0)
// computed by phys_compile. <tendon> equalities couple fixed tendons (phys_compile refuses spatial ones);
// <distance> is refused as MuJoCo 2.2.2 refuses it.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mjcf_reader.h"

// the attributes every equality element has: name (parameters name it: polycoef:NAME, solref:NAME), class,
// active, solref, solimp
static physStatus eq_common(mjcfCtx* c, const mjcfElem* e, physSpecEquality* q) {
  physStatus st;
  int found, active = 1;
  if ((st = mjcf_get_name(c, e->el, "name", q->name))) return st;
  if ((st = mjcf_get_keyword(c, e, "active", MJCF_BOOL_WORDS, &active, &found))) return st;
  q->active = active;
  if ((st = mjcf_get_vec(c, e, "solref", 2, q->solref, NULL))) return st;
  if ((st = mjcf_get_vec(c, e, "solimp", 5, q->solimp, NULL))) return st;
  for (int i = 0; i < 2; i++)
    if (!isfinite(q->solref[i])) return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "solref must be finite");
  return PHYS_OK;
}

// body1 (required) and body2 (optional: the world) of connect and weld
static physStatus eq_bodies(mjcfCtx* c, xmlNode* el, physSpecEquality* q) {
  if (!mjcf_attr_text(el, "body1")) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attribute 'body1' is required");
  physStatus st = mjcf_get_name(c, el, "body1", q->obj1);
  if (st) return st;
  if (!mjcf_attr_text(el, "body2")) {
    strcpy(q->obj2, "world");
    return PHYS_OK;
  }
  return mjcf_get_name(c, el, "body2", q->obj2);
}

// <connect body1 body2 anchor>: a ball joint between body1's point anchor (its frame) and body2
static physStatus parse_connect(mjcfCtx* c, const mjcfElem* e, physSpecEquality* q) {
  physStatus st = eq_bodies(c, e->el, q);
  if (st) return st;
  int found;
  if ((st = mjcf_get_vec(c, e, "anchor", 3, q->data, &found))) return st;
  if (!found) return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "attribute 'anchor' is required");
  return PHYS_OK;
}

// <weld body1 body2 relpose anchor torquescale>: body2's pose fixed relative to body1 (relpose: its position
// and quaternion in body1's frame; a zero quaternion, the default, takes the relative pose at qpos0)
static physStatus parse_weld(mjcfCtx* c, const mjcfElem* e, physSpecEquality* q) {
  physStatus st = eq_bodies(c, e->el, q);
  if (st) return st;
  double relpose[7] = {0, 1, 0, 0, 0, 0, 0};
  if ((st = mjcf_get_vec(c, e, "relpose", 7, relpose, NULL))) return st;
  if ((st = mjcf_get_vec(c, e, "anchor", 3, q->data, NULL))) return st;
  memcpy(q->data + 3, relpose, sizeof relpose);
  double ts = 1;
  int found;
  if ((st = mjcf_get_real(c, e, "torquescale", &ts, &found))) return st;
  if (found && !(ts >= 0)) return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "torquescale must be >= 0, got %g", ts);
  q->data[10] = ts;
  return PHYS_OK;
}

// <joint joint1 joint2 polycoef>: q1 - q1_0 = polynomial (degree 4) of q2 - q2_0 (no joint2: q1 - q1_0 = polycoef[0]);
// <tendon tendon1 tendon2 polycoef>: the same with the tendons' lengths L - L(qpos0) (kind: "joint" or "tendon")
static physStatus parse_coupling(mjcfCtx* c, const mjcfElem* e, const char* kind, physSpecEquality* q) {
  char a1[16], a2[16];
  snprintf(a1, sizeof a1, "%s1", kind);
  snprintf(a2, sizeof a2, "%s2", kind);
  if (!mjcf_attr_text(e->el, a1))
    return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "attribute '%s' is required", a1);
  physStatus st = mjcf_get_name(c, e->el, a1, q->obj1);
  if (!st && mjcf_attr_text(e->el, a2)) st = mjcf_get_name(c, e->el, a2, q->obj2);
  if (st) return st;
  double poly[5] = {0, 1, 0, 0, 0};
  if ((st = mjcf_get_vec(c, e, "polycoef", 5, poly, NULL))) return st;
  memcpy(q->data, poly, sizeof poly);
  return PHYS_OK;
}

// one child of <equality>
static physStatus parse_one(mjcfCtx* c, xmlNode* el) {
  static const char* const TYPES[] = {"connect", "weld", "joint", "tendon", NULL};   // physEqType's order
  int type = -1;
  for (int k = 0; TYPES[k]; k++)
    if (mjcf_is_elem(el, TYPES[k])) type = k;
  if (type < 0 && mjcf_is_elem(el, "distance"))
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "distance equality constraints are not supported (connect, weld, "
                           "joint and tendon are)");
  if (type < 0) {
    mjcf_unknown_element(c, el);
    return PHYS_OK;
  }
  int cls;
  physStatus st = mjcf_elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_EQUALITY, cls};
  physSpecEquality* q;
  MJCF_ADD(c, el, equality, equality, q);
  q->type = type;
  if ((st = eq_common(c, &e, q))) return st;
  if (type == PHYS_EQ_CONNECT) return parse_connect(c, &e, q);
  if (type == PHYS_EQ_WELD) return parse_weld(c, &e, q);
  return parse_coupling(c, &e, TYPES[type], q);
}

// <equality>: its constraints in file order
physStatus mjcf_parse_equality(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    physStatus st = parse_one(c, ch);
    if (st) return st;
  }
  return PHYS_OK;
}

// mjcf_actuator.c - MJCF <actuator> and <keyframe>: <motor>, <position>, <velocity>, <general>, <cylinder>,
// <muscle>, <damper> and <intvelocity> actuators with none, integrator, filter or muscle dynamics, fixed, affine or muscle gain and bias
// (MuJoCo 2.2.2's dynprm, gainprm, biasprm through default classes), control, force and activation limits,
// lengthrange, on a joint, a tendon (mjcf_tendon.c), a site or a slider-crank, and <adhesion> on a body; keys with
// time, qpos, qvel and ctrl.
#include <stdlib.h>
#include <string.h>

#include "mjcf_reader.h"

//---------------------------------------------------------------------------------------------------------
// <actuator>, <keyframe>

// MuJoCo 2.2.2's actuator parameters as its reader builds them: one set per default class (inherited, then
// edited by the class's actuator nodes in order) and per element (its class's, edited by the element)
typedef struct actPrm_ {
  int dyn, gain, bias;        // dyntype (0 none, 1 integrator, 2 filter, 3 muscle), gaintype (0 fixed, 1 affine,
  double dynprm[10], gainprm[10], biasprm[10];   // 2 muscle), biastype (0 none, 1 affine, 2 muscle)
} actPrm;

// <muscle> as MuJoCo 2.2.2's reader edits p: muscle dynamics, gain and bias; the parameters still at the
// global defaults (dynprm 1 0, gainprm 1 0 0 ...) take the muscle's (timeconst 0.01 0.04, range 0.75 1.05,
// force -1, scale 200, lmin 0.5, lmax 1.6, vmax 1.5, fpmax 1.3, fvmax 1.2); then timeconst range force scale
// lmin lmax vmax fpmax fvmax are read and the gain parameters copied to the bias's
static physStatus edit_muscle(mjcfCtx* c, const mjcfElem* own, actPrm* p) {
  static const char* const ONE[] = {"force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"};
  static const double DEF[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2};
  p->dyn = 3, p->gain = 2, p->bias = 2;
  if (p->dynprm[0] == 1) p->dynprm[0] = 0.01;
  if (p->dynprm[1] == 0) p->dynprm[1] = 0.04;
  if (p->gainprm[0] == 1) p->gainprm[0] = DEF[0];
  for (int i = 1; i < 9; i++)
    if (p->gainprm[i] == 0) p->gainprm[i] = DEF[i];
  physStatus st = mjcf_get_vec(c, own, "timeconst", 2, p->dynprm, NULL);
  if (!st) st = mjcf_get_vec(c, own, "range", 2, p->gainprm, NULL);
  for (int i = 0; i < 7 && !st; i++) st = mjcf_get_real(c, own, ONE[i], p->gainprm + 2 + i, NULL);
  memcpy(p->biasprm, p->gainprm, sizeof(p->biasprm));
  return st;
}

// <damper kv> as MuJoCo 2.2.2's reader edits p: the gain cleared, gainprm[2] = -kv (kv >= 0: "damping
// coefficient cannot be negative"), affine gain, no bias, no dynamics: force = -kv Ldot ctrl, a damping set by
// the control (its ctrllimited and the sign of its ctrlrange: parse_motor)
static physStatus edit_damper(mjcfCtx* c, const mjcfElem* own, actPrm* p) {
  if (!mjcf_attr_text(own->el, "ctrlrange"))   // (2.2.2 reads it as required, in a default class's node too)
    return mjcf_elem_error(c, own->el, PHYS_ERR_MODEL, "a <damper> needs its own 'ctrlrange' (MuJoCo 2.2.2 requires "
                           "it on every <damper> node, default classes' too)");
  memset(p->gainprm, 0, sizeof(p->gainprm));
  physStatus st = mjcf_get_real(c, own, "kv", p->gainprm + 2, NULL);
  if (!st && p->gainprm[2] < 0)
    return mjcf_elem_error(c, own->el, PHYS_ERR_VALUE, "damping coefficient cannot be negative (kv %g)", p->gainprm[2]);
  p->gainprm[2] = -p->gainprm[2];
  p->dyn = 0, p->gain = 1, p->bias = 0;
  return st;
}

// <adhesion gain> as MuJoCo 2.2.2's reader edits p: no dynamics, a fixed gain [gain (1), 0, ...], no bias (its
// body transmission, required ctrlrange >= 0 and implied ctrllimited: parse_motor)
static physStatus edit_adhesion(mjcfCtx* c, const mjcfElem* own, actPrm* p) {
  memset(p->gainprm, 0, sizeof(p->gainprm));
  memset(p->biasprm, 0, sizeof(p->biasprm));
  p->gainprm[0] = 1;
  p->dyn = 0, p->gain = 0, p->bias = 0;
  return mjcf_get_real(c, own, "gain", p->gainprm, NULL);
}

// edit p by one <motor|general|position|velocity|cylinder|damper|intvelocity|adhesion> node (an element or a default node, its own
// attributes only) as MuJoCo 2.2.2 does: general reads dyntype gaintype biastype and the partial dynprm
// gainprm biasprm; motor sets gain [1, 0, ...] and no bias; position (velocity) clears the bias, reads kp (kv)
// into gainprm[0] and sets bias affine with biasprm[1] (biasprm[2]) = -gainprm[0]; damper: edit_damper;
// intvelocity clears the bias, reads kp into gainprm[0], sets integrator dynamics, fixed gain and affine bias
// with biasprm[1] = -kp (its actlimited is implied: parse_motor); cylinder reads timeconst
// into dynprm[0], bias into biasprm[0..2], area (or diameter d: pi d^2 / 4) into gainprm[0], with filter
// dynamics, fixed gain and affine bias
static physStatus edit_actuator(mjcfCtx* c, xmlNode* el, actPrm* p) {
  static const char* const DYN[] = {"none", "integrator", "filter", "muscle", "user", NULL};
  static const char* const GAIN[] = {"fixed", "affine", "muscle", "user", NULL};
  static const char* const BIAS[] = {"none", "affine", "muscle", "user", NULL};
  mjcfElem own = {el, K_NONE, 0};
  int n;
  physStatus st = PHYS_OK;
  if (mjcf_is_elem(el, "general")) {
    st = mjcf_get_keyword(c, &own, "dyntype", DYN, &p->dyn, NULL);
    if (!st) st = mjcf_get_keyword(c, &own, "gaintype", GAIN, &p->gain, NULL);
    if (!st) st = mjcf_get_keyword(c, &own, "biastype", BIAS, &p->bias, NULL);
    if (!st) st = mjcf_get_partial(c, &own, "dynprm", 10, p->dynprm, &n);
    if (!st) st = mjcf_get_partial(c, &own, "gainprm", 10, p->gainprm, &n);
    if (!st) st = mjcf_get_partial(c, &own, "biasprm", 10, p->biasprm, &n);
    return st;
  }
  if (mjcf_is_elem(el, "muscle")) return edit_muscle(c, &own, p);
  if (mjcf_is_elem(el, "cylinder")) {   // a filter with the cylinder's area as gain and an affine bias
    double diameter = -1;
    int found;
    st = mjcf_get_real(c, &own, "timeconst", p->dynprm, NULL);
    if (!st) st = mjcf_get_vec(c, &own, "bias", 3, p->biasprm, NULL);
    if (!st) st = mjcf_get_real(c, &own, "area", p->gainprm, NULL);
    if (!st) st = mjcf_get_real(c, &own, "diameter", &diameter, &found);
    if (!st && found) p->gainprm[0] = 3.14159265358979323846 / 4 * diameter * diameter;
    p->dyn = 2, p->gain = 0, p->bias = 1;
    return st;
  }
  if (mjcf_is_elem(el, "damper")) return edit_damper(c, &own, p);
  if (mjcf_is_elem(el, "adhesion")) return edit_adhesion(c, &own, p);
  if (mjcf_is_elem(el, "intvelocity")) {   // an integrator whose activation is a position servo's setpoint
    memset(p->biasprm, 0, sizeof(p->biasprm));
    st = mjcf_get_real(c, &own, "kp", p->gainprm, NULL);
    p->dyn = 1, p->gain = 0, p->bias = 1;
    p->biasprm[1] = -p->gainprm[0];
    return st;
  }
  int position = mjcf_is_elem(el, "position"), velocity = mjcf_is_elem(el, "velocity");
  p->dyn = 0, p->gain = 0, p->bias = 0;
  if (!position && !velocity) {   // motor
    memset(p->gainprm, 0, sizeof(p->gainprm));
    p->gainprm[0] = 1;
    return PHYS_OK;
  }
  memset(p->biasprm, 0, sizeof(p->biasprm));
  st = mjcf_get_real(c, &own, position ? "kp" : "kv", p->gainprm, NULL);
  p->bias = 1;
  p->biasprm[position ? 1 : 2] = -p->gainprm[0];
  return st;
}

// the parameters of element e (class chain root first, then the element) into a's dyntype, dynprm, gainprm,
// biasprm, gaintype, biastype, musclegain and musclebias; user dynamics, gain or bias types are refused
// (physid has MuJoCo's none, integrator, filter and muscle dynamics, fixed, affine and muscle gain and bias)
static physStatus actuator_prm(mjcfCtx* c, const mjcfElem* e, physSpecActuator* a, int* ok) {
  int chain[PHYS_MJCF_MAXDEPTH], nchain = 0;
  for (int k = e->cls; k >= 0 && nchain < PHYS_MJCF_MAXDEPTH; k = c->cls[k].parent) chain[nchain++] = k;
  actPrm p = {.dynprm = {1}, .gainprm = {1}};
  for (int i = nchain - 1; i >= -1; i--) {
    int nnode = i >= 0 ? c->cls[chain[i]].nnode[K_ACTUATOR] : 1;
    for (int j = 0; j < nnode; j++) {
      physStatus st = edit_actuator(c, i >= 0 ? c->cls[chain[i]].node[K_ACTUATOR][j] : e->el, &p);
      if (st) return st;
    }
  }
  *ok = p.dyn <= 3 && p.gain <= 2 && p.bias <= 2;
  if (!*ok) {
    const char* what = p.dyn > 3 ? "dyntype" : (p.gain > 2 ? "gaintype" : "biastype");
    return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "%s 'user' is not supported (dynamics none, integrator, filter "
                           "and muscle; gain fixed, affine and muscle; bias none, affine and muscle)", what);
  }
  a->dyntype = p.dyn;
  a->gaintype = p.gain == 2 ? PHYS_GAIN_MUSCLE : PHYS_GAIN_AFFINE;
  a->biastype = p.bias == 2 ? PHYS_GAIN_MUSCLE : PHYS_GAIN_AFFINE;
  for (int i = 0; i < 3; i++) {
    a->dynprm[i] = p.dynprm[i];
    a->gainprm[i] = p.gain < 2 && (i == 0 || p.gain == 1) ? p.gainprm[i] : 0;
    a->biasprm[i] = p.bias == 1 ? p.biasprm[i] : 0;
  }
  if (p.gain == 2) memcpy(a->musclegain, p.gainprm, sizeof(a->musclegain));   // (else 0: the model's muscle
  if (p.bias == 2) memcpy(a->musclebias, p.biasprm, sizeof(a->musclebias));   // parameters only for muscles)
  return PHYS_OK;
}

// a slider-crank's slider site (slidersite, required) and crank length (cranklength, own or default, > 0) into a
static physStatus parse_slidercrank(mjcfCtx* c, const mjcfElem* e, physSpecActuator* a) {
  if (!mjcf_attr_text(e->el, "slidersite"))
    return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "a slider-crank transmission (cranksite) needs a 'slidersite'");
  physStatus st = mjcf_get_name(c, e->el, "slidersite", a->slider);
  if (!st) st = mjcf_get_real(c, e, "cranklength", &a->cranklength, NULL);
  if (!st && !(a->cranklength > 0))
    return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "a slider-crank needs cranklength > 0 (MuJoCo 2.2.2 refuses "
                           "it too)");
  return st;
}

// the limits MuJoCo 2.2.2's reader implies, in place of the ctrllimited/actlimited rule (mjcf_get_limited): a
// <damper> is ctrllimited with its own ctrlrange (required on every damper node: edit_damper) >= 0 ("damper control range cannot be negative"); an <intvelocity> is actlimited with its actrange (own or its
// class's). 2.2.2's schema has no ctrllimited on <damper>, no actlimited or kv on <intvelocity>: refused.
static physStatus implied_limits(mjcfCtx* c, const mjcfElem* e, physSpecActuator* a, int damper) {
  const char* bad = damper ? (mjcf_attr_text(e->el, "ctrllimited") ? "ctrllimited" : NULL)
                           : (mjcf_attr_text(e->el, "actlimited") ? "actlimited" : (mjcf_attr_text(e->el, "kv") ? "kv" : NULL));
  if (bad)
    return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "'%s' is not an attribute of <%s> in MuJoCo 2.2.2 (%s)", bad,
                           damper ? "damper" : "intvelocity", bad[0] == 'k' ? "its servo has kp only" : "its limit is "
                           "implied");
  if (!damper) {
    a->actlimited = 1;
    return mjcf_get_vec(c, e, "actrange", 2, a->actrange, NULL);
  }
  a->ctrllimited = 1;   // (its 'ctrlrange' is on the element: edit_damper)
  physStatus st = mjcf_get_vec(c, e, "ctrlrange", 2, a->ctrlrange, NULL);
  if (!st && (a->ctrlrange[0] < 0 || a->ctrlrange[1] < 0))
    return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "damper control range cannot be negative (ctrlrange %g %g)",
                           a->ctrlrange[0], a->ctrlrange[1]);
  return st;
}

// <adhesion name class body gain ctrlrange forcelimited forcerange> (MuJoCo 2.2.2's schema: no gear, ctrllimited or
// other target; ctrlrange required on the element, >= 0: "adhesion control range cannot be negative"): a body
// transmission (PHYS_TRN_BODY), gear 1, ctrllimited; which = the index of its one target in parse_motor's list
static physStatus parse_adhesion(mjcfCtx* c, const mjcfElem* e, int which) {
  static const char* const NOT[] = {"gear", "ctrllimited", "actlimited", "actrange", "lengthrange", NULL};
  if (which != 5)
    return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "an <adhesion> acts on a 'body' (its only transmission)");
  for (int i = 0; NOT[i]; i++)
    if (mjcf_attr_text(e->el, NOT[i]))
      return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "'%s' is not an attribute of <adhesion> in MuJoCo 2.2.2", NOT[i]);
  if (!mjcf_attr_text(e->el, "ctrlrange"))
    return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL, "an <adhesion> needs its own 'ctrlrange' (MuJoCo 2.2.2: "
                           "\"required attribute missing\")");
  physSpecActuator prm = {0};
  int ok = 1;
  physStatus st = actuator_prm(c, e, &prm, &ok);
  if (st || !ok) return st;
  physSpecActuator* a;
  MJCF_ADD(c, e->el, actuator, actuator, a);
  if ((st = mjcf_get_name(c, e->el, "name", a->name))) return st;
  if ((st = mjcf_get_name(c, e->el, "body", a->target))) return st;
  a->trntype = PHYS_TRN_BODY;
  memset(a->gear, 0, sizeof(a->gear));
  a->gear[0] = 1;
  a->gaintype = prm.gaintype, a->biastype = prm.biastype, a->dyntype = PHYS_DYN_NONE;
  memcpy(a->gainprm, prm.gainprm, sizeof(prm.gainprm));
  memcpy(a->dynprm, prm.dynprm, sizeof(prm.dynprm));
  a->ctrllimited = 1;
  if ((st = mjcf_get_vec(c, e, "ctrlrange", 2, a->ctrlrange, NULL))) return st;
  if (a->ctrlrange[0] < 0 || a->ctrlrange[1] < 0)
    return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "adhesion control range cannot be negative (ctrlrange %g %g)",
                           a->ctrlrange[0], a->ctrlrange[1]);
  return mjcf_get_limited(c, e, "forcelimited", "forcerange", a->forcerange, &a->forcelimited);
}

// <motor>, <general>, <position>, <velocity>, <cylinder>, <muscle>, <damper> or <intvelocity> (actuator_prm) with name class, one target of
// joint tendon site cranksite (with slidersite cranklength; refsite, jointinparent, body refused), gear ctrllimited
// ctrlrange forcelimited forcerange actlimited actrange (MuJoCo 2.2.2's limit rule, mjcf_get_limited), lengthrange
static physStatus parse_motor(mjcfCtx* c, xmlNode* el) {
  static const char* const TARGETS[] = {"joint", "tendon", "site", "cranksite", "jointinparent", "body"};
  static const int TRN[] = {PHYS_TRN_JOINT, PHYS_TRN_SPRING, PHYS_TRN_SITE, PHYS_TRN_SLIDERCRANK};
  int cls, ntarget = 0, which = -1, ok = 1, n;
  physStatus st = mjcf_elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_ACTUATOR, cls};
  for (int i = 0; i < 6; i++) {
    if (mjcf_attr_text(el, TARGETS[i])) {
      ntarget++;
      which = i;
    }
  }
  if (mjcf_is_elem(el, "adhesion")) return parse_adhesion(c, &e, ntarget == 1 ? which : -1);
  if (ntarget != 1)
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "needs exactly one of 'joint', 'tendon', 'site' and 'cranksite'");
  if (which >= 4) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "actuators with a '%s' transmission are not supported (joint, "
                           "tendon, site and slider-crank are)", TARGETS[which]);
  }
  if (which == 2 && mjcf_attr_text(el, "refsite")) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "site transmissions with a 'refsite' (a reference frame) are not "
                           "supported");
  }
  physSpecActuator prm = {0};
  if ((st = actuator_prm(c, &e, &prm, &ok)) || !ok) return st;
  physSpecActuator* a;
  MJCF_ADD(c, el, actuator, actuator, a);
  if ((st = mjcf_get_name(c, el, "name", a->name))) return st;
  if ((st = mjcf_get_name(c, el, TARGETS[which], a->target))) return st;
  a->trntype = TRN[which];
  if (which == 3 && (st = parse_slidercrank(c, &e, a))) return st;
  if ((st = mjcf_get_partial(c, &e, "gear", 6, a->gear, &n))) return st;
  if ((st = mjcf_get_vec(c, &e, "lengthrange", 2, a->lengthrange, NULL))) return st;
  a->dyntype = prm.dyntype;
  a->gaintype = prm.gaintype;
  a->biastype = prm.biastype;
  memcpy(a->dynprm, prm.dynprm, sizeof(prm.dynprm));
  memcpy(a->gainprm, prm.gainprm, sizeof(prm.gainprm));
  memcpy(a->biasprm, prm.biasprm, sizeof(prm.biasprm));
  memcpy(a->musclegain, prm.musclegain, sizeof(prm.musclegain));
  memcpy(a->musclebias, prm.musclebias, sizeof(prm.musclebias));
  int damper = mjcf_is_elem(el, "damper"), intvelocity = mjcf_is_elem(el, "intvelocity");
  if (!damper && (st = mjcf_get_limited(c, &e, "ctrllimited", "ctrlrange", a->ctrlrange, &a->ctrllimited))) return st;
  if ((st = mjcf_get_limited(c, &e, "forcelimited", "forcerange", a->forcerange, &a->forcelimited))) return st;
  if (!intvelocity && (st = mjcf_get_limited(c, &e, "actlimited", "actrange", a->actrange, &a->actlimited))) return st;
  return damper || intvelocity ? implied_limits(c, &e, a, damper) : PHYS_OK;
}

// <actuator>: <motor>, <general>, <position>, <velocity>, <cylinder>, <muscle>, <damper>, <intvelocity> and
// <adhesion> (every actuator type of MuJoCo 2.2.2)
physStatus mjcf_parse_actuator(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (mjcf_is_elem(ch, "motor") || mjcf_is_elem(ch, "general") || mjcf_is_elem(ch, "position") ||
        mjcf_is_elem(ch, "velocity") || mjcf_is_elem(ch, "cylinder") || mjcf_is_elem(ch, "muscle") ||
        mjcf_is_elem(ch, "damper") || mjcf_is_elem(ch, "intvelocity") || mjcf_is_elem(ch, "adhesion")) {
      physStatus st = parse_motor(c, ch);
      if (st) return st;
      continue;
    }
    mjcf_unknown_element(c, ch);
  }
  return PHYS_OK;
}

// attribute name of el (no defaults) as a variable-length list of numbers (keyframe vectors) in a new array
static physStatus get_list(mjcfCtx* c, xmlNode* el, const char* name, double** out, int* n) {
  const char* text = mjcf_attr_text(el, name);
  *out = NULL;
  *n = 0;
  if (!text) return PHYS_OK;
  int cnt = mjcf_count_tokens(text);
  if (!cnt) return PHYS_OK;
  *out = malloc((size_t)cnt * sizeof(double));
  if (!*out) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  return mjcf_parse_numbers(c, el, name, text, *out, cnt, n);
}

// <key name time qpos qvel ctrl act>; sizes are checked by phys_compile
static physStatus parse_key(mjcfCtx* c, xmlNode* el) {
  mjcfElem e = {el, K_NONE, 0};
  physSpecKey* k;
  MJCF_ADD(c, el, key, key, k);
  physStatus st = mjcf_get_name(c, el, "name", k->name);
  if (!st) st = mjcf_get_real(c, &e, "time", &k->time, NULL);
  if (!st) st = get_list(c, el, "qpos", &k->qpos, &k->nqpos);
  if (!st) st = get_list(c, el, "qvel", &k->qvel, &k->nqvel);
  if (!st) st = get_list(c, el, "ctrl", &k->ctrl, &k->nctrl);
  if (!st) st = get_list(c, el, "act", &k->act, &k->nact);
  if (st) return st;
  static const char* const OTHER[] = {"mocap_pos", "mocap_quat", NULL};
  if (mjcf_has_any_attr(el, OTHER)) mjcf_elem_warning(c, el, "mocap values are not supported; ignored");
  return PHYS_OK;
}

// <keyframe>: its <key>s
physStatus mjcf_parse_keyframe(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (mjcf_is_elem(ch, "key")) {
      physStatus st = parse_key(c, ch);
      if (st) return st;
    } else {
      mjcf_unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

// mjcf_actuator.c - MJCF <tendon>, <actuator> and <keyframe>: spatial tendons through sites (springs of
// the spec), fixed tendons ignored with a warning; <motor> and fixed-gain <general> actuators on a joint or
// a spatial tendon (the gain folded into the gear); keys with time, qpos, qvel and ctrl.
#include <stdlib.h>
#include <string.h>

#include "mjcf_reader.h"

//---------------------------------------------------------------------------------------------------------
// <tendon>, <actuator>, <keyframe>

// index of the site named name; -1 if none, -2 if several
static int find_site(const physSpec* s, const char* name) {
  int id = -1;
  for (int i = 0; i < s->nsite; i++) {
    if (strcmp(s->site[i].name, name)) continue;
    if (id >= 0) return -2;
    id = i;
  }
  return id;
}

// <spatial name class stiffness damping springlength limited range frictionloss> through <site site>
// children only: a point-to-point spring path (range and frictionloss are warned about)
static physStatus parse_spatial(mjcfCtx* c, xmlNode* el) {
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
  if ((st = mjcf_get_name(c, el, "name", sp->name))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "stiffness", &sp->stiffness))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "damping", &sp->damping))) return st;
  if ((st = mjcf_get_real(c, &e, "springlength", &sp->restlength, NULL))) return st;
  if ((st = mjcf_get_limited(c, &e, "limited", "range", range, &limited))) return st;
  if (limited) mjcf_elem_warning(c, el, "tendon length limits are not supported; ignored");
  if ((st = mjcf_get_real(c, &e, "frictionloss", &fl, &found))) return st;
  if (fl != 0) mjcf_elem_warning(c, el, "frictionloss is not supported; ignored");
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (mjcf_is_elem(ch, "geom") || mjcf_is_elem(ch, "pulley")) {
      return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "spatial tendons through <%s> are not supported (sites only)",
                             (const char*)ch->name);
    }
    if (!mjcf_is_elem(ch, "site")) {
      mjcf_unknown_element(c, ch);
      continue;
    }
    const char* name = mjcf_attr_text(ch, "site");
    if (!name) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "attribute 'site' is required");
    int site = find_site(c->s, name);
    if (site == -1) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "unknown site '%.64s'", name);
    if (site == -2) return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "site name '%.64s' is not unique", name);
    if (sp->nsite == (int)(sizeof(sp->site) / sizeof(sp->site[0]))) {
      return mjcf_elem_error(c, ch, PHYS_ERR_SIZE, "a spatial tendon has at most %d sites",
                             (int)(sizeof(sp->site) / sizeof(sp->site[0])));
    }
    sp->site[sp->nsite++] = site;
  }
  if (sp->nsite < 2) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a spatial tendon needs at least 2 sites");
  return PHYS_OK;
}

// <tendon>: spatial tendons become springs; fixed tendons are ignored with a warning
physStatus mjcf_parse_tendon(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (mjcf_is_elem(ch, "spatial")) {
      physStatus st = parse_spatial(c, ch);
      if (st) return st;
    } else if (mjcf_is_elem(ch, "fixed")) {
      mjcf_elem_warning(c, ch, "fixed tendons are not supported; ignored (with actuators on them)");
      const char* name = mjcf_attr_text(ch, "name");
      if (name && !mjcf_strlist_add(&c->ignored_tendon, name)) {
        return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
      }
    } else {
      mjcf_unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

// <general>: only force = gain*ctrl with a fixed gain and no bias or dynamics; *ok = 0 otherwise.
// The gain is folded into the gear: generalized force = gear * gainprm[0] * ctrl.
static physStatus general_gain(mjcfCtx* c, const mjcfElem* e, double* gain, int* ok) {
  static const char* const DYN[] = {"none", "integrator", "filter", "muscle", "user", NULL};
  static const char* const GAIN[] = {"fixed", "affine", "muscle", "user", NULL};
  static const char* const BIAS[] = {"none", "affine", "muscle", "user", NULL};
  int dyn = 0, gt = 0, bias = 0, n;
  double prm[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  physStatus st = mjcf_get_keyword(c, e, "dyntype", DYN, &dyn, NULL);
  if (!st) st = mjcf_get_keyword(c, e, "gaintype", GAIN, &gt, NULL);
  if (!st) st = mjcf_get_keyword(c, e, "biastype", BIAS, &bias, NULL);
  if (!st) st = mjcf_get_partial(c, e, "gainprm", 10, prm, &n);
  if (st) return st;
  *ok = dyn == 0 && gt == 0 && bias == 0;
  if (!*ok) {
    mjcf_elem_warning(c, e->el, "only fixed-gain <general> actuators without bias or dynamics are supported; "
                      "ignored");
  }
  *gain = prm[0];
  return PHYS_OK;
}

// <motor> or <general> (general = 1: general_gain) with name class, one target of joint tendon site
// jointinparent body cranksite (only joint and spatial tendon are used), gear ctrllimited ctrlrange
// forcelimited
static physStatus parse_motor(mjcfCtx* c, xmlNode* el, int general) {
  static const char* const TARGETS[] = {"joint", "tendon", "site", "jointinparent", "body", "cranksite"};
  int cls, ntarget = 0, which = -1, ok = 1, n, v, found;
  double gain = 1;
  physStatus st = mjcf_elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_ACTUATOR, cls};
  for (int i = 0; i < 6; i++) {
    if (mjcf_attr_text(el, TARGETS[i])) {
      ntarget++;
      which = i;
    }
  }
  if (ntarget != 1) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "needs exactly one of 'joint' and 'tendon'");
  const char* target = mjcf_attr_text(el, TARGETS[which]);
  if (which >= 2) {
    mjcf_elem_warning(c, el, "actuators on a %s are not supported; ignored", TARGETS[which]);
    return PHYS_OK;
  }
  if (which == 1 && mjcf_strlist_has(&c->ignored_tendon, target)) {
    mjcf_elem_warning(c, el, "actuator on the ignored fixed tendon '%.64s'; ignored", target);
    return PHYS_OK;
  }
  if (general && ((st = general_gain(c, &e, &gain, &ok)) || !ok)) return st;
  int id = phys_spec_add_actuator(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecActuator* a = c->s->actuator + id;
  a->line = (int)xmlGetLineNo(el);
  a->fileid = mjcf_elem_fileid(c, el);
  if ((st = mjcf_get_name(c, el, "name", a->name))) return st;
  if ((st = mjcf_get_name(c, el, TARGETS[which], a->target))) return st;
  a->trntype = which == 0 ? PHYS_TRN_JOINT : PHYS_TRN_SPRING;
  if ((st = mjcf_get_partial(c, &e, "gear", 6, a->gear, &n))) return st;
  for (int i = 0; i < 6; i++) a->gear[i] *= gain;
  if ((st = mjcf_get_limited(c, &e, "ctrllimited", "ctrlrange", a->ctrlrange, &a->ctrllimited))) return st;
  if ((st = mjcf_get_keyword(c, &e, "forcelimited", MJCF_LIMITED_WORDS, &v, &found))) return st;
  if (found && v == 1) mjcf_elem_warning(c, el, "forcelimited is not supported; ignored");
  return PHYS_OK;
}

// <actuator>: <motor> and <general>; the other actuator types are warned about
physStatus mjcf_parse_actuator(mjcfCtx* c, xmlNode* el) {
  static const char* const UNSUPPORTED[] = {"position", "velocity", "cylinder", "muscle", "adhesion",
                                            "damper", "intvelocity", NULL};
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    int motor = mjcf_is_elem(ch, "motor"), general = mjcf_is_elem(ch, "general"), known = 0;
    if (motor || general) {
      physStatus st = parse_motor(c, ch, general);
      if (st) return st;
      continue;
    }
    for (int i = 0; UNSUPPORTED[i]; i++) known |= mjcf_is_elem(ch, UNSUPPORTED[i]);
    if (known) {
      mjcf_elem_warning(c, ch, "<%s> actuators are not supported; ignored", (const char*)ch->name);
    } else {
      mjcf_unknown_element(c, ch);
    }
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

// <key name time qpos qvel ctrl>; sizes are checked by phys_compile
static physStatus parse_key(mjcfCtx* c, xmlNode* el) {
  mjcfElem e = {el, K_NONE, 0};
  int id = phys_spec_add_key(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecKey* k = c->s->key + id;
  k->line = (int)xmlGetLineNo(el);
  k->fileid = mjcf_elem_fileid(c, el);
  physStatus st = mjcf_get_name(c, el, "name", k->name);
  if (!st) st = mjcf_get_real(c, &e, "time", &k->time, NULL);
  if (!st) st = get_list(c, el, "qpos", &k->qpos, &k->nqpos);
  if (!st) st = get_list(c, el, "qvel", &k->qvel, &k->nqvel);
  if (!st) st = get_list(c, el, "ctrl", &k->ctrl, &k->nctrl);
  if (st) return st;
  static const char* const OTHER[] = {"act", "mocap_pos", "mocap_quat", NULL};
  if (mjcf_has_any_attr(el, OTHER)) mjcf_elem_warning(c, el, "act and mocap values are not supported; ignored");
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

// mjcf_contact.c - MJCF <contact> (explicit <pair>s and <exclude>d body pairs, resolved by phys_compile)
// and physid's extension keys in <custom> (contact model, gradient options, Baumgarte, penalty, solver,
// restitution of geoms and pairs, rest-length tendon actuators), read last because they name geoms,
// pairs and actuators.
#include <math.h>
#include <string.h>

#include "mjcf_reader.h"

//---------------------------------------------------------------------------------------------------------
// <contact>

// <pair geom1 geom2 name friction margin>: an explicit contact pair. Unset friction and margin are MJCF's
// pair defaults 1 and 0, not the geoms' (MuJoCo 2.2.2 does so; tests/model/test_oracle_mjcf_contact.c);
// restitution, which MJCF lacks, comes from the geoms (phys_compile) unless physid:pair_restitution sets it.
// Of MJCF's five friction values physid uses the first (isotropic sliding friction). <default><pair>
// classes are not read.
static physStatus parse_pair(mjcfCtx* c, xmlNode* el) {
  mjcfElem e = {el, K_NONE, 0};
  int id = phys_spec_add_pair(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecPair* p = c->s->pair + id;
  p->line = (int)xmlGetLineNo(el);
  p->fileid = mjcf_elem_fileid(c, el);
  physStatus st;
  if ((st = mjcf_get_name(c, el, "name", p->name))) return st;
  if (!mjcf_attr_text(el, "geom1") || !mjcf_attr_text(el, "geom2"))
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attributes 'geom1' and 'geom2' are required");
  if ((st = mjcf_get_name(c, el, "geom1", p->geom1)) || (st = mjcf_get_name(c, el, "geom2", p->geom2))) return st;
  double fr[5] = {1, 1, 0.005, 0.0001, 0.0001};
  p->friction = 1;
  p->margin = 0;
  int nset;
  if ((st = mjcf_get_partial(c, &e, "friction", 5, fr, &nset))) return st;
  if (nset > 0) {
    for (int i = 0; i < nset; i++)
      if (fr[i] < 0) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "friction must be >= 0, got %g", fr[i]);
    if (nset > 1 && fr[1] != fr[0])
      mjcf_elem_warning(c, el, "anisotropic friction is not supported; using the first value %g", fr[0]);
    p->friction = fr[0];
  }
  int found;
  double margin;
  if ((st = mjcf_get_real(c, &e, "margin", &margin, &found))) return st;
  if (found && !(margin >= 0)) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "margin must be >= 0, got %g", margin);
  if (found) p->margin = margin;
  return PHYS_OK;
}

// <exclude body1 body2>: no contacts between the geoms of these two bodies
static physStatus parse_exclude(mjcfCtx* c, xmlNode* el) {
  int id = phys_spec_add_exclude(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecExclude* x = c->s->exclude + id;
  x->line = (int)xmlGetLineNo(el);
  x->fileid = mjcf_elem_fileid(c, el);
  if (!mjcf_attr_text(el, "body1") || !mjcf_attr_text(el, "body2"))
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "attributes 'body1' and 'body2' are required");
  physStatus st = mjcf_get_name(c, el, "body1", x->body1);
  return st ? st : mjcf_get_name(c, el, "body2", x->body2);
}

// <contact>: explicit pairs and excluded body pairs (resolved by phys_compile)
physStatus mjcf_parse_contact(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    physStatus st = PHYS_OK;
    if (mjcf_is_elem(ch, "pair")) {
      st = parse_pair(c, ch);
    } else if (mjcf_is_elem(ch, "exclude")) {
      st = parse_exclude(c, ch);
    } else {
      mjcf_unknown_element(c, ch);
    }
    if (st) return st;
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// physid extensions, carried in <custom> so that MuJoCo 2.2.2 still loads the file:
//   <custom><text name="physid:restlength" data="act1 act2"/></custom>
//   <text name="physid:contact" data="lcp|cone|ccp|penalty"/>      contact model (default lcp)
//   <text name="physid:grad" data="toi complementarity"/>           gradient options (opt.gradflags)
//   <text name="physid:integrator" data="euler|implicit|pbd"/>      physid's integrator (default euler; issue 16:
//                                                                   identify --write-model writes it)
//   <numeric name="physid:baumgarte" data="0.2"/>                   drift stabilization in [0, 1]
//   <numeric name="physid:penalty" data="k_c d_lim v_slip"/>        penalty model (1 to 3 values; d_lim: joint limits)
//   <numeric name="physid:solver" data="iterations tolerance"/>     iterative solvers (1 or 2 values)
//   <numeric name="physid:restitution:GEOM" data="0.5"/>            restitution of a geom, in [0, 1]
//   <numeric name="physid:pair_restitution:PAIR" data="0.5"/>       restitution of a <contact><pair>
// Unknown physid: keys are warnings; other custom data is the user's and is ignored.

// physid:restlength: the named tendon motors set their spring's rest length, L0 = springlength + gear*ctrl,
// instead of pulling along it (actuated cables of tensegrity robots); a <general>'s fixed gain is folded into
// the gear (gain 1 in the model), a bias is refused
static physStatus ext_restlength(mjcfCtx* c, xmlNode* el, const char* data) {
  char name[PHYS_NAMELEN];
  const char* p = data;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    size_t n = strcspn(p, " \t\n");
    if (n == 0) break;
    if (n >= sizeof(name)) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "actuator name too long");
    memcpy(name, p, n);
    name[n] = 0;
    p += n;
    int found = 0;
    for (int a = 0; a < c->s->nactuator; a++) {
      physSpecActuator* act = c->s->actuator + a;
      if (strcmp(act->name, name) != 0) continue;
      if (act->trntype == PHYS_TRN_JOINT)
        return mjcf_elem_error(c, el, PHYS_ERR_MODEL,
                               "actuator '%s' acts on a joint; a rest-length actuator needs a tendon", name);
      if (act->biasprm[0] != 0 || act->biasprm[1] != 0 || act->biasprm[2] != 0 || act->gainprm[1] != 0 ||
          act->gainprm[2] != 0)
        return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "actuator '%s' has a bias or a length-dependent gain; a "
                               "rest-length actuator takes a fixed gain only", name);
      act->trntype = PHYS_TRN_RESTLENGTH;
      for (int i = 0; i < 6; i++) act->gear[i] *= act->gainprm[0];   // L0 = springlength + gear gain ctrl
      act->gainprm[0] = 1;
      found = 1;
    }
    if (!found) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "actuator '%s' not found", name);
  }
  return PHYS_OK;
}

// the numbers of a <numeric> extension: between nmin and nmax values into out, *n = how many
static physStatus ext_numbers(mjcfCtx* c, xmlNode* el, const char* data, double* out, int nmin, int nmax,
                              int* n) {
  physStatus st = mjcf_parse_numbers(c, el, "data", data, out, nmax, n);
  if (st) return st;
  if (*n < nmin)
    return mjcf_elem_error(c, el, PHYS_ERR_SIZE, "'data' needs %d to %d values, found %d", nmin, nmax, *n);
  return PHYS_OK;
}

// physid:contact: the contact model, lcp | cone | ccp | penalty
static physStatus ext_contact(mjcfCtx* c, xmlNode* el, const char* data) {
  char word[32];
  size_t a = strspn(data, " \t\n"), len = strcspn(data + a, " \t\n");
  int model = -1;
  if (len < sizeof(word) && data[a + len + strspn(data + a + len, " \t\n")] == 0) {
    memcpy(word, data + a, len);
    word[len] = 0;
    model = phys_contact_from_name(word);
  }
  if (model < 0)
    return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "unknown contact model '%.40s' (lcp, cone, ccp or penalty)", data);
  c->s->opt.contact = model;
  return PHYS_OK;
}

// physid:integrator: physid's own time integrator, one word euler, implicit or pbd (opt.integrator; the
// <option integrator> attribute is MuJoCo's and stays semi-implicit Euler for physid)
static physStatus ext_integrator(mjcfCtx* c, xmlNode* el, const char* data) {
  static const char* const NAMES[] = {"euler", "implicit", "pbd"};
  size_t a = strspn(data, " \t\n"), len = strcspn(data + a, " \t\n");
  int trailing = data[a + len + strspn(data + a + len, " \t\n")] != 0;
  for (int k = 0; k < 3 && !trailing; k++)
    if (len == strlen(NAMES[k]) && strncmp(data + a, NAMES[k], len) == 0) {
      c->s->opt.integrator = k;
      return PHYS_OK;
    }
  return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "unknown integrator '%.40s' (euler, implicit or pbd)", data);
}

// physid:grad: gradient options, words "toi" and "complementarity" (opt.gradflags: PHYS_GRAD_TOI,
// PHYS_GRAD_COMPLEMENTARITY); an empty list clears them
static physStatus ext_grad(mjcfCtx* c, xmlNode* el, const char* data) {
  int flags = 0;
  for (const char* p = data + strspn(data, " \t\n"); *p; p += strspn(p, " \t\n")) {
    size_t len = strcspn(p, " \t\n");
    if (len == 3 && !strncmp(p, "toi", 3)) {
      flags |= PHYS_GRAD_TOI;
    } else if (len == 15 && !strncmp(p, "complementarity", 15)) {
      flags |= PHYS_GRAD_COMPLEMENTARITY;
    } else {
      return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "unknown gradient option '%.*s' (toi, complementarity)",
                             (int)(len < 40 ? len : 40), p);
    }
    p += len;
  }
  c->s->opt.gradflags = flags;
  return PHYS_OK;
}

// physid:baumgarte: drift stabilization beta in [0, 1]
static physStatus ext_baumgarte(mjcfCtx* c, xmlNode* el, const char* data) {
  double x;
  int n;
  physStatus st = ext_numbers(c, el, data, &x, 1, 1, &n);
  if (st) return st;
  if (!(x >= 0 && x <= 1)) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "baumgarte %g outside [0, 1]", x);
  c->s->opt.baumgarte = x;
  return PHYS_OK;
}

// physid:penalty: "k_c [d_c [v_slip]]": stiffness >= 0, damping >= 0, slip velocity > 0
static physStatus ext_penalty(mjcfCtx* c, xmlNode* el, const char* data) {
  double x[3];
  int n;
  physStatus st = ext_numbers(c, el, data, x, 1, 3, &n);
  if (st) return st;
  if (!(x[0] >= 0) || (n > 1 && !(x[1] >= 0)) || (n > 2 && !(x[2] > 0)))
    return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "penalty stiffness and damping must be >= 0, v_slip > 0");
  double* dst[3] = {&c->s->opt.penalty_stiffness, &c->s->opt.penalty_damping, &c->s->opt.penalty_vslip};
  for (int i = 0; i < n; i++) *dst[i] = x[i];
  return PHYS_OK;
}

// physid:solver: "iterations [tolerance]" of the iterative solvers: an integer >= 1, a tolerance >= 0
static physStatus ext_solver(mjcfCtx* c, xmlNode* el, const char* data) {
  double x[2];
  int n;
  physStatus st = ext_numbers(c, el, data, x, 1, 2, &n);
  if (st) return st;
  if (!(x[0] >= 1 && x[0] <= 1e9 && x[0] == floor(x[0])) || (n > 1 && !(x[1] >= 0)))
    return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "solver iterations must be an integer >= 1, tolerance >= 0");
  c->s->opt.solver_iterations = (int)x[0];
  if (n > 1) c->s->opt.solver_tolerance = x[1];
  return PHYS_OK;
}

// a restitution value: one number in [0, 1]
static physStatus ext_restitution_value(mjcfCtx* c, xmlNode* el, const char* data, double* out) {
  int n;
  physStatus st = ext_numbers(c, el, data, out, 1, 1, &n);
  if (st) return st;
  if (!(*out >= 0 && *out <= 1)) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "restitution %g outside [0, 1]", *out);
  return PHYS_OK;
}

// the element name after an extension's key prefix ("" if absent)
static const char* ext_suffix(const xmlNode* el, const char* prefix) {
  const char* name = mjcf_attr_text(el, "name");
  size_t n = strlen(prefix);
  if (!name || strncmp(name, prefix, n) != 0) return "";
  return name + n;
}

// physid:restitution:GEOM: restitution of the named geom (every geom of that name)
static physStatus ext_restitution(mjcfCtx* c, xmlNode* el, const char* data) {
  const char* name = ext_suffix(el, "physid:restitution:");
  double x;
  physStatus st = ext_restitution_value(c, el, data, &x);
  if (st) return st;
  int found = 0;
  for (int g = 0; g < c->s->ngeom; g++) {
    if (strcmp(c->s->geom[g].name, name) != 0) continue;
    c->s->geom[g].restitution = x;
    found = 1;
  }
  if (!found || !name[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "geom '%.64s' not found", name);
  return PHYS_OK;
}

// physid:pair_restitution:PAIR: restitution of the named <contact><pair>
static physStatus ext_pair_restitution(mjcfCtx* c, xmlNode* el, const char* data) {
  const char* name = ext_suffix(el, "physid:pair_restitution:");
  double x;
  physStatus st = ext_restitution_value(c, el, data, &x);
  if (st) return st;
  int found = 0;
  for (int i = 0; i < c->s->npair; i++) {
    if (strcmp(c->s->pair[i].name, name) != 0) continue;
    c->s->pair[i].restitution = x;
    found = 1;
  }
  if (!found || !name[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "pair '%.64s' not found", name);
  return PHYS_OK;
}

typedef physStatus (*extensionFn)(mjcfCtx* c, xmlNode* el, const char* data);

static const struct {
  const char* key;
  const char* element;   // "text" or "numeric"
  int prefix;            // 1: the key is a prefix followed by an element's name
  extensionFn fn;
} EXTENSIONS[] = {
    {"physid:restlength", "text", 0, ext_restlength},
    {"physid:contact", "text", 0, ext_contact},
    {"physid:grad", "text", 0, ext_grad},
    {"physid:integrator", "text", 0, ext_integrator},
    {"physid:baumgarte", "numeric", 0, ext_baumgarte},
    {"physid:penalty", "numeric", 0, ext_penalty},
    {"physid:solver", "numeric", 0, ext_solver},
    {"physid:restitution:", "numeric", 1, ext_restitution},
    {"physid:pair_restitution:", "numeric", 1, ext_pair_restitution},
};

// <custom>: physid's extension keys
physStatus mjcf_parse_custom(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char* name = mjcf_attr_text(ch, "name");
    if (!name || strncmp(name, "physid:", 7) != 0) continue;
    const char* data = mjcf_attr_text(ch, "data");
    int known = 0;
    for (size_t i = 0; i < sizeof(EXTENSIONS) / sizeof(EXTENSIONS[0]); i++) {
      if (EXTENSIONS[i].prefix ? strncmp(name, EXTENSIONS[i].key, strlen(EXTENSIONS[i].key)) != 0
                               : strcmp(name, EXTENSIONS[i].key) != 0)
        continue;
      known = 1;
      if (!mjcf_is_elem(ch, EXTENSIONS[i].element))
        return mjcf_elem_error(c, ch, PHYS_ERR_MODEL, "'%s' must be a <%s> element", name, EXTENSIONS[i].element);
      physStatus st = EXTENSIONS[i].fn(c, ch, data ? data : "");
      if (st) return st;
    }
    if (!known) mjcf_elem_warning(c, ch, "unknown physid extension '%.64s', ignored", name);
  }
  return PHYS_OK;
}

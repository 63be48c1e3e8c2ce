// params.c - the parameter table (params.h): names, get/set into a physModel, bounds, and the log-Cholesky
// map of the ten inertial parameters (Rucker & Wensing 2022).
#include "params.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn.h"
#include "equality_deriv.h"
#include "hull.h"
#include "model.h"
#include "primitive_deriv.h"
#include "rot.h"
#include "spatial.h"

//---------------------------------------------------------------------------------------------------------
// kinds

// spec prefix and size of each kind (spring kinds share "damping", "stiffness" with joints; restlength is
// spring-only). Size: theta entries of one table entry; gear's and size's depend on the object (param_size).
// A switch over the enum without a default: -Wswitch (in -Wall, an error with -Werror) refuses a kind added to
// params.h without its row here, and no row depends on the enum's order.
typedef struct kindRow_ {
  const char* prefix;
  int size;
} kindRow;

static kindRow kind_row(int kind) {
  switch ((physParamKind)kind) {
    case PHYS_PAR_MASS: return (kindRow){"mass", 1};
    case PHYS_PAR_COM: return (kindRow){"com", 3};
    case PHYS_PAR_INERTIA: return (kindRow){"inertia", 10};
    case PHYS_PAR_DAMPING: return (kindRow){"damping", 1};
    case PHYS_PAR_ARMATURE: return (kindRow){"armature", 1};
    case PHYS_PAR_STIFFNESS: return (kindRow){"stiffness", 1};
    case PHYS_PAR_GRAVITY: return (kindRow){"gravity", 3};
    case PHYS_PAR_GEAR: return (kindRow){"gear", 1};              // 3 on a ball joint, 6 on a free joint
    case PHYS_PAR_SPRING_STIFFNESS: return (kindRow){"stiffness", 1};
    case PHYS_PAR_SPRING_DAMPING: return (kindRow){"damping", 1};
    case PHYS_PAR_SPRING_RESTLENGTH: return (kindRow){"restlength", 1};
    case PHYS_PAR_FRICTION: return (kindRow){"friction", 1};
    case PHYS_PAR_RESTITUTION: return (kindRow){"restitution", 1};
    case PHYS_PAR_SIZE: return (kindRow){"size", 0};              // phys_geom_nsize of the geom's type
    case PHYS_PAR_POS: return (kindRow){"pos", 3};
    case PHYS_PAR_PENALTY_STIFFNESS: return (kindRow){"penalty", 1};
    case PHYS_PAR_PENALTY_DAMPING: return (kindRow){"penalty", 1};
    case PHYS_PAR_FRICTIONLOSS: return (kindRow){"frictionloss", 1};
    case PHYS_PAR_GAIN: return (kindRow){"gain", 1};
    case PHYS_PAR_BIAS: return (kindRow){"bias", 1};
    case PHYS_PAR_KP: return (kindRow){"kp", 1};
    case PHYS_PAR_KV: return (kindRow){"kv", 1};
    case PHYS_PAR_INPUT_DELAY: return (kindRow){"delay", 1};
    case PHYS_PAR_INPUT_GAIN: return (kindRow){"inputgain", 1};
    case PHYS_PAR_INPUT_BIAS: return (kindRow){"inputbias", 1};
    case PHYS_PAR_VERTICES: return (kindRow){"vertices", 0};      // 3 mesh_vertnum of the geom's mesh
    case PHYS_PAR_INERTIA9: return (kindRow){"inertia9", 9};
    case PHYS_PAR_TIMECONST: return (kindRow){"timeconst", 1};
    case PHYS_PAR_HEIGHT: return (kindRow){"height", 1};
    case PHYS_PAR_POLYCOEF: return (kindRow){"polycoef", 5};
    case PHYS_PAR_SOLREF: return (kindRow){"solref", 2};
    case PHYS_PAR_TORSION: return (kindRow){"torsion", 1};
    case PHYS_PAR_ROLLING: return (kindRow){"rolling", 1};
    case PHYS_PAR_MUSCLE_FORCE: return (kindRow){"force", 1};
    case PHYS_NPARKIND: break;
  }
  return (kindRow){"", 0};   // out of range: matches no spec
}

// object kind (phys_name2id) that a parameter kind names
static const char* kind_object(int kind) {
  switch (kind) {
    case PHYS_PAR_MASS:
    case PHYS_PAR_COM:
    case PHYS_PAR_INERTIA:
    case PHYS_PAR_INERTIA9: return "body";
    case PHYS_PAR_DAMPING:
    case PHYS_PAR_ARMATURE:
    case PHYS_PAR_STIFFNESS:
    case PHYS_PAR_FRICTIONLOSS: return "joint";
    case PHYS_PAR_GEAR:
    case PHYS_PAR_GAIN:
    case PHYS_PAR_BIAS:
    case PHYS_PAR_KP:
    case PHYS_PAR_KV:
    case PHYS_PAR_TIMECONST:
    case PHYS_PAR_MUSCLE_FORCE:
    case PHYS_PAR_INPUT_DELAY:   // input channels named by actuator (the others: parse_channel)
    case PHYS_PAR_INPUT_GAIN:
    case PHYS_PAR_INPUT_BIAS: return "actuator";
    case PHYS_PAR_SPRING_STIFFNESS:
    case PHYS_PAR_SPRING_DAMPING:
    case PHYS_PAR_SPRING_RESTLENGTH: return "spring";
    case PHYS_PAR_FRICTION:
    case PHYS_PAR_TORSION:
    case PHYS_PAR_ROLLING:
    case PHYS_PAR_RESTITUTION:
    case PHYS_PAR_SIZE:
    case PHYS_PAR_VERTICES:
    case PHYS_PAR_HEIGHT: return "geom";
    case PHYS_PAR_POS: return "body";
    case PHYS_PAR_POLYCOEF:
    case PHYS_PAR_SOLREF: return "equality";
    default: return NULL;
  }
}

// number of objects of a phys_name2id kind
static int object_count(const physModel* m, const char* obj) {
  if (!strcmp(obj, "body")) return m->nbody;
  if (!strcmp(obj, "joint")) return m->njnt;
  if (!strcmp(obj, "actuator")) return m->nu;
  if (!strcmp(obj, "spring")) return m->nspring;
  if (!strcmp(obj, "equality")) return m->neq;
  return m->ngeom;
}

// size of an entry: gear has as many entries as its joint has dofs (1 for springs, 6 for sites); size as many as the
// geom type has differentiable sizes (phys_geom_nsize)
static int param_size(const physModel* m, int kind, int id) {
  if (kind == PHYS_PAR_GEAR && m->actuator_trntype[id] == PHYS_TRN_JOINT) {
    int type = m->jnt_type[m->actuator_trnid[id]];
    return type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
  }
  if (kind == PHYS_PAR_GEAR && m->actuator_trntype[id] == PHYS_TRN_SITE) return 6;
  if (kind == PHYS_PAR_TIMECONST && m->actuator_dyntype[id] == PHYS_DYN_MUSCLE) return 2;
  if (kind == PHYS_PAR_SIZE) return phys_geom_nsize(m->geom_type[id]);
  if (kind == PHYS_PAR_VERTICES)
    return m->geom_type[id] == PHYS_GEOM_MESH && m->geom_dataid[id] >= 0 ? 3 * m->mesh_vertnum[m->geom_dataid[id]] : 0;
  return kind_row(kind).size;
}

// name of a geom type for messages
static const char* geom_type_name(int type) {
  static const char* const name[] = {[PHYS_GEOM_PLANE] = "plane",         [PHYS_GEOM_SPHERE] = "sphere",
                                     [PHYS_GEOM_CAPSULE] = "capsule",     [PHYS_GEOM_ELLIPSOID] = "ellipsoid",
                                     [PHYS_GEOM_CYLINDER] = "cylinder",   [PHYS_GEOM_BOX] = "box",
                                     [PHYS_GEOM_MESH] = "mesh"};
  _Static_assert(sizeof name / sizeof name[0] == PHYS_NGEOMTYPE, "geom_type_name: one name per physGeomType");
  return type >= 0 && type < PHYS_NGEOMTYPE ? name[type] : "unknown";
}

// the actuator kinds' checks: not on a rest-length actuator; kp (kv) only on a position (velocity) servo
static physStatus check_actuator_entry(const physModel* m, const physParam* p, physLog* log) {
  int a = p->id;
  const char* name = phys_id2name(m, "actuator", a);
  if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': actuator '%s' sets a rest length (physid:restlength); "
                      "its gain is its gear (gear:%s)", p->name, name, name);
  if (p->kind != PHYS_PAR_KP && p->kind != PHYS_PAR_KV) return PHYS_OK;
  const double *g = m->actuator_gainprm + 3 * a, *b = m->actuator_biasprm + 3 * a;
  int k = p->kind == PHYS_PAR_KP ? 1 : 2;
  if (g[0] == 0 || b[k] != -g[0])
    return phys_error(log, PHYS_ERR_ARG, "param '%s': actuator '%s' is not a %s servo (gainprm[0] %g, biasprm[%d] "
                      "%g; kp needs biasprm[1] = -gainprm[0], kv biasprm[2] = -gainprm[0]); fit gain:%s and bias:%s",
                      p->name, name, k == 1 ? "position" : "velocity", g[0], k, b[k], name, name);
  return PHYS_OK;
}

// 1 if moving body b moves (its subtree holds) a site or geom of a spatial tendon that wraps a geom: the
// tangent points' sliding (tendon_deriv.h) is not in param_forces.c's pos:BODY columns
static int moves_wrapped_tendon(const physModel* m, int b) {
  for (int s = 0; s < m->nspring; s++) {
    if (!phys_tendon_wraps(m, s)) continue;
    for (int k = m->spring_adr[s]; k < m->spring_adr[s] + m->spring_num[s]; k++) {
      int t = m->spring_objtype[k], id = m->spring_site[k];
      if (t == PHYS_WRAP_PULLEY) continue;
      for (int c = t == PHYS_WRAP_SITE ? m->site_bodyid[id] : m->geom_bodyid[id]; c > 0; c = m->body_parentid[c])
        if (c == b) return 1;
    }
  }
  return 0;
}

// force:ACTUATOR: a muscle gain (not on a slider-crank: its length is not a muscle's) whose muscle bias, if any, has
// the same peak force (both are set)
static physStatus check_muscle_entry(const physModel* m, const physParam* p, physLog* log) {
  int a = p->id;
  const char* name = phys_id2name(m, "actuator", a);
  const double* prm = m->actuator_muscleprm + 18 * a;
  if (m->actuator_gaintype[a] != PHYS_GAIN_MUSCLE || m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': actuator '%s' has no muscle gain (or drives a slider-crank); "
                      "force is a muscle's peak force", p->name, name);
  if (m->actuator_biastype[a] == PHYS_GAIN_MUSCLE && (prm[2] != prm[11] || (prm[2] < 0 && prm[3] != prm[12])))
    return phys_error(log, PHYS_ERR_ARG, "param '%s': actuator '%s' has different peak forces in its muscle gain "
                      "and bias; force sets both", p->name, name);
  return PHYS_OK;
}

// the checks a resolved pos:BODY, size:GEOM or actuator entry needs beyond its name; PHYS_ERR_ARG with a
// message
static physStatus check_entry(const physModel* m, const physParam* p, physLog* log) {
  if (p->kind == PHYS_PAR_TIMECONST && m->actuator_dyntype[p->id] != PHYS_DYN_FILTER &&
      m->actuator_dyntype[p->id] != PHYS_DYN_MUSCLE)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': actuator '%s' has no filter or muscle dynamics; timeconst is a "
                      "filter's time constant dynprm[0] or a muscle's two", p->name, phys_id2name(m, "actuator", p->id));
  if (p->kind == PHYS_PAR_MUSCLE_FORCE) return check_muscle_entry(m, p, log);
  int gainlike = p->kind == PHYS_PAR_GEAR || p->kind == PHYS_PAR_GAIN || p->kind == PHYS_PAR_BIAS ||
                 p->kind == PHYS_PAR_KP || p->kind == PHYS_PAR_KV;
  if (gainlike && m->actuator_trntype[p->id] == PHYS_TRN_BODY)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': actuator '%s' is an adhesion actuator, which has no "
                      "derivatives yet", p->name, phys_id2name(m, "actuator", p->id));
  if (gainlike && phys_actuator_muscle(m, p->id))
    return phys_error(log, PHYS_ERR_ARG, "param '%s': actuator '%s' is a muscle, whose gear, gain and bias are not "
                      "parameters (a muscle's are force:%s and timeconst:%s)", p->name,
                      phys_id2name(m, "actuator", p->id), phys_id2name(m, "actuator", p->id),
                      phys_id2name(m, "actuator", p->id));
  if (p->kind == PHYS_PAR_GAIN || p->kind == PHYS_PAR_BIAS || p->kind == PHYS_PAR_KP || p->kind == PHYS_PAR_KV)
    return check_actuator_entry(m, p, log);
  if (p->kind == PHYS_PAR_SIZE && p->size == 0)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': geom '%s' is a %s; sizes can be parameters of sphere (1), "
                      "capsule (2) and box (3) geoms", p->name, phys_id2name(m, "geom", p->id),
                      geom_type_name(m->geom_type[p->id]));
  if (p->kind == PHYS_PAR_VERTICES) {
    int g = p->id, mid = m->geom_type[g] == PHYS_GEOM_MESH ? m->geom_dataid[g] : -1;
    if (mid < 0 || m->mesh_hullcap[mid] <= 0)
      return phys_error(log, PHYS_ERR_ARG, "param '%s': geom '%s' (a %s) was not loaded with a learned shape: load "
                        "it with physLoadOptions.vertex_geoms (physid identify does for its vertices:GEOM parameters; a "
                        "box becomes its 8 corners)", p->name, phys_id2name(m, "geom", g), geom_type_name(m->geom_type[g]));
    return PHYS_OK;
  }
  if (p->kind == PHYS_PAR_POLYCOEF && m->eq_type[p->id] != PHYS_EQ_JOINT && m->eq_type[p->id] != PHYS_EQ_TENDON)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': equality '%s' is a %s; polycoef belongs to joint and tendon "
                      "couplings", p->name, phys_id2name(m, "equality", p->id),
                      m->eq_type[p->id] == PHYS_EQ_CONNECT ? "connect" : "weld");
  if (p->kind == PHYS_PAR_HEIGHT && m->geom_type[p->id] != PHYS_GEOM_PLANE)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': geom '%s' is a %s; height is the offset of a plane along its "
                      "normal", p->name, phys_id2name(m, "geom", p->id), geom_type_name(m->geom_type[p->id]));
  if (p->kind != PHYS_PAR_POS) return PHYS_OK;
  int b = p->id;
  if (m->body_jntnum[b] > 0 && m->jnt_type[m->body_jntadr[b]] == PHYS_JNT_FREE)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': body '%s' has a free joint, so its placement is part of "
                      "the state (qpos), not a parameter", p->name, phys_id2name(m, "body", b));
  if (moves_wrapped_tendon(m, b))
    return phys_error(log, PHYS_ERR_ARG, "param '%s': body '%s' moves a site or geom of a tendon that wraps a geom, "
                      "whose derivatives with respect to placements are not supported yet", p->name,
                      phys_id2name(m, "body", b));
  if (phys_equality_moved_by_body(m, b))   // issue 15 item 1 (equality_deriv.h)
    return phys_error(log, PHYS_ERR_ARG, "param '%s': body '%s' moves a connect or weld equality constraint, whose "
                      "derivatives with respect to placements are not supported yet", p->name,
                      phys_id2name(m, "body", b));
  return PHYS_OK;
}

// penalty:stiffness or penalty:damping (model-wide, id -1)
static physStatus parse_penalty(physParam* p, const char* spec, const char* name, physLog* log) {
  p->size = 1;
  if (!strcmp(name, "stiffness")) p->kind = PHYS_PAR_PENALTY_STIFFNESS;
  else if (!strcmp(name, "damping")) p->kind = PHYS_PAR_PENALTY_DAMPING;
  else
    return phys_error(log, PHYS_ERR_ARG, "param '%s': unknown penalty parameter '%s' (valid: penalty:stiffness, "
                      "penalty:damping)", spec, name);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// building the table

// append "a, b, c" (the named objects of kind obj) to buf (cap bytes, truncated with "...")
static void list_names(char* buf, size_t cap, const physModel* m, const char* obj) {
  size_t len = strlen(buf);
  int n = object_count(m, obj), first = 1;
  for (int i = 0; i < n; i++) {
    const char* nm = phys_id2name(m, obj, i);
    if (!nm || !nm[0] || (i == 0 && !strcmp(obj, "body"))) continue;   // the world is never a parameter
    size_t need = strlen(nm) + 2;
    if (len + need + 4 >= cap) {
      snprintf(buf + len, cap - len, "...");
      return;
    }
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", first ? "" : ", ", nm);
    first = 0;
  }
  if (first) snprintf(buf + len, cap - len, "(none named)");
}

// 1 if name has a shell pattern character (a tied spec)
static int is_pattern(const char* name) { return strpbrk(name, "*?[") != NULL; }

// 1 if kind k may take a pattern: kinds whose derivative is a force column (param_deriv.c accumulates the
// entries of one theta column); the contact kinds' columns are written per entry, so they stay single
static int tieable(int k) {
  return k != PHYS_PAR_FRICTION && k != PHYS_PAR_TORSION && k != PHYS_PAR_ROLLING && k != PHYS_PAR_RESTITUTION &&
         k != PHYS_PAR_SIZE && k != PHYS_PAR_POS &&
         k != PHYS_PAR_VERTICES && k != PHYS_PAR_HEIGHT;
}

// 1 if object i of kind obj matches name (a pattern or an exact name); the world body never matches
static int name_matches(const physModel* m, const char* obj, int i, const char* name, int pattern) {
  const char* nm = phys_id2name(m, obj, i);
  if (!nm || !nm[0] || (i == 0 && !strcmp(obj, "body"))) return 0;
  return pattern ? fnmatch(name, nm, 0) == 0 : !strcmp(nm, name);
}

// number of objects of kind obj whose name matches a pattern
static int count_matches(const physModel* m, const char* obj, const char* name) {
  int n = 0;
  for (int i = 0; i < object_count(m, obj); i++) n += name_matches(m, obj, i, name, 1);
  return n;
}

// the kind k of a spec's prefix, or -1; damping and stiffness name a joint, else a spring (a pattern: the
// joints if any matches, else the springs)
static int spec_kind(const physModel* m, const char* kind, const char* name) {
  int k = -1;
  for (int i = 0; i < PHYS_NPARKIND; i++)
    if (i != PHYS_PAR_GRAVITY && !strcmp(kind, kind_row(i).prefix)) {
      k = i;
      break;
    }
  if (k != PHYS_PAR_DAMPING && k != PHYS_PAR_STIFFNESS) return k;
  int joint = is_pattern(name) ? count_matches(m, "joint", name) > 0 : phys_name2id(m, "joint", name) >= 0;
  int spring = is_pattern(name) ? count_matches(m, "spring", name) > 0 : phys_name2id(m, "spring", name) >= 0;
  if (!joint && spring) k = k == PHYS_PAR_DAMPING ? PHYS_PAR_SPRING_DAMPING : PHYS_PAR_SPRING_STIFFNESS;
  return k;
}

// the unknown-name error of spec (no object of kind k named, or matching, name), listing the valid names
static physStatus unknown_name(const physModel* m, int k, const char* spec, const char* name, physLog* log) {
  const char* obj = kind_object(k);
  char valid[PHYS_MSGLEN / 2] = "";
  list_names(valid, sizeof(valid), m, obj);
  int both = k == PHYS_PAR_DAMPING || k == PHYS_PAR_STIFFNESS;
  if (both) {
    size_t len = strlen(valid);
    snprintf(valid + len, sizeof(valid) - len, "; springs: ");
    list_names(valid, sizeof(valid), m, "spring");
  }
  return phys_error(log, PHYS_ERR_ARG, "param '%s': no %s%s %s '%s' (valid: %s)", spec, obj,
                    both ? " or spring" : "", is_pattern(name) ? "matches" : "named", name, valid);
}

int phys_param_is_inertial(int kind) {
  return kind == PHYS_PAR_MASS || kind == PHYS_PAR_COM || kind == PHYS_PAR_INERTIA || kind == PHYS_PAR_INERTIA9;
}

int phys_param_is_input(int kind) {
  return kind == PHYS_PAR_INPUT_DELAY || kind == PHYS_PAR_INPUT_GAIN || kind == PHYS_PAR_INPUT_BIAS;
}

// "name" of an input channel id (actuator a < nu; nu + dof: applied force) for messages
static const char* channel_name(const physModel* m, int id, char* buf, size_t cap) {
  if (id < m->nu) snprintf(buf, cap, "ctrl:%s", phys_id2name(m, "actuator", id));
  else snprintf(buf, cap, "tau%d", id - m->nu);
  return buf;
}

// 1 and *i if name is prefix followed by a decimal index only
static int indexed(const char* name, const char* prefix, int* i) {
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n) || !name[n] || strspn(name + n, "0123456789") != strlen(name + n) ||
      strlen(name + n) > 6)
    return 0;
  *i = atoi(name + n);
  return 1;
}

// an input kind's channel that is not an actuator name: uI (control column I), tauI (applied force of dof I),
// qfrc:JOINT (every dof of the joint, tied): *first, *count = channel ids (nu + dof for forces); 0 if name is
// none of these (then "ctrl:NAME" or NAME names actuators); PHYS_ERR_ARG for an index or joint out of range
static physStatus parse_channel(const physModel* m, const char* spec, const char* name, int* first, int* count,
                                physLog* log) {
  int i;
  *count = 0;
  if (indexed(name, "u", &i)) {
    if (i >= m->nu)
      return phys_error(log, PHYS_ERR_ARG, "param '%s': control column u%d out of range (the model has %d "
                        "actuators: u0..u%d)", spec, i, m->nu, m->nu - 1);
    *first = i, *count = 1;
  } else if (indexed(name, "tau", &i)) {
    if (i >= m->nv)
      return phys_error(log, PHYS_ERR_ARG, "param '%s': force column tau%d out of range (the model has %d dofs: "
                        "tau0..tau%d)", spec, i, m->nv, m->nv - 1);
    *first = m->nu + i, *count = 1;
  } else if (!strncmp(name, "qfrc:", 5)) {
    int j = phys_name2id(m, "joint", name + 5);
    if (j < 0) return unknown_name(m, PHYS_PAR_DAMPING, spec, name + 5, log);
    int type = m->jnt_type[j];
    *first = m->nu + m->jnt_dofadr[j];
    *count = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
  }
  return PHYS_OK;
}

// split spec into kind (cap bytes) and name; PHYS_ERR_ARG if too long
static physStatus split_kind(char* kind, size_t cap, const char** name, const char* spec, physLog* log) {
  const char* colon = strchr(spec, ':');
  size_t kl = colon ? (size_t)(colon - spec) : strlen(spec);
  *name = colon ? colon + 1 : "";
  if (kl >= cap || strlen(spec) >= sizeof(((physParam*)0)->name))
    return phys_error(log, PHYS_ERR_ARG, "param '%.100s': name too long", spec);
  memcpy(kind, spec, kl);
  kind[kl] = 0;
  return PHYS_OK;
}

// append n entries of input kind k on channels first .. first + n - 1 (tied after the first) to *out
static physStatus add_channels(physParam** out, int* count, int n, int first, int k, const physParam* one,
                               const char* spec, physLog* log) {
  physParam* grown = realloc(*out, sizeof(physParam) * (size_t)(*count + n));
  if (!grown) return phys_error(log, PHYS_ERR_NOMEM, "param table: out of memory (%s)", spec);
  *out = grown;
  for (int e = 0; e < n; e++) {
    physParam* p = grown + (*count)++;
    *p = *one;
    p->kind = k, p->id = first + e, p->size = 1, p->tied = e > 0;
  }
  return PHYS_OK;
}

// resolve one spec into *out (count entries, reallocated; kind, id, size, name of each); PHYS_ERR_ARG with
// a message listing valid choices
static physStatus parse_spec(physParam** out, int* count, const physModel* m, const char* spec, physLog* log) {
  char kind[32] = "";
  const char* name;
  physStatus st = split_kind(kind, sizeof(kind), &name, spec, log);
  if (st != PHYS_OK) return st;
  physParam one = {.id = -1};
  snprintf(one.name, sizeof(one.name), "%s", spec);
  int k = -1, n = 1;
  if (!strcmp(kind, "gravity")) {
    if (name[0] && strcmp(name, "world"))
      return phys_error(log, PHYS_ERR_ARG, "param '%s': gravity takes no name (use 'gravity')", spec);
    one.kind = PHYS_PAR_GRAVITY;
    one.size = 3;
  } else if (!strcmp(kind, "penalty")) {
    st = parse_penalty(&one, spec, name, log);
    if (st != PHYS_OK) return st;
  } else {
    k = spec_kind(m, kind, name);
    if (k < 0)
      return phys_error(log, PHYS_ERR_ARG,
                        "param '%s': unknown kind '%s' (valid: mass, com, inertia, damping, armature, stiffness, "
                        "frictionloss, restlength, gravity, gear, gain, bias, kp, kv, friction, torsion, rolling, restitution, size, pos, "
                        "penalty, delay, inputgain, inputbias, vertices, inertia9, timeconst, height, polycoef, solref)", spec,
                        kind);
    if (!kind_object(k)) return phys_error(log, PHYS_ERR_ARG, "param '%s': kind '%s' is not supported yet", spec, kind);
    if (phys_param_is_input(k)) {
      int first, nch;
      if ((st = parse_channel(m, spec, name, &first, &nch, log)) != PHYS_OK) return st;
      if (nch) return add_channels(out, count, nch, first, k, &one, spec, log);
      if (!strncmp(name, "ctrl:", 5)) name += 5;
    }
    if (is_pattern(name) && !tieable(k))
      return phys_error(log, PHYS_ERR_ARG, "param '%s': %s takes one name, not a pattern (patterns: mass, com, "
                        "inertia, damping, armature, stiffness, frictionloss, restlength, gear, gain, bias, kp, kv)",
                        spec, kind);
    n = is_pattern(name) ? count_matches(m, kind_object(k), name) : name[0] != 0;
    if (n == 0 || (!is_pattern(name) && phys_name2id(m, kind_object(k), name) < 0) ||
        (!is_pattern(name) && (phys_param_is_inertial(k) || k == PHYS_PAR_POS) && phys_name2id(m, "body", name) == 0))
      return unknown_name(m, k, spec, name, log);
  }
  physParam* grown = realloc(*out, sizeof(physParam) * (size_t)(*count + n));
  if (!grown) return phys_error(log, PHYS_ERR_NOMEM, "param table: out of memory");
  *out = grown;
  if (k < 0) {
    grown[(*count)++] = one;
    return PHYS_OK;
  }
  const char* obj = kind_object(k);
  for (int i = 0, e = 0; i < object_count(m, obj) && e < n; i++) {
    if (!name_matches(m, obj, i, name, is_pattern(name))) continue;
    physParam* p = grown + *count;
    *p = one;
    p->kind = k;
    p->id = i;
    p->size = param_size(m, k, i);
    p->tied = e > 0;
    (*count)++;
    e++;
    if ((st = check_entry(m, p, log)) != PHYS_OK) return st;
    if (p->tied && p->size != grown[*count - 2].size)
      return phys_error(log, PHYS_ERR_ARG, "param '%s': matches %ss of different sizes ('%s' %d, '%s' %d); a "
                        "tied parameter needs one size", spec, obj, phys_id2name(m, obj, grown[*count - 2].id),
                        grown[*count - 2].size, phys_id2name(m, obj, i), p->size);
  }
  return PHYS_OK;
}

// 1 if kind k sets an actuator's gainprm[0] (gain, kp, kv)
static int sets_gain(int k) { return k == PHYS_PAR_GAIN || k == PHYS_PAR_KP || k == PHYS_PAR_KV; }

// two entries conflict if equal, if both set one actuator's gainprm[0], or if one is inertia and the other
// mass/com of the same body
static int conflict(const physParam* a, const physParam* b) {
  if (a->kind == b->kind && a->id == b->id) return 1;
  if (sets_gain(a->kind) && sets_gain(b->kind) && a->id == b->id) return 1;
  int ia = phys_param_is_inertial(a->kind), ib = phys_param_is_inertial(b->kind);
  int full = a->kind == PHYS_PAR_INERTIA || b->kind == PHYS_PAR_INERTIA || a->kind == PHYS_PAR_INERTIA9 ||
             b->kind == PHYS_PAR_INERTIA9;
  return ia && ib && a->id == b->id && full;
}

// t->input for a table with input kinds: delay 0, gain 1, bias 0 at their adr
static physStatus input_values(physParamTable* t, physLog* log) {
  int any = 0;
  for (int e = 0; e < t->n; e++) any |= phys_param_is_input(t->param[e].kind);
  if (!any) return PHYS_OK;
  t->input = calloc((size_t)t->ntheta, sizeof(double));
  if (!t->input) return phys_error(log, PHYS_ERR_NOMEM, "param table: out of memory");
  for (int e = 0; e < t->n; e++)
    if (t->param[e].kind == PHYS_PAR_INPUT_GAIN) t->input[t->param[e].adr] = 1;
  return PHYS_OK;
}

physStatus phys_param_table_build(physParamTable* t, const physModel* m, const char* const* spec, int nspec,
                                  physLog* log) {
  memset(t, 0, sizeof(*t));
  for (int i = 0; i < nspec; i++) {
    int first = t->n;
    physStatus st = parse_spec(&t->param, &t->n, m, spec[i], log);
    if (st != PHYS_OK) return st;
    for (int e = first; e < t->n; e++) {
      physParam* p = t->param + e;
      for (int j = 0; j < e; j++)
        if (conflict(p, t->param + j)) {
          const char* obj = kind_object(p->kind);
          char ch[200];
          if (phys_param_is_input(p->kind))
            return phys_error(log, PHYS_ERR_ARG, "param '%s': overlaps '%s' (both set the %s of input channel %s)",
                              p->name, t->param[j].name, kind_row(p->kind).prefix,
                              channel_name(m, p->id, ch, sizeof ch));
          if (obj && (p->kind == t->param[j].kind || sets_gain(p->kind)))
            return phys_error(log, PHYS_ERR_ARG, "param '%s': overlaps '%s' (both set %s '%s'%s)", p->name,
                              t->param[j].name, obj, phys_id2name(m, obj, p->id),
                              p->kind == t->param[j].kind ? "" : ": gain, kp and kv are its gainprm[0]");
          return phys_error(log, PHYS_ERR_ARG, "param '%s': overlaps '%s' (a body takes inertia, inertia9 or mass/com)",
                            p->name, t->param[j].name);
        }
      p->spec = i;
      p->adr = t->ntheta;
    }
    t->ntheta += t->param[first].size;
  }
  return input_values(t, log);
}

const physParam* phys_param_spec_entry(const physParamTable* t, int i) {
  for (int e = 0; e < t->n; e++)
    if (t->param[e].spec == i && !t->param[e].tied) return t->param + e;
  return NULL;
}

void phys_param_table_free(physParamTable* t) {
  free(t->param);
  free(t->input);
  memset(t, 0, sizeof(*t));
}

//---------------------------------------------------------------------------------------------------------
// log-Cholesky map

// packed symmetric (xx yy zz xy xz yz) index of (r, c)
static int sym_index(int r, int c) {
  static const int idx[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
  return idx[3 * r + c];
}

// U (4x4 row-major, upper triangular) from theta
static void logchol_u(double U[16], const double th[10]) {
  double e = exp(th[0]);
  memset(U, 0, 16 * sizeof(double));
  for (int i = 0; i < 3; i++) U[5 * i] = e * exp(th[1 + i]);
  U[1] = e * th[4];   // s12
  U[6] = e * th[5];   // s23
  U[2] = e * th[6];   // s13
  for (int i = 0; i < 3; i++) U[4 * i + 3] = e * th[7 + i];
  U[15] = e;
}

// pi from the pseudo-inertia J (4x4): m = J44, m c = J[0:3, 3], Ibar = tr(S) E - S (linear in J)
static void pseudo_to_pi(double pi[10], const double J[16]) {
  double tr = J[0] + J[5] + J[10];
  pi[0] = J[15];
  for (int i = 0; i < 3; i++) pi[1 + i] = J[4 * i + 3];
  for (int r = 0; r < 3; r++)
    for (int c = r; c < 3; c++) pi[4 + sym_index(r, c)] = (r == c ? tr : 0) - J[4 * r + c];
}

// J = U A' + A U' (4x4); with A = U it is 2 U U', so callers scale
static void sym_product(double J[16], const double U[16], const double A[16]) {
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++) {
      double s = 0;
      for (int k = 0; k < 4; k++) s += U[4 * r + k] * A[4 * c + k] + A[4 * r + k] * U[4 * c + k];
      J[4 * r + c] = s;
    }
}

// pi(theta) = pseudo_to_pi(U U'); dpi/dtheta_k = pseudo_to_pi(dU_k U' + U dU_k')
void phys_logchol_to_pi(double pi[10], double dpi[100], const double theta[10]) {
  double U[16], J[16];
  logchol_u(U, theta);
  sym_product(J, U, U);
  for (int i = 0; i < 16; i++) J[i] *= 0.5;
  pseudo_to_pi(pi, J);
  if (!dpi) return;
  double e = exp(theta[0]);
  for (int k = 0; k < 10; k++) {
    double dU[16] = {0}, col[10];
    if (k == 0) {
      memcpy(dU, U, sizeof(dU));                       // dU/dalpha = U
    } else if (k <= 3) {
      dU[5 * (k - 1)] = U[5 * (k - 1)];                // dU_ii/dd_i = U_ii
    } else if (k <= 6) {
      static const int at[3] = {1, 6, 2};              // s12, s23, s13
      dU[at[k - 4]] = e;
    } else {
      dU[4 * (k - 7) + 3] = e;                         // t_i
    }
    sym_product(J, U, dU);
    pseudo_to_pi(col, J);
    for (int i = 0; i < 10; i++) dpi[10 * i + k] = col[i];
  }
}

// upper factor U of J = U U' from the bottom-right corner; 0 if J is not positive definite
static int upper_cholesky(double U[16], const double J[16]) {
  memset(U, 0, 16 * sizeof(double));
  for (int k = 3; k >= 0; k--) {
    double s = J[5 * k];
    for (int j = k + 1; j < 4; j++) s -= U[4 * k + j] * U[4 * k + j];
    if (!(s > 0)) return 0;
    U[5 * k] = sqrt(s);
    for (int i = 0; i < k; i++) {
      double a = J[4 * i + k];
      for (int j = k + 1; j < 4; j++) a -= U[4 * i + j] * U[4 * k + j];
      U[4 * i + k] = a / U[5 * k];
    }
  }
  return 1;
}

// J from pi: S = tr(Ibar)/2 E - Ibar, h = m c, J44 = m; then theta from its upper factor
int phys_pi_to_logchol(double theta[10], const double pi[10]) {
  double J[16], U[16];
  double tr = pi[4] + pi[5] + pi[6];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) J[4 * r + c] = (r == c ? 0.5 * tr : 0) - pi[4 + sym_index(r, c)];
  for (int i = 0; i < 3; i++) J[4 * i + 3] = J[12 + i] = pi[1 + i];
  J[15] = pi[0];
  if (!upper_cholesky(U, J)) return 0;
  double e = U[15];
  theta[0] = log(e);
  for (int i = 0; i < 3; i++) theta[1 + i] = log(U[5 * i] / e);
  theta[4] = U[1] / e;
  theta[5] = U[6] / e;
  theta[6] = U[2] / e;
  for (int i = 0; i < 3; i++) theta[7 + i] = U[4 * i + 3] / e;
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// inertial entries

// dpi/dtheta of mass (pi linear in m at fixed c, Ic: dpi/dm = pi(1, c, 0)), com (dpi/dc_i = (0, m e_i,
// m dS/dc_i), S(c) = |c|^2 E - c c', dS_rs/dc_i = 2 c_i d_rs - d_ri c_s - c_r d_si) and inertia (log-Cholesky)
void phys_param_dpi(const physModel* m, const physParam* p, double* dpi) {
  int b = p->id;
  const double* c = m->body_ipos + 3 * b;
  double mass = m->body_mass[b];
  if (p->kind == PHYS_PAR_MASS) {
    const double zero[6] = {0};
    phys_inert_from_com(dpi, 1, c, zero);
  } else if (p->kind == PHYS_PAR_COM) {
    memset(dpi, 0, 30 * sizeof(double));
    for (int i = 0; i < 3; i++) {
      dpi[3 * (1 + i) + i] = mass;
      for (int r = 0; r < 3; r++)
        for (int s = r; s < 3; s++) {
          double v = 2 * c[i] * (r == s) - (r == i) * c[s] - c[r] * (s == i);
          dpi[3 * (4 + sym_index(r, s)) + i] = mass * v;
        }
    }
  } else {
    double pi[10], th[10], full[100];
    phys_inertial_params(m, b, pi);
    if (!phys_pi_to_logchol(th, pi)) {
      memset(dpi, 0, 10 * (size_t)p->size * sizeof(double));
      return;
    }
    phys_logchol_to_pi(pi, full, th);
    int skip = 10 - p->size;   // inertia9: alpha's column 0 is not a parameter
    for (int r = 0; r < 10; r++)
      for (int k = skip; k < 10; k++) dpi[r * p->size + k - skip] = full[10 * r + k];
  }
}

// write pi into body b: m, c = h / m, Ic = Ibar - m S(c) diagonalized (eigenvalues descending, as compile)
static physStatus set_pi(physModel* m, int b, const double pi[10]) {
  double mass = pi[0];
  if (!(mass > 0)) return PHYS_ERR_VALUE;
  double c[3] = {pi[1] / mass, pi[2] / mass, pi[3] / mass}, Ic[9], zero[6] = {0}, S[10];
  phys_inert_from_com(S, mass, c, zero);
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++) Ic[3 * r + s] = pi[4 + sym_index(r, s)] - S[4 + sym_index(r, s)];
  double ev[3], q[4];
  phys_eig3(ev, q, Ic);
  m->body_mass[b] = mass;
  phys_copy3(m->body_ipos + 3 * b, c);
  phys_copy3(m->body_inertia + 3 * b, ev);
  memcpy(m->body_iquat + 4 * b, q, sizeof(q));
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// get / set

// dofs [*da, *da + *nd) of joint j
static void joint_dofs(const physModel* m, int j, int* da, int* nd) {
  int type = m->jnt_type[j];
  *da = m->jnt_dofadr[j];
  *nd = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
}

// height:GEOM (issue 14, s29): plane g's offset n . geom_pos along its normal n in the body frame (geom_quat's z
// axis), and n (may be NULL)
static double plane_height(const physModel* m, int g, double n_out[3]) {
  double R[9], n[3];
  phys_quat2mat(R, m->geom_quat + 4 * g);
  for (int i = 0; i < 3; i++) n[i] = R[3 * i + 2];
  if (n_out) phys_copy3(n_out, n);
  return phys_dot3(n, m->geom_pos + 3 * g);
}

void phys_param_get(const physParamTable* t, const physModel* m, double* theta) {
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (p->tied) continue;   // a tied spec starts from its first match's value
    double* th = theta + p->adr;
    int id = p->id, da, nd;
    switch (p->kind) {
      case PHYS_PAR_MASS: th[0] = m->body_mass[id]; break;
      case PHYS_PAR_COM: phys_copy3(th, m->body_ipos + 3 * id); break;
      case PHYS_PAR_INERTIA:
      case PHYS_PAR_INERTIA9: {
        double pi[10], full[10];
        phys_inertial_params(m, id, pi);
        if (!phys_pi_to_logchol(full, pi))
          for (int i = 0; i < 10; i++) full[i] = NAN;   // an inconsistent body has no log-Cholesky point
        memcpy(th, full + 10 - p->size, sizeof(double) * (size_t)p->size);
        break;
      }
      case PHYS_PAR_VERTICES:
        memcpy(th, m->mesh_vert + 3 * (size_t)m->mesh_vertadr[m->geom_dataid[id]], sizeof(double) * (size_t)p->size);
        break;
      case PHYS_PAR_DAMPING: joint_dofs(m, id, &da, &nd); th[0] = m->dof_damping[da]; break;
      case PHYS_PAR_ARMATURE: joint_dofs(m, id, &da, &nd); th[0] = m->dof_armature[da]; break;
      case PHYS_PAR_STIFFNESS: th[0] = m->jnt_stiffness[id]; break;
      case PHYS_PAR_GRAVITY: phys_copy3(th, m->opt.gravity); break;
      case PHYS_PAR_GEAR: memcpy(th, m->actuator_gear + 6 * id, sizeof(double) * (size_t)p->size); break;
      case PHYS_PAR_SPRING_STIFFNESS: th[0] = m->spring_stiffness[id]; break;
      case PHYS_PAR_SPRING_DAMPING: th[0] = m->spring_damping[id]; break;
      case PHYS_PAR_SPRING_RESTLENGTH: th[0] = m->spring_restlength[id]; break;
      case PHYS_PAR_FRICTION: th[0] = m->geom_friction[3 * id]; break;
      case PHYS_PAR_TORSION: th[0] = m->geom_friction[3 * id + 1]; break;
      case PHYS_PAR_ROLLING: th[0] = m->geom_friction[3 * id + 2]; break;
      case PHYS_PAR_SIZE: memcpy(th, m->geom_size + 3 * id, sizeof(double) * (size_t)p->size); break;
      case PHYS_PAR_POS: phys_copy3(th, m->body_pos + 3 * id); break;
      case PHYS_PAR_PENALTY_STIFFNESS: th[0] = m->opt.penalty_stiffness; break;
      case PHYS_PAR_PENALTY_DAMPING: th[0] = m->opt.penalty_damping; break;
      case PHYS_PAR_FRICTIONLOSS: joint_dofs(m, id, &da, &nd); th[0] = m->dof_frictionloss[da]; break;
      case PHYS_PAR_GAIN:
      case PHYS_PAR_KP:
      case PHYS_PAR_KV: th[0] = m->actuator_gainprm[3 * id]; break;
      case PHYS_PAR_BIAS: th[0] = m->actuator_biasprm[3 * id]; break;
      case PHYS_PAR_TIMECONST: memcpy(th, m->actuator_dynprm + 3 * id, sizeof(double) * (size_t)p->size); break;
      case PHYS_PAR_MUSCLE_FORCE: th[0] = phys_muscle_peak(m, id); break;
      case PHYS_PAR_HEIGHT: th[0] = plane_height(m, id, NULL); break;
      case PHYS_PAR_POLYCOEF: memcpy(th, m->eq_data + PHYS_EQ_NDATA * id, 5 * sizeof(double)); break;
      case PHYS_PAR_SOLREF: memcpy(th, m->eq_solref + 2 * id, 2 * sizeof(double)); break;
      case PHYS_PAR_INPUT_DELAY:
      case PHYS_PAR_INPUT_GAIN:
      case PHYS_PAR_INPUT_BIAS: th[0] = t->input[p->adr]; break;
      default: th[0] = m->geom_restitution[id]; break;
    }
  }
}

// write a body or geom entry's values th into m: mass (> 0), com, inertia (log-Cholesky, 10 or 9 values), mesh
// vertices, geom size (> 0), body pos, plane height
static physStatus set_body_entry(physModel* m, const physParam* p, const double* th) {
  int id = p->id;
  switch (p->kind) {
    case PHYS_PAR_MASS:
      if (!(th[0] > 0)) return PHYS_ERR_VALUE;
      m->body_mass[id] = th[0];
      break;
    case PHYS_PAR_COM: phys_copy3(m->body_ipos + 3 * id, th); break;
    case PHYS_PAR_INERTIA: {
      double pi[10];
      phys_logchol_to_pi(pi, NULL, th);
      return set_pi(m, id, pi);
    }
    case PHYS_PAR_INERTIA9: {   // alpha = log(m)/2 at the model's (held) mass
      double pi[10], full[10];
      full[0] = 0.5 * log(m->body_mass[id]);
      memcpy(full + 1, th, 9 * sizeof(double));
      phys_logchol_to_pi(pi, NULL, full);
      pi[0] = m->body_mass[id];   // exp(2 alpha) rounded: the mass stays bit for bit
      return set_pi(m, id, pi);
    }
    case PHYS_PAR_VERTICES: {   // the hull follows (outside the step: Qhull allocates)
      int mid = m->geom_dataid[id];
      memcpy(m->mesh_vert + 3 * (size_t)m->mesh_vertadr[mid], th, sizeof(double) * (size_t)p->size);
      physStatus st = phys_hull_rebuild(m, mid, NULL);
      m->geom_rbound[id] = phys_geom_rbound(m, id);
      return st;
    }
    case PHYS_PAR_SIZE:
      for (int i = 0; i < p->size; i++)
        if (!(th[i] > 0)) return PHYS_ERR_VALUE;
      memcpy(m->geom_size + 3 * id, th, sizeof(double) * (size_t)p->size);
      m->geom_rbound[id] = phys_geom_rbound(m, id);   // (model.h: the compiler's)
      break;
    case PHYS_PAR_POS: phys_copy3(m->body_pos + 3 * id, th); break;
    default: {   // PHYS_PAR_HEIGHT: geom_pos moves along the normal n by th - n . geom_pos
      double n[3], h = plane_height(m, id, n);
      for (int i = 0; i < 3; i++) m->geom_pos[3 * id + i] += (th[0] - h) * n[i];
      break;
    }
  }
  return PHYS_OK;
}

// write a joint's per-dof entry th[0] into each of its dofs: damping, armature, frictionloss (>= 0)
static physStatus set_dof_entry(physModel* m, const physParam* p, const double* th) {
  int da, nd;
  joint_dofs(m, p->id, &da, &nd);
  double* v = p->kind == PHYS_PAR_DAMPING ? m->dof_damping : p->kind == PHYS_PAR_ARMATURE ? m->dof_armature
                                                                                            : m->dof_frictionloss;
  if (p->kind == PHYS_PAR_FRICTIONLOSS && !(th[0] >= 0)) return PHYS_ERR_VALUE;
  for (int i = 0; i < nd; i++) v[da + i] = th[0];
  return PHYS_OK;
}

// write one entry's values th into m (input kinds: into input, the table's values)
static physStatus set_entry(physModel* m, double* input, const physParam* p, const double* th) {
  int id = p->id;
  switch (p->kind) {
    case PHYS_PAR_INPUT_DELAY:
      if (!(th[0] >= 0)) return PHYS_ERR_VALUE;
      input[p->adr] = th[0];
      break;
    case PHYS_PAR_INPUT_GAIN:
    case PHYS_PAR_INPUT_BIAS: input[p->adr] = th[0]; break;
    case PHYS_PAR_MASS:
    case PHYS_PAR_COM:
    case PHYS_PAR_INERTIA:
    case PHYS_PAR_INERTIA9:
    case PHYS_PAR_VERTICES:
    case PHYS_PAR_SIZE:
    case PHYS_PAR_POS:
    case PHYS_PAR_HEIGHT: return set_body_entry(m, p, th);
    case PHYS_PAR_DAMPING:
    case PHYS_PAR_ARMATURE:
    case PHYS_PAR_FRICTIONLOSS: return set_dof_entry(m, p, th);
    case PHYS_PAR_STIFFNESS: m->jnt_stiffness[id] = th[0]; break;
    case PHYS_PAR_GRAVITY: phys_copy3(m->opt.gravity, th); break;
    case PHYS_PAR_GEAR: memcpy(m->actuator_gear + 6 * id, th, sizeof(double) * (size_t)p->size); break;
    case PHYS_PAR_SPRING_STIFFNESS: m->spring_stiffness[id] = th[0]; break;
    case PHYS_PAR_SPRING_DAMPING: m->spring_damping[id] = th[0]; break;
    case PHYS_PAR_SPRING_RESTLENGTH: m->spring_restlength[id] = th[0]; break;
    case PHYS_PAR_FRICTION:
    case PHYS_PAR_TORSION:
    case PHYS_PAR_ROLLING:   // geom_friction[0], [1], [2]
      if (!(th[0] >= 0)) return PHYS_ERR_VALUE;
      m->geom_friction[3 * id + (p->kind == PHYS_PAR_FRICTION ? 0 : p->kind == PHYS_PAR_TORSION ? 1 : 2)] = th[0];
      break;
    case PHYS_PAR_PENALTY_STIFFNESS:
      if (!(th[0] > 0)) return PHYS_ERR_VALUE;
      m->opt.penalty_stiffness = th[0];
      break;
    case PHYS_PAR_PENALTY_DAMPING:
      if (!(th[0] >= 0)) return PHYS_ERR_VALUE;
      m->opt.penalty_damping = th[0];
      break;
    case PHYS_PAR_GAIN: m->actuator_gainprm[3 * id] = th[0]; break;
    case PHYS_PAR_BIAS: m->actuator_biasprm[3 * id] = th[0]; break;
    case PHYS_PAR_TIMECONST:
      for (int i = 0; i < p->size; i++)
        if (!(th[i] > 0)) return PHYS_ERR_VALUE;
      memcpy(m->actuator_dynprm + 3 * id, th, sizeof(double) * (size_t)p->size);
      break;
    case PHYS_PAR_MUSCLE_FORCE:   // the peak force itself (prm[2] >= 0 overrides scale / acc0)
      if (!(th[0] >= 0)) return PHYS_ERR_VALUE;
      m->actuator_muscleprm[18 * id + 2] = th[0];
      if (m->actuator_biastype[id] == PHYS_GAIN_MUSCLE) m->actuator_muscleprm[18 * id + 11] = th[0];
      break;
    case PHYS_PAR_POLYCOEF: memcpy(m->eq_data + PHYS_EQ_NDATA * id, th, 5 * sizeof(double)); break;
    case PHYS_PAR_SOLREF:   // (timeconst > 0, dampratio > 0) or (-stiffness < 0, -damping <= 0)
      if (th[0] == 0 || (th[0] > 0 && !(th[1] > 0)) || (th[0] < 0 && th[1] > 0)) return PHYS_ERR_VALUE;
      memcpy(m->eq_solref + 2 * id, th, 2 * sizeof(double));
      break;
    case PHYS_PAR_KP:
    case PHYS_PAR_KV:   // gain kp (kv) and bias -kp q (-kv qdot)
      if (!(th[0] >= 0)) return PHYS_ERR_VALUE;
      m->actuator_gainprm[3 * id] = th[0];
      m->actuator_biasprm[3 * id + (p->kind == PHYS_PAR_KP ? 1 : 2)] = -th[0];
      break;
    default:   // restitution in [0, 1]
      if (!(th[0] >= 0 && th[0] <= 1)) return PHYS_ERR_VALUE;
      m->geom_restitution[id] = th[0];
      break;
  }
  return PHYS_OK;
}

// subtree masses after a mass change (compile.c's accumulation, leaves first since parents precede children)
static void update_subtreemass(physModel* m) {
  for (int b = 0; b < m->nbody; b++) m->body_subtreemass[b] = m->body_mass[b];
  for (int b = m->nbody - 1; b > 0; b--) m->body_subtreemass[m->body_parentid[b]] += m->body_subtreemass[b];
}

physStatus phys_param_set(const physParamTable* t, physModel* m, const double* theta) {
  for (int i = 0; i < t->ntheta; i++)
    if (!isfinite(theta[i])) return PHYS_ERR_VALUE;
  for (int e = 0; e < t->n; e++) {
    physStatus st = set_entry(m, t->input, t->param + e, theta + t->param[e].adr);
    if (st != PHYS_OK) return st;
  }
  update_subtreemass(m);
  m->nfrictionloss = 0;
  for (int k = 0; k < m->nv; k++) m->nfrictionloss += m->dof_frictionloss[k] > 0;
  return PHYS_OK;
}

void phys_param_bounds(const physParamTable* t, double* lower, double* upper) {
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    int k = p->kind;
    int nonneg = k == PHYS_PAR_MASS || k == PHYS_PAR_DAMPING || k == PHYS_PAR_ARMATURE || k == PHYS_PAR_STIFFNESS ||
                 k == PHYS_PAR_SPRING_STIFFNESS || k == PHYS_PAR_SPRING_DAMPING || k == PHYS_PAR_SPRING_RESTLENGTH ||
                 k == PHYS_PAR_FRICTION || k == PHYS_PAR_TORSION || k == PHYS_PAR_ROLLING ||
                 k == PHYS_PAR_RESTITUTION || k == PHYS_PAR_SIZE ||
                 k == PHYS_PAR_PENALTY_STIFFNESS || k == PHYS_PAR_PENALTY_DAMPING || k == PHYS_PAR_FRICTIONLOSS ||
                 k == PHYS_PAR_KP || k == PHYS_PAR_KV || k == PHYS_PAR_INPUT_DELAY || k == PHYS_PAR_TIMECONST ||
                 k == PHYS_PAR_MUSCLE_FORCE;
    for (int i = 0; i < p->size; i++) {
      if (lower) lower[p->adr + i] = nonneg ? 0 : -HUGE_VAL;
      if (upper) upper[p->adr + i] = k == PHYS_PAR_RESTITUTION ? 1 : HUGE_VAL;
    }
  }
}

// cmd_optimize.c - `physid optimize TASK.json`: plan one trajectory by control-limited iLQR (src/control).
//
// The task file (docs/cli.md, optimize) names the model, the horizon, the initial state, the control bounds,
// the cost and the outputs; every path in it is relative to the task file's folder. It is read in two passes:
// the keys that need no model (model, add, dt, horizon, method, options, out), then, once the model is
// loaded, those sized by it (init, ctrlrange, cost). Every error names the task file and the JSON path of the
// offending value ("cost.final[0].qpos") and exits 1 before any output is created. The outputs go through
// output.c: checked before the model is read, written to temporaries and renamed together when all are
// complete. Progress (one line per iteration) goes to stderr unless --quiet.
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimize.h"
#include "optimize_ms.h"
#include "trajio.h"

#define OPT_TASK_MAX (16u << 20)   // largest task file read (bytes)

const char* const g_out_key[OUT_N] = {"controls", "trajectory", "result", "html"};

//---------------------------------------------------------------------------------------------------------
// reading the task

// the whole file as a string (caller frees); NULL and a message if unreadable or too large
static char* read_task(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    cli_error("%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char* s = malloc(cap + 1);
  while (s) {
    n += fread(s + n, 1, cap - n, f);
    if (n < cap || cap >= OPT_TASK_MAX) break;
    char* t = realloc(s, 2 * cap + 1);
    if (!t) free(s);
    s = t, cap *= 2;
  }
  int bad = ferror(f) || n >= OPT_TASK_MAX;
  fclose(f);
  if (!s || bad) {
    cli_error("%s: %s", path, !s ? "out of memory" : n >= OPT_TASK_MAX ? "too large for a task file" : "read error");
    free(s);
    return NULL;
  }
  s[n] = 0;
  return s;
}

// path relative to the task's folder (absolute paths as they are); 0 and a message if too long
int task_path(char out[OPT_PATH], const optTask* t, const char* path, const char* where) {
  int n = path[0] == '/' || !t->dir[0] ? snprintf(out, OPT_PATH, "%s", path)
                                        : snprintf(out, OPT_PATH, "%s/%s", t->dir, path);
  if (n < 0 || n >= OPT_PATH) {
    cli_error("%s: %s: path too long", t->file, where);
    return 0;
  }
  return 1;
}

// a non-empty string value at where; 0 and a message otherwise
int task_string(const char** s, const cJSON* v, const optTask* t, const char* where) {
  if (cJSON_IsString(v) && v->valuestring[0]) {
    *s = v->valuestring;
    return 1;
  }
  cli_error("%s: %s: expected a file name (a non-empty string)", t->file, where);
  return 0;
}

// a number in [lo, hi] at where (integer if integral); 0 and a message otherwise
int task_number(double* x, const cJSON* v, double lo, double hi, int integral, const optTask* t,
                       const char* where) {
  double y = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (y >= lo && y <= hi && (!integral || y == floor(y))) {
    *x = y;
    return 1;
  }
  cli_error("%s: %s: expected %s in [%g, %g]", t->file, where, integral ? "an integer" : "a number", lo, hi);
  return 0;
}

// an array of exactly n finite numbers >= lo at where, into x; 0 and a message naming the size otherwise
// (what: the size's meaning, "nq of model 'pendulum'")
static int task_array(double* x, int n, double lo, const cJSON* v, const optTask* t, const char* where,
                      const char* what) {
  int size = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
  if (size != n) {
    if (size < 0) cli_error("%s: %s: expected an array of %d numbers (%s)", t->file, where, n, what);
    else cli_error("%s: %s: %d values, expected %d (%s)", t->file, where, size, n, what);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    const cJSON* e = cJSON_GetArrayItem(v, i);
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || !(e->valuedouble >= lo)) {
      cli_error("%s: %s[%d]: expected a finite number%s", t->file, where, i, lo > -INFINITY ? " >= 0" : "");
      return 0;
    }
    x[i] = e->valuedouble;
  }
  return 1;
}

// a weight at where: one number >= 0 for every coordinate, or an array of n; into w (n)
static int task_weight(double* w, int n, const cJSON* v, const optTask* t, const char* where, const char* what) {
  if (cJSON_IsNumber(v)) {
    if (!(v->valuedouble >= 0) || !isfinite(v->valuedouble)) {
      cli_error("%s: %s: expected a finite number >= 0", t->file, where);
      return 0;
    }
    for (int i = 0; i < n; i++) w[i] = v->valuedouble;
    return 1;
  }
  return task_array(w, n, 0, v, t, where, what);
}

// 0 and a message naming the key if object o (at where) has a key outside the '|'-free list valid
int task_keys(const cJSON* o, const char* const* valid, int nvalid, const optTask* t, const char* where) {
  if (!cJSON_IsObject(o)) {
    cli_error("%s: %s: expected an object", t->file, where);
    return 0;
  }
  const cJSON* v;
  cJSON_ArrayForEach(v, o) {
    int ok = 0;
    for (int i = 0; i < nvalid && !ok; i++) ok = strcmp(v->string, valid[i]) == 0;
    if (ok) continue;
    char list[512] = "";
    for (int i = 0; i < nvalid; i++) {
      strncat(list, valid[i], sizeof list - strlen(list) - 1);
      if (i + 1 < nvalid) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    cli_error("%s: %s: unknown key '%s' (valid: %s)", t->file, where, v->string, list);
    return 0;
  }
  return 1;
}

// the "out" object: each output's path (relative to the task's folder)
static int read_out(optTask* t, const cJSON* o) {
  if (!task_keys(o, g_out_key, OUT_N, t, "out")) return 0;
  for (int k = 0; k < OUT_N; k++) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, g_out_key[k]);
    const char* s;
    char where[64];
    snprintf(where, sizeof where, "out.%s", g_out_key[k]);
    if (!v) continue;
    if (!task_string(&s, v, t, where) || !task_path(t->out[k], t, s, where)) return 0;
    t->has_out[k] = 1;
  }
  return 1;
}

// ddp's complementarity flag and stop rules: "complementarity" (bool), "mu_max", "stall" (K iterations),
// "stall_tol"
static int read_ddp_stop(optTask* t, const cJSON* o) {
  const cJSON* v;
  double x;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "complementarity"))) {
    if (!cJSON_IsBool(v)) {
      cli_error("%s: options.complementarity: expected true or false", t->file);
      return 0;
    }
    t->meth.complementarity = cJSON_IsTrue(v);
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "mu_max")) &&
      !task_number(&t->mu_max, v, 1e-6, 1e300, 0, t, "options.mu_max"))
    return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "stall"))) {
    if (!task_number(&x, v, 1, 100000, 1, t, "options.stall")) return 0;
    t->stall = (int)x;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "stall_tol")) &&
      !task_number(&t->stall_tol, v, 0, 1, 0, t, "options.stall_tol"))
    return 0;
  return 1;
}

// the "options" object of the method
static int read_options(optTask* t, const cJSON* o) {
  if (t->ms) return opt_ms_options(t->file, o, &t->ms_opt, &t->maxiter, &t->tol, &t->meth.complementarity);
  static const char* const valid[] = {"maxiter", "tol", "regularization", "complementarity", "mu_max", "stall",
                                      "stall_tol"};
  if (!task_keys(o, valid, 7, t, "options")) return 0;
  const cJSON* v;
  double x;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "maxiter"))) {
    if (!task_number(&x, v, 1, 100000, 1, t, "options.maxiter")) return 0;
    t->maxiter = (int)x;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "tol"))) {
    if (!task_number(&t->tol, v, 0, 1, 0, t, "options.tol")) return 0;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "regularization"))) {
    const char* r = cJSON_IsString(v) ? v->valuestring : "";
    if (strcmp(r, "control") != 0 && strcmp(r, "state") != 0) {
      cli_error("%s: options.regularization: expected \"control\" or \"state\"", t->file);
      return 0;
    }
    t->reg_state = strcmp(r, "state") == 0;
  }
  return read_ddp_stop(t, o);
}

// the "add" array: further model files
static int read_add(optTask* t, const cJSON* v) {
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > ARGS_MAXLIST) {
    cli_error("%s: add: expected an array of at most %d model file names", t->file, ARGS_MAXLIST);
    return 0;
  }
  const cJSON* e;
  int i = 0;
  cJSON_ArrayForEach(e, v) {
    char where[32];
    const char* s;
    snprintf(where, sizeof where, "add[%d]", i);
    if (!task_string(&s, e, t, where) || !task_path(t->add[i], t, s, where)) return 0;
    cli_model.add.item[cli_model.add.n++] = t->add[i++];
  }
  return 1;
}

// the first pass: the keys that need no model; the model-sized keys are checked by the second
int opt_task_top(optTask* t, const char* const* extra, int nextra) {
  const char* valid[24] = {"model", "add", "dt", "horizon", "method", "init", "ctrlrange", "cost", "options", "out",
                           "integrator"};
  int nvalid = 11;
  for (int i = 0; i < nextra && nvalid < 24; i++) valid[nvalid++] = extra[i];
  const cJSON* r = t->root;
  if (!task_keys(r, valid, nvalid, t, "the task")) return 0;
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(r, "model");
  const char* s;
  double x;
  if (!v) {
    cli_error("%s: model: missing (the model file)", t->file);
    return 0;
  }
  if (!task_string(&s, v, t, "model") || !task_path(t->model, t, s, "model")) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "add")) && !read_add(t, v)) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "dt")) && !task_number(&t->dt, v, 1e-9, 1, 0, t, "dt")) return 0;
  t->integrator = -1;
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "integrator"))) {   // "euler" or "implicit" (the physIntegrator order)
    const char* name = cJSON_IsString(v) ? v->valuestring : "";
    t->integrator = !strcmp(name, "euler") ? PHYS_INT_EULER : !strcmp(name, "implicit") ? PHYS_INT_IMPLICIT : -2;
    if (t->integrator == -2) {
      cli_error("%s: integrator: expected \"euler\" or \"implicit\"", t->file);
      return 0;
    }
  }
  if (!(v = cJSON_GetObjectItemCaseSensitive(r, "horizon"))) {
    cli_error("%s: horizon: missing (the number of steps)", t->file);
    return 0;
  }
  if (!task_number(&x, v, 1, 1e6, 1, t, "horizon")) return 0;
  t->T = (int)x;
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "method"))) {
    const char* name = cJSON_IsString(v) ? v->valuestring : "";
    t->ms = strcmp(name, "ms") == 0;
    if (strcmp(name, "ddp") != 0 && !t->ms && !opt_shooting_method(&t->meth, name) &&
        !opt_sampling_method(&t->meth, name)) {
      cli_error("%s: method: expected one of \"ddp\", \"ms\", \"lbfgsb\", \"adam\", \"random\", \"cem\", \"mppi\"",
                t->file);
      return 0;
    }
    snprintf(t->method, sizeof t->method, "%s", v->valuestring);
  }
  v = cJSON_GetObjectItemCaseSensitive(r, "options");
  if (t->meth.name) {   // the other methods' options (optimize.h)
    if (!(t->meth.sampling ? opt_sampling_options : opt_shooting_options)(&t->meth, t->file, v)) return 0;
    t->maxiter = t->meth.maxiter, t->tol = t->meth.tol;
  } else if (v && !read_options(t, v)) {
    return 0;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "out")) && !read_out(t, v)) return 0;
  return 1;
}

// the "init" object: keyframe (name or index), then qpos / qvel lists, into d
static int read_init(const optTask* t, const physModel* m, physData* d, const cJSON* o) {
  static const char* const valid[] = {"keyframe", "qpos", "qvel"};
  if (!task_keys(o, valid, 3, t, "init")) return 0;
  const cJSON* v;
  char what[256];
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "keyframe"))) {
    int k = cJSON_IsString(v) ? phys_name2id(m, "key", v->valuestring)
                              : cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) ? (int)v->valuedouble : -1;
    if (k < 0 || k >= m->nkey) {
      cli_error("%s: init.keyframe: no such keyframe in model '%s' (%d keyframes)", t->file, m->modelname, m->nkey);
      return 0;
    }
    phys_reset_keyframe(m, d, k);
  }
  snprintf(what, sizeof what, "nq of model '%s'", m->modelname);
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "qpos")) && !task_array(d->qpos, m->nq, -INFINITY, v, t, "init.qpos", what))
    return 0;
  snprintf(what, sizeof what, "nv of model '%s'", m->modelname);
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "qvel")) && !task_array(d->qvel, m->nv, -INFINITY, v, t, "init.qvel", what))
    return 0;
  physLog log;
  memset(&log, 0, sizeof log);
  if (phys_traj_check_quat(d->qpos, m, t->file, 0, &log) != PHYS_OK) {
    cli_error("%s: init.qpos: a quaternion is zero or not finite", t->file);
    return 0;
  }
  return 1;
}

// "ctrlrange": nu pairs [lo, hi] of finite numbers; each inside the model's range where it is limited
static int read_ctrlrange(const optTask* t, const physModel* m, physControlProblem* p, const cJSON* v) {
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != m->nu) {
    cli_error("%s: ctrlrange: expected an array of %d [lower, upper] pairs (nu of model '%s')", t->file, m->nu,
              m->modelname);
    return 0;
  }
  for (int j = 0; j < m->nu; j++) {
    const cJSON* e = cJSON_GetArrayItem(v, j);
    const cJSON *a = cJSON_GetArrayItem(e, 0), *b = cJSON_GetArrayItem(e, 1);
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
        !isfinite(a->valuedouble) || !isfinite(b->valuedouble)) {
      cli_error("%s: ctrlrange[%d]: expected [lower, upper], two finite numbers", t->file, j);
      return 0;
    }
    double lo = a->valuedouble, hi = b->valuedouble;
    if (lo > hi) {
      cli_error("%s: ctrlrange[%d]: infeasible bounds [%g, %g] (lower > upper)", t->file, j, lo, hi);
      return 0;
    }
    if (m->actuator_ctrllimited[j] && (lo < m->actuator_ctrlrange[2 * j] || hi > m->actuator_ctrlrange[2 * j + 1])) {
      cli_error("%s: ctrlrange[%d]: [%g, %g] is outside actuator '%s''s ctrlrange [%g, %g] (the step clamps there)",
                t->file, j, lo, hi, phys_id2name(m, "actuator", j), m->actuator_ctrlrange[2 * j],
                m->actuator_ctrlrange[2 * j + 1]);
      return 0;
    }
    p->lo[j] = lo, p->hi[j] = hi;
  }
  return 1;
}

// the point named by key "body" or "site" (prefix "" or "ref_") of term o: its id (-1 and a message if absent or
// unknown: required says whether absence is an error; -2 when absent and not required), *isbody
static int point_id(const optTask* t, const physModel* m, const cJSON* o, const char* where, const char* prefix,
                    int required, int* isbody) {
  char kb[16], ks[16];
  snprintf(kb, sizeof kb, "%sbody", prefix), snprintf(ks, sizeof ks, "%ssite", prefix);
  const cJSON* b = cJSON_GetObjectItemCaseSensitive(o, kb);
  const cJSON* s = b ? b : cJSON_GetObjectItemCaseSensitive(o, ks);
  const char* kind = b ? "body" : "site";
  *isbody = b != NULL;
  if (!s && !required) return -2;
  int id = cJSON_IsString(s) ? phys_name2id(m, kind, s->valuestring) : -1;
  if (b && id == 0) {
    cli_error("%s: %s.%s: '%s' is the world: it does not move", t->file, where, kb, s->valuestring);
    return -1;
  }
  if (id < 0)
    cli_error("%s: %s.%s: no %s %s%s%s in model '%s'", t->file, where, b ? kb : ks, kind,
              cJSON_IsString(s) ? "'" : "",
              cJSON_IsString(s) ? s->valuestring : "name (expected a string)", cJSON_IsString(s) ? "'" : "",
              m->modelname);
  return id;
}

// a point term {"site" | "body": NAME, "pos" | "vel": [x, y, z], "weight": w or [wx, wy, wz]} (at where), with
// an optional reference point "ref_site" | "ref_body": NAME (the term is then on p - p_ref - target: a moving
// target), appended to c's points: the site's or the body frame's world position or linear velocity
static int read_point_term(const optTask* t, const physModel* m, physStateCost* c, const cJSON* o, const char* where) {
  const cJSON* vel = cJSON_GetObjectItemCaseSensitive(o, "vel");
  const cJSON* pos = vel ? vel : cJSON_GetObjectItemCaseSensitive(o, "pos");
  const cJSON* w = cJSON_GetObjectItemCaseSensitive(o, "weight");
  char at[128];
  int isbody, refbody, id = point_id(t, m, o, where, "", 1, &isbody);
  int ref = point_id(t, m, o, where, "ref_", 0, &refbody);
  if (id < 0 || ref == -1) return 0;
  if (c->npoint == PHYS_CONTROL_MAXPOINT) {
    cli_error("%s: %s: more than %d site or body terms in this list", t->file, where, PHYS_CONTROL_MAXPOINT);
    return 0;
  }
  physPointCost* pc = c->point + c->npoint;
  pc->site = id, pc->body = isbody, pc->vel = vel != NULL;
  pc->has_ref = ref >= 0, pc->ref = ref >= 0 ? ref : 0, pc->refbody = refbody;
  snprintf(at, sizeof at, "%s.%s", where, vel ? "vel" : "pos");
  if (!task_array(pc->target, 3, -INFINITY, pos, t, at, vel ? "a world velocity" : "a world position")) return 0;
  snprintf(at, sizeof at, "%s.weight", where);
  if (!w) {
    cli_error("%s: %s: missing", t->file, at);
    return 0;
  }
  if (!task_weight(pc->w, 3, w, t, at, "x, y, z")) return 0;
  c->npoint++;
  return 1;
}

// one state term {"qpos": [...] | "qvel": [...], "weight": w} or a point term (read_point_term) of a running
// or final list (at where) into c; seen[0..1] marks the qpos and qvel kinds already given (each once per list)
static int read_term(const optTask* t, const physModel* m, physStateCost* c, const cJSON* o, const char* where,
                     int seen[2]) {
  static const char* const valid[] = {"qpos", "qvel", "site", "body", "pos", "vel", "weight", "ref_site",
                                      "ref_body"};
  if (!task_keys(o, valid, 9, t, where)) return 0;
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "qpos"), *v = cJSON_GetObjectItemCaseSensitive(o, "qvel");
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "weight"), *s = cJSON_GetObjectItemCaseSensitive(o, "site");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "body"), *pos = cJSON_GetObjectItemCaseSensitive(o, "pos");
  const cJSON* vel = cJSON_GetObjectItemCaseSensitive(o, "vel");
  char at[128], what[256];
  if ((q != NULL) + (v != NULL) + (s != NULL) + (b != NULL) != 1 || ((pos || vel) && !s && !b) ||
      ((s || b) && (pos != NULL) + (vel != NULL) != 1)) {
    cli_error("%s: %s: expected exactly one of qpos, qvel, site or body (with exactly one of pos, vel)", t->file,
              where);
    return 0;
  }
  if (s || b) return read_point_term(t, m, c, o, where);
  int kind = q ? 0 : 1;
  if (seen[kind]++) {
    cli_error("%s: %s: a second %s term in this list", t->file, where, q ? "qpos" : "qvel");
    return 0;
  }
  snprintf(at, sizeof at, "%s.%s", where, q ? "qpos" : "qvel");
  snprintf(what, sizeof what, "%s of model '%s'", q ? "nq" : "nv", m->modelname);
  if (!task_array(q ? c->qref : c->vref, q ? m->nq : m->nv, -INFINITY, q ? q : v, t, at, what)) return 0;
  physLog log;
  memset(&log, 0, sizeof log);
  if (q && phys_traj_check_quat(c->qref, m, t->file, 0, &log) != PHYS_OK) {
    cli_error("%s: %s: a quaternion is zero or not finite", t->file, at);
    return 0;
  }
  snprintf(at, sizeof at, "%s.weight", where);
  snprintf(what, sizeof what, "nv of model '%s'", m->modelname);
  if (!w) {
    cli_error("%s: %s: missing", t->file, at);
    return 0;
  }
  return task_weight(q ? c->wq : c->wv, m->nv, w, t, at, what);
}

// a running or final list of state terms
static int read_terms(const optTask* t, const physModel* m, physStateCost* c, const cJSON* v, const char* where) {
  if (!cJSON_IsArray(v)) {
    cli_error("%s: %s: expected an array of terms {\"qpos\" or \"qvel\": [...], \"weight\": w} or {\"site\" or "
              "\"body\": NAME, \"pos\" or \"vel\": [x, y, z], \"weight\": w}", t->file, where);
    return 0;
  }
  int seen[2] = {0, 0}, i = 0;
  const cJSON* e;
  cJSON_ArrayForEach(e, v) {
    char at[64];
    snprintf(at, sizeof at, "%s[%d]", where, i++);
    if (!read_term(t, m, c, e, at, seen)) return 0;
  }
  return 1;
}

// the "cost" object: running and final term lists, control effort and rate weights
static int read_cost(const optTask* t, const physModel* m, physControlProblem* p, const cJSON* o) {
  static const char* const valid[] = {"running", "final", "control", "rate"};
  if (!task_keys(o, valid, 4, t, "cost")) return 0;
  const cJSON* v;
  char what[256];
  snprintf(what, sizeof what, "nu of model '%s'", m->modelname);
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "running")) && !read_terms(t, m, &p->run, v, "cost.running")) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "final")) && !read_terms(t, m, &p->fin, v, "cost.final")) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "control")) && !task_weight(p->wu, m->nu, v, t, "cost.control", what))
    return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "rate")) && !task_weight(p->wdu, m->nu, v, t, "cost.rate", what))
    return 0;
  return 1;
}

// the second pass: init (as simulate's default: keyframe 0 if the model has one, else qpos0 at rest; then the
// task's), ctrlrange, cost
int opt_task_model(const optTask* t, const physModel* m, physData* d, physControlProblem* p) {
  const cJSON* v;
  if (m->nu == 0 && !cJSON_GetObjectItemCaseSensitive(t->root, "design")) {
    cli_error("%s: model: '%s' has no actuators: no controls to optimize", t->file, m->modelname);
    return 0;
  }
  if (m->nkey > 0) phys_reset_keyframe(m, d, 0);
  else phys_reset_data(m, d);
  if ((v = cJSON_GetObjectItemCaseSensitive(t->root, "init")) && !read_init(t, m, d, v)) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(t->root, "ctrlrange")) && !read_ctrlrange(t, m, p, v)) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(t->root, "cost")) && !read_cost(t, m, p, v)) return 0;
  if (t->maxiter > 0) p->maxiter = t->maxiter < p->maxiter ? t->maxiter : p->maxiter;
  if (t->tol >= 0) p->tol = t->tol;
  p->reg_state = t->reg_state;
  if (t->mu_max > 0) p->mu_max = t->mu_max;
  p->stall = t->stall;
  if (t->stall_tol >= 0) p->stall_tol = t->stall_tol;
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// outputs

// the controls CSV (optimize.h; simulate --ctrl-file replays it)
int opt_write_controls(FILE* f, const physModel* m, const double* U, int T, const double* times) {
  fputs("t", f);
  for (int j = 0; j < m->nu; j++) fprintf(f, ",u%d", j);
  fputc('\n', f);
  for (int k = 0; k < T; k++) {
    fprintf(f, "%.17g", times[k]);
    for (int j = 0; j < m->nu; j++) fprintf(f, ",%.17g", U[(size_t)k * m->nu + j]);
    fputc('\n', f);
  }
  return !ferror(f);
}

// the trajectory CSV as simulate writes it: the controls replayed from d's initial state by phys_step (the
// same calls as the solver's rollout and as simulate --ctrl-file); times[k] <- the time of row k (T + 1). d is left
// at x_T.
static int write_trajectory(FILE* f, const physModel* m, physData* d, const physControlProblem* p, double* times) {
  int ok = f ? phys_traj_write_header_u(f, m, m->nu > 0, 0) == PHYS_OK : 1;
  for (int k = 0; k <= p->T && ok; k++) {
    if (k > 0) phys_step(m, d);
    if (k < p->T && m->nu > 0) memcpy(d->ctrl, p->U + (size_t)k * m->nu, sizeof(double) * (size_t)m->nu);
    times[k] = d->time;
    if (f) ok = phys_traj_write_row_u(f, m, d->time, d->qpos, d->qvel, m->nu > 0 ? d->ctrl : NULL, NULL) == PHYS_OK;
  }
  return ok;
}

// the work counters of the running solve (opt_count_begin)
static struct {
  physData* d;
  long long start[2];       // d->nstep, d->nlinearize at the begin
  long long* count;         // 2 (n + 1): steps, then linearizations, per iteration
  int n, last;              // room, the last iteration marked (-1: none)
} g_count;

int opt_count_begin(physData* d, int n) {
  free(g_count.count);
  g_count.count = calloc(2 * ((size_t)n + 1), sizeof(long long));
  g_count.d = g_count.count ? d : NULL, g_count.n = n, g_count.last = -1;
  g_count.start[0] = d->nstep, g_count.start[1] = d->nlinearize;
  return g_count.count != NULL;
}

void opt_count_mark(int k) {
  if (!g_count.d || k < 0 || k > g_count.n) return;
  g_count.count[k] = g_count.d->nstep - g_count.start[0];
  g_count.count[g_count.n + 1 + k] = g_count.d->nlinearize - g_count.start[1];
  g_count.last = k;
}

void opt_count_end(void) {
  free(g_count.count);
  memset(&g_count, 0, sizeof g_count);
}

// the counters as the result's "steps" and "linearizations" arrays (iterations 0..niter), if every one was marked
static void count_result(cJSON* r, int niter) {
  if (!g_count.d || g_count.last != niter) return;
  cJSON *s = cJSON_CreateArray(), *l = cJSON_CreateArray();
  for (int k = 0; k <= niter; k++) {
    cJSON_AddItemToArray(s, cJSON_CreateNumber((double)g_count.count[k]));
    cJSON_AddItemToArray(l, cJSON_CreateNumber((double)g_count.count[g_count.n + 1 + k]));
  }
  cJSON_AddItemToObject(r, "steps", s);
  cJSON_AddItemToObject(r, "linearizations", l);
}

static const char* const g_stop_name[] = {"cost", "feedforward", "maxiter", "mu", "gradient", "linesearch", "stall"};

// why the solve stopped, in words (the result's "stop_reason" and the summary line on stderr)
static void stop_reason(const physControlProblem* p, char* s, size_t n) {
  switch (p->stop) {
    case PHYS_DDP_COST: snprintf(s, n, "relative cost decrease below tol %g", p->tol); break;
    case PHYS_DDP_FEEDFORWARD:
      snprintf(s, n, "feedforward below tol %g: the backward pass finds no descent direction (a minimum, or a zero "
               "gradient such as clamped contacts)", p->tol);
      break;
    case PHYS_DDP_MAXITER: snprintf(s, n, "maxiter (%d) iterations", p->maxiter); break;
    case PHYS_DDP_MU:
      snprintf(s, n, "regularization mu above mu_max %g: no descent step found at any regularization", p->mu_max);
      break;
    case PHYS_DDP_GRADIENT: snprintf(s, n, "the projected gradient is zero"); break;
    case PHYS_DDP_LINESEARCH: snprintf(s, n, "the line search found no decrease"); break;
    case PHYS_DDP_STALL:
      snprintf(s, n, "stalled: the cost fell by less than stall_tol %g (relative) over the last %d iterations",
               p->stall_tol, p->stall);
      break;
  }
}

// the result JSON: method, sizes, cost and time per iteration, final cost, bound violation, why it stopped
static int write_result(FILE* f, const optTask* t, const physControlProblem* p, double dt, const optMethod* mo,
                        const physMsResult* ms) {
  cJSON* r = cJSON_CreateObject();
  cJSON *cost = cJSON_CreateArray(), *secs = cJSON_CreateArray();
  for (int k = 0; k <= p->niter; k++) {
    cJSON_AddItemToArray(cost, cJSON_CreateNumber(p->iter[k].cost));
    cJSON_AddItemToArray(secs, cJSON_CreateNumber(p->iter[k].seconds));
  }
  cJSON_AddStringToObject(r, "method", ms ? "ms" : mo->name ? mo->name : "ddp");
  cJSON_AddNumberToObject(r, "horizon", p->T);
  cJSON_AddNumberToObject(r, "dt", dt);
  cJSON_AddNumberToObject(r, "iterations", p->niter);
  cJSON_AddStringToObject(r, "stop", ms ? ms->status_name : g_stop_name[p->stop]);
  if (!ms && !mo->name) {   // ddp: the reason in words and the gradient option
    char why[200];
    stop_reason(p, why, sizeof why);
    cJSON_AddStringToObject(r, "stop_reason", why);
    cJSON_AddBoolToObject(r, "complementarity", mo->complementarity);
  }
  cJSON_AddItemToObject(r, "cost", cost);
  cJSON_AddItemToObject(r, "seconds", secs);
  count_result(r, p->niter);
  cJSON_AddNumberToObject(r, "final_cost", p->cost);
  cJSON_AddNumberToObject(r, "violation", phys_control_violation(p, p->U));
  if (mo->name) opt_method_result(r, mo);
  opt_design_result(r, t);
  if (ms) opt_ms_result(r, p, ms);
  if (ms) cJSON_AddBoolToObject(r, "complementarity", mo->complementarity);
  char* s = cJSON_Print(r);
  int ok = s && fputs(s, f) >= 0 && fputc('\n', f) != EOF;
  free(s);
  cJSON_Delete(r);
  return ok;
}

// the HTML page: cost per iteration, controls and the chosen state coordinates of the plan
static int write_html(FILE* f, const optTask* t, const physModel* m, const physControlProblem* p,
                      const double* times) {
  double* cost = malloc(sizeof(double) * (size_t)(p->niter + 1));
  if (!cost) return 0;
  for (int k = 0; k <= p->niter; k++) cost[k] = p->iter[k].cost;
  char v[4][64];
  snprintf(v[0], sizeof v[0], "%s, horizon %d, dt %g s", t->method[0] ? t->method : "ddp", p->T, m->opt.timestep);
  snprintf(v[1], sizeof v[1], "%d (stop: %s)", p->niter, g_stop_name[p->stop]);
  snprintf(v[2], sizeof v[2], "%.9g -> %.9g", p->iter[0].cost, p->cost);
  snprintf(v[3], sizeof v[3], "%g", phys_control_violation(p, p->U));
  const char* rows[] = {"method", v[0], "iterations", v[1], "cost", v[2], "bound violation", v[3]};
  optPage pg = {"optimize", t->file, cost, p->niter + 1, "iteration", times, p->U, p->X, p->T, rows, 4, t->replay};
  int ok = opt_write_html(f, m, &pg, t->plot, t->nplot);
  free(cost);
  return ok;
}

// one progress line per iteration on stderr
static void progress(void* ctx, int k, const physDdpIter* it) {
  (void)ctx;
  opt_count_mark(k);
  if (cli_quiet) return;
  fprintf(stderr, "optimize: iter %3d  cost %.9g  alpha %.3g  mu %.3g  feedforward %.3g  %.3f ms\n", k, it->cost,
          it->alpha, it->mu, it->feedforward, 1e3 * it->seconds);
}

// solve and write the outputs (all or none)
static int optimize(optTask* t, cliOutput* o, const physModel* m, physData* d, physControlProblem* p) {
  physLog log;
  memset(&log, 0, sizeof log);
  physMsResult ms = {0};
  if (t->ms && !(ms.defect_iter = calloc((size_t)p->maxiter + 1, sizeof(double)))) {
    cli_error("%s: out of memory", t->file);
    return CLI_EXIT_INPUT;
  }
  t->ms_res = t->ms ? &ms : NULL;
  if (!t->meth.sampling && !opt_count_begin(d, p->maxiter)) {
    cli_error("%s: out of memory", t->file);
    free(ms.defect_iter);
    return CLI_EXIT_INPUT;
  }
  if (opt_plan(t, p, d, progress, NULL, &log) != PHYS_OK) {
    cli_error("%s: %s", t->file, log.error);
    opt_count_end();
    free(ms.defect_iter);
    return CLI_EXIT_INPUT;
  }
  if (t->ms) opt_ms_summary(p, &ms);
  else if (!cli_quiet) {
    fprintf(stderr, "optimize: %d iterations (stop: %s), final cost %.9g, bound violation %g\n", p->niter,
            g_stop_name[p->stop], p->cost, phys_control_violation(p, p->U));
    if (!t->meth.name) {
      char why[200];
      stop_reason(p, why, sizeof why);
      fprintf(stderr, "optimize: stopped: %s\n", why);
    }
  }
  double* times = malloc(sizeof(double) * (size_t)(p->T + 1));
  int ok = times != NULL;
  for (int k = 0; k < OUT_N && ok; k++) ok = !t->has_out[k] || cli_output_open(&o[k]);
  ok = ok && write_trajectory(t->has_out[OUT_TRAJECTORY] ? o[OUT_TRAJECTORY].f : NULL, m, d, p, times);
  ok = ok && (!t->has_out[OUT_CONTROLS] || opt_write_controls(o[OUT_CONTROLS].f, m, p->U, p->T, times));
  ok = ok && (!t->has_out[OUT_RESULT] ||
              write_result(o[OUT_RESULT].f, t, p, m->opt.timestep, &t->meth, t->ms ? &ms : NULL));
  ok = ok && (!t->has_out[OUT_HTML] || write_html(o[OUT_HTML].f, t, m, p, times));
  free(times);
  free(ms.defect_iter);
  opt_count_end();
  return opt_outputs_finish(t, o, ok) ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

physStatus opt_plan(const optTask* t, physControlProblem* p, physData* d, physDdpProgress progress, void* ctx,
                    physLog* log) {
  if (t->ms) return opt_ms_plan(&t->ms_opt, t->ms_res, p, d, log);   // multiple shooting (optimize_ms.h)
  if (t->meth.name) return opt_method_solve(&t->meth, d, p, log);   // the methods beside ddp (optimize.h)
  return phys_ddp_solve(p, d, progress, ctx, log);
}

// check the outputs before any work: each path usable, none the same file as another or an input
int opt_check_outputs(optTask* t, cliOutput* o) {
  cliOutput chk[OUT_N];
  const char* input[2 + ARGS_MAXLIST] = {t->file, t->model};
  int n = 0, ninput = 2;
  for (int i = 0; i < cli_model.add.n; i++) input[ninput++] = cli_model.add.item[i];
  for (int k = 0; k < OUT_N; k++) {
    if (!t->has_out[k]) continue;
    char opt[32];
    snprintf(opt, sizeof opt, "out.%s", g_out_key[k]);
    static char names[OUT_N][32];
    memcpy(names[k], opt, sizeof opt);
    if (!cli_output_check(&o[k], names[k], t->out[k])) return 0;
    chk[n++] = o[k];
  }
  return !cli_output_conflicts(chk, n, input, ninput);
}

int opt_task_problem(optTask* t, physModel** m, physData** d, physControlProblem** p) {
  if (!(*m = cli_load_model(t->model, 0))) return 0;
  if (t->dt > 0) (*m)->opt.timestep = t->dt;
  if (t->integrator >= 0) (*m)->opt.integrator = t->integrator;
  if (t->meth.complementarity) (*m)->opt.gradflags |= PHYS_GRAD_COMPLEMENTARITY;
  *d = phys_make_data(*m);
  *p = *d ? phys_control_make(*m, t->T, t->maxiter) : NULL;
  if (!*p) {
    cli_error("%s: out of memory for a horizon of %d steps", t->file, t->T);
    return 0;
  }
  return opt_task_model(t, *m, *d, *p) && opt_read_plot(t, *m);
}

void opt_task_free(optTask* t, physModel* m, physData* d, physControlProblem* p) {
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
  opt_design_free(t);
  cJSON_Delete(t->root);
  t->root = NULL;
}

int opt_outputs_finish(const optTask* t, cliOutput* o, int ok) {
  if (!ok) {
    cli_error("%s: cannot write the outputs", t->file);
    for (int k = 0; k < OUT_N; k++)
      if (t->has_out[k]) cli_output_abort(&o[k]);
    return 0;
  }
  cliOutput open[OUT_N];
  int n = 0;
  for (int k = 0; k < OUT_N; k++)
    if (t->has_out[k]) open[n++] = o[k];
  return cli_outputs_commit(open, n);
}

int opt_task_load(optTask* t, const char* file) {
  t->file = file;
  t->tol = -1;
  t->stall_tol = -1;
  t->ms_opt = phys_ms_defaults();
  const char* slash = strrchr(file, '/');
  if (slash) snprintf(t->dir, sizeof t->dir, "%.*s", (int)(slash - file) > 0 ? (int)(slash - file) : 1, file);
  char* text = read_task(file);
  if (!text) return 0;
  t->root = cJSON_Parse(text);
  if (!t->root || !cJSON_IsObject(t->root)) {
    const char* at = cJSON_GetErrorPtr();
    int line = 1;
    for (const char* c = text; at && c < at && *c; c++) line += *c == '\n';
    cli_error("%s:%d: not a JSON object%s", file, line, t->root ? "" : " (malformed JSON)");
    cJSON_Delete(t->root);
    t->root = NULL;
  }
  free(text);
  return t->root != NULL;
}

// physid optimize
int cli_optimize(int argc, char** argv) {
  optTask t;
  memset(&t, 0, sizeof t);
  t.tol = -1;
  const argOption opt[] = {
      {"--quiet", ARG_FLAG, &t.quiet, "", "no progress lines and no warnings on stderr (errors still print)", 0, 0,
       0},
  };
  const argCommand cmd = {"optimize",
                          "Plan one trajectory: control-limited iLQR (DDP) on the exact step Jacobians, multiple "
                          "shooting by Ipopt\n(ms), single shooting on the rollout gradient (lbfgsb, adam) or stochastic "
                          "search (random, cem,\nmppi), from the task file's model, horizon, initial state, control bounds "
                          "and cost; writes the\ncontrols CSV (replayable with simulate --ctrl-file), the trajectory CSV "
                          "and a result JSON\n(docs/cli.md).",
                          "TASK.json", 1, opt, sizeof opt / sizeof opt[0], "physid optimize swingup.json"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  if (!opt_task_load(&t, pos[0])) return CLI_EXIT_INPUT;
  cliOutput o[OUT_N];
  memset(o, 0, sizeof o);
  code = CLI_EXIT_INPUT;
  physModel* m = NULL;
  physData* d = NULL;
  physControlProblem* p = NULL;
  static const char* const extra[] = {"plot", "replay", "design"};
  if (opt_task_top(&t, extra, 3) && opt_check_outputs(&t, o) && opt_task_problem(&t, &m, &d, &p) &&
      opt_read_design(&t, m, p))
    code = optimize(&t, o, m, d, p);
  opt_task_free(&t, m, d, p);
  return code;
}

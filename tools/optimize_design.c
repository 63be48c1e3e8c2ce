// optimize_design.c - the task's "design" list of `physid optimize` (issue 17): physical parameters of the model
// (identify's kinds, src/grad/params.h: "pos:BODY" link placements, "mass:BODY", "damping:JOINT", ...) optimized
// with the controls by single shooting (lbfgsb, adam; src/control/shooting.h) or sampled with them (random, cem,
// mppi; src/control/sampling.h). Each entry is
//   {"param": "KIND:NAME", "init": x or [...], "lower": x or [...], "upper": x or [...], "sigma": x or [...]}
// (init: the model's value; bounds: the kind's, params.h; sigma, the sampling methods' only: the initial spread
// in the parameter's units, default 0.1 times the bounds' width, or times max(|init|, 1) if a bound is
// infinite); a component with lower = upper is held there, so
// "pos:link2" with lower [0.5, 0, 0] and upper [5, 0, 0] varies a link's length along x only. Equal control
// bounds ("ctrlrange" [[a, a]]) hold the controls: the design alone is optimized (a model without actuators is
// accepted then).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimize.h"
#include "params.h"

// x or [x0, x1, ...] at where (n values) into out; 0 and a message otherwise
static int design_values(double* out, int n, const cJSON* v, const optTask* t, const char* where) {
  if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
    for (int i = 0; i < n; i++) out[i] = v->valuedouble;
    return 1;
  }
  if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == n) {
    for (int i = 0; i < n; i++) {
      const cJSON* e = cJSON_GetArrayItem(v, i);
      if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) break;
      out[i] = e->valuedouble;
      if (i == n - 1) return 1;
    }
  }
  cli_error("%s: %s: expected a finite number or an array of %d", t->file, where, n);
  return 0;
}

// entry i of the list: its spec string, then init and bounds at the entry's theta address
static int design_entry(optTask* t, const cJSON* e, int i) {
  static const char* const keys[] = {"param", "init", "lower", "upper", "sigma"};
  char where[64];
  snprintf(where, sizeof where, "design[%d]", i);
  if (!task_keys(e, keys, t->meth.sampling ? 5 : 4, t, where)) return 0;
  const physParam* p = phys_param_spec_entry(&t->design, i);
  const cJSON* v;
  double *th = t->theta + p->adr, *lo = t->theta_lo + p->adr, *hi = t->theta_hi + p->adr;
  double* sg = t->theta_sigma + p->adr;
  const char* name[4] = {"init", "lower", "upper", "sigma"};
  double* dst[4] = {th, lo, hi, sg};
  for (int k = 0; k < 4; k++) {
    char at[96];
    snprintf(at, sizeof at, "%s.%s", where, name[k]);
    if ((v = cJSON_GetObjectItemCaseSensitive(e, name[k])) && !design_values(dst[k], p->size, v, t, at)) return 0;
  }
  for (int k = 0; k < p->size; k++) {
    if (!(lo[k] <= th[k] && th[k] <= hi[k])) {
      cli_error("%s: %s: component %d: the initial value %g is outside [%g, %g]", t->file, where, k, th[k], lo[k],
                hi[k]);
      return 0;
    }
    if (cJSON_GetObjectItemCaseSensitive(e, "sigma") && !(sg[k] >= 0)) {
      cli_error("%s: %s.sigma: component %d: %g; expected a spread >= 0", t->file, where, k, sg[k]);
      return 0;
    }
  }
  return 1;
}

// the spec strings of the list (at most ARGS_MAXLIST); 0 and a message if not a list of {"param": "KIND:NAME"}
static int design_specs(const optTask* t, const cJSON* v, const char** spec, int* n) {
  *n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
  if (*n < 1 || *n > ARGS_MAXLIST) {
    cli_error("%s: design: expected an array of 1 to %d entries {\"param\": \"KIND:NAME\", ...}", t->file,
              ARGS_MAXLIST);
    return 0;
  }
  for (int i = 0; i < *n; i++) {
    const cJSON* s = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, i), "param");
    if (!cJSON_IsString(s)) {
      cli_error("%s: design[%d].param: expected a parameter \"KIND:NAME\" (physid identify's --param)", t->file, i);
      return 0;
    }
    spec[i] = s->valuestring;
  }
  return 1;
}

int opt_read_design(optTask* t, physModel* m, physControlProblem* p) {
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(t->root, "design");
  if (!v) return 1;
  if (!t->meth.name) {
    cli_error("%s: design: only the gradient methods \"lbfgsb\", \"adam\" and the sampling methods \"random\", "
              "\"cem\", \"mppi\" optimize design parameters (method \"%s\")", t->file,
              t->method[0] ? t->method : "ddp");
    return 0;
  }
  const char* spec[ARGS_MAXLIST];
  int n;
  if (!design_specs(t, v, spec, &n)) return 0;
  physLog log;
  memset(&log, 0, sizeof log);
  if (phys_param_table_build(&t->design, m, spec, n, &log) != PHYS_OK) {
    cli_error("%s: design: %s", t->file, log.error);
    return 0;
  }
  t->has_design = 1;
  for (int i = 0; i < t->design.n; i++)
    if (phys_param_is_input(t->design.param[i].kind)) {
      cli_error("%s: design[%d]: '%s' transforms recorded inputs (identify's); not a design parameter", t->file,
                t->design.param[i].spec, t->design.param[i].name);
      return 0;
    }
  size_t nt = (size_t)t->design.ntheta;
  if (!(t->theta = calloc(5 * nt, sizeof(double))) || !(t->held = calloc(nt, 1))) {
    cli_error("%s: out of memory", t->file);
    return 0;
  }
  t->theta0 = t->theta + nt, t->theta_lo = t->theta0 + nt, t->theta_hi = t->theta_lo + nt;
  t->theta_sigma = t->theta_hi + nt;
  phys_param_get(&t->design, m, t->theta);
  phys_param_bounds(&t->design, t->theta_lo, t->theta_hi);
  for (size_t i = 0; i < nt; i++) t->theta_sigma[i] = -1;   // not given: sampling.h's default
  for (int i = 0; i < n; i++)
    if (!design_entry(t, cJSON_GetArrayItem(v, i), i)) return 0;
  for (size_t i = 0; i < nt; i++) t->held[i] = t->theta_lo[i] == t->theta_hi[i];
  t->design.held = t->held;   // (the pbd step's parameter columns skip the held components)
  if (t->meth.sampling) t->meth.sample.design_sigma = t->theta_sigma;
  memcpy(t->theta0, t->theta, sizeof(double) * nt);
  p->design = &t->design, p->design_model = m;
  p->theta = t->theta, p->theta_lo = t->theta_lo, p->theta_hi = t->theta_hi;
  return 1;
}

void opt_design_result(cJSON* r, const optTask* t) {
  if (!t->has_design) return;
  cJSON* a = cJSON_CreateArray();
  for (int i = 0; phys_param_spec_entry(&t->design, i); i++) {
    const physParam* p = phys_param_spec_entry(&t->design, i);
    cJSON* e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "param", p->name);
    cJSON_AddItemToObject(e, "initial", cJSON_CreateDoubleArray(t->theta0 + p->adr, p->size));
    cJSON_AddItemToObject(e, "value", cJSON_CreateDoubleArray(t->theta + p->adr, p->size));
    cJSON_AddItemToArray(a, e);
  }
  cJSON_AddItemToObject(r, "design", a);
}

void opt_design_free(optTask* t) {
  phys_param_table_free(&t->design);   // zeroed or built (also after a failed build)
  free(t->theta);
  free(t->held);
  t->theta = NULL, t->held = NULL, t->has_design = 0;
}

// optimize_ms.c - `physid optimize` with "method": "ms" (optimize_ms.h)
#include "optimize_ms.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "optimize.h"

// a number of options.key in [lo, hi] (an integer if integral) into *x; 0 and a message otherwise
static int ms_number(double* x, const cJSON* v, double lo, double hi, int integral, const char* file) {
  double y = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (y >= lo && y <= hi && (!integral || y == floor(y))) {
    *x = y;
    return 1;
  }
  cli_error("%s: options.%s: expected %s in [%g, %g] (method ms)", file, v->string, integral ? "an integer" : "a number",
            lo, hi);
  return 0;
}

// options.key, one of the strings a (0) and b (1): which, or -1 and a message
static int ms_choice(const cJSON* v, const char* a, const char* b, const char* file) {
  for (int i = 0; i < 2 && cJSON_IsString(v); i++)
    if (strcmp(v->valuestring, i ? b : a) == 0) return i;
  cli_error("%s: options.%s: expected \"%s\" or \"%s\" (method ms)", file, v->string, a, b);
  return -1;
}

int opt_ms_options(const char* file, const cJSON* o, physMsOptions* opt, int* maxiter, double* tol, int* aware) {
  if (!cJSON_IsObject(o)) {
    cli_error("%s: options: expected an object", file);
    return 0;
  }
  const cJSON* v;
  cJSON_ArrayForEach(v, o) {
    const char* k = v->string;
    double x;
    int which = strcmp(k, "init") == 0      ? ms_choice(v, "rollout", "ddp", file)
                : strcmp(k, "hessian") == 0 ? ms_choice(v, "lbfgs", "gauss-newton", file)
                                            : -2;
    if (which == -1) return 0;
    if (which >= 0) {
      *(k[0] == 'i' ? &opt->init_ddp : &opt->gauss_newton) = which;
      continue;
    }
    if (strcmp(k, "complementarity") == 0) {
      if (!cJSON_IsBool(v)) {
        cli_error("%s: options.complementarity: expected true or false (method ms)", file);
        return 0;
      }
      *aware = cJSON_IsTrue(v);
      continue;
    }
    int ok = strcmp(k, "maxiter") == 0      ? ms_number(&x, v, 1, 100000, 1, file) && (*maxiter = (int)x, 1)
             : strcmp(k, "tol") == 0        ? ms_number(tol, v, 1e-15, 1, 0, file)
             : strcmp(k, "constr_tol") == 0 ? ms_number(&opt->constr_tol, v, 1e-15, 1, 0, file)
             : strcmp(k, "best_defect") == 0 ? ms_number(&opt->best_defect, v, 0, 1, 0, file)
             : strcmp(k, "print_level") == 0 ? ms_number(&x, v, 0, 12, 1, file) && (opt->print_level = (int)x, 1)
             : strcmp(k, "history") == 0    ? ms_number(&x, v, 1, 1000, 1, file) && (opt->history = (int)x, 1)
                                            : -1;
    if (ok == -1)
      cli_error("%s: options: unknown key '%s' (valid for method ms: maxiter, tol, constr_tol, print_level, history, "
                "init, hessian, best_defect, complementarity)", file, k);
    if (ok != 1) return 0;
  }
  return 1;
}

// one progress line per Ipopt iteration on stderr
static void ms_progress(void* ctx, int k, const physDdpIter* it, double inf_pr) {
  (void)ctx;
  opt_count_mark(k);
  if (cli_quiet) return;
  fprintf(stderr, "optimize: iter %3d  objective %.9g  defect %.3g  dual %.3g  mu %.3g  alpha %.3g  %.3f ms\n", k,
          it->cost, inf_pr, it->feedforward, it->mu, it->alpha, 1e3 * it->seconds);
}

physStatus opt_ms_plan(const physMsOptions* opt, physMsResult* res, physControlProblem* p, physData* d,
                       physLog* log) {
  physMsResult scratch = {0};
  return phys_ms_solve(p, d, opt, res ? res : &scratch, ms_progress, NULL, log);
}

void opt_ms_summary(const physControlProblem* p, const physMsResult* res) {
  if (!cli_quiet)
    fprintf(stderr, "optimize: ms %d iterations (ipopt: %s), returned iteration %d, %.3f s, objective %.9g, max "
            "defect %.3g, rollout cost %.9g, bound violation %g\n", p->niter, res->status_name, res->iterate,
            res->seconds, res->objective, res->defect, p->cost, res->violation);
}

void opt_ms_result(cJSON* r, const physControlProblem* p, const physMsResult* res) {
  cJSON* def = cJSON_CreateArray();
  for (int k = 0; k <= p->niter; k++) cJSON_AddItemToArray(def, cJSON_CreateNumber(res->defect_iter[k]));
  cJSON_AddStringToObject(r, "ipopt_status", res->status_name);
  cJSON_AddItemToObject(r, "defect_per_iteration", def);
  cJSON_AddNumberToObject(r, "objective", res->objective);
  cJSON_AddNumberToObject(r, "defect", res->defect);
  cJSON_AddNumberToObject(r, "drift", res->drift);
  cJSON_AddNumberToObject(r, "ddp_iterations", res->ddp_iterations);
  cJSON_AddNumberToObject(r, "returned_iteration", res->iterate);
  cJSON_AddNumberToObject(r, "relabelled_steps", res->relabelled);
  cJSON_AddNumberToObject(r, "time", res->seconds);
}

// optimize_shooting.c - `physid optimize` with method "lbfgsb" or "adam": single shooting on the rollout gradient
// (src/control/shooting.h); also the options reader and the dispatch every method beside DDP uses (optimize.h).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "optimize.h"

//---------------------------------------------------------------------------------------------------------
// options objects

// "a, b, c": the keys' names
static void key_list(char* s, size_t n, const optKey* keys, int nkeys) {
  s[0] = 0;
  for (int i = 0; i < nkeys; i++) {
    strncat(s, keys[i].name, n - strlen(s) - 1);
    if (i + 1 < nkeys) strncat(s, ", ", n - strlen(s) - 1);
  }
}

// value v of key k, checked against its kind and range (lo = 1e-300: positive; hi >= 1e300: no upper bound);
// 0 and a message otherwise
static int read_key(const char* file, optKey* k, const cJSON* v) {
  if (k->kind == OPT_BOOL) {
    if (cJSON_IsBool(v)) {
      k->value = cJSON_IsTrue(v);
      return 1;
    }
    cli_error("%s: options.%s: expected true or false", file, k->name);
    return 0;
  }
  double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (x >= k->lo && x <= k->hi && (k->kind != OPT_INTEGER || x == floor(x))) {
    k->value = x;
    return 1;
  }
  char range[96];
  int n = k->lo == 1e-300 ? snprintf(range, sizeof range, "> 0") : snprintf(range, sizeof range, ">= %g", k->lo);
  if (k->hi < 1e300) snprintf(range + n, sizeof range - (size_t)n, " and <= %g", k->hi);
  cli_error("%s: options.%s: expected %s %s", file, k->name, k->kind == OPT_INTEGER ? "an integer" : "a number",
            range);
  return 0;
}

int opt_read_keys(const char* file, const char* method, const cJSON* o, optKey* keys, int nkeys) {
  if (!o) return 1;
  if (!cJSON_IsObject(o)) {
    cli_error("%s: options: expected an object", file);
    return 0;
  }
  const cJSON* v;
  cJSON_ArrayForEach(v, o) {
    int i = 0;
    while (i < nkeys && strcmp(v->string, keys[i].name) != 0) i++;
    if (i == nkeys) {
      char list[512];
      key_list(list, sizeof list, keys, nkeys);
      cli_error("%s: options: unknown key '%s' (valid for method %s: %s)", file, v->string, method, list);
      return 0;
    }
    if (!read_key(file, &keys[i], v)) return 0;
    keys[i].given = 1;
  }
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// lbfgsb, adam

int opt_shooting_method(optMethod* mo, const char* name) {
  int adam = strcmp(name, "adam") == 0;
  if (!adam && strcmp(name, "lbfgsb") != 0) return 0;
  memset(mo, 0, sizeof *mo);
  mo->name = adam ? "adam" : "lbfgsb";
  mo->maxiter = 200, mo->tol = -1;
  phys_shooting_defaults(&mo->shoot);
  mo->shoot.method = adam ? PHYS_SHOOT_ADAM : PHYS_SHOOT_LBFGSB;
  return 1;
}

int opt_shooting_options(optMethod* mo, const char* file, const cJSON* o) {
  optKey k[] = {{"maxiter", OPT_INTEGER, 1, 100000, 0, 0}, {"tol", OPT_NUMBER, 0, 1, 0, 0},
                {"complementarity", OPT_BOOL, 0, 1, 0, 0},  {"lr", OPT_NUMBER, 1e-300, 1e300, 0, 0},
                {"beta1", OPT_NUMBER, 0, 0.999999, 0, 0},   {"beta2", OPT_NUMBER, 0, 0.999999999, 0, 0}};
  int nk = mo->shoot.method == PHYS_SHOOT_ADAM ? 6 : 3;   // lbfgsb: no Adam keys
  if (!opt_read_keys(file, mo->name, o, k, nk)) return 0;
  if (k[0].given) mo->maxiter = (int)k[0].value;
  if (k[1].given) mo->tol = k[1].value;
  mo->complementarity = k[2].given && k[2].value != 0;
  if (k[3].given) mo->shoot.lr = k[3].value;
  if (k[4].given) mo->shoot.beta1 = k[4].value;
  if (k[5].given) mo->shoot.beta2 = k[5].value;
  return 1;
}

// one progress line per iteration on stderr: the best cost, the largest |projected gradient| (Adam: its lr)
static void shooting_progress(void* ctx, int k, const physDdpIter* it) {
  const optMethod* mo = ctx;
  opt_count_mark(k);
  if (cli_quiet) return;
  fprintf(stderr, "optimize: %s iter %3d  cost %.9g  |grad| %.3g", mo->name, k, it->cost, it->feedforward);
  if (mo->shoot.method == PHYS_SHOOT_ADAM) fprintf(stderr, "  lr %.3g", it->alpha);
  fprintf(stderr, "  %.3f ms\n", 1e3 * it->seconds);
}

physStatus opt_method_solve(const optMethod* mo, physData* d, physControlProblem* p, physLog* log) {
  if (mo->sampling) return opt_sampling_solve(mo, d, p, log);
  return phys_shooting_solve(p, d, &mo->shoot, shooting_progress, (void*)mo, log);
}

void opt_method_result(cJSON* r, const optMethod* mo) {
  if (mo->sampling) {
    opt_sampling_result(r, mo);
    return;
  }
  cJSON* o = cJSON_AddObjectToObject(r, "options");
  cJSON_AddNumberToObject(o, "maxiter", mo->maxiter);
  cJSON_AddBoolToObject(o, "complementarity", mo->complementarity);
  if (mo->shoot.method == PHYS_SHOOT_ADAM) {
    cJSON_AddNumberToObject(o, "lr", mo->shoot.lr);
    cJSON_AddNumberToObject(o, "beta1", mo->shoot.beta1);
    cJSON_AddNumberToObject(o, "beta2", mo->shoot.beta2);
  }
}

// mpc_task.h - the pendulum swing-up and hold task of `physid mpc` and the helpers its tests share
// (test_cmd_mpc.c on the physid plant, test_oracle_mpc.c on the MuJoCo 2.2.2 plant); include after sh_run.h
// and test.h.
#ifndef PHYS_MPC_TASK_H
#define PHYS_MPC_TASK_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_scratch.h"

#define STEPS 400

// the swing-up and hold task with its outputs' names prefixed by tag and extra top-level keys (first: they
// take precedence over the same keys after them)
static inline void put_task(const char* name, const char* tag, const char* extra) {
  char text[2048];
  snprintf(text, sizeof text,
           "{%s \"model\": \"pendulum.xml\", \"horizon\": 100, \"method\": \"ddp\", \"steps\": %d, \"replan\": 5,\n"
           " \"init\": {\"qpos\": [0], \"qvel\": [0]},\n"
           " \"cost\": {\"running\": [{\"qpos\": [3.14159265], \"weight\": 10}, {\"qvel\": [0], \"weight\": 0.1}],\n"
           "          \"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], "
           "\"control\": 1e-3},\n"
           " \"options\": {\"maxiter\": 50},\n"
           " \"out\": {\"controls\": \"%su.csv\", \"trajectory\": \"%sx.csv\", \"result\": \"%sr.json\", \"html\": "
           "\"%s.html\"}}\n",
           extra, STEPS, tag, tag, tag, tag);
  put(name, text);
}

// 1 if s contains frag; prints s otherwise
static inline int has(const char* s, const char* frag) {
  if (strstr(s, frag)) return 1;
  fprintf(stderr, "  text lacks '%s':\n---\n%s---\n", frag, s);
  return 0;
}

// the rows of a trajectory CSV "t,q0,v0,u0" into q, v, u (up to max each); the number of rows
static inline int read_rows_max(const char* name, double* q, double* v, double* u, int max) {
  char* text = slurp(path(name));
  int n = 0;
  for (const char* p = strchr(text, '\n'); p && p[1] && n < max; p = strchr(p + 1, '\n'), n++) {
    double t;
    if (sscanf(p + 1, "%lf,%lf,%lf,%lf", &t, q + n, v + n, u + n) != 4) break;
  }
  free(text);
  return n;
}

// the rows of a run of STEPS steps
static inline int read_rows(const char* name, double* q, double* v, double* u) {
  return read_rows_max(name, q, v, u, STEPS + 1);
}

// run "physid mpc TASK" in the scratch folder (must succeed, its last progress line says last)
static inline void mpc_run(const char* task, const char* last) {
  char args[512];
  snprintf(args, sizeof args, "mpc %s", path(task));
  shRun r = run(args);
  CHECK_MSG(r.code == 0, "%s: exit %d: %s", task, r.code, r.err);
  CHECK(has(r.err, last));
  run_free(&r);
}

// a run of STEPS steps
static inline void mpc_ok(const char* task) {
  mpc_run(task, "mpc: step 400/400  t 4");
}

// the largest |q - pi| and |v| of rows k0..n-1
static inline void hold_error_n(const double* q, const double* v, int k0, int n, double* eq, double* ev) {
  *eq = *ev = 0;
  for (int k = k0; k < n; k++) *eq = fmax(*eq, fabs(q[k] - M_PI)), *ev = fmax(*ev, fabs(v[k]));
}

// the largest |q - pi| and |v| from row k0 on of a run of STEPS steps
static inline void hold_error(const double* q, const double* v, int k0, double* eq, double* ev) {
  hold_error_n(q, v, k0, STEPS + 1, eq, ev);
}

// a number of the result JSON
static inline double result_number(const char* name, const char* key) {
  char* text = slurp(path(name));
  cJSON* j = cJSON_Parse(text);
  const cJSON* v = cJSON_GetObjectItem(j, key);
  double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  cJSON_Delete(j);
  free(text);
  return x;
}

#endif  // PHYS_MPC_TASK_H

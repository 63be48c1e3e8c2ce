// mpc_task.h - the pendulum swing-up and hold task of `physid mpc` and the helpers its tests share
// (test_cmd_mpc.c on the physid plant, test_oracle_mpc.c on the MuJoCo 2.2.2 plant); include after sh_run.h
// and test.h.
#ifndef PHYS_MPC_TASK_H
#define PHYS_MPC_TASK_H

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

// a plant model in the folder sub/ of the scratch folder that refers to a file outside it (its folder's
// parent): an <include> (refused: exit 1 with the file, line, element and path, nothing written), a mesh
// asset (the same), for the plant kind given ("physid" or "mujoco"). The files it refers to exist.
static inline void check_plant_outside(const char* plant) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/sub", g_dir);
  CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
  put("inc.xml", "<mujoco><worldbody><body name=\"extra\" pos=\"1 0 2\"><geom type=\"sphere\" size=\"0.1\"/>"
                 "</body></worldbody></mujoco>\n");
  put("tet.stl", "solid t\nendsolid t\n");
  static const struct {
    const char *file, *element, *ref, *model;
  } c[] = {
      {"sub/inc_plant.xml", "<include>", "../inc.xml",
       "<mujoco model=\"outside\">\n  <worldbody>\n    <body name=\"bob\" pos=\"0 0 2\">\n      <joint name=\"swing\" "
       "type=\"hinge\" axis=\"0 1 0\"/>\n      <inertial pos=\"0 0 -1\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n"
       "    </body>\n  </worldbody>\n  <include file=\"../inc.xml\"/>\n  <actuator><motor joint=\"swing\"/></actuator>\n"
       "</mujoco>\n"},
      {"sub/mesh_plant.xml", "<mesh name='m'>", "../tet.stl",
       "<mujoco model=\"outside\">\n  <asset>\n    <mesh name=\"m\" file=\"../tet.stl\"/>\n  </asset>\n  <worldbody>\n"
       "    <body name=\"bob\" pos=\"0 0 2\">\n      <joint name=\"swing\" type=\"hinge\" axis=\"0 1 0\"/>\n"
       "      <inertial pos=\"0 0 -1\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n    </body>\n  </worldbody>\n"
       "  <actuator><motor joint=\"swing\"/></actuator>\n</mujoco>\n"},
  };
  for (int i = 0; i < 2; i++) {
    put(c[i].file, c[i].model);
    char extra[256], msg[512], args[512];
    snprintf(extra, sizeof extra, " \"plant\": \"%s\", \"plant_model\": \"%s\", \"steps\": 10,", plant, c[i].file);
    put_task("out.json", "out", extra);
    snprintf(args, sizeof args, "mpc %s", path("out.json"));
    shRun r = run(args);
    int line = i == 0 ? 8 : 3;
    snprintf(msg, sizeof msg, "%s:%d: %s: '%s' resolves outside the model folder '", c[i].file, line, c[i].element,
             c[i].ref);
    CHECK_MSG(r.code == 1 && has(r.err, msg), "%s plant, %s: exit %d", plant, c[i].file, r.code);
    CHECK(access(path("outu.csv"), F_OK) != 0 && access(path("outr.json"), F_OK) != 0);
    run_free(&r);
  }
}

#endif  // PHYS_MPC_TASK_H

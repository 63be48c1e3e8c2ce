// test_optimize_ms.c - `physid optimize TASK.json` with "method": "ms" (tools/optimize_ms.c) run as a user
// would (env PHYS_BIN): issue 13's task by multiple shooting reaches the top with defects below 1e-8, its
// controls replayed by `simulate --ctrl-file` reproduce the trajectory CSV byte for byte; a torque bound of
// 3 N m started from DDP's solution keeps every control inside; paper 001's drone takes off with
// "complementarity": true and stays on the floor without; two runs write identical bytes; bad options
// exit 1 naming the JSON path and write nothing. With --slow (CTest tools/test_optimize_ms_slow) only paper
// 001's catapult: examples/catapult/task.json as it is, the ball within 5 mm of its target at step 250.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"
#include "optimize_check.h"

// issue 13's task with "method": "ms"; outputs named by the suffix s
static void put_task(const char* name, const char* s, const char* extra) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"model\": \"pendulum.xml\", \"horizon\": %d, \"method\": \"ms\",%s\n"
           " \"init\": {\"qpos\": [0], \"qvel\": [0]},\n"
           " \"cost\": {\"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], "
           "\"control\": 1e-3},\n"
           " \"out\": {\"controls\": \"u%s.csv\", \"trajectory\": \"x%s.csv\", \"result\": \"r%s.json\"}}\n",
           extra[0] ? 400 : 200, extra, s, s, s);
  put(name, text);
}

// run optimize on the task; its exit code, stderr in *err (caller frees) if err
static int optimize_code(const char* task, char** err) {
  shRun r = optimize(task);
  int code = r.code;
  if (err) *err = strdup(r.err);
  run_free(&r);
  return code;
}

// the result JSON r<s>.json parsed (caller deletes)
static cJSON* result(const char* s) {
  char name[64];
  snprintf(name, sizeof name, "r%s.json", s);
  char* text = slurp(path(name));
  cJSON* j = cJSON_Parse(text);
  free(text);
  CHECK(j != NULL);
  return j;
}

static void test_swing_up(void) {
  put_task("ms.json", "", "");
  char* err;
  CHECK(optimize_code("ms.json", &err) == 0);
  CHECK(has(err, "optimize: iter   1  objective"));
  CHECK(has(err, "(ipopt: solved)"));
  free(err);
  char* x = slurp(path("x.csv"));
  double qT = last_row_value(x, 1);
  CHECK_MSG(fabs(qT - M_PI) < 1e-2, "final angle %.9g", qT);
  free(x);
  cJSON* j = result("");
  if (!j) return;
  const cJSON *cost = cJSON_GetObjectItem(j, "cost"), *def = cJSON_GetObjectItem(j, "defect_per_iteration");
  int n = cJSON_GetArraySize(cost);
  CHECK(n >= 2 && n == cJSON_GetArraySize(def) && n == cJSON_GetArraySize(cJSON_GetObjectItem(j, "seconds")));
  CHECK(n == cJSON_GetObjectItem(j, "iterations")->valueint + 1);
  CHECK(strcmp(cJSON_GetObjectItem(j, "method")->valuestring, "ms") == 0);
  CHECK(strcmp(cJSON_GetObjectItem(j, "stop")->valuestring, "solved") == 0);
  double defect = cJSON_GetObjectItem(j, "defect")->valuedouble, fc = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
  double obj = cJSON_GetObjectItem(j, "objective")->valuedouble;
  CHECK_MSG(defect < 1e-8, "max defect %.3g", defect);
  CHECK_MSG(fabs(fc - obj) <= 1e-9 * obj, "rollout cost %.17g, objective %.17g", fc, obj);
  CHECK(cJSON_GetObjectItem(j, "violation")->valuedouble == 0);
  printf("ms swing-up: %d iterations, objective %.9g, rollout cost %.9g, max defect %.3g, final angle %.9g, "
         "%.3f s\n", n - 1, obj, fc, defect, qT, cJSON_GetObjectItem(j, "time")->valuedouble);
  cJSON_Delete(j);
  // the controls replayed by simulate: the trajectory written, byte for byte
  check_replay(200, "u.csv", "x.csv");
  // determinism: a second run writes the same bytes
  put_task("ms2.json", "2", "");
  CHECK(optimize_code("ms2.json", NULL) == 0);
  const char* same[2][2] = {{"u.csv", "u2.csv"}, {"x.csv", "x2.csv"}};
  for (int i = 0; i < 2; i++) {
    char *a = slurp(path(same[i][0])), *b = slurp(path(same[i][1]));
    CHECK_MSG(a[0] && strcmp(a, b) == 0, "%s and %s differ", same[i][0], same[i][1]);
    free(a);
    free(b);
  }
}

// |u| <= 3 over 400 steps, started from DDP's solution: every control inside the bound, the top reached
static void test_bounded_from_ddp(void) {
  put_task("msb.json", "b", " \"ctrlrange\": [[-3, 3]], \"options\": {\"init\": \"ddp\", \"maxiter\": 300},");
  CHECK(optimize_code("msb.json", NULL) == 0);
  char *x = slurp(path("xb.csv")), *u = slurp(path("ub.csv"));
  double qT = last_row_value(x, 1), umax = 0;
  for (const char* p = strchr(u, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
    const char* c = strchr(p + 1, ',');
    if (c) umax = fmax(umax, fabs(strtod(c + 1, NULL)));
  }
  CHECK_MSG(fabs(qT - M_PI) < 1e-2, "final angle %.9g", qT);
  CHECK_MSG(umax <= 3 && umax > 2.99, "max |u| %.17g", umax);
  cJSON* j = result("b");
  if (j) {
    CHECK(cJSON_GetObjectItem(j, "violation")->valuedouble == 0);
    CHECK(cJSON_GetObjectItem(j, "ddp_iterations")->valueint > 0);
    printf("ms bounded from ddp: %d ddp + %d ms iterations (%s), rollout cost %.9g, max defect %.3g, final angle "
           "%.9g, max |u| %.17g\n", cJSON_GetObjectItem(j, "ddp_iterations")->valueint,
           cJSON_GetObjectItem(j, "iterations")->valueint, cJSON_GetObjectItem(j, "stop")->valuestring,
           cJSON_GetObjectItem(j, "final_cost")->valuedouble, cJSON_GetObjectItem(j, "defect")->valuedouble, qT, umax);
    cJSON_Delete(j);
  }
  free(x);
  free(u);
  check_replay(400, "ub.csv", "xb.csv");
}

// paper 001's drone at rest on the floor (examples/drone/run.sh's task) by ms with "complementarity": true
// (the complementarity-aware constraint Jacobian): solved, final height within 5 cm of 1 m and the cost below
// 1 % of the initial 45.125; with false (exact lcp Jacobians) it stays on the floor at 45.125
static void test_drone_aware(void) {
  char* model = slurp("models/drone.xml");
  put("drone.xml", model);
  free(model);
  for (int k = 0; k < 2; k++) {
    char text[1024], name[32];
    snprintf(text, sizeof text,
             "{\"model\": \"drone.xml\", \"horizon\": 100, \"method\": \"ms\", \"init\": {\"keyframe\": \"ground\"},\n"
             " \"cost\": {\"final\": [{\"qpos\": [0, 0, 1, 1, 0, 0, 0], \"weight\": [0, 0, 100, 0, 0, 0]},\n"
             "  {\"qvel\": [0, 0, 0, 0, 0, 0], \"weight\": [0, 0, 10, 0, 0, 0]}], \"control\": 1e-3},\n"
             " \"options\": {\"maxiter\": 100, \"complementarity\": %s},\n"
             " \"out\": {\"controls\": \"ud%d.csv\", \"trajectory\": \"xd%d.csv\", \"result\": \"rd%d.json\"}}\n",
             k ? "true" : "false", k, k, k);
    snprintf(name, sizeof name, "drone%d.json", k);
    put(name, text);
    CHECK(optimize_code(name, NULL) == 0);
    snprintf(name, sizeof name, "xd%d.csv", k);
    char* x = slurp(path(name));
    double z = last_row_value(x, 3);
    free(x);
    snprintf(name, sizeof name, "d%d", k);
    cJSON* j = result(name);
    if (!j) continue;
    double fc = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(j, "complementarity")) == k);
    printf("ms drone %s: %d iterations (%s), rollout cost %.9g, height %.6f\n", k ? "aware" : "exact",
           cJSON_GetObjectItem(j, "iterations")->valueint, cJSON_GetObjectItem(j, "stop")->valuestring, fc, z);
    if (k) {
      CHECK(strcmp(cJSON_GetObjectItem(j, "stop")->valuestring, "solved") == 0);
      CHECK_MSG(fc < 0.01 * 45.125 && fabs(z - 1) < 0.05, "aware: cost %.9g, height %.9g", fc, z);
    } else {
      CHECK_MSG(fabs(fc - 45.125) < 1e-3 && fabs(z - 0.05) < 1e-6, "exact: cost %.9g, height %.9g", fc, z);
    }
    cJSON_Delete(j);
  }
}

// bad options of method ms: exit 1, the message names the JSON path, no output file
static void test_errors(void) {
  static const badOptions c[] = {
      {"ms", "{\"lr\": 1}", "options: unknown key 'lr' (valid for method ms: maxiter, tol, constr_tol"},
      {"ms", "{\"history\": 0}", "options.history: expected an integer in [1, 1000] (method ms)"},
      {"ms", "{\"init\": \"zero\"}", "options.init: expected \"rollout\" or \"ddp\" (method ms)"},
      {"ms", "{\"constr_tol\": -1}", "options.constr_tol: expected a number in [1e-15, 1] (method ms)"},
      {"ms", "{\"print_level\": 2.5}", "options.print_level: expected an integer in [0, 12] (method ms)"},
      {"ms", "[1]", "options: expected an object"},
      {"ms", "{\"hessian\": \"newton\"}", "options.hessian: expected \"lbfgs\" or \"gauss-newton\" (method ms)"},
      {"ms", "{\"best_defect\": 2}", "options.best_defect: expected a number in [0, 1] (method ms)"},
      {"ms", "{\"complementarity\": 1}", "options.complementarity: expected true or false (method ms)"},
  };
  check_bad_options(c, sizeof c / sizeof c[0]);
}

// examples/catapult/task.json (its model path made the scratch copy's): multiple shooting from zero controls
// puts the ball's centre within 5 mm of the target (1.5, 0, 0.0495) at step 250, with defects below 1e-8 and
// the controls inside the motors' +-5 N m; the controls replay through simulate to the trajectory written
static void test_catapult(void) {
  char* model = slurp("models/catapult.xml");
  put("catapult.xml", model);
  free(model);
  char* task = slurp("examples/catapult/task.json");
  char* at = strstr(task, "\"../../models/catapult.xml\"");
  CHECK(at != NULL);
  if (!at) return;
  char text[2048];
  snprintf(text, sizeof text, "%.*s\"catapult.xml\"%s", (int)(at - task), task, at + strlen("\"../../models/catapult.xml\""));
  free(task);
  put("catapult.json", text);
  CHECK(optimize_code("catapult.json", NULL) == 0);
  char *x = slurp(path("x.csv")), *u = slurp(path("u.csv"));
  // the ball's slides are q3 (x) and q4 (z) from its body position (0.6695, 0, 0.0495)
  double bx = 0.6695 + last_row_value(x, 4), bz = 0.0495 + last_row_value(x, 5), umax = 0;
  double dist = hypot(bx - 1.5, bz - 0.0495);
  CHECK(strncmp(x, "t,q0,q1,q2,q3,q4,", 17) == 0);
  for (const char* p = strchr(u, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
    for (const char* c = strchr(p + 1, ','); c && c < strchr(p + 1, '\n'); c = strchr(c + 1, ','))
      umax = fmax(umax, fabs(strtod(c + 1, NULL)));
  CHECK_MSG(dist < 5e-3, "ball at (%.6f, %.6f), %.3g m from the target", bx, bz, dist);
  CHECK_MSG(umax <= 5, "max |u| %.17g", umax);
  cJSON* j = result("");
  if (j) {
    double defect = cJSON_GetObjectItem(j, "defect")->valuedouble;
    CHECK_MSG(defect < 1e-8, "max defect %.3g", defect);
    CHECK(cJSON_GetObjectItem(j, "violation")->valuedouble == 0);
    printf("catapult: %d iterations (returned %d, %s), %.2f s, final cost %.6g, ball at (%.6f, %.6f), %.3f mm from "
           "the target, max defect %.3g, max |u| %.4f\n", cJSON_GetObjectItem(j, "iterations")->valueint,
           cJSON_GetObjectItem(j, "returned_iteration")->valueint, cJSON_GetObjectItem(j, "stop")->valuestring,
           cJSON_GetObjectItem(j, "time")->valuedouble, cJSON_GetObjectItem(j, "final_cost")->valuedouble, bx, bz,
           1e3 * dist, defect, umax);
    cJSON_Delete(j);
  }
  free(x);
  free(u);
  char args[1024], mpath[256];
  snprintf(mpath, sizeof mpath, "%s", path("catapult.xml"));
  snprintf(args, sizeof args, "simulate %s --steps 250 --quiet --ctrl-file %s --out %s", mpath, path("u.csv"),
           path("replay.csv"));
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char *a = slurp(path("x.csv")), *b = slurp(path("replay.csv"));
  CHECK_MSG(a[0] && strcmp(a, b) == 0, "catapult: the replay differs from the optimized trajectory");
  free(a);
  free(b);
}

int main(int argc, char** argv) {
  int slow = argc > 1 && strcmp(argv[1], "--slow") == 0;
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_optimize_ms_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  char* model = slurp("models/pendulum_motor.xml");
  put("pendulum.xml", model);
  free(model);
  if (slow) {
    test_catapult();
  } else {
    test_swing_up();
    test_bounded_from_ddp();
    test_drone_aware();
    test_errors();
  }
  remove_scratch();
  return test_done();
}

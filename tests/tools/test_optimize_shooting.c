// test_optimize_shooting.c - `physid optimize` with methods "lbfgsb" and "adam" (tools/optimize_shooting.c) run
// as a user would (env PHYS_BIN): issue 13's task with method lbfgsb swings the pendulum up and its controls
// replay byte for byte through simulate --ctrl-file; the result JSON names the method and its options;
// examples/drone's contrast through the CLI (Adam with exact lcp gradients stalls at the initial cost, with
// "complementarity": true it takes off); bad options exit 1 with a message naming the key and write nothing.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"
#include "optimize_run.h"

// the result JSON of the scratch folder's file name (NULL if it does not parse)
static cJSON* result(const char* name) {
  char* text = slurp(path(name));
  cJSON* j = cJSON_Parse(text);
  free(text);
  return j;
}

// issue 13's task with method lbfgsb
static void test_pendulum(void) {
  put("task.json", "{\"model\": \"pendulum.xml\", \"horizon\": 200, \"method\": \"lbfgsb\",\n"
                   " \"init\": {\"qpos\": [0], \"qvel\": [0]},\n"
                   " \"cost\": {\"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], "
                   "\"control\": 1e-3},\n"
                   " \"out\": {\"controls\": \"u.csv\", \"trajectory\": \"x.csv\", \"result\": \"r.json\"}}\n");
  shRun r = optimize("task.json");
  CHECK(r.code == 0);
  CHECK(has(r.err, "optimize: lbfgsb iter   1  cost"));
  CHECK(has(r.err, "bound violation 0\n"));
  run_free(&r);
  cJSON* j = result("r.json");
  CHECK(j != NULL);
  if (!j) return;
  const cJSON* cost = cJSON_GetObjectItem(j, "cost");
  int n = cJSON_GetArraySize(cost);
  double J0 = cJSON_GetArrayItem(cost, 0)->valuedouble, J = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
  printf("lbfgsb: %d iterations, cost %.9g -> %.9g\n", n - 1, J0, J);
  CHECK(strcmp(cJSON_GetObjectItem(j, "method")->valuestring, "lbfgsb") == 0);
  CHECK(n == cJSON_GetArraySize(cJSON_GetObjectItem(j, "seconds")));
  CHECK(J == cJSON_GetArrayItem(cost, n - 1)->valuedouble);
  CHECK(J < 0.05);   // DDP: 0.0332
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "complementarity")));
  cJSON_Delete(j);
  // the controls replayed by simulate reproduce the trajectory
  char args[1024], model[256];
  snprintf(model, sizeof model, "%s", path("pendulum.xml"));
  snprintf(args, sizeof args, "simulate %s --steps 200 --quiet --ctrl-file %s --out %s", model, path("u.csv"),
           path("replay.csv"));
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char *a = slurp(path("x.csv")), *b = slurp(path("replay.csv"));
  CHECK_MSG(a[0] && strcmp(a, b) == 0, "the replayed controls differ from the trajectory");
  free(a);
  free(b);
}

// the drone task of examples/drone with method adam, with or without complementarity: the final cost
static double drone(const char* name, int aware) {
  char text[1024], task[64], res[64], options[128];
  snprintf(res, sizeof res, "%s_r.json", name);
  snprintf(options, sizeof options, "{\"maxiter\": 100, \"lr\": 0.1, \"complementarity\": %s}", aware ? "true" : "false");
  drone_task_text(text, sizeof text, "adam", options, res);
  snprintf(task, sizeof task, "%s.json", name);
  put(task, text);
  shRun r = optimize(task);
  CHECK(r.code == 0);
  run_free(&r);
  cJSON* j = result(res);
  CHECK(j != NULL);
  if (!j) return NAN;
  double J0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cost"), 0)->valuedouble;
  double J = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
  CHECK(J0 == 45.125);   // (1 - 0.05)^2 100 / 2: at rest 0.95 m below the target
  CHECK(cJSON_IsBool(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "complementarity")));
  printf("drone, adam, %s: cost %.9g -> %.9g\n", aware ? "complementarity-aware" : "exact lcp", J0, J);
  cJSON_Delete(j);
  return J;
}

static void test_drone(void) {
  CHECK(drone("exact", 0) == 45.125);
  CHECK(drone("aware", 1) < 0.05);
}

// bad options: exit 1, the message, no output
static void test_errors(void) {
  static const badOptions c[] = {
      {"lbfgsb", "{\"lr\": 0.1}", "options: unknown key 'lr' (valid for method lbfgsb: maxiter, tol, complementarity)"},
      {"adam", "{\"lr\": 0}", "options.lr: expected a number > 0"},
      {"adam", "{\"beta1\": 1}", "options.beta1: expected a number >= 0 and <= 0.999999"},
      {"adam", "{\"complementarity\": 1}", "options.complementarity: expected true or false"},
      {"lbfgsb", "{\"maxiter\": 2.5}", "options.maxiter: expected an integer >= 1 and <= 100000"},
      {"lbfgsb", "[1]", "options: expected an object"},
      {"newton", "{}", "method: expected one of \"ddp\", \"ms\", \"lbfgsb\", \"adam\", \"random\", \"cem\", \"mppi\""},
  };
  check_bad_options(c, (int)(sizeof c / sizeof c[0]));
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_optimize_shooting_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  const char* models[2][2] = {{"models/pendulum_motor.xml", "pendulum.xml"}, {"models/drone.xml", "drone.xml"}};
  for (int i = 0; i < 2; i++) {
    char* model = slurp(models[i][0]);
    put(models[i][1], model);
    free(model);
  }
  test_pendulum();
  test_drone();
  test_errors();
  remove_scratch();
  return test_done();
}

// test_optimize_sampling.c - `physid optimize` with methods "random", "cem" and "mppi" (tools/
// optimize_sampling.c) run as a user would (env PHYS_BIN): each method with threads 1 and 2 writes the same
// controls and trajectory bytes, lowers issue 13's swing-up cost, replays through simulate --ctrl-file, and
// records its options in the result JSON; bad options exit 1 with a message naming the key and write nothing.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"
#include "optimize_run.h"

// issue 13's swing-up (|u| <= 10) by method with options, threads t: outputs NAME_t_{u,x,r}.*
static void swing(const char* method, const char* options, int threads) {
  char text[2048], task[64];
  snprintf(text, sizeof text,
           "{\"model\": \"pendulum.xml\", \"horizon\": 200, \"method\": \"%s\", \"ctrlrange\": [[-10, 10]],\n"
           " \"cost\": {\"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], "
           "\"control\": 1e-3},\n"
           " \"options\": {%s, \"seed\": 5, \"threads\": %d},\n"
           " \"out\": {\"controls\": \"%s_%d_u.csv\", \"trajectory\": \"%s_%d_x.csv\", \"result\": \"%s_%d_r.json\"}}\n",
           method, options, threads, method, threads, method, threads, method, threads);
  snprintf(task, sizeof task, "%s_%d.json", method, threads);
  put(task, text);
  shRun r = optimize(task);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK(has(r.err, "iter   1  cost"));
  run_free(&r);
}

// the two thread counts' files of method are identical; the result's costs; the replay
static void check_method(const char* method, const char* options, double factor) {
  swing(method, options, 1);
  swing(method, options, 2);
  const char* ext[3] = {"u.csv", "x.csv", "r.json"};
  for (int e = 0; e < 2; e++) {   // (the result JSON's times differ)
    char f1[64], f2[64];
    snprintf(f1, sizeof f1, "%s_1_%s", method, ext[e]);
    snprintf(f2, sizeof f2, "%s_2_%s", method, ext[e]);
    char *a = slurp(path(f1)), *b = slurp(path(f2));
    CHECK_MSG(a[0] && strcmp(a, b) == 0, "%s: %s and %s differ", method, f1, f2);
    free(a);
    free(b);
  }
  char res[64];
  snprintf(res, sizeof res, "%s_2_r.json", method);
  char* text = slurp(path(res));
  cJSON* j = cJSON_Parse(text);
  free(text);
  CHECK(j != NULL);
  if (!j) return;
  double J0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cost"), 0)->valuedouble;
  double J = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
  printf("%s: cost %.9g -> %.9g\n", method, J0, J);
  CHECK(J < factor * J0);
  CHECK(strcmp(cJSON_GetObjectItem(j, "method")->valuestring, method) == 0);
  const cJSON* o = cJSON_GetObjectItem(j, "options");
  CHECK(cJSON_GetObjectItem(o, "threads")->valueint == 2 && cJSON_GetObjectItem(o, "seed")->valueint == 5);
  CHECK(cJSON_GetObjectItem(j, "violation")->valuedouble == 0);
  cJSON_Delete(j);
  char args[1024], model[256], u[64];
  snprintf(model, sizeof model, "%s", path("pendulum.xml"));
  snprintf(u, sizeof u, "%s_1_u.csv", method);
  snprintf(args, sizeof args, "simulate %s --steps 200 --quiet --ctrl-file %s --out %s", model, path(u),
           path("replay.csv"));
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char x[64];
  snprintf(x, sizeof x, "%s_1_x.csv", method);
  char *a = slurp(path(x)), *b = slurp(path("replay.csv"));
  CHECK_MSG(a[0] && strcmp(a, b) == 0, "%s: the replayed controls differ from the trajectory", method);
  free(a);
  free(b);
}

static void test_methods(void) {
  check_method("mppi", "\"samples\": 64, \"iterations\": 60, \"sigma\": 2, \"lambda\": 1", 0.02);
  check_method("cem", "\"samples\": 64, \"iterations\": 60, \"sigma\": 4, \"elite\": 0.2", 0.1);
  check_method("cem", "\"samples\": 64, \"iterations\": 60, \"sigma\": 4, \"elite\": 0.2, \"min_std\": 0.2, \"noise_beta\": 2", 0.1);
  check_method("mppi", "\"samples\": 64, \"iterations\": 60, \"sigma\": 2, \"lambda\": 1, \"noise_beta\": 1", 0.02);
  check_method("random", "\"samples\": 64, \"iterations\": 60, \"sigma\": 2", 0.02);
}

// bad options: exit 1, the message, no output
static void test_errors(void) {
  static const badOptions c[] = {
      {"random", "{\"elite\": 0.1}", "options: unknown key 'elite' (valid for method random: samples, iterations, sigma, seed, threads, noise_beta)"},
      {"cem", "{\"lambda\": 1}", "options: unknown key 'lambda' (valid for method cem: samples, iterations, sigma, seed, threads, elite, noise_beta, min_std)"},
      {"mppi", "{\"elite\": 0.5}", "options: unknown key 'elite' (valid for method mppi: samples, iterations, sigma, seed, threads, lambda, noise_beta)"},
      {"mppi", "{\"complementarity\": true}", "options: unknown key 'complementarity'"},
      {"cem", "{\"elite\": 1.5}", "options.elite: expected a number > 0 and <= 1"},
      {"cem", "{\"min_std\": -1}", "options.min_std: expected a number >= 0"},
      {"mppi", "{\"noise_beta\": 11}", "options.noise_beta: expected a number >= 0 and <= 10"},
      {"mppi", "{\"min_std\": 0.1}", "options: unknown key 'min_std'"},
      {"mppi", "{\"lambda\": -1}", "options.lambda: expected a number > 0"},
      {"mppi", "{\"threads\": 0}", "options.threads: expected an integer >= 1 and <= 64"},
      {"random", "{\"samples\": 0}", "options.samples: expected an integer >= 1 and <= 1e+06"},
      {"random", "{\"seed\": -1}", "options.seed: expected an integer >= 0 and <= 9.0072e+15"},
      {"random", "{\"sigma\": \"1\"}", "options.sigma: expected a number >= 0"},
  };
  check_bad_options(c, (int)(sizeof c / sizeof c[0]));
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_optimize_sampling_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  char* model = slurp("models/pendulum_motor.xml");
  put("pendulum.xml", model);
  free(model);
  test_methods();
  test_errors();
  remove_scratch();
  return test_done();
}

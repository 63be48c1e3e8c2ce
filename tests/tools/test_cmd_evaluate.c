// test_cmd_evaluate.c - `physid evaluate` (tools/cmd_evaluate.c), run as a user would (env PHYS_BIN):
//   - a model evaluated on its own simulated trajectory predicts it exactly (errors below 1e-12);
//   - a free ball falling under gravity g, recorded with gravity g + dg: semi-implicit Euler makes the error
//     after n steps from an observed state exactly |dg| dt^2 n (n + 1) / 2, so the full-rollout mean over
//     n = 1..N is |dg| dt^2 (sum n^2 + sum n) / (2N), the end error |dg| dt^2 N (N + 1) / 2, and horizon K
//     restarts the sum every K samples; no rotation error;
//   - --json writes the same figures; a data file that does not match the model exits 1 with no output; --json
//     onto the data or the model file is refused before any work.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"

// a free ball (no contacts) thrown with spin-free velocity, gravity g (m/s^2), dt 0.01
static const char* ball_model(const char* name, double g) {
  char text[1024];
  snprintf(text, sizeof text,
           "<mujoco><option timestep=\"0.01\" gravity=\"0 0 %.17g\"/><worldbody><body name=\"ball\" pos=\"0 0 1\">"
           "<freejoint name=\"ball\"/><geom type=\"sphere\" size=\"0.1\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/>"
           "</body></worldbody><keyframe><key qpos=\"0 0 1 1 0 0 0\" qvel=\"1 0 3 0 0 0\"/></keyframe></mujoco>\n",
           g);
  return put(name, text);
}

// the value of "channel.field" in the JSON file p
static double json_value(const char* p, const char* channel, const char* field) {
  char* text = slurp(p);
  cJSON* root = cJSON_Parse(text);
  cJSON* c = cJSON_GetObjectItemCaseSensitive(root, channel);
  cJSON* v = c ? cJSON_GetObjectItemCaseSensitive(c, field) : NULL;
  double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  cJSON_Delete(root);
  free(text);
  return x;
}

// sum_{n=1..N} dg dt^2 n (n + 1) / 2
static double err_sum(int N, double dg, double dt) {
  double s = 0;
  for (int n = 1; n <= N; n++) s += dg * dt * dt * n * (n + 1) / 2;
  return s;
}

static void test_exact_and_gravity(void) {
  char args[1024];
  shRun r;
  char truth[256], model[256], data[256];
  snprintf(truth, sizeof truth, "%s", ball_model("truth.xml", -9.81));
  snprintf(data, sizeof data, "%s", path("data.csv"));
  snprintf(args, sizeof args, "simulate '%s' --steps 50 --out '%s'", truth, data);
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  // the model itself: exact
  snprintf(args, sizeof args, "evaluate '%s' '%s' --json '%s'", truth, data, path("self.json"));
  r = run(args);
  CHECK(r.code == 0 && strstr(r.out, "position_m"));
  CHECK(json_value(path("self.json"), "position_m", "max") < 1e-12);
  CHECK(json_value(path("self.json"), "rotation_deg", "max") < 1e-9);
  run_free(&r);
  // gravity off by 0.1: the analytic error of semi-implicit Euler
  snprintf(model, sizeof model, "%s", ball_model("model.xml", -9.71));
  double dg = 0.1, dt = 0.01;
  snprintf(args, sizeof args, "evaluate '%s' '%s' --json '%s'", model, data, path("full.json"));
  r = run(args);
  CHECK(r.code == 0);
  CHECK_REL(json_value(path("full.json"), "position_m", "mean"), err_sum(50, dg, dt) / 50, 1e-9, 0);
  CHECK_REL(json_value(path("full.json"), "position_m", "end"), dg * dt * dt * 50 * 51 / 2, 1e-9, 0);
  CHECK(json_value(path("full.json"), "rotation_deg", "max") < 1e-9);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --horizon 10 --json '%s'", model, data, path("h10.json"));
  r = run(args);
  CHECK(r.code == 0);
  CHECK_REL(json_value(path("h10.json"), "position_m", "mean"), err_sum(10, dg, dt) / 10, 1e-9, 0);
  CHECK_REL(json_value(path("h10.json"), "position_m", "end"), dg * dt * dt * 10 * 11 / 2, 1e-9, 0);
  CHECK(json_value(path("h10.json"), "position_m", "samples") == 50);
  run_free(&r);
}

static void test_bad_input(void) {
  char args[1024];
  shRun r;
  char model[256], bad[256];
  snprintf(model, sizeof model, "%s", ball_model("model.xml", -9.81));
  snprintf(bad, sizeof bad, "%s", put("bad.csv", "t,foo\n0,1\n0.01,1\n"));
  snprintf(args, sizeof args, "evaluate '%s' '%s' --json '%s'", model, bad, path("bad.json"));
  r = run(args);
  CHECK(r.code == 1 && strstr(r.err, "bad.csv") && access(path("bad.json"), F_OK) != 0);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s'", model, path("no-such-folder"));
  r = run(args);
  CHECK(r.code == 1 && strstr(r.err, "no-such-folder"));
  run_free(&r);
  // --json onto the data file or the model: refused before anything is read, the input untouched
  char* before = slurp(bad);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --json '%s'", model, bad, bad);
  r = run(args);
  CHECK(r.code == 1 && strstr(r.err, "--json") && strstr(r.err, "the same file as the input"));
  char* after = slurp(bad);
  CHECK(strcmp(before, after) == 0);
  free(before), free(after);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --json '%s'", model, bad, model);
  r = run(args);
  CHECK(r.code == 1 && strstr(r.err, "the same file as the input"));
  run_free(&r);
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_cmd_evaluate_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  test_exact_and_gravity();
  test_bad_input();
  remove_scratch();
  return test_done();
}

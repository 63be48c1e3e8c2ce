// test_cmd_evaluate.c - `physid evaluate` (tools/cmd_evaluate.c), run as a user would (env PHYS_BIN):
//   - a model evaluated on its own simulated trajectory predicts it exactly (errors below 1e-12);
//   - a free ball falling under gravity g, recorded with gravity g + dg: semi-implicit Euler makes the error
//     after n steps from an observed state exactly |dg| dt^2 n (n + 1) / 2, so the full-rollout mean over
//     n = 1..N is |dg| dt^2 (sum n^2 + sum n) / (2N), the end error |dg| dt^2 N (N + 1) / 2, and horizon K
//     restarts the sum every K samples; no rotation error;
//   - the default substeps are identify's (sample interval / the model's timestep, printed): a 0.0025 s model on
//     100 Hz data takes 4 (error |g| (0.01 - 0.0025) t / 2 exactly), --substeps 1 overrides;
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

// a free ball (no contacts) thrown with spin-free velocity, gravity g (m/s^2), timestep dt
static const char* ball_model_dt(const char* name, double g, double dt) {
  char text[1024];
  snprintf(text, sizeof text,
           "<mujoco><option timestep=\"%.17g\" gravity=\"0 0 %.17g\"/><worldbody><body name=\"ball\" pos=\"0 0 1\">"
           "<freejoint name=\"ball\"/><geom type=\"sphere\" size=\"0.1\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/>"
           "</body></worldbody><keyframe><key qpos=\"0 0 1 1 0 0 0\" qvel=\"1 0 3 0 0 0\"/></keyframe></mujoco>\n",
           dt, g);
  return put(name, text);
}

// the ball with timestep 0.01
static const char* ball_model(const char* name, double g) { return ball_model_dt(name, g, 0.01); }

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

// the default substeps follow the model's timestep as identify's (printed): data at 100 Hz from the ball at
// 0.01 s, a model with timestep 0.0025 takes 4 substeps, and semi-implicit Euler's position after time t is
// q0 + v0 t + g (t^2 + h t) / 2, so the error against the 0.01 s recording is |g| (0.01 - 0.0025) t / 2: the
// end of 50 samples (t = 0.5) and the mean over t = 0.01 n; --substeps 1 given: one 0.01 s step, exact
static void test_default_substeps(void) {
  char args[1024], data[256], model[256];
  shRun r;
  snprintf(data, sizeof data, "%s", path("data100.csv"));
  snprintf(args, sizeof args, "simulate '%s' --steps 50 --out '%s'", ball_model("truth.xml", -9.81), data);
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  snprintf(model, sizeof model, "%s", ball_model_dt("fine.xml", -9.81, 0.0025));
  snprintf(args, sizeof args, "evaluate '%s' '%s' --json '%s'", model, data, path("sub.json"));
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.err, "physid: evaluate: substeps: 4 (the sample interval 0.01 s is 4 model "
                                          "timesteps of 0.0025 s; --substeps S to override)") &&
                strstr(r.out, "4 substeps per sample"), "%s", r.err);
  double e = 9.81 * 0.0075 / 2;
  CHECK_REL(json_value(path("sub.json"), "position_m", "end"), e * 0.5, 1e-9, 0);
  CHECK_REL(json_value(path("sub.json"), "position_m", "mean"), e * 0.01 * 51 / 2, 1e-9, 0);
  char* text = slurp(path("sub.json"));
  CHECK(strstr(text, "\"substeps\": 4,") != NULL);
  free(text);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --substeps 1 --json '%s'", model, data, path("one.json"));
  r = run(args);
  CHECK(r.code == 0 && !strstr(r.err, "substeps:") && strstr(r.out, "1 substep per sample"));
  CHECK(json_value(path("one.json"), "position_m", "max") < 1e-12);
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
  test_default_substeps();
  remove_scratch();
  return test_done();
}

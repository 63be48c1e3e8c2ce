// test_cmd_evaluate.c - `physid evaluate` (tools/cmd_evaluate.c), run as a user would (env PHYS_BIN):
//   - a model evaluated on its own simulated trajectory predicts it exactly (errors below 1e-12);
//   - a free ball falling under gravity g, recorded with gravity g + dg: semi-implicit Euler makes the error
//     after n steps from an observed state exactly |dg| dt^2 n (n + 1) / 2, so the full-rollout mean over
//     n = 1..N is |dg| dt^2 (sum n^2 + sum n) / (2N), the end error |dg| dt^2 N (N + 1) / 2, and horizon K
//     restarts the sum every K samples; no rotation error;
//   - the default substeps are identify's (sample interval / the model's timestep, printed): a 0.0025 s model on
//     100 Hz data takes 4 (error |g| (0.01 - 0.0025) t / 2 exactly), --substeps 1 overrides;
//   - --residual FILE (tools/physid.c, every command's model option): the ball's gravity error of 0.1 corrected by
//     a residual network whose output is the constant (0, 0, -0.1, 0, 0, 0) (zero weights, that bias): evaluate's
//     errors below 1e-12 again, and `simulate --residual` writes the truth's trajectory to 1e-12; a network of the
//     wrong sizes exits 1 naming the file and nothing is written, with --contact penalty exits 2;
//   - --json writes the same figures; a data file that does not match the model exits 1 with no output; --json
//     onto the data or the model file is refused before any work;
//   - paper 004's trajectory errors: a body at rest without gravity against samples moved by a known offset and
//     turned by a known rotation (30 degrees): position error |offset|, rotational error 30; two files of 4 and
//     2 predicted samples: the pooled mean and the mean over trajectories differ as computed by hand;
//   - --truth: a box 10 % longer in x with friction 0.27 against the true 0.05 m box with 0.18: volume error
//     0.1, friction error 0.5, in the table and the JSON; a true model with another body exits 1 naming it, with
//     no output; --json onto the true model is refused;
//   - --start fitted: identify's final loss reproduced on the fit's own data (test_start_fitted).
//   - --integrator pbd: the free ball predicted by the pbd step at N substeps, off by g dt^2 n (1 - 1/N) / 2 after
//     n steps exactly (test_integrator_pbd).
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

// the value of "channel.field" in the JSON file p ("channel" with field NULL)
static double json_value(const char* p, const char* channel, const char* field) {
  char* text = slurp(p);
  cJSON* root = cJSON_Parse(text);
  cJSON* c = cJSON_GetObjectItemCaseSensitive(root, channel);
  cJSON* v = c && field ? cJSON_GetObjectItemCaseSensitive(c, field) : c;
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


// a free box (half sizes hx 0.05 0.05, friction mu) without gravity above a floor it never reaches
static const char* box_model(const char* name, double hx, double mu, const char* body) {
  char text[1024];
  snprintf(text, sizeof text,
           "<mujoco><option timestep=\"0.01\" gravity=\"0 0 0\"/><worldbody><geom name=\"floor\" type=\"plane\" "
           "size=\"5 5 0.1\" friction=\"0 0 0\"/><body name=\"%s\" pos=\"0 0 1\"><freejoint name=\"%s\"/>"
           "<geom type=\"box\" size=\"%.17g 0.05 0.05\" mass=\"1\" friction=\"%.17g 0 0\"/></body></worldbody>"
           "</mujoco>\n", body, body, hx, mu);
  return put(name, text);
}

// a toss file in the ContactNets layout: sample 0 at (0, 0, 1) at rest with the identity orientation, samples
// 1..n moved by (dx, dy, 0) and turned by angle deg about the axis (1, 2, 2)/3, at rest
static const char* moved_file(const char* name, int n, double dx, double dy, double deg) {
  char text[4096];
  int k = snprintf(text, sizeof text, "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx_body,wy_body,wz_body\n"
                   "0,0,0,1,1,0,0,0,0,0,0,0,0,0\n");
  double h = deg * 3.14159265358979323846 / 360, c = cos(h), sn = sin(h);
  for (int i = 1; i <= n; i++)
    k += snprintf(text + k, sizeof text - k, "%.17g,%.17g,%.17g,1,%.17g,%.17g,%.17g,%.17g,0,0,0,0,0,0\n", 0.01 * i,
                  dx, dy, c, sn / 3, 2 * sn / 3, 2 * sn / 3);
  return put(name, text);
}

static void test_known_errors(void) {
  char args[1024], model[256];
  shRun r;
  snprintf(model, sizeof model, "%s", box_model("rest.xml", 0.05, 0.18, "box"));
  char cmd[512];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path("moved"));
  CHECK(system(cmd) == 0);
  moved_file("moved/a.csv", 4, 0.03, 0.04, 30);   // 4 predicted samples, 0.05 m, 30 degrees
  moved_file("moved/b.csv", 2, 0.12, 0.16, 30);   // 2 predicted samples, 0.2 m
  snprintf(args, sizeof args, "evaluate '%s' '%s' --files 1 --json '%s'", model, path("moved"), path("a.json"));
  r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK_NEAR(json_value(path("a.json"), "position_m", "traj_mean"), 0.05, 1e-15);
  CHECK_NEAR(json_value(path("a.json"), "position_m", "max"), 0.05, 1e-15);
  CHECK_NEAR(json_value(path("a.json"), "rotation_deg", "traj_mean"), 30, 1e-12);
  CHECK_NEAR(json_value(path("a.json"), "rotation_deg", "max"), 30, 1e-12);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --json '%s'", model, path("moved"), path("ab.json"));
  r = run(args);
  CHECK(r.code == 0 && strstr(r.out, "traj mean"));
  CHECK_NEAR(json_value(path("ab.json"), "position_m", "mean"), (4 * 0.05 + 2 * 0.2) / 6, 1e-15);
  CHECK_NEAR(json_value(path("ab.json"), "position_m", "traj_mean"), (0.05 + 0.2) / 2, 1e-15);
  CHECK(json_value(path("ab.json"), "position_m", "trajectories") == 2);
  run_free(&r);
}

// the value of parameter_errors.key in the JSON file p (NAN if absent or null)
static double json_param(const char* p, const char* key) { return json_value(p, "parameter_errors", key); }

static void test_truth(void) {
  char args[2048], model[256], truth[256], other[256], data[256];
  shRun r;
  snprintf(truth, sizeof truth, "%s", box_model("true_box.xml", 0.05, 0.18, "box"));
  snprintf(model, sizeof model, "%s", box_model("long_box.xml", 0.055, 0.27, "box"));
  snprintf(other, sizeof other, "%s", box_model("other_box.xml", 0.05, 0.18, "cube"));
  snprintf(data, sizeof data, "%s", moved_file("still.csv", 3, 0, 0, 0));
  snprintf(args, sizeof args, "evaluate '%s' '%s' --truth '%s' --json '%s'", model, data, truth, path("t.json"));
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.out, "parameter errors against") && strstr(r.out, "box "), "%s%s", r.out, r.err);
  CHECK_NEAR(json_param(path("t.json"), "volume"), 0.1, 1e-12);
  CHECK_NEAR(json_param(path("t.json"), "friction"), 0.5, 1e-15);
  CHECK(json_param(path("t.json"), "inertia") > 0);
  char* text = slurp(path("t.json"));
  CHECK(strstr(text, "\"bodies\": [") && strstr(text, "\"body\": \"box\"") && strstr(text, "\"symdiff_m3\": "));
  free(text);
  run_free(&r);
  // against itself: zeros
  snprintf(args, sizeof args, "evaluate '%s' '%s' --truth '%s' --json '%s'", truth, data, truth, path("s.json"));
  r = run(args);
  CHECK(r.code == 0);
  CHECK_NEAR(json_param(path("s.json"), "volume"), 0, 1e-12);
  CHECK(json_param(path("s.json"), "friction") == 0 && json_param(path("s.json"), "inertia") == 0);
  run_free(&r);
  // another body: exit 1 naming it, nothing written
  snprintf(args, sizeof args, "evaluate '%s' '%s' --truth '%s' --json '%s'", model, data, other, path("o.json"));
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "other_box.xml: truth model: body 1 is 'cube', in the model 'box'") &&
                access(path("o.json"), F_OK) != 0, "%s", r.err);
  run_free(&r);
  // --json onto the true model: refused, the file unchanged
  char* before = slurp(truth);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --truth '%s' --json '%s'", model, data, truth, truth);
  r = run(args);
  CHECK(r.code == 1 && strstr(r.err, "the same file as the input"));
  char* after = slurp(truth);
  CHECK(strcmp(before, after) == 0);
  free(before), free(after);
  run_free(&r);
}

// file names with a quote, a backslash and a tab are written to the JSON as escaped strings (the file parses and
// gives the names back): the writer put them in raw before
static void test_json_strings(void) {
  char args[2048], model[256], truth[256], data[256];
  shRun r;
  snprintf(truth, sizeof truth, "%s", box_model("tr\"ue\\box.xml", 0.05, 0.18, "box"));
  snprintf(model, sizeof model, "%s", box_model("mo\tdel.xml", 0.055, 0.27, "box"));
  snprintf(data, sizeof data, "%s", moved_file("still2.csv", 3, 0, 0, 0));
  snprintf(args, sizeof args, "evaluate '%s' '%s' --truth '%s' --json '%s'", model, data, truth, path("q.json"));
  r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  char* text = slurp(path("q.json"));
  cJSON* root = cJSON_Parse(text);
  CHECK_MSG(root != NULL, "%s", text);
  const cJSON* m = cJSON_GetObjectItemCaseSensitive(root, "model");
  const cJSON* pe = cJSON_GetObjectItemCaseSensitive(root, "parameter_errors");
  const cJSON* t = pe ? cJSON_GetObjectItemCaseSensitive(pe, "truth") : NULL;
  CHECK(cJSON_IsString(m) && strcmp(m->valuestring, model) == 0);
  CHECK(cJSON_IsString(t) && strcmp(t->valuestring, truth) == 0);
  cJSON_Delete(root);
  free(text);
  run_free(&r);
}

// a residual network file for the ball (18 features to 6 accelerations): zero weights, bias (0, 0, az, 0, 0, 0);
// nout outputs (6 fits the ball)
static const char* residual_file(const char* name, double az, int nout) {
  char text[4096];
  int k = snprintf(text, sizeof text, "{\"format\": \"physid-mlp\", \"version\": 1, \"role\": \"residual\", "
                   "\"input\": \"state-rotmat\", \"activation\": \"relu\", \"sizes\": [18, %d], "
                   "\"layers\": [{\"W\": [", nout);
  for (int i = 0; i < nout; i++)
    k += snprintf(text + k, sizeof text - k, "%s[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]", i ? "," : "");
  k += snprintf(text + k, sizeof text - k, "], \"b\": [");
  for (int i = 0; i < nout; i++) k += snprintf(text + k, sizeof text - k, "%s%.17g", i ? "," : "", i == 2 ? az : 0);
  snprintf(text + k, sizeof text - k, "]}]}\n");
  return put(name, text);
}

static void test_residual(void) {
  char args[1024], truth[256], model[256], data[256], res[256], sim[256];
  shRun r;
  snprintf(truth, sizeof truth, "%s", ball_model("truth.xml", -9.81));
  snprintf(model, sizeof model, "%s", ball_model("model.xml", -9.71));
  snprintf(data, sizeof data, "%s", path("data.csv"));
  snprintf(res, sizeof res, "%s", residual_file("res.json", -0.1, 6));
  snprintf(args, sizeof args, "simulate '%s' --steps 50 --out '%s'", truth, data);
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --residual '%s' --json '%s'", model, data, res, path("res_eval.json"));
  r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK(json_value(path("res_eval.json"), "position_m", "max") < 1e-12);
  run_free(&r);
  // simulate with the network: the truth's rows to 1e-12
  snprintf(sim, sizeof sim, "%s", path("sim.csv"));
  snprintf(args, sizeof args, "simulate '%s' --steps 50 --residual '%s' --out '%s' --quiet", model, res, sim);
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char *a = slurp(data), *b = slurp(sim), *pa = strchr(a, '\n'), *pb = strchr(b, '\n');
  double worst = 0;
  int nval = 0;
  while (pa && pb && *pa && *pb) {
    char *ea, *eb;
    double x = strtod(pa + 1, &ea), y = strtod(pb + 1, &eb);
    if (ea == pa + 1 || eb == pb + 1) break;
    worst = fmax(worst, fabs(x - y)), nval++;
    pa = ea, pb = eb;
  }
  CHECK_MSG(nval == 51 * 14 && worst < 1e-12, "simulate --residual vs the truth: %d values, worst %.3g", nval, worst);
  free(a), free(b);
  // bad networks
  snprintf(args, sizeof args, "simulate '%s' --steps 5 --residual '%s' --out '%s'", model,
           residual_file("res5.json", 0, 5), path("none.csv"));
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "res5.json") && strstr(r.err, "needs 18 (state features) to 6 (nv)") &&
                access(path("none.csv"), F_OK) != 0, "%d %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "simulate '%s' --steps 5 --residual '%s' --contact penalty --out '%s'", model, res,
           path("none.csv"));
  r = run(args);
  CHECK_MSG(r.code == 2 && strstr(r.err, "penalty") && access(path("none.csv"), F_OK) != 0, "%d %s", r.code, r.err);
  run_free(&r);
}

// --start fitted (issue 12): the segment starts fitted by identify's own evaluation (phys_fit_segment_starts). A fit
// of one real cube toss (identify's default: kstep on positions, starts fitted after two stages) evaluated on its own
// data with --start fitted --horizon 30 prints and writes identify's final loss (the same evaluation: to 1e-12
// relative; measured equal to the last bit or one ulp) and predicts better than from the recorded samples; the
// ball's own exact trajectory (after test_exact_and_gravity): loss below 1e-20 and errors below 1e-12; with
// --end-to-end exit 2, a bad choice exit 2
static void test_start_fitted(void) {
  char args[1024], fit[256], model[256], efit[256], erec[256];
  snprintf(fit, sizeof fit, "%s", path("fit.json"));
  snprintf(model, sizeof model, "%s", path("fitted_cube.xml"));
  snprintf(args, sizeof args, "identify models/cube.xml data/cube_toss --files 1 --param friction:cube:max=2 --param "
           "restitution:cube --quiet --out '%s' --write-model '%s'", fit, model);
  shRun r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  char* text = slurp(fit);
  cJSON* root = cJSON_Parse(text);
  double loss = cJSON_GetNumberValue(cJSON_GetObjectItem(root, "loss"));
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(root, "fit_start")) && loss > 0);
  cJSON_Delete(root);
  free(text);
  snprintf(efit, sizeof efit, "%s", path("efit.json"));
  snprintf(args, sizeof args, "evaluate '%s' data/cube_toss --files 1 --start fitted --horizon 30 --json '%s'", model,
           efit);
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.out, "segment starts fitted as identify fits them") &&
            strstr(r.out, "loss (identify's: kstep on positions, weights 1000 100 0, segment starts fitted): "), "%s%s",
            r.out, r.err);
  run_free(&r);
  double eloss = json_value(efit, "fit_loss", NULL);
  printf("--start fitted on the fit's own toss: loss %.17g, identify's %.17g\n", eloss, loss);
  CHECK_REL(eloss, loss, 1e-12, 0);
  snprintf(erec, sizeof erec, "%s", path("erec.json"));
  snprintf(args, sizeof args, "evaluate '%s' data/cube_toss --files 1 --horizon 30 --json '%s' --quiet", model, erec);
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  double pf = json_value(efit, "position_m", "mean"), pr = json_value(erec, "position_m", "mean");
  printf("position error over 30 samples: %.4g m from the fitted starts, %.4g m from the recorded samples\n", pf, pr);
  CHECK(pf < pr);
  // exact data (test_exact_and_gravity's ball and its own trajectory): nothing to fit
  char truth[256], data[256];
  snprintf(truth, sizeof truth, "%s", path("truth.xml"));
  snprintf(data, sizeof data, "%s", path("data.csv"));
  snprintf(args, sizeof args, "evaluate '%s' '%s' --start fitted --horizon 10 --json '%s'", truth, data,
           path("fself.json"));
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  CHECK(json_value(path("fself.json"), "fit_loss", NULL) < 1e-20);
  CHECK(json_value(path("fself.json"), "position_m", "max") < 1e-12);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --start fitted --end-to-end '%s'", truth, data, data);
  r = run(args);
  CHECK_MSG(r.code == 2 && strstr(r.err, "--start fitted fits the model's segment starts"), "%d %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --start maybe", truth, data);
  r = run(args);
  CHECK(r.code == 2 && strstr(r.err, "--start must be one of recorded|fitted"));
  run_free(&r);
}

// --integrator pbd (issue 17): the free ball's own trajectory (semi-implicit Euler at dt) predicted by the pbd step
// with N substeps, which is semi-implicit Euler at dt / N for a free body: after n steps the height differs by
// g dt^2 n (1 - 1/N) / 2 exactly, so the end error of a 50-step rollout is that at n = 50 and the mean over
// n = 1..50 that at n = 25.5; with --pbd-substeps 1 the prediction is exact again
static void test_integrator_pbd(void) {
  char args[1024], truth[256], data[256];
  snprintf(truth, sizeof truth, "%s", ball_model("pbd_truth.xml", -9.81));
  snprintf(data, sizeof data, "%s", path("pbd_data.csv"));
  snprintf(args, sizeof args, "simulate '%s' --steps 50 --out '%s'", truth, data);
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  double k = 9.81 * 0.01 * 0.01 * (1 - 1.0 / 4) / 2;
  snprintf(args, sizeof args, "evaluate '%s' '%s' --integrator pbd --pbd-substeps 4 --json '%s'", truth, data,
           path("pbd.json"));
  r = run(args);
  CHECK(r.code == 0);
  CHECK_REL(json_value(path("pbd.json"), "position_m", "end"), k * 50, 1e-9, 0);
  CHECK_REL(json_value(path("pbd.json"), "position_m", "mean"), k * 25.5, 1e-9, 0);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --integrator pbd --pbd-substeps 1 --json '%s'", truth, data,
           path("pbd1.json"));
  r = run(args);
  CHECK(r.code == 0 && json_value(path("pbd1.json"), "position_m", "max") < 1e-12);
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
  test_known_errors();
  test_truth();
  test_json_strings();
  test_residual();
  test_start_fitted();
  test_integrator_pbd();
  remove_scratch();
  return test_done();
}

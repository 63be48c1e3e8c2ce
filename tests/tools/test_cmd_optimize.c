// test_cmd_optimize.c - `physid optimize TASK.json` run as a user would (env PHYS_BIN): issue 13's task
// verbatim swings the pendulum up (final angle within 1e-2 of pi); a torque bound of 3 N m over 400 steps still
// swings it up with every control inside the bound; the controls CSV replayed by `simulate --ctrl-file`
// reproduces the trajectory CSV byte for byte; two runs write identical bytes; bad task files exit 1 with a
// message naming the JSON path and write nothing; paper 001's drone (examples/drone's task) by ddp: with exact
// lcp Jacobians it stops at once (stop "feedforward", the reason in words in the JSON and on stderr), with
// "complementarity": true it takes off; the stall rule's stop and reason.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"
#include "optimize_check.h"

#include "control_scratch.h"

// issue 13's task, verbatim
static const char* const g_task =
    "{\"model\": \"pendulum.xml\", \"horizon\": 200, \"method\": \"ddp\",\n"
    " \"init\": {\"qpos\": [0], \"qvel\": [0]},\n"
    " \"cost\": {\"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], \"control\": 1e-3},\n"
    " \"out\": {\"controls\": \"u.csv\", \"trajectory\": \"x.csv\", \"result\": \"r.json\"}}\n";

// column col of the last row of the scratch file name
static double file_last_value(const char* name, int col) {
  char* x = slurp(path(name));
  double v = last_row_value(x, col);
  free(x);
  return v;
}

// the largest |u| of a controls CSV "t,u0" (one actuator)
static double max_abs_control(const char* text) {
  double m = 0;
  const char* p = strchr(text, '\n');
  while (p && p[1]) {
    const char* c = strchr(p + 1, ',');
    if (!c) break;
    m = fmax(m, fabs(strtod(c + 1, NULL)));
    p = strchr(p + 1, '\n');
  }
  return m;
}

// the HTML page name: complete, self-contained (no script, no fetched resource), the cost plot per what
// with npoints points, the control u0 and nplots line plots in all
static void check_page(const char* name, const char* what, int npoints, int nplots) {
  char* h = slurp(path(name));
  char title[64];
  snprintf(title, sizeof title, ">cost per %s (log scale)</text>", what);
  CHECK(strncmp(h, "<!DOCTYPE html>\n", 16) == 0);
  CHECK(has(h, "</body></html>\n"));
  CHECK(has(h, title));
  CHECK(has(h, ">u0 (actuator 'torque')</text>"));
  CHECK(has(h, ">q0</text>") && has(h, ">v0</text>"));
  CHECK(!strstr(h, "<script") && !strstr(h, "src=") && !strstr(h, "href") && !strstr(h, "url("));
  int n = 0, pts = 0;
  for (const char* c = strstr(h, "<polyline"); c; c = strstr(c + 1, "<polyline")) n++;
  const char* first = strstr(h, "points='");   // the cost plot's points come first
  for (const char* c = first ? first + 8 : NULL; c && *c != '\''; c++) pts += *c == ',';
  CHECK_MSG(n == nplots && pts == npoints, "%s: %d plots, %d cost points", name, n, pts);
  free(h);
}

static void test_example(void) {
  put("task.json", g_task);
  shRun r = optimize("task.json");
  CHECK(r.code == 0);
  CHECK(has(r.err, "optimize: iter   1  cost"));
  CHECK(has(r.err, "(stop: cost)"));
  run_free(&r);
  char* x = slurp(path("x.csv"));
  double qT = last_row_value(x, 1);
  CHECK_MSG(fabs(qT - M_PI) < 1e-2, "final angle %.9g", qT);
  CHECK(strncmp(x, "t,q0,v0,u0\n", 11) == 0);
  free(x);
  char* u = slurp(path("u.csv"));
  CHECK(strncmp(u, "t,u0\n0,", 7) == 0);
  free(u);
  // the result: cost per iteration falling to final_cost, times, no violation (unbounded)
  char* text = slurp(path("r.json"));
  cJSON* j = cJSON_Parse(text);
  CHECK(j != NULL);
  const cJSON *cost = cJSON_GetObjectItem(j, "cost"), *secs = cJSON_GetObjectItem(j, "seconds");
  int n = cJSON_GetArraySize(cost);
  CHECK(n >= 2 && n == cJSON_GetArraySize(secs) && n == cJSON_GetObjectItem(j, "iterations")->valueint + 1);
  for (int k = 1; k < n; k++) CHECK(cJSON_GetArrayItem(cost, k)->valuedouble < cJSON_GetArrayItem(cost, k - 1)->valuedouble);
  CHECK(cJSON_GetObjectItem(j, "final_cost")->valuedouble == cJSON_GetArrayItem(cost, n - 1)->valuedouble);
  CHECK(cJSON_GetObjectItem(j, "violation")->valuedouble == 0);
  // the work counters: the initial rollout's 200 steps, then per iteration one linearization of the 200 steps
  // and whole rollouts (the line search's, the linearization's replay)
  const cJSON *steps = cJSON_GetObjectItem(j, "steps"), *lin = cJSON_GetObjectItem(j, "linearizations");
  CHECK(cJSON_GetArraySize(steps) == n && cJSON_GetArraySize(lin) == n);
  CHECK(n > 0 && cJSON_GetArrayItem(steps, 0)->valuedouble == 200 && cJSON_GetArrayItem(lin, 0)->valuedouble == 0);
  for (int k = 1; k < n; k++) {
    double ds = cJSON_GetArrayItem(steps, k)->valuedouble - cJSON_GetArrayItem(steps, k - 1)->valuedouble;
    CHECK_MSG(cJSON_GetArrayItem(lin, k)->valuedouble == 200.0 * k, "iteration %d: linearizations", k);
    CHECK_MSG(ds >= 200 && fmod(ds, 200) == 0, "iteration %d: %g steps", k, ds);
  }
  printf("example: %d iterations, cost %.9g -> %.9g, final angle %.9g\n", n - 1, cJSON_GetArrayItem(cost, 0)->valuedouble,
         cJSON_GetArrayItem(cost, n - 1)->valuedouble, qT);
  cJSON_Delete(j);
  free(text);
  check_replay(200, "u.csv", "x.csv");
  // determinism: a second run writes the same controls and trajectory bytes
  put("task2.json", "{\"model\": \"pendulum.xml\", \"horizon\": 200, \"method\": \"ddp\",\n"
                    " \"init\": {\"qpos\": [0], \"qvel\": [0]},\n"
                    " \"cost\": {\"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], "
                    "\"control\": 1e-3},\n"
                    " \"out\": {\"controls\": \"u2.csv\", \"trajectory\": \"x2.csv\", \"result\": \"r2.json\", "
                    "\"html\": \"p2.html\"}}\n");
  r = optimize("task2.json");
  CHECK(r.code == 0);
  run_free(&r);
  check_page("p2.html", "iteration", 24, 4);
  const char* same[2][2] = {{"u.csv", "u2.csv"}, {"x.csv", "x2.csv"}};
  for (int i = 0; i < 2; i++) {
    char *a = slurp(path(same[i][0])), *b = slurp(path(same[i][1]));
    CHECK_MSG(a[0] && strcmp(a, b) == 0, "%s and %s differ", same[i][0], same[i][1]);
    free(a);
    free(b);
  }
}

// run a task that must succeed; the final angle of its trajectory file xfile (NAN if absent)
static double run_final_angle(const char* task, const char* xfile) {
  shRun r = optimize(task);
  CHECK(r.code == 0);
  CHECK(has(r.err, "bound violation 0\n"));
  run_free(&r);
  return file_last_value(xfile, 1);
}

// |u| <= 3 N m, a third of the torque that holds the pendulum level: it pumps, over 400 steps (4 s)
static void test_bounded(void) {
  put("bounded.json", "{\"model\": \"pendulum.xml\", \"horizon\": 400, \"ctrlrange\": [[-3, 3]],\n"
                      " \"cost\": {\"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], "
                      "\"control\": 1e-3},\n"
                      " \"out\": {\"controls\": \"ub.csv\", \"trajectory\": \"xb.csv\", \"result\": \"rb.json\"}}\n");
  double qT = run_final_angle("bounded.json", "xb.csv");
  char* u = slurp(path("ub.csv"));
  double umax = max_abs_control(u);
  CHECK_MSG(fabs(qT - M_PI) < 1e-2, "final angle %.9g", qT);
  CHECK_MSG(umax == 3, "max |u| %.17g", umax);   // the bound is reached and never passed
  printf("bounded: final angle %.9g, max |u| %g\n", qT, umax);
  free(u);
  check_replay(400, "ub.csv", "xb.csv");
}

// a site term: the tip to the top (0, 0, 3) from 0.1 rad (straight down the distance is stationary)
static void test_site(void) {
  put("site.json", "{\"model\": \"pendulum.xml\", \"horizon\": 200, \"init\": {\"qpos\": [0.1]},\n"
                   " \"cost\": {\"final\": [{\"site\": \"tip\", \"pos\": [0, 0, 3], \"weight\": 100}, "
                   "{\"qvel\": [0], \"weight\": 10}], \"control\": 1e-3},\n"
                   " \"out\": {\"trajectory\": \"xs.csv\"}}\n");
  double qT = run_final_angle("site.json", "xs.csv");
  CHECK_MSG(fabs(qT - M_PI) < 1e-2, "site: final angle %.9g", qT);
  printf("site: final angle %.9g\n", qT);
}

// the scratch folder's pendulum.xml with text inserted before the first marker, as file name; 0 if no marker
static int put_model(const char* name, const char* marker, const char* text) {
  char* model = slurp(path("pendulum.xml"));
  char* at = strstr(model, marker);
  CHECK(at != NULL);
  if (at) {
    char out[4096];
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - model), model, text, at);
    put(name, out);
  }
  free(model);
  return at != NULL;
}

// body and velocity terms: a body at the tip to the top (0, 0, 3) and the tip site's velocity to 0 at the end,
// from 0.1 rad
static void test_body_velocity(void) {
  if (!put_model("pendend.xml", "    </body>", "      <body name=\"end\" pos=\"0 0 -1\"><inertial pos=\"0 0 0\" "
                 "mass=\"1e-6\" diaginertia=\"1e-9 1e-9 1e-9\"/></body>\n"))
    return;
  put("body.json", "{\"model\": \"pendend.xml\", \"horizon\": 200, \"init\": {\"qpos\": [0.1]},\n"
                   " \"cost\": {\"final\": [{\"body\": \"end\", \"pos\": [0, 0, 3], \"weight\": 100}, "
                   "{\"site\": \"tip\", \"vel\": [0, 0, 0], \"weight\": 10}], \"control\": 1e-3},\n"
                   " \"out\": {\"trajectory\": \"xbody.csv\"}}\n");
  double qT = run_final_angle("body.json", "xbody.csv");
  double vT = file_last_value("xbody.csv", 2);
  CHECK_MSG(fabs(qT - M_PI) < 1e-2 && fabs(vT) < 5e-2, "body: final angle %.9g, velocity %.9g", qT, vT);
  printf("body and velocity terms: final angle %.9g, angular velocity %.3g\n", qT, vT);
}

// without "init" the start is simulate's default, the model's keyframe 0; "dt" overrides the timestep: the
// controls replayed by simulate with the same --dt reproduce the trajectory byte for byte
static void test_keyframe_dt(void) {
  if (!put_model("keyed.xml", "  <actuator>", "  <keyframe><key name=\"tilted\" qpos=\"0.5\" qvel=\"-1\"/></keyframe>\n"))
    return;
  put("keyed.json", "{\"model\": \"keyed.xml\", \"horizon\": 50, \"dt\": 0.02,\n"
                    " \"cost\": {\"final\": [{\"qpos\": [1], \"weight\": 10}], \"control\": 0.1},\n"
                    " \"out\": {\"controls\": \"uk.csv\", \"trajectory\": \"xk.csv\"}}\n");
  shRun r = optimize("keyed.json");
  CHECK(r.code == 0);
  run_free(&r);
  char* x = slurp(path("xk.csv"));
  CHECK(has(x, "\n0,0.5,-1,"));   // row 0: the keyframe's state
  CHECK(has(x, "\n1.0000000000000004,"));   // 50 steps of 0.02 s (summed as the step sums them)
  free(x);
  char args[1024], model_path[256];
  snprintf(model_path, sizeof model_path, "%s", path("keyed.xml"));
  snprintf(args, sizeof args, "simulate %s --steps 50 --dt 0.02 --quiet --ctrl-file %s --out %s", model_path,
           path("uk.csv"), path("replay.csv"));
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char *a = slurp(path("xk.csv")), *b = slurp(path("replay.csv"));
  CHECK_MSG(a[0] && strcmp(a, b) == 0, "keyed: replay differs");
  free(a);
  free(b);
}

// bad task files: exit 1, the message names the JSON path, no output file
static void test_errors(void) {
  static const char* const head = "{\"model\": \"pendulum.xml\", \"horizon\": 10, ";
  static const char* const tail = "\"out\": {\"controls\": \"bad_u.csv\"}}";
  static const struct {
    const char* body;
    const char* msg;
  } c[] = {
      {"\"horizon2\": 3, ", "bad.json: the task: unknown key 'horizon2' (valid: model, add, dt, horizon, method"},
      {"\"cost\": {\"final\": [{\"qpos\": [3], \"wieght\": 1}]}, ", "bad.json: cost.final[0]: unknown key 'wieght'"},
      {"\"cost\": {\"final\": [{\"qpos\": [3, 1], \"weight\": 1}]}, ",
       "bad.json: cost.final[0].qpos: 2 values, expected 1 (nq of model 'pendulum_motor')"},
      {"\"cost\": {\"running\": [{\"qvel\": [0], \"weight\": -1}]}, ",
       "bad.json: cost.running[0].weight: expected a finite number >= 0"},
      {"\"cost\": {\"final\": [{\"qpos\": [3], \"weight\": 1}, {\"qpos\": [2], \"weight\": 1}]}, ",
       "bad.json: cost.final[1]: a second qpos term in this list"},
      {"\"cost\": {\"control\": [1, 2]}, ", "bad.json: cost.control: 2 values, expected 1 (nu of model 'pendulum_motor')"},
      {"\"ctrlrange\": [[1, -1]], ", "bad.json: ctrlrange[0]: infeasible bounds [1, -1] (lower > upper)"},
      {"\"ctrlrange\": [[1, 2], [0, 1]], ", "bad.json: ctrlrange: expected an array of 1 [lower, upper] pairs"},
      {"\"init\": {\"qvel\": [0, 0]}, ", "bad.json: init.qvel: 2 values, expected 1 (nv of model 'pendulum_motor')"},
      {"\"init\": {\"keyframe\": \"home\"}, ", "bad.json: init.keyframe: no such keyframe in model 'pendulum_motor'"},
      {"\"plot\": [\"q0\", \"v1\"], ", "bad.json: plot[1]: expected a state coordinate of model 'pendulum_motor': q0..q0 or v0..v0"},
      {"\"method\": \"sqp\", ", "bad.json: method: expected one of \"ddp\", \"ms\", \"lbfgsb\""},
      {"\"options\": {\"maxiter\": 0}, ", "bad.json: options.maxiter: expected an integer in [1, 100000]"},
      {"\"options\": {\"regularization\": \"states\"}, ",
       "bad.json: options.regularization: expected \"control\" or \"state\""},
      {"\"options\": {\"complementarity\": 1}, ", "bad.json: options.complementarity: expected true or false"},
      {"\"options\": {\"stall\": 0}, ", "bad.json: options.stall: expected an integer in [1, 100000]"},
      {"\"options\": {\"mu_max\": 0}, ", "bad.json: options.mu_max: expected a number in [1e-06, 1e+300]"},
      {"\"options\": {\"stall_tol\": 2}, ", "bad.json: options.stall_tol: expected a number in [0, 1]"},
      {"\"options\": {\"lr\": 1}, ",
       "bad.json: options: unknown key 'lr' (valid: maxiter, tol, regularization, complementarity, mu_max, stall, "
       "stall_tol)"},
      {"\"out\": {\"control\": \"u.csv\"}, ", "bad.json: out: unknown key 'control' (valid: controls, trajectory, result, html)"},
      {"\"cost\": {\"final\": [{\"site\": \"nope\", \"pos\": [0, 0, 3], \"weight\": 1}]}, ",
       "bad.json: cost.final[0].site: no site 'nope' in model 'pendulum_motor'"},
      {"\"cost\": {\"final\": [{\"site\": \"tip\", \"pos\": [0, 3], \"weight\": 1}]}, ",
       "bad.json: cost.final[0].pos: 2 values, expected 3 (a world position)"},
      {"\"cost\": {\"final\": [{\"qpos\": [1], \"pos\": [0, 0, 3], \"weight\": 1}]}, ",
       "bad.json: cost.final[0]: expected exactly one of qpos, qvel, site or body (with exactly one of pos, vel)"},
      {"\"cost\": {\"final\": [{\"site\": \"tip\", \"pos\": [0, 0, 3], \"vel\": [0, 0, 0], \"weight\": 1}]}, ",
       "bad.json: cost.final[0]: expected exactly one of qpos, qvel, site or body (with exactly one of pos, vel)"},
      {"\"cost\": {\"running\": [{\"body\": \"nobody\", \"vel\": [0, 0, 0], \"weight\": 1}]}, ",
       "bad.json: cost.running[0].body: no body 'nobody' in model 'pendulum_motor'"},
      {"\"cost\": {\"final\": [{\"body\": \"world\", \"pos\": [0, 0, 0], \"weight\": 1}]}, ",
       "bad.json: cost.final[0].body: 'world' is the world: it does not move"},
      {"\"cost\": {\"final\": [{\"body\": \"bob\", \"vel\": [0, 0], \"weight\": 1}]}, ",
       "bad.json: cost.final[0].vel: 2 values, expected 3 (a world velocity)"},
  };
  char text[1024];
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    snprintf(text, sizeof text, "%s%s%s", head, c[i].body, tail);
    put("bad.json", text);
    shRun r = optimize("bad.json");
    CHECK_MSG(r.code == 1 && has(r.err, c[i].msg), "case %zu: exit %d", i, r.code);
    CHECK(access(path("bad_u.csv"), F_OK) != 0);
    run_free(&r);
  }
  // a missing horizon or model, a malformed file, a missing model file, a model without actuators, an output
  // that is the model or another output (paths as resolved from the task's folder)
  const char* other[][2] = {
      {"{\"model\": \"pendulum.xml\"}", "bad.json: horizon: missing"},
      {"{\"horizon\": 5}", "bad.json: model: missing"},
      {"{\"model\": \"pendulum.xml\",\n \"horizon\": }", "bad.json:2: not a JSON object (malformed JSON)"},
      {"{\"model\": \"nothere.xml\", \"horizon\": 5}", "nothere.xml"},
      {"{\"model\": \"nomotor.xml\", \"horizon\": 5}", "bad.json: model: 'pendulum' has no actuators: no controls to optimize"},
      {"{\"model\": \"pendulum.xml\", \"horizon\": 5, \"out\": {\"controls\": \"pendulum.xml\"}}",
       "pendulum.xml: the same file as the input "},
      {"{\"model\": \"pendulum.xml\", \"horizon\": 5, \"out\": {\"controls\": \"s.csv\", \"trajectory\": \"s.csv\"}}",
       "s.csv: the same file as out.controls "},
  };
  for (int i = 0; i < 7; i++) {
    put("bad.json", other[i][0]);
    shRun r = optimize("bad.json");
    CHECK_MSG(r.code == 1 && has(r.err, other[i][1]), "other case %d: exit %d", i, r.code);
    CHECK(access(path("s.csv"), F_OK) != 0);
    run_free(&r);
  }
  char* model = slurp(path("pendulum.xml"));
  CHECK(has(model, "<motor name=\"torque\""));   // not replaced by the refused output
  free(model);
  shRun r = run("optimize");
  CHECK(r.code == 2);
  run_free(&r);
}

// the drone task of examples/drone by ddp with the given options: the result JSON (caller frees), stderr in err
static cJSON* drone_ddp(const char* name, const char* options, char** err) {
  char text[1024], task[64], res[64];
  snprintf(res, sizeof res, "%s_r.json", name);
  drone_task_text(text, sizeof text, "ddp", options, res);
  snprintf(task, sizeof task, "%s.json", name);
  put(task, text);
  shRun r = optimize(task);
  CHECK(r.code == 0);
  *err = strdup(r.err ? r.err : "");
  run_free(&r);
  char* t = slurp(path(res));
  cJSON* j = cJSON_Parse(t);
  free(t);
  CHECK(j != NULL);
  return j;
}

static void test_drone(void) {
  char* model = slurp("models/drone.xml");
  put("drone.xml", model);
  free(model);
  char* err;
  cJSON* j = drone_ddp("exact", "{\"maxiter\": 100}", &err);
  if (j) {
    CHECK(strcmp(cJSON_GetObjectItem(j, "stop")->valuestring, "feedforward") == 0);
    CHECK(has(cJSON_GetObjectItem(j, "stop_reason")->valuestring, "feedforward below tol"));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "complementarity")));
    CHECK(cJSON_GetObjectItem(j, "iterations")->valueint == 0 && cJSON_GetObjectItem(j, "final_cost")->valuedouble == 45.125);
  }
  CHECK(has(err, "optimize: stopped: feedforward below tol 1e-09: the backward pass finds no descent direction"));
  cJSON_Delete(j);
  free(err);
  j = drone_ddp("aware", "{\"maxiter\": 100, \"complementarity\": true}", &err);
  double J = j ? cJSON_GetObjectItem(j, "final_cost")->valuedouble : NAN;
  CHECK_MSG(J < 0.05, "drone, ddp, complementarity-aware: final cost %g", J);
  CHECK(j && cJSON_IsTrue(cJSON_GetObjectItem(j, "complementarity")));
  printf("drone, ddp: exact lcp stays at 45.125, complementarity-aware %.9g\n", J);
  cJSON_Delete(j);
  free(err);
  j = drone_ddp("stall", "{\"complementarity\": true, \"stall\": 2, \"stall_tol\": 0.5}", &err);
  CHECK(j && strcmp(cJSON_GetObjectItem(j, "stop")->valuestring, "stall") == 0);
  CHECK(has(err, "optimize: stopped: stalled: the cost fell by less than stall_tol 0.5 (relative) over the last 2 "
                 "iterations"));
  cJSON_Delete(j);
  free(err);
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  if (!control_scratch("test_cmd_optimize")) return 1;
  test_example();
  test_bounded();
  test_keyframe_dt();
  test_site();
  test_body_velocity();
  test_errors();
  test_drone();
  remove_scratch();
  return test_done();
}

// test_cmd_mpc.c - `physid mpc TASK.json` run as a user would (env PHYS_BIN) on the physid plant: the pendulum
// swung up from rest and held upright by MPC (horizon 1 s, re-planned every 5 steps, 4 s); its trajectory
// replays through `simulate --ctrl-file` byte for byte; the result's executed cost is the task's cost of the
// written trajectory; two runs write identical bytes; the HTML page; with |u| <= 4 a 3 s horizon pumps it up
// and holds it; bad tasks exit 1 naming the JSON path and write nothing; a plant model referring to a file
// outside its folder is refused (exit 1, file, line, element). The MuJoCo plant: test_oracle_mpc.c.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"

#include "mpc_task.h"

// the task's cost of a trajectory: dt sum (5 (q - 3.14159265)^2 + 0.05 v^2 + 5e-4 u^2) + the final terms
static double task_cost(const double* q, const double* v, const double* u) {
  double J = 0, r = 3.14159265;
  for (int k = 0; k < STEPS; k++) J += 0.01 * (5 * (q[k] - r) * (q[k] - r) + 0.05 * v[k] * v[k] + 5e-4 * u[k] * u[k]);
  return J + 50 * (q[STEPS] - r) * (q[STEPS] - r) + 5 * v[STEPS] * v[STEPS];
}

static double g_q[STEPS + 1], g_v[STEPS + 1], g_u[STEPS + 1];   // the physid plant's run

static void test_physid_plant(void) {
  put_task("hold.json", "h", "");
  mpc_ok("hold.json");
  CHECK(read_rows("hx.csv", g_q, g_v, g_u) == STEPS + 1);
  double eq, ev;
  hold_error(g_q, g_v, 150, &eq, &ev);
  CHECK_MSG(eq < 1e-3 && ev < 1e-2, "held from 1.5 s: |q - pi| %.3g, |v| %.3g", eq, ev);
  CHECK_NEAR(g_q[STEPS], 3.14159265, 1e-9);
  // the result: 80 replans, their records, the executed cost of the written trajectory
  char* text = slurp(path("hr.json"));
  cJSON* j = cJSON_Parse(text);
  CHECK(j != NULL);
  CHECK(cJSON_GetObjectItem(j, "replans")->valueint == 80);
  const char* arrays[] = {"replan_step", "replan_iterations", "replan_seconds", "replan_cost", "replan_stop"};
  for (int i = 0; i < 5; i++) CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, arrays[i])) == 80);
  CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "replan_step"), 79)->valueint == 395);
  CHECK(strcmp(cJSON_GetObjectItem(j, "plant")->valuestring, "physid") == 0);
  int iters = 0;
  for (int k = 0; k < 80; k++) iters += cJSON_GetArrayItem(cJSON_GetObjectItem(j, "replan_iterations"), k)->valueint;
  double J = cJSON_GetObjectItem(j, "cost")->valuedouble, Jw = task_cost(g_q, g_v, g_u);
  CHECK_MSG(fabs(J - Jw) < 1e-12 * Jw, "executed cost %.17g, of the written trajectory %.17g", J, Jw);
  printf("physid plant: held from 1.5 s within |q - pi| %.3g, |v| %.3g; final angle %.12g; executed cost %.9g; "
         "%d DDP iterations over 80 replans\n", eq, ev, g_q[STEPS], J, iters);
  cJSON_Delete(j);
  free(text);
  // replay: simulate --ctrl-file reproduces the plant's trajectory byte for byte
  char args[1024], model[256];
  snprintf(model, sizeof model, "%s", path("pendulum.xml"));
  snprintf(args, sizeof args, "simulate %s --steps %d --quiet --ctrl-file %s --out %s", model, STEPS, path("hu.csv"),
           path("replay.csv"));
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char *a = slurp(path("hx.csv")), *b = slurp(path("replay.csv"));
  CHECK_MSG(a[0] && strcmp(a, b) == 0, "the replayed trajectory differs from the plant's");
  free(a);
  free(b);
  // determinism: a second run writes the same bytes
  put_task("hold2.json", "h2", "");
  mpc_ok("hold2.json");
  const char* same[2][2] = {{"hu.csv", "h2u.csv"}, {"hx.csv", "h2x.csv"}};
  for (int i = 0; i < 2; i++) {
    char *x = slurp(path(same[i][0])), *y = slurp(path(same[i][1]));
    CHECK_MSG(x[0] && strcmp(x, y) == 0, "%s and %s differ", same[i][0], same[i][1]);
    free(x);
    free(y);
  }
  // the page: complete, self-contained, the planned cost per replan (80 points), u0, q0 and v0
  char* h = slurp(path("h.html"));
  CHECK(strncmp(h, "<!DOCTYPE html>\n", 16) == 0 && has(h, "</body></html>\n"));
  CHECK(has(h, ">cost per replan (log scale)</text>") && has(h, ">u0 (actuator 'torque')</text>"));
  CHECK(has(h, ">q0</text>") && has(h, ">v0</text>") && has(h, "<th>executed cost</th>"));
  CHECK(!strstr(h, "<script") && !strstr(h, "src=") && !strstr(h, "href") && !strstr(h, "url("));
  int pts = 0;
  for (const char* c = strstr(h, "points='") + 8; *c != '\''; c++) pts += *c == ',';
  CHECK_MSG(pts == 80, "%d cost points", pts);
  free(h);
}

// |u| <= 4 N m (0.41 of the torque that holds the pendulum level): MPC pumps it up and holds it with a 3 s
// horizon over 6 s, every executed control inside the bounds and some at them
static void test_bounded(void) {
  enum { N = 601 };
  static double q[N], v[N], u[N];
  put_task("pump.json", "p", " \"horizon\": 300, \"steps\": 600, \"ctrlrange\": [[-4, 4]],");
  mpc_run("pump.json", "mpc: step 600/600  t 6");
  CHECK(read_rows_max("px.csv", q, v, u, N) == N);
  double eq, ev, umax = 0;
  hold_error_n(q, v, 450, N, &eq, &ev);
  for (int k = 0; k < N - 1; k++) umax = fmax(umax, fabs(u[k]));
  CHECK_MSG(eq < 1e-3 && ev < 1e-2, "pumped and held from 4.5 s: |q - pi| %.3g, |v| %.3g", eq, ev);
  CHECK_MSG(umax == 4, "max |u| %.17g", umax);
  CHECK(result_number("pr.json", "violation") == 0);
  printf("|u| <= 4, horizon 3 s: held from 4.5 s within |q - pi| %.3g, |v| %.3g; executed cost %.6g\n", eq, ev,
         result_number("pr.json", "cost"));
}

// bad tasks: exit 1, the message names the JSON path, no output
static void test_errors(void) {
  static const struct {
    const char* extra;
    const char* msg;
  } c[] = {
      {" \"replan\": 101,", "bad.json: replan: expected an integer in [1, 100]"},
      {" \"steps\": 0,", "bad.json: steps: expected an integer in [1, 1e+07]"},
      {" \"plant\": \"bullet\",", "bad.json: plant: expected \"physid\" or \"mujoco\""},
      {" \"replans\": 3,", "bad.json: the task: unknown key 'replans' (valid: model, add, dt, horizon, method, init, "
                           "ctrlrange, cost, options, out, integrator, plot, replay, steps, replan, plant, plant_model)"},
      {" \"plant_model\": \"nomotor.xml\",", "has nq 1, nv 1, nu 0; the planner's model 'pendulum_motor' has 1, 1, 1"},
      {" \"plot\": [\"v2\"],", "bad.json: plot[0]: expected a state coordinate of model 'pendulum_motor'"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    put_task("bad.json", "bad", c[i].extra);
    char args[512];
    snprintf(args, sizeof args, "mpc %s", path("bad.json"));
    shRun r = run(args);
    CHECK_MSG(r.code == 1 && has(r.err, c[i].msg), "case %zu: exit %d", i, r.code);
    CHECK(access(path("badu.csv"), F_OK) != 0 && access(path("bad.html"), F_OK) != 0);
    run_free(&r);
  }
  put("nosteps.json", "{\"model\": \"pendulum.xml\", \"horizon\": 10}");
  char args[512];
  snprintf(args, sizeof args, "mpc %s", path("nosteps.json"));
  shRun r = run(args);
  CHECK(r.code == 1 && has(r.err, "nosteps.json: steps: missing (the number of steps the plant executes)"));
  run_free(&r);
  r = run("mpc");
  CHECK(r.code == 2);
  run_free(&r);
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  if (!control_scratch("test_cmd_mpc")) return 1;
  test_physid_plant();
  test_bounded();
  test_errors();
  check_plant_outside("physid");
  remove_scratch();
  return test_done();
}

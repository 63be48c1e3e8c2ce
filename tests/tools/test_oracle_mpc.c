// test_oracle_mpc.c - `physid mpc` on the MuJoCo 2.2.2 plant (env PHYS_BIN; built with the MuJoCo oracle): on
// the same file it follows the physid plant (to 1e-9 rad); a MuJoCo plant 30 % heavier than the planner's model
// (plant_model) is still swung up and held, where the open-loop plan of `optimize` replayed on it misses; with
// an `add` file the MuJoCo plant follows the physid plant; a missing plant file, a plant with mesh geoms and a
// plant that refers to files outside its folder (include, mesh) exit 1 with their messages and write nothing.
#include <unistd.h>

#include "sh_run.h"
#include "test.h"
#include "mpc_task.h"

// the MuJoCo plant on the same file follows the physid plant; a heavier MuJoCo plant is still held upright,
// where the open-loop plan misses
static void test_mujoco_plant(void) {
  static double q[STEPS + 1], v[STEPS + 1], u[STEPS + 1], g_q[STEPS + 1], g_v[STEPS + 1], g_u[STEPS + 1];
  double eq, ev, dq = 0;
  put_task("hold.json", "h", "");
  mpc_ok("hold.json");
  CHECK(read_rows("hx.csv", g_q, g_v, g_u) == STEPS + 1);
  put_task("mj.json", "j", " \"plant\": \"mujoco\",");
  mpc_ok("mj.json");
  CHECK(read_rows("jx.csv", q, v, u) == STEPS + 1);
  for (int k = 0; k <= STEPS; k++) dq = fmax(dq, fabs(q[k] - g_q[k]));
  CHECK_MSG(dq < 1e-9, "MuJoCo plant vs physid plant: %.3g rad", dq);
  // a plant 30 % heavier than the planner's model (1.3 kg at the tip)
  char* model = slurp(path("pendulum.xml"));
  char* at = strstr(model, "mass=\"1\"");
  CHECK(at != NULL);
  if (!at) return;
  char text[4096];
  snprintf(text, sizeof text, "%.*smass=\"1.3\"%s", (int)(at - model), model, at + 8);
  free(model);
  put("heavy.xml", text);
  put_task("heavy.json", "w", " \"plant\": \"mujoco\", \"plant_model\": \"heavy.xml\",");
  mpc_ok("heavy.json");
  CHECK(read_rows("wx.csv", q, v, u) == STEPS + 1);
  hold_error(q, v, 200, &eq, &ev);
  CHECK_MSG(eq < 1e-3 && ev < 1e-3, "heavy plant held from 2 s: |q - pi| %.3g, |v| %.3g", eq, ev);
  double J = result_number("wr.json", "cost");
  // open loop: the whole plan of optimize (same cost, horizon 400) replayed on the heavy plant misses
  put("open.json", "{\"model\": \"pendulum.xml\", \"horizon\": 400, \"init\": {\"qpos\": [0], \"qvel\": [0]},\n"
                   " \"cost\": {\"running\": [{\"qpos\": [3.14159265], \"weight\": 10}, {\"qvel\": [0], \"weight\": 0.1}],\n"
                   "          \"final\": [{\"qpos\": [3.14159265], \"weight\": 100}, {\"qvel\": [0], \"weight\": 10}], "
                   "\"control\": 1e-3},\n \"out\": {\"controls\": \"ou.csv\"}}\n");
  char args[1024];
  snprintf(args, sizeof args, "optimize %s --quiet", path("open.json"));
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char heavy[256];
  snprintf(heavy, sizeof heavy, "%s", path("heavy.xml"));
  snprintf(args, sizeof args, "simulate %s --steps %d --quiet --ctrl-file %s --out %s", heavy, STEPS, path("ou.csv"),
           path("ox.csv"));
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  double oq[STEPS + 1], ov[STEPS + 1], ou[STEPS + 1], oeq, oev;
  CHECK(read_rows("ox.csv", oq, ov, ou) == STEPS + 1);
  hold_error(oq, ov, 200, &oeq, &oev);
  CHECK_MSG(oeq > 0.5, "open loop on the heavy plant: |q - pi| %.3g from 2 s", oeq);
  printf("MuJoCo plant: %.3g rad from the physid plant; 30 %% heavier plant: held from 2 s within |q - pi| %.3g, "
         "|v| %.3g, executed cost %.6g; the open-loop plan on it: |q - pi| up to %.3g\n", dq, eq, ev, J, oeq);
}

// a task with an "add" file (a second, passive pendulum from 0.5 rad): the MuJoCo plant runs the composed world
// and its positions follow the physid plant's to 1e-9 rad as test_mujoco_plant's (measured: the passive
// pendulum 1.7e-16, the controlled one 9.7e-11: the plans' controls differ by up to 7e-8 where the planner's
// stopping test meets states that differ by rounding)
static void test_add(void) {
  put("swing2.xml", "<mujoco model=\"second\">\n  <worldbody>\n    <body name=\"bob2\" pos=\"1 0 2\">\n"
                    "      <joint name=\"swing2\" type=\"hinge\" axis=\"0 1 0\"/>\n"
                    "      <inertial pos=\"0 0 -0.5\" mass=\"0.5\" diaginertia=\"0.01 0.02 0.01\"/>\n"
                    "    </body>\n  </worldbody>\n</mujoco>\n");
  static double x[2][101][6];   // zeros where a run wrote fewer rows
  for (int k = 0; k < 2; k++) {
    char text[2048], name[32];
    snprintf(text, sizeof text,
             "{\"model\": \"pendulum.xml\", \"add\": [\"swing2.xml\"], \"horizon\": 100, \"steps\": 100, "
             "\"replan\": 5,%s\n \"init\": {\"qpos\": [0, 0.5], \"qvel\": [0, 0]},\n"
             " \"cost\": {\"running\": [{\"qpos\": [3.14159265, 0], \"weight\": [10, 0]}],\n"
             "          \"final\": [{\"qpos\": [3.14159265, 0], \"weight\": [100, 0]}], \"control\": 1e-3},\n"
             " \"options\": {\"maxiter\": 50},\n \"out\": {\"trajectory\": \"add%dx.csv\"}}\n",
             k ? " \"plant\": \"mujoco\"," : "", k);
    snprintf(name, sizeof name, "add%d.json", k);
    put(name, text);
    mpc_run(name, "mpc: step 100/100  t 1");
    snprintf(name, sizeof name, "add%dx.csv", k);
    char* csv = slurp(path(name));
    CHECK(strncmp(csv, "t,q0,q1,v0,v1,u0\n", 17) == 0);
    int n = 0;
    for (const char* p = strchr(csv, '\n'); p && p[1] && n <= 100; p = strchr(p + 1, '\n'), n++) {
      double* r = x[k][n];
      CHECK(sscanf(p + 1, "%lf,%lf,%lf,%lf,%lf,%lf", r, r + 1, r + 2, r + 3, r + 4, r + 5) == 6);
    }
    CHECK(n == 101);
    free(csv);
  }
  double dx = 0, swing = 0;
  for (int n = 0; n <= 100; n++) {
    for (int i = 1; i < 3; i++) dx = fmax(dx, fabs(x[1][n][i] - x[0][n][i]));
    swing = fmax(swing, fabs(x[0][n][2] - 0.5));
  }
  CHECK_MSG(dx < 1e-9, "MuJoCo plant with add vs physid plant: %.3g rad", dx);
  CHECK_MSG(swing > 0.5, "the added pendulum moves: %.3g rad", swing);   // it swings through 0 to about -0.5
  printf("add: the MuJoCo plant on pendulum.xml + swing2.xml is %.3g rad from the physid plant (the added pendulum "
         "swings by %.3g rad)\n", dx, swing);
}

// a model physid cannot read: exit 1, the message names the plant file, nothing written; a plant model that
// refers to files outside its folder is refused as on the physid plant (test_cmd_mpc.c)
static void test_errors(void) {
  put_task("bad.json", "bad", " \"plant\": \"mujoco\", \"plant_model\": \"nothere.xml\",");
  char args[512];
  snprintf(args, sizeof args, "mpc %s", path("bad.json"));
  shRun r = run(args);
  CHECK_MSG(r.code == 1 && has(r.err, "nothere.xml") && has(r.err, "No such file"), "exit %d", r.code);
  CHECK(access(path("badu.csv"), F_OK) != 0 && access(path("bad.html"), F_OK) != 0);
  run_free(&r);
  // a mesh geom inside the folder: the world has no one-file form for MuJoCo yet (refused, nothing written)
  put("tet.stl", "solid t\nfacet normal 0 0 -1\nouter loop\nvertex 0 0 0\nvertex 0 0.1 0\nvertex 0.1 0 0\nendloop\nendfacet\n"
                 "facet normal 0 -1 0\nouter loop\nvertex 0 0 0\nvertex 0.1 0 0\nvertex 0 0 0.1\nendloop\nendfacet\n"
                 "facet normal -1 0 0\nouter loop\nvertex 0 0 0\nvertex 0 0 0.1\nvertex 0 0.1 0\nendloop\nendfacet\n"
                 "facet normal 1 1 1\nouter loop\nvertex 0.1 0 0\nvertex 0 0.1 0\nvertex 0 0 0.1\nendloop\nendfacet\nendsolid t\n");
  put("meshed.xml", "<mujoco model=\"meshed\">\n  <asset><mesh name=\"tet\" file=\"tet.stl\"/></asset>\n  <worldbody>\n"
                    "    <body name=\"bob\" pos=\"0 0 2\">\n      <joint name=\"swing\" type=\"hinge\" axis=\"0 1 0\"/>\n"
                    "      <inertial pos=\"0 0 -1\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n"
                    "      <geom type=\"mesh\" mesh=\"tet\" contype=\"0\" conaffinity=\"0\"/>\n    </body>\n  </worldbody>\n"
                    "  <actuator><motor joint=\"swing\"/></actuator>\n</mujoco>\n");
  put_task("mesh.json", "mesh", " \"plant\": \"mujoco\", \"plant_model\": \"meshed.xml\",");
  snprintf(args, sizeof args, "mpc %s", path("mesh.json"));
  r = run(args);
  CHECK_MSG(r.code == 1 && has(r.err, "mesh.json: plant: the MuJoCo plant is given the world physid read from ") &&
                has(r.err, "meshed.xml as one MJCF file, and it has mesh geoms"), "exit %d", r.code);
  CHECK(access(path("meshu.csv"), F_OK) != 0 && access(path("mesh.html"), F_OK) != 0);
  run_free(&r);
  check_plant_outside("mujoco");
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  if (!control_scratch("test_oracle_mpc")) return 1;
  test_mujoco_plant();
  test_add();
  test_errors();
  remove_scratch();
  return test_done();
}

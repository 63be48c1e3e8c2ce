// test_oracle_mpc.c - `physid mpc` on the MuJoCo 2.2.2 plant (env PHYS_BIN; built with the MuJoCo oracle): on
// the same file it follows the physid plant (to 1e-9 rad); a MuJoCo plant 30 % heavier than the planner's model
// (plant_model) is still swung up and held, where the open-loop plan of `optimize` replayed on it misses; a model
// MuJoCo cannot load exits 1 naming the key and writes nothing.
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

// a model MuJoCo cannot load: exit 1, the message names the key, nothing written
static void test_errors(void) {
  put_task("bad.json", "bad", " \"plant\": \"mujoco\", \"plant_model\": \"nothere.xml\",");
  char args[512];
  snprintf(args, sizeof args, "mpc %s", path("bad.json"));
  shRun r = run(args);
  CHECK_MSG(r.code == 1 && has(r.err, "bad.json: plant: MuJoCo cannot load"), "exit %d", r.code);
  CHECK(access(path("badu.csv"), F_OK) != 0 && access(path("bad.html"), F_OK) != 0);
  run_free(&r);
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  if (!control_scratch("test_oracle_mpc")) return 1;
  test_mujoco_plant();
  test_errors();
  remove_scratch();
  return test_done();
}

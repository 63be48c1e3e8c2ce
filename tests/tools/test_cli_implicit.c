// test_cli_implicit.c - the implicit integrator in the CLI (issue 16 item 4): --integrator in simulate, jacobian,
// gradcheck, evaluate and identify, "integrator" in optimize's task, and identify --progressive:
//  1. simulate tests/data/cables.xml (stiff cables, dt 0.01): euler exits 1 at step 18 (non-finite state),
//     implicit runs the 100 steps (exit 0); --integrator rk4 exits 2 naming the choices;
//  2. jacobian of the stiff spring-mass (k = 2e4, b = 20, m = 2) at dt 0.01: A = [[1 + dt^2 g_q, dt (1 + dt g_v)],
//     [dt g_q, 1 + dt g_v]], g_q = -k/H, g_v = -(b + dt k)/H, H = m + dt b + dt^2 k (to 1e-12);
//  3. gradcheck of the cables at dt 0.005 with --integrator implicit: every block passes (exit 0);
//  4. identify --progressive on three 25 Hz recordings of the stiff spring-mass from k = 1.2e4, b = 5: k within
//     0.1 % of 2e4 and b within 1 % of 20; the epoch lines start implicit at 1 substep and end semi-implicit;
//     --progressive with --optimizer lm, and --validation without --progressive, exit 2; --validation 3 of 3
//     trajectories exits 1; evaluate --integrator implicit of the answer runs (exit 0);
//  5. optimize: a task with "integrator": "implicit" on the cables runs (exit 0), "integrator": "rk4" exits 1
//     naming the key.
#include <math.h>
#include <unistd.h>

#include "cJSON.h"
#include "sh_run.h"
#include "test.h"

static int has(const char* s, const char* what) { return strstr(s, what) != NULL; }

static void test_simulate(const char* src) {
  char args[1024];
  snprintf(args, sizeof args, "simulate '%s/tests/data/cables.xml' --steps 100 --ctrl random --out '%s'", src,
           path("c_euler.csv"));
  shRun r = run(args);
  CHECK_MSG(r.code == 1 && has(r.err, "step 18") && has(r.err, "non-finite state"), "exit %d: %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "simulate '%s/tests/data/cables.xml' --steps 100 --ctrl random --integrator implicit "
           "--out '%s'", src, path("c_implicit.csv"));
  r = run(args);
  CHECK_MSG(r.code == 0 && has(r.err, "100 steps of 0.01 s"), "exit %d: %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "simulate '%s/tests/data/cables.xml' --steps 10 --integrator rk4", src);
  r = run(args);
  CHECK_MSG(r.code == 2 && has(r.err, "euler|implicit"), "exit %d: %s", r.code, r.err);
  run_free(&r);
}

// the stiff spring-mass model (k = 2e4, b = 20 as truth, or the starting values) into the scratch folder
static const char* springmass(const char* name, const char* k, const char* b) {
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<mujoco model=\"sm\"><option timestep=\"0.001\" gravity=\"0 0 0\"/><worldbody><body name=\"mass\">"
           "<joint name=\"x\" type=\"slide\" axis=\"1 0 0\" stiffness=\"%s\" damping=\"%s\" springref=\"0.1\"/>"
           "<inertial pos=\"0 0 0\" mass=\"2\" diaginertia=\"0.1 0.1 0.1\"/></body></worldbody></mujoco>\n", k, b);
  return put(name, xml);
}

static void test_jacobian(void) {
  char args[1024];
  const char* model = springmass("sm_true.xml", "2e4", "20");
  put("j.csv", "q0,v0\n0.3,-1\n");
  snprintf(args, sizeof args, "jacobian '%s' --init '%s' --dt 0.01 --integrator implicit", model, path("j.csv"));
  shRun r = run(args);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  double a[4] = {0, 0, 0, 0}, dt = 0.01, k = 2e4, b = 20, H = 2 + dt * b + dt * dt * k;
  CHECK(sscanf(r.out, "dq0,dv0\n%lf,%lf\n%lf,%lf", a, a + 1, a + 2, a + 3) == 4);
  double gq = -k / H, gv = -(b + dt * k) / H, ref[4] = {1 + dt * dt * gq, dt * (1 + dt * gv), dt * gq, 1 + dt * gv};
  for (int i = 0; i < 4; i++) CHECK_REL(a[i], ref[i], 1e-12, 1e-12);
  run_free(&r);
}

static void test_gradcheck(const char* src) {
  char args[1024];
  snprintf(args, sizeof args, "gradcheck '%s/tests/data/cables.xml' --dt 0.005 --integrator implicit", src);
  shRun r = run(args);
  CHECK_MSG(r.code == 0 && has(r.out, "6 of 6 blocks pass"), "exit %d: %s%s", r.code, r.out, r.err);
  run_free(&r);
}

static void test_progressive(void) {
  char args[2048];
  char truth[256], start[256];   // (path's buffers rotate: copies)
  snprintf(truth, sizeof truth, "%s", springmass("sm_true.xml", "2e4", "20"));
  snprintf(start, sizeof start, "%s", springmass("sm_start.xml", "1.2e4", "5"));
  const char* init[3] = {"q0,v0\n0.3,0\n", "q0,v0\n0.1,4\n", "q0,v0\n-0.2,-2\n"};
  char data[3][256];
  for (int i = 0; i < 3; i++) {
    char name[32];
    snprintf(name, sizeof name, "init%d.csv", i);
    const char* ip = put(name, init[i]);
    snprintf(data[i], sizeof data[i], "%s/data_%d.csv", g_dir, i);
    snprintf(args, sizeof args, "simulate '%s' --init '%s' --steps 800 --every 40 --quiet --out '%s'", truth, ip,
             data[i]);
    shRun r = run(args);
    CHECK(r.code == 0);
    run_free(&r);
  }
  const char* params = "--param stiffness:x:min=1000:max=1e5 --param damping:x:min=0:max=200 --loss kstep --horizon 5";
  snprintf(args, sizeof args, "identify '%s' '%s' '%s' '%s' %s --progressive --out '%s'", start, data[0], data[1],
           data[2], params, path("prog.json"));
  shRun r = run(args);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  CHECK(has(r.err, "progressive epoch 1: implicit, 1 substeps (dt 0.04 s), lr 0.1:"));
  CHECK(has(r.err, "semi-implicit, 40 substeps (dt 0.001 s)"));
  run_free(&r);
  char* text = slurp(path("prog.json"));
  cJSON* root = cJSON_Parse(text);
  free(text);
  CHECK(root != NULL);
  const cJSON* ps = cJSON_GetObjectItem(root, "params");
  double k = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 0), "value"));
  double b = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 1), "value"));
  printf("identify --progressive: k %.6g (true 2e4), b %.6g (true 20)\n", k, b);
  CHECK_REL(k, 2e4, 1e-3, 0);
  CHECK_REL(b, 20, 1e-2, 0);
  cJSON_Delete(root);
  // refusals
  snprintf(args, sizeof args, "identify '%s' '%s' '%s' %s --progressive --optimizer lm", start, data[0], data[1], params);
  r = run(args);
  CHECK_MSG(r.code == 2 && has(r.err, "identify: --progressive does not take --optimizer"), "exit %d: %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "identify '%s' '%s' '%s' %s --validation 1", start, data[0], data[1], params);
  r = run(args);
  CHECK_MSG(r.code == 2 && has(r.err, "--validation N needs --progressive"), "exit %d: %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "identify '%s' '%s' '%s' '%s' %s --progressive --validation 3", start, data[0], data[1],
           data[2], params);
  r = run(args);
  CHECK_MSG(r.code == 1 && has(r.err, "--validation 3 leaves no trajectory to fit (3 loaded)"), "exit %d: %s", r.code,
            r.err);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --integrator implicit", truth, data[2]);
  r = run(args);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
}

static void test_optimize(const char* src) {
  char task[1024], args[512];
  for (int bad = 0; bad < 2; bad++) {
    snprintf(task, sizeof task,
             "{\"model\": \"%s/tests/data/cables.xml\", \"horizon\": 20, \"method\": \"ddp\", \"integrator\": \"%s\","
             " \"cost\": {\"final\": [{\"qvel\": [0,0,0,0,0,0,0,0,0,0,0,0], \"weight\": 1}], \"control\": 1e-3},"
             " \"options\": {\"maxiter\": 5}, \"out\": {\"result\": \"%s\"}}\n",
             src, bad ? "rk4" : "implicit", path("opt.json"));
    snprintf(args, sizeof args, "optimize '%s'", put("task.json", task));
    shRun r = run(args);
    if (bad) CHECK_MSG(r.code == 1 && has(r.err, "integrator: expected \"euler\" or \"implicit\""), "exit %d: %s", r.code, r.err);
    else CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
    run_free(&r);
  }
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  const char* src = getenv("PHYS_SOURCE");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0 && src, "PHYS_BIN or PHYS_SOURCE not set");
  if (!g_bin || !src) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/physid_test_implicit_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  test_simulate(src);
  test_jacobian();
  test_gradcheck(src);
  test_progressive();
  test_optimize(src);
  remove_scratch();
  return test_done();
}

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
//     trajectories exits 1; evaluate --integrator implicit of the answer runs (exit 0); result.json's
//     "integrator" is "euler" (the fine-tuning stage's);
//  5. optimize: a task with "integrator": "implicit" on the cables runs (exit 0), "integrator": "rk4" exits 1
//     naming the key;
//  6. identify's integrator fields: a job's "integrator": "implicit" is recorded in result.json ("integrator")
//     and written by --write-model (<option integrator="Euler">, physid's own value in <custom><text
//     name="physid:integrator">), which reads back as implicit; --integrator euler overrides the job's and
//     drops physid's value from the written model; "pbd" and "rk4" in a job exit 1 naming the key.
#include <math.h>
#include <stdlib.h>
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
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "integrator")), "euler"));   // stage 2's
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
  // the job keys progressive and validation: read as the options (the refusals above from a job), a bad value is a
  // bad job naming the file and the key (exit 1)
  const char* jobs[5][3] = {{"{\"progressive\": true, \"validation\": 3}", "1", "--validation 3 leaves no trajectory"},
                            {"{\"validation\": 1}", "2", "--validation N needs --progressive"},
                            {"{\"progressive\": true, \"optimizer\": \"lm\"}", "2", "--progressive does not take --optimizer"},
                            {"{\"progressive\": \"yes\"}", "1", "prog_job.json: key 'progressive': expected true or false"},
                            {"{\"validation\": -1}", "1", "prog_job.json: key 'validation': expected an integer in [0, 1000000]"}};
  for (int i = 0; i < 5; i++) {
    snprintf(args, sizeof args, "identify '%s' '%s' '%s' '%s' %s --job '%s'", start, data[0], data[1], data[2], params,
             put("prog_job.json", jobs[i][0]));
    r = run(args);
    CHECK_MSG(r.code == atoi(jobs[i][1]) && has(r.err, jobs[i][2]), "%s: exit %d: %s", jobs[i][0], r.code, r.err);
    run_free(&r);
  }
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

// the "integrator" string of result.json at p ("" if missing)
static void result_integrator(const char* p, char* out, size_t n) {
  char* text = slurp(p);
  cJSON* root = text ? cJSON_Parse(text) : NULL;
  free(text);
  const char* v = cJSON_GetStringValue(cJSON_GetObjectItem(root, "integrator"));
  snprintf(out, n, "%s", v ? v : "");
  cJSON_Delete(root);
}

// 1 if the file at p contains what
static int file_has(const char* p, const char* what) {
  char* text = slurp(p);
  int yes = text && has(text, what);
  free(text);
  return yes;
}

static void test_integrator_fields(void) {
  char args[2048], job[1024], model[256], data[256], integ[32], w1[256];
  snprintf(model, sizeof model, "%s", springmass("sm_start.xml", "1.2e4", "20"));
  const char* truth = springmass("sm_true.xml", "2e4", "20");
  snprintf(data, sizeof data, "%s", path("sm_data.csv"));
  snprintf(args, sizeof args, "simulate '%s' --init '%s' --steps 200 --every 10 --quiet --out '%s'", truth,
           put("sm_init.csv", "q0,v0\n0.3,0\n"), data);
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  // the job's "integrator": implicit, recorded in result.json and written into the model
  snprintf(w1, sizeof w1, "%s", path("w_implicit.xml"));
  snprintf(job, sizeof job, "{\"model\": \"%s\", \"data\": [\"%s\"], \"params\": [\"stiffness:x:min=1000:max=1e5\"], "
           "\"integrator\": \"implicit\", \"iters\": 3, \"quiet\": true, \"out\": \"%s\", \"write_model\": \"%s\"}\n",
           model, data, path("r_implicit.json"), w1);
  snprintf(args, sizeof args, "identify --job '%s'", put("job.json", job));
  r = run(args);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  result_integrator(path("r_implicit.json"), integ, sizeof integ);
  CHECK_MSG(!strcmp(integ, "implicit"), "result.json integrator '%s'", integ);
  CHECK(file_has(w1, "<text name=\"physid:integrator\" data=\"implicit\"/>"));
  CHECK(file_has(w1, "integrator=\"Euler\""));
  // --integrator euler on the command line overrides the job's
  snprintf(args, sizeof args, "identify --job '%s' --integrator euler --out '%s' --write-model '%s'",
           path("job.json"), path("r_euler.json"), path("w_euler.xml"));
  r = run(args);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  result_integrator(path("r_euler.json"), integ, sizeof integ);
  CHECK_MSG(!strcmp(integ, "euler"), "result.json integrator '%s'", integ);
  CHECK(!file_has(path("w_euler.xml"), "physid:integrator"));
  // the written implicit model reads back as implicit (no --integrator); an euler fit of it drops physid's value
  snprintf(args, sizeof args, "identify '%s' '%s' --param stiffness:x:min=1000:max=1e5 --iters 2 --quiet --out '%s'",
           w1, data, path("r_back.json"));
  r = run(args);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  result_integrator(path("r_back.json"), integ, sizeof integ);
  CHECK_MSG(!strcmp(integ, "implicit"), "result.json integrator '%s'", integ);
  snprintf(args, sizeof args, "identify '%s' '%s' --param stiffness:x:min=1000:max=1e5 --iters 2 --quiet "
           "--integrator euler --write-model '%s'", w1, data, path("w_back.xml"));
  r = run(args);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  CHECK(!file_has(path("w_back.xml"), "physid:integrator") && file_has(path("w_back.xml"), "integrator=\"Euler\""));
  // a job asking for pbd (no step derivatives) or an unknown integrator: exit 1 naming the key
  const char* bad[2] = {"pbd", "rk4"};
  for (int k = 0; k < 2; k++) {
    snprintf(job, sizeof job, "{\"model\": \"%s\", \"data\": [\"%s\"], \"params\": [\"stiffness:x\"], "
             "\"integrator\": \"%s\"}\n", model, data, bad[k]);
    snprintf(args, sizeof args, "identify --job '%s'", put("bad.json", job));
    r = run(args);
    CHECK_MSG(r.code == 1 && has(r.err, "bad.json: key 'integrator': expected euler or implicit (the pbd step has no "
                                 "derivatives yet)"), "exit %d: %s", r.code, r.err);
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
  test_integrator_fields();
  remove_scratch();
  return test_done();
}

#define _GNU_SOURCE   // F_SETPIPE_SZ
// test_identify_cli.c - `physid identify` run as a user would (env PHYS_BIN): a damped pendulum's damping
// identified from `physid simulate` output (exact: same engine, no noise), result.json read back with cJSON
// (keys, values, correlation, unidentifiable directions), --write-model round trips for MJCF (friction,
// restitution, size, mass/com/inertia, joint and spring kinds, gravity, gear, pos) and URDF (inertial, joint
// damping), the HTML report (self-contained, deterministic), the JSON job file and its overrides, bad inputs
// (exit 1 or 2 with the message and no output file), SIGINT during a fit (no output file), a damping and a mass
// identified through equality constraints (a four-bar, a weld, a joint coupling).
#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "params.h"
#include "physid.h"
#include "test.h"

#define SLIDER_CRANK "/usr/share/mujoco/model/slider_crank/slider_crank.xml"

static const char* g_bin;         // the physid binary
static char g_dir[64];            // scratch folder; outputs go to g_dir/out

// the pendulum of tests/data/pendulum.xml, started at 60 degrees, with joint damping DAMPING
static const char* g_pendulum =
    "<mujoco model=\"pendulum\">\n"
    "  <option timestep=\"0.002\" gravity=\"0 0 -9.81\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"bob\" pos=\"0 0 2\" euler=\"0 60 0\">\n"
    "      <joint name=\"swing\" type=\"hinge\" axis=\"0 1 0\" damping=\"%s\"/>\n"
    "      <inertial pos=\"0 0 -1\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0 0 -1\" size=\"0.01\" contype=\"0\" conaffinity=\"0\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

//---------------------------------------------------------------------------------------------------------
// running the binary

typedef struct idRunOut_ {
  int code;                 // exit code (-1 if killed)
  int sig;                  // signal that ended it
  char* out;                // stdout (malloc'd)
  char* err;                // stderr (malloc'd)
} idRunOut;

// path in the scratch folder (256 rotating buffers: copy a path to keep it across many calls)
static const char* path(const char* name) {
  static char buf[256][512];
  static int k = 0;
  k = (k + 1) % 256;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

// write text to a scratch file; returns its path
static const char* write_file(const char* name, const char* text) {
  const char* p = path(name);
  FILE* f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return p;
}

// whole file (malloc'd, "" if unreadable)
static char* slurp(const char* p) {
  FILE* f = fopen(p, "rb");
  size_t n = 0, cap = 1 << 16;
  char* s = malloc(cap);
  while (f && !feof(f)) {
    if (n + 4096 >= cap) s = realloc(s, cap *= 2);
    n += fread(s + n, 1, 4096, f);
  }
  if (f) fclose(f);
  s[n] = 0;
  return s;
}

// start physid with a NULL-terminated argument vector; stdout to the file out, stderr to a scratch file
static pid_t spawn_to(const char* const* args, const char* out) {
  const char* argv[64] = {g_bin};
  int n = 1;
  while (args[n - 1] && n < 63) argv[n] = args[n - 1], n++;
  argv[n] = NULL;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(path(".stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fo, 1);
    dup2(fe, 2);
    execv(g_bin, (char* const*)argv);
    _exit(127);
  }
  return pid;
}

// start physid; stdout/stderr to scratch files
static pid_t spawn(const char* const* args) {
  return spawn_to(args, path(".stdout"));
}

// wait for a spawned run and collect its status and output
static idRunOut collect(pid_t pid) {
  idRunOut r = {-1, 0, NULL, NULL};
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.sig = WTERMSIG(status);
  r.out = slurp(path(".stdout"));
  r.err = slurp(path(".stderr"));
  return r;
}

// run physid with the arguments (NULL-terminated) and wait
static idRunOut run(const char* arg, ...) {
  const char* args[64];
  int n = 0;
  va_list ap;
  va_start(ap, arg);
  for (const char* a = arg; a && n < 63; a = va_arg(ap, const char*)) args[n++] = a;
  va_end(ap);
  args[n] = NULL;
  return collect(spawn(args));
}

// free a run's output
static void run_free(idRunOut* r) {
  free(r->out);
  free(r->err);
}

// 1 if s contains frag; prints s otherwise
static int has(const char* s, const char* frag) {
  if (s && strstr(s, frag)) return 1;
  fprintf(stderr, "  text lacks '%s':\n---\n%s---\n", frag, s ? s : "(null)");
  return 0;
}

// entries of the output folder (outputs and hidden temporaries)
static int count_outputs(void) {
  DIR* dir = opendir(path("out"));
  int n = 0;
  for (struct dirent* e; dir && (e = readdir(dir));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  if (dir) closedir(dir);
  return n;
}

// empty the output folder
static void clear_outputs(void) {
  DIR* dir = opendir(path("out"));
  for (struct dirent* e; dir && (e = readdir(dir));) {
    char p[700];
    snprintf(p, sizeof p, "%s/out/%s", g_dir, e->d_name);
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(p);
  }
  if (dir) closedir(dir);
}

// the pendulum model with a damping value, written to name
static const char* pendulum(const char* name, const char* damping) {
  char text[2048];
  snprintf(text, sizeof text, g_pendulum, damping);
  return write_file(name, text);
}

// theta of specs on a model file (URDF floating when asked); returns ntheta, 0 on failure
static int model_theta(double* theta, const char* file, const char* const* spec, int nspec, int floating) {
  physLog log = {0};
  physLoadOptions lo = {0};
  lo.urdf_floating = floating;
  physModel* m = phys_load(file, &lo, &log);
  physParamTable t;
  int n = 0;
  if (m && phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK) {
    phys_param_get(&t, m, theta);
    n = t.ntheta;
  }
  if (!n) fprintf(stderr, "  %s: %s\n", file, log.error);
  if (m) phys_param_table_free(&t);
  phys_free_model(m);
  return n;
}

// the values of result.json's "params" flattened in order (numbers or arrays); returns the count
static int result_values(double* x, const cJSON* root, const char* key) {
  int n = 0;
  const cJSON* p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(root, "params")) {
    const cJSON* v = cJSON_GetObjectItem(p, key);
    if (cJSON_IsNumber(v)) x[n++] = v->valuedouble;
    const cJSON* e;
    if (cJSON_IsArray(v)) cJSON_ArrayForEach(e, v) x[n++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
  }
  return n;
}

//---------------------------------------------------------------------------------------------------------
// tests

// damping 0.3 from data simulated with 0.3, starting at 0.1: result.json, model and report
static void test_pendulum(void) {
  const char* truth = pendulum("in_true.xml", "0.3");
  const char* start = pendulum("in_start.xml", "0.1");
  idRunOut r = run("simulate", truth, "--steps", "300", "--quiet", "--out", path("in_data.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", start, path("in_data.csv"), "--param", "damping:swing", "--out", path("out/r.json"),
          "--write-model", path("out/w.xml"), "--report", path("out/r.html"), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  CHECK(has(r.out, "damping:swing = 0.3"));
  CHECK(has(r.err, "identify: 1 trajectories (301 samples"));
  CHECK(has(r.err, "warning: identify: one trajectory: the intervals are iid"));
  CHECK(has(r.out, "95% intervals: iid (s^2 (J'J)^-1: one trajectory, model error not measured)"));
  run_free(&r);
  char* text = slurp(path("out/r.json"));
  cJSON* root = cJSON_Parse(text);
  CHECK(root != NULL);
  const char* keys[] = {"model", "data", "loss_kind", "contact", "params", "loss0", "loss", "iterations",
                        "starts", "correlation", "unidentifiable", "time"};
  for (int i = 0; i < 12; i++) CHECK_MSG(cJSON_GetObjectItem(root, keys[i]) != NULL, "no key %s", keys[i]);
  const cJSON* p = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "params"), 0);
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")), "damping:swing"));
  double value = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "value"));
  CHECK_NEAR(value, 0.3, 1e-10);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(p, "stderr")) < 1e-8);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(p, "init")) == 0.1);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(p, "min")) == 0 && cJSON_IsNull(cJSON_GetObjectItem(p, "max")));
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "loss")) < 1e-20);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "loss0")) > 1e-6);
  // simulate writes velocities that are its positions' backward differences: kstep on positions, exact here too
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "loss_kind")), "kstep"));
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "contact")), "lcp"));
  const cJSON* corr = cJSON_GetObjectItem(root, "correlation");
  CHECK(cJSON_GetArraySize(corr) == 1 && cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetArrayItem(corr, 0), 0)) == 1);
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(root, "unidentifiable")) == 0);
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "uncertainty"), "method")), "iid"));
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(p, "stderr_cluster")) && !cJSON_GetObjectItem(p, "stderr_bootstrap"));
  CHECK(has(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "data"), 0)), "in_data.csv"));
  const cJSON* t = cJSON_GetObjectItem(root, "time");
  CHECK(cJSON_IsNumber(cJSON_GetObjectItem(t, "forward")) && cJSON_IsNumber(cJSON_GetObjectItem(t, "gradient")) &&
        cJSON_GetNumberValue(cJSON_GetObjectItem(t, "total")) > 0);
  // the written model loads and holds exactly the identified value
  const char* spec[1] = {"damping:swing"};
  double theta[1] = {0};
  CHECK(model_theta(theta, path("out/w.xml"), spec, 1, 0) == 1 && theta[0] == value);
  // the report: self-contained, with its sections, and the same bytes on a second run
  char* html = slurp(path("out/r.html"));
  CHECK(has(html, "<svg") && has(html, "loss per iteration") && has(html, "Correlation") && has(html, "damping:swing"));
  CHECK(has(html, "Observed (solid) vs predicted"));
  CHECK(!strstr(html, "<script") && !strstr(html, "src=") && !strstr(html, "href=") && !strstr(html, "@import"));
  r = run("identify", start, path("in_data.csv"), "--param", "damping:swing", "--report", path("out/r2.html"),
          "--quiet", NULL);
  char* html2 = slurp(path("out/r2.html"));
  CHECK(r.code == 0 && strcmp(html, html2) == 0);
  run_free(&r);
  free(html), free(html2), free(text);
  cJSON_Delete(root);
  clear_outputs();
}

// identification from sensor columns: simulate --sensors writes them, identify --observe sensor:enc,sensor:imu fits
// the shoulder damping to them alone (the state columns only start each step or the rollout); an accelerometer
// cannot be observed (exit 1 naming it)
static void test_sensor_observe(void) {
  const char* model = PHYS_SOURCE_DIR "/tests/data/arm_sensors.xml";
  const char* init = write_file("in_init.csv", "t,q0,q1,v0,v1\n0,0.8,-0.5,0,0\n");
  idRunOut r = run("simulate", model, "--steps", "300", "--sensors", "--init", init, "--quiet", "--out",
                   path("in_sens.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  char* data = slurp(path("in_sens.csv"));   // the header docs/cli.md shows
  CHECK(!strncmp(data, "t,q0,q1,v0,v1,sensor:enc,sensor:imu:0,sensor:imu:1,sensor:imu:2,sensor:acc:0,sensor:acc:1,"
                       "sensor:acc:2\n", 103));
  free(data);
  const char* losses[] = {"onestep", "rollout"};
  for (int k = 0; k < 2; k++) {
    r = run("identify", model, path("in_sens.csv"), "--param", "damping:shoulder:init=0.1", "--observe",
            "sensor:enc,sensor:imu", "--loss", losses[k], NULL);
    CHECK_MSG(r.code == 0 && has(r.out, "damping:shoulder = 0.3 ") && has(r.out, "1200 residuals"), "%s: %s %s",
              losses[k], r.out, r.err);
    run_free(&r);
  }
  // a composed world is written from the model: its sensors (and site types, sizes) are written too and read back
  r = run("identify", model, path("in_sens.csv"), "--add", "models/floor.xml", "--param", "damping:shoulder",
          "--observe", "sensor:enc,sensor:imu", "--loss", "rollout", "--write-model", path("out/ws.xml"), "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  physLog wlog = {0};
  physModel* wm = phys_load_mjcf(path("out/ws.xml"), &wlog);
  physModel* om = phys_load_mjcf(model, &wlog);
  CHECK_MSG(wm && om, "%s", wlog.error);
  if (wm && om) {
    CHECK(wm->nsensor == om->nsensor && wm->nsensordata == om->nsensordata);
    for (int i = 0; i < wm->nsensor && wm->nsensor == om->nsensor; i++)
      CHECK(wm->sensor_type[i] == om->sensor_type[i] && wm->sensor_objtype[i] == om->sensor_objtype[i] &&
            !strcmp(phys_id2name(wm, "sensor", i), phys_id2name(om, "sensor", i)) &&
            wm->sensor_noise[i] == om->sensor_noise[i]);
    int s = phys_name2id(wm, "site", "imu_site");
    CHECK(s >= 0 && wm->site_type[s] == PHYS_SITE_SPHERE && wm->site_size[3 * s] == 0.005);
  }
  phys_free_model(wm);
  phys_free_model(om);
  r = run("identify", model, path("in_sens.csv"), "--param", "damping:shoulder", "--observe", "sensor:acc", NULL);
  CHECK(r.code == 1 && has(r.err, "sensor 'acc' (accelerometer) cannot be observed"));
  run_free(&r);
  clear_outputs();
}

// the value printed on stdout after "NAME = " (NaN if absent)
static double printed(const char* out, const char* name) {
  const char* at = strstr(out, name);
  return at && (at = strstr(at, "= ")) ? strtod(at + 2, NULL) : NAN;
}

// sparse observations (--substeps) and positions only (--observe q, velocities from differences): still exact
static void test_sparse_and_positions(void) {
  const char* truth = path("in_true.xml");
  idRunOut r = run("simulate", truth, "--dt", "0.0005", "--steps", "1200", "--quiet", "--out", path("in_fine.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  // every 4th row: observations 2 ms apart, simulated with 4 substeps of 0.5 ms
  char* fine = slurp(path("in_fine.csv"));
  FILE* f = fopen(path("in_sparse.csv"), "w");
  int line = 0;
  for (char *save = NULL, *s = strtok_r(fine, "\n", &save); s; s = strtok_r(NULL, "\n", &save), line++) {
    if (line == 0 || (line - 1) % 4 == 0) fprintf(f, "%s\n", s);
  }
  fclose(f);
  free(fine);
  r = run("identify", path("in_start.xml"), path("in_sparse.csv"), "--param", "damping:swing", "--substeps", "4",
          "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK_NEAR(printed(r.out, "damping:swing"), 0.3, 1e-8);
  run_free(&r);
  // one substep on the same data is the wrong model: a visibly different value
  r = run("identify", path("in_start.xml"), path("in_sparse.csv"), "--param", "damping:swing", "--quiet", NULL);
  CHECK(r.code == 0 && fabs(printed(r.out, "damping:swing") - 0.3) > 1e-4);
  run_free(&r);
  // positions only: one-step exact (every start but the first has its exact Euler velocity, the first is
  // O(dt^2) off); a rollout from the extrapolated first velocity is biased by that error (here ~3e-5), and
  // exact with the observed one
  const char* observe[3] = {"q", "q", "q,v"};
  const char* loss[3] = {"onestep", "rollout", "rollout"};
  const double tol[3] = {1e-8, 1e-3, 1e-8};
  for (int k = 0; k < 3; k++) {
    r = run("identify", path("in_start.xml"), path("in_data.csv"), "--param", "damping:swing", "--observe",
            observe[k], "--loss", loss[k], "--quiet", NULL);
    CHECK_MSG(r.code == 0, "%s", r.err);
    CHECK_NEAR(printed(r.out, "damping:swing"), 0.3, tol[k]);
    run_free(&r);
  }
}

// the job file gives the same run; a command-line --param replaces the job's list
static void test_job(void) {
  const char* start = path("in_start.xml");
  char job[2048];
  snprintf(job, sizeof job,
           "{\"model\": \"%s\", \"data\": [\"%s\"], \"params\": [{\"name\": \"damping:swing\", \"init\": 0.2, "
           "\"min\": 0.05, \"max\": 2}], \"loss\": \"kstep\", \"horizon\": 5, \"iters\": 50, \"weights\": [1000, 100, 0], "
           "\"out\": \"%s\", \"quiet\": true}", start, path("in_data.csv"), path("out/job.json"));
  idRunOut r = run("identify", "--job", write_file("in_job.json", job), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  char* text = slurp(path("out/job.json"));
  cJSON* root = cJSON_Parse(text);
  double x[4];
  CHECK(result_values(x, root, "value") == 1 && fabs(x[0] - 0.3) < 1e-9);
  CHECK(result_values(x, root, "init") == 1 && x[0] == 0.2);
  CHECK(result_values(x, root, "min") == 1 && x[0] == 0.05);
  CHECK(result_values(x, root, "max") == 1 && x[0] == 2);
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "loss_kind")), "kstep"));
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "horizon")) == 5);
  CHECK(cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "weights"), 2)) == 0);
  cJSON_Delete(root);
  free(text);
  // overrides: --param with another init, --loss onestep
  r = run("identify", "--job", path("in_job.json"), "--param", "damping:swing:init=0.5", "--loss", "onestep", NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  text = slurp(path("out/job.json"));
  root = cJSON_Parse(text);
  CHECK(result_values(x, root, "init") == 1 && x[0] == 0.5);
  CHECK(result_values(x, root, "min") == 1 && x[0] == 0);
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "loss_kind")), "onestep"));
  cJSON_Delete(root);
  free(text);
  // a vector parameter from a job object with an array init: the pendulum swings in the x-z plane, so gravity's
  // y component has no effect (an unidentifiable direction) while x and z are found exactly
  snprintf(job, sizeof job, "{\"params\": [\"damping:swing\", {\"name\": \"gravity\", \"init\": [0.5, 0.1, -9]}], "
           "\"quiet\": true, \"out\": \"%s\"}", path("out/g.json"));
  r = run("identify", start, path("in_data.csv"), "--job", write_file("in_job2.json", job), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  CHECK(has(r.err, "unidentifiable direction 1 of 1") && has(r.err, "gravity[1]"));
  run_free(&r);
  text = slurp(path("out/g.json"));
  root = cJSON_Parse(text);
  CHECK(result_values(x, root, "value") == 4);
  CHECK_NEAR(x[0], 0.3, 1e-8);
  CHECK_NEAR(x[1], 0, 1e-8);
  CHECK(x[2] == 0.1);
  CHECK_NEAR(x[3], -9.81, 1e-8);
  const cJSON* dir = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "unidentifiable"), 0), "direction");
  CHECK(fabs(cJSON_GetNumberValue(cJSON_GetObjectItem(dir, "gravity[1]"))) > 0.999);
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(root, "components")) == 4);
  cJSON_Delete(root);
  free(text);
  clear_outputs();
}

// actuator kinds (issue 12 item 4): tests/data/actuators.xml under random controls (100 Hz, 1 ms steps); gain of
// the motor, kp of the position servo, kv of the velocity servo and bias of the affine <general> come back from
// wrong starts to 1e-9 (the docs/cli.md example); --write-model of gain, bias, kp, kv reloaded gives result.json's
// values, the position servo keeps its tie (biasprm[1] = -kp) and stays a <position>, a motor given a gain
// becomes a <general> with affine gain and bias
static void test_write_actuators(void) {
  idRunOut r = run("simulate", "tests/data/actuators.xml", "--steps", "1000", "--every", "10", "--ctrl", "random",
                   "--seed", "5", "--quiet", "--out", path("in_act.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", "tests/data/actuators.xml", path("in_act.csv"), "--param", "gain:push:init=1.5", "--param",
          "kp:shoulder:init=20", "--param", "kv:elbow:init=2", "--param", "bias:wrist:init=0", "--substeps", "10",
          "--quiet", NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  const char* rec[4] = {"gain:push", "kp:shoulder", "kv:elbow", "bias:wrist"};
  const double truth[4] = {1, 30, 3, 0.3};
  for (int i = 0; i < 4; i++)
    CHECK_MSG(fabs(printed(r.out, rec[i]) - truth[i]) < 1e-9 * truth[i], "%s = %.12g", rec[i], printed(r.out, rec[i]));
  run_free(&r);
  r = run("identify", "tests/data/actuators.xml", path("in_act.csv"), "--iters", "1", "--quiet", "--param",
          "gain:push:init=1.3", "--param", "bias:push:init=0.2", "--param", "kp:shoulder:init=25", "--param",
          "kv:elbow:init=2.5", "--param", "bias:wrist:init=0.25", "--out", path("out/act.json"), "--write-model",
          path("out/act.xml"), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  const char* spec[] = {"gain:push", "bias:push", "kp:shoulder", "kv:elbow", "bias:wrist"};
  double got[8] = {0}, want[8] = {0};
  char* text = slurp(path("out/act.json"));
  cJSON* root = cJSON_Parse(text);
  int nv = result_values(want, root, "value"), nw = model_theta(got, path("out/act.xml"), spec, 5, 0);
  CHECK_MSG(nv == 5 && nw == 5, "%d values, %d reloaded", nv, nw);
  for (int i = 0; i < nw; i++) CHECK_REL(got[i], want[i], 1e-12, 1e-12);
  cJSON_Delete(root);
  free(text);
  physLog log = {0};
  physModel* m = phys_load(path("out/act.xml"), NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    int sh = phys_name2id(m, "actuator", "shoulder"), wr = phys_name2id(m, "actuator", "wrist");
    CHECK(m->actuator_biasprm[3 * sh + 1] == -m->actuator_gainprm[3 * sh]);
    CHECK(m->actuator_gainprm[3 * wr + 1] == -1 && m->actuator_biasprm[3 * wr + 1] == -6);   // kept
  }
  phys_free_model(m);
  text = slurp(path("out/act.xml"));
  CHECK(text && strstr(text, "<general name=\"push\"") && strstr(text, "<position name=\"shoulder\""));
  CHECK(text && strstr(text, "<velocity name=\"elbow\""));
  free(text);
  clear_outputs();
}

// --write-model on MJCF for every kind it can hold, reloaded: the same values as result.json
static void test_write_mjcf(void) {
  idRunOut r = run("simulate", "tests/data/mixed.xml", "--steps", "15", "--quiet", "--out", path("in_mixed.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  // two runs: one where the fit moves the inertia (from the data), one where every value is an init value
  const char* spec[2][8] = {{"inertia:tip", "mass:arm", "damping:slide"},
                            {"com:slider", "armature:slide", "stiffness:hinge", "gravity", "gear:m_slide",
                             "stiffness:spring", "damping:spring", "restlength:spring"}};
  const char* arg[2][8] = {{"inertia:tip", "mass:arm:init=1.1", "damping:slide:init=0.7"},
                           {"com:slider:init=0.01,0.02,0.03", "armature:slide:init=0.06", "stiffness:hinge:init=2.5",
                            "gravity:init=0.2,-0.1,-9.7", "gear:m_slide:init=2.2", "stiffness:spring:init=41",
                            "damping:spring:init=1.4", "restlength:spring:init=0.12"}};
  const int nspec[2] = {3, 8}, nval[2] = {12, 12};
  for (int k = 0; k < 2; k++) {
    const char* args[64] = {"identify", "tests/data/mixed.xml", path("in_mixed.csv"), "--iters", "3", "--quiet",
                            "--out", path("out/m.json"), "--write-model", path("out/m.xml")};
    int n = 10;
    for (int i = 0; i < nspec[k]; i++) {
      args[n++] = "--param";
      args[n++] = arg[k][i];
    }
    args[n] = NULL;
    r = collect(spawn(args));
    CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
    run_free(&r);
    double got[64] = {0}, want[64] = {0}, orig[64] = {0};
    char* text = slurp(path("out/m.json"));
    cJSON* root = cJSON_Parse(text);
    int nv = result_values(want, root, "value");
    int nw = model_theta(got, path("out/m.xml"), spec[k], nspec[k], 0);
    model_theta(orig, "tests/data/mixed.xml", spec[k], nspec[k], 0);
    CHECK_MSG(nv == nw && nw == nval[k], "%d values, %d reloaded", nv, nw);
    int moved = 0;
    for (int i = 0; i < nw; i++) {
      CHECK_REL(got[i], want[i], 1e-12, 1e-12);
      moved += got[i] != orig[i];
    }
    CHECK_MSG(moved == nw || (k == 0 && moved >= 10), "run %d: only %d of %d values differ from the file", k, moved, nw);
    cJSON_Delete(root);
    free(text);
  }
  double got[64] = {0}, want[64] = {0};
  char* text;
  cJSON* root;
  // pos:BODY (a link length) on the pendulum
  r = run("identify", path("in_start.xml"), path("in_data.csv"), "--param", "pos:bob:init=0.01,0,2.02", "--iters",
          "2", "--quiet", "--out", path("out/p.json"), "--write-model", path("out/p.xml"), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  const char* pspec[1] = {"pos:bob"};
  text = slurp(path("out/p.json"));
  root = cJSON_Parse(text);
  CHECK(result_values(want, root, "value") == 3 && model_theta(got, path("out/p.xml"), pspec, 1, 0) == 3);
  for (int i = 0; i < 3; i++) CHECK(got[i] == want[i]);
  CHECK(got[2] != 2);
  cJSON_Delete(root);
  free(text);

  // the cube in the air: friction, restitution and size have no effect (identifiability warning) and keep
  // their init values, which the written file must hold
  char cube[4096];
  char* base = slurp("models/cube.xml");
  char* at = strstr(base, "<body name=\"cube\" pos=\"0 0 0.0524\">");
  CHECK(at != NULL);
  if (at) {
    snprintf(cube, sizeof cube, "%.*s<body name=\"cube\" pos=\"0 0 1\">%s", (int)(at - base), base,
             at + strlen("<body name=\"cube\" pos=\"0 0 0.0524\">"));
    write_file("in_cube.xml", cube);
  }
  free(base);
  r = run("simulate", path("in_cube.xml"), "--steps", "10", "--quiet", "--out", path("in_cube.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", path("in_cube.xml"), path("in_cube.csv"), "--param", "friction:cube:init=0.31", "--param",
          "restitution:cube:init=0.4", "--param", "size:cube:init=0.05,0.06,0.07", "--param", "mass:cube", "--iters",
          "2", "--write-model", path("out/c.xml"), "--out", path("out/c.json"), "--quiet", NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  CHECK(has(r.err, "unidentifiable direction") && has(r.err, "friction:cube") && has(r.err, "restitution:cube"));
  run_free(&r);
  const char* cspec[4] = {"friction:cube", "restitution:cube", "size:cube", "mass:cube"};
  double c[8] = {0};
  CHECK(model_theta(c, path("out/c.xml"), cspec, 4, 0) == 6);
  CHECK(c[0] == 0.31 && c[1] == 0.4 && c[2] == 0.05 && c[3] == 0.06 && c[4] == 0.07);
  text = slurp(path("out/c.json"));
  root = cJSON_Parse(text);
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(root, "unidentifiable")) >= 3);
  CHECK(result_values(want, root, "value") == 6 && want[5] == c[5]);
  cJSON_Delete(root);
  free(text);
  clear_outputs();
}

// --write-model on the elbow URDF (floating): link inertials and joint damping
static void test_write_urdf(void) {
  const char* urdf = "tests/data/elbow/elbow.urdf";
  idRunOut r = run("simulate", urdf, "--floating", "--steps", "12", "--no-contact", "--quiet", "--out",
                   path("in_elbow.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", urdf, path("in_elbow.csv"), "--floating", "--param", "inertia:elbow_2", "--param",
          "mass:elbow_1:init=0.4", "--param", "damping:hinge_1_to_2:init=0.01", "--iters", "2", "--quiet",
          "--out", path("out/e.json"), "--write-model", path("out/e.urdf"), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  const char* spec[3] = {"inertia:elbow_2", "mass:elbow_1", "damping:hinge_1_to_2"};
  double got[16], want[16];
  char* text = slurp(path("out/e.json"));
  cJSON* root = cJSON_Parse(text);
  CHECK(result_values(want, root, "value") == 12 && model_theta(got, path("out/e.urdf"), spec, 3, 1) == 12);
  for (int i = 0; i < 12; i++) CHECK_REL(got[i], want[i], 1e-10, 1e-10);
  CHECK(got[11] > 0);   // the file has no <dynamics>: damping 0 before
  cJSON_Delete(root);
  free(text);
  // kinds URDF cannot hold are refused before any work
  r = run("identify", urdf, path("in_elbow.csv"), "--floating", "--param", "gravity", "--write-model",
          path("out/e2.urdf"), NULL);
  CHECK(r.code == 1 && has(r.err, "URDF has no place for this kind") && count_outputs() == 2);
  run_free(&r);
  clear_outputs();
}

// every bad input: the exit code, the message, no output file
static void test_bad_input(void) {
  char start[512], data[512], out[512];
  snprintf(start, sizeof start, "%s", path("in_start.xml"));
  snprintf(data, sizeof data, "%s", path("in_data.csv"));
  snprintf(out, sizeof out, "%s", path("out/bad.json"));
  struct {
    const char* args[12];
    int code;
    const char* msg;
  } cases[] = {
      // a --param the model does not have or cannot take: command line 2, the same from a --job file 1
      {{start, data, "--param", "damping:nosuch"}, 2, "no joint or spring named 'nosuch' (valid: swing"},
      {{start, data, "--param", "friction:nosuch"}, 2, "valid:"},
      {{start, data, "--param", "damping:swing:min=2:max=1"}, 2, "min 2 > max 1"},
      {{start, data, "--param", "damping:swing:init=3:max=1"}, 2, "init 3 lies outside [0, 1]"},
      {{start, data, "--param", "damping:swing:min=-1"}, 2, "min -1 is below the parameter's lower bound 0"},
      {{start, data, "--param", "damping:swing:init=a"}, 2, "init='a': expected 1 number"},
      {{start, data, "--job", write_file("in_jobparam.json", "{\"params\": [\"damping:nosuch\"]}")}, 1,
       "no joint or spring named 'nosuch' (valid: swing"},
      {{start, data, "--job", write_file("in_jobparam2.json", "{\"params\": [\"damping:swing:min=2:max=1\"]}")}, 1,
       "min 2 > max 1"},
      {{start, write_file("in_cols.csv", "t,q0,v0,zz\n0,1,0,0\n0.002,1,0,0\n"), "--param", "damping:swing"}, 1,
       "in_cols.csv:1:4: column 'zz' matches no coordinate"},
      {{start, write_file("in_nan.csv", "t,q0,v0\n0,1,0\n0.002,nan,0\n"), "--param", "damping:swing"}, 1,
       "in_nan.csv:3: column 'q0': value 'nan' is not finite"},
      {{start, path("in_emptydir"), "--param", "damping:swing"}, 1, "in_emptydir: empty folder"},
      {{start, data, "--param", "damping:swing", "--job", write_file("in_badjob.json", "{\"loss\": \"x\"}")}, 1,
       "key 'loss': expected one of onestep|kstep|rollout"},
      {{start, data, "--param", "damping:swing", "--job", write_file("in_badjob2.json", "{\"lose\": 1}")}, 1,
       "unknown key 'lose'"},
      {{start, data, "--param", "damping:swing", "--job", write_file("in_badjob4.json", "{\"velocities\": \"x\"}")},
       1, "key 'velocities': expected one of auto|differenced|measured"},
      {{start, data, "--param", "damping:swing", "--job", write_file("in_badjob3.json", "{\n\"loss\": ]")}, 1,
       "in_badjob3.json:2: not a JSON object"},
      // a job file that is a device is refused before it is read (it read 16 MiB of /dev/zero, then "not a JSON
      // object"); a folder too
      {{start, data, "--param", "damping:swing", "--job", "/dev/zero"}, 1, "/dev/zero: is a character device"},
      {{start, data, "--param", "damping:swing", "--job", path("in_emptydir")}, 1, "in_emptydir: is a folder"},
      {{start, data, "--param", "damping:swing", "--map", "x=q:nosuch"}, 1, "--map 'x=q:nosuch'"},
      {{start, data, "--param", "damping:swing", "--observe", "q:nosuch"}, 1, "--observe item 'q:nosuch'"},
      {{start, data, "--param", "damping:swing", "--write-model", path("out/w.urdf")}, 2, "format of"},
      {{start, data}, 2, "no parameter to identify"},
      {{start, "--param", "damping:swing"}, 2, "missing DATA"},
      {{start, data, "--param", "damping:swing", "--weights", "1,2"}, 2, "--weights '1,2'"},
      {{start, data, "--param", "damping:swing", "--loss", "twostep"}, 2, "--loss must be one of"},
      {{start, data, "--param", "damping:swing", "--velocities", "sometimes"}, 2, "--velocities must be one of"},
      {{path("in_nomodel.xml"), data, "--param", "damping:swing"}, 1, "in_nomodel.xml"},
      // the violation loss does not model actuator activations (issue 15 item 2)
      {{"tests/data/actuator_dynamics.xml",
        write_file("in_act.csv", "t,q0,q1,q2,q3,q4,q5,q6,q7,q8,q9,q10,v0,v1,v2,v3,v4,v5,v6,v7,v8,v9\n"
                                 "0,0,0,0,0,1,0,1,1,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
                                 "0.002,0,0,0,0,1,0,1,1,0,0,0,0,0,0,0,0,0,0,0,0,0\n"),
        "--param", "gain:capped", "--loss", "violation"},
       1, "fit: the violation loss does not model actuator activations (the model has 6, MuJoCo's act)"},
  };
  mkdir(path("in_emptydir"), 0755);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char* args[20] = {"identify"};
    int n = 1;
    for (int i = 0; cases[c].args[i]; i++) args[n++] = cases[c].args[i];
    args[n++] = "--out";
    args[n++] = out;
    args[n++] = "--report";
    args[n++] = path("out/bad.html");
    args[n] = NULL;
    idRunOut r = collect(spawn(args));
    CHECK_MSG(r.code == cases[c].code, "case %zu: exit %d, want %d: %s", c, r.code, cases[c].code, r.err);
    CHECK_MSG(has(r.err, cases[c].msg), "case %zu", c);
    CHECK_MSG(count_outputs() == 0, "case %zu left %d files", c, count_outputs());
    run_free(&r);
    clear_outputs();
  }
  // a job file over 16 MiB is refused by its size (it was cut at 16 MiB and parsed: "malformed JSON")
  FILE* big = fopen(path("in_bigjob.json"), "wb");
  static char blanks[1 << 16];
  memset(blanks, ' ', sizeof blanks);
  for (int i = 0; big && i < 257; i++) fwrite(blanks, 1, sizeof blanks, big);
  if (big) fclose(big);
  idRunOut r = run("identify", start, data, "--param", "damping:swing", "--job", path("in_bigjob.json"), NULL);
  CHECK(r.code == 1 && has(r.err, "in_bigjob.json: larger than 16777216 bytes: not a job file"));
  run_free(&r);
  unlink(path("in_bigjob.json"));
}

// outputs: every output checked before the fit (a folder, two outputs at one place, an output that is the data,
// the job file or a data file of an input folder, a --checkpoint that is an output (spelled otherwise), an input or
// in a missing folder: exit 1 with no fit and nothing written); after the fit, one failing output (--report
// /dev/full) leaves no output and no temporary; stdout on /dev/full exits 1; data that are a device (/dev/zero)
// are refused at once
static void test_outputs(void) {
  char start[512], data[512];
  snprintf(start, sizeof start, "%s", path("in_start.xml"));
  snprintf(data, sizeof data, "%s", path("in_data.csv"));
  char* before = slurp(data);
  mkdir(path("in_dd"), 0755);
  write_file("in_dd/a.csv", before);
  const char* job = write_file("in_job.json", "{\"quiet\": true}");
  struct {
    const char* args[6];
    const char* msg;
  } cases[] = {
      {{"--out", path("out/r.json"), "--report", path("out")}, "--report"},
      {{"--out", path("out/r.json"), "--report", path("out/../out/r.json")}, "the same file as --out"},
      {{"--out", path("out/r.json"), "--write-model", data}, "the same file as the input"},
      {{"--job", job, "--report", job}, "the same file as the input"},
      {{"--out", path("in_dd/a.csv"), "--report", path("out/r.html")}, "a data file in that folder"},
      // the checkpoint as the other outputs: a new file spelled two ways, an input, a folder that is missing
      {{"--out", path("out/r.json"), "--checkpoint", path("out/../out/r.json")}, "the same file as --out"},
      {{"--checkpoint", data, "--resume"}, "the same file as the input"},
      {{"--checkpoint", path("none/x.ckpt")}, "none: No such file or directory"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char* args[16] = {"identify", start, data, path("in_dd"), "--param", "damping:swing"};
    int n = 6;
    for (int i = 0; i < 6 && cases[c].args[i]; i++) args[n++] = cases[c].args[i];
    args[n] = NULL;
    idRunOut r = collect(spawn(args));
    CHECK_MSG(r.code == 1 && has(r.err, cases[c].msg), "case %zu: exit %d", c, r.code);
    CHECK_MSG(r.out[0] == 0 && !strstr(r.err, "trajectories"), "case %zu: the fit ran", c);   // before any work
    CHECK_MSG(count_outputs() == 0, "case %zu left %d files", c, count_outputs());
    run_free(&r);
  }
  char* after = slurp(data);
  CHECK(strcmp(before, after) == 0);
  free(after);
  free(before);
  idRunOut r = run("identify", start, data, "--param", "damping:swing", "--quiet", "--out", path("out/r.json"),
                   "--write-model", path("out/w.xml"), "--report", "/dev/full", NULL);
  CHECK(r.code == 1 && has(r.err, "--report /dev/full: write error: No space left on device"));
  CHECK(has(r.out, "damping:swing"));   // the fit ran: the outputs were checked, then written, then failed
  CHECK(count_outputs() == 0);
  run_free(&r);
  // stdout on /dev/full
  const char* full[] = {"identify", start, data, "--param", "damping:swing", "--quiet", NULL};
  r = collect(spawn_to(full, "/dev/full"));
  CHECK(r.code == 1 && has(r.err, "stdout: write error"));
  run_free(&r);
  r = run("identify", start, "/dev/zero", "--param", "damping:swing", "--out", path("out/z.json"), NULL);
  CHECK(r.code == 1 && has(r.err, "/dev/zero: is a character device; only regular files and FIFOs are read"));
  CHECK(count_outputs() == 0);
  run_free(&r);
  unlink(path("in_dd/a.csv"));
  rmdir(path("in_dd"));
}

// no temporary exists before the data are read: identify blocked on a data FIFO (it has opened it for reading)
// has created nothing, and SIGKILL then leaves nothing behind (the temporaries used to be created first)
static void test_sigkill_before_data(void) {
  const char* fifo = path("in_pipe.csv");
  unlink(fifo);
  CHECK(mkfifo(fifo, 0600) == 0);
  const char* args[] = {"identify", path("in_start.xml"), fifo, "--param", "damping:swing", "--out", path("out/k.json"),
                        "--report", path("out/k.html"), NULL};
  pid_t pid = spawn(args);
  int wr = -1;
  for (int i = 0; i < 2000 && wr < 0; i++) {   // opening the write end succeeds once physid opened the read end
    wr = open(fifo, O_WRONLY | O_NONBLOCK);
    if (wr < 0) nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  CHECK(wr >= 0);
  CHECK(count_outputs() == 0);
  kill(pid, SIGKILL);
  idRunOut r = collect(pid);
  CHECK(r.sig == SIGKILL && count_outputs() == 0);
  run_free(&r);
  if (wr >= 0) close(wr);
  unlink(fifo);
}

// --report on a FIFO whose reader leaves after 4 kB (the pipe buffer shrunk to one page): a write error (EPIPE,
// exit 1), not a death by SIGPIPE, so the finished --out temporary is removed and nothing is renamed
static void test_fifo_reader_leaves(void) {
  const char* fifo = path("in_report.fifo");
  unlink(fifo);
  CHECK(mkfifo(fifo, 0600) == 0);
  int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);   // not inherited: physid must not hold a reader
  CHECK(rd >= 0 && fcntl(rd, F_SETPIPE_SZ, 4096) >= 0);
  const char* args[] = {"identify", path("in_start.xml"), path("in_data.csv"), "--param", "damping:swing", "--quiet",
                        "--out", path("out/f.json"), "--report", fifo, NULL};
  pid_t pid = spawn(args);
  char buf[64];
  ssize_t got = -1;
  for (int i = 0; i < 3000 && got <= 0; i++) {   // wait for the report's first bytes (30 s at most)
    got = read(rd, buf, sizeof buf);
    if (got <= 0) nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  CHECK(got > 0);
  close(rd);
  idRunOut r = collect(pid);
  CHECK_MSG(r.code == 1 && r.sig == 0, "exit %d, signal %d", r.code, r.sig);
  CHECK(has(r.err, "Broken pipe"));
  CHECK(count_outputs() == 0);
  run_free(&r);
  clear_outputs();
  unlink(fifo);
}

// SIGINT while the fit runs: the process dies of SIGINT and leaves no output or temporary file (temporaries
// are created only after the fit, when their data are ready: none exists during the fit)
static void test_sigint(void) {
  idRunOut r = run("simulate", path("in_true.xml"), "--steps", "4000", "--quiet", "--out", path("in_long.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  const char* args[] = {"identify", path("in_start.xml"), path("in_long.csv"), "--param", "damping:swing",
                        "--optimizer", "adam", "--iters", "20000", "--lr", "1e-4", "--out", path("out/s.json"),
                        "--report", path("out/s.html"), NULL};
  pid_t pid = spawn(args);
  // wait for the first progress line of the fit (at most 20 s)
  int started = 0;
  for (int i = 0; i < 2000 && !started; i++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    char* err = slurp(path(".stderr"));
    started = strstr(err, "iter") != NULL;
    free(err);
  }
  CHECK(started);
  CHECK(count_outputs() == 0);   // no temporary file during the fit
  kill(pid, SIGINT);
  r = collect(pid);
  CHECK_MSG(r.sig == SIGINT, "exit %d signal %d", r.code, r.sig);
  CHECK(count_outputs() == 0);
  run_free(&r);
}

// --ctrl-value: a 2 kg slider on a frictionless rail pushed by a motor at 3 N (paper 000 Fig. 4b's known force):
// its mass follows exactly from data simulated with the same push, held from the data's u0 column (simulate writes
// the controls it used) or, on a file without it, from --ctrl-value; without the push in the fit the mass is wrong
// (the data's acceleration is then unexplained); --ctrl-value beside recorded controls exits 1, a wrong count 2
static void test_known_push(void) {
  const char* model = write_file("in_push.xml",
      "<mujoco><option timestep=\"0.01\" gravity=\"0 0 0\"/><worldbody><body name=\"cart\">"
      "<joint name=\"rail\" type=\"slide\" axis=\"1 0 0\" damping=\"0.5\"/>"
      "<geom type=\"box\" size=\".1 .1 .1\" mass=\"2\" contype=\"0\" conaffinity=\"0\"/></body></worldbody>"
      "<actuator><motor name=\"push\" joint=\"rail\"/></actuator></mujoco>\n");
  idRunOut r = run("simulate", model, "--steps", "100", "--ctrl-value", "3", "--quiet", "--out", path("in_push.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", model, path("in_push.csv"), "--param", "mass:cart:init=0.5", "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK_NEAR(printed(r.out, "mass:cart"), 2, 1e-8);
  run_free(&r);
  r = run("identify", model, path("in_push.csv"), "--param", "mass:cart:init=0.5", "--ctrl-value", "3", "--quiet", NULL);
  CHECK(r.code == 1 && has(r.err, "--ctrl-value: the data record their controls"));
  run_free(&r);
  // the same data without the u0 column: --ctrl-value gives the push, nothing gives no push
  char* text = slurp(path("in_push.csv"));
  for (char *p = text, *comma = NULL; *p; p++) {
    if (*p == ',') comma = p;
    if (*p == '\n' && comma) memmove(comma, p, strlen(p) + 1), p = comma, comma = NULL;
  }
  CHECK(strncmp(text, "t,q0,v0\n", 8) == 0);
  write_file("in_push_state.csv", text);
  free(text);
  r = run("identify", model, path("in_push_state.csv"), "--param", "mass:cart:init=0.5", "--ctrl-value", "3", "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK_NEAR(printed(r.out, "mass:cart"), 2, 1e-8);
  run_free(&r);
  r = run("identify", model, path("in_push_state.csv"), "--param", "mass:cart:init=0.5", "--quiet", NULL);
  CHECK(r.code == 0 && !(fabs(printed(r.out, "mass:cart") - 2) < 1e-3));
  run_free(&r);
  r = run("identify", model, path("in_push_state.csv"), "--param", "mass:cart", "--ctrl-value", "3,1", "--quiet", NULL);
  CHECK(r.code == 2 && has(r.err, "2 values for 1 actuators"));
  run_free(&r);
  // the job key ctrl_value ("U0,.." or [U0, ..]) gives the push as the option does; the option overrides it (a
  // push of 0 leaves the mass wrong); a bad value or count names the file and the key (exit 1)
  const char* cjobs[3] = {"{\"ctrl_value\": \"3\"}", "{\"ctrl_value\": [3]}", "{\"ctrl_value\": [3]}"};
  for (int i = 0; i < 3; i++) {
    const char* job = write_file("in_push_job.json", cjobs[i]);
    r = run("identify", model, path("in_push_state.csv"), "--param", "mass:cart:init=0.5", "--job", job, "--quiet",
            i == 2 ? "--ctrl-value" : NULL, "0", NULL);
    CHECK_MSG(r.code == 0, "%s", r.err);
    CHECK_MSG(i == 2 ? !(fabs(printed(r.out, "mass:cart") - 2) < 1e-3) : fabs(printed(r.out, "mass:cart") - 2) < 1e-8,
              "job %d: mass %g", i, printed(r.out, "mass:cart"));
    run_free(&r);
  }
  const char* bad[4][2] = {{"{\"ctrl_value\": \"3,x\"}", "key 'ctrl_value': expected \"U0,U1,..\" or [U0, U1, ...]"},
                           {"{\"ctrl_value\": [3, \"1\"]}", "key 'ctrl_value': expected"},
                           {"{\"ctrl_value\": []}", "key 'ctrl_value': expected"},
                           {"{\"ctrl_value\": [3, 1]}", "in_push_job.json: key 'ctrl_value': 2 values for 1 actuators"}};
  for (int i = 0; i < 4; i++) {
    const char* job = write_file("in_push_job.json", bad[i][0]);
    r = run("identify", model, path("in_push_state.csv"), "--param", "mass:cart", "--job", job, "--quiet", NULL);
    CHECK_MSG(r.code == 1 && has(r.err, "in_push_job.json: ") && has(r.err, bad[i][1]), "%d: %d %s", i, r.code, r.err);
    run_free(&r);
  }
  r = run("identify", model, path("in_push.csv"), "--param", "mass:cart", "--job", write_file("in_push_job.json",
          cjobs[0]), "--quiet", NULL);
  CHECK(r.code == 1 && has(r.err, "in_push_job.json: key 'ctrl_value': the data record their controls"));
  run_free(&r);
}

// 0 and a message if the two models differ: every array of PHYS_MODEL_ARRAYS (doubles within 1e-12 relative,
// 1e-15 absolute; integers and names exactly), the sizes and the options
static int same_model(const physModel* a, const physModel* b) {
  int ok = a->nq == b->nq && a->nv == b->nv && a->nbody == b->nbody && a->ngeom == b->ngeom && a->nu == b->nu &&
           a->njnt == b->njnt && a->nexclude == b->nexclude && a->nkey == b->nkey && a->nnames == b->nnames &&
           a->opt.timestep == b->opt.timestep && a->opt.contact == b->opt.contact &&
           a->opt.disableflags == b->opt.disableflags && !memcmp(a->opt.gravity, b->opt.gravity, sizeof(a->opt.gravity));
  if (!ok) fprintf(stderr, "  sizes or options differ\n");
  const int nq = a->nq, nv = a->nv, nu = a->nu, na = a->na;   // the row lengths of the keyframe arrays
#define SAME(type, name, count, mult)                                                                   \
  for (int i_ = 0; ok && i_ < a->count * (mult); i_++) {                                                  \
    double x_ = (double)a->name[i_], y_ = (double)b->name[i_];                                             \
    if (fabs(x_ - y_) > 1e-15 + 1e-12 * fabs(y_)) {                                                       \
      fprintf(stderr, "  %s[%d]: %.17g vs %.17g\n", #name, i_, x_, y_);                                   \
      ok = 0;                                                                                              \
    }                                                                                                      \
  }
  PHYS_MODEL_ARRAYS(SAME)
#undef SAME
  return ok;
}

// model + the floor simulated, identified in one parameter (spec, started at init) with --write-model: the
// written world loads back as the composed world with the identified value (same_model); returns the composed
// world (caller frees; NULL on failure)
static physModel* world_round_trip(const char* model, const char* spec, const char* init, const char* tag) {
  char data[64], json[64], out[64], param[128];
  snprintf(data, sizeof data, "in_%s_world.csv", tag);
  snprintf(json, sizeof json, "out/%s_w.json", tag);
  snprintf(out, sizeof out, "out/%s_world.xml", tag);
  snprintf(param, sizeof param, "%s:init=%s", spec, init);
  idRunOut r = run("simulate", model, "--add", "models/floor.xml", "--steps", "10", "--quiet", "--out", path(data), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", model, path(data), "--add", "models/floor.xml", "--param", param, "--iters", "1", "--quiet",
          "--out", path(json), "--write-model", path(out), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  char* text = slurp(path(json));
  cJSON* root = cJSON_Parse(text);
  double theta[1];
  CHECK(result_values(theta, root, "value") == 1);
  physLog log = {0};
  const char* add[1] = {"models/floor.xml"};
  physLoadOptions lo = {.add = add, .nadd = 1};
  physModel* want = phys_load(model, &lo, &log);
  physModel* got = phys_load(path(out), NULL, &log);
  physParamTable t;
  CHECK_MSG(want && got, "%s", log.error);
  if (want && got && phys_param_table_build(&t, want, &spec, 1, &log) == PHYS_OK) {
    CHECK(phys_param_set(&t, want, theta) == PHYS_OK);
    CHECK(same_model(got, want));
    phys_param_table_free(&t);
  }
  phys_free_model(got);
  cJSON_Delete(root);
  free(text);
  return want;
}

// --write-model of a world composed with --add: one MJCF file that loads back as the identified world (every
// array of the model, the identified values included, within 1e-12); a .urdf name is refused before the fit
static void test_write_world(void) {
  const char* urdf = "tests/data/elbow/elbow.urdf";
  write_file("state.csv", "t,q0,q1,q2,q3,q4,q5,q6,q7,v0,v1,v2,v3,v4,v5,v6\n"
                          "0,0,0,0.1,0.8,0.2,0.4,0.4,0.4,0.5,0,-1,1,2,-1,3\n");
  idRunOut r = run("simulate", urdf, "--floating", "--add", "models/floor.xml", "--steps", "60", "--init",
                   path("state.csv"), "--quiet", "--out", path("in_world.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  const char* spec[4] = {"friction:elbow_1", "restitution:elbow_2", "mass:elbow_2", "damping:hinge_1_to_2"};
  r = run("identify", urdf, path("in_world.csv"), "--floating", "--add", "models/floor.xml", "--param",
          "friction:elbow_1:init=0.5", "--param", "restitution:elbow_2:init=0.2", "--param", "mass:elbow_2:init=0.4",
          "--param", "damping:hinge_1_to_2:init=0.01", "--iters", "2", "--quiet", "--out", path("out/w.json"),
          "--write-model", path("out/world.xml"), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  // the composed world with the identified values set, against the written file
  char* text = slurp(path("out/w.json"));
  cJSON* root = cJSON_Parse(text);
  double theta[8];
  CHECK(result_values(theta, root, "value") == 4);
  physLog log = {0};
  const char* add[1] = {"models/floor.xml"};
  physLoadOptions lo = {.urdf_floating = 1, .add = add, .nadd = 1};
  physModel* want = phys_load(urdf, &lo, &log);
  physModel* got = phys_load(path("out/world.xml"), NULL, &log);
  CHECK_MSG(want && got, "%s", log.error);
  physParamTable t;
  if (want && got && phys_param_table_build(&t, want, spec, 4, &log) == PHYS_OK) {
    double before[8];
    phys_param_get(&t, want, before);
    CHECK(phys_param_set(&t, want, theta) == PHYS_OK);
    for (int i = 0; i < 4; i++) CHECK_MSG(theta[i] != before[i], "%s not moved by the fit", spec[i]);
    CHECK(same_model(got, want));
    double back[8];
    phys_param_get(&t, got, back);
    for (int i = 0; i < 4; i++) CHECK_MSG(back[i] == theta[i], "%s: %.17g read back, %.17g identified", spec[i], back[i], theta[i]);
    phys_param_table_free(&t);
  }
  phys_free_model(want);
  phys_free_model(got);
  cJSON_Delete(root);
  free(text);
  r = run("identify", urdf, path("in_world.csv"), "--floating", "--add", "models/floor.xml", "--param",
          "friction:elbow_1", "--write-model", path("out/world.urdf"), NULL);
  CHECK(r.code == 2 && has(r.err, "is written as one MJCF file") && count_outputs() == 2);
  run_free(&r);
  // a world with every element the writer knows (tests/data/mixed.xml: ball, hinge, slide and free joints, a
  // spatial tendon through sites, motors on joints and on the tendon) plus the floor
  want = world_round_trip("tests/data/mixed.xml", "damping:slide", "0.5", "mixed");
  CHECK(want && want->nspring == 1 && want->nsite == 2 && want->nu == 3);
  phys_free_model(want);
  // fixed tendons (issue 15 item 3: <fixed> with joints and coefficients, spatial tendons, one through a pulley,
  // motors on tendons)
  want = world_round_trip("tests/data/tendons_fixed.xml", "stiffness:couple", "10", "tendon");
  CHECK(want && want->nspring == 5 && want->spring_type[0] == PHYS_SPRING_FIXED);
  phys_free_model(want);
  // tendons wrapping geoms (issue 15 item 3: their derivatives, tendon_deriv.h): the helix's stiffness from 10 back
  // to the simulated 20 on 0.3 s of tests/data/tendons_wrap.xml
  r = run("simulate", "tests/data/tendons_wrap.xml", "--steps", "300", "--quiet", "--out", path("in_wrap.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  r = run("identify", "tests/data/tendons_wrap.xml", path("in_wrap.csv"), "--param", "stiffness:helix:init=10",
          "--quiet", NULL);
  double kw = r.code == 0 ? printed(r.out, "stiffness:helix") : 0;
  CHECK_MSG(r.code == 0 && fabs(kw - 20) < 1e-6, "exit %d: %s %s", r.code, r.out, r.err);
  printf("stiffness:helix of a tendon wrapping two cylinders (truth 20, from 10): %.12g\n", kw);
  run_free(&r);
  // a tendon with frictionloss under --contact penalty (issue 15 item 3: derivatives since s33, were refused): a
  // slide driven by random controls against the tendon's regularized friction; its damping from 0.1 back to 0.3
  const char* dry = write_file("in_dry.xml",
                               "<mujoco><worldbody><body><joint name='z' type='slide' damping='0.3'/><geom size='.1'/>"
                               "</body></worldbody><tendon><fixed name='t' frictionloss='1'><joint joint='z' coef='2'/>"
                               "</fixed></tendon><actuator><motor joint='z' gear='5'/></actuator></mujoco>\n");
  r = run("simulate", dry, "--steps", "500", "--every", "10", "--ctrl", "random", "--seed", "4", "--contact",
          "penalty", "--quiet", "--out", path("in_dry.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", dry, path("in_dry.csv"), "--param", "damping:z:init=0.1", "--contact", "penalty", "--quiet",
          NULL);
  double bz = r.code == 0 ? printed(r.out, "damping:z") : 0;
  CHECK_MSG(r.code == 0 && fabs(bz - 0.3) < 1e-8, "exit %d: %s %s", r.code, r.out, r.err);
  printf("damping:z against a tendon's frictionloss under penalty (truth 0.3, from 0.1): %.12g\n", bz);
  run_free(&r);
  // a limited tendon under penalty: its limit spring has derivatives (penalty_deriv.c): a ball on a slide falls
  // 1.2 s onto the tendon's lower limit (L = z >= -1) and rests on its spring; penalty:stiffness from 5000 back to
  // the simulated 10000
  const char* lim = write_file("in_lim.xml",
                               "<mujoco><worldbody><body><joint name='z' type='slide' damping='0.5'/><geom size='.1'/>"
                               "</body></worldbody><tendon><fixed name='t' limited='true' range='-1 1'><joint joint='z' "
                               "coef='1'/></fixed></tendon></mujoco>\n");
  r = run("simulate", lim, "--steps", "600", "--contact", "penalty", "--quiet", "--out", path("in_lim.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  r = run("identify", lim, path("in_lim.csv"), "--param", "penalty:stiffness:init=5000", "--contact", "penalty",
          "--quiet", NULL);
  double kc = r.code == 0 ? printed(r.out, "penalty:stiffness") : 0;
  CHECK_MSG(r.code == 0 && fabs(kc - 10000) < 1e-6, "exit %d: %s %s", r.code, r.out, r.err);
  printf("penalty:stiffness through a tendon's limit spring (truth 10000, from 5000): %.12g\n", kc);
  run_free(&r);
  // slider-cranks (issue 15) have step derivatives (s33; were refused): MuJoCo's sample under random controls,
  // kp of the forward servo and the gear of the backward one come back from wrong starts
  r = run("simulate", SLIDER_CRANK, "--steps", "500", "--every", "10", "--ctrl", "random", "--seed", "3", "--quiet",
          "--out", path("in_crank.csv"), NULL);
  CHECK(r.code == 0);
  run_free(&r);
  r = run("identify", SLIDER_CRANK, path("in_crank.csv"), "--param", "kp:forward:init=20", "--param",
          "gear:backward:init=1.3", "--substeps", "10", "--quiet", NULL);
  double kp = r.code == 0 ? printed(r.out, "kp:forward") : 0, gear = r.code == 0 ? printed(r.out, "gear:backward") : 0;
  CHECK_MSG(r.code == 0 && fabs(kp - 30) < 1e-8 && fabs(gear - 1) < 1e-10, "exit %d: %s %s", r.code, r.out, r.err);
  printf("slider_crank.xml: kp:forward %.12g (truth 30, from 20), gear:backward %.12g (truth 1, from 1.3)\n", kp, gear);
  run_free(&r);
  // adhesion actuators (issue 15, s33) simulate without derivatives: refused before any work, naming the actuator
  const char* adh = write_file("in_adh.xml", "<mujoco><worldbody><geom type='plane' size='1 1 .1'/><body name='b' "
                               "pos='0 0 .1'><joint name='j' type='slide' axis='0 0 1' damping='.1'/><geom size='.1'/>"
                               "</body></worldbody><actuator><adhesion name='grip' body='b' ctrlrange='0 1'/>"
                               "</actuator></mujoco>\n");
  r = run("identify", adh, path("in_tendon_world.csv"), "--param", "damping:j", "--out", path("out/adh.json"), NULL);
  CHECK_MSG(r.code == 1 && has(r.err, "in_adh.xml: actuator 'grip' is an adhesion actuator: the step derivatives do "
                                      "not support it"), "exit %d: %s", r.code, r.err);
  CHECK(access(path("out/adh.json"), F_OK) != 0);
  run_free(&r);
  // torsional and rolling friction (issue 16) have step derivatives under every contact model (penalty s31, lcp,
  // cone and ccp s32): none refuses a condim-6 model for it
  const char* spin = write_file("in_spin.xml", "<mujoco><worldbody><geom type='plane' size='5 5 .1'/><body><joint "
                                "name='z' type='slide'/><geom size='.1' condim='6'/></body></worldbody></mujoco>\n");
  for (int k = 0; k < 4; k++) {
    static const char* const model[] = {"penalty", "lcp", "cone", "ccp"};
    r = run("identify", spin, path("in_tendon_world.csv"), "--param", "damping:z", "--contact", model[k], "--out",
            path("out/spin.json"), NULL);
    CHECK_MSG(!has(r.err, "condim 4 or 6"), "%s refused condim 6: exit %d: %s", model[k], r.code, r.err);
    run_free(&r);
  }
  // an --add file is an input: never an output (refused before any work, the file unchanged)
  const char* floor_text = "<mujoco><worldbody><geom name='floor' type='plane' size='5 5 .1'/></worldbody></mujoco>\n";
  const char* floor = write_file("in_floor.xml", floor_text);
  r = run("identify", urdf, path("in_world.csv"), "--floating", "--add", floor, "--param", "friction:elbow_1",
          "--write-model", floor, NULL);
  CHECK_MSG(r.code == 1 && has(r.err, "the same file as the input"), "exit %d: %s", r.code, r.err);
  run_free(&r);
  char* kept = slurp(floor);
  CHECK(kept && !strcmp(kept, floor_text));
  free(kept);
  // the job file's "add" and "actuate": the same world (nu 1: the hinge's motor); "add" must be an array
  char job[1024];
  snprintf(job, sizeof job, "{\"model\": \"%s\", \"floating\": true, \"add\": [\"models/floor.xml\"], \"actuate\": true, "
           "\"data\": [\"%s\"], \"params\": [\"friction:floor:init=0.3\"], \"iters\": 1, \"quiet\": true, \"write_model\": \"%s\"}",
           urdf, path("in_world.csv"), path("out/job.xml"));
  r = run("identify", "--job", write_file("world.json", job), NULL);
  CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
  run_free(&r);
  physModel* m = phys_load(path("out/job.xml"), NULL, &log);
  CHECK_MSG(m && m->nu == 1 && m->ngeom == 3 && m->nq == 8, "%s", log.error);
  phys_free_model(m);
  r = run("identify", "--job", write_file("world.json", "{\"model\": \"m.xml\", \"add\": \"floor.xml\"}"), NULL);
  CHECK(r.code == 1 && has(r.err, "key 'add': expected an array of model file names"));
  run_free(&r);
  clear_outputs();
}

// simulate -> identify round trip with recorded inputs (issue 12 item 1): a 2-link arm driven by random controls
// (simulate draws them once per written row and writes them as u0, u1) is fitted from the file alone: link masses
// and a damping come back to 1e-6; --ctrl-file replays the same file's controls into the same trajectory, bit for
// bit; evaluate predicts it exactly (its hold is the fit's); a file that lacks a control names the expected ones
static void test_recorded_round_trip(void) {
  const char* model = write_file("in_arm2.xml",
      "<mujoco model='arm2'><option timestep='0.002'/><worldbody><body name='a'>"
      "<joint name='j1' axis='0 1 0' damping='0.3'/><geom type='capsule' fromto='0 0 0 0 0 -.3' size='.03' mass='1.2' "
      "contype='0' conaffinity='0'/><body name='b' pos='0 0 -.3'><joint name='j2' axis='0 1 0' damping='0.2'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -.3' size='.03' mass='0.8' contype='0' conaffinity='0'/></body></body>"
      "</worldbody><actuator><motor name='m1' joint='j1' ctrllimited='true' ctrlrange='-3 3'/>"
      "<motor name='m2' joint='j2' ctrllimited='true' ctrlrange='-2 2'/></actuator></mujoco>\n");
  idRunOut r = run("simulate", model, "--steps", "400", "--every", "5", "--ctrl", "random", "--seed", "4", "--quiet",
                   "--out", path("in_arm2.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  char* text = slurp(path("in_arm2.csv"));
  CHECK(strncmp(text, "t,q0,q1,v0,v1,u0,u1\n", 20) == 0);
  free(text);
  r = run("identify", model, path("in_arm2.csv"), "--param", "mass:a:init=1.5", "--param", "mass:b:init=0.6",
          "--param", "damping:j1:init=0.5", "--substeps", "5", "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  printf("round trip with recorded controls: mass:a %.9g mass:b %.9g damping:j1 %.9g\n", printed(r.out, "mass:a"),
         printed(r.out, "mass:b"), printed(r.out, "damping:j1"));
  CHECK(fabs(printed(r.out, "mass:a") - 1.2) < 1e-6 && fabs(printed(r.out, "mass:b") - 0.8) < 1e-6 &&
        fabs(printed(r.out, "damping:j1") - 0.3) < 1e-6);
  run_free(&r);
  // replay: the same controls from the file give the same rows
  r = run("simulate", model, "--steps", "400", "--every", "5", "--ctrl-file", path("in_arm2.csv"), "--quiet", "--out",
          path("in_arm2_replay.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  char *a = slurp(path("in_arm2.csv")), *b = slurp(path("in_arm2_replay.csv"));
  CHECK_MSG(strcmp(a, b) == 0, "replayed trajectory differs");
  free(a), free(b);
  r = run("evaluate", model, path("in_arm2.csv"), "--substeps", "5", "--json", path("in_eval.json"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  char* json = slurp(path("in_eval.json"));
  double hmax = -1;
  const char* h = strstr(json, "\"hinge_deg\"");
  if (h && strstr(h, "\"max\": ")) hmax = atof(strstr(h, "\"max\": ") + 7);
  printf("evaluate with recorded controls: hinge max %.3g deg\n", hmax);
  CHECK(hmax >= 0 && hmax < 1e-9);
  free(json);
  run_free(&r);
  // a control missing from a named file, an input file without inputs
  write_file("in_arm2_miss.csv", "t,j1,j2,ctrl:m2\n0,0,0,1\n0.01,0,0,1\n");
  r = run("identify", model, path("in_arm2_miss.csv"), "--param", "mass:a", "--quiet", NULL);
  CHECK(r.code == 1 && has(r.err, "in_arm2_miss.csv:1: the columns give 1 of the 2 controls") &&
        has(r.err, "missing: u0 (ctrl:m1)"));
  run_free(&r);
  write_file("in_arm2_none.csv", "t,j1,j2\n0,0,0\n0.01,0,0\n");
  r = run("simulate", model, "--steps", "3", "--ctrl-file", path("in_arm2_none.csv"), "--quiet", NULL);
  CHECK(r.code == 1 && has(r.err, "no recorded inputs: expected the controls u0..u1"));
  run_free(&r);
  r = run("simulate", model, "--steps", "3", "--ctrl-file", path("in_arm2.csv"), "--ctrl", "random", NULL);
  CHECK(r.code == 2 && has(r.err, "--ctrl-file replays recorded inputs: it excludes --ctrl random"));
  run_free(&r);
}

// joint frictionloss (issue 12 item 4): a 2-link arm with dry friction on both joints (0.25 and 0.15 N m) driven by
// random controls that make it stick and slip in turn; identify recovers both from 0.1 and 0.3 (through the
// frictionloss rows' derivatives; measured to 1e-6, asserted at 1%), writes them back as the joints' frictionloss
// attribute, and the tied pattern frictionloss:j* fits one value between the two; with the arm in a world composed
// with a floor (--add), the written world file carries both joints' frictionloss
// activations (issue 15 item 2): `simulate` writes act0 (the filter's activation) after u0; identify recovers the
// filter's time constant timeconst:lag (truth 0.05) from 0.1 with the default staged fit, the segments starting at
// the recorded act, and --write-model writes it as dynprm; the same file without its act column (the documented default: act 0 at every segment start)
// reads and fits, but is biased (the mid-trajectory segments start from the wrong activation)
static void test_act_timeconst(void) {
  const char* model = "tests/data/actuator_filter.xml";
  idRunOut r = run("simulate", model, "--steps", "400", "--every", "5", "--ctrl", "random", "--seed", "4", "--quiet",
                   "--out", path("in_act_filter.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  char* text = slurp(path("in_act_filter.csv"));
  CHECK_MSG(text && strncmp(text, "t,q0,v0,u0,act0\n", 16) == 0, "%s", text ? text : "(none)");
  r = run("identify", model, path("in_act_filter.csv"), "--param", "timeconst:lag:init=0.1", "--quiet",
          "--write-model", path("out/act_filter.xml"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  double tau = printed(r.out, "timeconst:lag");
  printf("timeconst:lag from simulated data with act0 (truth 0.05): %.12g\n", tau);
  CHECK(fabs(tau - 0.05) < 1e-9);
  run_free(&r);
  char* xml = slurp(path("out/act_filter.xml"));   // written as <general dynprm="tau 0 0">
  const char* dp = xml ? strstr(xml, "dynprm=\"") : NULL;
  CHECK_MSG(dp && fabs(atof(dp + 8) - tau) < 1e-12, "written model: %s", xml ? xml : "(none)");
  free(xml);
  // the same rows with named columns (act:ACTUATOR, issue 15): the same fit to the last bit
  const char* body = text ? strchr(text, '\n') : NULL;
  char* named = malloc(strlen(body ? body : "") + 64);
  snprintf(named, strlen(body ? body : "") + 64, "time,hinge,hinge_dot,ctrl:lag,act:lag%s", body ? body : "");
  r = run("identify", model, write_file("in_act_named.csv", named), "--param", "timeconst:lag:init=0.1", "--quiet",
          NULL);
  CHECK_MSG(r.code == 0 && printed(r.out, "timeconst:lag") == tau, "exit %d: %s %s", r.code, r.out, r.err);
  run_free(&r);
  free(named);
  // without the act column: act 0 at each segment start
  char* cut = text ? strdup(text) : NULL;
  for (char *rd = cut, *wr = cut; rd && *rd; ) {   // drop the last field of every line
    char* eol = strchr(rd, '\n');
    char* comma = eol ? eol : rd + strlen(rd);
    while (comma > rd && *comma != ',') comma--;
    size_t n = (size_t)(comma - rd);
    memmove(wr, rd, n);
    wr += n;
    *wr++ = '\n';
    *wr = 0;
    rd = eol ? eol + 1 : rd + strlen(rd);
  }
  const char* noact = write_file("in_act_filter_noact.csv", cut ? cut : "");
  CHECK(cut && strncmp(cut, "t,q0,v0,u0\n", 11) == 0);
  r = run("identify", model, noact, "--param", "timeconst:lag:init=0.1", "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  double tau0 = printed(r.out, "timeconst:lag");
  printf("timeconst:lag from the same data without act0 (act 0 at segment starts): %.9g\n", tau0);
  CHECK(fabs(tau0 - 0.05) > 1e-6);   // (the documented bias of the default)
  run_free(&r);
  free(cut);
  free(text);
}

// muscles (issue 15, s32): arm26 (MuJoCo's sample, six muscles on wrapped tendons) driven by random controls
// for 1 s; identify recovers BF's peak force (truth scale / acc0, from 60) and SF's two activation time
// constants (truth 0.01, 0.04, from 0.02, 0.06) through the muscles' step derivatives, and --write-model writes
// them as the <muscle>'s force and timeconst attributes
static void test_muscle_arm26(void) {
  const char* model = "/usr/share/mujoco/model/tendon_arm/arm26.xml";
  idRunOut r = run("simulate", model, "--steps", "200", "--every", "2", "--ctrl", "random", "--seed", "4", "--quiet",
                   "--out", path("in_arm26.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(model, NULL, &log);
  physParamTable t;
  static const char* spec[] = {"force:BF"};
  double truth = NAN;
  if (m && phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK) {
    phys_param_get(&t, m, &truth);
    phys_param_table_free(&t);
  }
  phys_free_model(m);
  r = run("identify", model, path("in_arm26.csv"), "--param", "force:BF:init=60", "--param",
          "timeconst:SF:init=0.02,0.06", "--quiet", "--write-model", path("out/arm26.xml"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  char* xml = slurp(path("out/arm26.xml"));
  const char* f = xml ? strstr(xml, "force=\"") : NULL;
  const char* tc = xml ? strstr(xml, "timeconst=\"") : NULL;
  double F = f ? atof(f + 7) : NAN, tau[2] = {NAN, NAN};
  if (tc) sscanf(tc + 11, "%lf %lf", tau, tau + 1);
  printf("arm26: force:BF %.12g (truth %.12g, from 60), timeconst:SF %.12g %.12g (truth 0.01 0.04)\n", F, truth,
         tau[0], tau[1]);
  CHECK_MSG(fabs(F - truth) <= 1e-6 * truth && fabs(tau[0] - 0.01) <= 1e-8 && fabs(tau[1] - 0.04) <= 1e-8,
            "written model: %s", xml ? xml : "(none)");
  free(xml);
}

static void test_frictionloss_round_trip(void) {
  const char* model = write_file("in_arm2f.xml",
      "<mujoco model='arm2f'><option timestep='0.002'/><worldbody><body name='a'>"
      "<joint name='j1' axis='0 1 0' damping='0.1' frictionloss='0.25'/><geom type='capsule' fromto='0 0 0 0 0 -.3' "
      "size='.03' mass='1.2' contype='0' conaffinity='0'/><body name='b' pos='0 0 -.3'><joint name='j2' axis='0 1 0' "
      "frictionloss='0.15'/><geom type='capsule' fromto='0 0 0 0 0 -.3' size='.03' mass='0.8' contype='0' "
      "conaffinity='0'/></body></body></worldbody><actuator><motor name='m1' joint='j1' ctrllimited='true' "
      "ctrlrange='-3 3'/><motor name='m2' joint='j2' ctrllimited='true' ctrlrange='-2 2'/></actuator></mujoco>\n");
  idRunOut r = run("simulate", model, "--steps", "400", "--every", "5", "--ctrl", "random", "--seed", "5", "--quiet",
                   "--out", path("in_arm2f.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  r = run("identify", model, path("in_arm2f.csv"), "--param", "frictionloss:j1:init=0.1", "--param",
          "frictionloss:j2:init=0.3", "--substeps", "5", "--quiet", "--write-model", path("out/arm2f.xml"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  double f1 = printed(r.out, "frictionloss:j1"), f2 = printed(r.out, "frictionloss:j2");
  printf("frictionloss round trip (truth 0.25, 0.15): %.9g %.9g\n", f1, f2);
  CHECK(fabs(f1 - 0.25) < 0.0025 && fabs(f2 - 0.15) < 0.0015);
  run_free(&r);
  char* xml = slurp(path("out/arm2f.xml"));
  const char* j2 = xml ? strstr(xml, "name=\"j2\"") : NULL;
  const char* fl = j2 ? strstr(j2, "frictionloss=") : NULL;
  CHECK_MSG(fl && fabs(atof(fl + 14) - f2) < 1e-12, "written model: %s", xml ? xml : "(none)");
  free(xml);
  r = run("identify", model, path("in_arm2f.csv"), "--param", "frictionloss:j*:init=0.1", "--substeps", "5",
          "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  double tied = printed(r.out, "frictionloss:j*");
  printf("tied frictionloss:j* (truth 0.25 and 0.15): %.6g\n", tied);
  CHECK(tied > 0.15 && tied < 0.25);
  run_free(&r);
  // a composed world (the arm 1 m above models/floor.xml): the written world carries both joints' frictionloss
  char* text = slurp(model);
  char* at = text ? strstr(text, "<body name='a'>") : NULL;
  CHECK(at != NULL);
  if (at) {
    char high[4096];
    snprintf(high, sizeof high, "%.*s<body name='a' pos='0 0 1'>%s", (int)(at - text), text, at + 15);
    write_file("in_arm2fh.xml", high);
  }
  free(text);
  r = run("simulate", path("in_arm2fh.xml"), "--add", "models/floor.xml", "--steps", "400", "--every", "5", "--ctrl",
          "random", "--seed", "5", "--quiet", "--out", path("in_arm2fh.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  r = run("identify", path("in_arm2fh.xml"), "--add", "models/floor.xml", path("in_arm2fh.csv"), "--param",
          "frictionloss:j1:init=0.1", "--substeps", "5", "--quiet", "--write-model", path("out/arm2fh_world.xml"), NULL);
  CHECK_MSG(r.code == 0 && fabs(printed(r.out, "frictionloss:j1") - 0.25) < 0.0025, "%s%s", r.out, r.err);
  run_free(&r);
  char* world = slurp(path("out/arm2fh_world.xml"));
  const char* w1 = world ? strstr(world, "name=\"j1\"") : NULL;
  const char* w2 = world ? strstr(world, "name=\"j2\"") : NULL;
  const char* wf1 = w1 ? strstr(w1, "frictionloss=\"") : NULL;
  const char* wf2 = w2 ? strstr(w2, "frictionloss=\"") : NULL;
  CHECK_MSG(wf1 && wf2 && fabs(atof(wf1 + 14) - 0.25) < 0.0025 && atof(wf2 + 14) == 0.15, "%s",
            world ? world : "(none)");
  free(world);
  clear_outputs();
}

// identification through equality constraints (issue 15 item 3): tests/data/equality_deriv.xml (a four-bar closed
// by a connect, with a motor on its crank, a box welded to the crank and a joint coupling) simulated under random
// controls; damping:rocker and mass:coupler fitted from 0.3 and 0.5 recover the file's values (0.1 and the
// capsule's mass) to 1e-9 (measured 1.6e-14, 3.3e-14), through the step derivatives with equality rows
// (src/grad/step_equality_deriv.c); then the coupling's polycoef:couple (issue 15 item 2) from a linear guess, and
// under penalty its solref
static void test_equality_round_trip(void) {
  static const char* model = "tests/data/equality_deriv.xml";
  static const char* const spec[] = {"damping:rocker", "mass:coupler"};
  double truth[2];
  CHECK(model_theta(truth, model, spec, 2, 0) == 2);
  idRunOut r = run("simulate", model, "--steps", "400", "--every", "5", "--ctrl", "random", "--seed", "3", "--quiet",
                   "--out", path("in_eq.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  r = run("identify", model, path("in_eq.csv"), "--param", "damping:rocker:init=0.3", "--param", "mass:coupler:init=0.5",
          "--quiet", "--out", path("out/eq.json"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  char* json = slurp(path("out/eq.json"));
  cJSON* root = json ? cJSON_Parse(json) : NULL;
  double v[2] = {NAN, NAN};
  CHECK(root && result_values(v, root, "value") == 2);
  printf("four-bar with equalities: damping:rocker %.15g (truth %g), mass:coupler %.15g (truth %.15g)\n", v[0],
         truth[0], v[1], truth[1]);
  CHECK(fabs(v[0] - truth[0]) < 1e-9 && fabs(v[1] - truth[1]) < 1e-9);
  cJSON_Delete(root);
  free(json);
  // issue 15 item 2: the quartic coupling's polycoef (truth 0 0.5 0.3 -0.2 0.1) from a linear guess, through the
  // hard rows (lcp) and written back to <equality><joint polycoef>
  r = run("identify", model, path("in_eq.csv"), "--param", "polycoef:couple:init=0,0.4,0,0,0", "--quiet",
          "--write-model", path("out/eq.xml"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  physModel* got = phys_load(path("out/eq.xml"), NULL, NULL);
  double want[5] = {0, 0.5, 0.3, -0.2, 0.1}, worst = 0;
  for (int k = 0; got && k < 5; k++) worst = fmax(worst, fabs(got->eq_data[PHYS_EQ_NDATA * 2 + k] - want[k]));
  printf("four-bar's quartic coupling: polycoef:couple from (0 0.4 0 0 0), worst error %.3g\n", worst);
  CHECK(got && worst < 1e-8);
  phys_free_model(got);
  // under penalty the coupling is a spring-damper: its solref (0.02 1, the default) from (0.03 0.8), through the
  // springs' derivatives (100 steps: the penalty tape's parameter rows are the costly part)
  r = run("simulate", model, "--steps", "100", "--every", "5", "--ctrl", "random", "--seed", "3", "--contact", "penalty",
          "--quiet", "--out", path("in_eqp.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  r = run("identify", model, path("in_eqp.csv"), "--contact", "penalty", "--param", "solref:couple:init=0.03,0.8",
          "--quiet", NULL);
  double tc = printed(r.out, "solref:couple[0]"), dr = printed(r.out, "solref:couple[1]");
  printf("penalty coupling: solref:couple from (0.03 0.8): %.15g %.15g (truth 0.02 1)\n", tc, dr);
  CHECK_MSG(r.code == 0 && fabs(tc - 0.02) < 1e-9 && fabs(dr - 1) < 1e-9, "exit %d: %s %s", r.code, r.out, r.err);
  run_free(&r);
  clear_outputs();
}

// tied parameters (issue 12 item 4): arm7's seven joints share damping 0.5 (its default class); data under random
// controls; `--param 'damping:j*:init=0.2:min=0.05'` fits one value that comes back to 1e-9, result.json lists the
// pattern once, the written model carries it on all seven joints; a pattern that matches nothing, a contact kind
// with a pattern and a pattern overlapping a single name are command-line errors naming the valid choices
static void test_tied_round_trip(void) {
  idRunOut r = run("simulate", "models/arm7.xml", "--steps", "400", "--every", "5", "--ctrl", "random", "--seed", "3",
                   "--quiet", "--out", path("in_arm7.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  r = run("identify", "models/arm7.xml", path("in_arm7.csv"), "--param", "damping:j*:init=0.2:min=0.05", "--substeps",
          "5", "--quiet", "--out", path("out/tied.json"), "--write-model", path("out/tied.xml"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  printf("tied damping:j* on arm7 (truth 0.5 on all seven joints): %.12g\n", printed(r.out, "damping:j*"));
  CHECK(fabs(printed(r.out, "damping:j*") - 0.5) < 1e-9);
  run_free(&r);
  char* json = slurp(path("out/tied.json"));
  cJSON* root = json ? cJSON_Parse(json) : NULL;
  double v[8];
  CHECK(root && cJSON_GetArraySize(cJSON_GetObjectItem(root, "params")) == 1 && result_values(v, root, "value") == 1 &&
        fabs(v[0] - 0.5) < 1e-9);
  cJSON_Delete(root);
  free(json);
  char* xml = slurp(path("out/tied.xml"));
  int n = 0;
  for (const char* p = xml; p && (p = strstr(p, "<joint name=\"j")); p++) {
    const char* dmp = strstr(p, "damping=\"");
    n += dmp && dmp < strchr(p, '>') && fabs(atof(dmp + 9) - 0.5) < 1e-9;
  }
  CHECK_MSG(n == 7, "%d of 7 joints carry the tied damping", n);
  free(xml);
  r = run("identify", "models/arm7.xml", path("in_arm7.csv"), "--param", "damping:k*", "--quiet", NULL);
  CHECK(r.code == 2 && has(r.err, "param 'damping:k*': no joint or spring matches 'k*' (valid: j1, j2, j3, j4, j5"));
  run_free(&r);
  r = run("identify", "models/arm7.xml", path("in_arm7.csv"), "--param", "friction:*", "--quiet", NULL);
  CHECK(r.code == 2 && has(r.err, "param 'friction:*': friction takes one name, not a pattern"));
  run_free(&r);
  r = run("identify", "models/arm7.xml", path("in_arm7.csv"), "--param", "damping:j*", "--param", "damping:j3",
          "--quiet", NULL);
  CHECK(r.code == 2 && has(r.err, "param 'damping:j3': overlaps 'damping:j*' (both set joint 'j3')"));
  run_free(&r);
  clear_outputs();
}

// the rows of a CSV written by simulate (header skipped): up to cap rows of ncol numbers into x; returns the rows
static int read_rows(const char* file, double* x, int ncol, int cap) {
  FILE* f = fopen(file, "r");
  int n = 0;
  char line[8192];
  if (!f) return 0;
  if (!fgets(line, sizeof line, f)) n = -1;
  while (n >= 0 && n < cap && fgets(line, sizeof line, f)) {
    char* p = line;
    for (int c = 0; c < ncol; c++, p++) x[(size_t)n * ncol + c] = strtod(p, &p);
    n++;
  }
  fclose(f);
  return n < 0 ? 0 : n;
}

// input transforms (issue 12 item 4): arm7 under random controls at 100 Hz (2 ms steps) whose first motor receives
// 0.8 u0(t - 14 ms) + 0.1 (a control file replayed by simulate --ctrl-file, one row per step), the data file
// recording the untransformed u; identify with
// `--param delay:u0:init=0.005 --param inputgain:u0 --param inputbias:u0` recovers 0.014 s, 0.8, 0.1
static void test_input_transform_cli(void) {
  enum { T = 101, NC = 22 };   // t, q0..q6, v0..v6, u0..u6
  idRunOut r = run("simulate", "models/arm7.xml", "--steps", "500", "--every", "5", "--ctrl", "random", "--seed", "3",
                   "--quiet", "--out", path("in_run.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  static double run_rows[T * NC], sim_rows[T * NC];
  CHECK(read_rows(path("in_run.csv"), run_rows, NC, T) == T);
  FILE* f = fopen(path("in_shifted.csv"), "w");
  fprintf(f, "t,u0,u1,u2,u3,u4,u5,u6\n");
  for (int i = 0; i <= 500; i++) {   // one row per 2 ms step: u0 of the sample 14 ms before, u1..u6 of the last
    double t = 0.002 * i;
    int k = i / 5, k0 = (i - 7) / 5;   // 14 ms = 7 steps
    fprintf(f, "%.17g,%.17g", t, 0.8 * run_rows[(i < 7 ? 0 : k0) * NC + 15] + 0.1);
    for (int c = 1; c < 7; c++) fprintf(f, ",%.17g", run_rows[k * NC + 15 + c]);
    fprintf(f, "\n");
  }
  fclose(f);
  r = run("simulate", "models/arm7.xml", "--steps", "500", "--every", "5", "--ctrl-file", path("in_shifted.csv"),
          "--quiet", "--out", path("in_sim.csv"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  CHECK(read_rows(path("in_sim.csv"), sim_rows, NC, T) == T);
  f = fopen(path("in_delayed.csv"), "w");   // the states under the transformed input, the recorded u
  fprintf(f, "t,q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5,v6,u0,u1,u2,u3,u4,u5,u6\n");
  for (int k = 0; k < T; k++)
    for (int c = 0; c < NC; c++) fprintf(f, "%.17g%s", (c < 15 ? sim_rows : run_rows)[k * NC + c], c + 1 < NC ? "," : "\n");
  fclose(f);
  r = run("identify", "models/arm7.xml", path("in_delayed.csv"), "--param", "delay:u0:init=0.005", "--param",
          "inputgain:u0", "--param", "inputbias:u0", "--substeps", "5", "--quiet", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  double D = printed(r.out, "delay:u0"), g = printed(r.out, "inputgain:u0"), b = printed(r.out, "inputbias:u0");
  printf("arm7 input transform of u0 (truth 0.014 s, 0.8, 0.1): delay %.9g, gain %.9g, bias %.9g\n", D, g, b);
  CHECK(fabs(D - 0.014) < 1e-6 && fabs(g - 0.8) < 1e-6 && fabs(b - 0.1) < 1e-6);
  run_free(&r);
  clear_outputs();
}

// a parameter that ends at a bound is warned about with what it may mean (stderr, with --quiet too); result.json
// says why the fit stopped
static void test_bound_warning(void) {
  idRunOut r = run("identify", path("in_start.xml"), path("in_data.csv"), "--param", "damping:swing:max=0.2",
                   "--quiet", "--out", path("out/b.json"), NULL);
  CHECK(r.code == 0);
  CHECK(has(r.out, "damping:swing = 0.2 ") && has(r.out, "at max)"));
  CHECK(has(r.err, "warning: identify: damping:swing ended at its max 0.2: the data may not excite it"));
  CHECK(has(r.err, "the bound may be wrong") && has(r.err, "'physid sweep'"));
  run_free(&r);
  char* text = slurp(path("out/b.json"));
  cJSON* root = cJSON_Parse(text);
  const char* stop = cJSON_GetStringValue(cJSON_GetObjectItem(root, "stop"));
  CHECK(stop && (!strcmp(stop, "converged") || !strcmp(stop, "stalled")));
  cJSON_Delete(root);
  free(text);
  // inside the bounds: no such warning; the exact data converge
  r = run("identify", path("in_start.xml"), path("in_data.csv"), "--param", "damping:swing", "--quiet", "--out",
          path("out/b.json"), NULL);
  CHECK(r.code == 0 && !strstr(r.err, "ended at its"));
  CHECK(has(r.out, "iterations (converged; best of 1 starts)"));
  run_free(&r);
  clear_outputs();
}

// a copy of the pendulum file src with its timestep replaced by dt, as name
static const char* retimed(const char* name, const char* src, const char* dt) {
  char* text = slurp(path(src));
  char* p = strstr(text, "0.002");
  FILE* f = fopen(path(name), "w");
  if (p && f) fprintf(f, "%.*s%s%s", (int)(p - text), text, dt, p + 5);
  if (f) fclose(f);
  free(text);
  return path(name);
}

// identify's data defaults (issue 12 item 5). Substeps: the model's timestep is honoured: the 2 ms samples of
// in_sparse.csv (0.5 ms steps) against the start model at 0.5 ms give 4 substeps and the exact damping; at 1.5 ms
// (4/3 of a sample) 2 substeps and a message; an explicit --substeps is not commented. Loss: a file without
// velocity columns gets kstep, horizon 30, on positions, said on stderr and in result.json; an explicit --loss
// is authoritative. Warning: one-step on positions with 1 mm noise and their differenced velocities as columns
static void test_data_defaults(void) {
  const char* m05 = retimed("in_start05.xml", "in_start.xml", "0.0005");
  idRunOut r = run("identify", m05, path("in_sparse.csv"), "--param", "damping:swing", NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK(has(r.err, "physid: identify: substeps: 4 (the sample interval 0.002 s is 4 model timesteps of 0.0005 s; "
                   "--substeps S to override)"));
  CHECK(has(r.err, "physid: identify: loss: onestep (the velocity columns are measured: as a blend of the backward "
                   "and forward differences of the positions they weigh the backward one 0.624, not within 0.2 of 1 "
                   "(differenced velocities: 1); --velocities differenced or --loss kstep|rollout to override)"));
  CHECK_NEAR(printed(r.out, "damping:swing"), 0.3, 1e-8);
  run_free(&r);
  r = run("identify", m05, path("in_sparse.csv"), "--param", "damping:swing", "--substeps", "1", "--loss", "onestep",
          NULL);
  CHECK(r.code == 0 && !strstr(r.err, "substeps:") && !strstr(r.err, "loss:") && has(r.err, "; loss onestep,"));
  CHECK(fabs(printed(r.out, "damping:swing") - 0.3) > 1e-4);
  run_free(&r);
  r = run("identify", retimed("in_start15.xml", "in_start.xml", "0.0015"), path("in_sparse.csv"), "--param",
          "damping:swing", NULL);
  CHECK(r.code == 0 && has(r.err, "substeps: 2 (the sample interval 0.002 s is 1.333 model timesteps of 0.0015 s, "
                                  "not a whole number: 2 steps of 0.001 s per sample"));
  run_free(&r);
  // positions only (t, q0 of in_data.csv)
  char* data = slurp(path("in_data.csv"));
  FILE* f = fopen(path("in_pos.csv"), "w");
  FILE* g = fopen(path("in_noisy.csv"), "w");
  uint64_t seed = 5;
  double qprev = 0;
  int line = 0;
  for (char *save = NULL, *l = strtok_r(data, "\n", &save); l && f && g; l = strtok_r(NULL, "\n", &save), line++) {
    double t, q;
    if (line == 0 || sscanf(l, "%lf,%lf", &t, &q) != 2) {
      fprintf(f, "t,q0\n");
      fprintf(g, "t,q0,v0\n");
      continue;
    }
    fprintf(f, "%.17g,%.17g\n", t, q);
    double u = 0;   // 1e-3 rad of noise (uniform, sd 1e-3), velocities its backward differences
    for (int k = 0; k < 12; k++) u += (double)((seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) * 0x1p-53;
    q += 1e-3 * (u - 6);
    fprintf(g, "%.17g,%.17g,%.17g\n", t, q, line > 1 ? (q - qprev) / 0.002 : 0);
    qprev = q;
  }
  if (f) fclose(f);
  if (g) fclose(g);
  free(data);
  r = run("identify", path("in_start.xml"), path("in_pos.csv"), "--param", "damping:swing", "--out",
          path("out/d.json"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK(has(r.err, "physid: identify: loss: kstep, horizon 30, on positions (velocity weight 0) (the data have no "
                   "velocity columns: velocities differenced from positions make one-step prediction biased; "
                   "--loss onestep to override)"));
  CHECK(has(r.err, "; loss kstep,"));
  CHECK_NEAR(printed(r.out, "damping:swing"), 0.3, 1e-5);   // 0.300001: the first segment's extrapolated velocity
  run_free(&r);
  char* text = slurp(path("out/d.json"));
  cJSON* root = cJSON_Parse(text);
  CHECK(root && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "loss_kind")), "kstep"));
  CHECK(root && cJSON_GetNumberValue(cJSON_GetObjectItem(root, "substeps")) == 1);
  cJSON_Delete(root);
  free(text);
  r = run("identify", path("in_start.xml"), path("in_pos.csv"), "--param", "damping:swing", "--loss", "onestep", NULL);
  CHECK(r.code == 0 && !strstr(r.err, "loss:") && has(r.err, "; loss onestep,"));
  run_free(&r);
  // velocity columns that are the backward differences of noisy positions: kstep on positions, said why (as for the
  // same positions without velocity columns; on this pendulum, 1 mm of noise at 500 Hz, each segment's start
  // velocity carries 0.7 rad/s of noise: with the segment starts fitted (the default there) the damping comes
  // close, from the recorded samples it is far off: docs/identification.md); declared measured (option or job key)
  // onestep, 0.0099 off, and the warning that its velocity residuals look like differencing noise; not on the exact
  // data declared measured
  r = run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", NULL);
  CHECK(r.code == 0 && has(r.err, "physid: identify: loss: kstep, horizon 30, on positions (velocity weight 0) (the "
                                  "velocity columns are backward differences of the positions: as a blend of the "
                                  "backward and forward differences they weigh the backward one 1.000, within 0.2 of 1"));
  CHECK(!strstr(r.err, "differencing noise") && has(r.err, "; loss kstep,"));
  // segment starts fitted by default there (--fit-start auto), said so; off (option or job key) the recorded
  // samples, further off the truth
  CHECK(has(r.err, "physid: identify: segment starts: fitted, position and velocity per segment, tied to the sample, "
                   "after a first fit from the recorded samples (kstep on positions with differenced velocities: a "
                   "start from the noisy sample biases the fit, and fitted starts alone can stop behind a "
                   "contact-timing jump; --fit-start on|off to override)"));
  double fitted = printed(r.out, "damping:swing");
  printf("in_noisy.csv (1e-3 rad at 500 Hz): damping %.6g with fitted segment starts\n", fitted);
  CHECK(fabs(fitted - 0.3) < 0.05);   // measured 0.269 (one noisy swing: its standard error is ~0.03); 8.58 recorded
  run_free(&r);
  FILE* jfs = fopen(path("in_fs.json"), "w");
  if (jfs) fprintf(jfs, "{\"fit_start\": \"off\"}\n"), fclose(jfs);
  for (int job = 0; job < 2; job++) {
    r = job ? run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", "--job",
                  path("in_fs.json"), "--out", path("out/fs.json"), NULL)
            : run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", "--fit-start",
                  "off", "--out", path("out/fs.json"), NULL);
    CHECK(r.code == 0 && has(r.err, "physid: identify: segment starts: the recorded samples (--fit-start off)"));
    double recorded = printed(r.out, "damping:swing");
    printf("in_noisy.csv: damping %.6g from the recorded samples\n", recorded);
    CHECK(fabs(recorded - 0.3) > 3 * fabs(fitted - 0.3));
    run_free(&r);
    char* fs = slurp(path("out/fs.json"));
    cJSON* fr = cJSON_Parse(fs);
    CHECK(fr && cJSON_IsFalse(cJSON_GetObjectItem(fr, "fit_start")));
    cJSON_Delete(fr);
    free(fs);
  }
  r = run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", "--fit-start", "maybe",
          NULL);
  CHECK(r.code == 2 && has(r.err, "--fit-start must be one of"));
  run_free(&r);
  // not on onestep: the recorded samples, without a word (only fitted or asked-for starts are said); asked for, said
  r = run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", "--loss", "onestep",
          NULL);
  CHECK_MSG(r.code == 0 && has(r.err, "; loss onestep,") && !strstr(r.err, "segment starts"), "%s", r.err);
  run_free(&r);
  r = run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", "--loss", "onestep",
          "--fit-start", "off", NULL);
  CHECK_MSG(r.code == 0 && has(r.err, "physid: identify: segment starts: the recorded samples (--fit-start off)"),
            "%s", r.err);
  run_free(&r);
  FILE* jf = fopen(path("in_vel.json"), "w");
  if (jf) fprintf(jf, "{\"velocities\": \"measured\"}\n"), fclose(jf);
  for (int job = 0; job < 2; job++) {
    r = job ? run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", "--job",
                  path("in_vel.json"), NULL)
            : run("identify", path("in_start.xml"), path("in_noisy.csv"), "--param", "damping:swing", "--velocities",
                  "measured", NULL);
    CHECK(r.code == 0 && has(r.err, "physid: identify: loss: onestep (--velocities measured; --loss kstep|rollout to "
                                    "override)"));
    CHECK(has(r.err, "warning: identify: the one-step velocity residuals look like differencing noise"));
    CHECK(has(r.err, "--loss kstep --horizon 30 --weights POS,ROT,0"));
    CHECK(fabs(printed(r.out, "damping:swing") - 0.3) > 5e-3);
    run_free(&r);
  }
  r = run("identify", path("in_start.xml"), path("in_data.csv"), "--param", "damping:swing", "--velocities",
          "measured", NULL);
  CHECK(r.code == 0 && !strstr(r.err, "differencing noise") && has(r.err, "; loss onestep,"));
  CHECK(!strstr(r.err, "local minimum"));   // the probes after one start: none below the exact fit
  run_free(&r);
  // a start in another basin (the real cube, explicit kstep with velocity weights, friction from 1.5, one start)
  // is flagged by the probes; from the nominal 0.18 it is not
  for (int k = 0; k < 2; k++) {
    r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "4", "--param",
            k ? "friction:cube:max=2" : "friction:cube:max=2:init=1.5", "--param", "restitution:cube", "--loss", "kstep",
            NULL);
    CHECK(r.code == 0);
    if (k == 0)
      CHECK(has(r.err, "warning: identify: the fit ended in a local minimum: the loss at a probe (friction:cube = ") &&
            has(r.err, "--starts N (N >= 3) runs more starts and keeps the best"));
    else
      CHECK(!strstr(r.err, "local minimum"));
    run_free(&r);
  }
  // declared differenced: kstep on measured velocities too
  r = run("identify", m05, path("in_sparse.csv"), "--param", "damping:swing", "--velocities", "differenced", NULL);
  CHECK(r.code == 0 && has(r.err, "loss: kstep, horizon 30, on positions (velocity weight 0) (--velocities "
                                  "differenced: velocities differenced from positions make one-step prediction biased"));
  run_free(&r);
  clear_outputs();
}

// a number at a path of keys in a JSON object (NaN if absent)
static double json_at(const cJSON* o, const char* k1, const char* k2) {
  const cJSON* v = cJSON_GetObjectItem(o, k1);
  if (k2) v = cJSON_GetObjectItem(v, k2);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

// text with every occurrence of from replaced by to (malloc'd)
static char* replaced(const char* text, const char* from, const char* to) {
  size_t nf = strlen(from), nt = strlen(to), n = 0;
  for (const char* p = text; (p = strstr(p, from)); p += nf) n++;
  char* out = malloc(strlen(text) + n * nt + 1);
  char* o = out;
  for (const char* p = text, *q; ; p = q + nf) {
    q = strstr(p, from);
    size_t len = q ? (size_t)(q - p) : strlen(p);
    memcpy(o, p, len), o += len;
    if (!q) break;
    memcpy(o, to, nt), o += nt;
  }
  *o = 0;
  return out;
}

// ntoss cube tosses simulated by physid from the first states of data/cube_toss's tosses 0.. (100 steps, one per
// sample, no noise) with friction 0.3, restitution 0.2, into the folder dir (scratch); 0 if they could not be made
static int exact_tosses(const char* dir, int ntoss) {
  char* cube = slurp("models/cube.xml");
  char* t1 = replaced(cube, "friction=\"0.18 0 0\"", "friction=\"0.3 0 0\"");
  char* t2 = replaced(t1, "data=\"0.125\"", "data=\"0.2\"");
  int ok = strcmp(t1, cube) && strcmp(t2, t1);
  const char* truth = write_file("in_truth_cube.xml", t2);
  free(cube), free(t1), free(t2);
  mkdir(path(dir), 0755);
  for (int k = 0; ok && k < ntoss; k++) {
    char name[64], line[1024] = "", init[64], out[96];
    snprintf(name, sizeof name, "data/cube_toss/toss_%03d.csv", k);
    FILE* f = fopen(name, "r");
    ok = f && fgets(line, sizeof line, f) && fgets(line, sizeof line, f) && strchr(line, ',');
    if (f) fclose(f);
    if (!ok) break;
    char text[1200];
    snprintf(text, sizeof text, "q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5\n%s", strchr(line, ',') + 1);   // no t
    snprintf(init, sizeof init, "in_init%d.csv", k);
    snprintf(out, sizeof out, "%s/run%d.csv", dir, k);
    char ipath[600], opath[600];
    snprintf(ipath, sizeof ipath, "%s", write_file(init, text));
    snprintf(opath, sizeof opath, "%s", path(out));
    idRunOut r = run("simulate", truth, "--init", ipath, "--steps", "100", "--quiet", "--out", opath, NULL);
    ok = r.code == 0;
    run_free(&r);
  }
  return ok;
}

// the default fit of noise-free cube tosses finds the truth (issue 12): 2 tosses (stage 3 from the onestep stage's
// answer) and the 8 of docs/identification.md (from stage 1's); friction and restitution to 1e-6 relative. Fails
// before the staged default: the segment starts fitted from the nominal values stopped at 0.29581 / 0.21206 and
// 0.29841 / 0.20179, local minima behind contact-timing jumps of the kstep loss
static void test_exact_tosses(void) {
  for (int c = 0; c < 2; c++) {
    const char* dir = c ? "in_exact8" : "in_exact2";
    CHECK(exact_tosses(dir, c ? 8 : 2));
    char dpath[600], jpath[600];
    snprintf(dpath, sizeof dpath, "%s", path(dir));
    snprintf(jpath, sizeof jpath, "%s", path("out/exact.json"));
    idRunOut r = run("identify", "models/cube.xml", dpath, "--param", "friction:cube:max=2", "--param",
                     "restitution:cube", "--out", jpath, NULL);
    CHECK_MSG(r.code == 0, "%s", r.err);
    double mu = printed(r.out, "friction:cube"), e = printed(r.out, "restitution:cube");
    printf("exact tosses (%d): friction %.9g, restitution %.9g\n", c ? 8 : 2, mu, e);
    CHECK(fabs(mu - 0.3) < 0.3e-6 && fabs(e - 0.2) < 0.2e-6);
    // each stage said on stderr as it starts, and summed up on stdout
    CHECK(has(r.err, "fit: stage 1 of 3: segments from their recorded samples\n") &&
          has(r.err, "fit: stage 2 of 3: onestep from the recorded samples\n") &&
          has(r.err, c ? "fit: stage 3 of 3: segment starts fitted, from stage 1's answer"
                       : "fit: stage 3 of 3: segment starts fitted, from stage 2's answer"));
    CHECK(has(r.out, "stage 1, segments from the recorded samples: loss ") &&
          has(r.out, "stage 2, onestep from the recorded samples: loss ") &&
          has(r.out, c ? "stage 3, segment starts fitted from stage 1's answer" 
                       : "stage 3, segment starts fitted from stage 2's answer"));
    char* js = slurp(jpath);
    cJSON* root = cJSON_Parse(js);
    const cJSON* st = cJSON_GetObjectItem(root, "stages");
    CHECK(root && cJSON_GetArraySize(st) == 2 && json_at(root, "from_stage", NULL) == (c ? 1 : 2));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(root, "fit_start")));
    const cJSON* s2 = cJSON_GetArrayItem(st, 1);
    CHECK(s2 && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(s2, "loss_kind")), "onestep") &&
          json_at(s2, "loss_fitted_starts", NULL) >= 0 && json_at(s2, "iterations", NULL) >= 1);
    cJSON_Delete(root);
    free(js);
    run_free(&r);
    // --fit-start on is the one stage from the nominal values (the local minimum)
    if (c == 0) {
      r = run("identify", "models/cube.xml", dpath, "--param", "friction:cube:max=2", "--param", "restitution:cube",
              "--fit-start", "on", NULL);
      CHECK(r.code == 0 && !strstr(r.err, "fit: stage") && fabs(printed(r.out, "friction:cube") - 0.3) > 1e-3);
      run_free(&r);
    }
  }
  clear_outputs();
}

// uncertainty (issue 12 item 6): three trajectories made with dampings 0.25, 0.3, 0.35 (a model error the fit
// of one damping cannot absorb): the default intervals are cluster-robust with Student's t of 2 dof, printed
// and in result.json with both covariance matrices and the iid standard error; a warning about few
// trajectories; --bootstrap 5 --seed 3 adds refits, the same on a second run and from a job file; the report
// shows the intervals
static void test_uncertainty(void) {
  const char* d[3] = {"0.25", "0.3", "0.35"};
  mkdir(path("in_clu"), 0755);
  for (int k = 0; k < 3; k++) {
    char name[32], file[32];
    snprintf(name, sizeof name, "in_clu_%d.xml", k);
    snprintf(file, sizeof file, "in_clu/t%d.csv", k);
    idRunOut r = run("simulate", pendulum(name, d[k]), "--steps", "200", "--quiet", "--out", path(file), NULL);
    CHECK(r.code == 0);
    run_free(&r);
  }
  const char* start = pendulum("in_clu_start.xml", "0.1");
  char* json[2] = {NULL, NULL};
  for (int rep = 0; rep < 2; rep++) {
    idRunOut r = run("identify", start, path("in_clu"), "--param", "damping:swing", "--bootstrap", "5", "--seed", "3",
                     "--out", path("out/u.json"), "--report", path("out/u.html"), NULL);
    CHECK_MSG(r.code == 0, "exit %d: %s", r.code, r.err);
    CHECK(has(r.err, "warning: identify: only 3 trajectories: the cluster-robust intervals (the default) use "
                     "Student's t with 2 dof"));
    CHECK(has(r.out, "95% intervals: cluster-robust by trajectory (3 trajectories, Student t 2 dof); bootstrap 5 of "
                     "5 refits (seed 3), percentile intervals: damping:swing ["));
    CHECK(has(r.out, "(iid +- "));
    run_free(&r);
    json[rep] = slurp(path("out/u.json"));
  }
  cJSON* root = cJSON_Parse(json[0]);
  const cJSON* p = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "params"), 0);
  const cJSON* u = cJSON_GetObjectItem(root, "uncertainty");
  double v = json_at(p, "value", NULL), se = json_at(p, "stderr", NULL), iid = json_at(p, "stderr_iid", NULL);
  CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(u, "method")), "cluster"));
  CHECK(json_at(u, "trajectories", NULL) == 3 && json_at(u, "t", NULL) == 4.3027);
  CHECK(se > 0 && se == json_at(p, "stderr_cluster", NULL) && iid > 0 && json_at(p, "stderr_bootstrap", NULL) > 0);
  CHECK_NEAR(json_at(p, "upper95", NULL), v + 4.3027 * se, 1e-12 * v);
  CHECK_NEAR(json_at(p, "lower95", NULL), fmax(v - 4.3027 * se, 0), 1e-12 * v);
  const cJSON* cov = cJSON_GetArrayItem(cJSON_GetObjectItem(u, "covariance"), 0);
  CHECK_NEAR(cJSON_GetArrayItem(cov, 0)->valuedouble, se * se, 1e-12 * se * se);
  cov = cJSON_GetArrayItem(cJSON_GetObjectItem(u, "covariance_iid"), 0);
  CHECK_NEAR(cJSON_GetArrayItem(cov, 0)->valuedouble, iid * iid, 1e-12 * iid * iid);
  const cJSON* b = cJSON_GetObjectItem(u, "bootstrap");
  CHECK(json_at(b, "resamples", NULL) == 5 && json_at(b, "refits", NULL) == 5 && json_at(b, "seed", NULL) == 3);
  double blo = cJSON_GetArrayItem(cJSON_GetObjectItem(b, "lower95"), 0)->valuedouble;
  double bhi = cJSON_GetArrayItem(cJSON_GetObjectItem(b, "upper95"), 0)->valuedouble;
  CHECK(blo <= bhi && blo > 0.2 && bhi < 0.4);
  // a job file's "bootstrap" and "seed" keys give the same refits
  char job[1024];
  snprintf(job, sizeof job, "{\"model\": \"%s\", \"data\": [\"%s\"], \"params\": [\"damping:swing\"], "
           "\"bootstrap\": 5, \"seed\": 3, \"out\": \"%s\", \"quiet\": true}", start, path("in_clu"),
           path("out/uj.json"));
  idRunOut rj = run("identify", "--job", write_file("in_ujob.json", job), NULL);
  CHECK_MSG(rj.code == 0, "exit %d: %s", rj.code, rj.err);
  run_free(&rj);
  char* tj = slurp(path("out/uj.json"));
  cJSON* rootj = cJSON_Parse(tj);
  CHECK(cJSON_Compare(cJSON_GetObjectItem(rootj, "uncertainty"), u, 1));
  cJSON_Delete(rootj), free(tj);
  // the second run: the same statistics (all but "time")
  cJSON* root2 = cJSON_Parse(json[1]);
  cJSON_DeleteItemFromObject(root, "time");
  cJSON_DeleteItemFromObject(root2, "time");
  CHECK(cJSON_Compare(root, root2, 1));
  char* html = slurp(path("out/u.html"));
  CHECK(has(html, "95% low") && has(html, "iid std. error") && has(html, "bootstrap 95% high") &&
        has(html, "cluster-robust (sandwich) covariance by trajectory, 3 trajectories, Student t with 2 dof"));
  free(html), free(json[0]), free(json[1]);
  cJSON_Delete(root), cJSON_Delete(root2);
  clear_outputs();
}

// --loss violation (issue 14 item 1; docs/cli.md, *Violation loss*): the documented example on the real cube's
// first 2 tosses gives its printed friction, converged in 6 iterations at the default weights of s29 (1, 0.1, 100,
// velocity metric; at s28's 0.001, 0.1, 100 energy: 0.155742 in 3 iterations), result.json names the loss and the
// default metric (also from the job key violation_metric, which the option overrides); restitution and substeps
// other than 1 are refused with the reason and no output file
static void test_violation_loss(void) {
  idRunOut r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "2", "--param",
                   "friction:cube:min=0:max=2", "--loss", "violation", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK_MSG(has(r.out, "friction:cube = 0.172993 "), "%s", r.out);
  CHECK_MSG(has(r.out, "loss 0.113224 -> 0.113196 in 6 iterations (converged"), "%s", r.out);
  run_free(&r);
  char* text = slurp(path("out/v.json"));
  cJSON* root = cJSON_Parse(text);
  CHECK(root && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "loss_kind")), "violation"));
  CHECK(root && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "violation_metric")), "velocity"));
  const cJSON* dw = cJSON_GetObjectItem(root, "violation_weights");
  CHECK(cJSON_GetArraySize(dw) == 3 && cJSON_GetArrayItem(dw, 0)->valuedouble == 1 &&
        cJSON_GetArrayItem(dw, 1)->valuedouble == 0.1 && cJSON_GetArrayItem(dw, 2)->valuedouble == 100);
  cJSON_Delete(root);
  free(text);
  clear_outputs();
  // the weights: given ones reach result.json and change the loss; a malformed list is a usage error
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param", "friction:cube", "--loss",
          "violation", "--violation-weights", "0.001,0.1,1000", "--iters", "1", "--quiet", "--out", path("out/v.json"),
          NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  text = slurp(path("out/v.json"));
  root = cJSON_Parse(text);
  const cJSON* vw = cJSON_GetObjectItem(root, "violation_weights");
  CHECK(cJSON_GetArraySize(vw) == 3 && cJSON_GetArrayItem(vw, 2)->valuedouble == 1000 &&
        cJSON_GetArrayItem(vw, 0)->valuedouble == 0.001);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "loss0")) > 0.1);   // 0.0499687 with the default 100
  cJSON_Delete(root);
  free(text);
  clear_outputs();
  // --violation-metric: result.json names it (velocity by default since s29, as the first run above); a wrong name
  // is a usage error
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param", "friction:cube", "--loss",
          "violation", "--violation-metric", "energy", "--iters", "1", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  text = slurp(path("out/v.json"));
  root = cJSON_Parse(text);
  CHECK(root && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "violation_metric")), "energy"));
  cJSON_Delete(root);
  free(text);
  clear_outputs();
  // the job key violation_metric: the same run; the option overrides it; a wrong name is a bad job (exit 1)
  const char* mjob = write_file("in_vmetric.json", "{\"violation_metric\": \"energy\"}");
  for (int over = 0; over < 2; over++) {
    r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param", "friction:cube", "--loss",
            "violation", "--job", mjob, "--iters", "1", "--quiet", "--out", path("out/v.json"),
            over ? "--violation-metric" : NULL, "velocity", NULL);
    CHECK_MSG(r.code == 0, "%s", r.err);
    run_free(&r);
    text = slurp(path("out/v.json"));
    root = cJSON_Parse(text);
    CHECK(root && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "violation_metric")),
                          over ? "velocity" : "energy"));
    cJSON_Delete(root);
    free(text);
    clear_outputs();
  }
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param", "friction:cube", "--loss",
          "violation", "--job", write_file("in_vmetric.json", "{\"violation_metric\": \"speed\"}"), "--quiet",
          "--out", path("out/v.json"), NULL);
  CHECK(r.code == 1 && has(r.err, "in_vmetric.json: key 'violation_metric': expected one of energy|velocity"));
  CHECK(access(path("out/v.json"), F_OK) != 0);
  run_free(&r);
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param", "friction:cube", "--loss",
          "violation", "--violation-metric", "speed", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK(r.code == 2 && has(r.err, "--violation-metric must be one of energy|velocity, not 'speed'"));
  CHECK(access(path("out/v.json"), F_OK) != 0);
  run_free(&r);
  r = run("identify", "models/cube.xml", "data/cube_toss", "--param", "friction:cube", "--loss", "violation",
          "--violation-weights", "1,2", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK(r.code == 2 && has(r.err, "--violation-weights '1,2': expected comp,diss,pen (three numbers >= 0)"));
  run_free(&r);
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "2", "--param", "restitution:cube", "--loss",
          "violation", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK(r.code == 1 && has(r.err, "restitution does not enter the violation loss"));
  CHECK(access(path("out/v.json"), F_OK) != 0);
  run_free(&r);
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "2", "--param", "friction:cube", "--loss",
          "violation", "--substeps", "2", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK(r.code == 1 && has(r.err, "substeps must be 1"));
  CHECK(access(path("out/v.json"), F_OK) != 0);
  run_free(&r);
  // height:GEOM (s29): a box's height is refused with the reason and no output; the floor's fitted height is
  // written by --write-model as the plane's pos (its z: the printed value, 6 significant digits)
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param", "height:cube", "--loss",
          "violation", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK(r.code == 2 && has(r.err, "param 'height:cube': geom 'cube' is a box; height is the offset of a plane"));
  CHECK(access(path("out/v.json"), F_OK) != 0);
  run_free(&r);
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param", "height:floor", "--loss",
          "violation", "--iters", "3", "--quiet", "--write-model", path("out/h.xml"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  double h = printed(r.out, "height:floor");
  CHECK_MSG(h < 0 && h > -0.01, "height:floor %g", h);
  run_free(&r);
  text = slurp(path("out/h.xml"));
  const char* fl = text ? strstr(text, "name=\"floor\"") : NULL;
  const char* pz = fl ? strstr(fl, "pos=\"0 0 ") : NULL;
  CHECK_MSG(pz && pz < strchr(fl, '>') && fabs(atof(pz + 9) - h) <= 5e-6 * fabs(h), "written floor: %.80s",
            fl ? fl : "(none)");
  free(text);
  clear_outputs();
}

// vertices:GEOM, scale= and inertia9:BODY (issue 14 item 2; docs/cli.md, *Learned shapes*): the documented example
// on the real cube's first 2 tosses (the box's 8 corners from 1.3 times the box, friction, the inertia with the
// mass held) prints its friction and loss; init with scale and a geom that is not a box or mesh are refused (2)
// with the reason; --write-model writes the learned shape, which evaluate --truth measures
static void test_vertices_cli(void) {
  idRunOut r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "2", "--loss", "violation", "--param",
                   "friction:cube:min=0:max=2", "--param", "vertices:cube:scale=1.3", "--param", "inertia9:cube",
                   "--iters", "10", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  CHECK_MSG(has(r.out, "friction:cube     = 0.180965 "), "%s", r.out);
  CHECK(has(r.out, "vertices:cube[0]  = -0.0492991 ") && has(r.out, "(iid +- 0.000496; initial -0.06812)"));
  CHECK(has(r.out, "loss 17.6766 -> 0.0184827 in 10 iterations"));
  run_free(&r);
  clear_outputs();
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--loss", "violation", "--param",
          "vertices:cube:scale=1.3:init=1", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK(r.code == 2 && has(r.err, "param 'vertices:cube:scale=1.3:init=1': give init or scale, not both"));
  run_free(&r);
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--loss", "violation", "--param",
          "vertices:floor", "--quiet", "--out", path("out/v.json"), NULL);
  CHECK(r.code == 2 && has(r.err, "models/cube.xml:15: vertices:floor: the geom is not a box or a mesh"));
  run_free(&r);
  // --write-model: the learned shape as an inline mesh (the hull's triangles) with the body's inertial; evaluate
  // --truth measures its volume error against the box: 1.3^3 - 1 = 1.197 at the start, 0.755602 after 10 iterations
  // at s29's default weights (2.66169 at s28's; 0.72905 with the envelope Jacobian before session 27)
  r = run("identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--loss", "violation", "--param",
          "vertices:cube:scale=1.3", "--iters", "10", "--quiet", "--write-model", path("out/w.xml"), NULL);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  char* text = slurp(path("out/w.xml"));
  CHECK(text && has(text, "<mesh name=\"cube\" vertex=\"") && has(text, "face=\"") &&
        has(text, "<geom name=\"cube\" type=\"mesh\"") && has(text, "<inertial pos=\"0 0 0\"") &&
        has(text, "mass=\"0.37\""));
  free(text);
  r = run("evaluate", path("out/w.xml"), "data/cube_toss", "--files", "1", "--truth", "models/cube.xml", "--quiet",
          NULL);
  CHECK_MSG(r.code == 0 && has(r.out, "\ncube               0.755602  0.000869715 "), "%s", r.out);
  run_free(&r);
  clear_outputs();
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/physid_test_identify_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  mkdir(path("out"), 0755);
  test_pendulum();
  test_sensor_observe();
  test_bound_warning();
  test_uncertainty();
  test_job();
  test_sparse_and_positions();
  test_data_defaults();
  test_exact_tosses();
  test_known_push();
  test_recorded_round_trip();
  test_frictionloss_round_trip();
  test_act_timeconst();
  test_muscle_arm26();
  test_tied_round_trip();
  test_equality_round_trip();
  test_write_mjcf();
  test_write_actuators();
  test_input_transform_cli();
  test_violation_loss();
  test_vertices_cli();
  test_write_urdf();
  test_write_world();
  test_bad_input();
  test_outputs();
  test_sigkill_before_data();
  test_fifo_reader_leaves();
  test_sigint();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return test_done();
}

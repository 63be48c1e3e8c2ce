// test_cmd_sweep.c - `physid sweep` run as a user would (env PHYS_BIN): the loss along a damped pendulum's
// damping from data simulated with damping 0.3 (same engine, no noise) is zero at 0.3 and a parabola around
// it; linear and --log points include both ends; the HTML report; the command line's errors (exit 2, the
// message, no output written); outputs that are inputs or each other (exit 1).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"

// the pendulum of tests/data/pendulum.xml, started at 60 degrees, with joint damping 0.3
static const char* const g_pendulum =
    "<mujoco model=\"pendulum\">\n"
    "  <option timestep=\"0.002\" gravity=\"0 0 -9.81\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"bob\" pos=\"0 0 2\" euler=\"0 60 0\">\n"
    "      <joint name=\"swing\" type=\"hinge\" axis=\"0 1 0\" damping=\"0.3\"/>\n"
    "      <inertial pos=\"0 0 -1\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0 0 -1\" size=\"0.01\" contype=\"0\" conaffinity=\"0\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

// the CSV "value,loss" rows of text into x, y; returns the number of rows (-1 if the header is wrong)
static int read_csv(const char* text, double* x, double* y, int max) {
  if (strncmp(text, "value,loss\n", 11) != 0) return -1;
  int n = 0;
  for (const char* p = text + 11; *p && n < max; n++) {
    char* end;
    x[n] = strtod(p, &end);
    if (*end != ',') return -1;
    y[n] = strtod(end + 1, &end);
    if (*end != '\n') return -1;
    p = end + 1;
  }
  return n;
}

// 1 if s contains frag; prints s otherwise
static int has(const char* s, const char* frag) {
  if (strstr(s, frag)) return 1;
  fprintf(stderr, "  text lacks '%s':\n---\n%s---\n", frag, s);
  return 0;
}

// damping in [0.1, 0.5], 21 points: zero loss at the truth (point 11 = 0.3), a parabola around it
static void test_parabola(void) {
  char args[1024];
  const char* model = put("pendulum.xml", g_pendulum);
  snprintf(args, sizeof args, "simulate %s --steps 300 --quiet --out %s", model, path("data.csv"));
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  // simulate's velocities are its positions' backward differences, which would choose kstep on positions; declared
  // measured they keep the one-step loss, whose parabola this checks
  snprintf(args, sizeof args, "sweep %s %s --param damping:swing:min=0.1:max=0.5 --points 21 --velocities measured "
           "--out %s --report %s", model, path("data.csv"), path("sweep.csv"), path("sweep.html"));
  r = run(args);
  CHECK(r.code == 0 && r.out[0] == 0);
  CHECK(has(r.err, "physid: sweep: 1 trajectories"));
  run_free(&r);
  char* csv = slurp(path("sweep.csv"));
  double x[32], y[32];
  int n = read_csv(csv, x, y, 32);
  CHECK(n == 21);
  if (n == 21) {
    CHECK(x[0] == 0.1 && x[20] == 0.5);   // both ends exactly
    for (int k = 0; k < 21; k++) CHECK_NEAR(x[k], 0.1 + 0.02 * k, 1e-15);
    int best = 0;
    for (int k = 1; k < 21; k++) best = y[k] < y[best] ? k : best;
    CHECK(best == 10);
    CHECK(y[10] < 1e-20 && y[9] > 1e-6);   // the data's own damping fits them to rounding
    // loss = c (d - 0.3)^2 + O(|d - 0.3|^3): twice the distance, four times the loss; symmetric
    CHECK_NEAR(y[8] / y[9], 4.0, 0.01);
    CHECK_NEAR(y[9] / y[11], 1.0, 0.001);
    CHECK_NEAR(y[7] / y[13], 1.0, 0.003);
    for (int k = 0; k < 10; k++) CHECK(y[k] > y[k + 1] && y[20 - k] > y[19 - k]);   // monotone on each side
  }
  free(csv);
  char* html = slurp(path("sweep.html"));
  CHECK(has(html, "<title>physid sweep</title>") && has(html, "<svg") && has(html, "damping:swing"));
  CHECK(has(html, "smallest loss") && has(html, " = 0.3 (point 11 of 21)"));
  CHECK(!strstr(html, "<script"));
  free(html);
}

// --log: geometric points from min to max, both ends exact; stdout without --out
static void test_log(void) {
  char args[1024];
  snprintf(args, sizeof args, "sweep %s %s --param damping:swing:min=0.01:max=1 --points 5 --log --quiet",
           path("pendulum.xml"), path("data.csv"));
  shRun r = run(args);
  CHECK(r.code == 0 && r.err[0] == 0);
  double x[8], y[8];
  CHECK(read_csv(r.out, x, y, 8) == 5);
  CHECK(x[0] == 0.01 && x[4] == 1);
  for (int k = 1; k < 4; k++) CHECK_NEAR(x[k], pow(10, -2 + 0.5 * k), 1e-14);
  run_free(&r);
}

// --channels: the hinge's rotation and velocity channels (no position channel) add up to the loss; with
// --prior W the loss adds W/2 (d - 0.3)^2 (the model's damping is the prior's centre), the channels do not
static void test_channels(void) {
  char args[1024];
  for (int prior = 0; prior < 2; prior++) {
    snprintf(args, sizeof args, "sweep %s %s --param damping:swing:min=0.1:max=0.5 --points 5 --channels --quiet "
             "--velocities measured%s",
             path("pendulum.xml"), path("data.csv"), prior ? " --prior 2" : "");
    shRun r = run(args);
    CHECK(r.code == 0 && strncmp(r.out, "value,loss,loss_rot,loss_vel\n", 29) == 0);
    const char* p = strchr(r.out, '\n');
    int n = 0;
    while (p && p[1]) {
      double v[4];
      char* end = (char*)p + 1;
      for (int c = 0; c < 4; c++) v[c] = strtod(end + (c > 0), &end);
      double extra = prior ? 0.5 * 2 * (v[0] - 0.3) * (v[0] - 0.3) : 0;
      CHECK_NEAR(v[1], v[2] + v[3] + extra, 1e-12 * (v[1] + 1e-30));
      CHECK(v[3] > 0);
      p = strchr(end, '\n');
      n++;
    }
    CHECK(n == 5);
    run_free(&r);
  }
}

// errors of the command line: exit 2, the message, the output not created
static void test_errors(void) {
  static const struct {
    const char* args;
    const char* msg;
  } c[] = {
      {"--param damping:swing:min=0.5:max=0.5", "min 0.5 must be below max 0.5"},
      {"--param damping:swing:min=0.6:max=0.5", "min 0.6 must be below max 0.5"},
      {"--param damping:swing:min=0.1:max=0.5 --points 1", "--points expects an integer in [2, 1000000], not '1'"},
      {"--param damping:swing", "param 'damping:swing': give the range as min=A:max=B"},
      {"--param damping:swing:min=0.1", "give the range as min=A:max=B"},
      {"--param damping:swing:min=x:max=1", "min and max must be finite numbers"},
      {"--param damping:swing:min=-1:max=1", "the range [-1, 1] leaves the parameter's bounds [0, inf]"},
      {"--param damping:swing:min=0:max=1 --log", "--log needs min > 0"},
      {"--param damping:swing:min=0:max=1 --param mass:bob:min=1:max=2", "give exactly one --param"},
      {"--param damping:nosuch:min=0:max=1", "nosuch"},
      {"--param pos:bob:min=0:max=1", "a sweep takes a scalar parameter"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char args[1024];
    snprintf(args, sizeof args, "sweep %s %s %s --out %s", path("pendulum.xml"), path("data.csv"), c[i].args,
             path("bad.csv"));
    shRun r = run(args);
    CHECK_MSG(r.code == 2, c[i].args);
    CHECK(has(r.err, c[i].msg));
    CHECK(r.out[0] == 0 && access(path("bad.csv"), F_OK) != 0);
    run_free(&r);
  }
}

// outputs checked before any work (tools/output.c): an output that is the data file or the other output, a
// missing folder: exit 1, the data file unchanged, nothing written
static void test_outputs(void) {
  char args[1024];
  char* before = slurp(path("data.csv"));
  const char* const out[3][2] = {{"data.csv", NULL}, {"o.csv", "o.csv"}, {"nodir/o.csv", NULL}};
  const char* const msg[3] = {"the same file as the input", "the same file as --out", "nodir: No such file"};
  for (int i = 0; i < 3; i++) {
    char o[300], rep[320] = "";
    snprintf(o, sizeof o, "%s", path(out[i][0]));
    if (out[i][1]) snprintf(rep, sizeof rep, "--report %s", path(out[i][1]));
    snprintf(args, sizeof args, "sweep %s %s --param damping:swing:min=0.1:max=0.5 --out %s %s", path("pendulum.xml"),
             path("data.csv"), o, rep);
    shRun r = run(args);
    CHECK(r.code == 1 && has(r.err, msg[i]));
    CHECK(i == 0 || access(o, F_OK) != 0);
    run_free(&r);
  }
  char* after = slurp(path("data.csv"));
  CHECK(strcmp(before, after) == 0);
  free(before);
  free(after);
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_cmd_sweep_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  test_parabola();
  test_log();
  test_channels();
  test_errors();
  test_outputs();
  remove_scratch();
  return test_done();
}

// test_oracle_make_tosses.c - examples/ccn/make_tosses.c (paper 004's simulated scenarios, data made by MuJoCo
// 2.2.2): the field in the files is the field it says. A cube without a floor (free flight: MuJoCo's Euler step
// gives v_{k+1} = v_k + dt a_k exactly, a_k = g + F(c_k)/m for a body whose centre of mass is its origin), so
// the recorded velocity differences must equal the vortex F/m = -a r + b e_z x r at the recorded position of the
// same sample, plus gravity, to the rounding of the %.10g columns; --gravity G must give a_z = -G; the same seed
// the same bytes; bad arguments exit nonzero without files.
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "test_tmpfile.h"

// the generator's main, called in-process
#define main make_tosses_main
#include "../../examples/ccn/make_tosses.c"
#undef main

#define NSAMP 60
static const char* CUBE_NO_FLOOR =
    "<mujoco model=\"cube\">\n"
    "  <option timestep=\"0.006756756756756757\" gravity=\"0 0 -9.81\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"cube\" pos=\"0 0 0.0524\">\n"
    "      <freejoint name=\"cube\"/>\n"
    "      <geom name=\"cube\" type=\"box\" size=\"0.0524 0.0524 0.0524\" mass=\"0.37\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

// run the generator with the given arguments (argv[0] added); its exit code
static int run(int n, const char* const* args) {
  char* argv[16];
  argv[0] = (char*)"make_tosses";
  for (int i = 0; i < n; i++) argv[i + 1] = (char*)args[i];
  fflush(stdout);
  return make_tosses_main(n + 1, argv);
}

// read one toss file: rows of 14 columns; the number of rows (-1 if unreadable or malformed)
static int read_toss(const char* path, double rows[][14], int max) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  char line[1024];
  int n = 0;
  if (!fgets(line, sizeof line, f) || strncmp(line, "t,px,py,pz,qw", 13) != 0) n = -1;
  while (n >= 0 && n < max && fgets(line, sizeof line, f)) {
    char* p = line;
    for (int c = 0; c < 14; c++) {
      rows[n][c] = strtod(p, &p);
      if (c < 13 && *p++ != ',') n = -1 - n;
    }
    n = n >= 0 ? n + 1 : -1;
  }
  fclose(f);
  return n;
}

// largest |recorded acceleration - (g + field)| over the tosses in dir, in units of its rounding bound
// (%.10g: 5e-10 relative per printed value; the two velocities over dt); -1 if a file is missing
static double field_error(const char* dir, int ntoss, double a, double b, double cx, double cy, double g) {
  static double rows[NSAMP][14];
  const double dt = 0.006756756756756757;
  double worst = 0;
  for (int t = 0; t < ntoss; t++) {
    char path[600];
    snprintf(path, sizeof path, "%s/toss_%03d.csv", dir, t);
    if (read_toss(path, rows, NSAMP) != NSAMP) return -1;
    for (int k = 0; k + 1 < NSAMP; k++) {
      const double* x = rows[k];
      double rx = x[1] - cx, ry = x[2] - cy;
      double want[3] = {-a * rx - b * ry, -a * ry + b * rx, -g};   // F/m + gravity
      for (int i = 0; i < 3; i++) {
        double acc = (rows[k + 1][8 + i] - x[8 + i]) / dt;
        double tol = 5e-10 * (fabs(rows[k + 1][8 + i]) + fabs(x[8 + i])) / dt   // the printed velocities
                     + 5e-10 * (fabs(a) + fabs(b)) * (fabs(x[1]) + fabs(x[2]) + fabs(cx) + fabs(cy))  // positions
                     + 1e-12 * (fabs(want[i]) + 1);                                // arithmetic
        worst = fmax(worst, fabs(acc - want[i]) / tol);
      }
    }
  }
  return worst;
}

// the files' bytes equal (same seed, same data)
static int same_file(const char* p, const char* q) {
  FILE* f = fopen(p, "rb");
  FILE* h = fopen(q, "rb");
  int same = f && h;
  while (same) {
    int c = fgetc(f), d = fgetc(h);
    same = c == d;
    if (c == EOF || d == EOF) break;
  }
  if (f) fclose(f);
  if (h) fclose(h);
  return same;
}

int main(void) {
  char dir[] = "/tmp/physid_make_tosses_XXXXXX";
  if (!mkdtemp(dir)) return 2;
  const char* model = test_tmpfile_write(dir, "cube.xml", CUBE_NO_FLOOR);
  char vortex[600], vortex2[600], grav[600], bad[600];
  snprintf(vortex, sizeof vortex, "%s/vortex", dir);
  snprintf(vortex2, sizeof vortex2, "%s/vortex2", dir);
  snprintf(grav, sizeof grav, "%s/gravity", dir);
  snprintf(bad, sizeof bad, "%s/bad", dir);
  char ns[8];
  snprintf(ns, sizeof ns, "%d", NSAMP);

  // the vortex of run.sh: pull and swirl 20 1/s^2 around (0.2, 0.2)
  const char* v[] = {model, vortex, "3", ns, "20", "20", "0.2", "0.2", "--seed", "5"};
  CHECK(run(10, v) == 0);
  double e = field_error(vortex, 3, 20, 20, 0.2, 0.2, 9.81);
  CHECK_MSG(e >= 0 && e <= 1, "vortex: acceleration off the field by %.3g rounding bounds", e);
  // another field (pull only, swirl the other way) and gravity 4.9
  const char* v2[] = {model, vortex2, "2", ns, "5", "-12", "-0.1", "0.3", "--gravity", "4.9", "--seed", "9"};
  CHECK(run(12, v2) == 0);
  e = field_error(vortex2, 2, 5, -12, -0.1, 0.3, 4.9);
  CHECK_MSG(e >= 0 && e <= 1, "vortex 2: acceleration off the field by %.3g rounding bounds", e);
  // gravity mismatch: no field, g = 12.5
  const char* gr[] = {model, grav, "2", ns, "--gravity", "12.5"};
  CHECK(run(6, gr) == 0);
  e = field_error(grav, 2, 0, 0, 0, 0, 12.5);
  CHECK_MSG(e >= 0 && e <= 1, "gravity: acceleration off g by %.3g rounding bounds", e);
  // the field is not the gravity alone (the check above can fail): the vortex data against no field
  e = field_error(vortex, 3, 0, 0, 0, 0, 9.81);
  CHECK_MSG(e > 1e3, "the vortex data match free fall (%.3g)", e);

  // the same seed gives the same bytes
  const char* v3[] = {model, bad, "3", ns, "20", "20", "0.2", "0.2", "--seed", "5"};
  CHECK(run(10, v3) == 0);
  char p[700], q[700];
  snprintf(p, sizeof p, "%s/toss_002.csv", vortex);
  snprintf(q, sizeof q, "%s/toss_002.csv", bad);
  CHECK(same_file(p, q));

  // bad arguments: nonzero exit, no files
  char none[600];
  snprintf(none, sizeof none, "%s/none", dir);
  const char* b1[] = {model, none, "0", ns};
  const char* b2[] = {model, none, "2"};
  const char* b3[] = {"/nonexistent.xml", none, "2", ns};
  const char* b4[] = {model, none, "2", ns, "--seed", "0"};
  CHECK(run(4, b1) != 0);
  CHECK(run(3, b2) != 0);
  CHECK(run(4, b3) != 0);
  CHECK(run(6, b4) != 0);
  CHECK(access(none, F_OK) != 0);

  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}

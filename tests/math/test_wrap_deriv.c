// test_wrap_deriv.c - phys_wrap_deriv (src/math/wrap_deriv.c), the tangent points' derivatives d loc / d (p0, p1)
// in the geom's frame: against four-point central differences of phys_wrap (h = 1e-5; relative 1e-8) at fixed
// and seeded random points round a sphere and a cylinder, with and without a side point (the side point forcing
// the long way round included); against the tangency conditions differentiated (no difference taken): a
// sphere's |t| = r and (p - t) . t = 0 hold along every direction, so t' dt = 0 and (dp - dt) . t + (p - t) . dt
// = 0 (a cylinder: the same on the xy components); and 0 for straight paths.
#include <math.h>
#include <string.h>

#include "test.h"
#include "wrap.h"

static const double EYE[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double ORIGIN[3] = {0, 0, 0};
static double worst_fd = 0, worst_tan = 0;   // the largest relative deviations met (printed)

// central differences (four points) of phys_wrap's tangent points along input j; 0 if a point left the branch
static int wrap_fd(double col[6], const double p0[3], const double p1[3], const double* side, double r, int cyl,
                   int j) {
  const double h = 1e-5, step[4] = {2 * h, h, -h, -2 * h}, wt[4] = {-1, 8, -8, 1};
  memset(col, 0, sizeof(double) * 6);
  for (int s = 0; s < 4; s++) {
    double q[2][3], t[6];
    memcpy(q[0], p0, sizeof(q[0]));
    memcpy(q[1], p1, sizeof(q[1]));
    q[j / 3][j % 3] += step[s];
    if (phys_wrap(t, q[0], q[1], ORIGIN, EYE, r, cyl, side) < 0) return 0;
    for (int k = 0; k < 6; k++) col[k] += wt[s] * t[k] / (12 * h);
  }
  return 1;
}

// D against differences and the tangency conditions at one configuration; returns 1 if the path wraps
static int check_point(const double p0[3], const double p1[3], const double* side, double r, int cyl) {
  double D[36], t[6];
  double len = phys_wrap(t, p0, p1, ORIGIN, EYE, r, cyl, side);
  int ok = phys_wrap_deriv(D, p0, p1, side, r, cyl);
  CHECK(ok == (len >= 0));
  if (!ok) return 0;
  double worst = 0, scale = 0, tang = 0;
  for (int j = 0; j < 6; j++) {
    double col[6];
    if (!wrap_fd(col, p0, p1, side, r, cyl, j)) return 1;   // on a switch: differences undefined
    for (int k = 0; k < 6; k++) {
      worst = fmax(worst, fabs(D[6 * k + j] - col[k]));
      scale = fmax(scale, fabs(col[k]));
    }
    for (int e = 0; e < 2; e++) {
      const double* p = e ? p1 : p0;
      const double* te = t + 3 * e;
      int n = cyl ? 2 : 3;
      double dt[3] = {D[6 * (3 * e) + j], D[6 * (3 * e + 1) + j], D[6 * (3 * e + 2) + j]}, rad = 0, tan = 0;
      for (int i = 0; i < n; i++) {
        double dp = j / 3 == e && j % 3 == i ? 1 : 0;
        rad += te[i] * dt[i];
        tan += (dp - dt[i]) * te[i] + (p[i] - te[i]) * dt[i];
      }
      tang = fmax(tang, fmax(fabs(rad), fabs(tan)));
    }
  }
  worst_fd = fmax(worst_fd, worst / fmax(1, scale)), worst_tan = fmax(worst_tan, tang / fmax(1, scale));
  CHECK_MSG(worst <= 1e-8 * fmax(1, scale), "%s side %d: |D - fd| %.2e (scale %.2e)", cyl ? "cylinder" : "sphere",
            side != NULL, worst, scale);
  CHECK_MSG(tang <= 1e-13 * fmax(1, scale), "%s: tangency derivative %.2e", cyl ? "cylinder" : "sphere", tang);
  return 1;
}

// fixed configurations: both geoms, with and without side points, the side point forcing the wrap
static void test_fixed(void) {
  double p0[3] = {-1, 0.1, 0.05}, p1[3] = {1.2, 0.15, -0.3}, up[3] = {0, 3, 0.2}, down[3] = {0.1, -3, 0};
  for (int cyl = 0; cyl < 2; cyl++) {
    CHECK(check_point(p0, p1, NULL, 0.5, cyl));
    CHECK(check_point(p0, p1, up, 0.5, cyl));
    CHECK(check_point(p0, p1, down, 0.5, cyl));
  }
  // a straight path that a side point on the far side forces round (the long way)
  double q0[3] = {-2, 1, 0.3}, q1[3] = {2, 1.1, -0.2};
  for (int cyl = 0; cyl < 2; cyl++) {
    CHECK(!check_point(q0, q1, NULL, 0.5, cyl));
    CHECK(check_point(q0, q1, down, 0.5, cyl));
  }
}

// seeded random points round both geoms (a few hundred, of which the wrapped ones are checked)
static void test_random(void) {
  unsigned long long x = 12345;
  int wrapped = 0;
  for (int n = 0; n < 400; n++) {
    double v[9];
    for (int i = 0; i < 9; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      v[i] = 4.0 * (double)(x >> 11) / 9007199254740992.0 - 2;
    }
    wrapped += check_point(v, v + 3, n % 3 ? v + 6 : NULL, 0.4 + 0.1 * (n % 4), n % 2);
  }
  printf("random points: %d of 400 wrapped and checked; worst |D - fd| %.1e, tangency %.1e (relative)\n", wrapped,
         worst_fd, worst_tan);
  CHECK(wrapped > 50);
}

int main(void) {
  test_fixed();
  test_random();
  return test_done();
}

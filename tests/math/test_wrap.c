// test_wrap.c - phys_wrap (src/math/wrap.c), the path around a sphere or a cylinder, against analytic paths:
// a sphere between two opposite points (the arc and the tangent points), a path that misses the circle
// (straight, -1) and the side point forcing the wrap on its own side, the choice of the shorter way, a point
// inside the circle, a cylinder's helix (the unrolled path's length and heights), a rotated and moved geom
// frame, and the tangent condition (the straight part meets the surface at a right angle to the radius).
#include <math.h>
#include <string.h>

#include "rot.h"
#include "test.h"
#include "wrap.h"

static const double EYE[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double ORIGIN[3] = {0, 0, 0};

// sphere of radius 0.5 between (-2, 0, 0) and (2, 0.1, 0): both ways round; the side point picks one
static void test_sphere(void) {
  double t[6], x0[3] = {-2, 0, 0}, x1[3] = {2, 0.1, 0}, up[3] = {0, 3, 0}, down[3] = {0, -3, 0};
  double len_up = phys_wrap(t, x0, x1, ORIGIN, EYE, 0.5, 0, up);
  CHECK(len_up > 0 && t[1] > 0 && t[4] > 0);   // tangent points on the +y side
  // the tangent condition: radius r, and (x - t) perpendicular to t
  for (int k = 0; k < 2; k++) {
    const double* x = k ? x1 : x0;
    const double* tk = t + 3 * k;
    double d[3] = {x[0] - tk[0], x[1] - tk[1], x[2] - tk[2]};
    CHECK_NEAR(phys_norm3(tk), 0.5, 1e-15);
    CHECK_NEAR(phys_dot3(d, tk), 0, 1e-15);
  }
  // arc = r * angle between the tangent points (less than pi on the near side)
  CHECK_NEAR(len_up, 0.5 * acos(phys_dot3(t, t + 3) / 0.25), 1e-14);
  double len_down = phys_wrap(t, x0, x1, ORIGIN, EYE, 0.5, 0, down);
  CHECK(len_down > 0 && t[1] < 0 && t[4] < 0);
  // symmetric points: the two ways have equal arcs: pi - acos(r/|x0|) - acos(r/|x1|)
  double y0[3] = {-2, 0, 0}, y1[3] = {2, 0, 0};
  double len = phys_wrap(t, y0, y1, ORIGIN, EYE, 0.5, 0, up);
  CHECK_NEAR(len, 0.5 * (M_PI - 2 * acos(0.25)), 1e-14);
  // the shorter way without a side point: points below the centre go round below
  double z0[3] = {-2, -0.2, 0}, z1[3] = {2, -0.3, 0};
  CHECK(phys_wrap(t, z0, z1, ORIGIN, EYE, 0.5, 0, NULL) > 0 && t[1] < 0 && t[4] < 0);
}

// straight paths: missing the circle, a point inside it; a side point on the far side forces the wrap
static void test_straight(void) {
  double t[6] = {7, 7, 7, 7, 7, 7}, x0[3] = {-2, 1, 0}, x1[3] = {2, 1, 0}, down[3] = {0, -1, 0};
  CHECK(phys_wrap(t, x0, x1, ORIGIN, EYE, 0.5, 0, NULL) == -1 && t[0] == 7);
  CHECK(phys_wrap(t, x0, x1, ORIGIN, EYE, 0.5, 1, NULL) == -1);
  double len = phys_wrap(t, x0, x1, ORIGIN, EYE, 0.5, 0, down);   // forced round the -y side
  CHECK(len > 0 && t[1] < 0 && t[4] < 0);
  // the lower tangent points at angles atan2(1, -2) + acos(r/|x0|) and atan2(1, 2) - acos(r/|x1|)
  double a0 = atan2(1, -2) + acos(0.5 / sqrt(5)), a1 = atan2(1, 2) - acos(0.5 / sqrt(5)) + 2 * M_PI;
  CHECK_NEAR(len, 0.5 * (a1 - a0), 1e-14);
  CHECK_NEAR(t[0], 0.5 * cos(a0), 1e-15);
  CHECK_NEAR(t[1], 0.5 * sin(a0), 1e-15);
  double in[3] = {0.1, 0.1, 0};
  CHECK(phys_wrap(t, in, x1, ORIGIN, EYE, 0.5, 0, NULL) == -1);
}

// cylinder along z through (1, 2, 3) rotated 90 degrees about x (its axis is world -y): the plane path as the
// sphere's, the height along it linear, the curved part sqrt(arc^2 + rise^2)
static void test_cylinder(void) {
  double R[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}, pos[3] = {1, 2, 3}, t[6];
  // local points (-2, 0, 0.4) and (2, 0, -0.6): world p = pos + R p_local
  double l0[3] = {-2, 0, 0.4}, l1[3] = {2, 0, -0.6}, x0[3], x1[3], side[3];
  double ls[3] = {0, 3, 0};
  for (int i = 0; i < 3; i++) {
    x0[i] = pos[i] + R[3 * i] * l0[0] + R[3 * i + 1] * l0[1] + R[3 * i + 2] * l0[2];
    x1[i] = pos[i] + R[3 * i] * l1[0] + R[3 * i + 1] * l1[1] + R[3 * i + 2] * l1[2];
    side[i] = pos[i] + R[3 * i] * ls[0] + R[3 * i + 1] * ls[1] + R[3 * i + 2] * ls[2];
  }
  double len = phys_wrap(t, x0, x1, pos, R, 0.5, 1, side);
  double straight = sqrt(4 - 0.25), arc = 0.5 * (M_PI - 2 * acos(0.25)), total = 2 * straight + arc;
  double rise = -1.0 * arc / total;   // the height change along the arc
  CHECK_NEAR(len, sqrt(arc * arc + rise * rise), 1e-14);
  // the tangent points' heights (local z = -world y + 2) on the unrolled line
  CHECK_NEAR(2 - t[1], 0.4 - 1.0 * straight / total, 1e-14);
  CHECK_NEAR(2 - t[4], 0.4 - 1.0 * (straight + arc) / total, 1e-14);
}

int main(void) {
  test_sphere();
  test_straight();
  test_cylinder();
  return test_done();
}

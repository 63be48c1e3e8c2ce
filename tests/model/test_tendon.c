// test_tendon.c - the point path of a spatial tendon (src/model/tendon.c): its points, bodies and gap weights
// through a wrapped cylinder and a pulley, phys_tendon_plain, and the moment dL/dq that phys_spring_eval builds
// from the path against central differences of the length, on both sides of the state where the wrap switches
// sides (a kink of L(q): checked on each side, never across it) and where the path goes straight.
#include <math.h>
#include <string.h>

#include "dyn.h"
#include "mjcf_text.h"
#include "model.h"

// world site a at (-1, 0.05, 0); a hinge about z at the origin carries site b at (1, 0, 0) and, through a
// pulley of divisor 2, the second branch b -> c; a cylinder of radius 0.2 about z at the origin
static const char* MODEL =
    "<mujoco><worldbody><site name='a' pos='-1 0.05 0'/><geom name='drum' type='cylinder' size='.2 .1'/>"
    "<site name='c' pos='0 -1 0.3'/>"
    "<body><joint name='h' axis='0 0 1'/><geom size='.05' pos='0.5 0 0'/><site name='b' pos='1 0 0.2'/></body>"
    "</worldbody><tendon>"
    "<spatial name='round'><site site='a'/><geom geom='drum'/><site site='b'/><pulley divisor='2'/>"
    "<site site='b'/><site site='c'/></spatial>"
    "<spatial name='plain'><site site='a'/><site site='b'/></spatial></tendon></mujoco>";

// the path's points at q: a, the two tangent points (on the world body), b | b, c with weights 1, 0, 1, 0 | 1/2
static void test_points(physModel* m, physData* d) {
  d->qpos[0] = 0.3;
  phys_forward(m, d);
  CHECK(!phys_tendon_plain(m, 0) && phys_tendon_plain(m, 1));
  physTendonPath p;
  phys_tendon_path(m, 0, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  CHECK(p.npoint == 6);
  if (p.npoint != 6) return;
  const double w[6] = {1, 0, 1, 0, 0.5, 0};
  for (int k = 0; k < 6; k++) CHECK(p.w[k] == w[k]);
  CHECK(p.body[1] == 0 && p.body[2] == 0 && p.body[3] == 1 && p.body[4] == 1);
  CHECK(hypot(p.x[1][0], p.x[1][1]) > 0.2 - 1e-15 && hypot(p.x[1][0], p.x[1][1]) < 0.2 + 1e-15);
  // L = |a t0| + arc + |t1 b| + |b c| / 2
  double L = 0;
  for (int k = 0; k + 1 < 6; k++) {
    double dx[3] = {p.x[k + 1][0] - p.x[k][0], p.x[k + 1][1] - p.x[k][1], p.x[k + 1][2] - p.x[k][2]};
    L += p.w[k] * sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
  }
  CHECK(p.arcs > 0);
  CHECK_NEAR(d->spring_length[0], L + p.arcs, 1e-15);
}

// dL/dq (phys_spring_eval of tension -1) against (L(q + h) - L(q - h)) / 2h at q; returns the relative error
static double moment_error(const physModel* m, physData* d, double q) {
  const double h = 1e-6;
  double J[1] = {0}, L[2];
  d->qpos[0] = q;
  phys_forward(m, d);
  phys_spring_eval(m, d, 0, NULL, -1, J);
  for (int k = 0; k < 2; k++) {
    d->qpos[0] = q + (k ? -h : h);
    phys_forward(m, d);
    L[k] = d->spring_length[0];
  }
  return fabs(J[0] - (L[0] - L[1]) / (2 * h)) / fmax(fabs(J[0]), 1e-3);
}

// the line a-b passes the drum's centre at q* = atan2(-0.05, 1) (b at angle q): there the shorter way
// flips from one side to the other; moments agree with differences at q* -+ 0.05 and -+ 0.01, and where b is
// far from the line through the drum (straight: the path misses it, q = 1.3 has no wrap)
static void test_moments(const physModel* m, physData* d) {
  double qs = atan2(-0.05, 1);   // b = (cos q, sin q) on the line through a and the centre
  const double offs[4] = {-0.05, -0.01, 0.01, 0.05};
  double worst = 0;
  for (int i = 0; i < 4; i++) worst = fmax(worst, moment_error(m, d, qs + offs[i]));
  worst = fmax(worst, moment_error(m, d, 1.3));
  printf("tendon moment vs central differences on both sides of the side switch: max rel err %.2e\n", worst);
  CHECK(worst < 1e-8);
  // the two sides' moments differ (a kink), so a difference across it would not agree
  double J[2][1] = {{0}, {0}};
  for (int k = 0; k < 2; k++) {
    d->qpos[0] = qs + (k ? 0.001 : -0.001);
    phys_forward(m, d);
    phys_spring_eval(m, d, 0, NULL, -1, J[k]);
  }
  CHECK(fabs(J[0][0] - J[1][0]) > 0.1);
}

int main(void) {
  mjcf_text_begin("test_tendon");
  physLog log;
  physModel* m = load_text(MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return mjcf_text_end();
  physData* d = phys_make_data(m);
  test_points(m, d);
  test_moments(m, d);
  phys_free_data(d);
  phys_free_model(m);
  return mjcf_text_end();
}

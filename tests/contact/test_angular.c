// test_angular.c - the torsional and rolling friction rows of lcp, cone and ccp (src/contact/angular.c, issue 16):
//  - rows: a sphere resting on a plane (tests/data/contact/sphere_roll.xml) has 3 rows at condim 6, 1 at condim 4,
//    none at 3; their velocities are the frame coordinates of the ball's angular velocity (relative to the fixed
//    floor); coefficients mu_spin, mu_roll; the rolling pair is one disk only when asked;
//  - the friction block's solution against closed forms: G = I (the solution is the projection of -g: torsion
//    clamped to mu_s lambda_n, rolling scaled onto the disk of radius mu_r lambda_n, or clamped per axis in the
//    square); a singular G (two identical torsion rows, as a cube's corners share) saturated (both at their
//    bounds) and sticking (the row velocity 0, impulses within bounds); a separating contact (lambda_n 0) bounds
//    its rows at 0.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "scene.h"

// the rows of the settled ball at condim `condim`; returns their number (checked against the count)
static int ball_rows(physModel* m, physData* d, int condim, int disk, double* R, int* acon, double* amu, int* pair) {
  m->geom_condim[1] = condim;
  phys_reset_data(m, d);
  for (int i = 0; i < 100; i++) phys_step(m, d);
  const double w[3] = {1, -2, 3};
  for (int k = 0; k < 3; k++) d->qvel[3 + k] = w[k];
  phys_forward(m, d);
  int n = phys_angular_rows(m, d, d->contact, d->ncon, R, acon, amu, pair, disk);
  CHECK(d->ncon == 1 && n == phys_angular_count(m, d->contact, d->ncon));
  // row velocities: frame rows times w (the free joint's angular velocity is world-frame here: body axes = world)
  const double* f = d->contact[0].frame;
  int axis0 = condim == 6 && n == 2 ? 1 : 0;   // (condim 6 without torsion: rows 1, 2)
  for (int r = 0; r < n; r++) {
    double v = 0, want = 0, *Rr = R + (size_t)r * m->nv;
    for (int k = 0; k < m->nv; k++) v += Rr[k] * d->qvel[k];
    const double* fa = f + 3 * (axis0 + r);
    for (int k = 0; k < 3; k++) want += fa[k] * w[k];
    CHECK_MSG(fabs(v - want) < 1e-14, "condim %d row %d: %.17g want %.17g", condim, r, v, want);
    CHECK(acon[r] == 0);
  }
  return n;
}

static void test_rows(void) {
  physModel* m = scene_load("tests/data/contact/sphere_roll.xml", PHYS_CONTACT_LCP);
  if (!m) return;
  physData* d = phys_make_data(m);
  double R[3 * 6], amu[3];
  int acon[3], pair[3];
  CHECK(ball_rows(m, d, 6, 1, R, acon, amu, pair) == 3);
  CHECK(amu[0] == 0.02 && amu[1] == 0.01 && amu[2] == 0.01);
  CHECK(pair[0] == -1 && pair[1] == 2 && pair[2] == 1);
  CHECK(ball_rows(m, d, 6, 0, R, acon, amu, pair) == 3);
  CHECK(pair[0] == -1 && pair[1] == -1 && pair[2] == -1);
  CHECK(ball_rows(m, d, 4, 1, R, acon, amu, pair) == 1 && amu[0] == 0.02 && pair[0] == -1);
  CHECK(ball_rows(m, d, 3, 1, R, acon, amu, pair) == 0);
  phys_free_data(d);
  phys_free_model(m);
}

// a friction block of n angular rows (no frictionloss rows) over G, all of contact 0 with coefficients mu
static physFrictionRows block(double* G, double* b, double* lambda, int* state, int* acon, double* amu, int* pair,
                              int n) {
  physFrictionRows fr;
  memset(&fr, 0, sizeof fr);
  fr.nf = fr.nfa = n;
  fr.G = G, fr.b = b, fr.lambda = lambda, fr.state = state, fr.acon = acon, fr.amu = amu, fr.pair = pair;
  memset(lambda, 0, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) acon[i] = 0;
  return fr;
}

static void test_block(void) {
  physModel* m = scene_load("tests/data/contact/sphere_roll.xml", PHYS_CONTACT_LCP);
  if (!m) return;
  physData* d = phys_make_data(m);
  double G[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, b[3], lambda[3], amu[3] = {0.5, 1, 1}, lc[3] = {2, 0.3, -0.1};
  int state[3], acon[3], disk[3] = {-1, 2, 1}, square[3] = {-1, -1, -1};
  const double g[3] = {-5, 3, 4};
  // G = I: the projection of -g = (5, -3, -4) onto |x0| <= 1 and the disk of radius 2, or the square [-2, 2]^2
  physFrictionRows fr = block(G, b, lambda, state, acon, amu, disk, 3);
  phys_friction_block_solve(d, &fr, g, lc);
  printf("disk: %.15g %.15g %.15g\n", lambda[0], lambda[1], lambda[2]);
  CHECK(b[0] == 1 && b[1] == 2 && b[2] == 2);
  CHECK(fabs(lambda[0] - 1) < 1e-13 && fabs(lambda[1] + 1.2) < 1e-13 && fabs(lambda[2] + 1.6) < 1e-13);
  CHECK(state[0] == PHYS_ROW_UPPER && state[1] == PHYS_ROW_LOWER && state[2] == PHYS_ROW_LOWER);
  fr = block(G, b, lambda, state, acon, amu, square, 3);
  phys_friction_block_solve(d, &fr, g, lc);
  CHECK(fabs(lambda[0] - 1) < 1e-13 && fabs(lambda[1] + 2) < 1e-13 && fabs(lambda[2] + 2) < 1e-13);
  // inside: sticking, w = 0
  const double gin[3] = {-0.5, 0.3, 0.4};
  fr = block(G, b, lambda, state, acon, amu, disk, 3);
  phys_friction_block_solve(d, &fr, gin, lc);
  CHECK(fabs(lambda[0] - 0.5) < 1e-13 && fabs(lambda[1] + 0.3) < 1e-13 && fabs(lambda[2] + 0.4) < 1e-13);
  CHECK(state[0] == PHYS_ROW_CLAMPING && state[1] == PHYS_ROW_CLAMPING && state[2] == PHYS_ROW_CLAMPING);
  // separating contact: every bound 0
  double lsep[3] = {0, 0, 0};
  fr = block(G, b, lambda, state, acon, amu, disk, 3);
  phys_friction_block_solve(d, &fr, g, lsep);
  CHECK(lambda[0] == 0 && lambda[1] == 0 && lambda[2] == 0);
  // singular G: two identical torsion rows (mu 0.5, lambda_n 2: bounds 1 each)
  double Gs[4] = {1, 1, 1, 1}, amus[2] = {0.5, 0.5};
  int alone[2] = {-1, -1};
  const double gsat[2] = {-3, -3}, gstick[2] = {-1, -1};
  fr = block(Gs, b, lambda, state, acon, amus, alone, 2);
  phys_friction_block_solve(d, &fr, gsat, lc);
  CHECK(fabs(lambda[0] - 1) < 1e-13 && fabs(lambda[1] - 1) < 1e-13);
  fr = block(Gs, b, lambda, state, acon, amus, alone, 2);
  phys_friction_block_solve(d, &fr, gstick, lc);
  double w = lambda[0] + lambda[1] - 1;
  printf("singular, sticking: lambda %.15g %.15g, w %.3g\n", lambda[0], lambda[1], w);
  CHECK(fabs(w) < 1e-13 && fabs(lambda[0]) <= 1 && fabs(lambda[1]) <= 1);
  CHECK(d->warning_count[PHYS_WARN_SOLVER] == 0);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_rows();
  test_block();
  return test_done();
}

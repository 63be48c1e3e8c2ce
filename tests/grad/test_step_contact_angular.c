// test_step_contact_angular.c - the constrained step's derivatives with torsional and rolling friction rows
// (src/grad/step_contact_angular.c; issue 16: condim 4 and 6 under lcp, cone and ccp), for each of the three:
//  1. A against four-point differences of phys_step (fd4_jacobian, h = 1e-4) to 1e-4 relative (gm_compare, floor
//     1e-4 of the block scale), the differences at h and 3 h agreeing to 1e-3 (no row switches within 6 h), where
//     the rows slide: the ball of tests/data/contact/sphere_roll.xml (condim 6, mu_s 0.02 m, mu_r 0.01 m, friction
//     1.2 over the floor's 1), settled and sunk 2 mm (the position correction on, away from the bias's kink at
//     dist = 0), sliding, spinning and rolling at once; sliding and rolling with the torsion row sticking; slipping
//     with the rolling rows sliding. The box of box_spin.xml at condim 6 (rolling 0.01 m) on its face (four
//     corners, each its own angular rows, all equal: a singular block) sliding and turning (ccp), sliding (cone),
//     and on an edge (tilted 0.3 rad) sliding and turning (all three);
//  2. exactly where the rows stick (differences are too coarse there: the step's alternation of the contact
//     problem and the friction block stops at ~1e-9..1e-7 of the velocities where sliding friction and rolling
//     rows share a load, and a tightened alternation moves the differences onto the analytic values): the ball
//     spinning in place (torsion sliding: dw_z+/dw_z = 1; sticking), rolling slowly (rolling rows sticking) and
//     at rest: the stuck velocities' rows of A and P are 0 (check_stuck);
//  3. the reverse mode by the dot-product tests <y, A x> = <A'y, x>, <y, P t> = <P'y, t> to 1e-12;
//  4. P = dx+/dtheta for torsion:, rolling:, friction: and mass: against four-point differences of phys_step under
//     phys_param_set (h = 1e-4) to 1e-4;
//  5. coefficients 0 (mu_s = 0 with the ball spinning, mu_r = 0 with it rolling): the contact has no row, and
//     the torsion: (rolling:) column is the right derivative, against the one-sided second-order difference
//     from above; at rest it is 0.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad/fd_check.h"
#include "params.h"
#include "rollout.h"

#define FD_H 1e-4   // (the alternation of the contact problem and the friction block stops at ~1e-9 of the
                    // velocities: differences at 1e-6 carry 1e-3 of noise, at 1e-4 with four points 1e-5)
#define RTOL 1e-4

static const char* const BALL = "tests/data/contact/sphere_roll.xml";
static const char* const BOX = "tests/data/contact/box_spin.xml";
static double g_worst_a = 0, g_worst_p = 0, g_worst_dot = 0;

// settle body 0's free joint on the floor from rest (n steps), sink it to 2 mm below its height of rest (the
// position correction active: away from the bias's kink at dist = 0, which a resting contact sits on), then set
// its velocity (v, w)
static void settle(physModel* m, physData* d, int n, const double v[3], const double w[3]) {
  phys_reset_data(m, d);
  memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
  for (int i = 0; i < n; i++) phys_step(m, d);
  d->qpos[2] = 0.1 - 2e-3;
  for (int k = 0; k < 3; k++) d->qvel[k] = v[k], d->qvel[3 + k] = w[k];
}

// the dot-product test's relative error |y'(J x) - (J'y)'x| / sum |y_i J_ij x_j| (fd_dot_check checks it)
static double dot_error(const double* J, const double* y, const double* x, const double* Jty, int rows, int cols) {
  double scale, rhs = 0, lhs = gm_bilinear(J, y, x, rows, cols, &scale);
  for (int j = 0; j < cols; j++) rhs += Jty[j] * x[j];
  return scale > 0 ? fabs(lhs - rhs) / scale : 0;
}

// A against four-point differences at h (and h vs 3 h: no switch), the VJP's dot test
static void check_ab(const char* name, physModel* m, physData* d, physRng* rng) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  double *A = malloc(sizeof(double) * n2 * n2), *Af = malloc(sizeof(double) * n2 * n2);
  double *Ag = malloc(sizeof(double) * n2 * n2), *B = malloc(sizeof(double) * (n2 * nu + 1));
  double *y = malloc(sizeof(double) * n2), *x = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2);
  physStatus st = phys_step_jacobian(m, d, A, NULL);
  CHECK_MSG(st == PHYS_OK, "%s: status %d: %s", name, (int)st, d->lastwarning);
  fd4_jacobian(m, d, FD_H, Af, B);
  fd4_jacobian(m, d, 3 * FD_H, Ag, B);
  double fscale = fmax(1, fmax(gm_maxabs(d->qpos, m->nq), gm_maxabs(d->qvel, nv)));
  char what[128];
  snprintf(what, sizeof what, "%s: fd h vs 3 h", name);
  gm_compare(what, Af, Ag, n2, n2, fscale, 1e-3);
  snprintf(what, sizeof what, "%s A", name);
  double w = gm_compare(what, A, Af, n2, n2, fscale, RTOL);
  g_worst_a = fmax(g_worst_a, w);
  gm_rand_vec(rng, y, n2);
  gm_rand_vec(rng, x, n2);
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  fd_dot_check(name, A, y, x, xb, n2, n2);
  double e = dot_error(A, y, x, xb, n2, n2);
  g_worst_dot = fmax(g_worst_dot, e);
  printf("%-44s %-4s A vs fd %.2e, dot %.1e\n", name, phys_contact_name(m->opt.contact), w, e);
  free(A), free(Af), free(Ag), free(B), free(y), free(x), free(xb);
}

// P for spec against four-point differences at h = 1e-6 and its VJP's dot test
static void check_p(const char* name, physModel* m, physData* d, const char* const* spec, int nspec, physRng* rng) {
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
  char what[128];
  snprintf(what, sizeof what, "%s P", name);
  double w = fd_check_p(what, m, d, &t, rng, -FD_H, RTOL);
  g_worst_p = fmax(g_worst_p, w);
  printf("%-44s %-4s P vs fd %.2e\n", name, phys_contact_name(m->opt.contact), w);
  phys_param_table_free(&t);
}

// d's step leaves the ball's tangential motion stuck (v_x+, v_y+, w_x+, w_y+ and, with spin, w_z+ zero to 1e-6,
// the precision the step's alternation of the contact problem and the friction block stops at: 1.9e-7 measured
// on the slowly rolling ball): the scene's rows stick; d's state restored
static void check_stuck_step(const char* name, physModel* m, physData* d, int spin) {
  double* rec = malloc(sizeof(double) * phys_rollout_record_size(m));
  phys_rollout_save_state(m, d, rec);
  phys_step(m, d);
  double big = fmax(fmax(fabs(d->qvel[0]), fabs(d->qvel[1])), fmax(fabs(d->qvel[3]), fabs(d->qvel[4])));
  if (spin) big = fmax(big, fabs(d->qvel[5]));
  CHECK_MSG(big < 1e-6, "%s: the step's stuck velocities reach %g", name, big);
  phys_rollout_load_state(m, d, rec);
  free(rec);
}

// the exact derivative of a stuck ball (the sliding friction, the rolling rows and with spin the torsion row
// sticking; the ball unturned, q = q0): v_x+, v_y+ and the world's w_x+, w_y+ (and w_z+) stay 0 under every small
// change of the state and parameters, so the rows of v_x+, v_y+ in A and P and of w+ (the body's frame) in A's v
// columns and in P are 0 (to 1e-6 of max(1, the matrix's largest entry): the point's own precision); the dot
// tests
static void check_stuck(const char* name, physModel* m, physData* d, int spin, physRng* rng) {
  int nv = m->nv, n2 = 2 * nv;
  double *A = malloc(sizeof(double) * n2 * n2), *y = malloc(sizeof(double) * n2), *x = malloc(sizeof(double) * n2);
  double* xb = malloc(sizeof(double) * n2);
  static const char* const spec[] = {"torsion:ball", "rolling:ball", "friction:ball", "mass:ball"};
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&t, m, spec, 4, &log) == PHYS_OK, "%s", log.error);
  int nt = t.ntheta;
  double *P = malloc(sizeof(double) * n2 * nt), *tb = malloc(sizeof(double) * nt), *th = malloc(sizeof(double) * nt);
  physStatus st = phys_step_jacobian(m, d, A, NULL);
  CHECK_MSG(st == PHYS_OK, "%s: status %d: %s", name, (int)st, d->lastwarning);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  double sa = gm_maxabs(A, n2 * n2), sp = gm_maxabs(P, n2 * nt), worst = 0;
  static const int rows[5] = {0, 1, 3, 4, 5};
  for (int k = 0; k < 4 + spin; k++) {   // (w is in the body's frame: a turn of q turns it, only v's columns)
    int r = nv + rows[k];
    for (int j = rows[k] < 2 ? 0 : nv; j < n2; j++) worst = fmax(worst, fabs(A[(size_t)r * n2 + j]) / fmax(sa, 1));
    for (int j = 0; j < nt; j++) worst = fmax(worst, fabs(P[(size_t)r * nt + j]) / fmax(sp, 1));
  }
  // (exact at an exact solution; the step's point holds its velocities 0 to its own precision, 1.9e-7 on the
  // rolling ball, whose residual enters through dA v+: the rows then reach 1e-7, a missing term would be O(1))
  CHECK_MSG(worst <= 1e-6, "%s: the stuck rows of A, P reach %g of their scale", name, worst);
  gm_rand_vec(rng, y, n2);
  gm_rand_vec(rng, x, n2);
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  fd_dot_check(name, A, y, x, xb, n2, n2);
  gm_rand_vec(rng, th, nt);
  CHECK(phys_step_param_vjp(m, d, &t, y, tb) == PHYS_OK);
  fd_dot_check(name, P, y, th, tb, n2, nt);
  printf("%-44s %-4s stuck rows of A, P %.1e of their scale\n", name, phys_contact_name(m->opt.contact), worst);
  check_stuck_step(name, m, d, spin);
  phys_param_table_free(&t);
  free(A), free(y), free(x), free(xb), free(P), free(tb), free(th);
}

// the ball's scenes under contact model c: against differences where the rows slide (the alternation of the
// contact problem and the friction block converges in a few sweeps), exactly where they stick (there the
// alternation stops at ~1e-8 of the velocities, too coarse for differences at h = 1e-6)
static void ball_scenes(int c, physRng* rng) {
  physModel* m = gm_load(BALL, 0);
  physData* d = phys_make_data(m);
  m->opt.contact = c;
  m->geom_friction[3 * 1] = 1.2;   // (above the floor's 1: the pair's mu moves with the ball's both ways)
  static const char* const spec[] = {"torsion:ball", "rolling:ball", "friction:ball", "mass:ball"};
  static const struct { const char* name; double v[3], w[3]; int stuck; } sc[] = {
      {"ball sliding, spinning and rolling", {0.4, -0.3, 0}, {2, -1, 3}, -1},
      {"ball sliding, rolling, torsion sticking", {0.6, 0.2, 0}, {-1, 1, 0.02}, -1},
      {"ball slipping, rolling rows sliding", {0.5, 0, 0}, {-1.5, 2, 0}, -1},
      {"ball spinning in place, torsion sliding", {0, 0, 0}, {0, 0, 5}, 0},
      {"ball spinning in place, torsion sticking", {0, 0, 0}, {0, 0, 0.01}, 1},
      {"ball rolling, rolling rows sticking", {1e-4, 0, 0}, {0, 1e-3, 0}, 1},
      {"ball at rest", {0, 0, 0}, {0, 0, 0}, 1},
  };
  for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
    settle(m, d, 300, sc[s].v, sc[s].w);
    if (sc[s].stuck >= 0) {
      check_stuck(sc[s].name, m, d, sc[s].stuck, rng);
      continue;
    }
    check_ab(sc[s].name, m, d, rng);
    check_p(sc[s].name, m, d, spec, 4, rng);
  }
  // spinning in place with the torsion row sliding: dw_z+/dw_z = 1 (the torsion impulse mu_s lambda_n does not
  // depend on the spin)
  settle(m, d, 300, sc[3].v, sc[3].w);
  double* A = malloc(sizeof(double) * 144);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  CHECK_NEAR(A[11 * 12 + 11], 1, 1e-12);
  free(A);
  phys_free_data(d);
  phys_free_model(m);
}

// the box at condim 6 (rolling 0.01 m) on its face (four corners, each its own angular rows, which are equal:
// a singular block) under ccp sliding and turning, under cone sliding; on an edge (tilted 0.3 rad about x: two
// contacts) sliding and turning under every model
static void box_scene(int c, physRng* rng) {
  physModel* m = gm_load(BOX, 0);
  physData* d = phys_make_data(m);
  m->opt.contact = c;
  m->geom_condim[1] = 6;
  m->geom_friction[3 * 1 + 2] = 0.01;
  m->geom_friction[3 * 1] = 1.2;
  static const char* const spec[] = {"torsion:box", "rolling:box", "friction:box", "mass:box"};
  double v[3] = {1, 0.3, 0}, w[3] = {0, 0, c == PHYS_CONTACT_CCP ? 2 : 0};
  if (c != PHYS_CONTACT_LCP) {
    settle(m, d, 300, v, w);
    check_ab("box condim 6 sliding on a face", m, d, rng);
    check_p("box condim 6 sliding on a face", m, d, spec, 4, rng);
  }
  double w2[3] = {0, 0, 2}, th = 0.3;
  settle(m, d, 300, v, w2);
  d->qpos[3] = cos(th / 2), d->qpos[4] = sin(th / 2), d->qpos[5] = d->qpos[6] = 0;
  d->qpos[2] = 0.1 * (cos(th) + sin(th)) - 2e-3;
  check_ab("box condim 6 sliding and turning on an edge", m, d, rng);
  check_p("box condim 6 sliding and turning on an edge", m, d, spec, 4, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// (q+, v+) (nq + nv) of a step from the record x0 with theta = th
static void step_at(physModel* m, physData* d, const physParamTable* t, double th, const double* x0, double* out) {
  CHECK(phys_param_set(t, m, &th) == PHYS_OK);
  phys_rollout_load_state(m, d, x0);
  phys_step(m, d);
  memcpy(out, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(out + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
}

// coefficient 0 of spec (torsion: or rolling:) at the ball's velocity (v, w): P's column against the one-sided
// difference from above, (-3 f(0) + 4 f(h) - f(2h)) / 2h
static void zero_coefficient(int c, const char* spec, const double v[3], const double w[3], const char* name) {
  physModel* m = gm_load(BALL, 0);
  physData* d = phys_make_data(m);
  m->opt.contact = c;
  int col = strncmp(spec, "torsion", 7) == 0 ? 1 : 2;
  m->geom_friction[3 * 1 + col] = 0;
  settle(m, d, 300, v, w);
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&t, m, &spec, 1, &log) == PHYS_OK, "%s", log.error);
  int nv = m->nv, n2 = 2 * nv, ns = (int)phys_rollout_record_size(m);
  double *P = malloc(sizeof(double) * n2), *x0 = malloc(sizeof(double) * ns), *f[3];
  for (int k = 0; k < 3; k++) f[k] = malloc(sizeof(double) * ns);
  physStatus st = phys_step_param_jacobian(m, d, &t, P);
  CHECK_MSG(st == PHYS_OK, "%s: %s", name, d->lastwarning);
  phys_rollout_save_state(m, d, x0);
  double h = 1e-6, worst = 0, big = gm_maxabs(P, n2);
  for (int k = 0; k < 3; k++) step_at(m, d, &t, k * h, x0, f[k]);
  double* q[3] = {f[0], f[1], f[2]};
  double dq[3][6];
  for (int k = 1; k < 3; k++) phys_difference_pos(m, dq[k], 1, q[0], q[k]);
  for (int i = 0; i < n2; i++) {
    double fd = i < nv ? (4 * dq[1][i] - dq[2][i]) / (2 * h)
                       : (-3 * q[0][m->nq + i - nv] + 4 * q[1][m->nq + i - nv] - q[2][m->nq + i - nv]) / (2 * h);
    double e = fabs(P[i] - fd) / fmax(fmax(fabs(fd), 1e-4 * big), 1e-12);
    worst = fmax(worst, e);
    CHECK_MSG(e <= RTOL, "%s %s: x+[%d] P %.10g fd %.10g", name, phys_contact_name(c), i, P[i], fd);
  }
  printf("%-44s %-4s one-sided %s column vs fd %.2e (largest entry %.3g)\n", name, phys_contact_name(c), spec, worst,
         big);
  CHECK(phys_param_set(&t, m, (double[]){0}) == PHYS_OK);
  for (int k = 0; k < 3; k++) free(f[k]);
  free(P), free(x0);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  physRng rng;
  phys_rng_seed(&rng, 16);
  static const double zero[3] = {0, 0, 0}, spin[3] = {0, 0, 5}, vroll[3] = {0.5, 0, 0}, wroll[3] = {0, 5, 0};
  for (int c = PHYS_CONTACT_LCP; c <= PHYS_CONTACT_CCP; c++) {
    ball_scenes(c, &rng);
    box_scene(c, &rng);
    zero_coefficient(c, "torsion:ball", zero, spin, "ball spinning, mu_s = 0");
    zero_coefficient(c, "rolling:ball", vroll, wroll, "ball rolling, mu_r = 0");
    zero_coefficient(c, "torsion:ball", zero, zero, "ball at rest, mu_s = 0");
  }
  printf("worst: A %.2e, P %.2e, dot %.1e\n", g_worst_a, g_worst_p, g_worst_dot);
  return test_done();
}

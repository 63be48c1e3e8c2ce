// test_ddp.c - control-limited iLQR (src/control/ddp.c): the box QP against enumeration of its active sets,
// DDP on a linear model equal to the finite-horizon Riccati solution, the pendulum swing-up with bounded
// torque, determinism, infeasible bounds; paper 001's cartpole and double pendulum swing-ups
// (examples/control); the solver's parts (bench/bench_control.c) against phys_ddp_solve; paper 001's drone
// contrast for DDP: resting on the ground under lcp (thrust below its weight) the exact step Jacobians give
// B = 0 through the clamped contacts, the feedforward is zero and DDP stops at once, with the
// complementarity-aware Jacobians (phys_step_jacobian_aware fed the value gradient) it takes off to the target
// height; the stall rule stops a solve whose cost no longer falls.
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chol.h"
#include "control.h"
#include "grad.h"
#include "test.h"
#include "lqr.h"
#include "drone_task.h"

//---------------------------------------------------------------------------------------------------------
// box QP

// the box QP's minimum by enumerating every active set of a 2-variable problem (each variable at lo, hi or
// free): the best feasible stationary point
static double brute_qp2(const double* H, const double* g, const double* lo, const double* hi, double* xbest) {
  double best = INFINITY;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double x[2];
      int fix[2] = {a, b};
      for (int i = 0; i < 2; i++) x[i] = fix[i] == 1 ? lo[i] : fix[i] == 2 ? hi[i] : 0;
      if (a == 0 && b == 0) {
        double det = H[0] * H[3] - H[1] * H[2];
        x[0] = (-g[0] * H[3] + g[1] * H[1]) / det;
        x[1] = (-g[1] * H[0] + g[0] * H[2]) / det;
      } else if (a == 0) {
        x[0] = -(g[0] + H[1] * x[1]) / H[0];
      } else if (b == 0) {
        x[1] = -(g[1] + H[2] * x[0]) / H[3];
      }
      if (x[0] < lo[0] - 1e-12 || x[0] > hi[0] + 1e-12 || x[1] < lo[1] - 1e-12 || x[1] > hi[1] + 1e-12) continue;
      double f = 0.5 * (H[0] * x[0] * x[0] + 2 * H[1] * x[0] * x[1] + H[3] * x[1] * x[1]) + g[0] * x[0] + g[1] * x[1];
      if (f < best) best = f, xbest[0] = x[0], xbest[1] = x[1];
    }
  return best;
}

static void test_box_qp(void) {
  const double H[4] = {2.0, 0.8, 0.8, 1.0};
  const double gs[4][2] = {{-1, -1}, {3, -0.5}, {-4, 4}, {0.1, 0.2}};
  const double lo[2] = {-1, -0.5}, hi[2] = {0.5, 1};
  for (int c = 0; c < 4; c++) {
    double x[2] = {0, 0}, xb[2] = {NAN, NAN}, Lff[4], scratch[6];
    int free[2];
    int nf = phys_box_qp(2, H, gs[c], lo, hi, x, free, Lff, scratch);
    brute_qp2(H, gs[c], lo, hi, xb);
    CHECK(nf >= 0);
    CHECK_NEAR(x[0], xb[0], 1e-12);
    CHECK_NEAR(x[1], xb[1], 1e-12);
    // the free rows are exactly those strictly inside the box
    for (int i = 0; i < 2; i++) CHECK(free[i] == (x[i] > lo[i] && x[i] < hi[i]));
  }
  // an indefinite H on the free rows is reported
  const double Hneg[4] = {-1, 0, 0, 1}, g[2] = {0.1, 0.1};
  double x[2] = {0, 0}, Lff[4], scratch[6];
  int free[2];
  CHECK(phys_box_qp(2, Hneg, g, (double[]){-INFINITY, -1}, (double[]){INFINITY, 1}, x, free, Lff, scratch) == -1);
}

//---------------------------------------------------------------------------------------------------------
// LQR

static void test_lqr(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physData* d;
  physModel* m = load(&d, "tests/data/slider2_motor.xml");
  if (!m) return;
  const int T = 150, n = 4, nu = 2;
  physControlProblem* p = phys_control_make(m, T, 50);
  CHECK(p && p->nx == 2 * 2 + 2);
  // targets: run toward (0.3, -0.2) at rest, end at (1, 0.5) with velocity (0, 0.1)
  double q[4] = {0.5, 0.2, 0.1, 0.3}, r[2] = {0.01, 0.02}, qf[4] = {100, 200, 10, 20};
  double xr[4] = {0.3, -0.2, 0, 0}, xf[4] = {1, 0.5, 0, 0.1}, x0[4] = {-0.2, 0.1, 0.3, -0.4};
  for (int i = 0; i < 2; i++) {
    p->run.qref[i] = xr[i], p->run.vref[i] = xr[2 + i], p->run.wq[i] = q[i], p->run.wv[i] = q[2 + i];
    p->fin.qref[i] = xf[i], p->fin.vref[i] = xf[2 + i], p->fin.wq[i] = qf[i], p->fin.wv[i] = qf[2 + i];
    p->wu[i] = r[i];
  }
  phys_reset_data(m, d);
  memcpy(d->qpos, x0, sizeof(double) * 2);
  memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
  double A[16], B[8];
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  static double Ur[150 * 2];
  // the running cost is integrated over the step (times dt = 0.01)
  double qh[4], rh[2];
  for (int i = 0; i < 4; i++) qh[i] = q[i] * m->opt.timestep;
  for (int i = 0; i < 2; i++) rh[i] = r[i] * m->opt.timestep;
  riccati(n, nu, T, A, B, qh, rh, qf, xr, xf, x0, Ur);
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_OK);
  double err = 0, scale = 0;
  for (int i = 0; i < T * nu; i++) err = fmax(err, fabs(p->U[i] - Ur[i])), scale = fmax(scale, fabs(Ur[i]));
  CHECK_MSG(err <= 1e-9 * fmax(1, scale), "max |U_ddp - U_riccati| = %.3g (scale %.3g)", err, scale);
  // a linear-quadratic problem: one Newton step is exact, the next backward pass finds nothing to do
  CHECK_MSG(p->niter <= 2, "niter %d", p->niter);
  CHECK(p->iter[1].alpha == 1);
  // d is back at the initial state
  CHECK(d->qpos[0] == x0[0] && d->qvel[1] == x0[3] && d->time == 0);
  // the cost of the returned rollout is what phys_control_rollout gives for the controls
  double J = phys_control_rollout(p, d, p->U, NULL);
  CHECK(J == p->cost);
  printf("lqr: %d iterations, cost %.12g, max |U - U_riccati| %.3g\n", p->niter, p->cost, err);
  // a control that overflows the step (force 2e308 on z at step 3): the step is rejected, the rollout's cost
  // is +inf (the line search's rejection test), and as an initial guess it is an error, never a NaN result
  phys_reset_data(m, d);
  memcpy(d->qpos, x0, sizeof(double) * 2);
  memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
  p->U[3 * nu + 1] = 1e308;
  CHECK(phys_control_rollout(p, d, p->U, NULL) == INFINITY);
  CHECK(d->warning_count[PHYS_WARN_REJECTED] == 1);
  memcpy(d->qpos, x0, sizeof(double) * 2);
  memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
  d->time = 0;
  memset(&log, 0, sizeof log);
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_ERR_NUMERIC);
  CHECK(strstr(log.error, "the initial guess's rollout is not finite") != NULL);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the rate and effort terms: on the linear model with running, final, effort and rate weights the cost is
// quadratic in U, so at DDP's solution its central differences (exact for a quadratic up to rounding) vanish
static void test_rate_optimality(void) {
  physData* d;
  physModel* m = load(&d, "tests/data/slider2_motor.xml");
  if (!m) return;
  const int T = 60, nu = 2;
  physControlProblem* p = phys_control_make(m, T, 50);
  for (int i = 0; i < 2; i++) {
    p->run.wq[i] = 0.3, p->run.wv[i] = 0.1, p->fin.wq[i] = 50, p->fin.wv[i] = 5;
    p->fin.qref[i] = i ? -0.5 : 0.7;
    p->wu[i] = 0.01, p->wdu[i] = i ? 2 : 0.5, p->uprev[i] = i ? -1 : 1;
  }
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  // the gradient's scale: central differences at U = 0
  static double U[60 * 2];
  const double h = 1e-3;
  double g0 = 0, g = 0;
  for (int i = 0; i < T * nu; i++) {
    U[i] = h;
    double Jp = phys_control_rollout(p, d, U, NULL);
    phys_reset_data(m, d);
    U[i] = -h;
    double Jm = phys_control_rollout(p, d, U, NULL);
    phys_reset_data(m, d);
    U[i] = 0;
    g0 = fmax(g0, fabs(Jp - Jm) / (2 * h));
  }
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_OK);
  memcpy(U, p->U, sizeof U);
  for (int i = 0; i < T * nu; i++) {
    double ui = U[i];
    U[i] = ui + h;
    double Jp = phys_control_rollout(p, d, U, NULL);
    phys_reset_data(m, d);
    U[i] = ui - h;
    double Jm = phys_control_rollout(p, d, U, NULL);
    phys_reset_data(m, d);
    U[i] = ui;
    g = fmax(g, fabs(Jp - Jm) / (2 * h));
  }
  CHECK_MSG(g <= 1e-8 * g0, "max |dJ/du| at the solution %.3g, at U = 0 %.3g", g, g0);
  printf("rate + effort: %d iterations, max |dJ/du| %.3g at the solution (%.3g at U = 0)\n", p->niter, g, g0);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// J at U from the initial state (qpos0, at rest)
static double cost_at(physControlProblem* p, const physModel* m, physData* d, const double* U) {
  phys_reset_data(m, d);
  return phys_control_rollout(p, d, U, NULL);
}

// the projected gradient of J at U: max over controls of |dJ/du| inside the bounds (central differences,
// step h), and at a bound of the slope pushing outward (the second-order one-sided difference into the box:
// phys_step clamps a control outside its ctrlrange, so no difference may cross the bound)
static double projected_gradient(physControlProblem* p, const physModel* m, physData* d, double* U, double h) {
  double g = 0, J0 = cost_at(p, m, d, U);
  for (int i = 0; i < p->T * p->nu; i++) {
    int j = i % p->nu;
    double ui = U[i], gi, s = ui >= p->hi[j] ? -1 : 1, J[2];
    int inside = ui > p->lo[j] && ui < p->hi[j];
    for (int k = 0; k < 2; k++) {
      U[i] = inside ? ui + (k ? -h : h) : ui + s * (k + 1) * h;
      J[k] = cost_at(p, m, d, U);
    }
    U[i] = ui;
    if (inside) gi = (J[0] - J[1]) / (2 * h);
    else gi = s * (-3 * J0 + 4 * J[0] - J[1]) / (2 * h);
    if (ui <= p->lo[j]) gi = fmin(gi, 0);        // at the lower bound only a negative slope is a descent
    else if (ui >= p->hi[j]) gi = fmax(gi, 0);   // at the upper bound only a positive one
    g = fmax(g, fabs(gi));
  }
  phys_reset_data(m, d);
  return g;
}

// quaternion states (a free and a ball joint), a slide with a joint limit, motors on joints and on a spring
// with ctrlrange (tests/data/mixed.xml): DDP lowers the cost at every iteration, keeps the controls in their
// ranges, and ends at a KKT point of the bounded problem (projected central differences of the cost)
// (with site: a final term on the tip site's world position and a running one on the base's, whose exact
// gradient the KKT check then tests)
static void test_mixed(int site) {
  physData* d;
  physModel* m = load(&d, "tests/data/mixed.xml");
  if (!m) return;
  const int T = 100;
  physControlProblem* p = phys_control_make(m, T, 200);
  int slide = m->jnt_dofadr[phys_name2id(m, "joint", "slide")], hinge = m->jnt_dofadr[phys_name2id(m, "joint", "hinge")];
  int qs = m->jnt_qposadr[phys_name2id(m, "joint", "slide")], qh = m->jnt_qposadr[phys_name2id(m, "joint", "hinge")];
  p->fin.qref[qs] = 0.25, p->fin.qref[qh] = 1.0;
  p->fin.wq[slide] = 100, p->fin.wq[hinge] = 10;
  for (int i = 0; i < m->nv; i++) p->run.wv[i] = 0.1;
  for (int j = 0; j < m->nu; j++) p->wu[j] = 1e-2, p->wdu[j] = 1e-3;
  p->tol = 1e-13;
  if (site) {
    int tip = phys_name2id(m, "site", "tipsite");
    p->fin.npoint = 1;
    p->fin.point[0] = (physPointCost){tip, {0.6, 0.1, 1.0}, {30, 30, 10}, 0, 0, 0, 0, 0};
    p->run.npoint = 1;
    p->run.point[0] = (physPointCost){phys_name2id(m, "site", "anchor"), {0.5, 0.3, 2.4}, {1, 1, 1}, 0, 0, 0, 0, 0};
    CHECK(tip >= 0);
  }
  for (int j = 0; j < m->nu; j++) CHECK(p->lo[j] == m->actuator_ctrlrange[2 * j] && p->hi[j] == m->actuator_ctrlrange[2 * j + 1]);
  static double U[100 * 3];
  double g0 = projected_gradient(p, m, d, U, 1e-5);
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_OK);
  for (int k = 1; k <= p->niter; k++) CHECK(p->iter[k].cost < p->iter[k - 1].cost);
  CHECK(phys_control_violation(p, p->U) == 0);
  memcpy(U, p->U, sizeof U);
  double g = projected_gradient(p, m, d, U, 1e-5);
  int nb = 0;
  for (int i = 0; i < T * m->nu; i++) nb += U[i] == p->lo[i % m->nu] || U[i] == p->hi[i % m->nu];
  // the differences' rounding is about eps J / h = 1.3e-10 here: 1e-8 is a KKT point to within that noise
  CHECK_MSG(g <= 1e-8, "projected gradient %.3g at the solution, %.3g at U = 0", g, g0);
  printf("mixed%s: %d iterations (stop %d), cost %.9g -> %.9g, %d controls at a bound, projected gradient %.3g "
         "(%.3g at U = 0)\n", site ? " with site terms" : "", p->niter, (int)p->stop, p->iter[0].cost, p->cost, nb, g, g0);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// pendulum swing-up

// the swing-up of issue 13's task on models/pendulum_motor.xml (200 steps of 10 ms) or, with torque bounds
// [-lim, lim] (lim > 0), the same cost over 400 steps; returns the problem (caller frees), its final angle in *qT
static physControlProblem* swing_up(const physModel* m, physData* d, double lim, double* qT) {
  int T = lim > 0 ? 400 : 200;
  physControlProblem* p = phys_control_make(m, T, 300);
  p->fin.qref[0] = 3.14159265;
  p->fin.wq[0] = 100;
  p->fin.wv[0] = 10;
  p->wu[0] = 1e-3;
  if (lim > 0) p->lo[0] = -lim, p->hi[0] = lim;
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_OK);
  *qT = p->X[(size_t)T * (m->nq + m->nv)];
  return p;
}

static void test_swing_up(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physData* d;
  physModel* m = load(&d, "models/pendulum_motor.xml");
  if (!m) return;
  double qT, qT2;
  physControlProblem* p = swing_up(m, d, 0, &qT);
  CHECK_MSG(fabs(qT - M_PI) < 1e-2, "final angle %.9g", qT);
  double umax = 0;
  for (int t = 0; t < 200; t++) umax = fmax(umax, fabs(p->U[t]));
  printf("swing-up unbounded: %d iterations, cost %.9g, final angle %.9g, max |u| %.4g\n", p->niter, p->cost, qT,
         umax);
  CHECK(p->stop == PHYS_DDP_COST);
  // |u| <= 3, a third of the torque that holds the pendulum level (9.81 N m): it must pump, swinging back and
  // forth with growing amplitude, over 4 s
  double lim = 3;
  CHECK(umax > lim);
  physControlProblem* pb = swing_up(m, d, lim, &qT2);
  CHECK_MSG(fabs(qT2 - M_PI) < 1e-2, "bounded final angle %.9g", qT2);
  CHECK(phys_control_violation(pb, pb->U) == 0);
  int sat = 0, reversals = 0;
  for (int t = 0; t < 400; t++) sat += fabs(pb->U[t]) == lim;
  CHECK(sat > 0);   // the bound is active somewhere
  for (int t = 1; t < 400; t++) reversals += pb->X[2 * t + 1] * pb->X[2 * t + 3] < 0;   // qvel changes sign
  CHECK_MSG(reversals >= 2, "%d reversals", reversals);
  CHECK(pb->stop == PHYS_DDP_COST);
  printf("swing-up |u| <= %g: %d iterations, cost %.9g, final angle %.9g, %d steps at the bound, %d swing reversals\n",
         lim, pb->niter, pb->cost, qT2, sat, reversals);
  // determinism: the same problem solved again gives the same bits
  double qT3;
  physControlProblem* pc = swing_up(m, d, lim, &qT3);
  CHECK(pc->niter == pb->niter && memcmp(pc->U, pb->U, sizeof(double) * 400) == 0 && pc->cost == pb->cost);
  // infeasible bounds are an error naming the control
  pc->lo[0] = 1, pc->hi[0] = -1;
  memset(&log, 0, sizeof log);
  CHECK(phys_ddp_solve(pc, d, NULL, NULL, &log) == PHYS_ERR_ARG);
  CHECK(strstr(log.error, "control 0: infeasible bounds [1, -1]") != NULL);
  phys_control_free(pc);
  phys_control_free(pb);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the pendulum's tip site to the top (0, 0, 3) at the end, at rest: the swing-up by a world-position term,
// from 0.1 rad
static void test_site_swing_up(void) {
  physData* d;
  physModel* m = load(&d, "models/pendulum_motor.xml");
  if (!m) return;
  physControlProblem* p = phys_control_make(m, 200, 300);
  p->fin.npoint = 1;
  p->fin.point[0] = (physPointCost){phys_name2id(m, "site", "tip"), {0, 0, 3}, {100, 100, 100}, 0, 0, 0, 0, 0};
  p->fin.wv[0] = 10;
  p->wu[0] = 1e-3;
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  d->qpos[0] = 0.1;   // hanging straight down the tip's distance to the top is stationary: no gradient
  CHECK(p->pointwork == NULL);
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_OK);
  CHECK(p->pointwork != NULL);   // the point term's store, made by the first linearization
  double qT = p->X[2 * 200];
  CHECK_MSG(fabs(fabs(qT) - M_PI) < 1e-2, "final angle %.9g", qT);
  printf("site swing-up: %d iterations (stop %d), cost %.9g, final angle %.9g\n", p->niter, (int)p->stop, p->cost, qT);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the point terms' gradient (phys_state_cost) against central differences in the tangent, on mixed.xml
// (free, ball, slide, hinge on one path) at a moving state: a site and a body, position and velocity, each
// with every weight, two of them relative to a moving reference point (ref); and the Gauss-Newton Hessian's velocity block, exact there (v_p is linear in qvel)
static void test_point_gradient(void) {
  physData* d;
  physModel* m = load(&d, "tests/data/mixed.xml");
  if (!m) return;
  int nv = m->nv, nq = m->nq, n2 = 2 * nv;
  physControlProblem* p = phys_control_make(m, 1, 1);
  physStateCost* c = &p->fin;
  int tipsite = phys_name2id(m, "site", "tipsite"), slider = phys_name2id(m, "body", "slider");
  int tip = phys_name2id(m, "body", "tip"), arm = phys_name2id(m, "body", "arm");
  c->npoint = 6;
  c->point[0] = (physPointCost){tipsite, {0.4, 0.1, 1.2}, {3, 2, 1}, 0, 1, 0, 0, 0};
  c->point[1] = (physPointCost){slider, {0.5, -0.2, 0.8}, {1, 2, 3}, 1, 0, 0, 0, 0};
  c->point[2] = (physPointCost){tip, {0.3, 0.2, -0.1}, {2, 1, 4}, 1, 1, 0, 0, 0};
  c->point[3] = (physPointCost){arm, {-0.2, 0.1, 0.3}, {1, 1, 1}, 1, 1, 0, 0, 0};
  // relative to a moving reference (issue 17): the site's position from the arm body's origin, and the tip's
  // velocity relative to the site's (residual Jacobian J - J_ref)
  c->point[4] = (physPointCost){tipsite, {0.1, -0.3, 0.2}, {2, 1, 3}, 0, 0, 1, arm, 1};
  c->point[5] = (physPointCost){tip, {0.2, 0.1, -0.2}, {1, 3, 2}, 1, 1, 1, tipsite, 0};
  // qpos weights on the slide and hinge only (the rotations' qpos terms: test_rotation_gradient)
  for (int i = 0; i < nv; i++) c->wq[i] = i >= nv - 2 ? 0.5 + 0.1 * i : 0, c->wv[i] = 0.2;
  phys_reset_data(m, d);
  const double q0[] = {0.1, -0.2, 1.1, 0.9, 0.2, -0.3, 0.25, 0.8, 0.3, 0.4, -0.33, 0.1, 0.7};
  CHECK(nq == 13);
  memcpy(d->qpos, q0, sizeof q0);
  for (int i = 0; i < nv; i++) d->qvel[i] = 0.7 * sin(1.3 * i + 0.4);
  double g[64], H[64 * 64], J0 = phys_state_cost(m, d, c, g, H), qs[16], vs[16];
  memcpy(qs, d->qpos, sizeof(double) * nq), memcpy(vs, d->qvel, sizeof(double) * nv);
  double err = 0, gmax = 0, herr = 0;
  const double h = 1e-6;
  for (int a = 0; a < n2; a++) {
    double Jpm[2], gv[2][64], dir[32] = {0};
    for (int s = 0; s < 2; s++) {
      memcpy(d->qpos, qs, sizeof(double) * nq), memcpy(d->qvel, vs, sizeof(double) * nv);
      if (a < nv) dir[a] = 1, phys_integrate_pos(m, d->qpos, dir, s ? -h : h);
      else d->qvel[a - nv] += s ? -h : h;
      Jpm[s] = phys_state_cost(m, d, c, gv[s], NULL);
    }
    double fd = (Jpm[0] - Jpm[1]) / (2 * h);
    err = fmax(err, fabs(fd - g[a]));
    gmax = fmax(gmax, fabs(g[a]));
    for (int b = nv; b < n2 && a >= nv; b++)   // the velocity block: differences of the gradient
      herr = fmax(herr, fabs((gv[0][b] - gv[1][b]) / (2 * h) - H[(size_t)a * n2 + b]));
  }
  printf("point terms: cost %.9g, max |gradient| %.3g, gradient error vs differences %.3g, Hessian vv error %.3g\n",
         J0, gmax, err, herr);
  CHECK(gmax > 1);
  CHECK_MSG(err < 1e-8 * gmax, "gradient error %.3g", err);
  CHECK_MSG(herr < 1e-6 * gmax, "Hessian vv error %.3g", herr);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the qpos terms on the rotation groups (issue 13): on mixed.xml (free, ball, slide, hinge) with every qpos
// and qvel weighted and the free joint's and the ball's rotations 2 rad from qref, phys_state_cost's gradient
// against central differences of the cost along tangent offsets q (+) delta, and its Gauss-Newton Hessian
// against R' W R, R the residual r = q (-) qref's Jacobian in delta by central differences. (The old model,
// gradient W r and Hessian W, is off by O(1) here.)
static void test_rotation_gradient(void) {
  physData* d;
  physModel* m = load(&d, "tests/data/mixed.xml");
  if (!m) return;
  int nv = m->nv, nq = m->nq, n2 = 2 * nv;
  CHECK(nq == 13 && nv == 11);
  physControlProblem* p = phys_control_make(m, 1, 1);
  physStateCost* c = &p->fin;
  const double qref[] = {0.1, -0.2, 1.1, 0.9, 0.2, -0.3, 0.25, 0.8, 0.3, 0.4, -0.33, 0.1, 0.7};
  memcpy(c->qref, qref, sizeof qref);
  for (int i = 0; i < nv; i++) c->wq[i] = 1 + 0.3 * i, c->wv[i] = 0.2 + 0.1 * i, c->vref[i] = 0.05 * i;
  // q = qref (+) r0: the free joint's rotation and the ball's by 2 rad about skew axes
  double r0[11] = {0.3, -0.1, 0.2, 2 * 0.48, 2 * -0.6, 2 * 0.64, 2 * -0.8, 2 * 0.36, 2 * 0.48, 0.15, -0.4};
  CHECK(fabs(r0[3] * r0[3] + r0[4] * r0[4] + r0[5] * r0[5] - 4) < 1e-12);
  CHECK(fabs(r0[6] * r0[6] + r0[7] * r0[7] + r0[8] * r0[8] - 4) < 1e-12);
  phys_reset_data(m, d);
  memcpy(d->qpos, qref, sizeof qref);
  phys_integrate_pos(m, d->qpos, r0, 1.0);
  for (int i = 0; i < nv; i++) d->qvel[i] = 0.7 * sin(1.3 * i + 0.4);
  double g[22], H[22 * 22], qs[13], vs[11], R[11 * 11], rp[2][11];
  double J0 = phys_state_cost(m, d, c, g, H);
  memcpy(qs, d->qpos, sizeof qs), memcpy(vs, d->qvel, sizeof vs);
  double gerr = 0, gmax = 0, herr = 0, hmax = 0, rot = 0;
  const double h = 1e-6;
  for (int a = 0; a < n2; a++) {
    double Jpm[2], dir[11] = {0};
    for (int s = 0; s < 2; s++) {
      memcpy(d->qpos, qs, sizeof qs), memcpy(d->qvel, vs, sizeof vs);
      if (a < nv) dir[a] = 1, phys_integrate_pos(m, d->qpos, dir, s ? -h : h);
      else d->qvel[a - nv] += s ? -h : h;
      Jpm[s] = phys_state_cost(m, d, c, NULL, NULL);
      if (a < nv) phys_difference_pos(m, rp[s], 1.0, qref, d->qpos);
    }
    double fd = (Jpm[0] - Jpm[1]) / (2 * h);
    gerr = fmax(gerr, fabs(fd - g[a]));
    gmax = fmax(gmax, fabs(g[a]));
    if (a >= 3 && a < 9) rot = fmax(rot, fabs(fd - c->wq[a] * r0[a]));   // vs the old W r
    for (int i = 0; i < nv && a < nv; i++) R[(size_t)i * nv + a] = (rp[0][i] - rp[1][i]) / (2 * h);
  }
  for (int a = 0; a < n2; a++)
    for (int b = 0; b < n2; b++) {
      double e = 0;   // the Gauss-Newton Hessian: R' W R on the qpos block, diag(wv) on the qvel block
      if (a < nv && b < nv)
        for (int i = 0; i < nv; i++) e += R[(size_t)i * nv + a] * c->wq[i] * R[(size_t)i * nv + b];
      else if (a == b) e = c->wv[a - nv];
      herr = fmax(herr, fabs(e - H[(size_t)a * n2 + b]));
      hmax = fmax(hmax, fabs(e));
    }
  printf("rotation terms: cost %.9g, max |gradient| %.3g, error vs differences %.3g (old W r off by %.3g), "
         "Gauss-Newton Hessian error %.3g (max %.3g)\n",
         J0, gmax, gerr, rot, herr, hmax);
  CHECK(gmax > 1 && rot > 0.1);
  CHECK_MSG(gerr < 1e-8 * gmax, "gradient error %.3g", gerr);
  CHECK_MSG(herr < 1e-8 * hmax, "Hessian error %.3g", herr);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// paper 001's swing-ups (examples/control): the cartpole and the double pendulum from hanging at rest

// DDP on the model at path from rest at qpos 0 over 300 steps with the costs of examples/control's task
// files: final 1/2 (100 |q - target|^2 + 10 |v|^2), effort 1e-3, and on the cartpole a running 0.1 on the
// cart's position; the model's control bounds. Returns the problem (caller frees) and the final state in xT
static physControlProblem* swing_up_task(const physModel* m, physData* d, const double* target, double* xT) {
  int T = 300, nq = m->nq;
  physControlProblem* p = phys_control_make(m, T, 300);
  for (int i = 0; i < nq; i++) {
    p->fin.qref[i] = p->run.qref[i] = target[i];
    p->fin.wq[i] = 100, p->fin.wv[i] = 10;
  }
  if (m->njnt > 0 && m->jnt_type[0] == PHYS_JNT_SLIDE) p->run.wq[0] = 0.1;   // the cart
  for (int j = 0; j < m->nu; j++) p->wu[j] = 1e-3;
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  CHECK_MSG(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
  memcpy(xT, p->X + (size_t)T * (nq + m->nv), sizeof(double) * (size_t)(nq + m->nv));
  return p;
}

// both reach upright at rest: angles within 1e-3 rad of the target, velocities below 1e-2, the cart within
// 1e-3 m of the origin; the controls within the bounds, which are active on the way (the swing-ups pump)
static void test_paper001_swing_ups(void) {
  const char* path[2] = {"models/cartpole.xml", "models/double_pendulum.xml"};
  const double target[2][2] = {{0, 3.14159265}, {3.14159265, 0}};
  for (int k = 0; k < 2; k++) {
    physData* d;
    physModel* m = load(&d, path[k]);
    if (!m) continue;
    double xT[4];
    physControlProblem* p = swing_up_task(m, d, target[k], xT);
    for (int i = 0; i < 2; i++) {
      CHECK_MSG(fabs(xT[i] - target[k][i]) < 1e-3, "%s q%d %.9g", path[k], i, xT[i]);
      CHECK_MSG(fabs(xT[2 + i]) < 1e-2, "%s v%d %.9g", path[k], i, xT[2 + i]);
    }
    CHECK(phys_control_violation(p, p->U) == 0);
    int sat = 0;
    for (int t = 0; t < p->T * m->nu; t++) sat += p->U[t] == p->lo[t % m->nu] || p->U[t] == p->hi[t % m->nu];
    CHECK(sat > 0);
    printf("%s: %d iterations (stop %d), cost %.9g, final q (%.6f, %.6f), v (%.2g, %.2g), %d controls at a bound\n",
           path[k], p->niter, (int)p->stop, p->cost, xT[0], xT[1], xT[2], xT[3], sat);
    phys_control_free(p);
    phys_free_data(d);
    phys_free_model(m);
  }
}

// phys_ddp_solve's parts (bench/bench_control.c): one iteration assembled from phys_ddp_linearize (or the
// Jacobians set one by one by phys_ddp_set_jacobian), phys_ddp_backward and phys_ddp_forward (or a rollout
// by phys_ddp_policy and phys_control_stage_cost) gives phys_ddp_solve's first iteration bit for bit
static void test_parts(void) {
  physData* d;
  physModel* m = load(&d, "models/cartpole.xml");
  if (!m) return;
  int T = 100, nq = m->nq, nv = m->nv, nu = m->nu, ns = nq + nv;
  physControlProblem* p[3];
  for (int k = 0; k < 3; k++) {
    p[k] = phys_control_make(m, T, 1);
    p[k]->fin.qref[1] = 3.14159265;
    p[k]->fin.wq[1] = 100, p[k]->fin.wv[1] = 10, p[k]->run.wq[0] = 0.1, p[k]->wu[0] = 1e-3;
  }
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  CHECK(phys_ddp_solve(p[0], d, NULL, NULL, &log) == PHYS_OK && p[0]->niter == 1);
  double alpha = p[0]->iter[1].alpha, dV[2], ff;
  CHECK(alpha > 0);
  // the library's parts
  double J0 = phys_control_rollout(p[1], d, p[1]->U, p[1]->X);
  phys_reset_data(m, d);
  CHECK(J0 == p[0]->iter[0].cost);
  CHECK(phys_ddp_linearize(p[1], d, &log) == PHYS_OK);
  CHECK(phys_ddp_backward(p[1], 0, dV, &ff) == 1);
  double* Un = calloc((size_t)T * nu, sizeof(double));
  double* Xn = calloc((size_t)(T + 1) * ns, sizeof(double));
  double J1 = phys_ddp_forward(p[1], d, alpha, Un, Xn);
  CHECK(J1 == p[0]->cost && memcmp(Un, p[0]->U, sizeof(double) * (size_t)T * nu) == 0);
  CHECK(memcmp(Xn, p[0]->X, sizeof(double) * (size_t)(T + 1) * ns) == 0);
  CHECK(d->qpos[0] == 0 && d->qpos[1] == 0 && d->time == 0);   // d restored
  // the external-dynamics route: Jacobians set step by step, the rollout driven from outside
  phys_control_rollout(p[2], d, p[2]->U, p[2]->X);
  phys_reset_data(m, d);
  double A[16], B[4], un[1], xn[4], J2 = 0;
  for (int t = 0; t < T; t++) {
    d->ctrl[0] = p[2]->U[t];
    CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
    phys_ddp_set_jacobian(p[2], t, A, B);
    phys_step(m, d);
  }
  phys_reset_data(m, d);
  CHECK(phys_ddp_backward(p[2], 0, dV, &ff) == 1);
  double* U2 = calloc((size_t)T * nu, sizeof(double));
  for (int t = 0; t < T; t++) {
    memcpy(xn, d->qpos, sizeof(double) * (size_t)nq);
    memcpy(xn + nq, d->qvel, sizeof(double) * (size_t)nv);
    phys_ddp_policy(p[2], t, alpha, xn, U2, un);
    U2[t] = un[0];
    J2 += phys_control_stage_cost(p[2], t, d->qpos, d->qvel, U2);
    d->ctrl[0] = un[0];
    phys_step(m, d);
  }
  J2 += phys_control_stage_cost(p[2], T, d->qpos, d->qvel, U2);
  CHECK_MSG(J2 == p[0]->cost, "%.17g vs %.17g", J2, p[0]->cost);
  CHECK(memcmp(U2, p[0]->U, sizeof(double) * (size_t)T * nu) == 0);
  free(Un), free(Xn), free(U2);
  for (int k = 0; k < 3; k++) phys_control_free(p[k]);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// the backward pass against a plain dense one

// the backward pass as first written, dense on the augmented state (nx = 2nv + nu): Q's derivatives by
// triple loops, K by one Cholesky solve per column, Vxx = Qxx + K' Quu K + K' Qux + Qux' K symmetrized by
// averaging. The cost terms as control.h states them (state terms with targets, effort, rate; no point
// terms). Regularization mu on the controls (Quu + mu I) or, with p->reg_state, on the state: the box QP and
// the feedback on Quu, Qux formed with Vxx + mu I in place of Vxx (Tassa, Erez, Todorov 2012, eq. 10), the
// value function from the plain ones. K (T x nu x nx), k (T x nu, warm start in, result out); returns 0 if the
// regularized Quu is not positive definite
static int ref_backward(const physControlProblem* p, const double* A, const double* B, double mu, double* K,
                        double* k, double dV[2], double* ff) {
  const physModel* m = p->m;
  int nv = m->nv, nq = m->nq, nu = p->nu, nx = p->nx, n2 = 2 * nv, T = p->T;
  double h = m->opt.timestep;
  size_t nxx = (size_t)nx * nx;
  double *Vx = calloc(nx, sizeof(double)), *Vxx = calloc(nxx, sizeof(double)), *Qx = calloc(nx, sizeof(double));
  double *Qxx = calloc(nxx, sizeof(double)), *Qu = calloc(nu, sizeof(double)), *Quu = calloc((size_t)nu * nu, 8);
  double *Qux = calloc((size_t)nu * nx, 8), *H = calloc((size_t)nu * nu, 8), *L = calloc((size_t)nu * nu, 8);
  double *lo = calloc(nu, 8), *hi = calloc(nu, 8), *sc = calloc(3 * (size_t)nu, 8), *col = calloc(nu, 8);
  double *r = calloc(nv, 8), *VA = calloc(nxx, 8), *VB = calloc((size_t)nx * nu, 8), *W = calloc((size_t)nu * nx, 8);
  double* Qs = calloc((size_t)nu * nx, 8);
  int* fr = calloc(nu, sizeof(int));
  int ok = 1;
  dV[0] = dV[1] = 0, *ff = 0;
  for (int t = T; t >= 0 && ok; t--) {
    const physStateCost* c = t == T ? &p->fin : &p->run;
    const double* x = p->X + (size_t)t * (nq + nv);
    double s = t == T ? 1 : h;
    memset(Qx, 0, sizeof(double) * nx), memset(Qxx, 0, sizeof(double) * nxx);
    phys_difference_pos(m, r, 1.0, c->qref, x);
    for (int i = 0; i < nv; i++) {
      Qx[i] = s * c->wq[i] * r[i], Qx[nv + i] = s * c->wv[i] * (x[nq + i] - c->vref[i]);
      Qxx[i * nx + i] = s * c->wq[i], Qxx[(nv + i) * nx + nv + i] = s * c->wv[i];
    }
    if (t == T) {
      memcpy(Vx, Qx, sizeof(double) * nx), memcpy(Vxx, Qxx, sizeof(double) * nxx);
      continue;
    }
    const double *u = p->U + (size_t)t * nu, *up = t ? u - nu : p->uprev;
    memset(Quu, 0, sizeof(double) * nu * nu), memset(Qux, 0, sizeof(double) * nu * nx);
    for (int j = 0; j < nu; j++) {
      double du = u[j] - up[j];
      Qu[j] = h * (p->wu[j] * u[j] + p->wdu[j] * du);
      Quu[j * nu + j] = h * (p->wu[j] + p->wdu[j]);
      if (t > 0) Qx[n2 + j] = -h * p->wdu[j] * du, Qxx[(n2 + j) * nx + n2 + j] = h * p->wdu[j],
                 Qux[j * nx + n2 + j] = -h * p->wdu[j];
    }
    // the augmented Jacobians: A~ = [A 0; 0 0], B~ = [B; I]
    const double *At = A + (size_t)t * n2 * n2, *Bt = B + (size_t)t * n2 * nu;
#define AA(i, j) ((i) < n2 && (j) < n2 ? At[(i) * n2 + (j)] : 0.0)
#define BB(i, j) ((i) < n2 ? Bt[(i) * nu + (j)] : (i) - n2 == (j) ? 1.0 : 0.0)
    for (int i = 0; i < nx; i++) {
      for (int l = 0; l < nx; l++) Qx[i] += AA(l, i) * Vx[l];
      for (int j = 0; j < nx; j++) {
        VA[i * nx + j] = 0;
        for (int l = 0; l < nx; l++) VA[i * nx + j] += Vxx[i * nx + l] * AA(l, j);
      }
      for (int j = 0; j < nu; j++) {
        VB[i * nu + j] = 0;
        for (int l = 0; l < nx; l++) VB[i * nu + j] += Vxx[i * nx + l] * BB(l, j);
      }
    }
    for (int i = 0; i < nx; i++)
      for (int j = 0; j < nx; j++)
        for (int l = 0; l < nx; l++) Qxx[i * nx + j] += AA(l, i) * VA[l * nx + j];
    for (int i = 0; i < nu; i++) {
      for (int l = 0; l < nx; l++) Qu[i] += BB(l, i) * Vx[l];
      for (int j = 0; j < nu; j++)
        for (int l = 0; l < nx; l++) Quu[i * nu + j] += BB(l, i) * VB[l * nu + j];
      for (int j = 0; j < nx; j++)
        for (int l = 0; l < nx; l++) Qux[i * nx + j] += BB(l, i) * VA[l * nx + j];
    }
    for (int i = 0; i < nu * nu; i++) H[i] = Quu[i];
    for (int i = 0; i < nu * nx; i++) Qs[i] = Qux[i];
    for (int i = 0; i < nu; i++) {
      if (!p->reg_state) H[i * nu + i] += mu;
      for (int j = 0; j < nu && p->reg_state; j++)
        for (int l = 0; l < nx; l++) H[i * nu + j] += BB(l, i) * mu * BB(l, j);
      for (int j = 0; j < nx && p->reg_state; j++)
        for (int l = 0; l < nx; l++) Qs[i * nx + j] += BB(l, i) * mu * AA(l, j);
    }
#undef AA
#undef BB
    for (int j = 0; j < nu; j++) lo[j] = p->lo[j] - u[j], hi[j] = p->hi[j] - u[j];
    double *kt = k + (size_t)t * nu, *Kt = K + (size_t)t * nu * nx;
    int nf = phys_box_qp(nu, H, Qu, lo, hi, kt, fr, L, sc);
    if (nf < 0) {
      ok = 0;
      break;
    }
    memset(Kt, 0, sizeof(double) * nu * nx);
    for (int j = 0; j < nx && nf > 0; j++) {
      int a = 0;
      for (int i = 0; i < nu; i++)
        if (fr[i]) col[a++] = Qs[i * nx + j];
      phys_chol_solve(col, L, col, nf);
      a = 0;
      for (int i = 0; i < nu; i++)
        if (fr[i]) Kt[i * nx + j] = -col[a++];
    }
    double kmax = 0;
    for (int j = 0; j < nu; j++) {
      double qk = 0;
      for (int i = 0; i < nu; i++) qk += Quu[j * nu + i] * kt[i];
      dV[0] += kt[j] * Qu[j], dV[1] += 0.5 * kt[j] * qk;
      kmax = fmax(kmax, fabs(kt[j]) / (1 + fabs(u[j])));
      col[j] = qk + Qu[j];
    }
    *ff += kmax / T;
    for (int i = 0; i < nx; i++) {
      Vx[i] = Qx[i];
      for (int j = 0; j < nu; j++) Vx[i] += Kt[j * nx + i] * col[j] + Qux[j * nx + i] * kt[j];
    }
    for (int j = 0; j < nu; j++)   // W = Quu K + Qux
      for (int c2 = 0; c2 < nx; c2++) {
        W[j * nx + c2] = Qux[j * nx + c2];
        for (int l = 0; l < nu; l++) W[j * nx + c2] += Quu[j * nu + l] * Kt[l * nx + c2];
      }
    for (int i = 0; i < nx; i++)
      for (int j = 0; j < nx; j++) {
        double v = Qxx[i * nx + j];
        for (int l = 0; l < nu; l++) v += Kt[l * nx + i] * W[l * nx + j] + Qux[l * nx + i] * Kt[l * nx + j];
        Vxx[i * nx + j] = v;
      }
    for (int i = 0; i < nx; i++)
      for (int j = 0; j < i; j++) Vxx[i * nx + j] = Vxx[j * nx + i] = 0.5 * (Vxx[i * nx + j] + Vxx[j * nx + i]);
  }
  free(Vx), free(Vxx), free(Qx), free(Qxx), free(Qu), free(Quu), free(Qux), free(H), free(L), free(lo), free(hi);
  free(sc), free(col), free(r), free(VA), free(VB), free(W), free(fr), free(Qs);
  return ok;
}

// a chain of n hinges, motors on the first nm (the humanoid's sizes: 27 dofs, 21 motors), written to path
static void write_chain(const char* path, int n, int nm) {
  FILE* f = fopen(path, "w");
  fprintf(f, "<mujoco><worldbody>\n");
  for (int i = 0; i < n; i++)
    fprintf(f, "<body pos='0 0 0.1'><joint name='j%d' type='hinge' axis='%d %d %d'/>"
               "<geom type='capsule' fromto='0 0 0 0 0 0.1' size='0.02'/>\n", i, i % 3 == 0, i % 3 == 1, i % 3 == 2);
  for (int i = 0; i < n; i++) fprintf(f, "</body>");
  fprintf(f, "\n</worldbody><actuator>\n");
  for (int i = 0; i < nm; i++) fprintf(f, "<motor joint='j%d'/>\n", i);
  fprintf(f, "</actuator></mujoco>\n");
  fclose(f);
}

// a uniform number in [a, b) from the 64-bit LCG state s
static double uniform(unsigned long long* s, double a, double b) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return a + (b - a) * (double)(*s >> 11) / 9007199254740992.0;
}

// the library's backward pass (blocked products, symmetric triangles, free rows only) equals the dense
// reference to 1e-12 relative on random problems of the humanoid's sizes (nv 27, nu 21, T 20): random
// Jacobians A = I + noise, B, states, controls, weights and targets; some controls clamped by tight bounds;
// without the rate term (na = 2nv) at mu 0, with it (na = nx) at mu 1e-3, and with the state regularization
// at mu 1
static void test_backward_reference(void) {
  char path[] = "/tmp/physid_test_ddp_chainXXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  write_chain(path, 27, 21);
  physData* d;
  physModel* m = load(&d, path);
  remove(path);
  if (!m) return;
  int T = 20, nv = m->nv, nq = m->nq, nu = m->nu, n2 = 2 * nv;
  CHECK(nv == 27 && nu == 21);
  for (int cs = 0; cs < 3; cs++) {
    int rate = cs > 0;
    unsigned long long seed = 12345 + (unsigned long long)cs;
    physControlProblem* p = phys_control_make(m, T, 1);
    p->reg_state = cs == 2;
    int nx = p->nx;
    double *A = malloc(sizeof(double) * T * n2 * n2), *B = malloc(sizeof(double) * T * n2 * nu);
    for (int t = 0; t < T; t++) {
      for (int i = 0; i < n2 * n2; i++) A[t * n2 * n2 + i] = (i % (n2 + 1) == 0) + uniform(&seed, -0.1, 0.1);
      for (int i = 0; i < n2 * nu; i++) B[t * n2 * nu + i] = uniform(&seed, -0.05, 0.05);
      phys_ddp_set_jacobian(p, t, A + t * n2 * n2, B + t * n2 * nu);
    }
    for (int i = 0; i < (T + 1) * (nq + nv); i++) p->X[i] = uniform(&seed, -1, 1);
    for (int i = 0; i < T * nu; i++) p->U[i] = uniform(&seed, -0.5, 0.5);
    for (int j = 0; j < nu; j++) {
      p->wu[j] = uniform(&seed, 0.1, 1), p->wdu[j] = rate ? uniform(&seed, 0.1, 1) : 0;
      p->uprev[j] = uniform(&seed, -0.5, 0.5);
      p->lo[j] = j % 3 == 0 ? -0.55 : -INFINITY, p->hi[j] = j % 3 == 0 ? 0.55 : INFINITY;
    }
    physStateCost* c[2] = {&p->run, &p->fin};
    for (int s = 0; s < 2; s++)
      for (int i = 0; i < nv; i++) {
        c[s]->qref[i] = uniform(&seed, -1, 1), c[s]->vref[i] = uniform(&seed, -1, 1);
        c[s]->wq[i] = uniform(&seed, 0, 10) * (s ? 10 : 1), c[s]->wv[i] = uniform(&seed, 0, 1) * (s ? 10 : 1);
      }
    double mu = cs == 0 ? 0 : cs == 1 ? 1e-3 : 1, dV[2], ff, dVr[2], ffr;
    double *K = calloc((size_t)T * nu * nx, 8), *k = calloc((size_t)T * nu, 8), *Kt = calloc((size_t)nu * nx, 8);
    double kt[64];
    CHECK(ref_backward(p, A, B, mu, K, k, dVr, &ffr) == 1);
    CHECK(phys_ddp_backward(p, mu, dV, &ff) == 1);
    CHECK_REL(dV[0], dVr[0], 1e-12, 0);
    CHECK_REL(dV[1], dVr[1], 1e-12, 0);
    CHECK_REL(ff, ffr, 1e-12, 0);
    int clamped = 0;
    double worst = 0;
    for (int t = 0; t < T; t++) {
      phys_ddp_gains(p, t, Kt, kt);
      double Kmax = 0, kmax = 0, dK = 0, dk = 0;
      for (int i = 0; i < nu * nx; i++)
        Kmax = fmax(Kmax, fabs(K[t * nu * nx + i])), dK = fmax(dK, fabs(Kt[i] - K[t * nu * nx + i]));
      for (int j = 0; j < nu; j++) kmax = fmax(kmax, fabs(k[t * nu + j])), dk = fmax(dk, fabs(kt[j] - k[t * nu + j]));
      CHECK_MSG(dK <= 1e-12 * Kmax && dk <= 1e-12 * kmax, "rate %d step %d: |dK| %g of %g, |dk| %g of %g", rate,
                t, dK, Kmax, dk, kmax);
      worst = fmax(worst, fmax(dK / Kmax, dk / kmax));
      for (int j = 0; j < nu; j++) {
        int zero = 1;
        for (int i = 0; i < nx; i++) zero &= K[(t * nu + j) * nx + i] == 0;
        clamped += zero;
        if (zero) CHECK(kt[j] == p->lo[j] - p->U[t * nu + j] || kt[j] == p->hi[j] - p->U[t * nu + j]);
      }
    }
    CHECK_MSG(clamped > 0 && clamped < T * nu / 3, "%d clamped rows", clamped);   // both kinds of rows
    CHECK(p->pointwork == NULL);   // no point terms: no room for their Hessians
    printf("backward pass vs the dense reference (rate %d, mu %g on the %s): gains within %.2g relative, dV %.17g / "
           "%.17g, %d of %d rows clamped\n", rate, mu, p->reg_state ? "state" : "controls", worst, dV[0], dVr[0],
           clamped, T * nu);
    free(A), free(B), free(K), free(k), free(Kt);
    phys_control_free(p);
  }
  // the workspace grows per step by A, B, K, k, a trial state and control only (the point terms' Hessians,
  // 4 nv^2 a step, are not reserved with the problem)
  physControlProblem *p1 = phys_control_make(m, T, 1), *p2 = phys_control_make(m, T + 1, 1);
  size_t nx = (size_t)p1->nx, perstep = nx * nx + 2 * nx * nu + 2 * (size_t)nu + (size_t)(nq + nv);
  CHECK_MSG(p2->nwork - p1->nwork == perstep, "%zu doubles a step, expected %zu", p2->nwork - p1->nwork, perstep);
  phys_control_free(p1), phys_control_free(p2);
  phys_free_data(d);
  phys_free_model(m);
}

// the drone on the ground, T = 100 steps, final height 1 m and vertical velocity 0 (examples/drone's task):
// DDP's final cost, iterations, stop and final height with and without the complementarity-aware Jacobians
static double drone(int aware, int stall, double* J, int* niter, physDdpStop* stop, double* z) {
  physModel* m;
  physData* d;
  physControlProblem* p = drone_task(aware, 100, &m, &d);
  int T = p->T;
  p->stall = stall, p->stall_tol = 0.5;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_OK);
  CHECK(phys_control_violation(p, p->U) == 0);
  for (int k = 1; k <= p->niter; k++) CHECK(p->iter[k].cost < p->iter[k - 1].cost);
  *niter = p->niter, *stop = p->stop, *z = p->X[(size_t)T * (m->nq + m->nv) + 2];
  for (int k = 0; k <= p->niter; k++) J[k] = p->iter[k].cost;
  printf("  drone, ddp, %s Jacobians%s: cost %.6g -> %.6g in %d iterations (stop %d), final height %.4f m\n",
         aware ? "complementarity-aware" : "exact lcp", stall ? " (stall rule)" : "", J[0], p->cost, *niter,
         (int)*stop, *z);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
  return J[*niter];
}

static void test_drone_contrast(void) {
  int n0, n1, n2;
  physDdpStop s0, s1, s2;
  double C0[101], C1[101], C2[101], z0, z1, z2;
  double J0 = drone(0, 0, C0, &n0, &s0, &z0), J1 = drone(1, 0, C1, &n1, &s1, &z1);
  CHECK(C0[0] == C1[0]);
  // exact: B = 0 at rest, no feedforward, no step
  CHECK(n0 == 0 && s0 == PHYS_DDP_FEEDFORWARD && J0 == C0[0]);
  CHECK(fabs(z0 - 0.05) < 1e-9);
  // complementarity-aware: takes off
  CHECK(J1 < 0.01 * C1[0]);
  CHECK(fabs(z1 - 1.0) < 0.05);
  // the stall rule (K = 2, stall_tol 0.5): the same iterates, stopped at the first k >= 2 where the cost fell by
  // less than half over the last two
  drone(1, 2, C2, &n2, &s2, &z2);
  CHECK(s2 == PHYS_DDP_STALL && n2 >= 2 && n2 < n1);
  for (int k = 0; k <= n2; k++) CHECK(C2[k] == C1[k]);
  for (int k = 2; k <= n2; k++) CHECK((C2[k - 2] - C2[k] < 0.5 * C2[k - 2]) == (k == n2));
}

int main(void) {
  test_drone_contrast();
  test_backward_reference();
  test_point_gradient();
  test_rotation_gradient();
  test_box_qp();
  test_lqr();
  test_rate_optimality();
  test_mixed(0);
  test_mixed(1);
  test_swing_up();
  test_site_swing_up();
  test_paper001_swing_ups();
  test_parts();
  return test_done();
}

// test_shooting.c - single shooting (src/control/shooting.c): the cost gradient dJ/dU by the rollout's VJPs
// against central differences of phys_control_rollout (pendulum with every cost term; the drone falling onto
// the floor with its lcp contacts), L-BFGS-B and Adam on the pendulum swing-up inside the bounds, and paper
// 001's drone contrast: resting on the ground the exact lcp gradient is zero and Adam stays at its start,
// with the complementarity-aware gradient (PHYS_GRAD_COMPLEMENTARITY) it takes off; Adam rejects a step to a
// non-finite rollout; the gradient of a rollout that goes non-finite is J = +inf (a rejected point), never NaN.
// A model with activations (issue 15 item 2, tests/data/actuator_dynamics.xml: integrator and filters, act in
// the state): the gradient against differences (act restored with the state), L-BFGS-B lowers the cost and
// leaves d at its state, act included; DDP and multiple shooting refuse it (PHYS_ERR_MODEL, message).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ms.h"
#include "shooting.h"
#include "step.h"
#include "test.h"
#include "drone_task.h"

// the unknowns: T nu controls, then the design's theta (p->design)
static size_t nvar(const physControlProblem* p) {
  return (size_t)p->T * p->nu + (p->design ? (size_t)p->design->ntheta : 0);
}

// J at the unknowns V (controls, then the design, set into the model first)
static double cost_at(physControlProblem* p, physData* d, const double* V) {
  if (p->design) CHECK(phys_param_set(p->design, p->design_model, V + (size_t)p->T * p->nu) == PHYS_OK);
  return phys_control_rollout(p, d, V, NULL);
}

// the largest |G - central differences of J| / max(1, |G|) over every unknown, step h
static double fd_error(physControlProblem* p, physData* d, const double* U, const double* G, double h) {
  size_t n = nvar(p);
  double* V = malloc(sizeof(double) * n);
  double* x0 = malloc(sizeof(double) * phys_state_size(p->m));   // qpos, qvel, act, time
  phys_state_save(p->m, d, x0);
  double err = 0;
  for (size_t i = 0; i < n; i++) {
    double J[2];
    for (int s = 0; s < 2; s++) {
      memcpy(V, U, sizeof(double) * n);
      V[i] += s ? -h : h;
      phys_state_load(p->m, d, x0);
      d->ncon = 0;
      J[s] = cost_at(p, d, V);
    }
    double fd = (J[0] - J[1]) / (2 * h);
    err = fmax(err, fabs(G[i] - fd) / fmax(1, fabs(G[i])));
  }
  phys_state_load(p->m, d, x0);
  d->ncon = 0;
  cost_at(p, d, U);   // the model back at U's design
  phys_state_load(p->m, d, x0);
  d->ncon = 0;
  free(V);
  free(x0);
  return err;
}

// dJ/dU (and dJ/dtheta of a design: U then holds theta after the controls) of p at U from d's state, checked
// against differences; returns the largest |G|
static double check_gradient(physControlProblem* p, physData* d, const double* U, double h, double tol) {
  size_t n = nvar(p);
  double* G = malloc(sizeof(double) * n);
  double* work = malloc(sizeof(double) * phys_control_grad_worksize(p));
  physStatus st;
  physLog log;
  memset(&log, 0, sizeof log);
  double* x0 = malloc(sizeof(double) * phys_state_size(p->m)), *x1 = malloc(sizeof(double) * phys_state_size(p->m));
  phys_state_save(p->m, d, x0);
  double J = phys_control_grad(p, d, U, G, work, &st, &log);
  phys_state_save(p->m, d, x1);
  CHECK(memcmp(x0, x1, sizeof(double) * phys_state_size(p->m)) == 0);   // d back at its state (act included)
  double J2 = phys_control_rollout(p, d, U, p->X);
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  CHECK(J == J2);   // the same value as phys_control_rollout's
  phys_state_load(p->m, d, x0);   // back to the initial state
  d->ncon = 0;
  free(x0), free(x1);
  double gmax = 0;
  for (size_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(G[i]));
  double err = fd_error(p, d, U, G, h);
  printf("  gradient of J = %.6g: max |G| %.3g, max error vs differences %.2g\n", J, gmax, err);
  CHECK(err < tol);
  free(G);
  free(work);
  return gmax;
}

// the pendulum with a running qpos/qvel cost and a site velocity term, final site position and velocity
// terms, effort and rate, at a wavy U
static void test_gradient_pendulum(void) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  int T = 40;
  physControlProblem* p = phys_control_make(m, T, 0);
  p->run.qref[0] = 1.0, p->run.wq[0] = 3, p->run.wv[0] = 0.5;
  int tip = phys_name2id(m, "site", "tip");   // the body's origin is on the hinge: the site moves
  p->run.npoint = 1;
  p->run.point[0] = (physPointCost){tip, {0.2, -0.1, 0.4}, {1, 2, 3}, 0, 1, 0, 0, 0};
  p->fin.npoint = 2;
  p->fin.point[0] = (physPointCost){phys_name2id(m, "site", "tip"), {0.3, 0, 2.5}, {10, 1, 20}, 0, 0, 0, 0, 0};
  p->fin.point[1] = (physPointCost){tip, {0.5, 0, -1}, {4, 1, 2}, 0, 1, 0, 0, 0};
  p->fin.wv[0] = 2;
  p->wu[0] = 0.1, p->wdu[0] = 5, p->uprev[0] = 0.7;
  d->qpos[0] = 0.3;
  for (int t = 0; t < T; t++) p->U[t] = 2 * sin(0.3 * t) + 1;
  check_gradient(p, d, p->U, 1e-6, 1e-6);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the drone dropped from 0.15 m onto the floor (lcp contacts from about step 10) with uneven thrust; the
// gradient with and without the complementarity-aware reverse mode (away from contact-mode changes the two
// agree with the differences only where the exact one is taken: checked for the exact mode)
static void test_gradient_contacts(void) {
  physModel* m = phys_load("models/drone.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  int T = 30;
  physControlProblem* p = phys_control_make(m, T, 0);
  p->fin.qref[2] = 1.0, p->fin.wq[2] = 10, p->fin.wq[0] = 1, p->fin.wq[3] = 2;
  p->run.wv[2] = 0.1;
  p->fin.npoint = 1;
  p->fin.point[0] = (physPointCost){phys_name2id(m, "site", "centre"), {0.1, 0, 0.5}, {1, 1, 1}, 0, 0, 0, 0, 0};
  p->wu[0] = p->wu[1] = 0.01;
  phys_reset_keyframe(m, d, 0);
  d->qpos[2] = 0.15;
  for (int t = 0; t < T; t++)
    for (int j = 0; j < 4; j++) p->U[t * 4 + j] = 1.0 + 0.3 * j + 0.2 * sin(0.5 * t + j);
  double gmax = check_gradient(p, d, p->U, 1e-6, 1e-5);
  CHECK(gmax > 1e-3);
  // at rest on the ground with thrust below the weight the contacts clamp: exact gradient zero
  phys_reset_keyframe(m, d, 0);
  p->wu[0] = p->wu[1] = 0;
  for (int i = 0; i < T * 4; i++) p->U[i] = 1.0;
  CHECK(check_gradient(p, d, p->U, 1e-6, 1e-5) < 1e-12);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// activations: the arm and puck of tests/data/actuator_dynamics.xml from its keyframe (act set), the hinges
// driven toward targets through the integrator and filters for 30 steps: the gradient against differences,
// L-BFGS-B lowers the cost and leaves d at its state (act included), DDP and multiple shooting refuse
static void test_act(void) {
  physModel* m = phys_load("tests/data/actuator_dynamics.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  m->opt.gravity[2] = 0;   // (the puck would fall away: the targets are the arm's)
  int T = 30;
  physControlProblem* p = phys_control_make(m, T, 40);
  p->run.qref[0] = 0.2, p->run.wq[0] = 5, p->run.qref[1] = 0.5, p->run.wq[1] = 5, p->run.qref[2] = -0.3;
  p->run.wq[2] = 5, p->fin.qref[1] = 0.5, p->fin.wq[1] = 50, p->run.wv[1] = 0.1;
  for (int j = 0; j < m->nu; j++) p->wu[j] = 0.01;
  phys_reset_keyframe(m, d, 0);
  CHECK(m->na == 6 && d->act[0] == 0.1);
  for (int t = 0; t < T; t++)
    for (int j = 0; j < m->nu; j++) p->U[t * m->nu + j] = 0.3 * sin(0.2 * t + j);
  double gmax = check_gradient(p, d, p->U, 1e-6, 1e-6);
  CHECK(gmax > 1e-3);
  double* x0 = malloc(sizeof(double) * phys_state_size(m)), *x1 = malloc(sizeof(double) * phys_state_size(m));
  phys_state_save(m, d, x0);
  physShootOptions o;
  phys_shooting_defaults(&o);
  physLog log;
  memset(&log, 0, sizeof log);
  double J0 = phys_control_rollout(p, d, p->U, NULL);
  phys_state_load(m, d, x0);
  CHECK_MSG(phys_shooting_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
  phys_state_save(m, d, x1);
  CHECK(memcmp(x0, x1, sizeof(double) * phys_state_size(m)) == 0);
  printf("  activations (na %d): lbfgsb cost %.6g -> %.6g in %d iterations\n", m->na, J0, p->cost, p->niter);
  CHECK(p->niter >= 1 && p->iter[0].cost == J0 && p->cost < J0);
  for (int k = 1; k <= p->niter; k++) CHECK(p->iter[k].cost <= p->iter[k - 1].cost);
  CHECK(phys_ddp_solve(p, d, NULL, NULL, &log) == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(log.error, "ddp: the model has actuators with dynamics (6 activations") != NULL, "%s", log.error);
  physMsOptions mo = phys_ms_defaults();
  physMsResult res;
  memset(&res, 0, sizeof res);
  memset(&log, 0, sizeof log);
  CHECK(phys_ms_solve(p, d, &mo, &res, NULL, NULL, &log) == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(log.error, "ms: the model has actuators with dynamics") != NULL, "%s", log.error);
  free(x0), free(x1);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the pendulum swing-up of docs/cli.md with |u| <= 10 (a bound of 3 leaves single shooting from u = 0 in a local
// minimum at 1.34 rad: 162.3, L-BFGS-B and Adam alike) by a method: returns the final cost, checks the bounds
static double swing_up(physShootMethod method, int maxiter, double* J0, double* angle) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  physControlProblem* p = phys_control_make(m, 200, maxiter);
  p->fin.qref[0] = 3.14159265, p->fin.wq[0] = 100, p->fin.wv[0] = 10, p->wu[0] = 1e-3;
  p->lo[0] = -10, p->hi[0] = 10;
  physShootOptions o;
  phys_shooting_defaults(&o);
  o.method = method;
  physLog log;
  memset(&log, 0, sizeof log);
  *J0 = phys_control_rollout(p, d, p->U, NULL);
  phys_reset_data(m, d);
  CHECK(phys_shooting_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK);
  CHECK(phys_control_violation(p, p->U) == 0);
  CHECK(p->niter >= 1 && p->iter[0].cost == *J0);
  for (int k = 1; k <= p->niter; k++) CHECK(p->iter[k].cost <= p->iter[k - 1].cost);
  CHECK(p->cost == p->iter[p->niter].cost);
  CHECK(d->qpos[0] == 0 && d->time == 0);   // d back at the initial state
  *angle = p->X[(size_t)200 * 2];
  double J = p->cost;
  printf("  %s: cost %.6g -> %.6g in %d iterations (stop %d), final angle %.6f\n",
         method == PHYS_SHOOT_ADAM ? "adam" : "lbfgsb", *J0, J, p->niter, (int)p->stop, *angle);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
  return J;
}

static void test_swing_up(void) {
  double J0, angle;
  double J = swing_up(PHYS_SHOOT_LBFGSB, 300, &J0, &angle);
  CHECK(J < 1e-2 * J0);
  CHECK(fabs(angle - M_PI) < 0.05);
  J = swing_up(PHYS_SHOOT_ADAM, 300, &J0, &angle);
  CHECK(J < 0.2 * J0);
}

// the drone on the ground, T steps, final height 1 m: L-BFGS-B's final cost and iterations with and without
// the complementarity-aware gradient
static double drone(physShootMethod method, int aware, int* niter, physDdpStop* stop, double* J0, double* z) {
  physModel* m;
  physData* d;
  physControlProblem* p = drone_task(aware, 100, &m, &d);
  int T = p->T;
  physShootOptions o;
  phys_shooting_defaults(&o);
  o.method = method, o.lr = 0.1;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK(phys_shooting_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK);
  *niter = p->niter, *stop = p->stop, *J0 = p->iter[0].cost, *z = p->X[(size_t)T * (m->nq + m->nv) + 2];
  double J = p->cost;
  printf("  drone, %s, %s gradient: cost %.6g -> %.6g in %d iterations (stop %d), final height %.4f m\n",
         method == PHYS_SHOOT_ADAM ? "adam" : "lbfgsb", aware ? "complementarity-aware" : "exact lcp", *J0, J, *niter, (int)*stop, *z);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
  return J;
}

static void test_drone_contrast(void) {
  int n0, n1;
  physDdpStop s0, s1;
  double J00, J01, z0, z1;
  double J0 = drone(PHYS_SHOOT_ADAM, 0, &n0, &s0, &J00, &z0), J1 = drone(PHYS_SHOOT_ADAM, 1, &n1, &s1, &J01, &z1);
  CHECK(J00 == J01);
  // exact gradients: zero at rest (rounding, 1e-18), Adam's steps vanish, nothing gained
  CHECK(J0 == J00);
  CHECK(fabs(z0 - 0.05) < 1e-9);
  // complementarity-aware: takes off
  CHECK(J1 < 0.01 * J01);
  CHECK(fabs(z1 - 1.0) < 0.05);
}

// Adam with a step so large that the rollout overflows: each such step is rejected (the controls stay, lr
// halves), the result stays finite and never worse than the start
static void test_adam_rejects(void) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  physControlProblem* p = phys_control_make(m, 20, 5);
  p->fin.qref[0] = 1, p->fin.wq[0] = 1;
  physShootOptions o;
  phys_shooting_defaults(&o);
  o.method = PHYS_SHOOT_ADAM, o.lr = 1e200;
  CHECK(phys_shooting_solve(p, d, &o, NULL, NULL, NULL) == PHYS_OK);
  CHECK(isfinite(p->cost) && p->cost <= p->iter[0].cost);
  CHECK(p->niter == 5 && p->iter[0].alpha == 1e200);
  for (int k = 1; k <= 5; k++) CHECK(p->iter[k].alpha == 0.5 * p->iter[k - 1].alpha);   // every step rejected
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the gradient of a rollout that goes non-finite (a NaN control at step 3, a control of 1e308 whose state's
// cost overflows): J = +inf with status PHYS_OK and no message (a rejected trial point, not an error), d back
// at its state; L-BFGS-B from the 1e308 control (bounds +-1e308) refuses the initial guess (PHYS_ERR_NUMERIC),
// and from u_3 = 0.5 with a final weight of 1e200 (gradient about 1e198; the bounds are finite, so its first
// trial point is the Cauchy point u - g, whose rollout's cost overflows: a rejected trial, f = 1e300, seen by
// a print in run_lbfgsb while this was written) backs off and returns finite controls and costs, never worse
// than the start
static void test_grad_rejects(void) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  physControlProblem* p = phys_control_make(m, 20, 5);
  p->fin.qref[0] = 1, p->fin.wq[0] = 1, p->wu[0] = 1e-3;
  double* G = malloc(sizeof(double) * 20);
  double* work = malloc(sizeof(double) * phys_control_grad_worksize(p));
  physLog log;
  memset(&log, 0, sizeof log);
  double bad[2] = {NAN, 1e308};
  for (int i = 0; i < 2; i++) {
    for (int t = 0; t < 20; t++) p->U[t] = t == 3 ? bad[i] : 0.5;
    physStatus st = PHYS_ERR_ARG;
    CHECK(phys_control_grad(p, d, p->U, G, work, &st, &log) == INFINITY);
    CHECK(st == PHYS_OK && log.error[0] == 0);
    CHECK(d->qpos[0] == 0 && d->qvel[0] == 0 && d->time == 0);
  }
  p->lo[0] = -1e308, p->hi[0] = 1e308;
  physShootOptions o;
  phys_shooting_defaults(&o);
  CHECK(phys_shooting_solve(p, d, &o, NULL, NULL, &log) == PHYS_ERR_NUMERIC);   // the initial guess
  p->U[3] = 0.5;
  p->fin.wq[0] = 1e200;
  CHECK(phys_shooting_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK);
  printf("  lbfgsb: cost %.6g -> %.6g in %d iterations (stop %d)\n", p->iter[0].cost, p->cost, p->niter, (int)p->stop);
  CHECK(isfinite(p->cost) && p->cost <= p->iter[0].cost);
  for (int t = 0; t < 20; t++) CHECK(isfinite(p->U[t]));
  for (int k = 0; k <= p->niter; k++) CHECK(isfinite(p->iter[k].cost));
  free(G);
  free(work);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the design arm (tests/data/design_arm.xml) tracking its circling target: running term on ee - target (a
// reference body), a final term on the tip body, a velocity term on the target (a point no design moves);
// the design pos:elbow, pos:tip (the link lengths, every component), mass:tip, damping:j2 and the tendon's
// stiffness with the controls: dJ/d(U, theta) against central differences. Then the refusal of a velocity term
// on a point a pos: parameter moves
static void test_design_gradient(void) {
  physModel* m = phys_load("tests/data/design_arm.xml", NULL, NULL);
  CHECK(m != NULL);
  if (!m) return;
  physData* d = phys_make_data(m);
  int T = 40;
  physControlProblem* p = phys_control_make(m, T, 0);
  int ee = phys_name2id(m, "site", "ee"), target = phys_name2id(m, "body", "target");
  int tip = phys_name2id(m, "body", "tip");
  p->run.npoint = 2;
  p->run.point[0] = (physPointCost){ee, {0.01, -0.02, 0}, {5, 3, 1}, 0, 0, 1, target, 1};
  p->run.point[1] = (physPointCost){target, {0, 0.5, 0}, {0.5, 0.2, 0}, 1, 1, 0, 0, 0};
  p->fin.npoint = 1;
  p->fin.point[0] = (physPointCost){tip, {1.9, 0.3, 0}, {10, 4, 1}, 1, 0, 0, 0, 0};
  p->wu[0] = 0.05;
  const char* spec[] = {"pos:elbow", "pos:tip", "mass:tip", "damping:j2", "stiffness:kx"};
  physParamTable tab;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&tab, m, spec, 5, &log) == PHYS_OK, "%s", log.error);
  int nth = tab.ntheta;
  CHECK(nth == 9);
  double* x = malloc(sizeof(double) * ((size_t)T + 3 * (size_t)nth));
  double *th = x + T, *lo = th + nth, *hi = lo + nth;
  phys_param_get(&tab, m, th);
  th[0] = 1.4, th[1] = 0.1, th[3] = 0.6, th[4] = -0.05, th[6] = 1.3;   // a bent, shorter first link
  for (int i = 0; i < nth; i++) lo[i] = -10, hi[i] = 10;
  p->design = &tab, p->design_model = m, p->theta = th, p->theta_lo = lo, p->theta_hi = hi;
  d->qpos[0] = 0.2, d->qpos[1] = 0.4, d->qpos[2] = 0.3, d->qvel[3] = 1.9, d->qvel[0] = 0.5;
  for (int t = 0; t < T; t++) x[t] = 0.8 * sin(0.2 * t);
  double gmax = check_gradient(p, d, x, 1e-6, 2e-6);
  CHECK(gmax > 1e-2);
  // a velocity term on the end effector, which pos:elbow and pos:tip move: refused by the solve
  p->fin.point[0] = (physPointCost){ee, {0, 0, 0}, {1, 1, 1}, 0, 1, 0, 0, 0};
  physShootOptions o;
  phys_shooting_defaults(&o);
  p->maxiter = 2;
  CHECK(phys_shooting_solve(p, d, &o, NULL, NULL, &log) == PHYS_ERR_ARG);
  CHECK(strstr(log.error, "pos:elbow") && strstr(log.error, "velocity term"));   // the first that moves ee
  printf("  refused: %s\n", log.error);
  free(x);
  phys_param_table_free(&tab);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the design alone, the control held at 0 by equal bounds: the arm of design_arm.xml without its tendons at
// rest, straight along x; a final term puts the tip at x = 2.35 with l1 held at 1.5 (lower = upper), so the
// optimum is l2 = 0.85 exactly (the cost is zero there); L-BFGS-B and Adam find it from 0.5
static void test_design_solve(void) {
  physModel* m = phys_load("tests/data/design_arm.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  int T = 20;
  for (int i = 0; i < m->nspring; i++) m->spring_stiffness[i] = 0, m->spring_damping[i] = 0;   // the arm alone
  for (int method = 0; method < 2; method++) {
    physControlProblem* p = phys_control_make(m, T, 200);
    p->fin.npoint = 1;
    p->fin.point[0] = (physPointCost){phys_name2id(m, "body", "tip"), {2.35, 0, 0}, {1, 1, 1}, 1, 0, 0, 0, 0};
    p->lo[0] = p->hi[0] = 0;
    const char* spec[] = {"pos:elbow", "pos:tip"};
    physParamTable tab;
    physLog log;
    memset(&log, 0, sizeof log);
    CHECK(phys_param_table_build(&tab, m, spec, 2, &log) == PHYS_OK);
    double th[6] = {1.5, 0, 0, 0.5, 0, 0}, lo[6] = {1.5, 0, 0, 0.05, 0, 0}, hi[6] = {1.5, 0, 0, 3, 0, 0};
    p->design = &tab, p->design_model = m, p->theta = th, p->theta_lo = lo, p->theta_hi = hi;
    phys_reset_data(m, d);
    physShootOptions o;
    phys_shooting_defaults(&o);
    o.method = method ? PHYS_SHOOT_ADAM : PHYS_SHOOT_LBFGSB;
    o.lr = 0.01;
    p->tol = 1e-14;
    CHECK_MSG(phys_shooting_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
    printf("  %s: l2 %.9g (optimum 0.85), cost %.3g -> %.3g in %d iterations\n", method ? "adam" : "lbfgsb", th[3],
           p->iter[0].cost, p->cost, p->niter);
    CHECK(fabs(th[3] - 0.85) < (method ? 1e-3 : 1e-6));
    CHECK(th[0] == 1.5 && th[1] == 0 && th[4] == 0);   // held components
    CHECK(m->body_pos[3 * phys_name2id(m, "body", "tip")] == th[3]);   // the model holds the best design
    for (int t = 0; t < T; t++) CHECK(p->U[t] == 0);
    phys_param_table_free(&tab);
    phys_control_free(p);
  }
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_act();
  test_design_gradient();
  test_design_solve();
  test_adam_rejects();
  test_grad_rejects();
  test_gradient_pendulum();
  test_gradient_contacts();
  test_swing_up();
  test_drone_contrast();
  return test_done();
}

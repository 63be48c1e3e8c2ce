// test_ms.c - multiple shooting by Ipopt (src/control/ms.c): the constraint Jacobian and the objective's
// gradient against central differences on a model with free and ball joints (the SO(3) chart), MS equal to
// DDP on a linear-quadratic problem (test_ddp.c checks DDP against the Riccati recursion), the pendulum
// swing-up (unbounded and |u| <= 3) reaching the target with defects below 1e-8 and its controls' rollout
// on the solution's states, determinism, infeasible bounds.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "grad.h"
#include "ms.h"
#include "shooting.h"
#include "test.h"
#include "lqr.h"
#include "drone_task.h"

// a deterministic pseudo-random number in [-1, 1]
static double rnd(unsigned* s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffff) / 32767.5 - 1.0;
}

// the constraints' Jacobian and the objective's gradient at a point away from the reference (rotations of
// 0.3 rad in the chart, unequal rotation weights in the final cost, site terms) equal their central
// differences: the step Jacobians and the SO(3) chart Jacobians are exact. h = 1e-5 is where the differences'
// truncation and rounding errors meet (measured: 1.5e-7 at h = 1e-4, 9.0e-9 at 1e-5, 8.6e-8 at 1e-6, 6.0e-7 at
// 1e-7, scale 14); the chart Jacobians replaced by the identity (the defect's derivative in the tangent taken
// as -I and I) miss by 0.229
static void test_derivatives(void) {
  physData* d;
  physModel* m = load(&d, "tests/data/mixed.xml");
  if (!m) return;
  const int T = 3, nu = m->nu, n2 = 2 * m->nv, ns = m->nq + m->nv, nz = T * (nu + n2), nc = T * n2;
  physControlProblem* p = phys_control_make(m, T, 10);
  unsigned seed = 7;
  for (int i = 0; i < m->nv; i++) {
    p->run.wq[i] = 0.5 + 0.4 * rnd(&seed), p->run.wv[i] = 0.2;
    p->fin.wq[i] = 3 + 2 * rnd(&seed), p->fin.wv[i] = 1;
  }
  for (int i = 0; i < m->nq; i++) p->fin.qref[i] += 0.3 * rnd(&seed);
  double nrm = 0;
  for (int i = 3; i < 7; i++) nrm += p->fin.qref[i] * p->fin.qref[i];
  for (int i = 3; i < 7; i++) p->fin.qref[i] /= sqrt(nrm);
  for (int j = 0; j < nu; j++) p->wu[j] = 0.1, p->wdu[j] = 0.3, p->uprev[j] = 0.2;
  p->fin.npoint = 1;
  p->fin.point[0] = (physPointCost){phys_name2id(m, "site", "tipsite"), {0.6, 0.1, 1.0}, {3, 2, 1}, 0, 0, 0, 0, 0};
  double *Xr = calloc((size_t)(T + 1) * ns, sizeof(double)), *z = calloc((size_t)nz, sizeof(double));
  double *D = malloc(sizeof(double) * nc), *Dp = malloc(sizeof(double) * nc), *Dm = malloc(sizeof(double) * nc);
  double *jac = malloc(sizeof(double) * nc * nz), *grad = malloc(sizeof(double) * nz);
  physLog log;
  memset(&log, 0, sizeof log);
  // the reference: the rollout of some controls; z: other controls and offsets of up to 0.3 (rotations too)
  phys_reset_data(m, d);
  for (int t = 0; t < T; t++)
    for (int j = 0; j < nu; j++) p->U[t * nu + j] = 0.5 * rnd(&seed);
  phys_control_rollout(p, d, p->U, Xr);
  phys_reset_data(m, d);
  for (int k = 0; k < nz; k++) z[k] = 0.3 * rnd(&seed);
  double J;
  CHECK(phys_ms_constraints(p, d, Xr, z, D, jac, &J, grad, &log) == PHYS_OK);
  double err = 0, scale = 0, gerr = 0, gscale = 0;
  const double h = 1e-5;
  for (int k = 0; k < nz; k++) {
    double zk = z[k], Jp, Jm;
    z[k] = zk + h;
    phys_reset_data(m, d);
    CHECK(phys_ms_constraints(p, d, Xr, z, Dp, NULL, &Jp, NULL, &log) == PHYS_OK);
    z[k] = zk - h;
    phys_reset_data(m, d);
    CHECK(phys_ms_constraints(p, d, Xr, z, Dm, NULL, &Jm, NULL, &log) == PHYS_OK);
    z[k] = zk;
    for (int i = 0; i < nc; i++) {
      double fd = (Dp[i] - Dm[i]) / (2 * h);
      err = fmax(err, fabs(fd - jac[(size_t)i * nz + k]));
      scale = fmax(scale, fabs(fd));
    }
    double gfd = (Jp - Jm) / (2 * h);
    gerr = fmax(gerr, fabs(gfd - grad[k]));
    gscale = fmax(gscale, fabs(gfd));
  }
  CHECK_MSG(err <= 1e-9 * scale, "constraint Jacobian: max error %.3g (scale %.3g)", err, scale);
  CHECK_MSG(gerr <= 1e-9 * gscale, "objective gradient: max error %.3g (scale %.3g)", gerr, gscale);
  printf("derivatives (mixed.xml, T = %d, %d unknowns): constraint Jacobian error %.3g (scale %.3g), gradient "
         "error %.3g (scale %.3g)\n", T, nz, err, scale, gerr, gscale);
  // at z = 0 around a rollout the defects vanish exactly
  memset(z, 0, sizeof(double) * nz);
  for (int t = 0; t < T; t++) memcpy(z + t * (nu + n2), p->U + t * nu, sizeof(double) * nu);
  phys_reset_data(m, d);
  CHECK(phys_ms_constraints(p, d, Xr, z, D, NULL, NULL, NULL, &log) == PHYS_OK);
  double dmax = 0;
  for (int i = 0; i < nc; i++) dmax = fmax(dmax, fabs(D[i]));
  CHECK_MSG(dmax <= 1e-15, "defect %.3g around the rollout", dmax);   // the quaternions' renormalization
  free(Xr), free(z), free(D), free(Dp), free(Dm), free(jac), free(grad);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the linear model's LQR (tests/data/slider2_motor.xml, test_ddp.c's problem): MS's controls equal DDP's and
// the Riccati recursion's, with the quasi-Newton Hessian and with the Gauss-Newton one (exact here: one
// Newton step solves it)
static void test_lqr(void) {
  physData* d;
  physModel* m = load(&d, "tests/data/slider2_motor.xml");
  if (!m) return;
  const int T = 150, nu = 2;
  physControlProblem* p[3] = {phys_control_make(m, T, 50), phys_control_make(m, T, 500), phys_control_make(m, T, 50)};
  double q[4] = {0.5, 0.2, 0.1, 0.3}, r[2] = {0.01, 0.02}, qf[4] = {100, 200, 10, 20};
  double xr[4] = {0.3, -0.2, 0, 0}, xf[4] = {1, 0.5, 0, 0.1}, x0[4] = {-0.2, 0.1, 0.3, -0.4};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 2; i++) {
      p[k]->run.qref[i] = xr[i], p[k]->run.vref[i] = xr[2 + i], p[k]->run.wq[i] = q[i], p[k]->run.wv[i] = q[2 + i];
      p[k]->fin.qref[i] = xf[i], p[k]->fin.vref[i] = xf[2 + i], p[k]->fin.wq[i] = qf[i], p[k]->fin.wv[i] = qf[2 + i];
      p[k]->wu[i] = r[i];
    }
  physLog log;
  memset(&log, 0, sizeof log);
  for (int k = 0; k < 3; k++) {
    phys_reset_data(m, d);
    memcpy(d->qpos, x0, sizeof(double) * 2);
    memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
    physMsOptions opt = phys_ms_defaults();
    opt.gauss_newton = k == 2;
    physMsResult res = {0};
    p[k]->tol = 1e-12;
    CHECK((k == 0 ? phys_ddp_solve(p[0], d, NULL, NULL, &log) : phys_ms_solve(p[k], d, &opt, &res, NULL, NULL, &log)) ==
          PHYS_OK);
    if (k > 0) {
      CHECK_MSG(res.status == 0 || res.status == 1, "ipopt status %d (%s)", res.status, res.status_name);
      CHECK_MSG(res.defect < 1e-10, "defect %.3g", res.defect);
      // solved: the last iterate is returned, not an earlier feasible one of a lower objective by rounding
      CHECK_MSG(res.iterate == p[k]->niter, "returned iteration %d of %d", res.iterate, p[k]->niter);
      if (k == 2) CHECK_MSG(p[2]->niter <= 2, "gauss-newton: %d iterations", p[2]->niter);
      printf("lqr: ms (%s) %d iterations (%s), %.3f s, objective %.12g, rollout cost %.12g, max defect %.3g\n",
             k == 2 ? "gauss-newton" : "lbfgs", p[k]->niter, res.status_name, res.seconds, res.objective, p[k]->cost,
             res.defect);
    }
    CHECK(d->qpos[0] == x0[0] && d->qvel[1] == x0[3] && d->time == 0);   // d is back at the initial state
  }
  // the Riccati solution (the running cost is integrated over the step: times dt)
  static double Ur[150 * 2];
  double A[16], B[8], qh[4], rh[2];
  phys_reset_data(m, d);
  memcpy(d->qpos, x0, sizeof(double) * 2);
  memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  for (int i = 0; i < 4; i++) qh[i] = q[i] * m->opt.timestep;
  for (int i = 0; i < 2; i++) rh[i] = r[i] * m->opt.timestep;
  riccati(4, nu, T, A, B, qh, rh, qf, xr, xf, x0, Ur);
  for (int k = 1; k < 3; k++) {
    double er = 0;
    for (int i = 0; i < T * nu; i++) er = fmax(er, fabs(p[k]->U[i] - Ur[i]));
    CHECK_MSG(er <= 1e-8 * 7.22, "max |U_ms - U_riccati| = %.3g", er);
    printf("lqr (%s): max |U_ms - U_riccati| %.3g\n", k == 2 ? "gauss-newton" : "lbfgs", er);
    double err = 0, scale = 0;
    for (int i = 0; i < T * nu; i++) err = fmax(err, fabs(p[k]->U[i] - p[0]->U[i])), scale = fmax(scale, fabs(p[0]->U[i]));
    CHECK_MSG(err <= 1e-8 * fmax(1, scale), "max |U_ms - U_ddp| = %.3g (scale %.3g)", err, scale);
    CHECK_MSG(fabs(p[k]->cost - p[0]->cost) <= 1e-10 * p[0]->cost, "cost ms %.15g ddp %.15g", p[k]->cost, p[0]->cost);
    printf("lqr (%s): max |U_ms - U_ddp| %.3g (scale %.3g), cost ms %.15g ddp %.15g\n",
           k == 2 ? "gauss-newton" : "lbfgs", err, scale, p[k]->cost, p[0]->cost);
  }
  for (int k = 0; k < 3; k++) phys_control_free(p[k]);
  phys_free_data(d);
  phys_free_model(m);
}

// issue 13's swing-up (200 steps of 10 ms; with lim > 0 |u| <= lim over 400 steps) by multiple shooting from
// zero controls; returns the problem (caller frees) and the result in *res
static physControlProblem* swing_up(const physModel* m, physData* d, double lim, physMsResult* res) {
  int T = lim > 0 ? 400 : 200;
  physControlProblem* p = phys_control_make(m, T, 1000);
  p->fin.qref[0] = 3.14159265;
  p->fin.wq[0] = 100;
  p->fin.wv[0] = 10;
  p->wu[0] = 1e-3;
  if (lim > 0) p->lo[0] = -lim, p->hi[0] = lim;
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  physMsOptions opt = phys_ms_defaults();
  CHECK_MSG(phys_ms_solve(p, d, &opt, res, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
  return p;
}

static void test_swing_up(void) {
  physData* d;
  physModel* m = load(&d, "models/pendulum_motor.xml");
  if (!m) return;
  for (int k = 0; k < 2; k++) {
    double lim = k ? 3 : 0;
    int T = k ? 400 : 200;
    physMsResult res = {0};
    physControlProblem* p = swing_up(m, d, lim, &res);
    double qT = p->X[2 * T], vT = p->X[2 * T + 1];
    CHECK_MSG(res.status == 0, "ipopt status %d (%s)", res.status, res.status_name);
    CHECK_MSG(fabs(qT - M_PI) < 1e-2, "final angle %.9g", qT);
    CHECK_MSG(res.defect < 1e-8, "max defect %.3g", res.defect);
    CHECK(res.violation == 0 && phys_control_violation(p, p->U) == 0);
    // the rollout of the controls (what simulate --ctrl-file replays) stays on the solution's states
    CHECK_MSG(res.drift < 1e-5, "drift %.3g", res.drift);
    int sat = 0;
    for (int t = 0; t < T; t++) sat += lim > 0 && fabs(p->U[t]) >= lim - 1e-6;
    if (lim > 0) CHECK(sat > 0);   // the bound is active somewhere
    printf("swing-up%s: ms %d iterations (%s), %.3f s, objective %.9g, rollout cost %.9g, final angle %.9g, "
           "velocity %.3g, max defect %.3g, drift %.3g, %d steps at the bound\n",
           lim > 0 ? " |u| <= 3" : "", p->niter, res.status_name, res.seconds, res.objective, p->cost, qT, vT,
           res.defect, res.drift, sat);
    if (k == 0) {   // determinism: the same problem solved again gives the same bits
      physMsResult res2 = {0};
      physControlProblem* p2 = swing_up(m, d, lim, &res2);
      CHECK(p2->niter == p->niter && memcmp(p2->U, p->U, sizeof(double) * T) == 0 && p2->cost == p->cost);
      // infeasible bounds are an error naming the control
      p2->lo[0] = 1, p2->hi[0] = -1;
      physLog log;
      memset(&log, 0, sizeof log);
      physMsOptions opt = phys_ms_defaults();
      CHECK(phys_ms_solve(p2, d, &opt, &res2, NULL, NULL, &log) == PHYS_ERR_ARG);
      CHECK(strstr(log.error, "control 0: infeasible bounds [1, -1]") != NULL);
      phys_control_free(p2);
    }
    phys_control_free(p);
  }
  phys_free_data(d);
  phys_free_model(m);
}

// paper 001's drone (drone_task.h) from rest on the floor by multiple shooting, maxiter Ipopt iterations,
// exact (aware 0) or complementarity-aware (aware 1); returns the problem (caller frees it, *m and *d)
static physControlProblem* drone_ms(int aware, int maxiter, physModel** m, physData** d, physMsResult* res) {
  physControlProblem* p = drone_task(aware, maxiter, m, d);
  physLog log;
  memset(&log, 0, sizeof log);
  physMsOptions opt = phys_ms_defaults();
  CHECK_MSG(phys_ms_solve(p, *d, &opt, res, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
  return p;
}

// the multipliers' estimate at a defect-free point: at the drone's initial rollout (z = 0) the reduced gradient
// of the aware constraint Jacobian, grad_u + (dD/du)' lambda with lambda from the states' stationarity
// (dD/ddx)' lambda = -grad_x (back substitution: dD_t/ddx_{t+1} = I at z = 0), equals single shooting's
// complementarity-aware gradient (phys_control_grad with the flag), and is not zero where the exact one is
static void test_drone_multipliers(void) {
  physModel* m;
  physData* d;
  physControlProblem* p = drone_task(1, 1, &m, &d);
  int T = p->T, nu = p->nu, n2 = 2 * m->nv, ns = m->nq + m->nv, nz = T * (nu + n2), nc = T * n2;
  double *Xr = malloc(sizeof(double) * (size_t)(T + 1) * ns), *z = calloc((size_t)nz, sizeof(double));
  double *D = malloc(sizeof(double) * (size_t)nc), *jac = malloc(sizeof(double) * (size_t)nc * nz);
  double *g = malloc(sizeof(double) * (size_t)nz), *lam = malloc(sizeof(double) * (size_t)nc);
  double *G = malloc(sizeof(double) * (size_t)T * nu), *work = malloc(sizeof(double) * phys_control_grad_worksize(p));
  CHECK(Xr && z && D && jac && g && lam && G && work);
  physLog log;
  memset(&log, 0, sizeof log);
  double J0 = phys_control_rollout(p, d, p->U, Xr);
  phys_reset_keyframe(m, d, 0);
  double J;
  CHECK_MSG(phys_ms_constraints(p, d, Xr, z, D, jac, &J, g, &log) == PHYS_OK, "%s", log.error);
  CHECK(J == J0);
  for (int t = T - 1; t >= 0; t--)   // lambda_t = -g_x(t+1) - (dD_{t+1}/ddx_{t+1})' lambda_{t+1}
    for (int j = 0; j < n2; j++) {
      size_t col = (size_t)t * (nu + n2) + nu + j;
      double s = -g[col];
      for (int i = 0; i < n2 && t + 1 < T; i++) s -= jac[((size_t)(t + 1) * n2 + i) * nz + col] * lam[(t + 1) * n2 + i];
      lam[t * n2 + j] = s;
    }
  phys_reset_keyframe(m, d, 0);
  physStatus st;
  phys_control_grad(p, d, p->U, G, work, &st, &log);
  CHECK(st == PHYS_OK);
  double err = 0, scale = 0;
  for (int t = 0; t < T; t++)
    for (int j = 0; j < nu; j++) {
      size_t col = (size_t)t * (nu + n2) + j;
      double r = g[col];
      for (int i = 0; i < n2; i++) r += jac[((size_t)t * n2 + i) * nz + col] * lam[t * n2 + i];
      err = fmax(err, fabs(r - G[t * nu + j]));
      scale = fmax(scale, fabs(G[t * nu + j]));
    }
  printf("drone multipliers: reduced gradient of the aware ms Jacobian vs aware single shooting: max diff %.3g, "
         "max |G| %.6g\n", err, scale);
  CHECK_MSG(scale > 1e-3 && err <= 1e-9 * scale, "max diff %.3g, scale %.3g", err, scale);
  free(Xr), free(z), free(D), free(jac), free(g), free(lam), free(G), free(work);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// exact multiple shooting stalls at rest (B = 0 through the clamped contacts: the cost stays 45.125, the drone
// on the floor); complementarity-aware, it takes off: solved, cost below 1 % of the initial, height within
// 5 cm of 1 m, defects below 1e-8. A regression test of the option: before it, the flag left ms exact (the
// first run), so the second run's checks failed
static void test_drone(void) {
  physModel* m[2];
  physData* d[2];
  physMsResult res[2] = {{0}, {0}};
  physControlProblem* p[2];
  double z[2];
  for (int k = 0; k < 2; k++) {
    p[k] = drone_ms(k, 60, &m[k], &d[k], &res[k]);
    z[k] = p[k]->X[100 * (m[k]->nq + m[k]->nv) + 2];
    printf("drone ms %s: %d iterations (%s), objective %.9g, rollout cost %.9g, height %.6f, max defect %.3g, "
           "relabelled %d, %.2f s\n", k ? "complementarity-aware" : "exact", p[k]->niter, res[k].status_name,
           res[k].objective, p[k]->cost, z[k], res[k].defect, res[k].relabelled, res[k].seconds);
  }
  CHECK_MSG(fabs(p[0]->cost - 45.125) < 1e-3 && fabs(z[0] - 0.05) < 1e-6, "exact: cost %.9g, height %.9g", p[0]->cost,
            z[0]);
  CHECK_MSG(res[1].status == 0 && p[1]->cost < 0.01 * 45.125 && fabs(z[1] - 1) < 0.05 && res[1].defect < 1e-8,
            "aware: status %s, cost %.9g, height %.9g, defect %.3g", res[1].status_name, p[1]->cost, z[1],
            res[1].defect);
  // deterministic: solved again, the same bits
  physModel* m2;
  physData* d2;
  physMsResult r2 = {0};
  physControlProblem* p2 = drone_ms(1, 60, &m2, &d2, &r2);
  CHECK(p2->niter == p[1]->niter && memcmp(p2->U, p[1]->U, sizeof(double) * 400) == 0 && p2->cost == p[1]->cost);
  phys_control_free(p2);
  phys_free_data(d2);
  phys_free_model(m2);
  for (int k = 0; k < 2; k++) {
    phys_control_free(p[k]);
    phys_free_data(d[k]);
    phys_free_model(m[k]);
  }
}

int main(void) {
  test_derivatives();
  test_lqr();
  test_swing_up();
  test_drone_multipliers();
  test_drone();
  return test_done();
}

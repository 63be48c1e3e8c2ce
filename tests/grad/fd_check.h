// fd_check.h - the finite-difference and dot-product checks of one step's derivatives shared by
// test_pbd_deriv.c, test_implicit_deriv.c and test_step_equality_deriv.c: A, B by the four-point combination of
// phys_step_jacobian_fd, P = dx+/dtheta by four-point differences of phys_step under phys_param_set, and the
// dot-product test of a VJP (grad_models.h gives the stencils, the comparison and the tolerances).
#ifndef PHYS_FD_CHECK_H
#define PHYS_FD_CHECK_H

#include "grad_models.h"
#include "params.h"
#include "rollout.h"
#include "step.h"

// A, B by the four-point combination of the twin at h and 2h: (4 J_h - J_2h) / 3
static inline void fd4_jacobian(const physModel* m, physData* d, double fd_h, double* A, double* B) {
  int n2 = 2 * m->nv, nu = m->nu;
  double* At = malloc(sizeof(double) * n2 * n2);
  double* Bt = malloc(sizeof(double) * (n2 * nu + 1));
  CHECK(phys_step_jacobian_fd(m, d, fd_h, A, B) == PHYS_OK);
  CHECK(phys_step_jacobian_fd(m, d, 2 * fd_h, At, Bt) == PHYS_OK);
  for (int i = 0; i < n2 * n2; i++) A[i] = (4 * A[i] - At[i]) / 3;
  for (int i = 0; i < n2 * nu; i++) B[i] = (4 * B[i] - Bt[i]) / 3;
  free(At), free(Bt);
}

// dot-product test of a VJP: y'(J x) = (J'y)'x to GM_DOT_TOL of sum |y_i J_ij x_j|, J (rows x cols), Jty = J'y
static inline void fd_dot_check(const char* what, const double* J, const double* y, const double* x, const double* Jty,
                                int rows, int cols) {
  double scale, lhs = gm_bilinear(J, y, x, rows, cols, &scale), rhs = 0;
  for (int j = 0; j < cols; j++) rhs += Jty[j] * x[j];
  CHECK_MSG(fabs(lhs - rhs) <= GM_DOT_TOL * scale, "%s: y'Jx %.17g vs (J'y)'x %.17g (scale %.3g)", what, lhs, rhs,
            scale);
}

// x+ (-) xref (2nv) of one phys_step from (q, v) with theta th set
static inline void fd_step_theta(physModel* m, physData* d, const physParamTable* t, const double* th,
                                 const double* q, const double* v, const double* qref, const double* vref,
                                 double* res) {
  CHECK(phys_param_set(t, m, th) == PHYS_OK);
  memcpy(d->qpos, q, sizeof(double) * m->nq);
  memcpy(d->qvel, v, sizeof(double) * m->nv);
  phys_step(m, d);
  phys_difference_pos(m, res, 1, qref, d->qpos);
  for (int i = 0; i < m->nv; i++) res[m->nv + i] = d->qvel[i] - vref[i];
}

// Pf (2nv x nt) = dx+/dtheta at (q, v) by four-point differences of the step, h_j = 1e-3 max(|th0_j|, hfloor)
// (hfloor < 0: h_j = -hfloor, near a contact's switch), against the reference step (qref, vref) at th0; each step starts at d's time on entry; theta th0 restored
static inline void fd_param_columns(physModel* m, physData* d, const physParamTable* t, const double* th0,
                                    const double* q, const double* v, const double* qref, const double* vref,
                                    double hfloor, double* Pf) {
  int n2 = 2 * m->nv, nt = t->ntheta;
  double *th = malloc(sizeof(double) * nt), *f = malloc(sizeof(double) * 4 * n2), t0 = d->time;
  static const double off[4] = {2, 1, -1, -2};
  for (int j = 0; j < nt; j++) {
    double h = hfloor < 0 ? -hfloor : 1e-3 * fmax(fabs(th0[j]), hfloor);
    for (int k = 0; k < 4; k++) {
      memcpy(th, th0, sizeof(double) * nt);
      th[j] += off[k] * h;
      d->time = t0;
      fd_step_theta(m, d, t, th, q, v, qref, vref, f + k * n2);
    }
    for (int i = 0; i < n2; i++) Pf[(size_t)i * nt + j] = gm_fd4(f[i], f[n2 + i], f[2 * n2 + i], f[3 * n2 + i], h);
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  d->time = t0;
  free(th), free(f);
}

// P = dx+/dtheta at d's state against four-point differences (fd_param_columns, hfloor) to rtol and P's VJP by
// the dot-product test (y, then x drawn from rng); d's state and theta restored; the worst relative error
static inline double fd_check_p(const char* name, physModel* m, physData* d, const physParamTable* t, physRng* rng,
                                double hfloor, double rtol) {
  int nv = m->nv, nq = m->nq, n2 = 2 * nv, nt = t->ntheta;
  double *q = malloc(sizeof(double) * nq), *v = malloc(sizeof(double) * nv), *qref = malloc(sizeof(double) * nq);
  double *vref = malloc(sizeof(double) * nv), *th0 = malloc(sizeof(double) * nt);
  double *P = malloc(sizeof(double) * n2 * nt), *Pf = malloc(sizeof(double) * n2 * nt);
  double *y = malloc(sizeof(double) * n2), *x = malloc(sizeof(double) * nt), *tb = malloc(sizeof(double) * nt);
  memcpy(q, d->qpos, sizeof(double) * nq);
  memcpy(v, d->qvel, sizeof(double) * nv);
  phys_param_get(t, m, th0);
  CHECK_MSG(phys_step_param_jacobian(m, d, t, P) == PHYS_OK, "%s: %s", name, d->lastwarning);
  gm_rand_vec(rng, y, n2);
  gm_rand_vec(rng, x, nt);
  CHECK(phys_step_param_vjp(m, d, t, y, tb) == PHYS_OK);
  fd_dot_check("vjp theta", P, y, x, tb, n2, nt);
  phys_step(m, d);
  memcpy(qref, d->qpos, sizeof(double) * nq);
  memcpy(vref, d->qvel, sizeof(double) * nv);
  fd_param_columns(m, d, t, th0, q, v, qref, vref, hfloor, Pf);
  memcpy(d->qpos, q, sizeof(double) * nq);
  memcpy(d->qvel, v, sizeof(double) * nv);
  double worst = gm_compare(name, P, Pf, n2, nt, 1, rtol);
  free(q), free(v), free(qref), free(vref), free(th0), free(P), free(Pf), free(y), free(x), free(tb);
  return worst;
}

// the rollout's dL/dtheta (tb) against central differences of phys_rollout from the state x0 over T steps of
// controls u, h_j = 1e-4 theta_j, to 1e-5 relative (1e-8 absolute); theta restored; the worst relative error
// |fd - tb_j| / max(|fd|, floor)
static inline double fd_check_rollout_theta(physModel* m, physData* d, const physParamTable* t, int T, const double* u,
                                            physLossFn loss, void* ctx, const double* x0, const double* tb,
                                            double floor) {
  int nt = t->ntheta;
  double *th0 = malloc(sizeof(double) * nt), *th = malloc(sizeof(double) * nt), worst = 0;
  phys_param_get(t, m, th0);
  for (int j = 0; j < nt; j++) {
    double h = 1e-4 * th0[j], f[2];
    for (int k = 0; k < 2; k++) {
      memcpy(th, th0, sizeof(double) * nt);
      th[j] += (k ? -h : h);
      CHECK(phys_param_set(t, m, th) == PHYS_OK);
      phys_state_load(m, d, x0);
      f[k] = phys_rollout(m, d, T, u, loss, ctx);
    }
    double fd = (f[0] - f[1]) / (2 * h);
    worst = fmax(worst, fabs(fd - tb[j]) / fmax(fabs(fd), floor));
    CHECK_REL(tb[j], fd, 1e-5, 1e-8);
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  free(th0), free(th);
  return worst;
}

#endif

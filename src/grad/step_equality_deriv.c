// step_equality_deriv.c - the step's derivatives with equality rows (step_equality_deriv.h).
#include <string.h>

#include "equality_deriv.h"
#include "factor.h"
#include "step.h"
#include "step_equality_deriv.h"
#include "step_record.h"

physEqualityPoint* phys_equality_point(const physModel* m, physData* d, const double* L, double* qacc) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  physEqualityPoint* ep = (physEqualityPoint*)phys_stack_alloc(d, (sizeof(physEqualityPoint) + 7) / 8);
  physEqualityRows er;
  phys_equality_assemble(m, d, L, &er);
  double* vnew = phys_stack_alloc(d, (size_t)nv);
  phys_smooth_step_vnew(m, d, qacc, vnew);   // v_f
  size_t mark = phys_stack_mark(d);
  double* qfrc = phys_stack_alloc(d, (size_t)nv);
  memset(qfrc, 0, sizeof(double) * (size_t)nv);
  phys_equality_finish(m, d, &er, vnew, qfrc);   // v+ = v_f + M~^-1 J_e' lambda, as the step
  phys_stack_free(d, mark);
  for (int i = 0; i < nv; i++) qacc[i] = (vnew[i] - d->qvel[i]) / dt;
  memcpy(d->qacc, qacc, sizeof(double) * (size_t)nv);
  *ep = (physEqualityPoint){er.ne, er.J, er.P, er.lambda, vnew};
  return ep;
}

// X (2nv x ncol, the smooth step's columns) += the impulse's response (file comment of the header): per column c,
// y = J_e V_c (+ C_c for the q columns when C: C = K(v+) + (beta/dt) J_e + J_e M~^-1 T), dlambda = -P y,
// F_c = (J_e' dlambda (+ T_c)) / dt, X += d(q+, v+)/dF
static void add_impulse_columns(const physModel* m, physData* d, const double* L, const double* qacc,
                                const physEqualityPoint* ep, double* X, int ncol, const double* C, const double* T) {
  int nv = m->nv, ne = ep->ne;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* Xf = phys_stack_alloc(d, 2 * (size_t)nv * ncol);
  double* F = Xf + (size_t)nv * ncol;
  double* y = phys_stack_alloc(d, (size_t)ne);
  double* dl = phys_stack_alloc(d, (size_t)ne);
  const double* V = X + (size_t)nv * ncol;
  for (int c = 0; c < ncol; c++) {
    int qcol = C && c < nv;
    for (int i = 0; i < ne; i++) {
      double s = qcol ? C[(size_t)i * nv + c] : 0;
      for (int k = 0; k < nv; k++) s += ep->J[(size_t)i * nv + k] * V[(size_t)k * ncol + c];
      y[i] = s;
    }
    for (int i = 0; i < ne; i++) {
      double s = 0;
      for (int j = 0; j < ne; j++) s -= ep->P[(size_t)i * ne + j] * y[j];
      dl[i] = s;
    }
    for (int k = 0; k < nv; k++) {
      double s = qcol ? T[(size_t)k * nv + c] : 0;
      for (int i = 0; i < ne; i++) s += ep->J[(size_t)i * nv + k] * dl[i];
      F[(size_t)k * ncol + c] = s / dt;
    }
  }
  phys_smooth_step_force_jacobian(m, d, L, qacc, NULL, Xf, ncol);
  for (size_t i = 0; i < 2 * (size_t)nv * ncol; i++) X[i] += Xf[i];
  phys_stack_free(d, mark);
}

// T = d(J_e' lambda)/dq (nv x nv) and C = K(v+) + (beta/dt) J_e + J_e M~^-1 T (ne x nv) at ep
static void curvature_terms(const physModel* m, physData* d, const double* L, const physEqualityPoint* ep, double* T,
                            double* C) {
  int nv = m->nv, ne = ep->ne;
  double bdt = m->opt.baumgarte / m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* WT = phys_stack_alloc(d, (size_t)nv * nv);
  double* col = phys_stack_alloc(d, 2 * (size_t)nv);
  double* wcol = col + nv;
  phys_equality_curvature_t(m, d, ep->lambda, T);
  phys_equality_curvature(m, d, ep->vnew, C);
  for (int c = 0; c < nv; c++) {
    for (int k = 0; k < nv; k++) col[k] = T[(size_t)k * nv + c];
    phys_solve_m(m, L, wcol, col);
    for (int k = 0; k < nv; k++) WT[(size_t)k * nv + c] = wcol[k];
  }
  for (int i = 0; i < ne; i++)
    for (int c = 0; c < nv; c++) {
      double s = bdt * ep->J[(size_t)i * nv + c];
      for (int k = 0; k < nv; k++) s += ep->J[(size_t)i * nv + k] * WT[(size_t)k * nv + c];
      C[(size_t)i * nv + c] += s;
    }
  phys_stack_free(d, mark);
}

void phys_equality_step_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                 const physEqualityPoint* ep, const physParamTable* t, double* A, double* B,
                                 double* P) {
  int nv = m->nv;
  phys_smooth_step_jacobian(m, d, L, qacc, NULL, A, B);
  if (P && t) phys_smooth_step_param_jacobian(m, d, L, qacc, NULL, t, P);
  if (A) {
    size_t mark = phys_stack_mark(d);
    double* T = phys_stack_alloc(d, (size_t)nv * nv);
    double* C = phys_stack_alloc(d, (size_t)ep->ne * nv + 1);
    curvature_terms(m, d, L, ep, T, C);
    add_impulse_columns(m, d, L, qacc, ep, A, 2 * nv, C, T);
    phys_stack_free(d, mark);
  }
  if (B && m->nu > 0) add_impulse_columns(m, d, L, qacc, ep, B, m->nu, NULL, NULL);
  if (P && t && t->ntheta > 0) add_impulse_columns(m, d, L, qacc, ep, P, t->ntheta, NULL, NULL);
}

// out (ncol) = X' xbar for X (2nv x ncol)
static void transpose_mul(int n2, int ncol, const double* X, const double* xbar, double* out) {
  for (int c = 0; c < ncol; c++) {
    double s = 0;
    for (int r = 0; r < n2; r++) s += X[(size_t)r * ncol + c] * xbar[r];
    out[c] = s;
  }
}

void phys_equality_step_vjp(const physModel* m, physData* d, const double* L, const double* qacc,
                            const physEqualityPoint* ep, const physParamTable* t, const double* xbar_next,
                            double* xbar, double* ubar, double* theta_bar) {
  int n2 = 2 * m->nv, nu = m->nu, nt = t && theta_bar ? t->ntheta : 0;
  size_t mark = phys_stack_mark(d);
  double* A = xbar ? phys_stack_alloc(d, (size_t)n2 * n2) : NULL;
  double* B = ubar && nu > 0 ? phys_stack_alloc(d, (size_t)n2 * nu) : NULL;
  double* P = nt > 0 ? phys_stack_alloc(d, (size_t)n2 * nt) : NULL;
  phys_equality_step_jacobian(m, d, L, qacc, ep, t, A, B, P);
  if (A) transpose_mul(n2, n2, A, xbar_next, xbar);
  if (B) transpose_mul(n2, nu, B, xbar_next, ubar);
  if (P) transpose_mul(n2, nt, P, xbar_next, theta_bar);
  phys_stack_free(d, mark);
}

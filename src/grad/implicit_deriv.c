// implicit_deriv.c - Jacobians and reverse mode of the implicit step (PHYS_INT_IMPLICIT without active
// constraints; src/step/step.h phys_implicit_acc, implicit.c).
//
// The step solves H a = tau - c - dt K v, H = M + dt D + dt^2 K, then v+ = v + dt a, q+ = q (+) dt v+. With
// w = v+ = v + dt a the solve is the root of the residual
//   R(a; q, v, u, theta) = RNEA(q, v, a) + armature a - f(q, v, u) + dt D(q) a + dt K(q) w = 0
// (f: passive, actuator, applied forces; RNEA = M a + c; the dof damping's dt B a is in dt D a). Its derivative
// is what is differentiated, the linear solve included (dR/da = H, symmetric):
//   da/dx = -H^-1 dR/dx,
//   dR/dq = dRNEA/dq|_a - df/dq + dt d(D a + K w)/dq|_(a, w),   dR/dv = dRNEA/dv - df/dv + dt K,   dR/du = -df/du.
// The only q-dependent parts of K and D are the springs' u_s u_s' (u_s = JL_s' = dL_s/dq', the joint terms are
// constant), whose derivative is the second derivative of the spring length (the d^2 f terms of the linear
// solve's matrix): with y_s = k_s w + b_s a,
//   d(u_s (u_s . y_s))/dq = (JL_s . y_s) K_s + JL_s' (K_s' y_s)',   K_s = d(JL_s')/dq (phys_spring_hessian).
// Parameters: dR/dtheta = phys_param_forces's columns at a (M~ a + c - f, params.h) plus the implicit terms
// dt u_s (u_s . w) for a spring's stiffness, dt u_s (u_s . a) for its damping and dt w on a joint's dofs for a
// joint stiffness (the dof damping's dt a is already in phys_param_forces). pos:BODY moves the springs' paths
// and so K and D: refused on a model with springs (PHYS_ERR_MODEL).
// Then A = [[E + dt D_r V_q, dt D_r V_v], [V_q, V_v]] with V = dt da/dx (+ 1 on v), as the smooth step
// (step_deriv.c; D_r, E the exponential map's blocks), B = [[dt D_r V_u], [V_u]], P likewise.
// The reverse mode forms A, B and P and applies their transposes (dense: O(nv^2 (nv + nu + ntheta))).
#include <string.h>

#include "arena.h"
#include "chol.h"
#include "dyn.h"
#include "grad.h"
#include "model.h"
#include "params.h"
#include "step.h"
#include "step_record.h"

// H's factor into L and a = H^-1 (tau - c - dt K v) into qacc and d->qacc at d's state (step_record.h); the
// same arithmetic as the step (phys_step_force, phys_implicit_system), so a is the step's bit for bit
physStatus phys_implicit_step_point(const physModel* m, physData* d, int kinematics_done, double* L, double* qacc) {
  int nv = m->nv;
  (void)kinematics_done;   // (phys_step_force runs the kinematics: the step's own pipeline)
  if (m->residual) {
    phys_data_warning(d, "phys_step derivatives: the implicit integrator with a residual network is not differentiated");
    return PHYS_ERR_MODEL;
  }
  size_t mark = phys_stack_mark(d);
  double* tau = phys_stack_alloc(d, (size_t)nv);
  phys_step_force(m, d, tau);
  phys_implicit_system(m, d, tau, L, qacc);
  phys_stack_free(d, mark);
  if (phys_chol_factor(L, nv, 0) != nv) {
    phys_data_warning(d, "phys_step_jacobian: M + dt D + dt^2 K not positive definite at time %g", d->time);
    return PHYS_ERR_NUMERIC;
  }
  phys_chol_solve(qacc, L, qacc, nv);
  memcpy(d->qacc, qacc, sizeof(double) * (size_t)nv);
  return PHYS_OK;
}

// v+ = v + dt a
static void implicit_vnew(const physModel* m, const physData* d, const double* qacc, double* vnew) {
  for (int i = 0; i < m->nv; i++) vnew[i] = d->qvel[i] + m->opt.timestep * qacc[i];
}

// Gq (nv x nv, stride ld) -= dt d(D a + K w)/dq: the springs' terms of the header, y_s = k_s w + b_s a
static void spring_curvature(const physModel* m, physData* d, const double* qacc, const double* vnew, double* Gq,
                             int ld) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  if (m->opt.disableflags & PHYS_DSBL_PASSIVE) return;
  size_t mark = phys_stack_mark(d);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  double* Ks = phys_stack_alloc(d, (size_t)nv * nv);
  double* Ky = phys_stack_alloc(d, (size_t)nv);
  double* y = phys_stack_alloc(d, (size_t)nv);
  for (int s = 0; s < m->nspring; s++) {
    double k = m->spring_stiffness[s], b = m->spring_damping[s];
    if (k == 0 && b == 0) continue;
    phys_spring_hessian(m, d, s, JL, Ks);
    double jy = 0;
    for (int i = 0; i < nv; i++) {
      y[i] = k * vnew[i] + b * qacc[i];
      jy += JL[i] * y[i];
    }
    memset(Ky, 0, sizeof(double) * (size_t)nv);
    for (int l = 0; l < nv; l++)
      for (int j = 0; j < nv && y[l] != 0; j++) Ky[j] += y[l] * Ks[(size_t)l * nv + j];
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) Gq[(size_t)i * ld + j] -= dt * (jy * Ks[(size_t)i * nv + j] + JL[i] * Ky[j]);
  }
  phys_stack_free(d, mark);
}

// X (2nv x ncol) from G = -dR/d(inputs) in its v+ rows: V = dt H^-1 G (+ 1 on v's columns when q_cols: A's), then the
// q+ rows (phys_step_position_rows)
static void solve_columns(const physModel* m, physData* d, const double* L, const double* vnew, double* X, int ncol,
                          int q_cols) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* col = phys_stack_alloc(d, (size_t)nv);
  double* V = X + (size_t)nv * ncol;
  for (int c = 0; c < ncol; c++) {
    for (int k = 0; k < nv; k++) col[k] = V[(size_t)k * ncol + c];
    phys_chol_solve(col, L, col, nv);
    for (int k = 0; k < nv; k++) V[(size_t)k * ncol + c] = dt * col[k];
  }
  if (q_cols)
    for (int k = 0; k < nv; k++) V[(size_t)k * ncol + nv + k] += 1;
  phys_step_position_rows(m, d, vnew, X, ncol, q_cols);
  phys_stack_free(d, mark);
}

// A (2nv x 2nv): G = [dRNEA/dq ... ] as the header, solved by solve_columns
static void implicit_a(const physModel* m, physData* d, const double* L, const double* qacc, const double* vnew,
                       double* A) {
  int nv = m->nv, n2 = 2 * nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* Gq = phys_stack_alloc(d, nn);
  double* Gv = phys_stack_alloc(d, nn);
  double* K = phys_stack_alloc(d, nn);
  phys_step_force_deriv(m, d, qacc, Gq, Gv);
  phys_implicit_kd(m, d, K, NULL);
  for (size_t i = 0; i < nn; i++) Gv[i] -= dt * K[i];
  spring_curvature(m, d, qacc, vnew, Gq, nv);
  double* V = A + (size_t)nv * n2;
  for (int i = 0; i < nv; i++) {
    memcpy(V + (size_t)i * n2, Gq + (size_t)i * nv, sizeof(double) * (size_t)nv);
    memcpy(V + (size_t)i * n2 + nv, Gv + (size_t)i * nv, sizeof(double) * (size_t)nv);
  }
  phys_stack_free(d, mark);
  solve_columns(m, d, L, vnew, A, n2, 1);
}

// P's v+ rows <- -(dR/dtheta): phys_param_forces plus the implicit terms of the header; PHYS_ERR_MODEL for pos:BODY
// with springs
static physStatus implicit_param_forces(const physModel* m, physData* d, const physParamTable* t, const double* qacc,
                                        const double* vnew, double* R) {
  int nv = m->nv, nt = t->ntheta;
  double dt = m->opt.timestep;
  phys_param_forces(m, d, t, qacc, R);
  int passive = !(m->opt.disableflags & PHYS_DSBL_PASSIVE);
  size_t mark = phys_stack_mark(d);
  double* u = phys_stack_alloc(d, (size_t)nv);
  physStatus st = PHYS_OK;
  for (int e = 0; e < t->n && st == PHYS_OK; e++) {
    const physParam* p = t->param + e;
    if (p->kind == PHYS_PAR_POS && m->nspring > 0) {
      phys_data_warning(d, "phys_step derivatives: pos:BODY moves the springs of the implicit step's stiffness; "
                        "not differentiated");
      st = PHYS_ERR_MODEL;
    } else if (passive && (p->kind == PHYS_PAR_SPRING_STIFFNESS || p->kind == PHYS_PAR_SPRING_DAMPING)) {
      const double* y = p->kind == PHYS_PAR_SPRING_STIFFNESS ? vnew : qacc;
      memset(u, 0, sizeof(double) * (size_t)nv);
      phys_spring_eval(m, d, p->id, NULL, -1, u);
      double uy = 0;
      for (int i = 0; i < nv; i++) uy += u[i] * y[i];
      for (int i = 0; i < nv; i++) R[(size_t)i * nt + p->adr] += dt * u[i] * uy;
    } else if (passive && p->kind == PHYS_PAR_STIFFNESS) {
      int j = p->id, da = m->jnt_dofadr[j];
      int n = m->jnt_type[j] == PHYS_JNT_FREE ? 6 : (m->jnt_type[j] == PHYS_JNT_BALL ? 3 : 1);
      for (int i = da; i < da + n; i++) R[(size_t)i * nt + p->adr] += dt * vnew[i];
    }
  }
  for (size_t i = 0; i < (size_t)nv * nt; i++) R[i] = -R[i];
  phys_stack_free(d, mark);
  return st;
}

// A, B and P of the implicit step at (L, qacc) (step_record.h; any may be NULL, P needs t)
physStatus phys_implicit_step_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                       const physParamTable* t, double* A, double* B, double* P) {
  int nv = m->nv, nu = m->nu;
  size_t mark = phys_stack_mark(d);
  double* vnew = phys_stack_alloc(d, (size_t)nv);
  implicit_vnew(m, d, qacc, vnew);
  physStatus st = PHYS_OK;
  if (A) implicit_a(m, d, L, qacc, vnew, A);
  if (B && nu > 0) {
    double* V = B + (size_t)nv * nu;
    memset(V, 0, sizeof(double) * (size_t)nv * nu);
    phys_passive_deriv(m, d, NULL, NULL, V);
    phys_actuation_deriv(m, d, NULL, NULL, V);
    solve_columns(m, d, L, vnew, B, nu, 0);
  }
  if (P && t && t->ntheta > 0) {
    st = implicit_param_forces(m, d, t, qacc, vnew, P + (size_t)nv * t->ntheta);
    if (st == PHYS_OK) solve_columns(m, d, L, vnew, P, t->ntheta, 0);
  }
  phys_stack_free(d, mark);
  return st;
}

// y (ncol) = X' x for X (2nv x ncol) and x (2nv)
static void transpose_apply(const double* X, const double* x, double* y, int rows, int ncol) {
  memset(y, 0, sizeof(double) * (size_t)ncol);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < ncol; c++) y[c] += X[(size_t)r * ncol + c] * x[r];
}

// the reverse mode at (L, qacc): xbar = A' xbar_next, ubar = B' xbar_next, theta_bar = P' xbar_next (any NULL)
physStatus phys_implicit_step_vjp(const physModel* m, physData* d, const double* L, const double* qacc,
                                  const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                  double* theta_bar) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv, nt = t && theta_bar ? t->ntheta : 0;
  size_t mark = phys_stack_mark(d);
  double* A = xbar ? phys_stack_alloc(d, (size_t)n2 * n2) : NULL;
  double* B = ubar && nu > 0 ? phys_stack_alloc(d, (size_t)n2 * nu) : NULL;
  double* P = nt > 0 ? phys_stack_alloc(d, (size_t)n2 * nt) : NULL;
  physStatus st = phys_implicit_step_jacobian(m, d, L, qacc, t, A, B, P);
  if (st == PHYS_OK) {
    if (A) transpose_apply(A, xbar_next, xbar, n2, n2);
    if (B) transpose_apply(B, xbar_next, ubar, n2, nu);
    if (P) transpose_apply(P, xbar_next, theta_bar, n2, nt);
  }
  phys_stack_free(d, mark);
  return st;
}

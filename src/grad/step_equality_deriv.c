// step_equality_deriv.c - the step's derivatives with equality rows (step_equality_deriv.h).
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "equality.h"
#include "equality_deriv.h"
#include "factor.h"
#include "step.h"
#include "step_contact_deriv.h"
#include "step_equality_deriv.h"
#include "step_equality_pos_deriv.h"
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
  *ep = (physEqualityPoint){er.ne, er.J, er.P, er.lambda, vnew, NULL, NULL, NULL, er.rank, NULL};
  return ep;
}

// X (2nv x ncol, the smooth step's columns) += the impulse's response (file comment of the header): per column c,
// y = J_e V_c (+ C_c for the first nc columns when C: C = K(v+) + (beta/dt) J_e + J_e M~^-1 T for q, ne x nc and
// nv x nc), dlambda = -P y, F_c = (J_e' dlambda (+ T_c)) / dt, X += d(q+, v+)/dF
static void add_impulse_columns(const physModel* m, physData* d, const double* L, const double* qacc,
                                const physEqualityPoint* ep, double* X, int ncol, const double* C, const double* T,
                                int nc) {
  int nv = m->nv, ne = ep->ne;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* Xf = phys_stack_alloc(d, 2 * (size_t)nv * ncol);
  double* F = Xf + (size_t)nv * ncol;
  double* y = phys_stack_alloc(d, (size_t)ne);
  double* dl = phys_stack_alloc(d, (size_t)ne);
  const double* V = X + (size_t)nv * ncol;
  for (int c = 0; c < ncol; c++) {
    int qcol = C && c < nc;
    for (int i = 0; i < ne; i++) {
      double s = qcol ? C[(size_t)i * nc + c] : 0;
      for (int k = 0; k < nv; k++) s += ep->J[(size_t)i * nv + k] * V[(size_t)k * ncol + c];
      y[i] = s;
    }
    for (int i = 0; i < ne; i++) {
      double s = 0;
      for (int j = 0; j < ne; j++) s -= ep->P[(size_t)i * ne + j] * y[j];
      dl[i] = s;
    }
    for (int k = 0; k < nv; k++) {
      double s = qcol ? T[(size_t)k * nc + c] : 0;
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

// the rows' polycoef entries of t (parameters moving r and J_e): T (nv x nt) = dJ_e/dtheta' lambda and C (ne x nt)
// = dJ_e/dtheta v+ + (beta/dt) dr/dtheta + J_e M~^-1 T, the theta columns' counterparts of curvature_terms
// (zero elsewhere; L may be NULL: no J_e M~^-1 T part, for the constrained point whose F carries T itself);
// returns 1 if t has any
static int polycoef_terms(const physModel* m, physData* d, const double* L, const physEqualityPoint* ep,
                          const physParamTable* t, double* T, double* C) {
  int nv = m->nv, ne = ep->ne, nt = t->ntheta, any = 0;
  double bdt = m->opt.baumgarte / m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* dJ = phys_stack_alloc(d, (size_t)nv);
  double* w = phys_stack_alloc(d, 2 * (size_t)nv);
  memset(T, 0, sizeof(double) * (size_t)nv * nt);
  memset(C, 0, sizeof(double) * ((size_t)ne * nt + 1));
  for (int e = 0; e < t->n; e++) {
    const physParam* q = t->param + e;
    for (int c = 0; q->kind == PHYS_PAR_POLYCOEF && c < 5; c++) {
      double dr, s = 0;
      int row = phys_equality_polycoef_deriv(m, d, q->id, c, &dr, dJ), col = q->adr + c;
      if (row < 0) continue;
      any = 1;
      for (int k = 0; k < nv; k++) T[(size_t)k * nt + col] += dJ[k] * ep->lambda[row], s += dJ[k] * ep->vnew[k];
      C[(size_t)row * nt + col] += s + bdt * dr;
    }
  }
  for (int col = 0; any && L && col < nt; col++) {   // C += J_e M~^-1 T
    for (int k = 0; k < nv; k++) w[k] = T[(size_t)k * nt + col];
    phys_solve_m(m, L, w + nv, w);
    for (int i = 0; i < ne; i++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += ep->J[(size_t)i * nv + k] * w[nv + k];
      C[(size_t)i * nt + col] += s;
    }
  }
  phys_stack_free(d, mark);
  return any;
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
    add_impulse_columns(m, d, L, qacc, ep, A, 2 * nv, C, T, nv);
    phys_stack_free(d, mark);
  }
  if (B && m->nu > 0) add_impulse_columns(m, d, L, qacc, ep, B, m->nu, NULL, NULL, 0);
  if (P && t && t->ntheta > 0) {
    int nt = t->ntheta;
    size_t mark = phys_stack_mark(d);
    double* T = phys_stack_alloc(d, (size_t)nv * nt);
    double* C = phys_stack_alloc(d, (size_t)ep->ne * nt + 1);
    int rows = polycoef_terms(m, d, L, ep, t, T, C);
    add_impulse_columns(m, d, L, qacc, ep, P, nt, rows ? C : NULL, T, nt);
    phys_stack_free(d, mark);
  }
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

//---------------------------------------------------------------------------------------------------------
// with contacts or limits: the implicit function on top of the constrained step Phi (header comment)

// *m2 = m without its equality rows (PHYS_DSBL_EQUALITY): the model whose constrained step is Phi
static void model_without_rows(const physModel* m, physModel* m2) {
  *m2 = *m;
  m2->opt.disableflags |= PHYS_DSBL_EQUALITY;
}

// refuse (PHYS_ERR_MODEL, a warning naming what) the cases the implicit function does not cover
static physStatus refuse(physData* d, const char* what) {
  phys_data_warning(d, "phys_step derivatives: equality constraints at a state with contacts or limits together "
                    "with %s are not supported yet", what);
  return PHYS_ERR_MODEL;
}

// lambda (ne) and J (ne x nv) of the step's own stage from warm (into ep's arrays), 0 if the stage has no
// constraint, -1 (a warning) if refused or M~ failed (*st set)
static int stage_impulses(const physModel* m, physData* d, const physWarmStart* warm, double* J, double* lambda,
                          double* vsum, int* rank, physStatus* st) {
  size_t mark = phys_stack_mark(d);
  physContactList det = phys_contact_list_arena(d);
  physStepStage sg;
  int ok = phys_step_stage(m, d, NULL, warm, &det, &sg);
  *st = ok < 0 ? PHYS_ERR_NUMERIC : PHYS_OK;
  if (ok == 1 && *st == PHYS_OK) {
    memcpy(J, sg.eq.J, sizeof(double) * (size_t)sg.eq.ne * m->nv);
    memcpy(lambda, sg.eq.lambda, sizeof(double) * (size_t)sg.eq.ne);
    for (int k = 0; k < m->nv; k++) vsum[k] = sg.vnew[k] + sg.vpos[k];
    *rank = sg.eq.rank;
  }
  phys_stack_free(d, mark);
  return *st != PHYS_OK ? -1 : ok;
}

// S^+ (ep->P) from ne reverse passes of Phi: row i of S = (J_e Phi_vF' J_e,i')' / dt
static physStatus build_s(const physModel* m2, physData* d, physEqualityPoint* ep) {
  int nv = m2->nv, ne = ep->ne;
  double dt = m2->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* xb = phys_stack_alloc(d, 2 * (size_t)nv);
  double* fb = phys_stack_alloc(d, (size_t)nv);
  double* S = phys_stack_alloc(d, (size_t)ne * ne + 1);
  physStatus st = PHYS_OK;
  for (int i = 0; i < ne && st == PHYS_OK; i++) {
    memset(xb, 0, sizeof(double) * (size_t)nv);
    memcpy(xb + nv, ep->J + (size_t)i * nv, sizeof(double) * (size_t)nv);
    st = phys_constrained_vjp_at(m2, d, ep->cp, NULL, xb, NULL, NULL, NULL, fb);
    for (int j = 0; j < ne; j++) {   // S_ij = J_e,i Phi_vF J_e,j' / dt = (J_e,j . fb) / dt
      double s = 0;
      for (int k = 0; k < nv; k++) s += ep->J[(size_t)j * nv + k] * fb[k];
      S[(size_t)i * ne + j] = s / dt;
    }
  }
  if (st == PHYS_OK) {
    int rank = phys_lcp_pinv((double*)ep->P, d, S, ne);
    if (rank < ep->rank) st = refuse(d, "a sticking contact or an active limit that holds a motion an equality row holds too");
  }
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_equality_constrained_point(const physModel* m, physData* d, const physWarmStart* warm,
                                           physEqualityPoint** out) {
  int nv = m->nv, ne = phys_equality_rows(m);
  double dt = m->opt.timestep;
  *out = NULL;
  if (phys_frictionloss_count(m) > 0) return refuse(d, "frictionloss rows");
  if (m->residual) return refuse(d, "a residual network");
  physEqualityPoint* ep = (physEqualityPoint*)phys_stack_alloc(d, (sizeof(physEqualityPoint) + 7) / 8);
  double* J = phys_stack_alloc(d, (size_t)ne * nv + 1);
  double* lambda = phys_stack_alloc(d, (size_t)ne + 1);
  double* vsum = phys_stack_alloc(d, (size_t)nv);
  physStatus st;
  int rank = 0;
  int ok = stage_impulses(m, d, warm, J, lambda, vsum, &rank, &st);
  if (ok <= 0) return st;
  if (m->opt.gradflags & PHYS_GRAD_TOI) return refuse(d, "the time-of-impact correction");
  // Phi's point: the model without its rows under F = J_e' lambda / dt (through qfrc_applied, restored)
  double* keep = phys_stack_alloc(d, (size_t)nv);
  memcpy(keep, d->qfrc_applied, sizeof(double) * (size_t)nv);
  for (int i = 0; i < ne; i++)
    for (int k = 0; k < nv; k++) d->qfrc_applied[k] += J[(size_t)i * nv + k] * lambda[i] / dt;
  physModel m2;
  model_without_rows(m, &m2);
  physConstrainedPoint* cp = NULL;
  st = phys_constrained_linearize(&m2, d, warm, &cp);
  memcpy(d->qfrc_applied, keep, sizeof(double) * (size_t)nv);
  if (st != PHYS_OK) return st;
  if (!cp) return PHYS_ERR_NUMERIC;   // (the stage had constraints: Phi's has the same)
  physEqualityPos* pos = NULL;   // q+'s position correction in the constrained mechanism
  st = phys_equality_pos_build(m, d, cp, vsum, &pos);
  if (st != PHYS_OK) return st;
  double* vnew = phys_stack_alloc(d, (size_t)nv);
  for (int k = 0; k < nv; k++) vnew[k] = d->qvel[k] + dt * d->qacc[k];
  double* T = phys_stack_alloc(d, (size_t)nv * nv);
  double* C = phys_stack_alloc(d, (size_t)ne * nv + 1);
  double* P = phys_stack_alloc(d, (size_t)ne * ne + 1);
  phys_equality_curvature_t(m, d, lambda, T);
  phys_equality_curvature(m, d, vnew, C);
  double bdt = m->opt.baumgarte / dt;
  for (size_t i = 0; i < (size_t)ne * nv; i++) C[i] += bdt * J[i];
  *ep = (physEqualityPoint){ne, J, P, lambda, vnew, cp, T, C, rank, pos};
  st = build_s(&m2, d, ep);
  if (st == PHYS_OK) *out = ep;
  return st;
}

// the polycoef entries of t in the constrained reverse mode: F = J_e' lambda / dt gains T_theta / dt and the rows'
// equation dJ_e/dtheta v+ + (beta/dt) dr/dtheta, so theta_bar += Fbar' T_theta / dt + y' C_theta (polycoef_terms
// without its J_e M~^-1 T part, which Phi's own F carries)
static void polycoef_reverse(const physModel* m, physData* d, const physEqualityPoint* ep, const physParamTable* t,
                             const double* fb, const double* y, double* theta_bar) {
  int nv = m->nv, ne = ep->ne, nt = t->ntheta;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* T = phys_stack_alloc(d, (size_t)nv * nt);
  double* C = phys_stack_alloc(d, (size_t)ne * nt + 1);
  if (polycoef_terms(m, d, NULL, ep, t, T, C))
    for (int col = 0; col < nt; col++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += fb[k] * T[(size_t)k * nt + col] / dt;
      for (int i = 0; i < ne; i++) s += y[i] * C[(size_t)i * nt + col];
      theta_bar[col] += s;
    }
  phys_stack_free(d, mark);
}

// the reverse mode through the implicit function over Phi (xbar, ubar, theta_bar overwritten)
static physStatus implicit_vjp(const physModel* m, physData* d, const physEqualityPoint* ep, const physParamTable* t,
                               const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                               double* force_bar) {
  int nv = m->nv, ne = ep->ne;
  double dt = m->opt.timestep;
  physModel m2;
  model_without_rows(m, &m2);
  size_t mark = phys_stack_mark(d);
  double* fb = phys_stack_alloc(d, (size_t)nv);
  double* lb = phys_stack_alloc(d, 2 * (size_t)ne + 1);
  double* y = lb + ne;
  double* psib = phys_stack_alloc(d, 2 * (size_t)nv);
  double* xq = phys_stack_alloc(d, 2 * (size_t)nv);
  // lambdabar = J_e Phi_F' xbar+ / dt, y = -S^+' lambdabar
  physStatus st = phys_constrained_vjp_at(&m2, d, ep->cp, NULL, xbar_next, NULL, NULL, NULL, fb);
  for (int i = 0; i < ne; i++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += ep->J[(size_t)i * nv + k] * fb[k];
    lb[i] = s / dt;
  }
  for (int j = 0; j < ne; j++) {
    double s = 0;
    for (int i = 0; i < ne; i++) s -= ep->P[(size_t)i * ne + j] * lb[i];
    y[j] = s;
  }
  // Phi's reverse mode of xbar+ + (0, J_e' y)
  memcpy(psib, xbar_next, sizeof(double) * 2 * (size_t)nv);
  for (int i = 0; i < ne; i++)
    for (int k = 0; k < nv; k++) psib[nv + k] += ep->J[(size_t)i * nv + k] * y[i];
  if (st == PHYS_OK) st = phys_constrained_vjp_at(&m2, d, ep->cp, t, psib, xq, ubar, theta_bar, fb);
  if (st == PHYS_OK && xbar) {   // q part += T' Fbar / dt + C' y
    for (int c = 0; c < nv; c++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += ep->T[(size_t)k * nv + c] * fb[k];
      s /= dt;
      for (int i = 0; i < ne; i++) s += ep->C[(size_t)i * nv + c] * y[i];
      xbar[c] = xq[c] + s;
      xbar[nv + c] = xq[nv + c];
    }
  }
  if (st == PHYS_OK && theta_bar && t) polycoef_reverse(m, d, ep, t, fb, y, theta_bar);
  if (st == PHYS_OK && force_bar) memcpy(force_bar, fb, sizeof(double) * (size_t)nv);
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_equality_constrained_vjp(const physModel* m, physData* d, const physEqualityPoint* ep,
                                         const physParamTable* t, const double* xbar_next, double* xbar,
                                         double* ubar, double* theta_bar, double* force_bar) {
  if (!ep->pos) return implicit_vjp(m, d, ep, t, xbar_next, xbar, ubar, theta_bar, force_bar);
  // with position correction q+ = q (+) dt (v+ + vpos) is composed here (step_equality_pos_deriv.h): Phi's
  // reverse mode sees v+'s cotangent only, vbar+ + dt D' qbar+
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* xn = phys_stack_alloc(d, 2 * (size_t)nv);
  double* vb = phys_stack_alloc(d, (size_t)nv);
  memset(xn, 0, sizeof(double) * (size_t)nv);
  physStatus st = phys_equality_pos_vjp(m, d, ep->pos, t, xbar_next, vb, NULL, NULL);
  for (int k = 0; k < nv; k++) xn[nv + k] = xbar_next[nv + k] + vb[k];
  if (st == PHYS_OK) st = implicit_vjp(m, d, ep, t, xn, xbar, ubar, theta_bar, force_bar);
  if (st == PHYS_OK && (xbar || theta_bar))
    st = phys_equality_pos_vjp(m, d, ep->pos, t, xbar_next, vb, xbar, t ? theta_bar : NULL);
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_equality_constrained_jacobian(const physModel* m, physData* d, const physEqualityPoint* ep,
                                              const physParamTable* t, double* A, double* B, double* P) {
  int n2 = 2 * m->nv, nu = m->nu, nt = P && t ? t->ntheta : 0;
  size_t mark = phys_stack_mark(d);
  double* e = phys_stack_alloc(d, (size_t)n2);
  double* xb = phys_stack_alloc(d, (size_t)n2);
  double* ub = phys_stack_alloc(d, (size_t)nu + 1);
  double* tb = phys_stack_alloc(d, (size_t)nt + 1);
  physStatus st = PHYS_OK;
  for (int r = 0; r < n2 && st == PHYS_OK; r++) {   // row r of A, B, P: the reverse mode of e_r
    memset(e, 0, sizeof(double) * (size_t)n2);
    e[r] = 1;
    st = phys_equality_constrained_vjp(m, d, ep, nt > 0 ? t : NULL, e, A ? xb : NULL, B && nu > 0 ? ub : NULL,
                                       nt > 0 ? tb : NULL, NULL);
    if (A) memcpy(A + (size_t)r * n2, xb, sizeof(double) * (size_t)n2);
    if (B && nu > 0) memcpy(B + (size_t)r * nu, ub, sizeof(double) * (size_t)nu);
    if (nt > 0) memcpy(P + (size_t)r * nt, tb, sizeof(double) * (size_t)nt);
  }
  phys_stack_free(d, mark);
  return st;
}

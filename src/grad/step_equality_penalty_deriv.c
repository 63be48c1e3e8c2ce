// step_equality_penalty_deriv.c - penalty's equality spring-dampers differentiated (step_equality_penalty_deriv.h).
#include "step_equality_penalty_deriv.h"

#include <string.h>

#include "equality.h"
#include "equality_deriv.h"
#include "grad.h"

physEqPenaltyPoint* phys_equality_penalty_point(const physModel* m, physData* d, const double* qLD) {
  int ne = phys_equality_rows(m), nb = 0;
  if (ne == 0) return NULL;
  double dt = m->opt.timestep;
  physEqPenaltyPoint* ep = (physEqPenaltyPoint*)phys_stack_alloc(d, (sizeof(physEqPenaltyPoint) + 7) / 8);
  memset(ep, 0, sizeof *ep);
  phys_equality_assemble(m, d, qLD, &ep->er);
  for (int e = 0; e < m->neq; e++) nb += m->eq_active[e] != 0;
  size_t ni = ((size_t)nb * sizeof(int) + sizeof(double) - 1) / sizeof(double) + 1;
  ep->badr = (int*)phys_stack_alloc(d, ni);
  ep->bdim = (int*)phys_stack_alloc(d, ni);
  ep->beq = (int*)phys_stack_alloc(d, ni);
  ep->kk = phys_stack_alloc(d, (size_t)ne);
  ep->cc = phys_stack_alloc(d, (size_t)ne);
  ep->G = phys_stack_alloc(d, (size_t)ne * ne);
  ep->L = phys_stack_alloc(d, (size_t)ne * ne);
  memset(ep->G, 0, sizeof(double) * (size_t)ne * ne);
  memset(ep->L, 0, sizeof(double) * (size_t)ne * ne);
  double Gb[36], Lb[36];
  for (int e = 0, row = 0; e < m->neq; e++) {
    if (!m->eq_active[e]) continue;
    int dim = phys_equality_dim(m, e);
    double k, b;
    phys_equality_spring(m, e, &k, &b);
    phys_equality_block_inertia(m, d, &ep->er, row, dim, Gb, Lb);
    for (int i = 0; i < dim; i++) {
      ep->kk[row + i] = k;
      ep->cc[row + i] = dt * k + b;
      for (int j = 0; j < dim; j++) {
        ep->G[(size_t)(row + i) * ne + row + j] = Gb[i * dim + j];
        ep->L[(size_t)(row + i) * ne + row + j] = Lb[i * dim + j];
      }
    }
    ep->badr[ep->nb] = row, ep->bdim[ep->nb] = dim, ep->beq[ep->nb++] = e;
    row += dim;
  }
  return ep;
}

void phys_equality_penalty_prepare(const physModel* m, physData* d, physEqPenaltyPoint* ep) {
  int nv = m->nv, ne = ep->er.ne;
  size_t nn = (size_t)nv * nv;
  ep->D = phys_stack_alloc(d, (size_t)ne * nn);
  double* y = phys_stack_alloc(d, (size_t)nv);
  for (int j = 0; j < ne; j++) {   // D_j = d(M Y_j)/dq
    for (int k = 0; k < nv; k++) y[k] = ep->er.WJ[(size_t)k * ne + j];
    phys_rnea_mass_deriv(m, d, y, ep->D + (size_t)j * nn);
  }
}

//---------------------------------------------------------------------------------------------------------
// shared pieces

// out (ne) = X a for the block-diagonal X (ne x ne) of ep
static void block_mul(const physEqPenaltyPoint* ep, const double* X, const double* a, double* out) {
  int ne = ep->er.ne;
  for (int b = 0; b < ep->nb; b++)
    for (int i = ep->badr[b]; i < ep->badr[b] + ep->bdim[b]; i++) {
      double s = 0;
      for (int j = ep->badr[b]; j < ep->badr[b] + ep->bdim[b]; j++) s += X[(size_t)i * ne + j] * a[j];
      out[i] = s;
    }
}

// out (ne) = J a (a: nv)
static void rows_mul(const physModel* m, const physEqPenaltyPoint* ep, const double* J, const double* a,
                     double* out) {
  int nv = m->nv;
  for (int i = 0; i < ep->er.ne; i++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += J[(size_t)i * nv + k] * a[k];
    out[i] = s;
  }
}

// out (nv) += s J' a (a: ne)
static void rows_tmul_add(const physModel* m, const physEqPenaltyPoint* ep, const double* J, const double* a,
                          double s, double* out) {
  int nv = m->nv;
  for (int i = 0; i < ep->er.ne; i++) {
    if (a[i] == 0) continue;
    for (int k = 0; k < nv; k++) out[k] += s * J[(size_t)i * nv + k] * a[i];
  }
}

// x = v + dt a_k (nv) and the spring-damper's y = k r + c J x, z = Lambda y (ne)
static void forces_at(const physModel* m, const physData* d, const physEqPenaltyPoint* ep, const double* ak,
                      double* x, double* y, double* z) {
  double dt = m->opt.timestep;
  for (int k = 0; k < m->nv; k++) x[k] = d->qvel[k] + dt * ak[k];
  rows_mul(m, ep, ep->er.J, x, y);
  for (int i = 0; i < ep->er.ne; i++) y[i] = ep->kk[i] * ep->er.r[i] + ep->cc[i] * y[i];
  block_mul(ep, ep->L, y, z);
}

//---------------------------------------------------------------------------------------------------------
// forward mode

// dG (ne x ne, block-diagonal) along dq: dG_ij = dJ_i Y_j + Y_i' dJ_j' - Y_i' (D_j dq)
static void delassus_jvp(const physModel* m, const physEqPenaltyPoint* ep, const double* dJ, const double* dq,
                         double* dMY, double* dG) {
  int nv = m->nv, ne = ep->er.ne;
  const double* WJ = ep->er.WJ;
  for (int j = 0; j < ne; j++) {
    const double* Dj = ep->D + (size_t)j * nv * nv;
    for (int k = 0; k < nv; k++) {
      double s = 0;
      for (int l = 0; l < nv; l++) s += Dj[(size_t)k * nv + l] * dq[l];
      dMY[(size_t)k * ne + j] = s;
    }
  }
  for (int b = 0; b < ep->nb; b++)
    for (int i = ep->badr[b]; i < ep->badr[b] + ep->bdim[b]; i++)
      for (int j = ep->badr[b]; j < ep->badr[b] + ep->bdim[b]; j++) {
        double s = 0;
        for (int k = 0; k < nv; k++)
          s += dJ[(size_t)i * nv + k] * WJ[(size_t)k * ne + j] + dJ[(size_t)j * nv + k] * WJ[(size_t)k * ne + i] -
               WJ[(size_t)k * ne + i] * dMY[(size_t)k * ne + j];
        dG[(size_t)i * ne + j] = s;
      }
}

// dLy (ne) = dLambda y at constant rank: -L dG L y + L L dG (I - G L) y + (I - L G) dG L L y (header comment)
static void lambda_jvp(const physEqPenaltyPoint* ep, const double* dG, const double* y, const double* z,
                       double* w, double* dLy) {
  int ne = ep->er.ne;
  double *a = w, *b = w + ne, *c = w + 2 * ne;
  block_mul(ep, dG, z, a);       // -L dG z
  block_mul(ep, ep->L, a, dLy);
  for (int i = 0; i < ne; i++) dLy[i] = -dLy[i];
  block_mul(ep, ep->G, z, a);    // L L dG (y - G z)
  for (int i = 0; i < ne; i++) a[i] = y[i] - a[i];
  block_mul(ep, dG, a, b);
  block_mul(ep, ep->L, b, c);
  block_mul(ep, ep->L, c, b);
  for (int i = 0; i < ne; i++) dLy[i] += b[i];
  block_mul(ep, ep->L, z, a);    // (I - L G) dG L z
  block_mul(ep, dG, a, b);
  block_mul(ep, ep->G, b, c);
  block_mul(ep, ep->L, c, a);
  for (int i = 0; i < ne; i++) dLy[i] += b[i] - a[i];
}

void phys_equality_penalty_jvp(const physModel* m, physData* d, const physEqPenaltyPoint* ep, const double* ak,
                               const double* dq, const double* dv, double* r) {
  int nv = m->nv, ne = ep->er.ne, moved = 0;
  const double* J = ep->er.J;
  size_t mark = phys_stack_mark(d);
  double* x = phys_stack_alloc(d, (size_t)nv);
  double* dMY = phys_stack_alloc(d, (size_t)nv * ne);
  double* dJ = phys_stack_alloc(d, (size_t)ne * nv);
  double* dG = phys_stack_alloc(d, (size_t)ne * ne);
  double* v = phys_stack_alloc(d, 9 * (size_t)ne);   // y, z, dy, dz, t1, w (3 ne), dLy
  double *y = v, *z = v + ne, *dy = v + 2 * ne, *dz = v + 3 * ne, *t1 = v + 4 * ne, *w = v + 5 * ne;
  double* dLy = v + 8 * ne;
  forces_at(m, d, ep, ak, x, y, z);
  for (int k = 0; k < nv; k++) moved |= dq[k] != 0;
  memset(dJ, 0, sizeof(double) * (size_t)ne * nv);
  memset(dLy, 0, sizeof(double) * (size_t)ne);
  if (moved) {
    phys_equality_jvp(m, d, dq, NULL, dJ);
    delassus_jvp(m, ep, dJ, dq, dMY, dG);
    lambda_jvp(ep, dG, y, z, w, dLy);
  }
  // dy = k J dq + c (dJ x + J dv); dz = dLambda y + Lambda dy; r -= dJ' z + J' dz
  rows_mul(m, ep, J, dq, dy);
  rows_mul(m, ep, dJ, x, t1);
  rows_mul(m, ep, J, dv, w);
  for (int i = 0; i < ne; i++) dy[i] = ep->kk[i] * dy[i] + ep->cc[i] * (t1[i] + w[i]);
  block_mul(ep, ep->L, dy, dz);
  for (int i = 0; i < ne; i++) dz[i] += dLy[i];
  rows_tmul_add(m, ep, dJ, z, -1, r);
  rows_tmul_add(m, ep, J, dz, -1, r);
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// reverse mode

// Omega (ne x ne, block-diagonal) with u' dLambda y = sum_ij Omega_ij dG_ij: Omega = -p z' + p2 yp' + up z2', p = L u,
// p2 = L p, z2 = L z, yp = y - G z, up = u - G p (lambda_jvp transposed); w: 4 ne scratch
static void lambda_weights(const physEqPenaltyPoint* ep, const double* u, const double* y, const double* z,
                           const double* p, double* w, double* Om) {
  int ne = ep->er.ne;
  double *p2 = w, *z2 = w + ne, *yp = w + 2 * ne, *up = w + 3 * ne;
  block_mul(ep, ep->L, p, p2);
  block_mul(ep, ep->L, z, z2);
  block_mul(ep, ep->G, z, yp);
  block_mul(ep, ep->G, p, up);
  for (int i = 0; i < ne; i++) yp[i] = y[i] - yp[i], up[i] = u[i] - up[i];
  for (int b = 0; b < ep->nb; b++)
    for (int i = ep->badr[b]; i < ep->badr[b] + ep->bdim[b]; i++)
      for (int j = ep->badr[b]; j < ep->badr[b] + ep->bdim[b]; j++)
        Om[(size_t)i * ne + j] = -p[i] * z[j] + p2[i] * yp[j] + up[i] * z2[j];
}

// the inertia's part in reverse: -sum_ij Omega_ij Y_i' dM~ Y_j = -sum_j gamma_j' dM~ Y_j, gamma_j = sum_i Omega_ij
// Y_i: qbar += grad_q (gamma_j' M Y_j), tbar += gamma_j' (R(Y_j) - R(0)) (params.h; -R' of phys_param_forces_vjp)
static void inertia_reverse(const physModel* m, physData* d, const physEqPenaltyPoint* ep, const physParamTable* t,
                            const double* Om, double* qbar, double* tbar) {
  int nv = m->nv, ne = ep->er.ne, nt = t && tbar ? t->ntheta : 0;
  const double* WJ = ep->er.WJ;
  size_t mark = phys_stack_mark(d);
  double* Y = phys_stack_alloc(d, (size_t)nv);
  double* gam = phys_stack_alloc(d, (size_t)nv);
  double* g = phys_stack_alloc(d, (size_t)nv);
  double* tt = phys_stack_alloc(d, (size_t)nt + 1);
  for (int j = 0; j < ne; j++) {
    int any = 0;
    for (int k = 0; k < nv; k++) {
      double s = 0;
      for (int i = 0; i < ne; i++) s += Om[(size_t)i * ne + j] * WJ[(size_t)k * ne + i];
      gam[k] = s, Y[k] = WJ[(size_t)k * ne + j];
      any |= s != 0;
    }
    if (!any) continue;
    phys_rnea_mass_vjp(m, d, Y, gam, g);
    for (int k = 0; k < nv; k++) qbar[k] += g[k];
    if (nt == 0) continue;
    phys_param_forces_vjp(m, d, t, Y, gam, tt);
    for (int e = 0; e < nt; e++) tbar[e] -= tt[e];
    memset(Y, 0, sizeof(double) * (size_t)nv);
    phys_param_forces_vjp(m, d, t, Y, gam, tt);
    for (int e = 0; e < nt; e++) tbar[e] += tt[e];
  }
  phys_stack_free(d, mark);
}

// dk/dsolref and db/dsolref (2 each) of constraint e's spring and damper (phys_equality_spring: k = 1/(d^2 tc^2 dr^2),
// b = 2/(d tc) with tc = max(solref[0], 2 dt); or k = -solref[0]/d^2, b = -solref[1]/d)
static void spring_deriv(const physModel* m, int e, double dk[2], double db[2]) {
  const double* ref = m->eq_solref + 2 * e;
  double k, b, dmax = m->eq_solimp[5 * e + 1];
  if (!(dmax > 1e-4)) dmax = 1e-4;
  if (dmax > 0.9999) dmax = 0.9999;
  phys_equality_spring(m, e, &k, &b);
  if (ref[0] > 0) {
    int held = !(ref[0] > 2 * m->opt.timestep);
    dk[0] = held ? 0 : -2 * k / ref[0], db[0] = held ? 0 : -b / ref[0];
    dk[1] = -2 * k / ref[1], db[1] = 0;
  } else {
    dk[0] = -1 / (dmax * dmax), db[0] = 0;
    dk[1] = 0, db[1] = -1 / dmax;
  }
}

// the rows' own parameters in reverse (lam' E's gradient: <dJ/dtheta, B> + (k o p) . dr/dtheta through polycoef;
// d/dk = p . (r + dt J x), d/db = p . J x per constraint through solref): tbar -= it; Jx = J x (ne)
static void row_params_reverse(const physModel* m, const physData* d, const physEqPenaltyPoint* ep,
                               const physParamTable* t, const double* B, const double* p, const double* Jx,
                               double* dJ, double* tbar) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  for (int e = 0; e < t->n; e++) {
    const physParam* q = t->param + e;
    if (q->kind == PHYS_PAR_POLYCOEF)
      for (int c = 0; c < 5; c++) {
        double dr, g = 0;
        int row = phys_equality_polycoef_deriv(m, d, q->id, c, &dr, dJ);
        if (row < 0) continue;
        for (int k = 0; k < nv; k++) g += dJ[k] * B[(size_t)row * nv + k];
        tbar[q->adr + c] -= g + ep->kk[row] * p[row] * dr;
      }
    if (q->kind != PHYS_PAR_SOLREF) continue;
    for (int b = 0; b < ep->nb; b++) {
      if (ep->beq[b] != q->id) continue;
      double sr = 0, sx = 0, dk[2], db[2];
      for (int i = ep->badr[b]; i < ep->badr[b] + ep->bdim[b]; i++) sr += p[i] * ep->er.r[i], sx += p[i] * Jx[i];
      spring_deriv(m, q->id, dk, db);
      for (int c = 0; c < 2; c++) tbar[q->adr + c] -= dk[c] * (sr + dt * sx) + db[c] * sx;
    }
  }
}

void phys_equality_penalty_vjp(const physModel* m, physData* d, const physEqPenaltyPoint* ep,
                               const physParamTable* t, const double* ak, const double* lam, double* qbar,
                               double* vbar, double* tbar) {
  int nv = m->nv, ne = ep->er.ne;
  const double *J = ep->er.J, *WJ = ep->er.WJ;
  size_t mark = phys_stack_mark(d);
  double* x = phys_stack_alloc(d, (size_t)nv);
  double* g = phys_stack_alloc(d, (size_t)nv);
  double* B = phys_stack_alloc(d, (size_t)ne * nv);
  double* Om = phys_stack_alloc(d, (size_t)ne * ne);
  double* v = phys_stack_alloc(d, 9 * (size_t)ne);   // y, z, u, p, w (4 ne), kp
  double *y = v, *z = v + ne, *u = v + 2 * ne, *p = v + 3 * ne, *w = v + 4 * ne, *kp = v + 8 * ne;
  memset(Om, 0, sizeof(double) * (size_t)ne * ne);
  // lam' E = z' J lam = u' z, u = J lam: lam' dE = z' dJ lam + u' dLambda y + p' dy, p = Lambda u
  forces_at(m, d, ep, ak, x, y, z);
  rows_mul(m, ep, J, lam, u);
  block_mul(ep, ep->L, u, p);
  lambda_weights(ep, u, y, z, p, w, Om);
  // the weights of dJ: z lam' + c p x' + sum_j (Omega + Omega')_ij Y_j'
  for (int i = 0; i < ne; i++)
    for (int k = 0; k < nv; k++) {
      double s = z[i] * lam[k] + ep->cc[i] * p[i] * x[k];
      for (int j = 0; j < ne; j++) s += (Om[(size_t)i * ne + j] + Om[(size_t)j * ne + i]) * WJ[(size_t)k * ne + j];
      B[(size_t)i * nv + k] = s;
    }
  phys_equality_curvature_w(m, d, B, g);
  for (int i = 0; i < ne; i++) kp[i] = ep->kk[i] * p[i];
  for (int k = 0; k < nv; k++) qbar[k] -= g[k];
  rows_tmul_add(m, ep, J, kp, -1, qbar);    // dr = J dq
  for (int i = 0; i < ne; i++) kp[i] = ep->cc[i] * p[i];
  rows_tmul_add(m, ep, J, kp, -1, vbar);
  inertia_reverse(m, d, ep, t, Om, qbar, tbar);
  if (t && tbar) {   // (kp: J x, g: scratch)
    rows_mul(m, ep, J, x, kp);
    row_params_reverse(m, d, ep, t, B, p, kp, g, tbar);
  }
  phys_stack_free(d, mark);
}

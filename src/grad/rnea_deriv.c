// rnea_deriv.c - analytical derivatives of inverse dynamics tau = RNEA(q, v, a) with respect to the
// configuration (tangent coordinates, grad.h) and the velocity, and its reverse mode (phys_rnea_vjp).
//
// Carpentier & Mansard, "Analytical derivatives of rigid body dynamics algorithms" (RSS 2018), written here
// in the world-aligned spatial algebra of src/math/spatial.h (all quantities about the world origin), where
// moving tangent coordinate j by eps moves everything after dof j rigidly by eps S_j (S = cdof): a motion m
// carried along changes by S_j x m, a force by S_j x* f, an inertia by [S_j x*] I - I [S_j x].
//
// The primal (phys_rnea): v_b = sum_k S_k qd_k over the dofs k on b's path, Sdot_k = w_k x S_k (w_k the
// velocity of the frame that carries S_k: the body velocity up to the end of k's group, cdof_dot),
//   a_b = a_0 + sum_k (Sdot_k qd_k + S_k qdd_k),  f_b = I_b a_b + v_b x* I_b v_b,  F_b = sum_subtree f,
//   tau_k = S_k . F_body(k).
// For each dof j let vpre_j, apre_j be the velocity and acceleration accumulated before j's group (the part
// of the path not moved by j). Then for every body b after j:
//   dv_b/dq_j = S_j x (v_b - vpre_j),    da_b/dq_j = S_j x (a_b - apre_j) - (S_j x vpre_j) x (v_b - vpre_j),
//   dv_b/dqd_j = S_j,                    da_b/dqd_j = Sdot_j + S_j x (v_b - vpre_j).
// With u_j = S_j x vpre_j, Psi_j = S_j x apre_j - u_j x vpre_j, the deviation of df_b from rigid transport is
//   -I_b Psi_j - B_b u_j  (q),   I_b (Sdot_j - u_j) + B_b S_j  (qd),
// B_b u = I_b (u x v_b) + u x* (I_b v_b) + v_b x* (I_b u) (Pinocchio's B(v, I)), all linear in I_b and B_b, so
// subtree sums Ic (composite inertia) and Bc do the work. In blocks (u = (uw, ul), I = (m, h, Ib about the
// origin), v = (w, vo), momentum (n, f) = I v) B = [[T, 0], [-2 [f], 0]] with
// T = [w] Ib - Ib [w] - [n] - (h vo' + vo h' - 2 (h . vo) E): the linear parts cancel, so a body's B is 12
// numbers (T, f) and Bc u = (T uw, -2 f x uw), Bc' s = (T' sw + 2 f x sl, 0). With alpha_k = Ic S_k, beta_k = Bc' S_k (at
// body(k)), and for j: y_j = S_j x* F - Ic Psi_j - Bc u_j, z_j = Ic (Sdot_j - u_j) + Bc S_j (at body(j)):
//   k after j:         dtau_k/dq_j = -alpha_k . Psi_j - beta_k . u_j,   dtau_k/dqd_j = alpha_k . (Sdot_j - u_j)
//                                    + beta_k . S_j,                     M_kj = alpha_k . S_j
//   k strictly before: dtau_k/dq_j = S_k . y_j,   dtau_k/dqd_j = S_k . z_j,   M_kj = S_k . alpha_j
// (for k after j the change of S_k itself, (S_j x S_k) . F, cancels the transport term S_k . S_j x* F).
// Everything else is zero. Cost O(nv * depth) for the matrices, O(nv) for the reverse mode.
#include <string.h>

#include "dyn.h"
#include "grad.h"
#include "spatial.h"

//---------------------------------------------------------------------------------------------------------
// dof groups

// first dof of k's group: ball (3), free translation (3), free rotation (3), hinge/slide itself
int phys_dof_group(const physModel* m, int k) {
  int j = m->dof_jntid[k], da = m->jnt_dofadr[j];
  switch (m->jnt_type[j]) {
    case PHYS_JNT_FREE:
      return k < da + 3 ? da : da + 3;
    case PHYS_JNT_BALL:
      return da;
    default:
      return k;
  }
}

//---------------------------------------------------------------------------------------------------------
// workspace

// per-dof and per-body quantities of the derivative
typedef struct rneaDerivWork_ {
  double* vpre;   // velocity before the dof's group (nv x 6)
  double* apre;   // acceleration before the dof's group (nv x 6)
  double* u;      // S x vpre (nv x 6)
  double* psi;    // S x apre - u x vpre (nv x 6)
  double* alpha;  // Ic S at the dof's body (nv x 6)
  double* beta;   // Bc' S at the dof's body (nv x 6)
  double* y;      // S x* F - Ic psi - Bc u (nv x 6)
  double* z;      // Ic (Sdot - u) + Bc S (nv x 6)
  double* a;      // body accelerations (nbody x 6)
  double* F;      // subtree forces (nbody x 6)
  double* Ic;     // composite inertias, packed (nbody x 10)
  double* Bc;     // composite B: T (3x3 row-major) and momentum f (3) (nbody x 12)
  int* grp;       // first dof of each dof's group (nv)
} rneaDerivWork;

// take the workspace from d's arena (caller marks and frees)
static void work_alloc(const physModel* m, physData* d, rneaDerivWork* w) {
  size_t nv = (size_t)m->nv, nb = (size_t)m->nbody;
  w->vpre = phys_stack_alloc(d, 6 * nv);
  w->apre = phys_stack_alloc(d, 6 * nv);
  w->u = phys_stack_alloc(d, 6 * nv);
  w->psi = phys_stack_alloc(d, 6 * nv);
  w->alpha = phys_stack_alloc(d, 6 * nv);
  w->beta = phys_stack_alloc(d, 6 * nv);
  w->y = phys_stack_alloc(d, 6 * nv);
  w->z = phys_stack_alloc(d, 6 * nv);
  w->a = phys_stack_alloc(d, 6 * nb);
  w->F = phys_stack_alloc(d, 6 * nb);
  w->Ic = phys_stack_alloc(d, 10 * nb);
  w->Bc = phys_stack_alloc(d, 12 * nb);
  w->grp = (int*)phys_stack_alloc(d, nv);
  for (int k = 0; k < m->nv; k++) w->grp[k] = phys_dof_group(m, k);
}

//---------------------------------------------------------------------------------------------------------
// small spatial helpers

// res = Bc x = (T xw, -2 f x xw)
static inline void bmat_vec(double* restrict res, const double* restrict Bc, const double* restrict x) {
  const double *T = Bc, *f = Bc + 9;
  for (int r = 0; r < 3; r++) res[r] = T[3 * r] * x[0] + T[3 * r + 1] * x[1] + T[3 * r + 2] * x[2];
  res[3] = -2 * (f[1] * x[2] - f[2] * x[1]);
  res[4] = -2 * (f[2] * x[0] - f[0] * x[2]);
  res[5] = -2 * (f[0] * x[1] - f[1] * x[0]);
}

// res = Bc' x = (T' xw + 2 f x xl, 0)
static inline void bmatt_vec(double* restrict res, const double* restrict Bc, const double* restrict x) {
  const double *T = Bc, *f = Bc + 9, *xl = x + 3;
  for (int c = 0; c < 3; c++) res[c] = T[c] * x[0] + T[3 + c] * x[1] + T[6 + c] * x[2];
  res[0] += 2 * (f[1] * xl[2] - f[2] * xl[1]);
  res[1] += 2 * (f[2] * xl[0] - f[0] * xl[2]);
  res[2] += 2 * (f[0] * xl[1] - f[1] * xl[0]);
  res[3] = res[4] = res[5] = 0;
}

// a body's B (12 numbers: T row-major, f) from its inertia I = (m, h, Ib) and velocity v = (w, vo):
// T = [w] Ib - Ib [w] - [n] - (h vo' + vo h' - 2 (h . vo) E), (n, f) = I v
static void body_bmat(double Bc[12], const double I[10], const double v[6]) {
  const double *h = I + 1, *Ip = I + 4, *w = v, *vo = v + 3;
  const double Ib[9] = {Ip[0], Ip[3], Ip[4], Ip[3], Ip[1], Ip[5], Ip[4], Ip[5], Ip[2]};
  const double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
  double mom[6];
  phys_inert_mul(mom, I, v);
  const double *n = mom, hv = h[0] * vo[0] + h[1] * vo[1] + h[2] * vo[2];
  const double N[9] = {0, -n[2], n[1], n[2], 0, -n[0], -n[1], n[0], 0};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double wi = 0, iw = 0;
      for (int k = 0; k < 3; k++) {
        wi += W[3 * r + k] * Ib[3 * k + c];
        iw += Ib[3 * r + k] * W[3 * k + c];
      }
      Bc[3 * r + c] = wi - iw - N[3 * r + c] - (h[r] * vo[c] + vo[r] * h[c]) + 2 * hv * (r == c);
    }
  Bc[9] = mom[3];
  Bc[10] = mom[4];
  Bc[11] = mom[5];
}

//---------------------------------------------------------------------------------------------------------
// passes

// forward pass: vpre, apre per dof; a_b, f_b (into F) and B_b (into Bc), I_b (into Ic) per body
// (mass: zero velocity and no gravity, RNEA(q, 0, qacc) = M(q) qacc; B is then 0 and not formed)
static void forward_pass(const physModel* m, const physData* d, const double* qacc, int mass, rneaDerivWork* w) {
  static const double zero6[6] = {0};
  memset(w->a, 0, 6 * sizeof(double));
  if (!mass && !(m->opt.disableflags & PHYS_DSBL_GRAVITY))
    for (int i = 0; i < 3; i++) w->a[3 + i] = -m->opt.gravity[i];
  for (int b = 1; b < m->nbody; b++) {
    int p = m->body_parentid[b], da = m->body_dofadr[b], nd = m->body_dofnum[b];
    double v[6], *a = w->a + 6 * b, gv[6], ga[6];
    memcpy(v, mass ? zero6 : d->cvel + 6 * p, sizeof(v));
    memcpy(a, w->a + 6 * p, 6 * sizeof(double));
    for (int k = da; k < da + nd; k++) {
      // a group starts: its dofs all see the velocity and acceleration accumulated so far
      if (w->grp[k] == k) {
        memcpy(gv, v, sizeof(gv));
        memcpy(ga, a, sizeof(ga));
      }
      memcpy(w->vpre + 6 * k, gv, sizeof(gv));
      memcpy(w->apre + 6 * k, ga, sizeof(ga));
      const double *S = d->cdof + 6 * k, *Sd = d->cdof_dot + 6 * k;
      double qd = mass ? 0 : d->qvel[k], qdd = qacc ? qacc[k] : 0;
      for (int i = 0; i < 6; i++) {
        v[i] += S[i] * qd;
        a[i] += Sd[i] * qd + S[i] * qdd;
      }
    }
    // f_b = I a + v x* (I v), with v = cvel_b
    const double *I = d->cinert + 10 * b, *vb = d->cvel + 6 * b;
    double h[6], t[6], *f = w->F + 6 * b;
    phys_inert_mul(f, I, a);
    memcpy(w->Ic + 10 * b, I, 10 * sizeof(double));
    if (mass) {
      memset(w->Bc + 12 * b, 0, 12 * sizeof(double));
      continue;
    }
    phys_inert_mul(h, I, vb);
    phys_cross_force(t, vb, h);
    for (int i = 0; i < 6; i++) f[i] += t[i];
    body_bmat(w->Bc + 12 * b, I, vb);
  }
}

// backward pass: subtree sums F, Ic, Bc
static void backward_pass(const physModel* m, int mass, rneaDerivWork* w) {
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p == 0) continue;
    for (int i = 0; i < 6; i++) w->F[6 * p + i] += w->F[6 * b + i];
    for (int i = 0; i < 10; i++) w->Ic[10 * p + i] += w->Ic[10 * b + i];
    for (int i = 0; i < 12 && !mass; i++) w->Bc[12 * p + i] += w->Bc[12 * b + i];
  }
}

// per dof: u = S x vpre, psi = S x apre - u x vpre, alpha = Ic S, beta = Bc' S,
// y = S x* F - Ic psi - Bc u, z = Ic (Sdot - u) + Bc S (composites of the dof's body); mass: u = beta = z = 0,
// psi = S x apre, y = S x* F - Ic psi
static void dof_terms(const physModel* m, const physData* d, int mass, rneaDerivWork* w) {
  for (int k = 0; k < m->nv; k++) {
    int b = m->dof_bodyid[k];
    const double *S = d->cdof + 6 * k, *Sd = d->cdof_dot + 6 * k;
    const double *Ic = w->Ic + 10 * b, *Bc = w->Bc + 12 * b, *vp = w->vpre + 6 * k;
    double *u = w->u + 6 * k, *psi = w->psi + 6 * k, t[6], s[6];
    if (mass) {
      double* y = w->y + 6 * k;
      memset(u, 0, 6 * sizeof(double));
      memset(w->beta + 6 * k, 0, 6 * sizeof(double));
      memset(w->z + 6 * k, 0, 6 * sizeof(double));
      phys_cross_motion(psi, S, w->apre + 6 * k);
      phys_inert_mul(w->alpha + 6 * k, Ic, S);
      phys_cross_force(y, S, w->F + 6 * b);
      phys_inert_mul(t, Ic, psi);
      for (int i = 0; i < 6; i++) y[i] -= t[i];
      continue;
    }
    phys_cross_motion(u, S, vp);
    phys_cross_motion(psi, S, w->apre + 6 * k);
    phys_cross_motion(t, u, vp);
    for (int i = 0; i < 6; i++) psi[i] -= t[i];
    phys_inert_mul(w->alpha + 6 * k, Ic, S);
    bmatt_vec(w->beta + 6 * k, Bc, S);
    // y = S x* F - Ic psi - Bc u
    double* y = w->y + 6 * k;
    phys_cross_force(y, S, w->F + 6 * b);
    phys_inert_mul(t, Ic, psi);
    bmat_vec(s, Bc, u);
    for (int i = 0; i < 6; i++) y[i] -= t[i] + s[i];
    // z = Ic (Sdot - u) + Bc S
    double* z = w->z + 6 * k;
    for (int i = 0; i < 6; i++) s[i] = Sd[i] - u[i];
    phys_inert_mul(z, Ic, s);
    bmat_vec(t, Bc, S);
    for (int i = 0; i < 6; i++) z[i] += t[i];
  }
}

// all of the above at qacc
static void prepare(const physModel* m, const physData* d, const double* qacc, int mass, rneaDerivWork* w) {
  forward_pass(m, d, qacc, mass, w);
  backward_pass(m, mass, w);
  dof_terms(m, d, mass, w);
}

//---------------------------------------------------------------------------------------------------------
// entries

// dtau_k/dq_j and dtau_k/dqd_j for k after j
static inline double dq_after(const rneaDerivWork* w, int k, int j) {
  return -phys_dot6(w->alpha + 6 * k, w->psi + 6 * j) - phys_dot6(w->beta + 6 * k, w->u + 6 * j);
}
static inline double dv_after(const rneaDerivWork* w, const physData* d, int k, int j) {
  double s[6];
  const double *Sd = d->cdof_dot + 6 * j, *u = w->u + 6 * j;
  for (int i = 0; i < 6; i++) s[i] = Sd[i] - u[i];
  return phys_dot6(w->alpha + 6 * k, s) + phys_dot6(w->beta + 6 * k, d->cdof + 6 * j);
}

// fill the matrices: for each k, its ancestors j (k after j) and the same-group dofs (mutually after)
static void rnea_deriv(const physModel* m, physData* d, const double* qacc, int mass, double* dtau_dq,
                       double* dtau_dv, double* dtau_da) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * (size_t)nv;
  rneaDerivWork w;
  work_alloc(m, d, &w);
  prepare(m, d, qacc, mass, &w);
  if (dtau_dq) memset(dtau_dq, 0, sizeof(double) * nn);
  if (dtau_dv) memset(dtau_dv, 0, sizeof(double) * nn);
  if (dtau_da) memset(dtau_da, 0, sizeof(double) * nn);

  for (int k = 0; k < nv; k++) {
    int gk = w.grp[k];
    for (int j = k; j >= 0; j = m->dof_parentid[j]) {
      size_t kj = (size_t)k * nv + j, jk = (size_t)j * nv + k;
      int mutual = j != k && w.grp[j] == gk;   // j after k too
      if (dtau_dq) {
        dtau_dq[kj] = dq_after(&w, k, j);
        if (j != k) dtau_dq[jk] = mutual ? dq_after(&w, j, k) : phys_dot6(d->cdof + 6 * j, w.y + 6 * k);
      }
      if (dtau_dv) {
        dtau_dv[kj] = dv_after(&w, d, k, j);
        if (j != k) dtau_dv[jk] = mutual ? dv_after(&w, d, j, k) : phys_dot6(d->cdof + 6 * j, w.z + 6 * k);
      }
      if (dtau_da) {
        double mkj = phys_dot6(w.alpha + 6 * k, d->cdof + 6 * j);
        dtau_da[kj] = mkj;
        dtau_da[jk] = mkj;
      }
    }
  }
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// reverse mode

// q_bar_j = sum_k tau_bar_k dtau_k/dq_j = -A_j . psi_j - Bt_j . u_j + P_j . y_j with
// A_j = sum_{k after j} tau_bar_k alpha_k, Bt_j = sum_{k after j} tau_bar_k beta_k (subtree sums, by group
// from the leaves) and P_j = sum_{k strictly before j} tau_bar_k S_k (path sums from the root); likewise
// v_bar_j = A_j . (Sdot_j - u_j) + Bt_j . S_j + P_j . z_j and a_bar_j = A_j . S_j + P_j . alpha_j.
static void rnea_vjp(const physModel* m, physData* d, const double* qacc, int mass, const double* tau_bar,
                     double* q_bar, double* v_bar, double* a_bar) {
  int nv = m->nv, nb = m->nbody;
  size_t mark = phys_stack_mark(d);
  rneaDerivWork w;
  work_alloc(m, d, &w);
  prepare(m, d, qacc, mass, &w);
  double* Aj = phys_stack_alloc(d, 6 * (size_t)nv);
  double* Bj = phys_stack_alloc(d, 6 * (size_t)nv);
  double* Pj = phys_stack_alloc(d, 6 * (size_t)nv);
  double* accA = phys_stack_alloc(d, 6 * (size_t)nb);   // per body: sums over its subtree
  double* accB = phys_stack_alloc(d, 6 * (size_t)nb);
  double* path = phys_stack_alloc(d, 6 * (size_t)nb);   // per body: sum of tau_bar S over its path
  memset(accA, 0, 6 * sizeof(double) * (size_t)nb);
  memset(accB, 0, 6 * sizeof(double) * (size_t)nb);

  // leaves to root: within a body, groups last to first; every dof of a group sees the whole group
  for (int b = nb - 1; b > 0; b--) {
    int da = m->body_dofadr[b], nd = m->body_dofnum[b], p = m->body_parentid[b];
    double *sa = accA + 6 * b, *sb = accB + 6 * b;
    for (int k = da + nd - 1; k >= da;) {
      int g = w.grp[k];
      for (int i = g; i <= k; i++)
        for (int r = 0; r < 6; r++) {
          sa[r] += tau_bar[i] * w.alpha[6 * i + r];
          sb[r] += tau_bar[i] * w.beta[6 * i + r];
        }
      for (int i = g; i <= k; i++) {
        memcpy(Aj + 6 * i, sa, 6 * sizeof(double));
        memcpy(Bj + 6 * i, sb, 6 * sizeof(double));
      }
      k = g - 1;
    }
    if (p > 0)
      for (int r = 0; r < 6; r++) {
        accA[6 * p + r] += sa[r];
        accB[6 * p + r] += sb[r];
      }
  }

  // root to leaves: path sums before each group
  memset(path, 0, 6 * sizeof(double));
  for (int b = 1; b < nb; b++) {
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    double* s = path + 6 * b;
    memcpy(s, path + 6 * m->body_parentid[b], 6 * sizeof(double));
    for (int k = da; k < da + nd;) {
      int g = k, e = k;
      while (e + 1 < da + nd && w.grp[e + 1] == g) e++;
      for (int i = g; i <= e; i++) memcpy(Pj + 6 * i, s, 6 * sizeof(double));
      for (int i = g; i <= e; i++)
        for (int r = 0; r < 6; r++) s[r] += tau_bar[i] * d->cdof[6 * i + r];
      k = e + 1;
    }
  }

  for (int j = 0; j < nv; j++) {
    const double *A = Aj + 6 * j, *Bt = Bj + 6 * j, *P = Pj + 6 * j, *S = d->cdof + 6 * j;
    if (q_bar)
      q_bar[j] = -phys_dot6(A, w.psi + 6 * j) - phys_dot6(Bt, w.u + 6 * j) + phys_dot6(P, w.y + 6 * j);
    if (v_bar) {
      double s[6];
      for (int i = 0; i < 6; i++) s[i] = d->cdof_dot[6 * j + i] - w.u[6 * j + i];
      v_bar[j] = phys_dot6(A, s) + phys_dot6(Bt, S) + phys_dot6(P, w.z + 6 * j);
    }
    if (a_bar) a_bar[j] = phys_dot6(A, S) + phys_dot6(P, w.alpha + 6 * j);
  }
  phys_stack_free(d, mark);
}

void phys_rnea_deriv(const physModel* m, physData* d, const double* qacc, double* dtau_dq, double* dtau_dv,
                     double* dtau_da) {
  rnea_deriv(m, d, qacc, 0, dtau_dq, dtau_dv, dtau_da);
}

void phys_rnea_vjp(const physModel* m, physData* d, const double* qacc, const double* tau_bar, double* q_bar,
                   double* v_bar, double* a_bar) {
  rnea_vjp(m, d, qacc, 0, tau_bar, q_bar, v_bar, a_bar);
}

//---------------------------------------------------------------------------------------------------------
// the mass matrix alone: RNEA(q, 0, x) without gravity is M(q) x, so the same passes at zero velocity and
// gravity give d(M x)/dq (and skip B, u, beta, z: about half the work)

void phys_rnea_mass_deriv(const physModel* m, physData* d, const double* x, double* dmx_dq) {
  rnea_deriv(m, d, x, 1, dmx_dq, NULL, NULL);
}

void phys_rnea_mass_vjp(const physModel* m, physData* d, const double* x, const double* bar, double* q_bar) {
  rnea_vjp(m, d, x, 1, bar, q_bar, NULL, NULL);
}

// d(x' M(q) x)/dq = 2 dT/dq with T = 1/2 sum_b v_b . I_b v_b the kinetic energy of joint velocities x.
// Moving q_j by eps carries j's subtree rigidly by eps S_j: its inertias and the motion after j are transported,
// which leaves v . I v unchanged, while the motion before j's group (vpre_j) is seen transported backwards:
// d(v_b . I_b v_b)/dq_j = 2 h_b . (-S_j x vpre_j), h_b = I_b v_b. Summed over the subtree (Hc = sum of h):
//   g_j = -2 Hc_body(j) . (S_j x vpre_j).   One pass down and one up: O(nbody), no matrix.
void phys_rnea_mass_quad_grad(const physModel* m, physData* d, const double* x, double* g) {
  phys_rnea_mass_quad_grad_bodies(m, d, x, 1, m->nbody, g);
}

// the same on bodies b0 .. b1 - 1, whole trees (a tree's bodies are consecutive: the compiler numbers them depth
// first): their dofs' entries of g, from x on their dofs (the same sums: no other body reaches them)
void phys_rnea_mass_quad_grad_bodies(const physModel* m, physData* d, const double* x, int b0, int b1, double* g) {
  int nb = m->nbody;
  size_t mark = phys_stack_mark(d);
  double* v = phys_stack_alloc(d, 6 * (size_t)nb);
  double* H = phys_stack_alloc(d, 6 * (size_t)nb);
  double* vpre = phys_stack_alloc(d, 6 * (size_t)m->nv + 1);
  memset(v, 0, 6 * sizeof(double));
  for (int b = b0; b < b1; b++) {
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    double* vb = v + 6 * b;
    memcpy(vb, v + 6 * m->body_parentid[b], 6 * sizeof(double));
    double gv[6];
    for (int j = da; j < da + nd; j++) {
      if (phys_dof_group(m, j) == j) memcpy(gv, vb, sizeof(gv));
      memcpy(vpre + 6 * j, gv, sizeof(gv));
      const double* S = d->cdof + 6 * j;
      for (int r = 0; r < 6; r++) vb[r] += S[r] * x[j];
    }
    phys_inert_mul(H + 6 * b, d->cinert + 10 * b, vb);
  }
  for (int b = b1 - 1; b >= b0; b--) {
    int p = m->body_parentid[b];
    if (p > 0)
      for (int r = 0; r < 6; r++) H[6 * p + r] += H[6 * b + r];
  }
  for (int b = b0; b < b1; b++)
    for (int j = m->body_dofadr[b]; j < m->body_dofadr[b] + m->body_dofnum[b]; j++) {
      double u[6];
      phys_cross_motion(u, d->cdof + 6 * j, vpre + 6 * j);
      g[j] = -2 * phys_dot6(H + 6 * m->dof_bodyid[j], u);
    }
  phys_stack_free(d, mark);
}

// g (nv) += d<M(q), K>/dq for a symmetric K (nv x nv): the quadratic form's gradient above extended by
// linearity, x_l x_k -> K_lk:
//   g_j = -2 sum_{k in pre(j)} Hc_jk . (S_j x S_k),   Hc_jk = sum_{b in sub(body(j))} I_b W_bk,
//   W_bk = sum_{l on b's chain} K_lk S_l  (column k of K as joint velocities),
// pre(j) the dofs before j's group. Column by column: column k reaches only the bodies below its own
// (j after k), so the cost is sum_k |subtree(k)| body updates, not nv full passes, and only the entries K_lk
// with l on a chain through k are read (about 2 nv depth of them) - one call for any number of quadratic and
// bilinear forms once they are summed into K.

// K's entries from a low-rank sum K = sum_i c_i (a_i b_i' + b_i a_i') / 2, read entry by entry
// (At, Bt: nv x nterm transposes; Ct = c b, Dt = c a likewise: K_lk = (At_l . Ct_k + Bt_l . Dt_k) / 2; the terms
// with a_i = b_i, the first nquad, once: K_lk += At_l . Ct_k over them)
typedef struct {
  int nterm, nquad;
  const double *At, *Bt, *Ct, *Dt;
} kEntries;

static inline double k_entry(const kEntries* e, int l, int k) {
  size_t n = (size_t)e->nterm;
  const double *a = e->At + l * n, *b = e->Bt + l * n, *c = e->Ct + k * n, *dd = e->Dt + k * n;
  double q = 0, s = 0;
  for (int i = 0; i < e->nquad; i++) q += a[i] * c[i];
  for (int i = e->nquad; i < e->nterm; i++) s += a[i] * c[i] + b[i] * dd[i];
  return q + 0.5 * s;
}

static void trace_grad(const physModel* m, physData* d, const kEntries* K, double* g) {
  int nv = m->nv, nb = m->nbody;
  size_t mark = phys_stack_mark(d);
  double* W = phys_stack_alloc(d, 6 * (size_t)nb);
  double* H = phys_stack_alloc(d, 6 * (size_t)nb);
  int* in = (int*)phys_stack_alloc(d, (size_t)nb / 2 + 1);
  int* grp = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  int* kids = (int*)phys_stack_alloc(d, (size_t)nb / 2 + 1);
  for (int j = 0; j < nv; j++) grp[j] = phys_dof_group(m, j);
  for (int b = 0; b < nb; b++) kids[b] = 0;
  for (int b = 1; b < nb; b++) kids[m->body_parentid[b]]++;
  for (int k = 0; k < nv; k++) {
    int bk = m->dof_bodyid[k];
    const double* Sk = d->cdof + 6 * k;
    // no dof after k's group below it (k in the last group of a body without children): column k moves nothing
    int last = m->body_dofadr[bk] + m->body_dofnum[bk] - 1;
    if (grp[last] == grp[k] && kids[bk] == 0) continue;
    // W at bk: column k over bk's whole chain (its own dofs and its ancestors')
    double* Wk = W + 6 * bk;
    memset(Wk, 0, 6 * sizeof(double));
    for (int l = phys_body_lastdof(m, bk); l >= 0; l = m->dof_parentid[l]) {
      double c = k_entry(K, l, k);
      if (c != 0)
        for (int r = 0; r < 6; r++) Wk[r] += c * d->cdof[6 * l + r];
    }
    // the subtree below bk: W_b = W_parent + its own dofs' terms, H_b = I_b W_b
    for (int b = bk; b < nb; b++) {
      in[b] = b == bk || (m->body_parentid[b] >= bk && in[m->body_parentid[b]]);
      if (!in[b]) continue;
      double* Wb = W + 6 * b;
      if (b != bk) {
        memcpy(Wb, W + 6 * m->body_parentid[b], 6 * sizeof(double));
        for (int l = m->body_dofadr[b]; l < m->body_dofadr[b] + m->body_dofnum[b]; l++) {
          double c = k_entry(K, l, k);
          if (c != 0)
            for (int r = 0; r < 6; r++) Wb[r] += c * d->cdof[6 * l + r];
        }
      }
      phys_inert_mul(H + 6 * b, d->cinert + 10 * b, Wb);
    }
    for (int b = nb - 1; b > bk; b--)   // composites within the subtree
      if (in[b] && in[m->body_parentid[b]])
        for (int r = 0; r < 6; r++) H[6 * m->body_parentid[b] + r] += H[6 * b + r];
    // every dof j after k's group in the subtree: g_j -= 2 Hc . (S_j x S_k)
    for (int b = bk; b < nb; b++) {
      if (!in[b]) continue;
      for (int j = m->body_dofadr[b]; j < m->body_dofadr[b] + m->body_dofnum[b]; j++) {
        if (b == bk && (j <= k || grp[j] == grp[k])) continue;
        double u[6];
        phys_cross_motion(u, d->cdof + 6 * j, Sk);
        g[j] -= 2 * phys_dot6(H + 6 * b, u);
      }
    }
  }
  phys_stack_free(d, mark);
}

void phys_rnea_mass_trace_grad(const physModel* m, physData* d, int nquad, int nterm, const double* A,
                                  const double* B, const double* c, double* g) {
  int nv = m->nv;
  if (nterm <= 0) return;
  size_t mark = phys_stack_mark(d), sz = (size_t)nv * nterm;
  double* At = phys_stack_alloc(d, sz);
  double* Bt = phys_stack_alloc(d, sz);
  double* Ct = phys_stack_alloc(d, sz);
  double* Dt = phys_stack_alloc(d, sz);
  for (int i = 0; i < nterm; i++)
    for (int l = 0; l < nv; l++) {
      double a = A[(size_t)i * nv + l], b = i < nquad ? a : B[(size_t)i * nv + l];
      At[(size_t)l * nterm + i] = a, Bt[(size_t)l * nterm + i] = b;
      Ct[(size_t)l * nterm + i] = c[i] * b, Dt[(size_t)l * nterm + i] = c[i] * a;
    }
  kEntries e = {nterm, nquad, At, Bt, Ct, Dt};
  trace_grad(m, d, &e, g);
  phys_stack_free(d, mark);
}

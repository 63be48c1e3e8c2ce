// aba.c - forward dynamics by the articulated-body algorithm, world-aligned about the origin, O(nv).
//
// A body with several dofs is handled as a chain of 1-dof stages joined by massless virtual links
// (exact: a massless link transmits the body's force unchanged, so every dof still sees tau_k = s_k . f_b,
// and the body's acceleration is a_parent + c_b + sum_k s_k qacc_k however c_b is split among the stages;
// the product of the stage pivots D_k equals det of the body's nd x nd block, so the stages are positive
// exactly when the block is). The velocity-product acceleration c_b is given to the body's first dof.
// Needs phys_kinematics, phys_com_pos, phys_com_vel.
#include <string.h>

#include "physid.h"
#include "spatial.h"

// per-body and per-dof workspace of the recursion
typedef struct abaWork_ {
  double* IA;    // articulated inertia (nbody x 21), symmetric, lower triangle packed row by row
  double* pA;    // articulated bias force (nbody x 6)
  double* c;     // velocity-product acceleration sum_j cdof_dot_j qvel_j (nbody x 6)
  double* a;     // body acceleration (nbody x 6)
  double* U;     // IA_k s_k at the dof's stage (nv x 6)
  double* Dinv;  // 1 / (s_k' IA_k s_k + armature + add) (nv), 0 if not positive
  double* u;     // tau_k - s_k' pA_k (nv)
} abaWork;

// res = A x for a symmetric 6x6 A packed as its lower triangle row by row (A_rc at r(r+1)/2 + c)
static inline void sym6_vec(double* restrict res, const double* restrict A, const double* restrict x) {
  res[0] = A[0] * x[0] + A[1] * x[1] + A[3] * x[2] + A[6] * x[3] + A[10] * x[4] + A[15] * x[5];
  res[1] = A[1] * x[0] + A[2] * x[1] + A[4] * x[2] + A[7] * x[3] + A[11] * x[4] + A[16] * x[5];
  res[2] = A[3] * x[0] + A[4] * x[1] + A[5] * x[2] + A[8] * x[3] + A[12] * x[4] + A[17] * x[5];
  res[3] = A[6] * x[0] + A[7] * x[1] + A[8] * x[2] + A[9] * x[3] + A[13] * x[4] + A[18] * x[5];
  res[4] = A[10] * x[0] + A[11] * x[1] + A[12] * x[2] + A[13] * x[3] + A[14] * x[4] + A[19] * x[5];
  res[5] = A[15] * x[0] + A[16] * x[1] + A[17] * x[2] + A[18] * x[3] + A[19] * x[4] + A[20] * x[5];
}

// packed 6x6 of a spatial inertia (m, h, I): [[I, [h]x], [[h]x', m E]]
static inline void inert2sym6(double* restrict A, const double* restrict in) {
  const double m = in[0], hx = in[1], hy = in[2], hz = in[3], *I = in + 4;
  const double P[21] = {I[0], I[3], I[1], I[4], I[5], I[2], 0, hz, -hy, m, -hz, 0, hx, 0, m, hy, -hx, 0, 0, 0, m};
  memcpy(A, P, sizeof(P));
}

// IA_b = cinert_b, pA_b = cvel_b x* (cinert_b cvel_b), c_b = sum_j cdof_dot_j qvel_j
static void aba_init(const physModel* m, const physData* d, abaWork* w) {
  for (int b = 1; b < m->nbody; b++) {
    double h[6];
    const double* v = d->cvel + 6 * b;
    inert2sym6(w->IA + 21 * b, d->cinert + 10 * b);
    phys_inert_mul(h, d->cinert + 10 * b, v);
    phys_cross_force(w->pA + 6 * b, v, h);
    double* c = w->c + 6 * b;
    memset(c, 0, 6 * sizeof(double));
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    for (int j = da; j < da + nd; j++) {
      const double* cdd = d->cdof_dot + 6 * j;
      double qv = d->qvel[j];
      for (int i = 0; i < 6; i++) c[i] += cdd[i] * qv;
    }
  }
}

// one stage, dof k on (IA, pA): U = IA s, D = s'U + armature + add, u = tau - s'pA,
// IA -= U U'/D (packed lower triangle), pA += U u/D
static int aba_stage(const physModel* m, const physData* d, abaWork* w, double* restrict IA,
                     double* restrict pA, int k, const double* tau, const double* add) {
  const double* s = d->cdof + 6 * k;
  double* restrict U = w->U + 6 * k;
  sym6_vec(U, IA, s);
  double D = phys_dot6(s, U) + m->dof_armature[k] + (add ? add[k] : 0);
  double u = tau[k] - phys_dot6(s, pA);
  w->u[k] = u;
  if (!(D > 0)) {
    w->Dinv[k] = 0;
    return 0;
  }
  double Dinv = 1 / D, UD[6];
  w->Dinv[k] = Dinv;
  for (int r = 0; r < 6; r++) UD[r] = U[r] * Dinv;
  for (int r = 0, e = 0; r < 6; r++)
    for (int c = 0; c <= r; c++, e++) IA[e] -= UD[r] * U[c];
  for (int r = 0; r < 6; r++) pA[r] += UD[r] * u;
  return 1;
}

// res += a (n doubles, no aliasing)
static inline void add_to(double* restrict res, const double* restrict a, int n) {
  for (int i = 0; i < n; i++) res[i] += a[i];
}

// backward pass: project the body's dofs out last to first, then IA_parent += Ia, pA_parent += pa + Ia c
static void aba_backward(const physModel* m, physData* d, abaWork* w, const double* tau, const double* add) {
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b], da = m->body_dofadr[b], nd = m->body_dofnum[b];
    double *IA = w->IA + 21 * b, *pA = w->pA + 6 * b;
    for (int k = da + nd - 1; k >= da; k--)
      if (!aba_stage(m, d, w, IA, pA, k, tau, add))
        phys_data_warning(d, "aba: dof %d: articulated inertia not positive", k);
    if (p == 0) continue;
    double t[6];
    if (nd > 0) {
      sym6_vec(t, IA, w->c + 6 * b);
      for (int i = 0; i < 6; i++) pA[i] += t[i];
    }
    add_to(w->IA + 21 * p, IA, 21);
    add_to(w->pA + 6 * p, pA, 6);
  }
}

// forward pass: a = a_parent + c; per dof qacc_k = (u_k - U_k . a)/D_k, a += s_k qacc_k; a_0 = (0, -g)
static void aba_forward(const physModel* m, physData* d, abaWork* w, double* qacc) {
  memset(w->a, 0, 6 * sizeof(double));
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY))
    for (int i = 0; i < 3; i++) w->a[3 + i] = -m->opt.gravity[i];
  for (int b = 1; b < m->nbody; b++) {
    double* a = w->a + 6 * b;
    const double *ap = w->a + 6 * m->body_parentid[b], *c = w->c + 6 * b;
    for (int i = 0; i < 6; i++) a[i] = ap[i] + c[i];
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    for (int k = da; k < da + nd; k++) {
      double qa = (w->u[k] - phys_dot6(w->U + 6 * k, a)) * w->Dinv[k];
      const double* s = d->cdof + 6 * k;
      qacc[k] = qa;
      for (int i = 0; i < 6; i++) a[i] += s[i] * qa;
    }
  }
}

// qacc = (M + diag(armature + add))^-1 (tau - c(q, v))
void phys_aba(const physModel* m, physData* d, const double* tau, const double* add, double* qacc) {
  size_t mark = phys_stack_mark(d);
  size_t nb = (size_t)m->nbody, nv = (size_t)m->nv;
  abaWork w;
  w.IA = phys_stack_alloc(d, 21 * nb);
  w.pA = phys_stack_alloc(d, 6 * nb);
  w.c = phys_stack_alloc(d, 6 * nb);
  w.a = phys_stack_alloc(d, 6 * nb);
  w.U = phys_stack_alloc(d, 6 * nv);
  w.Dinv = phys_stack_alloc(d, nv);
  w.u = phys_stack_alloc(d, nv);
  aba_init(m, d, &w);
  aba_backward(m, d, &w, tau, add);
  aba_forward(m, d, &w, qacc);
  phys_stack_free(d, mark);
}

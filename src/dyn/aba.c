// aba.c - forward dynamics by the articulated-body algorithm, world-aligned about the origin.
// O(nbody) with one dense nd x nd block per body (nd <= 6 dofs per body). Needs phys_com_vel.
#include <string.h>

#include "chol.h"
#include "physid.h"
#include "spatial.h"

// Ia += -U W with W = D^-1 U' (nd x 6 rows), symmetric: lower triangle computed, then mirrored
static void sub_rank_update(double Ia[36], const double* U, const double* W, int nd) {
  for (int r = 0; r < 6; r++)
    for (int c = 0; c <= r; c++) {
      double s = 0;
      for (int k = 0; k < nd; k++) s += U[6 * k + r] * W[6 * k + c];
      Ia[6 * r + c] -= s;
      Ia[6 * c + r] = Ia[6 * r + c];
    }
}

// res = A x for a 6x6 row-major A
static void mat6_vec(double res[6], const double A[36], const double x[6]) {
  for (int r = 0; r < 6; r++) res[r] = phys_dot6(A + 6 * r, x);
}

// per-body workspace of the articulated-body recursion
typedef struct abaWork_ {
  double* IA;   // articulated inertia (nbody x 36)
  double* pA;   // articulated bias force (nbody x 6)
  double* c;    // velocity-product acceleration sum_j cdof_dot_j qvel_j (nbody x 6)
  double* a;    // body acceleration (nbody x 6)
  double* U;    // IA cdof_j (nv x 6)
  double* W;    // D^-1 U' rows (nv x 6)
  double* D;    // Cholesky factor of D = S' IA S + diag(armature + add) (nbody x 36, nd x nd used)
  double* u;    // tau - S' pA (nv)
} abaWork;

// IA_b = cinert_b, pA_b = cvel_b x* (cinert_b cvel_b), c_b = sum cdof_dot qvel
static void aba_init(const physModel* m, const physData* d, abaWork* w) {
  for (int b = 1; b < m->nbody; b++) {
    double h[6];
    const double* v = d->cvel + 6 * b;
    phys_inert2mat(w->IA + 36 * b, d->cinert + 10 * b);
    phys_inert_mul(h, d->cinert + 10 * b, v);
    phys_cross_force(w->pA + 6 * b, v, h);
    double* c = w->c + 6 * b;
    memset(c, 0, 6 * sizeof(double));
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    for (int j = da; j < da + nd; j++)
      for (int i = 0; i < 6; i++) c[i] += d->cdof_dot[6 * j + i] * d->qvel[j];
  }
}

// body b's dof block: U = IA S, D = S'U + diag(armature + add) (factored), u = tau - S'pA, W = D^-1 U'.
// Returns 0 if D is not positive definite (W and the body's accelerations are then zeroed).
static int aba_body_block(const physModel* m, physData* d, abaWork* w, int b, const double* tau,
                          const double* add) {
  int da = m->body_dofadr[b], nd = m->body_dofnum[b];
  const double* S = d->cdof + 6 * da;
  double* U = w->U + 6 * da;
  double* D = w->D + 36 * b;
  for (int k = 0; k < nd; k++) {
    mat6_vec(U + 6 * k, w->IA + 36 * b, S + 6 * k);
    w->u[da + k] = tau[da + k] - phys_dot6(S + 6 * k, w->pA + 6 * b);
  }
  for (int r = 0; r < nd; r++)
    for (int c = 0; c <= r; c++) D[nd * r + c] = D[nd * c + r] = phys_dot6(S + 6 * r, U + 6 * c);
  for (int k = 0; k < nd; k++) D[nd * k + k] += m->dof_armature[da + k] + (add ? add[da + k] : 0);
  if (phys_chol_factor(D, nd, 0) < nd) {
    memset(w->W + 6 * da, 0, 6 * (size_t)nd * sizeof(double));
    D[0] = 0;  // marks the failed block for the forward pass
    return 0;
  }
  // W' = D^-1 U': solve for each of the 6 columns of U'
  for (int i = 0; i < 6; i++) {
    double col[6];
    for (int k = 0; k < nd; k++) col[k] = U[6 * k + i];
    phys_chol_solve(col, D, col, nd);
    for (int k = 0; k < nd; k++) w->W[6 * (da + k) + i] = col[k];
  }
  return 1;
}

// backward pass: Ia = IA - U D^-1 U', pa = pA + Ia c + U D^-1 u, added to the parent
static void aba_backward(const physModel* m, physData* d, abaWork* w, const double* tau, const double* add) {
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b], da = m->body_dofadr[b], nd = m->body_dofnum[b];
    if (nd > 0 && !aba_body_block(m, d, w, b, tau, add))
      phys_data_warning(d, "aba: body %d: articulated inertia not positive definite", b);
    if (p == 0) continue;
    double* Ia = w->IA + 36 * b;
    double pa[6], t[6];
    memcpy(pa, w->pA + 6 * b, sizeof(pa));
    if (nd > 0) {
      // U D^-1 u = W' u
      for (int k = 0; k < nd; k++)
        for (int i = 0; i < 6; i++) pa[i] += w->W[6 * (da + k) + i] * w->u[da + k];
      sub_rank_update(Ia, w->U + 6 * da, w->W + 6 * da, nd);
    }
    mat6_vec(t, Ia, w->c + 6 * b);
    for (int i = 0; i < 6; i++) pa[i] += t[i];
    for (int i = 0; i < 36; i++) w->IA[36 * p + i] += Ia[i];
    for (int i = 0; i < 6; i++) w->pA[6 * p + i] += pa[i];
  }
}

// forward pass: a' = a_parent + c, qacc = D^-1 (u - U' a'), a = a' + S qacc; a_0 = (0, -g)
static void aba_forward(const physModel* m, physData* d, abaWork* w, double* qacc) {
  memset(w->a, 0, 6 * sizeof(double));
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY))
    for (int i = 0; i < 3; i++) w->a[3 + i] = -m->opt.gravity[i];
  for (int b = 1; b < m->nbody; b++) {
    double* a = w->a + 6 * b;
    const double* ap = w->a + 6 * m->body_parentid[b];
    for (int i = 0; i < 6; i++) a[i] = ap[i] + w->c[6 * b + i];
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    if (nd == 0) continue;
    double r[6];
    for (int k = 0; k < nd; k++) r[k] = w->u[da + k] - phys_dot6(w->U + 6 * (da + k), a);
    if (w->D[36 * b] > 0) {
      phys_chol_solve(r, w->D + 36 * b, r, nd);
    } else {
      for (int k = 0; k < nd; k++) r[k] = 0;  // singular block (warned in the backward pass)
    }
    for (int k = 0; k < nd; k++) {
      qacc[da + k] = r[k];
      for (int i = 0; i < 6; i++) a[i] += d->cdof[6 * (da + k) + i] * r[k];
    }
  }
}

// qacc = (M + diag(armature + add))^-1 (tau - c(q, v))
void phys_aba(const physModel* m, physData* d, const double* tau, const double* add, double* qacc) {
  size_t mark = phys_stack_mark(d);
  size_t nb = (size_t)m->nbody, nv = (size_t)m->nv;
  abaWork w;
  w.IA = phys_stack_alloc(d, 36 * nb);
  w.pA = phys_stack_alloc(d, 6 * nb);
  w.c = phys_stack_alloc(d, 6 * nb);
  w.a = phys_stack_alloc(d, 6 * nb);
  w.D = phys_stack_alloc(d, 36 * nb);
  w.U = phys_stack_alloc(d, 6 * nv);
  w.W = phys_stack_alloc(d, 6 * nv);
  w.u = phys_stack_alloc(d, nv);
  aba_init(m, d, &w);
  aba_backward(m, d, &w, tau, add);
  aba_forward(m, d, &w, qacc);
  phys_stack_free(d, mark);
}

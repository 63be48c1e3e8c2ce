// residual_deriv.c - derivatives of the step's residual acceleration (residual_deriv.h). The features' rotation
// blocks move as R' = R Exp(dq) (the step's tangent coordinates), so dR = R [dq]x and, for a matrix adjoint
// Rbar, dq_bar_k = <Rbar, R [e_k]x>, i.e. with P = R' Rbar: (P_21 - P_12, P_02 - P_20, P_10 - P_01).
#include "residual_deriv.h"

#include <cblas.h>
#include <string.h>

#include "arena.h"
#include "mlp.h"
#include "residual.h"
#include "rot.h"
#include "step.h"

// dR = R [w]x (R 3x3 row-major)
static void rot_jvp(const double R[9], const double w[3], double dR[9]) {
  double S[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
  phys_mat_mul3(dR, R, S);
}

// wbar += the tangent adjoint of Rbar at R
static void rot_vjp(const double R[9], const double Rbar[9], double wbar[3]) {
  double P[9];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) P[3 * a + b] = R[a] * Rbar[b] + R[3 + a] * Rbar[3 + b] + R[6 + a] * Rbar[6 + b];
  wbar[0] += P[7] - P[5];
  wbar[1] += P[2] - P[6];
  wbar[2] += P[3] - P[1];
}

void phys_residual_features_jvp(const physModel* m, const double* qpos, const double* dq, const double* dv,
                                double* dphi) {
  int k = 0;
  double R[9];
  for (int j = 0; j < m->njnt; j++) {
    const double* q = qpos + m->jnt_qposadr[j];
    const double* t = dq + m->jnt_dofadr[j];
    int type = m->jnt_type[j];
    if (type == PHYS_JNT_FREE) {
      memcpy(dphi + k, t, 3 * sizeof(double));
      phys_quat2mat(R, q + 3);
      rot_jvp(R, t + 3, dphi + k + 3);
      k += 12;
    } else if (type == PHYS_JNT_BALL) {
      phys_quat2mat(R, q);
      rot_jvp(R, t, dphi + k);
      k += 9;
    } else {
      dphi[k++] = t[0];
    }
  }
  if (dv) memcpy(dphi + k, dv, sizeof(double) * (size_t)m->nv);
  else memset(dphi + k, 0, sizeof(double) * (size_t)m->nv);
}

void phys_residual_features_vjp(const physModel* m, const double* qpos, const double* phibar, double* qbar,
                                double* vbar) {
  int k = 0;
  double R[9];
  for (int j = 0; j < m->njnt; j++) {
    const double* q = qpos + m->jnt_qposadr[j];
    double* t = qbar ? qbar + m->jnt_dofadr[j] : NULL;
    int type = m->jnt_type[j];
    if (type == PHYS_JNT_FREE) {
      if (t) {
        for (int c = 0; c < 3; c++) t[c] += phibar[k + c];
        phys_quat2mat(R, q + 3);
        rot_vjp(R, phibar + k + 3, t + 3);
      }
      k += 12;
    } else if (type == PHYS_JNT_BALL) {
      if (t) {
        phys_quat2mat(R, q);
        rot_vjp(R, phibar + k, t);
      }
      k += 9;
    } else {
      if (t) t[0] += phibar[k];
      k++;
    }
  }
  if (vbar)
    for (int i = 0; i < m->nv; i++) vbar[i] += phibar[k + i];
}

void phys_residual_jacobian_add(const physModel* m, physData* d, double s, double* V, int ld) {
  const physMlp* n = m->residual;
  if (!n) return;
  int nv = m->nv, nf = n->size[0];
  size_t mark = phys_stack_mark(d);
  double* phi = phys_stack_alloc(d, (size_t)nf);
  double* dphi = phys_stack_alloc(d, (size_t)nf);
  double* act = phys_stack_alloc(d, (size_t)phys_mlp_nact(n) + 1);
  double* work = phys_stack_alloc(d, (size_t)phys_mlp_nwork(n));
  double* r = phys_stack_alloc(d, (size_t)nv);
  double* e = phys_stack_alloc(d, 2 * (size_t)nv);
  phys_residual_features(m, d->qpos, d->qvel, phi);
  phys_mlp_forward(n, phi, r, act);
  memset(e, 0, sizeof(double) * 2 * (size_t)nv);
  for (int c = 0; c < 2 * nv; c++) {
    // column c: the unit tangent direction dq_c (c < nv) or dv_{c-nv}
    e[c] = 1;
    phys_residual_features_jvp(m, d->qpos, e, e + nv, dphi);
    e[c] = 0;
    phys_mlp_jvp(n, act, dphi, r, work);
    for (int i = 0; i < nv; i++) V[(size_t)i * ld + c] += s * r[i];
  }
  phys_stack_free(d, mark);
}

void phys_residual_vjp(const physModel* m, physData* d, const double* rbar, double* qbar, double* vbar,
                       double* wbar) {
  const physMlp* n = m->residual;
  if (!n) return;
  int nf = n->size[0];
  size_t mark = phys_stack_mark(d);
  double* phi = phys_stack_alloc(d, (size_t)nf);
  double* phibar = phys_stack_alloc(d, (size_t)nf);
  double* act = phys_stack_alloc(d, (size_t)phys_mlp_nact(n) + 1);
  double* work = phys_stack_alloc(d, (size_t)phys_mlp_nwork(n));
  double* r = phys_stack_alloc(d, (size_t)m->nv);
  phys_residual_features(m, d->qpos, d->qvel, phi);
  phys_mlp_forward(n, phi, r, act);
  phys_mlp_vjp(n, phi, act, rbar, qbar || vbar ? phibar : NULL, wbar, work);
  if (qbar || vbar) phys_residual_features_vjp(m, d->qpos, phibar, qbar, vbar);
  phys_stack_free(d, mark);
}

// Mt (nv x nv) = M~ = qM + dt B at d's state (B the implicit joint damping, step.h)
static void mass_tilde(const physModel* m, const physData* d, double* Mt, double* add) {
  int nv = m->nv;
  memcpy(Mt, d->qM, sizeof(double) * (size_t)nv * nv);
  phys_implicit_damping_add(m, add);
  for (int i = 0; i < nv; i++) Mt[(size_t)i * nv + i] += add[i];
}

void phys_residual_force_deriv(const physModel* m, physData* d, double* Fq, double* Fv) {
  if (!m->residual) return;
  int nv = m->nv, n2 = 2 * nv;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* Mt = phys_stack_alloc(d, nn);
  double* add = phys_stack_alloc(d, (size_t)nv);
  double* Jr = phys_stack_alloc(d, 2 * nn);
  double* MJ = phys_stack_alloc(d, 2 * nn);
  mass_tilde(m, d, Mt, add);
  memset(Jr, 0, sizeof(double) * 2 * nn);
  phys_residual_jacobian_add(m, d, 1, Jr, n2);
  // MJ (nv x 2nv) = M~ [dr/dq | dr/dv]
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nv, n2, nv, 1.0, Mt, nv, Jr, n2, 0.0, MJ, n2);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      Fq[(size_t)i * nv + j] += MJ[(size_t)i * n2 + j];
      Fv[(size_t)i * nv + j] += MJ[(size_t)i * n2 + nv + j];
    }
  phys_stack_free(d, mark);
}

void phys_residual_force_vjp(const physModel* m, physData* d, const double* rho, double* qbar, double* vbar,
                             double* wbar) {
  if (!m->residual) return;
  int nv = m->nv;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* Mt = phys_stack_alloc(d, nn);
  double* add = phys_stack_alloc(d, (size_t)nv);
  double* rbar = phys_stack_alloc(d, (size_t)nv);
  mass_tilde(m, d, Mt, add);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, nv, nv, 1.0, Mt, nv, rho, 1, 0.0, rbar, 1);   // (M~ symmetric)
  phys_residual_vjp(m, d, rbar, qbar, vbar, wbar);
  phys_stack_free(d, mark);
}

// tendon_rows_deriv.c - derivatives of the tendon limit rows (tendon_rows_deriv.h).
#include "tendon_rows_deriv.h"

#include <stdio.h>
#include <string.h>

#include "grad.h"

int phys_tendon_rows_of(const physModel* m, const physData* d, const physConstraintProblem* p, int* ten, int* side) {
  if (p->nl == 0 || m->nspring == 0) return 0;
  return phys_tendon_limits_active(m, d, ten, side);
}

double phys_tendon_rows_dist(const physModel* m, physData* d, const physConstraintProblem* p, int r) {
  size_t mark = phys_stack_mark(d);
  int* ten = (int*)phys_stack_alloc(d, (size_t)m->nspring + 1);   // 2 nspring ints each
  int* side = (int*)phys_stack_alloc(d, (size_t)m->nspring + 1);
  double* row = phys_stack_alloc(d, (size_t)m->nv);
  int nt = phys_tendon_rows_of(m, d, p, ten, side), k = r - (p->n - nt);
  double dist = phys_tendon_limit_row(m, d, ten[k], side[k], row);
  phys_stack_free(d, mark);
  return dist;
}

// the tendon rows' data: their count, first row, tendons and sides, and sign K (nt x nv x nv) in the arena
typedef struct {
  int nt, first;
  int *ten, *side;
  double* K;
} tendonRows;

static void rows_load(const physModel* m, physData* d, const physConstraintProblem* p, tendonRows* t) {
  int nv = m->nv;
  t->ten = (int*)phys_stack_alloc(d, (size_t)m->nspring + 1);
  t->side = (int*)phys_stack_alloc(d, (size_t)m->nspring + 1);
  t->nt = phys_tendon_rows_of(m, d, p, t->ten, t->side);
  t->first = p->n - t->nt;
  t->K = phys_stack_alloc(d, (size_t)t->nt * nv * nv + 1);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  for (int k = 0; k < t->nt; k++) {
    double* K = t->K + (size_t)k * nv * nv;
    phys_spring_hessian(m, d, t->ten[k], JL, K);
    if (t->side[k] == 1)
      for (size_t i = 0; i < (size_t)nv * nv; i++) K[i] = -K[i];
  }
}

void phys_tendon_rows_jvp(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                          const double* alpha, const double* beta, double* dJ_beta, double* dJt_alpha, double* ddist,
                          double* dJ) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  tendonRows t;
  rows_load(m, d, p, &t);
  double* dr = phys_stack_alloc(d, (size_t)nv);
  for (int k = 0; k < t.nt; k++) {
    int r = t.first + k;
    const double *K = t.K + (size_t)k * nv * nv, *Jr = p->J + (size_t)r * nv;
    double dd = 0, db = 0;
    for (int i = 0; i < nv; i++) {
      dr[i] = 0;
      for (int j = 0; j < nv; j++) dr[i] += K[(size_t)i * nv + j] * dq[j];
      dd += Jr[i] * dq[i];
      if (beta) db += dr[i] * beta[i];
    }
    if (ddist) ddist[r] = dd;
    if (dJ_beta) dJ_beta[r] = db;
    if (dJt_alpha)
      for (int i = 0; i < nv; i++) dJt_alpha[i] += alpha[r] * dr[i];
    if (dJ) memcpy(dJ + (size_t)r * nv, dr, sizeof(double) * (size_t)nv);
  }
  phys_stack_free(d, mark);
}

void phys_tendon_rows_jacobian(const physModel* m, physData* d, const physConstraintProblem* p, const double* alpha,
                               const double* beta, double* dJb_dq, double* dJta_dq, double* ddist_dq) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  tendonRows t;
  rows_load(m, d, p, &t);
  for (int k = 0; k < t.nt; k++) {
    int r = t.first + k;
    const double* K = t.K + (size_t)k * nv * nv;
    for (int j = 0; j < nv; j++) {
      if (ddist_dq) ddist_dq[(size_t)r * nv + j] = p->J[(size_t)r * nv + j];
      if (dJb_dq) {
        double s = 0;
        for (int i = 0; i < nv; i++) s += beta[i] * K[(size_t)i * nv + j];
        dJb_dq[(size_t)r * nv + j] = s;
      }
    }
    if (dJta_dq)
      for (size_t i = 0; i < (size_t)nv * nv; i++) dJta_dq[i] += alpha[r] * K[i];
  }
  phys_stack_free(d, mark);
}

void phys_tendon_rows_vjp(const physModel* m, physData* d, const physConstraintProblem* p, const double* alpha,
                          const double* beta, const double* A, const double* gamma, double* q_bar) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  tendonRows t;
  rows_load(m, d, p, &t);
  for (int k = 0; k < t.nt; k++) {
    int r = t.first + k;
    const double *K = t.K + (size_t)k * nv * nv, *Jr = p->J + (size_t)r * nv;
    for (int j = 0; j < nv; j++) {
      double s = gamma ? gamma[r] * Jr[j] : 0;
      for (int i = 0; i < nv; i++) {
        double w = A ? A[(size_t)r * nv + i] : (alpha && beta ? alpha[r] * beta[i] : 0);
        s += w * K[(size_t)i * nv + j];
      }
      q_bar[j] += s;
    }
  }
  phys_stack_free(d, mark);
}

physStatus phys_tendon_rows_param_check(const physModel* m, physData* d, const physConstraintProblem* p,
                                        const physParamTable* t) {
  int pos = 0;
  for (int e = 0; e < t->n; e++) pos |= t->param[e].kind == PHYS_PAR_POS;
  if (!pos) return PHYS_OK;
  size_t mark = phys_stack_mark(d);
  int* ten = (int*)phys_stack_alloc(d, (size_t)m->nspring + 1);   // 2 nspring ints
  int nt = phys_tendon_rows_of(m, d, p, ten, ten + m->nspring), spatial = -1;
  for (int k = 0; k < nt && spatial < 0; k++)
    if (m->spring_type[ten[k]] != PHYS_SPRING_FIXED) spatial = ten[k];
  phys_stack_free(d, mark);
  if (spatial < 0) return PHYS_OK;
  snprintf(d->lastwarning, sizeof(d->lastwarning), "pos:BODY parameters with the active length limit of spatial "
           "tendon '%s': that derivative is not built", phys_id2name(m, "spring", spatial));
  return PHYS_ERR_ARG;
}

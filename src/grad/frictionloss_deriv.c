// frictionloss_deriv.c - the smooth step's derivatives corrected for joint frictionloss rows
// (frictionloss_deriv.h has the equations).
#include "frictionloss_deriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chol.h"
#include "factor.h"
#include "grad.h"

// E_S column a . X's column c (X nv x ns): X's row sdof[a] for a dof row (exactly), the moment's dot product
// for a tendon row
static double stick_row_dot(const physFrictionPoint* fp, int nv, int a, const double* X, int c) {
  int ns = fp->ns;
  if (fp->sdof[a] >= 0) return X[(size_t)fp->sdof[a] * ns + c];
  double s = 0;
  for (int k = 0; k < nv; k++) s += fp->ES[(size_t)k * ns + a] * X[(size_t)k * ns + c];
  return s;
}

// E_S column a . x, x's entries at stride ld (a column of a row-major matrix)
static double stick_col_dot(const physFrictionPoint* fp, int nv, int a, const double* x, int ld) {
  if (fp->sdof[a] >= 0) return x[(size_t)fp->sdof[a] * ld];
  double s = 0;
  for (int k = 0; k < nv; k++) s += fp->ES[(size_t)k * fp->ns + a] * x[(size_t)k * ld];
  return s;
}

// the tendon rows' q terms (frictionloss_deriv.h): Fq = sum_i (lambda_i/dt) K_ri and, for a sticking tendon row
// a, C_a = v+' K_ra, with K_r = phys_spring_hessian of its tendon; both stay NULL when every tendon row's tendon
// is fixed (K_r = 0). fp->sdof holds the sticking rows' row indices; vnew = v+.
static void tendon_terms(const physModel* m, physData* d, physFrictionPoint* fp, const double* vnew) {
  const physFrictionRows* fr = &fp->fr;
  int nv = m->nv, ns = fp->ns, l = fr->nfd, spatial = 0;
  for (int s = 0; s < m->nspring; s++) spatial |= m->spring_frictionloss[s] > 0 && m->spring_type[s] != PHYS_SPRING_FIXED;
  if (!spatial) return;
  size_t nn = (size_t)nv * nv;
  fp->Fq = phys_stack_alloc(d, nn);
  fp->Cq = phys_stack_alloc(d, (size_t)ns * nv + 1);
  memset(fp->Fq, 0, sizeof(double) * nn);
  memset(fp->Cq, 0, sizeof(double) * ((size_t)ns * nv + 1));
  size_t mark = phys_stack_mark(d);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  double* K = phys_stack_alloc(d, nn);
  for (int s = 0; s < m->nspring; s++) {   // (the rows' order: phys_tendon_frictionloss_rows)
    if (!(m->spring_frictionloss[s] > 0)) continue;
    int i = l++;
    if (m->spring_type[s] == PHYS_SPRING_FIXED) continue;
    phys_spring_hessian(m, d, s, JL, K);
    double c = fr->lambda[i] / m->opt.timestep;
    for (size_t e = 0; e < nn; e++) fp->Fq[e] += c * K[e];
    for (int a = 0; a < ns; a++) {
      if (fp->sdof[a] != i) continue;
      for (int j = 0; j < nv; j++) {
        double sum = 0;
        for (int k = 0; k < nv; k++) sum += vnew[k] * K[(size_t)k * nv + j];
        fp->Cq[(size_t)a * nv + j] = sum;
      }
    }
  }
  phys_stack_free(d, mark);
}

physFrictionPoint* phys_friction_point(const physModel* m, physData* d, const double* L, double* qacc) {
  int nv = m->nv;
  if (phys_frictionloss_count(m) == 0) return NULL;
  double dt = m->opt.timestep;
  physFrictionPoint* fp = (physFrictionPoint*)phys_stack_alloc(d, (sizeof(physFrictionPoint) + 7) / 8);
  memset(fp, 0, sizeof(*fp));
  double* v = phys_stack_alloc(d, (size_t)nv);
  for (int k = 0; k < nv; k++) v[k] = d->qvel[k] + dt * qacc[k];
  physFrictionRows* fr = &fp->fr;
  phys_frictionloss_assemble(m, d, L, v, fr);
  phys_frictionloss_box(d, fr->G, fr->g, fr->b, fr->nf, fr->lambda, fr->state);
  phys_frictionloss_apply(m, fr, v);
  for (int k = 0; k < nv; k++) qacc[k] = (v[k] - d->qvel[k]) / dt;
  memcpy(d->qacc, qacc, sizeof(double) * (size_t)nv);

  int nf = fr->nf, ns = 0;
  fp->sign = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  fp->sdof = (int*)phys_stack_alloc(d, (size_t)nf / 2 + 1);
  memset(fp->sign, 0, sizeof(int) * (size_t)nv);
  for (int i = 0; i < nf; i++) {
    if (fr->state[i] == PHYS_ROW_CLAMPING) fp->sdof[ns++] = i;   // (row index for now)
    else if (fr->dof[i] >= 0) fp->sign[fr->dof[i]] = fr->state[i] == PHYS_ROW_UPPER ? 1 : -1;
  }
  fp->ns = ns;
  fp->K = phys_stack_alloc(d, (size_t)nv * ns + 1);
  fp->Kss = phys_stack_alloc(d, (size_t)ns * ns + 1);
  fp->ES = phys_stack_alloc(d, (size_t)nv * ns + 1);
  for (int a = 0; a < ns; a++) {
    int i = fp->sdof[a];
    for (int k = 0; k < nv; k++) {
      fp->K[(size_t)k * ns + a] = dt * fr->WE[(size_t)k * nf + i];
      fp->ES[(size_t)k * ns + a] = fr->dof[i] >= 0 ? (k == fr->dof[i]) : fr->R[(size_t)(i - fr->nfd) * nv + k];
    }
  }
  tendon_terms(m, d, fp, v);   // (before sdof becomes dofs: it reads the row indices)
  for (int a = 0; a < ns; a++) fp->sdof[a] = fr->dof[fp->sdof[a]];
  for (int a = 0; a < ns; a++)
    for (int c = 0; c < ns; c++) fp->Kss[(size_t)a * ns + c] = stick_row_dot(fp, nv, a, fp->K, c);
  if (ns > 0 && phys_chol_factor(fp->Kss, ns, 0.0) != ns) {
    phys_data_warning(d, "frictionloss: sticking rows' matrix not positive definite at time %g", d->time);
    return NULL;
  }
  return fp;
}

physFrictionPoint* phys_friction_point_sliding(const physModel* m, physData* d, const physFrictionRows* fr) {
  if (fr->nf == 0) return NULL;
  physFrictionPoint* fp = (physFrictionPoint*)phys_stack_alloc(d, (sizeof(physFrictionPoint) + 7) / 8);
  memset(fp, 0, sizeof(*fp));
  fp->fr = *fr;
  fp->sign = (int*)phys_stack_alloc(d, (size_t)m->nv / 2 + 1);
  memset(fp->sign, 0, sizeof(int) * (size_t)m->nv);
  for (int i = 0; i < fr->nf; i++)
    if (fr->state[i] != PHYS_ROW_CLAMPING && fr->dof[i] >= 0) fp->sign[fr->dof[i]] = fr->state[i] == PHYS_ROW_UPPER ? 1 : -1;
  return fp;
}

physFrictionPoint* phys_friction_point_penalty(const physModel* m, physData* d, const double* qacc) {
  int nv = m->nv;
  double dt = m->opt.timestep, vs = m->opt.penalty_vslip;
  physFrictionPoint* fp = (physFrictionPoint*)phys_stack_alloc(d, (sizeof(physFrictionPoint) + 7) / 8);
  memset(fp, 0, sizeof(*fp));
  fp->dfdv = phys_stack_alloc(d, (size_t)nv);
  fp->rcol = phys_stack_alloc(d, (size_t)nv);
  for (int k = 0; k < nv; k++) {
    double v = d->qvel[k], vnew = v + dt * qacc[k], F = m->dof_frictionloss[k];
    double s = fmax(fabs(v), vs), C = F / s, dC = fabs(v) > vs ? -F * (v > 0 ? 1 : -1) / (v * v) : 0;
    fp->dfdv[k] = F > 0 ? -C - dC * vnew : 0;
    fp->rcol[k] = vnew / s;
  }
  return fp;
}

void phys_friction_dfdv(const physModel* m, const physFrictionPoint* fp, double* Gv) {
  if (!fp || !fp->dfdv) return;
  for (int k = 0; k < m->nv; k++) Gv[(size_t)k * m->nv + k] += fp->dfdv[k];
}

void phys_friction_dfdv_vjp(const physModel* m, const physFrictionPoint* fp, const double* lambda, double* vbar) {
  if (!fp || !fp->dfdv || !vbar) return;
  for (int k = 0; k < m->nv; k++) vbar[k] += fp->dfdv[k] * lambda[k];
}

// t (ns) = K_SS^-1 K' w for w (nv)
static void solve_kt(const physFrictionPoint* fp, int nv, const double* w, double* t) {
  int ns = fp->ns;
  for (int a = 0; a < ns; a++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += fp->K[(size_t)k * ns + a] * w[k];
    t[a] = s;
  }
  phys_chol_solve(t, fp->Kss, t, ns);
}

// x (nv entries at stride ld, a column of a row-major matrix) -= K K_SS^-1 t, t (ns) solved in place; x's
// sticking dof entries then exactly 0 (Pi's rows there; a sticking dof's C row is 0 too)
static void sub_k_solve(const physFrictionPoint* fp, int nv, double* t, double* x, int ld) {
  int ns = fp->ns;
  phys_chol_solve(t, fp->Kss, t, ns);
  for (int k = 0; k < nv; k++) {
    double s = 0;
    for (int a = 0; a < ns; a++) s += fp->K[(size_t)k * ns + a] * t[a];
    x[(size_t)k * ld] -= s;
  }
  for (int a = 0; a < ns; a++)
    if (fp->sdof[a] >= 0) x[(size_t)fp->sdof[a] * ld] = 0;
}

void phys_friction_project(const physModel* m, physData* d, const physFrictionPoint* fp, double* V, int ncol,
                           int ld) {
  if (!fp || fp->ns == 0) return;
  int nv = m->nv, ns = fp->ns;
  size_t mark = phys_stack_mark(d);
  double* t = phys_stack_alloc(d, (size_t)ns);
  for (int c = 0; c < ncol; c++) {
    for (int a = 0; a < ns; a++) t[a] = stick_col_dot(fp, nv, a, V + c, ld);
    sub_k_solve(fp, nv, t, V + c, ld);
  }
  phys_stack_free(d, mark);
}

void phys_friction_project_t(const physModel* m, physData* d, const physFrictionPoint* fp, double* w) {
  if (!fp || fp->ns == 0) return;
  int nv = m->nv, ns = fp->ns;
  size_t mark = phys_stack_mark(d);
  double* t = phys_stack_alloc(d, (size_t)ns);
  solve_kt(fp, nv, w, t);
  for (int a = 0; a < ns; a++) {
    if (fp->sdof[a] >= 0) {
      w[fp->sdof[a]] -= t[a];
      continue;
    }
    for (int k = 0; k < nv; k++) w[k] -= fp->ES[(size_t)k * ns + a] * t[a];
  }
  phys_stack_free(d, mark);
}

void phys_friction_dfdq(const physModel* m, const physFrictionPoint* fp, double* Gq) {
  if (!fp || !fp->Fq) return;
  for (size_t i = 0; i < (size_t)m->nv * m->nv; i++) Gq[i] += fp->Fq[i];
}

void phys_friction_dfdq_vjp(const physModel* m, const physFrictionPoint* fp, const double* lambda, double* qbar) {
  if (!fp || !fp->Fq || !qbar) return;
  int nv = m->nv;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) qbar[j] += fp->Fq[(size_t)i * nv + j] * lambda[i];
}

void phys_friction_q_term(const physModel* m, physData* d, const physFrictionPoint* fp, double* V, int ld) {
  if (!fp || !fp->Cq || fp->ns == 0) return;
  int nv = m->nv, ns = fp->ns;
  size_t mark = phys_stack_mark(d);
  double* t = phys_stack_alloc(d, (size_t)ns);
  for (int j = 0; j < nv; j++) {
    for (int a = 0; a < ns; a++) t[a] = fp->Cq[(size_t)a * nv + j];
    sub_k_solve(fp, nv, t, V + j, ld);
  }
  phys_stack_free(d, mark);
}

void phys_friction_q_term_t(const physModel* m, physData* d, const physFrictionPoint* fp, const double* w,
                            double* qbar) {
  if (!fp || !fp->Cq || fp->ns == 0 || !qbar) return;
  int nv = m->nv, ns = fp->ns;
  size_t mark = phys_stack_mark(d);
  double* t = phys_stack_alloc(d, (size_t)ns);
  solve_kt(fp, nv, w, t);
  for (int a = 0; a < ns; a++)
    for (int j = 0; j < nv; j++) qbar[j] -= fp->Cq[(size_t)a * nv + j] * t[a];
  phys_stack_free(d, mark);
}

physStatus phys_friction_param_check(const physModel* m, physData* d, const physParamTable* t) {
  int pos = 0, s;
  for (int e = 0; t && e < t->n; e++) pos |= t->param[e].kind == PHYS_PAR_POS;
  for (s = 0; pos && s < m->nspring; s++)
    if (m->spring_frictionloss[s] > 0 && m->spring_type[s] != PHYS_SPRING_FIXED) break;
  if (!pos || s == m->nspring) return PHYS_OK;
  snprintf(d->lastwarning, sizeof(d->lastwarning), "pos:BODY parameters with the frictionloss of spatial tendon "
           "'%s': that derivative is not built", phys_id2name(m, "spring", s));
  return PHYS_ERR_ARG;
}

int phys_friction_in_table(const physParamTable* t) {
  for (int e = 0; t && e < t->n; e++)
    if (t->param[e].kind == PHYS_PAR_FRICTIONLOSS) return 1;
  return 0;
}

// R's entry -df/dF of dof k (frictionloss_deriv.h): rows: -s_k of a sliding row, 0 sticking, sign(v+_k) without
// a row; penalty: v+_k / s
static double dof_r(const physModel* m, const physFrictionPoint* fp, const double* vnew, int k) {
  if (fp && fp->rcol) return fp->rcol[k];
  if (m->dof_frictionloss[k] > 0) return fp ? -fp->sign[k] : 0;
  return vnew[k] > 0 ? 1 : (vnew[k] < 0 ? -1 : 0);
}

// the dofs [*da, *da + *nd) of joint j
static void joint_dofs(const physModel* m, int j, int* da, int* nd) {
  int type = m->jnt_type[j];
  *da = m->jnt_dofadr[j];
  *nd = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
}

void phys_friction_param_columns(const physModel* m, const physFrictionPoint* fp, const physParamTable* t,
                                 const double* vnew, double* R) {
  int nt = t->ntheta;
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (p->kind != PHYS_PAR_FRICTIONLOSS) continue;
    int da, nd;
    joint_dofs(m, p->id, &da, &nd);
    for (int k = da; k < da + nd; k++) R[(size_t)k * nt + p->adr] += dof_r(m, fp, vnew, k);
  }
}

void phys_friction_param_vjp(const physModel* m, const physFrictionPoint* fp, const physParamTable* t,
                             const double* vnew, const double* lambda, double* theta_bar) {
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (p->kind != PHYS_PAR_FRICTIONLOSS) continue;
    int da, nd;
    joint_dofs(m, p->id, &da, &nd);
    for (int k = da; k < da + nd; k++) theta_bar[p->adr] -= dof_r(m, fp, vnew, k) * lambda[k];
  }
}

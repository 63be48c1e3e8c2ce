// frictionloss_deriv.c - the smooth step's derivatives corrected for joint frictionloss rows
// (frictionloss_deriv.h has the equations).
#include "frictionloss_deriv.h"

#include <math.h>
#include <string.h>

#include "chol.h"
#include "factor.h"

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
    else fp->sign[fr->dof[i]] = fr->state[i] == PHYS_ROW_UPPER ? 1 : -1;
  }
  fp->ns = ns;
  fp->K = phys_stack_alloc(d, (size_t)nv * ns + 1);
  fp->Kss = phys_stack_alloc(d, (size_t)ns * ns + 1);
  for (int a = 0; a < ns; a++) {
    int i = fp->sdof[a];
    for (int k = 0; k < nv; k++) fp->K[(size_t)k * ns + a] = dt * fr->WE[(size_t)k * nf + i];
  }
  for (int a = 0; a < ns; a++) fp->sdof[a] = fr->dof[fp->sdof[a]];
  for (int a = 0; a < ns; a++)
    for (int c = 0; c < ns; c++) fp->Kss[(size_t)a * ns + c] = fp->K[(size_t)fp->sdof[a] * ns + c];
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
    if (fr->state[i] != PHYS_ROW_CLAMPING) fp->sign[fr->dof[i]] = fr->state[i] == PHYS_ROW_UPPER ? 1 : -1;
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

void phys_friction_project(const physModel* m, physData* d, const physFrictionPoint* fp, double* V, int ncol,
                           int ld) {
  if (!fp || fp->ns == 0) return;
  int nv = m->nv, ns = fp->ns;
  size_t mark = phys_stack_mark(d);
  double* t = phys_stack_alloc(d, (size_t)ns);
  for (int c = 0; c < ncol; c++) {
    for (int a = 0; a < ns; a++) t[a] = V[(size_t)fp->sdof[a] * ld + c];
    phys_chol_solve(t, fp->Kss, t, ns);
    for (int k = 0; k < nv; k++) {
      double s = 0;
      for (int a = 0; a < ns; a++) s += fp->K[(size_t)k * ns + a] * t[a];
      V[(size_t)k * ld + c] -= s;
    }
    for (int a = 0; a < ns; a++) V[(size_t)fp->sdof[a] * ld + c] = 0;   // (exactly: Pi V's sticking rows)
  }
  phys_stack_free(d, mark);
}

void phys_friction_project_t(const physModel* m, physData* d, const physFrictionPoint* fp, double* w) {
  if (!fp || fp->ns == 0) return;
  int nv = m->nv, ns = fp->ns;
  size_t mark = phys_stack_mark(d);
  double* t = phys_stack_alloc(d, (size_t)ns);
  for (int a = 0; a < ns; a++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += fp->K[(size_t)k * ns + a] * w[k];
    t[a] = s;
  }
  phys_chol_solve(t, fp->Kss, t, ns);
  for (int a = 0; a < ns; a++) w[fp->sdof[a]] -= t[a];
  phys_stack_free(d, mark);
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

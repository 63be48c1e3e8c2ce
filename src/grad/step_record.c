// step_record.c - the step record (step_record.h): one linearization of phys_step at a state, and the one
// place where the derivatives choose between the smooth, constrained and penalty steps.
//
// The kind is the step's own choice (src/step/step.c phys_step_solver): constrained or penalty when the state
// has contacts (m->opt.disableflags without PHYS_DSBL_CONTACT) or active joint limits, smooth otherwise. A
// constrained model whose last step had constraints (d->ncon, d->nlimit) is linearized through the
// constrained stage first, which detects the contacts once; when it finds none the smooth point follows.
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "dyn.h"
#include "grad.h"
#include "penalty_deriv.h"
#include "step_contact_deriv.h"
#include "step_record.h"
#include "toi.h"

// 1 if the step at d's state has an active joint limit or a contact (detected at d's kinematics, which the
// caller ran; d's contact list is left as it was)
static int has_constraints(const physModel* m, physData* d) {
  if (phys_constraint_nlimit(m, d) > 0) return 1;
  return !(m->opt.disableflags & PHYS_DSBL_CONTACT) && phys_collision_count(m, d) > 0;
}

// the smooth kind: L and a in arena memory of rec's mark (kinematics: 1 if d's are at the state already)
static physStatus linearize_smooth(const physModel* m, physData* d, int kinematics, physStepRecord* rec) {
  int nv = m->nv;
  rec->kind = PHYS_STEP_SMOOTH;
  rec->L = phys_stack_alloc(d, (size_t)nv * nv);
  rec->qacc = phys_stack_alloc(d, (size_t)nv);
  return phys_smooth_step_point(m, d, kinematics, rec->L, rec->qacc);
}

// the constrained kind (step_contact_deriv.h); *found = 0 if the step has no constraints after all
static physStatus linearize_constrained(const physModel* m, physData* d, physStepRecord* rec, int* found) {
  physStatus st = phys_constrained_linearize(m, d, &rec->cp);
  *found = rec->cp != NULL;
  if (*found) rec->kind = PHYS_STEP_CONSTRAINED;
  return st;
}

physStatus phys_step_linearize(const physModel* m, physData* d, physStepRecord* rec) {
  memset(rec, 0, sizeof(*rec));
  rec->mark = phys_stack_mark(d);
  rec->solver = m->opt.contact;
  if (!phys_grad_balls_last(m)) return PHYS_ERR_MODEL;
  if (m->opt.contact == PHYS_CONTACT_PENALTY) {
    if (phys_penalty_deriv_applies(m, d)) {
      rec->kind = PHYS_STEP_PENALTY;
      return PHYS_OK;
    }
    return linearize_smooth(m, d, 1, rec);   // (phys_penalty_deriv_applies ran the kinematics)
  }
  int found = 0;
  if (d->ncon > 0 || d->nlimit > 0) {   // the last step had constraints: detect them once, in the stage
    physStatus st = linearize_constrained(m, d, rec, &found);
    if (st != PHYS_OK || found) return st;
    return linearize_smooth(m, d, 0, rec);
  }
  phys_kinematics(m, d);
  if (!has_constraints(m, d)) return linearize_smooth(m, d, 1, rec);
  physStatus st = linearize_constrained(m, d, rec, &found);
  return st == PHYS_OK && !found ? PHYS_ERR_ARG : st;   // (detection and the stage disagree: not reached)
}

void phys_step_record_free(physData* d, physStepRecord* rec) {
  rec->cp = NULL;
  phys_stack_free(d, rec->mark);
}

physStatus phys_step_record_jacobian(const physModel* m, physData* d, const physStepRecord* rec,
                                     const physParamTable* t, double* A, double* B, double* P) {
  int toi = (m->opt.gradflags & PHYS_GRAD_TOI) != 0;
  physStatus st = PHYS_OK;
  if (P && t && t->ntheta == 0) P = NULL;
  switch (rec->kind) {
    case PHYS_STEP_SMOOTH:
      phys_smooth_step_jacobian(m, d, rec->L, rec->qacc, A, B);
      if (P && t) phys_smooth_step_param_jacobian(m, d, rec->L, rec->qacc, t, P);
      return PHYS_OK;
    case PHYS_STEP_PENALTY: return phys_penalty_step_jacobian(m, d, t, A, B, P);
    case PHYS_STEP_CONSTRAINED:
      st = phys_constrained_jacobian_at(m, d, rec->cp, t, A, B, P);
      if (st == PHYS_OK && toi && A) st = phys_toi_jacobian(m, d, A);
      if (st == PHYS_OK && toi && P && t) st = phys_toi_param_jacobian(m, d, t, P);
      return st;
  }
  return PHYS_ERR_ARG;
}

physStatus phys_step_record_vjp(const physModel* m, physData* d, const physStepRecord* rec,
                                const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                double* theta_bar, double* lambda) {
  int toi = (m->opt.gradflags & PHYS_GRAD_TOI) != 0, nv = m->nv;
  physStatus st = PHYS_OK;
  if (!t || t->ntheta == 0) theta_bar = NULL;
  switch (rec->kind) {
    case PHYS_STEP_SMOOTH: {
      size_t mark = phys_stack_mark(d);
      double* lam = lambda ? lambda : phys_stack_alloc(d, (size_t)nv);
      phys_smooth_step_vjp(m, d, rec->L, rec->qacc, xbar_next, xbar, ubar, lam);
      if (theta_bar) phys_param_forces_vjp(m, d, t, rec->qacc, lam, theta_bar);
      phys_stack_free(d, mark);
      return PHYS_OK;
    }
    case PHYS_STEP_PENALTY: return phys_penalty_step_vjp(m, d, t, xbar_next, xbar, ubar, theta_bar, NULL);
    case PHYS_STEP_CONSTRAINED:
      st = phys_constrained_vjp_at(m, d, rec->cp, t, xbar_next, xbar, ubar, theta_bar, NULL);
      if (st == PHYS_OK && toi && xbar) st = phys_toi_vjp(m, d, xbar_next, xbar);
      if (st == PHYS_OK && toi && theta_bar) st = phys_toi_param_vjp(m, d, t, xbar_next, theta_bar);
      return st;
  }
  return PHYS_ERR_ARG;
}

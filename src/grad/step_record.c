// step_record.c - the step record (step_record.h): one linearization of phys_step at a state, the one place
// where the derivatives choose between the smooth, constrained and penalty steps, and the public derivatives
// of the step built on it (phys_step_jacobian, phys_step_vjp(_lambda), phys_step_point in grad.h;
// phys_step_param_jacobian, phys_step_param_vjp in params.h). The kinds' routines (step_deriv.c,
// param_deriv.c, step_contact_deriv.h, penalty_deriv.h, toi.h) call nothing of this file: no cycle.
//
// The kind is the step's own choice (src/step/step.c phys_step_solver): constrained or penalty when the state
// has contacts (m->opt.disableflags without PHYS_DSBL_CONTACT) or active joint limits, smooth otherwise. A
// constrained model whose last step had constraints (d->ncon, d->nlimit) is linearized through the
// constrained stage first, which detects the contacts once; when it finds none the smooth point follows. With
// equality rows the constrained kind is constrained_eq (the rows' implicit function on the constrained step of
// the model without them, step_equality_deriv.h).
#include <string.h>

#include "act_deriv.h"
#include "arena.h"
#include "collision.h"
#include "contact.h"
#include "dyn.h"
#include "equality.h"
#include "grad.h"
#include "pbd.h"
#include "penalty_deriv.h"
#include "step_contact_deriv.h"
#include "step_equality_deriv.h"
#include "step_record.h"
#include "toi.h"

// 1 if the step at d's state has an active joint limit or a contact (detected at d's kinematics, which the
// caller ran; d's contact list is left as it was)
static int has_constraints(const physModel* m, physData* d) {
  if (phys_constraint_nlimit(m, d) > 0) return 1;
  // ccp's envelope grows with the geoms' speeds (cvel): at this state, not a stale one left by another state
  // (the other models' envelopes are constants)
  if (m->opt.contact == PHYS_CONTACT_CCP) {
    phys_com_pos(m, d);
    phys_com_vel(m, d);
  }
  return !(m->opt.disableflags & PHYS_DSBL_CONTACT) && phys_collision_count(m, d) > 0;
}

// the equality rows' point of a smooth-kind step (issue 15 item 1, step_equality_deriv.h): refused with
// frictionloss rows or a residual network (their derivatives are not combined with the rows yet)
static physStatus linearize_equality(const physModel* m, physData* d, physStepRecord* rec) {
  if (phys_frictionloss_count(m) > 0 || m->residual) {
    phys_data_warning(d, "phys_step derivatives: equality constraints together with %s are not supported",
                      m->residual ? "a residual network" : "frictionloss rows");
    return PHYS_ERR_MODEL;
  }
  rec->eq = phys_equality_point(m, d, rec->L, rec->qacc);
  return PHYS_OK;
}

// the smooth kind: L and a in arena memory of rec's mark (kinematics: 1 if d's are at the state already); with
// frictionloss rows (lcp, cone, ccp) their solution, a = the step's a+ (frictionloss_deriv.h)
static physStatus linearize_smooth(const physModel* m, physData* d, int kinematics, physStepRecord* rec) {
  int nv = m->nv;
  rec->kind = PHYS_STEP_SMOOTH;
  rec->L = phys_stack_alloc(d, (size_t)nv * nv);
  rec->qacc = phys_stack_alloc(d, (size_t)nv);
  if (m->opt.integrator == PHYS_INT_IMPLICIT && phys_frictionloss_count(m) == 0) {   // (the step's choice, step.c)
    rec->kind = PHYS_STEP_IMPLICIT;
    return phys_implicit_step_point(m, d, kinematics, rec->L, rec->qacc);
  }
  physStatus st = phys_smooth_step_point(m, d, kinematics, rec->L, rec->qacc);
  if (st == PHYS_OK && phys_equality_rows(m) > 0) return linearize_equality(m, d, rec);
  if (st != PHYS_OK || phys_frictionloss_count(m) == 0) return st;
  if (m->residual) return PHYS_ERR_MODEL;   // (the residual's derivatives: smooth steps without frictionloss only)
  if (m->opt.contact == PHYS_CONTACT_PENALTY) rec->fp = phys_friction_point_penalty(m, d, rec->qacc);
  else rec->fp = phys_friction_point(m, d, rec->L, rec->qacc);
  return rec->fp ? PHYS_OK : PHYS_ERR_NUMERIC;
}

// the constrained kind (step_contact_deriv.h) from rec's warm start if the stage has constraints; without any
// (rec->cp NULL) the smooth kind at the kinematics the stage left
static physStatus linearize_constrained(const physModel* m, physData* d, physStepRecord* rec) {
  if (phys_equality_rows(m) > 0) {   // issue 15 item 1: the equality rows' implicit function on Phi's point
    physStatus st = phys_equality_constrained_point(m, d, &rec->warm, &rec->eq);
    if (st != PHYS_OK) return st;
    if (!rec->eq) return linearize_smooth(m, d, 0, rec);
    rec->kind = PHYS_STEP_CONSTRAINED_EQ;
    rec->cp = rec->eq->cp;
    rec->L = phys_constrained_factor(rec->cp);
    return PHYS_OK;
  }
  physStatus st = phys_constrained_linearize(m, d, &rec->warm, &rec->cp);
  if (st != PHYS_OK) return st;
  if (!rec->cp) return linearize_smooth(m, d, 0, rec);
  rec->kind = PHYS_STEP_CONSTRAINED;
  rec->L = phys_constrained_factor(rec->cp);
  return PHYS_OK;
}

physStatus phys_step_linearize(const physModel* m, physData* d, physStepRecord* rec) {
  return phys_step_linearize_warm(m, d, NULL, rec);
}

physStatus phys_step_linearize_warm(const physModel* m, physData* d, const physWarmStart* warm,
                                    physStepRecord* rec) {
  memset(rec, 0, sizeof(*rec));
  d->nlinearize++;
  rec->mark = phys_stack_mark(d);
  rec->solver = m->opt.contact;
  rec->warm = warm ? *warm : (physWarmStart){d->ncon, d->contact};
  for (int a = 0; a < m->nu; a++)
    if (m->actuator_trntype[a] == PHYS_TRN_BODY) {   // (their moments move with the contacts: not built)
      phys_data_warning(d, "phys_step derivatives: actuator '%s' is an adhesion actuator, whose derivatives (its "
                        "moment through the body's contacts) are not supported yet", phys_id2name(m, "actuator", a));
      return PHYS_ERR_MODEL;
    }
  if (!phys_grad_balls_last(m)) {   // (the message: identify printed "invalid model ()" without it)
    phys_data_warning(d, "phys_step derivatives: a ball joint is not the last joint of its body, which the "
                      "derivatives do not support (put the ball joint last)");
    return PHYS_ERR_MODEL;
  }
  if (!phys_grad_actuators_ok(m)) {
    phys_data_warning(d, "phys_step derivatives: a rest-length actuator has activation dynamics, which the "
                      "derivatives do not support");
    return PHYS_ERR_MODEL;
  }
  if (m->opt.integrator == PHYS_INT_PBD) {   // issue 17 item 2 (pbd_deriv.c): the model as the step takes it
    char msg[200];
    if (!phys_pbd_supported(m, msg, sizeof msg)) {
      phys_data_warning(d, "phys_step derivatives: %s", msg);
      return PHYS_ERR_MODEL;
    }
    rec->kind = PHYS_STEP_PBD;
    return PHYS_OK;
  }
  if (m->opt.integrator == PHYS_INT_IMPLICIT && (m->na > 0 || phys_equality_rows(m) > 0)) {   // (merged apart)
    phys_data_warning(d, "phys_step derivatives: the implicit integrator's derivatives cover neither activations "
                      "nor equality constraints yet");
    return PHYS_ERR_MODEL;
  }
  if (m->opt.contact == PHYS_CONTACT_PENALTY) {
    if (phys_penalty_deriv_applies(m, d)) {
      rec->kind = PHYS_STEP_PENALTY;
      return PHYS_OK;
    }
    return linearize_smooth(m, d, 1, rec);   // (phys_penalty_deriv_applies ran the kinematics)
  }
  // the last step had constraints: detect them once, in the stage
  if (rec->warm.n > 0 || d->nlimit > 0) return linearize_constrained(m, d, rec);
  phys_kinematics(m, d);
  if (!has_constraints(m, d)) return linearize_smooth(m, d, 1, rec);
  // the stage's own detection decides (as in the branch above): none there means the step is smooth
  return linearize_constrained(m, d, rec);
}

void phys_step_record_free(physData* d, physStepRecord* rec) {
  rec->cp = NULL;
  phys_stack_free(d, rec->mark);
}

// the kind's A, B, P in x = (q, v) (act_deriv.h's physKindJacobian; ctx unused)
static physStatus kind_jacobian(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                                double* A, double* B, double* P, void* ctx) {
  (void)ctx;
  int toi = (m->opt.gradflags & PHYS_GRAD_TOI) != 0;
  physStatus st = PHYS_OK;
  if (P && t && t->ntheta == 0) P = NULL;
  switch (rec->kind) {
    case PHYS_STEP_SMOOTH:
      if (P && t && rec->fp && phys_friction_param_check(m, d, t) != PHYS_OK) return PHYS_ERR_ARG;
      if (rec->eq) {
        phys_equality_step_jacobian(m, d, rec->L, rec->qacc, rec->eq, t, A, B, P);
        return PHYS_OK;
      }
      phys_smooth_step_jacobian(m, d, rec->L, rec->qacc, rec->fp, A, B);
      if (P && t) phys_smooth_step_param_jacobian(m, d, rec->L, rec->qacc, rec->fp, t, P);
      return PHYS_OK;
    case PHYS_STEP_PENALTY: return phys_penalty_step_jacobian(m, d, t, A, B, P);
    case PHYS_STEP_IMPLICIT: return phys_implicit_step_jacobian(m, d, rec->L, rec->qacc, t, A, B, P);
    case PHYS_STEP_CONSTRAINED_EQ: return phys_equality_constrained_jacobian(m, d, rec->eq, t, A, B, P);
    case PHYS_STEP_PBD: return phys_pbd_step_jacobian(m, d, t, A, B, P);
    case PHYS_STEP_CONSTRAINED:
      st = phys_constrained_jacobian_at(m, d, rec->cp, t, A, B, P);
      if (st == PHYS_OK && toi && A) st = phys_toi_jacobian(m, d, rec, A);
      if (st == PHYS_OK && toi && P && t) st = phys_toi_param_jacobian(m, d, rec, t, P);
      return st;
  }
  return PHYS_ERR_ARG;
}

// the kind's reverse mode in x = (q, v) (act_deriv.h's physKindVjp)
static physStatus kind_vjp(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                           const double* xbar_next, double* xbar, double* ubar, double* theta_bar, double* lambda) {
  int toi = (m->opt.gradflags & PHYS_GRAD_TOI) != 0, nv = m->nv;
  physStatus st = PHYS_OK;
  if (!t || t->ntheta == 0) theta_bar = NULL;
  switch (rec->kind) {
    case PHYS_STEP_SMOOTH: {
      if (theta_bar && rec->fp && phys_friction_param_check(m, d, t) != PHYS_OK) return PHYS_ERR_ARG;
      if (rec->eq) {
        phys_equality_step_vjp(m, d, rec->L, rec->qacc, rec->eq, t, xbar_next, xbar, ubar, theta_bar);
        return PHYS_OK;
      }
      size_t mark = phys_stack_mark(d);
      double* lam = lambda ? lambda : phys_stack_alloc(d, (size_t)nv);
      phys_smooth_step_vjp(m, d, rec->L, rec->qacc, rec->fp, xbar_next, xbar, ubar, lam);
      if (theta_bar) phys_param_forces_vjp(m, d, t, rec->qacc, lam, theta_bar);
      if (theta_bar && phys_friction_in_table(t)) {
        double* vnew = phys_stack_alloc(d, (size_t)nv);
        phys_smooth_step_vnew(m, d, rec->qacc, vnew);
        phys_friction_param_vjp(m, rec->fp, t, vnew, lam, theta_bar);
      }
      phys_stack_free(d, mark);
      return PHYS_OK;
    }
    case PHYS_STEP_PENALTY: return phys_penalty_step_vjp(m, d, t, xbar_next, xbar, ubar, theta_bar, NULL);
    case PHYS_STEP_IMPLICIT: return phys_implicit_step_vjp(m, d, rec->L, rec->qacc, t, xbar_next, xbar, ubar, theta_bar);
    case PHYS_STEP_CONSTRAINED_EQ:
      return phys_equality_constrained_vjp(m, d, rec->eq, t, xbar_next, xbar, ubar, theta_bar, lambda);
    case PHYS_STEP_PBD: return phys_pbd_step_vjp(m, d, t, xbar_next, xbar, ubar, theta_bar);
    case PHYS_STEP_CONSTRAINED:
      st = phys_constrained_vjp_at(m, d, rec->cp, t, xbar_next, xbar, ubar, theta_bar, lambda);
      if (st == PHYS_OK && toi && xbar) st = phys_toi_vjp(m, d, rec, xbar_next, xbar);
      if (st == PHYS_OK && toi && theta_bar) st = phys_toi_param_vjp(m, d, rec, t, xbar_next, theta_bar);
      return st;
  }
  return PHYS_ERR_ARG;
}

// with activations (na > 0) the kind's derivatives in the (q, v, act) layout (act_deriv.h)
physStatus phys_step_record_jacobian(const physModel* m, physData* d, const physStepRecord* rec,
                                     const physParamTable* t, double* A, double* B, double* P) {
  if (m->na > 0) return phys_act_record_jacobian(m, d, rec, t, A, B, P, kind_jacobian, NULL);
  return kind_jacobian(m, d, rec, t, A, B, P, NULL);
}

physStatus phys_step_record_vjp(const physModel* m, physData* d, const physStepRecord* rec,
                                const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                double* theta_bar, double* lambda) {
  if (m->na > 0) return phys_act_record_vjp(m, d, rec, t, xbar_next, xbar, ubar, theta_bar, lambda, kind_vjp);
  return kind_vjp(m, d, rec, t, xbar_next, xbar, ubar, theta_bar, lambda);
}

//---------------------------------------------------------------------------------------------------------
// the public derivatives of the step (grad.h, params.h): one linearization, one dispatch, under an arena guard

// the linearization point of any kind but penalty (grad.h)
static physStatus step_point(const physModel* m, physData* d, double* L) {
  physStepRecord rec;
  physStatus st = phys_step_linearize(m, d, &rec);
  if (st == PHYS_OK) {
    if (rec.kind == PHYS_STEP_PENALTY || rec.kind == PHYS_STEP_IMPLICIT || rec.kind == PHYS_STEP_PBD) st = PHYS_ERR_ARG;   // (no tree factor)
    else memcpy(L, rec.L, sizeof(double) * (size_t)m->nv * m->nv);
  }
  phys_step_record_free(d, &rec);
  return st;
}

// under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
physStatus phys_step_point(const physModel* m, physData* d, double* L) {
  PHYS_ARENA_CALL(d, "phys_step_point", step_point(m, d, L));
}

static physStatus step_jacobian(const physModel* m, physData* d, double* A, double* B) {
  physStepRecord rec;
  physStatus st = phys_step_linearize(m, d, &rec);
  if (st == PHYS_OK) st = phys_step_record_jacobian(m, d, &rec, NULL, A, B, NULL);
  phys_step_record_free(d, &rec);
  return st;
}

// under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
physStatus phys_step_jacobian(const physModel* m, physData* d, double* A, double* B) {
  PHYS_ARENA_CALL(d, "phys_step_jacobian", step_jacobian(m, d, A, B));
}

// the aware labels' Jacobians (ctx: awareCtx) of a constrained record in x = (q, v), else the kind's
typedef struct awareCtx_ {
  const double* xbar_next;
  int relabelled;
} awareCtx;

static physStatus aware_jacobian(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                                 double* A, double* B, double* P, void* ctx) {
  awareCtx* c = (awareCtx*)ctx;
  if (rec->kind != PHYS_STEP_CONSTRAINED) return kind_jacobian(m, d, rec, t, A, B, P, NULL);
  physConstrainedPoint* aware;
  physStatus st = phys_constrained_aware_point(m, d, rec->cp, c->xbar_next, &aware, &c->relabelled);
  if (st == PHYS_OK) st = phys_constrained_jacobian_at(m, d, aware, NULL, A, B, NULL);
  if (st == PHYS_OK && A && (m->opt.gradflags & PHYS_GRAD_TOI)) st = phys_toi_jacobian(m, d, rec, A);
  return st;
}

// the record's Jacobian at the point with the aware labels for xbar_next (constrained kind), else as
// phys_step_record_jacobian; the time-of-impact correction as there; activations as there
static physStatus step_jacobian_aware(const physModel* m, physData* d, const double* xbar_next, double* A,
                                      double* B, int* relabelled) {
  physStepRecord rec;
  awareCtx c = {xbar_next, 0};
  physStatus st = phys_step_linearize(m, d, &rec);
  if (st == PHYS_OK && m->na > 0) st = phys_act_record_jacobian(m, d, &rec, NULL, A, B, NULL, aware_jacobian, &c);
  else if (st == PHYS_OK) st = aware_jacobian(m, d, &rec, NULL, A, B, NULL, &c);
  phys_step_record_free(d, &rec);
  if (relabelled) *relabelled = c.relabelled;
  return st;
}

// under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
physStatus phys_step_jacobian_aware(const physModel* m, physData* d, const double* xbar_next, double* A, double* B,
                                    int* relabelled) {
  PHYS_ARENA_CALL(d, "phys_step_jacobian_aware", step_jacobian_aware(m, d, xbar_next, A, B, relabelled));
}

physStatus phys_step_vjp(const physModel* m, physData* d, const double* xbar_next, double* xbar, double* ubar) {
  return phys_step_vjp_lambda(m, d, xbar_next, xbar, ubar, NULL);
}

static physStatus step_vjp_lambda(const physModel* m, physData* d, const double* xbar_next, double* xbar,
                                  double* ubar, double* lambda) {
  physStepRecord rec;
  physStatus st = phys_step_linearize(m, d, &rec);
  if (st == PHYS_OK) st = phys_step_record_vjp(m, d, &rec, NULL, xbar_next, xbar, ubar, NULL, lambda);
  phys_step_record_free(d, &rec);
  return st;
}

// under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
physStatus phys_step_vjp_lambda(const physModel* m, physData* d, const double* xbar_next, double* xbar,
                                double* ubar, double* lambda) {
  PHYS_ARENA_CALL(d, "phys_step_vjp_lambda", step_vjp_lambda(m, d, xbar_next, xbar, ubar, lambda));
}

static physStatus step_param_jacobian(const physModel* m, physData* d, const physParamTable* t, double* P) {
  if (t->ntheta == 0) return PHYS_OK;
  physStepRecord rec;
  physStatus st = phys_step_linearize(m, d, &rec);
  if (st == PHYS_OK) st = phys_step_record_jacobian(m, d, &rec, t, NULL, NULL, P);
  phys_step_record_free(d, &rec);
  return st;
}

static physStatus step_param_vjp(const physModel* m, physData* d, const physParamTable* t,
                                 const double* xbar_next, double* theta_bar) {
  if (t->ntheta == 0) return PHYS_OK;
  physStepRecord rec;
  physStatus st = phys_step_linearize(m, d, &rec);
  if (st == PHYS_OK) st = phys_step_record_vjp(m, d, &rec, t, xbar_next, NULL, NULL, theta_bar, NULL);
  phys_step_record_free(d, &rec);
  return st;
}

// under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
physStatus phys_step_param_jacobian(const physModel* m, physData* d, const physParamTable* t, double* P) {
  PHYS_ARENA_CALL(d, "phys_step_param_jacobian", step_param_jacobian(m, d, t, P));
}

// under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
physStatus phys_step_param_vjp(const physModel* m, physData* d, const physParamTable* t,
                               const double* xbar_next, double* theta_bar) {
  PHYS_ARENA_CALL(d, "phys_step_param_vjp", step_param_vjp(m, d, t, xbar_next, theta_bar));
}

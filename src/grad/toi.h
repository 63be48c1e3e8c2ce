// toi.h - the time-of-impact correction of the step Jacobian for elastic bounces (paper 001
// section VI and appendix E, paper 002 appendix VII), applied by phys_step_jacobian and phys_step_vjp when
// m->opt.gradflags has PHYS_GRAD_TOI and the contact model is lcp, cone or ccp. The derivation is in
// toi.c's file comment.
#ifndef PHYS_TOI_H
#define PHYS_TOI_H

#include "contact.h"
#include "params.h"
#include "physid.h"
#include "step_record.h"

// the correction Delta (nv x nv) of dq+/dq at d's state, whose step record is rec (step_record.h: the kind of
// step and its warm-start input): only the constrained kind has one (any other: Delta = 0, no trial step).
// The step's bouncing contacts (restitution branch, pushing, eps > 0) are found by one trial phys_step from
// rec's warm-start input (state, time and warnings restored; its contacts go to a list of its own: d's contact
// lists are only read). Returns the number of bouncing contacts (0: Delta = 0), or -1 if M + dt B is not
// positive definite. The functions below take rec alike.
int phys_toi_delta(const physModel* m, physData* d, const physStepRecord* rec, double* delta);
// A (2nv x 2nv, the step Jacobian at d's state) += Delta in its dq+/dq block
physStatus phys_toi_jacobian(const physModel* m, physData* d, const physStepRecord* rec, double* A);
// reverse mode: xbar[0:nv] += Delta' xbar_next[0:nv] (xbar the step VJP's result at d's state)
physStatus phys_toi_vjp(const physModel* m, physData* d, const physStepRecord* rec, const double* xbar_next,
                        double* xbar);

// the restitution parameters: P (2nv x t->ntheta, the step's parameter Jacobian at d's state) += the bouncing
// contacts' U_b in the q+ rows of their restitution:GEOM columns; reverse mode theta_bar += U_b . qbar+
physStatus phys_toi_param_jacobian(const physModel* m, physData* d, const physStepRecord* rec,
                                   const physParamTable* t, double* P);
physStatus phys_toi_param_vjp(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                              const double* xbar_next, double* theta_bar);

#endif  // PHYS_TOI_H

// penalty_deriv.h - exact derivatives of the penalty contact model's step ("penalty
// directly"): phys_step with m->opt.contact == PHYS_CONTACT_PENALTY and penetrating contacts or active joint
// limits (src/step/step.c penalty_velocity / penalty_dense, src/contact/penalty.c). The equations and the
// choices (what is differentiated, what is held) are in penalty_deriv.c's file comment.
//
// x = (q tangent, v) as grad.h. phys_step_jacobian, phys_step_vjp and phys_step_param_jacobian /
// phys_step_param_vjp dispatch here when phys_penalty_deriv_applies; these may also be called directly.
#ifndef PHYS_PENALTY_DERIV_H
#define PHYS_PENALTY_DERIV_H

#include "params.h"
#include "physid.h"

// 1 if m uses penalty contact and the step at d's state has an active joint-limit spring or a contact
// (detected at d's kinematics, which this runs; d->contact is left untouched), i.e. phys_step would not take
// the unconstrained path
int phys_penalty_deriv_applies(const physModel* m, physData* d);

// A = dx+/dx (2nv x 2nv), B = dx+/du (2nv x nu), P = dx+/dtheta (2nv x t->ntheta) of the penalty step at d's
// state (any may be NULL; t may be NULL without P). PHYS_ERR_ARG if a contact's geometry has no derivative
// (the pair's types) or a table entry is not supported with penalty contact (size, pos), PHYS_ERR_MODEL
// as phys_step_jacobian, PHYS_ERR_NUMERIC (counted warning) if a matrix is not positive definite. The
// state is not advanced; d->contact is not written (the tape detects into its own list); d->qacc is the
// step's acceleration.
physStatus phys_penalty_step_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A,
                                      double* B, double* P);
// reverse mode: xbar = A' xbar_next (2nv), ubar = B' xbar_next (nu), theta_bar = P' xbar_next (t->ntheta);
// any output may be NULL. force_bar (nv, may be NULL) = sum_k lambda_k, the adjoint of the smooth force f
// (which enters every solve k; theta_bar is not -R' force_bar, since R depends on each solve's a_k: use
// theta_bar). Same conditions as phys_penalty_step_jacobian.
physStatus phys_penalty_step_vjp(const physModel* m, physData* d, const physParamTable* t,
                                 const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                                 double* force_bar);

// d eps / d zeta of phys_penalty_restitution (closed form of its derivative)
double phys_penalty_restitution_deriv(double zeta);

#endif  // PHYS_PENALTY_DERIV_H

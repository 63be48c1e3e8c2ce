// step_contact_deriv.h - exact derivatives of the constrained step (issue 4 items 1-3 for contact): phys_step
// with m->opt.contact lcp, cone or ccp and contacts or active joint limits (src/step/step.c
// phys_step_constrained). The equations are in step_contact_deriv.c's file comment.
//
// x = (q tangent, v) as grad.h. phys_step_jacobian, phys_step_vjp(_lambda), phys_step_point,
// phys_step_param_jacobian and phys_step_param_vjp dispatch here when the step has constraints and the
// contact model is not penalty; these may also be called directly. The derivative is taken at exactly the
// solution phys_step computes (same warm start d->contact as contact_prev); d->contact, d->contact_prev and
// their counts are restored, so the caller's next phys_step is unchanged.
#ifndef PHYS_STEP_CONTACT_DERIV_H
#define PHYS_STEP_CONTACT_DERIV_H

#include "params.h"
#include "physid.h"

// A = dx+/dx (2nv x 2nv), B = dx+/du (2nv x nu), P = dx+/dtheta (2nv x t->ntheta) of the constrained step
// at d's state (any may be NULL; t may be NULL without P). PHYS_ERR_ARG if the step has no constraints, uses
// penalty contact, or a contact's pair has no geometry derivative; PHYS_ERR_MODEL as phys_step_jacobian;
// PHYS_ERR_NUMERIC (counted warning) if M~ is not positive definite or a solver derivative failed. The
// state is not advanced; d->qacc = (v+ - v)/dt, d->qLD the factor of M~ at the state.
physStatus phys_constrained_step_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A,
                                          double* B, double* P);
// reverse mode: xbar = A' xbar_next (2nv), ubar = B' xbar_next (nu), theta_bar = P' xbar_next (t->ntheta);
// any output may be NULL (theta_bar needs t). Same conditions as phys_constrained_step_jacobian. force_bar
// (nv, may be NULL) receives the adjoint of the smooth generalized force at a+ = (v+ - v)/dt (its
// contribution -R(a+)' force_bar is part of theta_bar, not all of it).
physStatus phys_constrained_step_vjp(const physModel* m, physData* d, const physParamTable* t,
                                     const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                                     double* force_bar);
// the same two, tried before knowing whether the step has constraints: when it has none, *none = 1 and
// PHYS_ERR_ARG with nothing written (d's kinematics are then up to date); else as above with *none = 0. The
// dispatchers try them first when the last step had constraints (d->ncon or d->nlimit), so a step in contact
// detects its contacts once, not twice
physStatus phys_constrained_step_jacobian_if(const physModel* m, physData* d, const physParamTable* t, double* A,
                                             double* B, double* P, int* none);
physStatus phys_constrained_step_vjp_if(const physModel* m, physData* d, const physParamTable* t,
                                        const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                                        double* force_bar, int* none);
// the linearization point: d->qacc = (v+ - v)/dt of the constrained step and L = the factor of M~ (nv x nv,
// factor.h's storage); the lists are restored. Status as above.
physStatus phys_constrained_step_point(const physModel* m, physData* d, double* L);
// the number of constraint rows of the step at d's state on the position correction's kink, where the
// derivatives take the correcting side and the step does not correct (README, Derivatives; 0 without
// constraints or with penalty): there the Jacobian is a one-sided derivative, and a difference quotient
// agrees with it only along directions that press every such row deeper. The lists are restored.
int phys_constrained_step_kinks(const physModel* m, physData* d);

#endif  // PHYS_STEP_CONTACT_DERIV_H

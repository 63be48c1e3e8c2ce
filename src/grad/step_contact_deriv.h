// step_contact_deriv.h - exact derivatives of the constrained step: phys_step
// with m->opt.contact lcp, cone or ccp and contacts or active joint limits (src/step/step.c
// phys_step_constrained). The equations are in step_contact_deriv.c's file comment.
//
// x = (q tangent, v) as grad.h. The step record (step_record.h) dispatches here when the step has constraints
// and the contact model is not penalty; the entry points below may also be called directly. The derivative is taken at exactly the
// solution phys_step computes: the step's stage gets the same warm-start input, the caller's d->contact, as
// an explicit argument (physWarmStart, step.h). The stage detects into a list of its own (arena memory), which
// the derivatives read through the problem (physConstraintProblem.con): d->contact, its counts and
// d->contact_prev are neither written nor restored, so the caller's next phys_step is unchanged.
#ifndef PHYS_STEP_CONTACT_DERIV_H
#define PHYS_STEP_CONTACT_DERIV_H

#include "params.h"
#include "physid.h"
#include "step_record.h"

// A = dx+/dx (2nv x 2nv), B = dx+/du (2nv x nu), P = dx+/dtheta (2nv x t->ntheta) of the constrained step
// at d's state (any may be NULL; t may be NULL without P). PHYS_ERR_ARG if the step has no constraints, uses
// penalty contact, or a contact's pair has no geometry derivative; PHYS_ERR_MODEL as phys_step_jacobian;
// PHYS_ERR_NUMERIC (counted warning) if M~ is not positive definite or a solver derivative failed. The
// state is not advanced; d->qacc = (v+ - v)/dt.
physStatus phys_constrained_step_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A,
                                          double* B, double* P);
// reverse mode: xbar = A' xbar_next (2nv), ubar = B' xbar_next (nu), theta_bar = P' xbar_next (t->ntheta);
// any output may be NULL (theta_bar needs t). Same conditions as phys_constrained_step_jacobian. force_bar
// (nv, may be NULL) receives the adjoint of the smooth generalized force at a+ = (v+ - v)/dt (its
// contribution -R(a+)' force_bar is part of theta_bar, not all of it).
physStatus phys_constrained_step_vjp(const physModel* m, physData* d, const physParamTable* t,
                                     const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                                     double* force_bar);
// the linearization: the step's stage at d's state (contacts detected once, the solver's solution and row
// states, the position problem), M~'s factor, Y = M~^-1 J', the bias branches, the kink's position problem
// and lcp's local structures of both problems (contact.h phys_solve_lcp_local: built here once, read by every
// derivative at the point), in arena memory above d's mark at the call (released with it); *cp = NULL
// (PHYS_OK) when the step has no constraints. Nothing at the point is read from d->qLD afterwards. The
// stage's contacts are the point's (arena memory); d's contact lists are read only (the warm start). Status:
// PHYS_ERR_MODEL, PHYS_ERR_ARG (penalty), PHYS_ERR_NUMERIC (M~ failed).
// warm: the step's warm-start input (NULL: d's own list, d->contact).
physStatus phys_constrained_linearize(const physModel* m, physData* d, const physWarmStart* warm,
                                      physConstrainedPoint** cp);
// M~'s factor at cp's state (nv x nv, factor.h's storage; cp's memory)
double* phys_constrained_factor(const physConstrainedPoint* cp);
// cp's rows on the position correction or its kink (penetrating rows plus kink rows; 0: q+ moves by v+ and the
// time-of-impact displacement only)
int phys_constrained_position_rows(const physConstrainedPoint* cp);
// cp's constraint problem (its gpos with the kink rows the derivatives correct, kink_position_problem) and, in
// *nimp (may be NULL), its margin impacts (rows whose time-of-impact displacement moves q+); cp's memory
struct physConstraintProblem_;
const struct physConstraintProblem_* phys_constrained_problem(const physConstrainedPoint* cp, int* nimp);
// the two at a linearization point cp (d's kinematics still at its state)
physStatus phys_constrained_jacobian_at(const physModel* m, physData* d, physConstrainedPoint* cp,
                                        const physParamTable* t, double* A, double* B, double* P);
physStatus phys_constrained_vjp_at(const physModel* m, physData* d, physConstrainedPoint* cp,
                                   const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                   double* theta_bar, double* force_bar);
// the complementarity-aware point for the cotangent xbar_next = (qbar+, vbar+) (lcp with
// PHYS_GRAD_COMPLEMENTARITY; paper 001 IV-D): *out = a copy of cp with the row labels the reverse mode takes for this
// cotangent (contacts relabelled by the sign of their impulse adjoint, kept when the relabelled pair's
// free-velocity adjoint is larger) and their lcp local structure, *relabelled = 1; else *out = cp itself,
// *relabelled = 0 (other models, no rows, the flag off, no label changed or the exact pair kept). The Jacobian
// at *out (phys_constrained_jacobian_at) then has A' xbar_next, B' xbar_next equal to
// phys_constrained_vjp_at's for xbar_next: the forward form of the complementarity-aware rule for this one
// cotangent (DDP's value gradient). Arena memory of the caller's mark (released with it).
physStatus phys_constrained_aware_point(const physModel* m, physData* d, const physConstrainedPoint* cp,
                                        const double* xbar_next, physConstrainedPoint** out, int* relabelled);
// the linearization point: d->qacc = (v+ - v)/dt of the constrained step and L = the factor of M~ (nv x nv,
// factor.h's storage). Status as above.
physStatus phys_constrained_step_point(const physModel* m, physData* d, double* L);
// the number of constraint rows of the step at d's state on the position correction's kink, where the
// derivatives take the correcting side and the step does not correct (README, Derivatives; 0 without
// constraints or with penalty): there the Jacobian is a one-sided derivative, and a difference quotient
// agrees with it only along directions that press every such row deeper.
int phys_constrained_step_kinks(const physModel* m, physData* d);

#endif  // PHYS_STEP_CONTACT_DERIV_H

// step_equality_deriv.h - derivatives of the step with equality rows (issue 15 item 1; the primal is
// src/step/step_equality.c): lcp, cone and ccp at a state without contacts, joint limits or frictionloss rows,
// where the step is v+ = v_f + M~^-1 J_e' lambda with J_e v+ = -beta r / dt (the solvers do not run: the three
// models take the same path). Differentiated implicitly through the constraint the step satisfies,
//   dJ_e v+ + J_e dv+ + (beta / dt) J_e dq = 0,   dv+ = dv_S + M~^-1 (dJ_e' lambda + J_e' dlambda),
// with dv_S the smooth step's derivative at the step's own acceleration a = (v+ - v) / dt (so M~'s derivative
// acts on the whole a), dJ_e' lambda the rows' curvature (equality_deriv.h), dlambda = -G_ee^+ (J_e dv_S +
// (K(v+) + (beta/dt) J_e + J_e M~^-1 T(lambda)) dq), K(x) = d(J_e x)/dq, T(lambda) = d(J_e' lambda)/dq. A
// redundant row (G_ee singular: a planar mechanism's connect) satisfies its equation identically, so the
// pseudo-inverse's minimal-norm dlambda gives the step's dv+. The impulse enters (q+, v+) as the generalized force
// (dJ_e' lambda + J_e' dlambda) / dt through the smooth step's force columns. Not built: with contacts or limits
// (the constrained kind), under penalty (its spring-damper), the equalities' own parameters.
#ifndef PHYS_STEP_EQUALITY_DERIV_H
#define PHYS_STEP_EQUALITY_DERIV_H

#include "params.h"
#include "physid.h"

// the step's equality rows at its linearization point (arena memory of the record)
typedef struct physEqualityPoint_ {
  int ne;
  const double* J;        // ne x nv: J_e at the state
  const double* P;        // ne x ne: G_ee^+
  const double* lambda;   // ne: the step's impulses
  const double* vnew;     // nv: the step's v+
} physEqualityPoint;

// at the smooth point (L, qacc) of a contact-free step with equality rows: the rows, impulses and v+ as
// phys_step computes them (step_equality.c); qacc (and d->qacc) become the step's acceleration (v+ - v) / dt
physEqualityPoint* phys_equality_point(const physModel* m, physData* d, const double* L, double* qacc);
// A (2nv x 2nv), B (2nv x nu), P (2nv x t->ntheta) of that step (any may be NULL)
void phys_equality_step_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                 const physEqualityPoint* ep, const physParamTable* t, double* A, double* B,
                                 double* P);
// reverse mode: xbar = A' xbar_next, ubar = B' xbar_next, theta_bar = P' xbar_next (any may be NULL), through the
// Jacobians (O(nv^2 + nv nu + nv ntheta) arena doubles)
void phys_equality_step_vjp(const physModel* m, physData* d, const double* L, const double* qacc,
                            const physEqualityPoint* ep, const physParamTable* t, const double* xbar_next,
                            double* xbar, double* ubar, double* theta_bar);

#endif  // PHYS_STEP_EQUALITY_DERIV_H

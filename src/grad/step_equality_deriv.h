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
// (dJ_e' lambda + J_e' dlambda) / dt through the smooth step's force columns.
//
// With contacts or limits (lcp, cone, ccp; the record's kind PHYS_STEP_CONSTRAINED_EQ) the same implicit
// function on top of the constrained step's own derivative (step_contact_deriv.h): the step equals the
// constrained step Phi(x, u, theta, F) of the model without its equality rows under the extra generalized force
// F = J_e' lambda / dt (the equality impulses held as a force: the contact rows then see g = J (v_f + M~^-1 J_e'
// lambda), whose solution is the step's, and v+ is the step's), with lambda such that J_e v+ = -beta r / dt. So
//   dx+ = dPsi + Phi_F J_e' dlambda / dt,   dPsi = Phi_x dx + Phi_F T dq / dt  (dx+ at dlambda = 0),
//   dlambda = -S^+ (C dq + J_e dv+|dPsi),   S = J_e Phi_vF J_e' / dt,   C = K(v+) + (beta/dt) J_e,
// S the equality rows' inverse inertia in the mechanism the contacts leave (G_ee without contacts; not symmetric
// under sliding friction: its pseudo-inverse by the SVD). Reverse mode: lambdabar = J_e Phi_F' xbar+ / dt,
// y = -S^+' lambdabar, then Phi's reverse mode of xbar+ + (0, J_e' y) gives (xbar, ubar, theta_bar, Fbar) and
// xbar's q part gains T' Fbar / dt + C' y; two reverse passes of Phi per cotangent, the Jacobians by rows. S is
// built by ne reverse passes at the linearization. A contact or limit on the position correction or its kink: the
// step corrects positions in the constrained mechanism, Phi in the free one, so q+ is composed from Phi's v+ and
// the constrained correction's own derivative (ep->pos, step_equality_pos_deriv.h). Refused: frictionloss rows, a
// residual network, the time-of-impact correction. Under penalty the rows are spring-dampers, differentiated in penalty's tape
// (step_equality_penalty_deriv.h). The rows' polycoef:EQ parameters (params.h) move r and J_e: their columns add
// dJ_e/dtheta v+ + (beta/dt) dr/dtheta to the rows' equation and dJ_e/dtheta' lambda to the impulse's force, in
// both cases (polycoef_terms, polycoef_reverse); solref:EQ does not act on hard rows (zero columns).
#ifndef PHYS_STEP_EQUALITY_DERIV_H
#define PHYS_STEP_EQUALITY_DERIV_H

#include "params.h"
#include "physid.h"
#include "step_record.h"

// the step's equality rows at its linearization point (arena memory of the record)
typedef struct physEqualityPoint_ {
  int ne;
  const double* J;        // ne x nv: J_e at the state
  const double* P;        // ne x ne: G_ee^+
  const double* lambda;   // ne: the step's impulses
  const double* vnew;     // nv: the step's v+
  // with contacts or limits (PHYS_STEP_CONSTRAINED_EQ; NULL without): P is S^+ there
  physConstrainedPoint* cp;   // the constrained point of Phi (the model without equality rows, F applied)
  const double* T;        // nv x nv: d(J_e' lambda)/dq
  const double* C;        // ne x nv: K(v+) + (beta/dt) J_e
  int rank;               // rank of G_ee (the rows' own redundancy)
  // with a contact or limit under position correction (NULL without): q+'s part (step_equality_pos_deriv.h)
  struct physEqualityPos_* pos;
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

// with contacts or limits at d's state (the step's warm-start input warm): *ep the point above with ep->cp Phi's
// constrained point; *ep = NULL (PHYS_OK) when the step's stage finds no constraint. PHYS_ERR_MODEL (a warning)
// where refused (header comment), PHYS_ERR_NUMERIC as phys_constrained_linearize
physStatus phys_equality_constrained_point(const physModel* m, physData* d, const physWarmStart* warm,
                                           physEqualityPoint** ep);
// its A, B, P (any may be NULL) and its reverse mode (force_bar: the smooth generalized force's adjoint, as
// phys_constrained_vjp_at; may be NULL)
physStatus phys_equality_constrained_jacobian(const physModel* m, physData* d, const physEqualityPoint* ep,
                                              const physParamTable* t, double* A, double* B, double* P);
physStatus phys_equality_constrained_vjp(const physModel* m, physData* d, const physEqualityPoint* ep,
                                         const physParamTable* t, const double* xbar_next, double* xbar,
                                         double* ubar, double* theta_bar, double* force_bar);

#endif  // PHYS_STEP_EQUALITY_DERIV_H

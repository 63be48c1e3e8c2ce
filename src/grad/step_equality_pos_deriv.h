// step_equality_pos_deriv.h - the position correction's derivative when equality rows meet contacts or limits
// deeper than the slop (issue 15 item 1; primal: src/step/step.c position_correction with
// src/step/step_equality.c phys_equality_position; lcp, cone, ccp).
//
// The step moves q+ = q (+) dt (v+ + vpos) with vpos the split impulse of the contacts' position problem solved
// in the constrained mechanism (Delassus G' = G - G_ce G_ee^+ G_ce', gpos) and projected on J_e vpos = 0. With
// A the rows the position problem clamps (normal and limit rows; the derivatives' kink rows included, as
// step_contact_deriv.c's kink convention) and C = [J_A; J_e], b = [-gpos_A; 0], vpos is the M~-smallest
// solution of C vpos = b (a KKT point: M~ vpos = C' y, C vpos = b; both the eliminated LCP's clamped rows and the
// projection satisfy it), so
//   x = vpos = W C' y,  y = K^+ b,  K = C W C',  W = M~^-1,
// a function of q and theta only (gpos of the depths, C of the configuration, W of the inertia), not of v, u or
// the velocity stage. At a constant clamped set and rank, differentiating M~ x = C' y, C x = b:
//   dx = (I - Q C) u + Q (db - dC x),  u = W (dC' y - dM~ x),  Q = W C' K^+,
// (a redundant row's multiplier y is not unique; its part in dC' y is absorbed by Q C). Reverse mode of xbar:
//   z = K^+ C W xbar,  s = W (xbar - C' z),  gradient = z' db - z' dC x + y' dC s - s' dM~ x,
// with db = -(beta/dt) ddist on the rows with gpos < 0 (contact_deriv.h's weighted VJP over the contact and limit
// rows, equality_deriv.h's curvature for J_e, phys_rnea_mass_vjp for M~ along q, R(x) - R(0) of params.h along
// theta, polycoef:EQ through dJ_e/dtheta). The step (step_equality_deriv.h) takes v+ from the implicit function
// over Phi as before and composes q+ itself: dq+ = E dq + dt D (dv+ + dvpos) (per ball or free rotation D =
// Jr(phi), E = Exp(phi)', phi = dt (v+ + vpos) of the step). Refused (PHYS_ERR_MODEL, a warning): margin
// impacts (the time-of-impact displacement) in the same step, parameters that move the geometry (size,
// vertices, height, pos).
#ifndef PHYS_STEP_EQUALITY_POS_DERIV_H
#define PHYS_STEP_EQUALITY_POS_DERIV_H

#include "params.h"
#include "physid.h"
#include "step_record.h"

typedef struct physEqualityPos_ physEqualityPos;

// the position part at Phi's constrained point cp (d's kinematics at the state; vsum = the step's v+ + vpos, nv):
// *out = NULL (PHYS_OK) when no row is position-corrected; arena memory of the caller's mark
physStatus phys_equality_pos_build(const physModel* m, physData* d, const physConstrainedPoint* cp,
                                   const double* vsum, physEqualityPos** out);
// the q+ part of the step's reverse mode: for the cotangent qbar_next of q+ (nv), vbar_add (nv) = the cotangent
// the position update sends to v+ (dt D' qbar_next), qbar (nv, may be NULL) += E' qbar_next + vpos's part, and
// theta_bar (t->ntheta, may be NULL) += vpos's part. PHYS_ERR_MODEL (a warning) for geometry parameters in t.
physStatus phys_equality_pos_vjp(const physModel* m, physData* d, const physEqualityPos* ps, const physParamTable* t,
                                 const double* qbar_next, double* vbar_add, double* qbar, double* theta_bar);
// vpos at the point (nv; the derivatives' own, kink rows included): for tests
const double* phys_equality_pos_vpos(const physEqualityPos* ps);

#endif  // PHYS_STEP_EQUALITY_POS_DERIV_H

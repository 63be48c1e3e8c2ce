// equality_deriv.h - derivatives of the equality rows (src/dyn/equality.c; issue 15 item 1) with respect to
// the configuration, in grad.h's tangent coordinates: along a direction dq, dr = J_e dq (J_e is dr/dq) and
// dJ = d/de J_e(q (+) e dq) at e = 0, the second-order term the KKT system's derivative needs
// (d(J_e(q) x)/dq dq = dJ x: connect and weld point rows through the bodies' twists and the turning of the dof
// axes, the weld's quaternion rows, the joint and tendon polynomials' second derivative). Building blocks of the
// step derivatives with equalities (step_equality_deriv.h, step_equality_penalty_deriv.h; docs/derivatives.md).
#ifndef PHYS_EQUALITY_DERIV_H
#define PHYS_EQUALITY_DERIV_H

#include "physid.h"

// dr (ne, may be NULL) = J_e dq and dJ (ne x nv) = J_e's derivative along dq (nv) at d's kinematics and dof axes
// (phys_kinematics, phys_com_pos). Scratch from d's arena (6 (nbody + nv) doubles); rows as phys_equality_eval.
void phys_equality_jvp(const physModel* m, physData* d, const double* dq, double* dr, double* dJ);
// K (ne x nv) = d(J_e(q) x)/dq for a fixed x (nv): column k is phys_equality_jvp's dJ along e_k times x
void phys_equality_curvature(const physModel* m, physData* d, const double* x, double* K);

// T (nv x nv) = d(J_e(q)' lambda)/dq for fixed impulses lambda (ne): column k is dJ(e_k)' lambda
void phys_equality_curvature_t(const physModel* m, physData* d, const double* lambda, double* T);
// g (nv) = d<J_e(q), B>/dq for fixed weights B (ne x nv): g_k = <dJ(e_k), B> (the penalty springs' reverse mode)
void phys_equality_curvature_w(const physModel* m, physData* d, const double* B, double* g);

// the rows' derivatives with respect to coefficient c (0..4) of joint or tendon coupling e's polycoef (parameter
// polycoef:EQ): its one row's dr (scalar) and dJ (nv, written whole) at d's state; returns the row's index among
// the active rows (phys_equality_eval's order), -1 if e is not active
int phys_equality_polycoef_deriv(const physModel* m, const physData* d, int e, int c, double* dr, double* dJ);

// 1 if moving body b's placement (parameter pos:BODY) moves an active connect or weld row: one of its bodies is b
// or below b (the rows' derivatives with respect to placements are not built; params.c refuses such entries)
int phys_equality_moved_by_body(const physModel* m, int b);

#endif  // PHYS_EQUALITY_DERIV_H

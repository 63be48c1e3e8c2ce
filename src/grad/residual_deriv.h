// residual_deriv.h - derivatives of the residual acceleration r = N(phi(q, v)) of the step (src/step/residual.h)
// w.r.t. the state (q in the step's tangent coordinates) and the network's weights. The smooth step's Jacobian
// and reverse mode (step_deriv.c) add them: v+ = v + dt (a + r), so dv+/dx gains dt dr/dx and, with vbar+ the
// adjoint of v+, rbar = dt vbar+.
#ifndef PHYS_RESIDUAL_DERIV_H
#define PHYS_RESIDUAL_DERIV_H

#include "physid.h"

// dphi = dphi/dq dq + dphi/dv dv at qpos (dq: nv tangent coordinates; dv: nv, may be NULL for 0)
void phys_residual_features_jvp(const physModel* m, const double* qpos, const double* dq, const double* dv,
                                double* dphi);
// qbar += (dphi/dq)' phibar, vbar += (dphi/dv)' phibar (either NULL: not wanted)
void phys_residual_features_vjp(const physModel* m, const double* qpos, const double* phibar, double* qbar,
                                double* vbar);
// V (nv rows, row stride ld) += s [dr/dq | dr/dv] at d's state (columns 0..nv-1: dq, nv..2nv-1: dv)
void phys_residual_jacobian_add(const physModel* m, physData* d, double s, double* V, int ld);
// at d's state: qbar += (dr/dq)' rbar, vbar += (dr/dv)' rbar, wbar (m->residual->nparam) += (dr/dw)' rbar;
// any of the three NULL: not wanted
void phys_residual_vjp(const physModel* m, physData* d, const double* rbar, double* qbar, double* vbar,
                       double* wbar);


// The constrained step (step_contact_deriv.h) differentiates M~ a + c - f - J' lambda / dt = 0 at its
// linearization's acceleration a (RNEA's point); with the network v_f = v + dt (M~^-1 (f - c) + r), which is that
// equation with a = a+ - r ((v+ - v)/dt less the residual: the point step_contact_deriv.c takes) and the extra
// force f_r = M~ r whose M~ is held at the point (its derivative is in RNEA's at a), so its derivatives are
// Fq (nv x nv) += M~ dr/dq, Fv += M~ dr/dv at d's state (qM at the state)
void phys_residual_force_deriv(const physModel* m, physData* d, double* Fq, double* Fv);
// reverse mode of f_r with the force's adjoint rho (nv): qbar += (M~ dr/dq)' rho, vbar += (M~ dr/dv)' rho,
// wbar += (dr/dw)' M~ rho (any NULL: not wanted). With rho the adjoint of the smooth step's force
// (phys_step_vjp_lambda's lambda = M~^-1 dt w) M~ rho = dt w = rbar: the weight gradient of any step.
void phys_residual_force_vjp(const physModel* m, physData* d, const double* rho, double* qbar, double* vbar,
                             double* wbar);

#endif  // PHYS_RESIDUAL_DERIV_H

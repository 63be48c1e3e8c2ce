// physid/derivatives.h - exact derivatives of the step and of rollouts (public; issue 18 item 1). The method,
// its conditions and its accuracy: docs/derivatives.md.
//
// State in tangent coordinates: x = (dq, v), nx = 2 nv numbers (2 nv + na with actuator activations: x = (dq, v,
// act)). dq has nv numbers, one per dof: a hinge or slide its value, a ball or free rotation the body-frame
// rotation vector (q' = q * exp(dq / 2)), a free translation the world position; phys_integrate_pos and
// phys_difference_pos (physid.h) map between qpos and the tangent. Matrices are row-major: D[i * ncol + j] =
// d out_i / d in_j. Nothing allocates: scratch comes from d's arena. Every function works with contact (each
// contact model) and joint limits; PHYS_ERR_MODEL for what a model has that the derivatives do not cover (a
// tendon wrapping a geom, a muscle, a ball joint not last on its body), PHYS_ERR_ARG for a contact pair without
// geometry derivatives, PHYS_ERR_NOMEM when d's arena is too small (docs/derivatives.md, docs/limits.md).
//
//   double A[nx * nx], B[nx * nu];
//   physStatus s = phys_step_jacobian(m, d, A, B);   // d's state is not advanced
#ifndef PHYSID_DERIVATIVES_H
#define PHYSID_DERIVATIVES_H

#include <stddef.h>

#include "../physid.h"
#include "params.h"

#ifdef __cplusplus
extern "C" {
#endif

// step Jacobians at d's state: A = dx+/dx (nx x nx), B = dx+/du (nx x nu), either may be NULL
physStatus phys_step_jacobian(const physModel* m, physData* d, double* A, double* B);
// the parameters' Jacobian of the same step: P = dx+/dtheta (nx x t->ntheta)
physStatus phys_step_param_jacobian(const physModel* m, physData* d, const physParamTable* t, double* P);
// reverse mode (vector-Jacobian products) without forming A or B: xbar = A' xbar_next (nx), ubar = B'
// xbar_next (nu), either may be NULL; and theta_bar = P' xbar_next (t->ntheta)
physStatus phys_step_vjp(const physModel* m, physData* d, const double* xbar_next, double* xbar, double* ubar);
physStatus phys_step_param_vjp(const physModel* m, physData* d, const physParamTable* t,
                               const double* xbar_next, double* theta_bar);
// A and B by central differences of phys_step (step eps in each coordinate): the check of the exact ones.
// PHYS_ERR_NUMERIC if a perturbed step raised a warning; d's state and time are restored
physStatus phys_step_jacobian_fd(const physModel* m, physData* d, double eps, double* A, double* B);

//---------------------------------------------------------------------------------------------------------
// rollouts: x_0 = d's state, x_{t+1} = phys_step(x_t, u_t) with ctrl = u[t nu .. t nu + nu), loss
// L = sum_{t=0..T} l_t(qpos_t, qvel_t), gradient by reverse mode with checkpoints every k steps (memory
// ceil(T/k) + k states; k = 0 picks sqrt(T); the result is the same, bit for bit, for every k)

// the loss term l_t at (qpos, qvel): returns its value and writes dl_t/dq in tangent coordinates (g_q, nv) and
// dl_t/dv (g_v, nv), both zeroed before the call; t runs from 0 to T
typedef double (*physLossFn)(void* ctx, int t, const double* qpos, const double* qvel, double* g_q,
                             double* g_v);

// the workspace of phys_rollout_grad in doubles (allocate it once, reuse it)
size_t phys_rollout_worksize(const physModel* m, int T, int k, int ntheta);
// the T steps and their loss L alone, as phys_rollout_grad runs them (d is left at x_T)
double phys_rollout(const physModel* m, physData* d, int T, const double* u, physLossFn loss, void* ctx);
// L and its gradient: *total = L, xbar0 = dL/dx_0 (nx), ubar = dL/du (T x nu), thetabar = dL/dtheta
// (t->ntheta; t may be NULL), any output may be NULL; work of phys_rollout_worksize(m, T, k, ntheta) doubles.
// d is left at x_0. A step rejected or a non-finite loss: PHYS_ERR_NUMERIC, *total = +inf, message in log
physStatus phys_rollout_grad(const physModel* m, physData* d, const physParamTable* t, int T, int k,
                             const double* u, physLossFn loss, void* ctx, double* work, double* total,
                             double* xbar0, double* ubar, double* thetabar, physLog* log);

#ifdef __cplusplus
}
#endif
#endif  // PHYSID_DERIVATIVES_H

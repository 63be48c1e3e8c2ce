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

// a loss term that reads the actuator activations too: as physLossFn, plus act (na) and g_act = dl_t/dact (na,
// zeroed before the call)
typedef double (*physLossActFn)(void* ctx, int t, const double* qpos, const double* qvel, const double* act,
                                double* g_q, double* g_v, double* g_act);

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
// the same with a loss of (qpos, qvel, act): its act gradients are terms of dL/dx_0's act block and of every
// earlier step's adjoint (phys_rollout_grad's losses have none)
physStatus phys_rollout_grad_act(const physModel* m, physData* d, const physParamTable* t, int T, int k,
                                 const double* u, physLossActFn loss, void* ctx, double* work, double* total,
                                 double* xbar0, double* ubar, double* thetabar, physLog* log);
// reverse mode of the rollout map (x_0, u, theta) -> the states (qpos_t, qvel_t, act_t), t = 0..T, for the states'
// cotangents qbar ((T+1) x nq), vbar ((T+1) x nv), abar ((T+1) x na, NULL: zero): xbar0 (nx), ubar (T x nu),
// thetabar; phys_rollout_grad_act with l_t = qbar_t . qpos_t + vbar_t . qvel_t + abar_t . act_t, no callback
physStatus phys_rollout_vjp(const physModel* m, physData* d, const physParamTable* t, int T, int k,
                            const double* u, const double* qbar, const double* vbar, const double* abar,
                            double* work, double* xbar0, double* ubar, double* thetabar, physLog* log);

//---------------------------------------------------------------------------------------------------------
// cotangents between qpos (nq) and the tangent coordinates (nv) at qpos: g = (dqpos/dtangent)' qbar (a
// quaternion q, q' = q exp(dq / 2): g = L(q)[:, 1:]' qbar / 2, L(q) p = q p), and qbar = (dtangent/dqpos)' g (2 L(q)[:,
// 1:] g: orthogonal to q); hinges, slides and free translations are their own tangent coordinates
void phys_qpos_bar_to_tangent(const physModel* m, const double* qpos, const double* qbar, double* g);
void phys_tangent_bar_to_qpos(const physModel* m, const double* qpos, const double* g, double* qbar);

// batches: nb independent rows in one call, for callers that step many states at once (physid.torch). Row b
// has the state x[b] = (qpos, qvel, act) (nq + nv + na numbers) and the controls u[b] (nu; u may be NULL:
// zero); it runs on work[b % nwork], a Data of m, each on its own thread (nwork 1: the calling thread only;
// at most PHYS_BATCH_MAXTHREADS). A row starts from its x and u alone: time 0, no warm start (the previous
// contact list is dropped), the Data's applied forces (qfrc_applied, xfrc_applied) as they are (give every
// work Data the same ones: phys_make_data's are zero). So each row's result is the one of phys_step (and of
// phys_step_vjp, phys_step_param_vjp) from a Data set the same way, bit for bit, for any nwork and any row
// order. Nothing allocates (scratch from each Data's arena). A failing row (a rejected step, a VJP's error)
// returns the status of the first failing row with a message naming it in log (may be NULL); the other rows'
// outputs are then unspecified.
#define PHYS_BATCH_MAXTHREADS 64
// xnext[b] (nq + nv + na) = the state after one phys_step of row b
physStatus phys_step_batch(const physModel* m, physData** work, int nwork, int nb, const double* x,
                           const double* u, double* xnext, physLog* log);
// reverse mode of each row's step, one linearization per row: xbar[b] = A_b' xbar_next[b] (nx = 2nv + na),
// ubar[b] = B_b' xbar_next[b] (nu), thetabar[b] = P_b' xbar_next[b] (t->ntheta; t may be NULL); any output may
// be NULL. The same numbers as phys_step_vjp and phys_step_param_vjp at the row's start, bit for bit
physStatus phys_step_vjp_batch(const physModel* m, physData** work, int nwork, const physParamTable* t, int nb,
                               const double* x, const double* u, const double* xbar_next, double* xbar,
                               double* ubar, double* thetabar, physLog* log);
// the same in qpos coordinates (physid.torch's backward): ybar[b] (nq + nv + na) is the cotangent of row b's next
// state xnext[b] (as phys_step_batch returned it) in its own coordinates (qpos, qvel, act), xbar[b] (nq + nv +
// na) comes out as the cotangent of x[b] (a quaternion's in its tangent plane, orthogonal to it): the maps of
// phys_qpos_bar_to_tangent and phys_tangent_bar_to_qpos around phys_step_vjp_batch's numbers, in one call
physStatus phys_step_vjp_batch_qpos(const physModel* m, physData** work, int nwork, const physParamTable* t, int nb,
                                    const double* x, const double* u, const double* xnext, const double* ybar,
                                    double* xbar, double* ubar, double* thetabar, physLog* log);
// T steps of each row: u[b] holds T x nu controls (step s uses u[b][s nu ..]); xs[b] ((T + 1) x (nq + nv +
// na)) the states x_0 = x[b], x_1, .., x_T
physStatus phys_rollout_batch(const physModel* m, physData** work, int nwork, int nb, int T, const double* x,
                              const double* u, double* xs, physLog* log);
// T steps of d itself from its state, as T calls of phys_step (its time, warm start, applied forces kept): u
// (T x nu) the controls of step s at u[s nu ..] (NULL: d's ctrl held), xs ((T + 1) x (nq + nv + na)) the states
// x_0 (d's on entry) .. x_T; d is left at x_T. A rejected step s (non-finite state): PHYS_ERR_NUMERIC, "step s
// rejected (warning)" in log, rows x_0 .. x_s written, d left as that step left it
physStatus phys_rollout_states(const physModel* m, physData* d, int T, const double* u, double* xs, physLog* log);
// reverse mode of T chained steps from their known states xs ((T + 1) x (nq + nv + na): phys_rollout_batch's row,
// phys_rollout_states' output) and controls u (T x nu; NULL: zero), in qpos coordinates: ybar ((T + 1) x (nq + nv
// + na)) the cotangents of x_0 .. x_T -> xbar0 (nq + nv + na) that of x_0 (a quaternion's in its tangent plane,
// as phys_step_vjp_batch_qpos's), ubar (T x nu), thetabar (t->ntheta,
// summed over the steps; t may be NULL); ubar, thetabar may be NULL. Each step is linearized once at its stored
// state as a row (time 0, no warm start: phys_step_vjp_batch_qpos's VJP), no forward recomputed: the VJP of T
// chained one-row steps (physid.torch), which is phys_rollout_vjp's wherever a step does not depend on its warm
// start. d is scratch
physStatus phys_rollout_states_vjp(const physModel* m, physData* d, const physParamTable* t, int T,
                                   const double* xs, const double* u, const double* ybar, double* xbar0,
                                   double* ubar, double* thetabar, physLog* log);

#ifdef __cplusplus
}
#endif
#endif  // PHYSID_DERIVATIVES_H

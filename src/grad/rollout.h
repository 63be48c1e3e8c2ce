// rollout.h - gradient of a rollout's summed loss by reverse mode with checkpointing.
//
// Rollout: x_0 = d's state (qpos, qvel, act, time), x_{t+1} = phys_step(x_t, u_t) for t = 0..T-1, with
// ctrl = u[t*nu .. t*nu+nu) during step t (qfrc_applied, xfrc_applied and the model held fixed). Loss:
// L = sum_{t=0..T} l_t(x_t). Reverse mode: xbar_T = dl_T/dx_T, and for t = T-1..0
//   ubar_t = B_t' xbar_{t+1},  thetabar += P_t' xbar_{t+1},  xbar_t = A_t' xbar_{t+1} + dl_t/dx_t,
// in grad.h's tangent coordinates x = (q tangent, v), 2nv numbers; with activations (na > 0) x = (q tangent, v,
// act), nx = 2nv + na numbers (act's adjoint is carried through the steps; a physLossFn reads (qpos, qvel), so
// its act gradient is 0; a physLossActFn, phys_rollout_grad_act, reads act too and adds dl_t/dact_t).
//
// Checkpointing: the forward pass keeps the state every k steps (x_0, x_k, x_2k, ...: ceil(T/k) states);
// the backward pass takes the segments last to first, recomputes each segment forward from its checkpoint
// into a buffer of k states and runs the VJPs back through it. Memory: (ceil(T/k) + k) states, smallest near
// k = sqrt(T) (2 sqrt(T) states); k = 1 is the full tape (T states and no recomputation), k = T keeps one
// checkpoint and recomputes the whole rollout once. Cost: one forward pass, one recomputation, T VJPs.
// The recomputation runs the same steps from bit-identical states, so it reproduces the forward states bit
// for bit: a record holds qpos, qvel, time and the state's contact list (the next step's warm start; a step
// reads nothing else that changes), so the gradient is the same, bit for bit, for every k. The steps are
// phys_step from the record's list as an explicit input (phys_step_warm, their contacts into arena lists) and
// are linearized from it (phys_step_linearize_warm): d's contact lists are read (x_0's) and never written. Steps
// with contacts or joint limits are differentiated with every contact model (lcp, cone, ccp:
// step_contact_deriv.h; penalty: penalty_deriv.h).
//
// Memory: the caller allocates phys_rollout_worksize doubles once; nothing allocates inside (the VJPs take
// their scratch from d's arena).
#ifndef PHYS_ROLLOUT_H
#define PHYS_ROLLOUT_H

#include <stddef.h>

#include "params.h"
#include "physid.h"
#include "physid/derivatives.h"   // the public declarations of this header's API (the compiler checks both agree)

// per-step loss l_t at (qpos, qvel): returns its value and writes dl_t/dq in tangent coordinates (g_q, nv)
// and dl_t/dv (g_v, nv); both arrays are zeroed before the call. t runs from 0 to T.
typedef double (*physLossFn)(void* ctx, int t, const double* qpos, const double* qvel, double* g_q,
                             double* g_v);

// checkpoint interval for a rollout of T steps: budget <= 0 gives k = ceil(sqrt(T)); otherwise the k that
// keeps ceil(T/k) + k <= budget states with the fewest recomputed steps (the smallest such k),
// or -1 if no k fits (budget < 2 ceil(sqrt(T)) roughly)
int phys_rollout_interval(int T, int budget);
// states held by a rollout gradient with interval k: ceil(T/k) checkpoints + k segment states
int phys_rollout_nstate(int T, int k);
// size in doubles of the workspace phys_rollout_grad needs (k = 0: the default interval, as there): nstate (nq + nv + na + 2 + c) + 3 nx + ntheta, c =
// ceil(nconmax sizeof(physContact) / sizeof(double)). Layout (tests read it): ceil(T/k) checkpoint records,
// then the k-record segment buffer (each record qpos, qvel, act, time, ncon, its ncon contacts in room for
// nconmax, the room past them not written); on return the buffer holds segment 0's recomputed states x_0 .. x_{min(k,T)-1}.
size_t phys_rollout_worksize(const physModel* m, int T, int k, int ntheta);

// one state record as the rollout keeps it (qpos, qvel, act, time, ncon, the contact list: everything a step reads
// that changes): its size in doubles, d's state saved into rec, and d's state loaded from rec (a step from a
// loaded record reproduces the saved state's step bit for bit)
size_t phys_rollout_record_size(const physModel* m);
void phys_rollout_save_state(const physModel* m, const physData* d, double* rec);
void phys_rollout_load_state(const physModel* m, physData* d, const double* rec);

// forward only: runs the T steps from d's state (d is left at x_T) and returns L (g_q, g_v scratch from the
// arena). No checks: this is exactly the loop of phys_step calls the gradient differentiates.
double phys_rollout(const physModel* m, physData* d, int T, const double* u, physLossFn loss, void* ctx);

// the rollout's loss and gradient. Inputs: d's state is x_0; u (T x nu); t the parameter table (NULL: no
// theta); k the checkpoint interval (1..T; 0 means phys_rollout_interval(T, 0)); work of
// phys_rollout_worksize(m, T, k, t ? t->ntheta : 0) doubles. Outputs (any may be NULL): *loss = L,
// xbar0 = dL/dx_0 (nx), ubar = dL/du (T x nu), thetabar = dL/dtheta (ntheta).
// d is left at x_0 (d->contact, its counts and d->contact_prev untouched) and ctrl = u_0. Errors (message in
// log, which may be NULL):
// PHYS_ERR_ARG for bad arguments, or the status of a step's VJP (e.g. a contact pair without geometry
// derivatives; *total = L). A rejected rollout - phys_step rejected a step (non-finite state, matrix not
// positive definite, arena exhausted), a state, a loss term l_t, the sum L or the gradient is not finite -
// returns PHYS_ERR_NUMERIC with *total = +inf (phys_control_rollout's value for it) and a message naming the
// step and what failed ("phys_rollout_grad: step 3 rejected (phys_step: non-finite state ...)"); xbar0 and
// thetabar are then untouched, ubar may be partly written: no non-finite number is returned.
physStatus phys_rollout_grad(const physModel* m, physData* d, const physParamTable* t, int T, int k,
                             const double* u, physLossFn loss, void* ctx, double* work, double* total,
                             double* xbar0, double* ubar, double* thetabar, physLog* log);

// phys_rollout_grad_act (a loss of the activations too) and phys_rollout_vjp (the states' cotangents, no
// callback) are declared in physid/derivatives.h: the same gradient with other losses

#endif  // PHYS_ROLLOUT_H

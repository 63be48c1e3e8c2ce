// shooting.h - single shooting on the rollout gradient (issue 13 item 1): the controls U (T x nu) are the only
// unknowns; the cost J(U) of control.h (phys_control_rollout) and its gradient dJ/dU by one reverse pass of
// step VJPs (phys_rollout_grad, rollout.h: checkpointed, every contact model) are handed to L-BFGS-B with the
// control bounds (liblbfgsb, L-BFGS-B 3.0) or to projected Adam.
//
// Gradient. J = sum_{t<T} (l_t(x_t) + c_t(u_t, u_{t-1})) dt + l_T(x_T): the state terms l_t are the rollout's
// loss (their tangent gradient: the weighted residuals, the site terms J_site' W e), the control terms c_t
// (effort, rate) are differentiated directly. Its value is phys_control_rollout's (a rollout that is
// rejected or not finite has J = +inf and no gradient). The contact steps' VJPs follow the model's
// opt.gradflags: with PHYS_GRAD_COMPLEMENTARITY (lcp) the complementarity-aware reverse mode of paper 001 IV-D,
// which lets a drone resting on the ground see the gradient of its thrust (exact gradient: zero).
//
// Methods.
//   L-BFGS-B: memory 10, factr = tol / machine epsilon (stop "cost"), pgtol 0 (stop "gradient" when the
//     projected gradient is exactly zero), "linesearch" when its line search fails; a trial point whose
//     rollout is not finite gets f = 1e300 and g = 0 (the line search backs off). One iteration per new
//     iterate; each evaluation is one gradient.
//   Adam (Kingma & Ba 2015): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, u -= lr mhat / (sqrt(vhat) +
//     1e-8), clamped into the bounds; lr in control units. A step whose rollout is not finite is rejected
//     (the controls stay, lr halves). Stops at maxiter, when the gradient is exactly zero ("gradient"), or
//     when the best cost has not fallen by a relative tol in 50 iterations ("cost").
// Design parameters (p->design, control.h; issue 17): the unknowns are (U, theta), theta the table's values,
// written into the model (phys_param_set) before each rollout, bounded by theta_lo/theta_hi (equal bounds hold
// a component; equal control bounds hold the controls, so the design alone is optimized). dJ/dtheta = sum_t
// P_t' xbar_{t+1} (phys_rollout_grad's parameter adjoint) + the cost's explicit derivative: a pos:B moves every
// point of B's subtree by R_parent(B) dtheta, so a point term's residual (p - p_ref - target) moves with it
// (added once per state, in the forward pass); a velocity term on such a point is refused (PHYS_ERR_ARG). A value
// phys_param_set refuses is a rejected point (J = +inf). On return p->theta and the model hold the best design.
// Both return the best controls evaluated (p->U, p->X, p->cost); p->iter[k].cost is the best cost after
// iteration k, p->iter[k].feedforward the largest |projected gradient| at that iterate, .alpha Adam's lr.
//
// Memory: phys_shooting_solve allocates its workspace once (phys_shooting_worksize doubles); nothing
// allocates inside the rollouts or the VJPs (their scratch is d's arena). Deterministic.
#ifndef PHYS_SHOOTING_H
#define PHYS_SHOOTING_H

#include "control.h"

typedef enum physShootMethod_ {
  PHYS_SHOOT_LBFGSB = 0,
  PHYS_SHOOT_ADAM
} physShootMethod;

typedef struct physShootOptions_ {
  physShootMethod method;
  double lr;                // Adam's step (control units; default 0.05)
  double beta1, beta2;      // Adam's moment decays (0.9, 0.999)
} physShootOptions;

// the defaults above
void phys_shooting_defaults(physShootOptions* o);

// helpers of the control methods: a monotonic wall clock (seconds); 1 if every bound is feasible (lo <= hi,
// neither +-inf on its wrong side), else 0 and a message "who: control j: ..." in log; U (T x nu) clamped
// into the bounds
double phys_control_clock(void);
int phys_control_bounds_ok(const physControlProblem* p, const char* who, physLog* log);
void phys_control_clamp(const physControlProblem* p, double* U);
// 1 without a design (p->design NULL) or with a usable one: design_model = m, theta and its bounds given, the
// bounds feasible and theta finite (then clamped into them); else 0 and a message "who: ..." in log
int phys_control_design_ok(physControlProblem* p, const char* who, physLog* log);
// 1 if method who's state covers p's model: DDP and multiple shooting keep x = (q, v) in their linearizations,
// so a model with activations (na > 0) is refused by them (PHYS_ERR_MODEL's message in log, 0); the gradient
// (shooting) and sampling methods roll the whole state, act included (issue 15 item 2)
int phys_control_state_ok(const physControlProblem* p, const char* who, physLog* log);

// doubles of the gradient's workspace for p (phys_control_grad)
size_t phys_control_grad_worksize(const physControlProblem* p);
// J(U) from d's state (phys_control_rollout's value, bit for bit) and, when finite, G = dJ/dU (T x nu), both
// (with a design: U holds the T x nu controls then theta, G likewise, the design set into the model first)
// from one forward pass and one reverse pass of the rollout gradient (phys_rollout_grad: its summed loss is J;
// a rejected rollout is its PHYS_ERR_NUMERIC with +inf); work: phys_control_grad_worksize(p) doubles. d is
// back at its state on return. Returns J (+inf: the rollout was rejected, G not a gradient); *status (may be
// NULL) the VJP's status (message in log) - a failed VJP returns +inf too.
double phys_control_grad(physControlProblem* p, physData* d, const double* U, double* G, double* work,
                         physStatus* status, physLog* log);

// single shooting from d's state and the initial guess p->U (clamped into the bounds first), maxiter = p->maxiter,
// tol = p->tol. On return p->U, p->X, p->cost, p->iter[0..niter], p->niter, p->stop; d back at its state.
// PHYS_ERR_ARG if a bound is infeasible, PHYS_ERR_NUMERIC if the initial guess's rollout is not finite,
// PHYS_ERR_NOMEM, or a VJP's status (message in log).
physStatus phys_shooting_solve(physControlProblem* p, physData* d, const physShootOptions* o,
                               physDdpProgress progress, void* ctx, physLog* log);

#endif  // PHYS_SHOOTING_H

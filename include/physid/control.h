// physid/control.h (public; issue 18 item 1) - trajectory optimization on the exact step Jacobians (issue
// 13): a quadratic cost on the state and the controls, and iLQR with box-constrained controls (control-limited
// DDP, Tassa, Mansard and Todorov 2014).
//
// Layer: control uses grad (phys_step_jacobian) and step, beside sysid; tools/cmd_optimize.c drives it.
//
// Problem. x_0 = d's state (qpos, qvel, time, contact list), x_{t+1} = phys_step(x_t, u_t), t = 0..T-1, ctrl
// = u_t during step t. Cost J = sum_{t<T} l_t(x_t, u_t) dt + l_T(x_T) (the running cost integrated over time,
// dt the model's timestep, as Crocoddyl's Euler-integrated action models), every term one half of a weighted
// square:
//   l_t = 1/2 sum_i wq_i r_i^2 + 1/2 sum_i wv_i (v_i - vref_i)^2 + 1/2 sum_j wu_j u_j^2
//         + 1/2 sum_j wdu_j (u_j - u_{t-1,j})^2          (u_{-1} = uprev)
//   l_T = the same state terms with the final targets and weights,
// plus, per list, up to PHYS_CONTROL_MAXPOINT site terms 1/2 sum_i w_i (site_xpos_i - target_i)^2 (exact
// gradient J' W r from the site's position Jacobian, Gauss-Newton Hessian J' W J);
// r = q (-) qref the tangent difference (phys_difference_pos; grad.h's coordinates: a hinge or slide its
// value difference). The residual's derivative in the tangent is taken as the identity: exact for hinge,
// slide and free translation, and for ball and free rotations at the target (a Gauss-Newton model elsewhere).
// Controls lie in [lo, hi] (+-inf: unbounded).
//
// Method (phys_ddp_solve). iLQR: the dynamics linearized by phys_step_jacobian (A, B in tangent coordinates),
// on the state augmented with the previous control (x~ = (dq, dv, u_{t-1}), 2nv + nu numbers) so the rate
// term is a running cost. Backward pass per step: Q's derivatives; the feedforward k from the box QP
//   min_du 1/2 du' (Quu + mu I) du + Qu' du,  lo - u <= du <= hi - u
// (projected Newton, warm-started from the last k); the feedback K = -Quu_ff^-1 Qux_f on the free rows and
// 0 on the clamped rows (with reg_state the QP's Hessian is Quu + mu B~'B~ and K solves with Qux + mu B~'A~: mu
// on the state, their eq. 10). mu follows the Levenberg-Marquardt schedule of Tassa, Erez and Todorov (2012): raised
// when Quu_ff is not positive definite or the line search fails, lowered after each accepted step (0 below
// mu_min). Forward pass: u = clamp(u_t + alpha k + K (x^ (-) x_t)) for alpha = 10^(-3i/10), i = 0..10,
// accepted when the cost decreases by at least 1e-4 of the model's expected decrease; a rollout with a
// rejected step (phys_step's non-finite result) or a non-finite state or cost is a rejected alpha.
// Stops when the relative cost decrease is below tol, when the feedforward is below tol (max |k| / (1 + |u|)
// averaged over the steps), at maxiter, when mu exceeds mu_max (no descent step at any regularization), or
// (stall = K > 0) when the cost fell by less than stall_tol relative over the last K iterations.
// Complementarity-aware DDP (m->opt.gradflags has PHYS_GRAD_COMPLEMENTARITY, lcp): the backward pass takes
// each constrained step's A, B with the contact labels the reverse mode picks for that step's value gradient
// V_x(t+1) (grad.h phys_step_jacobian_aware: A' V_x and B' V_x are the complementarity-aware VJP's), so a
// contact that clamps against the descent direction (the drone on the ground, thrust below its weight: exact
// B = 0, feedforward 0) is seen as separating. One more Jacobian per constrained step and backward pass.
//
// Memory: phys_control_make allocates the problem and its workspace once; phys_ddp_solve allocates nothing
// (the Jacobians take their scratch from d's arena) but, on a problem's first linearization with point terms,
// their per-state gradients and Gauss-Newton Hessians ((T + 1)(2nv + 4nv^2) doubles, kept until
// phys_control_free; a problem without point terms never holds them), and with complementarity-aware DDP the
// T step records (awarework). Deterministic: the same problem and d
// give the same bits.
#ifndef PHYSID_CONTROL_H
#define PHYSID_CONTROL_H

#include "../physid.h"
#include "params.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PHYS_CONTROL_MAXPOINT 8   // site or body terms per list

// a quadratic term on a site's or a body's world position or linear velocity: 1/2 sum_i w_i (p_i - target_i)^2,
// p the site's position (site_xpos), the body's frame origin (xpos), or that point's linear velocity in the
// world frame (v_p = v_O + w x p from the body's spatial velocity). Its gradient in the tangent is exact: J' W r
// with J the residual's Jacobian, for a position the point's Jacobian (phys_jac), for a velocity [dv_p/dq,
// jacp] where dv_p/dq_j = dV_O + dw x p + w x jacp_j, (dw, dV_O) = S_j x (V_b - vpre_j) (rnea_deriv.c's rule);
// its Hessian the Gauss-Newton J' W J
typedef struct physPointCost_ {
  int site;                 // site id, or body id when body is 1
  double target[3];         // world position (m) or velocity (m/s)
  double w[3];              // weights of x, y, z
  int body;                 // 0: site, 1: body (its frame origin)
  int vel;                  // 0: position, 1: linear velocity
  int has_ref;              // 1: the term is on p - p_ref - target (a moving target: a tracking error), p_ref
  int ref;                  // the position (or velocity) of site ref (refbody 0) or of body ref's frame origin
  int refbody;              // (refbody 1); the residual's Jacobian J - J_ref. 0: the fixed target alone
} physPointCost;

// quadratic terms on the state: targets and per-coordinate weights (tangent layout for wq), and site positions
typedef struct physStateCost_ {
  double* qref;             // nq target configuration (default qpos0)
  double* vref;             // nv target velocity (default 0)
  double* wq;               // nv weights on q (-) qref (default 0)
  double* wv;               // nv weights on v - vref (default 0)
  int npoint;               // site position terms (default 0)
  physPointCost point[PHYS_CONTROL_MAXPOINT];
} physStateCost;

// one iteration's record (iteration 0: the initial guess)
typedef struct physDdpIter_ {
  double cost;              // J after the iteration
  double expected;          // the quadratic model's expected decrease of the accepted step (0 at iteration 0)
  double alpha;             // accepted line-search step (0: none)
  double mu;                // regularization after the iteration
  double feedforward;       // mean over steps of max_j |k_j| / (1 + |u_j|) of the last backward pass
  double seconds;           // wall time of the iteration
} physDdpIter;

// why phys_ddp_solve stopped
typedef enum physDdpStop_ {
  PHYS_DDP_COST = 0,        // relative cost decrease below tol
  PHYS_DDP_FEEDFORWARD,     // feedforward below tol
  PHYS_DDP_MAXITER,         // maxiter iterations
  PHYS_DDP_MU,              // mu above mu_max: no descent step found
  PHYS_DDP_GRADIENT,        // single shooting (shooting.h): the projected gradient is zero
  PHYS_DDP_LINESEARCH,      // single shooting: L-BFGS-B's line search found no decrease
  PHYS_DDP_STALL            // the cost fell by less than stall_tol (relative) over the last stall iterations
} physDdpStop;

typedef struct physControlProblem_ {
  const physModel* m;
  int T;                    // steps
  int nu, nv, nx;           // controls, dofs, augmented tangent state 2nv + nu
  double* lo;               // nu lower bounds (default the model's ctrlrange where limited, else -inf)
  double* hi;               // nu upper bounds (default ctrlrange or +inf)
  physStateCost run;        // running state terms (t = 0..T-1)
  physStateCost fin;        // final state terms (t = T)
  double* wu;               // nu control effort weights (default 0)
  double* wdu;              // nu control rate weights (default 0)
  double* uprev;            // nu control before step 0 (default 0)
  double* U;                // T x nu controls: the initial guess in, the solution out (default 0)
  double* X;                // (T+1) x (nq + nv) states (qpos, qvel) of U's rollout, after a solve
  double cost;              // J of U, after a solve
  // options (phys_control_make's defaults)
  int maxiter;              // 200
  double tol;               // 1e-9
  double mu_min;            // 1e-6
  double mu_max;            // 1e10
  int reg_state;            // 0: mu regularizes the controls (Quu + mu I); 1: the state (Vxx + mu I in Quu, Qux)
  int stall;                // 0 (off); K > 0: stop (PHYS_DDP_STALL) when J_{k-K} - J_k < stall_tol |J_{k-K}|
  double stall_tol;         // 1e-6
  // design parameters (single shooting, shooting.h, and the sampling methods, sampling.h; not DDP or
  // multiple shooting; design NULL: none): theta of the table, optimized with the controls (or alone: equal
  // control bounds hold the controls), written into design_model (the model m points to, writable) by
  // phys_param_set before each rollout. Caller-owned arrays of design->ntheta: theta
  // (the initial design in, the best design out; design_model holds it after a solve) and its bounds theta_lo,
  // theta_hi (equal bounds hold a component)
  const physParamTable* design;
  physModel* design_model;
  double* theta;
  const double* theta_lo;
  const double* theta_hi;
  // results of the last solve
  int niter;                // iterations done; iter[0..niter] are their records
  physDdpIter* iter;        // maxiter + 1 records
  physDdpStop stop;
  // workspace (private)
  double* work;
  size_t nwork;
  double* pointwork;        // the point terms' gradients and Hessians at the T + 1 states, allocated by the
                            // first linearization with point terms ((T + 1)(2nv + 4nv^2) doubles), else NULL
  double* awarework;        // complementarity-aware DDP (m's gradflags PHYS_GRAD_COMPLEMENTARITY, lcp): each
                            // step's state record (phys_rollout_record_size) and whether it had constraints,
                            // allocated by the first such linearization, else NULL
} physControlProblem;

// progress callback: called after every iteration k (0: the initial rollout) with its record
typedef void (*physDdpProgress)(void* ctx, int k, const physDdpIter* it);

// a problem of T steps on m with the defaults above and room for maxiter iterations (0: 200); NULL if out of
// memory or T < 1. Every array is in the one allocation.
physControlProblem* phys_control_make(const physModel* m, int T, int maxiter);
void phys_control_free(physControlProblem* p);

// J of the controls U (T x nu) from d's state, the states written to X ((T+1) x (nq + nv), may be NULL);
// +inf if a step was rejected or a state or the cost is not finite. d is left at x_T. Controls are applied as
// given (no clamping).
double phys_control_rollout(const physControlProblem* p, physData* d, const double* U, double* X);
// the largest violation of the bounds by U: max over t, j of lo_j - u or u - hi_j (0 when inside)
double phys_control_violation(const physControlProblem* p, const double* U);

// solve from d's state and the initial guess p->U; on return p->U, p->X, p->cost, p->iter, p->niter, p->stop
// and d is back at the initial state. PHYS_ERR_ARG (message in log) if a bound is infeasible (lo > hi or not
// a number), the initial guess outside the bounds is clamped first; PHYS_ERR_NUMERIC if the initial
// guess's rollout is not finite; a step Jacobian's error status (e.g. PHYS_ERR_MODEL) with its message. After
// an error p->U holds the (clamped) initial guess or the last accepted controls and p->X, p->cost their
// rollout's (p->cost +inf when it was not finite).
physStatus phys_ddp_solve(physControlProblem* p, physData* d, physDdpProgress progress, void* ctx, physLog* log);

// the value of c's terms at d's state (qpos, qvel); if g is not NULL, g (2nv: tangent of q, then v) <- its
// gradient and, if H is not NULL, H (2nv x 2nv) <- its Gauss-Newton Hessian (diag(wq, wv), on a ball's or a
// free joint's rotation Jr^-1(r)' W Jr^-1(r) for r = q (-) qref, plus the point terms' J' W J). The gradient is
// exact in the tangent offset delta of q (+) delta (a rotation's Jr^-1(r)' W r). Runs phys_kinematics and
// phys_com_pos at the state when c has point terms; scratch from d's arena (PHYS_ERR_NOMEM-free: NaN if the
// arena is exhausted).
double phys_state_cost(const physModel* m, physData* d, const physStateCost* c, double* g, double* H);

// the box QP of the backward pass: x = argmin 1/2 x' H x + g' x over lo <= x <= hi (n; H symmetric, row-major),
// by projected Newton warm-started from x (clamped into the box). On return free[i] = 1 for the rows not at
// an active bound and Lff (n x n scratch) holds the Cholesky factor of H restricted to the free rows (nfree x
// nfree, row-major); returns the number of free rows, or -1 if that H_ff is not positive definite.
// scratch: 3n doubles.
int phys_box_qp(int n, const double* H, const double* g, const double* lo, const double* hi, double* x, int* free,
                double* Lff, double* scratch);

// the control terms of one step at u with the previous control uprev (effort and rate, not times dt)
double phys_control_effort(const physControlProblem* p, const double* u, const double* uprev);

// phys_ddp_solve's parts, to run one iteration from outside (bench/bench_control.c feeds the same backward
// pass and control law with another engine's Jacobians and rollouts). The problem's p->U are the controls and
// p->X their rollout's states ((T+1) x (nq + nv)), as after phys_control_rollout(p, d, p->U, p->X).
// phys_ddp_linearize: every step's augmented Jacobians along (X, U) from d's state by phys_step_jacobian
// (d restored); phys_ddp_set_jacobian: step t's from A (2nv x 2nv) and B (2nv x nu) computed elsewhere
// (tangent coordinates of phys_difference_pos); phys_ddp_backward: the backward pass at regularization mu
// (1, or 0 if a Quu + mu I is not positive definite; dV[0] = sum k' Qu, dV[1] = sum 1/2 k' Quu k, *ff the
// mean feedforward size; point terms enter only after phys_ddp_linearize has stored their derivatives);
// phys_ddp_forward: the line search's rollout at alpha from d's state (d restored), its cost (+inf if not
// finite), controls and states copied to Un, Xn when not NULL; phys_ddp_policy: the forward pass's control
// law at step t, un = clamp(u_t + alpha k_t + K_t dx) at the trial state xn (qpos, qvel) after the trial
// controls Un (rows < t);
// phys_control_stage_cost: the state and control terms of step t at (q, v) with the controls U (t = T: the
// final terms), site terms left out.
physStatus phys_ddp_linearize(physControlProblem* p, physData* d, physLog* log);
void phys_ddp_set_jacobian(physControlProblem* p, int t, const double* A, const double* B);
int phys_ddp_backward(physControlProblem* p, double mu, double dV[2], double* ff);
double phys_ddp_forward(physControlProblem* p, physData* d, double alpha, double* Un, double* Xn);
void phys_ddp_policy(physControlProblem* p, int t, double alpha, const double* xn, const double* Un, double* un);
double phys_control_stage_cost(physControlProblem* p, int t, const double* q, const double* v, const double* U);
// the gains of step t from the last backward pass: K (nu x nx, the augmented tangent state's feedback; rows of
// controls clamped by the box QP are 0) and k (nu, the feedforward); either may be NULL
void phys_ddp_gains(const physControlProblem* p, int t, double* K, double* k);

#ifdef __cplusplus
}
#endif
#endif  // PHYSID_CONTROL_H

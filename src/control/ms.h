// ms.h - multiple shooting (issue 13, item 1): the problem of control.h with the states as unknowns too, the
// dynamics as equality constraints, solved by Ipopt (Debian's coinor-libipopt-dev 3.11.9, C interface).
//
// Unknowns z = (u_0, dx_1, u_1, dx_2, ..., u_{T-1}, dx_T): the controls and the states' offsets in tangent
// coordinates (grad.h) from a fixed reference trajectory xr (the rollout of the initial guess):
// s_t = xr_t (+) dx_t (phys_integrate_pos on qpos, plus on qvel); s_0 = x_0 is given. Constraints, 2nv per step:
//   D_t = s_{t+1} (-) f(s_t, u_t) = 0      (phys_difference_pos on qpos, minus on qvel)
// f the step phys_step, evaluated in one sweep t = 0..T-1 with d's state set to s_t (the contact list and
// warm start the previous step of the sweep left, as a rollout: on a defect-free z the sweep is the rollout
// of the controls, bit for bit). Bounds lo <= u_t <= hi. Objective: control.h's J with s_t in place of the
// rollout's states.
//
// Derivatives: the objective's gradient and the constraint Jacobian are exact: A_t, B_t of
// phys_step_jacobian, and the chart's SO(3) Jacobians for ball and free rotations (dD/ds_{t+1} =
// Jr^-1(D) Jr(dx_{t+1}), dD/df = -Jl^-1(D); a qpos cost residual r on a rotation gets Jr^-1(r)'). The
// constraint Jacobian is block banded: row block t has the dense blocks of u_t (2nv x nu), dx_t (2nv x 2nv,
// t > 0) and the group-diagonal block of dx_{t+1}. The Hessian of the Lagrangian is Ipopt's limited-memory
// quasi-Newton (L-BFGS): the step's exact second derivatives do not exist (the constrained step is only
// piecewise smooth, and physid computes first derivatives only).
//
// Complementarity-aware (m's gradflags PHYS_GRAD_COMPLEMENTARITY, lcp): the constraint Jacobian's A_t, B_t are
// phys_step_jacobian_aware's for the cotangent of step t's output R_t' lambda_t, lambda_t the multipliers'
// estimate that makes the Lagrangian stationary in the states (a backward recursion over the sweep, the
// costate of single shooting at a defect-free point; Ipopt's own multipliers at a KKT point). Ipopt 3.11's C
// interface hands no multipliers to the Jacobian callback, nor to any callback under the L-BFGS Hessian, so they
// are estimated from z alone. The objective's gradient stays exact. Flag off: the exact solve, bit for bit.
//
// Deterministic: the same problem and d give the same bits (sequential MUMPS, no threads).
#ifndef PHYS_MS_H
#define PHYS_MS_H

#include "control.h"

typedef struct physMsOptions_ {
  int print_level;          // Ipopt's print_level (0: silent; 5: Ipopt's iteration table on stdout)
  double constr_tol;        // Ipopt's constr_viol_tol and acceptable_constr_viol_tol: max |D| accepted (1e-10)
  int init_ddp;             // 1: start from DDP's solution of p (phys_ddp_solve first), 0: from p->U's rollout
  int history;              // pairs kept by the quasi-Newton Hessian (Ipopt's limited_memory_max_history, 50;
                            // Ipopt's default 6 needs 268 iterations on test_ms's LQR, 50 needs 34)
  int gauss_newton;         // 1: the objective's Gauss-Newton Hessian in place of the quasi-Newton one (the
                            // constraints' curvature left out: exact for linear dynamics)
  double best_defect;       // an iterate with max |D| <= best_defect is feasible: when Ipopt did not solve the
                            // problem (to its tolerance or acceptable level) and its last iterate is infeasible
                            // or worse, the feasible iterate of the lowest objective is returned (1e-8)
} physMsOptions;

// what phys_ms_solve found beside p's fields
typedef struct physMsResult_ {
  int status;               // Ipopt's ApplicationReturnStatus (0 solved, 1 solved to acceptable level, ...)
  const char* status_name;  // its name ("solved", "acceptable", "maxiter", ...)
  double objective;         // J of the multiple-shooting solution (its states s_t, not a rollout)
  double defect;            // max |D_t| over every step and coordinate at the solution
  double violation;         // the controls' largest bound violation (phys_control_violation)
  double drift;             // max |x_t (-) s_t| between the rollout of the controls and the solution's states
  int ddp_iterations;       // DDP iterations of the initialization (init_ddp)
  int iterate;              // the Ipopt iteration returned (niter, or an earlier best feasible one)
  double seconds;           // wall time of the solve (initialization included)
  int relabelled;           // complementarity-aware: steps whose contact labels the last constraint Jacobian changed
  double* defect_iter;      // caller's array of p->maxiter + 1 (or NULL): Ipopt's inf_pr per iteration
} physMsResult;

// the defaults above
physMsOptions phys_ms_defaults(void);

// progress callback: called after every Ipopt iteration k (0: the start) with its record (cost: the
// multiple-shooting objective, alpha: Ipopt's primal step, mu: its barrier parameter, feedforward: its dual
// infeasibility) and its constraint violation inf_pr
typedef void (*physMsProgress)(void* ctx, int k, const physDdpIter* it, double inf_pr);

// solve p by multiple shooting from d's state and the initial guess p->U (clamped into the bounds). On
// return p->U is the solution's controls, p->X and p->cost their rollout from x_0 (phys_control_rollout: the
// trajectory simulate --ctrl-file replays), p->iter[0..niter] Ipopt's iterations, p->stop
// PHYS_DDP_COST when Ipopt solved it (to its tolerance or acceptable level), else PHYS_DDP_MAXITER; *res the
// rest; d is back at the initial state. p->maxiter is Ipopt's max_iter, p->tol its tol. Errors:
// PHYS_ERR_ARG (infeasible bounds), PHYS_ERR_NUMERIC (the initial rollout is not finite, or Ipopt failed
// without an iterate: the message names its status), PHYS_ERR_NOMEM, a step Jacobian's status; the message
// in log.
physStatus phys_ms_solve(physControlProblem* p, physData* d, const physMsOptions* opt, physMsResult* res,
                         physMsProgress progress, void* ctx, physLog* log);

// the constraints D (T x 2nv) at the unknowns z (layout above) around the reference Xr ((T+1) x (nq + nv),
// row 0 the initial state) from d's state, and, if jac is not NULL, the Jacobian dD/dz densely (T 2nv x nz,
// row-major, nz = T (nu + 2nv)); *J (may be NULL) the objective, grad (nz, may be NULL) its gradient; for
// tests; complementarity-aware (header), jac holds the aware Jacobian. d is left at the last step's state (at
// some step's state after an aware jac). PHYS_ERR_NUMERIC if a step was rejected or is not finite, a step
// Jacobian's status, PHYS_ERR_NOMEM.
physStatus phys_ms_constraints(physControlProblem* p, physData* d, const double* Xr, const double* z, double* D,
                               double* jac, double* J, double* grad, physLog* log);

#endif  // PHYS_MS_H

// step.h - internals of the step shared with tests and benchmarks: the step with an explicit contact
// solver (to compare solvers on one model, or to test the step against a reference solver).
#ifndef PHYS_STEP_H
#define PHYS_STEP_H

#include "collision.h"
#include "contact.h"
#include "physid.h"

// 1 if joint damping is integrated implicitly, M~ = M + dt B (B = diag(dof_damping)): PHYS_DSBL_EULERDAMP
// unset and some dof_damping > 0 (MuJoCo 2.2.2's mj_Euler); the step and its derivatives decide by this
int phys_implicit_damping(const physModel* m);
// add = dt B (dt dof_damping) if phys_implicit_damping, else 0 (nv): the diagonal M~ adds to M
void phys_implicit_damping_add(const physModel* m, double* add);

// the implicit integrator (PHYS_INT_IMPLICIT, implicit.c; issue 16 item 4): backward Euler linearized once per
// step on the passive forces f_p (joint springs and dampers, springs and dampers along paths and fixed tendons),
//   M (v+ - v) = dt (f(q, v) - c) + dt (df_p/dv (v+ - v) + dt df_p/dq v+),   q+ = q (+) dt v+,
// i.e. H a = tau - c - dt K v with a = (v+ - v)/dt, H = M + dt D + dt^2 K, K ~ -df_p/dq and D = -df_p/dv their
// positive semidefinite parts (implicit.c's header): K = diag(joint stiffness) + sum_s k_s u_s u_s',
// D = diag(dof_damping) + sum_s b_s u_s u_s', u_s = dL_s/dq'. Without springs K = 0 and D = B: the Euler step.
// It is the step's velocity stage when no constraint is active (no contact, limit, frictionloss or equality
// row); a step with active constraints is the Euler step's (the stiffness is not in its effective mass).
// K, D (nv x nv, either may be NULL) at d's kinematics
void phys_implicit_kd(const physModel* m, physData* d, double* K, double* D);
// H (nv x nv) and r = tau - c - dt K v (nv) at d's state (needs qM and qfrc_bias)
void phys_implicit_system(const physModel* m, physData* d, const double* tau, double* H, double* r);
// the step's smooth pipeline at d's state with qM and qfrc_bias: kinematics, com, passive and actuator forces, and
// tau = qfrc_passive + qfrc_actuator + qfrc_applied + J' xfrc_applied (nv), the bits the step's own
void phys_step_force(const physModel* m, physData* d, double* tau);
// acc = H^-1 (tau - c - dt K v) with qM and qfrc_bias computed here; 0 if H is not positive definite
int phys_implicit_acc(const physModel* m, physData* d, const double* tau, double* acc);

// a contact solver with the signature of phys_solve_lcp / phys_solve_cone / phys_solve_ccp
typedef physStatus (*physSolverFn)(const physModel* m, physData* d, const physConstraintProblem* p,
                                   physConstraintSolution* sol);

// phys_step with `solver` for the constraint problem instead of the one m->opt.contact names (NULL: that
// one); penalty models (m->opt.contact == PHYS_CONTACT_PENALTY) use no solver and ignore it
void phys_step_solver(const physModel* m, physData* d, physSolverFn solver);
// Warm starts. The constrained step's only input besides d's state and inputs is the warm-start list
// (physWarmStart, contact.h: the contacts, impulses and row states the previous step ended with). phys_step
// moves d->contact to d->contact_prev and passes that; the stages below and phys_step_warm take it as an
// argument, so a re-run of a step (derivatives, the time-of-impact trial, finite differences) passes the
// list the step it reproduces started from and never writes d->contact_prev to fake a previous step.
// Contact lists (physContactList, collision.h). The step's output, its contacts with their impulses, goes to a
// list: phys_step's is d's own (d->contact, ncon, ncon_dropped, nlimit); phys_step_warm and the stage below
// write the one their caller names, so a re-run of a step leaves d->contact (its warm-start input) as it was.
//
// phys_step_solver from the warm-start input warm (NULL: cold) instead of d's last list: d->contact_prev is
// neither read nor written; the step's contacts go to out (NULL: d's own list, d->contact; warm must not
// point into the list written)
void phys_step_warm(const physModel* m, physData* d, physSolverFn solver, const physWarmStart* warm,
                    physContactList* out);

// equality constraint rows of a constrained step (issue 15 item 1; step_equality.c), arena memory
typedef struct physEqualityRows_ {
  int ne;                        // rows (0: none active)
  int rank;                      // rank of G_ee = J_e M~^-1 J_e'
  double* J;                     // ne x nv: J_e = dr/dq (src/dyn/equality.h)
  double* r;                     // ne: residuals at the step's start
  double* WJ;                    // nv x ne: M~^-1 J_e'
  double* P;                     // ne x ne: G_ee^+
  double* lambda;                // ne: impulses
  double* lambda_pos;            // ne: position pseudo-impulses
} physEqualityRows;
// the rows at d's kinematics through the factor qLD of M~
void phys_equality_assemble(const physModel* m, physData* d, const double* qLD, physEqualityRows* er);
// eliminate them from the contact problem p (G, g, gpos replaced by their Schur complements, npos recounted)
void phys_equality_eliminate(const physModel* m, physData* d, const physEqualityRows* er, const double* vf,
                             physConstraintProblem* p);
// their impulses lambda = -P J_e v+: v+ (vnew) += M~^-1 J_e' lambda, qfrc += J_e' lambda / dt
void phys_equality_finish(const physModel* m, physData* d, physEqualityRows* er, double* vnew, double* qfrc);
// their position pseudo-impulses: vpos += M~^-1 J_e' lambda_p, lambda_p = -P (beta r / dt + J_e vpos)
void phys_equality_position(const physModel* m, physData* d, physEqualityRows* er, double* vpos);

// penalty: each constraint a stiff spring-damper from its solref as MuJoCo 2.2.2 reads it, acting through its
// constraint-space inertia (step_equality.c), in the linearly implicit step H a = rhs (rhs += J_e' f(v),
// H += dt J_e' Lambda C J_e), then qfrc += its force at v+
void phys_equality_penalty_assemble(const physModel* m, physData* d, const physEqualityRows* er, double* rhs,
                                    double* H);
// the spring k and damper b of constraint e (rates per unit residual: MuJoCo 2.2.2's solref at solimp[1])
void phys_equality_spring(const physModel* m, int e, double* k, double* b);
// the block of rows row .. row+dim (one constraint) of er: Gb = J_b M~^-1 J_b' (dim x dim, exactly symmetric) and
// its pseudo-inverse Lb, the constraint-space inertia Lambda_b (phys_lcp_pinv)
void phys_equality_block_inertia(const physModel* m, physData* d, const physEqualityRows* er, int row, int dim,
                                 double* Gb, double* Lb);
void phys_equality_penalty_finish(const physModel* m, physData* d, physEqualityRows* er, const double* vnew,
                                  double* qfrc);

// the velocity stage of a constrained step (lcp, cone, ccp), in arena memory of the caller's mark
typedef struct physStepStage_ {
  double* tau;                   // nv: smooth generalized force without bias (passive, actuator, applied)
  double* vf;                    // nv: v_f = v + dt M~^-1 (tau - c)
  double* vnew;                  // nv: v+ = v_f + M~^-1 J' lambda
  double* vpos;                  // nv: position correction M~^-1 J' lambda_p (0 without correction)
  physConstraintProblem p;       // the velocity problem (J, G, g, mu, gpos, warm guesses)
  physConstraintSolution sol;    // its solution lambda and row states
  physConstraintProblem pp;      // the position problem: p with g = gpos, mu = 0, its warm guess
  physConstraintSolution sol_pos;  // lambda_p and row states (all 0 when p.npos == 0)
  physFrictionRows fr;           // joint frictionloss rows and their impulses (nf = 0: none)
  physContactList* con;          // the contacts detected at the stage's state, with their impulses (p.con)
  physEqualityRows eq;           // equality rows (eq.ne = 0: none), eliminated from p (step_equality.c)
  int sparse_rows;               // input: 1 lets p.J's rows be written on their dofs only (p.sup; undefined
                                 // elsewhere) when no equality or tendon frictionloss rows read them densely; 0 (the
                                 // derivatives, phys_step_stage): J dense, zero off the supports
} physStepStage;

// phys_step's constrained velocity update from tau at d's current kinematics and contacts (st->con, as
// detected) with the solver's guesses from warm (NULL: cold): M~ factored into d->qLD, qM, qfrc_bias, the
// problem, the solutions, v+ and vpos into st (arena memory, not released), impulses and the number of limit
// rows into st->con.
// Returns 0 (a counted warning) if M~ is not positive definite. phys_step runs exactly this.
int phys_step_constrained(const physModel* m, physData* d, physSolverFn solver, const double* tau,
                          const physWarmStart* warm, physStepStage* st);
// phys_step's velocity stage at d's state without integrating: smooth pipeline, contact detection into the
// caller's list con (st->con; d->contact and d->contact_prev are not touched: warm may be d's own list), then
// with active constraints and m->opt.contact lcp, cone or ccp phys_step_constrained from warm and
// d->qacc = (v+ - v)/dt. Returns 1 (st filled), 0 (no constraints, or penalty: st->tau and con only) or -1
// (M~ not positive definite).
int phys_step_stage(const physModel* m, physData* d, physSolverFn solver, const physWarmStart* warm,
                    physContactList* con, physStepStage* st);

// the state a step advances, as one record of phys_state_size(m) = nq + nv + na + 1 doubles: qpos, qvel, act
// (the actuators' activations; none when na = 0), time
// (what the derivatives' trial and perturbed steps save and restore, and the head of a rollout's state record,
// rollout.h). phys_state_save writes d's into x; phys_state_load sets d's from x (nothing else of d changes)
size_t phys_state_size(const physModel* m);
void phys_state_save(const physModel* m, const physData* d, double* x);
void phys_state_load(const physModel* m, physData* d, const double* x);

#endif  // PHYS_STEP_H

// contact.h - the constraint problem of one step and its solvers (DESIGN.md section 4).
//
// Rows: contact i owns rows 3i (normal), 3i+1, 3i+2 (tangents, its frame's rows 1, 2); then one row per
// active joint limit (lambda >= 0, no friction), then one per active tendon limit (tendon_rows.c). With
// M~ = M + dt*diag(damping) (the step's effective mass)
// and v_f the unconstrained next velocity, the impulses lambda give v+ = v_f + M~^-1 J' lambda, and
//   G = J M~^-1 J'  (Delassus),   g = J v_f + b,   row velocity after the step: w = G lambda + g,
//   b_normal = restitution*phi(J_n v) (phi ~ min(., 0), smoothed below),  b_limit = 0,  b_tangent = 0   (paper 000 eq. 3: the velocity
//   condition 0 <= J_n (v+ + eps v) _|_ lambda_n >= 0).
// Drift (paper 000 eq. 3's beta*min(phi,0)/dt) is corrected at the position level, not in the velocity
// (split impulse): a second problem on the same G with friction 0 and gpos = beta*min(dist + slop, 0)/dt on
// normal and limit rows gives pseudo-impulses lambda_p; q+ = q (+) dt (v+ + M~^-1 J' lambda_p) while v+
// keeps its value. Penetration is removed at rate beta per step and never turns into kinetic energy (a
// velocity-level Baumgarte term makes a contact detected at depth |v| dt bounce up by beta^2 of its drop).
// Contacts within the detection margin (dist > 0) may close their gap within the step: b_normal = dist/dt,
// w_n = J_n v+ + dist/dt >= 0 (restitution instead when the free motion closes the gap, assemble.c).
// Collision envelope (src/collision/collision.c): ccp's relaxation makes a sliding contact separate at normal
// velocity mu |v_t|, so for ccp pairs are detected within max(geom margin, 2 dt mu (s1 + s2), 1e-5 m), s the
// largest point speed of each geom: a sliding body then glides at height dt mu |v_t| with its contacts kept
// (Anitescu and Tasora's envelope) instead of losing them and hopping. cone and ccp detect within at least
// 1e-5 m (the slop), so a body resting at distance 0 does not lose contacts to rounding.
// Warm start (cone, ccp): lambda0 = last step's impulses, verified and polished (admm.h) before any ADMM
// iteration; in steady contact the solve costs one residual and at most one small linear solve.
#ifndef PHYS_CONTACT_H
#define PHYS_CONTACT_H

#include "physid.h"

// penetration depth (m) left uncorrected by the position stabilization, so resting contacts stay detected
// (margin 0) without a correction every step
#define PHYS_CONTACT_SLOP 1e-5
// penetration beyond the slop (m) too small to correct: each correction leaves (1 - beta) of the excess, so
// a resting contact approaches the slop geometrically and would otherwise run the position solve forever
#define PHYS_CONTACT_SLOP_TOL 1e-8
// 1 if a row at distance dist is position-corrected (gpos = beta (dist + slop)/dt < 0): penetration deeper than
// the slop by more than PHYS_CONTACT_SLOP_TOL (assemble.c's rule; the derivatives' kink convention in
// src/grad/step_contact_deriv.c and the time-of-impact correction read it here)
static inline int phys_contact_corrected(double dist) {
  return dist + PHYS_CONTACT_SLOP < -PHYS_CONTACT_SLOP_TOL;
}

// restitution velocity law: b_normal = eps phi(v_n) on touching contacts, with u = PHYS_RESTITUTION_VSMOOTH
//   phi(v) = v (v <= -u),  -2 v^2 / u - v^3 / u^2 (-u < v < 0),  0 (v >= 0),
// the cubic matching value and slope at both ends, so phi is continuously differentiable, monotone, and
// exactly min(v, 0) at impact speeds above u. min(v, 0) itself has a kink at v = 0, exactly where every
// resting contact sits (its normal velocity is 0 to rounding after a clamped step): its derivative would
// flip with the sign of the rounding from step to step. phi' = 0 there.
#define PHYS_RESTITUTION_VSMOOTH 2e-3
// phi(v) and, if dphi is not NULL, phi'(v)
static inline double phys_restitution_phi(double v, double* dphi) {
  const double u = PHYS_RESTITUTION_VSMOOTH;
  double f = v <= -u ? v : (v < 0 ? -2 * v * v / u - v * v * v / (u * u) : 0);
  if (dphi) *dphi = v <= -u ? 1 : (v < 0 ? -4 * v / u - 3 * v * v / (u * u) : 0);
  return f;
}

// the branch of a contact's normal bias (assemble.c phys_normal_bias): none (touching, not approaching: 0),
// restitution eps phi(J_n v) (touching and approaching, or an impact within the step from inside the margin),
// gap dist/dt (within the margin)
enum { PHYS_BIAS_NONE = 0, PHYS_BIAS_REST, PHYS_BIAS_GAP };
// the normal bias b_n of contact c with pre-step normal velocity vn (the velocity problem's g_n = J_n v_f + b_n),
// its branch into *branch (may be NULL)
double phys_normal_bias(const physContact* c, double vn, double dt, int* branch);
// the time of impact t* = dist/(-phi(vn)) in (0, dt) of a contact within the margin whose gap closes in the
// step (the restitution branch with dist > 0), else 0: the step's position moves by -t* M~^-1 J_i' lambda_i
double phys_toi_time(const physContact* c, double vn, double dt);
// the speed the gravity gives in one step, dt |g| (0 with gravity disabled): a resting contact's share
double phys_toi_hold_speed(const physModel* m);
// the time shift sigma = t* I/(I + e), I = -(1 + eps) phi(vn), of a margin impact's impulse (0 if none; e =
// phys_toi_hold_speed): the step moves q+ = q + dt v+ - sigma M~^-1 J_i' lambda_i; its partials in vn, dist,
// eps, e into ds[0..3] (may be NULL)
double phys_toi_shift(const physContact* c, double vn, double dt, double e, double* ds);
// d(dt |g|)/dg into dg[3] (0 with gravity disabled or zero): the hold speed's gravity parameter derivative
void phys_toi_hold_speed_grad(const physModel* m, double dg[3]);

// islands (island.c, issue 19 item 1): the problem's rows grouped by the kinematic trees they couple (contacts,
// limits, tendon limits and the eliminated equality rows Je, ne x nv, may be NULL), islands in the order of
// their smallest tree (root dof), rows ascending inside each
typedef struct physIslands_ {
  int n;                    // islands
  int* start;               // n + 1: island k's rows are row[start[k] .. start[k+1]-1]
  int* row;                 // the problem's rows, island by island
  int* ndof;                // n: dofs of each island's trees (its rank bound)
} physIslands;

typedef struct physConstraintProblem_ {
  int nc;                   // contacts (3 rows each)
  const physContact* con;   // the nc contacts the rows were assembled from (the geometry derivatives read them)
  int nl;                   // limit rows (after the contact rows)
  int n;                    // rows: 3*nc + nl
  int nv;
  const double* J;          // n x nv constraint Jacobian (rows as above)
  const double* G;          // n x n Delassus matrix J M~^-1 J', symmetric positive semidefinite
  const double* g;          // n: free row velocity plus the restitution terms
  const double* mu;         // nc friction coefficients
  const int* warm;          // n physRowState guesses (last step's, matched by geom pair), or NULL
  const double* lambda0;    // n impulse guesses (last step's, matched as warm; limit rows 0), or NULL
  const double* gpos;       // n: position-correction bias beta*min(dist + slop, 0)/dt (normal and limit rows)
  int npos;                 // rows with gpos < 0 (0: no position correction needed)
  int nmargin;              // contacts with dist > 0 (within the detection margin: a time of impact is possible)
  const int* island;        // n: each row's island (phys_islands' order, 0..), or NULL: one island. Read by the
                            // solvers' derivatives (lcp_vjp.c, ccp_vjp.c), which factor island by island
  const int* sup;           // the dofs J's rows may be nonzero on: row r's are sup[sup_adr[r] ..] (sup_num[r] of
  const int* sup_adr;       // them, descending, ancestor-closed: a contact's two chains, a limit's joint's chain,
  const int* sup_num;       // a tendon's every dof); J is exactly 0 off them. NULL: every row on all nv dofs
  const physIslands* isl;   // the rows' islands without equality rows (phys_islands(.., NULL, 0)), computed once
                            // by the assembly for the Delassus product and the solves (phys_solve_islands,
                            // also the position correction's); NULL: not computed
} physConstraintProblem;

// solver results: impulses and the active structure the VJP needs, without recomputation
typedef struct physConstraintSolution_ {
  double* lambda;           // n impulses (N s)
  int* state;               // n physRowState
  int iterations;           // pivots (lcp) or ADMM sweeps (cone, ccp)
  double residual;          // complementarity / KKT residual at the solution
  int warm_used;            // 1 if the warm-start guess was verified and kept (lcp; ccp, cone: polished guess)
} physConstraintSolution;

// the warm-start input of a constrained step: the contacts the previous step ended with (their impulses and
// row states), read-only. phys_step passes d->contact_prev (the list it moved there before detecting); the
// derivatives, the time-of-impact trial step and every re-run of a step pass the list the step they
// reproduce started from (the caller's d->contact, a checkpoint's), so nothing fakes a previous step in d.
// con must not alias the list the step's detection writes (physContactList, collision.h: d->contact for
// phys_step, an arena list for the derivatives, which pass d->contact itself). {0, NULL}: no warm start (cold).
typedef struct physWarmStart_ {
  int n;                    // contacts in con
  const physContact* con;   // the previous step's contacts (n), NULL if n == 0
} physWarmStart;

// assemble J, G, g for the nc contacts con (detected at the current kinematics) and the active limits: needs
// kinematics, the tree-sparse factor qLD of M~ = qM + dt diag(dof_damping) (phys_factor_m,
// src/dyn/factor.h), and v_f; the solver's guesses from warm (NULL: cold); arrays come from d's arena (caller
// marks/frees); p->con = con
void phys_constraint_assemble(const physModel* m, physData* d, physContact* con, int nc, const double* vf,
                              const physWarmStart* warm, physConstraintProblem* p, double** J, double** G,
                              double** g, double** mu);
// the dofs contact c's rows reach, descending into s (capacity nv): the union of its two bodies' chains
// (phys_chain_union, src/dyn/dyn.h); returns their number
int phys_contact_chains(const physModel* m, const physContact* c, int* s);
// the dofs row r of p's J may be nonzero on (descending) into *dofs, their number; all nv (*dofs NULL) when p
// has no supports (p->sup NULL)
int phys_constraint_row_dofs(const physConstraintProblem* p, int r, const int** dofs);
// J_r . v over row r's dofs (summed in ascending dof order, as the dense product)
double phys_constraint_row_dot(const physConstraintProblem* p, int r, const double* v);
// f (nv) = J' lambda over the rows' dofs (rows with lambda = 0 skipped)
void phys_constraint_jt(const physConstraintProblem* p, const double* lambda, double* f);
// phys_constraint_assemble with dense 0: J's rows written on their dofs (p->sup) only, undefined elsewhere, and
// G between islands undefined unless PHYS_DSBL_ISLAND (for readers that go through the supports and the islands:
// phys_constraint_row_dot, phys_constraint_jt, phys_solve_islands; the step without equality or frictionloss
// rows); dense 1: phys_constraint_assemble itself, J zero off the supports, G zero between islands
void phys_constraint_assemble_rows(const physModel* m, physData* d, physContact* con, int nc, const double* vf,
                                   const physWarmStart* warm, int dense, physConstraintProblem* p, double** J,
                                   double** G, double** g, double** mu);
// number of joint-limit rows phys_constraint_assemble would add at the current qpos (dist <= 0)
int phys_constraint_nlimit(const physModel* m, const physData* d);

// tendon length limits (tendon_rows.c, issue 15 item 3): the number of active limit rows (dist <= 0) at d's
// kinematics, listed (tendon, side 0 lower / 1 upper) into ten, side when not NULL (capacity 2 nspring)
int phys_tendon_limits_active(const physModel* m, const physData* d, int* ten, int* side);
// the row (nv) of limit side `side` of tendon s, +dL/dq (lower) or -dL/dq (upper), and its dist (L - lo, hi - L)
double phys_tendon_limit_row(const physModel* m, const physData* d, int s, int side, double* row);
// penalty's tendon limit springs (penalty.c's implicit joint-limit rule along the row r), for each active row
// with f = -k_c dist - d_c (r . v) > 0: qfrc += (f - dt k_c (r . v)) r (vnew NULL), H (nv x nv) += (dt d_c +
// dt^2 k_c) r r', and with vnew qfrc -= (dt d_c + dt^2 k_c) r (r . (vnew - v))/dt (the force at v+); each
// pointer may be NULL; returns the number of pushing rows
int phys_penalty_tendon_limits(const physModel* m, physData* d, double* qfrc, double* H, const double* vnew);

// the solvers: each writes sol->lambda and sol->state (n each, caller-owned) and uses d's arena for
// scratch; PHYS_OK or PHYS_ERR_NUMERIC (then lambda is the best iterate and a data warning is counted);
// phys_solve_lcp returns PHYS_ERR_NOMEM (impulses 0, a warning) if d's arena cannot hold its scratch
physStatus phys_solve_lcp(const physModel* m, physData* d, const physConstraintProblem* p,
                          physConstraintSolution* sol);
physStatus phys_solve_cone(const physModel* m, physData* d, const physConstraintProblem* p,
                           physConstraintSolution* sol);
physStatus phys_solve_ccp(const physModel* m, physData* d, const physConstraintProblem* p,
                          physConstraintSolution* sol);
// 1 if m's dofs form one kinematic tree (one dof without a parent: a robot, a free body), else 0
int phys_one_tree(const physModel* m);
// the islands of p (arena memory of the caller's mark: 3 n + 4 ints); returns their number (0 without rows). A
// model with one tree takes the one island of all rows without the union-find when every row reaches a dof
int phys_islands(const physModel* m, physData* d, const physConstraintProblem* p, const double* Je, int ne,
                 physIslands* isl);
// the sub-problem q of p on the nk rows rows (ascending; whole islands: G between them is read) with ndof dofs
// (arena memory of the caller's mark): G, g, gpos, warm, lambda0, mu and con gathered; J and the supports NULL
void phys_island_problem(physData* d, const physConstraintProblem* p, const int* rows, int nk, int ndof,
                         physConstraintProblem* q);
// a contact solver (phys_solve_lcp, phys_solve_cone, phys_solve_ccp; step.h's physSolverFn)
typedef physStatus (*physIslandSolver)(const physModel* m, physData* d, const physConstraintProblem* p,
                                       physConstraintSolution* sol);
// solver on p island by island (each island's sub-problem: its rows of G, g, mu, the guesses and gpos, its
// contacts, p->nv its dofs, J NULL), impulses and row states scattered back into sol (n each); iterations
// summed, the largest residual, warm_used if every island kept its guess, the first status not PHYS_OK. One
// island or PHYS_DSBL_ISLAND: solver(m, d, p, sol) itself, bit for bit. Without equality rows (ne 0) the
// assembly's islands p->isl are used when p has them (and its row count), else they are computed
physStatus phys_solve_islands(const physModel* m, physData* d, physIslandSolver solver,
                              const physConstraintProblem* p, const double* Je, int ne,
                              physConstraintSolution* sol);
// derivatives of phys_solve_lcp's lambda at its solution sol (src/contact/lcp_vjp.c): forward (dG, dmu may be
// NULL) and reverse (dL/dlambda -> dL/dg, dL/dG (entrywise, may be NULL), dL/dmu (may be NULL))
physStatus phys_solve_lcp_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* dg, const double* dG,
                              const double* dmu, double* lambda_dot);
physStatus phys_solve_lcp_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                              double* G_bar, double* mu_bar);
// the reverse mode with G_bar in factored form, G_bar = sum_{t<3} Ga_t Gb_t' + diag(Gd) (Ga, Gb 3 x n, Gd n):
// the clamped system's adjoint is rank three, and the scales add a diagonal. For a G_bar contracted with
// dG = -Y dM Y' this is three bilinear forms and n quadratic ones instead of n bilinear forms
physStatus phys_solve_lcp_vjp_factored(const physModel* m, physData* d, const physConstraintProblem* p,
                                       const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                                       double* Ga, double* Gb, double* Gd, double* mu_bar);
// many derivatives at one solution: the local structure (the labels' partition, the scaled clamped system
// and its pseudo-inverse; arena memory of the caller's mark, valid while p and sol are) built once, counted
// in d->nlcp_local (every build, the one-shot entry points' too), then per direction or adjoint
// phys_solve_lcp_jvp_local (O(n m + m^2), m clamped rows), phys_solve_lcp_vjp_local or
// phys_solve_lcp_vjp_factored_local (O(n m + m^2)), bit for bit phys_solve_lcp_jvp, phys_solve_lcp_vjp and
// phys_solve_lcp_vjp_factored. The step record builds one per problem (src/grad/step_contact_deriv.c)
typedef struct physLcpLocal_ physLcpLocal;
physLcpLocal* phys_solve_lcp_local(physData* d, const physConstraintProblem* p, const physConstraintSolution* sol);
void phys_solve_lcp_jvp_local(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* dg, const double* dG,
                              const double* dmu, double* lambda_dot);
void phys_solve_lcp_vjp_local(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                              double* G_bar, double* mu_bar);
void phys_solve_lcp_vjp_factored_local(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                                       const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                                       double* Ga, double* Gb, double* Gd, double* mu_bar);
// a copy of loc with the constants of the forward mode through products (phys_solve_lcp_jvp_prod; arena
// memory of the caller's mark, O(m^2)): loc itself is left as built
physLcpLocal* phys_solve_lcp_local_prod(physData* d, const physLcpLocal* loc);
// P = A^+ (m x m row-major) of the scaled clamped system A = S H S the derivatives use (lcp_vjp.c): pivoted
// Cholesky with the solver's rank cut when A = A' exactly, else the SVD (sigma <= 1e-12 sigma_max is 0). Returns
// the rank. Scratch from d's arena.
int phys_lcp_pinv(double* P, physData* d, const double* A, int m);
// the same for A block diagonal over the islands lab (m, each row's island; NULL: one block): each island's
// block by phys_lcp_pinv alone (its bits and its rank cut as if it were the whole problem), the rank summed
int phys_lcp_pinv_islands(double* P, physData* d, const double* A, int m, const int* lab);
// complementarity-aware labels (paper 001 IV-D) for the lcp solution sol, given lambda_bar = dL/dlambda: a
// contact (or limit row) whose normal adjoint is negative (the loss would fall if the rows separated faster) is
// relabelled separating with its tangents, one whose normal adjoint is positive (the loss would fall if it
// pushed less: the objects pressed together) clamping, its tangents clamping (sticking) unless the solver
// already had it clamping (then they keep their labels). Writes state (n) and returns the number of rows
// whose label changed. phys_solve_lcp_vjp with a copy of sol carrying these labels gives the alternative
// reverse mode; the step keeps whichever of the two gradients is larger (PHYS_GRAD_COMPLEMENTARITY).
int phys_lcp_aware_states(const physConstraintProblem* p, const physConstraintSolution* sol,
                          const double* lambda_bar, int* state);
// the forward mode with a symmetric dG known only through products (the step's dG = dJ Y' + Y dJ' - Y dM~ Y'
// along every input direction, lcp_vjp.c; loc from phys_solve_lcp_local_prod): phys_solve_lcp_jvp_vectors
// writes the three vectors z_k (3 x n) whose products the JVP reads (z_0 = lambda, z_1, z_2 placed on the
// clamped rows); phys_solve_lcp_jvp_prod takes
// dGz (3 x n: dG z_k; NULL when dG = 0) and dGdiag (n: dG's diagonal) and equals phys_solve_lcp_jvp_local with
// the whole dG to rounding, in O(m^2 + n m) per direction instead of O(n m^2 + n^2)
void phys_solve_lcp_jvp_vectors(const physLcpLocal* loc, const physConstraintProblem* p, double* z);
// 1 if the solution depends on the row scales, i.e. dG's diagonal matters (a singular clamped system); 0 when
// it is regular (dGdiag is then not read)
int phys_solve_lcp_local_scaled(const physLcpLocal* loc);
void phys_solve_lcp_jvp_prod(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                             const physConstraintSolution* sol, const double* dg, const double* dGz,
                             const double* dGdiag, const double* dmu, double* lambda_dot);
// ccp's derivatives at its solution sol by implicit differentiation (ccp_vjp.c): reverse mode g_bar (n),
// G_bar (n x n, entries independent; may be NULL), mu_bar (nc; may be NULL) from lambda_bar; forward mode
// dlambda from dg, dG, dmu (each may be NULL)
physStatus phys_solve_ccp_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                              double* G_bar, double* mu_bar);
physStatus phys_solve_ccp_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* dg, const double* dG,
                              const double* dmu, double* dlambda);
// the same for the cone solver's solution (Signorini + Coulomb with maximal dissipation; ccp_vjp.c)
physStatus phys_solve_cone_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                               const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                               double* G_bar, double* mu_bar);
physStatus phys_solve_cone_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                               const physConstraintSolution* sol, const double* dg, const double* dG,
                               const double* dmu, double* dlambda);
// many derivatives at one ccp (ccp = 1) or cone (0) solution: the local structure (the natural map's
// linearization A, B = J_P R, dP/dmu and the factor of the reverse mode's normal matrix A A' + eps I; arena
// memory of the caller's mark, 2 sum n_k^2 + 13 nc + 2 nl doubles over its blocks n_k (ccp_vjp.c), valid while p
// and sol are) built once, counted in
// d->nccp_local (every build, the one-shot entry points' too), then per adjoint phys_solve_ccp_vjp_local (O(n^2)
// per refinement step instead of the O(n^3) linearization and factor) or per direction phys_solve_ccp_jvp_local,
// bit for bit the one-shot entry points. The forward mode's factor (A'A + eps I, n^2 more) is built by each
// phys_solve_ccp_jvp_local call unless loc came from phys_solve_ccp_local_forward, a copy of loc carrying it (the
// step's Jacobian takes one when it runs many directions forward). The step record builds one per problem
// (src/grad/step_contact_deriv.c)
typedef struct physCcpLocal_ physCcpLocal;
physCcpLocal* phys_solve_ccp_local(physData* d, const physConstraintProblem* p, const physConstraintSolution* sol,
                                   int ccp);
physCcpLocal* phys_solve_ccp_local_forward(physData* d, const physCcpLocal* loc);
physStatus phys_solve_ccp_vjp_local(const physCcpLocal* loc, physData* d, const physConstraintProblem* p,
                                    const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                                    double* G_bar, double* mu_bar);
physStatus phys_solve_ccp_jvp_local(const physCcpLocal* loc, physData* d, const physConstraintProblem* p,
                                    const physConstraintSolution* sol, const double* dg, const double* dG,
                                    const double* dmu, double* dlambda);
// joint frictionloss rows (frictionloss.c): one row e_k per dof with dof_frictionloss > 0, |lambda_k| <= F_k dt;
// then one row per tendon with spring_frictionloss > 0, its moment dL/dq (tendon_rows.c, issue 15 item 3)
typedef struct physFrictionRows_ {
  int nf;                   // rows
  int* dof;                 // nf: their dofs, ascending (tendon rows: -1)
  int nfd;                  // dof rows (the first nfd); rows nfd..nf-1 are tendons'
  double* R;                // (nf - nfd) x nv: the tendon rows
  double* b;                // nf: impulse bounds F dt
  double* G;                // nf x nf: E' M~^-1 E
  double* g;                // nf: free dof velocities E' v_f (plus the contact rows' coupling, when any)
  double* WE;               // nv x nf: M~^-1 E
  double* lambda;           // nf: impulses
  int* state;               // nf: PHYS_ROW_CLAMPING (sticking), PHYS_ROW_UPPER (+b), PHYS_ROW_LOWER (-b)
  // torsional and rolling friction rows (angular.c, issue 16): the last nfa rows (their moments in R after the
  // tendon rows), bounded by amu lambda_n of their contact acon (an index of the contact problem's contacts)
  int nfa;                  // angular rows (0: none; the block is then solved exactly by phys_frictionloss_box)
  int* acon;                // nfa: their contacts
  double* amu;              // nfa: their coefficients mu_s or mu_r (m)
  int* pair;                // nf: a rolling row's partner in one disk (cone, ccp), -1 for a row bounded alone
} physFrictionRows;
// the groups of the friction rows fr with the rows of p (island.c): trees joined by p's rows and the equality
// rows Je (ne x nv, may be NULL) as in phys_islands, and further by the friction rows (a joint's row belongs
// to its tree, a tendon's to every tree its moment reaches, a torsional or rolling row to its contact's); a
// group is a set of joined trees with at least one friction row. Each row's group (0.., in the order of the
// group's smallest root dof; -1: none) into rgroup (p->n) and fgroup (fr->nf; -1: a row that reaches no dof),
// each group's dofs into gdof (capacity nv + 1); returns the number of groups. A group's rows couple with no
// row outside it (G and E' M~^-1 E are 0 between trees that share no row)
int phys_friction_groups(const physModel* m, physData* d, const physConstraintProblem* p, const double* Je, int ne,
                         const physFrictionRows* fr, int* rgroup, int* fgroup, int* gdof);
// the number of frictionloss rows of m (dofs with dof_frictionloss > 0, tendons with frictionloss > 0), and the
// dofs of the dof rows (capacity nv)
int phys_frictionloss_count(const physModel* m);
int phys_frictionloss_dofs(const physModel* m, int* dof);
// the rows at d's state through the factor qLD of M~ and the free velocity vf (arena memory of the caller)
void phys_frictionloss_assemble(const physModel* m, physData* d, const double* qLD, const double* vf,
                                physFrictionRows* fr);
// the same with the torsional and rolling friction rows of the nc contacts con (angular.c) appended, their
// rolling pairs one disk each if disk (cone, ccp), bounds 0 until phys_friction_block_solve sets them
void phys_friction_rows_assemble(const physModel* m, physData* d, const double* qLD, const double* vf,
                                 const physContact* con, int nc, int disk, physFrictionRows* fr);
// the block of fr on its nk rows rows (ascending: dof rows, tendon rows, angular rows keep their order) into q,
// the fields phys_friction_block_solve reads (b, g, G, lambda, state, nfd, nfa, acon, amu, pair; dof, R and
// WE NULL), arena memory of the caller's mark: an angular row's contact renumbered by cmap (p's contact ->
// the sub-problem's), a rolling partner by its place in rows (the partner must be among them)
void phys_friction_rows_sub(physData* d, const physFrictionRows* fr, const int* rows, int nk, const int* cmap,
                            physFrictionRows* q);
// torsional and rolling friction as constraint rows (angular.c; issue 16, MuJoCo's condim 4 and 6): the number
// of rows the nc contacts con have (one per contact with torsional friction, two with rolling friction)
int phys_angular_count(const physModel* m, const physContact* con, int nc);
// the same rows' axes in order (phys_angular_rows' order: 0 torsion about the normal, 1 and 2 rolling about the
// tangents: each row's index into phys_contact_angular_jac's three) into axis (may be NULL); returns their number
int phys_angular_axes(const physModel* m, const physContact* con, int nc, int* axis);
// contact c's angular rows A (3 x nv): frame (J_rot(body of geom[1]) - J_rot(body of geom[0])), the relative
// angular velocity about the normal and the two tangents (needs kinematics; scratch from d's arena)
void phys_contact_angular_jac(const physModel* m, physData* d, const physContact* c, double* A);
// the rows of the nc contacts con into R (rows x nv), each row's contact into acon, coefficient into amu, a
// rolling row's partner (an index among these rows; disk only, else -1) into pair; returns their number
int phys_angular_rows(const physModel* m, physData* d, const physContact* con, int nc, double* R, int* acon,
                      double* amu, int* pair, int disk);
// the friction block fr given the contact impulses lambda_c (their normal impulses bound the angular rows)
// and the block's free velocities g (nf): without angular rows phys_frictionloss_box (exact), with them the
// box and disks by accelerated projected gradient from fr->lambda (angular.c); fr->b, lambda, state written
void phys_friction_block_solve(physData* d, physFrictionRows* fr, const double* g, const double* lambda_c);
// the box problem min 1/2 l'Gl + g'l over |l_i| <= b_i, exactly (principal pivoting): rounds, -1 on fallback
int phys_frictionloss_box(physData* d, const double* G, const double* g, const double* b, int nf, double* lambda,
                          int* state);
// v += M~^-1 E lambda, sticking dofs set to 0 exactly
void phys_frictionloss_apply(const physModel* m, const physFrictionRows* fr, double* v);
// qfrc += E lambda / dt, the rows' generalized force over the step
void phys_frictionloss_qfrc(const physModel* m, const physFrictionRows* fr, double* qfrc);
// the tendons' frictionloss rows (tendon_rows.c): for each tendon with spring_frictionloss F > 0 in order, its
// moment dL/dq into R (a row of nv; R NULL: count only, d then unread) and F into F (may be NULL); returns their
// number
int phys_tendon_frictionloss_rows(const physModel* m, const physData* d, double* R, double* F);

// adhesion actuators (adhesion.c, MuJoCo 2.2.2's mjTRN_BODY): 1 if m has one (actuation enabled); qfrc (nv) +=
// their forces at d's kinematics through the contacts con (n): -(f/|C_b|) sum over body b's contacts of the
// normal rows (both bodies of each contact pulled towards each other along its normal at its point)
int phys_adhesion_any(const physModel* m);
void phys_adhesion(const physModel* m, const physData* d, const physContact* con, int n, double* qfrc);
// penalty's tendon frictionloss (penalty.c's regularized rule along the moment r, C = F / max(|r . v|, vslip)):
// qfrc -= C (r . v) r (vnew NULL), H (nv x nv) += dt C r r', with vnew qfrc -= C r (r . (vnew - v)) (the force at
// v+); each pointer may be NULL; returns the number of rows
int phys_penalty_tendon_frictionloss(const physModel* m, physData* d, double* qfrc, double* H, const double* vnew);
// penalty's regularized frictionloss (penalty.c): per friction dof C = F / max(|v|, penalty_vslip),
// qfrc -= C v, add += dt C (the force -C v+ at the new velocity, implicit as the joint damping)
void phys_penalty_frictionloss(const physModel* m, const physData* d, double* qfrc, double* add);
// penalty (src/contact/penalty.c): forces, not impulses, integrated linearly implicitly by the step.
// Damping ratio of the restitution-derived normal damper for eps = 0 and the smallest restitutions
#define PHYS_PENALTY_ZETA_MAX 5.0
// one contact's linearization at the current state: normal force k_c (-phi) - d v_n, friction -C v_t
typedef struct physPenaltyContact_ {
  double spring;            // k_c (-dist) (N)
  double damping;           // normal damping d = 2 zeta(eps) sqrt(k_c m_e) (N s/m)
  double C;                 // friction's viscous coefficient mu f_n / slip (N s/m)
  double slip;              // max(|v_t|, v_slip) of C (m/s)
  int active;               // 1 if the contact pushes (f_n > 0)
  // torsional and rolling friction (issue 16; phys_penalty_contacts_ang): torques -Cs w_n, -Cr w_t on the
  // relative angular velocity w = ang J_rel_rot v in the contact frame, regularized as the sliding friction
  const double* ang;        // 3 x nv angular rows (normal, t1, t2), NULL: no torsional or rolling friction
  double mu_spin, mu_roll;  // the contact's torsional and rolling friction (m; phys_contact_friction_ang)
  double Cs;                // torsion's viscous coefficient mu_spin f_n / slip_s (N m s/rad)
  double slip_s;            // max(|w_n|, v_slip) of Cs (rad/s; v_slip's value)
  double Cr;                // rolling's viscous coefficient mu_roll f_n / slip_r (N m s/rad)
  double slip_r;            // max(|w_t|, v_slip) of Cr
  int chains;               // 1: dof names the last dofs of its two bodies' chains (penetrating contacts of
  int dof[2];               // phys_penalty_contacts), its rows 0 off their union; 0: rows read over all dofs
                            // (also a contact whose two chains hold every dof: a free body alone, its 6)
} physPenaltyContact;
// the nc contacts con at the current state: J (3 nc x nv) their rows (normal, tangents) and pc their
// linearization (their impulses cleared); qLD the tree-sparse factor of M~ = M + dt B (phys_factor_m,
// src/dyn/factor.h), for the Delassus diagonals m_e
void phys_penalty_contacts(const physModel* m, physData* d, physContact* con, int nc, const double* qLD,
                           physPenaltyContact* pc, double* J);
// the same with dense 0: each contact's rows written on its dofs only (pc[i].dof's chains), J undefined elsewhere
// (for readers through those dofs: phys_penalty_assemble, _update, _finish; a contact whose chains hold every
// dof is read over all of them, pc[i].chains 0); dense 1: phys_penalty_contacts
void phys_penalty_contacts_rows(const physModel* m, physData* d, physContact* con, int nc, const double* qLD,
                                int dense, physPenaltyContact* pc, double* J);
// the torsional and rolling friction of the active contacts pc among con (nc) with torsional or rolling friction
// (phys_contact_friction_ang), after phys_penalty_contacts (same state, its rows J): their angular rows into Ja (3 nc x nv; contact
// i's at row 3i) and pc[i].ang, Cs, Cr at the current velocity. Returns the number of such contacts
int phys_penalty_contacts_ang(const physModel* m, physData* d, const physContact* con, int nc,
                              physPenaltyContact* pc, const double* J, double* Ja);
// 1 if every penetrating contact of con (nc) keeps the step's matrix on the kinematic tree's pattern (its two
// bodies on one chain): phys_ldl_factor along dof_parentid then factors it without fill-in, else along a
// chain (dense)
int phys_penalty_tree(const physModel* m, const physContact* con, int nc);
// the elimination tree of the step's matrix H = M~ + sum over the penetrating contacts of con (nc) of J_c' W J_c
// (M~ on the kinematic tree's pattern, each contact coupling the dofs of its two bodies' chains): parent[k] (nv)
// is the largest index below k that eliminating dofs nv-1..k joins to k, -1 at a root. phys_ldl_factor and
// phys_ldl_solve along it touch only H's entries and their fill: the same numbers as on the dense pattern (the
// entries they skip stay exact zeros there), in a block per island of coupled trees instead of nv^3/6 work.
// Equals dof_parentid when phys_penalty_tree holds. Scratch from d's arena
void phys_penalty_etree(const physModel* m, physData* d, const physContact* con, int nc, int* parent);
// rhs += the nc active contacts' forces at qvel, H (lower triangle) += dt (d J_n' J_n + C J_t' J_t)
void phys_penalty_assemble(const physModel* m, physData* d, int nc, const physPenaltyContact* pc, const double* J,
                           double* rhs, double* H);
// re-evaluate the nc contacts con at a new velocity: releases contacts whose f_n would pull (result bit 2);
// C = mu f_n / slip from the new f_n and v_t where slip = max(|v_t|, v_slip) changed (bit 1): not below v_slip
int phys_penalty_update(const physModel* m, const physContact* con, int nc, physPenaltyContact* pc,
                        const double* J, const double* vnew);
// qfrc += the contact forces at the new velocity; each contact's lambda (con, nc) = its impulse F dt (frame)
void phys_penalty_finish(const physModel* m, physContact* con, int nc, const physPenaltyContact* pc,
                         const double* J, const double* vnew, double* qfrc);
// joint-limit springs, explicit (add NULL) or implicit (qfrc += f - dt k v, add += dt d + dt^2 k per dof,
// for the articulated-body diagonal); returns the number of active limits
int phys_penalty_limits(const physModel* m, const physData* d, double* qfrc, double* add);
// the pushing force f > 0 of limit side `side` (0 lower, 1 upper) of joint j, 0 when that spring is not active
// (not a limited hinge or slide, not violated, or pulling): phys_penalty_limits' test, and its derivatives'
double phys_penalty_limit_force(const physModel* m, const physData* d, int j, int side);
// normal damping of a penalty contact of Delassus diagonal w = J_n M~^-1 J_n' (1 / its effective mass) at
// damping ratio zeta, stiffness k, step dt (penalty.c): d = max(2 zeta sqrt(k / w), k dt - 2 / (w dt)), the
// second the least damping the step integrates stably; its partials on the branch taken (each may be NULL)
double phys_penalty_damping(double zeta, double k, double w, double dt, double* dd_dk, double* dd_dw,
                            double* dd_dzeta);
// restitution of the clamped spring-damper impact at damping ratio zeta, and its inverse (eps in (0, 1])
double phys_penalty_restitution(double zeta);
double phys_penalty_zeta(double eps);

#endif  // PHYS_CONTACT_H

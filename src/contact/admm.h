// admm.h - regularized ADMM for the convex sub-problems of the contact solvers (paper 000, appendix A):
//
//   min_x 1/2 x'P x + q'x   s.t.  x in C,    C = disks x Coulomb cones x half-lines,  P symmetric PSD.
//
// Split x = z (Boyd et al. 2011) with the proximal term alpha/2 ||x - x_k||^2 (P~ = P + alpha I, so the
// smallest eigenvalue of P~ is >= alpha even for a singular Delassus matrix). One iteration:
//   x+ = (P + (alpha + rho) I)^-1 (alpha x + rho z - y - q)     (one pair of triangular solves)
//   z+ = Proj_C(x+ + y / rho)                                   (closed-form, per block)
//   y+ = y + rho (x+ - z+)                                      (so y+ is in the normal cone N_C(z+))
// At a solution P z + q + y = 0: the row velocity w = P z + q equals -y, in the dual cone and orthogonal
// to z. rho starts at sqrt(L alpha) (L/alpha)^0.4 (Nishihara et al. 2015; L = largest eigenvalue bound of
// P) and is multiplied by sqrt(primal / dual), within [1/tau, tau], tau = (L/alpha)^0.1, when the normalized
// primal and dual residuals differ by more than 10x (paper 000's trigger, OSQP's update); each change
// refactors P + (alpha + rho) I (dense Cholesky, src/math/chol.h).
#ifndef PHYS_ADMM_H
#define PHYS_ADMM_H

#include "physid.h"

// the convex set: blocks of rows in this order
typedef struct physAdmmSet_ {
  int ndisk;                // 2-row blocks ||(z_2k, z_2k+1)|| <= radius[k] (friction QCQP), first
  const double* radius;     // ndisk radii (>= 0)
  int ncone;                // 3-row blocks ||(z_1, z_2)|| <= mu z_0 (normal row first; ccp), next
  const double* mu;         // ncone friction coefficients (>= 0)
  int nnonneg;              // rows z >= 0 (normal QP, joint limits), last
} physAdmmSet;

// solver state; x, z, y persist between solves so a sequence of related problems warm-starts
typedef struct physAdmm_ {
  int n;                    // rows: 2*ndisk + 3*ncone + nnonneg
  const double* P;          // n x n symmetric PSD (caller-owned, row-major)
  double* F;                // n x n Cholesky factor of P + (alpha + rho) I
  double* x;                // n primal iterate (x-update)
  double* z;                // n projected iterate, always in C: the answer
  double* y;                // n multiplier, in N_C(z); -y is the row velocity at convergence
  double* work;             // n scratch
  double L;                 // Gershgorin bound of the largest eigenvalue of P (1 if P = 0)
  double alpha;             // proximal weight: PHYS_ADMM_ALPHA * L
  double rho;               // augmented-Lagrangian penalty
  double tau;               // rho adaptation factor (L/alpha)^0.1
  int lastdir;              // direction of the last rho change (+1 up, -1 down, 0 none; per solve)
  int nfactor;              // factorizations so far (1 + number of rho changes)
  int iterations;           // iterations of the last solve
  int failed;               // 1 if P + (alpha + rho) I could not be factored (P not finite)
  double residual;          // KKT residual of the last solve, ||P z + q + y||_inf (m/s)
} physAdmm;

#define PHYS_ADMM_ALPHA 1e-9      // proximal weight relative to L (measured: 1e-6..1e-12 perform alike)
#define PHYS_ADMM_RATIO 10.0      // residual ratio that triggers a rho change (paper 000)

// allocate the vectors and factor from d's arena, bound L, set alpha, rho and factor; x = z = y = 0.
// Returns 0 if P + (alpha + rho) I could not be factored (P has non-finite entries).
int phys_admm_init(physAdmm* a, physData* d, const double* P, int n);

// iterate from the current (x, z, y) until max(L ||x - z||_inf, ||alpha (x_k - x) + rho (z_k - z)||_inf)
// <= tol * max(1, ||q||_inf) or maxiter iterations; sets iterations and residual; returns 1 if converged
int phys_admm_solve(physAdmm* a, const double* q, const physAdmmSet* set, int maxiter, double tol);

// warm start from a guess z0 (n, e.g. last step's impulses): z = x = Proj_C(z0), y = -(P z + q). At a
// solution y = -(P z + q) is in N_C(z) (admm.h's header), so an exact guess is a fixed point of the
// iteration and the next solve stops after one iteration; an inexact one starts where it is.
void phys_admm_warm(physAdmm* a, const double* z0, const double* q, const physAdmmSet* set);

// Euclidean projection onto C, in place (the z-update)
void phys_admm_project(double* z, const physAdmmSet* set);

// project (a, b) (normal a, tangent b[2]) onto the cone ||b|| <= mu a, in place; returns 1 if it moved
int phys_admm_project_cone(double* a, double b[2], double mu);

//---------------------------------------------------------------------------------------------------------
// helpers shared by the cone and ccp solvers (rows as in contact.h: contact i owns 3i (normal), 3i+1, 3i+2
// (tangents); then nl limit rows)

// 1 if all n numbers are finite
int phys_admm_finite(const double* v, size_t n);

// physRowState of each row from the impulses: a contact with lambda_n = 0 separates (3 rows SEPARATING);
// otherwise its normal row is CLAMPING and its tangent rows are CLAMPING when strictly inside the cone
// (sticking) or UPPER when on its surface ||lambda_t|| >= mu lambda_n (1 - 1e-9) (sliding; also mu = 0);
// a limit row is CLAMPING when lambda > 0, else SEPARATING
void phys_admm_states(int* state, const double* lambda, const double* mu, int nc, int nl);

// Residual (m/s) of impulses lambda (n = 3 nc + nl) for the cone model (ccp = 0) or Anitescu's relaxation
// (ccp = 1), with w = G lambda + g (written to w, n, if not NULL). Per contact: separating (lambda_n = 0):
// max(0, -w_n) (cone) or max(0, mu ||w_t|| - w_n) (ccp: w in the dual cone); sticking (strictly inside the
// cone, tested as phys_admm_states): max |w|; sliding (u = lambda_t / ||lambda_t||): the part of w_t off
// the line of u, max(0, w_t.u) (w_t opposes lambda_t) and |w_n| (cone) or |w_n + mu w_t.u| (ccp: w_n = mu
// ||w_t||); mu = 0: |w_n|. Limit rows: |w| if lambda > 0, else max(0, -w). Max over all.
double phys_contact_residual(double* w, const double* G, const double* g, const double* lambda, const double* mu,
                             int nc, int nl, int ccp);

// Solution polishing (as OSQP's, Stellato et al. 2020): take the active structure of an approximate
// solution lambda as exact and solve its equations. Unknowns: a sticking contact's 3 impulses, a sliding
// contact's lambda_n along the fixed direction (1, mu u) (mu = 0: (1, 0, 0)), an active limit's impulse;
// separating rows stay 0. Equations: w = 0 on sticking contacts and active limits; a sliding contact's
// w_n = 0 (cone) or (1, mu u).w = 0 (ccp: w_n = mu ||w_t|| when w_t = -||w_t|| u). The correction delta
// of smallest norm (the system is singular whenever contacts outnumber the dofs they constrain, e.g. a
// box's 4 coplanar corners) comes from the regularized normal equations with iterative refinement. The
// sliding directions u are first aligned with -w_t (maximal dissipation) and the solve repeated (at most
// 3 solves) while the residual keeps halving and is above target. lambda is replaced only if the result
// stays in the cones and its residual (phys_contact_residual) is below *residual; then *residual is updated
// and 1 returned. Removes the last digits an iterative solver leaves, which a rigid contact turns into creep.
int phys_admm_polish(double* lambda, double* residual, physData* d, const double* G, const double* g,
                     const double* mu, int nc, int nl, int ccp, double target);

// The warm start of the cone and ccp solvers: lambda = lambda0 projected onto the cones (limit rows onto
// lambda >= 0), with its residual in *residual; polished when that residual exceeds 1e-3 eps. Returns 1 if
// the result meets eps (the solve is done), else 0 (lambda is still the best guess to start from).
// Why 1e-3 eps and not eps: last step's impulses include the correction of last step's velocity error; a
// guess accepted with an error e makes the next guess wrong by about e again (the correction is reused),
// a two-step cycle that would make every other step polish; an exact guess ends it.
int phys_admm_warm_check(double* lambda, double* residual, physData* d, const double* G, const double* g,
                         const double* lambda0, const double* mu, int nc, int nl, int ccp, double eps);

// Semismooth Newton method on a natural map of the contact problem, from lambda: with w = G lambda + g,
//   F(lambda) = lambda - p(lambda - rho w),   rho = 1 / mean diagonal of each contact's block of G,
// p = the projection onto the cones (ccp = 1: Anitescu's cone complementarity K ∋ lambda ⊥ w ∈ K*) or
// Alart and Curnier's map (ccp = 0: p_n = max(0, v_n), p_t = v_t projected onto the disk of radius mu p_n:
// Coulomb's law with maximal dissipation), max(0, .) on limit rows. F = 0 exactly at a solution. Each
// iteration solves dF dlambda = -F with a generalized Jacobian (minimal norm: dF is singular on redundant
// contacts) and backtracks on ||F||^2 (Armijo). Unlike polishing, which and how the contacts stick or slide,
// and the sliding directions, are unknowns too: a contact between sticking and sliding, or one whose slip
// turns within the step, converges quadratically where ADMM crawls. After each iteration p(.) (always in
// the cones) replaces lambda when its residual (phys_contact_residual) is below *residual. Stops at
// *residual <= eps, after maxiter iterations (count in *iterations) or when ||F|| stops decreasing.
// Returns 1 if lambda was improved.
int phys_contact_newton(double* lambda, double* residual, physData* d, const double* G, const double* g,
                        const double* mu, int nc, int nl, int ccp, int maxiter, double eps, int* iterations);

#define PHYS_NEWTON_ITER 20   // Newton iterations of each start of phys_admm_fallback

// The fallback of the cone and ccp solvers when ADMM (with polishing) missed eps: phys_contact_newton from
// lambda (the best iterate, residual *residual), then, if still above eps and lambda0 is not NULL, from
// lambda0 projected onto the cones (last step's impulses: near a solution of a problem that changed
// little, where the stalled iterate may sit near a wrong structure); the better result is kept in lambda.
// Newton iterations in *iterations; returns 1 if *residual <= eps.
int phys_admm_fallback(double* lambda, double* residual, physData* d, const double* G, const double* g,
                       const double* lambda0, const double* mu, int nc, int nl, int ccp, double eps,
                       int* iterations);

#endif  // PHYS_ADMM_H

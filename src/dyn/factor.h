// factor.h - tree-sparse L'DL factorization of the joint-space inertia and of matrices with its pattern.
//
// M~ = qM + diag(add) (the step's effective mass M + dt diag(dof_damping); armature is already in qM) has
// the kinematic tree's sparsity: M~_ki != 0 (i <= k) only if dof i is k or an ancestor of k along
// dof_parentid, and dofs come parent first (dof_parentid[k] < k). Eliminating from the leaves
// (k = nv-1 .. 0) keeps that pattern (no fill-in):
//   M~ = L' D L,   L unit lower triangular with L_ki != 0 only for the ancestors i of k,   D diagonal,
// the factorization of MuJoCo's mj_factorM. Storage (qLD, nv x nv row-major): L_ki at [k*nv + i] for the
// ancestors i of k, D_k on the diagonal [k*nv + k]; the strict upper triangle keeps M~'s entries and the
// lower triangle off the pattern qM's zeros (phys_crb's qM is 0 there). Neither is ever read.
// Cost: sum over dofs of depth^2 multiply-adds (a humanoid: about 1k, against nv^3/6 = 3.3k dense).
//
// The kernels take the pattern as a parent array (parent[k] < k, -1 at a root). parent NULL is the chain
// parent[k] = k - 1, every i < k an ancestor of k: a dense LDL' of any symmetric positive definite matrix
// (a matrix with fill-in, as penalty contacts spanning two chains), run by contiguous loops with the same
// results as the explicit chain.
#ifndef PHYS_FACTOR_H
#define PHYS_FACTOR_H

#include "physid.h"

// H (n x n, lower triangle on parent's pattern) = L' D L in place: strict lower triangle <- L (unit
// diagonal implied), diagonal <- D. Returns n, or the index k of the first pivot that is not positive
// (H is then partially overwritten).
int phys_ldl_factor(double* H, const int* parent, int n);
// x = H^-1 b = L^-1 D^-1 L'^-1 b with the factor F of phys_ldl_factor (x may alias b)
void phys_ldl_solve(double* x, const double* F, const int* parent, const double* b, int n);
// the same on the indices lo .. hi - 1 only, for b zero outside them and a range closed under parent (whole trees
// of a forest: no index outside is an ancestor or a descendant of one inside): x is 0 outside, and inside the
// same operations in the same order as phys_ldl_solve's (its other indices add only zeros). parent required
void phys_ldl_solve_range(double* x, const double* F, const int* parent, const double* b, int n, int lo, int hi);
// the half-solve y = D^-1/2 L'^-1 b (y may alias b), so that b' H^-1 c = y_b . y_c (G = Y Y' for the
// Delassus matrix J H^-1 J' with the rows of Y the half-solves of the rows of J). y_k is nonzero only on
// the nonzeros of b and their ancestors; list (n ints, may be NULL) <- the k with y_k != 0, descending.
// Returns their number.
int phys_ldl_half(double* y, const double* F, const int* parent, const double* b, int n, int* list);
// phys_ldl_half in place on y (n, zero off s) whose nonzeros lie in the ns indices s, descending and closed
// under parent (every ancestor of an index in s is in s; parent not NULL): the same operations in the same
// order, in time proportional to s's chains instead of n
int phys_ldl_half_on(double* y, const double* F, const int* parent, int n, const int* s, int ns, int* list);

// H <- A on the lower triangle of parent's pattern (the diagonal and each k's ancestors i along parent: the
// entries phys_ldl_factor reads; parent NULL: the whole lower triangle); the other entries of H are untouched
void phys_ldl_copy(double* H, const double* A, const int* parent, int n);
// qLD <- the factor of M~ = qM + diag(add) along dof_parentid (add NULL: M~ = qM); qM's entries off the
// tree pattern are copied, never read. Returns nv, or the first dof whose pivot is not positive.
int phys_factor_m(const physModel* m, double* qLD, const double* qM, const double* add);
// x = M~^-1 b with phys_factor_m's factor (x may alias b)
void phys_solve_m(const physModel* m, const double* qLD, double* x, const double* b);
// y = D^-1/2 L'^-1 b (b' M~^-1 c = y_b . y_c), the nonzeros of y listed as phys_ldl_half's
int phys_solve_m_half(const physModel* m, const double* qLD, double* y, const double* b, int* list);
// phys_solve_m_half in place on y supported in the dofs s (ns, descending, ancestor-closed: phys_chain_union)
int phys_solve_m_half_on(const physModel* m, const double* qLD, double* y, const int* s, int ns, int* list);

#endif  // PHYS_FACTOR_H

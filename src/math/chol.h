// chol.h - dense Cholesky factorization M = L L' of a symmetric positive definite n x n matrix.
// Row-major; the factor overwrites the lower triangle, the strict upper triangle is left untouched.
#ifndef PHYS_CHOL_H
#define PHYS_CHOL_H

// factor A (n x n) in place: lower triangle <- L. Returns n on success, else the index k of the first
// pivot <= mindiag (the factorization stops there; A is then partially overwritten).
int phys_chol_factor(double* A, int n, double mindiag);
// solve L L' x = b with the factor from phys_chol_factor; x may alias b
void phys_chol_solve(double* x, const double* L, const double* b, int n);
// solve for k right-hand sides stored as the rows of B (k x n), results in the rows of X (may alias)
void phys_chol_solve_multi(double* X, const double* L, const double* B, int n, int k);

// Pi' A Pi = L L' + R by Cholesky with diagonal pivoting for a symmetric positive semidefinite A (m x m,
// COLUMN-major; its lower triangle is read and overwritten): L (m x r) in the lower trapezoid, the Schur
// remainder R in the trailing (m - r) block, perm (m) the order. The rank r is the first step whose largest
// remaining diagonal is <= tol * the first pivot (written to *first, may be NULL). Returns r. (The lcp
// solver's minimal-norm solve and its derivative's pseudo-inverse share it: the same rank decision.)
int phys_chol_pivoted(double* A, int* perm, int m, double tol, double* first);

#endif  // PHYS_CHOL_H

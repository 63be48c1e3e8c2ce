// chol.c - dense Cholesky factorization and solves (row-major, lower triangle).
#include "chol.h"

#include <math.h>
#include <stddef.h>

// L_jj = sqrt(A_jj - sum_k L_jk^2), L_ij = (A_ij - sum_k L_ik L_jk) / L_jj  for i > j (row by row)
int phys_chol_factor(double* A, int n, double mindiag) {
  for (int i = 0; i < n; i++) {
    double* Li = A + (size_t)i * n;
    for (int j = 0; j <= i; j++) {
      const double* Lj = A + (size_t)j * n;
      double s = Li[j];
      for (int k = 0; k < j; k++) s -= Li[k] * Lj[k];
      if (j < i) {
        Li[j] = s / Lj[j];
      } else {
        if (!(s > mindiag)) return i;  // also catches NaN
        Li[i] = sqrt(s);
      }
    }
  }
  return n;
}

// forward L y = b, then backward L' x = y
void phys_chol_solve(double* x, const double* L, const double* b, int n) {
  for (int i = 0; i < n; i++) {
    const double* Li = L + (size_t)i * n;
    double s = b[i];
    for (int k = 0; k < i; k++) s -= Li[k] * x[k];
    x[i] = s / Li[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k < n; k++) s -= L[(size_t)k * n + i] * x[k];
    x[i] = s / L[(size_t)i * n + i];
  }
}

// one solve per row
void phys_chol_solve_multi(double* X, const double* L, const double* B, int n, int k) {
  for (int r = 0; r < k; r++) phys_chol_solve(X + (size_t)r * n, L, B + (size_t)r * n, n);
}

//---------------------------------------------------------------------------------------------------------
// pivoted (rank-revealing) Cholesky of a positive semidefinite matrix, column-major lower triangle

// symmetric exchange of rows and columns k < p of the lower triangle of A (column-major m x m; the factored
// columns j < k exchange their rows k and p) and of perm[k], perm[p]
static void sym_swap(double* A, int m, int k, int p, int* perm) {
  double t;
#define SWAP(a, b) (t = (a), (a) = (b), (b) = t)
  for (int j = 0; j < k; j++) SWAP(A[(size_t)j * m + k], A[(size_t)j * m + p]);          // (k, j) <-> (p, j)
  for (int j = k + 1; j < p; j++) SWAP(A[(size_t)k * m + j], A[(size_t)j * m + p]);      // (j, k) <-> (p, j)
  for (int j = p + 1; j < m; j++) SWAP(A[(size_t)k * m + j], A[(size_t)p * m + j]);      // (j, k) <-> (j, p)
  SWAP(A[(size_t)k * m + k], A[(size_t)p * m + p]);
#undef SWAP
  int ti = perm[k];
  perm[k] = perm[p];
  perm[p] = ti;
}

// at step k the largest remaining diagonal is pivoted to k; L_kk = sqrt(a_kk), L_ik = a_ik / L_kk, Schur
// complement a_ij -= L_ik L_jk (lower, i >= j > k); stop when the pivot is <= tol * the first
int phys_chol_pivoted(double* A, int* perm, int m, double tol, double* first) {
  int r = m;
  double d0 = 0;
#define LO(i, j) A[(size_t)(j) * m + (i)]   // lower triangle, i >= j
  for (int k = 0; k < m; k++) perm[k] = k;
  for (int k = 0; k < m; k++) {
    int p = k;
    for (int j = k + 1; j < m; j++)
      if (LO(j, j) > LO(p, p)) p = j;
    if (k == 0) d0 = LO(p, p);
    if (!(LO(p, p) > tol * d0)) {
      r = k;
      break;
    }
    if (p != k) sym_swap(A, m, k, p, perm);
    double* Lk = A + (size_t)k * m;
    Lk[k] = sqrt(Lk[k]);
    for (int i = k + 1; i < m; i++) Lk[i] /= Lk[k];
    for (int j = k + 1; j < m; j++) {
      double* Aj = A + (size_t)j * m;
      for (int i = j; i < m; i++) Aj[i] -= Lk[i] * Lk[j];
    }
  }
#undef LO
  if (first) *first = d0;
  return r;
}

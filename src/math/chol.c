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

// test_chol.c - dense Cholesky: L L' reproduces A, solves against a known solution, failure reporting; the
// pivoted Cholesky of a rank-deficient positive semidefinite matrix: its rank, decreasing pivots, and
// Pi L L' Pi' = A (the remainder below the rank cut is at rounding).
#include <math.h>

#include "chol.h"
#include "rng.h"
#include "test.h"

// A = B B' (m x m, B m x k random: rank k) through phys_chol_pivoted
static void check_pivoted(physRng* r, int m, int k) {
  double B[12 * 12], A[12 * 12], W[12 * 12];
  int perm[12];
  for (int i = 0; i < m * k; i++) B[i] = phys_rng_range(r, -1, 1);
  double amax = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      double s = 0;
      for (int c = 0; c < k; c++) s += B[i * k + c] * B[j * k + c];
      A[i * m + j] = W[i * m + j] = s;   // symmetric: row- and column-major alike
      amax = fmax(amax, fabs(s));
    }
  double first = 0;
  int rank = phys_chol_pivoted(W, perm, m, 1e-12, &first);
  CHECK_MSG(rank == k, "pivoted Cholesky of a rank-%d %d x %d matrix: rank %d", k, m, m, rank);
  for (int c = 1; c < rank; c++) CHECK(W[c * m + c] <= W[(c - 1) * m + c - 1] * (1 + 1e-12));   // L_cc decrease
  CHECK_REL(first, W[0] * W[0], 1e-12, 0);
  double err = 0;   // (Pi L L' Pi')_{perm i, perm j} = sum_c L_ic L_jc, L_ic = W[c m + i] (column-major)
  for (int i = 0; i < m; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0;
      for (int c = 0; c < rank && c <= j; c++) s += W[c * m + i] * W[c * m + j];
      err = fmax(err, fabs(s - A[perm[i] * m + perm[j]]));
    }
  CHECK_MSG(err <= 1e-12 * amax, "pivoted Cholesky: |Pi L L' Pi' - A| = %.3g (scale %.3g)", err, amax);
}

int main(void) {
  physRng r;
  phys_rng_seed(&r, 1);
  for (int m = 1; m <= 12; m += 3)
    for (int k = 1; k <= m; k += 2) check_pivoted(&r, m, k);
  for (int n = 1; n <= 12; n += 3) {
    // A = B B' + n I (symmetric positive definite)
    double B[144], A[144], L[144], x[12], b[12], y[12];
    for (int i = 0; i < n * n; i++) B[i] = phys_rng_range(&r, -1, 1);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = (i == j) * n;
        for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
        A[i * n + j] = L[i * n + j] = s;
      }
    CHECK(phys_chol_factor(L, n, 0) == n);
    double err = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j <= i; j++) {
        double s = 0;
        for (int k = 0; k <= j; k++) s += L[i * n + k] * L[j * n + k];
        err = fmax(err, fabs(s - A[i * n + j]));
      }
    CHECK_MSG(err < 1e-13 * n, "n %d: |LL' - A| %g", n, err);
    // strict upper triangle untouched
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) CHECK(L[i * n + j] == A[i * n + j]);
    for (int i = 0; i < n; i++) x[i] = phys_rng_range(&r, -2, 2);
    for (int i = 0; i < n; i++) {
      b[i] = 0;
      for (int j = 0; j < n; j++) b[i] += A[i * n + j] * x[j];
    }
    phys_chol_solve(y, L, b, n);
    for (int i = 0; i < n; i++) CHECK_NEAR(y[i], x[i], 1e-12);
    phys_chol_solve(b, L, b, n);  // in place
    for (int i = 0; i < n; i++) CHECK_NEAR(b[i], x[i], 1e-12);
    double X[24], Bm[24];
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < n; i++) {
        Bm[k * n + i] = 0;
        for (int j = 0; j < n; j++) Bm[k * n + i] += A[i * n + j] * (x[j] + k);
      }
    phys_chol_solve_multi(X, L, Bm, n, 2);
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < n; i++) CHECK_NEAR(X[k * n + i], x[i] + k, 1e-11);
  }
  // indefinite: [[1 2][2 1]] fails at pivot 1; a NaN fails at pivot 0
  double A[4] = {1, 2, 2, 1};
  CHECK(phys_chol_factor(A, 2, 0) == 1);
  double Z[1] = {NAN};
  CHECK(phys_chol_factor(Z, 1, 0) == 0);
  double S[4] = {1, 0, 0, 1e-20};
  CHECK(phys_chol_factor(S, 2, 1e-15) == 1);
  return test_done();
}

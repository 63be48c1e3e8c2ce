// lqr.h - shared by the tests of src/control (test_ddp.c, test_ms.c): the finite-horizon Riccati solution
// of a linear-quadratic problem, the reference of every method on the linear model, and loading a model.
// Include after test.h.
#ifndef PHYS_TEST_LQR_H
#define PHYS_TEST_LQR_H

#include <string.h>

#include "chol.h"
#include "physid.h"

// the finite-horizon affine Riccati recursion for x+ = A x + B u, running cost 1/2 (x - xr)' Q (x - xr) +
// 1/2 u' R u, final 1/2 (x - xf)' Qf (x - xf), Q, R, Qf diagonal (q, r, qf); the optimal controls from x0
// into U (T x nu). n <= 8, nu <= 4.
static void riccati(int n, int nu, int T, const double* A, const double* B, const double* q, const double* r,
                    const double* qf, const double* xr, const double* xf, const double* x0, double* U) {
  static double K[400][4 * 8], k[400][4];
  double P[64], p[8], PA[64], PB[32], Quu[16], Qux[32], qu[4], Qxx[64], qx[8];
  memset(P, 0, sizeof P);
  for (int i = 0; i < n; i++) P[i * n + i] = qf[i], p[i] = -qf[i] * xf[i];
  for (int t = T - 1; t >= 0; t--) {
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        PA[i * n + j] = 0;
        for (int l = 0; l < n; l++) PA[i * n + j] += P[i * n + l] * A[l * n + j];
      }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < nu; j++) {
        PB[i * nu + j] = 0;
        for (int l = 0; l < n; l++) PB[i * nu + j] += P[i * n + l] * B[l * nu + j];
      }
    for (int i = 0; i < nu; i++) {
      qu[i] = 0;
      for (int l = 0; l < n; l++) qu[i] += B[l * nu + i] * p[l];
      for (int j = 0; j < nu; j++) {
        Quu[i * nu + j] = i == j ? r[i] : 0;
        for (int l = 0; l < n; l++) Quu[i * nu + j] += B[l * nu + i] * PB[l * nu + j];
      }
      for (int j = 0; j < n; j++) {
        Qux[i * n + j] = 0;
        for (int l = 0; l < n; l++) Qux[i * n + j] += B[l * nu + i] * PA[l * n + j];
      }
    }
    for (int i = 0; i < n; i++) {
      qx[i] = -q[i] * xr[i];
      for (int l = 0; l < n; l++) qx[i] += A[l * n + i] * p[l];
      for (int j = 0; j < n; j++) {
        Qxx[i * n + j] = i == j ? q[i] : 0;
        for (int l = 0; l < n; l++) Qxx[i * n + j] += A[l * n + i] * PA[l * n + j];
      }
    }
    phys_chol_factor(Quu, nu, 0);
    double col[4];
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < nu; i++) col[i] = Qux[i * n + j];
      phys_chol_solve(col, Quu, col, nu);
      for (int i = 0; i < nu; i++) K[t][i * n + j] = -col[i];
    }
    phys_chol_solve(k[t], Quu, qu, nu);
    for (int i = 0; i < nu; i++) k[t][i] = -k[t][i];
    // P = Qxx + Qux' K, p = qx + Qux' k
    for (int i = 0; i < n; i++) {
      p[i] = qx[i];
      for (int l = 0; l < nu; l++) p[i] += Qux[l * n + i] * k[t][l];
      for (int j = 0; j < n; j++) {
        P[i * n + j] = Qxx[i * n + j];
        for (int l = 0; l < nu; l++) P[i * n + j] += Qux[l * n + i] * K[t][l * n + j];
      }
    }
  }
  double x[8], xn[8];
  memcpy(x, x0, sizeof(double) * n);
  for (int t = 0; t < T; t++) {
    double* u = U + t * nu;
    for (int i = 0; i < nu; i++) {
      u[i] = k[t][i];
      for (int j = 0; j < n; j++) u[i] += K[t][i * n + j] * x[j];
    }
    for (int i = 0; i < n; i++) {
      xn[i] = 0;
      for (int j = 0; j < n; j++) xn[i] += A[i * n + j] * x[j];
      for (int j = 0; j < nu; j++) xn[i] += B[i * nu + j] * u[j];
    }
    memcpy(x, xn, sizeof(double) * n);
  }
}

// the model at path and its data (NULL and a failed check if it does not load)
static physModel* load(physData** d, const char* path) {
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(path, NULL, &log);
  CHECK_MSG(m != NULL, "%s: %s", path, log.error);
  *d = m ? phys_make_data(m) : NULL;
  return m;
}

#endif  // PHYS_TEST_LQR_H

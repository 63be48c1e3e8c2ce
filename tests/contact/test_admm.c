// test_admm.c - the regularized ADMM: projections (Moreau decomposition), a nonnegative QP against
// brute-force enumeration of its active sets, disks, singular and zero P, rho adaptation, the KKT bound at
// convergence, non-finite input, determinism; polishing, warm start.
#include <string.h>

#include "admm.h"
#include "admm_problems.h"
#include "chol.h"
#include "rng.h"
#include "test.h"

// Moreau: v = P_K(v) + P_K°(v) with P_K(v) . P_K°(v) = 0, P_K(v) in K, v - P_K(v) in the polar cone
// K° = {(a, b): a <= -mu ||b||}; P_K is idempotent
static void test_cone_projection(physRng* r) {
  const double mus[4] = {0, 0.3, 1, 2.5};
  for (int t = 0; t < 400; t++) {
    double mu = mus[t % 4], v[3], p[3];
    for (int k = 0; k < 3; k++) v[k] = p[k] = phys_rng_range(r, -2, 2);
    phys_admm_project_cone(&p[0], p + 1, mu);
    double rr[3] = {v[0] - p[0], v[1] - p[1], v[2] - p[2]};
    CHECK(hypot(p[1], p[2]) <= mu * p[0] * (1 + 1e-14) + 1e-15);                   // in K
    CHECK(rr[0] <= -mu * hypot(rr[1], rr[2]) * (1 - 1e-12) + 1e-14);              // residual in K°
    CHECK_NEAR(p[0] * rr[0] + p[1] * rr[1] + p[2] * rr[2], 0, 1e-13);             // orthogonal
    double q[3] = {p[0], p[1], p[2]};
    int moved = phys_admm_project_cone(&q[0], q + 1, mu);
    for (int k = 0; k < 3; k++) CHECK_NEAR(q[k], p[k], 1e-15);                   // idempotent
    (void)moved;
  }
  // the three cases exactly
  double a = 1, b[2] = {0.3, 0.4};  // inside mu = 1
  CHECK(phys_admm_project_cone(&a, b, 1) == 0 && a == 1 && b[0] == 0.3);
  a = -1, b[0] = 0.3, b[1] = 0.4;   // polar: mu ||b|| = 0.5 <= 1
  CHECK(phys_admm_project_cone(&a, b, 1) == 1 && a == 0 && b[0] == 0 && b[1] == 0);
  a = 0, b[0] = 3, b[1] = 4;        // a' = (0 + 1*5)/2 = 2.5, b' = 2.5 (0.6, 0.8)
  CHECK(phys_admm_project_cone(&a, b, 1) == 1);
  CHECK_NEAR(a, 2.5, 1e-15);
  CHECK_NEAR(b[0], 1.5, 1e-15);
  CHECK_NEAR(b[1], 2.0, 1e-15);
  a = 2, b[0] = 3, b[1] = 0;        // mu = 0: onto the half-line (a, 0)
  CHECK(phys_admm_project_cone(&a, b, 0) == 1 && a == 2 && b[0] == 0);
  // mu = 0 with b = 0 and a pulling a < 0: onto the apex, 0 (0 <= mu a held as 0 <= -0, and the negative
  // normal impulse stayed: issue 10 item 16); exactly on the ray (a >= 0, b = 0): unchanged
  a = -3, b[0] = b[1] = 0;
  CHECK(phys_admm_project_cone(&a, b, 0) == 1 && a == 0 && b[0] == 0 && b[1] == 0);
  a = 3, b[0] = b[1] = 0;
  CHECK(phys_admm_project_cone(&a, b, 0) == 0 && a == 3 && b[0] == 0 && b[1] == 0);
}

// disks (radius r, 0) and half-lines through phys_admm_project
static void test_set_projection(void) {
  double radius[2] = {1, 0}, mu[1] = {0.5};
  physAdmmSet set = {2, radius, 1, mu, 2};
  double z[11] = {3, 4, 0.1, 0.2, 1, 1, 0, -1, 0.25, -0.5, 2};
  phys_admm_project(z, &set);
  CHECK_NEAR(z[0], 0.6, 1e-15);
  CHECK_NEAR(z[1], 0.8, 1e-15);
  CHECK(z[2] == 0 && z[3] == 0);
  // cone block (1, 1, 0): ||b|| = 1 > 0.5: a' = (1 + 0.5)/1.25 = 1.2, b' = 0.6 (1, 0)
  CHECK_NEAR(z[4], 1.2, 1e-15);
  CHECK_NEAR(z[5], 0.6, 1e-15);
  CHECK(z[6] == 0);
  CHECK(z[7] == 0);     // half-lines: rows 7, 8
  CHECK(z[8] == 0.25);
  CHECK(z[9] == -0.5 && z[10] == 2);  // beyond n: untouched
}

// nonnegative QP min 1/2 x'Px + q'x, x >= 0 by enumeration: for each active set A (x_A = 0), solve
// P_FF x_F = -q_F and keep the one with x_F >= 0 and (P x + q)_A >= 0 (unique for P positive definite)
static void qp_bruteforce(double* x, const double* P, const double* q, int n) {
  for (int mask = 0; mask < (1 << n); mask++) {
    int idx[8], nf = 0;
    for (int i = 0; i < n; i++)
      if (mask & (1 << i)) idx[nf++] = i;
    double A[64], b[8];
    for (int a = 0; a < nf; a++) {
      for (int c = 0; c < nf; c++) A[a * nf + c] = P[idx[a] * n + idx[c]];
      b[a] = -q[idx[a]];
    }
    if (nf && phys_chol_factor(A, nf, 0) != nf) continue;
    if (nf) phys_chol_solve(b, A, b, nf);
    memset(x, 0, sizeof(double) * n);
    int ok = 1;
    for (int a = 0; a < nf; a++) {
      x[idx[a]] = b[a];
      ok &= b[a] >= -1e-14;
    }
    for (int i = 0; i < n && ok; i++) {
      double w = q[i];
      for (int j = 0; j < n; j++) w += P[i * n + j] * x[j];
      if (!(mask & (1 << i))) ok &= w >= -1e-12;
    }
    if (ok) return;
  }
}

static void test_qp(physData* d, physRng* r) {
  int hist_factor = 0;
  for (int t = 0; t < 50; t++) {
    int n = 1 + t % 7;
    double B[64], P[64], q[8], xref[8];
    for (int i = 0; i < n * n; i++) B[i] = phys_rng_range(r, -1, 1);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = 0.05 * (i == j);
        for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
        P[i * n + j] = s;
      }
    for (int i = 0; i < n; i++) q[i] = phys_rng_range(r, -1, 1);
    qp_bruteforce(xref, P, q, n);
    size_t mark = phys_stack_mark(d);
    physAdmm a;
    physAdmmSet set = {0, NULL, 0, NULL, n};
    CHECK(phys_admm_init(&a, d, P, n));
    int conv = phys_admm_solve(&a, q, &set, 5000, 1e-12);
    CHECK_MSG(conv, "QP %d (n %d) not converged: %d iterations, residual %g", t, n, a.iterations, a.residual);
    // converged: ||P z + q + y||_inf <= 2 tol max(1, ||q||_inf) (see admm.h), here ||q|| <= 1
    CHECK(a.residual <= 2e-12);
    // P has eigenvalues >= 0.05: |x - xref| <= residual / 0.05
    for (int i = 0; i < n; i++) CHECK_NEAR(a.z[i], xref[i], 1e-9);
    hist_factor += a.nfactor > 1;
    phys_stack_free(d, mark);
  }
  CHECK(hist_factor > 0);  // rho adaptation happened on some problems
}

// singular P (rank 1, a = (1, 2, -1)): min 1/2 (a.x)^2 - (a.x) over x >= 0: any x >= 0 with a.x = 1;
// and P = 0 with q >= 0: x = 0
static void test_singular(physData* d) {
  double P[9], q[3], av[3] = {1, 2, -1};
  for (int i = 0; i < 3; i++) {
    q[i] = -av[i];
    for (int j = 0; j < 3; j++) P[i * 3 + j] = av[i] * av[j];
  }
  size_t mark = phys_stack_mark(d);
  physAdmm a;
  physAdmmSet set = {0, NULL, 0, NULL, 3};
  CHECK(phys_admm_init(&a, d, P, 3));
  CHECK(phys_admm_solve(&a, q, &set, 1000, 1e-10));
  double ax = av[0] * a.z[0] + av[1] * a.z[1] + av[2] * a.z[2];
  CHECK_NEAR(ax, 1, 1e-9);
  for (int i = 0; i < 3; i++) CHECK(a.z[i] >= 0 && isfinite(a.z[i]));
  CHECK(a.residual <= 2e-10 * 2);
  phys_stack_free(d, mark);

  double Z[4] = {0, 0, 0, 0}, q2[2] = {0.5, 0};
  physAdmmSet set2 = {0, NULL, 0, NULL, 2};
  CHECK(phys_admm_init(&a, d, Z, 2));
  CHECK(a.L == 1);  // P = 0: the bound falls back to 1
  CHECK(phys_admm_solve(&a, q2, &set2, 1000, 1e-10));
  CHECK(a.z[0] == 0 && a.z[1] == 0);
  phys_stack_free(d, mark);
}

// non-finite P: init fails, solve returns 0 with an infinite residual and leaves z finite (zero)
static void test_nonfinite(physData* d) {
  double P[4] = {1, 0, 0, NAN}, q[2] = {-1, -1};
  size_t mark = phys_stack_mark(d);
  physAdmm a;
  physAdmmSet set = {0, NULL, 0, NULL, 2};
  CHECK(!phys_admm_init(&a, d, P, 2));
  CHECK(!phys_admm_solve(&a, q, &set, 100, 1e-10));
  CHECK(isinf(a.residual));
  CHECK(a.z[0] == 0 && a.z[1] == 0);
  phys_stack_free(d, mark);
}

// same problem twice: the same bits and iteration count
static void test_determinism(physData* d, physRng* r) {
  double P[36], q[6], z1[6];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j <= i; j++) P[i * 6 + j] = P[j * 6 + i] = (i == j) * 2 + phys_rng_range(r, -0.3, 0.3);
  for (int i = 0; i < 6; i++) q[i] = phys_rng_range(r, -1, 1);
  double mu[2] = {0.4, 0.9};
  physAdmmSet set = {0, NULL, 2, mu, 0};
  int it1 = 0;
  for (int rep = 0; rep < 2; rep++) {
    size_t mark = phys_stack_mark(d);
    physAdmm a;
    CHECK(phys_admm_init(&a, d, P, 6));
    CHECK(phys_admm_solve(&a, q, &set, 500, 1e-10));
    if (rep == 0) {
      memcpy(z1, a.z, sizeof(z1));
      it1 = a.iterations;
    } else {
      CHECK(memcmp(z1, a.z, sizeof(z1)) == 0);
      CHECK(it1 == a.iterations);
      printf("determinism: %d iterations, %d factorizations\n", a.iterations, a.nfactor);
    }
    phys_stack_free(d, mark);
  }
}

// polishing: ADMM stopped at a loose tolerance on a box (singular G, 4 corners) sticking and sliding, for
// ccp (one cone program) and for the cone model's conditions; the polished impulses satisfy the model's
// conditions to rounding (independent check pb_violation), stay in the cones and keep the velocities the
// loose solve gave up to its tolerance
static void test_polish(physData* d) {
  static pbProblem b;
  const double vs[2][3] = {{0, 0, 0}, {0.8, 0.3, 0}};   // sticking, sliding
  for (int k = 0; k < 2; k++) {
    pb_box(&b, 1.5, 0.1, 0.6, vs[k], 0.01, 0.3);
    physAdmm a;
    physAdmmSet set = {0, NULL, 4, b.mu, 0};
    size_t mark = phys_stack_mark(d);
    CHECK(phys_admm_init(&a, d, b.G, 12));
    phys_admm_solve(&a, b.g, &set, 1000, 1e-5);
    memcpy(b.lambda, a.z, sizeof(double) * 12);
    double res = phys_contact_residual(NULL, b.G, b.g, b.lambda, b.mu, 4, 0, 1), res0 = res;
    CHECK(res > 1e-12);   // the loose solve leaves digits to polish
    CHECK(phys_admm_polish(b.lambda, &res, d, b.G, b.g, b.mu, 4, 0, 1, 0) == 1);
    printf("polish (%s box): ccp residual %.2e -> %.2e\n", k ? "sliding" : "sticking", res0, res);
    if (k == 0) {
      // sticking: a linear system, solved to rounding
      CHECK(res <= 1e-14);
      CHECK(pb_violation(&b, 1) <= 1e-13);
    } else {
      // sliding: the slip direction is re-aligned between solves (a fixed-point iteration, linear rate):
      // the residual drops by more than 10x in the 3 solves; the solvers keep iterating ADMM after it
      CHECK(res <= 0.1 * res0);
    }
    for (int i = 0; i < 4; i++)
      CHECK(hypot(b.lambda[3 * i + 1], b.lambda[3 * i + 2]) <= b.mu[i] * b.lambda[3 * i] * (1 + 1e-12));
    // the same box for the cone model's conditions (w_n = 0 when sliding): exact as well
    memcpy(b.lambda, a.z, sizeof(double) * 12);
    res = phys_contact_residual(NULL, b.G, b.g, b.lambda, b.mu, 4, 0, 0);
    phys_admm_polish(b.lambda, &res, d, b.G, b.g, b.mu, 4, 0, 0, 0);
    if (k == 0) CHECK(res <= 1e-14 && pb_violation(&b, 0) <= 1e-13);
    phys_stack_free(d, mark);
  }
  // nothing to polish: all contacts separating (lambda = 0, w_n > 0) returns 0 and leaves lambda
  double v0[3] = {0, 0, 1};
  pb_box(&b, 1, 0.1, 0.5, v0, 0.01, 0);
  memset(b.lambda, 0, sizeof(b.lambda));
  double res = phys_contact_residual(NULL, b.G, b.g, b.lambda, b.mu, 4, 0, 1);
  CHECK(res == 0);
  CHECK(phys_admm_polish(b.lambda, &res, d, b.G, b.g, b.mu, 4, 0, 1, 0) == 0);
  for (int i = 0; i < 12; i++) CHECK(b.lambda[i] == 0);
}

// warm start: from the exact solution ADMM stops after one iteration with the same answer; the warm check
// accepts an exact guess as is and polishes a perturbed one back to the solution
static void test_warm(physData* d) {
  static pbProblem b;
  double v0[3] = {0.02, -0.01, 0}, sol[12];   // sticking (mu g dt > |v0|)
  pb_box(&b, 1, 0.1, 0.7, v0, 0.01, 0.1);
  physAdmmSet set = {0, NULL, 4, b.mu, 0};
  size_t mark = phys_stack_mark(d);
  physAdmm a;
  CHECK(phys_admm_init(&a, d, b.G, 12));
  CHECK(phys_admm_solve(&a, b.g, &set, 2000, 1e-12));
  memcpy(sol, a.z, sizeof(sol));
  int cold = a.iterations;
  physAdmm w;
  CHECK(phys_admm_init(&w, d, b.G, 12));
  phys_admm_warm(&w, sol, b.g, &set);
  CHECK(phys_admm_solve(&w, b.g, &set, 2000, 1e-12));
  printf("warm start: %d iterations (cold %d)\n", w.iterations, cold);
  CHECK(w.iterations == 1);
  for (int i = 0; i < 12; i++) CHECK_NEAR(w.z[i], sol[i], 1e-12);
  double guess[12], res;
  memcpy(guess, sol, sizeof(guess));
  CHECK(phys_admm_warm_check(b.lambda, &res, d, b.G, b.g, guess, b.mu, 4, 0, 1, 1e-10) == 1);
  for (int i = 0; i < 12; i++) guess[i] *= 1.01;   // 1% off: the structure holds, polishing restores it
  CHECK(phys_admm_warm_check(b.lambda, &res, d, b.G, b.g, guess, b.mu, 4, 0, 1, 1e-10) == 1);
  CHECK(res <= 1e-14);
  CHECK(pb_violation(&b, 1) <= 1e-12);
  phys_stack_free(d, mark);
}

// semismooth Newton (phys_contact_newton) from zero impulses: one contact G = diag(2, 3, 3), mu 0.5, sliding
// (|g_t| = 5): Coulomb (Alart-Curnier) lambda_n = -g_n / 2 = 1.5, lambda_t = -mu lambda_n g_t/|g_t|; the
// relaxation lambda_n = (mu |g_t| - g_n) / (2 + 3 mu^2); sticking (|g_t| = 0.4): lambda_t = -g_t / 3. Then a
// box on 4 corners (singular G) sticking and sliding, checked independently (pb_violation). Each converges
// to rounding within a few iterations (quadratic convergence once the structure is found)
static void test_newton(physData* d) {
  static pbProblem b;
  for (int k = 0; k < 12; k++) {
    int ccp = k % 2;
    double th = 0.9 * k, gt = k < 8 ? 5 : 0.4, mu = 0.5, res = INFINITY;
    pb_init(&b, 1, 0, 3);
    memset(b.G, 0, sizeof(b.G));
    memset(b.lambda, 0, sizeof(b.lambda));
    b.G[0] = 2, b.G[4] = 3, b.G[8] = 3;
    b.g[0] = -3, b.g[1] = gt * cos(th), b.g[2] = gt * sin(th);
    b.mu[0] = mu;
    int it;
    CHECK(phys_contact_newton(b.lambda, &res, d, b.G, b.g, b.mu, 1, 0, ccp, 20, 1e-13, &it) == 1);
    CHECK_MSG(res <= 1e-13 && it <= 6, "single contact %d: residual %g after %d iterations", k, res, it);
    double ln = k < 8 ? (ccp ? (mu * gt + 3) / (2 + 3 * mu * mu) : 1.5) : 1.5;
    double lt[2] = {k < 8 ? -mu * ln * cos(th) : -gt * cos(th) / 3, k < 8 ? -mu * ln * sin(th) : -gt * sin(th) / 3};
    CHECK_NEAR(b.lambda[0], ln, 1e-12);
    CHECK_NEAR(b.lambda[1], lt[0], 1e-12);
    CHECK_NEAR(b.lambda[2], lt[1], 1e-12);
  }
  for (int k = 0; k < 4; k++) {
    int ccp = k % 2;
    double s = k < 2 ? 1.0 : 0.02, v0[3] = {0.6 * s, 0.8 * s, 0}, res = INFINITY;
    pb_box(&b, 1, 0.1, 0.5, v0, 0.01, 0.3);
    memset(b.lambda, 0, sizeof(b.lambda));
    int it;
    phys_contact_newton(b.lambda, &res, d, b.G, b.g, b.mu, 4, 0, ccp, 30, 1e-12, &it);
    printf("newton, box %s (%s): %d iterations, residual %.2e\n", k < 2 ? "sliding" : "sticking", ccp ? "ccp" : "cone",
           it, res);
    CHECK_MSG(res <= 1e-12, "box %d: residual %g after %d iterations", k, res, it);
    CHECK(pb_violation(&b, ccp) <= 1e-10);
  }
}

int main(void) {
  physModel* m;
  physData* d;
  pb_setup(&m, &d);
  physRng r;
  phys_rng_seed(&r, 7);
  test_cone_projection(&r);
  test_set_projection();
  test_qp(d, &r);
  test_singular(d);
  test_nonfinite(d);
  test_determinism(d, &r);
  test_polish(d);
  test_warm(d);
  test_newton(d);
  CHECK(d->pstack == 0);  // every mark freed
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}

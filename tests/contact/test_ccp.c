// test_ccp.c - Anitescu's relaxation: single-contact analytic answers (the sliding contact separates with
// w_n = mu |w_t|), isotropy, a box on its 4 corners (singular G) sliding and sticking, the O(dt) gap per
// step, mu = 0 equals the frictionless cone solver, limit rows, cone complementarity on random problems,
// non-finite input, determinism.
#include "admm_problems.h"
#include "test.h"

static const double TOL = 1e-10;

// one contact, G = diag(a, b, b), g = (g_n, g_t): sliding minimizes over the surface lambda_t = -mu lambda_n
// g_t/|g_t|: lambda_n = (mu |g_t| - g_n) / (a + b mu^2); then w_n = mu |w_t| (separation); sticking as cone
static void test_single(const physModel* m, physData* d) {
  static pbProblem b;
  const double a = 2, bb = 3, mu = 0.5, gn = -3;
  for (int k = 0; k < 8; k++) {
    double th = 0.7 * k, gt = k < 4 ? 5 : 0.4;
    pb_init(&b, 1, 0, 3);
    memset(b.G, 0, sizeof(b.G));
    b.G[0] = a, b.G[4] = bb, b.G[8] = bb;
    b.g[0] = gn, b.g[1] = gt * cos(th), b.g[2] = gt * sin(th);
    b.mu[0] = mu;
    CHECK(phys_solve_ccp(m, d, &b.p, &b.sol) == PHYS_OK);
    double w[3];
    pb_rowvel(w, &b);
    if (k < 4) {
      double ln = (mu * gt - gn) / (a + bb * mu * mu);
      CHECK_NEAR(b.lambda[0], ln, 1e-9);
      CHECK_NEAR(b.lambda[1], -mu * ln * cos(th), 1e-9);
      CHECK_NEAR(b.lambda[2], -mu * ln * sin(th), 1e-9);
      CHECK(b.state[1] == PHYS_ROW_UPPER);
      CHECK(w[0] > 0.1);                                  // the contact separates
      CHECK_NEAR(w[0], mu * hypot(w[1], w[2]), 1e-9);     // at mu |w_t|
    } else {
      CHECK_NEAR(b.lambda[0], 1.5, 1e-9);
      CHECK_NEAR(b.lambda[1], -gt * cos(th) / bb, 1e-9);
      CHECK_NEAR(b.lambda[2], -gt * sin(th) / bb, 1e-9);
      CHECK(b.state[1] == PHYS_ROW_CLAMPING);
      CHECK_NEAR(w[0], 0, 1e-9);
    }
  }
}

// cube on 4 corners (mu = 0.5): sliding at any angle: v_t+ = (|v0| - mu g dt) / (1 + mu^2) along v0 and
// v_z+ = mu |v_t+| (momentum with w_n = mu |w_t| at every corner), no rotation; sticking: v+ = 0
static void test_box(const physModel* m, physData* d) {
  static pbProblem b;
  const double mu = 0.5, dt = 0.01, g = 9.81;
  for (int k = 0; k < 12; k++) {
    double th = 0.55 * k, yaw = 0.3 * (k % 5), s = k < 8 ? 1.0 : 0.02;
    double v0[3] = {s * cos(th), s * sin(th), 0}, v[6];
    pb_box(&b, 1, 0.1, mu, v0, dt, yaw);
    physStatus st = phys_solve_ccp(m, d, &b.p, &b.sol);
    CHECK_MSG(st == PHYS_OK, "box %d: status %d, %d iterations, residual %g", k, st, b.sol.iterations,
              b.sol.residual);
    pb_velocity(v, &b);
    double vt = k < 8 ? (s - mu * g * dt) / (1 + mu * mu) : 0;
    CHECK_NEAR(v[0], vt * cos(th), 1e-8);
    CHECK_NEAR(v[1], vt * sin(th), 1e-8);
    CHECK_NEAR(v[2], mu * vt, 1e-8);
    for (int j = 3; j < 6; j++) CHECK_NEAR(v[j], 0, 1e-7);
    CHECK(pb_violation(&b, 1) <= 10 * TOL);
    if (k == 0 || k == 8) printf("box %s: %d ADMM iterations, residual %.2e\n", k ? "sticking" : "sliding",
                                 b.sol.iterations, b.sol.residual);
  }
}

// the gap opened in one step, dt v_z+ = dt mu (|v0| - mu g dt)/(1 + mu^2), is O(dt): halving dt halves it
static void test_gap_scaling(const physModel* m, physData* d) {
  static pbProblem b;
  double gap[3], v0[3] = {2, 0, 0}, v[6];
  for (int k = 0; k < 3; k++) {
    double dt = 0.01 / (1 << k);
    pb_box(&b, 1, 0.1, 0.8, v0, dt, 0);
    CHECK(phys_solve_ccp(m, d, &b.p, &b.sol) == PHYS_OK);
    pb_velocity(v, &b);
    gap[k] = dt * v[2];
    CHECK_NEAR(gap[k], dt * 0.8 * (2 - 0.8 * 9.81 * dt) / 1.64, 1e-10);
  }
  CHECK_REL(gap[0] / gap[1], 2 * (2 - 0.8 * 9.81 * 0.01) / (2 - 0.8 * 9.81 * 0.005), 1e-6, 0);  // ~2
  printf("gap per step at dt = 10, 5, 2.5 ms: %.3e %.3e %.3e m\n", gap[0], gap[1], gap[2]);
}

// mu = 0: no relaxation effect, the same velocities as the frictionless cone solve (random problems,
// iteration cap raised: this compares answers, not speed)
static void test_frictionless(physModel* m, physData* d) {
  static pbProblem b;
  physRng r;
  phys_rng_seed(&r, 5);
  int save = m->opt.solver_iterations;
  m->opt.solver_iterations = 1000;
  for (int t = 0; t < 20; t++) {
    int nc = 1 + t % 5, nl = t % 2, n = 3 * nc + nl;
    pb_random(&b, &r, nc, nl, n + 2, 0.3);
    for (int i = 0; i < nc; i++) b.mu[i] = 0;
    double v1[PB_MAXV], v2[PB_MAXV];
    CHECK(phys_solve_ccp(m, d, &b.p, &b.sol) == PHYS_OK);
    pb_velocity(v1, &b);
    CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_OK);
    pb_velocity(v2, &b);
    for (int k = 0; k < b.p.nv; k++) CHECK_NEAR(v1[k], v2[k], 1e-8);
  }
  m->opt.solver_iterations = save;
}

// limit rows: G diagonal, a pushing limit gets -g/G_ll, a separating one 0
static void test_limits(const physModel* m, physData* d) {
  static pbProblem b;
  pb_init(&b, 1, 2, 5);
  memset(b.G, 0, sizeof(b.G));
  double diag[5] = {1, 1, 1, 4, 2}, g[5] = {-1, 0.2, 0, -2, 0.5};
  for (int i = 0; i < 5; i++) b.G[i * 5 + i] = diag[i], b.g[i] = g[i];
  b.mu[0] = 1;
  CHECK(phys_solve_ccp(m, d, &b.p, &b.sol) == PHYS_OK);
  CHECK_NEAR(b.lambda[3], 0.5, 1e-9);
  CHECK(b.lambda[4] == 0);
  CHECK(b.state[3] == PHYS_ROW_CLAMPING && b.state[4] == PHYS_ROW_SEPARATING);
}

// random problems: lambda in the cones exactly, w = G lambda + g in the dual cones and lambda . w = 0 to
// the tolerance whenever the solver reports convergence
static void test_random(physModel* m, physData* d) {
  static pbProblem b;
  physRng r;
  phys_rng_seed(&r, 11);
  int save = m->opt.solver_iterations, nok = 0, N = 120, itsum = 0;
  m->opt.solver_iterations = 1000;
  double worst = 0;
  for (int t = 0; t < N; t++) {
    int nc = 1 + t % 8, nl = t % 3, n = 3 * nc + nl, nv = n / 2 + (t * 7) % (2 * n);
    if (nv > PB_MAXV) nv = PB_MAXV;
    pb_random(&b, &r, nc, nl, nv, 0.3);
    physStatus st = phys_solve_ccp(m, d, &b.p, &b.sol);
    for (int i = 0; i < n; i++) CHECK(isfinite(b.lambda[i]));
    for (int i = 0; i < nc; i++)  // primal feasibility holds for every iterate (z is a projection)
      CHECK(hypot(b.lambda[3 * i + 1], b.lambda[3 * i + 2]) <= b.mu[i] * b.lambda[3 * i] * (1 + 1e-12) + 1e-300);
    if (st != PHYS_OK) continue;
    nok++;
    itsum += b.sol.iterations;
    double gmax = 1;
    for (int i = 0; i < n; i++) gmax = fmax(gmax, fabs(b.g[i]));
    double viol = pb_violation(&b, 1);
    worst = fmax(worst, viol / gmax);
    CHECK_MSG(viol <= 10 * TOL * gmax, "random %d: violation %g", t, viol);
  }
  printf("random: %d/%d converged, mean %.0f ADMM iterations, worst violation %.2e tol\n", nok, N,
         (double)itsum / nok, worst / TOL);
  CHECK(nok >= 0.9 * N);
  m->opt.solver_iterations = save;
}

// non-finite input: NUMERIC, zero impulses, a warning
static void test_bad(const physModel* m, physData* d) {
  static pbProblem b;
  double v0[3] = {1, 0, 0};
  pb_box(&b, 1, 0.1, 0.5, v0, 0.01, 0);
  b.G[13] = INFINITY;
  int nw = d->nwarning;
  CHECK(phys_solve_ccp(m, d, &b.p, &b.sol) == PHYS_ERR_NUMERIC);
  CHECK(d->nwarning == nw + 1);
  for (int i = 0; i < 12; i++) CHECK(b.lambda[i] == 0);
}

static const char* const DUMPED[2] = {"tests/data/contact/solver/humanoid_ccp_007.txt", "tests/data/contact/solver/humanoid_ccp_022.txt"};

int main(void) {
  physModel* m;
  physData* d;
  pb_setup(&m, &d);
  m->opt.solver_tolerance = TOL;
  test_single(m, d);
  test_box(m, d);
  test_gap_scaling(m, d);
  test_frictionless(m, d);
  test_limits(m, d);
  test_random(m, d);
  test_bad(m, d);
  pb_test_determinism(m, d, phys_solve_ccp);
  pb_test_warm_start(m, d, phys_solve_ccp, 1);
  pb_test_dumped(m, d, phys_solve_ccp, 1, DUMPED, TOL);
  CHECK(d->pstack == 0);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}

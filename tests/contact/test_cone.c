// test_cone.c - staggered projections with the exact Coulomb cone: single-contact analytic answers
// (sliding, sticking, separating), isotropy, a box sliding / sticking on its 4 coplanar corners (singular
// G), mu = 0, limit rows, the Coulomb conditions on random problems, non-finite input, determinism.
#include "admm_problems.h"
#include "test.h"

static const double TOL = 1e-10;

// one contact with G = diag(a, b, b): lambda_n = -g_n/a; sticking lambda_t = -g_t/b if |g_t|/b <= mu
// lambda_n, else sliding lambda_t = -mu lambda_n g_t/|g_t|; rotating g_t rotates lambda_t (isotropy)
static void test_single(const physModel* m, physData* d) {
  static pbProblem b;
  const double a = 2, bb = 3, mu = 0.5;
  for (int k = 0; k < 8; k++) {
    double th = 0.7 * k, gt = k < 4 ? 5 : 0.4;  // 5/3 > 0.5 * 1.5: sliding; 0.4/3 < 0.75: sticking
    pb_init(&b, 1, 0, 3);
    memset(b.G, 0, sizeof(b.G));
    b.G[0] = a, b.G[4] = bb, b.G[8] = bb;
    b.g[0] = -3, b.g[1] = gt * cos(th), b.g[2] = gt * sin(th);
    b.mu[0] = mu;
    CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_OK);
    double ln = 1.5;
    CHECK_NEAR(b.lambda[0], ln, 1e-9);
    if (k < 4) {  // sliding: |lambda_t| = mu lambda_n along -g_t
      CHECK_NEAR(b.lambda[1], -mu * ln * cos(th), 1e-9);
      CHECK_NEAR(b.lambda[2], -mu * ln * sin(th), 1e-9);
      CHECK(b.state[0] == PHYS_ROW_CLAMPING && b.state[1] == PHYS_ROW_UPPER && b.state[2] == PHYS_ROW_UPPER);
    } else {      // sticking: w_t = 0
      CHECK_NEAR(b.lambda[1], -gt * cos(th) / bb, 1e-9);
      CHECK_NEAR(b.lambda[2], -gt * sin(th) / bb, 1e-9);
      CHECK(b.state[1] == PHYS_ROW_CLAMPING && b.state[2] == PHYS_ROW_CLAMPING);
    }
    CHECK(b.sol.residual <= 4 * TOL * 5);
  }
  // separating: g_n > 0 -> lambda = 0, all rows SEPARATING
  b.g[0] = 0.2, b.g[1] = 1, b.g[2] = -1;
  CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_OK);
  for (int i = 0; i < 3; i++) CHECK(b.lambda[i] == 0 && b.state[i] == PHYS_ROW_SEPARATING);
}

// cube (1 kg, half size 0.1) on 4 corners, mu = 0.5, dt = 0.01: sliding at any angle in the plane, with
// any tangent frame, v+ = v0 - mu g dt v0/|v0| and no rotation (the normals rebalance the friction torque);
// sticking (|v0| < mu g dt): v+ = 0. G (12 x 12) has rank 6.
static void test_box(const physModel* m, physData* d) {
  static pbProblem b;
  const double mu = 0.5, dt = 0.01, g = 9.81;
  double speed0 = -1;
  for (int k = 0; k < 12; k++) {
    double th = 0.55 * k, yaw = 0.3 * (k % 5), s = k < 8 ? 1.0 : 0.02;
    double v0[3] = {s * cos(th), s * sin(th), 0}, v[6];
    pb_box(&b, 1, 0.1, mu, v0, dt, yaw);
    physStatus st = phys_solve_cone(m, d, &b.p, &b.sol);
    CHECK_MSG(st == PHYS_OK, "box %d: status %d, %d iterations, residual %g", k, st, b.sol.iterations,
              b.sol.residual);
    pb_velocity(v, &b);
    double expect = k < 8 ? s - mu * g * dt : 0;
    CHECK_NEAR(v[0], expect * cos(th), 1e-8);
    CHECK_NEAR(v[1], expect * sin(th), 1e-8);
    CHECK_NEAR(v[2], 0, 1e-8);
    for (int j = 3; j < 6; j++) CHECK_NEAR(v[j], 0, 1e-7);
    double sum = 0;
    for (int i = 0; i < 4; i++) {
      sum += b.lambda[3 * i];
      CHECK(b.state[3 * i] == PHYS_ROW_CLAMPING);
      if (k < 8) CHECK(b.state[3 * i + 1] == PHYS_ROW_UPPER);
    }
    CHECK_NEAR(sum, g * dt, 1e-8);  // total normal impulse m g dt
    CHECK(pb_violation(&b, 0) <= 10 * TOL);
    if (k < 8) {
      double speed = hypot(v[0], v[1]);
      if (speed0 < 0) speed0 = speed;
      CHECK_NEAR(speed, speed0, 1e-9);  // isotropic: same speed in every direction
    }
    if (k == 0 || k == 8) printf("box %s: %d ADMM iterations, residual %.2e\n", k ? "sticking" : "sliding",
                                 b.sol.iterations, b.sol.residual);
  }
}

// mu = 0: no friction, the box keeps its horizontal velocity, the normals stop the fall
static void test_frictionless(const physModel* m, physData* d) {
  static pbProblem b;
  double v0[3] = {0.7, -0.2, 0}, v[6];
  pb_box(&b, 2, 0.1, 0, v0, 0.01, 0.2);
  CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_OK);
  pb_velocity(v, &b);
  CHECK_NEAR(v[0], 0.7, 1e-9);
  CHECK_NEAR(v[1], -0.2, 1e-9);
  CHECK_NEAR(v[2], 0, 1e-9);
  for (int i = 0; i < 4; i++) CHECK(b.lambda[3 * i + 1] == 0 && b.lambda[3 * i + 2] == 0);
}

// limit rows join the normal QP: 1 contact + 2 limits, G diagonal: a limit with g < 0 gets -g/G_ll
// (CLAMPING), one with g > 0 stays 0 (SEPARATING)
static void test_limits(const physModel* m, physData* d) {
  static pbProblem b;
  pb_init(&b, 1, 2, 5);
  memset(b.G, 0, sizeof(b.G));
  double diag[5] = {1, 1, 1, 4, 2}, g[5] = {-1, 0.2, 0, -2, 0.5};
  for (int i = 0; i < 5; i++) b.G[i * 5 + i] = diag[i], b.g[i] = g[i];
  b.mu[0] = 1;
  CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_OK);
  CHECK_NEAR(b.lambda[3], 0.5, 1e-9);
  CHECK(b.lambda[4] == 0);
  CHECK(b.state[3] == PHYS_ROW_CLAMPING && b.state[4] == PHYS_ROW_SEPARATING);
  CHECK_NEAR(b.lambda[1], -0.2, 1e-9);  // sticking inside |lambda_t| <= 1
}

// random problems (n up to 27, singular when n > nv): the Coulomb conditions (each sub-problem's KKT at
// the fixed point) hold to the tolerance whenever the solver reports convergence; most converge
static void test_random(physModel* m, physData* d) {
  static pbProblem b;
  physRng r;
  phys_rng_seed(&r, 11);
  int save = m->opt.solver_iterations, nok = 0, N = 120, itsum = 0;
  m->opt.solver_iterations = 200;
  double worst = 0;
  for (int t = 0; t < N; t++) {
    int nc = 1 + t % 8, nl = t % 3, n = 3 * nc + nl, nv = n / 2 + (t * 7) % (2 * n);
    if (nv > PB_MAXV) nv = PB_MAXV;
    pb_random(&b, &r, nc, nl, nv, 0.3);
    physStatus st = phys_solve_cone(m, d, &b.p, &b.sol);
    for (int i = 0; i < n; i++) CHECK(isfinite(b.lambda[i]));
    if (st != PHYS_OK) continue;
    nok++;
    itsum += b.sol.iterations;
    double gmax = 1;
    for (int i = 0; i < n; i++) gmax = fmax(gmax, fabs(b.g[i]));
    double viol = pb_violation(&b, 0);
    worst = fmax(worst, viol / gmax);
    CHECK_MSG(viol <= 10 * TOL * gmax, "random %d: violation %g", t, viol);
  }
  printf("random: %d/%d converged, mean %.0f ADMM iterations, worst violation %.2e tol\n", nok, N,
         (double)itsum / nok, worst / TOL);
  CHECK(nok >= 0.9 * N);
  m->opt.solver_iterations = save;
}

// non-finite input: NUMERIC, zero impulses, a warning; empty problem: OK
static void test_bad(const physModel* m, physData* d) {
  static pbProblem b;
  double v0[3] = {1, 0, 0};
  pb_box(&b, 1, 0.1, 0.5, v0, 0.01, 0);
  b.g[4] = NAN;
  int nw = d->nwarning;
  CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_ERR_NUMERIC);
  CHECK(d->nwarning == nw + 1);
  for (int i = 0; i < 12; i++) CHECK(b.lambda[i] == 0);
  pb_init(&b, 0, 0, 1);
  CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_OK && b.sol.iterations == 0);
}

static const char* const DUMPED[2] = {"tests/data/contact/solver/humanoid_cone_031.txt", "tests/data/contact/solver/humanoid_cone_005.txt"};

int main(void) {
  physModel* m;
  physData* d;
  pb_setup(&m, &d);
  m->opt.solver_tolerance = TOL;
  test_single(m, d);
  test_box(m, d);
  test_frictionless(m, d);
  test_limits(m, d);
  test_random(m, d);
  test_bad(m, d);
  pb_test_determinism(m, d, phys_solve_cone);
  pb_test_warm_start(m, d, phys_solve_cone, 0);
  pb_test_dumped(m, d, phys_solve_cone, 0, DUMPED, TOL);
  CHECK(d->pstack == 0);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}

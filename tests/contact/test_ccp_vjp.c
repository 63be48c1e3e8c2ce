// test_ccp_vjp.c - derivatives of the ccp and cone solutions (ccp_vjp.c): forward mode against central differences
// of the solver (tight tolerance) in g, G (symmetric perturbations) and mu on random problems away from
// structure switches (states checked unchanged at both perturbed points), with sticking, sliding,
// separating contacts and limit rows all present; a single sliding contact against its closed form; the box
// on 4 corners (singular G) sliding and sticking, through the velocities; reverse mode against forward mode
// by the dot-product test. The cone solver likewise (phys_solve_cone, its derivatives from Alart and
// Curnier's map), with its own single-contact closed forms. Both at mu = 0 with g_t = 0: no tangential derivative.
#include "admm_problems.h"
#include "test.h"

#define NMAX PB_MAXN

// the solver under test and its derivatives (ccp or cone)
typedef physStatus (*solveFn)(const physModel*, physData*, const physConstraintProblem*, physConstraintSolution*);
typedef physStatus (*vjpFn)(const physModel*, physData*, const physConstraintProblem*,
                            const physConstraintSolution*, const double*, double*, double*, double*);
typedef physStatus (*jvpFn)(const physModel*, physData*, const physConstraintProblem*,
                            const physConstraintSolution*, const double*, const double*, const double*, double*);
static solveFn solve;
static vjpFn vjp;
static jvpFn jvp;
static int ccp;        // 1: ccp (the relaxed cone), 0: cone

static int nstick, nslide, nsep, nlimit;
static double dot_worst;   // worst relative error of the dot-product tests

// copy of a problem whose g, G, mu can be perturbed: b = a + h (dg, dG, dmu), then solved
static void solve_at(const physModel* m, physData* d, pbProblem* b, const pbProblem* a, double h,
                     const double* dg, const double* dG, const double* dmu) {
  memcpy(b, a, sizeof(*b));
  pb_init(b, a->p.nc, a->p.nl, a->p.nv);
  int n = a->p.n;
  for (int i = 0; i < n; i++) {
    if (dg) b->g[i] += h * dg[i];
    if (dG)
      for (int j = 0; j < n; j++) b->G[i * n + j] += h * dG[i * n + j];
  }
  if (dmu)
    for (int i = 0; i < a->p.nc; i++) b->mu[i] += h * dmu[i];
  physStatus st = solve(m, d, &b->p, &b->sol);
  CHECK_MSG(st == PHYS_OK, "solve: status %d residual %g", st, b->sol.residual);
}

// distance of the solution from a structure switch (scaled): sticking: mu lambda_n - |lambda_t|;
// sliding: min(lambda_n, |w_t|) ; separating: w_n - mu |w_t| (ccp) or w_n (cone); limit rows: max(lambda, w). Counts the kinds.
static double margin(const pbProblem* b, int count) {
  double w[NMAX], mg = INFINITY;
  pb_rowvel(w, b);
  for (int c = 0; c < b->p.nc; c++) {
    const double *l = b->lambda + 3 * c, *wc = w + 3 * c;
    double mu = b->mu[c], lt = hypot(l[1], l[2]), wt = hypot(wc[1], wc[2]);
    if (l[0] <= 0) {
      mg = fmin(mg, wc[0] - ccp * mu * wt);
      nsep += count;
    } else if (b->state[3 * c + 1] == PHYS_ROW_CLAMPING) {
      mg = fmin(mg, mu * l[0] - lt);
      nstick += count;
    } else {
      mg = fmin(mg, fmin(l[0], wt));
      nslide += count;
    }
  }
  for (int i = 3 * b->p.nc; i < b->p.n; i++) {
    mg = fmin(mg, fmax(b->lambda[i], w[i]));
    nlimit += count && b->lambda[i] > 0;
  }
  return mg;
}

// dot product of n numbers
static double dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

// forward mode vs central differences (h = 1e-5) in each of g, G (symmetric) and mu, and reverse mode vs
// forward mode (dot-product test, all three at once); returns the worst FD error relative to max(1, |dl|)
static double check_problem(const physModel* m, physData* d, const pbProblem* a, physRng* r) {
  static pbProblem bp, bm;
  int n = a->p.n, nc = a->p.nc;
  double dg[NMAX], dG[NMAX * NMAX], dmu[NMAX], dl[NMAX], worst = 0;
  for (int i = 0; i < n; i++) dg[i] = phys_rng_range(r, -1, 1);
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) dG[i * n + j] = dG[j * n + i] = phys_rng_range(r, -0.2, 0.2);
  for (int i = 0; i < nc; i++) dmu[i] = a->mu[i] > 0 ? phys_rng_range(r, -1, 1) : 0;
  const double h = 1e-5;
  for (int k = 0; k < 3; k++) {
    const double* pg = k == 0 ? dg : NULL;
    const double* pG = k == 1 ? dG : NULL;
    const double* pm = k == 2 ? dmu : NULL;
    CHECK(jvp(m, d, &a->p, &a->sol, pg, pG, pm, dl) == PHYS_OK);
    solve_at(m, d, &bp, a, h, pg, pG, pm);
    solve_at(m, d, &bm, a, -h, pg, pG, pm);
    for (int i = 0; i < n; i++) {
      CHECK_MSG(bp.state[i] == a->state[i] && bm.state[i] == a->state[i], "row %d changed state", i);
      double fd = (bp.lambda[i] - bm.lambda[i]) / (2 * h);
      double e = fabs(fd - dl[i]) / fmax(1, fabs(dl[i]));
      worst = fmax(worst, e);
      CHECK_MSG(e <= 1e-6, "k %d row %d: fd %.12g jvp %.12g", k, i, fd, dl[i]);
    }
  }
  // dot-product test: <lambda_bar, J(dg, dG, dmu)> = <g_bar, dg> + <G_bar, dG> + <mu_bar, dmu>
  double lb[NMAX], gb[NMAX], Gb[NMAX * NMAX], mb[NMAX];
  for (int i = 0; i < n; i++) lb[i] = phys_rng_range(r, -1, 1);
  CHECK(jvp(m, d, &a->p, &a->sol, dg, dG, dmu, dl) == PHYS_OK);
  CHECK(vjp(m, d, &a->p, &a->sol, lb, gb, Gb, mb) == PHYS_OK);
  double lhs = dot(lb, dl, n), rhs = dot(gb, dg, n) + dot(Gb, dG, n * n) + dot(mb, dmu, nc);
  double scale = sqrt(dot(lb, lb, n) * dot(dl, dl, n));
  CHECK_MSG(fabs(lhs - rhs) <= 1e-12 * scale, "dot test %.17g vs %.17g (scale %g)", lhs, rhs, scale);
  dot_worst = fmax(dot_worst, fabs(lhs - rhs) / scale);
  // and with a non-symmetric dG (entries independent: G_bar = g_bar lambda', not its transpose)
  for (int i = 0; i < n * n; i++) dG[i] = phys_rng_range(r, -0.2, 0.2);
  CHECK(jvp(m, d, &a->p, &a->sol, NULL, dG, NULL, dl) == PHYS_OK);
  lhs = dot(lb, dl, n), rhs = dot(Gb, dG, n * n), scale = sqrt(dot(lb, lb, n) * dot(dl, dl, n));
  CHECK_MSG(fabs(lhs - rhs) <= 1e-12 * scale, "dot test dG %.17g vs %.17g (scale %g)", lhs, rhs, scale);
  dot_worst = fmax(dot_worst, fabs(lhs - rhs) / scale);
  return worst;
}

// random nonsingular problems (n <= nv) away from switches: contacts of every kind and limit rows
static void test_random(const physModel* m, physData* d) {
  static pbProblem a;
  physRng r;
  phys_rng_seed(&r, 11);
  int used = 0;
  double worst = 0;
  nstick = nslide = nsep = nlimit = 0;
  dot_worst = 0;
  for (int t = 0; t < 200 && used < 40; t++) {
    int nc = 1 + t % 4, nl = t % 3, n = 3 * nc + nl;
    pb_random(&a, &r, nc, nl, n + (t % 2), 0.5);
    for (int i = 0; i < n; i++) a.g[i] *= 2;  // more sliding
    if (solve(m, d, &a.p, &a.sol) != PHYS_OK) continue;
    if (margin(&a, 0) < 1e-3) continue;       // too close to a switch for h = 1e-5 differences
    margin(&a, 1);
    used++;
    worst = fmax(worst, check_problem(m, d, &a, &r));
  }
  CHECK(used == 40);
  CHECK(nstick > 0 && nslide > 0 && nsep > 0 && nlimit > 0);
  printf("%s random: %d problems (%d sticking, %d sliding, %d separating contacts, %d active limits), worst FD "
         "error %.2e, worst dot-product test %.1e\n", ccp ? "ccp" : "cone", used, nstick, nslide, nsep, nlimit, worst, dot_worst);
}

// one sliding contact, G = diag(a, b, b): lambda_n = (mu |g_t| - g_n) / (a + b mu^2), lambda_t = -mu
// lambda_n u: d lambda_n / d g_n = -1 / (a + b mu^2), d lambda_n / d mu = (|g_t| - 2 b mu lambda_n) / (a + b mu^2)
static void test_single(const physModel* m, physData* d) {
  static pbProblem b;
  const double a = 2, bb = 3, mu = 0.5, gn = -3, gt = 5, th = 0.7;
  pb_init(&b, 1, 0, 3);
  memset(b.G, 0, sizeof(b.G));
  b.G[0] = a, b.G[4] = bb, b.G[8] = bb;
  b.g[0] = gn, b.g[1] = gt * cos(th), b.g[2] = gt * sin(th);
  b.mu[0] = mu;
  solve = phys_solve_ccp, vjp = phys_solve_ccp_vjp, jvp = phys_solve_ccp_jvp, ccp = 1;
  CHECK(solve(m, d, &b.p, &b.sol) == PHYS_OK);
  double ln = (mu * gt - gn) / (a + bb * mu * mu), lb[3] = {1, 0, 0}, gb[3], mb[1];
  CHECK(vjp(m, d, &b.p, &b.sol, lb, gb, NULL, mb) == PHYS_OK);
  CHECK_NEAR(gb[0], -1 / (a + bb * mu * mu), 1e-12);
  CHECK_NEAR(mb[0], (gt - 2 * bb * mu * ln) / (a + bb * mu * mu), 1e-12);
  CHECK_NEAR(gb[1], mu * cos(th) / (a + bb * mu * mu), 1e-12);   // d lambda_n / d g_t = mu u / (a + b mu^2)
  CHECK_NEAR(gb[2], mu * sin(th) / (a + bb * mu * mu), 1e-12);
}

// cone: one sliding contact, G = diag(a, b, b): w_n = 0 gives lambda_n = -g_n / a, lambda_t = -mu lambda_n u:
// d lambda_n / d g_n = -1/a, d lambda_t / d mu = -lambda_n u; sticking: lambda_t = -g_t / b
static void test_cone_single(const physModel* m, physData* d) {
  static pbProblem b;
  const double a = 2, bb = 3, mu = 0.5, gn = -3, th = 0.7;
  for (int k = 0; k < 2; k++) {
    double gt = k ? 0.4 : 5;
    pb_init(&b, 1, 0, 3);
    memset(b.G, 0, sizeof(b.G));
    b.G[0] = a, b.G[4] = bb, b.G[8] = bb;
    b.g[0] = gn, b.g[1] = gt * cos(th), b.g[2] = gt * sin(th);
    b.mu[0] = mu;
    CHECK(phys_solve_cone(m, d, &b.p, &b.sol) == PHYS_OK);
    double ln = -gn / a, gb[3], mb[1];
    double lb[3] = {0, cos(th), sin(th)};   // loss: lambda_t . u
    CHECK(phys_solve_cone_vjp(m, d, &b.p, &b.sol, lb, gb, NULL, mb) == PHYS_OK);
    if (k == 0) {   // sliding: lambda_t . u = -mu lambda_n = mu g_n / a
      CHECK_NEAR(gb[0], mu / a, 1e-12);
      CHECK_NEAR(gb[1], 0, 1e-12);
      CHECK_NEAR(gb[2], 0, 1e-12);
      CHECK_NEAR(mb[0], -ln, 1e-12);
    } else {        // sticking: lambda_t . u = -g_t . u / b
      CHECK_NEAR(gb[0], 0, 1e-12);
      CHECK_NEAR(gb[1], -cos(th) / bb, 1e-12);
      CHECK_NEAR(gb[2], -sin(th) / bb, 1e-12);
      CHECK_NEAR(mb[0], 0, 1e-12);
    }
  }
}

// a frictionless contact (mu = 0) pressing with zero tangential velocity (g_t = 0 exactly: a head-on impact),
// G = diag(a, b, b): lambda = (-g_n / a, 0, 0) whatever g_t, so d lambda_n / d g_n = -1/a and every other
// derivative (in g_t, and the right derivative in mu: any mu > 0 keeps lambda_t = 0) is 0. Both natural maps
// once took v_t = 0 on a cone (ccp) or disk (cone) of radius 0 as sticking: d lambda_t / d g_t = -1/b
// (issue 10 item 13)
static void test_frictionless(const physModel* m, physData* d) {
  static pbProblem b;
  const double a = 2, bb = 3, gn = -3;
  for (int k = 0; k < 2; k++) {
    pb_init(&b, 1, 0, 3);
    memset(b.G, 0, sizeof(b.G));
    b.G[0] = a, b.G[4] = bb, b.G[8] = bb;
    b.g[0] = gn, b.g[1] = b.g[2] = 0;
    b.mu[0] = 0;
    CHECK((k ? phys_solve_ccp : phys_solve_cone)(m, d, &b.p, &b.sol) == PHYS_OK);
    CHECK_NEAR(b.sol.lambda[0], -gn / a, 1e-12);
    CHECK(b.sol.lambda[1] == 0 && b.sol.lambda[2] == 0);
    for (int r = 0; r < 3; r++) {
      double lb[3] = {r == 0, r == 1, r == 2}, gb[3], mb[1], dl[3], dg[3] = {0, r == 1, r == 2};
      CHECK((k ? phys_solve_ccp_vjp : phys_solve_cone_vjp)(m, d, &b.p, &b.sol, lb, gb, NULL, mb) == PHYS_OK);
      CHECK_MSG(fabs(gb[0] - (r == 0 ? -1 / a : 0)) < 1e-12 && fabs(gb[1]) < 1e-12 && fabs(gb[2]) < 1e-12,
                "%s mu = 0: d lambda_%d / dg = (%g, %g, %g)", k ? "ccp" : "cone", r, gb[0], gb[1], gb[2]);
      CHECK_NEAR(mb[0], 0, 1e-12);
      CHECK((k ? phys_solve_ccp_jvp : phys_solve_cone_jvp)(m, d, &b.p, &b.sol, dg, NULL, NULL, dl) == PHYS_OK);
      CHECK_MSG(fabs(dl[0]) < 1e-12 && fabs(dl[1]) < 1e-12 && fabs(dl[2]) < 1e-12,
                "%s mu = 0: d lambda / d g_t%d = (%g, %g, %g)", k ? "ccp" : "cone", r, dl[0], dl[1], dl[2]);
    }
  }
}

// box on its 4 corners (G 12 x 12 of rank 6, lambda not unique): derivatives of the velocity
// v+ = vf + M^-1 J' lambda with respect to vf (g = J vf; sticking: all 6 dofs, sliding: linear ones) and
// mu (one value for all corners), sliding and sticking, against central
// differences; reverse mode by the dot-product test: c'dv = c'(dvf + M^-1 J' dl), vf_bar = c + J' g_bar
static void test_box(const physModel* m, physData* d) {
  static pbProblem a, bp, bm;
  physRng r;
  phys_rng_seed(&r, 3);
  for (int k = 0; k < 2; k++) {
    double v0[3] = {k ? 0.02 : 1.0, k ? 0.01 : 0.4, 0}, dvf[6], dg[12], dmu[4], dl[12], vp[6], vm[6];
    pb_box(&a, 1, 0.1, 0.5, v0, 0.01, 0.3);
    CHECK(solve(m, d, &a.p, &a.sol) == PHYS_OK);
    CHECK(a.state[1] == (k ? PHYS_ROW_CLAMPING : PHYS_ROW_UPPER));
    // sliding: linear perturbations only (all corners keep one slip direction; see ccp_vjp.c on rotations)
    for (int j = 0; j < 6; j++) dvf[j] = (k || j < 3) ? phys_rng_range(&r, -1, 1) * (k ? 0.01 : 1) : 0;
    for (int i = 0; i < 12; i++) dg[i] = dot(a.J + i * 6, dvf, 6);
    for (int i = 0; i < 4; i++) dmu[i] = 1;   // one mu for the 4 corners: per-corner mu splits are ill-posed
    const double h = 1e-5;
    double worst = 0;
    for (int q = 0; q < 2; q++) {
      const double* pg = q == 0 ? dg : NULL;
      const double* pm = q == 1 ? dmu : NULL;
      CHECK(jvp(m, d, &a.p, &a.sol, pg, NULL, pm, dl) == PHYS_OK);
      double dv[6];
      for (int j = 0; j < 6; j++) {
        double s = 0;
        for (int i = 0; i < 12; i++) s += a.J[i * 6 + j] * dl[i];
        dv[j] = (q == 0 ? dvf[j] : 0) + a.Minv[j] * s;
      }
      solve_at(m, d, &bp, &a, h, pg, NULL, pm);
      solve_at(m, d, &bm, &a, -h, pg, NULL, pm);
      for (int i = 0; i < 12; i++) CHECK(bp.state[i] == a.state[i] && bm.state[i] == a.state[i]);
      memcpy(bp.vf, a.vf, sizeof(a.vf));
      memcpy(bm.vf, a.vf, sizeof(a.vf));
      for (int j = 0; j < 6 && q == 0; j++) bp.vf[j] += h * dvf[j], bm.vf[j] -= h * dvf[j];
      pb_velocity(vp, &bp);
      pb_velocity(vm, &bm);
      for (int j = 0; j < 6; j++) {
        double fd = (vp[j] - vm[j]) / (2 * h);
        worst = fmax(worst, fabs(fd - dv[j]));
        CHECK_MSG(fabs(fd - dv[j]) <= 1e-6 * fmax(1, fabs(dv[j])), "box %d q %d dof %d: fd %.12g jvp %.12g", k, q,
                  j, fd, dv[j]);
      }
      // reverse: loss c'v+, lambda_bar = J M^-1 c; vf_bar = c + J' g_bar, and mu_bar
      double c[6], lb[12], gb[12], mb[4];
      for (int j = 0; j < 6; j++) c[j] = phys_rng_range(&r, -1, 1);
      for (int i = 0; i < 12; i++) {
        lb[i] = 0;
        for (int j = 0; j < 6; j++) lb[i] += a.J[i * 6 + j] * a.Minv[j] * c[j];
      }
      CHECK(vjp(m, d, &a.p, &a.sol, lb, gb, NULL, mb) == PHYS_OK);
      double lhs = dot(c, dv, 6), rhs = q == 0 ? dot(c, dvf, 6) + dot(gb, dg, 12) : dot(mb, dmu, 4);
      CHECK_MSG(fabs(lhs - rhs) <= 1e-12 * fmax(1, fabs(lhs)), "box %d q %d dot test %.17g vs %.17g", k, q, lhs,
                rhs);
    }
    printf("%s box %s: worst FD error of dv+ %.2e\n", ccp ? "ccp" : "cone", k ? "sticking" : "sliding", worst);
  }
}

int main(void) {
  physModel* m;
  physData* d;
  pb_setup(&m, &d);
  m->opt.solver_tolerance = 1e-13;   // tight (1e-14 is below the residual's rounding floor on some problems)
  m->opt.solver_iterations = 5000;
  test_single(m, d);
  test_cone_single(m, d);
  test_frictionless(m, d);
  for (ccp = 1; ccp >= 0; ccp--) {
    solve = ccp ? phys_solve_ccp : phys_solve_cone;
    vjp = ccp ? phys_solve_ccp_vjp : phys_solve_cone_vjp;
    jvp = ccp ? phys_solve_ccp_jvp : phys_solve_cone_jvp;
    test_random(m, d);
    test_box(m, d);
  }
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}

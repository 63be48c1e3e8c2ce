// test_lcp_vjp.c - derivatives of the `lcp` solver (src/contact/lcp_vjp.c): the forward mode against
// central finite differences of phys_solve_lcp in g, G and mu (one-sided second-order differences in mu at
// mu = 0), only where the row states are the same at both perturbed points (checked); the reverse mode
// against the forward mode by the dot-product identity <lambda_bar, J v> = <J' lambda_bar, v> to 1e-12.
// Problems: random G = J W J' with limit rows, full rank and rank deficient; mu = 0 contacts; a box's four
// coplanar corners (singular clamping system, minimal-norm solution) resting and sliding, with G perturbed
// through the inverse mass W (rank kept) and g through the free velocity (consistency kept). The
// pseudo-inverse phys_lcp_pinv against the four Penrose conditions on singular symmetric (pivoted Cholesky),
// regular nonsymmetric and symmetric indefinite (SVD) matrices. The forward mode through products
// (phys_solve_lcp_jvp_prod: dG z_k and dG's diagonal only) against the whole dG's at every direction, and the
// reverse mode's factored G_bar (phys_solve_lcp_vjp_factored) against the whole G_bar; both reverse modes on a
// local structure built once (phys_solve_lcp_vjp_local, phys_solve_lcp_vjp_factored_local: one build counted in
// d->nlcp_local, none by them) bit for bit the one-shot ones. The cube faces resting on the floor that Lemke
// used to fail on (lcp_resting_faces.h, G of rank 6), perturbed in g within G's range.
#include <math.h>
#include <string.h>

#include "contact.h"
#include "lcp_resting_faces.h"
#include "rng.h"
#include "test.h"

#define MAXN 40
#define MAXV 24
#define FD_TOL 1e-6     // central differences vs forward mode, relative to max |dlambda|, |lambda|*1e-3
#define DOT_TOL 1e-12   // dot-product identity, relative
#define PINV_TOL 1e-12  // Penrose conditions, relative

static double g_stack[1 << 20];

// a physData with only the scratch arena (all the solver uses)
static physData make_data(void) {
  physData d;
  memset(&d, 0, sizeof(d));
  d.stack = g_stack;
  d.nstack = sizeof(g_stack) / sizeof(double);
  return d;
}

// a problem: G = J W J', g = J vf + b
typedef struct tp_ {
  int nc, nl, n, nv;
  double J[MAXN * MAXV], W[MAXV * MAXV], G[MAXN * MAXN], g[MAXN], mu[MAXN], vf[MAXV], b[MAXN];
} tProb;

static tProb g_p, g_q;

// G = J W J', g = J vf + b
static void assemble(tProb* tp) {
  int n = tp->n, nv = tp->nv;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int a = 0; a < nv; a++)
        for (int c = 0; c < nv; c++) s += tp->J[i * nv + a] * tp->W[a * nv + c] * tp->J[j * nv + c];
      tp->G[i * n + j] = s;
    }
    double s = tp->b[i];
    for (int a = 0; a < nv; a++) s += tp->J[i * nv + a] * tp->vf[a];
    tp->g[i] = s;
  }
}

// random SPD W = B B' + I/2 (scaled by sc) into W
static void random_spd(double* W, physRng* rng, int nv, double sc) {
  double B[MAXV * MAXV];
  for (int i = 0; i < nv * nv; i++) B[i] = phys_rng_range(rng, -1, 1);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      double s = i == j ? 0.5 : 0;
      for (int k = 0; k < nv; k++) s += B[i * nv + k] * B[j * nv + k];
      W[i * nv + j] = sc * s / nv;
    }
}

// random problem: normal and limit rows with a large entry on dof 0 (a solution exists), b < 0 mostly
static void random_problem(tProb* tp, physRng* rng, int nc, int nl, int nv, double pzero_mu) {
  tp->nc = nc, tp->nl = nl, tp->n = 3 * nc + nl, tp->nv = nv;
  random_spd(tp->W, rng, nv, 1);
  for (int r = 0; r < tp->n; r++) {
    for (int k = 0; k < nv; k++) tp->J[r * nv + k] = phys_rng_range(rng, -1, 1);
    int normal = r >= 3 * nc || r % 3 == 0;
    if (normal) tp->J[r * nv] = 2 + phys_rng_uniform(rng);
    tp->b[r] = normal ? phys_rng_range(rng, -1.5, 0.5) : 0;
  }
  for (int k = 0; k < nv; k++) tp->vf[k] = phys_rng_range(rng, -1, 1);
  for (int i = 0; i < nc; i++) tp->mu[i] = phys_rng_uniform(rng) < pzero_mu ? 0 : phys_rng_range(rng, 0.05, 1.5);
  assemble(tp);
}

// a box (mass 2, half sizes 0.1 0.2 0.05) on its 4 bottom corners, velocity v at the COM, dt 0.01
static void box_problem(tProb* tp, double mu, const double v[6]) {
  double mass = 2, hx = 0.1, hy = 0.2, hz = 0.05, dt = 0.01;
  tp->nc = 4, tp->nl = 0, tp->n = 12, tp->nv = 6;
  double I[3] = {mass * (hy * hy + hz * hz) / 3, mass * (hx * hx + hz * hz) / 3, mass * (hx * hx + hy * hy) / 3};
  memset(tp->W, 0, sizeof(tp->W));
  for (int k = 0; k < 3; k++) tp->W[k * 6 + k] = 1 / mass, tp->W[(3 + k) * 6 + 3 + k] = 1 / I[k];
  const double sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
  const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  for (int c = 0; c < 4; c++) {
    double r[3] = {sx[c] * hx, sy[c] * hy, -hz};
    for (int k = 0; k < 3; k++) {
      const double* e = dirs[k];
      double* Jr = tp->J + (3 * c + k) * 6;
      Jr[0] = e[0], Jr[1] = e[1], Jr[2] = e[2];
      Jr[3] = r[1] * e[2] - r[2] * e[1], Jr[4] = r[2] * e[0] - r[0] * e[2], Jr[5] = r[0] * e[1] - r[1] * e[0];
      tp->b[3 * c + k] = 0;
    }
    tp->mu[c] = mu;
  }
  for (int k = 0; k < 6; k++) tp->vf[k] = v[k];
  tp->vf[2] -= 9.81 * dt;
  assemble(tp);
}

// solve tp (no warm start): lambda, state; returns the status
static physStatus solve(const tProb* tp, double* lambda, int* state) {
  physData d = make_data();
  physConstraintProblem p = {.nc = tp->nc, .nl = tp->nl, .n = tp->n, .nv = tp->nv, .J = tp->J, .G = tp->G,
                             .g = tp->g, .mu = tp->mu};
  physConstraintSolution sol = {.lambda = lambda, .state = state};
  return phys_solve_lcp(NULL, &d, &p, &sol);
}

// a perturbation of the problem: dg, dW (through G = J W J'), a generic symmetric dG, dmu
typedef struct tDir_ {
  double dvf[MAXV], db[MAXN], dW[MAXV * MAXV], dGx[MAXN * MAXN], dmu[MAXN];
} tDir;

// q = p + h dir; G and g reassembled, then the generic dGx added
static void perturbed(tProb* q, const tProb* p, const tDir* dir, double h) {
  *q = *p;
  for (int k = 0; k < p->nv; k++) q->vf[k] += h * dir->dvf[k];
  for (int i = 0; i < p->n; i++) q->b[i] += h * dir->db[i];
  for (int i = 0; i < p->nv * p->nv; i++) q->W[i] += h * dir->dW[i];
  for (int c = 0; c < p->nc; c++) q->mu[c] += h * dir->dmu[c];
  assemble(q);
  for (int i = 0; i < p->n * p->n; i++) q->G[i] += h * dir->dGx[i];
}

// dg, dG of the direction (exact: G and g are linear in W, vf, b)
static void direction_dgdG(double* dg, double* dG, const tProb* p, const tDir* dir) {
  static tProb z;
  z = *p;
  memcpy(z.W, dir->dW, sizeof(z.W));
  memcpy(z.vf, dir->dvf, sizeof(z.vf));
  memcpy(z.b, dir->db, sizeof(z.b));
  assemble(&z);
  for (int i = 0; i < p->n; i++) dg[i] = z.g[i];
  for (int i = 0; i < p->n * p->n; i++) dG[i] = z.G[i] + dir->dGx[i];
}

static int g_fd_tested, g_fd_skipped;
static double g_fd_worst, g_dot_worst;
static double g_box_worst;   // worst finite-difference error on the box problems

static double g_prod_worst;   // products form vs the whole dG, relative

// the forward mode through products (phys_solve_lcp_jvp_prod with dG z_k and dG's diagonal; dGz NULL when
// dG = 0) against phys_solve_lcp_jvp's dl with the whole dG, to rounding
static void check_products(const physConstraintProblem* pp, const physConstraintSolution* sol, const double* dg,
                           const double* dG, const double* dmu, const double* dl, const char* name) {
  int n = pp->n, zero = 1;
  double z[3 * MAXN], dGz[3 * MAXN], diag[MAXN], dl2[MAXN];
  for (int i = 0; i < n * n; i++) zero &= dG[i] == 0;
  physData d = make_data();
  physLcpLocal* loc = phys_solve_lcp_local_prod(&d, phys_solve_lcp_local(&d, pp, sol));
  phys_solve_lcp_jvp_vectors(loc, pp, z);
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < n; i++) {
      double t = 0;
      for (int j = 0; j < n; j++) t += dG[i * n + j] * z[k * n + j];
      dGz[k * n + i] = t;
    }
  for (int i = 0; i < n; i++) diag[i] = dG[i * n + i];
  phys_solve_lcp_jvp_prod(loc, &d, pp, sol, dg, zero ? NULL : dGz, diag, dmu, dl2);
  double scale = 0, err = 0;
  for (int i = 0; i < n; i++) scale = fmax(fabs(dl[i]), scale), err = fmax(fabs(dl[i] - dl2[i]), err);
  double rel = err / fmax(scale, 1e-300);
  if (scale > 0) g_prod_worst = fmax(rel, g_prod_worst);
  CHECK_MSG(err <= 1e-12 * scale, "%s: products form %.3g from the whole dG (scale %.3g)", name, err, scale);
}

static double g_fac_worst;   // factored G_bar vs the whole one, relative

// the reverse mode with G_bar factored (phys_solve_lcp_vjp_factored: sum of three outer products and a
// diagonal) against phys_solve_lcp_vjp's g_bar, G_bar, mu_bar, to rounding
static void check_factored(const physConstraintProblem* pp, const physConstraintSolution* sol, const double* lb,
                           const double* gb, const double* Gb, const double* mub, const char* name) {
  int n = pp->n;
  double gb2[MAXN], mub2[MAXN], Fa[3 * MAXN], Fb[3 * MAXN], Fd[MAXN], scale = 0, err = 0;
  physData d = make_data();
  CHECK(phys_solve_lcp_vjp_factored(NULL, &d, pp, sol, lb, gb2, Fa, Fb, Fd, mub2) == PHYS_OK);
  CHECK(d.pstack == 0);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      double g = i == j ? Fd[i] : 0;
      for (int t = 0; t < 3; t++) g += Fa[t * n + i] * Fb[t * n + j];
      scale = fmax(fabs(Gb[i * n + j]), scale), err = fmax(fabs(g - Gb[i * n + j]), err);
    }
    scale = fmax(fabs(gb[i]), scale), err = fmax(fabs(gb2[i] - gb[i]), err);
  }
  for (int c = 0; c < pp->nc; c++) scale = fmax(fabs(mub[c]), scale), err = fmax(fabs(mub2[c] - mub[c]), err);
  double rel = err / fmax(scale, 1e-300);
  g_fac_worst = fmax(rel, g_fac_worst);
  CHECK_MSG(err <= 1e-12 * scale, "%s: factored G_bar %.3g from the whole (scale %.3g)", name, err, scale);
  // on a local structure built once (one build, counted; none by the reverse modes on it): bit for bit the
  // one-shot reverse modes
  static double Gb3[MAXN * MAXN];
  double gb3[MAXN], mub3[MAXN], gb4[MAXN], mub4[MAXN], Fa4[3 * MAXN], Fb4[3 * MAXN], Fd4[MAXN];
  uint64_t built = d.nlcp_local;
  size_t mark = phys_stack_mark(&d);
  physLcpLocal* loc = phys_solve_lcp_local(&d, pp, sol);
  CHECK(d.nlcp_local == built + 1);
  phys_solve_lcp_vjp_local(loc, &d, pp, sol, lb, gb3, Gb3, mub3);
  phys_solve_lcp_vjp_factored_local(loc, &d, pp, sol, lb, gb4, Fa4, Fb4, Fd4, mub4);
  CHECK(d.nlcp_local == built + 1);
  phys_stack_free(&d, mark);
  size_t nb = sizeof(double) * (size_t)n;
  size_t nm = sizeof(double) * (size_t)pp->nc;
  CHECK_MSG(!memcmp(gb3, gb, nb) && !memcmp(Gb3, Gb, nb * (size_t)n) && !memcmp(mub3, mub, nm),
            "%s: reverse mode on the local structure differs from phys_solve_lcp_vjp", name);
  CHECK_MSG(!memcmp(gb4, gb2, nb) && !memcmp(Fa4, Fa, 3 * nb) && !memcmp(Fb4, Fb, 3 * nb) && !memcmp(Fd4, Fd, nb) &&
                !memcmp(mub4, mub2, nm),
            "%s: factored reverse mode on the local structure differs from phys_solve_lcp_vjp_factored", name);
}

// check one direction at problem p (solution lam0, st0): forward mode vs finite differences (central, or
// one-sided second order when onesided), states equal at the perturbed points; then the dot-product identity
static void check_direction(const tProb* p, const double* lam0, const int* st0, const tDir* dir, double h,
                            int onesided, const char* name, physRng* rng) {
  int n = p->n;
  double lp[MAXN], lm[MAXN], dl[MAXN], fd[MAXN], dg[MAXN], lb[MAXN], gb[MAXN], mub[MAXN];
  static double dG[MAXN * MAXN], Gb[MAXN * MAXN];
  int sp[MAXN], sm[MAXN];
  direction_dgdG(dg, dG, p, dir);
  physData d = make_data();
  physConstraintProblem pp = {.nc = p->nc, .nl = p->nl, .n = n, .nv = p->nv, .J = p->J, .G = p->G,
                              .g = p->g, .mu = p->mu};
  physConstraintSolution sol = {.lambda = (double*)lam0, .state = (int*)st0};
  CHECK(phys_solve_lcp_jvp(NULL, &d, &pp, &sol, dg, dG, dir->dmu, dl) == PHYS_OK);
  CHECK(d.pstack == 0);
  check_products(&pp, &sol, dg, dG, dir->dmu, dl, name);

  // dot product: <lambda_bar, dl> = <g_bar, dg> + <G_bar, dG> + <mu_bar, dmu>
  for (int i = 0; i < n; i++) lb[i] = phys_rng_range(rng, -1, 1);
  CHECK(phys_solve_lcp_vjp(NULL, &d, &pp, &sol, lb, gb, Gb, mub) == PHYS_OK);
  CHECK(d.pstack == 0);
  check_factored(&pp, &sol, lb, gb, Gb, mub, name);
  double lhs = 0, rhs = 0, mag = 0;
  for (int i = 0; i < n; i++) lhs += lb[i] * dl[i], mag += fabs(lb[i] * dl[i]);
  for (int i = 0; i < n; i++) rhs += gb[i] * dg[i], mag += fabs(gb[i] * dg[i]);
  for (int i = 0; i < n * n; i++) rhs += Gb[i] * dG[i], mag += fabs(Gb[i] * dG[i]);
  for (int c = 0; c < p->nc; c++) rhs += mub[c] * dir->dmu[c], mag += fabs(mub[c] * dir->dmu[c]);
  double dot = fabs(lhs - rhs) / fmax(mag, 1e-300);
  g_dot_worst = fmax(dot, g_dot_worst);
  CHECK_MSG(dot <= DOT_TOL, "%s: dot product %.17g vs %.17g (rel %.3g)", name, lhs, rhs, dot);

  // finite differences, where the states do not change
  if (onesided) {
    static double l2[MAXN];
    int s2[MAXN];
    perturbed(&g_q, p, dir, h);
    solve(&g_q, lp, sp);
    perturbed(&g_q, p, dir, 2 * h);
    solve(&g_q, l2, s2);
    if (memcmp(sp, st0, sizeof(int) * n) || memcmp(s2, st0, sizeof(int) * n)) {
      g_fd_skipped++;
      return;
    }
    for (int i = 0; i < n; i++) fd[i] = (-3 * lam0[i] + 4 * lp[i] - l2[i]) / (2 * h);
  } else {
    perturbed(&g_q, p, dir, h);
    solve(&g_q, lp, sp);
    perturbed(&g_q, p, dir, -h);
    solve(&g_q, lm, sm);
    if (memcmp(sp, st0, sizeof(int) * n) || memcmp(sm, st0, sizeof(int) * n)) {
      g_fd_skipped++;
      return;
    }
    for (int i = 0; i < n; i++) fd[i] = (lp[i] - lm[i]) / (2 * h);
  }
  double scale = 0, lmax = 0, err = 0;
  for (int i = 0; i < n; i++) scale = fmax(fabs(dl[i]), scale), lmax = fmax(fabs(lam0[i]), lmax);
  scale = fmax(scale, 1e-3 * lmax);
  for (int i = 0; i < n; i++) err = fmax(fabs(fd[i] - dl[i]), err);
  g_fd_tested++;
  g_fd_worst = fmax(err / scale, g_fd_worst);
  if (!strcmp(name, "box")) g_box_worst = fmax(err / scale, g_box_worst);
  CHECK_MSG(err <= FD_TOL * scale, "%s: |fd - jvp| %.3g, scale %.3g", name, err, scale);
}

// kinds of direction: 0 g, 1 W (G through J W J'), 2 generic symmetric dG, 3 mu, 4 all of g, W, mu
static void make_dir(tDir* dir, const tProb* p, physRng* rng, int kind, int mu_positive) {
  memset(dir, 0, sizeof(*dir));
  int nv = p->nv, n = p->n;
  if (kind == 0 || kind == 4) {
    for (int k = 0; k < nv; k++) dir->dvf[k] = phys_rng_range(rng, -1, 1);
    for (int i = 0; i < n; i++) dir->db[i] = (i >= 3 * p->nc || i % 3 == 0) && p->nl + p->nc > 0 && nv > 6 ?
                                             phys_rng_range(rng, -1, 1) : 0;
  }
  if (kind == 1 || kind == 4) {
    double wmax = 0;
    for (int i = 0; i < nv * nv; i++) wmax = fmax(fabs(p->W[i]), wmax);
    for (int i = 0; i < nv; i++)
      for (int j = 0; j <= i; j++) dir->dW[i * nv + j] = dir->dW[j * nv + i] = wmax * phys_rng_range(rng, -1, 1);
  }
  if (kind == 2) {
    double gmax = 0;
    for (int i = 0; i < n * n; i++) gmax = fmax(fabs(p->G[i]), gmax);
    for (int i = 0; i < n; i++)
      for (int j = 0; j <= i; j++) dir->dGx[i * n + j] = dir->dGx[j * n + i] = gmax * phys_rng_range(rng, -1, 1);
  }
  if (kind == 3 || kind == 4)
    for (int c = 0; c < p->nc; c++)   // central differences: mu = 0 (mu < 0 reads as 0) kept
      dir->dmu[c] = mu_positive ? phys_rng_range(rng, 0.2, 1) : p->mu[c] > 0 ? phys_rng_range(rng, -1, 1) : 0;
}

// all direction kinds at one problem (generic dG only when G is regular: nv >= n); h relative 1e-6
static void check_problem(const tProb* p, physRng* rng, int mu_onesided, const char* name) {
  double lam0[MAXN];
  int st0[MAXN];
  static tDir dir;
  CHECK(solve(p, lam0, st0) == PHYS_OK);
  for (int kind = 0; kind <= 4; kind++) {
    if (kind == 2 && p->nv < p->n) continue;
    make_dir(&dir, p, rng, kind, mu_onesided);
    check_direction(p, lam0, st0, &dir, 1e-6, mu_onesided && (kind == 3 || kind == 4), name, rng);
  }
}

// random problems of several sizes, with limits, full rank and rank deficient
static void test_random(void) {
  physRng rng;
  phys_rng_seed(&rng, 4242);
  const int sizes[][3] = {{1, 0, 3}, {2, 0, 8}, {2, 1, 8}, {3, 2, 12}, {4, 0, 20}, {3, 1, 6}, {5, 2, 9}, {6, 3, 24}};
  int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
  for (int s = 0; s < nsizes; s++)
    for (int trial = 0; trial < 25; trial++) {
      random_problem(&g_p, &rng, sizes[s][0], sizes[s][1], sizes[s][2], 0.2);
      check_problem(&g_p, &rng, 0, "random");
    }
}

// mu = 0 on every contact: derivatives in g and G, and the one-sided derivative in mu >= 0
static void test_mu_zero(void) {
  physRng rng;
  phys_rng_seed(&rng, 77);
  for (int trial = 0; trial < 40; trial++) {
    random_problem(&g_p, &rng, 1 + trial % 4, trial % 3, 14, 1.0);
    check_problem(&g_p, &rng, 1, "mu0");
  }
}

// the box: resting (all clamping, symmetric singular system) and sliding (x tangents bounded: a
// nonsymmetric singular system), slow diagonal sliding; the minimal-norm solution's derivative
static void test_box(void) {
  physRng rng;
  phys_rng_seed(&rng, 5);
  const double vs[][6] = {{0, 0, -0.3, 0, 0, 0}, {1, 0, -0.1, 0, 0, 0}, {0.6, 0.4, -0.2, 0, 0, 0},
                          {0, -0.8, -0.05, 0, 0, 0}};
  double lam[12];
  int st[12];
  for (int k = 0; k < 4; k++) {
    box_problem(&g_p, 0.5, vs[k]);
    solve(&g_p, lam, st);
    int nclamp = 0;
    for (int i = 0; i < 12; i++) nclamp += st[i] == PHYS_ROW_CLAMPING;
    CHECK(nclamp >= 4);   // a singular clamping set (4 normals on a plane, rank 3)
    for (int trial = 0; trial < 5; trial++) check_problem(&g_p, &rng, 0, "box");
  }
  // resting: the derivative in g along vf_z is the minimal-norm one, equal shares: dlambda_n = -m/4 per m/s
  box_problem(&g_p, 0.5, vs[0]);
  solve(&g_p, lam, st);
  double dg[12], dl[12];
  for (int r = 0; r < 12; r++) dg[r] = g_p.J[r * 6 + 2];
  physData d = make_data();
  physConstraintProblem pp = {.nc = 4, .n = 12, .nv = 6, .J = g_p.J, .G = g_p.G, .g = g_p.g, .mu = g_p.mu};
  physConstraintSolution sol = {.lambda = lam, .state = st};
  phys_solve_lcp_jvp(NULL, &d, &pp, &sol, dg, NULL, NULL, dl);
  for (int c = 0; c < 4; c++) {
    CHECK_NEAR(dl[3 * c], -0.5, 1e-12);
    CHECK_NEAR(dl[3 * c + 1], 0, 1e-12);
  }
}

// the recorded resting faces (lcp_resting_faces.h: 12 rows, G of rank 6): the solution's derivative in g along
// dg = G r (G's range, which keeps the system consistent, as a change of the free velocity does) against
// central differences of the solver warm-started from the solution's labels, as the step is (h = 1e-6 relative;
// the guess verified and kept), and the reverse mode by the dot product. Cold, the perturbed solves of the second
// face (every tangent sticking with impulses ~1e-8) may return another exact solution of the non-unique problem
// (one tangent at its friction bound, 5e-4): the labels, and so the derivative, are those of the solution returned
static void test_resting_face(void) {
  physRng rng;
  phys_rng_seed(&rng, 12);
  static double G[144], g[12], gq[12], mu[4];
  for (int f = 0; f < RESTING_NFACE; f++) {
    memcpy(G, resting_G[f], sizeof(G)), memcpy(g, resting_g[f], sizeof(g)), memcpy(mu, resting_mu[f], sizeof(mu));
    double lam[12], lp[12], lm[12], dl[12], dg[12], lb[12], gb[12], mub[4], r[12], gmax = 0;
    static double Gb[144];
    int st[12], sp[12], sm[12];
    physData d = make_data();
    physConstraintProblem pp = {.nc = 4, .n = 12, .nv = 6, .G = G, .g = g, .mu = mu};
    physConstraintSolution sol = {.lambda = lam, .state = st};
    CHECK(phys_solve_lcp(NULL, &d, &pp, &sol) == PHYS_OK);
    for (int trial = 0; trial < 4; trial++) {
      for (int i = 0; i < 12; i++) r[i] = phys_rng_range(&rng, -1, 1), gmax = fmax(fabs(g[i]), gmax);
      for (int i = 0; i < 12; i++) {
        dg[i] = 0;
        for (int j = 0; j < 12; j++) dg[i] += G[i * 12 + j] * r[j];
      }
      CHECK(phys_solve_lcp_jvp(NULL, &d, &pp, &sol, dg, NULL, NULL, dl) == PHYS_OK);
      double h = 1e-6 * gmax, err = 0, scale = 0, lmax = 0;
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        for (int i = 0; i < 12; i++) gq[i] = g[i] + sgn * h * dg[i];
        physConstraintProblem pq = pp;
        pq.g = gq, pq.warm = st;
        physConstraintSolution sq = {.lambda = sgn > 0 ? lp : lm, .state = sgn > 0 ? sp : sm};
        physData dq = make_data();
        CHECK(phys_solve_lcp(NULL, &dq, &pq, &sq) == PHYS_OK && sq.warm_used == 1);
      }
      CHECK(!memcmp(sp, st, sizeof(st)) && !memcmp(sm, st, sizeof(st)));
      for (int i = 0; i < 12; i++) scale = fmax(fabs(dl[i]), scale), lmax = fmax(fabs(lam[i]), lmax);
      scale = fmax(scale, 1e-3 * lmax);
      for (int i = 0; i < 12; i++) err = fmax(fabs((lp[i] - lm[i]) / (2 * h) - dl[i]), err);
      g_fd_worst = fmax(err / scale, g_fd_worst);
      CHECK_MSG(err <= FD_TOL * scale, "resting face %d: |fd - jvp| %.3g, scale %.3g", f, err, scale);
      // <lambda_bar, dl> = <g_bar, dg>
      double lhs = 0, rhs = 0, mag = 0;
      for (int i = 0; i < 12; i++) lb[i] = phys_rng_range(&rng, -1, 1);
      CHECK(phys_solve_lcp_vjp(NULL, &d, &pp, &sol, lb, gb, Gb, mub) == PHYS_OK);
      for (int i = 0; i < 12; i++) {
        lhs += lb[i] * dl[i], rhs += gb[i] * dg[i];
        mag += fabs(lb[i] * dl[i]) + fabs(gb[i] * dg[i]);
      }
      g_dot_worst = fmax(fabs(lhs - rhs) / mag, g_dot_worst);
      CHECK(fabs(lhs - rhs) <= DOT_TOL * mag);
      printf("resting face %d: |fd - jvp| %.3g relative\n", f, err / scale);
    }
  }
}

// complementarity-aware labels (paper 001 IV-D, Fig. 3): a ball resting on the ground (one contact, G = 1/m
// on the normal, pressed in: g_n = -0.1) and the loss L = -w_n (lift it: w = G lambda + g is the row's velocity
// after the step). Exact: clamped, w_n = 0 whatever g does, so dL/dg_n = 0 (a saddle). The adjoint reaching
// lambda is lambda_bar = dL/dw G = -G_nn < 0: relabelled separating, lambda = 0 and w = g, dL/dg_n = -1.
// A separating contact with a positive normal adjoint is relabelled clamping with sticking tangents.
static void test_aware(void) {
  physData d = make_data();
  double G[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, g[3] = {-0.1, 0, 0}, mu[1] = {0.5}, lam[3], gb[3], lb[3];
  int st[3], alt[3];
  physConstraintProblem pp = {.nc = 1, .n = 3, .nv = 3, .G = G, .g = g, .mu = mu};
  physConstraintSolution sol = {.lambda = lam, .state = st};
  CHECK(phys_solve_lcp(NULL, &d, &pp, &sol) == PHYS_OK);
  CHECK(st[0] == PHYS_ROW_CLAMPING);
  CHECK_NEAR(lam[0], 0.05, 1e-15);
  // L = -w_n: direct dL/dg = (-1, 0, 0), lambda_bar = G' dL/dw
  for (int r = 0; r < 3; r++) lb[r] = -G[r * 3];
  phys_solve_lcp_vjp(NULL, &d, &pp, &sol, lb, gb, NULL, NULL);
  CHECK_NEAR(-1 + gb[0], 0, 1e-15);   // the exact gradient vanishes
  CHECK(phys_lcp_aware_states(&pp, &sol, lb, alt) == 3);
  CHECK(alt[0] == PHYS_ROW_SEPARATING && alt[1] == PHYS_ROW_SEPARATING && alt[2] == PHYS_ROW_SEPARATING);
  physConstraintSolution sa = sol;
  sa.state = alt;
  phys_solve_lcp_vjp(NULL, &d, &pp, &sa, lb, gb, NULL, NULL);
  CHECK_NEAR(-1 + gb[0], -1, 1e-15);   // relabelled: the lift is reachable
  // separating contact (g_n = +0.1), loss L = w_n (bring it closer): lambda_bar = +G > 0 -> clamping, sticking
  g[0] = 0.1;
  g[1] = 0.3;
  CHECK(phys_solve_lcp(NULL, &d, &pp, &sol) == PHYS_OK);
  CHECK(st[0] == PHYS_ROW_SEPARATING);
  for (int r = 0; r < 3; r++) lb[r] = G[r * 3];
  CHECK(phys_lcp_aware_states(&pp, &sol, lb, alt) == 3);
  CHECK(alt[0] == PHYS_ROW_CLAMPING && alt[1] == PHYS_ROW_CLAMPING && alt[2] == PHYS_ROW_CLAMPING);
  // relabelled clamping: lambda_n = -g_n/G_nn, so dL/dg_n = 1 + G (-1/G) = 0 and the tangent rows stick
  sa.state = alt;
  phys_solve_lcp_vjp(NULL, &d, &pp, &sa, lb, gb, NULL, NULL);
  CHECK_NEAR(1 + gb[0], 0, 1e-15);
  // a zero adjoint changes nothing
  lb[0] = lb[1] = lb[2] = 0;
  CHECK(phys_lcp_aware_states(&pp, &sol, lb, alt) == 0);
}

// C = A B (m x m row-major)
static void mat_mul(double* C, const double* A, const double* B, int m) {
  for (int i = 0; i < m; i++)
    for (int k = 0; k < m; k++) {
      double s = 0;
      for (int j = 0; j < m; j++) s += A[i * m + j] * B[j * m + k];
      C[i * m + k] = s;
    }
}

// |X - Y|_F / |Z|_F, with Y = NULL for X' (m x m)
static double rel_diff(const double* X, const double* Y, const double* Z, int m) {
  double e = 0, z = 0;
  for (int i = 0; i < m; i++)
    for (int k = 0; k < m; k++) {
      double t = X[i * m + k] - (Y ? Y[i * m + k] : X[k * m + i]);
      e += t * t, z += Z[i * m + k] * Z[i * m + k];
    }
  return sqrt(e / z);
}

static double g_pinv_worst;

// P = phys_lcp_pinv(A) has rank r and satisfies A P A = A, P A P = P, (AP)' = AP, (PA)' = PA to PINV_TOL; the
// Cholesky path (sym: A = A') gives P = P' exactly
static void check_pinv(const double* A, int m, int r, int sym) {
  static double P[MAXN * MAXN], AP[MAXN * MAXN], PA[MAXN * MAXN], X[MAXN * MAXN];
  physData d = make_data();
  CHECK(phys_lcp_pinv(P, &d, A, m) == r);
  mat_mul(AP, A, P, m);
  mat_mul(PA, P, A, m);
  mat_mul(X, AP, A, m);
  double e[4] = {rel_diff(X, A, A, m), 0, rel_diff(AP, NULL, AP, m), rel_diff(PA, NULL, PA, m)};
  mat_mul(X, PA, P, m);
  e[1] = rel_diff(X, P, P, m);
  for (int k = 0; k < 4; k++) {
    CHECK(e[k] <= PINV_TOL);
    g_pinv_worst = fmax(e[k], g_pinv_worst);
  }
  if (sym)
    for (int i = 0; i < m; i++)
      for (int k = 0; k < i; k++) CHECK(P[i * m + k] == P[k * m + i]);
}

// the scaled clamped systems of the derivative: the resting box's S G S (12 x 12, rank 6: coplanar corners) and
// a random one with more rows than dofs (21 x 21, rank 12), both with G made exactly symmetric; a regular
// nonsymmetric one (a bounded tangent's column e G_Cb added to its normal's: H = G_CC + G_CB E: the LU inverse);
// a symmetric indefinite one and a singular nonsymmetric one (the SVD)
static void test_pinv(void) {
  static double A[MAXN * MAXN];
  physRng rng;
  phys_rng_seed(&rng, 99);
  const double v[6] = {0, 0, -0.3, 0, 0, 0};
  box_problem(&g_p, 0.5, v);
  random_problem(&g_q, &rng, 6, 3, 12, 0);
  for (int t = 0; t < 2; t++) {
    const tProb* tp = t ? &g_q : &g_p;
    int n = tp->n;
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) {
        double si = 1 / sqrt(tp->G[i * n + i]), sk = 1 / sqrt(tp->G[k * n + k]);
        A[i * n + k] = si * sk * (tp->G[i * n + k] + tp->G[k * n + i]) / 2;
      }
    check_pinv(A, n, t ? 12 : 6, 1);
  }
  random_problem(&g_q, &rng, 3, 1, 14, 0);
  int n = g_q.n;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) A[i * n + k] = g_q.G[i * n + k] + (k == 0 ? 0.4 * g_q.G[i * n + 1] : 0);
  CHECK(A[1] != A[n]);
  check_pinv(A, n, n, 0);
  const double Aind[9] = {0, 1, 0, 1, 0, 0, 0, 0, 0};   // eigenvalues 1, -1, 0
  check_pinv(Aind, 3, 2, 0);
  const double Asing[9] = {1, 2, 0, 0, 1, 1, 1, 3, 1};   // nonsymmetric, row 3 = row 1 + row 2: LU fails, SVD
  check_pinv(Asing, 3, 2, 0);
  const double Azero[16] = {1.5, 0, 0, -1.25, 0, 1.5, 0, 1.25, 0, 0, 0, 0, -7e-4, 1.25, 0, 1.68};   // a zero row
  check_pinv(Azero, 4, 3, 0);                                                                  // and column
}

int main(void) {
  test_random();
  test_mu_zero();
  test_box();
  test_resting_face();
  test_aware();
  test_pinv();
  printf("finite differences: %d directions tested, %d skipped (states changed); worst %.3g (tol %.0e)\n",
         g_fd_tested, g_fd_skipped, g_fd_worst, FD_TOL);
  printf("box (singular clamping system): worst %.3g\n", g_box_worst);
  printf("dot-product identity: worst %.3g (tol %.0e)\n", g_dot_worst, DOT_TOL);
  printf("pseudo-inverse, Penrose conditions: worst %.3g (tol %.0e)\n", g_pinv_worst, PINV_TOL);
  printf("forward mode through products vs the whole dG: worst %.3g (tol 1e-12)\n", g_prod_worst);
  printf("reverse mode with G_bar factored vs the whole: worst %.3g (tol 1e-12)\n", g_fac_worst);
  CHECK(g_fd_tested > 5 * g_fd_skipped);
  return test_done();
}

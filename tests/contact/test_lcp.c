// test_lcp.c - the `lcp` solver (src/contact/lcp.c): every complementarity and pyramid condition at the
// solution, to 1e-10 relative, on random problems G = J M^-1 J' of many sizes (full-rank and rank-deficient
// J); agreement with a brute-force enumeration of all row labels on tiny problems; a box's four coplanar
// corners (singular G) against the analytic velocities of resting and sliding; the warm start; mu = 0;
// extreme scales; degenerate input.
#include <string.h>

#include "contact.h"
#include "lcp_resting_faces.h"
#include "lcp_sliding_faces.h"
#include "rng.h"
#include "test.h"

#define TOL 1e-10
#define MAXN 80

static double g_stack[1 << 21];

// a physData with only the scratch arena (all the solver uses)
static physData make_data(void) {
  physData d;
  memset(&d, 0, sizeof(d));
  d.stack = g_stack;
  d.nstack = sizeof(g_stack) / sizeof(double);
  return d;
}

// a problem with its own storage
typedef struct testProblem_ {
  int nc, nl, n, nv;
  double J[MAXN * MAXN], G[MAXN * MAXN], g[MAXN], mu[MAXN];
  double Minv[MAXN * MAXN];
} testProblem;

static testProblem g_tp, g_tp2;

// view of tp as the solver's problem
static physConstraintProblem view(const testProblem* tp, const int* warm) {
  physConstraintProblem p = {.nc = tp->nc, .nl = tp->nl, .n = tp->n, .nv = tp->nv, .J = tp->J, .G = tp->G,
                             .g = tp->g, .mu = tp->mu, .warm = warm};
  return p;
}

//---------------------------------------------------------------------------------------------------------
// small dense algebra of the test's own (Gauss-Jordan with partial pivoting)

// X = A^-1 (n x n row-major); returns 0 if a pivot is below tol * max|A|
static int invert(double* X, const double* A, int n, double tol) {
  static double W[MAXN * 2 * MAXN];
  double amax = 0;
  for (int i = 0; i < n * n; i++) amax = fmax(amax, fabs(A[i]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * n; j++) W[i * 2 * n + j] = j < n ? A[i * n + j] : (j - n == i);
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(W[i * 2 * n + k]) > fabs(W[p * 2 * n + k])) p = i;
    if (!(fabs(W[p * 2 * n + k]) > tol * amax)) return 0;
    for (int j = 0; j < 2 * n; j++) {
      double t = W[k * 2 * n + j];
      W[k * 2 * n + j] = W[p * 2 * n + j];
      W[p * 2 * n + j] = t;
    }
    double piv = W[k * 2 * n + k];
    for (int j = 0; j < 2 * n; j++) W[k * 2 * n + j] /= piv;
    for (int i = 0; i < n; i++) {
      if (i == k) continue;
      double f = W[i * 2 * n + k];
      for (int j = 0; j < 2 * n; j++) W[i * 2 * n + j] -= f * W[k * 2 * n + j];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) X[i * n + j] = W[i * 2 * n + n + j];
  return 1;
}

// G = J Minv J'
static void delassus(testProblem* tp) {
  int n = tp->n, nv = tp->nv;
  static double JM[MAXN * MAXN];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < nv; j++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += tp->J[i * nv + k] * tp->Minv[k * nv + j];
      JM[i * nv + j] = s;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += JM[i * nv + k] * tp->J[j * nv + k];
      tp->G[i * n + j] = s;
    }
}

// random problem: nc contacts, nl limits, nv dofs; M = B B' + I/2; normal and limit rows have a large
// positive entry on dof 0 (a common separating direction, so a solution exists); g = J v + b
static void random_problem(testProblem* tp, physRng* rng, int nc, int nl, int nv, double pzero_mu) {
  tp->nc = nc, tp->nl = nl, tp->n = 3 * nc + nl, tp->nv = nv;
  int n = tp->n;
  static double B[MAXN * MAXN], M[MAXN * MAXN];
  for (int i = 0; i < nv * nv; i++) B[i] = phys_rng_range(rng, -1, 1);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      double s = i == j ? 0.5 : 0;
      for (int k = 0; k < nv; k++) s += B[i * nv + k] * B[j * nv + k];
      M[i * nv + j] = s;
    }
  CHECK(invert(tp->Minv, M, nv, 1e-14));
  for (int r = 0; r < n; r++) {
    for (int k = 0; k < nv; k++) tp->J[r * nv + k] = phys_rng_range(rng, -1, 1);
    if (r >= 3 * nc || r % 3 == 0) tp->J[r * nv] = 2 + phys_rng_uniform(rng);
  }
  delassus(tp);
  for (int r = 0; r < n; r++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += tp->J[r * nv + k] * phys_rng_range(rng, -1, 1);
    tp->g[r] = s + ((r >= 3 * nc || r % 3 == 0) ? phys_rng_range(rng, -1.5, 0.5) : 0);
  }
  for (int i = 0; i < nc; i++)
    tp->mu[i] = phys_rng_uniform(rng) < pzero_mu ? 0 : phys_rng_range(rng, 0.05, 1.5);
}

//---------------------------------------------------------------------------------------------------------
// the conditions

// w = G lambda + g; returns the scale max(|g|, max_i sum_j |G_ij lambda_j|)
static double velocity(double* w, const testProblem* tp, const double* lambda) {
  int n = tp->n;
  double ws = 0;
  for (int i = 0; i < n; i++) {
    double s = tp->g[i], a = fabs(tp->g[i]);
    for (int j = 0; j < n; j++) s += tp->G[i * n + j] * lambda[j], a += fabs(tp->G[i * n + j] * lambda[j]);
    w[i] = s;
    ws = fmax(ws, a);
  }
  return ws;
}

// largest violation of the problem's conditions, relative (0 at an exact solution):
// normals/limits: lambda >= 0, w >= 0, min(lambda, w) = 0; tangents: |lambda_t| <= mu lambda_n, w_t >= 0
// unless at the upper bound, w_t <= 0 unless at the lower bound. Impulses relative to max|lambda|,
// velocities to max(|g|, sum |G lambda|)
static double violation(const testProblem* tp, const double* lambda, double tol) {
  double w[MAXN], ls = 1e-300, v = 0;
  for (int i = 0; i < tp->n; i++) ls = fmax(ls, fabs(lambda[i]));
  double ws = fmax(velocity(w, tp, lambda), 1e-300);
  for (int i = 0; i < tp->n; i++) {
    double l = lambda[i] / ls, wi = w[i] / ws;
    if (i >= 3 * tp->nc || i % 3 == 0) {
      v = fmax(v, fmax(-l, -wi));
      v = fmax(v, fmin(l, wi));
    } else {
      double hi = tp->mu[i / 3] * fmax(lambda[3 * (i / 3)], 0) / ls;
      v = fmax(v, fabs(l) - hi);
      if (l < hi - tol) v = fmax(v, -wi);
      if (l > -hi + tol) v = fmax(v, wi);
    }
  }
  return v;
}

// the labels agree with lambda and w: S -> lambda = 0; C -> w = 0 and |lambda_t| <= mu lambda_n;
// U / L -> lambda_t = +-mu lambda_n with w_t <= 0 / >= 0; a separating normal has separating tangents
static int states_consistent(const testProblem* tp, const double* lambda, const int* state) {
  double w[MAXN], ls = 1e-300;
  for (int i = 0; i < tp->n; i++) ls = fmax(ls, fabs(lambda[i]));
  double ws = fmax(velocity(w, tp, lambda), 1e-300), t = 1e-9;
  for (int i = 0; i < tp->n; i++) {
    int c = i < 3 * tp->nc ? i / 3 : -1, st = state[i];
    double l = lambda[i] / ls, wi = w[i] / ws, bound = c >= 0 ? tp->mu[c] * lambda[3 * c] / ls : 0;
    if (st == PHYS_ROW_SEPARATING && !(fabs(l) <= t)) return 0;
    if (st == PHYS_ROW_CLAMPING && !(fabs(wi) <= t)) return 0;
    if (c < 0 || i == 3 * c) {
      if (st != PHYS_ROW_SEPARATING && st != PHYS_ROW_CLAMPING) return 0;
      continue;
    }
    if (state[3 * c] == PHYS_ROW_SEPARATING && st != PHYS_ROW_SEPARATING) return 0;
    if (st == PHYS_ROW_UPPER && !(fabs(l - bound) <= t && wi <= t)) return 0;
    if (st == PHYS_ROW_LOWER && !(fabs(l + bound) <= t && wi >= -t)) return 0;
  }
  return 1;
}

// solve with a fresh arena; checks the arena is released and the outputs finite
static physStatus solve(const testProblem* tp, const int* warm, double* lambda, int* state,
                        physConstraintSolution* sol) {
  physData d = make_data();
  physConstraintProblem p = view(tp, warm);
  sol->lambda = lambda;
  sol->state = state;
  physStatus s = phys_solve_lcp(NULL, &d, &p, sol);
  CHECK(d.pstack == 0);
  int finite = 1;
  for (int i = 0; i < tp->n; i++) finite &= isfinite(lambda[i]);
  CHECK(finite && isfinite(sol->residual));
  return s;
}

//---------------------------------------------------------------------------------------------------------
// random problems

// many sizes, full-rank (nv >= n) and rank-deficient (nv < n) J: every condition to 1e-10
static void test_random(void) {
  physRng rng;
  phys_rng_seed(&rng, 12345);
  const int ncs[] = {1, 2, 3, 4, 6, 8, 12, 20};
  int nprob = 0, nfail = 0, nbad_state = 0, maxpiv = 0;
  double worst = 0;
  for (int a = 0; a < 8; a++) {
    for (int rep = 0; rep < 12; rep++) {
      int nc = ncs[a], nl = rep % 3 == 2 ? 1 + rep % 4 : 0, n = 3 * nc + nl;
      int nv = rep % 2 == 0 ? (n + 2 < 60 ? n + 2 : 60) : (rep % 4 == 1 ? 6 : (n / 2 > 3 ? n / 2 : 3));
      random_problem(&g_tp, &rng, nc, nl, nv, 0.15);
      double lambda[MAXN];
      int state[MAXN];
      physConstraintSolution sol;
      physStatus s = solve(&g_tp, NULL, lambda, state, &sol);
      double v = violation(&g_tp, lambda, TOL);
      worst = fmax(worst, v);
      nfail += s != PHYS_OK || !(v <= TOL);
      nbad_state += !states_consistent(&g_tp, lambda, state);
      if (s != PHYS_OK || !(v <= TOL))
        fprintf(stderr, "random nc %d nl %d nv %d rep %d: status %d violation %.3g\n", nc, nl, nv, rep, s, v);
      maxpiv = sol.iterations > maxpiv ? sol.iterations : maxpiv;
      nprob++;
    }
  }
  printf("random: %d problems, worst relative violation %.2g, most pivots %d\n", nprob, worst, maxpiv);
  CHECK(nfail == 0);
  CHECK(nbad_state == 0);
}

//---------------------------------------------------------------------------------------------------------
// brute force: all labels of a tiny problem, each label set's linear system, its solution if valid

// lambda for the labels (S 0 / C / U / L) by the test's own inverse; 0 if singular
static int solve_labels(double* lambda, const testProblem* tp, const int* lab) {
  int n = tp->n, m = 0, cr[MAXN], pos[MAXN];
  static double A[MAXN * MAXN], X[MAXN * MAXN];
  for (int i = 0; i < n; i++) {
    pos[i] = lab[i] == PHYS_ROW_CLAMPING ? m : -1;
    if (pos[i] >= 0) cr[m++] = i;
  }
  // lambda_j = sum_k E_jk lambda_C_k: clamped rows themselves, bounded tangents +-mu times their normal
  for (int i = 0; i < m; i++)
    for (int k = 0; k < m; k++) {
      double s = tp->G[cr[i] * n + cr[k]];
      for (int j = 0; j < n; j++)
        if ((lab[j] == PHYS_ROW_UPPER || lab[j] == PHYS_ROW_LOWER) && 3 * (j / 3) == cr[k])
          s += (lab[j] == PHYS_ROW_UPPER ? 1 : -1) * tp->mu[j / 3] * tp->G[cr[i] * n + j];
      A[i * m + k] = s;
    }
  if (m > 0 && !invert(X, A, m, 1e-12)) return 0;
  for (int i = 0; i < n; i++) {
    lambda[i] = 0;
    if (pos[i] < 0) continue;
    for (int k = 0; k < m; k++) lambda[i] -= X[pos[i] * m + k] * tp->g[cr[k]];
  }
  for (int j = 0; j < n; j++)
    if (lab[j] == PHYS_ROW_UPPER || lab[j] == PHYS_ROW_LOWER)
      lambda[j] = (lab[j] == PHYS_ROW_UPPER ? 1 : -1) * tp->mu[j / 3] * lambda[3 * (j / 3)];
  return 1;
}

// enumerate: normals S/C, tangents of clamping contacts C/U/L; collects distinct valid solutions
static int brute_force(double* sols, const testProblem* tp) {
  int nc = tp->nc, nsol = 0, total = 1;
  for (int c = 0; c < nc; c++) total *= 10;   // per contact: S, or C with 3 x 3 tangent labels
  for (int code = 0; code < total; code++) {
    int lab[MAXN], x = code, skip = 0;
    for (int c = 0; c < nc; c++, x /= 10) {
      int k = x % 10;
      lab[3 * c] = k == 0 ? PHYS_ROW_SEPARATING : PHYS_ROW_CLAMPING;
      int t1 = k == 0 ? 0 : (k - 1) % 3, t2 = k == 0 ? 0 : (k - 1) / 3;
      const int map[3] = {PHYS_ROW_CLAMPING, PHYS_ROW_UPPER, PHYS_ROW_LOWER};
      lab[3 * c + 1] = k == 0 ? PHYS_ROW_SEPARATING : map[t1];
      lab[3 * c + 2] = k == 0 ? PHYS_ROW_SEPARATING : map[t2];
    }
    double lambda[MAXN];
    if (skip || !solve_labels(lambda, tp, lab) || !(violation(tp, lambda, 1e-9) <= 1e-9)) continue;
    int dup = 0;
    for (int s = 0; s < nsol && !dup; s++) {
      double dm = 0, lm = 1e-300;
      for (int i = 0; i < tp->n; i++) dm = fmax(dm, fabs(sols[s * tp->n + i] - lambda[i])), lm = fmax(lm, fabs(lambda[i]));
      dup = dm <= 1e-7 * lm;
    }
    if (!dup) memcpy(sols + nsol++ * tp->n, lambda, sizeof(double) * (size_t)tp->n);
  }
  return nsol;
}

// tiny problems (1-2 contacts, full-rank G): the solver's solution is one of the brute-force solutions
static void test_brute_force(void) {
  physRng rng;
  phys_rng_seed(&rng, 777);
  int nprob = 0, nmatch = 0, nunique = 0, nfound = 0;
  static double sols[100 * MAXN];
  for (int rep = 0; rep < 300; rep++) {
    int nc = 1 + rep % 2;
    random_problem(&g_tp, &rng, nc, 0, 3 * nc + 1, 0.1);
    int nsol = brute_force(sols, &g_tp);
    double lambda[MAXN];
    int state[MAXN];
    physConstraintSolution sol;
    solve(&g_tp, NULL, lambda, state, &sol);
    nfound += nsol > 0;
    nunique += nsol == 1;
    int match = 0;
    for (int s = 0; s < nsol && !match; s++) {
      double dm = 0, lm = 1e-300;
      for (int i = 0; i < g_tp.n; i++) dm = fmax(dm, fabs(sols[s * g_tp.n + i] - lambda[i])), lm = fmax(lm, fabs(lambda[i]));
      match = dm <= 1e-9 * lm || (lm <= 1e-300 && dm == 0);
    }
    if (!match) fprintf(stderr, "brute force rep %d: %d solutions, solver's not among them\n", rep, nsol);
    nmatch += match;
    nprob++;
  }
  printf("brute force: %d problems, %d with a solution (%d unique), solver matched %d\n", nprob, nfound,
         nunique, nmatch);
  CHECK(nfound == nprob);   // full-rank G and a separating direction: a solution always exists
  CHECK(nmatch == nprob);
  CHECK(nunique > nprob / 2);
}

//---------------------------------------------------------------------------------------------------------
// a box on the ground: 4 coplanar corners, rank-deficient G

// box (mass mass, half sizes hx hy hz, COM at the centre) with its 4 bottom corners on z = 0: a free body
// with v = (linear, angular) at the COM; rows n = z, t1 = x, t2 = y at each corner: J_row = [dir, r x dir]
static void box_problem(testProblem* tp, double mass, double hx, double hy, double hz, double mu,
                        const double v[6], double dt, double grav) {
  tp->nc = 4, tp->nl = 0, tp->n = 12, tp->nv = 6;
  double I[3] = {mass * (hy * hy + hz * hz) / 3, mass * (hx * hx + hz * hz) / 3, mass * (hx * hx + hy * hy) / 3};
  memset(tp->Minv, 0, sizeof(tp->Minv));
  for (int k = 0; k < 3; k++) tp->Minv[k * 6 + k] = 1 / mass, tp->Minv[(3 + k) * 6 + 3 + k] = 1 / I[k];
  const double sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
  for (int c = 0; c < 4; c++) {
    double r[3] = {sx[c] * hx, sy[c] * hy, -hz};
    const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
    for (int k = 0; k < 3; k++) {
      const double* e = dirs[k];
      double* Jr = tp->J + (3 * c + k) * 6;
      Jr[0] = e[0], Jr[1] = e[1], Jr[2] = e[2];
      Jr[3] = r[1] * e[2] - r[2] * e[1], Jr[4] = r[2] * e[0] - r[0] * e[2], Jr[5] = r[0] * e[1] - r[1] * e[0];
    }
    tp->mu[c] = mu;
  }
  delassus(tp);
  // free velocity: v plus gravity over the step
  double vf[6];
  memcpy(vf, v, sizeof(vf));
  vf[2] -= grav * dt;
  for (int r = 0; r < 12; r++) {
    double s = 0;
    for (int k = 0; k < 6; k++) s += tp->J[r * 6 + k] * vf[k];
    tp->g[r] = s;
  }
}

// v+ = vf + Minv J' lambda
static void box_velocity(double vplus[6], const testProblem* tp, const double* lambda, const double v[6],
                         double dt, double grav) {
  double f[6] = {0};
  for (int k = 0; k < 6; k++)
    for (int r = 0; r < 12; r++) f[k] += tp->J[r * 6 + k] * lambda[r];
  for (int k = 0; k < 6; k++) vplus[k] = v[k] - (k == 2 ? grav * dt : 0) + f[k] * tp->Minv[k * 6 + k];
}

// resting: v+ = 0, equal normal shares m g dt / 4 (the minimal-norm solution), all clamping; sliding along
// x at 1 m/s: vx+ = 1 - mu g dt, no vertical or angular velocity, tangent x rows at the lower bound
static void test_box(void) {
  double dt = 0.01, grav = 9.81, mass = 2, mu = 0.5;
  double rest[6] = {0}, lambda[MAXN], vp[6];
  int state[MAXN];
  physConstraintSolution sol;
  box_problem(&g_tp, mass, 0.1, 0.2, 0.05, mu, rest, dt, grav);
  CHECK(solve(&g_tp, NULL, lambda, state, &sol) == PHYS_OK);
  CHECK(violation(&g_tp, lambda, TOL) <= TOL);
  box_velocity(vp, &g_tp, lambda, rest, dt, grav);
  for (int k = 0; k < 6; k++) CHECK_NEAR(vp[k], 0, 1e-12);
  for (int c = 0; c < 4; c++) {
    CHECK_REL(lambda[3 * c], mass * grav * dt / 4, 1e-10, 0);
    CHECK(state[3 * c] == PHYS_ROW_CLAMPING);
    CHECK(state[3 * c + 1] == PHYS_ROW_CLAMPING && state[3 * c + 2] == PHYS_ROW_CLAMPING);
  }
  CHECK(states_consistent(&g_tp, lambda, state));

  // warm start from the resting labels: used, same impulses
  double lw[MAXN];
  int sw[MAXN];
  CHECK(solve(&g_tp, state, lw, sw, &sol) == PHYS_OK);
  CHECK(sol.warm_used == 1 && sol.iterations == 0);
  for (int i = 0; i < 12; i++) CHECK_NEAR(lw[i], lambda[i], 1e-14);

  // sliding along +x
  double slide[6] = {1, 0, 0, 0, 0, 0};
  box_problem(&g_tp, mass, 0.1, 0.2, 0.05, mu, slide, dt, grav);
  CHECK(solve(&g_tp, NULL, lambda, state, &sol) == PHYS_OK);
  CHECK(violation(&g_tp, lambda, TOL) <= TOL);
  CHECK(states_consistent(&g_tp, lambda, state));
  box_velocity(vp, &g_tp, lambda, slide, dt, grav);
  CHECK_NEAR(vp[0], 1 - mu * grav * dt, 1e-12);
  for (int k = 1; k < 6; k++) CHECK_NEAR(vp[k], 0, 1e-12);
  for (int c = 0; c < 4; c++) CHECK(state[3 * c + 1] == PHYS_ROW_LOWER);
  double total = 0;
  for (int c = 0; c < 4; c++) total += lambda[3 * c];
  CHECK_REL(total, mass * grav * dt, 1e-12, 0);

  // the resting labels as the guess for the sliding box: wrong (the x tangents slide), corrected to the
  // sliding labels without Lemke (no pivot), the same analytic velocity
  int rest_labels[MAXN], slide_state[MAXN];
  for (int i = 0; i < 12; i++) rest_labels[i] = PHYS_ROW_CLAMPING;
  CHECK(solve(&g_tp, rest_labels, lw, slide_state, &sol) == PHYS_OK);
  CHECK(sol.warm_used == 0 && sol.iterations == 0);
  box_velocity(vp, &g_tp, lw, slide, dt, grav);
  CHECK_NEAR(vp[0], 1 - mu * grav * dt, 1e-12);
  for (int k = 1; k < 6; k++) CHECK_NEAR(vp[k], 0, 1e-12);
  for (int c = 0; c < 4; c++) CHECK(slide_state[3 * c + 1] == PHYS_ROW_LOWER);

  // the same with the sliding labels as the warm guess, after a small change of speed: used
  double slide2[6] = {0.9, 0, 0, 0, 0, 0};
  memcpy(sw, state, sizeof(sw));
  box_problem(&g_tp, mass, 0.1, 0.2, 0.05, mu, slide2, dt, grav);
  CHECK(solve(&g_tp, sw, lw, state, &sol) == PHYS_OK);
  CHECK(sol.warm_used == 1);
  box_velocity(vp, &g_tp, lw, slide2, dt, grav);
  CHECK_NEAR(vp[0], 0.9 - mu * grav * dt, 1e-12);
  CHECK(violation(&g_tp, lw, TOL) <= TOL);

  // slow sliding stops within the step: friction below its bound, v+ = 0
  double slow[6] = {0.01, 0.02, 0, 0, 0, 0};
  box_problem(&g_tp, mass, 0.1, 0.2, 0.05, mu, slow, dt, grav);
  CHECK(solve(&g_tp, sw, lambda, state, &sol) == PHYS_OK);
  CHECK(sol.warm_used == 0);   // the sliding guess is wrong now
  CHECK(violation(&g_tp, lambda, TOL) <= TOL);
  box_velocity(vp, &g_tp, lambda, slow, dt, grav);
  for (int k = 0; k < 6; k++) CHECK_NEAR(vp[k], 0, 1e-12);

  // diagonal sliding (pyramid, both tangents at their bounds): each axis decelerates by mu g dt
  double diag[6] = {1, 1, 0, 0, 0, 0};
  box_problem(&g_tp, mass, 0.1, 0.2, 0.05, mu, diag, dt, grav);
  CHECK(solve(&g_tp, NULL, lambda, state, &sol) == PHYS_OK);
  box_velocity(vp, &g_tp, lambda, diag, dt, grav);
  CHECK_NEAR(vp[0], 1 - mu * grav * dt, 1e-12);
  CHECK_NEAR(vp[1], 1 - mu * grav * dt, 1e-12);
  CHECK(violation(&g_tp, lambda, TOL) <= TOL);

  // a box lifting off: upward speed larger than g dt, no impulse, all separating
  double up[6] = {0.3, 0, 1, 0, 0, 0};
  box_problem(&g_tp, mass, 0.1, 0.2, 0.05, mu, up, dt, grav);
  CHECK(solve(&g_tp, NULL, lambda, state, &sol) == PHYS_OK);
  for (int i = 0; i < 12; i++) CHECK(lambda[i] == 0 && state[i] == PHYS_ROW_SEPARATING);
}

//---------------------------------------------------------------------------------------------------------
// warm start on random problems

// the warm start from the solution's own labels is used and gives the same impulses (full-rank G:
// unique subsystem); a wrong guess is rejected and the full solver's answer is still exact
static void test_warm(void) {
  physRng rng;
  phys_rng_seed(&rng, 99);
  int used = 0, same = 0, rejected_ok = 0, total = 0;
  for (int rep = 0; rep < 40; rep++) {
    int nc = 1 + rep % 6, nl = rep % 3, n = 3 * nc + nl;
    random_problem(&g_tp, &rng, nc, nl, n + 1, 0.1);
    double l0[MAXN], l1[MAXN], l2[MAXN];
    int s0[MAXN], s1[MAXN], s2[MAXN];
    physConstraintSolution sol;
    solve(&g_tp, NULL, l0, s0, &sol);
    solve(&g_tp, s0, l1, s1, &sol);
    used += sol.warm_used;
    double dm = 0, lm = 1e-300;
    for (int i = 0; i < n; i++) dm = fmax(dm, fabs(l1[i] - l0[i])), lm = fmax(lm, fabs(l0[i]));
    same += dm <= 1e-10 * lm;
    // all-separating guess where some contact pushes: rejected, still exact
    int wrong[MAXN];
    for (int i = 0; i < n; i++) wrong[i] = PHYS_ROW_SEPARATING;
    physStatus st = solve(&g_tp, wrong, l2, s2, &sol);
    int pushes = 0;
    for (int i = 0; i < n; i++) pushes |= l0[i] != 0;
    rejected_ok += st == PHYS_OK && sol.warm_used == !pushes && violation(&g_tp, l2, TOL) <= TOL;
    total++;
  }
  printf("warm: %d/%d used with the solution's labels, %d/%d identical, %d/%d wrong guesses handled\n", used,
         total, same, total, rejected_ok, total);
  CHECK(used == total);
  CHECK(same == total);
  CHECK(rejected_ok == total);
}

//---------------------------------------------------------------------------------------------------------
// special cases

// mu = 0 everywhere: tangent impulses 0, tangent labels U/L by the sign of w; the normals solve the
// frictionless LCP (checked against the brute force over the normals' labels alone)
static void test_frictionless(void) {
  physRng rng;
  phys_rng_seed(&rng, 4242);
  int ok = 0, total = 0;
  for (int rep = 0; rep < 30; rep++) {
    int nc = 1 + rep % 8;
    random_problem(&g_tp, &rng, nc, rep % 2, rep % 3 == 0 ? 6 : 3 * nc + 3, 1.0);
    double lambda[MAXN], w[MAXN];
    int state[MAXN];
    physConstraintSolution sol;
    physStatus st = solve(&g_tp, NULL, lambda, state, &sol);
    velocity(w, &g_tp, lambda);
    int good = st == PHYS_OK && violation(&g_tp, lambda, TOL) <= TOL;
    for (int c = 0; c < nc; c++)
      for (int t = 1; t <= 2; t++) {
        int i = 3 * c + t;
        good &= lambda[i] == 0;
        if (state[3 * c] == PHYS_ROW_CLAMPING)
          good &= state[i] == (w[i] <= 0 ? PHYS_ROW_UPPER : PHYS_ROW_LOWER);
      }
    ok += good;
    total++;
  }
  CHECK(ok == total);
}

// scales: G times a, g times b gives lambda times b/a with the same labels, for a, b over 1e-8 .. 1e8
static void test_scales(void) {
  physRng rng;
  phys_rng_seed(&rng, 31337);
  random_problem(&g_tp, &rng, 5, 2, 8, 0.2);
  double l0[MAXN], l1[MAXN];
  int s0[MAXN], s1[MAXN];
  physConstraintSolution sol;
  CHECK(solve(&g_tp, NULL, l0, s0, &sol) == PHYS_OK);
  const double scales[4] = {1e-8, 1e-3, 1e4, 1e8};
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      g_tp2 = g_tp;
      for (int i = 0; i < g_tp.n * g_tp.n; i++) g_tp2.G[i] *= scales[a];
      for (int i = 0; i < g_tp.n; i++) g_tp2.g[i] *= scales[b];
      CHECK(solve(&g_tp2, NULL, l1, s1, &sol) == PHYS_OK);
      CHECK(violation(&g_tp2, l1, TOL) <= TOL);
      double dm = 0, lm = 0;
      for (int i = 0; i < g_tp.n; i++) {
        dm = fmax(dm, fabs(l1[i] * scales[a] / scales[b] - l0[i]));
        lm = fmax(lm, fabs(l0[i]));
      }
      CHECK_MSG(dm <= 1e-9 * lm, "scale G %g g %g: diff %.3g", scales[a], scales[b], dm / lm);
      CHECK(memcmp(s0, s1, sizeof(int) * (size_t)g_tp.n) == 0);
    }
  // contacts of very different stiffness in one problem: block-diagonal G with blocks 1e-6 and 1e6
  random_problem(&g_tp2, &rng, 4, 0, 14, 0.0);
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) {
      int bi = i / 6, bj = j / 6;
      g_tp2.G[i * 12 + j] = bi != bj ? 0 : g_tp2.G[i * 12 + j] * (bi ? 1e6 : 1e-6);
    }
  CHECK(solve(&g_tp2, NULL, l1, s1, &sol) == PHYS_OK);
  CHECK(violation(&g_tp2, l1, TOL) <= TOL);
}

// a rank-deficient problem with duplicated contacts (the same rows twice): exact, minimal-norm shares
static void test_duplicate(void) {
  physRng rng;
  phys_rng_seed(&rng, 5);
  random_problem(&g_tp, &rng, 2, 0, 7, 0.0);
  // contact 1 := contact 0
  for (int r = 0; r < 3; r++) {
    memcpy(g_tp.J + (3 + r) * 7, g_tp.J + r * 7, sizeof(double) * 7);
    g_tp.g[3 + r] = g_tp.g[r];
  }
  g_tp.mu[1] = g_tp.mu[0];
  g_tp.g[0] = g_tp.g[3] = -1;   // pushing
  delassus(&g_tp);
  double lambda[MAXN];
  int state[MAXN];
  physConstraintSolution sol;
  CHECK(solve(&g_tp, NULL, lambda, state, &sol) == PHYS_OK);
  CHECK(violation(&g_tp, lambda, TOL) <= TOL);
  for (int r = 0; r < 3; r++) CHECK_NEAR(lambda[r], lambda[3 + r], 1e-12 * fabs(lambda[0]));
  CHECK(lambda[0] > 0);
}

// a tied contact whose minimal-norm share would be negative: J_n rows a = (1,0), b = (0,1), c = (1,1),
// M = I, v_f = (-1, -0.1): every solution has J' lambda = (1, 0.1), i.e. lambda = (1 - t, 0.1 - t, t) for
// t in [0, 0.1]; the pseudo-inverse of the three-row system gives lambda_b < 0, so the solver must keep a
// point of that segment (Lemke's, refined)
static void test_tied(void) {
  testProblem* tp = &g_tp;
  tp->nc = 3, tp->nl = 0, tp->n = 9, tp->nv = 2;
  memset(tp->J, 0, sizeof(tp->J));
  memset(tp->Minv, 0, sizeof(tp->Minv));
  tp->Minv[0] = tp->Minv[3] = 1;
  tp->J[0 * 2 + 0] = 1, tp->J[3 * 2 + 1] = 1, tp->J[6 * 2 + 0] = 1, tp->J[6 * 2 + 1] = 1;
  tp->J[1 * 2 + 1] = 1, tp->J[4 * 2 + 0] = 1;   // some tangent rows, frictionless
  delassus(tp);
  const double vf[2] = {-1, -0.1};
  for (int r = 0; r < 9; r++) tp->g[r] = tp->J[r * 2] * vf[0] + tp->J[r * 2 + 1] * vf[1];
  for (int c = 0; c < 3; c++) tp->mu[c] = 0;
  double lambda[MAXN];
  int state[MAXN];
  physConstraintSolution sol;
  CHECK(solve(tp, NULL, lambda, state, &sol) == PHYS_OK);
  CHECK(violation(tp, lambda, TOL) <= TOL);
  double t = lambda[6];
  CHECK(t >= -1e-12 && t <= 0.1 + 1e-12);
  CHECK_NEAR(lambda[0], 1 - t, 1e-12);
  CHECK_NEAR(lambda[3], 0.1 - t, 1e-12);
  CHECK(states_consistent(tp, lambda, state));
}

// nearly singular and nearly inconsistent problems, as a resting box's flickering contact sets make them:
// 3 or 4 corners whose contact frames are tilted by 1e-4 rad (so the tangent rows are almost, not exactly,
// dependent) with drift-stabilization terms on the normals: solved exactly, every one (measured: 60 of 60, worst
// relative violation 2.2e-16; before lcp_relabel 59 of 60, worst 1.2e-7)
static void test_nearly_singular(void) {
  physRng rng;
  phys_rng_seed(&rng, 2024);
  double worst = 0;
  int exact = 0, total = 0;
  for (int rep = 0; rep < 60; rep++) {
    double rest[6] = {0}, lambda[MAXN];
    int state[MAXN];
    box_problem(&g_tp, 1, 0.1, 0.1, 0.1, 0.8, rest, 0.001, 9.81);
    int nc = 3 + rep % 2;
    // tilt every contact row by a small random rotation of its direction: J_row += 1e-4 * random
    for (int r = 0; r < 12 * 6; r++) g_tp.J[r] += 1e-4 * phys_rng_range(&rng, -1, 1) * fabs(g_tp.J[r]);
    g_tp.nc = nc, g_tp.n = 3 * nc;
    for (int r = 0; r < 3 * nc; r++) {
      double s = 0;
      for (int k = 0; k < 6; k++) s += g_tp.J[r * 6 + k] * (k == 2 ? -9.81e-3 : 0);
      g_tp.g[r] = s + (r % 3 == 0 ? -0.2 * phys_rng_range(&rng, 0, 1e-5) / 0.001 : 0);
    }
    delassus(&g_tp);
    physConstraintSolution sol;
    physStatus st = solve(&g_tp, NULL, lambda, state, &sol);
    double v = violation(&g_tp, lambda, 1e-6);
    worst = fmax(worst, v);
    exact += st == PHYS_OK && v <= TOL;
    total++;
  }
  printf("nearly singular: %d/%d exact, worst relative violation %.2g\n", exact, total, worst);
  CHECK(exact == total && worst <= TOL);
}

// a cube's face resting on the floor (lcp_resting_faces.h: 12 rows, G of rank 6, recorded from the main job):
// solved exactly (status, natural-map residual ~1e-17 m/s, the conditions, consistent labels), where Lemke used
// to end on a ray or at a point without an exact solution; the result is the minimal-norm solution of its
// clamping subsystem, so the warm start from its own labels returns it again without a pivot
static void test_resting_face(void) {
  testProblem* tp = &g_tp;
  for (int f = 0; f < RESTING_NFACE; f++) {
    tp->nc = 4, tp->nl = 0, tp->n = 12, tp->nv = 6;
    memcpy(tp->G, resting_G[f], sizeof(resting_G[f]));
    memcpy(tp->g, resting_g[f], sizeof(resting_g[f]));
    memcpy(tp->mu, resting_mu[f], sizeof(resting_mu[f]));
    double lambda[MAXN], lw[MAXN];
    int state[MAXN], sw[MAXN];
    physConstraintSolution sol;
    CHECK(solve(tp, NULL, lambda, state, &sol) == PHYS_OK);
    printf("resting face %d: %d pivots, residual %.3g m/s, violation %.3g\n", f, sol.iterations, sol.residual,
           violation(tp, lambda, TOL));
    CHECK(sol.iterations > 0 && sol.residual <= 1e-12);
    CHECK(violation(tp, lambda, TOL) <= 1e-12);
    CHECK(states_consistent(tp, lambda, state));
    CHECK(solve(tp, state, lw, sw, &sol) == PHYS_OK && sol.warm_used == 1 && sol.iterations == 0);
    for (int i = 0; i < 12; i++) CHECK(lw[i] == lambda[i]);
  }
}

// the cube sliding on a face, three corners, an edge (lcp_sliding_faces.h: singular G, recorded from the main job,
// where every candidate from Lemke's point used to end on an inconsistent clamping subsystem): solved exactly
// (status, no warning, natural-map residual <= 1e-12 m/s, the conditions, consistent labels), and the solution is
// one the brute-force enumeration of every label set finds
static void test_sliding_faces(void) {
  testProblem* tp = &g_tp;
  static double sols[100 * MAXN];
  for (int f = 0; f < SLIDING_NPROB; f++) {
    int nc = sliding_nc[f], n = 3 * nc;
    tp->nc = nc, tp->nl = 0, tp->n = n, tp->nv = 6;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) tp->G[i * n + j] = sliding_G[f][i * n + j];
    memcpy(tp->g, sliding_g[f], sizeof(double) * (size_t)n);
    memcpy(tp->mu, sliding_mu[f], sizeof(double) * (size_t)nc);
    double lambda[MAXN];
    int state[MAXN];
    physConstraintSolution sol;
    physData d = make_data();
    physConstraintProblem p = view(tp, NULL);
    sol.lambda = lambda, sol.state = state;
    CHECK(phys_solve_lcp(NULL, &d, &p, &sol) == PHYS_OK && d.nwarning == 0);
    printf("sliding face %d (%d contacts): %d pivots, residual %.3g m/s\n", f, nc, sol.iterations, sol.residual);
    CHECK(sol.residual <= 1e-12 && violation(tp, lambda, TOL) <= 1e-12);
    CHECK(states_consistent(tp, lambda, state));
    int nsol = brute_force(sols, tp), match = 0;
    for (int s = 0; s < nsol && !match; s++) {
      double dm = 0, lm = 1e-300;
      for (int i = 0; i < n; i++) dm = fmax(dm, fabs(sols[s * n + i] - lambda[i])), lm = fmax(lm, fabs(lambda[i]));
      match = dm <= 1e-9 * lm;
    }
    CHECK_MSG(nsol >= 1 && match, "sliding face %d: %d brute-force solutions, the solver's among them: %d", f, nsol,
              match);
  }
}

// degenerate input: no rows; g = 0 (lambda = 0); non-finite G (status, warning, zeros, no NaN)
static void test_degenerate(void) {
  double lambda[MAXN];
  int state[MAXN];
  physConstraintSolution sol;
  testProblem* tp = &g_tp;
  tp->nc = tp->nl = tp->n = 0;
  CHECK(solve(tp, NULL, lambda, state, &sol) == PHYS_OK);

  physRng rng;
  phys_rng_seed(&rng, 8);
  random_problem(tp, &rng, 3, 1, 6, 0.0);
  memset(tp->g, 0, sizeof(tp->g));
  CHECK(solve(tp, NULL, lambda, state, &sol) == PHYS_OK);
  for (int i = 0; i < tp->n; i++) CHECK(lambda[i] == 0);

  random_problem(tp, &rng, 3, 1, 6, 0.0);
  tp->G[5] = NAN;
  physData d = make_data();
  physConstraintProblem p = view(tp, NULL);
  sol.lambda = lambda, sol.state = state;
  CHECK(phys_solve_lcp(NULL, &d, &p, &sol) == PHYS_ERR_NUMERIC);
  CHECK(d.nwarning == 1 && strstr(d.lastwarning, "lcp") != NULL);
  for (int i = 0; i < tp->n; i++) CHECK(lambda[i] == 0 && state[i] == PHYS_ROW_SEPARATING);
  // the same with a warm guess (inputs then checked through the first candidate), and with g = inf
  int guess[MAXN];
  for (int i = 0; i < tp->n; i++) guess[i] = PHYS_ROW_CLAMPING;
  for (int bad = 0; bad < 2; bad++) {
    if (bad == 1) tp->G[5] = tp->G[5 * tp->n], tp->g[2] = INFINITY;   // G symmetric again, g not finite
    d = make_data();
    p = view(tp, guess);
    CHECK(phys_solve_lcp(NULL, &d, &p, &sol) == PHYS_ERR_NUMERIC && sol.warm_used == 0);
    CHECK(d.nwarning == 1 && strstr(d.lastwarning, "non-finite") != NULL);
    for (int i = 0; i < tp->n; i++) CHECK(lambda[i] == 0 && state[i] == PHYS_ROW_SEPARATING);
  }

  // a zero Jacobian row (a contact whose rows do not move anything) with a pushing g: no solution
  // exists; a status and a warning, finite impulses
  random_problem(tp, &rng, 2, 0, 8, 0.0);
  for (int k = 0; k < 8; k++) tp->J[3 * 8 + k] = 0;
  delassus(tp);
  tp->g[3] = -1;
  d = make_data();
  physStatus st = phys_solve_lcp(NULL, &d, &p, &sol);
  CHECK(st == PHYS_ERR_NUMERIC && d.nwarning == 1);
  for (int i = 0; i < tp->n; i++) CHECK(isfinite(lambda[i]));
  // the same row with a separating g is fine
  tp->g[3] = 0.5;
  d = make_data();
  CHECK(phys_solve_lcp(NULL, &d, &p, &sol) == PHYS_OK && d.nwarning == 0);
  CHECK(violation(tp, lambda, TOL) <= TOL);
}

// the algorithm does not depend on the arena's free space: with exactly the scratch a solve takes free (its
// high-water mark on an empty arena) the result is bit-identical (the solver used to refuse, by an upper
// estimate of its need, when less than that estimate was free); with less, PHYS_ERR_NOMEM, impulses 0, a
// warning, the arena as it was
static void test_arena(void) {
  testProblem* tp = &g_tp;
  physRng rng;
  phys_rng_seed(&rng, 12);
  random_problem(tp, &rng, 6, 2, 12, 0.0);
  static double lref[MAXN], lam[MAXN];
  static int sref[MAXN], st[MAXN];
  physConstraintSolution ref = {.lambda = lref, .state = sref}, sol = {.lambda = lam, .state = st};
  physData d = make_data();
  physConstraintProblem p = view(tp, NULL);
  CHECK(phys_solve_lcp(NULL, &d, &p, &ref) == PHYS_OK && ref.iterations > 0);
  size_t need = d.pstack_max;
  for (int k = 0; k < 2; k++) {
    d = make_data();
    // k = 0: at least the need free (the start 8-aligned, as on an empty arena: < 8 to spare); 1: 8 fewer
    d.pstack = d.pstack_max = ((d.nstack - need) & ~(size_t)7) + 8 * (size_t)k;
    size_t held = d.pstack;
    physStatus s = phys_solve_lcp(NULL, &d, &p, &sol);
    CHECK(d.pstack == held && d.arena_guard == NULL);
    if (k == 0) {
      CHECK_MSG(s == PHYS_OK && d.nwarning == 0, "%zu doubles free: %s (%s)", need, phys_status_str(s), d.lastwarning);
      CHECK(memcmp(lam, lref, sizeof(double) * (size_t)tp->n) == 0 && memcmp(st, sref, sizeof(int) * (size_t)tp->n) == 0);
    } else {
      CHECK_MSG(s == PHYS_ERR_NOMEM && d.nwarning == 1 && strstr(d.lastwarning, "lcp: scratch arena exhausted"), "%s",
                d.lastwarning);
      for (int i = 0; i < tp->n; i++) CHECK(lam[i] == 0 && st[i] == PHYS_ROW_SEPARATING);
    }
  }
}

// block principal pivoting from the step's cold guess (every row separating: no contact in the last list):
// solved without Lemke, exactly. Frictionless problems with a positive definite G have one solution: the
// pivoting's is Lemke's (cold, no guess) to rounding. With friction: every condition, and most without Lemke
static void test_pivoting(void) {
  physRng rng;
  phys_rng_seed(&rng, 4242);
  int nprob = 0, nlemke = 0, nfail = 0, far = 0;
  double worst = 0, diff = 0;
  for (int rep = 0; rep < 40; rep++) {
    int nc = 8 + rep % 13, frictionless = rep % 2 == 0, n = 3 * nc, nv = n + 2;
    random_problem(&g_tp, &rng, nc, 0, nv, frictionless ? 1.0 : 0.0);
    static double lcold[MAXN], lwarm[MAXN];
    int scold[MAXN], swarm[MAXN], guess[MAXN], flips = 0;
    for (int i = 0; i < n; i++) guess[i] = PHYS_ROW_SEPARATING;
    physConstraintSolution sc, sw;
    CHECK(solve(&g_tp, NULL, lcold, scold, &sc) == PHYS_OK);
    CHECK(solve(&g_tp, guess, lwarm, swarm, &sw) == PHYS_OK);
    for (int i = 0; i < n; i += 3) flips += swarm[i] != PHYS_ROW_SEPARATING;
    far += flips >= 4;   // more normals to correct than the 3 corrections before this took
    double v = violation(&g_tp, lwarm, TOL), scale = 0;
    worst = fmax(worst, v);
    nfail += !(v <= TOL) || !states_consistent(&g_tp, lwarm, swarm);
    nlemke += sw.iterations > 0;
    if (frictionless) {
      CHECK(sw.iterations == 0);
      for (int i = 0; i < n; i++) scale = fmax(scale, fabs(lcold[i]));
      for (int i = 0; i < n; i++) diff = fmax(diff, fabs(lwarm[i] - lcold[i]) / fmax(scale, 1e-300));
    }
    nprob++;
  }
  printf("pivoting: %d problems (%d with >= 4 normals to clamp), %d needed Lemke, worst violation %.2g, "
         "frictionless vs Lemke %.2g\n", nprob, far, nlemke, worst, diff);
  CHECK(nfail == 0);
  CHECK(far >= 15);
  CHECK(nlemke <= nprob / 4);
  CHECK(diff <= 1e-12);
}

int main(void) {
  test_random();
  test_brute_force();
  test_box();
  test_warm();
  test_frictionless();
  test_scales();
  test_duplicate();
  test_tied();
  test_nearly_singular();
  test_resting_face();
  test_sliding_faces();
  test_degenerate();
  test_arena();
  test_pivoting();
  return test_done();
}

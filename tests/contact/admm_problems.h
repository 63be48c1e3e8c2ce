// admm_problems.h - constraint problems with known answers for the tests of the ADMM-based solvers
// (admm, cone, ccp): a free box on a plane touching at its 4 bottom corners (singular Delassus matrix),
// single contacts with diagonal G, random problems, and an independent check of the Coulomb conditions.
#ifndef PHYS_ADMM_PROBLEMS_H
#define PHYS_ADMM_PROBLEMS_H

#include "test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "physid.h"
#include "rng.h"

#define PB_MAXN 64   // rows
#define PB_MAXV 24   // dofs

// a problem with its own storage; J and M^-1 kept to map impulses back to velocities
typedef struct pbProblem_ {
  physConstraintProblem p;
  double J[PB_MAXN * PB_MAXV];
  double Minv[PB_MAXV];       // diagonal inverse mass
  double vf[PB_MAXV];         // free velocity
  double G[PB_MAXN * PB_MAXN];
  double g[PB_MAXN];
  double mu[PB_MAXN];
  double lambda[PB_MAXN];
  double lambda0[PB_MAXN];    // warm-start guess (p.lambda0 when set)
  int state[PB_MAXN];
  physConstraintSolution sol;
} pbProblem;

// model and data whose options and arena the solvers use (the box fixture; arena sized from its nconmax)
static inline void pb_setup(physModel** m, physData** d) {
  physLog log;
  memset(&log, 0, sizeof(log));
  *m = phys_load("tests/data/box.xml", NULL, &log);
  if (!*m) {
    fprintf(stderr, "cannot load tests/data/box.xml: %s\n", log.error);
    exit(1);
  }
  *d = phys_make_data(*m);
}

// wire the pointers of p to the storage; sizes nc, nl
static inline void pb_init(pbProblem* b, int nc, int nl, int nv) {
  memset(&b->p, 0, sizeof(b->p));
  b->p.nc = nc;
  b->p.nl = nl;
  b->p.n = 3 * nc + nl;
  b->p.nv = nv;
  b->p.J = b->J;
  b->p.G = b->G;
  b->p.g = b->g;
  b->p.mu = b->mu;
  b->p.warm = NULL;
  b->sol.lambda = b->lambda;
  b->sol.state = b->state;
}

// G = J diag(Minv) J',  g = J vf + bias (bias may be NULL)
static inline void pb_delassus(pbProblem* b, const double* bias) {
  int n = b->p.n, nv = b->p.nv;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += b->J[i * nv + k] * b->Minv[k] * b->J[j * nv + k];
      b->G[i * n + j] = s;
    }
    double s = bias ? bias[i] : 0;
    for (int k = 0; k < nv; k++) s += b->J[i * nv + k] * b->vf[k];
    b->g[i] = s;
  }
}

// v+ = vf + M^-1 J' lambda
static inline void pb_velocity(double* v, const pbProblem* b) {
  int n = b->p.n, nv = b->p.nv;
  for (int k = 0; k < nv; k++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += b->J[i * nv + k] * b->lambda[i];
    v[k] = b->vf[k] + b->Minv[k] * s;
  }
}

// one row of a free body's contact Jacobian (dofs: world linear velocity of the com 3, world angular
// velocity 3): direction e at offset r from the com: [e', (r x e)']
static inline void pb_row(double* Jrow, const double r[3], const double e[3]) {
  Jrow[0] = e[0];
  Jrow[1] = e[1];
  Jrow[2] = e[2];
  Jrow[3] = r[1] * e[2] - r[2] * e[1];
  Jrow[4] = r[2] * e[0] - r[0] * e[2];
  Jrow[5] = r[0] * e[1] - r[1] * e[0];
}

// a cube (mass mass, half size h) resting on the plane z = 0 on its 4 bottom corners, tangent frames
// rotated by yaw about z; free velocity: v0 (linear) plus gravity*dt downwards, no rotation. G is 12 x 12
// of rank 6 (singular). nl extra limit rows copy the normals of the first nl corners (redundant, rank kept)
static inline void pb_box(pbProblem* b, double mass, double h, double mu, const double v0[3], double dt,
                          double yaw) {
  const double grav = 9.81;
  pb_init(b, 4, 0, 6);
  double I = mass * (2 * h) * (2 * h) / 6;  // cube inertia about any axis through the centre
  for (int k = 0; k < 3; k++) {
    b->Minv[k] = 1 / mass;
    b->Minv[3 + k] = 1 / I;
    b->vf[k] = v0[k];
    b->vf[3 + k] = 0;
  }
  b->vf[2] -= grav * dt;
  double c = cos(yaw), s = sin(yaw);
  double n[3] = {0, 0, 1}, t1[3] = {c, s, 0}, t2[3] = {-s, c, 0};
  for (int i = 0; i < 4; i++) {
    double r[3] = {(i & 1) ? h : -h, (i & 2) ? h : -h, -h};
    pb_row(b->J + (3 * i + 0) * 6, r, n);
    pb_row(b->J + (3 * i + 1) * 6, r, t1);
    pb_row(b->J + (3 * i + 2) * 6, r, t2);
    b->mu[i] = mu;
  }
  pb_delassus(b, NULL);
}

// random problem: J (n x nv) uniform in [-1, 1] (G = J M^-1 J' singular when n > nv), M^-1 diagonal in
// [0.2, 2], g = J v_f with v_f uniform in [-1, 1] (a bias would make singular problems unbounded: a
// direction d in the cones with J'd = 0 and g'd < 0), mu in [0, 1.2]; with press > 0 the normals of a
// nonsingular problem (n <= nv) get the extra bias -press (contacts pushed together)
static inline void pb_random(pbProblem* b, physRng* r, int nc, int nl, int nv, double press) {
  pb_init(b, nc, nl, nv);
  int n = b->p.n;
  for (int i = 0; i < n * nv; i++) b->J[i] = phys_rng_range(r, -1, 1);
  for (int k = 0; k < nv; k++) {
    b->Minv[k] = phys_rng_range(r, 0.2, 2);
    b->vf[k] = phys_rng_range(r, -1, 1);
  }
  double bias[PB_MAXN];
  for (int i = 0; i < n; i++) bias[i] = (n <= nv && (i >= 3 * nc || i % 3 == 0)) ? -press : 0;
  pb_delassus(b, bias);
  for (int i = 0; i < nc; i++) b->mu[i] = phys_rng_range(r, 0, 1.2);
}

// row velocity w = G lambda + g
static inline void pb_rowvel(double* w, const pbProblem* b) {
  int n = b->p.n;
  for (int i = 0; i < n; i++) {
    double s = b->g[i];
    for (int j = 0; j < n; j++) s += b->G[i * n + j] * b->lambda[j];
    w[i] = s;
  }
}

// Coulomb conditions with maximal dissipation, checked independently of the solvers:
// returns the largest violation in m/s (impulse conditions scaled by L = max G_ii):
// cone:  lambda_n >= 0, ||lambda_t|| <= mu lambda_n, w_n >= 0, lambda_n w_n = 0 (as min(lambda_n L, w_n)),
//        sticking: w_t = 0; sliding: ||lambda_t|| = mu lambda_n and w_t = -sigma lambda_t/||lambda_t||, sigma >= 0.
// relaxed (ccp): the same with w in the dual cone mu ||w_t|| <= w_n and lambda . w = 0 per contact.
static inline double pb_violation(const pbProblem* b, int relaxed) {
  int n = b->p.n, nc = b->p.nc;
  double w[PB_MAXN], L = 0, v = 0;
  for (int i = 0; i < n; i++) L = fmax(L, b->G[i * n + i]);
  pb_rowvel(w, b);
  for (int i = 0; i < nc; i++) {
    const double* l = b->lambda + 3 * i;
    const double* wi = w + 3 * i;
    double mu = b->mu[i], lt = hypot(l[1], l[2]), wt = hypot(wi[1], wi[2]);
    v = fmax(v, L * fmax(0, -l[0]));                  // lambda_n >= 0
    v = fmax(v, L * fmax(0, lt - mu * l[0]));         // in the cone
    if (!relaxed) {
      v = fmax(v, fmax(0, -wi[0]));                   // w_n >= 0
      v = fmax(v, fmin(L * l[0], fabs(wi[0])));       // complementarity
      // maximal dissipation, the smaller violation of two hypotheses: sticking (lambda_t inside the cone,
      // w_t = 0) or sliding (lambda_t on the surface, w_t = -sigma lambda_t/|lambda_t| with sigma >= 0)
      double stick = wt;
      double slide = L * fabs(lt - mu * l[0]);
      if (lt > 0) {
        double u0 = l[1] / lt, u1 = l[2] / lt, wu = wi[1] * u0 + wi[2] * u1;
        slide += hypot(wi[1] - wu * u0, wi[2] - wu * u1) + fmax(0, wu);
      } else {
        slide += wt;  // lambda_t = 0 on the surface only when mu lambda_n = 0: then w_t is free
        if (!(mu * l[0] > 0)) slide = 0;
      }
      v = fmax(v, fmin(stick, slide));
    } else {
      v = fmax(v, fmax(0, mu * wt - wi[0]));          // w in the dual cone
      double dot = l[0] * wi[0] + l[1] * wi[1] + l[2] * wi[2];
      double scale = hypot(l[0], lt) + 1e-300;
      v = fmax(v, fabs(dot) / scale);                 // lambda . w = 0 (in m/s per unit impulse)
    }
  }
  for (int k = 3 * nc; k < n; k++) {
    v = fmax(v, L * fmax(0, -b->lambda[k]));
    v = fmax(v, fmax(0, -w[k]));
    v = fmax(v, fmin(L * b->lambda[k], fabs(w[k])));
  }
  return v;
}

// a problem dumped from a simulation (tests/data/contact/solver/*.txt): a '#' comment line, then nc nl t,
// mu (nc), g (n), lambda0 (n, last step's impulses: p.lambda0) and G (n rows of n), whitespace-separated.
// No J: checks use pb_violation and the residual. Returns 0 (and prints why) if it cannot be read.
static inline int pb_load(pbProblem* b, const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 0;
  }
  int nc = 0, nl = 0, ok = 1, c;
  double t;
  while ((c = fgetc(f)) != '\n' && c != EOF) {
  }
  ok = fscanf(f, "%d %d %lf", &nc, &nl, &t) == 3 && nc >= 0 && nl >= 0 && 3 * nc + nl <= PB_MAXN;
  if (ok) {
    pb_init(b, nc, nl, 0);
    int n = b->p.n;
    for (int i = 0; i < nc && ok; i++) ok = fscanf(f, "%lf", b->mu + i) == 1;
    for (int i = 0; i < n && ok; i++) ok = fscanf(f, "%lf", b->g + i) == 1;
    for (int i = 0; i < n && ok; i++) ok = fscanf(f, "%lf", b->lambda0 + i) == 1;
    for (int i = 0; i < n * n && ok; i++) ok = fscanf(f, "%lf", b->G + i) == 1;
    b->p.lambda0 = b->lambda0;
  }
  fclose(f);
  if (!ok) fprintf(stderr, "cannot read %s\n", path);
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// tests shared by the cone and ccp solvers (ccp = 1 selects the relaxed cone in pb_violation)

typedef physStatus (*pbSolver)(const physModel* m, physData* d, const physConstraintProblem* p,
                               physConstraintSolution* sol);

// the same problem twice: identical impulses and iteration counts
static inline void pb_test_determinism(const physModel* m, physData* d, pbSolver solve) {
  static pbProblem b;
  double v0[3] = {0.3, 0.8, 0}, l1[12];
  pb_box(&b, 1, 0.1, 0.7, v0, 0.01, 0.4);
  CHECK(solve(m, d, &b.p, &b.sol) == PHYS_OK);
  memcpy(l1, b.lambda, sizeof(l1));
  int it = b.sol.iterations;
  CHECK(solve(m, d, &b.p, &b.sol) == PHYS_OK);
  CHECK(memcmp(l1, b.lambda, sizeof(l1)) == 0);
  CHECK(it == b.sol.iterations);
}

// warm start: with last step's impulses as p.lambda0 (here the answer of the same problem, as for a body
// at rest) the guess is verified and kept: no ADMM iteration, the same impulses; a guess 2% off on a
// sticking box is polished back to the answer, also without ADMM
static inline void pb_test_warm_start(const physModel* m, physData* d, pbSolver solve, int ccp) {
  static pbProblem b;
  double v0[3] = {0.01, 0.02, 0}, l1[12], guess[12];
  pb_box(&b, 1, 0.1, 0.7, v0, 0.01, 0.2);
  CHECK(solve(m, d, &b.p, &b.sol) == PHYS_OK);
  memcpy(l1, b.lambda, sizeof(l1));
  CHECK(b.sol.iterations > 0 && b.sol.warm_used == 0);
  memcpy(guess, l1, sizeof(guess));
  b.p.lambda0 = guess;
  CHECK(solve(m, d, &b.p, &b.sol) == PHYS_OK);
  CHECK(b.sol.warm_used == 1 && b.sol.iterations == 0);
  for (int i = 0; i < 12; i++) CHECK_NEAR(b.lambda[i], l1[i], 1e-12);
  for (int i = 0; i < 12; i++) guess[i] = 1.02 * l1[i];
  CHECK(solve(m, d, &b.p, &b.sol) == PHYS_OK);
  CHECK(b.sol.warm_used == 1 && b.sol.iterations == 0);
  CHECK(b.sol.residual <= 1e-14);
  CHECK(pb_violation(&b, ccp) <= 1e-12);
  b.p.lambda0 = NULL;
}

// problems dumped from MuJoCo's humanoid falling onto the floor (tests/data/contact/solver, `files`), on which ADMM
// stalled (1e-5..1e-3 m/s left after the whole budget) with a contact between sticking and sliding: the
// solver must now converge (Newton fallback, admm.h) to the tolerance, checked independently
static inline void pb_test_dumped(const physModel* m, physData* d, pbSolver solve, int ccp, const char* const files[2],
                           double tol) {
  static pbProblem b;
  for (int k = 0; k < 2; k++) {
    if (!pb_load(&b, files[k])) {
      CHECK_MSG(0, "cannot load %s", files[k]);
      continue;
    }
    double gmax = 1;
    for (int i = 0; i < b.p.n; i++) gmax = fmax(gmax, fabs(b.g[i]));
    physStatus st = solve(m, d, &b.p, &b.sol);
    CHECK_MSG(st == PHYS_OK, "%s: status %d, residual %g", files[k], st, b.sol.residual);
    CHECK(b.sol.residual <= tol * gmax);
    CHECK_MSG(pb_violation(&b, ccp) <= 10 * tol * gmax, "%s: violation %g", files[k], pb_violation(&b, ccp));
    printf("%s: n = %d, %d iterations, residual %.2e\n", files[k], b.p.n, b.sol.iterations, b.sol.residual);
  }
}

#endif  // PHYS_ADMM_PROBLEMS_H

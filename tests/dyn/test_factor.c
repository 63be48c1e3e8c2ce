// test_factor.c - src/dyn/factor.c: the tree-sparse L'DL factorization of M~ = qM + diag(add).
// On MuJoCo's humanoid, Atlas (URDF), an Atlas-like tree and the humanoid-like trees of dyn_models.h built
// with the spec API, a serial chain and a lone free body, at random states:
//  - the factor's pattern: L_ki != 0 only for the ancestors i of k (no fill-in), the strict upper triangle
//    untouched, and L' D L reproduces M~ entrywise;
//  - phys_solve_m against dense Cholesky solves (src/math/chol.c), aliasing included;
//  - the half-solve: y_b . y_c = b' M~^-1 c (the dot-product test of G = Y Y'), y zero off the nonzeros of b
//    and their ancestors, the listed indices exactly the nonzeros of y, descending;
//  - the factor never reads entries off the pattern (NaN there changes nothing), the dense pattern (NULL)
//    factors any SPD matrix as the explicit chain does, a non-positive pivot is reported at its dof;
//  - the solve on a range of whole trees of a forest (phys_ldl_solve_range) for b zero off it: bit for bit
//    the whole solve, also over two trees and in place.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chol.h"
#include "dyn.h"
#include "dyn_models.h"
#include "factor.h"
#include "test.h"

#define HUMANOID "/usr/share/mujoco/model/humanoid/humanoid.xml"
#define ATLAS "/usr/share/doc/dart/data/sdf/atlas/atlas_v3_no_head.urdf"

//---------------------------------------------------------------------------------------------------------
// models

// serial chain of n hinges (each dof's parent the one before: the factor is dense)
static physModel* chain_model(uint64_t seed, int n) {
  physRng r;
  phys_rng_seed(&r, seed);
  physSpec* s = phys_spec_new();
  int b = 0;
  for (int k = 0; k < n; k++) {
    b = tm_body(s, &r, b, 0.05, 0.1, -0.3);
    tm_joint(s, &r, b, PHYS_JNT_HINGE);
  }
  return tm_compile(s);
}

// one free body (6 dofs, one chain)
static physModel* free_model(uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physSpec* s = phys_spec_new();
  int b = tm_body(s, &r, 0, 0, 0, 1);
  tm_joint(s, &r, b, PHYS_JNT_FREE);
  return tm_compile(s);
}

// n hinges in series from parent, each on its own body; returns the last body
static int limb(physSpec* s, physRng* r, int parent, int n, double dx, double dy, double dz) {
  int b = parent;
  for (int k = 0; k < n; k++) {
    b = tm_body(s, r, b, dx, dy, dz);
    tm_joint(s, r, b, PHYS_JNT_HINGE);
  }
  return b;
}

// Atlas-like tree (33 dofs as Atlas v3 without head): floating pelvis, a 3-hinge back, two 6-hinge arms on
// the torso, two 6-hinge legs on the pelvis, armature on every hinge
static physModel* atlas_like_model(uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physSpec* s = phys_spec_new();
  int pelvis = tm_body(s, &r, 0, 0, 0, 1);
  tm_joint(s, &r, pelvis, PHYS_JNT_FREE);
  int torso = limb(s, &r, pelvis, 3, 0, 0, 0.1);
  limb(s, &r, torso, 6, 0, 0.2, 0.1);
  limb(s, &r, torso, 6, 0, -0.2, 0.1);
  limb(s, &r, pelvis, 6, 0, 0.1, -0.15);
  limb(s, &r, pelvis, 6, 0, -0.1, -0.15);
  for (int j = 0; j < s->njoint; j++)
    if (s->joint[j].type == PHYS_JNT_HINGE) s->joint[j].armature = phys_rng_range(&r, 0.01, 0.1);
  return tm_compile(s);
}

// a model from a file under /usr/share (Debian packages the test set-up installs); URDF with a floating root
static physModel* file_model(const char* path) {
  physLog log;
  memset(&log, 0, sizeof log);
  physLoadOptions opt = {.urdf_floating = 1, .strict_mesh = 0};
  CHECK_MSG(access(path, R_OK) == 0, "%s missing", path);
  physModel* m = phys_load(path, &opt, &log);
  CHECK_MSG(m != NULL, "%s: %s", path, log.error);
  return m;
}

//---------------------------------------------------------------------------------------------------------
// helpers

// 1 if i is k or an ancestor of k along dof_parentid
static int on_path(const physModel* m, int i, int k) {
  for (int j = k; j >= 0; j = m->dof_parentid[j])
    if (j == i) return 1;
  return 0;
}

// |a|_inf of n values
static double norm_inf(const double* a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

// |a - b|_inf / |b|_inf
static double rel_diff(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i] - b[i]));
  return s / norm_inf(b, n);
}

//---------------------------------------------------------------------------------------------------------
// tests on one model

// the factor of M~ = qM + diag(add) at a random state: pattern, reconstruction, solves, half-solves
static void check_model(const char* name, const physModel* m, uint64_t seed) {
  int nv = m->nv;
  size_t nn = (size_t)nv * (size_t)nv;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, seed);
  double* Mt = calloc(nn, sizeof(double));
  double* L = calloc(nn, sizeof(double));
  double* F = calloc(nn, sizeof(double));
  double* w = calloc(8 * (size_t)nv, sizeof(double));
  int* list = calloc((size_t)nv, sizeof(int));
  double *add = w, *b = w + nv, *c = w + 2 * nv, *x = w + 3 * nv, *xc = w + 4 * nv, *yb = w + 5 * nv,
         *yc = w + 6 * nv, *t = w + 7 * nv;
  tm_rand_state(m, d, &r, 1);
  tm_forward_kin(m, d);
  phys_crb(m, d);
  for (int i = 0; i < nv; i++) add[i] = phys_rng_range(&r, 0, 0.05);   // dt * damping
  memcpy(Mt, d->qM, nn * sizeof(double));
  for (int i = 0; i < nv; i++) Mt[(size_t)i * nv + i] += add[i];
  CHECK(phys_factor_m(m, d->qLD, d->qM, add) == nv);

  // pattern: lower-triangle nonzeros only at (k, i) with i on k's path to the root (no fill-in), the strict
  // upper triangle M~'s; D > 0
  int off = 0, dpos = 1;
  for (int k = 0; k < nv; k++) {
    for (int i = 0; i < k; i++) off += d->qLD[(size_t)k * nv + i] != 0 && !on_path(m, i, k);
    for (int i = k + 1; i < nv; i++) off += d->qLD[(size_t)k * nv + i] != Mt[(size_t)k * nv + i];
    dpos &= d->qLD[(size_t)k * nv + k] > 0;
  }
  CHECK_MSG(off == 0, "%s: %d entries off the tree pattern", name, off);
  CHECK(dpos);

  // L' D L = M~: (L' D L)_ij = sum_k L_ki D_k L_kj, L unit lower triangular
  double scale = norm_inf(Mt, (int)nn), err = 0;
  for (int k = 0; k < nv; k++)
    for (int i = 0; i <= k; i++) L[(size_t)k * nv + i] = i == k ? 1 : d->qLD[(size_t)k * nv + i];
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      double s = 0;
      for (int k = 0; k < nv; k++) {
        size_t row = (size_t)k * nv;
        s += L[row + i] * d->qLD[row + k] * L[row + j];
      }
      err = fmax(err, fabs(s - Mt[(size_t)i * nv + j]));
    }
  CHECK_MSG(err <= 1e-14 * scale, "%s: |L'DL - M~| = %.3g (|M~| %.3g)", name, err, scale);

  // solves against dense Cholesky, several right-hand sides; in place
  memcpy(F, Mt, nn * sizeof(double));
  CHECK(phys_chol_factor(F, nv, 0) == nv);
  double worst = 0;
  for (int trial = 0; trial < 5; trial++) {
    for (int i = 0; i < nv; i++) b[i] = phys_rng_range(&r, -1, 1);
    phys_solve_m(m, d->qLD, x, b);
    phys_chol_solve(xc, F, b, nv);
    worst = fmax(worst, rel_diff(x, xc, nv));
    memcpy(t, b, (size_t)nv * sizeof(double));
    phys_solve_m(m, d->qLD, t, t);
    CHECK(memcmp(t, x, (size_t)nv * sizeof(double)) == 0);
  }
  printf("factor: %-12s nv %2d: |x - x_chol| / |x_chol| = %.2g, |L'DL - M~| / |M~| = %.2g\n", name, nv, worst,
         err / scale);
  CHECK_MSG(worst <= 1e-12, "%s: solve differs from Cholesky by %.3g", name, worst);

  // half-solve, dot-product test: y_b . y_c = b' M~^-1 c
  for (int trial = 0; trial < 5; trial++) {
    for (int i = 0; i < nv; i++) {
      b[i] = phys_rng_range(&r, -1, 1);
      c[i] = phys_rng_range(&r, -1, 1);
    }
    phys_solve_m_half(m, d->qLD, yb, b, NULL);
    phys_solve_m_half(m, d->qLD, yc, c, NULL);
    phys_chol_solve(xc, F, c, nv);
    double lhs = 0, rhs = 0, mag = 0;
    for (int i = 0; i < nv; i++) {
      lhs += yb[i] * yc[i];
      rhs += b[i] * xc[i];
      mag += fabs(yb[i] * yc[i]);
    }
    CHECK_MSG(fabs(lhs - rhs) <= 1e-12 * mag, "%s: y_b.y_c = %.17g, b'M~^-1 c = %.17g", name, lhs, rhs);
  }

  // phys_chain_union of two dofs: descending, closed under dof_parentid, exactly the dofs on either path to the
  // root; the half-solve on it (phys_solve_m_half_on) equals the full one bit for bit, list included
  int* su = calloc((size_t)nv, sizeof(int));
  int* l2 = calloc((size_t)nv, sizeof(int));
  for (int trial = 0; trial < 5; trial++) {
    int a = (int)phys_rng_range(&r, 0, nv - 0.5), e = trial == 0 ? -1 : (int)phys_rng_range(&r, 0, nv - 0.5);
    int ns = phys_chain_union(m, a, e, su), in = 0, bad = 0;
    for (int k = 0; k < nv; k++) in += on_path(m, k, a) || (e >= 0 && on_path(m, k, e));
    for (int t = 0; t < ns; t++) {
      bad += t > 0 && su[t] >= su[t - 1];
      bad += !(on_path(m, su[t], a) || (e >= 0 && on_path(m, su[t], e)));
    }
    CHECK_MSG(ns == in && bad == 0, "%s: chain union of %d, %d: %d dofs of %d, %d misplaced", name, a, e, ns, in, bad);
    memset(b, 0, (size_t)nv * sizeof(double));
    b[a] = phys_rng_range(&r, -1, 1);
    if (e >= 0) b[e] += phys_rng_range(&r, -1, 1);
    int n1 = phys_solve_m_half(m, d->qLD, yb, b, list);
    memcpy(yc, b, (size_t)nv * sizeof(double));
    int n2 = phys_solve_m_half_on(m, d->qLD, yc, su, ns, l2);
    CHECK(n1 == n2 && memcmp(yb, yc, (size_t)nv * sizeof(double)) == 0 && memcmp(list, l2, (size_t)n1 * sizeof(int)) == 0);
  }
  // phys_ldl_copy: the diagonal and each row's ancestors copied, every other entry untouched
  double* H = calloc(nn, sizeof(double));
  for (size_t k = 0; k < nn; k++) H[k] = -1;
  phys_ldl_copy(H, Mt, m->dof_parentid, nv);
  int wrong = 0;
  for (int k = 0; k < nv; k++)
    for (int i = 0; i < nv; i++) {
      double v = H[(size_t)k * nv + i];
      wrong += (i <= k && on_path(m, i, k)) ? v != Mt[(size_t)k * nv + i] : v != -1;
    }
  CHECK_MSG(wrong == 0, "%s: phys_ldl_copy: %d entries wrong", name, wrong);
  free(su);
  free(l2);
  free(H);

  // a sparse right-hand side (one dof of each trial, a second dof elsewhere): y lives on their paths to the
  // root; the list holds exactly y's nonzeros in descending order; y_b . y_b = b' M~^-1 b
  for (int trial = 0; trial < 8 && nv > 0; trial++) {
    int k1 = (int)(phys_rng_uniform(&r) * nv) % nv, k2 = (int)(phys_rng_uniform(&r) * nv) % nv;
    memset(b, 0, (size_t)nv * sizeof(double));
    b[k1] = phys_rng_range(&r, 0.5, 1);
    b[k2] -= phys_rng_range(&r, 0.5, 1);
    int ns = phys_solve_m_half(m, d->qLD, yb, b, list), bad = 0, nz = 0, order = 1;
    for (int i = 0; i < nv; i++) {
      bad += yb[i] != 0 && !on_path(m, i, k1) && !on_path(m, i, k2);
      nz += yb[i] != 0;
    }
    for (int a = 0; a < ns; a++) {
      order &= yb[list[a]] != 0;
      if (a > 0) order &= list[a] < list[a - 1];
    }
    CHECK_MSG(bad == 0, "%s: half-solve nonzero off the paths of dofs %d, %d", name, k1, k2);
    CHECK(ns == nz && order);
    phys_chol_solve(xc, F, b, nv);
    double lhs = 0, rhs = 0;
    for (int i = 0; i < nv; i++) {
      lhs += yb[i] * yb[i];
      rhs += b[i] * xc[i];
    }
    CHECK_REL(lhs, rhs, 1e-12, 0);
  }

  // phys_ldl_factor in place never reads off the pattern: NaN there, same factor and solve
  memcpy(F, Mt, nn * sizeof(double));
  for (int k = 0; k < nv; k++)
    for (int i = 0; i < nv; i++)
      if (!(i <= k && on_path(m, i, k))) F[(size_t)k * nv + i] = NAN;
  CHECK(phys_ldl_factor(F, m->dof_parentid, nv) == nv);
  int same = 1;
  for (int k = 0; k < nv; k++)
    for (int i = 0; i <= k; i++)
      if (on_path(m, i, k)) same &= F[(size_t)k * nv + i] == d->qLD[(size_t)k * nv + i];
  CHECK_MSG(same, "%s: in-place factor differs from phys_factor_m", name);
  phys_ldl_solve(t, F, m->dof_parentid, b, nv);
  phys_solve_m(m, d->qLD, x, b);
  CHECK(memcmp(t, x, (size_t)nv * sizeof(double)) == 0);

  // a non-positive pivot: the last dof's M~ made 0 is reported at that dof; the first dof made negative
  // after the others (its pivot is eliminated last)
  for (int i = 0; i < nv; i++) t[i] = add[i];
  t[nv - 1] = -d->qM[(size_t)(nv - 1) * nv + nv - 1];
  CHECK(phys_factor_m(m, F, d->qM, t) == nv - 1);
  t[nv - 1] = add[nv - 1];
  t[0] = -1e6;
  CHECK(phys_factor_m(m, F, d->qM, t) == 0);
  free(Mt);
  free(L);
  free(F);
  free(w);
  free(list);
  phys_free_data(d);
}

// the dense pattern (parent NULL) factors any symmetric positive definite matrix: A = B B' + I, n = 9,
// against Cholesky; bitwise the same as the explicit chain parent[k] = k - 1
static void test_dense(void) {
  enum { N = 9 };
  double B[N * N], A[N * N], F[N * N], F2[N * N], C[N * N], b[N], x[N], x2[N], xc[N], y[N], y2[N];
  int chain[N], list[N], list2[N];
  physRng r;
  phys_rng_seed(&r, 11);
  for (int i = 0; i < N * N; i++) B[i] = phys_rng_range(&r, -1, 1);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double s = i == j;
      for (int k = 0; k < N; k++) s += B[i * N + k] * B[j * N + k];
      A[i * N + j] = s;
    }
  for (int i = 0; i < N; i++) b[i] = phys_rng_range(&r, -1, 1);
  b[N - 1] = 0;   // a zero the half-solve skips
  for (int k = 0; k < N; k++) chain[k] = k - 1;
  memcpy(F, A, sizeof A);
  memcpy(F2, A, sizeof A);
  memcpy(C, A, sizeof A);
  CHECK(phys_ldl_factor(F, NULL, N) == N);
  CHECK(phys_ldl_factor(F2, chain, N) == N);
  CHECK(memcmp(F, F2, sizeof F) == 0);
  CHECK(phys_chol_factor(C, N, 0) == N);
  phys_ldl_solve(x, F, NULL, b, N);
  phys_ldl_solve(x2, F2, chain, b, N);
  CHECK(memcmp(x, x2, sizeof x) == 0);
  phys_chol_solve(xc, C, b, N);
  double diff = rel_diff(x, xc, N);
  printf("factor: dense n %d: |x - x_chol| / |x_chol| = %.2g\n", N, diff);
  CHECK(diff <= 1e-12);
  int ns = phys_ldl_half(y, F, NULL, b, N, list), ns2 = phys_ldl_half(y2, F2, chain, b, N, list2);
  CHECK(ns == N - 1 && ns2 == ns && memcmp(y, y2, sizeof y) == 0 && memcmp(list, list2, sizeof(int) * (size_t)ns) == 0);
  double yy = 0, bx = 0;
  for (int i = 0; i < N; i++) {
    yy += y[i] * y[i];
    bx += b[i] * xc[i];
  }
  CHECK_REL(yy, bx, 1e-12, 0);
  // A x = b
  for (int i = 0; i < N; i++) {
    double s = 0;
    for (int j = 0; j < N; j++) s += A[i * N + j] * x[j];
    CHECK_NEAR(s, b[i], 1e-12);
  }
  // a not positive definite matrix: the failing pivot is reported
  memcpy(F, A, sizeof A);
  F[(N - 1) * N + N - 1] = -1;
  CHECK(phys_ldl_factor(F, NULL, N) == N - 1);
  // the same matrix on a branching pattern it does not have gives a wrong answer: the checks are not vacuous
  int star[N];
  for (int i = 0; i < N; i++) star[i] = i == 0 ? -1 : 0;
  memcpy(F, A, sizeof A);
  CHECK(phys_ldl_factor(F, star, N) == N);
  phys_ldl_solve(x, F, star, b, N);
  CHECK(rel_diff(x, xc, N) > 1e-3);
}

// a forest of three trees (indices 0..3, 4..5, 6..9), H = L' D L on its pattern from a random L and D
static void test_range(void) {
  enum { N = 10 };
  const int parent[N] = {-1, 0, 1, 1, -1, 4, -1, 6, 7, 7};
  const int range[][2] = {{0, 4}, {4, 6}, {6, 10}, {0, 6}, {4, 10}};
  double L[N * N] = {0}, H[N * N], F[N * N], b[N], x[N], y[N];
  physRng r;
  phys_rng_seed(&r, 23);
  for (int k = 0; k < N; k++) {
    L[k * N + k] = 1 + phys_rng_range(&r, 0, 1);   // (D on the diagonal)
    for (int i = parent[k]; i >= 0; i = parent[i]) L[k * N + i] = phys_rng_range(&r, -1, 1);
  }
  for (int i = 0; i < N; i++)   // H_ij = sum_k L_ki D_k L_kj (L unit lower on the pattern)
    for (int j = 0; j < N; j++) {
      double h = 0;
      for (int k = 0; k < N; k++) {
        double a = k == i ? 1 : L[k * N + i] * (i < k), c = k == j ? 1 : L[k * N + j] * (j < k);
        h += a * L[k * N + k] * c;
      }
      H[i * N + j] = h;
    }
  memcpy(F, H, sizeof H);
  CHECK(phys_ldl_factor(F, parent, N) == N);
  for (int t = 0; t < 5; t++) {
    int lo = range[t][0], hi = range[t][1];
    for (int i = 0; i < N; i++) b[i] = i >= lo && i < hi ? phys_rng_range(&r, -1, 1) : 0;
    phys_ldl_solve(x, F, parent, b, N);
    for (int i = 0; i < N; i++) y[i] = NAN;
    phys_ldl_solve_range(y, F, parent, b, N, lo, hi);
    CHECK_MSG(memcmp(x, y, sizeof x) == 0, "range %d..%d: not the whole solve bit for bit", lo, hi - 1);
    memcpy(y, b, sizeof b);
    phys_ldl_solve_range(y, F, parent, y, N, lo, hi);   // in place
    CHECK_MSG(memcmp(x, y, sizeof x) == 0, "range %d..%d in place: not the whole solve", lo, hi - 1);
    for (int i = 0; i < N; i++) {   // H x = b: the checks are not vacuous
      double s = 0;
      for (int j = 0; j < N; j++) s += H[i * N + j] * x[j];
      CHECK_NEAR(s, b[i], 1e-12);
    }
  }
}

int main(void) {
  test_range();
  physModel* hum = file_model(HUMANOID);
  physModel* atlas = file_model(ATLAS);
  physModel* models[] = {hum, atlas, atlas_like_model(5), tm_tree(3, 1), tm_tree(4, 0), tm_hinge_tree(7),
                         chain_model(9, 12), free_model(2)};
  const char* names[] = {"humanoid", "atlas", "atlas-like", "tree", "tree-fixed", "hinge-tree", "chain",
                         "free"};
  CHECK(hum && hum->nv == 27 && atlas && atlas->nv == 33);
  for (int i = 0; i < (int)(sizeof models / sizeof models[0]); i++) {
    if (!models[i]) continue;
    for (int s = 0; s < 3; s++) check_model(names[i], models[i], 100 + 17 * (uint64_t)s + (uint64_t)i);
    phys_free_model(models[i]);
  }
  test_dense();
  return test_done();
}

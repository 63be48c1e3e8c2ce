// factor.c - tree-sparse L'DL factorization of the joint-space inertia (factor.h): factor, solve and the
// half-solve of the Delassus product, on any parent pattern (the kinematic tree's) or dense.
#include "factor.h"

#include <math.h>
#include <string.h>

//---------------------------------------------------------------------------------------------------------
// kernels on a parent pattern (NULL: dense)

// H = L' D L in place, leaves first (k = n-1..0; every descendant of k has a larger index and was
// eliminated before k). For each ancestor i of k, walking up:
//   t = H_ki / H_kk,   H_ij -= t H_kj for j = i and its ancestors,   L_ki = t
// (H_kj, j an ancestor of i, is read before the walk reaches j and overwrites it). The updates stay on the
// pattern: i and j are both ancestors of k, so j is an ancestor of i.
int phys_ldl_factor(double* H, const int* parent, int n) {
  for (int k = n - 1; k >= 0; k--) {
    double* Hk = H + (size_t)k * n;
    if (!(Hk[k] > 0)) return k;
    if (!parent) {
      // dense: the ancestors of k are k-1..0
      for (int i = k - 1; i >= 0; i--) {
        double t = Hk[i] / Hk[k];
        double* Hi = H + (size_t)i * n;
        for (int j = i; j >= 0; j--) Hi[j] -= t * Hk[j];
        Hk[i] = t;
      }
      continue;
    }
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      double t = Hk[i] / Hk[k];
      double* Hi = H + (size_t)i * n;
      for (int j = i; j >= 0; j = parent[j]) Hi[j] -= t * Hk[j];
      Hk[i] = t;
    }
  }
  return n;
}

// y_i -= L_ki y_k for the ancestors i of k: one column of the solve with L'
static inline void spread(double* y, const double* Fk, const int* parent, int k, double yk) {
  if (!parent) {
    for (int i = k - 1; i >= 0; i--) y[i] -= Fk[i] * yk;
  } else {
    for (int i = parent[k]; i >= 0; i = parent[i]) y[i] -= Fk[i] * yk;
  }
}

// y <- L'^-1 y in place: L' is upper triangular, (L' y)_i = y_i + sum over the descendants k of i of
// L_ki y_k; leaves first, y_i -= L_ki y_k for the ancestors i of each k (y_k final: its descendants are done)
static void solve_upper(double* y, const double* F, const int* parent, int n) {
  for (int k = n - 1; k >= 0; k--) {
    double yk = y[k];
    if (yk != 0) spread(y, F + (size_t)k * n, parent, k, yk);
  }
}

// x = L^-1 D^-1 L'^-1 b: y = L'^-1 b (solve_upper), then root first x_k = y_k / D_k - sum_i L_ki x_i over
// the ancestors i of k (final before k), summed leaf to root
void phys_ldl_solve(double* x, const double* F, const int* parent, const double* b, int n) {
  if (x != b) memcpy(x, b, sizeof(double) * (size_t)n);
  solve_upper(x, F, parent, n);
  for (int k = 0; k < n; k++) {
    const double* Fk = F + (size_t)k * n;
    double s = x[k] / Fk[k];
    if (!parent) {
      for (int i = k - 1; i >= 0; i--) s -= Fk[i] * x[i];
    } else {
      for (int i = parent[k]; i >= 0; i = parent[i]) s -= Fk[i] * x[i];
    }
    x[k] = s;
  }
}

void phys_ldl_solve_range(double* x, const double* F, const int* parent, const double* b, int n, int lo, int hi) {
  if (lo > 0) memset(x, 0, sizeof(double) * (size_t)lo);
  if (hi < n) memset(x + hi, 0, sizeof(double) * (size_t)(n - hi));
  if (x != b) memcpy(x + lo, b + lo, sizeof(double) * (size_t)(hi - lo));
  for (int k = hi - 1; k >= lo; k--)   // (solve_upper on the range)
    if (x[k] != 0) spread(x, F + (size_t)k * n, parent, k, x[k]);
  for (int k = lo; k < hi; k++) {
    const double* Fk = F + (size_t)k * n;
    double s = x[k] / Fk[k];
    for (int i = parent[k]; i >= 0; i = parent[i]) s -= Fk[i] * x[i];
    x[k] = s;
  }
}

// one step k of the half-solve below: y_k (if nonzero) spread to its ancestors, scaled by 1/sqrt(D_k) and
// listed at list[nz]; returns the new count
static inline int half_at(double* y, const double* F, const int* parent, int n, int k, int* list, int nz) {
  double yk = y[k];
  if (yk == 0) return nz;
  const double* Fk = F + (size_t)k * n;
  spread(y, Fk, parent, k, yk);
  y[k] = yk / sqrt(Fk[k]);
  if (list) list[nz] = k;
  return nz + 1;
}

// y = D^-1/2 L'^-1 b: solve_upper's sweep, each y_k scaled by 1/sqrt(D_k) once it has spread to its
// ancestors (b' H^-1 c = b' L^-1 D^-1 L'^-1 c = (D^-1/2 L'^-1 b) . (D^-1/2 L'^-1 c)); zeros are skipped
// and the others listed in the order met (descending)
int phys_ldl_half(double* y, const double* F, const int* parent, const double* b, int n, int* list) {
  int ns = 0;
  if (y != b) memcpy(y, b, sizeof(double) * (size_t)n);
  for (int k = n - 1; k >= 0; k--) ns = half_at(y, F, parent, n, k, list, ns);
  return ns;
}

// phys_ldl_half's sweep over the listed indices only: the others are 0 and stay 0 (no index outside s is an
// ancestor of one in s), so skipping them changes nothing
int phys_ldl_half_on(double* y, const double* F, const int* parent, int n, const int* s, int ns, int* list) {
  int nz = 0;
  for (int t = 0; t < ns; t++) nz = half_at(y, F, parent, n, s[t], list, nz);
  return nz;
}

//---------------------------------------------------------------------------------------------------------
// the joint-space inertia along dof_parentid

void phys_ldl_copy(double* H, const double* A, const int* parent, int n) {
  for (int k = 0; k < n; k++) {
    size_t row = (size_t)k * n;
    if (!parent) {
      memcpy(H + row, A + row, sizeof(double) * ((size_t)k + 1));
      continue;
    }
    H[row + k] = A[row + k];
    for (int i = parent[k]; i >= 0; i = parent[i]) H[row + i] = A[row + i];
  }
}

// qLD <- qM + diag(add), factored in place (the lower triangle off the pattern keeps qM's zeros)
int phys_factor_m(const physModel* m, double* qLD, const double* qM, const double* add) {
  int nv = m->nv;
  memcpy(qLD, qM, sizeof(double) * (size_t)nv * (size_t)nv);
  for (int k = 0; add && k < nv; k++) qLD[(size_t)k * nv + k] += add[k];
  return phys_ldl_factor(qLD, m->dof_parentid, nv);
}

// x = M~^-1 b along dof_parentid
void phys_solve_m(const physModel* m, const double* qLD, double* x, const double* b) {
  phys_ldl_solve(x, qLD, m->dof_parentid, b, m->nv);
}

// y = D^-1/2 L'^-1 b along dof_parentid
int phys_solve_m_half(const physModel* m, const double* qLD, double* y, const double* b, int* list) {
  return phys_ldl_half(y, qLD, m->dof_parentid, b, m->nv, list);
}

// y = D^-1/2 L'^-1 y along dof_parentid on the dofs s (phys_ldl_half_on)
int phys_solve_m_half_on(const physModel* m, const double* qLD, double* y, const int* s, int ns, int* list) {
  return phys_ldl_half_on(y, qLD, m->dof_parentid, m->nv, s, ns, list);
}

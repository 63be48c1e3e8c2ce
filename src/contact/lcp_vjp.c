// lcp_vjp.c - derivatives of the `lcp` solver's result lambda(g, G, mu) at a solution (paper 001, section
// IV; DESIGN.md section 4): forward (phys_solve_lcp_jvp) and reverse (phys_solve_lcp_vjp) mode.
//
// Locally, away from label switches, the labels sol->state of phys_solve_lcp fix the solution's structure:
//   lambda_S = 0,  lambda_B = E lambda_C  (bounded tangent b of contact c: lambda_b = e_b lambda_n,
//   e_b = +mu_c (upper) or -mu_c (lower); e_b = 0 when mu_c <= 0),  and lambda_C solves
//   (G_CC + G_CB E) lambda_C = -g_C.
// What is differentiated is exactly what the solver computes: it works on the scaled problem (lcp.c's file
// comment; s_i = 1/sqrt(mean diagonal of G over contact i's three rows, or the limit row's own), gamma
// cancels) and returns the minimal-norm solution in the scaled unknowns:
//   A = S_C H S_C,  H = G_CC + G_CB E,  b = -S_C g_C,  x = A^+ b,  lambda_C = S_C x.
// When A is regular, S cancels and this is lambda_C = -H^-1 g_C. When A is singular (a box's four coplanar
// corners) x is the pseudo-inverse solution, and S (which depends on G's diagonal) matters. For a
// perturbation that keeps rank A (e.g. dG = dJ W J' + J W dJ' of a G = J W J'), the derivative of
// x = A^+ b is (Golub & Pereyra 1973)
//   dx = A^+ (db - dA x) + A^+ A^+' dA' r + (I - A^+ A) dA' A^+' x,   r = b - A x (0 when consistent),
// and its adjoint, for x_bar:
//   b_bar = A^+' x_bar,   A_bar = -(A^+' x_bar) x' + r (A^+ A^+' x_bar)' + (A^+' x) ((I - A^+ A) x_bar)'.
// A perturbation that raises the rank (a generic dG of a singular G) makes lambda jump: no derivative.
// A^+ (phys_lcp_pinv): when A = A' exactly (no bounded rows, where lcp.c solves by pivoted Cholesky) from that
// same pivoted Cholesky Pi' A Pi = L L' and its rank cut (pivots <= 1e-12 * the first are 0), so the derivative
// sees the rank the solver saw: with B = Pi L (m x r), A^+ = B (B'B)^-2 B', O(m^2 r) (a fifth of the SVD's cost
// on Atlas's singular feet); otherwise (bounded rows: A nonsymmetric, or A indefinite) LAPACK's SVD with the
// rank cut sigma <= 1e-12 sigma_max.
// Limitations: G_bar is the gradient with respect to G's n^2 entries taken independently (symmetrize it for
// a symmetric parameterization); a contact whose diagonal mean is degenerate (s from the largest diagonal,
// lcp_scale) gets no derivative through s; when the solver had to keep Lemke's own refined point (not the
// minimal-norm one, nearly inconsistent problems) the derivative is that of the minimal-norm solution.
// Complementarity-aware labels (paper 001 IV-D): phys_lcp_aware_states relabels rows by the sign of the
// impulse adjoint; the reverse mode with those labels is the same phys_solve_lcp_vjp.
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "chol.h"
#include "contact.h"

#define VJP_TOL_LU 1e-9      // LU pivots above tol * max|A|: regular (lcp.c's LCP_TOL_LU)
#define VJP_TOL_NULL 1e-9     // (I - A^+ A)_ii above this: row i is reached by A's null space (a projector's
                              // diagonal: 0 off the null space's support, O(1/k) on it for k rows sharing it)
#define VJP_TOL_RANK 1e-12    // singular values <= tol * the largest count as 0 (lcp.c's LCP_TOL_RANK)

// the local linear structure at the solution
typedef struct lcpLocal_ {
  int n, m;                 // rows, clamping rows
  int* cr;                  // m: clamping row of each unknown
  int* pos;                 // n: position of row i among the clamping ones, -1 if not clamping
  int* nb;                  // n: for a bounded tangent row, the position of its contact's normal, else -1
  double* e;                // n: e_b = +-mu (bounded rows), 0 otherwise
  double* sgn;              // n: +1 upper, -1 lower, 0 otherwise; e_b = sgn_b max(mu, 0)
  double* s;                // n row scales
  double* H;                // m x m row-major: G_CC + G_CB E
  double* A;                // m x m: S H S
  double* P;                // m x m: A^+
  double* x;                // m: scaled solution lambda_C / s_C
  double* r;                // m: b - A x
  int* live;                // n: 1 if s_i depends on G's diagonal (0: degenerate, from the largest one) and
                            // the solution on s (0 for all rows when the clamped system is regular)
  // the forward mode through products (phys_solve_lcp_local only; else NULL): H S x, w = A^+' x, H' S r, H' S w
  double *hsx, *w, *hsr, *hsw;
  int regular;              // 1 if A is regular (rank m): the residual and null-space terms vanish
  // the clamped rows' blocks (their islands, p->island; one block of all m without): H, A, P are block diagonal
  // over them, and every m x m loop runs over the pairs of one block (cross-block entries stay 0)
  int* bk;                  // m: block of each clamped row
  int* bs;                  // blocks + 1: block j's rows are br[bs[j] .. bs[j+1]-1], ascending
  int* br;                  // m
} lcpLocal;

// the rows of clamped row i's block: *k0, *k1 bound the range of L->br
static inline void blk_range(const lcpLocal* L, int i, int* k0, int* k1) {
  *k0 = L->bs[L->bk[i]], *k1 = L->bs[L->bk[i] + 1];
}

// n ints from d's arena
static int* vjp_ints(physData* d, int n) {
  return (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
}

// row scales s as lcp.c's lcp_scale: per contact 1/sqrt(mean of its three diagonal entries), per limit row
// 1/sqrt(its diagonal); a tiny or non-positive one takes the largest diagonal of its island (flagged in deg;
// the primal solves island by island, src/contact/island.c), of the whole problem without p->island
static void vjp_scale(double* s, int* deg, physData* d, const physConstraintProblem* p) {
  int n = p->n, ni = 1;
  for (int i = 0; p->island && i < n; i++) ni = p->island[i] + 1 > ni ? p->island[i] + 1 : ni;
  size_t mark = phys_stack_mark(d);
  double* dmax = phys_stack_alloc(d, (size_t)ni);
  for (int k = 0; k < ni; k++) dmax[k] = 0;
  for (int i = 0; i < n; i++) {
    double* dk = dmax + (p->island ? p->island[i] : 0);
    *dk = fmax(p->G[(size_t)i * n + i], *dk);
  }
  for (int k = 0; k < ni; k++) dmax[k] = dmax[k] > 0 ? dmax[k] : 1;
  for (int i = 0; i < n; i++) {
    double dd, dm = dmax[p->island ? p->island[i] : 0];
    if (i < 3 * p->nc) {
      const double* Gc = p->G + (size_t)(3 * (i / 3)) * n + 3 * (i / 3);
      dd = (Gc[0] + Gc[n + 1] + Gc[2 * n + 2]) / 3;
    } else {
      dd = p->G[(size_t)i * n + i];
    }
    deg[i] = !(dd > 1e-12 * dm);
    s[i] = 1 / sqrt(deg[i] ? dm : dd);
  }
  phys_stack_free(d, mark);
}

// P = A^+ (m x m row-major) from the SVD A = U Sigma V' (LAPACK dgesvd): A^+ = sum_{sigma_j > tol} v_j u_j' /
// sigma_j, tol = VJP_TOL_RANK sigma_max (the solver's rank cut). LAPACK rather than a hand-written Jacobi SVD:
// the clamped system of a robot standing on its feet is singular (coplanar corners), where one-sided Jacobi
// needed tens of sweeps. If dgesvd fails (it does not converge, never seen), P falls back to 0 and the
// derivative to the clamped rows is dropped (rank 0). Returns the rank.
static int vjp_pinv_svd(double* P, physData* d, const double* A, int m) {
  size_t mark = phys_stack_mark(d), mm = (size_t)m * m;
  double* W = phys_stack_alloc(d, mm + 1);
  double* U = phys_stack_alloc(d, mm + 1);
  double* Vt = phys_stack_alloc(d, mm + 1);
  double* sig = phys_stack_alloc(d, (size_t)m + 1);
  double* sup = phys_stack_alloc(d, (size_t)m + 1);
  memcpy(W, A, sizeof(double) * mm);
  memset(P, 0, sizeof(double) * mm);
  int r = 0;
  if (LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'A', 'A', m, m, W, m, sig, U, m, Vt, m, sup) == 0) {
    double tol = VJP_TOL_RANK * sig[0];   // singular values come in decreasing order
    for (int j = 0; j < m; j++, r++) {
      if (!(sig[j] > tol)) break;
      double inv = 1 / sig[j];
      for (int i = 0; i < m; i++) {
        double vij = Vt[(size_t)j * m + i] * inv;
        for (int k = 0; k < m; k++) P[(size_t)i * m + k] += vij * U[(size_t)k * m + j];
      }
    }
  }
  phys_stack_free(d, mark);
  return r;
}

// Pi' A Pi = L L' + R by the solver's own pivoted Cholesky (chol.h phys_chol_pivoted, lcp.c's lcp_minnorm_sym
// uses it too: the same rank r, pivots > VJP_TOL_RANK * the first); W (m x m, column-major, = A when A = A')
// gets L (m x r) in its lower trapezoid, perm the order. Returns r, or -1 when the remainder R is not
// negligible (some |R_ij| > tol * the first pivot: A is not positive semidefinite, and L L' is not A).
static int vjp_chol(double* W, int* perm, int m) {
  double d0 = 0;
  int r = phys_chol_pivoted(W, perm, m, VJP_TOL_RANK, &d0);
  for (int j = r; j < m; j++)
    for (int i = j; i < m; i++)
      if (!(fabs(W[(size_t)j * m + i]) <= VJP_TOL_RANK * d0)) return -1;
  return r;
}

// P = (Pi L L' Pi')^+ for L (m x r, full column rank, W's lower trapezoid from vjp_chol): with B = Pi L,
//   (B B')^+ = Z' Z,   Z = B^+ = (B'B)^-1 B' = Pi'-permuted M^-1 L',   M = L'L = C C' (r x r Cholesky),
// Z by C Y = L', C' Z = Y. O(m r^2 + m^2 r), and symmetric by construction.
static void vjp_pinv_factor(double* P, physData* d, const double* W, const int* perm, int m, int r) {
  size_t mark = phys_stack_mark(d);
  double* C = phys_stack_alloc(d, (size_t)r * r + 1);   // M, then C in its lower triangle (row-major)
  double* Z = phys_stack_alloc(d, (size_t)r * m + 1);   // r x m row-major: L', then Y, then Z
  // M_ab = sum_i L_ia L_ib (L_ia = W[a*m + i], zero for i < a)
  for (int a = 0; a < r; a++)
    for (int b = 0; b <= a; b++) {
      const double *La = W + (size_t)a * m, *Lb = W + (size_t)b * m;
      double t = 0;
      for (int i = a; i < m; i++) t += La[i] * Lb[i];
      C[(size_t)a * r + b] = t;
    }
  // M = C C': C_aa = sqrt(M_aa - sum_c C_ac^2), C_ba = (M_ba - sum_c C_bc C_ac) / C_aa (b > a)
  for (int a = 0; a < r; a++) {
    double* Ca = C + (size_t)a * r;
    for (int c = 0; c < a; c++) Ca[a] -= Ca[c] * Ca[c];
    Ca[a] = sqrt(Ca[a]);
    for (int b = a + 1; b < r; b++) {
      double* Cb = C + (size_t)b * r;
      for (int c = 0; c < a; c++) Cb[a] -= Cb[c] * Ca[c];
      Cb[a] /= Ca[a];
    }
  }
  // Z = L' (row a = column a of L), then C Y = Z forward, C' Z = Y backward, all m columns at once
  for (int a = 0; a < r; a++) memcpy(Z + (size_t)a * m, W + (size_t)a * m, sizeof(double) * (size_t)m);
  for (int a = 0; a < r; a++) {
    double* Za = Z + (size_t)a * m;
    for (int i = 0; i < a; i++) Za[i] = 0;
    for (int c = 0; c < a; c++) {
      double cac = C[(size_t)a * r + c];
      const double* Zc = Z + (size_t)c * m;
      for (int i = 0; i < m; i++) Za[i] -= cac * Zc[i];
    }
    for (int i = 0; i < m; i++) Za[i] /= C[(size_t)a * r + a];
  }
  for (int a = r - 1; a >= 0; a--) {
    double* Za = Z + (size_t)a * m;
    for (int c = a + 1; c < r; c++) {
      double cca = C[(size_t)c * r + a];
      const double* Zc = Z + (size_t)c * m;
      for (int i = 0; i < m; i++) Za[i] -= cca * Zc[i];
    }
    for (int i = 0; i < m; i++) Za[i] /= C[(size_t)a * r + a];
  }
  // P_{perm i, perm k} = sum_a Z_ai Z_ak (both triangles from one sum), accumulated a by a in T's lower
  // triangle (rank-one updates along contiguous rows; the same order of summation as a dot product over a)
  double* T = phys_stack_alloc(d, (size_t)m * m + 1);
  memset(T, 0, sizeof(double) * (size_t)m * m);
  for (int a = 0; a < r; a++) {
    const double* Za = Z + (size_t)a * m;
    for (int i = 0; i < m; i++) {
      double zai = Za[i];
      double* Ti = T + (size_t)i * m;
      for (int k = 0; k <= i; k++) Ti[k] += zai * Za[k];
    }
  }
  for (int i = 0; i < m; i++)
    for (int k = 0; k <= i; k++) P[(size_t)perm[i] * m + perm[k]] = P[(size_t)perm[k] * m + perm[i]] = T[(size_t)i * m + k];
  phys_stack_free(d, mark);
}

// P = A^-1 (m x m row-major) by Gaussian elimination with partial pivoting when every pivot exceeds
// VJP_TOL_LU max|A| (lcp.c takes its LU path on the same test, LCP_TOL_LU): A regular, A^+ = A^-1 at O(m^3)
// with a small constant. Returns m, or -1 (a small pivot: left to the SVD) with P undefined.
static int vjp_pinv_lu(double* P, physData* d, const double* A, int m) {
  size_t mark = phys_stack_mark(d), mm = (size_t)m * m;
  double* W = phys_stack_alloc(d, mm + 1);
  int* perm = vjp_ints(d, m);
  memcpy(W, A, sizeof(double) * mm);
  double amax = 0;
  for (size_t i = 0; i < mm; i++) amax = fmax(fabs(A[i]), amax);
  int ok = amax > 0;
  for (int k = 0; k < m && ok; k++) {
    int piv = k;
    for (int i = k + 1; i < m; i++)
      if (fabs(W[(size_t)i * m + k]) > fabs(W[(size_t)piv * m + k])) piv = i;
    perm[k] = piv;
    if (!(fabs(W[(size_t)piv * m + k]) > VJP_TOL_LU * amax)) {
      ok = 0;
      break;
    }
    if (piv != k)
      for (int j = 0; j < m; j++) {
        double t = W[(size_t)k * m + j];
        W[(size_t)k * m + j] = W[(size_t)piv * m + j];
        W[(size_t)piv * m + j] = t;
      }
    double* Wk = W + (size_t)k * m;
    for (int i = k + 1; i < m; i++) {
      double* Wi = W + (size_t)i * m;
      double l = Wi[k] / Wk[k];
      Wi[k] = l;
      for (int j = k + 1; j < m; j++) Wi[j] -= l * Wk[j];
    }
  }
  if (ok) {
    // columns of the identity through P_perm, L, U: X = U^-1 L^-1 (row swaps of I), rows of P
    memset(P, 0, sizeof(double) * mm);
    for (int i = 0; i < m; i++) P[(size_t)i * m + i] = 1;
    for (int k = 0; k < m; k++)
      if (perm[k] != k)
        for (int j = 0; j < m; j++) {
          double t = P[(size_t)k * m + j];
          P[(size_t)k * m + j] = P[(size_t)perm[k] * m + j];
          P[(size_t)perm[k] * m + j] = t;
        }
    for (int i = 1; i < m; i++)   // L y = b (unit lower), all columns at once by rows
      for (int k = 0; k < i; k++) {
        double l = W[(size_t)i * m + k];
        if (l != 0)
          for (int j = 0; j < m; j++) P[(size_t)i * m + j] -= l * P[(size_t)k * m + j];
      }
    for (int i = m - 1; i >= 0; i--) {   // U x = y
      for (int k = i + 1; k < m; k++) {
        double u = W[(size_t)i * m + k];
        if (u != 0)
          for (int j = 0; j < m; j++) P[(size_t)i * m + j] -= u * P[(size_t)k * m + j];
      }
      double inv = 1 / W[(size_t)i * m + i];
      for (int j = 0; j < m; j++) P[(size_t)i * m + j] *= inv;
    }
  }
  phys_stack_free(d, mark);
  return ok ? m : -1;
}

// P = A^+ (m x m row-major). When A = A' exactly (no bounded rows: A = S G_CC S; lcp.c then takes its
// Cholesky path), from the solver's own pivoted Cholesky Pi' A Pi = L L' (the same rank decision, pivots >
// VJP_TOL_RANK * the first) and A^+ = B (B'B)^-2 B' with B = Pi L: O(m^2 r) instead of the SVD's ~20 m^3 (on
// Atlas standing a fifth of the step VJP). Otherwise (bounded friction rows: A nonsymmetric) the inverse by
// LU when every pivot is clear of zero (vjp_pinv_lu: a sliding contact's regular system), else, or when the
// Cholesky remainder is not negligible (A indefinite), by the SVD; rows and columns that are exactly zero are
// set aside first. Returns the rank.
int phys_lcp_pinv(double* P, physData* d, const double* A, int m) {
  // rows whose row and column are both exactly zero (a contact without a lever on anything that moves): A^+
  // is zero there and the pseudo-inverse of the rest elsewhere, so they are taken out first
  size_t mark0 = phys_stack_mark(d);
  int* keep = vjp_ints(d, m);
  int k = 0;
  for (int i = 0; i < m; i++) {
    int z = 1;
    for (int j = 0; j < m && z; j++) z = A[(size_t)i * m + j] == 0 && A[(size_t)j * m + i] == 0;
    if (!z) keep[k++] = i;
  }
  if (k < m) {
    double* Ar = phys_stack_alloc(d, (size_t)k * k + 1);
    double* Pr = phys_stack_alloc(d, (size_t)k * k + 1);
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++) Ar[(size_t)i * k + j] = A[(size_t)keep[i] * m + keep[j]];
    int r = k > 0 ? phys_lcp_pinv(Pr, d, Ar, k) : 0;
    memset(P, 0, sizeof(double) * (size_t)m * m);
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++) P[(size_t)keep[i] * m + keep[j]] = Pr[(size_t)i * k + j];
    phys_stack_free(d, mark0);
    return r;
  }
  phys_stack_free(d, mark0);
  int sym = 1;
  for (int i = 0; i < m && sym; i++)
    for (int k = 0; k < i; k++)
      if (A[(size_t)i * m + k] != A[(size_t)k * m + i]) {
        sym = 0;
        break;
      }
  size_t mark = phys_stack_mark(d), mm = (size_t)m * m;
  int r = -1;
  if (sym) {
    double* W = phys_stack_alloc(d, mm + 1);
    int* perm = vjp_ints(d, m);
    memcpy(W, A, sizeof(double) * mm);
    r = vjp_chol(W, perm, m);
    memset(P, 0, sizeof(double) * mm);
    if (r > 0) vjp_pinv_factor(P, d, W, perm, m, r);
  }
  phys_stack_free(d, mark);
  if (r < 0 && !sym) r = vjp_pinv_lu(P, d, A, m);
  if (r < 0) r = vjp_pinv_svd(P, d, A, m);
  return r;
}

// P = A^+ for A block diagonal over the islands lab (m; NULL: one island): G_ij = 0 exactly between rows of
// different islands (island.c), so the clamped system A = S H S is too, and A^+ is the islands' pseudo-inverses
// side by side (each phys_lcp_pinv on its rows, ascending: an island's block gets the bits it would get alone,
// and the rank cut is the island's, as in the primal's solve; the blocks are independent, taken in the order of
// their first row). O(sum m_k^3) instead of O(m^3). Returns the rank (summed)
int phys_lcp_pinv_islands(double* P, physData* d, const double* A, int m, const int* lab) {
  int one = 1;
  for (int i = 1; lab && i < m && one; i++) one = lab[i] == lab[0];
  if (one) return phys_lcp_pinv(P, d, A, m);
  size_t mark = phys_stack_mark(d);
  int* idx = vjp_ints(d, m);
  int* done = vjp_ints(d, m);
  double* Ak = phys_stack_alloc(d, (size_t)m * m + 1);
  double* Pk = phys_stack_alloc(d, (size_t)m * m + 1);
  int rank = 0;
  memset(P, 0, sizeof(double) * (size_t)m * m);
  memset(done, 0, sizeof(int) * (size_t)m);
  for (int i0 = 0; i0 < m; i0++) {   // islands in the order of their first clamped row
    if (done[i0]) continue;
    int k = 0;
    for (int i = i0; i < m; i++)
      if (lab[i] == lab[i0]) idx[k++] = i, done[i] = 1;
    for (int a = 0; a < k; a++)
      for (int b = 0; b < k; b++) Ak[(size_t)a * k + b] = A[(size_t)idx[a] * m + idx[b]];
    rank += phys_lcp_pinv(Pk, d, Ak, k);
    for (int a = 0; a < k; a++)
      for (int b = 0; b < k; b++) P[(size_t)idx[a] * m + idx[b]] = Pk[(size_t)a * k + b];
  }
  phys_stack_free(d, mark);
  return rank;
}

// keep (n) = 1 on the clamped rows the derivative works with: every clamping row but the void ones, with
// lambda_i = 0 and row and column i of G zero over the clamped and bounded rows (a planar model's out-of-plane
// tangents). Their unknown stays 0 under every perturbation that keeps the rank (one that gives them a lever
// raises it: no derivative), so they are left out, and the rest of the system is often regular. A normal
// that bounds a tangent stays.
static void clamped_rows(int* keep, const physConstraintProblem* p, const physConstraintSolution* sol) {
  int n = p->n;
  for (int i = 0; i < n; i++) keep[i] = sol->state[i] == PHYS_ROW_CLAMPING;
  for (int i = 0; i < n; i++) {
    if (!keep[i] || sol->lambda[i] != 0) continue;
    int c = i < 3 * p->nc ? i / 3 : -1, v = 1;
    for (int t = 1; c >= 0 && i == 3 * c && t < 3 && v; t++)
      v = sol->state[i + t] != PHYS_ROW_UPPER && sol->state[i + t] != PHYS_ROW_LOWER;
    for (int j = 0; j < n && v; j++) {
      int cj = j < 3 * p->nc && j % 3 ? j / 3 : -1, st = sol->state[j];
      int used = st == PHYS_ROW_CLAMPING || (cj >= 0 && (st == PHYS_ROW_UPPER || st == PHYS_ROW_LOWER) &&
                                             sol->state[3 * cj] == PHYS_ROW_CLAMPING);
      v = !used || (p->G[(size_t)i * n + j] == 0 && p->G[(size_t)j * n + i] == 0);
    }
    keep[i] = !v;
  }
}

// L's blocks from the clamped rows' labels lab (m; NULL: one block), in the order of their first row
static void local_blocks(lcpLocal* L, physData* d, const int* lab) {
  int m = L->m, nbk = 0;
  L->bk = vjp_ints(d, m);
  L->br = vjp_ints(d, m);
  int* first = vjp_ints(d, m);   // (first clamped row of each block)
  for (int i = 0; i < m; i++) {
    int j = 0;
    while (lab && j < nbk && lab[first[j]] != lab[i]) j++;
    if (!lab && nbk > 0) j = 0;
    if (j == nbk) first[nbk++] = i;
    L->bk[i] = j;
  }
  L->bs = vjp_ints(d, nbk + 1);
  memset(L->bs, 0, sizeof(int) * (size_t)(nbk + 1));
  for (int i = 0; i < m; i++) L->bs[L->bk[i] + 1]++;
  for (int j = 0; j < nbk; j++) L->bs[j + 1] += L->bs[j];
  memcpy(first, L->bs, sizeof(int) * (size_t)nbk);   // (now each block's next slot)
  for (int i = 0; i < m; i++) L->br[first[L->bk[i]]++] = i;
}

// H = G_CC + G_CB E, A = S H S, x = lambda_C / s_C, r = b - A x with b = -S g_C into L (its labels, scales
// and blocks set; pairs of one block, the rest 0), P allocated
static void local_system(lcpLocal* L, physData* d, const physConstraintProblem* p, const physConstraintSolution* sol) {
  int n = p->n, m = L->m;
  size_t mm = (size_t)m * m + 1;
  L->H = phys_stack_alloc(d, mm), L->A = phys_stack_alloc(d, mm), L->P = phys_stack_alloc(d, mm);
  L->x = phys_stack_alloc(d, (size_t)m + 1), L->r = phys_stack_alloc(d, (size_t)m + 1);
  memset(L->H, 0, sizeof(double) * mm);
  memset(L->A, 0, sizeof(double) * mm);
  int k0, k1;
  for (int i = 0; i < m; i++) {
    blk_range(L, i, &k0, &k1);
    for (int q = k0; q < k1; q++) L->H[(size_t)i * m + L->br[q]] = p->G[(size_t)L->cr[i] * n + L->cr[L->br[q]]];
  }
  for (int b = 0; b < n; b++) {   // (a bounded row is in its normal's island)
    if (L->nb[b] < 0) continue;
    blk_range(L, L->nb[b], &k0, &k1);
    for (int q = k0; q < k1; q++) {
      int i = L->br[q];
      L->H[(size_t)i * m + L->nb[b]] += L->e[b] * p->G[(size_t)L->cr[i] * n + b];
    }
  }
  for (int i = 0; i < m; i++) {
    blk_range(L, i, &k0, &k1);
    for (int q = k0; q < k1; q++) {
      int k = L->br[q];
      L->A[(size_t)i * m + k] = L->s[L->cr[i]] * L->s[L->cr[k]] * L->H[(size_t)i * m + k];
    }
  }
  for (int i = 0; i < m; i++) L->x[i] = sol->lambda[L->cr[i]] / L->s[L->cr[i]];
  for (int i = 0; i < m; i++) {
    double t = -L->s[L->cr[i]] * p->g[L->cr[i]];
    blk_range(L, i, &k0, &k1);
    for (int q = k0; q < k1; q++) t -= L->A[(size_t)i * m + L->br[q]] * L->x[L->br[q]];
    L->r[i] = t;
  }
}

// the local structure of sol: labels, H, A, A^+, x, r (arrays from d's arena; the caller marks and frees)
static void vjp_local(lcpLocal* L, physData* d, const physConstraintProblem* p, const physConstraintSolution* sol) {
  int n = p->n, m = 0;
  d->nlcp_local++;
  L->n = n;
  L->cr = vjp_ints(d, n);
  L->pos = vjp_ints(d, n);
  L->nb = vjp_ints(d, n);
  L->e = phys_stack_alloc(d, (size_t)n);
  L->sgn = phys_stack_alloc(d, (size_t)n);
  L->s = phys_stack_alloc(d, (size_t)n);
  int* deg = vjp_ints(d, n);
  L->live = vjp_ints(d, n);
  vjp_scale(L->s, deg, d, p);
  int* keep = vjp_ints(d, n);
  clamped_rows(keep, p, sol);
  for (int i = 0; i < n; i++) {
    L->pos[i] = keep[i] ? m : -1;
    if (L->pos[i] >= 0) L->cr[m++] = i;
  }
  L->m = m;
  for (int i = 0; i < n; i++) {
    int c = i < 3 * p->nc && i % 3 ? i / 3 : -1, st = sol->state[i];
    L->nb[i] = -1, L->e[i] = L->sgn[i] = 0;
    if (c < 0 || (st != PHYS_ROW_UPPER && st != PHYS_ROW_LOWER) || L->pos[3 * c] < 0) continue;
    L->nb[i] = L->pos[3 * c];
    L->sgn[i] = st == PHYS_ROW_UPPER ? 1 : -1;
    L->e[i] = L->sgn[i] * (p->mu[c] > 0 ? p->mu[c] : 0);
  }
  int* lab = NULL;   // the clamped rows' islands (p->island): H, A, P are block diagonal over them
  if (p->island) {
    lab = vjp_ints(d, m);
    for (int i = 0; i < m; i++) lab[i] = p->island[L->cr[i]];
  }
  local_blocks(L, d, lab);
  local_system(L, d, p, sol);
  int rank = m > 0 ? phys_lcp_pinv_islands(L->P, d, L->A, m, lab) : 0;
  // a regular clamped system: A^+ = A^-1, so r = b - A x = 0 and I - A^+ A = 0 (their terms are skipped), and
  // its solution lambda_C = S (S H S)^-1 (-S g_C) = -H^-1 g_C does not depend on the scales (their derivative
  // terms cancel exactly): no row is live
  L->regular = rank == m;
  // a singular one's solution set {lambda_C: H lambda_C = -g_C} does not depend on the scales either, only the
  // minimal-norm choice in it does, through min |S^-1 lambda_C|^2: a scale whose rows the null space of A does
  // not reach (N_ii = (I - A^+ A)_ii = 0, N a projector) moves no choice and is not live. A contact's three rows
  // share one scale: live if any of its clamped rows is reached
  int* reach = vjp_ints(d, n);
  for (int i = 0; i < n; i++) reach[i] = 0;
  for (int i = 0, k0, k1; i < m && !L->regular; i++) {
    double nii = 1;
    blk_range(L, i, &k0, &k1);
    for (int q = k0; q < k1; q++) nii -= L->P[(size_t)i * m + L->br[q]] * L->A[(size_t)L->br[q] * m + i];
    reach[L->cr[i]] = nii > VJP_TOL_NULL;
  }
  for (int i = 0; i < n; i++) {
    int r = reach[i];
    if (i < 3 * p->nc) r = reach[3 * (i / 3)] || reach[3 * (i / 3) + 1] || reach[3 * (i / 3) + 2];
    L->live[i] = !deg[i] && !L->regular && r;
  }
}

// y = M x (trans = 0) or M' x (trans = 1), M m x m row-major; y and x distinct (M' x by rows of M:
// contiguous). With L (M = H, A or P of L, block diagonal over L's blocks) only the blocks' pairs are read, in
// the same order as the whole rows (L NULL) for one block
static void vjp_mulv(double* restrict y, const double* restrict M, const double* restrict x, int m,
                     const lcpLocal* L, int trans) {
  for (int i = 0; trans && i < m; i++) y[i] = 0;
  for (int i = 0; i < m; i++) {
    const double* Mi = M + (size_t)i * m;
    int q0 = L ? L->bs[L->bk[i]] : 0, q1 = L ? L->bs[L->bk[i] + 1] : m;
    if (trans) {   // (row i of M times x_i into y)
      double xi = x[i];
      if (xi != 0)
        for (int q = q0; q < q1; q++) y[L ? L->br[q] : q] += Mi[L ? L->br[q] : q] * xi;
      continue;
    }
    double t = 0;
    for (int q = q0; q < q1; q++) t += Mi[L ? L->br[q] : q] * x[L ? L->br[q] : q];
    y[i] = t;
  }
}

// forward mode: lambda_dot (n) = dlambda/dg dg + dlambda/dG dG + dlambda/dmu dmu at the solution sol of p
// (dG n x n and dmu nc may be NULL: zero). Scratch from d's arena. Returns PHYS_OK.
// the forward mode at the local structure L of sol (vjp_local): as phys_solve_lcp_jvp
static void jvp_apply(const lcpLocal* restrict Lp, physData* d, const physConstraintProblem* p,
                      const physConstraintSolution* sol, const double* dg, const double* dG, const double* dmu,
                      double* lambda_dot) {
  int n = p->n;
  if (n <= 0) return;
  size_t mark = phys_stack_mark(d);
  const lcpLocal L = *Lp;
  int mc = L.m;
  double* ds = phys_stack_alloc(d, (size_t)n);
  double* de = phys_stack_alloc(d, (size_t)n);
  double* dA = phys_stack_alloc(d, (size_t)mc * mc + 1);
  double* v = phys_stack_alloc(d, (size_t)mc + 1);
  double* w = phys_stack_alloc(d, (size_t)mc + 1);
  double* dx = phys_stack_alloc(d, (size_t)mc + 1);
  // ds = -s^3/2 d(mean diagonal), de_b = sgn_b dmu_c
  for (int i = 0; i < n; i++) {
    double dd = 0;
    if (dG && L.live[i]) {
      if (i < 3 * p->nc) {
        int r0 = 3 * (i / 3);
        for (int k = r0; k < r0 + 3; k++) dd += dG[(size_t)k * n + k] / 3;
      } else {
        dd = dG[(size_t)i * n + i];
      }
    }
    ds[i] = -0.5 * L.s[i] * L.s[i] * L.s[i] * dd;
    de[i] = L.nb[i] >= 0 && dmu && p->mu[i / 3] >= 0 ? L.sgn[i] * dmu[i / 3] : 0;
  }
  // dH = dG_CC + dG_CB E + G_CB dE (in dA), then dA = S dH S + (dS H S + S H dS)
  for (int i = 0; i < mc; i++) {
    int ci = L.cr[i];
    for (int k = 0; k < mc; k++) dA[(size_t)i * mc + k] = dG ? dG[(size_t)ci * n + L.cr[k]] : 0;
    for (int b = 0; b < n; b++)
      if (L.nb[b] >= 0)
        dA[(size_t)i * mc + L.nb[b]] += L.e[b] * (dG ? dG[(size_t)ci * n + b] : 0) + de[b] * p->G[(size_t)ci * n + b];
  }
  for (int i = 0; i < mc; i++)
    for (int q = L.bs[L.bk[i]]; q < L.bs[L.bk[i] + 1]; q++) {
      int k = L.br[q], ci = L.cr[i], ck = L.cr[k];
      dA[(size_t)i * mc + k] = L.s[ci] * L.s[ck] * dA[(size_t)i * mc + k] +
                               (ds[ci] * L.s[ck] + L.s[ci] * ds[ck]) * L.H[(size_t)i * mc + k];
    }
  // dx = A^+ (db - dA x) + A^+ A^+' dA' r + (I - A^+ A) dA' A^+' x,  db = -dS g_C - S dg_C
  for (int i = 0; i < mc; i++) {
    int ci = L.cr[i];
    double t = -ds[ci] * p->g[ci] - L.s[ci] * (dg ? dg[ci] : 0);
    for (int k = 0; k < mc; k++) t -= dA[(size_t)i * mc + k] * L.x[k];
    v[i] = t;
  }
  vjp_mulv(dx, L.P, v, mc, &L, 0);
  if (!L.regular) {                        // (the two terms vanish for a regular A)
    vjp_mulv(v, dA, L.r, mc, NULL, 1);     // dA' r
    vjp_mulv(w, L.P, v, mc, &L, 1);            // A^+' dA' r
    vjp_mulv(v, L.P, w, mc, &L, 0);            // A^+ A^+' dA' r
    for (int i = 0; i < mc; i++) dx[i] += v[i];
    vjp_mulv(w, L.P, L.x, mc, &L, 1);          // A^+' x
    vjp_mulv(v, dA, w, mc, NULL, 1);       // y = dA' A^+' x
    for (int i = 0; i < mc; i++) dx[i] += v[i];
    vjp_mulv(w, L.A, v, mc, &L, 0);            // A y
    vjp_mulv(v, L.P, w, mc, &L, 0);            // A^+ A y
    for (int i = 0; i < mc; i++) dx[i] -= v[i];
  }
  // lambda_C = S x, lambda_b = e_b lambda_n, lambda_S = 0
  for (int i = 0; i < n; i++) lambda_dot[i] = 0;
  for (int i = 0; i < mc; i++) lambda_dot[L.cr[i]] = ds[L.cr[i]] * L.x[i] + L.s[L.cr[i]] * dx[i];
  for (int b = 0; b < n; b++)
    if (L.nb[b] >= 0) {
      int cn = L.cr[L.nb[b]];
      lambda_dot[b] = L.e[b] * lambda_dot[cn] + de[b] * sol->lambda[cn];
    }
  phys_stack_free(d, mark);
}

physStatus phys_solve_lcp_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* dg, const double* dG,
                              const double* dmu, double* lambda_dot) {
  (void)m;
  if (p->n <= 0) return PHYS_OK;
  size_t mark = phys_stack_mark(d);
  lcpLocal L;
  vjp_local(&L, d, p, sol);
  jvp_apply(&L, d, p, sol, dg, dG, dmu, lambda_dot);
  phys_stack_free(d, mark);
  return PHYS_OK;
}

struct physLcpLocal_ {
  lcpLocal L;
};

// the products' constants of L (prod_dat, phys_solve_lcp_jvp_prod): H S x, w = A^+' x, H' S r, H' S w
static void prod_local(lcpLocal* L, physData* d) {
  int mc = L->m;
  double* a = phys_stack_alloc(d, (size_t)mc + 1);
  L->hsx = phys_stack_alloc(d, (size_t)mc + 1);
  L->w = phys_stack_alloc(d, (size_t)mc + 1);
  L->hsr = phys_stack_alloc(d, (size_t)mc + 1);
  L->hsw = phys_stack_alloc(d, (size_t)mc + 1);
  for (int k = 0; k < mc; k++) a[k] = L->s[L->cr[k]] * L->x[k];
  vjp_mulv(L->hsx, L->H, a, mc, L, 0);
  vjp_mulv(L->w, L->P, L->x, mc, L, 1);
  for (int k = 0; k < mc; k++) a[k] = L->s[L->cr[k]] * L->r[k];
  vjp_mulv(L->hsr, L->H, a, mc, L, 1);
  for (int k = 0; k < mc; k++) a[k] = L->s[L->cr[k]] * L->w[k];
  vjp_mulv(L->hsw, L->H, a, mc, L, 1);
}

// a physLcpLocal in d's arena (caller's mark)
static physLcpLocal* local_alloc(physData* d) {
  return (physLcpLocal*)phys_stack_alloc(d, (sizeof(physLcpLocal) + 7) / 8 + 1);
}

physLcpLocal* phys_solve_lcp_local(physData* d, const physConstraintProblem* p, const physConstraintSolution* sol) {
  physLcpLocal* loc = local_alloc(d);
  memset(loc, 0, sizeof *loc);
  if (p->n > 0) vjp_local(&loc->L, d, p, sol);
  return loc;
}

physLcpLocal* phys_solve_lcp_local_prod(physData* d, const physLcpLocal* loc) {
  physLcpLocal* out = local_alloc(d);
  *out = *loc;
  if (out->L.n > 0) prod_local(&out->L, d);
  return out;
}

void phys_solve_lcp_jvp_local(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* dg, const double* dG,
                              const double* dmu, double* lambda_dot) {
  jvp_apply(&loc->L, d, p, sol, dg, dG, dmu, lambda_dot);
}

// vjp_apply's outputs zeroed: g_bar (n), G_bar (n x n), mu_bar (nc), the factored Ga, Gb (3 n) and Gd (n) where
// given
static void vjp_zero(const physConstraintProblem* p, double* g_bar, double* G_bar, double* mu_bar, double* Ga,
                     double* Gb, double* Gd) {
  int n = p->n;
  for (int i = 0; i < n; i++) g_bar[i] = 0;
  if (G_bar) memset(G_bar, 0, sizeof(double) * (size_t)n * (size_t)(n > 0 ? n : 0));
  if (Ga) {
    memset(Ga, 0, 3 * sizeof(double) * (size_t)(n > 0 ? n : 0));
    memset(Gb, 0, 3 * sizeof(double) * (size_t)(n > 0 ? n : 0));
    memset(Gd, 0, sizeof(double) * (size_t)(n > 0 ? n : 0));
  }
  if (mu_bar)
    for (int c = 0; c < p->nc; c++) mu_bar[c] = 0;
}

// G_bar in factored form: sum_t place(S a_t) lift(S c_t)' with (a, c) = (-u1, x), (r, u2), (u3, u4) into
// Ga_t, Gb_t (n each); lift(y)_Ck = y_k, lift(y)_b = e_b y_nb(b)
static void vjp_factored(const lcpLocal* L, int n, const double* u1, const double* u2, const double* u3,
                         const double* u4, double* Ga, double* Gb) {
  const double *fa[3] = {u1, L->r, u3}, *fc[3] = {L->x, u2, u4}, sg[3] = {-1, 1, 1};
  for (int f = 0; f < 3; f++) {
    double *a = Ga + (size_t)f * n, *c = Gb + (size_t)f * n;
    for (int i = 0; i < L->m; i++) {
      int ci = L->cr[i];
      a[ci] = sg[f] * L->s[ci] * fa[f][i];
      c[ci] = L->s[ci] * fc[f][i];
    }
    for (int b = 0; b < n; b++)
      if (L->nb[b] >= 0) c[b] = L->e[b] * c[L->cr[L->nb[b]]];
  }
}

// H = G_CC + G_CB E, from H bar (Ab, mc x mc on the blocks' pairs): G bar (C, C) += H bar, G bar (C, b) +=
// e_b H bar(:, nb) (G_bar may be NULL), e_b bar += G(C, b) . H bar(:, nb) (into eb)
static void vjp_lift_h(const lcpLocal* L, const physConstraintProblem* p, const double* Ab, double* G_bar,
                       double* eb) {
  int n = p->n, mc = L->m;
  for (int i = 0; i < mc; i++) {
    int ci = L->cr[i];
    if (G_bar)
      for (int q = L->bs[L->bk[i]]; q < L->bs[L->bk[i] + 1]; q++)
        G_bar[(size_t)ci * n + L->cr[L->br[q]]] += Ab[(size_t)i * mc + L->br[q]];
    for (int b = 0; b < n; b++) {
      if (L->nb[b] < 0 || L->bk[L->nb[b]] != L->bk[i]) continue;
      double hb = Ab[(size_t)i * mc + L->nb[b]];
      if (G_bar) G_bar[(size_t)ci * n + b] += L->e[b] * hb;
      eb[b] += p->G[(size_t)ci * n + b] * hb;
    }
  }
}

// s = (mean diagonal)^(-1/2): diagonal bar = -s^3/2 s bar (a contact's three rows share s: their s bar summed)
// added to G_bar's diagonal and/or Gd
static void vjp_scale_diag(const lcpLocal* L, const physConstraintProblem* p, const double* sb, double* G_bar,
                           double* Gd) {
  int n = p->n;
  for (int i = 0; i < n; i++) {
    if (!L->live[i]) continue;
    double db = -0.5 * L->s[i] * L->s[i] * L->s[i];
    if (i < 3 * p->nc) {
      if (i % 3) continue;
      db *= (sb[i] + sb[i + 1] + sb[i + 2]) / 3;
      for (int k = i; k < i + 3; k++) {
        if (G_bar) G_bar[(size_t)k * n + k] += db;
        if (Gd) Gd[k] += db;
      }
    } else {
      if (G_bar) G_bar[(size_t)i * n + i] += db * sb[i];
      if (Gd) Gd[i] += db * sb[i];
    }
  }
}

// reverse mode: given lambda_bar = dL/dlambda (n) at the solution sol of p, g_bar = dL/dg (n), G_bar = dL/dG
// (n x n, entries as independent; may be NULL) and mu_bar = dL/dmu (nc; may be NULL). Scratch from d's arena.
// Returns PHYS_OK.
// the reverse mode at the local structure L of sol (vjp_local): outputs as phys_solve_lcp_vjp
// (Ga, Gb, Gd non-NULL: G_bar in factored form instead, G_bar = sum_t Ga_t Gb_t' + diag(Gd), see
// phys_solve_lcp_vjp_factored)
static void vjp_apply(const lcpLocal* restrict Lp, physData* d, const physConstraintProblem* p,
                      const physConstraintSolution* sol, const double* lambda_bar, double* g_bar, double* G_bar,
                      double* mu_bar, double* Ga, double* Gb, double* Gd) {
  int n = p->n;
  vjp_zero(p, g_bar, G_bar, mu_bar, Ga, Gb, Gd);
  if (n <= 0) return;
  size_t mark = phys_stack_mark(d);
  const lcpLocal L = *Lp;
  int mc = L.m;
  double* sb = phys_stack_alloc(d, (size_t)n);      // s_bar
  double* eb = phys_stack_alloc(d, (size_t)n);      // e_bar
  double* lb = phys_stack_alloc(d, (size_t)mc + 1); // lambda_C bar
  double* xb = phys_stack_alloc(d, (size_t)mc + 1);
  double* Ab = phys_stack_alloc(d, (size_t)mc * mc + 1);
  double* u1 = phys_stack_alloc(d, (size_t)mc + 1);
  double* u2 = phys_stack_alloc(d, (size_t)mc + 1);
  double* u3 = phys_stack_alloc(d, (size_t)mc + 1);
  double* u4 = phys_stack_alloc(d, (size_t)mc + 1);
  double* t = phys_stack_alloc(d, (size_t)mc + 1);
  memset(sb, 0, sizeof(double) * (size_t)n);
  memset(eb, 0, sizeof(double) * (size_t)n);
  // lambda_b = e_b lambda_n: lambda_n bar += e_b lambda_b bar, e_b bar = lambda_n lambda_b bar
  for (int i = 0; i < mc; i++) lb[i] = lambda_bar[L.cr[i]];
  for (int b = 0; b < n; b++)
    if (L.nb[b] >= 0) {
      lb[L.nb[b]] += L.e[b] * lambda_bar[b];
      eb[b] = sol->lambda[L.cr[L.nb[b]]] * lambda_bar[b];
    }
  // lambda_C = S x: x bar = S lambda_C bar, s bar += x lambda_C bar
  for (int i = 0; i < mc; i++) {
    xb[i] = L.s[L.cr[i]] * lb[i];
    sb[L.cr[i]] += L.x[i] * lb[i];
  }
  // u1 = A^+' x_bar (= b_bar), u2 = A^+ u1, u3 = A^+' x, u4 = (I - A^+ A) x_bar; a regular A has r = 0 and
  // u4 = 0: u2 = u4 = 0 there (their outer products vanish)
  vjp_mulv(u1, L.P, xb, mc, &L, 1);
  vjp_mulv(u3, L.P, L.x, mc, &L, 1);
  if (L.regular) {
    for (int i = 0; i < mc; i++) u2[i] = u4[i] = 0;
  } else {
    vjp_mulv(u2, L.P, u1, mc, &L, 0);
    vjp_mulv(t, L.A, xb, mc, &L, 0);
    vjp_mulv(u4, L.P, t, mc, &L, 0);
    for (int i = 0; i < mc; i++) u4[i] = xb[i] - u4[i];
  }
  // factored: H_bar = S A_bar S lifted, G_bar = sum_t place(S a_t) lift(S c_t)' with (a, c) = (-u1, x), (r, u2),
  // (u3, u4); lift(y)_Ck = y_k, lift(y)_b = e_b y_nb(b)
  if (Ga) vjp_factored(&L, n, u1, u2, u3, u4, Ga, Gb);
  // A_bar = -u1 x' + r u2' + u3 u4' on the blocks' pairs (H is 0 across blocks: so is the step's dG, and the
  // entries G_bar gets there are left 0)
  memset(Ab, 0, sizeof(double) * ((size_t)mc * mc + 1));
  for (int i = 0; i < mc; i++)
    for (int q = L.bs[L.bk[i]]; q < L.bs[L.bk[i] + 1]; q++) {
      int k = L.br[q];
      Ab[(size_t)i * mc + k] = -u1[i] * L.x[k] + L.r[i] * u2[k] + u3[i] * u4[k];
    }
  // b = -S g_C: g bar = -S b bar, s bar -= g b bar
  for (int i = 0; i < mc; i++) {
    int ci = L.cr[i];
    g_bar[ci] = -L.s[ci] * u1[i];
    sb[ci] -= p->g[ci] * u1[i];
  }
  // A = S H S: H bar = S A_bar S (in Ab), s bar from both sides
  for (int i = 0; i < mc; i++)
    for (int q = L.bs[L.bk[i]]; q < L.bs[L.bk[i] + 1]; q++) {
      int k = L.br[q], ci = L.cr[i], ck = L.cr[k];
      double a = Ab[(size_t)i * mc + k], h = L.H[(size_t)i * mc + k];
      sb[ci] += a * L.s[ck] * h;
      sb[ck] += a * L.s[ci] * h;
      Ab[(size_t)i * mc + k] = L.s[ci] * L.s[ck] * a;
    }
  vjp_lift_h(&L, p, Ab, G_bar, eb);
  // e_b = sgn_b mu_c (mu_c >= 0)
  if (mu_bar)
    for (int b = 0; b < n; b++)
      if (L.nb[b] >= 0 && p->mu[b / 3] >= 0) mu_bar[b / 3] += L.sgn[b] * eb[b];
  // s = (mean diagonal)^(-1/2): diagonal bar = -s^3/2 s bar (a contact's three rows share s: summed)
  if (G_bar || Gd) vjp_scale_diag(&L, p, sb, G_bar, Gd);
  phys_stack_free(d, mark);
}

physStatus phys_solve_lcp_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                              double* G_bar, double* mu_bar) {
  (void)m;
  size_t mark = phys_stack_mark(d);
  lcpLocal L;
  memset(&L, 0, sizeof L);
  if (p->n > 0) vjp_local(&L, d, p, sol);
  vjp_apply(&L, d, p, sol, lambda_bar, g_bar, G_bar, mu_bar, NULL, NULL, NULL);
  phys_stack_free(d, mark);
  return PHYS_OK;
}

physStatus phys_solve_lcp_vjp_factored(const physModel* m, physData* d, const physConstraintProblem* p,
                                       const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                                       double* Ga, double* Gb, double* Gd, double* mu_bar) {
  (void)m;
  size_t mark = phys_stack_mark(d);
  lcpLocal L;
  memset(&L, 0, sizeof L);
  if (p->n > 0) vjp_local(&L, d, p, sol);
  vjp_apply(&L, d, p, sol, lambda_bar, g_bar, NULL, mu_bar, Ga, Gb, Gd);
  phys_stack_free(d, mark);
  return PHYS_OK;
}

void phys_solve_lcp_vjp_local(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                              double* G_bar, double* mu_bar) {
  vjp_apply(&loc->L, d, p, sol, lambda_bar, g_bar, G_bar, mu_bar, NULL, NULL, NULL);
}

void phys_solve_lcp_vjp_factored_local(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                                       const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                                       double* Ga, double* Gb, double* Gd, double* mu_bar) {
  vjp_apply(&loc->L, d, p, sol, lambda_bar, g_bar, NULL, mu_bar, Ga, Gb, Gd);
}

// the label of normal (or limit) row i by the sign of its adjoint: lambda_bar < 0 separating, > 0 clamping,
// 0 unchanged (-1)
static int aware_normal(double lb) {
  return lb < 0 ? PHYS_ROW_SEPARATING : (lb > 0 ? PHYS_ROW_CLAMPING : -1);
}

int phys_lcp_aware_states(const physConstraintProblem* p, const physConstraintSolution* sol,
                          const double* lambda_bar, int* state) {
  int changed = 0;
  for (int i = 0; i < p->n; i++) state[i] = sol->state[i];
  // contacts: the normal decides, tangents follow (separating with it; sticking when newly clamped)
  for (int c = 0; c < p->nc; c++) {
    int r = 3 * c, lab = aware_normal(lambda_bar[r]);
    if (lab < 0 || lab == sol->state[r]) continue;
    state[r] = lab;
    state[r + 1] = state[r + 2] = lab == PHYS_ROW_SEPARATING ? PHYS_ROW_SEPARATING : PHYS_ROW_CLAMPING;
  }
  // limit rows: the row itself
  for (int i = 3 * p->nc; i < p->n; i++) {
    int lab = aware_normal(lambda_bar[i]);
    if (lab >= 0) state[i] = lab;
  }
  for (int i = 0; i < p->n; i++) changed += state[i] != sol->state[i];
  return changed;
}

//---------------------------------------------------------------------------------------------------------
// forward mode through products with dG (dG symmetric)
//
// jvp_apply reads dG only through dA x, dA' r, dA' w (w = A^+' x) and the diagonal (the scales). With
// lift(u)_{C_k} = u_k, lift(u)_b = e_b u_nb(b) and place(u)_{C_k} = u_k (0 elsewhere), dG and G symmetric:
//   (dA v)_i  = s_i ([dG lift(S v)]_Ci + sum_b de_b G_Ci,b (S v)_nb(b)) + ds_i (H S v)_i + s_i (H dS v)_i
//   (dA' u)_k = s_k ([dG place(S u)]_Ck + sum_{b: nb(b) = k} (e_b [dG place(S u)]_b + de_b [G place(S u)]_b))
//               + s_k sum_i ds_i H_ik u_i + ds_k sum_i s_i H_ik u_i
// and lift(S x) = lambda. So three products dG z_k per direction replace the n x n matrix dG.

void phys_solve_lcp_jvp_vectors(const physLcpLocal* loc, const physConstraintProblem* p, double* z) {
  const lcpLocal* L = &loc->L;
  int n = p->n, mc = L->m;
  if (n <= 0) return;
  memset(z, 0, sizeof(double) * 3 * (size_t)n);
  double *z1 = z + n, *z2 = z + 2 * (size_t)n;
  for (int i = 0; i < mc; i++) {
    int ci = L->cr[i];
    z[ci] = L->s[ci] * L->x[i];
    z1[ci] = L->s[ci] * L->r[i];
    z2[ci] = L->s[ci] * L->w[i];
  }
  for (int b = 0; b < n; b++)
    if (L->nb[b] >= 0) z[b] = L->e[b] * z[L->cr[L->nb[b]]];
}

// t = dA' u (m) for u (m) with hsu = H' S u, zu = dG place(S u) (n, NULL: dG = 0), ds, de as in jvp_apply
// (dyn: ds may be nonzero, fr: de may be); a, b scratch (m)
static void prod_dat(double* t, const lcpLocal* L, const physConstraintProblem* p, const double* u,
                     const double* hsu, const double* zu, const double* ds, const double* de, int dyn, int fr,
                     double* a, double* b) {
  int n = p->n, mc = L->m;
  for (int k = 0; k < mc; k++) t[k] = 0;
  if (dyn) {
    // t_k = s_k (zu_Ck + (H' (dS u))_k) + ds_k (H' (S u))_k  (hsu = H' S u)
    for (int i = 0; i < mc; i++) a[i] = ds[L->cr[i]] * u[i];
    vjp_mulv(b, L->H, a, mc, L, 1);
    for (int k = 0; k < mc; k++) {
      int ck = L->cr[k];
      t[k] = L->s[ck] * (zu[ck] + b[k]) + ds[ck] * hsu[k];
    }
  }
  // bounded rows b of clamped normal k: t_k += s_k (e_b zu_b + de_b [G place(S u)]_b)
  for (int r = 0; r < n; r++) {
    if (L->nb[r] < 0) continue;
    int k = L->nb[r];
    double g = 0;
    if (fr && de[r] != 0)
      for (int i = 0; i < mc; i++) g += p->G[(size_t)r * n + L->cr[i]] * L->s[L->cr[i]] * u[i];
    t[k] += L->s[L->cr[k]] * ((dyn ? L->e[r] * zu[r] : 0) + de[r] * g);
  }
}

void phys_solve_lcp_jvp_prod(const physLcpLocal* loc, physData* d, const physConstraintProblem* p,
                             const physConstraintSolution* sol, const double* dg, const double* dGz,
                             const double* dGdiag, const double* dmu, double* lambda_dot) {
  int n = p->n;
  if (n <= 0) return;
  size_t mark = phys_stack_mark(d);
  const lcpLocal* L = &loc->L;
  int mc = L->m, dyn = dGz != NULL, fr = 0;
  double* ds = phys_stack_alloc(d, (size_t)n);
  double* de = phys_stack_alloc(d, (size_t)n);
  double* v = phys_stack_alloc(d, (size_t)mc + 1);
  double* w = phys_stack_alloc(d, (size_t)mc + 1);
  double* t = phys_stack_alloc(d, (size_t)mc + 1);
  double* dx = phys_stack_alloc(d, (size_t)mc + 1);
  double* a = phys_stack_alloc(d, (size_t)mc + 1);
  double* b = phys_stack_alloc(d, (size_t)mc + 1);
  // ds = -s^3/2 d(mean diagonal), de_b = sgn_b dmu_c
  for (int i = 0; i < n; i++) {
    double dd = 0;
    if (dyn && L->live[i]) {
      if (i < 3 * p->nc) {
        int r0 = 3 * (i / 3);
        dd = (dGdiag[r0] + dGdiag[r0 + 1] + dGdiag[r0 + 2]) / 3;
      } else {
        dd = dGdiag[i];
      }
    }
    ds[i] = -0.5 * L->s[i] * L->s[i] * L->s[i] * dd;
    de[i] = L->nb[i] >= 0 && dmu && p->mu[i / 3] >= 0 ? L->sgn[i] * dmu[i / 3] : 0;
    fr |= de[i] != 0;
  }
  // v = db - dA x,  db = -dS g_C - S dg_C;  dA x = S (dG lambda)_C + dS H S x + S H dS x + S (G dE S x)_C
  for (int i = 0; i < mc; i++) {
    int ci = L->cr[i];
    v[i] = -ds[ci] * p->g[ci] - L->s[ci] * (dg ? dg[ci] : 0);
  }
  if (dyn) {
    for (int k = 0; k < mc; k++) a[k] = ds[L->cr[k]] * L->x[k];
    vjp_mulv(t, L->H, a, mc, L, 0);   // H dS x
    for (int i = 0; i < mc; i++) {
      int ci = L->cr[i];
      v[i] -= L->s[ci] * (dGz[ci] + t[i]) + ds[ci] * L->hsx[i];
    }
  }
  if (fr)
    for (int r = 0; r < n; r++)
      if (L->nb[r] >= 0 && de[r] != 0) {
        int k = L->nb[r];
        double sx = de[r] * L->s[L->cr[k]] * L->x[k];
        for (int i = 0; i < mc; i++) v[i] -= L->s[L->cr[i]] * p->G[(size_t)L->cr[i] * n + r] * sx;
      }
  // dx = A^+ v + A^+ A^+' (dA' r) + (I - A^+ A) (dA' w),  w = A^+' x  (dA = 0 when neither dG nor dE moves)
  vjp_mulv(dx, L->P, v, mc, L, 0);
  if ((dyn || fr) && !L->regular) {
    prod_dat(t, L, p, L->r, L->hsr, dyn ? dGz + n : NULL, ds, de, dyn, fr, a, b);   // dA' r
    vjp_mulv(w, L->P, t, mc, L, 1);
    vjp_mulv(v, L->P, w, mc, L, 0);
    for (int i = 0; i < mc; i++) dx[i] += v[i];
    prod_dat(t, L, p, L->w, L->hsw, dyn ? dGz + 2 * (size_t)n : NULL, ds, de, dyn, fr, a, b);   // y = dA' w
    for (int i = 0; i < mc; i++) dx[i] += t[i];
    vjp_mulv(w, L->A, t, mc, L, 0);
    vjp_mulv(v, L->P, w, mc, L, 0);
    for (int i = 0; i < mc; i++) dx[i] -= v[i];
  }
  // lambda_C = S x, lambda_b = e_b lambda_n, lambda_S = 0
  for (int i = 0; i < n; i++) lambda_dot[i] = 0;
  for (int i = 0; i < mc; i++) lambda_dot[L->cr[i]] = ds[L->cr[i]] * L->x[i] + L->s[L->cr[i]] * dx[i];
  for (int r = 0; r < n; r++)
    if (L->nb[r] >= 0) {
      int cn = L->cr[L->nb[r]];
      lambda_dot[r] = L->e[r] * lambda_dot[cn] + de[r] * sol->lambda[cn];
    }
  phys_stack_free(d, mark);
}

int phys_solve_lcp_local_scaled(const physLcpLocal* loc) {
  for (int i = 0; i < loc->L.n; i++)
    if (loc->L.live[i]) return 1;
  return 0;
}

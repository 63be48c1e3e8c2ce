// lcp.c - the `lcp` contact model: the boxed LCP with a 4-sided friction pyramid, solved exactly by Lemke's
// complementary pivoting, with Nimble's warm start and LCP stabilization (paper 001, appendix B).
//
// The problem (contact i owns rows n = 3i, t = 3i+1, 3i+2; limit rows follow), with w = G lambda + g:
//   0 <= lambda_n  _|_  w_n >= 0,     0 <= lambda_l  _|_  w_l >= 0   (limits)
//   each tangent row t on its own: -mu lambda_n <= lambda_t <= mu lambda_n, and
//   w_t = 0 strictly inside, w_t <= 0 at +mu lambda_n, w_t >= 0 at -mu lambda_n.
//
// Why Lemke on a Stewart-Trinkle LCP and not Dantzig with friction-index bounds (ODE, DART, Nimble):
// Dantzig's boxed method fixes a friction row's bounds from the normal impulse at the moment the row enters;
// later pivots change lambda_n and leave earlier friction rows outside their new bounds (so the result is not
// an exact solution of the problem above), and the bounded system G_CC + G_CB E it pivots on is not
// symmetric, so its monotone-progress argument and termination are lost. Written instead as a standard LCP
// in z >= 0, the pyramid is exact: per tangent row t, lambda_t = b+ - b- and a slack sigma_t (the sliding
// speed along t):
//   0 <= b+      _|_   w_t + sigma_t            >= 0
//   0 <= b-      _|_  -w_t + sigma_t            >= 0
//   0 <= sigma_t _|_   mu lambda_n - b+ - b-   >= 0
// (sigma_t > 0 puts the row on a bound and makes w_t = -sigma_t (upper, b+ > 0) or +sigma_t (lower);
// sigma_t = 0 forces w_t = 0 wherever lambda_t sits). Its matrix is [D'GD, E; F, -E', 0] with D the map
// (lambda_n, b+, b-) -> lambda: z'Mz = lambda'G lambda + sum mu lambda_n sigma >= 0 on z >= 0 (copositive),
// and Lemke's method with lexicographic degeneracy resolution ends at a solution whenever the contacts can be
// separated at all (Stewart & Trinkle 1996, Anitescu & Potra 1997): no bound is ever stale, singular G needs
// no inverse. Cost: 7 LCP variables per contact with friction (1 when mu = 0), a dense N x N basis inverse
// updated per pivot (O(N^2) each); the warm start below avoids it on most steps.
//
// Every result goes through the same final stage (paper 001 appendix B): classify each row (clamping C,
// separating S, upper U, lower L), solve the clamping subsystem
//   (G_CC + G_CB E) lambda_C = -g_C,   lambda_B = E lambda_C (= +-mu lambda_n),   lambda_S = 0
// for its minimal-norm solution by a complete orthogonal decomposition (a box's four coplanar corners make
// it singular: the four get equal shares), and keep it if every condition above holds. The warm start does
// exactly this with last step's labels and skips Lemke when the check passes.
//
// Everything runs on a scaled problem: per contact s = 1/sqrt(mean diag of its 3 rows of G), and a velocity
// scale gamma = max |s g|: G^ = S G S, g^ = S g / gamma, lambda = gamma S lambda^, w^ = S w / gamma, so that
// diag G^ ~ 1 and |g^| <= 1 whatever the units; the scaling keeps each contact's pyramid (one s per contact).
#include <math.h>
#include <string.h>

#include "contact.h"

#define LCP_TOL_ACCEPT 1e-11    // accepted natural-map residual, relative to max_i sum_j |G^_ij lambda^_j|
#define LCP_TOL_CLASS 1e-9      // "zero" in the classification (scaled units)
#define LCP_TOL_RANK 1e-12      // rank cut of the clamping subsystem: |R_kk| <= tol |R_00| (QR), or
                                // Cholesky pivot <= tol * the first (both measure eigenvalues)
#define LCP_TOL_PIVOT 1e-11     // Lemke: pivots below tol * max|alpha| are never taken
#define LCP_TOL_TIE 1e-11       // Lemke: ratio ties (scaled units) go to the lexicographic rule
#define LCP_TOL_STATUS 1e-8     // a best effort above this relative residual is reported as PHYS_ERR_NUMERIC
#define LCP_REGULARIZE 1e-8     // diagonal added to G^ when Lemke fails on the exact problem (then re-checked)
#define LCP_PGS_SWEEPS 300      // Gauss-Seidel sweeps of the last fallback

// the scaled problem (see the file comment)
typedef struct lcpScaled_ {
  int n, nc, nl;
  const double* G;          // original Delassus matrix (n x n)
  double* s;                // n row scales 1/sqrt(d), equal on a contact's three rows
  double* gh;               // n: g^ = s g / gamma
  double* mu;               // nc friction coefficients, negative ones read as 0
  double gamma;             // velocity scale max |s g| (1 if g = 0)
  double eps;               // regularization added to diag G^ (0 but in Lemke's retry)
} lcpScaled;

// LCP variable kinds: a normal or limit impulse, b+ or b- of a tangent row, or the slack sigma of a tangent row
enum { LCP_NORMAL = 0, LCP_BPLUS, LCP_BMINUS, LCP_SIGMA };

// the Lemke variables: per contact with mu > 0, 7 in the order (lambda_n, b+1, b-1, b+2, b-2, sigma1, sigma2)
typedef struct lcpVars_ {
  int N;
  int* kind;                // LCP_* kind
  int* row;                 // row of G: its own, or for b+-/sigma the tangent row
  int* base;                // index of the contact's lambda_n variable (its own index for limits)
} lcpVars;

// n ints from d's arena
static int* lcp_ints(physData* d, int n) {
  return (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
}

// G^_ij = s_i s_j G_ij (+ eps on the diagonal)
static inline double lcp_gh(const lcpScaled* P, int i, int j) {
  return P->s[i] * P->s[j] * P->G[(size_t)i * (size_t)P->n + (size_t)j] + (i == j ? P->eps : 0.0);
}

// contact of row r (-1 for a limit row)
static inline int lcp_contact(const lcpScaled* P, int r) {
  return r < 3 * P->nc ? r / 3 : -1;
}

//---------------------------------------------------------------------------------------------------------
// scaling, velocities and the conditions

// fill P: scales s (per contact from the mean of its three diagonal entries, per limit row from its own),
// g^ and gamma; tiny or non-positive diagonals take the largest one (1 if G = 0)
static void lcp_scale(lcpScaled* P, const physConstraintProblem* p) {
  int n = p->n;
  double dmax = 0;
  for (int i = 0; i < n; i++) dmax = fmax(dmax, p->G[(size_t)i * n + i]);
  if (!(dmax > 0)) dmax = 1;
  for (int i = 0; i < n; i++) {
    double dd;
    if (i < 3 * p->nc) {
      const double* Gc = p->G + (size_t)(3 * (i / 3)) * n + 3 * (i / 3);
      dd = (Gc[0] + Gc[n + 1] + Gc[2 * n + 2]) / 3;
    } else {
      dd = p->G[(size_t)i * n + i];
    }
    if (!(dd > 1e-12 * dmax)) dd = dmax;
    P->s[i] = 1 / sqrt(dd);
  }
  double gamma = 0;
  for (int i = 0; i < n; i++) gamma = fmax(gamma, fabs(P->s[i] * p->g[i]));
  P->gamma = gamma > 0 ? gamma : 1;
  for (int i = 0; i < n; i++) P->gh[i] = P->s[i] * p->g[i] / P->gamma;
  for (int i = 0; i < p->nc; i++) P->mu[i] = p->mu[i] > 0 ? p->mu[i] : 0;
}

// w^ = G^ lambda^ + g^; returns max_i sum_j |G^_ij lambda^_j| (the rounding scale of w^)
static double lcp_velocity(double* wh, const lcpScaled* P, const double* lh) {
  double big = 0;
  for (int i = 0; i < P->n; i++) {
    double s = P->gh[i], a = 0;
    for (int j = 0; j < P->n; j++) {
      double t = lcp_gh(P, i, j) * lh[j];
      s += t;
      a += fabs(t);
    }
    wh[i] = s;
    big = fmax(big, a);
  }
  return big;
}

// natural-map residual of row i: normal/limit min(lambda, w); tangent lambda - clamp(lambda - w, lo, hi)
static double lcp_row_residual(const lcpScaled* P, const double* lh, const double* wh, int i) {
  int c = lcp_contact(P, i);
  if (c < 0 || i == 3 * c) return fmin(lh[i], wh[i]);
  double hi = P->mu[c] * fmax(lh[3 * c], 0), v = lh[i] - wh[i];
  v = v > hi ? hi : (v < -hi ? -hi : v);
  return lh[i] - v;
}

// max |natural-map residual| over the rows (scaled units): zero exactly at a solution
static double lcp_residual(const lcpScaled* P, const double* lh, const double* wh) {
  double r = 0;
  for (int i = 0; i < P->n; i++) r = fmax(r, fabs(lcp_row_residual(P, lh, wh, i)));
  return r;
}

// the same residual in row-velocity units (m/s, rad/s): row i's scaled residual times gamma / s_i
static double lcp_residual_velocity(const lcpScaled* P, const double* lh, const double* wh) {
  double r = 0;
  for (int i = 0; i < P->n; i++) r = fmax(r, fabs(lcp_row_residual(P, lh, wh, i)) * P->gamma / P->s[i]);
  return r;
}

//---------------------------------------------------------------------------------------------------------
// row labels

// labels that define a subsystem: normals and limits S or C; tangents of a separating contact S; other
// tangents C, U or L (a guess of S there reads as C; mu = 0 tangents U)
static void lcp_sanitize(int* lab, const lcpScaled* P, const int* guess) {
  for (int i = 0; i < P->n; i++) {
    int c = lcp_contact(P, i);
    if (c < 0 || i == 3 * c) {
      lab[i] = guess[i] == PHYS_ROW_SEPARATING ? PHYS_ROW_SEPARATING : PHYS_ROW_CLAMPING;
    } else if (guess[3 * c] == PHYS_ROW_SEPARATING) {
      lab[i] = PHYS_ROW_SEPARATING;
    } else if (P->mu[c] == 0) {
      lab[i] = PHYS_ROW_UPPER;   // lambda_t = 0 on either bound; relabelled by the sign of w at the end
    } else {
      int gs = guess[i];
      lab[i] = (gs == PHYS_ROW_UPPER || gs == PHYS_ROW_LOWER) ? gs : PHYS_ROW_CLAMPING;
    }
  }
}

// labels read from a solution: a normal is C if lambda > tol, S if w > tol, and a tie (both ~0) goes to
// C when prefer_clamp (the stabilized subsystem then spreads the load) else to S; a tangent is U/L when at
// its bound with w of the right sign, C when inside or tied (prefer_clamp) ; mu = 0 rows are U or L by w
static void lcp_classify(int* lab, const lcpScaled* P, const double* lh, const double* wh, double tol,
                         int prefer_clamp) {
  for (int i = 0; i < P->n; i++) {
    int c = lcp_contact(P, i);
    if (c < 0 || i == 3 * c) {
      if (lh[i] > tol) lab[i] = PHYS_ROW_CLAMPING;
      else if (wh[i] > tol) lab[i] = PHYS_ROW_SEPARATING;
      else lab[i] = prefer_clamp ? PHYS_ROW_CLAMPING : PHYS_ROW_SEPARATING;
    }
  }
  for (int c = 0; c < P->nc; c++) {
    for (int i = 3 * c + 1; i < 3 * c + 3; i++) {
      double hi = P->mu[c] * fmax(lh[3 * c], 0);
      int at_hi = lh[i] >= hi - tol, at_lo = lh[i] <= -hi + tol;
      if (lab[3 * c] == PHYS_ROW_SEPARATING) lab[i] = PHYS_ROW_SEPARATING;
      else if (P->mu[c] == 0) lab[i] = wh[i] <= 0 ? PHYS_ROW_UPPER : PHYS_ROW_LOWER;
      else if (at_hi && wh[i] < -tol) lab[i] = PHYS_ROW_UPPER;
      else if (at_lo && wh[i] > tol) lab[i] = PHYS_ROW_LOWER;
      else if (!(at_hi || at_lo) || prefer_clamp) lab[i] = PHYS_ROW_CLAMPING;
      else lab[i] = at_hi ? PHYS_ROW_UPPER : PHYS_ROW_LOWER;
    }
  }
}

// mu = 0 tangents of a clamping contact: lambda = 0 at both bounds, labelled by the sign of w (U if w <= 0)
static void lcp_label_frictionless(int* lab, const lcpScaled* P, const double* wh) {
  for (int c = 0; c < P->nc; c++) {
    if (P->mu[c] != 0 || lab[3 * c] == PHYS_ROW_SEPARATING) continue;
    for (int i = 3 * c + 1; i < 3 * c + 3; i++) lab[i] = wh[i] <= 0 ? PHYS_ROW_UPPER : PHYS_ROW_LOWER;
  }
}

//---------------------------------------------------------------------------------------------------------
// minimal-norm solution of a square, possibly singular system (complete orthogonal decomposition)

// Householder reflector of x (k values) in place: H = I - tau v v' (v_0 = 1, v_1.. stored in x[1..]) maps
// x to beta e_1; x[0] <- beta; returns beta
static double lcp_house(double* x, int k, double* tau) {
  double sigma = 0, alpha = x[0];
  for (int i = 1; i < k; i++) sigma += x[i] * x[i];
  if (sigma == 0) {
    *tau = 0;
    return alpha;
  }
  double nrm = sqrt(alpha * alpha + sigma), beta = alpha <= 0 ? nrm : -nrm, v0 = alpha - beta;
  *tau = (beta - alpha) / beta;
  for (int i = 1; i < k; i++) x[i] /= v0;
  x[0] = beta;
  return beta;
}

// y <- (I - tau v v') y for the k values of y, v = (1, vt[1..k-1])
static void lcp_house_apply(double* y, const double* vt, int k, double tau) {
  if (tau == 0) return;
  double s = y[0];
  for (int i = 1; i < k; i++) s += vt[i] * y[i];
  s *= tau;
  y[0] -= s;
  for (int i = 1; i < k; i++) y[i] -= s * vt[i];
}

// u (m) = the minimal-norm solution of Bt' u = y for Bt (m x r, column-major, full column rank, overwritten):
// Bt = Z [T; 0] by Householder QR, so Bt' = [T' 0] Z' and u = Z [T'^-1 y; 0]
static void lcp_minnorm_wide(double* u, physData* d, double* Bt, int m, int r, const double* y) {
  size_t mark = phys_stack_mark(d);
  double* tau = phys_stack_alloc(d, (size_t)r);
  for (int k = 0; k < r; k++) {
    lcp_house(Bt + (size_t)k * m + k, m - k, tau + k);
    for (int j = k + 1; j < r; j++) lcp_house_apply(Bt + (size_t)j * m + k, Bt + (size_t)k * m + k, m - k, tau[k]);
  }
  // T' v = y (T' lower triangular: T'_ij = T_ji = Bt[i*m + j], j <= i), u = Z [v; 0]
  for (int i = 0; i < m; i++) u[i] = 0;
  for (int i = 0; i < r; i++) {
    double s = y[i];
    for (int j = 0; j < i; j++) s -= Bt[(size_t)i * m + j] * u[j];
    u[i] = s / Bt[(size_t)i * m + i];
  }
  for (int k = r - 1; k >= 0; k--) lcp_house_apply(u + k, Bt + (size_t)k * m + k, m - k, tau[k]);
  phys_stack_free(d, mark);
}

// x = the minimal-norm least-squares solution of A x = b (A m x m column-major, overwritten; b kept):
// A P = Q [R11 R12; 0 0] by Householder QR with column pivoting (rank r: |R_kk| > tol |R_00|), then
// [R11 R12]' = Z [T; 0] by a second QR, so that x = P Z [T'^-1 (Q'b)_1:r; 0]. Returns r.
static int lcp_minnorm(double* x, physData* d, double* A, const double* b, int m) {
  size_t mark = phys_stack_mark(d);
  double* tau = phys_stack_alloc(d, (size_t)m + 1);
  double* c = phys_stack_alloc(d, (size_t)m + 1);
  int* perm = lcp_ints(d, m);
  int r = m;
  double r0 = 0;
  for (int k = 0; k < m; k++) perm[k] = k;

  // A P = Q R, pivoting the remaining column of largest norm to the front
  for (int k = 0; k < m; k++) {
    int best = k;
    double bn = -1;
    for (int j = k; j < m; j++) {
      double s = 0;
      for (int i = k; i < m; i++) s += A[(size_t)j * m + i] * A[(size_t)j * m + i];
      if (s > bn) bn = s, best = j;
    }
    if (best != k) {
      for (int i = 0; i < m; i++) {
        double t = A[(size_t)k * m + i];
        A[(size_t)k * m + i] = A[(size_t)best * m + i];
        A[(size_t)best * m + i] = t;
      }
      int t = perm[k];
      perm[k] = perm[best];
      perm[best] = t;
    }
    double beta = lcp_house(A + (size_t)k * m + k, m - k, tau + k);
    if (k == 0) r0 = fabs(beta);
    if (!(fabs(beta) > LCP_TOL_RANK * r0) || r0 == 0) {
      r = k;
      break;
    }
    for (int j = k + 1; j < m; j++) lcp_house_apply(A + (size_t)j * m + k, A + (size_t)k * m + k, m - k, tau[k]);
  }

  // c = Q'b
  memcpy(c, b, sizeof(double) * (size_t)m);
  for (int k = 0; k < r; k++) lcp_house_apply(c + k, A + (size_t)k * m + k, m - k, tau[k]);

  double* u = phys_stack_alloc(d, (size_t)m + 1);
  memset(u, 0, sizeof(double) * (size_t)m);
  if (r == m) {
    // full rank: R u = c by back substitution
    for (int i = m - 1; i >= 0; i--) {
      double s = c[i];
      for (int j = i + 1; j < m; j++) s -= A[(size_t)j * m + i] * u[j];
      u[i] = s / A[(size_t)i * m + i];
    }
  } else if (r > 0) {
    // [R11 R12] u = c_1:r with minimal norm: Bt = [R11 R12]' (m x r)
    double* Bt = phys_stack_alloc(d, (size_t)m * r);
    for (int j = 0; j < r; j++)
      for (int i = 0; i < m; i++) Bt[(size_t)j * m + i] = i >= j ? A[(size_t)i * m + j] : 0;
    lcp_minnorm_wide(u, d, Bt, m, r, c);
  }
  for (int k = 0; k < m; k++) x[perm[k]] = u[k];
  phys_stack_free(d, mark);
  return r;
}

// the same for a symmetric positive semidefinite A (no bounded rows: A = G^_CC), about 4x cheaper:
// P'AP = L L' by Cholesky with diagonal pivoting (rank r: pivots > tol * the first), L y = (P'b)_1:r on
// the leading triangle, then the minimal-norm x' with L' x' = y (lcp_minnorm_wide), x = P x'.
// A is column-major with both triangles; its lower triangle is overwritten. Returns r.
static int lcp_minnorm_sym(double* x, physData* d, double* A, const double* b, int m) {
  size_t mark = phys_stack_mark(d);
  int* perm = lcp_ints(d, m);
  double* y = phys_stack_alloc(d, (size_t)m + 1);
  double* u = phys_stack_alloc(d, (size_t)m + 1);
  int r = m;
  double d0 = 0;
#define LO(i, j) A[(i) >= (j) ? (size_t)(j) * m + (i) : (size_t)(i) * m + (j)]
  for (int k = 0; k < m; k++) perm[k] = k;
  for (int k = 0; k < m; k++) {
    int p = k;
    for (int j = k + 1; j < m; j++)
      if (LO(j, j) > LO(p, p)) p = j;
    if (k == 0) d0 = LO(p, p);
    if (!(LO(p, p) > LCP_TOL_RANK * d0)) {
      r = k;
      break;
    }
    if (p != k) {
      // symmetric exchange of k and p in the lower triangle
      for (int j = 0; j < m; j++) {
        if (j == k || j == p) continue;
        double t = LO(k, j);
        LO(k, j) = LO(p, j);
        LO(p, j) = t;
      }
      double t = LO(k, k);
      LO(k, k) = LO(p, p);
      LO(p, p) = t;
      int ti = perm[k];
      perm[k] = perm[p];
      perm[p] = ti;
    }
    // L_kk = sqrt(a_kk), L_ik = a_ik / L_kk, Schur complement a_ij -= L_ik L_jk (lower, i >= j > k)
    double* Lk = A + (size_t)k * m;
    Lk[k] = sqrt(Lk[k]);
    for (int i = k + 1; i < m; i++) Lk[i] /= Lk[k];
    for (int j = k + 1; j < m; j++) {
      double* Aj = A + (size_t)j * m;
      for (int i = j; i < m; i++) Aj[i] -= Lk[i] * Lk[j];
    }
  }
#undef LO
  // L y = (P'b)_1:r
  for (int i = 0; i < r; i++) {
    double s = b[perm[i]];
    for (int j = 0; j < i; j++) s -= A[(size_t)j * m + i] * y[j];
    y[i] = s / A[(size_t)i * m + i];
  }
  if (r == m) {
    // unique: L' x' = y
    for (int i = m - 1; i >= 0; i--) {
      double s = y[i];
      for (int j = i + 1; j < m; j++) s -= A[(size_t)i * m + j] * u[j];
      u[i] = s / A[(size_t)i * m + i];
    }
  } else if (r > 0) {
    double* Bt = phys_stack_alloc(d, (size_t)m * r);
    for (int j = 0; j < r; j++)
      for (int i = 0; i < m; i++) Bt[(size_t)j * m + i] = i >= j ? A[(size_t)j * m + i] : 0;
    lcp_minnorm_wide(u, d, Bt, m, r, y);
  } else {
    for (int i = 0; i < m; i++) u[i] = 0;
  }
  for (int k = 0; k < m; k++) x[perm[k]] = u[k];
  phys_stack_free(d, mark);
  return r;
}

//---------------------------------------------------------------------------------------------------------
// the clamping subsystem (paper 001, section IV and appendix B)

// lambda^ from the labels: lambda_S = 0, lambda_U/L = +-mu lambda_n, and lambda_C from
//   (G^_CC + G^_CB E) lambda_C = -g^_C
// by its minimal-norm solution (x0 = NULL), or as x0_C plus the minimal-norm correction of x0's residual
// (x0 = a solution from Lemke, refined without moving it elsewhere)
static void lcp_subsystem(double* lh, physData* d, const lcpScaled* P, const int* lab, const double* x0) {
  int n = P->n, m = 0;
  size_t mark = phys_stack_mark(d);
  int* pos = lcp_ints(d, n);
  int* cr = lcp_ints(d, n);
  for (int i = 0; i < n; i++) {
    pos[i] = lab[i] == PHYS_ROW_CLAMPING ? m : -1;
    if (pos[i] >= 0) cr[m++] = i;
  }
  double* A = phys_stack_alloc(d, (size_t)m * m + 1);
  double* b = phys_stack_alloc(d, (size_t)m + 1);
  double* y = phys_stack_alloc(d, (size_t)m + 1);

  // A = G^_CC + G^_CB E: a bounded row b adds sign*mu*G^_Cb to the column of its contact's normal
  for (int k = 0; k < m; k++)
    for (int i = 0; i < m; i++) A[(size_t)k * m + i] = lcp_gh(P, cr[i], cr[k]);
  int symmetric = 1;
  for (int j = 0; j < n; j++) {
    if (lab[j] != PHYS_ROW_UPPER && lab[j] != PHYS_ROW_LOWER) continue;
    int c = lcp_contact(P, j), k = c >= 0 ? pos[3 * c] : -1;
    if (k < 0 || P->mu[c] == 0) continue;
    symmetric = 0;
    double e = (lab[j] == PHYS_ROW_UPPER ? 1 : -1) * P->mu[c];
    for (int i = 0; i < m; i++) A[(size_t)k * m + i] += e * lcp_gh(P, cr[i], j);
  }
  // b = -g^_C - A x0_C
  for (int i = 0; i < m; i++) {
    b[i] = -P->gh[cr[i]];
    if (x0)
      for (int k = 0; k < m; k++) b[i] -= A[(size_t)k * m + i] * x0[cr[k]];
  }
  if (m > 0 && symmetric) lcp_minnorm_sym(y, d, A, b, m);
  else if (m > 0) lcp_minnorm(y, d, A, b, m);

  // assemble: C rows, then S rows 0 and bounded rows +-mu lambda_n
  for (int i = 0; i < n; i++) lh[i] = pos[i] >= 0 ? y[pos[i]] + (x0 ? x0[i] : 0) : 0;
  for (int j = 0; j < n; j++) {
    int c = lcp_contact(P, j);
    if (c < 0 || pos[3 * c] < 0) continue;
    if (lab[j] == PHYS_ROW_UPPER) lh[j] = P->mu[c] * lh[3 * c];
    if (lab[j] == PHYS_ROW_LOWER) lh[j] = -P->mu[c] * lh[3 * c];
  }
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// Lemke's method on the Stewart-Trinkle LCP  w = M z + q,  0 <= z _|_ w >= 0

// variables: per contact lambda_n and, if mu > 0, b+1 b-1 b+2 b-2 sigma1 sigma2; then the limits
static void lcp_vars(lcpVars* V, physData* d, const lcpScaled* P) {
  int N = 0;
  for (int c = 0; c < P->nc; c++) N += P->mu[c] > 0 ? 7 : 1;
  N += P->nl;
  V->N = N;
  V->kind = lcp_ints(d, N);
  V->row = lcp_ints(d, N);
  V->base = lcp_ints(d, N);
  int k = 0;
  for (int c = 0; c < P->nc; c++) {
    int k0 = k;
    V->kind[k] = LCP_NORMAL, V->row[k] = 3 * c, V->base[k++] = k0;
    if (P->mu[c] == 0) continue;
    for (int t = 1; t <= 2; t++) {
      V->kind[k] = LCP_BPLUS, V->row[k] = 3 * c + t, V->base[k++] = k0;
      V->kind[k] = LCP_BMINUS, V->row[k] = 3 * c + t, V->base[k++] = k0;
    }
    for (int t = 1; t <= 2; t++) V->kind[k] = LCP_SIGMA, V->row[k] = 3 * c + t, V->base[k++] = k0;
  }
  for (int l = 0; l < P->nl; l++) V->kind[k] = LCP_NORMAL, V->row[k] = 3 * P->nc + l, V->base[k] = k, k++;
}

// sign with which variable k enters lambda (b- enters negatively)
static inline double lcp_sign(const lcpVars* V, int k) {
  return V->kind[k] == LCP_BMINUS ? -1.0 : 1.0;
}

// column k of M: impulse columns D'G^D entries and, in sigma rows, mu (normal) or -1 (its b+-);
// a sigma column has +1 in the b+ and b- rows of its tangent
static void lcp_column(double* col, const lcpVars* V, const lcpScaled* P, int k) {
  int kk = V->kind[k];
  for (int i = 0; i < V->N; i++) {
    int ki = V->kind[i];
    if (kk == LCP_SIGMA) {
      col[i] = (ki == LCP_BPLUS || ki == LCP_BMINUS) && V->row[i] == V->row[k] ? 1.0 : 0.0;
    } else if (ki != LCP_SIGMA) {
      col[i] = lcp_sign(V, i) * lcp_sign(V, k) * lcp_gh(P, V->row[i], V->row[k]);
    } else if (kk == LCP_NORMAL) {
      col[i] = V->base[i] == k ? P->mu[lcp_contact(P, V->row[i])] : 0.0;
    } else {
      col[i] = V->row[i] == V->row[k] ? -1.0 : 0.0;
    }
  }
}

// the tableau: basis inverse (N x N row-major), basic values and which variable is basic in each position
// (0..N-1: w_i, N..2N-1: z_j, 2N: the artificial z0). Column j of B^-1 is the unit vector of w_j's position
// while w_j is basic (B e_pos = e_j) and no pivot changes it: only the other columns (listed in cols, ncol
// of them) are updated and multiplied, O(N ncol) per pivot instead of O(N^2)
typedef struct lcpTableau_ {
  int N;
  double* Binv;
  double* xb;
  int* basis;
  int* unit;                // unit[j]: w_j is basic (column j of B^-1 is a unit vector)
  int* cols;                // the columns that are not
  int ncol;
} lcpTableau;

// alpha = B^-1 a: the listed columns times a, plus a_j at w_j's position for each basic w_j
static void lcp_ftran(double* alpha, const lcpTableau* T, const double* a) {
  int N = T->N;
  for (int i = 0; i < N; i++) {
    const double* Bi = T->Binv + (size_t)i * N;
    double s = T->basis[i] < N ? a[T->basis[i]] : 0;
    for (int c = 0; c < T->ncol; c++) s += Bi[T->cols[c]] * a[T->cols[c]];
    alpha[i] = s;
  }
}

// exchange: variable `enter` with column alpha = B^-1 a becomes basic in position r
static void lcp_pivot(lcpTableau* T, const double* alpha, int r, int enter) {
  int N = T->N, leave = T->basis[r];
  if (leave < N) T->unit[leave] = 0, T->cols[T->ncol++] = leave;   // its column starts to change now
  double theta = T->xb[r] / alpha[r];
  double* Br = T->Binv + (size_t)r * N;
  for (int c = 0; c < T->ncol; c++) Br[T->cols[c]] /= alpha[r];
  for (int i = 0; i < N; i++) {
    if (i == r || alpha[i] == 0) continue;
    T->xb[i] -= alpha[i] * theta;
    double* Bi = T->Binv + (size_t)i * N;
    for (int c = 0; c < T->ncol; c++) Bi[T->cols[c]] -= alpha[i] * Br[T->cols[c]];
  }
  T->xb[r] = theta;
  T->basis[r] = enter;
  if (enter < N) {
    // w_enter is basic at r again: its column is exactly e_r
    for (int i = 0; i < N; i++) T->Binv[(size_t)i * N + enter] = i == r;
    T->unit[enter] = 1;
    int k = 0;
    for (int c = 0; c < T->ncol; c++)
      if (T->cols[c] != enter) T->cols[k++] = T->cols[c];
    T->ncol = k;
  }
}

// lexicographic minimum ratio test: the position leaving when alpha's variable enters (-1: unbounded ray).
// Ties in x_B/alpha go to z0 if it is among them, else to the lexicographically smallest row of
// B^-1 / alpha (no cycling on degenerate problems), and last to the largest pivot
static int lcp_ratio(const lcpTableau* T, const double* alpha, int* cand) {
  int N = T->N, nc = 0;
  double amax = 0;
  for (int i = 0; i < N; i++) amax = fmax(amax, fabs(alpha[i]));
  double tolp = LCP_TOL_PIVOT * amax, tmin = INFINITY;
  for (int i = 0; i < N; i++)
    if (alpha[i] > tolp) tmin = fmin(tmin, fmax(T->xb[i], 0) / alpha[i]);
  if (tmin == INFINITY) return -1;
  for (int i = 0; i < N; i++)
    if (alpha[i] > tolp && fmax(T->xb[i], 0) / alpha[i] <= tmin + LCP_TOL_TIE * fmax(1, tmin)) cand[nc++] = i;
  for (int a = 0; a < nc; a++)
    if (T->basis[cand[a]] == 2 * N) return cand[a];
  for (int j = 0; j < N && nc > 1; j++) {
    double vmin = INFINITY;
    for (int a = 0; a < nc; a++) vmin = fmin(vmin, T->Binv[(size_t)cand[a] * N + j] / alpha[cand[a]]);
    int keep = 0;
    for (int a = 0; a < nc; a++)
      if (T->Binv[(size_t)cand[a] * N + j] / alpha[cand[a]] <= vmin + LCP_TOL_TIE) cand[keep++] = cand[a];
    nc = keep;
  }
  int best = cand[0];
  for (int a = 1; a < nc; a++)
    if (alpha[cand[a]] > alpha[best]) best = cand[a];
  return best;
}

// Lemke with covering vector 1: z (N) at a solution, returns 1; 0 on ray termination or the pivot cap.
// Equation form w - M z - 1 z0 = q; an entering variable's column is e_i (w_i), -M_j (z_j) or -1 (z0)
static int lcp_lemke(double* z, int* npivot, physData* d, const lcpVars* V, const lcpScaled* P) {
  int N = V->N, ok = 0;
  size_t mark = phys_stack_mark(d);
  lcpTableau T = {N, phys_stack_alloc(d, (size_t)N * N), phys_stack_alloc(d, (size_t)N), lcp_ints(d, N),
                  lcp_ints(d, N), lcp_ints(d, N), 0};
  double* alpha = phys_stack_alloc(d, (size_t)N);
  double* col = phys_stack_alloc(d, (size_t)N);
  int* cand = lcp_ints(d, N);
  *npivot = 0;
  memset(z, 0, sizeof(double) * (size_t)N);

  // q: impulse rows sign*g^, sigma rows 0; z = 0 solves it when q >= 0
  int r = 0;
  for (int i = 0; i < N; i++) {
    T.xb[i] = V->kind[i] == LCP_SIGMA ? 0 : lcp_sign(V, i) * P->gh[V->row[i]];
    if (T.xb[i] <= T.xb[r]) r = i;    // most negative; ties to the last index keep the rows lexico-positive
  }
  if (T.xb[r] >= 0) {
    phys_stack_free(d, mark);
    return 1;
  }
  memset(T.Binv, 0, sizeof(double) * (size_t)N * N);
  for (int i = 0; i < N; i++) T.Binv[(size_t)i * N + i] = 1, T.basis[i] = i, T.unit[i] = 1;

  // z0 enters (alpha = B^-1 (-1) = -1) in place of the most negative w_r; then complementary pivots:
  // the complement of the variable that left enters, until z0 leaves
  for (int i = 0; i < N; i++) alpha[i] = -1;
  int maxpivot = 100 + 20 * N, left = T.basis[r];
  lcp_pivot(&T, alpha, r, 2 * N);
  *npivot = 1;
  for (;;) {
    if (left == 2 * N) {
      ok = 1;
      break;
    }
    if (*npivot >= maxpivot) break;
    int enter = left < N ? N + left : left - N;   // the complement of the variable that left
    if (enter < N) {
      for (int i = 0; i < N; i++) alpha[i] = T.Binv[(size_t)i * N + enter];
    } else {
      lcp_column(col, V, P, enter - N);
      for (int i = 0; i < N; i++) col[i] = -col[i];
      lcp_ftran(alpha, &T, col);
    }
    int pos = lcp_ratio(&T, alpha, cand);
    if (pos < 0) break;
    left = T.basis[pos];
    lcp_pivot(&T, alpha, pos, enter);
    (*npivot)++;
  }
  if (ok)
    for (int i = 0; i < N; i++)
      if (T.basis[i] >= N && T.basis[i] < 2 * N) z[T.basis[i] - N] = fmax(T.xb[i], 0);
  phys_stack_free(d, mark);
  return ok;
}

// lambda^ (n) from the Lemke variables z: normals and limits, lambda_t = b+ - b-
static void lcp_lambda_from_z(double* lh, const lcpVars* V, const double* z, int n) {
  memset(lh, 0, sizeof(double) * (size_t)n);
  for (int k = 0; k < V->N; k++)
    if (V->kind[k] != LCP_SIGMA) lh[V->row[k]] += lcp_sign(V, k) * z[k];
}

//---------------------------------------------------------------------------------------------------------
// the solver

// the best candidate so far: lambda^, labels, relative residual
typedef struct lcpBest_ {
  double* lh;
  int* lab;
  double rel;               // scaled natural-map residual / max(1, max_i sum_j |G^_ij lambda^_j|)
} lcpBest;

// check candidate lambda^ with labels lab: keep it as the best if its relative residual is lower; returns 1
// if it solves the problem (relative residual <= LCP_TOL_ACCEPT)
static int lcp_try(lcpBest* best, double* wh, const lcpScaled* P, const double* lh, const int* lab) {
  double big = lcp_velocity(wh, P, lh);
  double rel = lcp_residual(P, lh, wh) / fmax(1, big);
  if (rel < best->rel) {
    memcpy(best->lh, lh, sizeof(double) * (size_t)P->n);
    memcpy(best->lab, lab, sizeof(int) * (size_t)P->n);
    best->rel = rel;
  }
  return rel <= LCP_TOL_ACCEPT;
}

// Lemke on the scaled problem, retried with G^ + eps I if the exact one fails; lambda^ out, 1 on success
static int lcp_full(double* lh, int* npivot, physData* d, lcpScaled* P) {
  size_t mark = phys_stack_mark(d);
  lcpVars V;
  lcp_vars(&V, d, P);
  double* z = phys_stack_alloc(d, (size_t)V.N + 1);
  int ok = lcp_lemke(z, npivot, d, &V, P), more = 0;
  if (!ok) {
    P->eps = LCP_REGULARIZE;
    ok = lcp_lemke(z, &more, d, &V, P);
    *npivot += more;
    P->eps = 0;
  }
  lcp_lambda_from_z(lh, &V, z, P->n);
  phys_stack_free(d, mark);
  return ok;
}

// the fallback when Lemke fails on a nearly singular problem (rounding in G^ can make the exact problem's
// pivots ill-conditioned): projected Gauss-Seidel sweeps from lambda^ = 0, normals and limits onto
// lambda >= 0, tangents onto [-mu lambda_n, mu lambda_n] with the current lambda_n:
//   lambda_i <- proj(lambda_i - w^_i / G^_ii)
// never exact by itself, but finite and physical; its labels then go through the subsystem like Lemke's
static void lcp_pgs(double* lh, const lcpScaled* P, int sweeps) {
  int n = P->n;
  memset(lh, 0, sizeof(double) * (size_t)n);
  for (int it = 0; it < sweeps; it++) {
    for (int i = 0; i < n; i++) {
      double gii = lcp_gh(P, i, i), w = P->gh[i];
      if (!(gii > 1e-12)) continue;
      for (int j = 0; j < n; j++) w += lcp_gh(P, i, j) * lh[j];
      double v = lh[i] - w / gii;
      int c = lcp_contact(P, i);
      if (c < 0 || i == 3 * c) {
        lh[i] = v > 0 ? v : 0;
      } else {
        double hi = P->mu[c] * lh[3 * c];
        lh[i] = v > hi ? hi : (v < -hi ? -hi : v);
      }
    }
  }
}

// doubles phys_solve_lcp needs from the arena at most: its vectors, then either Lemke (the N x N basis
// inverse, N = 7 nc + nl at most) or the clamping subsystem (two m x m matrices, m <= n)
static size_t lcp_arena_need(const physConstraintProblem* p) {
  size_t N = (size_t)7 * p->nc + p->nl, n = (size_t)p->n;
  size_t lemke = N * N + 8 * N, sub = 2 * n * n + 8 * n;
  return 8 * n + (lemke > sub ? lemke : sub) + 512;
}

// write the result: lambda = gamma s lambda^, labels (mu = 0 tangents by the sign of w), residual (m/s);
// wh holds G^ lh + g^ already if wh_current
static void lcp_finish(physConstraintSolution* sol, double* wh, int wh_current, const lcpScaled* P,
                       const double* lh, const int* lab) {
  if (!wh_current) lcp_velocity(wh, P, lh);
  for (int i = 0; i < P->n; i++) {
    sol->lambda[i] = P->gamma * P->s[i] * lh[i];
    sol->state[i] = lab[i];
  }
  lcp_label_frictionless(sol->state, P, wh);
  sol->residual = lcp_residual_velocity(P, lh, wh);
}

// all inputs finite
static int lcp_finite(const physConstraintProblem* p) {
  for (size_t i = 0; i < (size_t)p->n * p->n; i++)
    if (!isfinite(p->G[i])) return 0;
  for (int i = 0; i < p->n; i++)
    if (!isfinite(p->g[i])) return 0;
  for (int i = 0; i < p->nc; i++)
    if (isnan(p->mu[i])) return 0;
  return 1;
}

// Solve the pyramid LCP of p (see the file comment). Order: the warm start (p->warm's labels, the
// subsystem, the check); else Lemke (on G^, and if that fails on G^ + 1e-8 I, and if that fails too
// Gauss-Seidel), then its classification stabilized to the minimal-norm solution (ties as clamping), else
// its own point refined on its labels (ties as separating), else the best of these with PHYS_ERR_NUMERIC
// and a data warning (nearly singular, nearly inconsistent problems: relative residuals ~1e-7). sol->residual is the largest natural-map residual in
// row-velocity units (m/s or rad/s): min(d lambda, w) on normals and limits, d lambda - clamp(d lambda - w,
// -d mu lambda_n, d mu lambda_n) on tangents, d = the mean diagonal of G over the contact's rows (0 at an
// exact solution). sol->iterations counts Lemke's pivots (0 when the warm start holds). m may be NULL.
physStatus phys_solve_lcp(const physModel* m, physData* d, const physConstraintProblem* p,
                          physConstraintSolution* sol) {
  (void)m;
  int n = p->n;
  sol->iterations = 0;
  sol->warm_used = 0;
  sol->residual = 0;
  if (n <= 0) return PHYS_OK;
  if (!lcp_finite(p) || lcp_arena_need(p) > d->nstack - d->pstack) {
    for (int i = 0; i < n; i++) sol->lambda[i] = 0, sol->state[i] = PHYS_ROW_SEPARATING;
    phys_data_warning(d, "lcp: %s (%d contacts, %d limits); impulses set to 0",
                      lcp_finite(p) ? "scratch arena too small" : "non-finite Delassus matrix or velocity",
                      p->nc, p->nl);
    return PHYS_ERR_NUMERIC;
  }
  size_t mark = phys_stack_mark(d);
  lcpScaled P = {n, p->nc, p->nl, p->G, phys_stack_alloc(d, (size_t)n), phys_stack_alloc(d, (size_t)n),
                 phys_stack_alloc(d, (size_t)p->nc + 1), 1, 0};
  lcp_scale(&P, p);
  double* lh = phys_stack_alloc(d, (size_t)n);
  double* lemke = phys_stack_alloc(d, (size_t)n);
  double* wh = phys_stack_alloc(d, (size_t)n);
  int* lab = lcp_ints(d, n);
  lcpBest best = {phys_stack_alloc(d, (size_t)n), lcp_ints(d, n), INFINITY};
  physStatus status = PHYS_OK;
  for (int i = 0; i < n; i++) best.lh[i] = 0, best.lab[i] = PHYS_ROW_SEPARATING;

  // warm start: last step's labels, the clamping subsystem, the check
  if (p->warm) {
    lcp_sanitize(lab, &P, p->warm);
    lcp_subsystem(lh, d, &P, lab, NULL);
    if (lcp_try(&best, wh, &P, lh, lab)) {
      sol->warm_used = 1;
      lcp_finish(sol, wh, 1, &P, lh, lab);
      phys_stack_free(d, mark);
      return PHYS_OK;
    }
  }

  // Lemke, then the stabilized (minimal-norm) solution on its labels, then its own point refined
  int ok = lcp_full(lemke, &sol->iterations, d, &P);
  if (!ok) lcp_pgs(lemke, &P, LCP_PGS_SWEEPS);
  double big = lcp_velocity(wh, &P, lemke), tolc = LCP_TOL_CLASS * fmax(1, big);
  lcp_classify(lab, &P, lemke, wh, tolc, 1);
  lcp_subsystem(lh, d, &P, lab, NULL);
  int accepted = lcp_try(&best, wh, &P, lh, lab);
  if (!accepted) {
    lcp_velocity(wh, &P, lemke);
    lcp_classify(lab, &P, lemke, wh, tolc, 0);
    lcp_try(&best, wh, &P, lemke, lab);
    lcp_subsystem(lh, d, &P, lab, lemke);
    accepted = lcp_try(&best, wh, &P, lh, lab);
  }
  if (!accepted && !(best.rel <= LCP_TOL_STATUS)) {
    status = PHYS_ERR_NUMERIC;
    phys_data_warning(d, "lcp: %s; best relative residual %.3g (%d contacts, %d limits)",
                      ok ? "no exact solution on the pivoted labels" : "Lemke's method failed (Gauss-Seidel used)",
                      best.rel, p->nc, p->nl);
  }
  lcp_finish(sol, wh, 0, &P, best.lh, best.lab);
  phys_stack_free(d, mark);
  return status;
}

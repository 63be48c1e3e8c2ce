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
// for its minimal-norm solution by a rank-revealing factorization (pivoted QR or Cholesky) and the shortest
// solution over its null space (a box's four coplanar corners make it singular: the four get equal
// shares), and keep it if every condition above holds. The warm start does exactly this with last step's
// labels and skips Lemke when the check passes; when it fails, block principal pivoting on the labels (Judice
// & Pires: every violated label corrected at once while that lowers the number violated, else one contact at
// a time; each candidate checked the same way) usually reaches the new contact state before Lemke is needed.
//
// Everything runs on a scaled problem: per contact s = 1/sqrt(mean diag of its 3 rows of G), and a velocity
// scale gamma = max |s g|: G^ = S G S, g^ = S g / gamma, lambda = gamma S lambda^, w^ = S w / gamma, so that
// diag G^ ~ 1 and |g^| <= 1 whatever the units; the scaling keeps each contact's pyramid (one s per contact).
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "chol.h"
#include "contact.h"

#define LCP_TOL_ACCEPT 1e-11    // accepted natural-map residual, relative to max_i sum_j |G^_ij lambda^_j|
#define LCP_TOL_CLASS 1e-9      // "zero" in the classification (scaled units)
#define LCP_TOL_RANK 1e-12      // rank cut of the clamping subsystem: |R_kk| <= tol |R_00| (QR), or
                                // Cholesky pivot <= tol * the first (both measure eigenvalues)
#define LCP_TOL_PIVOT 1e-11     // Lemke: pivots below tol * max|alpha| are never taken
#define LCP_TOL_TIE 1e-11       // Lemke: ratio ties (scaled units) go to the lexicographic rule
#define LCP_TOL_Z0 1e-9         // Lemke: an artificial z0 at or below this (scaled units) has left
#define LCP_TOL_STATUS 1e-8     // a best effort above this relative residual is reported as PHYS_ERR_NUMERIC
#define LCP_NREGULARIZE 2       // Lemke's retries on G^ + eps I when it fails on the exact problem (then re-checked)
#define LCP_PGS_SWEEPS 300      // Gauss-Seidel sweeps of the last fallback
#define LCP_TOL_DOWNDATE 1.5e-8 // QR column norms: a downdated |a|^2 below tol * its exact value is recomputed
#define LCP_TOL_LU 1e-9         // nonsymmetric subsystem: elimination pivots below tol * max|A| send it to QR
#define LCP_BPP_ROUNDS 24        // subsystems of the warm start and its block principal pivoting before Lemke
#define LCP_BPP_STALL 3         // block corrections without fewer violated labels before single ones
#define LCP_RELABEL_ROUNDS 3    // lcp_relabel: rounds of single label changes after every candidate failed
#define LCP_CORRECTIONS 3       // corrections after which a singular subsystem hands the problem to Lemke

// the diagonals eps of the retries (LCP_NREGULARIZE): 1e-8 keeps the retry's point within rounding of the exact
// problem's; 1e-6 bounds G^'s condition so that the pivots stay well conditioned on rank-deficient G (12 rows
// of rank 6: a face resting on 4 corners), and the exact subsystem on its labels removes the eps again
static const double lcp_regularize[LCP_NREGULARIZE] = {1e-8, 1e-6};

// the scaled problem (see the file comment)
typedef struct lcpScaled_ {
  int n, nc, nl;
  int nv;                   // dofs (rank G <= nv), 0 if unknown
  const double* G;          // original Delassus matrix (n x n)
  double* s;                // n row scales 1/sqrt(d), equal on a contact's three rows
  double* gh;               // n: g^ = s g / gamma
  double* mu;               // nc friction coefficients, negative ones read as 0
  double* u;                // n scratch of lcp_velocity: s lambda^
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

// larger and smaller of a and b without libm's calls; b when a is NaN (b: the running value)
static inline double lcp_max(double a, double b) { return a > b ? a : b; }
static inline double lcp_min(double a, double b) { return a < b ? a : b; }

// max(x, 0); 0 when x is NaN (as fmax(x, 0))
static inline double lcp_pos(double x) { return x > 0 ? x : 0; }

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
  for (int i = 0; i < n; i++) dmax = lcp_max(p->G[(size_t)i * n + i], dmax);
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
  for (int i = 0; i < n; i++) gamma = lcp_max(fabs(P->s[i] * p->g[i]), gamma);
  P->gamma = gamma > 0 ? gamma : 1;
  for (int i = 0; i < n; i++) P->gh[i] = P->s[i] * p->g[i] / P->gamma;
  for (int i = 0; i < p->nc; i++) P->mu[i] = p->mu[i] > 0 ? p->mu[i] : 0;
}

// w^ = G^ lambda^ + g^ = s * (G (s lambda^)) + g^ (+ eps lambda^); returns max_i sum_j |G^_ij lambda^_j|
// (the rounding scale of w^)
static double lcp_velocity(double* wh, const lcpScaled* P, const double* lh) {
  int n = P->n;
  double big = 0;
  for (int j = 0; j < n; j++) P->u[j] = P->s[j] * lh[j];
  for (int i = 0; i < n; i++) {
    const double* Gi = P->G + (size_t)i * n;
    double s = 0, a = 0;
    for (int j = 0; j < n; j++) {
      double t = Gi[j] * P->u[j];
      s += t;
      a += fabs(t);
    }
    wh[i] = P->gh[i] + P->s[i] * s + P->eps * lh[i];
    big = lcp_max(P->s[i] * a + fabs(P->eps * lh[i]), big);
  }
  return big;
}

// natural-map residual of row i: normal/limit min(lambda, w); tangent lambda - clamp(lambda - w, lo, hi)
static inline double lcp_row_residual(const lcpScaled* P, const double* lh, const double* wh, int i) {
  int c = lcp_contact(P, i);
  if (c < 0 || i == 3 * c) return fmin(lh[i], wh[i]);
  double hi = P->mu[c] * lcp_pos(lh[3 * c]), v = lh[i] - wh[i];
  v = v > hi ? hi : (v < -hi ? -hi : v);
  return lh[i] - v;
}

// max |natural-map residual| over the rows: zero exactly at a solution. res[0] in scaled units, res[1] in
// row-velocity units (m/s, rad/s: row i's scaled residual times gamma / s_i)
static void lcp_residual(double res[2], const lcpScaled* P, const double* lh, const double* wh) {
  res[0] = res[1] = 0;
  for (int i = 0; i < P->n; i++) {
    double r = fabs(lcp_row_residual(P, lh, wh, i));
    res[0] = lcp_max(r, res[0]);
    res[1] = lcp_max(r * P->gamma / P->s[i], res[1]);
  }
}

// 1 if the k values of x are all finite: x - x is 0 for a finite x and NaN for inf or NaN, and a NaN term
// keeps the sum NaN
static int lcp_all_finite(const double* x, size_t k) {
  double z = 0;
  for (size_t i = 0; i < k; i++) z += x[i] - x[i];
  return z == 0;
}

// no NaN friction coefficient
static int lcp_finite_mu(const physConstraintProblem* p) {
  for (int i = 0; i < p->nc; i++)
    if (isnan(p->mu[i])) return 0;
  return 1;
}

// all inputs finite. A non-finite G_ij or g_i makes w^ = G^ lambda^ + g^ non-finite for every finite
// lambda^ (inf * 0 is NaN), so a finite w^ of any candidate also proves G and g finite.
static int lcp_finite(const physConstraintProblem* p) {
  return lcp_finite_mu(p) && lcp_all_finite(p->G, (size_t)p->n * (size_t)p->n) &&
         lcp_all_finite(p->g, (size_t)p->n);
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
      double hi = P->mu[c] * lcp_pos(lh[3 * c]);
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
// minimal-norm solution of a square, possibly singular system (rank-revealing factorization, null space)

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

// x (r) = U^-1 b for the upper triangular r x r leading block of T (T_ij = T[i*rs + j*cs]): back substitution
static void lcp_upper_solve(double* x, const double* T, int rs, int cs, int r, const double* b) {
  for (int i = r - 1; i >= 0; i--) {
    const double* Ti = T + (size_t)i * rs;
    double s = b[i];
    for (int j = i + 1; j < r; j++) s -= Ti[(size_t)j * cs] * x[j];
    x[i] = s / Ti[(size_t)i * cs];
  }
}

// u (m) = the minimal-norm solution of T u = c for the r x m upper trapezoid T = [U V] (U upper triangular,
// nonsingular; T_ij = T[i*rs + j*cs], r <= m). Every solution is u = [ub; 0] + N z with the basic solution
// ub = U^-1 c and the null space N = [-X; I], X = U^-1 V (r x k, k = m - r); the shortest has
//   (I + X'X) z = X' ub,   u = [ub - X z; z]
// (normal equations of a k x k matrix >= I: well conditioned, and k is small when few rows are redundant)
static void lcp_trapezoid_minnorm(double* u, physData* d, const double* T, int rs, int cs, int r, int m,
                                  const double* c) {
  int k = m - r;
  lcp_upper_solve(u, T, rs, cs, r, c);
  if (k == 0) return;
  size_t mark = phys_stack_mark(d);
  double* X = phys_stack_alloc(d, (size_t)r * k + 1);
  double* H = phys_stack_alloc(d, (size_t)k * k);
  double* v = phys_stack_alloc(d, (size_t)r + 1);
  for (int j = 0; j < k; j++) {
    // column j of X: U x = column r + j of T
    for (int i = 0; i < r; i++) v[i] = T[(size_t)i * rs + (size_t)(r + j) * cs];
    lcp_upper_solve(X + (size_t)j * r, T, rs, cs, r, v);
  }
  // H = I + X'X (row-major, both triangles), z = H^-1 X' ub in u[r..m-1]
  for (int a = 0; a < k; a++) {
    for (int b = 0; b <= a; b++) {
      double h = a == b;
      for (int i = 0; i < r; i++) h += X[(size_t)a * r + i] * X[(size_t)b * r + i];
      H[(size_t)a * k + b] = H[(size_t)b * k + a] = h;
    }
    double t = 0;
    for (int i = 0; i < r; i++) t += X[(size_t)a * r + i] * u[i];
    u[r + a] = t;
  }
  phys_chol_factor(H, k, 0);
  phys_chol_solve(u + r, H, u + r, k);
  // ub - X z
  for (int a = 0; a < k; a++)
    for (int i = 0; i < r; i++) u[i] -= X[(size_t)a * r + i] * u[r + a];
  phys_stack_free(d, mark);
}

// |a(k:m)|^2 of a column a
static double lcp_colnorm2(const double* a, int k, int m) {
  double s = 0;
  for (int i = k; i < m; i++) s += a[i] * a[i];
  return s;
}

// x = the minimal-norm least-squares solution of A x = b (A m x m column-major, overwritten; b kept):
// A P = Q [R11 R12; 0 0] by Householder QR with column pivoting (rank r: |R_kk| > tol |R_00|), then
// x = P u with u the minimal-norm solution of [R11 R12] u = (Q'b)_1:r (lcp_trapezoid_minnorm). Returns r.
static int lcp_minnorm(double* x, physData* d, double* A, const double* b, int m) {
  size_t mark = phys_stack_mark(d);
  double* tau = phys_stack_alloc(d, (size_t)m + 1);
  double* c = phys_stack_alloc(d, (size_t)m + 1);
  double* nrm = phys_stack_alloc(d, (size_t)m + 1);
  double* nrm0 = phys_stack_alloc(d, (size_t)m + 1);
  int* perm = lcp_ints(d, m);
  int r = m;
  double r0 = 0;
  for (int k = 0; k < m; k++) perm[k] = k;

  // A P = Q R, pivoting the remaining column of largest norm to the front; nrm[j] = |A(k:m, j)|^2
  for (int j = 0; j < m; j++) nrm[j] = nrm0[j] = lcp_colnorm2(A + (size_t)j * m, 0, m);
  for (int k = 0; k < m; k++) {
    int best = k;
    for (int j = k + 1; j < m; j++)
      if (nrm[j] > nrm[best]) best = j;
    if (best != k) {
      for (int i = 0; i < m; i++) {
        double t = A[(size_t)k * m + i];
        A[(size_t)k * m + i] = A[(size_t)best * m + i];
        A[(size_t)best * m + i] = t;
      }
      int t = perm[k];
      perm[k] = perm[best];
      perm[best] = t;
      nrm[best] = nrm[k], nrm0[best] = nrm0[k];
    }
    double beta = lcp_house(A + (size_t)k * m + k, m - k, tau + k);
    if (k == 0) r0 = fabs(beta);
    if (!(fabs(beta) > LCP_TOL_RANK * r0) || r0 == 0) {
      r = k;
      break;
    }
    for (int j = k + 1; j < m; j++) {
      double* Aj = A + (size_t)j * m;
      lcp_house_apply(Aj + k, A + (size_t)k * m + k, m - k, tau[k]);
      // downdate |A(k+1:m, j)|^2 = |A(k:m, j)|^2 - A_kj^2; recompute when cancellation leaves < ~8 digits
      nrm[j] -= Aj[k] * Aj[k];
      if (!(nrm[j] > LCP_TOL_DOWNDATE * nrm0[j])) nrm[j] = nrm0[j] = lcp_colnorm2(Aj, k + 1, m);
    }
  }

  // c = Q'b
  memcpy(c, b, sizeof(double) * (size_t)m);
  for (int k = 0; k < r; k++) lcp_house_apply(c + k, A + (size_t)k * m + k, m - k, tau[k]);

  // [R11 R12] u = c_1:r with minimal norm (R_ij = A[j*m + i]); u = 0 when A = 0
  double* u = phys_stack_alloc(d, (size_t)m + 1);
  memset(u, 0, sizeof(double) * (size_t)m);
  if (r > 0) lcp_trapezoid_minnorm(u, d, A, 1, m, r, m, c);
  for (int k = 0; k < m; k++) x[perm[k]] = u[k];
  phys_stack_free(d, mark);
  return r;
}

// the same for a symmetric positive semidefinite A (no bounded rows: A = G^_CC), about 4x cheaper:
// P'AP = L L' by Cholesky with diagonal pivoting (rank r: pivots > tol * the first), L y = (P'b)_1:r on
// the leading triangle, then the minimal-norm x' with L' x' = y (lcp_trapezoid_minnorm), x = P x'.
// A is column-major with both triangles; its lower triangle is overwritten. Returns r.
static int lcp_minnorm_sym(double* x, physData* d, double* A, const double* b, int m) {
  size_t mark = phys_stack_mark(d);
  int* perm = lcp_ints(d, m);
  double* y = phys_stack_alloc(d, (size_t)m + 1);
  double* u = phys_stack_alloc(d, (size_t)m + 1);
  int r = phys_chol_pivoted(A, perm, m, LCP_TOL_RANK, NULL);   // (chol.h: the lower triangle becomes L)
  // L y = (P'b)_1:r
  for (int i = 0; i < r; i++) {
    double s = b[perm[i]];
    for (int j = 0; j < i; j++) s -= A[(size_t)j * m + i] * y[j];
    y[i] = s / A[(size_t)i * m + i];
  }
  // L' x' = y with minimal norm (L'_ij = L_ji = A[i*m + j]); x' = 0 when A = 0
  for (int i = 0; i < m; i++) u[i] = 0;
  if (r > 0) lcp_trapezoid_minnorm(u, d, A, m, 1, r, m, y);
  for (int k = 0; k < m; k++) x[perm[k]] = u[k];
  phys_stack_free(d, mark);
  return r;
}

// x = A^-1 b by Gaussian elimination with partial pivoting (A m x m column-major, overwritten; b kept) when A
// is clearly nonsingular; returns 0 (x unset) if a pivot falls below LCP_TOL_LU times the largest |A_ij|
static int lcp_lu_solve(double* x, double* A, const double* b, int m) {
  double amax = 0;
  for (size_t i = 0; i < (size_t)m * m; i++) amax = lcp_max(fabs(A[i]), amax);
  memcpy(x, b, sizeof(double) * (size_t)m);
  for (int k = 0; k < m; k++) {
    double* Ak = A + (size_t)k * m;
    int p = k;
    for (int i = k + 1; i < m; i++)
      if (fabs(Ak[i]) > fabs(Ak[p])) p = i;
    if (!(fabs(Ak[p]) > LCP_TOL_LU * amax)) return 0;
    if (p != k) {
      // exchange rows k and p
      for (int j = 0; j < m; j++) {
        double t = A[(size_t)j * m + k];
        A[(size_t)j * m + k] = A[(size_t)j * m + p];
        A[(size_t)j * m + p] = t;
      }
      double t = x[k];
      x[k] = x[p];
      x[p] = t;
    }
    // l_i = A_ik / A_kk; row i -= l_i row k (columns j > k), x_i -= l_i x_k
    for (int i = k + 1; i < m; i++) Ak[i] /= Ak[k];
    for (int j = k + 1; j < m; j++) {
      double* Aj = A + (size_t)j * m;
      for (int i = k + 1; i < m; i++) Aj[i] -= Ak[i] * Aj[k];
    }
    for (int i = k + 1; i < m; i++) x[i] -= Ak[i] * x[k];
  }
  lcp_upper_solve(x, A, 1, m, m, x);
  return 1;
}

// the nonsymmetric subsystem's shortcut: when A has at most as many rows as there are dofs (else rank G <= nv
// < m makes it singular), x = A^-1 b by elimination if A is clearly nonsingular (then that is its
// minimal-norm solution); A is kept for lcp_minnorm otherwise. Returns 1 if x was solved.
static int lcp_try_lu(double* x, physData* d, const double* A, const double* b, int m, int may_be_regular) {
  if (!may_be_regular) return 0;
  size_t mark = phys_stack_mark(d);
  double* LU = phys_stack_alloc(d, (size_t)m * m);
  memcpy(LU, A, sizeof(double) * (size_t)m * m);
  int ok = lcp_lu_solve(x, LU, b, m);
  phys_stack_free(d, mark);
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// the clamping subsystem (paper 001, section IV and appendix B)

// lambda^ from the labels: lambda_S = 0, lambda_U/L = +-mu lambda_n, and lambda_C from
//   (G^_CC + G^_CB E) lambda_C = -g^_C
// by its minimal-norm solution (x0 = NULL), or as x0_C plus the minimal-norm correction of x0's residual
// (x0 = a solution from Lemke, refined without moving it elsewhere). Returns 1 if the subsystem is regular
// (full rank: its solution is the only one with these labels), 0 if singular
static int lcp_subsystem(double* lh, physData* d, const lcpScaled* P, const int* lab, const double* x0) {
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
  for (int k = 0; k < m; k++) {
    const double* Gk = P->G + cr[k];   // column cr[k] of G, stride n
    double* Ak = A + (size_t)k * m;
    for (int i = 0; i < m; i++) Ak[i] = P->s[cr[i]] * P->s[cr[k]] * Gk[(size_t)cr[i] * n];
    Ak[k] += P->eps;
  }
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
  int regular = 1;
  if (m > 0 && symmetric) regular = lcp_minnorm_sym(y, d, A, b, m) == m;
  else if (m > 0 && !lcp_try_lu(y, d, A, b, m, m <= P->nv)) regular = lcp_minnorm(y, d, A, b, m) == m;

  // assemble: C rows, then S rows 0 and bounded rows +-mu lambda_n
  for (int i = 0; i < n; i++) lh[i] = pos[i] >= 0 ? y[pos[i]] + (x0 ? x0[i] : 0) : 0;
  for (int j = 0; j < n; j++) {
    int c = lcp_contact(P, j);
    if (c < 0 || pos[3 * c] < 0) continue;
    if (lab[j] == PHYS_ROW_UPPER) lh[j] = P->mu[c] * lh[3 * c];
    if (lab[j] == PHYS_ROW_LOWER) lh[j] = -P->mu[c] * lh[3 * c];
  }
  phys_stack_free(d, mark);
  return regular;
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
  for (int i = 0; i < N; i++) amax = lcp_max(fabs(alpha[i]), amax);
  double tolp = LCP_TOL_PIVOT * amax, tmin = INFINITY;
  for (int i = 0; i < N; i++)
    if (alpha[i] > tolp) tmin = lcp_min(lcp_pos(T->xb[i]) / alpha[i], tmin);
  if (tmin == INFINITY) return -1;
  for (int i = 0; i < N; i++)
    if (alpha[i] > tolp && lcp_pos(T->xb[i]) / alpha[i] <= tmin + LCP_TOL_TIE * lcp_max(tmin, 1))
      cand[nc++] = i;
  for (int a = 0; a < nc; a++)
    if (T->basis[cand[a]] == 2 * N) return cand[a];
  for (int j = 0; j < N && nc > 1; j++) {
    double vmin = INFINITY;
    for (int a = 0; a < nc; a++) vmin = lcp_min(T->Binv[(size_t)cand[a] * N + j] / alpha[cand[a]], vmin);
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

// the degenerate end of Lemke's path: 1 if the artificial z0 is basic at rounding level (<= LCP_TOL_Z0).
// Every basis on the path is almost complementary (one pair w_j, z_j both nonbasic), so its basic point with
// z0 = 0 is complementary and solves w = M z + q up to z0. On a rank-deficient G (a face resting on 4 corners:
// 12 rows of rank 6) the ratio ties that would let z0 leave are exact only in exact arithmetic: rounding
// leaves z0 at ~1e-11, the path takes a few more degenerate pivots and ends on a secondary ray. That point is
// then the solution (the caller classifies it, solves its clamping subsystem and checks the result exactly).
static int lcp_z0_vanished(const lcpTableau* T) {
  for (int i = 0; i < T->N; i++)
    if (T->basis[i] == 2 * T->N) return T->xb[i] <= LCP_TOL_Z0;
  return 0;
}

// Lemke with covering vector 1: z (N) at a solution, returns 1; 0 on ray termination or the pivot cap unless
// z0 has vanished there (lcp_z0_vanished).
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
  if (!ok) ok = lcp_z0_vanished(&T);
  if (ok)
    for (int i = 0; i < N; i++)
      if (T.basis[i] >= N && T.basis[i] < 2 * N) z[T.basis[i] - N] = lcp_pos(T.xb[i]);
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

// the best candidate so far: lambda^, its w^ and labels, relative residual, residual in velocity units
typedef struct lcpBest_ {
  double* lh;
  double* wh;
  int* lab;
  double rel;               // scaled natural-map residual / max(1, max_i sum_j |G^_ij lambda^_j|)
  double resvel;            // the residual in row-velocity units (lcp_residual's res[1])
} lcpBest;

// check candidate lambda^ with labels lab (wh <- its w^, *big <- its rounding scale): keep it as the best if
// its relative residual is lower; returns 1 if it solves the problem (relative residual <= LCP_TOL_ACCEPT)
static int lcp_try(lcpBest* best, double* wh, double* big, const lcpScaled* P, const double* lh,
                   const int* lab) {
  double res[2];
  *big = lcp_velocity(wh, P, lh);
  lcp_residual(res, P, lh, wh);
  double rel = res[0] / fmax(1, *big);
  if (rel < best->rel) {
    memcpy(best->lh, lh, sizeof(double) * (size_t)P->n);
    memcpy(best->wh, wh, sizeof(double) * (size_t)P->n);
    memcpy(best->lab, lab, sizeof(int) * (size_t)P->n);
    best->rel = rel;
    best->resvel = res[1];
  }
  return rel <= LCP_TOL_ACCEPT;
}

// Lemke on the scaled problem G^ + eps I (eps = P->eps); lambda^ out, 1 if it ended at a solution
static int lcp_full(double* lh, int* npivot, physData* d, const lcpScaled* P) {
  size_t mark = phys_stack_mark(d);
  lcpVars V;
  lcp_vars(&V, d, P);
  double* z = phys_stack_alloc(d, (size_t)V.N + 1);
  int ok = lcp_lemke(z, npivot, d, &V, P);
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

// label of a tangent row t of a clamping contact from the candidate: a clamping tangent beyond +-mu lambda_n
// goes to that bound, a tangent at its upper bound with w > 0 (lower, w < 0) clamps; a tangent of a contact
// that starts to clamp (was_separating) takes the side its sliding velocity w_t asks for (U if w_t < 0)
static int lcp_tangent_label(int old, double lt, double hi, double wt, double tol, int was_separating) {
  if (was_separating) return wt < -tol ? PHYS_ROW_UPPER : (wt > tol ? PHYS_ROW_LOWER : PHYS_ROW_CLAMPING);
  if (old == PHYS_ROW_CLAMPING && lt > hi + tol) return PHYS_ROW_UPPER;
  if (old == PHYS_ROW_CLAMPING && lt < -hi - tol) return PHYS_ROW_LOWER;
  if ((old == PHYS_ROW_UPPER && wt > tol) || (old == PHYS_ROW_LOWER && wt < -tol)) return PHYS_ROW_CLAMPING;
  return old;
}

// one active-set correction of the labels lab from the candidate (lh, wh) they gave, row by row as the
// candidate violates its conditions: a clamping normal or limit with lambda < 0 separates (a contact's
// tangents with it), a separating one with w < 0 clamps; tangents by lcp_tangent_label. Returns the number
// of labels changed.
static int lcp_correct(int* lab, const lcpScaled* P, const double* lh, const double* wh, double tol) {
  int changed = 0;
  for (int i = 0; i < P->n; i++) {
    int c = lcp_contact(P, i), old = lab[i];
    if (c < 0 || i == 3 * c) {
      if (old == PHYS_ROW_CLAMPING && lh[i] < -tol) lab[i] = PHYS_ROW_SEPARATING;
      if (old == PHYS_ROW_SEPARATING && wh[i] < -tol) lab[i] = PHYS_ROW_CLAMPING;
    } else if (lab[3 * c] == PHYS_ROW_SEPARATING) {
      lab[i] = PHYS_ROW_SEPARATING;
    } else if (P->mu[c] > 0) {
      int was_separating = old == PHYS_ROW_SEPARATING;
      lab[i] = lcp_tangent_label(old, lh[i], P->mu[c] * lcp_pos(lh[3 * c]), wh[i], tol, was_separating);
    }
    changed += lab[i] != old;
  }
  if (changed) lcp_sanitize(lab, P, lab);
  return changed;
}

// FNV-1a hash of the n labels (a repeated label set in block principal pivoting is a cycle; a collision only
// hands the problem to Lemke early)
static uint64_t lcp_label_hash(const int* lab, int n) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; i++) h = (h ^ (uint64_t)(unsigned)lab[i]) * 1099511628211ull;
  return h;
}

// the single-pivot step of block principal pivoting (Murty's rule as Judice & Pires use it): of the labels
// lcp_correct changed (next, from lab), keep only the last changed unit's (the highest-numbered contact's
// three rows, or one limit row) and undo the others; lab <- that, sanitized
static void lcp_correct_single(int* lab, const lcpScaled* P, const int* next) {
  int last = -1;
  for (int i = 0; i < P->n; i++)
    if (next[i] != lab[i]) last = i;
  if (last < 0) return;
  int c = lcp_contact(P, last), lo = c < 0 ? last : 3 * c, hi = c < 0 ? last + 1 : 3 * c + 3;
  for (int i = lo; i < hi; i++) lab[i] = next[i];
  lcp_sanitize(lab, P, lab);
}

// the warm start, then block principal pivoting on the labels (Judice & Pires 1994): the subsystem on the
// guessed labels lab and the check; while it fails, every label the candidate violates is corrected at once
// (lcp_correct) and the new labels checked the same way. The number of violated labels (changed by a
// correction) is the merit: while it falls below its least value the block corrections go on; after
// LCP_BPP_STALL corrections without a new least value, one unit is corrected at a time (lcp_correct_single:
// Murty's least-index rule, from the other end), until a block step sets a new least value again. At most
// LCP_BPP_ROUNDS subsystems in all, and never the same labels twice (on a singular G the minimal-norm
// subsystems can cycle); Lemke follows if none holds. Returns 1 when a candidate is accepted (best
// holds it), *as_is = 1 if the guess itself was; 0 if none was; -1 if the first candidate's w^ is not finite
// (then G or g is not: see phys_solve_lcp). Scratch lh, wh (n).
// Past LCP_CORRECTIONS corrections a singular subsystem (a face resting on 4 corners: the LCP's solutions are
// not unique) ends the pivoting: Lemke's labels choose the solution there, as they did before the pivoting
// went beyond 3 corrections, so that its trajectories do not move; a regular one (spheres, one point per
// pair) is the only solution with its labels.
static int lcp_warm(lcpBest* best, int* as_is, physData* d, const lcpScaled* P, int* lab, double* lh,
                    double* wh) {
  size_t mark = phys_stack_mark(d);
  int* next = lcp_ints(d, P->n);
  int least = P->n + 1, stall = 0, result = 0;
  uint64_t seen[LCP_BPP_ROUNDS];   // the label sets tried (hashed only once a correction is needed: a guess that
                                  // holds, the common warm step, costs no hash)
  for (int round = 0;; round++) {
    double big;
    int regular = lcp_subsystem(lh, d, P, lab, NULL);
    if (round > LCP_CORRECTIONS && !regular) break;   // past the corrections: Lemke picks among many solutions
    int ok = lcp_try(best, wh, &big, P, lh, lab);
    if (round == 0 && !lcp_all_finite(wh, (size_t)P->n)) {
      result = -1;
      break;
    }
    if (ok) {
      *as_is = round == 0;
      result = 1;
      break;
    }
    if (round + 1 >= LCP_BPP_ROUNDS) break;
    if (round == 0) seen[0] = lcp_label_hash(lab, P->n);
    memcpy(next, lab, sizeof(int) * (size_t)P->n);
    int changed = lcp_correct(next, P, lh, wh, LCP_TOL_CLASS * fmax(1, big));
    if (!changed) break;
    if (changed < least) least = changed, stall = 0;
    else stall++;
    if (stall <= LCP_BPP_STALL) memcpy(lab, next, sizeof(int) * (size_t)P->n);
    else lcp_correct_single(lab, P, next);
    seen[round + 1] = lcp_label_hash(lab, P->n);
    int again = 0;
    for (int k = 0; k <= round; k++) again |= seen[k] == seen[round + 1];
    if (again) break;   // labels already tried: a cycle (on a singular G), Lemke decides
  }
  phys_stack_free(d, mark);
  return result;
}

// write the best candidate as the result: lambda = gamma s lambda^, labels (mu = 0 tangents by the sign of
// w), residual (m/s)
static void lcp_finish(physConstraintSolution* sol, const lcpScaled* P, const lcpBest* best) {
  for (int i = 0; i < P->n; i++) {
    sol->lambda[i] = P->gamma * P->s[i] * best->lh[i];
    sol->state[i] = best->lab[i];
  }
  lcp_label_frictionless(sol->state, P, best->wh);
  sol->residual = best->resvel;
}

// the starting best candidate: lambda^ = 0 (all separating), w^ = g^, rel = inf (any candidate replaces it)
static void lcp_best_init(lcpBest* best, const lcpScaled* P) {
  for (int i = 0; i < P->n; i++) best->lh[i] = 0, best->wh[i] = P->gh[i], best->lab[i] = PHYS_ROW_SEPARATING;
  best->rel = INFINITY;
  double res[2];
  lcp_residual(res, P, best->lh, best->wh);
  best->resvel = res[1];
}

// impulses 0, all rows separating
static void lcp_zero(physConstraintSolution* sol, const physConstraintProblem* p) {
  for (int i = 0; i < p->n; i++) sol->lambda[i] = 0, sol->state[i] = PHYS_ROW_SEPARATING;
  sol->warm_used = 0;
}

// no solve: non-finite inputs (G, g, mu); impulses 0, all separating, a data warning
static physStatus lcp_refuse(physConstraintSolution* sol, physData* d, const physConstraintProblem* p) {
  lcp_zero(sol, p);
  phys_data_warn(d, PHYS_WARN_SOLVER_FAILED, "lcp: non-finite Delassus matrix or velocity (%d contacts, %d limits); "
                 "impulses set to 0", p->nc, p->nl);
  return PHYS_ERR_NUMERIC;
}

// a point lambda^ from Lemke (or Gauss-Seidel) as a candidate: its classification (ties as clamping) stabilized
// to the minimal-norm solution of its clamping subsystem, else its own point refined on its labels (ties as
// separating); each checked by lcp_try. Returns 1 when one is accepted. Scratch lab, lh, wh (n).
static int lcp_candidate(lcpBest* best, physData* d, const lcpScaled* P, const double* lemke, int* lab,
                         double* lh, double* wh) {
  double big = lcp_velocity(wh, P, lemke), tolc = LCP_TOL_CLASS * fmax(1, big), scale;
  lcp_classify(lab, P, lemke, wh, tolc, 1);
  lcp_subsystem(lh, d, P, lab, NULL);
  if (lcp_try(best, wh, &scale, P, lh, lab)) return 1;
  lcp_velocity(wh, P, lemke);
  lcp_classify(lab, P, lemke, wh, tolc, 0);
  lcp_try(best, wh, &scale, P, lemke, lab);
  lcp_subsystem(lh, d, P, lab, lemke);
  return lcp_try(best, wh, &scale, P, lh, lab);
}

// the last stage when no candidate was exact. A singular clamping subsystem (a sliding box's coplanar corners,
// a box on an edge: G^_CC + G^_CB E of rank < |C|, not symmetric once rows slide) may be inconsistent, its
// minimal-norm point off by ~1e-8, while the exact solution, the one exact pivoting ends at (a regular basis),
// usually differs from the best labels in one row: a normal or limit separating (lambda = 0, w >= 0), a tangent
// at a bound (+-mu lambda_n) or back inside. So every single label change of the best labels is solved and
// checked (lcp_try; a separating contact's tangents separate with it); a round that lowers the best residual
// without an exact solution continues from the new best labels, at most LCP_RELABEL_ROUNDS rounds. Measured on
// the 572 such problems of the main job's fit: 464 exact, the others' residual <= 1.3e-9 m/s (before: none
// exact, 3 warned at 5e-8 relative). Returns 1 when one is accepted.
static int lcp_relabel(lcpBest* best, physData* d, const lcpScaled* P, int* lab, double* lh, double* wh) {
  static const int tlab[3] = {PHYS_ROW_CLAMPING, PHYS_ROW_UPPER, PHYS_ROW_LOWER};
  static const int nlab[2] = {PHYS_ROW_CLAMPING, PHYS_ROW_SEPARATING};
  int n = P->n, accepted = 0;
  size_t mark = phys_stack_mark(d);
  int* base = lcp_ints(d, n);
  for (int round = 0; round < LCP_RELABEL_ROUNDS && !accepted; round++) {
    memcpy(base, best->lab, sizeof(int) * (size_t)n);
    double before = best->rel, scale;
    for (int i = 0; i < n && !accepted; i++) {
      int c = lcp_contact(P, i), tangent = c >= 0 && i != 3 * c;
      if (tangent && (base[3 * c] == PHYS_ROW_SEPARATING || !(P->mu[c] > 0))) continue;
      for (int k = 0; k < (tangent ? 3 : 2) && !accepted; k++) {
        int to = tangent ? tlab[k] : nlab[k];
        if (to == base[i]) continue;
        memcpy(lab, base, sizeof(int) * (size_t)n);
        lab[i] = to;
        lcp_sanitize(lab, P, lab);
        lcp_subsystem(lh, d, P, lab, NULL);
        accepted = lcp_try(best, wh, &scale, P, lh, lab);
      }
    }
    if (!(best->rel < before)) break;
  }
  phys_stack_free(d, mark);
  return accepted;
}

// Solve the pyramid LCP of p (see the file comment). Order: the warm start (p->warm's labels, the
// subsystem, the check, then block principal pivoting on the labels, each candidate checked: lcp_warm);
// else Lemke (lcp_candidate: its classification stabilized to the minimal-norm solution (ties as clamping),
// else its own point refined on its labels (ties as separating)); when Lemke ends on a ray or its candidate is
// not exact, the same on G^ + 1e-8 I, then on G^ + 1e-6 I, and if that ends on a ray too Gauss-Seidel's point;
// then lcp_relabel (a singular, inconsistent subsystem: one label changed);
// else the best of these with PHYS_ERR_NUMERIC and a data warning (nearly singular, nearly inconsistent
// problems: relative residuals ~1e-7). sol->residual is the largest
// natural-map residual in row-velocity units (m/s or rad/s): min(d lambda, w) on normals and limits,
// d lambda - clamp(d lambda - w, -d mu lambda_n, d mu lambda_n) on tangents, d = the mean diagonal of G over
// the contact's rows (0 at an exact solution). sol->iterations counts Lemke's pivots (0 when the warm start
// or its block principal pivoting holds); sol->warm_used is 1 only if the guess itself held. p->nv (dofs, rank G <= nv)
// may be 0 (unknown). m may be NULL.
static physStatus solve_lcp(const physModel* m, physData* d, const physConstraintProblem* p,
                            physConstraintSolution* sol) {
  (void)m;
  int n = p->n;
  sol->iterations = 0;
  sol->warm_used = 0;
  sol->residual = 0;
  if (n <= 0) return PHYS_OK;
  // inputs: checked here without a warm start; with one, through the first candidate's w^ (lcp_warm)
  int finite = p->warm ? lcp_finite_mu(p) : lcp_finite(p);
  if (!finite) return lcp_refuse(sol, d, p);
  size_t mark = phys_stack_mark(d);
  lcpScaled P = {.n = n, .nc = p->nc, .nl = p->nl, .nv = p->nv > 0 ? p->nv : 0, .G = p->G,
                 .s = phys_stack_alloc(d, (size_t)n), .gh = phys_stack_alloc(d, (size_t)n),
                 .mu = phys_stack_alloc(d, (size_t)p->nc + 1), .u = phys_stack_alloc(d, (size_t)n),
                 .gamma = 1, .eps = 0};
  lcp_scale(&P, p);
  double* lh = phys_stack_alloc(d, (size_t)n);
  double* lemke = phys_stack_alloc(d, (size_t)n);
  double* wh = phys_stack_alloc(d, (size_t)n);
  int* lab = lcp_ints(d, n);
  lcpBest best = {.lh = phys_stack_alloc(d, (size_t)n), .wh = phys_stack_alloc(d, (size_t)n),
                  .lab = lcp_ints(d, n)};
  physStatus status = PHYS_OK;
  lcp_best_init(&best, &P);

  // warm start: last step's labels (corrected a few times if need be), the clamping subsystem, the check
  if (p->warm) {
    lcp_sanitize(lab, &P, p->warm);
    int warm = lcp_warm(&best, &sol->warm_used, d, &P, lab, lh, wh);
    if (warm != 0) {
      if (warm > 0) lcp_finish(sol, &P, &best);
      phys_stack_free(d, mark);
      return warm > 0 ? PHYS_OK : lcp_refuse(sol, d, p);
    }
  }

  // Lemke on G^, then (if it ends on a ray, or its point does not give an exact solution) on G^ + eps I for
  // each eps of lcp_regularize, then Gauss-Seidel; each point through lcp_candidate
  int ok = 0, accepted = 0;
  for (int k = 0; k <= LCP_NREGULARIZE && !accepted; k++) {
    int more = 0;
    P.eps = k ? lcp_regularize[k - 1] : 0;
    ok = lcp_full(lemke, &more, d, &P);
    P.eps = 0;
    sol->iterations += more;
    if (!ok && k < LCP_NREGULARIZE) continue;   // a ray: the next eps
    if (!ok) lcp_pgs(lemke, &P, LCP_PGS_SWEEPS);
    accepted = lcp_candidate(&best, d, &P, lemke, lab, lh, wh);
  }
  if (!accepted) accepted = lcp_relabel(&best, d, &P, lab, lh, wh);
  if (!accepted && !(best.rel <= LCP_TOL_STATUS)) {
    status = PHYS_ERR_NUMERIC;
    phys_data_warn(d, PHYS_WARN_SOLVER, "lcp: %s; best relative residual %.3g (%d contacts, %d limits)",
                      ok ? "no exact solution on the pivoted labels" : "Lemke's method failed (Gauss-Seidel used)",
                      best.rel, p->nc, p->nl);
  }
  lcp_finish(sol, &P, &best);
  phys_stack_free(d, mark);
  return status;
}

// the solve under an arena guard (arena.h): the algorithm never depends on the free space; an arena that cannot
// hold the scratch (phys_arena_size holds it for every problem of the model) ends the solve with
// PHYS_ERR_NOMEM, impulses 0, all rows separating and a data warning
physStatus phys_solve_lcp(const physModel* m, physData* d, const physConstraintProblem* p,
                          physConstraintSolution* sol) {
  physArenaGuard g;
  phys_arena_enter(d, &g);
  if (setjmp(g.env)) {
    lcp_zero(sol, p);
    return phys_arena_failed(d, &g, PHYS_WARN_SOLVER_FAILED, "lcp");
  }
  physStatus st = solve_lcp(m, d, p, sol);
  phys_arena_leave(d, &g);
  return st;
}

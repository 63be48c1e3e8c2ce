// ccp_vjp.c - derivatives of Anitescu's cone program (ccp.c) and of the exact-cone solution (cone.c) at
// their solutions, by implicit differentiation
// (DESIGN.md section 4, "QP / QCQP / CCP"):
//
//   lambda* = argmin 1/2 lambda'G lambda + lambda'g   s.t.  ||lambda_t,i|| <= mu_i lambda_n,i,  lambda_limit >= 0.
//
// Optimality in natural-map form: with w = G lambda + g and R = diag(rho) (rho = 1 / mean diagonal of each
// contact's block of G, 1 / G_ii on a limit row: any rho > 0 gives the same solution and, at a solution
// away from a structure switch, the same derivative),
//   F(lambda; g, G, mu) = lambda - P_K(v) = 0,   v = lambda - R w,
// P_K the projection onto the product of cones. Differentiating, with J_P = dP/dv (block diagonal: per
// contact identity inside the cone (sticking), 0 in the polar cone (separating), on the surface the
// projection's Jacobian there (sliding, below); a limit row 1 if v > 0, else 0) and P_mu = dP/dmu:
//   A dlambda = -J_P R (dg + dG lambda) + P_mu dmu,     A = I - J_P (I - R G).
// Forward mode solves that system; reverse mode solves A'x = lambda_bar and returns
//   g_bar = -R J_P' x,   G_bar = g_bar lambda' (each entry of G independent),   mu_bar_i = x_i' P_mu,i.
// A is singular when G is (a box's four coplanar corners: lambda is not unique there, while w and the
// velocities are): both solves use iterative refinement of the regularized least-squares problem
//   x_k+1 = argmin 1/2 ||A x - b||^2 + eps/2 ||x - x_k||^2    (Cholesky of A'A + eps I, once),
// from x_0 = 0, which converges to the minimal-norm least-squares solution, pinv(A) b; the same for A'.
// Limitation of singular problems: A's null space holds the load redistributions J'dl = 0, so the velocity
// derivative is unique while every contact keeps its structure and the sliding contacts one common slip
// direction (measured: the sliding box against central differences in its linear velocity, 7e-11). A
// perturbation that turns the slip directions apart (a spin of the sliding box) makes the loads unique
// again at a limit distribution the solver's lambda need not be: the friction torque's derivative depends on
// it, and the result here is off (measured 2e-5 relative on the sliding box's angular velocity).
// The cone solver (cone.c, staggered projections) converges to a fixed point that satisfies Signorini's
// condition and Coulomb's law with maximal dissipation on the exact cone; rather than differentiating the
// sweeps, the same construction differentiates those conditions, written as Alart and Curnier's map
// (p_n = max(0, v_n), p_t = v_t projected onto the disk of radius mu p_n) in place of the cone projection:
// a fixed point of the sweeps is a zero of that map, so its derivative is the fixed point's.
// Assumes strict complementarity (no contact exactly at a switch: sticking with lambda on the surface,
// separating with w on the dual cone's surface); there the derivative is one of the one-sided ones.
#include <math.h>
#include <string.h>

#include "../math/chol.h"
#include "contact.h"

#define PHYS_CCP_VJP_EPS 1e-12   // regularization eps relative to the largest diagonal of A'A
#define PHYS_CCP_VJP_ITER 200    // refinement iterations at most

// the linearization of the natural map at the solution (contact.h physCcpLocal): A (n x n), B = J_P R (block
// diagonal: 9 per contact, then one per limit row), Pmu = dP/dmu (3 per contact), and the factors of the two
// regularized normal matrices refine_solve iterates with: Nr of A A' + eps I (reverse mode, built with the
// linearization) and Nf of A'A + eps I (forward mode; NULL until phys_solve_ccp_local_forward).
// Blocks (issue 19, derivatives by islands): G_ij = 0 exactly between rows of different islands (island.c), and
// B is block diagonal per contact, so A is block diagonal over the components of G's pattern (lin_blocks; an
// island is one or more of them) and so are both normal matrices. A, Nr, Nf are kept block by block (block k's
// rows row[start[k] .. start[k+1]-1], ascending; its n_k x n_k matrices at off[k]) and each block is solved
// alone, its eps from its own largest diagonal: O(sum n_k^3) to build, O(sum n_k^2) per refinement step, and a
// block's numbers do not depend on the other bodies (a singular block's refined solution depends on eps)
struct physCcpLocal_ {
  int n, nc, nl;
  double *A, *B, *Pmu;
  double *Nr, *Nf;
  int nb;                   // islands (blocks), 1 without p->island
  int *start, *row;         // nb + 1, n
  size_t* off;              // nb + 1: block k's offset in A, Nr, Nf (sum of n_j^2 before it)
};
typedef physCcpLocal ccpLin;

// projection Jacobian P = dp/dv (3 x 3) of v = (a, b) onto the cone ||b|| <= mu a, and dp/dmu (3):
// inside: identity, 0; polar cone: 0, 0; surface, with s = ||b||, u = b/s, c = 1/(1 + mu^2),
// k = (a + mu s) c, p = k (1, mu u):  dp/da = c (1, mu u), dp_n/db = mu c u', dp_t/db = mu^2 c u u' +
// mu k (I - u u')/s;  dk/dmu = c (s - 2 mu k), dp_n/dmu = dk/dmu, dp_t/dmu = u (k + mu dk/dmu).
// A frictionless contact (mu = 0; the cone is the ray b = 0, a >= 0) is never inside: its projection
// (max(a, 0), 0, 0) has no tangential derivative even at b = 0 exactly (a head-on impact), where the test
// s <= mu a alone would call it sticking. With a > 0 that is the surface formula at mu = 0 (u = 0 when
// s = 0: dp/dmu is then 0, the right derivative, as any mu > 0 keeps b = 0 inside).
static void cone_jac(double P[9], double pmu[3], const double v[3], double mu) {
  double a = v[0], s = sqrt(v[1] * v[1] + v[2] * v[2]);
  memset(P, 0, 9 * sizeof(double));
  memset(pmu, 0, 3 * sizeof(double));
  if (s <= mu * a && mu > 0) {
    P[0] = P[4] = P[8] = 1;
    return;
  }
  if (mu * s <= -a) return;
  double u[2] = {s > 0 ? v[1] / s : 0, s > 0 ? v[2] / s : 0}, c = 1 / (1 + mu * mu), k = (a + mu * s) * c;
  double dk = c * (s - 2 * mu * k);
  P[0] = c;
  pmu[0] = dk;
  for (int r = 0; r < 2; r++) {
    P[1 + r] = P[3 * (1 + r)] = mu * c * u[r];
    pmu[1 + r] = u[r] * (k + mu * dk);
    for (int q = 0; q < 2; q++)
      P[3 * (1 + r) + 1 + q] = mu * mu * c * u[r] * u[q] + (mu > 0 ? mu * k * ((r == q) - u[r] * u[q]) / s : 0);
  }
}

// the same for Alart and Curnier's map of the exact cone (the cone solver's conditions, below): p_n =
// max(0, v_n), p_t = v_t projected onto the disk of radius mu p_n; sticking (s = ||v_t|| <= mu p_n): dp_t/dv_t
// = I; sliding, u = v_t/s: dp_t/dv_n = mu u [v_n > 0], dp_t/dv_t = mu p_n (I - u u')/s, dp_t/dmu = p_n u.
// A disk of radius 0 (mu = 0, or a separating contact) is a point: p_t = 0 whatever v_t, so no tangential
// derivative even at v_t = 0 exactly (where s <= R alone would call it sticking); dp_t/dmu is then 0 (u = 0)
static void alart_curnier_jac(double P[9], double pmu[3], const double v[3], double mu) {
  double s = sqrt(v[1] * v[1] + v[2] * v[2]), pn = fmax(v[0], 0), R = mu * pn, dn = v[0] > 0;
  memset(P, 0, 9 * sizeof(double));
  memset(pmu, 0, 3 * sizeof(double));
  P[0] = dn;
  if (s <= R && R > 0) {
    P[4] = P[8] = 1;
    return;
  }
  if (s == 0) return;
  double u[2] = {v[1] / s, v[2] / s};
  for (int r = 0; r < 2; r++) {
    P[3 * (1 + r)] = mu * dn * u[r];
    pmu[1 + r] = pn * u[r];
    for (int q = 0; q < 2; q++) P[3 * (1 + r) + 1 + q] = R * ((r == q) - u[r] * u[q]) / s;
  }
}

// row i of A = I - J_P + B G at the nk columns cols (ascending) into Ar
static void lin_row(const ccpLin* L, const physConstraintProblem* p, const double* Jp, int i, const int* cols, int nk,
                    double* Ar) {
  int n = p->n, nc = p->nc;
  if (i < 3 * nc) {
    int c = i / 3, a = i % 3;
    const double *B = L->B + 9 * c, *G0 = p->G + (size_t)(3 * c) * n, *G1 = G0 + n, *G2 = G1 + n;
    for (int j = 0; j < nk; j++) {
      int cj = cols[j];
      Ar[j] = B[3 * a] * G0[cj] + B[3 * a + 1] * G1[cj] + B[3 * a + 2] * G2[cj];
      if (cj >= 3 * c && cj < 3 * c + 3) Ar[j] += (a == cj - 3 * c) - Jp[9 * c + 3 * a + cj - 3 * c];
    }
    return;
  }
  double b = L->B[9 * nc + i - 3 * nc];
  const double* Gr = p->G + (size_t)i * n;
  for (int j = 0; j < nk; j++) Ar[j] = b * Gr[cols[j]] + (cols[j] == i ? 1 - Jp[9 * nc + i - 3 * nc] : 0);
}

// the root of row r's set (union-find with path halving), and the join of two sets (smaller root kept)
static int lin_find(int* up, int r) {
  while (up[r] != r) r = up[r] = up[up[r]];
  return r;
}
static void lin_join(int* up, int a, int b) {
  a = lin_find(up, a), b = lin_find(up, b);
  if (a < b) up[b] = a;
  else if (b < a) up[a] = b;
}

// L's blocks (start, row, off; arena memory): the connected components of G's pattern (rows i, j joined where
// G_ij or G_ji is not 0) with each contact's three rows joined, in the order of their first row. A is block
// diagonal over them (B G's row of a contact combines that contact's rows of G). Islands (island.c) are unions
// of such components: they come out whether or not the problem was split (p->island is not read), so an
// island's blocks, its eps and its refinement are the same as for that island alone and with PHYS_DSBL_ISLAND
static void lin_blocks(ccpLin* L, physData* d, const physConstraintProblem* p) {
  int n = p->n, nb = 0;
  int* up = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  int* lab = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  for (int i = 0; i < n; i++) up[i] = i < 3 * p->nc ? 3 * (i / 3) : i;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (p->G[(size_t)i * n + j] != 0 || p->G[(size_t)j * n + i] != 0) lin_join(up, i, j);
  for (int i = 0; i < n; i++) {
    int r = lin_find(up, i);
    lab[i] = r == i ? nb++ : lab[r];   // (r <= i: labelled already)
  }
  L->nb = nb;
  L->start = (int*)phys_stack_alloc(d, (size_t)(nb + 1) / 2 + 1);
  L->row = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  L->off = (size_t*)phys_stack_alloc(d, (size_t)nb + 1);
  memset(L->start, 0, sizeof(int) * (size_t)(nb + 1));
  for (int i = 0; i < n; i++) L->start[lab[i] + 1]++;
  for (int k = 0; k < nb; k++) L->start[k + 1] += L->start[k];
  L->off[0] = 0;
  for (int k = 0; k < nb; k++) {
    size_t nk = (size_t)(L->start[k + 1] - L->start[k]);
    L->off[k + 1] = L->off[k] + nk * nk;
  }
  memcpy(up, L->start, sizeof(int) * (size_t)nb);   // (up: each block's next slot)
  for (int i = 0; i < n; i++) L->row[up[lab[i]]++] = i;
}

// fill L (arrays from d's arena) at the solution lambda: rho, v = lambda - R (G lambda + g), the
// Jacobians (ccp = 1: the cone projection, 0: Alart and Curnier's map), B = J_P R and A = I - J_P + B G
static void linearize(ccpLin* L, physData* d, const physConstraintProblem* p, const double* lambda, int ccp) {
  int n = p->n, nc = p->nc, nl = p->nl;
  L->n = n, L->nc = nc, L->nl = nl;
  lin_blocks(L, d, p);
  L->A = phys_stack_alloc(d, L->off[L->nb] + 1);
  L->B = phys_stack_alloc(d, 9 * (size_t)nc + nl + 1);
  L->Pmu = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  size_t mark = phys_stack_mark(d);
  double* Jp = phys_stack_alloc(d, 9 * (size_t)nc + nl + 1);
  for (int c = 0; c < nc; c++) {
    const double* G = p->G + (size_t)(3 * c) * n + 3 * c;
    double mean = (G[0] + G[n + 1] + G[2 * (size_t)n + 2]) / 3, rho = mean > 0 ? 1 / mean : 1, v[3];
    for (int a = 0; a < 3; a++) {
      const double* Gr = p->G + (size_t)(3 * c + a) * n;
      double w = p->g[3 * c + a];
      for (int j = 0; j < n; j++) w += Gr[j] * lambda[j];
      v[a] = lambda[3 * c + a] - rho * w;
    }
    if (ccp) cone_jac(Jp + 9 * c, L->Pmu + 3 * c, v, fmax(p->mu[c], 0));
    else alart_curnier_jac(Jp + 9 * c, L->Pmu + 3 * c, v, fmax(p->mu[c], 0));
    for (int e = 0; e < 9; e++) L->B[9 * c + e] = rho * Jp[9 * c + e];
  }
  for (int i = 3 * nc; i < n; i++) {
    const double* Gr = p->G + (size_t)i * n;
    double gii = Gr[i], rho = gii > 0 ? 1 / gii : 1, w = p->g[i];
    for (int j = 0; j < n; j++) w += Gr[j] * lambda[j];
    Jp[9 * nc + i - 3 * nc] = lambda[i] - rho * w > 0;
    L->B[9 * nc + i - 3 * nc] = rho * Jp[9 * nc + i - 3 * nc];
  }
  // A = I - J_P + B G island by island (B block diagonal): row r of block k at its columns row[...]
  for (int k = 0; k < L->nb; k++) {
    const int* rk = L->row + L->start[k];
    int nk = L->start[k + 1] - L->start[k];
    for (int a = 0; a < nk; a++) lin_row(L, p, Jp, rk[a], rk, nk, L->A + L->off[k] + (size_t)a * nk);
  }
  phys_stack_free(d, mark);
}

// y = M x (trans = 0) or M' x (trans = 1), M n x n row-major
static void matvec(double* y, const double* M, const double* x, int n, int trans) {
  for (int i = 0; i < n; i++) y[i] = 0;
  for (int i = 0; i < n; i++) {
    const double* Mr = M + (size_t)i * n;
    if (trans) {
      for (int j = 0; j < n; j++) y[j] += Mr[j] * x[i];
    } else {
      double s = 0;
      for (int j = 0; j < n; j++) s += Mr[j] * x[j];
      y[i] = s;
    }
  }
}

// the factor of N = Op'Op + eps I (n x n) into N, Op = A (trans = 0) or A' (trans = 1), eps =
// PHYS_CCP_VJP_EPS times N's largest diagonal (1 if it is 0)
static void normal_factor(double* N, const double* A, int n, int trans) {
  // N = Op'Op: trans = 0: (A'A)_ij = sum_k A_ki A_kj; trans = 1: (A A')_ij = sum_k A_ik A_jk
  double dmax = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) {
      double acc = 0;
      if (trans) {
        for (int k = 0; k < n; k++) acc += A[(size_t)i * n + k] * A[(size_t)j * n + k];
      } else {
        for (int k = 0; k < n; k++) acc += A[(size_t)k * n + i] * A[(size_t)k * n + j];
      }
      N[(size_t)i * n + j] = N[(size_t)j * n + i] = acc;
    }
    dmax = fmax(dmax, N[(size_t)i * n + i]);
  }
  double eps = PHYS_CCP_VJP_EPS * (dmax > 0 ? dmax : 1);
  for (int i = 0; i < n; i++) N[(size_t)i * n + i] += eps;
  phys_chol_factor(N, n, 0);
}

// the factors of L's islands (trans as normal_factor) into one array from d's arena (block k at L->off[k])
static double* normal_factors(physData* d, const ccpLin* L, int trans) {
  double* N = phys_stack_alloc(d, L->off[L->nb] + 1);
  for (int k = 0; k < L->nb; k++)
    normal_factor(N + L->off[k], L->A + L->off[k], L->start[k + 1] - L->start[k], trans);
  return N;
}

// solve A x = b (trans = 0) or A'x = b (trans = 1) as the limit of x_k+1 = argmin 1/2 ||Op x - b||^2 +
// eps/2 ||x - x_k||^2 from x_0 = 0, Op = A or A': with N = Op'Op + eps I (its factor from normal_factor),
// x_k+1 = x_k + N^-1 Op'(b - Op x_k). Stops when the step is below 1e-15 ||x||, stops shrinking (rounding) or
// after PHYS_CCP_VJP_ITER steps. Returns the number of steps.
static int refine_solve(double* x, physData* d, const double* A, const double* N, const double* b, int n,
                        int trans) {
  size_t mark = phys_stack_mark(d);
  double* r = phys_stack_alloc(d, 2 * (size_t)n);
  double* s = r + n;
  for (int i = 0; i < n; i++) x[i] = 0;
  int it = 0;
  double last = INFINITY;
  while (it < PHYS_CCP_VJP_ITER) {
    it++;
    // r = b - Op x, s = Op' r
    matvec(r, A, x, n, trans);
    for (int i = 0; i < n; i++) r[i] = b[i] - r[i];
    matvec(s, A, r, n, !trans);
    phys_chol_solve(s, N, s, n);
    double step = 0, norm = 0;
    for (int i = 0; i < n; i++) {
      x[i] += s[i];
      step = fmax(step, fabs(s[i]));
      norm = fmax(norm, fabs(x[i]));
    }
    if (step <= 1e-15 * norm || norm == 0 || (it > 2 && step >= last)) break;  // converged or at rounding
    last = step;
  }
  phys_stack_free(d, mark);
  return it;
}

// refine_solve island by island: x (n) from b (n) with L's blocks of A and the factors N (normal_factors)
static void island_solve(double* x, physData* d, const ccpLin* L, const double* N, const double* b, int trans) {
  size_t mark = phys_stack_mark(d);
  double* xb = phys_stack_alloc(d, 2 * (size_t)L->n + 1);
  double* bb = xb + L->n;
  for (int k = 0; k < L->nb; k++) {
    const int* rk = L->row + L->start[k];
    int nk = L->start[k + 1] - L->start[k];
    for (int a = 0; a < nk; a++) bb[a] = b[rk[a]];
    refine_solve(xb, d, L->A + L->off[k], N + L->off[k], bb, nk, trans);
    for (int a = 0; a < nk; a++) x[rk[a]] = xb[a];
  }
  phys_stack_free(d, mark);
}

// the local structure of the ccp (ccp = 1) or cone (0) solution sol of p (see contact.h)
physCcpLocal* phys_solve_ccp_local(physData* d, const physConstraintProblem* p, const physConstraintSolution* sol,
                                   int ccp) {
  physCcpLocal* L = (physCcpLocal*)phys_stack_alloc(d, sizeof(physCcpLocal) / sizeof(double) + 1);
  memset(L, 0, sizeof *L);
  d->nccp_local++;
  if (p->n == 0) return L;
  linearize(L, d, p, sol->lambda, ccp);
  L->Nr = normal_factors(d, L, 1);
  return L;
}

// a copy of loc with the forward mode's factor (see contact.h)
physCcpLocal* phys_solve_ccp_local_forward(physData* d, const physCcpLocal* loc) {
  physCcpLocal* L = (physCcpLocal*)phys_stack_alloc(d, sizeof(physCcpLocal) / sizeof(double) + 1);
  *L = *loc;
  if (L->n > 0 && !L->Nf) L->Nf = normal_factors(d, L, 0);
  return L;
}

// reverse mode at the local structure L of p's solution sol (see contact.h)
physStatus phys_solve_ccp_vjp_local(const physCcpLocal* loc, physData* d, const physConstraintProblem* p,
                                    const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                                    double* G_bar, double* mu_bar) {
  int n = p->n, nc = p->nc;
  for (int i = 0; i < n; i++) g_bar[i] = 0;
  if (G_bar) memset(G_bar, 0, (size_t)n * n * sizeof(double));
  if (mu_bar) memset(mu_bar, 0, (size_t)nc * sizeof(double));
  if (n == 0) return PHYS_OK;
  size_t mark = phys_stack_mark(d);
  const ccpLin L = *loc;
  double* x = phys_stack_alloc(d, (size_t)n);
  island_solve(x, d, &L, L.Nr, lambda_bar, 1);
  // g_bar = -B'x (B = J_P R block diagonal); mu_bar_i = x_i'P_mu,i
  for (int c = 0; c < nc; c++) {
    const double *B = L.B + 9 * c, *xc = x + 3 * c;
    for (int b = 0; b < 3; b++) g_bar[3 * c + b] = -(B[b] * xc[0] + B[3 + b] * xc[1] + B[6 + b] * xc[2]);
    if (mu_bar) mu_bar[c] = xc[0] * L.Pmu[3 * c] + xc[1] * L.Pmu[3 * c + 1] + xc[2] * L.Pmu[3 * c + 2];
  }
  for (int i = 3 * nc; i < n; i++) g_bar[i] = -L.B[9 * nc + i - 3 * nc] * x[i];
  if (G_bar)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) G_bar[(size_t)i * n + j] = g_bar[i] * sol->lambda[j];
  phys_stack_free(d, mark);
  return isfinite(sol->residual) ? PHYS_OK : PHYS_ERR_NUMERIC;
}

// forward mode at the local structure loc of p's solution sol (see contact.h)
physStatus phys_solve_ccp_jvp_local(const physCcpLocal* loc, physData* d, const physConstraintProblem* p,
                                    const physConstraintSolution* sol, const double* dg, const double* dG,
                                    const double* dmu, double* dlambda) {
  int n = p->n, nc = p->nc;
  if (n == 0) return PHYS_OK;
  size_t mark = phys_stack_mark(d);
  const ccpLin L = *loc;
  double* e = phys_stack_alloc(d, 2 * (size_t)n);
  double* rhs = e + n;
  // e = dg + dG lambda; rhs = -B e + P_mu dmu
  for (int i = 0; i < n; i++) {
    double s = dg ? dg[i] : 0;
    if (dG)
      for (int j = 0; j < n; j++) s += dG[(size_t)i * n + j] * sol->lambda[j];
    e[i] = s;
  }
  for (int c = 0; c < nc; c++) {
    const double *B = L.B + 9 * c, *ec = e + 3 * c;
    for (int a = 0; a < 3; a++) {
      rhs[3 * c + a] = -(B[3 * a] * ec[0] + B[3 * a + 1] * ec[1] + B[3 * a + 2] * ec[2]);
      if (dmu) rhs[3 * c + a] += L.Pmu[3 * c + a] * dmu[c];
    }
  }
  for (int i = 3 * nc; i < n; i++) rhs[i] = -L.B[9 * nc + i - 3 * nc] * e[i];
  // (the forward factor: loc's, else built here; either way the same arithmetic)
  island_solve(dlambda, d, &L, L.Nf ? L.Nf : normal_factors(d, &L, 0), rhs, 0);
  phys_stack_free(d, mark);
  return isfinite(sol->residual) ? PHYS_OK : PHYS_ERR_NUMERIC;
}

// the one-shot entry points: a local structure of their own (counted in d->nccp_local), then the local mode
static physStatus solution_vjp(physData* d, const physConstraintProblem* p, const physConstraintSolution* sol,
                               const double* lambda_bar, double* g_bar, double* G_bar, double* mu_bar, int ccp) {
  size_t mark = phys_stack_mark(d);
  physStatus st = phys_solve_ccp_vjp_local(phys_solve_ccp_local(d, p, sol, ccp), d, p, sol, lambda_bar, g_bar, G_bar,
                                           mu_bar);
  phys_stack_free(d, mark);
  return st;
}

static physStatus solution_jvp(physData* d, const physConstraintProblem* p, const physConstraintSolution* sol,
                               const double* dg, const double* dG, const double* dmu, double* dlambda, int ccp) {
  size_t mark = phys_stack_mark(d);
  physStatus st = phys_solve_ccp_jvp_local(phys_solve_ccp_local(d, p, sol, ccp), d, p, sol, dg, dG, dmu, dlambda);
  phys_stack_free(d, mark);
  return st;
}

// reverse mode of ccp (see contact.h)
physStatus phys_solve_ccp_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                              double* G_bar, double* mu_bar) {
  (void)m;
  return solution_vjp(d, p, sol, lambda_bar, g_bar, G_bar, mu_bar, 1);
}

// forward mode of ccp (see contact.h)
physStatus phys_solve_ccp_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                              const physConstraintSolution* sol, const double* dg, const double* dG,
                              const double* dmu, double* dlambda) {
  (void)m;
  return solution_jvp(d, p, sol, dg, dG, dmu, dlambda, 1);
}

// reverse mode of cone (see contact.h)
physStatus phys_solve_cone_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                               const physConstraintSolution* sol, const double* lambda_bar, double* g_bar,
                               double* G_bar, double* mu_bar) {
  (void)m;
  return solution_vjp(d, p, sol, lambda_bar, g_bar, G_bar, mu_bar, 0);
}

// forward mode of cone (see contact.h)
physStatus phys_solve_cone_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                               const physConstraintSolution* sol, const double* dg, const double* dG,
                               const double* dmu, double* dlambda) {
  (void)m;
  return solution_jvp(d, p, sol, dg, dG, dmu, dlambda, 0);
}

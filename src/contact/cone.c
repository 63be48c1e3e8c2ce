// cone.c - staggered projections with the exact (ice-cream) Coulomb cone (paper 000, eq. 5, Algorithm 1).
//
// Split the rows into normal ones N (contact normals, then joint-limit rows) and tangent ones T (two per
// contact). Alternate, from lambda_T = 0,
//   lambda_N = argmin_{lambda >= 0}               1/2 lambda'G_NN lambda + lambda'(g_N + G_NT lambda_T)   (QP)
//   lambda_T = argmin_{||lambda_t,i|| <= mu_i lambda_n,i}  1/2 lambda'G_TT lambda + lambda'(g_T + G_TN lambda_N)   (QCQP)
// each by the regularized ADMM of admm.h (warm-started from the previous sweep, one factorization of each
// block per rho), until the fixed point holds: the QCQP changed the QP's linear term by
// ||G_NT (lambda_T+ - lambda_T)||_inf <= tol max(1, ||g||_inf) (option solver_tolerance).
// A fixed point satisfies Signorini's condition 0 <= w_n _|_ lambda_n >= 0 and maximal dissipation on the
// true cone: sticking contacts have w_t = 0, sliding ones lambda_t = -mu lambda_n w_t/||w_t|| (isotropic).
// Paper 000 runs a fixed n_step in [3, 10] sweeps; the contraction of the sweeps is geometric with a
// ratio set by the normal-tangent coupling G_NT (measured 0.6 per sweep for a sticking box: 35 sweeps to
// 1e-10), so instead of a fixed count the sweeps run to the tolerance, cheaply: sub-problems are solved
// inexactly while the fixed point is far, and late sweeps take 1-2 warm-started ADMM iterations each.
// Work: at most PHYS_CONE_BUDGET * option solver_iterations ADMM iterations in all (each sub-solve at most
// solver_iterations); sol->iterations is the total used.
#include <math.h>
#include <string.h>

#include "admm.h"
#include "contact.h"

#define PHYS_CONE_BUDGET 10  // ADMM iterations of a solve: at most PHYS_CONE_BUDGET * option solver_iterations

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// row of normal k (contact normals, then limits) and of tangent j in the problem
static int row_n(int k, int nc) { return k < nc ? 3 * k : 3 * nc + (k - nc); }
static int row_t(int j) { return 3 * (j / 2) + 1 + (j % 2); }

// the blocks G_NN (nn x nn), G_TT (nt x nt), G_NT (nn x nt) and g_N, g_T of the problem
static void split_blocks(double* Gnn, double* Gtt, double* Gnt, double* gn, double* gt,
                         const physConstraintProblem* p) {
  int n = p->n, nc = p->nc, nn = nc + p->nl, nt = 2 * nc;
  for (int a = 0; a < nn; a++) {
    const double* Ga = p->G + (size_t)row_n(a, nc) * n;
    for (int b = 0; b < nn; b++) Gnn[(size_t)a * nn + b] = Ga[row_n(b, nc)];
    for (int b = 0; b < nt; b++) Gnt[(size_t)a * nt + b] = Ga[row_t(b)];
    gn[a] = p->g[row_n(a, nc)];
  }
  for (int a = 0; a < nt; a++) {
    const double* Ga = p->G + (size_t)row_t(a) * n;
    for (int b = 0; b < nt; b++) Gtt[(size_t)a * nt + b] = Ga[row_t(b)];
    gt[a] = p->g[row_t(a)];
  }
}

// Coulomb residual (m/s) of impulses lambda with w = G lambda + g: per contact, Signorini |w_n| if
// lambda_n > 0 else max(0, -w_n); sticking |w_t|; sliding: w_t antiparallel to lambda_t (the component of
// w_t off -u = -lambda_t/|lambda_t| and max(0, w_t.u)); limit rows like normals
static double coulomb_residual(const physConstraintProblem* p, const double* lambda, const double* mu) {
  int n = p->n, nc = p->nc;
  double r = 0;
  for (int i = 0; i < n; i++) {
    int c = i < 3 * nc ? i / 3 : -1;
    if (c >= 0 && i % 3) continue;  // tangent rows with their normal
    const double* Gi = p->G + (size_t)i * n;
    double w[3] = {p->g[i], 0, 0};
    for (int j = 0; j < n; j++) w[0] += Gi[j] * lambda[j];
    r = fmax(r, lambda[i] > 0 ? fabs(w[0]) : fmax(0, -w[0]));
    if (c < 0) continue;
    for (int k = 1; k < 3; k++) {
      const double* Gk = p->G + (size_t)(i + k) * n;
      w[k] = p->g[i + k];
      for (int j = 0; j < n; j++) w[k] += Gk[j] * lambda[j];
    }
    const double* l = lambda + i;
    double rad = mu[c] * l[0], s = sqrt(l[1] * l[1] + l[2] * l[2]);
    if (!(rad > 0)) continue;  // no friction available: any tangent velocity is admissible
    if (s < rad * (1 - 1e-9)) {
      r = fmax(r, fmax(fabs(w[1]), fabs(w[2])));
    } else {
      double u[2] = {l[1] / s, l[2] / s}, wu = w[1] * u[0] + w[2] * u[1];
      r = fmax(r, fmax(fabs(w[1] - wu * u[0]), fabs(w[2] - wu * u[1])));
      r = fmax(r, fmax(0, wu));
    }
  }
  return r;
}

// zero impulses, all rows separating
static void clear_solution(physConstraintSolution* sol, int n) {
  for (int i = 0; i < n; i++) {
    sol->lambda[i] = 0;
    sol->state[i] = PHYS_ROW_SEPARATING;
  }
}

// y = A x + b  (A: r x c)
static void mul_add(double* y, const double* A, const double* x, const double* b, int r, int c) {
  for (int i = 0; i < r; i++) {
    double s = b[i];
    for (int j = 0; j < c; j++) s += A[(size_t)i * c + j] * x[j];
    y[i] = s;
  }
}

// y = A' x + b  (A: r x c)
static void mul_t_add(double* y, const double* A, const double* x, const double* b, int r, int c) {
  memcpy(y, b, sizeof(double) * (size_t)c);
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++) y[j] += A[(size_t)i * c + j] * x[i];
}

// staggered sweeps QP -> QCQP (see the file comment) within a budget of PHYS_CONE_BUDGET solver_iterations
// ADMM iterations, each sub-solve capped at solver_iterations. Inexact sweeps: while the fixed point is
// far, the sub-problems are solved only to max(tol, min(1e-3, fp / 10)) relative to max(1, ||g||_inf)
// (fp: the last fixed-point residual), the last sweeps to tol. Returns 1 if the fixed point and both last
// sub-solves converged to tol, 0 if the budget ran out, -1 on a numerical failure
static int sweeps(physAdmm* an, physAdmm* at, const double* Gnt, const double* gn, const double* gt,
                  const double* mu, int nc, int nl, const physModel* m, double gmax, double* work, int* iters) {
  int nn = nc + nl, nt = 2 * nc;
  double *qn = work, *qt = qn + nn, *lt = qt + nt, *radius = lt + nt;
  physAdmmSet setn = {0, NULL, 0, NULL, nn}, sett = {nc, radius, 0, NULL, 0};
  int cap = m->opt.solver_iterations, budget = PHYS_CONE_BUDGET * cap;
  double tol = m->opt.solver_tolerance, eps = tol * gmax, fp = INFINITY;
  memset(lt, 0, sizeof(double) * (size_t)nt);
  *iters = 0;
  while (*iters < budget - 1) {
    double tols = fmax(tol, fmin(1e-3, 0.1 * fp / gmax));
    // QP: q_N = g_N + G_NT lambda_T
    mul_add(qn, Gnt, lt, gn, nn, nt);
    int okn = phys_admm_solve(an, qn, &setn, imin(cap, budget - 1 - *iters), tols);
    *iters += an->iterations;
    if (an->failed) return -1;
    if (nc == 0) return okn && tols == tol;
    // QCQP: q_T = g_T + G_NT' lambda_N, radius_i = mu_i lambda_n,i
    mul_t_add(qt, Gnt, an->z, gt, nn, nt);
    for (int i = 0; i < nc; i++) radius[i] = mu[i] * an->z[i];
    int okt = phys_admm_solve(at, qt, &sett, imin(cap, imax(budget - *iters, 1)), tols);  // >= 1: lambda_T must follow lambda_N
    *iters += at->iterations;
    if (at->failed) return -1;
    // fixed point: change of the QP's linear term, fp = ||G_NT (lambda_T+ - lambda_T)||_inf
    for (int j = 0; j < nt; j++) lt[j] = at->z[j] - lt[j];
    fp = 0;
    for (int a = 0; a < nn; a++) {
      double v = 0;
      for (int j = 0; j < nt; j++) v += Gnt[(size_t)a * nt + j] * lt[j];
      fp = fmax(fp, fabs(v));
    }
    memcpy(lt, at->z, sizeof(double) * (size_t)nt);
    if (fp <= eps && okn && okt && tols == tol) return 1;
  }
  return 0;
}

// the whole solve (see contact.h for the contract)
physStatus phys_solve_cone(const physModel* m, physData* d, const physConstraintProblem* p,
                           physConstraintSolution* sol) {
  int n = p->n, nc = p->nc, nl = p->nl, nn = nc + nl, nt = 2 * nc;
  sol->iterations = 0;
  sol->residual = 0;
  sol->warm_used = 0;
  clear_solution(sol, n);
  if (n == 0) return PHYS_OK;
  if (!phys_admm_finite(p->G, (size_t)n * n) || !phys_admm_finite(p->g, (size_t)n) ||
      !phys_admm_finite(p->mu, (size_t)nc)) {
    sol->residual = INFINITY;
    phys_data_warning(d, "cone: constraint problem has non-finite entries; impulses set to zero");
    return PHYS_ERR_NUMERIC;
  }

  size_t mark = phys_stack_mark(d);
  double* Gnn = phys_stack_alloc(d, (size_t)nn * nn);
  double* Gtt = phys_stack_alloc(d, (size_t)nt * nt + 1);
  double* Gnt = phys_stack_alloc(d, (size_t)nn * nt + 1);
  double* vec = phys_stack_alloc(d, 2 * (size_t)nn + 4 * (size_t)nt + 2 * (size_t)nc + 1);
  double *gn = vec, *gt = gn + nn, *mu = gt + nt, *work = mu + nc;
  split_blocks(Gnn, Gtt, Gnt, gn, gt, p);
  for (int i = 0; i < nc; i++) mu[i] = fmax(p->mu[i], 0);

  physAdmm an, at;
  int ok = phys_admm_init(&an, d, Gnn, nn) && phys_admm_init(&at, d, Gtt, nt);
  double gmax = 1;  // eps = tol max(1, ||g||_inf)
  for (int i = 0; i < n; i++) gmax = fmax(gmax, fabs(p->g[i]));
  int result = ok ? sweeps(&an, &at, Gnt, gn, gt, mu, nc, nl, m, gmax, work, &sol->iterations) : -1;

  physStatus status = PHYS_OK;
  if (result < 0) {
    sol->residual = INFINITY;
    phys_data_warning(d, "cone: ADMM failed (matrix not factorizable or iterates not finite); impulses set to zero");
    status = PHYS_ERR_NUMERIC;
  } else {
    for (int k = 0; k < nn; k++) sol->lambda[row_n(k, nc)] = an.z[k];
    for (int j = 0; j < nt; j++) sol->lambda[row_t(j)] = at.z[j];
    phys_admm_states(sol->state, sol->lambda, mu, nc, nl);
    sol->residual = coulomb_residual(p, sol->lambda, mu);
    if (!result) {
      phys_data_warning(d, "cone: staggered projections not converged after %d ADMM iterations "
                        "(Coulomb residual %.3g m/s)", sol->iterations, sol->residual);
      status = PHYS_ERR_NUMERIC;
    }
  }
  phys_stack_free(d, mark);
  return status;
}

// cone.c - staggered projections with the exact (ice-cream) Coulomb cone (paper 000, eq. 5, Algorithm 1).
//
// Warm start: last step's impulses (p->lambda0), projected and polished (admm.h), are kept when they meet
// the tolerance; otherwise the sweeps below start from them (from 0 without a guess), each sweep ending
// with a polishing attempt that stops them once the contacts' structure is identified.
// Split the rows into normal ones N (contact normals, then joint-limit rows) and tangent ones T (two per
// contact). Alternate, from lambda_T = 0 (or the guess),
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
// solver_iterations); sol->iterations is the total used. When the budget runs out (the sweeps crawl on a
// contact between sticking and sliding), semismooth Newton on Alart and Curnier's map (phys_admm_fallback,
// admm.h) finishes from the last iterate or from the warm guess; its iterations are added to the count.
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

// lambda (n) from the blocks' impulses lambda_N (nn) and lambda_T (nt)
static void gather(double* lambda, const double* ln, const double* lt, int nc, int nl) {
  for (int k = 0; k < nc + nl; k++) lambda[row_n(k, nc)] = ln[k];
  for (int j = 0; j < 2 * nc; j++) lambda[row_t(j)] = lt[j];
}

// staggered sweeps QP -> QCQP (see the file comment) within a budget of PHYS_CONE_BUDGET solver_iterations
// ADMM iterations, each sub-solve capped at solver_iterations, from lambda (the warm guess, or 0). Inexact
// sweeps: while the fixed point is far, the sub-problems are solved only to max(tol, min(1e-3, fp / 10))
// relative to max(1, ||g||_inf) (fp: the last fixed-point residual), the last sweeps to tol. After each
// sweep the impulses (in lambda) are checked against the Coulomb residual and polished (admm.h): the sweeps
// stop as soon as the residual is <= tol max(1, ||g||_inf) (*res). Returns 1 if that residual is met or the
// fixed point and both last sub-solves converged to tol, 0 if the budget ran out, -1 on a numerical failure
static int sweeps(double* lambda, double* res, physAdmm* an, physAdmm* at, const double* Gnt, const double* gn,
                  const double* gt, const double* mu, const physConstraintProblem* p, physData* d,
                  const physModel* m, double gmax, double* work, int* iters) {
  int nc = p->nc, nl = p->nl, nn = nc + nl, nt = 2 * nc;
  double *qn = work, *qt = qn + nn, *lt = qt + nt, *radius = lt + nt, *ln = radius + nc;
  physAdmmSet setn = {0, NULL, 0, NULL, nn}, sett = {nc, radius, 0, NULL, 0};
  int cap = m->opt.solver_iterations, budget = PHYS_CONE_BUDGET * cap;
  double tol = m->opt.solver_tolerance, eps = tol * gmax, fp = INFINITY;
  for (int k = 0; k < nn; k++) ln[k] = lambda[row_n(k, nc)];
  for (int j = 0; j < nt; j++) lt[j] = lambda[row_t(j)];
  *iters = 0;
  for (int sweep = 0; *iters < budget - 1; sweep++) {
    double tols = fmax(tol, fmin(1e-3, 0.1 * fp / gmax));
    // QP: q_N = g_N + G_NT lambda_T
    mul_add(qn, Gnt, lt, gn, nn, nt);
    if (sweep == 0) phys_admm_warm(an, ln, qn, &setn);
    int okn = phys_admm_solve(an, qn, &setn, imin(cap, budget - 1 - *iters), tols);
    *iters += an->iterations;
    if (an->failed) return -1;
    // QCQP: q_T = g_T + G_NT' lambda_N, radius_i = mu_i lambda_n,i
    if (nc > 0) {
      mul_t_add(qt, Gnt, an->z, gt, nn, nt);
      for (int i = 0; i < nc; i++) radius[i] = mu[i] * an->z[i];
      if (sweep == 0) phys_admm_warm(at, lt, qt, &sett);
      int okt = phys_admm_solve(at, qt, &sett, imin(cap, imax(budget - *iters, 1)), tols);  // >= 1: lambda_T must follow lambda_N
      *iters += at->iterations;
      if (at->failed) return -1;
      okn = okn && okt;
    }
    // fixed point: change of the QP's linear term, fp = ||G_NT (lambda_T+ - lambda_T)||_inf
    fp = 0;
    for (int a = 0; a < nn; a++) {
      double v = 0;
      for (int j = 0; j < nt; j++) v += Gnt[(size_t)a * nt + j] * (at->z[j] - lt[j]);
      fp = fmax(fp, fabs(v));
    }
    memcpy(lt, at->z, sizeof(double) * (size_t)nt);
    gather(lambda, an->z, lt, nc, nl);
    *res = phys_contact_residual(NULL, p->G, p->g, lambda, mu, nc, nl, 0);
    if (*res > eps) phys_admm_polish(lambda, res, d, p->G, p->g, mu, nc, nl, 0, eps);
    if (*res <= eps || (fp <= eps && okn && tols == tol)) return 1;
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
    phys_data_warn(d, PHYS_WARN_SOLVER_FAILED, "cone: constraint problem has non-finite entries; impulses set to zero");
    return PHYS_ERR_NUMERIC;
  }

  size_t mark = phys_stack_mark(d);
  double* Gnn = phys_stack_alloc(d, (size_t)nn * nn);
  double* Gtt = phys_stack_alloc(d, (size_t)nt * nt + 1);
  double* Gnt = phys_stack_alloc(d, (size_t)nn * nt + 1);
  double* vec = phys_stack_alloc(d, 3 * (size_t)nn + 4 * (size_t)nt + 2 * (size_t)nc + 1);
  double *gn = vec, *gt = gn + nn, *mu = gt + nt, *work = mu + nc;
  for (int i = 0; i < nc; i++) mu[i] = fmax(p->mu[i], 0);
  double gmax = 1;  // eps = tol max(1, ||g||_inf)
  for (int i = 0; i < n; i++) gmax = fmax(gmax, fabs(p->g[i]));
  double eps = m->opt.solver_tolerance * gmax, res = INFINITY;
  int result = 0;

  // warm start: last step's impulses, projected onto the cones, polished; kept if within the tolerance
  if (p->lambda0) result = sol->warm_used = phys_admm_warm_check(sol->lambda, &res, d, p->G, p->g, p->lambda0,
                                                                 mu, nc, nl, 0, eps);
  if (!result) {
    split_blocks(Gnn, Gtt, Gnt, gn, gt, p);
    physAdmm an, at;
    int ok = phys_admm_init(&an, d, Gnn, nn) && phys_admm_init(&at, d, Gtt, nt);
    result = ok ? sweeps(sol->lambda, &res, &an, &at, Gnt, gn, gt, mu, p, d, m, gmax, work, &sol->iterations) : -1;
  }
  // the few problems the sweeps cannot finish (a contact between sticking and sliding, nearly redundant
  // contacts): semismooth Newton on Alart and Curnier's map (admm.h)
  if (result == 0) {
    int it;
    result = phys_admm_fallback(sol->lambda, &res, d, p->G, p->g, p->lambda0, mu, nc, nl, 0, eps, &it);
    sol->iterations += it;
  }

  physStatus status = PHYS_OK;
  if (result < 0) {
    sol->residual = INFINITY;
    clear_solution(sol, n);
    phys_data_warn(d, PHYS_WARN_SOLVER_FAILED, "cone: ADMM failed (matrix not factorizable or iterates not finite); impulses set to zero");
    status = PHYS_ERR_NUMERIC;
  } else {
    phys_admm_states(sol->state, sol->lambda, mu, nc, nl);
    sol->residual = res;
    if (!result) {
      phys_data_warn(d, PHYS_WARN_SOLVER, "cone: staggered projections not converged after %d ADMM iterations "
                        "(Coulomb residual %.3g m/s)", sol->iterations, sol->residual);
      status = PHYS_ERR_NUMERIC;
    }
  }
  phys_stack_free(d, mark);
  return status;
}

// ccp.c - Anitescu's convex relaxation of Coulomb friction: one second-order cone program
//
//   min_lambda 1/2 lambda'G lambda + lambda'g   s.t.  ||lambda_t,i|| <= mu_i lambda_n,i,  lambda_limit >= 0,
//
// solved by the regularized ADMM of admm.h over the product of cones (the basis of MuJoCo's and Drake's
// contact models, the "DiffSim" baseline of paper 004). Its KKT conditions are those of a cone
// complementarity problem: with the row velocity w = G lambda + g,
//   K_mu,i  ∋ lambda_i  ⊥  w_i ∈ K_mu,i* = { w : mu_i ||w_t,i|| <= w_n,i }.
// For a sticking contact (lambda inside the cone) w_i = 0, as with exact Coulomb friction. For a sliding
// contact (lambda on the surface, lambda_t = -mu lambda_n w_t/||w_t||) the complementarity forces
// w_n = mu ||w_t||: the relaxation keeps maximal dissipation but makes a sliding contact SEPARATE with
// normal velocity mu ||v_t||, instead of w_n = 0. Over one step the gap opens by dt mu ||v_t||, which is
// O(dt) and vanishes as dt -> 0 at a fixed slip speed. Collision detects ccp pairs within an envelope of
// 2 dt mu (s1 + s2) (collision.c) and the problem carries the gap term dist/dt (contact.h), so a sliding
// body glides at height dt mu ||v_t|| with its contacts kept (measured: a box at 1.015 m/s, mu 0.5, dt 1 ms
// glides at 0.51 mm and decelerates at mu g exactly). A slip that appears at once on a touching contact
// (a velocity set by hand) still launches the body at mu ||v_t||: the relaxation asks for that normal
// velocity in the first step, with a normal impulse of m mu ||v_t|| and its friction; no envelope avoids it. Sticking contacts, frictionless contacts (mu = 0) and the normal-only limit rows
// are not affected.
#include <math.h>
#include <string.h>

#include "admm.h"
#include "contact.h"

// Warm start (p->lambda0, last step's impulses): the guess, projected onto the cones, is checked first and
// polished (admm.h) if it misses the tolerance: in steady contact (resting, sliding at a steady direction)
// the contacts keep their structure and the polished guess is exact, so no ADMM iteration runs. Otherwise
// ADMM starts from the (polished) guess and runs in stages of tightening tolerance, from PHYS_CCP_TOL0
// (relative, as admm.h's tol) down to the option solver_tolerance, each ending with a polishing attempt:
// once ADMM has identified which contacts separate, stick and slide, polishing solves their equations to
// rounding and the solve stops. The tolerance test is the residual of phys_contact_residual (m/s: the
// velocity error of the step) <= solver_tolerance * max(1, ||g||_inf). Problems ADMM cannot finish within
// the cap (a contact between sticking and sliding, where ADMM crawls at 1e-5..1e-7 m/s) go to the semismooth
// Newton fallback of admm.h (phys_admm_fallback), which converges quadratically once near the answer.
#define PHYS_CCP_TOL0 1e-6

// Jacobi scaling of the problem for ADMM: lambda = D lambda~, G~ = D G D, g~ = D g, with D = 1/sqrt of the
// mean diagonal of G over each contact's 3 rows (one factor per contact keeps its cone: ||lambda_t|| <=
// mu lambda_n is invariant under a common scale) and 1/sqrt(G_ii) on limit rows. G~ has a unit diagonal (about),
// so one rho suits light and heavy bodies alike: without it ADMM stalls on a humanoid's spread of masses.
static void scale_problem(double* D, double* Gs, double* gs, const physConstraintProblem* p) {
  int n = p->n, nc = p->nc;
  for (int c = 0; c < nc; c++) {
    const double* G = p->G + (size_t)(3 * c) * n + 3 * c;
    double mean = (G[0] + G[n + 1] + G[2 * (size_t)n + 2]) / 3;
    D[3 * c] = D[3 * c + 1] = D[3 * c + 2] = mean > 0 ? 1 / sqrt(mean) : 1;
  }
  for (int i = 3 * nc; i < n; i++) {
    double gii = p->G[(size_t)i * n + i];
    D[i] = gii > 0 ? 1 / sqrt(gii) : 1;
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) Gs[(size_t)i * n + j] = D[i] * p->G[(size_t)i * n + j] * D[j];
    gs[i] = D[i] * p->g[i];
  }
}

// the outputs' start (impulses 0, all rows separating, no iterations) and the input check: PHYS_ERR_NUMERIC,
// residual inf and a data warning when G, g, mu or the guess has a non-finite entry
static physStatus ccp_start(physData* d, const physConstraintProblem* p, physConstraintSolution* sol) {
  int n = p->n;
  sol->iterations = 0;
  sol->residual = 0;
  sol->warm_used = 0;
  for (int i = 0; i < n; i++) {
    sol->lambda[i] = 0;
    sol->state[i] = PHYS_ROW_SEPARATING;
  }
  if (n == 0) return PHYS_OK;
  if (!phys_admm_finite(p->G, (size_t)n * n) || !phys_admm_finite(p->g, (size_t)n) ||
      !phys_admm_finite(p->mu, (size_t)p->nc) || (p->lambda0 && !phys_admm_finite(p->lambda0, (size_t)n))) {
    sol->residual = INFINITY;
    phys_data_warn(d, PHYS_WARN_SOLVER_FAILED, "ccp: constraint problem has non-finite entries; impulses set to zero");
    return PHYS_ERR_NUMERIC;
  }
  return PHYS_OK;
}

// the whole solve (see contact.h for the contract)
physStatus phys_solve_ccp(const physModel* m, physData* d, const physConstraintProblem* p,
                          physConstraintSolution* sol) {
  int n = p->n, nc = p->nc, nl = p->nl;
  physStatus start = ccp_start(d, p, sol);
  if (start != PHYS_OK || n == 0) return start;

  size_t mark = phys_stack_mark(d);
  double* mu = phys_stack_alloc(d, (size_t)nc + 1);
  for (int i = 0; i < nc; i++) mu[i] = fmax(p->mu[i], 0);
  physAdmm a;
  memset(&a, 0, sizeof(a));
  physAdmmSet set = {0, NULL, nc, mu, nl};
  int ok = 1, converged = 0, cap = m->opt.solver_iterations;
  double tol = m->opt.solver_tolerance, gmax = 1, res = INFINITY;
  for (int i = 0; i < n; i++) gmax = fmax(gmax, fabs(p->g[i]));
  double eps = tol * gmax;
  if (p->lambda0)
    converged = sol->warm_used = phys_admm_warm_check(sol->lambda, &res, d, p->G, p->g, p->lambda0, mu, nc, nl, 1, eps);
  double *D = NULL, *Gs = NULL, *gs = NULL, *zs = NULL;
  if (!converged) {
    // ADMM (one factorization of G + (alpha + rho) I, more when rho adapts) on the scaled problem, from
    // the (polished) guess
    D = phys_stack_alloc(d, 3 * (size_t)n);
    gs = D + n;
    zs = gs + n;
    Gs = phys_stack_alloc(d, (size_t)n * n);
    scale_problem(D, Gs, gs, p);
    ok = phys_admm_init(&a, d, Gs, n);
    for (int i = 0; i < n; i++) zs[i] = sol->lambda[i] / D[i];
    if (ok && p->lambda0) phys_admm_warm(&a, zs, gs, &set);
  }
  // stages: ADMM to tol_s, polish; stop when the residual meets tol (relative to max(1, ||g||_inf)) or
  // ADMM converged at tol itself; tol_s shrinks 100x a stage
  for (double tols = fmax(tol, PHYS_CCP_TOL0); ok && !converged && sol->iterations < cap;
       tols = fmax(tol, 1e-2 * tols)) {
    int conv = phys_admm_solve(&a, gs, &set, cap - sol->iterations, tols);
    sol->iterations += a.iterations;
    if (a.failed) break;
    for (int i = 0; i < n; i++) sol->lambda[i] = D[i] * a.z[i];
    res = phys_contact_residual(NULL, p->G, p->g, sol->lambda, mu, nc, nl, 1);
    if (res > eps) phys_admm_polish(sol->lambda, &res, d, p->G, p->g, mu, nc, nl, 1, eps);
    if (res <= eps || (conv && tols == tol)) {
      converged = 1;
      break;
    }
  }
  // the few problems ADMM cannot finish (a contact between sticking and sliding, nearly redundant
  // contacts): semismooth Newton on the natural map (admm.h)
  if (ok && !converged && !a.failed) {
    int it;
    converged = phys_admm_fallback(sol->lambda, &res, d, p->G, p->g, p->lambda0, mu, nc, nl, 1, eps, &it);
    sol->iterations += it;
  }
  sol->residual = res;

  physStatus status = PHYS_OK;
  if (!ok || (!converged && a.failed)) {
    sol->residual = INFINITY;
    for (int i = 0; i < n; i++) sol->lambda[i] = 0;
    phys_data_warn(d, PHYS_WARN_SOLVER_FAILED, "ccp: ADMM failed (matrix not factorizable or iterates not finite); impulses set to zero");
    status = PHYS_ERR_NUMERIC;
  } else {
    phys_admm_states(sol->state, sol->lambda, mu, nc, nl);
    if (!converged) {
      phys_data_warn(d, PHYS_WARN_SOLVER, "ccp: ADMM not converged after %d iterations (residual %.3g m/s)", sol->iterations,
                        sol->residual);
      status = PHYS_ERR_NUMERIC;
    }
  }
  phys_stack_free(d, mark);
  return status;
}

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
// O(dt) and vanishes as dt -> 0 at a fixed slip speed; but it is per step, so while a contact keeps sliding
// and stays in the contact list (inside the margin) the normal offsets add up to mu times the slip distance,
// independent of dt. With zero margin the contact drops out once the gap opens, the body falls back under
// gravity within O(1) steps, and the result is a hop of amplitude ~dt mu ||v_t|| with slightly less friction
// on average: again O(dt). Sticking contacts, frictionless contacts (mu = 0) and the normal-only limit rows
// are not affected.
#include <math.h>

#include "admm.h"
#include "contact.h"

// the whole solve (see contact.h for the contract)
physStatus phys_solve_ccp(const physModel* m, physData* d, const physConstraintProblem* p,
                          physConstraintSolution* sol) {
  int n = p->n, nc = p->nc, nl = p->nl;
  sol->iterations = 0;
  sol->residual = 0;
  sol->warm_used = 0;
  for (int i = 0; i < n; i++) {
    sol->lambda[i] = 0;
    sol->state[i] = PHYS_ROW_SEPARATING;
  }
  if (n == 0) return PHYS_OK;
  if (!phys_admm_finite(p->G, (size_t)n * n) || !phys_admm_finite(p->g, (size_t)n) ||
      !phys_admm_finite(p->mu, (size_t)nc)) {
    sol->residual = INFINITY;
    phys_data_warning(d, "ccp: constraint problem has non-finite entries; impulses set to zero");
    return PHYS_ERR_NUMERIC;
  }

  size_t mark = phys_stack_mark(d);
  double* mu = phys_stack_alloc(d, (size_t)nc + 1);
  for (int i = 0; i < nc; i++) mu[i] = fmax(p->mu[i], 0);
  physAdmm a;
  physAdmmSet set = {0, NULL, nc, mu, nl};
  int ok = phys_admm_init(&a, d, p->G, n);
  int converged = ok && phys_admm_solve(&a, p->g, &set, m->opt.solver_iterations, m->opt.solver_tolerance);
  sol->iterations = a.iterations;
  sol->residual = a.residual;

  physStatus status = PHYS_OK;
  if (!ok || a.failed) {
    sol->residual = INFINITY;
    phys_data_warning(d, "ccp: ADMM failed (matrix not factorizable or iterates not finite); impulses set to zero");
    status = PHYS_ERR_NUMERIC;
  } else {
    for (int i = 0; i < n; i++) sol->lambda[i] = a.z[i];
    phys_admm_states(sol->state, sol->lambda, mu, nc, nl);
    if (!converged) {
      phys_data_warning(d, "ccp: ADMM not converged after %d iterations (residual %.3g m/s)", a.iterations,
                        a.residual);
      status = PHYS_ERR_NUMERIC;
    }
  }
  phys_stack_free(d, mark);
  return status;
}

// admm.c - regularized ADMM over disks, Coulomb cones and half-lines (paper 000, appendix A); see admm.h.
#include "admm.h"

#include <math.h>
#include <string.h>

#include "chol.h"

//---------------------------------------------------------------------------------------------------------
// projections

// ||b|| <= mu a:  inside -> unchanged;  in the polar cone (mu ||b|| <= -a) -> 0;  else onto the generator
// through b:  a' = (a + mu ||b||) / (1 + mu^2),  b' = mu a' b / ||b||
int phys_admm_project_cone(double* a, double b[2], double mu) {
  double s = sqrt(b[0] * b[0] + b[1] * b[1]);
  if (s <= mu * *a) return 0;
  if (mu * s <= -*a) {
    *a = 0;
    b[0] = b[1] = 0;
    return 1;
  }
  double an = (*a + mu * s) / (1 + mu * mu);  // s > 0 here: s = 0 falls in one of the cases above
  double k = mu * an / s;
  *a = an;
  b[0] *= k;
  b[1] *= k;
  return 1;
}

// ||b|| <= r:  b <- b r / ||b|| when outside
static void project_disk(double b[2], double r) {
  double s = sqrt(b[0] * b[0] + b[1] * b[1]);
  if (s <= r) return;
  double k = s > 0 ? r / s : 0;
  b[0] *= k;
  b[1] *= k;
}

// blocks in order: disks, cones, half-lines
void phys_admm_project(double* z, const physAdmmSet* set) {
  for (int k = 0; k < set->ndisk; k++) project_disk(z + 2 * k, fmax(set->radius[k], 0));
  double* zc = z + 2 * set->ndisk;
  for (int k = 0; k < set->ncone; k++) phys_admm_project_cone(zc + 3 * k, zc + 3 * k + 1, fmax(set->mu[k], 0));
  double* zp = zc + 3 * set->ncone;
  for (int k = 0; k < set->nnonneg; k++) zp[k] = fmax(zp[k], 0);
}

//---------------------------------------------------------------------------------------------------------
// setup

// infinity norm
static double norm_inf(const double* v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(v[i]));
  return s;
}

// lambda_max(P) <= min(max_i sum_j |P_ij| (Gershgorin), trace P) for symmetric PSD P; NaN if P is not finite
static double eig_bound(const double* P, int n) {
  double gersh = 0, trace = 0;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += fabs(P[(size_t)i * n + j]);
    if (!isfinite(s)) return NAN;
    gersh = fmax(gersh, s);
    trace += fmax(P[(size_t)i * n + i], 0);
  }
  return fmin(gersh, trace);
}

// F = chol(P + (alpha + rho) I); 0 on failure
static int refactor(physAdmm* a) {
  int n = a->n;
  memcpy(a->F, a->P, sizeof(double) * (size_t)n * n);
  for (int i = 0; i < n; i++) a->F[(size_t)i * n + i] += a->alpha + a->rho;
  a->nfactor++;
  return phys_chol_factor(a->F, n, 0) == n;
}

// rho0 = sqrt(L alpha) (L/alpha)^0.4,  tau = (L/alpha)^0.1  (paper 000, appendix A)
int phys_admm_init(physAdmm* a, physData* d, const double* P, int n) {
  memset(a, 0, sizeof(*a));
  a->n = n;
  a->P = P;
  a->F = phys_stack_alloc(d, (size_t)n * n);
  a->x = phys_stack_alloc(d, 4 * (size_t)n);
  a->z = a->x + n;
  a->y = a->z + n;
  a->work = a->y + n;
  memset(a->x, 0, sizeof(double) * 4 * (size_t)n);
  double L = eig_bound(P, n);
  if (!isfinite(L)) {
    a->failed = 1;
    return 0;
  }
  a->L = L > 0 ? L : 1;
  a->alpha = PHYS_ADMM_ALPHA * a->L;
  double kappa = a->L / a->alpha;
  a->rho = sqrt(a->L * a->alpha) * pow(kappa, 0.4);
  a->tau = pow(kappa, 0.1);
  a->failed = !refactor(a);
  return !a->failed;
}

//---------------------------------------------------------------------------------------------------------
// iterations

// ||P z + q + y||_inf: the stationarity of the Lagrangian at the feasible point z (y in N_C(z) exactly)
static double kkt_residual(const physAdmm* a, const double* q) {
  int n = a->n;
  double r = 0;
  for (int i = 0; i < n; i++) {
    const double* Pi = a->P + (size_t)i * n;
    double s = q[i] + a->y[i];
    for (int j = 0; j < n; j++) s += Pi[j] * a->z[j];
    r = fmax(r, fabs(s));
  }
  return r;
}

// rho <- rho * t^(+-1) when the normalized primal residual rp / max(|x|, |z|) and dual residual
// rd / max(|q|, |y|) differ by more than PHYS_ADMM_RATIO (paper 000: t = tau = (L/alpha)^0.1); t <- sqrt(t)
// each time the direction reverses, so rho settles instead of oscillating (an oscillating rho restarts
// ADMM's convergence every time). Refactors; returns 0 on factor failure
static int adapt_rho(physAdmm* a, const double* q, double rp, double rd) {
  int n = a->n;
  const double tiny = 1e-300;
  double prim = rp / fmax(fmax(norm_inf(a->x, n), norm_inf(a->z, n)), tiny);
  double dual = rd / fmax(fmax(norm_inf(q, n), norm_inf(a->y, n)), tiny);
  int dir = prim > PHYS_ADMM_RATIO * dual ? 1 : dual > PHYS_ADMM_RATIO * prim ? -1 : 0;
  if (!dir) return 1;
  if (dir == -a->lastdir) a->step = sqrt(a->step);
  a->lastdir = dir;
  double rho = dir > 0 ? a->rho * a->step : a->rho / a->step;
  rho = fmin(fmax(rho, a->alpha), 1e6 * a->L);
  if (rho == a->rho) return 1;
  a->rho = rho;
  return refactor(a);
}

// one iteration (see admm.h); returns the primal residual ||x - z||_inf and the dual residual
// ||alpha (x_k - x) + rho (z_k - z)||_inf, which equals ||P x + q + y||_inf after the update
static void iterate(physAdmm* a, const double* q, const physAdmmSet* set, double* rp, double* rd) {
  int n = a->n;
  double *x = a->x, *z = a->z, *y = a->y, *w = a->work;
  // w = alpha x + rho z - y - q;  x+ = F^-1 w  (w keeps x_k, z_k for the residual)
  for (int i = 0; i < n; i++) w[i] = a->alpha * x[i] + a->rho * z[i] - y[i] - q[i];
  phys_chol_solve(w, a->F, w, n);
  double dmax = 0, pmax = 0;
  for (int i = 0; i < n; i++) {
    double xk = x[i];
    x[i] = w[i];
    w[i] = a->alpha * (xk - x[i]) + a->rho * z[i];  // finished with - rho z+ below
  }
  // z+ = Proj_C(x+ + y/rho);  y+ = y + rho (x+ - z+)
  for (int i = 0; i < n; i++) z[i] = x[i] + y[i] / a->rho;
  phys_admm_project(z, set);
  for (int i = 0; i < n; i++) {
    double r = x[i] - z[i];
    y[i] += a->rho * r;
    pmax = fmax(pmax, fabs(r));
    dmax = fmax(dmax, fabs(w[i] - a->rho * z[i]));
  }
  *rp = pmax;
  *rd = dmax;
}

// iterate to tolerance (see admm.h)
int phys_admm_solve(physAdmm* a, const double* q, const physAdmmSet* set, int maxiter, double tol) {
  a->iterations = 0;
  a->step = a->tau;
  a->lastdir = 0;
  if (a->failed) {
    a->residual = INFINITY;
    return 0;
  }
  int n = a->n, converged = 0;
  double eps = tol * fmax(1, norm_inf(q, n));
  for (int k = 0; k < maxiter; k++) {
    double rp, rd;
    iterate(a, q, set, &rp, &rd);
    a->iterations++;
    if (!isfinite(rp) || !isfinite(rd)) {
      a->failed = 1;
      break;
    }
    if (a->L * rp <= eps && rd <= eps) {
      converged = 1;
      break;
    }
    if (!adapt_rho(a, q, rp, rd)) {
      a->failed = 1;
      break;
    }
  }
  a->residual = a->failed ? INFINITY : kkt_residual(a, q);
  return converged && !a->failed;
}

//---------------------------------------------------------------------------------------------------------
// helpers of the cone and ccp solvers

// 1 if all n numbers are finite
int phys_admm_finite(const double* v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

// classify rows by where the impulse lies in its set (see admm.h)
void phys_admm_states(int* state, const double* lambda, const double* mu, int nc, int nl) {
  for (int i = 0; i < nc; i++) {
    const double* l = lambda + 3 * i;
    int* s = state + 3 * i;
    if (!(l[0] > 0)) {
      s[0] = s[1] = s[2] = PHYS_ROW_SEPARATING;
      continue;
    }
    double t = sqrt(l[1] * l[1] + l[2] * l[2]);
    s[0] = PHYS_ROW_CLAMPING;
    s[1] = s[2] = t >= fmax(mu[i], 0) * l[0] * (1 - 1e-9) ? PHYS_ROW_UPPER : PHYS_ROW_CLAMPING;
  }
  for (int k = 0; k < nl; k++) state[3 * nc + k] = lambda[3 * nc + k] > 0 ? PHYS_ROW_CLAMPING : PHYS_ROW_SEPARATING;
}

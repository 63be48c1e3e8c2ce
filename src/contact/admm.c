// admm.c - regularized ADMM over disks, Coulomb cones and half-lines (paper 000, appendix A); see admm.h.
#include "admm.h"

#include <math.h>
#include <string.h>

#include "chol.h"

//---------------------------------------------------------------------------------------------------------
// projections

// ||b|| <= mu a, a >= 0:  inside -> unchanged;  in the polar cone (mu ||b|| <= -a) -> 0;  else onto the
// generator through b:  a' = (a + mu ||b||) / (1 + mu^2),  b' = mu a' b / ||b||. The test a >= 0 matters at
// mu = 0 only (the cone is the ray b = 0, a >= 0): there ||b|| <= mu a also holds for b = 0 with a < 0 (0 <= -0),
// and a pulling normal impulse stayed (ccp with a margin: a ball leaving the floor within the margin was pulled
// back, issue 10 item 16)
int phys_admm_project_cone(double* a, double b[2], double mu) {
  double s = sqrt(b[0] * b[0] + b[1] * b[1]);
  if (s <= mu * *a && *a >= 0) return 0;
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

// warm start (see admm.h): z = x = Proj_C(z0), y = -(P z + q)
void phys_admm_warm(physAdmm* a, const double* z0, const double* q, const physAdmmSet* set) {
  int n = a->n;
  memcpy(a->z, z0, sizeof(double) * (size_t)n);
  phys_admm_project(a->z, set);
  memcpy(a->x, a->z, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) {
    const double* Pi = a->P + (size_t)i * n;
    double s = q[i];
    for (int j = 0; j < n; j++) s += Pi[j] * a->z[j];
    a->y[i] = -s;
  }
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

// when the normalized primal residual rp / max(|x|, |z|) and dual residual rd / max(|q|, |y|) differ by
// more than PHYS_ADMM_RATIO: rho <- rho sqrt(prim / dual) (OSQP's rule, Stellato et al. 2020: one change
// balances the two residuals), the factor limited to [1/tau, tau] (paper 000's tau = (L/alpha)^0.1).
// Measured on the humanoid's contact problems: fewer stalled solves than paper 000's fixed factor, whose
// square-rooting at each reversal froze rho at whatever value it had reached. Refactors; 0 on failure
static int adapt_rho(physAdmm* a, const double* q, double rp, double rd) {
  int n = a->n;
  const double tiny = 1e-300;
  double prim = rp / fmax(fmax(norm_inf(a->x, n), norm_inf(a->z, n)), tiny);
  double dual = rd / fmax(fmax(norm_inf(q, n), norm_inf(a->y, n)), tiny);
  int dir = prim > PHYS_ADMM_RATIO * dual ? 1 : dual > PHYS_ADMM_RATIO * prim ? -1 : 0;
  if (!dir) return 1;
  a->lastdir = dir;
  double f = fmin(sqrt(fmax(prim, tiny) / fmax(dual, tiny)), a->tau);
  double rho = a->rho * fmax(f, 1 / a->tau);
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

// 1 if all n numbers are finite: v * 0 is 0 for a finite v and NaN for an infinite or NaN one, so the sum
// of the products is 0 or NaN (one multiply-add per number, no branch; four sums for the pipeline)
int phys_admm_finite(const double* v, size_t n) {
  double s[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s[0] += v[i] * 0;
    s[1] += v[i + 1] * 0;
    s[2] += v[i + 2] * 0;
    s[3] += v[i + 3] * 0;
  }
  for (; i < n; i++) s[0] += v[i] * 0;
  return s[0] + s[1] + s[2] + s[3] == 0;
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

// w = G lambda + g  (n x n)
static void row_velocity(double* w, const double* G, const double* g, const double* lambda, int n) {
  for (int i = 0; i < n; i++) {
    const double* Gi = G + (size_t)i * n;
    double s = g[i];
    for (int j = 0; j < n; j++) s += Gi[j] * lambda[j];
    w[i] = s;
  }
}

// 1 if contact impulse l (normal, t1, t2) lies strictly inside its cone (sticking, as phys_admm_states)
static int sticking(const double l[3], double mu) {
  return l[0] > 0 && sqrt(l[1] * l[1] + l[2] * l[2]) < fmax(mu, 0) * l[0] * (1 - 1e-9);
}

// residual of one contact (see phys_contact_residual)
static double contact_residual(const double l[3], const double w[3], double mu, int ccp) {
  mu = fmax(mu, 0);
  double wt = sqrt(w[1] * w[1] + w[2] * w[2]);
  if (!(l[0] > 0)) return ccp ? fmax(0, mu * wt - w[0]) : fmax(0, -w[0]);
  double s = sqrt(l[1] * l[1] + l[2] * l[2]);
  if (!(mu * l[0] > 0)) return fabs(w[0]);
  if (sticking(l, mu)) return fmax(fabs(w[0]), fmax(fabs(w[1]), fabs(w[2])));
  double u[2] = {l[1] / s, l[2] / s}, wu = w[1] * u[0] + w[2] * u[1];
  double r = fmax(fabs(w[1] - wu * u[0]), fabs(w[2] - wu * u[1]));
  r = fmax(r, fmax(0, wu));
  return fmax(r, ccp ? fabs(w[0] + mu * wu) : fabs(w[0]));
}

// Coulomb (ccp = 0) or relaxed (ccp = 1) residual of impulses lambda (see admm.h)
double phys_contact_residual(double* w, const double* G, const double* g, const double* lambda, const double* mu,
                             int nc, int nl, int ccp) {
  int n = 3 * nc + nl;
  double wloc[3], r = 0;
  for (int c = 0; c < nc; c++) {
    for (int k = 0; k < 3; k++) {
      const double* Gi = G + (size_t)(3 * c + k) * n;
      double s = g[3 * c + k];
      for (int j = 0; j < n; j++) s += Gi[j] * lambda[j];
      wloc[k] = s;
      if (w) w[3 * c + k] = s;
    }
    r = fmax(r, contact_residual(lambda + 3 * c, wloc, mu[c], ccp));
  }
  for (int i = 3 * nc; i < n; i++) {
    const double* Gi = G + (size_t)i * n;
    double s = g[i];
    for (int j = 0; j < n; j++) s += Gi[j] * lambda[j];
    if (w) w[i] = s;
    r = fmax(r, lambda[i] > 0 ? fabs(s) : fmax(0, -s));
  }
  return r;
}

//---------------------------------------------------------------------------------------------------------
// polishing

// one unknown of the polished system: lambda[row + r] += delta * v[r] (r < len); its equation e . w = 0
typedef struct polishVar_ {
  int row, len;
  double v[3], e[3];
} polishVar;

// the unknowns of the active structure of lambda (see admm.h); returns their number (<= n). A row at zero
// whose velocity w violates its condition (a contact's w_n < 0, a limit's w < 0: a new contact or limit, or
// a guess that missed it) joins the active set too, a contact as sticking: the guess of an active set from
// the dual side, kept only if the polished impulses come out feasible
static int polish_vars(polishVar* var, const double* lambda, const double* w, const double* mu, int nc, int nl,
                       int ccp) {
  int k = 0;
  for (int c = 0; c < nc; c++) {
    const double* l = lambda + 3 * c;
    if (!(l[0] > 0) && w[3 * c] < 0) {
      for (int r = 0; r < 3; r++) {
        polishVar* p = var + k++;
        *p = (polishVar){3 * c, 3, {0, 0, 0}, {0, 0, 0}};
        p->v[r] = p->e[r] = 1;
      }
      continue;
    }
    if (!(l[0] > 0)) continue;
    double m = fmax(mu[c], 0), s = sqrt(l[1] * l[1] + l[2] * l[2]);
    if (sticking(l, m)) {
      for (int r = 0; r < 3; r++) {
        polishVar* p = var + k++;
        *p = (polishVar){3 * c, 3, {0, 0, 0}, {0, 0, 0}};
        p->v[r] = p->e[r] = 1;
      }
      continue;
    }
    // sliding (or frictionless): direction (1, mu u), equation e_n (cone) or (1, mu u) (ccp)
    polishVar* p = var + k++;
    double u[2] = {s > 0 ? l[1] / s : 0, s > 0 ? l[2] / s : 0};
    if (!(m * l[0] > 0)) u[0] = u[1] = 0;
    *p = (polishVar){3 * c, 3, {1, m * u[0], m * u[1]}, {1, 0, 0}};
    if (ccp) memcpy(p->e, p->v, sizeof(p->e));
  }
  for (int i = 3 * nc; i < 3 * nc + nl; i++)
    if (lambda[i] > 0 || w[i] < 0) var[k++] = (polishVar){i, 1, {1, 0, 0}, {1, 0, 0}};
  return k;
}

// 1 if lambda satisfies the structure it was polished with: active normals and limits > 0 (>= 0 for
// limits), sticking contacts inside their cone
static int polish_feasible(const double* lambda, const double* mu, const polishVar* var, int k) {
  for (int j = 0; j < k; j++) {
    const double* l = lambda + var[j].row;
    if (var[j].len == 1) {
      if (!(l[0] >= 0)) return 0;
    } else if (!(l[0] > 0) || sqrt(l[1] * l[1] + l[2] * l[2]) > fmax(mu[var[j].row / 3], 0) * l[0] * (1 + 1e-12)) {
      return 0;
    }
  }
  return 1;
}

// delta (k) = argmin ||delta|| s.t. A delta = b (A: k x k, singular when contacts outnumber the dofs they
// constrain). Symmetric A (PSD: V'GV): (A + eps I) delta = b with iterative refinement
// delta += (A + eps I)^-1 (b - A delta), whose iterates stay in range(A); otherwise through the normal
// equations delta = A' t, (A A' + eps I) t = b, refined alike (one refinement: the error shrinks by
// eps / (sigma + eps) a pass). eps = 1e-12 of the largest diagonal.
// Scratch N (k x k), t, res (k each). Returns 0 if the regularized matrix cannot be factored
static int minnorm_solve(double* delta, const double* A, const double* b, int k, int sym, double* N, double* t,
                         double* res) {
  double scale = 0;
  if (sym) {
    memcpy(N, A, sizeof(double) * (size_t)k * k);
  } else {
    for (int i = 0; i < k; i++) {
      for (int j = 0; j <= i; j++) {
        double s = 0;
        for (int r = 0; r < k; r++) s += A[(size_t)i * k + r] * A[(size_t)j * k + r];
        N[(size_t)i * k + j] = N[(size_t)j * k + i] = s;
      }
    }
  }
  for (int i = 0; i < k; i++) scale = fmax(scale, N[(size_t)i * k + i]);
  if (!(scale > 0) || !isfinite(scale)) return 0;
  for (int i = 0; i < k; i++) N[(size_t)i * k + i] += 1e-12 * scale;
  if (phys_chol_factor(N, k, 0) != k) return 0;
  memset(delta, 0, sizeof(double) * (size_t)k);
  memcpy(res, b, sizeof(double) * (size_t)k);
  for (int it = 0; it < 2; it++) {
    phys_chol_solve(t, N, res, k);
    if (sym) {
      for (int j = 0; j < k; j++) delta[j] += t[j];
    } else {
      for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++) delta[j] += A[(size_t)i * k + j] * t[i];
    }
    for (int i = 0; i < k; i++) {
      double s = b[i];
      for (int j = 0; j < k; j++) s -= A[(size_t)i * k + j] * delta[j];
      res[i] = s;
    }
  }
  return 1;
}

// one polishing solve from lambda (structure from lambda itself), into out; w = G lambda + g on entry.
// Returns 0 if there is nothing to solve or the system cannot be factored
static int polish_once(double* out, physData* d, const double* G, const double* w, const double* lambda,
                       const double* mu, int nc, int nl, int ccp) {
  int n = 3 * nc + nl;
  size_t mark = phys_stack_mark(d);
  polishVar* var = (polishVar*)phys_stack_alloc(d, (sizeof(polishVar) * (size_t)n + 7) / 8 + 1);
  int k = polish_vars(var, lambda, w, mu, nc, nl, ccp), ok = 0;
  if (k > 0) {
    double* col = phys_stack_alloc(d, (size_t)k * n);      // G v_j
    double* A = phys_stack_alloc(d, (size_t)k * k);
    double* N = phys_stack_alloc(d, (size_t)k * k);
    double* vec = phys_stack_alloc(d, 4 * (size_t)k);
    double *b = vec, *delta = b + k, *t = delta + k, *res = t + k;
    for (int j = 0; j < k; j++) {
      const polishVar* p = var + j;
      double* cj = col + (size_t)j * n;
      for (int i = 0; i < n; i++) {
        const double* Gi = G + (size_t)i * n + p->row;
        double s = 0;
        for (int r = 0; r < p->len; r++) s += Gi[r] * p->v[r];
        cj[i] = s;
      }
    }
    // A_ij = e_i . (G v_j) on the rows of unknown i;  b_i = -e_i . w
    for (int i = 0; i < k; i++) {
      const polishVar* p = var + i;
      double s = 0;
      for (int r = 0; r < p->len; r++) s += p->e[r] * w[p->row + r];
      b[i] = -s;
      for (int j = 0; j < k; j++) {
        const double* cj = col + (size_t)j * n + p->row;
        double a = 0;
        for (int r = 0; r < p->len; r++) a += p->e[r] * cj[r];
        A[(size_t)i * k + j] = a;
      }
    }
    int sym = 1;   // equations along the unknowns' directions (all but cone's sliding contacts)
    for (int j = 0; j < k && sym; j++) sym = !memcmp(var[j].v, var[j].e, sizeof(var[j].v));
    ok = minnorm_solve(delta, A, b, k, sym, N, t, res);
    if (ok) {
      memcpy(out, lambda, sizeof(double) * (size_t)n);
      for (int j = 0; j < k; j++)
        for (int r = 0; r < var[j].len; r++) out[var[j].row + r] += delta[j] * var[j].v[r];
      ok = phys_admm_finite(out, (size_t)n) && polish_feasible(out, mu, var, k);
    }
  }
  phys_stack_free(d, mark);
  return ok;
}

// lambda_t = mu lambda_n u with u = -w_t / ||w_t|| on the sliding contacts of lambda (maximal dissipation:
// friction opposes the slip); returns 1 if any moved by more than rounding (1e-14 of its impulse)
static int align_sliding(double* lambda, const double* w, const double* mu, int nc) {
  int moved = 0;
  for (int c = 0; c < nc; c++) {
    double* l = lambda + 3 * c;
    const double* wc = w + 3 * c;
    double m = fmax(mu[c], 0), wt = sqrt(wc[1] * wc[1] + wc[2] * wc[2]);
    if (!(l[0] > 0) || !(m > 0) || sticking(l, m) || !(wt > 0)) continue;
    double t1 = -m * l[0] * wc[1] / wt, t2 = -m * l[0] * wc[2] / wt;
    if (fabs(t1 - l[1]) + fabs(t2 - l[2]) > 1e-14 * m * l[0]) moved = 1;
    l[1] = t1;
    l[2] = t2;
  }
  return moved;
}

// polish (see admm.h) with w = G lambda + g given (n, overwritten): up to 3 solves, each after aligning
// the sliding directions with -w_t (the slip direction is a nonlinear part of the structure: a loose solve
// leaves it off by its tolerance); the best result is kept; stops once the residual is <= target
static int polish_w(double* lambda, double* residual, double* w, physData* d, const double* G, const double* g,
                    const double* mu, int nc, int nl, int ccp, double target) {
  int n = 3 * nc + nl, improved = 0;
  if (n == 0) return 0;
  size_t mark = phys_stack_mark(d);
  double* cur = phys_stack_alloc(d, 2 * (size_t)n);
  double *out = cur + n, last = INFINITY;
  memcpy(cur, lambda, sizeof(double) * (size_t)n);
  for (int round = 0; round < 3; round++) {
    int moved = align_sliding(cur, w, mu, nc);
    if (round > 0 && !moved) break;   // no sliding contact turned: the same system again
    if (moved) row_velocity(w, G, g, cur, n);
    if (!polish_once(out, d, G, w, cur, mu, nc, nl, ccp)) break;
    double r = phys_contact_residual(w, G, g, out, mu, nc, nl, ccp);   // w of out, for the next round
    if (r < *residual) {
      *residual = r;
      memcpy(lambda, out, sizeof(double) * (size_t)n);
      improved = 1;
    }
    if (*residual <= target || !(r < 0.5 * last)) break;   // done, or no longer converging
    last = r;
    memcpy(cur, out, sizeof(double) * (size_t)n);
  }
  phys_stack_free(d, mark);
  return improved;
}

// polish (see admm.h)
int phys_admm_polish(double* lambda, double* residual, physData* d, const double* G, const double* g,
                     const double* mu, int nc, int nl, int ccp, double target) {
  int n = 3 * nc + nl;
  if (n == 0) return 0;
  size_t mark = phys_stack_mark(d);
  double* w = phys_stack_alloc(d, (size_t)n);
  row_velocity(w, G, g, lambda, n);
  int improved = polish_w(lambda, residual, w, d, G, g, mu, nc, nl, ccp, target);
  phys_stack_free(d, mark);
  return improved;
}

// warm start check (see admm.h)
int phys_admm_warm_check(double* lambda, double* residual, physData* d, const double* G, const double* g,
                         const double* lambda0, const double* mu, int nc, int nl, int ccp, double eps) {
  int n = 3 * nc + nl;
  physAdmmSet cones = {0, NULL, nc, mu, nl};
  size_t mark = phys_stack_mark(d);
  double* w = phys_stack_alloc(d, (size_t)n + 1);
  memcpy(lambda, lambda0, sizeof(double) * (size_t)n);
  phys_admm_project(lambda, &cones);
  *residual = phys_contact_residual(w, G, g, lambda, mu, nc, nl, ccp);
  if (*residual > 1e-3 * eps) polish_w(lambda, residual, w, d, G, g, mu, nc, nl, ccp, 1e-3 * eps);
  phys_stack_free(d, mark);
  return *residual <= eps;
}

//---------------------------------------------------------------------------------------------------------
// semismooth Newton on the natural map

// projection p of v = (a, b) onto the cone ||b|| <= mu a and its Jacobian P (3 x 3, row-major): identity
// inside, 0 in the polar cone, else with s = ||b||, u = b / s, c = 1 / (1 + mu^2), k = (a + mu s) c:
//   p = k (1, mu u),  dp/da = c (1, mu u),  dp_n/db = mu c u',  dp_t/db = mu^2 c u u' + mu k (I - u u') / s
// (mu = 0: the ray b = 0, a >= 0, never inside: p = (max(a, 0), 0, 0) and P = diag(a > 0, 0, 0), also at b = 0)
static void cone_proj_jac(double p[3], double P[9], const double v[3], double mu) {
  double a = v[0], s = sqrt(v[1] * v[1] + v[2] * v[2]);
  memset(P, 0, 9 * sizeof(double));
  if (s <= mu * a && mu > 0) {
    memcpy(p, v, 3 * sizeof(double));
    P[0] = P[4] = P[8] = 1;
    return;
  }
  if (mu * s <= -a) {
    p[0] = p[1] = p[2] = 0;
    return;
  }
  double u[2] = {s > 0 ? v[1] / s : 0, s > 0 ? v[2] / s : 0}, c = 1 / (1 + mu * mu), k = (a + mu * s) * c;
  p[0] = k;
  p[1] = mu * k * u[0];
  p[2] = mu * k * u[1];
  P[0] = c;
  for (int r = 0; r < 2; r++) {
    P[1 + r] = P[3 * (1 + r)] = mu * c * u[r];
    for (int q = 0; q < 2; q++)
      P[3 * (1 + r) + 1 + q] = mu * mu * c * u[r] * u[q] + (mu > 0 ? mu * k * ((r == q) - u[r] * u[q]) / s : 0);
  }
}

// Alart and Curnier's map of one Coulomb contact at v = lambda - rho w: p_n = max(0, v_n), p_t = the
// projection of v_t onto the disk of radius mu p_n; p lies in the cone. Jacobian P = dp/dv (3 x 3): with
// s = ||v_t||, u = v_t / s, sliding (s > mu p_n): dp_t = mu u dp_n + (mu p_n / s) (I - u u') dv_t
static void alart_curnier(double p[3], double P[9], const double v[3], double mu) {
  double s = sqrt(v[1] * v[1] + v[2] * v[2]), pn = fmax(v[0], 0), R = mu * pn, dn = v[0] > 0;
  memset(P, 0, 9 * sizeof(double));
  p[0] = pn;
  P[0] = dn;
  if (s <= R && R > 0) {
    p[1] = v[1];
    p[2] = v[2];
    P[4] = P[8] = 1;
    return;
  }
  p[1] = p[2] = 0;
  if (s == 0) return;   // a disk of radius 0 (mu = 0 or p_n = 0): p_t = 0 for every v_t
  double u[2] = {v[1] / s, v[2] / s};
  for (int r = 0; r < 2; r++) {
    p[1 + r] = R * u[r];
    P[3 * (1 + r)] = mu * dn * u[r];
    for (int q = 0; q < 2; q++) P[3 * (1 + r) + 1 + q] = R * ((r == q) - u[r] * u[q]) / s;
  }
}

// workspace of the Newton solve (n rows)
typedef struct newtonWork_ {
  double *rho, *w, *p, *F, *P;   // n, n, n, n, 9 nc (+ nl: a limit's projection slope)
} newtonWork;

// F(lambda) = lambda - p(lambda - rho w), w = G lambda + g, with p the projection onto the cone K (ccp = 1:
// the natural map of Anitescu's cone complementarity K ∋ lambda ⊥ w ∈ K*) or Alart and Curnier's map
// (ccp = 0: Coulomb's law with maximal dissipation), max(0, .) on limit rows; fills w, p, F and the
// Jacobians P = dp/dv. Returns ||F||^2
static double natural_map(newtonWork* nw, const double* G, const double* g, const double* lambda,
                          const double* mu, int nc, int nl, int ccp) {
  int n = 3 * nc + nl;
  double theta = 0;
  row_velocity(nw->w, G, g, lambda, n);
  for (int c = 0; c < nc; c++) {
    const double *l = lambda + 3 * c, *w = nw->w + 3 * c;
    double m = fmax(mu[c], 0), r = nw->rho[3 * c];
    double v[3] = {l[0] - r * w[0], l[1] - r * w[1], l[2] - r * w[2]};
    if (ccp) cone_proj_jac(nw->p + 3 * c, nw->P + 9 * c, v, m);
    else alart_curnier(nw->p + 3 * c, nw->P + 9 * c, v, m);
  }
  for (int i = 3 * nc; i < n; i++) {
    double v = lambda[i] - nw->rho[i] * nw->w[i];
    nw->p[i] = fmax(v, 0);
    nw->P[9 * nc + (i - 3 * nc)] = v > 0;
  }
  for (int i = 0; i < n; i++) {
    nw->F[i] = lambda[i] - nw->p[i];
    theta += nw->F[i] * nw->F[i];
  }
  return theta;
}

// A = dF/dlambda = I - P + P rho G (n x n)
static void natural_jacobian(double* A, const newtonWork* nw, const double* G, int nc, int nl) {
  int n = 3 * nc + nl;
  for (int c = 0; c < nc; c++) {
    const double* P = nw->P + 9 * c;
    double r = nw->rho[3 * c];
    const double *G0 = G + (size_t)(3 * c) * n, *G1 = G0 + n, *G2 = G1 + n;
    for (int a = 0; a < 3; a++) {
      double* Ar = A + (size_t)(3 * c + a) * n;
      double p0 = r * P[3 * a], p1 = r * P[3 * a + 1], p2 = r * P[3 * a + 2];
      for (int j = 0; j < n; j++) Ar[j] = p0 * G0[j] + p1 * G1[j] + p2 * G2[j];
      for (int b = 0; b < 3; b++) Ar[3 * c + b] += (a == b) - P[3 * a + b];
    }
  }
  for (int i = 3 * nc; i < n; i++) {
    double s = nw->P[9 * nc + (i - 3 * nc)], r = nw->rho[i];
    double* Ar = A + (size_t)i * n;
    const double* Gi = G + (size_t)i * n;
    for (int j = 0; j < n; j++) Ar[j] = s * r * Gi[j];
    Ar[i] += 1 - s;
  }
}

// Armijo backtracking on theta = ||F||^2 from x along dx: xt = x + step dx for step = 1, 1/2, ... (at most
// maxhalve halvings) until theta(xt) <= (1 - 1e-4 step) theta; returns theta(xt), nw evaluated at xt
static double backtrack(double* step, newtonWork* nw, double* xt, const double* x, const double* dx, double theta,
                        const double* G, const double* g, const double* mu, int nc, int nl, int ccp, int maxhalve) {
  int n = 3 * nc + nl;
  double th = INFINITY;
  *step = 1;
  for (int ls = 0; ls <= maxhalve; ls++, *step *= 0.5) {
    for (int i = 0; i < n; i++) xt[i] = x[i] + *step * dx[i];
    th = natural_map(nw, G, g, xt, mu, nc, nl, ccp);
    if (th <= (1 - 1e-4 * *step) * theta) break;
  }
  return th;
}

// Newton solve (see admm.h)
int phys_contact_newton(double* lambda, double* residual, physData* d, const double* G, const double* g,
                        const double* mu, int nc, int nl, int ccp, int maxiter, double eps, int* iterations) {
  int n = 3 * nc + nl, improved = 0;
  *iterations = 0;
  if (n == 0) return 0;
  size_t mark = phys_stack_mark(d);
  newtonWork nw;
  nw.rho = phys_stack_alloc(d, 9 * (size_t)n + 9 * (size_t)nc + (size_t)nl);
  nw.w = nw.rho + n;
  nw.p = nw.w + n;
  nw.F = nw.p + n;
  nw.P = nw.F + n;
  double *x = nw.P + 9 * (size_t)nc + nl, *dx = x + n, *xt = dx + n, *b = xt + n, *t = b + n;
  double* res = phys_stack_alloc(d, (size_t)n);
  double* A = phys_stack_alloc(d, (size_t)n * n);
  double* N = phys_stack_alloc(d, (size_t)n * n);
  // rho: 1 / (mean diagonal of the contact's block) (1 / G_ii on limit rows): the natural map in the units
  // of the impulse, with unit steps along a block's own Delassus response
  for (int c = 0; c < nc; c++) {
    const double* Gc = G + (size_t)(3 * c) * n + 3 * c;
    double mean = (Gc[0] + Gc[n + 1] + Gc[2 * (size_t)n + 2]) / 3;
    nw.rho[3 * c] = nw.rho[3 * c + 1] = nw.rho[3 * c + 2] = mean > 0 ? 1 / mean : 1;
  }
  for (int i = 3 * nc; i < n; i++) nw.rho[i] = G[(size_t)i * n + i] > 0 ? 1 / G[(size_t)i * n + i] : 1;
  memcpy(x, lambda, sizeof(double) * (size_t)n);
  double theta = natural_map(&nw, G, g, x, mu, nc, nl, ccp);
  for (int it = 0; it < maxiter && *residual > eps; it++) {
    // Newton direction: A dx = -F, of minimal norm (A is singular on redundant contacts)
    natural_jacobian(A, &nw, G, nc, nl);
    for (int i = 0; i < n; i++) b[i] = -nw.F[i];
    if (!minnorm_solve(dx, A, b, n, 0, N, t, res)) break;
    double step, th = backtrack(&step, &nw, xt, x, dx, theta, G, g, mu, nc, nl, ccp, 30);
    ++*iterations;
    if (!(th < theta)) break;
    memcpy(x, xt, sizeof(double) * (size_t)n);
    theta = th;
    // the candidate Proj_K(.) lies in the cones: keep it if its residual improves
    double r = phys_contact_residual(NULL, G, g, nw.p, mu, nc, nl, ccp);
    if (r < *residual) {
      *residual = r;
      memcpy(lambda, nw.p, sizeof(double) * (size_t)n);
      improved = 1;
    }
  }
  phys_stack_free(d, mark);
  return improved;
}

// fallback of the cone and ccp solvers (see admm.h): Newton from lambda, then from the projected guess
int phys_admm_fallback(double* lambda, double* residual, physData* d, const double* G, const double* g,
                       const double* lambda0, const double* mu, int nc, int nl, int ccp, double eps,
                       int* iterations) {
  int n = 3 * nc + nl, it = 0;
  phys_contact_newton(lambda, residual, d, G, g, mu, nc, nl, ccp, PHYS_NEWTON_ITER, eps, &it);
  *iterations = it;
  if (*residual > eps && lambda0) {
    size_t mark = phys_stack_mark(d);
    double* guess = phys_stack_alloc(d, (size_t)n);
    physAdmmSet cones = {0, NULL, nc, mu, nl};
    memcpy(guess, lambda0, sizeof(double) * (size_t)n);
    phys_admm_project(guess, &cones);
    double r = phys_contact_residual(NULL, G, g, guess, mu, nc, nl, ccp);
    phys_contact_newton(guess, &r, d, G, g, mu, nc, nl, ccp, PHYS_NEWTON_ITER, eps, &it);
    *iterations += it;
    if (r < *residual) {
      *residual = r;
      memcpy(lambda, guess, sizeof(double) * (size_t)n);
    }
    phys_stack_free(d, mark);
  }
  return *residual <= eps;
}

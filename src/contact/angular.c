// angular.c - torsional and rolling friction (MuJoCo's condim 4 and 6, issue 16) as constraint rows of the
// constrained contact models lcp, cone and ccp (contact.h).
//
// A contact c with torsional friction mu_s > 0 (m; phys_contact_friction_ang) owns one row, with rolling
// friction mu_r > 0 two: the contact frame times the relative rotation Jacobian,
//   A = frame (J_rot(body of geom[1]) - J_rot(body of geom[0]))     (3 x nv: about n, t1, t2),
// its row velocities the relative angular velocity about the normal (torsion) and the tangents (rolling). Their
// impulses (N m s) are bounded by the contact's normal impulse lambda_n (N s):
//   lcp:        |lambda_s| <= mu_s lambda_n,  |lambda_r,k| <= mu_r lambda_n  (k = 1, 2: a square, as lcp's
//               4-sided friction pyramid bounds each tangent separately)
//   cone, ccp:  |lambda_s| <= mu_s lambda_n,  ||(lambda_r,1, lambda_r,2)|| <= mu_r lambda_n   (a disk)
// each group separately from the sliding friction (not MuJoCo's joint elliptic cone over all condim - 1
// dimensions; penalty bounds the three the same way). They join the joint frictionloss rows' block
// (frictionloss.c: E gets the rows A, W E = M~^-1 E) with bounds refreshed from the contact problem's
// lambda_n each sweep of the step's block Gauss-Seidel (step.c frictionloss_coupled): at its fixed point the
// contact rows hold their conditions with the angular impulses and the angular rows maximal dissipation
//   min 1/2 x'G x + g'x  over the box / disks above, g = A (v_f + M~^-1 J' lambda_c)
// with the normal impulses they see. The angular block's G is only semidefinite (the four corners of a box
// on a face share one torsion row), so the block is solved by accelerated projected gradient (FISTA with
// adaptive restart, Beck and Teboulle 2009; O'Donoghue and Candes 2015) from the last sweep's impulses, to a
// gradient-mapping residual of 1e-13 of the row velocities' scale.
#include <math.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "dyn.h"

// the at most 3 angular rows (A row indices 0 torsion, 1, 2 rolling) contact c has, their coefficients into mu
static int contact_rows(const physModel* m, const physContact* c, int axis[3], double mu[3]) {
  double ang[2];
  phys_contact_friction_ang(m, c, ang);
  int n = 0;
  if (ang[0] > 0) axis[n] = 0, mu[n++] = ang[0];
  for (int k = 1; k <= 2; k++)
    if (ang[1] > 0) axis[n] = k, mu[n++] = ang[1];
  return n;
}

int phys_angular_count(const physModel* m, const physContact* con, int nc) {
  int n = 0, axis[3];
  double mu[3];
  for (int i = 0; i < nc; i++) n += contact_rows(m, con + i, axis, mu);
  return n;
}

int phys_angular_axes(const physModel* m, const physContact* con, int nc, int* axis) {
  int n = 0, tmp[3];
  double mu[3];
  for (int i = 0; i < nc; i++) n += contact_rows(m, con + i, axis ? axis + n : tmp, mu);
  return n;
}

void phys_contact_angular_jac(const physModel* m, physData* d, const physContact* c, double* A) {
  int nv = m->nv;
  memset(A, 0, 3 * sizeof(double) * (size_t)nv);
  // J_rot(b1) - J_rot(b0) is cdof_j's rotation on the dofs of one chain only (+ on b1's, - on b0's) and 0 on
  // their common ancestors: the two chains walked down together (a parent's index is below its child's)
  int i = phys_body_lastdof(m, m->geom_bodyid[c->geom[1]]), k = phys_body_lastdof(m, m->geom_bodyid[c->geom[0]]);
  while (i != k) {
    int j = i > k ? i : k;
    double s = i > k ? 1 : -1;
    const double* cd = d->cdof + 6 * j;
    double jr[3] = {s * cd[0], s * cd[1], s * cd[2]};
    for (int r = 0; r < 3; r++) {   // A = frame Jrel_rot
      const double* f = c->frame + 3 * r;
      A[r * nv + j] = f[0] * jr[0] + f[1] * jr[1] + f[2] * jr[2];
    }
    if (i > k) i = m->dof_parentid[i];
    else k = m->dof_parentid[k];
  }
}

int phys_angular_rows(const physModel* m, physData* d, const physContact* con, int nc, double* R, int* acon,
                      double* amu, int* pair, int disk) {
  int nv = m->nv, n = 0, axis[3];
  double mu[3];
  size_t mark = phys_stack_mark(d);
  double* A = phys_stack_alloc(d, 3 * (size_t)nv + 1);
  for (int i = 0; i < nc; i++) {
    int k = contact_rows(m, con + i, axis, mu);
    if (k == 0) continue;
    phys_contact_angular_jac(m, d, con + i, A);
    for (int r = 0; r < k; r++) {
      memcpy(R + (size_t)(n + r) * nv, A + (size_t)axis[r] * nv, sizeof(double) * (size_t)nv);
      acon[n + r] = i;
      amu[n + r] = mu[r];
      // the rolling pair's partner (cone, ccp: one disk), -1 for a row bounded alone
      pair[n + r] = disk && axis[r] > 0 ? n + (axis[r] == 1 ? r + 1 : r - 1) : -1;
    }
    n += k;
  }
  phys_stack_free(d, mark);
  return n;
}

// x projected onto the rows' set: |x_i| <= b_i, or ||(x_i, x_pair)|| <= b_i for a pair (b equal on both)
static void block_project(double* x, const double* b, const int* pair, int n) {
  for (int i = 0; i < n; i++) {
    int j = pair ? pair[i] : -1;
    if (j < 0) {
      x[i] = x[i] > b[i] ? b[i] : (x[i] < -b[i] ? -b[i] : x[i]);
    } else if (j > i) {
      double r = hypot(x[i], x[j]);
      if (r > b[i]) {
        double s = r > 0 ? b[i] / r : 0;
        x[i] *= s, x[j] *= s;
      }
    }
  }
}

// w = G x + g (n)
static void block_grad(double* w, const double* G, const double* g, const double* x, int n) {
  for (int i = 0; i < n; i++) {
    double s = g[i];
    for (int j = 0; j < n; j++) s += G[(size_t)i * n + j] * x[j];
    w[i] = s;
  }
}

#define PHYS_ANGULAR_MAXIT 20000
#define PHYS_ANGULAR_TOL 1e-13

// FISTA with adaptive restart on min 1/2 x'Gx + g'x over the rows' set, from x (in place): step 1/L (L the
// Gershgorin bound of G's largest eigenvalue), until L ||x+ - y||_inf <= tol max(1, ||g||_inf) (the gradient
// mapping at y, in row-velocity units). Returns the iterations, -1 if they ran out
static int block_fista(physData* d, const double* G, const double* g, const double* b, const int* pair, int n,
                       double* x) {
  double L = 0, gs = 1;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += fabs(G[(size_t)i * n + j]);
    L = fmax(L, s);
    gs = fmax(gs, fabs(g[i]));
  }
  block_project(x, b, pair, n);
  if (!(L > 0)) return 0;
  size_t mark = phys_stack_mark(d);
  double* y = phys_stack_alloc(d, (size_t)n);
  double* w = phys_stack_alloc(d, (size_t)n);
  double* xn = phys_stack_alloc(d, (size_t)n);
  memcpy(y, x, sizeof(double) * (size_t)n);
  double t = 1;
  int it;
  for (it = 1; it <= PHYS_ANGULAR_MAXIT; it++) {
    block_grad(w, G, g, y, n);
    for (int i = 0; i < n; i++) xn[i] = y[i] - w[i] / L;
    block_project(xn, b, pair, n);
    double res = 0, turn = 0;
    for (int i = 0; i < n; i++) res = fmax(res, fabs(xn[i] - y[i])), turn += (y[i] - xn[i]) * (xn[i] - x[i]);
    if (L * res <= PHYS_ANGULAR_TOL * gs) {
      memcpy(x, xn, sizeof(double) * (size_t)n);
      break;
    }
    if (turn > 0) t = 1;   // restart: the momentum points uphill
    double tn = 0.5 * (1 + sqrt(1 + 4 * t * t)), beta = t == 1 ? 0 : (t - 1) / tn;
    for (int i = 0; i < n; i++) y[i] = xn[i] + beta * (xn[i] - x[i]), x[i] = xn[i];
    t = tn;
  }
  phys_stack_free(d, mark);
  return it > PHYS_ANGULAR_MAXIT ? -1 : it;
}

void phys_friction_block_solve(physData* d, physFrictionRows* fr, const double* g, const double* lambda_c) {
  int nf = fr->nf, n0 = nf - fr->nfa;
  if (fr->nfa == 0) {
    phys_frictionloss_box(d, fr->G, g, fr->b, nf, fr->lambda, fr->state);
    return;
  }
  for (int i = n0; i < nf; i++) {   // b = mu lambda_n of the row's contact
    double ln = lambda_c[3 * fr->acon[i - n0]];
    fr->b[i] = fr->amu[i - n0] * (ln > 0 ? ln : 0);
  }
  if (block_fista(d, fr->G, g, fr->b, fr->pair, nf, fr->lambda) < 0)
    phys_data_warn(d, PHYS_WARN_SOLVER, "phys_step: torsional and rolling friction rows did not converge in %d "
                   "iterations at time %g", PHYS_ANGULAR_MAXIT, d->time);
  for (int i = 0; i < nf; i++) {   // labels: on the bound (or the disk's rim) or sticking
    int j = fr->pair[i];
    double a = j < 0 ? fabs(fr->lambda[i]) : hypot(fr->lambda[i], fr->lambda[j]);
    fr->state[i] = fr->b[i] > 0 && a >= fr->b[i] * (1 - 1e-12)
                       ? (fr->lambda[i] >= 0 ? PHYS_ROW_UPPER : PHYS_ROW_LOWER) : PHYS_ROW_CLAMPING;
  }
}

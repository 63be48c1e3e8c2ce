// frictionloss.c - dry joint friction (MuJoCo's joint frictionloss) as constraint rows (contact.h).
//
// Every dof k with dof_frictionloss F_k > 0 owns one row e_k (its own velocity) with an impulse bounded by the
// friction's impulse over the step: |lambda_k| <= F_k dt; every tendon with frictionloss F > 0 one row, its moment
// dL/dq (its rate; tendon_rows.c), bounded likewise. E (nv x nf) holds the rows as columns. With W = M~^-1 (M~ = M + dt B) and the free velocity
// v_f, the rows' Delassus matrix is G = E' W E (E the nv x nf selection of the friction dofs, a principal
// block of W: symmetric positive definite) and g = E' v_f (plus the coupling to the contact and limit rows,
// G_fc lambda_c, when there are some). The rows' conditions (maximal dissipation):
//   |lambda_k| < F_k dt  ->  w_k = 0           (sticking: the dof does not move after the step)
//   lambda_k = +F_k dt   ->  w_k <= 0          (sliding towards negative velocity: friction pushes back)
//   lambda_k = -F_k dt   ->  w_k >= 0
// with w = G lambda + g the dof velocities after the step: the box-constrained QP
//   min 1/2 lambda' G lambda + g' lambda  over |lambda_k| <= F_k dt,
// whose solution is unique (G positive definite). It is solved exactly by principal pivoting on the labels
// (sticking = PHYS_ROW_CLAMPING, +bound = PHYS_ROW_UPPER, -bound = PHYS_ROW_LOWER): solve the sticking rows'
// system with the bounded rows fixed, relabel the rows that break a condition, repeat. All violators change
// at once while their number falls (block pivoting, Judice and Pires), then only the last one (Murty's rule,
// finite for a positive definite G); projected Gauss-Seidel ends it if even that cycles (a counted warning).
// The start is every row sticking, so the result depends on the state only (no warm start to record).
#include <math.h>
#include <string.h>

#include "chol.h"
#include "contact.h"
#include "factor.h"

// the number of frictionloss rows of m: dofs with dof_frictionloss > 0 (m->nfrictionloss, kept by the compiler
// and phys_param_set: the step reads it without scanning the dofs) and tendons with frictionloss (tendon_rows.c)
int phys_frictionloss_count(const physModel* m) {
  return m->nfrictionloss + (m->nspring > 0 ? phys_tendon_frictionloss_rows(m, NULL, NULL, NULL) : 0);
}

// the friction dofs of m in order into dof (capacity nv); returns their number
int phys_frictionloss_dofs(const physModel* m, int* dof) {
  int n = 0;
  for (int k = 0; k < m->nv; k++)
    if (m->dof_frictionloss[k] > 0) dof[n++] = k;
  return n;
}

// w = G lambda + g (nf)
static void box_velocity(double* w, const double* G, const double* g, const double* lambda, int nf) {
  for (int i = 0; i < nf; i++) {
    double s = g[i];
    for (int j = 0; j < nf; j++) s += G[(size_t)i * nf + j] * lambda[j];
    w[i] = s;
  }
}

// lambda of the current labels: bounded rows at +-b, the sticking rows solve G_SS lambda_S = -g_S - G_SB b_B
// (Cholesky of G_SS; scratch A nf x nf, r nf, idx nf). 0 if G_SS is not positive definite.
static int box_lambda(double* lambda, const double* G, const double* g, const double* b, const int* state, int nf,
                      double* A, double* r, int* idx) {
  int ns = 0;
  for (int i = 0; i < nf; i++) {
    lambda[i] = state[i] == PHYS_ROW_UPPER ? b[i] : (state[i] == PHYS_ROW_LOWER ? -b[i] : 0);
    if (state[i] == PHYS_ROW_CLAMPING) idx[ns++] = i;
  }
  if (ns == 0) return 1;
  for (int a = 0; a < ns; a++) {
    int i = idx[a];
    double s = -g[i];
    for (int j = 0; j < nf; j++)
      if (state[j] != PHYS_ROW_CLAMPING) s -= G[(size_t)i * nf + j] * lambda[j];
    r[a] = s;
    for (int c = 0; c < ns; c++) A[(size_t)a * ns + c] = G[(size_t)i * nf + idx[c]];
  }
  if (phys_chol_factor(A, ns, 0.0) != ns) return 0;
  phys_chol_solve(r, A, r, ns);
  for (int a = 0; a < ns; a++) lambda[idx[a]] = r[a];
  return 1;
}

// the rows whose label breaks a condition at (lambda, w): a sticking row beyond its bound, a bounded row whose
// velocity has turned (the friction would push it past rest); the new labels into next, the count returned,
// the last violator's index into *last
static int box_violations(int* next, int* last, const double* lambda, const double* w, const double* b,
                          const int* state, int nf) {
  int nviol = 0;
  for (int i = 0; i < nf; i++) {
    int s = state[i], t = s;
    if (s == PHYS_ROW_CLAMPING && lambda[i] > b[i]) t = PHYS_ROW_UPPER;
    else if (s == PHYS_ROW_CLAMPING && lambda[i] < -b[i]) t = PHYS_ROW_LOWER;
    else if ((s == PHYS_ROW_UPPER && w[i] > 0) || (s == PHYS_ROW_LOWER && w[i] < 0)) t = PHYS_ROW_CLAMPING;
    next[i] = t;
    if (t != s) nviol++, *last = i;
  }
  return nviol;
}

// projected Gauss-Seidel on the box problem (the last resort), from lambda
static void box_pgs(double* lambda, const double* G, const double* g, const double* b, int nf, int sweeps) {
  for (int it = 0; it < sweeps; it++)
    for (int i = 0; i < nf; i++) {
      double s = g[i];
      for (int j = 0; j < nf; j++) s += G[(size_t)i * nf + j] * lambda[j];
      double x = lambda[i] - s / G[(size_t)i * nf + i];
      lambda[i] = x > b[i] ? b[i] : (x < -b[i] ? -b[i] : x);
    }
}

// the box problem's solution (file comment): lambda and state (nf each) for G (nf x nf, positive definite),
// g, bounds b >= 0. Returns the number of pivoting rounds, or -1 when pivoting did not end (lambda then from
// projected Gauss-Seidel, state from it). Scratch from d's arena.
int phys_frictionloss_box(physData* d, const double* G, const double* g, const double* b, int nf, double* lambda,
                          int* state) {
  size_t mark = phys_stack_mark(d);
  double* A = phys_stack_alloc(d, (size_t)nf * nf + 1);
  double* r = phys_stack_alloc(d, (size_t)nf + 1);
  double* w = phys_stack_alloc(d, (size_t)nf + 1);
  int* idx = (int*)phys_stack_alloc(d, (size_t)nf + 1);
  int* next = (int*)phys_stack_alloc(d, (size_t)nf + 1);
  for (int i = 0; i < nf; i++) state[i] = PHYS_ROW_CLAMPING;
  int best = nf + 1, stall = 0, maxit = 10 * nf + 20, it;
  for (it = 0; it < maxit; it++) {
    if (!box_lambda(lambda, G, g, b, state, nf, A, r, idx)) break;
    box_velocity(w, G, g, lambda, nf);
    int last = -1, nviol = box_violations(next, &last, lambda, w, b, state, nf);
    if (nviol == 0) {
      phys_stack_free(d, mark);
      return it + 1;
    }
    if (nviol < best) best = nviol, stall = 0;
    else stall++;
    if (stall < 3) memcpy(state, next, sizeof(int) * (size_t)nf);   // block pivot
    else state[last] = next[last];                                   // Murty's single pivot
  }
  // last resort: projected Gauss-Seidel from the last iterate, labels from its result
  for (int i = 0; i < nf; i++) lambda[i] = lambda[i] > b[i] ? b[i] : (lambda[i] < -b[i] ? -b[i] : lambda[i]);
  box_pgs(lambda, G, g, b, nf, 1000);
  for (int i = 0; i < nf; i++)
    state[i] = lambda[i] >= b[i] ? PHYS_ROW_UPPER : (lambda[i] <= -b[i] ? PHYS_ROW_LOWER : PHYS_ROW_CLAMPING);
  phys_data_warn(d, PHYS_WARN_SOLVER, "frictionloss: pivoting did not end in %d rounds at time %g; projected "
                 "Gauss-Seidel used", maxit, d->time);
  phys_stack_free(d, mark);
  return -1;
}

// the friction rows at d's state (contact.h): dofs, bounds F dt, the columns W E (nv x nf) through the factor
// qLD of M~, G = E' W E, g = E' vf. Arrays in d's arena (the caller's mark).
void phys_frictionloss_assemble(const physModel* m, physData* d, const double* qLD, const double* vf,
                                physFrictionRows* fr) {
  phys_friction_rows_assemble(m, d, qLD, vf, NULL, 0, 0, fr);
}

// the angular rows' bookkeeping (acon, amu, pair: nfa rows after n0 others) in d's arena, their moments into
// R_ang (nfa x nv); every pair index made one of the whole block
static void angular_assemble(const physModel* m, physData* d, const physContact* con, int nc, int disk, int nfa,
                             int n0, physFrictionRows* fr, double* R_ang) {
  fr->nfa = nfa;
  fr->acon = (int*)phys_stack_alloc(d, (size_t)nfa / 2 + 1);
  fr->amu = phys_stack_alloc(d, (size_t)nfa + 1);
  fr->pair = (int*)phys_stack_alloc(d, ((size_t)n0 + (size_t)nfa) / 2 + 1);
  for (int i = 0; i < n0; i++) fr->pair[i] = -1;
  if (nfa > 0) phys_angular_rows(m, d, con, nc, R_ang, fr->acon, fr->amu, fr->pair + n0, disk);
  for (int i = n0; i < n0 + nfa; i++)
    if (fr->pair[i] >= 0) fr->pair[i] += n0;
}

void phys_friction_rows_assemble(const physModel* m, physData* d, const double* qLD, const double* vf,
                                 const physContact* con, int nc, int disk, physFrictionRows* fr) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  int nfa = nc > 0 ? phys_angular_count(m, con, nc) : 0;   // torsional and rolling rows (angular.c)
  int nft = m->nspring > 0 ? phys_tendon_frictionloss_rows(m, d, NULL, NULL) : 0;   // tendons' rows (tendon_rows.c)
  fr->dof = (int*)phys_stack_alloc(d, ((size_t)nv + (size_t)nft + (size_t)nfa) / 2 + 1);
  int nfd = fr->nfd = phys_frictionloss_dofs(m, fr->dof);
  int nf = fr->nf = nfd + nft + nfa;
  fr->R = phys_stack_alloc(d, ((size_t)nft + (size_t)nfa) * nv + 1);
  angular_assemble(m, d, con, nc, disk, nfa, nfd + nft, fr, fr->R + (size_t)nft * nv);
  fr->b = phys_stack_alloc(d, (size_t)nf + 1);
  fr->g = phys_stack_alloc(d, (size_t)nf + 1);
  fr->G = phys_stack_alloc(d, (size_t)nf * nf + 1);
  fr->WE = phys_stack_alloc(d, (size_t)nv * nf + 1);
  fr->lambda = phys_stack_alloc(d, (size_t)nf + 1);
  fr->state = (int*)phys_stack_alloc(d, (size_t)nf / 2 + 1);
  double* col = phys_stack_alloc(d, (size_t)nv);
  if (nft > 0) phys_tendon_frictionloss_rows(m, d, fr->R, fr->b + nfd);
  for (int i = 0; i < nf; i++) {
    const double* Ri = i < nfd ? NULL : fr->R + (size_t)(i - nfd) * nv;   // (a tendon row; NULL for a dof row)
    if (i < nfd) {
      memset(col, 0, sizeof(double) * (size_t)nv);
      col[fr->dof[i]] = 1;
    } else {
      memcpy(col, Ri, sizeof(double) * (size_t)nv);
      fr->dof[i] = -1;
    }
    phys_solve_m(m, qLD, col, col);
    for (int k = 0; k < nv; k++) fr->WE[(size_t)k * nf + i] = col[k];
    if (i < nfd) {
      fr->b[i] = m->dof_frictionloss[fr->dof[i]] * dt;
      fr->g[i] = vf[fr->dof[i]];
    } else {
      fr->b[i] = i < nfd + nft ? fr->b[i] * dt : 0;   // (angular rows: mu lambda_n, phys_friction_block_solve)
      fr->g[i] = 0;
      for (int k = 0; k < nv; k++) fr->g[i] += Ri[k] * vf[k];
    }
  }
  int* nz = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);   // a moment row's nonzero dofs, ascending
  for (int i = 0; i < nf; i++) {
    if (i < nfd) {
      for (int j = 0; j < nf; j++) fr->G[(size_t)i * nf + j] = fr->WE[(size_t)fr->dof[i] * nf + j];
      continue;
    }
    const double* Ri = fr->R + (size_t)(i - nfd) * nv;
    int nnz = 0;
    for (int k = 0; k < nv; k++)
      if (Ri[k] != 0) nz[nnz++] = k;
    for (int j = 0; j < nf; j++) {
      double sum = 0;   // R_i M~^-1 E_j over R_i's nonzeros (the dense sum's terms in its order)
      for (int t = 0; t < nnz; t++) sum += Ri[nz[t]] * fr->WE[(size_t)nz[t] * nf + j];
      fr->G[(size_t)i * nf + j] = sum;
    }
  }
  // exactly symmetric (the two solves round differently)
  for (int i = 0; i < nf; i++)
    for (int j = 0; j < i; j++) {
      double s = 0.5 * (fr->G[(size_t)i * nf + j] + fr->G[(size_t)j * nf + i]);
      fr->G[(size_t)i * nf + j] = fr->G[(size_t)j * nf + i] = s;
    }
  memset(fr->lambda, 0, sizeof(double) * ((size_t)nf + 1));
}

void phys_friction_rows_sub(physData* d, const physFrictionRows* fr, const int* rows, int nk, const int* cmap,
                            physFrictionRows* q) {
  int nf = fr->nf, n0 = nf - fr->nfa;
  memset(q, 0, sizeof *q);
  int* pos = (int*)phys_stack_alloc(d, (size_t)nf / 2 + 1);   // fr's row -> q's, -1 outside
  for (int i = 0; i < nf; i++) pos[i] = -1;
  for (int a = 0; a < nk; a++) {
    pos[rows[a]] = a;
    q->nfd += rows[a] < fr->nfd;
    q->nfa += rows[a] >= n0;
  }
  q->nf = nk;
  q->b = phys_stack_alloc(d, (size_t)nk + 1);
  q->g = phys_stack_alloc(d, (size_t)nk + 1);
  q->G = phys_stack_alloc(d, (size_t)nk * nk + 1);
  q->lambda = phys_stack_alloc(d, (size_t)nk + 1);
  q->state = (int*)phys_stack_alloc(d, (size_t)nk / 2 + 1);
  q->pair = (int*)phys_stack_alloc(d, (size_t)nk / 2 + 1);
  q->acon = (int*)phys_stack_alloc(d, (size_t)q->nfa / 2 + 1);
  q->amu = phys_stack_alloc(d, (size_t)q->nfa + 1);
  for (int a = 0; a < nk; a++) {
    int i = rows[a];
    for (int c = 0; c < nk; c++) q->G[(size_t)a * nk + c] = fr->G[(size_t)i * nf + rows[c]];
    q->b[a] = fr->b[i], q->g[a] = fr->g[i], q->lambda[a] = fr->lambda[i], q->state[a] = fr->state[i];
    q->pair[a] = fr->pair[i] >= 0 ? pos[fr->pair[i]] : -1;
    if (i >= n0) {
      q->acon[a - (nk - q->nfa)] = cmap[fr->acon[i - n0]];
      q->amu[a - (nk - q->nfa)] = fr->amu[i - n0];
    }
  }
}

// v += W E lambda (nv), the friction impulses' velocity change; sticking dofs are set to 0 exactly (their
// condition, which rounding in W E lambda would leave at 1e-17)
void phys_frictionloss_apply(const physModel* m, const physFrictionRows* fr, double* v) {
  int nv = m->nv, nf = fr->nf;
  for (int k = 0; k < nv; k++) {
    double s = 0;
    for (int i = 0; i < nf; i++) s += fr->WE[(size_t)k * nf + i] * fr->lambda[i];
    v[k] += s;
  }
  for (int i = 0; i < fr->nfd; i++)   // (a sticking tendon row holds its rate 0 to rounding only)
    if (fr->state[i] == PHYS_ROW_CLAMPING) v[fr->dof[i]] = 0;
}

// qfrc += E lambda / dt: a dof row's impulse on its dof, a tendon row's along its moment
void phys_frictionloss_qfrc(const physModel* m, const physFrictionRows* fr, double* qfrc) {
  double dt = m->opt.timestep;
  for (int i = 0; i < fr->nfd; i++) qfrc[fr->dof[i]] += fr->lambda[i] / dt;
  for (int i = fr->nfd; i < fr->nf; i++)
    for (int k = 0; k < m->nv; k++) qfrc[k] += fr->R[(size_t)(i - fr->nfd) * m->nv + k] * fr->lambda[i] / dt;
}

// step_contact_angular.c - the constrained step's derivatives with torsional and rolling friction rows (issue 16:
// MuJoCo's condim 4 and 6 under lcp, cone and ccp; the primal is src/contact/angular.c).
//
// The step solves the contact problem and the friction block (joint frictionloss rows, then the contacts'
// angular rows A_k, k = 1..na, A = frame (J_rot(b1) - J_rot(b0)) of the row's contact) by block Gauss-Seidel
// to a fixed point (src/step/step.c frictionloss_coupled): the contact problem with the angular impulses
// lambda_a as the force A' lambda_a / dt, the block with the bounds mu_k lambda_n of the rows' contacts. Its
// derivative treats the friction impulses as unknowns z of the step (the sticking dof rows' forces, then every
// angular row's impulse): every other derivative is taken at z fixed (step_contact_jvp.c's contact_jvp; the rows'
// moments turning with q enter as the force dA(dq)' lambda_a / dt, Fq), and each unknown adds one condition, on
// the row's label at the solution (fr->state, read, not re-decided; a row at a zero bound is a sliding row):
//   sticking dof row:      e_dof' dv+ = 0
//   tendon frictionloss row r(q) = dL/dq (issue 15 item 3; with angular rows or without): sticking
//   r' dv+ + (K dq)' v+ = 0 (K = dr/dq, phys_spring_hessian; 0 for a fixed tendon), sliding dlambda = 0 (its
//   impulse +-F dt; F is no parameter); both turn with q, the force (K dq) lambda / dt in Fq
//   sticking angular row:  A_k dv+ + dA_k v+ = 0                                (its velocity stays 0)
//   box bound (lcp's rows, torsion everywhere):  dlambda_k = s_k (mu_k dlambda_n + dmu_k lambda_n)
//   disk rim (a rolling pair under cone and ccp, slip w = A_pair v+ != 0, lambda = -mu lambda_n w/|w|):
//       dlambda = e (mu dlambda_n + dmu lambda_n) - (mu lambda_n/|w|) (I - e e') (A_pair dv+ + dA_pair v+),
//       e = lambda/|lambda|
// With X = dx+ and N0 = dlambda_n at z fixed along a direction, T = dx+/dz, N = dlambda_n/dz (contact_jvp along
// the force e_dof or A_k'/dt), the conditions C(dx+, dlambda_n, dz) = c0 give H dz = c0 - C(X, N0, 0),
// H = C(T, N, I), and dx+ = X + T dz. H is inverted with complete pivoting and pivots below 1e-12 of its
// largest entry dropped: the four corners of a box on a face share one torsion row (A equal), so their sticking
// impulses are free along a null space that x+ does not see. A disk on its rim with |w| below 1e-8 of the
// velocities' scale is a sticking pair (the kink between the two). Parameters: torsion: and rolling: move
// mu_k (the rows' constants c0, the geom holding the pair's maximum, phys_contact_material_moves); a contact whose
// coefficient is 0 has no row, and the right derivative (mu >= 0) is the sliding row's impulse
// -sign(w) lambda_n dmu of its would-be row (a disk's along -w/|w|) as a force. The geometric parameters (pos:,
// height:, size:, vertices:) are refused with angular rows (the frame's derivative along them is not built).
// Reverse mode: x+'s cotangent through the Jacobians (A' xb, B' xb, P' xb, F' xb: a Jacobian's cost).
#include "step_contact_point.h"

#include "frictionloss_deriv.h"

// the rows' labels and their constants (w, s, lamn) at cp's solution, fr->state read
static void labels(const contactPoint* cp, cpAngular* ca) {
  const physFrictionRows* fr = &cp->st.fr;
  int nv = cp->nv;
  double vs = 1;
  for (int i = 0; i < nv; i++) vs = fmax(vs, fabs(cp->st.vnew[i]));
  for (int k = 0; k < ca->na; k++) {
    ca->w[k] = dotn(ca->A + (size_t)k * nv, cp->st.vnew, nv);
    double ln = cp->st.sol.lambda[3 * fr->acon[k]];
    ca->lamn[k] = ln > 0 ? ln : 0;
  }
  for (int k = 0; k < ca->na; k++) {
    int i = ca->n0 + k, j = fr->pair[i], kj = j - ca->n0;
    double lam = fr->lambda[i], b = fr->b[i], w = ca->w[k];
    if (j < 0) {   // a row bounded alone
      ca->kind[k] = fr->state[i] == PHYS_ROW_CLAMPING && b > 0 ? CP_ANG_STICK : CP_ANG_BOX;
      ca->s[k] = b > 0 ? (lam >= 0 ? 1 : -1) : (w > 0 ? -1 : (w < 0 ? 1 : 0));
      continue;
    }
    double nl = hypot(lam, fr->lambda[j]), nw = hypot(w, ca->w[kj]);
    int rim = fr->state[i] != PHYS_ROW_CLAMPING || !(b > 0);
    ca->kind[k] = rim && (nw > 1e-8 * vs || !(b > 0)) ? CP_ANG_DISK : CP_ANG_STICK;
    ca->s[k] = b > 0 && nl > 0 ? lam / nl : (nw > 0 ? -w / nw : 0);
  }
}

// the disk pair of angular row k's factor mu lambda_n / |w| (0 at w = 0)
static double disk_gain(const physFrictionRows* fr, const cpAngular* ca, int k) {
  int kj = fr->pair[ca->n0 + k] - ca->n0;
  double nw = hypot(ca->w[k], ca->w[kj]);
  return nw > 0 ? fr->amu[k] * ca->lamn[k] / nw : 0;
}

// (I - e e') u of a disk pair (k, kj), component k: u = (uk, uj), e = (s_k, s_kj)
static double disk_turn(const cpAngular* ca, int k, int kj, double uk, double uj) {
  return uk - ca->s[k] * (ca->s[k] * uk + ca->s[kj] * uj);
}

// condition a on (dx = (dq+, dv+), dln (nc), dz (nz; NULL: 0)): C's row a (the file comment)
static double condition(const contactPoint* cp, const cpAngular* ca, int a, const double* dx, const double* dln,
                        const double* dz) {
  const physFrictionRows* fr = &cp->st.fr;
  int nv = cp->nv;
  const double* dv = dx + nv;
  if (a < ca->nd) return dv[ca->dof[a]];
  if (a < ca->nd + ca->nr) {
    int t = a - ca->nd;
    return ca->rkind[t] == CP_ANG_STICK ? dotn(ca->R + (size_t)t * nv, dv, nv) : (dz ? dz[a] : 0);
  }
  int k = a - ca->nd - ca->nr, c = fr->acon[k];
  double z = dz ? dz[a] : 0, mu = fr->amu[k], wk = dotn(ca->A + (size_t)k * nv, dv, nv);
  if (ca->kind[k] == CP_ANG_STICK) return wk;
  if (ca->kind[k] == CP_ANG_BOX) return z - ca->s[k] * mu * dln[c];
  int kj = fr->pair[ca->n0 + k] - ca->n0;
  double wj = dotn(ca->A + (size_t)kj * nv, dv, nv);
  return z - ca->s[k] * mu * dln[c] + disk_gain(fr, ca, k) * disk_turn(ca, k, kj, wk, wj);
}

// the tendon rows' part of Fq and C0q: K = dr/dq of each row's tendon (phys_spring_hessian, in the rows' order of
// phys_tendon_frictionloss_rows) gives the force K lambda / dt and, for a sticking row, the constant -v+' K
static void tendon_q_terms(const physModel* m, physData* d, const contactPoint* cp, cpAngular* ca) {
  const physFrictionRows* fr = &cp->st.fr;
  int nv = cp->nv;
  size_t mark = phys_stack_mark(d);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  double* K = phys_stack_alloc(d, (size_t)nv * nv);
  for (int s = 0, t = 0; s < m->nspring && t < ca->nr; s++) {
    if (!(m->spring_frictionloss[s] > 0)) continue;
    int a = ca->nd + t;
    double lk = fr->lambda[fr->nfd + t++] / m->opt.timestep;
    if (m->spring_type[s] == PHYS_SPRING_FIXED) continue;   // (K = 0)
    phys_spring_hessian(m, d, s, JL, K);
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) ca->Fq[(size_t)i * nv + j] += K[(size_t)i * nv + j] * lk;
    if (ca->rkind[a - ca->nd] != CP_ANG_STICK) continue;
    for (int j = 0; j < nv; j++) {
      double c = 0;
      for (int i = 0; i < nv; i++) c += cp->st.vnew[i] * K[(size_t)i * nv + j];
      ca->C0q[(size_t)a * nv + j] = -c;
    }
  }
  phys_stack_free(d, mark);
}

// Fq (nv x nv) and C0q (nz x nv) along each e_j: dA (3 nc x nv, phys_angular_dJ) gives the force dA' lambda_a / dt
// and the conditions' constants -dA_k v+ (sticking), -(mu lambda_n/|w|) (I - e e') dA_pair v+ (disk); the tendon
// rows' (tendon_q_terms)
static physStatus q_terms(const physModel* m, physData* d, const contactPoint* cp, cpAngular* ca) {
  const physFrictionRows* fr = &cp->st.fr;
  int nv = cp->nv, nz = ca->nz, nb = ca->nd + ca->nr;
  double dt = m->opt.timestep;
  ca->Fq = arena_zeros(d, nv * nv);
  ca->C0q = arena_zeros(d, nz * nv);
  if (ca->nr > 0) tendon_q_terms(m, d, cp, ca);
  if (ca->na == 0) return PHYS_OK;
  size_t mark = phys_stack_mark(d);
  double* e = arena_zeros(d, nv);
  double* dA = phys_stack_alloc(d, 3 * (size_t)cp->nc * nv + 1);
  double* dw = phys_stack_alloc(d, (size_t)ca->na + 1);
  physStatus st = PHYS_OK;
  for (int j = 0; j < nv && st == PHYS_OK; j++) {
    e[j] = 1;
    st = phys_angular_dJ(m, d, &cp->st.p, e, NULL, dA);
    e[j] = 0;
    for (int k = 0; k < ca->na && st == PHYS_OK; k++) {
      const double* dAk = dA + (size_t)(3 * fr->acon[k] + ca->axis[k]) * nv;
      dw[k] = dotn(dAk, cp->st.vnew, nv);
      double lk = fr->lambda[ca->n0 + k] / dt;
      for (int i = 0; i < nv; i++) ca->Fq[(size_t)i * nv + j] += dAk[i] * lk;
    }
    for (int k = 0; k < ca->na && st == PHYS_OK; k++) {
      int kj = fr->pair[ca->n0 + k] - ca->n0;
      double c = ca->kind[k] == CP_ANG_STICK ? -dw[k]
                 : ca->kind[k] == CP_ANG_DISK ? -disk_gain(fr, ca, k) * disk_turn(ca, k, kj, dw[k], dw[kj]) : 0;
      ca->C0q[(size_t)(nb + k) * nv + j] = c;
    }
  }
  phys_stack_free(d, mark);
  return st;
}

// T (2nv x nz) and N (nz x nc): the step along each unknown's force (e_dof, A_k'/dt) at the others fixed; H and Hi
static physStatus unknown_terms(const physModel* m, physData* d, const contactPoint* cp, const void* tab,
                                cpAngular* ca) {
  int nv = cp->nv, nz = ca->nz, nc = cp->nc, n2 = 2 * nv;
  double dt = m->opt.timestep;
  ca->T = phys_stack_alloc(d, (size_t)n2 * nz);
  ca->N = phys_stack_alloc(d, (size_t)nz * nc + 1);
  ca->Hi = phys_stack_alloc(d, (size_t)nz * nz);
  size_t mark = phys_stack_mark(d);
  double* r = phys_stack_alloc(d, (size_t)nv);
  double* x = phys_stack_alloc(d, (size_t)n2);
  double* z = arena_zeros(d, nz);
  double* H = phys_stack_alloc(d, (size_t)nz * nz);
  double* S = phys_stack_alloc(d, (size_t)nz * nz);
  double* b = phys_stack_alloc(d, (size_t)nz);
  int* piv = arena_ints(d, 2 * nz);
  physStatus st = PHYS_OK;
  for (int a = 0; a < nz && st == PHYS_OK; a++) {
    memset(r, 0, sizeof(double) * (size_t)nv);
    if (a < ca->nd) {
      r[ca->dof[a]] = 1;
    } else {
      const double* row = a < ca->nd + ca->nr ? ca->R + (size_t)(a - ca->nd) * nv
                                              : ca->A + (size_t)(a - ca->nd - ca->nr) * nv;
      for (int i = 0; i < nv; i++) r[i] = row[i] / dt;
    }
    st = phys_cp_force_jvp(m, d, cp, tab, r, x, x + nv, ca->N + (size_t)a * nc);
    for (int i = 0; i < n2; i++) ca->T[(size_t)i * nz + a] = x[i];
  }
  for (int c = 0; c < nz && st == PHYS_OK; c++) {   // H's column c: the conditions on (T_c, N_c, e_c)
    for (int i = 0; i < n2; i++) x[i] = ca->T[(size_t)i * nz + c];
    z[c] = 1;
    for (int a = 0; a < nz; a++) H[(size_t)a * nz + c] = condition(cp, ca, a, x, ca->N + (size_t)c * nc, z);
    z[c] = 0;
  }
  if (st == PHYS_OK) phys_cp_trunc_inverse(H, nz, ca->Hi, S, piv, b);
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_cp_angular_build(const physModel* m, physData* d, const contactPoint* cp, const void* tab,
                                 cpAngular* ca) {
  const physFrictionRows* fr = &cp->st.fr;
  int nv = cp->nv, na = fr->nfa, nd = 0, nr = fr->nf - fr->nfd - na;
  memset(ca, 0, sizeof(*ca));
  for (int i = 0; i < fr->nfd; i++) nd += fr->state[i] == PHYS_ROW_CLAMPING;
  ca->nd = nd, ca->nr = nr, ca->na = na, ca->nz = nd + nr + na, ca->n0 = fr->nf - na;
  ca->dof = arena_ints(d, nd);
  for (int i = 0, k = 0; i < fr->nfd; i++)
    if (fr->state[i] == PHYS_ROW_CLAMPING) ca->dof[k++] = fr->dof[i];
  ca->R = fr->R;   // (the tendon rows first)
  ca->rkind = arena_ints(d, nr);
  for (int t = 0; t < nr; t++)
    ca->rkind[t] = fr->state[fr->nfd + t] == PHYS_ROW_CLAMPING && fr->b[fr->nfd + t] > 0 ? CP_ANG_STICK : CP_ANG_BOX;
  ca->kind = arena_ints(d, na);
  ca->axis = arena_ints(d, na);
  if (phys_angular_axes(m, cp->st.p.con, cp->nc, ca->axis) != na) return PHYS_ERR_ARG;   // (cannot happen)
  ca->A = fr->R + (size_t)(ca->n0 - fr->nfd) * nv;   // (R: the tendon rows, then the angular rows)
  ca->w = phys_stack_alloc(d, (size_t)na);
  ca->s = phys_stack_alloc(d, (size_t)na);
  ca->lamn = phys_stack_alloc(d, (size_t)na);
  labels(cp, ca);
  physStatus st = q_terms(m, d, cp, ca);
  if (st == PHYS_OK) st = unknown_terms(m, d, cp, tab, ca);
  return st;
}

void phys_cp_angular_columns(physData* d, const contactPoint* cp, const cpAngular* ca, double* X, int ncol,
                             const double* c0, int ld0) {
  int nz = ca->nz, n2 = 2 * cp->nv;
  if (!X || nz == 0) return;
  size_t mark = phys_stack_mark(d);
  double* x = phys_stack_alloc(d, (size_t)n2);
  double* rhs = phys_stack_alloc(d, (size_t)nz);
  double* y = phys_stack_alloc(d, (size_t)nz);
  for (int c = 0; c < ncol; c++) {
    for (int i = 0; i < n2; i++) x[i] = X[(size_t)i * ncol + c];
    for (int a = 0; a < nz; a++)
      rhs[a] = (c0 && c < ld0 ? c0[(size_t)a * ld0 + c] : 0) - condition(cp, ca, a, x, ca->N0 + (size_t)c * cp->nc, NULL);
    for (int a = 0; a < nz; a++) y[a] = dotn(ca->Hi + (size_t)a * nz, rhs, nz);
    for (int i = 0; i < n2; i++) X[(size_t)i * ncol + c] += dotn(ca->T + (size_t)i * nz, y, nz);
  }
  phys_stack_free(d, mark);
}

// Fp's column j += the right derivative's force of contact c's would-be rows of coefficient 0 along what (2
// torsion, 3 rolling): impulse -lambda_n w/|w| per row (lcp's rolling rows each alone, cone's and ccp's one disk)
static void zero_rows(const physModel* m, physData* d, const contactPoint* cp, int c, int what, int disk,
                      double* Fp, int nt, int j) {
  int nv = cp->nv;
  double ln = cp->st.sol.lambda[3 * c], dt = m->opt.timestep;
  if (!(ln > 0)) return;
  size_t mark = phys_stack_mark(d);
  double* A = phys_stack_alloc(d, 3 * (size_t)nv);
  phys_contact_angular_jac(m, d, cp->st.p.con + c, A);
  int r0 = what == 2 ? 0 : 1, r1 = what == 2 ? 0 : 2;
  double w[3] = {0}, nw = 0;
  for (int r = r0; r <= r1; r++) w[r] = dotn(A + (size_t)r * nv, cp->st.vnew, nv), nw += w[r] * w[r];
  nw = sqrt(nw);
  for (int r = r0; r <= r1; r++) {
    double s = what == 3 && disk ? (nw > 0 ? -w[r] / nw : 0) : (w[r] > 0 ? -1 : (w[r] < 0 ? 1 : 0));
    for (int i = 0; i < nv; i++) Fp[(size_t)i * nt + j] += s * ln * A[(size_t)r * nv + i] / dt;
  }
  phys_stack_free(d, mark);
}

physStatus phys_cp_angular_param(const physModel* m, physData* d, const contactPoint* cp, const cpAngular* ca,
                                 const physParamTable* t, double* C0p, double* Fp) {
  const physFrictionRows* fr = &cp->st.fr;
  int nt = t->ntheta, disk = m->opt.contact != PHYS_CONTACT_LCP, nb = ca->nd + ca->nr;
  memset(C0p, 0, sizeof(double) * (size_t)ca->nz * nt);
  memset(Fp, 0, sizeof(double) * (size_t)cp->nv * nt);
  if (ca->nr > 0 && phys_friction_param_check(m, d, t) != PHYS_OK) return PHYS_ERR_ARG;   // (pos: moves r(q))
  for (int e = 0; e < t->n && ca->na > 0; e++) {
    const physParam* pr = t->param + e;
    if (pr->kind == PHYS_PAR_SIZE || pr->kind == PHYS_PAR_VERTICES || pr->kind == PHYS_PAR_POS ||
        pr->kind == PHYS_PAR_HEIGHT) {
      phys_data_warning(d, "phys_step derivatives: parameter %d is geometric (pos:, height:, size:, vertices:), "
                        "whose derivative with torsional or rolling friction rows (condim 4 or 6) under lcp, cone "
                        "and ccp is not supported", e);
      return PHYS_ERR_ARG;
    }
    if (!phys_param_is_angular(pr->kind)) continue;
    int what = pr->kind == PHYS_PAR_TORSION ? 2 : 3, j = pr->adr;
    for (int k = 0; k < ca->na; k++) {   // the rows on a bound: dlambda = s dmu lambda_n
      if ((what == 2) != (ca->axis[k] == 0) || ca->kind[k] == CP_ANG_STICK) continue;
      if (phys_contact_material_moves(m, cp->st.p.con + fr->acon[k], pr->id, what))
        C0p[(size_t)(nb + k) * nt + j] += ca->s[k] * ca->lamn[k];
    }
    for (int c = 0; c < cp->nc; c++) {   // the contacts whose coefficient is 0: one-sided
      double ang[2];
      phys_contact_friction_ang(m, cp->st.p.con + c, ang);
      if (!(ang[what - 2] > 0) && phys_contact_material_moves(m, cp->st.p.con + c, pr->id, what))
        zero_rows(m, d, cp, c, what, disk, Fp, nt, j);
    }
  }
  return PHYS_OK;
}

// out (ncol) = X' xb, X (2nv x ncol)
static void transpose_product(const double* X, const double* xb, int n2, int ncol, double* out) {
  for (int j = 0; j < ncol; j++) {
    double s = 0;
    for (int i = 0; i < n2; i++) s += X[(size_t)i * ncol + j] * xb[i];
    out[j] = s;
  }
}

physStatus phys_cp_angular_vjp(const physModel* m, physData* d, physConstrainedPoint* cp, const physParamTable* t,
                               const double* xb, double* xbar, double* ubar, double* theta_bar, double* force_bar) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu, nt = t && theta_bar ? t->ntheta : 0;
  size_t mark = phys_stack_mark(d);
  double* A = xbar ? phys_stack_alloc(d, (size_t)n2 * n2) : NULL;
  double* B = ubar && nu > 0 ? phys_stack_alloc(d, (size_t)n2 * nu) : NULL;
  double* P = nt > 0 ? phys_stack_alloc(d, (size_t)n2 * nt) : NULL;
  double* F = force_bar ? phys_stack_alloc(d, (size_t)n2 * nv) : NULL;
  physStatus st = phys_cp_jacobian_force(m, d, cp, nt > 0 ? t : NULL, A, B, P, F);
  if (st == PHYS_OK) {
    if (A) transpose_product(A, xb, n2, n2, xbar);
    if (B) transpose_product(B, xb, n2, nu, ubar);
    if (P) transpose_product(P, xb, n2, nt, theta_bar);
    if (F) transpose_product(F, xb, n2, nv, force_bar);
  }
  phys_stack_free(d, mark);
  return st;
}

// step_contact_vjp.c - reverse mode of the constrained step's derivatives (step_contact_deriv.h; the
// equations are in step_contact_deriv.c's file comment): the adjoints through the solvers, the geometry, the
// smooth dynamics and the parameters, at a linearization point.
#include "residual_deriv.h"
#include "step_contact_point.h"

//---------------------------------------------------------------------------------------------------------
// the solver's reverse mode by contact model

// g_bar, G_bar (n x n), mu_bar of the model's solver at cp's main problem from lambda_bar
physStatus phys_cp_solver_vjp(const physModel* m, physData* d, const contactPoint* cp, const double* lb, double* gb,
                              double* Gb, double* mub) {
  switch (m->opt.contact) {
    case PHYS_CONTACT_CONE:
    case PHYS_CONTACT_CCP: return phys_solve_ccp_vjp_local(cp->ccp, d, &cp->st.p, &cp->st.sol, lb, gb, Gb, mub);
    default: return phys_solve_lcp_vjp(m, d, &cp->st.p, &cp->st.sol, lb, gb, Gb, mub);
  }
}

//---------------------------------------------------------------------------------------------------------
// reverse mode

// adjoints of one reverse pass (nv, n, nc sized as their forward twins)
typedef struct contactAdj_ {
  double* qbar;              // nv: configuration
  double* vbar;              // nv: velocity
  double* rbar;              // nv: adjoint of r (the smooth force change)
  double* zpos;              // nv: -zpos' dM~ vpos is the position term
  double* Z;                 // n x nv: -sum_c Z_c' dM~ Y_c is the Delassus mass term
  double* mubar;             // nc
  double* epsbar;            // nc
  double ebar;               // the margin impacts' hold speed dt |g| (toi_vjp)
  // lcp: G_bar factored (phys_solve_lcp_vjp_factored), the mass term is -sum_t fa_t' dM~ fb_t
  // - sum_r gd_r Y_r' dM~ Y_r (Z unused)
  int fac, nf;
  double *fa, *fb;           // NFAC x nv: Y' a_t, Y' b_t of G_bar's outer products a_t b_t'
  double* gd;                // n: G_bar's diagonal part
} contactAdj;

#define NFAC 5               // outer products of G_bar: 2 (main problem, one cancels -g_bar lambda') + 3 (position)

// W (n x nv) += alpha beta' (the weights of one product alpha' J beta)
static void add_outer(double* W, const double* alpha, const double* beta, int n, int nv) {
  for (int r = 0; r < n; r++)
    if (alpha[r] != 0)
      for (int i = 0; i < nv; i++) W[(size_t)r * nv + i] += alpha[r] * beta[i];
}

// q_bar += grad_q [<W, J(q)> + gamma' dist(q)] (W n x nv), and the same for every size and placement entry of
// t into theta_bar: every geometric term of the reverse pass in one call
static physStatus geom_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p,
                                  const physParamTable* t, const double* W, const double* gamma, double* qbar,
                                  double* theta_bar) {
  physStatus st = phys_constraint_vjp_matrix(m, d, p, W, gamma, qbar);
  if (st == PHYS_OK && t && theta_bar) st = phys_constraint_param_vjp_matrix(m, d, p, t, W, gamma, theta_bar);
  return st;
}

// |vbar+ + J' g_bar|^2: the adjoint of the free velocity v_f (v+ = v_f + W J' lambda, g = J v_f + b), through
// which every smooth input (q, v, u, theta) reaches the step
static double vf_adjoint_norm2(const physConstraintProblem* p, const double* vnb, const double* gb, int n, int nv) {
  double s = 0;
  for (int i = 0; i < nv; i++) {
    double x = vnb[i];
    for (int r = 0; r < n; r++) x += p->J[(size_t)r * nv + i] * gb[r];
    s += x * x;
  }
  return s;
}

// complementarity-aware reverse mode (PHYS_GRAD_COMPLEMENTARITY, lcp; paper 001 IV-D): the labels of
// phys_lcp_aware_states (contacts relabelled by the sign of their impulse adjoint) give a second g_bar,
// G_bar, mu_bar; the pair whose free-velocity adjoint vbar+ + J' g_bar is larger replaces the exact one. A
// heuristic for optimizers stalled in a saddle (a resting contact that absorbs every push: exact gradient 0);
// the forward-mode Jacobians take the same labels only through phys_constrained_aware_point. gb, Gt, mub
// updated in place.
// (F non-NULL: G_bar factored as phys_solve_lcp_vjp_factored's Ga, Gb, Gd at F, F + 3n, F + 6n; Gt unused;
// won (n, may be NULL): the relabelled states when they replace the exact pair, else untouched; returns 1 then)
static int aware_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                     const physConstraintSolution* sol, const double* vnb, const double* lb, double* gb,
                     double* Gt, double* F, double* mub, int* won, physStatus* status) {
  int n = p->n, nv = p->nv, nc = p->nc, replaced = 0;
  size_t mark = phys_stack_mark(d);
  physConstraintSolution alt = *sol;
  alt.state = arena_ints(d, n);
  *status = PHYS_OK;
  if (phys_lcp_aware_states(p, sol, lb, alt.state) == 0) {
    phys_stack_free(d, mark);
    return 0;
  }
  double* gb2 = arena_zeros(d, n);
  double* Gt2 = arena_zeros(d, F ? 7 * n : n * n);
  double* mub2 = arena_zeros(d, nc + 1);
  physStatus st = F ? phys_solve_lcp_vjp_factored(m, d, p, &alt, lb, gb2, Gt2, Gt2 + 3 * n, Gt2 + 6 * n,
                                                  mub ? mub2 : NULL)
                    : phys_solve_lcp_vjp(m, d, p, &alt, lb, gb2, Gt2, mub ? mub2 : NULL);
  if (st == PHYS_OK && vf_adjoint_norm2(p, vnb, gb2, n, nv) > vf_adjoint_norm2(p, vnb, gb, n, nv)) {
    memcpy(gb, gb2, sizeof(double) * (size_t)n);
    memcpy(F ? F : Gt, Gt2, sizeof(double) * (size_t)n * (F ? 7 : n));
    if (mub) memcpy(mub, mub2, sizeof(double) * (size_t)nc);
    if (won) memcpy(won, alt.state, sizeof(int) * (size_t)n);
    replaced = 1;
  }
  phys_stack_free(d, mark);
  *status = st;
  return replaced;
}

// one outer product u v' of a factored G_bar (u, v: n): fa = Y' u, fb = Y' v stored in a, and its geometric
// weights <u v', dJ Y' + Y dJ'> = <u (Y'v)' + v (Y'u)', dJ> added to W
static void add_factor(contactAdj* a, const contactPoint* cp, const double* u, const double* v, double* W) {
  int n = cp->n, nv = cp->nv;
  if (all_zero(u, n) || all_zero(v, n)) return;   // (a regular clamped system's vanishing terms)
  double *fa = a->fa + (size_t)a->nf * nv, *fb = a->fb + (size_t)a->nf * nv;
  a->nf++;
  mul_jt(fa, cp->Y, u, n, nv, 0);
  mul_jt(fb, cp->Y, v, n, nv, 0);
  add_outer(W, u, fb, n, nv);
  add_outer(W, v, fa, n, nv);
}

// the factors F (Ga 3 x n, Gb 3 x n, Gd n: phys_solve_lcp_vjp_factored) of one problem into a and W, from
// factor t0 on
static void add_factors(contactAdj* a, const contactPoint* cp, const double* F, int t0, double* W) {
  int n = cp->n;
  for (int t = t0; t < 3; t++) add_factor(a, cp, F + (size_t)t * n, F + (size_t)(3 + t) * n, W);
  for (int r = 0; r < n; r++) a->gd[r] += F[6 * (size_t)n + r];
}

// the transpose of contact_jvp for xbar_next = (qbar+, vbar+): fills a (set, not added); the geometric
// terms of sizes are added to theta_bar (t and theta_bar may be NULL)
// the position problem's part of contact_vjp: zpos = W vsum_bar, lbp = J zpos (the adjoint of lpe), lambda_p's
// adjoint through lcp (on the point's local structure of the position problem), its G_bar into Gb (or factored
// into W), its distance adjoint into gamma and dJ' lpe's weights into W (lb, gb, Gt, F: contact_vjp's scratch)
static void position_vjp(const physModel* m, physData* d, const contactPoint* cp, const double* vsb, contactAdj* a,
                         double* lbp, double* lb, double* gb, double* Gb, double* Gt, double* F, double* gamma,
                         double* W) {
  int n = cp->n, nv = cp->nv;
  double dt = m->opt.timestep, beta = m->opt.baumgarte;
  const physConstraintProblem* p = &cp->st.p;
  phys_solve_m(m, cp->L, a->zpos, vsb);
  mul_j(lbp, p->J, a->zpos, n, nv);
  if (p->npos > 0) {
    memcpy(lb, lbp, sizeof(double) * (size_t)n);
    if (a->fac) {
      phys_solve_lcp_vjp_factored_local(cp->lcp_pos, d, &cp->st.pp, &cp->st.sol_pos, lb, gb, F, F + 3 * n,
                                        F + 6 * n, NULL);
      add_factors(a, cp, F, 0, W);
    } else {
      phys_solve_lcp_vjp_local(cp->lcp_pos, d, &cp->st.pp, &cp->st.sol_pos, lb, gb, Gt, NULL);
      for (size_t i = 0; i < (size_t)n * n; i++) Gb[i] += Gt[i];
    }
    for (int r = 0; r < n; r++) gamma[r] += p->gpos[r] < 0 ? beta * gb[r] / dt : 0;
  }
  add_outer(W, cp->lpe, a->zpos, n, nv);
}

// the margin impacts' adjoints (transpose of step_contact_jvp.c toi_jvp) from lbp = J zpos, the adjoint of
// lpe = lambda_p + s o lambda: lambda_bar += s o lbp; s_bar_i = lambda_i . lbp_i, sigma_bar = -s_bar/dt times
// phys_toi_shift's partials into J_n v's alv, dist's gamma, eps_bar and the hold speed's a->ebar
static void toi_vjp(const physModel* m, const contactPoint* cp, const double* lbp, double* lb, double* gamma,
                    double* alv, contactAdj* a) {
  double dt = m->opt.timestep, e = phys_toi_hold_speed(m);
  const double* lam = cp->st.sol.lambda;
  for (int i = 0; i < cp->nc; i++) {
    if (!(cp->ts[i] > 0)) continue;
    double sp[4], s = -cp->ts[i] / dt, sb = 0;
    phys_toi_shift(cp->st.p.con + i, cp->vn[i], dt, e, sp);
    for (int r = 3 * i; r < 3 * i + 3; r++) lb[r] += s * lbp[r], sb += lam[r] * lbp[r];
    double tb = -sb / dt;
    alv[3 * i] += tb * sp[0];
    gamma[3 * i] += tb * sp[1];
    a->epsbar[i] += tb * sp[2];
    a->ebar += tb * sp[3];
  }
}

// the normal biases' adjoints from g_bar: restitution alpha of dJ v (alv) and eps_bar, the gap's dist_bar
static void bias_vjp(const contactPoint* cp, const double* gb, double dt, double* alv,
                     double* epsbar, double* gamma) {
  for (int i = 0; i < cp->nc; i++) {
    const physContact* c = cp->st.p.con + i;
    if (cp->bias[i] == PHYS_BIAS_REST) {
      double dphi, phi = phys_restitution_phi(cp->vn[i], &dphi);
      alv[3 * i] += c->restitution * dphi * gb[3 * i];
      epsbar[i] += gb[3 * i] * phi;
    } else if (cp->bias[i] == PHYS_BIAS_GAP) {
      gamma[3 * i] += gb[3 * i] / dt;
    }
  }
}

// the whole (unfactored) G_bar: W += (G_bar + G_bar') Y for <G_bar, dJ Y' + Y dJ'>, and Z_c = sum_r G_bar[r][c]
// Y_r for -<G_bar, Y dM~ Y'> (a->Z). With islands (p->island) only the pairs r, c of one island: dG_rc = 0
// exactly between islands (Y_c and dJ_c live on island c's dofs, dM~ is block diagonal over the trees), so the
// other entries of G_bar (g_bar lambda' is dense) meet zeros: O(sum n_k^2 nv) instead of O(n^2 nv)
static void gbar_weights(const contactPoint* cp, const double* Gb, double* W, double* Z) {
  int n = cp->n, nv = cp->nv;
  const int* isl = cp->st.p.island;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      if (isl && isl[r] != isl[c]) continue;
      double g = Gb[(size_t)r * n + c] + Gb[(size_t)c * n + r];
      if (g != 0)   // (on Y_c's dofs: it adds zeros elsewhere)
        for (int i = cp->yr[2 * c]; i < cp->yr[2 * c + 1]; i++) W[(size_t)r * nv + i] += g * cp->Y[(size_t)c * nv + i];
    }
  for (int c = 0; c < n; c++) {
    double* Zc = Z + (size_t)c * nv;
    memset(Zc, 0, sizeof(double) * (size_t)nv);
    for (int r = 0; r < n; r++) {
      double g = isl && isl[r] != isl[c] ? 0 : Gb[(size_t)r * n + c];
      if (g != 0)
        for (int i = cp->yr[2 * r]; i < cp->yr[2 * r + 1]; i++) Zc[i] += g * cp->Y[(size_t)r * nv + i];
    }
  }
}

// a's outputs zeroed before a reverse pass (n rows, nv dofs, nc contacts)
static void adjoint_zero(contactAdj* a, int n, int nv, int nc) {
  a->nf = 0;
  if (a->fac) memset(a->gd, 0, sizeof(double) * ((size_t)n + 1));
  memset(a->qbar, 0, sizeof(double) * (size_t)nv);
  memset(a->vbar, 0, sizeof(double) * (size_t)nv);
  memset(a->zpos, 0, sizeof(double) * (size_t)nv);
  memset(a->mubar, 0, sizeof(double) * ((size_t)nc + 1));
  memset(a->epsbar, 0, sizeof(double) * ((size_t)nc + 1));
  a->ebar = 0;
}

// the geometric terms of G_bar and the one matrix call: dG = dJ Y' + Y dJ' - Y dM~ Y' gives
// <G_bar, dJ Y' + Y dJ'> = <(G_bar + G_bar') Y, dJ> and Z_c = sum_r G_bar[r][c] Y_r (gbar_weights); factored
// (a->fac, Gb NULL), the outer products' weights are in W already and the diagonal's are 2 gd_r Y_r. Then
// qbar += the geometry's VJP of <W, dJ> + gamma' ddist (geom_vjp_matrix, with theta_bar's sizes)
static physStatus geometry_vjp(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                               contactAdj* a, const double* Gb, double* W, const double* gamma, double* theta_bar) {
  int n = cp->n, nv = cp->nv;
  if (a->fac) {
    for (int r = 0; r < n; r++)
      if (a->gd[r] != 0)
        for (int i = cp->yr[2 * r]; i < cp->yr[2 * r + 1]; i++)
          W[(size_t)r * nv + i] += 2 * a->gd[r] * cp->Y[(size_t)r * nv + i];
  } else {
    gbar_weights(cp, Gb, W, a->Z);
  }
  return geom_vjp_matrix(m, d, &cp->st.p, t, W, gamma, a->qbar, theta_bar);
}

// the reverse pass of contact_jvp's chain at cp (step_contact_deriv.c's file comment): from xbar_next = (qbar+,
// vbar+) the adjoints of dq, dv (a->qbar, a->vbar), r (a->rbar), the mass terms (a->zpos, a->Z or the factors),
// mu and eps (a->mubar, a->epsbar), and theta_bar's sizes through the geometry
static physStatus contact_vjp(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                              const double* xbar_next, contactAdj* a, double* theta_bar) {
  int n = cp->n, nv = cp->nv, nc = cp->nc;
  double dt = m->opt.timestep;
  const physConstraintProblem* p = &cp->st.p;
  const double* lam = cp->st.sol.lambda;
  size_t mark = phys_stack_mark(d);
  double* Gb = a->fac ? NULL : arena_zeros(d, n * n);   // (factored: G_bar is never formed)
  double* Gt = a->fac ? NULL : arena_zeros(d, n * n);
  double* vsb = arena_zeros(d, nv);    // adjoint of v+ + vpos
  double* vnb = arena_zeros(d, nv);    // adjoint of v+
  double* z = arena_zeros(d, nv);
  double* lb = arena_zeros(d, n);
  double* lbp = arena_zeros(d, n);     // adjoint of lpe (position_vjp)
  double* gb = arena_zeros(d, n);
  double* gamma = arena_zeros(d, n);   // adjoint of dist
  double* alv = arena_zeros(d, n);     // alpha of dJ v
  double* W = arena_zeros(d, n * nv);  // the weights of <W, dJ> of every geometric term
  double* F = a->fac ? arena_zeros(d, 7 * n) : NULL;   // one problem's factored G_bar
  physStatus st = PHYS_OK;
  adjoint_zero(a, n, nv, nc);

  // dq+ = E dq + dt D (dv+ + dvpos):  qbar = E' qbar+,  vsum_bar = dt D' qbar+
  apply_blocks(m, cp->rot, cp->Et, xbar_next, a->qbar, 1);
  apply_blocks(m, cp->rot, cp->Jr, xbar_next, vsb, 1);
  for (int i = 0; i < nv; i++) {
    vsb[i] *= dt;
    vnb[i] = xbar_next[nv + i] + vsb[i];
  }

  // position: dvpos = W (dJ' lpe + J' (dlambda_p + s o dlambda + ds o lambda) - dM~ vpos), zpos = W vsum_bar
  int pos = p->npos > 0 || cp->nimp > 0;
  if (pos) position_vjp(m, d, cp, vsb, a, lbp, lb, gb, Gb, Gt, F, gamma, W);

  // dv+ = dv + dy0 + W J' dlambda:  vbar = vbar+',  z = W vbar+',  lambda_bar = J z (+ s o lbp: the margin
  // impacts' position term)
  memcpy(a->vbar, vnb, sizeof(double) * (size_t)nv);
  phys_solve_m(m, cp->L, z, vnb);
  mul_j(lb, p->J, z, n, nv);
  if (cp->nimp > 0) toi_vjp(m, cp, lbp, lb, gamma, alv, a);
  if (st == PHYS_OK && a->fac)   // (lcp: on the point's local structure)
    phys_solve_lcp_vjp_factored_local(cp->lcp, d, p, &cp->st.sol, lb, gb, F, F + 3 * n, F + 6 * n, a->mubar);
  else if (st == PHYS_OK)
    st = phys_cp_solver_vjp(m, d, cp, lb, gb, Gt, a->mubar);
  if (st == PHYS_OK && m->opt.contact == PHYS_CONTACT_LCP && (m->opt.gradflags & PHYS_GRAD_COMPLEMENTARITY))
    aware_vjp(m, d, p, &cp->st.sol, vnb, lb, gb, Gt, F, a->mubar, NULL, &st);
  if (st != PHYS_OK) {
    phys_stack_free(d, mark);
    return st;
  }
  // dg = dJ v+ + J (dv + dy0) + db - dG lambda:  G_bar -= g_bar lambda';  db's terms. Factored, lcp's first
  // outer product is g_bar lambda' itself (Ga_0 = place(-S A^+' x_bar) = g_bar, Gb_0 = lift(S x) = lambda): the
  // two cancel exactly and neither is added (summed apart they left rounding noise of their size)
  if (a->fac) add_factors(a, cp, F, 1, W);
  else
    for (size_t i = 0; i < (size_t)n * n; i++) Gb[i] += Gt[i] - gb[i / n] * lam[i % n];
  bias_vjp(cp, gb, dt, alv, a->epsbar, gamma);
  mul_jt(a->vbar, p->J, alv, n, nv, 1);
  add_outer(W, alv, d->qvel, n, nv);
  add_outer(W, gb, cp->st.vnew, n, nv);

  // w = dv + dy0 with w_bar = z' + J' g_bar (z' = vbar+' for dy0):  vbar += J' g_bar;
  // dy0 = W (dt r + dJ' lambda):  y0 = W (vbar+' + J' g_bar),  r_bar = dt y0
  mul_jt(a->vbar, p->J, gb, n, nv, 1);
  mul_jt(z, p->J, gb, n, nv, 0);
  for (int i = 0; i < nv; i++) z[i] += vnb[i];
  phys_solve_m(m, cp->L, z, z);
  for (int i = 0; i < nv; i++) a->rbar[i] = dt * z[i];
  add_outer(W, lam, z, n, nv);

  // dG = dJ Y' + Y dJ' - Y dM~ Y': the geometric terms and the one matrix call
  st = geometry_vjp(m, d, cp, t, a, Gb, W, gamma, theta_bar);
  phys_stack_free(d, mark);
  return st;
}

// one term c (a b' + b a') / 2 of a low-rank K appended to A, B, c (*nr of them so far)
static void lr_term(double* A, double* B, double* c, int* nr, const double* a, const double* b, double w, int nv) {
  memcpy(A + (size_t)*nr * nv, a, sizeof(double) * (size_t)nv);
  memcpy(B + (size_t)*nr * nv, b, sizeof(double) * (size_t)nv);
  c[(*nr)++] = w;
}

// the rows' slots for the terms summed over rows c of Z_c' K(Y_c) with K linear and block diagonal over the
// trees (dM~, and its parameter derivatives): slot[c] = c's place among its island's rows (p->island), so the rows
// of one slot lie on disjoint trees and (sum Z)' K (sum Y) over a slot is the sum of their terms exactly.
// Without islands every row its own slot. Returns the number of slots (the largest island's rows)
static int row_slots(physData* d, const contactPoint* cp, int* slot) {
  int n = cp->n, nslot = 0, ni = 0;
  const int* isl = cp->st.p.island;
  if (!isl) {
    for (int r = 0; r < n; r++) slot[r] = r;
    return n;
  }
  for (int r = 0; r < n; r++) ni = isl[r] + 1 > ni ? isl[r] + 1 : ni;
  size_t mark = phys_stack_mark(d);
  int* cnt = arena_ints(d, ni + 1);
  memset(cnt, 0, sizeof(int) * (size_t)(ni + 1));
  for (int r = 0; r < n; r++) {
    slot[r] = cnt[isl[r]]++;
    if (slot[r] + 1 > nslot) nslot = slot[r] + 1;
  }
  phys_stack_free(d, mark);
  return nslot;
}

// ys, zt (nv each) = the sums of Y_c and Z_c over the rows c of slot t whose Z_c is not 0; returns their number
static int slot_sums(const contactPoint* cp, const contactAdj* a, const int* slot, int t, double* ys, double* zt) {
  int nv = cp->nv, k = 0;
  memset(ys, 0, sizeof(double) * (size_t)nv);
  memset(zt, 0, sizeof(double) * (size_t)nv);
  for (int c = 0; c < cp->n; c++) {
    const double* Zc = a->Z + (size_t)c * nv;
    if (slot[c] != t || all_zero(Zc, nv)) continue;   // (ccp, cone: G_bar = g_bar lambda' cancels -dG lambda)
    const double* Yc = cp->Y + (size_t)c * nv;
    for (int i = 0; i < nv; i++) ys[i] += Yc[i], zt[i] += Zc[i];
    k++;
  }
  return k;
}

// -zpos' dM~ vpos - sum_c Z_c' dM~ Y_c into a->qbar: each a bilinear form of M alone, one term per slot
// (row_slots: over a slot's rows, on disjoint trees, (sum Z)' dM~ (sum Y) is the sum of their terms exactly), all
// summed into one <dM~, K> (phys_rnea_mass_trace_grad: one pass per column over the bodies below it, with as
// many terms as the largest island has rows) instead of one RNEA VJP over all bodies per slot
static void mass_rows_vjp(const physModel* m, physData* d, const contactPoint* cp, contactAdj* a) {
  int nv = m->nv, nr = 0;
  size_t mark = phys_stack_mark(d);
  int* slot = arena_ints(d, cp->n);
  int nslot = row_slots(d, cp, slot);
  double* A = phys_stack_alloc(d, (size_t)(nslot + 1) * nv);
  double* B = phys_stack_alloc(d, (size_t)(nslot + 1) * nv);
  double* c = phys_stack_alloc(d, (size_t)nslot + 1);
  double* g = arena_zeros(d, nv);
  if (cp->st.p.npos > 0 || cp->nimp > 0) lr_term(A, B, c, &nr, a->zpos, cp->st.vpos, 1, nv);
  for (int t = 0; t < nslot; t++)   // (slot_sums writes Y's sum into B's row, Z's into A's)
    if (slot_sums(cp, a, slot, t, B + (size_t)nr * nv, A + (size_t)nr * nv) > 0) c[nr++] = 1;
  phys_rnea_mass_trace_grad(m, d, 0, nr, A, B, c, g);
  for (int i = 0; i < nv; i++) a->qbar[i] -= g[i];
  phys_stack_free(d, mark);
}

// the smooth terms of a reverse pass in q, v, u: r = (df/dq - dtau/dq|a+) dq + (df/dv - dtau/dv|a+) dv
// + df/du du;  dM~ vpos and dM~ Y_c as gradients of bilinear forms of M (phys_rnea_mass_trace_grad)
static void smooth_vjp(const physModel* m, physData* d, const contactPoint* cp, contactAdj* a, double* ubar) {
  int nv = m->nv, n = cp->n;
  size_t mark = phys_stack_mark(d);
  double* qb = phys_stack_alloc(d, (size_t)nv);
  double* vb = phys_stack_alloc(d, (size_t)nv);
  // r: -dRNEA|a+' rbar, then the forces' own transposes
  phys_rnea_vjp(m, d, cp->acc, a->rbar, qb, vb, NULL);
  for (int i = 0; i < nv; i++) a->qbar[i] -= qb[i], a->vbar[i] -= vb[i];
  phys_passive_vjp(m, d, a->rbar, a->qbar, a->vbar, ubar);
  phys_actuation_vjp(m, d, a->rbar, a->qbar, a->vbar, ubar);
  phys_xfrc_vjp(m, d, a->rbar, a->qbar);
  phys_residual_force_vjp(m, d, a->rbar, a->qbar, a->vbar, NULL);   // the residual network's force M~ r
  // factored: -zpos' dM~ vpos - sum_t fa_t' dM~ fb_t - sum_r gd_r Y_r' dM~ Y_r, each the gradient of a
  // (bi)linear form of M alone
  if (a->fac) {
    // all of them summed into one symmetric K: <dM~, K>, K = zpos vpos'_sym + sum_t (fa_t fb_t')_sym +
    // sum_r gd_r Y_r Y_r' (phys_rnea_mass_trace_grad: one pass per column over the bodies below it, K's
    // entries from these terms where the pass reads them)
    int cap = 1 + a->nf + n, nr = 0, nq;
    double* A = phys_stack_alloc(d, (size_t)cap * nv);
    double* B = phys_stack_alloc(d, (size_t)cap * nv);
    double* c = phys_stack_alloc(d, (size_t)cap);
    for (int r = 0; r < n; r++)   // the quadratic terms first
      if (a->gd[r] != 0) lr_term(A, B, c, &nr, cp->Y + (size_t)r * nv, cp->Y + (size_t)r * nv, a->gd[r], nv);
    nq = nr;
    if (cp->st.p.npos > 0 || cp->nimp > 0) lr_term(A, B, c, &nr, a->zpos, cp->st.vpos, 1, nv);
    for (int f = 0; f < a->nf; f++) lr_term(A, B, c, &nr, a->fa + (size_t)f * nv, a->fb + (size_t)f * nv, 1, nv);
    memset(qb, 0, sizeof(double) * (size_t)nv);
    phys_rnea_mass_trace_grad(m, d, nq, nr, A, B, c, qb);
    for (int i = 0; i < nv; i++) a->qbar[i] -= qb[i];
    phys_stack_free(d, mark);
    return;
  }
  mass_rows_vjp(m, d, cp, a);
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// parameters

// theta_bar += mu_bar, eps_bar through the friction and restitution entries of t (cp's contacts), and the
// margin impacts' hold speed's ebar d(dt |g|)/dg through a gravity entry
static void contact_param_vjp(const physModel* m, const contactPoint* cp, const physParamTable* t,
                              const contactAdj* a, double* theta_bar) {
  for (int e = 0; e < t->n; e++) {
    const physParam* pr = t->param + e;
    if (pr->kind == PHYS_PAR_GRAVITY && a->ebar != 0) {
      double dg[3];
      phys_toi_hold_speed_grad(m, dg);
      for (int k = 0; k < 3; k++) theta_bar[pr->adr + k] += a->ebar * dg[k];
    }
    if (pr->kind != PHYS_PAR_FRICTION && pr->kind != PHYS_PAR_RESTITUTION) continue;
    int rest = pr->kind == PHYS_PAR_RESTITUTION;
    for (int i = 0; i < cp->nc; i++)
      if (phys_contact_material_moves(m, cp->st.p.con + i, pr->id, rest)) theta_bar[pr->adr] += rest ? a->epsbar[i] : a->mubar[i];
  }
}

// theta_bar -= R(x)' z  (R: nv x nt scratch)
static void sub_rt(const physModel* m, physData* d, const physParamTable* t, const double* x, const double* z,
                   double* R, double* theta_bar) {
  int nv = m->nv, nt = t->ntheta;
  phys_param_forces(m, d, t, x, R);
  for (int k = 0; k < nv; k++)
    if (z[k] != 0)
      for (int j = 0; j < nt; j++) theta_bar[j] -= R[(size_t)k * nt + j] * z[k];
}

// theta_bar += -R(a+)' rbar - (R(vpos) - R(0))' zpos - sum_c (R(Y_c) - R(0))' Z_c  (R nv x nt, params.h)
static void smooth_param_vjp(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                             const contactAdj* a, double* theta_bar) {
  int nv = m->nv, n = cp->n;
  size_t mark = phys_stack_mark(d);
  double* R = phys_stack_alloc(d, (size_t)nv * t->ntheta);
  double* zs = arena_zeros(d, nv);
  double* zero = arena_zeros(d, nv);
  sub_rt(m, d, t, cp->acc, a->rbar, R, theta_bar);
  if (phys_friction_in_table(t))   // (frictionloss: sliding rows' constant forces, frictionloss_deriv.h)
    phys_friction_param_vjp(m, phys_friction_point_sliding(m, d, &cp->st.fr), t, cp->st.vnew, a->rbar, theta_bar);
  if (cp->st.p.npos > 0 || cp->nimp > 0) {
    sub_rt(m, d, t, cp->st.vpos, a->zpos, R, theta_bar);
    for (int i = 0; i < nv; i++) zs[i] -= a->zpos[i];
  }
  int* slot = arena_ints(d, n);
  int nslot = a->fac ? 0 : row_slots(d, cp, slot);
  double* ys = phys_stack_alloc(d, 2 * (size_t)nv);
  for (int s = 0; s < nslot; s++) {   // (one parameter-force pass per slot, as mass_rows_vjp)
    if (slot_sums(cp, a, slot, s, ys, ys + nv) == 0) continue;
    sub_rt(m, d, t, ys, ys + nv, R, theta_bar);
    for (int i = 0; i < nv; i++) zs[i] -= ys[nv + i];
  }
  // factored: - sum_t (R(fb_t) - R0)' fa_t - sum_r gd_r (R(Y_r) - R0)' Y_r
  for (int f = 0; a->fac && f < a->nf; f++) {
    const double* fa = a->fa + (size_t)f * nv;
    sub_rt(m, d, t, a->fb + (size_t)f * nv, fa, R, theta_bar);
    for (int i = 0; i < nv; i++) zs[i] -= fa[i];
  }
  for (int r = 0; a->fac && r < n; r++) {
    if (a->gd[r] == 0) continue;
    const double* Yr = cp->Y + (size_t)r * nv;
    double* gy = arena_zeros(d, nv);
    for (int i = 0; i < nv; i++) gy[i] = a->gd[r] * Yr[i], zs[i] -= gy[i];
    sub_rt(m, d, t, Yr, gy, R, theta_bar);
  }
  sub_rt(m, d, t, zero, zs, R, theta_bar);
  phys_stack_free(d, mark);
}

physStatus phys_constrained_vjp_at(const physModel* m, physData* d, physConstrainedPoint* cpp,
                                   const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                   double* theta_bar, double* force_bar) {
  if (cpp->st.fr.nfa > 0 || cpp->st.fr.nf > cpp->st.fr.nfd)   // angular or tendon friction rows: through the
                                                               // Jacobians (step_contact_angular.c)
    return phys_cp_angular_vjp(m, d, cpp, t, xbar_next, xbar, ubar, theta_bar, force_bar);
  int nv = m->nv, nu = m->nu;
  size_t mark = phys_stack_mark(d);
  contactPoint cp = *cpp;
  physStatus st = PHYS_OK;
  int n = cp.n, nc = cp.nc, nt = t && theta_bar ? t->ntheta : 0;
  contactAdj a;
  a.qbar = phys_stack_alloc(d, (size_t)nv);
  a.vbar = phys_stack_alloc(d, (size_t)nv);
  a.rbar = phys_stack_alloc(d, (size_t)nv);
  a.zpos = phys_stack_alloc(d, (size_t)nv);
  a.fac = m->opt.contact == PHYS_CONTACT_LCP;   // (the position problem is lcp for every model)
  a.Z = a.fac ? NULL : phys_stack_alloc(d, (size_t)n * nv + 1);
  a.fa = a.fac ? phys_stack_alloc(d, NFAC * (size_t)nv) : NULL;
  a.fb = a.fac ? phys_stack_alloc(d, NFAC * (size_t)nv) : NULL;
  a.gd = a.fac ? phys_stack_alloc(d, (size_t)n + 1) : NULL;
  a.nf = 0;
  a.mubar = phys_stack_alloc(d, (size_t)nc + 1);
  a.epsbar = phys_stack_alloc(d, (size_t)nc + 1);
  double* ub = nu > 0 ? arena_zeros(d, nu) : NULL;
  double* tb = nt > 0 ? arena_zeros(d, nt) : NULL;
  // sticking frictionloss rows: the adjoint of x+ through (I - T H^-1 E_S') (cpStick) first
  cpStick sf;
  double* xbn = phys_stack_alloc(d, 2 * (size_t)nv);
  memcpy(xbn, xbar_next, sizeof(double) * 2 * (size_t)nv);
  st = phys_cp_stick_build(m, d, &cp, NULL, &sf);
  phys_cp_stick_adjoint(d, &sf, nv, xbn);
  if (st == PHYS_OK) st = contact_vjp(m, d, &cp, nt > 0 ? t : NULL, xbn, &a, tb);
  if (st == PHYS_OK) {
    if (nt > 0) {
      smooth_param_vjp(m, d, &cp, t, &a, tb);
      contact_param_vjp(m, &cp, t, &a, tb);
      memcpy(theta_bar, tb, sizeof(double) * (size_t)nt);
    }
    if (force_bar) memcpy(force_bar, a.rbar, sizeof(double) * (size_t)nv);
    smooth_vjp(m, d, &cp, &a, ub);
    if (xbar) {
      memcpy(xbar, a.qbar, sizeof(double) * (size_t)nv);
      memcpy(xbar + nv, a.vbar, sizeof(double) * (size_t)nv);
    }
    if (ubar && nu > 0) memcpy(ubar, ub, sizeof(double) * (size_t)nu);
  } else if (st == PHYS_ERR_NUMERIC) {
    phys_data_warning(d, "phys_step_vjp: constraint solver derivative failed at time %g", d->time);
  }
  phys_stack_free(d, mark);
  return st;
}

// the complementarity-aware point for the cotangent xbar_next (step_contact_deriv.h): the labels
// contact_vjp's aware_vjp chooses for it, from the same adjoints (the sticking rows' correction, vbar+ + dt D'
// qbar+, lambda_bar = J M~^-1 of it, the exact g_bar from the point's local structure)
physStatus phys_constrained_aware_point(const physModel* m, physData* d, const physConstrainedPoint* cpp,
                                        const double* xbar_next, physConstrainedPoint** outp, int* relabelled) {
  int nv = m->nv, n = cpp->n;
  double dt = m->opt.timestep;
  *outp = (physConstrainedPoint*)cpp;
  *relabelled = 0;
  if (!cpp->lcp || n == 0 || !(m->opt.gradflags & PHYS_GRAD_COMPLEMENTARITY)) return PHYS_OK;
  // (the caller's memory: the relabelled point and its labels)
  contactPoint* out = (contactPoint*)phys_stack_alloc(d, (sizeof(contactPoint) + sizeof(double) - 1) / sizeof(double));
  int* state = arena_ints(d, n);
  size_t mark = phys_stack_mark(d);
  const physConstraintProblem* p = &cpp->st.p;
  double* xbn = phys_stack_alloc(d, 2 * (size_t)nv);
  double* vnb = arena_zeros(d, nv);
  double* z = arena_zeros(d, nv);
  double* lb = arena_zeros(d, n);
  double* gb = arena_zeros(d, n);
  double* F = arena_zeros(d, 7 * n);
  memcpy(xbn, xbar_next, sizeof(double) * 2 * (size_t)nv);
  cpStick sf;
  physStatus st = phys_cp_stick_build(m, d, cpp, NULL, &sf);
  if (st == PHYS_OK) {
    phys_cp_stick_adjoint(d, &sf, nv, xbn);
    apply_blocks(m, cpp->rot, cpp->Jr, xbn, vnb, 1);
    for (int i = 0; i < nv; i++) vnb[i] = xbn[nv + i] + dt * vnb[i];
    phys_solve_m(m, cpp->L, z, vnb);
    mul_j(lb, p->J, z, n, nv);
    phys_solve_lcp_vjp_factored_local(cpp->lcp, d, p, &cpp->st.sol, lb, gb, F, F + 3 * n, F + 6 * n, NULL);
    *relabelled = aware_vjp(m, d, p, &cpp->st.sol, vnb, lb, gb, NULL, F, NULL, state, &st);
  }
  phys_stack_free(d, mark);
  if (st == PHYS_OK && *relabelled) {   // out: the point with these labels and their local structure
    *out = *cpp;
    *outp = out;
    out->st.sol.state = state;
    out->lcp = phys_solve_lcp_local(d, &out->st.p, &out->st.sol);
  }
  return st;
}

// P's size columns by reverse passes at the point cp (the one the Jacobian was taken at: no linearization
// again): row i of P = (P' e_i)'
physStatus phys_cp_size_rows(const physModel* m, physData* d, contactPoint* cp, const physParamTable* t,
                             double* P) {
  int nv = m->nv, n2 = 2 * nv, nt = t->ntheta;
  size_t mark = phys_stack_mark(d);
  double* e = arena_zeros(d, n2);
  double* tb = phys_stack_alloc(d, (size_t)nt);
  physStatus st = PHYS_OK;
  for (int i = 0; i < n2 && st == PHYS_OK; i++) {
    e[i] = 1;
    st = phys_constrained_vjp_at(m, d, cp, t, e, NULL, NULL, tb, NULL);
    e[i] = 0;
    for (int k = 0; k < t->n && st == PHYS_OK; k++) {
      const physParam* pr = t->param + k;
      if (pr->kind == PHYS_PAR_SIZE || pr->kind == PHYS_PAR_VERTICES)
        for (int j = pr->adr; j < pr->adr + pr->size; j++) P[(size_t)i * nt + j] = tb[j];
    }
  }
  phys_stack_free(d, mark);
  return st;
}

// penalty_deriv.c - exact derivatives of one phys_step with penalty contact (issue 4 item 1, "penalty
// directly"): A = dx+/dx, B = dx+/du, P = dx+/dtheta and the step's reverse mode, x = (q tangent, v) (grad.h).
//
// What the step does (src/step/step.c penalty_velocity / penalty_dense, src/contact/penalty.c). With
// M~ = M + dt B (B the implicit joint damping) and, per penetrating contact i, rows J_i = (J_n, J_t1, J_t2)
// (3 x nv), spring s_i = -k dist_i (k = opt.penalty_stiffness), damper d_i = 2 zeta_i sqrt(k / w_i) or its
// stability floor k dt - 2 / (w_i dt) if larger (phys_penalty_damping),
// w_i = J_n M~^-1 J_n', zeta_i = zeta(eps_i) (phys_penalty_zeta, held at PHYS_PENALTY_ZETA_MAX below), solve k
// (k = 0 .. K-1, K <= 3) finds a_k from the residual
//   Res_k(a_k) = RNEA(q, v, a_k) + (armature + dt B) a_k - f(q, v, u)                      (smooth, grad.h)
//              + alim a_k + k (q - q_lim) + (c + dt k) v          on dofs at a limit (phys_penalty_limits:
//                                                                  f = -k dist - c dist_dot, implicit form)
//              + C (v + dt a_k)                                   on joint frictionloss dofs (C = F / max(|v|,
//                                                                  v_slip) at the start velocity; dt C in H_k)
//              - sum_{i in S_k} J_i' F_i^k(v + dt a_k) = 0,
//   F_i^k(x) = (s_i - d_i J_n x, -C_i^k J_t1 x, -C_i^k J_t2 x),   alim = dt c + dt^2 k,
// i.e. H_k a_k = rhs_k with H_k = M~ + diag(alim) + dt sum_i J_i' diag(d_i, C, C) J_i (the code's matrix),
// S_k the contacts active in solve k. The friction coefficient of solve k is
//   C_i^k = mu_i fn_i(w) / slip_i(w),  fn_i(w) = s_i - d_i J_n w,  slip_i(w) = max(|J_t w|, v_slip),
// evaluated at w = v (solve 0) or at the v+ of the solve after which phys_penalty_update changed it
// (slip changed); a contact whose slip stays v_slip keeps its C (and its C's dependence on that earlier
// velocity). The step returns v+ = v + dt a_{K-1}, q+ = q (+) dt v+.
//
// What is differentiated. The final iterate as a function of (q, v, u, theta), each C_i^k through the
// velocity it was evaluated at (so through the earlier solves: dC/dw = mu (dfn/slip - fn dslip/slip^2),
// dslip = 0 below v_slip), and every coefficient through q and theta: J_i and dist_i (contact_deriv.h,
// the contact's feature held), s_i, d_i through k, w_i (dw = 2 (dJ_n) y - y' dM~ y, y = M~^-1 J_n') and
// zeta(eps) (d zeta/d eps = 1 / eps'(zeta), phys_penalty_restitution_deriv). Held: the discrete choices
// (which contacts penetrate, which push in each solve, which limits act, which solve changed C, whether
// |v_t| > v_slip, K); these are piecewise constant, so the derivatives are exact away from those switches
// (activation: dist = 0 or f_n = 0; slip regularization |v_t| = v_slip; zeta at its clamp). A restitution
// eps >= 1 gives d = 0 (held); eps <= eps(zeta_max) holds zeta.
//
// Reverse mode (one linearization, the tape, then any number of passes): v+ = v + dt a_{K-1} gives
// abar_{K-1}; for k = K-1 .. 0: lambda_k = H_k^-1 abar_k (H_k symmetric) and every input z of Res_k gets
// z_bar -= (dRes_k/dz)' lambda_k; an input C_i^k passes its adjoint to its velocity, i.e. to v and to
// abar_j (j < k) of its source solve, so the loop runs solves last to first. The smooth part is the
// contact-free step's reverse mode at a_k (phys_rnea_vjp, phys_passive_vjp, ..., and -R(a_k)' lambda_k for
// the parameters, params.h). M~'s change in w_i: d(M~ y)/dq = dRNEA(q, v, y)/dq - dRNEA(q, v, 0)/dq and
// d(M~ y)/dtheta = R(y) - R(0) (both affine in the acceleration). Every geometric term of a pass is a
// product alpha' J(q) beta or gamma' dist(q): their weights are summed and applied by one
// phys_constraint_vjp_matrix call (the contact geometry computed once per pass).
// Forward mode (A, B by columns, independent of the reverse mode) runs the same chain solves first to last,
// with dJ along the direction from one phys_constraint_dJ call; P is built from reverse passes (rows).
// Humanoid lying on the floor (nv 27, 2 contacts, 1 limit): step 8.7 us, A and B 0.97 ms (central
// differences 4.6 ms), VJP 36 us.
//
// Parameters: every kind of params.h's table through the smooth part and M~; penalty:stiffness (k in s, d
// and the limits), penalty:damping (c of the limits), friction:GEOM (mu of contacts whose friction is that
// geom's: no <pair>, the larger of the two), restitution:GEOM (through zeta and d), size:GEOM and pos:BODY
// (the contact geometry: the reverse pass's geometric weights through phys_constraint_param_vjp_matrix; pos
// also moves the dynamics, through the smooth part as every other kind).
//
// Equality constraints (issue 15 item 1): their spring-dampers J_e' Lambda (k r + c J_e (v + dt a_k)) join every
// Res_k and dt J_e' Lambda C J_e every H_k (penalty_dense's order; H dense), differentiated in q, v and theta by
// step_equality_penalty_deriv.h; with equality rows the step is always this tape's, contacts or not.
#include "penalty_deriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "contact_deriv.h"
#include "dyn.h"
#include "equality.h"
#include "factor.h"
#include "frictionloss_deriv.h"
#include "grad.h"
#include "rot.h"
#include "step.h"
#include "step_equality_penalty_deriv.h"

// the step's maximum number of solves (step.c's PHYS_PENALTY_SOLVES; test_penalty_deriv checks that the
// replayed v+ is phys_step's bit for bit)
#define PENALTY_SOLVES 3

//---------------------------------------------------------------------------------------------------------
// restitution of the clamped spring-damper: d eps / d zeta

// d eps/d zeta of phys_penalty_restitution, differentiating its closed forms (penalty.c) term by term:
//   zeta < 1: eps = e^-g N / wd, g = zeta th / wd, N = zeta sin th - wd cos th, th = atan2(2 zeta wd, 2 zeta^2 - 1)
//   zeta > 1: the same with s = sqrt(zeta^2 - 1), ph = atanh(2 zeta s / (2 zeta^2 - 1)), sinh, cosh.
// Within 1e-6 of zeta = 1 (the formulas' removable singularity) the mean of the two sides at 1 -+ 1e-3.
double phys_penalty_restitution_deriv(double zeta) {
  double z = zeta, z2 = z * z;
  if (fabs(z2 - 1) < 1e-6)
    return 0.5 * (phys_penalty_restitution_deriv(1 - 1e-3) + phys_penalty_restitution_deriv(1 + 1e-3));
  if (z < 1) {
    double wd = sqrt(1 - z2), dwd = -z / wd;
    double X = 2 * z2 - 1, Y = 2 * z * wd, dX = 4 * z, dY = 2 * wd + 2 * z * dwd;
    double th = atan2(Y, X), dth = (X * dY - Y * dX) / (X * X + Y * Y);
    double g = z * th / wd, dg = th / wd + z * dth / wd - z * th * dwd / (wd * wd);
    double E = exp(-g), dE = -E * dg;
    double N = z * sin(th) - wd * cos(th);
    double dN = sin(th) + z * cos(th) * dth - dwd * cos(th) + wd * sin(th) * dth;
    return dE * N / wd + E * dN / wd - E * N * dwd / (wd * wd);
  }
  double s = sqrt(z2 - 1), ds = z / s, X = 2 * z2 - 1;
  double U = 2 * z * s / X, dU = ((2 * s + 2 * z * ds) * X - 2 * z * s * 4 * z) / (X * X);
  double ph = atanh(U), dph = dU / (1 - U * U);
  double g = z * ph / s, dg = ph / s + z * dph / s - z * ph * ds / (s * s);
  double E = exp(-g), dE = -E * dg;
  double N = z * sinh(ph) - s * cosh(ph);
  double dN = sinh(ph) + z * cosh(ph) * dph - ds * cosh(ph) - s * sinh(ph) * dph;
  return dE * N / s + E * dN / s - E * N * ds / (s * s);
}

//---------------------------------------------------------------------------------------------------------
// the tape: the step replayed with what reverse mode needs

typedef struct penTape_ {
  int K;                   // solves
  int nc;                  // contacts at the state
  physContact* con;        // nc: the contacts the tape's detection found (arena memory; d->contact is not written)
  int nlim;                // active limit springs
  const int* parent;       // pattern of the H_k factors (NULL: dense)
  double* J;               // 3 nc x nv contact rows (zero for contacts that do not penetrate)
  physPenaltyContact* pc;  // initial linearization per contact (spring s, damping d)
  double* C;               // K x nc friction coefficient of solve k
  int* act;                // K x nc: 1 if the contact is active in solve k
  int* src;                // K x nc: velocity solve k's C was evaluated at (-1 v, j the v+ of solve j)
  double* a;               // K x nv accelerations a_k
  double* H;               // K x nv x nv factors of H_k
  double* y;               // nc x nv: M~^-1 J_n'
  double* w;               // nc: J_n M~^-1 J_n'
  double* zeta;            // nc damping ratios
  double* dzeta;           // nc: d zeta / d eps (0 where zeta is held)
  int* lim;                // nlim x 2: dof, side (0 lower, 1 upper)
  int ntl;                 // pushing tendon limit springs (phys_penalty_tendon_limits; issue 15 item 3)
  double* tr;              // ntl x nv: their rows r = +-dL/dq
  double* tK;              // ntl x nv x nv: dr/dq = +-d2L/dq2 (0 for fixed tendons)
  double* tdist;           // ntl: dist = +-(L - bound)
  int* tspring;            // ntl: the tendons
  int ntf;                 // tendon frictionloss rows (phys_penalty_tendon_frictionloss; issue 15 item 3)
  double* fr;              // ntf x nv: their rows r = dL/dq
  double* fK;              // ntf x nv x nv: dr/dq = d2L/dq2 (0 for fixed tendons)
  double* fC;              // ntf: C = F / max(|u|, v_slip), u = r.v
  double* fCp;             // ntf: dC/du = -F sign(u) / u^2 above v_slip, 0 below (held)
  int* fspring;            // ntf: the tendons
  physEqPenaltyPoint* eq;  // equality spring-dampers (NULL: none; step_equality_penalty_deriv.h)
  // torsional and rolling friction (issue 16): pc[i].ang rows, coefficients and their sources as C's
  int nang;                // active contacts with angular rows
  double* Ja;              // 3 nc x nv angular rows (zero for the others)
  double *Cs, *Cr;         // K x nc torsional and rolling coefficients of solve k
  int *srcs, *srcr;        // K x nc: the velocities they were evaluated at (as src)
  // contact i's dofs, cdof[cadr[i] .. cadr[i + 1]): the union of its two bodies' chains, ascending: the only
  // columns where its rows of J and Ja can be nonzero and where contact_deriv.h reads its weight rows
  int *cadr, *cdof;
} penTape;

// arena array of n ints (caller's mark)
static int* alloc_int(physData* d, size_t n) {
  return (int*)phys_stack_alloc(d, (n * sizeof(int) + sizeof(double) - 1) / sizeof(double) + 1);
}

// T->cadr, T->cdof (tape memory) from T's contacts: phys_chain_union's walk, reversed to ascending
static void contact_dofs(const physModel* m, physData* d, penTape* T) {
  int nc = T->nc, n = 0;
  int* s = alloc_int(d, (size_t)m->nv);
  T->cadr = alloc_int(d, (size_t)nc + 1);
  for (int i = 0; i < nc; i++) {
    const physContact* c = T->con + i;
    T->cadr[i] = n;
    n += phys_chain_union(m, phys_body_lastdof(m, m->geom_bodyid[c->geom[0]]),
                          phys_body_lastdof(m, m->geom_bodyid[c->geom[1]]), s);
  }
  T->cadr[nc] = n;
  T->cdof = alloc_int(d, (size_t)n);
  for (int i = 0; i < nc; i++) {
    const physContact* c = T->con + i;
    int ns = phys_chain_union(m, phys_body_lastdof(m, m->geom_bodyid[c->geom[0]]),
                              phys_body_lastdof(m, m->geom_bodyid[c->geom[1]]), s);
    for (int k = 0; k < ns; k++) T->cdof[T->cadr[i] + k] = s[ns - 1 - k];
  }
}

// active limit springs of phys_penalty_limits (its test, phys_penalty_limit_force): lim (2 per limit: dof,
// side); returns their number
static int active_limits(const physModel* m, const physData* d, int* lim) {
  if (m->opt.disableflags & PHYS_DSBL_LIMIT) return 0;
  int n = 0;
  for (int j = 0; j < m->njnt; j++)
    for (int side = 0; side < 2; side++) {
      if (!(phys_penalty_limit_force(m, d, j, side) > 0)) continue;
      if (lim) lim[2 * n] = m->jnt_dofadr[j], lim[2 * n + 1] = side;
      n++;
    }
  return n;
}

// the pushing tendon limit springs of phys_penalty_tendon_limits (its test: f = -k dist - c r.v > 0) into T: rows,
// their derivatives K = dr/dq (phys_spring_hessian, signed as the row), dist, tendons (arena, caller's mark)
static void tendon_limits_tape(const physModel* m, physData* d, penTape* T) {
  int nv = m->nv, na = m->nspring > 0 ? phys_tendon_limits_active(m, d, NULL, NULL) : 0;
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping;
  T->ntl = 0;
  if (na == 0) return;
  int* ten = alloc_int(d, (size_t)na);
  int* side = alloc_int(d, (size_t)na);
  T->tr = phys_stack_alloc(d, (size_t)na * nv);
  T->tK = phys_stack_alloc(d, (size_t)na * nv * nv);
  T->tdist = phys_stack_alloc(d, (size_t)na);
  T->tspring = alloc_int(d, (size_t)na);
  phys_tendon_limits_active(m, d, ten, side);
  for (int l = 0; l < na; l++) {
    double *r = T->tr + (size_t)T->ntl * nv, *K = T->tK + (size_t)T->ntl * nv * nv, rv = 0;
    double dist = phys_tendon_limit_row(m, d, ten[l], side[l], r);
    for (int i = 0; i < nv; i++) rv += r[i] * d->qvel[i];
    if (!(-k * dist - c * rv > 0)) continue;   // (phys_penalty_tendon_limits' test)
    size_t mark = phys_stack_mark(d);
    double* JL = phys_stack_alloc(d, (size_t)nv);
    phys_spring_hessian(m, d, ten[l], JL, K);
    phys_stack_free(d, mark);
    if (side[l] == 1)
      for (size_t i = 0; i < (size_t)nv * nv; i++) K[i] = -K[i];
    T->tdist[T->ntl] = dist;
    T->tspring[T->ntl++] = ten[l];
  }
}

// the tendon frictionloss rows of phys_penalty_tendon_frictionloss into T: rows r, K = dr/dq (phys_spring_hessian),
// C and dC/du at the start rate u = r.v (arena, caller's mark)
static void tendon_friction_tape(const physModel* m, physData* d, penTape* T) {
  int nv = m->nv, n = m->nspring > 0 ? phys_tendon_frictionloss_rows(m, d, NULL, NULL) : 0;
  double vs = m->opt.penalty_vslip;
  T->ntf = n;
  if (n == 0) return;
  T->fr = phys_stack_alloc(d, (size_t)n * nv);
  T->fK = phys_stack_alloc(d, (size_t)n * nv * nv);
  T->fC = phys_stack_alloc(d, (size_t)n);
  T->fCp = phys_stack_alloc(d, (size_t)n);
  T->fspring = alloc_int(d, (size_t)n);
  double* F = phys_stack_alloc(d, (size_t)n);
  phys_tendon_frictionloss_rows(m, d, T->fr, F);
  for (int s = 0, l = 0; s < m->nspring; s++) {   // (the rows' order: phys_tendon_frictionloss_rows)
    if (!(m->spring_frictionloss[s] > 0)) continue;
    const double* r = T->fr + (size_t)l * nv;
    double u = 0;
    for (int i = 0; i < nv; i++) u += r[i] * d->qvel[i];
    T->fC[l] = F[l] / fmax(fabs(u), vs);
    T->fCp[l] = fabs(u) > vs ? -F[l] * (u > 0 ? 1 : -1) / (u * u) : 0;
    size_t mark = phys_stack_mark(d);
    double* JL = phys_stack_alloc(d, (size_t)nv);
    phys_spring_hessian(m, d, s, JL, T->fK + (size_t)l * nv * nv);
    phys_stack_free(d, mark);
    T->fspring[l++] = s;
  }
}

// tau = passive + actuator + applied + J' xfrc_applied (the step's force without bias; needs phys_passive,
// phys_actuation)
static void step_force(const physModel* m, physData* d, double* tau) {
  for (int i = 0; i < m->nv; i++) tau[i] = d->qfrc_passive[i] + d->qfrc_actuator[i] + d->qfrc_applied[i];
  for (int b = 1; b < m->nbody; b++) {
    const double* x = d->xfrc_applied + 6 * b;
    if (x[0] != 0 || x[1] != 0 || x[2] != 0 || x[3] != 0 || x[4] != 0 || x[5] != 0)
      phys_apply_force(m, d, tau, b, d->xipos + 3 * b, x, x + 3);
  }
}

// per penetrating contact: y_i = M~^-1 J_n', w_i = J_n y_i, zeta_i and d zeta_i / d eps (qLD: M~'s factor)
static void contact_masses(const physModel* m, const double* qLD, penTape* T) {
  int nv = m->nv;
  for (int i = 0; i < T->nc; i++) {
    const physContact* c = T->con + i;
    double* y = T->y + (size_t)i * nv;
    const double* jn = T->J + (size_t)(3 * i) * nv;
    memset(y, 0, sizeof(double) * (size_t)nv);
    T->w[i] = T->zeta[i] = T->dzeta[i] = 0;
    if (!(c->dist < 0)) continue;
    phys_solve_m(m, qLD, y, jn);
    for (int k = 0; k < nv; k++) T->w[i] += jn[k] * y[k];
    double eps = c->restitution;
    if (eps >= 1) continue;
    double z = eps > 0 ? phys_penalty_zeta(eps) : INFINITY;
    T->zeta[i] = fmin(z, PHYS_PENALTY_ZETA_MAX);
    if (eps > 0 && z < PHYS_PENALTY_ZETA_MAX) T->dzeta[i] = 1 / phys_penalty_restitution_deriv(z);
  }
}

// the solves of penalty_dense (or the single solve of penalty_velocity's contact-free path), replayed with
// the coefficients of every solve recorded; rhs = tau + f_limit - c, add = alim + dt B
// 1 if contact i is frictionless and sliding faster than v_slip: its C = 0 whatever the slip, so the step keeps
// C's source where it is when the slip stays put (a symmetric slide), but for any mu > 0 the friction changes
// the slip and C is re-evaluated at this solve's velocity. The tape takes that branch, so that d/dmu at mu = 0
// is the right derivative mu f_n(w) / slip(w) at the new velocity w (the later solves repeat the first: C = 0)
static int slips_at_right(const physModel* m, const penTape* T, const physPenaltyContact* p, int i) {
  return T->con[i].mu == 0 && p->slip > m->opt.penalty_vslip;
}

// after phys_penalty_update of solve it: the torsional and rolling coefficients re-evaluated together when a
// slip of theirs changed (ang_coefficients, penalty.c) move their sources (srcsr: nc Cs's, then nc Cr's) to
// this solve; a coefficient of mu 0 spinning or rolling faster than v_slip moves alone, as slips_at_right.
// Returns 1 if a source moved
static int angular_sources(const physModel* m, const physPenaltyContact* cur, const physPenaltyContact* old, int nc,
                           int it, int* srcsr) {
  int moved = 0;
  double vs = m->opt.penalty_vslip;
  for (int i = 0; i < nc; i++) {
    const physPenaltyContact* p = cur + i;
    if (!p->active || !p->ang) continue;
    int slip = p->slip_s != old[i].slip_s || p->slip_r != old[i].slip_r;
    int sr = slip || (p->mu_spin == 0 && p->slip_s > vs), rr = slip || (p->mu_roll == 0 && p->slip_r > vs);
    if (sr) srcsr[i] = it;
    if (rr) srcsr[nc + i] = it;
    moved |= sr || rr;
  }
  return moved;
}

static physStatus replay_solves(const physModel* m, physData* d, penTape* T, const double* rhs0,
                                const double* add) {
  int nv = m->nv, nc = T->nc;
  double dt = m->opt.timestep;
  size_t nn = (size_t)nv * nv, mark = phys_stack_mark(d);
  physPenaltyContact* cur = (physPenaltyContact*)phys_stack_alloc(
      d, ((size_t)nc * sizeof(physPenaltyContact) + sizeof(double) - 1) / sizeof(double) + 1);
  physPenaltyContact* old = (physPenaltyContact*)phys_stack_alloc(
      d, ((size_t)nc * sizeof(physPenaltyContact) + sizeof(double) - 1) / sizeof(double) + 1);
  int* src = alloc_int(d, 3 * (size_t)nc);   // C's, Cs's, Cr's
  double* vnew = phys_stack_alloc(d, (size_t)nv);
  memcpy(cur, T->pc, sizeof(physPenaltyContact) * (size_t)nc);
  for (int i = 0; i < 3 * nc; i++) src[i] = -1;
  physStatus st = PHYS_OK;
  for (int it = 0; it < PENALTY_SOLVES; it++) {
    // H_k a_k = rhs_k (penalty_dense's loop body)
    double *H = T->H + it * nn, *a = T->a + (size_t)it * nv;
    memcpy(H, d->qM, sizeof(double) * nn);
    for (int i = 0; i < nv; i++) {
      H[i * nv + i] += add[i];
      a[i] = rhs0[i];
    }
    phys_penalty_assemble(m, d, nc, cur, T->J, a, H);
    if (T->eq) phys_equality_penalty_assemble(m, d, &T->eq->er, a, H);
    if (T->ntl > 0 || T->ntf > 0)   // (penalty_dense's order)
      phys_penalty_tendon_limits(m, d, NULL, H, NULL), phys_penalty_tendon_frictionloss(m, d, NULL, H, NULL);
    if (phys_ldl_factor(H, T->parent, nv) != nv) {
      phys_data_warning(d, "phys_step_jacobian: penalty matrix not positive definite at time %g", d->time);
      st = PHYS_ERR_NUMERIC;
      break;
    }
    phys_ldl_solve(a, H, T->parent, a, nv);
    for (int i = 0; i < nc; i++) {
      T->C[it * nc + i] = cur[i].active ? cur[i].C : 0;
      T->act[it * nc + i] = cur[i].active;
      T->src[it * nc + i] = src[i];
      T->Cs[it * nc + i] = cur[i].active && cur[i].ang ? cur[i].Cs : 0;
      T->Cr[it * nc + i] = cur[i].active && cur[i].ang ? cur[i].Cr : 0;
      T->srcs[it * nc + i] = src[nc + i];
      T->srcr[it * nc + i] = src[2 * nc + i];
    }
    T->K = it + 1;
    if (it + 1 >= PENALTY_SOLVES) break;
    // phys_penalty_update at v+ = v + dt a_k: a changed slip moves C's source to this solve
    for (int i = 0; i < nv; i++) vnew[i] = d->qvel[i] + dt * a[i];
    memcpy(old, cur, sizeof(physPenaltyContact) * (size_t)nc);
    int changed = phys_penalty_update(m, T->con, nc, cur, T->J, vnew);
    for (int i = 0; i < nc; i++)
      if (cur[i].active && (cur[i].slip != old[i].slip || slips_at_right(m, T, cur + i, i))) {
        src[i] = it;
        changed = 1;
      }
    changed |= angular_sources(m, cur, old, nc, it, src + nc);
    if (!changed) break;
  }
  phys_stack_free(d, mark);
  return st;
}

// parent <- the elimination tree of the step's matrix with the contacts con (nc): fill only inside each island
// of trees the contacts couple (phys_penalty_etree); returns parent
static const int* penalty_etree(const physModel* m, physData* d, const physContact* con, int nc, int* parent) {
  phys_penalty_etree(m, d, con, nc, parent);
  return parent;
}

// the linearization at d's state into T (arena memory of the caller's mark): kinematics, contacts detected
// into T->con (d->contact, the caller's list, is not written), qM, qfrc_bias, forces, limits, every solve of
// the step; d->qacc = a_{K-1}
static physStatus tape_build(const physModel* m, physData* d, penTape* T) {
  int nv = m->nv;
  if (!phys_grad_balls_last(m)) return PHYS_ERR_MODEL;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  physContactList det = phys_contact_list_arena(d);
  det.n = 0;
  if (!(m->opt.disableflags & PHYS_DSBL_CONTACT)) phys_collision_into(m, d, &det);
  int nc = T->nc = det.n;
  T->con = det.con;
  contact_dofs(m, d, T);
  phys_crb(m, d);
  phys_bias_forces(m, d);
  phys_passive(m, d);
  phys_actuation(m, d);

  size_t nn = (size_t)nv * nv;
  T->J = phys_stack_alloc(d, 3 * (size_t)nc * nv + 1);
  T->pc = (physPenaltyContact*)phys_stack_alloc(
      d, ((size_t)nc * sizeof(physPenaltyContact) + sizeof(double) - 1) / sizeof(double) + 1);
  T->C = phys_stack_alloc(d, PENALTY_SOLVES * (size_t)nc + 1);
  T->Cs = phys_stack_alloc(d, PENALTY_SOLVES * (size_t)nc + 1);
  T->Cr = phys_stack_alloc(d, PENALTY_SOLVES * (size_t)nc + 1);
  T->srcs = alloc_int(d, PENALTY_SOLVES * (size_t)nc);
  T->srcr = alloc_int(d, PENALTY_SOLVES * (size_t)nc);
  T->Ja = phys_stack_alloc(d, 3 * (size_t)nc * nv + 1);
  T->act = alloc_int(d, PENALTY_SOLVES * (size_t)nc);
  T->src = alloc_int(d, PENALTY_SOLVES * (size_t)nc);
  T->a = phys_stack_alloc(d, PENALTY_SOLVES * (size_t)nv);
  T->H = phys_stack_alloc(d, PENALTY_SOLVES * nn);
  T->y = phys_stack_alloc(d, (size_t)nc * nv + 1);
  T->w = phys_stack_alloc(d, (size_t)nc + 1);
  T->zeta = phys_stack_alloc(d, (size_t)nc + 1);
  T->dzeta = phys_stack_alloc(d, (size_t)nc + 1);
  T->nlim = active_limits(m, d, NULL);
  T->lim = alloc_int(d, 2 * (size_t)T->nlim);
  active_limits(m, d, T->lim);
  tendon_limits_tape(m, d, T);
  tendon_friction_tape(m, d, T);
  memset(T->J, 0, sizeof(double) * 3 * (size_t)nc * nv);
  memset(T->Ja, 0, sizeof(double) * 3 * (size_t)nc * nv);

  // M~ = qM + dt B factored (qLD) for the Delassus diagonals and the equality rows (tape memory); rhs = tau +
  // f_limit - c, add = alim + dt B
  double* madd = phys_stack_alloc(d, (size_t)nv);
  double* qLD = phys_stack_alloc(d, nn);
  phys_implicit_damping_add(m, madd);
  int factored = phys_factor_m(m, qLD, d->qM, madd) == nv;
  if (factored) T->eq = phys_equality_penalty_point(m, d, qLD);
  int* parent = alloc_int(d, (size_t)nv);   // (tape memory)
  size_t mark = phys_stack_mark(d);
  double* rhs = phys_stack_alloc(d, (size_t)nv);
  double* flim = phys_stack_alloc(d, (size_t)nv);
  double* add = phys_stack_alloc(d, (size_t)nv);
  memset(flim, 0, sizeof(double) * (size_t)nv);
  memset(add, 0, sizeof(double) * (size_t)nv);
  phys_penalty_limits(m, d, flim, add);
  if (T->ntl > 0) phys_penalty_tendon_limits(m, d, flim, NULL, NULL);   // (f - dt k r.v) r
  if (T->ntf > 0) phys_penalty_tendon_frictionloss(m, d, flim, NULL, NULL);   // -C u r
  phys_penalty_frictionloss(m, d, flim, add);   // (step.c's order: limits, tendon limits and frictionloss, joints')
  step_force(m, d, rhs);
  for (int i = 0; i < nv; i++) {
    add[i] += madd[i];
    rhs[i] = rhs[i] + flim[i] - d->qfrc_bias[i];   // step.c's order: (tau + f_limit) - c
  }
  physStatus st = PHYS_OK;
  if (!factored) {
    phys_data_warning(d, "phys_step_jacobian: M + dt B not positive definite at time %g", d->time);
    st = PHYS_ERR_NUMERIC;
  }
  if (st == PHYS_OK) {
    // H_k's elimination tree as step.c's penalty_dense (r r' and the equality rows: dense)
    T->parent = T->ntl == 0 && T->ntf == 0 && m->neq == 0 ? penalty_etree(m, d, T->con, nc, parent) : NULL;
    if (nc > 0) phys_penalty_contacts(m, d, T->con, nc, qLD, T->pc, T->J);
    if (nc > 0) T->nang = phys_penalty_contacts_ang(m, d, T->con, nc, T->pc, T->J, T->Ja);   // (step.c's order)
    contact_masses(m, qLD, T);
    st = replay_solves(m, d, T, rhs, add);
  }
  if (st == PHYS_OK) memcpy(d->qacc, T->a + (size_t)(T->K - 1) * nv, sizeof(double) * (size_t)nv);
  phys_stack_free(d, mark);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// reverse mode on the tape

// res (3) = J_i x for the 3 rows of J_i (3 x nv), contact i's rows of J or Ja: summed over its dofs (T->cdof,
// ascending), the only nonzero columns (the same sums as over every column: the others add exact zeros)
static void rows_mul(double res[3], const double* Ji, const double* x, int nv, const penTape* T, int i) {
  const int *s = T->cdof + T->cadr[i], ns = T->cadr[i + 1] - T->cadr[i];
  res[0] = res[1] = res[2] = 0;
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < ns; k++) res[r] += Ji[r * nv + s[k]] * x[s[k]];
}

// res (nv) += s J_i' f on contact i's dofs (its rows of J or Ja)
static void rows_tmul_add(double* res, const double* Ji, const double f[3], double s, int nv, const penTape* T,
                          int i) {
  const int *c = T->cdof + T->cadr[i], nc = T->cadr[i + 1] - T->cadr[i];
  for (int k = 0; k < nc; k++) {
    int j = c[k];
    res[j] += s * (Ji[j] * f[0] + Ji[nv + j] * f[1] + Ji[2 * nv + j] * f[2]);
  }
}

// the reverse pass's accumulators and scratch (arena memory of the caller's mark)
typedef struct penAdj_ {
  double *qbar, *vbar, *ubar, *tbar;   // nv, nv, nu, ntheta
  double *abar;                        // K x nv
  double *sbar, *dbar, *mubar;         // nc each: adjoints of s_i, d_i, mu_i
  double *alphaS;                      // (K + 1) x 3nc: row adjoints of C's sources (v, v+_0, ...)
  double kbar, cbar;                   // penalty stiffness and (limit) damping
  double *lam, *tmp, *tmp2, *tt;       // nv, nv, nv, ntheta
  double *alphaF, *alphaX, *x;         // 3nc, 3nc, nv
  double *Wq, *gam;                    // 3nc x nv, 3nc: weights of the geometry's gradient (geometry_vjp)
  // the angular rows (issue 16): adjoints of mu_spin, mu_roll (nc each), row adjoints of Cs's and Cr's sources
  // ((K + 1) x 3nc, as alphaS), the rows' weights of a solve (3nc each) and of their gradient (3nc x nv)
  double *mubs, *mubr, *alphaSa, *alphaFa, *alphaXa, *Wa;
} penAdj;

// the problem of T's contacts for contact_deriv.h (rows J, no limit rows)
static physConstraintProblem contact_problem(const physModel* m, const penTape* T) {
  physConstraintProblem p;
  memset(&p, 0, sizeof p);
  p.nc = T->nc;
  p.con = T->con;
  p.nl = 0;
  p.n = 3 * T->nc;
  p.nv = m->nv;
  p.J = T->J;
  return p;
}

// W (3nc x nv) += alpha beta' (alpha or beta NULL: nothing) on each row's contact's dofs, the only entries
// contact_deriv.h reads (phys_constraint_vjp_matrix, phys_angular_vjp_matrix: a contact's chains)
static void weights_row_add(double* W, int r, double alpha, const double* beta, const penTape* T, int nv) {
  const int *s = T->cdof + T->cadr[r / 3], ns = T->cadr[r / 3 + 1] - T->cadr[r / 3];
  for (int k = 0; alpha != 0 && k < ns; k++) W[(size_t)r * nv + s[k]] += alpha * beta[s[k]];
}
static void weights_add(double* W, const double* alpha, const double* beta, const penTape* T, int nv) {
  for (int r = 0; alpha && beta && r < 3 * T->nc; r++) weights_row_add(W, r, alpha[r], beta, T, nv);
}

// the weights W (3nc x nv, arena of the caller's mark), zero where weights_add writes; dense: zero everywhere
// (the placement parameters' terms of phys_constraint_param_vjp_matrix read every entry)
static double* weights_alloc(physData* d, const penTape* T, int nv, int dense) {
  size_t n = 3 * (size_t)T->nc * nv;
  double* W = phys_stack_alloc(d, n + 1);
  if (dense) memset(W, 0, sizeof(double) * n);
  for (int r = 0; !dense && r < 3 * T->nc; r++)
    for (int k = T->cadr[r / 3]; k < T->cadr[r / 3 + 1]; k++) W[(size_t)r * nv + T->cdof[k]] = 0;
  return W;
}

// q_bar gains grad_q [alpha' J(q) beta + gamma' dist(q)] (alpha, beta or gamma may be NULL): accumulated as
// the weights Wq += alpha beta', gam += gamma, applied once by geometry_flush
static void geometry_vjp(const physModel* m, const penTape* T, const double* alpha, const double* beta,
                         const double* gamma, penAdj* A) {
  weights_add(A->Wq, alpha, beta, T, m->nv);
  for (int r = 0; gamma && r < 3 * T->nc; r++) A->gam[r] += gamma[r];
}

// qbar += grad_q [<Wq, J(q)> + gam' dist(q)] by one call of contact_deriv.h (the geometry computed once), and
// the same weights' gradient in the geometric parameters (size:GEOM, pos:BODY) of t into tbar
static physStatus geometry_flush(const physModel* m, physData* d, const penTape* T, const physParamTable* t,
                                 penAdj* A) {
  if (T->nc == 0) return PHYS_OK;
  physConstraintProblem p = contact_problem(m, T);
  physStatus st = phys_constraint_vjp_matrix(m, d, &p, A->Wq, A->gam, A->qbar);
  if (st == PHYS_OK && T->nang > 0) st = phys_angular_vjp_matrix(m, d, &p, A->Wa, A->qbar);
  if (st == PHYS_OK && t && A->tbar) st = phys_constraint_param_vjp_matrix(m, d, &p, t, A->Wq, A->gam, A->tbar);
  return st;
}

// smooth part of solve k in reverse: qbar -= dRNEA/dq' lambda, vbar -= dRNEA/dv' lambda at a_k, plus the
// applied forces' transposed derivatives; tbar += -R(a_k)' lambda (params.h)
static void smooth_reverse(const physModel* m, physData* d, const physParamTable* t, const double* ak,
                           penAdj* A) {
  int nv = m->nv;
  phys_rnea_vjp(m, d, ak, A->lam, A->tmp, A->tmp2, NULL);
  for (int i = 0; i < nv; i++) A->qbar[i] -= A->tmp[i], A->vbar[i] -= A->tmp2[i];
  phys_passive_vjp(m, d, A->lam, A->qbar, A->vbar, A->ubar);
  phys_actuation_vjp(m, d, A->lam, A->qbar, A->vbar, A->ubar);
  phys_xfrc_vjp(m, d, A->lam, A->qbar);
  if (t && t->ntheta > 0 && A->tbar) {
    phys_param_forces_vjp(m, d, t, ak, A->lam, A->tt);
    for (int i = 0; i < t->ntheta; i++) A->tbar[i] += A->tt[i];
  }
}

// limit springs of solve k in reverse, Res_j = (dt c + dt^2 k) a_j + k (q_j - q_lim) + (c + dt k) v_j
static void limits_reverse(const physModel* m, const physData* d, const penTape* T, const double* ak, penAdj* A) {
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, dt = m->opt.timestep;
  for (int l = 0; l < T->nlim; l++) {
    int dof = T->lim[2 * l], side = T->lim[2 * l + 1], j = m->dof_jntid[dof];
    double q = d->qpos[m->jnt_qposadr[j]], v = d->qvel[dof], lam = A->lam[dof];
    double qlim = m->jnt_range[2 * j + side];
    A->qbar[dof] -= k * lam;
    A->vbar[dof] -= (c + dt * k) * lam;
    A->kbar -= (dt * dt * ak[dof] + (q - qlim) + dt * v) * lam;
    A->cbar -= (dt * ak[dof] + v) * lam;
  }
}

// the part of tendon limit spring l in Res_k: g r with g = k dist + (c + dt k) r.v + A r.a_k, A = dt c + dt^2 k
// (tendon_rows.c: its force at the step's end is -g; A r r' is in H_k); u = (c + dt k) K' v + A K' a_k, the
// q-gradient of g beside k r (K = dr/dq), into u (nv); returns g
static double tendon_limit_terms(const physModel* m, const physData* d, const penTape* T, int l, const double* ak,
                                 double* u) {
  int nv = m->nv;
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, dt = m->opt.timestep;
  double cv = c + dt * k, A = dt * c + dt * dt * k, rv = 0, ra = 0;
  const double *r = T->tr + (size_t)l * nv, *K = T->tK + (size_t)l * nv * nv;
  for (int i = 0; i < nv; i++) rv += r[i] * d->qvel[i], ra += r[i] * ak[i];
  for (int j = 0; j < nv; j++) u[j] = 0;
  for (int i = 0; i < nv; i++) {
    double w = cv * d->qvel[i] + A * ak[i];
    if (w == 0) continue;
    for (int j = 0; j < nv; j++) u[j] += w * K[(size_t)i * nv + j];
  }
  return k * T->tdist[l] + cv * rv + A * ra;
}

// tendon limit springs of solve k in reverse: d(g r) = r (k r + u)' dq + g K dq + (c + dt k) r r' dv, and
// dg/dk = dist + dt r.v + dt^2 r.a_k, dg/dc = r.v + dt r.a_k (tendon_limit_terms)
static void tendon_limits_reverse(const physModel* m, const physData* d, const penTape* T, const double* ak,
                                  penAdj* A) {
  int nv = m->nv;
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, dt = m->opt.timestep;
  for (int l = 0; l < T->ntl; l++) {
    const double *r = T->tr + (size_t)l * nv, *K = T->tK + (size_t)l * nv * nv;
    double g = tendon_limit_terms(m, d, T, l, ak, A->tmp), rl = 0, rv = 0, ra = 0;
    for (int i = 0; i < nv; i++) rl += r[i] * A->lam[i], rv += r[i] * d->qvel[i], ra += r[i] * ak[i];
    for (int j = 0; j < nv; j++) {
      double s = 0;   // (K' lam)_j
      for (int i = 0; i < nv; i++) s += K[(size_t)i * nv + j] * A->lam[i];
      A->qbar[j] -= rl * (k * r[j] + A->tmp[j]) + g * s;
      A->vbar[j] -= (c + dt * k) * r[j] * rl;
    }
    A->kbar -= (T->tdist[l] + dt * rv + dt * dt * ra) * rl;
    A->cbar -= (rv + dt * ra) * rl;
  }
}

// the part of tendon frictionloss row l in Res_k: g r with g = C w, w = r.(v + dt a_k) (tendon_rows.c: the force
// -C u+ at the step's end; dt C r r' is in H_k) and C = C(u), u = r.v; beside C' w r.dv + C r.dv and g K dq, its
// q-gradient u_q = C' w K'v + C K'(v + dt a_k) (K = dr/dq) into uq (nv); returns g, *cw = C' w + C
static double tendon_friction_terms(const physModel* m, const physData* d, const penTape* T, int l, const double* ak,
                                    double* uq, double* cw) {
  int nv = m->nv;
  double dt = m->opt.timestep, w = 0, C = T->fC[l], Cp = T->fCp[l];
  const double *r = T->fr + (size_t)l * nv, *K = T->fK + (size_t)l * nv * nv;
  for (int i = 0; i < nv; i++) w += r[i] * (d->qvel[i] + dt * ak[i]);
  for (int j = 0; j < nv; j++) uq[j] = 0;
  for (int i = 0; i < nv; i++) {
    double z = (Cp * w + C) * d->qvel[i] + C * dt * ak[i];
    if (z == 0) continue;
    for (int j = 0; j < nv; j++) uq[j] += z * K[(size_t)i * nv + j];
  }
  *cw = Cp * w + C;
  return C * w;
}

// tendon frictionloss rows of solve k in reverse: d(g r) = r (u_q . dq + cw r . dv) + g K dq
static void tendon_friction_reverse(const physModel* m, const physData* d, const penTape* T, const double* ak,
                                    penAdj* A) {
  int nv = m->nv;
  for (int l = 0; l < T->ntf; l++) {
    const double *r = T->fr + (size_t)l * nv, *K = T->fK + (size_t)l * nv * nv;
    double cw, g = tendon_friction_terms(m, d, T, l, ak, A->tmp, &cw), rl = 0;
    for (int i = 0; i < nv; i++) rl += r[i] * A->lam[i];
    for (int j = 0; j < nv; j++) {
      double s = 0;   // (K' lam)_j
      for (int i = 0; i < nv; i++) s += K[(size_t)i * nv + j] * A->lam[i];
      A->qbar[j] -= rl * A->tmp[j] + g * s;
      A->vbar[j] -= cw * r[j] * rl;
    }
  }
}

// joint frictionloss of solve k in reverse (frictionloss_deriv.h): Res_k gains C (v + dt a_k) on each friction
// dof, C = F / max(|v|, v_slip) (dt C a_k is in H_k): vbar -= (C + C' v+_k) lambda, tbar -= (v+_k / s) lambda
// for the frictionloss entries
static void frictionloss_reverse(const physModel* m, physData* d, const physParamTable* t, const double* ak,
                                 penAdj* A) {
  if (m->nfrictionloss == 0) return;
  size_t mark = phys_stack_mark(d);
  physFrictionPoint* fp = phys_friction_point_penalty(m, d, ak);
  phys_friction_dfdv_vjp(m, fp, A->lam, A->vbar);
  if (t && t->ntheta > 0 && A->tbar && phys_friction_in_table(t))
    phys_friction_param_vjp(m, fp, t, NULL, A->lam, A->tbar);
  phys_stack_free(d, mark);
}

// C_i^k = mu fn(w) / slip(w) in reverse (Cbar its adjoint): w = v (j = -1) or v+ of solve j
static void friction_reverse(const physModel* m, const physData* d, const penTape* T, int i, int j, double Cbar,
                             penAdj* A) {
  int nv = m->nv, nc = T->nc;
  double dt = m->opt.timestep, vs = m->opt.penalty_vslip, mu = T->con[i].mu;
  const double* Ji = T->J + (size_t)(3 * i) * nv;
  const physPenaltyContact* p = T->pc + i;
  double* w = A->tmp;
  for (int k = 0; k < nv; k++) w[k] = d->qvel[k] + (j >= 0 ? dt * T->a[(size_t)j * nv + k] : 0);
  double wv[3];
  rows_mul(wv, Ji, w, nv, T, i);
  double fn = p->spring - p->damping * wv[0], ht = hypot(wv[1], wv[2]), slip = fmax(ht, vs);
  // C = mu fn / slip: mu_bar, fn_bar, slip_bar; fn = s - d w_n; slip = |w_t| above v_slip
  A->mubar[i] += Cbar * fn / slip;
  double fnb = Cbar * mu / slip, slb = -Cbar * mu * fn / (slip * slip);
  A->sbar[i] += fnb;
  A->dbar[i] -= fnb * wv[0];
  double wb[3] = {-fnb * p->damping, ht > vs ? slb * wv[1] / ht : 0, ht > vs ? slb * wv[2] / ht : 0};
  double* as = A->alphaS + (size_t)(j + 1) * 3 * nc + 3 * i;
  for (int r = 0; r < 3; r++) as[r] += wb[r];
  // w_bar = J_i' wb: to v, and to a_j's adjoint through v+_j = v + dt a_j
  rows_tmul_add(A->vbar, Ji, wb, 1, nv, T, i);
  if (j >= 0) rows_tmul_add(A->abar + (size_t)j * nv, Ji, wb, dt, nv, T, i);
}

// an angular coefficient of contact i in reverse (Cbar its adjoint, into *mubar its mu's): C = mu fn(w) /
// slip(w), fn = s - d J_n w, slip = max(|(A_i w)_r0..r1|, v_slip) (rows 0..0: torsion's Cs, 1..2: rolling's
// Cr), w = v (j = -1) or v+ of solve j; w_bar = J_n' wb_n + A_i' wb_a to v and a_j's adjoint, the rows' weights
// to the sources' (alphaS, alphaSa)
static void angcoef_reverse(const physModel* m, const physData* d, const penTape* T, int i, int j, int r0, int r1,
                            double mu, double Cbar, double* mubar, penAdj* A) {
  int nv = m->nv, nc = T->nc;
  double dt = m->opt.timestep, vs = m->opt.penalty_vslip;
  const double *Ji = T->J + (size_t)(3 * i) * nv, *Ai = T->Ja + (size_t)(3 * i) * nv;
  const physPenaltyContact* p = T->pc + i;
  double* w = A->tmp;
  for (int k = 0; k < nv; k++) w[k] = d->qvel[k] + (j >= 0 ? dt * T->a[(size_t)j * nv + k] : 0);
  double wv[3], wa[3], ht = 0;
  rows_mul(wv, Ji, w, nv, T, i);
  rows_mul(wa, Ai, w, nv, T, i);
  for (int r = r0; r <= r1; r++) ht += wa[r] * wa[r];
  ht = sqrt(ht);
  double fn = p->spring - p->damping * wv[0], slip = fmax(ht, vs);
  *mubar += Cbar * fn / slip;
  double fnb = Cbar * mu / slip, slb = -Cbar * mu * fn / (slip * slip);
  A->sbar[i] += fnb;
  A->dbar[i] -= fnb * wv[0];
  double wb[3] = {-fnb * p->damping, 0, 0}, wba[3] = {0, 0, 0};
  for (int r = r0; r <= r1; r++) wba[r] = ht > vs ? slb * wa[r] / ht : 0;
  double *as = A->alphaS + (size_t)(j + 1) * 3 * nc + 3 * i, *asa = A->alphaSa + (size_t)(j + 1) * 3 * nc + 3 * i;
  for (int r = 0; r < 3; r++) as[r] += wb[r], asa[r] += wba[r];
  rows_tmul_add(A->vbar, Ji, wb, 1, nv, T, i);
  rows_tmul_add(A->vbar, Ai, wba, 1, nv, T, i);
  if (j >= 0) rows_tmul_add(A->abar + (size_t)j * nv, Ji, wb, dt, nv, T, i);
  if (j >= 0) rows_tmul_add(A->abar + (size_t)j * nv, Ai, wba, dt, nv, T, i);
}

// contact i's angular rows A_i in solve k in reverse: Res_k -= A_i' T_i(x), T_i = (-Cs (A_i x)_0, -Cr (A_i x)_1,
// -Cr (A_i x)_2), x = A->x; lambda' dRes = -T . (dA lambda) - phi . dT, phi = A_i lambda (the dt da part is H_k's)
static void angular_reverse(const physModel* m, const physData* d, const penTape* T, int k, int i, penAdj* A) {
  int nv = m->nv, nc = T->nc;
  const double* Ai = T->Ja + (size_t)(3 * i) * nv;
  const physPenaltyContact* p = T->pc + i;
  double Cs = T->Cs[k * nc + i], Cr = T->Cr[k * nc + i], phi[3], xa[3], c[3] = {Cs, Cr, Cr}, wphi[3];
  rows_mul(phi, Ai, A->lam, nv, T, i);
  rows_mul(xa, Ai, A->x, nv, T, i);
  for (int r = 0; r < 3; r++) {
    A->alphaFa[3 * i + r] = -c[r] * xa[r];
    A->alphaXa[3 * i + r] = -c[r] * phi[r];
    wphi[r] = c[r] * phi[r];
  }
  rows_tmul_add(A->vbar, Ai, wphi, -1, nv, T, i);
  angcoef_reverse(m, d, T, i, T->srcs[k * nc + i], 0, 0, p->mu_spin, -phi[0] * xa[0], A->mubs + i, A);
  angcoef_reverse(m, d, T, i, T->srcr[k * nc + i], 1, 2, p->mu_roll, -(phi[1] * xa[1] + phi[2] * xa[2]),
                  A->mubr + i, A);
}

// contacts of solve k in reverse: Res_k -= sum J_i' F_i(x), x = v + dt a_k; lambda = A->lam
static physStatus contacts_reverse(const physModel* m, physData* d, const penTape* T, int k, penAdj* A) {
  int nv = m->nv, nc = T->nc, any = 0;
  double dt = m->opt.timestep;
  const double* ak = T->a + (size_t)k * nv;
  for (int j = 0; j < nv; j++) A->x[j] = d->qvel[j] + dt * ak[j];
  memset(A->alphaF, 0, sizeof(double) * 3 * (size_t)nc);
  memset(A->alphaX, 0, sizeof(double) * 3 * (size_t)nc);
  memset(A->alphaFa, 0, sizeof(double) * 3 * (size_t)nc);
  memset(A->alphaXa, 0, sizeof(double) * 3 * (size_t)nc);
  for (int i = 0; i < nc; i++) {
    if (!T->act[k * nc + i]) continue;
    any = 1;
    if (T->pc[i].ang) angular_reverse(m, d, T, k, i, A);
    const double* Ji = T->J + (size_t)(3 * i) * nv;
    const physPenaltyContact* p = T->pc + i;
    double C = T->C[k * nc + i], phi[3], xv[3];
    rows_mul(phi, Ji, A->lam, nv, T, i);
    rows_mul(xv, Ji, A->x, nv, T, i);
    // lambda' dRes = -F . (dJ lambda) - phi . dF,  dF = (ds - dd x_n - d dJ_n x - d J_n dv, -dC x_t - C dJ_t x
    // - C J_t dv)  (the dt da part is H_k's)
    double* aF = A->alphaF + 3 * i;
    double* aX = A->alphaX + 3 * i;
    aF[0] = p->spring - p->damping * xv[0];
    aF[1] = -C * xv[1];
    aF[2] = -C * xv[2];
    aX[0] = -p->damping * phi[0];
    aX[1] = -C * phi[1];
    aX[2] = -C * phi[2];
    A->sbar[i] += phi[0];
    A->dbar[i] -= phi[0] * xv[0];
    double wphi[3] = {p->damping * phi[0], C * phi[1], C * phi[2]};
    rows_tmul_add(A->vbar, Ji, wphi, -1, nv, T, i);
    double Cbar = -(phi[1] * xv[1] + phi[2] * xv[2]);
    // an active contact (f_n > 0) at mu = 0 has C = 0 but dC/dmu = f_n / slip: its friction terms are needed
    if (C != 0 || T->con[i].mu == 0) friction_reverse(m, d, T, i, T->src[k * nc + i], Cbar, A);
  }
  if (!any) return PHYS_OK;
  geometry_vjp(m, T, A->alphaF, A->lam, NULL, A);
  geometry_vjp(m, T, A->alphaX, A->x, NULL, A);
  if (T->nang > 0) weights_add(A->Wa, A->alphaFa, A->lam, T, nv);
  if (T->nang > 0) weights_add(A->Wa, A->alphaXa, A->x, T, nv);
  return PHYS_OK;
}

// w_i = J_n M~^-1 J_n' in reverse (wbar its adjoint): qbar += wbar (2 grad_q[J_n(q) y] - grad_q[y' M(q) y]),
// tbar += wbar dw/dtheta = -wbar y' (R(y) - R(0))
static physStatus mass_reverse(const physModel* m, physData* d, const physParamTable* t, const penTape* T, int i,
                               double wbar, penAdj* A) {
  int nv = m->nv;
  const double* y = T->y + (size_t)i * nv;
  weights_row_add(A->Wq, 3 * i, 2 * wbar, y, T, nv);   // (geometry_vjp of the row weights 2 wbar e_3i)
  // d(M y)/dq' (wbar y) = wbar grad_q[y' M(q) y] (y held): one pass over the contact's trees, where y = M~^-1 J_n'
  // lives (M~ does not couple trees; phys_rnea_mass_quad_grad_bodies), instead of dRNEA(q, v, y)/dq' -
  // dRNEA(q, v, 0)/dq' applied to wbar y
  const physContact* c = T->con + i;
  int root[2] = {m->body_rootid[m->geom_bodyid[c->geom[0]]], m->body_rootid[m->geom_bodyid[c->geom[1]]]};
  for (int s = 0; s < 2; s++) {
    int r = root[s], e = r + 1;
    if (r <= 0 || (s == 1 && r == root[0])) continue;   // (the world; one tree)
    while (e < m->nbody && m->body_rootid[e] == r) e++;
    phys_rnea_mass_quad_grad_bodies(m, d, y, r, e, A->tmp);
    for (int b = r; b < e; b++)
      for (int k = m->body_dofadr[b]; k < m->body_dofadr[b] + m->body_dofnum[b]; k++) A->qbar[k] -= wbar * A->tmp[k];
  }
  if (t && t->ntheta > 0 && A->tbar) {
    for (int k = 0; k < nv; k++) A->lam[k] = wbar * y[k];
    // -R(y)' lambda + R(0)' lambda
    phys_param_forces_vjp(m, d, t, y, A->lam, A->tt);
    for (int e = 0; e < t->ntheta; e++) A->tbar[e] += A->tt[e];
    memset(A->tmp, 0, sizeof(double) * (size_t)nv);
    phys_param_forces_vjp(m, d, t, A->tmp, A->lam, A->tt);
    for (int e = 0; e < t->ntheta; e++) A->tbar[e] -= A->tt[e];
  }
  return PHYS_OK;
}

// the contact coefficients in reverse: s_i = -k dist_i, d_i = 2 zeta sqrt(k / w_i), and the table's
// penalty, friction and restitution entries
static physStatus coefficients_reverse(const physModel* m, physData* d, const physParamTable* t, const penTape* T,
                                       penAdj* A, double* epsbar) {
  int nc = T->nc;
  double k = m->opt.penalty_stiffness;
  double* gamma = A->alphaX;
  memset(gamma, 0, sizeof(double) * 3 * (size_t)nc);
  int any = 0;
  for (int i = 0; i < nc; i++) {
    const physContact* c = T->con + i;
    double dd = T->pc[i].damping;
    epsbar[i] = 0;
    if (!(c->dist < 0)) continue;
    gamma[3 * i] = -k * A->sbar[i];
    any = any || gamma[3 * i] != 0;
    A->kbar -= c->dist * A->sbar[i];
    if (!(dd > 0) || A->dbar[i] == 0) continue;
    // d = phys_penalty_damping: 2 zeta sqrt(k / w) (dd/dk = d / 2k, dd/dw = -d / 2w, dd/dzeta = d / zeta) or
    // its stability floor k dt - 2 / (w dt) (dd/dk = dt, dd/dw = 2 / (w^2 dt), dd/dzeta = 0)
    double ddk, ddw, ddz;
    phys_penalty_damping(T->zeta[i], k, T->w[i], m->opt.timestep, &ddk, &ddw, &ddz);
    A->kbar += A->dbar[i] * ddk;
    epsbar[i] = A->dbar[i] * ddz * T->dzeta[i];
    physStatus st = mass_reverse(m, d, t, T, i, A->dbar[i] * ddw, A);
    if (st != PHYS_OK) return st;
  }
  if (any) geometry_vjp(m, T, NULL, NULL, gamma, A);
  if (!t || !A->tbar) return PHYS_OK;
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (p->kind == PHYS_PAR_PENALTY_STIFFNESS) A->tbar[p->adr] += A->kbar;
    if (p->kind == PHYS_PAR_PENALTY_DAMPING) A->tbar[p->adr] += A->cbar;
    if (p->kind != PHYS_PAR_FRICTION && p->kind != PHYS_PAR_RESTITUTION && !phys_param_is_angular(p->kind)) continue;
    int what = p->kind == PHYS_PAR_FRICTION ? 0 : p->kind == PHYS_PAR_RESTITUTION ? 1 : p->kind == PHYS_PAR_TORSION ? 2 : 3;
    const double* bar[4] = {A->mubar, epsbar, A->mubs, A->mubr};
    for (int i = 0; i < nc; i++)
      if (T->con[i].dist < 0 && phys_contact_material_moves(m, T->con + i, p->id, what))
        A->tbar[p->adr] += bar[what][i];
  }
  return PHYS_OK;
}

// the integration on SO(3) in reverse (step_deriv.c): qbar = E' qbar+, wv = vbar+ + dt D' qbar+ (v+ = vnew)
static void integration_reverse(const physModel* m, const double* vnew, const double* xbar_next, double* qbar,
                                double* wv) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  const double *qbn = xbar_next, *vbn = xbar_next + nv;
  for (int i = 0; i < nv; i++) {
    qbar[i] = qbn[i];
    wv[i] = vbn[i] + dt * qbn[i];
  }
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j], g = m->jnt_dofadr[j] + (type == PHYS_JNT_FREE ? 3 : 0);
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    double phi[3] = {dt * vnew[g], dt * vnew[g + 1], dt * vnew[g + 2]}, Jr[9], Et[9];
    phys_so3_jacobians(Jr, Et, phi);
    for (int r = 0; r < 3; r++) {
      qbar[g + r] = 0;
      wv[g + r] = vbn[g + r];
      for (int c = 0; c < 3; c++) {
        qbar[g + r] += Et[3 * c + r] * qbn[g + c];
        wv[g + r] += dt * Jr[3 * c + r] * qbn[g + c];
      }
    }
  }
}

// arena array of n + 1 zeros (caller's mark)
static double* zalloc(physData* d, size_t n) {
  double* x = phys_stack_alloc(d, n + 1);
  memset(x, 0, sizeof(double) * (n + 1));
  return x;
}

// one reverse pass on T: xbar (2nv), ubar (nu), theta_bar (ntheta), force_bar = sum_k lambda_k (nv) from
// xbar_next; any output may be NULL
static physStatus tape_vjp(const physModel* m, physData* d, const penTape* T, const physParamTable* t,
                           const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                           double* force_bar) {
  int nv = m->nv, nu = m->nu, nc = T->nc, K = T->K, nt = t ? t->ntheta : 0;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  penAdj A;
  memset(&A, 0, sizeof A);
  A.qbar = phys_stack_alloc(d, (size_t)nv);
  A.vbar = phys_stack_alloc(d, (size_t)nv);
  A.ubar = zalloc(d, (size_t)nu);
  A.tbar = theta_bar ? zalloc(d, (size_t)nt) : NULL;
  A.tt = phys_stack_alloc(d, (size_t)nt + 1);
  A.abar = zalloc(d, (size_t)K * nv);
  A.sbar = zalloc(d, (size_t)nc);
  A.dbar = zalloc(d, (size_t)nc);
  A.mubar = zalloc(d, (size_t)nc);
  A.alphaS = zalloc(d, (size_t)(K + 1) * 3 * nc);
  A.lam = phys_stack_alloc(d, (size_t)nv);
  A.tmp = phys_stack_alloc(d, (size_t)nv);
  A.tmp2 = phys_stack_alloc(d, (size_t)nv);
  A.alphaF = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  A.alphaX = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  A.x = phys_stack_alloc(d, (size_t)nv);
  A.Wq = weights_alloc(d, T, nv, theta_bar && nt > 0);
  A.gam = zalloc(d, 3 * (size_t)nc);
  A.mubs = zalloc(d, (size_t)nc);
  A.mubr = zalloc(d, (size_t)nc);
  A.alphaSa = zalloc(d, (size_t)(K + 1) * 3 * nc);
  A.alphaFa = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  A.alphaXa = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  A.Wa = weights_alloc(d, T, nv, 0);
  double* epsbar = phys_stack_alloc(d, (size_t)nc + 1);

  // v+ = v + dt a_{K-1}, q+ = q (+) dt v+
  for (int i = 0; i < nv; i++) A.x[i] = d->qvel[i] + dt * T->a[(size_t)(K - 1) * nv + i];
  integration_reverse(m, A.x, xbar_next, A.qbar, A.vbar);
  for (int i = 0; i < nv; i++) A.abar[(size_t)(K - 1) * nv + i] = dt * A.vbar[i];

  // solves last to first: lambda_k = H_k^-1 abar_k, z_bar -= (dRes_k/dz)' lambda_k
  physStatus st = PHYS_OK;
  if (force_bar) memset(force_bar, 0, sizeof(double) * (size_t)nv);
  for (int k = K - 1; k >= 0 && st == PHYS_OK; k--) {
    const double* ak = T->a + (size_t)k * nv;
    phys_ldl_solve(A.lam, T->H + (size_t)k * nv * nv, T->parent, A.abar + (size_t)k * nv, nv);
    if (force_bar)
      for (int i = 0; i < nv; i++) force_bar[i] += A.lam[i];
    smooth_reverse(m, d, t, ak, &A);
    limits_reverse(m, d, T, ak, &A);
    tendon_limits_reverse(m, d, T, ak, &A);
    tendon_friction_reverse(m, d, T, ak, &A);
    frictionloss_reverse(m, d, t, ak, &A);
    if (T->eq) phys_equality_penalty_vjp(m, d, T->eq, t, ak, A.lam, A.qbar, A.vbar, A.tbar);
    st = contacts_reverse(m, d, T, k, &A);
  }
  // the C sources' row adjoints through J(q): beta = v, v+_0, ...
  for (int j = -1; j < K - 1 && st == PHYS_OK; j++) {
    const double *as = A.alphaS + (size_t)(j + 1) * 3 * nc, *asa = A.alphaSa + (size_t)(j + 1) * 3 * nc;
    int any = 0;
    for (int r = 0; r < 3 * nc; r++) any = any || as[r] != 0 || asa[r] != 0;
    if (!any) continue;
    for (int i = 0; i < nv; i++) A.x[i] = d->qvel[i] + (j >= 0 ? dt * T->a[(size_t)j * nv + i] : 0);
    geometry_vjp(m, T, as, A.x, NULL, &A);
    weights_add(A.Wa, asa, A.x, T, nv);
  }
  if (st == PHYS_OK) st = coefficients_reverse(m, d, t, T, &A, epsbar);
  if (st == PHYS_OK) st = geometry_flush(m, d, T, t, &A);
  memcpy(d->qacc, T->a + (size_t)(K - 1) * nv, sizeof(double) * (size_t)nv);
  if (st == PHYS_OK) {
    if (xbar) {
      memcpy(xbar, A.qbar, sizeof(double) * (size_t)nv);
      memcpy(xbar + nv, A.vbar, sizeof(double) * (size_t)nv);
    }
    if (ubar && nu > 0) memcpy(ubar, A.ubar, sizeof(double) * (size_t)nu);
    if (theta_bar && nt > 0) memcpy(theta_bar, A.tbar, sizeof(double) * (size_t)nt);
  }
  phys_stack_free(d, mark);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// forward mode on the tape (state and controls): the Jacobians A, B by columns, independent of the reverse
// mode (the dot-product test compares them)

// what every forward pass shares (arena memory of the caller's mark)
typedef struct penFwd_ {
  double* Gq;    // K x nv x nv: d(RNEA(q, v, a_k) - f)/dq
  double* Gv;    // K x nv x nv: d(RNEA(q, v, a_k) - f)/dv
  double* Gu;    // nv x nu: -df/du
  double* gm;    // nc x nv: grad_q [y_i' M(q) y_i] at fixed y_i
} penFwd;

// the shared matrices of forward mode at the tape's point
static void forward_prepare(const physModel* m, physData* d, const penTape* T, penFwd* F) {
  int nv = m->nv, nu = m->nu, K = T->K, nc = T->nc;
  size_t nn = (size_t)nv * nv, mark;
  F->Gq = phys_stack_alloc(d, (size_t)K * nn);
  F->Gv = phys_stack_alloc(d, (size_t)K * nn);
  F->Gu = phys_stack_alloc(d, (size_t)nv * nu + 1);
  F->gm = phys_stack_alloc(d, (size_t)nc * nv + 1);
  if (T->eq) phys_equality_penalty_prepare(m, d, T->eq);   // (kept for the passes, as F)
  mark = phys_stack_mark(d);
  double* fq = phys_stack_alloc(d, nn);
  double* fv = phys_stack_alloc(d, nn);
  // df/dq, df/dv, df/du of the applied forces (the same in every solve)
  memset(fq, 0, sizeof(double) * nn);
  memset(fv, 0, sizeof(double) * nn);
  memset(F->Gu, 0, sizeof(double) * (size_t)nv * nu);
  phys_passive_deriv(m, d, fq, fv, nu > 0 ? F->Gu : NULL);
  phys_actuation_deriv(m, d, fq, fv, nu > 0 ? F->Gu : NULL);
  phys_xfrc_deriv(m, d, fq);
  for (size_t i = 0; i < (size_t)nv * nu; i++) F->Gu[i] = -F->Gu[i];
  for (int k = 0; k < K; k++) {
    double *Gq = F->Gq + k * nn, *Gv = F->Gv + k * nn;
    phys_rnea_deriv(m, d, T->a + (size_t)k * nv, Gq, Gv, NULL);
    for (size_t i = 0; i < nn; i++) Gq[i] -= fq[i], Gv[i] -= fv[i];
    if (m->nfrictionloss > 0) {   // the joints' frictionloss: -df/dv = C + C' v+_k (frictionloss_reverse)
      size_t fm = phys_stack_mark(d);
      physFrictionPoint* fp = phys_friction_point_penalty(m, d, T->a + (size_t)k * nv);
      for (int i = 0; i < nv; i++) Gv[(size_t)i * nv + i] -= fp->dfdv[i];
      phys_stack_free(d, fm);
    }
  }
  // gm_i = grad_q[y' M(q) y] at fixed y (= dRNEA(q, v, y)/dq' y - dRNEA(q, v, 0)/dq' y), one O(nbody) pass
  for (int i = 0; i < nc; i++) phys_rnea_mass_quad_grad(m, d, T->y + (size_t)i * nv, F->gm + (size_t)i * nv);
  phys_stack_free(d, mark);
}

// rows r0 .. r0+nr of dJ beta into out (dJ = the contact rows' derivative along the pass's dq, 3nc x nv)
static void dj_mul(const double* dJ, int nv, const double* beta, double* out, int r0, int nr) {
  for (int r = r0; r < r0 + nr; r++) {
    double s = 0;
    for (int j = 0; j < nv; j++) s += dJ[(size_t)r * nv + j] * beta[j];
    out[r] = s;
  }
}

// the forward pass's per-direction work arrays (arena memory of the caller's mark)
typedef struct penDir_ {
  double *dJ;          // 3nc x nv: dJ/dq . dq (phys_constraint_dJ, once per pass; 0 if dq = 0)
  double *da;          // K x nv
  double *ds, *dd;     // nc: changes of s_i, d_i
  double *dist3;       // 3nc: ddist (normal rows)
  double *dJw;         // 3nc: dJ beta
  double *x, *w, *dw, *r;   // nv each
  double *F;           // 3nc frame forces of a solve
  double *dA;          // 3nc x nv: the angular rows' dA/dq . dq (phys_angular_dJ; 0 without them or for dq = 0)
} penDir;

// dC of contact i in solve k along the direction (dq, dv, da of earlier solves): C = mu fn(w) / slip(w)
static void friction_forward(const physModel* m, const physData* d, const penTape* T, int i, int j,
                             const double* dv, penDir* W, double* dC) {
  int nv = m->nv;
  double dt = m->opt.timestep, vs = m->opt.penalty_vslip, mu = T->con[i].mu;
  const double* Ji = T->J + (size_t)(3 * i) * nv;
  const physPenaltyContact* p = T->pc + i;
  for (int k = 0; k < nv; k++) {
    W->w[k] = d->qvel[k] + (j >= 0 ? dt * T->a[(size_t)j * nv + k] : 0);
    W->dw[k] = dv[k] + (j >= 0 ? dt * W->da[(size_t)j * nv + k] : 0);
  }
  dj_mul(W->dJ, nv, W->w, W->dJw, 3 * i, 3);
  double wv[3], dwv[3];
  rows_mul(wv, Ji, W->w, nv, T, i);
  rows_mul(dwv, Ji, W->dw, nv, T, i);
  for (int r = 0; r < 3; r++) dwv[r] += W->dJw[3 * i + r];
  double fn = p->spring - p->damping * wv[0], ht = hypot(wv[1], wv[2]), slip = fmax(ht, vs);
  double dfn = W->ds[i] - W->dd[i] * wv[0] - p->damping * dwv[0];
  double dslip = ht > vs ? (wv[1] * dwv[1] + wv[2] * dwv[2]) / ht : 0;
  *dC = mu * (dfn / slip - fn * dslip / (slip * slip));
}

// dC of an angular coefficient of contact i (angcoef_reverse's C: rows r0..r1, source j) along the direction
static double angcoef_forward(const physModel* m, const physData* d, const penTape* T, int i, int j, int r0, int r1,
                              double mu, const double* dv, penDir* W) {
  int nv = m->nv;
  double dt = m->opt.timestep, vs = m->opt.penalty_vslip;
  const double *Ji = T->J + (size_t)(3 * i) * nv, *Ai = T->Ja + (size_t)(3 * i) * nv;
  const double *dJi = W->dJ + (size_t)(3 * i) * nv, *dAi = W->dA + (size_t)(3 * i) * nv;
  const physPenaltyContact* p = T->pc + i;
  for (int k = 0; k < nv; k++) {
    W->w[k] = d->qvel[k] + (j >= 0 ? dt * T->a[(size_t)j * nv + k] : 0);
    W->dw[k] = dv[k] + (j >= 0 ? dt * W->da[(size_t)j * nv + k] : 0);
  }
  double wv[3], dwv[3], dJw[3], wa[3], dwa[3], dAw[3], ht = 0, dht = 0;
  rows_mul(wv, Ji, W->w, nv, T, i);
  rows_mul(dwv, Ji, W->dw, nv, T, i);
  rows_mul(dJw, dJi, W->w, nv, T, i);
  rows_mul(wa, Ai, W->w, nv, T, i);
  rows_mul(dwa, Ai, W->dw, nv, T, i);
  rows_mul(dAw, dAi, W->w, nv, T, i);
  for (int r = r0; r <= r1; r++) ht += wa[r] * wa[r], dht += wa[r] * (dwa[r] + dAw[r]);
  ht = sqrt(ht);
  double fn = p->spring - p->damping * wv[0], slip = fmax(ht, vs);
  double dfn = W->ds[i] - W->dd[i] * wv[0] - p->damping * (dwv[0] + dJw[0]);
  double dslip = ht > vs ? dht / ht : 0;
  return mu * (dfn / slip - fn * dslip / (slip * slip));
}

// r += contact i's angular part of -dRes_k: dA_i' T_i + A_i' dT_i, T_i = -c_r (A_i x)_r (c = Cs, Cr, Cr),
// dT_r = -dc_r (A_i x)_r - c_r ((dA_i x)_r + (A_i dv)_r)
static void angular_forward(const physModel* m, const physData* d, const penTape* T, int k, int i, const double* dv,
                            penDir* W) {
  int nv = m->nv, nc = T->nc;
  const double *Ai = T->Ja + (size_t)(3 * i) * nv, *dAi = W->dA + (size_t)(3 * i) * nv;
  const physPenaltyContact* p = T->pc + i;
  double Cs = T->Cs[k * nc + i], Cr = T->Cr[k * nc + i], c[3] = {Cs, Cr, Cr}, xa[3], dAx[3], adv[3], Tq[3], dT[3];
  double dCs = angcoef_forward(m, d, T, i, T->srcs[k * nc + i], 0, 0, p->mu_spin, dv, W);
  double dCr = angcoef_forward(m, d, T, i, T->srcr[k * nc + i], 1, 2, p->mu_roll, dv, W);
  double dc[3] = {dCs, dCr, dCr};
  rows_mul(xa, Ai, W->x, nv, T, i);
  rows_mul(dAx, dAi, W->x, nv, T, i);
  rows_mul(adv, Ai, dv, nv, T, i);
  for (int r = 0; r < 3; r++) Tq[r] = -c[r] * xa[r], dT[r] = -dc[r] * xa[r] - c[r] * (dAx[r] + adv[r]);
  rows_tmul_add(W->r, dAi, Tq, 1, nv, T, i);
  rows_tmul_add(W->r, Ai, dT, 1, nv, T, i);
}

// r += the contacts' part of -dRes_k (all but H_k da_k): sum_i dJ_i' F_i + J_i' dF_i
static void contacts_forward(const physModel* m, const physData* d, const penTape* T, int k, const double* dv,
                             penDir* W) {
  int nv = m->nv, nc = T->nc, any = 0;
  double dt = m->opt.timestep;
  const double* ak = T->a + (size_t)k * nv;
  for (int j = 0; j < nv; j++) W->x[j] = d->qvel[j] + dt * ak[j];
  memset(W->F, 0, sizeof(double) * 3 * (size_t)nc);
  for (int i = 0; i < nc; i++) {
    if (!T->act[k * nc + i]) continue;
    any = 1;
    double xv[3], C = T->C[k * nc + i];
    rows_mul(xv, T->J + (size_t)(3 * i) * nv, W->x, nv, T, i);
    W->F[3 * i] = T->pc[i].spring - T->pc[i].damping * xv[0];
    W->F[3 * i + 1] = -C * xv[1];
    W->F[3 * i + 2] = -C * xv[2];
  }
  if (!any) return;
  // dJ' F and dJ x
  dj_mul(W->dJ, nv, W->x, W->dJw, 0, 3 * nc);
  for (int r = 0; r < 3 * nc; r++)
    if (W->F[r] != 0)
      for (int j = 0; j < nv; j++) W->r[j] += W->dJ[(size_t)r * nv + j] * W->F[r];
  double* dJx = W->F;   // reuse: F is no longer needed
  memcpy(dJx, W->dJw, sizeof(double) * 3 * (size_t)nc);
  for (int i = 0; i < nc; i++) {
    if (!T->act[k * nc + i]) continue;
    const double* Ji = T->J + (size_t)(3 * i) * nv;
    const physPenaltyContact* p = T->pc + i;
    double C = T->C[k * nc + i], xv[3], jdv[3], dC = 0;
    rows_mul(xv, Ji, W->x, nv, T, i);
    rows_mul(jdv, Ji, dv, nv, T, i);
    double dJxi[3] = {dJx[3 * i], dJx[3 * i + 1], dJx[3 * i + 2]};
    if (C != 0) friction_forward(m, d, T, i, T->src[k * nc + i], dv, W, &dC);
    // dF (without the da_k part): (ds - dd x_n - d (dJ x)_n - d J_n dv, -dC x_t - C (dJ x)_t - C J_t dv)
    double dF[3] = {W->ds[i] - W->dd[i] * xv[0] - p->damping * (dJxi[0] + jdv[0]),
                    -dC * xv[1] - C * (dJxi[1] + jdv[1]), -dC * xv[2] - C * (dJxi[2] + jdv[2])};
    rows_tmul_add(W->r, Ji, dF, 1, nv, T, i);
    if (p->ang) angular_forward(m, d, T, k, i, dv, W);
  }
}

// the contact coefficients' changes along dq (W->dJ, W->dist3, W->ds, W->dd; 0 without penetrating contacts or
// for dq = 0): ds = -k ddist, dd = d (-dw / 2w) by phys_penalty_damping's branch, dw = 2 (dJ_n y) - y' dM y
static physStatus coefficients_forward(const physModel* m, physData* d, const penTape* T, const penFwd* F,
                                       const double* dq, penDir* W) {
  int nv = m->nv, nc = T->nc;
  double kc = m->opt.penalty_stiffness;
  physStatus st = PHYS_OK;
  memset(W->ds, 0, sizeof(double) * (size_t)nc);
  memset(W->dd, 0, sizeof(double) * (size_t)nc);
  int pen = 0, moved = 0;
  for (int i = 0; i < nc; i++) pen = pen || T->con[i].dist < 0;
  for (int j = 0; j < nv; j++) moved = moved || dq[j] != 0;
  W->dJ = phys_stack_alloc(d, 3 * (size_t)nc * nv + 1);
  W->dA = phys_stack_alloc(d, 3 * (size_t)nc * nv + 1);
  memset(W->dJ, 0, sizeof(double) * 3 * (size_t)nc * nv);
  memset(W->dA, 0, sizeof(double) * 3 * (size_t)nc * nv);
  memset(W->dist3, 0, sizeof(double) * 3 * (size_t)nc);
  if (pen && moved) {
    // the geometry along dq: dJ (one call) and ddist
    physConstraintProblem p = contact_problem(m, T);
    st = phys_angular_dJ(m, d, &p, dq, W->dJ, T->nang > 0 ? W->dA : NULL);   // (dA: issue 16)
    if (st == PHYS_OK) st = phys_constraint_jvp(m, d, &p, dq, NULL, NULL, NULL, NULL, W->dist3);
  }
  for (int i = 0; i < nc && st == PHYS_OK; i++) {
    if (!(T->con[i].dist < 0)) continue;
    W->ds[i] = -kc * W->dist3[3 * i];
    double dd = T->pc[i].damping;
    if (!(dd > 0)) continue;
    dj_mul(W->dJ, nv, T->y + (size_t)i * nv, W->dJw, 3 * i, 1);
    double dw = 2 * W->dJw[3 * i];
    for (int j = 0; j < nv; j++) dw -= F->gm[(size_t)i * nv + j] * dq[j];
    double ddw;   // dd/dw on phys_penalty_damping's branch
    phys_penalty_damping(T->zeta[i], kc, T->w[i], m->opt.timestep, NULL, &ddw, NULL);
    W->dd[i] = ddw * dw;
  }
  return st;
}

// W->r = the smooth and limit part of solve k's right side -dRes_k: -(Gq_k dq + Gv_k dv + Gu du), and on a
// limited dof -(k dq + (c + dt k) dv) (the implicit limit spring)
static void smooth_forward(const physModel* m, const penTape* T, const penFwd* F, int k, const double* dq,
                           const double* dv, const double* du, penDir* W) {
  int nv = m->nv, nu = m->nu;
  double dt = m->opt.timestep, kc = m->opt.penalty_stiffness, cc = m->opt.penalty_damping;
  size_t nn = (size_t)nv * nv;
  const double *Gq = F->Gq + k * nn, *Gv = F->Gv + k * nn;
  for (int i = 0; i < nv; i++) {
    double s = 0;
    for (int j = 0; j < nv; j++) s += Gq[(size_t)i * nv + j] * dq[j] + Gv[(size_t)i * nv + j] * dv[j];
    if (du)
      for (int a = 0; a < nu; a++) s += F->Gu[(size_t)i * nu + a] * du[a];
    W->r[i] = -s;
  }
  for (int l = 0; l < T->nlim; l++) {
    int dof = T->lim[2 * l];
    W->r[dof] -= kc * dq[dof] + (cc + dt * kc) * dv[dof];
  }
}

// W->r -= the tendon limit springs' part of dRes_k along (dq, dv): r (k r + u) . dq + g K dq + (c + dt k) r r.dv
// (tendon_limit_terms, tendon_limits_reverse)
static void tendon_limits_forward(const physModel* m, const physData* d, const penTape* T, int k,
                                  const double* dq, const double* dv, penDir* W) {
  int nv = m->nv;
  double kc = m->opt.penalty_stiffness, cv = m->opt.penalty_damping + m->opt.timestep * kc;
  const double* ak = T->a + (size_t)k * nv;
  for (int l = 0; l < T->ntl; l++) {
    const double *r = T->tr + (size_t)l * nv, *K = T->tK + (size_t)l * nv * nv;
    double g = tendon_limit_terms(m, d, T, l, ak, W->w), s = 0;
    for (int j = 0; j < nv; j++) s += (kc * r[j] + W->w[j]) * dq[j] + cv * r[j] * dv[j];
    for (int i = 0; i < nv; i++) {
      double Kdq = 0;
      for (int j = 0; j < nv; j++) Kdq += K[(size_t)i * nv + j] * dq[j];
      W->r[i] -= r[i] * s + g * Kdq;
    }
  }
}

// W->r -= the tendon frictionloss rows' part of dRes_k along (dq, dv): r (u_q . dq + cw r . dv) + g K dq
// (tendon_friction_terms, tendon_friction_reverse)
static void tendon_friction_forward(const physModel* m, const physData* d, const penTape* T, int k,
                                    const double* dq, const double* dv, penDir* W) {
  int nv = m->nv;
  const double* ak = T->a + (size_t)k * nv;
  for (int l = 0; l < T->ntf; l++) {
    const double *r = T->fr + (size_t)l * nv, *K = T->fK + (size_t)l * nv * nv;
    double cw, g = tendon_friction_terms(m, d, T, l, ak, W->w, &cw), s = 0;
    for (int j = 0; j < nv; j++) s += W->w[j] * dq[j] + cw * r[j] * dv[j];
    for (int i = 0; i < nv; i++) {
      double Kdq = 0;
      for (int j = 0; j < nv; j++) Kdq += K[(size_t)i * nv + j] * dq[j];
      W->r[i] -= r[i] * s + g * Kdq;
    }
  }
}

// v+ = v + dt a_{K-1}: dv+ = dv + dt da; q+ = q (+) dt v+: dq+ = E dq + dt D dv+ (E = Exp(phi)', D = Jr(phi),
// phi = dt v+ on rotation groups) into xdot = (dq+, dv+)
static void integrate_forward(const physModel* m, const physData* d, const penTape* T, const double* dq,
                              const double* dv, penDir* W, double* xdot) {
  int nv = m->nv, K = T->K;
  double dt = m->opt.timestep;
  double *dqp = xdot, *dvp = xdot + nv;
  for (int i = 0; i < nv; i++) {
    W->x[i] = d->qvel[i] + dt * T->a[(size_t)(K - 1) * nv + i];
    dvp[i] = dv[i] + dt * W->da[(size_t)(K - 1) * nv + i];
    dqp[i] = dq[i] + dt * dvp[i];
  }
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j], g = m->jnt_dofadr[j] + (type == PHYS_JNT_FREE ? 3 : 0);
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    double phi[3] = {dt * W->x[g], dt * W->x[g + 1], dt * W->x[g + 2]}, Jr[9], Et[9];
    phys_so3_jacobians(Jr, Et, phi);
    for (int r = 0; r < 3; r++) {
      dqp[g + r] = 0;
      for (int c = 0; c < 3; c++) dqp[g + r] += Et[3 * r + c] * dq[g + c] + dt * Jr[3 * r + c] * dvp[g + c];
    }
  }
}

// one forward pass: (dq, dv, du) -> x+_dot = (dq+, dv+) (2nv); du may be NULL (0). The coefficients' changes,
// then the solves first to last: H_k da_k = r_k = -(dRes_k without da_k), then the integration
static physStatus tape_jvp(const physModel* m, physData* d, const penTape* T, const penFwd* F, const double* dq,
                           const double* dv, const double* du, double* xdot) {
  int nv = m->nv, nc = T->nc, K = T->K;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  penDir W;
  W.da = phys_stack_alloc(d, (size_t)K * nv);
  W.ds = phys_stack_alloc(d, (size_t)nc + 1);
  W.dd = phys_stack_alloc(d, (size_t)nc + 1);
  W.dist3 = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  W.dJw = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  W.x = phys_stack_alloc(d, (size_t)nv);
  W.w = phys_stack_alloc(d, (size_t)nv);
  W.dw = phys_stack_alloc(d, (size_t)nv);
  W.r = phys_stack_alloc(d, (size_t)nv);
  W.F = phys_stack_alloc(d, 3 * (size_t)nc + 1);
  physStatus st = coefficients_forward(m, d, T, F, dq, &W);
  for (int k = 0; k < K && st == PHYS_OK; k++) {
    smooth_forward(m, T, F, k, dq, dv, du, &W);
    tendon_limits_forward(m, d, T, k, dq, dv, &W);
    tendon_friction_forward(m, d, T, k, dq, dv, &W);
    contacts_forward(m, d, T, k, dv, &W);
    if (T->eq) phys_equality_penalty_jvp(m, d, T->eq, T->a + (size_t)k * nv, dq, dv, W.r);
    phys_ldl_solve(W.da + (size_t)k * nv, T->H + (size_t)k * nn, T->parent, W.r, nv);
  }
  if (st == PHYS_OK) integrate_forward(m, d, T, dq, dv, &W, xdot);
  phys_stack_free(d, mark);
  return st;
}

// columns of A (2nv x 2nv) and B (2nv x nu) by forward passes with unit directions
static physStatus jacobian_columns(const physModel* m, physData* d, const penTape* T, double* A, double* B) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  size_t mark = phys_stack_mark(d);
  penFwd F;
  forward_prepare(m, d, T, &F);
  double* e = phys_stack_alloc(d, (size_t)n2 + (size_t)nu + 1);
  double* col = phys_stack_alloc(d, (size_t)n2);
  memset(e, 0, sizeof(double) * ((size_t)n2 + (size_t)nu + 1));
  physStatus st = PHYS_OK;
  int ncol = (A ? n2 : 0) + (B ? nu : 0);
  for (int c = 0; c < ncol && st == PHYS_OK; c++) {
    int idx = A ? c : n2 + c;   // e = (dq, dv, du)
    e[idx] = 1;
    st = tape_jvp(m, d, T, &F, e, e + nv, nu > 0 ? e + n2 : NULL, col);
    e[idx] = 0;
    double* M = idx < n2 ? A : B;
    int ld = idx < n2 ? n2 : nu, cc = idx < n2 ? idx : idx - n2;
    for (int i = 0; i < n2 && st == PHYS_OK; i++) M[(size_t)i * ld + cc] = col[i];
  }
  phys_stack_free(d, mark);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// public

int phys_penalty_deriv_applies(const physModel* m, physData* d) {
  if (m->opt.contact != PHYS_CONTACT_PENALTY) return 0;
  phys_kinematics(m, d);
  if (phys_equality_rows(m) > 0) return 1;   // (the step's dense solve with its spring-dampers, issue 15)
  if (active_limits(m, d, NULL) > 0 || phys_constraint_nlimit(m, d) > 0) return 1;
  if (m->nspring > 0 && phys_tendon_frictionloss_rows(m, d, NULL, NULL) > 0) return 1;   // (penalty_dense, issue 15)
  if (m->opt.disableflags & PHYS_DSBL_CONTACT) return 0;
  return phys_collision_count(m, d) > 0;
}

// the arguments of the two entry points
typedef struct penCall_ {
  const physParamTable* t;
  const double* xbar_next;
  double *xbar, *ubar, *theta_bar, *force_bar;   // vjp
  double *A, *B, *P;                 // jacobian (rows by reverse passes)
} penCall;

// rows r of P by reverse passes with xbar_next = e_r (the parameters have no forward mode)
static physStatus jacobian_rows(const physModel* m, physData* d, const penTape* T, const penCall* c) {
  int n2 = 2 * m->nv, nu = m->nu, nt = c->t ? c->t->ntheta : 0;
  size_t mark = phys_stack_mark(d);
  double* e = phys_stack_alloc(d, (size_t)n2);
  double* xb = phys_stack_alloc(d, (size_t)n2);
  double* ub = phys_stack_alloc(d, (size_t)nu + 1);
  double* tb = phys_stack_alloc(d, (size_t)nt + 1);
  memset(e, 0, sizeof(double) * (size_t)n2);
  physStatus st = PHYS_OK;
  for (int r = 0; r < n2 && st == PHYS_OK; r++) {
    e[r] = 1;
    st = tape_vjp(m, d, T, c->t, e, xb, ub, tb, NULL);
    e[r] = 0;
    if (st == PHYS_OK && nt > 0) memcpy(c->P + (size_t)r * nt, tb, sizeof(double) * (size_t)nt);
  }
  phys_stack_free(d, mark);
  return st;
}

// PHYS_OK unless t has a pos:BODY entry and T a pushing limit spring of a spatial tendon (its row and dist move
// with the bodies' placements: not built): then PHYS_ERR_ARG with the message in d->lastwarning
static physStatus tendon_param_check(const physModel* m, physData* d, const penTape* T, const physParamTable* t) {
  int pos = 0;
  for (int e = 0; e < t->n; e++) pos |= t->param[e].kind == PHYS_PAR_POS;
  for (int l = 0; pos && l < T->ntl; l++) {
    if (m->spring_type[T->tspring[l]] == PHYS_SPRING_FIXED) continue;
    snprintf(d->lastwarning, sizeof(d->lastwarning), "pos:BODY parameters with the pushing length limit of spatial "
             "tendon '%s' (penalty): that derivative is not built", phys_id2name(m, "spring", T->tspring[l]));
    return PHYS_ERR_ARG;
  }
  return PHYS_OK;
}

// PHYS_OK unless t has a geometric entry (size, pos, height, vertices) and T an angular row (issue 16) of a contact
// not with a plane: its rows turn with the contact normal, which those entries move (their derivative through
// the angular rows is not built; a plane's normal stays, so its contacts' rows do not depend on them)
static physStatus angular_param_check(const physModel* m, physData* d, const penTape* T, const physParamTable* t) {
  int geo = 0;
  for (int e = 0; e < t->n; e++) {
    int k = t->param[e].kind;
    geo |= k == PHYS_PAR_SIZE || k == PHYS_PAR_POS || k == PHYS_PAR_HEIGHT || k == PHYS_PAR_VERTICES;
  }
  for (int i = 0; geo && i < T->nc; i++) {
    const physContact* c = T->con + i;
    if (!T->pc[i].ang || m->geom_type[c->geom[0]] == PHYS_GEOM_PLANE || m->geom_type[c->geom[1]] == PHYS_GEOM_PLANE)
      continue;
    snprintf(d->lastwarning, sizeof(d->lastwarning), "size, pos, height or vertices parameters with the torsional "
             "or rolling friction of the contact of geoms '%s' and '%s' (penalty): that derivative is not built "
             "(contacts with planes only)", phys_id2name(m, "geom", c->geom[0]), phys_id2name(m, "geom", c->geom[1]));
    return PHYS_ERR_ARG;
  }
  return PHYS_OK;
}

// build the tape at d's state (its own contact list), run the vjp or the Jacobian rows
static physStatus penalty_call(const physModel* m, physData* d, const penCall* c, int jacobian) {
  physStatus st = PHYS_OK;
  size_t mark = phys_stack_mark(d);
  penTape T;
  memset(&T, 0, sizeof T);
  st = tape_build(m, d, &T);
  if (st == PHYS_OK && c->t) st = tendon_param_check(m, d, &T, c->t);
  if (st == PHYS_OK && c->t && T.ntf > 0) st = phys_friction_param_check(m, d, c->t);   // (pos:BODY moves r)
  if (st == PHYS_OK && c->t && T.nang > 0) st = angular_param_check(m, d, &T, c->t);
  if (st == PHYS_OK && jacobian && (c->A || c->B)) st = jacobian_columns(m, d, &T, c->A, c->B);
  if (st == PHYS_OK && jacobian && c->P) st = jacobian_rows(m, d, &T, c);
  if (st == PHYS_OK && !jacobian) st = tape_vjp(m, d, &T, c->t, c->xbar_next, c->xbar, c->ubar, c->theta_bar, c->force_bar);
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_penalty_step_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A,
                                      double* B, double* P) {
  penCall c;
  memset(&c, 0, sizeof c);
  c.t = P ? t : NULL;
  c.A = A;
  c.B = B;
  c.P = P && t && t->ntheta > 0 ? P : NULL;
  return penalty_call(m, d, &c, 1);
}

physStatus phys_penalty_step_vjp(const physModel* m, physData* d, const physParamTable* t,
                                 const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                                 double* force_bar) {
  penCall c;
  memset(&c, 0, sizeof c);
  c.t = theta_bar ? t : NULL;
  c.xbar_next = xbar_next;
  c.xbar = xbar;
  c.ubar = ubar;
  c.theta_bar = theta_bar && t && t->ntheta > 0 ? theta_bar : NULL;
  c.force_bar = force_bar;
  return penalty_call(m, d, &c, 0);
}

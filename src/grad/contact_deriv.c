// contact_deriv.c - derivatives of the constraint problem's geometry (contact_deriv.h): rows J and distances of
// the contacts and joint limits with respect to the configuration (tangent coordinates, grad.h) and geom sizes.
//
// Contact i, rows r = 0 (normal), 1, 2 (tangents), frame rows F_r = phys_contact_frame(n), point p:
//   J_r beta = F_r . u,   u = (v_1 + w_1 x p) - (v_0 + w_0 x p),
//   S_b = (w_b, v_b) = sum_{j on b's chain} beta_j cdof_j
// (b0, b1 the bodies of geom[0], geom[1]). Under a tangent motion dq:
//  - body b moves by V_b = sum_{k on b's chain} dq_k cdof_k, so a geom of b by the twist dw = V_ang,
//    dt = V_lin + V_ang x geom_xpos (collision/primitive_deriv.h's columns), giving (dp, dn, ddist) = D [tw0; tw1];
//  - cdof_j turns: dcdof_j = W_j x cdof_j, W_j = sum_{k: j after k} dq_k cdof_k (grad.h; the prefix of the chain
//    through the end of j's group), so dS_b = sum_j beta_j dcdof_j;
//  - d(J_r beta) = dF_r . u + F_r . (dv_rel + dw_rel x p + w_rel x dp)   (rel = 1 - 0).
// Reverse mode of s = sum_r alpha_r J_r beta + gamma_0 dist with f = sum_r alpha_r F_r, Phi = (p x f, f):
//   p_bar = f x w_rel,  n_bar = frame adjoint of Fbar_r = alpha_r u,  dist_bar = gamma_0,
//   twist bars = D' (p_bar, n_bar, dist_bar), and per chain dof k of body b (sign +1 for b1, -1 for b0):
//   q_bar_k += cdof_k . (Psi_b + sign B_k x* Phi),  Psi_b = (x_g x dt_bar + dw_bar, dt_bar) the geom's twist bar
//   as a force about the origin, B_k = sum_{j after k on the chain} beta_j cdof_j
//   (identity (a x b) . F = a . (b x* F)). With a weight matrix, s = <A, J>, each row r has its own beta (A's
//   row 3i + r), motion S_r, Phi_r = (p x F_r, F_r) and Fbar_r = U_r; p_bar = sum_r F_r x w_r.
// Limit rows: J = +-e_dof (constant), dist = +-(q - bound): ddist = +-dq_dof.
//
// A contact's pair function: collision recorded the call's order (pairflip: the function ran with geom[1] first,
// lower type first, lower id for equal types, and wrote the normal -frame row 0), the contact's number among the
// call's outputs (pairout; a call's outputs are consecutive in the list, the problem's p->con) and the features of both geoms that
// produced it (feature). The contact is differentiated from that record at the current kinematics - the pair
// function is not run again and no contact is searched for: its Jacobian D is phys_primitive_deriv_all's for the
// call's stored outputs (all of them at once, when the pair's first contact asks), which checks that the
// derivative reproduces the stored contact (pos, normal, dist to 1e-9 of the geoms' size).
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collision.h"
#include "contact_deriv.h"
#include "tendon_rows_deriv.h"
#include "dyn.h"
#include "grad.h"
#include "params.h"
#include "primitive_deriv.h"
#include "rot.h"
#include "spatial.h"

//---------------------------------------------------------------------------------------------------------
// messages

// d->lastwarning = the message (not counted as a warning: a refused call, not numerical trouble); PHYS_ERR_ARG
static physStatus refuse(physData* d, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static physStatus refuse(physData* d, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->lastwarning, sizeof(d->lastwarning), fmt, ap);
  va_end(ap);
  return PHYS_ERR_ARG;
}

// MJCF name of a geom type
static const char* type_name(int t) {
  static const char* const NAMES[PHYS_NGEOMTYPE] = {"plane",    "sphere", "capsule", "ellipsoid",
                                                    "cylinder", "box",    "mesh"};
  return t >= 0 && t < PHYS_NGEOMTYPE ? NAMES[t] : "?";
}

//---------------------------------------------------------------------------------------------------------
// the contact frame and its derivative

// the world axis phys_contact_frame starts from: e = x, or y when |n_x| >= 0.8
static void frame_axis(double e[3], const double n[3]) {
  e[0] = e[1] = e[2] = 0;
  e[fabs(n[0]) < 0.8 ? 0 : 1] = 1;
}

// dF (3 x 3, rows dn, dt1, dt2) of phys_contact_frame along dn: t = e - (e.n) n, t1 = t/|t|, t2 = n x t1,
// dt = -(e.dn) n - (e.n) dn, dt1 = (dt - t1 (t1.dt))/|t|, dt2 = dn x t1 + n x dt1
static void frame_jvp(double dF[9], const double n[3], const double dn[3]) {
  double e[3], t[3], t1[3], dt[3], c1[3], c2[3];
  frame_axis(e, n);
  double en = phys_dot3(e, n), edn = phys_dot3(e, dn);
  for (int k = 0; k < 3; k++) t[k] = e[k] - en * n[k];
  double len = phys_norm3(t);
  for (int k = 0; k < 3; k++) t1[k] = t[k] / len, dt[k] = -edn * n[k] - en * dn[k];
  double s = phys_dot3(t1, dt);
  for (int k = 0; k < 3; k++) dF[k] = dn[k], dF[3 + k] = (dt[k] - t1[k] * s) / len;
  phys_cross3(c1, dn, t1);
  phys_cross3(c2, n, dF + 3);
  for (int k = 0; k < 3; k++) dF[6 + k] = c1[k] + c2[k];
}

// n_bar += adjoint of phys_contact_frame for s = sum_r Fbar_r . F_r: t1_bar = Fbar_1 + Fbar_2 x n,
// n_bar += Fbar_0 + t1 x Fbar_2 - (n.tb) e - (e.n) tb, tb = (t1_bar - t1 (t1.t1_bar))/|t|
static void frame_vjp(double n_bar[3], const double n[3], const double Fbar[9]) {
  double e[3], t[3], t1[3], t1b[3], tb[3], c[3];
  frame_axis(e, n);
  double en = phys_dot3(e, n);
  for (int k = 0; k < 3; k++) t[k] = e[k] - en * n[k];
  double len = phys_norm3(t);
  for (int k = 0; k < 3; k++) t1[k] = t[k] / len;
  phys_cross3(c, Fbar + 6, n);
  for (int k = 0; k < 3; k++) t1b[k] = Fbar[3 + k] + c[k];
  double s = phys_dot3(t1, t1b);
  for (int k = 0; k < 3; k++) tb[k] = (t1b[k] - t1[k] * s) / len;
  double ntb = phys_dot3(n, tb);
  phys_cross3(c, t1, Fbar + 6);
  for (int k = 0; k < 3; k++) n_bar[k] += Fbar[k] + c[k] - ntb * e[k] - en * tb[k];
}

//---------------------------------------------------------------------------------------------------------
// one contact's geometry Jacobian

// a contact in its pair function's terms: geoms (ga, gb) in the function's order, flip = 1 when ga is the
// contact's geom[1] (then n_fn = -n), and D (7 x ncol) = d(pos, n_fn, dist)/d(tw_a, tw_b, size_a, size_b)
typedef struct {
  const physContact* c;      // the contact (in the problem's list p->con)
  int ga, gb, flip, ncol, nsa;
  double* D;
} contactGeom;

// the outputs of one pair-function call as the function wrote them (its geom order, normal and numbering), from
// the stored contacts, and once a contact of the pair asked for them the Jacobians of all of them
// (phys_primitive_deriv_all), kept for the pair's next contacts: a GJK/EPA pair's recorded features and
// clipping are differentiated once per pair
typedef struct {
  int first, nout;           // p->con[first .. first + nout) are the call's outputs 0 .. nout-1; first < 0: empty
  physContact out[PHYS_MAXPAIRCON];
  int hasjac;                // 1: jac and rc hold this output's Jacobians
  int rc[PHYS_MAXPAIRCON];   // phys_primitive_deriv_out's return per output
  double jac[PHYS_MAXPAIRCON * 7 * PHYS_PRIMITIVE_DERIV_MAXCOL];   // nout x 7 x ncol
} pairCache;

// pc = the outputs of contact i's call (p->con[i - pairout] onwards while the numbering, geoms and order
// continue), the normals and the features as the function wrote them (in its geom order); 0, or -1 when the
// record is inconsistent
static int pair_outputs(const physConstraintProblem* p, int i, pairCache* pc) {
  const physContact* c = p->con + i;
  int first = i - c->pairout;
  if (pc->first == first && first >= 0) return 0;
  pc->first = -1, pc->nout = 0, pc->hasjac = 0;
  if (c->pairout < 0 || c->pairout >= PHYS_MAXPAIRCON || first < 0) return -1;
  for (int k = 0; k < PHYS_MAXPAIRCON && first + k < p->nc; k++) {
    const physContact* o = p->con + first + k;
    if (o->pairout != k || o->geom[0] != c->geom[0] || o->geom[1] != c->geom[1] || o->pairflip != c->pairflip) break;
    pc->out[k] = *o;
    if (o->pairflip) {   // the normal and the features in the function's order
      for (int j = 0; j < 3; j++) pc->out[k].frame[j] = -o->frame[j];
      pc->out[k].feature[0] = o->feature[1], pc->out[k].feature[1] = o->feature[0];
      pc->out[k].featangle[0] = o->featangle[1], pc->out[k].featangle[1] = o->featangle[0];
      memcpy(pc->out[k].witness[0], o->witness[1], sizeof(o->witness[1]));
      memcpy(pc->out[k].witness[1], o->witness[0], sizeof(o->witness[0]));
    }
    pc->nout = k + 1;
  }
  if (pc->nout <= c->pairout) return -1;
  pc->first = first;
  return 0;
}

// cg->D of output k of pc's call: from the Jacobians of all the outputs, computed by the pair's first contact
// that asks; -1 when k has no derivative
static int pair_jacobian(const physModel* m, const physData* d, const contactGeom* cg, int k, pairCache* pc) {
  if (!pc->hasjac) {
    phys_primitive_deriv_all(pc->jac, pc->rc, m, d, cg->ga, cg->gb, pc->out, pc->nout);
    pc->hasjac = 1;
  }
  if (pc->rc[k]) return -1;
  memcpy(cg->D, pc->jac + 7 * (size_t)cg->ncol * k, sizeof(double) * 7 * (size_t)cg->ncol);
  return 0;
}

// fill cg for contact i of p from its record: pair order, Jacobian D from d's arena (caller marks/frees); PHYS_ERR_ARG
// with the message in d->lastwarning when the pair has no geometry derivative or the contact's record is not
// reproduced. pc carries the pair's outputs and Jacobians from one contact of a pair to the next
static physStatus contact_geom(const physModel* m, physData* d, const physConstraintProblem* p, int i,
                               contactGeom* cg, pairCache* pc) {
  const physContact* c = cg->c = p->con + i;
  int g0 = c->geom[0], g1 = c->geom[1], t0 = m->geom_type[g0], t1 = m->geom_type[g1];
  cg->flip = c->pairflip;
  cg->ga = cg->flip ? g1 : g0;
  cg->gb = cg->flip ? g0 : g1;
  cg->nsa = phys_geom_nsize(m->geom_type[cg->ga]);
  cg->ncol = phys_primitive_deriv_ncol(m, cg->ga, cg->gb);
  cg->D = phys_stack_alloc(d, 7 * (size_t)cg->ncol);
  if (pair_outputs(p, i, pc))
    return refuse(d, "contact_deriv: contact %d (geoms %d and %d, %s-%s): its record (output %d of its pair "
                  "function) does not match the contacts around it (the list must be a detection's)",
                  i, g0, g1, type_name(t0), type_name(t1), c->pairout);
  if (pair_jacobian(m, d, cg, c->pairout, pc))
    return refuse(d, "contact_deriv: contact %d (geoms %d and %d, %s-%s): no geometry derivative that reproduces "
                  "it (output %d of the pair function; an unsupported pair, a degenerate configuration, or "
                  "phys_collision not run at the state of the problem)",
                  i, g0, g1, type_name(m->geom_type[cg->ga]), type_name(m->geom_type[cg->gb]), c->pairout);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// chains

// S = sum_{j on body's chain} x_j cdof_j (6, motion about the origin); x NULL gives 0
static void chain_motion(double S[6], const physModel* m, const physData* d, int body, const double* x) {
  memset(S, 0, 6 * sizeof(double));
  if (!x) return;
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j])
    for (int k = 0; k < 6; k++) S[k] += x[j] * d->cdof[6 * j + k];
}

// last dof of k's group (grad.h): a ball's or a free joint half's third dof, else k
static int group_last(const physModel* m, int k) {
  int g = phys_dof_group(m, k);
  int t = m->jnt_type[m->dof_jntid[k]];
  return t == PHYS_JNT_BALL || t == PHYS_JNT_FREE ? g + 2 : k;
}

// P_j = P_parent(j) + dq_j cdof_j (the motion of dof j's frame, nv x 6), then dcdof_j = P_last(group j) x cdof_j
static void dof_motions(const physModel* m, const physData* d, const double* dq, double* P, double* dcdof) {
  for (int j = 0; j < m->nv; j++) {
    int pj = m->dof_parentid[j];
    for (int k = 0; k < 6; k++) P[6 * j + k] = (pj >= 0 ? P[6 * pj + k] : 0) + dq[j] * d->cdof[6 * j + k];
  }
  for (int j = 0; j < m->nv; j++) phys_cross_motion(dcdof + 6 * j, P + 6 * group_last(m, j), d->cdof + 6 * j);
}

// twist (dt, dw) of geom g under the body motion V = P_lastdof(body) (zero for the world), or Vb_body when the
// motion is given per body (Vb, nbody x 6, may be NULL): dw = V_ang, dt = V_lin + V_ang x geom_xpos
static void geom_twist(double tw[6], const physModel* m, const physData* d, const double* P, const double* Vb,
                       int g) {
  int j = phys_body_lastdof(m, m->geom_bodyid[g]);
  memset(tw, 0, 6 * sizeof(double));
  if (!Vb && j < 0) return;
  const double* V = Vb ? Vb + 6 * m->geom_bodyid[g] : P + 6 * j;
  phys_cross3(tw, V, d->geom_xpos + 3 * g);
  for (int k = 0; k < 3; k++) tw[k] += V[3 + k], tw[3 + k] = V[k];
}

//---------------------------------------------------------------------------------------------------------
// forward mode

// (dp, dn, ddist) of contact i (dn of the contact's own normal) = D [tw_a; tw_b]
static void geom_jvp(double dp[3], double dn[3], double* ddist, const physModel* m, const physData* d,
                     const contactGeom* cg, const double* P, const double* Vb) {
  double tw[12], r[7];
  geom_twist(tw, m, d, P, Vb, cg->ga);
  geom_twist(tw + 6, m, d, P, Vb, cg->gb);
  for (int a = 0; a < 7; a++) {
    r[a] = 0;
    for (int b = 0; b < 12; b++) r[a] += cg->D[a * cg->ncol + b] * tw[b];
  }
  double sg = cg->flip ? -1 : 1;
  for (int k = 0; k < 3; k++) dp[k] = r[k], dn[k] = sg * r[3 + k];
  *ddist = r[6];
}

// dS += sign sum_{j on body's chain} beta_j dcdof_j
static void chain_dmotion(double dS[6], const physModel* m, int body, const double* beta, const double* dcdof,
                          double sign) {
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j])
    for (int k = 0; k < 6; k++) dS[k] += sign * beta[j] * dcdof[6 * j + k];
}

// out_j += sign (cdof_j . Psi + dcdof_j . Phi) over body's chain: the transposed row derivative
static void chain_dot(double* out, const physModel* m, const physData* d, int body, const double Psi[6],
                      const double Phi[6], const double* dcdof, double sign) {
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j])
    out[j] += sign * (phys_dot6(d->cdof + 6 * j, Psi) + phys_dot6(dcdof + 6 * j, Phi));
}

// contact i's forward outputs: dJ_beta rows 3i..3i+2 = dF_r . u + F_r . du, dJt_alpha += dJ' alpha, ddist
static void contact_jvp(const physModel* m, const physData* d, int i, const contactGeom* cg, const double* P,
                        const double* dcdof, const double* alpha, const double* beta, double* dJ_beta,
                        double* dJt_alpha, double* ddist) {
  const physContact* c = cg->c;
  int b0 = m->geom_bodyid[c->geom[0]], b1 = m->geom_bodyid[c->geom[1]];
  const double* p = c->pos;
  double dp[3], dn[3], dd, dF[9];
  geom_jvp(dp, dn, &dd, m, d, cg, P, NULL);
  frame_jvp(dF, c->frame, dn);
  if (ddist) ddist[3 * i] = dd, ddist[3 * i + 1] = ddist[3 * i + 2] = 0;
  if (dJ_beta) {
    // u = v_rel + w_rel x p, du = dv_rel + dw_rel x p + w_rel x dp
    double S1[6], S0[6], S[6], dS[6] = {0, 0, 0, 0, 0, 0}, u[3], du[3], t[3];
    chain_motion(S1, m, d, b1, beta);
    chain_motion(S0, m, d, b0, beta);
    for (int k = 0; k < 6; k++) S[k] = S1[k] - S0[k];
    chain_dmotion(dS, m, b1, beta, dcdof, 1);
    chain_dmotion(dS, m, b0, beta, dcdof, -1);
    phys_cross3(t, S, p);
    for (int k = 0; k < 3; k++) u[k] = S[3 + k] + t[k];
    phys_cross3(t, dS, p);
    for (int k = 0; k < 3; k++) du[k] = dS[3 + k] + t[k];
    phys_cross3(t, S, dp);
    for (int k = 0; k < 3; k++) du[k] += t[k];
    for (int r = 0; r < 3; r++) dJ_beta[3 * i + r] = phys_dot3(dF + 3 * r, u) + phys_dot3(c->frame + 3 * r, du);
  }
  if (dJt_alpha) {
    // f = sum_r alpha_r F_r, df = sum_r alpha_r dF_r; column j: df . Jp_j + f . dJp_j
    //   = cdof_j . Psi + dcdof_j . Phi, Psi = (p x df + dp x f, df), Phi = (p x f, f)
    double f[3] = {0, 0, 0}, df[3] = {0, 0, 0}, Psi[6], Phi[6], t[3];
    for (int r = 0; r < 3; r++)
      for (int k = 0; k < 3; k++) f[k] += alpha[3 * i + r] * c->frame[3 * r + k],
                                  df[k] += alpha[3 * i + r] * dF[3 * r + k];
    phys_cross3(Psi, p, df);
    phys_cross3(t, dp, f);
    for (int k = 0; k < 3; k++) Psi[k] += t[k], Psi[3 + k] = df[k];
    phys_cross3(Phi, p, f);
    for (int k = 0; k < 3; k++) Phi[3 + k] = f[k];
    chain_dot(dJt_alpha, m, d, b1, Psi, Phi, dcdof, 1);
    chain_dot(dJt_alpha, m, d, b0, Psi, Phi, dcdof, -1);
  }
}

// the dof and sign of limit row `row` of p (its single nonzero entry, +-1); -1 if the row is not of that form
static int limit_dof(const physConstraintProblem* p, int row, double* sign) {
  const double* J = p->J + (size_t)row * p->nv;
  int dof = -1;
  for (int j = 0; j < p->nv; j++) {
    if (J[j] == 0) continue;
    if (dof >= 0 || fabs(J[j]) != 1) return -1;
    dof = j, *sign = J[j];
  }
  return dof;
}

// PHYS_OK if p is an assembled problem of d's model: its contacts p->con (nc), n = 3 nc + nl rows, limit rows
// +-e_dof
static physStatus check_problem(const physModel* m, physData* d, const physConstraintProblem* p) {
  if ((p->nc > 0 && !p->con) || p->nv != m->nv || p->n != 3 * p->nc + p->nl)
    return refuse(d, "contact_deriv: the problem (nc %d, nl %d, n %d, nv %d, contacts %s) is not the one of d (nv %d)",
                  p->nc, p->nl, p->n, p->nv, p->con ? "given" : "missing", m->nv);
  for (int l = 0; l < p->nl - phys_tendon_rows_of(m, d, p, NULL, NULL); l++) {   // (tendon rows: their own file)
    double s;
    if (limit_dof(p, 3 * p->nc + l, &s) < 0)
      return refuse(d, "contact_deriv: row %d of the problem is not a joint-limit row (+-e_dof)", 3 * p->nc + l);
  }
  return PHYS_OK;
}

// the geometry of every contact of p (arena, caller marks/frees): an array of p->nc, or NULL with *st set
static contactGeom* geom_all(const physModel* m, physData* d, const physConstraintProblem* p, physStatus* st) {
  contactGeom* cg = (contactGeom*)phys_stack_alloc(d, (sizeof(contactGeom) * (size_t)p->nc + 7) / 8 + 1);
  *st = PHYS_OK;
  pairCache pc;   // (not zero-filled: 10 KB; empty is first < 0)
  pc.first = -1, pc.hasjac = 0;
  for (int i = 0; i < p->nc && *st == PHYS_OK; i++) *st = contact_geom(m, d, p, i, cg + i, &pc);
  return *st == PHYS_OK ? cg : NULL;
}

// the forward outputs along dq (P, dcdof: nv x 6 scratch) from the contacts' geometry cg
static void jvp_rows(const physModel* m, physData* d, const physConstraintProblem* p, const contactGeom* cg,
                     const double* dq, const double* alpha, const double* beta, double* dJ_beta, double* dJt_alpha,
                     double* ddist, double* P, double* dcdof) {
  dof_motions(m, d, dq, P, dcdof);
  if (dJt_alpha) memset(dJt_alpha, 0, sizeof(double) * (size_t)m->nv);
  for (int i = 0; i < p->nc; i++) contact_jvp(m, d, i, cg + i, P, dcdof, alpha, beta, dJ_beta, dJt_alpha, ddist);
  // limit rows: dJ = 0, ddist = sign dq_dof; tendon limit rows (tendon_rows_deriv.c)
  int nt = phys_tendon_rows_of(m, d, p, NULL, NULL);
  for (int l = 0; l < p->nl - nt; l++) {
    int row = 3 * p->nc + l;
    double s = 0;
    int dof = limit_dof(p, row, &s);
    if (dJ_beta) dJ_beta[row] = 0;
    if (ddist) ddist[row] = s * dq[dof];
  }
  if (nt > 0) phys_tendon_rows_jvp(m, d, p, dq, alpha, beta, dJ_beta, dJt_alpha, ddist, NULL);
}

physStatus phys_constraint_jvp(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                               const double* alpha, const double* beta, double* dJ_beta, double* dJt_alpha,
                               double* ddist) {
  if (!dq || (dJ_beta && !beta) || (dJt_alpha && !alpha))
    return refuse(d, "phys_constraint_jvp: dq, and beta for dJ_beta, alpha for dJt_alpha, are required");
  physStatus st = check_problem(m, d, p);
  if (st != PHYS_OK) return st;
  size_t mark = phys_stack_mark(d);
  contactGeom* cg = geom_all(m, d, p, &st);
  if (cg) {
    double* P = phys_stack_alloc(d, 6 * (size_t)m->nv + 1);
    double* dcdof = phys_stack_alloc(d, 6 * (size_t)m->nv + 1);
    jvp_rows(m, d, p, cg, dq, alpha, beta, dJ_beta, dJt_alpha, ddist, P, dcdof);
  }
  phys_stack_free(d, mark);
  return st;
}

// dJ rows 3i..3i+2 (n x nv) = contact i's rows of dJ[dq]: for each dof j of one chain only (flag: the dofs of
// geom[0]'s chain, 0 outside), sign (dF_r . Jp_j + F_r . dJp_j), Jp_j = cdof_lin_j + cdof_ang_j x p,
// dJp_j = dcdof_lin_j + dcdof_ang_j x p + cdof_ang_j x dp; a dof of both chains has J_rj = 0 identically.
// ang: the angular rows A_r = F_r (J_rot(b1) - J_rot(b0)) instead (issue 16): Jp_j = cdof_ang_j, dJp_j =
// dcdof_ang_j
static void contact_dJ(const physModel* m, const physData* d, int i, const contactGeom* cg, const double* P,
                       const double* Vb, const double* dcdof, int* flag, double* dJ, int ang) {
  const physContact* c = cg->c;
  const double *p = c->pos, *F = c->frame;
  int nv = m->nv, b0 = m->geom_bodyid[c->geom[0]], b1 = m->geom_bodyid[c->geom[1]];
  double dp[3], dn[3], dd, dF[9];
  geom_jvp(dp, dn, &dd, m, d, cg, P, Vb);
  frame_jvp(dF, F, dn);
  for (int j = phys_body_lastdof(m, b0); j >= 0; j = m->dof_parentid[j]) flag[j] = 1;
  for (int s = 0; s < 2; s++) {
    int body = s == 0 ? b1 : b0;
    double sign = s == 0 ? 1 : -1;
    for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j]) {
      if (s == 0 && flag[j]) break;   // the rest of b1's chain is b0's too
      const double *cj = d->cdof + 6 * j, *dc = dcdof + 6 * j;
      double Jp[3], dJp[3], t[3];
      phys_cross3(Jp, cj, p);
      phys_cross3(dJp, dc, p);
      phys_cross3(t, cj, dp);
      for (int k = 0; k < 3; k++)
        if (ang) Jp[k] = cj[k], dJp[k] = dc[k];
        else Jp[k] += cj[3 + k], dJp[k] += dc[3 + k] + t[k];
      for (int r = 0; r < 3; r++)
        dJ[(size_t)(3 * i + r) * nv + j] = sign * (phys_dot3(dF + 3 * r, Jp) + phys_dot3(F + 3 * r, dJp));
    }
  }
  // b0's chain, where it is not b1's: clear the flags, and the common part's rows (written by the b0 pass) to 0
  for (int j = phys_body_lastdof(m, b0); j >= 0; j = m->dof_parentid[j]) flag[j] = 0;
  for (int j = phys_body_lastdof(m, b1); j >= 0; j = m->dof_parentid[j]) flag[j] = 1;
  for (int j = phys_body_lastdof(m, b0); j >= 0; j = m->dof_parentid[j])
    if (flag[j])
      for (int r = 0; r < 3; r++) dJ[(size_t)(3 * i + r) * nv + j] = 0;
  for (int j = phys_body_lastdof(m, b1); j >= 0; j = m->dof_parentid[j]) flag[j] = 0;
}

// dJ along dq from the contacts' geometry cg (nc entries); ang: the angular rows' dA (3 nc x nv) instead
static void dJ_from(const physModel* m, physData* d, const physConstraintProblem* p, const contactGeom* cg,
                    const double* dq, double* dJ, int ang) {
  int nv = m->nv;
  memset(dJ, 0, sizeof(double) * (size_t)(ang ? 3 * p->nc : p->n) * nv);
  size_t mark = phys_stack_mark(d);
  double* P = phys_stack_alloc(d, 6 * (size_t)nv + 1);
  double* dcdof = phys_stack_alloc(d, 6 * (size_t)nv + 1);
  int* flag = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  memset(flag, 0, sizeof(int) * (size_t)nv);
  dof_motions(m, d, dq, P, dcdof);
  for (int i = 0; i < p->nc; i++) contact_dJ(m, d, i, cg + i, P, NULL, dcdof, flag, dJ, ang);
  if (!ang && phys_tendon_rows_of(m, d, p, NULL, NULL) > 0) phys_tendon_rows_jvp(m, d, p, dq, NULL, NULL, NULL, NULL, NULL, dJ);
  phys_stack_free(d, mark);
}

physStatus phys_angular_dJ(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                           double* dJ, double* dA) {
  if (!dq || !(dJ || dA)) return refuse(d, "phys_constraint_dJ: dq and dJ are required");
  physStatus st = check_problem(m, d, p);
  if (st != PHYS_OK) return st;
  size_t mark = phys_stack_mark(d);
  contactGeom* cg = geom_all(m, d, p, &st);
  if (cg && dJ) dJ_from(m, d, p, cg, dq, dJ, 0);
  if (cg && dA) dJ_from(m, d, p, cg, dq, dA, 1);
  if (!cg && dJ) memset(dJ, 0, sizeof(double) * (size_t)p->n * m->nv);
  if (!cg && dA) memset(dA, 0, sizeof(double) * 3 * (size_t)p->nc * m->nv);
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_constraint_dJ(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                              double* dJ) {
  return dJ ? phys_angular_dJ(m, d, p, dq, dJ, NULL) : refuse(d, "phys_constraint_dJ: dq and dJ are required");
}

// 1 if body x is b or below it in the tree
static int in_subtree(const physModel* m, int x, int b) {
  for (; x > 0; x = m->body_parentid[x])
    if (x == b) return 1;
  return 0;
}

struct physConstraintGeom_ {
  contactGeom* cg;
};

physConstraintGeom* phys_constraint_geom(const physModel* m, physData* d, const physConstraintProblem* p,
                                         physStatus* st) {
  *st = check_problem(m, d, p);
  if (*st != PHYS_OK) return NULL;
  physConstraintGeom* g = (physConstraintGeom*)phys_stack_alloc(d, 1);
  g->cg = geom_all(m, d, p, st);
  return g->cg ? g : NULL;
}

physStatus phys_constraint_dJ_geom(const physModel* m, physData* d, const physConstraintProblem* p,
                                   const physConstraintGeom* g, const double* dq, double* dJ) {
  if (!g || !dq || !dJ) return refuse(d, "phys_constraint_dJ_geom: g, dq and dJ are required");
  dJ_from(m, d, p, g->cg, dq, dJ, 0);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// reverse mode

// the weights of a reverse pass: s = alpha' J beta (rank one) or <A, J> (A n x nv), plus gamma' dist
typedef struct {
  const double *alpha, *beta, *A, *gamma;   // alpha and beta both or neither; A or NULL; gamma or NULL
  int nv;
  int ang;                                  // 1: A weighs the angular rows (3 nc x nv; alpha, beta, gamma unused)
} revWeights;

// adjoints of contact i's geometry for its share of s: bar7 = (p_bar, n_fn_bar, dist_bar), and nrow weighted
// rows (beta_r, Phi_r) of the cdof terms: with S_r = the rows' motions (rel) and U_r = S_r,lin + S_r,ang x p,
//   rank one: U_r = alpha_r u, one row (beta, Phi = (p x f, f)), f = sum_r alpha_r F_r, p_bar = f x w_rel;
//   matrix:   three rows (A_r, Phi_r = (p x F_r, F_r)), p_bar = sum_r F_r x w_r;
// n_bar the frame adjoint of Fbar_r = U_r, dist_bar = gamma_0
static int contact_bar(double bar7[7], double Phi[18], const double* rowbeta[3], const physModel* m,
                       const physData* d, int i, const contactGeom* cg, const revWeights* w) {
  const physContact* c = cg->c;
  const double *p = c->pos, *F = c->frame;
  int b0 = m->geom_bodyid[c->geom[0]], b1 = m->geom_bodyid[c->geom[1]], nrow = 0;
  double Fbar[9], nb[3] = {0, 0, 0};
  memset(bar7, 0, 7 * sizeof(double));
  bar7[6] = w->gamma ? w->gamma[3 * i] : 0;
  for (int r = 0; r < 3 && (w->A || (w->alpha && w->beta)); r++) {
    if (r > 0 && !w->A) break;
    // S = the motion of row r's weights (rank one: beta for all rows), u = S_lin + S_ang x p
    const double* x = w->A ? w->A + (size_t)(3 * i + r) * w->nv : w->beta;
    double S1[6], S0[6], S[6], u[3], t[3], f[3] = {0, 0, 0};
    chain_motion(S1, m, d, b1, x);
    chain_motion(S0, m, d, b0, x);
    for (int k = 0; k < 6; k++) S[k] = S1[k] - S0[k];
    phys_cross3(t, S, p);
    for (int k = 0; k < 3; k++) u[k] = w->ang ? S[k] : S[3 + k] + t[k];   // (angular rows: u = w_rel)
    if (w->A) {
      for (int k = 0; k < 3; k++) f[k] = F[3 * r + k], Fbar[3 * r + k] = u[k];
    } else {
      for (int q = 0; q < 3; q++)
        for (int k = 0; k < 3; k++) f[k] += w->alpha[3 * i + q] * F[3 * q + k], Fbar[3 * q + k] = w->alpha[3 * i + q] * u[k];
    }
    phys_cross3(t, f, S);   // p_bar += f x w (angular rows: no point, Phi = (f, 0))
    double* Ph = Phi + 6 * nrow;
    phys_cross3(Ph, p, f);
    for (int k = 0; k < 3; k++)
      if (w->ang) Ph[k] = f[k], Ph[3 + k] = 0;
      else bar7[k] += t[k], Ph[3 + k] = f[k];
    rowbeta[nrow++] = x;
  }
  if (nrow == 0) return 0;
  frame_vjp(nb, F, Fbar);
  double sg = cg->flip ? -1 : 1;
  for (int k = 0; k < 3; k++) bar7[3 + k] = sg * nb[k];
  return nrow;
}

// col_bar (ncol) = D' bar7
static void geom_vjp(double* col_bar, const contactGeom* cg, const double bar7[7]) {
  for (int b = 0; b < cg->ncol; b++) {
    col_bar[b] = 0;
    for (int a = 0; a < 7; a++) col_bar[b] += cg->D[a * cg->ncol + b] * bar7[a];
  }
}

// q_bar_k += cdof_k . (Psi + sign sum_r B_r,k x* Phi_r) over the chain of geom g's body, Psi = (x_g x dt_bar +
// dw_bar, dt_bar); B_r,k = sum_{j after k} beta_r,j cdof_j: the suffix sum from the leaf plus k's earlier group
// members
static void chain_vjp(double* q_bar, const physModel* m, const physData* d, int g, const double tw_bar[6], int nrow,
                      const double* const rowbeta[3], const double Phi[18], double sign) {
  double Psi[6], B[18], Bk[6], X[6];
  memset(B, 0, sizeof(B));
  phys_cross3(Psi, d->geom_xpos + 3 * g, tw_bar);
  for (int k = 0; k < 3; k++) Psi[k] += tw_bar[3 + k], Psi[3 + k] = tw_bar[k];
  for (int k = phys_body_lastdof(m, m->geom_bodyid[g]); k >= 0; k = m->dof_parentid[k]) {
    const double* ck = d->cdof + 6 * k;
    double s = phys_dot6(ck, Psi);
    for (int r = 0; r < nrow; r++) {
      const double* x = rowbeta[r];
      double* Br = B + 6 * r;
      for (int a = 0; a < 6; a++) Br[a] += x[k] * ck[a], Bk[a] = Br[a];
      for (int j = phys_dof_group(m, k); j < k; j++)
        for (int a = 0; a < 6; a++) Bk[a] += x[j] * d->cdof[6 * j + a];
      phys_cross_force(X, Bk, Phi + 6 * r);
      s += sign * phys_dot6(ck, X);
    }
    q_bar[k] += s;
  }
}

// q_bar += the gradient of the weights' s (revWeights)
static physStatus reverse(const physModel* m, physData* d, const physConstraintProblem* p, const revWeights* w,
                          double* q_bar) {
  physStatus st = check_problem(m, d, p);
  if (st != PHYS_OK) return st;
  if (!(w->alpha && w->beta) && !w->A && !w->gamma) return PHYS_OK;
  pairCache pc;   // (not zero-filled: 10 KB; empty is first < 0)
  pc.first = -1, pc.hasjac = 0;
  for (int i = 0; i < p->nc && st == PHYS_OK; i++) {
    size_t mk = phys_stack_mark(d);
    contactGeom cg;
    st = contact_geom(m, d, p, i, &cg, &pc);
    if (st == PHYS_OK) {
      double bar7[7], Phi[18];
      const double* rowbeta[3] = {NULL, NULL, NULL};
      double* col = phys_stack_alloc(d, (size_t)cg.ncol);
      int nrow = contact_bar(bar7, Phi, rowbeta, m, d, i, &cg, w);
      geom_vjp(col, &cg, bar7);
      // geom[1] carries +Phi, geom[0] -Phi; ga's twist bar is cols 0..5, gb's 6..11; ga = geom[1] when flipped
      double sa = cg.flip ? 1 : -1;
      chain_vjp(q_bar, m, d, cg.ga, col, nrow, rowbeta, Phi, sa);
      chain_vjp(q_bar, m, d, cg.gb, col + 6, nrow, rowbeta, Phi, -sa);
    }
    phys_stack_free(d, mk);
  }
  int nt = phys_tendon_rows_of(m, d, p, NULL, NULL);
  for (int l = 0; l < p->nl - nt && st == PHYS_OK && w->gamma; l++) {
    int row = 3 * p->nc + l;
    double s = 0;
    int dof = limit_dof(p, row, &s);
    q_bar[dof] += s * w->gamma[row];
  }
  if (nt > 0 && st == PHYS_OK && !w->ang) phys_tendon_rows_vjp(m, d, p, w->alpha, w->beta, w->A, w->gamma, q_bar);
  return st;
}

physStatus phys_angular_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p, const double* W,
                                   double* q_bar) {
  revWeights w = {NULL, NULL, W, NULL, m->nv, 1};
  return W ? reverse(m, d, p, &w, q_bar) : PHYS_OK;
}

physStatus phys_constraint_vjp(const physModel* m, physData* d, const physConstraintProblem* p, const double* alpha,
                               const double* beta, const double* gamma, double* q_bar) {
  revWeights w = {alpha && beta ? alpha : NULL, alpha && beta ? beta : NULL, NULL, gamma, m->nv, 0};
  return reverse(m, d, p, &w, q_bar);
}

physStatus phys_constraint_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p,
                                      const double* A, const double* gamma, double* q_bar) {
  revWeights w = {NULL, NULL, A, gamma, m->nv, 0};
  return reverse(m, d, p, &w, q_bar);
}

//---------------------------------------------------------------------------------------------------------
// sizes

// contact i's geometry (cg) and *col = D' bar7 (cg->ncol, arena of the caller's mark): the weights' gradient in
// its geometry columns (both geoms' twists, then their sizes)
static physStatus contact_col(const physModel* m, physData* d, const physConstraintProblem* p, int i,
                              const revWeights* w, pairCache* pc, contactGeom* cg, double** col) {
  physStatus st = contact_geom(m, d, p, i, cg, pc);
  if (st != PHYS_OK) return st;
  double bar7[7], Phi[18];
  const double* rowbeta[3];
  *col = phys_stack_alloc(d, (size_t)cg->ncol);
  contact_bar(bar7, Phi, rowbeta, m, d, i, cg, w);
  geom_vjp(*col, cg, bar7);
  return PHYS_OK;
}

// size_bar += the gradient of the weights' s in the sizes of geom g
static physStatus size_reverse(const physModel* m, physData* d, const physConstraintProblem* p, int g,
                               const revWeights* w, double* size_bar) {
  if (g < 0 || g >= m->ngeom) return refuse(d, "contact_deriv: geom %d out of range (ngeom %d)", g, m->ngeom);
  physStatus st = check_problem(m, d, p);
  if (st != PHYS_OK) return st;
  pairCache pc;   // (not zero-filled: 10 KB; empty is first < 0)
  pc.first = -1, pc.hasjac = 0;
  for (int i = 0; i < p->nc && st == PHYS_OK; i++) {
    const physContact* c = p->con + i;
    if (c->geom[0] != g && c->geom[1] != g) continue;
    size_t mk = phys_stack_mark(d);
    contactGeom cg;
    double* col = NULL;
    st = contact_col(m, d, p, i, w, &pc, &cg, &col);
    if (st == PHYS_OK) {
      int off = g == cg.ga ? 12 : 12 + cg.nsa, ns = phys_geom_nsize(m->geom_type[g]);
      for (int k = 0; k < ns; k++) size_bar[k] += col[off + k];
    }
    phys_stack_free(d, mk);
  }
  return st;
}

physStatus phys_constraint_size_vjp(const physModel* m, physData* d, const physConstraintProblem* p, int g,
                                    const double* alpha, const double* beta, const double* gamma, double* size_bar) {
  revWeights w = {alpha && beta ? alpha : NULL, alpha && beta ? beta : NULL, NULL, gamma, m->nv, 0};
  return size_reverse(m, d, p, g, &w, size_bar);
}

physStatus phys_constraint_size_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p, int g,
                                           const double* A, const double* gamma, double* size_bar) {
  revWeights w = {NULL, NULL, A, gamma, m->nv, 0};
  return size_reverse(m, d, p, g, &w, size_bar);
}

// issue 14 item 2: vbar (3 mesh_vertnum) += the gradient of the weights' s in the vertices of learned mesh geom g.
// A contact of g with a plane is a hull vertex v (its record: convex_deriv.h) that depends on g's vertices only
// through its world point x = c + R v, so d/dv = (d/dt) R with t g's world translation, the twist columns of the
// contact's geometry Jacobian; the other vertices' entries are 0. Contacts of g with other geoms are refused.
static physStatus vertex_reverse(const physModel* m, physData* d, const physConstraintProblem* p, int g,
                                 const revWeights* w, double* vbar) {
  physStatus st = check_problem(m, d, p);
  if (st != PHYS_OK) return st;
  int mid = m->geom_dataid[g];
  const double* R = d->geom_xmat + 9 * g;
  pairCache pc;
  pc.first = -1, pc.hasjac = 0;
  for (int i = 0; i < p->nc && st == PHYS_OK; i++) {
    const physContact* c = p->con + i;
    if (c->geom[0] != g && c->geom[1] != g) continue;
    int side = c->geom[1] == g, other = c->geom[1 - side], f = c->feature[side], hv = PHYS_FEATURE_INDEX(f);
    if (m->geom_type[other] != PHYS_GEOM_PLANE)
      return refuse(d, "contact_deriv: contact %d of learned geom '%s' with the %s '%s': derivatives with respect to "
                    "learned vertices are for contacts with planes only", i, phys_id2name(m, "geom", g),
                    type_name(m->geom_type[other]), phys_id2name(m, "geom", other));
    if (PHYS_FEATURE_KIND(f) != PHYS_FEAT_VERTEX || hv < 0 || hv >= m->mesh_hullnum[mid])
      return refuse(d, "contact_deriv: contact %d of learned geom '%s': no hull vertex recorded", i,
                    phys_id2name(m, "geom", g));
    size_t mk = phys_stack_mark(d);
    contactGeom cg;
    double* col = NULL;
    st = contact_col(m, d, p, i, w, &pc, &cg, &col);
    if (st == PHYS_OK) {
      const double* dt = col + (g == cg.ga ? 0 : 6);
      double* vb = vbar + 3 * m->hull_vert[m->mesh_hulladr[mid] + hv];
      for (int k = 0; k < 3; k++) vb[k] += R[k] * dt[0] + R[3 + k] * dt[1] + R[6 + k] * dt[2];
    }
    phys_stack_free(d, mk);
  }
  return st;
}

//---------------------------------------------------------------------------------------------------------
// matrices
//
// Column k of the matrices is the forward mode along e_k, written out per contact over the dofs k of its two
// chains (the only columns it reaches): the geometry along e_k is D [tw_a(k); tw_b(k)], tw_g(k) = (cdof_lin_k
// + cdof_ang_k x x_g, cdof_ang_k) for the geoms on k's subtree, and
//   dS_rel(k) = sum_{j after k} beta_j (cdof_k x cdof_j) (rel) = cdof_k x B_k,  B_k = B1_k - B0_k the suffix sums;
//   dJ'alpha (j, k) = sum over the contact's sides (sign) of cdof_j . Psi(k) + [j after k] (cdof_k x cdof_j) . Phi.
// The last term is gathered over all contacts per dof j (Phit_j = sum sign Phi) and added once: O(nv * depth).
// Cost O(ncon * (geometry + depth^2) + nv * depth).

// scratch indexed by dof (arena): the union of a contact's two chains (list; in: on 1 or 2 of them) and per
// dof k of it the geometry along e_k (r7: dp, dn_fn, ddist), B_k and Psi(k); Phit (nv x 6) over all contacts
typedef struct {
  int *list, *in, nlist;
  double *r7, *B, *Psi, *Phit;
} jacWork;

// the chain of geom g's body (sign +1 for the contact's geom[1], -1 for geom[0]): r7[k] += D[:, g's twist
// columns] tw_g(k), B[k] += sign B_k with B_k = sum_{j after k} beta_j cdof_j (beta NULL: none)
static void side_walk(jacWork* w, const physModel* m, const physData* d, const contactGeom* cg, int g, double sign,
                      const double* beta) {
  int off = g == cg->ga ? 0 : 6;
  const double* x = d->geom_xpos + 3 * g;
  double Bs[6] = {0, 0, 0, 0, 0, 0};
  for (int k = phys_body_lastdof(m, m->geom_bodyid[g]); k >= 0; k = m->dof_parentid[k]) {
    const double* cd = d->cdof + 6 * k;
    double *r7 = w->r7 + 7 * k, *B = w->B + 6 * k, tw[6];
    if (!w->in[k]) {
      w->list[w->nlist++] = k;
      memset(r7, 0, 7 * sizeof(double));
      memset(B, 0, 6 * sizeof(double));
    }
    w->in[k]++;   // 2: on both chains
    phys_cross3(tw, cd, x);
    for (int a = 0; a < 3; a++) tw[a] += cd[3 + a], tw[3 + a] = cd[a];
    for (int a = 0; a < 7; a++) {
      const double* Da = cg->D + a * cg->ncol + off;
      r7[a] += Da[0] * tw[0] + Da[1] * tw[1] + Da[2] * tw[2] + Da[3] * tw[3] + Da[4] * tw[4] + Da[5] * tw[5];
    }
    if (!beta) continue;
    for (int a = 0; a < 6; a++) Bs[a] += beta[k] * cd[a];
    for (int a = 0; a < 6; a++) B[a] += sign * Bs[a];
    for (int j = phys_dof_group(m, k); j < k; j++)   // k's earlier group members are after k too
      for (int a = 0; a < 6; a++) B[a] += sign * beta[j] * d->cdof[6 * j + a];
  }
}

// contact i's entries: Mb rows 3i..3i+2 and Md row 3i on the union of its chains, Ma's cdof_j . Psi(k) terms,
// Phit += sign Phi on each chain dof
static void contact_matrices(jacWork* w, const physModel* m, const physData* d, int i, const contactGeom* cg,
                             const double* alpha, const double* beta, double* Mb, double* Ma, double* Md) {
  const physContact* c = cg->c;
  int nv = m->nv, g1 = c->geom[1], g0 = c->geom[0];
  const double *p = c->pos, *F = c->frame;
  double S1[6], S0[6], S[6], u[3], f[3] = {0, 0, 0}, Phi[6], t[3];
  chain_motion(S1, m, d, m->geom_bodyid[g1], beta);
  chain_motion(S0, m, d, m->geom_bodyid[g0], beta);
  for (int k = 0; k < 6; k++) S[k] = S1[k] - S0[k];
  phys_cross3(t, S, p);
  for (int k = 0; k < 3; k++) u[k] = S[3 + k] + t[k];
  if (alpha)
    for (int r = 0; r < 3; r++)
      for (int k = 0; k < 3; k++) f[k] += alpha[3 * i + r] * F[3 * r + k];
  phys_cross3(Phi, p, f);
  for (int k = 0; k < 3; k++) Phi[3 + k] = f[k];
  w->nlist = 0;
  side_walk(w, m, d, cg, g1, 1, beta);
  side_walk(w, m, d, cg, g0, -1, beta);
  double sg = cg->flip ? -1 : 1;
  for (int a = 0; a < w->nlist; a++) {
    int k = w->list[a];
    const double* r7 = w->r7 + 7 * k;
    double dn[3] = {sg * r7[3], sg * r7[4], sg * r7[5]}, dF[9];
    if (Md) Md[(size_t)(3 * i) * nv + k] = r7[6];
    if (!Mb && !Ma) continue;
    frame_jvp(dF, F, dn);
    if (Mb) {
      // du = dS_lin + dS_ang x p + w_rel x dp, dS = cdof_k x B_k
      double dS[6], du[3];
      phys_cross_motion(dS, d->cdof + 6 * k, w->B + 6 * k);
      phys_cross3(du, dS, p);
      phys_cross3(t, S, r7);
      for (int b = 0; b < 3; b++) du[b] += dS[3 + b] + t[b];
      for (int r = 0; r < 3; r++)
        Mb[(size_t)(3 * i + r) * nv + k] = phys_dot3(dF + 3 * r, u) + phys_dot3(F + 3 * r, du);
    }
    if (Ma) {
      // Psi(k) = (p x df + dp x f, df), df = sum_r alpha_r dF_r
      double df[3] = {0, 0, 0}, *Psi = w->Psi + 6 * k;
      for (int r = 0; r < 3; r++)
        for (int b = 0; b < 3; b++) df[b] += alpha[3 * i + r] * dF[3 * r + b];
      phys_cross3(Psi, p, df);
      phys_cross3(t, r7, f);
      for (int b = 0; b < 3; b++) Psi[b] += t[b], Psi[3 + b] = df[b];
    }
  }
  if (Ma) {
    for (int s = 0; s < 2; s++) {
      int g = s == 0 ? g1 : g0;
      double sign = s == 0 ? 1 : -1;
      for (int j = phys_body_lastdof(m, m->geom_bodyid[g]); j >= 0; j = m->dof_parentid[j]) {
        if (w->in[j] == 2) continue;   // a dof of both chains: its column of J is 0 (both terms cancel)
        const double* cj = d->cdof + 6 * j;
        double* row = Ma + (size_t)j * nv;
        for (int a = 0; a < w->nlist; a++) row[w->list[a]] += sign * phys_dot6(cj, w->Psi + 6 * w->list[a]);
        for (int b = 0; b < 6; b++) w->Phit[6 * j + b] += sign * Phi[b];
      }
    }
  }
  for (int a = 0; a < w->nlist; a++) w->in[w->list[a]] = 0;
}

// Ma (j, k) += Phit_j . (cdof_k x cdof_j) for every k that j is after (ancestors and group members, not j)
static void turning_terms(const physModel* m, const physData* d, const double* Phit, double* Ma) {
  int nv = m->nv;
  for (int j = 0; j < nv; j++) {
    const double *Pj = Phit + 6 * j, *cj = d->cdof + 6 * j;
    if (!(Pj[0] || Pj[1] || Pj[2] || Pj[3] || Pj[4] || Pj[5])) continue;
    int gl = group_last(m, j);
    double x[6];
    for (int k = m->dof_parentid[j]; k >= 0; k = m->dof_parentid[k]) {
      phys_cross_motion(x, d->cdof + 6 * k, cj);
      Ma[(size_t)j * nv + k] += phys_dot6(Pj, x);
    }
    for (int k = j + 1; k <= gl; k++) {   // later members of j's group
      phys_cross_motion(x, d->cdof + 6 * k, cj);
      Ma[(size_t)j * nv + k] += phys_dot6(Pj, x);
    }
  }
}

// the three matrices from the geometry cg0 (NULL: computed here)
static physStatus jacobian_from(const physModel* m, physData* d, const physConstraintProblem* p,
                                const contactGeom* cg0, const double* alpha, const double* beta, double* dJb_dq,
                                double* dJta_dq, double* ddist_dq) {
  if ((dJb_dq && !beta) || (dJta_dq && !alpha))
    return refuse(d, "phys_constraint_jacobian: beta is required for dJb_dq, alpha for dJta_dq");
  physStatus st = check_problem(m, d, p);
  if (st != PHYS_OK) return st;
  int nv = m->nv, n = p->n;
  if (dJb_dq) memset(dJb_dq, 0, sizeof(double) * (size_t)n * nv);
  if (dJta_dq) memset(dJta_dq, 0, sizeof(double) * (size_t)nv * nv);
  if (ddist_dq) memset(ddist_dq, 0, sizeof(double) * (size_t)n * nv);
  size_t mark = phys_stack_mark(d);
  const contactGeom* cg = cg0 ? cg0 : geom_all(m, d, p, &st);
  if (cg) {
    jacWork w;
    w.list = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
    w.in = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
    w.r7 = phys_stack_alloc(d, 7 * (size_t)nv + 1);
    w.B = phys_stack_alloc(d, 6 * (size_t)nv + 1);
    w.Psi = phys_stack_alloc(d, 6 * (size_t)nv + 1);
    w.Phit = phys_stack_alloc(d, 6 * (size_t)nv + 1);
    memset(w.in, 0, sizeof(int) * (size_t)nv);
    memset(w.Phit, 0, 6 * sizeof(double) * (size_t)nv);
    for (int i = 0; i < p->nc; i++) contact_matrices(&w, m, d, i, cg + i, alpha, beta, dJb_dq, dJta_dq, ddist_dq);
    if (dJta_dq) turning_terms(m, d, w.Phit, dJta_dq);
    // limit rows: d dist / dq_dof = sign; tendon limit rows (tendon_rows_deriv.c)
    int nt = phys_tendon_rows_of(m, d, p, NULL, NULL);
    if (nt > 0) phys_tendon_rows_jacobian(m, d, p, alpha, beta, dJb_dq, dJta_dq, ddist_dq);
    for (int l = 0; l < p->nl - nt && ddist_dq; l++) {
      int row = 3 * p->nc + l;
      double sgn = 0;
      int dof = limit_dof(p, row, &sgn);
      ddist_dq[(size_t)row * nv + dof] = sgn;
    }
  }
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_constraint_jacobian(const physModel* m, physData* d, const physConstraintProblem* p,
                                    const double* alpha, const double* beta, double* dJb_dq, double* dJta_dq,
                                    double* ddist_dq) {
  return jacobian_from(m, d, p, NULL, alpha, beta, dJb_dq, dJta_dq, ddist_dq);
}

physStatus phys_constraint_jacobian_geom(const physModel* m, physData* d, const physConstraintProblem* p,
                                         const physConstraintGeom* g, const double* alpha, const double* beta,
                                         double* dJb_dq, double* dJta_dq, double* ddist_dq) {
  return jacobian_from(m, d, p, g ? g->cg : NULL, alpha, beta, dJb_dq, dJta_dq, ddist_dq);
}

// dJ (n x nv) and ddist (n) of the contacts (those of geom only if geom >= 0, the others' rows 0) under the dof
// motions P, dcdof and the per-body motions Vb (contact_dJ, geom_jvp)
static void moved_contacts(const physModel* m, physData* d, const physConstraintProblem* p,
                           const physConstraintGeom* g, const double* P, const double* Vb, const double* dcdof,
                           int geom, double* dJ, double* ddist) {
  memset(dJ, 0, sizeof(double) * (size_t)p->n * m->nv);
  memset(ddist, 0, sizeof(double) * (size_t)p->n);
  size_t mark = phys_stack_mark(d);
  int* flag = (int*)phys_stack_alloc(d, (size_t)m->nv / 2 + 1);
  memset(flag, 0, sizeof(int) * (size_t)m->nv);
  for (int i = 0; i < p->nc; i++) {
    const physContact* c = g->cg[i].c;
    if (geom >= 0 && c->geom[0] != geom && c->geom[1] != geom) continue;
    double dp[3], dn[3];
    geom_jvp(dp, dn, ddist + 3 * i, m, d, g->cg + i, P, Vb);
    contact_dJ(m, d, i, g->cg + i, P, Vb, dcdof, flag, dJ, 0);
  }
  phys_stack_free(d, mark);
}

// the per-body motion (6 nbody, from d's arena) of body's subtree translating along t: Vb = (0, t) on the
// subtree, 0 elsewhere
static double* subtree_translation(const physModel* m, physData* d, int body, const double t[3]) {
  double* Vb = phys_stack_alloc(d, 6 * (size_t)m->nbody);
  for (int b = 0; b < m->nbody; b++) {
    int sub = in_subtree(m, b, body);
    for (int k = 0; k < 3; k++) Vb[6 * b + k] = 0, Vb[6 * b + 3 + k] = sub ? t[k] : 0;
  }
  return Vb;
}

physStatus phys_constraint_pos_dJ(const physModel* m, physData* d, const physConstraintProblem* p,
                                  const physConstraintGeom* g, int body, const double t[3], double* dJ,
                                  double* ddist) {
  if (!g || !dJ || !ddist || body <= 0 || body >= m->nbody)
    return refuse(d, "phys_constraint_pos_dJ: g, dJ, ddist and a body are required");
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* P = phys_stack_alloc(d, 6 * (size_t)nv + 1);
  double* dcdof = phys_stack_alloc(d, 6 * (size_t)nv + 1);
  // the geoms move with their bodies, per body (a welded body's geoms move though no dof of the subtree
  // carries them)
  double* Vb = subtree_translation(m, d, body, t);
  // every dof frame of the subtree translates by V = (0, t): P_j = V there, 0 elsewhere; dcdof_j = V x cdof_j
  for (int j = 0; j < nv; j++) {
    int sub = in_subtree(m, m->dof_bodyid[j], body);
    for (int k = 0; k < 3; k++) P[6 * j + k] = 0, P[6 * j + 3 + k] = sub ? t[k] : 0;
  }
  for (int j = 0; j < nv; j++) phys_cross_motion(dcdof + 6 * j, P + 6 * group_last(m, j), d->cdof + 6 * j);
  moved_contacts(m, d, p, g, P, Vb, dcdof, -1, dJ, ddist);
  phys_stack_free(d, mark);
  return PHYS_OK;
}

physStatus phys_constraint_geom_shift_dJ(const physModel* m, physData* d, const physConstraintProblem* p,
                                        const physConstraintGeom* g, int geom, const double t[3], double* dJ,
                                        double* ddist) {
  if (!g || !dJ || !ddist || geom < 0 || geom >= m->ngeom)
    return refuse(d, "phys_constraint_geom_shift_dJ: g, dJ, ddist and a geom are required");
  size_t mark = phys_stack_mark(d);
  // no dof frame moves (P = dcdof = 0: zero); geom's body moves by Vb = (0, t), every other body not, and only the
  // contacts of geom itself are differentiated (its body's other geoms stay)
  size_t nz = 6 * (size_t)m->nv + 1, nb = 6 * (size_t)m->nbody;
  double* zero = phys_stack_alloc(d, nz);
  double* Vb = phys_stack_alloc(d, nb);
  memset(zero, 0, sizeof(double) * nz);
  memset(Vb, 0, sizeof(double) * nb);
  for (int k = 0; k < 3; k++) Vb[6 * m->geom_bodyid[geom] + 3 + k] = t[k];
  moved_contacts(m, d, p, g, zero, Vb, zero, geom, dJ, ddist);
  phys_stack_free(d, mark);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// parameters

physStatus phys_constraint_place_dJ(const physModel* m, physData* d, const physConstraintProblem* p,
                                    const physConstraintGeom* g, const physParam* pr, int k, double* dJ,
                                    double* ddist) {
  double tr[3];
  if (pr->kind == PHYS_PAR_HEIGHT) {   // the plane's world normal: column 2 of its rotation
    for (int i = 0; i < 3; i++) tr[i] = d->geom_xmat[9 * pr->id + 3 * i + 2];
    return phys_constraint_geom_shift_dJ(m, d, p, g, pr->id, tr, dJ, ddist);
  }
  phys_body_pos_direction(tr, m, d, pr->id, k);
  return phys_constraint_pos_dJ(m, d, p, g, pr->id, tr, dJ, ddist);
}

void phys_body_pos_direction(double tr[3], const physModel* m, const physData* d, int b, int k) {
  const double* R = d->xmat + 9 * m->body_parentid[b];
  for (int i = 0; i < 3; i++) tr[i] = R[3 * i + k];
}

physStatus phys_constraint_param_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p,
                                            const physParamTable* t, const double* W, const double* gamma,
                                            double* theta_bar) {
  physStatus st = phys_tendon_rows_param_check(m, d, p, t);   // (pos:BODY with a spatial tendon's limit row)
  for (int e = 0; st == PHYS_OK && e < t->n; e++)
    if (t->param[e].kind == PHYS_PAR_SIZE)
      st = phys_constraint_size_vjp_matrix(m, d, p, t->param[e].id, W, gamma, theta_bar + t->param[e].adr);
    else if (t->param[e].kind == PHYS_PAR_VERTICES) {
      revWeights w = {NULL, NULL, W, gamma, m->nv, 0};
      st = vertex_reverse(m, d, p, t->param[e].id, &w, theta_bar + t->param[e].adr);
    }
  // pos:BODY, height:GEOM: theta_bar_k += <W, dJ_k> + gamma . ddist_k along each placement direction (forward, 3
  // per body, 1 per plane)
  size_t mark = phys_stack_mark(d);
  physConstraintGeom* g = NULL;
  for (int e = 0; st == PHYS_OK && e < t->n; e++) {
    const physParam* pr = t->param + e;
    if ((pr->kind != PHYS_PAR_POS && pr->kind != PHYS_PAR_HEIGHT) || p->nc == 0) continue;
    if (!g) g = phys_constraint_geom(m, d, p, &st);
    for (int k = 0; k < pr->size && st == PHYS_OK; k++) {
      size_t mk = phys_stack_mark(d);
      double* dJ = phys_stack_alloc(d, (size_t)p->n * p->nv + 1);
      double* dd = phys_stack_alloc(d, (size_t)p->n + 1);
      st = phys_constraint_place_dJ(m, d, p, g, pr, k, dJ, dd);
      double sum = 0;
      for (size_t i = 0; st == PHYS_OK && W && i < (size_t)p->n * p->nv; i++) sum += W[i] * dJ[i];
      for (int i = 0; st == PHYS_OK && gamma && i < p->n; i++) sum += gamma[i] * dd[i];
      if (st == PHYS_OK) theta_bar[pr->adr + k] += sum;
      phys_stack_free(d, mk);
    }
  }
  phys_stack_free(d, mark);
  return st;
}

// the contacts' geometry along the tangent dq (issue 17 item 2, pbd_deriv.c): out (7 per contact of p) =
// (d pos (3), d normal (3), d dist) = D [tw_a; tw_b] of each contact (geom_jvp), the normal the contact's own
physStatus phys_constraint_geom_jvp(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                                    double* out) {
  physStatus st = PHYS_OK;
  size_t mark = phys_stack_mark(d);
  contactGeom* cg = geom_all(m, d, p, &st);
  if (cg) {
    double* P = phys_stack_alloc(d, 6 * (size_t)m->nv + 1);
    double* dcdof = phys_stack_alloc(d, 6 * (size_t)m->nv + 1);
    dof_motions(m, d, dq, P, dcdof);
    for (int i = 0; i < p->nc; i++) geom_jvp(out + 7 * i, out + 7 * i + 3, out + 7 * i + 6, m, d, cg + i, P, NULL);
  }
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_constraint_geom_pos_jvp(const physModel* m, physData* d, const physConstraintProblem* p, int body,
                                        const double t[3], double* out) {
  physStatus st = PHYS_OK;
  size_t mark = phys_stack_mark(d);
  contactGeom* cg = geom_all(m, d, p, &st);
  if (cg) {
    double* Vb = subtree_translation(m, d, body, t);
    for (int i = 0; i < p->nc; i++) geom_jvp(out + 7 * i, out + 7 * i + 3, out + 7 * i + 6, m, d, cg + i, NULL, Vb);
  }
  phys_stack_free(d, mark);
  return st;
}

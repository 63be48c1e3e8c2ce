// step_contact_deriv.c - exact derivatives of the constrained step (lcp, cone, ccp; step_contact_deriv.h).
//
// The step (src/step/step.c phys_step_constrained), W = M~^-1, M~ = M + dt B:
//   v_f = v + dt W (tau - c),  J, G = J W J',  g = J v_f + b,  lambda = solver(G, g, mu),
//   v+ = v_f + W J' lambda,  lambda_p = lcp(G, gpos, 0),  vpos = W J' lambda_p,  q+ = q (+) dt (v+ + vpos),
// b_normal = eps min(J_n v, 0) when touching (or within the margin when the free motion closes the gap),
// dist/dt within the margin (assemble.c phys_normal_bias); gpos = beta (dist + slop)/dt on penetrating rows.
// With y = v+ - v and a+ = y/dt: M~ y = dt (tau - c) + J' lambda, and M a + c = RNEA(q, v, a), so
//   M~ dy = dt (dtau - dRNEA|a+) + dJ' lambda + J' dlambda,   dy = dy0 + W J' dlambda,
//   dy0 = W (dt r + dJ' lambda),  r = dtau - dRNEA|a+   (dRNEA|a+: dtau/dq, dtau/dv of RNEA at qacc = a+).
// The solver sees (G, g, mu): dlambda = solver_jvp(dg, dG, dmu), with
//   dG = dJ Y' + Y dJ' - Y dM~ Y'   (Y = J W, rows Y_c = W J_c'; dM~ Y_c = dtau/dq(qacc = Y_c) - dtau/dq(0),
//                                     RNEA's dtau/dq being affine in qacc),
//   dg = dJ v_f + J dv_f + db = [dJ v+ + J (dv + dy0) + db] - dG lambda.
// dG goes to the solver in full, not only through dG lambda: lcp's minimal-norm solution of a singular G
// (a box's four coplanar corners) depends on G itself, and so does the load distribution J' lambda reads
// through dJ' lambda. db: eps phi' (dJ_n v + J_n dv) + deps phi on the restitution branch (J_n v < 0), ddist/dt
// on the gap branch. The position correction is the same structure on the frictionless problem:
//   dlambda_p = lcp_jvp(dgpos = beta ddist/dt on the penetrating rows, dG, 0),
//   dvpos = W (dJ' lambda_p + J' dlambda_p - dM~ vpos).
// Integration (grad.h): dq+ = E dq + dt D (dv+ + dvpos), E = Exp(phi)', D = Jr(phi), phi = dt (v+ + vpos) on
// rotation groups. Geometry (dJ, ddist with respect to q and geom sizes) comes from contact_deriv.h.
// Parameters theta: r = -R(a+) dtheta, dM~ x = (R(x) - R(0)) dtheta (params.h phys_param_forces), dmu (the
// friction of the geom holding the pair's maximum, both on ties (right derivative,
// phys_contact_material_moves); none when a <pair> sets it), deps (the same rule for restitution), sizes through phys_constraint_size_vjp (reverse mode: P's size columns are
// built row by row from the VJP).
// Reverse mode is the transpose of the same chain (contact_vjp). Cost: the geometry comes as matrices once
// (phys_constraint_jacobian for every q direction, phys_constraint_dJ per direction for dG, one
// phys_constraint_vjp_matrix for <G_bar, dG>); with more directions than 2n the solvers' derivatives are
// tabulated by 2n reverse passes (solver_tables) instead of a JVP per direction. lcp (products mode, cp->prod):
// its JVP reads dG only as dG z_k for three vectors per problem and dG's diagonal (phys_solve_lcp_jvp_prod), so
// dG is never formed: every q direction's dG z_k at once from one phys_constraint_jacobian and one
// phys_rnea_mass_deriv per vector (prod_matrix), the diagonal from Y_r' dM~ Y_r per row (quadratic forms, only
// when a problem is scaled); its VJP's G_bar comes factored (phys_solve_lcp_vjp_factored: outer products and a
// diagonal), so -<G_bar, Y dM~ Y'> is a few bilinear forms and one weighted sum of quadratic forms (contactAdj's
// fa, fb, gd) instead of one RNEA VJP per row. Scratch from d's arena; nothing allocates.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "contact_deriv.h"
#include "dyn.h"
#include "factor.h"
#include "grad.h"
#include "params.h"
#include "rot.h"
#include "step.h"
#include "step_contact_deriv.h"
#include "step_record.h"


// the linearization point: the step's stage, Y, the bias branches, the caller's saved lists
typedef struct contactPoint_ {
  physStepStage st;
  int nv, n, nc;
  double* Y;                 // n x nv: row c = W J_c'
  double* vsum;              // nv: v+ + vpos, the velocity of the position update
  double* vn;                // nc: J_n v before the step
  int* bias;                 // nc: PHYS_BIAS_* (contact.h)
  double* Jr;                // 9 per rotation group: Jr(phi)
  double* Et;                // 9 per rotation group: Exp(phi)'
  int* rot;                  // nv: rotation group block of each dof, -1 scalar
  double* acc;               // nv: the step's a+ = (v+ - v)/dt
  physContact *con, *conprev;   // the caller's lists: con is the warm-start input of the step
  int ncon, ncon_prev, ncon_dropped, nlimit;
  physContact* det;          // the contacts the stage detected, with their impulses (d->contact while in use)
  int ncon_det, nlimit_det, ndropped_det;
  physConstraintGeom* geom;  // the contacts' geometry derivatives, once (NULL: unsupported, refused later)
  physLcpLocal *lcp, *lcp_pos;  // lcp: the solver's local structure of both problems, once (else NULL)
  int nkink;                 // rows on the position correction's kink (kink_position_problem)
  // products mode (lcp with its local structures): dG enters only as dG z_k for three vectors per problem
  // (phys_solve_lcp_jvp_prod) and its diagonal, so neither dG nor the n x n x nv mass terms are formed
  int prod;
  double *zv, *uv;           // 3 x n: the main problem's z_k;  3 x nv: u_k = Y' z_k
  double *zp, *up;           // the same for the position problem (NULL without one)
} contactPoint;

//---------------------------------------------------------------------------------------------------------
// small kernels

// a . b over n values
static double dotn(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

// y = J x (n rows of J, nv columns)
static void mul_j(double* y, const double* J, const double* x, int n, int nv) {
  for (int r = 0; r < n; r++) y[r] = dotn(J + (size_t)r * nv, x, nv);
}

// y (+)= J' x (n rows of J); add 0 overwrites. Four rows per pass over y (rows with x_r = 0 skipped)
static void mul_jt(double* y, const double* J, const double* x, int n, int nv, int add) {
  if (!add) memset(y, 0, sizeof(double) * (size_t)nv);
  int rows[4], k = 0;
  for (int r = 0; r <= n; r++) {
    if (r < n && x[r] != 0) rows[k++] = r;
    if (k == 4 || (r == n && k > 0)) {
      for (int t = k; t < 4; t++) rows[t] = rows[0];
      double x0 = x[rows[0]], x1 = k > 1 ? x[rows[1]] : 0, x2 = k > 2 ? x[rows[2]] : 0, x3 = k > 3 ? x[rows[3]] : 0;
      const double *J0 = J + (size_t)rows[0] * nv, *J1 = J + (size_t)rows[1] * nv, *J2 = J + (size_t)rows[2] * nv,
                   *J3 = J + (size_t)rows[3] * nv;
      for (int i = 0; i < nv; i++) y[i] += J0[i] * x0 + J1[i] * x1 + J2[i] * x2 + J3[i] * x3;
      k = 0;
    }
  }
}

// 1 if x (n) is all zeros
static int all_zero(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i] != 0) return 0;
  return 1;
}

// n ints from d's arena
static int* arena_ints(physData* d, int n) { return (int*)phys_stack_alloc(d, (size_t)n / 2 + 1); }

// n doubles from d's arena, zeroed
static double* arena_zeros(physData* d, int n) {
  double* x = phys_stack_alloc(d, (size_t)n + 1);
  memset(x, 0, sizeof(double) * ((size_t)n + 1));
  return x;
}

//---------------------------------------------------------------------------------------------------------
// integration on SO(3): per rotation group Jr(phi), Exp(phi)' with phi = dt (v+ + vpos)

// rot, Jr, Et of cp from vsum
static void tangent_blocks(const physModel* m, contactPoint* cp) {
  double dt = m->opt.timestep;
  int nb = 0;
  for (int k = 0; k < m->nv; k++) cp->rot[k] = -1;
  for (int j = 0; j < m->njnt; j++) {
    int da = m->jnt_dofadr[j], type = m->jnt_type[j];
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    if (type == PHYS_JNT_FREE) da += 3;
    double phi[3] = {dt * cp->vsum[da], dt * cp->vsum[da + 1], dt * cp->vsum[da + 2]};
    phys_so3_jacobians(cp->Jr + 9 * nb, cp->Et + 9 * nb, phi);
    cp->rot[da] = cp->rot[da + 1] = cp->rot[da + 2] = nb++;
  }
}

// y = B x or B' x (transpose) with B the per-group blocks blk (Jr or Et), 1 on scalar dofs; y != x
static void apply_blocks(const physModel* m, const int* rot, const double* blk, const double* x, double* y,
                         int transpose) {
  for (int k = 0; k < m->nv; k++) {
    if (rot[k] < 0) {
      y[k] = x[k];
      continue;
    }
    const double* B = blk + 9 * rot[k];
    int g = phys_dof_group(m, k), r = k - g;
    y[k] = 0;
    for (int c = 0; c < 3; c++) y[k] += (transpose ? B[3 * c + r] : B[3 * r + c]) * x[g + c];
  }
}

//---------------------------------------------------------------------------------------------------------
// the linearization point

// save the contact lists and counts phys_step_stage changes (arena memory of the caller's mark)
static void save_lists(physData* d, contactPoint* cp) {
  cp->ncon = d->ncon;
  cp->ncon_prev = d->ncon_prev;
  cp->ncon_dropped = d->ncon_dropped;
  cp->nlimit = d->nlimit;
  size_t c1 = sizeof(physContact) * (size_t)d->ncon, c2 = sizeof(physContact) * (size_t)d->ncon_prev;
  cp->con = (physContact*)phys_stack_alloc(d, c1 / sizeof(double) + 1);
  cp->conprev = (physContact*)phys_stack_alloc(d, c2 / sizeof(double) + 1);
  memcpy(cp->con, d->contact, c1);
  memcpy(cp->conprev, d->contact_prev, c2);
}

// restore them: the caller's next phys_step is unchanged
static void restore_lists(physData* d, const contactPoint* cp) {
  d->ncon = cp->ncon;
  d->ncon_prev = cp->ncon_prev;
  d->ncon_dropped = cp->ncon_dropped;
  d->nlimit = cp->nlimit;
  memcpy(d->contact, cp->con, sizeof(physContact) * (size_t)cp->ncon);
  memcpy(d->contact_prev, cp->conprev, sizeof(physContact) * (size_t)cp->ncon_prev);
}

// the stage's lists into d (the derivatives read the detected contacts there), the caller's as the previous
static void install_lists(physData* d, const contactPoint* cp) {
  d->ncon = cp->ncon_det;
  d->nlimit = cp->nlimit_det;
  d->ncon_dropped = cp->ndropped_det;
  d->ncon_prev = cp->ncon;
  memcpy(d->contact, cp->det, sizeof(physContact) * (size_t)cp->ncon_det);
  memcpy(d->contact_prev, cp->con, sizeof(physContact) * (size_t)cp->ncon);
}

// keep the stage's lists (arena memory of the caller's mark)
static void keep_stage_lists(physData* d, contactPoint* cp) {
  cp->ncon_det = d->ncon;
  cp->nlimit_det = d->nlimit;
  cp->ndropped_det = d->ncon_dropped;
  size_t c = sizeof(physContact) * (size_t)d->ncon;
  cp->det = (physContact*)phys_stack_alloc(d, c / sizeof(double) + 1);
  memcpy(cp->det, d->contact, c);
}


// half-width (m) of the position correction's kink for the derivatives (kink_position_problem)
#define PHYS_KINK_BAND 1e-9

// distance of row r of p (a contact normal or a joint limit; not a tangent) at d's state: a contact's dist;
// a limit row is +-e_dof (assemble.c): q - lo for +, hi - q for -
static double row_dist(const physModel* m, const physData* d, const physConstraintProblem* p, int r) {
  if (r < 3 * p->nc) return d->contact[r / 3].dist;
  const double* Jr = p->J + (size_t)r * p->nv;
  int k = 0;
  while (k < p->nv - 1 && Jr[k] == 0) k++;
  int j = m->dof_jntid[k];
  double q = d->qpos[m->jnt_qposadr[j]];
  return Jr[k] > 0 ? q - m->jnt_range[2 * j] : m->jnt_range[2 * j + 1] - q;
}

// The kink convention of the position correction (README, Derivatives): gpos = beta min(dist + slop, 0)/dt
// has a kink at dist = -slop, and contacts at rest sit on it: a correction stops within PHYS_CONTACT_SLOP_TOL
// deeper than the slop (assemble.c), and a contact that settles lightly stays about there within the slop,
// so a perturbation of any practical size corrects such a row when it deepens and not when it rises. The
// derivatives take the correcting side for every normal or limit row with dist + slop < PHYS_KINK_BAND (the
// step corrects those below -PHYS_CONTACT_SLOP_TOL; the ones it skipped get gpos = beta (dist + slop -
// PHYS_KINK_BAND)/dt < 0), and the position problem is solved again with that gpos so that its structure is
// the correcting branch's (lambda_p moves by at most beta (PHYS_KINK_BAND + PHYS_CONTACT_SLOP_TOL)/dt a row).
// So a resting body's Jacobian equals the one-sided difference in a direction that pushes every such row
// deeper (its root height lowered, say); along a direction that lifts some and presses others neither
// one-sided difference is a derivative of one branch. Rows higher in the slop are not corrected. The step's
// own v+ and vpos are unchanged; cp->st.p.gpos, npos, pp and sol_pos become the derivatives' (arena memory of
// the caller's mark). Returns the number of rows the step skipped and the derivatives correct (on the kink).
static int kink_position_problem(const physModel* m, physData* d, contactPoint* cp) {
  physConstraintProblem* p = &cp->st.p;
  int n = p->n, nc = p->nc, added = 0;
  double beta = m->opt.baumgarte, dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* gpos = phys_stack_alloc(d, (size_t)n + 1);
  int* warm = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  memcpy(gpos, p->gpos, sizeof(double) * (size_t)n);
  for (int r = 0; r < n; r++) {
    if ((r >= 3 * nc || r % 3 == 0) && !(gpos[r] < 0)) {
      double x = row_dist(m, d, p, r) + PHYS_CONTACT_SLOP;
      if (x < PHYS_KINK_BAND) gpos[r] = beta * (x - PHYS_KINK_BAND) / dt, added++;   // < 0: the row clamps
    }
    warm[r] = gpos[r] < 0 ? PHYS_ROW_CLAMPING : PHYS_ROW_SEPARATING;
  }
  if (added == 0) {
    phys_stack_free(d, mark);
    return 0;
  }
  p->gpos = cp->st.pp.gpos = cp->st.pp.g = gpos;
  p->npos = cp->st.pp.npos = p->npos + added;
  cp->st.pp.warm = warm;
  physConstraintSolution* sol = &cp->st.sol_pos;
  memset(sol->lambda, 0, sizeof(double) * (size_t)n);
  memset(sol->state, 0, sizeof(int) * (size_t)n);
  phys_solve_lcp(m, d, &cp->st.pp, sol);
  return added;
}

// run the step's stage at d's state (lists saved first: restore_lists undoes it) and the quantities the
// derivatives share. PHYS_ERR_ARG without constraints or with penalty, PHYS_ERR_NUMERIC if M~ failed.
static physStatus point_build(const physModel* m, physData* d, contactPoint* cp, int* none) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  *none = 0;
  if (!phys_grad_balls_last(m)) return PHYS_ERR_MODEL;
  if (m->opt.contact == PHYS_CONTACT_PENALTY) return PHYS_ERR_ARG;
  save_lists(d, cp);
  int ok = phys_step_stage(m, d, NULL, &cp->st);
  if (ok <= 0) {
    restore_lists(d, cp);
    *none = ok == 0;
    return ok == 0 ? PHYS_OK : PHYS_ERR_NUMERIC;
  }
  cp->acc = phys_stack_alloc(d, (size_t)nv);
  memcpy(cp->acc, d->qacc, sizeof(double) * (size_t)nv);
  const physConstraintProblem* p = &cp->st.p;
  int n = cp->n = p->n, nc = cp->nc = p->nc;
  cp->nv = nv;
  cp->Y = phys_stack_alloc(d, (size_t)n * nv + 1);
  for (int c = 0; c < n; c++) phys_solve_m(m, d->qLD, cp->Y + (size_t)c * nv, p->J + (size_t)c * nv);
  cp->vsum = phys_stack_alloc(d, (size_t)nv);
  for (int i = 0; i < nv; i++) cp->vsum[i] = cp->st.vnew[i] + cp->st.vpos[i];
  cp->vn = arena_zeros(d, nc);
  cp->bias = arena_ints(d, nc);
  for (int i = 0; i < nc; i++) {
    const double* Jn = p->J + (size_t)(3 * i) * nv;
    cp->vn[i] = dotn(Jn, d->qvel, nv);
    phys_normal_bias(d->contact + i, cp->vn[i], dotn(Jn, cp->st.vf, nv), dt, cp->bias + i);   // (its branch)
  }
  cp->Jr = phys_stack_alloc(d, 9 * (size_t)nv);
  cp->Et = phys_stack_alloc(d, 9 * (size_t)nv);
  cp->rot = arena_ints(d, nv);
  tangent_blocks(m, cp);
  cp->nkink = kink_position_problem(m, d, cp);
  cp->geom = NULL;                // built by the Jacobians, which take many directions
  cp->lcp = cp->lcp_pos = NULL;
  cp->prod = 0;
  cp->zv = cp->uv = cp->zp = cp->up = NULL;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// the solver's derivatives by contact model

// dlambda = solver_jvp(dg, dG, dmu) of the model's solver at sol
static physStatus solver_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                             const physConstraintSolution* sol, const double* dg, const double* dG,
                             const double* dmu, double* dl) {
  switch (m->opt.contact) {
    case PHYS_CONTACT_CONE: return phys_solve_cone_jvp(m, d, p, sol, dg, dG, dmu, dl);
    case PHYS_CONTACT_CCP: return phys_solve_ccp_jvp(m, d, p, sol, dg, dG, dmu, dl);
    default: return phys_solve_lcp_jvp(m, d, p, sol, dg, dG, dmu, dl);
  }
}

// g_bar, G_bar (n x n), mu_bar of the model's solver at sol from lambda_bar
static physStatus solver_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                             const physConstraintSolution* sol, const double* lb, double* gb, double* Gb,
                             double* mub) {
  switch (m->opt.contact) {
    case PHYS_CONTACT_CONE: return phys_solve_cone_vjp(m, d, p, sol, lb, gb, Gb, mub);
    case PHYS_CONTACT_CCP: return phys_solve_ccp_vjp(m, d, p, sol, lb, gb, Gb, mub);
    default: return phys_solve_lcp_vjp(m, d, p, sol, lb, gb, Gb, mub);
  }
}

//---------------------------------------------------------------------------------------------------------
// forward mode

// the solvers' derivatives as tables from 2n reverse passes: row r is the gradient of lambda_r (lambda_p_r);
// for many directions a few dot products each instead of a solver JVP (lcp's repeats its SVD per call)
typedef struct solverTable_ {
  double* gv;                // n x n: dlambda_r/dg
  double* Gv;                // n x n x n: dlambda_r/dG (entrywise)
  double* mv;                // n x nc: dlambda_r/dmu
  double* gp;                // n x n: dlambda_p_r/dgpos (position problem; NULL without correction)
  double* Gp;                // n x n x n: dlambda_p_r/dG
} solverTable;

// one input direction: every field may be NULL (zero)
typedef struct contactDir_ {
  const double* dq;          // nv: configuration tangent
  const double* dv;          // nv: velocity
  const double* r;           // nv: smooth force change dtau - dRNEA|a+ (or -R(a+) dtheta)
  const double* ydmy;        // n x n: Y_r' dM~ Y_c
  const double* dmvpos;      // nv: dM~ vpos
  const double* dmu;         // nc
  const double* deps;        // nc: restitution
  // the geometry along dq when precomputed (all five, or NULL: phys_constraint_jvp here)
  const double *dJvp, *dJtl, *ddist;   // dJ v+ (n), dJ' lambda (nv), ddist (n)
  const double *dJv, *dJtlp;           // dJ v (n), dJ' lambda_p (nv)
  const double* dJmat;       // n x nv: dJ along a parameter direction (pos:BODY; with the five above)
  const solverTable* tab;    // the solvers' tables (NULL: their JVPs)
  // products mode (cp->prod): dG z_k of both problems (3 x n each) and dG's diagonal (n); NULL: dG = 0
  const double *dGz, *dGzp, *dGd;
} contactDir;

// dG = dJ Y' + Y dJ' - Y dM~ Y' along x (n x n)
static physStatus delassus_jvp(const physModel* m, physData* d, const contactPoint* cp, const contactDir* x,
                               double* dG) {
  int n = cp->n, nv = cp->nv;
  memset(dG, 0, sizeof(double) * (size_t)n * n);
  if (x->dq || x->dJmat) {
    // the matrix dJ along dq (geometry once) or given, then (dJ Y')_rc = dJ_r . Y_c added at (r, c) and (c, r)
    size_t mark = phys_stack_mark(d);
    double* dJ = phys_stack_alloc(d, (size_t)n * nv + 1);
    physStatus st = PHYS_OK;
    if (x->dJmat) memcpy(dJ, x->dJmat, sizeof(double) * (size_t)n * nv);
    else st = cp->geom ? phys_constraint_dJ_geom(m, d, &cp->st.p, cp->geom, x->dq, dJ)
                       : phys_constraint_dJ(m, d, &cp->st.p, x->dq, dJ);
    if (st != PHYS_OK) {
      phys_stack_free(d, mark);
      return st;
    }
    for (int r = 0; r < n; r++)
      for (int c = 0; c < n; c++) {
        double t = dotn(dJ + (size_t)r * nv, cp->Y + (size_t)c * nv, nv);
        dG[(size_t)r * n + c] += t;
        dG[(size_t)c * n + r] += t;
      }
    phys_stack_free(d, mark);
  }
  if (x->ydmy)
    for (size_t i = 0; i < (size_t)n * n; i++) dG[i] -= x->ydmy[i];
  return PHYS_OK;
}

// (dq+, dv+) of the step along x (nv each)
static physStatus contact_jvp(const physModel* m, physData* d, const contactPoint* cp, const contactDir* x,
                              double* dqn, double* dvn) {
  int n = cp->n, nv = cp->nv, nc = cp->nc;
  double dt = m->opt.timestep, beta = m->opt.baumgarte;
  const physConstraintProblem* p = &cp->st.p;
  const double *lam = cp->st.sol.lambda, *lamp = cp->st.sol_pos.lambda;
  size_t mark = phys_stack_mark(d);
  double* dG = cp->prod ? NULL : phys_stack_alloc(d, (size_t)n * n + 1);   // (products mode: never formed)
  double* dJvp = arena_zeros(d, n);     // dJ v+
  double* dJv = arena_zeros(d, n);      // dJ v
  double* ddist = arena_zeros(d, n);
  double* dJtl = arena_zeros(d, nv);    // dJ' lambda
  double* dJtlp = arena_zeros(d, nv);   // dJ' lambda_p
  double* dy = arena_zeros(d, nv);
  double* w = arena_zeros(d, nv);
  double* dg = arena_zeros(d, n);
  double* dl = arena_zeros(d, n);
  double* dvpos = arena_zeros(d, nv);
  physStatus st = cp->prod ? PHYS_OK : delassus_jvp(m, d, cp, x, dG);
  if (x->dJvp) {
    memcpy(dJvp, x->dJvp, sizeof(double) * (size_t)n);
    memcpy(ddist, x->ddist, sizeof(double) * (size_t)n);
    memcpy(dJv, x->dJv, sizeof(double) * (size_t)n);
    memcpy(dJtl, x->dJtl, sizeof(double) * (size_t)nv);
    memcpy(dJtlp, x->dJtlp, sizeof(double) * (size_t)nv);
  } else if (x->dq) {
    if (st == PHYS_OK) st = phys_constraint_jvp(m, d, p, x->dq, lam, cp->st.vnew, dJvp, dJtl, ddist);
    if (st == PHYS_OK) st = phys_constraint_jvp(m, d, p, x->dq, lamp, d->qvel, dJv, dJtlp, NULL);
  }
  if (st != PHYS_OK) {
    phys_stack_free(d, mark);
    return st;
  }

  // dy0 = W (dt r + dJ' lambda);  w = dv + dy0
  for (int i = 0; i < nv; i++) dy[i] = (x->r ? dt * x->r[i] : 0) + dJtl[i];
  phys_solve_m(m, d->qLD, dy, dy);
  for (int i = 0; i < nv; i++) w[i] = (x->dv ? x->dv[i] : 0) + dy[i];

  // dg = dJ v+ + J w + db - dG lambda
  mul_j(dg, p->J, w, n, nv);
  for (int r = 0; r < n; r++)
    dg[r] += dJvp[r] - (cp->prod ? (x->dGz ? x->dGz[r] : 0) : dotn(dG + (size_t)r * n, lam, n));   // dG z_0 = dG lambda
  for (int i = 0; i < nc; i++) {
    const physContact* c = d->contact + i;
    if (cp->bias[i] == PHYS_BIAS_REST) {
      double dvn0 = dJv[3 * i] + (x->dv ? dotn(p->J + (size_t)(3 * i) * nv, x->dv, nv) : 0), dphi;
      double phi = phys_restitution_phi(cp->vn[i], &dphi);
      dg[3 * i] += c->restitution * dphi * dvn0 + (x->deps ? x->deps[i] * phi : 0);
    } else if (cp->bias[i] == PHYS_BIAS_GAP) {
      dg[3 * i] += ddist[3 * i] / dt;
    }
  }
  int rigid = cp->prod ? !x->dGz : !x->dq && !x->ydmy && !x->dJmat;   // dG = 0, and the position problem's
                                                                        // data do not move
  const solverTable* tb = x->tab;
  if (cp->prod) {
    phys_solve_lcp_jvp_prod(cp->lcp, d, p, &cp->st.sol, dg, x->dGz, x->dGd, x->dmu, dl);
  } else if (tb) {
    size_t nn = (size_t)n * n;
    for (int r = 0; r < n; r++)
      dl[r] = dotn(tb->gv + (size_t)r * n, dg, n) + (rigid ? 0 : dotn(tb->Gv + r * nn, dG, (int)nn)) +
              (x->dmu ? dotn(tb->mv + (size_t)r * nc, x->dmu, nc) : 0);
  } else if (cp->lcp) {
    phys_solve_lcp_jvp_local(cp->lcp, d, p, &cp->st.sol, dg, rigid ? NULL : dG, x->dmu, dl);
  } else {
    st = solver_jvp(m, d, p, &cp->st.sol, dg, dG, x->dmu, dl);
  }

  // dv+ = w + W J' dlambda
  if (st == PHYS_OK) {
    mul_jt(dvn, p->J, dl, n, nv, 0);
    phys_solve_m(m, d->qLD, dvn, dvn);
    for (int i = 0; i < nv; i++) dvn[i] += w[i];
  }

  // dvpos = W (dJ' lambda_p + J' dlambda_p - dM~ vpos), dlambda_p = lcp_jvp(beta ddist/dt, dG)
  if (st == PHYS_OK && p->npos > 0 && !rigid) {
    for (int r = 0; r < n; r++) dg[r] = p->gpos[r] < 0 ? beta * ddist[r] / dt : 0;
    if (cp->prod) {
      phys_solve_lcp_jvp_prod(cp->lcp_pos, d, &cp->st.pp, &cp->st.sol_pos, dg, x->dGzp, x->dGd, NULL, dl);
    } else if (tb) {
      size_t nn = (size_t)n * n;
      for (int r = 0; r < n; r++) dl[r] = dotn(tb->gp + (size_t)r * n, dg, n) + dotn(tb->Gp + r * nn, dG, (int)nn);
    } else if (cp->lcp_pos) {
      phys_solve_lcp_jvp_local(cp->lcp_pos, d, &cp->st.pp, &cp->st.sol_pos, dg, dG, NULL, dl);
    } else {
      st = phys_solve_lcp_jvp(m, d, &cp->st.pp, &cp->st.sol_pos, dg, dG, NULL, dl);
    }
    mul_jt(dvpos, p->J, dl, n, nv, 0);
    for (int i = 0; i < nv; i++) dvpos[i] += dJtlp[i] - (x->dmvpos ? x->dmvpos[i] : 0);
    phys_solve_m(m, d->qLD, dvpos, dvpos);
  }

  // dq+ = E dq + dt D (dv+ + dvpos)
  if (st == PHYS_OK) {
    for (int i = 0; i < nv; i++) w[i] = dvn[i] + dvpos[i];
    apply_blocks(m, cp->rot, cp->Jr, w, dqn, 0);
    for (int i = 0; i < nv; i++) dqn[i] *= dt;
    if (x->dq) {
      apply_blocks(m, cp->rot, cp->Et, x->dq, w, 0);
      for (int i = 0; i < nv; i++) dqn[i] += w[i];
    }
  }
  phys_stack_free(d, mark);
  return st;
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
// the forward-mode Jacobians are unchanged. gb, Gt, mub updated in place.
// (F non-NULL: G_bar factored as phys_solve_lcp_vjp_factored's Ga, Gb, Gd at F, F + 3n, F + 6n; Gt unused)
static physStatus aware_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                            const physConstraintSolution* sol, const double* vnb, const double* lb, double* gb,
                            double* Gt, double* F, double* mub) {
  int n = p->n, nv = p->nv, nc = p->nc;
  size_t mark = phys_stack_mark(d);
  physConstraintSolution alt = *sol;
  alt.state = arena_ints(d, n);
  if (phys_lcp_aware_states(p, sol, lb, alt.state) == 0) {
    phys_stack_free(d, mark);
    return PHYS_OK;
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
  }
  phys_stack_free(d, mark);
  return st;
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
static physStatus contact_vjp(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                              const double* xbar_next, contactAdj* a, double* theta_bar) {
  int n = cp->n, nv = cp->nv, nc = cp->nc;
  double dt = m->opt.timestep, beta = m->opt.baumgarte;
  const physConstraintProblem* p = &cp->st.p;
  const double *lam = cp->st.sol.lambda, *lamp = cp->st.sol_pos.lambda;
  size_t mark = phys_stack_mark(d);
  double* Gb = a->fac ? NULL : arena_zeros(d, n * n);   // (factored: G_bar is never formed)
  double* Gt = a->fac ? NULL : arena_zeros(d, n * n);
  double* vsb = arena_zeros(d, nv);    // adjoint of v+ + vpos
  double* vnb = arena_zeros(d, nv);    // adjoint of v+
  double* z = arena_zeros(d, nv);
  double* lb = arena_zeros(d, n);
  double* gb = arena_zeros(d, n);
  double* gamma = arena_zeros(d, n);   // adjoint of dist
  double* alv = arena_zeros(d, n);     // alpha of dJ v
  double* W = arena_zeros(d, n * nv);  // the weights of <W, dJ> of every geometric term
  double* F = a->fac ? arena_zeros(d, 7 * n) : NULL;   // one problem's factored G_bar
  physStatus st = PHYS_OK;
  a->nf = 0;
  if (a->fac) memset(a->gd, 0, sizeof(double) * ((size_t)n + 1));
  memset(a->qbar, 0, sizeof(double) * (size_t)nv);
  memset(a->vbar, 0, sizeof(double) * (size_t)nv);
  memset(a->zpos, 0, sizeof(double) * (size_t)nv);
  memset(a->mubar, 0, sizeof(double) * ((size_t)nc + 1));
  memset(a->epsbar, 0, sizeof(double) * ((size_t)nc + 1));

  // dq+ = E dq + dt D (dv+ + dvpos):  qbar = E' qbar+,  vsum_bar = dt D' qbar+
  apply_blocks(m, cp->rot, cp->Et, xbar_next, a->qbar, 1);
  apply_blocks(m, cp->rot, cp->Jr, xbar_next, vsb, 1);
  for (int i = 0; i < nv; i++) {
    vsb[i] *= dt;
    vnb[i] = xbar_next[nv + i] + vsb[i];
  }

  // position: dvpos = W (dJ' lambda_p + J' dlambda_p - dM~ vpos), zpos = W vsum_bar
  if (p->npos > 0) {
    phys_solve_m(m, d->qLD, a->zpos, vsb);
    mul_j(lb, p->J, a->zpos, n, nv);
    if (a->fac) {
      st = phys_solve_lcp_vjp_factored(m, d, &cp->st.pp, &cp->st.sol_pos, lb, gb, F, F + 3 * n, F + 6 * n, NULL);
      add_factors(a, cp, F, 0, W);
    } else {
      st = phys_solve_lcp_vjp(m, d, &cp->st.pp, &cp->st.sol_pos, lb, gb, Gt, NULL);
      for (size_t i = 0; st == PHYS_OK && i < (size_t)n * n; i++) Gb[i] += Gt[i];
    }
    for (int r = 0; r < n; r++) gamma[r] += p->gpos[r] < 0 ? beta * gb[r] / dt : 0;
    add_outer(W, lamp, a->zpos, n, nv);
  }

  // dv+ = dv + dy0 + W J' dlambda:  vbar = vbar+',  z = W vbar+',  lambda_bar = J z
  memcpy(a->vbar, vnb, sizeof(double) * (size_t)nv);
  phys_solve_m(m, d->qLD, z, vnb);
  mul_j(lb, p->J, z, n, nv);
  if (st == PHYS_OK)
    st = a->fac ? phys_solve_lcp_vjp_factored(m, d, p, &cp->st.sol, lb, gb, F, F + 3 * n, F + 6 * n, a->mubar)
                : solver_vjp(m, d, p, &cp->st.sol, lb, gb, Gt, a->mubar);
  if (st == PHYS_OK && m->opt.contact == PHYS_CONTACT_LCP && (m->opt.gradflags & PHYS_GRAD_COMPLEMENTARITY))
    st = aware_vjp(m, d, p, &cp->st.sol, vnb, lb, gb, Gt, F, a->mubar);
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
  for (int i = 0; i < nc; i++) {
    const physContact* c = d->contact + i;
    if (cp->bias[i] == PHYS_BIAS_REST) {
      double dphi, phi = phys_restitution_phi(cp->vn[i], &dphi);
      alv[3 * i] = c->restitution * dphi * gb[3 * i];
      a->epsbar[i] = gb[3 * i] * phi;
    } else if (cp->bias[i] == PHYS_BIAS_GAP) {
      gamma[3 * i] += gb[3 * i] / dt;
    }
  }
  mul_jt(a->vbar, p->J, alv, n, nv, 1);
  add_outer(W, alv, d->qvel, n, nv);
  add_outer(W, gb, cp->st.vnew, n, nv);

  // w = dv + dy0 with w_bar = z' + J' g_bar (z' = vbar+' for dy0):  vbar += J' g_bar;
  // dy0 = W (dt r + dJ' lambda):  y0 = W (vbar+' + J' g_bar),  r_bar = dt y0
  mul_jt(a->vbar, p->J, gb, n, nv, 1);
  mul_jt(z, p->J, gb, n, nv, 0);
  for (int i = 0; i < nv; i++) z[i] += vnb[i];
  phys_solve_m(m, d->qLD, z, z);
  for (int i = 0; i < nv; i++) a->rbar[i] = dt * z[i];
  add_outer(W, lam, z, n, nv);

  // dG = dJ Y' + Y dJ' - Y dM~ Y':  <G_bar, dJ Y' + Y dJ'> = <(G_bar + G_bar') Y, dJ> (one matrix call);
  // Z_c = sum_r G_bar[r][c] Y_r. Factored: the outer products' weights are in W already, the diagonal's
  // are 2 gd_r Y_r
  if (a->fac) {
    for (int r = 0; r < n; r++)
      if (a->gd[r] != 0)
        for (int i = 0; i < nv; i++) W[(size_t)r * nv + i] += 2 * a->gd[r] * cp->Y[(size_t)r * nv + i];
    st = geom_vjp_matrix(m, d, p, t, W, gamma, a->qbar, theta_bar);
    phys_stack_free(d, mark);
    return st;
  }
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      double g = Gb[(size_t)r * n + c] + Gb[(size_t)c * n + r];
      if (g != 0)
        for (int i = 0; i < nv; i++) W[(size_t)r * nv + i] += g * cp->Y[(size_t)c * nv + i];
    }
  st = geom_vjp_matrix(m, d, p, t, W, gamma, a->qbar, theta_bar);
  for (int c = 0; c < n; c++) {
    double* Zc = a->Z + (size_t)c * nv;
    memset(Zc, 0, sizeof(double) * (size_t)nv);
    for (int r = 0; r < n; r++) {
      double g = Gb[(size_t)r * n + c];
      if (g != 0)
        for (int i = 0; i < nv; i++) Zc[i] += g * cp->Y[(size_t)r * nv + i];
    }
  }
  phys_stack_free(d, mark);
  return st;
}

// one term c (a b' + b a') / 2 of a low-rank K appended to A, B, c (*nr of them so far)
static void lr_term(double* A, double* B, double* c, int* nr, const double* a, const double* b, double w, int nv) {
  memcpy(A + (size_t)*nr * nv, a, sizeof(double) * (size_t)nv);
  memcpy(B + (size_t)*nr * nv, b, sizeof(double) * (size_t)nv);
  c[(*nr)++] = w;
}

// the smooth terms of a reverse pass in q, v, u: r = (df/dq - dtau/dq|a+) dq + (df/dv - dtau/dv|a+) dv
// + df/du du;  dM~ vpos and dM~ Y_c through RNEA's dtau/dq(qacc) - dtau/dq(0)
static void smooth_vjp(const physModel* m, physData* d, const contactPoint* cp, contactAdj* a, double* ubar) {
  int nv = m->nv, n = cp->n;
  size_t mark = phys_stack_mark(d);
  double* qb = phys_stack_alloc(d, (size_t)nv);
  double* vb = phys_stack_alloc(d, (size_t)nv);
  double* zs = arena_zeros(d, nv);
  double* zero = arena_zeros(d, nv);
  // r: -dRNEA|a+' rbar, then the forces' own transposes
  phys_rnea_vjp(m, d, cp->acc, a->rbar, qb, vb, NULL);
  for (int i = 0; i < nv; i++) a->qbar[i] -= qb[i], a->vbar[i] -= vb[i];
  phys_passive_vjp(m, d, a->rbar, a->qbar, a->vbar, ubar);
  phys_actuation_vjp(m, d, a->rbar, a->qbar, ubar);
  phys_xfrc_vjp(m, d, a->rbar, a->qbar);
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
    if (cp->st.p.npos > 0) lr_term(A, B, c, &nr, a->zpos, cp->st.vpos, 1, nv);
    for (int f = 0; f < a->nf; f++) lr_term(A, B, c, &nr, a->fa + (size_t)f * nv, a->fb + (size_t)f * nv, 1, nv);
    memset(qb, 0, sizeof(double) * (size_t)nv);
    phys_rnea_mass_trace_grad(m, d, nq, nr, A, B, c, qb);
    for (int i = 0; i < nv; i++) a->qbar[i] -= qb[i];
    phys_stack_free(d, mark);
    return;
  }
  // -zpos' dM~ vpos - sum_c Z_c' dM~ Y_c:  -(dtau/dq(x)' z) per term, + dtau/dq(0)' (zpos + sum Z_c)
  if (cp->st.p.npos > 0) {
    phys_rnea_vjp(m, d, cp->st.vpos, a->zpos, qb, NULL, NULL);
    for (int i = 0; i < nv; i++) a->qbar[i] -= qb[i], zs[i] += a->zpos[i];
  }
  for (int c = 0; c < n; c++) {
    const double* Zc = a->Z + (size_t)c * nv;
    if (all_zero(Zc, nv)) continue;   // (ccp, cone: G_bar = g_bar lambda' cancels against -dG lambda)
    phys_rnea_vjp(m, d, cp->Y + (size_t)c * nv, Zc, qb, NULL, NULL);
    for (int i = 0; i < nv; i++) a->qbar[i] -= qb[i], zs[i] += Zc[i];
  }
  phys_rnea_vjp(m, d, zero, zs, qb, NULL, NULL);
  for (int i = 0; i < nv; i++) a->qbar[i] += qb[i];
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// parameters

// theta_bar += mu_bar, eps_bar through the friction and restitution entries of t
static void contact_param_vjp(const physModel* m, const physData* d, const physParamTable* t, const contactAdj* a,
                              double* theta_bar) {
  for (int e = 0; e < t->n; e++) {
    const physParam* pr = t->param + e;
    if (pr->kind != PHYS_PAR_FRICTION && pr->kind != PHYS_PAR_RESTITUTION) continue;
    int rest = pr->kind == PHYS_PAR_RESTITUTION;
    for (int i = 0; i < d->ncon; i++)
      if (phys_contact_material_moves(m, d->contact + i, pr->id, rest)) theta_bar[pr->adr] += rest ? a->epsbar[i] : a->mubar[i];
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
  if (cp->st.p.npos > 0) {
    sub_rt(m, d, t, cp->st.vpos, a->zpos, R, theta_bar);
    for (int i = 0; i < nv; i++) zs[i] -= a->zpos[i];
  }
  for (int c = 0; c < n && !a->fac; c++) {
    const double* Zc = a->Z + (size_t)c * nv;
    if (all_zero(Zc, nv)) continue;
    sub_rt(m, d, t, cp->Y + (size_t)c * nv, Zc, R, theta_bar);
    for (int i = 0; i < nv; i++) zs[i] -= Zc[i];
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

//---------------------------------------------------------------------------------------------------------
// public entry points

physStatus phys_constrained_linearize(const physModel* m, physData* d, physConstrainedPoint** out) {
  *out = NULL;
  contactPoint* cp = (contactPoint*)phys_stack_alloc(d, sizeof(contactPoint) / sizeof(double) + 1);
  int none = 0;
  physStatus st = point_build(m, d, cp, &none);
  if (st != PHYS_OK || none) return st;
  keep_stage_lists(d, cp);
  restore_lists(d, cp);
  *out = cp;
  return PHYS_OK;
}

// the public entry points: linearize, then the derivative at the point (PHYS_ERR_ARG without constraints)
typedef enum { CALL_POINT, CALL_KINKS, CALL_JACOBIAN, CALL_VJP } callKind;
typedef struct constrainedCall_ {
  const physParamTable* t;
  const double* xbar_next;
  double *A, *B, *P, *xbar, *ubar, *theta_bar, *force_bar, *L;
  int nkink;
} constrainedCall;

static physStatus constrained_call(const physModel* m, physData* d, callKind kind, constrainedCall* c) {
  size_t mark = phys_stack_mark(d);
  physConstrainedPoint* cp = NULL;
  physStatus st = phys_constrained_linearize(m, d, &cp);
  if (st == PHYS_OK && !cp) st = PHYS_ERR_ARG;
  if (st == PHYS_OK) {
    switch (kind) {
      case CALL_POINT: memcpy(c->L, d->qLD, sizeof(double) * (size_t)m->nv * m->nv); break;
      case CALL_KINKS: c->nkink = cp->nkink; break;
      case CALL_JACOBIAN: st = phys_constrained_jacobian_at(m, d, cp, c->t, c->A, c->B, c->P); break;
      case CALL_VJP:
        st = phys_constrained_vjp_at(m, d, cp, c->t, c->xbar_next, c->xbar, c->ubar, c->theta_bar, c->force_bar);
        break;
    }
  }
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_constrained_step_point(const physModel* m, physData* d, double* L) {
  constrainedCall c = {.L = L};
  return constrained_call(m, d, CALL_POINT, &c);
}

int phys_constrained_step_kinks(const physModel* m, physData* d) {
  constrainedCall c = {.nkink = 0};
  return constrained_call(m, d, CALL_KINKS, &c) == PHYS_OK ? c.nkink : 0;
}

physStatus phys_constrained_step_vjp(const physModel* m, physData* d, const physParamTable* t,
                                     const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                                     double* force_bar) {
  constrainedCall c = {.t = t, .xbar_next = xbar_next, .xbar = xbar, .ubar = ubar, .theta_bar = theta_bar,
                       .force_bar = force_bar};
  return constrained_call(m, d, CALL_VJP, &c);
}

physStatus phys_constrained_step_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A,
                                          double* B, double* P) {
  constrainedCall c = {.t = t, .A = A, .B = B, .P = P};
  return constrained_call(m, d, CALL_JACOBIAN, &c);
}

physStatus phys_constrained_vjp_at(const physModel* m, physData* d, physConstrainedPoint* cpp,
                                   const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                   double* theta_bar, double* force_bar) {
  int nv = m->nv, nu = m->nu;
  size_t mark = phys_stack_mark(d);
  contactPoint cp = *cpp;
  install_lists(d, &cp);
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
  st = contact_vjp(m, d, &cp, nt > 0 ? t : NULL, xbar_next, &a, tb);
  if (st == PHYS_OK) {
    if (nt > 0) {
      smooth_param_vjp(m, d, &cp, t, &a, tb);
      contact_param_vjp(m, d, t, &a, tb);
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
  restore_lists(d, &cp);
  phys_stack_free(d, mark);
  return st;
}

// products mode: the vectors z_k of both problems and u_k = Y' z_k = sum_c z_k,c Y_c (arena memory of the
// caller's mark)
static void prod_vectors(physData* d, contactPoint* cp) {
  int n = cp->n, nv = cp->nv;
  cp->zv = phys_stack_alloc(d, 3 * (size_t)n + 1);
  cp->uv = phys_stack_alloc(d, 3 * (size_t)nv);
  phys_solve_lcp_jvp_vectors(cp->lcp, &cp->st.p, cp->zv);
  for (int k = 0; k < 3; k++) mul_jt(cp->uv + (size_t)k * nv, cp->Y, cp->zv + (size_t)k * n, n, nv, 0);
  cp->zp = cp->up = NULL;
  if (!cp->lcp_pos) return;
  cp->zp = phys_stack_alloc(d, 3 * (size_t)n + 1);
  cp->up = phys_stack_alloc(d, 3 * (size_t)nv);
  phys_solve_lcp_jvp_vectors(cp->lcp_pos, &cp->st.pp, cp->zp);
  for (int k = 0; k < 3; k++) mul_jt(cp->up + (size_t)k * nv, cp->Y, cp->zp + (size_t)k * n, n, nv, 0);
}

// dG z_k = dJ u_k + Y (dJ' z_k - dmu_k) for the three vectors z (3 x n), u = Y' z (3 x nv) of one problem, with
// dG = dJ Y' + Y dJ' - Y dM~ Y': dJ (n x nv, NULL: 0) and dmu (3 x nv: dM~ u_k, NULL: 0) along one direction;
// tmp nv scratch
static void dG_products(const contactPoint* cp, const double* dJ, const double* z, const double* u,
                        const double* dmu, double* dGz, double* tmp) {
  int n = cp->n, nv = cp->nv;
  for (int k = 0; k < 3; k++) {
    const double *zk = z + (size_t)k * n, *uk = u + (size_t)k * nv;
    if (dJ) mul_jt(tmp, dJ, zk, n, nv, 0);
    else memset(tmp, 0, sizeof(double) * (size_t)nv);
    if (dmu)
      for (int i = 0; i < nv; i++) tmp[i] -= dmu[(size_t)k * nv + i];
    for (int r = 0; r < n; r++)
      dGz[(size_t)k * n + r] = dotn(cp->Y + (size_t)r * nv, tmp, nv) + (dJ ? dotn(dJ + (size_t)r * nv, uk, nv) : 0);
  }
}

// every q direction's dG z at once (n x nv, column j along e_j): d(J u)/dq + Y (d(J' z)/dq - d(M u)/dq) with
// u = Y' z (phys_constraint_jacobian_geom and phys_rnea_mass_deriv: one call each for all directions)
static physStatus prod_matrix(const physModel* m, physData* d, const contactPoint* cp, const double* z,
                              const double* u, double* out) {
  int n = cp->n, nv = cp->nv;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* T = phys_stack_alloc(d, nn);
  double* D = phys_stack_alloc(d, nn);
  physStatus st = phys_constraint_jacobian_geom(m, d, &cp->st.p, cp->geom, z, u, out, T, NULL);
  if (st == PHYS_OK) {
    phys_rnea_mass_deriv(m, d, u, D);
    for (size_t i = 0; i < nn; i++) T[i] -= D[i];
    for (int r = 0; r < n; r++) {   // out_r += sum_i Y_ri T_i, four rows of T per pass over out_r
      double* o = out + (size_t)r * nv;
      const double* Yr = cp->Y + (size_t)r * nv;
      int i = 0;
      for (; i + 4 <= nv; i += 4) {
        const double *T0 = T + (size_t)i * nv, *T1 = T0 + nv, *T2 = T1 + nv, *T3 = T2 + nv;
        double y0 = Yr[i], y1 = Yr[i + 1], y2 = Yr[i + 2], y3 = Yr[i + 3];
        for (int j = 0; j < nv; j++) o[j] += y0 * T0[j] + y1 * T1[j] + y2 * T2[j] + y3 * T3[j];
      }
      for (; i < nv; i++)
        for (int j = 0; j < nv; j++) o[j] += Yr[i] * T[(size_t)i * nv + j];
    }
  }
  phys_stack_free(d, mark);
  return st;
}

// dG's diagonal along one direction: dG_rr = 2 dJ_r . Y_r - Y_r' dM~ Y_r (dJ, qd (n: Y_r' dM~ Y_r) NULL: 0)
static void dG_diagonal(const contactPoint* cp, const double* dJ, const double* qd, double* dGd) {
  int n = cp->n, nv = cp->nv;
  for (int r = 0; r < n; r++)
    dGd[r] = (dJ ? 2 * dotn(dJ + (size_t)r * nv, cp->Y + (size_t)r * nv, nv) : 0) - (qd ? qd[r] : 0);
}

// Jacobian columns of the q and v directions: F_q = df/dq - dtau/dq|a+, F_v likewise, D0 = dtau/dq(0) and
// kpos (nv x nv) = dtau/dq(vpos) - D0
// (products mode: kpos = d(M vpos)/dq directly, D0 not needed)
static void state_terms(const physModel* m, physData* d, const contactPoint* cp, double* Fq, double* Fv, double* D0,
                        double* kpos) {
  size_t nn = (size_t)m->nv * m->nv;
  phys_rnea_deriv(m, d, cp->acc, Fq, Fv, NULL);
  for (size_t i = 0; i < nn; i++) Fq[i] = -Fq[i], Fv[i] = -Fv[i];
  phys_passive_deriv(m, d, Fq, Fv, NULL);
  phys_actuation_deriv(m, d, Fq, NULL);
  phys_xfrc_deriv(m, d, Fq);
  if (cp->prod) {
    phys_rnea_mass_deriv(m, d, cp->st.vpos, kpos);
    return;
  }
  phys_rnea_deriv(m, d, NULL, D0, NULL, NULL);
  phys_rnea_deriv(m, d, cp->st.vpos, kpos, NULL, NULL);
  for (size_t i = 0; i < nn; i++) kpos[i] -= D0[i];
}

// columns per block of an n x n x B tensor of Delassus mass terms: all ncol if they fit in an eighth of the
// arena's capacity, else as many as do (at least 1); a block's columns are computed as one column would be,
// so the blocking changes the memory, not the arithmetic, and it does not depend on the caller's free space
static int block_cols(const physData* d, int n, int ncol) {
  size_t avail = d->nstack / 8, b = avail / ((size_t)n * n + 1);
  return b < 1 ? 1 : (b > (size_t)ncol ? ncol : (int)b);
}

// K (n x n x B) += Y_r' X[:, j0 + jj] at [(r n + c) B + jj] for one c, X nv x ld row-major
static void add_mass_block(double* K, const contactPoint* cp, int c, const double* X, int ld, int j0, int B) {
  int n = cp->n, nv = cp->nv;
  for (int r = 0; r < n; r++) {
    double* Krc = K + ((size_t)r * n + c) * B;
    const double* Yr = cp->Y + (size_t)r * nv;
    for (int i = 0; i < nv; i++)
      if (Yr[i] != 0)
        for (int jj = 0; jj < B; jj++) Krc[jj] += Yr[i] * X[(size_t)i * ld + j0 + jj];
  }
}

// the q columns [j0, j0 + B) of the mass terms: K[(r n + c) B + j - j0] = Y_r' (dtau/dq(Y_c) - D0)[:, j]
static void mass_block_q(const physModel* m, physData* d, const contactPoint* cp, const double* D0, int j0, int B,
                         double* K) {
  int nv = m->nv;
  size_t nn = (size_t)nv * nv, mark = phys_stack_mark(d);
  double* Dc = phys_stack_alloc(d, nn);
  memset(K, 0, sizeof(double) * (size_t)cp->n * cp->n * B);
  for (int c = 0; c < cp->n; c++) {
    phys_rnea_deriv(m, d, cp->Y + (size_t)c * nv, Dc, NULL, NULL);
    for (size_t i = 0; i < nn; i++) Dc[i] -= D0[i];
    add_mass_block(K, cp, c, Dc, nv, j0, B);
  }
  phys_stack_free(d, mark);
}

// the theta columns [j0, j0 + B) of the mass terms: K[(r n + c) B + j - j0] = Y_r' (R(Y_c) - R0)[:, j]
static void mass_block_p(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                         const double* R0, int j0, int B, double* K) {
  int nv = m->nv, nt = t->ntheta;
  size_t nr = (size_t)nv * nt, mark = phys_stack_mark(d);
  double* Rc = phys_stack_alloc(d, nr);
  memset(K, 0, sizeof(double) * (size_t)cp->n * cp->n * B);
  for (int c = 0; c < cp->n; c++) {
    phys_param_forces(m, d, t, cp->Y + (size_t)c * nv, Rc);
    for (size_t i = 0; i < nr; i++) Rc[i] -= R0[i];
    add_mass_block(K, cp, c, Rc, nt, j0, B);
  }
  phys_stack_free(d, mark);
}

// column j of K (n x n x ncol) into ydmy (n x n)
static void k_column(const double* K, int n, int ncol, int j, double* ydmy) {
  for (size_t i = 0; i < (size_t)n * n; i++) ydmy[i] = K[i * ncol + j];
}

// write (dq+, dv+) as column j of a (2nv x ld)
static void put_column(double* a, int nv, int ld, int j, const double* dqn, const double* dvn) {
  for (int i = 0; i < nv; i++) {
    a[(size_t)i * ld + j] = dqn[i];
    a[(size_t)(nv + i) * ld + j] = dvn[i];
  }
}

// the tables of tb (arena memory of the caller's mark) by the solvers' VJPs along each e_r
static physStatus solver_tables(const physModel* m, physData* d, const contactPoint* cp, solverTable* tb) {
  int n = cp->n, nc = cp->nc, pos = cp->st.p.npos > 0;
  size_t nn = (size_t)n * n;
  tb->gv = phys_stack_alloc(d, nn + 1);
  tb->Gv = phys_stack_alloc(d, nn * n + 1);
  tb->mv = phys_stack_alloc(d, (size_t)n * nc + 1);
  tb->gp = pos ? phys_stack_alloc(d, nn + 1) : NULL;
  tb->Gp = pos ? phys_stack_alloc(d, nn * n + 1) : NULL;
  size_t mark = phys_stack_mark(d);
  double* E = arena_zeros(d, n * n);   // the identity: row r of each table is the reverse mode of e_r
  for (int r = 0; r < n; r++) E[(size_t)r * n + r] = 1;
  physStatus st = PHYS_OK;
  if (m->opt.contact == PHYS_CONTACT_LCP) {
    // lcp: the clamped system's pseudo-inverse once for all n rows
    st = phys_solve_lcp_vjp_batch(m, d, &cp->st.p, &cp->st.sol, n, E, tb->gv, tb->Gv, tb->mv);
  } else {
    for (int r = 0; r < n && st == PHYS_OK; r++)
      st = solver_vjp(m, d, &cp->st.p, &cp->st.sol, E + (size_t)r * n, tb->gv + (size_t)r * n, tb->Gv + r * nn,
                      tb->mv + (size_t)r * nc);
  }
  if (st == PHYS_OK && pos)
    st = phys_solve_lcp_vjp_batch(m, d, &cp->st.pp, &cp->st.sol_pos, n, E, tb->gp, tb->Gp, NULL);
  phys_stack_free(d, mark);
  return st;
}

// A's 2nv columns (tb may be NULL)
static physStatus jacobian_a(const physModel* m, physData* d, const contactPoint* cp, const solverTable* tb,
                             double* A) {
  int nv = m->nv, n = cp->n, n2 = 2 * nv;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* Fq = phys_stack_alloc(d, nn);
  double* Fv = phys_stack_alloc(d, nn);
  double* D0 = phys_stack_alloc(d, nn);
  double* kpos = phys_stack_alloc(d, nn);
  double* e = phys_stack_alloc(d, (size_t)nv);
  double* r = phys_stack_alloc(d, (size_t)nv);
  double* ydmy = phys_stack_alloc(d, (size_t)n * n + 1);
  double* dmv = phys_stack_alloc(d, (size_t)nv);
  double* dqn = phys_stack_alloc(d, (size_t)nv);
  double* dvn = phys_stack_alloc(d, (size_t)nv);
  state_terms(m, d, cp, Fq, Fv, D0, kpos);
  // the geometry for every q direction at once: d(J v+)/dq, d(J' lambda)/dq, ddist/dq, d(J v)/dq,
  // d(J' lambda_p)/dq, and one direction's columns of them
  double* Jb1 = phys_stack_alloc(d, (size_t)n * nv + 1);
  double* Jt1 = phys_stack_alloc(d, nn);
  double* Dd = phys_stack_alloc(d, (size_t)n * nv + 1);
  double* Jb2 = phys_stack_alloc(d, (size_t)n * nv + 1);
  double* Jt2 = phys_stack_alloc(d, nn);
  double* geo = phys_stack_alloc(d, 3 * (size_t)n + 2 * (size_t)nv + 1);
  const physConstraintProblem* p = &cp->st.p;
  physStatus st = phys_constraint_jacobian_geom(m, d, p, cp->geom, cp->st.sol.lambda, cp->st.vnew, Jb1, Jt1, Dd);
  if (st == PHYS_OK)
    st = phys_constraint_jacobian_geom(m, d, p, cp->geom, cp->st.sol_pos.lambda, d->qvel, Jb2, Jt2, NULL);
  int B = block_cols(d, n, nv), j0 = 0, nb = 0;   // the mass terms of q columns [j0 - nb, j0) in K
  double* K = cp->prod ? NULL : phys_stack_alloc(d, (size_t)n * n * B + 1);
  // products mode: every q direction's dG z_k of both problems' vectors (prod_matrix, 3 n x nv each), Q (n x nv):
  // row r the gradient of Y_r' M Y_r, and one direction's dJ, products and diagonal
  double *Dm = NULL, *Dp = NULL, *Q = NULL, *dJ = NULL, *qd = NULL, *dGz = NULL, *dGzp = NULL, *dGd = NULL;
  if (cp->prod && st == PHYS_OK) {
    Dm = phys_stack_alloc(d, 3 * (size_t)n * nv + 1);
    Dp = cp->zp ? phys_stack_alloc(d, 3 * (size_t)n * nv + 1) : NULL;
    Q = phys_stack_alloc(d, (size_t)n * nv + 1);
    dJ = phys_stack_alloc(d, (size_t)n * nv + 1);
    qd = phys_stack_alloc(d, (size_t)n + 1);
    dGz = phys_stack_alloc(d, 3 * (size_t)n + 1);
    dGzp = phys_stack_alloc(d, 3 * (size_t)n + 1);
    dGd = phys_stack_alloc(d, (size_t)n + 1);
    for (int k = 0; k < 3 && st == PHYS_OK; k++) {
      st = prod_matrix(m, d, cp, cp->zv + (size_t)k * n, cp->uv + (size_t)k * nv, Dm + k * (size_t)n * nv);
      if (Dp && st == PHYS_OK)
        st = prod_matrix(m, d, cp, cp->zp + (size_t)k * n, cp->up + (size_t)k * nv, Dp + k * (size_t)n * nv);
    }
    // (only when a problem's solution depends on its row scales: a singular clamped system)
    int scaled = phys_solve_lcp_local_scaled(cp->lcp) || (cp->lcp_pos && phys_solve_lcp_local_scaled(cp->lcp_pos));
    memset(Q, 0, sizeof(double) * (size_t)n * nv);
    for (int r = 0; r < n && scaled; r++) {
      const double* Yr = cp->Y + (size_t)r * nv;
      phys_rnea_mass_quad_grad(m, d, Yr, Q + (size_t)r * nv);
    }
  }
  for (int j = 0; j < n2 && st == PHYS_OK; j++) {
    int jj = j < nv ? j : j - nv;
    const double* F = j < nv ? Fq : Fv;
    memset(e, 0, sizeof(double) * (size_t)nv);
    e[jj] = 1;
    for (int i = 0; i < nv; i++) r[i] = F[(size_t)i * nv + jj];
    contactDir x = {0};
    x.r = r;
    x.tab = tb;
    if (j < nv) {
      x.dq = e;
      double *g1 = geo, *g2 = g1 + n, *g3 = g2 + n, *g4 = g3 + n, *g5 = g4 + nv;
      for (int r = 0; r < n; r++) {
        g1[r] = Jb1[(size_t)r * nv + jj];
        g2[r] = Dd[(size_t)r * nv + jj];
        g3[r] = Jb2[(size_t)r * nv + jj];
      }
      for (int i = 0; i < nv; i++) {
        g4[i] = Jt1[(size_t)i * nv + jj];
        g5[i] = Jt2[(size_t)i * nv + jj];
      }
      x.dJvp = g1, x.ddist = g2, x.dJv = g3, x.dJtl = g4, x.dJtlp = g5;
      for (int i = 0; i < nv; i++) dmv[i] = kpos[(size_t)i * nv + jj];
      x.dmvpos = dmv;
      if (cp->prod) {
        st = cp->geom ? phys_constraint_dJ_geom(m, d, p, cp->geom, e, dJ) : phys_constraint_dJ(m, d, p, e, dJ);
        if (st != PHYS_OK) break;
        for (int k = 0; k < 3; k++)
          for (int r = 0; r < n; r++) {
            dGz[(size_t)k * n + r] = Dm[(k * (size_t)n + r) * nv + jj];
            if (Dp) dGzp[(size_t)k * n + r] = Dp[(k * (size_t)n + r) * nv + jj];
          }
        for (int r = 0; r < n; r++) qd[r] = Q[(size_t)r * nv + jj];
        dG_diagonal(cp, dJ, qd, dGd);
        x.dGz = dGz, x.dGzp = cp->zp ? dGzp : NULL, x.dGd = dGd;
        x.dq = e;
        st = contact_jvp(m, d, cp, &x, dqn, dvn);
        if (st == PHYS_OK) put_column(A, nv, n2, j, dqn, dvn);
        continue;
      }
      if (jj == j0) {   // the next block of mass terms
        nb = nv - j0 < B ? nv - j0 : B;
        mass_block_q(m, d, cp, D0, j0, nb, K);
        j0 += nb;
      }
      k_column(K, n, nb, jj - (j0 - nb), ydmy);
      x.ydmy = ydmy;
    } else {
      x.dv = e;
    }
    st = contact_jvp(m, d, cp, &x, dqn, dvn);
    if (st == PHYS_OK) put_column(A, nv, n2, j, dqn, dvn);
  }
  phys_stack_free(d, mark);
  return st;
}

// B's nu columns: r = df/du e_j (tb may be NULL)
static physStatus jacobian_b(const physModel* m, physData* d, const contactPoint* cp, const solverTable* tb,
                             double* B) {
  int nv = m->nv, nu = m->nu;
  size_t mark = phys_stack_mark(d);
  double* Fu = arena_zeros(d, nv * nu);
  double* r = phys_stack_alloc(d, (size_t)nv);
  double* dqn = phys_stack_alloc(d, (size_t)nv);
  double* dvn = phys_stack_alloc(d, (size_t)nv);
  phys_passive_deriv(m, d, NULL, NULL, Fu);
  phys_actuation_deriv(m, d, NULL, Fu);
  physStatus st = PHYS_OK;
  for (int j = 0; j < nu && st == PHYS_OK; j++) {
    for (int i = 0; i < nv; i++) r[i] = Fu[(size_t)i * nu + j];
    contactDir x = {0};
    x.r = r;
    x.tab = tb;
    st = contact_jvp(m, d, cp, &x, dqn, dvn);
    if (st == PHYS_OK) put_column(B, nv, nu, j, dqn, dvn);
  }
  phys_stack_free(d, mark);
  return st;
}

// P's columns but the sizes' (*nsize: their count): r = -R(a+) e_j, dM~ x = (R(x) - R(0)) e_j, dmu, deps
// the contact geometry along pos:BODY component k into x (dJmat and the five products; arena memory of the
// caller's mark): the body's subtree translates by column k of its parent's rotation
static physStatus pos_geometry(const physModel* m, physData* d, const contactPoint* cp, int body, int k,
                               contactDir* x) {
  int n = cp->n, nv = cp->nv;
  if (!cp->geom) return PHYS_ERR_ARG;   // a pair without geometry derivatives (message in d->lastwarning)
  double* dJ = phys_stack_alloc(d, (size_t)n * nv + 1);
  double* dd = phys_stack_alloc(d, (size_t)n + 1);
  double* jvp = phys_stack_alloc(d, (size_t)n + 1);
  double* jv = phys_stack_alloc(d, (size_t)n + 1);
  double* jtl = phys_stack_alloc(d, (size_t)nv);
  double* jtlp = phys_stack_alloc(d, (size_t)nv);
  double tr[3];
  phys_body_pos_direction(tr, m, d, body, k);
  physStatus st = phys_constraint_pos_dJ(m, d, &cp->st.p, cp->geom, body, tr, dJ, dd);
  if (st != PHYS_OK) return st;
  mul_j(jvp, dJ, cp->st.vnew, n, nv);
  mul_j(jv, dJ, d->qvel, n, nv);
  mul_jt(jtl, dJ, cp->st.sol.lambda, n, nv, 0);
  mul_jt(jtlp, dJ, cp->st.sol_pos.lambda, n, nv, 0);
  x->dJmat = dJ, x->ddist = dd, x->dJvp = jvp, x->dJv = jv, x->dJtl = jtl, x->dJtlp = jtlp;
  return PHYS_OK;
}

static physStatus jacobian_p(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                             const solverTable* tb, double* P, int* nsize) {
  int nv = m->nv, n = cp->n, nt = t->ntheta, nc = cp->nc;
  size_t mark = phys_stack_mark(d), nr = (size_t)nv * nt;
  double* Ra = phys_stack_alloc(d, nr);
  double* R0 = phys_stack_alloc(d, nr);
  double* Rp = phys_stack_alloc(d, nr);
  double* zero = arena_zeros(d, nv);
  double* r = phys_stack_alloc(d, (size_t)nv);
  double* ydmy = phys_stack_alloc(d, (size_t)n * n + 1);
  double* dmv = phys_stack_alloc(d, (size_t)nv);
  double* dmu = phys_stack_alloc(d, (size_t)nc + 1);
  double* deps = phys_stack_alloc(d, (size_t)nc + 1);
  double* dqn = phys_stack_alloc(d, (size_t)nv);
  double* dvn = phys_stack_alloc(d, (size_t)nv);
  phys_param_forces(m, d, t, cp->acc, Ra);
  phys_param_forces(m, d, t, zero, R0);
  phys_param_forces(m, d, t, cp->st.vpos, Rp);
  int B = block_cols(d, n, nt), j0 = 0, nb = 0;   // the mass terms of theta columns [j0 - nb, j0) in K
  double* K = cp->prod ? NULL : phys_stack_alloc(d, (size_t)n * n * B + 1);
  // products mode: (R(u_k) - R0) of both problems' vectors (3 nv x nt each), QP (n x nt): row r
  // Y_r' (R(Y_r) - R0), and one column's dM~ u_k, products and diagonal
  double *Ru = NULL, *Rup = NULL, *QP = NULL, *dmu_k = NULL, *dmup = NULL, *qd = NULL, *dGz = NULL, *dGzp = NULL,
         *dGd = NULL, *tmp = NULL;
  if (cp->prod) {
    Ru = phys_stack_alloc(d, 3 * nr);
    Rup = cp->zp ? phys_stack_alloc(d, 3 * nr) : NULL;
    QP = arena_zeros(d, n * nt);
    dmu_k = phys_stack_alloc(d, 3 * (size_t)nv);
    dmup = phys_stack_alloc(d, 3 * (size_t)nv);
    qd = phys_stack_alloc(d, (size_t)n + 1);
    dGz = phys_stack_alloc(d, 3 * (size_t)n + 1);
    dGzp = phys_stack_alloc(d, 3 * (size_t)n + 1);
    dGd = phys_stack_alloc(d, (size_t)n + 1);
    tmp = phys_stack_alloc(d, (size_t)nv);
    for (int k = 0; k < 3; k++) {
      phys_param_forces(m, d, t, cp->uv + (size_t)k * nv, Ru + k * nr);
      for (size_t i = 0; i < nr; i++) Ru[k * nr + i] -= R0[i];
      if (!Rup) continue;
      phys_param_forces(m, d, t, cp->up + (size_t)k * nv, Rup + k * nr);
      for (size_t i = 0; i < nr; i++) Rup[k * nr + i] -= R0[i];
    }
    double* Rc = phys_stack_alloc(d, nr);
    for (int r = 0; r < n; r++) {
      const double* Yr = cp->Y + (size_t)r * nv;
      phys_param_forces(m, d, t, Yr, Rc);
      for (int i = 0; i < nv; i++)
        if (Yr[i] != 0)
          for (int j = 0; j < nt; j++) QP[(size_t)r * nt + j] += Yr[i] * (Rc[(size_t)i * nt + j] - R0[(size_t)i * nt + j]);
    }
  }
  physStatus st = PHYS_OK;
  *nsize = 0;
  for (int e = 0; e < t->n && st == PHYS_OK; e++) {
    const physParam* pr = t->param + e;
    if (pr->kind == PHYS_PAR_SIZE) (*nsize)++;
    for (int j = pr->adr; j < pr->adr + pr->size && st == PHYS_OK; j++) {
      if (j == j0 && !cp->prod) {   // the next block of mass terms (columns in table order)
        nb = nt - j0 < B ? nt - j0 : B;
        mass_block_p(m, d, cp, t, R0, j0, nb, K);
        j0 += nb;
      }
      if (pr->kind == PHYS_PAR_SIZE) continue;   // the caller's reverse passes
      contactDir x = {0};
      for (int i = 0; i < nv; i++) {
        r[i] = -Ra[(size_t)i * nt + j];
        dmv[i] = Rp[(size_t)i * nt + j] - R0[(size_t)i * nt + j];
      }
      if (!cp->prod) {
        k_column(K, n, nb, j - (j0 - nb), ydmy);
        x.ydmy = ydmy;
      }
      x.tab = tb;
      x.r = r;
      x.dmvpos = cp->st.p.npos > 0 ? dmv : NULL;
      if (pr->kind == PHYS_PAR_FRICTION || pr->kind == PHYS_PAR_RESTITUTION) {
        int rest = pr->kind == PHYS_PAR_RESTITUTION;
        for (int i = 0; i < nc; i++) {
          int s = phys_contact_material_moves(m, d->contact + i, pr->id, rest);
          dmu[i] = !rest && s ? 1 : 0;
          deps[i] = rest && s ? 1 : 0;
        }
        x.dmu = dmu;
        x.deps = deps;
      }
      size_t cmark = phys_stack_mark(d);   // the column's geometry (pos) lives until its column is written
      if (pr->kind == PHYS_PAR_POS && nc > 0) st = pos_geometry(m, d, cp, pr->id, j - pr->adr, &x);
      if (st == PHYS_OK && cp->prod) {   // dG = dJ Y' + Y dJ' - Y dM~ Y' through products
        for (int k = 0; k < 3; k++)
          for (int i = 0; i < nv; i++) {
            dmu_k[(size_t)k * nv + i] = Ru[k * nr + (size_t)i * nt + j];
            if (Rup) dmup[(size_t)k * nv + i] = Rup[k * nr + (size_t)i * nt + j];
          }
        for (int r = 0; r < n; r++) qd[r] = QP[(size_t)r * nt + j];
        dG_products(cp, x.dJmat, cp->zv, cp->uv, dmu_k, dGz, tmp);
        if (cp->zp) dG_products(cp, x.dJmat, cp->zp, cp->up, dmup, dGzp, tmp);
        dG_diagonal(cp, x.dJmat, qd, dGd);
        x.dGz = dGz, x.dGzp = cp->zp ? dGzp : NULL, x.dGd = dGd;
      }
      if (st == PHYS_OK) st = contact_jvp(m, d, cp, &x, dqn, dvn);
      if (st == PHYS_OK) put_column(P, nv, nt, j, dqn, dvn);
      phys_stack_free(d, cmark);
    }
  }
  phys_stack_free(d, mark);
  return st;
}

// P's size columns by reverse passes: row i of P = (P' e_i)'
static physStatus size_rows(const physModel* m, physData* d, const physParamTable* t, double* P) {
  int nv = m->nv, n2 = 2 * nv, nt = t->ntheta;
  size_t mark = phys_stack_mark(d);
  double* e = arena_zeros(d, n2);
  double* tb = phys_stack_alloc(d, (size_t)nt);
  physStatus st = PHYS_OK;
  for (int i = 0; i < n2 && st == PHYS_OK; i++) {
    e[i] = 1;
    st = phys_constrained_step_vjp(m, d, t, e, NULL, NULL, tb, NULL);
    e[i] = 0;
    for (int k = 0; k < t->n && st == PHYS_OK; k++) {
      const physParam* pr = t->param + k;
      if (pr->kind == PHYS_PAR_SIZE)
        for (int j = pr->adr; j < pr->adr + pr->size; j++) P[(size_t)i * nt + j] = tb[j];
    }
  }
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_constrained_jacobian_at(const physModel* m, physData* d, physConstrainedPoint* cpp,
                                        const physParamTable* t, double* A, double* B, double* P) {
  size_t mark = phys_stack_mark(d);
  contactPoint cp = *cpp;   // (the directions' structures below are this call's)
  install_lists(d, &cp);
  physStatus st = PHYS_OK;
  int nsize = 0;
  // the contacts' geometry derivatives and lcp's local structure of both problems once for every direction
  physStatus gst;
  cp.geom = phys_constraint_geom(m, d, &cp.st.p, &gst);
  if (m->opt.contact == PHYS_CONTACT_LCP) cp.lcp = phys_solve_lcp_local(d, &cp.st.p, &cp.st.sol);
  if (cp.st.p.npos > 0) cp.lcp_pos = phys_solve_lcp_local(d, &cp.st.pp, &cp.st.sol_pos);
  cp.prod = cp.lcp != NULL && cp.n > 0;
  if (cp.prod) prod_vectors(d, &cp);
  // the solvers' tables when there are more directions than 2n reverse passes
  int ndir = (A ? 2 * m->nv : 0) + (B ? m->nu : 0) + (P && t ? t->ntheta : 0);
  solverTable tab, *tb = NULL;
  size_t ntab = 2 * (size_t)cp.n * cp.n * (cp.n + 1) + (size_t)cp.n * (cp.nc + 1);
  // (lcp: its JVP from the local structure built once is cheaper than the n^3 tables per direction). The
  // choice depends on the problem and the arena's capacity (an eighth of it at most for the tables), never
  // on the space a caller happens to leave free: the same state gives the same arithmetic in any caller
  if (m->opt.contact != PHYS_CONTACT_LCP && ndir > 2 * cp.n && ntab <= d->nstack / 8) {
    st = solver_tables(m, d, &cp, &tab);
    tb = &tab;
  }
  if (A && st == PHYS_OK) st = jacobian_a(m, d, &cp, tb, A);
  if (B && m->nu > 0 && st == PHYS_OK) st = jacobian_b(m, d, &cp, tb, B);
  if (P && t && t->ntheta > 0 && st == PHYS_OK) st = jacobian_p(m, d, &cp, t, tb, P, &nsize);
  if (st == PHYS_ERR_NUMERIC)
    phys_data_warning(d, "phys_step_jacobian: constraint solver derivative failed at time %g", d->time);
  restore_lists(d, &cp);
  phys_stack_free(d, mark);
  if (nsize > 0 && st == PHYS_OK) st = size_rows(m, d, t, P);   // the size columns by reverse passes
  return st;
}

// step_contact_deriv.c - exact derivatives of the constrained step (lcp, cone, ccp; step_contact_deriv.h).
//
// The step (src/step/step.c phys_step_constrained), W = M~^-1, M~ = M + dt B:
//   v_f = v + dt W (tau - c),  J, G = J W J',  g = J v_f + b,  lambda = solver(G, g, mu),
//   v+ = v_f + W J' lambda,  lambda_p = lcp(G, gpos, 0),  vpos = W J' (lambda_p + s o lambda),
//   q+ = q (+) dt (v+ + vpos),
// b_normal = eps phi(J_n v) when touching (or within the margin when the pre-step motion closes the gap: a
// margin impact), dist/dt within the margin (assemble.c phys_normal_bias); gpos = beta (dist + slop)/dt on
// penetrating rows; s = -sigma_i/dt on the rows of a margin impact i, sigma_i = (1 + eps) dist_i/(e - (1 + eps)
// phi(J_n v)) its time shift (e = dt |g|; contact.h phys_toi_shift), from its time of
// impact (step.c toi_displacement), 0 on the others.
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
//   dvpos = W (dJ' lpe + J' (dlambda_p + s o dlambda + ds o lambda) - dM~ vpos),  lpe = lambda_p + s o lambda,
//   ds_i = -dsigma_i/dt,  dsigma_i = its partials (phys_toi_shift) times ddist_i, dJ_n v + J_n dv, deps_i and
//   d(dt |g|) (a gravity parameter).
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
#include "residual.h"
#include "step_contact_point.h"
#include "tendon_rows_deriv.h"

//---------------------------------------------------------------------------------------------------------
// integration on SO(3): per rotation group Jr(phi), Exp(phi)' with phi = dt (v+ + vpos)

void phys_cp_tangent_blocks(const physModel* m, const double* vsum, int* rot, double* Jr, double* Et) {
  double dt = m->opt.timestep;
  int nb = 0;
  for (int k = 0; k < m->nv; k++) rot[k] = -1;
  for (int j = 0; j < m->njnt; j++) {
    int da = m->jnt_dofadr[j], type = m->jnt_type[j];
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    if (type == PHYS_JNT_FREE) da += 3;
    double phi[3] = {dt * vsum[da], dt * vsum[da + 1], dt * vsum[da + 2]};
    phys_so3_jacobians(Jr + 9 * nb, Et + 9 * nb, phi);
    rot[da] = rot[da + 1] = rot[da + 2] = nb++;
  }
}

// rot, Jr, Et of cp from vsum
static void tangent_blocks(const physModel* m, contactPoint* cp) {
  phys_cp_tangent_blocks(m, cp->vsum, cp->rot, cp->Jr, cp->Et);
}

//---------------------------------------------------------------------------------------------------------
// the linearization point

// half-width (m) of the position correction's kink for the derivatives (kink_position_problem)
#define PHYS_KINK_BAND 1e-9

// distance of row r of p (a contact normal or a joint limit; not a tangent) at d's state: a contact's dist;
// a limit row is +-e_dof (assemble.c): q - lo for +, hi - q for -; a tendon limit row's (tendon_rows_deriv.h)
static double row_dist(const physModel* m, physData* d, const physConstraintProblem* p, int r) {
  if (r < 3 * p->nc) return p->con[r / 3].dist;
  if (r >= p->n - phys_tendon_rows_of(m, d, p, NULL, NULL)) return phys_tendon_rows_dist(m, d, p, r);
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
  phys_solve_islands(m, d, phys_solve_lcp, &cp->st.pp, cp->st.eq.ne > 0 ? cp->st.eq.J : NULL, cp->st.eq.ne, sol);
  return added;
}

// the margin impacts' terms of the point (step.c toi_displacement): cp->ts, cp->lpe = lambda_p + s o lambda
// (after kink_position_problem, whose lambda_p the derivatives use) and their count cp->nimp
static void toi_terms(const physModel* m, physData* d, contactPoint* cp) {
  const physConstraintProblem* p = &cp->st.p;
  double dt = m->opt.timestep, e = phys_toi_hold_speed(m);
  cp->nimp = 0;
  cp->ts = arena_zeros(d, cp->nc);
  cp->lpe = phys_stack_alloc(d, (size_t)cp->n + 1);
  memcpy(cp->lpe, cp->st.sol_pos.lambda, sizeof(double) * (size_t)cp->n);
  for (int i = 0; i < cp->nc; i++) {
    double ts = cp->ts[i] = phys_toi_shift(p->con + i, cp->vn[i], dt, e, NULL);
    if (ts > 0) cp->nimp++;
    for (int r = 3 * i; r < 3 * i + 3 && ts > 0; r++) cp->lpe[r] += -ts / dt * cp->st.sol.lambda[r];
  }
}

// the island of each of the stage's rows (phys_islands, the primal's split: contacts, limits and the eliminated
// equality rows; arena memory of the caller's mark), or NULL when the problem is one island or
// PHYS_DSBL_ISLAND is set. Both problems (main and position) have the same rows and islands
// Y (n x nv) = M~^-1 J' row by row (L: M~'s factor), each on the dof range of the trees its row touches (yr: 2n,
// the ranges)
// (p->sup; M~ does not couple trees, so Y_c is 0 off them: phys_ldl_solve_range, the same operations there as
// the whole solve's); without supports every row on all dofs
static void rows_solve(const physModel* m, physData* d, const physConstraintProblem* p, const double* L, double* Y,
                       int* yr) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  int* tlo = arena_ints(d, nv);   // each dof's tree's dofs: tlo[j] .. thi[j] - 1 (a tree's dofs are consecutive)
  int* thi = arena_ints(d, nv);
  for (int j = 0; j < nv; j++)
    tlo[j] = j > 0 && m->body_rootid[m->dof_bodyid[j]] == m->body_rootid[m->dof_bodyid[j - 1]] ? tlo[j - 1] : j;
  for (int j = nv - 1; j >= 0; j--)
    thi[j] = j < nv - 1 && m->body_rootid[m->dof_bodyid[j]] == m->body_rootid[m->dof_bodyid[j + 1]] ? thi[j + 1]
                                                                                                     : j + 1;
  for (int c = 0; c < p->n; c++) {
    int lo = 0, hi = nv;
    if (p->sup) {
      lo = nv, hi = 0;
      for (int k = 0; k < p->sup_num[c]; k++) {
        int j = p->sup[p->sup_adr[c] + k];
        lo = tlo[j] < lo ? tlo[j] : lo;
        hi = thi[j] > hi ? thi[j] : hi;
      }
      if (hi <= lo) lo = hi = 0;   // (a row on no dof: Y_c = 0)
    }
    phys_ldl_solve_range(Y + (size_t)c * nv, L, m->dof_parentid, p->J + (size_t)c * nv, nv, lo, hi);
    yr[2 * c] = lo, yr[2 * c + 1] = hi;
  }
  phys_stack_free(d, mark);
}

static const int* row_islands(const physModel* m, physData* d, const physStepStage* st) {
  int n = st->p.n;
  if ((m->opt.disableflags & PHYS_DSBL_ISLAND) || n <= 0) return NULL;
  int* lab = arena_ints(d, n);
  size_t mark = phys_stack_mark(d);
  physIslands isl;
  int ni = phys_islands(m, d, &st->p, st->eq.ne > 0 ? st->eq.J : NULL, st->eq.ne, &isl);
  for (int k = 0; k < ni; k++)
    for (int a = isl.start[k]; a < isl.start[k + 1]; a++) lab[isl.row[a]] = k;
  phys_stack_free(d, mark);
  return ni > 1 ? lab : NULL;
}

// run the step's stage at d's state from the warm start the step itself would take, warm (NULL: the caller's
// list d->contact; read only), its detection into cp->det, and the quantities the derivatives share. Without
// constraints PHYS_OK with cp->n = 0 (nothing else set); PHYS_ERR_ARG with penalty, PHYS_ERR_NUMERIC if M~
// failed.
static physStatus point_build(const physModel* m, physData* d, const physWarmStart* ws, contactPoint* cp) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  cp->n = 0;
  if (!phys_grad_balls_last(m)) return PHYS_ERR_MODEL;
  if (m->opt.contact == PHYS_CONTACT_PENALTY) return PHYS_ERR_ARG;
  physWarmStart warm = ws ? *ws : (physWarmStart){d->ncon, d->contact};
  cp->det = phys_contact_list_arena(d);
  int ok = phys_step_stage(m, d, NULL, &warm, &cp->det, &cp->st);
  if (ok <= 0) {
    return ok == 0 ? PHYS_OK : PHYS_ERR_NUMERIC;
  }
  cp->ang = NULL;   // (torsional and rolling friction rows: a Jacobian call's, step_contact_angular.c)
  cp->acc = phys_stack_alloc(d, (size_t)nv);
  memcpy(cp->acc, d->qacc, sizeof(double) * (size_t)nv);
  if (m->residual) {   // the point of RNEA is a+ - r (residual_deriv.h: the network's force M~ r)
    double* r = phys_stack_alloc(d, (size_t)nv);
    phys_residual_acc(m, d, r);
    for (int i = 0; i < nv; i++) cp->acc[i] -= r[i];
  }
  cp->L = phys_stack_alloc(d, (size_t)nv * nv);
  memcpy(cp->L, d->qLD, sizeof(double) * (size_t)nv * nv);
  const physConstraintProblem* p = &cp->st.p;
  cp->st.p.island = cp->st.pp.island = row_islands(m, d, &cp->st);   // (the solvers' derivatives by islands)
  int n = cp->n = p->n, nc = cp->nc = p->nc;
  cp->nv = nv;
  cp->Y = phys_stack_alloc(d, (size_t)n * nv + 1);
  cp->yr = arena_ints(d, 2 * n);
  rows_solve(m, d, p, cp->L, cp->Y, cp->yr);
  cp->vsum = phys_stack_alloc(d, (size_t)nv);
  for (int i = 0; i < nv; i++) cp->vsum[i] = cp->st.vnew[i] + cp->st.vpos[i];
  cp->vn = arena_zeros(d, nc);
  cp->bias = arena_ints(d, nc);
  for (int i = 0; i < nc; i++) {
    const double* Jn = p->J + (size_t)(3 * i) * nv;
    cp->vn[i] = dotn(Jn, d->qvel, nv);
    phys_normal_bias(p->con + i, cp->vn[i], dt, cp->bias + i);   // (its branch)
  }
  cp->Jr = phys_stack_alloc(d, 9 * (size_t)nv);
  cp->Et = phys_stack_alloc(d, 9 * (size_t)nv);
  cp->rot = arena_ints(d, nv);
  tangent_blocks(m, cp);
  cp->nkink = kink_position_problem(m, d, cp);
  toi_terms(m, d, cp);
  cp->geom = NULL;                // built by the Jacobians, which take many directions
  // lcp's local structures (cone's, ccp's: theirs) once, at the problems the derivatives see (the kink's position
  // problem included)
  cp->lcp = m->opt.contact == PHYS_CONTACT_LCP ? phys_solve_lcp_local(d, p, &cp->st.sol) : NULL;
  cp->lcp_pos = p->npos > 0 ? phys_solve_lcp_local(d, &cp->st.pp, &cp->st.sol_pos) : NULL;
  cp->ccp = m->opt.contact == PHYS_CONTACT_CONE || m->opt.contact == PHYS_CONTACT_CCP
                ? phys_solve_ccp_local(d, p, &cp->st.sol, m->opt.contact == PHYS_CONTACT_CCP)
                : NULL;
  cp->prod = 0;
  cp->zv = cp->uv = cp->zp = cp->up = NULL;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// public entry points

double* phys_constrained_factor(const physConstrainedPoint* cp) { return cp->L; }

int phys_constrained_position_rows(const physConstrainedPoint* cp) { return cp->st.p.npos; }   // (kink rows added)

const physConstraintProblem* phys_constrained_problem(const physConstrainedPoint* cp, int* nimp) {
  if (nimp) *nimp = cp->nimp;
  return &cp->st.p;
}

physStatus phys_constrained_linearize(const physModel* m, physData* d, const physWarmStart* warm,
                                      physConstrainedPoint** out) {
  *out = NULL;
  contactPoint* cp = (contactPoint*)phys_stack_alloc(d, sizeof(contactPoint) / sizeof(double) + 1);
  physStatus st = point_build(m, d, warm, cp);
  if (st != PHYS_OK || cp->n == 0) return st;   // (n = 0: no constraints, the step is smooth)
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
  physStatus st = phys_constrained_linearize(m, d, NULL, &cp);
  if (st == PHYS_OK && !cp) st = PHYS_ERR_ARG;
  if (st == PHYS_OK) {
    switch (kind) {
      case CALL_POINT: memcpy(c->L, cp->L, sizeof(double) * (size_t)m->nv * m->nv); break;
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


// step_contact_jvp.c - forward mode of the constrained step's derivatives (step_contact_deriv.h; the
// equations are in step_contact_deriv.c's file comment): the directions' JVP through the solvers, the
// products mode of lcp, the solvers' tables, and the Jacobians A, B, P at a linearization point.
#include "arena.h"
#include "residual_deriv.h"
#include "step_contact_point.h"
#include "tendon_rows_deriv.h"

//---------------------------------------------------------------------------------------------------------
// the solver's derivatives by contact model

// dlambda = phys_cp_solver_jvp(dg, dG, dmu) of the model's solver at cp's main problem
physStatus phys_cp_solver_jvp(const physModel* m, physData* d, const contactPoint* cp, const double* dg,
                              const double* dG, const double* dmu, double* dl) {
  switch (m->opt.contact) {
    case PHYS_CONTACT_CONE:
    case PHYS_CONTACT_CCP: return phys_solve_ccp_jvp_local(cp->ccp, d, &cp->st.p, &cp->st.sol, dg, dG, dmu, dl);
    default: return phys_solve_lcp_jvp(m, d, &cp->st.p, &cp->st.sol, dg, dG, dmu, dl);
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
  double dhold;              // d(dt |g|) along a gravity entry (the margin impacts' hold speed), else 0
  // the geometry along dq when precomputed (all five, or NULL: phys_constraint_jvp here)
  const double *dJvp, *dJtl, *ddist;   // dJ v+ (n), dJ' lambda (nv), ddist (n)
  const double *dJv, *dJtlp;           // dJ v (n), dJ' lpe (nv; lpe = lambda_p + s o lambda)
  const double* dJmat;       // n x nv: dJ along a parameter direction (pos:BODY; with the five above)
  const solverTable* tab;    // the solvers' tables (NULL: their JVPs)
  // products mode (cp->prod): dG z_k of both problems (3 x n each) and dG's diagonal (n); NULL: dG = 0
  const double *dGz, *dGzp, *dGd;
  double* dln;               // nc: the main problem's dlambda_n written here (NULL: not)
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

// the normal biases' part of dg: eps phi'(J_n v) d(J_n v) + deps phi on the restitution branch, ddist/dt on
// the gap branch (dJv = dJ v, ddist the direction's)
static void bias_jvp(const contactPoint* cp, const contactDir* x, const double* dJv,
                     const double* ddist, double dt, double* dg) {
  int nv = cp->nv;
  const physConstraintProblem* p = &cp->st.p;
  for (int i = 0; i < cp->nc; i++) {
    const physContact* c = p->con + i;
    if (cp->bias[i] == PHYS_BIAS_REST) {
      double dvn0 = dJv[3 * i] + (x->dv ? dotn(p->J + (size_t)(3 * i) * nv, x->dv, nv) : 0), dphi;
      double phi = phys_restitution_phi(cp->vn[i], &dphi);
      dg[3 * i] += c->restitution * dphi * dvn0 + (x->deps ? x->deps[i] * phi : 0);
    } else if (cp->bias[i] == PHYS_BIAS_GAP) {
      dg[3 * i] += ddist[3 * i] / dt;
    }
  }
}

// the margin impacts' part of dvpos's impulse (step_contact_deriv.c's file comment): dl += s o dlambda +
// ds o lambda, ds_i = -dsigma_i/dt, dsigma_i from phys_toi_shift's partials in J_n v (dJ_n v + J_n dv), dist,
// eps and dt |g| (x->dhold) (dlm: the main
// problem's dlambda; dJv = dJ v, ddist the direction's)
static void toi_jvp(const physModel* m, const contactPoint* cp, const contactDir* x, const double* dlm,
                    const double* dJv, const double* ddist, double* dl) {
  int nv = cp->nv;
  double dt = m->opt.timestep;
  const physConstraintProblem* p = &cp->st.p;
  const double* lam = cp->st.sol.lambda;
  double e = phys_toi_hold_speed(m);
  for (int i = 0; i < cp->nc; i++) {
    if (!(cp->ts[i] > 0)) continue;
    double sp[4];
    phys_toi_shift(p->con + i, cp->vn[i], dt, e, sp);
    double dvn0 = dJv[3 * i] + (x->dv ? dotn(p->J + (size_t)(3 * i) * nv, x->dv, nv) : 0);
    double dts = sp[1] * ddist[3 * i] + sp[0] * dvn0 + (x->deps ? sp[2] * x->deps[i] : 0) + sp[3] * x->dhold;
    double s = -cp->ts[i] / dt, ds = -dts / dt;
    for (int r = 3 * i; r < 3 * i + 3; r++) dl[r] += s * dlm[r] + ds * lam[r];
  }
}

// the position problem's part of contact_jvp: dlambda_p = lcp_jvp(beta ddist/dt, dG) by the same route as the
// main problem's (products, tables, local structure or the solver; 0 without correction or along a rigid
// direction), the margin impacts' terms (toi_jvp), dvpos = W (dJ' lpe + J' (dlambda_p + s o dlambda +
// ds o lambda) - dM~ vpos) (dlm: the main problem's dlambda; dg, dl: scratch of n)
static physStatus position_jvp(const physModel* m, physData* d, const contactPoint* cp, const contactDir* x,
                               int rigid, const double* dlm, const double* dJv, const double* ddist,
                               const double* dG, const double* dJtlp, double* dg, double* dl, double* dvpos) {
  int n = cp->n, nv = cp->nv;
  double dt = m->opt.timestep, beta = m->opt.baumgarte;
  const physConstraintProblem* p = &cp->st.p;
  const solverTable* tb = x->tab;
  for (int r = 0; r < n; r++) dg[r] = p->gpos[r] < 0 ? beta * ddist[r] / dt : 0;
  if (p->npos == 0 || rigid) {
    memset(dl, 0, sizeof(double) * (size_t)n);
  } else if (cp->prod) {
    phys_solve_lcp_jvp_prod(cp->lcp_pos, d, &cp->st.pp, &cp->st.sol_pos, dg, x->dGzp, x->dGd, NULL, dl);
  } else if (tb) {
    size_t nn = (size_t)n * n;
    for (int r = 0; r < n; r++) dl[r] = dotn(tb->gp + (size_t)r * n, dg, n) + dotn(tb->Gp + r * nn, dG, (int)nn);
  } else {   // (the point has the position problem's local structure whenever it has one)
    phys_solve_lcp_jvp_local(cp->lcp_pos, d, &cp->st.pp, &cp->st.sol_pos, dg, dG, NULL, dl);
  }
  if (cp->nimp > 0) toi_jvp(m, cp, x, dlm, dJv, ddist, dl);
  mul_jt(dvpos, p->J, dl, n, nv, 0);
  for (int i = 0; i < nv; i++) dvpos[i] += dJtlp[i] - (x->dmvpos ? x->dmvpos[i] : 0);
  phys_solve_m(m, cp->L, dvpos, dvpos);
  return PHYS_OK;
}

// the geometry along x: dJ v+, dJ v, ddist (n each), dJ' lambda, dJ' lambda_p (nv each), given in x or by
// phys_constraint_jvp along x->dq (left 0 without either)
static physStatus direction_geometry(const physModel* m, physData* d, const contactPoint* cp, const contactDir* x,
                                     double* dJvp, double* dJv, double* ddist, double* dJtl, double* dJtlp) {
  int n = cp->n, nv = cp->nv;
  const physConstraintProblem* p = &cp->st.p;
  physStatus st = PHYS_OK;
  if (x->dJvp) {
    memcpy(dJvp, x->dJvp, sizeof(double) * (size_t)n);
    memcpy(ddist, x->ddist, sizeof(double) * (size_t)n);
    memcpy(dJv, x->dJv, sizeof(double) * (size_t)n);
    memcpy(dJtl, x->dJtl, sizeof(double) * (size_t)nv);
    memcpy(dJtlp, x->dJtlp, sizeof(double) * (size_t)nv);
  } else if (x->dq) {
    st = phys_constraint_jvp(m, d, p, x->dq, cp->st.sol.lambda, cp->st.vnew, dJvp, dJtl, ddist);
    if (st == PHYS_OK) st = phys_constraint_jvp(m, d, p, x->dq, cp->lpe, d->qvel, dJv, dJtlp, NULL);
  }
  return st;
}

// dlambda = solver_jvp(dg, dG, dmu) of the main problem by the fastest route cp has: lcp's products (dG z_k and
// dG's diagonal from x), the solvers' tables, lcp's local structure, else the solver's JVP (rigid: dG = 0)
static physStatus main_solver_jvp(const physModel* m, physData* d, const contactPoint* cp, const contactDir* x,
                                  const double* dg, const double* dG, int rigid, double* dl) {
  int n = cp->n, nc = cp->nc;
  const physConstraintProblem* p = &cp->st.p;
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
    return phys_cp_solver_jvp(m, d, cp, dg, dG, x->dmu, dl);
  }
  return PHYS_OK;
}

// the position update: dq+ = E dq + dt D (dv+ + dvpos) (w: scratch of nv)
static void integrate_jvp(const physModel* m, const contactPoint* cp, const contactDir* x, const double* dvn,
                          const double* dvpos, double* w, double* dqn) {
  int nv = cp->nv;
  double dt = m->opt.timestep;
  for (int i = 0; i < nv; i++) w[i] = dvn[i] + dvpos[i];
  apply_blocks(m, cp->rot, cp->Jr, w, dqn, 0);
  for (int i = 0; i < nv; i++) dqn[i] *= dt;
  if (x->dq) {
    apply_blocks(m, cp->rot, cp->Et, x->dq, w, 0);
    for (int i = 0; i < nv; i++) dqn[i] += w[i];
  }
}

// (dq+, dv+) of the step along x (nv each): contact_jvp's chain (step_contact_deriv.c's file comment)
//   dy0 = W (dt r + dJ' lambda),  w = dv + dy0,  dg = dJ v+ + J w + db - dG lambda,  dlambda = solver_jvp,
//   dv+ = w + W J' dlambda,  dvpos (position_jvp),  dq+ = E dq + dt D (dv+ + dvpos)
static physStatus contact_jvp(const physModel* m, physData* d, const contactPoint* cp, const contactDir* x,
                              double* dqn, double* dvn) {
  int n = cp->n, nv = cp->nv;
  double dt = m->opt.timestep;
  const physConstraintProblem* p = &cp->st.p;
  const double* lam = cp->st.sol.lambda;
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
  double* dlp = arena_zeros(d, n);      // dlambda_p (with the margin impacts' terms)
  double* dvpos = arena_zeros(d, nv);
  physStatus st = cp->prod ? PHYS_OK : delassus_jvp(m, d, cp, x, dG);
  if (st == PHYS_OK) st = direction_geometry(m, d, cp, x, dJvp, dJv, ddist, dJtl, dJtlp);
  if (st != PHYS_OK) {
    phys_stack_free(d, mark);
    return st;
  }

  // dy0 = W (dt r + dJ' lambda);  w = dv + dy0
  for (int i = 0; i < nv; i++) dy[i] = (x->r ? dt * x->r[i] : 0) + dJtl[i];
  phys_solve_m(m, cp->L, dy, dy);
  for (int i = 0; i < nv; i++) w[i] = (x->dv ? x->dv[i] : 0) + dy[i];

  // dg = dJ v+ + J w + db - dG lambda
  mul_j(dg, p->J, w, n, nv);
  for (int r = 0; r < n; r++)
    dg[r] += dJvp[r] - (cp->prod ? (x->dGz ? x->dGz[r] : 0) : dotn(dG + (size_t)r * n, lam, n));   // dG z_0 = dG lambda
  bias_jvp(cp, x, dJv, ddist, dt, dg);
  int rigid = cp->prod ? !x->dGz : !x->dq && !x->ydmy && !x->dJmat;   // dG = 0, and the position problem's
                                                                        // data do not move
  st = main_solver_jvp(m, d, cp, x, dg, dG, rigid, dl);

  // dv+ = w + W J' dlambda
  if (st == PHYS_OK) {
    if (x->dln)   // (the angular rows' bounds read it, cpAngular)
      for (int i = 0; i < cp->nc; i++) x->dln[i] = dl[3 * i];
    mul_jt(dvn, p->J, dl, n, nv, 0);
    phys_solve_m(m, cp->L, dvn, dvn);
    for (int i = 0; i < nv; i++) dvn[i] += w[i];
  }

  // dvpos = W (dJ' lpe + J' (dlambda_p + s o dlambda + ds o lambda) - dM~ vpos), dlambda_p = lcp_jvp(beta
  // ddist/dt, dG) (a rigid direction moves vpos only through the margin impacts)
  if (st == PHYS_OK && ((p->npos > 0 && !rigid) || cp->nimp > 0))
    st = position_jvp(m, d, cp, x, rigid, dl, dJv, ddist, dG, dJtlp, dg, dlp, dvpos);

  // dq+ = E dq + dt D (dv+ + dvpos)
  if (st == PHYS_OK) integrate_jvp(m, cp, x, dvn, dvpos, w, dqn);
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
  phys_actuation_deriv(m, d, Fq, Fv, NULL);
  phys_xfrc_deriv(m, d, Fq);
  phys_residual_force_deriv(m, d, Fq, Fv);   // the residual network's force M~ r (none: nothing)
  if (cp->prod) {
    phys_rnea_mass_deriv(m, d, cp->st.vpos, kpos);
    return;
  }
  phys_rnea_deriv(m, d, NULL, D0, NULL, NULL);
  phys_rnea_deriv(m, d, cp->st.vpos, kpos, NULL, NULL);
  for (size_t i = 0; i < nn; i++) kpos[i] -= D0[i];
}

// columns per block of an n x n x B tensor of Delassus mass terms: all ncol if they fit in the model's table
// budget (phys_arena_tables), else as many as do (at least 1); a block's columns are computed as one column
// would be, so the blocking changes the memory, not the arithmetic, and it depends on the model's sizes only
static int block_cols(const physModel* m, int n, int ncol) {
  size_t avail = phys_arena_tables(m), b = avail / ((size_t)n * n + 1);
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
  for (int r = 0; r < n && st == PHYS_OK; r++) {
    if (cp->lcp)   // lcp: on the point's local structure
      phys_solve_lcp_vjp_local(cp->lcp, d, &cp->st.p, &cp->st.sol, E + (size_t)r * n, tb->gv + (size_t)r * n,
                               tb->Gv + r * nn, tb->mv + (size_t)r * nc);
    else
      st = phys_cp_solver_vjp(m, d, cp, E + (size_t)r * n, tb->gv + (size_t)r * n, tb->Gv + r * nn,
                              tb->mv + (size_t)r * nc);
  }
  for (int r = 0; st == PHYS_OK && pos && r < n; r++)
    phys_solve_lcp_vjp_local(cp->lcp_pos, d, &cp->st.pp, &cp->st.sol_pos, E + (size_t)r * n, tb->gp + (size_t)r * n,
                             tb->Gp + r * nn, NULL);
  phys_stack_free(d, mark);
  return st;
}

// every q direction's contact geometry at once (phys_constraint_jacobian_geom), and one direction's column
typedef struct qGeometry_ {
  double* Jb1;   // n x nv: d(J v+)/dq
  double* Jt1;   // nv x nv: d(J' lambda)/dq
  double* Dd;    // n x nv: ddist/dq
  double* Jb2;   // n x nv: d(J v)/dq
  double* Jt2;   // nv x nv: d(J' lpe)/dq (lpe = lambda_p + s o lambda, step_contact_point.h)
  double* geo;   // one direction's columns of the five: 3 n + 2 nv
} qGeometry;

// g's matrices at cp (arena memory of the caller's mark)
static physStatus q_geometry(const physModel* m, physData* d, const contactPoint* cp, qGeometry* g) {
  int n = cp->n, nv = cp->nv;
  size_t nn = (size_t)nv * nv;
  g->Jb1 = phys_stack_alloc(d, (size_t)n * nv + 1);
  g->Jt1 = phys_stack_alloc(d, nn);
  g->Dd = phys_stack_alloc(d, (size_t)n * nv + 1);
  g->Jb2 = phys_stack_alloc(d, (size_t)n * nv + 1);
  g->Jt2 = phys_stack_alloc(d, nn);
  g->geo = phys_stack_alloc(d, 3 * (size_t)n + 2 * (size_t)nv + 1);
  const physConstraintProblem* p = &cp->st.p;
  physStatus st = phys_constraint_jacobian_geom(m, d, p, cp->geom, cp->st.sol.lambda, cp->st.vnew, g->Jb1, g->Jt1,
                                                g->Dd);
  if (st == PHYS_OK)
    st = phys_constraint_jacobian_geom(m, d, p, cp->geom, cp->lpe, d->qvel, g->Jb2, g->Jt2, NULL);
  return st;
}

// x's geometry along q direction jj: column jj of g's five matrices (dJ v+, ddist, dJ v, dJ' lambda,
// dJ' lambda_p) and dM~ vpos = column jj of kpos (into dmv, nv)
static void q_geometry_column(qGeometry* g, const contactPoint* cp, const double* kpos, int jj, double* dmv,
                              contactDir* x) {
  int n = cp->n, nv = cp->nv;
  double *g1 = g->geo, *g2 = g1 + n, *g3 = g2 + n, *g4 = g3 + n, *g5 = g4 + nv;
  for (int r = 0; r < n; r++) {
    g1[r] = g->Jb1[(size_t)r * nv + jj];
    g2[r] = g->Dd[(size_t)r * nv + jj];
    g3[r] = g->Jb2[(size_t)r * nv + jj];
  }
  for (int i = 0; i < nv; i++) {
    g4[i] = g->Jt1[(size_t)i * nv + jj];
    g5[i] = g->Jt2[(size_t)i * nv + jj];
  }
  x->dJvp = g1, x->ddist = g2, x->dJv = g3, x->dJtl = g4, x->dJtlp = g5;
  for (int i = 0; i < nv; i++) dmv[i] = kpos[(size_t)i * nv + jj];
  x->dmvpos = dmv;
}

// products mode in q: every q direction's dG z_k of both problems' vectors (prod_matrix, 3 n x nv each) and Q
// (n x nv, row r the gradient of Y_r' M Y_r), with one direction's dJ, products and diagonal
typedef struct qProducts_ {
  double *Dm, *Dp;   // 3 n x nv: dG z_k (main problem), dG zp_k (position problem; NULL without one)
  double* Q;         // n x nv
  double *dJ, *qd;   // one direction's dJ (n x nv) and column of Q (n)
  double *dGz, *dGzp, *dGd;   // one direction's dG z_k, dG zp_k (3 x n each), dG's diagonal (n)
} qProducts;

// P's matrices at cp (arena memory of the caller's mark). Q only when a problem's solution depends on its row
// scales (a singular clamped system); else 0
static physStatus q_products(const physModel* m, physData* d, const contactPoint* cp, qProducts* P) {
  int n = cp->n, nv = cp->nv;
  physStatus st = PHYS_OK;
  P->Dm = phys_stack_alloc(d, 3 * (size_t)n * nv + 1);
  P->Dp = cp->zp ? phys_stack_alloc(d, 3 * (size_t)n * nv + 1) : NULL;
  P->Q = phys_stack_alloc(d, (size_t)n * nv + 1);
  P->dJ = phys_stack_alloc(d, (size_t)n * nv + 1);
  P->qd = phys_stack_alloc(d, (size_t)n + 1);
  P->dGz = phys_stack_alloc(d, 3 * (size_t)n + 1);
  P->dGzp = phys_stack_alloc(d, 3 * (size_t)n + 1);
  P->dGd = phys_stack_alloc(d, (size_t)n + 1);
  for (int k = 0; k < 3 && st == PHYS_OK; k++) {
    st = prod_matrix(m, d, cp, cp->zv + (size_t)k * n, cp->uv + (size_t)k * nv, P->Dm + k * (size_t)n * nv);
    if (P->Dp && st == PHYS_OK)
      st = prod_matrix(m, d, cp, cp->zp + (size_t)k * n, cp->up + (size_t)k * nv, P->Dp + k * (size_t)n * nv);
  }
  int scaled = phys_solve_lcp_local_scaled(cp->lcp) || (cp->lcp_pos && phys_solve_lcp_local_scaled(cp->lcp_pos));
  memset(P->Q, 0, sizeof(double) * (size_t)n * nv);
  for (int r = 0; r < n && scaled; r++) {
    const double* Yr = cp->Y + (size_t)r * nv;
    phys_rnea_mass_quad_grad(m, d, Yr, P->Q + (size_t)r * nv);
  }
  return st;
}

// x's dG along q direction jj (unit vector e): dG z_k = column jj of Dm (Dp), dG's diagonal from dJ along e and
// column jj of Q (dG_diagonal)
static physStatus q_products_column(const physModel* m, physData* d, const contactPoint* cp, qProducts* P,
                                    const double* e, int jj, contactDir* x) {
  int n = cp->n, nv = cp->nv;
  const physConstraintProblem* p = &cp->st.p;
  physStatus st = cp->geom ? phys_constraint_dJ_geom(m, d, p, cp->geom, e, P->dJ) : phys_constraint_dJ(m, d, p, e, P->dJ);
  if (st != PHYS_OK) return st;
  for (int k = 0; k < 3; k++)
    for (int r = 0; r < n; r++) {
      P->dGz[(size_t)k * n + r] = P->Dm[(k * (size_t)n + r) * nv + jj];
      if (P->Dp) P->dGzp[(size_t)k * n + r] = P->Dp[(k * (size_t)n + r) * nv + jj];
    }
  for (int r = 0; r < n; r++) P->qd[r] = P->Q[(size_t)r * nv + jj];
  dG_diagonal(cp, P->dJ, P->qd, P->dGd);
  x->dGz = P->dGz, x->dGzp = cp->zp ? P->dGzp : NULL, x->dGd = P->dGd;
  return PHYS_OK;
}

// A's 2nv columns (tb may be NULL): column j of (q, v) is contact_jvp along e_j with r = column j of
// df/dq - dtau/dq|a+ (Fq) or df/dv - dtau/dv|a+ (Fv); a q column also carries the geometry (qGeometry) and dM~
// (mass terms Y_r' dM~ Y_c in blocks of columns, or in products mode dG z_k and dG's diagonal: qProducts)
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
  qGeometry g;
  physStatus st = q_geometry(m, d, cp, &g);
  int B = block_cols(m, n, nv), j0 = 0, nb = 0;   // the mass terms of q columns [j0 - nb, j0) in K
  double* K = cp->prod ? NULL : phys_stack_alloc(d, (size_t)n * n * B + 1);
  qProducts P = {0};
  if (cp->prod && st == PHYS_OK) st = q_products(m, d, cp, &P);
  for (int j = 0; j < n2 && st == PHYS_OK; j++) {
    int jj = j < nv ? j : j - nv;
    const double* F = j < nv ? Fq : Fv;
    memset(e, 0, sizeof(double) * (size_t)nv);
    e[jj] = 1;
    for (int i = 0; i < nv; i++) r[i] = F[(size_t)i * nv + jj];
    contactDir x = {0};
    x.r = r;
    x.tab = tb;
    if (cp->ang) {   // the angular rows' moments turn with q (cpAngular)
      x.dln = cp->ang->N0 + (size_t)j * cp->nc;
      for (int i = 0; j < nv && i < nv; i++) r[i] += cp->ang->Fq[(size_t)i * nv + jj];
    }
    if (j < nv) {
      x.dq = e;
      q_geometry_column(&g, cp, kpos, jj, dmv, &x);
      if (cp->prod) {
        st = q_products_column(m, d, cp, &P, e, jj, &x);
        if (st != PHYS_OK) break;
      } else {
        if (jj == j0) {   // the next block of mass terms
          nb = nv - j0 < B ? nv - j0 : B;
          mass_block_q(m, d, cp, D0, j0, nb, K);
          j0 += nb;
        }
        k_column(K, n, nb, jj - (j0 - nb), ydmy);
        x.ydmy = ydmy;
      }
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
  phys_actuation_deriv(m, d, NULL, NULL, Fu);
  physStatus st = PHYS_OK;
  for (int j = 0; j < nu && st == PHYS_OK; j++) {
    for (int i = 0; i < nv; i++) r[i] = Fu[(size_t)i * nu + j];
    contactDir x = {0};
    x.r = r;
    x.tab = tb;
    x.dln = cp->ang ? cp->ang->N0 + (size_t)j * cp->nc : NULL;
    st = contact_jvp(m, d, cp, &x, dqn, dvn);
    if (st == PHYS_OK) put_column(B, nv, nu, j, dqn, dvn);
  }
  phys_stack_free(d, mark);
  return st;
}

// the contact geometry along component k of pos:BODY or height:GEOM entry pr into x (dJmat and the five
// products; arena memory of the caller's mark): the body's subtree translates by column k of its parent's
// rotation, a plane along its normal
static physStatus pos_geometry(const physModel* m, physData* d, const contactPoint* cp, const physParam* pr, int k,
                               contactDir* x) {
  int n = cp->n, nv = cp->nv;
  if (!cp->geom) return PHYS_ERR_ARG;   // a pair without geometry derivatives (message in d->lastwarning)
  double* dJ = phys_stack_alloc(d, (size_t)n * nv + 1);
  double* dd = phys_stack_alloc(d, (size_t)n + 1);
  double* jvp = phys_stack_alloc(d, (size_t)n + 1);
  double* jv = phys_stack_alloc(d, (size_t)n + 1);
  double* jtl = phys_stack_alloc(d, (size_t)nv);
  double* jtlp = phys_stack_alloc(d, (size_t)nv);
  physStatus st = phys_constraint_place_dJ(m, d, &cp->st.p, cp->geom, pr, k, dJ, dd);
  if (st != PHYS_OK) return st;
  mul_j(jvp, dJ, cp->st.vnew, n, nv);
  mul_j(jv, dJ, d->qvel, n, nv);
  mul_jt(jtl, dJ, cp->st.sol.lambda, n, nv, 0);
  mul_jt(jtlp, dJ, cp->lpe, n, nv, 0);
  x->dJmat = dJ, x->ddist = dd, x->dJvp = jvp, x->dJv = jv, x->dJtl = jtl, x->dJtlp = jtlp;
  return PHYS_OK;
}

// products mode in theta: (R(u_k) - R0) of both problems' vectors (3 nv x nt each), QP (n x nt, row r
// Y_r' (R(Y_r) - R0)), with one column's dM~ u_k, products and diagonal
typedef struct pProducts_ {
  double *Ru, *Rup;            // 3 nv x nt: dM~ u_k per theta (main problem), dM~ up_k (NULL without position)
  double* QP;                  // n x nt
  double *dmu_k, *dmup, *qd;   // one column's dM~ u_k, dM~ up_k (3 x nv each) and column of QP (n)
  double *dGz, *dGzp, *dGd, *tmp;   // its dG z_k, dG zp_k (3 x n each), dG's diagonal (n); scratch (nv)
} pProducts;

// P's matrices at cp (arena memory of the caller's mark): dM~ x = (R(x) - R(0)) dtheta (params.h), R0 = R(0)
static void p_products(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                       const double* R0, pProducts* P) {
  int n = cp->n, nv = cp->nv, nt = t->ntheta;
  size_t nr = (size_t)nv * nt;
  P->Ru = phys_stack_alloc(d, 3 * nr);
  P->Rup = cp->zp ? phys_stack_alloc(d, 3 * nr) : NULL;
  P->QP = arena_zeros(d, n * nt);
  P->dmu_k = phys_stack_alloc(d, 3 * (size_t)nv);
  P->dmup = phys_stack_alloc(d, 3 * (size_t)nv);
  P->qd = phys_stack_alloc(d, (size_t)n + 1);
  P->dGz = phys_stack_alloc(d, 3 * (size_t)n + 1);
  P->dGzp = phys_stack_alloc(d, 3 * (size_t)n + 1);
  P->dGd = phys_stack_alloc(d, (size_t)n + 1);
  P->tmp = phys_stack_alloc(d, (size_t)nv);
  for (int k = 0; k < 3; k++) {
    phys_param_forces(m, d, t, cp->uv + (size_t)k * nv, P->Ru + k * nr);
    for (size_t i = 0; i < nr; i++) P->Ru[k * nr + i] -= R0[i];
    if (!P->Rup) continue;
    phys_param_forces(m, d, t, cp->up + (size_t)k * nv, P->Rup + k * nr);
    for (size_t i = 0; i < nr; i++) P->Rup[k * nr + i] -= R0[i];
  }
  double* Rc = phys_stack_alloc(d, nr);
  for (int r = 0; r < n; r++) {
    const double* Yr = cp->Y + (size_t)r * nv;
    phys_param_forces(m, d, t, Yr, Rc);
    for (int i = 0; i < nv; i++)
      if (Yr[i] != 0)
        for (int j = 0; j < nt; j++) P->QP[(size_t)r * nt + j] += Yr[i] * (Rc[(size_t)i * nt + j] - R0[(size_t)i * nt + j]);
  }
}

// x's dG along theta column j: dG = dJ Y' + Y dJ' - Y dM~ Y' through products (dG_products) and its diagonal
static void p_products_column(const contactPoint* cp, pProducts* P, int j, int nt, contactDir* x) {
  int n = cp->n, nv = cp->nv;
  size_t nr = (size_t)nv * nt;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < nv; i++) {
      P->dmu_k[(size_t)k * nv + i] = P->Ru[k * nr + (size_t)i * nt + j];
      if (P->Rup) P->dmup[(size_t)k * nv + i] = P->Rup[k * nr + (size_t)i * nt + j];
    }
  for (int r = 0; r < n; r++) P->qd[r] = P->QP[(size_t)r * nt + j];
  dG_products(cp, x->dJmat, cp->zv, cp->uv, P->dmu_k, P->dGz, P->tmp);
  if (cp->zp) dG_products(cp, x->dJmat, cp->zp, cp->up, P->dmup, P->dGzp, P->tmp);
  dG_diagonal(cp, x->dJmat, P->qd, P->dGd);
  x->dGz = P->dGz, x->dGzp = cp->zp ? P->dGzp : NULL, x->dGd = P->dGd;
}

// x's dmu, deps of a friction or restitution entry pr: 1 on the contacts whose material moves with it
// (phys_contact_material_moves), else 0 (dmu, deps: nc each)
static void material_direction(const physModel* m, const contactPoint* cp, const physParam* pr,
                               double* dmu, double* deps, contactDir* x) {
  int rest = pr->kind == PHYS_PAR_RESTITUTION;
  for (int i = 0; i < cp->nc; i++) {
    int s = phys_contact_material_moves(m, cp->st.p.con + i, pr->id, rest);
    dmu[i] = !rest && s ? 1 : 0;
    deps[i] = rest && s ? 1 : 0;
  }
  x->dmu = dmu;
  x->deps = deps;
}

// P's columns but the sizes' (*nsize: their count): column j is contact_jvp with r = -R(a+) e_j, dM~ vpos =
// (R(vpos) - R0) e_j, the mass terms (blocks of Y_r' dM~ Y_c, or products mode: pProducts), dmu and deps of a
// material entry, the geometry of a pos:BODY entry (pos_geometry)
static physStatus jacobian_p(const physModel* m, physData* d, const contactPoint* cp, const physParamTable* t,
                             const solverTable* tb, double* P, int* nsize) {
  if (phys_tendon_rows_param_check(m, d, &cp->st.p, t) != PHYS_OK) return PHYS_ERR_ARG;   // (tendon_rows_deriv.h)
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
  if (phys_friction_in_table(t))   // (frictionloss: sliding rows' constant forces, frictionloss_deriv.h)
    phys_friction_param_columns(m, phys_friction_point_sliding(m, d, &cp->st.fr), t, cp->st.vnew, Ra);
  phys_param_forces(m, d, t, zero, R0);
  phys_param_forces(m, d, t, cp->st.vpos, Rp);
  int B = block_cols(m, n, nt), j0 = 0, nb = 0;   // the mass terms of theta columns [j0 - nb, j0) in K
  double* K = cp->prod ? NULL : phys_stack_alloc(d, (size_t)n * n * B + 1);
  pProducts pp = {0};
  if (cp->prod) p_products(m, d, cp, t, R0, &pp);
  physStatus st = PHYS_OK;
  *nsize = 0;
  for (int e = 0; e < t->n && st == PHYS_OK; e++) {
    const physParam* pr = t->param + e;
    if (pr->kind == PHYS_PAR_SIZE || pr->kind == PHYS_PAR_VERTICES) (*nsize)++;
    for (int j = pr->adr; j < pr->adr + pr->size && st == PHYS_OK; j++) {
      if (j == j0 && !cp->prod) {   // the next block of mass terms (columns in table order)
        nb = nt - j0 < B ? nt - j0 : B;
        mass_block_p(m, d, cp, t, R0, j0, nb, K);
        j0 += nb;
      }
      if (pr->kind == PHYS_PAR_SIZE || pr->kind == PHYS_PAR_VERTICES) continue;   // the caller's reverse passes
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
      if (cp->ang) {   // (cpAngular: the rows of coefficient 0's one-sided forces, the columns' dlambda_n)
        x.dln = cp->ang->N0 + (size_t)j * nc;
        for (int i = 0; cp->ang->Fp && i < nv; i++) r[i] += cp->ang->Fp[(size_t)i * nt + j];
      }
      x.dmvpos = cp->st.p.npos > 0 || cp->nimp > 0 ? dmv : NULL;
      if (pr->kind == PHYS_PAR_FRICTION || pr->kind == PHYS_PAR_RESTITUTION) material_direction(m, cp, pr, dmu, deps, &x);
      if (pr->kind == PHYS_PAR_GRAVITY) {
        double dg[3];
        phys_toi_hold_speed_grad(m, dg);
        x.dhold = dg[j - pr->adr];
      }
      size_t cmark = phys_stack_mark(d);   // the column's geometry (pos) lives until its column is written
      if ((pr->kind == PHYS_PAR_POS || pr->kind == PHYS_PAR_HEIGHT) && nc > 0)
        st = pos_geometry(m, d, cp, pr, j - pr->adr, &x);
      if (st == PHYS_OK && cp->prod) p_products_column(cp, &pp, j, nt, &x);
      if (st == PHYS_OK) st = contact_jvp(m, d, cp, &x, dqn, dvn);
      if (st == PHYS_OK) put_column(P, nv, nt, j, dqn, dvn);
      phys_stack_free(d, cmark);
    }
  }
  phys_stack_free(d, mark);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// sticking frictionloss rows (step_contact_point.h cpStick)

// (step_contact_point.h)
int phys_cp_trunc_inverse(const double* H, int n, double* Hi, double* A, int* piv, double* b) {
  int *rp = piv, *cq = piv + n, r = 0;
  double big = 0;
  memcpy(A, H, sizeof(double) * (size_t)n * n);
  for (int i = 0; i < n * n; i++) big = fmax(big, fabs(H[i]));
  for (int i = 0; i < n; i++) rp[i] = cq[i] = i;
  for (r = 0; r < n; r++) {
    int bi = r, bj = r;
    for (int i = r; i < n; i++)
      for (int j = r; j < n; j++)
        if (fabs(A[i * n + j]) > fabs(A[bi * n + bj])) bi = i, bj = j;
    if (!(fabs(A[bi * n + bj]) > 1e-12 * big)) break;
    for (int j = 0; j < n; j++) {   // rows r <-> bi, columns r <-> bj
      double t = A[r * n + j];
      A[r * n + j] = A[bi * n + j], A[bi * n + j] = t;
    }
    for (int i = 0; i < n; i++) {
      double t = A[i * n + r];
      A[i * n + r] = A[i * n + bj], A[i * n + bj] = t;
    }
    int t = rp[r];
    rp[r] = rp[bi], rp[bi] = t;
    t = cq[r], cq[r] = cq[bj], cq[bj] = t;
    for (int i = r + 1; i < n; i++) {
      double l = A[i * n + r] /= A[r * n + r];
      for (int j = r + 1; j < n; j++) A[i * n + j] -= l * A[r * n + j];
    }
  }
  for (int c = 0; c < n; c++) {   // column c of Hi: H x = e_c on the first r pivots
    for (int i = 0; i < n; i++) b[i] = rp[i] == c ? 1 : 0;
    for (int i = 0; i < r; i++)
      for (int j = 0; j < i; j++) b[i] -= A[i * n + j] * b[j];
    for (int i = r - 1; i >= 0; i--) {
      for (int j = i + 1; j < r; j++) b[i] -= A[i * n + j] * b[j];
      b[i] /= A[i * n + i];
    }
    for (int i = 0; i < n; i++) Hi[(size_t)cq[i] * n + c] = i < r ? b[i] : 0;
  }
  return r;
}

physStatus phys_cp_stick_build(const physModel* m, physData* d, const contactPoint* cp, const void* tab,
                               cpStick* sf) {
  const physFrictionRows* fr = &cp->st.fr;
  int nv = cp->nv, ns = 0;
  memset(sf, 0, sizeof(*sf));
  for (int i = 0; i < fr->nf; i++) ns += fr->state[i] == PHYS_ROW_CLAMPING;
  if (ns == 0) return PHYS_OK;
  sf->dof = arena_ints(d, ns);
  sf->T = phys_stack_alloc(d, 2 * (size_t)nv * ns);
  sf->Hi = phys_stack_alloc(d, (size_t)ns * ns);
  for (int i = 0; i < fr->nf; i++)
    if (fr->state[i] == PHYS_ROW_CLAMPING) sf->dof[sf->ns++] = fr->dof[i];
  size_t mark = phys_stack_mark(d);
  double* r = arena_zeros(d, nv);
  double* dqn = phys_stack_alloc(d, (size_t)nv);
  double* dvn = phys_stack_alloc(d, (size_t)nv);
  double* H = phys_stack_alloc(d, (size_t)ns * ns);
  double* A = phys_stack_alloc(d, (size_t)ns * ns);
  double* b = phys_stack_alloc(d, (size_t)ns);
  int* piv = arena_ints(d, 2 * ns);
  physStatus st = PHYS_OK;
  for (int a = 0; a < ns && st == PHYS_OK; a++) {   // T's column a: the step along the force e_dof
    contactDir x = {0};
    r[sf->dof[a]] = 1;
    x.r = r;
    x.tab = (const solverTable*)tab;
    st = contact_jvp(m, d, cp, &x, dqn, dvn);
    r[sf->dof[a]] = 0;
    put_column(sf->T, nv, ns, a, dqn, dvn);
  }
  if (st == PHYS_OK) {
    for (int a = 0; a < ns; a++)
      for (int c = 0; c < ns; c++) H[a * ns + c] = sf->T[(size_t)(nv + sf->dof[a]) * ns + c];
    sf->full = phys_cp_trunc_inverse(H, ns, sf->Hi, A, piv, b) == ns;
  }
  phys_stack_free(d, mark);
  return st;
}

// y = Hi z (transpose 0) or Hi' z (1), ns each
static void hi_apply(const cpStick* sf, const double* z, double* y, int transpose) {
  int ns = sf->ns;
  for (int a = 0; a < ns; a++) {
    double s = 0;
    for (int c = 0; c < ns; c++) s += (transpose ? sf->Hi[(size_t)c * ns + a] : sf->Hi[(size_t)a * ns + c]) * z[c];
    y[a] = s;
  }
}

void phys_cp_stick_columns(physData* d, const cpStick* sf, int nv, double* X, int ncol) {
  int ns = sf->ns, n2 = 2 * nv;
  if (ns == 0 || !X) return;
  size_t mark = phys_stack_mark(d);
  double* z = phys_stack_alloc(d, (size_t)ns);
  double* y = phys_stack_alloc(d, (size_t)ns);
  for (int c = 0; c < ncol; c++) {
    for (int a = 0; a < ns; a++) z[a] = X[(size_t)(nv + sf->dof[a]) * ncol + c];
    hi_apply(sf, z, y, 0);
    for (int i = 0; i < n2; i++) X[(size_t)i * ncol + c] -= dotn(sf->T + (size_t)i * ns, y, ns);
    if (sf->full)   // (exactly: E_S' (I - T H^-1 E_S') = 0, the step's own v+_S = 0)
      for (int a = 0; a < ns; a++) X[(size_t)(nv + sf->dof[a]) * ncol + c] = 0;
  }
  phys_stack_free(d, mark);
}

void phys_cp_stick_adjoint(physData* d, const cpStick* sf, int nv, double* xb) {
  int ns = sf->ns, n2 = 2 * nv;
  if (ns == 0) return;
  size_t mark = phys_stack_mark(d);
  double* z = arena_zeros(d, ns);
  double* y = phys_stack_alloc(d, (size_t)ns);
  if (sf->full)   // (the transpose of the JVP's exact zeros)
    for (int a = 0; a < ns; a++) xb[nv + sf->dof[a]] = 0;
  for (int i = 0; i < n2; i++)
    for (int a = 0; a < ns; a++) z[a] += sf->T[(size_t)i * ns + a] * xb[i];
  hi_apply(sf, z, y, 1);
  for (int a = 0; a < ns; a++) xb[nv + sf->dof[a]] -= y[a];
  phys_stack_free(d, mark);
}

physStatus phys_cp_force_jvp(const physModel* m, physData* d, const contactPoint* cp, const void* tab,
                             const double* r, double* dqn, double* dvn, double* dln) {
  contactDir x = {0};
  x.r = r;
  x.tab = (const solverTable*)tab;
  x.dln = dln;
  return contact_jvp(m, d, cp, &x, dqn, dvn);
}

// F's nv columns (2nv x nv): the step along the force e_j, its dlambda_n into the angular rows' N0
static physStatus jacobian_f(const physModel* m, physData* d, const contactPoint* cp, const solverTable* tb,
                             double* F) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* r = arena_zeros(d, nv);
  double* dqn = phys_stack_alloc(d, (size_t)nv);
  double* dvn = phys_stack_alloc(d, (size_t)nv);
  physStatus st = PHYS_OK;
  for (int j = 0; j < nv && st == PHYS_OK; j++) {
    r[j] = 1;
    st = phys_cp_force_jvp(m, d, cp, tb, r, dqn, dvn, cp->ang ? cp->ang->N0 + (size_t)j * cp->nc : NULL);
    r[j] = 0;
    if (st == PHYS_OK) put_column(F, nv, nv, j, dqn, dvn);
  }
  phys_stack_free(d, mark);
  return st;
}

// the angular rows' terms of a Jacobian call into *ca, cp->ang = ca (none: cp->ang NULL); c0p (P's constants)
static physStatus angular_setup(const physModel* m, physData* d, contactPoint* cp, const solverTable* tb,
                                const physParamTable* t, int ncol, cpAngular* ca, double** c0p) {
  cp->ang = NULL;
  *c0p = NULL;
  const physFrictionRows* fr = &cp->st.fr;
  if (fr->nfa == 0 && fr->nf == fr->nfd) return PHYS_OK;   // (tendon rows join the unknowns too)
  physStatus st = phys_cp_angular_build(m, d, cp, tb, ca);
  cp->ang = ca;
  ca->N0 = phys_stack_alloc(d, (size_t)cp->nc * ncol + 1);
  ca->Fp = NULL;
  if (st != PHYS_OK || !t || t->ntheta == 0) return st;
  *c0p = phys_stack_alloc(d, (size_t)ca->nz * t->ntheta + 1);
  ca->Fp = phys_stack_alloc(d, (size_t)m->nv * t->ntheta);
  return phys_cp_angular_param(m, d, cp, ca, t, *c0p, ca->Fp);
}

physStatus phys_cp_jacobian_force(const physModel* m, physData* d, physConstrainedPoint* cpp,
                                  const physParamTable* t, double* A, double* B, double* P, double* F) {
  size_t mark = phys_stack_mark(d);
  contactPoint cp = *cpp;   // (the directions' structures below are this call's)
  physStatus st = PHYS_OK;
  int nsize = 0, nv = m->nv, nt = P && t ? t->ntheta : 0;
  // the contacts' geometry derivatives once for every direction; lcp's local structures are the point's
  // (built by the linearization), with the products' constants for this call
  physStatus gst;
  cp.geom = phys_constraint_geom(m, d, &cp.st.p, &gst);
  cp.prod = cp.lcp != NULL && cp.n > 0;
  if (cp.prod) {
    cp.lcp = phys_solve_lcp_local_prod(d, cp.lcp);
    if (cp.lcp_pos) cp.lcp_pos = phys_solve_lcp_local_prod(d, cp.lcp_pos);
    prod_vectors(d, &cp);
  }
  // the solvers' tables when there are more directions than 2n reverse passes
  int ndir = (A ? 2 * nv : 0) + (B ? m->nu : 0) + nt + (F ? nv : 0);
  solverTable tab, *tb = NULL;
  size_t ntab = 2 * (size_t)cp.n * cp.n * (cp.n + 1) + (size_t)cp.n * (cp.nc + 1);
  // (lcp: its JVP from the local structure built once is cheaper than the n^3 tables per direction). The
  // choice depends on the problem and the model's table budget (phys_arena_tables), never on the arena's free
  // space: the same state gives the same arithmetic in any caller
  if (m->opt.contact != PHYS_CONTACT_LCP && ndir > 2 * cp.n && ntab <= phys_arena_tables(m)) {
    st = solver_tables(m, d, &cp, &tab);
    tb = &tab;
  } else if (cp.ccp && ndir > 0) {   // cone, ccp without tables: every direction forward on one forward factor
    cp.ccp = phys_solve_ccp_local_forward(d, cp.ccp);
  }
  // torsional and rolling friction rows: their impulses follow (cpAngular), each matrix corrected once built
  cpAngular ca;
  double* c0p = NULL;
  int ncol = 2 * nv > m->nu ? 2 * nv : m->nu;
  if (st == PHYS_OK) st = angular_setup(m, d, &cp, tb, nt > 0 ? t : NULL, ncol > nt ? ncol : nt, &ca, &c0p);
  if (A && st == PHYS_OK) st = jacobian_a(m, d, &cp, tb, A);
  if (A && cp.ang && st == PHYS_OK) phys_cp_angular_columns(d, &cp, &ca, A, 2 * nv, ca.C0q, nv);
  if (B && m->nu > 0 && st == PHYS_OK) st = jacobian_b(m, d, &cp, tb, B);
  if (B && m->nu > 0 && cp.ang && st == PHYS_OK) phys_cp_angular_columns(d, &cp, &ca, B, m->nu, NULL, 0);
  if (nt > 0 && st == PHYS_OK) st = jacobian_p(m, d, &cp, t, tb, P, &nsize);
  if (nt > 0 && cp.ang && st == PHYS_OK) phys_cp_angular_columns(d, &cp, &ca, P, nt, c0p, nt);
  if (F && cp.ang && st == PHYS_OK) st = jacobian_f(m, d, &cp, tb, F);
  if (F && cp.ang && st == PHYS_OK) phys_cp_angular_columns(d, &cp, &ca, F, nv, NULL, 0);
  // sticking frictionloss rows: their forces follow (cpStick); P's size columns come from the reverse passes,
  // which make the same correction
  cpStick sf = {0};
  if (st == PHYS_OK && !cp.ang) st = phys_cp_stick_build(m, d, &cp, tb, &sf);
  if (st == PHYS_OK && sf.ns > 0) {
    phys_cp_stick_columns(d, &sf, nv, A, 2 * nv);
    if (m->nu > 0) phys_cp_stick_columns(d, &sf, nv, B, m->nu);
    if (nt > 0) phys_cp_stick_columns(d, &sf, nv, P, nt);
  }
  if (st == PHYS_ERR_NUMERIC)
    phys_data_warning(d, "phys_step_jacobian: constraint solver derivative failed at time %g", d->time);
  phys_stack_free(d, mark);
  if (nsize > 0 && st == PHYS_OK) st = phys_cp_size_rows(m, d, cpp, t, P);   // the size columns by reverse passes
  return st;
}

physStatus phys_constrained_jacobian_at(const physModel* m, physData* d, physConstrainedPoint* cpp,
                                        const physParamTable* t, double* A, double* B, double* P) {
  return phys_cp_jacobian_force(m, d, cpp, t, A, B, P, NULL);
}

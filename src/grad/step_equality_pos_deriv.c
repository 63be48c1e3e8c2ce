// step_equality_pos_deriv.c - the position correction's derivative with equality rows (step_equality_pos_deriv.h)
// (includes step_contact_point.h for the position update's SO(3) blocks, shared with the constrained step)
#include "equality_deriv.h"
#include "step_contact_point.h"
#include "step_equality_pos_deriv.h"

struct physEqualityPos_ {
  int nv, n, na, nr, ne;        // dofs, the problem's rows, C's rows (nr contact or limit rows, then ne J_e rows)
  const physConstraintProblem* p;   // Phi's problem (the geometry's derivatives; gpos with the kink rows)
  const double* L;              // M~'s factor
  int* rows;                    // nr: C's contact and limit rows (indices into p)
  double *C, *WC, *Kp;          // na x nv, nv x na (W C'), na x na (K^+)
  double *y, *x;                // na, nv: the multipliers and vpos
  int* rot;                     // nv: rotation group of each dof, -1 scalar
  double *Jr, *Et;              // 9 per rotation group at phi = dt vsum
};

static physStatus refuse(physData* d, const char* what) {
  phys_data_warning(d, "phys_step derivatives: equality constraints with a contact or limit under position "
                    "correction together with %s are not supported yet", what);
  return PHYS_ERR_MODEL;
}

// the clamped rows of the position problem in the constrained mechanism: p with the rows er eliminated, gpos as
// p's (kink rows included), friction 0, solved by lcp; rows[] the clamped normal and limit rows, returns their
// count (scratch above the caller's mark)
static int clamped_rows(const physModel* m, physData* d, const physConstraintProblem* p, const physEqualityRows* er,
                        int* rows) {
  int n = p->n, nr = 0;
  physConstraintProblem pp = *p;
  phys_equality_eliminate(m, d, er, d->qvel, &pp);
  double* mu0 = phys_stack_alloc(d, (size_t)p->nc + 1);
  int* warm = (int*)phys_stack_alloc(d, (size_t)n + 1);
  physConstraintSolution sol;
  memset(&sol, 0, sizeof(sol));
  sol.lambda = phys_stack_alloc(d, (size_t)n + 1);
  sol.state = (int*)phys_stack_alloc(d, (size_t)n + 1);
  memset(mu0, 0, sizeof(double) * ((size_t)p->nc + 1));
  memset(sol.lambda, 0, sizeof(double) * ((size_t)n + 1));
  memset(sol.state, 0, sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++) warm[i] = pp.gpos[i] < 0 ? PHYS_ROW_CLAMPING : PHYS_ROW_SEPARATING;
  pp.g = pp.gpos, pp.mu = mu0, pp.warm = warm, pp.lambda0 = NULL;
  phys_solve_lcp(m, d, &pp, &sol);
  for (int r = 0; r < n; r++)
    if ((r >= 3 * p->nc || r % 3 == 0) && sol.state[r] == PHYS_ROW_CLAMPING) rows[nr++] = r;
  return nr;
}

// C, W C', K^+, y = K^+ b and x = W C' y of ps (rows and the equality rows er set)
static void kkt_point(const physModel* m, physData* d, const physEqualityRows* er, physEqualityPos* ps) {
  int nv = ps->nv, na = ps->na, nr = ps->nr;
  ps->C = phys_stack_alloc(d, (size_t)na * nv + 1);
  ps->WC = phys_stack_alloc(d, (size_t)nv * na + 1);
  ps->Kp = phys_stack_alloc(d, (size_t)na * na + 1);
  ps->y = phys_stack_alloc(d, (size_t)na + 1);
  ps->x = phys_stack_alloc(d, (size_t)nv);
  for (int a = 0; a < na; a++) {
    const double* row = a < nr ? ps->p->J + (size_t)ps->rows[a] * nv : er->J + (size_t)(a - nr) * nv;
    memcpy(ps->C + (size_t)a * nv, row, sizeof(double) * (size_t)nv);
  }
  size_t mark = phys_stack_mark(d);
  double* col = phys_stack_alloc(d, (size_t)nv);
  double* K = phys_stack_alloc(d, (size_t)na * na + 1);
  double* b = phys_stack_alloc(d, (size_t)na + 1);
  for (int a = 0; a < na; a++) {
    phys_solve_m(m, ps->L, col, ps->C + (size_t)a * nv);
    for (int k = 0; k < nv; k++) ps->WC[(size_t)k * na + a] = col[k];
    // b = -gpos on the clamped rows (gpos = beta min(dist + slop, 0)/dt, 0 if not penetrating), 0 on J_e's
    b[a] = a < nr ? -ps->p->gpos[ps->rows[a]] : 0;
  }
  for (int a = 0; a < na; a++)   // K = C W C', exactly symmetric
    for (int c = 0; c <= a; c++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += ps->C[(size_t)a * nv + k] * ps->WC[(size_t)k * na + c];
      K[(size_t)a * na + c] = K[(size_t)c * na + a] = s;
    }
  phys_lcp_pinv(ps->Kp, d, K, na);
  for (int a = 0; a < na; a++) {
    double s = 0;
    for (int c = 0; c < na; c++) s += ps->Kp[(size_t)a * na + c] * b[c];
    ps->y[a] = s;
  }
  for (int k = 0; k < nv; k++) {
    double s = 0;
    for (int a = 0; a < na; a++) s += ps->WC[(size_t)k * na + a] * ps->y[a];
    ps->x[k] = s;
  }
  phys_stack_free(d, mark);
}

physStatus phys_equality_pos_build(const physModel* m, physData* d, const physConstrainedPoint* cp,
                                   const double* vsum, physEqualityPos** out) {
  int nimp = 0, nv = m->nv;
  const physConstraintProblem* p = phys_constrained_problem(cp, &nimp);
  *out = NULL;
  if (p->npos == 0) return PHYS_OK;
  if (nimp > 0) return refuse(d, "a margin impact (its time-of-impact displacement)");
  physEqualityPos* ps = (physEqualityPos*)phys_stack_alloc(d, (sizeof(physEqualityPos) + 7) / 8);
  ps->nv = nv, ps->n = p->n, ps->p = p;
  ps->L = phys_constrained_factor(cp);
  physEqualityRows er;
  phys_equality_assemble(m, d, ps->L, &er);
  ps->ne = er.ne;
  ps->rows = (int*)phys_stack_alloc(d, (size_t)p->n / 2 + 1);
  size_t mark = phys_stack_mark(d);
  ps->nr = clamped_rows(m, d, p, &er, ps->rows);
  phys_stack_free(d, mark);
  ps->na = ps->nr + ps->ne;
  kkt_point(m, d, &er, ps);
  ps->rot = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  ps->Jr = phys_stack_alloc(d, 9 * (size_t)nv);
  ps->Et = phys_stack_alloc(d, 9 * (size_t)nv);
  phys_cp_tangent_blocks(m, vsum, ps->rot, ps->Jr, ps->Et);
  *out = ps;
  return PHYS_OK;
}

const double* phys_equality_pos_vpos(const physEqualityPos* ps) { return ps->x; }

// theta_bar += the parameter part of the reverse mode: -s' (dM~/dtheta) x = -(R(x) - R(0))' s, and the polycoef
// rows' dJ_e/dtheta (y_e s - z_e x)
static physStatus theta_part(const physModel* m, physData* d, const physEqualityPos* ps, const physParamTable* t,
                             const double* z, const double* s, double* theta_bar) {
  int nv = ps->nv, nt = t->ntheta;
  for (int e = 0; e < t->n; e++) {
    int k = t->param[e].kind;
    if (k == PHYS_PAR_SIZE || k == PHYS_PAR_POS || k == PHYS_PAR_VERTICES || k == PHYS_PAR_HEIGHT)
      return refuse(d, "parameters that move the geometry (size, pos, vertices, height)");
  }
  size_t mark = phys_stack_mark(d);
  double* t1 = phys_stack_alloc(d, (size_t)nt + 1);
  double* t0 = phys_stack_alloc(d, (size_t)nt + 1);
  double* zero = phys_stack_alloc(d, (size_t)nv);
  double* dJ = phys_stack_alloc(d, (size_t)nv);
  memset(zero, 0, sizeof(double) * (size_t)nv);
  phys_param_forces_vjp(m, d, t, ps->x, s, t1);
  phys_param_forces_vjp(m, d, t, zero, s, t0);
  for (int j = 0; j < nt; j++) theta_bar[j] += t1[j] - t0[j];
  for (int e = 0; e < t->n; e++) {
    const physParam* q = t->param + e;
    for (int c = 0; q->kind == PHYS_PAR_POLYCOEF && c < 5; c++) {
      double dr, acc = 0;
      int row = phys_equality_polycoef_deriv(m, d, q->id, c, &dr, dJ);
      if (row < 0) continue;
      int a = ps->nr + row;
      for (int k = 0; k < nv; k++) acc += dJ[k] * (ps->y[a] * s[k] - z[a] * ps->x[k]);
      theta_bar[q->adr + c] += acc;
    }
  }
  phys_stack_free(d, mark);
  return PHYS_OK;
}

// qbar += the configuration part: z' db - z' dC x + y' dC s - s' dM~ x (header comment)
static physStatus q_part(const physModel* m, physData* d, const physEqualityPos* ps, const double* z,
                         const double* s, double* qbar) {
  int nv = ps->nv, n = ps->n, nr = ps->nr, ne = ps->ne;
  double beta_dt = m->opt.baumgarte / m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* W = phys_stack_alloc(d, (size_t)n * nv + 1);
  double* gam = phys_stack_alloc(d, (size_t)n + 1);
  double* B = phys_stack_alloc(d, (size_t)ne * nv + 1);
  double* g = phys_stack_alloc(d, (size_t)nv);
  memset(W, 0, sizeof(double) * ((size_t)n * nv + 1));
  memset(gam, 0, sizeof(double) * ((size_t)n + 1));
  for (int a = 0; a < nr; a++) {   // the contact and limit rows: <-z x' + y s', J> and -beta/dt z' dist
    int r = ps->rows[a];
    for (int k = 0; k < nv; k++) W[(size_t)r * nv + k] = -z[a] * ps->x[k] + ps->y[a] * s[k];
    if (ps->p->gpos[r] < 0) gam[r] = -beta_dt * z[a];
  }
  physStatus st = phys_constraint_vjp_matrix(m, d, ps->p, W, gam, qbar);
  for (int i = 0; i < ne; i++)   // the equality rows: <-z_e x' + y_e s', J_e>
    for (int k = 0; k < nv; k++) B[(size_t)i * nv + k] = -z[nr + i] * ps->x[k] + ps->y[nr + i] * s[k];
  if (ne > 0) {
    phys_equality_curvature_w(m, d, B, g);
    for (int k = 0; k < nv; k++) qbar[k] += g[k];
  }
  phys_rnea_mass_vjp(m, d, ps->x, s, g);   // d(s' M(q) x)/dq
  for (int k = 0; k < nv; k++) qbar[k] -= g[k];
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_equality_pos_vjp(const physModel* m, physData* d, const physEqualityPos* ps, const physParamTable* t,
                                 const double* qbar_next, double* vbar_add, double* qbar, double* theta_bar) {
  int nv = ps->nv, na = ps->na;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* wb = phys_stack_alloc(d, (size_t)nv);
  double* s = phys_stack_alloc(d, (size_t)nv);
  double* qb = phys_stack_alloc(d, (size_t)nv);
  double* cw = phys_stack_alloc(d, (size_t)na + 1);
  double* z = phys_stack_alloc(d, (size_t)na + 1);
  // the position update q+ = q (+) dt (v+ + vpos): wbar = dt D' qbar+ goes to v+ and vpos, E' qbar+ to q
  apply_blocks(m, ps->rot, ps->Jr, qbar_next, wb, 1);
  for (int k = 0; k < nv; k++) vbar_add[k] = wb[k] *= dt;
  // z = K^+ C W wbar, s = W wbar - W C' z
  for (int a = 0; a < na; a++) {
    double acc = 0;
    for (int k = 0; k < nv; k++) acc += ps->WC[(size_t)k * na + a] * wb[k];
    cw[a] = acc;
  }
  for (int a = 0; a < na; a++) {
    double acc = 0;
    for (int c = 0; c < na; c++) acc += ps->Kp[(size_t)a * na + c] * cw[c];
    z[a] = acc;
  }
  phys_solve_m(m, ps->L, s, wb);
  for (int k = 0; k < nv; k++)
    for (int a = 0; a < na; a++) s[k] -= ps->WC[(size_t)k * na + a] * z[a];
  physStatus st = PHYS_OK;
  if (qbar) {
    apply_blocks(m, ps->rot, ps->Et, qbar_next, qb, 1);
    for (int k = 0; k < nv; k++) qbar[k] += qb[k];
    st = q_part(m, d, ps, z, s, qbar);
  }
  if (st == PHYS_OK && theta_bar && t) st = theta_part(m, d, ps, t, z, s, theta_bar);
  phys_stack_free(d, mark);
  return st;
}

// assemble.c - the constraint problem of one step: Jacobian J of the contact and joint-limit rows, the
// Delassus matrix G = J M~^-1 J' and the free row velocity g = J v_f + b (contact.h, DESIGN.md section 4).
//
// Rows. Contact i (normal n pointing from geom[0] to geom[1], tangents t1, t2: its frame's rows) owns rows
// 3i..3i+2: frame * (J_point(body of geom[1], pos) - J_point(body of geom[0], pos)), so a row's velocity is
// the velocity of geom[1]'s material point at pos relative to geom[0]'s, in the contact frame; a positive
// normal velocity separates. Joint limits (hinge and slide joints with a range, PHYS_DSBL_LIMIT unset)
// follow: a row +e_dof for a lower limit (dist = q - lo), -e_dof for an upper limit (dist = hi - q), when
// dist <= 0 (no joint margin is modelled, as MuJoCo's default jnt margin 0); lambda >= 0, no friction.
// Limited tendons' rows come last, the tendon's moment for the unit row (tendon_rows.c).
//
// Terms. b_normal = eps*phi(J_n v) (phi = min(., 0) smoothed near 0, contact.h) with v the velocity before the step (the restitution term acts only on
// approaching contacts, paper 000 eq. 3); for a contact within the margin (dist > 0) b_normal = dist/dt, so
// the gap may close within the step (phys_normal_bias); b_limit = b_tangent = 0. Drift is not corrected here
// but at the position level (contact.h): gpos = beta*min(dist + slop, 0)/dt on normal and limit rows.
// G is formed as Y Y' with the rows of Y the half-solves D^-1/2 L'^-1 J_r through the tree-sparse factor
// M~ = L' D L (src/dyn/factor.h, no fill-in), so it is symmetric positive semidefinite to the last bit; each
// row of Y lives on the chains its row reaches and each product only sums over them.
//
// Warm start: contact i of geom pair (a, b) takes the lambda and row states of the contact of the same pair
// in the warm-start input (physWarmStart, contact.h: the previous step's list, passed explicitly) nearest to
// it; unmatched contacts are guessed separating, limit rows clamping.
// p->lambda0 holds those impulses (0 for unmatched contacts and limit rows) for the iterative solvers.
#include <math.h>
#include <string.h>

#include "contact.h"
#include "dyn.h"
#include "factor.h"
#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// rows

// J_rows (3 x nv) += sign * frame * J_point(body, p): for each dof j on body's chain,
// J_point[:, j] = cdof_lin_j + cdof_ang_j x p
static void add_point_rows(const physModel* m, const physData* d, double* rows, const double frame[9],
                           int body, const double p[3], double sign) {
  int nv = m->nv;
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j]) {
    const double* cd = d->cdof + 6 * j;
    double jp[3];
    phys_cross3(jp, cd, p);
    for (int k = 0; k < 3; k++) jp[k] += cd[3 + k];
    for (int r = 0; r < 3; r++) rows[r * nv + j] += sign * phys_dot3(frame + 3 * r, jp);
  }
}

int phys_contact_chains(const physModel* m, const physContact* c, int* s) {
  return phys_chain_union(m, phys_body_lastdof(m, m->geom_bodyid[c->geom[0]]),
                          phys_body_lastdof(m, m->geom_bodyid[c->geom[1]]), s);
}

// the 3 rows of contact c: frame * (J_point(body of geom[1]) - J_point(body of geom[0])) at c->pos.
// Dofs shared by both chains (a common ancestor) cancel up to rounding. The rows are cleared on the dofs s
// (ns: the contact's, phys_contact_chains) only, or on all dofs with s NULL.
static void contact_rows(const physModel* m, const physData* d, const physContact* c, double* rows, const int* s,
                         int ns) {
  int nv = m->nv;
  if (!s) memset(rows, 0, 3 * sizeof(double) * (size_t)nv);
  for (int t = 0; s && t < ns; t++) rows[s[t]] = rows[nv + s[t]] = rows[2 * nv + s[t]] = 0;
  add_point_rows(m, d, rows, c->frame, m->geom_bodyid[c->geom[1]], c->pos, 1.0);
  add_point_rows(m, d, rows, c->frame, m->geom_bodyid[c->geom[0]], c->pos, -1.0);
}

// distance of joint j to its lower (side 0: q - lo) or upper (side 1: hi - q) limit
static double limit_dist(const physModel* m, const physData* d, int j, int side) {
  double q = d->qpos[m->jnt_qposadr[j]];
  return side == 0 ? q - m->jnt_range[2 * j] : m->jnt_range[2 * j + 1] - q;
}

// 1 if joint j can have limit rows: a limited hinge or slide joint, limits enabled
static int limit_joint(const physModel* m, int j) {
  return !(m->opt.disableflags & PHYS_DSBL_LIMIT) && m->jnt_limited[j] &&
         (m->jnt_type[j] == PHYS_JNT_HINGE || m->jnt_type[j] == PHYS_JNT_SLIDE);
}

// number of active limit rows (dist <= 0); if jnt/side are not NULL, list them (capacity: 2*njnt)
static int active_limits(const physModel* m, const physData* d, int* jnt, int* side) {
  int n = 0;
  for (int j = 0; j < m->njnt; j++) {
    if (!limit_joint(m, j)) continue;
    for (int s = 0; s < 2; s++) {
      if (limit_dist(m, d, j, s) > 0) continue;
      if (jnt) {
        jnt[n] = j;
        side[n] = s;
      }
      n++;
    }
  }
  return n;
}

//---------------------------------------------------------------------------------------------------------
// warm start

// index in prev (np contacts) of the contact of geom pair (g0, g1) nearest to pos, -1 if none. A pair's
// contacts are matched by position, not by rank in the list: a manifold's points come deepest first, and
// the order of equally deep points (a box resting flat) changes from step to step with rounding.
static int pair_find(const physContact* prev, int np, int g0, int g1, const double pos[3]) {
  int best = -1;
  double dbest = INFINITY;
  for (int a = 0; a < np; a++) {
    if (prev[a].geom[0] != g0 || prev[a].geom[1] != g1) continue;
    double dx = prev[a].pos[0] - pos[0], dy = prev[a].pos[1] - pos[1], dz = prev[a].pos[2] - pos[2];
    double dd = dx * dx + dy * dy + dz * dz;
    if (dd < dbest) dbest = dd, best = a;
  }
  return best;
}

// warm[3i..3i+2], lambda0[3i..3i+2] and con[i].lambda/state (nc contacts) from the matching contact of the
// last step's list ws (NULL: none); the impulse moves to the current frame: lambda = F lambda_world,
// lambda_world = F_prev' lambda_prev
static void warm_start(physContact* con, int nc, const physWarmStart* ws, int* warm, double* lambda0) {
  const physContact* prev = ws ? ws->con : NULL;
  int np = ws ? ws->n : 0;
  for (int i = 0; i < nc; i++) {
    physContact* c = con + i;
    int a = pair_find(prev, np, c->geom[0], c->geom[1], c->pos);
    double lw[3] = {0, 0, 0};
    if (a >= 0) {
      const physContact* p = prev + a;
      for (int k = 0; k < 3; k++) lw[k] = p->frame[k] * p->lambda[0] + p->frame[3 + k] * p->lambda[1] + p->frame[6 + k] * p->lambda[2];
    }
    for (int r = 0; r < 3; r++) {
      c->lambda[r] = phys_dot3(c->frame + 3 * r, lw);
      c->state[r] = a >= 0 ? prev[a].state[r] : PHYS_ROW_SEPARATING;
      warm[3 * i + r] = c->state[r];
      lambda0[3 * i + r] = c->lambda[r];
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// the problem

// b_normal of a contact with pre-step normal velocity vn (row 3i of J v):
//  - touching (dist <= 0): eps*phi(vn), restitution (paper 000 eq. 3; phi: min(vn, 0) smoothed, contact.h);
//  - within the detection margin (dist > 0; ccp's collision envelope, or a geom margin): the gap may close
//    within the step, w_n = J_n v+ + dist/dt >= 0 (Anitescu and Tasora's envelope), b = dist/dt; except an
//    impact in this step, phi(vn) dt < -dist (the pre-step motion closes the gap, at any eps), which takes the
//    restitution velocity b = eps*phi(vn) as if touching, while the step moves the position by the time of
//    impact t* = dist/(-phi(vn)) (phys_toi_time; step.c), the impact's share of the impulse only:
//    q+ = q + dt v+ - sigma M~^-1 J_i' lambda_i (phys_toi_shift).
// Both sides of every switch agree: at eps = 0 the impact's b = 0 and the position term stops the body at
// the surface; as phi dt -> -dist, t* -> dt and a landing from rest ends at the surface, as the gap branch's;
// as dist -> 0+, sigma -> 0 (the touching branch).
// The branch taken goes to *branch (contact.h, may be NULL): the derivatives differentiate that one.
double phys_normal_bias(const physContact* c, double vn, double dt, int* branch) {
  double phi = phys_restitution_phi(vn, NULL), rest = c->restitution * phi;
  if (c->dist <= 0) {
    if (branch) *branch = vn < 0 ? PHYS_BIAS_REST : PHYS_BIAS_NONE;   // (phi = 0 for vn >= 0)
    return rest;
  }
  int impact = phys_toi_time(c, vn, dt) > 0;
  if (branch) *branch = impact ? PHYS_BIAS_REST : PHYS_BIAS_GAP;
  return impact ? rest : c->dist / dt;
}

// the time of impact t* = dist/(-phi(vn)) in (0, dt) of a contact within the margin (dist > 0) whose gap the
// pre-step normal velocity vn closes in the step (phi(vn) dt < -dist), else 0
double phys_toi_time(const physContact* c, double vn, double dt) {
  double phi = phys_restitution_phi(vn, NULL);
  if (!(c->dist > 0) || !(phi + c->dist / dt < 0)) return 0;
  return c->dist / -phi;
}

// the speed the gravity of model m gives in one step, e = dt |g| (0 with gravity disabled): the normal speed a
// contact holding a body against gravity removes in every step, whether or not it has just landed
double phys_toi_hold_speed(const physModel* m) {
  if (m->opt.disableflags & PHYS_DSBL_GRAVITY) return 0;
  const double* g = m->opt.gravity;
  return m->opt.timestep * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
}

// d(dt |g|)/dg = dt g/|g| into dg (0 with gravity disabled or zero)
void phys_toi_hold_speed_grad(const physModel* m, double dg[3]) {
  const double* g = m->opt.gravity;
  double n = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  for (int k = 0; k < 3; k++)
    dg[k] = (m->opt.disableflags & PHYS_DSBL_GRAVITY) || !(n > 0) ? 0 : m->opt.timestep * g[k] / n;
}

// the time shift sigma of a margin impact's impulse (phys_toi_time's t* > 0; else 0): the impulse lambda_i
// splits into the impact's share I/(I + e) (I = -(1 + eps) phi(vn), the normal speed the impact itself removes)
// moved to the time of impact t*, and the hold's share e/(I + e) (gravity's speed over the step, e =
// phys_toi_hold_speed) left over the whole step as a resting contact's, so sigma = t* I/(I + e) =
// (1 + eps) dist/(e - (1 + eps) phi(vn)) and the step moves q+ = q + dt v+ - sigma M~^-1 J_i' lambda_i. Without
// gravity sigma = t*; as phi(vn) -> 0 (a resting contact) sigma -> (1 + eps) dist/e, bounded, and at the closing
// boundary (t* = dt) a landing from rest ends at the surface, as the gap branch's. Its partial derivatives with
// respect to vn, dist, eps and e go to ds[0..3] (ds may be NULL).
double phys_toi_shift(const physContact* c, double vn, double dt, double e, double* ds) {
  double dphi, phi = phys_restitution_phi(vn, &dphi), k = 1 + c->restitution;
  double t = phys_toi_time(c, vn, dt), D = e - k * phi;
  double s = t > 0 ? k * c->dist / D : 0;
  if (ds) {
    ds[0] = t > 0 ? s * k * dphi / D : 0;
    ds[1] = t > 0 ? k / D : 0;
    ds[2] = t > 0 ? c->dist / D + s * phi / D : 0;
    ds[3] = t > 0 ? -s / D : 0;
  }
  return s;
}

// a . b for n-vectors
static double dotn(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

// Y_r = D^-1/2 L'^-1 J_r into Y (n x nv; only row r's dofs written, the others undefined), the nonzeros of row
// r listed at lst + r nv (descending), their number into ns[r]: the half-solve on the row's dofs (ancestor-
// closed, so its fill stays inside them), or over all dofs for a row without a support list
static void half_rows(const physModel* m, const physData* d, const physConstraintProblem* p, double* Y, int* lst,
                      int* ns) {
  int nv = p->nv;
  for (int r = 0; r < p->n; r++) {
    size_t off = (size_t)r * nv;
    const int* s;
    int k = phys_constraint_row_dofs(p, r, &s);
    if (!s) {
      ns[r] = phys_solve_m_half(m, d->qLD, Y + off, p->J + off, lst + off);
      continue;
    }
    for (int t = 0; t < k; t++) Y[off + s[t]] = p->J[off + s[t]];
    ns[r] = phys_solve_m_half_on(m, d->qLD, Y + off, s, k, lst + off);
  }
}

// G = Y Y' for rows Y_r written on all nv dofs (a model of one tree: one island, p->sup NULL), zero off their
// nonzero lists lst + r nv (descending, ns[r] long): G_rc = sum over the shorter of the two lists (both rows
// are 0 elsewhere) of Y_rk Y_ck, from the last dof down, or over all dofs without the list when it is full.
// The same sum as delassus' below: the products of the dofs both lists hold in the same order, the others
// exact zeros, which add nothing to a sum begun at +0
static void delassus_full(const double* Y, const int* lst, const int* ns, int n, int nv, double* G) {
  for (int r = 0; r < n; r++) {
    const double* Yr = Y + (size_t)r * nv;
    for (int c = 0; c <= r; c++) {
      const double* Yc = Y + (size_t)c * nv;
      int a = ns[r] <= ns[c] ? r : c;
      const int* la = lst + (size_t)a * nv;
      double s = 0;
      if (ns[a] == nv) {
        for (int k = nv - 1; k >= 0; k--) s += Yr[k] * Yc[k];
      } else {
        for (int t = 0; t < ns[a]; t++) s += Yr[la[t]] * Yc[la[t]];
      }
      G[(size_t)r * n + c] = s;
      G[(size_t)c * n + r] = s;
    }
  }
}

// G = Y Y' with Y_r = D^-1/2 L'^-1 J_r (the half-solve with the factor M~ = L' D L in d->qLD), so
// G = J L^-1 D^-1 L'^-1 J' = J M~^-1 J'. Y_r is nonzero only on the chains row r reaches (a contact: its two
// bodies', a limit: its joint's), listed by the half-solve. Only rows of one island (island.c) are multiplied:
// between islands the rows share no dof and G is 0. Row r is scattered into w (nv, zero elsewhere) and
// G_rc = sum over c's nonzeros k (descending) of w_k Y_ck: the products of the dofs both reach, in the order
// of the dense product Y_r . Y_c summed from the last dof down. G's entries between islands are cleared only
// if clear (else undefined: the step's solves read G island by island, island.c). The islands, computed here,
// go to p->isl (the caller's arena mark) for the solves
static void delassus(const physModel* m, physData* d, physConstraintProblem* p, double* G, int clear) {
  int n = p->n, nv = p->nv;
  physIslands* isl = (physIslands*)phys_stack_alloc(d, sizeof(physIslands) / sizeof(double) + 1);
  phys_islands(m, d, p, NULL, 0, isl);   // kept in p: the solves reuse them (island.c)
  p->isl = isl;
  size_t mark = phys_stack_mark(d);
  double* Y = phys_stack_alloc(d, (size_t)n * (size_t)nv + 1);
  double* w = phys_stack_alloc(d, (size_t)nv + 1);
  int* sup = (int*)phys_stack_alloc(d, (size_t)n * (size_t)nv / 2 + 1);   // n lists of up to nv ints
  int* ns = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  half_rows(m, d, p, Y, sup, ns);
  if (!p->sup) {   // rows over all dofs: Y_r written everywhere, 0 off its list; G whole
    delassus_full(Y, sup, ns, n, nv, G);
    phys_stack_free(d, mark);
    return;
  }
  if (clear) memset(G, 0, sizeof(double) * (size_t)n * (size_t)n);
  memset(w, 0, sizeof(double) * (size_t)nv);
  for (int k = 0; k < isl->n; k++) {
    const int* rows = isl->row + isl->start[k];
    for (int i = 0; i < isl->start[k + 1] - isl->start[k]; i++) {
      int r = rows[i];
      const int* lr = sup + (size_t)r * nv;
      for (int t = 0; t < ns[r]; t++) w[lr[t]] = Y[(size_t)r * nv + lr[t]];
      for (int j = 0; j <= i; j++) {
        int c = rows[j];
        const double* Yc = Y + (size_t)c * nv;
        const int* lc = sup + (size_t)c * nv;
        double s = 0;
        if (ns[c] == nv) {
          for (int k = nv - 1; k >= 0; k--) s += w[k] * Yc[k];   // the full list, without indirection
        } else {
          for (int t = 0; t < ns[c]; t++) s += w[lc[t]] * Yc[lc[t]];
        }
        G[(size_t)r * n + c] = s;
        G[(size_t)c * n + r] = s;
      }
      for (int t = 0; t < ns[r]; t++) w[lr[t]] = 0;
    }
  }
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// the rows' dofs

int phys_constraint_row_dofs(const physConstraintProblem* p, int r, const int** dofs) {
  if (!p->sup) {
    *dofs = NULL;
    return p->nv;
  }
  *dofs = p->sup + p->sup_adr[r];
  return p->sup_num[r];
}

double phys_constraint_row_dot(const physConstraintProblem* p, int r, const double* v) {
  const double* Jr = p->J + (size_t)r * p->nv;
  const int* s;
  int k = phys_constraint_row_dofs(p, r, &s);
  double acc = 0;
  if (!s) return dotn(Jr, v, k);
  for (int t = k - 1; t >= 0; t--) acc += Jr[s[t]] * v[s[t]];
  return acc;
}

void phys_constraint_jt(const physConstraintProblem* p, const double* lambda, double* f) {
  memset(f, 0, sizeof(double) * (size_t)p->nv);
  for (int r = 0; r < p->n; r++) {
    double l = lambda[r];
    if (l == 0) continue;
    const double* Jr = p->J + (size_t)r * p->nv;
    const int* s;
    int k = phys_constraint_row_dofs(p, r, &s);
    if (!s) {
      for (int i = 0; i < k; i++) f[i] += Jr[i] * l;
    } else {
      for (int t = 0; t < k; t++) f[s[t]] += Jr[s[t]] * l;
    }
  }
}

// contact i's three rows times vf into gi[0..2] and its normal row times v into *vn: phys_constraint_row_dot's
// sums (ascending dofs, from 0), the four in one pass over the contact's dofs
static void contact_row_dots(const physConstraintProblem* p, int i, const double* vf, const double* v, double* gi,
                             double* vn) {
  const double* J0 = p->J + (size_t)(3 * i) * p->nv;
  const double *J1 = J0 + p->nv, *J2 = J1 + p->nv;
  const int* s;
  int k = phys_constraint_row_dofs(p, 3 * i, &s);
  double a0 = 0, a1 = 0, a2 = 0, an = 0;
  for (int t = 0; t < k; t++) {
    int j = s ? s[k - 1 - t] : t;
    a0 += J0[j] * vf[j];
    a1 += J1[j] * vf[j];
    a2 += J2[j] * vf[j];
    an += J0[j] * v[j];
  }
  gi[0] = a0, gi[1] = a1, gi[2] = a2;
  *vn = an;
}

// the dofs of the n rows (contacts con (nc) first, then the limit rows: nlj joints ljnt, then tendons) into
// p->sup, sup_adr, sup_num (arena): a contact's 3 rows share its two chains, a joint limit's row its dof's
// chain, a tendon's row every dof
static void row_supports(const physModel* m, physData* d, const physContact* con, int nc, const int* ljnt,
                         int nlj, int n, physConstraintProblem* p) {
  int nv = m->nv, total = 0;
  int* adr = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  int* num = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  size_t mark = phys_stack_mark(d);
  int* s = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  for (int i = 0; i < nc; i++) total += phys_contact_chains(m, con + i, s);
  for (int l = 0; l < n - 3 * nc; l++) total += l < nlj ? phys_chain_union(m, m->jnt_dofadr[ljnt[l]], -1, s) : nv;
  phys_stack_free(d, mark);
  int* sup = (int*)phys_stack_alloc(d, (size_t)total / 2 + 1);
  total = 0;
  for (int i = 0; i < nc; i++) {
    int k = phys_contact_chains(m, con + i, sup + total);
    for (int r = 3 * i; r < 3 * i + 3; r++) adr[r] = total, num[r] = k;
    total += k;
  }
  for (int l = 0, r = 3 * nc; r < n; l++, r++) {
    int k = nv;
    if (l < nlj) k = phys_chain_union(m, m->jnt_dofadr[ljnt[l]], -1, sup + total);
    else for (int j = 0; j < nv; j++) sup[total + j] = nv - 1 - j;
    adr[r] = total, num[r] = k;
    total += k;
  }
  p->sup = sup, p->sup_adr = adr, p->sup_num = num;
}

// Assemble the rows of the contacts con (nc, detected at the current kinematics and cdof) and
// of the active joint limits into p, with J, G, g, mu from d's arena (the caller marks and frees):
//   J (n x nv), G = J M~^-1 J' (n x n, through the tree-sparse factor d->qLD of M~ = qM + dt
//   diag(dof_damping), phys_factor_m), g = J vf + b (n), mu (nc);
// also sets each contact's efc_adr, and the warm-start guesses from ws (p->warm, n ints in the arena; ws NULL:
// cold). The number of limit rows is p->nl. The rows' islands go to p->isl (computed here once: the Delassus
// product and the solves read them). A model of one tree (a robot, a free body: all rows in one island) keeps
// its rows over all dofs without support lists (p->sup NULL): the products then run over whole rows, without
// the lists' indirection, as cheap as the lists on a few dozen dofs and the same sums in the same order.
void phys_constraint_assemble(const physModel* m, physData* d, physContact* con, int nc, const double* vf,
                              const physWarmStart* ws, physConstraintProblem* p, double** J, double** G,
                              double** g, double** mu) {
  phys_constraint_assemble_rows(m, d, con, nc, vf, ws, 1, p, J, G, g, mu);
}

void phys_constraint_assemble_rows(const physModel* m, physData* d, physContact* con, int nc, const double* vf,
                                   const physWarmStart* ws, int dense, physConstraintProblem* p, double** J,
                                   double** G, double** g, double** mu) {
  int nv = m->nv;
  double dt = m->opt.timestep, beta = m->opt.baumgarte;
  size_t nl_cap = 2 * ((size_t)m->njnt + (size_t)m->nspring) + 1;
  int* ljnt = (int*)phys_stack_alloc(d, nl_cap);    // 2*(njnt + nspring) ints fit in as many doubles
  int* lside = (int*)phys_stack_alloc(d, nl_cap);
  int nlj = active_limits(m, d, ljnt, lside);   // joint limits, then tendon limits (tendon_rows.c)
  int nl = nlj + phys_tendon_limits_active(m, d, ljnt + nlj, lside + nlj);
  int n = 3 * nc + nl;
  *J = phys_stack_alloc(d, (size_t)n * (size_t)nv + 1);
  *G = phys_stack_alloc(d, (size_t)n * (size_t)n + 1);
  *g = phys_stack_alloc(d, (size_t)n + 1);
  *mu = phys_stack_alloc(d, (size_t)nc + 1);
  int* warm = (int*)phys_stack_alloc(d, (size_t)n + 1);
  double* gpos = phys_stack_alloc(d, (size_t)n + 1);
  double* lambda0 = phys_stack_alloc(d, (size_t)n + 1);
  int npos = 0, nmargin = 0;
  memset(gpos, 0, sizeof(double) * ((size_t)n + 1));
  memset(lambda0, 0, sizeof(double) * ((size_t)n + 1));
  p->nc = nc, p->con = con, p->nl = nl, p->n = n, p->nv = nv, p->J = *J;
  if (phys_one_tree(m)) p->sup = p->sup_adr = p->sup_num = NULL;   // one tree: rows over all dofs, no lists
  else row_supports(m, d, con, nc, ljnt, nlj, n, p);

  // contact rows; g = J vf + normal_bias on the normal row; gpos = beta*min(dist + slop, 0)/dt
  for (int i = 0; i < nc; i++) {
    physContact* c = con + i;
    double* rows = *J + (size_t)(3 * i) * nv;
    const int* s;
    int ns = phys_constraint_row_dofs(p, 3 * i, &s);
    contact_rows(m, d, c, rows, dense ? NULL : s, ns);
    c->efc_adr = 3 * i;
    (*mu)[i] = c->mu;
    double vn;
    contact_row_dots(p, i, vf, d->qvel, *g + 3 * i, &vn);
    (*g)[3 * i] += phys_normal_bias(c, vn, dt, NULL);
    if (c->dist > 0) {
      nmargin++;   // within the margin (then never below the slop: no position correction)
    } else if (c->dist + PHYS_CONTACT_SLOP < -PHYS_CONTACT_SLOP_TOL) {
      gpos[3 * i] = beta * (c->dist + PHYS_CONTACT_SLOP) / dt;
      npos++;
    }
  }
  warm_start(con, nc, ws, warm, lambda0);

  // limit rows: +-e_dof, g = +-vf_dof (tendons: their row r, g = r . vf); gpos = beta*min(dist + slop, 0)/dt
  for (int l = 0; l < nl; l++) {
    int row = 3 * nc + l;
    double* Jr = *J + (size_t)row * nv, dist;
    if (l < nlj) {
      int dof = m->jnt_dofadr[ljnt[l]];
      double sign = lside[l] == 0 ? 1.0 : -1.0;
      dist = limit_dist(m, d, ljnt[l], lside[l]);
      const int* s;
      int ns = phys_constraint_row_dofs(p, row, &s);
      if (dense || !s) memset(Jr, 0, sizeof(double) * (size_t)nv);
      for (int t = 0; !dense && s && t < ns; t++) Jr[s[t]] = 0;
      Jr[dof] = sign;
      (*g)[row] = sign * vf[dof];
    } else {
      dist = phys_tendon_limit_row(m, d, ljnt[l], lside[l], Jr);
      (*g)[row] = phys_constraint_row_dot(p, row, vf);
    }
    if (dist + PHYS_CONTACT_SLOP < -PHYS_CONTACT_SLOP_TOL) {
      gpos[row] = beta * (dist + PHYS_CONTACT_SLOP) / dt;
      npos++;
    }
    warm[row] = PHYS_ROW_CLAMPING;
  }
  delassus(m, d, p, *G, dense || (m->opt.disableflags & PHYS_DSBL_ISLAND));   // (and p->isl)

  p->G = *G, p->g = *g, p->mu = *mu;
  p->gpos = gpos, p->npos = npos, p->nmargin = nmargin;
  p->warm = warm, p->lambda0 = lambda0;
  p->island = NULL;   // (one island: the derivatives' caller may split, src/grad/step_contact_deriv.c)
}

// number of active joint-limit rows at the current qpos (the step's test for the constrained path)
int phys_constraint_nlimit(const physModel* m, const physData* d) {
  return active_limits(m, d, NULL, NULL) + phys_tendon_limits_active(m, d, NULL, NULL);
}

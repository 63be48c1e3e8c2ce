// penalty.c - penalty contact (paper 002): spring-damper normal forces with regularized Coulomb friction,
// and joint limits as one-sided penalty springs. No solver: the forces join the applied forces and the step
// integrates them (semi-implicit Euler), with the stiff viscous parts (normal damper, friction) implicit.
//
// Contact (normal n from geom[0] to geom[1], tangents t1, t2; phi = dist, phi_dot = n . v_rel, v_rel the
// velocity of geom[1]'s material point at pos relative to geom[0]'s, v_rel = J_rel v with
// J_rel = J_1(pos) - J_0(pos); force on geom[1], minus on geom[0]):
//   f_n = max(0, k_c*(-phi) - d*phi_dot)                        when phi < 0, else 0
//   f_t = -C v_t,   C = mu f_n / max(|v_t|, v_slip)              v_t = v_rel - (n . v_rel) n
// (regularized Coulomb: viscous below v_slip, |f_t| = mu f_n above). The max(0, .) keeps the damper from
// pulling the bodies together while they separate (no adhesion).
//
// The step integrates the stiff viscous parts linearly implicitly (as the implicit joint damping), with
// the contacts' coefficients frozen at the current state (phys_penalty_contacts, phys_penalty_assemble):
//   f_n(v+) = k_c (-phi) - d J_n v+,   f_t(v+) = -C J_t v+,   J_n, J_t = frame rows times J_rel
//   (M + dt B + dt sum_c (d J_n' J_n + C J_t' J_t)) a = tau - c + sum_c J_n' (k_c (-phi) - d v_n) - C J_t' v_t
// Why: below v_slip the friction is a viscous force of coefficient mu f_n / v_slip; explicit Euler needs
// dt C / m_e < 2, i.e. mu g dt / 2 < v_slip for a body resting on its weight (2.45 mm/s at mu = 0.5,
// dt = 1 ms against v_slip = 1 mm/s), else the tangential velocity chatters in a band of width about
// mu g dt (a sliding box never came to rest). Implicitly v_t+ = v_t / (1 + dt C w) for one contact of
// inverse mass w: it shrinks monotonically and never changes sign, whatever dt C w. Above v_slip,
// C = mu f_n / |v_t| gives a friction at v+ of mu f_n |v_t+| / |v_t|, off Coulomb's by the step's relative
// speed change c / |v_t| (c = dt mu f_n / m_e, 0.5% at 1 m/s for the box): phys_penalty_update
// re-evaluates C = mu f_n+ / max(|v_t+|, v_slip) at the solve's v+ and the step solves again (a fixed
// point iteration towards backward Euler friction; its error shrinks by c / (|v_t| + c) per solve).
// The normal damper is implicit so that it may be strong (below).
//
// Normal damping from restitution. Each contact's damping is d = 2 zeta sqrt(k_c m_e), m_e =
// 1 / (J_n M~^-1 J_n') (the Delassus diagonal, M~ = M + dt B), zeta = zeta(eps) from the pair's
// restitution eps (phys_penalty_zeta): the spring-damper's impact (isolated, no other force during the
// contact) then rebounds with eps. The clamp f_n >= 0 ends the contact when k x + d x' = 0 (x = -phi, x' its
// rate, x(0) = 0, x'(0) = v0), before x returns to 0; solving x'' + 2 zeta w x' + w^2 x = 0 up to that time
// t_c gives (w = 1, wd = sqrt(1 - zeta^2))
//   zeta < 1: theta = wd t_c = atan2(2 zeta wd, 2 zeta^2 - 1),  eps = e^(-zeta theta/wd) (zeta sin theta -
//             wd cos theta) / wd
//   zeta = 1: eps = e^-2;   zeta > 1: the same with s = sqrt(zeta^2 - 1), atanh, sinh, cosh
// (eps = 1 at zeta = 0, e^-2 at critical damping, about 1/(4 zeta^2) for large zeta; the unclamped law
// exp(-pi zeta / sqrt(1 - zeta^2)) would make the rebound livelier than asked). eps = 0 needs zeta = inf:
// restitutions below eps(PHYS_PENALTY_ZETA_MAX = 5) = 0.0093 (eps = 0, every geom's default, included)
// take zeta = 5 (rebound 9e-5 of the drop height; the contact settles to its static depth with time
// constant d / k_c = 10 / w). m_e is one contact's: several contacts on one body (a box landing flat) share
// the load and the Delassus diagonal approximates their modes. Gravity or other forces acting during the
// contact (about pi / w long) change the rebound by O(g / (w v0)). The option penalty_damping (d_c) is no
// longer used by contacts, only by joint limits.
// The strong normal damping also damps the rocking mode of a body on several compliant contacts: a box put
// on an incline steeper than mu first rocks forward on its springs while its contacts stick (friction
// below mu f_n), and with d_c = 100 N s/m (zeta of that mode 0.8) it gained 7.3 mm/s in the first 5 ms and
// slid 7.3% farther in 1 s than the rigid answer, for any dt (the converged model, not the integrator);
// with zeta = 5 the converged model slides 1.4% farther.
//
// Joint limits (limited hinge and slide joints, PHYS_DSBL_LIMIT unset): with dist = q - lo (lower) or
// hi - q (upper), the one-sided spring f = max(0, k_c*(-dist) - d_c*dist_dot) for dist < 0 pushes the joint
// back into its range (same k_c, d_c, in N m/rad or N/m). The step integrates it implicitly
// (phys_penalty_limits with add): k_c = 1e4 N m/rad on a joint of inertia 0.01 kg m^2 has omega dt = 5 at
// dt = 5 ms, which explicit Euler cannot follow (MuJoCo's humanoid blew up).
//
// Stability of the normal spring: it is explicit, the damper implicit. For one contact of effective mass m_e
// (penetration x, rate u) the step is m_e (u+ - u) = dt (-k_c x - d u+), x+ = x + dt u+, i.e.
//   [x+; u+] = [[1 - a, dt b], [-a / dt, b]] [x; u],   a = k_c dt^2 / (m_e + dt d),  b = m_e / (m_e + dt d),
// with determinant b <= 1 and trace 1 - a + b: stable (both eigenvalues inside the unit circle) iff
// a < 2 (1 + b), i.e. k_c dt^2 < 4 m_e + 2 dt d. Undamped (restitution 1) that is dt < 2 sqrt(m_e / k_c)
// (dt = 2 ms, k_c = 1e4: m_e > 0.01 kg); the load check (phys_penalty_check, src/model/compile.c) warns
// when a body's smallest effective mass breaks it. Restitution lowers d, so a lively contact (eps >= 0.5)
// with dt = 0.01 s on a 1 kg box (m_e ~ 0.2 kg at a corner, k_c dt^2 = 1) grew by a factor 5e6 in energy.
// The damping is therefore at least d_min = k_c dt - 2 m_e / dt, where the trace is 0: both eigenvalues
// have modulus sqrt(b) < 1, the contact's energy decays every step (phys_penalty_damping); such a contact
// rebounds less than its restitution asks, which the load check says. The step's matrix keeps the kinematic tree's pattern when each contact lies on
// one chain: phys_ldl_factor (src/dyn/factor.h) factors it as L' D L without fill-in (MuJoCo's humanoid:
// 27 dofs); otherwise it runs along the matrix's elimination tree (phys_penalty_etree): fill-in only inside
// each island of trees the contacts couple.
#include <math.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "dyn.h"
#include "factor.h"
#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// restitution of the clamped spring-damper

// coefficient of restitution of the impact x'' + 2 zeta x' + x = 0 ended when x + 2 zeta x' = 0 (the
// clamped force vanishes), x(0) = 0, x'(0) = 1: eps = -x'(t_c) (formulas in the file comment)
double phys_penalty_restitution(double zeta) {
  double z2 = zeta * zeta;
  if (fabs(z2 - 1) < 1e-10) return exp(-2.0);
  if (zeta < 1) {
    // theta = wd t_c, eps = e^(-zeta t_c) (zeta sin theta - wd cos theta) / wd
    double wd = sqrt(1 - z2), th = atan2(2 * zeta * wd, 2 * z2 - 1);
    return exp(-zeta * th / wd) * (zeta * sin(th) - wd * cos(th)) / wd;
  }
  // overdamped: phi = s t_c = atanh(2 zeta s / (2 zeta^2 - 1)), eps = e^(-zeta t_c) (zeta sinh - s cosh) / s
  double s = sqrt(z2 - 1), ph = atanh(2 * zeta * s / (2 * z2 - 1));
  return exp(-zeta * ph / s) * (zeta * sinh(ph) - s * cosh(ph)) / s;
}

// damping ratio zeta >= 0 with phys_penalty_restitution(zeta) = eps, eps in (0, 1]: regula falsi (Illinois)
// on ln eps(zeta) - ln eps, which decreases monotonically from -ln eps at zeta = 0 through 0
double phys_penalty_zeta(double eps) {
  if (!(eps < 1)) return 0;
  if (!(eps > 0)) return INFINITY;
  double target = log(eps), lo = 0, flo = -target, hi = 1, fhi = log(phys_penalty_restitution(hi)) - target;
  while (fhi > 0) {
    // bracket the root: eps(zeta) ~ 1 / (4 zeta^2) for large zeta
    lo = hi;
    flo = fhi;
    hi *= 2;
    fhi = log(phys_penalty_restitution(hi)) - target;
  }
  int side = 0;
  for (int it = 0; it < 200 && hi - lo > 1e-14 * (1 + hi); it++) {
    double z = (lo * fhi - hi * flo) / (fhi - flo), f = log(phys_penalty_restitution(z)) - target;
    if (f == 0) return z;
    if (f > 0) {
      lo = z;
      flo = f;
      if (side == 1) fhi *= 0.5;   // Illinois: halve the stale end's value
      side = 1;
    } else {
      hi = z;
      fhi = f;
      if (side == -1) flo *= 0.5;
      side = -1;
    }
  }
  return 0.5 * (lo + hi);
}

//---------------------------------------------------------------------------------------------------------
// the step's matrix in tree-sparse form

// 1 if every penetrating contact's rows stay on one kinematic chain (one body is static or an ancestor-or-
// self of the other's dofs): then H = M~ + sum J' W J keeps M's tree pattern (H_ij != 0 only if dof i is an
// ancestor of j or j of i) and phys_ldl_factor factors it along dof_parentid without fill-in
int phys_penalty_tree(const physModel* m, const physContact* con, int nc) {
  for (int i = 0; i < nc; i++) {
    const physContact* c = con + i;
    if (!(c->dist < 0)) continue;
    int a = phys_body_lastdof(m, m->geom_bodyid[c->geom[0]]), b = phys_body_lastdof(m, m->geom_bodyid[c->geom[1]]);
    if (a < 0 || b < 0) continue;
    if (a > b) {
      int t = a;
      a = b;
      b = t;
    }
    while (b > a) b = m->dof_parentid[b];   // parents precede children: walk the deeper chain up
    if (b != a) return 0;
  }
  return 1;
}

// the edges (lo, hi), lo < hi, of a graph whose elimination tree is H's (below): the tree edges
// (dof_parentid[k], k) and, for each penetrating contact, consecutive dofs of its chain union (a contact
// couples all of its dofs, a clique; linking each to the next is enough for the elimination tree, as for
// A'A in Liu's column elimination tree). edge NULL: only counts. Returns the number of edges
static int etree_edges(const physModel* m, const physContact* con, int nc, int* edge, int* s) {
  int ne = 0;
  for (int k = 0; k < m->nv; k++)
    if (m->dof_parentid[k] >= 0) {
      if (edge) edge[2 * ne] = m->dof_parentid[k], edge[2 * ne + 1] = k;
      ne++;
    }
  for (int c = 0; c < nc; c++) {
    if (!(con[c].dist < 0)) continue;
    int n = phys_contact_chains(m, con + c, s);
    for (int t = 0; t + 1 < n; t++) {
      if (edge) edge[2 * ne] = s[t + 1], edge[2 * ne + 1] = s[t];
      ne++;
    }
  }
  return ne;
}

// The elimination tree of the penalty step's matrix (see contact.h). phys_ldl_factor eliminates dofs
// n-1..0; eliminating k joins its remaining neighbours (indices < k) into a clique, and parent[k] is the
// largest of them. Computed as Liu's algorithm (Davis, "Direct Methods for Sparse Linear Systems", cs_etree)
// in that order: for each k descending and each neighbour j > k, walk from j to the root of its subtree (path
// compression through anc) and hang that root below k.
void phys_penalty_etree(const physModel* m, physData* d, const physContact* con, int nc, int* parent) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  int* s = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  int ne = etree_edges(m, con, nc, NULL, s);
  int* edge = (int*)phys_stack_alloc(d, (size_t)ne + 1);
  int* start = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 2);   // neighbours hi of lo: adj[start[lo]..]
  int* adj = (int*)phys_stack_alloc(d, (size_t)ne / 2 + 1);
  int* anc = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  etree_edges(m, con, nc, edge, s);
  memset(start, 0, sizeof(int) * ((size_t)nv + 1));
  for (int e = 0; e < ne; e++) start[edge[2 * e] + 1]++;
  for (int k = 0; k < nv; k++) start[k + 1] += start[k];
  for (int k = 0; k < nv; k++) anc[k] = start[k];   // fill positions
  for (int e = 0; e < ne; e++) adj[anc[edge[2 * e]]++] = edge[2 * e + 1];
  for (int k = nv - 1; k >= 0; k--) {
    parent[k] = anc[k] = -1;
    for (int a = start[k]; a < start[k + 1]; a++)
      for (int i = adj[a], next; i > k; i = next) {
        next = anc[i];
        anc[i] = k;
        if (next < 0) parent[i] = k;
      }
  }
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// contacts

// j' M~^-1 j = |y|^2, y = D^-1/2 L'^-1 j the half-solve with the tree factor qLD of M~ (phys_solve_m_half) on
// the dofs s (ns, descending) of j (0 off them: only s is read), summed in ascending dof order. Scratch y (nv,
// written on s only), list (nv ints).
static double inverse_mass_quadratic(const physModel* m, const double* qLD, const double* j, const int* s, int ns,
                                     double* y, int* list) {
  for (int t = 0; t < ns; t++) y[s[t]] = j[s[t]];
  int nz = phys_solve_m_half_on(m, qLD, y, s, ns, list);
  double w = 0;
  for (int t = nz - 1; t >= 0; t--) w += y[list[t]] * y[list[t]];
  return w;
}

double phys_penalty_damping(double zeta, double k, double w, double dt, double* dd_dk, double* dd_dw,
                            double* dd_dzeta) {
  double r = w > 0 ? sqrt(k / w) : 0, dz = 2 * zeta * r, dmin = w > 0 ? k * dt - 2 / (w * dt) : 0;
  int floor = dmin > dz;
  if (dd_dk) *dd_dk = floor ? dt : (k > 0 ? dz / (2 * k) : 0);
  if (dd_dw) *dd_dw = floor ? 2 / (w * w * dt) : (w > 0 ? -dz / (2 * w) : 0);
  if (dd_dzeta) *dd_dzeta = floor ? 0 : 2 * r;
  return floor ? dmin : dz;
}

// normal damping of contact c (file comment): d = 2 zeta(eps) sqrt(k_c m_e), m_e = 1 / (J_n M~^-1 J_n')
// from the tree factor qLD of M~, at least the stable k_c dt - 2 m_e / dt (phys_penalty_damping); eps below
// phys_penalty_restitution(PHYS_PENALTY_ZETA_MAX) (eps = 0 included) takes zeta = PHYS_PENALTY_ZETA_MAX,
// eps >= 1 zeta = 0. jn is 0 off the contact's dofs s (ns, descending). Scratch x (nv), list (nv ints).
static double contact_damping(const physModel* m, const physContact* c, const double* qLD, const double* jn,
                              const int* s, int ns, double* x, int* list) {
  double w = inverse_mass_quadratic(m, qLD, jn, s, ns, x, list);   // J_n M~^-1 J_n'
  double zeta = c->restitution >= 1 ? 0
                : c->restitution > 0 ? fmin(phys_penalty_zeta(c->restitution), PHYS_PENALTY_ZETA_MAX)
                                     : PHYS_PENALTY_ZETA_MAX;
  return phys_penalty_damping(zeta, m->opt.penalty_stiffness, w, m->opt.timestep, NULL, NULL, NULL);
}

// Ji (3 x nv) = frame * J_rel, J_rel = J_1(pos) - J_0(pos) (the point Jacobians of geom[1]'s and geom[0]'s
// bodies, column j = cdof_lin_j + cdof_ang_j x pos on each chain, 0 off it) over the union of the chains of
// p->dof, walked as phys_chain_union; the other entries are cleared if dense, else left undefined
static void frame_rows(const physModel* m, const physData* d, const physContact* c, const physPenaltyContact* p,
                       double* Ji, int dense) {
  int nv = m->nv, e[2] = {p->dof[1], p->dof[0]};   // the chains of geom[1]'s body (e[0]) and geom[0]'s (e[1])
  if (dense) memset(Ji, 0, 3 * sizeof(double) * (size_t)nv);
  while (e[0] >= 0 || e[1] >= 0) {
    int j = e[0] > e[1] ? e[0] : e[1];
    double jp[2][3] = {{0, 0, 0}, {0, 0, 0}};
    for (int k = 0; k < 2; k++) {
      if (e[k] != j) continue;
      const double* cd = d->cdof + 6 * j;
      phys_cross3(jp[k], cd, c->pos);
      for (int i = 0; i < 3; i++) jp[k][i] = cd[3 + i] + jp[k][i];
      e[k] = m->dof_parentid[j];
    }
    double rel[3] = {jp[0][0] - jp[1][0], jp[0][1] - jp[1][1], jp[0][2] - jp[1][2]};
    for (int r = 0; r < 3; r++) {
      const double* f = c->frame + 3 * r;
      Ji[r * nv + j] = f[0] * rel[0] + f[1] * rel[1] + f[2] * rel[2];
    }
  }
}

// frame-coordinate velocity of a contact's rows Ji (3 x nv) at velocity v
static void row_velocity(double res[3], const double* Ji, const double* v, int nv) {
  res[0] = res[1] = res[2] = 0;
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < nv; j++) res[r] += Ji[r * nv + j] * v[j];
}

// the same over the dofs s (ns, descending; Ji 0 off them), summed in ascending order as row_velocity; ns < 0:
// over all dofs
static void sup_velocity(double res[3], const double* Ji, const int* s, int ns, const double* v, int nv) {
  if (ns < 0) {
    row_velocity(res, Ji, v, nv);
    return;
  }
  res[0] = res[1] = res[2] = 0;
  for (int r = 0; r < 3; r++)
    for (int t = ns - 1; t >= 0; t--) res[r] += Ji[r * nv + s[t]] * v[s[t]];
}

// at most this many dofs in a contact's two chains are walked as a list (penalty_dofs); longer: all dofs
#define PHYS_PENALTY_SUP 256

// the dofs p's rows reach (the union of its two chains, phys_chain_union) into s (capacity PHYS_PENALTY_SUP),
// descending; -1 if p does not name its chains or they are longer: then its rows are read over all dofs
static int penalty_dofs(const physModel* m, const physPenaltyContact* p, int* s) {
  if (!p->chains) return -1;
  int k = 0;
  for (int i = 0; i < 2; i++)
    for (int j = p->dof[i]; j >= 0; j = m->dof_parentid[j]) k++;
  return k > PHYS_PENALTY_SUP ? -1 : phys_chain_union(m, p->dof[0], p->dof[1], s);
}

// the penalty contacts con (nc) at the current state (needs kinematics, cvel): for each contact, J
// (3 ncon x nv) gets its rows J_n, J_t1, J_t2 = frame rows times J_rel and pc its linearization
// (contact.h); qLD: the tree-sparse factor of M~ = M + dt B (phys_factor_m). Contacts without a pushing
// force are inactive.
void phys_penalty_contacts(const physModel* m, physData* d, physContact* con, int nc, const double* qLD,
                           physPenaltyContact* pc, double* J) {
  phys_penalty_contacts_rows(m, d, con, nc, qLD, 1, pc, J);
}

void phys_penalty_contacts_rows(const physModel* m, physData* d, physContact* con, int nc, const double* qLD,
                                int dense, physPenaltyContact* pc, double* J) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* y = phys_stack_alloc(d, (size_t)nv + 1);
  int* list = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  int* s = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  for (int i = 0; i < nc; i++) {
    physContact* c = con + i;
    physPenaltyContact* p = pc + i;
    double* Ji = J + (size_t)(3 * i) * nv;
    memset(p, 0, sizeof *p);
    memset(c->lambda, 0, sizeof c->lambda);
    c->efc_adr = -1;
    if (!(c->dist < 0)) continue;
    for (int k = 0; k < 2; k++) p->dof[k] = phys_body_lastdof(m, m->geom_bodyid[c->geom[k]]);
    int ns = phys_contact_chains(m, c, s);
    int all = ns == nv;   // its chains hold every dof (a free body alone: its 6): read without the list
    p->chains = !all;

    // rows: frame * J_rel, J_rel = J_1(pos) - J_0(pos) on the contact's dofs; v_rel in frame coordinates
    frame_rows(m, d, c, p, Ji, dense);
    double vr[3];
    sup_velocity(vr, Ji, s, all ? -1 : ns, d->qvel, nv);

    // f_n = k_c (-phi) - d phi_dot > 0 (active), C = mu f_n / max(|v_t|, v_slip)
    p->spring = -m->opt.penalty_stiffness * c->dist;
    p->damping = contact_damping(m, c, qLD, Ji, s, ns, y, list);
    double fn = p->spring - p->damping * vr[0];
    if (!(fn > 0)) continue;
    p->active = 1;
    p->slip = fmax(hypot(vr[1], vr[2]), m->opt.penalty_vslip);
    p->C = c->mu * fn / p->slip;
  }
  phys_stack_free(d, mark);
}

// torsional and rolling coefficients of a contact at normal force fn and relative angular velocity w (frame
// coordinates: w[0] about the normal, w[1], w[2] about the tangents), regularized as the sliding friction:
// Cs = mu_spin fn / slip_s, slip_s = max(|w_n|, v_slip), Cr = mu_roll fn / slip_r, slip_r = max(|w_t|, v_slip)
// (v_slip's value read in rad/s; p->mu_spin, p->mu_roll). Returns 1 if a slip changed and then sets both; a
// contact below v_slip before and after keeps its coefficients, as phys_penalty_update's C
static int ang_coefficients(const physModel* m, physPenaltyContact* p, double fn, const double w[3]) {
  double vs = m->opt.penalty_vslip, ss = fmax(fabs(w[0]), vs), sr = fmax(hypot(w[1], w[2]), vs);
  if (ss == p->slip_s && sr == p->slip_r) return 0;
  p->slip_s = ss;
  p->slip_r = sr;
  p->Cs = p->mu_spin * fn / ss;
  p->Cr = p->mu_roll * fn / sr;
  return 1;
}

int phys_penalty_contacts_ang(const physModel* m, physData* d, const physContact* con, int nc,
                              physPenaltyContact* pc, const double* J, double* Ja) {
  int nv = m->nv, n = 0;
  for (int i = 0; i < nc; i++) {
    const physContact* c = con + i;
    physPenaltyContact* p = pc + i;
    double ang[2];
    phys_contact_friction_ang(m, c, ang);
    if (!p->active || !(ang[0] > 0 || ang[1] > 0)) continue;
    // rows: frame * (J_rot(body of geom[1]) - J_rot(body of geom[0])), the relative angular velocity
    double* Ai = Ja + (size_t)(3 * i) * nv;
    phys_contact_angular_jac(m, d, c, Ai);   // (angular.c: 0 off the two chains, as J's rows)
    double vr[3], w[3];
    int s[PHYS_PENALTY_SUP], ns = penalty_dofs(m, p, s);
    sup_velocity(vr, J + (size_t)(3 * i) * nv, s, ns, d->qvel, nv);
    sup_velocity(w, Ai, s, ns, d->qvel, nv);
    p->ang = Ai;
    p->mu_spin = ang[0];
    p->mu_roll = ang[1];
    p->slip_s = p->slip_r = -1;
    ang_coefficients(m, p, p->spring - p->damping * vr[0], w);
    n++;
  }
  return n;
}

// idx <- the columns where one of the 3 rows of Ji (3 x nv) is nonzero, ascending; returns their number. Only
// the dofs s (ns, descending; ns < 0: all nv) are looked at: Ji is 0 off them
static int row_support(int* idx, const double* Ji, const int* s, int ns, int nv) {
  int n = 0, all = ns < 0;
  for (int t = all ? 0 : ns - 1; all ? t < nv : t >= 0; t += all ? 1 : -1) {
    int j = all ? t : s[t];
    if (Ji[j] != 0 || Ji[nv + j] != 0 || Ji[2 * nv + j] != 0) idx[n++] = j;
  }
  return n;
}

// v[r] = row r of Ji (3 x nv) times qvel over the columns idx (n of them, row_support)
static void support_velocity(double v[3], const double* Ji, const int* idx, int n, const double* qvel, int nv) {
  v[0] = v[1] = v[2] = 0;
  for (int r = 0; r < 3; r++)
    for (int q = 0; q < n; q++) v[r] += Ji[r * nv + idx[q]] * qvel[idx[q]];
}

// rhs += Ji' f, H (lower triangle) += Ji' diag(w) Ji over the columns idx (n of them) of the rows Ji (3 x nv)
static void add_row_terms(const double* Ji, const int* idx, int n, int nv, const double f[3], const double w[3],
                          double* rhs, double* H) {
  for (int a = 0; a < n; a++) {
    int j = idx[a];
    double* Hj = H + (size_t)j * nv;
    double wj[3] = {w[0] * Ji[j], w[1] * Ji[nv + j], w[2] * Ji[2 * nv + j]};
    rhs[j] += Ji[j] * f[0] + Ji[nv + j] * f[1] + Ji[2 * nv + j] * f[2];
    for (int b = 0; b <= a; b++) {
      int k = idx[b];
      Hj[k] += wj[0] * Ji[k] + wj[1] * Ji[nv + k] + wj[2] * Ji[2 * nv + k];
    }
  }
}

// the linearly implicit step's terms of the active contacts at the current velocity v = qvel:
//   rhs += J_n' (k_c (-phi) - d v_n) - C J_t' v_t,   H (lower triangle) += dt (d J_n' J_n + C J_t' J_t)
// and with angular rows A (torsional, rolling friction): rhs -= Cs A_n' w_n + Cr A_t' w_t, H += dt (Cs A_n' A_n +
// Cr A_t' A_t)
void phys_penalty_assemble(const physModel* m, physData* d, int nc, const physPenaltyContact* pc, const double* J,
                           double* rhs, double* H) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  int* idx = (int*)phys_stack_alloc(d, (size_t)nv + 1);
  int s[PHYS_PENALTY_SUP];
  for (int i = 0; i < nc; i++) {
    const physPenaltyContact* p = pc + i;
    if (!p->active) continue;
    const double* Ji = J + (size_t)(3 * i) * nv;
    int ns = penalty_dofs(m, p, s), n = row_support(idx, Ji, s, ns, nv);
    double v[3], w[3] = {dt * p->damping, dt * p->C, dt * p->C};
    support_velocity(v, Ji, idx, n, d->qvel, nv);
    double f[3] = {p->spring - p->damping * v[0], -p->C * v[1], -p->C * v[2]};
    add_row_terms(Ji, idx, n, nv, f, w, rhs, H);
    if (!p->ang) continue;
    n = row_support(idx, p->ang, s, ns, nv);   // (the angular rows are 0 off the contact's chains too)
    double wa[3] = {dt * p->Cs, dt * p->Cr, dt * p->Cr};
    support_velocity(v, p->ang, idx, n, d->qvel, nv);
    double fa[3] = {-p->Cs * v[0], -p->Cr * v[1], -p->Cr * v[2]};
    add_row_terms(p->ang, idx, n, nv, fa, wa, rhs, H);
  }
  phys_stack_free(d, mark);
}

// re-evaluate the active contacts at the new velocity vnew: f_n+ = k_c (-phi) - d v_n+ <= 0 releases the
// contact (bit 2 of the result: no adhesion); else if slip = max(|v_t+|, v_slip) differs from C's (the
// contact slides before or after), C = mu f_n+ / slip (bit 1). A contact below v_slip before and after
// keeps its C: its friction is viscous either way, and the step needs no further solve.
int phys_penalty_update(const physModel* m, const physContact* con, int nc, physPenaltyContact* pc,
                        const double* J, const double* vnew) {
  int nv = m->nv, changed = 0;
  for (int i = 0; i < nc; i++) {
    physPenaltyContact* p = pc + i;
    if (!p->active) continue;
    double v[3];
    int s[PHYS_PENALTY_SUP], ns = penalty_dofs(m, p, s);
    sup_velocity(v, J + (size_t)(3 * i) * nv, s, ns, vnew, nv);
    double fn = p->spring - p->damping * v[0];
    if (!(fn > 0)) {
      p->active = 0;
      p->C = p->Cs = p->Cr = 0;
      changed |= 2;
      continue;
    }
    if (p->ang) {   // torsion and rolling: their slips at v+ (ang_coefficients)
      double w[3];
      sup_velocity(w, p->ang, s, ns, vnew, nv);
      if (ang_coefficients(m, p, fn, w)) changed |= 1;
    }
    double slip = fmax(hypot(v[1], v[2]), m->opt.penalty_vslip);
    if (slip == p->slip) continue;   // below v_slip before and after: C keeps its value
    p->slip = slip;
    p->C = con[i].mu * fn / slip;
    changed |= 1;
  }
  return changed;
}

// the forces at the new velocity vnew: qfrc += J_i' F_i, F_i = (k_c (-phi) - d v_n+, -C v_t+) in frame
// coordinates, and each contact's impulse lambda = F dt; with angular rows A_i also qfrc += A_i' T_i,
// T_i = (-Cs w_n+, -Cr w_t+)
void phys_penalty_finish(const physModel* m, physContact* con, int nc, const physPenaltyContact* pc,
                         const double* J, const double* vnew, double* qfrc) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  for (int i = 0; i < nc; i++) {
    const physPenaltyContact* p = pc + i;
    if (!p->active) continue;
    const double* Ji = J + (size_t)(3 * i) * nv;
    double v[3];
    int s[PHYS_PENALTY_SUP], ns = penalty_dofs(m, p, s);
    sup_velocity(v, Ji, s, ns, vnew, nv);
    double F[3] = {p->spring - p->damping * v[0], -p->C * v[1], -p->C * v[2]};
    for (int t = 0; t < (ns < 0 ? nv : ns); t++) {
      int j = ns < 0 ? t : s[t];
      qfrc[j] += Ji[j] * F[0] + Ji[nv + j] * F[1] + Ji[2 * nv + j] * F[2];
    }
    for (int k = 0; k < 3; k++) con[i].lambda[k] = F[k] * dt;
    if (!p->ang) continue;
    sup_velocity(v, p->ang, s, ns, vnew, nv);   // torques (frame) -Cs w_n, -Cr w_t at v+ (0 off the chains)
    double T[3] = {-p->Cs * v[0], -p->Cr * v[1], -p->Cr * v[2]};
    const double* A = p->ang;
    for (int t = 0; t < (ns < 0 ? nv : ns); t++) {
      int j = ns < 0 ? t : s[t];
      qfrc[j] += A[j] * T[0] + A[nv + j] * T[1] + A[2 * nv + j] * T[2];
    }
  }
}

// the force of limit side `side` (0 lower, 1 upper) of joint j (contact.h): f = -k_c dist - d_c sign v
// with dist = q - lo (sign 1) or hi - q (sign -1), when the joint is a limited hinge or slide, dist < 0 and
// f > 0 (the spring pushes); else 0
double phys_penalty_limit_force(const physModel* m, const physData* d, int j, int side) {
  if (!m->jnt_limited[j] || (m->jnt_type[j] != PHYS_JNT_HINGE && m->jnt_type[j] != PHYS_JNT_SLIDE)) return 0;
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping;
  double q = d->qpos[m->jnt_qposadr[j]], v = d->qvel[m->jnt_dofadr[j]];
  double sign = side == 0 ? 1.0 : -1.0;
  double dist = side == 0 ? q - m->jnt_range[2 * j] : m->jnt_range[2 * j + 1] - q;
  if (!(dist < 0)) return 0;
  double f = -k * dist - c * sign * v;
  return f > 0 ? f : 0;
}

// one-sided limit springs: for each limited hinge/slide dof with dist < 0 and a pushing force
// f = -k_c (q - q_lim) - d_c v > 0 (q_lim the violated bound): qfrc[dof] += f, and if add is not NULL the
// implicit (backward Euler) form of the spring-damper, exact for this diagonal joint-space force:
//   f(q+, v+) = f - dt k_c v - (dt d_c + dt^2 k_c) a   =>   qfrc += f - dt k_c v,  add += dt d_c + dt^2 k_c
// (add joins the articulated-body diagonal, as implicit joint damping). Returns the number of active limits.
int phys_penalty_limits(const physModel* m, const physData* d, double* qfrc, double* add) {
  if (m->opt.disableflags & PHYS_DSBL_LIMIT) return 0;
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, dt = m->opt.timestep;
  int n = 0;
  for (int j = 0; j < m->njnt; j++) {
    int dof = m->jnt_dofadr[j];
    for (int side = 0; side < 2; side++) {
      double f = phys_penalty_limit_force(m, d, j, side);
      if (!(f > 0)) continue;
      n++;
      qfrc[dof] += (side == 0 ? 1.0 : -1.0) * f;
      if (add) {
        double v = d->qvel[dof];
        qfrc[dof] -= dt * k * v;
        add[dof] += dt * c + dt * dt * k;
      }
    }
  }
  return n;
}


// joint frictionloss under penalty contact: Coulomb's law regularized as the contacts' friction is, viscous
// below v_slip (C = F / v_slip) and |f| = F above (C = F / |v|), the coefficient frozen at the current
// velocity and the force -C v+ implicit (qfrc -= C v, add += dt C: M~ + dt C on the dof). A dof at rest under
// a load tau < F creeps at tau v_slip / F instead of sticking exactly (the constrained models' rows stick).
void phys_penalty_frictionloss(const physModel* m, const physData* d, double* qfrc, double* add) {
  double vs = m->opt.penalty_vslip, dt = m->opt.timestep;
  for (int k = 0; k < m->nv; k++) {
    double F = m->dof_frictionloss[k];
    if (!(F > 0)) continue;
    double v = d->qvel[k], C = F / fmax(fabs(v), vs);
    qfrc[k] -= C * v;
    add[k] += dt * C;
  }
}

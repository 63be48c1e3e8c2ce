// data.c - physData: one allocation holding state, computed quantities and the scratch arena.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "mlp.h"
#include "pbd.h"
#include "physid.h"

size_t phys_arena_pairkeys(const physModel* m) {
  size_t ng = (size_t)m->ngeom, all = ng * ng / 2 + 8, most = (size_t)1 << 18;
  return all < most ? all : most;
}

// the broad phase's scratch in doubles (collision.c): sweep entries (9 doubles each, a bound of sizeof(sweep_t)),
// plane and order lists, sort keys, the candidate keys, 8-double alignment of the 5 blocks
static size_t broad_phase_size(const physModel* m) {
  size_t ng = (size_t)m->ngeom;
  return 9 * ng + 2 * (ng / 2 + 1) + ng + 1 + phys_arena_pairkeys(m) + 5 * 8;
}

//---------------------------------------------------------------------------------------------------------
// the arena's size: the deepest call chain's need, stage by stage
//
// Every stage below states what it takes from the arena (doubles) as a function of the model's sizes and of
// the problem: v = nv, b = nbody, u = nu, c contacts, l limit rows (at most 2 per limited hinge or slide),
// n = 3c + l constraint rows, N = 7c + l Lemke variables (lcp.c: a normal, b+-, sigma per contact),
// f = frictionloss rows (at most v: phys_param_set may give any dof a frictionloss; plus 3c torsional and rolling
// rows when a geom has condim >= 4), p parameters, k =
// sizeof(physContact)/8 + 1 doubles per contact of a copied list, L = nconmax sizeof(physContact)/8 + 1
// doubles per detection list in scratch (phys_contact_list_arena: every list has the model's capacity),
// T = the derivatives' table budget
// (phys_arena_tables). The matrix terms are read off the allocation sites (file:function named per stage);
// the vectors and the 8-double alignment of every block are in one linear term per chain,
//   lin = 96 (n + v + f) + 64 b + 4096 (n, v, f-vectors of up to 96 live blocks; 6b spatial blocks ~10 deep).
// A chain is the sum of the stages nested in one call; phys_arena_need is the maximum over the calls.

typedef struct arenaDims_ {
  size_t v, b, u, c, l, n, N, f, p, k, L, T;
} arenaDims;

static size_t zmax(size_t a, size_t b) { return a > b ? a : b; }

// the contact-rows problem's J (n v) and G (n^2), kept through the solve (assemble.c:
// phys_constraint_assemble); while G is built, Y = M~^-1 J' (n v) and the support lists (n v / 2) (delassus)
static size_t st_assemble_kept(const arenaDims* a) { return a->n * a->v + a->n * a->n; }
static size_t st_assemble_tmp(const arenaDims* a) { return a->n * a->v + a->n * a->v / 2; }

// one solve on the kept J, G:
//   lcp (lcp.c): Lemke's tableau N^2 (lcp_lemke), or after it the clamping subsystem A (n^2, lcp_subsystem)
//     with its minimal-norm solve (X r k + H k^2 <= n^2, lcp_trapezoid_minnorm; LU n^2, lcp_try_lu):
//     max(N^2, 3 n^2)
//   cone (cone.c, admm.c): the blocks Gnn, Gtt, Gnt (<= n^2), the two ADMM factors (<= n^2), the polish's
//     columns and matrices (col k n + A k^2 + N k^2 <= 3 n^2; Newton's A, N 2 n^2): 5 n^2
//   ccp (ccp.c, admm.c): the scaled Gs (n^2), the ADMM factor (n^2), the polish (3 n^2): 5 n^2
//   frictionloss rows coupled to it (step.c: frictionloss_coupled, frictionloss.c): G (f^2), W E (v f),
//     G_cf (n f), the box solve's A (f^2), the tendon and angular rows R (v f; f counts 3 angular rows per
//     contact when a geom has condim >= 4, angular.c): 2 f^2 + f (n + 2 v)
//   split into islands (island.c: phys_solve_islands): one island's G (<= n^2), its contacts (c k) and its
//   solve, no larger than the whole problem's
static size_t st_solver(const arenaDims* a, int model) {
  size_t n2 = a->n * a->n, fl = 2 * a->f * a->f + a->f * (a->n + 2 * a->v), isl = n2 + a->c * a->k;
  if (model == PHYS_CONTACT_LCP) return zmax(a->N * a->N, 3 * n2) + fl + isl;
  return 5 * n2 + fl + isl;
}

// the constrained step (step.c: phys_step_constrained): the detected list (c k), the kept problem, then the
// larger of G's temporaries and the solve (the position correction solves again on the same J, G)
static size_t st_step(const arenaDims* a, int model) {
  if (model == PHYS_CONTACT_PENALTY)   // step.c penalty_dense: J and the angular rows (2 x 3 c v), H (v^2), the contacts (c k)
    return a->c * a->k + 3 * a->c * a->v + a->v * a->v;
  return a->c * a->k + st_assemble_kept(a) + zmax(st_assemble_tmp(a), st_solver(a, model));
}

// the constrained record (step_contact_deriv.c: point_build): the stage's detection list (L), its kept
// problem, its frictionloss rows (frictionloss.c phys_frictionloss_rows: G f^2, W E v f), M~'s factor (v^2)
// and Y = M~^-1 J' (n v); the kink's position problem solves once more on top (st_solver), then lcp's local
// structures are built and kept (st_local, chain_need)
static size_t st_record_kept(const arenaDims* a) {
  return a->L + st_assemble_kept(a) + a->f * a->f + a->v * a->f + a->v * a->v + a->n * a->v;
}

// the contacts' geometry derivatives, kept across a derivative's directions (contact_deriv.c geom_all: per
// contact its record and D, 7 x 18 columns at most)
static size_t st_geometry(const arenaDims* a) { return a->c * (7 * 18 + 16); }

// lcp's local structure of one problem (lcp_vjp.c: vjp_local H, A, P of the clamped rows m <= n, and its
// products' contact blocks 3 c^2)
static size_t st_local_one(const arenaDims* a) { return 3 * a->n * a->n + 3 * a->c * a->c; }

// cone's or ccp's local structure of the main problem (ccp_vjp.c phys_solve_ccp_local: A and the reverse
// factor 2 n^2, B and dP/dmu 12 c + l; while it is built the projections' Jacobians 9 c + l lie on top)
static size_t st_local_ccp(const arenaDims* a) { return 2 * a->n * a->n + 13 * a->c + 2 * a->l; }

// the local structures the constrained record keeps (step_contact_deriv.c point_build): lcp's for the velocity
// and the position problem, cone's and ccp's own for the velocity problem and lcp's for the (lcp) position
// problem; while one is built, its pseudo-inverse's scratch (st_pinv) lies on top
static size_t st_local(const arenaDims* a, int model) {
  return model == PHYS_CONTACT_LCP ? 2 * st_local_one(a) : st_local_one(a) + st_local_ccp(a);
}

// the clamped system's pseudo-inverse of m <= n rows (lcp_vjp.c phys_lcp_pinv: with zero rows set aside, their
// reduced copies Ar, Pr 2 n^2; then the Cholesky's W n^2 with vjp_pinv_factor's C r^2 + Z r m + T m^2 <= 3 n^2,
// or the SVD's W, U, Vt 3 n^2): 6 n^2 (cone's and ccp's reverse modes, ccp_vjp.c's N n^2, fit in it)
static size_t st_pinv(const arenaDims* a) { return 6 * a->n * a->n; }

// one direction's JVP of the contact problem (step_contact_jvp.c: contact_jvp dG n^2; the solver's JVP:
// ccp_vjp.c's forward factor n^2 (the Jacobian's copy of the local structure, or built per call) and
// refine_solve 2 n, lcp_vjp.c jvp_apply's dA n^2): 3 n^2
static size_t st_direction(const arenaDims* a) { return 3 * a->n * a->n; }

// the optional tables of cone and ccp (step_contact_jvp.c: solver_tables, taken when they fit in T):
// 2 n^2 (n + 1) + n (c + 1), else none
static size_t st_tables(const arenaDims* a, int model) {
  size_t ntab = 2 * a->n * a->n * (a->n + 1) + a->n * (a->c + 1);
  return model != PHYS_CONTACT_LCP && ntab <= a->T ? ntab : 0;
}

// the Delassus mass terms Y'dM~Y of ncol directions in blocks of B columns (step_contact_jvp.c: block_cols,
// B = T / (n^2 + 1) in [1, ncol]): n^2 B + 1 (cone and ccp; lcp forms products instead)
static size_t st_mass_blocks(const arenaDims* a, size_t ncol) {
  size_t n2 = a->n * a->n, b = a->T / (n2 + 1);
  b = b < 1 ? 1 : (b > ncol ? ncol : b);
  return n2 * b + 1;
}

// A of the constrained step (step_contact_jvp.c): the tables, jacobian_a's Fq, Fv, D0, kpos (4 v^2), Y'dM~Y
// (n^2), q_geometry (3 n v + 2 v^2), the mass blocks and mass_block_q's D (v^2), or lcp's products
// (q_products 8 n v, prod_matrix 2 v^2), one direction
static size_t st_jacobian_a(const arenaDims* a, int model) {
  size_t v2 = a->v * a->v, n2 = a->n * a->n, base = 4 * v2 + n2 + 3 * a->n * a->v + 2 * v2 + st_direction(a);
  if (model == PHYS_CONTACT_LCP) return base + 8 * a->n * a->v + 2 * v2;
  return st_tables(a, model) + base + st_mass_blocks(a, a->v) + v2;
}

// P of the constrained step (jacobian_p): R(a+), R0, R(vpos) (3 v p), Y'dM~Y (n^2), the mass blocks and
// tables, or lcp's products (p_products: Ru, Rup, Rc 7 v p), phys_param_forces' regressor (10 v b), one
// direction
static size_t st_jacobian_p(const arenaDims* a, int model) {
  size_t base = 3 * a->v * a->p + a->n * a->n + 10 * a->v * a->b + st_direction(a);
  if (model == PHYS_CONTACT_LCP) return base + 7 * a->v * a->p;
  return base + st_tables(a, model) + st_mass_blocks(a, a->p);
}

// the reverse mode (step_contact_vjp.c): J-sized adjoints (n v); lcp's reverse mode on the record's local
// structures, and with complementarity-aware labels (aware_vjp) one more local structure of the relabelled
// problem with its pseudo-inverse, or cone's and ccp's reverse mode on the record's local structure (3 n); the
// parameters' R (v p) and regressor (10 v b)
static size_t st_vjp(const arenaDims* a, int model) {
  size_t aware = model == PHYS_CONTACT_LCP ? st_local_one(a) : 0;
  return a->n * a->v + aware + st_pinv(a) + a->v * a->p + 10 * a->v * a->b;
}

// the time-of-impact correction (toi.c): the trial step's detection list (L) and delta (v^2, and M~'s inverse v^2), then the
// trial step (st_step) or the bounces' J, Y, K, U' and U (5 c v) with their Gram matrices (2 c^2)
static size_t st_toi(const arenaDims* a, int model) {
  return a->L + 2 * a->v * a->v + zmax(st_step(a, model), 5 * a->c * a->v + 2 * a->c * a->c);
}

// the sticking frictionloss rows' correction after A, B, P (step_contact_jvp.c phys_cp_stick_build: T 2 v f,
// H and its generalized inverse 2 f^2) beside the tables
static size_t st_stick(const arenaDims* a, int model) {
  return st_tables(a, model) + 2 * a->v * a->f + 2 * a->f * a->f;
}

// the penalty derivatives (penalty_deriv.c): the tape (J 3 c v, y c v, H 3 v^2, its detection list L),
// forward_prepare (Gq, Gv 2 K v^2 with K <= 3, Gu v u, gm c v, fq, fv 2 v^2, the actuation's v^2), the
// reverse pass (tape_vjp: Wq 3 c v; the regressor 10 v b, R v p)
static size_t st_penalty_deriv(const arenaDims* a) {
  size_t v2 = a->v * a->v, tape = 4 * a->c * a->v + 3 * v2 + a->L;
  size_t fwd = 6 * v2 + a->v * a->u + a->c * a->v + 3 * v2;
  size_t rev = 3 * a->c * a->v + 10 * a->v * a->b + a->v * a->p;
  return a->c * a->k + tape + zmax(fwd, rev);
}

// the smooth step's derivatives (step_deriv.c, param_forces.c): the factor and Gq, Gv (3 v^2), the
// regressor (10 v b), R (v p), the actuation and passive Jacobians (2 v^2)
static size_t st_smooth_deriv(const arenaDims* a) { return 5 * a->v * a->v + 10 * a->v * a->b + a->v * a->p; }

// the deepest chain of one contact model: the step, or a derivative on its record, inside the control
// layer's linearization (ddp.c linearize: A, B 4 v^2 + 2 v u), or the control layer's state cost alone
// (ddp.c phys_state_cost: r, scratch, g, H 12 v + 4 v^2)
static size_t chain_need(const arenaDims* a, int model) {
  size_t ctl = 4 * a->v * a->v + 2 * a->v * a->u, need = zmax(st_step(a, model), 12 * a->v + 4 * a->v * a->v);
  if (model == PHYS_CONTACT_PENALTY) {
    need = zmax(need, ctl + st_penalty_deriv(a));
  } else {
    size_t kept = st_record_kept(a), rec = kept + st_local(a, model);
    need = zmax(need, kept + st_solver(a, model));                              // the kink's position solve
    need = zmax(need, rec + st_pinv(a));                                        // a local structure's build
    size_t jac = zmax(zmax(st_jacobian_a(a, model), st_jacobian_p(a, model)), st_stick(a, model));
    need = zmax(need, ctl + rec + st_geometry(a) + jac);
    need = zmax(need, ctl + rec + st_toi(a, model));
    need = zmax(need, rec + st_geometry(a) + st_vjp(a, model));
  }
  need = zmax(need, ctl + st_smooth_deriv(a));
  // issue 16 item 4: the implicit step's derivatives (implicit_deriv.c): H's factor, three nv x nv blocks, a
  // spring's Hessian twice (21 v scratch each with a wrapped tendon's sliding tangent points, tendon_deriv.h),
  // and the VJP's dense A, B, P
  need = zmax(need, 11 * a->v * a->v + 2 * a->v * (a->u + a->p) + 46 * a->v);
  return need + 96 * (a->n + a->v + a->f) + 64 * a->b + 4096;
}

// 1 if some geom has condim >= 4 (torsional or rolling friction rows possible: src/contact/angular.c)
static int angular_friction(const physModel* m) {
  for (int g = 0; g < m->ngeom; g++)
    if (m->geom_condim[g] >= 4) return 1;
  return 0;
}

static void arena_dims(arenaDims* a, const physModel* m, int ncon, int nlim, int ntheta) {
  a->v = (size_t)m->nv, a->b = (size_t)m->nbody, a->u = (size_t)m->nu;
  a->c = (size_t)ncon, a->l = (size_t)nlim, a->n = 3 * a->c + a->l, a->N = 7 * a->c + a->l;
  a->f = a->v + (angular_friction(m) ? 3 * a->c : 0);   // (angular.c: up to 3 rows per contact with condim >= 4)
  a->p = (size_t)ntheta, a->k = sizeof(physContact) / sizeof(double) + 1;
  a->L = (size_t)m->nconmax * sizeof(physContact) / sizeof(double) + 1;
  a->T = phys_arena_tables(m);
}

// limit rows: two per limited hinge or slide at most (assemble.c: active_limits)
static int limit_rows(const physModel* m) {
  int l = 0;
  for (int j = 0; j < m->njnt; j++)
    l += m->jnt_limited[j] && (m->jnt_type[j] == PHYS_JNT_HINGE || m->jnt_type[j] == PHYS_JNT_SLIDE) ? 2 : 0;
  for (int e = 0; e < m->neq; e++)   // issue 15 item 1: equality rows are sized like limit rows
    l += m->eq_type[e] == PHYS_EQ_WELD ? 6 : m->eq_type[e] == PHYS_EQ_CONNECT ? 3 : 1;
  return l;
}

int phys_arena_ntheta_max(const physModel* m) {
  return 13 * m->nbody + 7 * m->nv + 13 * m->nu + 3 * m->nspring + 5 * m->ngeom + 5;
}

// the residual network's scratch (src/step/residual.c, src/grad/residual_deriv.c): features and their two
// tangent directions, activations (two points), backward scratch, outputs, its Jacobian's two nv x nv blocks,
// and the constrained step's force terms (M~, M~ dr/dx, d(M r)/dq: 5 nv x nv)
static size_t residual_need(const physModel* m) {
  const physMlp* n = m->residual;
  if (!n) return 0;
  size_t nf = (size_t)n->size[0], v = (size_t)m->nv;
  return 3 * nf + 2 * (size_t)phys_mlp_nact(n) + (size_t)phys_mlp_nwork(n) + 8 * v + 8 * v * v + 64;
}

size_t phys_arena_need(const physModel* m, int model, int ncon, int nlim, int ntheta) {
  arenaDims a;
  arena_dims(&a, m, ncon, nlim, ntheta);
  // the detection's own list (phys_collision_count), and the rollout gradient's two step lists (rollout.c)
  // around every chain; the finite-difference Jacobian's list (step_deriv.c) is inside them
  return chain_need(&a, model) + broad_phase_size(m) + 3 * a.L + residual_need(m);
}

size_t phys_arena_size(const physModel* m) {
  size_t need = 0;
  for (int model = 0; model < PHYS_NCONTACTMODEL; model++)
    need = zmax(need, phys_arena_need(m, model, m->nconmax, limit_rows(m), phys_arena_ntheta_max(m)));
  // the pbd step (issue 17): its own arrays besides the contact detection nested in it
  if (m->opt.integrator == PHYS_INT_PBD) need += phys_pbd_arena_need(m);
  return need;
}

// two Delassus matrices of the full list: (3 nconmax + limit rows)^2 doubles each
size_t phys_arena_tables(const physModel* m) {
  size_t n = 3 * (size_t)m->nconmax + (size_t)limit_rows(m);
  return 2 * n * n;
}

static size_t data_arrays_size(const physData* d) {
  size_t size = 0;
#define PHYS_X_SIZE(type, name, n, mult) size += ((sizeof(type) * (size_t)(d->n) * (size_t)(mult) + 7) / 8) * 8;
  const int nv = d->nv;  // second size of qM
  (void)nv;
  PHYS_DATA_ARRAYS(PHYS_X_SIZE)
#undef PHYS_X_SIZE
  return size;
}

physData* phys_make_data(const physModel* m) {
  physData* d = calloc(1, sizeof(physData));
  if (!d) return NULL;
  d->nq = m->nq;
  d->nv = m->nv;
  d->nbody = m->nbody;
  d->njnt = m->njnt;
  d->ngeom = m->ngeom;
  d->nsite = m->nsite;
  d->nspring = m->nspring;
  d->nu = m->nu;
  d->na = m->na;
  d->nconmax = m->nconmax;
  d->nsensordata = m->nsensordata;
  d->nstack = phys_arena_size(m);
  d->nbuffer = data_arrays_size(d) + d->nstack * sizeof(double);
  d->buffer = calloc(1, d->nbuffer);
  if (!d->buffer) {
    free(d);
    return NULL;
  }
  char* p = (char*)d->buffer;
#define PHYS_X_PTR(type, name, n, mult)                                          \
  d->name = (type*)p;                                                            \
  p += ((sizeof(type) * (size_t)(d->n) * (size_t)(mult) + 7) / 8) * 8;
  const int nv = d->nv;
  (void)nv;
  PHYS_DATA_ARRAYS(PHYS_X_PTR)
#undef PHYS_X_PTR
  d->stack = (double*)p;
  phys_reset_data(m, d);
  return d;
}

void phys_free_data(physData* d) {
  if (!d) return;
  free(d->buffer);
  free(d);
}

// qpos0, zero velocity, controls and applied forces, time 0, no warnings
void phys_reset_data(const physModel* m, physData* d) {
  memset(d->buffer, 0, d->nbuffer - d->nstack * sizeof(double));
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  d->time = 0;
  d->ncon = d->ncon_prev = d->ncon_dropped = d->nlimit = d->solver_iter = 0;
  d->solver_residual = 0;
  d->nlcp_local = d->nccp_local = 0;
  d->nwarning = 0;
  d->lastwarning[0] = 0;
  memset(d->warning_count, 0, sizeof d->warning_count);
  memset(d->warning_time, 0, sizeof d->warning_time);
  memset(d->warning_first, 0, sizeof d->warning_first);
  d->energy_start = d->energy_scale = d->energy_tstart = d->energy_poswork = 0;
  d->energy_tend = NAN;
  d->energy_state = 0;
  d->energy_input = 0;
  d->pstack = 0;
  d->pstack_max = 0;
}

physStatus phys_reset_keyframe(const physModel* m, physData* d, int k) {
  if (k < 0 || k >= m->nkey) return PHYS_ERR_ARG;
  phys_reset_data(m, d);
  d->time = m->key_time[k];
  memcpy(d->qpos, m->key_qpos + (size_t)k * m->nq, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, m->key_qvel + (size_t)k * m->nv, sizeof(double) * (size_t)m->nv);
  memcpy(d->ctrl, m->key_ctrl + (size_t)k * m->nu, sizeof(double) * (size_t)m->nu);
  if (m->na) memcpy(d->act, m->key_act + (size_t)k * m->na, sizeof(double) * (size_t)m->na);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// scratch arena

size_t phys_stack_mark(const physData* d) { return d->pstack; }

// n doubles from the arena, 8-double aligned. Exhausted: inside a guarded call, back to its guard
// (arena.h); outside one, a counted warning and NULL
double* phys_stack_alloc(physData* d, size_t n) {
  size_t start = (d->pstack + 7) & ~(size_t)7;
  if (start > d->nstack || n > d->nstack - start) {
    size_t free_ = d->nstack - (start < d->nstack ? start : d->nstack);
    physArenaGuard* g = d->arena_guard;
    if (g) {
      g->request = n, g->free = free_;
      longjmp(g->env, 1);
    }
    phys_data_warn(d, PHYS_WARN_OTHER, "phys_stack_alloc: scratch arena exhausted (%zu doubles asked, %zu free of %zu)",
                   n, free_, d->nstack);
    return NULL;
  }
  d->pstack = start + n;
  if (d->pstack > d->pstack_max) d->pstack_max = d->pstack;
  return d->stack + start;
}

void phys_arena_enter(physData* d, physArenaGuard* g) {
  g->prev = d->arena_guard;
  g->mark = d->pstack;
  g->request = g->free = 0;
  d->arena_guard = g;
}

void phys_arena_leave(physData* d, physArenaGuard* g) { d->arena_guard = g->prev; }

physStatus phys_arena_failed(physData* d, physArenaGuard* g, physWarning kind, const char* who) {
  d->arena_guard = g->prev;
  d->pstack = g->mark;
  phys_data_warn(d, kind, "%s: scratch arena exhausted (%zu doubles asked, %zu free of %zu)", who,
                 g->request, g->free, d->nstack);
  return PHYS_ERR_NOMEM;
}

void phys_stack_free(physData* d, size_t mark) { d->pstack = mark; }

// count a warning of the given kind whose text is already in d->lastwarning; the kind's first one keeps
// its text and time
static void count_warning(physData* d, physWarning kind) {
  if ((int)kind < 0 || kind >= PHYS_NWARNKIND) kind = PHYS_WARN_OTHER;
  d->nwarning++;
  if (d->warning_count[kind]++ == 0) {
    d->warning_time[kind] = d->time;
    memcpy(d->warning_first[kind], d->lastwarning, sizeof d->lastwarning);
  }
}

// count a numerical warning of kind PHYS_WARN_OTHER and keep its text
void phys_data_warning(physData* d, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->lastwarning, sizeof(d->lastwarning), fmt, ap);
  va_end(ap);
  count_warning(d, PHYS_WARN_OTHER);
}

// count a numerical warning of a kind and keep its text
void phys_data_warn(physData* d, physWarning kind, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->lastwarning, sizeof(d->lastwarning), fmt, ap);
  va_end(ap);
  count_warning(d, kind);
}

static const char* const WARNING_NAMES[PHYS_NWARNKIND] = {
    "other", "initial overlap", "solver not converged", "solver failed", "contacts dropped", "energy gain",
    "step rejected"};

const char* phys_warning_name(int kind) {
  return kind >= 0 && kind < PHYS_NWARNKIND ? WARNING_NAMES[kind] : "unknown";
}

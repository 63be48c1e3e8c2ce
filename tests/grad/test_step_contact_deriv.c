// test_step_contact_deriv.c - derivatives of the constrained step (src/grad/step_contact_deriv.c) for the
// contact models lcp, cone and ccp:
//  1. A, B against phys_step_jacobian_fd (central differences of phys_step at h = 1e-6 with warm starts
//     restored) to 1e-4 relative (grad_models.h's gm_compare, floor 1e-4 of the block scale) on: a cube sliding
//     on a plane, a cube tumbling onto a corner, a cube resting (sticking, position correction active), two
//     equal balls colliding head-on, the double pendulum at its elbow limit, MuJoCo's humanoid lying on the
//     floor and the elbow of the toss data (boxes on a plane). States away from mode switches: the
//     differences at h and 10 h must agree to 1e-3 and the second differences be below 1e-2 of the first (a
//     row switching within 10 h moves one of them by O(1); a kink at the state gives a second difference of
//     the order of the first);
//     the humanoid and the elbow are stepped until they do (the count is printed), the others are set so;
//     the smallest clamped normal impulse and separating row velocity are printed;
//  2. exact: the head-on elastic collision's velocity block d(v1x+, v2x+)/d(v1x, v2x) = [[0, 1], [1, 0]]
//     (lcp) to 1e-12; the same collision at friction 0 (every model): no tangential response (issue 10 item 13);
//  3. dot-product tests <y, A x> = <A'y, x>, <y, B u> = <B'y, u>, <y, P t> = <P'y, t> to 1e-12;
//  4. P = dx+/dtheta (mass, inertia, friction, restitution, size, pos, damping) against central differences of
//     phys_step over each parameter to 1e-4;
//  5. the derivative calls leave d so that the next phys_step is bit-identical (warm starts restored);
//     phys_step_point's qacc is the step's (v+ - v)/dt bit for bit;
//  6. the rollout gradient through 30 steps of the box sliding on the floor: dL/dx0 and
//     dL/dtheta against central differences of phys_rollout's loss, checkpointed (k = 6) bit for bit the
//     full tape (k = 1).
//  7. the complementarity-aware reverse mode on paper 001's lifted ball (test_complementarity);
//  8. the friction derivative at friction exactly 0 (test_friction_zero);
//  9. the position correction's kink at rest: the humanoid's root-height column equals the one-sided difference
//     lowering it (test_resting_kink);
// 10. a margin impact (test_margin_impact: a ball 2 mm above the floor inside its 1 cm margin at v = (5, 1, -3),
//     the gap closing within the step, so the step moves it by the time of impact, assemble.c
//     phys_normal_bias): A, B, P (friction, mass, size, restitution) against central differences and the dot
//     tests, at restitution 0.3 and 0; at 0 the restitution column against the one-sided difference from
//     above (restitution cannot go below 0).
// 11. the tumbling cube of 1. with a residual acceleration network (src/step/residual.h, a tanh network of
//     2 x 16 whose output is of the order of g): A, P (mass, friction, size) and the dot tests as in 1.-4.
//     (test_box_residual).
// 12. issue 14 item 2: P's columns in a learned shape's 24 vertex coordinates (vertices:box, the hull remade at
//     every parameter change) against central differences and the dot tests: a corner contact, a triangular face
//     (3 hull vertices in contact) and a vertex moved inside the hull, whose columns are exactly 0 (test_vertices).
// ccp's humanoid is checked for switches within 2 h instead of 10 h: its gliding contacts sit at
// dist = dt mu |v_t| ~ 2e-6 m (ccp's envelope, contact.h), within 10 h of the bias's kink at dist = 0
// (b = dist/dt above, restitution below), so no state passes at 10 h. ccp's sliding box is taken at its
// first step: its relaxation lifts the box off at mu |v_t| within one step.
// cone on the sliding box with a spin (omega_z = 2, 4 coplanar corners, G singular) is off: dq+/dmu 2x,
// A 3.7e-4, and its solver-level JVP and VJP disagree (dot test 3e-7): the known limitation of
// ccp_vjp.c's singular sliding box, so cone's sliding box does not spin (lcp's and ccp's do).
// cone and ccp run at solver_tolerance 1e-11: at the default 1e-10 their residual over h = 1e-6 puts 1e-3
// of noise into the differences of entries that are exactly 0.
#include "collision.h"
#include "grad_models.h"
#include "mlp.h"
#include "params.h"
#include "residual.h"
#include "rollout.h"
#include "spec.h"
#include "step.h"
#include "step_contact_deriv.h"
#include "urdf.h"

#define CT_H 1e-6      // central-difference step
#define CT_TOL 1e-4    // relative tolerance in contact away from mode switches (issue 4)
#define CT_SWITCH 1e-3 // differences at h and 10 h agree to this when no row switches (a switch: O(1))
#define CT_SOLVER_TOL 1e-11  // cone and ccp converge to this (default 1e-10: noise 1e-3 in differences at h)
#define CT_KINK 1e-2   // second differences (f(x+h) + f(x-h) - 2 f(x)) / 2h below this of the first

static const char* model_name[3] = {"lcp", "cone", "ccp"};
static const int model_kind[3] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP};

//---------------------------------------------------------------------------------------------------------
// state snapshots (the warm starts included)

typedef struct snap_ {
  double time;
  int ncon, ncon_prev, ncon_dropped;
  double *qpos, *qvel;
  physContact *con, *prev;
} snap;

static void snap_take(const physModel* m, const physData* d, snap* s) {
  s->time = d->time;
  s->ncon = d->ncon;
  s->ncon_prev = d->ncon_prev;
  s->ncon_dropped = d->ncon_dropped;
  s->qpos = malloc(sizeof(double) * (size_t)m->nq);
  s->qvel = malloc(sizeof(double) * (size_t)m->nv);
  s->con = malloc(sizeof(physContact) * (size_t)(m->nconmax + 1));
  s->prev = malloc(sizeof(physContact) * (size_t)(m->nconmax + 1));
  memcpy(s->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(s->qvel, d->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(s->con, d->contact, sizeof(physContact) * (size_t)d->ncon);
  memcpy(s->prev, d->contact_prev, sizeof(physContact) * (size_t)d->ncon_prev);
}

static void snap_load(const physModel* m, physData* d, const snap* s) {
  d->time = s->time;
  d->ncon = s->ncon;
  d->ncon_prev = s->ncon_prev;
  d->ncon_dropped = s->ncon_dropped;
  memcpy(d->qpos, s->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, s->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(d->contact, s->con, sizeof(physContact) * (size_t)s->ncon);
  memcpy(d->contact_prev, s->prev, sizeof(physContact) * (size_t)s->ncon_prev);
}

static void snap_free(snap* s) { free(s->qpos), free(s->qvel), free(s->con), free(s->prev); }

//---------------------------------------------------------------------------------------------------------
// the solution's distance to mode switches (printed)

// smallest clamped normal impulse and smallest separating row velocity w = G lambda + g of the step's
// solution at d's state; *n rows, *npos penetrating rows
static void margins(const physModel* m, physData* d, double* lmin, double* wmin, int* n, int* npos) {
  snap s;
  snap_take(m, d, &s);
  size_t mark = phys_stack_mark(d);
  physStepStage st;
  *lmin = *wmin = INFINITY;
  *n = *npos = 0;
  physWarmStart warm = {s.ncon, s.con};   // the caller's list, as phys_step would take it
  physContactList con = phys_contact_list_arena(d);
  if (phys_step_stage(m, d, NULL, &warm, &con, &st) == 1) {
    const physConstraintProblem* p = &st.p;
    *n = p->n;
    *npos = p->npos;
    for (int r = 0; r < p->n; r++) {
      int normal = r >= 3 * p->nc || r % 3 == 0;
      double w = p->g[r];
      for (int c = 0; c < p->n; c++) w += p->G[(size_t)r * p->n + c] * st.sol.lambda[c];
      if (normal && st.sol.state[r] == PHYS_ROW_CLAMPING) *lmin = fmin(*lmin, st.sol.lambda[r]);
      if (normal && st.sol.state[r] == PHYS_ROW_SEPARATING) *wmin = fmin(*wmin, w);
    }
  }
  phys_stack_free(d, mark);
  snap_load(m, d, &s);
  snap_free(&s);
}

//---------------------------------------------------------------------------------------------------------
// checks at one state

// x+ (-) x+_ref (2nv) of one phys_step from snapshot s with input j (q tangent j < nv, else v) moved by h
static void response(const physModel* m, physData* d, const snap* s, int j, double h, const double* qr,
                     const double* vr, double* res) {
  int nv = m->nv;
  snap_load(m, d, s);
  if (j < nv) {
    double* e = calloc(nv, sizeof(double));
    e[j] = 1;
    phys_integrate_pos(m, d->qpos, e, h);
    free(e);
  } else {
    d->qvel[j - nv] += h;
  }
  phys_step(m, d);
  phys_difference_pos(m, res, 1, qr, d->qpos);
  for (int i = 0; i < nv; i++) res[nv + i] = d->qvel[i] - vr[i];
}

// the outer step of smooth_here in units of h: a row switching within switch_radius h is detected
static double switch_radius = 10;

// 1 if no row switches within 10 h of the state in any state direction: the central differences at h and
// 10 h agree to CT_SWITCH, and the second differences are small against the first (a kink, as
// min(J_n v, 0) at J_n v = 0, has symmetric central differences but a second difference of order h)
static int smooth_here(const physModel* m, physData* d) {
  double H = switch_radius * CT_H;
  int nv = m->nv, n2 = 2 * nv, ok = 1;
  snap s;
  snap_take(m, d, &s);
  double *qr = malloc(sizeof(double) * m->nq), *vr = malloc(sizeof(double) * nv);
  double *p1 = malloc(sizeof(double) * n2), *m1 = malloc(sizeof(double) * n2);
  double *p10 = malloc(sizeof(double) * n2), *m10 = malloc(sizeof(double) * n2);
  double *C = malloc(sizeof(double) * n2 * n2), *C10 = malloc(sizeof(double) * n2 * n2);
  double* S = malloc(sizeof(double) * n2 * n2);
  int nwarn = d->nwarning;
  phys_step(m, d);
  memcpy(qr, d->qpos, sizeof(double) * m->nq);
  memcpy(vr, d->qvel, sizeof(double) * nv);
  for (int j = 0; j < n2; j++) {
    response(m, d, &s, j, CT_H, qr, vr, p1);
    response(m, d, &s, j, -CT_H, qr, vr, m1);
    response(m, d, &s, j, H, qr, vr, p10);
    response(m, d, &s, j, -H, qr, vr, m10);
    for (int i = 0; i < n2; i++) {
      C[i * n2 + j] = (p1[i] - m1[i]) / (2 * CT_H);
      C10[i * n2 + j] = (p10[i] - m10[i]) / (2 * H);
      S[i * n2 + j] = (p1[i] + m1[i]) / (2 * CT_H);   // h f''/2: O(h) only at a kink
    }
  }
  ok = d->nwarning == nwarn;
  double scale = fmax(gm_maxabs(C, n2 * n2), 1), worst = 0, kink = 0;
  int wi = -1, ki = -1;
  for (int i = 0; i < n2 * n2; i++) {
    double f = fmax(fabs(C[i]), GM_FLOOR * scale), e = fabs(C[i] - C10[i]) / f, k = fabs(S[i]) / f;
    if (e > worst) worst = e, wi = i;
    if (k > kink) kink = k, ki = i;
  }
  if (worst > CT_SWITCH || kink > CT_KINK) ok = 0;
  if (getenv("CT_VERBOSE"))
    printf("  smooth_here: h vs 10h %.3g at (%d, %d); second difference %.3g at (%d, %d) (ncon %d)\n", worst,
           wi / n2, wi % n2, kink, ki / n2, ki % n2, d->ncon);
  snap_load(m, d, &s);
  snap_free(&s);
  free(qr), free(vr), free(p1), free(m1), free(p10), free(m10), free(C), free(C10), free(S);
  int n, npos;
  double lmin, wmin;
  margins(m, d, &lmin, &wmin, &n, &npos);
  return ok && n > 0;
}

// step until smooth_here (at most tries steps); returns the steps taken, -1 if none was smooth
static int step_to_smooth(const physModel* m, physData* d, int tries) {
  for (int k = 0; k <= tries; k++) {
    if (smooth_here(m, d)) return k;
    phys_step(m, d);
  }
  return -1;
}

// P by central differences of phys_step over each parameter (theta restored)
static void param_fd(physModel* m, physData* d, const physParamTable* t, double* P) {
  int nv = m->nv, nt = t->ntheta;
  snap s;
  snap_take(m, d, &s);
  double *th = malloc(sizeof(double) * nt), *th0 = malloc(sizeof(double) * nt);
  double *qp = malloc(sizeof(double) * m->nq), *vp = malloc(sizeof(double) * nv);
  double* dq = malloc(sizeof(double) * nv);
  phys_param_get(t, m, th0);
  for (int j = 0; j < nt; j++) {
    double h = CT_H * fmax(1, fabs(th0[j]));
    memcpy(th, th0, sizeof(double) * nt);
    th[j] = th0[j] + h;
    CHECK(phys_param_set(t, m, th) == PHYS_OK);
    snap_load(m, d, &s);
    phys_step(m, d);
    memcpy(qp, d->qpos, sizeof(double) * m->nq);
    memcpy(vp, d->qvel, sizeof(double) * nv);
    th[j] = th0[j] - h;
    CHECK(phys_param_set(t, m, th) == PHYS_OK);
    snap_load(m, d, &s);
    phys_step(m, d);
    phys_difference_pos(m, dq, 1, d->qpos, qp);
    for (int i = 0; i < nv; i++) {
      P[(size_t)i * nt + j] = dq[i] / (2 * h);
      P[(size_t)(nv + i) * nt + j] = (vp[i] - d->qvel[i]) / (2 * h);
    }
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  snap_load(m, d, &s);
  snap_free(&s);
  free(th), free(th0), free(qp), free(vp), free(dq);
}

// relative dot-product error |y'(J x) - (J'y)'x| / sum |y_i J_ij x_j|
static double dot_err(const double* J, const double* y, const double* x, const double* Jty, int rows, int cols) {
  double scale, yJx = gm_bilinear(J, y, x, rows, cols, &scale), s = 0;
  for (int j = 0; j < cols; j++) s += Jty[j] * x[j];
  return fabs(yJx - s) / fmax(scale, 1e-300);
}

static double worst_all = 0, worst_dot = 0;

// every check at d's state; spec entries of t (may be NULL) for P
static void check_state(const char* name, physModel* m, physData* d, const physParamTable* t) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv, nt = t ? t->ntheta : 0;
  double *A = calloc(n2 * n2, sizeof(double)), *Af = calloc(n2 * n2, sizeof(double));
  double *B = calloc(n2 * nu + 1, sizeof(double)), *Bf = calloc(n2 * nu + 1, sizeof(double));
  double *P = calloc(n2 * nt + 1, sizeof(double)), *Pf = calloc(n2 * nt + 1, sizeof(double));
  double *y = malloc(sizeof(double) * n2), *x = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2);
  double *u = malloc(sizeof(double) * (nu + 1)), *ub = malloc(sizeof(double) * (nu + 1));
  double *th = malloc(sizeof(double) * (nt + 1)), *tb = malloc(sizeof(double) * (nt + 1));
  double *q1 = malloc(sizeof(double) * m->nq), *v1 = malloc(sizeof(double) * nv);
  snap s;
  snap_take(m, d, &s);
  double lmin, wmin;
  int n, npos;
  margins(m, d, &lmin, &wmin, &n, &npos);
  CHECK_MSG(n > 0, "%s: the step has no constraint rows", name);

  // the reference step
  phys_step(m, d);
  memcpy(q1, d->qpos, sizeof(double) * m->nq);
  memcpy(v1, d->qvel, sizeof(double) * nv);
  int nwarn = d->nwarning;
  snap_load(m, d, &s);

  // the linearization point: d->qacc is the step's (v+ - v)/dt bit for bit
  double* L = malloc(sizeof(double) * nv * nv);
  double* acc = malloc(sizeof(double) * nv);
  for (int i = 0; i < nv; i++) acc[i] = (v1[i] - s.qvel[i]) / m->opt.timestep;
  CHECK_MSG(phys_step_point(m, d, L) == PHYS_OK, "%s: phys_step_point", name);
  CHECK_MSG(memcmp(acc, d->qacc, sizeof(double) * nv) == 0, "%s: phys_step_point's qacc is not the step's", name);
  free(L), free(acc);
  snap_load(m, d, &s);

  // analytic, then the next step must be the reference bit for bit
  CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_OK, "%s: phys_step_jacobian", name);
  phys_step(m, d);
  CHECK_MSG(memcmp(q1, d->qpos, sizeof(double) * m->nq) == 0 && memcmp(v1, d->qvel, sizeof(double) * nv) == 0,
            "%s: the step after phys_step_jacobian differs", name);
  snap_load(m, d, &s);

  // against central differences
  CHECK(phys_step_jacobian_fd(m, d, CT_H, Af, Bf) == PHYS_OK);
  char what[160];
  snprintf(what, sizeof what, "%s A", name);
  double eA = gm_compare(what, A, Af, n2, n2, 1, CT_TOL), eB = 0, eP = 0;
  if (nu > 0) {
    snprintf(what, sizeof what, "%s B", name);
    eB = gm_compare(what, B, Bf, n2, nu, 1, CT_TOL);
  }

  // dot-product tests of the VJP
  physRng r;
  phys_rng_seed(&r, 7);
  gm_rand_vec(&r, y, n2);
  gm_rand_vec(&r, x, n2);
  gm_rand_vec(&r, u, nu);
  CHECK(phys_step_vjp(m, d, y, xb, ub) == PHYS_OK);
  double dA = dot_err(A, y, x, xb, n2, n2), dB = nu > 0 ? dot_err(B, y, u, ub, n2, nu) : 0, dP = 0;
  phys_step(m, d);
  CHECK_MSG(memcmp(q1, d->qpos, sizeof(double) * m->nq) == 0 && memcmp(v1, d->qvel, sizeof(double) * nv) == 0,
            "%s: the step after phys_step_vjp differs", name);
  snap_load(m, d, &s);

  // parameters
  if (nt > 0) {
    CHECK_MSG(phys_step_param_jacobian(m, d, t, P) == PHYS_OK, "%s: phys_step_param_jacobian", name);
    param_fd(m, d, t, Pf);
    snprintf(what, sizeof what, "%s P", name);
    eP = gm_compare(what, P, Pf, n2, nt, 1, CT_TOL);
    gm_rand_vec(&r, th, nt);
    CHECK(phys_step_param_vjp(m, d, t, y, tb) == PHYS_OK);
    dP = dot_err(P, y, th, tb, n2, nt);
    snap_load(m, d, &s);
  }
  CHECK_MSG(dA <= GM_DOT_TOL && dB <= GM_DOT_TOL && dP <= GM_DOT_TOL, "%s: dot tests %.3g %.3g %.3g", name, dA,
            dB, dP);
  CHECK_MSG(d->nwarning == nwarn, "%s: warnings raised", name);
  printf("%-24s rows %3d (pos %2d)  min clamped lambda_n %.2e, min separating w_n %.2e | A %.2e  B %.2e  P %.2e "
         "(%d params) | dot %.1e %.1e %.1e\n", name, n, npos, lmin, wmin, eA, eB, eP, nt, dA, dB, dP);
  worst_all = fmax(worst_all, fmax(eA, fmax(eB, eP)));
  worst_dot = fmax(worst_dot, fmax(dA, fmax(dB, dP)));
  snap_free(&s);
  free(A), free(Af), free(B), free(Bf), free(P), free(Pf), free(y), free(x), free(xb), free(u), free(ub), free(th);
  free(tb), free(q1), free(v1);
}

// parameter table from specs or exit
static physParamTable table(const physModel* m, const char* const* spec, int n) {
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  if (phys_param_table_build(&t, m, spec, n, &log) != PHYS_OK) {
    fprintf(stderr, "param table: %s\n", log.error);
    exit(2);
  }
  return t;
}

// step until away from switches (at most tries steps; the count is printed), then every check of the file there
static void settle_and_check(const char* name, physModel* m, physData* d, const physParamTable* t, int tries) {
  int taken = step_to_smooth(m, d, tries);
  CHECK_MSG(taken >= 0, "%s: no state without a mode switch in %d steps", name, tries);
  printf("%s: %d extra steps to a state away from switches\n", name, taken);
  if (taken >= 0) check_state(name, m, d, t);
}

// quaternion of a rotation by angle a about the unit axis (x, y, z)
static void axis_quat(double q[4], double x, double y, double z, double a) {
  double s = sin(a / 2), n = sqrt(x * x + y * y + z * z);
  q[0] = cos(a / 2), q[1] = s * x / n, q[2] = s * y / n, q[3] = s * z / n;
}

//---------------------------------------------------------------------------------------------------------
// scenes

// the box tumbling: turned about (1, 2, 0), one corner 2e-4 deep, falling and spinning
static void tumbling_state(physModel* m, physData* d) {
  phys_reset_data(m, d);
  axis_quat(d->qpos + 3, 1, 2, 0, 0.6);
  d->qpos[2] = 0.5;
  phys_kinematics(m, d);
  double lo = INFINITY;
  m->geom_margin[0] = m->geom_margin[1] = 1;
  phys_collision(m, d);
  for (int i = 0; i < d->ncon; i++) lo = fmin(lo, d->contact[i].dist);
  m->geom_margin[0] = m->geom_margin[1] = 0;
  d->ncon = 0;
  d->qpos[2] -= lo + 2e-4;
  d->qvel[0] = 0.4, d->qvel[1] = -0.2, d->qvel[2] = -0.3, d->qvel[3] = 1, d->qvel[4] = -2, d->qvel[5] = 0.5;
}

// the cube on the plane under contact model k
static physModel* box_model(int k) {
  physModel* m = gm_load("tests/data/contact/box_plane.xml", 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  // friction 0.3 (the floor's, the pair's maximum): at 0.5 the lcp pyramid's friction torque leaves a sliding
  // corner with exactly zero load (mu h / a = 1/2 per axis), a tie
  m->geom_friction[3 * phys_name2id(m, "geom", "floor")] = 0.3;
  m->geom_friction[3 * phys_name2id(m, "geom", "box")] = 0.2;
  return m;
}

static const char* box_spec[] = {"mass:box", "friction:floor", "friction:box", "restitution:box", "size:box"};

// the cube on the plane: sliding (settled for 20 steps), tumbling onto a corner, resting with penetration
static void test_box(int k) {
  physModel* m = box_model(k);
  physData* d = phys_make_data(m);
  static const char* rest_spec[] = {"mass:box", "friction:floor", "size:box"};
  physParamTable t = table(m, rest_spec, 3);
  char name[64];

  // sliding along (1, 0.3) on its face; restitution 0 (a sliding or resting contact's J_n v ~ 0 sits on
  // the kink of eps min(J_n v, 0))
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 - 3e-5;   // 3e-5 deep: away from dist = 0, where lcp's contacts vanish
  d->qvel[0] = 1, d->qvel[1] = 0.3;
  // spinning (omega_z = 2) except with cone (see the file comment): at omega_z = 0 the four corners share one
  // slip direction and ccp's load distribution has a kink in omega_z
  d->qvel[5] = model_kind[k] == PHYS_CONTACT_CONE ? 0 : 2;
  if (model_kind[k] != PHYS_CONTACT_CCP) phys_step(m, d);   // ccp's relaxation lifts the box off in one step
  snprintf(name, sizeof name, "box sliding %s", model_name[k]);
  settle_and_check(name, m, d, &t, 20);

  // tumbling: turned about (1, 2, 0), one corner 2e-4 deep, falling and spinning; restitution 0.3 (the
  // box's, the pair's maximum)
  phys_param_table_free(&t);
  t = table(m, box_spec, 5);
  m->geom_restitution[phys_name2id(m, "geom", "box")] = 0.3;
  tumbling_state(m, d);
  snprintf(name, sizeof name, "box tumbling %s", model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  check_state(name, m, d, &t);

  // resting, 3e-4 deep (position correction on), after 5 steps of settling; restitution 0 again
  phys_param_table_free(&t);
  t = table(m, rest_spec, 3);
  m->geom_restitution[phys_name2id(m, "geom", "box")] = 0;
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 - 3e-4;
  for (int i = 0; i < 5; i++) phys_step(m, d);
  snprintf(name, sizeof name, "box resting %s", model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  check_state(name, m, d, &t);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// height:floor (issue 14, s29): the plane's offset along its normal, with friction and the box's size, at the
// sliding, tumbling and resting states of test_box (the floor raised by 0.1 mm first, so the offset is not 0)
static void test_height(int k) {
  physModel* m = box_model(k);
  physData* d = phys_make_data(m);
  static const char* spec[] = {"height:floor", "friction:floor", "size:box"};
  physParamTable t = table(m, spec, 3);
  double th[8];
  phys_param_get(&t, m, th);
  th[0] = 1e-4;
  CHECK(phys_param_set(&t, m, th) == PHYS_OK);
  char name[64];
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 + 1e-4 - 3e-5;
  d->qvel[0] = 1, d->qvel[1] = 0.3;
  d->qvel[5] = model_kind[k] == PHYS_CONTACT_CONE ? 0 : 2;
  if (model_kind[k] != PHYS_CONTACT_CCP) phys_step(m, d);
  snprintf(name, sizeof name, "height sliding %s", model_name[k]);
  settle_and_check(name, m, d, &t, 20);
  tumbling_state(m, d);
  snprintf(name, sizeof name, "height tumbling %s", model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  check_state(name, m, d, &t);
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 + 1e-4 - 3e-4;
  for (int i = 0; i < 5; i++) phys_step(m, d);
  snprintf(name, sizeof name, "height resting %s", model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  check_state(name, m, d, &t);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// two equal balls head-on, touching (dist -5e-6, inside the slop), restitution 1, friction 0.5 or (frictionless
// = 1) 0: a frictionless contact has no tangential response in any model, so besides the differences the
// sticking-friction entries cone and ccp once had (d(w2z+)/d(y1) = -17.86, d(w2z+)/d(v1y) = -25/7: their
// natural maps took v_t = 0 with radius 0 as sticking) must be 0 exactly
static void test_balls(int k, int frictionless) {
  physModel* m = gm_load("tests/data/contact/balls_collide.xml", 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  if (frictionless)
    for (int g = 0; g < m->ngeom; g++) m->geom_friction[3 * g] = 0;
  physData* d = phys_make_data(m);
  static const char* spec[] = {"mass:ball1", "size:ball2", "friction:ball2"};
  physParamTable t = table(m, spec, frictionless ? 2 : 3);   // friction at 0 has a one-sided derivative only
  phys_reset_data(m, d);
  d->qpos[0] = -0.2 + 5e-6;
  d->qpos[7] = 0;
  d->qvel[0] = 1;
  char name[64];
  snprintf(name, sizeof name, "balls head-on%s %s", frictionless ? " mu=0" : "", model_name[k]);
  check_state(name, m, d, &t);
  int nv = m->nv, n2 = 2 * nv;
  double* A = malloc(sizeof(double) * n2 * n2);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  if (model_kind[k] == PHYS_CONTACT_LCP) {
    // the velocity exchange: rows v1x+, v2x+ (nv + 0, nv + 6), columns v1x, v2x
    double e[4] = {A[(size_t)nv * n2 + nv], A[(size_t)nv * n2 + nv + 6], A[(size_t)(nv + 6) * n2 + nv],
                   A[(size_t)(nv + 6) * n2 + nv + 6]};
    CHECK_NEAR(e[0], 0, 1e-12);
    CHECK_NEAR(e[1], 1, 1e-12);
    CHECK_NEAR(e[2], 1, 1e-12);
    CHECK_NEAR(e[3], 0, 1e-12);
    printf("balls head-on lcp: d(v1x+, v2x+)/d(v1x, v2x) = [[%.3g, %.17g], [%.17g, %.3g]]\n", e[0], e[1], e[2], e[3]);
  }
  if (frictionless) {
    // row w2z+ (nv + 11), columns y1 (1) and v1y (nv + 1)
    double a = A[(size_t)(nv + 11) * n2 + 1], b = A[(size_t)(nv + 11) * n2 + nv + 1];
    CHECK_MSG(fabs(a) < 1e-12 && fabs(b) < 1e-12, "%s: d(w2z+)/d(y1) = %.6g, d(w2z+)/d(v1y) = %.6g, not 0", name, a, b);
  }
  free(A);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// the double pendulum 1e-4 beyond its elbow limit, moving into it
static void test_limit(int k) {
  physModel* m = gm_load("tests/data/contact/double_pendulum_limit.xml", 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  // the elbow's motor made a position servo with a velocity term (forces that depend on q and v), the
  // shoulder's given a gain and a bias: their parameters through every contact model
  int el = phys_name2id(m, "actuator", "elbow"), sh = phys_name2id(m, "actuator", "shoulder");
  m->actuator_gainprm[3 * el] = 4, m->actuator_biasprm[3 * el + 1] = -4, m->actuator_biasprm[3 * el + 2] = -0.3;
  m->actuator_gainprm[3 * sh] = 1.5, m->actuator_biasprm[3 * sh] = 0.05;
  physData* d = phys_make_data(m);
  static const char* spec[] = {"mass:link2", "damping:elbow", "inertia:link1", "kp:elbow", "gain:shoulder",
                               "bias:shoulder"};
  physParamTable t = table(m, spec, 6);
  phys_reset_data(m, d);
  d->qpos[0] = 0.3, d->qpos[1] = 1 + 1e-4;
  d->qvel[0] = -0.2, d->qvel[1] = 0.5;
  d->ctrl[0] = 0.1, d->ctrl[1] = -0.05;
  char name[64];
  snprintf(name, sizeof name, "pendulum limit %s", model_name[k]);
  check_state(name, m, d, &t);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// MuJoCo's humanoid dropped lying on its back, stepped until no row is near a switch
static void test_humanoid(int k) {
  physModel* m = gm_load(GM_HUMANOID, 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  physData* d = phys_make_data(m);
  static const char* spec[] = {"friction:floor", "mass:torso", "size:torso", "pos:right_shin", "pos:left_thigh"};
  physParamTable t = table(m, spec, 5);
  phys_reset_data(m, d);
  axis_quat(d->qpos + 3, 0, 1, 0, -M_PI / 2);
  d->qpos[2] = 0.25;
  for (int i = 0; i < 400 && d->ncon == 0; i++) phys_step(m, d);
  phys_step(m, d);
  char name[64];
  snprintf(name, sizeof name, "humanoid floor %s", model_name[k]);
  settle_and_check(name, m, d, &t, 40);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// 9. the kink convention of the position correction (issue 10 item 14; step_contact_deriv.c
// kink_position_problem): MuJoCo's humanoid settled on its back for 300 steps, at rest: its contacts sit on
// the correction's kink (dist + slop within PHYS_CONTACT_SLOP_TOL = 1e-8 m of 0, where the step stops
// correcting: counted, at least one), so lowering the root corrects them and raising it does not. The
// Jacobian's root-height column dx+/dz is the derivative of the correcting side: the one-sided difference
// lowering the root, to CT_TOL (relative, floor 1e-4 of the column's scale), and it is a kink (the raising
// side differs by more than 0.1 of the scale). A row eps from the step's threshold starts its correction only
// after the root has dropped eps, or at once with a jump of beta eps, which adds c/h to the one-sided quotient
// D(h) = (x+(z - h) - x+(z)) / -h (c = beta eps J: 6.5e-4 relative at h = 1e-6 on lcp's settled humanoid);
// 2 D(2h) - D(h) (h = 1e-6) removes it, leaving O(h). The reverse mode agrees with A (dot-product test).
// phys_constrained_step_kinks counts the contacts on it (and the joint limits at rest). lcp and cone (ccp's perturbed steps at rest do not all
// converge to the tolerance).
static void test_resting_kink(int k) {
  physModel* m = gm_load(GM_HUMANOID, 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  physData* d = phys_make_data(m);
  phys_reset_data(m, d);
  axis_quat(d->qpos + 3, 0, 1, 0, -M_PI / 2);
  d->qpos[2] = 0.25;
  for (int i = 0; i < 400 && d->ncon == 0; i++) phys_step(m, d);
  for (int i = 0; i < 300; i++) phys_step(m, d);
  int nv = m->nv, n2 = 2 * nv, atkink = 0, ncon, nwarn = d->nwarning;
  snap s;
  snap_take(m, d, &s);
  // rows on the kink: the contacts the step will detect
  phys_kinematics(m, d);
  phys_collision(m, d);
  ncon = d->ncon;
  for (int i = 0; i < d->ncon; i++) atkink += fabs(d->contact[i].dist + PHYS_CONTACT_SLOP) <= PHYS_CONTACT_SLOP_TOL;
  snap_load(m, d, &s);
  double *A = malloc(sizeof(double) * n2 * n2), *r1 = malloc(sizeof(double) * n2), *r2 = malloc(sizeof(double) * n2);
  double *lo = malloc(sizeof(double) * n2), *col = malloc(sizeof(double) * n2);
  double *q1 = malloc(sizeof(double) * m->nq), *v1 = malloc(sizeof(double) * nv), h = 1e-6;
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  snap_load(m, d, &s);
  phys_step(m, d);
  memcpy(q1, d->qpos, sizeof(double) * m->nq);
  memcpy(v1, d->qvel, sizeof(double) * nv);
  response(m, d, &s, 2, -h, q1, v1, r1);
  response(m, d, &s, 2, -2 * h, q1, v1, r2);
  double scale = 0, kink = 0;
  for (int i = 0; i < n2; i++) {
    lo[i] = 2 * r2[i] / (-2 * h) - r1[i] / -h;
    col[i] = A[(size_t)i * n2 + 2];
    scale = fmax(scale, fabs(col[i]));
  }
  response(m, d, &s, 2, h, q1, v1, r1);
  for (int i = 0; i < n2; i++) kink = fmax(kink, fabs(r1[i] / h - lo[i]) / scale);
  snap_load(m, d, &s);
  // the reverse mode takes the same side: <y, A x> = <A'y, x>
  double *x = malloc(sizeof(double) * n2), *y = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2);
  physRng rng;
  phys_rng_seed(&rng, 3);
  gm_rand_vec(&rng, x, n2);
  gm_rand_vec(&rng, y, n2);
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  double dA = dot_err(A, y, x, xb, n2, n2);
  CHECK_MSG(dA <= GM_DOT_TOL, "humanoid at rest %s: dot test %.3g", model_name[k], dA);
  free(x), free(y), free(xb);
  snap_load(m, d, &s);
  char what[96];
  snprintf(what, sizeof what, "humanoid at rest %s: dx+/dz against lowering", model_name[k]);
  double e = gm_compare(what, col, lo, n2, 1, 1, CT_TOL);
  CHECK_MSG(atkink > 0, "%s: no contact on the kink", what);
  int nk = phys_constrained_step_kinks(m, d);   // contacts and the joint limits at rest (each on its own kink)
  CHECK_MSG(nk >= atkink, "%s: the library counts %d rows on the kink, fewer than its %d contacts", what, nk, atkink);
  CHECK_MSG(kink > 0.1, "%s: the two sides differ by %.3g only (no kink?)", what, kink);
  CHECK_MSG(d->nwarning == nwarn, "%s: warnings", what);
  printf("humanoid at rest %-4s: %d of %d contacts on the kink; dx+/dz against the lowering difference %.2e, the "
         "raising side differs by %.3g of the column\n", model_name[k], atkink, ncon, e, kink);
  snap_free(&s);
  free(A), free(r1), free(r2), free(lo), free(col), free(q1), free(v1);
  phys_free_data(d);
  phys_free_model(m);
}

// a leg whose foot is a welded body (no joint of its own) with a sphere on the floor: pos:foot moves the
// sphere alone (tests/data/contact/welded_foot.xml), settled and swinging
static void test_welded(int k) {
  physModel* m = gm_load("tests/data/contact/welded_foot.xml", 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  physData* d = phys_make_data(m);
  static const char* spec[] = {"pos:foot", "friction:floor", "size:ball", "mass:leg"};
  physParamTable t = table(m, spec, 4);
  phys_reset_data(m, d);
  d->qvel[1] = 1.5;
  for (int i = 0; i < 10; i++) phys_step(m, d);
  char name[64];
  snprintf(name, sizeof name, "welded foot %s", model_name[k]);
  settle_and_check(name, m, d, &t, 40);
  CHECK_MSG(d->ncon > 0, "%s: the foot is not on the floor", name);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// the elbow of the toss data (free joint + hinge, two boxes) with a floor plane, dropped and settling
static void test_elbow(int k) {
  physLog log;
  memset(&log, 0, sizeof log);
  physLoadOptions opt = {.urdf_floating = 1};
  physSpec* s = phys_parse_urdf("tests/data/elbow/elbow.urdf", &opt, &log);
  CHECK_MSG(s != NULL, "elbow: %s", log.error);
  if (!s) return;
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_PLANE);
  snprintf(s->geom[g].name, sizeof s->geom[g].name, "floor");
  s->geom[g].size[0] = s->geom[g].size[1] = 5, s->geom[g].size[2] = 0.1;
  physModel* m = phys_compile(s, &log);
  phys_spec_free(s);
  CHECK_MSG(m != NULL, "elbow: %s", log.error);
  if (!m) return;
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  physData* d = phys_make_data(m);
  static const char* spec[] = {"friction:floor", "restitution:floor"};
  int floor = phys_name2id(m, "geom", "floor");
  m->geom_friction[3 * floor] = 1, m->geom_restitution[floor] = 0.4;
  physParamTable t = table(m, spec, 2);
  phys_reset_data(m, d);
  axis_quat(d->qpos + 3, 1, 0.3, 0, 0.4);
  d->qpos[2] = 0.06;
  d->qpos[7] = 0.5;
  d->qvel[0] = 0.3, d->qvel[4] = 1.5;
  for (int i = 0; i < 400 && d->ncon == 0; i++) phys_step(m, d);
  phys_step(m, d);
  char name[64];
  snprintf(name, sizeof name, "elbow floor %s", model_name[k]);
  settle_and_check(name, m, d, &t, 40);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// rollout gradient with contacts

// l_t = c_t . p + 0.5 |v|^2 with p the free joint's position, c_t = (1, -0.5, 2) (1 + 0.1 t)
static double roll_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  const physModel* m = ctx;
  double w = 1 + 0.1 * t, c[3] = {w, -0.5 * w, 2 * w}, l = 0;
  for (int i = 0; i < 3; i++) l += c[i] * qpos[i], g_q[i] = c[i];
  for (int i = 0; i < m->nv; i++) l += 0.5 * qvel[i] * qvel[i], g_v[i] = qvel[i];
  return l;
}

// the box sliding on the floor for T steps: dL/dx0 and dL/dtheta against central differences
// of phys_rollout, every checkpoint interval bit for bit the full tape's
static void test_rollout(int k) {
  physModel* m = gm_load("tests/data/contact/box_plane.xml", 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  m->geom_friction[3 * phys_name2id(m, "geom", "floor")] = 0.3;
  m->geom_friction[3 * phys_name2id(m, "geom", "box")] = 0.2;
  physData* d = phys_make_data(m);
  static const char* spec[] = {"friction:floor", "mass:box", "size:box"};
  physParamTable t = table(m, spec, 3);
  int T = 30, nv = m->nv, nt = t.ntheta, k0 = phys_rollout_interval(T, 0);
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 - 3e-5;
  d->qvel[0] = 1, d->qvel[1] = 0.3;
  if (model_kind[k] != PHYS_CONTACT_CCP) phys_step(m, d);
  snap s;
  snap_take(m, d, &s);
  double *xb = calloc(2 * nv, sizeof(double)), *tb = calloc(nt, sizeof(double));
  double *xb1 = calloc(2 * nv, sizeof(double)), *tb1 = calloc(nt, sizeof(double));
  double *xf = calloc(2 * nv, sizeof(double)), *tf = calloc(nt, sizeof(double));
  double *work = malloc(sizeof(double) * phys_rollout_worksize(m, T, 1, nt)), L, L1;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK(phys_rollout_grad(m, d, &t, T, 0, NULL, roll_loss, m, work, &L, xb, NULL, tb, &log) == PHYS_OK);
  CHECK(phys_rollout_grad(m, d, &t, T, 1, NULL, roll_loss, m, work, &L1, xb1, NULL, tb1, &log) == PHYS_OK);
  CHECK_MSG(L == L1 && memcmp(xb, xb1, sizeof(double) * 2 * nv) == 0 && memcmp(tb, tb1, sizeof(double) * nt) == 0,
            "rollout %s: interval %d differs from the full tape", model_name[k], k0);
  snap_load(m, d, &s);
  CHECK(phys_rollout(m, d, T, NULL, roll_loss, m) == L);

  // central differences of the loss in x0 (tangent) and theta
  double* th0 = malloc(sizeof(double) * nt);
  double* th = malloc(sizeof(double) * nt);
  phys_param_get(&t, m, th0);
  for (int j = 0; j < 2 * nv + nt; j++) {
    double Lpm[2];
    for (int sg = 0; sg < 2; sg++) {
      double h = sg ? -CT_H : CT_H;
      snap_load(m, d, &s);
      if (j < nv) {
        double e[6] = {0};
        e[j] = 1;
        phys_integrate_pos(m, d->qpos, e, h);
      } else if (j < 2 * nv) {
        d->qvel[j - nv] += h;
      } else {
        memcpy(th, th0, sizeof(double) * nt);
        th[j - 2 * nv] += h;
        CHECK(phys_param_set(&t, m, th) == PHYS_OK);
      }
      Lpm[sg] = phys_rollout(m, d, T, NULL, roll_loss, m);
      CHECK(phys_param_set(&t, m, th0) == PHYS_OK);
    }
    double fd = (Lpm[0] - Lpm[1]) / (2 * CT_H);
    if (j < 2 * nv) xf[j] = fd;
    else tf[j - 2 * nv] = fd;
  }
  snap_load(m, d, &s);
  char what[80];
  snprintf(what, sizeof what, "rollout %s dL/dx0", model_name[k]);
  double ex = gm_compare(what, xb, xf, 1, 2 * nv, 1, CT_TOL);
  snprintf(what, sizeof what, "rollout %s dL/dtheta", model_name[k]);
  double et = gm_compare(what, tb, tf, 1, nt, 1, CT_TOL);
  printf("rollout %-4s T %d (k %d and 1 bit-identical): L %.6g, dL/dx0 %.2e, dL/dtheta %.2e against central "
         "differences\n", model_name[k], T, k0, L, ex, et);
  worst_all = fmax(worst_all, fmax(ex, et));
  snap_free(&s);
  free(xb), free(tb), free(xb1), free(tb1), free(xf), free(tf), free(work), free(th0), free(th);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// 8. friction at exactly 0 (both geoms, lcp and cone): the box sliding at 1 m/s has dv+_x/dmu = -g dt (the
// right derivative: raising either geom's friction from 0 decelerates it by mu g), not 0 - a fit at a bound
// of 0 must be able to leave it. Against the one-sided difference (f(h) - f(0))/h.
static void test_friction_zero(void) {
  for (int k = 0; k < 2; k++) {
    physModel* m = gm_load("tests/data/contact/box_plane.xml", 0);
    m->opt.contact = k ? PHYS_CONTACT_CONE : PHYS_CONTACT_LCP;
    m->opt.solver_tolerance = 1e-12;
    int gb = phys_name2id(m, "geom", "box"), gf = phys_name2id(m, "geom", "floor");
    m->geom_friction[3 * gb] = m->geom_friction[3 * gf] = 0;
    physData* d = phys_make_data(m);
    for (int i = 0; i < 20; i++) phys_step(m, d);   // settle on the floor
    d->qvel[0] = 1;
    phys_step(m, d);                                // the contacts of a sliding step as warm start
    physParamTable t;
    physLog log;
    memset(&log, 0, sizeof log);
    const char* spec[1] = {"friction:box"};
    CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK);
    int nv = m->nv;
    double P[12], q0[7], v0[6], vx0, h = 1e-7;
    memcpy(q0, d->qpos, sizeof q0);
    memcpy(v0, d->qvel, sizeof v0);
    physContact con[64];
    int ncon = d->ncon;
    memcpy(con, d->contact, sizeof(physContact) * ncon);
    CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
    phys_step(m, d);
    vx0 = d->qvel[0];
    memcpy(d->qpos, q0, sizeof q0), memcpy(d->qvel, v0, sizeof v0), memcpy(d->contact, con, sizeof(physContact) * ncon);
    d->ncon = ncon;
    m->geom_friction[3 * gb] = h;
    phys_step(m, d);
    double fd = (d->qvel[0] - vx0) / h, g = 9.81, dt = m->opt.timestep;
    printf("friction 0 (%s): dv+_x/dmu analytic %.9g, one-sided difference %.9g, -g dt %.9g\n", k ? "cone" : "lcp",
           P[nv + 0], fd, -g * dt);
    CHECK_REL(P[nv + 0], fd, 1e-5, 1e-9);
    CHECK_REL(P[nv + 0], -g * dt, 1e-3, 0);
    phys_param_table_free(&t);
    phys_free_data(d);
    phys_free_model(m);
  }
}

// 10. the ball of tests/data/contact/ball_drop.xml 2 mm above the floor, margin 0.01 on both geoms, at
// v = (5, 1, -3) with a spin: the gap closes at t* = 2/3 ms of the 1 ms step (a margin impact: v+_z = 3 eps,
// q+ = q + dt v+ - t* W J' lambda). check_state's every check with friction, mass, size (dist moves t*) and,
// at eps > 0, restitution; at eps = 0 the restitution column against (x+(h) - x+(0))/h, h = 1e-7, and its dot
// test (the step is linear in eps but for the restitution law's impulse: the difference's error is O(h)).
#define SLOW_VT 0.001
static void test_margin_impact(int k, double eps, double gap, double vz, double vt) {
  physModel* m = gm_load("tests/data/contact/ball_drop.xml", 0);
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  int gball = phys_name2id(m, "geom", "ball");
  for (int g = 0; g < m->ngeom; g++) m->geom_margin[g] = 0.01, m->geom_restitution[g] = g == gball ? eps : 0;
  physData* d = phys_make_data(m);
  static const char* spec[] = {"friction:ball", "mass:ball", "size:ball", "gravity", "restitution:ball"};
  physParamTable t = table(m, spec, eps > 0 ? 5 : 4);
  d->qpos[2] = 0.1 + gap;
  d->qvel[0] = 5 * vt, d->qvel[1] = vt, d->qvel[2] = vz, d->qvel[3] = 2 * vt, d->qvel[5] = -vt;
  char name[96];
  snprintf(name, sizeof name, "margin impact gap=%g vz=%g eps=%g %s", gap, vz, eps, model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: a row switches within %g h", name, switch_radius);
  snap s;
  snap_take(m, d, &s);
  phys_step(m, d);
  CHECK_MSG(fabs(d->qvel[2] + vz * eps) < 1e-9, "%s: v+_z = %.12g, not -vz eps", name, d->qvel[2]);
  snap_load(m, d, &s);
  check_state(name, m, d, &t);
  if (eps == 0) {
    physParamTable te = table(m, spec + 4, 1);
    int nv = m->nv, n2 = 2 * nv;
    double h = 1e-7, P[12], Pf[12], y[12], tb[1], th = 0.7, q0[7], v0[6], dq[6];
    CHECK(phys_step_param_jacobian(m, d, &te, P) == PHYS_OK);
    phys_step(m, d);
    memcpy(q0, d->qpos, sizeof q0), memcpy(v0, d->qvel, sizeof v0);
    snap_load(m, d, &s);
    m->geom_restitution[gball] = h;
    phys_step(m, d);
    m->geom_restitution[gball] = 0;
    phys_difference_pos(m, dq, 1, q0, d->qpos);   // (q+(h) - q+(0))
    for (int i = 0; i < nv; i++) Pf[i] = dq[i] / h, Pf[nv + i] = (d->qvel[i] - v0[i]) / h;
    snap_load(m, d, &s);
    char what[160];
    snprintf(what, sizeof what, "%s restitution (one-sided)", name);
    double eP = gm_compare(what, P, Pf, n2, 1, 1, CT_TOL);
    physRng r;
    phys_rng_seed(&r, 11);
    gm_rand_vec(&r, y, n2);
    CHECK(phys_step_param_vjp(m, d, &te, y, tb) == PHYS_OK);
    double dP = dot_err(P, y, &th, tb, n2, 1);
    CHECK_MSG(dP <= GM_DOT_TOL, "%s: restitution dot test %.3g", name, dP);
    printf("%s: restitution column vs one-sided difference %.2e (dz+/deps %.6g), dot %.1e\n", name, eP, P[2], dP);
    worst_all = fmax(worst_all, eP);
    phys_param_table_free(&te);
  }
  snap_free(&s);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// 7. complementarity-aware reverse mode (lcp, PHYS_GRAD_COMPLEMENTARITY; tests/data/contact/lift_ball.xml):
// the ball resting on the floor with the motor pushing up 2 N (< m g = 9.81 N). L = -z+ (lift it): the exact
// gradient dL/du = -dz+/du = 0 (clamped), the aware one relabels the contact separating: -dt^2/m exactly
// (z+ = z + dt v+, v+ = v + dt (u - m g)/m). With the flag off, or pulling the ball down (L = z+: the exact
// gradient is kept, the relabelled one, clamping, is the same 0), the exact reverse mode is returned. Forward
// mode (B) is unchanged by the option.
static void test_complementarity(void) {
  physModel* m = gm_load("tests/data/contact/lift_ball.xml", 0);
  CHECK(m && (m->opt.gradflags & PHYS_GRAD_COMPLEMENTARITY) && m->opt.contact == PHYS_CONTACT_LCP);
  if (!m) return;
  physData* d = phys_make_data(m);
  for (int k = 0; k < 50; k++) phys_step(m, d);   // settle
  d->ctrl[0] = 2;
  double dt = m->opt.timestep, xb[2] = {-1, 0}, xbar[2], ub = 1, B[2];
  CHECK(phys_step_jacobian(m, d, NULL, B) == PHYS_OK);
  CHECK(fabs(B[0]) < 1e-15 && fabs(B[1]) < 1e-12);     // clamped: the push is absorbed
  CHECK(phys_step_vjp(m, d, xb, xbar, &ub) == PHYS_OK);
  CHECK_NEAR(ub, -dt * dt / 1.0, 1e-15);                // aware: the free-flight sensitivity
  xb[0] = 1;
  CHECK(phys_step_vjp(m, d, xb, xbar, &ub) == PHYS_OK);
  CHECK(fabs(ub) < 1e-15);                              // pressing down: relabelled clamping, still 0
  m->opt.gradflags = 0;
  xb[0] = -1;
  CHECK(phys_step_vjp(m, d, xb, xbar, &ub) == PHYS_OK);
  CHECK(fabs(ub) < 1e-15);                              // the exact gradient: the saddle
  printf("complementarity-aware: exact dL/du 0, aware %.6g (-dt^2/m = %.6g)\n", -dt * dt, -dt * dt);
  phys_free_data(d);
  phys_free_model(m);
}

// the box tumbling onto a corner (test_box) with a residual network attached before its data
static void test_box_residual(int k) {
  physModel* m = box_model(k);
  int size[4] = {phys_residual_nfeature(m), 16, 16, m->nv};
  char err[128];
  m->residual = phys_mlp_alloc(3, size, PHYS_MLP_TANH, err, sizeof err);
  physRng r;
  phys_rng_seed(&r, 41);
  phys_mlp_randomize(m->residual, &r, 10);
  physData* d = phys_make_data(m);
  static const char* spec[] = {"mass:box", "friction:floor", "size:box"};
  physParamTable t = table(m, spec, 3);
  tumbling_state(m, d);
  double rr[6];
  phys_residual_acc(m, d, rr);
  char name[64];
  snprintf(name, sizeof name, "box + residual %s", model_name[k]);
  CHECK_MSG(gm_maxabs(rr, 6) > 1, "%s: residual %.3g too small to matter", name, gm_maxabs(rr, 6));
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  check_state(name, m, d, &t);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// issue 14 item 2: the cube of box_plane.xml loaded with a learned shape (vertices:box: a mesh of its 8 corners)
static physModel* learned_box_model(int k) {
  const char* geoms[1] = {"box"};
  physLoadOptions opt = {0};
  opt.vertex_geoms = geoms, opt.nvertex_geoms = 1;
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load("tests/data/contact/box_plane.xml", &opt, &log);
  if (!m) {
    fprintf(stderr, "cannot load the learned box: %s\n", log.error);
    exit(2);
  }
  m->opt.contact = model_kind[k];
  m->opt.solver_tolerance = CT_SOLVER_TOL;
  m->geom_friction[3 * phys_name2id(m, "geom", "floor")] = 0.3;
  m->geom_friction[3 * phys_name2id(m, "geom", "box")] = 0.2;
  return m;
}

// P's vertex columns (vertices:box, 24) against central differences of phys_step and the dot tests, with the
// hull remade at every phys_param_set: tumbling onto a corner (one hull vertex in contact); resting on a
// triangular face (three hull vertices in contact: corners 1 and 2 pushed out to (0.2, -0.1, -0.1) and
// (-0.1, 0.2, -0.1), corner 3 lifted to (0.1, 0.1, -0.05), so the bottom face is the triangle 0-1-2 around the
// centre of mass; a square face's four coplanar contacts are a kink in each vertex alone: their load shifts with
// the sign of the move); then corner 0 moved inside the hull (to -0.02 (1, 1, 1): 7 of 8 vertices on the
// hull), whose three columns are exactly zero, in P and in the differences
static void test_vertices(int k) {
  physModel* m = learned_box_model(k);
  physData* d = phys_make_data(m);
  int g = phys_name2id(m, "geom", "box"), mid = m->geom_dataid[g];
  CHECK(m->geom_type[g] == PHYS_GEOM_MESH && m->mesh_vertnum[mid] == 8 && m->mesh_hullnum[mid] == 8);
  static const char* spec[] = {"vertices:box", "friction:floor"};
  physParamTable t = table(m, spec, 2);
  CHECK(t.ntheta == 25);
  double th0[25], th[25];
  phys_param_get(&t, m, th0);
  char name[64];
  tumbling_state(m, d);
  snprintf(name, sizeof name, "vertices tumbling %s", model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  check_state(name, m, d, &t);
  memcpy(th, th0, sizeof th);
  th[3] = 0.2, th[7] = 0.2, th[9] = th[10] = 0.1, th[11] = -0.05;
  CHECK(phys_param_set(&t, m, th) == PHYS_OK);
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 - 3e-4;
  for (int i = 0; i < 5; i++) phys_step(m, d);
  snprintf(name, sizeof name, "vertices triangle face %s", model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  CHECK_MSG(d->ncon == 3, "%s: %d contacts (the triangle: 3)", name, d->ncon);
  check_state(name, m, d, &t);
  memcpy(th, th0, sizeof th);
  for (int i = 0; i < 3; i++) th[i] = -0.02;
  CHECK(phys_param_set(&t, m, th) == PHYS_OK);
  CHECK(m->mesh_hullnum[mid] == 7);
  tumbling_state(m, d);
  snprintf(name, sizeof name, "vertices off hull %s", model_name[k]);
  CHECK_MSG(smooth_here(m, d), "%s: near a mode switch", name);
  check_state(name, m, d, &t);
  int n2 = 2 * m->nv;
  double* P = calloc((size_t)n2 * 25, sizeof(double));
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  int zero = 1;
  for (int i = 0; i < n2; i++)
    for (int j = 0; j < 3; j++) zero &= P[i * 25 + j] == 0;
  CHECK_MSG(zero, "%s: the inner vertex's columns are not 0", name);
  free(P);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  for (int k = 0; k < 3; k++) test_vertices(k);
  for (int k = 0; k < 3; k++) test_box_residual(k);
  test_complementarity();
  test_friction_zero();
  for (int k = 0; k < 3; k++) {
    test_box(k);
    test_height(k);
    test_balls(k, 0);
    test_balls(k, 1);
    test_limit(k);
    test_elbow(k);
    test_welded(k);
    if (model_kind[k] == PHYS_CONTACT_CCP) switch_radius = 2;   // ccp's humanoid: see the file comment
    test_humanoid(k);
    switch_radius = 10;
    test_rollout(k);
    if (model_kind[k] != PHYS_CONTACT_CCP) test_resting_kink(k);
    test_margin_impact(k, 0.3, 0.002, -3, 1);
    test_margin_impact(k, 0, 0.002, -3, 1);
    for (int e = 0; e < 2; e++) test_margin_impact(k, e ? 0 : 0.3, 1.5e-5, -0.03, SLOW_VT);   // a slow landing
  }
  printf("worst relative error against central differences %.3g (tol %.0e); worst dot test %.3g\n", worst_all,
         CT_TOL, worst_dot);
  return test_done();
}

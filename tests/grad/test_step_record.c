// test_step_record.c - the step record (src/grad/step_record.c):
//  1. the kind is the step's own: a ball in the air is smooth, the ball resting on the floor is constrained
//     with the model's solver (lcp, cone, ccp) or penalty, and with contacts disabled smooth again; a
//     constrained model whose last step had contacts (d->ncon > 0, detected once in the stage) and one whose
//     list is empty get the same kind;
//  2. linearizing leaves d's state as it was, and after phys_step_record_free (or a derivative call) its
//     contact lists (the next step's warm start) and the arena mark too;
//  3. the record's Jacobian and VJP are phys_step_jacobian's and phys_step_vjp's bit for bit (the public
//     functions are one linearization and one dispatch);
//  4. ccp's envelope grows with the speed: a ball gliding fast 1 cm above the floor is in contact for the step,
//     and the record says so on a fresh physData too, whose body velocities (cvel) are not yet computed (the
//     record once detected with them stale: smooth, and a fit's sensitivity step failed on the next state).
//  5. no derivative writes the caller's contact list (the step's warm-start input and phys_step's output): a box
//     resting on the floor (4 contacts) whose list holds one contact, the rest of the array, the counts and
//     d->contact_prev filled with a pattern; with every contact model, the Jacobian, the VJPs, the parameter
//     derivatives, the time-of-impact terms and the finite-difference twin leave all of it byte for byte as it
//     was (they detect 4 contacts: a derivative that detected into d->contact and put back the caller's one
//     contact changed entries 1..3), and so does the rollout gradient (its steps start from d's list and
//     write lists of their own).
//  6. the record holds M~'s factor: every derivative taken on a record after d->qLD was overwritten (filled
//     with a pattern, as the next stage run on d does) is the one taken before, bit for bit - A, the size
//     parameters' columns of P (reverse passes), the VJP with theta_bar, the time-of-impact terms - with every
//     contact model, on a box resting on the floor and 2 mm into it (the position correction), a ball landing
//     with restitution 0.8 and the ball in the air (the derivatives read
//     d->qLD before: all but penalty's and the smooth kind's changed);
//  7. lcp's local structure (the labels' partition, the clamped system's pseudo-inverse) is built once per
//     linearization and problem (d->nlcp_local): a box 2 mm into the floor under lcp (the velocity and the
//     position problem: 2 builds) and with cone or ccp (the position problem: 1), then none in the Jacobian with
//     size:box (its P columns take 2nv = 12 reverse passes: lcp built 2 + 24, cone and ccp 1 + 12 before), the
//     VJP and the parameter VJP; the public phys_step_param_jacobian builds as many as one linearization.
//     The same for cone's and ccp's local structure of the velocity problem (the natural map's linearization and
//     its reverse factor, d->nccp_local): one per linearization (none under lcp), none by the derivatives on the
//     record (each reverse pass and forward direction built its own before: 26 by the Jacobian with size:box and
//     the VJPs, 14 by phys_step_param_jacobian);
//     item 6's derivatives are also unchanged with the arena above the record (the solvers' scratch) scribbled.
//  8. the complementarity-aware Jacobians for one cotangent (phys_step_jacobian_aware): on paper 001's lifted
//     ball (motor below m g, clamped) the cotangent that wants the ball up relabels the contact separating and
//     B = (dt^2/m, dt/m), the free flight (the exact B is 0); on the drone resting on the ground (4 lcp
//     contacts, free body, 4 motors) and the drone 1 mm into it, for 40 seeded random cotangents w:
//     A' w and B' w equal phys_step_vjp's with the flag (dot-product test, 1e-10 relative), and the Jacobian
//     differs from the exact one exactly when the labels changed (some did, some did not); with the flag off
//     the Jacobians are phys_step_jacobian's bit for bit.
#include <string.h>
#include <unistd.h>

#include "grad_models.h"
#include "rollout.h"
#include "step_record.h"
#include "toi.h"

#define BALL "tests/data/contact/ball_drop.xml"

// the ball at height z (bottom z - 0.1) with velocity vz, after `steps` steps of simulation from there
static void ball_at(const physModel* m, physData* d, double z, double vz, int steps) {
  memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
  d->qpos[0] = d->qpos[1] = 0, d->qpos[2] = z;
  d->qpos[3] = 1, d->qpos[4] = d->qpos[5] = d->qpos[6] = 0;
  d->qvel[0] = 0.3, d->qvel[2] = vz;
  d->ncon = d->ncon_prev = 0;
  for (int s = 0; s < steps; s++) phys_step(m, d);
}

// the kind phys_step_linearize records at d's state; d's lists and the arena unchanged
static int kind_at(const physModel* m, physData* d) {
  int ncon = d->ncon, nprev = d->ncon_prev;
  size_t bytes = sizeof(physContact) * (size_t)ncon, mark = phys_stack_mark(d);
  physContact* keep = malloc(bytes + 1);
  memcpy(keep, d->contact, bytes);
  double q[7];
  memcpy(q, d->qpos, sizeof q);
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  int kind = (int)rec.kind;
  CHECK(rec.kind != PHYS_STEP_CONSTRAINED || rec.solver == m->opt.contact);
  CHECK(memcmp(q, d->qpos, sizeof q) == 0);
  phys_step_record_free(d, &rec);
  CHECK(d->ncon == ncon && d->ncon_prev == nprev && memcmp(keep, d->contact, bytes) == 0);
  CHECK(phys_stack_mark(d) == mark);
  free(keep);
  return kind;
}

// item 3: the record's A and A'y against the public functions', bit for bit
static void same_as_public(const physModel* m, physData* d) {
  int n2 = 2 * m->nv;
  double A1[144], A2[144], y[12], x1[12], x2[12];
  for (int i = 0; i < n2; i++) y[i] = 0.1 * (i + 1) - 0.5;
  CHECK(phys_step_jacobian(m, d, A1, NULL) == PHYS_OK);
  CHECK(phys_step_vjp(m, d, y, x1, NULL) == PHYS_OK);
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK(phys_step_record_jacobian(m, d, &rec, NULL, A2, NULL, NULL) == PHYS_OK);
  phys_step_record_free(d, &rec);
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK(phys_step_record_vjp(m, d, &rec, NULL, y, x2, NULL, NULL, NULL) == PHYS_OK);
  phys_step_record_free(d, &rec);
  // one record, two derivative calls (the second re-enters the stage's lists the first kept)
  double x3[12];
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK(phys_step_record_jacobian(m, d, &rec, NULL, A2, NULL, NULL) == PHYS_OK);
  CHECK(phys_step_record_vjp(m, d, &rec, NULL, y, x3, NULL, NULL, NULL) == PHYS_OK);
  phys_step_record_free(d, &rec);
  CHECK(memcmp(x1, x3, sizeof(double) * (size_t)n2) == 0);
  CHECK(memcmp(A1, A2, sizeof(double) * (size_t)n2 * n2) == 0);
  CHECK(memcmp(x1, x2, sizeof(double) * (size_t)n2) == 0);
}

//---------------------------------------------------------------------------------------------------------
// item 5: the caller's contact list is read, never written

#define BOX "tests/data/contact/box_plane.xml"

// d's contact lists and counts, the whole arrays (nconmax contacts each)
typedef struct {
  int ncon, ndropped, nlimit, nprev;
  physContact *con, *prev;
} listCopy;

static void list_take(const physData* d, listCopy* c) {
  size_t bytes = sizeof(physContact) * (size_t)d->nconmax;
  c->ncon = d->ncon, c->ndropped = d->ncon_dropped, c->nlimit = d->nlimit, c->nprev = d->ncon_prev;
  c->con = malloc(bytes), c->prev = malloc(bytes);
  memcpy(c->con, d->contact, bytes);
  memcpy(c->prev, d->contact_prev, bytes);
}

// 1 if d's lists and counts are c's byte for byte (whole arrays)
static int list_same(const physData* d, const listCopy* c) {
  size_t all = sizeof(physContact) * (size_t)d->nconmax;
  int counts = d->ncon == c->ncon && d->ncon_dropped == c->ndropped && d->nlimit == c->nlimit && d->ncon_prev == c->nprev;
  return counts && memcmp(d->contact, c->con, all) == 0 && memcmp(d->contact_prev, c->prev, all) == 0;
}

// the rollout's loss: 0.5 |q|^2 + 0.5 |v|^2 per state (tangent gradient of the position part only on scalars)
static double box_loss(void* ctx, int t, const double* qpos, const double* qvel, double* gq, double* gv) {
  (void)ctx, (void)t, (void)gq;
  double l = 0;
  for (int i = 0; i < 6; i++) l += 0.5 * qvel[i] * qvel[i] + 0.5 * qpos[i % 3] * qpos[i % 3], gv[i] = qvel[i];
  return l;
}

// the box resting after 200 steps, its list cut to one contact, the rest and the counts a pattern
static void box_resting_one_listed(const physModel* m, physData* d) {
  d->qpos[2] = 0.1;
  for (int s = 0; s < 200; s++) phys_step(m, d);
  CHECK_MSG(d->ncon == 4 || m->opt.contact == PHYS_CONTACT_PENALTY, "contacts %d", d->ncon);
  memset(d->contact + 1, 0x5a, sizeof(physContact) * (size_t)(d->nconmax - 1));
  memset(d->contact_prev, 0xa5, sizeof(physContact) * (size_t)d->nconmax);
  d->ncon = 1, d->ncon_dropped = 7, d->nlimit = 3, d->ncon_prev = 2;
}

static void lists_untouched(int model) {
  physModel* m = gm_load(BOX, 0);
  m->opt.contact = model;
  physData* d = phys_make_data(m);
  physLog log;
  const char* spec[] = {"friction:box", "restitution:box", "mass:box"};
  physParamTable t;
  CHECK(phys_param_table_build(&t, m, spec, 3, &log) == PHYS_OK);
  box_resting_one_listed(m, d);
  int nv = m->nv, n2 = 2 * nv, nt = t.ntheta, T = 3;
  double *A = calloc((size_t)n2 * n2, sizeof(double)), *P = calloc((size_t)n2 * nt, sizeof(double));
  double y[12], xb[12], lam[6], tb[3], L;
  for (int i = 0; i < n2; i++) y[i] = 0.1 * (i + 1) - 0.5;
  listCopy c;
  list_take(d, &c);
  const char* what[] = {"phys_step_jacobian", "phys_step_vjp", "phys_step_vjp_lambda", "phys_step_param_jacobian",
                        "phys_step_param_vjp", "phys_toi_jacobian", "phys_toi_vjp", "phys_toi_param_jacobian",
                        "phys_toi_param_vjp", "phys_step_jacobian_fd", "phys_step_linearize"};
  for (int k = 0; k < 11; k++) {
    physStatus st = PHYS_OK;
    physStepRecord rec;
    int toi = k >= 5 && k <= 8;   // the time-of-impact corrections read the state's record
    if (toi) st = phys_step_linearize(m, d, &rec);
    switch (st == PHYS_OK ? k : -1) {
      case -1: break;
      case 0: st = phys_step_jacobian(m, d, A, NULL); break;
      case 1: st = phys_step_vjp(m, d, y, xb, NULL); break;
      case 2: st = phys_step_vjp_lambda(m, d, y, xb, NULL, lam); break;
      case 3: st = phys_step_param_jacobian(m, d, &t, P); break;
      case 4: st = phys_step_param_vjp(m, d, &t, y, tb); break;
      case 5: st = phys_toi_jacobian(m, d, &rec, A); break;
      case 6: st = phys_toi_vjp(m, d, &rec, y, xb); break;
      case 7: st = phys_toi_param_jacobian(m, d, &rec, &t, P); break;
      case 8: st = phys_toi_param_vjp(m, d, &rec, &t, y, tb); break;
      case 9: st = phys_step_jacobian_fd(m, d, 1e-7, A, NULL); break;
      default:
        st = phys_step_linearize(m, d, &rec);
        if (st == PHYS_OK) st = phys_step_record_jacobian(m, d, &rec, NULL, A, NULL, NULL);
        phys_step_record_free(d, &rec);
    }
    if (toi) phys_step_record_free(d, &rec);
    CHECK_MSG(st == PHYS_OK, "contact model %d, %s: status %d", model, what[k], (int)st);
    CHECK_MSG(list_same(d, &c), "contact model %d, %s: the caller's contact list changed (ncon %d)", model,
              what[k], d->ncon);
  }
  // the rollout: its steps write lists of their own (d is left at x_0, its lists as they were)
  double u[1] = {0};
  int kc = phys_rollout_interval(T, 0);
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, T, kc, nt));
  CHECK(phys_rollout_grad(m, d, &t, T, kc, u, box_loss, NULL, work, &L, xb, NULL, tb, &log) == PHYS_OK);
  CHECK_MSG(list_same(d, &c), "contact model %d, phys_rollout_grad: the caller's contact list changed", model);
  free(work), free(c.con), free(c.prev), free(A), free(P);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// items 6 and 7: what the record keeps

// d->qLD and the arena above the record (the solvers' scratch: the next stage or solve run on d writes both)
// filled with the byte b
static void scribble(const physModel* m, physData* d, int b) {
  memset(d->qLD, b, sizeof(double) * (size_t)m->nv * m->nv);
  memset(d->stack + d->pstack, b, sizeof(double) * (d->nstack - d->pstack));
}

// the derivatives of the record at d's state with the table t (A, P: 2nv x 2nv, 2nv x t->ntheta; xb 2nv, tb
// t->ntheta from the adjoint y); with clobber, d->qLD and the free arena are filled with a pattern after the
// linearization
static void record_derivs(const physModel* m, physData* d, const physParamTable* t, int clobber, double* A,
                          double* P, double* xb, double* tb) {
  int n2 = 2 * m->nv;
  double y[12];
  for (int i = 0; i < n2; i++) y[i] = 0.1 * (i + 1) - 0.5;
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  if (clobber) scribble(m, d, 0x5a);
  CHECK(phys_step_record_jacobian(m, d, &rec, t, A, NULL, P) == PHYS_OK);
  if (clobber) scribble(m, d, 0xa5);
  CHECK(phys_step_record_vjp(m, d, &rec, t, y, xb, NULL, tb, NULL) == PHYS_OK);
  phys_step_record_free(d, &rec);
}

// item 6 at d's state: the derivatives with d->qLD and the solvers' scratch overwritten after the linearization
// are the ones without
static void factor_kept(const physModel* m, physData* d, const physParamTable* t, const char* what) {
  int n2 = 2 * m->nv, nt = t->ntheta;
  size_t sa = sizeof(double) * (size_t)n2 * n2, sp = sizeof(double) * (size_t)n2 * nt;
  double *A[2], *P[2], xb[2][12], tb[2][8];
  for (int k = 0; k < 2; k++) {
    A[k] = calloc((size_t)n2 * n2, sizeof(double)), P[k] = calloc((size_t)n2 * nt, sizeof(double));
    record_derivs(m, d, t, k, A[k], P[k], xb[k], tb[k]);
  }
  CHECK_MSG(memcmp(A[0], A[1], sa) == 0, "%s, contact model %d: A moved with d->qLD", what, m->opt.contact);
  CHECK_MSG(memcmp(P[0], P[1], sp) == 0, "%s, contact model %d: P moved with d->qLD", what, m->opt.contact);
  CHECK_MSG(memcmp(xb[0], xb[1], sizeof(double) * (size_t)n2) == 0, "%s, contact model %d: A'y moved with d->qLD",
            what, m->opt.contact);
  CHECK_MSG(memcmp(tb[0], tb[1], sizeof(double) * (size_t)nt) == 0, "%s, contact model %d: P'y moved with d->qLD",
            what, m->opt.contact);
  for (int k = 0; k < 2; k++) free(A[k]), free(P[k]);
}

// a model of file with contact model `model` and its table of spec (n entries)
static physModel* table_model(const char* file, int model, const char* const* spec, int n, physParamTable* t) {
  physModel* m = gm_load(file, 0);
  m->opt.contact = model;
  physLog log;
  CHECK(phys_param_table_build(t, m, spec, n, &log) == PHYS_OK);
  return m;
}

static void factor_kept_all(int model) {
  physParamTable t;
  const char* bs[] = {"size:box", "friction:box", "mass:box"};
  physModel* m = table_model(BOX, model, bs, 3, &t);
  physData* d = phys_make_data(m);
  d->qpos[2] = 0.1;
  for (int s = 0; s < 200; s++) phys_step(m, d);
  factor_kept(m, d, &t, "box resting");
  d->qpos[2] -= 0.002;   // (the position correction's problem)
  factor_kept(m, d, &t, "box 2 mm deep");
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
  // a ball landing at 2 m/s, 0.5 mm deep, restitution 0.8, with the time-of-impact terms; and in the air
  const char* ls[] = {"size:ball", "restitution:ball", "mass:ball"};
  m = table_model(BALL, model, ls, 3, &t);
  m->opt.gradflags |= PHYS_GRAD_TOI;
  d = phys_make_data(m);
  ball_at(m, d, 0.0995, -2, 0);
  factor_kept(m, d, &t, "ball landing");
  ball_at(m, d, 0.6, -2, 0);
  factor_kept(m, d, &t, "ball in the air");
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// item 7: lcp's local structures built by one linearization of the box, and none by the derivatives
static void local_built_once(int model) {
  physParamTable t;
  const char* bs[] = {"size:box", "friction:box"};
  physModel* m = table_model(BOX, model, bs, 2, &t);
  physData* d = phys_make_data(m);
  d->qpos[2] = 0.1;
  for (int s = 0; s < 200; s++) phys_step(m, d);
  d->qpos[2] -= 0.002;   // 2 mm deep: the position correction's problem too
  int n2 = 2 * m->nv, nt = t.ntheta;
  double *A = calloc((size_t)n2 * n2, sizeof(double)), *P = calloc((size_t)n2 * nt, sizeof(double));
  double y[12], xb[12], tb[8];
  for (int i = 0; i < n2; i++) y[i] = 0.1 * (i + 1) - 0.5;
  uint64_t c0 = d->nlcp_local, k0 = d->nccp_local;
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  uint64_t lin = d->nlcp_local - c0, klin = d->nccp_local - k0;
  CHECK_MSG(lin == (model == PHYS_CONTACT_LCP ? 2u : 1u), "contact model %d: %d local structures by the linearization",
            model, (int)lin);
  CHECK_MSG(klin == (model == PHYS_CONTACT_LCP ? 0u : 1u), "contact model %d: %d cone/ccp local structures by the "
            "linearization", model, (int)klin);
  c0 = d->nlcp_local, k0 = d->nccp_local;
  CHECK(phys_step_record_jacobian(m, d, &rec, &t, A, NULL, P) == PHYS_OK);
  CHECK(phys_step_record_vjp(m, d, &rec, &t, y, xb, NULL, tb, NULL) == PHYS_OK);
  CHECK_MSG(d->nlcp_local == c0, "contact model %d: %d local structures by the derivatives on the record", model,
            (int)(d->nlcp_local - c0));
  CHECK_MSG(d->nccp_local == k0, "contact model %d: %d cone/ccp local structures by the derivatives on the record",
            model, (int)(d->nccp_local - k0));
  phys_step_record_free(d, &rec);
  c0 = d->nlcp_local, k0 = d->nccp_local;
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  CHECK_MSG(d->nlcp_local - c0 == lin, "contact model %d: %d local structures by phys_step_param_jacobian", model,
            (int)(d->nlcp_local - c0));
  CHECK_MSG(d->nccp_local - k0 == klin, "contact model %d: %d cone/ccp local structures by phys_step_param_jacobian",
            model, (int)(d->nccp_local - k0));
  free(A), free(P);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// the largest |X' w - xbar| / max(1, |xbar|) over X's ncol columns (X: 2nv rows, ncol columns)
static double transpose_error(const double* X, int n2, int ncol, const double* w, const double* xbar) {
  double e = 0;
  for (int j = 0; j < ncol; j++) {
    double s = 0;
    for (int i = 0; i < n2; i++) s += X[(size_t)i * ncol + j] * w[i];
    e = fmax(e, fabs(s - xbar[j]) / fmax(1, fabs(xbar[j])));
  }
  return e;
}

// 8. the lifted ball: the aware B for the cotangent of L = -z+ is the free flight, exact B 0
static void test_aware_lift(void) {
  physModel* m = gm_load("tests/data/contact/lift_ball.xml", 0);
  physData* d = phys_make_data(m);
  for (int k = 0; k < 50; k++) phys_step(m, d);
  d->ctrl[0] = 2;
  double dt = m->opt.timestep, w[2] = {-1, 0}, A[4], B[2], Ae[4], Be[2], xbar[2], ub;
  int rl = -1;
  CHECK(phys_step_jacobian(m, d, Ae, Be) == PHYS_OK);
  CHECK(phys_step_jacobian_aware(m, d, w, A, B, &rl) == PHYS_OK);
  CHECK(rl == 1);
  CHECK(fabs(Be[0]) < 1e-15 && fabs(Be[1]) < 1e-12);
  CHECK_NEAR(B[0], dt * dt, 1e-15);   // z+ = z + dt v+, v+ = v + dt (u - m g)/m, m = 1
  CHECK_NEAR(B[1], dt, 1e-14);
  CHECK(phys_step_vjp(m, d, w, xbar, &ub) == PHYS_OK);
  CHECK(transpose_error(A, 2, 2, w, xbar) < 1e-12 && transpose_error(B, 2, 1, w, &ub) < 1e-12);
  printf("aware Jacobian, lifted ball: B = (%.6e, %.6e) = (dt^2/m, dt/m); exact B = (%.1g, %.1g)\n", B[0], B[1],
         Be[0], Be[1]);
  w[0] = 1;   // pressing down: the exact labels kept
  CHECK(phys_step_jacobian_aware(m, d, w, A, B, &rl) == PHYS_OK);
  CHECK(rl == 0 && memcmp(A, Ae, sizeof A) == 0 && memcmp(B, Be, sizeof B) == 0);
  phys_free_data(d);
  phys_free_model(m);
}

// 8. the drone on the ground at height z: random cotangents, dot-product test against the VJP
static void test_aware_drone(double z) {
  physModel* m = phys_load("models/drone.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  phys_reset_keyframe(m, d, 0);
  for (int k = 0; k < 30; k++) phys_step(m, d);   // settle into the contacts
  d->qpos[2] += z - 0.05;
  for (int j = 0; j < m->nu; j++) d->ctrl[j] = 0.5 + 0.3 * j;   // thrust below the weight
  int nv = m->nv, nu = m->nu, n2 = 2 * nv, nrel = 0, nkept = 0;
  double* A = malloc(sizeof(double) * (size_t)n2 * n2 * 2);
  double* Ae = A + (size_t)n2 * n2;
  double* B = malloc(sizeof(double) * (size_t)n2 * nu * 2);
  double* Be = B + (size_t)n2 * nu;
  double w[64], xbar[64], ub[16], emax = 0;
  CHECK(n2 <= 64 && nu <= 16);
  CHECK(phys_step_jacobian(m, d, Ae, Be) == PHYS_OK);
  physRng rng;
  phys_rng_seed(&rng, 13);
  for (int k = 0; k < 40; k++) {
    for (int i = 0; i < n2; i++) w[i] = 2 * phys_rng_uniform(&rng) - 1;
    int rl = -1;
    m->opt.gradflags = PHYS_GRAD_COMPLEMENTARITY;
    CHECK(phys_step_jacobian_aware(m, d, w, A, B, &rl) == PHYS_OK);
    CHECK(phys_step_vjp(m, d, w, xbar, ub) == PHYS_OK);
    double e = fmax(transpose_error(A, n2, n2, w, xbar), transpose_error(B, n2, nu, w, ub));
    emax = fmax(emax, e);
    CHECK_MSG(e < 1e-10, "cotangent %d: |J' w - vjp| %g", k, e);
    int same = !memcmp(A, Ae, sizeof(double) * (size_t)n2 * n2) && !memcmp(B, Be, sizeof(double) * (size_t)n2 * nu);
    CHECK(rl == 1 || rl == 0);
    CHECK(same == !rl);
    nrel += rl, nkept += !rl;
    m->opt.gradflags = 0;   // the flag off: the exact Jacobians
    CHECK(phys_step_jacobian_aware(m, d, w, A, B, &rl) == PHYS_OK);
    CHECK(rl == 0 && !memcmp(A, Ae, sizeof(double) * (size_t)n2 * n2) &&
          !memcmp(B, Be, sizeof(double) * (size_t)n2 * nu));
  }
  CHECK(nrel > 0 && nkept > 0);
  printf("aware Jacobian, drone at %.3f m: %d of 40 cotangents relabelled, |J' w - vjp| <= %.2g\n", z, nrel,
         emax);
  free(A);
  free(B);
  phys_free_data(d);
  phys_free_model(m);
}

// a model the derivatives refuse says why (identify printed "invalid model ()" for a ball joint that is not the
// last joint of its body: the refusal had no message)
static void test_refusal_says_why(void) {
  char path[] = "/tmp/test_step_record_XXXXXX";
  int fd = mkstemp(path);
  const char* xml = "<mujoco><worldbody><body name='a' pos='0 0 1'><joint name='b' type='ball'/><joint name='s' "
                    "type='slide' axis='0 0 1'/><geom type='capsule' fromto='0 0 0 0 0 -.5' size='.05' mass='1'/>"
                    "</body></worldbody></mujoco>\n";
  CHECK(fd >= 0 && write(fd, xml, strlen(xml)) == (ssize_t)strlen(xml));
  if (fd >= 0) close(fd);
  physLog log = {0};
  physModel* m = phys_load(path, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    physData* d = phys_make_data(m);
    physStepRecord rec;
    CHECK(phys_step_linearize(m, d, &rec) == PHYS_ERR_MODEL);
    phys_step_record_free(d, &rec);
    CHECK_MSG(strstr(d->lastwarning, "a ball joint is not the last joint of its body") != NULL, "%s", d->lastwarning);
    phys_free_data(d);
    phys_free_model(m);
  }
  unlink(path);
}

int main(void) {
  test_refusal_says_why();
  test_aware_lift();
  test_aware_drone(0.05);
  test_aware_drone(0.049);
  const int models[4] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP, PHYS_CONTACT_PENALTY};
  for (int k = 0; k < 4; k++) {
    physModel* m = gm_load(BALL, 0);
    m->opt.contact = models[k];
    physData* d = phys_make_data(m);
    int touching = models[k] == PHYS_CONTACT_PENALTY ? PHYS_STEP_PENALTY : PHYS_STEP_CONSTRAINED;
    // in the air
    ball_at(m, d, 0.6, 0, 0);
    CHECK(kind_at(m, d) == PHYS_STEP_SMOOTH);
    same_as_public(m, d);
    // resting on the floor after 300 steps (contacts in the list: the stage detects them once), and the same
    // state with the list emptied (detected first)
    ball_at(m, d, 0.099, 0, 300);
    CHECK(d->ncon > 0 || models[k] == PHYS_CONTACT_PENALTY);
    CHECK_MSG(kind_at(m, d) == touching, "contact model %d: kind %d", models[k], kind_at(m, d));
    same_as_public(m, d);
    int ncon = d->ncon;
    d->ncon = 0;
    CHECK(kind_at(m, d) == touching);
    d->ncon = ncon;
    // contacts off: smooth
    m->opt.disableflags |= PHYS_DSBL_CONTACT;
    CHECK(kind_at(m, d) == PHYS_STEP_SMOOTH);
    same_as_public(m, d);
    phys_free_data(d);
    phys_free_model(m);
  }
  // 4. ccp, friction 1 (the envelope 2 dt mu |v| = 0.04 m at 2 m/s, dt 0.01): 1 cm above the floor at 2 m/s
  physModel* m = gm_load(BALL, 0);
  m->opt.contact = PHYS_CONTACT_CCP;
  m->opt.timestep = 0.01;
  for (int g = 0; g < m->ngeom; g++) m->geom_friction[3 * g] = 1;
  physData* d = phys_make_data(m);
  ball_at(m, d, 0.11, 0, 0);
  d->qvel[0] = 2;
  CHECK_MSG(kind_at(m, d) == PHYS_STEP_CONSTRAINED, "fresh data: kind %d", kind_at(m, d));
  physData* d2 = phys_make_data(m);
  ball_at(m, d2, 0.11, 0, 0);
  d2->qvel[0] = 2;
  phys_forward(m, d2);   // cvel at the state
  CHECK(kind_at(m, d2) == PHYS_STEP_CONSTRAINED);
  phys_free_data(d2);
  phys_free_data(d);
  phys_free_model(m);
  // 5.
  for (int k = 0; k < 4; k++) lists_untouched(models[k]);
  // 6., 7.
  for (int k = 0; k < 4; k++) factor_kept_all(models[k]);
  for (int k = 0; k < 3; k++) local_built_once(models[k]);
  return test_done();
}

// test_step_equality_deriv.c - the step's derivatives with equality rows (src/grad/step_equality_deriv.c), lcp,
// cone and ccp at contact-free states:
//   - A and B (phys_step_jacobian) against four-point central differences of phys_step (h = 1e-3 in every
//     tangent, velocity and control coordinate; the Baumgarte rows put entries of 1e3..1e4 in A, so smaller steps
//     are rounding noise: worst error 7.5e-8 at h = 1e-3, 3.1e-7 at 3e-4, 7e-6 at 1e-5, and 1e-3 with two-point
//     differences at 1e-6) at GM_RTOL relative (grad_models.h's floor) on tests/data/equality_deriv.xml (a four-bar whose connect has a
//     row without lever, G_ee singular, driven by a motor; a box welded to the crank with anchor and torquescale;
//     a quartic joint coupling driven by a motor), tests/data/equality.xml, tests/data/fourbar.xml and
//     tests/data/equality_tendon.xml, at random states near the constraints (violated to ~0.1: Baumgarte's term
//     acts);
//   - P (phys_step_param_jacobian) for mass, damping and gear against four-point central differences of phys_step
//     over theta (h = 1e-3 of the value);
//   - phys_step_vjp and phys_step_param_vjp by dot-product tests against A, B and P (GM_DOT_TOL);
//   - phys_rollout_grad over 40 steps: dL/du and dL/d(mass, damping) against central differences of phys_rollout;
//   - the three contact models give the same bits; a placement parameter of a body that moves a connect or weld
//     is refused with a message (penalty's spring-dampers: test_step_equality_penalty_deriv.c);
//   - with contacts and limits (the record's kind PHYS_STEP_CONSTRAINED_EQ): A, B (phys_step_jacobian_fd, h = 1e-6,
//     inside the contact slop) and P (mass, friction, damping, gear; central differences) at 1e-5 relative on
//     tests/data/equality_contact_deriv.xml (a welded pair on the floor and a joint coupling whose first hinge is
//     at its limit: landing and resting (sticking) under lcp, cone and ccp, spinning (sliding) under lcp) and
//     tests/data/equality_contact.xml (a box connected to an arm, spinning on the floor: lcp, cone); the VJPs' dot
//     tests; phys_rollout_grad over 40 steps of the spinning box against central differences (1e-5); refused with
//     their messages: a sticking contact holding what the connect holds (also under position correction, whose
//     derivatives are test_step_equality_pos_deriv.c's).
#include "fd_check.h"
#include "rollout.h"
#include "step_record.h"

#define NSTATE 3
#define FD_H 1e-3

// x+ (-) xref (2nv) of one phys_step from (q, v, u)
static void step_from(const physModel* m, physData* d, const double* q, const double* v, const double* u,
                      const double* qref, const double* vref, double* res) {
  memcpy(d->qpos, q, sizeof(double) * m->nq);
  memcpy(d->qvel, v, sizeof(double) * m->nv);
  memcpy(d->ctrl, u, sizeof(double) * m->nu);
  phys_step(m, d);
  phys_difference_pos(m, res, 1, qref, d->qpos);
  for (int i = 0; i < m->nv; i++) res[m->nv + i] = d->qvel[i] - vref[i];
}

// Af (2nv x 2nv), Bf (2nv x nu) by four-point central differences of phys_step (FD_H); d's state restored
static void fd_ab(const physModel* m, physData* d, double* Af, double* Bf) {
  int nv = m->nv, nq = m->nq, nu = m->nu, n2 = 2 * nv;
  double q0[64], v0[32], u0[16], qr[64], vr[32], q[64], v[32], u[16], r[4][64];
  memcpy(q0, d->qpos, sizeof(double) * nq), memcpy(v0, d->qvel, sizeof(double) * nv), memcpy(u0, d->ctrl, sizeof(double) * nu);
  double t0 = d->time;
  phys_step(m, d);
  memcpy(qr, d->qpos, sizeof(double) * nq), memcpy(vr, d->qvel, sizeof(double) * nv);
  static const double off[4] = {2, 1, -1, -2};
  for (int c = 0; c < n2 + nu; c++) {
    for (int k = 0; k < 4; k++) {
      memcpy(q, q0, sizeof(double) * nq), memcpy(v, v0, sizeof(double) * nv), memcpy(u, u0, sizeof(double) * nu);
      if (c < nv) gm_perturb(m, q, q0, c, off[k] * FD_H);
      else if (c < n2) v[c - nv] += off[k] * FD_H;
      else u[c - n2] += off[k] * FD_H;
      d->time = t0;
      step_from(m, d, q, v, u, qr, vr, r[k]);
    }
    for (int i = 0; i < n2; i++) {
      double x = gm_fd4(r[0][i], r[1][i], r[2][i], r[3][i], FD_H);
      if (c < n2) Af[i * n2 + c] = x;
      else Bf[i * nu + c - n2] = x;
    }
  }
  memcpy(d->qpos, q0, sizeof(double) * nq), memcpy(d->qvel, v0, sizeof(double) * nv), memcpy(d->ctrl, u0, sizeof(double) * nu);
  d->time = t0;
}

// a random state near the constraints: q = qpos0 (+) 0.2 w (qpos0 satisfies every constraint of these models;
// the rows are violated to ~0.1, so Baumgarte's term acts), v = vs w', controls in [-1, 1]
static void near_state(const physModel* m, physData* d, physRng* rng, double vs) {
  double w[32];
  memcpy(d->qpos, m->qpos0, sizeof(double) * m->nq);
  gm_rand_vec(rng, w, m->nv);
  phys_integrate_pos(m, d->qpos, w, 0.2);
  gm_rand_vec(rng, d->qvel, m->nv);
  for (int i = 0; i < m->nv; i++) d->qvel[i] *= vs;
  gm_rand_vec(rng, d->ctrl, m->nu);
}

// worst relative error of A, B against differences and of the VJP's dot test at nstate random states
static void check_ab(const char* path, int cm, physRng* rng) {
  physModel* m = gm_load(path, 0);
  m->opt.contact = cm;
  physData* d = phys_make_data(m);
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  double *A = malloc(sizeof(double) * n2 * n2), *Af = malloc(sizeof(double) * n2 * n2);
  double *B = malloc(sizeof(double) * (n2 * nu + 1)), *Bf = malloc(sizeof(double) * (n2 * nu + 1));
  double *xn = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2), *xd = malloc(sizeof(double) * n2);
  double *ub = malloc(sizeof(double) * (nu + 1)), *ud = malloc(sizeof(double) * (nu + 1));
  double worst = 0, dot = 0;
  for (int s = 0; s < NSTATE; s++) {
    near_state(m, d, rng, 0.5);
    physStatus st = phys_step_jacobian(m, d, A, B);
    CHECK_MSG(st == PHYS_OK, "%s: status %d: %s", path, st, d->lastwarning);
    if (st != PHYS_OK) break;
    fd_ab(m, d, Af, Bf);
    worst = fmax(worst, gm_compare("A", A, Af, n2, n2, 1, GM_RTOL));
    if (nu > 0) worst = fmax(worst, gm_compare("B", B, Bf, n2, nu, 1, GM_RTOL));
    gm_rand_vec(rng, xn, n2);
    gm_rand_vec(rng, xd, n2);
    gm_rand_vec(rng, ud, nu);
    CHECK(phys_step_vjp(m, d, xn, xb, ub) == PHYS_OK);
    double sc, sb = 0, lhs = gm_bilinear(A, xn, xd, n2, n2, &sc), rhs = 0;
    if (nu > 0) lhs += gm_bilinear(B, xn, ud, n2, nu, &sb);
    for (int i = 0; i < n2; i++) rhs += xb[i] * xd[i];
    for (int i = 0; i < nu; i++) rhs += ub[i] * ud[i];
    dot = fmax(dot, fabs(lhs - rhs) / (sc + sb));
  }
  printf("%s (contact model %d): A, B vs differences %.3g, VJP dot test %.3g\n", path, cm, worst, dot);
  CHECK_MSG(dot < GM_DOT_TOL, "%s: dot %g", path, dot);
  free(A), free(Af), free(B), free(Bf), free(xn), free(xb), free(xd), free(ub), free(ud);
  phys_free_data(d);
  phys_free_model(m);
}

// P of mass, damping and gear against four-point differences, and phys_step_param_vjp's dot test
static void check_param(physRng* rng) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_deriv.xml", 0);
  static const char* const spec[] = {"mass:coupler", "mass:box", "damping:rocker", "gear:m*"};
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, 4, &log) == PHYS_OK, "%s", log.error);
  physData* d = phys_make_data(m);
  int nv = m->nv, n2 = 2 * nv, nt = t.ntheta;
  double th0[16], q0[64], v0[32], qr[64], vr[32], P[64 * 16], Pf[64 * 16], xn[64], tb[16], td[16];
  phys_param_get(&t, m, th0);
  double worst = 0, dot = 0;
  for (int s = 0; s < NSTATE; s++) {
    near_state(m, d, rng, 0.5);
    memcpy(q0, d->qpos, sizeof(double) * m->nq);
    memcpy(v0, d->qvel, sizeof(double) * nv);
    CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
    phys_step(m, d);
    memcpy(qr, d->qpos, sizeof(double) * m->nq);
    memcpy(vr, d->qvel, sizeof(double) * nv);
    fd_param_columns(m, d, &t, th0, q0, v0, qr, vr, 1e-2, Pf);
    memcpy(d->qpos, q0, sizeof(double) * m->nq);
    memcpy(d->qvel, v0, sizeof(double) * nv);
    worst = fmax(worst, gm_compare("P", P, Pf, n2, nt, 1, GM_RTOL));
    gm_rand_vec(rng, xn, n2);
    gm_rand_vec(rng, td, nt);
    CHECK(phys_step_param_vjp(m, d, &t, xn, tb) == PHYS_OK);
    double sc, lhs = gm_bilinear(P, xn, td, n2, nt, &sc), rhs = 0;
    for (int j = 0; j < nt; j++) rhs += tb[j] * td[j];
    dot = fmax(dot, fabs(lhs - rhs) / sc);
  }
  printf("equality_deriv.xml: P (%d columns) vs differences %.3g, VJP dot test %.3g\n", nt, worst, dot);
  CHECK_MSG(dot < GM_DOT_TOL, "param dot %g", dot);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// loss 1/2 |v_t|^2 summed over the rollout (rollout.h's physLossFn)
static double vel_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  (void)ctx, (void)t, (void)qpos, (void)g_q;
  const int nv = *(const int*)ctx;
  double l = 0;
  for (int i = 0; i < nv; i++) l += 0.5 * qvel[i] * qvel[i], g_v[i] = qvel[i];
  return l;
}

// worst error of dL/du (ubar, T nu) and dL/dtheta (tbar) against central differences of phys_rollout from
// (q0, v0) at step h (relative for the parameters, at least 1e-2 h), relative to max(|difference|, 1e-3 of the
// largest gradient)
static double rollout_fd_error(physModel* m, physData* d, const physParamTable* t, int T, double* u,
                               const double* ubar, const double* tbar, const double* q0, const double* v0, double h) {
  int nv = m->nv, nu = m->nu, nt = t->ntheta;
  double th0[16], th[16], worst = 0, gmax = 0;
  phys_param_get(t, m, th0);
  for (int i = 0; i < T * nu; i++) gmax = fmax(gmax, fabs(ubar[i]));
  for (int i = 0; i < nt; i++) gmax = fmax(gmax, fabs(tbar[i]));
  for (int k = 0; k < T * nu + nt; k++) {   // controls, then the parameters
    double f[2], hk = k < T * nu ? h : h * fmax(fabs(th0[k - T * nu]), 1e-2);
    for (int s = 0; s < 2; s++) {
      memcpy(th, th0, sizeof(double) * nt);
      double uk = u[k < T * nu ? k : 0];
      if (k < T * nu) u[k] += s ? -hk : hk;
      else th[k - T * nu] += s ? -hk : hk;
      CHECK(phys_param_set(t, m, th) == PHYS_OK);
      phys_reset_data(m, d);
      memcpy(d->qpos, q0, sizeof(double) * m->nq), memcpy(d->qvel, v0, sizeof(double) * nv);
      f[s] = phys_rollout(m, d, T, u, vel_loss, &nv) / (2 * hk);
      if (k < T * nu) u[k] = uk;
    }
    double fd = f[0] - f[1], an = k < T * nu ? ubar[k] : tbar[k - T * nu];
    worst = fmax(worst, fabs(fd - an) / fmax(fabs(fd), 1e-3 * fmax(gmax, 1)));
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  return worst;
}

// phys_rollout_grad through 40 steps with equality rows: dL/du and dL/dtheta (mass, damping) against central
// differences of phys_rollout (h = 1e-4, relative for the parameters; rounding noise grows below: 2.1e-8 at 1e-4,
// 1.2e-7 at 1e-5, 2.1e-6 at 1e-6), 1e-6 relative (floor 1e-3 of the largest dL/du)
static void check_rollout(physRng* rng) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_deriv.xml", 0);
  static const char* const spec[] = {"mass:coupler", "damping:rocker"};
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, 2, &log) == PHYS_OK, "%s", log.error);
  physData* d = phys_make_data(m);
  enum { T = 40 };
  int nv = m->nv, nu = m->nu, nq = m->nq;
  double u[T * 2], ubar[T * 2], th0[2], tbar[2], total, q0[64], v0[32];
  near_state(m, d, rng, 0.5);
  memcpy(d->qpos, m->qpos0, sizeof(double) * nq);   // on the constraints: moving with velocities and controls
  for (int i = 0; i < T * nu; i++) u[i] = phys_rng_range(rng, -1, 1);
  memcpy(q0, d->qpos, sizeof(double) * nq), memcpy(v0, d->qvel, sizeof(double) * nv);
  phys_param_get(&t, m, th0);
  int k = phys_rollout_interval(T, 0);
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, T, k, t.ntheta));
  CHECK(phys_rollout_grad(m, d, &t, T, k, u, vel_loss, &nv, work, &total, NULL, ubar, tbar, &log) == PHYS_OK);
  double worst = rollout_fd_error(m, d, &t, T, u, ubar, tbar, q0, v0, 1e-4);
  printf("rollout of %d steps with equalities: dL/du, dL/dtheta vs differences %.3g (loss %g)\n", T, worst, total);
  CHECK_MSG(worst < 1e-6, "rollout gradient %g", worst);
  free(work);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// lcp, cone and ccp give the same A; penalty and a state with a contact are refused with their messages
static void check_models_and_refusals(void) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_deriv.xml", 0);
  physData* d = phys_make_data(m);
  int n2 = 2 * m->nv;
  double *A0 = malloc(sizeof(double) * n2 * n2), *A1 = malloc(sizeof(double) * n2 * n2);
  d->qvel[0] = 0.3;
  CHECK(phys_step_jacobian(m, d, A0, NULL) == PHYS_OK);
  for (int cm = PHYS_CONTACT_CONE; cm <= PHYS_CONTACT_CCP; cm++) {
    m->opt.contact = cm;
    CHECK(phys_step_jacobian(m, d, A1, NULL) == PHYS_OK);
    CHECK_MSG(!memcmp(A0, A1, sizeof(double) * n2 * n2), "contact model %d differs", cm);
  }
  physParamTable t;   // a placement that moves the connect is refused; one that moves a joint coupling only is not
  physLog log = {0};
  const char* spec[1] = {"pos:rocker"};
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "param 'pos:rocker': body 'rocker' moves a connect or weld equality constraint, whose "
                   "derivatives with respect to placements are not supported yet"), "%s", log.error);
  phys_param_table_free(&t);
  spec[0] = "pos:pend";
  CHECK_MSG(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK, "%s", log.error);
  phys_param_table_free(&t);
  m->opt.contact = PHYS_CONTACT_PENALTY;   // (its spring-dampers: test_step_equality_penalty_deriv.c)
  CHECK_MSG(phys_step_jacobian(m, d, A1, NULL) == PHYS_OK, "%s", d->lastwarning);
  free(A0), free(A1);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// equality rows together with contacts and limits (the kind PHYS_STEP_CONSTRAINED_EQ)

#define CEQ_H 1e-6     // central differences: within the contact slop (1e-5) of the state's 5e-6 penetration
#define CEQ_TOL 1e-5   // relative (GM_FLOOR of the block), analytic against those differences
#define CEQ_DEPTH 5e-6 // the floor boxes' penetration: inside the slop, no position correction, off its kink

// a state in contact: every free body below z 0.3 lowered CEQ_DEPTH onto the floor with vertical velocity vz,
// spin wz about z and velocity vx along x; a limited hinge at its upper bound when lim
static void contact_state(const physModel* m, physData* d, double vz, double wz, double vx) {
  phys_reset_data(m, d);
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (m->jnt_type[j] == PHYS_JNT_FREE && d->qpos[qa + 2] < 0.3) {
      d->qpos[qa + 2] -= CEQ_DEPTH;
      d->qvel[da] = vx, d->qvel[da + 2] = vz, d->qvel[da + 5] = wz;
    }
    if (m->jnt_type[j] == PHYS_JNT_HINGE && m->jnt_limited[j]) d->qpos[qa] = m->jnt_range[2 * j + 1];
  }
}

// P by central differences of phys_step over each parameter (CEQ_H relative; the state and its empty warm
// start restored each time)
static void contact_param_fd(physModel* m, physData* d, const physParamTable* t, double* Pf) {
  int nv = m->nv, nq = m->nq, nt = t->ntheta;
  double th0[16], th[16], q0[64], v0[32], qr[64], vr[32], r[2][64];
  phys_param_get(t, m, th0);
  memcpy(q0, d->qpos, sizeof(double) * nq), memcpy(v0, d->qvel, sizeof(double) * nv);
  phys_step(m, d);
  memcpy(qr, d->qpos, sizeof(double) * nq), memcpy(vr, d->qvel, sizeof(double) * nv);
  for (int j = 0; j < nt; j++) {
    double h = CEQ_H * fmax(fabs(th0[j]), 1);
    for (int k = 0; k < 2; k++) {
      memcpy(th, th0, sizeof(double) * nt);
      th[j] += k ? -h : h;
      d->ncon = d->ncon_prev = 0, d->nlimit = 0;
      fd_step_theta(m, d, t, th, q0, v0, qr, vr, r[k]);
    }
    for (int i = 0; i < 2 * nv; i++) Pf[i * nt + j] = (r[0][i] - r[1][i]) / (2 * h);
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  memcpy(d->qpos, q0, sizeof(double) * nq), memcpy(d->qvel, v0, sizeof(double) * nv);
  d->ncon = d->ncon_prev = 0, d->nlimit = 0;
}

// A, B, P against central differences (phys_step_jacobian_fd, contact_param_fd) and the VJPs' dot tests at one
// contact state; the record's kind is PHYS_STEP_CONSTRAINED_EQ
static void check_contact(const char* path, int cm, const char* what, double vz, double wz, double vx,
                          const char* const* spec, int nspec, physRng* rng) {
  physModel* m = gm_load(path, 0);
  m->opt.contact = cm;
  m->opt.solver_tolerance = 1e-12;
  m->geom_friction[0] = 0.5;   // the floor (geom 0) below the boxes' 1: friction:box is the pairs' maximum
  physData* d = phys_make_data(m);
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
  int nv = m->nv, n2 = 2 * nv, nu = m->nu, nt = t.ntheta;
  double *A = calloc(n2 * n2, 8), *Af = calloc(n2 * n2, 8), *B = calloc(n2 * nu + 1, 8), *Bf = calloc(n2 * nu + 1, 8);
  double *P = calloc(n2 * nt + 1, 8), *Pf = calloc(n2 * nt + 1, 8);
  double *xn = calloc(n2, 8), *xd = calloc(n2, 8), *xb = calloc(n2, 8), *ud = calloc(nu + 1, 8), *ub = calloc(nu + 1, 8);
  double *td = calloc(nt + 1, 8), *tb = calloc(nt + 1, 8);
  contact_state(m, d, vz, wz, vx);
  gm_rand_vec(rng, d->ctrl, nu);
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK_MSG(rec.kind == PHYS_STEP_CONSTRAINED_EQ, "%s %s: kind %d", path, what, rec.kind);
  phys_step_record_free(d, &rec);
  physStatus st = phys_step_jacobian(m, d, A, B);
  CHECK_MSG(st == PHYS_OK, "%s %s: status %d: %s", path, what, st, d->lastwarning);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  CHECK(phys_step_jacobian_fd(m, d, CEQ_H, Af, Bf) == PHYS_OK);
  contact_param_fd(m, d, &t, Pf);
  double ea = gm_compare("A", A, Af, n2, n2, 1, CEQ_TOL), eb = nu > 0 ? gm_compare("B", B, Bf, n2, nu, 1, CEQ_TOL) : 0;
  double ep = gm_compare("P", P, Pf, n2, nt, 1, CEQ_TOL);
  gm_rand_vec(rng, xn, n2), gm_rand_vec(rng, xd, n2), gm_rand_vec(rng, ud, nu), gm_rand_vec(rng, td, nt);
  CHECK(phys_step_vjp(m, d, xn, xb, ub) == PHYS_OK);
  CHECK(phys_step_param_vjp(m, d, &t, xn, tb) == PHYS_OK);
  double sa, sb = 0, sp, lhs = gm_bilinear(A, xn, xd, n2, n2, &sa), rhs = 0;
  if (nu > 0) lhs += gm_bilinear(B, xn, ud, n2, nu, &sb);
  for (int i = 0; i < n2; i++) rhs += xb[i] * xd[i];
  for (int i = 0; i < nu; i++) rhs += ub[i] * ud[i];
  double dot = fabs(lhs - rhs) / (sa + sb), lp = gm_bilinear(P, xn, td, n2, nt, &sp), rp = 0;
  for (int j = 0; j < nt; j++) rp += tb[j] * td[j];
  dot = fmax(dot, fabs(lp - rp) / sp);
  printf("%s %s (contact model %d): A %.3g, B %.3g, P (%d columns) %.3g vs differences; dot %.3g\n",
         strrchr(path, '/') + 1, what, cm, ea, eb, nt, ep, dot);
  CHECK_MSG(dot < GM_DOT_TOL, "%s %s: dot %g", path, what, dot);
  free(A), free(Af), free(B), free(Bf), free(P), free(Pf), free(xn), free(xd), free(xb), free(ud), free(ub);
  free(td), free(tb);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// phys_rollout_grad through 40 steps in contact (sliding, no position correction along the way): dL/du and
// dL/dtheta against central differences of phys_rollout (h = 1e-6, relative for the parameters), 1e-5 relative
// (floor 1e-3 of the largest)
static void check_contact_rollout(const char* path, double wz, double vx, const char* const* spec, int nspec,
                                  physRng* rng) {
  physModel* m = gm_load(path, 0);
  m->geom_friction[0] = 0.02;   // slippery: the box keeps spinning over the 40 steps (sticking would be refused)
  m->geom_friction[3 * phys_name2id(m, "geom", "box")] = 0.05;
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
  physData* d = phys_make_data(m);
  enum { T = 40 };
  int nv = m->nv, nu = m->nu, nq = m->nq, nt = t.ntheta;
  double u[T * 2 + 1], ubar[T * 2 + 1], th0[8], tbar[8], total, q0[64], v0[32];
  contact_state(m, d, 0, wz, vx);
  for (int i = 0; i < T * nu; i++) u[i] = phys_rng_range(rng, -0.3, 0.3);
  memcpy(q0, d->qpos, sizeof(double) * nq), memcpy(v0, d->qvel, sizeof(double) * nv);
  phys_param_get(&t, m, th0);
  int k = phys_rollout_interval(T, 0);
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, T, k, nt));
  physStatus st = phys_rollout_grad(m, d, &t, T, k, u, vel_loss, &nv, work, &total, NULL, ubar, tbar, &log);
  CHECK_MSG(st == PHYS_OK, "%s: %s %s", path, log.error, d->lastwarning);
  double worst = rollout_fd_error(m, d, &t, T, u, ubar, tbar, q0, v0, 1e-6);
  printf("%s: rollout of %d steps in contact: dL/du, dL/dtheta vs differences %.3g (loss %g)\n",
         strrchr(path, '/') + 1, T, worst, total);
  CHECK_MSG(worst < 1e-5, "contact rollout gradient %g", worst);
  free(work);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// refused with contacts: an equality row and a sticking contact holding the same motion (the connect and the
// resting box's friction), also with the box under position correction
static void check_contact_refusals(void) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_contact.xml", 0);   // the box rests on the floor
  physData* d = phys_make_data(m);
  double* A0 = malloc(sizeof(double) * 4 * m->nv * m->nv);
  contact_state(m, d, 0, 0, 0);   // sticking: the connect and the corners' friction hold the box's x and y
  CHECK(phys_step_jacobian(m, d, A0, NULL) == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(d->lastwarning, "equality constraints at a state with contacts or limits together with a sticking "
                   "contact or an active limit that holds a motion an equality row holds too are not supported yet"),
            "%s", d->lastwarning);
  phys_reset_data(m, d);
  for (int j = 0; j < m->njnt; j++)   // the box 1e-4 into the floor: position correction
    if (m->jnt_type[j] == PHYS_JNT_FREE && d->qpos[m->jnt_qposadr[j] + 2] < 0.15) d->qpos[m->jnt_qposadr[j] + 2] -= 1e-4;
  CHECK(phys_step_jacobian(m, d, A0, NULL) == PHYS_ERR_MODEL);   // (the correction itself is differentiated:
  CHECK_MSG(strstr(d->lastwarning, "together with a sticking contact"), "%s",   // test_step_equality_pos_deriv.c)
            d->lastwarning);
  free(A0);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  physRng rng;
  phys_rng_seed(&rng, 20261128u);
  check_ab(PHYS_SOURCE_DIR "/tests/data/equality_deriv.xml", PHYS_CONTACT_LCP, &rng);
  check_ab(PHYS_SOURCE_DIR "/tests/data/equality_deriv.xml", PHYS_CONTACT_CCP, &rng);
  check_ab(PHYS_SOURCE_DIR "/tests/data/equality.xml", PHYS_CONTACT_LCP, &rng);
  check_ab(PHYS_SOURCE_DIR "/tests/data/fourbar.xml", PHYS_CONTACT_CONE, &rng);
  check_ab(PHYS_SOURCE_DIR "/tests/data/equality_tendon.xml", PHYS_CONTACT_LCP, &rng);
  check_param(&rng);
  check_rollout(&rng);
  check_models_and_refusals();
  static const char* const pair_spec[] = {"mass:base", "mass:top", "friction:base", "damping:h1", "gear:push"};
  static const char* const arm_spec[] = {"mass:box", "friction:box", "mass:arm"};
  const char* pair = PHYS_SOURCE_DIR "/tests/data/equality_contact_deriv.xml";
  const char* arm = PHYS_SOURCE_DIR "/tests/data/equality_contact.xml";
  for (int cm = PHYS_CONTACT_LCP; cm <= PHYS_CONTACT_CCP; cm++) {
    check_contact(pair, cm, "welded pair landing, limit", -0.3, 0, 0, pair_spec, 5, &rng);
    check_contact(pair, cm, "welded pair resting, limit", 0, 0, 0, pair_spec, 5, &rng);
  }
  // sliding (cone's sliding pair is left out: its differences at h and h/3 differ by 1.4e-3, the solver's noise)
  check_contact(pair, PHYS_CONTACT_LCP, "welded pair spinning, limit", 0, 1.5, 0, pair_spec, 5, &rng);
  check_contact(arm, PHYS_CONTACT_LCP, "connected box spinning", 0, 2, 0, arm_spec, 3, &rng);
  check_contact(arm, PHYS_CONTACT_CONE, "connected box spinning", 0, 2, 0, arm_spec, 3, &rng);
  check_contact_rollout(arm, 10, 0, arm_spec, 3, &rng);
  check_contact_refusals();
  return test_done();
}

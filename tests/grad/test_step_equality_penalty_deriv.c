// test_step_equality_penalty_deriv.c - the penalty step's derivatives with equality spring-dampers
// (src/grad/step_equality_penalty_deriv.c inside penalty_deriv.c's tape), through phys_step_jacobian,
// phys_step_vjp, phys_step_param_jacobian, phys_step_param_vjp:
//   - the tape replays phys_step: v + dt qacc after phys_step_jacobian equals phys_step's v+ bit for bit;
//   - A, B against four-point central differences (phys_step_jacobian_fd at h and 2h, (4 J_h - J_2h) / 3) and P
//     (mass, damping, gear and the equalities' own polycoef and solref) against four-point central differences of
//     phys_step under phys_param_set, GM_RTOL relative with grad_models.h's floor, contact-free at random states
//     near the constraints (violated to ~0.1: the springs act) on tests/data/equality_deriv.xml (connect with an
//     out-of-plane row without lever, so G of its block is singular; weld with anchor and torquescale; quartic
//     joint coupling), tests/data/equality_tendon.xml (tendon couplings, stiff solref 0.002) and
//     tests/data/fourbar.xml;
//   - with penalty contacts: a welded pair pressed 1 mm into the floor, sliding and spinning, and a coupled
//     pendulum pair past its limit (tests/data/equality_contact_deriv.xml);
//   - dot-product tests: phys_step_vjp against A, B from the forward mode (columns) and phys_step_param_vjp
//     against P (GM_DOT_TOL);
//   - polycoef through the hard rows (lcp): P against differences contact-free on equality_deriv.xml (solref's
//     columns exactly 0 there) and with contacts and a limit (the kind PHYS_STEP_CONSTRAINED_EQ) on
//     equality_contact_deriv.xml;
// These checks catch a missing term: with the constraint-space inertia's derivative dLambda left out of the forward
// mode, A errs by 36, 1.75 and 0.15 relative on the three contact-free models (measured by removing it).
// slider_crank.xml of libmujoco-samples has no <equality> (its actuators are slider-crank transmissions, whose
// derivatives phys_step_linearize refuses); the only sample with one, active_adhesion.xml, needs adhesion.
#include "grad_models.h"
#include "params.h"

#define NSTATE 2
// four-point differences in q and v: 1e-4 contact-free (the springs' rates ~ 1e3..1e5 / s^2), 1e-5 in contact
// (tilting the pressed box: at 1e-4 its d(v+)/d(z) errs by 1.1e-6 relative, the stencil's h^4 term), 1e-3 for the
// hard rows (check_hard)
static double g_h = 1e-4;
#define FD_H g_h
static double g_ph = 1e-4;   // relative, in theta
static double g_tol = GM_RTOL;   // analytic against the differences (relative, grad_models.h's floor)
#define FD_PH g_ph

// x+ (-) (q0, v0) of phys_step from d's saved state (q, v, u) into res (2nv); e is the scratch data
static void step_res(const physModel* m, const physData* d, physData* e, const double* q0, const double* v0,
                     double* res) {
  memcpy(e->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(e->qvel, d->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(e->ctrl, d->ctrl, sizeof(double) * (size_t)m->nu);
  e->time = d->time;
  e->ncon = e->ncon_prev = 0;
  phys_step(m, e);
  if (!q0) return;
  phys_difference_pos(m, res, 1, q0, e->qpos);
  for (int i = 0; i < m->nv; i++) res[m->nv + i] = e->qvel[i] - v0[i];
}

// P by four-point central differences of phys_step under phys_param_set (step FD_PH max(1, |theta|))
static void param_fd(physModel* m, const physData* d, const physParamTable* t, double* Pf) {
  int nv = m->nv, n2 = 2 * nv, nt = t->ntheta;
  physData* e = phys_make_data(m);
  double *th0 = malloc(sizeof(double) * nt), *th = malloc(sizeof(double) * nt);
  double *q0 = malloc(sizeof(double) * m->nq), *v0 = malloc(sizeof(double) * nv), *r = malloc(sizeof(double) * 4 * n2);
  phys_param_get(t, m, th0);
  step_res(m, d, e, NULL, NULL, NULL);
  memcpy(q0, e->qpos, sizeof(double) * m->nq), memcpy(v0, e->qvel, sizeof(double) * nv);
  static const double off[4] = {2, 1, -1, -2};
  for (int c = 0; c < nt; c++) {
    double h = FD_PH * fmax(1, fabs(th0[c]));
    for (int k = 0; k < 4; k++) {
      memcpy(th, th0, sizeof(double) * nt);
      th[c] += off[k] * h;
      CHECK(phys_param_set(t, m, th) == PHYS_OK);
      step_res(m, d, e, q0, v0, r + (size_t)k * n2);
    }
    for (int i = 0; i < n2; i++) Pf[(size_t)i * nt + c] = gm_fd4(r[i], r[n2 + i], r[2 * n2 + i], r[3 * n2 + i], h);
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  free(th0), free(th), free(q0), free(v0), free(r);
  phys_free_data(e);
}

// Af (2nv x 2nv), Bf (2nv x nu) by four-point differences from phys_step_jacobian_fd at FD_H and 2 FD_H
static void ab_fd(const physModel* m, physData* d, double* Af, double* Bf) {
  int n2 = 2 * m->nv, nu = m->nu;
  double *A2 = malloc(sizeof(double) * n2 * n2), *B2 = malloc(sizeof(double) * (n2 * nu + 1));
  CHECK_MSG(phys_step_jacobian_fd(m, d, FD_H, Af, nu > 0 ? Bf : NULL) == PHYS_OK, "%s", d->lastwarning);
  CHECK(phys_step_jacobian_fd(m, d, 2 * FD_H, A2, nu > 0 ? B2 : NULL) == PHYS_OK);
  for (int i = 0; i < n2 * n2; i++) Af[i] = (4 * Af[i] - A2[i]) / 3;
  for (int i = 0; i < n2 * nu; i++) Bf[i] = (4 * Bf[i] - B2[i]) / 3;
  free(A2), free(B2);
}

// 1 if the tape's v+ (v + dt qacc after phys_step_jacobian) is phys_step's bit for bit
static int replays_step(const physModel* m, const physData* d) {
  physData* e = phys_make_data(m);
  step_res(m, d, e, NULL, NULL, NULL);
  int same = 1;
  for (int i = 0; i < m->nv; i++) same = same && d->qvel[i] + m->opt.timestep * d->qacc[i] == e->qvel[i];
  phys_free_data(e);
  return same;
}

// worst errors of one state: A, B, P against differences (into err[0..2]) and the dot tests (err[3])
static void check_state(const char* what, physModel* m, physData* d, const physParamTable* t, physRng* rng,
                        double err[4]) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu, nt = t ? t->ntheta : 0;
  double *A = calloc(n2 * n2, 8), *Af = calloc(n2 * n2, 8), *B = calloc(n2 * nu + 1, 8), *Bf = calloc(n2 * nu + 1, 8);
  double *P = calloc(n2 * nt + 1, 8), *Pf = calloc(n2 * nt + 1, 8);
  double *xn = calloc(n2, 8), *xd = calloc(n2, 8), *xb = calloc(n2, 8), *ud = calloc(nu + 1, 8), *ub = calloc(nu + 1, 8);
  double *td = calloc(nt + 1, 8), *tb = calloc(nt + 1, 8);
  physStatus st = phys_step_jacobian(m, d, A, B);
  CHECK_MSG(st == PHYS_OK, "%s: status %d: %s", what, st, d->lastwarning);
  if (m->opt.contact == PHYS_CONTACT_PENALTY)
    CHECK_MSG(replays_step(m, d), "%s: the tape's v+ differs from phys_step's", what);
  ab_fd(m, d, Af, Bf);
  err[0] = fmax(err[0], gm_compare(what, A, Af, n2, n2, 1, g_tol));
  if (nu > 0) err[1] = fmax(err[1], gm_compare(what, B, Bf, n2, nu, 1, g_tol));
  if (nt > 0) {
    CHECK(phys_step_param_jacobian(m, d, t, P) == PHYS_OK);
    param_fd(m, d, t, Pf);
    for (int e = 0; e < t->n; e++) {   // per entry: relative to its own columns' scale
      const physParam* p = t->param + e;
      double *a = calloc(n2 * p->size, 8), *b = calloc(n2 * p->size, 8);
      for (int i = 0; i < n2; i++)
        for (int j = 0; j < p->size; j++)
          a[i * p->size + j] = P[(size_t)i * nt + p->adr + j], b[i * p->size + j] = Pf[(size_t)i * nt + p->adr + j];
      err[2] = fmax(err[2], gm_compare(p->name, a, b, n2, p->size, 1, g_tol));
      free(a), free(b);
    }
  }
  gm_rand_vec(rng, xn, n2), gm_rand_vec(rng, xd, n2), gm_rand_vec(rng, ud, nu), gm_rand_vec(rng, td, nt);
  CHECK(phys_step_vjp(m, d, xn, xb, ub) == PHYS_OK);
  double sa, sb = 0, lhs = gm_bilinear(A, xn, xd, n2, n2, &sa), rhs = 0;
  if (nu > 0) lhs += gm_bilinear(B, xn, ud, n2, nu, &sb);
  for (int i = 0; i < n2; i++) rhs += xb[i] * xd[i];
  for (int i = 0; i < nu; i++) rhs += ub[i] * ud[i];
  err[3] = fmax(err[3], fabs(lhs - rhs) / (sa + sb));
  if (nt > 0) {
    double sp, lp = gm_bilinear(P, xn, td, n2, nt, &sp), rp = 0;
    CHECK(phys_step_param_vjp(m, d, t, xn, tb) == PHYS_OK);
    for (int j = 0; j < nt; j++) rp += tb[j] * td[j];
    err[3] = fmax(err[3], fabs(lp - rp) / sp);
  }
  CHECK_MSG(err[3] < GM_DOT_TOL, "%s: dot %g", what, err[3]);
  free(A), free(Af), free(B), free(Bf), free(P), free(Pf), free(xn), free(xd), free(xb), free(ud), free(ub);
  free(td), free(tb);
}

// a random state near the constraints: q = qpos0 (+) 0.2 w, v = 0.5 w', controls in [-1, 1]
static void near_state(const physModel* m, physData* d, physRng* rng) {
  double w[64];
  phys_reset_data(m, d);
  gm_rand_vec(rng, w, m->nv);
  phys_integrate_pos(m, d->qpos, w, 0.2);
  gm_rand_vec(rng, d->qvel, m->nv);
  for (int i = 0; i < m->nv; i++) d->qvel[i] *= 0.5;
  gm_rand_vec(rng, d->ctrl, m->nu);
}

// contact-free models under penalty at NSTATE random states, with the parameter specs
static void check_model(const char* name, const char* const* spec, int nspec, physRng* rng) {
  char path[512];
  snprintf(path, sizeof path, PHYS_SOURCE_DIR "/tests/data/%s", name);
  physModel* m = gm_load(path, 0);
  m->opt.contact = PHYS_CONTACT_PENALTY;
  physData* d = phys_make_data(m);
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
  double err[4] = {0, 0, 0, 0};
  for (int s = 0; s < NSTATE; s++) {
    near_state(m, d, rng);
    check_state(name, m, d, &t, rng, err);
  }
  printf("%s (penalty): A %.3g, B %.3g, P (%d columns) %.3g vs differences; dot %.3g\n", name, err[0], err[1],
         t.ntheta, err[2], err[3]);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// equality_contact_deriv.xml under penalty: the welded pair 1 mm into the floor, sliding (vx) and spinning (wz),
// the limited hinge 0.05 past its bound (its coupled partner moves with it)
static void check_contact(physRng* rng) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_contact_deriv.xml", 0);
  m->opt.contact = PHYS_CONTACT_PENALTY;
  physData* d = phys_make_data(m);
  static const char* const spec[] = {"mass:base", "friction:base", "penalty:stiffness", "damping:h1", "gear:push"};
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, 5, &log) == PHYS_OK, "%s", log.error);
  double err[4] = {0, 0, 0, 0};
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (m->jnt_type[j] == PHYS_JNT_FREE) {
      d->qpos[qa + 2] -= 1e-3;
      d->qvel[da] = 0.3, d->qvel[da + 2] = -0.01, d->qvel[da + 5] = 2;
    }
    if (m->jnt_type[j] == PHYS_JNT_HINGE && m->jnt_limited[j]) d->qpos[qa] = m->jnt_range[2 * j + 1] + 0.05;
  }
  d->ctrl[0] = 0.2;
  g_h = 1e-5;
  d->time = 1;   // (not the first step: its overlap warning would fail the differences)
  check_state("equality_contact_deriv.xml", m, d, &t, rng, err);
  printf("equality_contact_deriv.xml (penalty, contacts and a limit): A %.3g, B %.3g, P (%d columns) %.3g vs "
         "differences; dot %.3g\n", err[0], err[1], t.ntheta, err[2], err[3]);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// the polycoef parameter in the hard rows (lcp; the smooth equality step contact-free, the kind
// PHYS_STEP_CONSTRAINED_EQ with contacts and a limit): P against four-point differences (GM_RTOL contact-free; in
// contact 1e-5, the solver's tolerance in the differences) and the dot tests; solref has zero columns there
static void check_hard(physRng* rng) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_deriv.xml", 0);
  static const char* const spec[] = {"polycoef:couple", "solref:hold", "mass:box"};
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, 3, &log) == PHYS_OK, "%s", log.error);
  physData* d = phys_make_data(m);
  double err[4] = {0, 0, 0, 0}, *P = calloc(4 * m->nv * t.ntheta, 8);
  g_h = 1e-3;   // (the hard rows' Baumgarte terms: test_step_equality_deriv.c's step; B errs by 6.3e-6 at 1e-4)
  near_state(m, d, rng);
  check_state("equality_deriv.xml (lcp)", m, d, &t, rng, err);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  for (int i = 0; i < 2 * m->nv; i++) CHECK(P[i * t.ntheta + 5] == 0 && P[i * t.ntheta + 6] == 0);
  printf("equality_deriv.xml (lcp, contact-free): A %.3g, B %.3g, P (polycoef, solref, mass) %.3g; dot %.3g\n",
         err[0], err[1], err[2], err[3]);
  free(P);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
  // with contacts and a limit (the kind PHYS_STEP_CONSTRAINED_EQ): the welded pair 5e-6 into the floor (inside the
  // slop: no position correction), spinning; the coupled hinge at its upper limit; differences at 1e-6 (inside
  // the slop), 1e-5 relative as test_step_equality_deriv.c's contact checks
  m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_contact_deriv.xml", 0);
  m->opt.solver_tolerance = 1e-12;
  static const char* const cspec[] = {"polycoef:couple", "mass:base"};
  CHECK_MSG(phys_param_table_build(&t, m, cspec, 2, &log) == PHYS_OK, "%s", log.error);
  d = phys_make_data(m);
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (m->jnt_type[j] == PHYS_JNT_FREE && d->qpos[qa + 2] < 0.3) d->qpos[qa + 2] -= 5e-6, d->qvel[da + 5] = 1.5;
    if (m->jnt_type[j] == PHYS_JNT_HINGE && m->jnt_limited[j]) d->qpos[qa] = m->jnt_range[2 * j + 1];
  }
  g_h = g_ph = 1e-6, g_tol = 1e-5;
  memset(err, 0, sizeof err);
  check_state("equality_contact_deriv.xml (lcp)", m, d, &t, rng, err);
  printf("equality_contact_deriv.xml (lcp, contacts and a limit): A %.3g, B %.3g, P (polycoef, mass) %.3g; dot "
         "%.3g\n", err[0], err[1], err[2], err[3]);
  g_ph = 1e-4, g_tol = GM_RTOL;
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  physRng rng;
  phys_rng_seed(&rng, 15);
  static const char* const deriv_spec[] = {"mass:box", "damping:crank", "gear:m1", "mass:pend", "polycoef:couple",
                                           "solref:hold", "solref:couple"};
  static const char* const tendon_spec[] = {"mass:b", "damping:j1", "polycoef:tcouple"};
  static const char* const fourbar_spec[] = {"mass:coupler"};
  check_model("equality_deriv.xml", deriv_spec, 7, &rng);
  check_model("equality_tendon.xml", tendon_spec, 3, &rng);
  check_model("fourbar.xml", fourbar_spec, 1, &rng);
  check_contact(&rng);
  check_hard(&rng);
  return test_done();
}

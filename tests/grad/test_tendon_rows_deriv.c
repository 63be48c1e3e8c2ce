// test_tendon_rows_deriv.c - derivatives of the tendon limit rows (src/grad/tendon_rows_deriv.c, issue 15 item 3)
// through the constrained step's Jacobians: an arm held by a rope (a spatial tendon through sites, limited above;
// its row's Jacobian moves with q: dJ = -K dq) and a ball on a fixed-tendon stop (limited below: dJ = 0), a motor
// on the rope. At states where the rows are active, pressing and corrected (dist below the slop), in lcp, cone
// and ccp: A and B against central differences of phys_step (h = 1e-6, GM_RTOL), and the dot test of
// phys_step_vjp against A and B (y' A x = (A' y)' x to GM_DOT_TOL); the ball exactly at its stop (the kink: one
// side against one-sided differences, the other side's jump shown). Penalty's limit springs (src/grad/penalty_deriv.c:
// f = -k dist - c r.v along r, implicit) at the same states: A, B likewise, P over penalty:stiffness and
// penalty:damping against central differences. Tendon frictionloss rows at states with limit rows (sliding), all
// four models: A, B and the dot tests as above. The rope
// wrapped over a drum (a cylinder; its row's Jacobian moves with the tangent points sliding on the drum,
// tendon_deriv.h) at its limit, in all four models: A, B and the dot tests as above.
#include "contact.h"
#include "grad_models.h"
#include "model.h"
#include "model/mjcf_text.h"
#include "params.h"

static const char* MODEL =
    "<mujoco><compiler angle='radian'/><option timestep='0.001'/><worldbody><site name='top' pos='0.3 0 0.4'/>"
    "<body name='arm'><joint name='h' axis='0 1 0' damping='0.1'/><geom type='capsule' fromto='0 0 0 .5 0 0' size='.02' "
    "mass='.5' contype='0' conaffinity='0'/><site name='tip' pos='.5 0 0'/></body>"
    "<body pos='1 0 0'><joint name='z' type='slide' axis='0 0 1'/><geom size='.05' mass='1' contype='0' "
    "conaffinity='0'/></body></worldbody><tendon>"
    "<spatial name='rope' limited='true' range='0 0.55'><site site='top'/><site site='tip'/></spatial>"
    "<fixed name='stop' limited='true' range='-0.1 5'><joint joint='z' coef='2'/></fixed></tendon>"
    "<actuator><motor tendon='rope' gear='2'/></actuator></mujoco>";

// the same arm with its rope over a drum (a cylinder, tilted out of square with the arm's plane so that the path
// climbs it and the tangent points slide off that plane) between top and tip
static const char* MODEL_WRAP =
    "<mujoco><compiler angle='radian'/><option timestep='0.001'/><worldbody><site name='top' pos='0.3 0 0.4'/>"
    "<geom name='drum' type='cylinder' size='.06 .05' pos='.42 0 .18' euler='1.3 0.3 0' contype='0' "
    "conaffinity='0'/>"
    "<body name='arm'><joint name='h' axis='0 1 0' damping='0.1'/><geom type='capsule' fromto='0 0 0 .5 0 0' size='.02' "
    "mass='.5' contype='0' conaffinity='0'/><site name='tip' pos='.5 0 0'/></body>"
    "<body pos='1 0 0'><joint name='z' type='slide' axis='0 0 1'/><geom size='.05' mass='1' contype='0' "
    "conaffinity='0'/></body></worldbody><tendon>"
    "<spatial name='rope' limited='true' range='0 0.55'><site site='top'/><geom geom='drum'/><site site='tip'/></spatial>"
    "<fixed name='stop' limited='true' range='-0.1 5'><joint joint='z' coef='2'/></fixed></tendon>"
    "<actuator><motor tendon='rope' gear='2'/></actuator></mujoco>";

// A, B of phys_step_jacobian against phys_step_jacobian_fd, and the dot tests of phys_step_vjp; returns the worst
// relative error
static double check_state(physModel* m, physData* d, const char* what) {
  int nx = 2 * m->nv, nu = m->nu;
  double A[16], B[4], Af[16], Bf[4];
  physStatus st = phys_step_jacobian(m, d, A, B);
  CHECK_MSG(st == PHYS_OK, "%s: status %d (%s)", what, st, d->lastwarning);
  CHECK(phys_step_jacobian_fd(m, d, GM_H, Af, Bf) == PHYS_OK);
  double ea = gm_compare(what, A, Af, nx, nx, 1, GM_RTOL), eb = gm_compare(what, B, Bf, nx, nu, 1, GM_RTOL);
  physRng r;
  phys_rng_seed(&r, 7);
  double y[4], x[4], u[1], xbar[4], ubar[1], sa, sb;
  gm_rand_vec(&r, y, nx);
  gm_rand_vec(&r, x, nx);
  gm_rand_vec(&r, u, nu);
  CHECK(phys_step_vjp(m, d, y, xbar, ubar) == PHYS_OK);
  double yAx = gm_bilinear(A, y, x, nx, nx, &sa), yBu = gm_bilinear(B, y, u, nx, nu, &sb), xa = 0;
  for (int i = 0; i < nx; i++) xa += xbar[i] * x[i];
  // (with the rope clamping, the motor on it moves nothing: B = 0 to rounding, 1e-18; B's entries are of order
  // dt / mass, so the test's scale has dt sum |y| |u| as its floor)
  double yu = 0;
  for (int i = 0; i < nx; i++) yu += fabs(y[i] * u[0]);
  sb = fmax(sb, m->opt.timestep * yu);
  CHECK_MSG(fabs(xa - yAx) <= GM_DOT_TOL * sa && fabs(ubar[0] * u[0] - yBu) <= GM_DOT_TOL * sb,
            "%s: dot tests %g %g", what, fabs(xa - yAx) / sa, fabs(ubar[0] * u[0] - yBu) / sb);
  printf("  %-28s A %.2e  B %.2e  (against central differences)\n", what, ea, eb);
  return fmax(ea, eb);
}

// states: the rope stretched 1 mm past its limit and stretching (the arm swinging down), the ball 1 mm into its
// stop and falling, both at once; each in lcp, cone and ccp
static void test_step_jacobians(void) {
  physLog log;
  physModel* m = load_text(MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  static const char* const NAMES[] = {"lcp", "cone", "ccp", "penalty"};
  // q_h with the rope at 0.551 m: L(q) = |top - tip(q)|, tip = (0.5 cos q, 0, -0.5 sin q)
  double lo = 0, hi = 1.2;
  for (int it = 0; it < 60; it++) {
    double q = 0.5 * (lo + hi), tx = 0.5 * cos(q) - 0.3, tz = -0.5 * sin(q) - 0.4;
    if (sqrt(tx * tx + tz * tz) < 0.551) lo = q;
    else hi = q;
  }
  // (q_h, z, v_h, v_z): the rope 1 mm past its limit and the ball 4 mm into its stop (L = 2 z), moving into them
  const double state[3][4] = {{lo, -0.052, 0.2, -0.3}, {lo, 0.2, 0.2, -0.5}, {0.1, -0.052, 1.5, -0.5}};
  const char* const WHAT[3] = {"rope and stop", "rope", "stop"};
  double worst = 0;
  for (int cm = 0; cm < 4; cm++) {
    m->opt.contact = cm;
    for (int k = 0; k < 3; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s, %s", NAMES[cm], WHAT[k]);
      d->qpos[0] = state[k][0], d->qpos[1] = state[k][1], d->qvel[0] = state[k][2], d->qvel[1] = state[k][3];
      d->ctrl[0] = 0.4;
      phys_forward(m, d);
      CHECK(phys_constraint_nlimit(m, d) == (k == 0 ? 2 : 1));
      worst = fmax(worst, check_state(m, d, what));
    }
  }
  printf("worst relative error %.3g (tolerance %.0e)\n", worst, GM_RTOL);
  // tendon frictionloss rows together with limit rows (issue 15 item 3, s33; were refused): the stop's tendon
  // sliding (F 1) and the rope's too (F 0.3: a spatial row turning with q), in every model, at the three states
  m->spring_frictionloss[1] = 1;
  m->spring_frictionloss[0] = 0.3;
  CHECK(phys_frictionloss_count(m) == 2);   // (its rows count)
  double wf = 0;
  for (int cm = 0; cm < 4; cm++) {
    m->opt.contact = cm;
    for (int k = 0; k < 3; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s, %s, frictionloss", NAMES[cm], WHAT[k]);
      d->qpos[0] = state[k][0], d->qpos[1] = state[k][1], d->qvel[0] = state[k][2], d->qvel[1] = state[k][3];
      d->ctrl[0] = 0.4;
      phys_forward(m, d);
      wf = fmax(wf, check_state(m, d, what));
    }
  }
  printf("with tendon frictionloss rows: worst relative error %.3g (tolerance %.0e)\n", wf, GM_RTOL);
  phys_free_data(d);
  phys_free_model(m);
}

// x+ = (qpos, qvel) after one step from (q, v) (hinge and slide: qpos is the tangent coordinate)
static void step_from(const physModel* m, physData* d, const double* x, double* xn) {
  memcpy(d->qpos, x, sizeof(double) * 2);
  memcpy(d->qvel, x + 2, sizeof(double) * 2);
  phys_step(m, d);
  memcpy(xn, d->qpos, sizeof(double) * 2);
  memcpy(xn + 2, d->qvel, sizeof(double) * 2);
}

// the ball exactly at its stop (z = -0.05: L = 2 z = -0.1 = the lower bound, dist = 0, the row active) and at rest,
// pressed by gravity: the step is not differentiable in z there (raised, the row is off and the ball falls freely
// for a step). A's z column equals the one-sided difference into the stop (Richardson-extrapolated from h and 2h,
// h = 1e-7), its other columns central differences (none of them moves the row off); the dot test as above
static void test_kink(void) {
  physLog log;
  physModel* m = load_text(MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  for (int cm = 0; cm < 3; cm++) {
    m->opt.contact = cm;
    const double x0[4] = {0.1, -0.05, 0.3, 0};
    double A[16], Af[16], xp[4], xm[4], x1[4], x2[4], x[4];
    memcpy(d->qpos, x0, sizeof(double) * 2), memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
    d->ctrl[0] = 0;
    phys_forward(m, d);
    CHECK(phys_constraint_nlimit(m, d) == 1 && d->spring_length[1] == -0.1);
    CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
    double x0n[4];
    step_from(m, d, x0, x0n);
    for (int j = 0; j < 4; j++) {
      const double h = j == 1 ? 1e-7 : 1e-6;
      if (j == 1) {   // one-sided into the stop: D(h) = (x+(x0) - x+(x0 - h))/h, 2 D(h) - D(2h)
        memcpy(x, x0, sizeof x), x[1] -= h, step_from(m, d, x, x1);
        memcpy(x, x0, sizeof x), x[1] -= 2 * h, step_from(m, d, x, x2);
        for (int i = 0; i < 4; i++) Af[i * 4 + j] = 2 * (x0n[i] - x1[i]) / h - (x0n[i] - x2[i]) / (2 * h);
        continue;
      }
      memcpy(x, x0, sizeof x), x[j] += h, step_from(m, d, x, xp);
      memcpy(x, x0, sizeof x), x[j] -= h, step_from(m, d, x, xm);
      for (int i = 0; i < 4; i++) Af[i * 4 + j] = (xp[i] - xm[i]) / (2 * h);
    }
    memcpy(d->qpos, x0, sizeof(double) * 2), memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
    double e = gm_compare(cm == 0 ? "kink lcp" : (cm == 1 ? "kink cone" : "kink ccp"), A, Af, 4, 4, 1, GM_RTOL);
    // the other side: raised by h the row is off and the ball falls for a step (v_z+ = -g dt, not A's 0)
    memcpy(x, x0, sizeof x), x[1] += 1e-7, step_from(m, d, x, xp);
    CHECK_MSG(fabs(xp[3] + 9.81 * m->opt.timestep) < 1e-12 && fabs(x0n[3]) < 1e-12, "v_z %g (at the stop %g)", xp[3],
              x0n[3]);
    memcpy(d->qpos, x0, sizeof(double) * 2), memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
    physRng r;
    phys_rng_seed(&r, 11);
    double y[4], xv[4], xbar[4], ubar[1], sa, xa = 0;
    gm_rand_vec(&r, y, 4);
    gm_rand_vec(&r, xv, 4);
    CHECK(phys_step_vjp(m, d, y, xbar, ubar) == PHYS_OK);
    double yAx = gm_bilinear(A, y, xv, 4, 4, &sa);
    for (int i = 0; i < 4; i++) xa += xbar[i] * xv[i];
    CHECK_MSG(fabs(xa - yAx) <= GM_DOT_TOL * sa, "kink dot test %g", fabs(xa - yAx) / sa);
    printf("  at the stop exactly (kink), model %d: A %.2e against one-sided differences into the stop\n", cm, e);
  }
  phys_free_data(d);
  phys_free_model(m);
}

// P = dx+/dtheta with the stop's row active (lcp): damping:h against central differences of phys_step (h = 1e-6); a
// pos:BODY parameter with the rope's row active is refused (PHYS_ERR_ARG, the tendon named: that derivative is
// not built), forward and reverse
static void test_params(void) {
  physLog log;
  physModel* m = load_text(MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  // the ball 4 mm into its stop (its row active), the arm swinging free (the rope slack: with it taut the arm's
  // velocity is the rope's and damping:h moves nothing)
  const double x0[4] = {0.1, -0.052, 1.5, -0.5}, xr[4] = {0.25, 0.2, 0.2, -0.5};
  double x[4], xp[4], xm[4], P[4], Pf[4], xbar[4] = {1, 0, 0, 0}, tbar[3];
  memcpy(x, x0, sizeof x);
  physParamTable t;
  static const char* const spec[] = {"damping:h"};
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK);
  memcpy(d->qpos, x0, sizeof(double) * 2), memcpy(d->qvel, x0 + 2, sizeof(double) * 2);
  phys_forward(m, d);
  CHECK(phys_constraint_nlimit(m, d) == 1 && d->spring_length[1] < -0.1);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  double b0 = m->dof_damping[0];
  m->dof_damping[0] = b0 + GM_H, step_from(m, d, x, xp);
  m->dof_damping[0] = b0 - GM_H, step_from(m, d, x, xm);
  m->dof_damping[0] = b0;
  for (int i = 0; i < 4; i++) Pf[i] = (xp[i] - xm[i]) / (2 * GM_H);
  printf("  P (damping:h) with the stop's row active: %.2e against central differences\n",
         gm_compare("P damping", P, Pf, 4, 1, 1, GM_RTOL));
  phys_param_table_free(&t);
  // penalty: the rope's and the stop's springs push (rope 1 mm past its limit: the state of test_step_jacobians);
  // P over penalty:stiffness and penalty:damping (k, c in f = -k dist - c r.v) against central differences
  // (relative step 1e-6) and the dot test of phys_step_param_vjp
  m->opt.contact = PHYS_CONTACT_PENALTY;
  static const char* const spec3[] = {"penalty:stiffness", "penalty:damping"};
  CHECK(phys_param_table_build(&t, m, spec3, 2, &log) == PHYS_OK && t.ntheta == 2);
  double xs[4] = {0, -0.052, 0.2, -0.3}, lo = 0, hi = 1.2, P2[8], P2f[8], th[2], tb2[2];
  for (int it = 0; it < 60; it++) {   // (the rope at 0.551 m, as test_step_jacobians)
    double q = 0.5 * (lo + hi), tx = 0.5 * cos(q) - 0.3, tz = -0.5 * sin(q) - 0.4;
    if (sqrt(tx * tx + tz * tz) < 0.551) lo = q;
    else hi = q;
  }
  xs[0] = lo;
  memcpy(d->qpos, xs, sizeof(double) * 2), memcpy(d->qvel, xs + 2, sizeof(double) * 2);
  d->ctrl[0] = 0.4;
  CHECK_MSG(phys_step_param_jacobian(m, d, &t, P2) == PHYS_OK, "%s", d->lastwarning);
  phys_param_get(&t, m, th);
  for (int j = 0; j < 2; j++) {
    double h = 1e-6 * th[j], t0 = th[j];
    th[j] = t0 + h;
    CHECK(phys_param_set(&t, m, th) == PHYS_OK);
    step_from(m, d, xs, xp);
    th[j] = t0 - h;
    CHECK(phys_param_set(&t, m, th) == PHYS_OK);
    step_from(m, d, xs, xm);
    th[j] = t0;
    CHECK(phys_param_set(&t, m, th) == PHYS_OK);
    for (int i = 0; i < 4; i++) P2f[i * 2 + j] = (xp[i] - xm[i]) / (2 * h);
  }
  printf("  penalty P (penalty:stiffness, penalty:damping) with both springs pushing: %.2e against central "
         "differences\n", gm_compare("P penalty", P2, P2f, 4, 2, 1, GM_RTOL));
  memcpy(d->qpos, xs, sizeof(double) * 2), memcpy(d->qvel, xs + 2, sizeof(double) * 2);
  CHECK(phys_step_param_vjp(m, d, &t, xbar, tb2) == PHYS_OK);
  double sc = fabs(P2[0]) + fabs(P2[1]);
  CHECK_MSG(fabs(tb2[0] - P2[0]) <= 1e-12 * sc && fabs(tb2[1] - P2[1]) <= 1e-12 * sc,
            "P' e0 %g %g vs %g %g", tb2[0], tb2[1], P2[0], P2[1]);
  phys_param_table_free(&t);
  m->opt.contact = PHYS_CONTACT_LCP;
  static const char* const spec2[] = {"pos:arm"};
  CHECK(phys_param_table_build(&t, m, spec2, 1, &log) == PHYS_OK);
  double P3[12];
  memcpy(d->qpos, xr, sizeof(double) * 2), memcpy(d->qvel, xr + 2, sizeof(double) * 2);   // the rope taut
  CHECK(phys_step_param_jacobian(m, d, &t, P3) == PHYS_ERR_ARG && strstr(d->lastwarning, "spatial tendon 'rope'"));
  memcpy(d->qpos, xr, sizeof(double) * 2), memcpy(d->qvel, xr + 2, sizeof(double) * 2);
  CHECK(phys_step_param_vjp(m, d, &t, xbar, tbar) == PHYS_ERR_ARG && strstr(d->lastwarning, "spatial tendon 'rope'"));
  m->opt.contact = PHYS_CONTACT_PENALTY;   // (penalty: the rope's spring pushes at xs)
  memcpy(d->qpos, xs, sizeof(double) * 2), memcpy(d->qvel, xs + 2, sizeof(double) * 2);
  CHECK(phys_step_param_jacobian(m, d, &t, P3) == PHYS_ERR_ARG &&
        strstr(d->lastwarning, "pushing length limit of spatial tendon 'rope' (penalty)"));
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// the wrapped rope 1 mm past its limit (found by bisection on the simulated length) and stretching, the stop
// free: lcp, cone, ccp and penalty
static void test_wrapped_limit(void) {
  physLog log;
  physModel* m = load_text(MODEL_WRAP, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  double lo = 0, hi = 1.2;
  d->qpos[1] = 0.2;
  for (int it = 0; it < 60; it++) {
    d->qpos[0] = 0.5 * (lo + hi);
    phys_forward(m, d);
    if (d->spring_length[0] < 0.551) lo = d->qpos[0];
    else hi = d->qpos[0];
  }
  static const char* const NAMES[] = {"lcp", "cone", "ccp", "penalty"};
  double worst = 0;
  for (int cm = 0; cm < 4; cm++) {
    m->opt.contact = cm;
    char what[64];
    snprintf(what, sizeof what, "%s, wrapped rope", NAMES[cm]);
    d->qpos[0] = lo, d->qpos[1] = 0.2, d->qvel[0] = 0.2, d->qvel[1] = -0.5, d->ctrl[0] = 0.4;
    phys_forward(m, d);
    physTendonPath p;
    phys_tendon_path(m, 0, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
    CHECK(p.npoint == 4 && phys_constraint_nlimit(m, d) == 1);   // wrapped, its row active
    worst = fmax(worst, check_state(m, d, what));
  }
  printf("wrapped rope at its limit (hinge %.4f rad): worst relative error %.3g\n", lo, worst);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("tendon_rows_deriv");
  test_step_jacobians();
  test_wrapped_limit();
  test_kink();
  test_params();
  return mjcf_text_end();
}

// test_act_deriv.c - src/grad/act_deriv.c: the step's derivatives with actuator activations in the state,
// x = (q tangent, v, act) (issue 15 item 2), through phys_step_jacobian, phys_step_vjp, phys_step_param_jacobian
// and phys_step_param_vjp:
//  1. contact-free: A, B against four-point central differences of phys_step (grad_models.h: h = 1e-3,
//     relative 1e-6) in every tangent, velocity, activation and control coordinate, at random states of
//     tests/data/actuator_dynamics.xml (an integrator with an activation range, filters with a force range and
//     with a control range and affine bias, site actuators, cylinders) and tests/data/actuator_damper.xml
//     (MuJoCo 2.2.2's damper: a gain affine in the velocity; intvelocity: an integrator driving a position servo);
//  2. the act rows against their closed forms (1 - dt/tau, dt/tau); the kinks: an integrator whose act+ lands
//     exactly on its actrange bound (dact+/dact = 1, the inside's one-sided value, equal to the one-sided
//     difference from inside) and beyond it (0), a filter with ctrl at its ctrlrange bound (slope 1) and beyond
//     it (dact+/dctrl = 0), each against one-sided differences;
//  3. timeconst:ACTUATOR (P's act rows) against differences of phys_step in each filter's dynprm[0]; its (q, v)
//     rows are exactly 0; the table refuses an actuator without filter dynamics;
//  4. muscles (check_muscles): A, B, P (timeconst, force) against differences, the dot-product tests;
//  5. with contact, lcp, cone, ccp and penalty (tests/data/actuator_contact.xml: a cube on one corner sliding
//     on the floor, pushed by a filtered site thruster): A, B against phys_step_jacobian_fd (central differences at h = 1e-6,
//     which perturb act too) to 1e-4 relative (the contact tests' tolerance, test_step_contact_deriv.c), and
//     the dot-product tests <y, A x> = <A'y, x>, <y, B u> = <B'y, u>, <y, P t> = <P'y, t> to 1e-12.
#include "act_deriv.h"
#include "grad_models.h"
#include "params.h"
#include "step.h"

#define NSTATE 3
#define ARM26 "/usr/share/mujoco/model/tendon_arm/arm26.xml"

// x+ of one step from d's state with tangent coordinate / velocity / act / ctrl column c moved by h, into
// out (nx): the tangent difference of q+ from base (nq), v+, act+; d's state restored
static void step_moved(const physModel* m, physData* d, int c, double h, const double* qbase, double* out) {
  int nq = m->nq, nv = m->nv, na = m->na;
  size_t ns = phys_state_size(m);
  double* x0 = malloc(sizeof(double) * ns);
  double* ctrl0 = malloc(sizeof(double) * ((size_t)m->nu + 1));
  phys_state_save(m, d, x0);
  memcpy(ctrl0, d->ctrl, sizeof(double) * (size_t)m->nu);
  if (c < nv) gm_perturb(m, d->qpos, x0, c, h);
  else if (c < 2 * nv) d->qvel[c - nv] += h;
  else if (c < 2 * nv + na) d->act[c - 2 * nv] += h;
  else d->ctrl[c - 2 * nv - na] += h;
  phys_step(m, d);
  phys_difference_pos(m, out, 1, qbase, d->qpos);
  memcpy(out + nv, d->qvel, sizeof(double) * (size_t)nv);
  memcpy(out + 2 * nv, d->act, sizeof(double) * (size_t)na);
  phys_state_load(m, d, x0);
  memcpy(d->ctrl, ctrl0, sizeof(double) * (size_t)m->nu);
  free(x0);
  free(ctrl0);
  (void)nq;
}

// the four-point differences (step h) of x+ in the nx + nu columns: Af (nx x nx), Bf (nx x nu)
static void step_fd(const physModel* m, physData* d, double* Af, double* Bf, double h) {
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  double* qbase = malloc(sizeof(double) * (size_t)m->nq);
  double* f = malloc(sizeof(double) * 4 * (size_t)nx);
  size_t ns = phys_state_size(m);
  double* x0 = malloc(sizeof(double) * ns);
  phys_state_save(m, d, x0);
  phys_step(m, d);   // the base q+, against which every moved q+ is a tangent difference
  memcpy(qbase, d->qpos, sizeof(double) * (size_t)m->nq);
  phys_state_load(m, d, x0);
  for (int c = 0; c < nx + nu; c++) {
    step_moved(m, d, c, 2 * h, qbase, f);
    step_moved(m, d, c, h, qbase, f + nx);
    step_moved(m, d, c, -h, qbase, f + 2 * nx);
    step_moved(m, d, c, -2 * h, qbase, f + 3 * nx);
    for (int i = 0; i < nx; i++) {
      double v = gm_fd4(f[i], f[nx + i], f[2 * nx + i], f[3 * nx + i], h);
      if (c < nx) Af[(size_t)i * nx + c] = v;
      else Bf[(size_t)i * nu + c - nx] = v;
    }
  }
  free(qbase);
  free(f);
  free(x0);
}

// random states of the model in file with random activations inside their ranges: A and B against the differences
static void check_fd(const char* file) {
  physModel* m = gm_load(file, 0);
  if (!m) return;
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 21);
  double *A = malloc(sizeof(double) * (size_t)nx * nx), *B = malloc(sizeof(double) * (size_t)nx * nu);
  double *Af = malloc(sizeof(double) * (size_t)nx * nx), *Bf = malloc(sizeof(double) * (size_t)nx * nu);
  double worst = 0;
  for (int s = 0; s < NSTATE; s++) {
    gm_random_state(m, d, &r, 1.0);
    for (int a = 0; a < nu; a++) {
      int k = m->actuator_actadr[a];
      if (k < 0) continue;
      const double* rg = m->actuator_actrange + 2 * a;
      d->act[k] = m->actuator_actlimited[a] ? phys_rng_range(&r, 0.8 * rg[0] + 0.2 * rg[1], 0.2 * rg[0] + 0.8 * rg[1])
                                            : phys_rng_range(&r, -0.5, 0.5);
    }
    CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
    step_fd(m, d, Af, Bf, GM_H4);
    char what[96];
    snprintf(what, sizeof what, "%s state %d A", file, s);
    worst = fmax(worst, gm_compare(what, A, Af, nx, nx, 1, GM_RTOL));
    snprintf(what, sizeof what, "%s state %d B", file, s);
    worst = fmax(worst, gm_compare(what, B, Bf, nx, nu, 1, GM_RTOL));
  }
  printf("%s nv %d na %d nu %d: A, B (x = q, v, act) vs four-point differences %.2e\n", file, nv, na, nu, worst);
  free(A), free(B), free(Af), free(Bf);
  phys_free_data(d);
  phys_free_model(m);
}

// act+ of the activation k after one step from d's state with act[k] (ctrl[a]) moved by h; d's state restored
static double act_after(const physModel* m, physData* d, int k, int a, double h) {
  size_t ns = phys_state_size(m);
  double* x0 = malloc(sizeof(double) * ns);
  double c0 = d->ctrl[a];
  phys_state_save(m, d, x0);
  if (a < 0) d->act[k] += h;
  else d->ctrl[a] += h;
  phys_step(m, d);
  double v = d->act[k];
  phys_state_load(m, d, x0);
  if (a >= 0) d->ctrl[a] = c0;
  free(x0);
  return v;
}

// the act rows' closed forms: filter tau = 0.05 (actuator 'filt'), dt = 0.002: dact+/dact = 1 - dt/tau,
// dact+/dctrl = dt/tau; the integrator 'int' (range [-0.3, 0.4]): act+ beyond the bound (clamped: both 0),
// exactly on it (the inside's derivatives 1 and dt, equal to the one-sided differences from inside), moving back
// (1, dt); the filtered servo 'servo' (ctrlrange [-1, 1]): ctrl on the bound (slope 1: dt/tau) and beyond (0)
static void check_act_rows(void) {
  physModel* m = gm_load("tests/data/actuator_dynamics.xml", 0);
  if (!m) return;
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  physData* d = phys_make_data(m);
  double *A = calloc((size_t)nx * nx, sizeof(double)), *B = calloc((size_t)nx * nu, sizeof(double));
  int filt = phys_name2id(m, "actuator", "filt"), integ = phys_name2id(m, "actuator", "int");
  int servo = phys_name2id(m, "actuator", "servo");
  int kf = m->actuator_actadr[filt], ki = m->actuator_actadr[integ], ks = m->actuator_actadr[servo];
  double dt = m->opt.timestep, h = 1e-6;
#define AA(k) A[(size_t)(2 * nv + (k)) * nx + 2 * nv + (k)]
#define BB(k, a) B[(size_t)(2 * nv + (k)) * nu + (a)]
  d->act[ki] = 0.4;
  d->ctrl[integ] = 1;   // act + dt ctrl > 0.4: clamped
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  CHECK_NEAR(AA(kf), 1 - dt / 0.05, 1e-15);
  CHECK_NEAR(BB(kf, filt), dt / 0.05, 1e-15);
  CHECK(AA(ki) == 0 && BB(ki, integ) == 0);
  d->ctrl[integ] = 0;   // act+ = 0.4 exactly: on the bound, the inside's slopes (a kink)
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  CHECK(AA(ki) == 1 && BB(ki, integ) == dt);
  double x0 = act_after(m, d, ki, -1, 0);
  CHECK_NEAR((x0 - act_after(m, d, ki, -1, -h)) / h, 1, 1e-9);        // from inside: 1
  CHECK_NEAR((act_after(m, d, ki, -1, h) - x0) / h, 0, 1e-9);         // from outside: 0 (clamped)
  CHECK_NEAR((x0 - act_after(m, d, ki, integ, -h)) / h, dt, 1e-9);
  d->ctrl[integ] = -1;  // moving back into the range: dact+/dact = 1, dact+/dctrl = dt
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  CHECK(AA(ki) == 1 && BB(ki, integ) == dt);
  double tau_s = m->actuator_dynprm[3 * servo];
  d->ctrl[servo] = 1;   // on the control bound: the inside's slope
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  CHECK_NEAR(BB(ks, servo), dt / tau_s, 1e-15);
  x0 = act_after(m, d, ks, servo, 0);
  CHECK_NEAR((x0 - act_after(m, d, ks, servo, -h)) / h, dt / tau_s, 1e-8);
  d->ctrl[servo] = 1.5;   // beyond it: the clamped control does not move
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  CHECK(BB(ks, servo) == 0);
  CHECK(act_after(m, d, ks, servo, h) == act_after(m, d, ks, servo, -h));
  CHECK_NEAR(AA(ks), 1 - dt / tau_s, 1e-15);
#undef AA
#undef BB
  free(A), free(B);
  phys_free_data(d);
  phys_free_model(m);
}

// a table from specs, or a failed check
static physParamTable act_table(const physModel* m, const char* const* spec, int n) {
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof(log));
  CHECK_MSG(phys_param_table_build(&t, m, spec, n, &log) == PHYS_OK, "table: %s", log.error);
  return t;
}

// timeconst:ACTUATOR: P's act rows (dact+/dtau) against four-point differences of phys_step in each filter's
// dynprm[0]; P's (q, v) rows exactly 0 (the force uses the current act); the integrator refused by the table
static void check_timeconst(void) {
  physModel* m = gm_load("tests/data/actuator_dynamics.xml", 0);
  if (!m) return;
  int nv = m->nv, na = m->na, nx = 2 * nv + na;
  static const char* spec[] = {"timeconst:filt", "timeconst:servo", "timeconst:thrust", "timeconst:cyl",
                               "timeconst:cyl2"};
  physParamTable t = act_table(m, spec, 5);
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 23);
  gm_random_state(m, d, &r, 1.0);
  for (int k = 0; k < na; k++) d->act[k] = phys_rng_range(&r, -0.2, 0.3);
  double* P = malloc(sizeof(double) * (size_t)nx * 5);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  double f[4], worst = 0, h = 1e-5;
  int zero = 1;
  for (int c = 0; c < 5; c++) {
    int a = t.param[c].id, k = m->actuator_actadr[a];
    double tau = m->actuator_dynprm[3 * a];
    static const double S[4] = {2, 1, -1, -2};
    for (int i = 0; i < 4; i++) {
      m->actuator_dynprm[3 * a] = tau + S[i] * h;
      f[i] = act_after(m, d, k, -1, 0);
    }
    m->actuator_dynprm[3 * a] = tau;
    double fd = gm_fd4(f[0], f[1], f[2], f[3], h), an = P[(size_t)(2 * nv + k) * 5 + c];
    double e = fabs(an - fd) / fmax(fabs(fd), 1e-8);
    CHECK_MSG(e <= GM_RTOL, "%s: dact+/dtau %.12g, differences %.12g", spec[c], an, fd);
    worst = fmax(worst, e);
    for (int i = 0; i < nx; i++) zero &= i == 2 * nv + k || P[(size_t)i * 5 + c] == 0;
  }
  CHECK_MSG(zero, "timeconst: P has nonzero entries outside the filter's own act row");
  printf("actuator_dynamics: timeconst of %d filters (P's act rows) vs four-point differences %.2e\n", 5, worst);
  physParamTable bad;
  physLog log;
  memset(&log, 0, sizeof(log));
  static const char* ispec[] = {"timeconst:int"};
  CHECK(phys_param_table_build(&bad, m, ispec, 1, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "actuator 'int' has no filter or muscle dynamics") != NULL, "message: %s", log.error);
  phys_param_table_free(&bad);
  phys_param_table_free(&t);
  free(P);
  phys_free_data(d);
  phys_free_model(m);
}

static void dot_tests(const char* what, const physModel* m, physData* d, const physParamTable* t, const double* A,
                      const double* B, const double* P, physRng* r);

// muscles: arm26 (MuJoCo's sample: six muscles on spatial tendons wrapping the two joints' cylinders;
// lengthrange computed) and tests/data/muscle_mixed.xml (a muscle on a hinge with gear 2, a force-limited muscle
// on a fixed tendon, a muscle gain with an affine bias and no dynamics): at 4 random states (joints inside their ranges, away from the limits, qvel in [-1, 1], act in
// [0.05, 0.95], ctrl in [0, 1]) A, B against four-point differences at h = 1e-4 (the curves are C1 with
// kinks in the second derivative, so GM_H4's 1e-3 would straddle them), relative 1e-6; P of timeconst (both
// time constants) and force of every muscle against four-point differences of phys_step in the parameter
// (through phys_param_set); the dot-product tests of the VJPs
static void check_muscles(const char* file) {
  physModel* m = gm_load(file, 0);
  if (!m) return;
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na, n = 0;
  const char* spec[12];
  char buf[12][32];
  for (int a = 0; a < nu && a < 6; a++) {   // each muscle's time constants (with muscle dynamics) and force
    if (m->actuator_dyntype[a] == PHYS_DYN_MUSCLE)
      snprintf(buf[n], 32, "timeconst:%s", phys_id2name(m, "actuator", a)), spec[n] = buf[n], n++;
    snprintf(buf[n], 32, "force:%s", phys_id2name(m, "actuator", a)), spec[n] = buf[n], n++;
  }
  physParamTable t = act_table(m, spec, n);
  int nt = t.ntheta;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 26);
  double *A = malloc(sizeof(double) * (size_t)nx * nx), *B = malloc(sizeof(double) * (size_t)nx * nu);
  double *Af = malloc(sizeof(double) * (size_t)nx * nx), *Bf = malloc(sizeof(double) * (size_t)nx * nu);
  double *P = malloc(sizeof(double) * (size_t)nx * nt), *th = malloc(sizeof(double) * (size_t)nt);
  double *x0 = malloc(sizeof(double) * phys_state_size(m)), *xp = malloc(sizeof(double) * 4 * (size_t)nx);
  double worst = 0, worst_p = 0, h = 1e-4;   // (1e-5: rounding 3e-10 on muscle_mixed)
  for (int s = 0; s < 4; s++) {
    for (int j = 0; j < nv; j++) d->qpos[j] = phys_rng_range(&r, 0.2, 1.8), d->qvel[j] = phys_rng_range(&r, -1, 1);
    for (int k = 0; k < na; k++) d->act[k] = phys_rng_range(&r, 0.05, 0.95);
    for (int a = 0; a < nu; a++) d->ctrl[a] = phys_rng_range(&r, 0, 1);
    CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
    CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
    step_fd(m, d, Af, Bf, h);
    char what[64];
    snprintf(what, sizeof what, "%s state %d A", file, s);
    worst = fmax(worst, gm_compare(what, A, Af, nx, nx, 1, GM_RTOL));
    snprintf(what, sizeof what, "%s state %d B", file, s);
    worst = fmax(worst, gm_compare(what, B, Bf, nx, nu, 1, GM_RTOL));
    phys_param_get(&t, m, th);
    phys_state_save(m, d, x0);
    for (int c = 0; c < nt; c++) {   // P's column c: x+ at theta_c moved by 2h, h, -h, -2h (relative)
      static const double S[4] = {2, 1, -1, -2};
      const physParam* p = t.param;
      while (c >= p->adr + p->size) p++;
      double t0 = th[c], hc = 1e-5 * fabs(t0);
      for (int i = 0; i < 4; i++) {
        th[c] = t0 + S[i] * hc;
        CHECK(phys_param_set(&t, m, th) == PHYS_OK);
        phys_step(m, d);
        memcpy(xp + (size_t)i * nx + nv, d->qvel, sizeof(double) * (size_t)nv);
        memcpy(xp + (size_t)i * nx + 2 * nv, d->act, sizeof(double) * (size_t)na);
        phys_state_load(m, d, x0);
      }
      th[c] = t0;
      CHECK(phys_param_set(&t, m, th) == PHYS_OK);
      double fd[16], scale = 0;   // (nx = 10) relative to the column's largest entry
      for (int i = nv; i < nx; i++) {   // (q+ = q + dt v+: its rows follow v's)
        fd[i] = gm_fd4(xp[i], xp[nx + i], xp[2 * nx + i], xp[3 * nx + i], hc);
        scale = fmax(scale, fabs(fd[i]));
      }
      // the differences' rounding: |x+| <= 2 over eps / hc, 1e-14 / hc (a column of zeros: the other branch's
      // time constant, a muscle whose force is 0)
      double noise = 1e-14 / hc;
      for (int i = nv; i < nx; i++) {
        double an = P[(size_t)i * nt + c], e = fabs(an - fd[i]) / fmax(scale, noise / GM_RTOL);
        CHECK_MSG(e <= GM_RTOL, "%s state %d %s[%d] row %d: P %.12g, differences %.12g", file, s, p->name, c - p->adr, i,
                  an, fd[i]);
        worst_p = fmax(worst_p, e);
      }
    }
    snprintf(what, sizeof what, "%s state %d", file, s);
    dot_tests(what, m, d, &t, A, B, P, &r);
  }
  printf("%s (nu %d, nx %d): A, B vs four-point differences %.2e; P (timeconst x2, force of each) %.2e\n", file, nu,
         nx, worst, worst_p);
  phys_param_table_free(&t);
  free(A), free(B), free(Af), free(Bf), free(P), free(th), free(x0), free(xp);
  phys_free_data(d);
  phys_free_model(m);
}

static const int ct_kind[] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP, PHYS_CONTACT_PENALTY};
static const char* const ct_name[] = {"lcp", "cone", "ccp", "penalty"};

// the dot-product tests of phys_step_vjp and phys_step_param_vjp against A, B, P (nx = 2nv + na)
static void dot_tests(const char* what, const physModel* m, physData* d, const physParamTable* t, const double* A,
                      const double* B, const double* P, physRng* r) {
  int nx = 2 * m->nv + m->na, nu = m->nu, nt = t->ntheta;
  double *y = malloc(sizeof(double) * (size_t)nx), *x = malloc(sizeof(double) * (size_t)nx);
  double *u = malloc(sizeof(double) * (size_t)nu), *th = malloc(sizeof(double) * (size_t)nt);
  double *xb = malloc(sizeof(double) * (size_t)nx), *ub = malloc(sizeof(double) * (size_t)nu);
  double* tb = malloc(sizeof(double) * (size_t)nt);
  gm_rand_vec(r, y, nx), gm_rand_vec(r, x, nx), gm_rand_vec(r, u, nu), gm_rand_vec(r, th, nt);
  CHECK(phys_step_vjp(m, d, y, xb, ub) == PHYS_OK);
  CHECK(phys_step_param_vjp(m, d, t, y, tb) == PHYS_OK);
  double sa, sb, sp, one[1] = {1};
  double ya = gm_bilinear(A, y, x, nx, nx, &sa), yb = gm_bilinear(B, y, u, nx, nu, &sb);
  double yp = gm_bilinear(P, y, th, nx, nt, &sp);
  double xa = gm_bilinear(xb, one, x, 1, nx, NULL), ubu = gm_bilinear(ub, one, u, 1, nu, NULL);
  double tp = gm_bilinear(tb, one, th, 1, nt, NULL);
  CHECK_MSG(fabs(ya - xa) <= GM_DOT_TOL * sa, "%s: <y, A x> %.17g, <A'y, x> %.17g", what, ya, xa);
  CHECK_MSG(fabs(yb - ubu) <= GM_DOT_TOL * sb, "%s: <y, B u> %.17g, <B'y, u> %.17g", what, yb, ubu);
  CHECK_MSG(fabs(yp - tp) <= GM_DOT_TOL * sp, "%s: <y, P t> %.17g, <P'y, t> %.17g", what, yp, tp);
  free(y), free(x), free(u), free(th), free(xb), free(ub), free(tb);
}

// the cube on one corner: turned by 0.6 about (1, 2, 0) (as test_step_contact_deriv.c's tumbling box), the
// lowest corner 2e-4 deep, sliding along (1, 0.3), sinking and spinning; the thruster's and the arm's
// activations set; under contact model k: A, B against phys_step_jacobian_fd, P (timeconst, gain, mass) and the
// VJPs by the dot-product tests
static void corner_state(const physModel* m, physData* d) {
  double s = sin(0.3), n = sqrt(5.0);
  d->qpos[3] = cos(0.3), d->qpos[4] = s / n, d->qpos[5] = 2 * s / n, d->qpos[6] = 0;
  d->qpos[2] = 0.5;
  phys_kinematics(m, d);
  double lo = INFINITY;
  for (int c = 0; c < 8; c++) {   // the corners' heights: xpos + R (+-0.1, +-0.1, +-0.1)
    const double* R = d->xmat + 9;
    double z = d->xpos[5];
    for (int i = 0; i < 3; i++) z += R[6 + i] * ((c >> i) & 1 ? 0.1 : -0.1);
    lo = fmin(lo, z);
  }
  d->qpos[2] -= lo + 2e-4;
  d->qvel[0] = 1, d->qvel[1] = 0.3, d->qvel[2] = -0.2, d->qvel[3] = 0.5, d->qvel[4] = -1, d->qvel[5] = 2;
}

static void check_contact(int k) {
  physModel* m = gm_load("tests/data/actuator_contact.xml", 0);
  m->opt.contact = ct_kind[k];
  m->opt.solver_tolerance = 1e-11;
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  static const char* spec[] = {"timeconst:thrust", "timeconst:servo", "gain:thrust", "mass:box"};
  physParamTable t = act_table(m, spec, 4);
  physData* d = phys_make_data(m);
  corner_state(m, d);
  d->qpos[7] = 0.3, d->qpos[8] = -0.4, d->qvel[6] = 0.5, d->qvel[7] = -1;
  double act[3] = {0.4, 0.1, -0.3}, ctrl[4] = {0.2, 0.9, 0.5, 0.7};
  memcpy(d->act, act, sizeof act), memcpy(d->ctrl, ctrl, sizeof ctrl);
  double *A = malloc(sizeof(double) * (size_t)nx * nx), *B = malloc(sizeof(double) * (size_t)nx * nu);
  double *Af = malloc(sizeof(double) * (size_t)nx * nx), *Bf = malloc(sizeof(double) * (size_t)nx * nu);
  double* P = malloc(sizeof(double) * (size_t)nx * (size_t)t.ntheta);
  CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  CHECK(phys_step_jacobian_fd(m, d, 1e-6, Af, Bf) == PHYS_OK);
  char what[64];
  snprintf(what, sizeof what, "box thruster %s A", ct_name[k]);
  double eA = gm_compare(what, A, Af, nx, nx, 1, 1e-4);
  snprintf(what, sizeof what, "box thruster %s B", ct_name[k]);
  double eB = gm_compare(what, B, Bf, nx, nu, 1, 1e-4);
  // the thruster's act column reaches the box's velocity (the contact's response included)
  int kt = m->actuator_actadr[phys_name2id(m, "actuator", "thrust")];
  CHECK(fabs(A[(size_t)nv * nx + 2 * nv + kt]) > 1e-4);
  physRng r;
  phys_rng_seed(&r, 31 + k);
  snprintf(what, sizeof what, "box thruster %s", ct_name[k]);
  dot_tests(what, m, d, &t, A, B, P, &r);
  phys_step(m, d);
  CHECK_MSG(d->ncon > 0, "box thruster %s: no contact", ct_name[k]);
  printf("box thruster %s (nv %d na %d nu %d): A %.2e, B %.2e vs central differences\n", ct_name[k], nv, na, nu,
         eA, eB);
  free(A), free(B), free(Af), free(Bf), free(P);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_fd("tests/data/actuator_dynamics.xml");
  check_fd("tests/data/actuator_damper.xml");
  check_timeconst();
  check_act_rows();
  check_muscles(ARM26);
  check_muscles("tests/data/muscle_mixed.xml");
  for (int k = 0; k < 4; k++) check_contact(k);
  return test_done();
}

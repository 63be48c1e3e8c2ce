// test_act_deriv.c - src/grad/act_deriv.c: the step's Jacobians with actuator activations in the state,
// x = (q tangent, v, act), against four-point central differences of phys_step (grad_models.h: h = 1e-3,
// relative 1e-6) in every tangent, velocity, activation and control coordinate, at random states of
// tests/data/actuator_dynamics.xml (an integrator with an activation range, filters with a force range and with
// a control range and affine bias, site actuators, cylinders); the act rows against their closed forms
// (1 - dt/tau, dt/tau, 0 when act+ is clamped); the (q, v) block equals phys_step_jacobian's on a model without
// activations bit for bit (tests/data/actuator_site.xml); refusals; dact+/dtau (phys_step_act_timeconst)
// against differences in each time constant.
#include "act_deriv.h"
#include "grad_models.h"
#include "step.h"

#define NSTATE 3

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

// the four-point differences of x+ in the nx + nu columns: Af (nx x nx), Bf (nx x nu)
static void step_fd(const physModel* m, physData* d, double* Af, double* Bf) {
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  double h = GM_H4;
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

// random states with random activations inside their ranges: A and B against the differences
static void check_fd(void) {
  physModel* m = gm_load("tests/data/actuator_dynamics.xml", 0);
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
    CHECK(phys_step_act_jacobian(m, d, A, B) == PHYS_OK);
    step_fd(m, d, Af, Bf);
    char what[96];
    snprintf(what, sizeof what, "actuator_dynamics state %d A", s);
    worst = fmax(worst, gm_compare(what, A, Af, nx, nx, 1, GM_RTOL));
    snprintf(what, sizeof what, "actuator_dynamics state %d B", s);
    worst = fmax(worst, gm_compare(what, B, Bf, nx, nu, 1, GM_RTOL));
  }
  printf("actuator_dynamics nv %d na %d nu %d: A, B (x = q, v, act) vs four-point differences %.2e\n", nv, na, nu,
         worst);
  free(A), free(B), free(Af), free(Bf);
  phys_free_data(d);
  phys_free_model(m);
}

// the act rows' closed forms: filter tau = 0.05 (actuator 'filt', act 1), dt = 0.002: dact+/dact = 1 - dt/tau,
// dact+/dctrl = dt/tau; the integrator (act 0) held at the end of its range [-0.3, 0.4]: both 0
static void check_act_rows(void) {
  physModel* m = gm_load("tests/data/actuator_dynamics.xml", 0);
  if (!m) return;
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  physData* d = phys_make_data(m);
  double *A = calloc((size_t)nx * nx, sizeof(double)), *B = calloc((size_t)nx * nu, sizeof(double));
  int filt = phys_name2id(m, "actuator", "filt"), integ = phys_name2id(m, "actuator", "int");
  int kf = m->actuator_actadr[filt], ki = m->actuator_actadr[integ];
  d->act[ki] = 0.4;
  d->ctrl[integ] = 1;   // act + dt ctrl > 0.4: clamped
  CHECK(phys_step_act_jacobian(m, d, A, B) == PHYS_OK);
  double dt = m->opt.timestep;
  CHECK_NEAR(A[(size_t)(2 * nv + kf) * nx + 2 * nv + kf], 1 - dt / 0.05, 1e-15);
  CHECK_NEAR(B[(size_t)(2 * nv + kf) * nu + filt], dt / 0.05, 1e-15);
  CHECK(A[(size_t)(2 * nv + ki) * nx + 2 * nv + ki] == 0 && B[(size_t)(2 * nv + ki) * nu + integ] == 0);
  d->ctrl[integ] = -1;  // moving back into the range: dact+/dact = 1, dact+/dctrl = dt
  CHECK(phys_step_act_jacobian(m, d, A, B) == PHYS_OK);
  CHECK(A[(size_t)(2 * nv + ki) * nx + 2 * nv + ki] == 1 && B[(size_t)(2 * nv + ki) * nu + integ] == dt);
  free(A), free(B);
  phys_free_data(d);
  phys_free_model(m);
}

// without activations the Jacobians are phys_step_jacobian's, bit for bit; refusals: an active contact or limit
// (PHYS_ERR_ARG)
static void check_same_and_refusals(void) {
  physModel* m = gm_load("tests/data/actuator_site.xml", 0);
  if (!m) return;
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 22);
  gm_random_state(m, d, &r, 1.0);
  double *A = malloc(sizeof(double) * (size_t)n2 * n2), *B = malloc(sizeof(double) * (size_t)n2 * nu);
  double *A0 = malloc(sizeof(double) * (size_t)n2 * n2), *B0 = malloc(sizeof(double) * (size_t)n2 * nu);
  CHECK(phys_step_act_jacobian(m, d, A, B) == PHYS_OK);
  CHECK(phys_step_jacobian(m, d, A0, B0) == PHYS_OK);
  CHECK(memcmp(A, A0, sizeof(double) * (size_t)n2 * n2) == 0 && memcmp(B, B0, sizeof(double) * (size_t)n2 * nu) == 0);
  free(A), free(B), free(A0), free(B0);
  phys_free_data(d);
  phys_free_model(m);
  m = gm_load("tests/data/mixed.xml", PHYS_DSBL_CONTACT);
  d = phys_make_data(m);
  A = malloc(sizeof(double) * 4 * (size_t)m->nv * m->nv);
  d->qpos[m->jnt_qposadr[phys_name2id(m, "joint", "slide")]] = 0.35;   // beyond its range [-0.2, 0.3]
  CHECK(phys_step_act_jacobian(m, d, A, NULL) == PHYS_ERR_ARG);
  free(A);
  phys_free_data(d);
  phys_free_model(m);
}

// dact+/dtau of the filters ('filt', 'servo', 'thrust', the two cylinders) against four-point differences of
// phys_step in each actuator's dynprm[0]; 0 for the integrator
static void check_timeconst(void) {
  physModel* m = gm_load("tests/data/actuator_dynamics.xml", 0);
  if (!m) return;
  int na = m->na;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 23);
  gm_random_state(m, d, &r, 1.0);
  for (int k = 0; k < na; k++) d->act[k] = phys_rng_range(&r, -0.2, 0.3);
  double dtau[8], f[4], worst = 0, h = 1e-5;
  size_t ns = phys_state_size(m);
  double* x0 = malloc(sizeof(double) * ns);
  phys_state_save(m, d, x0);
  phys_step_act_timeconst(m, d, dtau);
  for (int a = 0; a < m->nu; a++) {
    int k = m->actuator_actadr[a];
    if (k < 0) continue;
    double tau = m->actuator_dynprm[3 * a];
    static const double S[4] = {2, 1, -1, -2};
    for (int i = 0; i < 4; i++) {
      m->actuator_dynprm[3 * a] = tau + S[i] * h;
      phys_state_load(m, d, x0);
      phys_step(m, d);
      f[i] = d->act[k];
    }
    m->actuator_dynprm[3 * a] = tau;
    phys_state_load(m, d, x0);
    double fd = gm_fd4(f[0], f[1], f[2], f[3], h);
    if (m->actuator_dyntype[a] == PHYS_DYN_INTEGRATOR) {   // act+ does not depend on dynprm: the same bits
      CHECK(dtau[k] == 0 && f[0] == f[1] && f[1] == f[2] && f[2] == f[3]);
      continue;
    }
    double e = fabs(dtau[k] - fd) / fmax(fabs(fd), 1e-8);
    CHECK_MSG(e <= GM_RTOL, "actuator %d: dact+/dtau %.12g, differences %.12g", a, dtau[k], fd);
    worst = fmax(worst, e);
  }
  printf("actuator_dynamics: dact+/dtau of %d activations vs four-point differences %.2e\n", na, worst);
  free(x0);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_fd();
  check_timeconst();
  check_act_rows();
  check_same_and_refusals();
  return test_done();
}

// test_implicit.c - the implicit integrator (src/step/implicit.c, PHYS_INT_IMPLICIT; issue 16 item 4):
//  1. the damped spring-mass (tests/data/springmass.xml: m = 2, k = 50, b = 3, xs = 0.1) steps exactly as the
//     linearized backward Euler recurrence written out here, (m + h b + h^2 k) a = -k (x - xs) - b v - h k v,
//     v+ = v + h a, x+ = x + h v+ (to 1e-13), and converges to the continuous damped oscillator at first order:
//     the largest error over 2 s halves with h (ratio in [1.8, 2.2] for h = 4e-3, 2e-3, 1e-3);
//  2. a stiff spring, k = 1e6 (k h^2 / m = 50 at h = 0.01): semi-implicit Euler blows up (the state leaves 1e3 m or
//     the steps are rejected), the implicit step stays within the initial amplitude, its energy never rises and
//     it decays (backward Euler's damping);
//  3. the stiff cables of tests/data/cables.xml (two free rods, four spatial springs, k h^2 / m = 2 at 0.01 s):
//     Euler at h = 0.01 diverges, implicit keeps the energy below its start; against Euler (stable,
//     the reference, 5e-7 s) over 0.1 s the implicit positions converge at first order (error ratio in [1.6, 2.4]
//     from h = 4e-5 to 2e-5: the cables start stretched by 0.2 m, their mode omega ~ 400/s is resolved there);
//  4. without springs (joint stiffness and spring stiffness and damping zero) the implicit step is Euler's
//     (implicit joint damping) to rounding, 1e-12, on tests/data/mixed.xml (every joint type).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physid.h"
#include "test.h"

// a test model (NULL with a failed check)
static physModel* load(const char* path) {
  physModel* m = phys_load_mjcf(path, NULL);
  CHECK_MSG(m != NULL, "%s does not load", path);
  return m;
}

// x(t) - xs of the underdamped oscillator m x'' + b x' + k (x - xs) = 0 from (x0 - xs, v0)
static double damped(double t, double A0, double v0, double mass, double k, double b) {
  double w0 = sqrt(k / mass), zeta = b / (2 * sqrt(k * mass)), wd = w0 * sqrt(1 - zeta * zeta);
  double s = zeta * w0;
  return exp(-s * t) * (A0 * cos(wd * t) + (v0 + s * A0) / wd * sin(wd * t));
}

// springmass.xml under the implicit step with step h for T seconds from (0.6, -0.5): the largest deviation from
// the recurrence (*erec) and from the continuous solution (returned)
static double springmass_run(physModel* m, physData* d, double h, double T, double* erec) {
  double mass = 2, k = 50, b = 3, xs = 0.1, x = 0.6, v = -0.5, ecnt = 0;
  m->opt.timestep = h;
  m->opt.integrator = PHYS_INT_IMPLICIT;
  phys_reset_data(m, d);
  d->qpos[0] = x;
  d->qvel[0] = v;
  *erec = 0;
  int n = (int)lround(T / h);
  for (int s = 1; s <= n; s++) {
    phys_step(m, d);
    double a = (-k * (x - xs) - b * v - h * k * v) / (mass + h * b + h * h * k);
    v += h * a;
    x += h * v;
    *erec = fmax(*erec, fabs(d->qpos[0] - x) + fabs(d->qvel[0] - v));
    ecnt = fmax(ecnt, fabs(d->qpos[0] - xs - damped(s * h, 0.6 - xs, -0.5, mass, k, b)));
  }
  return ecnt;
}

static void test_springmass(void) {
  physModel* m = load("tests/data/springmass.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  double e[3], r[3], h[3] = {4e-3, 2e-3, 1e-3};
  for (int i = 0; i < 3; i++) {
    e[i] = springmass_run(m, d, h[i], 2, r + i);
    CHECK_MSG(r[i] < 1e-13, "h %g: the step differs from the recurrence by %g", h[i], r[i]);
  }
  printf("spring-mass implicit: error vs continuous %.3e, %.3e, %.3e m at h = 4e-3, 2e-3, 1e-3 (ratios %.3f, %.3f)\n",
         e[0], e[1], e[2], e[0] / e[1], e[1] / e[2]);
  for (int i = 0; i < 2; i++) CHECK_MSG(e[i] / e[i + 1] > 1.8 && e[i] / e[i + 1] < 2.2, "ratio %g", e[i] / e[i + 1]);
  phys_free_data(d);
  phys_free_model(m);
}

// total energy (potential + kinetic) at d's state
static double energy(const physModel* m, physData* d) {
  double e[2];
  phys_energy(m, d, e);
  return e[0] + e[1];
}

// the stiff spring k = 1e6 (and b = 0) at h = 0.01 from x - xs = 0.5, 200 steps: Euler blows up, implicit is bounded
static void test_stiff_spring(void) {
  physModel* m = load("tests/data/springmass.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  m->jnt_stiffness[0] = 1e6;
  m->dof_damping[0] = 0;
  m->opt.timestep = 0.01;
  double xs = 0.1, worst[2] = {0, 0};
  int blown = 0;
  for (int integ = 0; integ < 2; integ++) {
    m->opt.integrator = integ ? PHYS_INT_IMPLICIT : PHYS_INT_EULER;
    phys_reset_data(m, d);
    d->qpos[0] = xs + 0.5;
    double e0 = energy(m, d), eprev = e0;
    for (int s = 0; s < 200; s++) {
      int nw = d->nwarning;
      phys_step(m, d);
      worst[integ] = fmax(worst[integ], fabs(d->qpos[0] - xs));
      if (!integ && (d->nwarning > nw || fabs(d->qpos[0]) > 1e3)) blown = 1;
      if (integ) {
        double e = energy(m, d);
        CHECK_MSG(e <= eprev * (1 + 1e-12), "step %d: energy rose from %g to %g", s, eprev, e);
        eprev = e;
        CHECK(d->nwarning == nw);
      }
    }
    if (integ) {
      printf("stiff spring k h^2/m = 50: implicit max |x - xs| %.3g (start 0.5), energy %.3g of its start after 2 s\n",
             worst[1], eprev / e0);
      CHECK(eprev < 0.5 * e0);
    }
  }
  printf("stiff spring: Euler max |x - xs| %.3g, blown up: %d\n", worst[0], blown);
  CHECK(blown);
  CHECK(worst[1] <= 0.5 * (1 + 1e-12));
  phys_free_data(d);
  phys_free_model(m);
}

// cables.xml from rest with rod 2 moving (0.5, 0.3, -0.2) m/s and spinning 2 rad/s about x, for T seconds at h
static void cables_run(physModel* m, physData* d, int integ, double h, double T, double* emax) {
  m->opt.timestep = h;
  m->opt.integrator = integ;
  phys_reset_data(m, d);
  double v2[6] = {0.5, 0.3, -0.2, 2, 0, 0};
  memcpy(d->qvel + 6, v2, sizeof v2);
  double e0 = energy(m, d);
  *emax = 0;
  int n = (int)lround(T / h);
  for (int s = 0; s < n; s++) {
    phys_step(m, d);
    if (s % 10 == 9 || s == n - 1) *emax = fmax(*emax, energy(m, d) / e0);
  }
}

static void test_cables(void) {
  physModel* m = load("tests/data/cables.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  double emax, T = 0.1;
  // Euler at 0.01 s: the energy grows beyond 100 times its start (or the state is rejected)
  cables_run(m, d, PHYS_INT_EULER, 0.01, 1, &emax);
  printf("cables at h = 0.01: Euler max energy %.3g of its start (warnings %d)\n", emax, d->nwarning);
  CHECK(emax > 100 || d->nwarning > 0);
  cables_run(m, d, PHYS_INT_IMPLICIT, 0.01, 1, &emax);
  printf("cables at h = 0.01: implicit max energy %.6f of its start\n", emax);
  CHECK(emax <= 1 && d->nwarning == 0);
  // the reference: Euler at 1e-5 s
  int nq = m->nq;
  double* ref = malloc(sizeof(double) * nq);
  cables_run(m, d, PHYS_INT_EULER, 5e-7, T, &emax);
  memcpy(ref, d->qpos, sizeof(double) * nq);
  double err[2], h[2] = {4e-5, 2e-5};
  for (int i = 0; i < 2; i++) {
    cables_run(m, d, PHYS_INT_IMPLICIT, h[i], T, &emax);
    err[i] = 0;
    for (int k = 0; k < nq; k++) err[i] = fmax(err[i], fabs(d->qpos[k] - ref[k]));
  }
  printf("cables implicit vs Euler at 5e-7 s after %g s: %.3e, %.3e at h = 4e-5, 2e-5 (ratio %.3f)\n", T, err[0],
         err[1], err[0] / err[1]);
  CHECK(err[0] / err[1] > 1.6 && err[0] / err[1] < 2.4);
  free(ref);
  phys_free_data(d);
  phys_free_model(m);
}

// no springs: implicit = Euler to rounding on mixed.xml (contacts and limits off)
static void test_no_springs(void) {
  physModel* m = load("tests/data/mixed.xml");
  if (!m) return;
  m->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;
  for (int j = 0; j < m->njnt; j++) m->jnt_stiffness[j] = 0;
  for (int s = 0; s < m->nspring; s++) m->spring_stiffness[s] = m->spring_damping[s] = 0;
  physData* d = phys_make_data(m);
  physData* e = phys_make_data(m);
  for (int i = 0; i < m->nv; i++) d->qvel[i] = e->qvel[i] = 0.3 * (i + 1) * (i % 2 ? -1 : 1);
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = e->ctrl[i] = 0.5;
  double worst = 0;
  for (int s = 0; s < 100; s++) {
    m->opt.integrator = PHYS_INT_EULER;
    phys_step(m, d);
    m->opt.integrator = PHYS_INT_IMPLICIT;
    phys_step(m, e);
    for (int i = 0; i < m->nv; i++) worst = fmax(worst, fabs(d->qvel[i] - e->qvel[i]));
  }
  printf("no springs: implicit vs Euler max |dv| %.2e over 100 steps\n", worst);
  CHECK(worst < 1e-12);
  phys_free_data(d);
  phys_free_data(e);
  phys_free_model(m);
}

int main(void) {
  test_springmass();
  test_stiff_spring();
  test_cables();
  test_no_springs();
  return test_done();
}

// test_analytic.c - the step against closed-form mechanics: pendulum period, torque-free precession,
// energy of an undamped chain, the damped spring-mass oscillator, and bit-for-bit determinism.
// Each tolerance is derived in the comment above its check from the error of semi-implicit Euler; each
// O(dt) error is also checked to halve when dt halves (first-order convergence), so the bound cannot be
// met by a wrong integrator by luck.
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physid.h"
#include "rng.h"
#include "test.h"

#define PI 3.14159265358979323846

//---------------------------------------------------------------------------------------------------------
// helpers

// load a test model or fail loudly
static physModel* load(const char* path) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* m = phys_load_mjcf(path, &log);
  CHECK_MSG(m != NULL, "%s: %s", path, log.error);
  return m;
}

// res = R v, R row-major 3x3; res = R' v
static void matvec(double res[3], const double R[9], const double v[3]) {
  for (int i = 0; i < 3; i++) res[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
}
static void matTvec(double res[3], const double R[9], const double v[3]) {
  for (int i = 0; i < 3; i++) res[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
}
static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double norm3(const double a[3]) { return sqrt(dot3(a, a)); }
static void cross3(double res[3], const double a[3], const double b[3]) {
  res[0] = a[1] * b[2] - a[2] * b[1];
  res[1] = a[2] * b[0] - a[0] * b[2];
  res[2] = a[0] * b[1] - a[1] * b[0];
}

//---------------------------------------------------------------------------------------------------------
// pendulum period

// period from the zero crossings of qpos[0] over nstep steps (linear interpolation between samples)
static double measure_period(const physModel* m, physData* d, double theta0, int nstep, int* ncross) {
  phys_reset_data(m, d);
  d->qpos[0] = theta0;
  double first = -1, last = -1, prev = d->qpos[0];
  int n = 0;
  for (int s = 0; s < nstep; s++) {
    double t = d->time;
    phys_step(m, d);
    double cur = d->qpos[0];
    if ((prev < 0) != (cur < 0)) {
      double tc = t + m->opt.timestep * prev / (prev - cur);
      if (n == 0) first = tc;
      last = tc;
      n++;
    }
    prev = cur;
  }
  *ncross = n;
  return n > 1 ? 2 * (last - first) / (n - 1) : 0;
}

// I = 1.01, m = 1, l = 1, g = 9.81: T0 = 2 pi sqrt(I/(m g l)) = 2.0163 s.
// Semi-implicit Euler on the linearised pendulum th'' = -w^2 th is the linear map v+ = v - h w^2 th,
// th+ = th + h v+ whose eigenvalues exp(+-i W h) have cos(W h) = 1 - (w h)^2/2: the discrete solution is an
// exactly sampled sinusoid of period T_h = 2 pi / W, T_h/T0 - 1 = -(w h)^2/24 + O(h^4) = -4.0e-7 at
// h = 1e-3. The finite amplitude th0 lengthens the period by th0^2/16 (= 6.3e-8 at th0 = 1e-3).
// Interpolating zero crossings of a sampled sinusoid errs by O((w h)^2 h) per crossing, the same at every
// crossing, so the difference over 10 periods is exact to ~1e-12. Hence:
//   |T - T0| <= T0 ((w h)^2/24 + th0^2/16) (1 + 1%): the dt error bounds the deviation from T0;
//   |T - T_h (1 + th0^2/16)| <= 1e-9 T0: the measured period is the one the scheme must produce.
static void test_pendulum(void) {
  physModel* m = load("tests/data/pendulum.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  double inertia = 1.01, g = 9.81, h = m->opt.timestep, th0 = 1e-3;
  double w = sqrt(g / inertia), T0 = 2 * PI / w;
  double Th = 2 * PI / ((2 / h) * asin(w * h / 2));
  int ncross, nstep = (int)(10.3 * T0 / h);
  double T = measure_period(m, d, th0, nstep, &ncross);
  double bound = T0 * ((w * h) * (w * h) / 24 + th0 * th0 / 16) * 1.01;
  printf("pendulum: T = %.12f s over %d crossings, T0 = %.12f, |T - T0|/T0 = %.3e (bound %.3e), "
         "|T - T_h(1+th0^2/16)|/T0 = %.2e\n", T, ncross, T0, fabs(T - T0) / T0, bound / T0,
         fabs(T - Th * (1 + th0 * th0 / 16)) / T0);
  CHECK(ncross == 20 || ncross == 21);
  CHECK_NEAR(T, T0, bound);
  CHECK_NEAR(T, Th * (1 + th0 * th0 / 16), 1e-9 * T0);
  CHECK(d->nwarning == 0);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// torque-free rigid body

// world angular momentum about the com L = Ri diag(I) Ri' w, world angular velocity w, kinetic energy
static void free_body_momentum(const physModel* m, physData* d, double L[3], double w[3], double* energy) {
  double e[2], wi[3];
  phys_energy(m, d, e);   // also refreshes the kinematics (xmat, ximat)
  matvec(w, d->xmat + 9, d->qvel + 3);
  matTvec(wi, d->ximat + 9, w);
  for (int i = 0; i < 3; i++) wi[i] *= m->body_inertia[3 + i];
  matvec(L, d->ximat + 9, wi);
  *energy = e[1];
}

// simulate the free body for T seconds at step h: largest |L(t) - L0|/|L0| and |E - E0|/E0, largest |w|,
// and the largest deviation of |L|^2 from |L0|^2 + sum_n h^2 |L_n x w_n|^2, relative to |L0|^2
static void free_body_drift(physModel* m, physData* d, double h, double T, double* dL, double* dE,
                            double* wmax, double* dnorm) {
  static const double w0[3] = {0.4, -1.1, 1.6}, v0[3] = {0.2, -0.1, 0.3};
  m->opt.timestep = h;
  phys_reset_data(m, d);
  memcpy(d->qvel, v0, sizeof(v0));
  memcpy(d->qvel + 3, w0, sizeof(w0));
  double L0[3], E0, L[3], w[3], E, Lw[3];
  free_body_momentum(m, d, L0, w, &E0);
  double pred = dot3(L0, L0), L02 = pred;
  *dL = *dE = *dnorm = 0;
  *wmax = norm3(w0);
  int n = (int)lround(T / h);
  for (int s = 0; s < n; s++) {
    // |L+|^2 = |L|^2 + h^2 |L x w|^2 (explicit Euler on Euler's equations, see test_free_body)
    free_body_momentum(m, d, L, w, &E);
    cross3(Lw, L, w);
    pred += h * h * dot3(Lw, Lw);
    phys_step(m, d);
    free_body_momentum(m, d, L, w, &E);
    double diff[3] = {L[0] - L0[0], L[1] - L0[1], L[2] - L0[2]};
    *dL = fmax(*dL, norm3(diff) / norm3(L0));
    *dE = fmax(*dE, fabs(E - E0) / E0);
    *wmax = fmax(*wmax, norm3(d->qvel + 3));
    *dnorm = fmax(*dnorm, fabs(dot3(L, L) - pred) / L02);
  }
}

// Semi-implicit Euler integrates Euler's equations I w' = (I w) x w explicitly: in the body frame one step
// is exactly L+ = L + h L x w, so |L+|^2 = |L|^2 + h^2 |L x w|^2 (checked to 1e-12 relative along the whole
// run: the magnitude of L is what the scheme must produce). Hence |L| and E grow by at most h^2 |w|^2 per
// step (relative), T h max|w|^2 over time T; the world direction of L errs by O(h^2 |w|^2) per step as
// well (R+ uses w+ = w + O(h)). So both relative drifts are bounded by T h max|w|^2, and they must be
// first order: the drift halves when h halves (ratio in [1.8, 2.2]).
static void test_free_body(void) {
  physModel* m = load("tests/data/freebody.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  double T = 5, dL1, dE1, dL2, dE2, wmax, dn1, dn2;
  free_body_drift(m, d, 1e-3, T, &dL1, &dE1, &wmax, &dn1);
  free_body_drift(m, d, 5e-4, T, &dL2, &dE2, &wmax, &dn2);
  double bound = T * 1e-3 * wmax * wmax;
  printf("free body: over %g s at h = 1e-3 |dL|/|L| = %.3e, |dE|/E = %.3e (bound T h max|w|^2 = %.3e); "
         "ratios h/(h/2): %.3f, %.3f; |L|^2 vs prediction %.1e, %.1e\n", T, dL1, dE1, bound, dL1 / dL2,
         dE1 / dE2, dn1, dn2);
  CHECK(dL1 <= bound);
  CHECK(dE1 <= bound);
  CHECK(dL1 / dL2 > 1.8 && dL1 / dL2 < 2.2);
  CHECK(dE1 / dE2 > 1.8 && dE1 / dE2 < 2.2);
  CHECK(dn1 <= 1e-12);
  CHECK(dn2 <= 1e-12);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// energy of an undamped chain

// gravity power P = dU/dt = -g . sum_b m_b v_com_b, from cvel (world origin; angular, linear) and xipos
static double gravity_power(const physModel* m, physData* d) {
  phys_com_vel(m, d);
  double P = 0;
  for (int b = 1; b < m->nbody; b++) {
    const double *w = d->cvel + 6 * b, *v = d->cvel + 6 * b + 3, *x = d->xipos + 3 * b;
    double vc[3] = {v[0] + w[1] * x[2] - w[2] * x[1], v[1] + w[2] * x[0] - w[0] * x[2],
                    v[2] + w[0] * x[1] - w[1] * x[0]};
    for (int i = 0; i < 3; i++) P -= m->body_mass[b] * m->opt.gravity[i] * vc[i];
  }
  return P;
}

// run the chain from rest at amp*(1, 0.5, -0.8) for 5 s at step h. dE[s] = E(t_s) - E0 for s = 1..n
// (n = 5/h); returns max|dE|, and in maxres/maxP the largest |dE - (h/2)(P - P0)| and |P|
static double chain_run(physModel* m, physData* d, double amp, double h, double* dE, double* maxres,
                        double* maxP) {
  double th[3] = {amp, 0.5 * amp, -0.8 * amp}, e[2], worst = 0;
  m->opt.timestep = h;
  phys_reset_data(m, d);
  memcpy(d->qpos, th, sizeof(th));
  phys_energy(m, d, e);
  double E0 = e[0] + e[1], P0 = gravity_power(m, d);
  *maxres = *maxP = 0;
  int n = (int)lround(5 / h);
  for (int s = 1; s <= n; s++) {
    phys_step(m, d);
    phys_energy(m, d, e);
    double P = gravity_power(m, d);
    dE[s] = e[0] + e[1] - E0;
    worst = fmax(worst, fabs(dE[s]));
    *maxres = fmax(*maxres, fabs(dE[s] - 0.5 * h * (P - P0)));
    *maxP = fmax(*maxP, fabs(P));
  }
  return worst;
}

// Undamped spatial triple pendulum (chain3.xml, h = 5e-4, hanging straight down at q = 0), energy over 5 s.
// Small amplitude: the dynamics is nearly linear with constant M, where semi-implicit Euler is symplectic
// and conserves exactly the modified energy H~ = H - (h/2) P, P = dU/dt (for x'' = -w^2 x the map
// v+ = v - h w^2 x, x+ = x + h v+ keeps v^2 + w^2 x^2 - h w^2 x v). So E oscillates,
// E(t) - E0 = (h/2)(P(t) - P0): bounded by h max|P|, no drift. What H~ does not capture comes from the
// nonlinearity (M(q), sin terms), of relative size O(amplitude^2): halving the amplitude (0.1 -> 0.05 rad)
// must divide the fraction max|E - E0 - (h/2)(P - P0)| / max|E - E0| by 4 (checked in [3, 5]), and
// the fraction is below 10% at 0.05 rad.
// Large amplitude (1 rad): M(q) varies and the scheme, symplectic Euler in (q, v) rather than (q, p), is
// not symplectic: energy drifts by O(h) per unit time. The continuous dynamics still conserves energy, so
// the error must be first order: max|dE| halves with h (ratio in [1.8, 2.2]) and the Richardson
// extrapolation 2 dE(h/2) - dE(h) (error O(h^2), relative ~ h w_max ~ 1e-2 with w_max ~ 20 rad/s the
// fastest mode) stays below 1% of max|dE(h)|.
static void test_chain_energy(void) {
  physModel* m = load("tests/data/chain3.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  double h = m->opt.timestep, res, P, res2, P2;
  int n = (int)lround(5 / h);
  double* dE1 = calloc((size_t)n + 1, sizeof(double));
  double* dE2 = calloc((size_t)2 * n + 1, sizeof(double));

  double small1 = chain_run(m, d, 0.1, h, dE1, &res, &P);
  double small2 = chain_run(m, d, 0.05, h, dE1, &res2, &P2);
  double frac1 = res / small1, frac2 = res2 / small2;
  printf("chain3 amplitude 0.1 (0.05): max|E - E0| = %.3e (%.3e) J, bound h max|P| = %.3e (%.3e) J, "
         "not in H~: %.3f (%.3f), ratio %.2f\n", small1, small2, h * P, h * P2, frac1, frac2, frac1 / frac2);
  CHECK(small1 <= h * P);
  CHECK(small2 <= h * P2);
  CHECK(frac1 / frac2 > 3 && frac1 / frac2 < 5);
  CHECK(frac2 < 0.1);

  double big1 = chain_run(m, d, 1.0, h, dE1, &res, &P);
  double big2 = chain_run(m, d, 1.0, h / 2, dE2, &res2, &P2);
  double rich = 0;
  for (int s = 1; s <= n; s++) rich = fmax(rich, fabs(2 * dE2[2 * s] - dE1[s]));
  printf("chain3 amplitude 1: max|E - E0| = %.3e J at h, %.3e J at h/2 (ratio %.3f), Richardson %.3e J\n",
         big1, big2, big1 / big2, rich);
  CHECK(big1 / big2 > 1.8 && big1 / big2 < 2.2);
  CHECK(rich <= 0.01 * big1);
  free(dE1);
  free(dE2);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// damped spring-mass

// m x'' = -k (x - xs) - b x': x - xs = Re(c e^{s t}), s = -zeta w0 + i wd, c = A - i (v0 + zeta w0 A)/wd
static double oscillator(double t, double A, double v0, double w0, double zeta) {
  double wd = w0 * sqrt(1 - zeta * zeta), sig = zeta * w0;
  return exp(-sig * t) * (A * cos(wd * t) + (v0 + sig * A) / wd * sin(wd * t));
}

// run the oscillator for T s at step h: largest deviation from the recurrence of the scheme and from the
// continuous solution; also the a-priori bound of the latter (see test_spring_mass)
static void spring_run(physModel* m, physData* d, double h, double T, double* erec, double* ecnt,
                       double* bound) {
  double mass = 2, k = 50, b = 3, xs = 0.1, x0 = 0.6, v0 = -0.5;
  double w0 = sqrt(k / mass), zeta = b / (2 * sqrt(k * mass));
  m->opt.timestep = h;
  phys_reset_data(m, d);
  d->qpos[0] = x0;
  d->qvel[0] = v0;
  double x = x0, v = v0;
  *erec = *ecnt = 0;
  int n = (int)lround(T / h);
  for (int s = 1; s <= n; s++) {
    phys_step(m, d);
    // the scheme by hand: v+ = v + h (-k (x - xs) - b v)/(m + h b), x+ = x + h v+
    v += h * (-k * (x - xs) - b * v) / (mass + h * b);
    x += h * v;
    *erec = fmax(*erec, fabs(d->qpos[0] - x) + fabs(d->qvel[0] - v));
    *ecnt = fmax(*ecnt, fabs(d->qpos[0] - xs - oscillator(s * h, x0 - xs, v0, w0, zeta)));
  }
  // the scheme is u_{n+1} = A u_n with eigenvalues lam = exp(s_h h); x_n - xs = Re(c_h lam^n), c_h fitted
  // to x_0, x_1. Then |x_n - x(t_n)| <= |c_h - c| + |c| t |s_h - s| e^{max(Re s, Re s_h) t}
  double a11 = 1 - h * h * k / (mass + h * b), a12 = h * mass / (mass + h * b);
  double a21 = -h * k / (mass + h * b), a22 = mass / (mass + h * b);
  double tr = a11 + a22, det = a11 * a22 - a12 * a21;
  double complex lam = tr / 2 + I * sqrt(det - tr * tr / 4);
  double complex sh = clog(lam) / h, sc = -zeta * w0 + I * w0 * sqrt(1 - zeta * zeta);
  double A0 = x0 - xs, x1 = a11 * A0 + a12 * v0;
  double complex ch = A0 + I * (A0 * creal(lam) - x1) / cimag(lam);
  double complex cc = A0 - I * (v0 + zeta * w0 * A0) / cimag(sc);
  double decay = fmax(creal(sc), creal(sh));
  *bound = 0;
  for (int s = 0; s <= n; s++) {
    double t = s * h;
    *bound = fmax(*bound, cabs(ch - cc) + cabs(cc) * t * cabs(sh - sc) * exp(decay * t));
  }
}

// m = 2, k = 50, b = 3 (w0 = 5, zeta = 0.15), xs = 0.1, from x0 = 0.6, v0 = -0.5 for 4 s:
// (a) the state equals the scheme's recurrence written out here (implicit damping) to 1e-13;
// (b) the deviation from the continuous solution is below the bound derived from the scheme's
//     eigenvalues (spring_run), which is O(h) (about 2.5e-3 m at h = 1e-3), and halves with h.
static void test_spring_mass(void) {
  physModel* m = load("tests/data/springmass.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  double T = 4, erec1, ecnt1, bound1, erec2, ecnt2, bound2;
  spring_run(m, d, 1e-3, T, &erec1, &ecnt1, &bound1);
  spring_run(m, d, 5e-4, T, &erec2, &ecnt2, &bound2);
  printf("spring-mass: h = 1e-3: vs recurrence %.1e, vs continuous %.3e m (bound %.3e); h = 5e-4: %.3e "
         "(bound %.3e); ratio %.3f\n", erec1, ecnt1, bound1, ecnt2, bound2, ecnt1 / ecnt2);
  CHECK(erec1 <= 1e-13);
  CHECK(erec2 <= 1e-13);
  CHECK(ecnt1 <= bound1);
  CHECK(ecnt2 <= bound2);
  CHECK(ecnt1 / ecnt2 > 1.8 && ecnt1 / ecnt2 < 2.2);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// determinism

// FNV-1a hash of the bytes of n doubles
static uint64_t hash_doubles(uint64_t h, const double* x, int n) {
  const unsigned char* p = (const unsigned char*)x;
  for (size_t i = 0; i < sizeof(double) * (size_t)n; i++) {
    h = (h ^ p[i]) * 0x100000001B3ull;
  }
  return h;
}

// hash of the state after nstep steps from a seeded random state; perturb: qvel[0] moved by one ulp first
static uint64_t run_hash(const physModel* m, uint64_t seed, int nstep, int perturb) {
  physData* d = phys_make_data(m);
  physRng rng;
  phys_rng_seed(&rng, seed);
  phys_reset_data(m, d);
  for (int i = 0; i < m->nv; i++) d->qvel[i] = phys_rng_range(&rng, -1, 1);
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = phys_rng_range(&rng, -1, 1);
  if (perturb) d->qvel[0] = nextafter(d->qvel[0], INFINITY);
  for (int s = 0; s < nstep; s++) phys_step(m, d);
  uint64_t h = 0xCBF29CE484222325ull;
  h = hash_doubles(h, d->qpos, m->nq);
  h = hash_doubles(h, d->qvel, m->nv);
  h = hash_doubles(h, d->qacc, m->nv);
  h = hash_doubles(h, &d->time, 1);
  phys_free_data(d);
  return h;
}

// same inputs -> bit-identical state (two independent physData); a 1-ulp change -> a different hash
static void test_determinism(void) {
  const char* files[2] = {"/usr/share/mujoco/model/humanoid/humanoid.xml", "tests/data/mixed.xml"};
  for (int f = 0; f < 2; f++) {
    physModel* m = load(files[f]);
    if (!m) continue;
    uint64_t h1 = run_hash(m, 7, 400, 0), h2 = run_hash(m, 7, 400, 0), h3 = run_hash(m, 7, 400, 1);
    printf("determinism %s: %016llx %016llx, perturbed %016llx\n", files[f], (unsigned long long)h1,
           (unsigned long long)h2, (unsigned long long)h3);
    CHECK(h1 == h2);
    CHECK(h1 != h3);
    phys_free_model(m);
  }
}

int main(void) {
  test_pendulum();
  test_free_body();
  test_chain_energy();
  test_spring_mass();
  test_determinism();
  return test_done();
}

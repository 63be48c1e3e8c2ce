// test_muscle.c - muscles and slider-crank transmissions (src/dyn/muscle.c) without MuJoCo (the oracle comparison
// is test_oracle_muscle.c): the slider-crank's moment (the generalized force of a unit actuator force) against
// central differences of its length, its velocity against the moment times qvel, the broken crank's branch; the
// muscle curves' values at their knots (continuous, 1 at the optimum, 0 at lmin and lmax) and the activation
// time constants; the curves' and the activation dynamics' derivatives against central differences, and at
// their kinks against the one-sided differences on the side the value takes (the slider-crank's second
// derivatives: tests/grad/test_passive_deriv.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dyn.h"
#include "grad.h"
#include "physid.h"
#include "rng.h"
#include "test.h"

// a two-link arm with a slider-crank from a world slider site (tilted axis) to a site on the second link, a
// muscle on a fixed tendon of both joints, given lengthrange
static const char* MODEL =
    "<mujoco><option gravity='0 0 0'/><worldbody>\n"
    "<site name='slider' pos='0.05 -0.3 0.02' zaxis='1 .4 .2'/>\n"
    "<body><joint name='a' axis='0 0 1' damping='.1'/><geom type='capsule' size='.02' fromto='0 0 0 .3 0 0'/>\n"
    "<body pos='.3 0 0'><joint name='b' axis='0 1 1'/><geom type='capsule' size='.02' fromto='0 0 0 .2 0 0'/>\n"
    "<site name='crank' pos='.15 .02 0'/></body></body></worldbody>\n"
    "<tendon><fixed name='t'><joint joint='a' coef='1'/><joint joint='b' coef='-.5'/></fixed></tendon>\n"
    "<actuator><general name='sc' cranksite='crank' slidersite='slider' cranklength='.45' gear='1.5' gainprm='2' "
    "biastype='affine' biasprm='0 -3 -.5'/>\n"
    "<muscle name='m' tendon='t' lengthrange='-1 1' ctrllimited='true' ctrlrange='0 1'/></actuator></mujoco>";

// MODEL in a temporary file, loaded
static physModel* load_model(const char* text) {
  char path[] = "/tmp/physid_test_muscle_XXXXXX.xml";
  int fd = mkstemps(path, 4);
  if (fd < 0) return NULL;
  FILE* f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* m = phys_load_mjcf(path, &log);
  unlink(path);
  CHECK_MSG(m != NULL, "%s", log.error);
  return m;
}

// the slider-crank's length at qpos q (kinematics run)
static double crank_length(const physModel* m, physData* d, const double* q) {
  memcpy(d->qpos, q, sizeof(double) * (size_t)m->nq);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  double vel;
  return phys_slidercrank(m, d, 0, 0, NULL, &vel);
}

// moment = dL/dq by central differences (h 1e-6) at 20 configurations, one of them a broken crank (det <= 0);
// velocity = moment . qvel
static void test_slidercrank(void) {
  physModel* m = load_model(MODEL);
  if (!m) return;
  physData* d = phys_make_data(m);
  double worst_m = 0, worst_v = 0;
  int broken = 0;
  for (int k = 0; k < 20; k++) {
    double q[2] = {-1.2 + 0.13 * k, 0.9 - 0.11 * k}, moment[2] = {0, 0};
    if (k == 19) q[0] = 2.8, q[1] = 0;   // the crank far from the slider: det < 0, the length is a'v
    for (int i = 0; i < 2; i++) d->qvel[i] = 0.7 - 0.4 * i;
    double L = crank_length(m, d, q), vel;
    phys_slidercrank(m, d, 0, 1, moment, &vel);
    const double *pc = d->site_xpos + 3 * m->actuator_trnid[0], *ps = d->site_xpos + 3 * m->actuator_trnid2[0];
    const double* R = d->site_xmat + 9 * m->actuator_trnid2[0];
    double v[3] = {pc[0] - ps[0], pc[1] - ps[1], pc[2] - ps[2]}, av = R[2] * v[0] + R[5] * v[1] + R[8] * v[2];
    broken += av * av + 0.45 * 0.45 - (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) <= 0;
    CHECK(isfinite(L));
    for (int i = 0; i < 2; i++) {
      double qp[2] = {q[0], q[1]}, qm[2] = {q[0], q[1]};
      qp[i] += 1e-6, qm[i] -= 1e-6;
      double fd = (crank_length(m, d, qp) - crank_length(m, d, qm)) / 2e-6;
      worst_m = fmax(worst_m, fabs(fd - moment[i]));
    }
    worst_v = fmax(worst_v, fabs(vel - (moment[0] * d->qvel[0] + moment[1] * d->qvel[1])));
  }
  printf("slider-crank, 20 configurations (%d broken): moment vs differences %.1e, velocity vs moment.qvel %.1e\n",
         broken, worst_m, worst_v);
  CHECK(broken >= 1 && broken < 20);
  CHECK_MSG(worst_m <= 1e-8, "moment differs from the differences by %.3g", worst_m);
  CHECK_MSG(worst_v <= 1e-14, "velocity differs from moment . qvel by %.3g", worst_v);
  phys_free_data(d);
  phys_free_model(m);
}

// the curves at their knots with MuJoCo's default parameters (lengthrange [0, 0.3], range 0.75 1.05: L0 = 1,
// the normalized length is 0.75 + len): FL 1 at L = 1, 0.5 at the midpoints, 0 at lmin and lmax and beyond lmax;
// FV 1 at rest, 0 at V = -1, fvmax beyond fvmax - 1; FP 0 up to L = 1, fpmax / 2 at b = (1 + lmax)/2; the
// peak force scale / acc0; the activation time constants tau_act (0.5 + 1.5 a) and tau_deact / (0.5 + 1.5 a)
static void test_curves(void) {
  static const double P[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2}, LR[2] = {0, 0.3}, TAU[2] = {0.01, 0.04};
  double F = 200 / 4.0;   // acc0 4
  CHECK_NEAR(phys_muscle_gain(0.25, 0, LR, 4, P), -F, 1e-12);               // L = 1
  CHECK_NEAR(phys_muscle_gain(0.0, 0, LR, 4, P), -F * 0.5, 1e-12);          // L = 0.75 = (lmin + 1)/2
  CHECK_NEAR(phys_muscle_gain(0.55, 0, LR, 4, P), -F * 0.5, 1e-12);         // L = 1.3 = (1 + lmax)/2
  CHECK_NEAR(phys_muscle_gain(-0.2499, 0, LR, 4, P), 0, 1e-5);              // L just above lmin (0 at lmin;
  CHECK_NEAR(phys_muscle_gain(-0.2501, 0, LR, 4, P), F * 1.00080008, 1e-9);   // just below: 2.2.2 jumps to FL -1.0008)
  CHECK_NEAR(phys_muscle_gain(0.85, 0, LR, 4, P), 0, 1e-12);                // L = lmax
  CHECK(phys_muscle_gain(1.0, 0, LR, 4, P) == 0);                           // beyond lmax
  CHECK(phys_muscle_gain(-0.35, 0, LR, 4, P) > 0);                          // below lmin: 2.2.2's curve goes on
  CHECK(phys_muscle_gain(0.25, -1.5, LR, 4, P) == 0);                       // V = -1
  CHECK_NEAR(phys_muscle_gain(0.25, 3, LR, 4, P), -F * 1.2, 1e-12);         // V beyond fvmax - 1
  CHECK(phys_muscle_bias(0.25, LR, 4, P) == 0);
  CHECK_NEAR(phys_muscle_bias(0.55, LR, 4, P), -F * 1.3 * 0.5, 1e-12);      // L = b
  CHECK_NEAR(phys_muscle_bias(0.85, LR, 4, P), -F * 1.3 * 1.5, 1e-12);      // L = lmax: linear beyond b
  CHECK_NEAR(phys_muscle_dynamics(1, 0, TAU), 1 / (0.01 * 0.5), 1e-9);      // activating from 0
  CHECK_NEAR(phys_muscle_dynamics(0, 1, TAU), -1 / (0.04 / 2.0), 1e-9);     // deactivating from 1
  CHECK_NEAR(phys_muscle_dynamics(2, 0.5, TAU), 0.5 / (0.01 * 1.25), 1e-9);   // ctrl clipped to 1
}

// the curves' derivatives (phys_muscle_*_deriv) against central differences (h 1e-7, 1e-6 absolute on values
// of order F = 50 / L0 = 1) at 200 random (len, vel) inside the pieces, away from the breakpoints by 1e-4; at
// the breakpoints (L = lmin, a, 1, b, lmax; V = -1, 0, fvmax - 1) against the one-sided difference on the side
// the value's branch takes (the C1 knots: both sides agree); the jump at lmin (FL -1 on the left, 0 at lmin):
// the slope there is the right piece's 0; dgain/dF, dbias/dF against differences in prm[2]
static double fd_gain(double len, double vel, const double* P, const double* LR, int which, double h) {
  double p[9];
  memcpy(p, P, sizeof p);
  if (which == 2) p[2] += h;
  double gp = phys_muscle_gain(len + (which == 0 ? h : 0), vel + (which == 1 ? h : 0), LR, 4, p);
  if (which == 2) p[2] -= 2 * h;
  double gm = phys_muscle_gain(len - (which == 0 ? h : 0), vel - (which == 1 ? h : 0), LR, 4, p);
  return (gp - gm) / (2 * h);
}

static double fd_bias(double len, const double* P, const double* LR, int which, double h) {
  double p[9];
  memcpy(p, P, sizeof p);
  if (which == 2) p[2] += h;
  double bp = phys_muscle_bias(len + (which == 0 ? h : 0), LR, 4, p);
  if (which == 2) p[2] -= 2 * h;
  double bm = phys_muscle_bias(len - (which == 0 ? h : 0), LR, 4, p);
  return (bp - bm) / (2 * h);
}

// 1 if x is within 1e-4 of one of the n knots
static int near_knot(double x, const double* knot, int n) {
  for (int i = 0; i < n; i++)
    if (fabs(x - knot[i]) < 1e-4) return 1;
  return 0;
}

static void test_curve_derivatives(void) {
  // explicit peak force 50, lengthrange [0, 0.5], range 0.75 1.25: L0 = 1 exactly (so len = -0.25 is L = lmin
  // exactly), L = 0.75 + len; vmax 1.5: V = vel / 1.5
  static const double P[9] = {0.75, 1.25, 50, 200, 0.5, 1.6, 1.5, 1.3, 1.2}, LR[2] = {0, 0.5};
  const double lk[] = {-0.25, 0.0, 0.25, 0.55, 0.85}, vk[] = {-1.5, 0, 0.3};   // the knots in len and vel
  double worst = 0, h = 1e-7;
  physRng r;
  phys_rng_seed(&r, 5);
  for (int s = 0; s < 200; s++) {
    double len = phys_rng_range(&r, -0.4, 1.0), vel = phys_rng_range(&r, -2, 1);
    if (near_knot(len, lk, 5) || near_knot(vel, vk, 3)) continue;
    double gl, gv, gF, bl, bF;
    phys_muscle_gain_deriv(len, vel, LR, 4, P, &gl, &gv, &gF);
    phys_muscle_bias_deriv(len, LR, 4, P, &bl, &bF);
    worst = fmax(worst, fabs(gl - fd_gain(len, vel, P, LR, 0, h)));
    worst = fmax(worst, fabs(gv - fd_gain(len, vel, P, LR, 1, h)));
    worst = fmax(worst, fabs(gF - fd_gain(len, vel, P, LR, 2, h)));
    worst = fmax(worst, fabs(bl - fd_bias(len, P, LR, 0, h)));
    worst = fmax(worst, fabs(bF - fd_bias(len, P, LR, 2, h)));
  }
  printf("muscle gain and bias: d/dlen, d/dvel, d/dF vs central differences, 200 points %.2e\n", worst);
  CHECK_MSG(worst <= 1e-6, "curve derivative off by %.3g", worst);
  // the knots: one-sided differences on the value's side (the left for L <= knot pieces, except lmin)
  double hk = 1e-8, wk = 0, gl, gv;
  for (int i = 0; i < 5; i++) {
    double len = lk[i], side = i == 0 ? 1 : -1;   // lmin: the right piece (L >= lmin); else the left (L <= knot)
    double g0 = phys_muscle_gain_deriv(len, 0.1, LR, 4, P, &gl, NULL, NULL);
    double fd = (phys_muscle_gain(len + side * hk, 0.1, LR, 4, P) - g0) / (side * hk);
    wk = fmax(wk, fabs(gl - fd));
    double b0 = phys_muscle_bias_deriv(len, LR, 4, P, &gl, NULL);
    fd = (phys_muscle_bias(len + side * hk, LR, 4, P) - b0) / (side * hk);
    wk = fmax(wk, fabs(gl - fd));
  }
  for (int i = 0; i < 3; i++) {
    double g0 = phys_muscle_gain_deriv(0.2, vk[i], LR, 4, P, NULL, &gv, NULL);
    double fd = (phys_muscle_gain(0.2, vk[i] - hk, LR, 4, P) - g0) / -hk;   // V <= knot: the left
    wk = fmax(wk, fabs(gv - fd));
  }
  phys_muscle_gain_deriv(-0.25, 0.1, LR, 4, P, &gl, NULL, NULL);   // L = lmin exactly: the jump's right side
  printf("muscle curves at their 8 knots: derivative vs one-sided differences %.2e; at lmin %g (left value %g)\n", wk,
         gl, phys_muscle_gain(-0.25 - 1e-9, 0.1, LR, 4, P));
  CHECK_MSG(wk <= 1e-5, "one-sided knot derivative off by %.3g", wk);
  CHECK(gl == 0);
}

// the activation dynamics' derivatives against central differences in ctrl, act, tau_act, tau_deact (h 1e-8,
// relative 1e-6) at random points off the kinks, and at the degenerate points: act = 0 and 1 (inside [0, 1]:
// the one-sided difference from inside), ctrl = 0 and 1 (the clip's slope 1 from inside), ctrl = act (the
// deactivation branch's slope, equal to the one-sided difference from below), ctrl above 1 (0)
static double dyn_fd(double c, double a, const double* tau, int which, double hp, double hm) {
  double t[2] = {tau[0], tau[1]}, cp = c, ap = a, cm = c, am = a;
  if (which == 0) cp += hp, cm -= hm;
  if (which == 1) ap += hp, am -= hm;
  if (which >= 2) t[which - 2] += hp;
  double fp = phys_muscle_dynamics(cp, ap, t);
  if (which >= 2) t[which - 2] -= hp + hm;
  return (fp - phys_muscle_dynamics(cm, am, t)) / (hp + hm);
}

static void test_dynamics_derivatives(void) {
  static const double TAU[2] = {0.01, 0.04};
  double worst = 0, h = 1e-8;
  physRng r;
  phys_rng_seed(&r, 6);
  for (int s = 0; s < 200; s++) {
    double c = phys_rng_range(&r, -0.2, 1.2), a = phys_rng_range(&r, -0.1, 1.1), g[4];
    if (fabs(c - a) < 1e-4 || fabs(c) < 1e-4 || fabs(c - 1) < 1e-4 || fabs(a) < 1e-4 || fabs(a - 1) < 1e-4) continue;
    double v = phys_muscle_dynamics_deriv(c, a, TAU, g, g + 1, g + 2);
    (void)v;
    for (int k = 0; k < 4; k++) worst = fmax(worst, fabs(g[k] - dyn_fd(c, a, TAU, k, h, h)) / fmax(1, fabs(g[k])));
  }
  printf("muscle dynamics: d/dctrl, d/dact, d/dtau vs central differences, 200 points %.2e\n", worst);
  CHECK_MSG(worst <= 1e-6, "dynamics derivative off by %.3g", worst);
  // degenerate points: (ctrl, act, the side of the ctrl and of the act difference: +1 right, -1 left; ctrl =
  // act: the deactivation branch c <= act, so ctrl's left and act's right)
  static const double pt[][4] = {{0.6, 0, 1, 1}, {0.3, 1, -1, -1}, {0, 0.4, 1, 1},
                                 {1, 0.4, -1, -1}, {0.5, 0.5, -1, 1}, {1.3, 0.2, 1, 1}};
  double wk = 0;
  for (int i = 0; i < 6; i++) {
    double g[4];
    phys_muscle_dynamics_deriv(pt[i][0], pt[i][1], TAU, g, g + 1, g + 2);
    for (int k = 0; k < 2; k++) {   // d/dctrl, d/dact one-sided
      double sh = pt[i][2 + k] * 1e-9;
      double fd = dyn_fd(pt[i][0], pt[i][1], TAU, k, sh > 0 ? sh : 0, sh > 0 ? 0 : -sh);
      wk = fmax(wk, fabs(g[k] - fd) / fmax(1, fabs(g[k])));
    }
  }
  double g[4];
  phys_muscle_dynamics_deriv(1.3, 0.2, TAU, g, g + 1, g + 2);
  printf("muscle dynamics at act 0 and 1, ctrl 0 and 1, ctrl = act, ctrl > 1: vs one-sided differences %.2e\n", wk);
  CHECK_MSG(wk <= 1e-5, "one-sided dynamics derivative off by %.3g", wk);
  CHECK(g[0] == 0);   // ctrl clipped: no slope
  phys_muscle_dynamics_deriv(0.5, 0.5, TAU, g, g + 1, g + 2);
  CHECK_NEAR(g[0], (0.5 + 1.5 * 0.5) / 0.04, 1e-9);   // ctrl = act: the deactivation branch, 1 / tau_deact(a)
  CHECK(g[2] == 0);
}

int main(void) {
  test_slidercrank();
  test_curves();
  test_curve_derivatives();
  test_dynamics_derivatives();
  return test_done();
}

// test_spatial.c - spatial algebra against explicit 6x6 matrices and physical identities.
#include <string.h>

#include "rng.h"
#include "rot.h"
#include "spatial.h"
#include "test.h"

// [a]x as a 3x3 matrix
static void skew(double S[9], const double a[3]) {
  double t[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
  memcpy(S, t, sizeof(t));
}

// 6x6 motion cross matrix [[wx, 0], [vx, wx]]
static void crm(double X[36], const double v[6]) {
  double W[9], V[9];
  skew(W, v);
  skew(V, v + 3);
  memset(X, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      X[6 * i + j] = W[3 * i + j];
      X[6 * (i + 3) + j + 3] = W[3 * i + j];
      X[6 * (i + 3) + j] = V[3 * i + j];
    }
}

static void rand6(physRng* r, double v[6]) {
  for (int i = 0; i < 6; i++) v[i] = phys_rng_range(r, -1, 1);
}

int main(void) {
  physRng r;
  phys_rng_seed(&r, 3);
  for (int trial = 0; trial < 20; trial++) {
    double v[6], m[6], f[6], res[6], X[36];
    rand6(&r, v);
    rand6(&r, m);
    rand6(&r, f);
    crm(X, v);
    // motion cross = crm(v) m
    phys_cross_motion(res, v, m);
    for (int i = 0; i < 6; i++) {
      double s = 0;
      for (int k = 0; k < 6; k++) s += X[6 * i + k] * m[k];
      CHECK_NEAR(res[i], s, 1e-15);
    }
    // force cross = -crm(v)' f
    phys_cross_force(res, v, f);
    for (int i = 0; i < 6; i++) {
      double s = 0;
      for (int k = 0; k < 6; k++) s -= X[6 * k + i] * f[k];
      CHECK_NEAR(res[i], s, 1e-15);
    }
    // duality: (v x m) . f + m . (v x* f) = 0
    double a[6], b[6];
    phys_cross_motion(a, v, m);
    phys_cross_force(b, v, f);
    CHECK_NEAR(phys_dot6(a, f) + phys_dot6(m, b), 0, 1e-15);
    // inertia: a point-mass cloud; I v == momentum computed particle by particle
    double inert[10] = {0}, mom[6] = {0};
    for (int p = 0; p < 4; p++) {
      double mp = phys_rng_range(&r, 0.1, 1), x[3], vel[3], t[3];
      for (int i = 0; i < 3; i++) x[i] = phys_rng_range(&r, -1, 1);
      double zero[6] = {0}, pt[10];
      phys_inert_from_com(pt, mp, x, zero);
      for (int k = 0; k < 10; k++) inert[k] += pt[k];
      phys_cross3(vel, v, x);  // velocity of the particle: v_O + w x x
      for (int i = 0; i < 3; i++) vel[i] += v[3 + i];
      phys_cross3(t, x, vel);  // angular momentum about the origin
      for (int i = 0; i < 3; i++) {
        mom[i] += mp * t[i];
        mom[3 + i] += mp * vel[i];
      }
    }
    phys_inert_mul(res, inert, v);
    for (int i = 0; i < 6; i++) CHECK_NEAR(res[i], mom[i], 1e-14);
    double M[36];
    phys_inert2mat(M, inert);
    for (int i = 0; i < 6; i++) {
      double s = 0;
      for (int k = 0; k < 6; k++) s += M[6 * i + k] * v[k];
      CHECK_NEAR(res[i], s, 1e-14);
      for (int k = 0; k < 6; k++) CHECK(M[6 * i + k] == M[6 * k + i]);
    }
    // frames: to_local and to_world invert each other; power is frame independent
    double q[4], R[9], p[3], vl[6], fl[6], back[6];
    for (int i = 0; i < 4; i++) q[i] = phys_rng_range(&r, -1, 1);
    phys_quat_normalize(q);
    phys_quat2mat(R, q);
    for (int i = 0; i < 3; i++) p[i] = phys_rng_range(&r, -2, 2);
    phys_motion_to_local(vl, R, p, v);
    phys_force_to_local(fl, R, p, f);
    CHECK_NEAR(phys_dot6(vl, fl), phys_dot6(v, f), 1e-14);
    phys_motion_to_world(back, R, p, vl);
    for (int i = 0; i < 6; i++) CHECK_NEAR(back[i], v[i], 1e-14);
    phys_force_to_world(back, R, p, fl);
    for (int i = 0; i < 6; i++) CHECK_NEAR(back[i], f[i], 1e-14);
    // local linear velocity is the velocity of the point p in frame coordinates
    double vp[3], vpl[3];
    phys_cross3(vp, v, p);
    for (int i = 0; i < 3; i++) vp[i] += v[3 + i];
    phys_matT_vec3(vpl, R, vp);
    for (int i = 0; i < 3; i++) CHECK_NEAR(vl[3 + i], vpl[i], 1e-14);
    // shifts: power invariant
    double vs[6], fs[6];
    phys_motion_shift(vs, v, p);
    phys_force_shift(fs, f, p);
    CHECK_NEAR(phys_dot6(vs, fs), phys_dot6(v, f), 1e-14);
    // symmetric rotations: R S R' against explicit products
    double S6[6], S9[9], T[9], Rt[9], out[6];
    for (int i = 0; i < 6; i++) S6[i] = phys_rng_range(&r, -1, 1);
    double full[9] = {S6[0], S6[3], S6[4], S6[3], S6[1], S6[5], S6[4], S6[5], S6[2]};
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) Rt[3 * i + k] = R[3 * k + i];
    phys_mat_mul3(T, R, full);
    phys_mat_mul3(S9, T, Rt);
    phys_sym3_rot(out, R, S6);
    double ref[6] = {S9[0], S9[4], S9[8], S9[1], S9[2], S9[5]};
    for (int i = 0; i < 6; i++) CHECK_NEAR(out[i], ref[i], 1e-14);
    double dg[3] = {S6[0], S6[1], S6[2]}, diag6[6] = {S6[0], S6[1], S6[2], 0, 0, 0};
    phys_sym3_rot_diag(out, R, dg);
    phys_sym3_rot(ref, R, diag6);
    for (int i = 0; i < 6; i++) CHECK_NEAR(out[i], ref[i], 1e-14);
  }
  return test_done();
}

// spatial.c - 6-D spatial algebra: cross products, packed spatial inertias, reference changes.
#include "spatial.h"

// res = a x b (3-D), written out so that res may alias neither input
static inline void cross(double res[3], const double a[3], const double b[3]) {
  res[0] = a[1] * b[2] - a[2] * b[1];
  res[1] = a[2] * b[0] - a[0] * b[2];
  res[2] = a[0] * b[1] - a[1] * b[0];
}

//---------------------------------------------------------------------------------------------------------
// cross products

// res = v x m = (w x mw, w x mv + v x mw)
void phys_cross_motion(double res[6], const double v[6], const double m[6]) {
  double t[3];
  cross(res, v, m);
  cross(res + 3, v, m + 3);
  cross(t, v + 3, m);
  res[3] += t[0];
  res[4] += t[1];
  res[5] += t[2];
}

// res = v x* f = (w x n + v x f, w x f)
void phys_cross_force(double res[6], const double v[6], const double f[6]) {
  double t[3];
  cross(res, v, f);
  cross(t, v + 3, f + 3);
  res[0] += t[0];
  res[1] += t[1];
  res[2] += t[2];
  cross(res + 3, v, f + 3);
}

//---------------------------------------------------------------------------------------------------------
// symmetric 3x3 packed as (xx yy zz xy xz yz)

// res = S w
void phys_sym3_mul(double res[3], const double S[6], const double w[3]) {
  res[0] = S[0] * w[0] + S[3] * w[1] + S[4] * w[2];
  res[1] = S[3] * w[0] + S[1] * w[1] + S[5] * w[2];
  res[2] = S[4] * w[0] + S[5] * w[1] + S[2] * w[2];
}

// res = R diag(d) R': res_ij = sum_k R_ik d_k R_jk
void phys_sym3_rot_diag(double res[6], const double R[9], const double d[3]) {
  static const int I[6] = {0, 1, 2, 0, 0, 1}, J[6] = {0, 1, 2, 1, 2, 2};
  for (int e = 0; e < 6; e++) {
    const double* a = R + 3 * I[e];
    const double* b = R + 3 * J[e];
    res[e] = a[0] * d[0] * b[0] + a[1] * d[1] * b[1] + a[2] * d[2] * b[2];
  }
}

// res = R S R': T = R S, res_ij = sum_k T_ik R_jk
void phys_sym3_rot(double res[6], const double R[9], const double S[6]) {
  static const int I[6] = {0, 1, 2, 0, 0, 1}, J[6] = {0, 1, 2, 1, 2, 2};
  double T[9];
  for (int i = 0; i < 3; i++) phys_sym3_mul(T + 3 * i, S, R + 3 * i);  // row i of R S = S R_i (S sym)
  for (int e = 0; e < 6; e++) {
    const double* t = T + 3 * I[e];
    const double* r = R + 3 * J[e];
    res[e] = t[0] * r[0] + t[1] * r[1] + t[2] * r[2];
  }
}

//---------------------------------------------------------------------------------------------------------
// packed spatial inertia (m, h, I_O)

// res = I v = (I_O w + h x v, m v - h x w)
void phys_inert_mul(double res[6], const double inert[10], const double v[6]) {
  const double m = inert[0], *h = inert + 1, *I = inert + 4;
  double t[3];
  phys_sym3_mul(res, I, v);
  cross(t, h, v + 3);
  res[0] += t[0];
  res[1] += t[1];
  res[2] += t[2];
  cross(t, h, v);
  res[3] = m * v[3] - t[0];
  res[4] = m * v[4] - t[1];
  res[5] = m * v[5] - t[2];
}

// res = [[I_O, [h]x], [[h]x', m E]] with [h]x v = h x v
void phys_inert2mat(double res[36], const double inert[10]) {
  const double m = inert[0], hx = inert[1], hy = inert[2], hz = inert[3], *I = inert + 4;
  const double A[36] = {
      I[0], I[3], I[4], 0,   -hz, hy,   //
      I[3], I[1], I[5], hz,  0,   -hx,  //
      I[4], I[5], I[2], -hy, hx,  0,    //
      0,    hz,   -hy,  m,   0,   0,    //
      -hz,  0,    hx,   0,   m,   0,    //
      hy,   -hx,  0,    0,   0,   m};
  for (int i = 0; i < 36; i++) res[i] = A[i];
}

// h = m c, I_O = Ic + m (|c|^2 E - c c')
void phys_inert_from_com(double res[10], double mass, const double c[3], const double Ic[6]) {
  double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
  res[0] = mass;
  res[1] = mass * c[0];
  res[2] = mass * c[1];
  res[3] = mass * c[2];
  res[4] = Ic[0] + mass * (cc - c[0] * c[0]);
  res[5] = Ic[1] + mass * (cc - c[1] * c[1]);
  res[6] = Ic[2] + mass * (cc - c[2] * c[2]);
  res[7] = Ic[3] - mass * c[0] * c[1];
  res[8] = Ic[4] - mass * c[0] * c[2];
  res[9] = Ic[5] - mass * c[1] * c[2];
}

//---------------------------------------------------------------------------------------------------------
// reference changes and frame transforms

// v_new = (w, v + w x r)
void phys_motion_shift(double res[6], const double v[6], const double r[3]) {
  double t[3];
  cross(t, v, r);
  for (int i = 0; i < 3; i++) {
    res[i] = v[i];
    res[3 + i] = v[3 + i] + t[i];
  }
}

// n_new = n - r x f
void phys_force_shift(double res[6], const double f[6], const double r[3]) {
  double t[3];
  cross(t, r, f + 3);
  for (int i = 0; i < 3; i++) {
    res[i] = f[i] - t[i];
    res[3 + i] = f[3 + i];
  }
}

// res = R' a (3-D)
static inline void rotT(double res[3], const double R[9], const double a[3]) {
  res[0] = R[0] * a[0] + R[3] * a[1] + R[6] * a[2];
  res[1] = R[1] * a[0] + R[4] * a[1] + R[7] * a[2];
  res[2] = R[2] * a[0] + R[5] * a[1] + R[8] * a[2];
}

// res = R a (3-D)
static inline void rot(double res[3], const double R[9], const double a[3]) {
  res[0] = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
  res[1] = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
  res[2] = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
}

// local motion = (R'w, R'(v + w x p))
void phys_motion_to_local(double res[6], const double R[9], const double p[3], const double v[6]) {
  double s[6];
  phys_motion_shift(s, v, p);
  rotT(res, R, s);
  rotT(res + 3, R, s + 3);
}

// world motion = (R w_l, R v_l - (R w_l) x p)
void phys_motion_to_world(double res[6], const double R[9], const double p[3], const double v[6]) {
  double s[6], t[3];
  rot(s, R, v);
  rot(s + 3, R, v + 3);
  cross(t, s, p);
  for (int i = 0; i < 3; i++) {
    res[i] = s[i];
    res[3 + i] = s[3 + i] - t[i];
  }
}

// local force = (R'(n - p x f), R'f)
void phys_force_to_local(double res[6], const double R[9], const double p[3], const double f[6]) {
  double s[6];
  phys_force_shift(s, f, p);
  rotT(res, R, s);
  rotT(res + 3, R, s + 3);
}

// world force = (R n_l + p x R f_l, R f_l)
void phys_force_to_world(double res[6], const double R[9], const double p[3], const double f[6]) {
  double s[6], t[3];
  rot(s, R, f);
  rot(s + 3, R, f + 3);
  cross(t, p, s + 3);
  for (int i = 0; i < 3; i++) {
    res[i] = s[i] + t[i];
    res[3 + i] = s[3 + i];
  }
}

// rot.h - 3-D rotations and small 3x3 algebra: quaternions (w first), rotation matrices (row-major).
// Pure kernels: output first, inputs const; in-place use is allowed where noted.
#ifndef PHYS_ROT_H
#define PHYS_ROT_H

#include <math.h>

// small vector helpers, inline: they sit in the innermost loops of collision and constraint assembly
// res = a (3 doubles)
static inline void phys_copy3(double res[3], const double a[3]) {
  res[0] = a[0];
  res[1] = a[1];
  res[2] = a[2];
}

static inline double phys_dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline double phys_norm3(const double a[3]) { return sqrt(phys_dot3(a, a)); }

// r = a - b
static inline void phys_sub3(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] - b[0];
  r[1] = a[1] - b[1];
  r[2] = a[2] - b[2];
}

// r = a + s*b (r may alias a)
static inline void phys_addscl3(double r[3], const double a[3], const double b[3], double s) {
  r[0] = a[0] + s * b[0];
  r[1] = a[1] + s * b[1];
  r[2] = a[2] + s * b[2];
}

double phys_normalize3(double a[3]);                       // returns the old norm; leaves 0 vector alone

// res = a x b (res may alias neither)
static inline void phys_cross3(double res[3], const double a[3], const double b[3]) {
  res[0] = a[1] * b[2] - a[2] * b[1];
  res[1] = a[2] * b[0] - a[0] * b[2];
  res[2] = a[0] * b[1] - a[1] * b[0];
}

// quaternions, w first
void phys_quat_identity(double q[4]);
double phys_quat_normalize(double q[4]);                   // returns the old norm; 0 -> identity
void phys_quat_mul(double res[4], const double a[4], const double b[4]);  // res = a*b (may alias)
void phys_quat_conj(double res[4], const double q[4]);
void phys_quat_rotate(double res[3], const double q[4], const double v[3]);  // res = q v q* (may alias)
void phys_quat2mat(double res[9], const double q[4]);
void phys_mat2quat(double res[4], const double mat[9]);    // proper rotation matrix in, unit quat out
// q for a rotation by angle (rad) about axis (need not be unit; zero axis gives identity)
void phys_axisangle2quat(double res[4], const double axis[3], double angle);
// exponential map: res = exp(v/2) as a quaternion (rotation by |v| about v/|v|)
void phys_quat_exp(double res[4], const double v[3]);
// log map: res = rotation vector of q (|res| in [0, pi])
void phys_quat_log(double res[3], const double q[4]);
// quat <- quat * exp(omega_body*dt/2), normalized: integrate a body-frame angular velocity
void phys_quat_integrate(double quat[4], const double omega[3], double dt);
// quaternion that rotates the z axis onto vec (minimal rotation, as MJCF zaxis/fromto)
void phys_quat_zaxis(double res[4], const double vec[3]);
// MJCF euler angles in sequence seq ("xyz" intrinsic rotating axes, "XYZ" extrinsic fixed axes)
int phys_euler2quat(double res[4], const double euler[3], const char* seq);
// MJCF xyaxes: x axis and (y axis made orthogonal); returns 0 if degenerate
int phys_xyaxes2quat(double res[4], const double xy[6]);

// 3x3 matrices (row-major)
// res = M v (res may alias v)
static inline void phys_mat_vec3(double res[3], const double m[9], const double v[3]) {
  double r0 = m[0] * v[0] + m[1] * v[1] + m[2] * v[2], r1 = m[3] * v[0] + m[4] * v[1] + m[5] * v[2];
  double r2 = m[6] * v[0] + m[7] * v[1] + m[8] * v[2];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}

// res = M' v (res may alias v)
static inline void phys_matT_vec3(double res[3], const double m[9], const double v[3]) {
  double r0 = m[0] * v[0] + m[3] * v[1] + m[6] * v[2], r1 = m[1] * v[0] + m[4] * v[1] + m[7] * v[2];
  double r2 = m[2] * v[0] + m[5] * v[1] + m[8] * v[2];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}
void phys_mat_mul3(double res[9], const double a[9], const double b[9]);          // res = A B
// eigen decomposition of a symmetric matrix given as full 9: eigval descending, eigvec columns as
// a rotation quaternion (frame whose axes are the eigenvectors, right-handed)
void phys_eig3(double eigval[3], double quat[4], const double mat[9]);

// right Jacobian Jr(phi) of SO(3) and Exp(phi)' (3x3 row-major; Et may be NULL):
// Exp(phi + dphi) = Exp(phi) Exp(Jr(phi) dphi) to first order
void phys_so3_jacobians(double Jr[9], double Et[9], const double phi[3]);
// Ji <- Jr(phi)^-1, the inverse right Jacobian (Jl(phi)^-1 = Jr(-phi)^-1): Log(Exp(phi) Exp(d)) = phi + Ji d to
// first order
void phys_so3_jr_inv(double Ji[9], const double phi[3]);

// an angle difference wrapped into (-pi, pi] (x - 2 pi k for the integer k that puts it there): how a
// continuous joint (a hinge without limits) compares two angles
double phys_wrap_angle(double x);

#endif  // PHYS_ROT_H

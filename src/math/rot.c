// rot.c - quaternions (w first), rotation matrices (row-major) and 3-vectors.
#include "rot.h"

#include <math.h>
#include <string.h>

//---------------------------------------------------------------------------------------------------------
// vectors

// a <- a/|a|; returns |a|
double phys_normalize3(double a[3]) {
  double n = phys_norm3(a);
  if (n > 0) {
    a[0] /= n;
    a[1] /= n;
    a[2] /= n;
  }
  return n;
}

//---------------------------------------------------------------------------------------------------------
// quaternions

void phys_quat_identity(double q[4]) {
  q[0] = 1;
  q[1] = q[2] = q[3] = 0;
}

// q <- q/|q|; identity if |q| = 0
double phys_quat_normalize(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0) {
    q[0] /= n;
    q[1] /= n;
    q[2] /= n;
    q[3] /= n;
  } else {
    phys_quat_identity(q);
  }
  return n;
}

// res = a*b (Hamilton product)
void phys_quat_mul(double res[4], const double a[4], const double b[4]) {
  double r[4] = {
      a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
      a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
      a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
      a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  };
  memcpy(res, r, sizeof(r));
}

void phys_quat_conj(double res[4], const double q[4]) {
  res[0] = q[0];
  res[1] = -q[1];
  res[2] = -q[2];
  res[3] = -q[3];
}

// res = q v q*  =  v + 2w (u x v) + 2 u x (u x v),  u = vector part of q
void phys_quat_rotate(double res[3], const double q[4], const double v[3]) {
  const double* u = q + 1;
  double t[3], s[3];
  phys_cross3(t, u, v);
  t[0] *= 2;
  t[1] *= 2;
  t[2] *= 2;
  phys_cross3(s, u, t);
  double r[3] = {v[0] + q[0] * t[0] + s[0], v[1] + q[0] * t[1] + s[1], v[2] + q[0] * t[2] + s[2]};
  phys_copy3(res, r);
}

// rotation matrix of a unit quaternion
void phys_quat2mat(double res[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  res[0] = w * w + x * x - y * y - z * z;
  res[1] = 2 * (x * y - w * z);
  res[2] = 2 * (x * z + w * y);
  res[3] = 2 * (x * y + w * z);
  res[4] = w * w - x * x + y * y - z * z;
  res[5] = 2 * (y * z - w * x);
  res[6] = 2 * (x * z - w * y);
  res[7] = 2 * (y * z + w * x);
  res[8] = w * w - x * x - y * y + z * z;
}

// unit quaternion of a rotation matrix (Shepperd's method: pivot on the largest diagonal term)
void phys_mat2quat(double res[4], const double m[9]) {
  double tr = m[0] + m[4] + m[8];
  if (tr > 0) {
    double s = 2 * sqrt(1 + tr);
    res[0] = 0.25 * s;
    res[1] = (m[7] - m[5]) / s;
    res[2] = (m[2] - m[6]) / s;
    res[3] = (m[3] - m[1]) / s;
  } else if (m[0] > m[4] && m[0] > m[8]) {
    double s = 2 * sqrt(1 + m[0] - m[4] - m[8]);
    res[0] = (m[7] - m[5]) / s;
    res[1] = 0.25 * s;
    res[2] = (m[1] + m[3]) / s;
    res[3] = (m[2] + m[6]) / s;
  } else if (m[4] > m[8]) {
    double s = 2 * sqrt(1 + m[4] - m[0] - m[8]);
    res[0] = (m[2] - m[6]) / s;
    res[1] = (m[1] + m[3]) / s;
    res[2] = 0.25 * s;
    res[3] = (m[5] + m[7]) / s;
  } else {
    double s = 2 * sqrt(1 + m[8] - m[0] - m[4]);
    res[0] = (m[3] - m[1]) / s;
    res[1] = (m[2] + m[6]) / s;
    res[2] = (m[5] + m[7]) / s;
    res[3] = 0.25 * s;
  }
  if (res[0] < 0) {
    for (int i = 0; i < 4; i++) res[i] = -res[i];
  }
  phys_quat_normalize(res);
}

// q = (cos(a/2), sin(a/2) axis/|axis|)
void phys_axisangle2quat(double res[4], const double axis[3], double angle) {
  double a[3] = {axis[0], axis[1], axis[2]};
  if (phys_normalize3(a) == 0) {
    phys_quat_identity(res);
    return;
  }
  double s = sin(0.5 * angle);
  res[0] = cos(0.5 * angle);
  res[1] = s * a[0];
  res[2] = s * a[1];
  res[3] = s * a[2];
}

// exp(v/2): rotation by |v| about v/|v|; Taylor series near 0 keeps it smooth
void phys_quat_exp(double res[4], const double v[3]) {
  double th = phys_norm3(v);
  double c, s;  // s = sin(th/2)/th
  if (th < 1e-8) {
    c = 1 - th * th / 8;
    s = 0.5 - th * th / 48;
  } else {
    c = cos(0.5 * th);
    s = sin(0.5 * th) / th;
  }
  res[0] = c;
  res[1] = s * v[0];
  res[2] = s * v[1];
  res[3] = s * v[2];
}

// rotation vector of q: 2*atan2(|u|, w) u/|u|, with the shorter rotation (w >= 0)
void phys_quat_log(double res[3], const double q[4]) {
  double w = q[0], u[3] = {q[1], q[2], q[3]};
  if (w < 0) {
    w = -w;
    u[0] = -u[0];
    u[1] = -u[1];
    u[2] = -u[2];
  }
  double n = phys_norm3(u);
  double f = n < 1e-12 ? 2 / w : 2 * atan2(n, w) / n;   // limit 2/w as n -> 0
  res[0] = f * u[0];
  res[1] = f * u[1];
  res[2] = f * u[2];
}

// quat <- quat * exp(dt*omega/2), normalized
void phys_quat_integrate(double quat[4], const double omega[3], double dt) {
  double v[3] = {omega[0] * dt, omega[1] * dt, omega[2] * dt}, e[4];
  phys_quat_exp(e, v);
  phys_quat_mul(quat, quat, e);
  phys_quat_normalize(quat);
}

// minimal rotation taking +z to vec
void phys_quat_zaxis(double res[4], const double vec[3]) {
  double z[3] = {0, 0, 1}, v[3] = {vec[0], vec[1], vec[2]}, a[3];
  if (phys_normalize3(v) == 0) {
    phys_quat_identity(res);
    return;
  }
  phys_cross3(a, z, v);
  double s = phys_normalize3(a);
  if (s < 1e-14) {  // parallel or anti-parallel
    if (v[2] > 0) {
      phys_quat_identity(res);
    } else {
      res[0] = 0;
      res[1] = 1;
      res[2] = res[3] = 0;
    }
    return;
  }
  phys_axisangle2quat(res, a, atan2(s, v[2]));
}

// MJCF euler: lowercase letters rotate about the moving frame (q = q1 q2 q3), uppercase about fixed
// axes (q = q3 q2 q1); returns 0 for an invalid sequence
int phys_euler2quat(double res[4], const double euler[3], const char* seq) {
  if (!seq || strlen(seq) != 3) return 0;
  phys_quat_identity(res);
  for (int i = 0; i < 3; i++) {
    double axis[3] = {0, 0, 0}, r[4];
    char c = seq[i];
    int idx = (c == 'x' || c == 'X') ? 0 : (c == 'y' || c == 'Y') ? 1 : (c == 'z' || c == 'Z') ? 2 : -1;
    if (idx < 0) return 0;
    axis[idx] = 1;
    phys_axisangle2quat(r, axis, euler[i]);
    if (c >= 'a')
      phys_quat_mul(res, res, r);
    else
      phys_quat_mul(res, r, res);
  }
  return 1;
}

// frame with x along xy[0:3] and y along the part of xy[3:6] orthogonal to x
int phys_xyaxes2quat(double res[4], const double xy[6]) {
  double x[3] = {xy[0], xy[1], xy[2]}, y[3] = {xy[3], xy[4], xy[5]}, z[3];
  if (phys_normalize3(x) < 1e-14) return 0;
  double d = phys_dot3(x, y);
  for (int i = 0; i < 3; i++) y[i] -= d * x[i];
  if (phys_normalize3(y) < 1e-14) return 0;
  phys_cross3(z, x, y);
  double mat[9] = {x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]};
  phys_mat2quat(res, mat);
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// 3x3 matrices

void phys_mat_mul3(double res[9], const double a[9], const double b[9]) {
  double r[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  memcpy(res, r, sizeof(r));
}

// symmetric eigendecomposition by cyclic Jacobi rotations: A = V diag(eigval) V', V a rotation;
// eigenvalues sorted descending (MuJoCo's body_inertia order)
void phys_eig3(double eigval[3], double quat[4], const double mat[9]) {
  double a[9], v[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memcpy(a, mat, sizeof(a));
  for (int sweep = 0; sweep < 50; sweep++) {
    double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    double scale = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (off <= 1e-30 * scale || off == 0) break;
    for (int p = 0; p < 2; p++) {
      for (int q = p + 1; q < 3; q++) {
        double apq = a[3 * p + q];
        if (apq == 0) continue;
        // rotation angle that zeroes a[p][q]: tan(2t) = 2 apq / (aqq - app)
        double th = 0.5 * (a[3 * q + q] - a[3 * p + p]) / apq;
        double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        // A <- J' A J, V <- V J with J the Givens rotation in the (p, q) plane
        for (int k = 0; k < 3; k++) {
          double akp = a[3 * k + p], akq = a[3 * k + q];
          a[3 * k + p] = c * akp - s * akq;
          a[3 * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) {
          double apk = a[3 * p + k], aqk = a[3 * q + k];
          a[3 * p + k] = c * apk - s * aqk;
          a[3 * q + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; k++) {
          double vkp = v[3 * k + p], vkq = v[3 * k + q];
          v[3 * k + p] = c * vkp - s * vkq;
          v[3 * k + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  // sort descending, permuting columns of V
  int idx[3] = {0, 1, 2};
  double d[3] = {a[0], a[4], a[8]};
  for (int i = 0; i < 2; i++)
    for (int j = i + 1; j < 3; j++)
      if (d[idx[j]] > d[idx[i]]) {
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
      }
  double r[9];
  for (int j = 0; j < 3; j++) {
    eigval[j] = d[idx[j]];
    for (int k = 0; k < 3; k++) r[3 * k + j] = v[3 * k + idx[j]];
  }
  // right-handed: third column = first x second
  double c0[3] = {r[0], r[3], r[6]}, c1[3] = {r[1], r[4], r[7]}, c2[3];
  phys_cross3(c2, c0, c1);
  r[2] = c2[0];
  r[5] = c2[1];
  r[8] = c2[2];
  phys_mat2quat(quat, r);
}

//---------------------------------------------------------------------------------------------------------
// derivatives of the exponential map

// right Jacobian of SO(3) and the transposed rotation, t = |phi|:
//   Jr(phi) = E - (1 - cos t)/t^2 [phi] + (t - sin t)/t^3 [phi]^2   (maps d phi to the body-frame change of Exp)
//   Exp(phi)' = E - sin t/t [phi] + (1 - cos t)/t^2 [phi]^2
// with Taylor series below t = 1e-4; Et may be NULL
void phys_so3_jacobians(double Jr[9], double Et[9], const double phi[3]) {
  double t2 = phys_dot3(phi, phi), t = sqrt(t2), a, b, s;   // a = (1-cos)/t^2, b = (t-sin)/t^3, s = sin/t
  if (t < 1e-4) {
    a = 0.5 - t2 / 24;
    b = 1.0 / 6 - t2 / 120;
    s = 1 - t2 / 6;
  } else {
    a = (1 - cos(t)) / t2;
    b = (t - sin(t)) / (t2 * t);
    s = sin(t) / t;
  }
  // [phi] and [phi]^2 = phi phi' - t^2 E
  const double P[9] = {0, -phi[2], phi[1], phi[2], 0, -phi[0], -phi[1], phi[0], 0};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double P2 = phi[r] * phi[c] - (r == c) * t2;
      Jr[3 * r + c] = (r == c) - a * P[3 * r + c] + b * P2;
      if (Et) Et[3 * r + c] = (r == c) - s * P[3 * r + c] + a * P2;
    }
}

void phys_so3_jr_inv(double Ji[9], const double phi[3]) {
  double M[9];
  phys_so3_jacobians(M, NULL, phi);
  // the inverse by the adjugate
  double c[9] = {M[4] * M[8] - M[5] * M[7], M[2] * M[7] - M[1] * M[8], M[1] * M[5] - M[2] * M[4],
                 M[5] * M[6] - M[3] * M[8], M[0] * M[8] - M[2] * M[6], M[2] * M[3] - M[0] * M[5],
                 M[3] * M[7] - M[4] * M[6], M[1] * M[6] - M[0] * M[7], M[0] * M[4] - M[1] * M[3]};
  double det = M[0] * c[0] + M[1] * c[3] + M[2] * c[6];
  for (int i = 0; i < 9; i++) Ji[i] = c[i] / det;
}

double phys_wrap_angle(double x) {
  const double pi = 3.14159265358979323846, two_pi = 2 * pi;
  if (x > -pi && x <= pi) return x;   // the common case, exactly
  double r = fmod(x + pi, two_pi);     // in (-2 pi, 2 pi), the sign of x + pi
  if (r <= 0) r += two_pi;             // in (0, 2 pi]
  return r - pi;
}

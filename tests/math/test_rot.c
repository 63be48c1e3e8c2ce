// test_rot.c - quaternion and rotation identities, each against an independent construction.
#include <math.h>
#include <string.h>

#include "rot.h"
#include "test.h"

static double urand(unsigned* s) {
  *s = *s * 1664525u + 1013904223u;
  return (*s >> 8) / 16777216.0 * 2 - 1;
}

static void rand_quat(double q[4], unsigned* s) {
  for (int i = 0; i < 4; i++) q[i] = urand(s);
  phys_quat_normalize(q);
}

// rotation matrix about a coordinate axis, built from sin/cos
static void axis_mat(double R[9], int axis, double a) {
  double c = cos(a), s = sin(a);
  memset(R, 0, 9 * sizeof(double));
  int i = (axis + 1) % 3, j = (axis + 2) % 3;
  R[4 * axis] = 1;
  R[3 * i + i] = c;
  R[3 * i + j] = -s;
  R[3 * j + i] = s;
  R[3 * j + j] = c;
}

static double mat_diff(const double A[9], const double B[9]) {
  double d = 0;
  for (int i = 0; i < 9; i++) d = fmax(d, fabs(A[i] - B[i]));
  return d;
}

// phys_wrap_angle: the difference of a continuous joint's angles in (-pi, pi]; exact inside, pi at both ends
static void test_wrap_angle(void) {
  const double pi = 3.14159265358979323846;
  CHECK(phys_wrap_angle(0.5) == 0.5 && phys_wrap_angle(-0.5) == -0.5);
  CHECK(phys_wrap_angle(pi) == pi);
  CHECK(phys_wrap_angle(-pi) == pi);
  CHECK_NEAR(phys_wrap_angle(3 * pi), pi, 1e-15);
  CHECK(phys_wrap_angle(3 * pi) > 0);
  CHECK_NEAR(phys_wrap_angle(2 * pi + 0.1), 0.1, 1e-15);
  CHECK_NEAR(phys_wrap_angle(-4 * pi - 0.1), -0.1, 1e-14);
  CHECK_NEAR(phys_wrap_angle(pi + 0.2), -pi + 0.2, 1e-15);
  CHECK_NEAR(phys_wrap_angle(-pi - 0.2), pi - 0.2, 1e-15);
  CHECK_NEAR(phys_wrap_angle(1000.0), 1000.0 - 159 * 2 * pi, 1e-12);
  for (int k = -50; k <= 50; k++) {
    double x = 0.37 * k, w = phys_wrap_angle(x);
    CHECK(w > -pi && w <= pi);
    CHECK_NEAR(remainder(x - w, 2 * pi), 0, 1e-12);
  }
}

int main(void) {
  test_wrap_angle();
  unsigned seed = 7;
  for (int t = 0; t < 100; t++) {
    double q[4], p[4], v[3] = {urand(&seed), urand(&seed), urand(&seed)};
    rand_quat(q, &seed);
    rand_quat(p, &seed);
    // rotate by quaternion == multiply by its matrix
    double R[9], a[3], b[3];
    phys_quat2mat(R, q);
    phys_quat_rotate(a, q, v);
    phys_mat_vec3(b, R, v);
    for (int k = 0; k < 3; k++) CHECK_NEAR(a[k], b[k], 1e-14);
    // R orthonormal: R' R v = v
    phys_matT_vec3(a, R, b);
    for (int k = 0; k < 3; k++) CHECK_NEAR(a[k], v[k], 1e-14);
    // composition: R(p q) = R(p) R(q)
    double pq[4], Rp[9], Rpq[9], RpRq[9];
    phys_quat_mul(pq, p, q);
    phys_quat2mat(Rp, p);
    phys_quat2mat(Rpq, pq);
    phys_mat_mul3(RpRq, Rp, R);
    CHECK(mat_diff(Rpq, RpRq) < 1e-14);
    // mat2quat inverts quat2mat up to sign
    double q2[4];
    phys_mat2quat(q2, R);
    double sgn = q2[0] * q[0] + q2[1] * q[1] + q2[2] * q[2] + q2[3] * q[3] > 0 ? 1 : -1;
    for (int k = 0; k < 4; k++) CHECK_NEAR(q2[k], sgn * q[k], 1e-14);
    // exp(log(q)) == q up to sign
    double w[3], e[4];
    phys_quat_log(w, q);
    CHECK(phys_norm3(w) <= M_PI + 1e-12);
    phys_quat_exp(e, w);
    sgn = e[0] * q[0] + e[1] * q[1] + e[2] * q[2] + e[3] * q[3] > 0 ? 1 : -1;
    for (int k = 0; k < 4; k++) CHECK_NEAR(e[k], sgn * q[k], 1e-13);
    // euler "xyz" (moving axes) = Rx Ry Rz ; "XYZ" (fixed axes) = Rz Ry Rx
    double eu[3] = {urand(&seed) * 3, urand(&seed) * 3, urand(&seed) * 3}, Rx[9], Ry[9], Rz[9], T[9], E[9];
    axis_mat(Rx, 0, eu[0]);
    axis_mat(Ry, 1, eu[1]);
    axis_mat(Rz, 2, eu[2]);
    phys_euler2quat(q2, eu, "xyz");
    phys_quat2mat(E, q2);
    phys_mat_mul3(T, Rx, Ry);
    phys_mat_mul3(T, T, Rz);
    CHECK(mat_diff(E, T) < 1e-14);
    phys_euler2quat(q2, eu, "XYZ");
    phys_quat2mat(E, q2);
    phys_mat_mul3(T, Rz, Ry);
    phys_mat_mul3(T, T, Rx);
    CHECK(mat_diff(E, T) < 1e-14);
    // zaxis: the rotated z axis is the requested direction
    double z[3] = {0, 0, 1}, dir[3];
    phys_quat_zaxis(q2, v);
    phys_quat_rotate(dir, q2, z);
    double vn[3] = {v[0], v[1], v[2]};
    phys_normalize3(vn);
    for (int k = 0; k < 3; k++) CHECK_NEAR(dir[k], vn[k], 1e-14);
    // eig3: A = V diag(l) V' with descending l
    double S[9], l[3], qe[4], V[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j <= i; j++) S[3 * i + j] = S[3 * j + i] = urand(&seed);
    phys_eig3(l, qe, S);
    phys_quat2mat(V, qe);
    CHECK(l[0] >= l[1] && l[1] >= l[2]);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += V[3 * i + k] * l[k] * V[3 * j + k];
        CHECK_NEAR(s, S[3 * i + j], 1e-13);
      }
  }
  // SO(3) Jacobians: Exp(phi + h e_k) ~ Exp(phi) Exp(h Jr e_k): log(Exp(phi)^-1 Exp(phi + h e_k))/h -> Jr e_k
  // (central differences, h = 1e-6: error O(h^2) ~ 1e-12 plus rounding 1e-16/h); Et = Exp(phi)'; small
  // angles exercise the Taylor branch
  for (int t = 0; t < 40; t++) {
    double scale = t < 10 ? 1e-5 : 2.0, phi[3], Jr[9], Et[9], R[9], qe[4], qc[4];
    for (int k = 0; k < 3; k++) phi[k] = scale * urand(&seed);
    phys_so3_jacobians(Jr, Et, phi);
    phys_quat_exp(qe, phi);
    phys_quat2mat(R, qe);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) CHECK_NEAR(Et[3 * i + j], R[3 * j + i], 1e-12);
    phys_quat_conj(qc, qe);
    for (int k = 0; k < 3; k++) {
      double h = 1e-6, pp[3] = {phi[0], phi[1], phi[2]}, pm[3] = {phi[0], phi[1], phi[2]}, a[4], b[4], da[4], db[4];
      double la[3], lb[3];
      pp[k] += h;
      pm[k] -= h;
      phys_quat_exp(a, pp);
      phys_quat_exp(b, pm);
      phys_quat_mul(da, qc, a);
      phys_quat_mul(db, qc, b);
      phys_quat_log(la, da);
      phys_quat_log(lb, db);
      for (int r = 0; r < 3; r++) CHECK_NEAR((la[r] - lb[r]) / (2 * h), Jr[3 * r + k], 1e-8);
    }
  }
  double Jr[9];
  phys_so3_jacobians(Jr, NULL, (double[3]){0, 0, 0});
  for (int i = 0; i < 9; i++) CHECK(Jr[i] == (i % 4 == 0));

  // quat_integrate: constant body rate w for time T rotates by |w|T about w
  double q[4] = {1, 0, 0, 0}, w[3] = {0.3, -0.2, 0.5}, ref[4];
  for (int i = 0; i < 1000; i++) phys_quat_integrate(q, w, 0.001);
  phys_axisangle2quat(ref, w, phys_norm3(w) * 1.0);
  for (int k = 0; k < 4; k++) CHECK_NEAR(q[k], ref[k], 1e-13);
  // xyaxes: x given, y orthogonalised
  double xy[6] = {0, 1, 0, 1, 1, 0}, R[9];
  CHECK(phys_xyaxes2quat(q, xy));
  phys_quat2mat(R, q);
  double expect[9] = {0, 1, 0, 1, 0, 0, 0, 0, -1};
  CHECK(mat_diff(R, expect) < 1e-14);
  double bad[6] = {0, 0, 0, 1, 0, 0};
  CHECK(!phys_xyaxes2quat(q, bad));
  CHECK(!phys_euler2quat(q, w, "xyw"));
  return test_done();
}

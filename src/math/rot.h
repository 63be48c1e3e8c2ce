// rot.h - 3-D rotations and small 3x3 algebra: quaternions (w first), rotation matrices (row-major).
// Pure kernels: output first, inputs const; in-place use is allowed where noted.
#ifndef PHYS_ROT_H
#define PHYS_ROT_H

// res = a (3 doubles); small vector helpers
void phys_copy3(double res[3], const double a[3]);
double phys_dot3(const double a[3], const double b[3]);
double phys_norm3(const double a[3]);
double phys_normalize3(double a[3]);                       // returns the old norm; leaves 0 vector alone
void phys_cross3(double res[3], const double a[3], const double b[3]);    // res may alias neither

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
void phys_mat_vec3(double res[3], const double mat[9], const double v[3]);       // res = M v
void phys_matT_vec3(double res[3], const double mat[9], const double v[3]);      // res = M' v
void phys_mat_mul3(double res[9], const double a[9], const double b[9]);          // res = A B
// eigen decomposition of a symmetric matrix given as full 9: eigval descending, eigvec columns as
// a rotation quaternion (frame whose axes are the eigenvectors, right-handed)
void phys_eig3(double eigval[3], double quat[4], const double mat[9]);

#endif  // PHYS_ROT_H

// spatial.h - 6-D spatial algebra in world-aligned coordinates about a common reference point.
//
// Motion vectors are (angular 3, linear 3): v = (w, v_O), v_O the velocity of the point at the reference.
// Force vectors are (torque 3, force 3): f = (n_O, f), n_O the torque about the reference.
// A spatial inertia is packed in 10 numbers: (m, h = m*c (3), I_O (6: xx yy zz xy xz yz)), c the centre
// of mass and I_O the rotational inertia about the reference point (not about the centre of mass).
// Pure kernels: output first, fixed sizes, const inputs; outputs may not alias inputs unless noted.
#ifndef PHYS_SPATIAL_H
#define PHYS_SPATIAL_H

// a . b for 6-vectors (motion . force gives power)
static inline double phys_dot6(const double a[6], const double b[6]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

// res = v x m (motion cross motion): (w x mw, w x mv + v x mw)
void phys_cross_motion(double res[6], const double v[6], const double m[6]);
// res = v x* f (motion cross force): (w x n + v x f, w x f)
void phys_cross_force(double res[6], const double v[6], const double f[6]);
// res = I v for a packed inertia: (I_O w + h x v, m v - h x w)
void phys_inert_mul(double res[6], const double inert[10], const double v[6]);
// res = 6x6 matrix of a packed inertia, row-major: [[I_O, [h]x], [[h]x', m E]]
void phys_inert2mat(double res[36], const double inert[10]);
// res = packed inertia of a body of mass m, centre c, rotational inertia Ic (xx yy zz xy xz yz) about c:
// h = m c, I_O = Ic + m (|c|^2 E - c c')
void phys_inert_from_com(double res[10], double mass, const double c[3], const double Ic[6]);
// res = I3 w for a symmetric 3x3 packed as (xx yy zz xy xz yz)
void phys_sym3_mul(double res[3], const double I[6], const double w[3]);
// res = R diag(d) R' packed (xx yy zz xy xz yz), R row-major
void phys_sym3_rot_diag(double res[6], const double R[9], const double d[3]);
// res = R S R' packed, S packed
void phys_sym3_rot(double res[6], const double R[9], const double S[6]);

// change of reference point (same orientation), r = new point - old point:
// motion: v_new = (w, v + w x r); force: n_new = n - r x f. res may alias the input.
void phys_motion_shift(double res[6], const double v[6], const double r[3]);
void phys_force_shift(double res[6], const double f[6], const double r[3]);
// coordinates in a frame with rotation R (columns: frame axes in world) and origin p, from world-aligned
// vectors about the world origin: motion (R'w, R'(v + w x p)); and back to the world
void phys_motion_to_local(double res[6], const double R[9], const double p[3], const double v[6]);
void phys_motion_to_world(double res[6], const double R[9], const double p[3], const double v[6]);
// force: local (R'f... ) n_p = R'(n - p x f), f_l = R'f; and back: n = R n_l + p x R f_l
void phys_force_to_local(double res[6], const double R[9], const double p[3], const double f[6]);
void phys_force_to_world(double res[6], const double R[9], const double p[3], const double f[6]);

#endif  // PHYS_SPATIAL_H

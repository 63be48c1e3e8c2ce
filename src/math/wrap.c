// wrap.c - a tendon's path around a sphere or a cylinder (wrap.h).
#include "wrap.h"

#include <math.h>
#include <stddef.h>

#include "rot.h"

#define WRAP_EPS 1e-15   // smaller lengths and determinants count as zero (MuJoCo's mjMINVAL)
#define WRAP_PI 3.14159265358979323846

// 1 if the plane segments a0-a1 and b0-b1 cross (parallel ones never do)
static int segments_cross(const double a0[2], const double a1[2], const double b0[2], const double b1[2]) {
  double ea[2] = {a1[0] - a0[0], a1[1] - a0[1]}, eb[2] = {b1[0] - b0[0], b1[1] - b0[1]};
  double det = ea[1] * eb[0] - ea[0] * eb[1];
  if (fabs(det) < WRAP_EPS) return 0;
  double w[2] = {b0[0] - a0[0], b0[1] - a0[1]};
  double s = (w[1] * eb[0] - w[0] * eb[1]) / det;   // a0 + s ea = b0 + u eb
  double u = (ea[0] * w[1] - ea[1] * w[0]) / det;
  return s >= 0 && s <= 1 && u >= 0 && u <= 1;
}

// arc length of radius r from tangent point c0 to c1 going the way of solution `way` (0 or 1): the angle
// between them, or 2 pi minus it when the turn from c0 to c1 is against that way
static double arc_length(const double c0[2], const double c1[2], int way, double r) {
  double n0 = sqrt(c0[0] * c0[0] + c0[1] * c0[1]), n1 = sqrt(c1[0] * c1[0] + c1[1] * c1[1]);
  double cosang = (c0[0] * c1[0] + c0[1] * c1[1]) / (n0 * n1);
  double ang = acos(cosang > 1 ? 1 : (cosang < -1 ? -1 : cosang));
  double turn = c0[1] * c1[0] - c0[0] * c1[1];
  if ((turn > 0 && way) || (turn < 0 && !way)) ang = 2 * WRAP_PI - ang;
  return r * ang;
}

// the plane problem: points d0, d1, circle of radius r at the origin, side point sd (or NULL); the tangent
// points into c (c0 = c[0..1], c1 = c[2..3]) and the arc length, or -1 for a straight path
static double wrap_circle(double c[4], const double d0[2], const double d1[2], const double* sd, double r) {
  double l0 = d0[0] * d0[0] + d0[1] * d0[1], l1 = d1[0] * d1[0] + d1[1] * d1[1], r2 = r * r;
  if (l0 < r2 || l1 < r2 || r < WRAP_EPS) return -1;
  double e[2] = {d1[0] - d0[0], d1[1] - d0[1]}, ee = e[0] * e[0] + e[1] * e[1];
  if (ee < WRAP_EPS) return -1;
  // the segment's point nearest the centre: outside the circle (and on the side point's side) = no contact
  double a = -(e[0] * d0[0] + e[1] * d0[1]) / ee;
  a = a < 0 ? 0 : (a > 1 ? 1 : a);
  double n[2] = {d0[0] + a * e[0], d0[1] + a * e[1]};
  if (n[0] * n[0] + n[1] * n[1] > r2 && (!sd || sd[0] * n[0] + sd[1] * n[1] >= 0)) return -1;
  double sol[2][4], good[2];
  double s0 = sqrt(l0 - r2), s1 = sqrt(l1 - r2);
  for (int i = 0; i < 2; i++) {
    double sg = i == 0 ? 1 : -1;
    // tangent point from d: (r^2 d +- r sqrt(|d|^2 - r^2) perp(d)) / |d|^2, opposite turns at the two ends
    double* t = sol[i];
    t[0] = (d0[0] * r2 + sg * r * d0[1] * s0) / l0;
    t[1] = (d0[1] * r2 - sg * r * d0[0] * s0) / l0;
    t[2] = (d1[0] * r2 - sg * r * d1[1] * s1) / l1;
    t[3] = (d1[1] * r2 + sg * r * d1[0] * s1) / l1;
    if (sd) {
      double m[2] = {t[0] + t[2], t[1] + t[3]}, nm = sqrt(m[0] * m[0] + m[1] * m[1]);
      good[i] = nm > WRAP_EPS ? (m[0] * sd[0] + m[1] * sd[1]) / nm : 0;
    } else {
      double dt[2] = {t[0] - t[2], t[1] - t[3]};
      good[i] = -(dt[0] * dt[0] + dt[1] * dt[1]);
    }
    if (segments_cross(d0, t, t + 2, d1)) good[i] = -10000;
  }
  int w = good[0] > good[1] ? 0 : 1;
  for (int k = 0; k < 4; k++) c[k] = sol[w][k];
  return arc_length(c, c + 2, w, r);
}

double phys_wrap(double t[6], const double x0[3], const double x1[3], const double pos[3], const double mat[9],
                 double r, int cylinder, const double* side) {
  double p[2][3], s[3], ax[2][3], tmp[3];
  // the points (and the side point) in the geom frame: mat' (x - pos)
  for (int i = 0; i < 3; i++) {
    p[0][i] = (x0[0] - pos[0]) * mat[i] + (x0[1] - pos[1]) * mat[3 + i] + (x0[2] - pos[2]) * mat[6 + i];
    p[1][i] = (x1[0] - pos[0]) * mat[i] + (x1[1] - pos[1]) * mat[3 + i] + (x1[2] - pos[2]) * mat[6 + i];
    if (side) s[i] = (side[0] - pos[0]) * mat[i] + (side[1] - pos[1]) * mat[3 + i] + (side[2] - pos[2]) * mat[6 + i];
  }
  if (phys_norm3(p[0]) < WRAP_EPS || phys_norm3(p[1]) < WRAP_EPS) return -1;
  // the plane's axes: a cylinder's x and y; a sphere's first point's direction and the normal cross it
  if (cylinder) {
    ax[0][0] = 1, ax[0][1] = 0, ax[0][2] = 0;
    ax[1][0] = 0, ax[1][1] = 1, ax[1][2] = 0;
  } else {
    phys_copy3(ax[0], p[0]);
    phys_normalize3(ax[0]);
    phys_cross3(tmp, p[0], p[1]);
    if (phys_normalize3(tmp) < WRAP_EPS) {
      // the points are in line with the centre: the plane through the side point, else any plane
      double any[3] = {fabs(ax[0][0]) < 0.9 ? 1 : 0, fabs(ax[0][0]) < 0.9 ? 0 : 1, 0};
      phys_cross3(tmp, ax[0], side ? s : any);
      if (phys_normalize3(tmp) < WRAP_EPS) {
        phys_cross3(tmp, ax[0], any);
        phys_normalize3(tmp);
      }
    }
    phys_cross3(ax[1], tmp, ax[0]);
    phys_normalize3(ax[1]);
  }
  double d0[2] = {phys_dot3(p[0], ax[0]), phys_dot3(p[0], ax[1])};
  double d1[2] = {phys_dot3(p[1], ax[0]), phys_dot3(p[1], ax[1])};
  double sd[2] = {side ? phys_dot3(s, ax[0]) : 0, side ? phys_dot3(s, ax[1]) : 0}, c[4];
  double len = wrap_circle(c, d0, d1, side ? sd : NULL, r);
  if (len < 0) return -1;
  // the tangent points in the geom frame: a cylinder's heights along the unrolled path
  double z[2] = {0, 0};
  if (cylinder) {
    double a0 = hypot(d0[0] - c[0], d0[1] - c[1]), a1 = hypot(d1[0] - c[2], d1[1] - c[3]);
    double total = a0 + len + a1;
    z[0] = p[0][2] + (p[1][2] - p[0][2]) * a0 / total;
    z[1] = p[0][2] + (p[1][2] - p[0][2]) * (a0 + len) / total;
    len = sqrt(len * len + (z[1] - z[0]) * (z[1] - z[0]));
  }
  for (int k = 0; k < 2; k++) {
    double loc[3];
    for (int i = 0; i < 3; i++) loc[i] = ax[0][i] * c[2 * k] + ax[1][i] * c[2 * k + 1];
    if (cylinder) loc[2] = z[k];
    for (int i = 0; i < 3; i++) t[3 * k + i] = pos[i] + mat[3 * i] * loc[0] + mat[3 * i + 1] * loc[1] + mat[3 * i + 2] * loc[2];
  }
  return len;
}

// wrap_core.h - phys_wrap's geometry (wrap.h) in the geom's frame, on a number type the includer defines:
// wrap.c on double (the primal), wrap_deriv.c on double complex (its derivatives by forward mode, one complex
// step per input direction). The includer defines
//   WREAL          the number type
//   W_SQRT, W_ACOS  its square root and arc cosine
//   W_HYPOT(a, b)  sqrt(a^2 + b^2) (libm's hypot on double, for the primal's bits)
//   W_RE(x)        the real part: every comparison (which way, straight or wrapped) reads it, so a complex
//                  evaluation takes the primal's branches
#include <math.h>
#include <stddef.h>

#define WRAP_EPS 1e-15   // smaller lengths and determinants count as zero (MuJoCo's mjMINVAL)
#define WRAP_PI 3.14159265358979323846

static WREAL w_dot3(const WREAL a[3], const WREAL b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static WREAL w_norm3(const WREAL a[3]) { return W_SQRT(w_dot3(a, a)); }
// a /= |a| (rot.h's phys_normalize3: a zero vector left alone); returns |a|
static WREAL w_normalize3(WREAL a[3]) {
  WREAL n = w_norm3(a);
  if (W_RE(n) > 0) a[0] /= n, a[1] /= n, a[2] /= n;
  return n;
}
static void w_cross3(WREAL r[3], const WREAL a[3], const WREAL b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

// 1 if the plane segments a0-a1 and b0-b1 cross (parallel ones never do)
static int segments_cross(const WREAL a0[2], const WREAL a1[2], const WREAL b0[2], const WREAL b1[2]) {
  WREAL ea[2] = {a1[0] - a0[0], a1[1] - a0[1]}, eb[2] = {b1[0] - b0[0], b1[1] - b0[1]};
  WREAL det = ea[1] * eb[0] - ea[0] * eb[1];
  if (fabs(W_RE(det)) < WRAP_EPS) return 0;
  WREAL w[2] = {b0[0] - a0[0], b0[1] - a0[1]};
  double s = W_RE((w[1] * eb[0] - w[0] * eb[1]) / det);   // a0 + s ea = b0 + u eb
  double u = W_RE((ea[0] * w[1] - ea[1] * w[0]) / det);
  return s >= 0 && s <= 1 && u >= 0 && u <= 1;
}

// arc length of radius r from tangent point c0 to c1 going the way of solution `way` (0 or 1): the angle
// between them, or 2 pi minus it when the turn from c0 to c1 is against that way
static WREAL arc_length(const WREAL c0[2], const WREAL c1[2], int way, double r) {
  WREAL n0 = W_SQRT(c0[0] * c0[0] + c0[1] * c0[1]), n1 = W_SQRT(c1[0] * c1[0] + c1[1] * c1[1]);
  WREAL cosang = (c0[0] * c1[0] + c0[1] * c1[1]) / (n0 * n1);
  WREAL ang = W_ACOS(W_RE(cosang) > 1 ? 1 : (W_RE(cosang) < -1 ? -1 : cosang));
  double turn = W_RE(c0[1] * c1[0] - c0[0] * c1[1]);
  if ((turn > 0 && way) || (turn < 0 && !way)) ang = 2 * WRAP_PI - ang;
  return r * ang;
}

// the plane problem: points d0, d1, circle of radius r at the origin, side point sd (or NULL); the tangent
// points into c (c0 = c[0..1], c1 = c[2..3]) and the arc length, or -1 for a straight path
static WREAL wrap_circle(WREAL c[4], const WREAL d0[2], const WREAL d1[2], const WREAL* sd, double r) {
  WREAL l0 = d0[0] * d0[0] + d0[1] * d0[1], l1 = d1[0] * d1[0] + d1[1] * d1[1];
  double r2 = r * r;
  if (W_RE(l0) < r2 || W_RE(l1) < r2 || r < WRAP_EPS) return -1;
  WREAL e[2] = {d1[0] - d0[0], d1[1] - d0[1]}, ee = e[0] * e[0] + e[1] * e[1];
  if (W_RE(ee) < WRAP_EPS) return -1;
  // the segment's point nearest the centre: outside the circle (and on the side point's side) = no contact
  WREAL a = -(e[0] * d0[0] + e[1] * d0[1]) / ee;
  a = W_RE(a) < 0 ? 0 : (W_RE(a) > 1 ? 1 : a);
  WREAL n[2] = {d0[0] + a * e[0], d0[1] + a * e[1]};
  if (W_RE(n[0] * n[0] + n[1] * n[1]) > r2 && (!sd || W_RE(sd[0] * n[0] + sd[1] * n[1]) >= 0)) return -1;
  WREAL sol[2][4];
  double good[2];
  WREAL s0 = W_SQRT(l0 - r2), s1 = W_SQRT(l1 - r2);
  for (int i = 0; i < 2; i++) {
    double sg = i == 0 ? 1 : -1;
    // tangent point from d: (r^2 d +- r sqrt(|d|^2 - r^2) perp(d)) / |d|^2, opposite turns at the two ends
    WREAL* t = sol[i];
    t[0] = (d0[0] * r2 + sg * r * d0[1] * s0) / l0;
    t[1] = (d0[1] * r2 - sg * r * d0[0] * s0) / l0;
    t[2] = (d1[0] * r2 - sg * r * d1[1] * s1) / l1;
    t[3] = (d1[1] * r2 + sg * r * d1[0] * s1) / l1;
    if (sd) {
      WREAL m[2] = {t[0] + t[2], t[1] + t[3]}, nm = W_SQRT(m[0] * m[0] + m[1] * m[1]);
      good[i] = W_RE(nm) > WRAP_EPS ? W_RE((m[0] * sd[0] + m[1] * sd[1]) / nm) : 0;
    } else {
      WREAL dt[2] = {t[0] - t[2], t[1] - t[3]};
      good[i] = -W_RE(dt[0] * dt[0] + dt[1] * dt[1]);
    }
    if (segments_cross(d0, t, t + 2, d1)) good[i] = -10000;
  }
  int w = good[0] > good[1] ? 0 : 1;
  for (int k = 0; k < 4; k++) c[k] = sol[w][k];
  return arc_length(c, c + 2, w, r);
}

// phys_wrap in the geom frame: points p[0], p[1], side point s (or NULL) relative to the centre along the
// geom's axes; the tangent points (same frame) into loc[0..5] and the curved part's length, or -1 (straight)
static WREAL wrap_local(WREAL loc[6], WREAL p[2][3], const WREAL* s, double r, int cylinder) {
  WREAL ax[2][3], tmp[3];
  if (W_RE(w_norm3(p[0])) < WRAP_EPS || W_RE(w_norm3(p[1])) < WRAP_EPS) return -1;
  // the plane's axes: a cylinder's x and y; a sphere's first point's direction and the normal cross it
  if (cylinder) {
    ax[0][0] = 1, ax[0][1] = 0, ax[0][2] = 0;
    ax[1][0] = 0, ax[1][1] = 1, ax[1][2] = 0;
  } else {
    for (int i = 0; i < 3; i++) ax[0][i] = p[0][i];
    w_normalize3(ax[0]);
    w_cross3(tmp, p[0], p[1]);
    if (W_RE(w_normalize3(tmp)) < WRAP_EPS) {
      // the points are in line with the centre: the plane through the side point, else any plane
      int big = fabs(W_RE(ax[0][0])) >= 0.9;
      WREAL any[3] = {big ? 0 : 1, big ? 1 : 0, 0};
      w_cross3(tmp, ax[0], s ? s : any);
      if (W_RE(w_normalize3(tmp)) < WRAP_EPS) {
        w_cross3(tmp, ax[0], any);
        w_normalize3(tmp);
      }
    }
    w_cross3(ax[1], tmp, ax[0]);
    w_normalize3(ax[1]);
  }
  WREAL d0[2] = {w_dot3(p[0], ax[0]), w_dot3(p[0], ax[1])};
  WREAL d1[2] = {w_dot3(p[1], ax[0]), w_dot3(p[1], ax[1])};
  WREAL sd[2] = {s ? w_dot3(s, ax[0]) : 0, s ? w_dot3(s, ax[1]) : 0}, c[4];
  WREAL len = wrap_circle(c, d0, d1, s ? sd : NULL, r);
  if (W_RE(len) < 0) return -1;
  // the tangent points: a cylinder's heights along the unrolled path
  WREAL z[2] = {0, 0};
  if (cylinder) {
    WREAL a0 = W_HYPOT(d0[0] - c[0], d0[1] - c[1]), a1 = W_HYPOT(d1[0] - c[2], d1[1] - c[3]);
    WREAL total = a0 + len + a1;
    z[0] = p[0][2] + (p[1][2] - p[0][2]) * a0 / total;
    z[1] = p[0][2] + (p[1][2] - p[0][2]) * (a0 + len) / total;
    len = W_SQRT(len * len + (z[1] - z[0]) * (z[1] - z[0]));
  }
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < 3; i++) loc[3 * k + i] = ax[0][i] * c[2 * k] + ax[1][i] * c[2 * k + 1];
    if (cylinder) loc[3 * k + 2] = z[k];
  }
  return len;
}

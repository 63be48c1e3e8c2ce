// primitive.c - closed-form collision between primitive shapes (see primitive.h for the conventions).
//
// Notation: a geom has centre c = geom_xpos and rotation R = geom_xmat (row-major, world = c + R x_local;
// local axis k in world = column k of R). n is the contact normal from g1 to g2, dist the signed distance
// of the surfaces along n (< 0: penetration), pos the point midway between the two surface points.
// Written for physid (not derived from libccd or MuJoCo code): every pair keeps its geometry explicit so
// point, normal and depth can be differentiated later with respect to poses and sizes.
#include "primitive.h"

#include <math.h>
#include <string.h>

#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// small vector helpers

// r = column k of the row-major rotation R (local axis k in world)
static inline void col3(double r[3], const double R[9], int k) {
  r[0] = R[k];
  r[1] = R[3 + k];
  r[2] = R[6 + k];
}

static inline double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline double norm3(const double a[3]) { return sqrt(dot3(a, a)); }

// r = a x b (r must not alias a or b)
static inline void cross3(double r[3], const double a[3], const double b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

static inline double sgn1(double x) { return x >= 0 ? 1.0 : -1.0; }

// world point from local: w = c + R x
static inline void to_world(double w[3], const double c[3], const double R[9], const double x[3]) {
  double t[3];
  phys_mat_vec3(t, R, x);
  w[0] = c[0] + t[0];
  w[1] = c[1] + t[1];
  w[2] = c[2] + t[2];
}

// local point from world: x = R' (w - c)
static inline void to_local(double x[3], const double c[3], const double R[9], const double w[3]) {
  double t[3];
  phys_sub3(t, w, c);
  phys_matT_vec3(x, R, t);
}

// a unit vector perpendicular to unit a (deterministic: from the world axis least aligned with a)
static void perp3(double r[3], const double a[3]) {
  double e[3] = {0, 0, 0};
  int k = fabs(a[0]) <= fabs(a[1]) ? (fabs(a[0]) <= fabs(a[2]) ? 0 : 2) : (fabs(a[1]) <= fabs(a[2]) ? 1 : 2);
  e[k] = 1;
  cross3(r, a, e);
  phys_normalize3(r);
}

// one contact: pos, frame from the unit normal n, dist; features not recorded (set_features)
static void set_contact(physContact* c, const double pos[3], const double n[3], double dist) {
  memcpy(c->pos, pos, sizeof(double) * 3);
  phys_contact_frame(c->frame, n);
  c->dist = dist;
  c->feature[0] = c->feature[1] = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
  memset(c->witness, -1, sizeof(c->witness));
  c->clip = -1;
  c->featangle[0] = c->featangle[1] = 0;
}

// the features of the n contacts at c that produced them (physid.h), geom g1's f1 and g2's f2
static void set_features(physContact* c, int n, int f1, int f2) {
  for (int i = 0; i < n; i++) c[i].feature[0] = f1, c[i].feature[1] = f2;
}

// feature codes (physid.h) of a plane, a sphere's or ellipsoid's surface, a capsule's axis point at parameter
// x (an end when clamped to [-h, h], as clampd clamps), a box corner / edge along axis a / face k of the signs
// sg (only their sign is read)
static const int FEAT_PLANE = PHYS_FEATURE(PHYS_FEAT_FACE, 0), FEAT_SURFACE = PHYS_FEATURE(PHYS_FEAT_SURFACE, 0);
static int feat_capsule(double x, double h) {
  return x < -h ? PHYS_FEATURE(PHYS_FEAT_VERTEX, 0) : x > h ? PHYS_FEATURE(PHYS_FEAT_VERTEX, 1)
                                                         : PHYS_FEATURE(PHYS_FEAT_EDGE, 0);
}
static int feat_box_vertex(const double sg[3]) {
  return PHYS_FEATURE(PHYS_FEAT_VERTEX, (sg[0] > 0) | (sg[1] > 0) << 1 | (sg[2] > 0) << 2);
}
static int feat_box_edge(int a, const double sg[3]) {
  return PHYS_FEATURE(PHYS_FEAT_EDGE, 4 * a + (sg[(a + 1) % 3] > 0) + 2 * (sg[(a + 2) % 3] > 0));
}
static int feat_box_face(int k, double sigma) { return PHYS_FEATURE(PHYS_FEAT_FACE, 2 * k + (sigma > 0)); }
// the feature of a box (local) point q on the surface whose coordinates in clamped[] are at +-s: the corner (3),
// the edge along the free axis (2), the face of the clamped axis (1), UNKNOWN inside (0)
static int feat_box_clamped(const int clamped[3], const double q[3]) {
  int nc = clamped[0] + clamped[1] + clamped[2], k = 0;
  if (nc == 0) return PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
  if (nc == 3) return feat_box_vertex(q);
  if (nc == 2) {
    while (clamped[k]) k++;
    return feat_box_edge(k, q);
  }
  while (!clamped[k]) k++;
  return feat_box_face(k, q[k]);
}
// f with the flags (physid.h) fl added
static int feat_flag(int f, int fl) { return f | PHYS_FEATURE_FLAGGED(PHYS_FEAT_UNKNOWN, 0, fl); }

//---------------------------------------------------------------------------------------------------------
// candidate points of a manifold: keep those within the margin, deepest first

typedef struct {
  double pos[3];
  double dist;
  int feat[2];   // the features of g1, g2 (physid.h)
} cand_t;

// sort candidates by depth (stable insertion sort: ties keep their generation order)
static void sort_cands(cand_t* c, int n) {
  for (int i = 1; i < n; i++) {
    cand_t x = c[i];
    int j = i - 1;
    while (j >= 0 && c[j].dist > x.dist) {
      c[j + 1] = c[j];
      j--;
    }
    c[j + 1] = x;
  }
}

// write the candidates with dist <= margin, deepest first, at most nmax; all share normal n
static int emit_cands(physContact* out, cand_t* c, int n, const double nrm[3], double margin, int nmax) {
  sort_cands(c, n);
  int k = 0;
  for (int i = 0; i < n && k < nmax; i++)
    if (c[i].dist <= margin) set_contact(out + k, c[i].pos, nrm, c[i].dist), set_features(out + k++, 1, c[i].feat[0],
                                                                                                  c[i].feat[1]);
  return k;
}

//---------------------------------------------------------------------------------------------------------
// segment and sphere primitives

// closest points of two segments: minimize f(s,t) = |r + s u - t w|^2, r = p0 - q0, over [0,1]^2.
// Unconstrained stationary point: s = (b f - c e)/(a e - b^2), t = (b s + f)/e with a = u.u, b = u.w,
// c = u.r, e = w.w, f = w.r; then clamp t and re-solve s = clamp((t b - c)/a) on the boundary.
void phys_segment_closest(double* s, double* t, const double p0[3], const double u[3], const double q0[3],
                          const double w[3]) {
  double r[3];
  phys_sub3(r, p0, q0);
  double a = dot3(u, u), e = dot3(w, w), f = dot3(w, r);
  const double eps = 1e-300;
  if (a <= eps && e <= eps) {
    *s = *t = 0;
    return;
  }
  if (a <= eps) {
    *s = 0;
    *t = clampd(f / e, 0, 1);
    return;
  }
  double c = dot3(u, r);
  if (e <= eps) {
    *t = 0;
    *s = clampd(-c / a, 0, 1);
    return;
  }
  double b = dot3(u, w), den = a * e - b * b;
  double ss = den > 1e-14 * a * e ? clampd((b * f - c * e) / den, 0, 1) : 0;
  double tt = (b * ss + f) / e;
  if (tt < 0) {
    tt = 0;
    ss = clampd(-c / a, 0, 1);
  } else if (tt > 1) {
    tt = 1;
    ss = clampd((b - c) / a, 0, 1);
  }
  *s = ss;
  *t = tt;
}

// two spheres (c1, r1), (c2, r2): n = (c2 - c1)/|c2 - c1| (fallback when concentric), dist = |c2 - c1| - r1 - r2,
// pos = c1 + n (r1 + dist/2); writes one contact if dist <= margin
static int sphere_pair(physContact* out, const double c1[3], double r1, const double c2[3], double r2, double margin,
                       const double fallback[3]) {
  double n[3];
  phys_sub3(n, c2, c1);
  double len = norm3(n);
  double dist = len - r1 - r2;
  if (dist > margin) return 0;
  if (len > 1e-12 * (1 + r1 + r2)) {
    n[0] /= len, n[1] /= len, n[2] /= len;
  } else {
    memcpy(n, fallback, sizeof(n));
  }
  double pos[3];
  phys_addscl3(pos, c1, n, r1 + 0.5 * dist);
  set_contact(out, pos, n, dist);
  return 1;
}

// keep t in [t0, t1] where lo <= x0 + t dx <= hi (Liang-Barsky slab clip); returns 0 if empty
static int clip_slab(double* t0, double* t1, double x0, double dx, double lo, double hi) {
  if (dx == 0) return x0 >= lo && x0 <= hi && *t0 <= *t1;
  double ta = (lo - x0) / dx, tb = (hi - x0) / dx;
  if (ta > tb) {
    double tmp = ta;
    ta = tb;
    tb = tmp;
  }
  if (ta > *t0) *t0 = ta;
  if (tb < *t1) *t1 = tb;
  return *t0 <= *t1;
}

//---------------------------------------------------------------------------------------------------------
// plane pairs: plane point p0 = c1, normal n = R1 e_z; signed height of a point x: (x - p0).n

// plane normal and point
static void plane_frame(double n[3], const double** p0, const physData* d, int g) {
  col3(n, d->geom_xmat + 9 * g, 2);
  *p0 = d->geom_xpos + 3 * g;
}

// plane-sphere: dist = (c - p0).n - r, pos = c - n (r + dist/2)
int phys_collide_plane_sphere(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  double n[3], pos[3], t[3];
  const double *p0, *c = d->geom_xpos + 3 * g2;
  plane_frame(n, &p0, d, g1);
  double r = m->geom_size[3 * g2];
  phys_sub3(t, c, p0);
  double dist = dot3(t, n) - r;
  if (dist > margin) return 0;
  phys_addscl3(pos, c, n, -(r + 0.5 * dist));
  set_contact(out, pos, n, dist);
  set_features(out, 1, FEAT_PLANE, FEAT_SURFACE);
  return 1;
}

// plane-capsule: each end e = c +- h a is a sphere of radius r: dist = (e - p0).n - r, pos = e - n (r + dist/2);
// two contacts when the capsule lies flat within the margin, deepest first
int phys_collide_plane_capsule(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  double n[3], a[3], t[3];
  const double *p0, *c = d->geom_xpos + 3 * g2;
  plane_frame(n, &p0, d, g1);
  col3(a, d->geom_xmat + 9 * g2, 2);
  double r = m->geom_size[3 * g2], h = m->geom_size[3 * g2 + 1];
  phys_sub3(t, c, p0);
  double hc = dot3(t, n) - r, ha = h * dot3(a, n);
  if (hc - fabs(ha) > margin) return 0;
  cand_t cd[2];
  for (int i = 0; i < 2; i++) {
    double e[3];
    phys_addscl3(e, c, a, i == 0 ? h : -h);
    cd[i].dist = i == 0 ? hc + ha : hc - ha;
    phys_addscl3(cd[i].pos, e, n, -(r + 0.5 * cd[i].dist));
    cd[i].feat[0] = FEAT_PLANE, cd[i].feat[1] = PHYS_FEATURE(PHYS_FEAT_VERTEX, i == 0);
  }
  return emit_cands(out, cd, h > 0 ? 2 : 1, n, margin, 2);
}

// plane-ellipsoid: with S = diag(a, b, c) and n_l = R' n the deepest point along -n is
// x_l = -S^2 n_l / |S n_l| (maximizes -n_l.x on x' S^-2 x = 1); dist = (c - p0).n - |S n_l|,
// pos = c + R x_l - n dist/2
int phys_collide_plane_ellipsoid(const physModel* m, const physData* d, int g1, int g2, double margin,
                                 physContact* out) {
  double n[3], nl[3], t[3], xl[3], q[3], pos[3];
  const double *p0, *c = d->geom_xpos + 3 * g2, *R = d->geom_xmat + 9 * g2, *s = m->geom_size + 3 * g2;
  plane_frame(n, &p0, d, g1);
  phys_matT_vec3(nl, R, n);
  double sn = sqrt(s[0] * s[0] * nl[0] * nl[0] + s[1] * s[1] * nl[1] * nl[1] + s[2] * s[2] * nl[2] * nl[2]);
  phys_sub3(t, c, p0);
  double dist = dot3(t, n) - sn;
  if (dist > margin) return 0;
  for (int k = 0; k < 3; k++) xl[k] = sn > 0 ? -s[k] * s[k] * nl[k] / sn : 0;
  to_world(q, c, R, xl);
  phys_addscl3(pos, q, n, -0.5 * dist);
  set_contact(out, pos, n, dist);
  set_features(out, 1, FEAT_PLANE, FEAT_SURFACE);
  return 1;
}

// plane-cylinder (radius r, half-height h, axis a = R e_z). The lower disk centre is c_lo = c - h sgn(a.n) a,
// the upper c_hi = c + h sgn(a.n) a; on a disk the deepest rim point is c_disk + r u with
// u = -(n - (n.a) a)/|n - (n.a) a| (u = R e_x when the disk is parallel to the plane), height
// (c_disk - p0).n - r |n - (n.a) a|. Candidates: both disks' deepest rim points (the line contact of a
// cylinder on its side) and the lower rim at u rotated by 90, 180, 270 degrees about a (resting on the
// face); those within the margin, deepest first, at most 4. pos = x - n dist/2.
int phys_collide_plane_cylinder(const physModel* m, const physData* d, int g1, int g2, double margin,
                                physContact* out) {
  double n[3], a[3], u[3], v[3], t[3];
  const double *p0, *c = d->geom_xpos + 3 * g2, *R = d->geom_xmat + 9 * g2;
  plane_frame(n, &p0, d, g1);
  col3(a, R, 2);
  double r = m->geom_size[3 * g2], h = m->geom_size[3 * g2 + 1];
  double an = dot3(a, n), sa = sgn1(an);
  phys_addscl3(u, n, a, -an);  // n - (n.a) a
  if (phys_normalize3(u) > 1e-12) {
    u[0] = -u[0], u[1] = -u[1], u[2] = -u[2];
  } else {
    col3(u, R, 0);
  }
  cross3(v, a, u);
  double clo[3], chi[3];
  phys_addscl3(clo, c, a, -h * sa);
  phys_addscl3(chi, c, a, h * sa);
  // rim offsets: lower disk u, upper disk u, lower v, -u, -v
  const double* centre[5] = {clo, chi, clo, clo, clo};
  const double* dir[5] = {u, u, v, u, v};
  const double sign[5] = {1, 1, 1, -1, -1};
  const int rimdir[5] = {0, 0, 1, 2, 2 + 1};   // physid.h's rim directions u, v, -u, -v
  int lower = sa > 0 ? 0 : 1;                  // the cap at -h (0) or +h (1) is the lower one
  cand_t cd[5];
  for (int i = 0; i < 5; i++) {
    double x[3];
    phys_addscl3(x, centre[i], dir[i], sign[i] * r);
    phys_sub3(t, x, p0);
    cd[i].dist = dot3(t, n);
    phys_addscl3(cd[i].pos, x, n, -0.5 * cd[i].dist);
    cd[i].feat[0] = FEAT_PLANE;
    cd[i].feat[1] = PHYS_FEATURE(PHYS_FEAT_EDGE, (i == 1 ? 1 - lower : lower) + 2 * rimdir[i]);
  }
  return emit_cands(out, cd, 5, n, margin, 4);
}

// plane-box: corners x = c + R (+-s0, +-s1, +-s2), height (x - p0).n; those within the margin, deepest
// first, at most 4 (a face on the plane gives its 4 corners, an edge 2), pos = x - n dist/2
int phys_collide_plane_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  double n[3], t[3];
  const double *p0, *c = d->geom_xpos + 3 * g2, *R = d->geom_xmat + 9 * g2, *s = m->geom_size + 3 * g2;
  plane_frame(n, &p0, d, g1);
  cand_t cd[8];
  int nc = 0;
  for (int i = 0; i < 8; i++) {
    double xl[3] = {(i & 1) ? s[0] : -s[0], (i & 2) ? s[1] : -s[1], (i & 4) ? s[2] : -s[2]}, x[3];
    to_world(x, c, R, xl);
    phys_sub3(t, x, p0);
    double dist = dot3(t, n);
    if (dist > margin) continue;
    cd[nc].dist = dist;
    phys_addscl3(cd[nc].pos, x, n, -0.5 * dist);
    cd[nc].feat[0] = FEAT_PLANE, cd[nc].feat[1] = PHYS_FEATURE(PHYS_FEAT_VERTEX, i);
    nc++;
  }
  return emit_cands(out, cd, nc, n, margin, 4);
}

//---------------------------------------------------------------------------------------------------------
// sphere pairs

// sphere-sphere: n = (c2 - c1)/|c2 - c1|, dist = |c2 - c1| - r1 - r2, pos = c1 + n (r1 + dist/2)
int phys_collide_sphere_sphere(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  static const double ez[3] = {0, 0, 1};
  int n = sphere_pair(out, d->geom_xpos + 3 * g1, m->geom_size[3 * g1], d->geom_xpos + 3 * g2,
                      m->geom_size[3 * g2], margin, ez);
  set_features(out, n, FEAT_SURFACE, FEAT_SURFACE);
  return n;
}

// sphere-capsule: the capsule's closest axis point q = c2 + clamp(a.(c1 - c2), -h, h) a, then sphere-sphere
// between (c1, r1) and (q, r2)
int phys_collide_sphere_capsule(const physModel* m, const physData* d, int g1, int g2, double margin,
                                physContact* out) {
  double a[3], t[3], q[3], fb[3];
  const double *c1 = d->geom_xpos + 3 * g1, *c2 = d->geom_xpos + 3 * g2;
  col3(a, d->geom_xmat + 9 * g2, 2);
  double h = m->geom_size[3 * g2 + 1];
  phys_sub3(t, c1, c2);
  double x = dot3(a, t);
  phys_addscl3(q, c2, a, clampd(x, -h, h));
  perp3(fb, a);
  int n = sphere_pair(out, c1, m->geom_size[3 * g1], q, m->geom_size[3 * g2], margin, fb);
  set_features(out, n, FEAT_SURFACE, feat_capsule(x, h));
  return n;
}

// sphere-cylinder, in the cylinder frame with x = R'(c1 - c2), rho = |(x0, x1)|:
//  outside (rho > r or |x2| > h): q = (min(rho, r)/rho (x0, x1), clamp(x2, -h, h)), m = (x - q)/|x - q|,
//    gap = |x - q|;
//  inside: push out through the nearer of the side (depth r - rho, m radial) and the cap (depth h - |x2|,
//    m = sgn(x2) e_z), q the surface point, gap = -depth.
// n = -R m (from the sphere to the cylinder), dist = gap - r1, pos = midway of (c1 - R m r1) and R q + c2
int phys_collide_sphere_cylinder(const physModel* m, const physData* d, int g1, int g2, double margin,
                                 physContact* out) {
  const double *c1 = d->geom_xpos + 3 * g1, *c2 = d->geom_xpos + 3 * g2, *R = d->geom_xmat + 9 * g2;
  double r1 = m->geom_size[3 * g1], r = m->geom_size[3 * g2], h = m->geom_size[3 * g2 + 1];
  double x[3], q[3], ml[3], gap;
  to_local(x, c2, R, c1);
  double rho = sqrt(x[0] * x[0] + x[1] * x[1]);
  int cap = x[2] > 0, fsph = FEAT_SURFACE, fcyl;   // the cylinder's feature (physid.h): cap, rim or side
  if (rho > r || fabs(x[2]) > h) {
    double k = rho > r ? r / rho : 1;
    q[0] = k * x[0], q[1] = k * x[1], q[2] = clampd(x[2], -h, h);
    phys_sub3(ml, x, q);
    gap = phys_normalize3(ml);
    fcyl = fabs(x[2]) <= h ? FEAT_SURFACE : PHYS_FEATURE(rho > r ? PHYS_FEAT_EDGE : PHYS_FEAT_FACE, cap);
  } else {
    double dside = r - rho, dcap = h - fabs(x[2]);
    fsph = feat_flag(FEAT_SURFACE, PHYS_FEATF_INSIDE);
    fcyl = FEAT_SURFACE;
    if (dcap <= dside) {
      ml[0] = ml[1] = 0, ml[2] = sgn1(x[2]);
      q[0] = x[0], q[1] = x[1], q[2] = ml[2] * h;
      gap = -dcap;
      fcyl = PHYS_FEATURE(PHYS_FEAT_FACE, ml[2] > 0);
    } else {
      if (rho > 1e-12 * (r + 1)) {
        ml[0] = x[0] / rho, ml[1] = x[1] / rho;
      } else {
        ml[0] = 1, ml[1] = 0;
      }
      ml[2] = 0;
      q[0] = r * ml[0], q[1] = r * ml[1], q[2] = x[2];
      gap = -dside;
    }
  }
  double dist = gap - r1;
  if (dist > margin) return 0;
  double mw[3], qw[3], s1[3], pos[3], n[3];
  phys_mat_vec3(mw, R, ml);
  to_world(qw, c2, R, q);
  phys_addscl3(s1, c1, mw, -r1);
  for (int k = 0; k < 3; k++) pos[k] = 0.5 * (s1[k] + qw[k]), n[k] = -mw[k];
  set_contact(out, pos, n, dist);
  set_features(out, 1, fsph, fcyl);
  return 1;
}

// sphere-box, in the box frame with x = R'(c1 - c2):
//  outside: q = clamp(x, -s, s), m = (x - q)/|x - q|, gap = |x - q|;
//  inside: the face k of least depth s_k - |x_k| (lowest k on ties), m = sgn(x_k) e_k, q = x with
//    q_k = sgn(x_k) s_k, gap = -(s_k - |x_k|).
// n = -R m, dist = gap - r1, pos = midway of (c1 - R m r1) and c2 + R q. The box's feature: the face, edge or
// corner of the coordinates of q that were clamped (outside), the face k (inside)
int phys_collide_sphere_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  const double *c1 = d->geom_xpos + 3 * g1, *c2 = d->geom_xpos + 3 * g2, *R = d->geom_xmat + 9 * g2;
  const double* s = m->geom_size + 3 * g2;
  double r1 = m->geom_size[3 * g1];
  double x[3], q[3], ml[3], gap;
  to_local(x, c2, R, c1);
  int inside = 1, nclamp = 0, free_axis = 0, feat;
  for (int k = 0; k < 3; k++) {
    q[k] = clampd(x[k], -s[k], s[k]);
    if (q[k] != x[k]) inside = 0, nclamp++;
    else free_axis = k;
  }
  if (!inside) {
    phys_sub3(ml, x, q);
    gap = phys_normalize3(ml);
    int k = 0;   // the clamped axis of a face
    while (k < 2 && q[k] == x[k]) k++;
    feat = nclamp == 3 ? feat_box_vertex(q) : nclamp == 2 ? feat_box_edge(free_axis, q) : feat_box_face(k, q[k]);
  } else {
    int k = 0;
    for (int j = 1; j < 3; j++)
      if (s[j] - fabs(x[j]) < s[k] - fabs(x[k])) k = j;
    ml[0] = ml[1] = ml[2] = 0;
    ml[k] = sgn1(x[k]);
    q[k] = ml[k] * s[k];
    gap = -(s[k] - fabs(x[k]));
    feat = feat_box_face(k, ml[k]);
  }
  int fsph = inside ? feat_flag(FEAT_SURFACE, PHYS_FEATF_INSIDE) : FEAT_SURFACE;
  double dist = gap - r1;
  if (dist > margin) return 0;
  double mw[3], qw[3], s1[3], pos[3], n[3];
  phys_mat_vec3(mw, R, ml);
  to_world(qw, c2, R, q);
  phys_addscl3(s1, c1, mw, -r1);
  for (int k = 0; k < 3; k++) pos[k] = 0.5 * (s1[k] + qw[k]), n[k] = -mw[k];
  set_contact(out, pos, n, dist);
  set_features(out, 1, fsph, feat);
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// capsule pairs

// a capsule's feature at segment parameter s in [0, 1] of its axis from the -h end (an end when at or beyond it)
static int feat_seg(double s) {
  return s <= 0 ? PHYS_FEATURE(PHYS_FEAT_VERTEX, 0) : s >= 1 ? PHYS_FEATURE(PHYS_FEAT_VERTEX, 1)
                                                       : PHYS_FEATURE(PHYS_FEAT_EDGE, 0);
}

// capsule-capsule: closest points P, Q of the axis segments (phys_segment_closest), then sphere-sphere of
// radii r1, r2 at P, Q. When the axes are nearly parallel (|a1 x a2| < 0.1) a second contact is taken at the
// end of the overlap interval of the two segments (seg 2 projected on seg 1) farther from P: point
// P2 on seg 1, Q2 its closest point on seg 2, sphere-sphere again (its own exact distance).
int phys_collide_capsule_capsule(const physModel* m, const physData* d, int g1, int g2, double margin,
                                 physContact* out) {
  const double *c1 = d->geom_xpos + 3 * g1, *c2 = d->geom_xpos + 3 * g2;
  double a1[3], a2[3], u[3], w[3], p0[3], q0[3], P[3], Q[3], fb[3], cr[3];
  double r1 = m->geom_size[3 * g1], h1 = m->geom_size[3 * g1 + 1];
  double r2 = m->geom_size[3 * g2], h2 = m->geom_size[3 * g2 + 1];
  col3(a1, d->geom_xmat + 9 * g1, 2);
  col3(a2, d->geom_xmat + 9 * g2, 2);
  // cheap rejection: the distance of the infinite axis lines, |(c2 - c1).(a1 x a2)|/|a1 x a2|, bounds the
  // segments' distance from below
  double c12[3], reach = r1 + r2 + margin;
  phys_sub3(c12, c2, c1);
  cross3(cr, a1, a2);
  double lc = dot3(c12, cr), sn2 = dot3(cr, cr);
  if (reach >= 0 && sn2 > 1e-12 && lc * lc > reach * reach * sn2) return 0;
  phys_addscl3(p0, c1, a1, -h1);
  phys_addscl3(q0, c2, a2, -h2);
  for (int k = 0; k < 3; k++) u[k] = 2 * h1 * a1[k], w[k] = 2 * h2 * a2[k];
  double s, t;
  phys_segment_closest(&s, &t, p0, u, q0, w);
  phys_addscl3(P, p0, u, s);
  phys_addscl3(Q, q0, w, t);
  double dPQ[3];
  phys_sub3(dPQ, Q, P);
  if (dot3(dPQ, dPQ) > reach * reach && reach >= 0) return 0;  // the closest pair is beyond the margin
  double sn = sqrt(sn2);
  if (sn > 1e-9) {
    for (int k = 0; k < 3; k++) fb[k] = cr[k] / sn;
  } else {
    perp3(fb, a1);
  }
  int nc = sphere_pair(out, P, r1, Q, r2, margin, fb);
  set_features(out, nc, feat_seg(s), feat_seg(t));
  if (sn >= 0.1 || h1 <= 0 || h2 <= 0) return nc;
  // overlap interval [lo, hi] of seg 2's projection on seg 1, in seg 1's parameter
  double uu = dot3(u, u), t0[3], t1[3];
  phys_sub3(t0, q0, p0);
  phys_addscl3(t1, t0, w, 1);
  double sa = dot3(t0, u) / uu, sb = dot3(t1, u) / uu;
  double lo = fmax(0, fmin(sa, sb)), hi = fmin(1, fmax(sa, sb));
  if (hi - lo < 1e-9) return nc;
  double s2 = fabs(lo - s) > fabs(hi - s) ? lo : hi;
  if (fabs(s2 - s) < 1e-9) return nc;
  double P2[3], Q2[3], tq[3];
  phys_addscl3(P2, p0, u, s2);
  phys_sub3(tq, P2, q0);
  double t2 = dot3(tq, w) / dot3(w, w);
  phys_addscl3(Q2, q0, w, clampd(t2, 0, 1));
  int n2 = sphere_pair(out + nc, P2, r1, Q2, r2, margin, fb);
  // seg 1's point: an end of seg 1, or facing seg 2's end q0 (EDGE 3) or q0 + w (EDGE 4) (physid.h)
  int f1 = s2 <= 0 || s2 >= 1 ? feat_seg(s2) : PHYS_FEATURE(PHYS_FEAT_EDGE, s2 == sa ? 3 : 4);
  set_features(out + nc, n2, f1, feat_seg(t2));
  return nc + n2;
}

// face contacts of a capsule (segment e0 + t u in the box frame, radius r) on box face k with outward
// normal sigma e_k: clip the segment to the face's prism |x_j| <= s_j (j != k), then each clipped end x gives
// dist = sigma x_k - s_k - r and pos = x - m (r + dist/2), m = sigma e_k (box frame). Returns the count.
// Features: the box's face; the capsule's segment end (VERTEX) or its entry into / exit from the face's prism
// (EDGE 1 / 2), flagged fcap (PHYS_FEATF_INSIDE when the segment meets the box)
static int capsule_box_face(physContact* out, const double e0[3], const double u[3], double r, const double s[3],
                            int k, double sigma, const double c2[3], const double R[9], double margin, int fcap) {
  double t0 = 0, t1 = 1;
  for (int j = 0; j < 3; j++)
    if (j != k && !clip_slab(&t0, &t1, e0[j], u[j], -s[j], s[j])) return 0;
  double ml[3] = {0, 0, 0}, mw[3], n[3];
  ml[k] = sigma;
  phys_mat_vec3(mw, R, ml);
  for (int j = 0; j < 3; j++) n[j] = -mw[j];
  cand_t cd[2];
  int nc = t1 - t0 > 1e-12 ? 2 : 1;
  for (int i = 0; i < nc; i++) {
    double x[3], pl[3];
    phys_addscl3(x, e0, u, i == 0 ? t0 : t1);
    cd[i].dist = sigma * x[k] - s[k] - r;
    phys_addscl3(pl, x, ml, -(r + 0.5 * cd[i].dist));
    to_world(cd[i].pos, c2, R, pl);
    int fseg = i == 0 ? (t0 <= 0 ? PHYS_FEATURE(PHYS_FEAT_VERTEX, 0) : PHYS_FEATURE(PHYS_FEAT_EDGE, 1))
                      : (t1 >= 1 ? PHYS_FEATURE(PHYS_FEAT_VERTEX, 1) : PHYS_FEATURE(PHYS_FEAT_EDGE, 2));
    cd[i].feat[0] = feat_flag(fseg, fcap), cd[i].feat[1] = feat_box_face(k, sigma);
  }
  return emit_cands(out, cd, nc, n, margin, 2);
}

// one capsule-box contact from closest points p (segment) and q (box), box-frame unit m from box to capsule:
// dist = gap - r, pos = midway of (p - m r) and q, normal n = -R m; features fcap, fbox
static int capsule_box_point(physContact* out, const double p[3], const double q[3], const double ml[3], double dist,
                             double r, const double c2[3], const double R[9], int fcap, int fbox) {
  double pl[3], pos[3], mw[3], n[3];
  for (int k = 0; k < 3; k++) pl[k] = 0.5 * (p[k] - ml[k] * r + q[k]);
  to_world(pos, c2, R, pl);
  phys_mat_vec3(mw, R, ml);
  for (int k = 0; k < 3; k++) n[k] = -mw[k];
  set_contact(out, pos, n, dist);
  set_features(out, 1, fcap, fbox);
  return 1;
}

// closest points of a segment (e0 + t u) and a box |x| <= s, the segment not meeting the box: the minimum
// over the segment ends against the box (clamp) and the segment against the 12 box edges; returns |p - q|.
// The features (physid.h) of the closest pair: a segment end and the box feature of its clamped coordinates, or
// the segment's point (end or inside) and the box edge
static double segment_box_closest(double p[3], double q[3], int feat[2], const double e0[3], const double u[3],
                                  const double s[3]) {
  double best = INFINITY;
  for (int i = 0; i < 2; i++) {  // ends
    double x[3], y[3], dv[3];
    int clamped[3];
    phys_addscl3(x, e0, u, i);
    for (int k = 0; k < 3; k++) y[k] = clampd(x[k], -s[k], s[k]), clamped[k] = y[k] != x[k];
    phys_sub3(dv, x, y);
    double d2 = dot3(dv, dv);
    if (d2 < best) {
      best = d2, memcpy(p, x, sizeof(x)), memcpy(q, y, sizeof(y));
      feat[0] = PHYS_FEATURE(PHYS_FEAT_VERTEX, i), feat[1] = feat_box_clamped(clamped, y);
    }
  }
  for (int k = 0; k < 3; k++) {  // edges along axis k
    int j1 = (k + 1) % 3, j2 = (k + 2) % 3;
    for (int c = 0; c < 4; c++) {
      double q0[3], w[3] = {0, 0, 0}, x[3], y[3], dv[3], ts, tt;
      q0[k] = -s[k];
      q0[j1] = (c & 1) ? s[j1] : -s[j1];
      q0[j2] = (c & 2) ? s[j2] : -s[j2];
      w[k] = 2 * s[k];
      phys_segment_closest(&ts, &tt, e0, u, q0, w);
      phys_addscl3(x, e0, u, ts);
      phys_addscl3(y, q0, w, tt);
      phys_sub3(dv, x, y);
      double d2 = dot3(dv, dv);
      if (d2 < best) {
        best = d2, memcpy(p, x, sizeof(x)), memcpy(q, y, sizeof(y));
        feat[0] = feat_seg(ts), feat[1] = PHYS_FEATURE(PHYS_FEAT_EDGE, 4 * k + c);
      }
    }
  }
  return sqrt(best);
}

// capsule-box, in the box frame (segment e0 + t u, t in [0,1], radius r; box |x| <= s):
//  - segment outside the box: exact closest points p, q (segment_box_closest), gap = |p - q|,
//    m = (p - q)/gap. If m is a face normal sigma e_k the capsule lies on that face: face contacts
//    (capsule_box_face: 1 or 2 points, the deepest equal to gap - r); else one contact, dist = gap - r.
//  - segment meeting the box: separating-axis test over the box axes e_k and u x e_k (the face normals
//    of the Minkowski difference box - segment); the least overlap o gives the depth, dist = -o - r.
//    A face axis gives face contacts; an edge axis m = sigma (u x e_k)/|u x e_k| gives one contact between
//    the segment and the box edge along e_k at x_j = s_j sgn(m_j).
// Face axes are kept unless an edge axis overlaps less by more than 5% (stable manifolds).
int phys_collide_capsule_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  const double *c1 = d->geom_xpos + 3 * g1, *c2 = d->geom_xpos + 3 * g2, *R = d->geom_xmat + 9 * g2;
  const double* s = m->geom_size + 3 * g2;
  double r = m->geom_size[3 * g1], h = m->geom_size[3 * g1 + 1];
  double a[3], w0[3], w1[3], e0[3], e1[3], u[3];
  col3(a, d->geom_xmat + 9 * g1, 2);
  phys_addscl3(w0, c1, a, -h);
  phys_addscl3(w1, c1, a, h);
  to_local(e0, c2, R, w0);
  to_local(e1, c2, R, w1);
  phys_sub3(u, e1, e0);
  double t0 = 0, t1 = 1;
  int meets = 1;
  for (int k = 0; k < 3 && meets; k++) meets = clip_slab(&t0, &t1, e0[k], u[k], -s[k], s[k]);
  if (!meets) {
    double p[3], q[3], ml[3];
    int feat[2] = {PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0), PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0)};
    double gap = segment_box_closest(p, q, feat, e0, u, s);
    if (gap - r > margin) return 0;
    if (gap > 1e-12 * (1 + s[0] + s[1] + s[2])) {
      phys_sub3(ml, p, q);
      for (int k = 0; k < 3; k++) ml[k] /= gap;
      for (int k = 0; k < 3; k++)
        if (fabs(ml[k]) > 1 - 1e-9) return capsule_box_face(out, e0, u, r, s, k, sgn1(ml[k]), c2, R, margin, 0);
      return capsule_box_point(out, p, q, ml, gap - r, r, c2, R, feat[0], feat[1]);
    }
  }
  // separating axes: faces k = 0..2, then edges u x e_k
  double best = INFINITY, bestf = INFINITY, mbest[3] = {0, 0, 0};
  int kbest = -1, kface = 0;
  double sface = 1;
  for (int i = 0; i < 6; i++) {
    double L[3] = {0, 0, 0};
    int k = i % 3;
    if (i < 3) {
      L[k] = 1;
    } else {
      double ek[3] = {0, 0, 0};
      ek[k] = 1;
      cross3(L, u, ek);
      double len = norm3(L);
      if (len == 0 || len < 1e-9 * norm3(u)) continue;
      for (int j = 0; j < 3; j++) L[j] /= len;
    }
    double ext = s[0] * fabs(L[0]) + s[1] * fabs(L[1]) + s[2] * fabs(L[2]);
    double pa = dot3(e0, L), pb = dot3(e1, L);
    double oplus = ext - fmin(pa, pb), ominus = fmax(pa, pb) + ext;  // move the segment along +L or -L
    double o = fmin(oplus, ominus), sg = oplus <= ominus ? 1 : -1;
    if (i < 3) {
      if (o < bestf) bestf = o, kface = k, sface = sg;
    } else if (o < best) {
      best = o, kbest = k;
      for (int j = 0; j < 3; j++) mbest[j] = sg * L[j];
    }
  }
  if (kbest < 0 || best >= 0.95 * bestf)
    return capsule_box_face(out, e0, u, r, s, kface, sface, c2, R, margin, PHYS_FEATF_INSIDE);
  if (-best - r > margin) return 0;
  double q0[3], w[3] = {0, 0, 0}, p[3], q[3], ts, tt, sg[3];
  for (int j = 0; j < 3; j++) sg[j] = sgn1(mbest[j]), q0[j] = j == kbest ? -s[j] : s[j] * sg[j];
  w[kbest] = 2 * s[kbest];
  phys_segment_closest(&ts, &tt, e0, u, q0, w);
  phys_addscl3(p, e0, u, ts);
  phys_addscl3(q, q0, w, tt);
  return capsule_box_point(out, p, q, mbest, -best - r, r, c2, R, feat_flag(feat_seg(ts), PHYS_FEATF_INSIDE),
                           feat_box_edge(kbest, sg));
}

//---------------------------------------------------------------------------------------------------------
// box-box

typedef struct {
  const double* c;   // centre
  const double* R;   // rotation (columns: axes)
  const double* s;   // half sizes
  double ax[3][3];   // ax[k] = axis k in world
} box_t;

static void box_init(box_t* b, const physModel* m, const physData* d, int g) {
  b->c = d->geom_xpos + 3 * g;
  b->R = d->geom_xmat + 9 * g;
  b->s = m->geom_size + 3 * g;
  for (int k = 0; k < 3; k++) col3(b->ax[k], b->R, k);
}

// half-extent of a box projected on unit L: sum_k s_k |ax_k . L|
static double box_extent(const box_t* b, const double L[3]) {
  return b->s[0] * fabs(dot3(b->ax[0], L)) + b->s[1] * fabs(dot3(b->ax[1], L)) +
         b->s[2] * fabs(dot3(b->ax[2], L));
}

// the line two polygon points a, b lie on: the one of their two defining lines they share (-1: none)
static int common_line(const int a[2], const int b[2]) {
  return a[0] == b[0] || a[0] == b[1] ? a[0] : a[1] == b[0] || a[1] == b[1] ? a[1] : -1;
}

// clip a convex polygon (2-D points, n of them) to x[dim] * side <= lim (Sutherland-Hodgman); returns the
// new count (at most n + 1). Each point carries the two lines that define it (lin, lout: a new point lies on
// the clip line `line` and on the line of the edge it cuts)
static int clip_poly(double out[][2], int lout[][2], const double in[][2], const int lin[][2], int n, int dim,
                     double side, double lim, int line) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    const double* p = in[i];
    const double* q = in[(i + 1) % n];
    double dp = side * p[dim] - lim, dq = side * q[dim] - lim;
    if (dp <= 0) out[k][0] = p[0], out[k][1] = p[1], lout[k][0] = lin[i][0], lout[k][1] = lin[i][1], k++;
    if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
      double t = dp / (dp - dq);
      out[k][0] = p[0] + t * (q[0] - p[0]);
      out[k][1] = p[1] + t * (q[1] - p[1]);
      lout[k][0] = common_line(lin[i], lin[(i + 1) % n]), lout[k][1] = line;
      k++;
    }
  }
  return k;
}

// the features (physid.h) of a clipped point of box_face_contacts defined by lines l (0..3: the incident face's
// edge from corner v to v + 1; 4 + 2 dim + (side > 0): the reference face's side x[k1 or k2] = side s): two
// incident edges give an incident corner and the reference face, an incident edge and a side give both edges,
// two sides a reference corner and the incident face. fref, finc: of the reference and the incident box, flagged
// (physid.h) PHYS_FEATF_REF with axis k and PHYS_FEATF_INC with axis mi
void phys_box_clip_features(int* fref, int* finc, const int l[2], int k, double sigma, int mi, double tau) {
  static const double S1[4] = {1, -1, -1, 1}, S2[4] = {1, 1, -1, -1};
  int i1 = (mi + 1) % 3, i2 = (mi + 2) % 3, k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  int e = l[0] < 4 ? l[0] : l[1], side = l[0] < 4 ? l[1] : l[0];
  double si[3], sr[3];
  si[mi] = tau, sr[k] = sigma;
  if (l[0] < 0 || l[1] < 0) {
    *fref = *finc = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
  } else if (l[0] < 4 && l[1] < 4) {   // the corner v shared by edges v - 1 and v
    int v = l[1] == (l[0] + 1) % 4 ? l[1] : l[0];
    si[i1] = S1[v], si[i2] = S2[v];
    *finc = feat_box_vertex(si), *fref = feat_box_face(k, sigma);
  } else if (e < 4) {
    si[i1] = S1[e], si[i2] = S2[e];
    int d = (side - 4) / 2;
    sr[d ? k2 : k1] = (side - 4) % 2 ? 1 : -1;
    *finc = feat_box_edge(S1[e] != S1[(e + 1) % 4] ? i1 : i2, si), *fref = feat_box_edge(d ? k1 : k2, sr);
  } else {
    for (int j = 0; j < 2; j++) sr[(l[j] - 4) / 2 ? k2 : k1] = (l[j] - 4) % 2 ? 1 : -1;
    *fref = feat_box_vertex(sr), *finc = feat_box_face(mi, tau);
  }
  *fref = feat_flag(*fref, PHYS_FEATF_REF | PHYS_FEATURE_AXIS_FLAG(k));
  *finc = feat_flag(*finc, PHYS_FEATF_INC | PHYS_FEATURE_AXIS_FLAG(mi));
}

// reduce candidates to at most 4 (sorted deepest first): the deepest p1, the farthest from it p2, the point
// of largest |area(p1, p2, p)| p3, then the largest area on the other side of p1-p2 (areas in the plane
// normal to n)
static int reduce4(cand_t* c, int n, const double nrm[3]) {
  if (n <= 4) return n;
  int pick[4] = {0, -1, -1, -1};
  double best = -1;
  for (int i = 1; i < n; i++) {
    double dv[3];
    phys_sub3(dv, c[i].pos, c[0].pos);
    double d2 = dot3(dv, dv);
    if (d2 > best) best = d2, pick[1] = i;
  }
  double e[3], area[PHYS_MAXPAIRCON];
  phys_sub3(e, c[pick[1]].pos, c[0].pos);
  for (int i = 0; i < n; i++) {  // signed area: ((p - p1) x e) . n
    double dv[3], cr[3];
    phys_sub3(dv, c[i].pos, c[0].pos);
    cross3(cr, dv, e);
    area[i] = dot3(cr, nrm);
  }
  best = 0;
  for (int i = 1; i < n; i++)
    if (i != pick[1] && fabs(area[i]) > best) best = fabs(area[i]), pick[2] = i;
  int k = 2;
  if (pick[2] >= 0) {
    k = 3;
    double side = area[pick[2]] > 0 ? -1 : 1;
    best = 0;
    for (int i = 1; i < n; i++)
      if (i != pick[1] && i != pick[2] && side * area[i] > best) best = side * area[i], pick[3] = i;
    if (pick[3] >= 0) k = 4;
  }
  cand_t tmp[4];
  for (int i = 0; i < k; i++) tmp[i] = c[pick[i]];
  sort_cands(tmp, k);
  for (int i = 0; i < k; i++) c[i] = tmp[i];
  return k;
}

// face contact of box-box: reference face of box `ref` with outward unit normal nref = sigma ax_k; the
// incident face of box `inc` is the one most anti-parallel to nref. Its 4 corners, in the reference frame,
// are clipped to the reference face's rectangle; each remaining point x gives dist = sigma x_k - s_k and
// pos = c_ref + R_ref x - nref dist/2. Reduced to 4 (reduce4). n = contact normal (g1 -> g2).
static int box_face_contacts(physContact* out, const box_t* ref, const box_t* inc, int k, double sigma,
                             const double n[3], double margin, int ref_first) {
  double nref[3];
  for (int j = 0; j < 3; j++) nref[j] = sigma * ref->ax[k][j];
  int mi = 0;
  double dm = -1;
  for (int j = 0; j < 3; j++) {
    double dj = fabs(dot3(inc->ax[j], nref));
    if (dj > dm) dm = dj, mi = j;
  }
  double tau = dot3(inc->ax[mi], nref) > 0 ? -1 : 1;
  int i1 = (mi + 1) % 3, i2 = (mi + 2) % 3;
  int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  // incident corners in the reference frame: xl = R_ref'(c_inc + tau s_m ax_m +- s_i1 ax_i1 +- s_i2 ax_i2 - c_ref)
  static const double S1[4] = {1, -1, -1, 1}, S2[4] = {1, 1, -1, -1};
  double poly[PHYS_MAXPAIRCON + 1][2], tmp[PHYS_MAXPAIRCON + 1][2], hk[4];
  int lp[PHYS_MAXPAIRCON + 1][2], lt[PHYS_MAXPAIRCON + 1][2];   // the lines defining each point (clip_poly)
  for (int v = 0; v < 4; v++) {
    double w[3], xl[3];
    for (int j = 0; j < 3; j++)
      w[j] = inc->c[j] + tau * inc->s[mi] * inc->ax[mi][j] + S1[v] * inc->s[i1] * inc->ax[i1][j] +
             S2[v] * inc->s[i2] * inc->ax[i2][j];
    to_local(xl, ref->c, ref->R, w);
    poly[v][0] = xl[k1], poly[v][1] = xl[k2];
    hk[v] = xl[k];
    lp[v][0] = (v + 3) % 4, lp[v][1] = v;
  }
  // the incident face is planar: height x_k as an affine function of (x_k1, x_k2) through 3 corners
  double g1 = 0, g2 = 0, h0;
  {
    double a1 = poly[1][0] - poly[0][0], a2 = poly[1][1] - poly[0][1];
    double b1 = poly[3][0] - poly[0][0], b2 = poly[3][1] - poly[0][1];
    double det = a1 * b2 - a2 * b1, dh1 = hk[1] - hk[0], dh3 = hk[3] - hk[0];
    if (fabs(det) > 1e-14 * (fabs(a1 * b2) + fabs(a2 * b1)) && det != 0) {
      g1 = (dh1 * b2 - dh3 * a2) / det;
      g2 = (a1 * dh3 - b1 * dh1) / det;
    }
    h0 = hk[0] - g1 * poly[0][0] - g2 * poly[0][1];
  }
  int np = 4;
  np = clip_poly(tmp, lt, (const double(*)[2])poly, (const int(*)[2])lp, np, 0, 1, ref->s[k1], 5);
  np = clip_poly(poly, lp, (const double(*)[2])tmp, (const int(*)[2])lt, np, 0, -1, ref->s[k1], 4);
  np = clip_poly(tmp, lt, (const double(*)[2])poly, (const int(*)[2])lp, np, 1, 1, ref->s[k2], 7);
  np = clip_poly(poly, lp, (const double(*)[2])tmp, (const int(*)[2])lt, np, 1, -1, ref->s[k2], 6);
  if (np > PHYS_MAXPAIRCON) np = PHYS_MAXPAIRCON;
  cand_t cd[PHYS_MAXPAIRCON];
  int nc = 0;
  for (int v = 0; v < np; v++) {
    double xl[3], w[3];
    xl[k1] = poly[v][0], xl[k2] = poly[v][1];
    xl[k] = h0 + g1 * poly[v][0] + g2 * poly[v][1];
    double dist = sigma * xl[k] - ref->s[k];
    if (dist > margin) continue;
    to_world(w, ref->c, ref->R, xl);
    phys_addscl3(cd[nc].pos, w, nref, -0.5 * dist);
    cd[nc].dist = dist;
    phys_box_clip_features(&cd[nc].feat[1 - ref_first], &cd[nc].feat[ref_first], lp[v], k, sigma, mi, tau);
    nc++;
  }
  sort_cands(cd, nc);
  nc = reduce4(cd, nc, n);
  for (int i = 0; i < nc; i++) set_contact(out + i, cd[i].pos, n, cd[i].dist);
  for (int i = 0; i < nc; i++) set_features(out + i, 1, cd[i].feat[0], cd[i].feat[1]);
  return nc;
}

// box-box by the separating-axis test over 15 axes L (3 face normals of each box, 9 edge cross products
// A_i x B_j): separation along L is |T.L| - (e_A(L) + e_B(L)), T = c_B - c_A, e the projected half-extent;
// any separation > margin means no contact. The axis of largest separation (least overlap) gives the
// depth dist and normal n = sgn(T.L) L (from A to B). A face axis gives the clipped incident face
// (box_face_contacts); an edge axis i, j gives one contact midway between the closest points of the
// supporting edges of A (along A_i) and B (along B_j), with dist = (Q - P).n. Face axes win unless an edge
// axis overlaps less by more than 5% plus 1e-9 of the sizes (phys_box_edge_wins: stable manifolds for boxes
// resting face to face).
int phys_collide_box_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  box_t A, B;
  box_init(&A, m, d, g1);
  box_init(&B, m, d, g2);
  double T[3];
  phys_sub3(T, B.c, A.c);
  double sface = -INFINITY, sedge = -INFINITY, nedge[3] = {0, 0, 0};
  int face = -1, ei = -1, ej = -1;
  for (int f = 0; f < 6; f++) {  // face axes: A's 0..2, B's 3..5
    const double* L = f < 3 ? A.ax[f] : B.ax[f - 3];
    double sep = fabs(dot3(T, L)) - box_extent(&A, L) - box_extent(&B, L);
    if (sep > margin) return 0;
    if (sep > sface) sface = sep, face = f;
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double L[3];
      cross3(L, A.ax[i], B.ax[j]);
      double len = norm3(L);
      if (len < 1e-6) continue;  // parallel edges: covered by the face axes
      for (int k = 0; k < 3; k++) L[k] /= len;
      double tl = dot3(T, L);
      double sep = fabs(tl) - box_extent(&A, L) - box_extent(&B, L);
      if (sep > margin) return 0;
      if (sep > sedge) {
        sedge = sep, ei = i, ej = j;
        for (int k = 0; k < 3; k++) nedge[k] = sgn1(tl) * L[k];
      }
    }
  double scale = fmax(fmax(A.s[0], A.s[1]), A.s[2]) + fmax(fmax(B.s[0], B.s[1]), B.s[2]);
  int use_edge = ei >= 0 && phys_box_edge_wins(sface, sedge, scale);
  if (!use_edge) {
    const box_t* ref = face < 3 ? &A : &B;
    const box_t* inc = face < 3 ? &B : &A;
    int k = face % 3;
    double tl = dot3(T, ref->ax[k]), n[3];
    // n from A to B; the reference face's outward normal points towards the incident box
    for (int j = 0; j < 3; j++) n[j] = sgn1(tl) * ref->ax[k][j];
    double sigma = face < 3 ? sgn1(tl) : -sgn1(tl);
    return box_face_contacts(out, ref, inc, k, sigma, n, margin, face < 3);
  }
  // supporting edges: P0 = c_A + sum_{k!=i} s_k sgn(A_k.n) A_k - s_i A_i, Q0 = c_B - sum_{k!=j} ... - s_j B_j
  double p0[3], q0[3], u[3], w[3];
  for (int c = 0; c < 3; c++) {
    p0[c] = A.c[c] - A.s[ei] * A.ax[ei][c];
    q0[c] = B.c[c] - B.s[ej] * B.ax[ej][c];
    u[c] = 2 * A.s[ei] * A.ax[ei][c];
    w[c] = 2 * B.s[ej] * B.ax[ej][c];
  }
  for (int k = 0; k < 3; k++) {
    if (k != ei) phys_addscl3(p0, p0, A.ax[k], A.s[k] * sgn1(dot3(A.ax[k], nedge)));
    if (k != ej) phys_addscl3(q0, q0, B.ax[k], -B.s[k] * sgn1(dot3(B.ax[k], nedge)));
  }
  double s, t, P[3], Q[3], dv[3], pos[3];
  phys_segment_closest(&s, &t, p0, u, q0, w);
  phys_addscl3(P, p0, u, s);
  phys_addscl3(Q, q0, w, t);
  phys_sub3(dv, Q, P);
  double dist = dot3(dv, nedge);
  if (dist > margin) return 0;
  for (int k = 0; k < 3; k++) pos[k] = 0.5 * (P[k] + Q[k]);
  set_contact(out, pos, nedge, dist);
  double sa[3], sb[3];   // the edges' signs along the boxes' axes
  for (int k = 0; k < 3; k++) sa[k] = sgn1(dot3(A.ax[k], nedge)), sb[k] = -sgn1(dot3(B.ax[k], nedge));
  set_features(out, 1, feat_box_edge(ei, sa), feat_box_edge(ej, sb));
  return 1;
}

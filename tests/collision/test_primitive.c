// test_primitive.c - closed-form collision pairs against analytic answers and independent brute force:
// constructed configurations with known depth, normal and points; random poses checked through support
// functions (the depth along the reported normal equals the support overlap there, and no sampled direction
// separates the shapes with less translation); exact distances of separated shapes by ternary search;
// symmetric use; manifolds (box on plane, box on box, edge-edge, parallel capsules, cylinder) and their
// stability under tiny rotations.
#include <math.h>
#include <string.h>

#include "collision.h"
#include "primitive.h"
#include "rng.h"
#include "rot.h"
#include "spec.h"
#include "test.h"

static physModel* M;
static physData* D;
static physRng RNG;

// a model with two world geoms whose types, sizes and poses the tests overwrite
static void setup(void) {
  physSpec* s = phys_spec_new();
  for (int i = 0; i < 2; i++) {
    int g = phys_spec_add_geom(s, 0, PHYS_GEOM_SPHERE);
    s->geom[g].size[0] = 0.1;
    snprintf(s->geom[g].name, PHYS_NAMELEN, "g%d", i);
  }
  physLog log = {0};
  M = phys_compile(s, &log);
  phys_spec_free(s);
  if (!M) {
    fprintf(stderr, "compile: %s\n", log.error);
    exit(1);
  }
  D = phys_make_data(M);
}

// geom g: type, sizes, pose (position, quaternion)
static void set_geom(int g, int type, double s0, double s1, double s2, const double pos[3], const double quat[4]) {
  M->geom_type[g] = type;
  M->geom_size[3 * g] = s0, M->geom_size[3 * g + 1] = s1, M->geom_size[3 * g + 2] = s2;
  memcpy(D->geom_xpos + 3 * g, pos, sizeof(double) * 3);
  double q[4] = {quat[0], quat[1], quat[2], quat[3]};
  phys_quat_normalize(q);
  phys_quat2mat(D->geom_xmat + 9 * g, q);
}

static void rand_quat(double q[4]) {
  for (int k = 0; k < 4; k++) q[k] = phys_rng_range(&RNG, -1, 1);
  phys_quat_normalize(q);
}

static void rand_unit(double v[3]) {
  do {
    for (int k = 0; k < 3; k++) v[k] = phys_rng_range(&RNG, -1, 1);
  } while (phys_norm3(v) < 0.1 || phys_norm3(v) > 1);
  phys_normalize3(v);
}

static const double QID[4] = {1, 0, 0, 0};

static void col(double r[3], const double* R, int k) { r[0] = R[k], r[1] = R[3 + k], r[2] = R[6 + k]; }

// support function h(u) = max over geom g of x.u (not for planes)
static double support(int g, const double u[3]) {
  const double *c = D->geom_xpos + 3 * g, *R = D->geom_xmat + 9 * g, *s = M->geom_size + 3 * g;
  double a[3], ul[3], h = phys_dot3(c, u);
  col(a, R, 2);
  phys_matT_vec3(ul, R, u);
  double au = phys_dot3(a, u);
  switch (M->geom_type[g]) {
    case PHYS_GEOM_SPHERE: return h + s[0];
    case PHYS_GEOM_CAPSULE: return h + s[1] * fabs(au) + s[0];
    case PHYS_GEOM_CYLINDER: {  // radial part |a x u| (not sqrt(1 - (a.u)^2): cancellation near the axis)
      double ax[3];
      phys_cross3(ax, a, u);
      return h + s[1] * fabs(au) + s[0] * phys_norm3(ax);
    }
    case PHYS_GEOM_BOX: return h + s[0] * fabs(ul[0]) + s[1] * fabs(ul[1]) + s[2] * fabs(ul[2]);
    case PHYS_GEOM_ELLIPSOID:
      return h + sqrt(s[0] * s[0] * ul[0] * ul[0] + s[1] * s[1] * ul[1] * ul[1] + s[2] * s[2] * ul[2] * ul[2]);
  }
  return NAN;
}

// translation of geom 1 along n (from geom 0 to geom 1) that separates the two: h0(n) + h1(-n)
static double overlap(const double n[3]) {
  double mn[3] = {-n[0], -n[1], -n[2]};
  return support(0, n) + support(1, mn);
}

// least overlap over a Fibonacci sphere of directions (an upper bound of the penetration depth)
static double min_overlap_sampled(int ndir) {
  double best = INFINITY;
  for (int i = 0; i < ndir; i++) {
    double z = 1 - (2 * i + 1.0) / ndir, r = sqrt(1 - z * z), phi = i * 2.399963229728653;
    double u[3] = {r * cos(phi), r * sin(phi), z};
    best = fmin(best, overlap(u));
  }
  return best;
}

// contact frame: orthonormal, right-handed
static void check_frame(const physContact* c) {
  const double *n = c->frame, *t1 = c->frame + 3, *t2 = c->frame + 6;
  double cr[3];
  phys_cross3(cr, n, t1);
  CHECK_NEAR(phys_norm3(n), 1, 1e-12);
  CHECK_NEAR(phys_dot3(n, t1), 0, 1e-12);
  CHECK_NEAR(cr[0] - t2[0], 0, 1e-12);
  CHECK_NEAR(cr[1] - t2[1], 0, 1e-12);
  CHECK_NEAR(cr[2] - t2[2], 0, 1e-12);
}

//---------------------------------------------------------------------------------------------------------
// plane pairs

static void test_plane_pairs(void) {
  physContact c[PHYS_MAXPAIRCON];
  for (int it = 0; it < 200; it++) {
    double qp[4], p0[3], n[3], qg[4], pg[3], t[3];
    rand_quat(qp);
    for (int k = 0; k < 3; k++) p0[k] = phys_rng_range(&RNG, -1, 1);
    double R[9];
    phys_quat2mat(R, qp);
    col(n, R, 2);
    rand_quat(qg);
    double margin = it % 2 ? 0.05 : 0;
    // sphere at height z above the plane: dist = z - r, pos = c - n (r + dist/2)
    double r = phys_rng_range(&RNG, 0.05, 0.5), z = phys_rng_range(&RNG, -r, r + 0.1);
    double slide = phys_rng_range(&RNG, -1, 1);  // along the plane's x axis
    for (int k = 0; k < 3; k++) pg[k] = p0[k] + z * n[k] + slide * R[3 * k];
    set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, p0, qp);
    set_geom(1, PHYS_GEOM_SPHERE, r, 0, 0, pg, qg);
    int nc = phys_collide_geoms(M, D, 0, 1, margin, c);
    CHECK(nc == (z - r <= margin));
    if (nc) {
      CHECK_NEAR(c[0].dist, z - r, 1e-12);
      CHECK_NEAR(phys_dot3(c[0].frame, n), 1, 1e-12);
      for (int k = 0; k < 3; k++) CHECK_NEAR(c[0].pos[k], pg[k] - n[k] * (r + 0.5 * (z - r)), 1e-12);
      check_frame(c);
    }
    // capsule: ends e = c +- h a at heights z_e: contacts for the ends with z_e - r <= margin, deepest first
    double h = phys_rng_range(&RNG, 0.1, 0.5), a[3], Rg[9];
    phys_quat2mat(Rg, qg);
    col(a, Rg, 2);
    set_geom(1, PHYS_GEOM_CAPSULE, r, h, 0, pg, qg);
    nc = phys_collide_geoms(M, D, 0, 1, margin, c);
    double za = z + h * phys_dot3(a, n) - r, zb = z - h * phys_dot3(a, n) - r;
    CHECK(nc == (za <= margin) + (zb <= margin));
    if (nc) CHECK_NEAR(c[0].dist, fmin(za, zb), 1e-12);
    if (nc == 2) CHECK_NEAR(c[1].dist, fmax(za, zb), 1e-12);
    // ellipsoid: the reported point minus n dist/2 is on the surface and its normal S^-2 x is along -n
    double s[3] = {phys_rng_range(&RNG, 0.05, 0.5), phys_rng_range(&RNG, 0.05, 0.5), phys_rng_range(&RNG, 0.05, 0.5)};
    set_geom(1, PHYS_GEOM_ELLIPSOID, s[0], s[1], s[2], pg, qg);
    nc = phys_collide_geoms(M, D, 0, 1, 10, c);
    CHECK(nc == 1);
    double x[3], xl[3], gl[3], nl[3];
    for (int k = 0; k < 3; k++) x[k] = c[0].pos[k] + 0.5 * c[0].dist * n[k] - pg[k];
    phys_matT_vec3(xl, Rg, x);
    phys_matT_vec3(nl, Rg, n);
    double on = 0;
    for (int k = 0; k < 3; k++) on += xl[k] * xl[k] / (s[k] * s[k]), gl[k] = xl[k] / (s[k] * s[k]);
    CHECK_NEAR(on, 1, 1e-12);
    phys_normalize3(gl);
    CHECK_NEAR(phys_dot3(gl, nl), -1, 1e-12);
    for (int k = 0; k < 3; k++) t[k] = x[k] + pg[k] - p0[k];
    CHECK_NEAR(c[0].dist, phys_dot3(t, n), 1e-12);
    // box: the corners within the margin (at most 4), deepest first, each pos + n dist/2 a corner
    set_geom(1, PHYS_GEOM_BOX, s[0], s[1], s[2], pg, qg);
    nc = phys_collide_geoms(M, D, 0, 1, margin, c);
    double hc[8];
    int nin = 0;
    for (int i = 0; i < 8; i++) {
      double cl[3] = {(i & 1) ? s[0] : -s[0], (i & 2) ? s[1] : -s[1], (i & 4) ? s[2] : -s[2]}, cw[3];
      phys_mat_vec3(cw, Rg, cl);
      for (int k = 0; k < 3; k++) t[k] = cw[k] + pg[k] - p0[k];
      hc[i] = phys_dot3(t, n);
      nin += hc[i] <= margin;
    }
    CHECK(nc == (nin < 4 ? nin : 4));
    double hmin = INFINITY;
    for (int i = 0; i < 8; i++) hmin = fmin(hmin, hc[i]);
    if (nc) CHECK_NEAR(c[0].dist, hmin, 1e-12);
    for (int i = 1; i < nc; i++) CHECK(c[i].dist >= c[i - 1].dist);
    // cylinder: the deepest point is at height z - h |a.n| - r sqrt(1 - (a.n)^2)
    set_geom(1, PHYS_GEOM_CYLINDER, r, h, 0, pg, qg);
    nc = phys_collide_geoms(M, D, 0, 1, margin, c);
    double an = phys_dot3(a, n), low = z - h * fabs(an) - r * sqrt(1 - an * an);
    CHECK(nc >= (low <= margin));
    if (nc) CHECK_NEAR(c[0].dist, low, 1e-12);
  }
  // box face down on the plane z = 0, rotated about z: 4 corners at depth -delta
  double qz[4], pz[3] = {0.3, -0.2, 0.2 - 0.01};
  phys_axisangle2quat(qz, (double[3]){0, 0, 1}, 0.7);
  set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, (double[3]){0, 0, 0}, QID);
  set_geom(1, PHYS_GEOM_BOX, 0.3, 0.1, 0.2, pz, qz);
  int nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 4);
  for (int i = 0; i < nc; i++) {
    CHECK_NEAR(c[i].dist, -0.01, 1e-12);
    CHECK_NEAR(c[i].pos[2], -0.005, 1e-12);
    CHECK_NEAR(hypot(c[i].pos[0] - 0.3, c[i].pos[1] + 0.2), hypot(0.3, 0.1), 1e-12);
    CHECK_NEAR(c[i].frame[3], 1, 1e-12);  // ground contacts: t1 = x
  }
  // tiny rotations keep the 4 corners (depths change by at most size * angle)
  for (int it = 0; it < 20; it++) {
    double q[4], ax[3];
    rand_unit(ax);
    phys_axisangle2quat(q, ax, 1e-7);
    phys_quat_mul(q, qz, q);
    set_geom(1, PHYS_GEOM_BOX, 0.3, 0.1, 0.2, pz, q);
    physContact c2[PHYS_MAXPAIRCON];
    CHECK(phys_collide_geoms(M, D, 0, 1, 0, c2) == 4);
    for (int i = 0; i < 4; i++) CHECK_NEAR(c2[i].dist, -0.01, 1e-7);
  }
  // capsule lying flat: 2 points; tilted by 0.2 rad: 1
  double qx[4];
  phys_axisangle2quat(qx, (double[3]){1, 0, 0}, M_PI / 2);
  set_geom(1, PHYS_GEOM_CAPSULE, 0.1, 0.4, 0, (double[3]){0, 0, 0.09}, qx);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 2);
  CHECK_NEAR(c[0].dist, -0.01, 1e-12);
  CHECK_NEAR(fabs(c[0].pos[1]) + fabs(c[1].pos[1]), 0.8, 1e-12);
  phys_axisangle2quat(qx, (double[3]){1, 0, 0}, M_PI / 2 - 0.2);
  set_geom(1, PHYS_GEOM_CAPSULE, 0.1, 0.4, 0, (double[3]){0, 0, 0.09}, qx);
  CHECK(phys_collide_geoms(M, D, 0, 1, 0, c) == 1);
  // cylinder on its face: 4 rim points at depth -0.01 on the circle of radius r; on its side: 2 points
  set_geom(1, PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, (double[3]){1, 2, 0.29}, QID);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 4);
  for (int i = 0; i < nc; i++) {
    CHECK_NEAR(c[i].dist, -0.01, 1e-12);
    CHECK_NEAR(hypot(c[i].pos[0] - 1, c[i].pos[1] - 2), 0.2, 1e-12);
  }
  phys_axisangle2quat(qx, (double[3]){1, 0, 0}, M_PI / 2);
  set_geom(1, PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, (double[3]){1, 2, 0.19}, qx);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 2);
  for (int i = 0; i < nc; i++) CHECK_NEAR(c[i].dist, -0.01, 1e-12);
  CHECK_NEAR(fabs(c[0].pos[1] - c[1].pos[1]), 0.6, 1e-12);
}

//---------------------------------------------------------------------------------------------------------
// convex pairs: random poses

// independent distance of a point to geom 1 (sphere, capsule, box, cylinder): exact projections
static double point_dist(int g, const double p[3]) {
  const double *c = D->geom_xpos + 3 * g, *R = D->geom_xmat + 9 * g, *s = M->geom_size + 3 * g;
  double t[3], x[3];
  for (int k = 0; k < 3; k++) t[k] = p[k] - c[k];
  phys_matT_vec3(x, R, t);
  switch (M->geom_type[g]) {
    case PHYS_GEOM_SPHERE: return fmax(0, phys_norm3(x) - s[0]);
    case PHYS_GEOM_CAPSULE: {
      double z = fmax(-s[1], fmin(s[1], x[2]));
      return fmax(0, sqrt(x[0] * x[0] + x[1] * x[1] + (x[2] - z) * (x[2] - z)) - s[0]);
    }
    case PHYS_GEOM_BOX: {
      double d2 = 0;
      for (int k = 0; k < 3; k++) {
        double e = fmax(0, fabs(x[k]) - s[k]);
        d2 += e * e;
      }
      return sqrt(d2);
    }
    case PHYS_GEOM_CYLINDER: {
      double er = fmax(0, hypot(x[0], x[1]) - s[0]), ez = fmax(0, fabs(x[2]) - s[1]);
      return hypot(er, ez);
    }
  }
  return NAN;
}

// distance between geom 0 (a sphere or capsule: a segment of radius r) and geom 1: ternary search on the
// convex function t -> point_dist(segment(t)) (exact to ~1e-12)
static double segment_geom_dist(void) {
  const double *c = D->geom_xpos, *R = D->geom_xmat;
  double r = M->geom_size[0], h = M->geom_type[0] == PHYS_GEOM_CAPSULE ? M->geom_size[1] : 0, a[3];
  col(a, R, 2);
  double lo = -h, hi = h;
  for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
    double t1 = lo + (hi - lo) / 3, t2 = hi - (hi - lo) / 3, p1[3], p2[3];
    for (int k = 0; k < 3; k++) p1[k] = c[k] + t1 * a[k], p2[k] = c[k] + t2 * a[k];
    if (point_dist(1, p1) <= point_dist(1, p2)) hi = t2;
    else lo = t1;
  }
  double p[3];
  for (int k = 0; k < 3; k++) p[k] = c[k] + 0.5 * (lo + hi) * a[k];
  return point_dist(1, p) - r;
}

// random poses of a pair: penetrating ones against the support overlap, separated ones against the exact
// distance (pairs whose first geom is a sphere or capsule); bias = allowed excess of the reported depth over
// the least sampled overlap (box faces are preferred to edges within 5%)
static void random_pair(int t1, int t2, double bias, const char* name) {
  physContact c[PHYS_MAXPAIRCON], cs[PHYS_MAXPAIRCON];
  int npen = 0, nsep = 0, fails0 = test_nfail;
  for (int it = 0; it < 400; it++) {
    double q1[4], q2[4], p1[3] = {0, 0, 0}, p2[3], u[3];
    rand_quat(q1);
    rand_quat(q2);
    rand_unit(u);
    double dd = phys_rng_range(&RNG, 0.1, 0.9);
    for (int k = 0; k < 3; k++) p2[k] = dd * u[k];
    double s1[3], s2[3];
    for (int k = 0; k < 3; k++) s1[k] = phys_rng_range(&RNG, 0.1, 0.4), s2[k] = phys_rng_range(&RNG, 0.1, 0.4);
    set_geom(0, t1, s1[0], s1[1], s1[2], p1, q1);
    set_geom(1, t2, s2[0], s2[1], s2[2], p2, q2);
    double margin = 0.05;
    int nc = phys_collide_geoms(M, D, 0, 1, margin, c);
    double dmin = INFINITY;
    for (int i = 0; i < nc; i++) {
      dmin = fmin(dmin, c[i].dist);
      CHECK(c[i].dist <= margin);
      check_frame(c + i);
      // one normal per manifold (capsule-capsule: each point is its own sphere pair, normals may differ)
      if (!(t1 == PHYS_GEOM_CAPSULE && t2 == PHYS_GEOM_CAPSULE)) CHECK_NEAR(phys_dot3(c[i].frame, c[0].frame), 1, 1e-12);
    }
    double sampled = min_overlap_sampled(3000);
    if (sampled > 0.02) {  // penetrating (a separation would show within ~0.06 of sampling)
      npen++;
      CHECK(nc >= 1);
      if (!nc) continue;
      double ov = overlap(c[0].frame);
      CHECK_MSG(-dmin <= ov + 1e-9, "%s: depth %g beyond the overlap %g along n", name, -dmin, ov);
      if (bias == 0) CHECK_NEAR(-dmin, ov, 1e-9);
      CHECK_MSG(ov <= (1 + bias) * sampled + 1e-9, "%s: overlap along n %g > sampled least %g", name, ov, sampled);
    } else if (t1 <= PHYS_GEOM_CAPSULE && t2 != PHYS_GEOM_ELLIPSOID && sampled < -1e-3) {  // separated
      nsep++;
      double dist = segment_geom_dist();
      CHECK((nc > 0) == (dist <= margin));
      if (nc) CHECK_NEAR(dmin, dist, 1e-9);
    }
    // symmetric use: same points, flipped normal
    int ns = phys_collide_geoms(M, D, 1, 0, margin, cs);
    CHECK(ns == nc);
    for (int i = 0; i < nc && i < ns; i++) {
      CHECK_NEAR(cs[i].dist, c[i].dist, 1e-12);
      for (int k = 0; k < 3; k++) {
        CHECK_NEAR(cs[i].pos[k], c[i].pos[k], 1e-12);
        CHECK_NEAR(cs[i].frame[k], -c[i].frame[k], 1e-12);
      }
    }
  }
  printf("%-18s %3d penetrating, %3d separated poses, %s\n", name, npen, nsep, test_nfail == fails0 ? "ok" : "FAIL");
  CHECK(npen > 50);
}

//---------------------------------------------------------------------------------------------------------
// constructed configurations

static void test_constructed(void) {
  physContact c[PHYS_MAXPAIRCON];
  // capsule-capsule crossing at right angles through a common perpendicular: closest points known
  for (int it = 0; it < 100; it++) {
    double n[3], a1[3], a2[3], P[3], q1[4], q2[4], z[3] = {0, 0, 1};
    rand_unit(n);
    perp:
    rand_unit(a1);
    phys_cross3(a2, n, a1);
    if (phys_normalize3(a2) < 0.2) goto perp;
    phys_cross3(a1, a2, n);  // a1 perpendicular to n and a2
    double ang = phys_rng_range(&RNG, 0.3, 3.0), ca = cos(ang), sa = sin(ang), b[3];
    for (int k = 0; k < 3; k++) b[k] = ca * a1[k] + sa * a2[k];  // seg 2 direction, perpendicular to n
    double h1 = 0.5, h2 = 0.4, s1 = phys_rng_range(&RNG, -0.3, 0.3), s2 = phys_rng_range(&RNG, -0.3, 0.3);
    double D0 = phys_rng_range(&RNG, 0.05, 0.3), r1 = 0.1, r2 = 0.12;
    for (int k = 0; k < 3; k++) P[k] = phys_rng_range(&RNG, -1, 1);
    double c1[3], c2[3];
    for (int k = 0; k < 3; k++) c1[k] = P[k] - s1 * a1[k], c2[k] = P[k] + D0 * n[k] - s2 * b[k];
    phys_quat_zaxis(q1, a1);
    phys_quat_zaxis(q2, b);
    set_geom(0, PHYS_GEOM_CAPSULE, r1, h1, 0, c1, q1);
    set_geom(1, PHYS_GEOM_CAPSULE, r2, h2, 0, c2, q2);
    int nc = phys_collide_geoms(M, D, 0, 1, 0.1, c);
    CHECK(nc == 1);
    CHECK_NEAR(c[0].dist, D0 - r1 - r2, 1e-12);
    CHECK_NEAR(phys_dot3(c[0].frame, n), 1, 1e-12);
    for (int k = 0; k < 3; k++) CHECK_NEAR(c[0].pos[k], P[k] + n[k] * (r1 + 0.5 * (D0 - r1 - r2)), 1e-12);
    (void)z;
  }
  // parallel capsules overlapping on [0.1, 0.5] of the first's axis: 2 contacts at the overlap ends
  double qx[4];
  phys_axisangle2quat(qx, (double[3]){0, 1, 0}, M_PI / 2);
  set_geom(0, PHYS_GEOM_CAPSULE, 0.1, 0.5, 0, (double[3]){0, 0, 0}, qx);
  set_geom(1, PHYS_GEOM_CAPSULE, 0.1, 0.3, 0, (double[3]){0.4, 0, 0.19}, qx);
  int nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 2);
  for (int i = 0; i < nc; i++) {
    CHECK_NEAR(c[i].dist, -0.01, 1e-12);
    CHECK_NEAR(c[i].frame[2], 1, 1e-12);
  }
  if (nc == 2) CHECK_NEAR(fabs(c[0].pos[0] - c[1].pos[0]), 0.4, 1e-12);

  // box B (half 0.2, 0.2, 0.1) face down on box A (half 1, 1, 0.5) rotated about z: 4 corners of B
  double qz[4];
  phys_axisangle2quat(qz, (double[3]){0, 0, 1}, 0.4);
  set_geom(0, PHYS_GEOM_BOX, 1, 1, 0.5, (double[3]){0, 0, 0}, QID);
  set_geom(1, PHYS_GEOM_BOX, 0.2, 0.2, 0.1, (double[3]){0.3, 0.1, 0.6 - 0.02}, qz);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 4);
  for (int i = 0; i < nc; i++) {
    CHECK_NEAR(c[i].dist, -0.02, 1e-12);
    CHECK_NEAR(c[i].frame[2], 1, 1e-12);
    CHECK_NEAR(c[i].pos[2], 0.5 - 0.01, 1e-12);
    CHECK_NEAR(hypot(c[i].pos[0] - 0.3, c[i].pos[1] - 0.1), 0.2 * sqrt(2), 1e-12);
  }
  // stability: tiny rotations of B keep 4 points that move by no more than ~size * angle
  for (int it = 0; it < 50; it++) {
    double q[4], ax[3];
    physContact c2[PHYS_MAXPAIRCON];
    rand_unit(ax);
    phys_axisangle2quat(q, ax, 1e-6);
    phys_quat_mul(q, qz, q);
    set_geom(1, PHYS_GEOM_BOX, 0.2, 0.2, 0.1, (double[3]){0.3, 0.1, 0.6 - 0.02}, q);
    int n2 = phys_collide_geoms(M, D, 0, 1, 0, c2);
    CHECK(n2 == 4);
    for (int i = 0; i < n2; i++) {
      double best = INFINITY;
      for (int j = 0; j < nc; j++) {
        double dv[3] = {c2[i].pos[0] - c[j].pos[0], c2[i].pos[1] - c[j].pos[1], c2[i].pos[2] - c[j].pos[2]};
        best = fmin(best, phys_norm3(dv));
      }
      CHECK_NEAR(best, 0, 1e-6);
      CHECK_NEAR(c2[i].dist, -0.02, 1e-6);
    }
  }
  // equal boxes face to face, the top one rotated 45 degrees: the octagon reduced to 4 points, depth 0.02,
  // each inside both squares
  phys_axisangle2quat(qz, (double[3]){0, 0, 1}, M_PI / 4);
  set_geom(0, PHYS_GEOM_BOX, 0.5, 0.5, 0.5, (double[3]){0, 0, 0}, QID);
  set_geom(1, PHYS_GEOM_BOX, 0.5, 0.5, 0.5, (double[3]){0, 0, 0.98}, qz);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 4);
  for (int i = 0; i < nc; i++) {
    CHECK_NEAR(c[i].dist, -0.02, 1e-12);
    CHECK(fabs(c[i].pos[0]) <= 0.5 + 1e-12 && fabs(c[i].pos[1]) <= 0.5 + 1e-12);
    CHECK(fabs(c[i].pos[0] + c[i].pos[1]) <= 0.5 * sqrt(2) + 1e-12);
    CHECK(fabs(c[i].pos[0] - c[i].pos[1]) <= 0.5 * sqrt(2) + 1e-12);
  }
  // edge on edge: A rotated 45 deg about y (top edge along y at z = s sqrt 2), B rotated 45 deg about x
  // (bottom edge along x at z = zb - s sqrt 2): one contact at the crossing, depth analytic
  double qa[4], qb[4], s = 0.3, zb = 2 * s * sqrt(2) - 0.01;
  phys_axisangle2quat(qa, (double[3]){0, 1, 0}, M_PI / 4);
  phys_axisangle2quat(qb, (double[3]){1, 0, 0}, M_PI / 4);
  set_geom(0, PHYS_GEOM_BOX, s, s, s, (double[3]){0, 0, 0}, qa);
  set_geom(1, PHYS_GEOM_BOX, s, s, s, (double[3]){0.05, -0.07, zb}, qb);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 1);
  CHECK_NEAR(c[0].dist, -0.01, 1e-12);
  CHECK_NEAR(c[0].frame[2], 1, 1e-12);
  CHECK_NEAR(c[0].pos[0], 0, 1e-12);      // A's top edge is the line x = 0
  CHECK_NEAR(c[0].pos[1], -0.07, 1e-12);  // B's bottom edge is the line y = -0.07
  CHECK_NEAR(c[0].pos[2], s * sqrt(2) - 0.005, 1e-12);
  // separated edges within the margin: dist = +0.01
  set_geom(1, PHYS_GEOM_BOX, s, s, s, (double[3]){0.05, -0.07, zb + 0.02}, qb);
  nc = phys_collide_geoms(M, D, 0, 1, 0.05, c);
  CHECK(nc == 1);
  CHECK_NEAR(c[0].dist, 0.01, 1e-12);

  // capsule lying on a box face: 2 points (clipped to the face), depth 0.01
  phys_axisangle2quat(qx, (double[3]){0, 1, 0}, M_PI / 2);
  set_geom(0, PHYS_GEOM_CAPSULE, 0.1, 0.5, 0, (double[3]){0.6, 0, 0.59}, qx);
  set_geom(1, PHYS_GEOM_BOX, 0.4, 0.4, 0.5, (double[3]){0, 0, 0}, QID);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 2);
  for (int i = 0; i < nc; i++) {
    CHECK_NEAR(c[i].dist, -0.01, 1e-12);
    CHECK_NEAR(c[i].frame[2], -1, 1e-12);  // from the capsule down into the box
  }
  if (nc == 2) CHECK_NEAR(fabs(c[0].pos[0] - c[1].pos[0]), 0.3, 1e-12);  // axis x in [0.1, 1.1] clipped to [0.1, 0.4]
  // separated above the face within the margin: same 2 points, dist = 0.02
  set_geom(0, PHYS_GEOM_CAPSULE, 0.1, 0.5, 0, (double[3]){0.6, 0, 0.62}, qx);
  nc = phys_collide_geoms(M, D, 0, 1, 0.05, c);
  CHECK(nc == 2);
  for (int i = 0; i < nc; i++) CHECK_NEAR(c[i].dist, 0.02, 1e-12);
  // capsule across a box edge (box rotated 45 deg about x, edge along x at z = s sqrt 2): one point
  set_geom(1, PHYS_GEOM_BOX, 0.3, 0.3, 0.3, (double[3]){0, 0, 0}, qb);
  phys_axisangle2quat(qx, (double[3]){1, 0, 0}, M_PI / 2);  // capsule along y
  set_geom(0, PHYS_GEOM_CAPSULE, 0.1, 0.5, 0, (double[3]){0.1, 0.05, 0.3 * sqrt(2) + 0.1 - 0.01}, qx);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 1);
  CHECK_NEAR(c[0].dist, -0.01, 1e-12);
  CHECK_NEAR(c[0].frame[2], -1, 1e-12);
  CHECK_NEAR(c[0].pos[0], 0.1, 1e-12);
  CHECK_NEAR(c[0].pos[1], 0, 1e-12);

  // sphere against box: face, edge and corner regions, and inside
  set_geom(1, PHYS_GEOM_BOX, 0.3, 0.2, 0.1, (double[3]){0, 0, 0}, QID);
  struct { double p[3], dist, n[3]; } sb[4] = {
      {{0.1, 0.05, 0.1 + 0.15}, 0.05, {0, 0, -1}},
      {{0.3 + 0.1, 0.2 + 0.1, 0}, sqrt(0.02) - 0.1, {-M_SQRT1_2, -M_SQRT1_2, 0}},
      {{-0.3 - 0.1, -0.2 - 0.1, 0.1 + 0.1}, sqrt(0.03) - 0.1, {1 / sqrt(3), 1 / sqrt(3), -1 / sqrt(3)}},
      {{0.25, 0, 0.01}, -0.05 - 0.1, {-1, 0, 0}}};
  for (int i = 0; i < 4; i++) {
    set_geom(0, PHYS_GEOM_SPHERE, 0.1, 0, 0, sb[i].p, QID);
    nc = phys_collide_geoms(M, D, 0, 1, 0.1, c);
    CHECK(nc == 1);
    CHECK_NEAR(c[0].dist, sb[i].dist, 1e-12);
    for (int k = 0; k < 3; k++) CHECK_NEAR(c[0].frame[k], sb[i].n[k], 1e-12);
  }
  // sphere against cylinder: side, cap, rim
  set_geom(1, PHYS_GEOM_CYLINDER, 0.3, 0.2, 0, (double[3]){0, 0, 0}, QID);
  struct { double p[3], dist, n[3]; } sc[4] = {
      {{0.45, 0, 0.1}, 0.05, {-1, 0, 0}},
      {{0.1, 0.1, 0.25}, -0.05, {0, 0, -1}},
      {{0.3 + 0.06, 0, 0.2 + 0.08}, 0.0, {-0.6, 0, -0.8}},
      {{0, 0.25, 0}, -0.15, {0, -1, 0}}};
  for (int i = 0; i < 4; i++) {
    set_geom(0, PHYS_GEOM_SPHERE, 0.1, 0, 0, sc[i].p, QID);
    nc = phys_collide_geoms(M, D, 0, 1, 0.1, c);
    CHECK(nc == 1);
    CHECK_NEAR(c[0].dist, sc[i].dist, 1e-12);
    for (int k = 0; k < 3; k++) CHECK_NEAR(c[0].frame[k], sc[i].n[k], 1e-12);
  }
}

// segment closest points against brute force
static void test_segment_closest(void) {
  for (int it = 0; it < 200; it++) {
    double p0[3], u[3], q0[3], w[3], s, t;
    for (int k = 0; k < 3; k++) {
      p0[k] = phys_rng_range(&RNG, -1, 1), u[k] = phys_rng_range(&RNG, -1, 1);
      q0[k] = phys_rng_range(&RNG, -1, 1), w[k] = phys_rng_range(&RNG, -1, 1);
    }
    if (it % 10 == 0) memcpy(w, u, sizeof(u));  // parallel
    phys_segment_closest(&s, &t, p0, u, q0, w);
    CHECK(s >= 0 && s <= 1 && t >= 0 && t <= 1);
    double best = INFINITY, got = 0;
    for (int i = 0; i <= 400; i++)
      for (int j = 0; j <= 400; j++) {
        double dv[3];
        for (int k = 0; k < 3; k++) dv[k] = p0[k] + i / 400.0 * u[k] - q0[k] - j / 400.0 * w[k];
        best = fmin(best, phys_norm3(dv));
      }
    double dv[3];
    for (int k = 0; k < 3; k++) dv[k] = p0[k] + s * u[k] - q0[k] - t * w[k];
    got = phys_norm3(dv);
    CHECK(got <= best + 1e-12);
    CHECK(got >= best - 0.01);
  }
}

// the features a contact records (physid.h) in known configurations, in either argument order (the features
// swap with the geoms, pairflip set when the pair function ran with the second geom first)
#define FEAT(kind, i) PHYS_FEATURE(PHYS_FEAT_##kind, i)
// box-box face manifolds: the reference box's feature (face axis k) and the incident box's (face axis mi)
#define FREF(kind, i, k) PHYS_FEATURE_FLAGGED(PHYS_FEAT_##kind, i, PHYS_FEATF_REF | PHYS_FEATURE_AXIS_FLAG(k))
#define FINC(kind, i, mi) PHYS_FEATURE_FLAGGED(PHYS_FEAT_##kind, i, PHYS_FEATF_INC | PHYS_FEATURE_AXIS_FLAG(mi))
#define FIN(kind, i) PHYS_FEATURE_FLAGGED(PHYS_FEAT_##kind, i, PHYS_FEATF_INSIDE)
static void test_features(void) {
  physContact c[PHYS_MAXPAIRCON];
  const double o[3] = {0, 0, 0};
  const double r45x[4] = {cos(M_PI / 8), sin(M_PI / 8), 0, 0}, r45y[4] = {cos(M_PI / 8), 0, sin(M_PI / 8), 0};
  const double r45z[4] = {cos(M_PI / 8), 0, 0, sin(M_PI / 8)};
  // box (0.1, 0.2, 0.3) on the plane, 0.01 deep: its 4 lower corners, VERTEX v with bit 0 = x > 0, bit 1 = y > 0
  double zb[3] = {0, 0, 0.29};
  set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, o, QID);
  set_geom(1, PHYS_GEOM_BOX, 0.1, 0.2, 0.3, zb, QID);
  for (int order = 0; order < 2; order++) {
    int nc = phys_collide_geoms(M, D, order, 1 - order, 0, c), seen = 0;
    CHECK(nc == 4);
    for (int i = 0; i < nc; i++) {
      int v = (c[i].pos[0] > 0) | (c[i].pos[1] > 0) << 1;
      CHECK_MSG(c[i].feature[order] == FEAT(FACE, 0) && c[i].feature[1 - order] == FEAT(VERTEX, v),
                "plane-box contact %d: features %#x %#x", i, c[i].feature[0], c[i].feature[1]);
      CHECK(c[i].pairflip == order && c[i].pairout == i);
      seen |= 1 << v;
    }
    CHECK(seen == 15);
  }
  // box-box edge-edge: unit cubes (half 0.5), A turned 45 deg about x (its top edge: along x at y+, z+: EDGE
  // 4*0 + 1 + 2 = 3), B turned 45 deg about y, above A by 0.01 less than touching (its bottom edge: along y at z-,
  // x+: EDGE 4*1 + 0 + 2 = 6); from the edge axis, so without the face manifold's flags
  double zB[3] = {0, 0, sqrt(2) - 0.01};
  set_geom(0, PHYS_GEOM_BOX, 0.5, 0.5, 0.5, o, r45x);
  set_geom(1, PHYS_GEOM_BOX, 0.5, 0.5, 0.5, zB, r45y);
  CHECK(phys_collide_geoms(M, D, 0, 1, 0, c) == 1);
  CHECK_MSG(c[0].feature[0] == FEAT(EDGE, 3) && c[0].feature[1] == FEAT(EDGE, 6), "edge-edge: %#x %#x",
            c[0].feature[0], c[0].feature[1]);
  CHECK_NEAR(c[0].dist, -0.01, 1e-12);
  CHECK(phys_collide_geoms(M, D, 1, 0, 0, c) == 1);   // same types: the lower id first, features swapped
  CHECK(c[0].feature[0] == FEAT(EDGE, 6) && c[0].feature[1] == FEAT(EDGE, 3) && c[0].pairflip == 1);
  // box-box face: A (0.3 cube) is the reference (its +z face, FACE 5); B (0.1 cube) resting on it: B's lower
  // corners (VERTEX, bit 2 clear); B (0.5, 0.5, 0.1) turned 45 deg about z covers A's face: A's upper corners
  // (VERTEX, bit 2 set) on B's -z face (FACE 4); B (0.35, 0.35, 0.1) turned 45 deg cuts A's face corners off: each
  // point where an edge of B's lower face (along x or y, z-) crosses a side of A's upper face (EDGE along x or y,
  // z+)
  set_geom(0, PHYS_GEOM_BOX, 0.3, 0.3, 0.3, o, QID);
  double zs[3] = {0.02, -0.03, 0.39};
  set_geom(1, PHYS_GEOM_BOX, 0.1, 0.1, 0.1, zs, QID);
  int nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 4);
  for (int i = 0; i < nc; i++) {
    int v = (c[i].pos[0] > zs[0]) | (c[i].pos[1] > zs[1]) << 1;
    CHECK_MSG(c[i].feature[0] == FREF(FACE, 5, 2) && c[i].feature[1] == FINC(VERTEX, v, 2), "small box %d: %#x %#x", i,
              c[i].feature[0], c[i].feature[1]);
  }
  zs[0] = zs[1] = 0;
  set_geom(1, PHYS_GEOM_BOX, 0.5, 0.5, 0.1, zs, r45z);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 4);
  for (int i = 0; i < nc; i++) {
    int v = (c[i].pos[0] > 0) | (c[i].pos[1] > 0) << 1 | 4;
    CHECK_MSG(c[i].feature[0] == FREF(VERTEX, v, 2) && c[i].feature[1] == FINC(FACE, 4, 2), "large box %d: %#x %#x", i,
              c[i].feature[0], c[i].feature[1]);
  }
  set_geom(1, PHYS_GEOM_BOX, 0.35, 0.35, 0.1, zs, r45z);
  nc = phys_collide_geoms(M, D, 0, 1, 0, c);
  CHECK(nc == 4);
  for (int i = 0; i < nc; i++) {
    int fa = c[i].feature[0], fb = c[i].feature[1], ia = PHYS_FEATURE_INDEX(fa), ib = PHYS_FEATURE_INDEX(fb);
    int side = fabs(c[i].pos[0] - 0.3) < 1e-12 || fabs(c[i].pos[0] + 0.3) < 1e-12 ? 0 : 1;   // x = +-0.3: A's edge along y
    CHECK_MSG(fabs(fabs(c[i].pos[side]) - 0.3) < 1e-12, "point %d not on a side", i);
    // A's edge along axis 1 - side, at the sign of pos[side] and z+ (EDGE 4a + b: physid.h)
    int a = 1 - side, ea = 4 * a + (a == 0 ? (c[i].pos[1] > 0) + 2 : 1 + 2 * (c[i].pos[0] > 0));
    CHECK_MSG(fa == FREF(EDGE, ea, 2), "clipped point %d: A %#x, want edge %d", i, fa, ea);
    // B's edge along its x or y, z- (bit 1 of b clear for axis 0: (0+2)%3 = z; bit 0 clear for axis 1: (1+1)%3 = z)
    CHECK_MSG(PHYS_FEATURE_KIND(fb) == PHYS_FEAT_EDGE && (ib / 4 == 0 ? !(ib & 2) : ib / 4 == 1 && !(ib & 1)) &&
                  PHYS_FEATURE_FLAGS(fb) == PHYS_FEATF_INC && PHYS_FEATURE_AXIS(fb) == 2,
              "clipped point %d: B %#x", i, fb);
    (void)ia;
  }
  // sphere-capsule: the capsule (r 0.1, h 0.5 along z) by its +h end (VERTEX 1), its -h end (VERTEX 0), its side
  // (EDGE 0); the sphere's SURFACE
  const double sp[3][3] = {{0, 0, 0.65}, {0.05, 0, -0.66}, {0.15, 0, 0.2}};
  const int want[3] = {FEAT(VERTEX, 1), FEAT(VERTEX, 0), FEAT(EDGE, 0)};
  set_geom(1, PHYS_GEOM_CAPSULE, 0.1, 0.5, 0, o, QID);
  for (int k = 0; k < 3; k++) {
    set_geom(0, PHYS_GEOM_SPHERE, 0.1, 0, 0, sp[k], QID);
    CHECK(phys_collide_geoms(M, D, 1, 0, 0.1, c) == 1);
    CHECK_MSG(c[0].feature[0] == want[k] && c[0].feature[1] == FEAT(SURFACE, 0) && c[0].pairflip == 1,
              "sphere-capsule %d: %#x %#x", k, c[0].feature[0], c[0].feature[1]);
  }
  // sphere-box (half 0.2): outside by a corner (VERTEX 7), an edge (along z at x+, y-: EDGE 8 + 1), a face
  // (-y: FACE 2); inside nearest the +x face (FACE 1, the sphere's centre flagged inside)
  const double sb[4][3] = {{0.25, 0.25, 0.25}, {0.25, -0.25, 0.1}, {0.05, -0.25, 0.1}, {0.15, 0.02, 0.01}};
  const int wantb[4] = {FEAT(VERTEX, 7), FEAT(EDGE, 9), FEAT(FACE, 2), FEAT(FACE, 1)};
  set_geom(1, PHYS_GEOM_BOX, 0.2, 0.2, 0.2, o, QID);
  for (int k = 0; k < 4; k++) {
    set_geom(0, PHYS_GEOM_SPHERE, 0.1, 0, 0, sb[k], QID);
    CHECK(phys_collide_geoms(M, D, 0, 1, 0.1, c) == 1);
    CHECK_MSG(c[0].feature[0] == (k < 3 ? FEAT(SURFACE, 0) : FIN(SURFACE, 0)) && c[0].feature[1] == wantb[k],
              "sphere-box %d: %#x %#x", k,
              c[0].feature[0], c[0].feature[1]);
  }
}
#undef FEAT

int main(void) {
  setup();
  phys_rng_seed(&RNG, 3);
  test_segment_closest();
  test_plane_pairs();
  test_constructed();
  test_features();
  random_pair(PHYS_GEOM_SPHERE, PHYS_GEOM_SPHERE, 0, "sphere-sphere");
  random_pair(PHYS_GEOM_SPHERE, PHYS_GEOM_CAPSULE, 0, "sphere-capsule");
  random_pair(PHYS_GEOM_SPHERE, PHYS_GEOM_CYLINDER, 0, "sphere-cylinder");
  random_pair(PHYS_GEOM_SPHERE, PHYS_GEOM_BOX, 0, "sphere-box");
  random_pair(PHYS_GEOM_CAPSULE, PHYS_GEOM_CAPSULE, 0, "capsule-capsule");
  random_pair(PHYS_GEOM_CAPSULE, PHYS_GEOM_BOX, 0.0527, "capsule-box");
  random_pair(PHYS_GEOM_BOX, PHYS_GEOM_BOX, 0.0527, "box-box");
  phys_free_data(D);
  phys_free_model(M);
  return test_done();
}

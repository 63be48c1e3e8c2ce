// test_convex.c - convex collision (support functions, GJK, EPA, manifolds) against analytic answers and
// independent oracles: exact box-box distances by features, penetration depth by the separating-axis
// theorem (15 axes), sphere/box closed forms, A's closed-form box-box, plus symmetry and degenerate inputs.
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision.h"
#include "convex.h"
#include "mesh.h"
#include "rng.h"
#include "rot.h"
#include "spec.h"
#include "test.h"

//---------------------------------------------------------------------------------------------------------
// scene: geoms on the world body, poses written straight into geom_xpos / geom_xmat

enum {
  G_CUBEA = 0,   // mesh box 0.1 0.2 0.3
  G_CUBEB,       // mesh box 0.25 0.15 0.05
  G_BOXA,        // box 0.1 0.2 0.3
  G_BOXB,        // box 0.25 0.15 0.05
  G_ICOA,        // icosphere mesh, circumradius 0.2
  G_ICOB,        // icosphere mesh, circumradius 0.3
  G_SPHERE,      // sphere 0.2
  G_CAPSULE,     // capsule 0.05, half-length 0.2
  G_CYLA,        // cylinder 0.1, half-height 0.2
  G_CYLB,        // cylinder 0.15, half-height 0.05
  G_ELLIPSOID,   // ellipsoid 0.1 0.2 0.3
  G_PLANE,       // plane
  G_GROUND,      // box 1 1 0.1
  G_CUBE,        // mesh cube, half size 0.1
  G_NGEOM
};

static const double HA[3] = {0.1, 0.2, 0.3}, HB[3] = {0.25, 0.15, 0.05};

// box corners (half sizes h): 8 vertices
static void box_verts(double* v, const double h[3]) {
  for (int i = 0; i < 8; i++) {
    v[3 * i] = i & 1 ? h[0] : -h[0];
    v[3 * i + 1] = i & 2 ? h[1] : -h[1];
    v[3 * i + 2] = i & 4 ? h[2] : -h[2];
  }
}

// icosphere: icosahedron subdivided `level` times, vertices on the sphere of radius r; returns the count
// (v holds up to 642 vertices; edges midpoints found by search, fine at this size)
static int icosphere(double* v, double r, int level) {
  const double t = (1 + sqrt(5.0)) / 2;
  const double base[12][3] = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                              {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  static const int f0[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                                {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
                                {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
  static int face[2][1280][3];
  int nv = 12, nf = 20, cur = 0;
  for (int i = 0; i < 12; i++) {
    double l = sqrt(1 + t * t);
    for (int k = 0; k < 3; k++) v[3 * i + k] = base[i][k] / l;
  }
  memcpy(face[0], f0, sizeof(f0));
  for (int lv = 0; lv < level; lv++) {
    int nn = 0;
    for (int f = 0; f < nf; f++) {
      int mid[3];
      for (int e = 0; e < 3; e++) {
        int a = face[cur][f][e], b = face[cur][f][(e + 1) % 3];
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = v[3 * a + k] + v[3 * b + k];
        double l = phys_norm3(p);
        for (int k = 0; k < 3; k++) p[k] /= l;
        int found = -1;
        for (int q = 0; q < nv && found < 0; q++)
          if (fabs(v[3 * q] - p[0]) + fabs(v[3 * q + 1] - p[1]) + fabs(v[3 * q + 2] - p[2]) < 1e-12) found = q;
        if (found < 0) {
          memcpy(v + 3 * nv, p, sizeof(p));
          found = nv++;
        }
        mid[e] = found;
      }
      const int* F = face[cur][f];
      int nf4[4][3] = {{F[0], mid[0], mid[2]}, {F[1], mid[1], mid[0]}, {F[2], mid[2], mid[1]}, {mid[0], mid[1], mid[2]}};
      memcpy(face[1 - cur][nn], nf4, sizeof(nf4));
      nn += 4;
    }
    nf = nn;
    cur = 1 - cur;
  }
  for (int i = 0; i < 3 * nv; i++) v[i] *= r;
  return nv;
}

// add a mesh of nv vertices (copied) to the spec; returns its index
static int add_mesh(physSpec* s, const char* name, const double* v, int nv) {
  int i = phys_spec_add_mesh(s);
  snprintf(s->mesh[i].name, PHYS_NAMELEN, "%s", name);
  s->mesh[i].vert = malloc(sizeof(double) * 3 * (size_t)nv);
  memcpy(s->mesh[i].vert, v, sizeof(double) * 3 * (size_t)nv);
  s->mesh[i].nvert = nv;
  return i;
}

// add a geom of the given type and sizes on the world body (mesh index for meshes)
static void add_geom(physSpec* s, int type, double a, double b, double c, int mesh) {
  int g = phys_spec_add_geom(s, 0, type);
  s->geom[g].size[0] = a, s->geom[g].size[1] = b, s->geom[g].size[2] = c;
  s->geom[g].mesh = mesh;
}

static physModel* M;
static physData* D;

// the test scene (geoms in enum order)
static void build_scene(void) {
  physSpec* s = phys_spec_new();
  double v[642 * 3];
  box_verts(v, HA);
  int ma = add_mesh(s, "cubeA", v, 8);
  box_verts(v, HB);
  int mb = add_mesh(s, "cubeB", v, 8);
  int n = icosphere(v, 0.2, 2);
  int ia = add_mesh(s, "icoA", v, n);
  n = icosphere(v, 0.3, 3);
  int ib = add_mesh(s, "icoB", v, n);
  box_verts(v, (double[3]){0.1, 0.1, 0.1});
  int mc = add_mesh(s, "cube", v, 8);
  add_geom(s, PHYS_GEOM_MESH, 0, 0, 0, ma);
  add_geom(s, PHYS_GEOM_MESH, 0, 0, 0, mb);
  add_geom(s, PHYS_GEOM_BOX, HA[0], HA[1], HA[2], -1);
  add_geom(s, PHYS_GEOM_BOX, HB[0], HB[1], HB[2], -1);
  add_geom(s, PHYS_GEOM_MESH, 0, 0, 0, ia);
  add_geom(s, PHYS_GEOM_MESH, 0, 0, 0, ib);
  add_geom(s, PHYS_GEOM_SPHERE, 0.2, 0, 0, -1);
  add_geom(s, PHYS_GEOM_CAPSULE, 0.05, 0.2, 0, -1);
  add_geom(s, PHYS_GEOM_CYLINDER, 0.1, 0.2, 0, -1);
  add_geom(s, PHYS_GEOM_CYLINDER, 0.15, 0.05, 0, -1);
  add_geom(s, PHYS_GEOM_ELLIPSOID, 0.1, 0.2, 0.3, -1);
  add_geom(s, PHYS_GEOM_PLANE, 5, 5, 0.1, -1);
  add_geom(s, PHYS_GEOM_BOX, 1, 1, 0.1, -1);
  add_geom(s, PHYS_GEOM_MESH, 0, 0, 0, mc);
  physLog log = {0};
  M = phys_compile(s, &log);
  if (!M) {
    fprintf(stderr, "compile failed: %s\n", log.error);
    exit(1);
  }
  phys_spec_free(s);
  D = phys_make_data(M);
}

// pose of geom g: position and rotation quaternion (w first, normalized here)
static void set_pose(int g, const double pos[3], const double quat[4]) {
  double q[4] = {quat[0], quat[1], quat[2], quat[3]};
  phys_quat_normalize(q);
  phys_copy3(D->geom_xpos + 3 * g, pos);
  phys_quat2mat(D->geom_xmat + 9 * g, q);
}

static const double QI[4] = {1, 0, 0, 0};

// random unit quaternion (uniform: normalized 4-d Gaussian by Box-Muller)
static void random_quat(double q[4], physRng* rng) {
  for (int k = 0; k < 4; k += 2) {
    double u1 = fmax(phys_rng_uniform(rng), 1e-300), u2 = phys_rng_uniform(rng);
    q[k] = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
    q[k + 1] = sqrt(-2 * log(u1)) * sin(2 * M_PI * u2);
  }
  phys_quat_normalize(q);
}

// contacts of g1, g2 by the convex routines (convex_plane when g1 is the plane)
static int collide(int g1, int g2, double margin, physContact* c) {
  memset(c, 0, sizeof(physContact) * PHYS_MAXPAIRCON);
  if (M->geom_type[g1] == PHYS_GEOM_PLANE) return phys_collide_convex_plane(M, D, g1, g2, margin, c);
  return phys_collide_convex_convex(M, D, g1, g2, margin, c);
}

// minimum distance over n contacts (DBL_MAX if none)
static double min_dist(const physContact* c, int n) {
  double d = DBL_MAX;
  for (int i = 0; i < n; i++) d = fmin(d, c[i].dist);
  return d;
}

// 1 if every number of the n contacts is finite and every frame orthonormal
static int contacts_finite(const physContact* c, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(c[i].dist)) return 0;
    for (int k = 0; k < 3; k++)
      if (!isfinite(c[i].pos[k])) return 0;
    for (int k = 0; k < 9; k++)
      if (!isfinite(c[i].frame[k])) return 0;
    if (fabs(phys_norm3(c[i].frame) - 1) > 1e-12) return 0;
  }
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// independent oracles

// r = a - b
static void sub3_test(double r[3], const double a[3], const double b[3]) {
  for (int k = 0; k < 3; k++) r[k] = a[k] - b[k];
}

// distance from point p (world) to the solid box (centre c, rotation R, half sizes h): |p_l - clamp(p_l)|
static double point_box_dist(const double p[3], const double c[3], const double R[9], const double h[3]) {
  double e[3], pl[3], s = 0;
  for (int k = 0; k < 3; k++) e[k] = p[k] - c[k];
  phys_matT_vec3(pl, R, e);
  for (int k = 0; k < 3; k++) {
    double q = fmax(-h[k], fmin(h[k], pl[k]));
    s += (pl[k] - q) * (pl[k] - q);
  }
  return sqrt(s);
}

// distance from point p to segment (q0, q1)
static double point_segment_dist(const double p[3], const double q0[3], const double q1[3]) {
  double e[3], w[3];
  for (int k = 0; k < 3; k++) e[k] = q1[k] - q0[k], w[k] = p[k] - q0[k];
  double t = phys_dot3(e, e) > 0 ? fmax(0, fmin(1, phys_dot3(w, e) / phys_dot3(e, e))) : 0;
  for (int k = 0; k < 3; k++) w[k] -= t * e[k];
  return phys_norm3(w);
}

// distance between segments: golden-section search of the convex s -> dist(P(s), Q) (200 steps)
static double segment_segment_dist(const double p0[3], const double p1[3], const double q0[3], const double q1[3]) {
  double lo = 0, hi = 1, g = (sqrt(5.0) - 1) / 2;
  double best = fmin(point_segment_dist(p0, q0, q1), point_segment_dist(p1, q0, q1));
  for (int it = 0; it < 200; it++) {
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo), pa[3], pb[3];
    for (int k = 0; k < 3; k++) pa[k] = p0[k] + a * (p1[k] - p0[k]), pb[k] = p0[k] + b * (p1[k] - p0[k]);
    double fa = point_segment_dist(pa, q0, q1), fb = point_segment_dist(pb, q0, q1);
    best = fmin(best, fmin(fa, fb));
    if (fa < fb) hi = b;
    else lo = a;
  }
  return best;
}

// world corners of a box
static void box_corners(double v[8][3], const double c[3], const double R[9], const double h[3]) {
  for (int i = 0; i < 8; i++) {
    double l[3] = {i & 1 ? h[0] : -h[0], i & 2 ? h[1] : -h[1], i & 4 ? h[2] : -h[2]};
    phys_mat_vec3(v[i], R, l);
    for (int k = 0; k < 3; k++) v[i][k] += c[k];
  }
}

// exact distance between separated boxes: min over corner-to-solid-box distances and edge-edge distances
static double box_box_dist(const double ca[3], const double Ra[9], const double ha[3], const double cb[3],
                           const double Rb[9], const double hb[3]) {
  double va[8][3], vb[8][3], d = DBL_MAX;
  box_corners(va, ca, Ra, ha);
  box_corners(vb, cb, Rb, hb);
  for (int i = 0; i < 8; i++) {
    d = fmin(d, point_box_dist(va[i], cb, Rb, hb));
    d = fmin(d, point_box_dist(vb[i], ca, Ra, ha));
  }
  // edges: corner pairs differing in one bit
  for (int i = 0; i < 8; i++)
    for (int bi = 0; bi < 3; bi++) {
      int i2 = i | (1 << bi);
      if (i2 == i) continue;
      for (int j = 0; j < 8; j++)
        for (int bj = 0; bj < 3; bj++) {
          int j2 = j | (1 << bj);
          if (j2 == j) continue;
          d = fmin(d, segment_segment_dist(va[i], va[i2], vb[j], vb[j2]));
        }
    }
  return d;
}

// penetration depth of overlapping boxes by the separating-axis theorem: min over the 15 axes u of the
// overlap h_A(u) + h_B(-u) - ... = (sum_i ha_i |u.a_i| + sum_i hb_i |u.b_i|) - |u.(cb - ca)|
static double box_box_depth(const double ca[3], const double Ra[9], const double ha[3], const double cb[3],
                            const double Rb[9], const double hb[3]) {
  double ax[15][3], dc[3], best = DBL_MAX;
  int n = 0;
  for (int k = 0; k < 3; k++) {
    for (int q = 0; q < 3; q++) ax[n][q] = Ra[3 * q + k];
    n++;
    for (int q = 0; q < 3; q++) ax[n][q] = Rb[3 * q + k];
    n++;
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double a[3] = {Ra[i], Ra[3 + i], Ra[6 + i]}, b[3] = {Rb[j], Rb[3 + j], Rb[6 + j]};
      phys_cross3(ax[n], a, b);
      if (phys_normalize3(ax[n]) > 1e-9) n++;
    }
  for (int k = 0; k < 3; k++) dc[k] = cb[k] - ca[k];
  for (int i = 0; i < n; i++) {
    double s = -fabs(phys_dot3(ax[i], dc));
    for (int k = 0; k < 3; k++) {
      double a[3] = {Ra[k], Ra[3 + k], Ra[6 + k]}, b[3] = {Rb[k], Rb[3 + k], Rb[6 + k]};
      s += ha[k] * fabs(phys_dot3(ax[i], a)) + hb[k] * fabs(phys_dot3(ax[i], b));
    }
    best = fmin(best, s);
  }
  return best;
}

//---------------------------------------------------------------------------------------------------------
// tests

// support points: d.s(d) equals the analytic support function h(d) of every shape; meshes: max over all
// vertices (checks the hull too)
static void test_support(void) {
  physRng rng;
  phys_rng_seed(&rng, 1);
  int geoms[] = {G_CUBEA, G_BOXA, G_ICOB, G_SPHERE, G_CAPSULE, G_CYLA, G_ELLIPSOID};
  double worst = 0;
  for (int t = 0; t < 200; t++) {
    double q[4], pos[3], dir[3];
    random_quat(q, &rng);
    for (int k = 0; k < 3; k++) pos[k] = phys_rng_range(&rng, -1, 1), dir[k] = phys_rng_range(&rng, -1, 1);
    for (size_t i = 0; i < sizeof(geoms) / sizeof(geoms[0]); i++) {
      int g = geoms[i];
      set_pose(g, pos, q);
      physConvex c;
      phys_convex_init(&c, M, D, g);
      double s[3], dl[3], h = 0;
      phys_convex_support(s, &c, dir);
      phys_matT_vec3(dl, D->geom_xmat + 9 * g, dir);
      const double* sz = M->geom_size + 3 * g;
      double dxy = sqrt(dl[0] * dl[0] + dl[1] * dl[1]);
      switch (M->geom_type[g]) {
        case PHYS_GEOM_SPHERE: h = sz[0] * phys_norm3(dl); break;
        case PHYS_GEOM_CAPSULE: h = sz[1] * fabs(dl[2]) + sz[0] * phys_norm3(dl); break;
        case PHYS_GEOM_CYLINDER: h = sz[0] * dxy + sz[1] * fabs(dl[2]); break;
        case PHYS_GEOM_BOX: h = sz[0] * fabs(dl[0]) + sz[1] * fabs(dl[1]) + sz[2] * fabs(dl[2]); break;
        case PHYS_GEOM_ELLIPSOID:
          h = sqrt(sz[0] * sz[0] * dl[0] * dl[0] + sz[1] * sz[1] * dl[1] * dl[1] + sz[2] * sz[2] * dl[2] * dl[2]);
          break;
        case PHYS_GEOM_MESH: {
          int id = M->geom_dataid[g];
          h = -DBL_MAX;
          for (int v = 0; v < M->mesh_vertnum[id]; v++) h = fmax(h, phys_dot3(dl, M->mesh_vert + 3 * (M->mesh_vertadr[id] + v)));
          break;
        }
      }
      double e = fabs(phys_dot3(dir, s) - phys_dot3(dir, pos) - h);
      worst = fmax(worst, e);
      CHECK_MSG(e < 1e-14, "geom %d: support %g vs %g", g, phys_dot3(dir, s) - phys_dot3(dir, pos), h);
    }
  }
  printf("support functions: worst |d.s - h(d)| = %.2g\n", worst);
  // a zero direction gives a finite point on the shape
  physConvex c;
  phys_convex_init(&c, M, D, G_CYLA);
  double s[3], z[3] = {0, 0, 0};
  phys_convex_support(s, &c, z);
  CHECK(isfinite(s[0]) && isfinite(s[1]) && isfinite(s[2]));
}

// GJK distance of box meshes = exact box-box distance (feature oracle); mesh vs box geom the same
static void test_gjk_boxes(void) {
  physRng rng;
  phys_rng_seed(&rng, 2);
  double worst = 0;
  int n = 0, maxiter = 0;
  for (int t = 0; t < 300; t++) {
    double qa[4], qb[4], pa[3] = {0, 0, 0}, pb[3];
    random_quat(qa, &rng);
    random_quat(qb, &rng);
    for (int k = 0; k < 3; k++) pb[k] = phys_rng_range(&rng, -0.8, 0.8);
    set_pose(G_CUBEA, pa, qa);
    set_pose(G_CUBEB, pb, qb);
    set_pose(G_BOXA, pa, qa);
    double Ra[9], Rb[9];
    memcpy(Ra, D->geom_xmat + 9 * G_CUBEA, sizeof(Ra));
    memcpy(Rb, D->geom_xmat + 9 * G_CUBEB, sizeof(Rb));
    if (box_box_depth(pa, Ra, HA, pb, Rb, HB) > -1e-3) continue;  // the SAT proves separation
    double exact = box_box_dist(pa, Ra, HA, pb, Rb, HB);
    physConvex a, b, ab;
    phys_convex_init(&a, M, D, G_CUBEA);
    phys_convex_init(&b, M, D, G_CUBEB);
    phys_convex_init(&ab, M, D, G_BOXA);
    physGjkResult r, r2;
    CHECK(phys_convex_distance(&r, &a, &b, 10) == 1);
    CHECK(phys_convex_distance(&r2, &ab, &b, 10) == 1);
    CHECK(!r.penetrating);
    worst = fmax(worst, fabs(r.dist - exact));
    maxiter = r.iter > maxiter ? r.iter : maxiter;
    CHECK_NEAR(r.dist, exact, 1e-9);
    CHECK_NEAR(r2.dist, exact, 1e-9);
    // witness points: p2 - p1 = dist * normal, p1 on box A's surface, p2 on box B's
    double e[3];
    for (int k = 0; k < 3; k++) e[k] = r.p2[k] - r.p1[k] - r.dist * r.normal[k];
    CHECK(phys_norm3(e) < 1e-9);
    CHECK(point_box_dist(r.p1, pb, Rb, HB) < exact + 1e-9 && fabs(point_box_dist(r.p2, pa, Ra, HA) - exact) < 1e-9);
    // beyond the cutoff: not reported
    CHECK(phys_convex_distance(&r, &a, &b, exact - 1e-3) == 0);
    n++;
  }
  CHECK(n > 50);
  printf("GJK box meshes: %d separated poses, worst |dist - exact| = %.2g, max iterations %d\n", n, worst, maxiter);
}

// sphere-sphere through icosphere meshes: exact when a vertex of each faces the other, and bounded by
// the polyhedral approximation (inradius) in any orientation; sphere geom vs icosphere mesh likewise
static void test_gjk_spheres(void) {
  // icosahedron vertex (0, 1, t)/|.| lies on the rotation of x taken to it: align it with the centre line
  const double t = (1 + sqrt(5.0)) / 2, l = sqrt(1 + t * t);
  double vtx[3] = {0, 1 / l, t / l}, qa[4], qb[4], x[3] = {1, 0, 0}, mx[3] = {-1, 0, 0};
  // qa takes vtx to +x, qb takes vtx to -x: rotation about vtx x target by the angle between
  double axis[3];
  phys_cross3(axis, vtx, x);
  phys_axisangle2quat(qa, axis, acos(phys_dot3(vtx, x)));
  phys_cross3(axis, vtx, mx);
  phys_axisangle2quat(qb, axis, acos(phys_dot3(vtx, mx)));
  double pa[3] = {0.1, -0.2, 0.3}, pb[3] = {0.1 + 0.2 + 0.3 + 0.05, -0.2, 0.3};
  set_pose(G_ICOA, pa, qa);
  set_pose(G_ICOB, pb, qb);
  physConvex a, b, s;
  phys_convex_init(&a, M, D, G_ICOA);
  phys_convex_init(&b, M, D, G_ICOB);
  physGjkResult r;
  CHECK(phys_convex_distance(&r, &a, &b, 1) == 1);
  CHECK_NEAR(r.dist, 0.05, 1e-12);
  CHECK_NEAR(r.normal[0], 1, 1e-12);
  // sphere geom (radius 0.2, a point core) vs icosphere B: same distance
  set_pose(G_SPHERE, pa, QI);
  phys_convex_init(&s, M, D, G_SPHERE);
  CHECK(phys_convex_distance(&r, &s, &b, 1) == 1);
  CHECK_NEAR(r.dist, 0.05, 1e-12);
  CHECK_NEAR(r.p1[0], 0.3, 1e-12);  // the sphere's surface point
  // overlap of 0.02 along the line: the sphere's core (its centre) is still outside B, so GJK on the
  // core gives the exact depth (no EPA)
  pb[0] = 0.1 + 0.5 - 0.02;
  set_pose(G_ICOB, pb, qb);
  phys_convex_init(&b, M, D, G_ICOB);
  CHECK(phys_convex_distance(&r, &s, &b, 1) == 1);
  CHECK(!r.penetrating);
  CHECK_NEAR(r.dist, -0.02, 1e-12);
  // random orientations: sphere distance <= mesh distance <= sphere distance + gap of both inradii
  physRng rng;
  phys_rng_seed(&rng, 3);
  double rinA = DBL_MAX, rinB = DBL_MAX;
  for (int f = 0; f < M->mesh_hullfacenum[M->geom_dataid[G_ICOA]]; f++)
    rinA = fmin(rinA, M->hull_facenormal[4 * (M->mesh_hullfaceadr[M->geom_dataid[G_ICOA]] + f) + 3]);
  for (int f = 0; f < M->mesh_hullfacenum[M->geom_dataid[G_ICOB]]; f++)
    rinB = fmin(rinB, M->hull_facenormal[4 * (M->mesh_hullfaceadr[M->geom_dataid[G_ICOB]] + f) + 3]);
  for (int k = 0; k < 100; k++) {
    double q1[4], q2[4], dir[3];
    random_quat(q1, &rng);
    random_quat(q2, &rng);
    for (int j = 0; j < 3; j++) dir[j] = phys_rng_range(&rng, -1, 1);
    phys_normalize3(dir);
    double gap = phys_rng_range(&rng, 0.01, 0.3), p2[3];
    for (int j = 0; j < 3; j++) p2[j] = pa[j] + (0.5 + gap) * dir[j];
    set_pose(G_ICOA, pa, q1);
    set_pose(G_ICOB, p2, q2);
    phys_convex_init(&a, M, D, G_ICOA);
    phys_convex_init(&b, M, D, G_ICOB);
    CHECK(phys_convex_distance(&r, &a, &b, 1) == 1);
    CHECK(r.dist >= gap - 1e-12 && r.dist <= gap + (0.2 - rinA) + (0.3 - rinB) + 1e-12);
  }
}

// EPA depth of overlapping box meshes = SAT depth over the 15 axes (exact for polytopes); the normal
// separates them: translating B by depth * normal leaves them touching
static void test_epa_boxes(void) {
  physRng rng;
  phys_rng_seed(&rng, 4);
  double worst = 0;
  int n = 0, maxiter = 0;
  for (int t = 0; t < 300; t++) {
    double qa[4], qb[4], pa[3] = {0.2, 0.1, -0.3}, pb[3];
    random_quat(qa, &rng);
    random_quat(qb, &rng);
    for (int k = 0; k < 3; k++) pb[k] = pa[k] + phys_rng_range(&rng, -0.35, 0.35);
    set_pose(G_CUBEA, pa, qa);
    set_pose(G_CUBEB, pb, qb);
    double Ra[9], Rb[9];
    memcpy(Ra, D->geom_xmat + 9 * G_CUBEA, sizeof(Ra));
    memcpy(Rb, D->geom_xmat + 9 * G_CUBEB, sizeof(Rb));
    double depth = box_box_depth(pa, Ra, HA, pb, Rb, HB);
    if (depth < 1e-3) continue;
    physConvex a, b;
    phys_convex_init(&a, M, D, G_CUBEA);
    phys_convex_init(&b, M, D, G_CUBEB);
    physGjkResult r;
    CHECK(phys_convex_distance(&r, &a, &b, 0) == 1);
    CHECK(r.penetrating);
    worst = fmax(worst, fabs(r.dist + depth));
    maxiter = r.iter > maxiter ? r.iter : maxiter;
    CHECK_NEAR(r.dist, -depth, 1e-9);
    // B moved by depth along the normal touches A: SAT depth there is 0
    double pb2[3];
    for (int k = 0; k < 3; k++) pb2[k] = pb[k] + depth * r.normal[k];
    CHECK_NEAR(box_box_depth(pa, Ra, HA, pb2, Rb, HB), 0, 1e-9);
    n++;
  }
  CHECK(n > 50);
  printf("EPA box meshes: %d overlapping poses, worst |depth - SAT| = %.2g, max iterations %d\n", n, worst, maxiter);
}

// EPA against closed forms: sphere centre inside a box mesh (depth r + distance to the nearest face),
// cylinder standing in a box, ellipsoid on a box, parallel cylinders (curved: tolerance of the EPA cap)
static void test_epa_analytic(void) {
  physConvex a, b;
  physGjkResult r;
  // sphere (0.2) centred at (0.03, 0.15, -0.01) in cube A (0.1 0.2 0.3): nearest face y = 0.2 at 0.05
  set_pose(G_CUBEA, (double[3]){0, 0, 0}, QI);
  set_pose(G_SPHERE, (double[3]){0.03, 0.15, -0.01}, QI);
  phys_convex_init(&a, M, D, G_SPHERE);
  phys_convex_init(&b, M, D, G_CUBEA);
  CHECK(phys_convex_distance(&r, &a, &b, 0) == 1);
  CHECK_NEAR(r.dist, -(0.2 + 0.05), 1e-12);
  CHECK_NEAR(r.normal[1], -1, 1e-12);  // from the sphere into the cube: -y
  // cylinder A (r 0.1, h 0.2) standing on ground box (top z = 0.1), penetrating 0.004; tilted ground too
  double q[4];
  phys_axisangle2quat(q, (double[3]){1, 2, 3}, 0.7);
  double up[3], c0[3] = {0.3, -0.2, 0.5}, pc[3];
  phys_quat_rotate(up, q, (double[3]){0, 0, 1});
  for (int k = 0; k < 3; k++) pc[k] = c0[k] + (0.1 + 0.2 - 0.004) * up[k];
  set_pose(G_GROUND, c0, q);
  set_pose(G_CYLA, pc, q);
  phys_convex_init(&a, M, D, G_CYLA);
  phys_convex_init(&b, M, D, G_GROUND);
  CHECK(phys_convex_distance(&r, &a, &b, 0) == 1);
  CHECK_NEAR(r.dist, -0.004, 1e-10);
  for (int k = 0; k < 3; k++) CHECK_NEAR(r.normal[k], -up[k], 1e-9);
  // ellipsoid (0.1 0.2 0.3) above the ground box, penetrating 0.01 with its z radius
  for (int k = 0; k < 3; k++) pc[k] = c0[k] + (0.1 + 0.3 - 0.01) * up[k];
  set_pose(G_ELLIPSOID, pc, q);
  phys_convex_init(&a, M, D, G_ELLIPSOID);
  CHECK(phys_convex_distance(&r, &a, &b, 0) == 1);
  CHECK_NEAR(r.dist, -0.01, 1e-6);
  printf("EPA ellipsoid on box: depth error %.2g (curved, %d iterations)\n", fabs(r.dist + 0.01), r.iter);
  // parallel cylinders A (0.1) and B (0.15), axes along x, centres 0.24 apart: depth 0.01
  double qx[4];
  phys_axisangle2quat(qx, (double[3]){0, 1, 0}, M_PI / 2);
  set_pose(G_CYLA, (double[3]){0, 0, 0}, qx);
  set_pose(G_CYLB, (double[3]){0.0, 0.24 * cos(0.3), 0.24 * sin(0.3)}, qx);
  phys_convex_init(&a, M, D, G_CYLA);
  phys_convex_init(&b, M, D, G_CYLB);
  CHECK(phys_convex_distance(&r, &a, &b, 0) == 1);
  CHECK_NEAR(r.dist, -0.01, 1e-4);
  printf("EPA parallel cylinders: depth error %.2g (curved, %d iterations)\n", fabs(r.dist + 0.01), r.iter);
  // separated parallel cylinders: GJK distance (curved; converges to 1e-9)
  set_pose(G_CYLB, (double[3]){0.0, 0.3 * cos(0.3), 0.3 * sin(0.3)}, qx);
  phys_convex_init(&b, M, D, G_CYLB);
  CHECK(phys_convex_distance(&r, &a, &b, 1) == 1);
  CHECK_NEAR(r.dist, 0.05, 1e-9);
}

// a mesh cube on a plane gives its 4 bottom corners with the exact depth; tilted: the lowest corner
static void test_mesh_plane(void) {
  physContact c[PHYS_MAXPAIRCON];
  double q[4];
  phys_axisangle2quat(q, (double[3]){0, 0, 1}, 0.4);
  set_pose(G_PLANE, (double[3]){0, 0, 0}, QI);
  set_pose(G_CUBE, (double[3]){0.2, 0.1, 0.1 - 0.002}, q);
  int n = collide(G_PLANE, G_CUBE, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.002, 1e-15);
    CHECK_NEAR(c[i].frame[2], 1, 0);
    CHECK_NEAR(c[i].pos[2], -0.001, 1e-15);
    CHECK_NEAR(hypot(c[i].pos[0] - 0.2, c[i].pos[1] - 0.1), 0.1 * sqrt(2.0), 1e-15);
  }
  CHECK(contacts_finite(c, n));
  // all four corners distinct
  int distinct = 1;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (hypot(c[i].pos[0] - c[j].pos[0], c[i].pos[1] - c[j].pos[1]) < 0.1) distinct = 0;
  CHECK(distinct);
  // within the margin but not touching: still 4, positive distance
  set_pose(G_CUBE, (double[3]){0.2, 0.1, 0.1 + 0.003}, q);
  CHECK(collide(G_PLANE, G_CUBE, 0.005, c) == 4 && fabs(c[0].dist - 0.003) < 1e-15);
  CHECK(collide(G_PLANE, G_CUBE, 0.002, c) == 0);
  // balanced on an edge (45 degrees about x): 2 points
  phys_axisangle2quat(q, (double[3]){1, 0, 0}, M_PI / 4);
  set_pose(G_CUBE, (double[3]){0, 0, 0.1 * sqrt(2.0) - 0.001}, q);
  n = collide(G_PLANE, G_CUBE, 0, c);
  CHECK(n == 2);
  for (int i = 0; i < n; i++) CHECK_NEAR(c[i].dist, -0.001, 1e-15);
  // on a corner: 1 point; icosphere mesh on a plane with a tilted plane normal
  phys_axisangle2quat(q, (double[3]){1, 1, 0}, 0.9553166181245093);  // body diagonal vertical
  set_pose(G_CUBE, (double[3]){0, 0, 0.1 * sqrt(3.0) - 0.001}, q);
  n = collide(G_PLANE, G_CUBE, 0, c);
  CHECK(n == 1 && fabs(c[0].dist + 0.001) < 1e-12);
}

// cylinder on a plane (the convex plane routine): flat gives 4 rim points with the exact depth, on its
// side a 2-point line contact, tilted the exact deepest rim point
static void test_cylinder_plane(void) {
  physContact c[PHYS_MAXPAIRCON];
  set_pose(G_PLANE, (double[3]){0, 0, 0}, QI);
  set_pose(G_CYLA, (double[3]){0.1, 0.2, 0.2 - 0.003}, QI);
  int n = collide(G_PLANE, G_CYLA, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.003, 1e-15);
    CHECK_NEAR(hypot(c[i].pos[0] - 0.1, c[i].pos[1] - 0.2), 0.1, 1e-15);  // on the rim
  }
  // on its side (axis along y): 2 points at the two ends
  double q[4];
  phys_axisangle2quat(q, (double[3]){1, 0, 0}, M_PI / 2);
  set_pose(G_CYLA, (double[3]){0, 0, 0.1 - 0.002}, q);
  n = collide(G_PLANE, G_CYLA, 0, c);
  CHECK(n == 2);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.002, 1e-15);
    CHECK_NEAR(fabs(c[i].pos[1]), 0.2, 1e-15);
  }
  CHECK(n == 2 && c[0].pos[1] * c[1].pos[1] < 0);
  // tilted by 0.3 rad: deepest rim point exact: centre height - h cos - r sin
  phys_axisangle2quat(q, (double[3]){1, 0, 0}, 0.3);
  double z = 0.2 * cos(0.3) + 0.1 * sin(0.3) - 0.001;
  set_pose(G_CYLA, (double[3]){0, 0, z}, q);
  n = collide(G_PLANE, G_CYLA, 0, c);
  CHECK(n == 1);
  CHECK_NEAR(min_dist(c, n), -0.001, 1e-15);
}

// a mesh cube resting on a box (and on a mesh box, rotated) gives 4 points with the right depth and the
// box's face normal; a small box on a large mesh face, a capsule lying on a mesh, a sphere on a mesh
// the n manifold points c of geoms g1, g2 record (physid.h, convex.h) one geom's face as the reference (a box's
// FACE 2k + side or a mesh's hull face, whose world normal is the contact normal up to its sign) and the other's
// incident feature of kind inc, each point with its own number among the clipped points (physContact.clip)
static void check_manifold_record(const physContact* c, int n, int g1, int g2, int inc) {
  int seen = 0;
  for (int i = 0; i < n; i++) {
    int r = PHYS_FEATURE_FLAGS(c[i].feature[0]) == PHYS_FEATF_REF ? 0 : 1, fr = c[i].feature[r];
    int fi = c[i].feature[1 - r], g = r ? g2 : g1, id = PHYS_CONVEX_CLIP_ID(fr), pt = c[i].clip;
    CHECK_MSG(PHYS_FEATURE_FLAGS(fr) == PHYS_FEATF_REF && PHYS_FEATURE_KIND(fr) == PHYS_FEAT_FACE, "ref %#x", fr);
    CHECK_MSG(PHYS_FEATURE_FLAGS(fi) == PHYS_FEATF_INC && PHYS_FEATURE_KIND(fi) == inc, "incident %#x", fi);
    double nl[3] = {0, 0, 0}, nw[3];
    if (M->geom_type[g] == PHYS_GEOM_BOX) {
      nl[id / 2] = id % 2 ? 1 : -1;
    } else {
      const double* fn = M->hull_facenormal + 4 * (M->mesh_hullfaceadr[M->geom_dataid[g]] + id);
      phys_copy3(nl, fn);
    }
    phys_mat_vec3(nw, D->geom_xmat + 9 * g, nl);
    CHECK_NEAR(fabs(phys_dot3(nw, c[i].frame)), 1, 1e-12);
    CHECK_MSG(pt >= 0 && pt < 32 && !(seen & 1 << pt), "point %d", pt);
    seen |= 1 << pt;
  }
}

static void test_mesh_box_manifold(void) {
  physContact c[PHYS_MAXPAIRCON];
  double q[4], qg[4];
  phys_axisangle2quat(qg, (double[3]){0.3, -0.2, 1}, 0.5);
  phys_axisangle2quat(q, (double[3]){0, 0, 1}, 0.6);
  double qc[4];
  phys_quat_mul(qc, qg, q);  // cube rotated 0.6 about the ground's normal
  double up[3], c0[3] = {0.1, 0.2, -0.1}, pc[3];
  phys_quat_rotate(up, qg, (double[3]){0, 0, 1});
  for (int k = 0; k < 3; k++) pc[k] = c0[k] + (0.1 + 0.1 - 0.0015) * up[k];
  set_pose(G_GROUND, c0, qg);
  set_pose(G_CUBE, pc, qc);
  int n = collide(G_CUBE, G_GROUND, 0, c);  // mesh (g1) on box (g2): normal from cube into ground = -up
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.0015, 1e-12);
    for (int k = 0; k < 3; k++) CHECK_NEAR(c[i].frame[k], -up[k], 1e-12);
    // each point at the corner's distance from the cube's axis
    double e[3];
    for (int k = 0; k < 3; k++) e[k] = c[i].pos[k] - pc[k];
    double along = phys_dot3(e, up);
    CHECK_NEAR(along, -0.1 + 0.00075, 1e-12);
    CHECK_NEAR(sqrt(phys_dot3(e, e) - along * along), 0.1 * sqrt(2.0), 1e-12);
  }
  CHECK(contacts_finite(c, n));
  check_manifold_record(c, n, G_CUBE, G_GROUND, PHYS_FEAT_FACE);
  // the same against A's closed-form box-box with the cube as a box geom... through a box mesh (cube B)
  // resting on the ground: 4 corners of B's bottom face
  for (int k = 0; k < 3; k++) pc[k] = c0[k] + (0.1 + 0.05 - 0.001) * up[k];
  set_pose(G_CUBEB, pc, qc);
  n = collide(G_CUBEB, G_GROUND, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) CHECK_NEAR(c[i].dist, -0.001, 1e-12);
  // the mesh cube resting on mesh B's large face (mesh-mesh): 4 points
  set_pose(G_CUBEB, (double[3]){0, 0, 0}, QI);
  set_pose(G_CUBE, (double[3]){0.05, -0.02, 0.05 + 0.1 - 0.002}, q);
  n = collide(G_CUBEA == 0 ? G_CUBEB : G_CUBEB, G_CUBE, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.002, 1e-12);
    CHECK_NEAR(c[i].frame[2], 1, 1e-12);
  }
  // cube hanging over B's edge: the clipped polygon, still 4 points, all inside B's top face
  set_pose(G_CUBE, (double[3]){0.22, 0.0, 0.05 + 0.1 - 0.002}, QI);
  n = collide(G_CUBEB, G_CUBE, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK(c[i].pos[0] <= 0.25 + 1e-12 && c[i].pos[0] >= 0.12 - 1e-12);
    CHECK_NEAR(c[i].dist, -0.002, 1e-12);
  }
  check_manifold_record(c, n, G_CUBEB, G_CUBE, PHYS_FEAT_FACE);
  // capsule lying flat on mesh B: 2 points at the capsule's ends; tilted: 1
  double qy[4];
  phys_axisangle2quat(qy, (double[3]){0, 1, 0}, M_PI / 2);
  set_pose(G_CAPSULE, (double[3]){0.01, 0.02, 0.05 + 0.05 - 0.001}, qy);
  n = collide(G_CAPSULE, G_CUBEB, 0, c);
  CHECK(n == 2);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.001, 1e-12);
    CHECK_NEAR(c[i].frame[2], -1, 1e-12);
    CHECK_NEAR(fabs(c[i].pos[0] - 0.01), 0.2, 1e-12);
    CHECK(PHYS_FEATURE_FLAGS(c[i].feature[1]) == PHYS_FEATF_REF);   // mesh B's face; the capsule's segment
    CHECK(PHYS_FEATURE_KIND(c[i].feature[0]) == PHYS_FEAT_EDGE && PHYS_CONVEX_CLIP_ID(c[i].feature[0]) == 0);
  }
  check_manifold_record(c, n, G_CAPSULE, G_CUBEB, PHYS_FEAT_EDGE);
  phys_axisangle2quat(qy, (double[3]){0, 1, 0}, M_PI / 2 - 0.2);
  set_pose(G_CAPSULE, (double[3]){0.01, 0.02, 0.05 + 0.05 + 0.2 * sin(0.2) - 0.001}, qy);
  n = collide(G_CAPSULE, G_CUBEB, 0, c);
  CHECK(n == 1 && fabs(c[0].dist + 0.001) < 1e-12);
  // sphere on mesh B's top: one point, exact
  set_pose(G_SPHERE, (double[3]){0.1, 0.1, 0.05 + 0.2 - 0.003}, QI);
  n = collide(G_SPHERE, G_CUBEB, 0, c);
  CHECK(n == 1);
  CHECK_NEAR(c[0].dist, -0.003, 1e-12);
  CHECK_NEAR(c[0].pos[2], 0.05 - 0.0015, 1e-12);
  CHECK_NEAR(c[0].frame[2], -1, 1e-12);
}

// cylinder standing on a box: 4 rim points with the exact depth; lying on its side: 2; cylinders side by
// side: a 2-point line contact; a box resting on a cylinder's cap: clipped against the 16-gon
static void test_cylinder_manifolds(void) {
  physContact c[PHYS_MAXPAIRCON];
  set_pose(G_GROUND, (double[3]){0, 0, -0.1}, QI);
  set_pose(G_CYLA, (double[3]){0.3, 0.1, 0.2 - 0.002}, QI);
  int n = collide(G_CYLA, G_GROUND, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.002, 1e-12);
    CHECK_NEAR(c[i].frame[2], -1, 1e-12);
    CHECK_NEAR(hypot(c[i].pos[0] - 0.3, c[i].pos[1] - 0.1), 0.1, 1e-12);
  }
  double q[4];
  phys_axisangle2quat(q, (double[3]){1, 0, 0}, M_PI / 2);
  set_pose(G_CYLA, (double[3]){0.3, 0.1, 0.1 - 0.002}, q);
  n = collide(G_CYLA, G_GROUND, 0, c);
  CHECK(n == 2);
  for (int i = 0; i < n; i++) CHECK_NEAR(c[i].dist, -0.002, 1e-12);
  CHECK(n == 2 && fabs(fabs(c[0].pos[1] - c[1].pos[1]) - 0.4) < 1e-12);
  // cylinder on a mesh box (cube B top at z = 0.05): flat, 4 rim points
  set_pose(G_CUBEB, (double[3]){0, 0, 0}, QI);
  set_pose(G_CYLB, (double[3]){0.05, 0.0, 0.05 + 0.05 - 0.001}, QI);
  n = collide(G_CYLB, G_CUBEB, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.001, 1e-12);
    CHECK_NEAR(hypot(c[i].pos[0] - 0.05, c[i].pos[1]), 0.15, 1e-12);
  }
  // parallel cylinders along x, one above the other, overlapping 0.001: 2 points at the shorter's ends
  double qx[4];
  phys_axisangle2quat(qx, (double[3]){0, 1, 0}, M_PI / 2);
  set_pose(G_CYLA, (double[3]){0, 0, 0}, qx);
  set_pose(G_CYLB, (double[3]){0.02, 0, 0.25 - 0.001}, qx);
  n = collide(G_CYLA, G_CYLB, 0, c);
  CHECK(n == 2);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.001, 1e-5);
    CHECK_NEAR(c[i].frame[2], 1, 1e-5);
  }
  CHECK(n == 2 && fabs(fabs(c[0].pos[0] - c[1].pos[0]) - 0.1) < 1e-9);
  // a box (A: 0.1 0.2 0.3) standing on cylinder B's top cap (radius 0.15): its 0.2 x 0.4 bottom face
  // clipped by the cap: points inside the rim, depth exact, normal the cap's
  set_pose(G_CYLB, (double[3]){0, 0, 0}, QI);
  set_pose(G_BOXA, (double[3]){0.01, 0.0, 0.05 + 0.3 - 0.002}, QI);
  n = collide(G_CYLB, G_BOXA, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].dist, -0.002, 1e-12);
    CHECK_NEAR(c[i].frame[2], 1, 1e-12);
    CHECK(hypot(c[i].pos[0], c[i].pos[1]) <= 0.15 + 1e-12);
    CHECK(fabs(c[i].pos[0] - 0.01) <= 0.1 + 1e-12);
  }
}

// random poses: swapping the geoms gives the same distance and the opposite normal; mesh box vs box
// agrees with A's closed-form box-box (phys_collide_geoms) on the deepest distance
static void test_symmetry(void) {
  physRng rng;
  phys_rng_seed(&rng, 5);
  int pairs[][2] = {{G_CUBEA, G_CUBEB}, {G_CYLA, G_CUBEB}, {G_CYLA, G_CYLB}, {G_CAPSULE, G_CUBEA},
                    {G_SPHERE, G_CUBEB}, {G_ELLIPSOID, G_CUBEA}, {G_ICOA, G_CYLB}, {G_CAPSULE, G_CYLA},
                    {G_ELLIPSOID, G_CYLB}};
  int npairs = sizeof(pairs) / sizeof(pairs[0]), ncontact = 0, nbox = 0;
  double worst = 0, worstbox = 0;
  for (int t = 0; t < 400; t++) {
    int g1 = pairs[t % npairs][0], g2 = pairs[t % npairs][1];
    double q1[4], q2[4], p2[3];
    random_quat(q1, &rng);
    random_quat(q2, &rng);
    for (int k = 0; k < 3; k++) p2[k] = phys_rng_range(&rng, -0.35, 0.35);
    set_pose(g1, (double[3]){0, 0, 0}, q1);
    set_pose(g2, p2, q2);
    physContact c12[PHYS_MAXPAIRCON], c21[PHYS_MAXPAIRCON];
    int n12 = collide(g1, g2, 0.05, c12), n21 = collide(g2, g1, 0.05, c21);
    CHECK(contacts_finite(c12, n12) && contacts_finite(c21, n21));
    CHECK(n12 <= 4 && n21 <= 4);
    CHECK((n12 > 0) == (n21 > 0));
    if (n12 == 0 || n21 == 0) continue;
    ncontact++;
    double d12 = min_dist(c12, n12), d21 = min_dist(c21, n21);
    // curved pairs (EPA/GJK on cylinders, ellipsoids) agree to the iteration caps' accuracy
    int curved = M->geom_type[g1] == PHYS_GEOM_CYLINDER || M->geom_type[g2] == PHYS_GEOM_CYLINDER ||
                 M->geom_type[g1] == PHYS_GEOM_ELLIPSOID || M->geom_type[g2] == PHYS_GEOM_ELLIPSOID;
    worst = fmax(worst, fabs(d12 - d21));
    CHECK_MSG(fabs(d12 - d21) <= (curved ? 1e-4 : 1e-9), "pair %d %d: %g vs %g", g1, g2, d12, d21);
    double dot = 0;
    for (int k = 0; k < 3; k++) dot += c12[0].frame[k] * c21[0].frame[k];
    CHECK_MSG(dot < -(curved ? 0.99 : 1 - 1e-9), "pair %d %d: normals dot %g", g1, g2, dot);
    // mesh box vs A's box-box on the same poses, near touching (deep overlaps: the manifolds' deepest
    // points may differ, both being points of the overlap)
    if (g1 == G_CUBEA && g2 == G_CUBEB && d12 > -0.005) {
      set_pose(G_BOXA, (double[3]){0, 0, 0}, q1);
      set_pose(G_BOXB, p2, q2);
      physContact cb[PHYS_MAXPAIRCON];
      int nb = phys_collide_geoms(M, D, G_BOXA, G_BOXB, 0.05, cb);
      if (nb > 0) {
        nbox++;
        worstbox = fmax(worstbox, fabs(min_dist(cb, nb) - d12));
        CHECK_MSG(fabs(min_dist(cb, nb) - d12) < 1e-9, "box-box %g vs mesh %g", min_dist(cb, nb), d12);
      }
    }
  }
  CHECK(ncontact > 100);
  printf("symmetry: %d contacting random poses, worst |d12 - d21| = %.2g; box-box (closed form) vs mesh: %d, "
         "worst %.2g\n", ncontact, worst, nbox, worstbox);
}

// near touching random poses (gap in [-0.004, 0.01]): mesh boxes give the exact signed distance (feature
// oracle when separated, SAT depth when overlapping); A's closed-form box-box is compared for information
static void test_vs_box_box(void) {
  physRng rng;
  phys_rng_seed(&rng, 8);
  double worst = 0;
  int n = 0, ndiff = 0;
  for (int t = 0; t < 300; t++) {
    double q1[4], q2[4], dir[3], p2[3];
    random_quat(q1, &rng);
    random_quat(q2, &rng);
    for (int k = 0; k < 3; k++) dir[k] = phys_rng_range(&rng, -1, 1);
    phys_normalize3(dir);
    for (int k = 0; k < 3; k++) p2[k] = dir[k];
    set_pose(G_CUBEA, (double[3]){0, 0, 0}, q1);
    set_pose(G_CUBEB, p2, q2);
    physConvex a, b;
    phys_convex_init(&a, M, D, G_CUBEA);
    phys_convex_init(&b, M, D, G_CUBEB);
    physGjkResult r;
    phys_convex_distance(&r, &a, &b, 10);
    double gap = phys_rng_range(&rng, -0.004, 0.01);
    for (int k = 0; k < 3; k++) p2[k] -= (r.dist - gap) * r.normal[k];  // gap exact when >= 0
    set_pose(G_CUBEB, p2, q2);
    set_pose(G_BOXA, (double[3]){0, 0, 0}, q1);
    set_pose(G_BOXB, p2, q2);
    physContact cm[PHYS_MAXPAIRCON], cb[PHYS_MAXPAIRCON];
    int nm = collide(G_CUBEA, G_CUBEB, 0.02, cm);
    int nb = phys_collide_geoms(M, D, G_BOXA, G_BOXB, 0.02, cb);
    CHECK_MSG(nm > 0, "gap %g: no contact", gap);
    if (nm == 0) continue;
    // the true signed distance (SAT depth if overlapping, feature distance if separated)
    double Ra[9], Rb[9];
    memcpy(Ra, D->geom_xmat + 9 * G_CUBEA, sizeof(Ra));
    memcpy(Rb, D->geom_xmat + 9 * G_CUBEB, sizeof(Rb));
    double depth = box_box_depth((double[3]){0, 0, 0}, Ra, HA, p2, Rb, HB);
    double exact = depth > 0 ? -depth : box_box_dist((double[3]){0, 0, 0}, Ra, HA, p2, Rb, HB);
    CHECK_NEAR(min_dist(cm, nm), exact, 1e-9);
    if (gap >= 0) CHECK_NEAR(exact, gap, 1e-12);
    worst = fmax(worst, fabs(min_dist(cm, nm) - exact));
    if (nb == 0 || fabs(min_dist(cb, nb) - exact) > 1e-9) ndiff++;
    n++;
  }
  printf("near-touching mesh boxes: %d poses, worst |dist - exact| = %.2g; closed-form box-box misses or differs "
         "by > 1e-9 in %d\n", n, worst, ndiff);
}

// the dispatcher (collision.c) sends mesh/cylinder pairs here, in either argument order
static void test_dispatch(void) {
  int swap;
  CHECK(phys_collide_fn(PHYS_GEOM_MESH, PHYS_GEOM_PLANE, &swap) == phys_collide_convex_plane && swap == 1);
  CHECK(phys_collide_fn(PHYS_GEOM_BOX, PHYS_GEOM_MESH, &swap) == phys_collide_convex_convex && swap == 0);
  CHECK(phys_collide_fn(PHYS_GEOM_CYLINDER, PHYS_GEOM_CYLINDER, &swap) == phys_collide_convex_convex);
  CHECK(phys_convex_collide_fn(PHYS_GEOM_PLANE, PHYS_GEOM_PLANE) == NULL);
  physContact c[PHYS_MAXPAIRCON];
  set_pose(G_PLANE, (double[3]){0, 0, 0}, QI);
  set_pose(G_CUBE, (double[3]){0, 0, 0.099}, QI);
  int n = phys_collide_geoms(M, D, G_CUBE, G_PLANE, 0, c);
  CHECK(n == 4);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(c[i].frame[2], -1, 0);  // from the cube (g1) into the plane
    CHECK(c[i].geom[0] == G_CUBE && c[i].geom[1] == G_PLANE);
  }
}

// support value max_v u.v over all vertices of mesh geom g (world)
static double mesh_support_value(const physModel* m, const physData* d, int g, const double u[3]) {
  int id = m->geom_dataid[g];
  double ul[3], best = -DBL_MAX;
  phys_matT_vec3(ul, d->geom_xmat + 9 * g, u);
  for (int v = 0; v < m->mesh_vertnum[id]; v++) best = fmax(best, phys_dot3(ul, m->mesh_vert + 3 * (m->mesh_vertadr[id] + v)));
  return best + phys_dot3(u, d->geom_xpos + 3 * g);
}

// world direction of hull edge k of face f of mesh geom g (from consecutive polygon vertices)
static void hull_edge(double e[3], const physModel* m, const physData* d, int g, int f, int k) {
  int id = m->geom_dataid[g];
  const double* v = m->mesh_vert + 3 * m->mesh_vertadr[id];
  const int* fv = m->hull_facevert + m->hull_faceadr[f];
  int n = m->hull_facenum[f];
  double el[3];
  sub3_test(el, v + 3 * fv[(k + 1) % n], v + 3 * fv[k]);
  phys_mat_vec3(e, d->geom_xmat + 9 * g, el);
}

// the Atlas feet (open STL meshes, their hulls): resting on a plane (at most 4 points, the lowest vertex's
// depth exact), the same on a large box, and foot-foot penetration against the SAT over the hulls' face
// normals and edge-pair axes (supports over every vertex)
static void test_atlas_feet(void) {
  const char* lpath = "/usr/share/doc/dart/data/sdf/atlas/l_foot.stl";
  const char* rpath = "/usr/share/doc/dart/data/sdf/atlas/r_foot.stl";
  FILE* f = fopen(lpath, "rb");
  if (!f) {
    printf("skipped: %s not installed\n", lpath);
    return;
  }
  fclose(f);
  physSpec* s = phys_spec_new();
  physLog log = {0};
  for (int i = 0; i < 2; i++) {
    int mi = phys_spec_add_mesh(s);
    snprintf(s->mesh[mi].name, PHYS_NAMELEN, "%s", i ? "r_foot" : "l_foot");
    CHECK(phys_mesh_load(i ? rpath : lpath, NULL, s->mesh + mi, &log) == PHYS_OK);
    add_geom(s, PHYS_GEOM_MESH, 0, 0, 0, mi);
  }
  add_geom(s, PHYS_GEOM_PLANE, 5, 5, 0.1, -1);
  add_geom(s, PHYS_GEOM_BOX, 1, 1, 0.1, -1);
  physModel* m = phys_compile(s, &log);
  phys_spec_free(s);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  physRng rng;
  phys_rng_seed(&rng, 9);
  double qi[4] = {1, 0, 0, 0}, worst = 0;
  phys_copy3(d->geom_xpos + 3 * 2, (double[3]){0, 0, 0});
  phys_quat2mat(d->geom_xmat + 9 * 2, qi);
  phys_copy3(d->geom_xpos + 3 * 3, (double[3]){0, 0, -0.1});
  phys_quat2mat(d->geom_xmat + 9 * 3, qi);
  for (int t = 0; t < 50; t++) {
    // random yaw, tilt below 0.05 rad; lowest vertex 2 mm below z = 0
    double q[4], qt[4], qz[4], pos[3] = {phys_rng_range(&rng, -0.3, 0.3), phys_rng_range(&rng, -0.3, 0.3), 0};
    double ax[3] = {phys_rng_range(&rng, -1, 1), phys_rng_range(&rng, -1, 1), 0};
    phys_axisangle2quat(qt, ax, phys_rng_range(&rng, 0, 0.05));
    phys_axisangle2quat(qz, (double[3]){0, 0, 1}, phys_rng_range(&rng, -M_PI, M_PI));
    phys_quat_mul(q, qt, qz);
    phys_copy3(d->geom_xpos, pos);
    phys_quat2mat(d->geom_xmat, q);
    double down[3] = {0, 0, -1};
    d->geom_xpos[2] -= mesh_support_value(m, d, 0, down) * -1 + 0.002;
    physContact cp[PHYS_MAXPAIRCON], cb[PHYS_MAXPAIRCON];
    int np = phys_collide_convex_plane(m, d, 2, 0, 0.001, cp);
    int nb = phys_collide_convex_convex(m, d, 0, 3, 0.001, cb);
    CHECK(np >= 1 && np <= 4 && nb >= 1 && nb <= 4 && contacts_finite(cp, np) && contacts_finite(cb, nb));
    CHECK_NEAR(min_dist(cp, np), -0.002, 1e-12);
    CHECK_NEAR(min_dist(cb, nb), -0.002, 1e-9);
    for (int i = 0; i < nb; i++) CHECK(cb[i].dist <= 0.001 && fabs(cb[i].frame[2] + 1) < 1e-9);
  }
  // foot against foot: EPA depth = SAT depth
  int nsat = 0;
  for (int t = 0; t < 40; t++) {
    double q1[4], q2[4], p2[3];
    random_quat(q1, &rng);
    random_quat(q2, &rng);
    for (int k = 0; k < 3; k++) p2[k] = phys_rng_range(&rng, -0.08, 0.08);
    phys_copy3(d->geom_xpos, (double[3]){0, 0, 0});
    phys_quat2mat(d->geom_xmat, q1);
    phys_copy3(d->geom_xpos + 3, p2);
    phys_quat2mat(d->geom_xmat + 9, q2);
    // SAT: min over axes u of h_1(u) + h_2(-u), axes = face normals of both hulls and edge-pair crosses
    double depth = DBL_MAX;
    for (int g = 0; g < 2; g++) {
      int id = m->geom_dataid[g];
      for (int fi = m->mesh_hullfaceadr[id]; fi < m->mesh_hullfaceadr[id] + m->mesh_hullfacenum[id]; fi++) {
        double u[3], nu[3];
        phys_mat_vec3(u, d->geom_xmat + 9 * g, m->hull_facenormal + 4 * fi);
        for (int k = 0; k < 3; k++) nu[k] = -u[k];
        depth = fmin(depth, mesh_support_value(m, d, 0, u) + mesh_support_value(m, d, 1, nu));
        depth = fmin(depth, mesh_support_value(m, d, 0, nu) + mesh_support_value(m, d, 1, u));
      }
    }
    int i0 = m->geom_dataid[0], i1 = m->geom_dataid[1];
    for (int fa = m->mesh_hullfaceadr[i0]; fa < m->mesh_hullfaceadr[i0] + m->mesh_hullfacenum[i0]; fa++)
      for (int ka = 0; ka < m->hull_facenum[fa]; ka++)
        for (int fb = m->mesh_hullfaceadr[i1]; fb < m->mesh_hullfaceadr[i1] + m->mesh_hullfacenum[i1]; fb++)
          for (int kb = 0; kb < m->hull_facenum[fb]; kb++) {
            double ea[3], eb[3], u[3], nu[3];
            hull_edge(ea, m, d, 0, fa, ka);
            hull_edge(eb, m, d, 1, fb, kb);
            phys_cross3(u, ea, eb);
            if (phys_normalize3(u) < 1e-9) continue;
            for (int k = 0; k < 3; k++) nu[k] = -u[k];
            depth = fmin(depth, mesh_support_value(m, d, 0, u) + mesh_support_value(m, d, 1, nu));
            depth = fmin(depth, mesh_support_value(m, d, 0, nu) + mesh_support_value(m, d, 1, u));
          }
    if (depth <= 1e-4) continue;
    physConvex a, b;
    phys_convex_init(&a, m, d, 0);
    phys_convex_init(&b, m, d, 1);
    physGjkResult r;
    CHECK(phys_convex_distance(&r, &a, &b, 0) == 1);
    worst = fmax(worst, fabs(r.dist + depth));
    CHECK_NEAR(r.dist, -depth, 1e-9);
    nsat++;
  }
  CHECK(nsat > 10);
  printf("Atlas feet: plane and box rest exact; foot-foot EPA vs SAT: %d poses, worst %.2g\n", nsat, worst);
  phys_free_data(d);
  phys_free_model(m);
}

// time per call of a few pairs (information, no check)
static void time_pairs(void) {
  int pairs[][2] = {{G_PLANE, G_CUBE}, {G_CUBE, G_GROUND}, {G_CUBEA, G_CUBEB}, {G_ICOA, G_ICOB}, {G_CYLA, G_CYLB}};
  const char* names[] = {"plane-mesh cube", "mesh cube-box", "mesh box-mesh box", "icosphere-icosphere (642 v)",
                         "cylinder-cylinder"};
  set_pose(G_PLANE, (double[3]){0, 0, 0}, QI);
  set_pose(G_GROUND, (double[3]){0, 0, -0.1}, QI);
  double q[4] = {0.9, 0.1, 0.2, 0.3};
  for (int p = 0; p < 5; p++) {
    int g1 = pairs[p][0], g2 = pairs[p][1];
    if (g1 != G_PLANE && g1 != G_CUBE) set_pose(g1, (double[3]){0, 0, 0}, QI);
    set_pose(g2, (double[3]){0.05, 0.02, p < 2 ? 0.095 : 0.3}, q);
    physContact c[PHYS_MAXPAIRCON];
    int reps = 20000, tot = 0;
    clock_t t0 = clock();
    for (int i = 0; i < reps; i++) tot += collide(g1, g2, 0, c);
    double us = 1e6 * (double)(clock() - t0) / CLOCKS_PER_SEC / reps;
    printf("  %-28s %6.2f us per call (%d contacts)\n", names[p], us, tot / reps);
  }
}

// degenerate inputs: touching faces, identical centres, deep penetration: finite answers, never NaN
static void test_degenerate(void) {
  physContact c[PHYS_MAXPAIRCON];
  // touching exactly (face on face)
  set_pose(G_CUBEB, (double[3]){0, 0, 0}, QI);
  set_pose(G_CUBE, (double[3]){0.01, 0.02, 0.15}, QI);
  int n = collide(G_CUBEB, G_CUBE, 0, c);
  CHECK(n == 4 && contacts_finite(c, n));
  for (int i = 0; i < n; i++) CHECK_NEAR(c[i].dist, 0, 1e-15);
  // identical centres and orientations: depth = the smaller overlap (2 * 0.05 along z for B and cube)
  set_pose(G_CUBE, (double[3]){0, 0, 0}, QI);
  n = collide(G_CUBEB, G_CUBE, 0, c);
  CHECK(n >= 1 && contacts_finite(c, n));
  CHECK_NEAR(min_dist(c, n), -0.15, 1e-12);
  // identical centres for every pair type
  int gs[] = {G_CUBEA, G_CUBEB, G_ICOA, G_SPHERE, G_CAPSULE, G_CYLA, G_CYLB, G_ELLIPSOID, G_CUBE};
  int ng = sizeof(gs) / sizeof(gs[0]);
  for (int i = 0; i < ng; i++) set_pose(gs[i], (double[3]){0.1, 0.1, 0.1}, QI);
  for (int i = 0; i < ng; i++)
    for (int j = 0; j < ng; j++) {
      if (i == j || (gs[i] == G_SPHERE && gs[j] == G_CAPSULE) || (gs[i] == G_CAPSULE && gs[j] == G_SPHERE)) continue;
      n = collide(gs[i], gs[j], 0, c);
      CHECK_MSG(n >= 1 && n <= 4 && contacts_finite(c, n) && min_dist(c, n) < 0, "geoms %d %d: n %d", gs[i], gs[j], n);
    }
  // concentric sphere and capsule cores (points/segments): full-shape EPA, finite
  n = collide(G_SPHERE, G_CAPSULE, 0, c);
  CHECK(n >= 1 && contacts_finite(c, n));
  // a plane through the centre of a mesh: deep, finite
  set_pose(G_PLANE, (double[3]){0.1, 0.1, 0.1}, QI);
  set_pose(G_ICOB, (double[3]){0.1, 0.1, 0.1}, QI);
  n = collide(G_PLANE, G_ICOB, 0, c);
  CHECK(n >= 1 && n <= 4 && contacts_finite(c, n));
  double zmin = 0;
  int ib = M->geom_dataid[G_ICOB];
  for (int v = 0; v < M->mesh_vertnum[ib]; v++) zmin = fmin(zmin, M->mesh_vert[3 * (M->mesh_vertadr[ib] + v) + 2]);
  CHECK_NEAR(min_dist(c, n), zmin, 1e-15);
  // tiny offsets near touching in random directions: finite, |dist| small
  physRng rng;
  phys_rng_seed(&rng, 6);
  for (int t = 0; t < 200; t++) {
    double dir[3], q[4];
    for (int k = 0; k < 3; k++) dir[k] = phys_rng_range(&rng, -1, 1);
    random_quat(q, &rng);
    phys_normalize3(dir);
    set_pose(G_SPHERE, (double[3]){0, 0, 0}, QI);
    // the sphere's surface touching the icosphere B at distance ~1e-13 along dir
    set_pose(G_ICOB, (double[3]){0.5 * dir[0], 0.5 * dir[1], 0.5 * dir[2]}, q);
    physConvex a, b;
    phys_convex_init(&a, M, D, G_SPHERE);
    phys_convex_init(&b, M, D, G_ICOB);
    physGjkResult r;
    phys_convex_distance(&r, &a, &b, 1);
    double off = -r.dist + 1e-13 * (t % 3 - 1);  // move B so that the gap is 0 or +-1e-13
    double p[3];
    for (int k = 0; k < 3; k++) p[k] = 0.5 * dir[k] + off * r.normal[k];
    set_pose(G_ICOB, p, q);
    n = collide(G_SPHERE, G_ICOB, 1e-3, c);
    CHECK(n == 1 && contacts_finite(c, n) && fabs(c[0].dist) < 1e-10);
  }
}

// parallel cylinder/capsule sides (issue 11): the line contact's normal is perpendicular to the first geom's axis
// through the second's centre, exact at parallel sides and smooth in a tilt of either axis (GJK's normal has a kink
// there: its one-sided slopes differ). Cylinder B above A along x (offset 0.05 in y, depth 0.001), and a capsule
// under A; both geom orders, the tilt h = 1e-4 of the second geom about z then y
static void line_normal(double n[3], int g1, int g2, const double pos2[3], double tilt, int about) {
  double qx[4], qt[4], q[4];
  phys_axisangle2quat(qx, (double[3]){0, 1, 0}, M_PI / 2);
  phys_axisangle2quat(qt, about ? (double[3]){0, 1, 0} : (double[3]){0, 0, 1}, tilt);
  phys_quat_mul(q, qt, qx);
  set_pose(g1, (double[3]){0, 0, 0}, qx);
  set_pose(g2, pos2, q);
  physContact c[PHYS_MAXPAIRCON];
  int cnt = collide(g1, g2, 0, c);
  CHECK(cnt == 2);
  phys_copy3(n, c[0].frame);
  if (cnt == 2) CHECK(phys_norm3((double[3]){c[1].frame[0] - n[0], c[1].frame[1] - n[1], c[1].frame[2] - n[2]}) == 0);
}

static void test_line_normal(void) {
  double zb = sqrt(0.249 * 0.249 - 0.05 * 0.05), zc = -sqrt(0.149 * 0.149 - 0.05 * 0.05);
  struct { int a, b; double pos[3], d; } t[] = {{G_CYLA, G_CYLB, {0.02, 0.05, zb}, 0.249},
                                                {G_CYLA, G_CAPSULE, {0.02, 0.05, zc}, 0.149}};
  double worst_exact = 0, worst_kink = 0;
  for (int k = 0; k < 2; k++)
    for (int order = 0; order < 2; order++)
      for (int about = 0; about < 2; about++) {
        int g1 = order ? t[k].b : t[k].a, g2 = order ? t[k].a : t[k].b;
        double p2[3] = {order ? -t[k].pos[0] : t[k].pos[0], order ? -t[k].pos[1] : t[k].pos[1],
                        order ? -t[k].pos[2] : t[k].pos[2]};
        double n0[3], np[3], nm[3], h = 1e-4, want[3] = {0, p2[1] / t[k].d, p2[2] / t[k].d};
        line_normal(n0, g1, g2, p2, 0, about);
        line_normal(np, g1, g2, p2, h, about);
        line_normal(nm, g1, g2, p2, -h, about);
        for (int q = 0; q < 3; q++) {
          worst_exact = fmax(worst_exact, fabs(n0[q] - want[q]));
          // one-sided slopes (np - n0)/h and (n0 - nm)/h: equal up to O(h) where the normal is smooth
          worst_kink = fmax(worst_kink, fabs((np[q] - n0[q]) - (n0[q] - nm[q])) / h);
        }
      }
  printf("line contact normal: parallel error %.2g, one-sided slopes differ by %.2g\n", worst_exact, worst_kink);
  CHECK(worst_exact < 1e-12);
  CHECK(worst_kink < 1e-3);
}

int main(void) {
  build_scene();
  test_support();
  test_line_normal();
  test_gjk_boxes();
  test_gjk_spheres();
  test_epa_boxes();
  test_epa_analytic();
  test_mesh_plane();
  test_cylinder_plane();
  test_mesh_box_manifold();
  test_cylinder_manifolds();
  test_symmetry();
  test_degenerate();
  test_vs_box_box();
  test_dispatch();
  test_atlas_feet();
  time_pairs();
  phys_free_data(D);
  phys_free_model(M);
  return test_done();
}

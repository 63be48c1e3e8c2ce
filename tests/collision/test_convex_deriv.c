// test_convex_deriv.c - Jacobians of the contact geometry of the convex routines (convex_deriv.c, through
// phys_primitive_deriv) against fourth-order central differences of the pair functions themselves
// (phys_collide_convex_plane, phys_collide_convex_convex) under pose twists and size changes: plane-mesh
// (hull vertices), mesh-mesh, box-mesh, sphere-mesh and capsule-mesh in random poses (GJK separated and
// EPA penetrating single points: vertex-face, edge-edge) and resting poses (face manifolds: clipped
// incident vertices, incident edges on the reference sides, reference corners; a capsule's two ends);
// rigid-motion invariance, swapped meshes; witness points on smooth patches (ellipsoids, cylinders) against meshes.
#include "convex.h"
#include "spec.h"

static physModel* M;
static physData* D;

#include "geom_deriv_check.h"

enum { G_ANY = 0, G_CUBE, G_ROCKA, G_ROCKB, G_BIG, G_NGEOM };  // G_ANY: its type and sizes set by each test
#define NBIG 2200   // vertices of G_BIG: a Fibonacci sphere of radius 0.5 (its hull: 2 NBIG - 4 = 4396 triangles)

static const double HCUBE[3] = {0.2, 0.15, 0.1};  // half sizes of the mesh cube

// a random convex polytope: n points on the ellipsoid with radii r, jittered
static void rock(double* v, int n, const double r[3]) {
  for (int i = 0; i < n; i++) {
    double p[3];
    rand_pt(p, 1);
    double l = phys_norm3(p);
    for (int k = 0; k < 3; k++) v[3 * i + k] = r[k] * p[k] / l * phys_rng_range(&RNG, 0.9, 1.1);
  }
}

// add a mesh of nv vertices (copied) to the spec and a world geom using it
static void add_mesh_geom(physSpec* s, const char* name, const double* v, int nv) {
  int i = phys_spec_add_mesh(s);
  snprintf(s->mesh[i].name, PHYS_NAMELEN, "%s", name);
  s->mesh[i].vert = malloc(sizeof(double) * 3 * (size_t)nv);
  memcpy(s->mesh[i].vert, v, sizeof(double) * 3 * (size_t)nv);
  s->mesh[i].nvert = nv;
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_MESH);
  s->geom[g].mesh = i;
  snprintf(s->geom[g].name, PHYS_NAMELEN, "%s", name);
}

// the model: G_ANY (a sphere to start with), a mesh cube and two rocks of 16 and 24 vertices
static void setup(void) {
  physSpec* s = phys_spec_new();
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_SPHERE);
  s->geom[g].size[0] = 0.1;
  snprintf(s->geom[g].name, PHYS_NAMELEN, "any");
  double v[24 * 3];
  for (int i = 0; i < 8; i++)
    for (int k = 0; k < 3; k++) v[3 * i + k] = (i >> k) & 1 ? HCUBE[k] : -HCUBE[k];
  add_mesh_geom(s, "cube", v, 8);
  rock(v, 16, (double[3]){0.25, 0.2, 0.15});
  add_mesh_geom(s, "rockA", v, 16);
  rock(v, 24, (double[3]){0.2, 0.3, 0.25});
  add_mesh_geom(s, "rockB", v, 24);
  double* big = malloc(sizeof(double) * 3 * NBIG);
  for (int i = 0; i < NBIG; i++) {   // z = 1 - (2i + 1)/N, golden-angle longitude
    double z = 1 - (2.0 * i + 1) / NBIG, rho = sqrt(1 - z * z), phi = i * 2.39996322972865332;
    big[3 * i] = 0.5 * rho * cos(phi), big[3 * i + 1] = 0.5 * rho * sin(phi), big[3 * i + 2] = 0.5 * z;
  }
  add_mesh_geom(s, "big", big, NBIG);
  free(big);
  physLog log = {0};
  M = phys_compile(s, &log);
  phys_spec_free(s);
  if (!M || M->ngeom != G_NGEOM) {
    fprintf(stderr, "compile: %s\n", log.error);
    exit(1);
  }
  D = phys_make_data(M);
  for (int i = G_CUBE; i < G_NGEOM; i++) CHECK(M->mesh_hullfacenum[M->geom_dataid[i]] > 0);
}

// G_ANY as a type with sizes and its bounding radius (GJK's tolerances scale with it)
static void set_any(int type, double s0, double s1, double s2, const double pos[3]) {
  set_geom(G_ANY, type, s0, s1, s2, pos);
  M->geom_rbound[G_ANY] = type == PHYS_GEOM_SPHERE ? s0 : type == PHYS_GEOM_CAPSULE ? s0 + s1 : sqrt(s0 * s0 + s1 * s1 + s2 * s2);
}

// a mesh geom at pos, randomly rotated
static void set_mesh(int g, const double pos[3]) { set_geom(g, PHYS_GEOM_MESH, 0, 0, 0, pos); }

// compare every contact of the pair (g1, g2) where the pair function is smooth, and all of them at once
// against one by one (check_all); counts compared/skipped
static void check_pair(physCollideFn fn, int g1, int g2, int* ncmp, int* nskip) {
  double y[7];
  int nc = eval(y, fn, g1, g2, 0);
  check_all(fn, g1, g2);
  for (int con = 0; con < nc; con++) {
    if (!check_fd_smooth(fn, g1, g2, con)) {
      (*nskip)++;
      continue;
    }
    (*ncmp)++;
    check_rigid(g1, g2, con);
  }
}

// plane-mesh: up to 4 hull vertices (the deepest, then the spread); the normal is the plane's
static void test_plane_mesh(void) {
  int ncmp = 0, nskip = 0;
  for (int it = 0; it < 40; it++) {
    double p1[3], p2[3], jac[7 * 18];
    rand_pt(p1, 1), rand_pt(p2, 1);
    set_any(PHYS_GEOM_PLANE, 0, 0, 0, p1);
    set_mesh(G_ROCKA + it % 2, p2);
    check_pair(phys_collide_convex_plane, G_ANY, G_ROCKA + it % 2, &ncmp, &nskip);
    CHECK(phys_primitive_deriv(jac, M, D, G_ANY, G_ROCKA + it % 2, 0) == 0);
    for (int j = 6; j < 12; j++)
      for (int i = 3; i < 6; i++) CHECK(jac[i * 12 + j] == 0);
    // each contact records the plane's face and its hull vertex i (physid.h), at pos + n dist / 2; the
    // derivative reads it: the contact given as another vertex is refused
    physContact out[PHYS_MAXPAIRCON];
    int g = G_ROCKA + it % 2, id = M->geom_dataid[g], nout = phys_collide_convex_plane(M, D, G_ANY, g, MARGIN, out);
    for (int k = 0; k < nout; k++) {
      int f = out[k].feature[1], i = PHYS_FEATURE_INDEX(f);
      CHECK(out[k].feature[0] == PHYS_FEATURE(PHYS_FEAT_FACE, 0) && PHYS_FEATURE_KIND(f) == PHYS_FEAT_VERTEX);
      CHECK(i >= 0 && i < M->mesh_hullnum[id]);
      double w[3];
      int v = M->mesh_vertadr[id] + M->hull_vert[M->mesh_hulladr[id] + i];
      phys_mat_vec3(w, D->geom_xmat + 9 * g, M->mesh_vert + 3 * v);
      for (int c = 0; c < 3; c++)
        CHECK_NEAR(D->geom_xpos[3 * g + c] + w[c], out[k].pos[c] + 0.5 * out[k].dist * out[k].frame[c], 1e-12);
      CHECK(phys_primitive_deriv_out(jac, M, D, G_ANY, g, k, out, nout) == 0);
      out[k].feature[1] = PHYS_FEATURE(PHYS_FEAT_VERTEX, (i + 1) % M->mesh_hullnum[id]);
      CHECK(phys_primitive_deriv_out(jac, M, D, G_ANY, g, k, out, nout) == -1);
    }
  }
  printf("plane-mesh: %d contacts compared, %d skipped next to a switch\n", ncmp, nskip);
  CHECK(ncmp > 100 && nskip < ncmp / 4);
}

// the single witness points of the pair (g1, g2) record their support vertices (physid.h: flagged
// PHYS_FEATF_WITNESS, PHYS_FEATF_INSIDE when penetrating, a geom's VERTEX / EDGE / FACE by its distinct vertices)
// and the derivative reads them: without the record the contact is refused (no distance run again to find it by
// value), and a record naming other vertices of geom 2 (a mesh) is refused. Counts the recorded points (and those
// vertex-face)
static void check_witness_record(int g1, int g2, int* nrec, int* nvf) {
  physContact out[PHYS_MAXPAIRCON];
  double jac[7 * 18], jv[7 * 18];
  int nout = phys_collide_convex_convex(M, D, g1, g2, MARGIN, out);
  for (int k = 0; k < nout; k++) {
    physContact* c = out + k;
    int fl0 = PHYS_FEATURE_FLAGS(c->feature[0]), fl1 = PHYS_FEATURE_FLAGS(c->feature[1]);
    if (!(fl0 & PHYS_FEATF_WITNESS)) continue;
    (*nrec)++;
    int t1 = M->geom_type[g1];   // a sphere's or capsule's core against the mesh: its radius off the surface
    double rcore = t1 == PHYS_GEOM_SPHERE || t1 == PHYS_GEOM_CAPSULE ? M->geom_size[3 * g1] : 0;
    CHECK(fl0 == fl1 && ((fl0 & PHYS_FEATF_INSIDE) != 0) == (c->dist + rcore < 0));
    int kinds = PHYS_FEATURE_KIND(c->feature[0]) * 8 + PHYS_FEATURE_KIND(c->feature[1]);
    *nvf += kinds == PHYS_FEAT_VERTEX * 8 + PHYS_FEAT_FACE || kinds == PHYS_FEAT_FACE * 8 + PHYS_FEAT_VERTEX;
    for (int g = 0; g < 2; g++) CHECK(PHYS_FEATURE_INDEX(c->feature[g]) == c->witness[g][0]);
    int rc = phys_primitive_deriv_out(jac, M, D, g1, g2, k, out, nout);
    physContact keep = *c;
    c->feature[0] = c->feature[1] = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
    CHECK_MSG(phys_primitive_deriv_out(jv, M, D, g1, g2, k, out, nout) == -1, "geoms %d-%d contact %d: accepted "
              "without its record", g1, g2, k);
    *c = keep;
    int nh = M->mesh_hullnum[M->geom_dataid[g2]];
    for (int i = 0; i < 3 && c->witness[1][i] >= 0; i++) c->witness[1][i] = (c->witness[1][i] + 1) % nh;
    CHECK(rc || phys_primitive_deriv_out(jac, M, D, g1, g2, k, out, nout) == -1);
    *c = keep;
  }
}

// GJK/EPA single points in random poses: mesh-mesh, box-mesh, sphere-mesh, capsule-mesh, separated and
// overlapping
static void test_random_pairs(void) {
  int ncmp[4] = {0, 0, 0, 0}, nskip = 0, npen = 0, nrec = 0, nvf = 0;
  for (int it = 0; it < 240; it++) {
    double p1[3], p2[3], y[7];
    int kind = it % 4;
    rand_pt(p1, 0.4), rand_pt(p2, 0.4);
    int g1 = G_ANY, g2 = it % 8 < 4 ? G_ROCKB : G_CUBE;
    if (kind == 0) {
      g1 = G_ROCKA;
      set_mesh(g1, p1);
    } else if (kind == 1) {
      set_any(PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.1, 0.3), phys_rng_range(&RNG, 0.1, 0.3),
              phys_rng_range(&RNG, 0.1, 0.3), p1);
    } else if (kind == 2) {
      set_any(PHYS_GEOM_SPHERE, phys_rng_range(&RNG, 0.05, 0.3), 0, 0, p1);
    } else {
      set_any(PHYS_GEOM_CAPSULE, phys_rng_range(&RNG, 0.05, 0.2), phys_rng_range(&RNG, 0.1, 0.3), 0, p1);
    }
    set_mesh(g2, p2);
    if (eval(y, phys_collide_convex_convex, g1, g2, 0) == 0) continue;
    npen += y[6] < 0;
    int before = ncmp[kind];
    check_pair(phys_collide_convex_convex, g1, g2, &ncmp[kind], &nskip);
    check_witness_record(g1, g2, &nrec, &nvf);
    if (kind == 0 && ncmp[kind] > before && eval(y, phys_collide_convex_convex, g2, g1, 0) == 1 &&
        check_fd_smooth(phys_collide_convex_convex, g2, g1, 0))
      check_swap(g1, g2);
  }
  printf("random poses: mesh-mesh %d, box-mesh %d, sphere-mesh %d, capsule-mesh %d contacts compared (%d pairs "
         "penetrating), %d skipped; %d witness points read from their record (%d vertex-face)\n", ncmp[0], ncmp[1],
         ncmp[2], ncmp[3], npen, nskip, nrec, nvf);
  CHECK(ncmp[0] > 30 && ncmp[1] > 30 && ncmp[2] > 30 && ncmp[3] > 30 && npen > 20 && nrec > 150 && nvf > 10);
}

static int OTHER_FACE = 0;  // points of 2+ point manifolds given another face, refused (all at once as one at a time)

// all of out at once (phys_primitive_deriv_all, which shares the recorded features between the contacts naming the
// same ones) equals out one contact at a time, bit for bit, refusals included: 1 if contact k is refused while
// another contact is not
static int all_matches_one(int g1, int g2, const physContact* out, int nout, int k) {
  int ncol = phys_primitive_deriv_ncol(M, g1, g2), rc[PHYS_MAXPAIRCON];
  double all[PHYS_MAXPAIRCON * 7 * 18], one[7 * 18];
  phys_primitive_deriv_all(all, rc, M, D, g1, g2, out, nout);
  for (int q = 0; q < nout; q++) {
    int r1 = phys_primitive_deriv_out(one, M, D, g1, g2, q, out, nout);
    CHECK_MSG(rc[q] == r1, "geoms %d-%d contact %d of %d: rc %d, per contact %d", g1, g2, q, nout, rc[q], r1);
    if (r1 == 0 && rc[q] == 0)
      CHECK_MSG(memcmp(all + 7 * ncol * q, one, sizeof(double) * 7 * (size_t)ncol) == 0, "geoms %d-%d contact %d "
                "of %d: all at once differs from one at a time", g1, g2, q, nout);
  }
  int others = 0;
  for (int q = 0; q < nout; q++) others += q != k && rc[q] == 0;
  return rc[k] != 0 && others > 0;
}

// the manifold points of the pair (g1, g2) record their reference face (flagged), incident feature and number among
// the clipped points (physContact.clip), and the derivative reads that record: without it the point is refused (not
// found by value), and a point given another point's number is refused.
// Returns the number of recorded points
static int check_clip_record(int g1, int g2) {
  physContact out[PHYS_MAXPAIRCON];
  double jac[7 * 18];
  int nout = phys_collide_convex_convex(M, D, g1, g2, MARGIN, out), nrec = 0;
  for (int k = 0; k < nout; k++) {
    int *f = out[k].feature, r = PHYS_FEATURE_FLAGS(f[0]) & PHYS_FEATF_REF ? 0 : 1;
    if (!(PHYS_FEATURE_FLAGS(f[r]) & PHYS_FEATF_REF)) continue;
    nrec++;
    CHECK(PHYS_FEATURE_FLAGS(f[1 - r]) == PHYS_FEATF_INC && PHYS_FEATURE_KIND(f[r]) == PHYS_FEAT_FACE);
    int keep[2] = {f[0], f[1]};
    CHECK(phys_primitive_deriv_out(jac, M, D, g1, g2, k, out, nout) == 0);
    f[0] = f[1] = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
    CHECK_MSG(phys_primitive_deriv_out(jac, M, D, g1, g2, k, out, nout) == -1, "geoms %d-%d contact %d: accepted "
              "without its record", g1, g2, k);
    f[0] = keep[0], f[1] = keep[1];
    int clip = out[k].clip;
    out[k].clip = clip + 1;
    CHECK(phys_primitive_deriv_out(jac, M, D, g1, g2, k, out, nout) == -1);
    all_matches_one(g1, g2, out, nout, k);
    out[k].clip = clip;
    // another reference face (or incident face) for this point only: its point is not there (refused, as the
    // record's check against the contact finds), and all at once must not reuse the features its neighbours
    // record instead (their clipping holds this point's number: it would be accepted)
    f[1 - r] = keep[1 - r];
    f[r] = PHYS_FEATURE_FLAGGED(PHYS_FEAT_FACE, PHYS_CONVEX_CLIP_ID(keep[r]) ^ 1, PHYS_FEATF_REF);
    OTHER_FACE += all_matches_one(g1, g2, out, nout, k);
    f[r] = keep[r];
    if (PHYS_FEATURE_KIND(keep[1 - r]) == PHYS_FEAT_FACE) {
      f[1 - r] = PHYS_FEATURE_FLAGGED(PHYS_FEAT_FACE, PHYS_CONVEX_CLIP_ID(keep[1 - r]) ^ 1, PHYS_FEATF_INC);
      OTHER_FACE += all_matches_one(g1, g2, out, nout, k);
      f[1 - r] = keep[1 - r];
    }
  }
  return nrec;
}

// resting poses: a box, a capsule or the rock on the mesh cube's top face, turned about it and tilted by
// up to 0.05 rad, sunk by up to 5 mm (face manifolds of up to 4 points; the capsule's two ends)
static void test_resting(void) {
  int ncmp[3] = {0, 0, 0}, nskip = 0, nmulti = 0, nrec = 0;
  for (int it = 0; it < 120; it++) {
    double p2[3], c[3] = {0, 0, 0}, y[7];
    int kind = it % 3, g1 = kind == 2 ? G_ROCKA : G_ANY;
    set_mesh(G_CUBE, c);
    const double* R = D->geom_xmat + 9 * G_CUBE;
    double h = kind == 0 ? phys_rng_range(&RNG, 0.05, 0.15) : kind == 1 ? phys_rng_range(&RNG, 0.03, 0.08) : 0.15;
    double off[3] = {phys_rng_range(&RNG, -0.05, 0.05), phys_rng_range(&RNG, -0.05, 0.05),
                     HCUBE[2] + h - phys_rng_range(&RNG, -0.002, 0.005)};
    phys_mat_vec3(p2, R, off);
    double q[4], z[3] = {0, 0, 1}, Rz[9];
    phys_axisangle2quat(q, z, phys_rng_range(&RNG, -3.14, 3.14));
    phys_quat2mat(Rz, q);
    if (kind == 0) {
      set_any(PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.1, 0.25), phys_rng_range(&RNG, 0.1, 0.25), h, p2);
    } else if (kind == 1) {  // the capsule's axis in the face plane: R_cube Rz Rx(90 deg)
      set_any(PHYS_GEOM_CAPSULE, h, phys_rng_range(&RNG, 0.05, 0.12), 0, p2);
      double x[3] = {1, 0, 0}, Rx[9], T[9];
      phys_axisangle2quat(q, x, 1.5707963267948966);
      phys_quat2mat(Rx, q);
      phys_mat_mul3(T, Rz, Rx);
      memcpy(Rz, T, sizeof(T));
    } else {
      set_mesh(G_ROCKA, p2);
    }
    if (kind != 2) phys_mat_mul3(D->geom_xmat + 9 * g1, R, Rz);
    tilt(g1, kind == 2 ? 3.14 : 0.05);
    int nc = eval(y, phys_collide_convex_convex, g1, G_CUBE, 0);
    if (nc == 0) continue;
    nmulti += nc > 1;
    check_pair(phys_collide_convex_convex, g1, G_CUBE, &ncmp[kind], &nskip);
    nrec += check_clip_record(g1, G_CUBE);
  }
  printf("resting: box-mesh %d, capsule-mesh %d, rock-mesh %d contacts compared (%d manifolds of 2+ points), %d "
         "skipped; %d read from their record; %d given another face, all at once as one at a time\n", ncmp[0],
         ncmp[1], ncmp[2], nmulti, nskip, nrec, OTHER_FACE);
  CHECK(ncmp[0] > 80 && ncmp[1] > 40 && ncmp[2] > 20 && nmulti > 60 && nrec > 150 && OTHER_FACE > 50);
}

// cylinders on faces (manifolds of rim points; the first, deepest rim point turns with the face normal):
// tilted on the mesh cube or on a box (its cap clipped by the face), lying on its side (both side ends),
// a capsule lying on a cylinder's cap (the cap the reference face); G_ROCKB stands in for the box geom
// The rim points turn with the result's normal, which EPA leaves up to ~1e-10 off the face normal (its
// last triangle spans nearby rim points; EPA stops at a support gap of 1e-10 scale), so the pair function
// carries ~1e-11 m of noise in the points: a step of 2e-4 keeps its share of the difference quotients near
// 5e-8, and the smoothness test skips the rest; the rigid-motion check, which takes pos from the pair
// function, is held to 1e-10. For the same reason entries are compared relative to max(|an|, |fd|, 0.1),
// i.e. to 1e-7 absolute below 0.1 (measured spread of the quotients around the analytic value: 2e-8).
static void test_cylinders(void) {
  int ncmp[4] = {0, 0, 0, 0}, nskip = 0, ncon = 0, nrec = 0;
  double rb[G_NGEOM];
  memcpy(rb, M->geom_rbound, sizeof(rb));
  double worst = WORST;
  WORST = 0, FDSTEP = 2e-4, RIGID_TOL = 1e-10, FLOOR = 0.1;
  for (int it = 0; it < 160; it++) {
    double p2[3], c[3] = {0, 0, 0}, q[4], z[3] = {0, 0, 1}, Rz[9], y[7];
    int kind = it % 4, base = kind == 1 ? G_ROCKB : G_CUBE, g1 = G_ANY, g2 = base;
    if (kind == 1) {
      set_geom(G_ROCKB, PHYS_GEOM_BOX, 0.25, 0.2, 0.1, c);
      M->geom_rbound[G_ROCKB] = sqrt(0.25 * 0.25 + 0.2 * 0.2 + 0.1 * 0.1);
    } else {
      set_mesh(G_CUBE, c);
    }
    const double* R = D->geom_xmat + 9 * base;
    double top = kind == 1 ? 0.1 : HCUBE[2], r = phys_rng_range(&RNG, 0.04, 0.1), h = phys_rng_range(&RNG, 0.04, 0.1);
    phys_axisangle2quat(q, z, phys_rng_range(&RNG, -3.14, 3.14));
    phys_quat2mat(Rz, q);
    if (kind <= 1) {  // tilted by 0.2..0.5 rad: its lowest rim point and its neighbours on the face
      double off[3] = {phys_rng_range(&RNG, -0.05, 0.05), phys_rng_range(&RNG, -0.05, 0.05), top + h + 0.02};
      phys_mat_vec3(p2, R, off);
      set_any(PHYS_GEOM_CYLINDER, r, h, 0, p2);
      M->geom_rbound[G_ANY] = sqrt(r * r + h * h);
      phys_mat_mul3(D->geom_xmat + 9 * G_ANY, R, Rz);
      double w[3] = {phys_rng_range(&RNG, -1, 1), phys_rng_range(&RNG, -1, 1), 0}, dt[3] = {0, 0, 0};
      phys_normalize3(w);
      double ang = phys_rng_range(&RNG, 0.2, 0.5), ww[3];
      phys_mat_vec3(ww, R, w);
      for (int k = 0; k < 3; k++) ww[k] *= ang;
      twist(G_ANY, dt, ww);
      // lower to a depth of 0..3 mm below the face: the lowest rim point's height is known in closed form
      double a[3] = {D->geom_xmat[9 * G_ANY + 2], D->geom_xmat[9 * G_ANY + 5], D->geom_xmat[9 * G_ANY + 8]};
      double f[3] = {R[2], R[5], R[8]}, af = phys_dot3(a, f), low;
      low = phys_dot3(D->geom_xpos + 3 * G_ANY, f) - h * fabs(af) - r * sqrt(fmax(0, 1 - af * af));
      double dz = top - low - phys_rng_range(&RNG, 0, 0.003);
      for (int k = 0; k < 3; k++) D->geom_xpos[3 * G_ANY + k] += dz * f[k];
    } else if (kind == 2) {  // on its side, axis in the face plane, tilted by up to 0.02 rad, sunk by 0..3 mm
      double off[3] = {phys_rng_range(&RNG, -0.05, 0.05), phys_rng_range(&RNG, -0.05, 0.05),
                       top + r - phys_rng_range(&RNG, 0, 0.003)}, x[3] = {1, 0, 0}, Rx[9], T[9];
      phys_mat_vec3(p2, R, off);
      set_any(PHYS_GEOM_CYLINDER, r, h, 0, p2);
      M->geom_rbound[G_ANY] = sqrt(r * r + h * h);
      phys_axisangle2quat(q, x, 1.5707963267948966);
      phys_quat2mat(Rx, q);
      phys_mat_mul3(T, Rz, Rx);
      phys_mat_mul3(D->geom_xmat + 9 * G_ANY, R, T);
      tilt(G_ANY, 0.02);
    } else {  // a capsule lying on the cap of a cylinder standing on the mesh cube's place
      g2 = G_ANY, g1 = G_ROCKA;
      set_geom(G_ANY, PHYS_GEOM_CYLINDER, 0.2, 0.1, 0, c);
      M->geom_rbound[G_ANY] = sqrt(0.05);
      set_geom(G_ROCKA, PHYS_GEOM_CAPSULE, r, h, 0, c);
      M->geom_rbound[G_ROCKA] = r + h;
      const double* Rc = D->geom_xmat + 9 * G_ANY;
      double off[3] = {phys_rng_range(&RNG, -0.05, 0.05), phys_rng_range(&RNG, -0.05, 0.05),
                       0.1 + r - phys_rng_range(&RNG, 0, 0.003)}, x[3] = {1, 0, 0}, Rx[9], T[9];
      phys_mat_vec3(D->geom_xpos + 3 * G_ROCKA, Rc, off);
      phys_axisangle2quat(q, x, 1.5707963267948966);
      phys_quat2mat(Rx, q);
      phys_mat_mul3(T, Rz, Rx);
      phys_mat_mul3(D->geom_xmat + 9 * G_ROCKA, Rc, T);
      tilt(G_ROCKA, 0.02);
    }
    int nc = eval(y, phys_collide_convex_convex, g1, g2, 0);
    ncon += nc;
    check_pair(phys_collide_convex_convex, g1, g2, &ncmp[kind], &nskip);
    nrec += check_clip_record(g1, g2);
    M->geom_type[G_ROCKA] = M->geom_type[G_ROCKB] = PHYS_GEOM_MESH;
    memcpy(M->geom_rbound, rb, sizeof(rb));
  }
  printf("cylinders: worst finite-difference mismatch %.3g (tol %.0e, floor %.0e)\n", WORST, RTOL, FLOOR);
  WORST = worst, FDSTEP = 1e-5, RIGID_TOL = 1e-12, FLOOR = 1e-2;
  printf("cylinders: tilted on a mesh %d, on a box %d, on its side %d, capsule on a cap %d contacts compared "
         "(of %d), %d skipped; %d read from their record\n", ncmp[0], ncmp[1], ncmp[2], ncmp[3], ncon, nskip, nrec);
  CHECK(ncmp[0] > 60 && ncmp[1] > 60 && ncmp[2] > 40 && ncmp[3] > 40 && nrec > 300);
}

// a cylinder standing upright on the mesh cube's face, tilted by 0, 1e-9 or 1e-7 rad (its cap's rim polygon
// has an arbitrary angle there: it turns with the body): every contact differentiated with bounded
// entries, d dist / d(cylinder translation along the face normal) = 1 (the cylinder is geom 1: n points
// to the cube, dist grows when it rises), rigid motion
static void test_cylinder_upright(void) {
  double rb = M->geom_rbound[G_ANY];
  RIGID_TOL = 1e-10;
  for (int it = 0; it < 30; it++) {
    double c[3] = {0, 0, 0}, p2[3], jac[7 * 18], y[7], T[9], q[4], z[3] = {0, 0, 1};
    set_mesh(G_CUBE, c);
    const double* R = D->geom_xmat + 9 * G_CUBE;
    double r = phys_rng_range(&RNG, 0.03, 0.08), h = phys_rng_range(&RNG, 0.03, 0.08);
    double off[3] = {phys_rng_range(&RNG, -0.05, 0.05), phys_rng_range(&RNG, -0.05, 0.05), HCUBE[2] + h - 1e-3};
    phys_mat_vec3(p2, R, off);
    set_any(PHYS_GEOM_CYLINDER, r, h, 0, p2);
    M->geom_rbound[G_ANY] = sqrt(r * r + h * h);
    phys_axisangle2quat(q, z, phys_rng_range(&RNG, -3.14, 3.14));
    phys_quat2mat(T, q);
    phys_mat_mul3(D->geom_xmat + 9 * G_ANY, R, T);
    tilt(G_ANY, (it % 3 == 0 ? 0 : it % 3 == 1 ? 1e-9 : 1e-7));
    int nc = eval(y, phys_collide_convex_convex, G_ANY, G_CUBE, 0), ncol = phys_primitive_deriv_ncol(M, G_ANY, G_CUBE);
    CHECK(nc >= 3);
    check_all(phys_collide_convex_convex, G_ANY, G_CUBE);
    double f[3] = {R[2], R[5], R[8]};
    for (int con = 0; con < nc; con++) {
      CHECK(phys_primitive_deriv(jac, M, D, G_ANY, G_CUBE, con) == 0);
      double big = 0;
      for (int j = 0; j < 7 * ncol; j++) big = fmax(big, fabs(jac[j]));
      CHECK_MSG(big < 10, "largest entry %g", big);
      double dd = 0;
      for (int k = 0; k < 3; k++) dd += jac[6 * ncol + k] * f[k];
      CHECK_NEAR(dd, 1, 1e-9);
      check_rigid(G_ANY, G_CUBE, con);
    }
  }
  RIGID_TOL = 1e-12;
  M->geom_rbound[G_ANY] = rb;
}

// witness points on smooth patches (witness.h) in random poses: an ellipsoid or a cylinder against the rocks and
// the mesh cube, separated and overlapping. Every single witness point records its patch (none left UNKNOWN), its
// Jacobian matches the central differences where the pair function is smooth over the stencil, and it is
// refused without its record
static void test_smooth_random(void) {
  int ncmp[2] = {0, 0}, nskip = 0, npen = 0, nwit[2] = {0, 0}, nclip = 0, nunk = 0;
  double jac[7 * 18];
  for (int it = 0; it < 200; it++) {
    double p1[3], p2[3], y[7];
    int kind = it % 2, g2 = it % 4 < 2 ? G_ROCKA + (it / 4) % 2 : G_CUBE;
    rand_pt(p1, 0.4), rand_pt(p2, 0.4);
    if (kind == 0)
      set_any(PHYS_GEOM_ELLIPSOID, phys_rng_range(&RNG, 0.1, 0.3), phys_rng_range(&RNG, 0.1, 0.3),
              phys_rng_range(&RNG, 0.1, 0.3), p1);
    else
      set_any(PHYS_GEOM_CYLINDER, phys_rng_range(&RNG, 0.1, 0.3), phys_rng_range(&RNG, 0.1, 0.3), 0, p1);
    set_mesh(g2, p2);
    physContact out[PHYS_MAXPAIRCON];
    int n = phys_collide_convex_convex(M, D, G_ANY, g2, MARGIN, out);
    if (n == 0) continue;
    check_all(phys_collide_convex_convex, G_ANY, g2);
    for (int k = 0; k < n; k++) {
      int fl = PHYS_FEATURE_FLAGS(out[k].feature[0]);
      if (fl & PHYS_FEATF_REF || PHYS_FEATURE_FLAGS(out[k].feature[1]) & PHYS_FEATF_REF) {
        nclip++;
        continue;
      }
      if (!(fl & PHYS_FEATF_WITNESS)) {
        nunk++;
        continue;
      }
      nwit[kind]++, npen += (fl & PHYS_FEATF_INSIDE) != 0;
      CHECK(out[k].witness[0][0] == -1 && out[k].witness[1][0] >= 0);
      if (eval(y, phys_collide_convex_convex, G_ANY, g2, k) == n && check_fd_smooth(phys_collide_convex_convex,
                                                                                   G_ANY, g2, k)) {
        ncmp[kind]++;
        check_rigid(G_ANY, g2, k);
      } else {
        nskip++;
      }
      physContact keep = out[k];
      out[k].feature[0] = out[k].feature[1] = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
      CHECK(phys_primitive_deriv_out(jac, M, D, G_ANY, g2, k, out, n) == -1);
      out[k] = keep;
    }
  }
  printf("smooth witness points: ellipsoid-mesh %d, cylinder-mesh %d (%d overlapping), %d compared with central "
         "differences (ellipsoid %d, cylinder %d), %d skipped next to a switch; %d clipped points; %d unrecorded\n",
         nwit[0], nwit[1], npen, ncmp[0] + ncmp[1], ncmp[0], ncmp[1], nskip, nclip, nunk);
  CHECK(ncmp[0] > 30 && ncmp[1] > 30 && npen > 20 && nunk == 0);
}

// a mesh of more than 4096 hull faces (G_BIG): a box lying on its hull face 4200, tilted by 3e-3 rad, its centre
// 1e-4 below the box's face: the face's three vertices clipped against the box's face (the reference) record the
// incident face's id 4200 (the clipped point's number in physContact.clip: face ids were limited to 4096 when the
// number shared the feature's index, and larger ones left unrecorded), and their Jacobians read it and match the
// central differences
static void test_big_mesh(void) {
  int mesh = M->geom_dataid[G_BIG], nface = M->mesh_hullfacenum[mesh], f = 4200;
  printf("big mesh: %d vertices, %d hull faces\n", M->mesh_hullnum[mesh], nface);
  CHECK(nface == 2 * NBIG - 4);
  double o[3] = {0, 0, 0}, I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, cf[3] = {0, 0, 0}, nf[3], ax[3], q[4], p[3];
  memcpy(D->geom_xpos + 3 * G_BIG, o, sizeof(o));
  memcpy(D->geom_xmat + 9 * G_BIG, I, sizeof(I));
  int fa = M->mesh_hullfaceadr[mesh] + f, nv = M->hull_facenum[fa];
  const int* fv = M->hull_facevert + M->hull_faceadr[fa];
  const double* vert = M->mesh_vert + 3 * M->mesh_vertadr[mesh];
  for (int i = 0; i < nv; i++) phys_addscl3(cf, cf, vert + 3 * fv[i], 1.0 / nv);
  phys_copy3(nf, M->hull_facenormal + 4 * fa);
  CHECK(nv == 3);
  // the box (half 0.2, 0.2, 0.05): its local z along the face normal, its -z face 1e-4 below the face's centroid
  set_any(PHYS_GEOM_BOX, 0.2, 0.2, 0.05, o);
  double zz[3] = {0, 0, 1};
  phys_cross3(ax, zz, nf);
  double sa = phys_normalize3(ax);
  phys_axisangle2quat(q, ax, atan2(sa, nf[2]));
  phys_quat2mat(D->geom_xmat + 9 * G_ANY, q);
  double w[3] = {D->geom_xmat[9 * G_ANY] * 3e-3, D->geom_xmat[9 * G_ANY + 3] * 3e-3, D->geom_xmat[9 * G_ANY + 6] * 3e-3};
  twist(G_ANY, o, w);
  for (int k = 0; k < 3; k++) p[k] = cf[k] + nf[k] * (0.05 - 1e-4);
  memcpy(D->geom_xpos + 3 * G_ANY, p, sizeof(p));
  physContact out[PHYS_MAXPAIRCON];
  double jac[7 * 18];
  int n = phys_collide_convex_convex(M, D, G_ANY, G_BIG, MARGIN, out), ncmp = 0;
  CHECK_MSG(n == 3, "%d contacts", n);
  for (int k = 0; k < n; k++) {
    int f0 = out[k].feature[0], f1 = out[k].feature[1];
    CHECK_MSG(PHYS_FEATURE_FLAGS(f0) == PHYS_FEATF_REF && PHYS_FEATURE_FLAGS(f1) == PHYS_FEATF_INC &&
              PHYS_FEATURE_KIND(f1) == PHYS_FEAT_FACE && PHYS_CONVEX_CLIP_ID(f1) == f && out[k].clip == k,
              "contact %d: features %#x %#x, clip %d", k, f0, f1, out[k].clip);
    CHECK(phys_primitive_deriv_out(jac, M, D, G_ANY, G_BIG, k, out, n) == 0);
    ncmp += check_fd_smooth(phys_collide_convex_convex, G_ANY, G_BIG, k);
  }
  all_matches_one(G_ANY, G_BIG, out, n, 0);
  printf("big mesh: %d clipped points on hull face %d, %d compared with central differences\n", n, f, ncmp);
  CHECK(ncmp == 3);
}

// parallel sides (issue 11): cylinder-cylinder and capsule-cylinder (capsule-capsule is primitive.c's closed form,
// not a GJK pair) in both geom orders, the first
// along a random direction, the second parallel beside it (sunk 1..3 mm, shifted along the axis so that either
// side's end bounds the overlap), then tilted by 0 or +-2e-3 rad about a random axis (each side of GJK's normal's
// kink): both points of the line contact record the sides (REF on the first geom, INC on the second) and their
// Jacobian matches central differences; the record's normal is perpendicular to the first geom's axis
static void test_parallel_sides(void) {
  int types[2][2] = {{PHYS_GEOM_CYLINDER, PHYS_GEOM_CYLINDER}, {PHYS_GEOM_CAPSULE, PHYS_GEOM_CYLINDER}};
  int ncmp[2][3] = {{0}}, nskip = 0, nline = 0, nrec = 0;
  double rb[G_NGEOM], worst_perp = 0;
  memcpy(rb, M->geom_rbound, sizeof(rb));
  for (int it = 0; it < 120; it++) {
    int k = it % 2, order = it / 2 % 2, tilted = it / 4 % 3, g[2] = {G_ANY, G_ROCKA};
    int t1 = types[k][order], t2 = types[k][1 - order];
    double r1 = t1 == PHYS_GEOM_CYLINDER ? 0.1 : 0.05, r2 = t2 == PHYS_GEOM_CYLINDER ? 0.06 : 0.04, h1 = 0.2, h2 = 0.12;
    double c[3] = {0, 0, 0}, q[4], ax[3], Ra[9], up[3] = {0, 0, 1};
    set_geom(g[0], t1, r1, h1, 0, c);
    set_geom(g[1], t2, r2, h2, 0, c);
    M->geom_rbound[g[0]] = t1 == PHYS_GEOM_CAPSULE ? r1 + h1 : sqrt(r1 * r1 + h1 * h1);
    M->geom_rbound[g[1]] = t2 == PHYS_GEOM_CAPSULE ? r2 + h2 : sqrt(r2 * r2 + h2 * h2);
    // the second geom: the first's rotation, its centre at a random direction perpendicular to the axis
    memcpy(Ra, D->geom_xmat + 9 * g[0], sizeof(Ra));
    memcpy(D->geom_xmat + 9 * g[1], Ra, sizeof(Ra));
    for (int j = 0; j < 3; j++) ax[j] = Ra[3 * j + 2];
    double w[3], dir[3], Rw[9];
    phys_cross3(w, ax, up);
    phys_normalize3(w);
    phys_axisangle2quat(q, ax, phys_rng_range(&RNG, -3.14, 3.14));
    phys_quat2mat(Rw, q);
    phys_mat_vec3(dir, Rw, w);
    double dist = r1 + r2 - phys_rng_range(&RNG, 0.001, 0.003), along = phys_rng_range(&RNG, -0.12, 0.12);
    for (int j = 0; j < 3; j++) D->geom_xpos[3 * g[1] + j] = dist * dir[j] + along * ax[j];
    if (tilted) {
      double tw[3], dt[3] = {0, 0, 0};
      rand_pt(tw, 1);
      phys_normalize3(tw);
      for (int j = 0; j < 3; j++) tw[j] *= tilted == 1 ? 2e-3 : -2e-3;
      twist(g[1], dt, tw);
    }
    int swap;   // capsule-cylinder in the pair function's order: the tilted geom first when swapped
    phys_collide_fn(t1, t2, &swap);
    if (swap) {
      int gt = g[0];
      g[0] = g[1], g[1] = gt, t1 = t2;
      for (int j = 0; j < 3; j++) ax[j] = D->geom_xmat[9 * g[0] + 3 * j + 2];
    }
    physContact out[PHYS_MAXPAIRCON];
    int nout = phys_collide_convex_convex(M, D, g[0], g[1], MARGIN, out);
    nline += nout == 2;
    for (int i = 0; i < nout; i++) {
      int* f = out[i].feature;
      nrec += PHYS_FEATURE_FLAGS(f[0]) == PHYS_FEATF_REF && PHYS_FEATURE_FLAGS(f[1]) == PHYS_FEATF_INC &&
              PHYS_FEATURE_KIND(f[0]) == (t1 == PHYS_GEOM_CYLINDER ? PHYS_FEAT_SURFACE : PHYS_FEAT_EDGE);
      worst_perp = fmax(worst_perp, fabs(phys_dot3(out[i].frame, ax)));
    }
    check_pair(phys_collide_convex_convex, g[0], g[1], &ncmp[k][tilted], &nskip);
    M->geom_type[G_ANY] = PHYS_GEOM_SPHERE, M->geom_type[G_ROCKA] = PHYS_GEOM_MESH;
    memcpy(M->geom_rbound, rb, sizeof(rb));
  }
  printf("parallel sides: %d line contacts of 120, %d points recorded; compared (parallel, +tilt, -tilt): "
         "cylinders %d %d %d, capsule-cylinder %d %d %d, %d skipped; normal . axis %.2g\n", nline, nrec, ncmp[0][0],
         ncmp[0][1], ncmp[0][2], ncmp[1][0], ncmp[1][1], ncmp[1][2], nskip, worst_perp);
  CHECK(nline == 120 && nrec == 240 && worst_perp < 1e-14);
  for (int k = 0; k < 2; k++)
    for (int t = 0; t < 3; t++) CHECK(ncmp[k][t] >= 36);
}

// out-of-range indices and the wrong geom order are refused (-1)
static void test_refused(void) {
  double p[3] = {0, 0, 0}, q[3] = {0.1, 0.2, 0.3}, jac[7 * 18];
  set_mesh(G_ROCKB, q);
  set_any(PHYS_GEOM_BOX, 0.2, 0.3, 0.1, p);
  CHECK(phys_primitive_deriv(jac, M, D, G_ANY, G_ROCKB, 0) == 0);
  CHECK(phys_primitive_deriv(jac, M, D, G_ANY, G_ROCKB, PHYS_MAXPAIRCON) == -1);
  CHECK(phys_primitive_deriv(jac, M, D, G_ROCKB, G_ANY, 0) == -1);  // not the pair function's order
}

int main(void) {
  phys_rng_seed(&RNG, 20261123);
  setup();
  test_plane_mesh();
  test_random_pairs();
  test_resting();
  test_cylinders();
  test_cylinder_upright();
  test_smooth_random();
  test_big_mesh();
  test_parallel_sides();
  test_refused();
  printf("all contacts of a pair at once: %d pairs, %d contacts, %d pairs of 2+ contacts bit-identical to one by "
         "one\n", ALL_PAIRS, ALL_CON, ALL_MULTI);
  CHECK(ALL_CON > 600 && ALL_MULTI > 150);
  printf("worst finite-difference mismatch %.3g (tol %.0e, floor %.0e)\n", WORST, RTOL, FLOOR);
  phys_free_data(D);
  phys_free_model(M);
  return test_done();
}

// test_hull.c - convex hulls of meshes at compile time: exact hulls of a cube (with interior and face
// points), an icosahedron, random point clouds and an open mesh (Atlas foot): containment, Euler's
// formula, counterclockwise faces; degenerate meshes are errors naming the mesh unless no geom collides; a learned
// mesh's reserved regions and phys_hull_rebuild (test_rebuild).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hull.h"
#include "mesh.h"
#include "rng.h"
#include "spec.h"
#include "test.h"

// a spec with one mesh of nv vertices (copied; no faces) used by a mesh geom on the world body
static physSpec* one_mesh_spec(const double* vert, int nv, int contype) {
  physSpec* s = phys_spec_new();
  int mi = phys_spec_add_mesh(s);
  snprintf(s->mesh[mi].name, PHYS_NAMELEN, "blob");
  s->mesh[mi].vert = malloc(sizeof(double) * 3 * (size_t)(nv ? nv : 1));
  if (nv) memcpy(s->mesh[mi].vert, vert, sizeof(double) * 3 * (size_t)nv);
  s->mesh[mi].nvert = nv;
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_MESH);
  s->geom[g].mesh = mi;
  s->geom[g].contype = s->geom[g].conaffinity = contype;
  return s;
}

// checks every hull invariant of mesh 0 of m: vertices inside every face plane (tol), face vertices on
// their plane, unit normals, counterclockwise convex polygons, Euler V - E + F = 2, every mesh vertex
// inside; returns the number of failed checks
static int check_hull(const physModel* m, int mesh, double tol) {
  int fails = 0;
  const double* v = m->mesh_vert + 3 * m->mesh_vertadr[mesh];
  int nv = m->mesh_vertnum[mesh];
  int f0 = m->mesh_hullfaceadr[mesh], nf = m->mesh_hullfacenum[mesh];
  int nedge2 = 0;
  for (int f = f0; f < f0 + nf; f++) {
    const double* pl = m->hull_facenormal + 4 * f;
    if (fabs(pl[0] * pl[0] + pl[1] * pl[1] + pl[2] * pl[2] - 1) > 1e-12) fails++;
    for (int i = 0; i < nv; i++)
      if (pl[0] * v[3 * i] + pl[1] * v[3 * i + 1] + pl[2] * v[3 * i + 2] > pl[3] + tol) fails++;
    const int* fv = m->hull_facevert + m->hull_faceadr[f];
    int n = m->hull_facenum[f];
    if (n < 3) fails++;
    nedge2 += n;
    for (int k = 0; k < n; k++) {
      const double* a = v + 3 * fv[k];
      const double* b = v + 3 * fv[(k + 1) % n];
      const double* c = v + 3 * fv[(k + 2) % n];
      if (fabs(pl[0] * a[0] + pl[1] * a[1] + pl[2] * a[2] - pl[3]) > tol) fails++;
      // (b - a) x (c - b) . n > 0: a left turn seen from outside
      double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]};
      double cr[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
      if (!(cr[0] * pl[0] + cr[1] * pl[1] + cr[2] * pl[2] > 0)) fails++;
    }
  }
  if (nedge2 % 2) fails++;
  if (m->mesh_hullnum[mesh] - nedge2 / 2 + nf != 2) fails++;
  return fails;
}

// unit cube corners (half size h) followed by extra points: the centre and the 6 face centres
static void cube_points(double* p, double h) {
  int n = 0;
  for (int i = 0; i < 8; i++, n++) {
    p[3 * n] = (i & 1 ? h : -h);
    p[3 * n + 1] = (i & 2 ? h : -h);
    p[3 * n + 2] = (i & 4 ? h : -h);
  }
  memset(p + 3 * n, 0, sizeof(double) * 3 * 7);
  for (int k = 0; k < 3; k++) {
    p[3 * (n + 1 + 2 * k) + k] = h;
    p[3 * (n + 2 + 2 * k) + k] = -h;
  }
}

// a cube with interior and face-centre points: 8 hull vertices, 6 quads, normals the axes, offset h
static void test_cube(void) {
  double p[15 * 3];
  cube_points(p, 0.3);
  physSpec* s = one_mesh_spec(p, 15, 1);
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  // the centre point lies inside the hull (the face centres lie on it): a non-convex mesh, counted
  CHECK_MSG(log.nwarning == 1 && strstr(log.warning[0], "mesh 'blob' is not convex (1 of 15 vertices inside"),
            "%d warnings: %s", log.nwarning, log.nwarning ? log.warning[0] : "");
  if (m) {
    CHECK(m->nhullvert == 8 && m->mesh_hullnum[0] == 8 && m->mesh_hulladr[0] == 0);
    CHECK(m->nhullface == 6 && m->mesh_hullfacenum[0] == 6);
    CHECK(m->nhullfacevert == 24);
    for (int i = 0; i < 8; i++) CHECK(m->hull_vert[i] >= 0 && m->hull_vert[i] < 8);  // corners only
    double axes[3] = {0, 0, 0};
    for (int f = 0; f < 6; f++) {
      const double* pl = m->hull_facenormal + 4 * f;
      CHECK(m->hull_facenum[f] == 4);
      CHECK_NEAR(pl[3], 0.3, 1e-15);
      for (int k = 0; k < 3; k++)
        if (fabs(fabs(pl[k]) - 1) < 1e-15) axes[k] += pl[k] > 0 ? 1 : 10;
    }
    for (int k = 0; k < 3; k++) CHECK_NEAR(axes[k], 11, 0);  // +axis once and -axis once
    CHECK(check_hull(m, 0, 1e-12) == 0);
    // scaled vertices keep the combinatorics: phys_hull_normals doubles the offsets
    for (int i = 0; i < 3 * m->nmeshvert; i++) m->mesh_vert[i] *= 2;
    phys_hull_normals(m, 0);
    for (int f = 0; f < 6; f++) CHECK_NEAR(m->hull_facenormal[4 * f + 3], 0.6, 1e-15);
    CHECK(check_hull(m, 0, 1e-12) == 0);
  }
  phys_free_model(m);
  phys_spec_free(s);
}

// icosahedron: 12 vertices, 20 triangles, every face at the inradius
static void test_icosahedron(void) {
  const double t = (1 + sqrt(5.0)) / 2;
  double p[12 * 3];
  int n = 0;
  for (int a = -1; a <= 1; a += 2)
    for (int b = -1; b <= 1; b += 2) {
      double q[3][3] = {{0, a, b * t}, {a, b * t, 0}, {b * t, 0, a}};
      for (int k = 0; k < 3; k++, n++) memcpy(p + 3 * n, q[k], sizeof(q[k]));
    }
  physSpec* s = one_mesh_spec(p, 12, 1);
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    CHECK(m->mesh_hullnum[0] == 12 && m->mesh_hullfacenum[0] == 20 && m->nhullfacevert == 60);
    CHECK(log.nwarning == 0);  // convex: no warning
    // inradius of an icosahedron of edge 2: t^2 / sqrt(3)
    for (int f = 0; f < 20; f++) CHECK_NEAR(m->hull_facenormal[4 * f + 3], t * t / sqrt(3.0), 1e-14);
    CHECK(check_hull(m, 0, 1e-12) == 0);
  }
  phys_free_model(m);
  phys_spec_free(s);
}

// random points in a ball: invariants hold, every hull vertex is an input point on >= 3 faces
static void test_random_cloud(void) {
  physRng rng;
  phys_rng_seed(&rng, 7);
  for (int trial = 0; trial < 5; trial++) {
    int np = 50 + 100 * trial;
    double* p = malloc(sizeof(double) * 3 * (size_t)np);
    for (int i = 0; i < np; i++) {
      double r[3];
      do {
        for (int k = 0; k < 3; k++) r[k] = 2 * phys_rng_uniform(&rng) - 1;
      } while (r[0] * r[0] + r[1] * r[1] + r[2] * r[2] > 1);
      memcpy(p + 3 * i, r, sizeof(r));
    }
    physSpec* s = one_mesh_spec(p, np, 1);
    physLog log = {0};
    physModel* m = phys_compile(s, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (m) {
      CHECK(check_hull(m, 0, 1e-12) == 0);
      CHECK(m->mesh_hullnum[0] >= 4 && m->mesh_hullnum[0] <= np);
      for (int i = 0; i < m->mesh_hullnum[0]; i++) {
        int vid = m->hull_vert[i], nface = 0;
        for (int e = 0; e < m->nhullfacevert; e++) nface += m->hull_facevert[e] == vid;
        CHECK(nface >= 3);
      }
    }
    phys_free_model(m);
    phys_spec_free(s);
    free(p);
  }
}

// degenerate meshes: an error naming the mesh when a geom collides, no hull otherwise
static void test_degenerate(void) {
  double flat[5 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.5, 0.2, 0};
  double few[3 * 3] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
  double line[4 * 3] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
  const double* sets[3] = {flat, few, line};
  int counts[3] = {5, 3, 4};
  for (int k = 0; k < 3; k++) {
    physSpec* s = one_mesh_spec(sets[k], counts[k], 1);
    snprintf(s->filename, sizeof(s->filename), "robot.urdf");
    snprintf(s->mesh[0].file, sizeof(s->mesh[0].file), "/models/blob.stl");
    s->mesh[0].line = 12;
    physLog log = {0};
    physModel* m = phys_compile(s, &log);
    CHECK(m == NULL);
    CHECK(log.status == PHYS_ERR_MODEL);
    // the model file and line of the <mesh> and the mesh file (before: not the mesh file)
    CHECK_MSG(strstr(log.error, "robot.urdf:12: mesh 'blob' (/models/blob.stl): ") != NULL, "%s", log.error);
    phys_free_model(m);
    phys_spec_free(s);
    // the same mesh on a geom that never collides compiles, without a hull
    s = one_mesh_spec(sets[k], counts[k], 0);
    m = phys_compile(s, &log);
    CHECK(m != NULL);
    if (m) CHECK(m->mesh_hullnum[0] == 0 && m->nhullvert == 0 && m->nhullface == 0);
    phys_free_model(m);
    phys_spec_free(s);
  }
}

// an open mesh (the Atlas left foot, STL) closes into a valid hull that contains every vertex
static void test_atlas_foot(void) {
  const char* path = "/usr/share/doc/dart/data/sdf/atlas/l_foot.stl";
  FILE* f = fopen(path, "rb");
  if (!f) {
    printf("skipped: %s not installed\n", path);
    return;
  }
  fclose(f);
  physSpecMesh sm;
  memset(&sm, 0, sizeof(sm));
  physLog log = {0};
  CHECK(phys_mesh_load(path, NULL, &sm, &log) == PHYS_OK);
  physSpec* s = one_mesh_spec(sm.vert, sm.nvert, 1);
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    CHECK(check_hull(m, 0, 1e-9) == 0);
    CHECK(m->mesh_hullnum[0] >= 4 && m->mesh_hullnum[0] <= sm.nvert);
    printf("l_foot.stl: %d vertices, hull %d vertices %d faces\n", sm.nvert, m->mesh_hullnum[0],
           m->mesh_hullfacenum[0]);
  }
  phys_free_model(m);
  phys_spec_free(s);
  free(sm.vert);
  free(sm.face);
}

// issue 14 item 2: a learned mesh (physSpecMesh.learn) of N = 20 points reserves N hull vertices, 2N - 4 faces and
// 6N - 12 face vertices (mesh_hullcap = N); phys_hull_rebuild remakes the hull from moved vertices: a cloud with
// some points inside, then all 20 on a sphere (every point a vertex, 36 triangles: the regions full), each hull
// valid (check_hull); coplanar vertices are refused (PHYS_ERR_VALUE) with the hull unchanged, and a mesh without
// reserved regions is refused (PHYS_ERR_ARG)
static void test_rebuild(void) {
  enum { N = 20 };
  double p[3 * N];
  physRng rng;
  phys_rng_seed(&rng, 11);
  for (int i = 0; i < 3 * N; i++) p[i] = 2 * phys_rng_uniform(&rng) - 1;
  physSpec* s = one_mesh_spec(p, N, 1);
  s->mesh[0].learn = 1;
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) {
    phys_spec_free(s);
    return;
  }
  CHECK(m->mesh_hullcap[0] == N && m->nhullvert == N && m->nhullface == 2 * N - 4 && m->nhullfacevert == 6 * N - 12);
  CHECK(check_hull(m, 0, 1e-12) == 0 && m->mesh_hullnum[0] < N);
  // every point on the unit sphere: all N are hull vertices
  for (int i = 0; i < N; i++) {
    double* v = m->mesh_vert + 3 * i;
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; k++) v[k] /= n;
  }
  CHECK(phys_hull_rebuild(m, 0, &log) == PHYS_OK);
  CHECK(check_hull(m, 0, 1e-12) == 0);
  CHECK(m->mesh_hullnum[0] == N && m->mesh_hullfacenum[0] == 2 * N - 4);
  int nfv = 0;
  for (int f = 0; f < m->mesh_hullfacenum[0]; f++) nfv += m->hull_facenum[f];
  CHECK(nfv == 6 * N - 12);
  // flattened: refused, the sphere's hull stays
  int nface = m->mesh_hullfacenum[0];
  double* keep = malloc(sizeof(double) * 3 * N);
  memcpy(keep, m->mesh_vert, sizeof(double) * 3 * N);
  for (int i = 0; i < N; i++) m->mesh_vert[3 * i + 2] = 0;
  physLog log2 = {0};
  CHECK(phys_hull_rebuild(m, 0, &log2) == PHYS_ERR_VALUE);
  CHECK_MSG(strstr(log2.error, "mesh 'blob': its vertices span no volume") != NULL, "%s", log2.error);
  CHECK(m->mesh_hullnum[0] == N && m->mesh_hullfacenum[0] == nface);
  memcpy(m->mesh_vert, keep, sizeof(double) * 3 * N);
  free(keep);
  phys_free_model(m);
  phys_spec_free(s);
  // a mesh compiled without learn has no reserved regions
  s = one_mesh_spec(p, N, 1);
  m = phys_compile(s, &log);
  CHECK(m != NULL);
  if (m) {
    physLog log3 = {0};
    CHECK(m->mesh_hullcap[0] == 0 && phys_hull_rebuild(m, 0, &log3) == PHYS_ERR_ARG);
    CHECK_MSG(strstr(log3.error, "no reserved hull") != NULL, "%s", log3.error);
  }
  phys_free_model(m);
  phys_spec_free(s);
}

int main(void) {
  test_cube();
  test_icosahedron();
  test_random_cloud();
  test_degenerate();
  test_atlas_foot();
  test_rebuild();
  return test_done();
}

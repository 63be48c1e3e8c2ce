// test_metrics.c - paper 004's parameter metrics (src/sysid/metrics.c) on analytic cases:
//   - hull volumes: the unit cube 1, a corner tetrahedron 1/6, coplanar and too few points 0, a non-finite point
//     refused;
//   - intersections and symmetric differences: two unit cubes offset by a along x (symmetric difference 2a), by
//     (a, b, c) (intersection (1-a)(1-b)(1-c)), touching faces and disjoint (intersection 0), a cube against
//     itself (0), a unit square prism against itself turned 45 degrees about z (the regular octagon:
//     intersection 2 (sqrt 2 - 1)), a tetrahedron inside a cube (the tetrahedron);
//   - a body's hull points (box corners through the geom's pose, mesh vertices; a sphere refused) and inertial
//     parameters (the tensor R diag(I) R' of a turned principal frame);
//   - inertia error: 0 against itself, |dm| / m for the mass alone, |dc| / l for the centre of mass;
//   - phys_param_errors on two cube models: a box 10 % longer in x (volume error 0.1), friction 0.27 against 0.18
//     (0.5), a different body refused with its name.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "physid.h"
#include "test.h"

// the 8 corners of the box [x0, x0 + sx] x [y0, y0 + sy] x [z0, z0 + sz] into p
static void box_points(double p[24], double x0, double y0, double z0, double sx, double sy, double sz) {
  for (int c = 0; c < 8; c++) {
    p[3 * c] = x0 + (c & 1 ? sx : 0);
    p[3 * c + 1] = y0 + (c & 2 ? sy : 0);
    p[3 * c + 2] = z0 + (c & 4 ? sz : 0);
  }
}

static void test_volume(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  double p[24], v = -1;
  box_points(p, 0.2, -3, 7, 1, 1, 1);
  CHECK(phys_hull_volume(p, 8, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 1, 1e-14);
  double tet[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK(phys_hull_volume(tet, 4, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 1.0 / 6, 1e-15);
  double flat[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.5, 0.5, 0};
  v = -1;
  CHECK(phys_hull_volume(flat, 5, &v, &log) == PHYS_OK);
  CHECK(v == 0);
  v = -1;
  CHECK(phys_hull_volume(tet, 3, &v, &log) == PHYS_OK);
  CHECK(v == 0);
  tet[4] = NAN;
  CHECK(phys_hull_volume(tet, 4, &v, &log) == PHYS_ERR_VALUE);
  CHECK(strstr(log.error, "point 1 is not finite") != NULL);
}

static void test_intersection(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  double a[24], b[24], v;
  box_points(a, 0, 0, 0, 1, 1, 1);
  // offset a along x: the symmetric difference is 2 a (1 x 1 faces)
  const double off[3] = {0.3, 0.01, 0.75};
  for (int i = 0; i < 3; i++) {
    box_points(b, off[i], 0, 0, 1, 1, 1);
    CHECK(phys_hull_symdiff_volume(a, 8, b, 8, &v, &log) == PHYS_OK);
    CHECK_NEAR(v, 2 * off[i], 1e-12);
  }
  box_points(b, 0.25, -0.5, 0.1, 1, 1, 1);   // (1 - 0.25)(1 - 0.5)(1 - 0.1)
  CHECK(phys_hull_intersection_volume(a, 8, b, 8, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 0.75 * 0.5 * 0.9, 1e-12);
  CHECK(phys_hull_symdiff_volume(a, 8, a, 8, &v, &log) == PHYS_OK);   // against itself
  CHECK_NEAR(v, 0, 1e-12);
  box_points(b, 1, 0, 0, 1, 1, 1);   // touching along the face x = 1
  v = -1;
  CHECK(phys_hull_intersection_volume(a, 8, b, 8, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 0, 1e-12);
  box_points(b, 1.5, 2, 0, 1, 1, 1);   // apart
  v = -1;
  CHECK(phys_hull_intersection_volume(a, 8, b, 8, &v, &log) == PHYS_OK);
  CHECK(v == 0);
  CHECK(phys_hull_symdiff_volume(a, 8, b, 8, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 2, 1e-12);
  // the centred unit square prism and the same turned 45 degrees about z: a regular octagon of area 2 (sqrt2 - 1)
  double c[24], r[24];
  box_points(c, -0.5, -0.5, 0, 1, 1, 1);
  for (int i = 0; i < 8; i++) {
    double x = c[3 * i], y = c[3 * i + 1], h = sqrt(0.5);
    r[3 * i] = h * (x - y), r[3 * i + 1] = h * (x + y), r[3 * i + 2] = c[3 * i + 2];
  }
  CHECK(phys_hull_intersection_volume(c, 8, r, 8, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 2 * (sqrt(2) - 1), 1e-12);
  CHECK(phys_hull_symdiff_volume(c, 8, r, 8, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 2 - 4 * (sqrt(2) - 1), 1e-12);
  // a tetrahedron inside the unit cube: the intersection is the tetrahedron
  double tet[12] = {0.1, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1, 0.9};
  CHECK(phys_hull_intersection_volume(a, 8, tet, 4, &v, &log) == PHYS_OK);
  CHECK_NEAR(v, 0.8 * 0.8 * 0.8 / 6, 1e-13);
}

// write text to model.xml (and mesh, if given, to t.obj) in a scratch folder and load it
static physModel* load_text(const char* text, const char* mesh, physLog* log) {
  char dir[] = "/tmp/test_metrics_XXXXXX", name[64], obj[64];
  if (!mkdtemp(dir)) return NULL;
  snprintf(name, sizeof name, "%s/model.xml", dir);
  snprintf(obj, sizeof obj, "%s/t.obj", dir);
  FILE* f = fopen(name, "w");
  if (f) fputs(text, f), fclose(f);
  if (mesh && (f = fopen(obj, "w"))) fputs(mesh, f), fclose(f);
  physModel* m = phys_load(name, NULL, log);
  unlink(name);
  if (mesh) unlink(obj);
  rmdir(dir);
  return m;
}

// a cube model: box half sizes (hx, hy, hz) at geom position gx along x, friction mu, mass 0.37, an optional
// second geom (extra)
static physModel* cube(double hx, double hy, double hz, double gx, double mu, const char* body, const char* extra,
                       physLog* log) {
  char text[2048];
  snprintf(text, sizeof text,
           "<mujoco><worldbody><geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\" friction=\"0 0 0\"/>"
           "<body name=\"%s\" pos=\"0 0 0.1\"><freejoint/><geom type=\"box\" size=\"%.17g %.17g %.17g\" "
           "pos=\"%.17g 0 0\" mass=\"0.37\" friction=\"%.17g 0 0\"/>%s</body></worldbody></mujoco>",
           body, hx, hy, hz, gx, mu, extra);
  return load_text(text, NULL, log);
}

static void test_body_points_inertia(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = load_text(
      "<mujoco><asset><mesh name=\"t\" file=\"t.obj\"/></asset><worldbody>"
      "<body name=\"b\"><freejoint/><geom type=\"box\" size=\"1 2 3\" pos=\"10 0 0\" euler=\"0 0 90\"/>"
      "<geom type=\"mesh\" mesh=\"t\" pos=\"0 5 0\"/><geom type=\"box\" size=\"1 1 1\" contype=\"0\" "
      "conaffinity=\"0\" mass=\"0\"/></body>"
      "<body name=\"s\" pos=\"0 0 3\"><freejoint/><geom type=\"sphere\" size=\"1\"/></body>"
      "<body name=\"i\"><freejoint/><inertial pos=\"0.1 0.2 0.3\" mass=\"2\" diaginertia=\"1 2 3\" "
      "euler=\"0 0 90\"/></body></worldbody></mujoco>",
      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n", &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  int g = -1;
  CHECK(phys_body_hull_points(m, 1, NULL, 0, &g) == 12);   // 8 box corners + 4 mesh vertices; the non-colliding box left out
  double p[36];
  phys_body_hull_points(m, 1, p, 12, NULL);
  // corner 0 (-1, -2, -3) turned 90 degrees about z: (2, -1, -3), plus (10, 0, 0)
  CHECK_NEAR(p[0], 12, 1e-12);
  CHECK_NEAR(p[1], -1, 1e-12);
  CHECK_NEAR(p[2], -3, 1e-12);
  double vol;   // the box is 2 x 4 x 6 and the mesh apart from it: their hull is more than 48 + 1/6
  CHECK(phys_hull_volume(p, 12, &vol, &log) == PHYS_OK && vol > 48 + 1.0 / 6);
  CHECK(phys_hull_volume(p, 8, &vol, &log) == PHYS_OK);
  CHECK_NEAR(vol, 48, 1e-11);
  CHECK(phys_body_hull_points(m, 2, NULL, 0, &g) == -1 && g == m->ngeom - 1);   // a sphere: no polytope
  CHECK(phys_body_hull_points(m, 3, NULL, 0, &g) == 0);                        // no geom
  // the tensor of principal moments (1, 2, 3) turned 90 degrees about z: diag (2, 1, 3), no products
  double th[10];
  phys_body_inertial_params(m, 3, th);
  const double want[10] = {2, 0.1, 0.2, 0.3, 2, 1, 3, 0, 0, 0};
  for (int k = 0; k < 10; k++) CHECK_NEAR(th[k], want[k], 1e-14);
  // inertia error: 0 against itself, the relative mass error alone, the centre of mass offset over l
  CHECK(phys_inertia_error(th, th, 0) == 0);
  double h[10];
  memcpy(h, th, sizeof h);
  h[0] = 2.3;
  CHECK_NEAR(phys_inertia_error(h, th, 0.05), 0.15, 1e-15);
  memcpy(h, th, sizeof h);
  h[1] += 0.03, h[3] -= 0.04;
  CHECK_NEAR(phys_inertia_error(h, th, 0.1), 0.5, 1e-14);
  // default l = sqrt(tr I / (3 m)) = 1: an inertia entry off by 0.2 gives 0.2 / (m l^2) = 0.1
  memcpy(h, th, sizeof h);
  h[7] = 0.2;
  CHECK_NEAR(phys_inertia_error(h, th, 0), 0.1, 1e-15);
  phys_free_model(m);
}

static void test_param_errors(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* t = cube(0.05, 0.05, 0.05, 0, 0.18, "cube", "", &log);
  physModel* m = cube(0.055, 0.05, 0.05, 0, 0.27, "cube", "", &log);
  physModel* s = cube(0.05, 0.05, 0.05, 0.01, 0.18, "cube", "", &log);
  physModel* o = cube(0.05, 0.05, 0.05, 0, 0.18, "box", "", &log);
  physModel* x = cube(0.05, 0.05, 0.05, 0, 0.18, "cube", "<geom type=\"box\" size=\"0.01 0.01 0.01\"/>", &log);
  CHECK_MSG(t && m && s && o && x, "%s", log.error);
  if (!(t && m && s && o && x)) return;
  physParamErrors e;
  CHECK(phys_param_errors(t, t, 0, &e, &log) == PHYS_OK);
  CHECK(e.nbody == 1 && e.nvolume == 1 && e.nfriction == 1 && e.ninertia == 1);
  CHECK_NEAR(e.volume_error, 0, 1e-12);
  CHECK(e.friction_error == 0 && e.inertia_error == 0);
  phys_param_errors_free(&e);
  // 10 % longer in x: A contains B, |A xor B| = 0.1 |B|; friction 0.27 against 0.18: 0.5; the mass is the same
  // (0.37 on both): the inertia error comes from the moments alone
  CHECK(phys_param_errors(m, t, 0, &e, &log) == PHYS_OK);
  CHECK_NEAR(e.volume_error, 0.1, 1e-12);
  CHECK_NEAR(e.body[0].true_volume, 0.001, 1e-17);
  CHECK_NEAR(e.body[0].symdiff, 0.0001, 1e-16);
  CHECK_NEAR(e.friction_error, 0.5, 1e-15);
  double th[10], thh[10];
  phys_body_inertial_params(t, 1, th);
  phys_body_inertial_params(m, 1, thh);
  CHECK(thh[0] == th[0] && e.inertia_error > 0);
  CHECK_NEAR(e.inertia_error, phys_inertia_error(thh, th, 0), 0);
  phys_param_errors_free(&e);
  // the geom moved 0.01 along x (the body's centre of mass with it): |A xor B| = 2 * 0.01 * 0.1 * 0.1
  CHECK(phys_param_errors(s, t, 0.035, &e, &log) == PHYS_OK);
  CHECK_NEAR(e.body[0].symdiff, 2 * 0.01 * 0.01, 1e-15);
  CHECK_NEAR(e.inertia_error, 0.01 / 0.035, 1e-12);
  phys_param_errors_free(&e);
  CHECK(phys_param_errors(o, t, 0, &e, &log) == PHYS_ERR_MODEL);
  CHECK(e.body == NULL);
  CHECK_MSG(strstr(log.error, "truth model: body 1 is 'cube', in the model 'box'") != NULL, "%s", log.error);
  memset(&log, 0, sizeof log);
  CHECK(phys_param_errors(x, t, 0, &e, &log) == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(log.error, "truth model: 2 geoms, the model 3") != NULL, "%s", log.error);
  phys_free_model(t);
  phys_free_model(m);
  phys_free_model(s);
  phys_free_model(o);
  phys_free_model(x);
}

int main(void) {
  test_volume();
  test_intersection();
  test_body_points_inertia();
  test_param_errors();
  return test_done();
}

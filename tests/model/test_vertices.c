// test_vertices.c - learned shapes at load time (src/model/vertices.c, issue 14 item 2): a box geom becomes a mesh
// of its 8 corners (same mass and inertia as the box, a hull with reserved regions: mesh_hullcap 8), a mesh geom
// keeps its vertices, and the refusals name the geom: unknown name, a sphere, a mesh shared by two geoms, a mesh
// name the box's corners would take.
#include "mjcf_text.h"

// models/cube.xml loaded with geoms[0..n) learned; NULL and log on failure
static physModel* load_learned(const char* file, const char* const* geoms, int n, physLog* log) {
  physLoadOptions opt = {0};
  opt.vertex_geoms = geoms, opt.nvertex_geoms = n;
  memset(log, 0, sizeof *log);
  return phys_load(file, &opt, log);
}

static void test_box(void) {
  physLog log;
  physModel* mb = phys_load("models/cube.xml", NULL, &log);
  const char* geoms[1] = {"cube"};
  physModel* m = load_learned("models/cube.xml", geoms, 1, &log);
  CHECK_MSG(m && mb, "%s", log.error);
  if (!m || !mb) return;
  int g = phys_name2id(m, "geom", "cube"), b = m->geom_bodyid[g], mid = m->geom_dataid[g];
  CHECK(m->geom_type[g] == PHYS_GEOM_MESH && mid == phys_name2id(m, "mesh", "cube"));
  CHECK(m->mesh_vertnum[mid] == 8 && m->mesh_facenum[mid] == 12 && m->mesh_hullnum[mid] == 8);
  CHECK(m->mesh_hullcap[mid] == 8 && m->mesh_hullfacenum[mid] == 6);
  CHECK_REL(m->body_mass[b], mb->body_mass[b], 1e-15, 0);
  for (int k = 0; k < 3; k++) CHECK_REL(m->body_inertia[3 * b + k], mb->body_inertia[3 * b + k], 1e-12, 0);
  CHECK_REL(m->geom_rbound[g], mb->geom_rbound[g], 1e-15, 0);
  phys_free_model(m);
  phys_free_model(mb);
}

static void test_mesh_and_refusals(void) {
  mjcf_text_begin("vertices");
  put("tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 0.1 0.1 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  const char* xml = put("m.xml",
                        "<mujoco><asset><mesh name='tet' file='tet.obj'/><mesh name='ball' file='tet.obj'/></asset>"
                        "<worldbody><geom name='floor' type='plane' size='1 1 .1'/>"
                        "<body name='a'><freejoint/><geom name='tet' type='mesh' mesh='tet'/></body>"
                        "<body name='b' pos='0 0 2'><freejoint/><geom name='ball' type='sphere' size='.1'/>"
                        "<geom name='s1' type='mesh' mesh='ball'/><geom name='s2' type='mesh' mesh='ball'/></body>"
                        "</worldbody></mujoco>");
  physLog log;
  const char* tet[1] = {"tet"};
  physModel* m = load_learned(xml, tet, 1, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    int mid = phys_name2id(m, "mesh", "tet");
    // 5 vertices (one inside): 4 on the hull, regions for 5, 6 faces, 18 face vertices
    CHECK(m->mesh_vertnum[mid] == 5 && m->mesh_hullnum[mid] == 4 && m->mesh_hullcap[mid] == 5);
    CHECK(m->mesh_hullcap[phys_name2id(m, "mesh", "ball")] == 0);
    phys_free_model(m);
  }
  static const struct {
    const char* geom;
    const char* msg;
  } bad[] = {
      {"nope", "vertices:nope: no geom named 'nope'"},
      {"ball", "vertices:ball: the geom is not a box or a mesh"},
      {"s1", "vertices:s1: its mesh 'ball' is also geom 's2''s; learned vertices belong to one geom"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char* g[1] = {bad[i].geom};
    m = load_learned(xml, g, 1, &log);
    CHECK(m == NULL && log.status == PHYS_ERR_ARG);
    CHECK_MSG(strstr(log.error, bad[i].msg) != NULL, "%s", log.error);
    phys_free_model(m);
  }
  // a box whose name a mesh has already
  const char* xml2 = put("b.xml", "<mujoco><asset><mesh name='cube' file='tet.obj'/></asset><worldbody>"
                                  "<body><freejoint/><geom name='cube' type='box' size='.1 .1 .1'/></body>"
                                  "</worldbody></mujoco>");
  const char* cube[1] = {"cube"};
  m = load_learned(xml2, cube, 1, &log);
  CHECK(m == NULL && log.status == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "b.xml:1: vertices:cube: a mesh named 'cube' exists already"), "%s", log.error);
  phys_free_model(m);
}

int main(void) {
  test_box();
  test_mesh_and_refusals();
  return mjcf_text_end();
}

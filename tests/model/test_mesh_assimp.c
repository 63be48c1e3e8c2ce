// test_mesh_assimp.c - Collada scenes through libassimp: node transforms, units, the ignored up axis,
// triangulation, skipped lines, and refused input (not Collada, too large, too deep, no faces).
#include "mesh_assimp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mesh.h"
#include "test.h"
#include "test_tmpfile.h"

static char dir[256];

// write text to dir/name; returns the path
static const char* write_text(const char* name, const char* text) { return test_tmpfile_write(dir, name, text); }

// collected triangles
typedef struct tris_ {
  double p[64][9];
  int n;
} tris;

// keep up to 64 triangles
static physStatus keep_tri(void* ctx, const double p[9]) {
  tris* t = ctx;
  if (t->n < 64) memcpy(t->p[t->n], p, sizeof(t->p[0]));
  t->n++;
  return PHYS_OK;
}

// read a Collada file through phys_mesh_scene_read into t
static physStatus read_scene(const char* path, tris* t, physLog* log) {
  memset(t, 0, sizeof(*t));
  memset(log, 0, sizeof(*log));
  FILE* f = fopen(path, "rb");
  if (!f) return PHYS_ERR_IO;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  physStatus st = phys_mesh_scene_read(f, size, path, keep_tri, t, log);
  fclose(f);
  return st;
}

// a Collada document around one geometry (a triangle (0,0,0) (1,0,0) (0,1,0) in file units, plus a line
// primitive) and the given <visual_scene> nodes; unit in metres, up axis as given
static const char* scene_text(const char* unit, const char* up, const char* nodes) {
  static char text[8192];
  snprintf(text, sizeof(text),
           "<?xml version='1.0'?>\n"
           "<COLLADA xmlns='http://www.collada.org/2005/11/COLLADASchema' version='1.4.1'>\n"
           "<asset><unit meter='%s'/><up_axis>%s</up_axis></asset>\n"
           "<library_geometries><geometry id='g'><mesh>\n"
           "<source id='p'><float_array id='pa' count='9'>0 0 0 1 0 0 0 1 0</float_array>\n"
           "<technique_common><accessor source='#pa' count='3' stride='3'><param name='X' type='float'/>"
           "<param name='Y' type='float'/><param name='Z' type='float'/></accessor></technique_common></source>\n"
           "<vertices id='v'><input semantic='POSITION' source='#p'/></vertices>\n"
           "<triangles count='1'><input semantic='VERTEX' source='#v' offset='0'/><p>0 1 2</p></triangles>\n"
           "<lines count='1'><input semantic='VERTEX' source='#v' offset='0'/><p>0 1</p></lines>\n"
           "</mesh></geometry></library_geometries>\n"
           "<library_visual_scenes><visual_scene id='s'>%s</visual_scene></library_visual_scenes>\n"
           "<scene><instance_visual_scene url='#s'/></scene>\n</COLLADA>\n",
           unit, up, nodes);
  return text;
}

// the cube of tests/data/dae: 12 triangles (6 quads split), every corner at (0.1, 0, 0.2) +- 0.05 m
static void test_cube(void) {
  tris t;
  physLog log;
  CHECK_MSG(read_scene("tests/data/dae/cube.dae", &t, &log) == PHYS_OK, "%s", log.error);
  CHECK(t.n == 12);
  const double c[3] = {0.1, 0, 0.2};
  for (int i = 0; i < t.n && i < 64; i++) {
    for (int k = 0; k < 9; k++) CHECK_NEAR(fabs(t.p[i][k] - c[k % 3]), 0.05, 1e-8);
  }
  // through phys_mesh_load: merged to 8 vertices, closed, volume 1e-3 m^3 and its centre, scale applied
  physSpecMesh m = {0};
  const double scale[3] = {2, 1, 1};
  CHECK_MSG(phys_mesh_load("tests/data/dae/cube.dae", scale, &m, &log) == PHYS_OK, "%s", log.error);
  CHECK(m.nvert == 8 && m.nface == 12);
  double vol, com[3], inertia[6];
  CHECK(phys_mesh_inertia(&m, &vol, com, inertia) == PHYS_OK);
  CHECK_NEAR(vol, 2e-3, 1e-9);
  CHECK_NEAR(com[0], 0.2, 1e-8);
  CHECK_NEAR(com[1], 0, 1e-8);
  CHECK_NEAR(com[2], 0.2, 1e-8);
  CHECK_NEAR(inertia[0], 2e-3 * (0.01 + 0.01) / 12, 1e-12);   // box 0.2 x 0.1 x 0.1 at unit density
  CHECK_NEAR(inertia[1], 2e-3 * (0.04 + 0.01) / 12, 1e-12);
  free(m.vert);
  free(m.face);
}

// nested nodes compose their transforms (parent first), a geometry instanced twice gives its triangles
// twice, lines are skipped, the unit scales translations too, and the up axis changes nothing
static void test_nodes(void) {
  const char* nodes =
      "<node id='a'><translate>10 0 0</translate><instance_geometry url='#g'/>"
      "<node id='b'><rotate>0 0 1 90</rotate><instance_geometry url='#g'/></node></node>";
  static const char* const ups[3] = {"Z_UP", "Y_UP", "X_UP"};
  for (int u = 0; u < 3; u++) {
    tris t;
    physLog log;
    const char* path = write_text("nodes.dae", scene_text("0.5", ups[u], nodes));
    CHECK_MSG(read_scene(path, &t, &log) == PHYS_OK, "%s: %s", ups[u], log.error);
    CHECK_MSG(t.n == 2, "%s: %d triangles", ups[u], t.n);
    if (t.n != 2) continue;
    // node a: the triangle moved 10 units along x, in metres (x 0.5)
    const double a[9] = {5, 0, 0, 5.5, 0, 0, 5, 0.5, 0};
    // node b inside a: rotated 90 degrees about z, then moved: (1,0,0) -> (0,1,0), (0,1,0) -> (-1,0,0)
    const double b[9] = {5, 0, 0, 5, 0.5, 0, 4.5, 0, 0};
    for (int k = 0; k < 9; k++) {
      CHECK_NEAR(t.p[0][k], a[k], 1e-6);
      CHECK_NEAR(t.p[1][k], b[k], 1e-6);
    }
  }
}

// a callback's error stops the read and is returned
static physStatus refuse_tri(void* ctx, const double p[9]) {
  (void)p;
  ++*(int*)ctx;
  return PHYS_ERR_NOMEM;
}

// refused input: not Collada, empty, too large (before reading), a node tree deeper than the cap, a scene
// without meshes (libassimp would hand back pyramids standing for its nodes); a callback error
static void test_refused(void) {
  tris t;
  physLog log;
  const char* bad = write_text("bad.dae", "<COLLADA><library_geometries><geometry><mesh>");
  CHECK(read_scene(bad, &t, &log) == PHYS_ERR_PARSE);
  CHECK_MSG(strstr(log.error, "bad.dae: not a readable Collada file (libassimp: "), "%s", log.error);
  CHECK(read_scene(write_text("empty.dae", ""), &t, &log) == PHYS_ERR_PARSE && t.n == 0);

  FILE* f = fopen(bad, "rb");
  memset(&log, 0, sizeof(log));
  CHECK(phys_mesh_scene_read(f, PHYS_MESH_MAXSCENE + 1, "big.dae", keep_tri, &t, &log) == PHYS_ERR_ARG);
  CHECK_MSG(!strcmp(log.error, "big.dae: scene file larger than 268435456 bytes (refused)"), "%s", log.error);
  fclose(f);

  // 300 nested nodes: refused at depth 257 (the root is depth 0, the visual scene's first node depth 1)
  static char nodes[300 * 24 + 64];
  nodes[0] = 0;
  for (int i = 0; i < 300; i++) strcat(nodes, "<node>");
  strcat(nodes, "<instance_geometry url='#g'/>");
  for (int i = 0; i < 300; i++) strcat(nodes, "</node>");
  physStatus st = read_scene(write_text("deep.dae", scene_text("1", "Z_UP", nodes)), &t, &log);
  CHECK_MSG(st == PHYS_ERR_ARG && strstr(log.error, "deep.dae: node tree deeper than 256 levels (refused)"),
            "%d: %s", st, log.error);

  physSpecMesh m = {0};
  memset(&log, 0, sizeof(log));
  const char* nofaces = write_text("nofaces.dae", scene_text("1", "Z_UP", "<node id='n'/>"));
  CHECK(phys_mesh_load(nofaces, NULL, &m, &log) == PHYS_ERR_VALUE && m.vert == NULL);
  CHECK_MSG(strstr(log.error, "nofaces.dae: no mesh in the scene (libassimp marks it incomplete)"), "%s",
            log.error);

  int calls = 0;
  f = fopen("tests/data/dae/cube.dae", "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  CHECK(phys_mesh_scene_read(f, size, "cube.dae", refuse_tri, &calls, &log) == PHYS_ERR_NOMEM && calls == 1);
  fclose(f);
}

// a build without libassimp refuses every Collada file with a message saying so
static void test_unsupported(void) {
  tris t;
  physLog log;
  CHECK(read_scene("tests/data/dae/cube.dae", &t, &log) == PHYS_ERR_ARG && t.n == 0);
  CHECK_MSG(strstr(log.error, "built without libassimp"), "%s", log.error);
}

int main(void) {
  snprintf(dir, sizeof(dir), "/tmp/physid_test_mesh_assimp_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  if (phys_mesh_scene_supported()) {
    test_cube();
    test_nodes();
    test_refused();
  } else {
    test_unsupported();
  }
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}

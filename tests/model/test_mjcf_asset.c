// test_mjcf_asset.c - MJCF <asset> meshes (src/model/mjcf_asset.c): meshdir, scale, names, missing and broken
// files, paths outside the model folder, mesh geoms without a mesh; materials' colours (the drawn geom colour).
#include <string.h>
#include <sys/stat.h>

#include "mjcf_text.h"

// an OBJ tetrahedron as a mesh asset (meshdir, scale, name from the file), a missing file (warning and
// geom dropped; strict_mesh: error), a mesh outside the folder
static void test_meshes(void) {
  char sub[300];
  snprintf(sub, sizeof(sub), "%s/meshes", dir);
  mkdir(sub, 0755);
  put("meshes/tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  physLog log;
  const char* model =
      "<mujoco><compiler meshdir='meshes'/>\n"
      "<asset><mesh file='tet.obj' scale='2 2 2'/><mesh name='gone' file='missing.stl'/></asset>\n"
      "<worldbody><body><freejoint/>\n"
      "<geom type='mesh' mesh='tet'/><geom type='mesh' mesh='gone'/>\n"
      "</body></worldbody></mujoco>";
  physSpec* s = parse_text(model, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) {
    CHECK(s->nmesh == 1 && !strcmp(s->mesh[0].name, "tet") && s->mesh[0].nvert == 4 && s->mesh[0].nface == 4);
    CHECK(s->mesh[0].nvert == 4 && s->mesh[0].vert[3] == 2);   // scaled
    CHECK(s->ngeom == 1 && s->geom[0].type == PHYS_GEOM_MESH && s->geom[0].mesh == 0);
    CHECK(has_warning(&log, "missing.stl") && has_warning(&log, "model.xml:4: <geom>: geom dropped"));
  }
  phys_spec_free(s);
  physLoadOptions opt = {.strict_mesh = 1};
  memset(&log, 0, sizeof(log));
  s = phys_parse_mjcf_opt(put("model.xml", model), &opt, &log);
  CHECK(s == NULL && log.status == PHYS_ERR_IO && strstr(log.error, "model.xml:2: <mesh name='gone'>"));
  phys_spec_free(s);
  // a broken mesh file: the error names the model's <mesh> line and the mesh file's line (before: only the mesh)
  put("meshes/bad.obj", "v 0 0 0\nf 1 2 3\n");
  EXPECT_ERROR("<mujoco><compiler meshdir='meshes'/>\n<asset><mesh name='b' file='bad.obj'/></asset></mujoco>",
               PHYS_ERR_VALUE, "model.xml:2: <mesh name='b'>: mesh: ", "meshes/bad.obj:2: face index '2' out of range");
  EXPECT_ERROR("<mujoco><asset><mesh file='../../../../../../etc/passwd'/></asset></mujoco>", PHYS_ERR_ARG,
               "outside the model folder");
  EXPECT_ERROR("<mujoco><worldbody><geom type='mesh' mesh='nope'/></worldbody></mujoco>", PHYS_ERR_MODEL,
               "unknown mesh 'nope'");
  EXPECT_ERROR("<mujoco><worldbody><geom type='mesh'/></worldbody></mujoco>", PHYS_ERR_MODEL, "needs attribute 'mesh'");
}

// mesh names (from the file without folder and extension), a <default><mesh> scale, rendering assets
// skipped, and the mesh errors the reader owns
static void test_mesh_names(void) {
  char sub[300];
  snprintf(sub, sizeof(sub), "%s/meshes", dir);
  mkdir(sub, 0755);   // may exist
  put("meshes/tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  physLog log;
  physSpec* s = parse_text(
      "<mujoco>\n"
      "  <default><mesh scale='3 3 3'/><default class='half'><mesh scale='.5 .5 .5'/></default></default>\n"
      "  <asset>\n"
      "    <texture name='t' type='2d' builtin='checker' width='8' height='8'/><material name='m'/>\n"
      "    <mesh file='meshes/tet.obj'/>\n"
      "    <mesh name='small' class='half' file='meshes/tet.obj'/>\n"
      "  </asset>\n"
      "</mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) {
    CHECK(s->nmesh == 2 && !strcmp(s->mesh[0].name, "tet") && !strcmp(s->mesh[1].name, "small"));
    CHECK(s->nmesh == 2 && s->mesh[0].vert[3] == 3 && s->mesh[1].vert[3] == .5);   // vertex 2 = (1 0 0) scaled
    CHECK(s->nmesh == 2 && s->mesh[1].line == 6);
    CHECK(log.nwarning == 0);
  }
  phys_spec_free(s);
  EXPECT_ERROR("<mujoco><asset><mesh file='meshes/tet.obj'/>\n<mesh name='tet' file='meshes/tet.obj'/></asset></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <mesh name='tet'>: mesh name 'tet' used twice");
  // inline meshes (issue 14 item 2: identify --write-model's learned shapes): vertex= with face=, scaled
  s = parse_text("<mujoco><asset><mesh name='v' scale='2 2 2' vertex='0 0 0 1 0 0 0 1 0 0 0 1' "
                 "face='0 2 1 0 1 3 0 3 2 1 2 3'/></asset></mujoco>", &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) CHECK(s->nmesh == 1 && s->mesh[0].nvert == 4 && s->mesh[0].nface == 4 && s->mesh[0].vert[3] == 2 &&
               s->mesh[0].face[1] == 2 && !strcmp(s->mesh[0].file, "inline vertex="));
  phys_spec_free(s);
  EXPECT_ERROR("<mujoco><asset><mesh name='v' vertex='0 0 0 1 0 0 0 1 0 0 0 1'/></asset></mujoco>", PHYS_ERR_MODEL,
               "<mesh name='v'>: inline mesh data (vertex=) needs face=");
  EXPECT_ERROR("<mujoco><asset><mesh vertex='0 0 0 1 0 0 0 1 0 0 0 1' face='0 1 2'/></asset></mujoco>", PHYS_ERR_MODEL,
               "an inline mesh (vertex=) needs a name");
  EXPECT_ERROR("<mujoco><asset><mesh name='v' vertex='0 0 0 1 0 0 0 1 0 0 0' face='0 2 1 0 1 3 0 3 2 1 2 3'/></asset>"
               "</mujoco>", PHYS_ERR_MODEL, "inline mesh: vertex= has 11 numbers and face= 12");
  EXPECT_ERROR("<mujoco><asset><mesh name='v' vertex='0 0 0 1 0 0 0 1 0 0 0 1' face='0 2 1 0 1 3 0 3 2 1 2 4'/>"
               "</asset></mujoco>", PHYS_ERR_MODEL, "inline mesh: face= entry 11 (4) is not a vertex index in [0, 4)");
  EXPECT_ERROR("<mujoco><asset><mesh name='v' vertex='0 0 0 1 0 0 0 1 0 0 0 x' face='0 2 1 0 1 3 0 3 2 1 2 3'/>"
               "</asset></mujoco>", PHYS_ERR_PARSE, "attribute 'vertex': 'x' is not a number");
  EXPECT_ERROR("<mujoco><asset><mesh name='n'/></asset></mujoco>", PHYS_ERR_MODEL, "attribute 'file' is required");
  EXPECT_ERROR("<mujoco><asset><mesh file='meshes/tet.obj' scale='1 2'/></asset></mujoco>", PHYS_ERR_SIZE,
               "attribute 'scale' needs 3 values, found 2");
  EXPECT_ERROR("<mujoco><asset><mesh class='nope' file='meshes/tet.obj'/></asset></mujoco>", PHYS_ERR_MODEL,
               "unknown default class 'nope'");
}

// materials: a geom with material= and no rgba of its own is drawn in the material's rgba (own, from its class, or
// MuJoCo's default white); a geom rgba other than MuJoCo's default 0.5 0.5 0.5 1 wins, a default-class material
// counts as the geom's own; geom_rgba itself stays the geom's (as MuJoCo's); an unknown material or a nameless
// one is an error naming the line
static void test_materials(void) {
  physLog log;
  physModel* m = phys_load_mjcf(put("mat.xml",
      "<mujoco>\n"
      "  <default><material rgba='0 0 1 1'/><default class='red'><geom material='r'/></default>\n"
      "    <default class='plain'><material rgba='1 1 1 1'/></default></default>\n"
      "  <asset><material name='r' rgba='1 0 0 0.5'/><material name='blue'/>\n"
      "         <material name='white' class='plain'/></asset>\n"
      "  <worldbody>\n"
      "    <geom type='plane' size='1 1 1' material='r'/>\n"
      "    <geom type='sphere' size='.1' material='blue'/>\n"
      "    <geom type='sphere' size='.1' material='r' rgba='0 1 0 1'/>\n"
      "    <geom type='sphere' size='.1' class='red'/>\n"
      "    <geom type='sphere' size='.1'/>\n"
      "    <geom type='sphere' size='.1' material='white'/>\n"
      "  </worldbody>\n"
      "</mujoco>\n"), &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    static const double want[6][4] = {{1, 0, 0, 0.5}, {0, 0, 1, 1}, {0, 1, 0, 1}, {1, 0, 0, 0.5}, {0.5, 0.5, 0.5, 1},
                                      {1, 1, 1, 1}};
    for (int g = 0; g < 6; g++) {
      for (int k = 0; k < 4; k++) {
        CHECK_MSG(m->geom_visrgba[4 * g + k] == want[g][k], "geom %d rgba[%d] = %g, want %g", g, k,
                  m->geom_visrgba[4 * g + k], want[g][k]);
      }
    }
    CHECK(m->geom_rgba[0] == 0.5 && m->geom_rgba[3] == 1 && m->geom_rgba[8] == 0 && m->geom_rgba[9] == 1);
  }
  phys_free_model(m);
  EXPECT_ERROR("<mujoco>\n<worldbody>\n<geom type='sphere' size='.1' material='nope'/></worldbody></mujoco>",
               PHYS_ERR_MODEL, "model.xml:3: <geom>: unknown material 'nope'");
  EXPECT_ERROR("<mujoco>\n<asset><material rgba='1 1 1 1'/></asset></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <material>: a material needs a name");
}

int main(void) {
  mjcf_text_begin("test_mjcf_asset");
  test_materials();
  test_meshes();
  test_mesh_names();
  return mjcf_text_end();
}

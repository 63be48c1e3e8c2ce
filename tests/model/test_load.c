// test_load.c - phys_load dispatch: by extension (.urdf, .xml, .xml.gz) and by root element otherwise.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "physid.h"
#include "test.h"

#define ELBOW "tests/data/elbow/elbow.urdf"
#define CHEETAH "/usr/share/doc/dart/data/mjcf/openai/half_cheetah.xml.gz"

static char dir[256];

// copy src to dir/name; returns the new path
static const char* copy_to(const char* src, const char* name) {
  static char buf[4][512];
  static int k = 0;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
  FILE* in = fopen(src, "rb");
  FILE* out = fopen(buf[k], "wb");
  char chunk[4096];
  size_t n;
  while (in && (n = fread(chunk, 1, sizeof(chunk), in)) > 0) fwrite(chunk, 1, n, out);
  if (in) fclose(in);
  fclose(out);
  return buf[k];
}

// write text to dir/name
static const char* write_text(const char* name, const char* text) {
  static char buf[4][512];
  static int k = 0;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
  FILE* f = fopen(buf[k], "wb");
  fputs(text, f);
  fclose(f);
  return buf[k];
}

// the same sizes as a model loaded by the format's own loader
static int same_sizes(const physModel* a, const physModel* b) {
  return a && b && a->nq == b->nq && a->nv == b->nv && a->nbody == b->nbody && a->njnt == b->njnt &&
         a->ngeom == b->ngeom && a->nu == b->nu;
}

// load a file that must fail with status st and a message containing the file name and word
static void expect_fail(const char* path, physStatus st, const char* word) {
  physLog log = {0};
  physModel* m = phys_load(path, NULL, &log);
  CHECK(m == NULL);
  if (m) phys_free_model(m);
  CHECK_MSG(log.status == st, "%s: status %d, expected %d: %s", path, log.status, st, log.error);
  CHECK_MSG(strstr(log.error, path) != NULL, "message does not name the file: %s", log.error);
  CHECK_MSG(!word || strstr(log.error, word), "'%s' lacks '%s'", log.error, word);
}

// .urdf goes to the URDF reader with the options
static void test_urdf_by_extension(void) {
  physLoadOptions opt = {.urdf_floating = 1};
  physLog log = {0};
  physModel* m = phys_load(ELBOW, &opt, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  physModel* u = phys_load_urdf(ELBOW, &opt, &log);
  CHECK(same_sizes(m, u));
  if (m) CHECK(m->nq == 8 && m->nv == 7);
  phys_free_model(m);
  phys_free_model(u);
}

// .xml and .xml.gz go to the MJCF reader
static void test_mjcf_by_extension(void) {
  char pend[512];
  const char* src = getenv("PHYS_SOURCE");
  snprintf(pend, sizeof(pend), "%s/tests/data/pendulum.xml", src ? src : ".");
  physLog log = {0};
  physModel* m = phys_load(pend, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  physModel* x = phys_load_mjcf(pend, &log);
  CHECK(same_sizes(m, x));
  if (m) CHECK(m->nq == 1 && m->nbody == 2);
  phys_free_model(m);
  phys_free_model(x);

  memset(&log, 0, sizeof(log));
  m = phys_load(CHEETAH, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  x = phys_load_mjcf(CHEETAH, &log);
  CHECK(same_sizes(m, x));
  if (m) CHECK(m->nq == 9 && m->nu == 6);   // half-cheetah: 3 root slides/hinge + 6 hinges, 6 motors
  phys_free_model(m);
  phys_free_model(x);

  // same content, unknown extension: sniffed from the root element (a comment comes first)
  memset(&log, 0, sizeof(log));
  const char* renamed = copy_to(pend, "pendulum.model");
  m = phys_load(renamed, NULL, &log);
  CHECK_MSG(m != NULL && m->nq == 1, "%s", log.error);
  phys_free_model(m);
}

// the options reach the MJCF reader too: strict_mesh turns a missing mesh file into an error
static void test_mjcf_options(void) {
  const char* path = write_text("missing_mesh.xml",
                                "<mujoco model='mm'>\n<asset><mesh name='m' file='missing.stl'/></asset>\n"
                                "<worldbody><body><freejoint/><geom type='box' size='.1 .1 .1'/>\n"
                                "<geom type='mesh' mesh='m'/></body></worldbody>\n</mujoco>\n");
  physLog log = {0};
  physModel* m = phys_load(path, NULL, &log);
  CHECK_MSG(m != NULL && log.nwarning > 0, "%s", log.error);
  phys_free_model(m);
  physLoadOptions strict = {.strict_mesh = 1};
  memset(&log, 0, sizeof(log));
  m = phys_load(path, &strict, &log);
  CHECK(m == NULL && strstr(log.error, "missing.stl") != NULL);
  phys_free_model(m);
}

// the URDF-only options on an MJCF file: one warning each naming the file, the model loads unchanged
// (before: silently ignored)
static void test_urdf_options_on_mjcf(void) {
  char pend[512];
  const char* src = getenv("PHYS_SOURCE");
  snprintf(pend, sizeof(pend), "%s/tests/data/pendulum.xml", src ? src : ".");
  physLoadOptions opt = {.urdf_floating = 1, .urdf_self_collision = 1};
  physLog log = {0};
  physModel* m = phys_load(pend, &opt, &log);
  CHECK_MSG(m != NULL && m->nq == 1, "%s", log.error);
  CHECK_MSG(log.nwarning == 2 && strstr(log.warning[0], "pendulum.xml: --floating (urdf_floating) applies to URDF only") &&
            strstr(log.warning[1], "urdf_self_collision applies to URDF only"), "%d: %s", log.nwarning, log.warning[0]);
  phys_free_model(m);
}

// unknown extension with a <robot> root is URDF (and gets the options)
static void test_urdf_by_sniff(void) {
  physLoadOptions opt = {.urdf_floating = 1};
  physLog log = {0};
  const char* renamed = copy_to(ELBOW, "elbow.robot");
  physModel* m = phys_load(renamed, &opt, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) CHECK(m->nq == 8 && m->nv == 7 && m->nbody == 3);
  phys_free_model(m);
}

// unknown formats, missing and junk files
static void test_errors(void) {
  expect_fail(write_text("thing.model", "<?xml version='1.0'?>\n<!-- c -->\n<sdf version='1.6'/>\n"), PHYS_ERR_PARSE,
              "<sdf>");
  expect_fail(write_text("junk.bin", "\x01\x02 not xml at all"), PHYS_ERR_PARSE, "not an XML");
  expect_fail(write_text("empty.model", ""), PHYS_ERR_PARSE, NULL);
  char missing[512];
  snprintf(missing, sizeof(missing), "%s/none.model", dir);
  expect_fail(missing, PHYS_ERR_IO, "cannot open");
  snprintf(missing, sizeof(missing), "%s/none.urdf", dir);
  expect_fail(missing, PHYS_ERR_IO, NULL);
  physLog log = {0};
  CHECK(phys_load(NULL, NULL, &log) == NULL && log.status == PHYS_ERR_ARG);
}

// load MODEL with the added files (NULL-terminated) and the options; NULL and the log on failure
static physModel* load_world(const char* model, physLoadOptions opt, physLog* log, ...) {
  const char* add[8];
  va_list ap;
  va_start(ap, log);
  opt.nadd = 0;
  for (const char* f; opt.nadd < 8 && (f = va_arg(ap, const char*));) add[opt.nadd++] = f;
  va_end(ap);
  opt.add = add;
  memset(log, 0, sizeof(*log));
  return phys_load(model, &opt, log);
}

// 1 if one of the log's warnings contains text
static int warned(const physLog* log, const char* text) {
  for (int i = 0; i < log->nwarning && i < PHYS_MAXWARN; i++)
    if (strstr(log->warning[i], text)) return 1;
  return 0;
}

// elbow.urdf --floating --add models/floor.xml: one world (the floor geom first, on the world body), the URDF's
// geom names, the first file's options and name; --floating acts on the first file only
static void test_compose(void) {
  physLog log;
  physModel* m = load_world(ELBOW, (physLoadOptions){.urdf_floating = 1}, &log, "models/floor.xml", NULL);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nbody == 3 && m->njnt == 2 && m->nq == 8 && m->nv == 7 && m->ngeom == 3 && m->nu == 0);
  CHECK(phys_name2id(m, "geom", "floor") == 0 && m->geom_bodyid[0] == 0 && m->body_geomadr[0] == 0 &&
        m->body_geomnum[0] == 1);
  CHECK(phys_name2id(m, "geom", "elbow_1") == 1 && phys_name2id(m, "geom", "elbow_2") == 2);
  CHECK(m->geom_friction[0] == 0 && m->geom_type[0] == PHYS_GEOM_PLANE);
  CHECK(!strcmp(m->modelname, "elbow") && m->opt.timestep == 0.002 && log.nwarning == 0);
  CHECK((m->opt.disableflags & PHYS_DSBL_SELFCOLLISION) == 0 && m->nexclude == 0);  // parent and child only
  phys_free_model(m);
  // the elbow added to the floor file: fixed root (no --floating there), a motor with --actuate
  m = load_world("models/floor.xml", (physLoadOptions){.urdf_floating = 1, .urdf_actuate = 1}, &log, ELBOW, NULL);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) CHECK(m->nq == 1 && m->nu == 1 && !strcmp(m->modelname, "floor") && m->ngeom == 3);
  CHECK(warned(&log, "--floating (urdf_floating) applies to URDF only") && warned(&log, "--actuate"));
  phys_free_model(m);
}

// a name in two files: the error names both files and lines; an error inside an added file names that file
static void test_compose_clash(void) {
  const char* floor2 = write_text("floor2.xml", "<mujoco>\n  <worldbody>\n    <geom name='elbow_1' type='plane' "
                                  "size='1 1 1'/>\n  </worldbody>\n</mujoco>\n");
  physLog log;
  physModel* m = load_world(ELBOW, (physLoadOptions){.urdf_floating = 1}, &log, floor2, NULL);
  CHECK(m == NULL && log.status == PHYS_ERR_MODEL);
  char want[700];
  snprintf(want, sizeof(want), "%s:24: geom 'elbow_1': duplicate name: the geom at %s:3 has it too", ELBOW, floor2);
  CHECK_MSG(strstr(log.error, want) != NULL, "%s", log.error);
  // the same file twice: every link clashes, the first one reported
  m = load_world(ELBOW, (physLoadOptions){0}, &log, ELBOW, NULL);
  snprintf(want, sizeof(want), "%s:3: body 'elbow_1': duplicate name: the body at line 3 has it too", ELBOW);
  CHECK_MSG(m == NULL && strstr(log.error, want), "%s", log.error);
  const char* bad = write_text("bad.xml", "<mujoco>\n  <worldbody>\n    <geom type='sphere' size='-1'/>\n"
                               "  </worldbody>\n</mujoco>\n");
  m = load_world(ELBOW, (physLoadOptions){0}, &log, bad, NULL);
  CHECK_MSG(m == NULL && strstr(log.error, "bad.xml"), "%s", log.error);
}

// options from the first file, a warning naming what an added file sets otherwise; keyframes of the first
// file extended with the added file's qpos0 (its own keyframes are not used: a warning)
static void test_compose_options_keys(void) {
  const char* ball = write_text("ball.xml", "<mujoco>\n  <option timestep='0.0005'/>\n  <custom><text name='physid:contact' "
                                "data='cone'/></custom>\n  <worldbody>\n    <body name='ball' pos='1 2 3'>\n"
                                "      <freejoint/><geom type='sphere' size='0.1'/>\n    </body>\n  </worldbody>\n"
                                "  <keyframe><key qpos='0 0 1 1 0 0 0'/></keyframe>\n</mujoco>\n");
  char pend[512];
  const char* src = getenv("PHYS_SOURCE");
  snprintf(pend, sizeof(pend), "%s/tests/data/double_pendulum.xml", src ? src : ".");
  physLog log;
  physModel* m = load_world(pend, (physLoadOptions){0}, &log, ball, NULL);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nq == 9 && m->nkey == 1 && m->opt.contact == PHYS_CONTACT_LCP && m->opt.timestep == 0.001);
  const double want[9] = {0.5, -0.3, 1, 2, 3, 1, 0, 0, 0};
  for (int i = 0; i < 9; i++) CHECK_MSG(m->key_qpos[i] == want[i], "key qpos[%d] = %g", i, m->key_qpos[i]);
  for (int i = 0; i < m->nv; i++) CHECK(m->key_qvel[i] == 0);
  CHECK_MSG(warned(&log, "options differ from") && warned(&log, "(timestep, contact model)"), "%s", log.warning[0]);
  CHECK(warned(&log, "its 1 keyframe is not used"));
  phys_free_model(m);
}

// URDF's convention (no collisions within one robot) stays with the URDF's own trees in a composed world:
// <exclude> pairs for its bodies that are not parent and child; an MJCF tree added keeps colliding with itself
static void test_compose_self_collision(void) {
  const char* chain = write_text("chain.urdf",
      "<robot name='c'>\n"
      "  <link name='l0'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>"
      "<collision><geometry><sphere radius='.1'/></geometry></collision></link>\n"
      "  <link name='l1'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>"
      "<collision><geometry><sphere radius='.1'/></geometry></collision></link>\n"
      "  <link name='l2'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>"
      "<collision><geometry><sphere radius='.1'/></geometry></collision></link>\n"
      "  <joint name='j1' type='continuous'><parent link='l0'/><child link='l1'/></joint>\n"
      "  <joint name='j2' type='continuous'><parent link='l1'/><child link='l2'/></joint>\n"
      "</robot>\n");
  const char* arm = write_text("arm.xml", "<mujoco>\n  <worldbody>\n    <body name='a0'><joint type='hinge'/>"
                               "<geom size='.1'/>\n      <body name='a1'><joint type='hinge'/><geom size='.1'/>\n"
                               "        <body name='a2'><joint type='hinge'/><geom size='.1'/></body></body></body>\n"
                               "  </worldbody>\n</mujoco>\n");
  physLog log;
  physModel* m = load_world(chain, (physLoadOptions){0}, &log, arm, NULL);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK((m->opt.disableflags & PHYS_DSBL_SELFCOLLISION) == 0 && m->nexclude == 1);
  int l0 = phys_name2id(m, "body", "l0"), l2 = phys_name2id(m, "body", "l2");
  CHECK(m->nexclude == 1 && m->exclude_body1[0] == l0 && m->exclude_body2[0] == l2);
  phys_free_model(m);
  // the same with the MJCF first; with urdf_self_collision no pairs
  m = load_world(arm, (physLoadOptions){0}, &log, chain, NULL);
  CHECK(m && m->nexclude == 1 && (m->opt.disableflags & PHYS_DSBL_SELFCOLLISION) == 0);
  phys_free_model(m);
  m = load_world(arm, (physLoadOptions){.urdf_self_collision = 1}, &log, chain, NULL);
  CHECK(m && m->nexclude == 0);
  phys_free_model(m);
}

// an added URDF sets no options (no warning against an MJCF world's); its mesh names, made from file names,
// get a suffix when another file has them (before: both were compared and left alone)
static void test_compose_urdf_added(void) {
  write_text("tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  const char* fmt = "<robot name='r'>\n  <link name='%s'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' "
                    "ixy='0' ixz='0' iyz='0'/></inertial><collision><geometry><mesh filename='tet.obj'/></geometry>"
                    "</collision></link>\n</robot>\n";
  char text[2][512];
  snprintf(text[0], sizeof(text[0]), fmt, "p");
  snprintf(text[1], sizeof(text[1]), fmt, "q");
  char r1[512], r2[512], pend[512];
  snprintf(r1, sizeof(r1), "%s", write_text("r1.urdf", text[0]));
  snprintf(r2, sizeof(r2), "%s", write_text("r2.urdf", text[1]));
  const char* src = getenv("PHYS_SOURCE");
  snprintf(pend, sizeof(pend), "%s/tests/data/double_pendulum.xml", src ? src : ".");
  physLog log;
  physModel* m = load_world(pend, (physLoadOptions){0}, &log, r1, r2, NULL);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK_MSG(!warned(&log, "options differ"), "%s", log.warning[0]);
  CHECK(m->nmesh == 2 && !strcmp(phys_id2name(m, "mesh", 0), "tet") && !strcmp(phys_id2name(m, "mesh", 1), "tet_1"));
  phys_free_model(m);
}

int main(void) {
  snprintf(dir, sizeof(dir), "/tmp/physid_test_load_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  test_urdf_by_extension();
  test_mjcf_by_extension();
  test_mjcf_options();
  test_urdf_by_sniff();
  test_urdf_options_on_mjcf();
  test_errors();
  test_compose();
  test_compose_clash();
  test_compose_options_keys();
  test_compose_self_collision();
  test_compose_urdf_added();
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}

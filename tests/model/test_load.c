// test_load.c - phys_load dispatch: by extension (.urdf, .xml, .xml.gz) and by root element otherwise.
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

int main(void) {
  snprintf(dir, sizeof(dir), "/tmp/physid_test_load_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  test_urdf_by_extension();
  test_mjcf_by_extension();
  test_mjcf_options();
  test_urdf_by_sniff();
  test_urdf_options_on_mjcf();
  test_errors();
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}

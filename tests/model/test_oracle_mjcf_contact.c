// test_oracle_mjcf_contact.c - MuJoCo 2.2.2 still loads MJCF files carrying physid's contact settings
// (<custom> extensions, <contact><pair>/<exclude>, <size nconmax>), and reads the pairs, excludes and
// nconmax as physid does: same geoms and bodies, same friction and margin (also a pair's defaults when
// it sets none: MJCF's 1 and 0, not the geoms' values). The validation scenes of tests/data/contact load in both engines.
#include <dirent.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "physid.h"
#include "test.h"

static const char* FILE_TEXT =
    "<mujoco model='contact'>\n"
    "  <size nconmax='37'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1' friction='0.7'/>\n"
    "    <body name='a' pos='0 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='ball' type='sphere' size='.1' friction='0.4' margin='0.003'/>\n"
    "    </body>\n"
    "    <body name='b' pos='0 0 2'>\n"
    "      <freejoint/>\n"
    "      <geom name='box' type='box' size='.1 .1 .1' margin='0.002' friction='0.3'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <contact>\n"
    "    <pair name='p1' geom1='ball' geom2='box' friction='0.9 0.9 0.005 0.0001 0.0001' margin='0.01'/>\n"
    "    <pair geom1='floor' geom2='box'/>\n"
    "    <pair geom1='ball' geom2='floor'/>\n"
    "    <exclude body1='a' body2='b'/>\n"
    "  </contact>\n"
    "  <custom>\n"
    "    <text name='physid:contact' data='ccp'/>\n"
    "    <numeric name='physid:baumgarte' data='0.3'/>\n"
    "    <numeric name='physid:penalty' data='2e4 50 0.01'/>\n"
    "    <numeric name='physid:solver' data='250 1e-8'/>\n"
    "    <numeric name='physid:restitution:ball' data='0.8'/>\n"
    "    <numeric name='physid:restitution:floor' data='0.25'/>\n"
    "    <numeric name='physid:pair_restitution:p1' data='0.5'/>\n"
    "  </custom>\n"
    "</mujoco>\n";

// load path in both engines; both must succeed
static int load_both(const char* path, physModel** pm, mjModel** mm) {
  char err[1024] = "";
  physLog log;
  memset(&log, 0, sizeof log);
  *mm = mj_loadXML(path, NULL, err, sizeof err);
  *pm = phys_load_mjcf(path, &log);
  CHECK_MSG(*mm != NULL, "MuJoCo 2.2.2 refuses %s: %s", path, err);
  CHECK_MSG(*pm != NULL, "physid refuses %s: %s", path, log.error);
  return *mm && *pm;
}

// pairs, excludes, nconmax of the extension file against MuJoCo
static void test_extension_file(void) {
  char path[] = "/tmp/test_oracle_mjcf_contact_XXXXXX.xml";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0);
  FILE* f = fdopen(fd, "w");
  fputs(FILE_TEXT, f);
  fclose(f);
  physModel* pm;
  mjModel* mm;
  if (load_both(path, &pm, &mm)) {
    CHECK(pm->opt.contact == PHYS_CONTACT_CCP && pm->opt.baumgarte == 0.3);
    CHECK(pm->npair == mm->npair && pm->npair == 3);
    CHECK(pm->nexclude == mm->nexclude && pm->nexclude == 1);
    CHECK(pm->nconmax == mm->nconmax && pm->nconmax == 37);
    CHECK(mm->nnumeric == 6 && mm->ntext == 1);
    // MuJoCo sorts the pairs by body signature and may swap a pair's geoms: match them by geoms
    for (int i = 0; i < pm->npair; i++) {
      int k = -1;
      for (int j = 0; j < mm->npair; j++)
        if ((pm->pair_geom1[i] == mm->pair_geom1[j] && pm->pair_geom2[i] == mm->pair_geom2[j]) ||
            (pm->pair_geom1[i] == mm->pair_geom2[j] && pm->pair_geom2[i] == mm->pair_geom1[j]))
          k = j;
      CHECK_MSG(k >= 0, "pair %d (geoms %d %d) not in MuJoCo's model", i, pm->pair_geom1[i], pm->pair_geom2[i]);
      if (k < 0) continue;
      CHECK_MSG(pm->pair_friction[i] == mm->pair_friction[5 * k], "pair %d friction %g, MuJoCo %g", i,
                pm->pair_friction[i], mm->pair_friction[5 * k]);
      CHECK_MSG(pm->pair_margin[i] == mm->pair_margin[k], "pair %d margin %g, MuJoCo %g", i, pm->pair_margin[i],
                mm->pair_margin[k]);
    }
    // MuJoCo stores excludes as signatures ((body1 + 1) << 16) + body2 + 1
    int sig = ((pm->exclude_body1[0] + 1) << 16) + pm->exclude_body2[0] + 1;
    CHECK_MSG(mm->exclude_signature[0] == sig, "exclude signature %d, MuJoCo %d", sig, mm->exclude_signature[0]);
  }
  phys_free_model(pm);
  mj_deleteModel(mm);
  unlink(path);
}

// every scene of tests/data/contact loads in both engines with the same pairs and excludes
static void test_scenes(void) {
  DIR* dir = opendir("tests/data/contact");
  if (!dir) return;   // no scenes in this tree
  struct dirent* e;
  int n = 0;
  while ((e = readdir(dir))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".xml")) continue;
    char path[512];
    snprintf(path, sizeof path, "tests/data/contact/%s", e->d_name);
    physModel* pm;
    mjModel* mm;
    if (load_both(path, &pm, &mm)) {
      CHECK_MSG(pm->npair == mm->npair && pm->nexclude == mm->nexclude && pm->ngeom == mm->ngeom, "%s", path);
      n++;
    }
    phys_free_model(pm);
    mj_deleteModel(mm);
  }
  closedir(dir);
  printf("%d contact scenes load in MuJoCo 2.2.2 and physid\n", n);
  CHECK(n > 0);
}

int main(void) {
  test_extension_file();
  test_scenes();
  return test_done();
}

// test_oracle_mjcf_samples.c - every MJCF model Debian's libmujoco-samples ships (/usr/share/mujoco/model, walked
// recursively) against MuJoCo 2.2.2's loader (issue 15 item 6): physid either loads it with MuJoCo's sizes (nq, nv,
// nu, na, nbody, njnt, ngeom, nsite, ntendon, nwrap, neq, nsensor, nkey) or refuses it with a message naming the
// file, the line and the element it does not support ("FILE.xml:LINE: <element..."). The known refusals are
// asserted by their reason (composites, mug.xml's open mesh). Skipped (exit 77) when the
// package is absent.
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mujoco/mujoco.h>

#include "physid.h"
#include "test.h"

#define SAMPLES "/usr/share/mujoco/model"

// the refusals expected, by file name: a fragment of the message
static const struct { const char* file; const char* reason; } REFUSED[] = {
    // its composite (line 97) comes before its <adhesion> actuators (line 131; refused too: test_mjcf_actuator.c)
    {"active_adhesion.xml", "<composite>: composite objects are not supported"},
    {"cloth.xml", "<composite>: composite objects are not supported"},
    {"grid2pin.xml", "<composite>: composite objects are not supported"},
    {"loop.xml", "<composite>: composite objects are not supported"},
    {"particle.xml", "<composite>: composite objects are not supported"},
    {"rope.xml", "<composite>: composite objects are not supported"},
    {"softbox.xml", "<composite>: composite objects are not supported"},
    {"flag.xml", "<composite>: composite objects are not supported"},
    {"hammock.xml", "<composite>: composite objects are not supported"},
    {"mug.xml", "cannot compute its mass: the mesh is open or inside-out"},
};

static int nloaded, nrefused;

// the expected refusal reason of the file at path (NULL: it must load)
static const char* expected_refusal(const char* path) {
  const char* base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  for (size_t i = 0; i < sizeof(REFUSED) / sizeof(REFUSED[0]); i++)
    if (!strcmp(base, REFUSED[i].file)) return REFUSED[i].reason;
  return NULL;
}

// one model in both loaders
static void check_file(const char* path) {
  char err[1000] = "";
  mjModel* mm = mj_loadXML(path, NULL, err, sizeof(err));
  CHECK_MSG(mm != NULL, "%s: MuJoCo refuses it: %s", path, err);
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* pm = phys_load_mjcf(path, &log);
  const char* reason = expected_refusal(path);
  if (pm && mm) {
    int same = pm->nq == mm->nq && pm->nv == mm->nv && pm->nu == mm->nu && pm->na == mm->na &&
               pm->nbody == mm->nbody && pm->njnt == mm->njnt && pm->ngeom == mm->ngeom && pm->nsite == mm->nsite &&
               pm->nspring == mm->ntendon && pm->nspringsite == mm->nwrap && pm->neq == mm->neq &&
               pm->nsensor == mm->nsensor && pm->nkey == mm->nkey;
    printf("loads   %-60s nq %d nv %d nu %d na %d nbody %d ngeom %d ntendon %d neq %d: %s\n", path, pm->nq, pm->nv,
           pm->nu, pm->na, pm->nbody, pm->ngeom, pm->nspring, pm->neq, same ? "MuJoCo's sizes" : "SIZES DIFFER");
    CHECK_MSG(same, "%s: physid's sizes differ from MuJoCo's", path);
    CHECK_MSG(!reason, "%s: loads, expected refused (%s)", path, reason);
    nloaded++;
  } else if (!pm) {
    // the message names the file, its line and an element: "...name.xml:LINE: <element"
    regex_t re;
    regcomp(&re, "\\.xml:[0-9]+: <[a-z]+", REG_EXTENDED | REG_NOSUB);
    int named = regexec(&re, log.error, 0, NULL, 0) == 0;
    regfree(&re);
    printf("refused %-60s %s\n", path, log.error);
    CHECK_MSG(named, "%s: the refusal does not name file, line and element: %s", path, log.error);
    CHECK_MSG(reason && strstr(log.error, reason), "%s: refused, expected %s: %s", path,
              reason ? reason : "it to load", log.error);
    nrefused++;
  }
  phys_free_model(pm);
  mj_deleteModel(mm);
}

// every .xml under dir, in name order
static void walk(const char* dir) {
  struct dirent** list;
  int n = scandir(dir, &list, NULL, alphasort);
  for (int i = 0; i < n; i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
    struct stat st;
    size_t len = strlen(list[i]->d_name);
    if (list[i]->d_name[0] != '.' && stat(path, &st) == 0) {
      if (S_ISDIR(st.st_mode))
        walk(path);
      else if (len > 4 && !strcmp(list[i]->d_name + len - 4, ".xml"))
        check_file(path);
    }
    free(list[i]);
  }
  if (n >= 0) free(list);
}

int main(void) {
  struct stat st;
  if (stat(SAMPLES, &st) != 0) {
    printf("SKIP: %s is absent (Debian package libmujoco-samples)\n", SAMPLES);
    return 77;
  }
  walk(SAMPLES);
  printf("%d models load with MuJoCo's sizes, %d are refused with a message naming the element\n", nloaded, nrefused);
  CHECK(nloaded >= 8 && nrefused == (int)(sizeof(REFUSED) / sizeof(REFUSED[0])));
  return test_done();
}

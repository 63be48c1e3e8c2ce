// test_oracle_info.c - `physid info --json` on real models against MuJoCo 2.2.2 loading the same files:
// sizes, total mass (mj_getTotalmass), timestep, gravity and joint names.
#include <cjson/cJSON.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

// stdout of `PHYS_BIN info FILE --json` (malloc'd), NULL if it failed
static char* info_json(const char* bin, const char* file) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' info '%s' --json 2>/dev/null", bin, file);
  FILE* p = popen(cmd, "r");
  if (!p) return NULL;
  size_t n = 0, k, cap = 1 << 16;
  char* s = malloc(cap);
  while (n < cap - 1 && (k = fread(s + n, 1, cap - 1 - n, p)) > 0) n += k;
  s[n] = 0;
  int status = pclose(p);
  if (status != 0) {
    free(s);
    return NULL;
  }
  return s;
}

// integer item of a JSON object (-1 if absent)
static int json_int(const cJSON* root, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, key);
  return cJSON_IsNumber(item) ? item->valueint : -1;
}

// double item of a JSON object (NaN if absent)
static double json_num(const cJSON* root, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, key);
  return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

// compare one model file
static void check_model(const char* bin, const char* file) {
  char err[1000] = "";
  mjModel* m = mj_loadXML(file, NULL, err, sizeof err);
  CHECK_MSG(m != NULL, "MuJoCo cannot load %s: %s", file, err);
  char* text = info_json(bin, file);
  CHECK_MSG(text != NULL, "physid info failed on %s", file);
  cJSON* root = text ? cJSON_Parse(text) : NULL;
  CHECK(root != NULL);
  if (!m || !root) {
    free(text);
    if (m) mj_deleteModel(m);
    return;
  }
  CHECK(json_int(root, "nq") == m->nq);
  CHECK(json_int(root, "nv") == m->nv);
  CHECK(json_int(root, "nbody") == m->nbody);
  CHECK(json_int(root, "njnt") == m->njnt);
  CHECK(json_int(root, "ngeom") == m->ngeom);
  CHECK(json_int(root, "nsite") == m->nsite);
  CHECK(json_int(root, "nu") == m->nu);
  CHECK(json_int(root, "nkey") == m->nkey);
  CHECK_REL(json_num(root, "mass"), mj_getTotalmass(m), 1e-12, 1e-12);
  CHECK(json_num(root, "timestep") == m->opt.timestep);
  const cJSON* g = cJSON_GetObjectItemCaseSensitive(root, "gravity");
  for (int i = 0; i < 3; i++) {
    CHECK(cJSON_GetArraySize(g) == 3 && cJSON_GetArrayItem(g, i)->valuedouble == m->opt.gravity[i]);
  }
  const cJSON* joints = cJSON_GetObjectItemCaseSensitive(root, "joints");
  CHECK(cJSON_GetArraySize(joints) == m->njnt);
  for (int j = 0; j < m->njnt && j < cJSON_GetArraySize(joints); j++) {
    const char* want = mj_id2name(m, mjOBJ_JOINT, j);
    const cJSON* item = cJSON_GetArrayItem(joints, j);
    CHECK_MSG(cJSON_IsString(item) && strcmp(item->valuestring, want ? want : "") == 0, "%s joint %d", file, j);
  }
  cJSON_Delete(root);
  free(text);
  mj_deleteModel(m);
}

int main(void) {
  const char* bin = getenv("PHYS_BIN");
  const char* src = getenv("PHYS_SOURCE");
  CHECK_MSG(bin && src, "PHYS_BIN and PHYS_SOURCE must be set (CTest sets them)");
  if (!bin || !src) return test_done();
  char arm7[1024];
  snprintf(arm7, sizeof arm7, "%s/models/arm7.xml", src);
  check_model(bin, arm7);
  const char* humanoid = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  if (access(humanoid, R_OK) == 0) check_model(bin, humanoid);
  else fprintf(stderr, "note: %s not installed, skipped\n", humanoid);
  return test_done();
}

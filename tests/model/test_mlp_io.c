// test_mlp_io.c - network files (src/model/mlp_io.c): a written network reads back bit for bit (weights drawn
// at random, 17 significant digits), and every malformed file is refused with a message naming the file and the
// element: not JSON, wrong format, role, input or version, unknown activation, sizes out of range, a layer's
// row count or row length, a non-finite value, a missing file and a folder.
#include <string.h>
#include <unistd.h>

#include "mlp_io.h"
#include "test.h"

static char g_tmp[64];

// write text to the scratch file name; returns its path (static buffer)
static const char* put(const char* name, const char* text) {
  static char p[128];
  snprintf(p, sizeof p, "%s/%s", g_tmp, name);
  FILE* f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
  return p;
}

// the file's network must be refused with a message containing want
static void refused(const char* text, const char* role, const char* want) {
  physLog log;
  memset(&log, 0, sizeof log);
  const char* p = put("bad.json", text);
  physMlp* n = phys_mlp_read_json(p, role, &log);
  CHECK_MSG(n == NULL && strstr(log.error, p) && strstr(log.error, want), "want '%s', got '%s'", want, log.error);
  phys_mlp_free(n);
}

#define HEAD "{\"format\": \"physid-mlp\", \"version\": 1, \"role\": \"residual\", \"input\": \"state-rotmat\", "

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/physid_mlpio_XXXXXX");
  if (!mkdtemp(g_tmp)) return 2;
  // round trip, both activations
  for (int a = 0; a < 2; a++) {
    int size[4] = {7, 5, 4, 3};
    char err[128], p[128];
    physMlp* n = phys_mlp_alloc(3, size, (physMlpAct)a, err, sizeof err);
    physRng r;
    phys_rng_seed(&r, 9 + a);
    phys_mlp_randomize(n, &r, 1);
    n->w[3] = 1e-300, n->w[4] = -123456.78901234567;   // extremes of the 17-digit round trip
    snprintf(p, sizeof p, "%s/net%d.json", g_tmp, a);
    FILE* f = fopen(p, "w");
    CHECK(phys_mlp_write_json(f, n, a ? "end-to-end" : "residual"));
    fclose(f);
    physLog log;
    memset(&log, 0, sizeof log);
    physMlp* b = phys_mlp_read_json(p, a ? "end-to-end" : "residual", &log);
    CHECK_MSG(b != NULL, "read back: %s", log.error);
    if (b) {
      CHECK(b->nlayer == 3 && b->act == n->act && !memcmp(b->size, n->size, sizeof(int) * 4));
      CHECK_MSG(!memcmp(b->w, n->w, sizeof(double) * (size_t)n->nparam), "%s: weights not bit for bit", p);
    }
    phys_mlp_free(b);
    // the role is checked
    b = phys_mlp_read_json(p, a ? "residual" : "end-to-end", &log);
    CHECK_MSG(!b && strstr(log.error, "\"role\""), "role: %s", log.error);
    phys_mlp_free(b);
    phys_mlp_free(n);
  }
  const char* ok_layers = "\"layers\": [{\"W\": [[1, 2], [3, 4], [5, 6]], \"b\": [0, 0, 0]}]}";
  char text[1024];
  refused("{not json", "residual", "not valid JSON");
  refused("{\"format\": \"other\"}", "residual", "\"format\"");
  refused(HEAD "\"activation\": \"relu\", \"sizes\": [2, 3], \"layers\": []}", "end-to-end", "expected \"end-to-end\"");
  refused("{\"format\": \"physid-mlp\", \"version\": 2, \"role\": \"residual\", \"input\": \"state-rotmat\"}",
          "residual", "\"version\": expected 1");
  snprintf(text, sizeof text, HEAD "\"activation\": \"sigmoid\", \"sizes\": [2, 3], %s", ok_layers);
  refused(text, "residual", "\"activation\"");
  snprintf(text, sizeof text, HEAD "\"activation\": \"relu\", \"sizes\": [2, 0], %s", ok_layers);
  refused(text, "residual", "sizes[1]");
  snprintf(text, sizeof text, HEAD "\"activation\": \"relu\", \"sizes\": [2, 1.5], %s", ok_layers);
  refused(text, "residual", "sizes[1]");
  refused(HEAD "\"activation\": \"relu\", \"sizes\": [2, 3], \"layers\": [{\"W\": [[1, 2], [3, 4]], \"b\": [0, 0, 0]}]}",
          "residual", "layers[0].W: expected 3 rows");
  refused(HEAD "\"activation\": \"relu\", \"sizes\": [2, 3], \"layers\": [{\"W\": [[1, 2], [3], [5, 6]], \"b\": [0, 0, 0]}]}",
          "residual", "layers[0].W[1]: expected an array of 2");
  refused(HEAD "\"activation\": \"relu\", \"sizes\": [2, 3], \"layers\": [{\"W\": [[1, 2], [3, 1e999], [5, 6]], \"b\": [0, 0, 0]}]}",
          "residual", "layers[0].W[1][1]: not a finite number");
  refused(HEAD "\"activation\": \"relu\", \"sizes\": [2, 3], \"layers\": [{\"W\": [[1, 2], [3, 4], [5, 6]], \"b\": [0, \"x\", 0]}]}",
          "residual", "layers[0].b[1]: not a finite number");
  refused(HEAD "\"activation\": \"relu\", \"sizes\": [2, 3, 1], \"layers\": [{\"W\": [[1, 2], [3, 4], [5, 6]], \"b\": [0, 0, 0]}]}",
          "residual", "expected an array of 2 layers");
  snprintf(text, sizeof text, HEAD "\"activation\": \"relu\", \"sizes\": [2, 3], %s", ok_layers);
  physLog log;
  memset(&log, 0, sizeof log);
  physMlp* n = phys_mlp_read_json(put("good.json", text), "residual", &log);
  CHECK_MSG(n && n->w[5] == 6, "the small valid file: %s", log.error);
  phys_mlp_free(n);
  char missing[128];
  snprintf(missing, sizeof missing, "%s/none.json", g_tmp);
  memset(&log, 0, sizeof log);   // (a log keeps its first error)
  CHECK(!phys_mlp_read_json(missing, "residual", &log) && strstr(log.error, "No such file"));
  memset(&log, 0, sizeof log);
  CHECK_MSG(!phys_mlp_read_json(g_tmp, "residual", &log) && strstr(log.error, "not a regular file"), "%s", log.error);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  CHECK(system(cmd) == 0);
  return test_done();
}

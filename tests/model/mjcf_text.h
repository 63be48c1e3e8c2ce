// mjcf_text.h - helpers of the MJCF reader's tests (tests/model/test_mjcf*.c): models written as text into a
// temporary folder and parsed or loaded, EXPECT_ERROR for a model that must fail with a given status and
// message, warnings looked up, quaternions compared up to sign.
#ifndef PHYS_TEST_MJCF_TEXT_H
#define PHYS_TEST_MJCF_TEXT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf.h"
#include "physid.h"
#include "spec.h"
#include "test.h"

static char dir[256];    // the test's temporary folder
static char path[512];   // the last file written by put

// make the temporary folder /tmp/physid_<name>_XXXXXX (exits on failure)
static inline void mjcf_text_begin(const char* name) {
  snprintf(dir, sizeof(dir), "/tmp/physid_%s_XXXXXX", name);
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
}

// remove the temporary folder (kept when KEEP is set) and return the test's exit code
static inline int mjcf_text_end(void) {
  char cmd[300];
  if (getenv("KEEP")) return test_done();
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}

// write text to dir/name; returns the full path (static buffer)
static inline const char* put(const char* name, const char* text) {
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  return path;
}

// parse text as dir/model.xml; the spec (NULL on error) and the log
static inline physSpec* parse_text(const char* text, physLog* log) {
  memset(log, 0, sizeof(*log));
  return phys_parse_mjcf(put("model.xml", text), log);
}

// load (parse and compile) text as dir/model.xml; the model (NULL on error) and the log
static inline physModel* load_text(const char* text, physLog* log) {
  memset(log, 0, sizeof(*log));
  return phys_load_mjcf(put("model.xml", text), log);
}

// text must fail to parse with status st and a message containing each of the fragments
#define EXPECT_ERROR(text, st, ...)                                                                        \
  do {                                                                                                     \
    physLog log_;                                                                                          \
    physSpec* s_ = parse_text(text, &log_);                                                                \
    CHECK_MSG(s_ == NULL, "parse should fail: %s", text);                                                 \
    CHECK_MSG(log_.status == (st), "status %d (%s), expected %d; message: %s", log_.status,                \
              phys_status_str(log_.status), (int)(st), log_.error);                                       \
    const char* frags_[] = {__VA_ARGS__, NULL};                                                           \
    for (int i_ = 0; frags_[i_]; i_++) {                                                                   \
      CHECK_MSG(strstr(log_.error, frags_[i_]) != NULL, "message '%s' lacks '%s'", log_.error, frags_[i_]); \
    }                                                                                                      \
    phys_spec_free(s_);                                                                                    \
  } while (0)

// text must fail to compile (it parses) with status st and a message containing frag
static inline void expect_compile_error(const char* text, physStatus st, const char* frag) {
  physLog log;
  physModel* m = load_text(text, &log);
  CHECK_MSG(m == NULL && log.status == st && strstr(log.error, frag), "status %d, message '%s' lacks '%s'",
            log.status, log.error, frag);
  phys_free_model(m);
}

// 1 if any warning contains frag
static inline int has_warning(const physLog* log, const char* frag) {
  for (int i = 0; i < log->nkind && i < PHYS_MAXWARN; i++) {
    if (strstr(log->warning[i], frag)) return 1;
  }
  return 0;
}

// |a - b| <= tol for 4 values, either sign (quaternions)
static inline int quat_near(const double* a, double w, double x, double y, double z, double tol) {
  double b[4] = {w, x, y, z}, dp = 0, dm = 0;
  for (int i = 0; i < 4; i++) {
    dp = fmax(dp, fabs(a[i] - b[i]));
    dm = fmax(dm, fabs(a[i] + b[i]));
  }
  return fmin(dp, dm) <= tol;
}

#endif  // PHYS_TEST_MJCF_TEXT_H

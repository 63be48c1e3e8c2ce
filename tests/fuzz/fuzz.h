// fuzz.h - the shared part of the libFuzzer harnesses (tests/fuzz/fuzz_*.c, built by -DPHYS_FUZZ=ON).
//
// physid's readers take file names (the model loaders resolve <include> and mesh files relative to the
// model, the data readers sniff the .npy magic), so each harness writes the fuzzer's bytes to a file in a
// private folder made once per process under $TMPDIR (default /tmp) and removed at exit, and calls the
// reader on that path.
#ifndef PHYS_FUZZ_H
#define PHYS_FUZZ_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "physid.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static char g_fuzz_dir[4096];

// remove every file of the private folder, then the folder (at exit)
static void fuzz_remove_dir(void) {
  DIR* dir = opendir(g_fuzz_dir);
  if (dir) {
    struct dirent* e;
    char path[4400];
    while ((e = readdir(dir))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      snprintf(path, sizeof path, "%s/%s", g_fuzz_dir, e->d_name);
      unlink(path);
    }
    closedir(dir);
  }
  rmdir(g_fuzz_dir);
}

// the private folder (made on the first call); aborts if it cannot be made
static const char* fuzz_dir(void) {
  if (g_fuzz_dir[0]) return g_fuzz_dir;
  const char* tmp = getenv("TMPDIR");
  snprintf(g_fuzz_dir, sizeof g_fuzz_dir, "%s/physid-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(g_fuzz_dir)) {
    perror(g_fuzz_dir);
    abort();
  }
  atexit(fuzz_remove_dir);
  return g_fuzz_dir;
}

// write size bytes to file `name` of the private folder; its path into path (n bytes). Aborts on I/O failure
// (the harness cannot go on, and a silent skip would fuzz nothing).
static void fuzz_write(char* path, size_t n, const char* name, const void* data, size_t size) {
  snprintf(path, n, "%s/%s", fuzz_dir(), name);
  FILE* f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
    perror(path);
    abort();
  }
}

// with FUZZ_VERBOSE set in the environment, print what the reader said about the input (to check seeds:
// `FUZZ_VERBOSE=1 build-fuzz/tests/fuzz/fuzz_mjcf FILE...`)
__attribute__((unused)) static void fuzz_verbose(const char* what, physStatus st, const char* error) {
  static int verbose = -1;
  if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL;
  if (verbose) fprintf(stderr, "%s: %s\n", what, st == PHYS_OK ? "ok" : error);
}

// the model PHYS_SOURCE_DIR/rel of the source tree with options opt (may be NULL); aborts if it does not load
// (unused by the harnesses that need no model)
__attribute__((unused)) static physModel* fuzz_source_model(const char* rel, const physLoadOptions* opt) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", PHYS_SOURCE_DIR, rel);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(path, opt, &log);
  if (!m) {
    fprintf(stderr, "%s\n", log.error);
    abort();
  }
  return m;
}

#endif  // PHYS_FUZZ_H

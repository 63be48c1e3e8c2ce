// sh_run.h - running the physid binary from a test through the shell (tests/tools): a scratch folder, files
// in it, and runs "physid ARGS" with stdout and stderr captured. The including test sets g_bin (env
// PHYS_BIN) and g_dir (mkdtemp) in main.
#ifndef PHYS_TEST_SH_RUN_H
#define PHYS_TEST_SH_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char* g_bin;   // the physid binary
static char g_dir[64];      // scratch folder

// exit code and output of one run
typedef struct {
  int code;
  char *out, *err;
} shRun;

// path of a file in the scratch folder (one of 16 rotating buffers: copy it to keep it longer)
static const char* path(const char* name) {
  static char buf[16][256];
  static int k = 0;
  k = (k + 1) % 16;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

// the whole content of a file (malloc'd; "" if unreadable)
static char* slurp(const char* p) {
  FILE* f = fopen(p, "rb");
  size_t n = 0, cap = 1 << 16;
  char* s = malloc(cap);
  while (f && !feof(f)) {
    if (n + 4096 >= cap) s = realloc(s, cap *= 2);
    n += fread(s + n, 1, 4096, f);
  }
  if (f) fclose(f);
  s[n] = 0;
  return s;
}

// write text to a scratch file; returns its path
static const char* put(const char* name, const char* text) {
  const char* p = path(name);
  FILE* f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return p;
}

// run "physid ARGS" (ARGS: words without shell metacharacters, or quoted) with stdout and stderr captured
static shRun run(const char* args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' %s > '%s/.out' 2> '%s/.err'", g_bin, args, g_dir, g_dir);
  int st = system(cmd);
  shRun r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(path(".out")), slurp(path(".err"))};
  return r;
}

static void run_free(shRun* r) {
  free(r->out);
  free(r->err);
}

// remove the scratch folder
static void remove_scratch(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
}

#endif  // PHYS_TEST_SH_RUN_H

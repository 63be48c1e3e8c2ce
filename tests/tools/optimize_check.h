// optimize_check.h - checks shared by the tests of `physid optimize` (test_cmd_optimize.c,
// test_optimize_ms.c): optimize_run.h's, a CSV's last row, the replay of a controls file through simulate.
// Include after sh_run.h and test.h.
#ifndef PHYS_OPTIMIZE_CHECK_H
#define PHYS_OPTIMIZE_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimize_run.h"

// column col of the last row of a CSV text (NAN if absent)
static double last_row_value(const char* text, int col) {
  size_t n = strlen(text);
  if (n < 2) return NAN;
  const char* p = text + n - 2;
  while (p > text && *p != '\n') p--;
  p++;
  for (int c = 0; c < col && p; c++) p = strchr(p, ','), p = p ? p + 1 : NULL;
  return p ? strtod(p, NULL) : NAN;
}

// replay u (on the scratch folder's pendulum.xml) with simulate and compare its trajectory with x.csv byte for byte
static void check_replay(int steps, const char* u, const char* x) {
  char args[1024], model[256];
  snprintf(model, sizeof model, "%s", path("pendulum.xml"));
  snprintf(args, sizeof args, "simulate %s --steps %d --quiet --ctrl-file %s --out %s", model, steps, path(u),
           path("replay.csv"));
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  char *a = slurp(path(x)), *b = slurp(path("replay.csv"));
  CHECK_MSG(a[0] && strcmp(a, b) == 0, "%s replayed differs from the optimized trajectory", u);
  free(a);
  free(b);
}

#endif  // PHYS_OPTIMIZE_CHECK_H

// result_cmp.h - comparing two `physid identify --out` result files but for their "time" object (tests/tools: the
// resumed and the distributed fits must give the uninterrupted, one-process result byte for byte). Include after
// sh_run.h (slurp).
#ifndef PHYS_TEST_RESULT_CMP_H
#define PHYS_TEST_RESULT_CMP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// result.json's text up to its "time" object (the last key: wall and CPU times differ between runs)
static char* without_time(const char* p) {
  char* s = slurp(p);
  char* t = strstr(s, "\"time\":");
  if (t) *t = 0;
  return s;
}

// 1 if the two result files are equal but for "time" (and both have one: they are results)
static int same_result(const char* a, const char* b) {
  char *x = without_time(a), *y = without_time(b);
  int same = x[0] && strstr(x, "\"loss_history\"") && strcmp(x, y) == 0;
  if (!same) fprintf(stderr, "  results differ:\n---\n%s\n---\n%s\n---\n", x, y);
  free(x);
  free(y);
  return same;
}

#endif  // PHYS_TEST_RESULT_CMP_H

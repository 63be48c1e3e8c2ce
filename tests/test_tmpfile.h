// test_tmpfile.h - files in a test's scratch folder (new tests use this instead of their own write_text).
#ifndef PHYS_TEST_TMPFILE_H
#define PHYS_TEST_TMPFILE_H

#include <stdio.h>

// write text to dir/name and return that path (one of 4 static buffers, reused in turn); NULL if the file
// cannot be written
static inline const char* test_tmpfile_write(const char* dir, const char* name, const char* text) {
  static char path[4][512];
  static int k = 0;
  k = (k + 1) % 4;
  snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
  FILE* f = fopen(path[k], "wb");
  if (!f) return NULL;
  fputs(text, f);
  fclose(f);
  return path[k];
}

#endif  // PHYS_TEST_TMPFILE_H

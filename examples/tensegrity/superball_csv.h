// superball_csv.h - reading the SUPERball data files of gen_superball (t,q0..,v0..,u0.., one header line) for the
// examples of examples/tensegrity/ (issue 16).
#ifndef SUPERBALL_CSV_H
#define SUPERBALL_CSV_H

#include <stdio.h>

enum { SUPERBALL_MAXROW = 100000 };

// reads the first ncol numeric columns of a CSV after a header line into rows (at most SUPERBALL_MAXROW rows;
// further columns of a row, e.g. the act0.. of a filter model's data read for a model without activations, are
// skipped); the number of rows, -1 if the file cannot be opened
static inline int superball_read_rows(const char* path, int ncol, double* rows) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  int c, n = 0;
  while ((c = fgetc(f)) != EOF && c != '\n') continue;
  while (n < SUPERBALL_MAXROW) {
    int k = 0;
    for (; k < ncol; k++)
      if (fscanf(f, k ? ",%lf" : "%lf", rows + (size_t)n * ncol + k) != 1) break;
    if (k < ncol) break;
    while ((c = fgetc(f)) != EOF && c != '\n') continue;
    n++;
  }
  fclose(f);
  return n;
}

#endif  // SUPERBALL_CSV_H

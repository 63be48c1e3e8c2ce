// test.h - minimal test harness: CHECK macros that count, and a closing "N passed, N failed" line.
#ifndef PHYS_TEST_H
#define PHYS_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int test_npass = 0, test_nfail = 0;

// Every test reads tests/data, models/ and data/ relative to the source folder (ctest starts it there): a test
// binary started from another folder moves there before main, or stops with a message (it once crashed on the
// model it could not find).
#ifdef PHYS_SOURCE_DIR
__attribute__((constructor)) static void test_enter_source_dir(void) {
  if (chdir(PHYS_SOURCE_DIR) != 0) {
    perror("test: cannot enter the source folder " PHYS_SOURCE_DIR);
    exit(2);
  }
}
#endif

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (cond) {                                                                       \
      test_npass++;                                                                   \
    } else {                                                                          \
      test_nfail++;                                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
    }                                                                                 \
  } while (0)

#define CHECK_MSG(cond, ...)                                                          \
  do {                                                                                \
    if (cond) {                                                                       \
      test_npass++;                                                                   \
    } else {                                                                          \
      test_nfail++;                                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
    }                                                                                 \
  } while (0)

// |a - b| <= tol (absolute)
#define CHECK_NEAR(a, b, tol)                                                         \
  do {                                                                                \
    double a_ = (a), b_ = (b), t_ = (tol);                                            \
    CHECK_MSG(fabs(a_ - b_) <= t_ && !isnan(a_) && !isnan(b_),                        \
              "%s = %.17g, %s = %.17g, diff %.3g > %.3g", #a, a_, #b, b_, fabs(a_ - b_), t_); \
  } while (0)

// |a - b| <= rtol * max(|a|, |b|, floor)
#define CHECK_REL(a, b, rtol, floor)                                                  \
  do {                                                                                \
    double a_ = (a), b_ = (b), s_ = fmax(fmax(fabs(a_), fabs(b_)), (floor));          \
    CHECK_MSG(fabs(a_ - b_) <= (rtol) * s_ && !isnan(a_) && !isnan(b_),               \
              "%s = %.17g, %s = %.17g, rel diff %.3g > %.3g", #a, a_, #b, b_,         \
              fabs(a_ - b_) / s_, (double)(rtol));                                    \
  } while (0)

// print the closing line and return the exit code
static inline int test_done(void) {
  printf("%d passed, %d failed\n", test_npass, test_nfail);
  return test_nfail ? 1 : 0;
}

#endif  // PHYS_TEST_H

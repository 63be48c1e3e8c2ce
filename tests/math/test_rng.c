// test_rng.c - xoshiro256** and splitmix64 against their published reference outputs; uniform statistics.
#include "rng.h"

#include <math.h>

#include "test.h"

// splitmix64 from state 0: the reference implementation's first four outputs
static void test_splitmix(void) {
  uint64_t state = 0;
  const uint64_t want[4] = {0xE220A8397B1DCDAFull, 0x6E789E6AA1B965F4ull, 0x06C45D188009454Full,
                            0xF88BB8A8724C81ECull};
  for (int i = 0; i < 4; i++) CHECK(phys_splitmix64(&state) == want[i]);
}

// xoshiro256** from the state {1, 2, 3, 4}: the reference implementation's first ten outputs
static void test_xoshiro(void) {
  physRng rng = {{1, 2, 3, 4}};
  const uint64_t want[10] = {11520ull, 0ull, 1509978240ull, 1215971899390074240ull,
                             1216172134540287360ull, 607988272756665600ull, 16172922978634559625ull,
                             8476171486693032832ull, 10595114339597558777ull, 2904607092377533576ull};
  for (int i = 0; i < 10; i++) CHECK(phys_rng_next(&rng) == want[i]);
}

// seeding: state = splitmix64 outputs of the seed; same seed same stream, another seed another stream
static void test_seed(void) {
  physRng a, b, c;
  phys_rng_seed(&a, 0);
  CHECK(a.s[0] == 0xE220A8397B1DCDAFull && a.s[3] == 0xF88BB8A8724C81ECull);
  phys_rng_seed(&a, 42);
  phys_rng_seed(&b, 42);
  phys_rng_seed(&c, 43);
  int same = 1, differ = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t x = phys_rng_next(&a), y = phys_rng_next(&b), z = phys_rng_next(&c);
    same &= x == y;
    differ += x != z;
  }
  CHECK(same);
  CHECK(differ == 100);
}

// uniform in [lo, hi): bounds hold; mean (lo+hi)/2 and variance (hi-lo)^2/12 within 5 standard errors
static void test_uniform(void) {
  physRng rng;
  phys_rng_seed(&rng, 7);
  const int n = 200000;
  double lo = -2, hi = 3, sum = 0, sum2 = 0, min = 1e9, max = -1e9;
  for (int i = 0; i < n; i++) {
    double x = phys_rng_range(&rng, lo, hi);
    sum += x;
    sum2 += x * x;
    min = fmin(min, x);
    max = fmax(max, x);
  }
  double mean = sum / n, var = sum2 / n - mean * mean, w = hi - lo;
  CHECK(min >= lo && max < hi);
  CHECK(min < lo + 1e-3 * w && max > hi - 1e-3 * w);
  CHECK_NEAR(mean, 0.5, 5 * w / sqrt(12.0 * n));
  // var of x^2 for uniform: w^4/180 -> standard error of the variance estimate w^2/sqrt(180 n)
  CHECK_NEAR(var, w * w / 12, 5 * w * w / sqrt(180.0 * n));
  physRng z = {{0, 0, 0, 1}};
  CHECK(phys_rng_uniform(&z) == 0.0);      // first output of that state is 0: lower bound is reachable
}

int main(void) {
  test_splitmix();
  test_xoshiro();
  test_seed();
  test_uniform();
  return test_done();
}

// rng.c - xoshiro256** (Blackman and Vigna) with splitmix64 seeding, written from the published algorithm.
#include "rng.h"

// rotate x left by k bits (0 < k < 64)
static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// z = (state += golden gamma); mix z by two xor-shift-multiply rounds and a final xor-shift
uint64_t phys_splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// s[i] = splitmix64 outputs 1..4 from seed (never all zero: splitmix64 is a bijection of its counter)
void phys_rng_seed(physRng* rng, uint64_t seed) {
  for (int i = 0; i < 4; i++) rng->s[i] = phys_splitmix64(&seed);
}

// result = rotl(s1 * 5, 7) * 9; then the linear xor/shift/rotate update of the state
uint64_t phys_rng_next(physRng* rng) {
  uint64_t* s = rng->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

// u = (x >> 11) * 2^-53, exactly representable, in [0, 1)
double phys_rng_uniform(physRng* rng) {
  return (double)(phys_rng_next(rng) >> 11) * 0x1.0p-53;
}

// lo + (hi - lo) u
double phys_rng_range(physRng* rng, double lo, double hi) {
  return lo + (hi - lo) * phys_rng_uniform(rng);
}

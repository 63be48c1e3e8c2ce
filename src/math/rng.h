// rng.h - small deterministic pseudo-random numbers: xoshiro256** seeded through splitmix64.
// Same seed, same sequence on every platform (integer arithmetic only; doubles from the top 53 bits).
#ifndef PHYS_RNG_H
#define PHYS_RNG_H

#include <stdint.h>

typedef struct physRng_ {
  uint64_t s[4];            // xoshiro256** state (never all zero)
} physRng;

// one splitmix64 step: advances *state and returns the next output
uint64_t phys_splitmix64(uint64_t* state);
// seed the four state words with four successive splitmix64 outputs of seed
void phys_rng_seed(physRng* rng, uint64_t seed);
// next 64 random bits (xoshiro256**)
uint64_t phys_rng_next(physRng* rng);
// uniform double in [0, 1): top 53 bits times 2^-53
double phys_rng_uniform(physRng* rng);
// uniform double in [lo, hi)
double phys_rng_range(physRng* rng, double lo, double hi);

#endif  // PHYS_RNG_H

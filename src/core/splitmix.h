/* splitmix.h: splitmix64 (Steele, Lea and Flood 2014), the one small
 * integer generator and hash of the library and its tests: seeds for GSL
 * streams, the random platform generator, the checker operator's inputs.
 * Pure integer arithmetic, so a seed gives the same numbers on every
 * machine. */
#ifndef TRD_CORE_SPLITMIX_H
#define TRD_CORE_SPLITMIX_H

#include <stdint.h>

#define TRD_GOLDEN64 0x9e3779b97f4a7c15ULL /* 2^64 / golden ratio: the increment */

/* splitmix64's finaliser: a bijective 64-bit mix (trd_mix64(0) = 0). */
static inline uint64_t trd_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The next number of the stream whose state is *state (any value, 0 too). */
static inline uint64_t trd_splitmix64(uint64_t *state)
{
    return trd_mix64(*state += TRD_GOLDEN64);
}

#endif

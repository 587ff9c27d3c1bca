/* xoshiro.h: xoshiro256++ (Blackman and Vigna, "Scrambled linear
 * pseudorandom number generators", ACM TOMS 47(4), 2021), the generator
 * of the simulator's random costs: 256 bits of state, four words seeded
 * from splitmix64 as its authors advise (so any 64-bit seed, 0 too, gives
 * a good state), a few integer operations per 64-bit number, and all 64
 * bits usable (the ++ scrambler leaves no weak low bits).  Pure integer
 * arithmetic: a seed gives the same numbers on every machine. */
#ifndef TRD_CORE_XOSHIRO_H
#define TRD_CORE_XOSHIRO_H

#include <stdint.h>

#include "core/splitmix.h"

typedef struct trd_xoshiro {
    uint64_t s[4];
} trd_xoshiro;

/* The state from `seed`: four consecutive splitmix64 outputs, never all
 * zero (splitmix64's outputs are a bijection of distinct states). */
static inline void trd_xoshiro_seed(trd_xoshiro *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = trd_splitmix64(&seed);
}

static inline uint64_t trd_rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* The next 64-bit number. */
static inline uint64_t trd_xoshiro_next(trd_xoshiro *g)
{
    uint64_t *s = g->s;
    uint64_t result = trd_rotl64(s[0] + s[3], 23) + s[0], t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = trd_rotl64(s[3], 45);
    return result;
}

/* A uniform double on [0, 1): the top 53 bits, every value a multiple of
 * 2^-53. */
static inline double trd_xoshiro_uniform(trd_xoshiro *g)
{
    return (double)(trd_xoshiro_next(g) >> 11) * 0x1p-53;
}

/* A uniform double on (0, 1] (for a logarithm): the same grid, shifted. */
static inline double trd_xoshiro_uniform_pos(trd_xoshiro *g)
{
    return (double)((trd_xoshiro_next(g) >> 11) + 1) * 0x1p-53;
}

#endif

/*
 * treduce/star.h: all-reduce on the n-star graph S_n (Oh, Choi & Primeaux,
 * "An all-reduce operation in star networks using all-to-all broadcast
 * communication pattern", ICCS 2005; docs/STAR.md).
 *
 * S_n has n! nodes, the permutations of 1..n; link k (2 <= k <= n) joins
 * a permutation to the one with its first and k-th symbols exchanged.
 * treduce numbers the nodes (ranks) by their permutations in lexicographic
 * order.  Two registered algorithms run on it (treduce.h, "Algorithm
 * registry"), both allreduce exchanges for p = n! ranks only:
 *   "star"               the paper's All-Reduce (its Fig. 2): n(n-1)/2
 *                        single-port steps, each along one link dimension,
 *                        no contribution ever reaching a node twice
 *                        (Theorem 3);
 *   "star-reduce-bcast"  the baseline: reduce to rank 0 over a spanning
 *                        tree of S_n, then broadcast back over it, in
 *                        2 * sum_{i=2..n} (ceil(log2(i-1)) + 1) steps (the
 *                        paper's Table 2 column "Sheu").
 * Both are generated as rounds of transfers (a round = one synchronous
 * step of the single-port, bidirectional model) from which the schedule IR,
 * the verifier below and `treduce star` all read.
 *
 * Example: check the paper's claim on S_5.
 *
 *     trd_star_report r;
 *     if (trd_star_verify("star", 5, 1, &r) == TRD_OK && r.verified)
 *         printf("%lld steps\n", (long long)r.steps);   // 10
 */
#ifndef TREDUCE_STAR_H
#define TREDUCE_STAR_H

#include <stdbool.h>
#include <stdint.h>

#include "treduce/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest n whose n! ranks fit the 32-bit ranks of a plan (12! = 479001600). */
#define TRD_STAR_N_MAX 12
/* Largest n the verifier replays: it keeps a set of n! contributions per
 * node, n!^2 bits (S_8: 40320 nodes, 3 sets of 200 MB, a few seconds;
 * S_9 would need 50 GB). */
#define TRD_STAR_REPLAY_MAX 8

/* What the replay of a schedule on S_n found. */
typedef struct trd_star_report {
    int32_t n;
    int64_t nodes;           /* n! */
    int64_t steps;           /* rounds of the schedule */
    int64_t expected_steps;  /* the paper's count: n(n-1)/2 (Theorem 3) for
                                "star", 2 sum (ceil(log2(i-1)) + 1) for
                                "star-reduce-bcast" */
    int64_t transfers;       /* messages in all */
    int64_t duplicates;      /* contributions that reached a node a second
                                time: in a message the node adds, one its sum
                                already held; in a result message (the
                                broadcast, which replaces the sum), one an
                                earlier result message brought */
    int64_t port_violations; /* a node sending, or receiving, more than one
                                message in a round, a transfer between
                                nodes that are not neighbours, or one along
                                another link than its round's */
    int64_t incomplete;      /* nodes that end without all n! contributions */
    int64_t wrong_sums;      /* nodes whose sum of random integers differs
                                from the sequential sum */
    bool verified;           /* all four counts 0 and steps == expected */
    double seconds;          /* time of generation and replay */
} trd_star_report;

/* Number of steps (rounds) of algorithm `algo` ("star" or
 * "star-reduce-bcast") on S_n, counted from the rounds its generator
 * writes without enumerating the n! nodes.  1 <= n <= TRD_STAR_N_MAX;
 * TRD_ENOALGO for another name, TRD_EINVAL naming n otherwise. */
trd_status trd_star_steps(const char *algo, int32_t n, int64_t *steps);

/* Generates the schedule of `algo` on S_n with its n! transfers per round
 * and replays it round by round, independently of the generator: each
 * node's set of contributions (a bitset) and its sum of a random integer
 * per node (drawn from `seed`).  1 <= n <= TRD_STAR_REPLAY_MAX: a larger n
 * is refused with TRD_EINVAL before anything is allocated. */
trd_status trd_star_verify(const char *algo, int32_t n, uint64_t seed,
                           trd_star_report *report);

/* The closed forms of the paper's Table 2, any n >= 1:
 * Theorem 3, n(n-1)/2; "Sheu" (reduce then broadcast after Sheu, Wu and
 * Chen 1995), 2 sum_{i=2..n} (ceil(log2(i-1)) + 1); "Tseng" (after Tseng
 * and Sheu 1997), 3(n-1)^2. */
int64_t trd_star_steps_theorem3(int32_t n);
int64_t trd_star_steps_sheu(int32_t n);
int64_t trd_star_steps_tseng(int32_t n);

#ifdef __cplusplus
}
#endif
#endif

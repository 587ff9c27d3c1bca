/* oracle.h: independent reference implementations the tests (and
 * bench/plan) compare libtreduce against.  None of them calls the code under
 * test: the greedy algorithms use a binary heap as printed in canon-antoniu
 * (O(n log n)), makespans come from Prop. 3's closed form, and optimal
 * makespans from exhaustive enumeration of trees. */
#ifndef TRD_TESTS_ORACLE_H
#define TRD_TESTS_ORACLE_H

#include <stdint.h>

/* Algorithm 1 (reducers >= n) or Algorithm 3 (at most `reducers` receiving
 * machines) with a binary heap keyed by (s, position); parent[0] = -1.
 * Returns 0, or -1 when out of memory (or when n < 1 or reducers < 1). */
int trd_oracle_greedy_heap(int32_t n, double d, double c, int64_t reducers,
                           int32_t *parent);

/* Algorithm 2 with a binary heap; fills parent[] and the forward start of
 * every transfer start[i] (start[0] unused) as docs/MODEL.md reads it
 * ("Reading of the paper and choices made"), and returns the
 * makespan (t_max), or a negative value when out of memory (or when n < 1
 * or K < 1).  start[0] is set to 0. */
double trd_oracle_greedy_k_transfers_heap(int32_t n, double d, double c, int64_t K,
                                          int32_t *parent, double *start);

/* Prop. 3 closed form (docs/MODEL.md's reading, inputs earliest first):
 * t_i = max_j (t_i^j + d + (m_i - j) max(d, c) + c); returns the root's
 * finish time.  parent[] may be any tree rooted where parent == -1; NaN
 * when it is not one tree (no root, two roots, a cycle, a bad index). */
double trd_oracle_prop3_makespan(int32_t n, const int32_t *parent, double d, double c);

/* Optimal makespan over ALL trees on n <= 9 machines (parent[i] < i covers
 * every tree up to relabelling), counting only trees with at most
 * `max_reducers` receiving machines (pass n for no limit).  NaN when n is
 * outside 1..9 or max_reducers < 1. */
double trd_oracle_brute_force(int32_t n, double d, double c, int32_t max_reducers);

/* The heterogeneous model (hetero_brute.c): d is n x n (d[i*n + j]: i
 * sends to j), c has n entries.  The least finish time of the root over
 * every tree rooted at `root` and every receive order of every machine;
 * NaN when n is outside 1..6 or root is not a machine. */
double trd_oracle_hetero_brute(int32_t n, int32_t root, const double *d, const double *c);
/* The finish time of `root` in the tree whose machine v receives its
 * count[v] inputs in the order order[v][0..count[v]); NaN when n is outside
 * 1..6. */
double trd_oracle_hetero_makespan(int32_t n, int32_t root, const int32_t *const *order,
                                  const int32_t *count, const double *d, const double *c);

#endif

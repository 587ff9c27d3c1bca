/* treduce/steady.h: steady-state series of collectives on a platform graph
 * (Legrand, Marchal and Robert 2004): Series of Scatters (Sec. 3.1),
 * Series of Gossips / personalised all-to-all (Sec. 3.5) and Series of
 * Reduces with a non-commutative operator (Sec. 4.2).  In
 * libtreduce_steady (pkg-config treduce-steady).
 *
 * trd_steady_solve writes the problem's linear program, solves it exactly
 * in rational arithmetic, and turns the solution into a periodic schedule:
 * the throughput (an exact fraction), the period (least common multiple of
 * the solution's denominators), weighted trees (Fig. 8; for scatters and
 * gossips a "tree" is one whole operation: one path per message), the
 * communication matchings of one period (Sec. 3.3) and, on request, the
 * schedule of a fixed period (Prop. 4).  Every result is checked against
 * the one-port and conservation constraints before it is returned.
 *
 * Example: the best throughput of a series of reduces.
 *
 *     trd_platform *pf;  trd_steady *st;  trd_steady_spec spec;
 *     trd_platform_load("platform.json", &pf);
 *     trd_steady_spec_init(&spec);
 *     spec.problem = TRD_STEADY_REDUCE;
 *     spec.root = trd_platform_find(pf, "P0");   // the target
 *     if (trd_steady_solve(pf, &spec, &st) == TRD_OK)
 *         printf("%s per time unit\n", trd_steady_throughput(st));
 *
 * docs/STEADY.md describes the problems, the outputs and their formats. */
#ifndef TREDUCE_STEADY_H
#define TREDUCE_STEADY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "treduce/platform.h"
#include "treduce/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum trd_steady_problem {
    TRD_STEADY_SCATTER, /* a source sends a distinct message to every target */
    TRD_STEADY_GOSSIP,  /* every participant sends a distinct message to every other */
    TRD_STEADY_REDUCE   /* v0 ⊕ v1 ⊕ ... ⊕ vN (participants' order) reaches the target */
} trd_steady_problem;

typedef enum trd_steady_format {
    TRD_STEADY_TEXT, /* readable summary */
    TRD_STEADY_JSON, /* one JSON object (keys: docs/STEADY.md) */
    TRD_STEADY_DOT   /* Graphviz: the platform with each link's usage */
} trd_steady_format;

/* Size of the partial result v[k,m] of a reduce (participant positions,
 * 0 <= k <= m < participants); `size` is an exact number ("10", "2/3",
 * "0.5"), > 0. */
typedef struct trd_steady_size {
    int32_t k, m;
    const char *size;
} trd_steady_size;

typedef struct trd_steady_spec {
    trd_steady_problem problem;
    /* Scatter: the source.  Reduce: the target (any computing node).
     * Gossip: unused. */
    int32_t root;
    /* Scatter: the targets.  Gossip and reduce: the participants, in the
     * order of the reduction; NULL with count 0 means every computing node
     * in the platform's order (for a scatter, every one but the source).
     * No routers, no duplicates. */
    const int32_t *members;
    int32_t n_members;
    /* Reduce only: the size of every v[k,m] not listed in sizes (NULL:
     * "1"), the size of every task T_{k,l,m} (its time on node i is
     * task_size / speed_i; NULL: "1"), and per-result sizes. */
    const char *message_size;
    const char *task_size;
    const trd_steady_size *sizes;
    int32_t n_sizes;
    /* > 0: also build the schedule of this period (Prop. 4); 0: none. */
    int64_t fixed_period;
} trd_steady_spec;

typedef struct trd_steady trd_steady;

/* Defaults: reduce, root -1 (unset), every computing node, sizes 1, no
 * fixed period. */
void trd_steady_spec_init(trd_steady_spec *spec);

/* "scatter", "gossip", "reduce"; parse fails with TRD_EINVAL naming the
 * bad name and the valid ones. */
const char *trd_steady_problem_name(trd_steady_problem problem);
trd_status trd_steady_problem_parse(const char *name, trd_steady_problem *out);

/* Solves the problem on pf.  TRD_EINVAL (message naming the bad value):
 * node out of range, a router as source, target or participant, a
 * duplicate, too few members (a reduce or gossip needs 2 participants, a
 * scatter 1 target other than the source), a bad size or fixed period.
 * A member that cannot be reached is not an error: the throughput is then
 * 0 and trd_steady_reachable() false.  TRD_EBACKEND if the LP solver fails
 * or a result fails its check (a bug).  *out is NULL after a failure. */
trd_status trd_steady_solve(const trd_platform *pf, const trd_steady_spec *spec,
                            trd_steady **out);
void trd_steady_free(trd_steady *st);

/* false when some message cannot reach its destination (throughput 0);
 * trd_steady_unreachable() then says which, else it is "". */
bool trd_steady_reachable(const trd_steady *st);
const char *trd_steady_unreachable(const trd_steady *st);

/* Operations per time unit as an exact fraction ("2/9", "1", "0"). */
const char *trd_steady_throughput(const trd_steady *st);
double trd_steady_throughput_double(const trd_steady *st);
/* The period as a decimal integer; the _int64 form fails with
 * TRD_EUNSUPPORTED when it does not fit. */
const char *trd_steady_period(const trd_steady *st);
trd_status trd_steady_period_int64(const trd_steady *st, int64_t *out);
int32_t trd_steady_tree_count(const trd_steady *st);
int32_t trd_steady_matching_count(const trd_steady *st);
/* Size of the linear program that was solved (0 when none was needed). */
void trd_steady_lp_size(const trd_steady *st, int32_t *rows, int32_t *columns);
/* Throughput of the fixed-period schedule (Prop. 4) as an exact fraction,
 * or NULL when no fixed period was asked for. */
const char *trd_steady_fixed_throughput(const trd_steady *st);

/* Writes the result; pf must be the platform it was solved on (TRD_EINVAL
 * otherwise), TRD_EIO when writing fails. */
trd_status trd_steady_write(const trd_steady *st, const trd_platform *pf,
                            trd_steady_format format, FILE *out);

#ifdef __cplusplus
}
#endif

#endif

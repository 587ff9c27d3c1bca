/* steady_internal.h: the result of a steady-state problem (Legrand,
 * Marchal and Robert 2004), as plain data for the rest of the library
 * (the periodic-schedule simulator reads it directly).
 *
 * Vocabulary (the paper's):
 *  - a message *type* is what travels on links: the message m_t of a
 *    scatter to target t, the message m_{k,l} of a gossip from participant
 *    k to participant l, the partial result v[k,m] = v_k ⊕ ... ⊕ v_m of a
 *    reduce;
 *  - send(i -> j, type) is the number of messages of a type sent on link
 *    i -> j per time unit (a `rate`), or per period (a `count`);
 *  - cons(i, T_{k,l,m}) the number of tasks v[k,m] = v[k,l] ⊕ v[l+1,m]
 *    computed on node i (reduce only);
 *  - a *tree* is one whole operation (one reduce, one scatter, one gossip):
 *    the computations and transfers that produce its results (Def. 1,
 *    Fig. 8), used `weight` times per period;
 *  - the *matchings* schedule the transfers of one period (Sec. 3.3).
 *
 * Nodes and links are indices into the trd_platform the problem was solved
 * on; participants are positions 0..n_members-1 in `members`. */
#ifndef TRD_STEADY_INTERNAL_H
#define TRD_STEADY_INTERNAL_H

#include <stdio.h> /* before gmp.h, for gmp_fprintf */

#include <gmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "steady/matching.h"
#include "treduce/steady.h"

/* A message type.  Scatter: k = -1, m = target position.  Gossip: from
 * participant k to participant m.  Reduce: the partial result v[k,m]. */
typedef struct trd_sd_type {
    int32_t k, m;
    int32_t leaf; /* node with an unlimited supply of it (the scatter source,
                     the gossip sender, the owner of v[k,k]), or -1 */
    int32_t sink; /* node where it is delivered, its arrivals counting into
                     the throughput (scatter/gossip destination, the reduce
                     target for v[0,N]), or -1 */
    mpq_t size;   /* size of one message (1 for scatters and gossips) */
} trd_sd_type;

/* send(from -> to, type), > 0. */
typedef struct trd_sd_send {
    int32_t link, from, to, type;
    mpq_t rate;  /* messages per time unit (the LP's value) */
    mpz_t count; /* messages per period = rate * period */
} trd_sd_send;

/* cons(node, T_{k,l,m}), > 0 (reduce only). */
typedef struct trd_sd_comp {
    int32_t node, k, l, m;
    int32_t type;      /* type of the result v[k,m] */
    int32_t left, right; /* types of the inputs v[k,l] and v[l+1,m] */
    mpq_t rate;
    mpz_t count;
} trd_sd_comp;

/* A transfer of a tree: one message of `type` on link from -> to; `send`
 * is the index of the matching entry of trd_steady.sends. */
typedef struct trd_sd_hop {
    int32_t link, from, to, type, send;
} trd_sd_hop;

/* A computation of a tree: T_{k,l,m} on `node`; `comp` indexes
 * trd_steady.comps. */
typedef struct trd_sd_task {
    int32_t node, k, l, m, comp;
} trd_sd_task;

typedef struct trd_sd_tree {
    mpz_t weight; /* operations per period that follow this tree (> 0) */
    mpz_t fixed;  /* Prop. 4: r(T) = floor(weight * fixed_period / period) */
    int32_t n_tasks, n_hops;
    trd_sd_task *tasks; /* in the order Fig. 8 found them (root first) */
    trd_sd_hop *hops;
} trd_sd_tree;

struct trd_steady {
    trd_steady_problem problem;
    int32_t n_nodes, n_links; /* of the platform (checked by the writers) */
    int32_t root;             /* scatter source, reduce target, -1 (gossip) */
    int32_t n_members;
    int32_t *members; /* scatter targets; gossip/reduce participants */

    int32_t n_types;
    trd_sd_type *types;
    int32_t *type_of; /* reduce: type of v[k,m] at [k * n_members + m] */
    mpq_t task_size;  /* reduce: size of every task */

    bool reachable;
    char *unreachable; /* "" or which member cannot be reached */
    int32_t lp_rows, lp_cols;

    mpq_t throughput; /* TP, operations per time unit */
    mpz_t period;     /* T: lcm of the denominators of TP and every rate */
    int32_t n_sends, n_comps;
    trd_sd_send *sends; /* the solution, without zeros and send cycles */
    trd_sd_comp *comps;

    int32_t n_trees;
    trd_sd_tree *trees;
    trd_matchings matchings; /* transfers of one period */

    int64_t fixed_period; /* Prop. 4, 0 when not asked for */
    mpq_t fixed_throughput, fixed_loss, fixed_bound;
    trd_matchings fixed_matchings;

    char *throughput_str, *period_str, *fixed_str; /* for the accessors */
};

/* --- problems: fill st->types (and type_of) from the validated spec --- */
/* How many message types a problem of `members` participants (targets of
 * a scatter) has: m, m (m - 1), m (m + 1) / 2 (steady.c). */
int64_t trd_sd_type_count(trd_steady_problem problem, int64_t members);
/* That many types for st->n_members, of size 1, no leaf, no sink
 * (steady.c); TRD_ENOMEM when the problem is too large. */
trd_status trd_sd_types_alloc(trd_steady *st);
trd_status trd_sd_scatter_types(trd_steady *st);
trd_status trd_sd_gossip_types(trd_steady *st);
trd_status trd_sd_reduce_types(trd_steady *st, const trd_steady_spec *spec);
/* Readable name of a type: "m[P1]", "m[P0,P1]", "v[0,2]" (into buf). */
void trd_sd_type_name(const trd_steady *st, const trd_platform *pf, int32_t type, char *buf,
                      size_t size);

/* --- the LP (build.c, reduce.c) and its solution (solution.c) --- */
trd_status trd_sd_solve_lp(trd_steady *st, const trd_platform *pf);
/* Removes cycles of sends of one type (they carry nothing: the round
 * trips docs/STEADY.md's corrections forbid, and LP degeneracy) and zero
 * entries; keeps TP and every constraint. */
trd_status trd_sd_cancel_cycles(trd_steady *st);

/* --- period.c --- */
/* period = lcm of the denominators; count = rate * period. */
void trd_sd_set_period(trd_steady *st);
/* Prop. 4: r(T) per tree, fixed_throughput, fixed_loss, fixed_bound. */
void trd_sd_fixed_period(trd_steady *st, int64_t fixed_period);

/* --- trees.c: Fig. 8 --- */
trd_status trd_sd_extract_trees(trd_steady *st);

/* --- schedule.c: matchings of the trees' transfers, each tree used
 * `fixed ? r(T) : w(T)` times; total checked against `period`. --- */
trd_status trd_sd_build_matchings(const trd_steady *st, const trd_platform *pf, bool fixed,
                                  trd_matchings *out);

/* --- check.c: independent verification; TRD_EBACKEND naming the first
 * violated constraint. --- */
trd_status trd_sd_check_solution(const trd_steady *st, const trd_platform *pf);
trd_status trd_sd_check_trees(const trd_steady *st, const trd_platform *pf);
trd_status trd_sd_check_matchings(const trd_steady *st, const trd_platform *pf, bool fixed);

/* --- output.c, output_json.c --- */
/* Busy time per time unit: use[i] sending, use[n + i] receiving,
 * use[2n + i] computing (node i), use[3n + e] link e (s(e) of eq. (4)). */
void trd_sd_usage(const trd_steady *st, const trd_platform *pf, mpq_t *use);
trd_status trd_sd_write_json(const trd_steady *st, const trd_platform *pf, FILE *out);
trd_status trd_sd_write_text(const trd_steady *st, const trd_platform *pf, FILE *out);
trd_status trd_sd_write_dot(const trd_steady *st, const trd_platform *pf, FILE *out);

#endif

/* star.h: the n-star graph S_n and the round structure of the schedules
 * that run on it (internal; the public face is treduce/star.h, the
 * algorithm docs/STAR.md).
 *
 * A schedule on S_n is a list of rounds.  A round is one synchronous step
 * of Oh, Choi and Primeaux's model (Sec. 2: single-port, bidirectional
 * links): a set of transfers (sender, receiver), all along one link
 * dimension (or, for the reduce+broadcast baseline, along several), and
 * what every sender sends and every receiver does with it.  Each node has
 * the paper's two buffers (Sec. 3): the result buffer (its partial sum) and
 * the outgoing message buffer.  The generators (star.c, Fig. 2;
 * star_reduce_bcast.c, the baseline) write the rounds; the schedule IR
 * (star_ir.c), the verifier (star_verify.c) and `treduce star` read them,
 * so the algorithm exists once. */
#ifndef TRD_PLAN_STAR_H
#define TRD_PLAN_STAR_H

#include <stdbool.h>
#include <stdint.h>

#include "plan/plan_internal.h"
#include "treduce/star.h"

/* ---- The graph.  Ranks are permutations in lexicographic order; a
 * permutation is perm[0..n) over the symbols 1..n. ---- */

/* n! for 0 <= n <= 20. */
int64_t trd_star_factorial(int32_t n);
/* The n >= 1 with n! = p (1 for p = 1), or 0 when p is no factorial. */
int32_t trd_star_dimension(int64_t p);
/* The permutation of `rank` (0 <= rank < n!). */
void trd_star_label(int32_t n, int64_t rank, uint8_t *perm);
/* The rank of a permutation. */
int64_t trd_star_rank(int32_t n, const uint8_t *perm);

/* Neighbours of every node: nb[r * (n - 1) + k - 2] is the node joined to
 * r by link k (2 <= k <= n), its first and k-th symbols exchanged. */
typedef struct trd_star_graph {
    int32_t n;
    int32_t nodes;
    int32_t *nb;
} trd_star_graph;
trd_status trd_star_graph_make(trd_star_graph *g, int32_t n);
void trd_star_graph_free(trd_star_graph *g);
static inline int32_t trd_star_neighbor(const trd_star_graph *g, int32_t r, int32_t k)
{
    return g->nb[(size_t)r * (size_t)(g->n - 1) + (size_t)(k - 2)];
}

/* ---- Rounds ---- */

/* What every sender of a round sends. */
typedef enum trd_star_send {
    TRD_STAR_SEND_RESULT = 0,  /* its result buffer: its partial sum */
    TRD_STAR_SEND_OUTGOING = 1 /* its outgoing buffer */
} trd_star_send;

/* What every receiver of a round does with the message. */
typedef enum trd_star_recv {
    TRD_STAR_RECV_ADD = 0,  /* adds it to its result */
    TRD_STAR_RECV_KEEP = 1, /* stores it in its outgoing buffer and adds it */
    TRD_STAR_RECV_TAKE = 2  /* takes it as its result (broadcast of the sum) */
} trd_star_recv;

typedef struct trd_star_xfer {
    int32_t from, to;
} trd_star_xfer;

typedef struct trd_star_round {
    int32_t link;  /* 2..n: every transfer goes along this link; 0: several */
    int32_t send;  /* trd_star_send */
    int32_t recv;  /* trd_star_recv */
    size_t first;  /* its transfers: xfer[first .. first + count) */
    size_t count;
} trd_star_round;

typedef struct trd_star_sched {
    int32_t n;
    int64_t nodes;   /* n! */
    bool enumerated; /* transfers listed; otherwise the rounds only */
    trd_star_round *round;
    size_t rounds, round_cap;
    trd_star_xfer *xfer;
    size_t xfers, xfer_cap;
} trd_star_sched;

void trd_star_sched_init(trd_star_sched *s, int32_t n, bool enumerate);
void trd_star_sched_free(trd_star_sched *s);
/* Appends a round, then a transfer to the last round (enumerated only). */
trd_status trd_star_round_open(trd_star_sched *s, int32_t link, trd_star_send send,
                               trd_star_recv recv);
trd_status trd_star_xfer_add(trd_star_sched *s, int32_t from, int32_t to);
/* Appends a round along `link` in which every node sends to its neighbour
 * along it (the rounds of the paper's algorithm). */
trd_status trd_star_round_all(trd_star_sched *s, const trd_star_graph *g, int32_t link,
                              trd_star_send send, trd_star_recv recv);

/* A generator: the rounds of one algorithm on S_n (1 <= n <=
 * TRD_STAR_N_MAX) into `out` (from trd_star_sched_init), with their
 * transfers when out->enumerated.  On failure `out` is to be freed. */
typedef trd_status (*trd_star_gen_fn)(trd_star_sched *out);
trd_status trd_star_generate(trd_star_sched *out);    /* star.c: Fig. 2 */
trd_status trd_star_rb_generate(trd_star_sched *out); /* star_reduce_bcast.c */

/* A star algorithm: its generator and the paper's count of its steps
 * (Theorem 3 for "star", the column "Sheu" for "star-reduce-bcast"). */
typedef struct trd_star_algo {
    const char *name;
    trd_star_gen_fn gen;
    int64_t (*paper_steps)(int32_t n);
} trd_star_algo;
/* The star algorithm called `name`, or NULL (TRD_ENOALGO set). */
const trd_star_algo *trd_star_algo_find(const char *name);

/* Replays schedule s (enumerated) with a random integer per node drawn
 * from `seed` and fills report's counts (star_verify.c); n <=
 * TRD_STAR_REPLAY_MAX.  expected_steps, verified and seconds are left 0:
 * trd_star_verify sets them. */
trd_status trd_star_replay(const trd_star_sched *s, uint64_t seed, trd_star_report *report);

/* The exchange plan of a star algorithm (trd_schedule_fn): refuses a rank
 * count that is no factorial and a non-commutative operator with
 * TRD_EUNSUPPORTED, then writes every rank's program from the rounds of
 * `gen` (star_ir.c). */
trd_status trd_star_plan(trd_plan *plan, trd_star_gen_fn gen);

#endif

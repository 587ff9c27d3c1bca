/* runtime_matrix.h: the runtime's correctness matrix, one source for every
 * wire (runtime_matrix.c), the way Gloo parameterises its tests over
 * transports.  A case is one collective call every rank makes: an
 * algorithm, an operator (built-ins checked bitwise against plain loops,
 * the non-commutative checkers), a count, a root, the collective and how
 * the caller passes its buffers.  rtm_rank runs a list of cases on one
 * rank of any communicator and checks what that rank can see: the result
 * against the sequential rank-order fold, the canaries past count and on
 * the non-roots, sendbuf unchanged, refusals that lose nothing.
 *
 * What differs between wires is the harness (rtm_harness): how the ranks
 * stay in step after a failure and how the failures of all ranks are
 * counted.  The threads harness is here (rtm_threads_cases runs a list on
 * p threads); the MPI one is tests/mpi/test_runtime_matrix_mpi.c. */
#ifndef TRD_TESTS_RUNTIME_MATRIX_H
#define TRD_TESTS_RUNTIME_MATRIX_H

#include "runtime_util.h"

#define RTM_GUARD 8         /* elements past count that must keep the canary */

/* How the caller passes its buffers where the result lands. */
typedef enum rtm_bufmode { RTM_SEPARATE = 0, RTM_IN_PLACE = 1, RTM_SAME = 2 } rtm_bufmode;

/* One collective call that every rank makes. */
typedef struct rt_case {
    size_t algo;
    const char *name; /* NULL: the registry's name of algo; else e.g. "auto" */
    rt_opid op;
    int64_t count;    /* a reduce-scatter: each part's (uneven: their base) */
    int32_t root;
    trd_collective coll;
    bool uneven;      /* a reduce-scatter of parts rtm_part() (trd_reduce_scatter) */
    rtm_bufmode mode;
    uint64_t seed;
    trd_coll_opts opts;
} rt_case;

typedef struct case_list {
    rt_case *v;
    size_t len, cap;
} case_list;

/* Part r's count in an uneven reduce-scatter of base count on p ranks:
 * some empty, the others of different sizes. */
int64_t rtm_part(int64_t count, int32_t p, int32_t r);

/* Appends k (opts.algo set from name or algo). */
void rtm_push(case_list *l, rt_case k);

/* The matrix of one algorithm on p ranks with options base: every
 * operator x counts cnt x {reduce to root 0, to root p-1, allreduce,
 * reduce-scatter of equal and of uneven parts, scan, exscan} x every
 * buffer mode, seeds from seed0 on. */
void rtm_add_matrix(case_list *l, size_t algo, int32_t p, const trd_coll_opts *base,
                    const int64_t *cnt, size_t ncnt, uint64_t seed0);

/* rtm_add_matrix under the options the algorithm needs to run well: a
 * model under which the pipelines choose a few segments, random
 * heterogeneous costs of these ranks for the planners that need them. */
void rtm_algo_matrix(case_list *l, size_t algo, int32_t p, const int64_t *cnt, size_t ncnt,
                     uint64_t seed0);

typedef struct rtm_run rtm_run;

/* What a wire provides to the matrix. */
typedef struct rtm_harness {
    const char *wire; /* named in every failure */
    /* After each case on every rank: whether any rank asked to stop (mine:
     * this one asks, its calls can no longer match the others'). */
    bool (*stop)(rtm_run *x, bool mine);
    /* The failures of every rank, the same number on every rank. */
    int (*failures)(rtm_run *x);
} rtm_harness;

/* One run of a case list, shared by the ranks of this process. */
struct rtm_run {
    const rt_case *cases;
    size_t ncases;
    trd_op *ops[RT_NOPS];
    rt_log log;
    int32_t p;
    const rtm_harness *h;
    void *wire_ctx;                     /* the harness's own (MPI: the communicator) */
    atomic_long done, refused, skipped; /* calls of rank 0 */
};

/* Prepares x to run l on p ranks; TRD_OK or the operators' failure. */
trd_status rtm_run_init(rtm_run *x, const case_list *l, int32_t p, const rtm_harness *h);
void rtm_run_done(rtm_run *x);

/* One rank's part (an rt_rank_fn; arg an rtm_run). */
trd_status rtm_rank(trd_comm *comm, int32_t rank, void *arg);

/* Threads: runs l on p ranks (comm: existing communicators, or NULL for
 * fresh ones with hooks, NULL: none) and fails the cmocka test on any
 * problem, naming `what`. */
void rtm_threads_cases(const case_list *l, int32_t p, trd_comm **comm,
                       const trd_test_hooks *hooks, const char *what);

#endif

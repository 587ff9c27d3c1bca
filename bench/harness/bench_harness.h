/* bench_harness.h: the harness of `treduce bench` (bench/harness/), split
 * by part (tools/cmd_bench.c is the command):
 *   cmd_bench.c      arguments and the run as a whole;
 *   bench_data.c     parsing of lists and sizes, the inputs and their fold;
 *   bench_rank.c     what every rank measures (treduce's algorithms, auto);
 *   bench_threads.c  ranks as threads, and the memory-bandwidth bound;
 *   bench_mpi.c      ranks as MPI processes, and MPI's own collectives;
 *   bench_report.c   CSV, JSON and the text summary (rank 0);
 *   bench_plot.c     the PNG figures. */
#ifndef TRD_BENCH_HARNESS_H
#define TRD_BENCH_HARNESS_H

#include <stdio.h>

#include "cli.h"

/* The kinds are the collectives, bench_args.kind indexed by trd_collective. */
enum { BENCH_KINDS = TRD_COLL_EXSCAN + 1 };
enum { BENCH_MAX_SIZES = 64, BENCH_MAX_OPS = 3, BENCH_MAX_ALGOS = 64 };

/* What to run (the command line, parsed and checked). */
typedef struct bench_args {
    const char *wire_name, *out;
    const trd_wire_info *wire; /* wire_name's row in the wire registry */
    char command[1024];        /* the command line, for the figures' notes */
    int64_t p;                 /* threads: ranks; mpi: set from MPI's size */
    int64_t iters;             /* repetitions per point; 0: adaptive */
    int64_t sizes[BENCH_MAX_SIZES]; /* bytes per rank, multiples of 8 */
    size_t nsizes;
    const char *ops[BENCH_MAX_OPS]; /* "sum", "costly", "costly-spin" */
    size_t nops;
    bool kind[BENCH_KINDS];    /* --kinds: reduce, allreduce by default */
    size_t algos[BENCH_MAX_ALGOS]; /* registry indices measured besides auto */
    size_t nalgos;
    double op_cost_us, timeout;
    int64_t tune;              /* auto: candidates timed (trd_coll_opts.tune) */
    bool json;
} bench_args;

/* One measured series at one point.  algo is a registry name, "auto",
 * "mpi" (the MPI library's own collective) or "bound" (the threads
 * wire's memory-bandwidth bound). */
typedef struct bench_point {
    size_t op;
    trd_collective kind;
    int64_t bytes, iters;      /* bytes per rank: a reduce-scatter's part */
    const char *algo;
    const char *chosen;        /* auto: the algorithm it ran; else NULL */
    const char *model;         /* auto: the model's first, before any timing */
    double median, min;        /* seconds, slowest rank per repetition */
    double predicted;          /* seconds; NaN for the baselines */
    bool verified;
} bench_point;

/* Everything rank 0 reports. */
typedef struct bench_table {
    bench_point *pt;
    size_t n, cap;
    int64_t p;
    trd_profile profile[BENCH_MAX_OPS];
    char baseline_lib[64];     /* mpi: the MPI library's name and version */
    cli_shm shm;               /* mpi: the rings' limit (0: none) and its probe */
} bench_table;

/* One collective call to time: the buffers (count doubles out, as many
 * in but for a reduce-scatter's p parts of count) and what the result
 * must be on this rank if it gets one. */
typedef struct bench_case {
    size_t op;
    trd_collective kind;
    int64_t count;
    const trd_op *trd;
    const double *in;
    double *out;
    const double *expected;
} bench_case;

/* How to time one series: a barrier, then one call. */
typedef struct bench_runner {
    trd_status (*barrier)(void *self);
    trd_status (*call)(void *self, const bench_case *c);
    void *self;
} bench_runner;

typedef struct bench_rank bench_rank;
/* A baseline measured at every point beside treduce's algorithms. */
typedef trd_status (*bench_baseline_fn)(bench_rank *br, const bench_case *c);

/* One rank's state.  table is rank 0's (NULL elsewhere). */
struct bench_rank {
    const bench_args *a;
    trd_comm *comm;
    bench_table *table;
    const trd_op *ops[BENCH_MAX_OPS];
    trd_op *max;               /* max on doubles: gathering times */
    bench_baseline_fn baseline;
    void *baseline_ctx;
    /* The barrier before every repetition of every series, treduce's and
     * the baseline's alike (NULL: trd_comm_barrier).  Under MPI it is
     * MPI_Barrier: the ranks leave a barrier at different moments (treduce's
     * releases rank 0 first, one message before the others), and a reduce
     * to rank 0 pays that skew, so both libraries start from the same one. */
    trd_status (*barrier)(void *ctx);
    void *barrier_ctx;
    int64_t done, total;       /* series measured so far, of all */
    trd_status status;
    char error[512];
};

/* ---- bench_data.c ---- */
/* Parses "8,1K,64K,1M,16M" (suffixes K, M, G: powers of 1024; an optional
 * trailing B or iB); false with a usage message naming the bad item. */
bool bench_parse_sizes(const char *text, bench_args *a);
bool bench_parse_ops(const char *text, bench_args *a);
bool bench_parse_kinds(const char *text, bench_args *a);
bool bench_parse_algos(const char *text, bench_args *a);
/* The default sizes: 8 B times powers of 4 up to 8 MiB, and 16 MiB. */
void bench_default_sizes(bench_args *a);
/* "8 B", "64 KiB", "16 MiB" into buf. */
const char *bench_size_text(int64_t bytes, char *buf, size_t size);
/* Rank r's input (the values of `treduce run`: small integers, exact in
 * any order), and what rank r of p gets from a call of kind on count
 * elements: the rank-order fold of the inputs that make it
 * (cli_kind_result_of); nothing written where it gets none. */
void bench_fill(double *buf, int64_t count, int64_t rank);
void bench_expected(double *buf, trd_collective kind, int64_t count, int64_t p, int64_t rank);
/* The trd operator of op name ("sum", "costly", "costly-spin"). */
trd_status bench_make_op(const bench_args *a, const char *name, trd_op **op);
/* Whether registry algorithm i runs calls of this kind. */
bool bench_algo_runs(size_t i, trd_collective kind);
/* Drops from a->algos the algorithms that cannot run on a->p ranks (their
 * plan refuses p: star and star-reduce-bcast need p = n!), saying so on
 * stderr when `say`. */
void bench_drop_unfit(bench_args *a, bool say);
/* Series in the whole run: the algorithms of each kind and auto for every
 * operator, and a baseline for baseline_ops of them. */
int64_t bench_series_total(const bench_args *a, size_t baseline_ops);

/* ---- bench_rank.c ---- */
/* Every point of a, on this rank; sets br->status and br->error. */
void bench_rank_main(bench_rank *br);
/* Times one series over every rank (collective): a warm-up call that sets
 * the repetitions (adaptive), then the repetitions; checks the result
 * against c->expected on every rank that gets one; rank 0 records it. */
trd_status bench_measure(bench_rank *br, const bench_runner *run, const bench_case *c,
                         const bench_point *series);
/* Repetitions for a series whose warm-up call took `pilot` seconds. */
int64_t bench_iters(const bench_args *a, double pilot);
/* Rank 0: appends a point; false when out of memory. */
bool bench_record(bench_rank *br, const bench_point *pt);
/* Records why this rank stopped (status and trd_errmsg or text). */
trd_status bench_fail(bench_rank *br, trd_status st, const char *what);
void bench_progress(bench_rank *br, const bench_point *pt);

/* ---- wires ---- */
int bench_threads(const bench_args *a);
int bench_mpi(bench_args *a);

/* ---- bench_report.c / bench_plot.c (rank 0) ---- */
int bench_report(const bench_args *a, const bench_table *t);
bool bench_plots(const bench_args *a, const bench_table *t);
/* The baseline's name in this run: "mpi" on a launched wire (bench_mpi.c),
 * "bound" on threads (bench_threads.c). */
const char *bench_baseline_name(const bench_args *a);
/* The point of series algo at (op, kind, bytes), or NULL. */
const bench_point *bench_find(const bench_table *t, size_t op, trd_collective kind,
                              int64_t bytes, const char *algo);
/* The baseline's value used for ratios: MPI's median, the bound's min. */
double bench_baseline_value(const bench_point *b);

#endif

/* run.h: `treduce run`, split by part: cmd_run.c (arguments), run_rank.c
 * (what every rank does: data, calibration, timed calls, check),
 * run_threads.c and run_mpi.c (the two wires), run_report.c. */
#ifndef TRD_TOOLS_RUN_H
#define TRD_TOOLS_RUN_H

#include "cli.h"

/* The most timed (and untimed) iterations: p * iters times are kept. */
#define RUN_ITERS_MAX 1000000

typedef struct cli_run_args {
    const char *algo, *wire, *type, *op, *profile_path, *costs_path;
    trd_profile profile;
    trd_profile_meta profile_meta; /* what the profile was measured on */
    trd_costs *costs; /* --costs FILE, read once per process (cmd_run.c) */
    bool explain, reproducible;
    int64_t p, count, root, segment, iters, warmup, K, dead_rank, tune;
    double d, c, latency, flight, parallelism, timeout, delay_us, op_cost_us;
    cli_kind kind; /* --kind; count is a reduce-scatter's part (the input: p parts) */
    int64_t *parts, nparts; /* --parts: a reduce-scatter's count of each rank's part
                               (count then their largest); NULL: count each */
    bool count_set, model_set, json;
} cli_run_args;

/* What one rank found; rank 0's copy is reported, with the times of every
 * iteration made the slowest rank's. */
typedef struct cli_run_result {
    trd_status status;
    char error[512];
    double *times;        /* iters entries, seconds */
    bool verified;        /* this rank's result equals the fold (or it gets none) */
    double predicted;     /* seconds */
    trd_coll_opts model;  /* the cost model used (d, c, latency) and the
                             algorithm run (auto's choice) */
    trd_candidate candidates[64]; /* --algo auto: what it considered */
    size_t ncandidates;
    size_t shm_max;       /* trd_comm_shm_max after the timed calls: the rings'
                             limit they ran with (tuned auto may change it) */
    bool everywhere;      /* refused on every rank alike (rank 0 alone says it) */
    int32_t nodes;        /* how many nodes the ranks are on (trd_comm_node); 0:
                             not known */
} cli_run_result;

/* An operator for a->op and a->type (checker operators ignore the type). */
trd_status cli_run_make_op(const cli_run_args *a, trd_op **op);
/* CLI_OK if --op `name` is one the tool takes; else a usage error listing
 * them all: the built-in ones, the checkers, the costly ones. */
int cli_run_check_op(const char *cmd, const char *name);
/* What the elements of a->op are: the checker's own type (matrix2x2,
 * interval), double for the costly sums, else a->type. */
const char *cli_run_elem_name(const cli_run_args *a);
/* Rank `rank` of comm: everything but the report.  res->times must hold
 * a->iters entries. */
void cli_run_rank(const cli_run_args *a, trd_comm *comm, const trd_op *op,
                  cli_run_result *res);
/* Prints rank 0's result (text or JSON); returns the exit status. */
int cli_run_report(const cli_run_args *a, int64_t p, const cli_run_result *res);

int cli_run_threads(const cli_run_args *a);
/* The threads run without the report: out->times (a->iters entries,
 * allocated by the caller) and the rest of rank 0's merged result.  The
 * status is the set-up's; the run's own is out->status. */
trd_status cli_run_threads_collect(const cli_run_args *a, cli_run_result *out);
/* What a rank of a threads run holds besides its buffers (its thread's
 * stack as far as it is touched, its communicator and wire: ~50 KB at p =
 * 4096 on this machine), counted with margin. */
#define RUN_RANK_BYTES (128.0 * 1024.0)
/* CLI_FAILED when `ranks` ranks of a run of p on this machine need more
 * than 80 % of its memory for their buffers (and, over threads, their
 * threads and communicators), the message in why[0..size), or on stderr
 * when why is NULL; else CLI_OK. */
int cli_run_check_memory(const cli_run_args *a, int64_t ranks, int64_t p, bool threads,
                         char *why, size_t size);
/* The defaults of `treduce run`. */
void cli_run_args_init(cli_run_args *a);
/* The run of this process's rank of a launched wire (MPI) and, on rank 0,
 * the report. */
int cli_run_mpi(const cli_run_args *a, const trd_wire_info *wire);

#endif

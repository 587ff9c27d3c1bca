/* cli.h: what every treduce sub-command shares: strict number parsing,
 * usage errors (exit status 2), library errors, and a progress bar. */
#ifndef TRD_TOOLS_CLI_H
#define TRD_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "treduce/treduce.h"

struct json_t;

/* Exit statuses of the tool. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Parses a whole decimal integer / finite real; on failure prints
 * "treduce <cmd>: invalid <what> 'text': ..." and returns false. */
bool cli_int(const char *cmd, const char *what, const char *text, int64_t *out);
bool cli_real(const char *cmd, const char *what, const char *text, double *out);

/* The message of a failed library call: trd_errmsg(), or the status's
 * own text when there is none (an error line never ends empty). */
const char *cli_errmsg(trd_status status);

/* Every number the tool prints is finite.  Inputs whose results would
 * overflow a double are refused up front (the library's checks, exit 2);
 * a value that still comes out infinite or NaN is reported, never printed
 * as inf or nan: JSON gets null there and an "error" member, text mode
 * prints no result, and the exit status is 1 (docs/CLI.md).  A report
 * records its values through a cli_finite. */
typedef struct cli_finite {
    const char *name; /* the first value that is not finite; NULL: none */
    double value;
} cli_finite;
/* Whether v is finite; if not, records name (the first one only). */
bool cli_finite_check(cli_finite *f, const char *name, double v);
/* A JSON real, or JSON null when v is not finite (recorded in f). */
struct json_t *cli_json_real(cli_finite *f, const char *name, double v);
/* The end of a report: when f recorded a value, says so on stderr and in
 * obj's "error" member (obj may be NULL) and returns CLI_FAILED; else
 * CLI_OK. */
int cli_finite_end(const char *cmd, const cli_finite *f, struct json_t *obj);

/* The wire called name (--wire / --transport, tools/cli_wire.c) in *out,
 * else a usage error listing the wires. */
int cli_wire(const char *cmd, const char *name, const trd_wire_info **out);
/* For a wire that is not launched, 1 <= p <= its most; else a usage error. */
int cli_wire_ranks(const char *cmd, const trd_wire_info *wire, int64_t p);
/* The registry's row of comm's wire: what a command asks of a rank's wire
 * (launched or not, what its ranks are), never its name. */
const trd_wire_info *cli_comm_wire(const trd_comm *comm);
/* Prints "treduce <cmd>: <message>" and a hint to --help; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Reports a failed library call with trd_errmsg(); bad-input statuses are
 * usage errors (2), the rest failures (1). */
int cli_lib_error(const char *cmd, trd_status status);
/* The exit status cli_lib_error gives a status, without a message. */
int cli_lib_error_status(trd_status status);

struct option;
/* The option loop of a sub-command: getopt_long over argv with opts (and
 * -p, -h) hands each option to take(opt, ctx); an unknown option, a
 * missing value or a stray argument is a usage error naming it.  Returns
 * -1 after --help (help printed), else CLI_OK or take's failing status. */
int cli_parse_options(const char *cmd, int argc, char **argv, const struct option *opts,
                      void (*help)(void), int (*take)(int opt, void *ctx), void *ctx);
/* The same with other short options than "p:h" (getopt's syntax; -h is
 * help, and must be among them). */
int cli_parse_options_short(const char *cmd, const char *shortopts, int argc, char **argv,
                            const struct option *opts, void (*help)(void),
                            int (*take)(int opt, void *ctx), void *ctx);

/* Rank r's input at element i for operator op: small integers, so that
 * sums and products are exact in float and double whatever the combine
 * order (docs/RUNTIME.md); `treduce run` and `treduce bench` reduce them
 * (tools/cli_values.c). */
int64_t cli_run_value(const char *op, int64_t r, int64_t i);

/* The collective a command plans, simulates or runs (tools/cli_kind.c):
 * --kind NAME, with --allreduce its older spelling of --kind allreduce. */
typedef struct cli_kind {
    trd_collective coll; /* TRD_COLL_REDUCE unless given */
    bool set;            /* --kind or --allreduce was given */
    bool root_set;       /* --root was given */
} cli_kind;
/* Takes --kind name into k: a name trd_collective_parse does not know, or
 * a second kind other than the first, is a usage error (naming the valid
 * ones). */
int cli_take_kind(const char *cmd, const char *name, cli_kind *k);
/* A --root given for a collective that has none (reduce-scatter, scan,
 * exscan; an allreduce too unless tree_root: a plan's allreduce reduces
 * to its root and broadcasts from it) is a usage error: the user meant
 * something the command would not do. */
int cli_kind_root(const char *cmd, const cli_kind *k, bool tree_root);
/* The first collective registry algorithm `algo` runs (trd_algo_runs). */
trd_collective cli_algo_first_kind(size_t algo);
/* Elements of each rank's input for a call of count: p parts of count for
 * a reduce-scatter (count is the part each rank gets), else count; also
 * the count trd_comm_predict and trd_comm_explain take. */
int64_t cli_kind_input(trd_collective kind, int64_t count, int64_t p);
/* The library call of kind: trd_reduce (to root), trd_allreduce,
 * trd_reduce_scatter_block, trd_scan or trd_exscan, count as for
 * cli_kind_input. */
trd_status cli_kind_call(trd_comm *comm, trd_collective kind, const void *in, void *out,
                         int64_t count, const trd_op *op, int32_t root, const trd_coll_opts *o);
/* What rank `rank` of p gets from a call of kind: whether it gets a
 * result, and that result's definition, independent of any algorithm:
 * the rank-order fold of ranks 0 .. ranks-1's inputs, elements offset ..
 * offset+count of each (its part, for a reduce-scatter). */
typedef struct cli_kind_result {
    bool gets;
    int64_t ranks, offset;
} cli_kind_result;
cli_kind_result cli_kind_result_of(trd_collective kind, int64_t rank, int64_t p, int64_t count,
                                   int64_t root);

/* Sorts v[0..n) ascending (medians of timings). */
void cli_sort(double *v, size_t n);

/* An output file, written whole or not at all (tools/cli_output.c): into
 * a temporary beside it (same folder and extension) that cli_out_end
 * renames over it once complete, or removes on failure; SIGINT, SIGTERM
 * and SIGHUP remove it too, so an interrupted command leaves the earlier
 * file intact and no temporary.  A path that exists and is not a regular
 * file (/dev/stdout, a pipe, a symbolic link) is written in place.  Every
 * command that writes a file goes through it. */
typedef struct cli_out {
    char path[4096]; /* the file, dir/name */
    char tmp[4096];  /* where to write it until cli_out_end */
    FILE *f;         /* cli_out_open's stream on tmp */
    int slot;        /* internal */
} cli_out;
/* Begins dir/name (dir NULL: name alone) for a writer that takes a path:
 * give it o->tmp.  false (the error printed) on failure. */
bool cli_out_begin(const char *cmd, cli_out *o, const char *dir, const char *name);
/* cli_out_begin and a stream on o->tmp (also in o->f); NULL on failure. */
FILE *cli_out_open(const char *cmd, cli_out *o, const char *dir, const char *name);
/* Ends o: when ok, closes its stream and renames the temporary over the
 * file (a failure printed "treduce <cmd>: cannot write <path>: why");
 * else, or on such a failure, removes the temporary.  Whether the file
 * now holds the new content. */
bool cli_out_end(const char *cmd, cli_out *o, bool ok);
/* Ends o with the status of the library call that wrote o->tmp: TRD_OK
 * keeps it (CLI_OK, or CLI_FAILED if the rename fails); an error removes
 * it and is reported as cli_lib_error does, naming o->path where the
 * message names the temporary.  Returns the exit status. */
int cli_out_finish(const char *cmd, cli_out *o, trd_status st);

/* Creates folder dir if missing; prints why and returns false on failure. */
bool cli_make_dir(const char *cmd, const char *dir);

/* Progress of a long run on stderr, `done` of `total` `unit`s (e.g.
 * "runs"), with the time left at the pace so far: on a terminal a bar
 * redrawn as it moves; elsewhere (a log, a pipe) a line every
 * TREDUCE_PROGRESS seconds (default 5: a shorter run prints none),
 * "treduce LABEL: 45% (180000/400000 runs), about 12 s left".  A new
 * task starts whenever total changes or done goes back. */
void cli_progress(const char *label, const char *unit, int64_t done, int64_t total);
/* Reads TREDUCE_PROGRESS (seconds > 0 between lines, or "off"): CLI_OK,
 * or a usage error naming the value. */
int cli_progress_init(void);

/* Sub-commands (commands.def). */
#define CLI_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef CLI_COMMAND

/* An MPI communicator's shared-memory rings (tools/shm_report.c): their
 * limit (trd_comm_shm_max, 0: none) and the creation's probe that chose it
 * where every rank has a core (trd_comm_shm_probe). */
typedef struct cli_shm {
    size_t max;
    bool probed;
    double rings_s, mpi_s;
} cli_shm;
cli_shm cli_shm_of(const trd_comm *comm);
/* {"rings": us, "mpi": us}, or JSON null when nothing was probed. */
struct json_t *cli_shm_probe_json(const cli_shm *s);
/* Two lines naming the probe's times and the path kept (none if not probed). */
void cli_shm_probe_print(const cli_shm *s, const char *indent);

/* `treduce steady --simulate OPS` and `--run OPS` (tools/steady_series.c):
 * OPS reductions of the series solved in st (on pf) simulated with the
 * platform's costs, or run on threads (one per node) with verified
 * results.  json non-NULL: the figures go into that object under
 * "simulated" / "run"; else a text summary on stdout.  Return an exit
 * status (errors printed). */
struct trd_platform;
struct trd_steady;
int steady_series_simulate(const struct trd_platform *pf, const struct trd_steady *st,
                           int64_t ops, struct json_t *json);
int steady_series_run(const struct trd_platform *pf, const struct trd_steady *st, int64_t ops,
                      struct json_t *json);

#endif

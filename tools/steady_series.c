/* steady_series.c: `treduce steady --simulate OPS` and `--run OPS`: the
 * periodic schedule of a solved series of reduces (one plan of OPS
 * operations, include/treduce/steady_series.h) simulated with the
 * platform's costs, or run for real on the threads wire - one thread
 * per platform node, routers forwarding - with real data: each
 * participant's value of each operation a 2x2 matrix (the non-commutative
 * checker operator of docs/OPERATORS.md), every result at the target
 * compared with the sequential fold in participant order.  Both print next
 * to the LP's throughput TP.  Outputs: docs/STEADY.md. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "steady_series.h"

static const char *const cmd = "steady";

static int no_memory(void)
{
    fprintf(stderr, "treduce %s: out of memory\n", cmd);
    return CLI_FAILED;
}

/* Sets key in json to value (owned), or fails the command. */
static int put(json_t *json, const char *key, json_t *value)
{
    if (!value || json_object_set_new(json, key, value) != 0) {
        fprintf(stderr, "treduce %s: cannot build the JSON output\n", cmd);
        return CLI_FAILED;
    }
    return CLI_OK;
}

int steady_series_simulate(const trd_platform *pf, const trd_steady *st, int64_t ops,
                           json_t *json)
{
    trd_steady_series_stats s;
    trd_status r = trd_steady_series_simulate(st, pf, ops, &s);
    if (r != TRD_OK)
        return cli_lib_error(cmd, r);
    cli_finite f = {0};
    json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:i}", "ops", (json_int_t)s.ops,
                          "makespan", cli_json_real(&f, "makespan", s.makespan), "throughput",
                          cli_json_real(&f, "throughput", s.throughput), "steady_throughput",
                          cli_json_real(&f, "steady_throughput", s.steady_throughput),
                          "ratio_to_tp", cli_json_real(&f, "ratio_to_tp", s.ratio_to_tp),
                          "period", cli_json_real(&f, "period", s.period), "period_ops",
                          (json_int_t)s.period_ops, "depth", (int)s.depth);
    int rc = cli_finite_end(cmd, &f, json);
    if (json) {
        int put_rc = put(json, "simulated", o);
        return rc != CLI_OK ? rc : put_rc;
    }
    json_decref(o);
    if (rc != CLI_OK || !cli_finite_check(&f, "TP", s.tp))
        return rc != CLI_OK ? rc : cli_finite_end(cmd, &f, NULL);
    printf("simulated %lld operations: makespan %g, %g per time unit overall, %g in the "
           "steady state = %.4f x TP (TP = %g)\n"
           "  schedule: %lld operations enter per period of %g; an operation spans %d "
           "periods (initialisation and clean-up: %d periods each)\n",
           (long long)s.ops, s.makespan, s.throughput, s.steady_throughput, s.ratio_to_tp, s.tp,
           (long long)s.period_ops, s.period, (int)s.depth, (int)s.depth - 1);
    return CLI_OK;
}

/* One platform node's part of the real run. */
typedef struct series_rank {
    const trd_plan *plan;
    const trd_op *op;
    trd_matrix2x2 *buf; /* its slot 0: its values, at the target the results */
    int64_t count;
    trd_status status;
    char error[256];
    double seconds;
} series_rank;

/* Errors stay in the rank's record (collect reports them). */
static trd_status run_rank(trd_comm *comm, void *ctx)
{
    series_rank *r = (series_rank *)ctx + trd_comm_rank(comm);
    r->status = trd_comm_barrier(comm);
    double t0 = trd_comm_now(comm);
    if (r->status == TRD_OK)
        r->status = trd_comm_run_plan(comm, r->plan, r->buf, r->count, r->op);
    r->seconds = trd_comm_now(comm) - t0;
    if (r->status != TRD_OK)
        snprintf(r->error, sizeof r->error, "%s", trd_errmsg());
    return TRD_OK;
}

trd_matrix2x2 *steady_series_inputs(const trd_steady *st, int32_t node, int64_t count)
{
    trd_matrix2x2 *buf = calloc((size_t)count, sizeof *buf);
    for (int32_t k = 0; buf && k < trd_steady_series_participants(st); k++)
        if (trd_steady_series_node(st, k) == node)
            trd_matrix2x2_fill(buf, count, k);
    return buf;
}

/* Node i's values: participant k's matrices (one per operation), zeros
 * for a node that takes no part; false when out of memory. */
static bool fill_inputs(const trd_steady *st, series_rank *ranks, int32_t n, int64_t ops)
{
    for (int32_t i = 0; i < n; i++)
        if (!(ranks[i].buf = steady_series_inputs(st, i, ops)))
            return false;
    return true;
}

int64_t steady_series_wrong(const trd_steady *st, const trd_op *op, const trd_matrix2x2 *got,
                            int64_t ops, int64_t per_op)
{
    size_t count = (size_t)(ops * per_op);
    trd_matrix2x2 *acc = malloc(count * sizeof *acc), *in = malloc(count * sizeof *in);
    int64_t wrong = acc && in ? 0 : -1;
    if (wrong == 0)
        trd_matrix2x2_fill(acc, (int64_t)count, 0);
    for (int32_t k = 1; wrong == 0 && k < trd_steady_series_participants(st); k++)
        if (trd_matrix2x2_fill(in, (int64_t)count, k) != TRD_OK ||
            trd_op_combine(op, TRD_SIDE_RIGHT, acc, in, (int64_t)count) != TRD_OK)
            wrong = -1;
    for (int64_t b = 0; wrong >= 0 && b < ops; b++) /* operation b: block b */
        wrong += memcmp(&acc[b * per_op], &got[b * per_op], (size_t)per_op * sizeof *acc) != 0;
    free(acc);
    free(in);
    return wrong;
}

/* The slowest node's time, or the first failure (printed). */
static int collect(const series_rank *ranks, int32_t n, double *seconds)
{
    *seconds = 0;
    for (int32_t i = 0; i < n; i++) {
        if (ranks[i].status != TRD_OK) {
            fprintf(stderr, "treduce %s: node %ld: %s\n", cmd, (long)i, ranks[i].error);
            return CLI_FAILED;
        }
        *seconds = ranks[i].seconds > *seconds ? ranks[i].seconds : *seconds;
    }
    return CLI_OK;
}

static int report_run(const trd_steady *st, int64_t ops, double seconds, int64_t wrong,
                      json_t *json)
{
    if (wrong != 0)
        fprintf(stderr, "treduce %s: %lld of %lld results differ from the fold in "
                "participant order\n", cmd, (long long)wrong, (long long)ops);
    int rc = wrong == 0 ? CLI_OK : CLI_FAILED;
    cli_finite f = {0};
    json_t *o = json_pack("{s:I, s:f, s:o, s:b, s:s, s:s}", "ops", (json_int_t)ops, "seconds",
                          seconds, "ops_per_second",
                          cli_json_real(&f, "ops_per_second", (double)ops / seconds),
                          "verified", wrong == 0, "wire", "threads", "transport", "threads");
    int finite = cli_finite_end(cmd, &f, json);
    if (json) {
        int put_rc = put(json, "run", o);
        return rc != CLI_OK ? rc : finite != CLI_OK ? finite : put_rc;
    }
    json_decref(o);
    if (finite != CLI_OK)
        return finite;
    printf("ran %lld operations on threads (one per node): %.6f s, %.0f operations per second "
           "(TP = %s per time unit of the model), results %s\n",
           (long long)ops, seconds, (double)ops / seconds, trd_steady_throughput(st),
           wrong == 0 ? "verified" : "WRONG");
    return rc;
}

int steady_series_run(const trd_platform *pf, const trd_steady *st, int64_t ops, json_t *json)
{
    trd_plan *plan = NULL;
    trd_op *op = NULL;
    int32_t n = trd_platform_node_count(pf);
    series_rank *ranks = calloc((size_t)n + 1, sizeof *ranks);
    if (!ranks)
        return no_memory();
    trd_status r = trd_steady_series_plan(st, pf, ops, &plan);
    if (r == TRD_OK)
        r = trd_op_matrix2x2(&op);
    int rc = r != TRD_OK ? cli_lib_error(cmd, r) : fill_inputs(st, ranks, n, ops) ? CLI_OK
                                                                                  : no_memory();
    for (int32_t i = 0; rc == CLI_OK && i < n; i++)
        ranks[i] = (series_rank){.plan = plan, .op = op, .buf = ranks[i].buf, .count = ops};
    if (rc == CLI_OK && (r = trd_comm_threads_run(n, NULL, run_rank, ranks)) != TRD_OK)
        rc = cli_lib_error(cmd, r);
    double seconds = 0;
    if (rc == CLI_OK)
        rc = collect(ranks, n, &seconds);
    if (rc == CLI_OK) {
        int64_t wrong = steady_series_wrong(st, op, ranks[trd_plan_result_rank(plan)].buf, ops, 1);
        rc = wrong < 0 ? no_memory() : report_run(st, ops, seconds, wrong, json);
    }
    for (int32_t i = 0; i < n; i++)
        free(ranks[i].buf);
    free(ranks);
    trd_op_free(op);
    trd_plan_free(plan);
    return rc;
}

/* run_rank.c: what every rank of `treduce run` does. */
#include "costly_op.h"
#include "run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checker operators (docs/OPERATORS.md) and what their elements are. */
static const struct {
    const char *op, *elem;
} checkers[] = {{"matrix", "matrix2x2"}, {"interval", "interval"}};

int cli_run_check_op(const char *cmd, const char *name)
{
    trd_op_kind kind;
    if (trd_op_parse(name, &kind) == TRD_OK || cli_costly_name(name))
        return CLI_OK;
    for (size_t i = 0; i < sizeof checkers / sizeof checkers[0]; i++)
        if (!strcmp(name, checkers[i].op))
            return CLI_OK;
    fprintf(stderr, "treduce %s: unknown operator '%s'; valid names:", cmd, name);
    for (int k = 0; k < TRD_OP_KIND_COUNT; k++)
        fprintf(stderr, " %s,", trd_op_kind_name((trd_op_kind)k));
    for (size_t i = 0; i < sizeof checkers / sizeof checkers[0]; i++)
        fprintf(stderr, " %s (checker),", checkers[i].op);
    fprintf(stderr, " sleep-sum, spin-sum (costly, with --op-cost)\n(see 'treduce %s --help')\n",
            cmd);
    return CLI_USAGE;
}

const char *cli_run_elem_name(const cli_run_args *a)
{
    for (size_t i = 0; i < sizeof checkers / sizeof checkers[0]; i++)
        if (!strcmp(a->op, checkers[i].op))
            return checkers[i].elem;
    return cli_costly_name(a->op) ? "double" : a->type; /* costly: sums of doubles */
}

trd_status cli_run_make_op(const cli_run_args *a, trd_op **op)
{
    trd_type type;
    trd_op_kind kind;
    trd_status st;
    if (!strcmp(a->op, "matrix"))
        return trd_op_matrix2x2(op);
    if (!strcmp(a->op, "interval"))
        return trd_op_interval(op);
    if (cli_costly_name(a->op))
        return cli_costly_op(a->op, a->op_cost_us, op);
    if ((st = trd_type_parse(a->type, &type)) != TRD_OK || (st = trd_op_parse(a->op, &kind)) != TRD_OK)
        return st;
    return trd_op_builtin(op, kind, type);
}

/* Rank r's input: n elements (a reduce-scatter's p parts). */
static void fill(const cli_run_args *a, int64_t r, void *buf, int64_t n)
{
    trd_type type = TRD_DOUBLE;
    if (!strcmp(a->op, "matrix")) {
        trd_matrix2x2_fill(buf, n, r);
        return;
    }
    if (!strcmp(a->op, "interval")) {
        trd_interval_fill(buf, n, r);
        return;
    }
    if (!cli_costly_name(a->op))
        trd_type_parse(a->type, &type);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = cli_run_value(a->op, r, i);
        switch (type) {
        case TRD_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
        case TRD_INT64: ((int64_t *)buf)[i] = v; break;
        case TRD_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
        case TRD_FLOAT: ((float *)buf)[i] = (float)v; break;
        default: ((double *)buf)[i] = (double)v; break;
        }
    }
}

/* What the output buffer holds before the calls: a rank that gets no
 * result of an exscan (rank 0) must find it there after them. */
#define SENTINEL 0xA5

static bool untouched(const unsigned char *buf, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != SENTINEL)
            return false;
    return true;
}

/* Elements of rank r's part of a reduce-scatter (count unless --parts)
 * and where it starts in the input. */
static int64_t part_of(const cli_run_args *a, int64_t r)
{
    return a->parts ? a->parts[r] : a->count;
}

static int64_t part_start(const cli_run_args *a, int64_t r)
{
    int64_t at = 0;
    for (int64_t k = 0; a->parts && k < r; k++)
        at += a->parts[k];
    return a->parts ? at : r * a->count;
}

/* Every rank's input, in elements. */
static int64_t input_of(const cli_run_args *a, int64_t p)
{
    return a->parts ? part_start(a, a->nparts) : cli_kind_input(a->kind.coll, a->count, p);
}

/* Whether rank r's result `got` is what its collective defines
 * (cli_kind_result_of): the sequential rank-order fold of the inputs of
 * ranks 0 .. want.ranks-1, each filled here again, over its part of
 * them; a rank that gets none passes, but rank 0 of an exscan, whose
 * buffer must be as it was. */
static bool check(const cli_run_args *a, const trd_op *op, int64_t p, int64_t r,
                  const unsigned char *got)
{
    cli_kind_result want = cli_kind_result_of(a->kind.coll, r, p, a->count, a->root);
    int64_t count = a->kind.coll == TRD_COLL_REDUCE_SCATTER ? part_of(a, r) : a->count;
    size_t elem = trd_op_elem_size(op), bytes = (size_t)count * elem;
    if (!want.gets)
        return a->kind.coll != TRD_COLL_EXSCAN || untouched(got, bytes);
    int64_t n = input_of(a, p);
    if (a->kind.coll == TRD_COLL_REDUCE_SCATTER)
        want.offset = part_start(a, r);
    size_t at = (size_t)want.offset * elem;
    unsigned char *acc = malloc((size_t)n * elem + 1), *in = malloc((size_t)n * elem + 1);
    bool ok = acc && in;
    if (ok) {
        fill(a, 0, acc, n);
        for (int64_t k = 1; k < want.ranks && ok; k++) {
            fill(a, k, in, n);
            ok = trd_op_combine(op, TRD_SIDE_RIGHT, acc + at, in + at, count) == TRD_OK;
        }
        ok = ok && (bytes == 0 || memcmp(acc + at, got, bytes) == 0);
    }
    free(acc);
    free(in);
    return ok;
}

static trd_status fail(cli_run_result *res, trd_status st)
{
    res->status = st;
    snprintf(res->error, sizeof res->error, "%s", cli_errmsg(st));
    return st;
}

/* A failure of this tool's own (no library message to copy). */
static void refuse(cli_run_result *res, trd_status st, const char *why, long long value)
{
    res->status = st;
    snprintf(res->error, sizeof res->error, why, value);
}

/* The count the model takes: a reduce-scatter's whole input (of uneven
 * parts: rounded up to p equal ones, which the model prices, as the MPI
 * layer does). */
static int64_t model_count(const cli_run_args *a, const trd_comm *comm)
{
    int64_t p = trd_comm_size(comm), n = input_of(a, p);
    return a->parts ? (n + p - 1) / p * p : n;
}

/* The timed call: --parts' reduce-scatter, or the kind's (cli_kind_call). */
static trd_status call(const cli_run_args *a, trd_comm *comm, const void *in, void *out,
                       const trd_op *op, const trd_coll_opts *o)
{
    if (a->parts)
        return trd_reduce_scatter(comm, in, out, a->parts, op, o);
    return cli_kind_call(comm, a->kind.coll, in, out, a->count, op, (int32_t)a->root, o);
}

/* Whether auto times its candidates in the first calls (--tune). */
static bool tuning(const cli_run_args *a)
{
    return a->tune > 0 && !a->reproducible && !strcmp(a->algo, "auto");
}

/* auto's choice (the same on every rank) and its candidates: the model's
 * ranking, or after the tuning calls the timed choice first. */
static trd_status choose(const cli_run_args *a, trd_comm *comm, const trd_op *op,
                         cli_run_result *res)
{
    trd_coll_opts *o = &res->model;
    o->algo = "auto";
    trd_status st = trd_comm_explain(comm, model_count(a, comm), op, (int32_t)a->root,
                                     a->kind.coll, o, res->candidates, &res->ncandidates);
    if (st == TRD_OK)
        o->algo = res->candidates[0].algo;
    return st;
}

/* The cost model (measured unless given) and the prediction; with
 * --tune, auto's choice and its prediction come after the tuning calls. */
static trd_status prepare(const cli_run_args *a, trd_comm *comm, const trd_op *op,
                          cli_run_result *res)
{
    trd_coll_opts *o = &res->model;
    trd_coll_opts_init(o);
    o->algo = a->algo;
    o->K = a->K;
    o->segment_bytes = a->segment;
    o->reproducible = a->reproducible;
    o->tune = (int32_t)a->tune;
    trd_status st = TRD_OK;
    if (a->costs) { /* planned for and predicted under them */
        o->costs = a->costs;
        trd_costs_mean(a->costs, &o->d, &o->c);
        o->measure_model = false;
    } else if (a->model_set) {
        o->d = a->d;
        o->c = a->c;
        o->latency = a->latency;
        o->flight = a->flight;
        o->parallelism = a->parallelism;
        o->measure_model = false; /* the model given */
    } else if (a->profile_path) {
        st = trd_profile_apply(&a->profile, a->count, trd_op_elem_size(op), o);
    } else {
        st = trd_comm_calibrate(comm, op, a->count, o);
    }
    if (st == TRD_OK && !strcmp(a->algo, "auto") && !tuning(a))
        st = choose(a, comm, op, res);
    if (st == TRD_OK && !tuning(a) && trd_comm_rank(comm) == 0) /* rank 0 reports it */
        st = trd_comm_predict(comm, model_count(a, comm), op, (int32_t)a->root, a->kind.coll, o,
                              &res->predicted);
    return st;
}

/* Rank 0 alone predicts (a plan of p ranks on each of p threads was p^2):
 * when it refuses the arguments, the others learn it here, one agreement
 * of the communicator's, instead of waiting for it at their deadline
 * (*refused then, res saying so). */
static trd_status agree_prepared(trd_comm *comm, trd_status st, cli_run_result *res,
                                 bool *refused)
{
    double failed = st != TRD_OK;
    trd_status agreed = trd_comm_agree_max(comm, &failed, &failed, 1);
    *refused = st == TRD_OK && agreed == TRD_OK && failed != 0;
    if (*refused)
        refuse(res, TRD_EINVAL, "rank %lld refused the run's arguments (its message says why)",
               0);
    return st != TRD_OK ? st : agreed != TRD_OK ? agreed : *refused ? TRD_EINVAL : TRD_OK;
}

void cli_run_rank(const cli_run_args *a, trd_comm *comm, const trd_op *op, cli_run_result *res)
{
    int64_t p = trd_comm_size(comm), r = trd_comm_rank(comm);
    size_t elem = trd_op_elem_size(op), bytes = (size_t)a->count * elem; /* cmd_run.c checked */
    size_t in_bytes = (size_t)input_of(a, p) * elem;
    unsigned char *in = malloc(in_bytes + 1), *out = malloc(bytes + 1);
    res->verified = false;
    if (!in || !out)
        refuse(res, TRD_ENOMEM, "out of memory for two buffers of %lld bytes",
               (long long)in_bytes);
    else if (a->dead_rank >= p)
        refuse(res, TRD_EINVAL, "invalid --dead-rank %lld: not a rank of this run",
               (long long)a->dead_rank);
    else if (a->parts && a->nparts != p)
        refuse(res, TRD_EINVAL, "--parts gives a part to each of %lld ranks, not to this "
               "run's", (long long)a->nparts);
    if (res->status != TRD_OK) {
        free(in);
        free(out);
        return;
    }
    fill(a, r, in, input_of(a, p));
    memset(out, SENTINEL, bytes);
    bool refused = false;
    trd_status st = agree_prepared(comm, prepare(a, comm, op, res), res, &refused);
    /* the tuning calls are untimed warm-ups: they run auto's candidates */
    int64_t warmup = a->warmup + (tuning(a) ? (a->tune + 1) * TRD_TUNE_CALLS : 0);
    for (int64_t k = 0; st == TRD_OK && k < warmup + a->iters; k++) {
        if ((st = trd_comm_barrier(comm)) != TRD_OK)
            break;
        if (k == warmup && r == a->dead_rank && cli_comm_wire(comm)->launched) {
            fprintf(stderr, "treduce run: rank %lld kills itself (--dead-rank)\n", (long long)r);
            raise(SIGKILL); /* a rank that is a process: killed mid-run (threads: the hook) */
        }
        double t0 = trd_comm_now(comm);
        st = call(a, comm, in, out, op, &res->model);
        if (k >= warmup)
            res->times[k - warmup] = trd_comm_now(comm) - t0;
    }
    if (st == TRD_OK && tuning(a))
        st = choose(a, comm, op, res);
    if (st == TRD_OK && tuning(a) && r == 0)
        st = trd_comm_predict(comm, model_count(a, comm), op, (int32_t)a->root, a->kind.coll,
                              &res->model, &res->predicted);
    res->shm_max = trd_comm_shm_max(comm);
    if (st == TRD_OK)
        res->verified = check(a, op, p, r, out);
    else if (!refused)
        fail(res, st);
    free(in);
    free(out);
}

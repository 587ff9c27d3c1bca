/* bench_rank.c: what every rank of `treduce bench` does.  For each
 * operator, the platform's profile is measured once (trd_comm_profile);
 * for each size and kind, every series - auto, the wire's baseline,
 * each eligible algorithm - is timed the same way: one warm-up call whose
 * time sets the repetitions, then repetitions of barrier, time, call,
 * time; a repetition's time is the slowest rank's.  The result of the last
 * repetition is checked against the rank-order fold on every rank that
 * gets one. */
#include "bench_harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POINT_SECONDS 0.2 /* adaptive repetitions: about this long a point */
#define ITERS_MIN 5
#define ITERS_MAX 200

trd_status bench_fail(bench_rank *br, trd_status st, const char *what)
{
    if (br->status == TRD_OK) {
        br->status = st;
        snprintf(br->error, sizeof br->error, "%s: %s", what, trd_errmsg());
    }
    return st;
}

int64_t bench_iters(const bench_args *a, double pilot)
{
    if (a->iters > 0)
        return a->iters;
    double n = pilot > 0 ? ceil(POINT_SECONDS / pilot) : ITERS_MAX;
    return n < ITERS_MIN ? ITERS_MIN : n > ITERS_MAX ? ITERS_MAX : (int64_t)n;
}

bool bench_record(bench_rank *br, const bench_point *pt)
{
    bench_table *t = br->table;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        bench_point *grown = realloc(t->pt, cap * sizeof *grown);
        if (!grown)
            return false;
        t->pt = grown;
        t->cap = cap;
    }
    t->pt[t->n++] = *pt;
    return true;
}

/* One line per series on a terminal: a long run shows where it is;
 * elsewhere cli_progress's line every few seconds. */
void bench_progress(bench_rank *br, const bench_point *pt)
{
    char size[32];
    br->done++;
    if (!br->table)
        return;
    if (!isatty(STDERR_FILENO)) {
        cli_progress("bench", "series", br->done, br->total);
        return;
    }
    fprintf(stderr, "treduce bench: [%lld/%lld] %s %s %s %s%s%s: %.1f us\n",
            (long long)br->done, (long long)br->total,
            trd_collective_name(pt->kind), br->a->ops[pt->op],
            bench_size_text(pt->bytes, size, sizeof size), pt->algo,
            pt->chosen ? " -> " : "", pt->chosen ? pt->chosen : "", 1e6 * pt->median);
}

/* out = the maximum of v over all ranks (n values), by treduce itself:
 * it runs after the timed calls, so it times nothing. */
static trd_status agree_max(bench_rank *br, const double *v, double *out, int64_t n)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    return trd_allreduce(br->comm, v, out, n, br->max, &o);
}

/* Repetitions of barrier, time, call, time into t[0..iters). */
static trd_status repeat(bench_rank *br, const bench_runner *run, const bench_case *c,
                         double *t, int64_t iters)
{
    trd_status st = TRD_OK;
    for (int64_t k = 0; k < iters && st == TRD_OK; k++) {
        if ((st = run->barrier(run->self)) != TRD_OK)
            break;
        double t0 = trd_comm_now(br->comm);
        st = run->call(run->self, c);
        t[k] = trd_comm_now(br->comm) - t0;
    }
    return st;
}

/* Rank 0: the point from the slowest ranks' times (all[iters] > 0 when a
 * rank's result was wrong). */
static trd_status keep(bench_rank *br, const bench_case *c, double *all, int64_t iters,
                       bench_point *pt)
{
    cli_sort(all, (size_t)iters);
    pt->median = all[iters / 2];
    pt->min = all[0];
    pt->verified = all[iters] == 0;
    pt->iters = iters;
    pt->op = c->op;
    pt->kind = c->kind;
    pt->bytes = c->count * 8;
    if (br->table && !bench_record(br, pt))
        return bench_fail(br, TRD_ENOMEM, "bench: out of memory for the results");
    bench_progress(br, pt);
    return TRD_OK;
}

trd_status bench_measure(bench_rank *br, const bench_runner *run, const bench_case *c,
                         const bench_point *series)
{
    double pilot = 0, slowest = 0, *t = NULL, *all = NULL;
    trd_status st = run->barrier(run->self);
    if (st == TRD_OK) { /* the warm-up: plans built, pages touched */
        double t0 = trd_comm_now(br->comm);
        st = run->call(run->self, c);
        pilot = trd_comm_now(br->comm) - t0;
    }
    if (st == TRD_OK)
        st = agree_max(br, &pilot, &slowest, 1); /* every rank: the same repetitions */
    int64_t iters = bench_iters(br->a, slowest);
    if (st == TRD_OK) {
        t = malloc((size_t)(iters + 1) * sizeof *t);
        all = malloc((size_t)(iters + 1) * sizeof *all);
        st = t && all ? TRD_OK : TRD_ENOMEM;
    }
    if (st == TRD_OK) {
        /* NaN bytes: a repetition that leaves the result unwritten fails */
        memset(c->out, 0xff, (size_t)c->count * sizeof *c->out);
        st = repeat(br, run, c, t, iters);
    }
    if (st == TRD_OK) {
        bool gets = cli_kind_result_of(c->kind, trd_comm_rank(br->comm),
                                       trd_comm_size(br->comm), c->count, 0).gets;
        size_t bytes = (size_t)c->count * sizeof *c->out;
        t[iters] = !gets || memcmp(c->out, c->expected, bytes) == 0 ? 0.0 : 1.0;
        st = agree_max(br, t, all, iters + 1);
    }
    if (st == TRD_OK) {
        bench_point pt = *series;
        st = keep(br, c, all, iters, &pt);
    } else {
        bench_fail(br, st, series->algo);
    }
    free(t);
    free(all);
    return st;
}

/* ---- treduce's own algorithms ---- */

typedef struct trd_runner {
    trd_comm *comm;
    const bench_rank *br;
    trd_coll_opts opts;
} trd_runner;

static trd_status treduce_barrier(void *self)
{
    const trd_runner *r = self;
    return r->br->barrier ? r->br->barrier(r->br->barrier_ctx) : trd_comm_barrier(r->comm);
}

static trd_status treduce_call(void *self, const bench_case *c)
{
    trd_runner *r = self;
    return cli_kind_call(r->comm, c->kind, c->in, c->out, c->count, c->trd, 0, &r->opts);
}

/* The count the model takes: a reduce-scatter's whole input. */
static int64_t model_count(const bench_rank *br, const bench_case *c)
{
    return cli_kind_input(c->kind, c->count, trd_comm_size(br->comm));
}

/* One algorithm, with the profile's cost model for this size. */
static trd_status run_algo(bench_rank *br, const bench_case *c, const trd_profile *prof,
                           const char *algo)
{
    trd_runner r = {.comm = br->comm, .br = br};
    bench_runner run = {treduce_barrier, treduce_call, &r};
    double predicted = NAN;
    trd_coll_opts_init(&r.opts);
    trd_status st = trd_profile_apply(prof, c->count, sizeof(double), &r.opts);
    r.opts.algo = algo;
    if (st == TRD_OK)
        st = trd_comm_predict(br->comm, model_count(br, c), c->trd, 0, c->kind, &r.opts,
                              &predicted);
    if (st != TRD_OK)
        return bench_fail(br, st, algo);
    return bench_measure(br, &run, c, &(bench_point){.algo = algo, .predicted = predicted});
}

/* auto's choice: the same on every rank (the ranks check: the profile and
 * the arguments are the same everywhere, and so are the timings they
 * agreed on). */
static trd_status agreed_choice(bench_rank *br, const bench_case *c, trd_coll_opts *o,
                                trd_candidate *cand)
{
    size_t n = 0, idx = 0;
    trd_status st = trd_comm_explain(br->comm, model_count(br, c), c->trd, 0, c->kind, o, cand,
                                     &n);
    if (st == TRD_OK)
        st = trd_algo_find(cand[0].algo, &idx);
    double mine[2] = {(double)idx, -(double)idx}, both[2];
    if (st == TRD_OK)
        st = agree_max(br, mine, both, 2);
    if (st != TRD_OK)
        return bench_fail(br, st, "auto");
    if (both[0] != -both[1]) {
        snprintf(br->error, sizeof br->error, "auto: the ranks chose different algorithms "
                 "(registry indices %g to %g) for %lld elements", -both[1], both[0],
                 (long long)c->count);
        return br->status = TRD_EIO;
    }
    return TRD_OK;
}

/* auto under the profile: the candidate trd_comm_explain ranks first, or
 * with --tune the fastest of the model's best after the tuning calls
 * (barrier and call, as the repetitions: untimed warm-ups here, as many as
 * tuning can take); the tuned repetitions then call "auto" itself, which
 * runs the kept candidate with the path it was timed on (an MPI node's
 * long messages, trd_comm_shm_probe). */
static trd_status run_auto(bench_rank *br, const bench_case *c, const trd_profile *prof)
{
    trd_runner r = {.comm = br->comm, .br = br};
    bench_runner run = {treduce_barrier, treduce_call, &r};
    trd_candidate cand[BENCH_MAX_ALGOS];
    trd_coll_opts_init(&r.opts);
    if (trd_algo_count() > BENCH_MAX_ALGOS)
        return bench_fail(br, TRD_EINVAL, "auto: too many registered algorithms");
    trd_status st = trd_profile_apply(prof, c->count, sizeof(double), &r.opts);
    if (st != TRD_OK)
        return bench_fail(br, st, "auto");
    r.opts.algo = "auto";
    r.opts.tune = (int32_t)br->a->tune;
    if ((st = agreed_choice(br, c, &r.opts, cand)) != TRD_OK)
        return st;
    const char *model = cand[0].algo;
    for (int64_t k = 0; k < (br->a->tune + 1) * TRD_TUNE_CALLS && st == TRD_OK; k++)
        if ((st = treduce_barrier(&r)) == TRD_OK)
            st = treduce_call(&r, c);
    if (st != TRD_OK)
        return bench_fail(br, st, "auto (tuning)");
    if (br->a->tune > 0 && (st = agreed_choice(br, c, &r.opts, cand)) != TRD_OK)
        return st;
    if (br->a->tune == 0) /* tuned: "auto" runs the kept candidate and its path */
        r.opts.algo = cand[0].algo;
    return bench_measure(br, &run, c, &(bench_point){.algo = "auto", .chosen = cand[0].algo,
                                                     .model = model,
                                                     .predicted = cand[0].predicted});
}

/* Every series of one (operator, size, kind). */
static trd_status run_point(bench_rank *br, const bench_case *c, const trd_profile *prof)
{
    trd_status st = run_auto(br, c, prof);
    if (st == TRD_OK && br->baseline)
        st = br->baseline(br, c);
    for (size_t j = 0; j < br->a->nalgos && st == TRD_OK; j++)
        if (bench_algo_runs(br->a->algos[j], c->kind))
            st = run_algo(br, c, prof, trd_algo_name(br->a->algos[j]));
    return st;
}

/* The kind whose input is the largest of those measured: a
 * reduce-scatter's p parts, when it is one. */
static trd_collective input_kind(const bench_args *a)
{
    return a->kind[TRD_COLL_REDUCE_SCATTER] ? TRD_COLL_REDUCE_SCATTER : TRD_COLL_REDUCE;
}

/* Every size and kind of operator op. */
static trd_status run_op(bench_rank *br, size_t op, double *in, double *out, double *expected)
{
    const bench_args *a = br->a;
    int64_t p = trd_comm_size(br->comm), rank = trd_comm_rank(br->comm);
    trd_profile prof;
    trd_status st = trd_comm_profile(br->comm, br->ops[op], &prof);
    if (st != TRD_OK)
        return bench_fail(br, st, "profile");
    if (br->table)
        br->table->profile[op] = prof;
    for (size_t s = 0; s < a->nsizes && st == TRD_OK; s++) {
        int64_t count = a->sizes[s] / 8;
        bench_fill(in, cli_kind_input(input_kind(a), count, p), rank);
        for (int k = 0; k < BENCH_KINDS && st == TRD_OK; k++) {
            bench_case c = {.op = op, .kind = (trd_collective)k, .count = count,
                            .trd = br->ops[op], .in = in, .out = out, .expected = expected};
            if (!a->kind[k])
                continue;
            bench_expected(expected, c.kind, count, p, rank);
            st = run_point(br, &c, &prof);
        }
    }
    return st;
}

void bench_rank_main(bench_rank *br)
{
    const bench_args *a = br->a;
    int64_t most = 8;
    for (size_t s = 0; s < a->nsizes; s++)
        most = a->sizes[s] > most ? a->sizes[s] : most;
    double *in = malloc((size_t)cli_kind_input(input_kind(a), most, trd_comm_size(br->comm)));
    double *out = malloc((size_t)most);
    double *expected = malloc((size_t)most);
    br->status = TRD_OK;
    br->error[0] = '\0';
    trd_status st = in && out && expected ? TRD_OK : TRD_ENOMEM;
    if (st == TRD_OK)
        st = trd_op_builtin(&br->max, TRD_OP_MAX, TRD_DOUBLE);
    if (st != TRD_OK)
        bench_fail(br, st, "bench");
    if (br->table)
        br->table->p = trd_comm_size(br->comm);
    for (size_t op = 0; op < a->nops && st == TRD_OK; op++)
        st = run_op(br, op, in, out, expected);
    trd_op_free(br->max);
    br->max = NULL;
    free(in);
    free(out);
    free(expected);
}

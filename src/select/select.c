/* select.c: the selection layer - trd_reduce and trd_allreduce, "auto"
 * resolved to one registered algorithm before the collective core runs it
 * (src/runtime/comm.c), and the core's time of a tuned candidate's call
 * recorded (tune.c).
 *
 * Layers call only downward: the core checks a call's arguments, builds
 * its key and plan and runs it; selection sits above it and reads the
 * model (predict.c), the measured profile (profile.c) and the tuner's
 * timings (tune.c), whose measurements talk through the wire's own
 * barrier and agreement (trd_comm_agree_max), never through a public
 * collective.  Its tables live with the communicator (select.h), made at
 * the first call that needs them.  An "auto" call whose arguments are the
 * last one's runs the key it resolved to at once (the core's
 * trd_comm_collective_keyed): a call of one double pays no ranking. */
#include <math.h>
#include <stdlib.h>

#include <string.h>

#include "core/error.h"
#include "plan/builders.h"
#include "plan/registry.h"
#include "select/select.h"

/* trd_comm_explain's ranking, in a buffer of trd_algo_count() (freed by
 * the caller). */
static trd_status ranking(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                          trd_collective coll, const trd_coll_opts *opts, trd_candidate **all)
{
    size_t n;
    *all = malloc(trd_algo_count() * sizeof **all);
    if (!*all)
        return trd_fail(TRD_ENOMEM, "runtime: out of memory");
    return trd_comm_explain(c, count, op, root, coll, opts, *all, &n);
}

/* Drops from the ranking (in place; returns what is left) the candidates
 * whose programs repeat those of a better-ranked one, until opts->tune
 * runnable ones are kept: at p = 4 several planners build one binomial
 * tree, and timing it several times left the tuner no other tree to fall
 * back on when that one ran slow (docs/RUNTIME_INTERNALS.md, "Tuning"). */
static size_t distinct_plans(trd_comm *c, const trd_call_args *args, const trd_coll_opts *opts,
                             trd_candidate *all, size_t n)
{
    trd_plan *kept[TRD_TUNE_MAX];
    int32_t nkept = 0, runnable = 0;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        trd_plan *plan = NULL;
        bool dup = false;
        if (runnable < opts->tune && all[i].status == TRD_OK && isfinite(all[i].predicted)) {
            trd_coll_opts o = *opts;
            trd_comm_key key;
            o.algo = all[i].algo;
            if (trd_comm_plan_call(c, args->count, args->op, args->root, args->coll, &o,
                                   &key, &plan) != TRD_OK)
                continue; /* cannot run after all: not a candidate */
            for (int32_t k = 0; plan && k < nkept && !dup; k++)
                dup = trd_plan_same_programs(kept[k], plan);
            runnable += !dup;
        }
        if (dup)
            trd_plan_free(plan);
        else if (plan)
            kept[nkept++] = plan;
        if (!dup)
            all[out++] = all[i];
    }
    for (int32_t k = 0; k < nkept; k++)
        trd_plan_free(kept[k]);
    trd_clear_error();
    return out;
}

/* "auto" with opts->tune: the candidate this call times, or the one kept
 * (src/select/tune.c), and *other whether its long messages take the
 * other path.  *timed: the entry to record this call's time in. */
static trd_status resolve_tuned(trd_comm *c, struct trd_select_state *state,
                                const trd_call_args *args, trd_coll_opts *opts,
                                trd_tune_entry **timed, bool *other)
{
    trd_tune_entry *e = trd_tune_find(&state->tune, args);
    trd_status st = TRD_OK;
    if (!e) {
        trd_candidate *all;
        size_t bytes = (size_t)args->count * trd_op_elem_size(args->op);
        if ((st = ranking(c, args->count, args->op, args->root, args->coll, opts,
                          &all)) == TRD_OK)
            e = trd_tune_start(&state->tune, args, all,
                               distinct_plans(c, args, opts, all, trd_algo_count()),
                               trd_comm_long_choice(c, bytes));
        free(all);
    }
    bool timing = false;
    if (e)
        opts->algo = trd_tune_next(e, &timing, other);
    *timed = timing ? e : NULL;
    return st;
}

/* "auto" resolved for a call whose arguments passed trd_comm_check_args:
 * opts->algo then names a registered algorithm, the measured model
 * applied to *opts; *timed: the tuning entry this call is timed for (or
 * NULL), *other: its long messages take the other path. */
static trd_status resolve(trd_comm *c, struct trd_select_state *state,
                          const trd_call_args *args, trd_coll_opts *opts,
                          trd_tune_entry **timed, bool *other)
{
    *timed = NULL;
    *other = false;
    /* the chosen algorithm's plan too is built under the measured model */
    trd_status st = trd_comm_measured_model(c, args->op, args->count, opts);
    if (st != TRD_OK)
        return st;
    if (opts->tune > 0 && !opts->reproducible)
        return resolve_tuned(c, state, args, opts, timed, other);
    trd_candidate *all;
    if ((st = ranking(c, args->count, args->op, args->root, args->coll, opts, &all)) ==
        TRD_OK)
        opts->algo = all[0].algo;
    free(all);
    return st;
}

static void state_free(struct trd_select_state *state)
{
    trd_progress_free(state->progress);
    free(state);
}

struct trd_select_state *trd_select_state_of(trd_comm *c)
{
    if (!c->select && (c->select = calloc(1, sizeof *c->select)))
        c->select_free = state_free;
    return c->select;
}

/* An "auto" call: the last one's key when its arguments are the same,
 * else checked, resolved, keyed and (unless a tuning call) remembered;
 * run, and a tuning call's time recorded. */
static trd_status collective_auto(trd_comm *c, const void *sendbuf, void *recvbuf,
                                  int64_t count, const trd_op *op, int32_t root, trd_collective coll,
                                  const trd_coll_opts *opts)
{
    struct trd_select_state *state = trd_select_state_of(c);
    if (!state)
        return trd_fail(TRD_ENOMEM, "runtime: out of memory");
    trd_select_memo *m = &state->memo;
    trd_run_opts run = {.other = m->other};
    if (m->valid && m->key.parts == (coll == TRD_COLL_REDUCE_SCATTER ? c->parts_hash : 0) &&
        trd_call_args_match(&m->args, op, count, root, coll, opts))
        return trd_comm_collective_keyed(c, sendbuf, recvbuf, op, &m->key, &m->sig, &m->built,
                                         &run);
    trd_call_args args = trd_call_args_of(op, count, root, coll, opts);
    trd_coll_opts chosen = *opts;
    trd_tune_entry *timed = NULL;
    trd_comm_key key;
    trd_call_sig sig;
    void *acc;
    trd_status st = trd_comm_usable(c);
    if (st == TRD_OK)
        st = trd_comm_check_args(c, sendbuf, recvbuf, count, op, root, coll, opts);
    if (st == TRD_OK)
        st = resolve(c, state, &args, &chosen, &timed, &run.other);
    if (st == TRD_OK)
        st = trd_comm_check(c, sendbuf, recvbuf, count, op, root, coll, &chosen, &key,
                            &acc);
    if (st != TRD_OK)
        return st;
    trd_comm_sign(trd_algo_entry(key.algo)->name, &key, op, &sig);
    uint64_t built = 0;
    uint64_t *runs = &built;
    if (!timed) { /* a tuning call's candidate is not the next call's */
        *m = (trd_select_memo){.valid = true, .args = args, .key = key, .sig = sig,
                               .other = run.other};
        runs = &m->built;
    }
    run.timed = timed != NULL;
    st = trd_comm_collective_keyed(c, sendbuf, recvbuf, op, &key, &sig, runs, &run);
    return st == TRD_OK && timed ? trd_tune_record(c, timed, run.seconds) : st;
}

static trd_status collective(trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                             const trd_op *op, int32_t root, trd_collective coll,
                             const trd_coll_opts *opts, const char *what)
{
    trd_coll_opts defaults;
    if (!opts) { /* the collective's default algorithm (its registry row's flag) */
        trd_coll_opts_init(&defaults);
        defaults.algo = trd_algo_default_for(coll);
        opts = &defaults;
    }
    trd_comm_drain(c);
    trd_status st = trd_comm_enter(c, what);
    if (st != TRD_OK)
        return st;
    if (c && op && opts->algo && !strcmp(opts->algo, "auto"))
        st = collective_auto(c, sendbuf, recvbuf, count, op, root, coll, opts);
    else
        st = trd_comm_collective(c, sendbuf, recvbuf, count, op, root, coll, opts, NULL);
    trd_comm_leave(c);
    return st;
}

trd_status trd_reduce(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                      const trd_op *op, int32_t root, const trd_coll_opts *opts)
{
    return collective(comm, sendbuf, recvbuf, count, op, root, TRD_COLL_REDUCE, opts,
                      "trd_reduce");
}

trd_status trd_allreduce(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                         const trd_op *op, const trd_coll_opts *opts)
{
    return collective(comm, sendbuf, recvbuf, count, op, 0, TRD_COLL_ALLREDUCE, opts,
                      "trd_allreduce");
}

trd_status trd_reduce_scatter_block(trd_comm *comm, const void *sendbuf, void *recvbuf,
                                    int64_t recvcount, const trd_op *op,
                                    const trd_coll_opts *opts)
{
    if (comm && recvcount > INT64_MAX / (comm->wire.size > 0 ? comm->wire.size : 1))
        return trd_fail(TRD_EINVAL, "recvcount = %lld is too large for %ld ranks",
                        (long long)recvcount, (long)comm->wire.size);
    if (recvcount < 0)
        return trd_fail(TRD_EINVAL, "recvcount = %lld is negative", (long long)recvcount);
    int64_t count = comm ? recvcount * comm->wire.size : 0;
    return collective(comm, sendbuf, recvbuf, count, op, 0, TRD_COLL_REDUCE_SCATTER, opts,
                      "trd_reduce_scatter_block");
}

trd_status trd_reduce_scatter(trd_comm *comm, const void *sendbuf, void *recvbuf,
                              const int64_t *recvcounts, const trd_op *op,
                              const trd_coll_opts *opts)
{
    if (!comm || !recvcounts)
        return trd_fail(TRD_EINVAL, "trd_reduce_scatter: NULL %s",
                        comm ? "recvcounts" : "communicator");
    int64_t count = 0;
    for (int32_t r = 0; r < comm->wire.size; r++) {
        if (recvcounts[r] < 0 || recvcounts[r] > INT64_MAX / 2 - count)
            return trd_fail(TRD_EINVAL, "recvcounts[%ld] = %lld is %s", (long)r,
                            (long long)recvcounts[r], recvcounts[r] < 0 ? "negative"
                                                                        : "too large");
        count += recvcounts[r];
    }
    trd_comm_set_parts(comm, recvcounts);
    trd_status st = collective(comm, sendbuf, recvbuf, count, op, 0, TRD_COLL_REDUCE_SCATTER,
                               opts, "trd_reduce_scatter");
    trd_comm_set_parts(comm, NULL);
    return st;
}

trd_status trd_scan(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                    const trd_op *op, const trd_coll_opts *opts)
{
    return collective(comm, sendbuf, recvbuf, count, op, 0, TRD_COLL_SCAN, opts, "trd_scan");
}

trd_status trd_exscan(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                      const trd_op *op, const trd_coll_opts *opts)
{
    return collective(comm, sendbuf, recvbuf, count, op, 0, TRD_COLL_EXSCAN, opts,
                      "trd_exscan");
}

/* select.c: the selection layer - "auto" resolved to one registered
 * algorithm before the collective core runs it (comm.c).
 *
 * Layers call only downward: the core checks a call's arguments, builds
 * its key and plan and runs it; selection sits above it and reads the
 * model (predict.c), the measured profile (profile.c) and the tuner's
 * timings (tune.c), whose measurements talk through the wire's own
 * barrier and agreement (trd_comm_agree_max), never through a public
 * collective.  So resolving "auto" leaves the core's memo and plan cache
 * as the last call left them. */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "plan/plan_internal.h"
#include "plan/registry.h"
#include "runtime/comm.h"

/* trd_comm_explain's ranking, in a buffer of trd_algo_count() (freed by
 * the caller). */
static trd_status ranking(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                          bool allreduce, const trd_coll_opts *opts, trd_candidate **all)
{
    size_t n;
    *all = malloc(trd_algo_count() * sizeof **all);
    if (!*all)
        return trd_fail(TRD_ENOMEM, "runtime: out of memory");
    return trd_comm_explain(c, count, op, root, allreduce, opts, *all, &n);
}

/* Drops from the ranking (in place; returns what is left) the candidates
 * whose programs repeat those of a better-ranked one, until opts->tune
 * runnable ones are kept: at p = 4 several planners build one binomial
 * tree, and timing it several times left the tuner no other tree to fall
 * back on when that one ran at half speed here (docs/RUNTIME.md, "Tuned
 * auto"). */
static size_t distinct_plans(trd_comm *c, const trd_tune_key *args, const trd_coll_opts *opts,
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
            if (trd_comm_plan_call(c, args->count, args->op, args->root, args->allreduce, &o,
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
 * (src/runtime/tune.c), and *other whether its long messages take the
 * other path.  *timed: the entry to record this call's time in. */
static trd_status resolve_tuned(trd_comm *c, const trd_tune_key *args, trd_coll_opts *opts,
                                trd_tune_entry **timed, bool *other)
{
    trd_tune_entry *e = trd_tune_find(&c->tune, args);
    trd_status st = TRD_OK;
    if (!e) {
        trd_candidate *all;
        size_t bytes = (size_t)args->count * trd_op_elem_size(args->op);
        if ((st = ranking(c, args->count, args->op, args->root, args->allreduce, opts,
                          &all)) == TRD_OK)
            e = trd_tune_start(&c->tune, args, all,
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

trd_status trd_comm_select(trd_comm *c, const trd_tune_key *args, trd_coll_opts *opts,
                           trd_tune_entry **timed, bool *other)
{
    *timed = NULL;
    /* the chosen algorithm's plan too is built under the measured model */
    trd_status st = trd_comm_measured_model(c, args->op, args->count, opts);
    if (st != TRD_OK)
        return st;
    if (opts->tune > 0 && !opts->reproducible)
        return resolve_tuned(c, args, opts, timed, other);
    trd_candidate *all;
    if ((st = ranking(c, args->count, args->op, args->root, args->allreduce, opts, &all)) ==
        TRD_OK)
        opts->algo = all[0].algo;
    free(all);
    return st;
}

/* tune.c: "auto" that measures before it settles (trd_coll_opts.tune).
 *
 * The model ranks every algorithm (trd_comm_explain), but on a machine it
 * does not describe - more ranks than cores, caches, a scheduler waking
 * ranks late - its first choice can lose to its second or third
 * (docs/RUNTIME.md, "Tuned auto").  So, as STAR-MPI does for MPI
 * collectives (Faraj, Yuan and Lowenthal, "STAR-MPI: self tuned adaptive
 * routines for MPI collective operations", ICS 2006), the first calls
 * with the same arguments run the model's `tune` best candidates in turn,
 * TRD_TUNE_CALLS calls each, and every later call runs the fastest.  The
 * model narrows the search to a few candidates; the measurements decide
 * among them.
 *
 * Every rank makes the same sequence of calls with the same arguments, so
 * every rank tries the same candidate in the same call without talking.
 * Only the decision needs the others: each rank's median per candidate,
 * then the largest over the ranks (a collective's time is its slowest
 * rank's), agreed by one small allreduce after the last tuning call. */
#include "select/tune.h"

#include <math.h>
#include <stdlib.h>

#include "select/calibrate.h"
#include "runtime/op.h"

trd_tune_entry *trd_tune_find(trd_tune_table *t, const trd_call_args *key)
{
    for (int32_t i = 0; i < TRD_TUNE_KEYS; i++) {
        trd_tune_entry *e = &t->entry[i];
        if (e->used && trd_call_args_same(&e->key, key))
            return e;
    }
    return NULL;
}

trd_tune_entry *trd_tune_start(trd_tune_table *t, const trd_call_args *key,
                               const trd_candidate *ranked, size_t n, bool other_path)
{
    trd_tune_entry *e = &t->entry[t->next];
    t->next = (t->next + 1) % TRD_TUNE_KEYS;
    *e = (trd_tune_entry){.used = true, .key = *key, .chosen = -1};
    for (size_t i = 0; i < n && e->n < key->opts.tune; i++)
        if (ranked[i].status == TRD_OK && isfinite(ranked[i].predicted))
            e->algo[e->n++] = ranked[i].algo;
    if (e->n == 0)
        e->algo[e->n++] = ranked[0].algo;
    if (other_path) {
        e->algo[e->n] = e->algo[0];
        e->other[e->n++] = true;
    }
    if (e->n <= 1)
        e->chosen = 0; /* nothing to compare: explain's first runs */
    return e;
}

/* The candidate of tuning call k: rounds of every candidate once, each
 * round starting one candidate later.  A machine that warms up over the
 * rounds (the first calls at a new size touch fresh pages and take several
 * times longer than the later ones) then favours no position in a round. */
static int32_t candidate(const trd_tune_entry *e, int32_t k)
{
    return (k % e->n + k / e->n) % e->n;
}

const char *trd_tune_next(const trd_tune_entry *e, bool *timed, bool *other)
{
    *timed = e->chosen < 0;
    int32_t i = *timed ? candidate(e, e->calls) : e->chosen;
    *other = e->other[i];
    return e->algo[i];
}

trd_status trd_tune_record(trd_comm *c, trd_tune_entry *e, double seconds)
{
    int32_t round = e->calls / e->n;
    if (round > 0) /* the first round warms up: not compared */
        e->t[candidate(e, e->calls)][round - 1] = seconds;
    if (++e->calls < e->n * TRD_TUNE_CALLS)
        return TRD_OK;
    double mine[TRD_TUNE_MAX + 1];
    for (int32_t i = 0; i < e->n; i++)
        mine[i] = trd_calibrate_median(e->t[i], TRD_TUNE_CALLS - 1);
    trd_status st = trd_comm_agree_max(c, mine, e->measured, e->n);
    if (st != TRD_OK) {
        e->calls--; /* the last call is timed again next time */
        return st;
    }
    e->chosen = 0; /* ties: the model's order */
    for (int32_t i = 1; i < e->n; i++)
        if (e->measured[i] < e->measured[e->chosen])
            e->chosen = i;
    return TRD_OK;
}

void trd_tune_explain(const trd_tune_entry *e, trd_candidate *ranked, size_t n)
{
    if (e->chosen < 0 || e->n < 2)
        return; /* not timed */
    for (size_t i = 0; i < n; i++)
        for (int32_t j = 0; j < e->n; j++)
            if (ranked[i].algo == e->algo[j] && !e->other[j])
                ranked[i].measured = e->measured[j];
    for (size_t i = 0; i < n; i++)
        if (ranked[i].algo == e->algo[e->chosen]) {
            trd_candidate kept = ranked[i];
            kept.measured = e->measured[e->chosen]; /* the other path's, when it won */
            for (; i > 0; i--)
                ranked[i] = ranked[i - 1];
            ranked[0] = kept;
            break;
        }
}

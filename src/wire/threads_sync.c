/* threads_sync.c: what the threads wire does for all ranks at once under
 * the world's mutex: barriers and agreements (counted with a generation,
 * so a wait can time out, which pthread_barrier_t cannot), and the
 * decisions of dynamic policies on one shared state.  A failed world
 * (threads_fail.c) wakes and refuses them all. */
#include "wire/threads_world.h"

#include <errno.h>

#include "core/error.h"

/* Waits until all ranks arrived, the deadline or a failure; w->mu held.
 * A timeout is returned, not recorded: the caller fails the world once it
 * has let the mutex go. */
static trd_status barrier_locked(trd_world *w, int32_t rank, double deadline)
{
    uint64_t gen = w->generation;
    if (trd_threads_failed(w))
        return trd_threads_failure(w);
    if (++w->arrived == w->size) {
        w->arrived = 0;
        w->generation++;
        pthread_cond_broadcast(&w->cv);
        return TRD_OK;
    }
    struct timespec until = trd_threads_abs_time(deadline);
    int rc = 0;
    while (w->generation == gen && rc != ETIMEDOUT && !trd_threads_failed(w))
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    if (w->generation != gen)
        return TRD_OK;
    w->arrived--; /* leave: a later barrier must not count us */
    if (trd_threads_failed(w))
        return trd_threads_failure(w);
    return trd_fail(TRD_ETIMEDOUT, "threads transport: rank %ld waited at a barrier past its "
                    "deadline: %ld of %ld ranks arrived", (long)rank, (long)w->arrived + 1,
                    (long)w->size);
}

/* Lets w->mu go; a failure of this rank's own (not one it learned of)
 * becomes the world's. */
static trd_status unlock_failing(trd_world *w, int32_t rank, trd_status st)
{
    bool learned = trd_threads_failed(w);
    pthread_mutex_unlock(&w->mu);
    return st == TRD_OK || learned ? st : trd_threads_fail_with(w, rank, st);
}

trd_status trd_threads_barrier(void *ctx, double deadline)
{
    rank_ctx *r = ctx;
    pthread_mutex_lock(&r->world->mu);
    return unlock_failing(r->world, r->rank, barrier_locked(r->world, r->rank, deadline));
}

/* This rank's values into the agreement of its generation (w->mu held):
 * the first to arrive sets them, the others keep the largest. */
static trd_status contribute(trd_world *w, int32_t rank, const double *v, int32_t n)
{
    int g = (int)(w->generation & 1);
    double *acc = w->agree[g];
    if (w->arrived == 0) {
        w->agree_n[g] = n;
        for (int32_t i = 0; i < n; i++)
            acc[i] = v[i];
        return TRD_OK;
    }
    if (w->agree_n[g] != n)
        return trd_fail(TRD_EIO, "threads transport: mismatched agreements: rank %ld agrees on "
                        "%ld values, the ranks before it on %ld", (long)rank, (long)n,
                        (long)w->agree_n[g]);
    for (int32_t i = 0; i < n; i++)
        acc[i] = v[i] > acc[i] ? v[i] : acc[i];
    return TRD_OK;
}

trd_status trd_threads_agree(void *ctx, double *v, int32_t n, double deadline)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    if (n < 0 || n > TRD_WIRE_AGREE_MAX || (!v && n > 0))
        return trd_fail(TRD_EINVAL, "threads transport: agree on %ld values: need 0 to %d",
                        (long)n, TRD_WIRE_AGREE_MAX);
    pthread_mutex_lock(&w->mu);
    int g = (int)(w->generation & 1); /* the generation this barrier releases */
    trd_status st = trd_threads_failed(w) ? trd_threads_failure(w) : contribute(w, r->rank, v, n);
    if (st == TRD_OK)
        st = barrier_locked(w, r->rank, deadline);
    for (int32_t i = 0; st == TRD_OK && i < n; i++)
        v[i] = w->agree[g][i];
    return unlock_failing(w, r->rank, st);
}

/* The first rank to decide in a call lends its policy copy as the shared
 * state (all copies are equal until used); end_dynamic resets it.  A
 * failed world may have lost that rank's copy: nobody decides any more. */
trd_status trd_threads_decide(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                              trd_action *action, int32_t *peer)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    pthread_mutex_lock(&w->mu);
    if (trd_threads_failed(w)) {
        pthread_mutex_unlock(&w->mu);
        return trd_threads_failure(w);
    }
    if (!w->shared || w->shared_call != call) {
        w->shared = policy;
        w->shared_call = call;
    }
    *action = w->shared->idle(w->shared->state, rank, peer);
    pthread_mutex_unlock(&w->mu);
    return TRD_OK;
}

trd_status trd_threads_end_dynamic(void *ctx, const trd_policy *policy, int64_t call)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    double deadline = trd_threads_now() + w->opts.timeout_s;
    (void)policy;
    pthread_mutex_lock(&w->mu);
    trd_status st = barrier_locked(w, r->rank, deadline);
    if (st == TRD_OK && r->rank == 0 && w->shared && w->shared_call == call) {
        w->shared->reset(w->shared->state);
        w->shared = NULL;
    }
    if (st == TRD_OK) /* nobody decides for the next call before the reset */
        st = barrier_locked(w, r->rank, deadline);
    return unlock_failing(w, r->rank, st);
}

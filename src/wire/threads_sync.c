/* threads_sync.c: what the threads wire does for all ranks at once:
 * barriers and agreements (counted with a generation, so a wait can time
 * out, which pthread_barrier_t cannot), and the decisions of dynamic
 * policies on one shared state.  A barrier takes no lock: each rank counts
 * itself in with one atomic add and the last one releases the others,
 * which wait as messages do (threads_park.c).  A failed world
 * (threads_fail.c) wakes and refuses them all. */
#include "wire/threads_world.h"

#include "core/error.h"

#define SLICE_S 0.05 /* longest sleep of a barrier wait between two looks */

typedef struct barrier_wait {
    const trd_world *w;
    uint32_t gen;
} barrier_wait;

static bool released(const void *arg)
{
    const barrier_wait *b = arg;
    return atomic_load_explicit(&b->w->generation, memory_order_acquire) != b->gen ||
           trd_threads_failed(b->w);
}

/* Waits until all ranks arrived, the deadline or a failure.  A timeout
 * fails the world (its barriers count no more), so a rank that leaves
 * need not count itself out. */
static trd_status barrier_wait_all(trd_world *w, int32_t rank, double deadline)
{
    if (trd_threads_failed(w))
        return trd_threads_failure(w);
    /* Read before arriving: it cannot advance until this rank has. */
    barrier_wait b = {w, atomic_load_explicit(&w->generation, memory_order_acquire)};
    atomic_store_explicit(&w->now[rank].barrier, b.gen + 1, memory_order_release);
    uint32_t n = atomic_fetch_add_explicit(&w->arrived, 1, memory_order_acq_rel) + 1;
    if (n == (uint32_t)w->size) {
        /* Reset before the release: a released rank's next arrival follows it. */
        atomic_store_explicit(&w->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&w->generation, 1, memory_order_release);
        trd_park_bump(&w->release);
        return TRD_OK;
    }
    trd_park_until(&w->release, released, &b, deadline, SLICE_S);
    if (atomic_load_explicit(&w->generation, memory_order_acquire) != b.gen)
        return TRD_OK;
    if (trd_threads_failed(w))
        return trd_threads_failure(w);
    return trd_threads_barrier_late(w, rank, b.gen);
}

/* Lets w->mu go; a failure of this rank's own (not one it learned of)
 * becomes the world's. */
static trd_status unlock_failing(trd_world *w, int32_t rank, trd_status st)
{
    bool learned = trd_threads_failed(w);
    trd_lock_give(&w->mu);
    return st == TRD_OK || learned ? st : trd_threads_fail_with(w, rank, st);
}

trd_status trd_threads_barrier(void *ctx, double deadline)
{
    rank_ctx *r = ctx;
    return barrier_wait_all(r->world, r->rank, deadline);
}

/* This rank's values into the agreement of barrier generation gen
 * (w->mu held): the first to arrive sets them, the others keep the
 * largest. */
static trd_status contribute(trd_world *w, int32_t rank, uint32_t gen, const double *v,
                             int32_t n)
{
    int g = (int)(gen & 1);
    double *acc = w->agree[g];
    if (w->agree_at[g] != gen + 1) {
        w->agree_at[g] = gen + 1;
        w->agree_n[g] = n;
        for (int32_t i = 0; i < n; i++)
            acc[i] = v[i];
        return TRD_OK;
    }
    if (w->agree_n[g] != n)
        return trd_fail(TRD_EIO, "threads wire: mismatched agreements: rank %ld agrees on "
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
        return trd_fail(TRD_EINVAL, "threads wire: agree on %ld values: need 0 to %d",
                        (long)n, TRD_WIRE_AGREE_MAX);
    /* The generation this barrier releases: it cannot advance before this
     * rank arrives. */
    uint32_t gen = atomic_load_explicit(&w->generation, memory_order_acquire);
    int g = (int)(gen & 1);
    trd_lock_take(&w->mu);
    trd_status st = trd_threads_failed(w) ? trd_threads_failure(w)
                                          : contribute(w, r->rank, gen, v, n);
    st = unlock_failing(w, r->rank, st);
    if (st == TRD_OK)
        st = barrier_wait_all(w, r->rank, deadline);
    trd_lock_take(&w->mu); /* the last contribution's values, seen through mu */
    for (int32_t i = 0; st == TRD_OK && i < n; i++)
        v[i] = w->agree[g][i];
    trd_lock_give(&w->mu);
    return st;
}

/* The first rank to decide in a call lends its policy copy as the shared
 * state (all copies are equal until used); end_dynamic resets it.  A
 * failed world may have lost that rank's copy: nobody decides any more. */
trd_status trd_threads_decide(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                              trd_action *action, int32_t *peer)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    trd_lock_take(&w->mu);
    if (trd_threads_failed(w)) {
        trd_lock_give(&w->mu);
        return trd_threads_failure(w);
    }
    if (!w->shared || w->shared_call != call) {
        w->shared = policy;
        w->shared_call = call;
    }
    *action = w->shared->idle(w->shared->state, rank, peer);
    trd_lock_give(&w->mu);
    return TRD_OK;
}

trd_status trd_threads_end_dynamic(void *ctx, const trd_policy *policy, int64_t call)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    double deadline = trd_threads_now() + w->opts.timeout_s;
    (void)policy;
    trd_status st = barrier_wait_all(w, r->rank, deadline);
    if (st == TRD_OK && r->rank == 0) {
        trd_lock_take(&w->mu);
        if (w->shared && w->shared_call == call) {
            w->shared->reset(w->shared->state);
            w->shared = NULL;
        }
        trd_lock_give(&w->mu);
    }
    if (st == TRD_OK) /* nobody decides for the next call before the reset */
        st = barrier_wait_all(w, r->rank, deadline);
    return st;
}

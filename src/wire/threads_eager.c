/* threads_eager.c: the eager rings of the threads wire - a small send
 * into its receiver's mailbox without the mailbox's lock.
 *
 * Through the lock, the sender takes the receiver's lock while the
 * receiver polls and retakes it, so the lock's line, the queues' and the
 * events' cross between the two cores several times per message, and a
 * reduce of one double between two ranks with a core each took 2-3x the
 * time of treduce's MPI wire, which sends it through a ring in shared
 * memory (shm.c; docs/BENCHMARKS.md, "Threads wire").  So each ordered
 * pair of ranks gets a ring of
 * TRD_EAGER_SLOTS records, like shm.c's: the sender writes a slot and
 * publishes it with a release store of its number, then moves the
 * receiver's events on (which wakes it only if it sleeps); the slot's
 * lines are the only ones it writes.
 *
 * The ring is the front of the receiver's queue of sends from that
 * sender: whoever holds the receiver's box->mu to match anything (the
 * receiver posting or waiting, another sender, a claim) first takes every
 * ring's messages into the box (threads.c, drain), in order.  So messages
 * of one sender are matched in the order it sent them, whichever path
 * each took, and the rings have one consumer at a time.  A full ring (its
 * receiver has not taken its messages yet) sends through the lock, after
 * draining, in the same order. */
#include <stdlib.h>
#include <string.h>

#include "wire/threads_world.h"

static eager_ring *new_ring(void)
{
    eager_ring *ring = aligned_alloc(TRD_LINE, sizeof *ring);
    if (ring)
        memset(ring, 0, sizeof *ring);
    return ring;
}

/* Enters ring in box (box->mu held): false when out of memory. */
static bool enter_ring(mailbox *box, eager_ring *ring)
{
    if (box->nrings == box->ringcap) {
        int32_t cap = box->ringcap ? 2 * box->ringcap : 4;
        eager_ring **grown = realloc(box->rings, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        box->rings = grown;
        box->ringcap = cap;
    }
    box->rings[box->nrings++] = ring;
    return true;
}

eager_ring *trd_eager_ring(rank_ctx *r, int32_t peer)
{
    if (r->out[peer])
        return r->out[peer];
    eager_ring *ring = new_ring();
    if (!ring)
        return NULL;
    mailbox *box = &r->world->box[peer];
    trd_lock_take(&box->mu);
    bool entered = enter_ring(box, ring);
    trd_lock_give(&box->mu);
    if (!entered) {
        free(ring);
        return NULL;
    }
    return r->out[peer] = ring;
}

bool trd_eager_put(eager_ring *ring, const pending *send)
{
    uint64_t n = ring->put;
    if (n - ring->taken_seen == TRD_EAGER_SLOTS) {
        ring->taken_seen = atomic_load_explicit(&ring->taken, memory_order_acquire);
        if (n - ring->taken_seen == TRD_EAGER_SLOTS)
            return false;
    }
    eager_slot *slot = &ring->slot[n % TRD_EAGER_SLOTS];
    slot->send = *send;
    atomic_store_explicit(&slot->seq, n + 1, memory_order_release);
    ring->put = n + 1;
    return true;
}

bool trd_eager_take(eager_ring *ring, pending *send)
{
    uint64_t n = atomic_load_explicit(&ring->taken, memory_order_relaxed);
    eager_slot *slot = &ring->slot[n % TRD_EAGER_SLOTS];
    if (atomic_load_explicit(&slot->seq, memory_order_acquire) != n + 1)
        return false;
    *send = slot->send;
    /* After the copy: the sender may write the slot again from here on. */
    atomic_store_explicit(&ring->taken, n + 1, memory_order_release);
    return true;
}

void trd_eager_free(mailbox *box)
{
    for (int32_t i = 0; i < box->nrings; i++)
        free(box->rings[i]);
    free(box->rings);
}

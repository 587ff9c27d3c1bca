/* threads_eager.c: the eager rings of the threads wire - a small send
 * into its receiver's mailbox without the mailbox's lock.
 *
 * Through the lock, the sender takes the receiver's lock while the
 * receiver polls and retakes it, so the lock's line, the queues' and the
 * events' cross between the two cores several times per message, where
 * treduce's MPI wire moves it through a ring in shared memory (shm.c;
 * docs/BENCHMARKS.md, "Threads wire").  So each ordered pair of ranks
 * gets a ring of TRD_EAGER_SLOTS records, like shm.c's: the sender writes
 * a slot and publishes it with a release store of its number, then moves
 * the receiver's events on (which wakes it only if it sleeps); the slot's
 * lines are the only ones it writes.
 *
 * The ring is the front of the receiver's queue of sends from that
 * sender: whoever holds the receiver's box->mu to match anything (the
 * receiver posting or waiting, another sender, a claim) first takes every
 * ring's messages into the box (threads_box.c, trd_box_drain), in order.
 * So messages of one sender are matched in the order it sent them,
 * whichever path each took, and the rings have one consumer at a time.  A
 * full ring (its receiver has not taken its messages yet) sends through
 * the lock, after draining, in the same order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/threads_world.h"

#define EAGER_WAIT_S 2e-6 /* trd_eager_allowed */

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
    ring->at = box->nrings;
    box->rings[box->nrings++] = ring;
    return true;
}

/* The slot of peer in r's table of rings (free if it has none yet). */
static eager_link *link_of(const rank_ctx *r, int32_t peer)
{
    uint32_t mask = (uint32_t)r->outcap - 1, i = ((uint32_t)peer * 0x9E3779B1u) & mask;
    while (r->out[i].peer != peer && r->out[i].peer >= 0)
        i = (i + 1) & mask;
    return &r->out[i];
}

/* Room for one more ring in r's table, at a load of at most one half. */
static bool link_room(rank_ctx *r)
{
    if (2 * (r->nout + 1) <= r->outcap)
        return true;
    size_t cap = r->outcap ? 2 * (size_t)r->outcap : 8;
    eager_link *old = r->out, *grown = cap <= INT32_MAX ? malloc(cap * sizeof *grown) : NULL;
    if (!grown)
        return false;
    for (size_t i = 0; i < cap; i++)
        grown[i].peer = -1;
    int32_t oldcap = r->outcap;
    r->out = grown;
    r->outcap = (int32_t)cap;
    for (int32_t i = 0; i < oldcap; i++)
        if (old[i].peer >= 0)
            *link_of(r, old[i].peer) = old[i];
    free(old);
    return true;
}

/* The ring of rank r to peer, made and entered in peer's box on first
 * use; NULL when out of memory. */
static eager_ring *ring_to(rank_ctx *r, int32_t peer)
{
    if (r->outcap > 0) {
        eager_link *l = link_of(r, peer);
        if (l->peer == peer)
            return l->ring;
    }
    eager_ring *ring = link_room(r) ? new_ring() : NULL;
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
    *link_of(r, peer) = (eager_link){.peer = peer, .ring = ring};
    r->nout++;
    return ring;
}

/* Puts send into ring: false when it is full. */
static bool ring_put(eager_ring *ring, const pending *send)
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

typedef struct call_of {
    const trd_world *w;
    int32_t peer;
    uint64_t sig;
} call_of;

/* Whether peer has begun the call of signature sig (or a later one). */
static bool begun(const void *arg)
{
    const call_of *c = arg;
    uint64_t theirs = atomic_load_explicit(&c->w->now[c->peer].sig, memory_order_relaxed);
    return (int32_t)((uint32_t)theirs - (uint32_t)c->sig) >= 0;
}

/* Whether peer is in this very call (the same number and arguments) or
 * past it. */
static bool in_this_call(const call_of *c)
{
    uint64_t theirs = atomic_load_explicit(&c->w->now[c->peer].sig, memory_order_relaxed);
    return theirs == c->sig || (int32_t)((uint32_t)theirs - (uint32_t)c->sig) > 0;
}

/* A small send travels in its record when its receiver has begun this
 * call (t_set_call): then the sender never waits for the receiver's copy,
 * a round trip between two cores.  A sender never runs ahead of its
 * receiver's calls so (it falls back to the rendezvous): a box stays
 * bounded, a record of another call in a box is a mismatch
 * (trd_box_find), and a rank whose receiver is stuck in a failing call
 * cannot finish its own next call as if all were well.  Nor does it
 * complete at once when the receiver's call of this number has other
 * arguments: as a rendezvous it waits for the receiver's match, which
 * finds the mismatch (trd_threads_check_call), so no rank of a chain
 * behind it finishes its next call before the world has failed.  A
 * sender just ahead of its receiver (the first out of a barrier, or a
 * call on in a loop) waits up to EAGER_WAIT_S for it to begin, where both
 * have cores: a rendezvous would wait longer, for the copy. */
bool trd_eager_allowed(const trd_world *w, int32_t peer, const pending *me)
{
    call_of c = {w, peer, me->sig};
    return me->bytes <= TRD_EAGER_BYTES && trd_spin_until(begun, &c, EAGER_WAIT_S) &&
           in_this_call(&c);
}

/* Copies the bytes of an eager send into its record. */
void trd_eager_fill(pending *me, const void *buf)
{
    me->eager = true;
    me->buf = NULL; /* the caller's buffer is not read after the post */
    if (me->bytes > 0)
        memcpy(me->small, buf, me->bytes);
}

/* A ring past the box's scanned ones has a message: onto the box's queue,
 * unless it is there already.  The exchange orders the message before
 * the drain that clears the flag (trd_eager_queued), or the drain before
 * this push. */
static void queue_ring(mailbox *box, eager_ring *ring)
{
    if (ring->at < TRD_EAGER_SCANNED || atomic_exchange(&ring->queued, 1))
        return;
    eager_ring *head = atomic_load_explicit(&box->queued, memory_order_relaxed);
    do
        ring->next_queued = head;
    while (!atomic_compare_exchange_weak_explicit(&box->queued, &head, ring,
                                                  memory_order_release, memory_order_relaxed));
}

eager_ring *trd_eager_queued(mailbox *box)
{
    return atomic_exchange_explicit(&box->queued, NULL, memory_order_acquire);
}

void trd_eager_unqueue(eager_ring *ring)
{
    atomic_exchange(&ring->queued, 0); /* a message after this queues the ring again */
}

/* Rank r's eager send `me` through its ring to peer, without peer's lock:
 * false when it must go through the lock (no ring, or a full one). */
bool trd_eager_post(rank_ctx *r, int32_t peer, pending *me, const void *buf)
{
    eager_ring *ring = ring_to(r, peer);
    if (!ring)
        return false;
    trd_eager_fill(me, buf);
    if (ring_put(ring, me)) {
        queue_ring(&r->world->box[peer], ring);
        return true;
    }
    me->eager = false;
    me->buf = (void *)buf;
    return false;
}

void trd_eager_free(mailbox *box)
{
    for (int32_t i = 0; i < box->nrings; i++)
        free(box->rings[i]);
    free(box->rings);
}

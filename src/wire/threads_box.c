/* threads_box.c: a mailbox of the threads wire - its queues of waiting
 * sends and posted receives (threads_queue.c), the matched pairs its rank
 * has to copy, its completions - and the matching rules (wire.h: per
 * sender and tag in sending order, receives in posting order,
 * TRD_ANY_RANK; a message must fit its receive and belong to the same
 * call).  Every function here runs with box->mu held; threads.c takes it
 * and decides who copies. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "wire/threads_world.h"

static trd_status out_of_memory(void)
{
    return trd_fail(TRD_ENOMEM, "threads wire: out of memory");
}

/* Appends a matched pair for the box's rank to copy, to its ring of
 * matches (a power of two, doubled when full); box->mu held. */
static trd_status match_push(mailbox *box, match m)
{
    if (box->mlen == box->mcap) {
        size_t cap = box->mcap ? 2 * box->mcap : 16;
        match *grown = malloc(cap * sizeof *grown);
        if (!grown)
            return out_of_memory();
        for (size_t i = 0; i < box->mlen; i++)
            grown[i] = box->matched[(box->mhead + i) & (box->mcap - 1)];
        free(box->matched);
        box->matched = grown;
        box->mhead = 0;
        box->mcap = cap;
    }
    box->matched[(box->mhead + box->mlen++) & (box->mcap - 1)] = m;
    box_event(box);
    return TRD_OK;
}

/* Queues a completion for the rank owning box; the caller holds box->mu. */
trd_status trd_box_complete_locked(mailbox *box, int32_t id, int32_t from)
{
    trd_status st = trd_fifo_push(&box->done, id, from);
    box_event(box);
    return st;
}

trd_status trd_box_complete(mailbox *box, int32_t id, int32_t from)
{
    trd_lock_take(&box->mu);
    trd_status st = trd_box_complete_locked(box, id, from);
    box_unlock(box);
    return st;
}

/* A message must fit its receive (a consuming one: exactly) and belong to
 * the same call (callsig.h); checked when they are paired. */
static trd_status check_pair(int32_t from, int32_t to, const pending *send, const pending *recv)
{
    trd_status st = trd_threads_check_call(from, send, to, recv);
    bool fits = send->bytes <= recv->bytes && (!recv->consume || send->bytes == recv->bytes);
    if (st == TRD_OK && !fits)
        st = trd_fail(TRD_EIO, "threads wire: rank %ld sent %zu bytes to rank %ld, which "
                      "expected %s%zu", (long)from, send->bytes, (long)to,
                      recv->consume ? "exactly " : "at most ", recv->bytes);
    return st;
}

/* A send `me` arrives in the box of rank `to` (box->mu held): it takes
 * the first posted receive that wants it, or waits in the box. */
trd_status trd_box_send_arrived(int32_t to, mailbox *box, const pending *me)
{
    int32_t other, i = trd_queue_find(&box->recvs, me->peer, me->tag, me->sig, &other);
    if (other >= 0)
        return trd_threads_check_call(me->peer, me, to, trd_queue_at(&box->recvs, other));
    if (i < 0)
        return trd_queue_push(&box->sends, me);
    /* The receiver copies (t_wait), so that ranks copy their own receives
     * in parallel instead of the later-arriving one copying for both. */
    pending recv = trd_queue_take(&box->recvs, i);
    trd_status st = check_pair(me->peer, to, me, &recv);
    return st == TRD_OK ? match_push(box, (match){.from = me->peer, .send = *me, .recv = recv})
                        : st;
}

/* Box->mu of rank `to` held: the eager sends in its rings arrive, before
 * anything else is matched there (threads_eager.c). */
trd_status trd_box_drain(const trd_world *w, int32_t to, mailbox *box)
{
    trd_status st = TRD_OK;
    if (trd_threads_failed(w)) /* no new match once failed (threads_fail.c) */
        return st;
    pending send;
    int32_t scanned = box->nrings < TRD_EAGER_SCANNED ? box->nrings : TRD_EAGER_SCANNED;
    for (int32_t i = 0; i < scanned && st == TRD_OK; i++)
        while (st == TRD_OK && trd_eager_take(box->rings[i], &send))
            st = trd_box_send_arrived(to, box, &send);
    eager_ring *next;
    for (eager_ring *r = scanned < box->nrings ? trd_eager_queued(box) : NULL; r; r = next) {
        next = r->next_queued;
        trd_eager_unqueue(r);
        while (st == TRD_OK && trd_eager_take(r, &send))
            st = trd_box_send_arrived(to, box, &send);
    }
    return st;
}

/* A receive `me` is posted in its rank's box (box->mu held): it takes
 * the first waiting send it wants, or waits in the box. */
trd_status trd_box_recv_arrived(int32_t to, mailbox *box, const pending *me)
{
    int32_t other, i = trd_queue_find(&box->sends, me->peer, me->tag, me->sig, &other);
    if (other >= 0)
        return trd_threads_check_call(me->peer, trd_queue_at(&box->sends, other), to, me);
    if (i < 0)
        return trd_queue_push(&box->recvs, me);
    pending send = trd_queue_take(&box->sends, i);
    trd_status st = check_pair(send.peer, to, &send, me);
    return st == TRD_OK ? match_push(box, (match){.from = send.peer, .send = send, .recv = *me})
                        : st;
}

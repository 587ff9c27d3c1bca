/* threads_box.c: a mailbox of the threads wire - its queues of waiting
 * sends and posted receives, the matched pairs its rank has to copy, its
 * completions - and the matching rules (wire.h: per sender and tag in
 * sending order, receives in posting order, TRD_ANY_RANK; a message must
 * fit its receive and belong to the same call).  Every function here
 * runs with box->mu held; threads.c takes it and decides who copies. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "wire/threads_world.h"

/* items, an array of *cap elements of `size` bytes, twice as long (16 at
 * first; *cap updated), or NULL with items left as they were. */
static void *grown(void *items, size_t *cap, size_t size)
{
    size_t n = *cap ? 2 * *cap : 16;
    void *more = realloc(items, n * size);
    *cap = more ? n : *cap;
    return more;
}

static trd_status out_of_memory(void)
{
    return trd_fail(TRD_ENOMEM, "threads wire: out of memory");
}

static trd_status queue_push(queue *q, pending p)
{
    pending *more = q->len < q->cap ? q->items : grown(q->items, &q->cap, sizeof *more);
    if (!more)
        return out_of_memory();
    q->items = more;
    q->items[q->len++] = p;
    return TRD_OK;
}

pending trd_box_take(queue *q, size_t i)
{
    pending p = q->items[i];
    memmove(q->items + i, q->items + i + 1, (q->len - i - 1) * sizeof *q->items);
    q->len--;
    return p;
}

/* Appends a matched pair for the box's rank to copy; box->mu held. */
static trd_status match_push(mailbox *box, match m)
{
    if (box->mhead + box->mlen == box->mcap && box->mhead > 0) {
        memmove(box->matched, box->matched + box->mhead, box->mlen * sizeof *box->matched);
        box->mhead = 0;
    }
    match *more = box->mlen < box->mcap ? box->matched
                                         : grown(box->matched, &box->mcap, sizeof *more);
    if (!more)
        return out_of_memory();
    box->matched = more;
    box->matched[box->mhead + box->mlen++] = m;
    box_event(box);
    return TRD_OK;
}

/* Index of the first entry matching (peer, tag), or -1.  Receives may
 * accept any sender.  *other: the first entry of exactly that peer from
 * another call than sig, or -1 - a mismatch whatever its tag: two ranks in
 * matching calls never leave a message or receive of one call pending
 * into the next (a send completes when its receive copies it), so a
 * record of the peer's from another call is one the other rank's call
 * will never match (callsig.h). */
long trd_box_find(const queue *q, int32_t peer, int32_t tag, uint64_t sig, long *other)
{
    *other = -1;
    for (size_t i = 0; i < q->len; i++) {
        const pending *p = &q->items[i];
        if (p->peer == peer && peer != TRD_ANY_RANK && p->sig != sig) {
            *other = (long)i;
            return -1;
        }
        bool who = p->peer == peer || p->peer == TRD_ANY_RANK || peer == TRD_ANY_RANK;
        if (who && p->tag == tag)
            return (long)i;
    }
    return -1;
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
    long other, i = trd_box_find(&box->recvs, me->peer, me->tag, me->sig, &other);
    if (other >= 0)
        return trd_threads_check_call(me->peer, me, to, &box->recvs.items[other]);
    if (i < 0)
        return queue_push(&box->sends, *me);
    /* The receiver copies (t_wait), so that ranks copy their own receives
     * in parallel instead of the later-arriving one copying for both. */
    pending recv = trd_box_take(&box->recvs, (size_t)i);
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
    for (int32_t i = 0; i < box->nrings && st == TRD_OK; i++)
        while (st == TRD_OK && trd_eager_take(box->rings[i], &send))
            st = trd_box_send_arrived(to, box, &send);
    return st;
}

/* A receive `me` is posted in its rank's box (box->mu held): it takes
 * the first waiting send it wants, or waits in the box. */
trd_status trd_box_recv_arrived(int32_t to, mailbox *box, const pending *me)
{
    long other, i = trd_box_find(&box->sends, me->peer, me->tag, me->sig, &other);
    if (other >= 0)
        return trd_threads_check_call(me->peer, &box->sends.items[other], to, me);
    if (i < 0)
        return queue_push(&box->recvs, *me);
    pending send = trd_box_take(&box->sends, (size_t)i);
    trd_status st = check_pair(send.peer, to, &send, me);
    return st == TRD_OK ? match_push(box, (match){.from = send.peer, .send = send, .recv = *me})
                        : st;
}

/* threads_fail.c: failures of the threads wire (wire.h, "Failures").
 *
 * All ranks share one world, so a failure is the world's: the first one
 * (a deadline, a mismatch, a size error, or the runtime's abort) is
 * recorded under the world's lock and every rank that waits is woken;
 * from then on no wait, send, receive, claim, barrier or decision
 * succeeds, and each returns that failure's code with its message.
 *
 * Buffers.  A peer touches a rank's buffers only through that rank's
 * records: its sends waiting in the peers' mailboxes or matched there (a
 * peer copies or combines from them in its wait), and its receives a peer
 * claimed (the peer writes a combine into them).  So before a failed
 * call returns, abort takes this rank's sends out of every mailbox, gives
 * back the receives it claimed, and waits for the one copy a peer may be
 * making from its buffer (mailbox.copying) and for the claims of its
 * receives still being written (mailbox.claimed).  Both are set under the
 * mailbox lock that withdrawing takes, and neither starts once the world
 * has failed; each ends after one memcpy or one combine, which cannot
 * wait for anything: the wait is bounded. */
#include "wire/threads_world.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/error.h"

#define QUIESCE_NS 20000L /* one nap of a rank waiting for a peer's copy to end */

void trd_threads_fail(trd_world *w, int32_t rank, trd_status code, const char *msg)
{
    trd_lock_take(&w->mu);
    bool first = !w->failed;
    if (first) {
        w->fail_code = code;
        w->fail_rank = rank;
        snprintf(w->fail_msg, sizeof w->fail_msg, "%s", msg);
        atomic_store_explicit(&w->failed, true, memory_order_release);
    }
    trd_lock_give(&w->mu);
    if (!first)
        return;
    /* After the flag: a wait reads its word before it looks at the flag,
     * so it either sees the flag or sleeps on a word that changes. */
    trd_park_bump(&w->release); /* barriers, agreements */
    for (int32_t q = 0; q < w->size; q++)
        trd_park_bump(&w->box[q].events);
}

trd_status trd_threads_failure(const trd_world *w)
{
    return trd_fail(w->fail_code, "threads wire: rank %ld failed: %s", (long)w->fail_rank,
                    w->fail_msg);
}

trd_status trd_threads_fail_with(trd_world *w, int32_t rank, trd_status st)
{
    char why[sizeof w->fail_msg];
    snprintf(why, sizeof why, "%s", trd_errmsg());
    trd_threads_fail(w, rank, st, why);
    return trd_fail(st, "%s", why);
}

trd_status trd_threads_check_call(int32_t from, const pending *send, int32_t to,
                                  const pending *recv)
{
    if (send->sig == recv->sig)
        return TRD_OK;
    char a[256], b[256];
    trd_call_sig_text(send->call, a, sizeof a);
    trd_call_sig_text(recv->call, b, sizeof b);
    return trd_fail(TRD_EIO, "threads wire: mismatched collective calls: rank %ld sent "
                    "rank %ld a message (tag %ld) of %s, but rank %ld is in %s", (long)from,
                    (long)to, (long)send->tag, a, (long)to, b);
}

/* The mismatch of rank's call `mine` (signature sig) with peer's, which is
 * in call theirs: in a call of the same number with other arguments, or
 * (when rank waits for a message of that peer's) in a later one. */
static trd_status other_call(int32_t rank, const trd_call_sig *mine, int32_t peer, bool ahead)
{
    char text[256];
    trd_call_sig_text(mine, text, sizeof text);
    return trd_fail(TRD_EIO, "threads wire: mismatched collective calls: rank %ld is in "
                    "%s; rank %ld %s", (long)rank, text, (long)peer,
                    ahead ? "has gone on to a later call without sending it the message it "
                            "waits for"
                          : "in its call of that number, with other arguments (algorithm, "
                            "kind, root, count, element size or operator)");
}

trd_status trd_threads_check_peers(const trd_world *w, int32_t rank, const mailbox *box,
                                   const trd_call_sig *call)
{
    uint64_t sig = trd_call_sig_value(call);
    uint32_t seq = (uint32_t)sig;
    for (int32_t q = 0; q < w->size && sig != 0; q++) {
        uint64_t theirs = atomic_load_explicit(&w->now[q].sig, memory_order_relaxed);
        if ((uint32_t)theirs == seq && theirs != sig)
            return other_call(rank, call, q, false);
    }
    for (size_t i = 0; i < box->recvs.len; i++) {
        int32_t peer = box->recvs.items[i].peer;
        if (peer == TRD_ANY_RANK || box->recvs.items[i].sig != sig)
            continue;
        /* Acquire: the eager sends the peer made before its later call are
         * in their rings now (threads.c, check_peers_drained). */
        uint64_t theirs = atomic_load_explicit(&w->now[peer].sig, memory_order_acquire);
        if ((int32_t)((uint32_t)theirs - seq) > 0) /* its call number is past ours */
            return other_call(rank, call, peer, true);
    }
    return TRD_OK;
}

trd_status trd_threads_wire_failed(void *ctx)
{
    const rank_ctx *r = ctx;
    return trd_threads_failed(r->world) ? trd_threads_failure(r->world) : TRD_OK;
}

/* Removes the records of `rank`'s sends from a queue (box->mu held). */
static void drop_sends(queue *q, int32_t rank)
{
    size_t kept = 0;
    for (size_t i = 0; i < q->len; i++)
        if (q->items[i].peer != rank)
            q->items[kept++] = q->items[i];
    q->len = kept;
}

/* ...and the pairs of the box's ring that `rank` sent (box->mu held). */
static void drop_matched(mailbox *box, int32_t rank)
{
    size_t kept = 0;
    for (size_t i = 0; i < box->mlen; i++)
        if (box->matched[box->mhead + i].from != rank)
            box->matched[box->mhead + kept++] = box->matched[box->mhead + i];
    box->mlen = kept;
}

/* The receives of peers this rank claimed and did not fill: given back. */
static void release_claims(rank_ctx *r)
{
    for (int32_t i = 0; i < r->nclaims; i++) {
        if (!r->claims[i].open)
            continue;
        mailbox *box = &r->world->box[r->claims[i].peer];
        trd_lock_take(&box->mu);
        box->claimed--;
        box_unlock(box);
        r->claims[i].open = false;
    }
    r->nclaims = r->open = 0;
}

static void nap(void)
{
    struct timespec ts = {0, QUIESCE_NS};
    nanosleep(&ts, NULL);
}

/* Whether a peer still touches a buffer of rank through box (box->mu held). */
static bool busy(const mailbox *box, int32_t q, int32_t rank)
{
    return box->copying == rank || (q == rank && box->claimed > 0);
}

void trd_threads_wire_abort(void *ctx, trd_status code, const char *why)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    trd_threads_fail(w, r->rank, code, why); /* no new match, copy or claim from here on */
    release_claims(r);
    for (int32_t q = 0; q < w->size; q++) {
        mailbox *box = &w->box[q];
        trd_lock_take(&box->mu);
        drop_sends(&box->sends, r->rank);
        drop_matched(box, r->rank);
        if (q == r->rank)
            box->recvs.len = 0;
        while (busy(box, q, r->rank)) {
            box_unlock(box);
            nap();
            trd_lock_take(&box->mu);
        }
        box_unlock(box);
    }
}

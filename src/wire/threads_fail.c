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

#include <stdarg.h>
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
    for (int32_t i = trd_queue_first(&box->recvs); i >= 0; i = trd_queue_next(&box->recvs, i)) {
        const pending *recv = trd_queue_at(&box->recvs, i);
        int32_t peer = recv->peer;
        if (peer == TRD_ANY_RANK || recv->sig != sig)
            continue;
        /* Acquire: the eager sends the peer made before its later call are
         * in their rings now (threads.c, check_peers_drained). */
        uint64_t theirs = atomic_load_explicit(&w->now[peer].sig, memory_order_acquire);
        if ((int32_t)((uint32_t)theirs - seq) > 0) /* its call number is past ours */
            return other_call(rank, call, peer, true);
    }
    return TRD_OK;
}

/* Appends printf-style text at *at of buf[0..size) (truncated at the end). */
static void append(char *buf, size_t size, size_t *at, const char *fmt, ...) TRD_PRINTF(4, 5);
static void append(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
    if (*at >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, size - *at, fmt, ap);
    va_end(ap);
    *at += n > 0 ? (size_t)n : 0;
}

/* The ranks listed by `silent` (at most 8 named, then a count). */
static void append_ranks(char *buf, size_t size, size_t *at, const trd_world *w,
                         bool (*silent)(const trd_world *, int32_t, uint32_t), uint32_t what,
                         const char *intro, const char *each)
{
    int32_t named = 0, more = 0;
    for (int32_t q = 0; q < w->size; q++) {
        if (!silent(w, q, what))
            continue;
        if (named++ < 8)
            append(buf, size, at, "%s%ld", named == 1 ? intro : ", ", (long)q);
        else
            more++;
        if (named <= 8 && each)
            append(buf, size, at, each,
                   (long)(uint32_t)atomic_load_explicit(&w->now[q].sig, memory_order_relaxed));
    }
    if (more)
        append(buf, size, at, " and %ld more", (long)more);
}

/* Rank q is not in the call numbered seq yet (its number is behind). */
static bool behind(const trd_world *w, int32_t q, uint32_t seq)
{
    uint32_t theirs = (uint32_t)atomic_load_explicit(&w->now[q].sig, memory_order_relaxed);
    return (int32_t)(theirs - seq) < 0;
}

static bool missing_at(const trd_world *w, int32_t q, uint32_t gen)
{
    return atomic_load_explicit(&w->now[q].barrier, memory_order_acquire) != gen + 1;
}

/* The first record of `peer` in queue q and how many it has there. */
static int32_t first_of(const queue *q, int32_t peer, size_t *count)
{
    int32_t first = -1;
    *count = 0;
    for (int32_t i = trd_queue_first(q); i >= 0; i = trd_queue_next(q, i))
        if (trd_queue_at(q, i)->peer == peer && (*count)++ == 0)
            first = i;
    return first;
}

trd_status trd_threads_deadline(trd_world *w, int32_t rank, double waited)
{
    char why[sizeof w->fail_msg];
    size_t at = 0, recvs = 0, sends = 0;
    append(why, sizeof why, &at, "threads wire: rank %ld waited %g s, its deadline, and "
           "nothing completed: ", (long)rank, waited);
    mailbox *own = &w->box[rank];
    trd_lock_take(&own->mu);
    int32_t r = trd_queue_first(&own->recvs);
    recvs = own->recvs.len;
    if (r >= 0) {
        const pending *p = trd_queue_at(&own->recvs, r);
        append(why, sizeof why, &at, "%zu receive%s posted, the first from ", recvs,
               recvs == 1 ? "" : "s");
        if (p->peer == TRD_ANY_RANK)
            append(why, sizeof why, &at, "any rank (tag %ld)", (long)p->tag);
        else
            append(why, sizeof why, &at, "rank %ld (tag %ld)", (long)p->peer, (long)p->tag);
    }
    box_unlock(own);
    /* its own sends that no receive has taken, box by box (one lock at a time) */
    int32_t to = -1, tag = 0;
    for (int32_t q = 0; q < w->size; q++) {
        if (q == rank)
            continue;
        mailbox *box = &w->box[q];
        size_t n;
        trd_lock_take(&box->mu);
        int32_t i = first_of(&box->sends, rank, &n);
        if (i >= 0 && to < 0) {
            to = q;
            tag = trd_queue_at(&box->sends, i)->tag;
        }
        sends += n;
        box_unlock(box);
    }
    if (sends > 0)
        append(why, sizeof why, &at, "%s%zu send%s to peers not received, the first to rank %ld "
               "(tag %ld)", recvs ? "; " : "", sends, sends == 1 ? "" : "s", (long)to,
               (long)tag);
    if (recvs == 0 && sends == 0)
        append(why, sizeof why, &at, "no receive posted and no send waiting");
    uint32_t seq = (uint32_t)atomic_load_explicit(&w->now[rank].sig, memory_order_relaxed);
    size_t before = at;
    append_ranks(why, sizeof why, &at, w, behind, seq,
                 "; ranks that have not begun this call: ", " (in call %ld)");
    if (at == before)
        append(why, sizeof why, &at, "; every rank has begun this call");
    trd_threads_fail(w, rank, TRD_ETIMEDOUT, why);
    return trd_fail(TRD_ETIMEDOUT, "%s", why);
}

trd_status trd_threads_barrier_late(trd_world *w, int32_t rank, uint32_t gen)
{
    char why[sizeof w->fail_msg];
    size_t at = 0;
    append(why, sizeof why, &at, "threads wire: rank %ld waited at a barrier past its "
           "deadline", (long)rank);
    append_ranks(why, sizeof why, &at, w, missing_at, gen, ": ranks that did not arrive: ",
                 " (in call %ld)");
    trd_threads_fail(w, rank, TRD_ETIMEDOUT, why);
    return trd_fail(TRD_ETIMEDOUT, "%s", why);
}

trd_status trd_threads_wire_failed(void *ctx)
{
    const rank_ctx *r = ctx;
    return trd_threads_failed(r->world) ? trd_threads_failure(r->world) : TRD_OK;
}

/* Removes the pairs of the box's ring that `rank` sent (box->mu held). */
static void drop_matched(mailbox *box, int32_t rank)
{
    size_t kept = 0;
    for (size_t i = 0; i < box->mlen; i++) {
        const match *m = &box->matched[(box->mhead + i) & (box->mcap - 1)];
        if (m->from != rank)
            box->matched[(box->mhead + kept++) & (box->mcap - 1)] = *m;
    }
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
        trd_queue_drop_peer(&box->sends, r->rank);
        drop_matched(box, r->rank);
        if (q == r->rank)
            trd_queue_clear(&box->recvs);
        while (busy(box, q, r->rank)) {
            box_unlock(box);
            nap();
            trd_lock_take(&box->mu);
        }
        box_unlock(box);
    }
}

/* threads.c: the threads wire (wire.h) - ranks are threads of one process,
 * the embedded default: no launcher, no MPI.
 *
 * Every rank has a mailbox guarded by one lock (trd_lock, threads_park.c:
 * a spin, then a futex): the sends posted to it that no receive has taken
 * yet, its posted receives that no send has matched yet, the matched
 * pairs it has still to copy, and its queue of completed steps (its
 * queues and matching rules: threads_box.c).  A send is a rendezvous:
 * whoever arrives second (the sender finding a posted receive, or the
 * receiver finding a waiting send) takes the pair out of the mailbox
 * under the lock; the receiving rank's thread copies the bytes outside it
 * (one memcpy, no intermediate buffer, in its next wait), then completes
 * both ends.  So a send completes once its bytes are in the receiver's
 * buffer, the receive at the same moment, and every rank copies its own
 * receives: two ranks exchanging large buffers copy in parallel.  A
 * consuming receive (wire.h irecv_consume) runs its function on the
 * sender's buffer in place of the copy.  A rank may also claim a posted
 * receive before it has the bytes (wire.h claim_recv) and write them into
 * the receiver's buffer itself: then nobody copies at all.  A small send
 * is eager instead (trd_eager_allowed): its bytes travel in its record,
 * it completes when posted, and it reaches the mailbox through a ring of
 * its sender's without taking the lock (threads_eager.c; trd_box_drain
 * takes it in before anything else is matched there).  Mailboxes lie on
 * cache lines of their own; no lock is shared by all ranks.  Waits poll,
 * then sleep on a futex (threads_park.c).
 *
 * Every record carries the signature of the call that posted it
 * (callsig.h): a send and a receive of different calls are an error, not
 * a match.  Barriers, agreements and the dynamic policies' shared state
 * are in threads_sync.c; failures, and how a failed call takes its
 * records back before it returns, in threads_fail.c.  Test hooks: a
 * random delay before every send (so dynamic algorithms meet many
 * pairings) and a rank that never takes part (a dead rank: the others
 * must time out). */
#include "wire/threads.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "wire/threads_world.h"

#define CHECK_S 0.02   /* a sleeping wait looks for peers in other calls this often */
#define EAGER_QUEUE 64 /* most sends a box holds before small ones wait for a receive */

double trd_threads_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Lets box->mu go; a failure of this rank's own becomes the world's. */
static trd_status unlock_failing(mailbox *box, rank_ctx *r, trd_status st)
{
    box_unlock(box);
    return st == TRD_OK ? st : trd_threads_fail_with(r->world, r->rank, st);
}

/* Moves the bytes of a matched pair (the receiving rank's thread, its box
 * marked copying from the sender) and completes the send, unless it was
 * eager (complete already). */
static trd_status deliver(trd_world *w, int32_t from, const pending *send, const pending *recv)
{
    trd_status st = TRD_OK;
    const void *src = send->eager ? send->small : send->buf;
    if (recv->consume)
        st = recv->consume(recv->arg, src, send->bytes);
    else if (send->bytes > 0)
        memcpy(recv->buf, src, send->bytes);
    if (st != TRD_OK || send->eager)
        return st;
    return trd_box_complete(&w->box[from], send->id, -1);
}

/* xorshift64*: the delay of each send (tests only). */
static void inject_delay(rank_ctx *r)
{
    double max = r->delay_max_us;
    if (max <= 0)
        return;
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    double u = (double)((r->rng * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
    long ns = (long)(u * max * 1e3);
    struct timespec ts = {.tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L};
    nanosleep(&ts, NULL);
}

/* A record of rank r's current call (wire.h set_call). */
static pending stamped(const rank_ctx *r, pending p)
{
    p.sig = trd_call_sig_value(r->call);
    p.call = r->call;
    return p;
}

/* The send `me` of rank r into box, which it matched or joined; box->mu
 * held, let go here.  An eager send completes at once. */
static trd_status posted_send(rank_ctx *r, mailbox *box, const pending *me, trd_status st)
{
    box_unlock(box);
    if (st != TRD_OK)
        return trd_threads_fail_with(r->world, r->rank, st);
    return me->eager ? trd_fifo_push(&r->sent, me->id, -1) : TRD_OK;
}

static trd_status t_isend(void *ctx, int32_t peer, int32_t tag, const void *buf, size_t bytes,
                          int32_t id)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    inject_delay(r);
    mailbox *box = &w->box[peer];
    pending me = stamped(r, (pending){.peer = r->rank, .tag = tag, .id = id, .buf = (void *)buf,
                                      .bytes = bytes});
    bool eager = trd_eager_allowed(w, peer, &me);
    if (trd_threads_failed(w))
        return trd_threads_failure(w);
    if (eager && trd_eager_post(r, peer, &me, buf)) {
        trd_park_bump(&box->events);
        return trd_fifo_push(&r->sent, me.id, -1);
    }
    trd_lock_take(&box->mu);
    if (trd_threads_failed(w)) {
        box_unlock(box);
        return trd_threads_failure(w);
    }
    trd_status st = trd_box_drain(w, peer, box);
    if (st == TRD_OK && eager && box->sends.len < EAGER_QUEUE)
        trd_eager_fill(&me, buf);
    if (st == TRD_OK)
        st = trd_box_send_arrived(peer, box, &me);
    return posted_send(r, box, &me, st);
}

/* Posts receive `me` of rank r, or matches the waiting send it takes; the
 * bytes move in r's next wait, not here, so a rank posts all of its ready
 * steps before it spends time copying (a peer may then claim them,
 * t_claim_recv). */
static trd_status post_recv(rank_ctx *r, pending me)
{
    trd_world *w = r->world;
    mailbox *box = &w->box[r->rank];
    me = stamped(r, me);
    trd_lock_take(&box->mu);
    if (trd_threads_failed(w)) {
        box_unlock(box);
        return trd_threads_failure(w);
    }
    trd_status st = trd_box_drain(w, r->rank, box);
    if (st == TRD_OK)
        st = trd_box_recv_arrived(r->rank, box, &me);
    return unlock_failing(box, r, st);
}

static trd_status grow_claims(rank_ctx *r)
{
    if (r->nclaims < r->cap)
        return TRD_OK;
    int32_t cap = r->cap ? 2 * r->cap : 8;
    claim *grown = realloc(r->claims, (size_t)cap * sizeof *grown);
    if (!grown)
        return trd_fail(TRD_ENOMEM, "threads wire: out of memory");
    r->claims = grown;
    r->cap = cap;
    return TRD_OK;
}

/* Takes the receive of `peer` that a send of `bytes` bytes with `tag`
 * would match now, if it is posted into a buffer of exactly that size:
 * the same match as t_isend's, made before the bytes exist.  The
 * receiver's box counts the claim until it is completed or given back
 * (threads_fail.c).  A message small enough to be eager is not claimed:
 * a claim takes the peer's lock twice, where an eager send writes only
 * its ring. */
static trd_status t_claim_recv(void *ctx, int32_t peer, int32_t tag, size_t bytes, void **dst,
                               int32_t *handle)
{
    rank_ctx *r = ctx;
    mailbox *box = &r->world->box[peer];
    *dst = NULL;
    if (bytes <= TRD_EAGER_BYTES)
        return TRD_OK;
    trd_status st = grow_claims(r);
    if (st != TRD_OK)
        return st;
    pending me = stamped(r, (pending){.peer = r->rank, .tag = tag, .bytes = bytes});
    trd_lock_take(&box->mu);
    if (trd_threads_failed(r->world)) {
        box_unlock(box);
        return trd_threads_failure(r->world);
    }
    st = trd_box_drain(r->world, peer, box);
    int32_t other, i = trd_queue_find(&box->recvs, r->rank, tag, me.sig, &other);
    const pending *want = i >= 0 ? trd_queue_at(&box->recvs, i) : NULL;
    if (st == TRD_OK && (other >= 0 || want))
        st = trd_threads_check_call(r->rank, &me, peer,
                                    trd_queue_at(&box->recvs, other >= 0 ? other : i));
    if (st == TRD_OK && want && !want->consume && want->bytes == bytes) {
        *handle = r->nclaims;
        r->claims[r->nclaims++] = (claim){.peer = peer, .open = true,
                                          .recv = trd_queue_take(&box->recvs, i)};
        r->open++;
        r->claimed++;
        box->claimed++;
        *dst = r->claims[*handle].recv.buf;
    }
    return unlock_failing(box, r, st);
}

/* The send of a claimed receive, its bytes written: completes both ends. */
static trd_status t_isend_claimed(void *ctx, int32_t handle, int32_t id)
{
    rank_ctx *r = ctx;
    if (handle < 0 || handle >= r->nclaims || !r->claims[handle].open)
        return trd_fail(TRD_EINVAL, "threads wire: rank %ld: no claim %ld", (long)r->rank,
                        (long)handle);
    claim *c = &r->claims[handle];
    mailbox *box = &r->world->box[c->peer];
    trd_lock_take(&box->mu);
    box->claimed--; /* written: the receiver may go */
    c->open = false;
    bool failed = trd_threads_failed(r->world);
    trd_status st = failed ? trd_threads_failure(r->world)
                           : trd_box_complete_locked(box, c->recv.id, r->rank);
    box_unlock(box);
    if (st == TRD_OK)
        st = trd_box_complete(&r->world->box[r->rank], id, -1);
    if (--r->open == 0)
        r->nclaims = 0;
    return st;
}

void trd_wire_threads_delay(trd_wire *wire, double max_us, uint64_t seed)
{
    rank_ctx *r = wire->ctx;
    r->delay_max_us = max_us;
    r->rng = (seed + 1) * 0x9E3779B97F4A7C15ULL + (uint64_t)r->rank;
}

int64_t trd_wire_threads_claims(const trd_wire *wire)
{
    return ((const rank_ctx *)wire->ctx)->claimed;
}

static trd_status t_irecv(void *ctx, int32_t peer, int32_t tag, void *buf, size_t bytes,
                          int32_t id)
{
    return post_recv(ctx, (pending){.peer = peer, .tag = tag, .id = id, .buf = buf,
                                    .bytes = bytes});
}

static trd_status t_irecv_consume(void *ctx, int32_t peer, int32_t tag, size_t bytes,
                                  int32_t id, trd_consume_fn consume, void *arg)
{
    return post_recv(ctx, (pending){.peer = peer, .tag = tag, .id = id, .bytes = bytes,
                                    .consume = consume, .arg = arg});
}

static bool box_ready(const rank_ctx *r, const mailbox *box)
{
    return box->done.len > 0 || box->mlen > 0 || trd_threads_failed(r->world);
}

/* Box->mu held: trd_threads_check_peers, with a second look after a
 * drain when a peer seems past the call it should send in: its eager
 * send may have reached the ring after the last drain and before it
 * began its next call (t_set_call). */
static trd_status check_peers_drained(rank_ctx *r, mailbox *box)
{
    trd_status st = trd_threads_check_peers(r->world, r->rank, box, r->call);
    if (st == TRD_OK)
        return st;
    st = trd_box_drain(r->world, r->rank, box);
    return st == TRD_OK ? trd_threads_check_peers(r->world, r->rank, box, r->call) : st;
}

/* Box->mu held: waits until the box has an event, the world failed or
 * the timeout (counted from the first sleep: the clock is read only when
 * the wait has to sleep, wire.h).  Every event bumps box->events under
 * the lock, so the count read under it before letting it go changes with
 * the next one: first polled (threads_park.c), then slept on.  A wait
 * that has slept CHECK_S looks, then every CHECK_S, whether a peer it
 * waits for is in another call (*st: the mismatch): a look reads every
 * rank's call and every posted receive, and made before each sleep it
 * cost a pipeline of 65 536 segments, whose every wait sleeps on a loaded
 * machine, the square of its receives. */
static bool await_event(rank_ctx *r, mailbox *box, double timeout_s, trd_status *st)
{
    double deadline = 0, look = 0;
    bool spun = false;
    for (;;) {
        /* Read before the flag is looked at (trd_threads_fail bumps after
         * setting it) and under the lock (events are bumped under it). */
        uint32_t seen = atomic_load_explicit(&box->events.seq, memory_order_acquire);
        *st = trd_box_drain(r->world, r->rank, box);
        if (*st != TRD_OK)
            return false;
        if (box_ready(r, box))
            break;
        if (!spun) {
            spun = true;
            box_unlock(box);
            trd_park_spin(&box->events, seen);
            trd_lock_take(&box->mu);
            continue;
        }
        double now = trd_threads_now();
        deadline = deadline > 0 ? deadline : now + timeout_s;
        look = look > 0 ? look : now + CHECK_S;
        if (now >= deadline)
            break;
        if (now >= look) {
            look = now + CHECK_S;
            if ((*st = check_peers_drained(r, box)) != TRD_OK)
                return false;
        }
        box_unlock(box);
        trd_park_sleep(&box->events, seen, now + CHECK_S < deadline ? CHECK_S : deadline - now);
        trd_lock_take(&box->mu);
    }
    return box_ready(r, box);
}

/* Box->mu held: copies the oldest matched pair (a send matched our
 * receive) with the box marked copying from its sender, and completes it. */
static trd_status copy_next(rank_ctx *r, mailbox *box)
{
    match m = box->matched[box->mhead];
    box->mhead = (box->mhead + 1) & (box->mcap - 1);
    box->mlen--;
    box->copying = m.from;
    box_unlock(box);
    trd_status st = deliver(r->world, m.from, &m.send, &m.recv);
    trd_lock_take(&box->mu);
    box->copying = -1;
    return st == TRD_OK ? trd_box_complete_locked(box, m.recv.id, m.from) : st;
}

static trd_status t_wait(void *ctx, double timeout_s, int32_t *id, int32_t *from)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    mailbox *box = &w->box[r->rank];
    trd_status st = TRD_OK;
    trd_completion c = {0, 0};
    if (!trd_threads_failed(w) && trd_fifo_pop(&r->sent, &c)) {
        *id = c.id;
        *from = c.from;
        return TRD_OK;
    }
    trd_lock_take(&box->mu);
    while (st == TRD_OK && await_event(r, box, timeout_s, &st) && !trd_threads_failed(w) &&
           box->mlen > 0)
        st = copy_next(r, box);
    if (st == TRD_OK && trd_threads_failed(w)) {
        box_unlock(box);
        return trd_threads_failure(w);
    }
    if (st == TRD_OK && !trd_fifo_pop(&box->done, &c)) {
        box_unlock(box);
        return trd_threads_deadline(w, r->rank, timeout_s);
    }
    if (st != TRD_OK)
        return unlock_failing(box, r, st);
    box_unlock(box);
    *id = c.id;
    *from = c.from;
    return TRD_OK;
}

static double t_now(void *ctx)
{
    (void)ctx;
    return trd_threads_now();
}

/* The world learns the call each rank is in as it begins, before its
 * first post: for the eager sends of its peers (trd_eager_allowed) and their
 * checks (trd_threads_check_peers).  Release: a peer that sees the call
 * also sees the eager sends of the calls before it in their rings
 * (check_peers_drained). */
static void t_set_call(void *ctx, const trd_call_sig *call)
{
    rank_ctx *r = ctx;
    r->call = call;
    atomic_store_explicit(&r->world->now[r->rank].sig, trd_call_sig_value(call),
                          memory_order_release);
}

static void free_world(trd_world *w)
{
    for (int32_t r = 0; w->box && r < w->size; r++) {
        trd_queue_free(&w->box[r].sends);
        trd_queue_free(&w->box[r].recvs);
        free(w->box[r].matched);
        free(w->box[r].done.items);
        trd_eager_free(&w->box[r]);
    }
    free(w->box);
    free(w->now);
    free(w);
}

static void t_free(void *ctx)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    trd_lock_take(&w->mu);
    bool last = --w->refs == 0;
    trd_lock_give(&w->mu);
    if (last) {
        trd_threads_ranks_add(-(int64_t)w->size);
        free_world(w);
    }
    free(r->claims);
    free(r->out);
    free(r->sent.items);
    free(r);
}

void trd_threads_opts_init(trd_threads_opts *opts)
{
    *opts = (trd_threads_opts){.timeout_s = 30.0};
}

static trd_status check_opts(int32_t p, const trd_threads_opts *o)
{
    if (p < 1 || p > TRD_THREADS_MAX)
        return trd_fail(TRD_EINVAL, "p = %ld ranks is out of range for the threads wire: "
                        "need 1 <= p <= %d", (long)p, TRD_THREADS_MAX);
    if (!(o->timeout_s > 0) || o->timeout_s > 1e6)
        return trd_fail(TRD_EINVAL, "timeout = %g s is invalid: need 0 < timeout <= 1e6",
                        o->timeout_s);
    return TRD_OK;
}

/* n zeroed objects of `size` bytes each, on cache lines of their own. */
static void *lines_alloc(size_t n, size_t size)
{
    size_t bytes = (n * size + TRD_LINE - 1) / TRD_LINE * TRD_LINE;
    void *p = aligned_alloc(TRD_LINE, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

static trd_status new_world(trd_world **out, int32_t p, const trd_threads_opts *opts)
{
    trd_world *w = lines_alloc(1, sizeof *w);
    if (!w)
        return trd_fail(TRD_ENOMEM, "threads wire: out of memory");
    *w = (trd_world){.size = p, .refs = p, .opts = *opts};
    w->box = lines_alloc((size_t)p, sizeof *w->box);
    w->now = lines_alloc((size_t)p, sizeof *w->now);
    for (int32_t r = 0; w->box && r < p; r++) {
        w->box[r].copying = -1;
        w->box[r].sends = w->box[r].recvs = TRD_QUEUE_EMPTY;
    }
    if (!w->box || !w->now) {
        w->size = w->box ? p : 0;
        free_world(w);
        return trd_fail(TRD_ENOMEM, "threads wire: cannot create %ld mailboxes", (long)p);
    }
    trd_threads_ranks_add(p);
    *out = w;
    return TRD_OK;
}

static trd_wire wire_of(rank_ctx *r)
{
    return (trd_wire){.ctx = r, .rank = r->rank, .size = r->world->size, .name = "threads",
                      .group = r->world, .node_size = r->world->size, .node_ranks = NULL,
                      .async = true,
                      .isend = t_isend, .irecv = t_irecv, .irecv_consume = t_irecv_consume,
                      .claim_recv = t_claim_recv, .isend_claimed = t_isend_claimed,
                      .wait = t_wait, .now = t_now,
                      .decide = trd_threads_decide, .end_dynamic = trd_threads_end_dynamic,
                      .barrier = trd_threads_barrier, .agree = trd_threads_agree,
                      .set_call = t_set_call, .failed = trd_threads_wire_failed,
                      .abort = trd_threads_wire_abort, .free = t_free};
}

trd_status trd_wire_threads_create(trd_wire *wires, int32_t p, const trd_threads_opts *opts)
{
    trd_threads_opts defaults;
    trd_threads_opts_init(&defaults);
    const trd_threads_opts *o = opts ? opts : &defaults;
    trd_world *w = NULL;
    trd_status st = check_opts(p, o);
    if (st != TRD_OK || (st = new_world(&w, p, o)) != TRD_OK)
        return st;
    for (int32_t r = 0; r < p; r++) {
        rank_ctx *ctx = malloc(sizeof *ctx);
        if (!ctx) {
            for (int32_t q = 0; q < r; q++)
                free(wires[q].ctx);
            free_world(w);
            return trd_fail(TRD_ENOMEM, "threads wire: out of memory");
        }
        *ctx = (rank_ctx){.world = w, .rank = r};
        wires[r] = wire_of(ctx);
    }
    return TRD_OK;
}

const trd_threads_opts *trd_wire_threads_opts(const trd_wire *wire)
{
    return &((const rank_ctx *)wire->ctx)->world->opts;
}

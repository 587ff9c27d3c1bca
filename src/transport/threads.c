/* threads.c: the threads wire (wire.h) - ranks are threads of one process,
 * the embedded default: no launcher, no MPI.
 *
 * Every rank has a mailbox guarded by one mutex: the sends posted to it
 * that no receive has taken yet, its posted receives that no send has
 * matched yet, the matched pairs it has still to copy, and its queue of
 * completed steps.  A send is a rendezvous: whoever arrives second (the
 * sender finding a posted receive, or the receiver finding a waiting send)
 * takes the pair out of the mailbox under the lock; the receiving rank's
 * thread copies the bytes outside it (one memcpy, no intermediate buffer,
 * in its next wait), then completes both ends.  So a send completes once its bytes are in the
 * receiver's buffer, the receive at the same moment, and every rank copies
 * its own receives: two ranks exchanging large buffers copy in parallel.
 * A consuming receive (wire.h irecv_consume) runs its function on the
 * sender's buffer in place of the copy.  A rank may also claim a posted
 * receive before it has the bytes (wire.h claim_recv) and write them
 * into the receiver's buffer itself: then nobody copies at all.
 *
 * Dynamic policies share one state for the whole world, behind a mutex
 * (decide).  Barriers are counted under a mutex with a generation, so a
 * wait can time out (pthread_barrier_t cannot).  Test hooks: a random
 * delay before every send (so dynamic algorithms meet many pairings) and a
 * rank that never takes part (a dead rank: the others must time out). */
#include "transport/threads.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fifo.h"

#define SPIN_LOOPS 2000 /* pauses a wait spins before sleeping (spin_for_event) */

/* One end of a transfer waiting in a mailbox. */
typedef struct pending {
    int32_t peer; /* sends: the sender; receives: the sender wanted or TRD_ANY_RANK */
    int32_t tag, id;
    void *buf;
    size_t bytes;
    trd_consume_fn consume; /* receives only: takes the bytes instead of buf */
    void *arg;
} pending;

typedef struct queue {
    pending *items;
    size_t len, cap;
} queue;

/* A send matched with a receive whose rank has not copied it yet. */
typedef struct match {
    int32_t from;
    pending send, recv;
} match;

typedef struct mailbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    queue sends, recvs;
    match *matched; /* a ring: the pairs its receiver must copy */
    size_t mhead, mlen, mcap;
    trd_fifo done;
    _Atomic uint32_t events; /* bumped with every match and completion (spin_for_event) */
} mailbox;

typedef struct trd_world {
    int32_t size;
    int refs;
    bool spin; /* a core per rank: waits spin before sleeping (spin_for_event) */
    trd_threads_opts opts;
    mailbox *box;
    pthread_mutex_t mu; /* refs, barrier, the shared policy */
    pthread_cond_t cv;
    int32_t arrived;
    uint64_t generation;
    const trd_policy *shared; /* the policy of the current dynamic call */
    int64_t shared_call;
} trd_world;

/* A receive of a peer taken by a send of this rank before the send's
 * bytes exist (t_claim_recv): the sender writes them into recv.buf. */
typedef struct claim {
    int32_t peer;
    pending recv;
} claim;

typedef struct rank_ctx {
    trd_world *world;
    int32_t rank;
    uint64_t rng; /* delay injection */
    claim *claims; /* by handle; emptied when none is open */
    int32_t nclaims, cap, open;
    int64_t claimed; /* claims made so far (trd_wire_threads_claims) */
} rank_ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CLOCK_MONOTONIC deadline for pthread_cond_timedwait (the condition
 * variables are created with that clock). */
static struct timespec abs_time(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    return ts;
}

static int init_cond(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc == 0)
        rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

static trd_status queue_push(queue *q, pending p)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        pending *grown = realloc(q->items, cap * sizeof *grown);
        if (!grown)
            return trd_fail(TRD_ENOMEM, "threads transport: out of memory");
        q->items = grown;
        q->cap = cap;
    }
    q->items[q->len++] = p;
    return TRD_OK;
}

static pending queue_take(queue *q, size_t i)
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
    if (box->mlen == box->mcap) {
        size_t cap = box->mcap ? 2 * box->mcap : 16;
        match *grown = realloc(box->matched, cap * sizeof *grown);
        if (!grown)
            return trd_fail(TRD_ENOMEM, "threads transport: out of memory");
        box->matched = grown;
        box->mcap = cap;
    }
    box->matched[box->mhead + box->mlen++] = m;
    atomic_fetch_add_explicit(&box->events, 1, memory_order_release);
    return TRD_OK;
}

/* Index of the first entry matching (peer, tag), or -1.  Receives may
 * accept any sender. */
static long queue_find(const queue *q, int32_t peer, int32_t tag, bool any_ok)
{
    for (size_t i = 0; i < q->len; i++) {
        const pending *p = &q->items[i];
        bool who = p->peer == peer || (any_ok && (p->peer == TRD_ANY_RANK || peer == TRD_ANY_RANK));
        if (who && p->tag == tag)
            return (long)i;
    }
    return -1;
}

/* Queues a completion for the rank owning box; the caller holds box->mu. */
static trd_status complete_locked(mailbox *box, int32_t id, int32_t from)
{
    trd_status st = trd_fifo_push(&box->done, id, from);
    atomic_fetch_add_explicit(&box->events, 1, memory_order_release);
    pthread_cond_signal(&box->cv);
    return st;
}

static trd_status complete(mailbox *box, int32_t id, int32_t from)
{
    pthread_mutex_lock(&box->mu);
    trd_status st = complete_locked(box, id, from);
    pthread_mutex_unlock(&box->mu);
    return st;
}

/* A message must fit its receive (a consuming one: exactly). */
static trd_status check_sizes(int32_t from, int32_t to, const pending *send, const pending *recv)
{
    if (send->bytes > recv->bytes || (recv->consume && send->bytes != recv->bytes))
        return trd_fail(TRD_EIO, "threads transport: rank %ld sent %zu bytes to rank %ld, "
                        "which expected %s%zu", (long)from, send->bytes, (long)to,
                        recv->consume ? "exactly " : "at most ", recv->bytes);
    return TRD_OK;
}

/* Moves the bytes of a matched pair and completes both ends. */
static trd_status deliver(trd_world *w, int32_t from, int32_t to, const pending *send,
                          const pending *recv)
{
    trd_status st = check_sizes(from, to, send, recv);
    if (st != TRD_OK)
        return st;
    if (recv->consume)
        st = recv->consume(recv->arg, send->buf, send->bytes);
    else if (send->bytes > 0)
        memcpy(recv->buf, send->buf, send->bytes);
    if (st != TRD_OK)
        return st;
    st = complete(&w->box[to], recv->id, from);
    return st != TRD_OK ? st : complete(&w->box[from], send->id, -1);
}

/* xorshift64*: the delay of each send (tests only). */
static void inject_delay(rank_ctx *r)
{
    double max = r->world->opts.delay_max_us;
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

static trd_status t_isend(void *ctx, int32_t peer, int32_t tag, const void *buf, size_t bytes,
                          int32_t id)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    inject_delay(r);
    mailbox *box = &w->box[peer];
    pending me = {.peer = r->rank, .tag = tag, .id = id, .buf = (void *)buf, .bytes = bytes};
    pthread_mutex_lock(&box->mu);
    long i = queue_find(&box->recvs, r->rank, tag, true);
    if (i < 0) {
        trd_status st = queue_push(&box->sends, me);
        pthread_mutex_unlock(&box->mu);
        return st;
    }
    /* The receiver copies (t_wait), so that ranks copy their own receives
     * in parallel instead of the later-arriving one copying for both. */
    pending recv = queue_take(&box->recvs, (size_t)i);
    trd_status st = check_sizes(r->rank, peer, &me, &recv);
    if (st == TRD_OK)
        st = match_push(box, (match){.from = r->rank, .send = me, .recv = recv});
    pthread_cond_signal(&box->cv);
    pthread_mutex_unlock(&box->mu);
    return st;
}

/* Posts receive `me` of rank r, or matches the waiting send it takes; the
 * bytes move in r's next wait, not here, so a rank posts all of its ready
 * steps before it spends time copying (a peer may then claim them,
 * t_claim_recv). */
static trd_status post_recv(rank_ctx *r, pending me)
{
    trd_world *w = r->world;
    mailbox *box = &w->box[r->rank];
    int32_t peer = me.peer, tag = me.tag;
    pthread_mutex_lock(&box->mu);
    long i = queue_find(&box->sends, peer, tag, true);
    trd_status st;
    if (i < 0) {
        st = queue_push(&box->recvs, me);
    } else {
        pending send = queue_take(&box->sends, (size_t)i);
        st = check_sizes(send.peer, r->rank, &send, &me);
        if (st == TRD_OK)
            st = match_push(box, (match){.from = send.peer, .send = send, .recv = me});
    }
    pthread_mutex_unlock(&box->mu);
    return st;
}

/* Takes the receive of `peer` that a send of `bytes` bytes with `tag`
 * would match now, if it is posted into a buffer of exactly that size:
 * the same match as t_isend's, made before the bytes exist. */
static trd_status t_claim_recv(void *ctx, int32_t peer, int32_t tag, size_t bytes, void **dst,
                               int32_t *handle)
{
    rank_ctx *r = ctx;
    mailbox *box = &r->world->box[peer];
    *dst = NULL;
    if (r->nclaims == r->cap) {
        int32_t cap = r->cap ? 2 * r->cap : 8;
        claim *grown = realloc(r->claims, (size_t)cap * sizeof *grown);
        if (!grown)
            return trd_fail(TRD_ENOMEM, "threads transport: out of memory");
        r->claims = grown;
        r->cap = cap;
    }
    pthread_mutex_lock(&box->mu);
    long i = queue_find(&box->recvs, r->rank, tag, true);
    bool fits = i >= 0 && !box->recvs.items[i].consume && box->recvs.items[i].bytes == bytes;
    if (fits) {
        *handle = r->nclaims;
        r->claims[r->nclaims++] = (claim){.peer = peer, .recv = queue_take(&box->recvs, (size_t)i)};
        r->open++;
        r->claimed++;
        *dst = r->claims[*handle].recv.buf;
    }
    pthread_mutex_unlock(&box->mu);
    return TRD_OK;
}

/* The send of a claimed receive, its bytes written: completes both ends. */
static trd_status t_isend_claimed(void *ctx, int32_t handle, int32_t id)
{
    rank_ctx *r = ctx;
    if (handle < 0 || handle >= r->nclaims)
        return trd_fail(TRD_EINVAL, "threads transport: rank %ld: no claim %ld", (long)r->rank,
                        (long)handle);
    const claim *c = &r->claims[handle];
    trd_status st = complete(&r->world->box[c->peer], c->recv.id, r->rank);
    if (st == TRD_OK)
        st = complete(&r->world->box[r->rank], id, -1);
    if (--r->open == 0)
        r->nclaims = 0;
    return st;
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

/* Box->mu held: lets it go and spins up to SPIN_LOOPS pauses (~10-50 us)
 * for the box's next event, then takes it again.  A wake-up through the
 * condition variable takes 10-40 us here, where a small message's whole
 * call takes well under 1 us through memory the ranks share; so a wait
 * spins first, as the MPI wire does, but only when every rank has a core
 * (else the spin would hold the core of the rank it waits for). */
static void spin_for_event(const trd_world *w, mailbox *box)
{
    if (!w->spin)
        return;
    uint32_t seen = atomic_load_explicit(&box->events, memory_order_relaxed);
    pthread_mutex_unlock(&box->mu);
    for (int i = 0; i < SPIN_LOOPS; i++) {
        if (atomic_load_explicit(&box->events, memory_order_acquire) != seen)
            break;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    pthread_mutex_lock(&box->mu);
}

/* The clock is read only when the wait has to sleep (wire.h). */
static trd_status t_wait(void *ctx, double timeout_s, int32_t *id, int32_t *from)
{
    rank_ctx *r = ctx;
    mailbox *box = &r->world->box[r->rank];
    struct timespec until;
    bool timed = false, spun = false;
    int rc = 0;
    pthread_mutex_lock(&box->mu);
    for (;;) {
        while (box->done.len == 0 && box->mlen == 0 && rc != ETIMEDOUT) {
            if (!spun) { /* then the condition is checked again under the lock */
                spun = true;
                spin_for_event(r->world, box);
                continue;
            }
            if (!timed)
                until = abs_time(now_s() + timeout_s);
            timed = true;
            rc = pthread_cond_timedwait(&box->cv, &box->mu, &until);
        }
        if (box->mlen == 0)
            break;
        match m = box->matched[box->mhead++]; /* a send matched our receive: copy it */
        box->mlen--;
        pthread_mutex_unlock(&box->mu);
        trd_status st = deliver(r->world, m.from, r->rank, &m.send, &m.recv);
        if (st != TRD_OK)
            return st;
        pthread_mutex_lock(&box->mu);
    }
    trd_completion c;
    if (!trd_fifo_pop(&box->done, &c)) {
        size_t sends = box->sends.len, recvs = box->recvs.len;
        pthread_mutex_unlock(&box->mu);
        return trd_fail(TRD_ETIMEDOUT, "threads transport: rank %ld got no message before "
                        "its deadline (%zu receives posted, %zu sends to it unmatched): a "
                        "peer is dead or stuck", (long)r->rank, recvs, sends);
    }
    pthread_mutex_unlock(&box->mu);
    *id = c.id;
    *from = c.from;
    return TRD_OK;
}

static double t_now(void *ctx)
{
    (void)ctx;
    return now_s();
}

/* Waits until all ranks arrived or the deadline; w->mu held. */
static trd_status barrier_locked(trd_world *w, int32_t rank, double deadline)
{
    uint64_t gen = w->generation;
    if (++w->arrived == w->size) {
        w->arrived = 0;
        w->generation++;
        pthread_cond_broadcast(&w->cv);
        return TRD_OK;
    }
    struct timespec until = abs_time(deadline);
    int rc = 0;
    while (w->generation == gen && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    if (w->generation != gen)
        return TRD_OK;
    w->arrived--; /* leave: a later barrier must not count us */
    return trd_fail(TRD_ETIMEDOUT, "threads transport: rank %ld waited at a barrier past its "
                    "deadline: %ld of %ld ranks arrived", (long)rank, (long)w->arrived + 1,
                    (long)w->size);
}

static trd_status t_barrier(void *ctx, double deadline)
{
    rank_ctx *r = ctx;
    pthread_mutex_lock(&r->world->mu);
    trd_status st = barrier_locked(r->world, r->rank, deadline);
    pthread_mutex_unlock(&r->world->mu);
    return st;
}

/* The first rank to decide in a call lends its policy copy as the shared
 * state (all copies are equal until used); end_dynamic resets it. */
static trd_status t_decide(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                           trd_action *action, int32_t *peer)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    pthread_mutex_lock(&w->mu);
    if (!w->shared || w->shared_call != call) {
        w->shared = policy;
        w->shared_call = call;
    }
    *action = w->shared->idle(w->shared->state, rank, peer);
    pthread_mutex_unlock(&w->mu);
    return TRD_OK;
}

static trd_status t_end_dynamic(void *ctx, const trd_policy *policy, int64_t call)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    double deadline = now_s() + w->opts.timeout_s;
    (void)policy;
    pthread_mutex_lock(&w->mu);
    trd_status st = barrier_locked(w, r->rank, deadline);
    if (st == TRD_OK && r->rank == 0 && w->shared && w->shared_call == call) {
        w->shared->reset(w->shared->state);
        w->shared = NULL;
    }
    if (st == TRD_OK) /* nobody decides for the next call before the reset */
        st = barrier_locked(w, r->rank, deadline);
    pthread_mutex_unlock(&w->mu);
    return st;
}

static void free_world(trd_world *w)
{
    for (int32_t r = 0; w->box && r < w->size; r++) {
        pthread_mutex_destroy(&w->box[r].mu);
        pthread_cond_destroy(&w->box[r].cv);
        free(w->box[r].sends.items);
        free(w->box[r].recvs.items);
        free(w->box[r].matched);
        free(w->box[r].done.items);
    }
    free(w->box);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

static void t_free(void *ctx)
{
    rank_ctx *r = ctx;
    trd_world *w = r->world;
    pthread_mutex_lock(&w->mu);
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (last)
        free_world(w);
    free(r->claims);
    free(r);
}

void trd_threads_opts_init(trd_threads_opts *opts)
{
    *opts = (trd_threads_opts){.timeout_s = 30.0, .delay_max_us = 0.0, .delay_seed = 1,
                               .dead_rank = -1};
}

static trd_status check_opts(int32_t p, const trd_threads_opts *o)
{
    if (p < 1 || p > TRD_THREADS_MAX)
        return trd_fail(TRD_EINVAL, "p = %ld ranks is out of range for the threads transport: "
                        "need 1 <= p <= %d", (long)p, TRD_THREADS_MAX);
    if (!(o->timeout_s > 0) || o->timeout_s > 1e6)
        return trd_fail(TRD_EINVAL, "timeout = %g s is invalid: need 0 < timeout <= 1e6",
                        o->timeout_s);
    if (!(o->delay_max_us >= 0) || o->delay_max_us > 1e6)
        return trd_fail(TRD_EINVAL, "injected delay = %g us is invalid: need 0 to 1e6",
                        o->delay_max_us);
    return TRD_OK;
}

static trd_status new_world(trd_world **out, int32_t p, const trd_threads_opts *opts)
{
    trd_world *w = calloc(1, sizeof *w);
    if (!w)
        return trd_fail(TRD_ENOMEM, "threads transport: out of memory");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *w = (trd_world){.size = p, .refs = p, .opts = *opts, .spin = cores >= p};
    pthread_mutex_init(&w->mu, NULL);
    bool ok = init_cond(&w->cv) == 0;
    w->box = calloc((size_t)p, sizeof *w->box);
    for (int32_t r = 0; ok && w->box && r < p; r++) {
        pthread_mutex_init(&w->box[r].mu, NULL);
        ok = init_cond(&w->box[r].cv) == 0;
    }
    if (!ok || !w->box) {
        w->size = w->box ? p : 0;
        free_world(w);
        return trd_fail(TRD_ENOMEM, "threads transport: cannot create %ld mailboxes", (long)p);
    }
    *out = w;
    return TRD_OK;
}

static trd_wire wire_of(rank_ctx *r)
{
    return (trd_wire){.ctx = r, .rank = r->rank, .size = r->world->size, .name = "threads",
                      .isend = t_isend, .irecv = t_irecv, .irecv_consume = t_irecv_consume,
                      .claim_recv = t_claim_recv, .isend_claimed = t_isend_claimed,
                      .wait = t_wait, .now = t_now,
                      .decide = t_decide, .end_dynamic = t_end_dynamic,
                      .barrier = t_barrier, .free = t_free};
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
            return trd_fail(TRD_ENOMEM, "threads transport: out of memory");
        }
        *ctx = (rank_ctx){.world = w, .rank = r,
                          .rng = (o->delay_seed + 1) * 0x9E3779B97F4A7C15ULL + (uint64_t)r};
        wires[r] = wire_of(ctx);
    }
    return TRD_OK;
}

const trd_threads_opts *trd_wire_threads_opts(const trd_wire *wire)
{
    return &((const rank_ctx *)wire->ctx)->world->opts;
}

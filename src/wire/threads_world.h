/* threads_world.h: the shared state of the threads wire, between its
 * matching (threads.c), its barriers, agreements and dynamic decisions
 * (threads_sync.c) and its failures (threads_fail.c).
 *
 * What is shared.  One trd_world per trd_wire_threads_create, shared by
 * its p ranks (one thread each): the world's fields (size, opts, box and
 * now are set at creation and only read after), every mailbox (its rank
 * waits and copies there; every peer that sends to it, claims from it or
 * withdraws from it writes it too), every eager ring (one sender, one
 * consumer at a time), and now[r] (written by rank r, read by all).  A
 * rank_ctx is its rank's thread's alone.  The process's only shared
 * state is threads_park.c's count of live ranks and of cores (it says
 * why).
 *
 * Locks.  Two, both trd_lock: box[q].mu, one per mailbox, guards every
 * non-atomic field of box q (its queues, matched pairs, completions,
 * rings array, copying, claimed, wake); w->mu guards refs, the
 * agreements' values, the shared policy and the failure's fields while
 * they are written.  Lock order: there is none to keep, because a thread
 * holds at most one of them at a time - every path lets a box's lock go
 * before it takes another box's or the world's (copy_next before it
 * completes the sender's end, t_isend_claimed before it completes its
 * own, a failure only once it holds nothing: trd_threads_fail's rule).
 * Under a lock nothing waits for another rank: the park words
 * (box->events, w->release) are polled and slept on with no lock held,
 * a consuming receive's operator runs outside the box's lock, and the
 * only foreign code run under one is the dynamic policy's idle/reset
 * under w->mu, which takes no lock of the wire.
 *
 * Invariants.
 *  - A sender's messages to one receiver match in sending order, eager
 *    or not: whoever takes box[q].mu to post or match there first drains
 *    q's rings into the box (trd_box_drain).
 *  - No wake-up is lost: every event of a box (a match, a completion,
 *    an eager post, a failure) moves box->events.seq on after the change
 *    it announces is visible; a waiter reads seq under the box's lock
 *    before it looks for its event and sleeps only while seq is unchanged
 *    (threads_park.c counts sleepers before it reads seq again).  A wake
 *    that must wake a sleeper is deferred past the unlock (box->wake,
 *    box_unlock): box->wake is false whenever box->mu is free.
 *  - A send completes once its bytes are in the receiver's buffer (the
 *    receiver copied or consumed them, or the sender wrote them into a
 *    claimed receive), or, eager, once posted (its bytes are in its
 *    record).  Until then its buffer is read only by its receiver, which
 *    marks the box copying from it (box->copying) for that one copy.
 *  - A claimed receive is out of its box and counted in box->claimed
 *    until its claimer completes it or gives it back; the claimer alone
 *    writes its buffer meanwhile.
 *  - The failure is set once, under w->mu, its fields before the flag
 *    (release); the flag never clears, and its fields are then read
 *    without the lock.  A match, copy or claim starts only under its
 *    box's lock, after a look at the flag; a failed call's withdrawal
 *    (trd_threads_wire_abort) sets the flag first, then takes each box's
 *    lock in turn, so there it drops the records and waits only for a
 *    copy or claim begun before: copying and claimed then only fall,
 *    each within one memcpy or combine, and the wait is bounded.
 *  - Barrier: `arrived` counts the ranks of the current generation; the
 *    last one resets it before it advances `generation`.  Agreement slot
 *    g & 1 belongs to generation g: no rank reaches generation g + 2, the
 *    next user of that slot, before every rank has read g's values.
 *  - refs counts the ranks not yet freed; the last free frees the world,
 *    its mailboxes and rings, and takes its ranks off the live count. */
#ifndef TRD_WIRE_THREADS_WORLD_H
#define TRD_WIRE_THREADS_WORLD_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fifo.h"
#include "wire/threads.h"

/* Sends of at most this many bytes are eager (threads.c): their bytes
 * travel in the record, and the send completes when it is posted. */
#define TRD_EAGER_BYTES 64

/* One end of a transfer waiting in a mailbox. */
typedef struct pending {
    int32_t peer; /* sends: the sender; receives: the sender wanted or TRD_ANY_RANK */
    int32_t tag, id;
    void *buf;
    size_t bytes;
    trd_consume_fn consume; /* receives only: takes the bytes instead of buf */
    void *arg;
    uint64_t sig;             /* trd_call_sig_value of the call that posted it */
    const trd_call_sig *call; /* ...that call, named when it does not match */
    bool eager;               /* sends only: the bytes are in `small`, not at buf */
    /* aligned as a buffer from malloc: a consuming receive combines
     * elements straight from it */
    alignas(max_align_t) unsigned char small[TRD_EAGER_BYTES];
} pending;

/* A record in a queue (threads_queue.c): its pending end, its neighbours
 * in arrival order, and, once the queue keeps an index, in its channel
 * (peer, tag) and among its peer's records. */
typedef struct qnode {
    pending p;
    int32_t prev, next;
    int32_t cprev, cnext;
    int32_t pprev, pnext;
    uint32_t seq; /* arrival order (wraps: compared by difference) */
} qnode;

typedef struct qlist {
    int32_t head, tail;
} qlist;

/* A list of the index: the records of channel (peer, tag), or with tag -1
 * of the peer. */
typedef struct qslot {
    bool used;
    int32_t peer, tag;
    qlist list;
} qslot;

/* The waiting sends or posted receives of a mailbox, in arrival order
 * (threads_queue.c), box->mu held.  Empty: TRD_QUEUE_EMPTY. */
typedef struct queue {
    qnode *node;            /* by id; free ones linked from spare by next */
    int32_t cap, spare;
    int32_t head, tail;     /* -1: empty */
    size_t len;
    uint32_t seq;
    bool indexed;           /* longer than a walk should take: the lists below */
    qslot *slot;            /* a hash table of lists, linear probing */
    uint32_t slots, lists;  /* slots: a power of two (0: none yet) */
} queue;

#define TRD_QUEUE_EMPTY ((queue){.spare = -1, .head = -1, .tail = -1})

/* A send matched with a receive whose rank has not copied it yet. */
typedef struct match {
    int32_t from;
    pending send, recv;
} match;

/* A lock held only for a few hundred instructions (a mailbox's queues,
 * the world's shared values): waiters spin for it where ranks have cores
 * of their own, and sleep on its word otherwise (threads_park.c).
 * state: 0 free, 1 held, 2 held and a rank may sleep on it. */
typedef struct trd_lock {
    _Atomic uint32_t state;
} trd_lock;

/* A word that ranks wait on for a change (threads_park.c): seq changes
 * with every event, and its waker makes a system call only when a rank
 * sleeps on it. */
typedef struct trd_park {
    _Atomic uint32_t seq;
    _Atomic uint32_t sleepers;
    _Atomic uint32_t spin_ns; /* how long a wait on it spins (0: not yet set) */
    _Atomic uint64_t woke_ns; /* when the last event that found a sleeper came (ns) */
} trd_park;

/* Each mailbox starts on a cache line of its own: ranks that post to
 * different receivers never write the same line. */
#define TRD_LINE 64

/* Slots of a pair's eager ring (threads_eager.c). */
#define TRD_EAGER_SLOTS 16

typedef struct eager_slot {
    alignas(TRD_LINE) _Atomic uint64_t seq; /* its message's number + 1 once published */
    pending send;
} eager_slot;

/* The rings of a box that its drains read each time (threads_box.c); a
 * ring entered after them is queued on the box by its sender when it has
 * messages, so that a box with p - 1 senders (a flat tree's root) does not
 * read p - 1 rings at every lock (O(p^2) per call). */
#define TRD_EAGER_SCANNED 8

/* The eager sends of one rank to one peer on their way into the peer's
 * mailbox, without its lock: written only by the sender, taken out only
 * by whoever holds the receiver's box->mu (threads_eager.c says why). */
typedef struct eager_ring {
    alignas(TRD_LINE) _Atomic uint64_t taken; /* messages taken out (the receiver's side) */
    alignas(TRD_LINE) uint64_t put;           /* messages put in (the sender's) */
    uint64_t taken_seen;                      /* the sender's last read of taken */
    int32_t at;                               /* its place among the box's rings */
    /* Rings at TRD_EAGER_SCANNED and after: whether it is on the box's
     * queue of rings with messages, and the next one there. */
    alignas(TRD_LINE) _Atomic int queued;
    struct eager_ring *next_queued;
    eager_slot slot[TRD_EAGER_SLOTS];
} eager_ring;

/* A rank's eager ring to one peer (rank_ctx.out). */
typedef struct eager_link {
    int32_t peer; /* -1: a free slot */
    eager_ring *ring;
} eager_link;

typedef struct mailbox {
    alignas(TRD_LINE) trd_lock mu;
    queue sends, recvs;
    match *matched; /* a ring of mcap (a power of two): the pairs its receiver must
                       copy, from mhead */
    size_t mhead, mlen, mcap;
    trd_fifo done;
    trd_park events; /* bumped with every match, completion and eager post, and on a failure */
    eager_ring **rings; /* of the peers that sent eagerly to this box's rank */
    int32_t nrings, ringcap;
    /* Rings past the scanned ones that have messages (a stack their
     * senders push on, a drain takes whole); a line of its own. */
    alignas(TRD_LINE) _Atomic(eager_ring *) queued;
    bool wake;       /* under mu: events moved on with a rank asleep on it (box_unlock) */
    /* What a failing rank waits for before its call returns (threads_fail.c):
     * the sender whose buffer this box's rank is copying from right now
     * (-1: none), and how many of this box's receives peers have claimed
     * and are writing (t_claim_recv) without having completed them. */
    int32_t copying;
    int32_t claimed;
} mailbox;

/* The signature of the call a rank is in (a line of its own: written as
 * each call begins, read by peers' eager sends and sleeping waits), and
 * 1 + the barrier generation it last arrived at (threads_sync.c: a late
 * barrier names the ranks that did not come). */
typedef struct call_now {
    alignas(TRD_LINE) _Atomic uint64_t sig;
    _Atomic uint32_t barrier;
} call_now;

typedef struct trd_world {
    int32_t size;
    int refs;
    trd_threads_opts opts;
    mailbox *box;
    call_now *now; /* per rank */
    trd_lock mu; /* refs, agreements' values, the shared policy, the failure */
    /* The barrier (threads_sync.c): ranks count themselves in `arrived`;
     * the last one resets it and advances `generation`, then bumps
     * `release`, which a failure bumps too.  Each on a line of its own. */
    alignas(TRD_LINE) _Atomic uint32_t arrived;
    alignas(TRD_LINE) _Atomic uint32_t generation;
    alignas(TRD_LINE) trd_park release;
    /* agree(): by the barrier generation's parity, so that a rank already
     * in the next agreement never overwrites a result not yet read;
     * agree_at[g]: 1 + the generation slot g holds values of (0: none). */
    alignas(TRD_LINE) double agree[2][TRD_WIRE_AGREE_MAX];
    int32_t agree_n[2];
    uint32_t agree_at[2];
    const trd_policy *shared; /* the policy of the current dynamic call */
    int64_t shared_call;
    /* The first failure (threads_fail.c): set once, under mu. */
    _Atomic bool failed;
    trd_status fail_code;
    int32_t fail_rank;
    char fail_msg[1024];
} trd_world;

/* A receive of a peer taken by a send of this rank before the send's
 * bytes exist (t_claim_recv): the sender writes them into recv.buf. */
typedef struct claim {
    int32_t peer;
    bool open; /* not completed (t_isend_claimed) nor given back yet */
    pending recv;
} claim;

typedef struct rank_ctx {
    trd_world *world;
    int32_t rank;
    double delay_max_us; /* delay injection (trd_wire_threads_delay) */
    uint64_t rng;
    claim *claims; /* by handle; emptied when none is open */
    int32_t nclaims, cap, open;
    int64_t claimed; /* claims made so far (trd_wire_threads_claims) */
    /* This rank's eager rings, by peer (a hash table of the peers it sent
     * small messages to: an array of all p peers made p ranks hold p^2). */
    eager_link *out;
    int32_t nout, outcap; /* outcap: 0 or a power of two */
    trd_fifo sent;    /* its eager sends, complete when posted: its waits take them unlocked */
    const trd_call_sig *call; /* wire.h set_call */
} rank_ctx;

/* CLOCK_MONOTONIC seconds (vDSO: no system call). */
double trd_threads_now(void);

/* Waiting (threads_park.c).  The ranks of all live worlds of the process
 * are counted: while there are no more of them than cores this process
 * may run on, a waiting rank has a core of its own and spins. */
void trd_threads_ranks_add(int64_t n);
/* Takes l: spins while its holder has a core, then sleeps; and lets it go. */
void trd_lock_take(trd_lock *l);
void trd_lock_give(trd_lock *l);
/* Polls pk->seq until it is not `seen`: a bounded spin without system
 * calls where every rank has a core (its length adapted to the waits
 * before it), or, where ranks outnumber cores, a bounded phase of
 * yields.  False: it did not change. */
bool trd_park_spin(trd_park *pk, uint32_t seen);
/* Polls done(arg) for at most `seconds` where every rank has a core (once
 * where ranks outnumber cores): whether it came true. */
bool trd_spin_until(bool (*done)(const void *), const void *arg, double seconds);
/* Sleeps until pk->seq is not `seen`, a bump, or `seconds` passed. */
void trd_park_sleep(trd_park *pk, uint32_t seen, double seconds);
/* Changes pk->seq and wakes whoever sleeps on it. */
void trd_park_bump(trd_park *pk);
/* The same in two halves: changes pk->seq, true when a rank sleeps on it;
 * and wakes them. */
bool trd_park_advance(trd_park *pk);
void trd_park_wake(trd_park *pk);
/* Spins, then sleeps in slices of at most `slice` seconds, until
 * pk->seq is not `seen`, done(arg) or the deadline: true unless the
 * deadline passed first. */
bool trd_park_until(trd_park *pk, bool (*done)(const void *), const void *arg,
                    double deadline, double slice);

/* Eager sends (threads_eager.c).  Whether `me` of a rank may be eager: at
 * most TRD_EAGER_BYTES, and peer in its call (waiting a moment for it). */
bool trd_eager_allowed(const trd_world *w, int32_t peer, const pending *me);
/* Copies the bytes at buf into the record: an eager send. */
void trd_eager_fill(pending *me, const void *buf);
/* Rank r's eager send `me` through its ring to peer, without peer's lock:
 * false when it must go through the lock (no ring, or a full one). */
bool trd_eager_post(rank_ctx *r, int32_t peer, pending *me, const void *buf);
/* Box->mu of the ring's receiver held: takes its oldest message out into
 * *send; false when it has none. */
bool trd_eager_take(eager_ring *ring, pending *send);
/* Box->mu held: the rings queued on box (those past the scanned ones that
 * got messages, linked by next_queued), taken off the queue; each is then
 * unqueued - after its next ring is read: a message sent after that
 * queues it again, rewriting next_queued - and drained whole. */
eager_ring *trd_eager_queued(mailbox *box);
void trd_eager_unqueue(eager_ring *ring);
/* The rings entered in box, freed with it. */
void trd_eager_free(mailbox *box);

/* A mailbox's queues (threads_queue.c), box->mu held.  Appends a record;
 * takes record id out (ids stay valid until then); empties the queue, or
 * takes out every record of one peer; frees it. */
trd_status trd_queue_push(queue *q, const pending *p);
pending trd_queue_take(queue *q, int32_t id);
void trd_queue_clear(queue *q);
void trd_queue_drop_peer(queue *q, int32_t peer);
void trd_queue_free(queue *q);
/* The first record of q in arrival order whose peer is `peer` (or either
 * is TRD_ANY_RANK) and whose tag is `tag`, or -1; and *other: the first
 * record of exactly that peer from another call than sig (a mismatch
 * whatever its tag: two ranks in matching calls never leave a message or
 * receive of one call pending into the next, callsig.h), when it comes
 * before the match (-1 returned then), else -1. */
int32_t trd_queue_find(const queue *q, int32_t peer, int32_t tag, uint64_t sig, int32_t *other);
/* Record id of q; the first record in arrival order and the next (-1:
 * none). */
static inline pending *trd_queue_at(const queue *q, int32_t id)
{
    return &q->node[id].p;
}
static inline int32_t trd_queue_first(const queue *q)
{
    return q->head;
}
static inline int32_t trd_queue_next(const queue *q, int32_t id)
{
    return q->node[id].next;
}

/* A mailbox's matching (threads_box.c), box->mu held. */
/* Queues a completion (id, from) for the box's rank; trd_box_complete
 * takes box->mu for it. */
trd_status trd_box_complete_locked(mailbox *box, int32_t id, int32_t from);
trd_status trd_box_complete(mailbox *box, int32_t id, int32_t from);
/* Send `me` arrives in the box of rank `to`: matched with the first posted
 * receive that wants it, or waits there; receive `me` likewise. */
trd_status trd_box_send_arrived(int32_t to, mailbox *box, const pending *me);
trd_status trd_box_recv_arrived(int32_t to, mailbox *box, const pending *me);
/* The eager sends in the box's rings arrive, before anything else is
 * matched there. */
trd_status trd_box_drain(const trd_world *w, int32_t to, mailbox *box);

/* Box->mu held: the box's events move on (a match, a completion); a rank
 * asleep on them is woken when the lock is let go (box_unlock).  A
 * wake-up is a system call, many times a small message's whole call:
 * made under the lock, it kept the woken rank spinning on the lock and
 * then asleep on it, and small messages' latency came out tens of times
 * too long in some runs of `treduce calibrate -p 2`. */
static inline void box_event(mailbox *box)
{
    box->wake |= trd_park_advance(&box->events);
}

static inline void box_unlock(mailbox *box)
{
    bool wake = box->wake;
    box->wake = false;
    trd_lock_give(&box->mu);
    if (wake)
        trd_park_wake(&box->events);
}

static inline bool trd_threads_failed(const trd_world *w)
{
    return atomic_load_explicit(&w->failed, memory_order_acquire);
}

/* Records the world's first failure (rank, code, message; later ones are
 * dropped) and wakes every rank that waits.  The caller holds no lock. */
void trd_threads_fail(trd_world *w, int32_t rank, trd_status code, const char *msg);
/* The world's failure as the status and message of a call (trd_fail). */
trd_status trd_threads_failure(const trd_world *w);
/* st (not TRD_OK) with trd_errmsg() as the world's failure by rank. */
trd_status trd_threads_fail_with(trd_world *w, int32_t rank, trd_status st);
/* TRD_EIO naming both calls when a message of `send` (from rank `from`)
 * and a receive `recv` of rank `to` belong to different calls; else
 * TRD_OK.  The caller fails the world with it once it holds no lock. */
trd_status trd_threads_check_call(int32_t from, const pending *send, int32_t to,
                                  const pending *recv);

/* TRD_EIO naming the mismatch when a peer is in a call of the same
 * number as rank's `call` with another signature, or is past it while
 * rank's box awaits a message of exactly that peer's (a call that will
 * never send it, callsig.h); box->mu held.  Peers are seen through the
 * signature of the call they are in (trd_world.now). */
trd_status trd_threads_check_peers(const trd_world *w, int32_t rank, const mailbox *box,
                                   const trd_call_sig *call);

/* TRD_ETIMEDOUT, failing the world, for a wait of rank that found
 * nothing before its deadline (`waited` seconds): what it waits for (its
 * posted receives, its sends no receive has taken) and the ranks that have
 * not begun its call (a rank that never calls, or has died: the ranks'
 * calls are in the world).  The caller holds no lock. */
trd_status trd_threads_deadline(trd_world *w, int32_t rank, double waited);
/* The same for a barrier of generation gen: the ranks that did not arrive. */
trd_status trd_threads_barrier_late(trd_world *w, int32_t rank, uint32_t gen);

/* wire.h's failed and abort (threads_fail.c). */
trd_status trd_threads_wire_failed(void *ctx);
void trd_threads_wire_abort(void *ctx, trd_status code, const char *why);

/* wire.h's barrier, agree, decide and end_dynamic (threads_sync.c). */
trd_status trd_threads_barrier(void *ctx, double deadline);
trd_status trd_threads_agree(void *ctx, double *v, int32_t n, double deadline);
trd_status trd_threads_decide(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                              trd_action *action, int32_t *peer);
trd_status trd_threads_end_dynamic(void *ctx, const trd_policy *policy, int64_t call);

#endif

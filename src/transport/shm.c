/* shm.c: mailbox rings in shared memory for small messages between the
 * ranks of one node (shm.h says why and how; mpi.c uses them). */
#include "transport/shm.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "core/memory.h"
#include "engine/transport.h" /* TRD_ANY_RANK */

#define LINE 64 /* a cache line: what two ranks write never shares one */

/* A ring's first line: how many of its messages the receiver has read. */
typedef struct ring_head {
    _Atomic uint64_t consumed;
} ring_head;

/* A slot's first line; its `max` bytes of payload follow. */
typedef struct slot_head {
    _Atomic uint64_t seq; /* message number + 1 once published; 0: never used */
    int32_t tag;
    uint32_t bytes;
} slot_head;

typedef struct recv_op { /* a posted receive */
    int32_t peer, tag, id;
    void *buf;
    size_t cap;
} recv_op;

typedef struct send_op { /* a send waiting for room in its ring */
    int32_t peer, tag, id;
    const void *buf;
    size_t bytes;
} send_op;

/* A message longer than the receive it matched: the error the next poll
 * returns (a receive's errors come from the wait, as over MPI). */
typedef struct oversize {
    bool seen;
    int32_t from, tag, id;
    size_t bytes, cap;
} oversize;

typedef struct stray { /* a message no receive wanted yet: copied aside */
    int32_t from, tag;
    size_t bytes;
    void *data;
} stray;

/* A growing array of `type` items (posted receives, waiting sends, strays). */
#define VEC(type)         \
    struct {              \
        type *items;      \
        size_t len, cap;  \
    }

struct trd_shm {
    unsigned char *base;
    size_t len, max, ring_bytes;
    int32_t me, n;
    uint64_t *sent, *read; /* per peer: messages written to me -> peer, read from peer -> me */
    VEC(recv_op) recvs;
    VEC(send_op) sends;
    VEC(stray) strays;
    bool *blocked; /* scratch of trd_shm_poll: peers whose ring is full this round */
    oversize bad;
};

/* Appends item to a VEC (TRD_ENOMEM when it cannot grow). */
#define PUSH(vec, item)                                                                      \
    (trd_grow((void **)&(vec).items, (vec).len, &(vec).cap, sizeof *(vec).items, 8,        \
              "shm: pending messages") != TRD_OK                                             \
         ? TRD_ENOMEM                                                                        \
         : ((vec).items[(vec).len++] = (item), TRD_OK))

/* Removes item i of a VEC, keeping the others in order (matching order). */
#define TAKE(vec, i)                                                                         \
    memmove(&(vec).items[i], &(vec).items[(i) + 1], ((vec).len-- - (i) - 1) * sizeof *(vec).items)

static size_t slot_bytes(size_t max)
{
    return LINE + (max + LINE - 1) / LINE * LINE;
}

size_t trd_shm_segment_bytes(int32_t n, size_t max)
{
    return (size_t)n * (size_t)n * (LINE + TRD_SHM_SLOTS * slot_bytes(max));
}

size_t trd_shm_fit(int32_t n, size_t wanted)
{
    if (n < 1)
        return 0;
    size_t per_ring = TRD_SHM_SEGMENT_MAX / ((size_t)n * (size_t)n);
    if (per_ring < LINE + TRD_SHM_SLOTS * (LINE + LINE))
        return 0;
    size_t max = ((per_ring - LINE) / TRD_SHM_SLOTS - LINE) / LINE * LINE;
    return wanted < max ? wanted : max;
}

/* The ring that `from` writes and `to` reads. */
static unsigned char *ring(const trd_shm *s, int32_t from, int32_t to)
{
    return s->base + ((size_t)to * (size_t)s->n + (size_t)from) * s->ring_bytes;
}

static slot_head *slot(const trd_shm *s, unsigned char *r, uint64_t msg)
{
    return (slot_head *)(r + LINE + (size_t)(msg % TRD_SHM_SLOTS) * slot_bytes(s->max));
}

static trd_status map_segment(trd_shm *s, char name[64], bool create)
{
    static _Atomic unsigned counter;
    if (create)
        snprintf(name, 64, "/treduce-%ld-%u", (long)getpid(), atomic_fetch_add(&counter, 1));
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0)
        return trd_fail(TRD_EBACKEND, "shm: shm_open(%s) failed", name);
    if (create && ftruncate(fd, (off_t)s->len) != 0) {
        close(fd);
        shm_unlink(name);
        return trd_fail(TRD_EBACKEND, "shm: cannot size %s to %zu bytes", name, s->len);
    }
    void *p = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        if (create)
            shm_unlink(name);
        return trd_fail(TRD_EBACKEND, "shm: cannot map %zu bytes of %s", s->len, name);
    }
    s->base = p; /* a new segment reads as zeros: every ring empty */
    return TRD_OK;
}

/* Writes a zero into every page of the rings this rank reads or writes, so
 * that no call pays their page faults: before this, the first messages
 * through each slot took 5 - 30 us, enough to mislead the tuner (tune.c).
 * Safe: every rank does it before any rank sends (mpi.c agrees after). */
static void touch_rings(trd_shm *s)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int32_t q = 0; q < s->n; q++)
        for (int dir = 0; dir < 2 && q != s->me; dir++) {
            volatile unsigned char *r = dir ? ring(s, q, s->me) : ring(s, s->me, q);
            for (size_t off = 0; off < s->ring_bytes; off += page)
                r[off] = 0;
            r[s->ring_bytes - 1] = 0;
        }
}

trd_status trd_shm_open(trd_shm **out, char name[64], bool create, int32_t me, int32_t n,
                        size_t max)
{
    *out = NULL;
    if (n < 2 || me < 0 || me >= n || max == 0 || max > trd_shm_fit(n, max))
        return trd_fail(TRD_EINVAL, "shm: no rings for rank %d of %d with %zu-byte messages",
                        (int)me, (int)n, max);
    trd_shm *s = calloc(1, sizeof *s);
    if (!s)
        return trd_fail(TRD_ENOMEM, "shm: out of memory");
    *s = (trd_shm){.me = me, .n = n, .max = max, .len = trd_shm_segment_bytes(n, max),
                   .ring_bytes = LINE + TRD_SHM_SLOTS * slot_bytes(max)};
    s->sent = calloc((size_t)n, sizeof *s->sent);
    s->read = calloc((size_t)n, sizeof *s->read);
    s->blocked = calloc((size_t)n, sizeof *s->blocked);
    trd_status st = s->sent && s->read && s->blocked
                        ? map_segment(s, name, create)
                        : trd_fail(TRD_ENOMEM, "shm: out of memory for %d ranks", (int)n);
    if (st != TRD_OK) {
        trd_shm_free(s);
        return st;
    }
    touch_rings(s);
    *out = s;
    return TRD_OK;
}

void trd_shm_unlink(const char *name)
{
    shm_unlink(name);
}

void trd_shm_free(trd_shm *s)
{
    if (!s)
        return;
    if (s->base)
        munmap(s->base, s->len);
    for (size_t i = 0; i < s->strays.len; i++)
        free(s->strays.items[i].data);
    free(s->recvs.items);
    free(s->sends.items);
    free(s->strays.items);
    free(s->sent);
    free(s->read);
    free(s->blocked);
    free(s);
}

size_t trd_shm_max(const trd_shm *s)
{
    return s->max;
}

void trd_shm_pending(const trd_shm *s, int *recvs, int *sends)
{
    *recvs = (int)s->recvs.len + s->bad.seen; /* the failed one: its wait fails */
    *sends = (int)s->sends.len;
}

/* ---- Sending. ---- */

/* Writes one message into the ring to op->peer if it has a free slot. */
static bool try_write(trd_shm *s, const send_op *op)
{
    unsigned char *r = ring(s, s->me, op->peer);
    uint64_t m = s->sent[op->peer];
    uint64_t consumed = atomic_load_explicit(&((ring_head *)r)->consumed, memory_order_acquire);
    if (m - consumed >= TRD_SHM_SLOTS)
        return false;
    slot_head *h = slot(s, r, m);
    if (op->bytes)
        memcpy(h + 1, op->buf, op->bytes);
    h->tag = op->tag;
    h->bytes = (uint32_t)op->bytes;
    atomic_store_explicit(&h->seq, m + 1, memory_order_release); /* bytes first, then this */
    s->sent[op->peer] = m + 1;
    return true;
}

static bool waits_for(const trd_shm *s, int32_t peer)
{
    for (size_t i = 0; i < s->sends.len; i++)
        if (s->sends.items[i].peer == peer)
            return true;
    return false;
}

trd_status trd_shm_isend(trd_shm *s, int32_t peer, int32_t tag, const void *buf, size_t bytes,
                         int32_t id, trd_fifo *done)
{
    send_op op = {.peer = peer, .tag = tag, .id = id, .buf = buf, .bytes = bytes};
    if (!waits_for(s, peer) && try_write(s, &op))
        return trd_fifo_push(done, id, -1);
    return PUSH(s->sends, op);
}

/* Waiting sends, oldest first; one that finds its ring full holds back the
 * later ones to the same peer (wire.h's order per sender and tag). */
static trd_status flush_sends(trd_shm *s, trd_fifo *done, bool *progress)
{
    memset(s->blocked, 0, (size_t)s->n * sizeof *s->blocked);
    for (size_t i = 0; i < s->sends.len;) {
        send_op op = s->sends.items[i];
        if (s->blocked[op.peer] || !try_write(s, &op)) {
            s->blocked[op.peer] = true;
            i++;
            continue;
        }
        TAKE(s->sends, i);
        *progress = true;
        trd_status st = trd_fifo_push(done, op.id, -1);
        if (st != TRD_OK)
            return st;
    }
    return TRD_OK;
}

/* ---- Receiving. ---- */

static bool wants(const recv_op *r, int32_t from, int32_t tag)
{
    return r->tag == tag && (r->peer == from || r->peer == TRD_ANY_RANK);
}

/* Copies a message into receive r and completes it; one too long for it
 * is kept as the error of the next poll, and r never completes. */
static trd_status deliver(trd_shm *s, const recv_op *r, int32_t from, const void *data,
                          size_t bytes, trd_fifo *done)
{
    if (bytes > r->cap) {
        if (!s->bad.seen)
            s->bad = (oversize){true, from, r->tag, r->id, bytes, r->cap};
        return TRD_OK;
    }
    if (bytes)
        memcpy(r->buf, data, bytes);
    return trd_fifo_push(done, r->id, from);
}

/* The next message from `from`, handed to the first posted receive that
 * wants it or copied aside; then its slot is the sender's again. */
static trd_status take_message(trd_shm *s, int32_t from, slot_head *h, trd_fifo *done)
{
    trd_status st = TRD_OK;
    size_t bytes = h->bytes, i = 0;
    while (i < s->recvs.len && !wants(&s->recvs.items[i], from, h->tag))
        i++;
    if (i < s->recvs.len) {
        st = deliver(s, &s->recvs.items[i], from, h + 1, bytes, done);
        TAKE(s->recvs, i);
    } else {
        stray m = {.from = from, .tag = h->tag, .bytes = bytes, .data = malloc(bytes ? bytes : 1)};
        if (!m.data)
            return trd_fail(TRD_ENOMEM, "shm: out of memory for a %zu-byte message", bytes);
        memcpy(m.data, h + 1, bytes);
        st = PUSH(s->strays, m);
        if (st != TRD_OK)
            free(m.data);
    }
    return st;
}

/* Takes every message published in the ring from `from`. */
static trd_status drain(trd_shm *s, int32_t from, trd_fifo *done, bool *progress)
{
    unsigned char *r = ring(s, from, s->me);
    uint64_t m = s->read[from];
    trd_status st = TRD_OK;
    for (;;) {
        slot_head *h = slot(s, r, m);
        if (atomic_load_explicit(&h->seq, memory_order_acquire) != m + 1)
            break;
        st = take_message(s, from, h, done);
        if (st != TRD_OK)
            break;
        m++;
    }
    if (m != s->read[from]) {
        s->read[from] = m;
        atomic_store_explicit(&((ring_head *)r)->consumed, m, memory_order_release);
        *progress = true;
    }
    return st;
}

static trd_status drain_all(trd_shm *s, trd_fifo *done, bool *progress)
{
    trd_status st = TRD_OK;
    for (int32_t q = 0; q < s->n && st == TRD_OK; q++)
        if (q != s->me)
            st = drain(s, q, done, progress);
    return st;
}

trd_status trd_shm_irecv(trd_shm *s, int32_t peer, int32_t tag, void *buf, size_t bytes,
                         int32_t id, trd_fifo *done)
{
    recv_op r = {.peer = peer, .tag = tag, .id = id, .buf = buf, .cap = bytes};
    for (size_t i = 0; i < s->strays.len; i++) { /* set aside earlier: they come first */
        stray m = s->strays.items[i];
        if (!wants(&r, m.from, m.tag))
            continue;
        TAKE(s->strays, i);
        trd_status st = deliver(s, &r, m.from, m.data, m.bytes, done);
        free(m.data);
        return st;
    }
    trd_status st = PUSH(s->recvs, r);
    bool progress = false;
    if (st == TRD_OK) /* it may be there already: then the wait finds it done */
        st = peer == TRD_ANY_RANK ? drain_all(s, done, &progress) : drain(s, peer, done, &progress);
    return st;
}

trd_status trd_shm_poll(trd_shm *s, trd_fifo *done, bool *progress)
{
    trd_status st = s->sends.len ? flush_sends(s, done, progress) : TRD_OK;
    if (st == TRD_OK)
        st = drain_all(s, done, progress);
    if (st == TRD_OK && s->bad.seen)
        st = trd_fail(TRD_EIO, "mpi wire: rank %d: the message (%zu bytes) from rank %d with tag "
                      "%d is longer than the %zu-byte receive buffer of step %d (shared memory)",
                      (int)s->me, s->bad.bytes, (int)s->bad.from, (int)s->bad.tag, s->bad.cap,
                      (int)s->bad.id);
    return st;
}

/* shm.c: mailbox rings in shared memory for small messages between the
 * ranks of one node (shm.h says why and how; mpi.c uses them). */
#include "wire_mpi/shm.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "core/memory.h"
#include "ir/policy.h" /* TRD_ANY_RANK */
#include "wire/callsig.h"

#define LINE 64 /* a cache line: what two ranks write never shares one */

/* The segment's first bytes: the first failure of a rank of the node
 * (trd_shm_fail).  Written once, when a rank fails; read by every poll,
 * so its line stays in every core's cache until then. */
typedef struct seg_head {
    _Atomic uint32_t state; /* FAIL_NONE, FAIL_WRITING, FAIL_SET */
    int32_t rank, code;
    char text[500];
} seg_head;
enum { FAIL_NONE, FAIL_WRITING, FAIL_SET };
#define HEAD_BYTES ((sizeof(seg_head) + LINE - 1) / LINE * LINE)

/* A ring's first line: how many of its messages the receiver has read. */
typedef struct ring_head {
    _Atomic uint64_t consumed;
} ring_head;

/* A slot's first line; its `frag` bytes of payload follow. */
typedef struct slot_head {
    _Atomic uint64_t seq; /* fragment number + 1 once published; 0: never used */
    int32_t tag;
    uint32_t bytes; /* of this fragment */
    uint64_t total; /* of its message */
    uint64_t sig;   /* of its call (callsig.h) */
} slot_head;

typedef struct recv_op { /* a posted receive */
    int32_t peer, tag, id;
    uint64_t sig;
    void *buf;
    size_t cap;
} recv_op;

typedef struct send_op { /* a send waiting for room in its ring */
    int32_t peer, tag, id;
    uint64_t sig;
    const void *buf;
    size_t bytes, off; /* off: bytes already in the ring */
} send_op;

/* A message longer than the receive it matched, or of another call: the
 * error the next poll returns (a receive's errors come from the wait, as
 * over MPI). */
typedef struct bad_match {
    bool seen, other_call;
    int32_t from, tag, id;
    size_t bytes, cap;
    uint64_t sig, want; /* the message's and the receive's signatures */
} bad_match;

typedef struct stray { /* a message no receive wanted yet: copied aside */
    int32_t from, tag;
    uint64_t sig;
    size_t bytes;
    void *data;
} stray;

/* The message a sender's fragments are filling, between its first
 * fragment and its last: a posted receive's buffer, a stray's, or none
 * (a message too long for its receive: the rest is skipped). */
typedef struct incoming {
    bool on, to_recv;
    recv_op r;    /* to_recv: the receive it completes */
    stray m;      /* otherwise: the stray it becomes (m.data NULL: skipped) */
    size_t got;
} incoming;

/* A growing array of `type` items (posted receives, waiting sends,
 * strays), items[head .. len) in order: taking the first is O(1) (a
 * pipeline of 65 536 segments posts as many receives, takes them from the
 * front, and a memmove each made it quadratic). */
#define VEC(type)               \
    struct {                    \
        type *items;            \
        size_t head, len, cap;  \
    }

struct trd_shm {
    unsigned char *base;
    size_t len, frag, ring_bytes;
    int32_t me, n;
    uint64_t *sent, *read; /* per peer: fragments written to me -> peer, read from peer -> me */
    uint64_t *freed;       /* per peer: its ring's `consumed` as this rank last read it */
    incoming *in;          /* per peer: the message its fragments are filling */
    int filling;           /* receives matched whose last fragment has not come */
    VEC(recv_op) recvs;
    VEC(send_op) *sends; /* per peer, in posting order */
    int nsends;          /* sends waiting, all peers */
    VEC(stray) strays;
    bad_match bad;
    const trd_call_sig *call; /* named in a mismatch's message (trd_shm_set_call) */
};

/* Appends item to a VEC, moving its items to the front when it is full
 * from there (TRD_ENOMEM when it cannot grow). */
#define PUSH(vec, item)                                                                      \
    (compact((void *)(vec).items, &(vec).head, &(vec).len, (vec).cap, sizeof *(vec).items),  \
     trd_grow((void **)&(vec).items, (vec).len, &(vec).cap, sizeof *(vec).items, 8,          \
              "shm: pending messages") != TRD_OK                                             \
         ? TRD_ENOMEM                                                                        \
         : ((vec).items[(vec).len++] = (item), TRD_OK))

/* Removes item i of a VEC, keeping the others in order (matching order). */
#define TAKE(vec, i)                                                                         \
    take((void *)(vec).items, &(vec).head, &(vec).len, i, sizeof *(vec).items)

/* The items of a VEC that is full moved to its front. */
static void compact(void *items, size_t *head, size_t *len, size_t cap, size_t size)
{
    if (*len < cap || *head == 0)
        return;
    memmove(items, (unsigned char *)items + *head * size, (*len - *head) * size);
    *len -= *head;
    *head = 0;
}

static void take(void *items, size_t *head, size_t *len, size_t i, size_t size)
{
    if (i == *head) { /* the first: the front moves on (empty: back to 0) */
        if (++*head == *len)
            *head = *len = 0;
        return;
    }
    unsigned char *at = (unsigned char *)items + i * size;
    memmove(at, at + size, (*len - i - 1) * size);
    --*len;
}

static size_t slot_bytes(size_t frag)
{
    return LINE + (frag + LINE - 1) / LINE * LINE;
}

size_t trd_shm_segment_bytes(int32_t n, size_t frag)
{
    return HEAD_BYTES + (size_t)n * (size_t)n * (LINE + TRD_SHM_SLOTS * slot_bytes(frag));
}

size_t trd_shm_fit(int32_t n, size_t wanted)
{
    if (n < 1)
        return 0;
    size_t per_ring = (TRD_SHM_SEGMENT_MAX - HEAD_BYTES) / ((size_t)n * (size_t)n);
    if (per_ring < LINE + TRD_SHM_SLOTS * (LINE + LINE))
        return 0;
    size_t max = ((per_ring - LINE) / TRD_SHM_SLOTS - LINE) / LINE * LINE;
    return wanted < max ? wanted : max;
}

/* The ring that `from` writes and `to` reads. */
static unsigned char *ring(const trd_shm *s, int32_t from, int32_t to)
{
    return s->base + HEAD_BYTES + ((size_t)to * (size_t)s->n + (size_t)from) * s->ring_bytes;
}

static slot_head *slot(const trd_shm *s, unsigned char *r, uint64_t msg)
{
    return (slot_head *)(r + LINE + (size_t)(msg % TRD_SHM_SLOTS) * slot_bytes(s->frag));
}

static trd_status map_segment(trd_shm *s, char name[64], bool create)
{
    static _Atomic unsigned counter;
    if (create)
        snprintf(name, 64, "/treduce-%ld-%u", (long)getpid(), atomic_fetch_add(&counter, 1));
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0)
        return trd_fail(TRD_EBACKEND, "shm: shm_open(%s) failed", name);
    /* Allocated, not only sized: on a /dev/shm too small for it, touching
     * the pages later would raise SIGBUS; this fails, and the wire goes
     * without rings (mpi.c). */
    int err = create ? posix_fallocate(fd, 0, (off_t)s->len) : 0;
    if (err != 0) {
        close(fd);
        shm_unlink(name);
        return trd_fail(TRD_EBACKEND, "shm: cannot allocate %zu bytes for %s: %s", s->len, name,
                        strerror(err));
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

void trd_shm_touch(trd_shm *s)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int32_t q = 0; q < s->n; q++)
        for (int dir = 0; dir < 2 && q != s->me; dir++) {
            volatile unsigned char *r = dir ? ring(s, q, s->me) : ring(s, s->me, q);
            for (size_t off = 0; off < s->ring_bytes; off += page)
                r[off] = 0;
            r[s->ring_bytes - 1] = 0;
        }
    (void)atomic_load(&((seg_head *)s->base)->state); /* its page too: only read */
}

trd_status trd_shm_open(trd_shm **out, char name[64], bool create, int32_t me, int32_t n,
                        size_t frag)
{
    *out = NULL;
    if (n < 2 || me < 0 || me >= n || frag == 0 || frag > trd_shm_fit(n, frag))
        return trd_fail(TRD_EINVAL, "shm: no rings for rank %d of %d with %zu-byte slots",
                        (int)me, (int)n, frag);
    trd_shm *s = calloc(1, sizeof *s);
    if (!s)
        return trd_fail(TRD_ENOMEM, "shm: out of memory");
    *s = (trd_shm){.me = me, .n = n, .frag = frag, .len = trd_shm_segment_bytes(n, frag),
                   .ring_bytes = LINE + TRD_SHM_SLOTS * slot_bytes(frag)};
    s->sent = calloc((size_t)n, sizeof *s->sent);
    s->read = calloc((size_t)n, sizeof *s->read);
    s->freed = calloc((size_t)n, sizeof *s->freed);
    s->in = calloc((size_t)n, sizeof *s->in);
    s->sends = calloc((size_t)n, sizeof *s->sends);
    trd_status st = s->sent && s->read && s->freed && s->in && s->sends
                        ? map_segment(s, name, create)
                        : trd_fail(TRD_ENOMEM, "shm: out of memory for %d ranks", (int)n);
    if (st != TRD_OK) {
        trd_shm_free(s);
        return st;
    }
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
    for (size_t i = s->strays.head; i < s->strays.len; i++)
        free(s->strays.items[i].data);
    for (int32_t q = 0; s->in && q < s->n; q++)
        free(s->in[q].m.data);
    free(s->in);
    free(s->recvs.items);
    for (int32_t q = 0; s->sends && q < s->n; q++)
        free(s->sends[q].items);
    free(s->sends);
    free(s->strays.items);
    free(s->sent);
    free(s->read);
    free(s->freed);
    free(s);
}

bool trd_shm_quiet(const trd_shm *s)
{
    bool filling = false;
    for (int32_t q = 0; q < s->n; q++)
        filling = filling || s->in[q].on;
    return !filling && s->recvs.len == s->recvs.head && s->nsends == 0 &&
           s->strays.len == s->strays.head &&
           s->filling == 0 && !s->bad.seen &&
           atomic_load(&((seg_head *)s->base)->state) == FAIL_NONE;
}

size_t trd_shm_size(const trd_shm *s, size_t *frag)
{
    *frag = s->frag;
    return s->len;
}

void trd_shm_pending(const trd_shm *s, int *recvs, int *sends)
{
    /* bad: the failed one, whose wait fails */
    *recvs = (int)(s->recvs.len - s->recvs.head) + s->filling + s->bad.seen;
    *sends = s->nsends;
}

/* ---- Sending. ---- */

/* Whether ring r to peer has a free slot for fragment m. */
static bool room(trd_shm *s, unsigned char *r, int32_t peer, uint64_t m)
{
    if (m - s->freed[peer] < TRD_SHM_SLOTS)
        return true;
    s->freed[peer] = atomic_load_explicit(&((ring_head *)r)->consumed, memory_order_acquire);
    return m - s->freed[peer] < TRD_SHM_SLOTS;
}

/* Writes the rest of op into the ring to op->peer, a fragment per free
 * slot; whether it all went (a message of 0 bytes is one empty fragment).
 * The receiver copies one fragment out while the next is written, so a
 * long message costs about one copy, not two in turn.  The receiver's
 * `consumed` is read again only when the ring looks full by the last value
 * read (which can only lag): reading it on every send fetched the line the
 * receiver had just written, a cache miss before each small message went
 * out, which showed in a 32-byte allreduce at np 2. */
static bool try_write(trd_shm *s, send_op *op)
{
    unsigned char *r = ring(s, s->me, op->peer);
    uint64_t m = s->sent[op->peer];
    do {
        if (!room(s, r, op->peer, m))
            return false;
        slot_head *h = slot(s, r, m);
        size_t left = op->bytes - op->off, bytes = left < s->frag ? left : s->frag;
        if (bytes)
            memcpy(h + 1, (const unsigned char *)op->buf + op->off, bytes);
        h->tag = op->tag;
        h->bytes = (uint32_t)bytes;
        h->total = op->bytes;
        h->sig = op->sig;
        atomic_store_explicit(&h->seq, m + 1, memory_order_release); /* bytes first, then this */
        s->sent[op->peer] = ++m;
        op->off += bytes;
    } while (op->off < op->bytes);
    return true;
}

static bool waits_for(const trd_shm *s, int32_t peer)
{
    return s->sends[peer].len > s->sends[peer].head;
}

trd_status trd_shm_isend(trd_shm *s, int32_t peer, int32_t tag, uint64_t sig, const void *buf,
                         size_t bytes, int32_t id, trd_fifo *done)
{
    send_op op = {.peer = peer, .tag = tag, .id = id, .sig = sig, .buf = buf, .bytes = bytes};
    if (!waits_for(s, peer) && try_write(s, &op))
        return trd_fifo_push(done, id, -1);
    trd_status st = PUSH(s->sends[peer], op);
    s->nsends += st == TRD_OK;
    return st;
}

/* Waiting sends, oldest first per peer; one that finds its ring full
 * holds back the later ones to the same peer (wire.h's order per sender
 * and tag). */
static trd_status flush_sends(trd_shm *s, trd_fifo *done, bool *progress)
{
    for (int32_t q = 0; q < s->n; q++)
        while (waits_for(s, q)) {
            send_op *op = &s->sends[q].items[s->sends[q].head];
            size_t off = op->off;
            if (!try_write(s, op)) {
                *progress |= op->off != off;
                break;
            }
            int32_t id = op->id;
            TAKE(s->sends[q], s->sends[q].head);
            s->nsends--;
            *progress = true;
            trd_status st = trd_fifo_push(done, id, -1);
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

/* Whether a message of `bytes` of call sig goes into receive r: one too
 * long for it, or of another call, is kept as the error of the next poll,
 * and r never completes. */
static bool accepts(trd_shm *s, const recv_op *r, int32_t from, size_t bytes, uint64_t sig)
{
    bool ok = bytes <= r->cap && sig == r->sig;
    if (!ok && !s->bad.seen)
        s->bad = (bad_match){.seen = true, .other_call = sig != r->sig, .from = from,
                             .tag = r->tag, .id = r->id, .bytes = bytes, .cap = r->cap,
                             .sig = sig, .want = r->sig};
    return ok;
}

/* The first posted receive that wants a message from `from` with tag, or
 * s->recvs.len. */
static size_t first_wanting(const trd_shm *s, int32_t from, int32_t tag)
{
    size_t i = s->recvs.head;
    while (i < s->recvs.len && !wants(&s->recvs.items[i], from, tag))
        i++;
    return i;
}

/* Copies stray m into receive r, completes r and frees m. */
static trd_status hand_stray(trd_shm *s, const recv_op *r, stray m, trd_fifo *done)
{
    trd_status st = TRD_OK;
    if (accepts(s, r, m.from, m.bytes, m.sig)) {
        if (m.bytes)
            memcpy(r->buf, m.data, m.bytes);
        st = trd_fifo_push(done, r->id, m.from);
    }
    free(m.data);
    return st;
}

/* A stray whose last fragment came: to the first receive posted since that
 * wants it, or aside until one does. */
static trd_status settle_stray(trd_shm *s, stray m, trd_fifo *done)
{
    size_t i = first_wanting(s, m.from, m.tag);
    if (i == s->recvs.len) {
        trd_status st = PUSH(s->strays, m);
        if (st != TRD_OK)
            free(m.data);
        return st;
    }
    recv_op r = s->recvs.items[i];
    TAKE(s->recvs, i);
    return hand_stray(s, &r, m, done);
}

/* A message's first fragment: it goes to the first posted receive that
 * wants it (which leaves the posted list: later ones match the next
 * message), else aside into a stray of its full length. */
static trd_status open_message(trd_shm *s, int32_t from, const slot_head *h)
{
    incoming *in = &s->in[from];
    size_t i = first_wanting(s, from, h->tag);
    *in = (incoming){.on = true,
                     .m = {.from = from, .tag = h->tag, .sig = h->sig, .bytes = h->total}};
    if (i < s->recvs.len) {
        in->r = s->recvs.items[i];
        TAKE(s->recvs, i);
        in->to_recv = accepts(s, &in->r, from, h->total, h->sig);
        s->filling += in->to_recv;
        return TRD_OK;
    }
    in->m.data = malloc(h->total ? h->total : 1);
    in->on = in->m.data != NULL;
    return in->on ? TRD_OK
                  : trd_fail(TRD_ENOMEM, "shm: out of memory for a %zu-byte message",
                             (size_t)h->total);
}

/* The next fragment from `from` into the message it belongs to; the last
 * one completes its receive or settles its stray.  Then its slot is the
 * sender's again. */
static trd_status take_fragment(trd_shm *s, int32_t from, const slot_head *h, trd_fifo *done)
{
    incoming *in = &s->in[from];
    trd_status st = in->on ? TRD_OK : open_message(s, from, h);
    if (st != TRD_OK)
        return st;
    unsigned char *dst = in->to_recv ? in->r.buf : in->m.data;
    if (dst && h->bytes)
        memcpy(dst + in->got, h + 1, h->bytes);
    in->got += h->bytes;
    if (in->got < in->m.bytes)
        return TRD_OK;
    in->on = false;
    if (in->to_recv) {
        s->filling--;
        return trd_fifo_push(done, in->r.id, from);
    }
    stray m = in->m;
    in->m.data = NULL;
    return m.data ? settle_stray(s, m, done) : TRD_OK;
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
        st = take_fragment(s, from, h, done);
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

trd_status trd_shm_irecv(trd_shm *s, int32_t peer, int32_t tag, uint64_t sig, void *buf,
                         size_t bytes, int32_t id, trd_fifo *done)
{
    recv_op r = {.peer = peer, .tag = tag, .id = id, .sig = sig, .buf = buf, .cap = bytes};
    for (size_t i = s->strays.head; i < s->strays.len; i++) { /* set aside earlier: first */
        stray m = s->strays.items[i];
        if (!wants(&r, m.from, m.tag))
            continue;
        TAKE(s->strays, i);
        return hand_stray(s, &r, m, done);
    }
    trd_status st = PUSH(s->recvs, r);
    bool progress = false;
    if (st == TRD_OK) /* it may be there already: then the wait finds it done */
        st = peer == TRD_ANY_RANK ? drain_all(s, done, &progress) : drain(s, peer, done, &progress);
    return st;
}

/* The error of a message its receive refused (accepts). */
static trd_status refusal(const trd_shm *s)
{
    const bad_match *b = &s->bad;
    if (b->other_call) {
        char mine[256] = "";
        if (s->call && trd_call_sig_value(s->call) == b->want)
            trd_call_sig_text(s->call, mine, sizeof mine);
        else
            snprintf(mine, sizeof mine, "call %lu with arguments %08lx",
                     (unsigned long)(b->want & 0xffffffffu), (unsigned long)(b->want >> 32));
        return trd_fail(TRD_EIO, "mpi wire: rank %d: mismatched collective calls: rank %d sent "
                        "it a message (tag %d) of %s than its receive's, %s (shared memory)",
                        (int)s->me, (int)b->from, (int)b->tag,
                        (b->sig & 0xffffffffu) == (b->want & 0xffffffffu)
                            ? "a call with other arguments (algorithm, kind, root, count, "
                              "element size or operator)"
                            : "another call (it is not in step)",
                        mine);
    }
    return trd_fail(TRD_EIO, "mpi wire: rank %d: the message (%zu bytes) from rank %d with tag %d "
                    "is longer than the %zu-byte receive buffer of step %d (shared memory)",
                    (int)s->me, b->bytes, (int)b->from, (int)b->tag, b->cap, (int)b->id);
}

/* The first failure a rank of the node set (trd_shm_fail), as a status. */
static trd_status failure_status(const trd_shm *s)
{
    const seg_head *h = (const seg_head *)s->base;
    return trd_fail(h->code < 0 ? (trd_status)h->code : TRD_EIO, "mpi wire: rank %d failed: %s",
                    (int)h->rank, h->text);
}

trd_status trd_shm_poll(trd_shm *s, trd_fifo *done, bool *progress)
{
    const seg_head *h = (const seg_head *)s->base;
    if (atomic_load_explicit(&h->state, memory_order_acquire) == FAIL_SET)
        return failure_status(s);
    trd_status st = s->nsends ? flush_sends(s, done, progress) : TRD_OK;
    if (st == TRD_OK)
        st = drain_all(s, done, progress);
    if (st == TRD_OK && s->bad.seen)
        st = refusal(s);
    return st;
}

void trd_shm_fail(trd_shm *s, int32_t rank, int32_t code, const char *text)
{
    seg_head *h = (seg_head *)s->base;
    uint32_t none = FAIL_NONE;
    if (!atomic_compare_exchange_strong(&h->state, &none, FAIL_WRITING))
        return; /* another rank failed first */
    h->rank = rank;
    h->code = code;
    snprintf(h->text, sizeof h->text, "%s", text);
    atomic_store_explicit(&h->state, FAIL_SET, memory_order_release);
}

bool trd_shm_failure(const trd_shm *s, int32_t *rank, int32_t *code, char *text, size_t size)
{
    const seg_head *h = (const seg_head *)s->base;
    if (atomic_load_explicit(&h->state, memory_order_acquire) != FAIL_SET)
        return false;
    *rank = h->rank;
    *code = h->code;
    snprintf(text, size, "%s", h->text);
    return true;
}

int trd_shm_awaited(const trd_shm *s, int32_t *peers, int max)
{
    int n = 0;
    for (size_t i = s->recvs.head; i < s->recvs.len && n < max; i++) {
        int32_t q = s->recvs.items[i].peer;
        bool seen = q == TRD_ANY_RANK;
        for (int k = 0; k < n && !seen; k++)
            seen = peers[k] == q;
        if (!seen)
            peers[n++] = q;
    }
    return n;
}

void trd_shm_set_call(trd_shm *s, const trd_call_sig *call)
{
    s->call = call;
}

void trd_shm_withdraw(trd_shm *s)
{
    for (int32_t q = 0; q < s->n; q++)
        s->sends[q].head = s->sends[q].len = 0;
    s->nsends = 0;
    s->recvs.head = s->recvs.len = 0;
    for (int32_t q = 0; q < s->n; q++)
        if (s->in[q].on && s->in[q].to_recv) { /* its other fragments are skipped */
            s->in[q].to_recv = false;
            s->in[q].m.data = NULL;
            s->filling--;
        }
}

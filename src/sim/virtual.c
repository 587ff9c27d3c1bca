/* virtual.c: the virtual-time transport: a simulated transport
 * interchangeable with a real one under the same engine
 * (docs/ARCHITECTURE.md, docs/SIMULATION.md).
 *
 * A SEND and its matching RECV make a transfer; it starts when both are
 * posted, the port model lets both ranks take part (half duplex: one
 * transfer per rank; full: one send and one receive; multi: any) and its
 * release time has come.  Senders waiting for one receiver are served in
 * the order they became ready (canon-antoniu Sec. 3.2), ties by the plan's
 * start time of the SEND, then by posting order.  Transfers start only once
 * every event of the current instant has been handled, so senders that
 * become ready at the same time are seen together and a plan run with
 * constant costs follows its own receive order exactly; the ranks are then
 * tried in the order they got something to start (a posted step, or freed
 * ports with sends or senders waiting), and a rank with sends of its own
 * tries their receivers in the order of its latest unstarted send to
 * each.  A transfer costs d(from, to) times the next draw of the transfer
 * stream, a combine c(rank) times the next draw of the combine stream:
 * the k-th started transfer gets the k-th draw whatever the algorithm
 * (common random numbers, benoit Sec. 6).
 *
 * Posted steps live in tables indexed by the engine's step ids
 * (transport.h).  A SEND waits in its (sender, receiver) pair (virtual.h,
 * trd_vpair): listed there in posting order and, once its release has
 * come and its receive is posted, in the pair's heap of sends in the
 * order above; a receiver keeps a heap of its pairs by their first send
 * (its only ready send, as most of a small plan's, waits in a slot
 * instead: no heap is touched for it).
 * So the next transfer a receiver can start is found in time logarithmic
 * in its waiting sends, a sender whose port is busy is passed over with
 * its whole pair, and a sender tries each of its receivers once however
 * many sends it has waiting for each: the lists walked per send before
 * made a pipeline of 65 536 segments quadratic.  Every search gives the
 * transfer the walk of one queue sorted in that order gave.  A SEND
 * released later waits in its receiver's `later` heap, asks for a wake-up
 * when a search of its receiver finds nothing to start (as that walk then
 * reached it), and joins its pair's heap once its time has come.  A RECV
 * posted by rank b from any rank, or from a rank a that sends b more than
 * one message, is matched as an MPI receive is: the first posted receive
 * of b that accepts a.  When the engine names the partner of a SEND (the
 * only RECV that can match it), the RECV is only flagged and the match is
 * a look-up: the same answer, since no other receive of b accepts a and
 * the partner accepts nothing but a; a SEND whose partner is not posted
 * yet is parked on it.  Events (event_queue.h) name a step id and a kind;
 * a transfer's event ends both its steps: wait_any hands out the SEND end
 * and holds the RECV end for its next call.  Static programs run the
 * engine's loop with post and wait_any inlined into it (trd_virtual_run,
 * engine/run_static.h); the hot functions keep their rare paths (growing
 * the tables, wake-ups, random or heterogeneous costs) out of line, so
 * the loop stays small. */
#include "sim/virtual.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/splitmix.h"

/* Event op: id << 2 | kind.  A transfer with a flight time (costs.flight)
 * ends in two EV_FLIGHT events, out of the hot path: its ports are freed
 * (id << 3 | 0 << 2 | EV_FLIGHT), then it arrives (id << 3 | 1 << 2 |
 * EV_FLIGHT); without, one EV_TRANSFER does both. */
enum { EV_TRANSFER, EV_COMBINE, EV_WAKE, EV_FLIGHT };
enum { LANE_TRANSFER = 0, LANE_COMBINE = 1 };  /* each is pushed mostly in time order */
enum { F_POSTED = 1, F_PARKED = 2, F_FUSED = 4 }; /* flag[id], cleared at each reset */
#define IDS_MAX (1 << 29) /* ids and ranks shifted left by 3 stay in 32 bits */

/* Keeps rare paths out of the hot functions (fewer registers to save). */
#if defined(__GNUC__)
#define COLD __attribute__((noinline, cold))
#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define COLD
#define NOINLINE
#define ALWAYS_INLINE static inline
#endif

/* A rank with nothing posted, nothing in flight and no mark. */
static const trd_vrank idle_rank = {.waiting = 0, .out_first = -1, .recv_head = -1};

static uint32_t op_of(int32_t id, int kind)
{
    return (uint32_t)id << 2 | (uint32_t)kind;
}

/* Room for ids below `ids`; pending events (at most one per step and one
 * wake-up per send) keep their place. */
static COLD trd_status reserve(trd_virtual *v, int64_t ids)
{
    if (ids < 0 || ids > IDS_MAX) /* ids: the posted id + 1 (-1 if negative), or a count */
        return trd_fail(TRD_EINVAL, "simulator: step id %lld is out of range",
                        (long long)(ids < 0 ? ids : ids - 1));
    if (ids <= v->cap)
        return TRD_OK;
    int64_t cap = v->cap > 0 ? 2 * (int64_t)v->cap : 16; /* geometric when posts grow it */
    cap = cap < ids ? ids : cap > IDS_MAX ? IDS_MAX : cap;
    trd_vstep *st = realloc(v->st, (size_t)cap * sizeof *st);
    if (st)
        v->st = st;
    uint8_t *flag = st ? realloc(v->flag, (size_t)cap * sizeof *flag) : NULL;
    if (flag)
        v->flag = flag;
    bool own = v->partner == v->no_partner;
    int32_t *none = flag ? realloc(v->no_partner, (size_t)cap * sizeof *none) : NULL;
    if (none)
        v->no_partner = none;
    int32_t *tag = none ? realloc(v->tag, (size_t)cap * sizeof *tag) : NULL;
    if (tag)
        v->tag = tag;
    trd_vsend *sd = tag ? realloc(v->sd, (size_t)cap * sizeof *sd) : NULL;
    if (sd)
        v->sd = sd;
    if (own)
        v->partner = v->no_partner;
    double *started = sd && v->started ? realloc(v->started, (size_t)cap * sizeof *started)
                                       : NULL;
    if (started)
        v->started = started;
    if (!sd || (v->started && !started) || !trd_eq_reserve(&v->events, 2 * (uint32_t)cap + 16))
        return trd_fail(TRD_ENOMEM, "simulator: out of memory for %lld steps", (long long)cap);
    memset(v->flag + v->cap, 0, (size_t)(cap - v->cap) * sizeof *v->flag);
    for (int64_t i = v->cap; i < cap; i++) {
        v->no_partner[i] = -1;
        v->sd[i].pair = -1;
    }
    v->cap = (int32_t)cap;
    return TRD_OK;
}

/* Port models as bits (trd_virtual_init): a transfer takes send_bits of
 * its sender and recv_bits of its receiver, and needs them free.  Half
 * duplex: one bit for both; full duplex: a send bit and a receive bit;
 * multi-port: none. */
static bool can_send(const trd_virtual *v, int32_t r)
{
    return !(v->ranks[r].busy & v->send_bits);
}

static bool can_recv(const trd_virtual *v, int32_t r)
{
    return !(v->ranks[r].busy & v->recv_bits);
}

/* Node links (trd_virtual_set_nodes): a transfer between nodes takes its
 * sender node's link out and its receiver node's link in. */
enum { LINK_OUT = 1, LINK_IN = 2 };

static bool crosses(const trd_virtual *v, int32_t from, int32_t to)
{
    return v->node_of && v->node_of[from] != v->node_of[to];
}

/* Whether a transfer from -> to may take the links it crosses. */
static bool link_free(const trd_virtual *v, int32_t from, int32_t to)
{
    return !crosses(v, from, to) || !((v->node_busy[v->node_of[from]] & LINK_OUT) |
                                      (v->node_busy[v->node_of[to]] & LINK_IN));
}

static void set_busy(trd_virtual *v, int32_t from, int32_t to)
{
    v->ranks[from].busy |= v->send_bits;
    v->ranks[to].busy |= v->recv_bits;
    if (crosses(v, from, to)) {
        v->node_busy[v->node_of[from]] |= LINK_OUT;
        v->node_busy[v->node_of[to]] |= LINK_IN;
    }
}

static void mark_if_pending(trd_virtual *v, int32_t rank);

/* A node's link is free again: its ranks may start what waited for it. */
static COLD void free_link(trd_virtual *v, int32_t node, uint8_t bit)
{
    v->node_busy[node] &= (uint8_t)~bit;
    for (int32_t k = v->node_first[node]; k < v->node_first[node + 1]; k++)
        mark_if_pending(v, v->node_member[k]);
}

static void set_free(trd_virtual *v, int32_t from, int32_t to)
{
    v->ranks[from].busy &= (uint8_t)~v->send_bits;
    v->ranks[to].busy &= (uint8_t)~v->recv_bits;
    if (crosses(v, from, to)) {
        free_link(v, v->node_of[from], LINK_OUT);
        free_link(v, v->node_of[to], LINK_IN);
    }
}

/* The first posted receive of `to` without a partner that accepts send s
 * from `from` with the same tag (the step's first block: trd_plan_blocks'
 * matching rule), or -1; *link gets its place in `to`'s list. */
static int32_t find_listed(trd_virtual *v, int32_t s, int32_t to, int32_t from, int32_t **link)
{
    for (int32_t *l = &v->ranks[to].recv_head; *l >= 0; l = &v->st[*l].next)
        if ((v->st[*l].peer == from || v->st[*l].peer == TRD_ANY_RANK) &&
            v->tag[*l] == v->tag[s]) {
            *link = l;
            return *l;
        }
    return -1;
}

/* Lanes pay when events come in time order (event_queue.h); random
 * delays would scatter them, and cost a comparison for nothing.  An event
 * of the current instant (a combine of cost 0) is still in order unless
 * its lane holds a later one (then trd_eq_push takes it to the heap). */
static void push_event(trd_virtual *v, int lane, double time, uint32_t op)
{
    if (v->random && time != v->now)
        trd_eq_push(&v->events, TRD_EQ_HEAP, time, op);
    else
        trd_eq_push(&v->events, lane, time, op);
}

/* The share of the buffer step id moves or combines (layout.scale). */
static double share(const trd_virtual *v, int32_t id)
{
    return v->scale ? (double)v->scale[id] : 1.0;
}

/* The latency plus d(from, to) times the share of send s times the next
 * draw of the transfer stream (params.latency: a segment of 1/m of the
 * buffer costs latency + (d - latency)/m), of which a message into a
 * RECV_COMBINE (`fused`) pays only what params.recv_combine_saving
 * leaves. */
static NOINLINE double transfer_cost(trd_virtual *v, int32_t s, int32_t from, int32_t to,
                                     bool fused)
{
    double keep = fused ? 1.0 - v->costs->recv_combine_saving : 1.0;
    bool far = v->far && crosses(v, from, to);
    double base = far ? v->far_base : trd_costs_transfer_base(v->costs, from, to);
    double cost = base * share(v, s) * keep;
    return (far ? v->far_latency : v->costs->latency) +
           (v->random ? cost * trd_costs_factor(v->costs, &v->rng_d) : cost);
}

/* The fixed part plus c(rank) times the share of combine id times the
 * next draw of the combine stream.  Where c is 0 everywhere nothing is
 * drawn: no draw could change a cost, so the streams' coupling is kept. */
static NOINLINE double combine_cost(trd_virtual *v, int32_t id, int32_t rank)
{
    double cost = trd_costs_combine_base(v->costs, rank) * share(v, id);
    return v->costs->combine_fixed +
           (v->draw_c ? cost * trd_costs_factor(v->costs, &v->rng_c) : cost);
}

/* The end of a transfer of send s costing `cost`: one event, or with a
 * flight time the ports' release and then the arrival. */
static NOINLINE void push_transfer_end(trd_virtual *v, int32_t s, double cost)
{
    double flight = v->costs->flight < cost ? v->costs->flight : cost; /* a far message's */
    if (flight <= 0) {
        push_event(v, LANE_TRANSFER, v->now + cost, op_of(s, EV_TRANSFER));
        return;
    }
    uint32_t op = (uint32_t)s << 3 | EV_FLIGHT;
    push_event(v, LANE_TRANSFER, v->now + cost - flight, op);
    push_event(v, LANE_TRANSFER, v->now + cost, op | 1u << 2);
}

/* When step id begins, where it is traced (trd_virtual_trace). */
static inline void note_start(trd_virtual *v, int32_t id, double time)
{
    if (v->started)
        v->started[id] = time;
}

/* Whether send a comes before send b for its receiver: the order senders
 * became ready, ties by the plan's start time, then by posting order. */
static inline bool before(const trd_virtual *v, int32_t a, int32_t b)
{
    const trd_vstep *x = &v->st[a], *y = &v->st[b];
    if (x->ready != y->ready)
        return x->ready < y->ready;
    if (x->planned != y->planned)
        return x->planned < y->planned;
    return v->sd[a].seq < v->sd[b].seq;
}

static inline int32_t *items(const trd_virtual *v, const trd_vheap *h)
{
    return v->arena + h->off;
}

/* Room for `len` items in h: a larger block at the end of the arena, the
 * old one left unused (posting a send makes room for everything the
 * searches may then move, so that they never allocate). */
static COLD bool heap_room(trd_virtual *v, trd_vheap *h, int32_t len)
{
    if (len <= h->cap)
        return true;
    int32_t cap = h->cap ? 2 * h->cap : 2;
    cap = cap < len ? len : cap;
    if (v->arena_used + (size_t)cap > v->arena_cap) {
        size_t more = 2 * v->arena_cap + (size_t)cap + 256;
        int32_t *arena = realloc(v->arena, more * sizeof *arena);
        if (!arena)
            return false;
        v->arena = arena;
        v->arena_cap = more;
    }
    if (h->len > 0)
        memcpy(v->arena + v->arena_used, items(v, h), (size_t)h->len * sizeof *v->arena);
    h->off = (uint32_t)v->arena_used;
    h->cap = cap;
    v->arena_used += (size_t)cap;
    return true;
}

/* Sends, by `before` (room made). */
static inline void sends_push(const trd_virtual *v, trd_vheap *h, int32_t id)
{
    int32_t *item = items(v, h), i = h->len++;
    while (i > 0 && before(v, id, item[(i - 1) / 2])) {
        item[i] = item[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    item[i] = id;
}

static inline int32_t sends_pop(const trd_virtual *v, trd_vheap *h)
{
    int32_t *item = items(v, h), top = item[0], last = item[--h->len], i = 0, n = h->len;
    for (int32_t c = 1; c < n; c = 2 * i + 1) {
        if (c + 1 < n && before(v, item[c + 1], item[c]))
            c++;
        if (!before(v, item[c], last))
            break;
        item[i] = item[c];
        i = c;
    }
    if (n > 0)
        item[i] = last;
    return top;
}

/* A receiver's pairs, by their first ready send; each knows its place. */
static bool pair_before(const trd_virtual *v, int32_t a, int32_t b)
{
    return before(v, items(v, &v->pairs[a].ready)[0], items(v, &v->pairs[b].ready)[0]);
}

static inline void pairs_set(trd_virtual *v, trd_vheap *h, int32_t i, int32_t pair)
{
    items(v, h)[i] = pair;
    v->pairs[pair].at = i;
}

static NOINLINE void pairs_fix(trd_virtual *v, trd_vheap *h, int32_t i)
{
    int32_t pair = items(v, h)[i], n = h->len;
    while (i > 0 && pair_before(v, pair, items(v, h)[(i - 1) / 2])) {
        pairs_set(v, h, i, items(v, h)[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (int32_t c = 2 * i + 1; c < n; c = 2 * i + 1) {
        if (c + 1 < n && pair_before(v, items(v, h)[c + 1], items(v, h)[c]))
            c++;
        if (!pair_before(v, items(v, h)[c], pair))
            break;
        pairs_set(v, h, i, items(v, h)[c]);
        i = c;
    }
    pairs_set(v, h, i, pair);
}

/* Takes the pair at the top of h out of it. */
static inline void pairs_pop_top(trd_virtual *v, trd_vheap *h)
{
    v->pairs[items(v, h)[0]].at = -1;
    if (--h->len > 0) {
        pairs_set(v, h, 0, items(v, h)[h->len]);
        if (h->len > 1)
            pairs_fix(v, h, 0);
    }
}

/* The pair's first ready send changed, or it has none left: its place in
 * its receiver's pair heap follows (room made). */
static inline void pair_moved(trd_virtual *v, int32_t pair)
{
    trd_vpair *pr = &v->pairs[pair];
    trd_vheap *h = &v->queues[pr->to].pairs;
    int32_t at = pr->at;
    if (at < 0 && pr->ready.len > 0) {
        pairs_set(v, h, h->len++, pair);
        if (h->len > 1)
            pairs_fix(v, h, h->len - 1);
    } else if (at >= 0 && pr->ready.len == 0) {
        pr->at = -1;
        if (at != --h->len) {
            pairs_set(v, h, at, items(v, h)[h->len]);
            pairs_fix(v, h, at);
        }
    } else if (at >= 0 && h->len > 1) {
        pairs_fix(v, h, at);
    }
}

/* Send id of pair joins the heaps of its receiver. */
static inline void pair_ready(trd_virtual *v, int32_t pair, int32_t id)
{
    trd_vpair *pr = &v->pairs[pair];
    sends_push(v, &pr->ready, id);
    if (pr->at < 0 || items(v, &pr->ready)[0] == id)
        pair_moved(v, pair);
}

/* Send id may now be taken by its receiver `to`: in the receiver's
 * slot `solo` if it is the only one (as in most receivers of a small
 * plan, which then never touch the heaps), else in the heaps, the
 * slot's send first. */
static inline void make_ready(trd_virtual *v, int32_t to, int32_t id)
{
    trd_vqueues *q = &v->queues[to];
    if (q->solo < 0 && q->pairs.len == 0) {
        q->solo = id;
        return;
    }
    if (q->solo >= 0) {
        pair_ready(v, v->sd[q->solo].pair, q->solo);
        q->solo = -1;
    }
    pair_ready(v, v->sd[id].pair, id);
}

/* Send id's release has come: ready for its receiver, or parked on its
 * partner until that RECV is posted (post_recv). */
static inline void released(trd_virtual *v, int32_t id, int32_t to)
{
    int32_t r = v->partner[id];
    if (r >= 0 && !(v->flag[r] & F_POSTED))
        v->flag[id] |= F_PARKED;
    else
        make_ready(v, to, id);
}

/* Sends to `to` whose release has come since its last search join their
 * pairs' heaps. */
static inline void release_due(trd_virtual *v, int32_t to)
{
    trd_vqueues *q = &v->queues[to];
    while (q->later.len > 0 && v->st[items(v, &q->later)[0]].ready <= v->now)
        released(v, sends_pop(v, &q->later), to);
    while (q->woken.len > 0 && v->st[items(v, &q->woken)[0]].ready <= v->now)
        released(v, sends_pop(v, &q->woken), to);
}

/* A search of `to` found nothing to start: every send released later that
 * asked for no wake-up yet asks for one at its release (each once, as a
 * walk of the receiver's whole queue reached it). */
static COLD void want_wakes(trd_virtual *v, int32_t to)
{
    trd_vqueues *q = &v->queues[to];
    while (q->later.len > 0) {
        int32_t s = sends_pop(v, &q->later);
        trd_eq_push(&v->events, TRD_EQ_HEAP, v->st[s].ready, op_of(to, EV_WAKE));
        sends_push(v, &q->woken, s);
    }
}

/* --- pairs ---------------------------------------------------------------- */

static bool same_pair(const void *ctx, int32_t id)
{
    const trd_virtual *v = ((const trd_virtual *const *)ctx)[0];
    const int32_t *key = ((const int32_t *const *)ctx)[1];
    return v->pairs[id].from == key[0] && v->pairs[id].to == key[1];
}

/* A pair with no send, as this run starts it. */
static void pair_clear(trd_vpair *pr, uint32_t run)
{
    pr->run = run;
    pr->at = pr->first = pr->last = pr->up = pr->down = -1;
    pr->ready.len = 0;
}

/* The pair (from, to), made on its first send.  -1 when out of memory. */
static COLD int32_t pair_make(trd_virtual *v, int32_t from, int32_t to)
{
    int32_t key[2] = {from, to};
    const void *ctx[2] = {v, key};
    uint64_t h = trd_hash_pair(from, to);
    int32_t id = trd_index_find(&v->pair_index, h, same_pair, ctx);
    if (id >= 0)
        return id;
    if (v->npairs == v->pairs_cap) {
        int32_t cap = v->pairs_cap ? 2 * v->pairs_cap : 64;
        trd_vpair *more = realloc(v->pairs, (size_t)cap * sizeof *more);
        if (!more)
            return -1;
        v->pairs = more;
        v->pairs_cap = cap;
    }
    if (trd_index_add(&v->pair_index, h, v->npairs, "simulator pairs") != TRD_OK)
        return -1;
    id = v->npairs++;
    v->pairs[id] = (trd_vpair){.from = from, .to = to};
    pair_clear(&v->pairs[id], v->run);
    return id;
}

/* The pair of send id (from its rank to `to`), its state this run's: a
 * send remembers its pair from run to run (a static plan's never
 * changes). */
static inline int32_t pair_of(trd_virtual *v, int32_t id, int32_t from, int32_t to)
{
    int32_t pair = v->sd[id].pair;
    if (pair < 0 || pair >= v->npairs || v->pairs[pair].from != from || v->pairs[pair].to != to)
        pair = v->sd[id].pair = pair_make(v, from, to);
    if (pair >= 0 && v->pairs[pair].run != v->run)
        pair_clear(&v->pairs[pair], v->run);
    return pair;
}

/* The seq of the pair's last unstarted send: its rank in from's list. */
static uint32_t last_seq(const trd_virtual *v, int32_t pair)
{
    return v->sd[v->pairs[pair].last].seq;
}

static inline void unlist_pair(trd_virtual *v, int32_t pair)
{
    trd_vpair *pr = &v->pairs[pair];
    if (pr->up >= 0)
        v->pairs[pr->up].down = pr->down;
    else
        v->ranks[pr->from].out_first = pr->down;
    if (pr->down >= 0)
        v->pairs[pr->down].up = pr->up;
    pr->up = pr->down = -1;
}

/* Pair lists first in its sender's list (it has the newest send). */
static inline void list_pair_first(trd_virtual *v, int32_t pair)
{
    trd_vpair *pr = &v->pairs[pair];
    int32_t *head = &v->ranks[pr->from].out_first;
    if (*head == pair)
        return;
    if (pr->up >= 0 || pr->down >= 0)
        unlist_pair(v, pair);
    pr->down = *head;
    if (*head >= 0)
        v->pairs[*head].up = pair;
    *head = pair;
}

/* Send s (the pair's last) is gone: the pair moves down its sender's
 * list past those with a later last send. */
static NOINLINE void pair_sinks(trd_virtual *v, int32_t pair)
{
    trd_vpair *pr = &v->pairs[pair];
    uint32_t seq = last_seq(v, pair);
    while (pr->down >= 0 && last_seq(v, pr->down) > seq) {
        int32_t down = pr->down, up = pr->up;
        trd_vpair *d = &v->pairs[down];
        pr->down = d->down; /* swap pair and down */
        if (d->down >= 0)
            v->pairs[d->down].up = pair;
        d->up = up;
        d->down = pair;
        pr->up = down;
        if (up >= 0)
            v->pairs[up].down = down;
        else
            v->ranks[pr->from].out_first = down;
    }
}

/* Send s leaves its pair's list of unstarted sends (it starts). */
static inline void unlist_send(trd_virtual *v, int32_t s)
{
    trd_vsend *d = &v->sd[s];
    trd_vpair *pr = &v->pairs[d->pair];
    bool was_last = pr->last == s;
    if (d->prev >= 0)
        v->sd[d->prev].next = d->next;
    else
        pr->first = d->next;
    if (d->next >= 0)
        v->sd[d->next].prev = d->prev;
    else
        pr->last = d->prev;
    if (pr->first < 0)
        unlist_pair(v, d->pair);
    else if (was_last)
        pair_sinks(v, d->pair);
}

/* Starts send s (taken out of its pair's heap) into RECV r. */
static inline void start_transfer(trd_virtual *v, int32_t s, int32_t r, int32_t *rlink)
{
    trd_vstep *p = &v->st[s];
    int32_t from = p->rank, to = p->peer;
    set_busy(v, from, to);
    note_start(v, s, v->now);
    note_start(v, r, v->now);
    if (v->plain)
        trd_eq_push(&v->events, LANE_TRANSFER, v->now + v->mean_d, op_of(s, EV_TRANSFER));
    else
        push_transfer_end(v, s, transfer_cost(v, s, from, to, v->flag[r] & F_FUSED));
    unlist_send(v, s);
    v->ranks[to].waiting--;
    p->next_out = r; /* out of every list now: remembers its RECV */
    if (rlink) /* a partner keeps its flag: only its one SEND would look */
        *rlink = v->st[r].next;
}

/* The send in the slot of `to` (its only ready one, the heaps empty),
 * taken out of it when its sender's port is free and a receive accepts
 * it (*r, *rlink as take_first's), or -1. */
static inline int32_t take_solo(trd_virtual *v, int32_t to, int32_t *r, int32_t **rlink)
{
    int32_t s = v->queues[to].solo, from = v->st[s].rank;
    *rlink = NULL;
    if (!can_send(v, from) || !link_free(v, from, to))
        return -1;
    *r = v->partner[s] >= 0 ? v->partner[s] : find_listed(v, s, to, from, rlink);
    if (*r < 0)
        return -1;
    v->queues[to].solo = -1;
    return s;
}

/* The first send that `to` can take now, taken out of its pair's heap,
 * and its RECV (*r; *rlink its place in `to`'s list of receives without
 * a partner, or NULL), or -1: the merge of the pairs' heaps in order,
 * passing over every pair whose sender's port is busy, and over each
 * send without a partner that no posted receive accepts (set aside, then
 * put back: nothing changes but the send taken). */
static inline int32_t take_first(trd_virtual *v, int32_t to, int32_t *r, int32_t **rlink)
{
    trd_vheap *h = &v->queues[to].pairs;
    int32_t found = -1;
    if (v->queues[to].solo >= 0)
        return take_solo(v, to, r, rlink);
    v->naside = 0;
    while (h->len > 0 && found < 0) {
        int32_t pair = items(v, h)[0];
        trd_vpair *pr = &v->pairs[pair];
        int32_t s = items(v, &pr->ready)[0];
        *rlink = NULL;
        if (!can_send(v, pr->from) || !link_free(v, pr->from, to)) {
            v->aside[v->naside++] = ~pair; /* the whole pair */
            pairs_pop_top(v, h);
            continue;
        }
        *r = v->partner[s] >= 0 ? v->partner[s] : find_listed(v, s, to, pr->from, rlink);
        sends_pop(v, &pr->ready);
        pair_moved(v, pair);
        if (*r >= 0)
            found = s;
        else
            v->aside[v->naside++] = s; /* no receive accepts it yet */
    }
    for (int32_t k = v->naside; k-- > 0;) { /* back, in reverse: the heap as it was */
        int32_t a = v->aside[k];
        if (a < 0)
            pair_moved(v, ~a);
        else
            pair_ready(v, v->sd[a].pair, a);
    }
    return found;
}

/* Starts every transfer into `to` that the ports and releases allow, in
 * the order senders became ready; whether it started one. */
static NOINLINE bool try_receiver(trd_virtual *v, int32_t to)
{
    bool started = false;
    if (v->ranks[to].waiting == 0 || !can_recv(v, to))
        return false;
    release_due(v, to);
    for (;;) {
        int32_t r, *rlink, s = take_first(v, to, &r, &rlink);
        if (s < 0)
            break;
        start_transfer(v, s, r, rlink);
        if (v->port != TRD_PORT_MULTI)
            return true;
        started = true;
    }
    if (v->queues[to].later.len > 0)
        want_wakes(v, to);
    return started;
}

/* Transfers of `rank` are tried once every event of the current instant
 * has been handled, so senders that become ready at the same time compete
 * on equal terms (their order is then the plan's, see post_send). */
static void mark(trd_virtual *v, int32_t rank)
{
    if (!v->ranks[rank].dirty) {
        v->ranks[rank].dirty = 1;
        v->dirty[v->ndirty++] = rank;
    }
}

/* Freed ports matter only to a rank with sends to start or senders
 * waiting (both lists end in -1): any other is marked when it posts. */
static void mark_if_pending(trd_virtual *v, int32_t rank)
{
    if (v->ranks[rank].waiting > 0 || v->ranks[rank].out_first >= 0)
        mark(v, rank);
}

/* Room for everything a search of `to` may move once send id of pair
 * waits there too (the searches never allocate): the pair's heap, the
 * receiver's heaps and the searches' list of skipped pairs and sends
 * (two per waiting send, grown geometrically as the heaps are).  q->room
 * records for how many waiting sends the receiver's part has room: the
 * list is shared and only grows, so one compare checks it all. */
static COLD bool make_room(trd_virtual *v, int32_t pair, int32_t to)
{
    trd_vqueues *q = &v->queues[to];
    int32_t waiting = v->ranks[to].waiting + 1;
    if (!heap_room(v, &v->pairs[pair].ready, waiting) || !heap_room(v, &q->pairs, waiting) ||
        !heap_room(v, &q->later, waiting) || !heap_room(v, &q->woken, waiting))
        return false;
    int64_t need = 2 * (int64_t)waiting, most = 2 * (int64_t)IDS_MAX; /* waiting <= ids */
    if (v->aside_cap < need) {
        int64_t cap = 2 * (int64_t)v->aside_cap;
        cap = cap < need ? need : cap > most ? most : cap;
        int32_t *aside = realloc(v->aside, (size_t)cap * sizeof *aside);
        if (!aside)
            return false;
        v->aside = aside;
        v->aside_cap = (int32_t)cap;
    }
    int32_t room = v->aside_cap / 2;
    room = q->pairs.cap < room ? q->pairs.cap : room;
    room = q->later.cap < room ? q->later.cap : room;
    q->room = q->woken.cap < room ? q->woken.cap : room;
    return true;
}

static inline bool has_room(const trd_virtual *v, int32_t pair, int32_t to)
{
    int32_t waiting = v->ranks[to].waiting + 1;
    return v->pairs[pair].ready.cap >= waiting && v->queues[to].room >= waiting;
}

static COLD trd_status no_room(void)
{
    return trd_fail(TRD_ENOMEM, "simulator: out of memory for the waiting sends");
}

/* Send `id` waits for its receiver: listed last in its pair, whose sender
 * tries that receiver first now, and in the pair's heap once released
 * (in `to`'s later heap until then). */
ALWAYS_INLINE trd_status post_send(trd_virtual *v, int32_t rank, int32_t id,
                                   const trd_step *s)
{
    trd_vstep *p = &v->st[id];
    double ready = s->release > v->now ? s->release : v->now;
    int32_t to = s->peer, pair = pair_of(v, id, rank, to);
    if (pair < 0 || (!has_room(v, pair, to) && !make_room(v, pair, to)))
        return no_room();
    trd_vpair *pr = &v->pairs[pair];
    trd_vsend *d = &v->sd[id];
    if (v->ranks[to].waiting == 0) { /* its heaps are empty (a failed run may have left them) */
        trd_vqueues *q = &v->queues[to];
        q->pairs.len = q->later.len = q->woken.len = 0;
        q->solo = -1;
    }
    p->ready = ready;
    p->planned = s->start;
    p->rank = rank;
    p->peer = to;
    v->tag[id] = s->block;
    d->seq = v->posts++;
    d->prev = pr->last;
    d->next = -1;
    if (pr->last >= 0)
        v->sd[pr->last].next = id;
    else
        pr->first = id;
    pr->last = id;
    list_pair_first(v, pair);
    v->ranks[to].waiting++;
    if (ready > v->now)
        sends_push(v, &v->queues[to].later, id);
    else
        released(v, id, to);
    mark(v, to);
    return TRD_OK;
}

/* The RECV that send s was parked on is posted: s is ready. */
static NOINLINE void unpark(trd_virtual *v, int32_t s)
{
    v->flag[s] &= (uint8_t)~F_PARKED;
    make_ready(v, v->st[s].peer, s);
}

/* A RECV without a partner is listed, to be matched in posting order. */
static NOINLINE trd_status post_recv_listed(trd_virtual *v, int32_t rank, int32_t id,
                                            const trd_step *s)
{
    trd_vstep *p = &v->st[id];
    int32_t *link = &v->ranks[rank].recv_head;
    while (*link >= 0)
        link = &v->st[*link].next;
    p->peer = s->peer;
    p->next = -1;
    v->tag[id] = s->block;
    *link = id;
    mark(v, rank);
    return TRD_OK;
}

/* A RECV with a partner is only flagged; others go to post_recv_listed,
 * out of line.  (A RECV's rank is never read back: its completion comes
 * from its SEND's record.) */
ALWAYS_INLINE trd_status post_recv(trd_virtual *v, int32_t rank, int32_t id,
                                   const trd_step *s)
{
    if (v->partner[id] < 0)
        return post_recv_listed(v, rank, id, s);
    v->flag[id] = F_POSTED;
    if (v->flag[v->partner[id]] & F_PARKED)
        unpark(v, v->partner[id]);
    mark(v, rank);
    return TRD_OK;
}

/* A COMBINE (or COPY, free) ends after its cost: drawn, or read from the
 * cost model's tables. */
/* The end of a combine of `cost` on `rank` that may start now: a rank
 * combines one thing at a time, as the thread or process running it
 * does, so it starts when the rank's last combine ends.  Independent
 * combines of one rank (blocks of a segmented plan, a message folded in
 * on arrival while a COMBINE runs) would otherwise overlap. */
static inline double combine_end(trd_virtual *v, int32_t rank, double cost)
{
    double start = v->cpu_free[rank] > v->now ? v->cpu_free[rank] : v->now;
    return v->cpu_free[rank] = start + cost;
}

/* A COMBINE or COPY begins once its rank is free. */
static inline void note_local_start(trd_virtual *v, int32_t rank, int32_t id,
                                    const trd_step *s)
{
    if (v->started)
        note_start(v, id, s->kind == TRD_STEP_COMBINE && v->cpu_free[rank] > v->now
                              ? v->cpu_free[rank] : v->now);
}

static NOINLINE trd_status post_local_drawn(trd_virtual *v, int32_t rank, int32_t id,
                                            const trd_step *s)
{
    note_local_start(v, rank, id, s);
    if (s->kind == TRD_STEP_COMBINE)
        push_event(v, LANE_COMBINE, combine_end(v, rank, combine_cost(v, id, rank)),
                   op_of(id, EV_COMBINE));
    else
        push_event(v, LANE_COMBINE, v->now, op_of(id, EV_COMBINE));
    return TRD_OK;
}

/* The same under plain costs (mean_c); other models go to
 * post_local_drawn, out of line. */
ALWAYS_INLINE trd_status post_local(trd_virtual *v, int32_t rank, int32_t id,
                                    const trd_step *s)
{
    v->st[id].rank = rank;
    if (!v->plain)
        return post_local_drawn(v, rank, id, s);
    note_local_start(v, rank, id, s);
    double end = s->kind == TRD_STEP_COMBINE ? combine_end(v, rank, v->mean_c) : v->now;
    trd_eq_push(&v->events, LANE_COMBINE, end, op_of(id, EV_COMBINE));
    return TRD_OK;
}

/* A RECV_COMBINE is posted as a RECV, flagged so that its arrival starts
 * its combine (hold_recv) instead of ending it; its rank is kept for that
 * combine. */
static NOINLINE trd_status post_recv_combine(trd_virtual *v, int32_t rank, int32_t id,
                                             const trd_step *s)
{
    v->st[id].rank = rank;
    trd_status st = post_recv(v, rank, id, s);
    v->flag[id] |= F_FUSED;
    return st;
}

/* A step whose id has room: to its kind's path. */
ALWAYS_INLINE trd_status post_step(trd_virtual *v, int32_t rank, int32_t id, const trd_step *s)
{
    if (s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT)
        return post_send(v, rank, id, s);
    if (s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_COPY)
        return post_local(v, rank, id, s);
    if (s->kind == TRD_STEP_RECV_COMBINE)
        return post_recv_combine(v, rank, id, s);
    return post_recv(v, rank, id, s);
}

/* An id beyond the tables (no attach): grows them, then posts. */
static COLD trd_status post_grow(trd_virtual *v, int32_t rank, int32_t id, const trd_step *s)
{
    trd_status st = reserve(v, id < 0 ? -1 : (int64_t)id + 1);
    return st != TRD_OK ? st : post_step(v, rank, id, s);
}

ALWAYS_INLINE trd_status post(void *ctx, int32_t rank, int32_t id, const trd_step *s)
{
    trd_virtual *v = ctx;
    if ((uint32_t)id >= (uint32_t)v->cap)
        return post_grow(v, rank, id, s);
    return post_step(v, rank, id, s);
}

/* Starts what the marked ranks allow (the current instant has settled):
 * each may receive now, and its own unstarted sends may go.  Trying
 * marks nothing, so the list stays as it is. */
static NOINLINE void flush(trd_virtual *v)
{
    trd_vrank *ranks = v->ranks;
    const int32_t *dirty = v->dirty;
    for (int32_t k = 0, n = v->ndirty; k < n; k++) {
        int32_t r = dirty[k];
        ranks[r].dirty = 0;
        if (ranks[r].waiting > 0)
            try_receiver(v, r);
        for (int32_t pair = ranks[r].out_first; pair >= 0;)
            pair = try_receiver(v, v->pairs[pair].to) ? ranks[r].out_first : v->pairs[pair].down;
    }
    v->ndirty = 0;
}

/* A wake-up for `rank`: a send's release has come (release_due takes it
 * in), and the rank is tried again. */
static void wake(trd_virtual *v, int32_t rank)
{
    mark(v, rank);
}

/* A RECV_COMBINE's message has arrived: its combine starts now, as the
 * runtime folds a message into the accumulator on arrival (its
 * accumulator waited for nothing: plan/fuse.c), and ends the step. */
static COLD void combine_arrived(trd_virtual *v, int32_t id)
{
    int32_t rank = v->st[id].rank;
    double cost = v->plain ? v->mean_c : combine_cost(v, id, rank);
    push_event(v, LANE_COMBINE, combine_end(v, rank, cost), op_of(id, EV_COMBINE));
}

/* Holds the RECV end of send g (rank r) for the next wait_any, or starts
 * its combine when it is a RECV_COMBINE. */
static void hold_recv(trd_virtual *v, int32_t g, int32_t r)
{
    if (v->flag[v->st[g].next_out] & F_FUSED) {
        combine_arrived(v, v->st[g].next_out);
        return;
    }
    v->held[0] = v->st[g].peer;
    v->held[1] = v->st[g].next_out;
    v->held[2] = r;
    v->holding = true;
}

/* Hands out the step that event ev (from `lane`, due now) ends: a COMBINE
 * or COPY, or a transfer's SEND end, its RECV end held for the next call. */
static inline trd_status deliver(trd_virtual *v, const trd_event *ev, trd_event_lane *lane,
                                 int32_t *rank, int32_t *id, int32_t *from)
{
    uint32_t op = ev->op;
    int32_t g = (int32_t)(op >> 2), r = v->st[g].rank;
    v->now = ev->time;
    *id = g;
    *rank = r;
    *from = -1;
    if ((op & 3) == EV_TRANSFER) {
        int32_t to = v->st[g].peer;
        set_free(v, r, to);
        hold_recv(v, g, r);
        mark_if_pending(v, to);
        mark_if_pending(v, r);
    }
    trd_eq_take(&v->events, lane); /* last: nothing is live across its call */
    return TRD_OK;
}

/* An EV_FLIGHT event: the ports of send g are free (the receiver may take
 * its next message), or the message has arrived: hands out the SEND end
 * and holds the RECV end, as deliver does; whether a step ended. */
static COLD bool flight_event(trd_virtual *v, uint32_t op, int32_t *rank, int32_t *id,
                              int32_t *from)
{
    int32_t g = (int32_t)(op >> 3), r = v->st[g].rank;
    if (!(op >> 2 & 1)) {
        set_free(v, r, v->st[g].peer);
        mark(v, v->st[g].peer);
        mark(v, r);
        return false;
    }
    *id = g;
    *rank = r;
    *from = -1;
    hold_recv(v, g, r);
    return true;
}

/* The next event does not end a step now: flushes the settled instant or
 * handles wake-ups until one does.  Out of wait_any's line, so that its
 * common path makes no call to keep registers across. */
static NOINLINE trd_status settle(trd_virtual *v, int32_t *rank, int32_t *id, int32_t *from)
{
    for (;;) {
        trd_event_lane *lane;
        const trd_event *ev = trd_eq_peek(&v->events, &lane);
        if (v->ndirty > 0 && (!ev || ev->time > v->now)) {
            flush(v);
            continue;
        }
        if (!ev)
            return trd_fail(TRD_EINVAL, "simulator: deadlock at time %g: steps are waiting "
                            "for transfers that can never happen", v->now);
        uint32_t op = ev->op;
        if ((op & 3) < EV_WAKE)
            return deliver(v, ev, lane, rank, id, from);
        v->now = ev->time;
        trd_eq_take(&v->events, lane);
        if ((op & 3) == EV_WAKE)
            wake(v, (int32_t)(op >> 2));
        else if (flight_event(v, op, rank, id, from))
            return TRD_OK;
    }
}

ALWAYS_INLINE trd_status wait_any(void *ctx, int32_t *rank, int32_t *id, int32_t *from)
{
    trd_virtual *v = ctx;
    if (v->holding) {
        v->holding = false;
        *rank = v->held[0];
        *id = v->held[1];
        *from = v->held[2];
        return TRD_OK;
    }
    trd_event_lane *lane;
    const trd_event *ev = trd_eq_peek(&v->events, &lane);
    if (!ev || (v->ndirty > 0 && ev->time > v->now) || (ev->op & 3) >= EV_WAKE)
        return settle(v, rank, id, from);
    return deliver(v, ev, lane, rank, id, from);
}

static double now(void *ctx)
{
    return ((trd_virtual *)ctx)->now;
}

/* The engine's layout: tables for all its ids, and its partners. */
static trd_status attach(void *ctx, const trd_layout *layout)
{
    trd_virtual *v = ctx;
    v->partner = layout->partner ? layout->partner : v->no_partner;
    v->scale = layout->scale;
    if (v->scale)
        v->plain = false;
    return reserve(v, layout->steps);
}

trd_transport trd_virtual_transport(trd_virtual *v)
{
    return (trd_transport){.ctx = v, .post = post, .wait_any = wait_any, .now = now,
                           .attach = attach};
}

/* Static programs run the engine's own loop with post and wait_any inlined
 * into it (run_static.h); policies go through the vtable. */
trd_status trd_virtual_run(trd_virtual *v, trd_engine *engine, int32_t *result_rank)
{
    trd_static_program prog;
    if (!trd_engine_static(engine, &prog)) {
        trd_transport t = trd_virtual_transport(v);
        return trd_engine_run(engine, &t, result_rank);
    }
    trd_status st = attach(v, trd_engine_layout(engine));
    if (st == TRD_OK)
        st = trd_run_static_loop(&prog, v, post, wait_any);
    if (result_rank)
        *result_rank = prog.result;
    return st;
}

trd_status trd_virtual_init(trd_virtual *v, int32_t n, trd_port port, const trd_costs *costs)
{
    *v = (trd_virtual){.n = n, .port = port, .costs = costs,
                       .send_bits = port == TRD_PORT_MULTI ? 0 : 1,
                       .recv_bits = port == TRD_PORT_MULTI ? 0 : port == TRD_PORT_HALF ? 1 : 2,
                       .random = costs->dist != TRD_DIST_CONST};
    if (n < 0 || n > IDS_MAX)
        return trd_fail(TRD_EINVAL, "simulator: n = %ld is out of range", (long)n);
    size_t nn = (size_t)n + 1;
    v->ranks = malloc(nn * sizeof *v->ranks);
    v->idle = malloc(nn * sizeof *v->idle);
    v->dirty = malloc(nn * sizeof *v->dirty);
    v->cpu_free = calloc(nn, sizeof *v->cpu_free);
    v->queues = calloc(nn, sizeof *v->queues);
    if (!v->ranks || !v->idle || !v->dirty || !v->cpu_free || !v->queues ||
        !trd_eq_reserve(&v->events, 2 * (uint32_t)n + 16)) {
        trd_virtual_destroy(v);
        return trd_fail(TRD_ENOMEM, "simulator: out of memory for n = %ld", (long)n);
    }
    for (int32_t r = 0; r < n; r++) {
        v->idle[r] = idle_rank;
        v->queues[r].solo = -1;
    }
    memcpy(v->ranks, v->idle, (size_t)n * sizeof *v->ranks);
    return TRD_OK;
}

trd_status trd_virtual_trace(trd_virtual *v)
{
    if (!v->started && !(v->started = malloc((size_t)(v->cap > 0 ? v->cap : 1) *
                                             sizeof *v->started)))
        return trd_fail(TRD_ENOMEM, "simulator: out of memory for a trace");
    return TRD_OK;
}

trd_status trd_virtual_set_nodes(trd_virtual *v, const int32_t *node_of, double far_d,
                                 double far_latency)
{
    v->far = node_of && far_d > 0 && !v->costs->dmat && v->port != TRD_PORT_MULTI;
    v->far_latency = far_latency;
    v->far_base = far_d - far_latency;
    free(v->node_busy);
    free(v->node_first);
    free(v->node_member);
    v->node_busy = NULL;
    v->node_first = v->node_member = NULL;
    v->node_of = NULL;
    if (!node_of || v->port == TRD_PORT_MULTI)
        return TRD_OK;
    int32_t n = v->n;
    for (int32_t r = 0; r < n; r++)
        if (node_of[r] < 0 || node_of[r] >= n)
            return trd_fail(TRD_EINVAL, "simulator: node_of[%ld] = %ld is not a node: need 0 "
                            "<= node < n = %ld", (long)r, (long)node_of[r], (long)n);
    size_t count = n > 0 ? (size_t)n : 1;
    v->node_busy = calloc(count, 1);
    v->node_first = calloc(count + 1, sizeof *v->node_first);
    v->node_member = malloc(count * sizeof *v->node_member);
    if (!v->node_busy || !v->node_first || !v->node_member) {
        trd_virtual_set_nodes(v, NULL, 0, 0);
        return trd_fail(TRD_ENOMEM, "simulator: out of memory for %ld nodes", (long)n);
    }
    for (int32_t r = 0; r < n; r++)
        v->node_first[node_of[r] + 1]++;
    for (int32_t k = 0; k < n; k++)
        v->node_first[k + 1] += v->node_first[k];
    for (int32_t r = 0; r < n; r++) /* counting sort: ascending ranks within a node */
        v->node_member[v->node_first[node_of[r]]++] = r;
    for (int32_t k = n; k > 0; k--) /* each start moved to the next node's: back */
        v->node_first[k] = v->node_first[k - 1];
    v->node_first[0] = 0;
    v->node_of = node_of;
    return TRD_OK;
}

void trd_virtual_destroy(trd_virtual *v)
{
    trd_virtual_set_nodes(v, NULL, 0, 0);
    free(v->started);
    free(v->ranks);
    free(v->idle);
    free(v->dirty);
    free(v->cpu_free);
    free(v->queues);
    free(v->pairs);
    free(v->arena);
    trd_index_free(&v->pair_index);
    free(v->aside);
    free(v->sd);
    free(v->st);
    free(v->flag);
    free(v->no_partner);
    free(v->tag);
    trd_eq_free(&v->events);
    *v = (trd_virtual){0};
}

/* splitmix64's first output from state x: decorrelated seeds for (seed,
 * run, stream). */
static uint64_t mix(uint64_t x) { return trd_splitmix64(&x); }

/* Cheaper than tracking what a run left behind (an error may stop it
 * anywhere): every table is cleared. */
void trd_virtual_reset(trd_virtual *v, uint64_t seed, int64_t run)
{
    memcpy(v->ranks, v->idle, (size_t)v->n * sizeof *v->ranks); /* a block copy: no loop */
    memset(v->cpu_free, 0, (size_t)v->n * sizeof *v->cpu_free);
    if (++v->run == 0) { /* wrapped: a pair's stamp could pass for this run's */
        for (int32_t k = 0; k < v->npairs; k++)
            v->pairs[k].run = 0;
        v->run = 1;
    }
    v->posts = 0;
    if (v->cap > 0)
        memset(v->flag, 0, (size_t)v->cap * sizeof *v->flag);
    v->mean_d = v->costs->mean_d; /* a cost file may have been loaded since init */
    v->mean_c = v->costs->mean_c;
    v->plain = !v->random && !v->costs->dmat && !v->costs->cvec && v->costs->latency == 0 &&
               v->costs->combine_fixed == 0 && v->costs->flight == 0 &&
               v->costs->recv_combine_saving == 0 && !v->far;
    v->draw_c = v->random && (v->costs->cvec || v->costs->mean_c != 0);
    v->scale = NULL; /* until attach */
    v->now = 0.0;
    if (v->node_busy)
        memset(v->node_busy, 0, v->n > 0 ? (size_t)v->n : 1);
    trd_eq_clear(&v->events);
    v->ndirty = 0;
    v->holding = false;
    v->partner = v->no_partner; /* until attach: a wrapper may not forward it */
    if (!v->random)
        return; /* no draws */
    uint64_t base = mix(seed ^ mix((uint64_t)run));
    trd_xoshiro_seed(&v->rng_d, mix(base + 1));
    trd_xoshiro_seed(&v->rng_c, mix(base + 2));
}

/* virtual.c: the virtual-time transport (DESIGN.md: a simulated transport
 * interchangeable with a real one under the same engine).
 *
 * A SEND and its matching RECV make a transfer; it starts when both are
 * posted, the port model lets both ranks take part (half duplex: one
 * transfer per rank; full: one send and one receive; multi: any) and its
 * release time has come.  Senders waiting for one receiver are served in
 * the order they became ready (canon-antoniu Sec. 3.2), ties by the plan's
 * start time of the SEND, then by posting order.  Transfers start only once
 * every event of the current instant has been handled, so senders that
 * become ready at the same time are seen together and a plan run with
 * constant costs follows its own receive order exactly.  A transfer costs
 * d(from, to) times the next draw of the transfer stream, a combine
 * c(rank) times the next draw of the combine stream:
 * the k-th started transfer gets the k-th draw whatever the algorithm
 * (common random numbers, benoit Sec. 6). */
#include "sim/virtual.h"

#include <stdlib.h>

#include "core/error.h"

enum { EV_TRANSFER, EV_COMBINE, EV_WAKE };

struct trd_vpending {
    int32_t rank, step, peer; /* peer: receiver of a send, sender of a recv */
    double ready;             /* sends: max(post time, release) */
    double planned;           /* sends: the plan's start time (ties in ready) */
    bool wake_pending;        /* a wake-up at `ready` is queued */
    int32_t next_in, next_out; /* list links (sends use both) */
};

static int32_t new_record(trd_virtual *v)
{
    int32_t i = v->free_rec;
    if (i >= 0) {
        v->free_rec = v->rec[i].next_in;
        return i;
    }
    if (v->nrec == v->caprec) {
        int32_t cap = v->caprec ? 2 * v->caprec : 64;
        trd_vpending *r = realloc(v->rec, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        v->rec = r;
        v->caprec = cap;
    }
    return v->nrec++;
}

static void free_record(trd_virtual *v, int32_t i)
{
    v->rec[i].next_in = v->free_rec;
    v->free_rec = i;
}

static bool can_send(const trd_virtual *v, int32_t r)
{
    return v->port == TRD_PORT_MULTI || !v->busy_send[r];
}

static bool can_recv(const trd_virtual *v, int32_t r)
{
    if (v->port == TRD_PORT_MULTI)
        return true;
    return v->port == TRD_PORT_HALF ? !v->busy_send[r] : !v->busy_recv[r];
}

static void set_busy(trd_virtual *v, int32_t from, int32_t to, uint8_t busy)
{
    if (v->port == TRD_PORT_MULTI)
        return;
    v->busy_send[from] = busy;
    if (v->port == TRD_PORT_HALF)
        v->busy_send[to] = busy;
    else
        v->busy_recv[to] = busy;
}

/* Unlinks record i from a list whose head is *head, by its `in` or `out`
 * link. */
static void unlink_record(trd_virtual *v, int32_t *head, int32_t i, bool out)
{
    while (*head != i)
        head = out ? &v->rec[*head].next_out : &v->rec[*head].next_in;
    *head = out ? v->rec[i].next_out : v->rec[i].next_in;
}

/* The first posted receive of `to` that accepts a message from `from`. */
static int32_t find_recv(const trd_virtual *v, int32_t to, int32_t from)
{
    for (int32_t i = v->recv_head[to]; i >= 0; i = v->rec[i].next_in)
        if (v->rec[i].peer == from || v->rec[i].peer == TRD_ANY_RANK)
            return i;
    return -1;
}

static void start_transfer(trd_virtual *v, int32_t s, int32_t r)
{
    int32_t from = v->rec[s].rank, to = v->rec[r].rank;
    double cost = trd_costs_transfer_base(v->costs, from, to);
    if (v->costs->dist != TRD_DIST_CONST)
        cost *= trd_costs_factor(v->costs, v->rng_d);
    set_busy(v, from, to, 1);
    v->started++;
    trd_eq_push(&v->events, (trd_event){.time = v->now + cost, .kind = EV_TRANSFER,
                                        .a = from, .b = v->rec[s].step, .c = to,
                                        .d = v->rec[r].step});
    unlink_record(v, &v->in_head[to], s, false);
    unlink_record(v, &v->out_head[from], s, true);
    unlink_record(v, &v->recv_head[to], r, false);
    free_record(v, s);
    free_record(v, r);
}

/* Starts every transfer into `to` that the ports and releases allow, in
 * the order senders became ready. */
static void try_receiver(trd_virtual *v, int32_t to)
{
    for (int32_t s = v->in_head[to]; s >= 0 && can_recv(v, to);) {
        int32_t next = v->rec[s].next_in, from = v->rec[s].rank, r;
        if (v->rec[s].ready > v->now) {
            if (!v->rec[s].wake_pending)
                trd_eq_push(&v->events, (trd_event){.time = v->rec[s].ready, .kind = EV_WAKE,
                                                    .a = to});
            v->rec[s].wake_pending = true;
        } else if (can_send(v, from) && (r = find_recv(v, to, from)) >= 0) {
            start_transfer(v, s, r);
            if (v->port == TRD_PORT_MULTI)
                next = v->in_head[to]; /* lists changed; rescan */
        }
        s = next;
    }
}

/* Transfers of `rank` are tried once every event of the current instant
 * has been handled, so senders that become ready at the same time compete
 * on equal terms (their order is then the plan's, see queue_send). */
static void mark(trd_virtual *v, int32_t rank)
{
    if (!v->is_dirty[rank]) {
        v->is_dirty[rank] = 1;
        v->dirty[v->ndirty++] = rank;
    }
}

/* After `rank`'s ports freed: it may receive, and its own sends may go. */
static void wake_rank(trd_virtual *v, int32_t rank)
{
    try_receiver(v, rank);
    for (int32_t s = v->out_head[rank]; s >= 0;) {
        int64_t before = v->started;
        try_receiver(v, v->rec[s].peer);
        s = v->started != before ? v->out_head[rank] : v->rec[s].next_out;
    }
}

/* Appends send record s to `to`'s waiting list, kept sorted by readiness. */
static void queue_send(trd_virtual *v, int32_t s, int32_t to)
{
    int32_t *link = &v->in_head[to];
    while (*link >= 0 && (v->rec[*link].ready < v->rec[s].ready ||
                          (v->rec[*link].ready == v->rec[s].ready &&
                           v->rec[*link].planned <= v->rec[s].planned)))
        link = &v->rec[*link].next_in;
    v->rec[s].next_in = *link;
    *link = s;
}

static trd_status post(void *ctx, int32_t rank, int32_t step, const trd_step *st)
{
    trd_virtual *v = ctx;
    if (st->kind == TRD_STEP_COMBINE || st->kind == TRD_STEP_COPY) {
        double cost = 0.0;
        if (st->kind == TRD_STEP_COMBINE) {
            cost = trd_costs_combine_base(v->costs, rank);
            if (v->costs->dist != TRD_DIST_CONST)
                cost *= trd_costs_factor(v->costs, v->rng_c);
        }
        trd_eq_push(&v->events, (trd_event){.time = v->now + cost, .kind = EV_COMBINE,
                                            .a = rank, .b = step});
        return TRD_OK;
    }
    int32_t i = new_record(v);
    if (i < 0)
        return trd_fail(TRD_ENOMEM, "simulator: out of memory");
    v->rec[i] = (trd_vpending){.rank = rank, .step = step, .peer = st->peer,
                               .ready = v->now, .planned = st->start, .next_in = -1,
                               .next_out = -1};
    if (st->kind == TRD_STEP_SEND) {
        if (st->release > v->now)
            v->rec[i].ready = st->release;
        queue_send(v, i, st->peer);
        v->rec[i].next_out = v->out_head[rank];
        v->out_head[rank] = i;
        mark(v, st->peer);
    } else { /* RECV: receives are matched in posting order */
        int32_t *link = &v->recv_head[rank];
        while (*link >= 0)
            link = &v->rec[*link].next_in;
        *link = i;
        mark(v, rank);
    }
    return TRD_OK;
}

static void push_done(trd_virtual *v, int32_t rank, int32_t step, int32_t from)
{
    int k = (v->done_head + v->done_count++) % 8;
    v->done[k][0] = rank;
    v->done[k][1] = step;
    v->done[k][2] = from;
}

static void handle(trd_virtual *v, const trd_event *ev)
{
    if (ev->kind == EV_COMBINE) {
        push_done(v, ev->a, ev->b, -1);
    } else if (ev->kind == EV_TRANSFER) {
        set_busy(v, ev->a, ev->c, 0);
        push_done(v, ev->a, ev->b, -1);
        push_done(v, ev->c, ev->d, ev->a);
        mark(v, ev->c);
        mark(v, ev->a);
    } else {
        for (int32_t s = v->in_head[ev->a]; s >= 0; s = v->rec[s].next_in)
            if (v->rec[s].ready <= v->now)
                v->rec[s].wake_pending = false;
        mark(v, ev->a);
    }
}

/* Starts what the marked ranks allow (the current instant has settled). */
static void flush(trd_virtual *v)
{
    for (int32_t k = 0; k < v->ndirty; k++) {
        v->is_dirty[v->dirty[k]] = 0;
        wake_rank(v, v->dirty[k]);
    }
    v->ndirty = 0;
}

static trd_status wait_any(void *ctx, int32_t *rank, int32_t *step, int32_t *from)
{
    trd_virtual *v = ctx;
    while (v->done_count == 0) {
        if (v->ndirty > 0 && (v->events.size == 0 || v->events.heap[0].time > v->now)) {
            flush(v);
            continue;
        }
        if (v->events.size == 0)
            return trd_fail(TRD_EINVAL, "simulator: deadlock at time %g: steps are waiting "
                            "for transfers that can never happen", v->now);
        trd_event ev = trd_eq_pop(&v->events);
        v->now = ev.time;
        handle(v, &ev);
    }
    *rank = v->done[v->done_head][0];
    *step = v->done[v->done_head][1];
    *from = v->done[v->done_head][2];
    v->done_head = (v->done_head + 1) % 8;
    v->done_count--;
    return TRD_OK;
}

static double now(void *ctx)
{
    return ((trd_virtual *)ctx)->now;
}

trd_transport trd_virtual_transport(trd_virtual *v)
{
    return (trd_transport){.ctx = v, .post = post, .wait_any = wait_any, .now = now};
}

trd_status trd_virtual_init(trd_virtual *v, int32_t n, trd_port port, const trd_costs *costs)
{
    *v = (trd_virtual){.n = n, .port = port, .costs = costs, .free_rec = -1};
    size_t nn = (size_t)n;
    v->busy_send = calloc(nn, 1);
    v->busy_recv = calloc(nn, 1);
    v->in_head = malloc(nn * sizeof *v->in_head);
    v->out_head = malloc(nn * sizeof *v->out_head);
    v->recv_head = malloc(nn * sizeof *v->recv_head);
    v->dirty = malloc(nn * sizeof *v->dirty);
    v->is_dirty = calloc(nn, 1);
    v->events.cap = 4 * (int64_t)nn + 16;
    v->events.heap = malloc((size_t)v->events.cap * sizeof *v->events.heap);
    v->rng_d = gsl_rng_alloc(gsl_rng_taus2);
    v->rng_c = gsl_rng_alloc(gsl_rng_taus2);
    if (!v->busy_send || !v->busy_recv || !v->in_head || !v->out_head || !v->recv_head ||
        !v->dirty || !v->is_dirty || !v->events.heap || !v->rng_d || !v->rng_c) {
        trd_virtual_destroy(v);
        return trd_fail(TRD_ENOMEM, "simulator: out of memory for n = %ld", (long)n);
    }
    return TRD_OK;
}

void trd_virtual_destroy(trd_virtual *v)
{
    free(v->busy_send);
    free(v->busy_recv);
    free(v->in_head);
    free(v->out_head);
    free(v->recv_head);
    free(v->dirty);
    free(v->is_dirty);
    free(v->events.heap);
    free(v->rec);
    if (v->rng_d)
        gsl_rng_free(v->rng_d);
    if (v->rng_c)
        gsl_rng_free(v->rng_c);
    *v = (trd_virtual){0};
}

/* splitmix64: decorrelated seeds for (seed, run, stream). */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void trd_virtual_reset(trd_virtual *v, uint64_t seed, int64_t run)
{
    v->now = 0.0;
    v->events.size = 0;
    v->events.next_seq = 0;
    v->nrec = 0;
    v->free_rec = -1;
    v->done_head = v->done_count = 0;
    v->started = 0;
    v->ndirty = 0;
    for (int32_t r = 0; r < v->n; r++) {
        v->busy_send[r] = v->busy_recv[r] = v->is_dirty[r] = 0;
        v->in_head[r] = v->out_head[r] = v->recv_head[r] = -1;
    }
    if (v->costs->dist == TRD_DIST_CONST)
        return; /* no draws */
    uint64_t base = mix(seed ^ mix((uint64_t)run));
    gsl_rng_set(v->rng_d, (unsigned long)mix(base + 1));
    gsl_rng_set(v->rng_c, (unsigned long)mix(base + 2));
}

/* series.c: a solved Series of Reduces run as ONE plan of the schedule IR
 * (Legrand, Marchal and Robert 2004, Sec. 4.3-4.5), so that the simulator
 * and the runtime run the same plan (docs/STEADY.md).
 *
 * The plan holds operations 0 .. R-1, one block of the buffer each; rank i
 * is platform node i (routers only receive and forward).  Operation b
 * follows one of the trees (Fig. 8): per period of the schedule, W
 * operations enter and tree t takes L * w(t) of them, interleaved (smooth
 * weighted round-robin).  The period P = L * T is the solver's period T
 * with its matchings stretched by L, the least factor that makes every
 * message count of every matching an integer (Sec. 3.3), so each matching
 * is a window in which every node sends at most on one link and receives
 * at most on one link, and each message has a slot of its own: a start
 * time in the period and a duration (series_period.c).
 *
 * The schedule (the simplest one for which Prop. 1's argument goes
 * through): an activity of depth h in its tree (h = 0 when all its inputs
 * are v[i,i] on their owners, else 1 + its inputs' largest depth; the
 * activities of a shallower tree are delayed by the difference, so that
 * every tree ends at the same depth) of an operation that entered in
 * period q runs in period q + h.  So within a period no activity needs
 * another of the same period, and in a full period every tree t
 * contributes each of its activities L * w(t) times: the period's
 * transfers are exactly those of the matchings and its
 * computations on node i those of cons(i, .) times L, at most P of work
 * (the LP's alpha_i <= 1).  The k-th message of a send entry (link, type)
 * in a period takes the k-th slot of that entry (operations in order): its
 * SEND is released at the slot's start, so every transfer meets a free
 * sender and a free receiver; computations run as soon as their inputs are
 * there, one at a time per node in the order of their periods (each
 * COMBINE waits for its node's previous one), and by induction over the
 * periods everything planned for a period is done by its end.  Hence
 * results come out from period depth - 1 on (initialisation: the periods
 * before), W per period - TP * P of them, throughput TP - and the last
 * depth - 1 periods after the last operation entered (clean-up): R
 * operations take at most (ceil(R / W) + depth - 1) * P, and R / makespan
 * -> TP as R grows (Prop. 1 and 3).
 *
 * Steps: a hop is a SEND (release = its slot) and a RECV into a fresh
 * slot; a task T_{k,l,m} is a COMBINE RIGHT (acc = v[k,l], in = v[l+1,m]:
 * the operator's order), preceded when both inputs were received by a
 * COPY of the left one into a fresh slot (a step waits for two steps at
 * most: the previous COMBINE and one RECV); the target ends with a COPY
 * into slot 0 unless the last COMBINE wrote it there.  Program order is
 * model time; the messages of a link wait for each other. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "plan/builders.h"
#include "steady/series.h"

/* The plan's name: a pseudo-algorithm, on purpose not in registry.def. */
static const trd_algo series_algo = {
    .name = "steady-series",
    .bound_source = "none (steady-state series)",
    .description = "operations following the trees of a steady-state solution (Legrand, "
                   "Marchal and Robert Sec. 4.3)"};

/* RECVs a node has posted per incoming link (link_programs). */
#define RECV_WINDOW 16

/* The engine numbers steps in 32 bits, two transport ids each. */
#define STEPS_MAX (INT32_MAX / 2)

/* A step before it has its place in its rank's program: deps are indices
 * into builder.g, the program order is (start, seq). */
typedef struct gstep {
    trd_step s;
    int64_t seq;  /* a hop's SEND and RECV share theirs */
    int32_t rank;
    bool chain;   /* also waits for its predecessor: a SEND (RECV) for the
                     rank's previous SEND (RECV) on its link, a COMBINE (or the
                     COPY before it) for the rank's previous COMBINE */
} gstep;

typedef struct builder {
    const trd_steady *st;
    trd_sr_period per;
    trd_sr_tree *trees;
    int32_t depth;      /* the largest tree depth */
    int32_t *used;      /* per period (a ring of `depth`) and send entry: slots taken */
    int64_t *credit;    /* the round-robin over the trees */
    gstep *g;
    int64_t ng, seq;
    int32_t *at, *sent; /* per act of the operation being written: its step on the
                           node holding its result (RECV or COMBINE); a hop's SEND */
    int32_t *done;      /* per operation: the step that completes it */
} builder;

static int32_t push(builder *b, int32_t rank, trd_step s, int64_t seq, bool chain)
{
    b->g[b->ng] = (gstep){.s = s, .seq = seq, .rank = rank, .chain = chain};
    return (int32_t)b->ng++;
}

/* The tree of operation `op`: each tree gets its share of every period. */
static int32_t next_tree(builder *b, int64_t op)
{
    int32_t best = 0, n = b->st->n_trees;
    if (op % b->per.ops == 0)
        memset(b->credit, 0, (size_t)n * sizeof *b->credit);
    for (int32_t i = 0; i < n; i++) {
        b->credit[i] += b->per.share[i];
        best = b->credit[i] > b->credit[best] ? i : best;
    }
    b->credit[best] -= b->per.ops;
    return best;
}

/* Task a (T_{k,l,m} on a->node) of operation op in period p. */
static void emit_task(builder *b, const trd_sr_tree *t, int32_t ai, int64_t op, int64_t p)
{
    const trd_sr_act *a = &t->acts[ai];
    double t0 = (double)p * b->per.length;
    int32_t recv[2];
    for (int k = 0; k < 2; k++)
        recv[k] = a->in[k] >= 0 && t->acts[a->in[k]].hop ? b->at[a->in[k]] : -1;
    trd_step s = {.kind = TRD_STEP_COMBINE, .peer = -1, .buf = a->slot, .src = a->slot_in[1],
                  .side = TRD_SIDE_RIGHT, .block = (int32_t)op, .blocks = 1,
                  .dep = {recv[0] >= 0 ? recv[0] : recv[1], -1}, .start = t0,
                  .end = t0 + a->cost};
    if (a->join) {
        trd_step c = {.kind = TRD_STEP_COPY, .peer = -1, .buf = a->slot, .src = a->slot_in[0],
                      .block = (int32_t)op, .blocks = 1, .dep = {recv[0], -1}, .start = t0,
                      .end = t0};
        s.dep[0] = push(b, a->node, c, b->seq++, true);
        s.dep[1] = recv[1];
    }
    b->at[ai] = push(b, a->node, s, b->seq++, !a->join);
}

/* Hop a of operation op in period p: the next free slot of its send
 * entry in that period. */
static trd_status emit_hop(builder *b, const trd_sr_tree *t, int32_t ai, int64_t op, int64_t p)
{
    const trd_sr_act *a = &t->acts[ai];
    int32_t *used = &b->used[(p % b->depth) * b->st->n_sends + a->send];
    int32_t slot = b->per.first[a->send] + *used;
    if (slot >= b->per.first[a->send + 1])
        return trd_fail(TRD_EBACKEND, "steady-state series: period %lld carries more "
                        "messages on a link than its matchings hold", (long long)p);
    (*used)++;
    double t0 = (double)p * b->per.length + b->per.start[slot], t1 = t0 + b->per.len[slot];
    trd_step s = {.kind = TRD_STEP_SEND, .peer = a->to, .buf = a->slot_in[0], .src = -1,
                  .block = (int32_t)op, .blocks = 1,
                  .dep = {a->in[0] >= 0 ? b->at[a->in[0]] : -1, -1}, .start = t0, .end = t1,
                  .release = t0};
    trd_step r = {.kind = TRD_STEP_RECV, .peer = a->node, .buf = a->slot, .src = -1,
                  .block = (int32_t)op, .blocks = 1, .dep = {-1, -1}, .start = t0, .end = t1};
    int64_t seq = b->seq++;
    b->sent[ai] = push(b, a->node, s, seq, true);
    b->at[ai] = push(b, a->to, r, seq, true);
    return TRD_OK;
}

/* Whether step x comes before step y in a program. */
static bool before(const builder *b, int32_t x, int32_t y)
{
    const gstep *u = &b->g[x], *v = &b->g[y];
    return u->s.start < v->s.start || (u->s.start == v->s.start && u->seq < v->seq);
}

/* Hops of one operation on one link share a channel (sender, receiver,
 * block), whose messages the wire matches in posting order: each RECV of
 * it waits for the one before (the SENDs of a link wait for each other
 * anyway, link_programs). */
static void order_channel(builder *b, const trd_sr_tree *t)
{
    for (int32_t a = 0; a < t->n; a++) {
        int32_t pred = -1;
        for (int32_t c = t->acts[a].ring; c != a; c = t->acts[c].ring)
            if (before(b, b->at[c], b->at[a]) &&
                (pred < 0 || before(b, b->at[pred], b->at[c])))
                pred = c;
        if (pred >= 0)
            b->g[b->at[a]].s.dep[0] = b->at[pred];
    }
}

/* The step leaving op's result in slot 0 of the target: its last COMBINE,
 * or a COPY once that result is there and slot 0 is no longer read. */
static int32_t emit_final(builder *b, const trd_sr_tree *t, int64_t op)
{
    const trd_sr_act *f = &t->acts[t->final];
    int32_t made = b->at[t->final], touch = -1;
    if (f->slot == 0)
        return made;
    if (t->touch0 >= 0 && t->touch0 != t->final)
        touch = t->acts[t->touch0].hop ? b->sent[t->touch0] : b->at[t->touch0];
    double t0 = b->g[made].s.end;
    trd_step c = {.kind = TRD_STEP_COPY, .peer = -1, .buf = 0, .src = f->slot,
                  .block = (int32_t)op, .blocks = 1, .dep = {made, touch},
                  .start = b->g[made].s.start, .end = t0};
    return push(b, b->st->root, c, b->seq++, false);
}

static trd_status emit_op(builder *b, int64_t op)
{
    const trd_sr_tree *t = &b->trees[next_tree(b, op)];
    int64_t q = op / b->per.ops;
    trd_status r = TRD_OK;
    if (op % b->per.ops == 0) /* period q + depth - 1 comes into use, q - 1 is over */
        memset(&b->used[((q + b->depth - 1) % b->depth) * b->st->n_sends], 0,
               (size_t)b->st->n_sends * sizeof *b->used);
    for (int32_t k = 0; r == TRD_OK && k < t->n; k++) {
        int32_t a = t->order[k];
        if (t->acts[a].hop)
            r = emit_hop(b, t, a, op, q + t->acts[a].level);
        else
            emit_task(b, t, a, op, q + t->acts[a].level);
    }
    if (r == TRD_OK) {
        order_channel(b, t);
        b->done[op] = emit_final(b, t, op);
    }
    return r;
}

/* --- placing the steps in their ranks' programs --- */

typedef struct place_key {
    double start;
    int64_t seq;
    int32_t rank, g;
} place_key;

static int by_program(const void *x, const void *y)
{
    const place_key *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Deps as program indices, and a chained step's free dep for its
 * predecessor (gstep.chain): a SEND waits for the rank's previous SEND on
 * its link, a RECV for its RECV_WINDOW-th previous RECV on its link, a
 * COMBINE (or the COPY before it) for the rank's previous COMBINE.  The
 * messages of a link then follow each other as their slots do (nothing
 * lost: the model's senders are one-port), and a wire has at most one
 * message pending at the sender and RECV_WINDOW at the receiver per link
 * (it scans what is pending to match a message). */
static trd_status link_programs(const builder *b, const place_key *key, const size_t *first,
                                const int32_t *pos, trd_step *steps, int32_t *last)
{
    int32_t n = b->st->n_nodes, *count = last + n, *recvs = last + 2 * n;
    for (int32_t r = 0; r < n; r++) { /* per peer: last SEND, RECVs so far, their ring */
        int32_t last_combine = -1;
        for (int32_t j = 0; j < (RECV_WINDOW + 2) * n; j++)
            last[j] = j >= n && j < 2 * n ? 0 : -1;
        for (size_t i = first[r]; i < first[r + 1]; i++) {
            trd_step *s = &steps[i];
            int32_t here = (int32_t)(i - first[r]), *link = NULL;
            if (s->kind == TRD_STEP_SEND)
                link = &last[s->peer];
            else if (s->kind == TRD_STEP_RECV)
                link = &recvs[s->peer * RECV_WINDOW + count[s->peer]++ % RECV_WINDOW];
            int32_t prev = link ? *link : last_combine;
            for (int k = 0; k < 2; k++)
                if (s->dep[k] >= 0 && (s->dep[k] = pos[s->dep[k]]) >= here)
                    return trd_fail(TRD_EBACKEND, "steady-state series: node %ld step %ld "
                                    "waits for a later step", (long)r, (long)here);
            if (b->g[key[i].g].chain && prev >= 0)
                s->dep[s->dep[0] < 0 ? 0 : 1] = prev;
            if (link)
                *link = here;
            else if (s->kind == TRD_STEP_COMBINE)
                last_combine = here;
        }
    }
    return TRD_OK;
}

/* The programs (sorted by model time), the plan, and done_step. */
static trd_status place(builder *b, int64_t ops, trd_series *out)
{
    int32_t n = b->st->n_nodes;
    size_t ng = (size_t)b->ng;
    place_key *key = malloc((ng + 1) * sizeof *key);
    int32_t *pos = malloc((ng + 1) * sizeof *pos), *last = malloc((RECV_WINDOW + 2) * (size_t)n * sizeof *last);
    size_t *first = calloc((size_t)n + 1, sizeof *first);
    trd_step *steps = malloc((ng + 1) * sizeof *steps);
    trd_status r = key && pos && last && first && steps ? TRD_OK
                                                : trd_fail(TRD_ENOMEM, "steady-state series: "
                                                           "out of memory");
    for (size_t i = 0; r == TRD_OK && i < ng; i++) {
        key[i] = (place_key){b->g[i].s.start, b->g[i].seq, b->g[i].rank, (int32_t)i};
        first[b->g[i].rank + 1]++;
    }
    if (r == TRD_OK) {
        qsort(key, ng, sizeof *key, by_program);
        for (int32_t i = 0; i < n; i++)
            first[i + 1] += first[i];
        for (size_t i = 0; i < ng; i++) {
            pos[key[i].g] = (int32_t)(i - first[key[i].rank]);
            steps[i] = b->g[key[i].g].s;
        }
        r = link_programs(b, key, first, pos, steps, last);
    }
    for (int64_t op = 0; r == TRD_OK && op < ops; op++)
        out->done_step[op] = pos[b->done[op]];
    free(key);
    free(pos);
    free(last);
    if (r != TRD_OK) {
        free(first);
        free(steps);
        return r;
    }
    trd_params p;
    trd_params_init(&p);
    p.n = n;
    p.root = b->st->root;
    p.segments = ops;
    p.noncommutative = true;
    double makespan = (double)((ops - 1) / b->per.ops + b->depth) * b->per.length;
    return trd_plan_custom(&out->plan, &series_algo, &p, first, steps, makespan);
}

/* --- entry points --- */

static trd_status check_series(const trd_steady *st, const trd_platform *pf, int64_t ops)
{
    if (!st || !pf)
        return trd_fail(TRD_EINVAL, "steady-state series: NULL argument");
    if (pf->n_nodes != st->n_nodes || pf->n_links != st->n_links)
        return trd_fail(TRD_EINVAL, "steady-state series: not the platform the problem was "
                        "solved on");
    if (st->problem != TRD_STEADY_REDUCE)
        return trd_fail(TRD_EUNSUPPORTED, "steady-state series: a series of %ss has no "
                        "reduction to run (only a series of reduces compiles to a plan)",
                        trd_steady_problem_name(st->problem));
    if (!st->reachable || mpq_sgn(st->throughput) == 0)
        return trd_fail(TRD_EUNSUPPORTED, "steady-state series: the throughput is 0 (%s), "
                        "nothing to run", st->unreachable ? st->unreachable : "unreachable");
    if (ops < 1 || ops > TRD_SERIES_OPS_MAX)
        return trd_fail(TRD_EINVAL, "steady-state series: %lld operations: need 1 to %d",
                        (long long)ops, TRD_SERIES_OPS_MAX);
    return TRD_OK;
}

/* Steps one operation of tree t writes. */
static int64_t steps_of(const trd_sr_tree *t)
{
    int64_t n = 1; /* the final COPY */
    for (int32_t a = 0; a < t->n; a++)
        n += t->acts[a].hop || t->acts[a].join ? 2 : 1;
    return n;
}

static void teardown(builder *b)
{
    trd_sr_period_free(&b->per);
    for (int32_t i = 0; b->trees && i < b->st->n_trees; i++)
        trd_sr_tree_free(&b->trees[i]);
    free(b->trees);
    free(b->used);
    free(b->credit);
    free(b->g);
    free(b->at);
    free(b->sent);
    free(b->done);
}

/* Delays every activity of tree t so that it ends at level depth - 1, as
 * the deepest tree: every operation then gives its result depth - 1
 * periods after it entered, whatever its tree, and results come out W
 * per period from the first on (a period still holds every activity of
 * every tree L * w(tree) times). */
static void align(trd_sr_tree *t, int32_t depth)
{
    for (int32_t a = 0; a < t->n; a++)
        t->acts[a].level += depth - t->depth;
    t->depth = depth;
}

/* The period, the trees, and room for every step of `ops` operations. */
static trd_status setup(builder *b, const trd_steady *st, const trd_platform *pf, int64_t ops)
{
    int64_t per_op = 0, acts = 1;
    trd_status r = trd_sr_period_make(st, &b->per);
    b->trees = calloc((size_t)st->n_trees + 1, sizeof *b->trees);
    if (r == TRD_OK && !b->trees)
        r = trd_fail(TRD_ENOMEM, "steady-state series: out of memory");
    for (int32_t i = 0; r == TRD_OK && i < st->n_trees; i++) {
        if ((r = trd_sr_tree_make(st, pf, &st->trees[i], &b->trees[i])) != TRD_OK)
            break;
        b->depth = b->trees[i].depth > b->depth ? b->trees[i].depth : b->depth;
        per_op = steps_of(&b->trees[i]) > per_op ? steps_of(&b->trees[i]) : per_op;
        acts = b->trees[i].n > acts ? b->trees[i].n : acts;
    }
    for (int32_t i = 0; r == TRD_OK && i < st->n_trees; i++)
        align(&b->trees[i], b->depth);
    if (r == TRD_OK && per_op * ops > STEPS_MAX)
        r = trd_fail(TRD_EUNSUPPORTED, "steady-state series: %lld operations of up to %lld "
                     "steps are more than a plan holds", (long long)ops, (long long)per_op);
    if (r == TRD_OK)
        r = trd_check_memory(ops, (double)per_op * (sizeof(gstep) + 2 * sizeof(trd_step)),
                             "a steady-state series plan");
    if (r != TRD_OK)
        return r;
    b->used = calloc((size_t)b->depth * (size_t)st->n_sends + 1, sizeof *b->used);
    b->credit = calloc((size_t)st->n_trees + 1, sizeof *b->credit);
    b->g = malloc((size_t)(per_op * ops) * sizeof *b->g);
    b->at = malloc((size_t)acts * sizeof *b->at);
    b->sent = malloc((size_t)acts * sizeof *b->sent);
    b->done = malloc((size_t)ops * sizeof *b->done);
    if (!b->used || !b->credit || !b->g || !b->at || !b->sent || !b->done)
        return trd_fail(TRD_ENOMEM, "steady-state series: out of memory for %lld operations",
                        (long long)ops);
    return TRD_OK;
}

trd_status trd_series_build(const trd_steady *st, const trd_platform *pf, int64_t ops,
                            trd_series *out)
{
    builder b = {.st = st};
    *out = (trd_series){0};
    trd_status r = check_series(st, pf, ops);
    if (r == TRD_OK)
        r = setup(&b, st, pf, ops);
    if (r == TRD_OK && !(out->done_step = malloc((size_t)ops * sizeof *out->done_step)))
        r = trd_fail(TRD_ENOMEM, "steady-state series: out of memory");
    for (int64_t op = 0; r == TRD_OK && op < ops; op++)
        r = emit_op(&b, op);
    if (r == TRD_OK)
        r = place(&b, ops, out);
    if (r == TRD_OK) {
        out->ops = ops;
        out->target = st->root;
        out->period = b.per.length;
        out->period_ops = b.per.ops;
        out->depth = b.depth;
    }
    teardown(&b);
    if (r != TRD_OK)
        trd_series_free(out);
    return r;
}

void trd_series_free(trd_series *s)
{
    trd_plan_free(s->plan);
    free(s->done_step);
    *s = (trd_series){0};
}

trd_status trd_steady_series_plan(const trd_steady *st, const trd_platform *pf, int64_t ops,
                                  trd_plan **out)
{
    trd_series s;
    if (!out)
        return trd_fail(TRD_EINVAL, "steady-state series: NULL argument (out)");
    *out = NULL;
    trd_status r = trd_series_build(st, pf, ops, &s);
    if (r == TRD_OK) {
        *out = s.plan;
        s.plan = NULL;
    }
    trd_series_free(&s);
    return r;
}

int32_t trd_steady_series_participants(const trd_steady *st)
{
    return st ? st->n_members : 0;
}

int32_t trd_steady_series_node(const trd_steady *st, int32_t k)
{
    return st && k >= 0 && k < st->n_members ? st->members[k] : -1;
}

/* engine.c: runs per-rank step programs over a transport.
 *
 * Each step waits for its dep[] (steps of the same rank, always earlier in
 * the program); when the last one completes the step is posted.  Steps are
 * numbered by id (transport.h), rank after rank.  Static programs come from
 * a plan and are compiled once: dependency counts, the dependents of every
 * step (CSR), the steps to post first, the rank that ends with the result
 * and the partner of every SEND and RECV that can only match one step, so
 * a run only copies the counters and follows the lists.  Under a dynamic
 * policy every rank starts with an empty program; each time a rank is idle
 * the policy gives it a new one-step or two-step program (ids 2r, 2r + 1):
 * SEND -> peer, or RECV from any rank followed by a COMBINE whose side is
 * fixed when the sender is known (its rank lies inside its rank interval,
 * so it is LEFT of us iff its rank is smaller). */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "engine/run_static.h"

#define SIDE_BY_SENDER 2 /* COMBINE side decided when the RECV completes */
/* Ids are int32 and a transport may number its events per run in 32 bits
 * (at most two per step): far above what memory allows anyway. */
#define STEPS_MAX (INT32_MAX / 2)

typedef trd_step_slot slot;

struct trd_engine {
    int32_t n;
    const trd_policy *policy;
    slot *steps;           /* by id; dynamic: ids 2r and 2r + 1 of rank r */
    int32_t *first;        /* static program of rank r: ids first[r] .. first[r + 1] - 1 */
    int32_t *waiting0;     /* compiled dependency counts */
    int32_t *waiting;      /* per run */
    int32_t *deps;         /* dependents of id g: deps[deps[g] .. deps[g + 1]) (offsets
                              first, then the lists: one base pointer for both) */
    int32_t *initial;      /* (rank, id) of the steps without deps, in program order */
    int32_t ninitial;
    int32_t *partner;      /* trd_layout.partner (static programs) */
    float *scale;          /* trd_layout.scale: segmented programs only */
    int32_t *remaining;    /* dynamic, per rank: steps not completed */
    int32_t result;        /* static: the rank that ends with the result */
    int64_t sends;
    trd_layout layout;
};

static trd_status alloc_fail(void)
{
    return trd_fail(TRD_ENOMEM, "engine: out of memory");
}

static int32_t total_steps(const trd_engine *e)
{
    return e->first[e->n];
}

/* Dependency counts and dependents (CSR) of every step. */
static trd_status compile_deps(trd_engine *e)
{
    int32_t total = total_steps(e), base = total + 1;
    e->waiting0 = calloc((size_t)total + 1, sizeof *e->waiting0);
    e->waiting = calloc((size_t)total + 1, sizeof *e->waiting);
    e->deps = calloc((size_t)base + 2 * (size_t)total + 1, sizeof *e->deps);
    int32_t *cursor = malloc(((size_t)total + 1) * sizeof *cursor);
    if (!e->waiting0 || !e->waiting || !e->deps || !cursor) {
        free(cursor);
        return alloc_fail();
    }
    for (int32_t r = 0; r < e->n; r++)
        for (int32_t g = e->first[r]; g < e->first[r + 1]; g++)
            for (int k = 0; k < 2; k++) {
                int32_t d = e->steps[g].s.dep[k];
                if (d < 0)
                    continue;
                if (d >= g - e->first[r]) {
                    free(cursor);
                    return trd_fail(TRD_EINVAL, "engine: rank %ld step %ld depends on a later "
                                    "step", (long)r, (long)(g - e->first[r]));
                }
                e->waiting0[g]++;
                e->deps[e->first[r] + d + 1]++;
            }
    e->deps[0] = base;
    for (int32_t g = 0; g < total; g++)
        e->deps[g + 1] += e->deps[g];
    memcpy(cursor, e->deps, (size_t)total * sizeof *cursor);
    for (int32_t r = 0; r < e->n; r++) /* second pass writes dependents in order */
        for (int32_t g = e->first[r]; g < e->first[r + 1]; g++)
            for (int k = 0; k < 2; k++) {
                int32_t d = e->steps[g].s.dep[k];
                if (d >= 0)
                    e->deps[cursor[e->first[r] + d]++] = g;
            }
    free(cursor);
    return TRD_OK;
}

/* The steps posted when a run starts (in the order of the ranks and their
 * programs). */
static trd_status compile_start(trd_engine *e)
{
    e->initial = malloc(2 * ((size_t)total_steps(e) + 1) * sizeof *e->initial);
    if (!e->initial)
        return alloc_fail();
    for (int32_t r = 0; r < e->n; r++)
        for (int32_t g = e->first[r]; g < e->first[r + 1]; g++)
            if (e->waiting0[g] == 0) {
                e->initial[2 * e->ninitial] = r;
                e->initial[2 * e->ninitial++ + 1] = g;
            }
    return TRD_OK;
}

/* One message end: the rank that sends, the rank that receives, its tag
 * (the step's first block), which end (0 SEND, 1 RECV) and its id. */
typedef struct msg_end {
    int32_t from, to, tag, recv, id;
} msg_end;

static int by_pair(const void *x, const void *y)
{
    const msg_end *a = x, *b = y;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    if (a->recv != b->recv)
        return a->recv - b->recv;
    return a->id < b->id ? -1 : a->id > b->id;
}

static bool same_channel(const msg_end *a, const msg_end *b)
{
    return a->from == b->from && a->to == b->to && a->tag == b->tag;
}

/* Pairs the k-th SEND of the channel starting at ends[g] with its k-th
 * RECV when both sides have as many; returns the channel's end. */
static int32_t pair_channel(trd_engine *e, const msg_end *ends, int32_t m, int32_t g)
{
    int32_t sends = 0, end = g;
    while (end < m && same_channel(&ends[g], &ends[end]))
        sends += !ends[end++].recv;
    if (2 * sends != end - g)
        return end; /* unmatched ends: the run will say so (deadlock) */
    for (int32_t k = 0; k < sends; k++) {
        e->partner[ends[g + k].id] = ends[g + sends + k].id;
        e->partner[ends[g + sends + k].id] = ends[g + k].id;
    }
    return end;
}

/* Partners (transport.h): the IR matches the messages of one channel
 * (sender, receiver, tag) in program order, so the k-th SEND of a channel
 * can only meet its k-th RECV - unless the receiver also receives from
 * TRD_ANY_RANK.  Sorted by channel, then SENDs before RECVs, each in
 * program (id) order. */
static trd_status compile_partners(trd_engine *e)
{
    int32_t total = total_steps(e), m = 0;
    e->partner = malloc(((size_t)total + 1) * sizeof *e->partner);
    msg_end *ends = malloc(((size_t)total + 1) * sizeof *ends);
    uint8_t *any = calloc((size_t)e->n + 1, 1); /* ranks with a RECV from any rank */
    if (!e->partner || !ends || !any) {
        free(ends);
        free(any);
        return alloc_fail();
    }
    for (int32_t r = 0; r < e->n; r++)
        for (int32_t g = e->first[r]; g < e->first[r + 1]; g++) {
            const trd_step *s = &e->steps[g].s;
            e->partner[g] = -1;
            bool send = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT;
            bool recv = s->kind == TRD_STEP_RECV || s->kind == TRD_STEP_RECV_COMBINE;
            if (recv && s->peer == TRD_ANY_RANK)
                any[r] = 1;
            else if ((send || recv) && s->peer >= 0 && s->peer < e->n)
                ends[m++] = send ? (msg_end){r, s->peer, s->block, 0, g}
                                 : (msg_end){s->peer, r, s->block, 1, g};
        }
    qsort(ends, (size_t)m, sizeof *ends, by_pair);
    for (int32_t g = 0; g < m;)
        g = any[ends[g].to] ? g + 1 : pair_channel(e, ends, m, g);
    free(ends);
    free(any);
    return TRD_OK;
}

/* Shares of the buffer (trd_layout.scale) when the plan cuts it in blocks. */
static trd_status compile_scale(trd_engine *e, int32_t blocks)
{
    int32_t total = total_steps(e);
    if (blocks <= 1)
        return TRD_OK;
    e->scale = malloc(((size_t)total + 1) * sizeof *e->scale);
    if (!e->scale)
        return alloc_fail();
    for (int32_t g = 0; g < total; g++) {
        int32_t covered = e->steps[g].s.blocks > 1 ? e->steps[g].s.blocks : 1;
        e->scale[g] = (float)covered / (float)blocks;
    }
    return TRD_OK;
}

static trd_status load_plan(trd_engine *e, const trd_plan *plan)
{
    int64_t total = 0;
    for (int32_t r = 0; r < e->n; r++) {
        e->first[r] = (int32_t)total;
        total += (int64_t)trd_plan_step_count(plan, r);
        if (total > STEPS_MAX)
            return trd_fail(TRD_EINVAL, "engine: the plan has more than %ld steps",
                            (long)STEPS_MAX);
    }
    e->first[e->n] = (int32_t)total;
    e->steps = malloc(((size_t)total + 1) * sizeof *e->steps);
    if (!e->steps)
        return alloc_fail();
    for (int32_t r = 0; r < e->n; r++)
        for (int32_t g = e->first[r]; g < e->first[r + 1]; g++) {
            const trd_step *s = &e->steps[g].s;
            e->steps[g].s = *trd_plan_step(plan, r, (size_t)(g - e->first[r]));
            bool send = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT;
            bool recv = s->kind == TRD_STEP_RECV || s->kind == TRD_STEP_RECV_COMBINE;
            bool ends = recv || send;
            e->sends += send;
            if (ends && (s->peer < 0 || s->peer >= e->n) && !(recv && s->peer == TRD_ANY_RANK))
                return trd_fail(TRD_EINVAL, "engine: rank %ld step %ld names rank %ld, not one "
                                "of the %ld ranks", (long)r, (long)(g - e->first[r]),
                                (long)s->peer, (long)e->n);
        }
    trd_status st;
    if ((st = compile_deps(e)) != TRD_OK || (st = compile_start(e)) != TRD_OK ||
        (st = compile_partners(e)) != TRD_OK ||
        (st = compile_scale(e, trd_plan_blocks(plan))) != TRD_OK)
        return st;
    e->result = trd_plan_result_rank(plan);
    e->layout = (trd_layout){.steps = (int32_t)total, .partner = e->partner, .scale = e->scale};
    return TRD_OK;
}

static trd_status init_dynamic(trd_engine *e)
{
    if (e->n > STEPS_MAX / 2)
        return trd_fail(TRD_EINVAL, "engine: n = %ld ranks is above the %ld a dynamic "
                        "engine can number", (long)e->n, (long)(STEPS_MAX / 2));
    e->steps = calloc(2 * (size_t)e->n, sizeof *e->steps);
    e->remaining = calloc((size_t)e->n, sizeof *e->remaining);
    if (!e->steps || !e->remaining)
        return alloc_fail();
    e->layout = (trd_layout){.steps = 2 * e->n, .partner = NULL};
    return TRD_OK;
}

trd_status trd_engine_create(trd_engine **out, const trd_plan *plan, int32_t n,
                             const trd_policy *policy)
{
    *out = NULL;
    trd_engine *e = calloc(1, sizeof *e);
    if (!e)
        return alloc_fail();
    e->n = plan ? (int32_t)trd_plan_params(plan)->n : n;
    e->policy = plan ? NULL : policy;
    e->first = calloc((size_t)e->n + 1, sizeof *e->first);
    trd_status st = TRD_OK;
    if (!e->first)
        st = alloc_fail();
    else
        st = plan ? load_plan(e, plan) : init_dynamic(e);
    if (st != TRD_OK) {
        trd_engine_free(e);
        return st;
    }
    *out = e;
    return TRD_OK;
}

void trd_engine_free(trd_engine *e)
{
    if (!e)
        return;
    free(e->steps);
    free(e->first);
    free(e->waiting0);
    free(e->waiting);
    free(e->deps);
    free(e->initial);
    free(e->partner);
    free(e->scale);
    free(e->remaining);
    free(e);
}

int64_t trd_engine_send_count(const trd_engine *e) { return e->sends; }

int32_t trd_engine_first_id(const trd_engine *e, int32_t rank) { return e->first[rank]; }

/* Gives idle rank r its next program from the policy; *done when r holds
 * the final result. */
static trd_status ask_policy(trd_engine *e, const trd_transport *t, int32_t r, bool *done)
{
    int32_t peer = -1, g = 2 * r;
    trd_action act = e->policy->idle(e->policy->state, r, &peer);
    trd_step *s = &e->steps[g].s, *s1 = &e->steps[g + 1].s;
    if (act == TRD_ACT_ERROR) /* the policy's message says why */
        return TRD_EIO;
    *done = act == TRD_ACT_DONE;
    if (*done)
        return TRD_OK;
    if (act == TRD_ACT_SEND) {
        *s = (trd_step){.kind = TRD_STEP_SEND, .peer = peer, .src = -1, .dep = {-1, -1}};
        e->remaining[r] = 1;
        return t->post(t->ctx, r, g, s);
    }
    *s = (trd_step){.kind = TRD_STEP_RECV, .peer = TRD_ANY_RANK, .buf = 1, .src = -1,
                      .dep = {-1, -1}};
    *s1 = (trd_step){.kind = TRD_STEP_COMBINE, .peer = -1, .buf = 0, .src = 1,
                      .side = SIDE_BY_SENDER, .dep = {0, -1}};
    e->remaining[r] = 2;
    return t->post(t->ctx, r, g, s);
}

static trd_status run_dynamic(trd_engine *e, const trd_transport *t, int32_t *result)
{
    bool done = false;
    trd_status st = TRD_OK;
    e->policy->reset(e->policy->state);
    for (int32_t r = 0; r < e->n && st == TRD_OK && !done; r++) {
        st = ask_policy(e, t, r, &done);
        if (done)
            *result = r;
    }
    while (st == TRD_OK && !done) {
        int32_t r, g, from = -1;
        if ((st = t->wait_any(t->ctx, &r, &g, &from)) != TRD_OK)
            break;
        if (e->steps[g].s.kind == TRD_STEP_RECV) { /* two-step program: RECV then COMBINE */
            e->steps[g + 1].s.side = from < r ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT;
            e->remaining[r]--;
            st = t->post(t->ctx, r, g + 1, &e->steps[g + 1].s);
        } else if (--e->remaining[r] == 0 && e->steps[g].s.kind != TRD_STEP_SEND) {
            st = ask_policy(e, t, r, &done);
            if (done)
                *result = r;
        }
    }
    return st;
}

bool trd_engine_static(trd_engine *e, trd_static_program *out)
{
    if (e->policy)
        return false;
    *out = (trd_static_program){.steps = e->steps, .deps = e->deps, .initial = e->initial,
                                .waiting0 = e->waiting0, .waiting = e->waiting,
                                .ninitial = e->ninitial, .total = total_steps(e),
                                .result = e->result};
    return true;
}

const trd_layout *trd_engine_layout(const trd_engine *e) { return &e->layout; }

static trd_status attach(const trd_engine *e, const trd_transport *t)
{
    return t->attach ? t->attach(t->ctx, &e->layout) : TRD_OK;
}

/* Rank r's static program alone: its steps without deps first, then the
 * dependents of each completion (the transport reports r's steps only). */
static trd_status run_static_rank(trd_engine *e, const trd_transport *t, int32_t r)
{
    int32_t lo = e->first[r], hi = e->first[r + 1];
    trd_status st = TRD_OK;
    memcpy(e->waiting + lo, e->waiting0 + lo, (size_t)(hi - lo) * sizeof *e->waiting);
    for (int32_t g = lo; g < hi && st == TRD_OK; g++)
        if (e->waiting0[g] == 0)
            st = t->post(t->ctx, r, g, &e->steps[g].s);
    for (int32_t left = hi - lo; left > 0 && st == TRD_OK; left--) {
        int32_t rank, g, from;
        if ((st = t->wait_any(t->ctx, &rank, &g, &from)) != TRD_OK)
            break;
        for (int32_t k = e->deps[g]; k < e->deps[g + 1] && st == TRD_OK; k++)
            if (--e->waiting[e->deps[k]] == 0)
                st = t->post(t->ctx, r, e->deps[k], &e->steps[e->deps[k]].s);
    }
    return st;
}

/* Rank r under the policy: until it has sent its partial result or holds
 * the final one. */
static trd_status run_dynamic_rank(trd_engine *e, const trd_transport *t, int32_t r,
                                   bool *done)
{
    trd_status st = ask_policy(e, t, r, done);
    while (st == TRD_OK && !*done) {
        int32_t rank, g, from = -1;
        if ((st = t->wait_any(t->ctx, &rank, &g, &from)) != TRD_OK)
            break;
        if (e->steps[g].s.kind == TRD_STEP_SEND)
            break;
        if (e->steps[g].s.kind == TRD_STEP_RECV) {
            e->steps[g + 1].s.side = from < r ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT;
            st = t->post(t->ctx, r, g + 1, &e->steps[g + 1].s);
        } else {
            st = ask_policy(e, t, r, done);
        }
    }
    return st;
}

trd_status trd_engine_run_rank(trd_engine *e, const trd_transport *t, int32_t rank,
                               bool *holds_result)
{
    bool done = false;
    trd_status st = attach(e, t);
    if (st == TRD_OK && e->policy)
        st = run_dynamic_rank(e, t, rank, &done);
    else if (st == TRD_OK)
        st = run_static_rank(e, t, rank);
    if (holds_result)
        *holds_result = e->policy ? done : rank == e->result;
    return st;
}

trd_status trd_engine_run(trd_engine *e, const trd_transport *t, int32_t *result_rank)
{
    int32_t result = e->result;
    trd_static_program prog;
    trd_status st = attach(e, t);
    if (st == TRD_OK && trd_engine_static(e, &prog))
        st = trd_run_static_loop(&prog, t->ctx, t->post, t->wait_any);
    else if (st == TRD_OK)
        st = run_dynamic(e, t, &result);
    if (result_rank)
        *result_rank = result;
    return st;
}

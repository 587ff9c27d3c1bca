/* engine.c: runs per-rank step programs over a transport.
 *
 * Each step waits for its dep[] (steps of the same rank, always earlier in
 * the program); when the last one completes the step is posted.  Static
 * programs come from a plan and are compiled once (dependency counts and the
 * list of dependents of every step), so a run only resets counters.  Under a
 * dynamic policy every rank starts with an empty program; each time a rank
 * is idle the policy gives it a new one-step or two-step program:
 * SEND -> peer, or RECV from any rank followed by a COMBINE whose side is
 * fixed when the sender is known (its rank lies inside its rank interval,
 * so it is LEFT of us iff its rank is smaller). */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define SIDE_BY_SENDER 2 /* COMBINE side decided when the RECV completes */

struct trd_engine {
    int32_t n;
    const trd_policy *policy;
    trd_step *steps;       /* all programs; dynamic: 2 slots per rank */
    int64_t *first;        /* program of rank r: steps[first[r] .. first[r] + count[r]) */
    int32_t *count;
    int32_t *waiting0;     /* compiled dependency counts */
    int32_t *waiting;      /* per run */
    int64_t *dep_first;    /* dependents of step g: dep_list[dep_first[g] .. dep_first[g+1]) */
    int64_t *dep_list;
    int32_t *remaining;    /* per rank: steps not completed */
    int64_t sends;
};

static trd_status alloc_fail(void)
{
    return trd_fail(TRD_ENOMEM, "engine: out of memory");
}

/* Dependency counts and dependents (CSR) of every step. */
static trd_status compile(trd_engine *e, int64_t total)
{
    e->waiting0 = calloc((size_t)total + 1, sizeof *e->waiting0);
    e->waiting = calloc((size_t)total + 1, sizeof *e->waiting);
    e->dep_first = calloc((size_t)total + 2, sizeof *e->dep_first);
    e->dep_list = malloc(((size_t)total * 2 + 1) * sizeof *e->dep_list);
    if (!e->waiting0 || !e->waiting || !e->dep_first || !e->dep_list)
        return alloc_fail();
    for (int32_t r = 0; r < e->n; r++)
        for (int32_t i = 0; i < e->count[r]; i++)
            for (int k = 0; k < 2; k++) {
                int32_t d = e->steps[e->first[r] + i].dep[k];
                if (d < 0)
                    continue;
                if (d >= i)
                    return trd_fail(TRD_EINVAL, "engine: rank %ld step %ld depends on a later step",
                                    (long)r, (long)i);
                e->waiting0[e->first[r] + i]++;
                e->dep_first[e->first[r] + d + 1]++;
            }
    for (int64_t g = 0; g < total; g++)
        e->dep_first[g + 1] += e->dep_first[g];
    int64_t *fill = e->dep_list; /* second pass writes dependents in order */
    int64_t *cursor = malloc(((size_t)total + 1) * sizeof *cursor);
    if (!cursor)
        return alloc_fail();
    memcpy(cursor, e->dep_first, (size_t)total * sizeof *cursor);
    for (int32_t r = 0; r < e->n; r++)
        for (int32_t i = 0; i < e->count[r]; i++)
            for (int k = 0; k < 2; k++) {
                int32_t d = e->steps[e->first[r] + i].dep[k];
                if (d >= 0)
                    fill[cursor[e->first[r] + d]++] = e->first[r] + i;
            }
    free(cursor);
    return TRD_OK;
}

static trd_status load_plan(trd_engine *e, const trd_plan *plan)
{
    int64_t total = 0;
    for (int32_t r = 0; r < e->n; r++) {
        e->first[r] = total;
        e->count[r] = (int32_t)trd_plan_step_count(plan, r);
        total += e->count[r];
    }
    e->steps = malloc(((size_t)total + 1) * sizeof *e->steps);
    if (!e->steps)
        return alloc_fail();
    for (int32_t r = 0; r < e->n; r++)
        for (int32_t i = 0; i < e->count[r]; i++) {
            e->steps[e->first[r] + i] = *trd_plan_step(plan, r, i);
            e->sends += e->steps[e->first[r] + i].kind == TRD_STEP_SEND;
        }
    return compile(e, total);
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
    e->first = calloc((size_t)e->n, sizeof *e->first);
    e->count = calloc((size_t)e->n, sizeof *e->count);
    e->remaining = calloc((size_t)e->n, sizeof *e->remaining);
    trd_status st = TRD_OK;
    if (!e->first || !e->count || !e->remaining)
        st = alloc_fail();
    else if (plan)
        st = load_plan(e, plan);
    else if (!(e->steps = calloc(2 * (size_t)e->n, sizeof *e->steps)))
        st = alloc_fail();
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
    free(e->count);
    free(e->waiting0);
    free(e->waiting);
    free(e->dep_first);
    free(e->dep_list);
    free(e->remaining);
    free(e);
}

int64_t trd_engine_send_count(const trd_engine *e) { return e->sends; }

static trd_status post(const trd_engine *e, const trd_transport *t, int32_t r, int32_t i)
{
    return t->post(t->ctx, r, i, &e->steps[e->first[r] + i]);
}

/* Gives idle rank r its next program from the policy; *done when r holds
 * the final result. */
static trd_status ask_policy(trd_engine *e, const trd_transport *t, int32_t r, bool *done)
{
    int32_t peer = -1;
    trd_action act = e->policy->idle(e->policy->state, r, &peer);
    trd_step *s = &e->steps[2 * (int64_t)r];
    e->first[r] = 2 * (int64_t)r;
    *done = act == TRD_ACT_DONE;
    if (*done)
        return TRD_OK;
    if (act == TRD_ACT_SEND) {
        s[0] = (trd_step){.kind = TRD_STEP_SEND, .peer = peer, .src = -1, .dep = {-1, -1}};
        e->count[r] = e->remaining[r] = 1;
        return post(e, t, r, 0);
    }
    s[0] = (trd_step){.kind = TRD_STEP_RECV, .peer = TRD_ANY_RANK, .buf = 1, .src = -1,
                      .dep = {-1, -1}};
    s[1] = (trd_step){.kind = TRD_STEP_COMBINE, .peer = -1, .buf = 0, .src = 1,
                      .side = SIDE_BY_SENDER, .dep = {0, -1}};
    e->count[r] = e->remaining[r] = 2;
    return post(e, t, r, 0);
}

/* Static programs: resets counters and posts every step without deps. */
static trd_status start_static(trd_engine *e, const trd_transport *t, int64_t *left)
{
    int64_t total = e->n ? e->first[e->n - 1] + e->count[e->n - 1] : 0;
    memcpy(e->waiting, e->waiting0, (size_t)total * sizeof *e->waiting);
    *left = total;
    trd_status st = TRD_OK;
    for (int32_t r = 0; r < e->n && st == TRD_OK; r++) {
        e->remaining[r] = e->count[r];
        for (int32_t i = 0; i < e->count[r] && st == TRD_OK; i++)
            if (e->waiting[e->first[r] + i] == 0)
                st = post(e, t, r, i);
    }
    return st;
}

/* Marks step i of rank r done and posts the steps it released. */
static trd_status complete(trd_engine *e, const trd_transport *t, int32_t r, int32_t i,
                           int32_t from)
{
    int64_t g = e->first[r] + i;
    e->remaining[r]--;
    if (e->policy) { /* two-step program: RECV then COMBINE */
        if (e->steps[g].kind == TRD_STEP_RECV) {
            e->steps[g + 1].side = from < r ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT;
            return post(e, t, r, i + 1);
        }
        return TRD_OK;
    }
    for (int64_t k = e->dep_first[g]; k < e->dep_first[g + 1]; k++) {
        int64_t h = e->dep_list[k];
        if (--e->waiting[h] == 0) {
            trd_status st = post(e, t, r, (int32_t)(h - e->first[r]));
            if (st != TRD_OK)
                return st;
        }
    }
    return TRD_OK;
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
        int32_t r, i, from = -1;
        if ((st = t->wait_any(t->ctx, &r, &i, &from)) != TRD_OK)
            break;
        bool was_send = e->steps[e->first[r] + i].kind == TRD_STEP_SEND;
        if ((st = complete(e, t, r, i, from)) != TRD_OK || e->remaining[r] > 0 || was_send)
            continue;
        st = ask_policy(e, t, r, &done);
        if (done)
            *result = r;
    }
    return st;
}

trd_status trd_engine_run(trd_engine *e, const trd_transport *t, int32_t *result_rank)
{
    int32_t result = 0;
    trd_status st;
    if (e->policy) {
        st = run_dynamic(e, t, &result);
    } else {
        int64_t left;
        st = start_static(e, t, &left);
        while (st == TRD_OK && left > 0) {
            int32_t r, i, from = -1;
            if ((st = t->wait_any(t->ctx, &r, &i, &from)) == TRD_OK)
                st = complete(e, t, r, i, from);
            left--;
        }
        for (int32_t r = 0; r < e->n; r++)
            if (e->count[r] > 0 && e->steps[e->first[r] + e->count[r] - 1].kind != TRD_STEP_SEND)
                result = r;
    }
    if (result_rank)
        *result_rank = result;
    return st;
}

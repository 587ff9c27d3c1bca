/* plan_layout.c: the read accessors of a plan's layout (treduce/plan.h)
 * and the builders' step list (plan_layout.h). */
#include "ir/plan_layout.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"

void trd_plan_free(trd_plan *plan)
{
    if (!plan)
        return;
    free(plan->parent);
    free(plan->send_start);
    free(plan->step_first);
    free(plan->steps);
    free(plan);
}

const trd_params *trd_plan_params(const trd_plan *plan) { return &plan->params; }

static bool is_rank(const trd_plan *plan, int32_t rank)
{
    return rank >= 0 && rank < plan->params.n;
}

int32_t trd_plan_parent(const trd_plan *plan, int32_t rank)
{
    return is_rank(plan, rank) ? plan->parent[rank] : -1;
}

double trd_plan_send_start(const trd_plan *plan, int32_t rank)
{
    return is_rank(plan, rank) ? plan->send_start[rank] : NAN;
}

size_t trd_plan_step_count(const trd_plan *plan, int32_t rank)
{
    return is_rank(plan, rank) ? plan->step_first[rank + 1] - plan->step_first[rank] : 0;
}

size_t trd_plan_total_steps(const trd_plan *plan)
{
    return plan->step_first[plan->params.n];
}

size_t trd_plan_step_offset(const trd_plan *plan, int32_t rank)
{
    return is_rank(plan, rank) ? plan->step_first[rank] : trd_plan_total_steps(plan);
}

const trd_step *trd_plan_step(const trd_plan *plan, int32_t rank, size_t i)
{
    if (i >= trd_plan_step_count(plan, rank))
        return NULL;
    return &plan->steps[plan->step_first[rank] + i];
}

int32_t trd_plan_scratch_slots(const trd_plan *plan, int32_t rank)
{
    int32_t slots = 0;
    for (size_t i = 0; i < trd_plan_step_count(plan, rank); i++) {
        const trd_step *s = trd_plan_step(plan, rank, i);
        if (s->buf > slots)
            slots = s->buf;
        if (s->src > slots)
            slots = s->src;
    }
    return slots;
}

int32_t trd_plan_blocks(const trd_plan *plan) { return plan->blocks; }

int32_t trd_plan_result_rank(const trd_plan *plan) { return (int32_t)plan->params.root; }

bool trd_plan_same_programs(const trd_plan *x, const trd_plan *y)
{
    if (x->params.n != y->params.n || x->blocks != y->blocks)
        return false;
    for (int32_t r = 0; r < (int32_t)x->params.n; r++) {
        size_t k = trd_plan_step_count(x, r);
        if (trd_plan_step_count(y, r) != k)
            return false;
        for (size_t i = 0; i < k; i++) {
            const trd_step *a = trd_plan_step(x, r, i), *b = trd_plan_step(y, r, i);
            if (a->kind != b->kind || a->peer != b->peer || a->buf != b->buf ||
                a->ship != b->ship ||
                a->src != b->src || a->side != b->side || a->block != b->block ||
                a->blocks != b->blocks || a->dep[0] != b->dep[0] || a->dep[1] != b->dep[1])
                return false;
        }
    }
    return true;
}

trd_status trd_step_push(trd_step_list *list, trd_step s)
{
    if (list->len == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 64;
        trd_step *grown = realloc(list->steps, cap * sizeof *grown);
        if (!grown)
            return trd_fail(TRD_ENOMEM, "plan: out of memory for %zu steps", cap);
        list->steps = grown;
        list->cap = cap;
    }
    list->steps[list->len++] = s;
    return TRD_OK;
}

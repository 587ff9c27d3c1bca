/* tree_dyn.c: Tree-dyn of benoit-canon-marchal Sec. 3.2, a dynamic policy.
 *
 * One slot, initially empty.  A rank that becomes idle looks into it: if it
 * is empty it puts itself there and waits; otherwise it empties the slot and
 * sends its value to the rank that was there, which combines it.  So a
 * reduction starts as soon as two ranks are available; any two ranks may
 * pair, so only for commutative operators.  The last rank left holds the
 * result.  Expected makespan with exponential transfers and no computation:
 * Sec. 5 (src/sim/markov.c). */
#include <stdlib.h>

#include "core/error.h"
#include "plan/algorithms.h"

typedef struct tree_dyn {
    int32_t n, slot, active; /* active: ranks that have not sent yet */
} tree_dyn;

static trd_action idle(void *state, int32_t rank, int32_t *peer)
{
    tree_dyn *t = state;
    if (t->active == 1)
        return TRD_ACT_DONE;
    if (t->slot < 0) {
        t->slot = rank;
        return TRD_ACT_WAIT;
    }
    *peer = t->slot;
    t->slot = -1;
    t->active--;
    return TRD_ACT_SEND;
}

static void reset(void *state)
{
    tree_dyn *t = state;
    t->slot = -1;
    t->active = t->n;
}

trd_status trd_policy_tree_dyn(int32_t n, trd_policy *out)
{
    tree_dyn *t = malloc(sizeof *t);
    if (!t)
        return trd_fail(TRD_ENOMEM, "tree-dyn: out of memory");
    t->n = n;
    reset(t);
    *out = (trd_policy){.state = t, .idle = idle, .reset = reset, .destroy = free};
    return TRD_OK;
}

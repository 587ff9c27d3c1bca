/* comm_shared.c: the plan, engine and policy of a call, one copy per group
 * of ranks that share an address space (comm_shared.h).
 *
 * A process-wide list of the structures in use, under one mutex, keyed
 * by the wire's group (trd_wire.group: the threads world; NULL for MPI,
 * whose copies are never shared) and the call's plan key; a count of
 * references frees them with the last rank's cache.  The first rank to
 * ask builds them while it holds the mutex, so the ranks of its world
 * that ask meanwhile find them built (4096 ranks would otherwise build
 * 4096 copies at once).  A dynamic algorithm's engine asks its policy
 * through each rank's own wire: the engine's policy reaches the rank's
 * communicator through `comm[rank]`. */
#include "runtime/comm_shared.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/error.h"
#include "plan/registry.h"
#include "runtime/comm.h"

struct trd_shared_call {
    const void *group;
    trd_comm_key key;
    int refs;
    /* What a call of key allocates on this machine besides these shared
     * structures (trd_shared_check_memory), over the ranks of the node:
     * their slots (slot 0 included), the copies of the input in-place
     * calls keep, their steps' run state. */
    double structures; /* bytes of the plan and the engine */
    int64_t node_slots, node_copies, node_steps;
    trd_plan *plan;
    trd_engine *engine;
    trd_policy policy;   /* the shared state of a dynamic algorithm */
    trd_policy through;  /* ...as the engine sees it: through each rank's wire */
    trd_comm **comm;     /* by rank: the communicators that hold a reference */
    trd_shared_call *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static trd_shared_call *in_use;

/* A dynamic decision of `rank` through its own wire. */
static trd_action through_wire(void *state, int32_t rank, int32_t *peer)
{
    trd_shared_call *s = state;
    trd_comm *c = s->comm[rank];
    trd_action act = TRD_ACT_ERROR;
    c->status = c->wire.decide(c->wire.ctx, &s->policy, c->calls, rank, &act, peer);
    return c->status == TRD_OK ? act : TRD_ACT_ERROR;
}

static void no_reset(void *state) { (void)state; }
static void no_destroy(void *state) { (void)state; }

static void destroy(trd_shared_call *s)
{
    if (!s)
        return;
    trd_engine_free(s->engine);
    trd_plan_free(s->plan);
    if (s->policy.state)
        s->policy.destroy(s->policy.state);
    free(s->comm);
    free(s);
}

/* Bytes per step of a plan and its engine (the step, the engine's copy of
 * it in 64 bytes, its counts, dependents, partner and share), and per rank. */
#define STEP_BYTES ((double)sizeof(trd_step) + 64.0 + 40.0)
#define RANK_BYTES 64.0

/* Rank r's program sends its input (SEND_INPUT) and writes slot 0: an
 * in-place call keeps a copy of the input (comm.c, prepare_steps). */
static bool copies_input(const trd_plan *plan, int32_t r)
{
    bool sends = false, writes = false;
    for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
        const trd_step *s = trd_plan_step(plan, r, i);
        sends |= s->kind == TRD_STEP_SEND_INPUT;
        writes |= s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT &&
                  (s->buf == 0 || (s->kind == TRD_STEP_COMBINE && s->src == 0));
    }
    return sends && writes;
}

/* What rank r allocates for the call besides the shared structures. */
static void rank_share(const trd_plan *plan, int32_t r, int64_t *slots, int64_t *copies,
                       int64_t *steps)
{
    *slots = plan ? trd_plan_scratch_slots(plan, r) + 1 : 2;
    *copies = plan && copies_input(plan, r);
    *steps = plan ? (int64_t)trd_plan_step_count(plan, r) : 0;
}

/* The node's share of the call (the fields above), once per group: its
 * ranks' own, or - where the wire knows how many ranks share the node but
 * not which (trd_wire.node_ranks NULL) - that many times the largest. */
static void count_node(trd_shared_call *s, const trd_wire *w)
{
    int32_t n = w->size, local = w->node_size > 0 ? w->node_size : n;
    double steps = 0;
    for (int32_t r = 0; s->plan && r < n; r++)
        steps += (double)trd_plan_step_count(s->plan, r);
    s->structures = steps * STEP_BYTES + (double)n * RANK_BYTES;
    int64_t slots, copies, own;
    if (w->node_ranks || local == n) {
        for (int32_t k = 0; k < local; k++) {
            rank_share(s->plan, w->node_ranks ? w->node_ranks[k] : k, &slots, &copies, &own);
            s->node_slots += slots;
            s->node_copies += copies;
            s->node_steps += own;
        }
        return;
    }
    int64_t most[3] = {0, 0, 0};
    for (int32_t r = 0; r < n; r++) {
        rank_share(s->plan, r, &slots, &copies, &own);
        most[0] = slots > most[0] ? slots : most[0];
        most[1] = copies > most[1] ? copies : most[1];
        most[2] = own > most[2] ? own : most[2];
    }
    s->node_slots = local * most[0];
    s->node_copies = local * most[1];
    s->node_steps = local * most[2];
}

static trd_status build(const trd_comm *c, const trd_comm_key *key, trd_shared_call **out)
{
    const trd_algo *a = trd_algo_entry(key->algo);
    int32_t n = c->wire.size;
    trd_shared_call *s = calloc(1, sizeof *s);
    trd_comm **comm = calloc((size_t)n, sizeof *comm);
    *out = NULL;
    if (!s || !comm) {
        free(s);
        free(comm);
        return trd_fail(TRD_ENOMEM, "runtime: out of memory");
    }
    *s = (trd_shared_call){.group = c->wire.group, .key = *key, .comm = comm};
    trd_status st;
    if (a->policy) {
        s->through = (trd_policy){.state = s, .idle = through_wire, .reset = no_reset,
                                  .destroy = no_destroy};
        if ((st = a->policy(n, &s->policy)) == TRD_OK)
            st = trd_engine_create(&s->engine, NULL, n, &s->through);
    } else if ((st = trd_comm_plan(key, &s->plan)) == TRD_OK) {
        st = trd_engine_create(&s->engine, s->plan, n, NULL);
    }
    if (st != TRD_OK) {
        destroy(s);
        return st;
    }
    count_node(s, &c->wire);
    *out = s;
    return TRD_OK;
}

trd_status trd_shared_get(trd_comm *c, const trd_comm_key *key, trd_shared_call **out)
{
    trd_status st = TRD_OK;
    trd_shared_call *s = NULL;
    pthread_mutex_lock(&lock);
    for (s = c->wire.group ? in_use : NULL; s; s = s->next)
        if (s->group == c->wire.group && trd_comm_same_key(&s->key, key))
            break;
    if (!s && (st = build(c, key, &s)) == TRD_OK && c->wire.group) {
        s->next = in_use;
        in_use = s;
    }
    if (s) {
        s->refs++;
        s->comm[c->wire.rank] = c;
    }
    pthread_mutex_unlock(&lock);
    *out = s;
    return st;
}

void trd_shared_put(trd_shared_call *s, const trd_comm *c)
{
    if (!s)
        return;
    pthread_mutex_lock(&lock);
    s->comm[c->wire.rank] = NULL;
    bool last = --s->refs == 0;
    for (trd_shared_call **at = &in_use; last && *at; at = &(*at)->next)
        if (*at == s) {
            *at = s->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    if (last)
        destroy(s);
}

trd_status trd_shared_check_memory(const trd_shared_call *s, const trd_comm *c, size_t bytes)
{
    const trd_wire *w = &c->wire;
    double local = w->node_size > 0 ? w->node_size : w->size, b = (double)bytes;
    double buffers = b * 2.0 * local, scratch = b * (double)(s->node_slots + s->node_copies);
    double rest = (s->group ? 1.0 : local) * s->structures +
                  (double)s->node_steps * (double)sizeof(trd_step_run);
    double need = buffers + scratch + rest;
    double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (have > 0 && need > 0.8 * have)
        return trd_fail(TRD_ENOMEM, "runtime: a call of %lld elements of %zu bytes needs "
                        "about %.1f GiB on this machine's %g ranks (their buffers %.1f GiB, "
                        "scratch %.1f GiB, plans and engines %.1f GiB), more than 80%% of "
                        "its %.1f GiB of memory", (long long)s->key.count, s->key.elem,
                        need / 1073741824.0, local, buffers / 1073741824.0,
                        scratch / 1073741824.0, rest / 1073741824.0, have / 1073741824.0);
    return TRD_OK;
}

const trd_plan *trd_shared_plan(const trd_shared_call *s) { return s->plan; }
trd_engine *trd_shared_engine(const trd_shared_call *s) { return s->engine; }
trd_policy *trd_shared_policy(trd_shared_call *s) { return s->plan ? NULL : &s->policy; }

/* comm.c: communicators and the collective calls (treduce.h, "Runtime").
 *
 * A collective call is: check the arguments, get the plan of the
 * algorithm for these parameters (cached while they do not change: every
 * rank builds the same plan from the same inputs, so no rank needs to
 * send it to another), lay out this rank's slots (slot 0 is the result
 * buffer, scratch slots after it), and let the engine run this rank's
 * program over the exec transport (src/runtime/exec.c) on the wire.  The
 * very same plans and engine are what the simulator runs: only the
 * transport differs (docs/ARCHITECTURE.md, "The layers").  Dynamic algorithms ask the shared policy
 * through the wire (a lock in threads, a coordinator in MPI); the rank left
 * holding the result sends it to the root. */
#include "runtime/comm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/builders.h"
#include "plan/registry.h"
#include "wire/threads.h"

/* Tag of the message carrying a dynamic algorithm's result to the root:
 * above every block tag a plan can use. */
#define TAG_RESULT (1 << 19)

void trd_coll_opts_init(trd_coll_opts *o)
{
    *o = (trd_coll_opts){.algo = trd_algo_default_for(TRD_COLL_REDUCE), .d = 1.0, .c = 1.0, .latency = 0.0, .K = 2,
                         .segment_bytes = 0, .measure_model = true};
}

trd_comm *trd_comm_new(trd_wire wire, double timeout_s)
{
    trd_comm *c = calloc(1, sizeof *c);
    if (c) {
        c->wire = wire;
        c->timeout_s = timeout_s;
        c->wire.set_call(c->wire.ctx, &c->sig);
    }
    return c;
}

trd_status trd_comm_threads_create(trd_comm **comm, int32_t p, const trd_threads_opts *opts)
{
    trd_threads_opts o;
    trd_threads_opts_init(&o);
    if (!comm)
        return trd_fail(TRD_EINVAL, "trd_comm_threads_create: NULL argument (comm)");
    if (opts)
        o = *opts;
    trd_wire *wires = p > 0 && p <= TRD_THREADS_MAX ? malloc((size_t)p * sizeof *wires) : NULL;
    if (p > 0 && p <= TRD_THREADS_MAX && !wires)
        return trd_fail(TRD_ENOMEM, "threads wire: out of memory");
    for (int32_t r = 0; wires && r < p; r++)
        comm[r] = NULL;
    trd_status st = trd_wire_threads_create(wires, p, &o);
    int32_t made = st == TRD_OK ? p : 0; /* on failure it made none */
    for (int32_t r = 0; st == TRD_OK && r < p; r++) {
        comm[r] = trd_comm_new(wires[r], o.timeout_s);
        if (!comm[r])
            st = trd_fail(TRD_ENOMEM, "threads wire: out of memory");
    }
    if (st != TRD_OK) /* undo: the world goes with its last wire */
        for (int32_t r = 0; r < made; r++) {
            free(comm[r]);
            comm[r] = NULL;
            wires[r].free(wires[r].ctx);
        }
    free(wires);
    return st;
}

/* The call's signature gets its number, and the wire learns that a new
 * call begins (wire.h set_call: the threads wire lets peers see it). */
static void begin_call(trd_comm *c)
{
    c->sig.seq = (uint32_t)++c->calls;
    c->wire.set_call(c->wire.ctx, &c->sig);
}

static void drop_cache(trd_comm *c)
{
    trd_comm_cache *k = &c->cache;
    if (k->shared)
        trd_shared_put(k->shared, c);
    else
        trd_engine_free(k->engine); /* trd_comm_run_plan's; the plan is the caller's */
    free(k->slots);
    free(k->fresh);
    free(k->run);
    free(k->input_copy);
    *k = (trd_comm_cache){0};
}

void trd_comm_free(trd_comm *c)
{
    if (!c)
        return;
    if (c->select_free) /* first: the layer above may still run a call on c */
        c->select_free(c->select);
    drop_cache(c);
    free(c->bounds);
    free(c->node_of);
    free(c->scratch);
    trd_exec_free(&c->exec);
    free(c->test);
    c->wire.free(c->wire.ctx);
    free(c);
}

int32_t trd_comm_rank(const trd_comm *c) { return c ? c->wire.rank : -1; }
int32_t trd_comm_size(const trd_comm *c) { return c ? c->wire.size : 0; }
const char *trd_comm_wire(const trd_comm *c) { return c ? c->wire.name : NULL; }
const char *trd_comm_transport(const trd_comm *c) { return trd_comm_wire(c); }
int32_t trd_comm_node_size(const trd_comm *c)
{
    return !c ? 0 : c->wire.node_size > 0 ? c->wire.node_size : c->wire.size;
}
double trd_comm_now(const trd_comm *c) { return c->wire.now(c->wire.ctx); }

/* The plan for key, with a segment count no finer than one element per
 * block when the algorithm chose it (latency 0 lets a pipeline ask for
 * more segments than there are elements). */
trd_status trd_comm_plan(const trd_comm_key *key, trd_plan **out)
{
    const trd_algo *a = trd_algo_entry(key->algo);
    trd_params p = key->params;
    if (p.segments == 0 && a->segments && key->count > 0) {
        int64_t m = a->segments(&p);
        p.segments = m < key->count ? m : key->count;
    }
    return trd_plan_create(out, a->name, &p);
}

/* The run state of rank's steps of plan (zeroed: nothing landed or
 * claimed), and whether an in-place call must keep its input apart: the
 * program sends from it (SEND_INPUT, plan/fuse.c) and writes slot 0. */
static trd_status prepare_steps(trd_comm_cache *k, const trd_plan *plan, int32_t rank)
{
    size_t n = trd_plan_step_count(plan, rank);
    bool sends = false, writes = false;
    k->run = calloc(n + 1, sizeof *k->run);
    if (!k->run)
        return trd_fail(TRD_ENOMEM, "runtime: out of memory");
    for (size_t i = 0; i < n; i++) {
        const trd_step *s = trd_plan_step(plan, rank, i);
        sends |= s->kind == TRD_STEP_SEND_INPUT;
        writes |= s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT &&
                  (s->buf == 0 || (s->kind == TRD_STEP_COMBINE && s->src == 0));
    }
    k->keep_input = sends && writes;
    return TRD_OK;
}

/* Gets the plan (or the policy) and the engine for key, shared by the
 * ranks of this address space (comm_shared.c), and lays out this rank's
 * own state: its slots, its steps' run state. */
static trd_status build_cache(trd_comm *c, const trd_comm_key *key)
{
    trd_comm_cache *k = &c->cache;
    drop_cache(c);
    c->built++; /* a new build: the keys that ran on the last one lay out again */
    k->key = *key;
    trd_status st = trd_shared_get(c, key, &k->shared);
    if (st == TRD_OK)
        st = trd_shared_check_memory(k->shared, c, (size_t)key->count * key->elem);
    if (st != TRD_OK)
        return st;
    k->plan = trd_shared_plan(k->shared);
    k->engine = trd_shared_engine(k->shared);
    k->policy = trd_shared_policy(k->shared);
    k->nslots = k->plan ? trd_plan_scratch_slots(k->plan, c->wire.rank) + 1
                        : 2; /* the accumulator and one input */
    if (k->plan)
        st = prepare_steps(k, k->plan, c->wire.rank);
    k->slots = st == TRD_OK ? calloc((size_t)k->nslots, sizeof *k->slots) : NULL;
    k->fresh = k->slots ? malloc(k->plan ? (size_t)trd_plan_blocks(k->plan) : 1) : NULL;
    if (st == TRD_OK && (!k->slots || !k->fresh))
        st = trd_fail(TRD_ENOMEM, "runtime: out of memory");
    k->valid = st == TRD_OK;
    return st;
}

/* The same node map by value: each rank of a threads group has its own
 * copy (runtime/comm_shared.c shares a plan between them). */
static bool same_nodes(const trd_params *a, const trd_params *b)
{
    if (a->node_of == b->node_of || !a->node_of || !b->node_of)
        return a->node_of == b->node_of;
    return a->n == b->n && !memcmp(a->node_of, b->node_of, (size_t)a->n * sizeof *a->node_of);
}

bool trd_comm_same_key(const trd_comm_key *x, const trd_comm_key *y)
{
    const trd_params *a = &x->params, *b = &y->params;
    return x->algo == y->algo && x->count == y->count && x->elem == y->elem &&
           x->reproducible == y->reproducible && x->parallelism == y->parallelism &&
           a->root == b->root && a->collective == b->collective && x->parts == y->parts &&
           a->noncommutative == b->noncommutative && a->segments == b->segments &&
           a->d == b->d && a->c == b->c && a->latency == b->latency && a->K == b->K &&
           a->combine_fixed == b->combine_fixed && a->flight == b->flight &&
           a->recv_combine_saving == b->recv_combine_saving && a->costs == b->costs &&
           x->costs_version == y->costs_version && same_nodes(a, b) && a->far_d == b->far_d &&
           a->far_latency == b->far_latency;
}

/* The cached plan (or policy) and engine for key. */
static trd_status cached_plan(trd_comm *c, const trd_comm_key *key)
{
    if (c->cache.valid && trd_comm_same_key(&c->cache.key, key))
        return TRD_OK;
    return build_cache(c, key);
}

/* Scratch for slots 1.. (and slot 0 where the caller gives no buffer). */
static trd_status lay_out_slots(trd_comm *c, unsigned char *acc, size_t bytes)
{
    trd_comm_cache *k = &c->cache;
    size_t need = bytes * (size_t)k->nslots;
    need = need > 0 ? need : 1; /* never NULL: slot + 0 must be a valid pointer */
    if (need > c->scratch_size) {
        unsigned char *grown = realloc(c->scratch, need);
        if (!grown)
            return trd_fail(TRD_ENOMEM, "runtime: cannot allocate %zu bytes of scratch", need);
        c->scratch = grown;
        c->scratch_size = need;
    }
    for (int32_t s = 0; s < k->nslots; s++)
        k->slots[s] = c->scratch + (size_t)s * bytes;
    if (acc)
        k->slots[0] = acc;
    return TRD_OK;
}

/* Dynamic algorithms: the rank holding the result sends it to the root. */
static trd_status move_result(trd_comm *c, bool holds, int32_t root, size_t bytes)
{
    trd_wire *w = &c->wire;
    int32_t id, from;
    trd_status st = TRD_OK;
    if (holds && w->rank != root)
        st = w->isend(w->ctx, root, TAG_RESULT, c->cache.slots[0], bytes, 0);
    else if (!holds && w->rank == root)
        st = w->irecv(w->ctx, TRD_ANY_RANK, TAG_RESULT, c->cache.slots[0], bytes, 0);
    else
        return TRD_OK;
    if (st == TRD_OK)
        st = w->wait(w->ctx, c->timeout_s, &id, &from);
    return st;
}

/* The blocks of slot 0 that hold this rank's result but that no step
 * wrote (p = 1, ...) get the input: all of them where the rank gets the
 * whole result, its part's in a reduce-scatter, none where it gets none
 * (a reduce's other ranks, an exscan's rank 0). */
static void fill_result(trd_comm *c, const trd_comm_key *key, bool holds)
{
    const trd_params *p = &key->params;
    int32_t r = c->wire.rank, blocks = c->exec.blocks;
    if (p->collective == TRD_COLL_REDUCE_SCATTER) {
        int32_t m = blocks / c->wire.size;
        trd_exec_fill_slot0(&c->exec, r * m, m);
    } else if (p->collective == TRD_COLL_REDUCE ? holds
               : p->collective != TRD_COLL_EXSCAN || r > 0)
        trd_exec_fill_slot0(&c->exec, 0, blocks);
}

/* Runs this rank's part of the cached plan or policy.  input: the
 * caller's sendbuf when slot 0 does not hold it yet (trd_exec.input), or
 * NULL. */
static trd_status execute(trd_comm *c, const trd_op *op, const trd_comm_key *key,
                          const void *input)
{
    trd_comm_cache *k = &c->cache;
    size_t bytes = (size_t)key->count * key->elem;
    if (!input && k->plan && k->keep_input) { /* in place: SEND_INPUT needs it apart */
        if (!k->input_copy && !(k->input_copy = malloc(bytes + 1)))
            return trd_fail(TRD_ENOMEM, "runtime: out of memory for a copy of the input");
        memcpy(k->input_copy, k->slots[0], bytes);
        input = k->input_copy;
    }
    c->exec = (trd_exec){.wire = &c->wire, .op = op, .slot = k->slots, .nslots = k->nslots,
                         .count = key->count, .elem = key->elem,
                         .blocks = k->plan ? trd_plan_blocks(k->plan) : 1,
                         .bounds = key->parts ? c->bounds : NULL,
                         .timeout_s = c->timeout_s, .input = input, .fresh = k->fresh,
                         .local = c->exec.local, .log = c->test ? c->test->log : NULL};
    if (input && c->exec.blocks == 1)
        k->fresh[0] = 1; /* a call of memset costs more */
    else if (input)
        memset(k->fresh, 1, (size_t)c->exec.blocks);
    if (k->plan) {
        c->exec.run = k->run;
        c->exec.plan = k->plan;
        c->exec.rank = c->wire.rank;
        c->exec.base = trd_engine_first_id(k->engine, c->wire.rank);
    }
    trd_transport t = trd_exec_transport(&c->exec);
    bool holds = false;
    c->status = TRD_OK;
    trd_status st = trd_engine_run_rank(k->engine, &t, c->wire.rank, &holds);
    if (st != TRD_OK && c->status != TRD_OK)
        st = c->status; /* the wire's own code for a failed decision */
    if (st == TRD_OK)
        fill_result(c, key, holds); /* blocks no step wrote (p = 1, ...) */
    if (st == TRD_OK && !k->plan)
        st = move_result(c, holds, (int32_t)key->params.root,
                         (size_t)key->count * key->elem);
    if (st == TRD_OK && !k->plan)
        st = c->wire.end_dynamic(c->wire.ctx, k->policy, c->calls);
    return st;
}

void trd_comm_set_parts(trd_comm *c, const int64_t *counts)
{
    uint64_t h = 0xCBF29CE484222325ULL;
    for (int32_t r = 0; counts && r < c->wire.size; r++)
        h = (h ^ (uint64_t)counts[r]) * 0x100000001B3ULL;
    c->parts = counts;
    c->parts_hash = counts ? h | 1 : 0; /* never 0: equal parts */
}

int64_t trd_comm_part_start(const trd_comm *c, int64_t count, int32_t r)
{
    int64_t start = 0;
    for (int32_t i = 0; c->parts && i < r; i++)
        start += c->parts[i];
    return c->parts ? start : count / c->wire.size * r;
}

int64_t trd_comm_part_count(const trd_comm *c, int64_t count, int32_t r)
{
    return c->parts ? c->parts[r] : count / c->wire.size;
}

/* The bounds of the plan's blocks over uneven parts: block r m + j is
 * segment j of part r (trd_collective), cut as trd_exec_range cuts a
 * buffer. */
static trd_status lay_out_parts(trd_comm *c, const trd_comm_key *k)
{
    int32_t p = c->wire.size, m = (int32_t)k->params.segments;
    int64_t *grown = realloc(c->bounds, ((size_t)p * (size_t)m + 1) * sizeof *grown);
    if (!grown)
        return trd_fail(TRD_ENOMEM, "runtime: out of memory for %ld parts", (long)p);
    c->bounds = grown;
    int64_t lo = 0;
    for (int32_t r = 0; r < p; lo += c->parts[r], r++)
        for (int32_t j = 0; j < m; j++)
            grown[(size_t)r * (size_t)m + (size_t)j] = lo + c->parts[r] * j / m;
    grown[(size_t)p * (size_t)m] = k->count;
    return TRD_OK;
}

/* A reduce-scatter's result: this rank's part of slot 0, to the front of
 * recvbuf (where slot 0 is recvbuf: in place). */
static void hand_over_part(trd_comm *c, const trd_comm_key *k, void *recvbuf)
{
    int32_t r = c->wire.rank;
    size_t at = (size_t)trd_comm_part_start(c, k->count, r) * k->elem;
    size_t bytes = (size_t)trd_comm_part_count(c, k->count, r) * k->elem;
    if (bytes > 0)
        memmove(recvbuf, c->cache.slots[0] + at, bytes);
}

/* The key of a call whose arguments (buffers aside) are not the last
 * call's: checked, the algorithm's own checks, remembered. */
static trd_status key_of_call(trd_comm *c, const void *sendbuf, void *recvbuf,
                              const trd_call_args *args, const trd_coll_opts *opts, void **acc)
{
    trd_comm_key key;
    trd_status st = trd_comm_check(c, sendbuf, recvbuf, args->count, args->op, args->root,
                                   args->coll, opts, &key, acc);
    if (st != TRD_OK)
        return st;
    const char *name = trd_algo_entry(key.algo)->name;
    trd_comm_sign(name, &key, args->op, &c->sig);
    c->memo = (trd_comm_memo){.valid = true, .args = *args, .algo = name, .key = key,
                              .sig = c->sig};
    return TRD_OK;
}

/* Runs a checked call of key, its signature in c->sig: *built is the
 * cache's build it last ran with (c->built), so a call of the same key
 * on the same build reuses the slots it laid out. */
static trd_status run_key(trd_comm *c, const void *sendbuf, void *recvbuf, void *acc,
                          const trd_op *op, const trd_comm_key *k, uint64_t *built,
                          trd_run_opts *run)
{
    trd_status st;
    if (c->test && c->test->dead)
        return trd_fail(TRD_EIO, "rank %ld is marked dead (test hook): it takes no part",
                        (long)c->wire.rank);
    begin_call(c);
    size_t bytes = (size_t)k->count * k->elem;
    /* trd_comm_run_plan empties the cache without building it: valid too */
    bool warm = c->cache.valid && *built == c->built;
    if (!warm) {
        if ((st = cached_plan(c, k)) != TRD_OK)
            return st;
        *built = c->built;
    }
    /* A warm call has the last call's arguments and plan, so the slots it
     * laid out stand but slot 0, the caller's buffer: at 32 bytes every
     * instruction before the first message is on the critical path
     * (docs/BENCHMARKS.md, "bench/pair"). */
    if (warm)
        c->cache.slots[0] = acc ? acc : c->scratch;
    else if ((st = lay_out_slots(c, acc, bytes)) != TRD_OK)
        return st;
    if ((st = trd_comm_long_path(c, run && run->other)) != TRD_OK ||
        (k->parts && (st = lay_out_parts(c, k)) != TRD_OK))
        return st;
    /* in place, the input is recvbuf, which slot 0 is not where the result
     * does not land in it (rank 0 of an exscan) */
    const void *input = sendbuf == TRD_IN_PLACE ? recvbuf : sendbuf;
    bool copy = input != c->cache.slots[0] && bytes > 0;
    bool timed = run && run->timed;
    /* A timed call starts from a barrier: else a candidate pays for the
     * lateness the previous one left a rank with (binomial, faster than
     * tree-dyn, lost to it when run after it). */
    if (timed && (st = trd_comm_barrier(c)) != TRD_OK)
        return st;
    double t0 = timed ? trd_comm_now(c) : 0.0; /* the run only: not the plan's building */
    st = execute(c, op, k, copy ? input : NULL); /* copied lazily (trd_exec.input) */
    if (st != TRD_OK)
        return trd_comm_fail(c, st);
    if (k->params.collective == TRD_COLL_REDUCE_SCATTER)
        hand_over_part(c, k, recvbuf);
    if (timed)
        run->seconds = trd_comm_now(c) - t0;
    return TRD_OK;
}

trd_status trd_comm_collective(trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                               const trd_op *op, int32_t root, trd_collective coll,
                               const trd_coll_opts *opts, trd_run_opts *run)
{
    trd_comm_key key;
    void *acc = NULL;
    trd_coll_opts defaults;
    trd_status st;
    if (!opts)
        trd_coll_opts_init(&defaults);
    opts = opts ? opts : &defaults;
    if (!c || !op || !opts->algo) /* refused by the checks, with the reason */
        return trd_comm_check(c, sendbuf, recvbuf, count, op, root, coll, opts, &key,
                              &acc);
    if ((st = trd_comm_usable(c)) != TRD_OK)
        return st;
    uint64_t parts = coll == TRD_COLL_REDUCE_SCATTER ? c->parts_hash : 0;
    bool hit = c->memo.valid && c->memo.key.parts == parts &&
               trd_call_args_match(&c->memo.args, op, count, root, coll, opts) &&
               !strcmp(c->memo.algo, opts->algo);
    if (hit) {
        c->sig = c->memo.sig;
        st = trd_comm_check_buffers(c, sendbuf, recvbuf, &c->memo.key, &acc);
    } else {
        trd_call_args args = trd_call_args_of(op, count, root, coll, opts);
        st = key_of_call(c, sendbuf, recvbuf, &args, opts, &acc);
    }
    return st != TRD_OK ? st
                        : run_key(c, sendbuf, recvbuf, acc, op, &c->memo.key, &c->memo.built,
                                  run);
}

trd_status trd_comm_collective_keyed(trd_comm *c, const void *sendbuf, void *recvbuf,
                                     const trd_op *op, const trd_comm_key *key,
                                     const trd_call_sig *sig, uint64_t *built,
                                     trd_run_opts *run)
{
    void *acc = NULL;
    trd_status st = trd_comm_usable(c);
    if (st == TRD_OK)
        st = trd_comm_check_buffers(c, sendbuf, recvbuf, key, &acc);
    if (st != TRD_OK)
        return st;
    c->sig = *sig;
    return run_key(c, sendbuf, recvbuf, acc, op, key, built, run);
}

trd_status trd_comm_enter(trd_comm *c, const char *what)
{
    if (c && c->in_call)
        return trd_fail(TRD_EINVAL, "rank %ld: %s called while a collective call runs on the "
                        "same communicator (from an operator, or a layer that re-enters the "
                        "core)", (long)c->wire.rank, what);
    if (c)
        c->in_call = true;
    return TRD_OK;
}

void trd_comm_leave(trd_comm *c)
{
    if (c)
        c->in_call = false;
}

static trd_status check_run_plan(const trd_comm *c, const trd_plan *plan, const void *buf,
                                 int64_t count, const trd_op *op)
{
    if (!c || !plan || !op || (!buf && count > 0))
        return trd_fail(TRD_EINVAL, "trd_comm_run_plan: NULL %s",
                        !c ? "communicator" : !plan ? "plan" : !op ? "operator" : "buffer");
    int64_t n = trd_plan_params(plan)->n, blocks = trd_plan_blocks(plan);
    size_t elem = trd_op_elem_size(op);
    if (n != c->wire.size)
        return trd_fail(TRD_EINVAL, "trd_comm_run_plan: the plan is for %lld ranks, the "
                        "communicator has %ld", (long long)n, (long)c->wire.size);
    if (count < blocks)
        return trd_fail(TRD_EINVAL, "trd_comm_run_plan: count = %lld is below the plan's %lld "
                        "blocks (each needs an element)", (long long)count, (long long)blocks);
    /* block boundaries count * b / B in 64 bits; every slot's bytes in size_t */
    uint64_t slots = (uint64_t)trd_plan_scratch_slots(plan, c->wire.rank) + 1;
    if (count > INT64_MAX / blocks || (uint64_t)count > SIZE_MAX / elem / slots)
        return trd_fail(TRD_EINVAL, "trd_comm_run_plan: count = %lld elements of %zu bytes is "
                        "too large", (long long)count, elem);
    if (c->test && c->test->dead)
        return trd_fail(TRD_EIO, "rank %ld is marked dead (test hook): it takes no part",
                        (long)c->wire.rank);
    return TRD_OK;
}

/* The caller's plan goes through execute() as a cached one would, but
 * borrowed: it is taken out of the cache before anything frees it. */
static trd_status run_plan(trd_comm *c, const trd_plan *plan, void *buf, int64_t count,
                           const trd_op *op)
{
    trd_status st = check_run_plan(c, plan, buf, count, op);
    if (st == TRD_OK)
        st = trd_comm_usable(c);
    if (st != TRD_OK)
        return st;
    trd_comm_cache *k = &c->cache;
    trd_comm_key key = {.params = *trd_plan_params(plan), .count = count,
                        .elem = trd_op_elem_size(op)};
    trd_comm_sign(trd_plan_algo(plan), &key, op, &c->sig);
    begin_call(c);
    drop_cache(c);
    k->nslots = trd_plan_scratch_slots(plan, c->wire.rank) + 1;
    st = trd_engine_create(&k->engine, plan, c->wire.size, NULL);
    k->slots = st == TRD_OK ? calloc((size_t)k->nslots, sizeof *k->slots) : NULL;
    k->fresh = k->slots ? malloc((size_t)trd_plan_blocks(plan)) : NULL; /* keep_input */
    if (st == TRD_OK && (!k->slots || !k->fresh))
        st = trd_fail(TRD_ENOMEM, "runtime: out of memory");
    if (st == TRD_OK)
        st = prepare_steps(k, plan, c->wire.rank);
    if (st == TRD_OK)
        st = lay_out_slots(c, buf, (size_t)count * key.elem);
    if (st == TRD_OK)
        st = trd_comm_long_path(c, false);
    if (st == TRD_OK) {
        k->plan = plan; /* read only: execute() asks for its blocks */
        st = trd_comm_fail(c, execute(c, op, &key, NULL));
    }
    drop_cache(c);
    return st;
}

trd_status trd_comm_run_plan(trd_comm *c, const trd_plan *plan, void *buf, int64_t count,
                             const trd_op *op)
{
    trd_status st = trd_comm_enter(c, "trd_comm_run_plan");
    if (st != TRD_OK)
        return st;
    st = run_plan(c, plan, buf, count, op);
    trd_comm_leave(c);
    return st;
}

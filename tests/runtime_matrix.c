/* runtime_matrix.c: the runtime's correctness matrix (runtime_matrix.h),
 * the same checks on every wire, and the threads harness.
 *
 * Refusals (dynamic allreduce, exchange reduce, a non-commutative operator
 * for an algorithm flagged commutative-only, an exchange whose plan
 * refuses p or the operator - star and star-reduce-bcast run on p = n!
 * ranks only -, reproducible mode for one that is not) must be
 * TRD_EUNSUPPORTED on every rank and leave every buffer as it was.  An
 * exchange algorithm that answers TRD_EUNSUPPORTED "not yet available" is
 * skipped with a note (and runs as soon as it is written). */
#include "runtime_matrix.h"

static const char *const mode_names[] = {"separate", "TRD_IN_PLACE", "sendbuf == recvbuf"};

void rtm_push(case_list *l, rt_case k)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) {
            fputs("rtm_push: out of memory\n", stderr);
            abort();
        }
    }
    k.opts.algo = k.name ? k.name : trd_algo_name(k.algo);
    l->v[l->len++] = k;
}

int64_t rtm_part(int64_t count, int32_t p, int32_t r)
{
    return p > 1 && r % 3 == 1 ? 0 : count + r % 4;
}

/* The calls of the matrix: reduce to root 0 and to root p-1, allreduce,
 * reduce-scatter of equal and of uneven parts, scan, exscan. */
static const struct {
    trd_collective coll;
    bool last_root, uneven;
} calls[] = {{TRD_COLL_REDUCE, false, false},         {TRD_COLL_REDUCE, true, false},
             {TRD_COLL_ALLREDUCE, false, false},      {TRD_COLL_REDUCE_SCATTER, false, false},
             {TRD_COLL_REDUCE_SCATTER, false, true},  {TRD_COLL_SCAN, false, false},
             {TRD_COLL_EXSCAN, false, false}};

void rtm_add_matrix(case_list *l, size_t algo, int32_t p, const trd_coll_opts *base,
                    const int64_t *cnt, size_t ncnt, uint64_t seed0)
{
    uint64_t seed = seed0;
    for (int op = 0; op < RT_NOPS; op++)
        for (size_t ci = 0; ci < ncnt; ci++)
            for (size_t call = 0; call < sizeof calls / sizeof calls[0]; call++) {
                if (calls[call].last_root && p == 1)
                    continue; /* root p-1 is root 0 */
                for (int mode = 0; mode < 3; mode++) {
                    rt_case k = {.algo = algo, .op = (rt_opid)op, .count = cnt[ci],
                                 .root = calls[call].last_root ? p - 1 : 0,
                                 .coll = calls[call].coll, .uneven = calls[call].uneven,
                                 .mode = (rtm_bufmode)mode, .seed = seed++, .opts = *base};
                    rtm_push(l, k);
                }
            }
}

void rtm_algo_matrix(case_list *l, size_t algo, int32_t p, const int64_t *cnt, size_t ncnt,
                     uint64_t seed0)
{
    trd_coll_opts base;
    trd_coll_opts_init(&base);
    if (trd_algo_kind_of(algo) == TRD_KIND_PIPELINED) {
        /* a model under which they choose a few segments, not one per element */
        base.d = 1e-3;
        base.c = 1e-3;
        base.latency = 1e-5;
    }
    /* the same seed on every rank: the same costs, on any wire */
    base.costs = trd_algo_uses_costs(algo) ? tu_costs(p, 1, 1, (uint64_t)p) : NULL;
    rtm_add_matrix(l, algo, p, &base, cnt, ncnt, seed0);
}

/* What the runtime must answer: OK or EUNSUPPORTED.  Called before the
 * call (its plan probe sets the thread's error message). */
enum { WANT_OK, WANT_REFUSE };

static int expected_outcome(const rt_case *k, int32_t p)
{
    if (k->name) /* "auto" picks an algorithm that can run the call */
        return WANT_OK;
    if (!trd_algo_runs(k->algo, k->coll))
        return WANT_REFUSE; /* its row's kind: a dynamic allreduce, an exchange reduce, ... */
    if (rt_op_nc(k->op) && trd_algo_commutative_only(k->algo))
        return WANT_REFUSE; /* tree-dyn, hetero-greedy, hetero-exact, ring, the stars */
    if (k->opts.reproducible && !trd_algo_reproducible(k->algo))
        return WANT_REFUSE; /* the dynamic ones, star */
    if (rt_plan_refuses_coll(k->algo, p, rt_op_nc(k->op), k->coll))
        return WANT_REFUSE;
    return WANT_OK;
}

/* One rank's view of one case: its buffers and what it passed. */
typedef struct rank_call {
    unsigned char *send, *recv, *want, *input;
    size_t elem, bytes, total; /* total: bytes and the guard */
    int64_t in_count;          /* elements of the input (a reduce-scatter: every part) */
    int64_t out_count, out_at; /* of the result: its elements, where it starts in the
                                  reduction of every input */
    int32_t lo, hi;            /* it folds ranks lo .. hi */
    int64_t parts[RT_MAX_P];   /* an uneven reduce-scatter's recvcounts */
    rtm_bufmode mode;          /* as this rank passes its buffers */
    bool gets;                 /* the result lands here */
    char what[320];
} rank_call;

/* The shape of case k at rank: its input, its result and the ranks it
 * folds (rank_call). */
static void shape_of(const rt_case *k, int32_t p, int32_t rank, rank_call *b)
{
    b->in_count = b->out_count = k->count;
    b->out_at = 0;
    b->lo = 0;
    b->hi = p - 1;
    b->gets = k->coll != TRD_COLL_REDUCE || rank == k->root;
    if (k->coll == TRD_COLL_SCAN || k->coll == TRD_COLL_EXSCAN)
        b->hi = k->coll == TRD_COLL_SCAN ? rank : rank - 1;
    if (k->coll == TRD_COLL_EXSCAN)
        b->gets = rank > 0;
    if (k->coll != TRD_COLL_REDUCE_SCATTER)
        return;
    b->in_count = 0;
    for (int32_t r = 0; r < p; r++) {
        b->parts[r] = k->uneven ? rtm_part(k->count, p, r) : k->count;
        if (r == rank)
            b->out_at = b->in_count;
        b->in_count += b->parts[r];
    }
    b->out_count = b->parts[rank];
}

static void describe(rank_call *b, const rtm_run *x, const rt_case *k, size_t index)
{
    snprintf(b->what, sizeof b->what,
             "%s: case %zu: %s %s%s p=%d count=%lld %s root=%d %s seg=%lld d=%g c=%g lat=%g",
             x->h->wire, index, k->opts.algo, trd_collective_name(k->coll),
             k->uneven ? " (uneven)" : "",
             (int)x->p, (long long)k->count, rt_op_names[k->op], (int)k->root,
             mode_names[k->mode], (long long)k->opts.segment_bytes, k->opts.d, k->opts.c,
             k->opts.latency);
}

/* Fills the buffers of case k and makes the call. */
static trd_status call_case(trd_comm *comm, int32_t rank, rtm_run *x, const rt_case *k,
                            rank_call *b)
{
    memset(b->send, RT_CANARY, b->total);
    memset(b->recv, RT_CANARY, b->total);
    memset(b->input, RT_CANARY, b->total);
    trd_status st = rt_fill(k->op, b->input, b->in_count, rank, k->seed);
    if (st != TRD_OK)
        return st;
    const void *sendbuf = b->send;
    void *recvbuf = b->recv;
    if (b->mode == RTM_SEPARATE) {
        memcpy(b->send, b->input, b->total);
        if (!b->gets && k->mode == RTM_SAME)
            recvbuf = NULL; /* allowed where the result does not land */
    } else {
        memcpy(b->recv, b->input, b->total);
        sendbuf = b->mode == RTM_IN_PLACE ? TRD_IN_PLACE : b->recv;
    }
    const trd_op *op = x->ops[k->op];
    switch (k->coll) {
    case TRD_COLL_REDUCE:
        return trd_reduce(comm, sendbuf, recvbuf, k->count, op, k->root, &k->opts);
    case TRD_COLL_ALLREDUCE:
        return trd_allreduce(comm, sendbuf, recvbuf, k->count, op, &k->opts);
    case TRD_COLL_REDUCE_SCATTER:
        return k->uneven ? trd_reduce_scatter(comm, sendbuf, recvbuf, b->parts, op, &k->opts)
                         : trd_reduce_scatter_block(comm, sendbuf, recvbuf, k->count, op,
                                                    &k->opts);
    case TRD_COLL_SCAN:
        return trd_scan(comm, sendbuf, recvbuf, k->count, op, &k->opts);
    default:
        return trd_exscan(comm, sendbuf, recvbuf, k->count, op, &k->opts);
    }
}

/* A refusal must say why and lose nothing. */
static void check_refused(rtm_run *x, int32_t rank, const rank_call *b, const char *msg)
{
    if (rank == 0)
        atomic_fetch_add(&x->refused, 1);
    if (msg[0] == '\0')
        rt_failf(&x->log, "%s rank %d: refused without a message", b->what, (int)rank);
    if (b->mode == RTM_SEPARATE) {
        if (!rt_is_canary(b->recv, b->total))
            rt_failf(&x->log, "%s rank %d: refused call wrote recvbuf", b->what, (int)rank);
        if (memcmp(b->send, b->input, b->total) != 0)
            rt_failf(&x->log, "%s rank %d: refused call changed sendbuf", b->what, (int)rank);
    } else if (memcmp(b->recv, b->input, b->total) != 0) {
        rt_failf(&x->log, "%s rank %d: refused in-place call changed recvbuf", b->what,
                 (int)rank);
    }
}

/* Accepted: the result where it lands, canaries elsewhere.  False when
 * the expected value could not be computed. */
static bool check_result(rtm_run *x, int32_t rank, const rt_case *k, rank_call *b)
{
    if (b->mode == RTM_SEPARATE && memcmp(b->send, b->input, b->total) != 0)
        rt_failf(&x->log, "%s rank %d: sendbuf changed (first element %lld)", b->what,
                 (int)rank,
                 (long long)rt_first_diff(b->send, b->input, b->in_count + RTM_GUARD, b->elem));
    if (!b->gets) { /* as it was: canaries, or its own input where it passed it there */
        bool kept = b->mode == RTM_SEPARATE ? rt_is_canary(b->recv, b->total)
                                            : !memcmp(b->recv, b->input, b->total);
        if (!kept)
            rt_failf(&x->log, "%s rank %d: the recvbuf of a rank without a result was "
                     "written", b->what, (int)rank);
        return true;
    }
    if (rt_expected_ranks(k->op, b->want, b->in_count, b->lo, b->hi, k->seed) != TRD_OK) {
        rt_failf(&x->log, "%s: expected value failed: %s", b->what, trd_errmsg());
        return false;
    }
    int64_t i = rt_first_diff(b->recv, b->want + (size_t)b->out_at * b->elem, b->out_count,
                              b->elem);
    if (i >= 0)
        rt_failf(&x->log, "%s rank %d: wrong result at element %lld of %lld", b->what,
                 (int)rank, (long long)i, (long long)b->out_count);
    /* past the result: canaries, or (in place) the rest of the input's room */
    size_t end = b->mode == RTM_SEPARATE ? (size_t)b->out_count * b->elem : b->bytes;
    if (!rt_is_canary(b->recv + end, RTM_GUARD * b->elem))
        rt_failf(&x->log, "%s rank %d: wrote past its elements of recvbuf", b->what,
                 (int)rank);
    return true;
}

/* Runs case k on this rank and checks what this rank can see.  Returns
 * false when the ranks can no longer stay in step. */
static bool run_case(trd_comm *comm, int32_t rank, rtm_run *x, const rt_case *k, size_t index,
                     rank_call *b)
{
    shape_of(k, x->p, rank, b);
    b->elem = rt_elem(k->op);
    b->bytes = (size_t)b->in_count * b->elem;
    b->total = b->bytes + RTM_GUARD * b->elem;
    /* in place everywhere but at a reduce's other ranks (exscan's rank 0 too) */
    b->mode = b->gets || k->coll == TRD_COLL_EXSCAN ? k->mode : RTM_SEPARATE;
    describe(b, x, k, index);
    int want = expected_outcome(k, x->p);
    trd_status st = call_case(comm, rank, x, k, b);
    const char *msg = st == TRD_OK ? "" : trd_errmsg();
    if (rank == 0)
        atomic_fetch_add(&x->done, 1);
    if (st != TRD_OK && !k->name && trd_algo_kind_of(k->algo) == TRD_KIND_EXCHANGE &&
        rt_not_yet(st, msg)) {
        char note[160];
        snprintf(note, sizeof note, "skipped %s: %s", k->opts.algo, msg);
        rt_note_once(note);
        if (rank == 0)
            atomic_fetch_add(&x->skipped, 1);
        return true; /* every rank refuses alike: still in step */
    }
    if (st != TRD_OK && (want == WANT_OK || st != TRD_EUNSUPPORTED)) {
        rt_failf(&x->log, "%s rank %d: status %d (%s), expected %s: %s", b->what, (int)rank,
                 (int)st, trd_strerror(st), want == WANT_OK ? "TRD_OK" : "TRD_EUNSUPPORTED",
                 msg);
        return false;
    }
    if (st == TRD_OK && want == WANT_REFUSE) {
        rt_failf(&x->log, "%s rank %d: accepted; expected TRD_EUNSUPPORTED", b->what,
                 (int)rank);
        return false;
    }
    if (st != TRD_OK) {
        check_refused(x, rank, b, msg);
        return true;
    }
    return check_result(x, rank, k, b);
}

trd_status rtm_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rtm_run *x = arg;
    size_t most = 0;
    for (size_t i = 0; i < x->ncases; i++) { /* a reduce-scatter's input: p parts */
        size_t t = (((size_t)x->cases[i].count + 4) * (size_t)x->p + RTM_GUARD) *
                   rt_elem(x->cases[i].op);
        most = t > most ? t : most;
    }
    rank_call b = {.send = malloc(most), .recv = malloc(most), .want = malloc(most),
                   .input = malloc(most)};
    trd_status st = b.send && b.recv && b.want && b.input ? TRD_OK : TRD_ENOMEM;
    for (size_t i = 0; st == TRD_OK && i < x->ncases; i++) {
        bool in_step = run_case(comm, rank, x, &x->cases[i], i, &b);
        if (x->h->stop(x, !in_step))
            break;
    }
    free(b.send);
    free(b.recv);
    free(b.want);
    free(b.input);
    return st;
}

trd_status rtm_run_init(rtm_run *x, const case_list *l, int32_t p, const rtm_harness *h)
{
    memset(x, 0, sizeof *x);
    x->cases = l->v;
    x->ncases = l->len;
    x->p = p;
    x->h = h;
    rt_log_init(&x->log);
    trd_status st = TRD_OK;
    for (int i = 0; i < RT_NOPS && st == TRD_OK; i++)
        st = rt_op_try((rt_opid)i, &x->ops[i]);
    return st;
}

void rtm_run_done(rtm_run *x)
{
    for (int i = 0; i < RT_NOPS; i++)
        trd_op_free(x->ops[i]);
    rt_log_destroy(&x->log);
}

/* ---- The threads harness: the ranks share one log. ---- */

/* A rank that stops makes the others leave at their next case (a call
 * they already made ends at its deadline). */
static bool threads_stop(rtm_run *x, bool mine)
{
    if (mine)
        atomic_store(&x->log.stop, 1);
    return rt_stopped(&x->log);
}

static int threads_failures(rtm_run *x) { return x->log.failures; }

static const rtm_harness threads_harness = {"threads", threads_stop, threads_failures};

void rtm_threads_cases(const case_list *l, int32_t p, trd_comm **comm,
                       const trd_test_hooks *hooks, const char *what)
{
    rtm_run *x = calloc(1, sizeof *x);
    assert_non_null(x);
    TU_CHECK(rtm_run_init(x, l, p, &threads_harness) == TRD_OK, "operators: %s",
             trd_errmsg());
    rt_result res;
    trd_threads_opts def = rt_topts(RT_TIMEOUT_S);
    if (comm)
        rt_run_on(comm, p, rtm_rank, x, &res);
    else if (hooks)
        rt_run_hooked(p, &def, hooks, rtm_rank, x, &res);
    else
        rt_run(p, &def, rtm_rank, x, &res);
    for (int32_t r = 0; r < p; r++)
        TU_CHECK(res.status[r] == TRD_OK, "%s p=%d rank %d: %s", what, (int)p, (int)r,
                 res.msg[r]);
    int failures = threads_failures(x);
    long done = atomic_load(&x->done);
    rtm_run_done(x);
    free(x);
    TU_CHECK(failures == 0, "%s p=%d: %d failure(s), see above", what, (int)p, failures);
    TU_CHECK((size_t)done == l->len, "%s p=%d: ran %ld of %zu calls", what, (int)p, done,
             l->len);
}

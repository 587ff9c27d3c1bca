/* test_runtime.c: real reductions over the threads transport (treduce.h,
 * "Runtime").  The correctness matrix runs every registered algorithm (all
 * kinds, iterated from the registry) over p in {1,2,3,4,5,7,8,9}, counts
 * {0, 1, 7, 4099}, reduce to root 0 and to root p-1 and allreduce, with
 * int32 sum, int64 prod, uint64 bxor, double sum of small integers (all
 * checked BITWISE against a sequential rank-order fold written here in
 * plain C) and the non-commutative checkers matrix2x2 and interval, each
 * with separate buffers, TRD_IN_PLACE and sendbuf == recvbuf.  Every rank's
 * recvbuf is checked for an allreduce; for a reduce the non-roots' recvbuf
 * must keep its canary; sendbuf must be unchanged; nothing may be written
 * past count elements.  Refusals (dynamic allreduce, exchange reduce,
 * non-commutative tree-dyn / ring, an exchange whose plan refuses p or the
 * operator - star and star-reduce-bcast run on p = n! ranks only, with a
 * commutative operator -, star in reproducible mode) must be
 * TRD_EUNSUPPORTED on every rank and leave every buffer as it was.
 * Then: segmented trees, pipelines and exchanges, repeated calls with
 * changing parameters on the same communicators (and reproducible mode),
 * "auto", injected random delays, a model asking for more segments than
 * elements (under a watchdog), the threads wire's matching order and its
 * claims (white box), allreduces whose combines are written into the
 * peer's result (claims made, results checked), calibrate and predict, and
 * count 0 as a fresh communicator's first call.
 *
 * usage: test_runtime [PATTERN [SKIP]] (cmocka filters); each test prints
 * its wall time.
 *
 * An exchange algorithm that answers TRD_EUNSUPPORTED "not yet available"
 * is skipped with a note (and runs as soon as it is written). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime_util.h"
#include "plan/plan_internal.h" /* trd_plan_same_programs */
#include "plan/registry.h"      /* trd_algo_find: the key a call ran */
#include "runtime/comm.h"      /* a communicator's wire: the claims it made */
#include "runtime/op.h"        /* trd_op_serial: the operators of kept profiles */
#include "runtime/tune.h"      /* the tuning rounds, driven by hand */
#include "wire/threads.h" /* the wire itself, for its matching order */

static const int32_t ps[] = {1, 2, 3, 4, 5, 7, 8, 9};
#define NPS (sizeof ps / sizeof ps[0])
/* 7 first: a fresh communicator's first call with count 0 is its own test
 * (test_count_zero_first), so that a failure there does not hide the rest. */
static const int64_t counts[] = {7, 0, 1, 4099};
#define NCOUNTS (sizeof counts / sizeof counts[0])
#define GUARD 8          /* elements past count that must keep the canary */
#define TIMEOUT_S 10.0   /* every wait: a broken runtime fails, never hangs ctest */

/* How the caller passes its buffers where the result lands. */
typedef enum bufmode { SEPARATE = 0, IN_PLACE = 1, SAME = 2 } bufmode;
static const char *const bufmode_names[] = {"separate", "TRD_IN_PLACE", "sendbuf == recvbuf"};

/* One collective call that every rank makes. */
typedef struct rt_case {
    size_t algo;
    const char *name; /* NULL: the registry's name of algo; else e.g. "auto" */
    rt_opid op;
    int64_t count;
    int32_t root;
    bool allreduce;
    bufmode mode;
    uint64_t seed;
    trd_coll_opts opts;
} rt_case;

typedef struct case_list {
    rt_case *v;
    size_t len, cap;
} case_list;

static void push_case(case_list *l, rt_case k)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    k.opts.algo = k.name ? k.name : trd_algo_name(k.algo);
    l->v[l->len++] = k;
}

/* What the runtime must answer: OK or EUNSUPPORTED.  Called before the
 * call (its plan probe sets the thread's error message). */
enum { WANT_OK, WANT_REFUSE };

static int expected_outcome(const rt_case *k, int32_t p)
{
    if (k->name) /* "auto" picks an algorithm that can run the call */
        return WANT_OK;
    trd_algo_kind kind = trd_algo_kind_of(k->algo);
    if (kind == TRD_KIND_DYNAMIC && k->opts.reproducible)
        return WANT_REFUSE;
    if (kind == TRD_KIND_DYNAMIC && k->allreduce)
        return WANT_REFUSE;
    if (kind == TRD_KIND_EXCHANGE && !k->allreduce)
        return WANT_REFUSE;
    if (rt_op_nc(k->op) && trd_algo_commutative_only(k->algo))
        return WANT_REFUSE; /* tree-dyn, hetero-greedy, hetero-exact, ring, the stars */
    if (k->opts.reproducible && !trd_algo_reproducible(k->algo))
        return WANT_REFUSE; /* the dynamic ones, star */
    if (k->allreduce && rt_plan_refuses(k->algo, p, rt_op_nc(k->op)))
        return WANT_REFUSE;
    return WANT_OK;
}

/* Shared by the rank threads of one run. */
typedef struct run_ctx {
    const rt_case *cases;
    size_t ncases;
    trd_op *ops[RT_NOPS];
    rt_log log;
    int32_t p;
    atomic_long done, refused, skipped; /* calls of rank 0 */
} run_ctx;

static void describe(char *out, size_t size, const rt_case *k, int32_t p, size_t index)
{
    snprintf(out, size, "case %zu: %s %s p=%d count=%lld %s root=%d %s seg=%lld d=%g c=%g lat=%g",
             index, k->opts.algo, k->allreduce ? "allreduce" : "reduce", (int)p,
             (long long)k->count, rt_op_names[k->op], (int)k->root, bufmode_names[k->mode],
             (long long)k->opts.segment_bytes, k->opts.d, k->opts.c, k->opts.latency);
}

/* This rank's buffers. */
typedef struct rank_bufs {
    unsigned char *send, *recv, *want, *input;
    size_t size;
} rank_bufs;

/* Runs case k on this rank and checks what this rank can see.  Returns
 * false when the ranks can no longer stay in step. */
static bool run_case(trd_comm *comm, int32_t rank, run_ctx *x, const rt_case *k, size_t index,
                     rank_bufs *b)
{
    int32_t p = x->p;
    size_t elem = rt_elem(k->op);
    size_t bytes = (size_t)k->count * elem, total = bytes + GUARD * elem;
    bool gets = k->allreduce || rank == k->root;
    char what[320];
    describe(what, sizeof what, k, p, index);

    memset(b->send, RT_CANARY, total);
    memset(b->recv, RT_CANARY, total);
    memset(b->input, RT_CANARY, total);
    if (rt_fill(k->op, b->input, k->count, rank, k->seed) != TRD_OK) {
        rt_log_abort(&x->log, "%s rank %d: fill failed: %s", what, (int)rank, trd_errmsg());
        return false;
    }
    const void *sendbuf = b->send;
    void *recvbuf = b->recv;
    bufmode mode = gets ? k->mode : SEPARATE;
    if (mode == SEPARATE) {
        memcpy(b->send, b->input, total);
        if (!gets && k->mode == SAME)
            recvbuf = NULL; /* allowed where the result does not land */
    } else {
        memcpy(b->recv, b->input, total);
        sendbuf = mode == IN_PLACE ? TRD_IN_PLACE : b->recv;
    }

    int want = expected_outcome(k, p);
    trd_status st = k->allreduce
                        ? trd_allreduce(comm, sendbuf, recvbuf, k->count, x->ops[k->op], &k->opts)
                        : trd_reduce(comm, sendbuf, recvbuf, k->count, x->ops[k->op], k->root,
                                     &k->opts);
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
        rt_log_abort(&x->log, "%s rank %d: status %d (%s), expected %s: %s", what, (int)rank,
                     (int)st, trd_strerror(st), want == WANT_OK ? "TRD_OK" : "TRD_EUNSUPPORTED",
                     msg);
        return false;
    }
    if (st == TRD_OK && want == WANT_REFUSE) {
        rt_log_abort(&x->log, "%s rank %d: accepted; expected TRD_EUNSUPPORTED", what,
                     (int)rank);
        return false;
    }
    if (st != TRD_OK) { /* a refusal: it must say why and lose nothing */
        if (rank == 0)
            atomic_fetch_add(&x->refused, 1);
        if (msg[0] == '\0')
            rt_failf(&x->log, "%s rank %d: refused without a message", what, (int)rank);
        if (mode == SEPARATE) {
            if (!rt_is_canary(b->recv, total))
                rt_failf(&x->log, "%s rank %d: refused call wrote recvbuf", what, (int)rank);
        } else if (memcmp(b->recv, b->input, total) != 0) {
            rt_failf(&x->log, "%s rank %d: refused in-place call changed recvbuf", what,
                     (int)rank);
        }
        if (mode == SEPARATE && memcmp(b->send, b->input, total) != 0)
            rt_failf(&x->log, "%s rank %d: refused call changed sendbuf", what, (int)rank);
        return true;
    }

    /* Accepted: check the result where it lands, canaries elsewhere. */
    if (mode == SEPARATE && memcmp(b->send, b->input, total) != 0)
        rt_failf(&x->log, "%s rank %d: sendbuf changed (first element %lld)", what, (int)rank,
                 (long long)rt_first_diff(b->send, b->input, k->count + GUARD, elem));
    if (!gets) {
        if (!rt_is_canary(b->recv, total))
            rt_failf(&x->log, "%s rank %d: non-root recvbuf was written", what, (int)rank);
        return true;
    }
    if (rt_expected(k->op, b->want, k->count, p, k->seed) != TRD_OK) {
        rt_log_abort(&x->log, "%s: expected value failed: %s", what, trd_errmsg());
        return false;
    }
    int64_t i = rt_first_diff(b->recv, b->want, k->count, elem);
    if (i >= 0)
        rt_failf(&x->log, "%s rank %d: wrong result at element %lld of %lld", what, (int)rank,
                 (long long)i, (long long)k->count);
    if (!rt_is_canary(b->recv + bytes, GUARD * elem))
        rt_failf(&x->log, "%s rank %d: wrote past count elements of recvbuf", what, (int)rank);
    return true;
}

static trd_status rank_main(trd_comm *comm, int32_t rank, void *arg)
{
    run_ctx *x = arg;
    size_t most = 0;
    for (size_t i = 0; i < x->ncases; i++) {
        size_t t = ((size_t)x->cases[i].count + GUARD) * rt_elem(x->cases[i].op);
        most = t > most ? t : most;
    }
    rank_bufs b = {.size = most};
    b.send = malloc(most);
    b.recv = malloc(most);
    b.want = malloc(most);
    b.input = malloc(most);
    trd_status st = b.send && b.recv && b.want && b.input ? TRD_OK : TRD_ENOMEM;
    for (size_t i = 0; st == TRD_OK && i < x->ncases && !rt_stopped(&x->log); i++)
        if (!run_case(comm, rank, x, &x->cases[i], i, &b))
            break;
    free(b.send);
    free(b.recv);
    free(b.want);
    free(b.input);
    return st;
}

/* Runs the cases on p ranks (comm: existing communicators, or NULL for
 * fresh ones with hooks, NULL: none) and fails the test on any problem. */
static void run_cases(const case_list *l, int32_t p, trd_comm **comm,
                      const trd_test_hooks *hooks, const char *what)
{
    run_ctx *x = calloc(1, sizeof *x);
    assert_non_null(x);
    x->cases = l->v;
    x->ncases = l->len;
    x->p = p;
    rt_log_init(&x->log);
    for (int i = 0; i < RT_NOPS; i++)
        x->ops[i] = rt_op_create((rt_opid)i);
    rt_result res;
    trd_threads_opts def = rt_topts(TIMEOUT_S);
    if (comm)
        rt_run_on(comm, p, rank_main, x, &res);
    else
        rt_run_hooked(p, &def, hooks, rank_main, x, &res);
    for (int32_t r = 0; r < p; r++)
        TU_CHECK(res.status[r] == TRD_OK, "%s p=%d rank %d: %s", what, (int)p, (int)r,
                 res.msg[r]);
    for (int i = 0; i < RT_NOPS; i++)
        trd_op_free(x->ops[i]);
    int failures = x->log.failures;
    rt_log_destroy(&x->log);
    TU_CHECK(failures == 0, "%s p=%d: %d failure(s), see above", what, (int)p, failures);
    TU_CHECK((size_t)atomic_load(&x->done) == l->len, "%s p=%d: ran %ld of %zu calls", what,
             (int)p, (long)atomic_load(&x->done), l->len);
    free(x);
}

/* ---- The correctness matrix: one cmocka test per algorithm. ---- */

static size_t algo_index[64];

static void add_matrix(case_list *l, size_t algo, int32_t p, const trd_coll_opts *base,
                       const int64_t *cnt, size_t ncnt, uint64_t seed0)
{
    uint64_t seed = seed0;
    for (int op = 0; op < RT_NOPS; op++)
        for (size_t ci = 0; ci < ncnt; ci++)
            for (int call = 0; call < 3; call++) {
                int32_t root = call == 1 ? p - 1 : 0;
                if (call == 1 && p == 1)
                    continue; /* root p-1 is root 0 */
                for (int mode = 0; mode < 3; mode++) {
                    rt_case k = {.algo = algo, .op = (rt_opid)op, .count = cnt[ci],
                                 .root = root, .allreduce = call == 2,
                                 .mode = (bufmode)mode, .seed = seed++, .opts = *base};
                    push_case(l, k);
                }
            }
}

static void test_matrix(void **state)
{
    size_t algo = *(size_t *)*state;
    trd_coll_opts base;
    trd_coll_opts_init(&base);
    if (trd_algo_kind_of(algo) == TRD_KIND_PIPELINED) {
        /* a model under which they choose a few segments, not one per element */
        base.d = 1e-3;
        base.c = 1e-3;
        base.latency = 1e-5;
    }
    for (size_t i = 0; i < NPS; i++) {
        case_list l = {0};
        /* heterogeneous planners: random costs of these ranks, every other
         * p (their plans run on the same engine; test_hetero_runtime.c
         * runs them too) */
        if (trd_algo_uses_costs(algo) && i % 2 == 0 && i + 1 < NPS)
            continue;
        base.costs = trd_algo_uses_costs(algo) ? tu_costs(ps[i], 1, 1, (uint64_t)ps[i]) : NULL;
        add_matrix(&l, algo, ps[i], &base, counts, NCOUNTS, 1000 * (uint64_t)ps[i]);
        run_cases(&l, ps[i], NULL, NULL, trd_algo_name(algo));
        free(l.v);
    }
}

/* ---- count 0 as the very first call of fresh communicators. ---- */

typedef struct zero_ctx {
    trd_op *op;
    size_t algo;
    bool allreduce, null_bufs;
} zero_ctx;

static trd_status zero_rank(trd_comm *comm, int32_t rank, void *arg)
{
    zero_ctx *x = arg;
    (void)rank;
    int32_t send = 5, recv = 6;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = trd_algo_name(x->algo);
    if (trd_algo_uses_costs(x->algo))
        o.costs = tu_costs(trd_comm_size(comm), 1, 1, 1);
    const void *s = x->null_bufs ? NULL : &send;
    void *r = x->null_bufs ? NULL : &recv;
    trd_status st = x->allreduce ? trd_allreduce(comm, s, r, 0, x->op, &o)
                                 : trd_reduce(comm, s, r, 0, x->op, trd_comm_size(comm) - 1, &o);
    if (st == TRD_OK && (send != 5 || recv != 6))
        return TRD_EIO; /* count 0 must read and write nothing */
    return st;
}

static void test_count_zero_first(void **state)
{
    (void)state;
    zero_ctx x = {.op = rt_op_create(RT_I32_SUM)};
    for (size_t a = 0; a < trd_algo_count(); a++) {
        trd_algo_kind kind = trd_algo_kind_of(a);
        x.algo = a;
        x.allreduce = kind == TRD_KIND_EXCHANGE;
        for (int nb = 0; nb < 2; nb++) {
            x.null_bufs = nb;
            trd_threads_opts topts = rt_topts(TIMEOUT_S);
            rt_result res;
            rt_run(4, &topts, zero_rank, &x, &res);
            for (int32_t r = 0; r < 4; r++) {
                if (rt_not_yet(res.status[r], res.msg[r]) ||
                    (x.allreduce && rt_plan_refuses(a, 4, false) &&
                     res.status[r] == TRD_EUNSUPPORTED))
                    continue; /* star and star-reduce-bcast: p = 4 is no n! */
                TU_CHECK(res.status[r] == TRD_OK, "%s count 0 first call (%s buffers) rank %d: "
                         "status %d: %s", trd_algo_name(a), nb ? "NULL" : "real", (int)r,
                         (int)res.status[r], res.msg[r]);
            }
        }
    }
    trd_op_free(x.op);
}

/* ---- Segmentation. ---- */

/* Trees cut into small segments.  Reduce: 129 blocks (int32 sum of 4099
 * elements in 128-byte segments, double sum in 256-byte ones, matrix2x2 of
 * 515 elements in 64-byte ones); allreduce: 33 blocks (4x the segment size).
 * Not more: every rank builds the plan, and a segmented plan's makespan
 * comes from the simulator, whose cost grows like blocks^2..3 (allreduce
 * and greedy-k-transfers worst), which ASan makes slow. */
static void test_segments_trees(void **state)
{
    (void)state;
    const int32_t sp[] = {3, 8};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        case_list l = {0};
        for (size_t a = 0; a < trd_algo_count(); a++) {
            if (trd_algo_kind_of(a) != TRD_KIND_TREE)
                continue;
            for (int call = 0; call < 3; call++) /* root 0, root p-1, allreduce */
                for (int j = 0; j < 3; j++) {
                    rt_opid op = j == 0 ? RT_I32_SUM : j == 1 ? RT_F64_SUM : RT_MATRIX;
                    if (op == RT_F64_SUM && call != (int)i + 1)
                        continue; /* p=3: root p-1; p=8: allreduce */
                    trd_coll_opts o;
                    trd_coll_opts_init(&o);
                    o.segment_bytes = (op == RT_F64_SUM ? 256 : op == RT_MATRIX ? 64 : 128) *
                                      (call == 2 ? 4 : 1);
                    if (trd_algo_uses_costs(a))
                        o.costs = tu_costs(sp[i], 1, 1, (uint64_t)sp[i]);
                    rt_case k = {.algo = a, .op = op, .count = op == RT_MATRIX ? 515 : 4099,
                                 .root = call == 1 ? sp[i] - 1 : 0, .allreduce = call == 2,
                                 .mode = (bufmode)((call + j) % 3), .seed = 77 + l.len,
                                 .opts = o};
                    push_case(&l, k);
                }
        }
        run_cases(&l, sp[i], NULL, NULL, "segmented trees");
        free(l.v);
    }
}

/* Pipelines given d, c and latency: the model must choose several
 * segments, and the results must stay exact. */
static void test_segments_pipelined(void **state)
{
    (void)state;
    const int32_t sp[] = {2, 5, 9};
    const int64_t cnt[] = {7, 4099};
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_kind_of(a) != TRD_KIND_PIPELINED)
            continue;
        for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
            trd_params prm;
            trd_params_init(&prm);
            prm.n = sp[i];
            prm.d = 1e-3;
            prm.c = 1e-3;
            prm.latency = 1e-5;
            trd_plan *plan = tu_plan(trd_algo_name(a), &prm);
            int32_t blocks = trd_plan_blocks(plan);
            trd_plan_free(plan);
            /* (for p = 2 both choose 1 segment: their model charges every
             * segment a whole transfer-plus-combine stage) */
            TU_CHECK(sp[i] < 5 || blocks > 2, "%s p=%d chose %d segments; expected several",
                     trd_algo_name(a), (int)sp[i], (int)blocks);
            case_list l = {0};
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            o.d = prm.d;
            o.c = prm.c;
            o.latency = prm.latency;
            add_matrix(&l, a, sp[i], &o, cnt, 2, 5000 + (uint64_t)sp[i]);
            /* and with explicit 64-byte segments: int32 sum of 1031 elements
             * (65 blocks), matrix2x2 of 515 (129 blocks) */
            o.segment_bytes = 64;
            for (int call = 0; call < 3; call++)
                for (int j = 0; j < 2; j++) {
                    rt_case k = {.algo = a, .op = j ? RT_MATRIX : RT_I32_SUM,
                                 .count = j ? 515 : 1031,
                                 .root = call == 1 ? sp[i] - 1 : 0, .allreduce = call == 2,
                                 .mode = (bufmode)((call + j) % 3), .seed = 6000 + l.len,
                                 .opts = o};
                    push_case(&l, k);
                }
            run_cases(&l, sp[i], NULL, NULL, "pipelined");
            free(l.v);
        }
    }
}

/* Exchange algorithms with segments too (fewer, bigger ones). */
static void test_segments_exchange(void **state)
{
    (void)state;
    const int32_t sp[] = {3, 4, 6};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        case_list l = {0};
        for (size_t a = 0; a < trd_algo_count(); a++) {
            if (trd_algo_kind_of(a) != TRD_KIND_EXCHANGE)
                continue;
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            o.segment_bytes = 1024;
            for (int op = 0; op < RT_NOPS; op++) {
                rt_case k = {.algo = a, .op = (rt_opid)op, .count = 4099, .root = 0,
                             .allreduce = true, .mode = (bufmode)(op % 3),
                             .seed = 900 + l.len, .opts = o};
                push_case(&l, k);
            }
        }
        run_cases(&l, sp[i], NULL, NULL, "segmented exchange");
        free(l.v);
    }
}

/* ---- Repeated calls on the same communicators. ---- */

/* Every algorithm in turn, with counts, roots, operators and options that
 * change from call to call: a stale plan, slot layout or scratch size
 * would give a wrong result.  The third round asks for reproducible mode
 * (dynamic algorithms must refuse it). */
static void test_repeated_mixed(void **state)
{
    (void)state;
    const int32_t p = 6;
    const int64_t cnt[] = {3, 4099, 0, 1, 100, 7, 4099, 2};
    trd_comm *comm[RT_MAX_P];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    rt_comms_create(comm, p, &topts);
    case_list l = {0};
    size_t n = 0;
    for (int round = 0; round < 3; round++)
        for (size_t a = 0; a < trd_algo_count(); a++, n++) {
            trd_algo_kind kind = trd_algo_kind_of(a);
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            if (n % 4 == 1)
                o.segment_bytes = 256;
            if (kind == TRD_KIND_PIPELINED) {
                o.d = 1e-3;
                o.c = 1e-3;
                o.latency = 1e-5;
            }
            rt_opid op = (rt_opid)(n % RT_NOPS);
            if (trd_algo_commutative_only(a) || rt_plan_refuses(a, p, true))
                op = (rt_opid)(n % 4); /* commutative: so the call is not refused */
            if (trd_algo_uses_costs(a))
                o.costs = tu_costs(p, 1, 1, (uint64_t)n);
            bool all = kind == TRD_KIND_EXCHANGE || (kind != TRD_KIND_DYNAMIC && n % 3 == 0);
            /* noncommutative trees can always put the root on 0 or p-1 */
            int32_t root = rt_op_nc(op) ? (n % 2 ? p - 1 : 0) : (int32_t)(n % (size_t)p);
            o.reproducible = round == 2; /* the dynamic ones must refuse it */
            rt_case k = {.algo = a, .op = op, .count = cnt[n % 8], .root = root,
                         .allreduce = all, .mode = (bufmode)(n % 3), .seed = 31 * n, .opts = o};
            push_case(&l, k);
        }
    run_cases(&l, p, comm, NULL, "mixed sequence");
    free(l.v);
    rt_comms_free(comm, p);
}

/* opts.algo = "auto" (treduce.h: "registered name, or auto: the algorithm
 * with the smallest predicted time for this call"): exact results for
 * reduce and allreduce, commutative or not, several models, alone and
 * between other algorithms on the same communicators. */
static void test_auto(void **state)
{
    (void)state;
    const int32_t p = 5;
    const double model[][3] = {{1e-5, 1e-6, 5e-6}, {1e-3, 1e-3, 1e-5}, {1, 1, 0}};
    case_list l = {0};
    for (size_t n = 0; n < 24; n++) {
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        o.d = model[n % 3][0];
        o.c = model[n % 3][1];
        o.latency = model[n % 3][2];
        o.measure_model = false; /* these models, not the communicator's own */
        o.reproducible = n % 5 == 4;
        rt_opid op = (rt_opid)(n % RT_NOPS);
        rt_case k = {.name = "auto", .op = op, .count = n % 4 == 3 ? 4099 : (int64_t)((n + 1) % 8),
                     .root = rt_op_nc(op) ? (n % 2 ? p - 1 : 0) : (int32_t)(n % p),
                     .allreduce = n % 3 == 1, .mode = (bufmode)(n % 3), .seed = 5 + n, .opts = o};
        push_case(&l, k);
        if (n % 6 == 5) { /* another algorithm in between */
            trd_coll_opts_init(&o);
            rt_case b = {.algo = rt_algo("greedy"), .op = RT_I32_SUM, .count = 100, .root = 1,
                         .mode = SEPARATE, .seed = 9 + n, .opts = o};
            push_case(&l, b);
        }
    }
    run_cases(&l, p, NULL, NULL, "auto");
    free(l.v);
}

/* A communicator remembers the last call's checked arguments, buffers
 * aside (comm.h, trd_comm_memo): a call with the same ones takes the
 * remembered key and checks only its buffers; a call that differs in any
 * argument - the algorithm's name changed in the same buffer, another
 * operator, even at the same address - is checked and resolved again. */
typedef struct memo_call {
    int64_t count;
    double c;
    bool allreduce;
} memo_call;

static void add_left(const void *in, void *inout, int64_t count, void *ctx)
{
    (void)ctx;
    for (int64_t i = 0; i < count; i++)
        ((double *)inout)[i] += ((const double *)in)[i];
}

/* A non-commutative operator, at address `was` if malloc gives it back
 * within a few tries (it hands out the chunks freed last first). */
static trd_status op_at(uintptr_t was, trd_op **out)
{
    trd_op *tried[32];
    int n = 0;
    trd_status st = TRD_OK;
    while (st == TRD_OK && n < 32 &&
           (n == 0 || (uintptr_t)tried[n - 1] != was) &&
           (st = trd_op_user(&tried[n], add_left, sizeof(double), false, NULL)) == TRD_OK)
        n++;
    if (n > 0 && (uintptr_t)tried[n - 1] != was)
        rt_note_once("memo: no operator was created at the address of the freed one");
    for (int i = 0; i + 1 < n; i++)
        trd_op_free(tried[i]);
    *out = n > 0 ? tried[n - 1] : NULL;
    return st;
}

/* The auto calls: the memo follows their arguments; a planted key is what
 * the same arguments then run. */
static trd_status memo_auto(trd_comm *comm, int32_t rank, rt_log *log, const trd_op *sum,
                            double *in, double *out)
{
    static const memo_call calls[] = {{8, 1, false}, {8, 1, false}, {16, 1, false},
                                      {16, 2, false}, {16, 2, true}, {16, 2, true}};
    trd_status st = TRD_OK;
    size_t chain;
    trd_algo_find("chain", &chain);
    for (size_t k = 0; k < sizeof calls / sizeof calls[0] && st == TRD_OK; k++) {
        const memo_call *m = &calls[k];
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        o.algo = "auto";
        o.c = m->c;
        o.measure_model = false;
        st = m->allreduce ? trd_allreduce(comm, in, out, m->count, sum, &o)
                          : trd_reduce(comm, in, out, m->count, sum, 0, &o);
        const trd_comm_memo *mm = &comm->memo;
        if (st == TRD_OK && (!mm->valid || strcmp(mm->algo, "auto") ||
                             mm->args.count != m->count || mm->args.opts.c != m->c ||
                             mm->args.allreduce != m->allreduce))
            rt_failf(log, "memo: rank %d call %zu: remembered count %lld, c %g, allreduce %d",
                     (int)rank, k, (long long)mm->args.count, mm->args.opts.c,
                     (int)mm->args.allreduce);
        if (st == TRD_OK && k == 0) {
            comm->memo.key.algo = chain; /* planted: a reduce as good as any */
            comm->memo.cached = false;   /* ...whose plan the cache does not hold */
            st = trd_reduce(comm, in, out, m->count, sum, 0, &o);
            if (st != TRD_OK || comm->cache.key.algo != chain)
                rt_failf(log, "memo: rank %d: the same arguments did not take the remembered "
                         "key (status %d: %s)", (int)rank, (int)st, trd_errmsg());
            comm->memo.valid = false; /* forgotten: the next call resolves again */
        }
    }
    return st;
}

/* What the memo must not hide: a name changed in place, overlapping
 * buffers, another operator (tree-dyn refuses a non-commutative one). */
static trd_status memo_changes(trd_comm *comm, int32_t rank, rt_log *log, trd_op **sum,
                               double *in, double *out)
{
    char name[32] = "binomial";
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = name;
    size_t chain;
    trd_algo_find("chain", &chain);
    trd_status st = trd_reduce(comm, in, out, 8, *sum, 0, &o);
    strcpy(name, "no-such-algo");
    if (st != TRD_OK || trd_reduce(comm, in, out, 8, *sum, 0, &o) != TRD_ENOALGO)
        rt_failf(log, "memo: rank %d: a name changed in place was not checked", (int)rank);
    strcpy(name, "chain");
    st = trd_reduce(comm, in, out, 8, *sum, 0, &o);
    if (st != TRD_OK || comm->cache.key.algo != chain)
        rt_failf(log, "memo: rank %d: chain named in place ran %zu", (int)rank,
                 comm->cache.key.algo);
    st = trd_allreduce(comm, in, out, 8, *sum, &o);
    if (st != TRD_OK || trd_allreduce(comm, in, in + 1, 8, *sum, &o) != TRD_EINVAL ||
        !strstr(trd_errmsg(), "overlap"))
        rt_failf(log, "memo: rank %d: overlapping buffers passed on a remembered call",
                 (int)rank);
    strcpy(name, "tree-dyn");
    st = trd_reduce(comm, in, out, 8, *sum, 0, &o);
    uintptr_t was = (uintptr_t)*sum;
    trd_op_free(*sum);
    *sum = NULL;
    if (st == TRD_OK)
        st = op_at(was, sum);
    if (st != TRD_OK || trd_reduce(comm, in, out, 8, *sum, 0, &o) != TRD_EUNSUPPORTED)
        rt_failf(log, "memo: rank %d: another operator (%s address) took the remembered key",
                 (int)rank, (uintptr_t)*sum == was ? "same" : "other");
    return st;
}

/* A remembered call after trd_comm_run_plan, which borrows the cache and
 * leaves it empty: the call must build its plan again, and sum right. */
static trd_status memo_after_run_plan(trd_comm *comm, int32_t rank, rt_log *log,
                                      const trd_op *sum, double *in, double *out)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    trd_params p;
    trd_params_init(&p);
    p.n = 2;
    trd_plan *plan = NULL;
    double buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = in[i];
    trd_status st = trd_reduce(comm, in, out, 8, sum, 0, &o);
    if (st == TRD_OK)
        st = trd_plan_create(&plan, "binomial", &p);
    if (st == TRD_OK)
        st = trd_comm_run_plan(comm, plan, buf, 8, sum);
    if (st == TRD_OK)
        st = trd_reduce(comm, in, out, 8, sum, 0, &o);
    for (int i = 0; st == TRD_OK && rank == 0 && i < 8; i++)
        if (out[i] != 2.0 * i + 1)
            rt_failf(log, "memo: after trd_comm_run_plan, element %d = %g, not %d", i, out[i],
                     2 * i + 1);
    trd_plan_free(plan);
    return st;
}

#define MEMO_P 2 /* ranks of test_auto_memo */

/* The same arguments with other buffers: a call that takes the memo and
 * the plan of the last one must still write its own result buffer, read
 * its own input, and leave the last call's buffers alone. */
static trd_status memo_buffers(trd_comm *comm, int32_t rank, rt_log *log, const trd_op *sum)
{
    double in[2][8], out[2][8];
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    trd_status st = TRD_OK;
    for (int call = 0; call < 6 && st == TRD_OK; call++) {
        int b = call % 2; /* buffers A, B, A, ... with the same arguments */
        bool all = call >= 3;
        for (int i = 0; i < 8; i++) {
            in[b][i] = rank + i + 100.0 * call;
            out[b][i] = out[1 - b][i] = -1.0;
        }
        st = all ? trd_allreduce(comm, in[b], out[b], 8, sum, &o)
                 : trd_reduce(comm, in[b], out[b], 8, sum, 0, &o);
        bool gets = all || rank == 0;
        for (int i = 0; st == TRD_OK && i < 8; i++) {
            double want = gets ? MEMO_P * (MEMO_P - 1) / 2 + MEMO_P * (i + 100.0 * call) : -1.0;
            if (out[b][i] != want || out[1 - b][i] != -1.0)
                rt_failf(log, "memo: rank %d call %d: element %d is %g in the buffer given "
                         "(want %g), %g in the other", (int)rank, call, i, out[b][i], want,
                         out[1 - b][i]);
        }
    }
    return st;
}

static trd_status memo_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rt_log *log = arg;
    double in[17], out[17];
    trd_op *sum;
    trd_status st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    for (int i = 0; i < 17; i++)
        in[i] = rank + i;
    if (st == TRD_OK)
        st = memo_auto(comm, rank, log, sum, in, out);
    if (st == TRD_OK)
        st = memo_after_run_plan(comm, rank, log, sum, in, out);
    if (st == TRD_OK)
        st = memo_changes(comm, rank, log, &sum, in, out);
    if (st == TRD_OK)
        st = memo_buffers(comm, rank, log, sum);
    trd_op_free(sum);
    return st;
}

static void test_auto_memo(void **state)
{
    (void)state;
    rt_log log;
    rt_log_init(&log);
    trd_threads_opts topts = rt_topts(20);
    rt_result res;
    rt_run(MEMO_P, &topts, memo_rank, &log, &res);
    for (int32_t r = 0; r < MEMO_P; r++)
        TU_CHECK(res.status[r] == TRD_OK, "rank %d: %s", (int)r, res.msg[r]);
    assert_int_equal(log.failures, 0);
    rt_log_destroy(&log);
}

/* 50 calls in a row of each dynamic algorithm on the same communicators. */
static void test_repeated_dynamic(void **state)
{
    (void)state;
    const int32_t p = 7;
    const char *names[] = {"tree-dyn", "nc-tree-dyn"};
    for (int a = 0; a < 2; a++) {
        trd_comm *comm[RT_MAX_P];
        trd_threads_opts topts = rt_topts(TIMEOUT_S);
        rt_comms_create(comm, p, &topts);
        case_list l = {0};
        for (int n = 0; n < 50; n++) {
            rt_opid op = a == 0 ? (rt_opid)(n % 4) : (n % 2 ? RT_MATRIX : RT_INTERVAL);
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            rt_case k = {.algo = rt_algo(names[a]), .op = op, .count = n % 5 == 4 ? 513 : 1 + n % 9,
                         .root = (int32_t)(n % p), .allreduce = false,
                         .mode = (bufmode)(n % 3), .seed = 4242 + (uint64_t)n, .opts = o};
            push_case(&l, k);
        }
        run_cases(&l, p, comm, NULL, names[a]);
        free(l.v);
        rt_comms_free(comm, p);
    }
}

/* ---- Random delays before every send. ---- */

static void test_random_delays(void **state)
{
    (void)state;
    const char *names[] = {"tree-dyn", "nc-tree-dyn", "greedy"};
    const int32_t sp[] = {7, 5, 8};
    for (int a = 0; a < 3; a++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            trd_test_hooks hooks = rt_delays(200, seed * 7919 + (uint64_t)a);
            int32_t p = sp[seed - 1];
            case_list l = {0};
            for (int n = 0; n < 10; n++) {
                rt_opid op;
                if (a == 0)
                    op = n % 2 ? RT_I32_SUM : RT_U64_BXOR;
                else if (a == 1)
                    op = n % 2 ? RT_MATRIX : RT_INTERVAL;
                else
                    op = n % 2 ? RT_MATRIX : RT_I64_PROD;
                bool nc = rt_op_nc(op);
                trd_coll_opts o;
                trd_coll_opts_init(&o);
                rt_case k = {.algo = rt_algo(names[a]), .op = op, .count = 33 + n,
                             .root = nc ? (n % 3 ? p - 1 : 0) : (int32_t)(n % p),
                             .allreduce = a == 2 && n % 3 == 2, .mode = (bufmode)(n % 3),
                             .seed = 99 * seed + (uint64_t)n, .opts = o};
                push_case(&l, k);
            }
            run_cases(&l, p, NULL, &hooks, names[a]);
            free(l.v);
        }
}

/* ---- A model that asks for very many segments, and a tiny buffer. ----
 * With latency << d the pipelines' model picks tens of thousands of
 * segments; the runtime keeps at most one element per block, so a call of
 * one element must cost what a one-block plan costs.  Run in a child
 * process under a watchdog, so that a slow planner fails this test instead
 * of running into ctest's timeout. */

typedef struct many_seg_ctx {
    trd_op *op;
    const char *algo;
    int bad; /* ranks with a wrong result */
} many_seg_ctx;

static trd_status many_seg_rank(trd_comm *comm, int32_t rank, void *arg)
{
    many_seg_ctx *x = arg;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    o.d = 1.0;
    o.c = 1.0;
    o.latency = 1e-9;
    int32_t in[3] = {rank + 1, 7, 7}, out[3] = {0, 7, 7};
    int32_t p = trd_comm_size(comm);
    trd_status st = trd_reduce(comm, in, out, 1, x->op, p - 1, &o);
    if (st == TRD_OK && rank == p - 1 && (out[0] != p * (p + 1) / 2 || out[1] != 7))
        x->bad++;
    double t = 0;
    if (st == TRD_OK)
        st = trd_comm_predict(comm, 1, x->op, p - 1, false, &o, &t);
    return st;
}

static void test_many_segments_small_count(void **state)
{
    (void)state;
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_kind_of(a) != TRD_KIND_PIPELINED)
            continue;
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            many_seg_ctx x = {.op = rt_op_create(RT_I32_SUM), .algo = trd_algo_name(a)};
            rt_result res;
            trd_threads_opts topts = rt_topts(TIMEOUT_S);
            rt_run(4, &topts, many_seg_rank, &x, &res);
            int rc = x.bad ? 3 : 0;
            for (int32_t r = 0; r < 4; r++)
                if (res.status[r] != TRD_OK) {
                    fprintf(stderr, "%s rank %d: %s\n", x.algo, (int)r, res.msg[r]);
                    rc = 2;
                }
            trd_op_free(x.op);
            _exit(rc);
        }
        const double limit = 10.0;
        double t0 = rt_now();
        int status = 0;
        pid_t done = 0;
        while ((done = waitpid(pid, &status, WNOHANG)) == 0 && rt_now() - t0 < limit) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (done == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
        TU_CHECK(done == pid, "%s: a 1-element reduce (and its prediction) with d = c = 1, "
                 "latency = 1e-9 on 4 ranks did not finish in %.0f s", trd_algo_name(a), limit);
        TU_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                 "%s: the 1-element reduce failed (exit status %d%s)", trd_algo_name(a),
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 WIFEXITED(status) && WEXITSTATUS(status) == 3 ? ": wrong result" : "");
    }
}

/* ---- The threads wire's matching rules (white box: wire.h). ----
 * No plan of the registry ever has two messages with the same (sender,
 * tag) pending at once (checked by instrumenting the wire), so the
 * non-overtaking rule cannot be seen through trd_reduce: it is tested on
 * the wire directly.  One thread plays both ranks: posting never blocks. */

static void wire_wait(trd_wire *w, int32_t want_id, int32_t want_from)
{
    int32_t id = -9, from = -9;
    trd_status st = w->wait(w->ctx, 2.0, &id, &from);
    TU_CHECK(st == TRD_OK && id == want_id && from == want_from,
             "rank %d: wait gave status %d id %d from %d; expected id %d from %d: %s",
             (int)w->rank, (int)st, (int)id, (int)from, (int)want_id, (int)want_from,
             st == TRD_OK ? "" : trd_errmsg());
}

static void test_wire_threads_order(void **state)
{
    (void)state;
    trd_wire w[3];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, 3, &topts), TRD_OK);
    int64_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {9, 10, 11, 12};
    int64_t x[4], y[4], z[4];
    for (int sends_first = 0; sends_first < 2; sends_first++) {
        memset(x, 0, sizeof x);
        memset(y, 0, sizeof y);
        memset(z, 0, sizeof z);
        int32_t tag = 5 + sends_first;
        if (sends_first) { /* three sends of one tag wait in the mailbox */
            assert_int_equal(w[0].isend(w[0].ctx, 1, tag, a, sizeof a, 1), TRD_OK);
            assert_int_equal(w[0].isend(w[0].ctx, 1, tag, b, sizeof b, 2), TRD_OK);
            assert_int_equal(w[0].isend(w[0].ctx, 1, tag, c, sizeof c, 3), TRD_OK);
        }
        assert_int_equal(w[1].irecv(w[1].ctx, 0, tag, x, sizeof x, 10), TRD_OK);
        assert_int_equal(w[1].irecv(w[1].ctx, 0, tag, y, sizeof y, 11), TRD_OK);
        assert_int_equal(w[1].irecv(w[1].ctx, 0, tag, z, sizeof z, 12), TRD_OK);
        if (!sends_first) { /* three receives of one tag wait */
            assert_int_equal(w[0].isend(w[0].ctx, 1, tag, a, sizeof a, 1), TRD_OK);
            assert_int_equal(w[0].isend(w[0].ctx, 1, tag, b, sizeof b, 2), TRD_OK);
            assert_int_equal(w[0].isend(w[0].ctx, 1, tag, c, sizeof c, 3), TRD_OK);
        }
        for (int32_t i = 0; i < 3; i++) /* the receiver copies (threads.c) */
            wire_wait(&w[1], 10 + i, 0);
        TU_CHECK(memcmp(x, a, sizeof a) == 0 && memcmp(y, b, sizeof b) == 0 &&
                     memcmp(z, c, sizeof c) == 0,
                 "%s: messages of one sender and tag overtook each other: got %lld %lld %lld",
                 sends_first ? "sends first" : "receives first", (long long)x[0],
                 (long long)y[0], (long long)z[0]);
        for (int32_t i = 0; i < 3; i++)
            wire_wait(&w[0], 1 + i, -1);
    }
    /* tags keep messages apart; TRD_ANY_RANK takes either sender and says which */
    memset(x, 0, sizeof x);
    memset(y, 0, sizeof y);
    assert_int_equal(w[2].isend(w[2].ctx, 1, 8, a, sizeof a, 20), TRD_OK);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 9, b, sizeof b, 21), TRD_OK);
    assert_int_equal(w[1].irecv(w[1].ctx, TRD_ANY_RANK, 9, x, sizeof x, 30), TRD_OK);
    assert_int_equal(w[1].irecv(w[1].ctx, TRD_ANY_RANK, 8, y, sizeof y, 31), TRD_OK);
    wire_wait(&w[1], 30, 0);
    wire_wait(&w[1], 31, 2);
    TU_CHECK(memcmp(x, b, sizeof b) == 0 && memcmp(y, a, sizeof a) == 0,
             "tags mixed up: %lld %lld", (long long)x[0], (long long)y[0]);
    wire_wait(&w[2], 20, -1);
    wire_wait(&w[0], 21, -1);
    /* a message longer than its receive is an error naming both sizes */
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 4, x, 8, 40), TRD_OK);
    trd_status st = w[0].isend(w[0].ctx, 1, 4, a, 24, 41);
    TU_CHECK(st == TRD_EIO && strstr(trd_errmsg(), "24") && strstr(trd_errmsg(), "8"),
             "24 bytes into 8: status %d: %s", (int)st, trd_errmsg());
    for (int r = 0; r < 3; r++)
        w[r].free(w[r].ctx);
    /* nothing posted: the wait times out (no hang) */
    assert_int_equal(trd_wire_threads_create(w, 3, &topts), TRD_OK);
    int32_t id, from;
    double t0 = rt_now();
    st = w[2].wait(w[2].ctx, 0.05, &id, &from);
    TU_CHECK(st == TRD_ETIMEDOUT && strstr(trd_errmsg(), "deadline") && rt_now() - t0 < 1.0,
             "empty wait: status %d after %.3f s: %s", (int)st, rt_now() - t0, trd_errmsg());
    for (int r = 0; r < 3; r++)
        w[r].free(w[r].ctx);
}

static trd_status count_consumed(void *arg, const void *data, size_t bytes)
{
    (void)data;
    *(size_t *)arg += bytes;
    return TRD_OK;
}

/* claim_recv (wire.h) takes what a send posted now would match: the first
 * posted receive of that sender and tag, and only if it is one of exactly
 * the send's size into a buffer; isend_claimed completes both ends. */
static void test_wire_threads_claim(void **state)
{
    (void)state;
    trd_wire w[2];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, 2, &topts), TRD_OK);
    int64_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, x[4] = {0}, y[4] = {0};
    void *dst = &dst;
    int32_t h = -1;
    assert_int_equal(w[0].claim_recv(w[0].ctx, 1, 3, sizeof a, &dst, &h), TRD_OK);
    TU_CHECK(dst == NULL, "claimed a receive nobody posted");
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 3, x, sizeof x, 10), TRD_OK);
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 3, y, sizeof y, 11), TRD_OK);
    assert_int_equal(w[0].claim_recv(w[0].ctx, 1, 3, sizeof a, &dst, &h), TRD_OK);
    TU_CHECK(dst == (void *)x, "claimed %p, not the first receive posted (%p)", dst, (void *)x);
    memcpy(dst, a, sizeof a);
    assert_int_equal(w[0].isend_claimed(w[0].ctx, h, 1), TRD_OK);
    wire_wait(&w[1], 10, 0);
    wire_wait(&w[0], 1, -1);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 3, b, sizeof b, 2), TRD_OK); /* the second */
    wire_wait(&w[1], 11, 0);
    wire_wait(&w[0], 2, -1);
    TU_CHECK(memcmp(x, a, sizeof a) == 0 && memcmp(y, b, sizeof b) == 0,
             "claimed and sent messages mixed up: %lld %lld", (long long)x[0], (long long)y[0]);
    /* a receive of another size, or a consuming one, is left to the send */
    size_t consumed = 0;
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 4, x, sizeof x / 2, 12), TRD_OK);
    assert_int_equal(w[1].irecv_consume(w[1].ctx, 0, 5, sizeof a, 13, count_consumed, &consumed),
                     TRD_OK);
    for (int32_t tag = 4; tag <= 5; tag++) {
        assert_int_equal(w[0].claim_recv(w[0].ctx, 1, tag, sizeof a, &dst, &h), TRD_OK);
        TU_CHECK(dst == NULL, "tag %d: claimed a receive of another kind or size", (int)tag);
    }
    assert_int_equal(w[0].isend(w[0].ctx, 1, 4, a, sizeof a / 2, 3), TRD_OK);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 5, a, sizeof a, 4), TRD_OK);
    wire_wait(&w[1], 12, 0);
    wire_wait(&w[1], 13, 0);
    TU_CHECK(consumed == sizeof a, "the consuming receive took %zu bytes", consumed);
    TU_CHECK(trd_wire_threads_claims(&w[0]) == 1 && trd_wire_threads_claims(&w[1]) == 0,
             "claims counted: %lld and %lld", (long long)trd_wire_threads_claims(&w[0]),
             (long long)trd_wire_threads_claims(&w[1]));
    for (int r = 0; r < 2; r++)
        w[r].free(w[r].ctx);
}

/* ---- Calibrate and predict. ---- */

typedef struct calib_ctx {
    trd_op *op;
    int64_t count;
    trd_coll_opts got[RT_MAX_P];
} calib_ctx;

static trd_status calibrate_rank(trd_comm *comm, int32_t rank, void *arg)
{
    calib_ctx *x = arg;
    trd_coll_opts_init(&x->got[rank]);
    x->got[rank].algo = "greedy";
    return trd_comm_calibrate(comm, x->op, x->count, &x->got[rank]);
}

static void test_calibrate_predict(void **state)
{
    (void)state;
    const int32_t sp[] = {1, 2, 4, 7};
    calib_ctx x = {.op = rt_op_create(RT_F64_SUM), .count = 1000};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        int32_t p = sp[i];
        trd_comm *comm[RT_MAX_P];
        trd_threads_opts topts = rt_topts(TIMEOUT_S);
        rt_comms_create(comm, p, &topts);
        rt_result res;
        rt_run_on(comm, p, calibrate_rank, &x, &res);
        for (int32_t r = 0; r < p; r++) {
            TU_CHECK(res.status[r] == TRD_OK, "calibrate p=%d rank %d: %s", (int)p, (int)r,
                     res.msg[r]);
            const trd_coll_opts *o = &x.got[r];
            TU_CHECK(isfinite(o->d) && isfinite(o->c) && isfinite(o->latency) && o->d >= 0 &&
                         o->c >= 0 && o->latency >= 0 && o->latency <= o->d,
                     "calibrate p=%d rank %d: d=%g c=%g latency=%g", (int)p, (int)r, o->d, o->c,
                     o->latency);
            TU_CHECK(memcmp(&o->d, &x.got[0].d, sizeof o->d) == 0 &&
                         memcmp(&o->c, &x.got[0].c, sizeof o->c) == 0 &&
                         memcmp(&o->latency, &x.got[0].latency, sizeof o->latency) == 0,
                     "calibrate p=%d: rank %d has d=%.17g c=%.17g latency=%.17g, rank 0 "
                     "d=%.17g c=%.17g latency=%.17g",
                     (int)p, (int)r, o->d, o->c, o->latency, x.got[0].d, x.got[0].c,
                     x.got[0].latency);
            TU_CHECK(strcmp(o->algo, "greedy") == 0, "calibrate changed opts.algo");
            TU_CHECK(o->parallelism >= 1 && o->parallelism <= p &&
                         memcmp(&o->parallelism, &x.got[0].parallelism, sizeof(double)) == 0,
                     "calibrate p=%d rank %d: parallelism %g (rank 0: %g), need 1..p on all",
                     (int)p, (int)r, o->parallelism, x.got[0].parallelism);
        }
        if (p >= 2)
            TU_CHECK(x.got[0].d > 0, "calibrate p=%d: d = %g (a transfer takes time)", (int)p,
                     x.got[0].d);
        /* predict (local: here, on rank 0's and the last rank's handles) */
        for (size_t a = 0; a < trd_algo_count(); a++) {
            trd_algo_kind kind = trd_algo_kind_of(a);
            trd_coll_opts o = x.got[0];
            o.algo = trd_algo_name(a);
            if (trd_algo_uses_costs(a))
                continue; /* heterogeneous costs, not a calibrated latency: test_hetero */
            for (int all = 0; all < 2; all++) {
                if ((kind == TRD_KIND_DYNAMIC && all) || (kind == TRD_KIND_EXCHANGE && !all))
                    continue;
                for (int64_t count = 1; count <= 10000; count *= 100) {
                    double t = NAN;
                    trd_comm *c = comm[all ? p - 1 : 0];
                    trd_status st = trd_comm_predict(c, count, x.op, p - 1, all, &o, &t);
                    if (st == TRD_EUNSUPPORTED && rt_plan_refuses(a, p, false))
                        continue; /* star, star-reduce-bcast: p is no n! */
                    if (rt_not_yet(st, trd_errmsg())) {
                        char note[160];
                        snprintf(note, sizeof note, "skipped %s: %s", o.algo, trd_errmsg());
                        rt_note_once(note);
                        continue;
                    }
                    TU_CHECK(st == TRD_OK, "predict %s p=%d count=%lld %s: %s", o.algo, (int)p,
                             (long long)count, all ? "allreduce" : "reduce", trd_errmsg());
                    TU_CHECK(isfinite(t) && (p == 1 ? t >= 0 : t > 0),
                             "predict %s p=%d count=%lld %s: %g", o.algo, (int)p,
                             (long long)count, all ? "allreduce" : "reduce", t);
                }
            }
            /* the refusals of the call itself */
            if (kind == TRD_KIND_DYNAMIC || kind == TRD_KIND_EXCHANGE) {
                double t = 1234.5;
                trd_status st = trd_comm_predict(comm[0], 10, x.op, 0,
                                                 kind == TRD_KIND_DYNAMIC, &o, &t);
                TU_CHECK(st == TRD_EUNSUPPORTED, "predict %s refused kind: status %d", o.algo,
                         (int)st);
            }
        }
        rt_comms_free(comm, p);
    }
    trd_op_free(x.op);
}

/* trd_coll_opts.parallelism k (predict.c): with the plan's work W
 * (trd_plan_work, checked on closed forms) and makespan T on n ranks, the
 * prediction is T + (W - T)(n/k - 1)/(n - 1) when W > T: T itself for
 * k = 0 or k >= n, W for k = 1; and auto then stops preferring a pipeline
 * whose n - 1 stages the platform cannot run at once. */
static double predict_k(trd_comm *comm, const char *algo, int64_t count, const trd_op *op,
                        trd_coll_opts o, double k)
{
    double t = NAN;
    o.algo = algo;
    o.parallelism = k;
    TU_CHECK(trd_comm_predict(comm, count, op, 0, false, &o, &t) == TRD_OK,
             "predict %s k=%g: %s", algo, k, trd_errmsg());
    return t;
}

static void test_parallelism_predict(void **state)
{
    (void)state;
    /* work of a segmented pipeline: n - 1 links, m segments each, every
     * segment sent and combined once per link */
    trd_params pp;
    trd_params_init(&pp);
    pp.n = 5, pp.d = 2, pp.c = 1, pp.latency = 0.5, pp.flight = 0.2, pp.combine_fixed = 0.25;
    pp.segments = 4;
    trd_plan *plan;
    TU_CHECK(trd_plan_create(&plan, "pipeline", &pp) == TRD_OK, "pipeline: %s", trd_errmsg());
    /* a send: latency - flight + copy + the flight up to the copy's length */
    double want = 4 * 4 * ((0.5 - 0.2) + (2 - 0.5) / 4 + 0.2 + 0.25 + (1 - 0.25) / 4);
    TU_CHECK(fabs(trd_plan_work(plan) - want) < 1e-12, "pipeline work %.17g, want %.17g",
             trd_plan_work(plan), want);
    trd_plan_free(plan);
    /* small messages: of the flight, only the copy's length counts */
    trd_params_init(&pp);
    pp.n = 4, pp.d = 1.1, pp.c = 0.5, pp.latency = 1, pp.flight = 0.8;
    TU_CHECK(trd_plan_create(&plan, "flat", &pp) == TRD_OK, "flat: %s", trd_errmsg());
    want = 3 * ((1 - 0.8) + 0.1 + 0.1 + 0.5);
    TU_CHECK(fabs(trd_plan_work(plan) - want) < 1e-12, "flat work %.17g, want %.17g",
             trd_plan_work(plan), want);
    trd_plan_free(plan);

    const int32_t p = 8;
    trd_comm *comm[RT_MAX_P];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    rt_comms_create(comm, p, &topts);
    trd_op *op = rt_op_create(RT_F64_SUM);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.d = 1e-3, o.c = 1e-3, o.latency = 1e-6, o.flight = 0.4e-6;
    o.measure_model = false;
    const int64_t small = 1000; /* one segment: binomial's W = 7 (d + c) */
    double t = predict_k(comm[0], "binomial", small, op, o, 0.0);
    double w = 7 * (o.d + o.c);
    TU_CHECK(predict_k(comm[0], "binomial", small, op, o, 8.0) == t &&
                 predict_k(comm[0], "binomial", small, op, o, 100.0) == t,
             "k >= n must leave the makespan %g", t);
    TU_CHECK(fabs(t - 3 * (o.d + o.c)) < 1e-9, "binomial makespan %g", t);
    double k1 = predict_k(comm[0], "binomial", small, op, o, 1.0);
    TU_CHECK(fabs(k1 - w) < 1e-12, "k = 1: %.17g, want the work %.17g", k1, w);
    double k2 = predict_k(comm[0], "binomial", small, op, o, 2.0);
    TU_CHECK(fabs(k2 - (t + (w - t) * 3.0 / 7.0)) < 1e-12, "k = 2: %.17g", k2);
    /* auto: a pipeline wins with a core per rank, not with one for all */
    const int64_t big = 100000;
    trd_candidate cand[64];
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        o.parallelism = pass ? 1.0 : 0.0;
        TU_CHECK(trd_comm_explain(comm[0], big, op, 0, false, &o, cand, &n) == TRD_OK,
                 "explain: %s", trd_errmsg());
        bool piped = strstr(cand[0].algo, "pipeline") != NULL;
        TU_CHECK(piped == !pass, "k = %g: auto's first choice is %s", o.parallelism,
                 cand[0].algo);
    }
    /* ties (to the picosecond) go to static plans before dynamic ones */
    trd_coll_opts_init(&o);
    o.d = 1e-3, o.c = 1e-3;
    o.measure_model = false;
    TU_CHECK(trd_comm_explain(comm[0], 1, op, 0, false, &o, cand, &n) == TRD_OK, "explain: %s",
             trd_errmsg());
    size_t ties = 0;
    for (size_t i = 1; i < n && cand[i].status == TRD_OK; i++) {
        size_t ia = 0, ib = 0;
        if (nearbyint(cand[i - 1].predicted * 1e12) != nearbyint(cand[i].predicted * 1e12))
            continue;
        TU_CHECK(trd_algo_find(cand[i - 1].algo, &ia) == TRD_OK &&
                     trd_algo_find(cand[i].algo, &ib) == TRD_OK, "find");
        bool da = trd_algo_kind_of(ia) == TRD_KIND_DYNAMIC;
        bool db = trd_algo_kind_of(ib) == TRD_KIND_DYNAMIC;
        ties += da != db;
        TU_CHECK(!da || db, "tie: dynamic %s before static %s", cand[i - 1].algo, cand[i].algo);
    }
    TU_CHECK(ties > 0, "no tie between a static and a dynamic algorithm: the check is vacuous");
    o.algo = "binomial";
    o.parallelism = NAN;
    TU_CHECK(trd_comm_predict(comm[0], small, op, 0, false, &o, &t) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "parallelism"),
             "parallelism NaN: %s", trd_errmsg());
    trd_op_free(op);
    rt_comms_free(comm, p);
}

/* The calibrated model drives real calls of every algorithm (pipelines
 * then choose their segments from measured numbers). */
typedef struct calib_run_ctx {
    trd_op *op;
    rt_log log;
    atomic_int verified; /* results checked, over all ranks */
} calib_run_ctx;

static trd_status calibrated_rank(trd_comm *comm, int32_t rank, void *arg)
{
    calib_run_ctx *x = arg;
    int32_t p = trd_comm_size(comm);
    const int64_t count = 2000;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    trd_status st = trd_comm_calibrate(comm, x->op, count, &o);
    if (st != TRD_OK)
        return st;
    int32_t *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out),
            *want = malloc(count * sizeof *want);
    for (size_t a = 0; st == TRD_OK && a < trd_algo_count(); a++) {
        trd_algo_kind kind = trd_algo_kind_of(a);
        o.algo = trd_algo_name(a);
        bool all = kind == TRD_KIND_EXCHANGE;
        if ((all && rt_plan_refuses(a, p, false)) || trd_algo_uses_costs(a))
            continue; /* star, star-reduce-bcast: p is no n!; hetero-*: need costs */
        rt_fill(RT_I32_SUM, in, count, rank, a);
        memset(out, RT_CANARY, count * sizeof *out);
        st = all ? trd_allreduce(comm, in, out, count, x->op, &o)
                 : trd_reduce(comm, in, out, count, x->op, p / 2, &o);
        if (rt_not_yet(st, trd_errmsg())) {
            st = TRD_OK;
            continue;
        }
        if (st == TRD_OK && (all || rank == p / 2)) {
            rt_expected(RT_I32_SUM, want, count, p, a);
            if (memcmp(out, want, count * sizeof *out) != 0)
                rt_failf(&x->log, "calibrated %s p=%d rank %d: wrong result", o.algo, (int)p,
                         (int)rank);
            atomic_fetch_add(&x->verified, 1);
        }
    }
    free(in);
    free(out);
    free(want);
    return st;
}


/* Runs fn on p fresh communicators (the test deadline; random delays of
 * up to delay_us before every send); every rank must return TRD_OK. */
static void run_all_ok(int32_t p, rt_rank_fn fn, void *ctx, const char *what, double delay_us)
{
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    trd_test_hooks hooks = rt_delays(delay_us, 1);
    rt_result res;
    rt_run_hooked(p, &topts, &hooks, fn, ctx, &res);
    for (int32_t r = 0; r < p; r++)
        TU_CHECK(res.status[r] == TRD_OK, "%s: rank %d: %s", what, (int)r, res.msg[r]);
}

/* trd_coll_opts.measure_model (trd_coll_opts_init's default): auto ranks
 * under the communicator's own profile of the operator, measured by the
 * first call that needs it - not by a refused call, nor a reproducible
 * one - the same on every rank, kept for TRD_COMM_PROFILES operators,
 * and exactly the model trd_profile_apply gives from it. */
#define MEASURED_P 3
#define MEASURED_OPS (TRD_COMM_PROFILES + 1)

typedef struct measured_ctx {
    rt_log log;
    trd_op *op[MEASURED_OPS];
    trd_profile kept[MEASURED_P]; /* op[0]'s, as each rank keeps it */
} measured_ctx;

/* The slot of op's profile, or -1; *n the operators kept. */
static int profile_slot(const trd_comm *comm, const trd_op *op, int *n)
{
    int at = -1;
    *n = 0;
    for (int i = 0; i < TRD_COMM_PROFILES; i++) {
        *n += comm->profiles.op_serial[i] != 0u;
        if (comm->profiles.op_serial[i] == trd_op_serial(op))
            at = i;
    }
    return at;
}

/* What a refused or a reproducible call must leave: no profile. */
static void check_unmeasured(trd_comm *comm, measured_ctx *x, int32_t rank, const char *after)
{
    int n;
    profile_slot(comm, x->op[0], &n);
    if (n != 0)
        rt_failf(&x->log, "measured: rank %d: %d profiles after %s", (int)rank, n, after);
}

/* The untouched calls first: a reproducible auto call and two refused ones. */
static trd_status measured_untouched(trd_comm *comm, int32_t rank, measured_ctx *x,
                                     const double *in, double *out)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    o.reproducible = true;
    trd_status st = trd_allreduce(comm, in, out, 4, x->op[0], &o);
    check_unmeasured(comm, x, rank, "a reproducible call");
    o.reproducible = false;
    trd_candidate c[64];
    size_t n;
    if (st == TRD_OK && (trd_reduce(comm, in, out, 4, x->op[0], MEASURED_P, &o) != TRD_EINVAL ||
                         trd_comm_explain(comm, 4, x->op[0], -1, false, &o, c, &n) != TRD_EINVAL))
        rt_failf(&x->log, "measured: rank %d: a bad root was not refused", (int)rank);
    check_unmeasured(comm, x, rank, "refused calls");
    return st;
}

/* auto's ranking under the kept profile equals explain's under the model
 * trd_profile_apply makes of it: the same first candidate and time. */
static void check_applied(trd_comm *comm, int32_t rank, measured_ctx *x, const trd_profile *p)
{
    trd_candidate measured[64], given[64];
    size_t n;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    trd_status st = trd_comm_explain(comm, 4, x->op[0], 0, true, &o, measured, &n);
    if (st == TRD_OK && (st = trd_profile_apply(p, 4, sizeof(double), &o)) == TRD_OK &&
        o.measure_model)
        rt_failf(&x->log, "measured: trd_profile_apply left measure_model set");
    if (st == TRD_OK)
        st = trd_comm_explain(comm, 4, x->op[0], 0, true, &o, given, &n);
    const trd_comm_key *key = &comm->memo.key; /* the plan auto ran: under that model too */
    const char *ran = trd_algo_entry(key->algo)->name;
    if (st == TRD_OK && (key->params.d != o.d || key->params.c != o.c ||
                         key->params.latency != o.latency))
        rt_failf(&x->log, "measured: rank %d: auto's plan has d %g, c %g, latency %g; the "
                 "profile gives %g, %g, %g", (int)rank, key->params.d, key->params.c,
                 key->params.latency, o.d, o.c, o.latency);
    if (st != TRD_OK || strcmp(measured[0].algo, given[0].algo) ||
        memcmp(&measured[0].predicted, &given[0].predicted, sizeof(double)) ||
        strcmp(ran, measured[0].algo))
        rt_failf(&x->log, "measured: rank %d: auto ran %s; ranked first %s (%g s), under the "
                 "applied profile %s (%g s)", (int)rank, ran, measured[0].algo,
                 measured[0].predicted, given[0].algo, given[0].predicted);
}

static trd_status measured_rank(trd_comm *comm, int32_t rank, void *arg)
{
    measured_ctx *x = arg;
    double in[4], out[4];
    for (int i = 0; i < 4; i++)
        in[i] = rank + i;
    trd_status st = measured_untouched(comm, rank, x, in, out);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    if (st == TRD_OK)
        st = trd_allreduce(comm, in, out, 4, x->op[0], &o);
    for (int i = 0; st == TRD_OK && i < 4; i++)
        if (out[i] != MEASURED_P * (MEASURED_P - 1) / 2 + MEASURED_P * i)
            rt_failf(&x->log, "measured: rank %d: element %d is %g", (int)rank, i, out[i]);
    int n, at = profile_slot(comm, x->op[0], &n);
    if (st == TRD_OK && (at < 0 || n != 1))
        rt_failf(&x->log, "measured: rank %d: %d profiles, op 0's at %d", (int)rank, n, at);
    if (st != TRD_OK || at < 0)
        return st;
    x->kept[rank] = comm->profiles.profile[at];
    check_applied(comm, rank, x, &x->kept[rank]);
    for (int k = 1; k < MEASURED_OPS && st == TRD_OK; k++)
        st = trd_allreduce(comm, in, out, 2, x->op[k], &o);
    at = profile_slot(comm, x->op[0], &n);
    if (st == TRD_OK && (at >= 0 || n != TRD_COMM_PROFILES))
        rt_failf(&x->log, "measured: rank %d: after %d operators, %d profiles and op 0's at %d "
                 "(want %d, forgotten)", (int)rank, MEASURED_OPS, n, at, TRD_COMM_PROFILES);
    return st;
}

static void test_measured_model(void **state)
{
    (void)state;
    measured_ctx x = {0};
    rt_log_init(&x.log);
    for (int k = 0; k < MEASURED_OPS; k++)
        x.op[k] = rt_op_create(RT_F64_SUM);
    run_all_ok(MEASURED_P, measured_rank, &x, "measured", 0);
    rt_log_check(&x.log, "measured");
    const trd_profile *p = &x.kept[0];
    TU_CHECK(p->latency > 0 && p->per_byte > 0 && isfinite(p->latency) &&
                 isfinite(p->per_byte) && isfinite(p->per_element) && p->parallelism > 0,
             "measured: latency %g, per byte %g, per element %g, parallelism %g", p->latency,
             p->per_byte, p->per_element, p->parallelism);
    for (int32_t r = 1; r < MEASURED_P; r++)
        TU_CHECK(!memcmp(&x.kept[r], p, sizeof *p), "measured: rank %d keeps another profile",
                 (int)r);
    rt_log_destroy(&x.log);
    for (int k = 0; k < MEASURED_OPS; k++)
        trd_op_free(x.op[k]);
}

static void test_calibrated_runs(void **state)
{
    (void)state;
    calib_run_ctx x = {.op = rt_op_create(RT_I32_SUM)};
    rt_log_init(&x.log);
    run_all_ok(5, calibrated_rank, &x, "calibrated runs", 0);
    rt_log_check(&x.log, "calibrated runs");
    int want = 0; /* one result per static reduce (root 2), five per allreduce */
    for (size_t a = 0; a < trd_algo_count(); a++)
        want += trd_algo_uses_costs(a)                  ? 0
                : trd_algo_kind_of(a) != TRD_KIND_EXCHANGE ? 1
                : rt_plan_refuses(a, 5, false)            ? 0
                                                          : 5;
    TU_CHECK(atomic_load(&x.verified) == want, "calibrated runs: %d results checked, expected %d",
             atomic_load(&x.verified), want);
    rt_log_destroy(&x.log);
    trd_op_free(x.op);
}

/* ---- Combines written into the peer's result (exec.c, wire.h claim_recv) ---- */

typedef struct claim_ctx {
    const char *algo;
    trd_op *op;
    int64_t count;
    const void *expected;
    atomic_llong claims;
    rt_log log;
} claim_ctx;

static trd_status claimed_rank(trd_comm *comm, int32_t rank, void *arg)
{
    claim_ctx *x = arg;
    size_t bytes = (size_t)x->count * sizeof(int32_t);
    int32_t *in = malloc(bytes), *out = malloc(bytes), *copy = malloc(bytes);
    trd_status st = in && out && copy ? rt_fill(RT_I32_SUM, in, x->count, rank, 7) : TRD_ENOMEM;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    if (st == TRD_OK)
        memcpy(copy, in, bytes);
    int64_t before = trd_wire_threads_claims(&comm->wire);
    for (int call = 0; call < 3 && st == TRD_OK; call++) {
        memset(out, 0xff, bytes);
        if ((st = trd_allreduce(comm, in, out, x->count, x->op, &o)) != TRD_OK)
            break;
        int64_t at = rt_first_diff(out, x->expected, x->count, sizeof *out);
        if (at >= 0 || memcmp(in, copy, bytes) != 0)
            rt_failf(&x->log, "%s, %lld elements, rank %d, call %d: %s at element %lld",
                     x->algo, (long long)x->count, (int)rank, call,
                     at >= 0 ? "wrong result" : "sendbuf changed", (long long)at);
    }
    atomic_fetch_add(&x->claims, trd_wire_threads_claims(&comm->wire) - before);
    free(in);
    free(out);
    free(copy);
    return st;
}

/* One case of test_claimed_allreduce: p ranks, count int32, random send
 * delays of up to delay_us. */
static void claimed_case(const char *algo, int64_t count, int32_t p, double delay_us)
{
    claim_ctx x = {.algo = algo, .op = rt_op_create(RT_I32_SUM), .count = count};
    int32_t *expected = malloc((size_t)count * sizeof *expected);
    assert_non_null(expected);
    assert_int_equal(rt_expected(RT_I32_SUM, expected, count, p, 7), TRD_OK);
    x.expected = expected;
    atomic_init(&x.claims, 0);
    rt_log_init(&x.log);
    char what[96];
    snprintf(what, sizeof what, "%s p=%d count %lld delays %g us", algo, (int)p,
             (long long)count, delay_us);
    run_all_ok(p, claimed_rank, &x, what, delay_us);
    rt_log_check(&x.log, what);
    if (p == 2 && delay_us == 0)
        TU_CHECK(atomic_load(&x.claims) > 0, "%s: no combine was written into the peer's "
                 "result", what);
    rt_log_destroy(&x.log);
    free(expected);
    trd_op_free(x.op);
}

/* ring and rabenseifner allreduces whose combines go straight into the
 * peer's result as well: small and streamed (>= 4 MiB) buffers, with and
 * without random delays before every send (a claim then may find no
 * receive posted, and the SEND carries the block); every result checked
 * against the fold, the input unchanged.  On 2 ranks every combine has a
 * producer, so without delays claims must happen. */
static void test_claimed_allreduce(void **state)
{
    (void)state;
    static const char *const algos[] = {"ring", "rabenseifner"};
    static const int64_t sizes[] = {4099, 1200000};
    for (size_t a = 0; a < 2; a++)
        for (size_t k = 0; k < 2; k++)
            for (int32_t p = 2; p <= 4; p++) {
                claimed_case(algos[a], sizes[k], p, 0);
                claimed_case(algos[a], sizes[k], p, 300);
            }
}

/* ---- auto with tune (src/runtime/tune.c) ---- */

#define TUNE_P 4
#define TUNE_COUNT 8
#define TUNE_SLEEP_NS 3000000L /* per combine call, whatever its size */

/* A sum of doubles that sleeps 3 ms per call: an operator whose cost the
 * model below (cost per element) gets wrong on purpose. */
static void sleepy_sum(const void *in, void *inout, int64_t count, void *ctx)
{
    (void)ctx;
    const double *a = in;
    double *b = inout;
    for (int64_t i = 0; i < count; i++)
        b[i] += a[i];
    struct timespec ts = {0, TUNE_SLEEP_NS};
    nanosleep(&ts, NULL);
}

typedef struct tune_ctx {
    rt_log log;
    trd_op *op;
    trd_coll_opts opts;
    const char *model_first[TUNE_P], *chosen[TUNE_P], *after[TUNE_P];
    double chosen_s[TUNE_P], model_first_s[TUNE_P];
    int timed[TUNE_P], timed_before[TUNE_P];
} tune_ctx;

static int count_timed(const trd_candidate *c, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += !isnan(c[i].measured);
    return k;
}

/* n allreduces with auto, each result checked (small integers: exact). */
static trd_status tune_calls(trd_comm *comm, int32_t rank, tune_ctx *x, int n)
{
    double in[TUNE_COUNT], out[TUNE_COUNT];
    trd_status st = TRD_OK;
    for (int k = 0; k < n && st == TRD_OK; k++) {
        for (int i = 0; i < TUNE_COUNT; i++)
            in[i] = rank + i + k;
        st = trd_allreduce(comm, in, out, TUNE_COUNT, x->op, &x->opts);
        for (int i = 0; st == TRD_OK && i < TUNE_COUNT; i++)
            if (out[i] != TUNE_P * (TUNE_P - 1) / 2 + TUNE_P * (double)(i + k))
                rt_failf(&x->log, "tune: rank %d call %d: element %d is %g", (int)rank, k, i,
                         out[i]);
    }
    return st;
}

static trd_status explain_tuned(trd_comm *comm, tune_ctx *x, trd_candidate *c, size_t *n)
{
    trd_coll_opts o = x->opts;
    return trd_comm_explain(comm, TUNE_COUNT, x->op, 0, true, &o, c, n);
}

static trd_status tune_rank(trd_comm *comm, int32_t rank, void *arg)
{
    tune_ctx *x = arg;
    trd_candidate c[64];
    size_t n;
    trd_status st = explain_tuned(comm, x, c, &n);
    if (st != TRD_OK)
        return st;
    x->model_first[rank] = c[0].algo;
    x->timed_before[rank] = count_timed(c, n);
    st = tune_calls(comm, rank, x, x->opts.tune * TRD_TUNE_CALLS);
    if (st == TRD_OK)
        st = explain_tuned(comm, x, c, &n);
    if (st != TRD_OK)
        return st;
    x->chosen[rank] = c[0].algo;
    x->chosen_s[rank] = c[0].measured;
    x->timed[rank] = count_timed(c, n);
    for (size_t i = 0; i < n; i++)
        if (c[i].algo == x->model_first[rank])
            x->model_first_s[rank] = c[i].measured;
    for (size_t i = 1; i < n; i++)
        if (!isnan(c[i].measured) && c[i].measured < c[0].measured)
            rt_failf(&x->log, "tune: rank %d keeps %s (%g s) but %s took %g s", (int)rank,
                     c[0].algo, c[0].measured, c[i].algo, c[i].measured);
    st = tune_calls(comm, rank, x, 3); /* settled: no more timing */
    if (st == TRD_OK)
        st = explain_tuned(comm, x, c, &n);
    x->after[rank] = st == TRD_OK ? c[0].algo : NULL;
    return st;
}

/* The model (cost per element, combines nearly free at 8 elements) puts
 * pipeline first; the operator costs 3 ms per call, so pipeline's many
 * segment combines make it the slowest: tuning must time the model's 3
 * best and keep another, the same on every rank, and stay with it. */
static void test_tune(void **state)
{
    (void)state;
    tune_ctx x = {0};
    rt_log_init(&x.log);
    TU_CHECK(trd_op_user(&x.op, sleepy_sum, sizeof(double), true, NULL) == TRD_OK, "op: %s",
             trd_errmsg());
    trd_coll_opts_init(&x.opts);
    x.opts.algo = "auto";
    x.opts.d = 1e-3;
    x.opts.c = 1.0;
    x.opts.measure_model = false;
    x.opts.tune = 3;
    run_all_ok(TUNE_P, tune_rank, &x, "tune", 0);
    rt_log_check(&x.log, "tune");
    TU_CHECK(!strcmp(x.model_first[0], "pipeline"), "tune: the model's first is %s, the test "
             "needs pipeline", x.model_first[0]);
    for (int32_t r = 0; r < TUNE_P; r++) {
        TU_CHECK(x.timed_before[r] == 0 && x.timed[r] == 3, "tune: rank %d: %d timed before, "
                 "%d after (want 0 and 3)", (int)r, x.timed_before[r], x.timed[r]);
        TU_CHECK(x.chosen[r] == x.chosen[0] && x.after[r] == x.chosen[0],
                 "tune: rank %d keeps %s then %s, rank 0 %s", (int)r, x.chosen[r],
                 x.after[r] ? x.after[r] : "(failed)", x.chosen[0]);
        TU_CHECK(x.chosen_s[r] == x.chosen_s[0], "tune: the ranks disagree on the times");
    }
    TU_CHECK(strcmp(x.chosen[0], "pipeline") && x.chosen_s[0] < x.model_first_s[0],
             "tune: kept %s (%g s), pipeline took %g s", x.chosen[0], x.chosen_s[0],
             x.model_first_s[0]);
    /* reproducible mode ignores tune: the model's first, untimed */
    trd_comm *comm[1];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    rt_comms_create(comm, 1, &topts);
    trd_candidate c[64];
    size_t n;
    x.opts.reproducible = true;
    TU_CHECK(trd_comm_explain(comm[0], TUNE_COUNT, x.op, 0, true, &x.opts, c, &n) == TRD_OK &&
                 count_timed(c, n) == 0,
             "tune, reproducible: %s", trd_errmsg());
    rt_comms_free(comm, 1);
    trd_op_free(x.op);
    rt_log_destroy(&x.log);
}

/* Tuning times distinct programs (comm.c, distinct_plans): where some of
 * the model's best candidates build the same programs (several planners
 * build the binomial tree at p = 4), only the best-ranked of them is
 * timed and the next different ones take the others' places. */
#define DISTINCT_COUNT 1024

typedef struct distinct_ctx {
    trd_op *op;
    trd_coll_opts opts;
} distinct_ctx;

/* Whether algorithms a and b run the same programs for a reduce of
 * DISTINCT_COUNT elements under o (false when either has no plan). */
static bool same_call_plans(trd_comm *comm, const distinct_ctx *x, const char *a, const char *b)
{
    trd_coll_opts oa = x->opts, ob = x->opts;
    trd_comm_key key;
    trd_plan *pa = NULL, *pb = NULL;
    oa.algo = a;
    ob.algo = b;
    oa.tune = ob.tune = 0;
    bool same =
        trd_comm_plan_call(comm, DISTINCT_COUNT, x->op, 0, false, &oa, &key, &pa) == TRD_OK &&
        trd_comm_plan_call(comm, DISTINCT_COUNT, x->op, 0, false, &ob, &key, &pb) == TRD_OK &&
        pa && pb && trd_plan_same_programs(pa, pb);
    trd_plan_free(pa);
    trd_plan_free(pb);
    return same;
}

/* The model's ranking (untuned): the first `want` runnable candidates,
 * *dups of them repeating an earlier one's programs, and in want_set the
 * first `want` runnable ones with distinct programs. */
static void first_candidates(trd_comm *comm, const distinct_ctx *x, int want, int *dups,
                             const char **want_set)
{
    trd_candidate c[64];
    size_t n;
    trd_coll_opts o = x->opts;
    o.tune = 0;
    TU_CHECK(trd_comm_explain(comm, DISTINCT_COUNT, x->op, 0, false, &o, c, &n) == TRD_OK,
             "explain: %s", trd_errmsg());
    const char *first[8];
    int nfirst = 0, nset = 0;
    *dups = 0;
    for (size_t i = 0; i < n && (nfirst < want || nset < want); i++) {
        if (c[i].status != TRD_OK || !isfinite(c[i].predicted))
            continue;
        bool dup = false;
        for (int k = 0; k < nfirst && !dup; k++)
            dup = same_call_plans(comm, x, first[k], c[i].algo);
        if (nfirst < want) {
            *dups += dup;
            first[nfirst++] = c[i].algo;
        }
        bool dup_set = false;
        for (int k = 0; k < nset && !dup_set; k++)
            dup_set = same_call_plans(comm, x, want_set[k], c[i].algo);
        if (!dup_set && nset < want)
            want_set[nset++] = c[i].algo;
    }
}

static trd_status distinct_rank(trd_comm *comm, int32_t rank, void *arg)
{
    distinct_ctx *x = arg;
    double in[DISTINCT_COUNT], out[DISTINCT_COUNT];
    trd_status st = TRD_OK;
    for (int i = 0; i < DISTINCT_COUNT; i++)
        in[i] = rank + i;
    for (int k = 0; k < x->opts.tune * TRD_TUNE_CALLS && st == TRD_OK; k++)
        st = trd_reduce(comm, in, out, DISTINCT_COUNT, x->op, 0, &x->opts);
    return st;
}

/* The tuning rounds (tune.c), driven by hand on one rank with three
 * made-up candidates: each round runs every candidate once, starting one
 * candidate later than the round before, and the first round's times are
 * not compared.  Round 0 is slow for all (a warm-up: fresh pages), except
 * "c", which it makes far the fastest; later rounds make "b" the fastest
 * and "a" faster round after round.  The agreed medians must be those of
 * rounds 1 on, exactly (counting round 0 in place of the last round moves
 * a's median one round back). */
static double round_time(const char *algo, int32_t round)
{
    if (round == 0)
        return !strcmp(algo, "c") ? 1e-6 : 1.0;
    return !strcmp(algo, "b") ? 2e-3 : !strcmp(algo, "a") ? 3e-3 - 1e-4 * round : 5e-3;
}

/* The rings' queries on communicators without rings: threads, and NULL.
 * Nothing was probed, and the times given back are zero, not left as
 * they were. */
static void test_shm_queries(void **state)
{
    (void)state;
    trd_comm *comm = NULL;
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    TU_CHECK(trd_comm_threads_create(&comm, 1, &topts) == TRD_OK, "%s", trd_errmsg());
    double rings = -1, mpi = -1;
    TU_CHECK(trd_comm_shm_max(comm) == 0 && !trd_comm_shm_probe(comm, &rings, &mpi) &&
                 rings == 0 && mpi == 0, "threads: limit %zu, probe %g %g",
             trd_comm_shm_max(comm), rings, mpi);
    rings = mpi = -1;
    TU_CHECK(trd_comm_shm_max(NULL) == 0 && !trd_comm_shm_probe(NULL, &rings, &mpi) &&
                 rings == 0 && mpi == 0 && !trd_comm_shm_probe(comm, NULL, NULL),
             "NULL: probe %g %g", rings, mpi);
    trd_comm_free(comm);
}

/* A tuning entry in `table` for three made-up candidates, `tune` of them
 * timed, with or without the other path's candidate. */
static trd_tune_entry *start_entry(trd_tune_table *table, const trd_op *op, int32_t tune,
                                   const trd_candidate *ranked, bool other_path)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.tune = tune;
    trd_tune_key key = trd_tune_key_of(op, 10, 0, false, &o);
    return trd_tune_start(table, &key, ranked, 3, other_path);
}

/* With other_path, the model's first candidate ("a") is timed once more
 * with its long messages the other way, as a third candidate; when that
 * one is the fastest, later calls run "a" the other way, and explain puts
 * "a" first with that variant's time (the first variant's stays apart). */
static void test_tune_other_path(trd_comm *comm, const trd_op *op, const trd_candidate *ranked)
{
    trd_tune_table table = {0};
    trd_tune_entry *e = start_entry(&table, op, 2, ranked, true);
    TU_CHECK(e->n == 3 && !strcmp(e->algo[2], "a") && e->other[2] && !e->other[0],
             "the other path's candidate: %d candidates", (int)e->n);
    for (int32_t k = 0; k < 3 * TRD_TUNE_CALLS; k++) {
        bool timed = false, other = false;
        const char *algo = trd_tune_next(e, &timed, &other);
        double t = other ? 1e-3 : !strcmp(algo, "a") ? 4e-3 : 3e-3;
        TU_CHECK(trd_tune_record(comm, e, t) == TRD_OK, "%s", trd_errmsg());
    }
    bool timed = true, other = false;
    const char *kept = trd_tune_next(e, &timed, &other);
    TU_CHECK(!strcmp(kept, "a") && other && !timed, "kept %s (other path %d), want a the "
             "other way", kept, (int)other);
    trd_candidate c[3] = {ranked[1], ranked[0], ranked[2]}; /* b, a, c: explain's order */
    trd_tune_explain(e, c, 3);
    TU_CHECK(!strcmp(c[0].algo, "a") && c[0].measured == 1e-3 && !strcmp(c[1].algo, "b") &&
                 c[1].measured == 3e-3 && isnan(c[2].measured),
             "explain: %s %g, %s %g", c[0].algo, c[0].measured, c[1].algo, c[1].measured);
}

static void test_tune_rounds(void **state)
{
    (void)state;
    trd_comm *comm = NULL;
    trd_op *op = NULL;
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    TU_CHECK(trd_comm_threads_create(&comm, 1, &topts) == TRD_OK &&
                 trd_op_builtin(&op, TRD_OP_SUM, TRD_DOUBLE) == TRD_OK, "%s", trd_errmsg());
    trd_candidate ranked[3] = {{"a", 1, NAN, TRD_OK}, {"b", 2, NAN, TRD_OK},
                               {"c", 3, NAN, TRD_OK}};
    trd_tune_table table = {0};
    trd_tune_entry *e = start_entry(&table, op, 3, ranked, false);
    for (int32_t k = 0; k < 3 * TRD_TUNE_CALLS; k++) {
        bool timed = false, other = true;
        const char *algo = trd_tune_next(e, &timed, &other);
        const char *want = ranked[(k % 3 + k / 3) % 3].algo;
        TU_CHECK(timed && !other && !strcmp(algo, want), "tuning call %d ran %s (timed %d, "
                 "other path %d), want %s", (int)k, algo, (int)timed, (int)other, want);
        TU_CHECK(trd_tune_record(comm, e, round_time(algo, k / 3)) == TRD_OK, "%s",
                 trd_errmsg());
    }
    bool timed = true, other = true;
    const char *kept = trd_tune_next(e, &timed, &other);
    TU_CHECK(!strcmp(kept, "b") && !timed && !other, "tune kept %s, want b", kept);
    double want_a = 3e-3 - 1e-4 * (1 + (TRD_TUNE_CALLS - 1) / 2); /* median of rounds 1 on */
    TU_CHECK(e->measured[0] == want_a && e->measured[1] == 2e-3 && e->measured[2] == 5e-3,
             "medians %g %g %g, want %g 0.002 0.005 (round 0 not counted)", e->measured[0],
             e->measured[1], e->measured[2], want_a);
    test_tune_other_path(comm, op, ranked);
    trd_op_free(op);
    trd_comm_free(comm);
}

static void test_tune_distinct(void **state)
{
    (void)state;
    static const double costs[][3] = {{1e-4, 1e-6, 5e-5}, {1e-5, 1e-5, 1e-5},
                                      {1e-6, 1e-4, 0},    {2e-4, 1e-4, 1e-4}};
    distinct_ctx x = {0};
    trd_comm *comm[TUNE_P];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    const char *want_set[TRD_TUNE_MAX];
    int dups = 0;
    TU_CHECK(trd_op_builtin(&x.op, TRD_OP_SUM, TRD_DOUBLE) == TRD_OK, "%s", trd_errmsg());
    rt_comms_create(comm, TUNE_P, &topts);
    for (size_t k = 0; k < sizeof costs / sizeof costs[0] && dups == 0; k++) {
        trd_coll_opts_init(&x.opts);
        x.opts.algo = "auto";
        x.opts.tune = 4;
        x.opts.d = costs[k][0];
        x.opts.c = costs[k][1];
        x.opts.latency = costs[k][2];
        x.opts.measure_model = false;
        first_candidates(comm[0], &x, x.opts.tune, &dups, want_set);
    }
    TU_CHECK(dups > 0, "no cost model puts two candidates with the same programs among the "
             "model's first 4: the test needs one");
    TU_CHECK(same_call_plans(comm[0], &x, "binomial", "binomial") &&
                 !same_call_plans(comm[0], &x, "binomial", "chain") &&
                 !same_call_plans(comm[0], &x, "binomial", "tree-dyn"),
             "trd_plan_same_programs: a plan is itself, a chain is not a binomial tree, a "
             "dynamic algorithm has no plan");
    rt_result res;
    rt_run_on(comm, TUNE_P, distinct_rank, &x, &res);
    for (int32_t r = 0; r < TUNE_P; r++)
        TU_CHECK(res.status[r] == TRD_OK, "rank %d: %s", (int)r, res.msg[r]);
    trd_candidate c[64];
    size_t n;
    TU_CHECK(trd_comm_explain(comm[0], DISTINCT_COUNT, x.op, 0, false, &x.opts, c, &n) ==
                 TRD_OK, "explain: %s", trd_errmsg());
    int timed = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(c[i].measured))
            continue;
        bool listed = false;
        for (int k = 0; k < x.opts.tune; k++)
            listed |= !strcmp(want_set[k], c[i].algo);
        TU_CHECK(listed, "tune: timed %s, not among the first 4 distinct programs",
                 c[i].algo);
        timed++;
    }
    TU_CHECK(timed == x.opts.tune, "tune: %d candidates timed, want %d", timed, x.opts.tune);
    rt_comms_free(comm, TUNE_P);
    trd_op_free(x.op);
}

/* The tuning table: TRD_TUNE_KEYS + 1 argument sets (counts 1..17) tuned
 * in turn on 2 ranks; the first is then forgotten (timed again from
 * scratch: nothing measured), the last remembered, and different
 * arguments never share an entry. */
typedef struct table_ctx {
    rt_log log;
    trd_op *op;
    int timed_first[2], timed_last[2], timed_fresh[2];
} table_ctx;

static int timed_for(trd_comm *comm, const trd_op *op, int64_t count, const trd_coll_opts *o)
{
    trd_candidate c[64];
    size_t n = 0;
    if (trd_comm_explain(comm, count, op, 0, true, o, c, &n) != TRD_OK)
        return -1;
    return count_timed(c, n);
}

static trd_status table_rank(trd_comm *comm, int32_t rank, void *arg)
{
    table_ctx *x = arg;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    o.d = 1e-6;
    o.c = 1e-8;
    o.measure_model = false;
    o.tune = 2;
    int32_t in[32], out[32];
    for (int i = 0; i < 32; i++)
        in[i] = rank + i;
    trd_status st = TRD_OK;
    for (int64_t count = 1; count <= TRD_TUNE_KEYS + 1 && st == TRD_OK; count++) {
        for (int k = 0; k < 2 * TRD_TUNE_CALLS && st == TRD_OK; k++)
            st = trd_allreduce(comm, in, out, count, x->op, &o);
        for (int64_t i = 0; st == TRD_OK && i < count; i++)
            if (out[i] != 1 + 2 * (int32_t)i)
                rt_failf(&x->log, "tune table: rank %d count %lld: element %lld is %d",
                         (int)rank, (long long)count, (long long)i, (int)out[i]);
        if (count == 1)
            x->timed_fresh[rank] = timed_for(comm, x->op, 2, &o); /* not called yet */
    }
    x->timed_first[rank] = timed_for(comm, x->op, 1, &o);
    x->timed_last[rank] = timed_for(comm, x->op, TRD_TUNE_KEYS + 1, &o);
    return st;
}

static void test_tune_table(void **state)
{
    (void)state;
    table_ctx x = {.op = rt_op_create(RT_I32_SUM)};
    rt_log_init(&x.log);
    run_all_ok(2, table_rank, &x, "tune table", 0);
    for (int32_t r = 0; r < 2; r++) {
        TU_CHECK(x.timed_fresh[r] == 0 && x.timed_first[r] == 0 && x.timed_last[r] == 2,
                 "tune table: rank %d: %d timed for arguments never called, %d for the "
                 "forgotten first, %d for the last (want 0, 0, 2)", (int)r, x.timed_fresh[r],
                 x.timed_first[r], x.timed_last[r]);
    }
    rt_log_check(&x.log, "tune table");
    rt_log_destroy(&x.log);
    trd_op_free(x.op);
}

/* Per-test wall time, printed after each test (the report's run times). */
static double test_t0;
static int timing_setup(void **state)
{
    (void)state;
    test_t0 = rt_now();
    return 0;
}
static int timing_teardown(void **state)
{
    (void)state;
    printf("  (%.2f s)\n", rt_now() - test_t0);
    fflush(stdout);
    return 0;
}

/* usage: test_runtime [PATTERN [SKIP]]: only the tests matching PATTERN,
 * except those matching SKIP (cmocka's filters, '*' and '?' wildcards). */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    if (argc > 2)
        cmocka_set_skip_filter(argv[2]);
    size_t n = trd_algo_count();
    if (n > sizeof algo_index / sizeof algo_index[0]) {
        fprintf(stderr, "too many algorithms (%zu)\n", n);
        return 1;
    }
    const struct CMUnitTest more[] = {
        cmocka_unit_test_setup_teardown(test_segments_trees, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_segments_pipelined, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_segments_exchange, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_repeated_mixed, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_repeated_dynamic, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_auto, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_auto_memo, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_measured_model, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_tune, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_tune_table, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_tune_distinct, timing_setup, timing_teardown),
        cmocka_unit_test(test_tune_rounds),
        cmocka_unit_test(test_shm_queries),
        cmocka_unit_test_setup_teardown(test_random_delays, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_many_segments_small_count, timing_setup,
                                        timing_teardown),
        cmocka_unit_test_setup_teardown(test_wire_threads_order, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_wire_threads_claim, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_claimed_allreduce, timing_setup, timing_teardown),
        cmocka_unit_test_setup_teardown(test_calibrate_predict, timing_setup, timing_teardown),
        cmocka_unit_test(test_parallelism_predict),
        cmocka_unit_test_setup_teardown(test_calibrated_runs, timing_setup, timing_teardown),
        /* last: under UBSan a failure here aborts the program */
        cmocka_unit_test_setup_teardown(test_count_zero_first, timing_setup, timing_teardown),
    };
    size_t kinds[4] = {0}, nmore = sizeof more / sizeof more[0];
    struct CMUnitTest *tests = calloc(n + nmore, sizeof *tests);
    size_t m = 0;
    assert_non_null(tests);
    for (size_t i = 0; i < n; i++) {
        algo_index[i] = i;
        kinds[trd_algo_kind_of(i)]++;
        tests[m++] = (struct CMUnitTest){.name = trd_algo_name(i), .test_func = test_matrix,
                                         .initial_state = &algo_index[i]};
        tests[m - 1].setup_func = timing_setup;
        tests[m - 1].teardown_func = timing_teardown;
    }
    if (!kinds[TRD_KIND_TREE] || !kinds[TRD_KIND_PIPELINED] || !kinds[TRD_KIND_EXCHANGE] ||
        !kinds[TRD_KIND_DYNAMIC]) {
        fprintf(stderr, "the registry lacks a kind of algorithm\n");
        return 1;
    }
    for (size_t i = 0; i < nmore; i++)
        tests[m++] = more[i];
    int rc = _cmocka_run_group_tests("runtime", tests, m, NULL, NULL);
    free(tests);
    return rc;
}

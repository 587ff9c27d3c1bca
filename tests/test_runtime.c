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
 * non-commutative tree-dyn / ring) must be TRD_EUNSUPPORTED on every rank
 * and leave every buffer as it was.  Then: segmented trees and pipelines,
 * repeated calls with changing parameters on the same communicators,
 * injected random delays, calibrate and predict.
 *
 * An exchange algorithm that answers TRD_EUNSUPPORTED "not yet available"
 * is skipped with a note (and runs as soon as it is written). */
#include "runtime_util.h"

static const int32_t ps[] = {1, 2, 3, 4, 5, 7, 8, 9};
#define NPS (sizeof ps / sizeof ps[0])
static const int64_t counts[] = {0, 1, 7, 4099};
#define NCOUNTS (sizeof counts / sizeof counts[0])
#define GUARD 8          /* elements past count that must keep the canary */
#define TIMEOUT_S 10.0   /* every wait: a broken runtime fails, never hangs ctest */

/* How the caller passes its buffers where the result lands. */
typedef enum bufmode { SEPARATE = 0, IN_PLACE = 1, SAME = 2 } bufmode;
static const char *const bufmode_names[] = {"separate", "TRD_IN_PLACE", "sendbuf == recvbuf"};

/* One collective call that every rank makes. */
typedef struct rt_case {
    size_t algo;
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
    k.opts.algo = trd_algo_name(k.algo);
    l->v[l->len++] = k;
}

/* What the runtime must answer: OK, EUNSUPPORTED, or (ring with a
 * non-commutative operator on p <= 2, where its rotated order IS the rank
 * order) either OK with the right result or EUNSUPPORTED. */
enum { WANT_OK, WANT_REFUSE, WANT_EITHER };

static int expected_outcome(const rt_case *k, int32_t p)
{
    trd_algo_kind kind = trd_algo_kind_of(k->algo);
    const char *name = trd_algo_name(k->algo);
    if (kind == TRD_KIND_DYNAMIC && k->allreduce)
        return WANT_REFUSE;
    if (kind == TRD_KIND_EXCHANGE && !k->allreduce)
        return WANT_REFUSE;
    if (rt_op_nc(k->op) && strcmp(name, "tree-dyn") == 0)
        return WANT_REFUSE;
    if (rt_op_nc(k->op) && strcmp(name, "ring") == 0)
        return p > 2 ? WANT_REFUSE : WANT_EITHER;
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

    trd_status st = k->allreduce
                        ? trd_allreduce(comm, sendbuf, recvbuf, k->count, x->ops[k->op], &k->opts)
                        : trd_reduce(comm, sendbuf, recvbuf, k->count, x->ops[k->op], k->root,
                                     &k->opts);
    const char *msg = st == TRD_OK ? "" : trd_errmsg();
    int want = expected_outcome(k, p);
    if (rank == 0)
        atomic_fetch_add(&x->done, 1);

    if (st != TRD_OK && trd_algo_kind_of(k->algo) == TRD_KIND_EXCHANGE && rt_not_yet(st, msg)) {
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
 * fresh ones with topts) and fails the test on any problem. */
static void run_cases(const case_list *l, int32_t p, trd_comm **comm,
                      const trd_threads_opts *topts, const char *what)
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
        rt_run(p, topts ? topts : &def, rank_main, x, &res);
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
        add_matrix(&l, algo, ps[i], &base, counts, NCOUNTS, 1000 * (uint64_t)ps[i]);
        run_cases(&l, ps[i], NULL, NULL, trd_algo_name(algo));
        free(l.v);
    }
}

/* ---- Segmentation. ---- */

/* Trees cut into 64-byte segments (hundreds of blocks for 4099 elements). */
static void test_segments_trees(void **state)
{
    (void)state;
    const int32_t sp[] = {3, 8};
    const int64_t cnt[] = {4099};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        case_list l = {0};
        for (size_t a = 0; a < trd_algo_count(); a++) {
            if (trd_algo_kind_of(a) != TRD_KIND_TREE)
                continue;
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            o.segment_bytes = 64;
            for (int op = 0; op < RT_NOPS; op++) {
                if (op != RT_I32_SUM && op != RT_MATRIX && op != RT_F64_SUM)
                    continue;
                for (int call = 0; call < 3; call++) {
                    if (call == 0 && op != RT_I32_SUM)
                        continue; /* root 0 with one operator, root p-1 and allreduce with all */
                    rt_case k = {.algo = a, .op = (rt_opid)op, .count = cnt[0],
                                 .root = call == 1 ? sp[i] - 1 : 0, .allreduce = call == 2,
                                 .mode = (bufmode)(call % 2 ? IN_PLACE : SEPARATE),
                                 .seed = 77 + l.len, .opts = o};
                    push_case(&l, k);
                }
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
            TU_CHECK(blocks > 2, "%s p=%d chose %d segments; expected several",
                     trd_algo_name(a), (int)sp[i], (int)blocks);
            case_list l = {0};
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            o.d = prm.d;
            o.c = prm.c;
            o.latency = prm.latency;
            add_matrix(&l, a, sp[i], &o, cnt, 2, 5000 + (uint64_t)sp[i]);
            /* and with explicit small segments */
            o.segment_bytes = 64;
            add_matrix(&l, a, sp[i], &o, cnt + 1, 1, 6000 + (uint64_t)sp[i]);
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
 * would give a wrong result. */
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
            if (strcmp(trd_algo_name(a), "tree-dyn") == 0 || strcmp(trd_algo_name(a), "ring") == 0)
                op = (rt_opid)(n % 4); /* commutative: so the call is not refused */
            bool all = kind == TRD_KIND_EXCHANGE || (kind != TRD_KIND_DYNAMIC && n % 3 == 0);
            /* noncommutative trees can always put the root on 0 or p-1 */
            int32_t root = rt_op_nc(op) ? (n % 2 ? p - 1 : 0) : (int32_t)(n % (size_t)p);
            rt_case k = {.algo = a, .op = op, .count = cnt[n % 8], .root = root,
                         .allreduce = all, .mode = (bufmode)(n % 3), .seed = 31 * n, .opts = o};
            push_case(&l, k);
        }
    run_cases(&l, p, comm, NULL, "mixed sequence");
    free(l.v);
    rt_comms_free(comm, p);
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
            trd_threads_opts topts = rt_topts(TIMEOUT_S);
            topts.delay_max_us = 200;
            topts.delay_seed = seed * 7919 + (uint64_t)a;
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
            run_cases(&l, p, NULL, &topts, names[a]);
            free(l.v);
        }
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
        }
        if (p >= 2)
            TU_CHECK(x.got[0].d > 0, "calibrate p=%d: d = %g (a transfer takes time)", (int)p,
                     x.got[0].d);
        /* predict (local: here, on rank 0's and the last rank's handles) */
        for (size_t a = 0; a < trd_algo_count(); a++) {
            trd_algo_kind kind = trd_algo_kind_of(a);
            trd_coll_opts o = x.got[0];
            o.algo = trd_algo_name(a);
            for (int all = 0; all < 2; all++) {
                if ((kind == TRD_KIND_DYNAMIC && all) || (kind == TRD_KIND_EXCHANGE && !all))
                    continue;
                for (int64_t count = 1; count <= 10000; count *= 100) {
                    double t = NAN;
                    trd_comm *c = comm[all ? p - 1 : 0];
                    trd_status st = trd_comm_predict(c, count, x.op, p - 1, all, &o, &t);
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

/* The calibrated model drives real calls of every algorithm (pipelines
 * then choose their segments from measured numbers). */
typedef struct calib_run_ctx {
    trd_op *op;
    rt_log log;
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
        }
    }
    free(in);
    free(out);
    free(want);
    return st;
}

static void test_calibrated_runs(void **state)
{
    (void)state;
    calib_run_ctx x = {.op = rt_op_create(RT_I32_SUM)};
    rt_log_init(&x.log);
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    rt_result res;
    rt_run(5, &topts, calibrated_rank, &x, &res);
    for (int32_t r = 0; r < 5; r++)
        TU_CHECK(res.status[r] == TRD_OK, "rank %d: %s", (int)r, res.msg[r]);
    rt_log_check(&x.log, "calibrated runs");
    rt_log_destroy(&x.log);
    trd_op_free(x.op);
}

int main(void)
{
    size_t n = trd_algo_count();
    if (n > sizeof algo_index / sizeof algo_index[0]) {
        fprintf(stderr, "too many algorithms (%zu)\n", n);
        return 1;
    }
    size_t kinds[4] = {0};
    struct CMUnitTest *tests = calloc(n + 16, sizeof *tests);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        algo_index[i] = i;
        kinds[trd_algo_kind_of(i)]++;
        tests[m++] = (struct CMUnitTest){.name = trd_algo_name(i), .test_func = test_matrix,
                                         .initial_state = &algo_index[i]};
    }
    if (!kinds[TRD_KIND_TREE] || !kinds[TRD_KIND_PIPELINED] || !kinds[TRD_KIND_EXCHANGE] ||
        !kinds[TRD_KIND_DYNAMIC]) {
        fprintf(stderr, "the registry lacks a kind of algorithm\n");
        return 1;
    }
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_segments_trees);
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_segments_pipelined);
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_segments_exchange);
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_repeated_mixed);
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_repeated_dynamic);
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_random_delays);
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_calibrate_predict);
    tests[m++] = (struct CMUnitTest)cmocka_unit_test(test_calibrated_runs);
    int rc = _cmocka_run_group_tests("runtime", tests, m, NULL, NULL);
    free(tests);
    return rc;
}

/* runtime_util.h: helpers shared by the runtime's tests (test_runtime_*.c,
 * test_tune.c, test_threads_claim.c, runtime_matrix.c and others; header
 * only, like testutil.h).
 *
 * Ranks are threads: rt_run() creates p communicators over one threads
 * wire, runs a callback on p pthreads (one per rank, with that rank's
 * communicator), joins them and collects every rank's status, message and
 * wall time.  cmocka's assertions must not run on those threads (they
 * longjmp), so callbacks report problems through an rt_log, which the main
 * thread checks after the join (rt_log_check).
 *
 * Nothing here computes an expected reduction with the library: inputs are
 * a hash of (seed, rank, element), and the rank-order folds are plain C
 * loops (the checker operators excepted: their trd_*_expected is the
 * contract of docs/OPERATORS.md). */
#ifndef TRD_TESTS_RUNTIME_UTIL_H
#define TRD_TESTS_RUNTIME_UTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "testutil.h"
#include "treduce_internal/test_hooks.h" /* injected delays, a dead rank */

#define RT_MAX_P 128
#define RT_MSG 512
#define RT_TIMEOUT_S 10.0 /* every wait: a broken runtime fails, never hangs ctest */

static inline double rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- Failure log, safe to use from rank threads. ---- */

typedef struct rt_log {
    pthread_mutex_t mu;
    int failures;   /* total */
    int shown;      /* printed so far (the first RT_LOG_SHOW) */
    atomic_int stop; /* set by rt_log_abort: ranks should leave their loops */
} rt_log;
#define RT_LOG_SHOW 25

static inline void rt_log_init(rt_log *log)
{
    pthread_mutex_init(&log->mu, NULL);
    log->failures = log->shown = 0;
    atomic_store(&log->stop, 0);
}

static inline void rt_log_destroy(rt_log *log) { pthread_mutex_destroy(&log->mu); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void rt_failf(rt_log *log, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&log->mu);
    log->failures++;
    if (log->shown < RT_LOG_SHOW) {
        log->shown++;
        va_start(ap, fmt);
        fputs("FAIL: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        if (log->shown == RT_LOG_SHOW)
            fputs("(further failures not shown)\n", stderr);
    }
    pthread_mutex_unlock(&log->mu);
}

/* A failure after which the ranks cannot stay in step (an unexpected
 * status): logged, and every rank is told to stop. */
#define rt_log_abort(log, ...)                     \
    do {                                           \
        rt_failf((log), __VA_ARGS__);              \
        atomic_store(&(log)->stop, 1);             \
    } while (0)

static inline bool rt_stopped(rt_log *log) { return atomic_load(&log->stop) != 0; }

/* Fails the cmocka test (main thread only) when anything was logged. */
#define rt_log_check(log, what)                                                        \
    TU_CHECK((log)->failures == 0, "%s: %d failure(s), see above", (what), (log)->failures)

/* Prints `text` once per distinct key (e.g. "skipped ring: not yet available"). */
static inline void rt_note_once(const char *text)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static char seen[64][160];
    static int nseen;
    pthread_mutex_lock(&mu);
    bool found = false;
    for (int i = 0; i < nseen && !found; i++)
        found = strcmp(seen[i], text) == 0;
    if (!found) {
        printf("note: %s\n", text);
        fflush(stdout);
        if (nseen < 64)
            snprintf(seen[nseen++], sizeof seen[0], "%s", text);
    }
    pthread_mutex_unlock(&mu);
}

/* ---- Ranks as threads. ---- */

/* One rank's part: returns its status (recorded in rt_result). */
typedef trd_status (*rt_rank_fn)(trd_comm *comm, int32_t rank, void *ctx);

/* One plan run for real on every rank (trd_comm_run_plan): rank r's
 * buffer is buf[r], count elements of op. */
typedef struct rt_plan_run {
    const trd_plan *plan;
    void **buf;
    int64_t count;
    trd_op *op;
} rt_plan_run;

static inline trd_status rt_run_plan_rank(trd_comm *comm, int32_t rank, void *ctx)
{
    rt_plan_run *x = ctx;
    return trd_comm_run_plan(comm, x->plan, x->buf[rank], x->count, x->op);
}

typedef struct rt_result {
    int32_t p;
    trd_status status[RT_MAX_P];
    char msg[RT_MAX_P][RT_MSG]; /* trd_errmsg() of the rank's thread when status != OK */
    double seconds[RT_MAX_P];   /* wall time of the callback */
    double wall;                /* from the first start to the last join */
} rt_result;

typedef struct rt_job {
    trd_comm *comm;
    int32_t rank;
    rt_rank_fn fn;
    void *ctx;
    rt_result *res;
} rt_job;

static void *rt_rank_main(void *arg)
{
    rt_job *j = arg;
    double t0 = rt_now();
    trd_status st = j->fn(j->comm, j->rank, j->ctx);
    j->res->seconds[j->rank] = rt_now() - t0;
    j->res->status[j->rank] = st;
    snprintf(j->res->msg[j->rank], RT_MSG, "%s", st == TRD_OK ? "" : trd_errmsg());
    return NULL;
}

/* Runs fn on p threads over existing communicators comm[0..p-1]. */
static inline void rt_run_on(trd_comm **comm, int32_t p, rt_rank_fn fn, void *ctx,
                             rt_result *res)
{
    assert_true(p >= 1 && p <= RT_MAX_P);
    pthread_t tid[RT_MAX_P];
    rt_job job[RT_MAX_P];
    memset(res, 0, sizeof *res);
    res->p = p;
    double t0 = rt_now();
    for (int32_t r = 0; r < p; r++) {
        job[r] = (rt_job){.comm = comm[r], .rank = r, .fn = fn, .ctx = ctx, .res = res};
        assert_int_equal(pthread_create(&tid[r], NULL, rt_rank_main, &job[r]), 0);
    }
    for (int32_t r = 0; r < p; r++)
        assert_int_equal(pthread_join(tid[r], NULL), 0);
    res->wall = rt_now() - t0;
}

/* Creates p communicators (opts NULL: defaults), must succeed. */
static inline void rt_comms_create(trd_comm **comm, int32_t p, const trd_threads_opts *opts)
{
    trd_status st = trd_comm_threads_create(comm, p, opts);
    TU_CHECK(st == TRD_OK, "trd_comm_threads_create(p = %d): %s", (int)p, trd_errmsg());
    for (int32_t r = 0; r < p; r++) {
        assert_int_equal(trd_comm_rank(comm[r]), r);
        assert_int_equal(trd_comm_size(comm[r]), p);
    }
}

static inline void rt_comms_free(trd_comm **comm, int32_t p)
{
    for (int32_t r = 0; r < p; r++) {
        trd_comm_free(comm[r]);
        comm[r] = NULL;
    }
}

/* rt_run's part of every rank under trd_comm_threads_run: fn's status and
 * message recorded per rank (the run itself then succeeds). */
typedef struct rt_launch {
    rt_rank_fn fn;
    void *ctx;
    rt_result *res;
} rt_launch;

static inline trd_status rt_launched(trd_comm *comm, void *arg)
{
    rt_launch *l = arg;
    int32_t r = trd_comm_rank(comm);
    rt_job job = {.comm = comm, .rank = r, .fn = l->fn, .ctx = l->ctx, .res = l->res};
    rt_rank_main(&job);
    return TRD_OK;
}

/* Runs fn on p threads over p fresh communicators (trd_comm_threads_run). */
static inline void rt_run(int32_t p, const trd_threads_opts *opts, rt_rank_fn fn, void *ctx,
                          rt_result *res)
{
    assert_true(p >= 1 && p <= RT_MAX_P);
    memset(res, 0, sizeof *res);
    res->p = p;
    rt_launch l = {.fn = fn, .ctx = ctx, .res = res};
    double t0 = rt_now();
    trd_status st = trd_comm_threads_run(p, opts, rt_launched, &l);
    TU_CHECK(st == TRD_OK, "trd_comm_threads_run(p = %d): %s", (int)p, trd_errmsg());
    res->wall = rt_now() - t0;
}

/* rt_run with the library's test hooks set on every rank (hooks NULL:
 * none). */
static inline void rt_run_hooked(int32_t p, const trd_threads_opts *opts,
                                 const trd_test_hooks *hooks, rt_rank_fn fn, void *ctx,
                                 rt_result *res)
{
    trd_comm *comm[RT_MAX_P];
    rt_comms_create(comm, p, opts);
    trd_status st = hooks ? trd_test_hooks_set_all(comm, p, hooks) : TRD_OK;
    TU_CHECK(st == TRD_OK, "trd_test_hooks_set_all: %s", trd_errmsg());
    rt_run_on(comm, p, fn, ctx, res);
    rt_comms_free(comm, p);
}

/* Test hooks of random send delays below delay_us, drawn from seed. */
static inline trd_test_hooks rt_delays(double delay_us, uint64_t seed)
{
    trd_test_hooks h;
    trd_test_hooks_init(&h);
    h.delay_max_us = delay_us;
    h.delay_seed = seed;
    return h;
}

/* Threads options with a test deadline (short, so a broken runtime fails
 * rather than running into ctest's timeout). */
static inline trd_threads_opts rt_topts(double timeout_s)
{
    trd_threads_opts o;
    trd_threads_opts_init(&o);
    o.timeout_s = timeout_s;
    return o;
}

/* Runs fn on p fresh communicators (the test deadline; random delays of
 * up to delay_us before every send); every rank must return TRD_OK. */
static inline void rt_run_all_ok(int32_t p, rt_rank_fn fn, void *ctx, const char *what,
                                 double delay_us)
{
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    trd_test_hooks hooks = rt_delays(delay_us, 1);
    rt_result res;
    rt_run_hooked(p, &topts, &hooks, fn, ctx, &res);
    for (int32_t r = 0; r < p; r++)
        TU_CHECK(res.status[r] == TRD_OK, "%s: rank %d: %s", what, (int)r, res.msg[r]);
}

/* Runs fn on p ranks (a wait of timeout_s) with a fresh rt_log as its
 * argument: every rank returns TRD_OK and none logs a failure. */
static inline void rt_run_logged_ok(int32_t p, double timeout_s, rt_rank_fn fn, const char *what)
{
    rt_log log;
    rt_log_init(&log);
    trd_threads_opts topts = rt_topts(timeout_s);
    rt_result res;
    rt_run(p, &topts, fn, &log, &res);
    for (int32_t r = 0; r < p; r++)
        TU_CHECK(res.status[r] == TRD_OK, "%s: rank %d: %s", what, (int)r, res.msg[r]);
    rt_log_check(&log, what);
    rt_log_destroy(&log);
}

/* Runs plan run x on p threads (a wait of 20 s: these plans run in
 * milliseconds, a hang fails); every rank must return TRD_OK, else the
 * failure names `what`, the rank and its message. */
static inline void rt_run_plan_ok(rt_plan_run *x, int32_t p, const char *what)
{
    trd_threads_opts o = rt_topts(20.0);
    rt_result res;
    rt_run(p, &o, rt_run_plan_rank, x, &res);
    for (int32_t r = 0; r < p; r++)
        TU_CHECK(res.status[r] == TRD_OK, "%s rank %d: %s", what, (int)r, res.msg[r]);
}

/* Frees what a plan run of p ranks owns: the p buffers, their array and
 * the operator (the plan is the caller's). */
static inline void rt_plan_run_free(rt_plan_run *x, int32_t p)
{
    for (int32_t r = 0; r < p; r++)
        free(x->buf[r]);
    free(x->buf);
    trd_op_free(x->op);
}

/* Per-test wall time, printed after each test (cmocka setup and teardown
 * of the tests whose run times a report quotes). */
static inline double *rt_test_start(void)
{
    static double t0;
    return &t0;
}
static inline int rt_timing_setup(void **state)
{
    (void)state;
    *rt_test_start() = rt_now();
    return 0;
}
static inline int rt_timing_teardown(void **state)
{
    (void)state;
    printf("  (%.2f s)\n", rt_now() - *rt_test_start());
    fflush(stdout);
    return 0;
}
#define RT_TIMED(fn) cmocka_unit_test_setup_teardown(fn, rt_timing_setup, rt_timing_teardown)

/* usage: PROGRAM [PATTERN [SKIP]]: only the tests matching PATTERN, except
 * those matching SKIP (cmocka's filters, '*' and '?' wildcards). */
static inline void rt_filters(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    if (argc > 2)
        cmocka_set_skip_filter(argv[2]);
}

/* ---- Inputs and independent rank-order folds. ---- */

static inline uint64_t rt_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* The input word of (seed, rank, element i). */
static inline uint64_t rt_word(uint64_t seed, int64_t rank, int64_t i)
{
    return rt_mix(rt_mix(seed * 0x100000001B3ULL + (uint64_t)rank) ^ (uint64_t)i);
}

/* The operators of the matrix: built-in ones checked bitwise against plain
 * loops, and the two non-commutative checkers. */
typedef enum rt_opid {
    RT_I32_SUM,
    RT_I64_PROD,
    RT_U64_BXOR,
    RT_F64_SUM,
    RT_MATRIX,
    RT_INTERVAL,
    RT_NOPS
} rt_opid;

static const char *const rt_op_names[RT_NOPS] = {"int32 sum",  "int64 prod", "uint64 bxor",
                                                 "double sum", "matrix2x2",  "interval"};

static inline bool rt_op_nc(rt_opid id) { return id == RT_MATRIX || id == RT_INTERVAL; }

/* Creates the operator id (no cmocka: MPI programs use it too). */
static inline trd_status rt_op_try(rt_opid id, trd_op **op)
{
    *op = NULL;
    switch (id) {
    case RT_I32_SUM: return trd_op_builtin(op, TRD_OP_SUM, TRD_INT32);
    case RT_I64_PROD: return trd_op_builtin(op, TRD_OP_PROD, TRD_INT64);
    case RT_U64_BXOR: return trd_op_builtin(op, TRD_OP_BXOR, TRD_UINT64);
    case RT_F64_SUM: return trd_op_builtin(op, TRD_OP_SUM, TRD_DOUBLE);
    case RT_MATRIX: return trd_op_matrix2x2(op);
    default: return trd_op_interval(op);
    }
}

/* Creates the operator id (must succeed). */
static inline trd_op *rt_op_create(rt_opid id)
{
    trd_op *op = NULL;
    trd_status st = rt_op_try(id, &op);
    TU_CHECK(st == TRD_OK && op, "operator %s: %s", rt_op_names[id], trd_errmsg());
    return op;
}

static inline size_t rt_elem(rt_opid id)
{
    switch (id) {
    case RT_I32_SUM: return 4;
    case RT_MATRIX: return sizeof(trd_matrix2x2);
    case RT_INTERVAL: return sizeof(trd_interval);
    default: return 8;
    }
}

/* Rank's input of count elements (with seed; the checkers ignore it).
 * Safe on rank threads (no cmocka assertion). */
static inline trd_status rt_fill(rt_opid id, void *buf, int64_t count, int32_t rank, uint64_t seed)
{
    for (int64_t i = 0; i < count; i++) {
        uint64_t w = rt_word(seed, rank, i);
        switch (id) {
        case RT_I32_SUM: ((uint32_t *)buf)[i] = (uint32_t)w; break;
        case RT_I64_PROD: ((uint64_t *)buf)[i] = w | 1u; break; /* odd: never 0 */
        case RT_U64_BXOR: ((uint64_t *)buf)[i] = w; break;
        case RT_F64_SUM: ((double *)buf)[i] = (double)((int64_t)(w % 2001) - 1000); break;
        default: break;
        }
    }
    if (id == RT_MATRIX)
        return trd_matrix2x2_fill(buf, count, rank);
    if (id == RT_INTERVAL)
        return trd_interval_fill(buf, count, rank);
    return TRD_OK;
}

/* The sequential fold v_lo (+) ... (+) v_hi of ranks lo <= hi, in plain C
 * for the built-in operators (wrapping arithmetic in unsigned types). */
static inline trd_status rt_expected_ranks(rt_opid id, void *out, int64_t count, int32_t lo,
                                           int32_t hi, uint64_t seed)
{
    if (id == RT_MATRIX)
        return trd_matrix2x2_expected(out, count, lo, hi);
    if (id == RT_INTERVAL)
        return trd_interval_expected(out, count, lo, hi);
    for (int64_t i = 0; i < count; i++) {
        uint32_t s32 = 0;
        uint64_t prod = 1, x = 0;
        double sd = 0.0;
        for (int32_t r = lo; r <= hi; r++) {
            uint64_t w = rt_word(seed, r, i);
            s32 += (uint32_t)w;
            prod *= w | 1u;
            x ^= w;
            sd += (double)((int64_t)(w % 2001) - 1000);
        }
        switch (id) {
        case RT_I32_SUM: ((uint32_t *)out)[i] = s32; break;
        case RT_I64_PROD: ((uint64_t *)out)[i] = prod; break;
        case RT_U64_BXOR: ((uint64_t *)out)[i] = x; break;
        default: ((double *)out)[i] = sd; break;
        }
    }
    return TRD_OK;
}

/* The fold of every rank, v0 (+) v1 (+) ... (+) v_{p-1}. */
static inline trd_status rt_expected(rt_opid id, void *out, int64_t count, int32_t p,
                                     uint64_t seed)
{
    return rt_expected_ranks(id, out, count, 0, p - 1, seed);
}

/* Index of the first differing element of two buffers of count elements of
 * elem bytes, or -1 when they are bitwise equal. */
static inline int64_t rt_first_diff(const void *a, const void *b, int64_t count, size_t elem)
{
    const unsigned char *x = a, *y = b;
    if (count == 0 || memcmp(x, y, (size_t)count * elem) == 0)
        return -1;
    for (int64_t i = 0; i < count; i++)
        if (memcmp(x + (size_t)i * elem, y + (size_t)i * elem, elem) != 0)
            return i;
    return -1;
}

#define RT_CANARY 0xA5

/* Whether bytes [0, n) of buf all hold the canary. */
static inline bool rt_is_canary(const void *buf, size_t n)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        if (b[i] != RT_CANARY)
            return false;
    return true;
}

/* Registry index of name (must exist). */
static inline size_t rt_algo(const char *name)
{
    size_t i = 0;
    TU_CHECK(trd_algo_find(name, &i) == TRD_OK, "algorithm %s: %s", name, trd_errmsg());
    return i;
}

/* Whether algorithm a's plan refuses collective coll (rt_plan_refuses: an
 * allreduce) on p ranks (with a
 * non-commutative operator when nc): an exchange algorithm that cannot take
 * this p or operator (star and star-reduce-bcast need p = n! and a
 * commutative operator, ring a commutative one for p > 2).  The runtime
 * must then refuse the call too. */
static inline bool rt_plan_refuses_coll(size_t a, int32_t p, bool nc, trd_collective coll)
{
    if (trd_algo_kind_of(a) != TRD_KIND_EXCHANGE)
        return false;
    trd_params prm;
    trd_params_init(&prm);
    prm.n = p;
    prm.collective = coll;
    prm.noncommutative = nc;
    trd_plan *plan = NULL;
    trd_status st = trd_plan_create(&plan, trd_algo_name(a), &prm);
    trd_plan_free(plan);
    return st == TRD_EUNSUPPORTED;
}

static inline bool rt_plan_refuses(size_t a, int32_t p, bool nc)
{
    return rt_plan_refuses_coll(a, p, nc, TRD_COLL_ALLREDUCE);
}

/* Whether a status and message say the algorithm is not written yet (the
 * exchange algorithms while in progress): the only refusal that skips. */
static inline bool rt_not_yet(trd_status st, const char *msg)
{
    return st == TRD_EUNSUPPORTED && strstr(msg, "not yet available") != NULL;
}

#endif

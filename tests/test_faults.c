/* test_faults.c: faults injected into the threads wire, for every
 * registered algorithm (treduce.h "Faults and deadlines", docs/RUNTIME.md).
 *
 * Each case runs one world per algorithm, all at once (the cases wait on
 * deadlines, not on the CPU): p = 4 ranks (6 for the star graph's
 * algorithms), a reduce to rank p - 1, or else the first collective the
 * algorithm's row runs (an allreduce, a reduce-scatter, a scan), with the non-commutative 2x2 matrix checker where the
 * algorithm takes it (else int64 products), and checks on every rank:
 *   - delays before every send: both calls succeed with the right result;
 *   - a slow combine (the first combine of the world sleeps well past the
 *     deadline: the peer whose message it is consuming times out meanwhile);
 *   - a stalled rank (it calls once the others' calls have returned);
 *   - a dead rank (the test hook: it never takes part): the deadline's
 *     message, which every survivor ends with, names it among the ranks
 *     that have not begun the call or did not arrive at its barrier;
 *   - mismatched calls (rank 0 calls another kind, root, count, algorithm
 *     or operator than the others);
 * none crashes, none takes longer than its deadline + 1 s, none returns
 * TRD_OK with a wrong result, every rank of a faulty world ends with an
 * error - in the faulty call or in the correct call made after it, which a
 * failed communicator must refuse with the first failure's code and
 * message (a mismatch's names it) and without touching its buffers - and
 * no rank's buffers are touched once its call has returned: they are
 * mprotect()ed away right then (a peer's access is a SIGSEGV, under ASan
 * too), and after the slow combine the communicator is freed at once (its
 * scratch: a use after free under ASan). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <sys/mman.h>
#include <unistd.h>

#include "faults_calls.h"
#include "runtime_util.h"

#define P 4
#define COUNT 37
#define SEED 11
#define DEADLINE 0.2  /* of the timing cases */
#define MISMATCH_DEADLINE 2.0 /* mismatches are found at once, not at a deadline */
#define SLACK 1.0     /* every call ends within its deadline + this */
#define SLOW_S 0.7    /* the slow combine */
#define STALL_MAX_S 10.0 /* the stalled rank calls once the others' calls returned, or now */
#define ODD 1         /* the stalled or dead rank */

typedef enum fault { F_DELAY, F_SLOW, F_STALL, F_DEAD, F_MISMATCH } fault;

/* One rank's collective call. */
typedef struct call_spec {
    const char *algo;
    trd_collective coll;
    int32_t root;
    int64_t count;
    rt_opid op;
} call_spec;

/* What one rank saw. */
typedef struct rank_out {
    trd_status st[2];
    char msg[2][RT_MSG];
    double seconds[2];
    bool wrong;     /* TRD_OK with a wrong result */
    bool touched;   /* a refused second call changed its buffers */
    bool got_result; /* its call returned TRD_OK with a result to check */
    unsigned char *buf[2][2]; /* each call's input and result: unmapped at the end */
    size_t bytes[2];
} rank_out;

/* One algorithm's ranks in one case. */
typedef struct world {
    size_t algo;
    int32_t p;
    fault f;
    mism m;
    call_spec base;
    trd_op *op[RT_NOPS];
    trd_op *slow; /* F_SLOW: base's operator, its first use in the world slowed */
    const trd_costs *costs; /* heterogeneous planners': random costs of these ranks */
    atomic_int slowed;
    atomic_int returned; /* first calls returned (the stalled rank waits for them) */
    trd_comm *comm[RT_MAX_P];
    rank_out out[RT_MAX_P];
    bool skip; /* the case does not apply to the algorithm */
} world;

typedef struct rank_job {
    world *w;
    int32_t rank;
} rank_job;

/* ---- Buffers a peer must not touch once the call has returned ---- */

static size_t page_round(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) / page * page + page;
}

static unsigned char *guarded(size_t bytes)
{
    void *p = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* From now on any access is a SIGSEGV: the call that used it has returned. */
static void put_away(unsigned char *p, size_t bytes)
{
    if (p)
        mprotect(p, page_round(bytes), PROT_NONE);
}

static void unmap(unsigned char *p, size_t bytes)
{
    if (p)
        munmap(p, page_round(bytes));
}

/* ---- The calls ---- */

/* The slow operator: the world's first combine sleeps SLOW_S. */
static void slow_fn(const void *in, void *inout, int64_t count, void *ctx)
{
    world *w = ctx;
    if (atomic_fetch_add(&w->slowed, 1) == 0) {
        struct timespec ts = {(time_t)SLOW_S, (long)((SLOW_S - (double)(time_t)SLOW_S) * 1e9)};
        nanosleep(&ts, NULL);
    }
    trd_op_apply(w->op[w->base.op], in, inout, count);
}

static call_spec spec_of(const world *w, int32_t rank)
{
    call_spec c = w->base;
    if (rank != 0)
        return c;
    switch (w->m) {
    case M_KIND: /* reduce <-> allreduce (trees only: set_up) */
        c.coll = c.coll == TRD_COLL_REDUCE ? TRD_COLL_ALLREDUCE : TRD_COLL_REDUCE;
        c.root = c.coll == TRD_COLL_REDUCE ? w->p - 1 : 0;
        break;
    case M_ROOT: c.root = 0; break;
    case M_COUNT: c.count = COUNT + 1; break;
    case M_ALGO: c.algo = other_algo(c.algo, c.coll); break;
    case M_OP:
        c.op = c.op == RT_MATRIX ? RT_INTERVAL : RT_U64_BXOR; /* the same element size */
        break;
    default: break;
    }
    return c;
}

static trd_status call(const world *w, trd_comm *comm, const call_spec *c, const void *in,
                       void *out)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = c->algo;
    o.costs = w->costs;
    const trd_op *op = w->f == F_SLOW ? w->slow : w->op[c->op];
    switch (c->coll) {
    case TRD_COLL_REDUCE: return trd_reduce(comm, in, out, c->count, op, c->root, &o);
    case TRD_COLL_ALLREDUCE: return trd_allreduce(comm, in, out, c->count, op, &o);
    case TRD_COLL_REDUCE_SCATTER:
        return trd_reduce_scatter_block(comm, in, out, c->count, op, &o);
    case TRD_COLL_SCAN: return trd_scan(comm, in, out, c->count, op, &o);
    default: return trd_exscan(comm, in, out, c->count, op, &o);
    }
}

/* Call k (0: the faulty one, 1: a correct one after it) of rank r. */
static void one_call(world *w, int32_t r, int k)
{
    rank_out *o = &w->out[r];
    call_spec c = k == 0 ? spec_of(w, r) : w->base;
    /* a reduce-scatter's input: p parts of count, rank r's result part r */
    int64_t in_count = c.coll == TRD_COLL_REDUCE_SCATTER ? c.count * w->p : c.count;
    size_t bytes = (size_t)in_count * rt_elem(c.op);
    unsigned char *in = guarded(bytes), *res = guarded(bytes), *want = malloc(bytes);
    rt_fill(c.op, in, in_count, r, SEED);
    memset(res, RT_CANARY, bytes);
    double t0 = rt_now();
    o->st[k] = in && res && want ? call(w, w->comm[r], &c, in, res) : TRD_ENOMEM;
    o->seconds[k] = rt_now() - t0;
    snprintf(o->msg[k], RT_MSG, "%s", o->st[k] == TRD_OK ? "" : trd_errmsg());
    bool gets = c.coll == TRD_COLL_REDUCE ? r == c.root : c.coll != TRD_COLL_EXSCAN || r > 0;
    int32_t hi = c.coll == TRD_COLL_SCAN ? r : c.coll == TRD_COLL_EXSCAN ? r - 1 : w->p - 1;
    size_t at = c.coll == TRD_COLL_REDUCE_SCATTER ? (size_t)(c.count * r) * rt_elem(c.op) : 0;
    if (o->st[k] == TRD_OK && gets && want) {
        rt_expected_ranks(c.op, want, in_count, 0, hi, SEED);
        o->wrong |= rt_first_diff(res, want + at, c.count, rt_elem(c.op)) >= 0;
        o->got_result = true;
    }
    if (o->st[k] != TRD_OK && k == 1 && res)
        o->touched |= !rt_is_canary(res, bytes);
    if (k == 0)
        atomic_fetch_add(&w->returned, 1);
    put_away(in, bytes); /* no peer may read or write them any more */
    put_away(res, bytes);
    o->buf[k][0] = in;
    o->buf[k][1] = res;
    o->bytes[k] = bytes;
    free(want);
}

static void *rank_main(void *arg)
{
    rank_job *j = arg;
    world *w = j->w;
    double t0 = rt_now();
    while (w->f == F_STALL && j->rank == ODD && atomic_load(&w->returned) < w->p - 1 &&
           rt_now() - t0 < STALL_MAX_S) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    one_call(w, j->rank, 0);
    if (w->f == F_SLOW) { /* gone at once: its scratch with it */
        trd_comm_free(w->comm[j->rank]);
        w->comm[j->rank] = NULL;
        return NULL;
    }
    one_call(w, j->rank, 1);
    return NULL;
}

/* ---- Worlds: one per algorithm, all at once ---- */

/* The call every rank makes for algorithm a, and whether case (f, m)
 * applies to it. */
static bool set_up(world *w, size_t a, fault f, mism m)
{
    trd_algo_kind kind = trd_algo_kind_of(a);
    const char *name = trd_algo_name(a);
    *w = (world){.algo = a, .p = P, .f = f, .m = m};
    if (rt_plan_refuses_coll(a, P, false, tu_coll_of(a)))
        w->p = 6; /* star, star-reduce-bcast: p = 3! */
    trd_collective coll = tu_coll_of(a);
    bool nc = !trd_algo_commutative_only(a) && !rt_plan_refuses_coll(a, w->p, true, coll);
    w->base = (call_spec){.algo = name, .coll = coll,
                          .root = coll == TRD_COLL_REDUCE ? w->p - 1 : 0, .count = COUNT,
                          .op = nc ? RT_MATRIX : RT_I64_PROD};
    w->costs = trd_algo_uses_costs(a) ? tu_costs(w->p, 1, 1, 7) : NULL;
    if (m == M_ALGO && nc && trd_algo_commutative_only(rt_algo(other_algo(name, coll))))
        return false; /* no other row of the collective takes the operator */
    if ((m == M_KIND && kind != TRD_KIND_TREE && kind != TRD_KIND_PIPELINED) ||
        (m == M_ROOT && coll != TRD_COLL_REDUCE))
        return false;
    return true;
}

static void open_world(world *w)
{
    for (int i = 0; i < RT_NOPS; i++)
        w->op[i] = rt_op_create((rt_opid)i);
    if (w->f == F_SLOW)
        assert_int_equal(trd_op_user(&w->slow, slow_fn, rt_elem(w->base.op),
                                     trd_op_is_commutative(w->op[w->base.op]), w),
                         TRD_OK);
    trd_threads_opts o = rt_topts(w->f == F_MISMATCH ? MISMATCH_DEADLINE
                                  : w->f == F_DELAY  ? 5.0
                                                     : DEADLINE);
    trd_test_hooks hooks = rt_delays(w->f == F_DELAY ? 2000 : 0, 1);
    if (w->f == F_DEAD)
        hooks.dead_rank = ODD;
    rt_comms_create(w->comm, w->p, &o);
    assert_int_equal(trd_test_hooks_set_all(w->comm, w->p, &hooks), TRD_OK);
}

static void close_world(world *w)
{
    rt_comms_free(w->comm, w->p);
    for (int32_t r = 0; r < w->p; r++)
        for (int k = 0; k < 2; k++)
            for (int b = 0; b < 2; b++)
                unmap(w->out[r].buf[k][b], w->out[r].bytes[k]);
    for (int i = 0; i < RT_NOPS; i++)
        trd_op_free(w->op[i]);
    trd_op_free(w->slow);
}

/* Runs case (f, m) on every algorithm it applies to; worlds[] gets them. */
static size_t run_case(fault f, mism m, world *worlds)
{
    size_t n = 0, nthreads = 0;
    for (size_t a = 0; a < trd_algo_count(); a++)
        if (set_up(&worlds[n], a, f, m))
            nthreads += (size_t)worlds[n++].p;
    pthread_t *tid = calloc(nthreads, sizeof *tid);
    rank_job *job = calloc(nthreads, sizeof *job);
    assert_non_null(tid);
    assert_non_null(job);
    for (size_t i = 0; i < n; i++)
        open_world(&worlds[i]);
    size_t t = 0;
    for (size_t i = 0; i < n; i++)
        for (int32_t r = 0; r < worlds[i].p; r++, t++) {
            job[t] = (rank_job){.w = &worlds[i], .rank = r};
            assert_int_equal(pthread_create(&tid[t], NULL, rank_main, &job[t]), 0);
        }
    for (size_t k = 0; k < t; k++)
        assert_int_equal(pthread_join(tid[k], NULL), 0);
    for (size_t i = 0; i < n; i++)
        close_world(&worlds[i]);
    free(tid);
    free(job);
    return n;
}

/* ---- Checks ---- */

static double deadline_of(fault f)
{
    return f == F_MISMATCH ? MISMATCH_DEADLINE : f == F_DELAY ? 5.0 : DEADLINE;
}

/* What every rank of every world must have seen, whatever the fault. */
static void check_common(const world *w, const char *what)
{
    for (int32_t r = 0; r < w->p; r++) {
        const rank_out *o = &w->out[r];
        for (int k = 0; k < (w->f == F_SLOW ? 1 : 2); k++)
            TU_CHECK(o->seconds[k] <= deadline_of(w->f) + SLACK,
                     "%s, %s: rank %d: call %d took %.3f s (deadline %.1f s): %s", what,
                     trd_algo_name(w->algo), (int)r, k, o->seconds[k], deadline_of(w->f),
                     o->msg[k]);
        TU_CHECK(!o->wrong, "%s, %s: rank %d returned TRD_OK with a wrong result", what,
                 trd_algo_name(w->algo), (int)r);
        TU_CHECK(!o->touched, "%s, %s: rank %d: a refused call changed its buffer", what,
                 trd_algo_name(w->algo), (int)r);
    }
}

/* A faulty world: every rank ends with an error (the faulty call's or
 * the next call's); the next call is refused on every rank with the first
 * failure's code, and its message contains `key`. */
static void check_failed(const world *w, const char *what, const char *key)
{
    trd_status first = TRD_OK;
    for (int32_t r = 0; r < w->p; r++) {
        const rank_out *o = &w->out[r];
        bool dead = w->f == F_DEAD && r == ODD;
        TU_CHECK(o->st[1] != TRD_OK, "%s, %s: rank %d: the call after the fault returned "
                 "TRD_OK", what, trd_algo_name(w->algo), (int)r);
        if (dead) { /* refused as dead, or (started late) with the others' failure */
            TU_CHECK((o->st[0] == TRD_EIO && strstr(o->msg[0], "dead")) ||
                         (o->st[0] != TRD_OK && strstr(o->msg[0], key)),
                     "%s, %s: the dead rank: %d: %s", what, trd_algo_name(w->algo),
                     (int)o->st[0], o->msg[0]);
            continue;
        }
        if (w->f == F_DEAD) /* the silent rank is named, with the call it is in */
            TU_CHECK(strstr(o->msg[1], ": 1 (in call") || strstr(o->msg[1], ", 1 (in call"),
                     "%s, %s: rank %d does not name rank 1 as silent: %s", what,
                     trd_algo_name(w->algo), (int)r, o->msg[1]);
        first = first == TRD_OK ? o->st[1] : first;
        TU_CHECK(o->st[1] == first && strstr(o->msg[1], key),
                 "%s, %s: rank %d: the call after the fault: %d (%s), not %d with '%s': %s",
                 what, trd_algo_name(w->algo), (int)r, (int)o->st[1],
                 trd_strerror(o->st[1]), (int)first, key, o->msg[1]);
        TU_CHECK(o->st[0] == TRD_OK || strstr(o->msg[0], key),
                 "%s, %s: rank %d: the faulty call's error lacks '%s': %s", what,
                 trd_algo_name(w->algo), (int)r, key, o->msg[0]);
    }
}

static void test_delays(void **state)
{
    (void)state;
    world *worlds = calloc(trd_algo_count(), sizeof *worlds);
    size_t n = run_case(F_DELAY, M_NONE, worlds);
    for (size_t i = 0; i < n; i++) {
        check_common(&worlds[i], "delays");
        for (int32_t r = 0; r < worlds[i].p; r++)
            for (int k = 0; k < 2; k++)
                TU_CHECK(worlds[i].out[r].st[k] == TRD_OK, "delays, %s: rank %d call %d: %s",
                         trd_algo_name(worlds[i].algo), (int)r, k, worlds[i].out[r].msg[k]);
    }
    free(worlds);
}

/* The peer whose message the slow combine reads times out meanwhile: its
 * call must not return (and its buffers go) before that combine is done
 * with them.  Some rank of the world fails: at the deadline. */
static void test_slow_combine(void **state)
{
    (void)state;
    world *worlds = calloc(trd_algo_count(), sizeof *worlds);
    size_t n = run_case(F_SLOW, M_NONE, worlds);
    for (size_t i = 0; i < n; i++) {
        const world *w = &worlds[i];
        check_common(w, "slow combine");
        int failed = 0;
        for (int32_t r = 0; r < w->p; r++)
            if (w->out[r].st[0] != TRD_OK) {
                failed++;
                TU_CHECK(w->out[r].st[0] == TRD_ETIMEDOUT && strstr(w->out[r].msg[0], "deadline"),
                         "slow combine, %s: rank %d: %s", trd_algo_name(w->algo), (int)r,
                         w->out[r].msg[0]);
            }
        TU_CHECK(failed > 0, "slow combine, %s: no rank failed", trd_algo_name(w->algo));
    }
    free(worlds);
}

/* Case (f, m) on every algorithm: every world fails, with key. */
static void run_failing(fault f, mism m, const char *what, const char *key)
{
    world *worlds = calloc(trd_algo_count(), sizeof *worlds);
    size_t n = run_case(f, m, worlds);
    for (size_t i = 0; i < n; i++) {
        check_common(&worlds[i], what);
        check_failed(&worlds[i], what, key);
    }
    free(worlds);
}

static void test_stalled_rank(void **state)
{
    (void)state;
    run_failing(F_STALL, M_NONE, "stalled rank", "deadline");
}

static void test_dead_rank(void **state)
{
    (void)state;
    run_failing(F_DEAD, M_NONE, "dead rank", "deadline");
}

static void test_mismatch(void **state)
{
    (void)state;
    for (mism m = M_KIND; m <= M_OP; m++) {
        char what[64];
        snprintf(what, sizeof what, "mismatched %s", mism_names[m]);
        run_failing(F_MISMATCH, m, what, "mismatched collective calls");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delays),       cmocka_unit_test(test_slow_combine),
        cmocka_unit_test(test_stalled_rank), cmocka_unit_test(test_dead_rank),
        cmocka_unit_test(test_mismatch),
    };
    return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}

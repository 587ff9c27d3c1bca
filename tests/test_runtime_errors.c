/* test_runtime_errors.c: bad input to the runtime (treduce.h, "Runtime").
 * Every bad argument gives the right status and a message that names it
 * (trd_errmsg contains the key word), returns at once (no hang: the ranks
 * run with a short deadline and the calls are timed), and loses nothing:
 * sendbuf and recvbuf are exactly as before, and the same communicators
 * then run a correct call.  A dead rank (test hook, deadline 0.5 s) gets
 * TRD_EIO at once; a call larger than the machine's memory is refused
 * before it allocates anything; every rank that needs its contribution (all ranks of an
 * allreduce, the root of a reduce) gets TRD_ETIMEDOUT naming the deadline
 * within 2 s, tree, pipelined, dynamic and exchange algorithms alike. */

#include "runtime_util.h"

#define COUNT 37
#define TIMEOUT_S 5.0 /* argument errors must come back long before this */
#define QUICK_S 1.0   /* ...namely within this */

/* ---- Communicators ---- */

static void test_threads_create_bad_p(void **state)
{
    (void)state;
    const int32_t bad[] = {0, -1, -4096, 4097, 100000, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        trd_comm *comm[4] = {NULL, NULL, NULL, NULL};
        trd_status st = trd_comm_threads_create(comm, bad[i], NULL);
        TU_CHECK(st == TRD_EINVAL, "p = %d: status %d", (int)bad[i], (int)st);
        char key[32];
        snprintf(key, sizeof key, "p = %d", (int)bad[i]);
        TU_CHECK(strstr(trd_errmsg(), key) && strstr(trd_errmsg(), "4096"),
                 "p = %d: message '%s' lacks '%s' or the limit", (int)bad[i], trd_errmsg(), key);
        TU_CHECK(!comm[0] && !comm[1], "p = %d: a communicator was handed out", (int)bad[i]);
    }
    /* the limits themselves work */
    trd_comm *one[1];
    assert_int_equal(trd_comm_threads_create(one, 1, NULL), TRD_OK);
    assert_string_equal(trd_comm_wire(one[0]), "threads");
    assert_string_equal(trd_comm_transport(one[0]), "threads"); /* the older name */
    trd_comm_free(one[0]);
    trd_comm **big = calloc(4096, sizeof *big);
    assert_non_null(big);
    assert_int_equal(trd_comm_threads_create(big, 4096, NULL), TRD_OK);
    for (int r = 0; r < 4096; r++)
        trd_comm_free(big[r]);
    free(big);
    /* NULL array */
    TU_CHECK(trd_comm_threads_create(NULL, 2, NULL) == TRD_EINVAL, "NULL comm array accepted");
}

static void test_threads_create_bad_opts(void **state)
{
    (void)state;
    trd_comm *comm[2] = {NULL, NULL};
    const double bad[] = {0, -1, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        trd_threads_opts o;
        trd_threads_opts_init(&o);
        o.timeout_s = bad[i];
        trd_status st = trd_comm_threads_create(comm, 2, &o);
        TU_CHECK(st == TRD_EINVAL && strstr(trd_errmsg(), "timeout"),
                 "timeout %g: status %d, message '%s'", bad[i], (int)st, trd_errmsg());
        TU_CHECK(!comm[0] && !comm[1], "timeout %g: a communicator was handed out", bad[i]);
    }
}

/* The test hooks (treduce_internal/test_hooks.h) refuse a delay out of range,
 * naming it, and a NULL argument. */
static void test_hooks_bad_delay(void **state)
{
    (void)state;
    trd_comm *comm[2];
    rt_comms_create(comm, 2, NULL);
    const double bad[] = {-1, NAN, INFINITY, 2e6};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        trd_test_hooks h = rt_delays(bad[i], 1);
        trd_status st = trd_test_hooks_set_all(comm, 2, &h);
        TU_CHECK(st == TRD_EINVAL && strstr(trd_errmsg(), "delay"),
                 "delay %g: status %d, message '%s'", bad[i], (int)st, trd_errmsg());
    }
    trd_test_hooks h = rt_delays(10, 1);
    TU_CHECK(trd_test_hooks_set(NULL, &h) == TRD_EINVAL, "NULL comm accepted");
    TU_CHECK(trd_test_hooks_set(comm[0], NULL) == TRD_EINVAL, "NULL hooks accepted");
    TU_CHECK(trd_test_hooks_set_all(comm, 2, &h) == TRD_OK, "delay 10 us refused: %s",
             trd_errmsg());
    rt_comms_free(comm, 2);
}

/* ---- Bad collective calls, run on rank threads ---- */

enum send_kind { S_NORMAL, S_NULL, S_IN_PLACE, S_OVERLAP };
enum recv_kind { R_NORMAL, R_NULL };

typedef struct bad_call {
    const char *what;
    int32_t p;
    bool allreduce;
    int64_t count; /* 0: COUNT (no bad call here has count 0) */
    int32_t root;
    const char *algo;
    int64_t segment_bytes;
    double d, latency, flight;
    double parallelism; /* set when parallelism_set */
    bool parallelism_set, null_op;
    int32_t tune;
    enum send_kind send;
    enum recv_kind recv;
    int32_t only1; /* 0: every rank makes the bad call; r + 1: only rank r */
    trd_status want;
    const char *key[3];
} bad_call;

typedef struct bad_ctx {
    const bad_call *call;
    trd_op *op;
    bool intact[RT_MAX_P];   /* buffers unchanged after the refusal */
    double seconds[RT_MAX_P]; /* of the bad call */
    trd_status follow[RT_MAX_P]; /* the correct call afterwards */
    char follow_msg[RT_MAX_P][RT_MSG];
    char msg[RT_MAX_P][RT_MSG]; /* of the bad call */
    bool follow_ok[RT_MAX_P]; /* ...and its result */
} bad_ctx;

static trd_status bad_rank(trd_comm *comm, int32_t rank, void *arg)
{
    bad_ctx *x = arg;
    const bad_call *b = x->call;
    int32_t p = trd_comm_size(comm);
    trd_status st = TRD_OK;
    /* one buffer holds both for the overlap case: recv 3 elements into send */
    int32_t arena[3 * COUNT], orig[3 * COUNT];
    for (int i = 0; i < 3 * COUNT; i++)
        arena[i] = (int32_t)(rt_word(7, rank, i) & 0x7fffffff);
    memcpy(orig, arena, sizeof arena);
    int32_t *send = arena, *recv = arena + COUNT + 1;
    x->intact[rank] = true;
    if (b->only1 == 0 || b->only1 == rank + 1) {
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        o.algo = b->algo ? b->algo : "binomial";
        o.segment_bytes = b->segment_bytes;
        if (b->d != 0) {
            o.d = b->d;
            o.latency = b->latency;
            o.flight = b->flight;
        }
        if (b->parallelism_set)
            o.parallelism = b->parallelism;
        o.tune = b->tune;
        const void *sb = b->send == S_NULL       ? NULL
                         : b->send == S_IN_PLACE ? TRD_IN_PLACE
                         : b->send == S_OVERLAP  ? (const void *)(recv + 3)
                                                 : (const void *)send;
        void *rb = b->recv == R_NULL ? NULL : recv;
        double t0 = rt_now();
        int64_t count = b->count ? b->count : COUNT;
        st = b->allreduce ? trd_allreduce(comm, sb, rb, count, b->null_op ? NULL : x->op, &o)
                          : trd_reduce(comm, sb, rb, count, b->null_op ? NULL : x->op, b->root,
                                       &o);
        x->seconds[rank] = rt_now() - t0;
        x->intact[rank] = memcmp(arena, orig, sizeof arena) == 0;
    }
    snprintf(x->msg[rank], RT_MSG, "%s", st == TRD_OK ? "" : trd_errmsg());
    /* bad input loses nothing: the same communicators still work */
    int32_t in[COUNT], out[COUNT];
    for (int i = 0; i < COUNT; i++)
        in[i] = rank * 1000 + i;
    x->follow[rank] = trd_allreduce(comm, in, out, COUNT, x->op, NULL);
    snprintf(x->follow_msg[rank], RT_MSG, "%s", x->follow[rank] == TRD_OK ? "" : trd_errmsg());
    x->follow_ok[rank] = true;
    for (int i = 0; i < COUNT && x->follow[rank] == TRD_OK; i++)
        if (out[i] != 1000 * (p * (p - 1) / 2) + p * i)
            x->follow_ok[rank] = false;
    return st;
}

static void run_bad(const bad_call *b)
{
    bad_ctx *x = calloc(1, sizeof *x);
    assert_non_null(x);
    x->call = b;
    x->op = rt_op_create(RT_I32_SUM);
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    rt_result res;
    rt_run(b->p, &topts, bad_rank, x, &res);
    for (int32_t r = 0; r < b->p; r++) {
        bool called = b->only1 == 0 || b->only1 == r + 1;
        if (called) {
            TU_CHECK(res.status[r] == b->want, "%s: rank %d status %d (%s), expected %d: %s",
                     b->what, (int)r, (int)res.status[r], trd_strerror(res.status[r]),
                     (int)b->want, x->msg[r]);
            for (int k = 0; k < 3 && b->key[k]; k++)
                TU_CHECK(strstr(x->msg[r], b->key[k]) != NULL,
                         "%s: rank %d message lacks '%s': %s", b->what, (int)r, b->key[k],
                         x->msg[r]);
            TU_CHECK(x->intact[r], "%s: rank %d: a refused call changed a buffer", b->what,
                     (int)r);
            TU_CHECK(x->seconds[r] < QUICK_S, "%s: rank %d took %.3f s to refuse", b->what,
                     (int)r, x->seconds[r]);
        }
        TU_CHECK(x->follow[r] == TRD_OK && x->follow_ok[r],
                 "%s: rank %d: the correct call after the refusal: status %d%s: %s", b->what,
                 (int)r, (int)x->follow[r], x->follow_ok[r] ? "" : " (wrong result)",
                 x->follow_msg[r]);
    }
    trd_op_free(x->op);
    free(x);
}

#define BAD(...) run_bad(&(bad_call){.p = 4, __VA_ARGS__})
#define ONLY(r) .only1 = (r) + 1

static void test_bad_count(void **state)
{
    (void)state;
    /* more than this machine holds: refused before anything is allocated
     * (the buffers, in place, are far smaller than the count says, and
     * stay untouched), the communicators still usable */
    int64_t big = sysconf(_SC_PHYS_PAGES) * (sysconf(_SC_PAGESIZE) / 16);
    BAD(.what = "a call larger than the machine's memory", .count = big, .send = S_IN_PLACE,
        .allreduce = true, .algo = "flat", .want = TRD_ENOMEM,
        .key = {"GiB on this machine", "scratch", "more than 80%"});
    BAD(.what = "reduce count -1", .count = -1, .want = TRD_EINVAL, .key = {"count = -1"});
    BAD(.what = "allreduce count -5", .count = -5, .allreduce = true, .want = TRD_EINVAL,
        .key = {"count = -5"});
    BAD(.what = "count INT64_MIN", .count = INT64_MIN, .want = TRD_EINVAL, .key = {"count"});
    BAD(.what = "count too large", .count = INT64_MAX / 2, .allreduce = true,
        .want = TRD_EINVAL, .key = {"count", "too large"});
}

/* trd_profile_apply: every value finite and >= 0, the parallelism too,
 * the receive-and-combine saving within [0, 1]; a good profile gives its
 * parallelism to the call's options. */
static void test_bad_profile(void **state)
{
    (void)state;
    const trd_profile good = {.latency = 1e-6, .per_byte = 1e-10, .per_element = 1e-9,
                              .flight = 5e-7, .parallelism = 1.5};
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    TU_CHECK(trd_profile_apply(&good, 1000, 8, &o) == TRD_OK && o.parallelism == 1.5,
             "good profile: %s, parallelism %g", trd_errmsg(), o.parallelism);
    static const struct { const char *key; size_t at; double value; } bad[] = {
        {"parallelism", offsetof(trd_profile, parallelism), -1.0},
        {"parallelism", offsetof(trd_profile, parallelism), NAN},
        {"parallelism", offsetof(trd_profile, parallelism), INFINITY},
        {"recv_combine_saving", offsetof(trd_profile, recv_combine_saving), -0.5},
        {"recv_combine_saving", offsetof(trd_profile, recv_combine_saving), 1.5},
        {"recv_combine_saving", offsetof(trd_profile, recv_combine_saving), NAN},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        trd_profile p = good;
        memcpy((char *)&p + bad[i].at, &bad[i].value, sizeof(double));
        trd_coll_opts_init(&o);
        TU_CHECK(trd_profile_apply(&p, 1000, 8, &o) == TRD_EINVAL &&
                     strstr(trd_errmsg(), bad[i].key) && o.parallelism == 0 &&
                     o.recv_combine_saving == 0,
                 "profile %s %g: %s", bad[i].key, bad[i].value, trd_errmsg());
    }
}

static void test_bad_op_and_comm(void **state)
{
    (void)state;
    BAD(.what = "NULL op reduce", .null_op = true, .want = TRD_EINVAL, .key = {"operator"});
    BAD(.what = "NULL op allreduce", .null_op = true, .allreduce = true, .want = TRD_EINVAL,
        .key = {"operator"});
    trd_op *op = rt_op_create(RT_I32_SUM);
    int32_t in[4] = {1, 2, 3, 4}, out[4] = {9, 9, 9, 9};
    TU_CHECK(trd_reduce(NULL, in, out, 4, op, 0, NULL) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "communicator"),
             "reduce NULL comm: %s", trd_errmsg());
    TU_CHECK(trd_allreduce(NULL, in, out, 4, op, NULL) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "communicator"),
             "allreduce NULL comm: %s", trd_errmsg());
    TU_CHECK(out[0] == 9 && out[3] == 9 && in[0] == 1, "NULL comm: buffers changed");
    TU_CHECK(trd_comm_barrier(NULL) == TRD_EINVAL, "barrier NULL comm");
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    TU_CHECK(trd_comm_calibrate(NULL, op, 4, &o) == TRD_EINVAL, "calibrate NULL comm");
    double t = 0;
    TU_CHECK(trd_comm_predict(NULL, 4, op, 0, false, &o, &t) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "communicator"),
             "predict NULL comm: %s", trd_errmsg());
    assert_int_equal(trd_comm_rank(NULL), -1);
    assert_int_equal(trd_comm_size(NULL), 0);
    trd_comm_free(NULL);
    trd_op_free(op);
}

static void test_bad_root(void **state)
{
    (void)state;
    BAD(.what = "root -1", .root = -1, .want = TRD_EINVAL, .key = {"root = -1", "p = 4"});
    BAD(.what = "root p", .root = 4, .want = TRD_EINVAL, .key = {"root = 4", "p = 4"});
    BAD(.what = "root INT32_MAX", .root = INT32_MAX, .want = TRD_EINVAL, .key = {"root"});
    BAD(.what = "root p, tree-dyn", .root = 4, .algo = "tree-dyn", .want = TRD_EINVAL,
        .key = {"root = 4"});
}

static void test_bad_algo(void **state)
{
    (void)state;
    BAD(.what = "unknown algorithm", .algo = "nope", .want = TRD_ENOALGO,
        .key = {"nope", "binomial", "tree-dyn"});
    BAD(.what = "unknown algorithm, allreduce", .algo = "", .allreduce = true,
        .want = TRD_ENOALGO, .key = {"greedy"});
    /* the message lists every valid name */
    size_t i;
    TU_CHECK(trd_algo_find("nope", &i) == TRD_ENOALGO, "nope found");
    for (size_t a = 0; a < trd_algo_count(); a++)
        TU_CHECK(strstr(trd_errmsg(), trd_algo_name(a)), "'%s' not listed in: %s",
                 trd_algo_name(a), trd_errmsg());
    /* kinds that refuse a call */
    BAD(.what = "tree-dyn allreduce", .algo = "tree-dyn", .allreduce = true,
        .want = TRD_EUNSUPPORTED, .key = {"tree-dyn"});
    BAD(.what = "nc-tree-dyn allreduce", .algo = "nc-tree-dyn", .allreduce = true,
        .want = TRD_EUNSUPPORTED, .key = {"nc-tree-dyn"});
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_runs(a, TRD_COLL_REDUCE))
            continue;
        char what[96];
        snprintf(what, sizeof what, "%s reduce", trd_algo_name(a));
        BAD(.what = what, .algo = trd_algo_name(a), .want = TRD_EUNSUPPORTED,
            .key = {trd_algo_name(a)});
    }
    /* bad cost models of the planners */
    BAD(.what = "negative d", .d = -1, .want = TRD_EINVAL, .key = {"-1"});
    BAD(.what = "latency above d", .d = 1, .latency = 2, .allreduce = true, .want = TRD_EINVAL,
        .key = {"latency"});
    BAD(.what = "flight above latency", .d = 1, .latency = 0.5, .flight = 0.6,
        .want = TRD_EINVAL, .key = {"flight"});
    BAD(.what = "parallelism NaN", .parallelism = NAN, .parallelism_set = true,
        .want = TRD_EINVAL, .key = {"parallelism"});
    BAD(.what = "parallelism -1", .parallelism = -1, .parallelism_set = true, .allreduce = true,
        .want = TRD_EINVAL, .key = {"parallelism = -1"});
    BAD(.what = "parallelism inf, auto", .parallelism = INFINITY, .parallelism_set = true,
        .algo = "auto", .want = TRD_EINVAL, .key = {"parallelism"});
    BAD(.what = "tune -1, auto", .tune = -1, .algo = "auto", .want = TRD_EINVAL,
        .key = {"tune = -1"});
    BAD(.what = "tune 9", .tune = TRD_TUNE_MAX + 1, .allreduce = true, .want = TRD_EINVAL,
        .key = {"tune = 9", "to 8 candidates"});
}

static void test_band_on_double(void **state)
{
    (void)state;
    const trd_op_kind bits[] = {TRD_OP_LAND, TRD_OP_LOR, TRD_OP_BAND, TRD_OP_BOR, TRD_OP_BXOR};
    const trd_type fl[] = {TRD_FLOAT, TRD_DOUBLE};
    for (size_t i = 0; i < 5; i++)
        for (size_t t = 0; t < 2; t++) {
            trd_op *op = (trd_op *)&op; /* must become NULL */
            trd_status st = trd_op_builtin(&op, bits[i], fl[t]);
            TU_CHECK(st == TRD_EINVAL && op == NULL, "%s on %s: status %d",
                     trd_op_kind_name(bits[i]), trd_type_name(fl[t]), (int)st);
            TU_CHECK(strstr(trd_errmsg(), trd_op_kind_name(bits[i])) &&
                         strstr(trd_errmsg(), trd_type_name(fl[t])),
                     "%s on %s: message does not name both: %s", trd_op_kind_name(bits[i]),
                     trd_type_name(fl[t]), trd_errmsg());
        }
}

static void test_bad_buffers(void **state)
{
    (void)state;
    BAD(.what = "NULL sendbuf reduce", .send = S_NULL, .want = TRD_EINVAL, .key = {"sendbuf"});
    BAD(.what = "NULL sendbuf allreduce", .send = S_NULL, .allreduce = true, .want = TRD_EINVAL,
        .key = {"sendbuf", "NULL"});
    /* only the root's recvbuf matters: only the root calls (it must
     * refuse before waiting for anyone) */
    BAD(.what = "NULL recvbuf at the root", .recv = R_NULL, .root = 2, ONLY(2),
        .want = TRD_EINVAL, .key = {"recvbuf", "NULL"});
    BAD(.what = "NULL recvbuf allreduce", .recv = R_NULL, .allreduce = true,
        .want = TRD_EINVAL, .key = {"recvbuf"});
    BAD(.what = "overlap at the root", .send = S_OVERLAP, .root = 1, ONLY(1),
        .want = TRD_EINVAL, .key = {"overlap"});
    BAD(.what = "overlap allreduce", .send = S_OVERLAP, .allreduce = true, .want = TRD_EINVAL,
        .key = {"overlap"});
    BAD(.what = "overlap allreduce ring", .send = S_OVERLAP, .allreduce = true,
        .algo = "ring", .want = TRD_EINVAL, .key = {"overlap"});
    BAD(.what = "TRD_IN_PLACE on a non-root", .send = S_IN_PLACE, .root = 0, ONLY(3),
        .want = TRD_EINVAL, .key = {"TRD_IN_PLACE"});
    BAD(.what = "TRD_IN_PLACE on a non-root, nc-tree-dyn", .send = S_IN_PLACE, .root = 3,
        ONLY(0), .algo = "nc-tree-dyn", .want = TRD_EINVAL, .key = {"TRD_IN_PLACE"});
    BAD(.what = "negative segment_bytes", .segment_bytes = -64, .want = TRD_EINVAL,
        .key = {"segment", "-64"});
    BAD(.what = "negative segment_bytes allreduce", .segment_bytes = -1, .allreduce = true,
        .want = TRD_EINVAL, .key = {"segment"});
}

/* ---- A dead rank ---- */

typedef struct dead_ctx {
    const char *algo;
    bool allreduce;
    rt_opid opid;
    trd_op *op;
} dead_ctx;

static trd_status dead_rank_main(trd_comm *comm, int32_t rank, void *arg)
{
    dead_ctx *x = arg;
    int64_t count = 100;
    unsigned char in[100 * 16], out[100 * 16];
    memset(out, RT_CANARY, sizeof out);
    rt_fill(x->opid, in, count, rank, 3);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    (void)rank;
    return x->allreduce ? trd_allreduce(comm, in, out, count, x->op, &o)
                        : trd_reduce(comm, in, out, count, x->op, 0, &o);
}

static void test_dead_rank(void **state)
{
    (void)state;
    struct {
        const char *algo;
        bool allreduce;
        rt_opid op;
    } cases[] = {{"binomial", false, RT_I32_SUM},    {"chain", false, RT_MATRIX},
                 {"flat", false, RT_I32_SUM},        {"greedy", true, RT_I32_SUM},
                 {"pipeline", false, RT_MATRIX},     {"tree-dyn", false, RT_I32_SUM},
                 {"nc-tree-dyn", false, RT_INTERVAL}, {"recursive-doubling", true, RT_I32_SUM},
                 {"ring", true, RT_I32_SUM},         {"rabenseifner", true, RT_I32_SUM}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dead_ctx x = {.algo = cases[i].algo, .allreduce = cases[i].allreduce,
                      .opid = cases[i].op, .op = rt_op_create(cases[i].op)};
        trd_threads_opts topts = rt_topts(0.5);
        trd_test_hooks hooks = rt_delays(0, 1);
        hooks.dead_rank = 2;
        rt_result res;
        rt_run_hooked(5, &topts, &hooks, dead_rank_main, &x, &res);
        printf("  %-20s", cases[i].algo);
        for (int32_t r = 0; r < 5; r++)
            printf(" %d:%s/%.2fs", (int)r, res.status[r] == TRD_OK ? "ok" : res.status[r] ==
                   TRD_ETIMEDOUT ? "timeout" : res.status[r] == TRD_EIO ? "EIO" : "other",
                   res.seconds[r]);
        printf("\n");
        trd_op_free(x.op);
        if (rt_not_yet(res.status[0], res.msg[0])) {
            char note[160];
            snprintf(note, sizeof note, "skipped %s: %.100s", cases[i].algo, res.msg[0]);
            rt_note_once(note);
            continue;
        }
        TU_CHECK(res.status[2] == TRD_EIO && strstr(res.msg[2], "dead"),
                 "%s: the dead rank: status %d: %s", cases[i].algo, (int)res.status[2],
                 res.msg[2]);
        TU_CHECK(res.seconds[2] < 0.1, "%s: the dead rank took %.3f s", cases[i].algo,
                 res.seconds[2]);
        for (int32_t r = 0; r < 5; r++) {
            if (r == 2)
                continue;
            /* every rank that needs rank 2's contribution must time out:
             * all of an allreduce, the root of a reduce; a reduce's other
             * ranks may finish their part (their sends need not wait) */
            bool must = cases[i].allreduce || r == 0;
            if (!must && res.status[r] == TRD_OK)
                continue;
            TU_CHECK(res.status[r] == TRD_ETIMEDOUT && strstr(res.msg[r], "deadline"),
                     "%s: rank %d: status %d (%s): %s", cases[i].algo, (int)r,
                     (int)res.status[r], trd_strerror(res.status[r]), res.msg[r]);
            TU_CHECK(res.seconds[r] >= 0.45 && res.seconds[r] < 2.0,
                     "%s: rank %d gave up after %.3f s (deadline 0.5 s per wait)",
                     cases[i].algo, (int)r, res.seconds[r]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_create_bad_p),
        cmocka_unit_test(test_bad_count),
        cmocka_unit_test(test_bad_op_and_comm),
        cmocka_unit_test(test_bad_profile),
        cmocka_unit_test(test_bad_root),
        cmocka_unit_test(test_bad_algo),
        cmocka_unit_test(test_band_on_double),
        cmocka_unit_test(test_bad_buffers),
        cmocka_unit_test(test_dead_rank), cmocka_unit_test(test_hooks_bad_delay),
        /* last: a crash here (there was one: comm.c freed uninitialised
         * handles when the wire refused its options) must not hide
         * the others */
        cmocka_unit_test(test_threads_create_bad_opts),
    };
    return cmocka_run_group_tests_name("runtime_errors", tests, NULL, NULL);
}

/* test_threads_claim.c: the threads wire's matching order (also between
 * the eager rings and the mailbox's lock) and its claims (white box:
 * wire.h), and allreduces whose combines are written straight
 * into the peer's result (exec.c, claim_recv): claims made, results
 * checked against the rank-order fold.
 *
 * usage: test_threads_claim [PATTERN [SKIP]] (cmocka filters). */
#include "runtime_util.h"
#include "runtime/comm.h" /* a communicator's wire: the claims it made */
#include "wire/threads.h" /* the wire itself, for its matching order */
#include "wire/threads_world.h" /* TRD_EAGER_SLOTS */

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

/* Three messages of one sender and tag, the sends posted before the
 * receives or after them: each receive gets them in sending order. */
static void check_one_tag_order(trd_wire *w)
{
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
}

/* Small sends go through the sender's ring, large ones and those that
 * find the ring full through the mailbox's lock (threads_eager.c): of one
 * sender and tag, they still match in sending order. */
static void check_mixed_order(trd_wire *w)
{
    enum { N = TRD_EAGER_SLOTS + 6, BIG = 3, BIG2 = TRD_EAGER_SLOTS + 2 };
    unsigned char out[N][96], in[N][96];
    memset(in, 0, sizeof in);
    for (int i = 0; i < N; i++) {
        memset(out[i], i + 1, sizeof out[i]);
        size_t bytes = i == BIG || i == BIG2 ? sizeof out[i] : 8;
        assert_int_equal(w[0].isend(w[0].ctx, 1, 7, out[i], bytes, i), TRD_OK);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(w[1].irecv(w[1].ctx, 0, 7, in[i], sizeof in[i], 100 + i), TRD_OK);
    for (int i = 0; i < N; i++) {
        int32_t id, from;
        assert_int_equal(w[1].wait(w[1].ctx, 2.0, &id, &from), TRD_OK);
    }
    for (int i = 0; i < N; i++)
        TU_CHECK(in[i][0] == i + 1 && in[i][95] == (i == BIG || i == BIG2 ? i + 1 : 0),
                 "receive %d got message %d (%s)", i, in[i][0] - 1,
                 in[i][95] ? "large" : "small");
    for (int i = 0; i < N; i++) {
        int32_t id, from;
        assert_int_equal(w[0].wait(w[0].ctx, 2.0, &id, &from), TRD_OK);
    }
}

/* A message longer than its receive is an error naming both sizes: a
 * rendezvous send's at once, an eager one's (through its ring) at the
 * receiver's wait, which fails the world, so the sender's next wait too. */
static void check_too_long(bool eager)
{
    trd_wire w[2];
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, 2, &topts), TRD_OK);
    char a[96] = {0}, x[8];
    size_t bytes = eager ? 24 : sizeof a, want = eager ? 24 : 96;
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 4, x, sizeof x, 40), TRD_OK);
    trd_status st = w[0].isend(w[0].ctx, 1, 4, a, bytes, 41);
    if (eager) {
        TU_CHECK(st == TRD_OK, "eager send: status %d: %s", (int)st, trd_errmsg());
        int32_t id, from;
        st = w[1].wait(w[1].ctx, 2.0, &id, &from);
    }
    char size[32];
    snprintf(size, sizeof size, "%zu bytes", want);
    TU_CHECK(st == TRD_EIO && strstr(trd_errmsg(), size) && strstr(trd_errmsg(), "at most 8"),
             "%zu bytes into 8: status %d: %s", bytes, (int)st, trd_errmsg());
    int32_t id, from;
    st = w[0].wait(w[0].ctx, 2.0, &id, &from);
    TU_CHECK(st == TRD_EIO, "sender after the failure: status %d", (int)st);
    for (int r = 0; r < 2; r++)
        w[r].free(w[r].ctx);
}

static void test_wire_threads_order(void **state)
{
    (void)state;
    trd_wire w[3];
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, 3, &topts), TRD_OK);
    int64_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, x[4], y[4];
    check_one_tag_order(w);
    check_mixed_order(w);
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
    for (int r = 0; r < 3; r++)
        w[r].free(w[r].ctx);
    check_too_long(false);
    check_too_long(true);
    /* nothing posted: the wait times out (no hang) */
    assert_int_equal(trd_wire_threads_create(w, 3, &topts), TRD_OK);
    int32_t id, from;
    double t0 = rt_now();
    trd_status st = w[2].wait(w[2].ctx, 0.05, &id, &from);
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
 * the send's size into a buffer, larger than an eager send's;
 * isend_claimed completes both ends. */
static void test_wire_threads_claim(void **state)
{
    (void)state;
    trd_wire w[2];
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, 2, &topts), TRD_OK);
    int64_t a[16] = {1, 2, 3, 4}, b[16] = {5, 6, 7, 8}, x[16] = {0}, y[16] = {0};
    _Static_assert(sizeof a > TRD_EAGER_BYTES, "a claimed message is larger than an eager one");
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
    /* a receive an eager send would fill is left to it */
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 6, x, TRD_EAGER_BYTES, 14), TRD_OK);
    assert_int_equal(w[0].claim_recv(w[0].ctx, 1, 6, TRD_EAGER_BYTES, &dst, &h), TRD_OK);
    TU_CHECK(dst == NULL, "claimed a receive of %d bytes, small enough to be eager",
             TRD_EAGER_BYTES);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 6, b, TRD_EAGER_BYTES, 5), TRD_OK);
    wire_wait(&w[1], 14, 0);
    TU_CHECK(memcmp(x, b, TRD_EAGER_BYTES) == 0, "the eager message was not delivered");
    TU_CHECK(trd_wire_threads_claims(&w[0]) == 1 && trd_wire_threads_claims(&w[1]) == 0,
             "claims counted: %lld and %lld", (long long)trd_wire_threads_claims(&w[0]),
             (long long)trd_wire_threads_claims(&w[1]));
    for (int r = 0; r < 2; r++)
        w[r].free(w[r].ctx);
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
    rt_run_all_ok(p, claimed_rank, &x, what, delay_us);
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

int main(int argc, char **argv)
{
    rt_filters(argc, argv);
    const struct CMUnitTest tests[] = {
        RT_TIMED(test_wire_threads_order),
        RT_TIMED(test_wire_threads_claim),
        RT_TIMED(test_claimed_allreduce),
    };
    return cmocka_run_group_tests_name("threads_claim", tests, NULL, NULL);
}

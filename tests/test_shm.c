/* test_shm.c: the shared-memory rings of the MPI wire (src/wire_mpi/shm.c)
 * driven directly, every rank's end of one segment in this process (the
 * rings need no MPI: mpi.c only tells the ranks the segment's name).
 *
 * Oracle: wire.h's matching rule written down here - the k-th receive
 * posted for (sender, tag) gets the k-th message that sender sent with that
 * tag - checked on random interleavings of sends, receives and polls
 * (rings full, messages set aside, every size from 0 to 256 bytes through
 * slots of 1 to 256 bytes, so messages of up to 256 fragments, set aside
 * half-arrived), with bytes that name their message.  Also: TRD_ANY_RANK
 * keeping each sender's order, a message longer than its receive (TRD_EIO
 * from the next poll, naming both sizes; the next message still arrives
 * whole), two threads exchanging through the rings (the release/acquire
 * protocol: a torn or stale message or fragment fails the byte check), a
 * message of another call than its receive (TRD_EIO naming both calls,
 * the receive never completed, whether the message came first or the
 * receive), the failure flag of the segment (every rank's next poll
 * returns the first failure set, with its rank, code and text), the
 * refusals and size arithmetic, and the cost of long queues: n receives
 * posted and n sends waiting for a full ring, taken in order, cost O(n)
 * (8 times as many well under 64 times the CPU time: a scan of every
 * waiting send at each poll, and a memmove at each receive taken from
 * the front, made them quadratic). */
#include <pthread.h>
#include <time.h>

#include "core/splitmix.h"
#include "engine/transport.h" /* TRD_ANY_RANK */
#include "testutil.h"
#include "wire_mpi/shm.h"

/* The call signature every message of these tests carries (callsig.h). */
#define SIG 0x5eed000000000007ULL

/* Ranks 0 .. n-1 of one new segment (rank 0 creates it; the name is
 * unlinked once all have mapped it, as mpi.c does). */
static void open_all(trd_shm **s, int32_t n, size_t frag)
{
    char name[64];
    assert_int_equal(trd_shm_open(&s[0], name, true, 0, n, frag), TRD_OK);
    for (int32_t r = 1; r < n; r++)
        assert_int_equal(trd_shm_open(&s[r], name, false, r, n, frag), TRD_OK);
    trd_shm_unlink(name);
}

static void close_all(trd_shm **s, int32_t n)
{
    for (int32_t r = 0; r < n; r++)
        trd_shm_free(s[r]);
}

/* The byte i of message m: different for every message and position. */
static unsigned char byte_of(int32_t m, size_t i)
{
    return (unsigned char)(trd_mix64((uint64_t)m * 1000003u + i) & 0xff);
}

#define MSGS 200
#define MAX 256

typedef struct message {
    int32_t tag;
    size_t bytes;
    unsigned char data[MAX];
} message;

typedef struct receive {
    int32_t tag, expect; /* the message the oracle says it gets */
    unsigned char buf[MAX];
    bool done;
} receive;

/* Pops every completion of rank r's FIFO, marking sends and receives done
 * (ids: sends 0..MSGS-1, receives 1000 + k). */
static void collect(trd_fifo *done, bool *sent, receive *recv, int32_t want_from)
{
    trd_completion c;
    while (trd_fifo_pop(done, &c)) {
        if (c.id < 1000) {
            TU_CHECK(c.from == -1 && !sent[c.id], "send %d completed twice or as a receive",
                     (int)c.id);
            sent[c.id] = true;
        } else {
            receive *r = &recv[c.id - 1000];
            TU_CHECK(c.from == want_from && !r->done, "receive %d: from %d, done %d",
                     (int)(c.id - 1000), (int)c.from, (int)r->done);
            r->done = true;
        }
    }
}

/* Rank 1 sends MSGS messages of random tags (0..2) and sizes (0..MAX) to
 * rank 0 through slots of frag bytes; rank 0 posts MSGS receives in an
 * order the oracle can answer; sends, receives and both ranks' polls
 * interleave at random. */
static void random_run(uint64_t seed, size_t frag)
{
    trd_shm *s[2];
    open_all(s, 2, frag);
    static message msg[MSGS];
    static receive recv[MSGS];
    bool sent[MSGS] = {false};
    int32_t per_tag[3][MSGS], ntag[3] = {0, 0, 0}, taken[3] = {0, 0, 0};
    for (int32_t m = 0; m < MSGS; m++) {
        msg[m].tag = (int32_t)(trd_splitmix64(&seed) % 3);
        msg[m].bytes = (size_t)(trd_splitmix64(&seed) % (MAX + 1));
        for (size_t i = 0; i < msg[m].bytes; i++)
            msg[m].data[i] = byte_of(m, i);
        per_tag[msg[m].tag][ntag[msg[m].tag]++] = m;
    }
    /* The receives: each message's tag, in a shuffled order; the oracle's
     * answer is the next unclaimed message of that tag. */
    int32_t order[MSGS];
    for (int32_t m = 0; m < MSGS; m++)
        order[m] = m;
    for (int32_t m = MSGS - 1; m > 0; m--) {
        int32_t j = (int32_t)(trd_splitmix64(&seed) % (uint64_t)(m + 1)), t = order[m];
        order[m] = order[j];
        order[j] = t;
    }
    for (int32_t k = 0; k < MSGS; k++) {
        int32_t tag = msg[order[k]].tag;
        recv[k] = (receive){.tag = tag, .expect = per_tag[tag][taken[tag]++]};
    }
    trd_fifo done[2] = {{0}, {0}};
    int32_t next_send = 0, next_recv = 0;
    for (long step = 0; step < 100000; step++) {
        bool progress = false;
        uint64_t what = trd_splitmix64(&seed) % 4;
        if (what == 0 && next_send < MSGS) {
            const message *m = &msg[next_send];
            assert_int_equal(trd_shm_isend(s[1], 0, m->tag, SIG, m->data, m->bytes, next_send,
                                           &done[1]), TRD_OK);
            next_send++;
        } else if (what == 1 && next_recv < MSGS) {
            receive *r = &recv[next_recv];
            assert_int_equal(trd_shm_irecv(s[0], 1, r->tag, SIG, r->buf, MAX, 1000 + next_recv,
                                           &done[0]), TRD_OK);
            next_recv++;
        } else {
            assert_int_equal(trd_shm_poll(s[what % 2], &done[what % 2], &progress), TRD_OK);
        }
        collect(&done[1], sent, recv, 1);
        collect(&done[0], sent, recv, 1);
        if (next_send == MSGS && next_recv == MSGS) {
            int recvs, sends;
            trd_shm_pending(s[0], &recvs, &sends);
            int recvs1, sends1;
            trd_shm_pending(s[1], &recvs1, &sends1);
            if (recvs + sends + recvs1 + sends1 == 0)
                break;
        }
    }
    for (int32_t k = 0; k < MSGS; k++) {
        const message *m = &msg[recv[k].expect];
        TU_CHECK(recv[k].done && sent[recv[k].expect], "seed %llu: receive %d not done",
                 (unsigned long long)seed, (int)k);
        TU_CHECK(memcmp(recv[k].buf, m->data, m->bytes) == 0,
                 "receive %d (tag %d) did not get message %d", (int)k, (int)recv[k].tag,
                 (int)recv[k].expect);
    }
    free(done[0].items);
    free(done[1].items);
    close_all(s, 2);
}

static void test_random_matching(void **state)
{
    (void)state;
    const size_t frags[] = {1, 64, 100, MAX};
    for (uint64_t seed = 1; seed <= 40; seed++)
        random_run(seed * 7919, frags[seed % 4]);
}

/* Ranks 1 and 2 each send 20 numbered messages with tag 5 to rank 0,
 * which receives them all from TRD_ANY_RANK: each sender's numbers arrive
 * in its sending order. */
static void test_any_rank(void **state)
{
    (void)state;
    trd_shm *s[3];
    open_all(s, 3, 64);
    trd_fifo done[3] = {{0}, {0}, {0}};
    int32_t val[2][20], got[40];
    for (int32_t k = 0; k < 20; k++)
        for (int32_t r = 1; r <= 2; r++) {
            val[r - 1][k] = r * 100 + k;
            assert_int_equal(trd_shm_isend(s[r], 0, 5, SIG, &val[r - 1][k], sizeof(int32_t), k,
                                           &done[r]), TRD_OK);
        }
    for (int32_t k = 0; k < 40; k++)
        assert_int_equal(trd_shm_irecv(s[0], TRD_ANY_RANK, 5, SIG, &got[k], sizeof got[k], k,
                                       &done[0]), TRD_OK);
    for (int round = 0; round < 100; round++)
        for (int32_t r = 0; r < 3; r++) {
            bool progress = false;
            assert_int_equal(trd_shm_poll(s[r], &done[r], &progress), TRD_OK);
        }
    assert_int_equal(done[0].len, 40);
    int32_t last[3] = {-1, -1, -1};
    trd_completion c;
    while (trd_fifo_pop(&done[0], &c)) {
        int32_t from = got[c.id] / 100, k = got[c.id] % 100;
        TU_CHECK(c.from == from && k > last[from], "receive %d: %d from rank %d after %d",
                 (int)c.id, (int)got[c.id], (int)c.from, (int)last[from]);
        last[from] = k;
    }
    TU_CHECK(last[1] == 19 && last[2] == 19, "last %d %d", (int)last[1], (int)last[2]);
    for (int32_t r = 0; r < 3; r++)
        free(done[r].items);
    close_all(s, 3);
}

/* 16 bytes into an 8-byte receive: the receive never completes and the
 * next poll fails with both sizes; the receive counts as pending.  With
 * 4-byte slots the message is 4 fragments, skipped to the end: the next
 * message, posted before or after it came (a stray), arrives whole. */
static void too_long(size_t frag, bool stray)
{
    trd_shm *s[2];
    open_all(s, 2, frag);
    trd_fifo done[2] = {{0}, {0}};
    char text[16] = "0123456789abcde", next[12] = "next message", buf[8], got[12];
    assert_int_equal(trd_shm_isend(s[1], 0, 6, SIG, text, 16, 1, &done[1]), TRD_OK);
    assert_int_equal(trd_shm_irecv(s[0], 1, 6, SIG, buf, 8, 2, &done[0]), TRD_OK);
    int recvs, sends;
    trd_shm_pending(s[0], &recvs, &sends);
    assert_int_equal(recvs, 1);
    if (!stray)
        assert_int_equal(trd_shm_irecv(s[0], 1, 6, SIG, got, 12, 3, &done[0]), TRD_OK);
    assert_int_equal(trd_shm_isend(s[1], 0, 6, SIG, next, 12, 4, &done[1]), TRD_OK);
    bool progress = false;
    assert_int_equal(trd_shm_poll(s[0], &done[0], &progress), TRD_EIO);
    TU_CHECK(strstr(trd_errmsg(), "16 bytes") && strstr(trd_errmsg(), "8-byte"), "%s",
             trd_errmsg());
    if (stray)
        assert_int_equal(trd_shm_irecv(s[0], 1, 6, SIG, got, 12, 3, &done[0]), TRD_OK);
    trd_completion c;
    TU_CHECK(trd_fifo_pop(&done[0], &c) && c.id == 3 && c.from == 1 && done[0].len == 0,
             "frag %zu: the message after the long one did not complete alone", frag);
    TU_CHECK(memcmp(got, next, 12) == 0, "frag %zu: the next message came wrong", frag);
    free(done[0].items);
    free(done[1].items);
    close_all(s, 2);
}

static void test_too_long(void **state)
{
    (void)state;
    too_long(64, false);
    too_long(4, false);
    too_long(4, true);
}

/* Two threads, ranks 0 and 1, each sending the other ROUNDS messages of
 * every size up to MAX, in fragments, and checking every byte received. */
#define ROUNDS 3000
typedef struct pinger {
    trd_shm *s;
    int32_t me;
    int bad;
} pinger;

static void *ping(void *arg)
{
    pinger *p = arg;
    trd_fifo done = {0};
    unsigned char out[MAX], in[MAX];
    for (int32_t k = 0; k < ROUNDS && !p->bad; k++) {
        size_t bytes = (size_t)k % (MAX + 1);
        for (size_t i = 0; i < bytes; i++)
            out[i] = byte_of(k * 2 + p->me, i);
        if (trd_shm_isend(p->s, 1 - p->me, 0, SIG, out, bytes, 0, &done) != TRD_OK ||
            trd_shm_irecv(p->s, 1 - p->me, 0, SIG, in, bytes, 1, &done) != TRD_OK)
            p->bad = 1;
        while (done.len < 2 && !p->bad) {
            bool progress = false;
            p->bad = trd_shm_poll(p->s, &done, &progress) != TRD_OK;
        }
        trd_completion c[2];
        if (!p->bad && trd_fifo_pop(&done, &c[0]) && trd_fifo_pop(&done, &c[1]))
            p->bad = c[0].id + c[1].id != 1 || c[0].from + c[1].from != 1 - p->me - 1;
        for (size_t i = 0; i < bytes && !p->bad; i++)
            p->bad = in[i] != byte_of(k * 2 + 1 - p->me, i);
    }
    free(done.items);
    return NULL;
}

static void test_two_threads(void **state)
{
    (void)state;
    trd_shm *s[2];
    open_all(s, 2, 48); /* messages of up to 6 fragments */
    pinger p[2] = {{s[0], 0, 0}, {s[1], 1, 0}};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, ping, &p[1]), 0);
    ping(&p[0]);
    pthread_join(t, NULL);
    TU_CHECK(!p[0].bad && !p[1].bad, "a message arrived wrong: rank 0 %d, rank 1 %d",
             p[0].bad, p[1].bad);
    close_all(s, 2);
}

/* A message of call other into a receive of call SIG: refused by the next
 * poll with both calls named, the receive never completed; posted before
 * the message came (matched on its first fragment) or after (a stray). */
static void other_call(bool stray)
{
    const uint64_t other = SIG + 1; /* the next call, same arguments */
    trd_shm *s[2];
    open_all(s, 2, 4);
    trd_fifo done[2] = {{0}, {0}};
    char text[12] = "other call.", buf[12] = "untouched..";
    if (!stray)
        assert_int_equal(trd_shm_irecv(s[0], 1, 3, SIG, buf, 12, 2, &done[0]), TRD_OK);
    assert_int_equal(trd_shm_isend(s[1], 0, 3, other, text, 12, 1, &done[1]), TRD_OK);
    bool progress = false;
    trd_status st = TRD_OK;
    if (stray) { /* set aside first, then handed to the receive */
        assert_int_equal(trd_shm_poll(s[0], &done[0], &progress), TRD_OK);
        assert_int_equal(trd_shm_irecv(s[0], 1, 3, SIG, buf, 12, 2, &done[0]), TRD_OK);
    }
    st = trd_shm_poll(s[0], &done[0], &progress);
    TU_CHECK(st == TRD_EIO && strstr(trd_errmsg(), "mismatched collective calls") &&
                 strstr(trd_errmsg(), "another call") && strstr(trd_errmsg(), "call 7"),
             "%s: status %d: %s", stray ? "stray" : "posted first", (int)st, trd_errmsg());
    TU_CHECK(done[0].len == 0 && memcmp(buf, "untouched..", 12) == 0,
             "%s: the receive took a message of another call", stray ? "stray" : "posted first");
    free(done[0].items);
    free(done[1].items);
    close_all(s, 2);
}

static void test_other_call(void **state)
{
    (void)state;
    other_call(false);
    other_call(true);
}

/* A rank's failure reaches every rank of the segment at its next poll;
 * the first failure stays. */
static void test_failure_flag(void **state)
{
    (void)state;
    trd_shm *s[3];
    open_all(s, 3, 64);
    trd_fifo done = {0};
    bool progress = false;
    int32_t rank = -1, code = 0;
    char text[64];
    TU_CHECK(!trd_shm_failure(s[0], &rank, &code, text, sizeof text), "failed at creation");
    assert_int_equal(trd_shm_poll(s[0], &done, &progress), TRD_OK);
    trd_shm_fail(s[2], 2, TRD_ETIMEDOUT, "rank 2 saw nothing before its deadline");
    trd_shm_fail(s[1], 1, TRD_EIO, "a later failure");
    for (int32_t r = 0; r < 3; r++) {
        trd_status st = trd_shm_poll(s[r], &done, &progress);
        TU_CHECK(st == TRD_ETIMEDOUT && strstr(trd_errmsg(), "rank 2 failed") &&
                     strstr(trd_errmsg(), "before its deadline"),
                 "rank %d: status %d: %s", (int)r, (int)st, trd_errmsg());
        TU_CHECK(trd_shm_failure(s[r], &rank, &code, text, sizeof text) && rank == 2 &&
                     code == TRD_ETIMEDOUT && strstr(text, "deadline"),
                 "rank %d reads rank %d, code %d: %s", (int)r, (int)rank, (int)code, text);
    }
    close_all(s, 3);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 1 posts n sends of 8 bytes to rank 0 (all but a ring's wait for
 * room), rank 0 n receives (most wait for their message); both poll
 * until all are done: CPU seconds. */
static double queued_run(int32_t n)
{
    trd_shm *s[2];
    trd_fifo done[2] = {{0}, {0}};
    open_all(s, 2, 64);
    uint64_t *in = calloc((size_t)n, sizeof *in), *out = calloc((size_t)n, sizeof *out);
    assert_true(in && out);
    double t0 = cpu_now();
    for (int32_t k = 0; k < n; k++) { /* the ring fills: the others wait */
        out[k] = (uint64_t)k;
        assert_int_equal(trd_shm_isend(s[1], 0, k, SIG, &out[k], 8, k, &done[1]), TRD_OK);
    }
    for (int32_t k = 0; k < n; k++)
        assert_int_equal(trd_shm_irecv(s[0], 1, k, SIG, &in[k], 8, k, &done[0]), TRD_OK);
    for (size_t got = 0; got < (size_t)n || done[1].len < (size_t)n;) {
        bool progress = false;
        assert_int_equal(trd_shm_poll(s[1], &done[1], &progress), TRD_OK);
        assert_int_equal(trd_shm_poll(s[0], &done[0], &progress), TRD_OK);
        trd_completion c;
        while (trd_fifo_pop(&done[0], &c))
            got++;
    }
    double t = cpu_now() - t0;
    for (int32_t k = 0; k < n; k++)
        TU_CHECK(in[k] == (uint64_t)k, "message %d: got %llu", (int)k, (unsigned long long)in[k]);
    close_all(s, 2);
    free(in);
    free(out);
    free(done[0].items);
    free(done[1].items);
    return t;
}

static void test_long_queues(void **state)
{
    (void)state;
    double small = 1e30, large = 1e30;
    for (int k = 0; k < 3; k++) {
        double a = queued_run(4096), b = queued_run(32768);
        small = a < small ? a : small;
        large = b < large ? b : large;
    }
    TU_CHECK(large < 32 * small + 0.005, "4096 queued messages took %.4f s, 32768 %.4f s "
             "(%.1fx): more than linear", small, large, large / small);
}

static void test_refusals_and_sizes(void **state)
{
    (void)state;
    trd_shm *s = NULL;
    char name[64];
    assert_int_equal(trd_shm_open(&s, name, true, 0, 1, 64), TRD_EINVAL); /* one rank */
    assert_int_equal(trd_shm_open(&s, name, true, 2, 2, 64), TRD_EINVAL); /* rank >= n */
    assert_int_equal(trd_shm_open(&s, name, true, 0, 2, 0), TRD_EINVAL);  /* no bytes */
    assert_int_equal(trd_shm_open(&s, name, true, 0, 2, TRD_SHM_SEGMENT_MAX), TRD_EINVAL);
    TU_CHECK(s == NULL, "a refused open left a handle");
    strcpy(name, "/treduce-test-no-such-segment");
    assert_int_equal(trd_shm_open(&s, name, false, 1, 2, 64), TRD_EBACKEND);
    /* The limit shrinks with the ranks so that n * n rings fit the cap. */
    assert_int_equal(trd_shm_fit(2, 16384), 16384);
    assert_int_equal(trd_shm_fit(0, 16384), 0);
    for (int32_t n = 2; n <= 4096; n *= 2) {
        size_t max = trd_shm_fit(n, 16384);
        TU_CHECK(max == 0 || trd_shm_segment_bytes(n, max) <= TRD_SHM_SEGMENT_MAX,
                 "n = %d: %zu bytes", (int)n, trd_shm_segment_bytes(n, max));
        TU_CHECK(max == 0 || max == 16384 ||
                     trd_shm_segment_bytes(n, max + 64) > TRD_SHM_SEGMENT_MAX,
                 "n = %d: limit %zu is not the largest that fits", (int)n, max);
    }
    assert_int_equal(trd_shm_fit(4096, 16384), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_matching),
        cmocka_unit_test(test_any_rank),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_other_call),
        cmocka_unit_test(test_failure_flag),
        cmocka_unit_test(test_long_queues),
        cmocka_unit_test(test_refusals_and_sizes),
    };
    return cmocka_run_group_tests_name("shm", tests, NULL, NULL);
}

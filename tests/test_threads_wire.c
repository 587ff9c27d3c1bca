/* test_threads_wire.c: the threads wire's own paths (src/wire/threads*.c)
 * under concurrency, apart from the collectives that use it:
 *   - a small send is eager: it completes before its receive is posted,
 *     and the receive gets the bytes the buffer held at the post, not
 *     what the sender wrote into it after the completion; a consuming
 *     receive gets them aligned as malloc's buffers (it combines elements
 *     straight from them); a large one,
 *     or a small one to a rank still in an earlier call, waits for its
 *     receive (a sender never runs ahead of its receiver's calls; a rank
 *     is in a call from its set_call on, posted or not);
 *   - rings of many rounds, eager and rendezvous sizes alternated, with
 *     barriers and agreements between them, with a core per rank and with
 *     more ranks than this machine has cores (the waits then sleep):
 *     every byte checked against its sender and round, every agreement
 *     against the largest value;
 *   - a fan-in: 23 ranks send small messages to rank 0 round after round,
 *     more senders than a box's drains read each time (the others queue
 *     their rings on it): every message arrives, in each sender's order;
 *   - the mailboxes' lock (trd_lock) excludes: threads that add to one
 *     plain counter under it, with a core each and with more threads than
 *     cores (then its waiters sleep), lose no addition.  Built with -fsanitize=thread too, this is
 *     the race check of the lock-free waits and barrier;
 *   - a rank that waits long for a message or in a barrier sleeps, with a
 *     core of its own and with more ranks than cores: its CPU time over
 *     the wait is a small part of it. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "runtime_util.h"
#include "wire/threads.h"
#include "wire/threads_world.h" /* TRD_EAGER_BYTES */

#define TIMEOUT_S 10.0
#define ROUNDS 400
#define BIG (4 * TRD_EAGER_BYTES)

static trd_status wait_one(trd_wire *w, double timeout_s, int32_t *id)
{
    int32_t from;
    return w->wait(w->ctx, timeout_s, id, &from);
}

static void free_all(trd_wire *w, int p)
{
    for (int r = 0; r < p; r++)
        w[r].free(w[r].ctx);
}

/* Takes a message of doubles where it lies, as a combine would. */
static trd_status consume_doubles(void *arg, const void *data, size_t bytes)
{
    double *sum = arg;
    if ((uintptr_t)data % _Alignof(max_align_t) != 0)
        return trd_fail(TRD_EIO, "consumed bytes at %p, not aligned to %zu", data,
                        _Alignof(max_align_t));
    for (size_t i = 0; i < bytes / sizeof(double); i++)
        *sum += ((const double *)data)[i];
    return TRD_OK;
}

static void test_eager(void **state)
{
    (void)state;
    trd_wire w[2];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    trd_call_sig call[2] = {{.hash = 7, .seq = 1}, {.hash = 7, .seq = 1}};
    assert_int_equal(trd_wire_threads_create(w, 2, &topts), TRD_OK);
    for (int r = 0; r < 2; r++)
        w[r].set_call(w[r].ctx, &call[r]);
    int64_t a = 42, x = 0, other = 0;
    int32_t id = -1;
    /* rank 1 is in call 1: it has posted a receive of another tag */
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 9, &other, sizeof other, 20), TRD_OK);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 3, &a, sizeof a, 1), TRD_OK);
    trd_status st = wait_one(&w[0], 0.2, &id);
    TU_CHECK(st == TRD_OK && id == 1, "a small send did not complete before its receive was "
             "posted: status %d id %d", (int)st, (int)id);
    a = -1; /* the sender's buffer is its own again */
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 3, &x, sizeof x, 10), TRD_OK);
    st = wait_one(&w[1], TIMEOUT_S, &id);
    TU_CHECK(st == TRD_OK && id == 10 && x == 42, "eager receive: status %d id %d got %lld, "
             "expected 42", (int)st, (int)id, (long long)x);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 9, &a, sizeof a, 2), TRD_OK);
    st = wait_one(&w[1], TIMEOUT_S, &id);
    TU_CHECK(st == TRD_OK && id == 20 && other == -1, "second receive: status %d id %d",
             (int)st, (int)id);
    assert_int_equal(wait_one(&w[0], TIMEOUT_S, &id), TRD_OK);
    double d[3] = {1, 2, 4}, sum = 0;
    assert_int_equal(w[0].isend(w[0].ctx, 1, 4, d, sizeof d, 3), TRD_OK);
    assert_int_equal(w[1].irecv_consume(w[1].ctx, 0, 4, sizeof d, 30, consume_doubles, &sum),
                     TRD_OK);
    st = wait_one(&w[1], TIMEOUT_S, &id);
    TU_CHECK(st == TRD_OK && id == 30 && sum == 7, "consumed eager message: status %d id %d "
             "sum %g: %s", (int)st, (int)id, sum, st == TRD_OK ? "" : trd_errmsg());
    assert_int_equal(wait_one(&w[0], TIMEOUT_S, &id), TRD_OK);
    free_all(w, 2);

    /* a rank is in a call from its set_call on, before it posts anything */
    assert_int_equal(trd_wire_threads_create(w, 2, &topts), TRD_OK);
    for (int r = 0; r < 2; r++)
        w[r].set_call(w[r].ctx, &call[r]);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 3, &a, sizeof a, 1), TRD_OK);
    st = wait_one(&w[0], 0.2, &id);
    TU_CHECK(st == TRD_OK && id == 1, "a small send to a rank that has begun its call but "
             "posted nothing did not complete: status %d id %d", (int)st, (int)id);
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 3, &x, sizeof x, 10), TRD_OK);
    assert_int_equal(wait_one(&w[1], TIMEOUT_S, &id), TRD_OK);
    free_all(w, 2);

    /* a large send waits for its receive: its wait times out */
    unsigned char big[BIG] = {0};
    assert_int_equal(trd_wire_threads_create(w, 2, &topts), TRD_OK);
    assert_int_equal(w[1].irecv(w[1].ctx, 0, 9, &other, sizeof other, 20), TRD_OK);
    assert_int_equal(w[0].isend(w[0].ctx, 1, 3, big, sizeof big, 1), TRD_OK);
    st = wait_one(&w[0], 0.05, &id);
    TU_CHECK(st == TRD_ETIMEDOUT, "a %d-byte send completed with nobody receiving it: %d",
             BIG, (int)st);
    free_all(w, 2);

    /* a small send to a rank still in an earlier call waits too (rank 1
     * posted in call 1 a receive from rank 2, which rank 0's message of
     * call 2 does not contradict) */
    trd_wire w3[3];
    trd_call_sig ahead = {.hash = 7, .seq = 2};
    assert_int_equal(trd_wire_threads_create(w3, 3, &topts), TRD_OK);
    w3[0].set_call(w3[0].ctx, &ahead);
    w3[1].set_call(w3[1].ctx, &call[1]);
    assert_int_equal(w3[1].irecv(w3[1].ctx, 2, 9, &other, sizeof other, 20), TRD_OK);
    assert_int_equal(w3[0].isend(w3[0].ctx, 1, 3, &a, sizeof a, 1), TRD_OK);
    st = wait_one(&w3[0], 0.05, &id);
    TU_CHECK(st == TRD_ETIMEDOUT, "a send of call 2 completed while its receiver is in call "
             "1: %d", (int)st);
    free_all(w3, 3);
}

typedef struct ring {
    trd_wire *w;
    int32_t p;
    atomic_int errors;
} ring;

typedef struct ring_rank {
    ring *g;
    int32_t rank;
} ring_rank;

static void fill(unsigned char *b, size_t n, int32_t rank, int32_t k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(rank * 31 + k * 7 + (int)i);
}

/* Round k: send to the next rank, receive from the previous one, the
 * sizes alternating eager and rendezvous, the buffer scribbled as soon as
 * the send completed; a barrier every 16 rounds, an agreement every 32. */
static int ring_round(trd_wire *w, trd_call_sig *call, int32_t k)
{
    int32_t p = w->size, me = w->rank, next = (me + 1) % p, prev = (me + p - 1) % p;
    size_t n = k % 2 ? BIG : 8;
    unsigned char out[BIG], in[BIG], want[BIG];
    call->seq = (uint32_t)k;
    w->set_call(w->ctx, call); /* a new call begins (wire.h) */
    /* Whole buffers, not n bytes: inlined with n of 8 or BIG, fill made
     * gcc 12 at -O3 report a write past them (-Wstringop-overflow, a false
     * alarm).  Bytes past n are neither sent nor compared. */
    fill(out, sizeof out, me, k);
    fill(want, sizeof want, prev, k);
    memset(in, 0, sizeof in);
    int bad = w->irecv(w->ctx, prev, k % 5, in, n, 1) != TRD_OK;
    bad += w->isend(w->ctx, next, k % 5, out, n, 2) != TRD_OK;
    for (int i = 0; i < 2 && !bad; i++) {
        int32_t id;
        bad += wait_one(w, TIMEOUT_S, &id) != TRD_OK;
        if (!bad && id == 2)
            memset(out, 0xEE, n);
    }
    bad += memcmp(in, want, n) != 0;
    if (k % 16 == 0)
        bad += w->barrier(w->ctx, rt_now() + TIMEOUT_S) != TRD_OK;
    if (k % 32 == 0) {
        double v[2] = {me + k, -me};
        bad += w->agree(w->ctx, v, 2, rt_now() + TIMEOUT_S) != TRD_OK;
        bad += v[0] != p - 1 + k || v[1] != 0;
    }
    return bad;
}

static void *ring_main(void *arg)
{
    ring_rank *rr = arg;
    trd_wire *w = &rr->g->w[rr->rank];
    trd_call_sig call = {.hash = 3};
    w->set_call(w->ctx, &call);
    for (int32_t k = 1; k <= ROUNDS; k++) {
        int bad = ring_round(w, &call, k);
        if (bad) {
            atomic_fetch_add(&rr->g->errors, bad);
            break;
        }
    }
    return NULL;
}

static void run_ring(int32_t p)
{
    trd_wire w[16];
    pthread_t tid[16];
    ring_rank rr[16];
    ring g = {.w = w, .p = p};
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, p, &topts), TRD_OK);
    double t0 = rt_now();
    for (int32_t r = 0; r < p; r++) {
        rr[r] = (ring_rank){&g, r};
        assert_int_equal(pthread_create(&tid[r], NULL, ring_main, &rr[r]), 0);
    }
    for (int32_t r = 0; r < p; r++)
        pthread_join(tid[r], NULL);
    printf("  ring of %d ranks, %d rounds: %.3f s, %d errors\n", (int)p, ROUNDS, rt_now() - t0,
           atomic_load(&g.errors));
    TU_CHECK(atomic_load(&g.errors) == 0, "ring of %d ranks: %d failed steps", (int)p,
             atomic_load(&g.errors));
    free_all(w, p);
}

static void test_ring(void **state)
{
    (void)state;
    run_ring(2);
    run_ring(3);
    run_ring(8); /* more ranks than cores on most machines that run the suite */
}

#define FANIN_P 24
#define FANIN_ROUNDS 300

/* Rank r of the fan-in: round k, every rank but 0 sends 8 bytes to rank 0
 * (two messages, the same tag: they must arrive in order), which receives
 * them all; a barrier, so that every round is one call. */
static void *fanin_main(void *arg)
{
    ring_rank *rr = arg;
    trd_wire *w = &rr->g->w[rr->rank];
    trd_call_sig call = {.hash = 5};
    int bad = 0;
    for (int32_t k = 1; k <= FANIN_ROUNDS && !bad; k++) {
        call.seq = (uint32_t)k;
        w->set_call(w->ctx, &call);
        if (rr->rank > 0) {
            unsigned char out[2][8];
            fill(out[0], 8, rr->rank, k);
            fill(out[1], 8, rr->rank, k + 1000);
            bad += w->isend(w->ctx, 0, 1, out[0], 8, 0) != TRD_OK;
            bad += w->isend(w->ctx, 0, 1, out[1], 8, 1) != TRD_OK;
            for (int i = 0; i < 2 && !bad; i++) {
                int32_t id;
                bad += wait_one(w, TIMEOUT_S, &id) != TRD_OK;
            }
        } else {
            static unsigned char in[FANIN_P][2][8];
            memset(in, 0, sizeof in);
            for (int32_t q = 1; q < FANIN_P && !bad; q++)
                for (int i = 0; i < 2; i++)
                    bad += w->irecv(w->ctx, q, 1, in[q][i], 8, 2 * q + i) != TRD_OK;
            for (int32_t n = 0; n < 2 * (FANIN_P - 1) && !bad; n++) {
                int32_t id;
                bad += wait_one(w, TIMEOUT_S, &id) != TRD_OK;
            }
            for (int32_t q = 1; q < FANIN_P && !bad; q++) {
                unsigned char want[2][8];
                fill(want[0], 8, q, k);
                fill(want[1], 8, q, k + 1000);
                bad += memcmp(in[q], want, sizeof want) != 0;
            }
        }
        bad += w->barrier(w->ctx, rt_now() + TIMEOUT_S) != TRD_OK;
    }
    atomic_fetch_add(&rr->g->errors, bad);
    return NULL;
}

static void test_fanin(void **state)
{
    (void)state;
    trd_wire w[FANIN_P];
    pthread_t tid[FANIN_P];
    ring_rank rr[FANIN_P];
    ring g = {.w = w, .p = FANIN_P};
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, FANIN_P, &topts), TRD_OK);
    for (int32_t r = 0; r < FANIN_P; r++) {
        rr[r] = (ring_rank){&g, r};
        assert_int_equal(pthread_create(&tid[r], NULL, fanin_main, &rr[r]), 0);
    }
    for (int32_t r = 0; r < FANIN_P; r++)
        pthread_join(tid[r], NULL);
    TU_CHECK(atomic_load(&g.errors) == 0, "fan-in of %d ranks: %d failed steps", FANIN_P,
             atomic_load(&g.errors));
    free_all(w, FANIN_P);
}

typedef struct locked_count {
    trd_lock lock;
    int64_t count; /* plain: only the lock keeps additions apart */
    _Atomic int ready; /* threads started: they add only once all have */
    int n;
} locked_count;

#define ADDS 200000

static void *add_main(void *arg)
{
    locked_count *lc = arg;
    atomic_fetch_add(&lc->ready, 1);
    while (atomic_load(&lc->ready) < lc->n)
        sched_yield();
    for (int i = 0; i < ADDS; i++) {
        trd_lock_take(&lc->lock);
        /* a read and a write apart: an overlapping holder's addition is lost */
        int64_t v = *(volatile int64_t *)&lc->count;
        for (int k = 0; k < 8; k++)
            __asm__ __volatile__("" ::: "memory");
        *(volatile int64_t *)&lc->count = v + 1;
        trd_lock_give(&lc->lock);
    }
    return NULL;
}

/* n threads adding under the lock while `ranks` ranks are counted live
 * (their waits spin or sleep, threads_park.c). */
static void run_adds(int n, int64_t ranks)
{
    pthread_t tid[16];
    locked_count lc = {.count = 0, .n = n};
    trd_threads_ranks_add(ranks);
    for (int t = 0; t < n; t++)
        assert_int_equal(pthread_create(&tid[t], NULL, add_main, &lc), 0);
    for (int t = 0; t < n; t++)
        pthread_join(tid[t], NULL);
    trd_threads_ranks_add(-ranks);
    TU_CHECK(lc.count == (int64_t)n * ADDS, "%d threads, %ld ranks live: count %ld, want %ld", n,
             (long)ranks, (long)lc.count, (long)n * ADDS);
    TU_CHECK(atomic_load(&lc.lock.state) == 0, "the lock is left held (state %u)",
             (unsigned)atomic_load(&lc.lock.state));
}

static void test_lock(void **state)
{
    (void)state;
    run_adds(2, 2);
    run_adds(6, 1000); /* crowded: waiters poll briefly and sleep */
}

/* ---- A rank that waits long sleeps ---- */

#define STALL_S 0.2
#define IDLE_CPU_MAX 0.25 /* of the stall: a wait that polls throughout takes all of it */

typedef struct idle_rank {
    trd_wire *w;
    double cpu[2]; /* CPU seconds over the stalls: waiting for a message, in a barrier */
    int bad;
} idle_rank;

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void stall(void)
{
    struct timespec ts = {0, (long)(STALL_S * 1e9)};
    nanosleep(&ts, NULL);
}

/* Rank 0 sleeps, then sends every other rank a message; sleeps again,
 * then enters a barrier.  The others wait for its message, then in the
 * barrier, and count their CPU time over each wait. */
static void *idle_main(void *arg)
{
    idle_rank *ir = arg;
    trd_wire *w = ir->w;
    trd_call_sig call = {.hash = 5, .seq = 1};
    int64_t x = 0;
    int32_t id;
    w->set_call(w->ctx, &call);
    for (int32_t r = 1; w->rank == 0 && r < w->size; r++) {
        if (r == 1)
            stall();
        ir->bad += w->isend(w->ctx, r, 0, &x, sizeof x, r) != TRD_OK;
        ir->bad += wait_one(w, TIMEOUT_S, &id) != TRD_OK;
    }
    if (w->rank > 0) {
        double t0 = thread_cpu();
        ir->bad += w->irecv(w->ctx, 0, 0, &x, sizeof x, 0) != TRD_OK;
        ir->bad += wait_one(w, TIMEOUT_S, &id) != TRD_OK;
        ir->cpu[0] = thread_cpu() - t0;
    }
    if (w->rank == 0)
        stall();
    double t0 = thread_cpu();
    ir->bad += w->barrier(w->ctx, rt_now() + TIMEOUT_S) != TRD_OK;
    ir->cpu[1] = w->rank > 0 ? thread_cpu() - t0 : 0.0;
    return NULL;
}

/* p ranks, `more` others counted live (crowded: waits yield, then sleep). */
static void run_idle(int32_t p, int64_t more)
{
    trd_wire w[8];
    pthread_t tid[8];
    idle_rank ir[8];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    assert_int_equal(trd_wire_threads_create(w, p, &topts), TRD_OK);
    trd_threads_ranks_add(more);
    for (int32_t r = 0; r < p; r++) {
        ir[r] = (idle_rank){.w = &w[r]};
        assert_int_equal(pthread_create(&tid[r], NULL, idle_main, &ir[r]), 0);
    }
    double most[2] = {0, 0};
    int bad = 0;
    for (int32_t r = 0; r < p; r++) {
        pthread_join(tid[r], NULL);
        bad += ir[r].bad;
        for (int k = 0; k < 2; k++)
            most[k] = ir[r].cpu[k] > most[k] ? ir[r].cpu[k] : most[k];
    }
    trd_threads_ranks_add(-more);
    printf("  %d ranks (%ld more live): a waiter's CPU over a %.0f ms stall: %.2f ms for a "
           "message, %.2f ms in a barrier\n", (int)p, (long)more, 1e3 * STALL_S, 1e3 * most[0],
           1e3 * most[1]);
    TU_CHECK(bad == 0, "%d ranks: %d wire calls failed", (int)p, bad);
    for (int k = 0; k < 2; k++)
        TU_CHECK(most[k] < IDLE_CPU_MAX * STALL_S, "%d ranks (%ld more live): a rank waiting %s "
                 "for %.0f ms used %.1f ms of CPU: it polls instead of sleeping", (int)p,
                 (long)more, k ? "in a barrier" : "for a message", 1e3 * STALL_S, 1e3 * most[k]);
    free_all(w, p);
}

static void test_idle(void **state)
{
    (void)state;
    run_idle(2, 0);
    run_idle(4, 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eager),
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_fanin),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_idle),
    };
    return cmocka_run_group_tests_name("threads_wire", tests, NULL, NULL);
}

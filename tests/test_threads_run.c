/* test_threads_run.c: trd_comm_threads_run, the one-thread-per-rank
 * launcher: every rank runs once, on its own thread and communicator, all
 * at once (a collective across them completes); the lowest failing rank's
 * status and message come back; bad arguments run nothing. */
#include <stdatomic.h>

#include "testutil.h"

#define P 5

typedef struct seen {
    atomic_int calls[P];
    int size[P];
    double sum[P];   /* the allreduce of the ranks' numbers: needs them all at once */
    int fail_from;   /* ranks >= this fail (P: none) */
} seen;

static trd_status rank_main(trd_comm *comm, void *ctx)
{
    seen *s = ctx;
    int r = trd_comm_rank(comm);
    atomic_fetch_add(&s->calls[r], 1);
    s->size[r] = trd_comm_size(comm);
    trd_op *sum;
    trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    double x = r + 1;
    trd_status st = trd_allreduce(comm, &x, &s->sum[r], 1, sum, NULL);
    trd_op_free(sum);
    trd_op *bad = NULL;
    if (st == TRD_OK && r >= s->fail_from) /* TRD_EINVAL, and a message on this thread */
        st = trd_op_builtin(&bad, TRD_OP_BAND, TRD_DOUBLE);
    return st;
}

static void test_every_rank_once(void **state)
{
    (void)state;
    seen s = {.fail_from = P};
    assert_int_equal(trd_comm_threads_run(P, NULL, rank_main, &s), TRD_OK);
    for (int r = 0; r < P; r++) {
        TU_CHECK(atomic_load(&s.calls[r]) == 1, "rank %d ran %d times", r,
                 atomic_load(&s.calls[r]));
        assert_int_equal(s.size[r], P);
        assert_true(s.sum[r] == P * (P + 1) / 2.0);
    }
}

static void test_lowest_failure(void **state)
{
    (void)state;
    seen s = {.fail_from = 3};
    trd_status st = trd_comm_threads_run(P, NULL, rank_main, &s);
    assert_int_equal(st, TRD_EINVAL);
    TU_CHECK(!strncmp(trd_errmsg(), "rank 3: ", 8), "message '%s' names no rank 3",
             trd_errmsg());
}

static void test_bad_arguments(void **state)
{
    (void)state;
    seen s = {.fail_from = P};
    assert_int_equal(trd_comm_threads_run(0, NULL, rank_main, &s), TRD_EINVAL);
    TU_CHECK(strstr(trd_errmsg(), "p = 0") != NULL, "message '%s'", trd_errmsg());
    assert_int_equal(trd_comm_threads_run(P, NULL, NULL, &s), TRD_EINVAL);
    for (int r = 0; r < P; r++)
        assert_int_equal(atomic_load(&s.calls[r]), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_rank_once),
        cmocka_unit_test(test_lowest_failure),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

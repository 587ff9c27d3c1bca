/* test_comm_allgather.c: trd_comm_allgather over threads: on 1 to 6 ranks
 * and sizes around its packing of six bytes to a value (0, 1, 5, 6, 7,
 * 64, 100 bytes), every rank gets every rank's bytes in rank order, bytes
 * 0 and 255 included (the closed form `byte_of` is the oracle); in place
 * (in inside out at the rank's own slot); bad arguments refused without
 * failing the communicator; a rank that never calls makes the others fail
 * at their deadline instead of waiting for ever. */
#include "testutil.h"

#define P_MAX 6
#define BYTES_MAX 100

/* Rank r's byte i: all 256 values occur, 0 and 255 among them. */
static unsigned char byte_of(int r, size_t i)
{
    return i % 5 == 0 ? (unsigned char)(r % 2 ? 255 : 0) : (unsigned char)(r * 37 + i * 11);
}

typedef struct job {
    size_t bytes;
    bool in_place;
    unsigned char out[P_MAX][P_MAX * BYTES_MAX];
    trd_status st[P_MAX];
} job;

static trd_status gather_rank(trd_comm *comm, void *ctx)
{
    job *j = ctx;
    int r = trd_comm_rank(comm), p = trd_comm_size(comm);
    unsigned char in[BYTES_MAX], *out = j->out[r];
    memset(out, 0xA5, (size_t)p * j->bytes);
    unsigned char *mine = j->in_place ? out + (size_t)r * j->bytes : in;
    for (size_t i = 0; i < j->bytes; i++)
        mine[i] = byte_of(r, i);
    j->st[r] = trd_comm_allgather(comm, mine, out, j->bytes);
    return j->st[r];
}

static void check_gather(int p, size_t bytes, bool in_place)
{
    job *j = calloc(1, sizeof *j);
    assert_non_null(j);
    j->bytes = bytes;
    j->in_place = in_place;
    assert_int_equal(trd_comm_threads_run(p, NULL, gather_rank, j), TRD_OK);
    for (int r = 0; r < p; r++)
        for (int from = 0; from < p; from++)
            for (size_t i = 0; i < bytes; i++)
                TU_CHECK(j->out[r][(size_t)from * bytes + i] == byte_of(from, i),
                         "p %d, %zu bytes%s: rank %d got byte %zu of rank %d = %d, not %d", p,
                         bytes, in_place ? " in place" : "", r, i, from,
                         j->out[r][(size_t)from * bytes + i], byte_of(from, i));
    free(j);
}

static void test_every_rank_in_order(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 5, 6, 7, 64, BYTES_MAX};
    for (int p = 1; p <= P_MAX; p++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            check_gather(p, sizes[k], false);
            check_gather(p, sizes[k], true);
        }
}

/* Refusals first (they send nothing), then a gather that still works. */
static trd_status refuse_rank(trd_comm *comm, void *ctx)
{
    (void)ctx;
    char in[4] = "abc", out[4 * P_MAX];
    if (trd_comm_allgather(NULL, in, out, 4) != TRD_EINVAL ||
        !strstr(trd_errmsg(), "NULL communicator"))
        return TRD_EIO;
    if (trd_comm_allgather(comm, NULL, out, 4) != TRD_EINVAL ||
        trd_comm_allgather(comm, in, NULL, 4) != TRD_EINVAL ||
        !strstr(trd_errmsg(), "NULL buffer"))
        return TRD_EIO;
    if (trd_comm_allgather(comm, in, out, SIZE_MAX / 2) != TRD_EINVAL ||
        !strstr(trd_errmsg(), "beyond memory"))
        return TRD_EIO;
    if (trd_comm_allgather(comm, NULL, NULL, 0) != TRD_OK)
        return TRD_EIO;
    trd_status st = trd_comm_allgather(comm, in, out, 4);
    int p = trd_comm_size(comm);
    for (int r = 0; st == TRD_OK && r < p; r++)
        if (memcmp(out + 4 * r, "abc", 4))
            st = TRD_EIO;
    return st;
}

static void test_bad_arguments(void **state)
{
    (void)state;
    trd_status st = trd_comm_threads_run(3, NULL, refuse_rank, NULL);
    TU_CHECK(st == TRD_OK, "status %d: %s", (int)st, trd_errmsg());
}

/* Rank 1 never calls: the others' gathers end at the 0.3 s deadline. */
static trd_status absent_rank(trd_comm *comm, void *ctx)
{
    job *j = ctx;
    int r = trd_comm_rank(comm);
    char in[8] = {0}, out[8 * 3];
    if (r == 1)
        return TRD_OK;
    j->st[r] = trd_comm_allgather(comm, in, out, sizeof in);
    return TRD_OK;
}

static void test_deadline(void **state)
{
    (void)state;
    trd_threads_opts o;
    trd_threads_opts_init(&o);
    o.timeout_s = 0.3;
    job *j = calloc(1, sizeof *j);
    assert_non_null(j);
    assert_int_equal(trd_comm_threads_run(3, &o, absent_rank, j), TRD_OK);
    for (int r = 0; r < 3; r += 2)
        TU_CHECK(j->st[r] == TRD_ETIMEDOUT || j->st[r] == TRD_EIO,
                 "rank %d: status %d, not a deadline's", r, (int)j->st[r]);
    free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_rank_in_order),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

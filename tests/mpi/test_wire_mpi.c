/* test_wire_mpi.c: the MPI wire (src/wire_mpi/mpi.c) driven directly, as
 * the runtime drives it, on 2 or more MPI processes (run_mpi.sh starts it).
 *
 * Checks: argument errors; ping-pong of 0 bytes, 1 byte and 1 MiB with
 * every rank; two messages with one (peer, tag) matched in sending order;
 * the shared-memory rings (shm.h): more sends than a ring holds, messages
 * set aside until their tag's receive comes (whole, and while their
 * fragments still arrive), the limit from TRD_MPI_SHM_MAX (none, 100
 * bytes, 20 000 bytes in two fragments, refused);
 * TRD_ANY_RANK receives naming their sender; rounds of the real dynamic
 * policies (tree-dyn, nc-tree-dyn) through the coordinator over several
 * calls: one terminal decision per rank, one DONE overall, the DONE rank
 * holding the whole reduction (contiguous rank intervals for nc-tree-dyn);
 * the barrier holding every rank until the last arrives; and the failures:
 * a too-long message (TRD_EIO naming the buffer size), a receive nobody
 * answers (TRD_ETIMEDOUT at its 0.5 s deadline), a failed rank's notice
 * ending its peers' waits at once and failing their later calls (rings and
 * MPI), and a coordinator that does not answer (TRD_ETIMEDOUT).  Any
 * failed check aborts the whole job with a message naming the rank and the
 * line. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plan/algorithms.h"
#include "runtime/comm.h"
#include "wire_mpi/mpi_wire.h"
#include "wire_mpi/shm.h"

static int me, nranks;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s (last error: %s)\n", me,   \
                    __FILE__, __LINE__, #cond, trd_errmsg());                              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
        }                                                                                  \
    } while (0)
#define OK(call) CHECK((call) == TRD_OK)

static trd_wire *make_wire(void)
{
    trd_wire *w = NULL;
    MPI_Comm world = MPI_COMM_WORLD;
    OK(trd_wire_mpi_create(&w, &world));
    CHECK(w && w->rank == me && w->size == nranks && strcmp(w->name, "mpi") == 0);
    return w;
}

/* The next completion, which must be step `id` (from `from`). */
static void expect(trd_wire *w, int32_t id, int32_t from)
{
    int32_t got, src;
    OK(w->wait(w->ctx, 20, &got, &src));
    CHECK(got == id && src == from);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void test_arguments(trd_wire *w)
{
    char b[8] = {0};
    int32_t other = (me + 1) % nranks, id, from;
    CHECK(w->isend(w->ctx, nranks, 0, b, 1, 0) == TRD_EINVAL);
    CHECK(w->isend(w->ctx, me, 0, b, 1, 0) == TRD_EINVAL);
    CHECK(w->isend(w->ctx, TRD_ANY_RANK, 0, b, 1, 0) == TRD_EINVAL);
    CHECK(w->irecv(w->ctx, -5, 0, b, 1, 0) == TRD_EINVAL);
    CHECK(w->isend(w->ctx, other, -1, b, 1, 0) == TRD_EINVAL);
    CHECK(w->isend(w->ctx, other, 1 << 20, b, 1, 0) == TRD_EINVAL);
    CHECK(w->irecv(w->ctx, other, 0, b, (size_t)INT_MAX + 1, 0) == TRD_EINVAL);
    CHECK(strstr(trd_errmsg(), "INT_MAX") != NULL);
    CHECK(w->isend(w->ctx, other, 0, NULL, 4, 0) == TRD_EINVAL);
    CHECK(w->wait(w->ctx, 1, &id, &from) == TRD_EINVAL);
    CHECK(trd_wire_mpi_set_timeout(w, -1) == TRD_EINVAL);
    CHECK(trd_wire_mpi_set_timeout(NULL, 1) == TRD_EINVAL);
}

/* Rank 0 sends `bytes` to p, p sends them back with every byte + 1. */
static void ping_pong(trd_wire *w, int32_t p, size_t bytes)
{
    unsigned char *out = malloc(bytes + 1), *in = malloc(bytes + 1);
    CHECK(out && in);
    for (size_t i = 0; i < bytes; i++)
        out[i] = (unsigned char)(i * 7 + (size_t)p);
    void *send = bytes ? out : NULL, *recv = bytes ? in : NULL; /* NULL is fine for 0 bytes */
    if (me == 0) {
        OK(w->isend(w->ctx, p, 1, send, bytes, 10));
        OK(w->irecv(w->ctx, p, 2, recv, bytes, 11));
        int32_t id1, id2, f1, f2;
        OK(w->wait(w->ctx, 20, &id1, &f1));
        OK(w->wait(w->ctx, 20, &id2, &f2));
        CHECK(id1 + id2 == 21 && (id1 == 10 ? f1 == -1 && f2 == p : f1 == p && f2 == -1));
        for (size_t i = 0; i < bytes; i++)
            CHECK(in[i] == (unsigned char)(out[i] + 1));
    } else if (me == p) {
        OK(w->irecv(w->ctx, 0, 1, recv, bytes, 20));
        expect(w, 20, 0);
        for (size_t i = 0; i < bytes; i++)
            in[i]++;
        OK(w->isend(w->ctx, 0, 2, recv, bytes, 21));
        expect(w, 21, -1);
    }
    free(out);
    free(in);
}

static void test_ping_pong(trd_wire *w)
{
    const size_t sizes[] = {0, 1, 1 << 20};
    for (int32_t p = 1; p < nranks; p++)
        for (int k = 0; k < 3; k++)
            ping_pong(w, p, sizes[k]);
}

/* A 1 MiB message then 4 bytes, same (peer, tag): the first receive
 * posted (1 MiB) gets the first message, whatever the protocols. */
static void test_order(trd_wire *w)
{
    size_t big = 1 << 20;
    int32_t *a = calloc(big / 4, 4), b = 0;
    CHECK(a);
    if (me == 1) {
        a[0] = 111;
        b = 222;
        OK(w->isend(w->ctx, 0, 3, a, big, 30));
        OK(w->isend(w->ctx, 0, 3, &b, sizeof b, 31));
        int32_t id, from, seen = 0;
        for (int k = 0; k < 2; k++) {
            OK(w->wait(w->ctx, 20, &id, &from));
            CHECK(from == -1 && (id == 30 || id == 31));
            seen |= 1 << (id - 30);
        }
        CHECK(seen == 3);
    } else if (me == 0) {
        OK(w->irecv(w->ctx, 1, 3, a, big, 40));
        OK(w->irecv(w->ctx, 1, 3, &b, sizeof b, 41));
        int32_t id, from;
        for (int k = 0; k < 2; k++) {
            OK(w->wait(w->ctx, 20, &id, &from));
            CHECK(from == 1 && (id == 40 || id == 41));
        }
        CHECK(a[0] == 111 && b == 222);
    }
    free(a);
}

/* Every rank sends its rank to 0, which receives from TRD_ANY_RANK. */
static void test_any_rank(trd_wire *w)
{
    int32_t value = me;
    if (me != 0) {
        OK(w->isend(w->ctx, 0, 4, &value, sizeof value, 50));
        expect(w, 50, -1);
        return;
    }
    int32_t *got = calloc((size_t)nranks, sizeof *got), *seen = calloc((size_t)nranks, 4);
    CHECK(got && seen);
    for (int32_t k = 1; k < nranks; k++)
        OK(w->irecv(w->ctx, TRD_ANY_RANK, 4, &got[k], sizeof got[k], 100 + k));
    for (int32_t k = 1; k < nranks; k++) {
        int32_t id, from;
        OK(w->wait(w->ctx, 20, &id, &from));
        CHECK(id > 100 && id < 100 + nranks && from > 0 && from < nranks);
        CHECK(got[id - 100] == from && !seen[from]);
        seen[from] = 1;
    }
    free(got);
    free(seen);
}

/* Rank 1 sends 3 ringfuls and one more of small messages with one tag
 * while rank 0 is away: the sends beyond a ringful wait for room (shm.h)
 * and still arrive whole and in order. */
static void test_ring_full(trd_wire *w)
{
    enum { N = 3 * TRD_SHM_SLOTS + 1 };
    int32_t v[N];
    if (me == 1) {
        for (int32_t k = 0; k < N; k++) {
            v[k] = 1000 + k;
            OK(w->isend(w->ctx, 0, 9, &v[k], sizeof v[k], 200 + k));
        }
        for (int32_t k = 0; k < N; k++) {
            int32_t id, from;
            OK(w->wait(w->ctx, 20, &id, &from));
            CHECK(from == -1 && id >= 200 && id < 200 + N);
        }
    } else if (me == 0) {
        sleep_s(0.2);
        for (int32_t k = 0; k < N; k++)
            OK(w->irecv(w->ctx, 1, 9, &v[k], sizeof v[k], 300 + k));
        for (int32_t k = 0; k < N; k++) {
            int32_t id, from;
            OK(w->wait(w->ctx, 20, &id, &from));
            CHECK(from == 1 && id >= 300 && id < 300 + N);
        }
        for (int32_t k = 0; k < N; k++)
            CHECK(v[k] == 1000 + k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Tags 10, 11, 10 from rank 1 in messages of `bytes` (beyond a ringful of
 * fragments: 3 x 100 000), all sent before rank 0 receives them as 11, 10,
 * 10: the first is set aside while its fragments come, then taken. */
static void test_tags_apart_long(trd_wire *w, size_t bytes)
{
    const int32_t tags[3] = {10, 11, 10};
    unsigned char *buf[3];
    for (int k = 0; k < 3; k++) {
        CHECK((buf[k] = malloc(bytes)) != NULL);
        memset(buf[k], me == 1 ? 'a' + k : 0, bytes);
    }
    if (me == 1) {
        for (int k = 0; k < 3; k++)
            OK(w->isend(w->ctx, 0, tags[k], buf[k], bytes, 60 + k));
        for (int k = 0; k < 3; k++) { /* complete once rank 0 has made room */
            int32_t id, from;
            OK(w->wait(w->ctx, 20, &id, &from));
            CHECK(id >= 60 && id < 63 && from == -1);
        }
    } else if (me == 0) {
        sleep_s(0.1);
        const int order[3] = {1, 0, 2}; /* message k lands in buf[k] */
        for (int j = 0; j < 3; j++) {
            OK(w->irecv(w->ctx, 1, tags[order[j]], buf[order[j]], bytes, 70 + j));
            expect(w, 70 + j, 1);
        }
        for (int k = 0; k < 3; k++)
            CHECK(buf[k][0] == 'a' + k && buf[k][bytes - 1] == 'a' + k &&
                  buf[k][bytes / 2] == 'a' + k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++)
        free(buf[k]);
}

/* Tags 10, 11, 10 from rank 1, received as 11, 10, 10 once all have
 * arrived: the first two are set aside, then taken in sending order. */
static void test_tags_apart(trd_wire *w)
{
    int32_t v[3] = {1, 2, 3}, tags[3] = {10, 11, 10};
    if (me == 1)
        for (int k = 0; k < 3; k++) {
            OK(w->isend(w->ctx, 0, tags[k], &v[k], sizeof v[k], 60 + k));
            expect(w, 60 + k, -1);
        }
    MPI_Barrier(MPI_COMM_WORLD); /* all three sent (small: complete on sending) */
    if (me == 0) {
        int32_t got[3] = {0, 0, 0};
        OK(w->irecv(w->ctx, 1, 11, &got[0], sizeof got[0], 70));
        expect(w, 70, 1);
        OK(w->irecv(w->ctx, 1, 10, &got[1], sizeof got[1], 71));
        expect(w, 71, 1);
        OK(w->irecv(w->ctx, 1, 10, &got[2], sizeof got[2], 72));
        expect(w, 72, 1);
        CHECK(got[0] == 2 && got[1] == 1 && got[2] == 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A wire created while rank 0 has TRD_MPI_SHM_MAX = limit (NULL: unset). */
static trd_status create_with_limit(trd_wire **w, const char *limit)
{
    if (me == 0 && limit)
        setenv("TRD_MPI_SHM_MAX", limit, 1);
    MPI_Comm world = MPI_COMM_WORLD;
    trd_status s = trd_wire_mpi_create(w, &world);
    if (me == 0)
        unsetenv("TRD_MPI_SHM_MAX");
    return s;
}

/* A limit set after creation (as the runtime's long-message probe does):
 * every rank moves to it at once, long messages then cross the rings both
 * ways and back; refused limits (0, above INT_MAX) change nothing. */
static void test_set_limit(trd_wire *w)
{
    size_t before = trd_wire_mpi_shm_max(w);
    CHECK(trd_wire_mpi_set_shm_max(w, 0) == TRD_EINVAL);
    CHECK(trd_wire_mpi_set_shm_max(w, (size_t)INT_MAX + 1) == TRD_EINVAL);
    CHECK(strstr(trd_errmsg(), "INT_MAX") != NULL && trd_wire_mpi_shm_max(w) == before);
    CHECK(trd_wire_mpi_set_shm_max(NULL, 100) == TRD_EINVAL);
    const size_t limits[] = {100, INT_MAX, before};
    for (int k = 0; k < 3; k++) {
        OK(trd_wire_mpi_set_shm_max(w, limits[k]));
        CHECK(trd_wire_mpi_shm_max(w) == limits[k]);
        for (int32_t p = 1; p < nranks; p++) {
            ping_pong(w, p, 101);
            ping_pong(w, p, 40000);
        }
    }
}

/* The shared-memory limit: the default, none, 100 bytes (100 through the
 * rings, 101 through MPI: both arrive), 20 000 (two fragments of 16 KiB
 * slots; 20 001 through MPI), and a limit that is not a number (every
 * rank refuses). */
static void test_shm_limit(void)
{
    trd_wire *w = NULL;
    OK(create_with_limit(&w, NULL));
    long cores = sysconf(_SC_NPROCESSORS_ONLN); /* run_mpi.sh: one node */
    CHECK(trd_wire_mpi_shm_max(w) ==
          (cores < nranks ? TRD_MPI_SHM_MAX_CROWDED : TRD_MPI_SHM_MAX_DEFAULT));
    CHECK(trd_wire_mpi_shm_choice(w) == (cores >= nranks));
    test_set_limit(w);
    w->free(w->ctx);
    const char *limits[] = {"0", "100", "20000"};
    const size_t expect_max[] = {0, 100, 20000}, sizes[] = {1, 100, 101, 5000, 20000, 20001};
    for (int k = 0; k < 3; k++) {
        OK(create_with_limit(&w, limits[k]));
        CHECK(trd_wire_mpi_shm_max(w) == expect_max[k] && !trd_wire_mpi_shm_choice(w));
        for (int32_t p = 1; p < nranks; p++)
            for (int j = 0; j < 6; j++)
                ping_pong(w, p, sizes[j]);
        w->free(w->ctx);
    }
    OK(create_with_limit(&w, "0"));
    CHECK(trd_wire_mpi_set_shm_max(w, 100) == TRD_EINVAL && trd_wire_mpi_shm_max(w) == 0);
    CHECK(strstr(trd_errmsg(), "no shared-memory rings") != NULL);
    w->free(w->ctx);
    CHECK(create_with_limit(&w, "12x") == TRD_EINVAL && !w);
    CHECK(strstr(trd_errmsg(), "TRD_MPI_SHM_MAX") != NULL);
    CHECK(trd_wire_mpi_shm_max(NULL) == 0);
}

/* The path of long messages, measured by the wire itself where every rank
 * has a core (a no-op on a crowded node): both medians agreed (the same on
 * every rank), the limit the one they chose, the other path taken and
 * left on request, messages crossing either way.  A communicator gets the
 * same from its creation without running a collective call of its own:
 * none counted (trd_comm.calls), and the wire's probe is the one it
 * reports. */
static void test_long_path(void)
{
    trd_wire *w = NULL;
    double rings = -1, mpi = -1, lo[2], hi[2];
    OK(create_with_limit(&w, NULL));
    bool choice = trd_wire_mpi_shm_choice(w);
    CHECK(!trd_wire_mpi_shm_probe(w, &rings, &mpi) && rings == 0 && mpi == 0);
    OK(trd_wire_mpi_choose_long_path(w));
    CHECK(trd_wire_mpi_shm_probe(w, &rings, &mpi) == choice);
    CHECK(choice ? rings > 0 && mpi > 0 : rings == 0 && mpi == 0);
    double v[2] = {rings, mpi};
    MPI_Allreduce(v, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(v, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo[0] == hi[0] && lo[1] == hi[1]);
    size_t kept = trd_wire_mpi_shm_max(w);
    CHECK(!choice || kept == (rings < 0.95 * mpi ? (size_t)INT_MAX : TRD_MPI_SHM_MAX_DEFAULT));
    CHECK(trd_wire_mpi_long_choice(w, TRD_MPI_SHM_MAX_DEFAULT + 1) == choice);
    OK(trd_wire_mpi_long_path(w, true));
    CHECK(!choice || trd_wire_mpi_shm_max(w) != kept);
    for (int32_t p = 1; p < nranks; p++)
        ping_pong(w, p, 40000);
    OK(trd_wire_mpi_long_path(w, false));
    CHECK(trd_wire_mpi_shm_max(w) == kept);
    w->free(w->ctx);
    trd_comm *comm = NULL;
    OK(trd_comm_mpi_create(&comm, NULL, 20.0));
    CHECK(comm->calls == 0);
    CHECK(trd_comm_shm_probe(comm, &rings, &mpi) == choice && (!choice || rings > 0));
    trd_comm_free(comm);
}

/* New rings carry their first messages whole: wires made one after the
 * other (each a new segment: the last one is still open), rank 0 sending
 * each rank a ringful at once - a rank that wrote its pages after rank 0
 * began to send would zero what was sent (under load, 2 runs in 60 of the
 * MPI example failed so).  With the mode as a segment of the same
 * processes that closed left it, and deferred. */
static void fresh_rings_round(trd_wire *w, int32_t round)
{
    enum { N = 4000 };
    static uint32_t buf[N];
    int32_t id, from;
    for (int32_t p = 1; p < nranks; p++) {
        if (me == 0) {
            for (int32_t i = 0; i < N; i++)
                buf[i] = (uint32_t)(round * 7919 + p * 31 + i) | 1u;
            OK(w->isend(w->ctx, p, 5, buf, sizeof buf, 1));
            OK(w->wait(w->ctx, 20, &id, &from));
        } else if (me == p) {
            memset(buf, 0, sizeof buf);
            OK(w->irecv(w->ctx, 0, 5, buf, sizeof buf, 2));
            OK(w->wait(w->ctx, 20, &id, &from));
            int32_t bad = 0;
            for (int32_t i = 0; i < N; i++)
                bad += buf[i] != ((uint32_t)(round * 7919 + p * 31 + i) | 1u);
            CHECK(bad == 0);
        }
    }
}

static void test_fresh_rings(void)
{
    trd_wire *last = NULL;
    MPI_Comm world = MPI_COMM_WORLD;
    for (int32_t round = 0; round < 60; round++) {
        trd_wire *w = NULL;
        trd_wire_mpi_setup o;
        trd_wire_mpi_setup_init(&o);
        o.deferred = round % 3 == 2;
        OK(trd_wire_mpi_create_with(&w, &world, &o));
        fresh_rings_round(w, round);
        if (last)
            last->free(last->ctx);
        last = round % 2 ? NULL : w; /* kept open past the next one, or freed now */
        if (!last)
            w->free(w->ctx);
    }
    if (last)
        last->free(last->ctx);
}

/* A partial result: a sum and the interval of ranks it covers. */
typedef struct partial {
    int64_t sum;
    int32_t lo, hi;
} partial;

/* One collective call under `pol`: every rank asks until its terminal
 * decision; WAIT receives a partial and combines it (intervals must be
 * adjacent when `ordered`).  Returns 1 if this rank got DONE. */
static int dynamic_call(trd_wire *w, const trd_policy *pol, int64_t call, bool ordered,
                        partial *acc)
{
    for (;;) {
        trd_action a;
        int32_t peer = -7;
        OK(w->decide(w->ctx, pol, call, me, &a, &peer));
        if (a == TRD_ACT_DONE)
            return 1;
        if (a == TRD_ACT_SEND) {
            CHECK(peer >= 0 && peer < nranks && peer != me);
            OK(w->isend(w->ctx, peer, 5, acc, sizeof *acc, 60));
            expect(w, 60, -1);
            return 0;
        }
        CHECK(a == TRD_ACT_WAIT);
        partial in;
        int32_t id, from;
        OK(w->irecv(w->ctx, TRD_ANY_RANK, 5, &in, sizeof in, 61));
        OK(w->wait(w->ctx, 20, &id, &from));
        CHECK(id == 61 && from >= 0 && from < nranks && from != me);
        CHECK(!ordered || in.hi + 1 == acc->lo || acc->hi + 1 == in.lo);
        acc->sum += in.sum;
        acc->lo = in.lo < acc->lo ? in.lo : acc->lo;
        acc->hi = in.hi > acc->hi ? in.hi : acc->hi;
    }
}

static void test_dynamic(trd_wire *w, trd_status (*make)(int32_t, trd_policy *), bool ordered)
{
    trd_policy pol;
    OK(make(nranks, &pol));
    for (int64_t call = 0; call < 5; call++) {
        partial acc = {.sum = me + 1 + 1000 * call, .lo = me, .hi = me};
        if (call % 2 == 1)
            sleep_s(0.01 * me); /* ranks become idle in another order */
        int done = dynamic_call(w, &pol, call, ordered, &acc);
        OK(w->end_dynamic(w->ctx, &pol, call));
        int dones = 0;
        MPI_Allreduce(&done, &dones, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(dones == 1);
        int64_t n = nranks;
        if (done)
            CHECK(acc.sum == n * (n + 1) / 2 + 1000 * call * n && acc.lo == 0 &&
                  acc.hi == nranks - 1);
    }
    pol.destroy(pol.state);
}

/* Seconds on the host's monotonic clock, the same for every process of
 * one machine (MPI_Wtime need not be). */
static double host_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank `late` arrives 0.2 s after the others: nobody leaves before it
 * entered (all ranks run on one host, see host_now). */
static void test_barrier(trd_wire *w)
{
    for (int k = 0; k < 3; k++) {
        int late = k % nranks;
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == late)
            sleep_s(0.2);
        double entered = host_now();
        OK(w->barrier(w->ctx, w->now(w->ctx) + 20));
        double left = host_now();
        MPI_Bcast(&entered, 1, MPI_DOUBLE, late, MPI_COMM_WORLD);
        CHECK(left >= entered);
    }
}

/* 16 bytes into an 8-byte buffer: TRD_EIO naming the buffer, not
 * truncation; through the rings (limit NULL: the default) or MPI ("0"). */
static void test_truncate(const char *limit)
{
    trd_wire *w = NULL;
    OK(create_with_limit(&w, limit));
    char buf[16] = "0123456789abcde";
    if (me == 1) { /* done, unless rank 0's failure came first */
        int32_t id = -1, from = -2;
        OK(w->isend(w->ctx, 0, 6, buf, 16, 70));
        trd_status st = w->wait(w->ctx, 20, &id, &from);
        CHECK((st == TRD_OK && id == 70 && from == -1) ||
              (st == TRD_EIO && strstr(trd_errmsg(), "rank 0 failed") != NULL));
    } else if (me == 0) {
        int32_t id, from;
        OK(w->irecv(w->ctx, 1, 6, buf, 8, 71));
        CHECK(w->wait(w->ctx, 20, &id, &from) == TRD_EIO);
        CHECK(strstr(trd_errmsg(), "8-byte") != NULL);
        printf("expected: %s\n", trd_errmsg());
        CHECK(w->isend(w->ctx, 1, 6, buf, 1, 72) == TRD_EIO); /* unusable now */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    w->free(w->ctx);
}

/* A receive nobody answers fails at its timeout, not before, not much
 * after - or, once the first rank timed out, with that rank's failure. */
static void test_timeout(void)
{
    trd_wire *w = make_wire();
    char buf[4];
    int32_t id, from;
    OK(w->irecv(w->ctx, (me + 1) % nranks, 7, buf, sizeof buf, 80));
    double t0 = w->now(w->ctx);
    CHECK(w->wait(w->ctx, 0.5, &id, &from) == TRD_ETIMEDOUT);
    double waited = w->now(w->ctx) - t0;
    bool own = strstr(trd_errmsg(), " failed: ") == NULL;
    CHECK((waited >= 0.5 || !own) && waited < 5); /* generous: loaded CI machines */
    CHECK(strstr(trd_errmsg(), "nothing completed before the deadline") != NULL &&
          strstr(trd_errmsg(), "1 requests") != NULL);
    if (me == 0)
        printf("expected: %s\n", trd_errmsg());
    MPI_Barrier(MPI_COMM_WORLD);
    w->free(w->ctx);
}

/* A rank's failure ends its peers' waits at once (the rings' flag, or the
 * notice through MPI: limit "0"), with its code and message, and every
 * later call of theirs returns it; the failed rank's own receive was
 * cancelled (abort), so the peer's late send into it is never received. */
static void test_failure_notice(const char *limit)
{
    trd_wire *w = NULL;
    OK(create_with_limit(&w, limit));
    char buf[64] = "";
    int32_t id, from;
    if (me == 0) {
        OK(w->irecv(w->ctx, 1, 9, buf, sizeof buf, 90));
        CHECK(w->wait(w->ctx, 0.3, &id, &from) == TRD_ETIMEDOUT);
        w->abort(w->ctx, TRD_ETIMEDOUT, trd_errmsg());
    } else {
        OK(w->irecv(w->ctx, 0, 9, buf, sizeof buf, 91));
        double t0 = w->now(w->ctx);
        trd_status st = w->wait(w->ctx, 20, &id, &from);
        double waited = w->now(w->ctx) - t0;
        CHECK(st == TRD_ETIMEDOUT && strstr(trd_errmsg(), "rank 0 failed") != NULL &&
              strstr(trd_errmsg(), "deadline") != NULL && waited < 5);
        if (me == 1)
            printf("expected (after %.3f s): %s\n", waited, trd_errmsg());
        CHECK(w->isend(w->ctx, 0, 9, buf, sizeof buf, 92) == TRD_ETIMEDOUT &&
              strstr(trd_errmsg(), "rank 0 failed") != NULL);
        CHECK(w->failed(w->ctx) == TRD_ETIMEDOUT);
    }
    CHECK(w->failed(w->ctx) == TRD_ETIMEDOUT);
    MPI_Barrier(MPI_COMM_WORLD);
    w->free(w->ctx);
}

/* Rank 0 stays out of the wire: rank 1's decide fails after its timeout. */
static void test_decide_timeout(void)
{
    trd_wire *w = make_wire();
    trd_policy pol;
    OK(trd_policy_tree_dyn(nranks, &pol));
    OK(trd_wire_mpi_set_timeout(w, 0.3));
    if (me == 1) {
        trd_action a;
        int32_t peer;
        double t0 = w->now(w->ctx);
        CHECK(w->decide(w->ctx, &pol, 0, me, &a, &peer) == TRD_ETIMEDOUT);
        double waited = w->now(w->ctx) - t0;
        CHECK(waited >= 0.3 && waited < 5 && strstr(trd_errmsg(), "coordinator") != NULL);
        printf("expected: %s\n", trd_errmsg());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    w->free(w->ctx);
    pol.destroy(pol.state);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(trd_wire_mpi_available());
    CHECK(nranks >= 2);
    trd_wire *w = make_wire();
    test_arguments(w);
    test_ping_pong(w);
    test_order(w);
    test_any_rank(w);
    test_dynamic(w, trd_policy_tree_dyn, false);
    test_dynamic(w, trd_policy_nc_tree_dyn, true);
    test_barrier(w);
    test_ring_full(w);
    test_tags_apart(w);
    test_tags_apart_long(w, 100000);
    w->free(w->ctx);
    test_shm_limit();
    test_long_path();
    test_fresh_rings();
    test_truncate(NULL);
    test_truncate("0");
    test_timeout();
    test_failure_notice(NULL);
    test_failure_notice("0");
    test_decide_timeout();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("test_wire_mpi: all checks passed on %d ranks\n", nranks);
    MPI_Finalize();
    return 0;
}

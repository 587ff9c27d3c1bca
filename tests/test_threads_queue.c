/* test_threads_queue.c: a mailbox's queue (src/wire/threads_queue.c)
 * against an oracle written here: an array in arrival order, searched
 * from its front as the matching rules read (wire.h: the first record of
 * that sender, or TRD_ANY_RANK, and that tag; a record of exactly that
 * sender from another call found first is a mismatch).  Random pushes,
 * finds and takes, with queues short enough to be walked and long enough
 * to be indexed, must give the oracle's answers at every step: which
 * record matches, which one is the mismatch, and the records left, in
 * order.  Each peer's records come in its calls' order, as ranks post
 * them (a sender's calls never go back). */
#include "core/splitmix.h"
#include "testutil.h"
#include "wire/threads_world.h"

#define PEERS 5
#define TAGS 6
#define STEPS 20000

typedef struct oracle_q {
    pending item[4096];
    int32_t id[4096]; /* the queue's id of each record */
    int n;
} oracle_q;

/* The first record of o matching (peer, tag), or -1 (*other: the first of
 * exactly peer from another call than sig, before the match). */
static int oracle_find(const oracle_q *o, int32_t peer, int32_t tag, uint64_t sig, int *other)
{
    *other = -1;
    for (int i = 0; i < o->n; i++) {
        const pending *p = &o->item[i];
        if (p->peer == peer && peer != TRD_ANY_RANK && p->sig != sig) {
            *other = i;
            return -1;
        }
        bool who = p->peer == peer || p->peer == TRD_ANY_RANK || peer == TRD_ANY_RANK;
        if (who && p->tag == tag)
            return i;
    }
    return -1;
}

static void oracle_take(oracle_q *o, int i)
{
    memmove(&o->item[i], &o->item[i + 1], (size_t)(o->n - i - 1) * sizeof o->item[0]);
    memmove(&o->id[i], &o->id[i + 1], (size_t)(o->n - i - 1) * sizeof o->id[0]);
    o->n--;
}

/* The queue holds o's records, in o's order. */
static void same_records(const queue *q, const oracle_q *o, int step)
{
    int i = 0;
    for (int32_t id = trd_queue_first(q); id >= 0; id = trd_queue_next(q, id), i++) {
        TU_CHECK(i < o->n && id == o->id[i], "step %d: record %d of the queue is %d, the "
                 "oracle's %d", step, i, (int)id, i < o->n ? (int)o->id[i] : -1);
        TU_CHECK(trd_queue_at(q, id)->id == o->item[i].id, "step %d: record %d differs", step, i);
    }
    TU_CHECK(i == o->n && q->len == (size_t)o->n, "step %d: %d records, the oracle %d", step, i,
             o->n);
}

/* One run: `bursts` decide how long the queue grows before it drains. */
static void run(uint64_t seed, int longest, bool any_peers)
{
    static oracle_q o;
    queue q = TRD_QUEUE_EMPTY;
    uint64_t rng = seed, call[PEERS] = {0};
    o.n = 0;
    int found = 0, mismatches = 0;
    for (int step = 0; step < STEPS; step++) {
        uint64_t r = trd_splitmix64(&rng);
        bool push = o.n == 0 || (o.n < longest && r % 3 != 0);
        int32_t peer = (int32_t)((r >> 8) % (PEERS + (any_peers ? 1 : 0)));
        peer = peer == PEERS ? TRD_ANY_RANK : peer;
        int32_t tag = (int32_t)((r >> 16) % TAGS);
        int32_t who = peer == TRD_ANY_RANK ? 0 : peer;
        if ((r >> 24) % 256 == 0)
            call[who]++; /* this peer goes on to its next call */
        uint64_t sig = 1000 * call[who] + 7;
        for (int i = 0; !push && (r >> 48) % 4 != 0 && i < o.n; i++)
            if (o.item[i].peer == peer) { /* mostly the call of its oldest record */
                sig = o.item[i].sig;
                break;
            }
        if (push) {
            pending p = {.peer = peer, .tag = tag, .id = step, .sig = sig};
            assert_int_equal(trd_queue_push(&q, &p), TRD_OK);
            o.item[o.n] = p;
            o.id[o.n++] = q.tail;
        } else {
            int other, want = oracle_find(&o, peer, tag, sig, &other);
            int32_t got_other, got = trd_queue_find(&q, peer, tag, sig, &got_other);
            TU_CHECK((want < 0 ? -1 : o.id[want]) == got, "step %d: find (%d, %d) gave %d, the "
                     "oracle %d", step, (int)peer, (int)tag, (int)got,
                     want < 0 ? -1 : (int)o.id[want]);
            TU_CHECK((other < 0 ? -1 : o.id[other]) == got_other, "step %d: other %d, the "
                     "oracle %d", step, (int)got_other, other < 0 ? -1 : (int)o.id[other]);
            mismatches += other >= 0;
            if (want >= 0 && (r >> 32) % 4 != 0) {
                assert_int_equal(trd_queue_take(&q, got).id, o.item[want].id);
                oracle_take(&o, want);
                found++;
            } else if ((r >> 32) % 4 == 0 && o.n > 0) { /* a record from anywhere */
                int i = (int)((r >> 40) % (uint64_t)o.n);
                assert_int_equal(trd_queue_take(&q, o.id[i]).id, o.item[i].id);
                oracle_take(&o, i);
            }
        }
        same_records(&q, &o, step);
    }
    TU_CHECK(found > STEPS / 20 && mismatches > 0, "seed %llu: %d matches, %d mismatches: the "
             "run tests too little", (unsigned long long)seed, found, mismatches);
    trd_queue_drop_peer(&q, 1);
    for (int i = 0; i < o.n;)
        if (o.item[i].peer == 1)
            oracle_take(&o, i);
        else
            i++;
    same_records(&q, &o, STEPS);
    trd_queue_clear(&q);
    assert_int_equal(q.len, 0);
    trd_queue_free(&q);
}

static void test_short_queues(void **state)
{
    (void)state;
    run(1, 6, true);
    run(2, 6, false);
}

static void test_long_queues(void **state)
{
    (void)state;
    run(3, 200, true);
    run(4, 3000, false);
    run(5, 40, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_short_queues),
                                       cmocka_unit_test(test_long_queues)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

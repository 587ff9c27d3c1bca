/* test_event_queue.c: the simulator's event queue (src/sim/event_queue.h)
 * against a linear scan for the least (time, seq) of the pending events.
 *
 * Each run pushes and pops as a simulation does (no event earlier than the
 * last one taken), to both lanes and straight to the heap, with delays
 * that tie often (0, 1, 2) or never (exponential), and with bursts that
 * fill the heap to a few hundred events and drain it to empty.  The queue
 * grows (trd_eq_reserve) in the middle of runs, with events pending, and
 * is cleared between runs.  Every event taken must be the scan's. */
#include "testutil.h"

#include "core/splitmix.h"
#include "sim/event_queue.h"

#define PENDING_MAX 600

typedef struct pending {
    trd_event ev[PENDING_MAX];
    int n;
} pending;

/* The index of the least pending event: the oracle. */
static int least(const pending *p)
{
    int best = 0;
    for (int i = 1; i < p->n; i++)
        if (p->ev[i].time < p->ev[best].time ||
            (p->ev[i].time == p->ev[best].time && p->ev[i].seq < p->ev[best].seq))
            best = i;
    return best;
}

static double uniform(uint64_t *rng)
{
    return (double)(trd_splitmix64(rng) >> 11) * 0x1.0p-53;
}

/* A delay that ties with others a third of the time. */
static double delay(uint64_t *rng)
{
    uint64_t kind = trd_splitmix64(rng) % 3;
    return kind == 0 ? (double)(trd_splitmix64(rng) % 3) : -log1p(-uniform(rng));
}

/* Takes the next event and checks it against the oracle. */
static double take_checked(trd_event_queue *q, pending *p, int run, int step)
{
    trd_event_lane *lane;
    const trd_event *ev = trd_eq_peek(q, &lane);
    TU_CHECK(ev != NULL, "run %d step %d: queue empty with %d pending", run, step, p->n);
    int k = least(p);
    TU_CHECK(ev->seq == p->ev[k].seq && ev->op == p->ev[k].op && ev->time == p->ev[k].time,
             "run %d step %d: took (%g, seq %u), the least pending is (%g, seq %u) of %d", run,
             step, ev->time, ev->seq, p->ev[k].time, p->ev[k].seq, p->n);
    double time = ev->time;
    trd_eq_take(q, lane);
    p->ev[k] = p->ev[--p->n];
    return time;
}

static void push_tracked(trd_event_queue *q, pending *p, int lane, double time, uint32_t op)
{
    p->ev[p->n++] = (trd_event){.time = time, .seq = q->next_seq, .op = op};
    trd_eq_push(q, lane, time, op);
}

static void test_against_scan(void **state)
{
    (void)state;
    trd_event_queue q = {0};
    TU_CHECK(trd_eq_reserve(&q, 8), "reserve");
    static pending p;
    uint64_t rng = 42;
    for (int run = 0; run < 60; run++) {
        trd_eq_clear(&q);
        p.n = 0;
        double now = 0;
        int target = 1 + (int)(trd_splitmix64(&rng) % 500); /* the burst's size */
        for (int step = 0; step < 4000; step++) {
            bool fill = p.n < target && (p.n == 0 || trd_splitmix64(&rng) % 4 != 0);
            if (fill) {
                if ((uint32_t)p.n + 1 >= q.cap) /* grows with events pending */
                    TU_CHECK(trd_eq_reserve(&q, 2 * q.cap), "reserve %u", 2 * q.cap);
                int lane = (int)(trd_splitmix64(&rng) % (TRD_EQ_LANES + 1));
                push_tracked(&q, &p, lane, now + delay(&rng), (uint32_t)step);
            } else {
                now = take_checked(&q, &p, run, step);
                if (p.n == 0)
                    target = 1 + (int)(trd_splitmix64(&rng) % 500);
            }
        }
        while (p.n > 0)
            now = take_checked(&q, &p, run, -1);
        trd_event_lane *lane;
        TU_CHECK(trd_eq_peek(&q, &lane) == NULL, "run %d: queue not empty at the end", run);
    }
    trd_eq_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

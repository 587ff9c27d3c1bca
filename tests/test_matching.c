/* test_matching.c: the weighted bipartite edge colouring that cuts one
 * period's transfers into matchings (src/steady/matching.h; Legrand,
 * Marchal and Robert 2004, Sec. 3.3; Schrijver vol. A ch. 20), checked
 * property by property; every expected value is computed here:
 *   - one-port inside each matching: a node sends on one link and receives
 *     on one link at most, its parts on it lasting exactly the matching
 *     (so it is never busy longer);
 *   - every part has duration > 0 and the rate (amount / duration) of the
 *     transfer it comes from; the parts of a transfer add up to it exactly,
 *     in duration and in amount;
 *   - total = the sum of the matchings' durations = the largest weighted
 *     degree Delta (optimal: a node of degree Delta is busy that long);
 *   - at most (distinct links) + 2 n matchings, none empty;
 * on the toy example of the paper (Fig. 2 and 3, period 12) and on seeded
 * random instances; bad input is refused with TRD_EINVAL and a message
 * naming the bad value; no transfer gives no matching. */
#include "testutil.h"

#include <gmp.h>

#include "core/splitmix.h"
#include "steady/matching.h"

/* The transfers of one instance (initialised rationals). */
typedef struct instance {
    int32_t n, count;
    trd_xfer *x;
} instance;

static instance instance_new(int32_t n, int32_t count)
{
    instance in = {n, count, tu_alloc((size_t)count, sizeof(trd_xfer))};
    for (int32_t i = 0; i < count; i++)
        trd_xfer_init(&in.x[i]);
    return in;
}

static void instance_free(instance *in)
{
    for (int32_t i = 0; i < in->count; i++)
        trd_xfer_clear(&in->x[i]);
    free(in->x);
}

static void set_xfer(trd_xfer *x, int32_t from, int32_t to, int32_t label, long amount_num,
                     unsigned long amount_den, long dur_num, unsigned long dur_den)
{
    x->from = from;
    x->to = to;
    x->label = label;
    mpq_set_si(x->amount, amount_num, amount_den);
    mpq_canonicalize(x->amount);
    mpq_set_si(x->duration, dur_num, dur_den);
    mpq_canonicalize(x->duration);
}

/* The transfer of `in` a part comes from ((from, to, label) is unique in
 * every instance here), or -1. */
static int32_t origin(const instance *in, const trd_xfer *part)
{
    for (int32_t i = 0; i < in->count; i++)
        if (in->x[i].from == part->from && in->x[i].to == part->to &&
            in->x[i].label == part->label)
            return i;
    return -1;
}

/* Delta: the largest sum of durations sent or received by one node. */
static void max_degree(const instance *in, mpq_t delta)
{
    mpq_t send, recv;
    mpq_inits(send, recv, NULL);
    mpq_set_ui(delta, 0, 1);
    for (int32_t v = 0; v < in->n; v++) {
        mpq_set_ui(send, 0, 1);
        mpq_set_ui(recv, 0, 1);
        for (int32_t i = 0; i < in->count; i++) {
            if (in->x[i].from == v)
                mpq_add(send, send, in->x[i].duration);
            if (in->x[i].to == v)
                mpq_add(recv, recv, in->x[i].duration);
        }
        if (mpq_cmp(send, delta) > 0)
            mpq_set(delta, send);
        if (mpq_cmp(recv, delta) > 0)
            mpq_set(delta, recv);
    }
    mpq_clears(send, recv, NULL);
}

/* Number of distinct (from, to) pairs. */
static int32_t distinct_links(const instance *in)
{
    int32_t links = 0;
    for (int32_t i = 0; i < in->count; i++) {
        bool seen = false;
        for (int32_t j = 0; j < i && !seen; j++)
            seen = in->x[j].from == in->x[i].from && in->x[j].to == in->x[i].to;
        links += !seen;
    }
    return links;
}

/* One-port inside matching k: one link per sender and per receiver, each
 * node busy for at most the matching's duration. */
static void check_one_port(const instance *in, const trd_matching *m, int32_t k)
{
    int32_t n = in->n;
    int32_t *send_to = tu_alloc((size_t)n, sizeof *send_to);
    int32_t *recv_from = tu_alloc((size_t)n, sizeof *recv_from);
    mpq_t *busy = tu_alloc(2 * (size_t)n, sizeof *busy); /* sends, then receives */
    for (int32_t v = 0; v < n; v++) {
        send_to[v] = recv_from[v] = -1;
        mpq_init(busy[v]);
        mpq_init(busy[n + v]);
    }
    TU_CHECK(mpq_sgn(m->duration) > 0 && m->count > 0, "matching %d: empty or not > 0", k);
    for (int32_t i = 0; i < m->count; i++) {
        const trd_xfer *p = &m->xfers[i];
        TU_CHECK(p->from >= 0 && p->from < n && p->to >= 0 && p->to < n && p->from != p->to,
                 "matching %d part %d: %d -> %d", k, i, p->from, p->to);
        TU_CHECK(send_to[p->from] < 0 || send_to[p->from] == p->to,
                 "matching %d: node %d sends to %d and %d", k, p->from, send_to[p->from], p->to);
        TU_CHECK(recv_from[p->to] < 0 || recv_from[p->to] == p->from,
                 "matching %d: node %d receives from %d and %d", k, p->to, recv_from[p->to],
                 p->from);
        send_to[p->from] = p->to;
        recv_from[p->to] = p->from;
        mpq_add(busy[p->from], busy[p->from], p->duration);
        mpq_add(busy[n + p->to], busy[n + p->to], p->duration);
    }
    for (int32_t v = 0; v < 2 * n; v++) {
        TU_CHECK(mpq_sgn(busy[v]) == 0 || mpq_equal(busy[v], m->duration),
                 "matching %d: node %d busy for less or more than the matching", k, v % n);
        mpq_clear(busy[v]);
    }
    free(busy);
    free(send_to);
    free(recv_from);
}

/* Parts at the rate of their transfer, adding up to it exactly. */
static void check_parts(const instance *in, const trd_matchings *ms)
{
    mpq_t *dur = tu_alloc((size_t)in->count, sizeof *dur);
    mpq_t *amount = tu_alloc((size_t)in->count, sizeof *amount);
    mpq_t lhs, rhs;
    mpq_inits(lhs, rhs, NULL);
    for (int32_t i = 0; i < in->count; i++)
        mpq_inits(dur[i], amount[i], NULL);
    for (int32_t k = 0; k < ms->count; k++) {
        for (int32_t j = 0; j < ms->list[k].count; j++) {
            const trd_xfer *p = &ms->list[k].xfers[j];
            int32_t i = origin(in, p);
            TU_CHECK(i >= 0, "matching %d: part %d -> %d label %d of no transfer", k, p->from,
                     p->to, p->label);
            TU_CHECK(mpq_sgn(p->duration) > 0, "matching %d: part of transfer %d lasts <= 0", k,
                     i);
            mpq_mul(lhs, p->amount, in->x[i].duration);
            mpq_mul(rhs, in->x[i].amount, p->duration);
            TU_CHECK(mpq_equal(lhs, rhs), "matching %d: part of transfer %d at another rate", k,
                     i);
            mpq_add(dur[i], dur[i], p->duration);
            mpq_add(amount[i], amount[i], p->amount);
        }
    }
    for (int32_t i = 0; i < in->count; i++) {
        TU_CHECK(mpq_equal(dur[i], in->x[i].duration), "transfer %d: durations do not add up",
                 i);
        TU_CHECK(mpq_equal(amount[i], in->x[i].amount), "transfer %d: amounts do not add up", i);
        mpq_clears(dur[i], amount[i], NULL);
    }
    mpq_clears(lhs, rhs, NULL);
    free(dur);
    free(amount);
}

/* Every property of the header on the decomposition of `in`. */
static void check_decomposition(const instance *in, const trd_matchings *ms)
{
    mpq_t delta, sum;
    mpq_inits(delta, sum, NULL);
    max_degree(in, delta);
    for (int32_t k = 0; k < ms->count; k++) {
        check_one_port(in, &ms->list[k], k);
        mpq_add(sum, sum, ms->list[k].duration);
    }
    check_parts(in, ms);
    TU_CHECK(mpq_equal(sum, ms->total), "total is not the sum of the durations");
    TU_CHECK(mpq_equal(ms->total, delta), "total is not the largest weighted degree");
    TU_CHECK(ms->count <= distinct_links(in) + 2 * in->n, "%d matchings for %d links, %d nodes",
             ms->count, distinct_links(in), in->n);
    mpq_clears(delta, sum, NULL);
}

static void build_ok(const instance *in, trd_matchings *ms)
{
    trd_status st = trd_matchings_build(in->x, in->count, in->n, ms);
    TU_CHECK(st == TRD_OK, "n = %d, %d transfers: %s", in->n, in->count, trd_errmsg());
}

static void print_matchings(const trd_matchings *ms)
{
    gmp_printf("%d matchings, total %Qd\n", ms->count, ms->total);
    for (int32_t k = 0; k < ms->count; k++) {
        gmp_printf("  matching %d, duration %Qd:", k + 1, ms->list[k].duration);
        for (int32_t j = 0; j < ms->list[k].count; j++) {
            const trd_xfer *p = &ms->list[k].xfers[j];
            gmp_printf("  %d->%d %Qd (%Qd m%d)", p->from, p->to, p->duration, p->amount,
                       p->label);
        }
        printf("\n");
    }
}

/* Fig. 2 and 3(a) for a period of 12: Ps = 0, Pa = 1, Pb = 2, P0 = 3,
 * P1 = 4, label = the message's target; c(s,a) = c(s,b) = 1, c(a,0) = 2/3,
 * c(a,1) = 4/3, c(b,0) = 4/3.  Ps sends 3 + 6 + 3 = 12: Delta = 12. */
static void toy_example(void **state)
{
    (void)state;
    instance in = instance_new(5, 6);
    set_xfer(&in.x[0], 0, 1, 3, 3, 1, 3, 1); /* Ps -> Pa: 3 m0 in 3 */
    set_xfer(&in.x[1], 0, 1, 4, 6, 1, 6, 1); /* Ps -> Pa: 6 m1 in 6 */
    set_xfer(&in.x[2], 0, 2, 3, 3, 1, 3, 1); /* Ps -> Pb: 3 m0 in 3 */
    set_xfer(&in.x[3], 1, 3, 3, 3, 1, 2, 1); /* Pa -> P0: 3 m0 in 2 */
    set_xfer(&in.x[4], 1, 4, 4, 6, 1, 8, 1); /* Pa -> P1: 6 m1 in 8 */
    set_xfer(&in.x[5], 2, 3, 3, 3, 1, 4, 1); /* Pb -> P0: 3 m0 in 4 */
    trd_matchings ms;
    build_ok(&in, &ms);
    check_decomposition(&in, &ms);
    TU_CHECK(mpq_cmp_ui(ms.total, 12, 1) == 0, "total is not the period 12");
    print_matchings(&ms);
    trd_matchings_free(&ms);
    instance_free(&in);
}


/* A random instance: n nodes, some links carrying several transfers,
 * rational durations and amounts (some 0); label = the transfer's index. */
static instance random_instance(uint64_t *s)
{
    int32_t n = 2 + (int32_t)(trd_splitmix64(s) % 11);
    int32_t count = (int32_t)(trd_splitmix64(s) % 41);
    int32_t hubs = 1 + (int32_t)(trd_splitmix64(s) % (uint64_t)n); /* few hubs: parallel links */
    instance in = instance_new(n, count);
    for (int32_t i = 0; i < count; i++) {
        int32_t from = (int32_t)(trd_splitmix64(s) % (uint64_t)hubs);
        int32_t to = (from + 1 + (int32_t)(trd_splitmix64(s) % (uint64_t)(n - 1))) % n;
        set_xfer(&in.x[i], from, to, i, (long)(trd_splitmix64(s) % 10),
                 1 + (unsigned long)(trd_splitmix64(s) % 4), 1 + (long)(trd_splitmix64(s) % 20),
                 1 + (unsigned long)(trd_splitmix64(s) % 6));
    }
    return in;
}

static void random_instances(void **state)
{
    (void)state;
    uint64_t seed = 20040601;
    for (int trial = 0; trial < 500; trial++) {
        instance in = random_instance(&seed);
        trd_matchings ms;
        build_ok(&in, &ms);
        check_decomposition(&in, &ms);
        trd_matchings_free(&ms);
        instance_free(&in);
    }
}

/* Every ordered pair of 24 nodes, two transfers each: 1104 transfers on
 * 552 links, a regular graph of degree 23 * (1 + 1/2) with no dummy edge. */
static void complete_graph(void **state)
{
    (void)state;
    int32_t n = 24, i = 0;
    instance in = instance_new(n, n * (n - 1) * 2);
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = 0; b < n; b++) {
            if (a == b)
                continue;
            set_xfer(&in.x[i], a, b, 2 * (a * n + b), a + b, 1, 1, 1);
            i++;
            set_xfer(&in.x[i], a, b, 2 * (a * n + b) + 1, 1, 3, 1, 2);
            i++;
        }
    trd_matchings ms;
    build_ok(&in, &ms);
    check_decomposition(&in, &ms);
    TU_CHECK(mpq_cmp_ui(ms.total, 69, 2) == 0, "total is not 23 * 3/2");
    trd_matchings_free(&ms);
    instance_free(&in);
}

static void no_transfer(void **state)
{
    (void)state;
    trd_matchings ms;
    trd_status st = trd_matchings_build(NULL, 0, 3, &ms);
    TU_CHECK(st == TRD_OK, "%s", trd_errmsg());
    TU_CHECK(ms.count == 0 && mpq_sgn(ms.total) == 0, "%d matchings for no transfer", ms.count);
    trd_matchings_free(&ms);
}

/* The build must fail with TRD_EINVAL, a message containing `words`, and
 * leave an empty result that trd_matchings_free releases. */
static void expect_refused(const instance *in, int32_t count, int32_t n, const char *words)
{
    trd_matchings ms;
    trd_status st = trd_matchings_build(in->x, count, n, &ms);
    TU_CHECK(st == TRD_EINVAL, "%s: status %d", words, (int)st);
    TU_CHECK(strstr(trd_errmsg(), words) != NULL, "message \"%s\" lacks \"%s\"", trd_errmsg(),
             words);
    TU_CHECK(ms.count == 0 && ms.list == NULL && mpq_sgn(ms.total) == 0,
             "%s: result not empty", words);
    trd_matchings_free(&ms);
}

static void bad_input(void **state)
{
    (void)state;
    instance in = instance_new(3, 3);
    set_xfer(&in.x[0], 0, 1, 0, 1, 1, 1, 1);
    set_xfer(&in.x[1], 1, 2, 1, 1, 1, 1, 1);
    set_xfer(&in.x[2], 2, 0, 2, 1, 1, 1, 1);
    expect_refused(&in, 3, 0, "n_nodes = 0");
    expect_refused(&in, 3, -4, "n_nodes = -4");
    expect_refused(&in, -1, 3, "-1 transfers");
    expect_refused(&in, 3, 2, "transfer 1 is 1 -> 2, nodes are 0..1");
    in.x[2].from = -1;
    expect_refused(&in, 3, 3, "transfer 2 is -1 -> 0");
    in.x[2].from = 2;
    in.x[1].to = 1;
    expect_refused(&in, 3, 3, "transfer 1 goes from node 1 to itself");
    in.x[1].to = 2;
    mpq_set_ui(in.x[0].duration, 0, 1);
    expect_refused(&in, 3, 3, "transfer 0 (0 -> 1) has duration 0");
    mpq_set_si(in.x[0].duration, -3, 2);
    expect_refused(&in, 3, 3, "duration -3/2");
    mpq_set_ui(in.x[0].duration, 1, 1);
    mpq_set_si(in.x[2].amount, -1, 1);
    expect_refused(&in, 3, 3, "transfer 2 (2 -> 0) has amount -1");
    instance none = {3, 0, NULL};
    expect_refused(&none, 2, 3, "2 transfers");
    TU_CHECK(trd_matchings_build(in.x, 3, 3, NULL) == TRD_EINVAL, "out NULL accepted");
    instance_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(toy_example),    cmocka_unit_test(random_instances),
        cmocka_unit_test(complete_graph), cmocka_unit_test(no_transfer),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

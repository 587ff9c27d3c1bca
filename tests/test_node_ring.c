/* test_node_ring.c: the node-aware allreduce node-ring (src/plan/node_ring.c)
 * over node maps of every shape, against oracles written here:
 *
 *   - the replay of tests/ir_replay.h (well formed, matched in MPI order,
 *     no race, no deadlock, every block of every rank's slot 0 holding each
 *     contribution exactly once) for p = 1..20, m = 1..3 segments, and maps
 *     of nodes of 1 to 5 consecutive ranks (the last one short), one node,
 *     round-robin (a node's ranks not consecutive) and random ones;
 *   - the traffic that makes it node-aware, counted from the steps: only a
 *     node's leader (its lowest rank) sends to another node, and it sends
 *     2 (H - 1) m chunks there, 2 (H - 1)/H of the buffer; every other rank
 *     sends m segments, to its leader only;
 *   - run for real on threads (trd_comm_run_plan) for some maps: every rank
 *     ends with the sum of distinct powers of two (a lost or doubled
 *     contribution changes it) in every element;
 *   - the model's node links (each node's link to the others one transfer
 *     at a time each way, transfers between nodes costing params.far_d):
 *     recursive doubling's makespan by hand on 2 nodes;
 *   - the model's choice, in the simulator: links 8 times dearer than a
 *     node's memory and ranks dealt round-robin, node-ring is the fastest
 *     allreduce of the registry on 4 nodes of 2 and of 4; every transfer
 *     alike, a flat plan is;
 *   - slow links (params.costs): with one host's link 4 or 8 times
 *     dearer its leader leaves the ring as a satellite - the replay, its
 *     traffic (the whole buffer once, not 2 (H - 1)/H of it both ways),
 *     its time below 0.9 of the slow link's in the ring, a real run - and
 *     with equal or barely uneven links, two nodes or few segments, the
 *     plain ring's programs; the runtime's segments of node-ring given
 *     costs (TRD_LINK_SEGMENT_BYTES, past the default's cap);
 *   - refusals: a node out of range, bad far costs, a non-commutative
 *     operator. */
#include "ir_replay.h"
#include "runtime_util.h"
#include "core/error.h"      /* trd_clear_error */
#include "ir/plan_layout.h" /* trd_plan_same_programs */
#include "runtime/comm.h"     /* trd_comm_key_for */

#define P_LAST 20
#define M_LAST 3

typedef enum shape { BLOCKS, ONE_NODE, ROUND_ROBIN, RANDOM } shape;

/* Node of each rank: BLOCKS of `size` consecutive ranks, one node, `size`
 * nodes dealt round-robin, or random nodes among `size` (seeded). */
static void make_map(int32_t *node_of, int32_t p, shape s, int32_t size, uint64_t seed)
{
    for (int32_t r = 0; r < p; r++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        node_of[r] = s == BLOCKS        ? r / size
                     : s == ONE_NODE    ? 0
                     : s == ROUND_ROBIN ? r % size
                                        : (int32_t)((seed >> 33) % (uint64_t)size);
        if (node_of[r] >= p)
            node_of[r] = p - 1;
    }
}

/* The node's leader: its lowest rank. */
static int32_t leader_of(const int32_t *node_of, int32_t r)
{
    int32_t q = 0;
    while (node_of[q] != node_of[r])
        q++;
    return q;
}

static int32_t node_count(const int32_t *node_of, int32_t p)
{
    int32_t H = 0;
    for (int32_t r = 0; r < p; r++)
        H += leader_of(node_of, r) == r;
    return H;
}

static trd_params params_of(int32_t p, int32_t m, const int32_t *node_of)
{
    trd_params prm = tu_params(p, 1.0, 0.5, 0);
    prm.segments = m;
    prm.allreduce = true;
    prm.node_of = node_of;
    return prm;
}

/* Only leaders cross nodes, 2 (H - 1) m chunks each; the others send
 * their m segments to their leader. */
static void check_traffic(const trd_plan *plan, const int32_t *node_of, int32_t p, int32_t m)
{
    int32_t H = node_count(node_of, p);
    TU_CHECK(trd_plan_blocks(plan) == H * m, "%s: %d blocks, expected H m = %d", ir_where,
             trd_plan_blocks(plan), H * m);
    for (int32_t r = 0; r < p; r++) {
        int64_t across = 0, blocks_across = 0, up = 0;
        bool leader = leader_of(node_of, r) == r;
        for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
            const trd_step *s = trd_plan_step(plan, r, i);
            if (s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT)
                continue;
            if (node_of[s->peer] != node_of[r]) {
                across++;
                blocks_across += ir_width(s);
            } else if (!leader) {
                up++;
                TU_CHECK(s->peer == leader_of(node_of, r) && ir_width(s) == H,
                         "%s rank %d: a send of %d blocks to %d, not a segment to its "
                         "leader", ir_where, r, ir_width(s), s->peer);
            }
        }
        int64_t want = leader ? 2 * (int64_t)(H - 1) * m : 0;
        TU_CHECK(across == want && blocks_across == want,
                 "%s rank %d: %lld messages (%lld blocks) to other nodes, expected %lld",
                 ir_where, r, (long long)across, (long long)blocks_across, (long long)want);
        TU_CHECK(leader || up == m, "%s rank %d: %lld segments sent up, expected %d", ir_where,
                 r, (long long)up, m);
    }
}

static void check_case(int32_t p, int32_t m, shape s, int32_t size, uint64_t seed)
{
    int32_t node_of[P_LAST];
    make_map(node_of, p, s, size, seed);
    snprintf(ir_where, sizeof ir_where, "node-ring p=%d m=%d map %d/%d/%llu", p, m, (int)s,
             size, (unsigned long long)seed);
    trd_params prm = params_of(p, m, node_of);
    trd_plan *plan = tu_plan("node-ring", &prm);
    ir_replay rp;
    ir_replay_plan(&rp, plan, false, -1, TRD_COLL_ALLREDUCE);
    ir_unload(&rp);
    check_traffic(plan, node_of, p, m);
    double t = trd_plan_makespan(plan);
    TU_CHECK(isfinite(t) && t >= 0, "%s: makespan %g", ir_where, t);
    trd_plan_free(plan);
}

static void test_replay(void **state)
{
    (void)state;
    for (int32_t p = 1; p <= P_LAST; p++)
        for (int32_t m = 1; m <= M_LAST; m++) {
            for (int32_t size = 1; size <= 5; size++) {
                check_case(p, m, BLOCKS, size, 0);
                check_case(p, m, ROUND_ROBIN, size, 0);
            }
            check_case(p, m, ONE_NODE, 1, 0);
            for (uint64_t seed = 1; seed <= 4; seed++)
                check_case(p, m, RANDOM, 1 + (int32_t)seed, seed);
        }
}

/* Without a node map every rank is a node: the ring's programs. */
static void test_no_map_is_ring(void **state)
{
    (void)state;
    for (int32_t p = 1; p <= 9; p++) {
        trd_params prm = params_of(p, 2, NULL);
        trd_plan *a = tu_plan("node-ring", &prm), *b = tu_plan("ring", &prm);
        TU_CHECK(trd_plan_same_programs(a, b), "p = %d: node-ring without nodes is not the "
                 "ring", (int)p);
        trd_plan_free(a);
        trd_plan_free(b);
    }
}

/* plan run on threads over count elements: every rank ends with the sum
 * of distinct powers of two, each rank's once, in every element. */
static void run_sums(trd_plan *plan, int32_t p, int64_t count, const char *what)
{
    rt_plan_run x = {.plan = plan, .count = count, .buf = tu_alloc((size_t)p, sizeof *x.buf)};
    assert_int_equal(trd_op_builtin(&x.op, TRD_OP_SUM, TRD_INT64), TRD_OK);
    for (int32_t r = 0; r < p; r++) {
        int64_t *mine = x.buf[r] = tu_alloc((size_t)x.count, sizeof(int64_t));
        for (int64_t i = 0; i < x.count; i++)
            mine[i] = ((int64_t)1 << r) * (i + 1);
    }
    rt_run_plan_ok(&x, p, what);
    for (int32_t r = 0; r < p; r++) {
        const int64_t *got = x.buf[r];
        for (int64_t i = 0; i < x.count; i++)
            TU_CHECK(got[i] == (((int64_t)1 << p) - 1) * (i + 1),
                     "%s rank %d element %lld: %lld, not every rank once", what, (int)r,
                     (long long)i, (long long)got[i]);
    }
    rt_plan_run_free(&x, p);
}

static void run_for_real(int32_t p, int32_t m, shape s, int32_t size)
{
    int32_t node_of[P_LAST];
    make_map(node_of, p, s, size, 7);
    trd_params prm = params_of(p, m, node_of);
    trd_plan *plan = tu_plan("node-ring", &prm);
    char what[64];
    snprintf(what, sizeof what, "p=%d m=%d map %d/%d", p, m, (int)s, size);
    run_sums(plan, p, 41, what);
    trd_plan_free(plan);
}

static void test_runs(void **state)
{
    (void)state;
    run_for_real(8, 1, BLOCKS, 2);
    run_for_real(8, 3, BLOCKS, 4);
    run_for_real(7, 2, BLOCKS, 3);
    run_for_real(6, 2, ROUND_ROBIN, 2);
    run_for_real(5, 1, ONE_NODE, 1);
    run_for_real(9, 2, RANDOM, 3);
}

/* The fastest allreduce of the registry in the simulator (and node-ring's
 * and ring's makespans) on 4 nodes of `per` ranks placed as `s`: d = 1
 * inside a node, far between two (params.far_d), each node's link to the
 * others one transfer at a time each way. */
static const char *fastest(int32_t per, shape s, double far, double *t_node, double *t_ring)
{
    int32_t node_of[16], p = 4 * per;
    make_map(node_of, p, s, s == BLOCKS ? per : 4, 0);
    const char *best = NULL;
    double best_t = INFINITY;
    for (size_t a = 0; a < trd_algo_count(); a++) {
        trd_params prm = params_of(p, trd_algo_kind_of(a) == TRD_KIND_EXCHANGE ? 4 : 16,
                                   node_of);
        prm.c = 0.05;
        prm.far_d = far;
        prm.K = trd_algo_uses_k(a) ? 2 : 0;
        trd_plan *plan = NULL;
        if (trd_algo_is_dynamic(a) || trd_plan_create(&plan, trd_algo_name(a), &prm) != TRD_OK)
            continue; /* a reduce, or p is not n! */
        double t = trd_plan_makespan(plan);
        if (!strcmp(trd_algo_name(a), "node-ring"))
            *t_node = t;
        if (!strcmp(trd_algo_name(a), "ring"))
            *t_ring = t;
        if (t < best_t) {
            best_t = t;
            best = trd_algo_name(a);
        }
        trd_plan_free(plan);
    }
    trd_clear_error();
    return best;
}

/* The node links by hand: recursive doubling on 4 ranks, 2 nodes; one of
 * its two rounds crosses, both ranks of each node sending at once, so
 * the round takes 2 far; the other takes d; a combine after each. */
static void test_model_links(void **state)
{
    (void)state;
    int32_t rr[4] = {0, 1, 0, 1}, block[4] = {0, 0, 1, 1};
    const int32_t *maps[] = {NULL, rr, block};
    const double want[] = {2 * (1 + 0.05), 2 * 8 + 1 + 2 * 0.05, 2 * 8 + 1 + 2 * 0.05};
    for (int i = 0; i < 3; i++) {
        trd_params prm = params_of(4, 1, maps[i]);
        prm.c = 0.05;
        prm.far_d = 8;
        trd_plan *plan = tu_plan("recursive-doubling", &prm);
        double t = trd_plan_makespan(plan);
        TU_CHECK(fabs(t - want[i]) < 1e-9, "recursive doubling, map %d: %.12g, want %.12g", i,
                 t, want[i]);
        trd_plan_free(plan);
    }
}

/* The model's choice: where the nodes' links are dear and a flat plan
 * crosses them from every rank (round-robin placement), node-ring must be
 * the fastest; where every transfer costs the same, a flat plan must beat
 * it (node-ring funnels each node through its leader). */
static void test_model_choice(void **state)
{
    (void)state;
    for (int32_t per = 2; per <= 4; per += 2) {
        double tn = NAN, tr = NAN;
        const char *best = fastest(per, ROUND_ROBIN, 8.0, &tn, &tr);
        TU_CHECK(best && !strcmp(best, "node-ring"), "4 nodes of %d round-robin, links 8x "
                 "dearer: %s fastest (node-ring %g, ring %g)", per, best ? best : "none", tn,
                 tr);
        best = fastest(per, BLOCKS, 1.0, &tn, &tr);
        TU_CHECK(best && strcmp(best, "node-ring") && tr < tn, "4 nodes of %d, every transfer "
                 "alike: %s fastest, ring %g, node-ring %g", per, best ? best : "none", tr, tn);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    int32_t node_of[4] = {0, 0, 4, 1};
    trd_params prm = params_of(4, 1, node_of);
    trd_plan *plan = NULL;
    assert_int_equal(trd_plan_create(&plan, "node-ring", &prm), TRD_EINVAL);
    TU_CHECK(plan == NULL && strstr(trd_errmsg(), "node_of[2] = 4"), "%s", trd_errmsg());
    node_of[2] = 1;
    prm.far_d = -1; /* the far costs: finite, >= 0, the latency part of the whole */
    assert_int_equal(trd_plan_create(&plan, "node-ring", &prm), TRD_EINVAL);
    TU_CHECK(plan == NULL && strstr(trd_errmsg(), "far_d = -1"), "%s", trd_errmsg());
    prm.far_d = 2;
    prm.far_latency = 3;
    assert_int_equal(trd_plan_create(&plan, "node-ring", &prm), TRD_EINVAL);
    TU_CHECK(plan == NULL && strstr(trd_errmsg(), "far_latency = 3 is above far_d = 2"), "%s",
             trd_errmsg());
    prm.far_latency = NAN;
    assert_int_equal(trd_plan_create(&plan, "node-ring", &prm), TRD_EINVAL);
    TU_CHECK(plan == NULL && strstr(trd_errmsg(), "far_latency = nan"), "%s", trd_errmsg());
    prm.far_d = prm.far_latency = 0;
    prm.noncommutative = true;
    assert_int_equal(trd_plan_create(&plan, "node-ring", &prm), TRD_EUNSUPPORTED);
    TU_CHECK(plan == NULL && strstr(trd_errmsg(), "commutative"), "%s", trd_errmsg());
    trd_costs *k;
    assert_int_equal(trd_costs_create(&k, 4, TRD_DIST_CONST, 1.0, 1.0, 0.0), TRD_OK);
    node_of[2] = -1;
    assert_int_equal(trd_costs_nodes(k, node_of, 2.0), TRD_EINVAL);
    TU_CHECK(strstr(trd_errmsg(), "node_of[2] = -1"), "%s", trd_errmsg());
    node_of[2] = 1;
    assert_int_equal(trd_costs_nodes(k, node_of, -1.0), TRD_EINVAL);
    assert_int_equal(trd_costs_nodes(k, node_of, 3.0), TRD_OK);
    TU_CHECK(trd_costs_transfer(k, 0, 1) == 1.0 && trd_costs_transfer(k, 1, 2) == 3.0 &&
                 trd_costs_transfer(k, 2, 2) == 0.0,
             "trd_costs_nodes: d = %g, %g, %g", trd_costs_transfer(k, 0, 1),
             trd_costs_transfer(k, 1, 2), trd_costs_transfer(k, 2, 2));
    trd_costs_free(k);
}

/* ---- Slow links: satellites (params.costs) ---- */

/* Bases of nodes as node_of: d = 0.1 inside a node, 1 between two, times
 * `slow` where either end is on node `slow_node` (its host's link); c =
 * 0.01.  Read back from a cost file. */
static trd_costs *slow_host(const int32_t *node_of, int32_t p, int32_t slow_node, double slow)
{
    size_t cap = (size_t)p * (size_t)p * 16 + 64, len = 0;
    char *text = tu_alloc(cap, 1), path[64];
    len += (size_t)snprintf(text + len, cap - len, "n %d\n", p);
    for (int32_t i = 0; i < p; i++) {
        for (int32_t j = 0; j < p; j++) {
            double d = i == j ? 0 : node_of[i] == node_of[j] ? 0.1 : 1.0;
            if (i != j && node_of[i] != node_of[j] &&
                (node_of[i] == slow_node || node_of[j] == slow_node))
                d *= slow;
            len += (size_t)snprintf(text + len, cap - len, "%g ", d);
        }
        len += (size_t)snprintf(text + len, cap - len, "\n");
    }
    for (int32_t i = 0; i < p; i++)
        len += (size_t)snprintf(text + len, cap - len, "0.01 ");
    len += (size_t)snprintf(text + len, cap - len, "\n");
    tu_temp_file(text, len, path, sizeof path);
    trd_costs *k = NULL;
    assert_int_equal(trd_costs_read(&k, path), TRD_OK);
    unlink(path);
    free(text);
    return k;
}

/* Messages and blocks rank r sends to other nodes. */
static void across(const trd_plan *plan, const int32_t *node_of, int32_t r, int64_t *msgs,
                   int64_t *blocks)
{
    *msgs = *blocks = 0;
    for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
        const trd_step *s = trd_plan_step(plan, r, i);
        if ((s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT) &&
            node_of[s->peer] != node_of[r]) {
            (*msgs)++;
            *blocks += ir_width(s);
        }
    }
}

/* H nodes of `per` ranks, node `slow_node`'s link `slow` times dearer:
 * the plan under those costs is right (the replay) and, where the link is
 * slow enough, sends the slow node's sum once (m segments of R = H - 1
 * chunks: the whole buffer) instead of 2 (H - 1)/H of it both ways, and
 * its makespan is below 0.9 of the time the slow link alone takes in any
 * plan that keeps that host in the ring; else it is the plain node-ring. */
static void check_satellite(int32_t H, int32_t per, int32_t m, int32_t slow_node, double slow,
                            bool spared)
{
    int32_t p = H * per, node_of[P_LAST];
    make_map(node_of, p, BLOCKS, per, 0);
    trd_costs *k = slow_host(node_of, p, slow_node, slow);
    snprintf(ir_where, sizeof ir_where, "node-ring with costs, %d nodes of %d, m=%d, node %d "
             "%gx slower", H, per, m, slow_node, slow);
    trd_params prm = params_of(p, m, node_of);
    prm.d = prm.c = 0;
    trd_costs_mean(k, &prm.d, &prm.c);
    prm.costs = k;
    trd_plan *plan = tu_plan("node-ring", &prm);
    ir_replay rp;
    ir_replay_plan(&rp, plan, false, -1, TRD_COLL_ALLREDUCE);
    ir_unload(&rp);
    int32_t R = spared ? H - 1 : H, lead = slow_node * per;
    TU_CHECK(trd_plan_blocks(plan) == R * m, "%s: %d blocks, expected %d", ir_where,
             trd_plan_blocks(plan), R * m);
    int64_t msgs, blocks;
    across(plan, node_of, lead, &msgs, &blocks);
    int64_t want_msgs = spared ? m : 2 * (int64_t)(H - 1) * m;
    int64_t want_blocks = spared ? (int64_t)R * m : 2 * (int64_t)(H - 1) * m;
    TU_CHECK(msgs == want_msgs && blocks == want_blocks, "%s: the slow node's leader sends "
             "%lld messages (%lld blocks) to other nodes, expected %lld (%lld)", ir_where,
             (long long)msgs, (long long)blocks, (long long)want_msgs, (long long)want_blocks);
    /* any plan keeping the slow host in the ring sends 2 (H-1)/H of the
     * buffer each way over its link; planned without the costs: the ring */
    double t = trd_plan_makespan(plan), kept = 2.0 * (H - 1) / H * slow;
    TU_CHECK(!spared || t < 0.9 * kept, "%s: makespan %g, not below 0.9 of %g, what the slow "
             "link alone takes in the ring", ir_where, t, kept);
    prm.costs = NULL;
    trd_plan *flat = tu_plan("node-ring", &prm);
    TU_CHECK(spared || trd_plan_same_programs(plan, flat), "%s: not the plain node-ring",
             ir_where);
    trd_plan_free(flat);
    trd_plan_free(plan);
    trd_costs_free(k);
}

static void test_slow_links(void **state)
{
    (void)state;
    for (int32_t m = 16; m <= 32; m *= 2) {
        check_satellite(4, 2, m, 3, 4.0, true);
        check_satellite(4, 2, m, 0, 4.0, true);
        check_satellite(5, 3, m, 2, 8.0, true);
        check_satellite(3, 1, m, 1, 4.0, true);
        check_satellite(4, 2, m, 1, 1.0, false); /* every link alike: the plain ring */
        check_satellite(4, 2, m, 1, 1.2, false); /* barely slower: sparing would cost more */
        check_satellite(2, 2, m, 1, 8.0, false); /* two nodes: no ring without the slow one */
    }
    check_satellite(4, 2, 1, 3, 4.0, false); /* few segments: the satellite's ways in and */
    check_satellite(4, 2, 4, 3, 4.0, false); /* out would not overlap enough */
}

/* A plan with a satellite run for real: every contribution once. */
static void test_slow_links_run(void **state)
{
    (void)state;
    int32_t node_of[8], p = 8;
    make_map(node_of, p, BLOCKS, 2, 0);
    trd_costs *k = slow_host(node_of, p, 2, 4.0);
    trd_params prm = params_of(p, 16, node_of);
    trd_costs_mean(k, &prm.d, &prm.c);
    prm.costs = k;
    trd_plan *plan = tu_plan("node-ring", &prm);
    TU_CHECK(trd_plan_blocks(plan) == 3 * 16, "a satellite expected: %d blocks",
             trd_plan_blocks(plan));
    run_sums(plan, p, 101, "a satellite");
    trd_plan_free(plan);
    trd_costs_free(k);
}

/* The runtime's segments (trd_comm_key_for): node-ring given costs cuts
 * TRD_LINK_SEGMENT_BYTES pieces, past the default's cap; without costs,
 * and ring with them, the default TRD_SEGMENT_BYTES pieces. */
static trd_status segments_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rt_log *log = arg;
    trd_op *sum = NULL;
    trd_status st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    const int64_t counts[2] = {(1 << 20) / 8, (16 << 20) / 8};
    for (int i = 0; st == TRD_OK && i < 2; i++)
        for (int c = 0; c < 3; c++) {
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            o.algo = c == 2 ? "ring" : "node-ring";
            o.costs = c > 0 ? tu_costs(trd_comm_size(comm), 1, 1, 3) : NULL;
            trd_comm_key key;
            if ((st = trd_comm_key_for(comm, counts[i], sum, 0, TRD_COLL_ALLREDUCE, &o, &key)))
                break;
            int64_t bytes = counts[i] * 8, want = c == 1 ? bytes / TRD_LINK_SEGMENT_BYTES
                                                         : bytes / TRD_SEGMENT_BYTES;
            if (rank == 0 && key.params.segments != want)
                rt_failf(log, "%s%s, %lld bytes: %lld segments, want %lld", o.algo,
                         o.costs ? " with costs" : "", (long long)bytes,
                         (long long)key.params.segments, (long long)want);
        }
    trd_op_free(sum);
    return st;
}

static void test_link_segments(void **state)
{
    (void)state;
    rt_run_logged_ok(4, RT_TIMEOUT_S, segments_rank, "link segments");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),     cmocka_unit_test(test_no_map_is_ring),
        cmocka_unit_test(test_replay),       cmocka_unit_test(test_runs),
        cmocka_unit_test(test_model_links),  cmocka_unit_test(test_model_choice),
        cmocka_unit_test(test_slow_links),   cmocka_unit_test(test_slow_links_run),
        cmocka_unit_test(test_link_segments),
    };
    return cmocka_run_group_tests_name("node_ring", tests, NULL, NULL);
}

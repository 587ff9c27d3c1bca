/* test_exchange.c: the exchange allreduce algorithms (recursive-doubling,
 * ring, rabenseifner; docs/ALGORITHMS_ALLREDUCE.md) against a replay of
 * their schedule IR written here from the IR's definition (treduce.h).
 *
 * For p = 1..33 ranks, m = 1..3 segments, commutative and, where the
 * algorithm accepts it, non-commutative:
 *   - the replay of tests/ir_replay.h: well formed (and slot 1 the only
 *     scratch slot), SENDs and RECVs matched in MPI order, no race between
 *     steps of a rank that the deps leave unordered, no deadlock, and every
 *     block of every rank's slot 0 ending with each contribution exactly
 *     once (for non-commutative plans, built by joining adjacent rank
 *     intervals in order);
 *   - the counts behind the cost formulas: B, and per rank the messages
 *     and blocks sent and the blocks combined;
 *   - the plan's makespan (the simulator's) is finite and >= 0, and for
 *     m = 1 equals the alpha-beta-gamma formula with alpha = latency,
 *     n beta = d - latency, n gamma = c.
 * And: reduce (allreduce off) is refused, non-commutative ring too for
 * p >= 3, and a ring too large for the engine is refused before it is
 * built. */
#include "ir_replay.h"

#define P_LAST 33
#define M_LAST 3

typedef enum algo { RD, RING, RAB } algo;
static const char *const names[] = {"recursive-doubling", "ring", "rabenseifner"};
static const algo algos[] = {RD, RING, RAB};

/* Messages, blocks sent and blocks combined by rank r: the cost formulas. */
static void expect_counts(algo a, int32_t p, int32_t m, int32_t r, int64_t out[3])
{
    ir_fold f = ir_fold_of(p);
    bool out_rank = r < 2 * f.rem && r % 2 == 0, folds = r < 2 * f.rem && r % 2 == 1;
    int64_t k = f.rounds, q = f.p2, msgs, blocks, combined;
    if (a == RING) {
        msgs = blocks = 2 * (int64_t)(p - 1);
        combined = p - 1;
    } else if (a == RD) {
        msgs = blocks = out_rank ? 1 : k + folds;
        combined = out_rank ? 0 : k + folds;
    } else {
        msgs = out_rank ? 1 : 2 * k + folds;
        blocks = out_rank ? q : 2 * (q - 1) + folds * q;
        combined = out_rank ? 0 : (q - 1) + folds * q;
    }
    out[0] = msgs * m;
    out[1] = blocks * m;
    out[2] = combined * m;
}

static void check_counts(const ir_replay *rp, algo a, int32_t m)
{
    ir_fold f = ir_fold_of(rp->p);
    int32_t B = a == RING ? rp->p * m : a == RD ? m : f.p2 * m;
    TU_CHECK(rp->B == B, "%s: B = %d, expected %d", ir_where, rp->B, B);
    for (int32_t r = 0; r < rp->p; r++) {
        int64_t got[3], want[3];
        ir_rank_counts(rp, r, got);
        expect_counts(a, rp->p, m, r, want);
        TU_CHECK(got[0] == want[0] && got[1] == want[1] && got[2] == want[2],
                 "%s rank %d: %lld messages, %lld blocks sent, %lld combined; expected "
                 "%lld, %lld, %lld", ir_where, r, (long long)got[0], (long long)got[1],
                 (long long)got[2], (long long)want[0], (long long)want[1],
                 (long long)want[2]);
    }
}

/* The alpha-beta-gamma makespan of an unsegmented plan (the files' heads). */
static double formula(algo a, const trd_params *prm)
{
    int32_t p = (int32_t)prm->n;
    ir_fold f = ir_fold_of(p);
    double al = prm->latency, be = prm->d - prm->latency, ga = prm->c, fold = f.rem > 0;
    double share = (p - 1.0) / p, share2 = (f.p2 - 1.0) / f.p2;
    if (a == RING)
        return 2 * (p - 1) * al + 2 * share * be + share * ga;
    if (a == RD)
        return (f.rounds + 2 * fold) * (al + be) + (f.rounds + fold) * ga;
    return (2 * f.rounds + 2 * fold) * al + (2 * share2 + 2 * fold) * be + (share2 + fold) * ga;
}

static void check_case(int a, int32_t p, int32_t m, bool nc)
{
    snprintf(ir_where, sizeof ir_where, "%s p=%d m=%d%s", names[a], p, m, nc ? " nc" : "");
    trd_params prm = tu_params(p, 1.0, 0.5, 0);
    prm.latency = 0.25;
    prm.segments = m;
    prm.allreduce = true;
    prm.noncommutative = nc;
    trd_plan *plan = tu_plan(names[a], &prm);
    ir_replay rp;
    ir_replay_plan(&rp, plan, nc, 1, TRD_COLL_ALLREDUCE);
    check_counts(&rp, a, m);
    double t = trd_plan_makespan(plan);
    TU_CHECK(isfinite(t) && t >= 0, "%s: makespan %g", ir_where, t);
    double want = formula(a, &prm); /* the engine keeps block shares as floats */
    TU_CHECK(m > 1 || fabs(t - want) <= 1e-6 * fmax(1.0, want), "%s: makespan %.12g, "
             "formula %.12g", ir_where, t, want);
    ir_unload(&rp);
    trd_plan_free(plan);
}

/* One algorithm (*state) over the whole matrix. */
static void test_algo(void **state)
{
    algo a = *(const algo *)*state;
    ir_each_case(check_case, a, P_LAST, M_LAST, a != RING); /* ring: commutative-only */
}

/* Reduce, non-commutative ring (p >= 3), a ring too large: refused. */
static void test_refusals(void **state)
{
    (void)state;
    for (algo a = RD; a <= RAB; a++) {
        tu_exchange_algo(names[a]);
        trd_params prm = tu_params(8, 1, 1, 0);
        tu_expect_refused(names[a], &prm, TRD_EUNSUPPORTED, "");
    }
    trd_params prm = tu_params(3, 1, 1, 0);
    prm.allreduce = prm.noncommutative = true;
    tu_expect_refused("ring", &prm, TRD_EUNSUPPORTED, "non-commutative");
    prm = tu_params(100000, 1, 1, 0);
    prm.allreduce = true;
    tu_expect_refused("ring", &prm, TRD_EINVAL, "steps");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        {"recursive-doubling", test_algo, NULL, NULL, (void *)&algos[RD]},
        {"ring", test_algo, NULL, NULL, (void *)&algos[RING]},
        {"rabenseifner", test_algo, NULL, NULL, (void *)&algos[RAB]},
    };
    return cmocka_run_group_tests_name("exchange", tests, NULL, NULL);
}

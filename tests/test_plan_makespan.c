/* test_plan_makespan.c: a plan is read-only after trd_plan_create.
 *
 * Plans the tree evaluator does not cover (segmented, allreduce,
 * exchange) are timed by the simulator when their makespan is asked for
 * (src/sim/plan_makespan.c).  That must not write the plan: its bytes are
 * the same before and after, threads asking at once all get the value of
 * a plan nobody else touched, and trd_makespan (the sweep path) agrees. */
#include <pthread.h>

#include "testutil.h"
#include "plan/builders.h" /* struct trd_plan: its bytes */

#define THREADS 4
#define ASKS 50

typedef struct asker {
    const trd_plan *plan;
    double seen[ASKS];
} asker;

static void *ask(void *arg)
{
    asker *a = arg;
    for (int i = 0; i < ASKS; i++)
        a->seen[i] = trd_plan_makespan(a->plan);
    return NULL;
}

static trd_plan *make(const char *algo, bool allreduce, int64_t segments)
{
    trd_params p;
    trd_params_init(&p);
    p.n = 12;
    p.d = 2;
    p.c = 1;
    p.latency = 0.5;
    p.allreduce = allreduce;
    p.segments = segments;
    trd_plan *plan = NULL;
    TU_CHECK(trd_plan_create(&plan, algo, &p) == TRD_OK, "%s: %s", algo, trd_errmsg());
    return plan;
}

static void test_makespan_leaves_plan_unwritten(void **state)
{
    (void)state;
    const struct {
        const char *algo;
        bool allreduce;
        int64_t segments;
    } cases[] = {{"pipeline", false, 6}, {"binomial", true, 1}, {"ring", true, 0},
                 {"greedy", false, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trd_plan *plan = make(cases[i].algo, cases[i].allreduce, cases[i].segments);
        struct trd_plan before = *plan;
        double want = trd_plan_makespan(plan);
        TU_CHECK(memcmp(&before, plan, sizeof before) == 0,
                 "%s: trd_plan_makespan wrote the plan", cases[i].algo);
        TU_CHECK(isfinite(want) && want > 0, "%s: makespan %g", cases[i].algo, want);
        double sweep;
        TU_CHECK(trd_makespan(cases[i].algo, trd_plan_params(plan), &sweep) == TRD_OK,
                 "%s: trd_makespan: %s", cases[i].algo, trd_errmsg());
        TU_CHECK(sweep == want, "%s: trd_makespan %g, trd_plan_makespan %g", cases[i].algo,
                 sweep, want);
        trd_plan_free(plan);

        /* Fresh plan, asked by several threads at once from the start. */
        plan = make(cases[i].algo, cases[i].allreduce, cases[i].segments);
        asker a[THREADS];
        pthread_t tid[THREADS];
        for (int t = 0; t < THREADS; t++) {
            a[t].plan = plan;
            assert_int_equal(pthread_create(&tid[t], NULL, ask, &a[t]), 0);
        }
        for (int t = 0; t < THREADS; t++)
            pthread_join(tid[t], NULL);
        for (int t = 0; t < THREADS; t++)
            for (int k = 0; k < ASKS; k++)
                TU_CHECK(a[t].seen[k] == want, "%s: thread %d ask %d: %g, not %g",
                         cases[i].algo, t, k, a[t].seen[k], want);
        trd_plan_free(plan);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_makespan_leaves_plan_unwritten)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

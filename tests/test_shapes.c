/* test_shapes.c: binomial and Fibonacci trees (canon-antoniu Sec. 7,
 * benoit-canon-marchal Sec. 3.2).
 *
 * Shapes are read from the plan's parent array (trd_plan_parent) and
 * checked against the definitions, written here from the paper:
 *   is_binomial(v, k): v's children are the roots of binomial trees of
 *     orders 0 .. k-1, one each (Def. 12);
 *   is_fibonacci(v, k): v's children are the roots of Fibonacci trees of
 *     orders k-2, k-3, ..., 0, -1, one each; orders 0 and -1 are single
 *     nodes (Def. 15, with "parent" read as the paper uses it: the sink of
 *     the order k-2 tree sends to the sink of the order k-1 tree.  The
 *     other reading, children of orders k-1, k-3, ..., makes order 2 the
 *     chain of 3 nodes, which takes 2(d + c), not Prop. 16's
 *     d + max(d,c) + c; the proof of Theorem 17 contrasts the two).
 * Checks:
 *   - "binomial" on 2^k ranks is a binomial tree of order k with makespan
 *     exactly k(d + c) (Prop. 13); "fibonacci" on F(k+2) ranks is a
 *     Fibonacci tree of order k with makespan d + (k-1) max(d,c) + c
 *     (Prop. 16), for several (d, c);
 *   - "greedy" with min(d, c) = 0 on 2^k ranks builds the binomial tree
 *     (Theorem 14), with d = c on F(k+2) ranks the Fibonacci tree
 *     (Theorem 17);
 *   - "binomial-strategy" on 2^k and "fibonacci-strategy" on F(k+2) build
 *     those shapes for arbitrary costs (Sec. 7.3), with the same makespans.
 * The checkers are first shown to reject wrong shapes. */
#include <stdbool.h>

#include "testutil.h"

/* Costs for which the layouts and strategies are checked. */
static const double costs[][2] = {{1, 1}, {1, 0}, {0, 1}, {2, 1},
                                  {1, 3}, {1, 0.3}, {0.3, 1}};
#define NCOSTS (sizeof costs / sizeof costs[0])

typedef struct shape {
    int32_t n, root;
    int32_t *first, *child, *size; /* children CSR, subtree sizes */
} shape;

static int64_t fib(int k) /* F(0) = 0, F(1) = 1 */
{
    int64_t a = 0, b = 1;
    for (int i = 0; i < k; i++) {
        int64_t next = a + b;
        a = b;
        b = next;
    }
    return a;
}

static int32_t subtree_size(shape *t, int32_t v)
{
    int32_t s = 1;
    for (int32_t e = t->first[v]; e < t->first[v + 1]; e++)
        s += subtree_size(t, t->child[e]);
    return t->size[v] = s;
}

/* The tree of a plan; fails the test unless it has exactly one root. */
static shape shape_of(const trd_plan *plan)
{
    int32_t n = (int32_t)trd_plan_params(plan)->n;
    shape t = {.n = n, .root = -1, .first = tu_alloc((size_t)n + 1, sizeof(int32_t)),
               .child = tu_alloc((size_t)n, sizeof(int32_t)),
               .size = tu_alloc((size_t)n, sizeof(int32_t))};
    int32_t *cursor = tu_alloc((size_t)n, sizeof *cursor);
    for (int32_t v = 0; v < n; v++) {
        int32_t p = trd_plan_parent(plan, v);
        if (p < 0) {
            assert_int_equal(t.root, -1);
            t.root = v;
        } else {
            assert_in_range(p, 0, n - 1);
            t.first[p + 1]++;
        }
    }
    assert_int_not_equal(t.root, -1);
    for (int32_t v = 0; v < n; v++) {
        t.first[v + 1] += t.first[v];
        cursor[v] = t.first[v];
    }
    for (int32_t v = 0; v < n; v++)
        if (v != t.root)
            t.child[cursor[trd_plan_parent(plan, v)]++] = v;
    free(cursor);
    assert_int_equal(subtree_size(&t, t.root), n); /* connected, no cycle */
    return t;
}

static void shape_free(shape *t)
{
    free(t->first);
    free(t->child);
    free(t->size);
}

/* Def. 12: children of orders 0..k-1, one each (told apart by size 2^j). */
static bool is_binomial(const shape *t, int32_t v, int k)
{
    bool seen[64] = {false};
    if (t->first[v + 1] - t->first[v] != k)
        return false;
    for (int32_t e = t->first[v]; e < t->first[v + 1]; e++) {
        int32_t u = t->child[e];
        int j = 0;
        while (j < k && ((int64_t)1 << j) != t->size[u])
            j++;
        if (j == k || seen[j] || !is_binomial(t, u, j))
            return false;
        seen[j] = true;
    }
    return true;
}

/* Def. 15 read as Prop. 16 and Theorem 17 need it: a Fibonacci tree of
 * order k > 0 is one of order k-1 whose sink also receives from the sink of
 * one of order k-2; orders 0 and -1 are single nodes.  Unrolled, v's
 * children are the roots of trees of orders k-2, k-3, ..., 0, -1, one each
 * (told apart by size F(j+2); orders 0 and -1 are both single nodes). */
static bool is_fibonacci(const shape *t, int32_t v, int k)
{
    bool seen[66] = {false}; /* seen[j + 1] for order j */
    int want = k > 0 ? k : 0;
    if (t->first[v + 1] - t->first[v] != want)
        return false;
    for (int32_t e = t->first[v]; e < t->first[v + 1]; e++) {
        int32_t u = t->child[e];
        int j = k - 2;
        while (j >= -1 && (seen[j + 1] || fib(j + 2) != t->size[u]))
            j--;
        if (j < -1 || !is_fibonacci(t, u, j))
            return false;
        seen[j + 1] = true;
    }
    return true;
}

typedef bool (*shape_fn)(const shape *t, int32_t v, int k);

/* Plans algo on n ranks and checks shape order k and, if want >= 0, the
 * makespan. */
static void check_plan(const char *algo, int64_t n, double d, double c, shape_fn is,
                       const char *what, int k, double want)
{
    trd_params p = tu_params(n, d, c, 0);
    trd_plan *plan = tu_plan(algo, &p);
    shape t = shape_of(plan);
    TU_CHECK(is(&t, t.root, k), "%s n=%lld d=%g c=%g is not a %s tree of order %d", algo,
             (long long)n, d, c, what, k);
    if (want >= 0)
        TU_CHECK(tu_close(trd_plan_makespan(plan), want),
                 "%s n=%lld d=%g c=%g: makespan %.17g, expected %.17g", algo,
                 (long long)n, d, c, trd_plan_makespan(plan), want);
    shape_free(&t);
    trd_plan_free(plan);
}

static bool shape_is(const char *algo, int64_t n, shape_fn is, int k)
{
    trd_params p = tu_params(n, 1, 1, 0);
    trd_plan *plan = tu_plan(algo, &p);
    shape t = shape_of(plan);
    bool ok = is(&t, t.root, k);
    shape_free(&t);
    trd_plan_free(plan);
    return ok;
}

static void checkers_reject_wrong_shapes(void **state)
{
    (void)state;
    assert_true(shape_is("flat", 2, is_binomial, 1));
    assert_false(shape_is("chain", 4, is_binomial, 2));
    assert_false(shape_is("flat", 4, is_binomial, 2));
    assert_false(shape_is("fibonacci", 8, is_binomial, 3)); /* 8 = F(6) = 2^3 */
    assert_false(shape_is("binomial", 8, is_fibonacci, 4));
    assert_false(shape_is("chain", 3, is_fibonacci, 2));
    assert_true(shape_is("flat", 3, is_fibonacci, 2));
    assert_false(shape_is("flat", 5, is_fibonacci, 3));
    assert_false(shape_is("chain", 1, is_fibonacci, 1));
    assert_false(shape_is("binomial", 16, is_binomial, 3)); /* wrong order */
    assert_false(shape_is("fibonacci", 13, is_fibonacci, 4));
}

static void binomial_layout(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOSTS; i++)
        for (int k = 0; k <= 12; k++) {
            double d = costs[i][0], c = costs[i][1];
            check_plan("binomial", (int64_t)1 << k, d, c, is_binomial, "binomial", k,
                       k * (d + c));
        }
}

static double prop16(int k, double d, double c)
{
    return k == 0 ? 0.0 : d + (k - 1) * fmax(d, c) + c;
}

static void fibonacci_layout(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOSTS; i++)
        for (int k = 1; k <= 18; k++) {
            double d = costs[i][0], c = costs[i][1];
            check_plan("fibonacci", fib(k + 2), d, c, is_fibonacci, "Fibonacci", k,
                       prop16(k, d, c));
        }
}

static void greedy_min_zero_is_binomial(void **state)
{
    (void)state;
    for (int k = 0; k <= 14; k++) {
        check_plan("greedy", (int64_t)1 << k, 1, 0, is_binomial, "binomial", k, k);
        check_plan("greedy", (int64_t)1 << k, 0, 1, is_binomial, "binomial", k, k);
        check_plan("greedy", (int64_t)1 << k, 2.5, 0, is_binomial, "binomial", k, 2.5 * k);
    }
}

static void greedy_equal_costs_is_fibonacci(void **state)
{
    (void)state;
    for (int k = 1; k <= 20; k++) {
        check_plan("greedy", fib(k + 2), 1, 1, is_fibonacci, "Fibonacci", k, k + 1.0);
        check_plan("greedy", fib(k + 2), 0.5, 0.5, is_fibonacci, "Fibonacci", k,
                   0.5 * (k + 1));
    }
}

static void strategies_build_their_shapes(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCOSTS; i++) {
        double d = costs[i][0], c = costs[i][1];
        for (int k = 0; k <= 12; k++)
            check_plan("binomial-strategy", (int64_t)1 << k, d, c, is_binomial,
                       "binomial", k, k * (d + c));
        for (int k = 1; k <= 18; k++)
            check_plan("fibonacci-strategy", fib(k + 2), d, c, is_fibonacci,
                       "Fibonacci", k, prop16(k, d, c));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checkers_reject_wrong_shapes),
        cmocka_unit_test(binomial_layout),
        cmocka_unit_test(fibonacci_layout),
        cmocka_unit_test(greedy_min_zero_is_binomial),
        cmocka_unit_test(greedy_equal_costs_is_fibonacci),
        cmocka_unit_test(strategies_build_their_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

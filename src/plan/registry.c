/* registry.c: name lookup and listing over the table of registry.def. */
#include "plan/registry.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

/* Each row macro sets its kind, its entry point and the collectives the
 * kind runs; the flags are the row's own. */
#define BOTH (TRD_CAP_REDUCE | TRD_CAP_ALLREDUCE)
static const trd_algo algos[] = {
#define TRD_TREE(n, build_fn, bound, source, flags, text)                                 \
    {.name = n, .kind = TRD_KIND_TREE, .build = build_fn, .upper_bound = bound,            \
     .bound_source = source, .caps = (flags) | BOTH, .description = text},
#define TRD_PIPELINED(n, build_fn, segments_fn, flags, text)                              \
    {.name = n, .kind = TRD_KIND_PIPELINED, .build = build_fn, .segments = segments_fn,    \
     .bound_source = "none (segmented)", .caps = (flags) | BOTH, .description = text},
#define TRD_EXCHANGE(n, schedule_fn, flags, text)                                         \
    {.name = n, .kind = TRD_KIND_EXCHANGE, .schedule = schedule_fn,                        \
     .bound_source = "none (exchange)", .caps = (flags) | TRD_CAP_ALLREDUCE,               \
     .description = text},
#define TRD_DYNAMIC(n, policy_fn, bound, source, flags, text)                             \
    {.name = n, .kind = TRD_KIND_DYNAMIC, .policy = policy_fn, .upper_bound = bound,       \
     .bound_source = source, .caps = (flags) | TRD_CAP_REDUCE, .description = text},
#include "plan/registry.def"
#undef TRD_TREE
#undef TRD_PIPELINED
#undef TRD_EXCHANGE
#undef TRD_DYNAMIC
};

#define ALGO_COUNT (sizeof algos / sizeof algos[0])

size_t trd_algo_count(void) { return ALGO_COUNT; }

const trd_algo *trd_algo_entry(size_t i) { return i < ALGO_COUNT ? &algos[i] : NULL; }

const char *trd_algo_name(size_t i) { return i < ALGO_COUNT ? algos[i].name : NULL; }

const char *trd_algo_describe(size_t i)
{
    return i < ALGO_COUNT ? algos[i].description : NULL;
}

bool trd_algo_uses_k(size_t i) { return i < ALGO_COUNT && (algos[i].caps & TRD_CAP_K); }

bool trd_algo_uses_costs(size_t i) { return i < ALGO_COUNT && (algos[i].caps & TRD_CAP_COSTS); }

bool trd_algo_uses_nodes(size_t i) { return i < ALGO_COUNT && (algos[i].caps & TRD_CAP_NODES); }

bool trd_algo_commutative_only(size_t i)
{
    return i < ALGO_COUNT && (algos[i].caps & TRD_CAP_COMMUTATIVE);
}

trd_status trd_algo_check_operator(const trd_algo *a, bool noncommutative)
{
    if (!noncommutative || !(a->caps & TRD_CAP_COMMUTATIVE))
        return TRD_OK;
    return trd_fail(TRD_EUNSUPPORTED, "%s takes commutative operators only (it may combine "
                    "any two ranks' values): a non-commutative operator needs an algorithm "
                    "that keeps rank order (nc-tree-dyn, binomial, greedy, ...)", a->name);
}

trd_status trd_algo_check_reproducible(const trd_algo *a, bool reproducible)
{
    if (!reproducible || (a->caps & TRD_CAP_REPRODUCIBLE))
        return TRD_OK;
    return trd_fail(TRD_EUNSUPPORTED, "%s does not combine in one fixed order (%s), so a "
                    "floating-point result may change from run to run or rank to rank "
                    "(reproducible mode takes order-deterministic algorithms only)", a->name,
                    a->kind == TRD_KIND_DYNAMIC ? "it pairs ranks in arrival order"
                                                : "each rank adds in its own order");
}

trd_status trd_algo_check_collective(const trd_algo *a, bool allreduce)
{
    if (allreduce && !(a->caps & TRD_CAP_ALLREDUCE))
        return trd_fail(TRD_EUNSUPPORTED, "%s is a reduce: the rank that ends with the result "
                        "is known only at the end (use a tree or exchange algorithm for an "
                        "allreduce)", a->name);
    if (!allreduce && !(a->caps & TRD_CAP_REDUCE))
        return trd_fail(TRD_EUNSUPPORTED, "%s is an allreduce algorithm: ask for an "
                        "allreduce (--allreduce)", a->name);
    return TRD_OK;
}

/* Whether p is n! for some n >= 1. */
static bool is_factorial(int64_t p)
{
    int64_t f = 1;
    for (int64_t n = 2; f < p && f <= INT64_MAX / n; n++)
        f *= n;
    return f == p;
}

trd_status trd_algo_check_ranks(const trd_algo *a, int64_t p)
{
    if (!(a->caps & TRD_CAP_FACTORIAL_P) || is_factorial(p))
        return TRD_OK;
    return trd_fail(TRD_EUNSUPPORTED, "%s runs on the n-star graph S_n: it needs p = n! ranks "
                    "(1, 2, 6, 24, 120, 720, 5040, ...); p = %lld", a->name, (long long)p);
}

bool trd_algo_fits(const trd_algo *a, bool allreduce, bool noncommutative, bool reproducible,
                   int64_t p)
{
    unsigned need = (allreduce ? TRD_CAP_ALLREDUCE : TRD_CAP_REDUCE) |
                    (reproducible ? TRD_CAP_REPRODUCIBLE : 0);
    return (a->caps & need) == need && !(noncommutative && (a->caps & TRD_CAP_COMMUTATIVE)) &&
           (!(a->caps & TRD_CAP_FACTORIAL_P) || is_factorial(p));
}

trd_status trd_algo_check_costs(const trd_algo *a, bool has_costs)
{
    if (has_costs || !(a->caps & TRD_CAP_COSTS))
        return TRD_OK;
    return trd_fail(TRD_EUNSUPPORTED, "%s plans for heterogeneous costs d[i][j], c[i]: give "
                    "them (trd_params.costs or trd_coll_opts.costs; treduce --costs FILE or "
                    "--preset NAME)", a->name);
}

bool trd_algo_is_dynamic(size_t i)
{
    return i < ALGO_COUNT && algos[i].kind == TRD_KIND_DYNAMIC;
}

trd_algo_kind trd_algo_kind_of(size_t i) { return i < ALGO_COUNT ? algos[i].kind : TRD_KIND_TREE; }

bool trd_algo_reproducible(size_t i)
{
    return i < ALGO_COUNT && (algos[i].caps & TRD_CAP_REPRODUCIBLE);
}

bool trd_algo_needs_factorial_p(size_t i)
{
    return i < ALGO_COUNT && (algos[i].caps & TRD_CAP_FACTORIAL_P);
}

/* The index found last: every collective call looks its algorithm up by
 * name, and a run repeats the same one (one strcmp instead of a scan of
 * the registry).  Atomic: ranks may be threads. */
static _Atomic size_t last_found;

trd_status trd_algo_find(const char *name, size_t *index)
{
    if (!index)
        return trd_fail(TRD_EINVAL, "trd_algo_find: NULL argument (index)");
    size_t last = atomic_load_explicit(&last_found, memory_order_relaxed);
    if (name && strcmp(algos[last].name, name) == 0) {
        *index = last;
        return TRD_OK;
    }
    for (size_t i = 0; name && i < ALGO_COUNT; i++)
        if (strcmp(algos[i].name, name) == 0) {
            atomic_store_explicit(&last_found, i, memory_order_relaxed);
            *index = i;
            return TRD_OK;
        }
    char list[512] = "";
    for (size_t i = 0; i < ALGO_COUNT; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, algos[i].name, sizeof list - strlen(list) - 1);
    }
    return trd_fail(TRD_ENOALGO, "unknown algorithm '%s'; valid names: %s",
                    name ? name : "(null)", list);
}

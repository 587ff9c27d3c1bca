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
#define TRD_REDUCE_SCATTER(n, schedule_fn, flags, text)                                   \
    {.name = n, .kind = TRD_KIND_EXCHANGE, .schedule = schedule_fn,                        \
     .bound_source = "none (reduce-scatter)", .caps = (flags) | TRD_CAP_REDUCE_SCATTER,    \
     .description = text},
#define TRD_SCAN(n, schedule_fn, flags, text)                                             \
    {.name = n, .kind = TRD_KIND_EXCHANGE, .schedule = schedule_fn,                        \
     .bound_source = "none (scan)", .caps = (flags) | TRD_CAP_SCAN, .description = text},
#include "plan/registry.def" /* which undefines the row macros */
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

bool trd_algo_reads_costs(size_t i)
{
    return i < ALGO_COUNT && (algos[i].caps & (TRD_CAP_COSTS | TRD_CAP_LINKS));
}

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

static const char *const collective_names[] = {"reduce", "allreduce", "reduce-scatter",
                                               "scan", "exscan"};
#define COLLECTIVES (sizeof collective_names / sizeof collective_names[0])

const char *trd_collective_name(trd_collective c)
{
    return (unsigned)c < COLLECTIVES ? collective_names[c] : NULL;
}

trd_status trd_collective_parse(const char *name, trd_collective *out)
{
    for (size_t i = 0; name && i < COLLECTIVES; i++)
        if (strcmp(name, collective_names[i]) == 0) {
            *out = (trd_collective)i;
            return TRD_OK;
        }
    return trd_fail(TRD_EINVAL, "unknown collective '%s': need reduce, allreduce, "
                    "reduce-scatter, scan or exscan", name ? name : "(null)");
}

unsigned trd_collective_cap(trd_collective c)
{
    static const unsigned cap[] = {TRD_CAP_REDUCE, TRD_CAP_ALLREDUCE, TRD_CAP_REDUCE_SCATTER,
                                   TRD_CAP_SCAN, TRD_CAP_SCAN};
    return (unsigned)c < COLLECTIVES ? cap[c] : 0;
}

const char *trd_algo_default_for(trd_collective c)
{
    for (size_t i = 0; i < ALGO_COUNT; i++)
        if ((algos[i].caps & TRD_CAP_DEFAULT) && (algos[i].caps & trd_collective_cap(c)))
            return algos[i].name;
    return NULL;
}

bool trd_algo_runs(size_t i, trd_collective c)
{
    return i < ALGO_COUNT && (algos[i].caps & trd_collective_cap(c));
}

/* The collectives a's row runs, for a refusal's message. */
static void runs_list(const trd_algo *a, char *out, size_t size)
{
    out[0] = 0;
    for (size_t i = 0; i < COLLECTIVES; i++)
        if (a->caps & trd_collective_cap((trd_collective)i)) {
            size_t len = strlen(out);
            snprintf(out + len, size - len, "%s%s", len ? ", " : "", collective_names[i]);
        }
}

trd_status trd_algo_check_collective(const trd_algo *a, trd_collective c)
{
    if (a->caps & trd_collective_cap(c))
        return TRD_OK;
    if (c == TRD_COLL_ALLREDUCE && a->kind == TRD_KIND_DYNAMIC)
        return trd_fail(TRD_EUNSUPPORTED, "%s is a reduce: the rank that ends with the result "
                        "is known only at the end (use a tree or exchange algorithm for an "
                        "allreduce)", a->name);
    char runs[96];
    runs_list(a, runs, sizeof runs);
    const char *name = trd_collective_name(c);
    if (!name)
        return trd_fail(TRD_EINVAL, "collective = %d is out of range", (int)c);
    return trd_fail(TRD_EUNSUPPORTED, "%s runs %s only, not a%s %s: ask for one of those "
                    "(--kind %s)", a->name, runs, strchr("aeiou", name[0]) ? "n" : "", name,
                    strchr(runs, ',') ? "..." : runs);
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

bool trd_algo_fits(const trd_algo *a, trd_collective c, bool noncommutative, bool reproducible,
                   int64_t p)
{
    unsigned need = trd_collective_cap(c) | (reproducible ? TRD_CAP_REPRODUCIBLE : 0);
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

/* registry.c: name lookup and listing over the table of registry.def. */
#include "plan/registry.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

static const trd_algo algos[] = {
#define TRD_ALGO(name, build, schedule, segments, policy, bound, source, caps, text) \
    {name, build, schedule, segments, policy, bound, source, caps, text},
#include "plan/registry.def"
#undef TRD_ALGO
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

trd_status trd_algo_check_costs(const trd_algo *a, bool has_costs)
{
    if (has_costs || !(a->caps & TRD_CAP_COSTS))
        return TRD_OK;
    return trd_fail(TRD_EUNSUPPORTED, "%s plans for heterogeneous costs d[i][j], c[i]: give "
                    "them (trd_params.costs or trd_coll_opts.costs; treduce --costs FILE or "
                    "--preset NAME)", a->name);
}

bool trd_algo_is_dynamic(size_t i) { return i < ALGO_COUNT && algos[i].policy; }

trd_algo_kind trd_algo_kind_of(size_t i)
{
    if (i >= ALGO_COUNT)
        return TRD_KIND_TREE;
    if (algos[i].policy)
        return TRD_KIND_DYNAMIC;
    if (algos[i].schedule)
        return TRD_KIND_EXCHANGE;
    return algos[i].segments ? TRD_KIND_PIPELINED : TRD_KIND_TREE;
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

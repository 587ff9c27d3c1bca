/* memory.c: a clear error instead of an allocation that would take the
 * machine down (Linux overcommits, so malloc alone would not fail). */
#include "core/memory.h"

#include <stdlib.h>
#include <unistd.h>

#include "core/error.h"

trd_status trd_check_memory(int64_t n, double bytes_per_rank, const char *what)
{
    double need = (double)n * bytes_per_rank;
    double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (have > 0 && need > 0.8 * have)
        return trd_fail(TRD_ENOMEM,
                        "n = %lld is too large: %s needs about %.1f GiB, more than "
                        "80%% of this machine's %.1f GiB of memory",
                        (long long)n, what, need / 1073741824.0, have / 1073741824.0);
    return TRD_OK;
}

trd_status trd_grow(void **items, size_t len, size_t *cap, size_t size, size_t first,
                    const char *what)
{
    if (len < *cap)
        return TRD_OK;
    size_t want = *cap ? 2 * *cap : first;
    void *p = realloc(*items, want * size);
    if (!p)
        return trd_fail(TRD_ENOMEM, "%s: out of memory for %zu entries", what, want);
    *items = p;
    *cap = want;
    return TRD_OK;
}

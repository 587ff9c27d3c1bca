/* fuzz_costs_file.c: libFuzzer harness of the cost-file reader
 * (trd_costs_load, src/sim/costs_file.c) for n = 3 ranks (the seeds say
 * "n 3"): any input loads or is refused with a message, and a file that
 * loads gives finite costs >= 0. */
#include "fuzz_file.h"

#include <assert.h>
#include <math.h>

#include "ir/costs.h"
#include "treduce/treduce.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trd_costs *costs = NULL;
    trd_status st = trd_costs_create(&costs, 3, TRD_DIST_CONST, 1.0, 0.0, 0.0);
    assert(st == TRD_OK);
    st = trd_costs_load(costs, fuzz_file(data, size));
    assert(st == TRD_OK || trd_errmsg()[0] != '\0');
    assert((st == TRD_OK) == (costs->dmat != NULL));
    for (int i = 0; st == TRD_OK && i < 9; i++)
        assert(isfinite(costs->dmat[i]) && costs->dmat[i] >= 0);
    trd_costs_free(costs);
    return 0;
}

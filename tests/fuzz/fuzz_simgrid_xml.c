/* fuzz_simgrid_xml.c: libFuzzer harness of the SimGrid platform importer
 * (trd_platform_load_simgrid, src/platform/platform_simgrid.c, libxml2): any
 * input loads or is refused with a message, within the time limit,
 * without leaking. */
#include "fuzz_file.h"

#include <assert.h>

#include "treduce/platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trd_platform *pf = NULL;
    trd_status st = trd_platform_load_simgrid(fuzz_file(data, size), &pf);
    assert((st == TRD_OK) == (pf != NULL));
    assert(st == TRD_OK || trd_errmsg()[0] != '\0');
    trd_platform_free(pf);
    return 0;
}

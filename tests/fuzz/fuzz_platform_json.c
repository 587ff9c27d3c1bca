/* fuzz_platform_json.c: libFuzzer harness of the JSON platform loader
 * (trd_platform_load_json, src/platform/platform_json.c): any input loads or
 * is refused with a message, within the time limit, without leaking. */
#include "fuzz_file.h"

#include <assert.h>

#include "treduce/platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trd_platform *pf = NULL;
    trd_status st = trd_platform_load_json(fuzz_file(data, size), &pf);
    assert((st == TRD_OK) == (pf != NULL));
    assert(st == TRD_OK || trd_errmsg()[0] != '\0');
    if (pf) { /* what loads must write back */
        FILE *null = fopen("/dev/null", "w");
        assert(null && trd_platform_write_json(pf, null) == TRD_OK);
        fclose(null);
    }
    trd_platform_free(pf);
    return 0;
}

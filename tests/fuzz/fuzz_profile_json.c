/* fuzz_profile_json.c: libFuzzer harness of the profile reader
 * (trd_profile_load, src/select/profile_file.c): any input loads or is
 * refused with a message, and what loads is a profile trd_profile_apply
 * takes and trd_profile_save writes back. */
#include "fuzz_file.h"

#include <assert.h>

#include "treduce/treduce.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trd_profile pr;
    trd_profile_meta meta;
    trd_status st = trd_profile_load(fuzz_file(data, size), &pr, &meta);
    assert(st == TRD_OK || trd_errmsg()[0] != '\0');
    if (st == TRD_OK) {
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        assert(trd_profile_apply(&pr, 1000, 8, &o) == TRD_OK);
        assert(trd_profile_save("/dev/null", &pr, &meta) == TRD_OK);
    }
    return 0;
}

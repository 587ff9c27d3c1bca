/* version.c: trd_version(), the version the library was built as. */
#include "treduce/version.h"

const char *trd_version(void)
{
    return TRD_VERSION_STRING;
}

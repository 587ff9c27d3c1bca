/* error.c: status texts from the X-macro list of treduce.h, and the
 * per-thread detailed message behind trd_errmsg(). */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_message[1024];

const char *trd_strerror(trd_status status)
{
    switch (status) {
#define TRD_STATUS_TEXT(name, value, text) \
    case name:                             \
        return text;
        TRD_STATUS_LIST(TRD_STATUS_TEXT)
#undef TRD_STATUS_TEXT
    }
    return "unknown status code";
}

const char *trd_errmsg(void)
{
    return last_message;
}

trd_status trd_fail(trd_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return status;
}

void trd_clear_error(void)
{
    last_message[0] = '\0';
}

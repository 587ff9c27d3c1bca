/* error.h: internal helpers to raise a trd_status with a detailed message. */
#ifndef TRD_CORE_ERROR_H
#define TRD_CORE_ERROR_H

#include "treduce/treduce.h"

#if defined(__GNUC__)
#define TRD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TRD_PRINTF(a, b)
#endif

/* Records a printf-style message for trd_errmsg() in this thread and returns
 * status, so callers write `return trd_fail(TRD_EINVAL, "n = %lld ...", n);`. */
trd_status trd_fail(trd_status status, const char *fmt, ...) TRD_PRINTF(2, 3);

/* Clears the message (a successful public call leaves it unchanged). */
void trd_clear_error(void);

#endif

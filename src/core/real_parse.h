/* real_parse.h: the range of real numbers written as text (real_parse.c:
 * trd_real_parse, public, applies it to a double; exact parsers apply it
 * to their exact value). */
#ifndef TRD_CORE_REAL_PARSE_H
#define TRD_CORE_REAL_PARSE_H

#include <stdbool.h>

#include "treduce/treduce.h"

/* TRD_EINVAL naming `what` and `text` when the value's magnitude
 * overflows (above DBL_MAX) or underflows (not 0, below DBL_MIN), with the
 * message trd_real_parse gives; else TRD_OK. */
trd_status trd_real_range(const char *what, const char *text, bool overflows, bool underflows);

#endif

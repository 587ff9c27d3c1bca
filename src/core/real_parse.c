/* real_parse.c: the one rule for real numbers written as text - on the
 * command line, in cost files and in platform files (whose exact parser,
 * src/model/platform_rational.c, applies the same range to the exact
 * value through trd_real_range).
 *
 * A number is decimal: an optional sign, digits, an optional fraction and
 * an optional exponent; C's hexadecimal floats, inf and nan are refused
 * (strtod alone reads them).  Its magnitude is 0 or a normal double: above
 * DBL_MAX it overflows, below DBL_MIN it underflows.  Why subnormals are
 * refused too: they hold fewer significant digits than the text gives
 * (1e-320 keeps 4 of double's 17), and any product with a cost near 1
 * flushes them to 0 or to a different subnormal, so a cost of 1e-320 would
 * not be the cost the file says. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/real_parse.h"

trd_status trd_real_range(const char *what, const char *text, bool overflows, bool underflows)
{
    if (overflows)
        return trd_fail(TRD_EINVAL, "invalid %s '%.64s': overflows: its magnitude is above the "
                        "largest double (%.2g)", what, text, DBL_MAX);
    if (underflows)
        return trd_fail(TRD_EINVAL, "invalid %s '%.64s': underflows: not 0, but below the "
                        "smallest normal double (%.2g), where a double keeps fewer digits "
                        "(write 0 or a larger value)", what, text, DBL_MIN);
    return TRD_OK;
}

/* Whether text is [sign] digits [. digits] [(e|E) [sign] digits], with
 * digits on at least one side of the point. */
static bool decimal_syntax(const char *s)
{
    s += *s == '+' || *s == '-';
    size_t lead = strspn(s, "0123456789");
    s += lead;
    size_t frac = 0;
    if (*s == '.') {
        frac = strspn(s + 1, "0123456789");
        s += 1 + frac;
    }
    if (lead + frac == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        size_t exp = strspn(s, "0123456789");
        if (exp == 0)
            return false;
        s += exp;
    }
    return *s == '\0';
}

trd_status trd_real_parse(const char *text, const char *what, double *out)
{
    if (!text || !what || !out)
        return trd_fail(TRD_EINVAL, "trd_real_parse: NULL argument");
    if (!decimal_syntax(text))
        return trd_fail(TRD_EINVAL, "invalid %s '%.64s': not a decimal number (write 3, -0.25 "
                        "or 1e-3)", what, text);
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    /* 0 is written with zero digits only; any other digit before the
     * exponent makes a value that must be normal */
    bool zero = strcspn(text, "123456789") >= strcspn(text, "eE");
    trd_status st = trd_real_range(what, text, isinf(v), !zero && fabs(v) < DBL_MIN);
    if (st != TRD_OK)
        return st;
    *out = v;
    return TRD_OK;
}

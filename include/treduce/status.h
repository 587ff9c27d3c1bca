/* treduce/status.h: status codes and error messages, shared by every
 * area of the API (conventions: treduce.h). */
#ifndef TREDUCE_STATUS_H
#define TREDUCE_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes: one X-macro list gives the enum and the messages. ---- */
#define TRD_STATUS_LIST(X)                                      \
    X(TRD_OK, 0, "success")                                     \
    X(TRD_EINVAL, -1, "invalid argument")                       \
    X(TRD_ENOMEM, -2, "not enough memory")                      \
    X(TRD_ENOALGO, -3, "unknown algorithm")                     \
    X(TRD_EIO, -4, "input/output error")                        \
    X(TRD_EUNSUPPORTED, -5, "not supported by this algorithm")  \
    X(TRD_EBACKEND, -6, "failure in an external library")       \
    X(TRD_ETIMEDOUT, -7, "a peer did not answer before the deadline")

typedef enum trd_status {
#define TRD_STATUS_ENUM(name, value, text) name = value,
    TRD_STATUS_LIST(TRD_STATUS_ENUM)
#undef TRD_STATUS_ENUM
} trd_status;

/* Generic text of a status code ("invalid argument"). Never NULL. */
const char *trd_strerror(trd_status status);

/* Detailed message of the last error raised in the calling thread, e.g.
 * "d = -1 is negative: transfer times must be finite and >= 0".  Empty
 * string when no error happened yet.  Never NULL. */
const char *trd_errmsg(void);

/* ---- Numbers written as text: one rule for the command line, cost files
 * and platform files. ---- */

/* Reads a decimal real number: an optional sign, digits, an optional
 * fraction and exponent ("3", "-0.25", "1e-3"), nothing before or after;
 * hexadecimal floats, inf and nan are not numbers.  Its magnitude must be
 * 0 or a normal double: TRD_EINVAL naming `what` and the text when it is
 * not a decimal number, overflows (above 1.8e308) or underflows (not 0
 * but below 2.2e-308: a subnormal keeps fewer digits than the text, or
 * reads as 0).  *out is written only on success. */
trd_status trd_real_parse(const char *text, const char *what, double *out);

#ifdef __cplusplus
}
#endif
#endif

/* platform_io.h: what the platform loaders and writers share inside
 * src/model/ (platform_json.c, platform_simgrid.c, platform.c): exact
 * numbers as text and error messages that say where in a file a problem
 * is.  src/platform/platform.h stays the interface the rest of the library
 * codes against. */
#ifndef TRD_PLATFORM_PLATFORM_IO_H
#define TRD_PLATFORM_PLATFORM_IO_H

#include <stddef.h>

#include "platform/platform.h"

/* Parses a decimal prefix of text ("12", "0.25", "1e-3", no sign) into out
 * and sets *end just after it; the caller decides what may follow (a unit
 * for SimGrid, '/' and a denominator for a fraction, nothing otherwise).
 * TRD_EINVAL naming `what` when text does not start with a number. */
trd_status trd_decimal_prefix(const char *text, const char *what, mpq_t out, const char **end);

/* A SimGrid quantity, number and unit ("1.5Gf", "125MBps", "50us"), in
 * flop/s, byte/s or s; TRD_EINVAL naming `what` for a bad number or an
 * unknown unit.  Units are listed in platform_units.c. */
typedef enum trd_sg_kind { TRD_SG_SPEED, TRD_SG_BANDWIDTH, TRD_SG_TIME } trd_sg_kind;
trd_status trd_simgrid_quantity(const char *text, trd_sg_kind kind, const char *what, mpq_t out);

/* TRD_EINVAL naming `what` and `text` when the exact value q overflows
 * or underflows a double (trd_real_parse's rule, core/real_parse.h). */
trd_status trd_rational_range(const mpq_t q, const char *what, const char *text);

/* The exact value as "3" or "2/3" in a malloc'ed string, or NULL when out
 * of memory. */
char *trd_rational_text(const mpq_t q);

/* Adds from -> to, and to -> from when both (right after it, which
 * trd_platform_write_json writes back as one "both" link); a refusal
 * starts with "<where>: " when where is not NULL. */
trd_status trd_platform_add_links(trd_platform *pf, int32_t from, int32_t to, const mpq_t cost,
                                  bool both, const char *where);

/* Puts "<where>: " in front of the current trd_errmsg() and returns st, so
 * a loader can say which element of which file a core check refused. */
trd_status trd_fail_within(trd_status st, const char *where);

/* The whole content of path in *text (NUL-terminated, free() it) and its
 * length in *len: platform files are small, and a file read at once can
 * come from a pipe and still be told JSON or XML by its first character.
 * TRD_EIO naming path and the reason when it cannot be read or is a
 * folder. */
trd_status trd_read_file(const char *path, char **text, size_t *len);

/* The loaders on a file's content (path names it in messages). */
typedef trd_status (*trd_platform_parser)(const char *text, size_t len, const char *path,
                                          trd_platform **out);
trd_status trd_platform_parse_json(const char *text, size_t len, const char *path,
                                   trd_platform **out);
trd_status trd_platform_parse_simgrid(const char *text, size_t len, const char *path,
                                      trd_platform **out);
/* Reads path and has parse() load it into *out (NULL on failure). */
trd_status trd_platform_load_with(const char *path, trd_platform_parser parse,
                                  trd_platform **out);

#endif

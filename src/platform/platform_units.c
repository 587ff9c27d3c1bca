/* platform_units.c: SimGrid's quantities ("1.5Gf", "125MBps", "50us")
 * read exactly.  The units and prefixes are SimGrid's own
 * (src/xbt/xbt_parse_units.cpp): speeds in f with k, M, G, ... (x1000) or
 * flops with kilo, mega, giga, ...; bandwidths in Bps or bps (1 bps =
 * 1/8 Bps) with k, M, G, ... (x1000) or Ki, Mi, Gi, ... (x1024); times in
 * w, d, h, m, s, ms, us, ns, ps.  A number without a unit is in f, Bps or
 * s, as in SimGrid.  Every factor is an integer or 1/8 or a power of 1/10,
 * so the quantity stays an exact rational. */
#include <string.h>

#include "core/error.h"
#include "platform/platform_io.h"

enum { SI = 1, BINARY = 2, LONG = 4 }; /* which prefixes a unit takes */

typedef struct base_unit {
    const char *name;
    unsigned long num, den; /* one unit in flop, byte/s or s */
    int prefixes;
} base_unit;

static const base_unit speed_units[] = {{"f", 1, 1, SI}, {"flops", 1, 1, LONG}, {NULL, 0, 0, 0}};
static const base_unit bandwidth_units[] = {
    {"Bps", 1, 1, SI | BINARY}, {"bps", 1, 8, SI | BINARY}, {NULL, 0, 0, 0}};
static const base_unit time_units[] = {
    {"w", 7 * 24 * 3600, 1, 0}, {"d", 24 * 3600, 1, 0}, {"h", 3600, 1, 0}, {"m", 60, 1, 0},
    {"s", 1, 1, 0}, {"ms", 1, 1000, 0}, {"us", 1, 1000000, 0}, {"ns", 1, 1000000000, 0},
    {"ps", 1, 1000000000000UL, 0}, {NULL, 0, 0, 0}};

static const struct family {
    const base_unit *units;
    const char *fallback; /* the unit of a bare number */
    const char *hint;     /* for the error message */
} families[] = {
    [TRD_SG_SPEED] = {speed_units, "f", "f, kf, Mf, Gf, Tf, ... or flops, megaflops, ..."},
    [TRD_SG_BANDWIDTH] = {bandwidth_units, "Bps",
                          "Bps, kBps, MBps, GBps, KiBps, MiBps, ..., bps, Mbps, Gbps, ..."},
    [TRD_SG_TIME] = {time_units, "s", "w, d, h, m, s, ms, us, ns, ps"},
};

static const char *const si_prefixes[] = {"k", "M", "G", "T", "P", "E", "Z", "Y", NULL};
static const char *const binary_prefixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi", NULL};
static const char *const long_prefixes[] = {"kilo", "mega", "giga", "tera", "peta",
                                            "exa",  "zeta", "yotta", NULL};

/* The power i + 1 when prefix is list[i], else 0. */
static unsigned long prefix_power(const char *const *list, const char *prefix, size_t len)
{
    for (unsigned long i = 0; list[i]; i++)
        if (strlen(list[i]) == len && strncmp(list[i], prefix, len) == 0)
            return i + 1;
    return 0;
}

/* scale = the value of unit `unit` ("GBps") in base units; false when
 * unit is no unit of the family. */
static bool unit_scale(const base_unit *units, const char *unit, mpq_t scale)
{
    size_t len = strlen(unit);
    for (const base_unit *u = units; u->name; u++) {
        size_t base_len = strlen(u->name);
        if (len < base_len || strcmp(unit + len - base_len, u->name) != 0)
            continue;
        size_t plen = len - base_len; /* the prefix, "G" of "GBps" */
        unsigned long power = 0, radix = 1;
        if (plen > 0 && (u->prefixes & SI) && (power = prefix_power(si_prefixes, unit, plen)))
            radix = 1000;
        else if (plen > 0 && (u->prefixes & BINARY) &&
                 (power = prefix_power(binary_prefixes, unit, plen)))
            radix = 1024;
        else if (plen > 0 && (u->prefixes & LONG) &&
                 (power = prefix_power(long_prefixes, unit, plen)))
            radix = 1000;
        else if (plen > 0)
            continue;
        mpz_ui_pow_ui(mpq_numref(scale), radix, power);
        mpz_mul_ui(mpq_numref(scale), mpq_numref(scale), u->num);
        mpz_set_ui(mpq_denref(scale), u->den);
        mpq_canonicalize(scale);
        return true;
    }
    return false;
}

trd_status trd_simgrid_quantity(const char *text, trd_sg_kind kind, const char *what, mpq_t out)
{
    const struct family *fam = &families[kind];
    const char *end;
    trd_status st = trd_decimal_prefix(text, what, out, &end);
    if (st != TRD_OK)
        return st;
    const char *unit = *end ? end : fam->fallback;
    mpq_t scale;
    mpq_init(scale);
    if (unit_scale(fam->units, unit, scale)) {
        mpq_mul(out, out, scale);
        st = trd_rational_range(out, what, text);
    } else
        st = trd_fail(TRD_EINVAL, "invalid %s '%.64s': unknown unit '%.16s' (SimGrid's are %s)",
                      what, text, unit, fam->hint);
    mpq_clear(scale);
    return st;
}

/* platform_rational.c: exact numbers of platform files.  Costs and speeds
 * feed LPs solved in exact arithmetic (src/steady/), so "0.1" must become
 * 1/10, not the double nearest to it: the text is read digit by digit into
 * a GMP rational.  Accepted: an integer "3", a decimal "0.25" or "1e-3"
 * (digits on both sides of a point),
 * a fraction of two integers "2/3", each part at most 1000 digits.  No sign,
 * no spaces, no NaN or inf.  The value, once whole (a fraction divided, a
 * SimGrid unit applied: trd_rational_range), must be 0 or within a normal
 * double's range, the rule of every number treduce reads (trd_real_parse,
 * src/core/real_parse.c). */
#include <float.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/real_parse.h"
#include "platform/platform_io.h"

/* Beyond this power of ten a number with digits other than 0 is out of a
 * double's range whatever unit follows it (SimGrid's scale by 1e-12 to
 * 2^80): refused before its huge integer is built. */
#define SHIFT_MAX 400
/* Exponents are read up to here (then refused as out of range). */
#define EXPONENT_MAX 100000
/* Digits of a number (integer and fraction parts, or a denominator): the
 * exact decimal value of any double has fewer than 800, so no real
 * platform needs more, and a longer one would only slow the parse (GMP
 * appends digit by digit) and the exact LP built on it. */
#define DIGITS_MAX 1000

static size_t count_digits(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n;
}

/* z = z * 10^len + the decimal digits s[0..len). */
static void append_digits(mpz_t z, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        mpz_mul_ui(z, z, 10);
        mpz_add_ui(z, z, (unsigned long)(s[i] - '0'));
    }
}

static trd_status refuse(const char *what, const char *text, const char *why)
{
    return trd_fail(TRD_EINVAL, "invalid %s '%.64s': %s", what, text, why);
}

static trd_status too_long(const char *what, const char *text, size_t digits)
{
    return trd_fail(TRD_EINVAL, "invalid %s '%.32s...': %zu digits (at most %d)", what, text,
                    digits, DIGITS_MAX);
}

/* Reads "e12", "E-3", "e+05" at p into *exponent (beyond EXPONENT_MAX:
 * EXPONENT_MAX + 1); p is left unchanged (and *exponent 0) when no
 * exponent with digits starts there. */
static void read_exponent(const char **p, long *exponent)
{
    const char *s = *p;
    *exponent = 0;
    if (*s != 'e' && *s != 'E')
        return;
    s++;
    int sign = *s == '-' ? -1 : 1;
    if (*s == '-' || *s == '+')
        s++;
    size_t len = count_digits(s);
    if (len == 0)
        return; /* "5E" is 5 then the unit "E..." (SimGrid: 5Ef) */
    long value = 0;
    for (size_t i = 0; i < len && value <= EXPONENT_MAX; i++)
        value = value * 10 + (s[i] - '0');
    *exponent = sign * (value > EXPONENT_MAX ? EXPONENT_MAX + 1 : value);
    *p = s + len;
}

trd_status trd_decimal_prefix(const char *text, const char *what, mpq_t out, const char **end)
{
    const char *p = text;
    size_t int_len = count_digits(p);
    if (int_len == 0)
        return refuse(what, text, *p == '-' ? "must not be negative"
                                            : "not a number (write 3, 0.25, 1e-3 or 2/3)");
    size_t frac_len = p[int_len] == '.' ? count_digits(p + int_len + 1) : 0;
    if (int_len + frac_len > DIGITS_MAX)
        return too_long(what, text, int_len + frac_len);
    mpz_set_ui(mpq_numref(out), 0);
    append_digits(mpq_numref(out), p, int_len);
    p += int_len;
    if (frac_len > 0) {
        append_digits(mpq_numref(out), p + 1, frac_len);
        p += 1 + frac_len;
    }
    long exponent;
    read_exponent(&p, &exponent);
    /* value = digits * 10^(exponent - frac_len), below 10^(digits + shift) */
    long shift = exponent - (long)frac_len;
    bool zero = mpz_sgn(mpq_numref(out)) == 0;
    if (!zero && (shift > SHIFT_MAX || (long)(int_len + frac_len) + shift < -SHIFT_MAX))
        return trd_real_range(what, text, shift > 0, shift < 0);
    mpz_set_ui(mpq_denref(out), 1);
    if (!zero && shift >= 0) { /* 0 stays 0 whatever its exponent */
        mpz_t scale;
        mpz_init(scale);
        mpz_ui_pow_ui(scale, 10, (unsigned long)shift);
        mpz_mul(mpq_numref(out), mpq_numref(out), scale);
        mpz_clear(scale);
    } else if (!zero) {
        mpz_ui_pow_ui(mpq_denref(out), 10, (unsigned long)-shift);
    }
    mpq_canonicalize(out);
    *end = p;
    return TRD_OK;
}

/* The denominator q after the '/' of "p/q" into value, which holds p. */
static trd_status read_denominator(const char *text, const char *slash, const char *what,
                                   mpq_t value)
{
    size_t len = count_digits(slash + 1);
    if (len > DIGITS_MAX)
        return too_long(what, text, len);
    if (len == 0 || slash[1 + len] != '\0' || count_digits(text) != (size_t)(slash - text))
        return refuse(what, text, "a fraction is two integers p/q");
    mpz_t den;
    mpz_init(den);
    append_digits(den, slash + 1, len);
    trd_status st = TRD_OK;
    if (mpz_sgn(den) == 0)
        st = refuse(what, text, "division by zero");
    else
        mpz_set(mpq_denref(value), den);
    mpz_clear(den);
    mpq_canonicalize(value);
    return st;
}

trd_status trd_rational_parse(const char *text, const char *what, mpq_t out)
{
    if (text == NULL || *text == '\0')
        return refuse(what, "", "empty");
    mpq_t value;
    mpq_init(value);
    const char *end = text;
    trd_status st = trd_decimal_prefix(text, what, value, &end);
    if (st == TRD_OK && *end == '/')
        st = read_denominator(text, end, what, value);
    else if (st == TRD_OK && *end != '\0')
        st = refuse(what, text, "unexpected text after the number");
    if (st == TRD_OK)
        st = trd_rational_range(value, what, text);
    if (st == TRD_OK)
        mpq_swap(out, value);
    mpq_clear(value);
    return st;
}

trd_status trd_rational_range(const mpq_t q, const char *what, const char *text)
{
    mpq_t bound, magnitude;
    mpq_inits(bound, magnitude, NULL);
    mpq_abs(magnitude, q);
    mpq_set_d(bound, DBL_MAX); /* exact: a double is a dyadic rational */
    bool over = mpq_cmp(magnitude, bound) > 0;
    mpq_set_d(bound, DBL_MIN);
    bool under = mpq_sgn(magnitude) != 0 && mpq_cmp(magnitude, bound) < 0;
    mpq_clears(bound, magnitude, NULL);
    return trd_real_range(what, text, over, under);
}

char *trd_rational_text(const mpq_t q)
{
    /* the size mpq_get_str documents for a caller's buffer */
    size_t size = mpz_sizeinbase(mpq_numref(q), 10) + mpz_sizeinbase(mpq_denref(q), 10) + 3;
    char *text = malloc(size);
    return text ? mpq_get_str(text, 10, q) : NULL;
}

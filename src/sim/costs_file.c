/* costs_file.c: reads and writes heterogeneous cost bases as a text file:
 *
 *   # comment
 *   n 3
 *   0 1 2        <- d[0][*]: time for rank 0 to send to rank 0, 1, 2
 *   1 0 1
 *   2 1 0
 *   0.5 0.5 0.5  <- c[*]: combine time on each rank
 *
 * Every value must be a finite number >= 0; N must equal the simulation's
 * n; anything missing or left over is an error naming the line. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sim/costs.h"

typedef struct reader {
    FILE *f;
    const char *path;
    long line;
    char buf[1 << 16];
    char *pos; /* next unread character of buf, or NULL at a new line */
} reader;

/* Next whitespace-separated token (comments skipped); NULL at end of file. */
static char *next_token(reader *r)
{
    for (;;) {
        while (r->pos && isspace((unsigned char)*r->pos))
            r->pos++;
        if (r->pos && *r->pos && *r->pos != '#') {
            char *start = r->pos;
            while (*r->pos && !isspace((unsigned char)*r->pos))
                r->pos++;
            if (*r->pos)
                *r->pos++ = '\0';
            return start;
        }
        if (!fgets(r->buf, sizeof r->buf, r->f))
            return NULL;
        r->line++;
        r->pos = r->buf;
    }
}

static trd_status read_value(reader *r, const char *what, double *out)
{
    char *tok = next_token(r), *end;
    if (!tok)
        return trd_fail(TRD_EINVAL, "%s: ends before %s", r->path, what);
    errno = 0;
    double v = strtod(tok, &end);
    if (*end || end == tok || !isfinite(v) || v < 0 || errno == ERANGE)
        return trd_fail(TRD_EINVAL, "%s:%ld: invalid %s '%s': need a finite number >= 0",
                        r->path, r->line, what, tok);
    *out = v;
    return TRD_OK;
}

/* The header "n N"; *n gets N, checked against want unless want < 0. */
static trd_status read_header(reader *r, int64_t want, int64_t *n)
{
    char *tok = next_token(r);
    if (!tok || strcmp(tok, "n") != 0)
        return trd_fail(TRD_EINVAL, "%s:%ld: expected 'n N' first", r->path, r->line);
    double v;
    trd_status st = read_value(r, "n", &v);
    if (st != TRD_OK)
        return st;
    if (want >= 0 && v != (double)want)
        return trd_fail(TRD_EINVAL, "%s:%ld: the file is for n = %g ranks, the model has "
                        "n = %lld", r->path, r->line, v, (long long)want);
    if (v < 1 || v > (double)TRD_N_MAX || v != floor(v))
        return trd_fail(TRD_EINVAL, "%s:%ld: n = %g is not a rank count", r->path, r->line, v);
    *n = (int64_t)v;
    return TRD_OK;
}

/* Everything after the header into k's bases; homogeneous again on failure. */
static trd_status read_bases(reader *r, trd_costs *k)
{
    trd_status st = trd_costs_alloc_bases(k);
    for (int64_t i = 0; i < k->n * k->n && st == TRD_OK; i++)
        st = read_value(r, "transfer time", &k->dmat[i]);
    for (int64_t i = 0; i < k->n && st == TRD_OK; i++)
        st = read_value(r, "combine time", &k->cvec[i]);
    if (st == TRD_OK && next_token(r))
        st = trd_fail(TRD_EINVAL, "%s:%ld: unexpected data after the %lld combine times",
                      r->path, r->line, (long long)k->n);
    if (st != TRD_OK) /* no half-read matrix: the model is homogeneous again */
        trd_costs_drop_bases(k);
    return st;
}

static trd_status open_reader(reader **out, const char *path)
{
    reader *r = *out = calloc(1, sizeof *r);
    if (!r)
        return trd_fail(TRD_ENOMEM, "costs: out of memory");
    r->path = path;
    if (!path || !(r->f = fopen(path, "r")))
        return trd_fail(TRD_EIO, "cannot read cost file %s: %s", path ? path : "(null)",
                        strerror(errno));
    return TRD_OK;
}

static void close_reader(reader *r)
{
    if (r && r->f)
        fclose(r->f);
    free(r);
}

trd_status trd_costs_load(trd_costs *k, const char *path)
{
    reader *r;
    int64_t n;
    trd_status st = open_reader(&r, path);
    if (st == TRD_OK)
        st = read_header(r, k->n, &n);
    if (st == TRD_OK)
        st = read_bases(r, k);
    else if (k->dmat) /* as documented: no earlier bases survive a failure */
        trd_costs_drop_bases(k);
    close_reader(r);
    return st;
}

trd_status trd_costs_read(trd_costs **out, const char *path)
{
    reader *r;
    int64_t n = 0;
    if (!out)
        return trd_fail(TRD_EINVAL, "trd_costs_read: NULL argument");
    *out = NULL;
    trd_status st = open_reader(&r, path);
    if (st == TRD_OK)
        st = read_header(r, -1, &n);
    if (st == TRD_OK)
        st = trd_costs_create(out, n, TRD_DIST_CONST, 1.0, 1.0, 0.0);
    if (st == TRD_OK)
        st = read_bases(r, *out);
    if (st == TRD_OK)
        trd_costs_mean(*out, &(*out)->mean_d, &(*out)->mean_c);
    if (st != TRD_OK) {
        trd_costs_free(*out);
        *out = NULL;
    }
    close_reader(r);
    return st;
}

/* %.17g: every double comes back exactly through strtod. */
static bool write_bases(FILE *f, const trd_costs *k)
{
    bool ok = fprintf(f, "# treduce cost file: d[i][j] (rank i sends to j), then c[i]\n"
                         "n %lld\n", (long long)k->n) > 0;
    for (int32_t i = 0; ok && i < k->n; i++)
        for (int32_t j = 0; ok && j < k->n; j++)
            ok = fprintf(f, "%.17g%c", i == j && !k->dmat ? 0.0 : trd_costs_transfer_base(k, i, j),
                         j + 1 < k->n ? ' ' : '\n') > 0;
    for (int32_t i = 0; ok && i < k->n; i++)
        ok = fprintf(f, "%.17g%c", trd_costs_combine_base(k, i), i + 1 < k->n ? ' ' : '\n') > 0;
    return ok;
}

trd_status trd_costs_save(const trd_costs *k, const char *path)
{
    if (!k)
        return trd_fail(TRD_EINVAL, "trd_costs_save: NULL costs");
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f)
        return trd_fail(TRD_EIO, "cannot write cost file %s: %s", path, strerror(errno));
    bool ok = write_bases(f, k);
    ok = (path ? fclose(f) : fflush(f)) == 0 && ok;
    if (!ok)
        return trd_fail(TRD_EIO, "cannot write cost file %s: %s", path ? path : "(stdout)",
                        strerror(errno));
    return TRD_OK;
}

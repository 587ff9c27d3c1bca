/* costs_file.c: reads heterogeneous cost bases from a text file:
 *
 *   # comment
 *   n 3
 *   0 1 2        <- d[0][*]: time for rank 0 to send to rank 0, 1, 2
 *   1 0 1
 *   2 1 0
 *   0.5 0.5 0.5  <- c[*]: combine time on each rank
 *
 * Every value must be a decimal number >= 0, 0 or a normal double
 * (trd_real_parse: the rule of the command line and platform files), and
 * N a whole number equal to the simulation's n; anything missing or left
 * over is an error naming the line.  Lines are read whole, whatever their length. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "ir/costs.h"

typedef struct reader {
    FILE *f;
    const char *path;
    long line;
    char *buf;  /* the current line, whole whatever its length (getline) */
    size_t cap;
    char *pos;  /* next unread character of buf, or NULL at a new line */
} reader;

/* Next whitespace-separated token (comments skipped); NULL at the end of
 * the file or on a read error (ferror tells). */
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
        if (getline(&r->buf, &r->cap, r->f) < 0)
            return NULL;
        r->line++;
        r->pos = r->buf;
    }
}

/* Why the file ended before `what`: its end, or a read error. */
static trd_status ended(const reader *r, const char *what)
{
    if (ferror(r->f))
        return trd_fail(TRD_EIO, "%s:%ld: cannot read: %s", r->path, r->line, strerror(errno));
    return trd_fail(TRD_EINVAL, "%s: ends before %s", r->path, what);
}

static trd_status read_value(reader *r, const char *what, double *out)
{
    char *tok = next_token(r);
    if (!tok)
        return ended(r, what);
    double v;
    if (trd_real_parse(tok, what, &v) != TRD_OK) {
        char why[256]; /* trd_errmsg's buffer is the one trd_fail writes */
        snprintf(why, sizeof why, "%s", trd_errmsg());
        return trd_fail(TRD_EINVAL, "%s:%ld: %s", r->path, r->line, why);
    }
    if (v < 0)
        return trd_fail(TRD_EINVAL, "%s:%ld: invalid %s '%.64s': must not be negative",
                        r->path, r->line, what, tok);
    *out = v;
    return TRD_OK;
}

/* The header "n N"; *n gets N, checked against want unless want < 0. */
static trd_status read_header(reader *r, int64_t want, int64_t *n)
{
    char *tok = next_token(r), *end;
    if (!tok && ferror(r->f))
        return ended(r, "'n N'");
    if (!tok || strcmp(tok, "n") != 0)
        return trd_fail(TRD_EINVAL, "%s:%ld: expected 'n N' first (the number of ranks)",
                        r->path, r->line);
    if (!(tok = next_token(r)))
        return ended(r, "the number of ranks after 'n'");
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (*end || !isdigit((unsigned char)tok[0]) || errno == ERANGE || v < 1 || v > TRD_N_MAX)
        return trd_fail(TRD_EINVAL, "%s:%ld: invalid n '%.64s': need a whole number of ranks "
                        "(1 to %lld)", r->path, r->line, tok, (long long)TRD_N_MAX);
    if (want >= 0 && v != want)
        return trd_fail(TRD_EINVAL, "%s:%ld: the file is for n = %lld ranks, the model has "
                        "n = %lld", r->path, r->line, v, (long long)want);
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
    if (st == TRD_OK && ferror(r->f))
        st = ended(r, "its end");
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
    struct stat sb;
    if (!path || !(r->f = fopen(path, "r")))
        return trd_fail(TRD_EIO, "cannot read cost file %s: %s", path ? path : "(null)",
                        strerror(errno));
    if (fstat(fileno(r->f), &sb) == 0 && S_ISDIR(sb.st_mode))
        return trd_fail(TRD_EIO, "cannot read cost file %s: it is a folder", path);
    return TRD_OK;
}

static void close_reader(reader *r)
{
    if (r && r->f)
        fclose(r->f);
    if (r)
        free(r->buf);
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

/* costs_file.c: reads heterogeneous cost bases from a text file:
 *
 *   # comment
 *   n 3
 *   0 1 2        <- d[0][*]: time for rank 0 to send to rank 0, 1, 2
 *   1 0 1
 *   2 1 0
 *   0.5 0.5 0.5  <- c[*]: combine time on each rank
 *
 * Every value must be a finite decimal number >= 0 and N a whole number
 * equal to the simulation's n; anything missing or left over is an error
 * naming the line.  Lines are read whole, whatever their length. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "sim/costs.h"

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

/* A decimal number: strtod alone also reads hexadecimal floats, inf and nan. */
static bool decimal(const char *tok)
{
    return tok[strspn(tok, "0123456789.eE+-")] == '\0';
}

static trd_status read_value(reader *r, const char *what, double *out)
{
    char *tok = next_token(r), *end;
    if (!tok)
        return ended(r, what);
    errno = 0;
    double v = strtod(tok, &end);
    if (*end || end == tok || !decimal(tok) || !isfinite(v) || v < 0 || errno == ERANGE)
        return trd_fail(TRD_EINVAL, "%s:%ld: invalid %s '%.64s%s': need a finite decimal "
                        "number >= 0", r->path, r->line, what, tok,
                        strlen(tok) > 64 ? "..." : "");
    *out = v;
    return TRD_OK;
}

static trd_status read_header(reader *r, int64_t n)
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
    if (*end || !isdigit((unsigned char)tok[0]) || errno == ERANGE)
        return trd_fail(TRD_EINVAL, "%s:%ld: invalid n '%.64s': need a whole number of ranks",
                        r->path, r->line, tok);
    if (v != n)
        return trd_fail(TRD_EINVAL, "%s:%ld: the file is for n = %lld ranks, the simulation has "
                        "n = %lld", r->path, r->line, v, (long long)n);
    return TRD_OK;
}

trd_status trd_costs_load(trd_costs *k, const char *path)
{
    reader *r = calloc(1, sizeof *r);
    if (!r)
        return trd_fail(TRD_ENOMEM, "costs: out of memory");
    r->path = path;
    trd_status st = TRD_OK;
    struct stat sb;
    if (!(r->f = fopen(path, "r"))) {
        st = trd_fail(TRD_EIO, "cannot read cost file %s: %s", path, strerror(errno));
        goto done;
    }
    if (fstat(fileno(r->f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        st = trd_fail(TRD_EIO, "cannot read cost file %s: it is a folder", path);
        goto done;
    }
    if ((st = read_header(r, k->n)) != TRD_OK)
        goto done;
    if ((st = trd_costs_alloc_bases(k)) != TRD_OK)
        goto done;
    for (int64_t i = 0; i < k->n * k->n && st == TRD_OK; i++)
        st = read_value(r, "transfer time", &k->dmat[i]);
    for (int64_t i = 0; i < k->n && st == TRD_OK; i++)
        st = read_value(r, "combine time", &k->cvec[i]);
    if (st == TRD_OK && next_token(r))
        st = trd_fail(TRD_EINVAL, "%s:%ld: unexpected data after the %lld combine times",
                      path, r->line, (long long)k->n);
    if (st == TRD_OK && ferror(r->f))
        st = ended(r, "its end");
    if (st != TRD_OK) { /* no half-read matrix: the model is homogeneous again */
        free(k->dmat);
        free(k->cvec);
        k->dmat = k->cvec = NULL;
    }
done:
    if (r->f)
        fclose(r->f);
    free(r->buf);
    free(r);
    return st;
}

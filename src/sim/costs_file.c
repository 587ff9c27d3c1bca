/* costs_file.c: reads heterogeneous cost bases from a text file:
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

static trd_status read_header(reader *r, int64_t n)
{
    char *tok = next_token(r);
    if (!tok || strcmp(tok, "n") != 0)
        return trd_fail(TRD_EINVAL, "%s:%ld: expected 'n N' first", r->path, r->line);
    double v;
    trd_status st = read_value(r, "n", &v);
    if (st != TRD_OK)
        return st;
    if (v != (double)n)
        return trd_fail(TRD_EINVAL, "%s:%ld: the file is for n = %g ranks, the simulation has "
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
    if (!(r->f = fopen(path, "r"))) {
        st = trd_fail(TRD_EIO, "cannot read cost file %s: %s", path, strerror(errno));
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
    if (st != TRD_OK) { /* no half-read matrix: the model is homogeneous again */
        free(k->dmat);
        free(k->cvec);
        k->dmat = k->cvec = NULL;
    }
done:
    if (r->f)
        fclose(r->f);
    free(r);
    return st;
}

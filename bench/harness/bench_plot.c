/* bench_plot.c: the figures of `treduce bench` (trd_lineplot_write):
 * DIR/time-<kind>-<op>.png, time per call against bytes per rank (log-log,
 * one line per series: auto, the baseline, each algorithm), and
 * DIR/ratio-<op>.png, auto's time over the baseline's against bytes, with
 * the line at 1 where they are equal. */
#include "bench_harness.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SERIES (BENCH_MAX_ALGOS + 3)

/* MPI's own collective of kind: the baseline under --wire mpi. */
static const char *mpi_name(trd_collective kind)
{
    static const char *const names[BENCH_KINDS] = {"MPI_Reduce", "MPI_Allreduce",
                                                   "MPI_Reduce_scatter_block", "MPI_Scan",
                                                   "MPI_Exscan"};
    return names[kind];
}

/* "sum of doubles", "sleep-sum (200 us per call)". */
static const char *op_text(const bench_args *a, size_t op, char *buf, size_t size)
{
    if (!strcmp(a->ops[op], "sum"))
        snprintf(buf, size, "sum of doubles");
    else
        snprintf(buf, size, "%s (%g µs per call)",
                 strcmp(a->ops[op], "costly") ? "spin-sum" : "sleep-sum", a->op_cost_us);
    return buf;
}

/* What a series is, in the legend. */
static const char *series_label(const bench_table *t, trd_collective kind, const char *algo,
                                char *buf, size_t size)
{
    if (!strcmp(algo, "auto"))
        snprintf(buf, size, "auto (the model's pick)");
    else if (!strcmp(algo, "mpi"))
        snprintf(buf, size, "%s (%s)", mpi_name(kind), t->baseline_lib);
    else if (!strcmp(algo, "bound"))
        snprintf(buf, size, "memory bound (p streams)");
    else
        snprintf(buf, size, "%s", algo);
    return buf;
}

/* The series measured at (op, kind), in the order they were measured. */
static size_t series_of(const bench_table *t, size_t op, trd_collective kind,
                        const char **names)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const bench_point *pt = &t->pt[i];
        bool known = false;
        for (size_t s = 0; s < n && !known; s++)
            known = !strcmp(names[s], pt->algo);
        if (pt->op == op && pt->kind == kind && !known && n < MAX_SERIES)
            names[n++] = pt->algo;
    }
    return n;
}

/* Draws plot into the file `name` of the output folder (cli_out). */
static bool draw(const bench_args *a, const trd_lineplot *plot, const char *name)
{
    cli_out out;
    return cli_out_begin("bench", &out, a->out, name) &&
           cli_out_finish("bench", &out, trd_lineplot_write(plot, out.tmp)) == CLI_OK;
}

static bool time_plot(const bench_args *a, const bench_table *t, size_t op,
                      trd_collective kind)
{
    const char *names[MAX_SERIES];
    size_t ns = series_of(t, op, kind, names), np = a->nsizes, kept = 0;
    double *x = malloc(np * sizeof *x), *y = malloc((ns + 1) * np * sizeof *y);
    char (*labels)[96] = malloc((ns + 1) * sizeof *labels);
    const char *lp[MAX_SERIES];
    bool ok = x && y && labels;
    for (size_t s = 0; ok && s < ns; s++) {
        bool whole = true; /* a series missing a size is left out */
        for (size_t k = 0; k < np; k++) {
            const bench_point *pt = bench_find(t, op, kind, a->sizes[k], names[s]);
            whole = whole && pt && pt->median > 0;
            y[kept * np + k] = whole ? 1e6 * pt->median : 0;
        }
        if (whole) {
            lp[kept] = series_label(t, kind, names[s], labels[kept], sizeof labels[0]);
            kept++;
        }
    }
    for (size_t k = 0; ok && k < np; k++)
        x[k] = (double)a->sizes[k];
    char title[256], name[256], what[64];
    snprintf(title, sizeof title, "treduce bench: %s, %s, %lld %s (median time)",
             trd_collective_name(kind), op_text(a, op, what, sizeof what), (long long)t->p,
             a->wire->ranks);
    snprintf(name, sizeof name, "time-%s-%s.png", trd_collective_name(kind), a->ops[op]);
    trd_lineplot plot = {.title = title, .xlabel = "bytes per rank",
                         .ylabel = "time per call (µs)", .nseries = kept, .npoints = np,
                         .x = x, .y = y, .series_labels = lp, .logx = true, .logy = true,
                         .note = a->command};
    ok = ok && kept > 0 && draw(a, &plot, name);
    free(x);
    free(y);
    free(labels);
    return ok;
}

static bool ratio_plot(const bench_args *a, const bench_table *t, size_t op)
{
    size_t np = a->nsizes, ns = 0;
    const char *base = bench_baseline_name(a), *lp[BENCH_KINDS + 1];
    char labels[BENCH_KINDS][96], title[256], name[256], what[64];
    double *x = malloc(np * sizeof *x), *y = malloc((BENCH_KINDS + 1) * np * sizeof *y);
    bool ok = x && y;
    for (int c = 0; ok && c < BENCH_KINDS; c++) {
        trd_collective kind = (trd_collective)c;
        bool whole = a->kind[kind];
        for (size_t k = 0; whole && k < np; k++) {
            const bench_point *au = bench_find(t, op, kind, a->sizes[k], "auto");
            const bench_point *b = bench_find(t, op, kind, a->sizes[k], base);
            whole = au && b && au->median > 0 && bench_baseline_value(b) > 0;
            y[ns * np + k] = whole ? au->median / bench_baseline_value(b) : 0;
        }
        if (!whole)
            continue;
        snprintf(labels[ns], sizeof labels[0], "%s: auto / %s", trd_collective_name(kind),
                 !strcmp(base, "bound") ? "memory bound" : mpi_name(kind));
        lp[ns] = labels[ns];
        ns++;
    }
    if (!ok || ns == 0) { /* no baseline for this operator (threads: costly ones) */
        free(x);
        free(y);
        return ok;
    }
    for (size_t k = 0; k < np; k++) {
        x[k] = (double)a->sizes[k];
        y[ns * np + k] = 1.0;
    }
    lp[ns++] = "1: as fast as the baseline";
    snprintf(title, sizeof title, "treduce bench: auto / %s, %s, %lld %s",
             t->baseline_lib[0] ? t->baseline_lib : "memory bound",
             op_text(a, op, what, sizeof what), (long long)t->p, a->wire->ranks);
    snprintf(name, sizeof name, "ratio-%s.png", a->ops[op]);
    trd_lineplot plot = {.title = title, .xlabel = "bytes per rank",
                         .ylabel = "time ratio (below 1: auto is faster)", .nseries = ns,
                         .npoints = np, .x = x, .y = y, .series_labels = lp, .logx = true,
                         .logy = true, .note = a->command};
    ok = draw(a, &plot, name);
    free(x);
    free(y);
    return ok;
}

bool bench_plots(const bench_args *a, const bench_table *t)
{
    bool ok = true;
    for (size_t op = 0; op < a->nops && ok; op++) {
        for (int k = 0; k < BENCH_KINDS && ok; k++)
            if (a->kind[k])
                ok = time_plot(a, t, op, (trd_collective)k);
        ok = ok && ratio_plot(a, t, op);
    }
    return ok;
}

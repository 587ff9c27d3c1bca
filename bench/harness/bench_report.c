/* bench_report.c: what `treduce bench` writes (rank 0): DIR/bench.csv
 * (every series at every point), DIR/ratios.csv (auto against the
 * baseline), the figures (bench_plot.c), and a summary on stdout as text
 * or JSON. */
#include "bench_harness.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *bench_baseline_name(const bench_args *a)
{
    return a->wire->launched ? "mpi" : "bound";
}

const bench_point *bench_find(const bench_table *t, size_t op, trd_collective kind,
                              int64_t bytes, const char *algo)
{
    for (size_t i = 0; i < t->n; i++) {
        const bench_point *pt = &t->pt[i];
        if (pt->op == op && pt->kind == kind && pt->bytes == bytes && !strcmp(pt->algo, algo))
            return pt;
    }
    return NULL;
}

/* A bound is what the best repetition shows possible; MPI is measured like
 * treduce (median). */
double bench_baseline_value(const bench_point *b)
{
    return strcmp(b->algo, "bound") ? b->median : b->min;
}

static bool is_baseline(const bench_point *pt)
{
    return !strcmp(pt->algo, "mpi") || !strcmp(pt->algo, "bound");
}

/* Median of |predicted - measured| / measured over treduce's series
 * (every algorithm and auto); NaN when there is none. */
static double prediction_error(const bench_table *t, size_t *n)
{
    double *e = malloc((t->n + 1) * sizeof *e), med = NAN;
    *n = 0;
    for (size_t i = 0; e && i < t->n; i++) {
        const bench_point *pt = &t->pt[i];
        if (!is_baseline(pt) && isfinite(pt->predicted) && pt->median > 0)
            e[(*n)++] = fabs(pt->predicted - pt->median) / pt->median;
    }
    if (e && *n > 0) {
        cli_sort(e, *n);
        med = *n % 2 ? e[*n / 2] : 0.5 * (e[*n / 2 - 1] + e[*n / 2]);
    }
    free(e);
    return med;
}

static bool write_bench_csv(const bench_args *a, const bench_table *t)
{
    cli_out out;
    FILE *f = cli_out_open("bench", &out, a->out, "bench.csv");
    if (!f)
        return false;
    fprintf(f, "wire,p,kind,op,bytes,algo,median_us,min_us,predicted_us,verified\n");
    for (size_t i = 0; i < t->n; i++) {
        const bench_point *pt = &t->pt[i];
        fprintf(f, "%s,%lld,%s,%s,%lld,%s,%.3f,%.3f,", a->wire_name, (long long)t->p,
                trd_collective_name(pt->kind), a->ops[pt->op], (long long)pt->bytes, pt->algo,
                1e6 * pt->median, 1e6 * pt->min);
        if (isfinite(pt->predicted))
            fprintf(f, "%.3f", 1e6 * pt->predicted);
        fprintf(f, ",%s\n", pt->verified ? "true" : "false");
    }
    return cli_out_end("bench", &out, true);
}

static bool write_ratios_csv(const bench_args *a, const bench_table *t)
{
    cli_out out;
    const char *base = bench_baseline_name(a);
    FILE *f = cli_out_open("bench", &out, a->out, "ratios.csv");
    if (!f)
        return false;
    fprintf(f, "wire,p,kind,op,bytes,auto_algo,auto_us,baseline,baseline_us,ratio,"
            "model_algo\n");
    for (size_t i = 0; i < t->n; i++) {
        const bench_point *au = &t->pt[i], *b;
        if (strcmp(au->algo, "auto") ||
            !(b = bench_find(t, au->op, au->kind, au->bytes, base)))
            continue;
        double bv = bench_baseline_value(b);
        fprintf(f, "%s,%lld,%s,%s,%lld,%s,%.3f,%s,%.3f,%.4f,%s\n", a->wire_name,
                (long long)t->p, trd_collective_name(au->kind), a->ops[au->op], (long long)au->bytes,
                au->chosen, 1e6 * au->median, base, 1e6 * bv, au->median / bv, au->model);
    }
    return cli_out_end("bench", &out, true);
}

/* The fastest of treduce's measured algorithms (not auto) at a point. */
static const bench_point *best_algo(const bench_table *t, const bench_point *au)
{
    const bench_point *best = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const bench_point *pt = &t->pt[i];
        if (pt->op == au->op && pt->kind == au->kind && pt->bytes == au->bytes &&
            !is_baseline(pt) && strcmp(pt->algo, "auto") && (!best || pt->median < best->median))
            best = pt;
    }
    return best;
}

/* The model's first choice at auto's point as measured (its own series),
 * or NULL when that algorithm was not timed. */
static const bench_point *first_choice(const bench_table *t, const bench_point *au)
{
    return au->model ? bench_find(t, au->op, au->kind, au->bytes, au->model) : NULL;
}

/* The model's first over the best measured algorithm at auto's point
 * (>= 1; NaN when either is missing). */
static double first_over_best(const bench_table *t, const bench_point *au)
{
    const bench_point *first = first_choice(t, au), *best = best_algo(t, au);
    return first && best && best->median > 0 ? first->median / best->median : NAN;
}

/* Over the grid (every auto point): the median and largest first / best,
 * how many within 1.1x, of how many. */
typedef struct grid_summary {
    double median, worst;
    size_t within, n;
} grid_summary;

static grid_summary summarize_grid(const bench_table *t)
{
    grid_summary g = {.median = NAN, .worst = NAN};
    double *r = malloc((t->n + 1) * sizeof *r);
    for (size_t i = 0; r && i < t->n; i++) {
        double x = strcmp(t->pt[i].algo, "auto") ? NAN : first_over_best(t, &t->pt[i]);
        if (isfinite(x)) {
            r[g.n++] = x;
            g.within += x <= 1.1;
        }
    }
    if (r && g.n > 0) {
        cli_sort(r, g.n);
        g.median = g.n % 2 ? r[g.n / 2] : 0.5 * (r[g.n / 2 - 1] + r[g.n / 2]);
        g.worst = r[g.n - 1];
    }
    free(r);
    return g;
}

static void print_block(const bench_args *a, const bench_table *t, size_t op,
                        trd_collective kind)
{
    const char *base = bench_baseline_name(a);
    char size[32];
    char ratio[16];
    snprintf(ratio, sizeof ratio, "auto/%s", base);
    printf("\n%s of %s, %lld ranks (%s) - microseconds, median over repetitions of the "
           "slowest rank\n", trd_collective_name(kind), a->ops[op], (long long)t->p,
           a->wire->ranks);
    printf("  %9s %10s %-20s %10s %-20s %10s %10s %10s  %-20s %10s\n", "bytes", "auto",
           "(auto's choice)", "best", "(algorithm)", base, ratio, "predicted", "model's first",
           "first/best");
    for (size_t i = 0; i < t->n; i++) {
        const bench_point *au = &t->pt[i];
        if (au->op != op || au->kind != kind || strcmp(au->algo, "auto"))
            continue;
        const bench_point *best = best_algo(t, au), *b = bench_find(t, op, kind, au->bytes, base);
        printf("  %9s %10.1f %-20s ", bench_size_text(au->bytes, size, sizeof size),
               1e6 * au->median, au->chosen);
        if (best)
            printf("%10.1f %-20s ", 1e6 * best->median, best->algo);
        else
            printf("%10s %-20s ", "-", "");
        if (b)
            printf("%10.1f %10.2f ", 1e6 * bench_baseline_value(b),
                   au->median / bench_baseline_value(b));
        else
            printf("%10s %10s ", "-", "-");
        if (isnan(au->predicted)) /* the simulation failed */
            printf("%10s  ", "-");
        else
            printf("%10.1f  ", 1e6 * au->predicted);
        printf("%-20s ", au->model && strcmp(au->model, au->chosen) ? au->model : "(the same)");
        double fb = first_over_best(t, au);
        if (isfinite(fb))
            printf("%10.2f\n", fb);
        else
            printf("%10s\n", "-");
    }
}

static void print_text(const bench_args *a, const bench_table *t, bool verified)
{
    size_t n;
    double err = prediction_error(t, &n);
    printf("treduce bench: %s wire, %lld ranks, baseline %s\n", a->wire_name,
           (long long)t->p, t->baseline_lib[0] ? t->baseline_lib
                            : "the memory bound (bytes to move / p streams' bandwidth)");
    if (t->shm.max >= INT_MAX)
        printf("(treduce's messages go through shared memory, not MPI)\n");
    else if (t->shm.max)
        printf("(treduce's messages of at most %zu bytes go through shared memory, not MPI)\n",
               t->shm.max);
    cli_shm_probe_print(&t->shm, "");
    for (size_t op = 0; op < a->nops; op++)
        for (int k = 0; k < BENCH_KINDS; k++)
            if (a->kind[k])
                print_block(a, t, op, (trd_collective)k);
    printf("\nmedian relative prediction error |predicted - measured| / measured: %.1f %% "
           "over %zu series (every algorithm and auto)\n", 100 * err, n);
    grid_summary g = summarize_grid(t);
    if (g.n > 0)
        printf("model's first choice over the best measured algorithm: median %.2f, worst "
               "%.2f; within 1.1x at %zu of %zu points\n", g.median, g.worst, g.within, g.n);
    printf("results %s; files in %s: bench.csv, ratios.csv, profile-*.json, time-*.png, "
           "ratio-*.png\n",
           verified ? "verified (every result equals the rank-order fold)"
                    : "NOT verified: some results differ from the fold (bench.csv)", a->out);
}

static json_t *point_json(const bench_args *a, const bench_point *pt, cli_finite *f)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:o, s:o, s:I, s:b}", "kind",
                          trd_collective_name(pt->kind), "op", a->ops[pt->op], "bytes",
                          (json_int_t)pt->bytes, "algo", pt->algo, "median_us",
                          cli_json_real(f, "median_us", 1e6 * pt->median), "min_us",
                          cli_json_real(f, "min_us", 1e6 * pt->min), "iters",
                          (json_int_t)pt->iters, "verified", pt->verified);
    json_object_set_new(o, "predicted_us", isnan(pt->predicted)
                                               ? json_null()
                                               : cli_json_real(f, "predicted_us",
                                                               1e6 * pt->predicted));
    if (pt->chosen)
        json_object_set_new(o, "chosen", json_string(pt->chosen));
    return o;
}

static json_t *profile_json(const trd_profile *pr, cli_finite *f)
{
    json_t *curve = json_array();
    for (int32_t k = 0; k < pr->streams; k++)
        json_array_append_new(curve, cli_json_real(f, "stream_GBps", 1e-9 * pr->stream_bw[k]));
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "latency_us",
                     cli_json_real(f, "latency_us", 1e6 * pr->latency), "flight_us",
                     cli_json_real(f, "flight_us", 1e6 * pr->flight), "ns_per_byte",
                     cli_json_real(f, "ns_per_byte", 1e9 * pr->per_byte), "combine_fixed_us",
                     cli_json_real(f, "combine_fixed_us", 1e6 * pr->combine_fixed),
                     "combine_ns_per_element",
                     cli_json_real(f, "combine_ns_per_element", 1e9 * pr->per_element),
                     "parallelism", cli_json_real(f, "parallelism", pr->parallelism),
                     "recv_combine_saving",
                     cli_json_real(f, "recv_combine_saving", pr->recv_combine_saving),
                     "stream_GBps", curve);
}

/* One point of the grid: the best measured algorithm, the model's first
 * choice, and the first's time over the best's. */
static json_t *grid_json(const bench_args *a, const bench_table *t, const bench_point *au,
                         cli_finite *f)
{
    const bench_point *best = best_algo(t, au), *first = first_choice(t, au);
    double fb = first_over_best(t, au);
    json_t *o = json_pack("{s:s, s:s, s:I}", "kind", trd_collective_name(au->kind), "op",
                          a->ops[au->op], "bytes", (json_int_t)au->bytes);
    json_object_set_new(o, "best_algo", best ? json_string(best->algo) : json_null());
    json_object_set_new(o, "best_us", best ? cli_json_real(f, "best_us", 1e6 * best->median)
                                           : json_null());
    json_object_set_new(o, "first_algo", au->model ? json_string(au->model) : json_null());
    json_object_set_new(o, "first_us", first ? cli_json_real(f, "first_us", 1e6 * first->median)
                                             : json_null());
    json_object_set_new(o, "first_over_best", isfinite(fb) ? cli_json_real(f, "ratio", fb)
                                                           : json_null());
    return o;
}

/* Every point, auto/baseline ratio and profile (f: the first number that
 * is not finite). */
static json_t *table_json(const bench_args *a, const bench_table *t, cli_finite *f)
{
    size_t n;
    double err = prediction_error(t, &n);
    json_t *points = json_array(), *ratios = json_array(), *profiles = json_object(),
           *grid = json_array();
    const char *base = bench_baseline_name(a);
    for (size_t i = 0; i < t->n; i++) {
        const bench_point *pt = &t->pt[i], *b;
        json_array_append_new(points, point_json(a, pt, f));
        if (!strcmp(pt->algo, "auto") && (b = bench_find(t, pt->op, pt->kind, pt->bytes, base)))
            json_array_append_new(ratios, json_pack("{s:s, s:s, s:I, s:s, s:s, s:o}", "kind",
                trd_collective_name(pt->kind), "op", a->ops[pt->op], "bytes", (json_int_t)pt->bytes,
                "auto_algo", pt->chosen, "model_algo", pt->model,
                "ratio", cli_json_real(f, "ratio", pt->median / bench_baseline_value(b))));
        if (!strcmp(pt->algo, "auto"))
            json_array_append_new(grid, grid_json(a, t, pt, f));
    }
    for (size_t op = 0; op < a->nops; op++)
        json_object_set_new(profiles, a->ops[op], profile_json(&t->profile[op], f));
    json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:f, s:I, s:o, s:o, s:o, s:s}",
                          "wire", a->wire_name, "transport", a->wire_name, "p", (json_int_t)t->p,
                          "command", a->command, "baseline", base, "baseline_lib",
                          t->baseline_lib, "op_cost_us", a->op_cost_us, "iters",
                          (json_int_t)a->iters, "profiles", profiles, "points", points,
                          "ratios", ratios, "out", a->out);
    json_object_set_new(o, "median_prediction_error", isfinite(err) ? json_real(err) : json_null());
    grid_summary g = summarize_grid(t);
    json_object_set_new(o, "grid", grid);
    json_object_set_new(o, "first_over_best",
                        json_pack("{s:o, s:o, s:I, s:I}", "median",
                                  g.n ? cli_json_real(f, "median", g.median) : json_null(),
                                  "worst", g.n ? cli_json_real(f, "worst", g.worst) : json_null(),
                                  "within_1_1", (json_int_t)g.within, "points",
                                  (json_int_t)g.n));
    json_object_set_new(o, "shm_max_bytes", json_integer((json_int_t)t->shm.max));
    json_object_set_new(o, "shm_probe_us", cli_shm_probe_json(&t->shm));
    return o;
}

/* DIR/profile-<op>.json: the profile auto and the predictions used, in
 * the format of `treduce calibrate --out` (so `treduce run --profile`
 * can replay a point; the costly operators' --op-cost is in their
 * measured combine_fixed_s). */
static bool write_profiles(const bench_args *a, const bench_table *t)
{
    for (size_t op = 0; op < a->nops; op++) {
        char name[256];
        cli_out out;
        snprintf(name, sizeof name, "profile-%s.json", a->ops[op]);
        trd_profile_meta m = {.p = (int32_t)t->p, .elem_size = sizeof(double),
                              .shm_max = t->shm.max};
        snprintf(m.wire, sizeof m.wire, "%s", a->wire_name);
        snprintf(m.op, sizeof m.op, "%s", !strcmp(a->ops[op], "sum")      ? "sum"
                                          : !strcmp(a->ops[op], "costly") ? "sleep-sum"
                                                                          : "spin-sum");
        snprintf(m.type, sizeof m.type, "double");
        if (!cli_out_begin("bench", &out, a->out, name) ||
            cli_out_finish("bench", &out, trd_profile_save(out.tmp, &t->profile[op], &m)) !=
                CLI_OK)
            return false;
    }
    return true;
}

int bench_report(const bench_args *a, const bench_table *t)
{
    bool verified = true;
    for (size_t i = 0; i < t->n; i++)
        verified = verified && t->pt[i].verified;
    if (!cli_make_dir("bench", a->out) || !write_bench_csv(a, t) || !write_ratios_csv(a, t) ||
        !write_profiles(a, t) || !bench_plots(a, t))
        return CLI_FAILED;
    cli_finite f = {0};
    json_t *o = table_json(a, t, &f);
    int st = cli_finite_end("bench", &f, o);
    if (a->json) {
        json_dumpf(o, stdout, JSON_INDENT(2));
        putchar('\n');
    } else if (st == CLI_OK) {
        print_text(a, t, verified);
    }
    json_decref(o);
    if (!verified)
        fprintf(stderr, "treduce bench: some results differ from the rank-order fold "
                        "(verified = false in %s/bench.csv)\n", a->out);
    return st != CLI_OK ? st : verified ? CLI_OK : CLI_FAILED;
}

/* bench_data.c: the lists `treduce bench` takes (sizes, operators, kinds,
 * algorithms), the inputs of every rank and the result they must give. */
#include "bench_harness.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "costly_op.h"

#define MAX_BYTES ((int64_t)1 << 30) /* per rank: 1 GiB is beyond any target */

/* One size: digits, then an optional K/M/G (x1024^k), then an optional
 * B or iB.  -1 when it is not one. */
static int64_t parse_size(const char *s, size_t len)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf || !isdigit((unsigned char)s[0]))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || v < 0)
        return -1;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if (shift && *end == 'i')
        end++;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end != '\0' || v > (MAX_BYTES >> shift))
        return -1;
    return (int64_t)v << shift;
}

bool bench_parse_sizes(const char *text, bench_args *a)
{
    a->nsizes = 0;
    for (const char *s = text;; s++) {
        size_t len = strcspn(s, ",");
        int64_t b = parse_size(s, len);
        if (b <= 0 || b % 8 != 0 || a->nsizes == BENCH_MAX_SIZES) {
            cli_usage_error("bench", "invalid size '%.*s' in --sizes '%s': need a byte count "
                            "> 0, a multiple of 8 (doubles), at most 1G, with an optional "
                            "K, M or G suffix (e.g. 8,1K,64K,1M,16M; at most %d sizes)",
                            (int)len, s, text, BENCH_MAX_SIZES);
            return false;
        }
        a->sizes[a->nsizes++] = b;
        s += len;
        if (*s == '\0')
            return true;
    }
}

void bench_default_sizes(bench_args *a)
{
    a->nsizes = 0;
    for (int64_t b = 8; b <= (8 << 20); b *= 4)
        a->sizes[a->nsizes++] = b;
    a->sizes[a->nsizes++] = 16 << 20;
}

const char *bench_size_text(int64_t bytes, char *buf, size_t size)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB"};
    int k = 0;
    while (k < 3 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        k++;
    }
    snprintf(buf, size, "%lld %s", (long long)bytes, unit[k]);
    return buf;
}

/* Splits a comma list and hands each item to take(); false (after take's
 * own message) at the first it refuses. */
static bool each_item(const char *text, bench_args *a, bool (*take)(bench_args *, const char *))
{
    char item[64];
    for (const char *s = text;; s++) {
        size_t len = strcspn(s, ",");
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), s);
        if (!take(a, item))
            return false;
        s += len;
        if (*s == '\0')
            return true;
    }
}

static bool take_op(bench_args *a, const char *name)
{
    static const char *const known[] = {"sum", "costly", "costly-spin"};
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(name, known[i]))
            continue;
        for (size_t j = 0; j < a->nops; j++)
            if (a->ops[j] == known[i])
                return true; /* listed twice: measured once */
        a->ops[a->nops++] = known[i];
        return true;
    }
    cli_usage_error("bench", "unknown operator '%s' in --ops: sum, costly (sleep-sum) or "
                    "costly-spin (spin-sum)", name);
    return false;
}

bool bench_parse_ops(const char *text, bench_args *a)
{
    a->nops = 0;
    return each_item(text, a, take_op);
}

static bool take_kind(bench_args *a, const char *name)
{
    trd_collective c;
    if (trd_collective_parse(name, &c) == TRD_OK) {
        a->kind[c] = true;
        return true;
    }
    cli_usage_error("bench", "invalid --kinds: %s", trd_errmsg());
    return false;
}

bool bench_parse_kinds(const char *text, bench_args *a)
{
    memset(a->kind, 0, sizeof a->kind);
    return each_item(text, a, take_kind);
}

static bool take_algo(bench_args *a, const char *name)
{
    size_t i;
    if (!strcmp(name, "auto"))
        return true; /* always measured */
    if (trd_algo_find(name, &i) != TRD_OK) {
        cli_usage_error("bench", "in --algos: %s", trd_errmsg());
        return false;
    }
    for (size_t j = 0; j < a->nalgos; j++)
        if (a->algos[j] == i)
            return true;
    a->algos[a->nalgos++] = i;
    return true;
}

bool bench_parse_algos(const char *text, bench_args *a)
{
    a->nalgos = 0;
    if (!strcmp(text, "all")) {
        for (size_t i = 0; i < trd_algo_count() && i < BENCH_MAX_ALGOS; i++)
            a->algos[a->nalgos++] = i;
        return true;
    }
    return each_item(text, a, take_algo);
}

/* Rank r's value at i: `treduce run`'s (tools/run_rank.c), so both tools
 * reduce the same data: integers in [-8, 8], whose sums are exact in
 * double whatever the combine order. */
static double value(int64_t r, int64_t i)
{
    return (double)cli_run_value("sum", r, i);
}

void bench_fill(double *buf, int64_t count, int64_t rank)
{
    for (int64_t i = 0; i < count; i++)
        buf[i] = value(rank, i);
}

void bench_expected(double *buf, trd_collective kind, int64_t count, int64_t p, int64_t rank)
{
    cli_kind_result want = cli_kind_result_of(kind, rank, p, count, 0);
    for (int64_t i = 0; want.gets && i < count; i++) {
        double acc = value(0, want.offset + i);
        for (int64_t r = 1; r < want.ranks; r++)
            acc = acc + value(r, want.offset + i);
        buf[i] = acc;
    }
}

trd_status bench_make_op(const bench_args *a, const char *name, trd_op **op)
{
    if (!strcmp(name, "costly"))
        return cli_costly_op("sleep-sum", a->op_cost_us, op);
    if (!strcmp(name, "costly-spin"))
        return cli_costly_op("spin-sum", a->op_cost_us, op);
    return trd_op_builtin(op, TRD_OP_SUM, TRD_DOUBLE);
}

bool bench_algo_runs(size_t i, trd_collective kind)
{
    /* the heterogeneous planners want costs, which bench does not give */
    return !trd_algo_uses_costs(i) && trd_algo_runs(i, kind);
}

void bench_drop_unfit(bench_args *a, bool say)
{
    size_t kept = 0;
    for (size_t j = 0; j < a->nalgos; j++) {
        size_t i = a->algos[j];
        trd_status st = TRD_OK;
        if (trd_algo_kind_of(i) == TRD_KIND_EXCHANGE) { /* its plan for this p */
            trd_params prm;
            trd_params_init(&prm);
            prm.n = a->p;
            prm.collective = cli_algo_first_kind(i);
            trd_plan *plan = NULL;
            st = trd_plan_create(&plan, trd_algo_name(i), &prm);
            trd_plan_free(plan);
        }
        if (st == TRD_EUNSUPPORTED && say)
            fprintf(stderr, "treduce bench: skipped %s: %s\n", trd_algo_name(i), trd_errmsg());
        if (st != TRD_EUNSUPPORTED)
            a->algos[kept++] = i;
    }
    a->nalgos = kept;
}

int64_t bench_series_total(const bench_args *a, size_t baseline_ops)
{
    int64_t per_size = 0, kinds = 0;
    for (int k = 0; k < BENCH_KINDS; k++) {
        if (!a->kind[k])
            continue;
        kinds++;
        per_size++; /* auto */
        for (size_t j = 0; j < a->nalgos; j++)
            per_size += bench_algo_runs(a->algos[j], k);
    }
    return (per_size * (int64_t)a->nops + kinds * (int64_t)baseline_ops) * (int64_t)a->nsizes;
}

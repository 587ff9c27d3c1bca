/* cmd_star.c: `treduce star`: the all-reduce of Oh, Choi and Primeaux on
 * the n-star graph S_n (treduce/star.h, docs/STAR.md).  For one n it
 * replays the paper's schedule and the reduce+broadcast baseline (steps,
 * duplicates, single-port, sums) and simulates both plans, under unit costs
 * and random ones; --table prints the paper's Table 2 next to treduce's own
 * counts. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "treduce/star.h"

/* The largest n whose plans are simulated: S_7 is 5040 ranks, whose
 * random-cost runs take a noticeable time each; there the default is
 * RUNS_N7 runs. */
#define SIM_N_MAX 7
#define RUNS_DEFAULT 1000
#define RUNS_N7 100
#define TABLE_FIRST 3
#define TABLE_LAST 10

static const char *const algos[] = {"star", "star-reduce-bcast"};
static const char *const dist_names[] = {"const", "exp", "gamma"}; /* by trd_dist */

static void help(void)
{
    printf("usage: treduce star -n N [--runs R] [--dist exp|gamma|const] [--cv Z]\n"
           "                    [--seed S] [--format text|json]\n"
           "       treduce star --table [--format text|json]\n\n"
           "All-reduce on the n-star graph S_N (N! nodes, the permutations of 1..N; link\n"
           "k swaps the first and k-th symbols; ranks in lexicographic order), after Oh,\n"
           "Choi and Primeaux (2005).  Generates the paper's schedule (Fig. 2: N(N-1)/2\n"
           "single-port steps, Theorem 3) and the reduce+broadcast baseline, replays both\n"
           "(every node ends with the sum of N! random integers, no contribution reaches\n"
           "a node twice, one send and one receive per node and step, along the step's\n"
           "link) and simulates their plans (one-port full duplex, d = 1 per message,\n"
           "c = 0): unit costs, then R runs of random costs.\n\n"
           "  -n N          dimension, 1 <= N <= %d (replayed); plans simulated up to N = %d\n"
           "  --table       Table 2 of the paper (N = %d..%d) next to treduce's step counts\n"
           "                (replayed up to N = %d, counted from the generator above)\n"
           "  --runs R      random-cost runs (default %d, %d for N = 7; 0: none)\n"
           "  --dist D      transfer-time factor: exp (default), gamma or const\n"
           "  --cv Z        gamma's coefficient of variation (default 1)\n"
           "  --seed S      seed of the random values and costs (default 1)\n"
           "  --format F    text (default) or json\n\n"
           "JSON keys: n, nodes, steps, expected_steps, duplicates, verified,\n"
           "reduce_broadcast_steps, sheu_steps, tseng_steps, star {...},\n"
           "reduce_broadcast {...} (each: steps, transfers, duplicates, port_violations,\n"
           "incomplete, wrong_sums, verified, seconds, unit_makespan, random {...});\n"
           "--table: rows [{n, nodes, tseng_printed, tseng, sheu_printed, sheu,\n"
           "ours_printed, star_steps, reduce_broadcast_steps, checked_by, verified}].\n"
           "Exit status: 0 verified, 1 a check failed, 2 bad usage or input.\n",
           TRD_STAR_REPLAY_MAX, SIM_N_MAX, TABLE_FIRST, TABLE_LAST, TRD_STAR_REPLAY_MAX,
           RUNS_DEFAULT, RUNS_N7);
}

typedef struct star_args {
    int64_t n, runs, seed;
    bool n_set, runs_set, table, json;
    trd_dist dist;
    double cv;
    bool cv_set;
} star_args;

static int take_option(int opt, void *ctx)
{
    star_args *a = ctx;
    switch (opt) {
    case 'n': a->n_set = true; return cli_int("star", "-n", optarg, &a->n) ? CLI_OK : CLI_USAGE;
    case 't': a->table = true; return CLI_OK;
    case 'r': a->runs_set = true;
              return cli_int("star", "--runs", optarg, &a->runs) ? CLI_OK : CLI_USAGE;
    case 's': return cli_int("star", "--seed", optarg, &a->seed) ? CLI_OK : CLI_USAGE;
    case 'v': a->cv_set = true; return cli_real("star", "--cv", optarg, &a->cv) ? CLI_OK : CLI_USAGE;
    case 'D':
        for (int i = 0; i < 3; i++)
            if (!strcmp(optarg, dist_names[i])) {
                a->dist = (trd_dist)i;
                return CLI_OK;
            }
        return cli_usage_error("star", "invalid --dist '%s': exp, gamma or const", optarg);
    case 'f':
        if (strcmp(optarg, "text") && strcmp(optarg, "json"))
            return cli_usage_error("star", "invalid --format '%s': text or json", optarg);
        a->json = !strcmp(optarg, "json");
        return CLI_OK;
    default:
        return cli_usage_error("star", "unknown option");
    }
}

static int64_t factorial(int64_t n)
{
    return n <= 1 ? 1 : n * factorial(n - 1);
}

static int parse_args(int argc, char **argv, star_args *a)
{
    static const struct option opts[] = {
        {"table", 0, 0, 't'}, {"runs", 1, 0, 'r'}, {"seed", 1, 0, 's'}, {"dist", 1, 0, 'D'},
        {"cv", 1, 0, 'v'},    {"format", 1, 0, 'f'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int st = cli_parse_options_short("star", "n:h", argc, argv, opts, help, take_option, a);
    if (st != CLI_OK)
        return st < 0 ? CLI_OK : st;
    if (!a->n_set && !a->table)
        return cli_usage_error("star", "missing -n N (or --table)");
    if (a->n_set && a->table)
        return cli_usage_error("star", "-n and --table exclude each other");
    if (a->n_set && (a->n < 1 || a->n > TRD_STAR_REPLAY_MAX))
        return cli_usage_error("star", "invalid -n %lld: need 1 <= n <= %d (the replay keeps a "
                               "set of n! contributions per node: S_%d has %lld nodes; "
                               "--table counts the steps up to n = %d)", (long long)a->n,
                               TRD_STAR_REPLAY_MAX, TRD_STAR_REPLAY_MAX,
                               (long long)factorial(TRD_STAR_REPLAY_MAX), TABLE_LAST);
    if (a->runs < 0)
        return cli_usage_error("star", "invalid --runs %lld: need >= 0", (long long)a->runs);
    if (a->seed < 0)
        return cli_usage_error("star", "invalid --seed %lld: need >= 0", (long long)a->seed);
    if (!a->cv_set)
        a->cv = a->dist == TRD_DIST_CONST ? 0.0 : 1.0;
    if (!a->runs_set)
        a->runs = a->n == SIM_N_MAX ? RUNS_N7 : RUNS_DEFAULT;
    return -1;
}

/* ---- Simulation of the plans ---- */

typedef struct sim_out {
    bool done;
    double unit;       /* makespan with every transfer 1, every combine 0 */
    trd_mc_stats mc;   /* random costs (mc.runs == 0: none) */
} sim_out;

static void progress(void *ctx, int64_t done, int64_t total)
{
    cli_progress((const char *)ctx, "runs", done, total);
}

/* One plan of algo on S_n: unit costs, then a.runs runs of random costs. */
static trd_status simulate(const char *algo, int32_t n, const star_args *a, sim_out *o)
{
    *o = (sim_out){0};
    if (n > SIM_N_MAX)
        return TRD_OK;
    trd_params p;
    trd_params_init(&p);
    p.n = factorial(n);
    p.d = 1.0;
    p.c = 0.0;
    p.allreduce = true;
    trd_plan *plan;
    trd_status st = trd_plan_create(&plan, algo, &p);
    if (st != TRD_OK)
        return st;
    o->unit = trd_plan_makespan(plan);
    trd_plan_free(plan);
    o->done = true;
    if (a->runs == 0)
        return TRD_OK;
    trd_costs *costs = NULL;
    st = trd_costs_create(&costs, p.n, a->dist, 1.0, 0.0, a->cv);
    if (st == TRD_OK)
        st = trd_monte_carlo(algo, &p, costs, TRD_PORT_FULL, (uint64_t)a->seed, a->runs, 0,
                             progress, (void *)algo, &o->mc, NULL);
    trd_costs_free(costs);
    return st;
}

/* ---- One n ---- */

static json_t *sim_json(const star_args *a, const sim_out *s)
{
    if (!s->done)
        return json_pack("{s:n, s:n}", "unit_makespan", "random");
    json_t *random = s->mc.runs == 0
                         ? json_null()
                         : json_pack("{s:s, s:f, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                                     "dist", dist_names[a->dist], "cv", a->cv, "runs",
                                     (json_int_t)s->mc.runs, "seed", (json_int_t)a->seed,
                                     "mean", s->mc.mean, "std", s->mc.std, "q10", s->mc.q10,
                                     "q50", s->mc.q50, "q90", s->mc.q90, "min", s->mc.min,
                                     "max", s->mc.max);
    return json_pack("{s:f, s:o}", "unit_makespan", s->unit, "random", random);
}

static json_t *algo_json(const star_args *a, const trd_star_report *r, const sim_out *s)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:f}", "steps",
                          (json_int_t)r->steps, "expected_steps", (json_int_t)r->expected_steps,
                          "transfers", (json_int_t)r->transfers, "duplicates",
                          (json_int_t)r->duplicates, "port_violations",
                          (json_int_t)r->port_violations, "incomplete",
                          (json_int_t)r->incomplete, "wrong_sums", (json_int_t)r->wrong_sums,
                          "verified", r->verified, "seconds", r->seconds);
    json_t *sim = sim_json(a, s);
    json_object_update(o, sim);
    json_decref(sim);
    return o;
}

static void print_json(const star_args *a, const trd_star_report *r, const sim_out *s)
{
    int32_t n = r[0].n;
    json_t *o = json_pack("{s:i, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I}", "n", (int)n,
                          "nodes", (json_int_t)r[0].nodes, "steps", (json_int_t)r[0].steps,
                          "expected_steps", (json_int_t)r[0].expected_steps, "duplicates",
                          (json_int_t)r[0].duplicates, "verified", r[0].verified,
                          "reduce_broadcast_steps", (json_int_t)r[1].steps, "sheu_steps",
                          (json_int_t)trd_star_steps_sheu(n), "tseng_steps",
                          (json_int_t)trd_star_steps_tseng(n), "seed", (json_int_t)a->seed);
    json_object_set_new(o, "star", algo_json(a, &r[0], &s[0]));
    json_object_set_new(o, "reduce_broadcast", algo_json(a, &r[1], &s[1]));
    json_dumpf(o, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
    putchar('\n');
    json_decref(o);
}

static void print_text(const star_args *a, const trd_star_report *r, const sim_out *s)
{
    int32_t n = r[0].n;
    printf("S_%d: %lld nodes (the permutations of 1..%d, ranks in lexicographic order), "
           "%d links each\n\nReplay of the schedules (seed %lld): per node its set of "
           "contributions and its sum of random integers\n  %-18s %6s %6s %10s %10s %5s %10s "
           "%6s  %s\n", (int)n, (long long)r[0].nodes, (int)n, (int)n - 1,
           (long long)a->seed, "algorithm", "steps", "paper", "transfers", "duplicates", "port",
           "incomplete", "sums", "verified");
    for (int i = 0; i < 2; i++)
        printf("  %-18s %6lld %6lld %10lld %10lld %5lld %10lld %6lld  %s (%.2f s)\n", algos[i],
               (long long)r[i].steps, (long long)r[i].expected_steps,
               (long long)r[i].transfers, (long long)r[i].duplicates,
               (long long)r[i].port_violations, (long long)r[i].incomplete,
               (long long)r[i].wrong_sums, r[i].verified ? "yes" : "NO", r[i].seconds);
    printf("  paper: Theorem 3 n(n-1)/2 = %lld; Table 2 reduce+broadcast: Sheu %lld, "
           "Tseng 3(n-1)^2 = %lld\n\n", (long long)trd_star_steps_theorem3(n),
           (long long)trd_star_steps_sheu(n), (long long)trd_star_steps_tseng(n));
    if (!s[0].done) {
        printf("Plans not simulated: n > %d\n", SIM_N_MAX);
        return;
    }
    printf("Simulated plans (one-port full duplex, a transfer takes 1, a combine 0)");
    if (a->runs > 0)
        printf("; random: %s transfer times (CV %g), %lld runs, seed %lld",
               dist_names[a->dist], a->cv, (long long)a->runs, (long long)a->seed);
    printf("\n  %-18s %10s", "algorithm", "unit costs");
    if (a->runs > 0)
        printf(" %9s %9s %9s %9s %9s", "mean", "std", "q10", "median", "q90");
    putchar('\n');
    for (int i = 0; i < 2; i++) {
        printf("  %-18s %10g", algos[i], s[i].unit);
        if (a->runs > 0)
            printf(" %9.4f %9.4f %9.4f %9.4f %9.4f", s[i].mc.mean, s[i].mc.std, s[i].mc.q10,
                   s[i].mc.q50, s[i].mc.q90);
        putchar('\n');
    }
}

static int run_one(const star_args *a)
{
    trd_star_report r[2];
    sim_out s[2];
    trd_status st = TRD_OK;
    for (int i = 0; i < 2 && st == TRD_OK; i++)
        if ((st = trd_star_verify(algos[i], (int32_t)a->n, (uint64_t)a->seed, &r[i])) == TRD_OK)
            st = simulate(algos[i], (int32_t)a->n, a, &s[i]);
    if (st != TRD_OK)
        return cli_lib_error("star", st);
    if (a->json)
        print_json(a, r, s);
    else
        print_text(a, r, s);
    return r[0].verified && r[1].verified ? CLI_OK : CLI_FAILED;
}

/* ---- --table: Table 2 of the paper ---- */

/* Table 2 as printed (n = 3..10); "Tseng" at n = 8 is a typo: 127 for
 * 3 (n - 1)^2 = 147. */
static const int64_t tseng_printed[] = {12, 27, 48, 75, 108, 127, 192, 243};
static const int64_t sheu_printed[] = {6, 12, 18, 26, 34, 42, 50, 60};
static const int64_t ours_printed[] = {3, 6, 10, 15, 21, 28, 36, 45};

typedef struct table_row {
    int32_t n;
    int64_t steps[2]; /* star, star-reduce-bcast */
    bool replayed, verified;
} table_row;

/* The counts of row n: from the replay up to TRD_STAR_REPLAY_MAX, else
 * from the generators' rounds. */
static trd_status table_row_make(int32_t n, uint64_t seed, table_row *row)
{
    *row = (table_row){.n = n, .replayed = n <= TRD_STAR_REPLAY_MAX, .verified = true};
    trd_status st = TRD_OK;
    for (int i = 0; i < 2 && st == TRD_OK; i++) {
        trd_star_report r;
        if (!row->replayed) {
            st = trd_star_steps(algos[i], n, &row->steps[i]);
        } else if ((st = trd_star_verify(algos[i], n, seed, &r)) == TRD_OK) {
            row->steps[i] = r.steps;
            row->verified = row->verified && r.verified;
        }
        cli_progress("star --table", "schedules", (n - TABLE_FIRST) * 2 + i + 1,
                     (TABLE_LAST - TABLE_FIRST + 1) * 2);
    }
    return st;
}

static json_t *row_json(const table_row *row)
{
    int i = row->n - TABLE_FIRST;
    return json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:b}", "n", (int)row->n,
                     "nodes", (json_int_t)factorial(row->n), "tseng_printed",
                     (json_int_t)tseng_printed[i], "tseng", (json_int_t)trd_star_steps_tseng(row->n),
                     "sheu_printed", (json_int_t)sheu_printed[i], "sheu",
                     (json_int_t)trd_star_steps_sheu(row->n), "ours_printed",
                     (json_int_t)ours_printed[i], "star_steps", (json_int_t)row->steps[0],
                     "reduce_broadcast_steps", (json_int_t)row->steps[1], "checked_by",
                     row->replayed ? "replay" : "generator", "verified", row->verified);
}

static void row_text(const table_row *row)
{
    int i = row->n - TABLE_FIRST;
    int64_t tseng = trd_star_steps_tseng(row->n);
    char printed[24];
    snprintf(printed, sizeof printed, "%lld%s", (long long)tseng_printed[i],
             tseng_printed[i] != tseng ? "*" : "");
    printf("%3d %9lld %8s %8lld %8lld %8lld %8lld %8lld %10lld  %s%s\n", (int)row->n,
           (long long)factorial(row->n), printed, (long long)tseng, (long long)sheu_printed[i],
           (long long)trd_star_steps_sheu(row->n), (long long)ours_printed[i],
           (long long)row->steps[0], (long long)row->steps[1],
           row->replayed ? "replay" : "generator", row->verified ? "" : " FAILED");
}

static int run_table(const star_args *a)
{
    table_row rows[TABLE_LAST - TABLE_FIRST + 1];
    bool ok = true;
    for (int32_t n = TABLE_FIRST; n <= TABLE_LAST; n++) {
        trd_status st = table_row_make(n, (uint64_t)a->seed, &rows[n - TABLE_FIRST]);
        if (st != TRD_OK)
            return cli_lib_error("star", st);
        ok = ok && rows[n - TABLE_FIRST].verified;
    }
    json_t *all = json_array();
    if (!a->json)
        printf("Table 2 of Oh, Choi and Primeaux (2005): steps of an all-reduce on S_n, as "
               "printed and as\ncomputed, next to the steps of treduce's schedules "
               "(star: Fig. 2; rb: reduce+broadcast)\n%3s %9s %8s %8s %8s %8s %8s %8s %10s  "
               "%s\n", "n", "nodes", "Tseng", "3(n-1)^2", "Sheu", "formula", "Ours",
               "star", "rb", "counted by");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (a->json)
            json_array_append_new(all, row_json(&rows[i]));
        else
            row_text(&rows[i]);
    }
    if (a->json) {
        json_dumpf(all, stdout, JSON_INDENT(1));
        putchar('\n');
    } else {
        printf("* as printed; 3(n-1)^2 = 147 (a typo in the table)\n"
               "Sheu's formula: 2 sum_{i=2..n} (ceil(log2(i-1)) + 1).  replay: schedule "
               "generated with its n! nodes\nand replayed (trd_star_verify); generator: "
               "rounds counted without enumerating the nodes.\n");
    }
    json_decref(all);
    return ok ? CLI_OK : CLI_FAILED;
}

int cmd_star(int argc, char **argv)
{
    star_args a = {.seed = 1, .dist = TRD_DIST_EXP};
    int st = parse_args(argc, argv, &a);
    if (st >= 0)
        return st;
    return a.table ? run_table(&a) : run_one(&a);
}

/* cmd_plan.c: `treduce plan`: build one plan, print it as a table, JSON or
 * Graphviz, and optionally draw its Gantt chart. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_DOT };

static void help(void)
{
    printf("usage: treduce plan --algo NAME -n N [--d D] [--c C] [--K K] [--root R]\n"
           "                    [--kind K] [--costs FILE | --preset NAME [--slow X]]\n"
           "                    [--noncommutative] [--format text|json|dot] [--gantt FILE]\n\n"
           "Builds the reduction plan of algorithm NAME for N ranks (0..N-1) under the\n"
           "homogeneous model of Canon & Antoniu: a transfer takes D, a combine C, a rank\n"
           "is in at most one transfer at a time and receives its next input while it\n"
           "combines the previous one.  Prints the makespan next to the bounds, the tree\n"
           "(parent of every rank) and the start time of every transfer.  Every\n"
           "algorithm of 'treduce list' plans: a segmented or exchange plan is timed by\n"
           "the simulator under the same costs (one-port full duplex), a dynamic one\n"
           "(tree-dyn, nc-tree-dyn) is its run there, ending on the rank it chose.\n"
           "With --costs or --preset the costs are heterogeneous (Benoit et al. Sec. 3.1):\n"
           "rank i sends to rank j in d[i][j] and combines in c[i]; the planners that read\n"
           "them (hetero-greedy, hetero-exact) plan for them, the others are built with\n"
           "their means, and every plan is timed under them.\n\n"
           "  --algo NAME         planner (default greedy; 'treduce list' shows all)\n"
           "  -n N                number of ranks (required, but for --costs: the file's)\n"
           "  --d D, --c C        transfer and combine times (default 1 and 1; with\n"
           "                      --preset, its fast transfer and its combine)\n"
           "  --costs FILE        heterogeneous costs: 'n N', N rows of d[i][*], a row of\n"
           "                      c[*] (docs/SIMULATION.md; treduce costs generate)\n"
           "  --preset NAME       lower-to-higher, higher-to-lower or fib-root-slow (Benoit\n"
           "                      et al. Sec. 4), slow transfers X times D (--slow X,\n"
           "                      default 2; --D X: the same, its older spelling)\n"
           "  --K K               limit of greedy-k-transfers / greedy-k-reducers\n"
           "  --root R            rank that gets the result (default 0; a reduce, or the\n"
           "                      tree of an allreduce)\n"
           "  --kind K            the collective planned: reduce (default), allreduce\n"
           "                      (every rank gets the result; tree algorithms reduce,\n"
           "                      then broadcast down the same tree), reduce-scatter (rank\n"
           "                      r gets part r of it), scan (rank r gets the fold of\n"
           "                      ranks 0..r) or exscan (of ranks 0..r-1); each\n"
           "                      algorithm plans the kinds 'treduce list' names\n"
           "  --allreduce         the same as --kind allreduce (its older spelling)\n"
           "  --noncommutative    number ranks so each combine joins adjacent ranges\n"
           "  --format F          text (default), json or dot (Graphviz)\n"
           "  --gantt FILE        draw the schedule to FILE.png or FILE.svg\n\n"
           "Exit status: 0 ok, 1 failure, 2 bad usage or input.\n");
}

/* Whether the plan's collective has a root: a reduce's, or the tree an
 * allreduce reduces to and broadcasts from. */
static bool rooted(const trd_params *p)
{
    return p->collective == TRD_COLL_REDUCE || p->collective == TRD_COLL_ALLREDUCE;
}

/* A plan and the times of its steps (trd_plan_step_times: those of the
 * run its makespan ends). */
typedef struct plan_view {
    const trd_plan *plan;
    double *start, *end;
} plan_view;

static trd_status view_open(plan_view *v, const trd_plan *plan)
{
    size_t total = trd_plan_total_steps(plan);
    *v = (plan_view){.plan = plan, .start = malloc((total + 1) * sizeof *v->start),
                     .end = malloc((total + 1) * sizeof *v->end)};
    if (!v->start || !v->end)
        return TRD_ENOMEM;
    return trd_plan_step_times(plan, v->start, v->end);
}

static void view_close(plan_view *v)
{
    free(v->start);
    free(v->end);
}

/* Where the times of rank r's step i are. */
static size_t at(const plan_view *v, int32_t r, size_t i)
{
    return trd_plan_step_offset(v->plan, r) + i;
}

static bool is_send(const trd_step *s)
{
    return s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT;
}

static bool is_recv(const trd_step *s)
{
    return s->kind == TRD_STEP_RECV || s->kind == TRD_STEP_RECV_COMBINE;
}

/* When rank r's partial result starts towards its parent: its first
 * send there (a segmented plan's first block); NaN for the root and
 * where there is no tree. */
static double send_start(const plan_view *v, int32_t r)
{
    int32_t parent = trd_plan_parent(v->plan, r);
    for (size_t i = 0; parent >= 0 && i < trd_plan_step_count(v->plan, r); i++) {
        const trd_step *s = trd_plan_step(v->plan, r, i);
        if (is_send(s) && s->peer == parent)
            return v->start[at(v, r, i)];
    }
    return NAN;
}

/* A time that may be "none" (NaN: the root's send, a bound that does not
 * apply): JSON null; any other value must be finite (f). */
static json_t *json_time(cli_finite *f, const char *name, double t)
{
    return isnan(t) ? json_null() : cli_json_real(f, name, t);
}

static json_t *steps_json(const plan_view *v, int32_t rank, cli_finite *f)
{
    static const char *kinds[] = {"send", "recv", "combine", "copy", "recv-combine", "send-input"};
    json_t *list = json_array();
    for (size_t i = 0; i < trd_plan_step_count(v->plan, rank); i++) {
        const trd_step *s = trd_plan_step(v->plan, rank, i);
        size_t k = at(v, rank, i);
        json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:[i,i], s:o, s:o}", "kind", kinds[s->kind],
                              "peer", s->peer, "buf", s->buf, "src", s->src, "dep", s->dep[0],
                              s->dep[1], "start", cli_json_real(f, "a step's start", v->start[k]),
                              "end", cli_json_real(f, "a step's end", v->end[k]));
        if (trd_plan_blocks(v->plan) > 1)
            json_object_set_new(o, "block", json_integer(s->block));
        if (s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_RECV_COMBINE)
            json_object_set_new(o, "side", json_string(s->side == TRD_SIDE_LEFT ? "left" : "right"));
        if ((s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT) && s->release > 0)
            json_object_set_new(o, "release", cli_json_real(f, "a release time", s->release));
        json_array_append_new(list, o);
    }
    return list;
}

static int print_json(const plan_view *v)
{
    const trd_plan *plan = v->plan;
    const trd_params *p = trd_plan_params(plan);
    cli_finite f = {0};
    json_t *parent = json_array(), *start = json_array(), *sched = json_array();
    for (int32_t r = 0; r < p->n; r++) {
        json_array_append_new(parent, json_integer(trd_plan_parent(plan, r)));
        json_array_append_new(start, json_time(&f, "a send start", send_start(v, r)));
        json_array_append_new(sched, steps_json(v, r, &f));
    }
    json_t *o = json_pack("{s:s, s:I, s:f, s:f, s:I, s:b, s:o, s:o, s:o, s:s}", "algo",
                          trd_plan_algo(plan), "n", (json_int_t)p->n, "d", p->d, "c", p->c,
                          "root", (json_int_t)p->root, "noncommutative", p->noncommutative,
                          "makespan", cli_json_real(&f, "makespan", trd_plan_makespan(plan)),
                          "lower_bound", cli_json_real(&f, "lower bound",
                                                       trd_plan_lower_bound(plan)),
                          "upper_bound", json_time(&f, "upper bound", trd_plan_upper_bound(plan)),
                          "upper_bound_source", trd_plan_upper_bound_source(plan));
    json_object_set_new(o, "K", p->K > 0 ? json_integer(p->K) : json_null());
    json_object_set_new(o, "heterogeneous", json_boolean(p->costs != NULL));
    json_object_set_new(o, "kind", json_string(trd_collective_name(p->collective)));
    json_object_set_new(o, "allreduce", json_boolean(p->collective == TRD_COLL_ALLREDUCE));
    if (!rooted(p))
        json_object_set_new(o, "root", json_null());
    json_object_set_new(o, "segments", json_integer(trd_plan_blocks(plan)));
    json_object_set_new(o, "parent", parent);
    json_object_set_new(o, "send_start", start);
    json_object_set_new(o, "schedule", sched);
    int st = cli_finite_end("plan", &f, o);
    json_dumpf(o, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
    putchar('\n');
    json_decref(o);
    return st;
}

/* Text and dot print the makespan, the bounds and the send starts: all
 * finite (or NaN for none), else an error instead of the plan. */
static int check_text(const plan_view *v)
{
    const trd_plan *plan = v->plan;
    cli_finite f = {0};
    cli_finite_check(&f, "makespan", trd_plan_makespan(plan));
    cli_finite_check(&f, "lower bound", trd_plan_lower_bound(plan));
    if (!isnan(trd_plan_upper_bound(plan)))
        cli_finite_check(&f, "upper bound", trd_plan_upper_bound(plan));
    for (size_t k = 0; k < trd_plan_total_steps(plan); k++)
        cli_finite_check(&f, "a step's time", v->end[k]);
    return cli_finite_end("plan", &f, NULL);
}

/* The ranks r receives from, each once, in the order of its program. */
static void print_inputs(const trd_plan *plan, int32_t r)
{
    size_t count = trd_plan_step_count(plan, r);
    for (size_t i = 0; i < count; i++) {
        const trd_step *s = trd_plan_step(plan, r, i);
        bool seen = !is_recv(s);
        for (size_t j = 0; j < i && !seen; j++)
            seen = is_recv(trd_plan_step(plan, r, j)) && trd_plan_step(plan, r, j)->peer == s->peer;
        if (!seen)
            printf(" %ld", (long)s->peer);
    }
}

static void print_text(const plan_view *v)
{
    const trd_plan *plan = v->plan;
    const trd_params *p = trd_plan_params(plan);
    size_t index = 0;
    trd_algo_find(trd_plan_algo(plan), &index); /* it planned: it exists */
    printf("%s plan: n = %lld, %s = %g, %s = %g", trd_plan_algo(plan), (long long)p->n,
           p->costs ? "heterogeneous costs, mean d" : "d", p->d, p->costs ? "mean c" : "c",
           p->c);
    if (rooted(p))
        printf(", root %lld%s", (long long)p->root,
               trd_algo_is_dynamic(index) ? " (where its run ended)" : "");
    printf("%s%s%s", p->collective == TRD_COLL_REDUCE ? "" : ", ",
           p->collective == TRD_COLL_REDUCE ? "" : trd_collective_name(p->collective),
           p->noncommutative ? ", non-commutative" : "");
    if (p->K > 0)
        printf(", K = %lld", (long long)p->K);
    if (trd_plan_blocks(plan) > 1)
        printf(", %ld segments", (long)trd_plan_blocks(plan));
    printf("\n  makespan     %g\n  lower bound  %g  (%s%s)\n", trd_plan_makespan(plan),
           trd_plan_lower_bound(plan),
           p->costs ? "heterogeneous: relaxed Alg. 1, paths" : "Lemma 5",
           trd_plan_blocks(plan) > 1 ? ", per block" : "");
    if (isnan(trd_plan_upper_bound(plan)))
        printf("  upper bound  %s\n\n", trd_plan_upper_bound_source(plan));
    else
        printf("  upper bound  %g  (%s)\n\n", trd_plan_upper_bound(plan),
               trd_plan_upper_bound_source(plan));
    printf("%8s %8s %12s  %s\n", "rank", "parent", "send start",
           p->collective != TRD_COLL_REDUCE || trd_plan_blocks(plan) > 1
               ? "receives from, in program order" : "inputs in arrival order");
    for (int32_t r = 0; r < p->n; r++) {
        double t = send_start(v, r);
        char start[32] = "-", parent[16] = "-";
        if (!isnan(t))
            snprintf(start, sizeof start, "%g", t);
        if (trd_plan_parent(plan, r) >= 0 || (rooted(p) && (int64_t)r == p->root))
            snprintf(parent, sizeof parent, "%ld", (long)trd_plan_parent(plan, r));
        printf("%8ld %8s %12s ", (long)r, parent, start);
        print_inputs(plan, r);
        putchar('\n');
    }
}

/* Whether rank r sends to peer before its step i. */
static bool sent_before(const trd_plan *plan, int32_t r, size_t i, int32_t peer)
{
    for (size_t j = 0; j < i; j++)
        if (is_send(trd_plan_step(plan, r, j)) && trd_plan_step(plan, r, j)->peer == peer)
            return true;
    return false;
}

/* A plan without a tree (an exchange): one edge per pair of ranks a
 * message goes between, labelled with the first one's start and, in
 * brackets, how many there are. */
static void print_exchange_edges(const plan_view *v)
{
    const trd_plan *plan = v->plan;
    for (int32_t r = 0; r < trd_plan_params(plan)->n; r++)
        for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
            const trd_step *s = trd_plan_step(plan, r, i);
            if (!is_send(s) || sent_before(plan, r, i, s->peer))
                continue;
            double first = v->start[at(v, r, i)];
            size_t messages = 0;
            for (size_t j = i; j < trd_plan_step_count(plan, r); j++) {
                const trd_step *o = trd_plan_step(plan, r, j);
                if (is_send(o) && o->peer == s->peer) {
                    messages++;
                    first = fmin(first, v->start[at(v, r, j)]);
                }
            }
            printf("  %ld -> %ld [label=\"%g (%zu)\"];\n", (long)r, (long)s->peer, first,
                   messages);
        }
}

/* Graphviz: the tree (child -> parent, labelled with the send start), or
 * the exchange's pairs. */
static void print_dot(const plan_view *v)
{
    const trd_plan *plan = v->plan;
    const trd_params *p = trd_plan_params(plan);
    printf("digraph \"%s\" {\n  label=\"%s plan, n=%lld, d=%g, c=%g, makespan %g\";\n"
           "  rankdir=BT;\n  node [shape=circle];\n",
           trd_plan_algo(plan), trd_plan_algo(plan), (long long)p->n, p->d, p->c,
           trd_plan_makespan(plan));
    if (rooted(p))
        printf("  %lld [style=filled, fillcolor=lightgrey];\n", (long long)p->root);
    bool tree = false;
    for (int32_t r = 0; r < p->n; r++)
        if (trd_plan_parent(plan, r) >= 0) {
            tree = true;
            printf("  %ld -> %ld [label=\"%g\"];\n", (long)r, (long)trd_plan_parent(plan, r),
                   send_start(v, r));
        }
    if (!tree)
        print_exchange_edges(v);
    printf("}\n");
}

/* Parsed command line of `treduce plan`. */
typedef struct plan_args {
    const char *algo;
    const char *gantt;
    enum format format;
    trd_params params;
    cli_kind kind;
    bool have_n;
    const char *costs_file, *preset;
    double slow;
} plan_args;

static int parse_format(const char *text, enum format *out)
{
    static const char *names[] = {"text", "json", "dot"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(text, names[i])) {
            *out = (enum format)i;
            return CLI_OK;
        }
    return cli_usage_error("plan", "invalid --format '%s': use text, json or dot", text);
}

/* Returns -1 to go on, or the exit status (help printed, or an error). */
static int parse_args(int argc, char **argv, plan_args *a)
{
    static const struct option opts[] = {
        {"algo", required_argument, 0, 'a'}, {"d", required_argument, 0, 'd'},
        {"c", required_argument, 0, 'c'},    {"K", required_argument, 0, 'K'},
        {"root", required_argument, 0, 'r'}, {"noncommutative", no_argument, 0, 'N'},
        {"format", required_argument, 0, 'f'}, {"gantt", required_argument, 0, 'g'},
        {"costs", required_argument, 0, 'C'}, {"preset", required_argument, 0, 'p'},
        {"D", required_argument, 0, 'S'},    {"slow", required_argument, 0, 'S'},
        {"allreduce", no_argument, 0, 'A'},  {"kind", required_argument, 0, 'k'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int opt, st;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case 'a': a->algo = optarg; break;
        case 'n': ok = cli_int("plan", "-n", optarg, &a->params.n); a->have_n = true; break;
        case 'd': ok = cli_real("plan", "--d", optarg, &a->params.d); break;
        case 'c': ok = cli_real("plan", "--c", optarg, &a->params.c); break;
        case 'K': ok = cli_int("plan", "--K", optarg, &a->params.K); break;
        case 'r': ok = cli_int("plan", "--root", optarg, &a->params.root);
                  a->kind.root_set = true; break;
        case 'N': a->params.noncommutative = true; break;
        case 'A': if ((st = cli_take_kind("plan", "allreduce", &a->kind)) != CLI_OK) return st;
                  break;
        case 'k': if ((st = cli_take_kind("plan", optarg, &a->kind)) != CLI_OK) return st;
                  break;
        case 'f': if ((st = parse_format(optarg, &a->format)) != CLI_OK) return st; break;
        case 'g': a->gantt = optarg; break;
        case 'C': a->costs_file = optarg; break;
        case 'p': a->preset = optarg; break;
        case 'S': ok = cli_real("plan", "--slow", optarg, &a->slow); break;
        case 'h': help(); return CLI_OK;
        case ':': return cli_usage_error("plan", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("plan", "unknown option '%s'", argv[optind - 1]);
        }
        if (!ok)
            return CLI_USAGE;
    }
    if (optind < argc)
        return cli_usage_error("plan", "unexpected argument '%s'", argv[optind]);
    if (a->costs_file && a->preset)
        return cli_usage_error("plan", "--costs and --preset exclude each other");
    if (!a->have_n && !a->costs_file)
        return cli_usage_error("plan", "missing -n N (the number of ranks)");
    if ((st = cli_kind_root("plan", &a->kind, true)) != CLI_OK)
        return st;
    a->params.collective = a->kind.coll;
    return -1;
}

/* The heterogeneous costs of --costs or --preset (NULL without): the plan
 * reads them, and the other planners get their means as d and c. */
static trd_status make_costs(plan_args *a, trd_costs **out)
{
    trd_status ts = TRD_OK;
    *out = NULL;
    if (a->costs_file && !a->have_n) {
        ts = trd_costs_read(out, a->costs_file); /* n from the file */
    } else if (a->costs_file) {
        ts = trd_costs_create(out, a->params.n, TRD_DIST_CONST, 1.0, 1.0, 0.0);
        if (ts == TRD_OK) /* names the file's n when it is not -n */
            ts = trd_costs_load(*out, a->costs_file);
    } else if (a->preset) {
        ts = trd_costs_create(out, a->params.n, TRD_DIST_CONST, a->params.d, a->params.c, 0.0);
        if (ts == TRD_OK)
            ts = trd_costs_preset(*out, a->preset, a->slow);
    }
    if (ts == TRD_OK && *out) {
        a->params.n = trd_costs_n(*out);
        a->params.costs = *out;
        trd_costs_mean(*out, &a->params.d, &a->params.c);
    }
    return ts;
}

int cmd_plan(int argc, char **argv)
{
    plan_args a = {.algo = "greedy", .format = FORMAT_TEXT, .slow = 2.0};
    trd_params_init(&a.params);
    int st = parse_args(argc, argv, &a);
    if (st >= 0)
        return st;
    trd_plan *plan = NULL;
    trd_costs *costs;
    trd_status ts = make_costs(&a, &costs);
    if (ts == TRD_OK)
        ts = trd_plan_record(&plan, a.algo, &a.params);
    plan_view v = {0};
    if (ts == TRD_OK)
        ts = view_open(&v, plan);
    if (ts != TRD_OK) {
        view_close(&v);
        trd_plan_free(plan);
        trd_costs_free(costs);
        return cli_lib_error("plan", ts);
    }
    if (a.format == FORMAT_JSON)
        st = print_json(&v);
    else if ((st = check_text(&v)) == CLI_OK && a.format == FORMAT_DOT)
        print_dot(&v);
    else if (st == CLI_OK)
        print_text(&v);
    cli_out gantt;
    if (st == CLI_OK && a.gantt)
        st = cli_out_begin("plan", &gantt, NULL, a.gantt)
                 ? cli_out_finish("plan", &gantt, trd_plan_write_gantt(plan, gantt.tmp))
                 : CLI_FAILED;
    view_close(&v);
    trd_plan_free(plan);
    trd_costs_free(costs); /* after the plan, which reads them */
    return st;
}

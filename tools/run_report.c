/* run_report.c: prints what `treduce run` measured (rank 0). */
#include "run.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_text(const cli_run_args *a, int64_t p, size_t bytes, double med, double min,
                       const cli_run_result *res)
{
    printf("%s of ", trd_collective_name(a->kind.coll));
    if (a->parts) { /* uneven: the parts, and bytes is the largest's */
        printf("parts");
        for (int64_t r = 0; r < a->nparts; r++)
            printf("%s%lld", r ? "," : " ", (long long)a->parts[r]);
        printf(" x %s (at most %zu bytes a part)", cli_run_elem_name(a), bytes);
    } else {
        printf("%lld x %s (%zu bytes%s)", (long long)a->count, cli_run_elem_name(a), bytes,
               a->kind.coll == TRD_COLL_REDUCE_SCATTER ? " per part, p parts each" : "");
    }
    printf(" with %s over %lld %s ranks, algorithm %s%s\n", a->op, (long long)p, a->wire,
           res->model.algo, strcmp(a->algo, "auto") ? "" : " (chosen by auto)");
    if (a->explain && res->ncandidates > 0) {
        printf("  auto's candidates (predicted time%s):\n",
               a->tune > 0 ? "; measured: the slowest rank's median of its tuning calls" : "");
        for (size_t i = 0; i < res->ncandidates; i++) {
            const trd_candidate *c = &res->candidates[i];
            if (c->status != TRD_OK)
                printf("    %-20s %15s\n", c->algo, "cannot run this call");
            else if (isnan(c->measured))
                printf("    %-20s %12.1f us\n", c->algo, 1e6 * c->predicted);
            else
                printf("    %-20s %12.1f us   measured %10.1f us\n", c->algo,
                       1e6 * c->predicted, 1e6 * c->measured);
        }
    }
    printf("  model      latency %.3g us (%.3g in flight), transfer d %.3g us (%.0f%% of "
           "its per-byte part saved when combined on arrival), combine c %.3g us, parallelism %.3g%s\n",
           1e6 * res->model.latency, 1e6 * res->model.flight, 1e6 * res->model.d,
           100 * res->model.recv_combine_saving, 1e6 * res->model.c, res->model.parallelism,
           a->model_set ? " (given)" : a->profile_path ? " (from the profile)" : " (measured now)");
    if (isnan(res->predicted))
        printf("  predicted  n/a (the simulation failed)\n");
    else
        printf("  predicted  %10.1f us\n", 1e6 * res->predicted);
    printf("  measured   %10.1f us median, %.1f us min over %lld iterations\n", 1e6 * med,
           1e6 * min, (long long)a->iters);
    if (res->nodes > 0)
        printf("  nodes      %ld (the hosts the ranks are on, learnt from the wire)\n",
               (long)res->nodes);
    printf("  verified   %s\n", res->verified ? "yes: equals the rank-order fold of the inputs"
                                              : "NO: the result differs from the fold");
}

/* auto's candidates that can run the call, fastest first. */
static json_t *candidates_json(const cli_run_result *res, cli_finite *f)
{
    json_t *all = json_array();
    for (size_t i = 0; i < res->ncandidates; i++) {
        const trd_candidate *c = &res->candidates[i];
        if (c->status != TRD_OK)
            continue;
        json_t *one = json_pack("{s:s, s:o}", "algo", c->algo, "predicted_us",
                                cli_json_real(f, "a candidate's predicted_us",
                                              1e6 * c->predicted));
        if (!isnan(c->measured))
            json_object_set_new(one, "measured_us",
                                cli_json_real(f, "a candidate's measured_us", 1e6 * c->measured));
        json_array_append_new(all, one);
    }
    return all;
}

/* The report's numbers (microseconds; NaN predicted: not simulated). */
static json_t *report_json(const cli_run_args *a, int64_t p, size_t bytes, double med,
                           double min, const cli_run_result *res, cli_finite *f)
{
    const trd_coll_opts *m = &res->model;
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:I, s:b, s:I, s:o, s:o, s:o, s:b,"
        " s:{s:o, s:o, s:o, s:o, s:o, s:o, s:b}}",
        "algo", m->algo, "wire", a->wire, "transport", a->wire, "p", (json_int_t)p, "count",
        (json_int_t)a->count, "type", cli_run_elem_name(a), "op", a->op, "bytes",
        (json_int_t)bytes,
        "allreduce", a->kind.coll == TRD_COLL_ALLREDUCE, "iters", (json_int_t)a->iters, "median_us",
        cli_json_real(f, "median_us", 1e6 * med), "min_us", cli_json_real(f, "min_us", 1e6 * min),
        "predicted_us",
        isnan(res->predicted) ? json_null() : cli_json_real(f, "predicted_us", 1e6 * res->predicted),
        "verified", res->verified, "model", "latency_us",
        cli_json_real(f, "latency_us", 1e6 * m->latency), "flight_us",
        cli_json_real(f, "flight_us", 1e6 * m->flight), "d_us", cli_json_real(f, "d_us", 1e6 * m->d),
        "c_us", cli_json_real(f, "c_us", 1e6 * m->c), "recv_combine_saving",
        cli_json_real(f, "recv_combine_saving", m->recv_combine_saving), "parallelism",
        cli_json_real(f, "parallelism", m->parallelism), "given", a->model_set);
    json_object_set_new(o, "kind", json_string(trd_collective_name(a->kind.coll)));
    if (a->parts) { /* count is then the largest part */
        json_t *parts = json_array();
        for (int64_t r = 0; r < a->nparts; r++)
            json_array_append_new(parts, json_integer((json_int_t)a->parts[r]));
        json_object_set_new(o, "parts", parts);
    }
    if (!strcmp(a->algo, "auto"))
        json_object_set_new(o, "chosen_by", json_string("auto"));
    json_object_set_new(o, "shm_max_bytes", json_integer((json_int_t)res->shm_max));
    if (res->nodes > 0)
        json_object_set_new(o, "nodes", json_integer((json_int_t)res->nodes));
    if (a->explain)
        json_object_set_new(o, "candidates", candidates_json(res, f));
    return o;
}

/* A profile measured on another rank count: its latency and bandwidth are
 * still this machine's, its parallelism may not be (cmd_run.c refuses
 * other mismatches). */
static void warn_profile(const cli_run_args *a, int64_t p)
{
    if (a->profile_path && a->profile_meta.p != p)
        fprintf(stderr, "treduce run: warning: profile %s was measured on %ld ranks, this run "
                "has %lld: its parallelism (%g) may not hold (treduce calibrate -p %lld "
                "--out FILE measures this one)\n", a->profile_path, (long)a->profile_meta.p,
                (long long)p, a->profile.parallelism, (long long)p);
}

int cli_run_report(const cli_run_args *a, int64_t p, const cli_run_result *res)
{
    if (res->status != TRD_OK) {
        fprintf(stderr, "treduce run: %s\n", res->error[0] ? res->error
                                                          : trd_strerror(res->status));
        return res->status == TRD_EINVAL || res->status == TRD_ENOALGO ||
                       res->status == TRD_EUNSUPPORTED
                   ? CLI_USAGE : CLI_FAILED;
    }
    warn_profile(a, p);
    double *t = malloc((size_t)a->iters * sizeof *t);
    if (!t) {
        fprintf(stderr, "treduce run: out of memory for %lld times\n", (long long)a->iters);
        return CLI_FAILED;
    }
    for (int64_t k = 0; k < a->iters; k++)
        t[k] = res->times[k];
    cli_sort(t, (size_t)a->iters);
    double med = t[a->iters / 2], min = t[0];
    free(t);
    trd_op *op = NULL;
    size_t bytes = cli_run_make_op(a, &op) == TRD_OK ? (size_t)a->count * trd_op_elem_size(op) : 0;
    trd_op_free(op);
    cli_finite f = {0};
    json_t *o = report_json(a, p, bytes, med, min, res, &f);
    int st = cli_finite_end("run", &f, o);
    if (a->json) {
        json_dumpf(o, stdout, JSON_INDENT(2));
        putchar('\n');
    } else if (st == CLI_OK) {
        print_text(a, p, bytes, med, min, res);
    }
    json_decref(o);
    return st != CLI_OK ? st : res->verified ? CLI_OK : CLI_FAILED;
}

/* output_json.c: a steady-state result as one JSON object (keys in
 * docs/STEADY.md).  Exact numbers are strings ("2/9"); integers per period
 * are JSON integers, or decimal strings beyond 64 bits.  A small writer of
 * its own, since the library does not link a JSON library. */
#include <stdlib.h>

#include "core/error.h"
#include "steady/check.h"

#define DEPTH_MAX 16

typedef struct jw {
    FILE *out;
    int depth;
    bool comma[DEPTH_MAX]; /* an element was written at this depth */
} jw;

static void raw_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

/* The separator and key of the next element (key NULL inside arrays). */
static void key(jw *w, const char *k)
{
    if (w->comma[w->depth])
        fputc(',', w->out);
    if (w->depth == 1)
        fputs("\n  ", w->out);
    w->comma[w->depth] = true;
    if (k != NULL) {
        raw_string(w->out, k);
        fputc(':', w->out);
    }
}

static void open_(jw *w, const char *k, char c)
{
    key(w, k);
    fputc(c, w->out);
    w->comma[++w->depth] = false;
}

static void close_(jw *w, char c)
{
    if (--w->depth == 0)
        fputc('\n', w->out);
    fputc(c, w->out);
}

static void str(jw *w, const char *k, const char *v)
{
    key(w, k);
    raw_string(w->out, v);
}

static void num(jw *w, const char *k, long long v)
{
    key(w, k);
    fprintf(w->out, "%lld", v);
}

static void q(jw *w, const char *k, mpq_srcptr v)
{
    key(w, k);
    gmp_fprintf(w->out, "\"%Qd\"", v);
}

/* An integer: a JSON number when it fits in a 64-bit long, else a string. */
static void z(jw *w, const char *k, mpz_srcptr v)
{
    key(w, k);
    gmp_fprintf(w->out, mpz_fits_slong_p(v) ? "%Zd" : "\"%Zd\"", v);
}

static void message(jw *w, const trd_steady *st, const trd_platform *pf, int32_t type)
{
    char name[128];
    trd_sd_type_name(st, pf, type, name, sizeof name);
    str(w, "message", name);
}

static void members(jw *w, const trd_steady *st, const trd_platform *pf)
{
    bool scatter = st->problem == TRD_STEADY_SCATTER;
    str(w, "problem", trd_steady_problem_name(st->problem));
    if (st->root >= 0)
        str(w, scatter ? "source" : "target", pf->nodes[st->root].name);
    open_(w, scatter ? "targets" : "participants", '[');
    for (int32_t i = 0; i < st->n_members; i++)
        str(w, NULL, pf->nodes[st->members[i]].name);
    close_(w, ']');
    key(w, "reachable");
    fputs(st->reachable ? "true" : "false", w->out);
    if (!st->reachable)
        str(w, "unreachable", st->unreachable);
    q(w, "throughput", st->throughput);
    key(w, "throughput_float");
    fprintf(w->out, "%.17g", mpq_get_d(st->throughput));
    z(w, "period", st->period);
    open_(w, "lp", '{');
    num(w, "rows", st->lp_rows);
    num(w, "columns", st->lp_cols);
    close_(w, '}');
}

static void solution(jw *w, const trd_steady *st, const trd_platform *pf)
{
    open_(w, "sends", '[');
    for (int32_t s = 0; s < st->n_sends; s++) {
        const trd_sd_send *sd = &st->sends[s];
        open_(w, NULL, '{');
        str(w, "from", pf->nodes[sd->from].name);
        str(w, "to", pf->nodes[sd->to].name);
        message(w, st, pf, sd->type);
        q(w, "rate", sd->rate);
        z(w, "per_period", sd->count);
        close_(w, '}');
    }
    close_(w, ']');
    open_(w, "computations", '[');
    for (int32_t c = 0; c < st->n_comps; c++) {
        const trd_sd_comp *cp = &st->comps[c];
        open_(w, NULL, '{');
        str(w, "node", pf->nodes[cp->node].name);
        num(w, "k", cp->k);
        num(w, "l", cp->l);
        num(w, "m", cp->m);
        q(w, "rate", cp->rate);
        z(w, "per_period", cp->count);
        close_(w, '}');
    }
    close_(w, ']');
}

/* "nodes" and "links" with their busy time per time unit. */
static trd_status usage(jw *w, const trd_steady *st, const trd_platform *pf)
{
    size_t n = (size_t)pf->n_nodes;
    mpq_t *use = trd_sd_qvec(3 * n + (size_t)pf->n_links);
    if (use == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory");
    trd_sd_usage(st, pf, use);
    open_(w, "nodes", '[');
    for (size_t i = 0; i < n; i++) {
        open_(w, NULL, '{');
        str(w, "name", pf->nodes[i].name);
        key(w, "router");
        fputs(pf->nodes[i].router ? "true" : "false", w->out);
        q(w, "send", use[i]);
        q(w, "receive", use[n + i]);
        q(w, "compute", use[2 * n + i]);
        close_(w, '}');
    }
    close_(w, ']');
    open_(w, "links", '[');
    for (int32_t e = 0; e < pf->n_links; e++) {
        open_(w, NULL, '{');
        str(w, "from", pf->nodes[pf->links[e].from].name);
        str(w, "to", pf->nodes[pf->links[e].to].name);
        q(w, "cost", pf->links[e].cost);
        q(w, "usage", use[3 * n + (size_t)e]);
        close_(w, '}');
    }
    close_(w, ']');
    trd_sd_qvec_free(use, 3 * n + (size_t)pf->n_links);
    return TRD_OK;
}

static void tree(jw *w, const trd_steady *st, const trd_platform *pf, const trd_sd_tree *tr)
{
    mpq_t share;
    mpq_init(share);
    mpq_set_z(share, tr->weight);
    mpz_set(mpq_denref(share), st->period);
    mpq_canonicalize(share);
    open_(w, NULL, '{');
    z(w, "weight", tr->weight);
    q(w, "throughput", share);
    if (st->fixed_period)
        z(w, "fixed_weight", tr->fixed);
    open_(w, "tasks", '[');
    for (int32_t c = 0; c < tr->n_tasks; c++) {
        open_(w, NULL, '{');
        str(w, "node", pf->nodes[tr->tasks[c].node].name);
        num(w, "k", tr->tasks[c].k);
        num(w, "l", tr->tasks[c].l);
        num(w, "m", tr->tasks[c].m);
        close_(w, '}');
    }
    close_(w, ']');
    open_(w, "transfers", '[');
    for (int32_t h = 0; h < tr->n_hops; h++) {
        open_(w, NULL, '{');
        str(w, "from", pf->nodes[tr->hops[h].from].name);
        str(w, "to", pf->nodes[tr->hops[h].to].name);
        message(w, st, pf, tr->hops[h].type);
        close_(w, '}');
    }
    close_(w, ']');
    close_(w, '}');
    mpq_clear(share);
}

static void matchings(jw *w, const trd_steady *st, const trd_platform *pf,
                      const trd_matchings *ms)
{
    open_(w, "matchings", '[');
    for (int32_t i = 0; i < ms->count; i++) {
        open_(w, NULL, '{');
        q(w, "duration", ms->list[i].duration);
        open_(w, "transfers", '[');
        for (int32_t x = 0; x < ms->list[i].count; x++) {
            const trd_xfer *xf = &ms->list[i].xfers[x];
            open_(w, NULL, '{');
            str(w, "from", pf->nodes[xf->from].name);
            str(w, "to", pf->nodes[xf->to].name);
            message(w, st, pf, xf->label);
            q(w, "amount", xf->amount);
            q(w, "duration", xf->duration);
            close_(w, '}');
        }
        close_(w, ']');
        close_(w, '}');
    }
    close_(w, ']');
    q(w, "matchings_total", ms->total);
}

static void fixed(jw *w, const trd_steady *st, const trd_platform *pf)
{
    open_(w, "fixed_period", '{');
    num(w, "period", st->fixed_period);
    q(w, "throughput", st->fixed_throughput);
    key(w, "throughput_float");
    fprintf(w->out, "%.17g", mpq_get_d(st->fixed_throughput));
    q(w, "loss", st->fixed_loss);
    q(w, "loss_bound", st->fixed_bound);
    matchings(w, st, pf, &st->fixed_matchings);
    close_(w, '}');
}

trd_status trd_sd_write_json(const trd_steady *st, const trd_platform *pf, FILE *out)
{
    jw w = {.out = out};
    open_(&w, NULL, '{');
    members(&w, st, pf);
    if (st->problem == TRD_STEADY_REDUCE)
        q(&w, "task_size", st->task_size);
    solution(&w, st, pf);
    trd_status r = usage(&w, st, pf);
    open_(&w, "trees", '[');
    for (int32_t i = 0; i < st->n_trees; i++)
        tree(&w, st, pf, &st->trees[i]);
    close_(&w, ']');
    matchings(&w, st, pf, &st->matchings);
    if (st->fixed_period)
        fixed(&w, st, pf);
    close_(&w, '}');
    fputc('\n', out);
    return r;
}

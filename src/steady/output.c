/* output.c: the readable summary and the Graphviz view of a steady-state
 * result (the JSON form is output_json.c; formats in docs/STEADY.md). */
#include <stdlib.h>

#include "core/error.h"
#include "steady/check.h"

void trd_sd_usage(const trd_steady *st, const trd_platform *pf, mpq_t *use)
{
    size_t n = (size_t)pf->n_nodes;
    mpq_t busy;
    mpq_init(busy);
    for (int32_t s = 0; s < st->n_sends; s++) {
        const trd_sd_send *sd = &st->sends[s];
        mpq_mul(busy, sd->rate, st->types[sd->type].size);
        mpq_mul(busy, busy, pf->links[sd->link].cost);
        mpq_add(use[sd->from], use[sd->from], busy);
        mpq_add(use[n + (size_t)sd->to], use[n + (size_t)sd->to], busy);
        mpq_add(use[3 * n + (size_t)sd->link], use[3 * n + (size_t)sd->link], busy);
    }
    for (int32_t c = 0; c < st->n_comps; c++) {
        const trd_sd_comp *cp = &st->comps[c];
        mpq_mul(busy, cp->rate, st->task_size);
        mpq_div(busy, busy, pf->nodes[cp->node].speed);
        mpq_add(use[2 * n + (size_t)cp->node], use[2 * n + (size_t)cp->node], busy);
    }
    mpq_clear(busy);
}

/* "Series of Reduces ... " heading: problem, root, members. */
static void text_heading(const trd_steady *st, const trd_platform *pf, FILE *out)
{
    static const char *const title[] = {"Series of Scatters", "Series of Gossips",
                                        "Series of Reduces"};
    fprintf(out, "%s", title[st->problem]);
    if (st->problem == TRD_STEADY_SCATTER)
        fprintf(out, " from %s to", pf->nodes[st->root].name);
    else if (st->problem == TRD_STEADY_REDUCE)
        fprintf(out, " to %s of", pf->nodes[st->root].name);
    else
        fprintf(out, " between");
    for (int32_t i = 0; i < st->n_members; i++)
        fprintf(out, " %s", pf->nodes[st->members[i]].name);
    if (st->problem == TRD_STEADY_REDUCE)
        fprintf(out, " (v0 ⊕ ... ⊕ v%d in this order)", (int)(st->n_members - 1));
    fprintf(out, "\n");
}

static void text_solution(const trd_steady *st, const trd_platform *pf, FILE *out)
{
    char name[128];
    fprintf(out, "per time unit:\n");
    for (int32_t s = 0; s < st->n_sends; s++) {
        const trd_sd_send *sd = &st->sends[s];
        trd_sd_type_name(st, pf, sd->type, name, sizeof name);
        gmp_fprintf(out, "  send %s -> %s  %s  %Qd\n", pf->nodes[sd->from].name,
                    pf->nodes[sd->to].name, name, sd->rate);
    }
    for (int32_t c = 0; c < st->n_comps; c++) {
        const trd_sd_comp *cp = &st->comps[c];
        gmp_fprintf(out, "  compute on %s  T[%d,%d,%d]  %Qd\n", pf->nodes[cp->node].name,
                    (int)cp->k, (int)cp->l, (int)cp->m, cp->rate);
    }
}

static void text_trees(const trd_steady *st, const trd_platform *pf, FILE *out)
{
    char name[128];
    fprintf(out, "trees (%d, Fig. 8): weight per period\n", (int)st->n_trees);
    for (int32_t i = 0; i < st->n_trees; i++) {
        const trd_sd_tree *tr = &st->trees[i];
        gmp_fprintf(out, "  tree %d: weight %Zd\n", (int)i, tr->weight);
        for (int32_t c = 0; c < tr->n_tasks; c++)
            fprintf(out, "    compute T[%d,%d,%d] on %s\n", (int)tr->tasks[c].k,
                    (int)tr->tasks[c].l, (int)tr->tasks[c].m, pf->nodes[tr->tasks[c].node].name);
        for (int32_t h = 0; h < tr->n_hops; h++) {
            trd_sd_type_name(st, pf, tr->hops[h].type, name, sizeof name);
            fprintf(out, "    send %s %s -> %s\n", name, pf->nodes[tr->hops[h].from].name,
                    pf->nodes[tr->hops[h].to].name);
        }
    }
}

static void text_matchings(const trd_steady *st, const trd_platform *pf,
                           const trd_matchings *ms, FILE *out)
{
    char name[128];
    for (int32_t i = 0; i < ms->count; i++) {
        const trd_matching *m = &ms->list[i];
        gmp_fprintf(out, "  matching %d, duration %Qd:", (int)i, m->duration);
        for (int32_t x = 0; x < m->count; x++) {
            trd_sd_type_name(st, pf, m->xfers[x].label, name, sizeof name);
            gmp_fprintf(out, " %s->%s %s x %Qd;", pf->nodes[m->xfers[x].from].name,
                        pf->nodes[m->xfers[x].to].name, name, m->xfers[x].amount);
        }
        fprintf(out, "\n");
    }
}

static void text_fixed(const trd_steady *st, const trd_platform *pf, FILE *out)
{
    gmp_fprintf(out, "fixed period %lld (Prop. 4): throughput %Qd (%.6g), loss %Qd "
                "<= bound card(Trees)/T_fixed = %Qd\n", (long long)st->fixed_period,
                st->fixed_throughput, mpq_get_d(st->fixed_throughput), st->fixed_loss,
                st->fixed_bound);
    for (int32_t i = 0; i < st->n_trees; i++)
        gmp_fprintf(out, "  tree %d: r = %Zd\n", (int)i, st->trees[i].fixed);
    gmp_fprintf(out, "matchings of the fixed period (%d, total %Qd):\n",
                (int)st->fixed_matchings.count, st->fixed_matchings.total);
    text_matchings(st, pf, &st->fixed_matchings, out);
}

trd_status trd_sd_write_text(const trd_steady *st, const trd_platform *pf, FILE *out)
{
    text_heading(st, pf, out);
    if (!st->reachable)
        fprintf(out, "throughput 0: no schedule exists because %s\n", st->unreachable);
    else
        gmp_fprintf(out, "throughput %Qd (%.6g operations per time unit), period %Zd\n"
                    "linear program: %d rows, %d columns\n", st->throughput,
                    mpq_get_d(st->throughput), st->period, (int)st->lp_rows, (int)st->lp_cols);
    if (!st->reachable)
        return TRD_OK;
    text_solution(st, pf, out);
    text_trees(st, pf, out);
    gmp_fprintf(out, "matchings of one period (%d, total %Qd <= period %Zd):\n",
                (int)st->matchings.count, st->matchings.total, st->period);
    text_matchings(st, pf, &st->matchings, out);
    if (st->fixed_period)
        text_fixed(st, pf, out);
    return TRD_OK;
}

/* A name inside a Graphviz double-quoted string (without the quotes). */
static void dot_text(FILE *out, const char *name)
{
    for (; *name; name++) {
        if (*name == '"' || *name == '\\')
            fputc('\\', out);
        fputc(*name, out);
    }
}

static void dot_node(FILE *out, const trd_platform *pf, size_t i, mpq_srcptr computes)
{
    fprintf(out, "  \"");
    dot_text(out, pf->nodes[i].name);
    fprintf(out, "\" [label=\"");
    dot_text(out, pf->nodes[i].name);
    if (pf->nodes[i].router)
        fprintf(out, "\", shape=box];\n");
    else if (mpq_sgn(pf->nodes[i].speed) == 0) /* its file gives no speed */
        fprintf(out, "\"];\n");
    else
        gmp_fprintf(out, "\\nspeed %Qd\\ncomputes %Qd\"];\n", pf->nodes[i].speed, computes);
}

trd_status trd_sd_write_dot(const trd_steady *st, const trd_platform *pf, FILE *out)
{
    size_t n = (size_t)pf->n_nodes;
    mpq_t *use = trd_sd_qvec(3 * n + (size_t)pf->n_links);
    if (use == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory");
    trd_sd_usage(st, pf, use);
    gmp_fprintf(out, "digraph steady {\n  label=\"%s: throughput %Qd, period %Zd; "
                "links: cost / busy time per time unit\";\n",
                trd_steady_problem_name(st->problem), st->throughput, st->period);
    for (size_t i = 0; i < n; i++)
        dot_node(out, pf, i, use[2 * n + i]);
    for (int32_t e = 0; e < pf->n_links; e++) {
        mpq_srcptr u = use[3 * n + (size_t)e];
        fprintf(out, "  \"");
        dot_text(out, pf->nodes[pf->links[e].from].name);
        fprintf(out, "\" -> \"");
        dot_text(out, pf->nodes[pf->links[e].to].name);
        fprintf(out, "\"");
        gmp_fprintf(out, " [label=\"%Qd / %Qd\"%s];\n", pf->links[e].cost, u,
                    mpq_sgn(u) ? ", penwidth=2, color=blue" : ", style=dashed, color=gray");
    }
    fprintf(out, "}\n");
    trd_sd_qvec_free(use, 3 * n + (size_t)pf->n_links);
    return TRD_OK;
}

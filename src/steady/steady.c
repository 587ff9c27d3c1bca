/* steady.c: the public API of include/treduce/steady.h -- checks the
 * request, runs the pipeline and answers the accessors:
 *
 *   types (scatter.c, gossip.c, reduce.c) -> LP (build.c, reduce.c, lp.c)
 *   -> solution without send cycles (solution.c) -> period and integer
 *   counts (period.c) -> trees (trees.c, Fig. 8) -> matchings (schedule.c)
 *   -> Prop. 4 (period.c, schedule.c) -> independent check (check*.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "steady/steady_internal.h"

/* Largest (nodes x message types) table a problem may need. */
#define CELLS_MAX 50000000

static const char *const problem_names[] = {"scatter", "gossip", "reduce"};

void trd_steady_spec_init(trd_steady_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->problem = TRD_STEADY_REDUCE;
    spec->root = -1;
}

const char *trd_steady_problem_name(trd_steady_problem problem)
{
    return (unsigned)problem < 3 ? problem_names[problem] : "unknown";
}

trd_status trd_steady_problem_parse(const char *name, trd_steady_problem *out)
{
    for (int i = 0; name != NULL && out != NULL && i < 3; i++)
        if (!strcmp(name, problem_names[i])) {
            *out = (trd_steady_problem)i;
            return TRD_OK;
        }
    return trd_fail(TRD_EINVAL, "unknown steady-state problem '%s': scatter, gossip or reduce",
                    name ? name : "(null)");
}

/* A node given as `role` exists and computes. */
static trd_status node_ok(const trd_platform *pf, int32_t node, const char *role)
{
    if (node < 0 || node >= pf->n_nodes)
        return trd_fail(TRD_EINVAL, "%s: node %d does not exist (the platform has %d)", role,
                        (int)node, (int)pf->n_nodes);
    if (pf->nodes[node].router)
        return trd_fail(TRD_EINVAL, "%s '%s' is a router: routers forward messages but take "
                        "part in no operation", role, pf->nodes[node].name);
    return TRD_OK;
}

static trd_status check_spec(const trd_platform *pf, const trd_steady_spec *spec)
{
    if (pf == NULL || spec == NULL)
        return trd_fail(TRD_EINVAL, "trd_steady_solve: NULL platform or spec");
    if ((unsigned)spec->problem > TRD_STEADY_REDUCE)
        return trd_fail(TRD_EINVAL, "unknown steady-state problem %d", (int)spec->problem);
    if (spec->n_members < 0 || (spec->n_members > 0 && spec->members == NULL))
        return trd_fail(TRD_EINVAL, "bad member list (%d members)", (int)spec->n_members);
    if (spec->fixed_period < 0 || spec->fixed_period > LONG_MAX)
        return trd_fail(TRD_EINVAL, "fixed period %lld: must be a positive integer",
                        (long long)spec->fixed_period);
    if (spec->problem != TRD_STEADY_REDUCE &&
        (spec->message_size || spec->task_size || spec->n_sizes))
        return trd_fail(TRD_EINVAL, "message and task sizes apply to reduces only (%s messages "
                        "have size 1)", trd_steady_problem_name(spec->problem));
    if (spec->n_sizes < 0 || (spec->n_sizes > 0 && spec->sizes == NULL))
        return trd_fail(TRD_EINVAL, "bad size list (%d sizes)", (int)spec->n_sizes);
    if (spec->problem == TRD_STEADY_REDUCE)
        for (int32_t i = 0; i < pf->n_nodes; i++)
            if (!pf->nodes[i].router && mpq_sgn(pf->nodes[i].speed) == 0)
                return trd_fail(TRD_EINVAL, "node '%s' gives no speed: a reduce may compute "
                                "on every node that is not a router (give it a \"speed\", or "
                                "make it a router)", pf->nodes[i].name);
    if (spec->problem == TRD_STEADY_GOSSIP)
        return TRD_OK;
    return node_ok(pf, spec->root, spec->problem == TRD_STEADY_SCATTER ? "source" : "target");
}

int64_t trd_sd_type_count(trd_steady_problem problem, int64_t members)
{
    switch (problem) {
    case TRD_STEADY_SCATTER: return members;
    case TRD_STEADY_GOSSIP: return members * (members - 1);
    default: return members * (members + 1) / 2;
    }
}

/* The problem's (message types x nodes) table within CELLS_MAX for
 * `members` participants: checked before anything of that size is
 * allocated or scanned (a gossip of 400 000 nodes has 1.6e11 types). */
static trd_status check_size(const trd_steady *st, int64_t members)
{
    double cells = (double)trd_sd_type_count(st->problem, members) * (double)st->n_nodes;
    if (cells > CELLS_MAX)
        return trd_fail(TRD_ENOMEM, "problem too large: a %s of %lld %s on %d nodes needs "
                        "%.3g (message type, node) cells, more than %d",
                        trd_steady_problem_name(st->problem), (long long)members,
                        st->problem == TRD_STEADY_SCATTER ? "targets" : "participants",
                        (int)st->n_nodes, cells, CELLS_MAX);
    return TRD_OK;
}

/* Whether node i of pf is a member when the spec lists none. */
static bool default_member(const trd_platform *pf, const trd_steady_spec *s, int32_t i)
{
    return !pf->nodes[i].router && !(s->problem == TRD_STEADY_SCATTER && i == s->root);
}

/* st->members from the spec, or every computing node (not the source);
 * the size is checked first, and duplicates are found with one flag per
 * node: linear in the nodes and the list. */
static trd_status take_members(trd_steady *st, const trd_platform *pf, const trd_steady_spec *s)
{
    const char *role = s->problem == TRD_STEADY_SCATTER ? "target" : "participant";
    int32_t n = s->n_members;
    for (int32_t i = 0; !s->n_members && i < pf->n_nodes; i++)
        n += default_member(pf, s, i);
    trd_status r = check_size(st, n);
    if (r != TRD_OK)
        return r;
    st->members = malloc(((size_t)n + 1) * sizeof *st->members);
    uint8_t *listed = calloc((size_t)pf->n_nodes + 1, 1);
    if (st->members == NULL || listed == NULL) {
        free(listed);
        return trd_fail(TRD_ENOMEM, "out of memory for %d members", (int)n);
    }
    for (int32_t i = 0; r == TRD_OK && i < (s->n_members ? s->n_members : pf->n_nodes); i++) {
        int32_t node = s->n_members ? s->members[i] : i;
        if (!s->n_members && !default_member(pf, s, i))
            continue;
        r = node_ok(pf, node, role);
        if (r == TRD_OK && listed[node])
            r = trd_fail(TRD_EINVAL, "%s '%s' is listed twice", role, pf->nodes[node].name);
        if (r == TRD_OK && s->problem == TRD_STEADY_SCATTER && node == s->root)
            r = trd_fail(TRD_EINVAL, "the source '%s' cannot be a target",
                         pf->nodes[node].name);
        if (r == TRD_OK) {
            listed[node] = 1;
            st->members[st->n_members++] = node;
        }
    }
    free(listed);
    if (r != TRD_OK)
        return r;
    int32_t need = s->problem == TRD_STEADY_SCATTER ? 1 : 2;
    if (st->n_members < need)
        return trd_fail(TRD_EINVAL, "a %s needs at least %d %s%s (got %d)",
                        trd_steady_problem_name(s->problem), (int)need, role, need > 1 ? "s" : "",
                        (int)st->n_members);
    return TRD_OK;
}

trd_status trd_sd_types_alloc(trd_steady *st)
{
    int64_t count = trd_sd_type_count(st->problem, st->n_members);
    trd_status r = check_size(st, st->n_members);
    if (r != TRD_OK)
        return r;
    st->types = calloc((size_t)count + 1, sizeof *st->types);
    if (st->types == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for %lld message types", (long long)count);
    for (int64_t t = 0; t < count; t++) {
        mpq_init(st->types[t].size);
        mpq_set_ui(st->types[t].size, 1, 1);
        st->types[t].leaf = st->types[t].sink = -1;
    }
    st->n_types = (int32_t)count;
    return TRD_OK;
}

void trd_sd_type_name(const trd_steady *st, const trd_platform *pf, int32_t type, char *buf,
                      size_t size)
{
    const trd_sd_type *ty = &st->types[type];
    if (st->problem == TRD_STEADY_REDUCE)
        snprintf(buf, size, "v[%d,%d]", (int)ty->k, (int)ty->m);
    else if (st->problem == TRD_STEADY_GOSSIP)
        snprintf(buf, size, "m[%s,%s]", pf->nodes[st->members[ty->k]].name,
                 pf->nodes[st->members[ty->m]].name);
    else
        snprintf(buf, size, "m[%s]", pf->nodes[st->members[ty->m]].name);
}

static trd_steady *steady_new(const trd_platform *pf, const trd_steady_spec *spec)
{
    trd_steady *st = calloc(1, sizeof *st);
    if (st == NULL)
        return NULL;
    st->problem = spec->problem;
    st->n_nodes = pf->n_nodes;
    st->n_links = pf->n_links;
    st->root = spec->problem == TRD_STEADY_GOSSIP ? -1 : spec->root;
    mpq_inits(st->task_size, st->throughput, st->fixed_throughput, st->fixed_loss,
              st->fixed_bound, st->matchings.total, st->fixed_matchings.total, NULL);
    mpq_set_ui(st->task_size, 1, 1);
    mpz_init_set_ui(st->period, 1);
    return st;
}

void trd_steady_free(trd_steady *st)
{
    if (st == NULL)
        return;
    for (int32_t t = 0; t < st->n_types; t++)
        mpq_clear(st->types[t].size);
    for (int32_t s = 0; s < st->n_sends; s++) {
        mpq_clear(st->sends[s].rate);
        mpz_clear(st->sends[s].count);
    }
    for (int32_t c = 0; c < st->n_comps; c++) {
        mpq_clear(st->comps[c].rate);
        mpz_clear(st->comps[c].count);
    }
    for (int32_t i = 0; i < st->n_trees; i++) {
        mpz_clears(st->trees[i].weight, st->trees[i].fixed, NULL);
        free(st->trees[i].tasks);
        free(st->trees[i].hops);
    }
    trd_matchings_free(&st->matchings);
    trd_matchings_free(&st->fixed_matchings);
    mpq_clears(st->task_size, st->throughput, st->fixed_throughput, st->fixed_loss,
               st->fixed_bound, NULL);
    mpz_clear(st->period);
    free(st->members);
    free(st->types);
    free(st->type_of);
    free(st->unreachable);
    free(st->sends);
    free(st->comps);
    free(st->trees);
    free(st->throughput_str);
    free(st->period_str);
    free(st->fixed_str);
    free(st);
}

/* The matchings of the trees (w(T) or r(T) times each) into *slot. */
static trd_status matchings_into(trd_steady *st, const trd_platform *pf, bool fixed,
                                 trd_matchings *slot)
{
    trd_matchings m;
    trd_status r = trd_sd_build_matchings(st, pf, fixed, &m);
    if (r == TRD_OK) {
        trd_matchings_free(slot);
        *slot = m;
    }
    return r;
}

static trd_status make_types(trd_steady *st, const trd_steady_spec *spec)
{
    switch (st->problem) {
    case TRD_STEADY_SCATTER: return trd_sd_scatter_types(st);
    case TRD_STEADY_GOSSIP: return trd_sd_gossip_types(st);
    default: return trd_sd_reduce_types(st, spec);
    }
}

/* The independent checks of check.c and check_trees.c. */
static trd_status check_all(const trd_steady *st, const trd_platform *pf)
{
    trd_status r;
    if ((r = trd_sd_check_solution(st, pf)) != TRD_OK ||
        (r = trd_sd_check_trees(st, pf)) != TRD_OK ||
        (r = trd_sd_check_matchings(st, pf, false)) != TRD_OK)
        return r;
    return st->fixed_period ? trd_sd_check_matchings(st, pf, true) : TRD_OK;
}

/* Decimal text of q (integers without "/1"), or NULL. */
static char *q_text(const mpq_t q)
{
    char *text = malloc(mpz_sizeinbase(mpq_numref(q), 10) + mpz_sizeinbase(mpq_denref(q), 10) + 3);
    return text ? mpq_get_str(text, 10, q) : NULL;
}

static trd_status keep_texts(trd_steady *st)
{
    mpq_t period;
    mpq_init(period);
    mpq_set_z(period, st->period);
    st->throughput_str = q_text(st->throughput);
    st->period_str = q_text(period);
    st->fixed_str = st->fixed_period ? q_text(st->fixed_throughput) : NULL;
    mpq_clear(period);
    if (!st->throughput_str || !st->period_str || (st->fixed_period && !st->fixed_str))
        return trd_fail(TRD_ENOMEM, "out of memory");
    return TRD_OK;
}

static trd_status pipeline(trd_steady *st, const trd_platform *pf, const trd_steady_spec *spec)
{
    trd_status r;
    if ((r = take_members(st, pf, spec)) != TRD_OK || (r = make_types(st, spec)) != TRD_OK ||
        (r = trd_sd_solve_lp(st, pf)) != TRD_OK || (r = trd_sd_cancel_cycles(st)) != TRD_OK)
        return r;
    trd_sd_set_period(st);
    if ((r = trd_sd_extract_trees(st)) != TRD_OK ||
        (r = matchings_into(st, pf, false, &st->matchings)) != TRD_OK)
        return r;
    if (spec->fixed_period > 0) {
        trd_sd_fixed_period(st, spec->fixed_period);
        if ((r = matchings_into(st, pf, true, &st->fixed_matchings)) != TRD_OK)
            return r;
    }
    if ((r = check_all(st, pf)) != TRD_OK)
        return r;
    return keep_texts(st);
}

trd_status trd_steady_solve(const trd_platform *pf, const trd_steady_spec *spec,
                            trd_steady **out)
{
    if (out == NULL)
        return trd_fail(TRD_EINVAL, "trd_steady_solve: out is NULL");
    *out = NULL;
    trd_status r = check_spec(pf, spec);
    if (r != TRD_OK)
        return r;
    trd_steady *st = steady_new(pf, spec);
    if (st == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory");
    if ((r = pipeline(st, pf, spec)) != TRD_OK) {
        trd_steady_free(st);
        return r;
    }
    *out = st;
    return TRD_OK;
}

bool trd_steady_reachable(const trd_steady *st)
{
    return st->reachable;
}

const char *trd_steady_unreachable(const trd_steady *st)
{
    return st->unreachable ? st->unreachable : "";
}

const char *trd_steady_throughput(const trd_steady *st)
{
    return st->throughput_str;
}

double trd_steady_throughput_double(const trd_steady *st)
{
    return mpq_get_d(st->throughput);
}

const char *trd_steady_period(const trd_steady *st)
{
    return st->period_str;
}

trd_status trd_steady_period_int64(const trd_steady *st, int64_t *out)
{
    if (!mpz_fits_slong_p(st->period) || sizeof(long) < sizeof(int64_t))
        return trd_fail(TRD_EUNSUPPORTED, "period %s does not fit in 64 bits", st->period_str);
    *out = (int64_t)mpz_get_si(st->period);
    return TRD_OK;
}

int32_t trd_steady_tree_count(const trd_steady *st)
{
    return st->n_trees;
}

int32_t trd_steady_matching_count(const trd_steady *st)
{
    return st->matchings.count;
}

void trd_steady_lp_size(const trd_steady *st, int32_t *rows, int32_t *columns)
{
    *rows = st->lp_rows;
    *columns = st->lp_cols;
}

const char *trd_steady_fixed_throughput(const trd_steady *st)
{
    return st->fixed_str;
}

trd_status trd_steady_write(const trd_steady *st, const trd_platform *pf,
                            trd_steady_format format, FILE *out)
{
    if (st == NULL || pf == NULL || out == NULL)
        return trd_fail(TRD_EINVAL, "trd_steady_write: NULL argument");
    if (pf->n_nodes != st->n_nodes || pf->n_links != st->n_links)
        return trd_fail(TRD_EINVAL, "trd_steady_write: not the platform the problem was solved on");
    trd_status r;
    switch (format) {
    case TRD_STEADY_TEXT: r = trd_sd_write_text(st, pf, out); break;
    case TRD_STEADY_JSON: r = trd_sd_write_json(st, pf, out); break;
    case TRD_STEADY_DOT: r = trd_sd_write_dot(st, pf, out); break;
    default: return trd_fail(TRD_EINVAL, "unknown output format %d", (int)format);
    }
    if (r == TRD_OK && (fflush(out) != 0 || ferror(out)))
        r = trd_fail(TRD_EIO, "could not write the steady-state result");
    return r;
}

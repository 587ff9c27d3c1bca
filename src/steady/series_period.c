/* series_period.c: the two ingredients of the periodic schedule of a
 * Series of Reduces (series.c): the period, cut into message slots by the
 * matchings (Legrand, Marchal and Robert 2004, Sec. 3.3 and 4.3), and each
 * reduction tree (Def. 1, Fig. 8) as activities with their inputs, their
 * depth and the slots their values use on each node. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "steady/series.h"

/* Most message slots one period may hold. */
#define SLOTS_MAX (1 << 24)

static trd_status no_memory(void)
{
    return trd_fail(TRD_ENOMEM, "steady-state series: out of memory");
}

/* The send entry (link, type) a transfer of the matchings belongs to. */
static int32_t send_of(const trd_steady *st, const trd_xfer *x)
{
    for (int32_t s = 0; s < st->n_sends; s++)
        if (st->sends[s].from == x->from && st->sends[s].to == x->to &&
            st->sends[s].type == x->label)
            return s;
    return -1;
}

/* L: the lcm of the denominators of every matching's message counts. */
static void stretch_of(const trd_steady *st, mpz_t L)
{
    mpz_set_ui(L, 1);
    for (int32_t k = 0; k < st->matchings.count; k++)
        for (int32_t x = 0; x < st->matchings.list[k].count; x++)
            mpz_lcm(L, L, mpq_denref(st->matchings.list[k].xfers[x].amount));
}

/* n = L * amount: the messages of a transfer of the matchings in one
 * period (an integer by the choice of L). */
static void messages(mpz_t n, const mpz_t L, const mpq_t amount)
{
    mpz_mul(n, L, mpq_numref(amount));
    mpz_divexact(n, n, mpq_denref(amount));
}

/* Slots per send entry (into p->first, shifted by one) and in all. */
static trd_status count_slots(const trd_steady *st, const mpz_t L, trd_sr_period *p)
{
    mpz_t n, total;
    mpz_inits(n, total, NULL);
    trd_status r = TRD_OK;
    for (int32_t k = 0; r == TRD_OK && k < st->matchings.count; k++)
        for (int32_t x = 0; r == TRD_OK && x < st->matchings.list[k].count; x++) {
            const trd_xfer *xf = &st->matchings.list[k].xfers[x];
            int32_t s = send_of(st, xf);
            messages(n, L, xf->amount);
            mpz_add(total, total, n);
            if (s < 0)
                r = trd_fail(TRD_EBACKEND, "steady-state series: a matching moves a message "
                             "that no send of the solution carries");
            else if (mpz_cmp_ui(total, SLOTS_MAX) > 0)
                r = trd_fail(TRD_EUNSUPPORTED, "steady-state series: one period of the "
                             "schedule moves more than %d messages", SLOTS_MAX);
            else
                p->first[s + 1] += (int32_t)mpz_get_si(n);
        }
    for (int32_t s = 0; s < st->n_sends; s++)
        p->first[s + 1] += p->first[s];
    mpz_clears(n, total, NULL);
    return r;
}

/* The slots of matching m (starting at `start` in the stretched period):
 * on each link its transfers one after the other in the listed order,
 * each of L * amount messages of duration `duration / amount`. */
static void fill_matching(const trd_steady *st, const trd_matching *m, const mpz_t L,
                          const mpq_t start, int32_t *cursor, trd_sr_period *p)
{
    mpq_t at, each, Lq;
    mpz_t n;
    mpq_inits(at, each, Lq, NULL);
    mpz_init(n);
    mpq_set_z(Lq, L);
    for (int32_t x = 0; x < m->count; x++) {
        const trd_xfer *xf = &m->xfers[x];
        int32_t s = send_of(st, xf);
        mpq_set_ui(at, 0, 1);
        for (int32_t y = 0; y < x; y++) /* earlier parts on the same link */
            if (m->xfers[y].from == xf->from && m->xfers[y].to == xf->to)
                mpq_add(at, at, m->xfers[y].duration);
        mpq_mul(at, at, Lq);
        mpq_add(at, at, start);
        mpq_div(each, xf->duration, xf->amount);
        messages(n, L, xf->amount);
        for (int64_t j = mpz_get_si(n); j > 0; j--) {
            p->start[cursor[s]] = mpq_get_d(at);
            p->len[cursor[s]++] = mpq_get_d(each);
            mpq_add(at, at, each);
        }
    }
    mpq_clears(at, each, Lq, NULL);
    mpz_clear(n);
}

/* Every slot, matching after matching (each stretched by L). */
static trd_status fill_slots(const trd_steady *st, const mpz_t L, trd_sr_period *p)
{
    int32_t *cursor = malloc(((size_t)st->n_sends + 1) * sizeof *cursor);
    if (!cursor)
        return no_memory();
    mpq_t start, d;
    mpq_inits(start, d, NULL);
    memcpy(cursor, p->first, (size_t)st->n_sends * sizeof *cursor);
    for (int32_t k = 0; k < st->matchings.count; k++) {
        const trd_matching *m = &st->matchings.list[k];
        fill_matching(st, m, L, start, cursor, p);
        mpq_set_z(d, L);
        mpq_mul(d, d, m->duration);
        mpq_add(start, start, d);
    }
    mpq_clears(start, d, NULL);
    free(cursor);
    return TRD_OK;
}

/* L, P = L * T, W = L * sum of the weights (= L * TP * T), the shares. */
static trd_status set_sizes(const trd_steady *st, const mpz_t L, trd_sr_period *p)
{
    mpz_t w;
    mpz_init(w);
    for (int32_t i = 0; i < st->n_trees; i++)
        mpz_add(w, w, st->trees[i].weight);
    mpz_mul(w, w, L);
    bool fits = mpz_cmp_ui(w, INT32_MAX) <= 0;
    if (fits) {
        p->stretch = mpz_get_si(L);
        p->ops = mpz_get_si(w);
        mpz_mul(w, L, st->period);
        p->length = mpz_get_d(w);
        for (int32_t i = 0; i < st->n_trees; i++)
            p->share[i] = p->stretch * mpz_get_si(st->trees[i].weight);
    }
    mpz_clear(w);
    if (!fits)
        return trd_fail(TRD_EUNSUPPORTED, "steady-state series: more than %d operations "
                        "per period of the schedule", INT32_MAX);
    return TRD_OK;
}

trd_status trd_sr_period_make(const trd_steady *st, trd_sr_period *p)
{
    *p = (trd_sr_period){0};
    mpz_t L;
    mpz_init(L);
    stretch_of(st, L);
    p->share = malloc(((size_t)st->n_trees + 1) * sizeof *p->share);
    p->first = calloc((size_t)st->n_sends + 2, sizeof *p->first);
    trd_status r = p->share && p->first ? count_slots(st, L, p) : no_memory();
    if (r == TRD_OK) /* L <= the slots of a period: it fits */
        r = set_sizes(st, L, p);
    if (r == TRD_OK) {
        size_t n = (size_t)p->first[st->n_sends] + 1;
        p->start = malloc(n * sizeof *p->start);
        p->len = malloc(n * sizeof *p->len);
        r = p->start && p->len ? TRD_OK : no_memory();
    }
    if (r == TRD_OK)
        r = fill_slots(st, L, p);
    mpz_clear(L);
    if (r != TRD_OK)
        trd_sr_period_free(p);
    return r;
}

void trd_sr_period_free(trd_sr_period *p)
{
    free(p->share);
    free(p->first);
    free(p->start);
    free(p->len);
    *p = (trd_sr_period){0};
}

/* --- trees --- */

/* The act of tree t producing `type` on `node` (acts: tasks, then hops),
 * TRD_SR_OWN for v[i,i] on its owner, or -2 when nothing does (a broken
 * tree). */
static int32_t producer(const trd_steady *st, const trd_sd_tree *t, int32_t node, int32_t type)
{
    for (int32_t a = 0; a < t->n_tasks; a++)
        if (t->tasks[a].node == node && st->comps[t->tasks[a].comp].type == type)
            return a;
    for (int32_t h = 0; h < t->n_hops; h++)
        if (t->hops[h].to == node && t->hops[h].type == type)
            return t->n_tasks + h;
    return st->types[type].leaf == node ? TRD_SR_OWN : -2;
}

/* The act consuming `type` on `node` (each value of a tree is used once),
 * or -1: in_type holds every act's input types (-1: none). */
static int32_t consumer(const trd_sr_tree *t, const int32_t *in_type, int32_t node, int32_t type)
{
    for (int32_t a = 0; a < t->n; a++)
        if (t->acts[a].node == node && (in_type[2 * a] == type || in_type[2 * a + 1] == type))
            return a;
    return -1;
}

/* Act a of tree `tree`: where it runs, its input types, its cost. */
static void describe(const trd_steady *st, const trd_platform *pf, const trd_sd_tree *tree,
                     int32_t a, trd_sr_act *act, int32_t *in_type)
{
    mpq_t q;
    mpq_init(q);
    *act = (trd_sr_act){.to = -1, .send = -1, .ring = a};
    if (a < tree->n_tasks) {
        const trd_sd_task *k = &tree->tasks[a];
        act->node = k->node;
        in_type[0] = st->comps[k->comp].left;
        in_type[1] = st->comps[k->comp].right;
        mpq_div(q, st->task_size, pf->nodes[k->node].speed);
    } else {
        const trd_sd_hop *h = &tree->hops[a - tree->n_tasks];
        *act = (trd_sr_act){.hop = true, .node = h->from, .to = h->to, .send = h->send,
                            .ring = a};
        in_type[0] = h->type;
        in_type[1] = -1;
        mpq_mul(q, st->types[h->type].size, pf->links[h->link].cost);
    }
    act->cost = mpq_get_d(q);
    mpq_clear(q);
}

/* Inputs and levels (longest chain of producers: at most n passes, else
 * the tree has a cycle). */
static trd_status link_inputs(const trd_steady *st, const trd_sd_tree *tree, trd_sr_tree *t,
                              const int32_t *in_type)
{
    for (int32_t a = 0; a < t->n; a++)
        for (int k = 0; k < 2; k++) {
            int32_t p = in_type[2 * a + k] < 0 ? TRD_SR_OWN
                                               : producer(st, tree, t->acts[a].node,
                                                          in_type[2 * a + k]);
            if (p == -2)
                return trd_fail(TRD_EBACKEND, "steady-state series: a tree uses a value "
                                "that none of its tasks or transfers produces");
            t->acts[a].in[k] = p;
        }
    for (int32_t pass = 0, changed = 1; changed; pass++) {
        if (pass > t->n)
            return trd_fail(TRD_EBACKEND, "steady-state series: a tree has a cycle");
        changed = 0;
        for (int32_t a = 0; a < t->n; a++)
            for (int k = 0; k < 2; k++) {
                int32_t p = t->acts[a].in[k];
                if (p >= 0 && t->acts[p].level + 1 > t->acts[a].level) {
                    t->acts[a].level = t->acts[p].level + 1;
                    changed = 1;
                }
            }
    }
    return TRD_OK;
}

/* order: the acts by level (counting sort, stable); depth; the rings of
 * hops sharing a link. */
static void order_acts(trd_sr_tree *t)
{
    t->depth = 0;
    for (int32_t a = 0; a < t->n; a++)
        t->depth = t->acts[a].level + 1 > t->depth ? t->acts[a].level + 1 : t->depth;
    int32_t k = 0;
    for (int32_t level = 0; level < t->depth; level++)
        for (int32_t a = 0; a < t->n; a++)
            if (t->acts[a].level == level)
                t->order[k++] = a;
    for (int32_t a = 0; a < t->n; a++) /* a joins the ring of the first hop on its link */
        for (int32_t b = 0; b < a && t->acts[a].hop; b++)
            if (t->acts[b].hop && t->acts[b].node == t->acts[a].node &&
                t->acts[b].to == t->acts[a].to) {
                t->acts[a].ring = t->acts[b].ring;
                t->acts[b].ring = a;
                break;
            }
}

/* Slots, in level order: v[i,i] is slot 0 of its owner; a received value
 * gets a fresh slot; a task leaves its result in its left input's slot
 * (COMBINE RIGHT: acc = acc (+) in), or for a join in a fresh one. */
static trd_status assign_slots(const trd_steady *st, trd_sr_tree *t)
{
    int32_t *next = malloc(((size_t)st->n_nodes + 1) * sizeof *next);
    if (!next)
        return no_memory();
    for (int32_t i = 0; i < st->n_nodes; i++)
        next[i] = 1;
    for (int32_t k = 0; k < t->n; k++) {
        trd_sr_act *a = &t->acts[t->order[k]];
        for (int j = 0; j < 2; j++)
            a->slot_in[j] = a->in[j] >= 0 ? t->acts[a->in[j]].slot : 0;
        a->join = !a->hop && a->in[0] >= 0 && a->in[1] >= 0 && t->acts[a->in[0]].hop &&
                  t->acts[a->in[1]].hop;
        a->slot = a->hop ? next[a->to]++ : a->join ? next[a->node]++ : a->slot_in[0];
    }
    t->slots = 1;
    for (int32_t i = 0; i < st->n_nodes; i++)
        t->slots = next[i] > t->slots ? next[i] : t->slots;
    free(next);
    return TRD_OK;
}

/* final, and touch0: following v[target, target] on the target while the
 * value in slot 0 is combined into slot 0. */
static trd_status find_ends(const trd_steady *st, trd_sr_tree *t, const trd_sd_tree *tree,
                            const int32_t *in_type)
{
    int32_t N = st->n_members, root = st->root;
    t->final = producer(st, tree, root, st->type_of[N - 1]);
    if (t->final < 0)
        return trd_fail(TRD_EBACKEND, "steady-state series: a tree does not end with "
                        "v[0,%d] on the target", (int)(N - 1));
    t->touch0 = -1;
    for (int32_t k = 0; k < N; k++)
        if (st->members[k] == root)
            t->touch0 = consumer(t, in_type, root, st->type_of[k * N + k]);
    while (t->touch0 >= 0 && t->touch0 != t->final && !t->acts[t->touch0].hop &&
           t->acts[t->touch0].slot == 0) {
        const trd_sd_task *k = &tree->tasks[t->touch0];
        t->touch0 = consumer(t, in_type, root, st->comps[k->comp].type);
    }
    return TRD_OK;
}

trd_status trd_sr_tree_make(const trd_steady *st, const trd_platform *pf,
                            const trd_sd_tree *tree, trd_sr_tree *t)
{
    *t = (trd_sr_tree){.n = tree->n_tasks + tree->n_hops};
    size_t n = (size_t)t->n + 1;
    t->acts = calloc(n, sizeof *t->acts);
    t->order = malloc(n * sizeof *t->order);
    int32_t *in_type = malloc(2 * n * sizeof *in_type);
    trd_status r = t->acts && t->order && in_type ? TRD_OK : no_memory();
    for (int32_t a = 0; r == TRD_OK && a < t->n; a++)
        describe(st, pf, tree, a, &t->acts[a], &in_type[2 * a]);
    if (r == TRD_OK && (r = link_inputs(st, tree, t, in_type)) == TRD_OK) {
        order_acts(t);
        r = assign_slots(st, t);
    }
    if (r == TRD_OK)
        r = find_ends(st, t, tree, in_type);
    free(in_type);
    if (r != TRD_OK)
        trd_sr_tree_free(t);
    return r;
}

void trd_sr_tree_free(trd_sr_tree *t)
{
    free(t->acts);
    free(t->order);
    *t = (trd_sr_tree){0};
}

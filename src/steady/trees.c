/* trees.c: EXTRACT_TREES of Legrand, Marchal and Robert (2004, Fig. 8,
 * Theorem 1) on the integer solution A of one period.
 *
 * FIND_TREE starts from the results of one operation -- v[0,N] on the
 * target for a reduce (line 1), m_t on each target t for a scatter, every
 * m_{k,l} on l for a gossip -- and, while some input is not a leaf (v[i,i]
 * on its owner, a message on its source; line 3), explains it by a task of
 * A that computes it in place (lines 6-10) or else by a send that brings
 * it (lines 11-15).  Among several candidates we take the one with the
 * largest remaining count.  EXTRACT_TREES weights the tree with its
 * smallest count (line 4), subtracts that weight from each of its tasks
 * (lines 5-6) and repeats until the weights add up to TP * period.  Each
 * tree zeroes at least one task, so there are at most as many trees as
 * nonzero entries of A.  Terminates because sends of one type form a DAG
 * (solution.c) and a task's inputs are shorter intervals than its output. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "steady/steady_internal.h"

typedef struct extract {
    trd_steady *st;
    mpz_t *left_send, *left_comp; /* A minus the trees found so far */
    int32_t *send_off, *send_at;  /* sends into (node, type), CSR */
    int32_t *comp_off, *comp_at;  /* comps producing (node, type), CSR */
    int32_t *stack, top, cap;     /* inputs still to explain: (type, node) pairs */
    trd_sd_tree cur;              /* the tree being found (arrays of cap_*) */
    int32_t cap_tasks, cap_hops;
} extract;

/* CSR of n_items items by key(item) in [0, n_keys). */
static trd_status bucket(int32_t n_keys, int32_t n_items, const int32_t *key, int32_t **off,
                         int32_t **at)
{
    *off = calloc((size_t)n_keys + 1, sizeof **off);
    *at = malloc(((size_t)n_items + 1) * sizeof **at);
    if (*off == NULL || *at == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for the tree extraction");
    for (int32_t i = 0; i < n_items; i++)
        (*off)[key[i]]++;
    for (int32_t k = 1; k <= n_keys; k++)
        (*off)[k] += (*off)[k - 1];
    for (int32_t i = n_items - 1; i >= 0; i--)
        (*at)[--(*off)[key[i]]] = i;
    return TRD_OK;
}

static trd_status setup(extract *x)
{
    trd_steady *st = x->st;
    int32_t nk = st->n_nodes * st->n_types, big = st->n_sends > st->n_comps ? st->n_sends
                                                                             : st->n_comps;
    int32_t *key = malloc(((size_t)big + 1) * sizeof *key);
    x->left_send = malloc(((size_t)st->n_sends + 1) * sizeof *x->left_send);
    x->left_comp = malloc(((size_t)st->n_comps + 1) * sizeof *x->left_comp);
    x->cap = 2 * (nk + 1); /* each (type, node) at most once in a tree */
    x->stack = malloc((size_t)x->cap * sizeof *x->stack);
    if (!key || !x->left_send || !x->left_comp || !x->stack) {
        free(key);
        return trd_fail(TRD_ENOMEM, "out of memory for the tree extraction");
    }
    for (int32_t s = 0; s < st->n_sends; s++) {
        mpz_init_set(x->left_send[s], st->sends[s].count);
        key[s] = st->sends[s].to * st->n_types + st->sends[s].type;
    }
    trd_status r = bucket(nk, st->n_sends, key, &x->send_off, &x->send_at);
    for (int32_t c = 0; c < st->n_comps; c++) {
        mpz_init_set(x->left_comp[c], st->comps[c].count);
        key[c] = st->comps[c].node * st->n_types + st->comps[c].type;
    }
    if (r == TRD_OK)
        r = bucket(nk, st->n_comps, key, &x->comp_off, &x->comp_at);
    free(key);
    return r;
}

static void teardown(extract *x)
{
    for (int32_t s = 0; x->left_send && s < x->st->n_sends; s++)
        mpz_clear(x->left_send[s]);
    for (int32_t c = 0; x->left_comp && c < x->st->n_comps; c++)
        mpz_clear(x->left_comp[c]);
    free(x->left_send);
    free(x->left_comp);
    free(x->send_off);
    free(x->send_at);
    free(x->comp_off);
    free(x->comp_at);
    free(x->stack);
    free(x->cur.tasks);
    free(x->cur.hops);
}

/* The item of at[off[key] .. off[key+1]) with the largest positive left
 * count, or -1. */
static int32_t largest(const int32_t *off, const int32_t *at, mpz_t *left, int32_t key)
{
    int32_t best = -1;
    for (int32_t i = off[key]; i < off[key + 1]; i++)
        if (mpz_sgn(left[at[i]]) > 0 && (best < 0 || mpz_cmp(left[at[i]], left[best]) > 0))
            best = at[i];
    return best;
}

static trd_status push(extract *x, int32_t type, int32_t node)
{
    if (x->top + 2 > x->cap)
        return trd_fail(TRD_EBACKEND, "tree extraction (Fig. 8): too many open inputs");
    x->stack[x->top++] = type;
    x->stack[x->top++] = node;
    return TRD_OK;
}

/* Appends one element to an array of *n used, *cap allocated. */
static trd_status reserve(void **a, size_t elem, int32_t n, int32_t *cap)
{
    if (n < *cap)
        return TRD_OK;
    int32_t cap2 = *cap ? 2 * *cap : 16;
    void *a2 = realloc(*a, (size_t)cap2 * elem);
    if (a2 == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for a reduction tree");
    *a = a2;
    *cap = cap2;
    return TRD_OK;
}

/* Explains the input (type, node): Fig. 8 lines 6-10, else 11-15. */
static trd_status explain(extract *x, int32_t type, int32_t node)
{
    trd_steady *st = x->st;
    int32_t key = node * st->n_types + type, c, s;
    trd_status r;
    if ((c = largest(x->comp_off, x->comp_at, x->left_comp, key)) >= 0) {
        const trd_sd_comp *cp = &st->comps[c];
        if ((r = reserve((void **)&x->cur.tasks, sizeof *x->cur.tasks, x->cur.n_tasks,
                         &x->cap_tasks)) != TRD_OK)
            return r;
        x->cur.tasks[x->cur.n_tasks++] = (trd_sd_task){node, cp->k, cp->l, cp->m, c};
        r = push(x, cp->left, node);
        return r == TRD_OK ? push(x, cp->right, node) : r;
    }
    if ((s = largest(x->send_off, x->send_at, x->left_send, key)) >= 0) {
        const trd_sd_send *sp = &st->sends[s];
        if ((r = reserve((void **)&x->cur.hops, sizeof *x->cur.hops, x->cur.n_hops,
                         &x->cap_hops)) != TRD_OK)
            return r;
        x->cur.hops[x->cur.n_hops++] = (trd_sd_hop){sp->link, sp->from, sp->to, type, s};
        return push(x, type, sp->from);
    }
    return trd_fail(TRD_EBACKEND, "tree extraction (Fig. 8): nothing produces message type "
                    "%d on node %d (solution breaks conservation)", (int)type, (int)node);
}

/* FIND_TREE into x->cur. */
static trd_status find_tree(extract *x)
{
    trd_steady *st = x->st;
    x->cur.n_tasks = x->cur.n_hops = 0;
    x->top = 0;
    trd_status r = TRD_OK;
    for (int32_t t = 0; r == TRD_OK && t < st->n_types; t++)
        if (st->types[t].sink >= 0)
            r = push(x, t, st->types[t].sink);
    while (r == TRD_OK && x->top > 0) {
        int32_t node = x->stack[--x->top], type = x->stack[--x->top];
        if (node != st->types[type].leaf)
            r = explain(x, type, node);
    }
    return r;
}

/* Weights x->cur (line 4), subtracts it from A (lines 5-6) and appends a
 * copy to st->trees (line 7). */
static trd_status keep_tree(extract *x, mpz_t left_tp)
{
    trd_steady *st = x->st;
    trd_sd_tree *tr = &st->trees[st->n_trees];
    mpz_inits(tr->weight, tr->fixed, NULL);
    tr->n_tasks = x->cur.n_tasks;
    tr->n_hops = x->cur.n_hops;
    tr->tasks = malloc(((size_t)tr->n_tasks + 1) * sizeof *tr->tasks);
    tr->hops = malloc(((size_t)tr->n_hops + 1) * sizeof *tr->hops);
    st->n_trees++;
    if (tr->tasks == NULL || tr->hops == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for a reduction tree");
    if (tr->n_tasks > 0) /* (scatters and gossips have none, cur.tasks is NULL) */
        memcpy(tr->tasks, x->cur.tasks, (size_t)tr->n_tasks * sizeof *tr->tasks);
    if (tr->n_hops > 0)
        memcpy(tr->hops, x->cur.hops, (size_t)tr->n_hops * sizeof *tr->hops);
    mpz_set(tr->weight, left_tp);
    for (int32_t i = 0; i < tr->n_tasks; i++)
        if (mpz_cmp(x->left_comp[tr->tasks[i].comp], tr->weight) < 0)
            mpz_set(tr->weight, x->left_comp[tr->tasks[i].comp]);
    for (int32_t i = 0; i < tr->n_hops; i++)
        if (mpz_cmp(x->left_send[tr->hops[i].send], tr->weight) < 0)
            mpz_set(tr->weight, x->left_send[tr->hops[i].send]);
    for (int32_t i = 0; i < tr->n_tasks; i++)
        mpz_sub(x->left_comp[tr->tasks[i].comp], x->left_comp[tr->tasks[i].comp], tr->weight);
    for (int32_t i = 0; i < tr->n_hops; i++)
        mpz_sub(x->left_send[tr->hops[i].send], x->left_send[tr->hops[i].send], tr->weight);
    mpz_sub(left_tp, left_tp, tr->weight);
    return TRD_OK;
}

trd_status trd_sd_extract_trees(trd_steady *st)
{
    extract x = {.st = st};
    int32_t max_trees = st->n_sends + st->n_comps;
    mpz_t left_tp;
    mpz_init(left_tp);
    mpz_mul(left_tp, mpq_numref(st->throughput), st->period);
    mpz_divexact(left_tp, left_tp, mpq_denref(st->throughput));
    st->trees = calloc((size_t)max_trees + 1, sizeof *st->trees);
    trd_status r = st->trees ? setup(&x) : trd_fail(TRD_ENOMEM, "out of memory for the trees");
    while (r == TRD_OK && mpz_sgn(left_tp) > 0) {
        if (st->n_trees == max_trees)
            r = trd_fail(TRD_EBACKEND, "tree extraction (Fig. 8) did not end after %d trees",
                         (int)max_trees);
        else if ((r = find_tree(&x)) == TRD_OK)
            r = keep_tree(&x, left_tp);
    }
    teardown(&x);
    mpz_clear(left_tp);
    return r;
}

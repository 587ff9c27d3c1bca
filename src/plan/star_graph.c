/* star_graph.c: the n-star graph S_n (Oh, Choi and Primeaux 2005, Sec. 2),
 * the container of a schedule's rounds (star.h), and the public counts of
 * treduce/star.h.
 *
 * S_n has the n! permutations of 1..n as nodes; link k joins a permutation
 * to the one with its first and k-th symbols exchanged, so every node has
 * n - 1 neighbours.  Ranks are the permutations in lexicographic order
 * (the Lehmer code read in the factorial number system): rank 0 is
 * 1 2 ... n, rank n! - 1 is n ... 2 1.  Recursively, S_n is n copies of
 * S_{n-1}, copy i holding the nodes whose last symbol is i, joined to one
 * another by link n; the copies of S_{n-1} are made of copies of S_{n-2}
 * (last two symbols fixed), and so on. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "plan/star.h"

int64_t trd_star_factorial(int32_t n)
{
    int64_t f = 1;
    for (int32_t i = 2; i <= n; i++)
        f *= i;
    return f;
}

int32_t trd_star_dimension(int64_t p)
{
    for (int32_t n = 1; n <= TRD_STAR_N_MAX; n++)
        if (trd_star_factorial(n) == p)
            return n;
    return 0;
}

void trd_star_label(int32_t n, int64_t rank, uint8_t *perm)
{
    uint8_t left[TRD_STAR_N_MAX]; /* symbols not placed yet, increasing */
    for (int32_t i = 0; i < n; i++)
        left[i] = (uint8_t)(i + 1);
    for (int32_t i = 0; i < n; i++) {
        int64_t block = trd_star_factorial(n - 1 - i);
        int32_t d = (int32_t)(rank / block);
        rank %= block;
        perm[i] = left[d];
        memmove(left + d, left + d + 1, (size_t)(n - 1 - i - d));
    }
}

int64_t trd_star_rank(int32_t n, const uint8_t *perm)
{
    int64_t rank = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t smaller = 0; /* symbols after position i below perm[i] */
        for (int32_t j = i + 1; j < n; j++)
            smaller += perm[j] < perm[i];
        rank += smaller * trd_star_factorial(n - 1 - i);
    }
    return rank;
}

trd_status trd_star_graph_make(trd_star_graph *g, int32_t n)
{
    int64_t nodes = trd_star_factorial(n);
    *g = (trd_star_graph){.n = n, .nodes = (int32_t)nodes};
    if (n < 2)
        return TRD_OK; /* no links */
    g->nb = malloc((size_t)nodes * (size_t)(n - 1) * sizeof *g->nb);
    if (!g->nb)
        return trd_fail(TRD_ENOMEM, "S_%d: out of memory for the links of %lld nodes", (int)n,
                        (long long)nodes);
    uint8_t perm[TRD_STAR_N_MAX];
    for (int64_t r = 0; r < nodes; r++) {
        trd_star_label(n, r, perm);
        for (int32_t k = 2; k <= n; k++) {
            uint8_t t = perm[0];
            perm[0] = perm[k - 1];
            perm[k - 1] = t;
            g->nb[(size_t)r * (size_t)(n - 1) + (size_t)(k - 2)] = (int32_t)trd_star_rank(n, perm);
            perm[k - 1] = perm[0];
            perm[0] = t;
        }
    }
    return TRD_OK;
}

void trd_star_graph_free(trd_star_graph *g)
{
    free(g->nb);
    g->nb = NULL;
}

/* ---- The rounds ---- */

void trd_star_sched_init(trd_star_sched *s, int32_t n, bool enumerate)
{
    *s = (trd_star_sched){.n = n, .nodes = trd_star_factorial(n), .enumerated = enumerate};
}

void trd_star_sched_free(trd_star_sched *s)
{
    free(s->round);
    free(s->xfer);
    s->round = NULL;
    s->xfer = NULL;
    s->rounds = s->round_cap = s->xfers = s->xfer_cap = 0;
}

trd_status trd_star_round_open(trd_star_sched *s, int32_t link, trd_star_send send,
                               trd_star_recv recv)
{
    trd_status st = trd_grow((void **)&s->round, s->rounds, &s->round_cap, sizeof *s->round, 64,
                             "star schedule");
    if (st == TRD_OK)
        s->round[s->rounds++] = (trd_star_round){.link = link, .send = send, .recv = recv,
                                                 .first = s->xfers};
    return st;
}

trd_status trd_star_xfer_add(trd_star_sched *s, int32_t from, int32_t to)
{
    trd_status st = trd_grow((void **)&s->xfer, s->xfers, &s->xfer_cap, sizeof *s->xfer, 64,
                             "star schedule");
    if (st == TRD_OK) {
        s->xfer[s->xfers++] = (trd_star_xfer){from, to};
        s->round[s->rounds - 1].count++;
    }
    return st;
}

trd_status trd_star_round_all(trd_star_sched *s, const trd_star_graph *g, int32_t link,
                              trd_star_send send, trd_star_recv recv)
{
    trd_status st = trd_star_round_open(s, link, send, recv);
    for (int32_t r = 0; st == TRD_OK && s->enumerated && r < g->nodes; r++)
        st = trd_star_xfer_add(s, r, trd_star_neighbor(g, r, link));
    return st;
}

/* ---- Names and counts (treduce/star.h) ---- */

const trd_star_algo *trd_star_algo_find(const char *name)
{
    static const trd_star_algo table[] = {
        {"star", trd_star_generate, trd_star_steps_theorem3},
        {"star-reduce-bcast", trd_star_rb_generate, trd_star_steps_sheu},
    };
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0)
            return &table[i];
    trd_fail(TRD_ENOALGO, "'%s' is not an algorithm on the star graph: star or "
             "star-reduce-bcast", name ? name : "(null)");
    return NULL;
}

trd_status trd_star_steps(const char *algo, int32_t n, int64_t *steps)
{
    const trd_star_algo *a = trd_star_algo_find(algo);
    if (!a)
        return TRD_ENOALGO;
    if (!steps)
        return trd_fail(TRD_EINVAL, "trd_star_steps: NULL argument (steps)");
    if (n < 1 || n > TRD_STAR_N_MAX)
        return trd_fail(TRD_EINVAL, "n = %ld is out of range: S_n needs 1 <= n <= %d (n! "
                        "ranks must fit in 32 bits)", (long)n, TRD_STAR_N_MAX);
    trd_star_sched s;
    trd_star_sched_init(&s, n, false);
    trd_status st = a->gen(&s);
    if (st == TRD_OK)
        *steps = (int64_t)s.rounds;
    trd_star_sched_free(&s);
    return st;
}

int64_t trd_star_steps_theorem3(int32_t n)
{
    return (int64_t)n * (n - 1) / 2;
}

int64_t trd_star_steps_sheu(int32_t n)
{
    int64_t sum = 0;
    for (int32_t i = 2; i <= n; i++) {
        int64_t lg = 0; /* ceil(log2(i - 1)) */
        while (((int64_t)1 << lg) < i - 1)
            lg++;
        sum += lg + 1;
    }
    return 2 * sum;
}

int64_t trd_star_steps_tseng(int32_t n)
{
    return 3 * (int64_t)(n - 1) * (n - 1);
}

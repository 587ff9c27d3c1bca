/* star_reduce_bcast.c: the baseline of Oh, Choi and Primeaux's Table 2 on
 * the n-star graph S_n: reduce to rank 0 (the node 1 2 ... n) over a
 * spanning tree, then broadcast the sum back down the same tree, under the
 * same single-port, bidirectional model (p = n! ranks).
 *
 * The tree is that of a recursive broadcast from rank 0 in the spirit of
 * Sheu, Wu and Chen ("An optimal broadcasting algorithm without message
 * redundancy in star graphs", IEEE TPDS 6(6), 1995), whose count the paper
 * quotes.  At level k = n, n-1, ..., 2 every copy of S_k (nodes that share
 * their symbols k+1..n) has one source holding the message:
 *   - doubling: within the source's copy of S_{k-1}, every holder sends
 *     along the link that brings a symbol not yet first in any holder to
 *     the front, so after ceil(log2(k-1)) rounds k-1 holders have the k-1
 *     different first symbols of that copy;
 *   - one round along link k: holder h sends to the copy of S_{k-1} whose
 *     last symbol is h's first, so every other copy gets one source.
 * Every copy then recurses.  A transfer to a node that already holds the
 * message (a holder of an earlier doubling) is dropped, so every node
 * receives once: the transfers form a spanning tree of S_n, and a node
 * receives before it sends.  Reversed, round by round and transfer by
 * transfer, they are a reduce: every node sends its partial sum to its
 * parent once it has its children's.
 *
 * Cost: the broadcast takes B(n) = sum_{i=2..n} (ceil(log2(i-1)) + 1)
 * rounds, so the all-reduce 2 B(n) (the paper's column "Sheu"): for b
 * bytes, 2 B(n) (alpha + b beta) + B(n) b gamma at most on the critical
 * path (one combine per reduce round).  The doubling rounds use several
 * link dimensions at once (link 0 in star.h).
 * Commutative operators only (children are added in round order). */
#include <stdlib.h>

#include "core/error.h"
#include "plan/star.h"

/* The broadcast being built: who holds the message, and per source of the
 * current level its holders (holders[s * n .. + count[s])). */
typedef struct bcast {
    trd_star_sched *out;
    trd_star_graph g;
    uint8_t *informed;
    int32_t *src, *holders, *count;
    int64_t nsrc;
} bcast;

/* h sends to v in the current round, unless v already has the message. */
static trd_status deliver(bcast *b, int32_t h, int32_t v)
{
    if (b->informed[v])
        return TRD_OK;
    b->informed[v] = 1;
    return trd_star_xfer_add(b->out, h, v);
}

/* One doubling round of level k for source s.  Holder j has the source's
 * (j+1)-th symbol first; holder i (of `have`) brings the source's
 * (have+i+1)-th symbol, one of its positions 2..k-1, to its front. */
static trd_status double_holders(bcast *b, int64_t s, int32_t k)
{
    int32_t n = b->out->n, have = b->count[s], *hs = b->holders + s * n;
    uint8_t first[TRD_STAR_N_MAX], perm[TRD_STAR_N_MAX];
    trd_star_label(n, b->src[s], first);
    trd_status st = TRD_OK;
    for (int32_t i = 0; st == TRD_OK && i < have && have + i < k - 1; i++) {
        uint8_t x = first[have + i];
        trd_star_label(n, hs[i], perm);
        int32_t pos = 1;
        while (perm[pos] != x)
            pos++;
        int32_t v = trd_star_neighbor(&b->g, hs[i], pos + 1);
        hs[b->count[s]++] = v;
        st = deliver(b, hs[i], v);
    }
    return st;
}

/* Level k: doubling rounds, then the round along link k; the sources of
 * level k-1 are the sources and the receivers of that round. */
static trd_status level(bcast *b, int32_t k)
{
    trd_status st = TRD_OK;
    bool all = b->out->enumerated;
    for (int32_t have = 1; st == TRD_OK && have < k - 1; have *= 2) {
        st = trd_star_round_open(b->out, 0, TRD_STAR_SEND_RESULT, TRD_STAR_RECV_TAKE);
        for (int64_t s = 0; st == TRD_OK && all && s < b->nsrc; s++)
            st = double_holders(b, s, k);
    }
    if (st == TRD_OK)
        st = trd_star_round_open(b->out, k, TRD_STAR_SEND_RESULT, TRD_STAR_RECV_TAKE);
    int64_t next = b->nsrc;
    for (int64_t s = 0; st == TRD_OK && all && s < b->nsrc; s++)
        for (int32_t i = 0; st == TRD_OK && i < b->count[s]; i++) {
            int32_t h = b->holders[s * b->out->n + i], v = trd_star_neighbor(&b->g, h, k);
            b->src[next++] = v;
            st = deliver(b, h, v);
        }
    b->nsrc = next;
    for (int64_t s = 0; all && s < b->nsrc; s++) {
        b->count[s] = 1;
        b->holders[s * b->out->n] = b->src[s];
    }
    return st;
}

/* The broadcast's rounds from rank 0 into out. */
static trd_status broadcast(trd_star_sched *out)
{
    int32_t n = out->n;
    bcast b = {.out = out, .nsrc = 1};
    trd_status st = TRD_OK;
    if (out->enumerated) {
        size_t nodes = (size_t)out->nodes;
        st = trd_star_graph_make(&b.g, n);
        b.informed = calloc(nodes, 1);
        b.src = malloc(nodes * sizeof *b.src);
        b.count = malloc(nodes * sizeof *b.count);
        b.holders = malloc(nodes * (size_t)n * sizeof *b.holders);
        if (st == TRD_OK && (!b.informed || !b.src || !b.count || !b.holders))
            st = trd_fail(TRD_ENOMEM, "star-reduce-bcast: out of memory for S_%d", (int)n);
        if (st == TRD_OK) {
            b.informed[0] = 1;
            b.src[0] = b.holders[0] = 0;
            b.count[0] = 1;
        }
    }
    for (int32_t k = n; st == TRD_OK && k >= 2; k--)
        st = level(&b, k);
    trd_star_graph_free(&b.g);
    free(b.informed);
    free(b.src);
    free(b.count);
    free(b.holders);
    return st;
}

/* Round i of bcast into out, its transfers reversed for the reduce. */
static trd_status copy_round(trd_star_sched *out, const trd_star_sched *bc, size_t i,
                             bool reverse)
{
    const trd_star_round *r = &bc->round[i];
    trd_status st = trd_star_round_open(out, r->link, TRD_STAR_SEND_RESULT,
                                        reverse ? TRD_STAR_RECV_ADD : TRD_STAR_RECV_TAKE);
    for (size_t j = r->first; st == TRD_OK && j < r->first + r->count; j++) {
        trd_star_xfer x = bc->xfer[j];
        st = reverse ? trd_star_xfer_add(out, x.to, x.from) : trd_star_xfer_add(out, x.from, x.to);
    }
    return st;
}

trd_status trd_star_rb_generate(trd_star_sched *out)
{
    trd_star_sched bc;
    trd_star_sched_init(&bc, out->n, out->enumerated);
    trd_status st = broadcast(&bc);
    for (size_t i = bc.rounds; st == TRD_OK && i-- > 0;) /* the reduce: time reversed */
        st = copy_round(out, &bc, i, true);
    for (size_t i = 0; st == TRD_OK && i < bc.rounds; i++)
        st = copy_round(out, &bc, i, false);
    trd_star_sched_free(&bc);
    return st;
}

trd_status trd_schedule_star_reduce_bcast(trd_plan *plan)
{
    return trd_star_plan(plan, trd_star_rb_generate);
}

/* star.c: the all-reduce of Oh, Choi and Primeaux on the n-star graph S_n
 * ("An all-reduce operation in star networks using all-to-all broadcast
 * communication pattern", ICCS 2005, Fig. 2), for p = n! ranks.
 *
 * All-Reduce on S_n (Fig. 2):
 *   1. every copy S_{n-1}^i (last symbol i) runs All-Reduce on itself;
 *      each node then holds Delta_i, the sum of its copy;
 *   2. every node sends Delta_i along link n and keeps it in its result
 *      buffer; it receives Delta_j (j its first symbol) from copy j and
 *      keeps that in its outgoing buffer;
 *   3-4. for d = n-1 down to 2, every node sends along link d the partial
 *      sum it received along link n (docs/STAR.md: "the local sum" of step 4
 *      is the received one, not its accumulated sum, which would deliver
 *      contributions twice for n >= 3) and adds what it receives;
 *   5. the node adds its outgoing buffer to its result.
 * Unrolling the recursion, the rounds are, for k = 2, 3, ..., n, one round
 * along link k (step 2 at level k) then one along each of k-1, ..., 2
 * (step 4): every round is one link dimension, in which every node sends
 * one message and receives one (single-port, bidirectional).  The node
 * receiving along link d < k at level k gets Delta_{sigma_d}, sigma_d its
 * d-th symbol, so it receives each of the k copies' sums exactly once
 * (the proof of Theorem 2): no contribution reaches a node twice (NODUP).
 *
 * Cost: T(n) = T(n-1) + n - 1, T(1) = 0, so n(n-1)/2 rounds (Theorem 3),
 * each one message of the whole buffer per node and one combine: for b
 * bytes, n(n-1)/2 (alpha + b beta + b gamma).  With m segments every
 * block runs the rounds on its own.  The operator must be commutative (the
 * sums arrive in the order of the star's links), so a non-commutative one
 * is refused (star_ir.c); so is a p that is no factorial. */
#include "plan/star.h"

trd_status trd_star_generate(trd_star_sched *out)
{
    trd_star_graph g = {0};
    trd_status st = out->enumerated ? trd_star_graph_make(&g, out->n) : TRD_OK;
    /* level k runs after levels 2..k-1: step 1's recursion, unrolled */
    for (int32_t k = 2; st == TRD_OK && k <= out->n; k++) {
        /* step 2: the copy's sum along link k, kept as the outgoing message */
        st = trd_star_round_all(out, &g, k, TRD_STAR_SEND_RESULT, TRD_STAR_RECV_KEEP);
        /* step 4: forward that message along k-1, ..., 2; add what arrives */
        for (int32_t d = k - 1; st == TRD_OK && d >= 2; d--)
            st = trd_star_round_all(out, &g, d, TRD_STAR_SEND_OUTGOING, TRD_STAR_RECV_ADD);
    }
    trd_star_graph_free(&g);
    return st;
}

trd_status trd_schedule_star(trd_plan *plan)
{
    return trd_star_plan(plan, trd_star_generate);
}

/* scan_recursive_doubling.c: the recursive-doubling scan and exscan.
 *
 * Rank r keeps a partial result, the reduction of its aligned group of
 * 2^k ranks (cut at p - 1), and its result.  In round k (mask = 2^k < p)
 * it exchanges the partial result with dst = r XOR 2^k when dst < p and
 * combines what it receives (tmp) in rank order: from a lower dst,
 * partial = tmp (+) partial and result = tmp (+) result (exscan: result =
 * tmp the first time); from a higher dst, partial = partial (+) tmp.
 * After ceil(log2 p) rounds the result holds x_0 (+) ... (+) x_r (exscan:
 * up to x_{r-1}; rank 0 never has a lower partner, and its slot 0, used
 * as scratch, ends with no defined value, as MPI allows).
 * Sources: Thakur, Rabenseifner and Gropp, "Optimization of collective
 * communication operations in MPICH", IJHPCA 19(1), 2005, and MPICH's
 * MPIR_Scan_intra_recursive_doubling and
 * MPIR_Exscan_intra_recursive_doubling (the same rounds and combines).
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes), any p, no fold, m = 1, L = ceil(log2 p) rounds: at
 * most L (alpha + n beta) + (2L - 1) n gamma, and exactly that for p a
 * power of two.  A round's exchange starts once both partners have posted
 * their RECV, after their previous round's last combine; a round is a
 * transfer and at most two combines, round 0 one only (a scan's partial
 * result and result are still one value then; an exscan's first lower
 * partner just becomes the result), so by induction every rank is done
 * with round k by (k + 1)(alpha + n beta) + (2k + 1) n gamma; for p = 2^L
 * the rank whose rounds after round 0 all combine twice (scan: rank p - 2,
 * a higher partner in round 0 and lower ones after; exscan: rank p - 1)
 * takes that long.  Per rank: one message (n bytes) per round k
 * whose partner r XOR 2^k is < p; one combine (n bytes) per such round,
 * and a second one in a round with a lower partner once the partial
 * result and the result differ: scan, after the rank's first round with a
 * higher partner; exscan, after its first round with a lower partner.
 * With m segments the buffer is cut into m blocks that go through the
 * rounds on their own (each round is m messages of n/m bytes), so block
 * j + 1 travels while block j is combined.
 *
 * Slots: the result ends in slot 0; the partial result, tmp and (an
 * exscan's, for a while) the result move between slots 0, 1 and 2, so
 * that MPICH's copies are not needed: its partial result starts as a copy
 * of the input, here the input in slot 0 is both (scan: the partial
 * result and the result are one value until a higher group joins the
 * partial one).  tmp lands in a slot holding neither; partial (+) tmp is
 * combined LEFT into tmp's slot (the partial result moves there), tmp (+)
 * partial LEFT into the partial result's; an exscan's result is tmp where
 * it landed the first time, and moves into slot 0 when tmp lands there (a
 * RIGHT combine, clobbering its old slot), else is copied there at the
 * end (one COPY at most, after everything: the ranks whose first lower
 * partner came while the input in slot 0 was still the partial result).
 *
 * Dependencies: a round's SEND waits for the step that last wrote the
 * partial result (earlier SENDs of it only read, and come before that
 * step); its RECV waits for the previous round's last step, which depends
 * on every step of that round (the partial result's combine waits for the
 * RECV and the SEND, whose slot it may write; the result's combine waits
 * for it), so every earlier reader and writer of the slot tmp lands in is
 * before it; the final COPY waits for the last round's last step.  A rank
 * receives once from each partner per block, so no channel needs
 * ordering.
 *
 * Commutativity: the partner's group is the aligned group next to ours,
 * below (tmp on the left) or above (tmp on the right); the result is
 * [.., r] and a lower tmp the group just below it, so every COMBINE joins
 * adjacent rank ranges in order (reproducible, any p, non-commutative
 * operators). */
#include "plan/algorithms.h"
#include "plan/exchange.h"

/* Where one block's values are at a rank. */
typedef struct rd_state {
    trd_xbuild *x;
    trd_xrange blk;
    int32_t partial; /* the slot of the partial result */
    int32_t result;  /* the slot of the result (-1: none yet, an exscan) */
    int32_t written; /* the step that last wrote the partial result */
    int32_t last;    /* the previous round's last step */
} rd_state;

/* The slot tmp is received into: neither the partial result's nor the
 * result's. */
static int32_t tmp_slot(const rd_state *s)
{
    int32_t k = 0;
    while (k == s->partial || k == s->result)
        k++;
    return k;
}

/* A round with a higher partner: partial = partial (+) tmp, into the slot
 * tmp arrived in (the partial result's old slot is free then). */
static void round_higher(rd_state *s, int32_t dst)
{
    int32_t t = tmp_slot(s);
    int32_t sent = trd_xb_send_slot(s->x, dst, s->partial, s->blk, s->written, -1);
    int32_t got = trd_xb_recv(s->x, dst, t, s->blk, s->last, -1);
    s->written = s->last =
        trd_xb_combine_into(s->x, TRD_SIDE_LEFT, t, s->partial, s->blk, got, sent);
    s->partial = t;
}

/* A round with a lower partner: partial = tmp (+) partial, and result =
 * tmp (+) result (exscan, the first time: result = tmp, left where it
 * arrived; scan, while the two are one value: nothing more). */
static void round_lower(rd_state *s, int32_t dst)
{
    int32_t t = tmp_slot(s);
    int32_t sent = trd_xb_send_slot(s->x, dst, s->partial, s->blk, s->written, -1);
    int32_t got = trd_xb_recv(s->x, dst, t, s->blk, s->last, -1);
    s->written = s->last =
        trd_xb_combine_into(s->x, TRD_SIDE_LEFT, s->partial, t, s->blk, got, sent);
    if (s->result < 0) {
        s->result = t;
    } else if (s->result != s->partial && t == 0) { /* the result moves into slot 0 */
        s->last = trd_xb_combine_into(s->x, TRD_SIDE_RIGHT, 0, s->result, s->blk, s->last, -1);
        s->result = 0;
    } else if (s->result != s->partial) {
        s->last = trd_xb_combine_into(s->x, TRD_SIDE_LEFT, s->result, t, s->blk, s->last, -1);
    }
}

/* Block j at rank r; ctx: the plan's parameters. */
static void emit_block(trd_xbuild *x, const void *ctx, int32_t r, int32_t j)
{
    const trd_params *prm = ctx;
    int32_t p = (int32_t)prm->n;
    bool exscan = prm->collective == TRD_COLL_EXSCAN;
    rd_state s = {.x = x, .blk = {.block = j, .blocks = 1}, .partial = 0,
                  .result = exscan ? -1 : 0, .written = -1, .last = -1};
    for (int64_t mask = 1; mask < p; mask *= 2) {
        int32_t dst = r ^ (int32_t)mask;
        if (dst >= p)
            continue;
        if (dst > r)
            round_higher(&s, dst);
        else
            round_lower(&s, dst);
    }
    if (s.result > 0) /* an exscan's result left in scratch */
        trd_xb_copy(x, 0, s.result, s.blk, s.last, -1);
}

trd_status trd_schedule_scan_recursive_doubling(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    int32_t rounds = 0;
    while (rounds < 31 && ((int64_t)1 << rounds) < p)
        rounds++;
    /* Per block and rank: at most 4 steps a round, and one COPY. */
    double steps = (4.0 * rounds + 1.0) * p * m;
    return trd_xb_build_segments(plan, (double)m, steps, emit_block, &plan->params);
}

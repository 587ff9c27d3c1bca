/* star_ir.c: the schedule IR of an algorithm on the n-star graph (star.h):
 * every rank's program, written from the rounds of its generator, so the
 * simulator, the threads runtime and MPI run exactly the rounds that
 * the verifier replays.
 *
 * Slots: 0 is the result buffer; 1 the outgoing buffer (only when a round
 * keeps a message, as the paper's algorithm does); then two landing slots
 * for added messages, used in turn, so that a rank receives the next
 * round's message while it adds this one's.  In a round a rank that sends
 * posts a SEND of slot 0 (RESULT) or 1 (OUTGOING); a rank that receives
 * posts a RECV (into slot 0 for TAKE, slot 1 for KEEP, a landing slot for
 * ADD) and, for ADD and KEEP, a COMBINE into slot 0 (LEFT: the operator is
 * commutative).  Rounds are not barriers: a step waits only for the data
 * it needs (at most two deps, so each chain's last step covers the earlier
 * ones):
 *   - SEND of slot 0: the last step that wrote or sent slot 0 (last0);
 *   - SEND of slot 1: the last step that wrote or sent slot 1 (last1);
 *   - RECV into slot 1: last1 and the COMBINE that read slot 1;
 *   - RECV into a landing slot: the COMBINE that read it last;
 *   - RECV into slot 0: last0;
 *   - COMBINE: its RECV and last0;
 * and a SEND or RECV also waits for the rank's previous SEND to (RECV
 * from) the same neighbour where those deps do not already order them:
 * the wire matches the messages of one pair in the order their steps are
 * posted (MPI's non-overtaking rule), which must be program order.  (In
 * the paper's schedule the message along link d at level k would otherwise
 * be received into a landing slot free since the start, before the one
 * along link d at level d.)
 * With m segments every block runs all the rounds on its own (block-major
 * programs, as in recursive_doubling.c). */
#include <stdlib.h>

#include "core/error.h"
#include "plan/exchange.h"
#include "plan/star.h"

typedef struct emit_state {
    int32_t last0, last1, read1; /* see above */
    int32_t landed[2];           /* the COMBINE that read each landing slot */
    int32_t adds;                /* ADD receives so far: which landing slot */
    int32_t land0;               /* the first landing slot */
    int32_t npeers;              /* neighbours met so far (at most n - 1) */
    int32_t peer[TRD_STAR_N_MAX], sent[TRD_STAR_N_MAX], got[TRD_STAR_N_MAX]; /* the last
                                    SEND to / RECV from each (-1: none) */
} emit_state;

/* The index of neighbour `peer` in e's table (added when new). */
static int32_t peer_index(emit_state *e, int32_t peer)
{
    int32_t i = 0;
    while (i < e->npeers && e->peer[i] != peer)
        i++;
    if (i == e->npeers) {
        e->peer[e->npeers++] = peer;
        e->sent[i] = e->got[i] = -1;
    }
    return i;
}

static void emit_send(trd_xbuild *x, emit_state *e, const trd_star_round *rd, int32_t to,
                      trd_xrange blk)
{
    int32_t p = peer_index(e, to);
    if (rd->send == TRD_STAR_SEND_RESULT)
        e->sent[p] = e->last0 = trd_xb_send_slot(x, to, 0, blk, e->last0, e->sent[p]);
    else
        e->sent[p] = e->last1 = trd_xb_send_slot(x, to, 1, blk, e->last1, e->sent[p]);
}

/* A KEEP receive needs no channel dep: it is the first message from its
 * neighbour (level k brings link k into use). */
static void emit_recv(trd_xbuild *x, emit_state *e, const trd_star_round *rd, int32_t from,
                      trd_xrange blk)
{
    int32_t p = peer_index(e, from);
    if (rd->recv == TRD_STAR_RECV_TAKE) {
        e->got[p] = e->last0 = trd_xb_recv(x, from, 0, blk, e->last0, e->got[p]);
    } else if (rd->recv == TRD_STAR_RECV_KEEP) {
        e->got[p] = e->last1 = trd_xb_recv(x, from, 1, blk, e->last1, e->read1);
        e->last0 = e->read1 = trd_xb_combine_from(x, TRD_SIDE_LEFT, 1, blk, e->last1, e->last0);
    } else {
        int32_t i = e->adds++ % 2, slot = e->land0 + i;
        e->got[p] = trd_xb_recv(x, from, slot, blk, e->landed[i], e->got[p]);
        e->last0 = e->landed[i] =
            trd_xb_combine_from(x, TRD_SIDE_LEFT, slot, blk, e->got[p], e->last0);
    }
}

/* to[i * p + r] and from[i * p + r]: whom rank r sends to and receives
 * from in round i (-1: nobody). */
static trd_status roles_make(const trd_star_sched *s, int32_t **to, int32_t **from)
{
    size_t p = (size_t)s->nodes, size = s->rounds * p;
    *to = malloc((size ? size : 1) * sizeof **to);
    *from = malloc((size ? size : 1) * sizeof **from);
    if (!*to || !*from)
        return trd_fail(TRD_ENOMEM, "S_%d: out of memory for the roles of %zu ranks in %zu "
                        "rounds", (int)s->n, p, s->rounds);
    for (size_t k = 0; k < size; k++)
        (*to)[k] = (*from)[k] = -1;
    for (size_t i = 0; i < s->rounds; i++)
        for (size_t j = s->round[i].first; j < s->round[i].first + s->round[i].count; j++) {
            trd_star_xfer t = s->xfer[j];
            (*to)[i * p + (size_t)t.from] = t.to;
            (*from)[i * p + (size_t)t.to] = t.from;
        }
    return TRD_OK;
}

/* Rank r's program: every block through every round. */
static void emit_rank(trd_xbuild *x, const trd_star_sched *s, const int32_t *to,
                      const int32_t *from, int32_t r, int32_t m, int32_t land0)
{
    size_t p = (size_t)s->nodes;
    for (int32_t j = 0; j < m; j++) {
        emit_state e = {.last0 = -1, .last1 = -1, .read1 = -1, .landed = {-1, -1},
                        .land0 = land0};
        trd_xrange blk = {.block = j, .blocks = 1};
        for (size_t i = 0; i < s->rounds; i++) {
            if (to[i * p + (size_t)r] >= 0)
                emit_send(x, &e, &s->round[i], to[i * p + (size_t)r], blk);
            if (from[i * p + (size_t)r] >= 0)
                emit_recv(x, &e, &s->round[i], from[i * p + (size_t)r], blk);
        }
    }
}

/* p = n! and a commutative operator: their registry rows' flags
 * (TRD_CAP_FACTORIAL_P, TRD_CAP_COMMUTATIVE), checked before planning. */
trd_status trd_star_plan(trd_plan *plan, trd_star_gen_fn gen)
{
    int32_t n = trd_star_dimension(plan->params.n), m = (int32_t)plan->params.segments;
    int32_t *to = NULL, *from = NULL;
    trd_status st;
    trd_star_sched s;
    trd_star_sched_init(&s, n, false); /* the size first: at most 3 steps a rank a round */
    if ((st = gen(&s)) != TRD_OK)
        goto done;
    trd_xbuild x;
    if ((st = trd_xb_begin(&x, plan, m, 3.0 * (double)s.rounds * (double)s.nodes * m)) != TRD_OK)
        goto done;
    trd_star_sched_free(&s);
    trd_star_sched_init(&s, n, true);
    if ((st = gen(&s)) != TRD_OK || (st = roles_make(&s, &to, &from)) != TRD_OK)
        goto done;
    int32_t land0 = 1;
    for (size_t i = 0; i < s.rounds; i++)
        if (s.round[i].recv == TRD_STAR_RECV_KEEP)
            land0 = 2; /* slot 1 is the outgoing buffer */
    for (int32_t r = 0; r < (int32_t)s.nodes; r++) {
        trd_xb_rank(&x, r);
        emit_rank(&x, &s, to, from, r, m, land0);
    }
    st = trd_xb_end(&x);
done:
    trd_star_sched_free(&s);
    free(to);
    free(from);
    return st;
}

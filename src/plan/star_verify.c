/* star_verify.c: replays a schedule on S_n round by round and checks what
 * Oh, Choi and Primeaux claim of theirs (Theorems 2 and 3) - or what the
 * baseline must do - independently of how the generator reasons: it only
 * reads the rounds' transfers and what each round sends and does
 * (star.h), and keeps, for every node, the set of contributions in its
 * result and outgoing buffers (bitsets of n! bits) and their sums of a
 * random integer per node.  A round is synchronous: every message is the
 * sender's buffer at the start of the round.
 *
 * Checked: each node sends at most one message and receives at most one
 * per round (single-port), each transfer joins two neighbours along the
 * round's link (any link in a round of several); no contribution reaches
 * a node twice (trd_star_report.duplicates); at the end every node holds
 * all n! contributions and the sequential sum; and the number of rounds is
 * the paper's (Theorem 3 for the star algorithm). */
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/memory.h"
#include "plan/star.h"

/* A buffer of every node: bitsets of `words` words, and sums. */
typedef struct sets {
    uint64_t *bits;
    int64_t *sum;
} sets;

typedef struct replay {
    const trd_star_sched *s;
    size_t words;
    sets result, outgoing, inbox; /* inbox: the message of this round */
    uint8_t *sent, *got, *took;   /* per node: this round; took: a result message */
    uint8_t *valid;               /* per transfer of the round: it respects the model */
    trd_star_report *rep;
} replay;

static uint64_t *bits_of(const replay *rp, const sets *b, int64_t node)
{
    return b->bits + (size_t)node * rp->words;
}

static trd_status sets_make(sets *b, size_t nodes, size_t words)
{
    b->bits = calloc(nodes * words, sizeof *b->bits);
    b->sum = calloc(nodes, sizeof *b->sum);
    return b->bits && b->sum ? TRD_OK
                             : trd_fail(TRD_ENOMEM, "star replay: out of memory for %zu nodes",
                                        nodes);
}

static void sets_free(sets *b)
{
    free(b->bits);
    free(b->sum);
}

/* The link joining a and b (their permutations differ exactly in the first
 * and k-th symbols, swapped), or 0. */
static int32_t link_between(int32_t n, int32_t a, int32_t b)
{
    uint8_t pa[TRD_STAR_N_MAX], pb[TRD_STAR_N_MAX];
    trd_star_label(n, a, pa);
    trd_star_label(n, b, pb);
    int32_t k = 0, differ = 0;
    for (int32_t i = 1; i < n; i++)
        if (pa[i] != pb[i]) {
            differ++;
            k = i + 1;
        }
    return differ == 1 && pa[0] == pb[k - 1] && pb[0] == pa[k - 1] ? k : 0;
}

/* Whether transfer t of round rd respects the port model and the graph. */
static bool port_ok(replay *rp, const trd_star_round *rd, trd_star_xfer t)
{
    int64_t nodes = rp->s->nodes;
    if (t.from < 0 || t.from >= nodes || t.to < 0 || t.to >= nodes)
        return false;
    int32_t link = link_between(rp->s->n, t.from, t.to);
    bool ok = link != 0 && (rd->link == 0 || rd->link == link);
    ok = ok && rp->sent[t.from] == 0 && rp->got[t.to] == 0;
    rp->sent[t.from] = rp->got[t.to] = 1;
    return ok;
}

/* |a & b|, or |a| when b is NULL. */
static int64_t popcount_and(const uint64_t *a, const uint64_t *b, size_t words)
{
    int64_t c = 0;
    for (size_t w = 0; w < words; w++)
        c += __builtin_popcountll(b ? a[w] & b[w] : a[w]);
    return c;
}

static void put(replay *rp, sets *dst, int32_t node, const uint64_t *bits, int64_t sum, bool add)
{
    uint64_t *d = bits_of(rp, dst, node);
    for (size_t w = 0; w < rp->words; w++)
        d[w] = add ? d[w] | bits[w] : bits[w];
    dst->sum[node] = add ? dst->sum[node] + sum : sum;
}

/* The receiver `to` handles the message in its inbox as round rd says. */
static void deliver(replay *rp, const trd_star_round *rd, int32_t to)
{
    const uint64_t *msg = bits_of(rp, &rp->inbox, to);
    int64_t sum = rp->inbox.sum[to];
    uint64_t *res = bits_of(rp, &rp->result, to);
    if (rd->recv == TRD_STAR_RECV_TAKE) { /* a second result repeats the first */
        rp->rep->duplicates += rp->took[to] ? popcount_and(msg, res, rp->words) : 0;
        rp->took[to] = 1;
        put(rp, &rp->result, to, msg, sum, false);
        return;
    }
    rp->rep->duplicates += popcount_and(msg, res, rp->words);
    if (rd->recv == TRD_STAR_RECV_KEEP)
        put(rp, &rp->outgoing, to, msg, sum, false);
    put(rp, &rp->result, to, msg, sum, true);
}

static void replay_round(replay *rp, const trd_star_round *rd)
{
    const trd_star_xfer *x = rp->s->xfer + rd->first;
    size_t nodes = (size_t)rp->s->nodes;
    memset(rp->sent, 0, nodes);
    memset(rp->got, 0, nodes);
    uint8_t *valid = rp->valid;
    for (size_t j = 0; j < rd->count; j++) {
        valid[j] = port_ok(rp, rd, x[j]);
        rp->rep->port_violations += !valid[j];
    }
    const sets *src = rd->send == TRD_STAR_SEND_RESULT ? &rp->result : &rp->outgoing;
    for (size_t j = 0; j < rd->count; j++) /* every message leaves at the start */
        if (valid[j])
            put(rp, &rp->inbox, x[j].to, bits_of(rp, src, x[j].from), src->sum[x[j].from],
                false);
    for (size_t j = 0; j < rd->count; j++)
        if (valid[j])
            deliver(rp, rd, x[j].to);
    rp->rep->transfers += (int64_t)rd->count;
}

/* Node i's own contribution: bit i and a random integer in [-1000, 1000];
 * *total gets their sum over all nodes. */
static trd_status seed_values(replay *rp, uint64_t seed, int64_t *total)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!rng)
        return trd_fail(TRD_ENOMEM, "star replay: out of memory for a random generator");
    gsl_rng_set(rng, (unsigned long)seed);
    *total = 0;
    for (int64_t i = 0; i < rp->s->nodes; i++) {
        int64_t v = (int64_t)gsl_rng_uniform_int(rng, 2001) - 1000;
        bits_of(rp, &rp->result, i)[i / 64] |= (uint64_t)1 << (i % 64);
        rp->result.sum[i] = v;
        *total += v;
    }
    gsl_rng_free(rng);
    return TRD_OK;
}

static void final_check(replay *rp, int64_t total)
{
    for (int64_t i = 0; i < rp->s->nodes; i++) {
        int64_t have = popcount_and(bits_of(rp, &rp->result, i), NULL, rp->words);
        rp->rep->incomplete += have != rp->s->nodes;
        rp->rep->wrong_sums += rp->result.sum[i] != total;
    }
}

static trd_status run_replay(replay *rp, uint64_t seed)
{
    size_t nodes = (size_t)rp->s->nodes, most = nodes; /* transfers in a round */
    for (size_t i = 0; i < rp->s->rounds; i++)
        most = rp->s->round[i].count > most ? rp->s->round[i].count : most;
    trd_status st = TRD_OK;
    if ((st = sets_make(&rp->result, nodes, rp->words)) != TRD_OK ||
        (st = sets_make(&rp->outgoing, nodes, rp->words)) != TRD_OK ||
        (st = sets_make(&rp->inbox, nodes, rp->words)) != TRD_OK)
        return st;
    rp->sent = malloc(nodes);
    rp->got = malloc(nodes);
    rp->took = calloc(nodes, 1);
    rp->valid = malloc(most);
    if (!rp->sent || !rp->got || !rp->took || !rp->valid)
        return trd_fail(TRD_ENOMEM, "star replay: out of memory for %zu nodes", nodes);
    int64_t total = 0;
    if ((st = seed_values(rp, seed, &total)) != TRD_OK)
        return st;
    for (size_t i = 0; i < rp->s->rounds; i++)
        replay_round(rp, &rp->s->round[i]);
    final_check(rp, total);
    return TRD_OK;
}

static trd_status check_n(int32_t n)
{
    if (n < 1)
        return trd_fail(TRD_EINVAL, "n = %ld is out of range: S_n needs n >= 1", (long)n);
    if (n > TRD_STAR_REPLAY_MAX)
        return trd_fail(TRD_EINVAL, "n = %ld is too large to replay: the replay keeps a set of "
                        "n! contributions per node and buffer (n!^2 bits), so it stops at "
                        "n = %d (S_%d, %lld nodes)", (long)n, TRD_STAR_REPLAY_MAX,
                        TRD_STAR_REPLAY_MAX, (long long)trd_star_factorial(TRD_STAR_REPLAY_MAX));
    int64_t nodes = trd_star_factorial(n);
    return trd_check_memory(nodes, 3.0 * (double)((nodes + 63) / 64) * 8.0 + 64.0,
                            "the star replay");
}

trd_status trd_star_replay(const trd_star_sched *s, uint64_t seed, trd_star_report *report)
{
    trd_status st = check_n(s->n);
    if (st != TRD_OK)
        return st;
    if (!s->enumerated)
        return trd_fail(TRD_EINVAL, "star replay: the schedule of S_%d lists no transfers",
                        (int)s->n);
    *report = (trd_star_report){.n = s->n, .nodes = s->nodes, .steps = (int64_t)s->rounds};
    replay rp = {.s = s, .words = (size_t)(s->nodes + 63) / 64, .rep = report};
    st = run_replay(&rp, seed);
    sets_free(&rp.result);
    sets_free(&rp.outgoing);
    sets_free(&rp.inbox);
    free(rp.sent);
    free(rp.got);
    free(rp.took);
    free(rp.valid);
    return st;
}

trd_status trd_star_verify(const char *algo, int32_t n, uint64_t seed, trd_star_report *report)
{
    const trd_star_algo *a = trd_star_algo_find(algo);
    if (!a)
        return TRD_ENOALGO;
    if (!report)
        return trd_fail(TRD_EINVAL, "trd_star_verify: NULL argument (report)");
    trd_status st = check_n(n); /* before the schedule is enumerated */
    if (st != TRD_OK)
        return st;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    trd_star_sched s;
    trd_star_sched_init(&s, n, true);
    *report = (trd_star_report){.n = n, .nodes = s.nodes};
    if ((st = a->gen(&s)) == TRD_OK)
        st = trd_star_replay(&s, seed, report);
    report->expected_steps = a->paper_steps(n);
    report->verified = st == TRD_OK && report->steps == report->expected_steps &&
                       !report->duplicates && !report->port_violations &&
                       !report->incomplete && !report->wrong_sums;
    trd_star_sched_free(&s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    report->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return st;
}

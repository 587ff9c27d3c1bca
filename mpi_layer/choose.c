/* choose.c: the algorithm and cost model a call runs with.
 *
 * `auto` is the library's own: trd_comm_explain ranks every registered
 * algorithm by the time the model predicts for the call, and the first
 * that can run it is taken, its plan built under the same model.  The
 * model is the communicator's measured profile (trd_comm_profile, with
 * the layer's sum of doubles, once per set of processes: known.c; a
 * predefined operator's combine scales with its element size) and, for a
 * user operator, the
 * operator's own cost - what no MPI library charges - as the program's
 * reductions have shown it: every call of the user function is timed
 * (ops.c), and the ranks agree on the largest cost line (a max-allreduce
 * of treduce's).  The layer never calls a user function outside a
 * reduction (it might check its operands, or count its calls), so the
 * first call of an argument set with an operator not yet seen runs with
 * the profile's cheap combine and its choice is provisional: the next
 * call with those arguments chooses again, with the cost its predecessor
 * showed.
 *
 * Measuring and agreeing are collective.  They happen at the first call of
 * an argument set that needs them, which is the same call on every rank:
 * every rank runs the same sequence of calls on a communicator, the tables
 * below are filled and replaced by that sequence alone, and treduce
 * operators are per function, not per handle (ops.c).
 *
 * Only the algorithms that run the call's collective are candidates (a
 * reduce-scatter's count is its whole input).  Left out of `auto` and
 * refused when forced: `star` for an allreduce whose
 * operator rounds (floating sums and products, user operators), because
 * there every rank adds in its own order and the ranks' results would
 * differ in the last bits.  TREDUCE_MPI_REPRODUCIBLE=1 ranks under the
 * library's fixed default model instead (the choice must not depend on
 * timings) and takes static algorithms only; TREDUCE_MPI_ALGO=NAME runs
 * NAME with that default model too (d = c = 1: only their ratio shapes
 * the trees), measuring nothing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"

/* The communicator's platform: agreed at its creation (known.c), or
 * measured now and kept for the communicators of its processes to come. */
static trd_status measure_platform(tml_comm *c)
{
    if (c->known.have_platform)
        return TRD_OK;
    const trd_op *sum = tml_kernel(TML_SUM, TML_F64);
    trd_status st = sum ? trd_comm_profile(c->tc, sum, &c->known.platform) : TRD_ENOMEM;
    c->known.have_platform = st == TRD_OK;
    if (st == TRD_OK) {
        trd_comm_shm_probe(c->tc, &c->known.probe[0], &c->known.probe[1]);
        tml_known_add(c->world, c->size, &c->known);
    }
    return st;
}

/* A user operator's cost line, agreed by the ranks the first time one of
 * them has seen the operator run (*out NULL until then). */
static trd_status agree_user(tml_comm *c, const tml_run *r, const tml_user_model **out)
{
    *out = NULL;
    for (int i = 0; i < TML_USER_MODELS; i++)
        if (c->users[i].op == r->op) {
            *out = &c->users[i];
            return TRD_OK;
        }
    double mine[3] = {0, 0, 0}, all[3]; /* fixed, per element, seen */
    if (tml_user_cost(r->op, &mine[0], &mine[1]))
        mine[2] = 1;
    /* the wire's agreement: a collective here would replace the core's memo */
    trd_status st = trd_comm_agree_max(c->tc, mine, all, 3);
    if (st != TRD_OK || all[2] == 0)
        return st;
    tml_user_model *m = &c->users[c->next_user];
    c->next_user = (c->next_user + 1) % TML_USER_MODELS;
    *m = (tml_user_model){.op = r->op, .fixed = all[0], .per_element = all[1]};
    *out = m;
    return TRD_OK;
}

/* The count the model prices a call at.  A reduce-scatter's is its whole
 * input, which libtreduce prices as p parts of its mean; with uneven
 * parts (MPI_Reduce_scatter) the whole need not divide by p, and the mean
 * is rounded up. */
static int64_t priced(const tml_comm *c, const tml_run *r)
{
    if (r->coll != TRD_COLL_REDUCE_SCATTER)
        return r->n;
    return (r->n + c->size - 1) / c->size * c->size;
}

/* opts under the measured model of this call; *provisional: a user
 * operator's cost is not known yet. */
static trd_status apply_model(tml_comm *c, const tml_run *r, trd_coll_opts *opts,
                              bool *provisional)
{
    const tml_user_model *m = NULL;
    trd_status st = measure_platform(c);
    if (st == TRD_OK && r->user)
        st = agree_user(c, r, &m);
    if (st != TRD_OK)
        return st;
    trd_profile p = c->known.platform;
    *provisional = r->user && !m;
    if (m) {
        p.combine_fixed = m->fixed;
        p.per_element = m->per_element;
    } else {
        p.per_element *= (double)r->elem / sizeof(double);
    }
    st = trd_profile_apply(&p, priced(c, r), r->elem, opts);
    /* the memory curve must outlive the calls: the communicator's, not p's */
    if (st == TRD_OK && opts->stream_bw)
        opts->stream_bw = c->known.platform.stream_bw;
    return st;
}

/* Where every rank adds in its own order, ranks that must end with the same
 * bits (an allreduce's) would not with an operator that rounds. */
static bool excluded(const tml_run *r, const char *algo)
{
    return r->coll == TRD_COLL_ALLREDUCE && !r->exact && !strcmp(algo, "star");
}

/* What pick() decides from (its answer depends on nothing else: the same
 * on every rank of every communicator of that size), zeroed first so that
 * whole keys compare. */
typedef struct pick_key {
    int32_t size, root, streams;
    trd_collective coll;
    bool exact;
    int64_t n, K, segment_bytes;
    size_t elem;
    const trd_op *op;
    double d, c, latency, combine_fixed, flight, recv_combine_saving, parallelism;
    double far_d, far_latency;
    uint64_t stream_bw; /* a hash of the curve */
    uint64_t nodes;     /* a hash of the node of each rank (trd_comm_node) */
} pick_key;

/* FNV-1a over 8 more bytes. */
static uint64_t fnv(uint64_t h, uint64_t bits)
{
    return (h ^ bits) * 0x100000001b3ull;
}

static void key_of(const tml_comm *c, const tml_run *r, const trd_coll_opts *o, pick_key *k)
{
    memset(k, 0, sizeof *k);
    k->size = c->size;
    k->root = r->root;
    k->coll = r->coll;
    k->exact = r->exact;
    k->n = r->n;
    k->elem = r->elem;
    k->op = r->op;
    k->K = o->K;
    k->segment_bytes = o->segment_bytes;
    k->d = o->d;
    k->c = o->c;
    k->latency = o->latency;
    k->combine_fixed = o->combine_fixed;
    k->flight = o->flight;
    k->recv_combine_saving = o->recv_combine_saving;
    k->parallelism = o->parallelism;
    k->far_d = o->far_d;
    k->far_latency = o->far_latency;
    k->streams = o->stream_bw ? o->streams : 0;
    k->stream_bw = 0xcbf29ce484222325ull; /* FNV-1a over the values' bits */
    for (int32_t i = 0; i < k->streams; i++) {
        uint64_t bits;
        memcpy(&bits, &o->stream_bw[i], sizeof bits);
        k->stream_bw = fnv(k->stream_bw, bits);
    }
    k->nodes = 0xcbf29ce484222325ull; /* the plans read it: one size, other hosts */
    for (int32_t r = 0; r < c->size; r++)
        k->nodes = fnv(k->nodes, (uint64_t)(uint32_t)trd_comm_node(c->tc, r));
}

/* The picks made in this process, for the communicators to come: ranking
 * every algorithm costs tens of microseconds, more than a small call, and
 * each new communicator would pay it again at its first call. */
#define PICKS 64
static struct {
    bool used;
    pick_key key;
    tml_reason why;
    double predicted, next_predicted;
    char next[TML_ALGO_MAX];
    char algo[TML_ALGO_MAX];
} picked[PICKS];
static int next_pick;
static pthread_mutex_t pick_lock = PTHREAD_MUTEX_INITIALIZER;

static bool recall(const pick_key *k, tml_choice *ch)
{
    bool found = false;
    pthread_mutex_lock(&pick_lock);
    for (int i = 0; i < PICKS && !found; i++)
        if (picked[i].used && !memcmp(&picked[i].key, k, sizeof *k)) {
            ch->refused = picked[i].why;
            memcpy(ch->algo, picked[i].algo, sizeof ch->algo);
            memcpy(ch->next, picked[i].next, sizeof ch->next);
            ch->predicted = picked[i].predicted;
            ch->next_predicted = picked[i].next_predicted;
            found = true;
        }
    pthread_mutex_unlock(&pick_lock);
    ch->opts.algo = ch->algo;
    return found;
}

static void remember(const pick_key *k, const tml_choice *ch)
{
    pthread_mutex_lock(&pick_lock);
    picked[next_pick].used = true;
    picked[next_pick].key = *k;
    picked[next_pick].why = ch->refused;
    memcpy(picked[next_pick].algo, ch->algo, sizeof ch->algo);
    memcpy(picked[next_pick].next, ch->next, sizeof ch->next);
    picked[next_pick].predicted = ch->predicted;
    picked[next_pick].next_predicted = ch->next_predicted;
    next_pick = (next_pick + 1) % PICKS;
    pthread_mutex_unlock(&pick_lock);
}

/* The algorithm of ch (explain's first that runs the call, or the forced
 * one if it can). */
static tml_reason pick(tml_comm *c, const tml_run *r, tml_choice *ch, trd_status *err)
{
    size_t n = trd_algo_count();
    trd_candidate *cand = malloc(n * sizeof *cand);
    const char *forced = strcmp(tml_g.cfg.algo, "auto") ? tml_g.cfg.algo : NULL;
    tml_reason why = TML_ALGO;
    *err = cand ? trd_comm_explain(c->tc, priced(c, r), r->op, r->root, r->coll, &ch->opts,
                                   cand, &n)
                : TRD_ENOMEM;
    if (*err == TRD_EUNSUPPORTED) /* no algorithm can run it */
        *err = TRD_OK;
    else
        for (size_t i = 0; *err == TRD_OK && i < n; i++) {
            bool runs = cand[i].status == TRD_OK && !excluded(r, cand[i].algo);
            if (runs && why == TML_OK && !ch->next[0]) { /* the runner-up, for VERBOSE */
                snprintf(ch->next, sizeof ch->next, "%s", cand[i].algo);
                ch->next_predicted = cand[i].predicted;
            }
            if (runs && why != TML_OK && (!forced || !strcmp(forced, cand[i].algo))) {
                snprintf(ch->algo, sizeof ch->algo, "%s", cand[i].algo);
                ch->predicted = cand[i].predicted;
                why = TML_OK;
            }
        }
    free(cand);
    ch->opts.algo = ch->algo;
    return why;
}

tml_reason tml_choose(tml_comm *c, const tml_run *r, const tml_choice **choice,
                      trd_status *err)
{
    *err = TRD_OK;
    tml_choice *ch = NULL;
    for (int i = 0; i < TML_CHOICES && !ch; i++) {
        tml_choice *e = &c->choice[i];
        if (e->used && e->op == r->op && e->count == r->n && e->root == r->root &&
            e->coll == r->coll)
            ch = e;
    }
    if (ch && !ch->provisional) {
        *choice = ch;
        return ch->refused;
    }
    if (!ch) {
        ch = &c->choice[c->next_choice];
        c->next_choice = (c->next_choice + 1) % TML_CHOICES;
    }
    *ch = (tml_choice){.op = r->op, .count = r->n, .root = r->root, .coll = r->coll};
    trd_coll_opts_init(&ch->opts);
    ch->opts.measure_model = false; /* the model is given here, or the default */
    ch->opts.reproducible = tml_g.cfg.reproducible;
    if (!strcmp(tml_g.cfg.algo, "auto") && !tml_g.cfg.reproducible &&
        (*err = apply_model(c, r, &ch->opts, &ch->provisional)) != TRD_OK)
        return TML_OK;
    pick_key k;
    key_of(c, r, &ch->opts, &k);
    if (!recall(&k, ch)) {
        ch->refused = pick(c, r, ch, err);
        if (*err == TRD_OK && !ch->provisional)
            remember(&k, ch);
    }
    ch->used = *err == TRD_OK;
    *choice = ch;
    return ch->refused;
}

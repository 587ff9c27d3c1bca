/* comm_state.c: what keeps a communicator's ranks in step (treduce.h,
 * "Faults and deadlines"; docs/RUNTIME.md).
 *
 * State.  A communicator is ok until a call fails after it has begun to
 * communicate (a deadline, a lost or failed peer, a mismatched call, an
 * operator's error, memory): then it is failed for good, on this rank and,
 * through the wire (wire.h abort), on its peers, and every later call
 * returns that first failure.  A call refused by its argument checks has
 * sent nothing: it leaves the communicator as it was.
 *
 * Signature.  Each call's messages carry a hash of what its plan depends
 * on and of its operator, and the number of calls before it
 * (wire/callsig.h): ranks whose calls differ get an error naming
 * both instead of exchanging messages that match by tag alone.
 *
 * Deadline-bounded collectives of the library's own: the barrier, and an
 * agreement on a few values (the largest of each over all ranks), both
 * wire operations with the communicator's deadline - what calibration,
 * profiles, tuning and the CLI use instead of MPI's collectives, which
 * have no deadline - and a gather of a few bytes from every rank, made of
 * the agreement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/registry.h"
#include "runtime/comm.h"
#include "runtime/op.h"

trd_status trd_comm_fail(trd_comm *c, trd_status st)
{
    if (st == TRD_OK)
        return st;
    char why[1024];
    snprintf(why, sizeof why, "%s", trd_errmsg());
    c->wire.abort(c->wire.ctx, st, why);
    return trd_fail(st, "%s", why);
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t mix(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ULL;
    return h;
}

static uint64_t mix_text(uint64_t h, const char *s)
{
    return s ? mix(h, s, strlen(s) + 1) : mix(h, "", 1);
}

#define MIX(h, v) mix((h), &(v), sizeof(v))

/* The heterogeneous costs a plan was built for, by value: every process
 * has its own copy of them. */
static uint64_t mix_costs(uint64_t h, const trd_costs *k)
{
    int64_t n = trd_costs_n(k);
    h = MIX(h, n);
    for (int64_t i = 0; i < n; i++) {
        double c = trd_costs_combine(k, i);
        h = MIX(h, c);
        for (int64_t j = 0; j < n; j++) {
            double d = trd_costs_transfer(k, i, j);
            h = MIX(h, d);
        }
    }
    return h;
}

void trd_comm_sign(const char *algo, const trd_comm_key *key, const trd_op *op,
                   trd_call_sig *sig)
{
    const trd_params *p = &key->params;
    uint64_t h = 0xCBF29CE484222325ULL;
    int64_t count = key->count, root = p->collective != TRD_COLL_REDUCE ? -1 : p->root;
    uint64_t elem = key->elem, flags = (uint64_t)p->collective | (uint64_t)p->noncommutative << 4 |
                                       (uint64_t)key->reproducible << 5 |
                                       (uint64_t)trd_op_is_commutative(op) << 6;
    *sig = (trd_call_sig){.algo = algo, .count = count, .elem = (uint32_t)elem,
                          .root = (int32_t)root};
    trd_op_names(op, &sig->op_kind, &sig->op_type);
    h = mix_text(h, algo);
    h = mix_text(h, sig->op_kind);
    h = mix_text(h, sig->op_type);
    h = MIX(h, count);
    h = MIX(h, root);
    h = MIX(h, elem);
    h = MIX(h, flags);
    h = MIX(h, p->segments);
    h = MIX(h, key->parts);
    h = MIX(h, p->K);
    h = MIX(h, p->d);
    h = MIX(h, p->c);
    h = MIX(h, p->latency);
    h = MIX(h, p->combine_fixed);
    h = MIX(h, p->flight);
    h = MIX(h, p->recv_combine_saving);
    h = MIX(h, p->far_d);
    h = MIX(h, p->far_latency);
    h = MIX(h, key->parallelism);
    if (p->costs && trd_algo_reads_costs(key->algo)) /* n^2 bases, once per argument set */
        h = mix_costs(h, p->costs);
    for (int64_t r = 0; p->node_of && trd_algo_uses_nodes(key->algo) && r < p->n; r++)
        h = MIX(h, p->node_of[r]); /* ranks given other maps plan otherwise: a mismatch */
    sig->hash = (uint32_t)(h ^ h >> 32);
}

trd_status trd_comm_barrier(trd_comm *c)
{
    if (!c)
        return trd_fail(TRD_EINVAL, "trd_comm_barrier: NULL communicator");
    trd_status st = trd_comm_usable(c);
    if (st != TRD_OK)
        return st;
    return trd_comm_fail(c, c->wire.barrier(c->wire.ctx, trd_comm_now(c) + c->timeout_s));
}

trd_status trd_comm_agree_max(trd_comm *c, const double *in, double *out, int64_t n)
{
    if (!c || ((!in || !out) && n > 0) || n < 0)
        return trd_fail(TRD_EINVAL, "trd_comm_agree_max: %s", !c ? "NULL communicator"
                        : n < 0 ? "n < 0" : "NULL values");
    trd_status st = trd_comm_usable(c);
    if (st != TRD_OK)
        return st;
    if (out != in && n > 0)
        memmove(out, in, (size_t)n * sizeof *out);
    int64_t at = 0;
    do { /* in rounds of what one agreement takes, each with the deadline */
        int32_t k = (int32_t)(n - at < TRD_WIRE_AGREE_MAX ? n - at : TRD_WIRE_AGREE_MAX);
        st = c->wire.agree(c->wire.ctx, k ? out + at : NULL, k, trd_comm_now(c) + c->timeout_s);
        at += k;
    } while (st == TRD_OK && at < n);
    return trd_comm_fail(c, st);
}

/* A gather as an agreement on the largest values: rank r's bytes, six to a
 * double (integers below 2^48, exact), fill slot r and every other rank
 * puts -1 there, below any of them, so the largest of each value is its
 * owner's. */
enum { GATHER_PACK = 6 };

trd_status trd_comm_allgather(trd_comm *c, const void *in, void *out, size_t bytes)
{
    if (!c || ((!in || !out) && bytes > 0))
        return trd_fail(TRD_EINVAL, "trd_comm_allgather: %s", !c ? "NULL communicator"
                        : "NULL buffer");
    size_t p = (size_t)trd_comm_size(c), per = (bytes + GATHER_PACK - 1) / GATHER_PACK;
    if (per > SIZE_MAX / sizeof(double) / p || per * p > (size_t)INT64_MAX)
        return trd_fail(TRD_EINVAL, "trd_comm_allgather: %zu bytes from each of %zu ranks "
                        "is beyond memory", bytes, p);
    trd_status st = trd_comm_usable(c);
    if (st != TRD_OK || bytes == 0)
        return st;
    double *v = malloc(per * p * sizeof *v);
    if (!v) /* the others are in the call already: they learn it at once */
        return trd_comm_fail(c, trd_fail(TRD_ENOMEM, "trd_comm_allgather: out of memory "
                                         "for %zu values", per * p));
    const unsigned char *mine = in;
    for (size_t i = 0; i < per * p; i++)
        v[i] = -1.0;
    for (size_t k = 0, at = (size_t)trd_comm_rank(c) * per; k < per; k++) {
        uint64_t x = 0;
        for (size_t b = GATHER_PACK; b-- > 0;)
            x = x << 8 | (k * GATHER_PACK + b < bytes ? mine[k * GATHER_PACK + b] : 0u);
        v[at + k] = (double)x;
    }
    st = trd_comm_agree_max(c, v, v, (int64_t)(per * p));
    unsigned char *all = out;
    for (size_t r = 0; st == TRD_OK && r < p; r++)
        for (size_t i = 0; i < bytes; i++) {
            uint64_t x = (uint64_t)v[r * per + i / GATHER_PACK];
            all[r * bytes + i] = (unsigned char)(x >> 8 * (i % GATHER_PACK));
        }
    free(v);
    return st;
}

bool trd_comm_long_choice(const trd_comm *c, size_t bytes)
{
    return c->wire.long_choice && c->wire.long_choice(c->wire.ctx, bytes);
}

trd_status trd_comm_long_path(trd_comm *c, bool other)
{
    return c->wire.long_path ? c->wire.long_path(c->wire.ctx, other) : TRD_OK;
}

double trd_comm_profile_timeout(const trd_comm *c)
{
    return c->test ? c->test->profile_timeout_s : TRD_PROFILE_TIMEOUT;
}

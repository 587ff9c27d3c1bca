/* mpi_fail.c: failures of the MPI wire (wire.h, "Failures") and the call
 * signature in its tags (callsig.h).
 *
 * A failure.  The first one is recorded (code, rank, message); a failure
 * of this rank's own is sent to every peer as a notice (a control message
 * that each rank keeps a receive posted for, C_ABORT_IN) and, on one
 * node, set in the rings' shared flag (shm.h), which every poll reads: a
 * peer then stops within a poll (rings) or CTRL_POLLS polls (MPI) of its
 * wait, with the first failure's code and message, instead of at its own
 * deadline.  A rank that learns of a failure tells nobody: the failed rank
 * told everyone.
 *
 * Withdrawing (abort).  The rings' pending sends and receives are dropped
 * (shm.c copies in and out only when polled: nothing touches their
 * buffers any more).  MPI's receives are cancelled and every MPI request
 * is tested until it completes or GRACE_S pass.  What MPI cannot promise
 * stays: a send no peer received keeps its buffer (MPI only reads it, and
 * only if a peer receives the message later - the peers cancel theirs on
 * the notice); a receive MPI had matched before the cancel and that did
 * not complete within the grace (its sender stopped mid-message) may still
 * be written if that sender resumes.  docs/RUNTIME.md says so.
 *
 * The signature.  Messages through MPI carry it in the tag, above the
 * wire's own tag (bits SIG_SHIFT and up, as many as MPI_TAG_UB leaves: 10
 * on Open MPI, 7 on MPICH): the call number mod 4 and the hash's top 8 (5)
 * bits, so messages of calls that differ there never match (the rings
 * compare all 64 bits at the first fragment).  A wait that stalls (nothing
 * for STALL_S, mpi.c) then looks for the mismatch, once per STALL_S: it
 * drains the wire's own messages and probes the first message
 * each awaited peer has sent it through MPI - one of the same call number
 * with other bits, or of a call number but ours and the next, is a
 * mismatch - and tells each awaited peer, once per call, which call it
 * waits in (a control message): a peer in a call of the same number with
 * another signature finds the mismatch when it reads it.  So mismatched
 * ranks that send each other nothing (each waits for the other) are found
 * too.  What escapes: two calls whose hashes agree in the tag's bits (one
 * pair in 256 on Open MPI): their messages may match, and only a stalled
 * rank's announcement (all 64 bits) then finds the mismatch. */
#include "wire_mpi/mpi_wire.h"

#ifdef TRD_HAVE_MPI

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "wire_mpi/mpi_internal.h"

#define GRACE_S 0.5 /* at most, for the requests of a failed call to complete */
#define SEQ_BITS 2

trd_status trd_mpi_check_usable(const mpi_wire *w)
{
    if (w->fail_code == TRD_OK)
        return TRD_OK;
    return trd_fail(w->fail_code, "mpi wire: rank %d failed: %s", w->fail_rank, w->fail.text);
}

/* Sends this rank's failure to every peer, synchronously (PMPI_Issend:
 * complete once received, which closing the wire waits for, mpi_close.c). */
static void notify(mpi_wire *w)
{
    if (w->shm)
        trd_shm_fail(w->shm, w->rank, w->fail_code, w->fail.text);
    if (!w->fail_req && !(w->fail_req = malloc((size_t)w->size * sizeof *w->fail_req)))
        return; /* out of memory: the peers find out at their deadlines */
    for (int q = 0; q < w->size; q++) {
        w->fail_req[q] = MPI_REQUEST_NULL;
        if (q != w->rank)
            PMPI_Issend(&w->fail, (int)sizeof w->fail, MPI_BYTE, q, w->ctrl_tag + T_ABORT,
                        w->comm, &w->fail_req[q]);
    }
}

static void record(mpi_wire *w, int rank, trd_status code, const char *text)
{
    w->fail_code = code;
    w->fail_rank = rank;
    w->fail.code = (int32_t)code;
    w->fail.rank = rank;
    snprintf(w->fail.text, sizeof w->fail.text, "%s", text);
}

trd_status trd_mpi_broke(mpi_wire *w, trd_status s)
{
    if (s == TRD_OK || w->fail_code != TRD_OK)
        return s;
    char text[sizeof w->fail.text];
    snprintf(text, sizeof text, "%s", trd_errmsg());
    record(w, w->rank, s, text);
    notify(w);
    return trd_fail(s, "%s", text);
}

/* A status code a notice may carry: one of treduce's errors. */
static trd_status valid_code(int32_t code)
{
    return code < 0 && code >= TRD_ETIMEDOUT ? (trd_status)code : TRD_EIO;
}

/* The rings' flag says a rank of the node failed: the wire learns it. */
static void learn_from_rings(mpi_wire *w)
{
    int32_t rank, code;
    char text[sizeof w->fail.text];
    if (w->fail_code == TRD_OK && w->shm &&
        trd_shm_failure(w->shm, &rank, &code, text, sizeof text))
        record(w, rank, valid_code(code), text);
}

int trd_mpi_post_notice_in(mpi_wire *w)
{
    return PMPI_Irecv(&w->fail_in, (int)sizeof w->fail_in, MPI_BYTE, MPI_ANY_SOURCE,
                     w->ctrl_tag + T_ABORT, w->comm, &w->ctrl[C_ABORT_IN]);
}

trd_status trd_mpi_on_notice(mpi_wire *w, int src)
{
    fail_msg *m = &w->fail_in;
    m->text[sizeof m->text - 1] = '\0';
    if (w->fail_code == TRD_OK)
        record(w, m->rank >= 0 && m->rank < w->size ? m->rank : src, valid_code(m->code),
               m->text);
    /* posted again: every failed peer's notice is a synchronous send that
     * closing its wire waits for (mpi_close.c) */
    int rc = trd_mpi_post_notice_in(w);
    return rc == MPI_SUCCESS ? trd_mpi_check_usable(w)
                             : trd_mpi_error(TRD_EBACKEND, rc, "MPI_Irecv of failure notices",
                                             w->rank);
}

trd_status trd_mpi_failed(void *ctx)
{
    mpi_wire *w = ctx;
    learn_from_rings(w);
    return trd_mpi_check_usable(w);
}

void trd_mpi_set_call(void *ctx, const trd_call_sig *call)
{
    mpi_wire *w = ctx;
    trd_mpi_reap(); /* a call begins: the wires being closed move on */
    w->call_sig = call;
    if (w->shm)
        trd_shm_set_call(w->shm, call);
}

int trd_mpi_post_call_in(mpi_wire *w)
{
    return PMPI_Irecv(&w->call_in, 1, MPI_UINT64_T, MPI_ANY_SOURCE, w->ctrl_tag + T_CALL, w->comm,
                     &w->ctrl[C_CALL_IN]);
}

trd_status trd_mpi_setup_faults(mpi_wire *w, int tag_ub)
{
    int bits = 0;
    while (bits < SIG_BITS_MAX && SIG_SHIFT + bits + 1 < 31 &&
           ((1L << (SIG_SHIFT + bits + 1)) - 1) <= (long)tag_ub)
        bits++;
    /* the signature must leave the wire's own tags (bit 20) alone */
    w->sig_bits = w->ctrl_tag == CTRL_TAG && bits > SEQ_BITS ? bits : 0;
    if (w->size < 2)
        return TRD_OK;
    size_t n = (size_t)w->size;
    w->heard = calloc(n, sizeof *w->heard);
    w->told = calloc(n, sizeof *w->told);
    w->tell = calloc(n, sizeof *w->tell);
    w->tell_req = malloc(n * sizeof *w->tell_req);
    if (!w->heard || !w->told || !w->tell || !w->tell_req)
        return trd_fail(TRD_ENOMEM, "mpi wire: out of memory for %d ranks", w->size);
    for (size_t q = 0; q < n; q++)
        w->tell_req[q] = MPI_REQUEST_NULL;
    int rc = trd_mpi_post_notice_in(w);
    if (rc == MPI_SUCCESS)
        rc = trd_mpi_post_call_in(w);
    return rc == MPI_SUCCESS ? TRD_OK
                             : trd_mpi_error(TRD_EBACKEND, rc, "MPI_Irecv of failure notices",
                                             w->rank);
}

/* The signature bits of call c: its number mod 4, then the hash's top
 * bits. */
static unsigned sig_field(const mpi_wire *w, const trd_call_sig *c)
{
    int hbits = w->sig_bits - SEQ_BITS;
    return (c->seq & ((1u << SEQ_BITS) - 1)) << hbits | c->hash >> (32 - hbits);
}

uint64_t trd_mpi_call_now(mpi_wire *w)
{
    if (!w->call_sig)
        return 0;
    uint64_t v = trd_call_sig_value(w->call_sig);
    w->past[w->call_sig->seq % SIG_HISTORY] = v;
    return v;
}

int trd_mpi_tag(const mpi_wire *w, int32_t tag)
{
    if (!w->sig_bits || !w->call_sig)
        return tag;
    return tag | (int)(sig_field(w, w->call_sig) << SIG_SHIFT);
}

/* Whether the signature bits of a message's tag say another call than
 * ours: the same number with another hash, or any number but ours and the
 * next (a faster peer's next call is not a mismatch). */
static bool other_call(const mpi_wire *w, unsigned theirs, unsigned ours)
{
    int hbits = w->sig_bits - SEQ_BITS;
    unsigned mask = (1u << SEQ_BITS) - 1, seq = theirs >> hbits, mine = ours >> hbits;
    return theirs != ours && seq != ((mine + 1) & mask);
}

static trd_status probe(mpi_wire *w, const op_info *op)
{
    int flag = 0;
    MPI_Status st;
    int src = op->peer == TRD_ANY_RANK ? MPI_ANY_SOURCE : op->peer;
    if (PMPI_Iprobe(src, MPI_ANY_TAG, w->comm, &flag, &st) != MPI_SUCCESS || !flag ||
        (st.MPI_TAG & CTRL_TAG))
        return TRD_OK;
    unsigned theirs = (unsigned)st.MPI_TAG >> SIG_SHIFT, ours = sig_field(w, w->call_sig);
    if (!other_call(w, theirs, ours))
        return TRD_OK;
    char mine[256];
    trd_call_sig_text(w->call_sig, mine, sizeof mine);
    int hbits = w->sig_bits - SEQ_BITS;
    bool same_seq = theirs >> hbits == ours >> hbits;
    return trd_fail(TRD_EIO, "mpi wire: rank %d: mismatched collective calls: rank %d sent it a "
                    "message (tag %d) of %s than its own, %s", w->rank, st.MPI_SOURCE,
                    st.MPI_TAG & (CTRL_TAG - 1),
                    same_seq ? "a call with other arguments (algorithm, kind, root, count, "
                               "element size or operator)"
                             : "another call (it is not in step)",
                    mine);
}

/* This rank's signature of its call number seq: the current call's, one
 * of the last SIG_HISTORY it posted in, or 0 (not known: a later call, or
 * too old). */
static uint64_t sig_of_call(const mpi_wire *w, uint32_t seq)
{
    uint64_t now = trd_call_sig_value(w->call_sig), past = w->past[seq % SIG_HISTORY];
    if ((uint32_t)now == seq)
        return now;
    return (uint32_t)past == seq && (int32_t)((uint32_t)now - seq) > 0 ? past : 0;
}

/* A peer that waits for a message of this rank's in a call whose number
 * this rank's current or a recent call has, with another signature: a
 * mismatch, whenever it is found.  (Only the signature proves one: that
 * this rank has gone past that call proves nothing over MPI, where a
 * message sent eagerly may still be on its way.) */
static trd_status check_heard(mpi_wire *w)
{
    w->heard_new = false;
    for (int q = 0; w->heard && w->call_sig && q < w->size; q++) {
        uint64_t h = w->heard[q], mine = h ? sig_of_call(w, (uint32_t)h) : 0;
        if (!mine || mine == h)
            continue;
        char text[256];
        if ((uint32_t)trd_call_sig_value(w->call_sig) == (uint32_t)h)
            trd_call_sig_text(w->call_sig, text, sizeof text);
        else
            snprintf(text, sizeof text, "call %lu with arguments %08lx", (unsigned long)(uint32_t)h,
                     (unsigned long)(mine >> 32));
        return trd_fail(TRD_EIO, "mpi wire: rank %d: mismatched collective calls: rank %d waits "
                        "for a message of its in call %lu with other arguments (algorithm, "
                        "kind, root, count, element size or operator) than its own, %s",
                        w->rank, q, (unsigned long)(uint32_t)h, text);
    }
    return TRD_OK;
}

trd_status trd_mpi_check_heard(mpi_wire *w)
{
    return w->heard_new ? check_heard(w) : TRD_OK;
}

trd_status trd_mpi_on_call(mpi_wire *w, int src)
{
    if (src >= 0 && src < w->size && w->heard) {
        w->heard[src] = w->call_in;
        w->heard_new = true;
    }
    int rc = trd_mpi_post_call_in(w);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EIO, rc, "MPI_Irecv of a call announcement", w->rank);
    return check_heard(w);
}

/* Tells peer the call this rank waits in for a message of its, once per
 * call (a small control message, sent only by a wait that stalls).  A
 * synchronous send: the peer may have left the call already and nothing
 * awaits it there, so closing the wire waits until the peer received it
 * (mpi_close.c) - else it could reach the next communicator that reuses
 * this one's context. */
static void tell(mpi_wire *w, int peer, uint64_t sig)
{
    if (peer < 0 || peer >= w->size || w->told[peer] == sig)
        return;
    int done = 1;
    if (w->tell_req[peer] != MPI_REQUEST_NULL &&
        (PMPI_Test(&w->tell_req[peer], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done))
        return; /* the last one still on its way: next time */
    w->tell[peer] = sig;
    if (PMPI_Issend(&w->tell[peer], 1, MPI_UINT64_T, peer, w->ctrl_tag + T_CALL, w->comm,
                    &w->tell_req[peer]) == MPI_SUCCESS)
        w->told[peer] = sig;
}

static void tell_awaited(mpi_wire *w)
{
    uint64_t sig = trd_call_sig_value(w->call_sig);
    int32_t peers[64];
    int n = w->shm ? trd_shm_awaited(w->shm, peers, 64) : 0;
    for (int i = 0; i < n; i++)
        tell(w, peers[i], sig);
    for (int i = 0; i < w->n; i++)
        if (w->info[i].kind == K_RECV && w->info[i].peer != TRD_ANY_RANK)
            tell(w, w->info[i].peer, sig);
}

trd_status trd_mpi_find_mismatch(mpi_wire *w)
{
    if (!w->call_sig || !w->heard)
        return TRD_OK;
    /* The wire's own messages first, all of them (a standing receive takes
     * one at a time): one left unmatched would hide, from the probe, the
     * messages its sender sent after it. */
    bool more = true;
    trd_status s = TRD_OK;
    for (int k = 0; k < 4 * w->size && more && s == TRD_OK; k++) {
        more = false;
        s = trd_mpi_poll_ctrl(w, &more);
    }
    if (s == TRD_OK)
        s = check_heard(w);
    for (int i = 0; i < w->n && s == TRD_OK && w->sig_bits; i++)
        if (w->info[i].kind == K_RECV)
            s = probe(w, &w->info[i]);
    if (s == TRD_OK)
        tell_awaited(w);
    return s;
}

/* Cancels this rank's MPI receives and tests its requests until they are
 * all complete or the grace has passed. */
static void settle_requests(mpi_wire *w)
{
    double until = PMPI_Wtime() + (w->timeout < GRACE_S ? w->timeout : GRACE_S);
    for (int i = 0; i < w->n; i++)
        if (w->info[i].kind == K_RECV)
            PMPI_Cancel(&w->reqs[i]);
    while (w->n > 0 && PMPI_Wtime() < until) {
        int count = 0;
        int rc = trd_mpi_testsome(w->n, w->reqs, &count, w->idx, w->st);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
            break;
        if (count > 0 && count != MPI_UNDEFINED)
            trd_mpi_compact(w);
        trd_mpi_back_off(w, count > 0 && count != MPI_UNDEFINED);
    }
}

void trd_mpi_abort(void *ctx, trd_status code, const char *why)
{
    mpi_wire *w = ctx;
    learn_from_rings(w);
    if (w->fail_code == TRD_OK) {
        trd_fail(code, "%s", why);
        trd_mpi_broke(w, code);
    }
    if (w->withdrawn)
        return;
    w->withdrawn = true;
    if (w->shm)
        trd_shm_withdraw(w->shm);
    settle_requests(w);
}

#endif

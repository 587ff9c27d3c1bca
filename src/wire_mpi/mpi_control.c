/* mpi_control.c: the MPI wire's own messages (mpi.c has the data path).
 *
 * Tags with bit 20 set (1 << 20 up, or the top T_COUNT tags on
 * an MPI with fewer) carry the wire's own messages; user tags leave it
 * clear.
 * Dynamic policies need their decisions made atomically for all ranks:
 * rank 0 is the coordinator and holds the shared copy of the policy.  The
 * other ranks send it (call, rank) and poll for the answer (action, peer)
 * while their own requests keep progressing.  Rank 0 keeps a receive for
 * such requests posted at all times and answers them whenever it polls, so
 * inside any wire call; a request for a call rank 0 has not entered yet is
 * held until it does (rank 0 learns the policy only from its own decide or
 * end_dynamic).  end_dynamic: rank 0 serves until it has given `size`
 * terminal decisions (SEND or DONE: one per rank), resets the policy, then
 * every rank passes a barrier, so no rank asks about the next call before
 * the reset.  The barrier is a gather of arrivals at rank 0 followed by a
 * release from it; a sequence number in every message catches ranks that
 * disagree on which barrier they are in.  The arrivals may carry up to
 * TRD_WIRE_AGREE_MAX values, and the releases the largest of each over
 * all ranks (agree).  Failures - this rank's and the notices of its
 * peers' - and mismatched calls: mpi_fail.c. */
#include "wire_mpi/mpi_wire.h"

#include "core/error.h"

#ifdef TRD_HAVE_MPI

#include "core/fifo.h"
#include "wire_mpi/mpi_internal.h"
#include "wire_mpi/shm.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long a barrier's rank waits past its deadline for rank 0's notice,
 * which names the ranks that did not arrive. */
#define LATE_S 0.3

/* ---- The coordinator (rank 0). ---- */

static bool terminal(trd_action a)
{
    return a == TRD_ACT_SEND || a == TRD_ACT_DONE;
}

/* One atomic decision of the shared policy (rank 0 is single-threaded). */
static trd_action consult(mpi_wire *w, int32_t rank, int32_t *peer)
{
    *peer = -1;
    trd_action a = w->policy->idle(w->policy->state, rank, peer);
    if (terminal(a)) {
        w->terminals++;
        w->decided[rank] = w->call + 1;
    }
    return a;
}

/* Appends the ranks r (first <= r < size) with mark[r] != want to buf:
 * at most 8 named, then how many more. */
static void append_ranks(const mpi_wire *w, int first, const int64_t *mark, int64_t want,
                         char *buf, size_t size, size_t *at)
{
    int named = 0;
    for (int r = first; r < w->size && *at < size; r++) {
        if (mark[r] == want)
            continue;
        int n = ++named <= 8 ? snprintf(buf + *at, size - *at, "%s%d", named > 1 ? ", " : "", r)
                             : 0;
        *at += n > 0 ? (size_t)n : 0;
    }
    if (named > 8 && *at < size) {
        int n = snprintf(buf + *at, size - *at, " and %d more", named - 8);
        *at += n > 0 ? (size_t)n : 0;
    }
}

static trd_status answer(mpi_wire *w, int32_t src, int32_t rank)
{
    int32_t peer;
    trd_action a = consult(w, rank, &peer);
    trd_status s = trd_mpi_finish(w, &w->reply_req[src], PMPI_Wtime() + w->timeout);
    if (s != TRD_OK)
        return s;
    w->reply[src][0] = (int32_t)a;
    w->reply[src][1] = peer;
    int rc = PMPI_Isend(w->reply[src], 2, MPI_INT32_T, src, w->ctrl_tag + T_REP, w->comm,
                       &w->reply_req[src]);
    return rc == MPI_SUCCESS ? TRD_OK
                             : trd_mpi_error(TRD_EIO, rc, "MPI_Isend of a decision", w->rank);
}

/* Ranks disagree on the call: they number calls differently, or one of
 * them skipped end_dynamic (the barrier in it keeps correct ranks in step). */
static trd_status call_mismatch(const mpi_wire *w, int32_t src, int64_t call)
{
    return trd_fail(TRD_EIO, "mpi wire: mismatched collective calls: rank %d asked for a "
                    "decision of its call %lld while the coordinator (rank 0) serves call %lld",
                    src, (long long)call, (long long)w->call);
}

/* A decision request from rank src: answered now if rank 0 is inside a
 * call (then it can only be that call), else held until rank 0 enters
 * one. */
static trd_status on_request(mpi_wire *w, int32_t src, int64_t call, int64_t rank)
{
    if (rank < 0 || rank >= w->size)
        return trd_fail(TRD_EIO, "mpi wire: rank %d asked the coordinator about rank %lld, "
                        "outside 0..%d", src, (long long)rank, w->size - 1);
    if (w->policy)
        return call == w->call ? answer(w, src, (int32_t)rank) : call_mismatch(w, src, call);
    if (w->nheld == w->size) /* each rank has at most one request in flight */
        return trd_fail(TRD_EIO, "mpi wire: rank 0: more held decision requests than ranks");
    w->held[w->nheld++] = (held_req){.src = src, .rank = (int32_t)rank, .call = call};
    return TRD_OK;
}

/* Answers the requests held while rank 0 was between calls. */
static trd_status serve_held(mpi_wire *w)
{
    trd_status s = TRD_OK;
    for (int i = 0; i < w->nheld && s == TRD_OK; i++)
        s = w->held[i].call == w->call ? answer(w, w->held[i].src, w->held[i].rank)
                                       : call_mismatch(w, w->held[i].src, w->held[i].call);
    w->nheld = 0;
    return s;
}

/* Rank 0 enters call `call` of `policy` (its decide or end_dynamic). */
static trd_status enter_call(mpi_wire *w, const trd_policy *policy, int64_t call)
{
    if (w->policy && call != w->call)
        return trd_fail(TRD_EINVAL, "mpi wire: decision for call %lld while call %lld has not "
                        "ended (end_dynamic missing)", (long long)call, (long long)w->call);
    if (!w->policy) {
        w->policy = policy;
        w->call = call;
        w->terminals = 0;
    }
    return serve_held(w);
}

/* Values of one rank into the agreement of the current barrier (rank 0):
 * the first contribution sets them, the others keep the largest. */
static trd_status contribute(mpi_wire *w, int src, const double *v, int64_t n)
{
    if (w->agreed > 0 && n != w->acc_n)
        return trd_fail(TRD_EIO, "mpi wire: mismatched agreements: rank %d agrees on %lld "
                        "values at barrier %lld, other ranks on %lld", src, (long long)n,
                        (long long)w->barrier_seq, (long long)w->acc_n);
    for (int64_t i = 0; i < n; i++)
        w->acc[i] = w->agreed == 0 || v[i] > w->acc[i] ? v[i] : w->acc[i];
    w->acc_n = n;
    w->agreed++;
    return TRD_OK;
}

static trd_status on_arrival(mpi_wire *w, int32_t src, const MPI_Status *st)
{
    const agree_msg *m = &w->arrive_in;
    int bytes = 0;
    PMPI_Get_count(st, MPI_BYTE, &bytes);
    if (m->seq != w->barrier_seq)
        return trd_fail(TRD_EIO, "mpi wire: rank %d is at barrier %lld, rank 0 at %lld "
                        "(barrier or end_dynamic called on some ranks only)", src,
                        (long long)m->seq, (long long)w->barrier_seq);
    if (m->n < 0 || m->n > TRD_WIRE_AGREE_MAX || bytes != (int)(16 + 8 * m->n))
        return trd_fail(TRD_EIO, "mpi wire: malformed barrier arrival from rank %d (%d bytes)",
                        src, bytes);
    trd_status s = contribute(w, src, m->v, m->n);
    if (s == TRD_OK) {
        w->arrivals++;
        w->arrived[src] = w->barrier_seq + 1;
    }
    return s;
}

/* ---- Polling. ---- */

static trd_status post_ctrl_recv(mpi_wire *w, int slot, void *buf, int count, MPI_Datatype type,
                                 int src, int tag)
{
    int rc = PMPI_Irecv(buf, count, type, src, w->ctrl_tag + tag, w->comm, &w->ctrl[slot]);
    return rc == MPI_SUCCESS ? TRD_OK : trd_mpi_error(TRD_EIO, rc, "MPI_Irecv of a control message",
                                                 w->rank);
}

static trd_status post_ctrl_send(mpi_wire *w, int slot, const void *buf, int count,
                                 MPI_Datatype type, int tag)
{
    int rc = PMPI_Isend(buf, count, type, 0, w->ctrl_tag + tag, w->comm, &w->ctrl[slot]);
    return rc == MPI_SUCCESS ? TRD_OK : trd_mpi_error(TRD_EIO, rc, "MPI_Isend of a control message",
                                                 w->rank);
}

/* Rank 0's standing receives, reposted as soon as one completes. */
trd_status trd_mpi_post_standing(mpi_wire *w, int slot)
{
    if (slot == C_REQ_IN)
        return post_ctrl_recv(w, C_REQ_IN, w->req_in, 2, MPI_INT64_T, MPI_ANY_SOURCE, T_REQ);
    return post_ctrl_recv(w, C_ARRIVE_IN, &w->arrive_in, (int)sizeof w->arrive_in, MPI_BYTE,
                          MPI_ANY_SOURCE, T_ARRIVE);
}

static trd_status on_ctrl(mpi_wire *w, int slot, const MPI_Status *st)
{
    trd_status s = TRD_OK;
    int src = st->MPI_SOURCE;
    if (slot == C_REQ_IN) {
        int64_t call = w->req_in[0], rank = w->req_in[1];
        s = trd_mpi_post_standing(w, C_REQ_IN);
        if (s == TRD_OK)
            s = on_request(w, src, call, rank);
    } else if (slot == C_ARRIVE_IN) {
        s = on_arrival(w, src, st);
        if (s == TRD_OK)
            s = trd_mpi_post_standing(w, C_ARRIVE_IN);
    } else if (slot == C_REP_IN) {
        w->replied = true;
    } else if (slot == C_RELEASE_IN) {
        w->released = true;
    } else if (slot == C_ABORT_IN) {
        s = trd_mpi_on_notice(w, src);
    } else if (slot == C_CALL_IN) {
        s = trd_mpi_on_call(w, src);
    }
    return s;
}

trd_status trd_mpi_poll_ctrl(mpi_wire *w, bool *progress)
{
    int count = 0, idx[C_COUNT];
    MPI_Status st[C_COUNT];
    int rc = PMPI_Testsome(C_COUNT, w->ctrl, &count, idx, st);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EIO, rc, "MPI_Testsome of control messages", w->rank);
    trd_status s = TRD_OK;
    for (int k = 0; k < count && s == TRD_OK; k++) /* MPI_UNDEFINED < 0: none */
        s = on_ctrl(w, idx[k], &st[k]);
    if (count > 0)
        *progress = true;
    return s;
}

/* ---- Decisions and barriers. ---- */

/* Polls until *flag is set (a reply or a release arrived); *late (and
 * TRD_ETIMEDOUT without a message) when the deadline passed first: the
 * caller says what was missing.  A failure polled meanwhile (a peer's,
 * whatever its code) is returned as it is. */
static trd_status poll_until(mpi_wire *w, const bool *flag, double deadline, bool *late)
{
    *late = false;
    while (!*flag) {
        bool progress;
        trd_status s = trd_mpi_poll_once(w, true, &progress);
        if (s != TRD_OK)
            return s;
        if (*flag)
            break;
        if (trd_mpi_past(w, deadline)) {
            *late = true;
            return TRD_ETIMEDOUT;
        }
        trd_mpi_back_off(w, progress);
    }
    return TRD_OK;
}

/* Tests until the wire's own request `slot` completes (a previous message
 * whose buffer is about to be reused). */
static trd_status finish_ctrl(mpi_wire *w, int slot, double deadline)
{
    return trd_mpi_finish(w, &w->ctrl[slot], deadline);
}

static trd_status ask_coordinator(mpi_wire *w, int64_t call, int32_t rank, trd_action *action,
                                  int32_t *peer)
{
    double deadline = PMPI_Wtime() + w->timeout;
    trd_status s = finish_ctrl(w, C_REQ_OUT, deadline);
    if (s != TRD_OK)
        return s;
    w->req_out[0] = call;
    w->req_out[1] = rank;
    w->replied = false;
    s = post_ctrl_recv(w, C_REP_IN, w->rep_in, 2, MPI_INT32_T, 0, T_REP);
    if (s == TRD_OK)
        s = post_ctrl_send(w, C_REQ_OUT, w->req_out, 2, MPI_INT64_T, T_REQ);
    bool late = false;
    if (s == TRD_OK)
        s = poll_until(w, &w->replied, deadline, &late);
    if (late) {
        char dead[256] = "";
        size_t at = 0;
        trd_mpi_silent(w, dead, sizeof dead, &at);
        return trd_fail(s, "mpi wire: rank %d: the coordinator (rank 0) did not answer the "
                        "decision request of call %lld before the deadline (%g s; %d requests of "
                        "this rank pending)%s", w->rank, (long long)call, w->timeout, w->n, dead);
    }
    if (s != TRD_OK)
        return s;
    int32_t a = w->rep_in[0];
    if (a == TRD_ACT_ERROR)
        return trd_fail(TRD_EIO, "mpi wire: the coordinator's policy could not decide for "
                        "rank %ld", (long)rank);
    if ((a != TRD_ACT_SEND && a != TRD_ACT_WAIT && a != TRD_ACT_DONE) ||
        (a == TRD_ACT_SEND && (w->rep_in[1] < 0 || w->rep_in[1] >= w->size)))
        return trd_fail(TRD_EIO, "mpi wire: rank %d: malformed answer from the coordinator "
                        "(action %ld, peer %ld)", w->rank, (long)a, (long)w->rep_in[1]);
    *action = (trd_action)a;
    *peer = w->rep_in[1];
    return TRD_OK;
}

trd_status trd_mpi_decide(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                              trd_action *action, int32_t *peer)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_ready(w);
    if (s != TRD_OK)
        return s;
    if (!policy || !policy->idle || !action || !peer || rank < 0 || rank >= w->size)
        return trd_fail(TRD_EINVAL, "mpi wire: decide needs a policy, action and peer, and a "
                        "rank in 0..%d (got %ld)", w->size - 1, (long)rank);
    if (w->rank != 0)
        return trd_mpi_broke(w, ask_coordinator(w, call, rank, action, peer));
    s = enter_call(w, policy, call);
    if (s != TRD_OK)
        return trd_mpi_broke(w, s);
    *action = consult(w, rank, peer);
    if (*action == TRD_ACT_ERROR)
        return trd_mpi_broke(w, trd_fail(TRD_EIO, "mpi wire: the coordinator's policy could "
                                         "not decide for rank %ld", (long)rank));
    return TRD_OK;
}

/* Rank 0: its own values in, the others' arrivals awaited, then each
 * released with the largest values. */
static trd_status barrier_root(mpi_wire *w, double *v, int32_t n, double deadline)
{
    trd_status s = contribute(w, 0, v, n);
    while (s == TRD_OK && w->arrivals < w->size - 1) {
        bool progress;
        if ((s = trd_mpi_poll_once(w, true, &progress)) != TRD_OK || w->arrivals >= w->size - 1)
            break;
        if (PMPI_Wtime() > deadline) {
            char why[512];
            size_t at = 0;
            append_ranks(w, 1, w->arrived, w->barrier_seq + 1, why, sizeof why, &at);
            trd_mpi_silent(w, why, sizeof why, &at);
            return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank 0: barrier %lld: %d of %d ranks "
                            "arrived before the deadline; ranks that did not arrive: %s",
                            (long long)w->barrier_seq, w->arrivals + 1, w->size, why);
        }
        trd_mpi_back_off(w, progress);
    }
    if (s != TRD_OK)
        return s;
    w->arrivals -= w->size - 1;
    w->agreed = 0; /* the next barrier's contributions start afresh */
    for (int32_t i = 0; i < n; i++)
        v[i] = w->acc[i];
    for (int r = 1; r < w->size; r++) {
        if ((s = trd_mpi_finish(w, &w->release_req[r], deadline)) != TRD_OK)
            return s;
        agree_msg *m = &w->release_out[r];
        m->seq = w->barrier_seq;
        m->n = n;
        for (int32_t i = 0; i < n; i++)
            m->v[i] = v[i];
        int rc = PMPI_Isend(m, 16 + 8 * n, MPI_BYTE, r, w->ctrl_tag + T_RELEASE, w->comm,
                           &w->release_req[r]);
        if (rc != MPI_SUCCESS)
            return trd_mpi_error(TRD_EIO, rc, "MPI_Isend of a barrier release", w->rank);
    }
    return TRD_OK;
}

static trd_status barrier_leaf(mpi_wire *w, double *v, int32_t n, double deadline)
{
    trd_status s = finish_ctrl(w, C_ARRIVE_OUT, deadline);
    if (s != TRD_OK)
        return s;
    w->arrive_out.seq = w->barrier_seq;
    w->arrive_out.n = n;
    for (int32_t i = 0; i < n; i++)
        w->arrive_out.v[i] = v[i];
    w->released = false;
    s = post_ctrl_recv(w, C_RELEASE_IN, &w->release_in, (int)sizeof w->release_in, MPI_BYTE, 0,
                       T_RELEASE);
    if (s == TRD_OK)
        s = post_ctrl_send(w, C_ARRIVE_OUT, &w->arrive_out, 16 + 8 * n, MPI_BYTE, T_ARRIVE);
    bool late = false;
    if (s == TRD_OK)
        s = poll_until(w, &w->released, deadline, &late);
    if (late) /* rank 0, late too, may yet say who did not arrive: its notice */
        s = poll_until(w, &w->released, deadline + LATE_S, &late);
    if (late) {
        char dead[256] = "";
        size_t at = 0;
        trd_mpi_silent(w, dead, sizeof dead, &at);
        return trd_fail(s, "mpi wire: rank %d: barrier %lld: rank 0 did not release it before "
                        "the deadline, nor say why (%d requests of this rank pending)%s",
                        w->rank, (long long)w->barrier_seq, w->n, dead);
    }
    if (s == TRD_OK && (w->release_in.seq != w->barrier_seq || w->release_in.n != n))
        s = trd_fail(TRD_EIO, "mpi wire: rank %d at barrier %lld agreeing on %ld values was "
                     "released from barrier %lld with %lld", w->rank, (long long)w->barrier_seq,
                     (long)n, (long long)w->release_in.seq, (long long)w->release_in.n);
    for (int32_t i = 0; s == TRD_OK && i < n; i++)
        v[i] = w->release_in.v[i];
    return s;
}

/* Gather of arrivals (and values) at rank 0, then release by rank 0. */
static trd_status run_barrier(mpi_wire *w, double *v, int32_t n, double deadline)
{
    if (w->size == 1)
        return TRD_OK;
    trd_status s = w->rank == 0 ? barrier_root(w, v, n, deadline)
                                : barrier_leaf(w, v, n, deadline);
    if (s == TRD_OK)
        w->barrier_seq++;
    return s;
}

trd_status trd_mpi_agree(void *ctx, double *v, int32_t n, double deadline)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_ready(w);
    if (s == TRD_OK && (n < 0 || n > TRD_WIRE_AGREE_MAX || (!v && n > 0)))
        return trd_fail(TRD_EINVAL, "mpi wire: agree on %ld values: need 0 to %d", (long)n,
                        TRD_WIRE_AGREE_MAX);
    return s != TRD_OK ? s : trd_mpi_broke(w, run_barrier(w, v, n, deadline));
}

trd_status trd_mpi_barrier(void *ctx, double deadline)
{
    return trd_mpi_agree(ctx, NULL, 0, deadline);
}

/* Rank 0: serves until every rank has had its terminal decision. */
static trd_status drain_decisions(mpi_wire *w, const trd_policy *policy, int64_t call)
{
    trd_status s = enter_call(w, policy, call);
    double deadline = PMPI_Wtime() + w->timeout;
    while (s == TRD_OK && w->terminals < w->size) {
        bool progress;
        s = trd_mpi_poll_once(w, true, &progress);
        if (s != TRD_OK || w->terminals >= w->size)
            break;
        if (PMPI_Wtime() > deadline) {
            char why[512];
            size_t at = 0;
            append_ranks(w, 0, w->decided, call + 1, why, sizeof why, &at);
            trd_mpi_silent(w, why, sizeof why, &at);
            return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank 0: call %lld: only %ld of %d ranks "
                            "had their last decision before the deadline; ranks that did not: "
                            "%s", (long long)call, (long)w->terminals, w->size, why);
        }
        trd_mpi_back_off(w, progress);
    }
    if (s != TRD_OK)
        return s;
    policy->reset(policy->state);
    w->policy = NULL;
    return TRD_OK;
}

trd_status trd_mpi_end_dynamic(void *ctx, const trd_policy *policy, int64_t call)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_ready(w);
    if (s != TRD_OK)
        return s;
    if (!policy || !policy->idle || !policy->reset)
        return trd_fail(TRD_EINVAL, "mpi wire: end_dynamic needs a policy with idle and reset");
    if (w->rank == 0)
        s = drain_decisions(w, policy, call);
    else
        policy->reset(policy->state); /* an unused copy: kept in step for clarity */
    if (s == TRD_OK)
        s = run_barrier(w, NULL, 0, PMPI_Wtime() + w->timeout);
    return trd_mpi_broke(w, s);
}

#endif

/* mpi.c: the wire of wire.h over MPI point-to-point (DESIGN.md: the
 * distributed engine).
 *
 * Data.  When the whole communicator is on one node, messages of at most
 * shm_below - 1 bytes go through shared-memory rings (shm.h: a third of
 * MPI's cost for one double; longer ones in fragments, the receiver's
 * copy overlapping the sender's), larger ones through MPI.  Every MPI send
 * and receive is one MPI_Isend / MPI_Irecv of MPI_BYTE on
 * a duplicate of the caller's communicator, with the caller's tag (and
 * above it the call's signature, mpi_fail.c) as MPI tag, so MPI's own
 * matching gives wire.h's order rules.  The posted
 * requests sit in one table (MPI_Request array + what each one is); wait()
 * tests them all with MPI_Testsome, queues every completion found and hands
 * them out one per call.  The duplicate has MPI_ERRORS_RETURN, so a message
 * longer than its receive buffer comes back as MPI_ERR_TRUNCATE (TRD_EIO)
 * and a lost peer as an error code, not as an abort.
 *
 * Control.  Tags with bit 20 set (1 << 20 up, or the top T_COUNT tags on
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
 * peers' - and mismatched calls: mpi_fail.c.
 *
 * Nothing blocks inside MPI: every loop tests, checks its deadline and
 * backs off (a short spin, sched_yield, then short sleeps), so a run with
 * more ranks than cores leaves the CPU to the rank that has work, and a
 * dead peer ends in
 * TRD_ETIMEDOUT instead of a hang. */
#include "wire/mpi_wire.h"

#include "core/error.h"

#ifdef TRD_HAVE_MPI

#include "core/fifo.h"
#include "wire/mpi_internal.h"
#include "wire/shm.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPIN_POLLS 200          /* empty polls spent spinning before yielding */
#define DEADLINE_POLLS 32       /* ...reading the clock once in this many */
#define CTRL_POLLS 16           /* a send or receive's wait tests the wire's own
                                   messages once in this many polls */
#define YIELD_POLLS 1000        /* empty polls before sleeping instead of yielding */
#define SLEEP_NS 50000L         /* one back-off sleep: short next to a transfer */
#define STALL_S 0.002           /* a wait this long has stalled: it reads the wire's own
                                   messages and looks for a mismatched call (mpi_fail.c)
                                   once per STALL_S - wall time, as a loaded node makes
                                   each poll slow */

trd_status trd_mpi_error(trd_status code, int rc, const char *what, int rank)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    if (rank < 0) /* not known yet */
        return trd_fail(code, "mpi wire: %s failed: %s", what, text);
    return trd_fail(code, "mpi wire: rank %d: %s failed: %s", rank, what, text);
}

/* MPICH raises the errors of request completions (MPI_Test*) on
 * MPI_COMM_WORLD instead of on the request's communicator (MPI-3.1 Sec. 8.3
 * leaves it open), and the caller's world usually aborts on errors.  So
 * around those calls the world's handler is MPI_ERRORS_RETURN, then put
 * back (the wire is used by one thread).  Open MPI uses the request's
 * communicator, which already returns. */
#ifdef OPEN_MPI
typedef int world_guard; /* nothing to save */

static void guard_world(world_guard *g)
{
    (void)g;
}

static void unguard_world(world_guard *g)
{
    (void)g;
}
#else
typedef MPI_Errhandler world_guard;

static void guard_world(world_guard *g)
{
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, g);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static void unguard_world(world_guard *g)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, *g);
    MPI_Errhandler_free(g);
}
#endif

int trd_mpi_testsome(int n, MPI_Request *reqs, int *count, int *idx, MPI_Status *st)
{
    world_guard g;
    guard_world(&g);
    int rc = MPI_Testsome(n, reqs, count, idx, st);
    unguard_world(&g);
    return rc;
}

static double wire_now(void *ctx)
{
    (void)ctx;
    return MPI_Wtime();
}

/* The empty polls a wait spends spinning: none on a node with more ranks
 * than cores when it waits for the rings alone.  A ring poll costs ~20 ns,
 * so 200 of them only kept the core from the rank that had to write the
 * message: an allreduce of one double at np 8 took 3.4-4.8x MPI's time
 * with them, 1.03-1.06x without; through MPI the same allreduce needs the
 * spins (1.06-1.20x with, 2.3-2.5x without: docs/RUNTIME.md,
 * "Transports"). */
static long spin_polls(const mpi_wire *w)
{
    int recvs = 0, sends = 0;
    if (!w->crowded || w->n > 0 || !w->shm)
        return SPIN_POLLS;
    trd_shm_pending(w->shm, &recvs, &sends);
    return recvs + sends > 0 ? 0 : SPIN_POLLS;
}

/* Called after each poll: the first SPIN_POLLS empty polls (~10 us) just
 * poll again, since a small message is often about to arrive and a yield
 * costs a system call and a trip through the scheduler; then a poll that
 * found nothing yields the CPU (other ranks may share it), and on a node
 * with more ranks than cores, after many such polls, sleeps briefly, so an
 * oversubscribed run does not spin (Open MPI's mpi_yield_when_idle makes
 * the same distinction).  With a core per rank a sleep would only delay
 * the wake-up (a 50 us sleep ends up to 100 us late), so a rank waiting
 * for a long transfer or combine keeps yielding.  Spinning first helped
 * even 8 ranks on 2 cores (docs/RUNTIME.md, "Transports") - while MPI has
 * requests to progress; see spin_polls for the rings. */
void trd_mpi_back_off(mpi_wire *w, bool progress)
{
    if (progress) {
        w->empty_polls = 0;
        return;
    }
    long spin = spin_polls(w);
    if (++w->empty_polls <= spin)
        return; /* the message is often about to come: no system call yet */
    if (!w->crowded || w->empty_polls < spin + YIELD_POLLS) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, SLEEP_NS};
    nanosleep(&ts, NULL);
}

/* Whether a wait reads the clock after this poll: on one poll in
 * DEADLINE_POLLS while spinning - counted apart from the back-off, which
 * progress resets, and not on a wait's first poll (the clock costs as much
 * as the poll, and most waits end within a few) - and once the wire
 * yields or sleeps, every time. */
static bool clock_due(mpi_wire *w)
{
    return w->empty_polls >= SPIN_POLLS || ++w->clock_polls % DEADLINE_POLLS == 0;
}

/* Whether the deadline has passed, as far as a due clock read says. */
static bool past(mpi_wire *w, double deadline)
{
    return clock_due(w) && MPI_Wtime() > deadline;
}

/* A wait's clock: when a read is due (clock_due), the time, and the
 * wait's deadline (0: not yet known) set by its first read; -1 when no
 * read is due. */
static double wait_clock(mpi_wire *w, double *deadline, double timeout_s)
{
    if (!clock_due(w))
        return -1;
    double now = MPI_Wtime();
    if (*deadline == 0)
        *deadline = now + timeout_s;
    return now;
}

/* Tests one request of the wire's own until it completes (a reply or
 * release slot about to be reused: its previous message has been received
 * already, so this is quick). */
static trd_status finish(mpi_wire *w, MPI_Request *r, double deadline)
{
    while (*r != MPI_REQUEST_NULL) {
        world_guard g;
        guard_world(&g);
        int flag = 0, rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        unguard_world(&g);
        if (rc != MPI_SUCCESS)
            return trd_mpi_error(TRD_EIO, rc, "MPI_Test of a control message", w->rank);
        if (flag) {
            w->empty_polls = 0;
            break;
        }
        if (MPI_Wtime() > deadline)
            return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank %d: a control message was not "
                            "delivered before the deadline", w->rank);
        trd_mpi_back_off(w, false);
    }
    return TRD_OK;
}

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
    if (terminal(a))
        w->terminals++;
    return a;
}

static trd_status answer(mpi_wire *w, int32_t src, int32_t rank)
{
    int32_t peer;
    trd_action a = consult(w, rank, &peer);
    trd_status s = finish(w, &w->reply_req[src], MPI_Wtime() + w->timeout);
    if (s != TRD_OK)
        return s;
    w->reply[src][0] = (int32_t)a;
    w->reply[src][1] = peer;
    int rc = MPI_Isend(w->reply[src], 2, MPI_INT32_T, src, w->ctrl_tag + T_REP, w->comm,
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
    MPI_Get_count(st, MPI_BYTE, &bytes);
    if (m->seq != w->barrier_seq)
        return trd_fail(TRD_EIO, "mpi wire: rank %d is at barrier %lld, rank 0 at %lld "
                        "(barrier or end_dynamic called on some ranks only)", src,
                        (long long)m->seq, (long long)w->barrier_seq);
    if (m->n < 0 || m->n > TRD_WIRE_AGREE_MAX || bytes != (int)(16 + 8 * m->n))
        return trd_fail(TRD_EIO, "mpi wire: malformed barrier arrival from rank %d (%d bytes)",
                        src, bytes);
    trd_status s = contribute(w, src, m->v, m->n);
    if (s == TRD_OK)
        w->arrivals++;
    return s;
}

/* ---- Polling. ---- */

static trd_status post_ctrl_recv(mpi_wire *w, int slot, void *buf, int count, MPI_Datatype type,
                                 int src, int tag)
{
    int rc = MPI_Irecv(buf, count, type, src, w->ctrl_tag + tag, w->comm, &w->ctrl[slot]);
    return rc == MPI_SUCCESS ? TRD_OK : trd_mpi_error(TRD_EIO, rc, "MPI_Irecv of a control message",
                                                 w->rank);
}

static trd_status post_ctrl_send(mpi_wire *w, int slot, const void *buf, int count,
                                 MPI_Datatype type, int tag)
{
    int rc = MPI_Isend(buf, count, type, 0, w->ctrl_tag + tag, w->comm, &w->ctrl[slot]);
    return rc == MPI_SUCCESS ? TRD_OK : trd_mpi_error(TRD_EIO, rc, "MPI_Isend of a control message",
                                                 w->rank);
}

/* Rank 0's standing receives, reposted as soon as one completes. */
static trd_status post_standing(mpi_wire *w, int slot)
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
        s = post_standing(w, C_REQ_IN);
        if (s == TRD_OK)
            s = on_request(w, src, call, rank);
    } else if (slot == C_ARRIVE_IN) {
        s = on_arrival(w, src, st);
        if (s == TRD_OK)
            s = post_standing(w, C_ARRIVE_IN);
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
    int rc = MPI_Testsome(C_COUNT, w->ctrl, &count, idx, st);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EIO, rc, "MPI_Testsome of control messages", w->rank);
    trd_status s = TRD_OK;
    for (int k = 0; k < count && s == TRD_OK; k++) /* MPI_UNDEFINED < 0: none */
        s = on_ctrl(w, idx[k], &st[k]);
    if (count > 0)
        *progress = true;
    return s;
}

/* A completed request that failed: MPI_ERR_TRUNCATE is the caller's size
 * mismatch, anything else a lost peer or a broken MPI. */
static trd_status op_error(const mpi_wire *w, const op_info *op, const MPI_Status *st)
{
    int cls = 0;
    MPI_Error_class(st->MPI_ERROR, &cls);
    if (cls == MPI_ERR_TRUNCATE) {
        char sent[48] = "";
#ifdef OPEN_MPI /* reports the sent size in the status; MPICH does not */
        int count = 0;
        if (MPI_Get_count(st, MPI_BYTE, &count) == MPI_SUCCESS && (size_t)count > op->bytes)
            snprintf(sent, sizeof sent, " (%d bytes)", count);
#endif
        return trd_fail(TRD_EIO, "mpi wire: rank %d: the message%s from rank %d with tag %d is "
                        "longer than the %zu-byte receive buffer of step %d (MPI_ERR_TRUNCATE)",
                        w->rank, sent, (int)st->MPI_SOURCE, (int)op->tag, op->bytes,
                        (int)op->id);
    }
    char what[96];
    snprintf(what, sizeof what, "the %s of step %d (peer %d, tag %d)",
             op->kind == K_SEND ? "send" : "receive", (int)op->id, (int)op->peer, (int)op->tag);
    return trd_mpi_error(TRD_EIO, st->MPI_ERROR, what, w->rank);
}

void trd_mpi_compact(mpi_wire *w)
{
    int kept = 0;
    for (int i = 0; i < w->n; i++)
        if (w->reqs[i] != MPI_REQUEST_NULL) {
            w->reqs[kept] = w->reqs[i];
            w->info[kept++] = w->info[i];
        }
    w->n = kept;
}

static trd_status poll_ops(mpi_wire *w, bool *progress)
{
    if (w->n == 0)
        return TRD_OK;
    int count = 0, rc = MPI_Testsome(w->n, w->reqs, &count, w->idx, w->st);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
        return trd_mpi_error(TRD_EIO, rc, "MPI_Testsome", w->rank);
    trd_status s = TRD_OK;
    for (int k = 0; k < count && s == TRD_OK; k++) { /* MPI_UNDEFINED < 0: none */
        const op_info *op = &w->info[w->idx[k]];
        /* MPI_ERROR is set only when Testsome says MPI_ERR_IN_STATUS. */
        if (rc == MPI_ERR_IN_STATUS && w->st[k].MPI_ERROR != MPI_SUCCESS)
            s = op_error(w, op, &w->st[k]);
        else
            s = trd_fifo_push(&w->done, op->id,
                              op->kind == K_RECV ? (int32_t)w->st[k].MPI_SOURCE : -1);
    }
    if (count > 0) {
        *progress = true;
        trd_mpi_compact(w);
    }
    return s;
}

/* One round of testing: rank 0 serves the coordinator's messages (with
 * ctrl), every rank moves its finished sends and receives to the
 * completion queue.  Progress restarts the back-off here, not in
 * trd_mpi_back_off(): the loops leave on the poll that finishes their wait
 * without calling it, so a count kept across waits would reach the
 * sleeping stage for good and make every later wait sleep (50 us per empty
 * poll). */
trd_status trd_mpi_poll_once(mpi_wire *w, bool ctrl, bool *progress)
{
    *progress = false;
    world_guard g;
    guard_world(&g);
    trd_status s = ctrl ? trd_mpi_poll_ctrl(w, progress) : TRD_OK;
    if (s == TRD_OK)
        s = poll_ops(w, progress);
    unguard_world(&g);
    if (s == TRD_OK && w->shm)
        s = trd_shm_poll(w->shm, &w->done, progress);
    if (*progress)
        w->empty_polls = 0;
    return s;
}

/* ---- Sends and receives. ---- */

static trd_status reserve(mpi_wire *w)
{
    if (w->n < w->cap)
        return TRD_OK;
    if (w->cap > INT_MAX / 2)
        return trd_fail(TRD_ENOMEM, "mpi wire: too many pending requests (%d)", w->n);
    int cap = w->cap ? 2 * w->cap : 16;
    MPI_Request *reqs = realloc(w->reqs, (size_t)cap * sizeof *reqs);
    if (reqs)
        w->reqs = reqs;
    op_info *info = reqs ? realloc(w->info, (size_t)cap * sizeof *info) : NULL;
    if (info)
        w->info = info;
    int *idx = info ? realloc(w->idx, (size_t)cap * sizeof *idx) : NULL;
    if (idx)
        w->idx = idx;
    MPI_Status *st = idx ? realloc(w->st, (size_t)cap * sizeof *st) : NULL;
    if (!st)
        return trd_fail(TRD_ENOMEM, "mpi wire: out of memory for %d pending requests", cap);
    w->st = st;
    w->cap = cap;
    return TRD_OK;
}

static trd_status check_op(const mpi_wire *w, const char *what, int32_t peer, int32_t tag,
                           const void *buf, size_t bytes)
{
    trd_status s = trd_mpi_check_usable(w);
    if (s != TRD_OK)
        return s;
    bool any = peer == TRD_ANY_RANK && what[0] == 'r';
    if (!any && (peer < 0 || peer >= w->size || peer == w->rank))
        return trd_fail(TRD_EINVAL, "mpi wire: rank %d: %s peer %ld is not another rank of "
                        "0..%d", w->rank, what, (long)peer, w->size - 1);
    if (tag < 0 || tag >= w->ctrl_tag)
        return trd_fail(TRD_EINVAL, "mpi wire: %s tag %ld is outside 0..%d (higher tags are "
                        "the wire's own)", what, (long)tag, w->ctrl_tag - 1);
    if (bytes > (size_t)INT_MAX)
        return trd_fail(TRD_EINVAL, "mpi wire: %s of %zu bytes: MPI counts are int, at most "
                        "INT_MAX = %d bytes per message", what, bytes, INT_MAX);
    if (!buf && bytes > 0)
        return trd_fail(TRD_EINVAL, "mpi wire: %s of %zu bytes from a NULL buffer", what, bytes);
    return TRD_OK;
}

static trd_status wire_isend(void *ctx, int32_t peer, int32_t tag, const void *buf, size_t bytes,
                             int32_t id)
{
    mpi_wire *w = ctx;
    trd_status s = check_op(w, "send", peer, tag, buf, bytes);
    uint64_t sig = trd_mpi_call_now(w);
    if (s == TRD_OK && bytes < w->shm_below)
        return trd_shm_isend(w->shm, peer, tag, sig, buf, bytes, id, &w->done);
    if (s == TRD_OK)
        s = reserve(w);
    if (s != TRD_OK)
        return s;
    int rc = MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, trd_mpi_tag(w, tag), w->comm,
                       &w->reqs[w->n]);
    if (rc != MPI_SUCCESS)
        return trd_mpi_broke(w, trd_mpi_error(TRD_EIO, rc, "MPI_Isend", w->rank));
    w->info[w->n++] = (op_info){.id = id, .kind = K_SEND, .peer = peer, .tag = tag,
                                .bytes = bytes};
    return TRD_OK;
}

static trd_status wire_irecv(void *ctx, int32_t peer, int32_t tag, void *buf, size_t bytes,
                             int32_t id)
{
    mpi_wire *w = ctx;
    trd_status s = check_op(w, "receive", peer, tag, buf, bytes);
    uint64_t sig = trd_mpi_call_now(w);
    if (s == TRD_OK && bytes < w->shm_below)
        return trd_shm_irecv(w->shm, peer, tag, sig, buf, bytes, id, &w->done);
    if (s == TRD_OK)
        s = reserve(w);
    if (s != TRD_OK)
        return s;
    int src = peer == TRD_ANY_RANK ? MPI_ANY_SOURCE : peer;
    int rc = MPI_Irecv(buf, (int)bytes, MPI_BYTE, src, trd_mpi_tag(w, tag), w->comm,
                       &w->reqs[w->n]);
    if (rc != MPI_SUCCESS)
        return trd_mpi_broke(w, trd_mpi_error(TRD_EIO, rc, "MPI_Irecv", w->rank));
    w->info[w->n++] = (op_info){.id = id, .kind = K_RECV, .peer = peer, .tag = tag,
                                .bytes = bytes};
    return TRD_OK;
}

/* Sends and receives posted and not complete, through MPI and the rings. */
static int pending(const mpi_wire *w, int *sends)
{
    int shm_recvs = 0, shm_sends = 0;
    if (w->shm)
        trd_shm_pending(w->shm, &shm_recvs, &shm_sends);
    *sends = shm_sends;
    for (int i = 0; i < w->n; i++)
        *sends += w->info[i].kind == K_SEND;
    return w->n + shm_recvs + shm_sends;
}

static trd_status wait_timeout(const mpi_wire *w)
{
    int sends, total = pending(w, &sends);
    if (total == 0)
        return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank %d: nothing completed before the "
                        "deadline", w->rank);
    char first[96] = ", all of at most the shared-memory limit";
    const op_info *op = w->n > 0 ? &w->info[0] : NULL;
    if (op)
        snprintf(first, sizeof first, ", the first through MPI: %s of step %d %s rank %d with "
                 "tag %d", op->kind == K_SEND ? "send" : "receive", (int)op->id,
                 op->kind == K_SEND ? "to" : "from", (int)op->peer, (int)op->tag);
    return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank %d: nothing completed before the deadline; "
                    "%d requests pending (%d sends, %d receives)%s", w->rank, total, sends,
                    total - sends, first);
}

static trd_status wire_wait(void *ctx, double timeout_s, int32_t *id, int32_t *from)
{
    mpi_wire *w = ctx;
    double deadline = 0;
    trd_status s = trd_mpi_check_usable(w);
    if (s != TRD_OK)
        return s;
    if (!id || !from)
        return trd_fail(TRD_EINVAL, "mpi wire: wait needs id and from");
    int sends;
    if (w->done.len == 0 && pending(w, &sends) == 0)
        return trd_fail(TRD_EINVAL, "mpi wire: rank %d: wait with nothing posted", w->rank);
    if ((s = trd_mpi_check_heard(w)) != TRD_OK)
        return trd_mpi_broke(w, s);
    double next_look = 0; /* when the wait looks around next (0: no clock read yet) */
    bool stalled = false; /* it has lasted STALL_S */
    while (w->done.len == 0) {
        /* The wire's own messages matter to a send or receive's wait on
         * rank 0 serving a dynamic call's decisions; otherwise only to one
         * that stalls (a peer's failure notice, the calls stalled peers
         * wait in; on the node the rings' flag brings a failure at once,
         * shm.h): testing them on every poll doubled the MPI calls of a
         * small message's wait (each MPI_Testsome runs MPI's progress
         * engine), and once in 16 polls of every wait, with the standing
         * receives of notices on every rank, cost an np 2 allreduce of 8 B
         * a tenth of its time. */
        bool progress, ctrl = w->policy || (stalled && ++w->ctrl_polls % CTRL_POLLS == 0);
        s = trd_mpi_poll_once(w, ctrl, &progress);
        if (s != TRD_OK)
            return trd_mpi_broke(w, s);
        if (w->done.len > 0)
            break;
        double now = wait_clock(w, &deadline, timeout_s);
        if (now > deadline) {
            s = trd_mpi_find_mismatch(w);
            return trd_mpi_broke(w, s != TRD_OK ? s : wait_timeout(w));
        }
        if (now >= 0 && next_look == 0) {
            next_look = now + STALL_S;
        } else if (now >= 0 && now >= next_look) { /* nothing comes: another call? */
            stalled = true;
            next_look = now + STALL_S;
            if ((s = trd_mpi_find_mismatch(w)) != TRD_OK)
                return trd_mpi_broke(w, s);
        }
        trd_mpi_back_off(w, progress);
    }
    trd_completion c;
    trd_fifo_pop(&w->done, &c);
    *id = c.id;
    *from = c.from;
    return TRD_OK;
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
        if (past(w, deadline)) {
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
    return finish(w, &w->ctrl[slot], deadline);
}

static trd_status ask_coordinator(mpi_wire *w, int64_t call, int32_t rank, trd_action *action,
                                  int32_t *peer)
{
    double deadline = MPI_Wtime() + w->timeout;
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
    if (late)
        return trd_fail(s, "mpi wire: rank %d: the coordinator (rank 0) did not answer the "
                        "decision request of call %lld before the deadline (%g s; %d requests of "
                        "this rank pending)", w->rank, (long long)call, w->timeout, w->n);
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

static trd_status wire_decide(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                              trd_action *action, int32_t *peer)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_check_usable(w);
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
        if (MPI_Wtime() > deadline)
            return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank 0: barrier %lld: %d of %d ranks "
                            "arrived before the deadline", (long long)w->barrier_seq,
                            w->arrivals + 1, w->size);
        trd_mpi_back_off(w, progress);
    }
    if (s != TRD_OK)
        return s;
    w->arrivals -= w->size - 1;
    w->agreed = 0; /* the next barrier's contributions start afresh */
    for (int32_t i = 0; i < n; i++)
        v[i] = w->acc[i];
    for (int r = 1; r < w->size; r++) {
        if ((s = finish(w, &w->release_req[r], deadline)) != TRD_OK)
            return s;
        agree_msg *m = &w->release_out[r];
        m->seq = w->barrier_seq;
        m->n = n;
        for (int32_t i = 0; i < n; i++)
            m->v[i] = v[i];
        int rc = MPI_Isend(m, 16 + 8 * n, MPI_BYTE, r, w->ctrl_tag + T_RELEASE, w->comm,
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
    if (late)
        return trd_fail(s, "mpi wire: rank %d: barrier %lld: rank 0 did not release it before "
                        "the deadline (%d requests of this rank pending)", w->rank,
                        (long long)w->barrier_seq, w->n);
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

static trd_status wire_agree(void *ctx, double *v, int32_t n, double deadline)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_check_usable(w);
    if (s == TRD_OK && (n < 0 || n > TRD_WIRE_AGREE_MAX || (!v && n > 0)))
        return trd_fail(TRD_EINVAL, "mpi wire: agree on %ld values: need 0 to %d", (long)n,
                        TRD_WIRE_AGREE_MAX);
    return s != TRD_OK ? s : trd_mpi_broke(w, run_barrier(w, v, n, deadline));
}

static trd_status wire_barrier(void *ctx, double deadline)
{
    return wire_agree(ctx, NULL, 0, deadline);
}

/* Rank 0: serves until every rank has had its terminal decision. */
static trd_status drain_decisions(mpi_wire *w, const trd_policy *policy, int64_t call)
{
    trd_status s = enter_call(w, policy, call);
    double deadline = MPI_Wtime() + w->timeout;
    while (s == TRD_OK && w->terminals < w->size) {
        bool progress;
        s = trd_mpi_poll_once(w, true, &progress);
        if (s != TRD_OK || w->terminals >= w->size)
            break;
        if (MPI_Wtime() > deadline)
            return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank 0: call %lld: only %ld of %d ranks "
                            "had their last decision before the deadline", (long long)call,
                            (long)w->terminals, w->size);
        trd_mpi_back_off(w, progress);
    }
    if (s != TRD_OK)
        return s;
    policy->reset(policy->state);
    w->policy = NULL;
    return TRD_OK;
}

static trd_status wire_end_dynamic(void *ctx, const trd_policy *policy, int64_t call)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_check_usable(w);
    if (s != TRD_OK)
        return s;
    if (!policy || !policy->idle || !policy->reset)
        return trd_fail(TRD_EINVAL, "mpi wire: end_dynamic needs a policy with idle and reset");
    if (w->rank == 0)
        s = drain_decisions(w, policy, call);
    else
        policy->reset(policy->state); /* an unused copy: kept in step for clarity */
    if (s == TRD_OK)
        s = run_barrier(w, NULL, 0, MPI_Wtime() + w->timeout);
    return trd_mpi_broke(w, s);
}

/* ---- Creation and release. ---- */

static void drop(MPI_Request *r, bool cancel)
{
    if (*r == MPI_REQUEST_NULL)
        return;
    if (cancel)
        MPI_Cancel(r);
    MPI_Request_free(r);
}

static void wire_free(void *ctx)
{
    mpi_wire *w = ctx;
    if (!w)
        return;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!finalized && w->comm != MPI_COMM_NULL) {
        for (int i = 0; i < w->n; i++) /* cancelling sends is deprecated: abandon them */
            drop(&w->reqs[i], w->info[i].kind == K_RECV);
        for (int c = 0; c < C_COUNT; c++)
            drop(&w->ctrl[c], c == C_REQ_IN || c == C_ARRIVE_IN || c == C_REP_IN ||
                                  c == C_RELEASE_IN || c == C_ABORT_IN || c == C_CALL_IN);
        for (int r = 0; w->reply_req && w->release_req && r < w->size; r++) {
            drop(&w->reply_req[r], false);
            drop(&w->release_req[r], false);
        }
        for (int r = 0; w->fail_req && r < w->size; r++)
            drop(&w->fail_req[r], false);
        for (int r = 0; w->tell_req && r < w->size; r++)
            drop(&w->tell_req[r], false);
        MPI_Comm_free(&w->comm);
    }
    free(w->reqs);
    free(w->info);
    free(w->idx);
    free(w->st);
    free(w->done.items);
    trd_shm_free(w->shm);
    free(w->held);
    free(w->reply);
    free(w->reply_req);
    free(w->release_out);
    free(w->release_req);
    free(w->fail_req);
    free(w->heard);
    free(w->told);
    free(w->tell);
    free(w->tell_req);
    free(w);
}

/* The first tag of the wire's own messages: 1 << 20, or the top T_COUNT
 * tags on an MPI that has fewer.  MPI_TAG_UB is cached on MPI_COMM_WORLD
 * (MPI-3.1 Sec. 8.1.2): Open MPI leaves it off communicators made by
 * MPI_Comm_split or MPI_Comm_create and their duplicates. */
static trd_status pick_ctrl_tag(mpi_wire *w)
{
    int *ub = NULL, flag = 0;
    int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (rc != MPI_SUCCESS || !flag || !ub)
        return trd_fail(TRD_EBACKEND, "mpi wire: MPI_TAG_UB is not available");
    w->ctrl_tag = *ub >= CTRL_TAG + T_COUNT ? CTRL_TAG : *ub - T_COUNT + 1;
    return trd_mpi_setup_faults(w, *ub);
}

/* Rank 0's tables: one reply and one release slot per rank, held requests. */
static trd_status alloc_root(mpi_wire *w)
{
    size_t n = (size_t)w->size;
    w->held = malloc(n * sizeof *w->held);
    w->reply = malloc(n * sizeof *w->reply);
    w->reply_req = malloc(n * sizeof *w->reply_req);
    w->release_out = malloc(n * sizeof *w->release_out);
    w->release_req = malloc(n * sizeof *w->release_req);
    if (!w->held || !w->reply || !w->reply_req || !w->release_out || !w->release_req) {
        free(w->reply_req); /* wire_free must not read uninitialised requests */
        free(w->release_req);
        w->reply_req = w->release_req = NULL;
        return trd_fail(TRD_ENOMEM, "mpi wire: out of memory for %d ranks", w->size);
    }
    for (size_t r = 0; r < n; r++)
        w->reply_req[r] = w->release_req[r] = MPI_REQUEST_NULL;
    if (w->size == 1)
        return TRD_OK;
    trd_status s = post_standing(w, C_REQ_IN);
    return s != TRD_OK ? s : post_standing(w, C_ARRIVE_IN);
}

/* *local: how many of the communicator's ranks run on this node; and
 * w->crowded: whether that is more than it has cores online (back_off),
 * or TRD_MPI_CROWDED=1 says the machine's cores are shared anyway (the
 * hosts of `treduce testbed run` are namespaces of one machine). */
static int count_node(mpi_wire *w, int *local)
{
    MPI_Comm node;
    int rc = MPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Comm_size(node, local);
    MPI_Comm_free(&node);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *forced = getenv("TRD_MPI_CROWDED");
    w->crowded = cores < 1 || *local > cores || (forced && !strcmp(forced, "1"));
    return rc;
}

/* Rank 0: the largest message for the rings, from TRD_MPI_SHM_MAX (bytes;
 * 0: no rings) or the default (mpi_wire.h: larger on a crowded node), and
 * their slots' size: at most TRD_SHM_FRAGMENT, cut to what fits
 * (trd_shm_fit; 0: no rings). */
static trd_status shm_limit(const mpi_wire *w, int64_t *max, int64_t *frag, int64_t *choice)
{
    const char *text = getenv("TRD_MPI_SHM_MAX");
    *choice = !text && !w->crowded;
    char *end = NULL;
    long long v = text ? strtoll(text, &end, 10)
                       : w->crowded ? TRD_MPI_SHM_MAX_CROWDED : TRD_MPI_SHM_MAX_DEFAULT;
    if (text && (end == text || *end || v < 0 || v > INT_MAX))
        return trd_fail(TRD_EINVAL, "mpi wire: TRD_MPI_SHM_MAX=%s is not a byte count from 0 "
                        "to %d", text, INT_MAX);
    *frag = (int64_t)trd_shm_fit(w->size, v < TRD_SHM_FRAGMENT ? (size_t)v : TRD_SHM_FRAGMENT);
    *max = *frag > 0 ? v : 0;
    return TRD_OK;
}

/* The rings of shm.h, when every rank of the communicator is on this node:
 * rank 0 creates their segment and tells the others its name and limit;
 * if any rank cannot map it, every rank goes without (MPI only). */
static trd_status setup_shm(mpi_wire *w, int local)
{
    if (local != w->size || w->size < 2)
        return TRD_OK; /* the same on every rank: no node holds them all */
    struct {
        int64_t max, frag, choice; /* max -1: rank 0 refused TRD_MPI_SHM_MAX */
        char name[64];
    } seg = {0, 0, 0, ""};
    trd_status s = TRD_OK;
    if (w->rank == 0) {
        s = shm_limit(w, &seg.max, &seg.frag, &seg.choice);
        if (s != TRD_OK)
            seg.max = -1;
        else if (seg.max > 0 &&
                 trd_shm_open(&w->shm, seg.name, true, 0, w->size, (size_t)seg.frag) != TRD_OK)
            seg.max = 0;
    }
    int rc = MPI_Bcast(&seg, (int)sizeof seg, MPI_BYTE, 0, w->comm);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "MPI_Bcast of the shared segment", w->rank);
    if (seg.max < 0)
        return w->rank == 0 ? s : trd_fail(TRD_EINVAL, "mpi wire: rank 0 refused its "
                                           "TRD_MPI_SHM_MAX (not a byte count)");
    if (seg.max == 0)
        return TRD_OK;
    int ok = w->rank == 0 || trd_shm_open(&w->shm, seg.name, false, w->rank, w->size,
                                          (size_t)seg.frag) == TRD_OK, all = 0;
    rc = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, w->comm);
    if (w->rank == 0)
        trd_shm_unlink(seg.name); /* mapped everywhere now: nothing to leave behind */
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "MPI_Allreduce of the shared segment", w->rank);
    if (all) {
        w->shm_below = (size_t)seg.max + 1;
        w->shm_choice = seg.choice;
    } else {
        trd_shm_free(w->shm);
        w->shm = NULL;
    }
    return TRD_OK;
}

static trd_status setup(mpi_wire *w, MPI_Comm comm)
{
    int rc = MPI_Comm_dup(comm, &w->comm);
    if (rc != MPI_SUCCESS) {
        w->comm = MPI_COMM_NULL;
        return trd_mpi_error(TRD_EBACKEND, rc, "MPI_Comm_dup", -1);
    }
    rc = MPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(w->comm, &w->rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(w->comm, &w->size);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "setting up the communicator", -1);
    int local = 1;
    if ((rc = count_node(w, &local)) != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "counting the ranks of this node", -1);
    trd_status s = setup_shm(w, local);
    if (s == TRD_OK)
        s = pick_ctrl_tag(w);
    if (s != TRD_OK || w->rank != 0)
        return s;
    return alloc_root(w);
}

trd_status trd_wire_mpi_create(trd_wire **out, const void *mpi_comm)
{
    if (!out || !mpi_comm)
        return trd_fail(TRD_EINVAL, "mpi wire: create needs out and a communicator");
    *out = NULL;
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return trd_fail(TRD_EINVAL, "mpi wire: MPI is %s (MPI_Init must come first)",
                        fin ? "finalized" : "not initialised");
    mpi_wire *w = calloc(1, sizeof *w);
    if (!w)
        return trd_fail(TRD_ENOMEM, "mpi wire: out of memory");
    for (int c = 0; c < C_COUNT; c++)
        w->ctrl[c] = MPI_REQUEST_NULL;
    w->timeout = TRD_WIRE_MPI_TIMEOUT;
    trd_status s = setup(w, *(const MPI_Comm *)mpi_comm);
    if (s != TRD_OK) {
        wire_free(w);
        return s;
    }
    w->wire = (trd_wire){.ctx = w, .rank = w->rank, .size = w->size, .name = "mpi",
                         .isend = wire_isend, .irecv = wire_irecv, .wait = wire_wait,
                         .now = wire_now, .decide = wire_decide,
                         .end_dynamic = wire_end_dynamic, .barrier = wire_barrier,
                         .agree = wire_agree, .set_call = trd_mpi_set_call,
                         .failed = trd_mpi_failed, .abort = trd_mpi_abort, .free = wire_free};
    *out = &w->wire;
    return TRD_OK;
}

trd_status trd_wire_mpi_set_timeout(trd_wire *w, double seconds)
{
    if (!w || w->free != wire_free)
        return trd_fail(TRD_EINVAL, "mpi wire: set_timeout on a wire that is not an MPI wire");
    if (!isfinite(seconds) || seconds <= 0)
        return trd_fail(TRD_EINVAL, "mpi wire: timeout %g s is not finite and > 0", seconds);
    ((mpi_wire *)w->ctx)->timeout = seconds;
    return TRD_OK;
}

bool trd_wire_mpi_available(void)
{
    return true;
}

size_t trd_wire_mpi_shm_max(const trd_wire *w)
{
    if (!w || w->free != wire_free)
        return 0;
    const mpi_wire *m = w->ctx;
    return m->shm_below ? m->shm_below - 1 : 0;
}

bool trd_wire_mpi_shm_choice(const trd_wire *w)
{
    return w && w->free == wire_free && ((const mpi_wire *)w->ctx)->shm_choice;
}

trd_status trd_wire_mpi_set_shm_max(trd_wire *w, size_t max)
{
    mpi_wire *m = w && w->free == wire_free ? w->ctx : NULL;
    if (!m || !m->shm_below || max == 0 || max > INT_MAX)
        return trd_fail(TRD_EINVAL, "mpi wire: %s", !m ? "not an MPI wire"
                        : !m->shm_below ? "no shared-memory rings to set a limit for"
                                        : "the limit must be from 1 to INT_MAX bytes");
    m->shm_below = max + 1;
    return TRD_OK;
}

#else /* !TRD_HAVE_MPI: the same functions, saying there is no MPI. */

bool trd_wire_mpi_available(void)
{
    return false;
}

trd_status trd_wire_mpi_create(trd_wire **out, const void *mpi_comm)
{
    (void)mpi_comm;
    if (out)
        *out = NULL;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

trd_status trd_wire_mpi_set_timeout(trd_wire *w, double seconds)
{
    (void)w;
    (void)seconds;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

size_t trd_wire_mpi_shm_max(const trd_wire *w)
{
    (void)w;
    return 0;
}

bool trd_wire_mpi_shm_choice(const trd_wire *w)
{
    (void)w;
    return false;
}

trd_status trd_wire_mpi_set_shm_max(trd_wire *w, size_t max)
{
    (void)w;
    (void)max;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

#endif

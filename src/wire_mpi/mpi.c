/* mpi.c: the wire of wire.h over MPI point-to-point, its data path
 * (docs/RUNTIME_INTERNALS.md, "The MPI wire": every rank runs its own
 * program of the one engine).  The wire's own messages - the
 * coordinator, barriers and agreements - are in mpi_control.c; the rings of
 * one node and the choice of the path of long messages in mpi_node.c;
 * creation and release in mpi_create.c; failures, the peers' notices and
 * the call signature in tags in mpi_fail.c.
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
 * Nothing blocks inside MPI: every loop tests, checks its deadline and
 * backs off (a short spin, sched_yield, then short sleeps), so a run with
 * more ranks than cores leaves the CPU to the rank that has work, and a
 * dead peer ends in
 * TRD_ETIMEDOUT instead of a hang. */
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
    if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS)
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
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, g);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static void unguard_world(world_guard *g)
{
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, *g);
    PMPI_Errhandler_free(g);
}
#endif

int trd_mpi_testsome(int n, MPI_Request *reqs, int *count, int *idx, MPI_Status *st)
{
    world_guard g;
    guard_world(&g);
    int rc = PMPI_Testsome(n, reqs, count, idx, st);
    unguard_world(&g);
    return rc;
}

double trd_mpi_now(void *ctx)
{
    (void)ctx;
    return PMPI_Wtime();
}

/* The empty polls a wait spends spinning: none on a node with more ranks
 * than cores when it waits for the rings alone.  A ring poll is a load of
 * one cache line, so the spins only kept the core from the rank that had
 * to write the message, and made a one-double allreduce at np 8 several
 * times slower; through MPI the same allreduce needs the spins, which
 * progress MPI's requests (docs/RUNTIME_INTERNALS.md, "The MPI wire"). */
static long spin_polls(const mpi_wire *w)
{
    int recvs = 0, sends = 0;
    if (!w->crowded || w->n > 0 || !w->shm)
        return SPIN_POLLS;
    trd_shm_pending(w->shm, &recvs, &sends);
    return recvs + sends > 0 ? 0 : SPIN_POLLS;
}

/* Called after each poll: the first SPIN_POLLS empty polls just
 * poll again, since a small message is often about to arrive and a yield
 * costs a system call and a trip through the scheduler; then a poll that
 * found nothing yields the CPU (other ranks may share it), and on a node
 * with more ranks than cores, after many such polls, sleeps briefly, so an
 * oversubscribed run does not spin (Open MPI's mpi_yield_when_idle makes
 * the same distinction).  With a core per rank a sleep would only delay
 * the wake-up (a 50 us sleep ends up to 100 us late), so a rank waiting
 * for a long transfer or combine keeps yielding.  Spinning first helped
 * even 8 ranks on 2 cores (docs/RUNTIME_INTERNALS.md, "The MPI wire") - while MPI has
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
bool trd_mpi_past(mpi_wire *w, double deadline)
{
    return clock_due(w) && PMPI_Wtime() > deadline;
}

/* A wait's clock: when a read is due (clock_due), the time, and the
 * wait's deadline (0: not yet known) set by its first read; -1 when no
 * read is due. */
static double wait_clock(mpi_wire *w, double *deadline, double timeout_s)
{
    if (!clock_due(w))
        return -1;
    double now = PMPI_Wtime();
    if (*deadline == 0)
        *deadline = now + timeout_s;
    return now;
}

/* Tests one request of the wire's own until it completes (a reply or
 * release slot about to be reused: its previous message has been received
 * already, so this is quick). */
trd_status trd_mpi_finish(mpi_wire *w, MPI_Request *r, double deadline)
{
    while (*r != MPI_REQUEST_NULL) {
        world_guard g;
        guard_world(&g);
        int flag = 0, rc = PMPI_Test(r, &flag, MPI_STATUS_IGNORE);
        unguard_world(&g);
        if (rc != MPI_SUCCESS)
            return trd_mpi_error(TRD_EIO, rc, "MPI_Test of a control message", w->rank);
        if (flag) {
            w->empty_polls = 0;
            break;
        }
        if (PMPI_Wtime() > deadline)
            return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank %d: a control message was not "
                            "delivered before the deadline", w->rank);
        trd_mpi_back_off(w, false);
    }
    return TRD_OK;
}

/* A completed request that failed: MPI_ERR_TRUNCATE is the caller's size
 * mismatch, anything else a lost peer or a broken MPI. */
static trd_status op_error(const mpi_wire *w, const op_info *op, const MPI_Status *st)
{
    int cls = 0;
    PMPI_Error_class(st->MPI_ERROR, &cls);
    if (cls == MPI_ERR_TRUNCATE) {
        char sent[48] = "";
#ifdef OPEN_MPI /* reports the sent size in the status; MPICH does not */
        int count = 0;
        if (PMPI_Get_count(st, MPI_BYTE, &count) == MPI_SUCCESS && (size_t)count > op->bytes)
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
    int count = 0, rc = PMPI_Testsome(w->n, w->reqs, &count, w->idx, w->st);
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

trd_status trd_mpi_isend(void *ctx, int32_t peer, int32_t tag, const void *buf, size_t bytes,
                             int32_t id)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_ready(w);
    if (s == TRD_OK)
        s = check_op(w, "send", peer, tag, buf, bytes);
    uint64_t sig = trd_mpi_call_now(w);
    if (s == TRD_OK && bytes < w->shm_below)
        return trd_shm_isend(w->shm, peer, tag, sig, buf, bytes, id, &w->done);
    if (s == TRD_OK)
        s = reserve(w);
    if (s != TRD_OK)
        return s;
    int rc = PMPI_Isend(buf, (int)bytes, MPI_BYTE, peer, trd_mpi_tag(w, tag), w->comm,
                       &w->reqs[w->n]);
    if (rc != MPI_SUCCESS)
        return trd_mpi_broke(w, trd_mpi_error(TRD_EIO, rc, "MPI_Isend", w->rank));
    w->info[w->n++] = (op_info){.id = id, .kind = K_SEND, .peer = peer, .tag = tag,
                                .bytes = bytes};
    return TRD_OK;
}

trd_status trd_mpi_irecv(void *ctx, int32_t peer, int32_t tag, void *buf, size_t bytes,
                             int32_t id)
{
    mpi_wire *w = ctx;
    trd_status s = trd_mpi_ready(w);
    if (s == TRD_OK)
        s = check_op(w, "receive", peer, tag, buf, bytes);
    uint64_t sig = trd_mpi_call_now(w);
    if (s == TRD_OK && bytes < w->shm_below)
        return trd_shm_irecv(w->shm, peer, tag, sig, buf, bytes, id, &w->done);
    if (s == TRD_OK)
        s = reserve(w);
    if (s != TRD_OK)
        return s;
    int src = peer == TRD_ANY_RANK ? MPI_ANY_SOURCE : peer;
    int rc = PMPI_Irecv(buf, (int)bytes, MPI_BYTE, src, trd_mpi_tag(w, tag), w->comm,
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

/* The distinct ranks this rank's pending receives wait for (rings and
 * MPI), appended to buf: at most 8. */
static void append_awaited(const mpi_wire *w, char *buf, size_t size, size_t *at)
{
    int32_t peers[8];
    int n = w->shm ? trd_shm_awaited(w->shm, peers, 8) : 0;
    for (int i = 0; i < w->n && n < 8; i++) {
        bool seen = w->info[i].kind != K_RECV || w->info[i].peer == TRD_ANY_RANK;
        for (int k = 0; k < n && !seen; k++)
            seen = peers[k] == w->info[i].peer;
        if (!seen)
            peers[n++] = w->info[i].peer;
    }
    for (int k = 0; k < n && *at < size; k++) {
        int c = snprintf(buf + *at, size - *at, "%s%d",
                         k ? ", " : n == 1 ? "; it waits for a message of rank "
                                           : "; it waits for messages of ranks ",
                         (int)peers[k]);
        *at += c > 0 ? (size_t)c : 0;
    }
}

static trd_status wait_timeout(const mpi_wire *w)
{
    int sends, total = pending(w, &sends);
    char more[512] = "";
    size_t at = 0;
    append_awaited(w, more, sizeof more, &at);
    trd_mpi_silent(w, more, sizeof more, &at);
    if (total == 0)
        return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank %d: nothing completed before the "
                        "deadline%s", w->rank, more);
    char first[96] = ", all of at most the shared-memory limit";
    const op_info *op = w->n > 0 ? &w->info[0] : NULL;
    if (op)
        snprintf(first, sizeof first, ", the first through MPI: %s of step %d %s rank %d with "
                 "tag %d", op->kind == K_SEND ? "send" : "receive", (int)op->id,
                 op->kind == K_SEND ? "to" : "from", (int)op->peer, (int)op->tag);
    return trd_fail(TRD_ETIMEDOUT, "mpi wire: rank %d: nothing completed before the deadline; "
                    "%d requests pending (%d sends, %d receives)%s%s", w->rank, total, sends,
                    total - sends, first, more);
}

trd_status trd_mpi_wait(void *ctx, double timeout_s, int32_t *id, int32_t *from)
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

#endif

/* mpi_close.c: releasing an MPI wire without leaving a message behind.
 *
 * MPI gives a new communicator the context of a freed one, and a message
 * that reaches a process after its communicator was freed is delivered to
 * the next communicator with that context (Open MPI keeps such messages
 * for "a communicator that does not exist yet"): a wire that frees its
 * communicator while a message to it is still on its way hands that
 * message to whatever communicator comes next - the program's own, or a
 * new wire, whose receive then takes it for one of its own.  In a call
 * that succeeds every data message is received before the call ends; the
 * messages a wire sends that nothing may wait for are the announcements
 * of a stalled wait (mpi_fail.c, tell) and the failure notices.  Both are
 * synchronous sends (complete once received), so a wire is closed in two
 * steps, without blocking (ranks free their communicators in any order):
 *
 *   1. its own sends complete (meanwhile its standing receives keep taking
 *      what peers still send it);
 *   2. a max-allreduce over its communicator (PMPI_Iallreduce) of
 *      whether anything is left: a failure, a request still pending.
 *
 * When that allreduce completes every rank has passed step 1, so every
 * message sent on the communicator has been received: the standing
 * receives are cancelled and the communicator is freed.  If any rank had
 * something left, no rank frees it (a failed call's abandoned sends may
 * still arrive): the communicator is kept until MPI_Finalize, one per
 * failure.  The freed wires wait in one list, advanced whenever a wire is
 * made, begins a call or is freed, and at the latest at MPI_Finalize (an
 * attribute of MPI_COMM_SELF, whose delete callback MPI runs first in
 * MPI_Finalize), which waits up to CLOSE_FINAL_S for those still clean
 * here and then gives up on every one left, keeping its communicator.  The list is shared by the threads
 * of the process (MPI_THREAD_MULTIPLE): one mutex. */
#include "wire_mpi/mpi_wire.h"

#ifdef TRD_HAVE_MPI

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "wire_mpi/mpi_internal.h"

/* At MPI_Finalize, the longest wait for a wire still closing: its ranks
 * are all in MPI_Finalize or about to be, unless one is gone. */
#define CLOSE_FINAL_S 10.0

enum { CLOSE_SENDS, CLOSE_AGREE, CLOSE_DONE };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mpi_wire *closing;        /* the wires being closed (under lock) */
static atomic_int nclosing;      /* their number, read without the lock */
static int final_keyval = MPI_KEYVAL_INVALID; /* the MPI_COMM_SELF attribute */

/* Whether every request of reqs[0..n) is complete (NULL ones are); one
 * that fails counts as complete. */
static bool sent(MPI_Request *reqs, int n)
{
    bool all = true;
    for (int i = 0; reqs && i < n; i++) {
        int flag = 1;
        if (reqs[i] != MPI_REQUEST_NULL && PMPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE) ==
                                               MPI_SUCCESS)
            all = all && flag;
    }
    return all;
}

/* Takes what the standing receives got while closing: a stalled peer's
 * call (posted again: its sender waits for the receipt) or a failure
 * notice (posted again too; the wire is then not clean).  A decision
 * request or barrier arrival at rank 0 now belongs to no call: not
 * clean. */
static void drain(mpi_wire *w)
{
    int count = 0, idx[C_COUNT];
    MPI_Status st[C_COUNT];
    if (PMPI_Testsome(C_COUNT, w->ctrl, &count, idx, st) != MPI_SUCCESS)
        return;
    for (int k = 0; k < count; k++) { /* MPI_UNDEFINED < 0: none */
        if (idx[k] == C_CALL_IN)
            trd_mpi_post_call_in(w);
        else if (idx[k] == C_ABORT_IN && trd_mpi_post_notice_in(w) == MPI_SUCCESS)
            w->close_dirty = 1;
        else if (idx[k] == C_REQ_IN || idx[k] == C_ARRIVE_IN)
            w->close_dirty = 1;
    }
}

/* Whether this rank's own sends are complete: the announcements and
 * notices (synchronous), rank 0's replies and releases, the last request
 * and arrival of the others. */
static bool own_sends_done(mpi_wire *w)
{
    MPI_Request out[2] = {w->ctrl[C_REQ_OUT], w->ctrl[C_ARRIVE_OUT]};
    bool done = sent(w->tell_req, w->tell_req ? w->size : 0) &&
                sent(w->fail_req, w->fail_req ? w->size : 0) &&
                sent(w->reply_req, w->reply_req ? w->size : 0) &&
                sent(w->release_req, w->release_req ? w->size : 0) && sent(out, 2);
    w->ctrl[C_REQ_OUT] = out[0];
    w->ctrl[C_ARRIVE_OUT] = out[1];
    return done;
}

/* What closing w comes to, step by step. */
typedef enum { STILL, CLEAN, KEPT } outcome;

/* One step of closing w. */
static outcome advance(mpi_wire *w)
{
    drain(w);
    /* a rank with something left keeps the communicator anyway: it only
     * owes the others its vote */
    if (w->close_stage == CLOSE_SENDS && (w->close_dirty || own_sends_done(w))) {
        if (PMPI_Iallreduce(&w->close_dirty, &w->close_any_dirty, 1, MPI_INT, MPI_MAX, w->comm,
                            &w->close_req) != MPI_SUCCESS) {
            w->close_req = MPI_REQUEST_NULL;
            return KEPT; /* cannot agree: keep the communicator */
        }
        w->close_stage = CLOSE_AGREE;
    }
    int flag = 0;
    if (w->close_stage == CLOSE_AGREE &&
        PMPI_Test(&w->close_req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return KEPT;
    return !flag ? STILL : w->close_any_dirty ? KEPT : CLEAN;
}

/* The wires of a pass that closed, to release once the lock is let go:
 * freeing an MPI communicator runs its attributes' delete callbacks,
 * which may call anything, treduce too. */
static mpi_wire *closed;

static void finish(mpi_wire *w, outcome o)
{
    w->close_stage = o == CLEAN ? CLOSE_DONE : -1;
    w->close_next = closed;
    closed = w;
}

/* One pass over the list (the lock held). */
static void reap_locked(void)
{
    for (mpi_wire **p = &closing; *p;) {
        mpi_wire *w = *p;
        outcome o = advance(w);
        if (o != STILL) {
            *p = w->close_next;
            atomic_fetch_sub(&nclosing, 1);
            finish(w, o);
        } else {
            p = &w->close_next;
        }
    }
}

/* Lets the lock go and releases what closed meanwhile. */
static void unlock_and_release(void)
{
    mpi_wire *w = closed;
    closed = NULL;
    pthread_mutex_unlock(&lock);
    while (w) {
        mpi_wire *next = w->close_next;
        if (w->close_stage == CLOSE_DONE)
            trd_mpi_destroy(w, true);
        else
            trd_mpi_give_up(w);
        w = next;
    }
}

void trd_mpi_reap(void)
{
    if (atomic_load_explicit(&nclosing, memory_order_relaxed) == 0)
        return;
    if (pthread_mutex_trylock(&lock) != 0)
        return; /* another thread is reaping */
    reap_locked();
    unlock_and_release();
}

void trd_mpi_close(mpi_wire *w)
{
    bool pending = w->n > 0;
    if (w->shm) {
        int recvs = 0, sends = 0;
        trd_shm_pending(w->shm, &recvs, &sends);
        pending = pending || recvs + sends > 0;
    }
    w->close_dirty = w->fail_code != TRD_OK || w->withdrawn || pending;
    w->close_stage = CLOSE_SENDS;
    w->close_req = MPI_REQUEST_NULL;
    pthread_mutex_lock(&lock);
    w->close_next = closing;
    closing = w;
    atomic_fetch_add(&nclosing, 1);
    reap_locked();
    unlock_and_release();
}

/* Whether a wire still closing is clean on this rank: its communicator
 * may yet be freed, when the others' votes come. */
static bool any_clean(void)
{
    for (const mpi_wire *w = closing; w; w = w->close_next)
        if (!w->close_dirty)
            return true;
    return false;
}

/* MPI_Finalize begins: the wires still closing that are clean here get
 * CLOSE_FINAL_S to hear from the other ranks; then every one left is
 * given up, its communicator kept (trd_mpi_give_up). */
static int close_all(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    pthread_mutex_lock(&lock);
    double until = PMPI_Wtime() + CLOSE_FINAL_S;
    reap_locked();
    while (any_clean() && PMPI_Wtime() < until) {
        sched_yield();
        reap_locked();
    }
    while (closing) {
        mpi_wire *w = closing;
        closing = w->close_next;
        atomic_fetch_sub(&nclosing, 1);
        finish(w, KEPT);
    }
    unlock_and_release();
    trd_mpi_pool_finish();
    return MPI_SUCCESS;
}

bool trd_mpi_closing_holds(const char *name)
{
    bool holds = false;
    pthread_mutex_lock(&lock);
    for (const mpi_wire *w = closing; w && !holds; w = w->close_next)
        holds = w->shm && !strcmp(w->shm_name, name);
    pthread_mutex_unlock(&lock);
    return holds;
}

void trd_mpi_close_at_finalize(void)
{
    pthread_mutex_lock(&lock);
    if (final_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_all, &final_keyval, NULL) ==
            MPI_SUCCESS &&
        PMPI_Comm_set_attr(MPI_COMM_SELF, final_keyval, NULL) != MPI_SUCCESS) {
        PMPI_Comm_free_keyval(&final_keyval);
        final_keyval = MPI_KEYVAL_INVALID;
    }
    pthread_mutex_unlock(&lock);
}

#endif

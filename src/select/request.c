/* request.c: nonblocking and persistent collectives (treduce/runtime.h,
 * "Requests"): a request holds one call's arguments, and starting it puts
 * it in its communicator's queue, which one progress thread per
 * communicator runs in start order, each call through the same public
 * collective a blocking call makes.  So a started reduction advances while
 * every rank computes without calling treduce (MPI itself advances its
 * nonblocking collectives only inside MPI calls), and a blocking call pays
 * nothing for it: the thread is made at the first start, and a blocking
 * call on a communicator with started requests first waits for them (MPI
 * orders a communicator's collectives by their start on every rank).
 *
 * A wait that finds its request still queued at the head while nobody runs
 * the queue runs it on the waiting thread: a start then a wait costs the
 * blocking call and a lock, not two thread switches.  For that the
 * progress thread takes a call only once it has been queued PICKUP_NS (a
 * wait right after the start comes first; a call left to overlap with
 * computation starts that much later), and a blocking call waiting for
 * the queue runs its head itself when nobody does.  Where the wire
 * allows no other thread (MPI below MPI_THREAD_MULTIPLE, wire.h async)
 * there is no progress thread: the queue runs inside trd_request_wait and
 * trd_request_test, on the caller's thread.
 *
 * A layer above treduce may queue a step of its own (trd_comm_post): it
 * runs in the same order as a started call and is freed once run, for
 * the MPI layer's nonblocking calls, which complete an MPI request of
 * their own.
 *
 * Locks: one mutex per communicator's queue; the calls themselves run
 * outside it, one at a time (the `running` flag), so the communicator's
 * state has one user at a time as for blocking calls. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "select/select.h"

enum { R_INACTIVE, R_QUEUED, R_RUNNING, R_DONE };

/* How long a started call waits in the queue before the progress thread
 * takes it: long enough that a wait right after the start, even on a
 * rank the scheduler held back, takes it first (the thread's wake-ups
 * are one per PICKUP_NS at most in a loop of starts and waits), short
 * next to any call worth overlapping. */
#define PICKUP_NS 1000000L

struct trd_request {
    trd_comm *comm;
    trd_collective coll;
    const void *sendbuf;
    void *recvbuf;
    int64_t count;       /* a reduce-scatter of uneven parts: parts is set */
    int64_t *parts;      /* its recvcounts, copied */
    int32_t root;
    const trd_op *op;
    trd_coll_opts opts;  /* copied; has_opts false: the collective's default */
    bool has_opts, persistent;
    trd_status (*step)(void *); /* trd_comm_post: a step, not a collective */
    void *step_arg;
    bool detached;       /* a posted step: freed once run, nobody waits for it */
    bool started;        /* ever started: the caller's own, read without the lock */
    struct timespec due; /* when the progress thread may take it (CLOCK_MONOTONIC) */
    int state;           /* R_*, under the queue's lock */
    trd_status status;
    char msg[512];
    trd_request *next;   /* in the queue */
};

struct trd_progress {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    trd_request *head, *tail;
    bool running;        /* a call of the queue runs (on any thread) */
    bool thread, stop;   /* the progress thread exists; it must end */
    bool idle;           /* it waits for work with no deadline: a start must wake it */
    pthread_t tid;
};

/* This thread runs a queued call: its collective must not wait for the
 * queue it is part of. */
static _Thread_local bool in_queue;

static trd_status run_call(trd_request *q)
{
    const trd_coll_opts *o = q->has_opts ? &q->opts : NULL;
    if (q->step)
        return q->step(q->step_arg);
    switch (q->coll) {
    case TRD_COLL_REDUCE:
        return trd_reduce(q->comm, q->sendbuf, q->recvbuf, q->count, q->op, q->root, o);
    case TRD_COLL_ALLREDUCE:
        return trd_allreduce(q->comm, q->sendbuf, q->recvbuf, q->count, q->op, o);
    case TRD_COLL_REDUCE_SCATTER:
        return q->parts ? trd_reduce_scatter(q->comm, q->sendbuf, q->recvbuf, q->parts, q->op, o)
                        : trd_reduce_scatter_block(q->comm, q->sendbuf, q->recvbuf, q->count,
                                                   q->op, o);
    case TRD_COLL_SCAN:
        return trd_scan(q->comm, q->sendbuf, q->recvbuf, q->count, q->op, o);
    default:
        return trd_exscan(q->comm, q->sendbuf, q->recvbuf, q->count, q->op, o);
    }
}

/* Runs the queue's head (g->mu held on entry and on return). */
static void run_head(struct trd_progress *g)
{
    trd_request *q = g->head;
    g->head = q->next;
    if (!g->head)
        g->tail = NULL;
    q->next = NULL;
    q->state = R_RUNNING;
    g->running = true;
    pthread_mutex_unlock(&g->mu);
    in_queue = true;
    trd_status st = run_call(q);
    in_queue = false;
    pthread_mutex_lock(&g->mu);
    q->status = st;
    snprintf(q->msg, sizeof q->msg, "%s", st == TRD_OK ? "" : trd_errmsg());
    q->state = R_DONE;
    g->running = false;
    pthread_cond_broadcast(&g->done);
    if (g->idle && g->head) /* it waited while this ran on a waiting thread */
        pthread_cond_signal(&g->work);
    if (q->detached)
        free(q);
}

static bool before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *progress_main(void *arg)
{
    struct trd_progress *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        if (g->stop && !g->head && !g->running)
            break; /* nothing left */
        if (!g->head || g->running) { /* a start, or the end of a stolen call, wakes it */
            g->idle = true;
            pthread_cond_wait(&g->work, &g->mu);
            g->idle = false;
            continue;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!g->stop && before(&now, &g->head->due)) { /* a wait may take it first: */
            pthread_cond_timedwait(&g->work, &g->mu, &g->head->due); /* starts meanwhile */
            continue;                                                /* do not wake it */
        }
        run_head(g);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void progress_free(struct trd_progress *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->stop = true;
    pthread_cond_broadcast(&g->work);
    pthread_mutex_unlock(&g->mu);
    if (g->thread)
        pthread_join(g->tid, NULL);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->work);
    pthread_cond_destroy(&g->done);
    free(g);
}

void trd_progress_free(struct trd_progress *g) { progress_free(g); }

static struct trd_progress *progress_of(trd_comm *c)
{
    struct trd_select_state *s = trd_select_state_of(c);
    if (!s)
        return NULL;
    if (!s->progress && (s->progress = calloc(1, sizeof *s->progress))) {
        pthread_condattr_t monotonic; /* the pick-up deadlines' clock */
        pthread_condattr_init(&monotonic);
        pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
        pthread_mutex_init(&s->progress->mu, NULL);
        pthread_cond_init(&s->progress->work, &monotonic);
        pthread_cond_init(&s->progress->done, NULL);
        pthread_condattr_destroy(&monotonic);
    }
    return s->progress;
}

/* Waits until q is done (g->mu held), running the queue's heads, q's
 * predecessors and q, where nobody runs them (before the progress thread
 * picks them up, or without one). */
static void await(struct trd_progress *g, trd_request *q)
{
    while (q->state != R_DONE) {
        if (!g->running && g->head)
            run_head(g);
        else
            pthread_cond_wait(&g->done, &g->mu);
    }
}

void trd_comm_drain(trd_comm *c)
{
    struct trd_select_state *s = c && !in_queue ? c->select : NULL;
    struct trd_progress *g = s ? s->progress : NULL;
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    while (g->head || g->running) { /* the queue's calls may be freed once run: */
        if (!g->running)               /* only the queue itself is read */
            run_head(g);
        else
            pthread_cond_wait(&g->done, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

static trd_status new_request(trd_comm *c, trd_collective coll, const void *sendbuf,
                              void *recvbuf, int64_t count, const int64_t *parts, int32_t root,
                              const trd_op *op, const trd_coll_opts *opts, bool persistent,
                              trd_request **out)
{
    if (!out)
        return trd_fail(TRD_EINVAL, "treduce: NULL request");
    *out = NULL;
    if (!c || !op)
        return trd_fail(TRD_EINVAL, "treduce: NULL %s", c ? "operator" : "communicator");
    trd_request *q = calloc(1, sizeof *q);
    int32_t p = trd_comm_size(c); /* the counts are copied: the caller may reuse them */
    if (q && parts && (q->parts = malloc((size_t)p * sizeof *parts)))
        memcpy(q->parts, parts, (size_t)p * sizeof *parts);
    if (!q || (parts && !q->parts)) {
        free(q);
        return trd_fail(TRD_ENOMEM, "treduce: out of memory for a request");
    }
    *q = (trd_request){.comm = c, .coll = coll, .sendbuf = sendbuf, .recvbuf = recvbuf,
                       .count = count, .parts = q->parts, .root = root, .op = op,
                       .has_opts = opts != NULL, .persistent = persistent};
    if (opts)
        q->opts = *opts;
    *out = q;
    return TRD_OK;
}

/* q queued at the tail (g->mu held), the progress thread made if the
 * wire allows one and there is none yet. */
static trd_status enqueue(struct trd_progress *g, trd_request *q)
{
    trd_status st = TRD_OK;
    if (!g->thread && q->comm->wire.async) {
        if (pthread_create(&g->tid, NULL, progress_main, g) != 0)
            st = trd_fail(TRD_ENOMEM, "treduce: cannot start the progress thread");
        g->thread = st == TRD_OK;
    }
    if (st != TRD_OK)
        return st;
    q->started = true;
    q->state = R_QUEUED;
    q->status = TRD_OK;
    clock_gettime(CLOCK_MONOTONIC, &q->due);
    q->due.tv_nsec += PICKUP_NS;
    if (q->due.tv_nsec >= 1000000000L) {
        q->due.tv_sec++;
        q->due.tv_nsec -= 1000000000L;
    }
    if (g->tail)
        g->tail->next = q;
    else
        g->head = q;
    g->tail = q;
    if (g->idle) /* else it wakes at its head's pick-up time, or runs a call */
        pthread_cond_signal(&g->work);
    return TRD_OK;
}

trd_status trd_start(trd_request *q)
{
    if (!q)
        return trd_fail(TRD_EINVAL, "trd_start: NULL request");
    struct trd_progress *g = progress_of(q->comm);
    if (!g)
        return trd_fail(TRD_ENOMEM, "treduce: out of memory for the progress queue");
    pthread_mutex_lock(&g->mu);
    trd_status st = TRD_OK;
    if (q->state == R_QUEUED || q->state == R_RUNNING)
        st = trd_fail(TRD_EINVAL, "trd_start: the request is active (wait for it first)");
    else if (q->state == R_DONE && !q->persistent)
        st = trd_fail(TRD_EINVAL, "trd_start: a nonblocking call's request runs once "
                      "(persistent ones, made by the *_init calls, run again)");
    if (st == TRD_OK)
        st = enqueue(g, q);
    pthread_mutex_unlock(&g->mu);
    return st;
}

trd_status trd_comm_post(trd_comm *c, trd_status (*step)(void *arg), void *arg)
{
    if (!c || !step)
        return trd_fail(TRD_EINVAL, "trd_comm_post: NULL %s", c ? "step" : "communicator");
    if (!c->wire.async)
        return trd_fail(TRD_EUNSUPPORTED, "trd_comm_post: the %s wire allows no progress "
                        "thread here (MPI: below MPI_THREAD_MULTIPLE)", c->wire.name);
    struct trd_progress *g = progress_of(c);
    trd_request *q = g ? calloc(1, sizeof *q) : NULL;
    if (!q)
        return trd_fail(TRD_ENOMEM, "treduce: out of memory for a posted step");
    *q = (trd_request){.comm = c, .step = step, .step_arg = arg, .detached = true};
    pthread_mutex_lock(&g->mu);
    trd_status st = enqueue(g, q);
    pthread_mutex_unlock(&g->mu);
    if (st != TRD_OK)
        free(q);
    return st;
}

/* The status of a done request, its message this thread's again. */
static trd_status outcome(const trd_request *q)
{
    return q->status == TRD_OK ? TRD_OK : trd_fail(q->status, "%s", q->msg);
}

trd_status trd_request_wait(trd_request *q)
{
    if (!q)
        return trd_fail(TRD_EINVAL, "trd_request_wait: NULL request");
    if (!q->started)
        return TRD_OK; /* never started: nothing to wait for (MPI: an inactive request) */
    struct trd_progress *g = q->comm->select->progress;
    pthread_mutex_lock(&g->mu);
    await(g, q);
    pthread_mutex_unlock(&g->mu);
    return outcome(q);
}

trd_status trd_request_test(trd_request *q, bool *done)
{
    if (!q || !done)
        return trd_fail(TRD_EINVAL, "trd_request_test: NULL %s", q ? "done" : "request");
    *done = !q->started;
    if (*done)
        return TRD_OK;
    struct trd_progress *g = q->comm->select->progress;
    pthread_mutex_lock(&g->mu);
    if (!g->thread) /* no progress thread: the queue moves on here only */
        await(g, q);
    *done = q->state == R_DONE;
    pthread_mutex_unlock(&g->mu);
    return *done ? outcome(q) : TRD_OK;
}

void trd_request_free(trd_request *q)
{
    if (!q)
        return;
    if (q->started) /* its call may still use its buffers: wait (a no-op once done) */
        trd_request_wait(q);
    free(q->parts);
    free(q);
}

/* ---- The calls that make requests ---- */

/* A request for these arguments, started (nonblocking) or not (persistent). */
static trd_status make(trd_comm *c, trd_collective coll, const void *sendbuf, void *recvbuf,
                       int64_t count, const int64_t *parts, int32_t root, const trd_op *op,
                       const trd_coll_opts *opts, bool start, trd_request **req)
{
    trd_status st = new_request(c, coll, sendbuf, recvbuf, count, parts, root, op, opts,
                                !start, req);
    if (st == TRD_OK && start && (st = trd_start(*req)) != TRD_OK) {
        trd_request_free(*req);
        *req = NULL;
    }
    return st;
}

#define COUNTED(name, coll, start)                                                       \
    trd_status name(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,     \
                    const trd_op *op, const trd_coll_opts *opts, trd_request **req)        \
    {                                                                                      \
        return make(comm, coll, sendbuf, recvbuf, count, NULL, 0, op, opts, start, req);   \
    }
COUNTED(trd_iallreduce, TRD_COLL_ALLREDUCE, true)
COUNTED(trd_allreduce_init, TRD_COLL_ALLREDUCE, false)
COUNTED(trd_iscan, TRD_COLL_SCAN, true)
COUNTED(trd_scan_init, TRD_COLL_SCAN, false)
COUNTED(trd_iexscan, TRD_COLL_EXSCAN, true)
COUNTED(trd_exscan_init, TRD_COLL_EXSCAN, false)
COUNTED(trd_ireduce_scatter_block, TRD_COLL_REDUCE_SCATTER, true)
COUNTED(trd_reduce_scatter_block_init, TRD_COLL_REDUCE_SCATTER, false)
#undef COUNTED

trd_status trd_ireduce(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                       const trd_op *op, int32_t root, const trd_coll_opts *opts,
                       trd_request **req)
{
    return make(comm, TRD_COLL_REDUCE, sendbuf, recvbuf, count, NULL, root, op, opts, true,
                req);
}

trd_status trd_reduce_init(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                           const trd_op *op, int32_t root, const trd_coll_opts *opts,
                           trd_request **req)
{
    return make(comm, TRD_COLL_REDUCE, sendbuf, recvbuf, count, NULL, root, op, opts, false,
                req);
}

trd_status trd_ireduce_scatter(trd_comm *comm, const void *sendbuf, void *recvbuf,
                               const int64_t *recvcounts, const trd_op *op,
                               const trd_coll_opts *opts, trd_request **req)
{
    if (!recvcounts)
        return trd_fail(TRD_EINVAL, "trd_ireduce_scatter: NULL recvcounts");
    return make(comm, TRD_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, 0, op, opts,
                true, req);
}

trd_status trd_reduce_scatter_init(trd_comm *comm, const void *sendbuf, void *recvbuf,
                                   const int64_t *recvcounts, const trd_op *op,
                                   const trd_coll_opts *opts, trd_request **req)
{
    if (!recvcounts)
        return trd_fail(TRD_EINVAL, "trd_reduce_scatter_init: NULL recvcounts");
    return make(comm, TRD_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, 0, op, opts,
                false, req);
}

/* call.c: one reduction, from its arguments to its result: the collectives
 * (MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter,
 * MPI_Scan, MPI_Exscan) and the local MPI_Reduce_local, along one path.
 *
 * classify() decides, without communicating, whether treduce runs the call
 * or MPI does, from the arguments MPI requires to be the same on every
 * rank; prepare() then sets treduce up on the communicator and chooses
 * the algorithm (both collective, both decided the same on every rank).
 * Until then nothing has moved, and a call the layer does not run goes to
 * PMPI_* with the caller's own arguments, so MPI sees it exactly as it
 * would without the layer, erroneous calls included (its error handler,
 * its error class).  After that, a failure of treduce cannot be handed to
 * MPI (data may have moved): the communicator's error handler gets
 * MPI_ERR_OTHER, with a message on stderr, and the communicator's later
 * calls go to MPI.
 *
 * What each rank reads and gets (shape(), MPI-3.1 Sec. 5.9 - 5.11): the
 * input is count elements - a reduce-scatter's is its parts back to back,
 * recvcount elements each or recvcounts[r] for part r - and the result as
 * many, or the rank's part, in recvbuf: at the root of a reduce, on ranks
 * > 0 of an exscan (rank 0's recvbuf is not significant and is never
 * written), on every rank of the others.  MPI_IN_PLACE as sendbuf, at the
 * root of a reduce and on any rank of the others: the input is in recvbuf
 * (a reduce-scatter's result then lands at its start).
 *
 * The data: where the datatype's elements lie back to back (dense),
 * treduce works in the caller's buffers (MPI_IN_PLACE is TRD_IN_PLACE;
 * recvbuf is never touched where the result does not land).  Otherwise
 * the input is copied into scratch of the datatype's layout (types.c),
 * reduced in place there, and copied back into recvbuf where the result
 * lands: only the type map's bytes of the caller's buffers are touched.
 *
 * A nonblocking call (nonblocking.c) takes the same path in two halves:
 * tml_job_begin decides on the caller's thread, as classify() does, and
 * keeps the arguments; tml_job_run prepares and executes on the
 * communicator's progress thread.  A blocking call first waits for the
 * started ones (trd_comm_drain), since prepare() communicates on
 * treduce's communicator too.
 *
 * MPI_Reduce_local follows the same rules of data without a communicator,
 * and is run by trd_op_apply (the layer's kernel or its user function
 * wrapper): inoutbuf = inbuf (+) inoutbuf, staged through scratch of its
 * own where the layout is not dense. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"

/* A staged call's scratch may exceed twice its data by this much. */
#define STAGED_SLACK ((size_t)16 << 20)

typedef struct plan {
    tml_comm *c;          /* NULL: MPI_Reduce_local */
    tml_run run;          /* run.n: the input's elements */
    int64_t out_n;        /* the elements of this rank's result */
    const int64_t *parts; /* MPI_Reduce_scatter: recvcounts, as treduce takes them */
    bool gets_result;     /* this rank ends with a result in recvbuf */
    bool place_ok;        /* sendbuf may be MPI_IN_PLACE on this rank */
    bool in_place;        /* the input is in recvbuf */
    bool staged;          /* through scratch, in the datatype's own layout */
    size_t bytes;         /* run.n * run.elem */
} plan;

/* This thread's last (datatype, operator) pair of predefined handles,
 * read once. */
typedef struct described {
    bool valid;
    MPI_Datatype dt;
    MPI_Op op;
    tml_dtype t;
    tml_op o;
} described;
static _Thread_local described last;

static int pass(const tml_args *a)
{
    switch (a->fn) {
    case TML_F_REDUCE:
        return PMPI_Reduce(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->root, a->comm);
    case TML_F_REDUCE_SCATTER_BLOCK:
        return PMPI_Reduce_scatter_block(a->sendbuf, a->recvbuf, a->count, a->dt, a->op,
                                         a->comm);
    case TML_F_REDUCE_SCATTER:
        return PMPI_Reduce_scatter(a->sendbuf, a->recvbuf, a->recvcounts, a->dt, a->op,
                                   a->comm);
    case TML_F_SCAN:
        return PMPI_Scan(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->comm);
    case TML_F_EXSCAN:
        return PMPI_Exscan(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->comm);
    case TML_F_REDUCE_LOCAL:
        return PMPI_Reduce_local(a->sendbuf, a->recvbuf, a->count, a->dt, a->op);
    default:
        return PMPI_Allreduce(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->comm);
    }
}

/* MPI_Reduce_scatter's parts: recvcounts, the same on every rank (MPI
 * requires it), so the decisions may read them all. */
static tml_reason parts_of(const tml_args *a, plan *p)
{
    if (!a->recvcounts)
        return TML_INVALID;
    int64_t *n = tml_scratch_get(&p->c->parts, (size_t)p->c->size * sizeof *n);
    if (!n)
        return TML_SETUP; /* out of memory: the layer cannot run it */
    p->run.n = 0;
    for (int r = 0; r < p->c->size; r++) {
        if (a->recvcounts[r] < 0)
            return TML_INVALID;
        p->run.n += n[r] = a->recvcounts[r];
    }
    p->out_n = n[p->c->rank];
    p->parts = n;
    return TML_OK;
}

/* What this rank of a collective reads and gets, by function. */
static tml_reason shape(const tml_args *a, plan *p)
{
    int me = p->c->rank;
    p->run.n = p->out_n = a->count;
    p->gets_result = p->place_ok = true;
    switch (tml_fn_base(a->fn)) {
    case TML_F_REDUCE:
        if (a->root < 0 || a->root >= p->c->size)
            return TML_INVALID;
        p->run.root = a->root;
        p->gets_result = p->place_ok = me == a->root;
        return TML_OK;
    case TML_F_EXSCAN:
        p->gets_result = me > 0;
        return TML_OK;
    case TML_F_REDUCE_SCATTER_BLOCK:
        p->run.n = (int64_t)a->count * p->c->size;
        return TML_OK;
    case TML_F_REDUCE_SCATTER:
        return parts_of(a, p);
    default:
        return TML_OK;
    }
}

/* MPI_IN_PLACE: as sendbuf where MPI allows it; as recvbuf wherever
 * recvbuf is significant it makes the call erroneous. */
static tml_reason check_in_place(const tml_args *a, plan *p)
{
    p->in_place = a->sendbuf == MPI_IN_PLACE;
    if (p->in_place && !p->place_ok)
        return TML_INVALID;
    if (a->recvbuf == MPI_IN_PLACE && (p->gets_result || p->in_place))
        return TML_INVALID;
    return TML_OK;
}

/* Predefined operators work only on predefined datatypes (MPI-3.1 Sec.
 * 5.9.1): on a derived one the call is erroneous, and MPI decides. */
static tml_reason map_predefined(const tml_op *o, const tml_dtype *t, plan *p)
{
    if (!t->named)
        return TML_DERIVED;
    if (!t->leaf || !tml_op_allows(o->kind, t->leaf->group))
        return TML_TYPE;
    p->run.op = tml_kernel(o->kind, t->leaf->type);
    p->run.elem = tml_type_size(t->leaf->type);
    p->run.exact = tml_kernel_exact(o->kind, t->leaf->type);
    return p->run.op ? TML_OK : TML_SETUP; /* out of memory: the layer cannot run it */
}

/* A user function sees the caller's datatype: its elements must lie in
 * [k * extent, (k + 1) * extent) for treduce to cut the buffer there. */
static tml_reason map_user(const tml_args *a, const tml_op *o, const tml_dtype *t, plan *p)
{
    int commute = 0;
    if (t->extent <= 0 || t->true_lb < 0 || t->true_lb + t->true_extent > t->extent)
        return TML_DERIVED;
    if (PMPI_Op_commutative(a->op, &commute) != MPI_SUCCESS)
        return TML_OP;
    /* An allreduce keeps rank order even for a commutative function: then
     * both ranks of a pair compute the same bits (treduce.h, recursive
     * doubling), whatever the function does with its operands' order.
     * The other results are each computed once, on one rank - a reduce's
     * at the root, part r of a reduce-scatter along one path of combines
     * to rank r, rank r's prefix of a scan for rank r alone - so no two
     * ranks must agree on bits, and a commutative function may run the
     * commutative algorithms (reduce-scatter-ring and -halving), as MPI
     * allows. */
    p->run.op = tml_user_op(o->fn, commute && p->run.coll != TRD_COLL_ALLREDUCE,
                            (size_t)t->extent);
    p->run.user = true;
    p->run.elem = (size_t)t->extent;
    return p->run.op ? TML_OK : TML_SETUP;
}

/* Bytes [lo, hi) that count (> 0) elements of t at buf may touch. */
static void span(const void *buf, int64_t count, const tml_dtype *t, intptr_t *lo,
                 intptr_t *hi)
{
    *lo = (intptr_t)buf + t->true_lb;
    *hi = *lo + (intptr_t)(count - 1) * t->extent + t->true_extent;
}

/* Buffers MPI would refuse or that overlap: the call is erroneous. */
static tml_reason check_buffers(const tml_args *a, const tml_dtype *t, const plan *p)
{
    if (p->bytes == 0)
        return TML_OK;
    const void *input = p->in_place ? a->recvbuf : a->sendbuf;
    bool receives = p->gets_result && p->out_n > 0;
    bool absolute = !t->dense; /* a derived datatype may address from MPI_BOTTOM */
    if (!absolute && (!input || (receives && !a->recvbuf)))
        return TML_INVALID;
    if (receives && !p->in_place) {
        intptr_t slo, shi, rlo, rhi;
        span(a->sendbuf, p->run.n, t, &slo, &shi);
        span(a->recvbuf, p->out_n, t, &rlo, &rhi);
        if (slo < rhi && rlo < shi)
            return TML_INVALID;
    }
    return TML_OK;
}

/* The datatype and operator of a call (the last predefined pair kept). */
static tml_reason describe(const tml_args *a, tml_dtype *t, tml_op *o)
{
    if (last.valid && last.dt == a->dt && last.op == a->op) {
        *t = last.t;
        *o = last.o;
        return TML_OK;
    }
    if (!tml_op_find(a->op, o))
        return TML_OP;
    tml_reason why = tml_dtype_of(a->dt, t);
    if (why == TML_OK && t->named && o->kind != TML_USER)
        last = (described){true, a->dt, a->op, *t, *o};
    return why;
}

/* A communicator without a state: one the layer did not see made. */
static tml_reason stateless(MPI_Comm comm)
{
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return TML_INVALID; /* not a communicator: MPI says so */
    return inter ? TML_INTERCOMM : TML_UNSEEN;
}

/* The rules of the data, the same for every function once its shape is
 * known: MPI_IN_PLACE, the operator on the datatype, the layout, the
 * buffers. */
static tml_reason classify_data(const tml_args *a, plan *p)
{
    tml_dtype t;
    tml_op o;
    tml_reason why = check_in_place(a, p);
    if (why == TML_OK)
        why = describe(a, &t, &o);
    if (why == TML_OK)
        why = o.kind == TML_USER ? map_user(a, &o, &t, p) : map_predefined(&o, &t, p);
    if (why != TML_OK)
        return why;
    p->staged = !t.dense;
    p->bytes = p->run.n > 0 && t.size > 0 ? (size_t)p->run.n * p->run.elem : 0;
    /* MPI_Pack takes an int count; a sparse layout: scratch far larger than the data */
    if (p->staged && (p->run.n > INT_MAX ||
                      p->bytes > 2 * (size_t)p->run.n * (size_t)t.size + STAGED_SLACK))
        return TML_DERIVED;
    return check_buffers(a, &t, p);
}

static tml_reason classify(const tml_args *a, plan *p)
{
    p->run.coll = tml_fn_coll(a->fn);
    if (a->comm == MPI_COMM_NULL || a->count < 0 || a->dt == MPI_DATATYPE_NULL ||
        a->op == MPI_OP_NULL)
        return TML_INVALID;
    if (!(p->c = tml_comm_of(a->comm)))
        return stateless(a->comm);
    tml_reason why = shape(a, p);
    return why == TML_OK ? classify_data(a, p) : why;
}

/* The call's options (collective where it measures: choose.c). */
static tml_reason prepare(plan *p, const tml_choice **choice, trd_status *err)
{
    *err = TRD_OK;
    if (p->bytes == 0 || p->c->size == 1)
        return TML_OK; /* nothing to communicate */
    if (p->c->setup_failed)
        return TML_SETUP;
    if (p->c->failed)
        return TML_FAILED;
    return tml_choose(p->c, &p->run, choice, err);
}

static const char *staging_failed(int rc)
{
    return rc == MPI_ERR_NO_MEM ? "out of memory for the staged buffer"
                                : "MPI_Pack / MPI_Unpack of the staged buffer failed";
}

/* One rank: the result is the input (an exscan's rank 0 gets none). */
static int copy_local(const tml_args *a, const plan *p)
{
    if (p->in_place || !p->gets_result)
        return MPI_SUCCESS;
    if (!p->staged) {
        memcpy(a->recvbuf, a->sendbuf, (size_t)p->out_n * p->run.elem);
        return MPI_SUCCESS;
    }
    return tml_copy(a->sendbuf, a->recvbuf, (int)p->out_n, a->dt, &p->c->packed);
}

/* count elements of dt at src copied into scratch s in dt's own layout,
 * bytes long, at *w (its gaps zeroed: never sent undefined). */
static int stage(const void *src, int64_t count, MPI_Datatype dt, size_t bytes,
                 tml_scratch *s, tml_scratch *packed, void **w)
{
    if (!(*w = tml_scratch_get(s, bytes)))
        return MPI_ERR_NO_MEM;
    memset(*w, 0, bytes);
    return tml_copy(src, *w, (int)count, dt, packed);
}

/* treduce's collective of the call, on in and out as treduce takes them. */
static trd_status run_treduce(const tml_args *a, const plan *p, const void *in, void *out,
                              const trd_coll_opts *o)
{
    trd_comm *tc = p->c->tc;
    const trd_op *op = p->run.op;
    switch (tml_fn_base(a->fn)) {
    case TML_F_REDUCE:
        return trd_reduce(tc, in, out, p->run.n, op, p->run.root, o);
    case TML_F_REDUCE_SCATTER_BLOCK:
        return trd_reduce_scatter_block(tc, in, out, a->count, op, o);
    case TML_F_REDUCE_SCATTER:
        return trd_reduce_scatter(tc, in, out, p->parts, op, o);
    case TML_F_SCAN:
        return trd_scan(tc, in, out, p->run.n, op, o);
    case TML_F_EXSCAN:
        return trd_exscan(tc, in, out, p->run.n, op, o);
    default:
        return trd_allreduce(tc, in, out, p->run.n, op, o);
    }
}

/* The call, run by treduce: MPI_SUCCESS, or an error with *msg set. */
static int execute(const tml_args *a, const plan *p, const trd_coll_opts *o, const char **msg)
{
    const void *in = p->in_place ? TRD_IN_PLACE : a->sendbuf;
    void *out = p->gets_result || p->in_place ? a->recvbuf : NULL, *w = NULL;
    int rc = MPI_SUCCESS;
    if (p->staged) {
        rc = stage(p->in_place ? a->recvbuf : a->sendbuf, p->run.n, a->dt, p->bytes,
                   &p->c->staged, &p->c->packed, &w);
        in = p->place_ok ? TRD_IN_PLACE : w; /* the scratch is this rank's recvbuf */
        out = p->place_ok ? w : NULL;
    }
    if (rc != MPI_SUCCESS) {
        *msg = staging_failed(rc);
        return rc;
    }
    tml_user_datatype(a->dt); /* what a user function is given */
    if (run_treduce(a, p, in, out, o) != TRD_OK) {
        *msg = trd_errmsg();
        return MPI_ERR_OTHER;
    }
    if (p->staged && p->gets_result && p->out_n > 0)
        rc = tml_copy(w, a->recvbuf, (int)p->out_n, a->dt, &p->c->packed);
    *msg = staging_failed(rc);
    return rc;
}

/* A failure after data may have moved (MPI_Reduce_local: while writing
 * inoutbuf, raised on MPI_COMM_WORLD as MPI-3.1 Sec. 8.3 raises the
 * errors of calls without a communicator). */
static void tell_failure(const tml_args *a, const plan *p, const char *msg)
{
    if (p->c) {
        p->c->failed = true;
        fprintf(stderr, "treduce-mpi: rank %d: %s on a communicator of %d ranks failed in "
                "the layer: %s; the communicator's error handler gets the error, and its "
                "later calls go to MPI\n", p->c->rank, tml_fn_name(a->fn), p->c->size, msg);
    } else {
        fprintf(stderr, "treduce-mpi: rank %d: %s failed in the layer: %s; MPI_COMM_WORLD's "
                "error handler gets the error\n", tml_g.world_rank, tml_fn_name(a->fn), msg);
    }
}

static int fail(const tml_args *a, const plan *p, int rc, const char *msg)
{
    tell_failure(a, p, msg);
    PMPI_Comm_call_errhandler(p->c ? a->comm : MPI_COMM_WORLD, rc);
    return rc;
}

/* The layer is out, or this thread is inside it already (a user function
 * calling MPI): the call goes to MPI. */
static bool bypassed(const tml_args *a)
{
    if (tml_g.state == TML_ACTIVE && !tml_busy)
        return false;
    if (tml_g.state == TML_PASSING && !tml_busy)
        tml_stats_count(a->fn, tml_g.passing);
    return true;
}

/* The call counted, and told (TREDUCE_MPI_VERBOSE). */
static void report(const tml_args *a, const plan *p, tml_reason why, const tml_choice *choice,
                   const char *otherwise)
{
    tml_stats_count(a->fn, why);
    if (!tml_g.cfg.verbose)
        return;
    int64_t count = a->fn != TML_F_REDUCE_SCATTER ? a->count : p->parts ? p->run.n : -1;
    tml_verbose(a, count, p->c ? p->c->rank : -1, why, choice, otherwise);
}

int tml_collective(const tml_args *a)
{
    if (bypassed(a))
        return pass(a);
    plan p = {0};
    const tml_choice *choice = NULL;
    trd_status err = TRD_OK;
    const char *msg = NULL;
    tml_busy = true; /* a user function's MPI calls: to MPI */
    tml_reason why = classify(a, &p);
    if (why == TML_OK && p.c->tc)
        trd_comm_drain(p.c->tc); /* its started calls first: MPI orders them by start */
    if (why == TML_OK)
        why = prepare(&p, &choice, &err);
    int rc = MPI_SUCCESS;
    if (why == TML_OK && err != TRD_OK) { /* measuring the model failed */
        rc = MPI_ERR_OTHER;
        msg = trd_errmsg();
    } else if (why == TML_OK && p.bytes > 0 && p.c->size == 1) {
        rc = copy_local(a, &p);
        msg = staging_failed(rc);
    } else if (why == TML_OK && p.bytes > 0) {
        rc = execute(a, &p, &choice->opts, &msg);
        if (rc == MPI_SUCCESS)
            tml_known_learn(p.c);
    }
    tml_busy = false;
    report(a, &p, why, choice, p.bytes == 0 ? "nothing to reduce" : "one rank");
    if (why != TML_OK)
        return pass(a);
    return rc == MPI_SUCCESS ? rc : fail(a, &p, rc, msg);
}

/* ---- Nonblocking calls (nonblocking.c): decided here, run later ---- */

struct tml_job {
    tml_args a;
    plan p;
    int64_t *parts; /* MPI_Ireduce_scatter's counts: the job's own copy */
};

tml_reason tml_job_begin(const tml_args *a, tml_job **job, int *rc)
{
    *job = NULL;
    *rc = MPI_SUCCESS;
    if (bypassed(a))
        return TML_OFF;
    plan p = {0};
    tml_busy = true;
    tml_reason why = tml_g.progress ? classify(a, &p) : TML_THREADS;
    /* MPI lets the program free the datatype before the call completes:
     * only a dense layout, which the run no longer asks MPI about, is kept */
    if (why == TML_OK && p.staged)
        why = TML_DERIVED;
    if (why == TML_OK && p.bytes > 0 && p.c->size > 1 && (p.c->setup_failed || p.c->failed))
        why = p.c->setup_failed ? TML_SETUP : TML_FAILED; /* as prepare() decides */
    bool moves = why == TML_OK && p.bytes > 0 && p.c->size > 1;
    if (why == TML_OK && p.bytes > 0 && !moves)
        *rc = copy_local(a, &p);
    if (moves && !(*job = calloc(1, sizeof **job)))
        why = TML_SETUP; /* out of memory: MPI runs it */
    if (*job && p.parts && !((*job)->parts = malloc((size_t)p.c->size * sizeof *p.parts))) {
        free(*job);
        *job = NULL;
        why = TML_SETUP;
    }
    tml_busy = false;
    if (!*job) {
        report(a, &p, why, NULL, p.bytes == 0 ? "nothing to reduce" : "one rank");
        return why;
    }
    if (p.parts)
        p.parts = memcpy((*job)->parts, p.parts, (size_t)p.c->size * sizeof *p.parts);
    (*job)->a = *a;
    (*job)->a.recvcounts = NULL; /* the program's array: read into parts */
    (*job)->p = p;
    return TML_OK;
}

int tml_job_run(tml_job *job)
{
    const tml_args *a = &job->a;
    plan *p = &job->p;
    const tml_choice *choice = NULL;
    trd_status err = TRD_OK;
    const char *msg = NULL;
    int rc = MPI_ERR_OTHER;
    tml_busy = true;
    tml_reason why = prepare(p, &choice, &err);
    if (why == TML_OK && err != TRD_OK)
        msg = trd_errmsg();
    else if (why == TML_FAILED) /* treduce's messages on it may be astray: not again */
        msg = "an earlier call on the communicator failed in the layer";
    else /* TML_ALGO: the call is the program's, made already: the default runs it */
        rc = execute(a, p, why == TML_OK ? &choice->opts : NULL, &msg);
    if (rc == MPI_SUCCESS)
        tml_known_learn(p->c);
    tml_busy = false;
    report(a, p, why == TML_FAILED ? why : TML_OK, why == TML_OK ? choice : NULL,
           "the collective's default: TREDUCE_MPI_ALGO cannot run it");
    if (rc != MPI_SUCCESS)
        tell_failure(a, p, msg);
    return rc;
}

trd_comm *tml_job_comm(const tml_job *job) { return job->p.c->tc; }

void tml_job_free(tml_job *job)
{
    if (job)
        free(job->parts);
    free(job);
}

/* MPI_Reduce_local run: TML_OK with *rc the result of writing inoutbuf,
 * or TML_SETUP where staging failed before inoutbuf was written (MPI then
 * runs the call). */
static tml_reason apply_local(const tml_args *a, const plan *p, int *rc)
{
    tml_scratch s_in = {0}, s_io = {0}, packed = {0};
    const void *in = a->sendbuf;
    void *io = a->recvbuf, *w = NULL;
    tml_reason why = TML_OK;
    *rc = MPI_SUCCESS;
    if (p->staged) {
        int st = stage(a->sendbuf, p->run.n, a->dt, p->bytes, &s_in, &packed, &w);
        in = w;
        if (st == MPI_SUCCESS)
            st = stage(a->recvbuf, p->run.n, a->dt, p->bytes, &s_io, &packed, &io);
        why = st == MPI_SUCCESS ? TML_OK : TML_SETUP;
    }
    tml_user_datatype(a->dt);
    /* refused by its checks: nothing was written */
    if (why == TML_OK && trd_op_apply(p->run.op, in, io, p->run.n) != TRD_OK)
        why = TML_SETUP;
    if (why == TML_OK && p->staged)
        *rc = tml_copy(io, a->recvbuf, (int)p->run.n, a->dt, &packed);
    tml_scratch_free(&s_in);
    tml_scratch_free(&s_io);
    tml_scratch_free(&packed);
    return why;
}

int tml_reduce_local(const tml_args *a)
{
    if (bypassed(a))
        return pass(a);
    plan p = {.run = {.coll = tml_fn_coll(a->fn), .n = a->count}, .out_n = a->count,
              .gets_result = true};
    int rc = MPI_SUCCESS;
    tml_busy = true;
    tml_reason why = a->count < 0 || a->dt == MPI_DATATYPE_NULL || a->op == MPI_OP_NULL
                         ? TML_INVALID
                         : classify_data(a, &p);
    if (why == TML_OK && p.bytes > 0)
        why = apply_local(a, &p, &rc);
    tml_busy = false;
    report(a, &p, why, NULL, p.bytes == 0 ? "nothing to reduce" : "local");
    if (why != TML_OK)
        return pass(a);
    return rc == MPI_SUCCESS ? rc : fail(a, &p, rc, staging_failed(rc));
}

/* call.c: one MPI_Reduce or MPI_Allreduce, from its arguments to its
 * result.
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
 * The data: where the datatype's elements lie back to back (dense),
 * treduce works in the caller's buffers (MPI_IN_PLACE is TRD_IN_PLACE;
 * recvbuf is never touched where the result does not land).  Otherwise
 * the input is copied into scratch of the datatype's layout (types.c),
 * reduced in place there, and copied back into recvbuf where the result
 * lands: only the type map's bytes of the caller's buffers are touched. */
#include <stdio.h>
#include <string.h>

#include "layer.h"

/* A staged call's scratch may exceed twice its data by this much. */
#define STAGED_SLACK ((size_t)16 << 20)

typedef struct plan {
    tml_comm *c;
    tml_run run;
    bool gets_result; /* this rank ends with the result */
    bool in_place;    /* the input is in recvbuf */
    bool staged;      /* through scratch, in the datatype's own layout */
    size_t bytes;     /* run.n * run.elem */
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
    return a->allreduce
               ? PMPI_Allreduce(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->comm)
               : PMPI_Reduce(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->root, a->comm);
}

/* MPI_IN_PLACE: at the root of a reduce (sendbuf) or anywhere in an
 * allreduce (sendbuf); anywhere else it makes the call erroneous. */
static tml_reason check_in_place(const tml_args *a, plan *p)
{
    if (p->gets_result && a->recvbuf == MPI_IN_PLACE)
        return TML_INVALID;
    if (!p->gets_result && a->sendbuf == MPI_IN_PLACE)
        return TML_INVALID;
    p->in_place = a->sendbuf == MPI_IN_PLACE;
    return TML_OK;
}

/* Predefined operators work only on predefined datatypes (MPI-3.1 Sec.
 * 5.9.1): on a derived one the call is erroneous, and MPI decides. */
static tml_reason map_predefined(const tml_args *a, const tml_op *o, const tml_dtype *t,
                                 plan *p)
{
    if (!t->named)
        return TML_DERIVED;
    if (!t->leaf || !tml_op_allows(o->kind, t->leaf->group))
        return TML_TYPE;
    p->run.op = tml_kernel(o->kind, t->leaf->type);
    p->run.elem = tml_type_size(t->leaf->type);
    p->run.n = a->count;
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
    /* an allreduce keeps rank order even for a commutative function: then
     * both ranks of a pair compute the same bits (treduce.h, recursive
     * doubling), whatever the function does with its operands' order */
    p->run.op = tml_user_op(o->fn, commute && !a->allreduce, (size_t)t->extent);
    p->run.user = true;
    p->run.elem = (size_t)t->extent;
    p->run.n = a->count;
    return p->run.op ? TML_OK : TML_SETUP;
}

/* Bytes [lo, hi) that count elements of t at buf may touch. */
static void span(const void *buf, int count, const tml_dtype *t, intptr_t *lo, intptr_t *hi)
{
    *lo = (intptr_t)buf + t->true_lb;
    *hi = *lo + (intptr_t)(count - 1) * t->extent + t->true_extent;
}

/* Buffers MPI would refuse or that overlap: the call is erroneous. */
static tml_reason check_buffers(const tml_args *a, const tml_dtype *t, plan *p)
{
    if (p->bytes == 0)
        return TML_OK;
    const void *input = p->in_place ? a->recvbuf : a->sendbuf;
    bool absolute = !t->dense; /* a derived datatype may address from MPI_BOTTOM */
    if (!absolute && (!input || (p->gets_result && !a->recvbuf)))
        return TML_INVALID;
    if (p->gets_result && !p->in_place) {
        intptr_t slo, shi, rlo, rhi;
        span(a->sendbuf, a->count, t, &slo, &shi);
        span(a->recvbuf, a->count, t, &rlo, &rhi);
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

static tml_reason classify(const tml_args *a, plan *p)
{
    tml_dtype t;
    tml_op o;
    tml_reason why;
    if (a->comm == MPI_COMM_NULL || a->count < 0 || a->dt == MPI_DATATYPE_NULL ||
        a->op == MPI_OP_NULL)
        return TML_INVALID;
    if (!(p->c = tml_comm_of(a->comm)))
        return stateless(a->comm);
    if (!a->allreduce && (a->root < 0 || a->root >= p->c->size))
        return TML_INVALID;
    p->gets_result = a->allreduce || p->c->rank == a->root;
    if ((why = check_in_place(a, p)) != TML_OK || (why = describe(a, &t, &o)) != TML_OK)
        return why;
    why = o.kind == TML_USER ? map_user(a, &o, &t, p) : map_predefined(a, &o, &t, p);
    if (why != TML_OK)
        return why;
    p->run.allreduce = a->allreduce;
    p->run.root = a->allreduce ? 0 : a->root;
    p->staged = !t.dense;
    p->bytes = a->count > 0 && t.size > 0 ? (size_t)p->run.n * p->run.elem : 0;
    if (p->staged && p->bytes > 2 * (size_t)a->count * (size_t)t.size + STAGED_SLACK)
        return TML_DERIVED; /* a sparse layout: scratch far larger than the data */
    return check_buffers(a, &t, p);
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

/* One rank: the result is the input. */
static int copy_local(const tml_args *a, const plan *p)
{
    if (p->in_place)
        return MPI_SUCCESS;
    if (!p->staged) {
        memcpy(a->recvbuf, a->sendbuf, p->bytes);
        return MPI_SUCCESS;
    }
    return tml_copy(a->sendbuf, a->recvbuf, a->count, a->dt, &p->c->packed);
}

/* The call, run by treduce: MPI_SUCCESS, or an error with *msg set. */
static int execute(const tml_args *a, const plan *p, const trd_coll_opts *o, const char **msg)
{
    const void *in = p->in_place ? TRD_IN_PLACE : a->sendbuf;
    void *out = p->gets_result ? a->recvbuf : NULL, *w = NULL;
    int rc = MPI_SUCCESS;
    *msg = "out of memory for the staged buffer";
    if (p->staged) {
        if (!(w = tml_scratch_get(&p->c->staged, p->bytes)))
            return MPI_ERR_NO_MEM;
        *msg = "MPI_Pack / MPI_Unpack of the staged buffer failed";
        memset(w, 0, p->bytes); /* the gaps between elements: never sent undefined */
        rc = tml_copy(p->in_place ? a->recvbuf : a->sendbuf, w, a->count, a->dt,
                      &p->c->packed);
        in = p->gets_result ? TRD_IN_PLACE : w;
        out = p->gets_result ? w : NULL;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    tml_user_datatype(a->dt); /* what a user function is given */
    trd_status st = a->allreduce
                        ? trd_allreduce(p->c->tc, in, out, p->run.n, p->run.op, o)
                        : trd_reduce(p->c->tc, in, out, p->run.n, p->run.op, p->run.root, o);
    if (st != TRD_OK) {
        *msg = trd_errmsg();
        return MPI_ERR_OTHER;
    }
    if (p->staged && p->gets_result)
        rc = tml_copy(w, a->recvbuf, a->count, a->dt, &p->c->packed);
    return rc;
}

/* A failure after data may have moved. */
static int fail(const tml_args *a, const plan *p, int rc, const char *msg)
{
    p->c->failed = true;
    fprintf(stderr, "treduce-mpi: rank %d: %s on a communicator of %d ranks failed in the "
            "layer: %s; the communicator's error handler gets the error, and its later calls "
            "go to MPI\n", p->c->rank, a->allreduce ? "MPI_Allreduce" : "MPI_Reduce",
            p->c->size, msg);
    PMPI_Comm_call_errhandler(a->comm, rc);
    return rc;
}

int tml_collective(const tml_args *a)
{
    if (tml_g.state != TML_ACTIVE || tml_busy) {
        if (tml_g.state == TML_PASSING && !tml_busy)
            tml_stats_count(a->allreduce, tml_g.passing);
        return pass(a);
    }
    plan p = {0};
    const tml_choice *choice = NULL;
    trd_status err = TRD_OK;
    const char *msg = NULL;
    tml_busy = true; /* a user function's MPI calls: to MPI */
    tml_reason why = classify(a, &p);
    if (why == TML_OK)
        why = prepare(&p, &choice, &err);
    int rc = MPI_SUCCESS;
    if (why == TML_OK && err != TRD_OK) { /* measuring the model failed */
        rc = MPI_ERR_OTHER;
        msg = trd_errmsg();
    } else if (why == TML_OK && p.bytes > 0) {
        rc = p.c->size == 1 ? copy_local(a, &p) : execute(a, &p, &choice->opts, &msg);
        if (rc == MPI_SUCCESS && p.c->size > 1)
            tml_known_learn(p.c);
    }
    tml_busy = false;
    tml_stats_count(a->allreduce, why);
    if (tml_g.cfg.verbose)
        tml_verbose(a, p.c ? p.c->rank : -1, why, choice,
                    p.bytes == 0 ? "nothing to reduce" : "one rank");
    if (why != TML_OK)
        return pass(a);
    return rc == MPI_SUCCESS ? rc : fail(a, &p, rc, msg);
}

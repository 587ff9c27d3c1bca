/* ops.c: MPI operators as the layer knows them.
 *
 * The predefined operators are a table.  MPI has no call that gives the
 * function behind a user's MPI_Op, so the layer defines MPI_Op_create and
 * MPI_Op_free (entry.c) and keeps the functions of the operators made
 * through them; an operator made another way (Open MPI's Fortran
 * MPI_OP_CREATE calls PMPI_Op_create) is unknown, and its calls go to MPI.
 *
 * treduce's operator for a user function is one per (function,
 * commutativity, extent), not per MPI handle: a communicator measures the
 * cost of each treduce operator it meets once (collectively, choose.c), so
 * two ranks that reach the same function through different handles - made
 * twice, or freed and made again - must meet the same treduce operator, or
 * one would measure while the other does not. */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "layer.h"

/* The tables below are shared by the threads of the process. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const struct {
    MPI_Op handle;
    tml_op op;
} predefined[] = {
    {MPI_SUM, {TML_SUM, NULL, "MPI_SUM"}},          {MPI_MAX, {TML_MAX, NULL, "MPI_MAX"}},
    {MPI_MIN, {TML_MIN, NULL, "MPI_MIN"}},          {MPI_PROD, {TML_PROD, NULL, "MPI_PROD"}},
    {MPI_LAND, {TML_LAND, NULL, "MPI_LAND"}},       {MPI_BAND, {TML_BAND, NULL, "MPI_BAND"}},
    {MPI_LOR, {TML_LOR, NULL, "MPI_LOR"}},          {MPI_BOR, {TML_BOR, NULL, "MPI_BOR"}},
    {MPI_LXOR, {TML_LXOR, NULL, "MPI_LXOR"}},       {MPI_BXOR, {TML_BXOR, NULL, "MPI_BXOR"}},
    {MPI_MINLOC, {TML_MINLOC, NULL, "MPI_MINLOC"}}, {MPI_MAXLOC, {TML_MAXLOC, NULL, "MPI_MAXLOC"}},
};
#define NPREDEFINED (sizeof predefined / sizeof predefined[0])

#define G(g) (1u << (g))
static const unsigned allowed[TML_NOPS] = {
    [TML_MAX] = G(TML_G_INT) | G(TML_G_MULTI) | G(TML_G_FLOAT),
    [TML_MIN] = G(TML_G_INT) | G(TML_G_MULTI) | G(TML_G_FLOAT),
    [TML_SUM] = G(TML_G_INT) | G(TML_G_MULTI) | G(TML_G_FLOAT) | G(TML_G_COMPLEX),
    [TML_PROD] = G(TML_G_INT) | G(TML_G_MULTI) | G(TML_G_FLOAT) | G(TML_G_COMPLEX),
    [TML_LAND] = G(TML_G_INT) | G(TML_G_LOGICAL),
    [TML_LOR] = G(TML_G_INT) | G(TML_G_LOGICAL),
    [TML_LXOR] = G(TML_G_INT) | G(TML_G_LOGICAL),
    [TML_BAND] = G(TML_G_INT) | G(TML_G_MULTI) | G(TML_G_BYTE),
    [TML_BOR] = G(TML_G_INT) | G(TML_G_MULTI) | G(TML_G_BYTE),
    [TML_BXOR] = G(TML_G_INT) | G(TML_G_MULTI) | G(TML_G_BYTE),
    [TML_MINLOC] = G(TML_G_PAIR),
    [TML_MAXLOC] = G(TML_G_PAIR),
};

bool tml_op_allows(tml_opkind k, tml_group g) { return k < TML_NOPS && (allowed[k] & G(g)); }

/* The user operators made through the layer. */
typedef struct recorded {
    MPI_Op op;
    MPI_User_function *fn;
} recorded;
static recorded *table;
static size_t nrecorded, cap;

void tml_ops_record(MPI_Op op, MPI_User_function *fn)
{
    pthread_mutex_lock(&lock);
    if (nrecorded == cap) {
        size_t grown = cap ? 2 * cap : 16;
        recorded *t = realloc(table, grown * sizeof *t);
        if (t) {
            table = t;
            cap = grown;
        }
    }
    if (nrecorded < cap) /* else unknown: its calls go to MPI */
        table[nrecorded++] = (recorded){op, fn};
    pthread_mutex_unlock(&lock);
}

void tml_ops_forget(MPI_Op op)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nrecorded; i++)
        if (table[i].op == op) {
            table[i] = table[--nrecorded];
            break;
        }
    pthread_mutex_unlock(&lock);
}

bool tml_op_find(MPI_Op op, tml_op *out)
{
    for (size_t i = 0; i < NPREDEFINED; i++)
        if (predefined[i].handle == op) {
            *out = predefined[i].op;
            return true;
        }
    bool found = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nrecorded && !found; i++)
        if (table[i].op == op) {
            *out = (tml_op){TML_USER, table[i].fn, "a user operator"};
            found = true;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

/* treduce's operators over user functions.  Each call of the function
 * is timed (two clock reads: tens of nanoseconds beside a function worth
 * measuring) and summed for a least-squares line t = fixed + n * per
 * element: the operator's cost as the program's own reductions show it
 * (choose.c), never from calls MPI would not make. */
typedef struct user_op {
    MPI_User_function *fn;
    bool commutative;
    size_t extent;
    trd_op *op;
    double calls, sum_n, sum_t, sum_nn, sum_nt; /* the timed calls (under lock) */
    struct user_op *next;
} user_op;
static user_op *user_ops;
/* The datatype of the call this thread runs (tml_user_datatype). */
static _Thread_local MPI_Datatype call_dt = MPI_DATATYPE_NULL;

void tml_user_datatype(MPI_Datatype dt) { call_dt = dt; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* MPI's call of a user function: (invec, inoutvec, len, datatype), with
 * inoutvec = invec (+) inoutvec, as treduce's.  A reduce-scatter's input
 * (p parts of an int count each) may hold more than an int's elements:
 * the function is then called on pieces, as an elementwise operator
 * allows. */
static void call_user(const void *in, void *inout, int64_t n, void *ctx)
{
    user_op *u = ctx;
    MPI_Datatype dt = call_dt;
    double t0 = now();
    for (int64_t done = 0; done < n;) {
        int piece = n - done < INT_MAX ? (int)(n - done) : INT_MAX, len = piece;
        size_t at = (size_t)done * u->extent;
        u->fn((char *)in + at, (char *)inout + at, &len, &dt);
        done += piece;
    }
    double t = now() - t0, x = (double)n;
    pthread_mutex_lock(&lock);
    u->calls += 1;
    u->sum_n += x;
    u->sum_t += t;
    u->sum_nn += x * x;
    u->sum_nt += x * t;
    pthread_mutex_unlock(&lock);
}

bool tml_user_cost(const trd_op *op, double *fixed, double *per_element)
{
    pthread_mutex_lock(&lock);
    const user_op *u = user_ops;
    while (u && u->op != op)
        u = u->next;
    user_op seen = u ? *u : (user_op){0};
    pthread_mutex_unlock(&lock);
    if (seen.calls < 1)
        return false;
    double mean_n = seen.sum_n / seen.calls, mean_t = seen.sum_t / seen.calls;
    double var_n = seen.sum_nn / seen.calls - mean_n * mean_n;
    double cov = seen.sum_nt / seen.calls - mean_n * mean_t;
    *per_element = var_n > 0 && cov > 0 ? cov / var_n : 0.0; /* one size: all per call */
    *fixed = mean_t - *per_element * mean_n;
    if (*fixed < 0) { /* the line through the origin instead */
        *fixed = 0;
        *per_element = mean_n > 0 ? mean_t / mean_n : 0.0;
    }
    return true;
}

const trd_op *tml_user_op(MPI_User_function *fn, bool commutative, size_t extent)
{
    pthread_mutex_lock(&lock);
    user_op *u = user_ops;
    while (u && !(u->fn == fn && u->commutative == commutative && u->extent == extent))
        u = u->next;
    if (!u && (u = calloc(1, sizeof *u))) {
        if (trd_op_user(&u->op, call_user, extent, commutative, u) == TRD_OK) {
            *u = (user_op){.fn = fn, .commutative = commutative, .extent = extent, .op = u->op,
                           .next = user_ops};
            user_ops = u;
        } else {
            free(u);
            u = NULL;
        }
    }
    const trd_op *op = u ? u->op : NULL;
    pthread_mutex_unlock(&lock);
    return op;
}

void tml_ops_finish(void)
{
    while (user_ops) {
        user_op *next = user_ops->next;
        trd_op_free(user_ops->op);
        free(user_ops);
        user_ops = next;
    }
    free(table);
    table = NULL;
    nrecorded = cap = 0;
}

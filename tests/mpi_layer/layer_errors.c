/* layer_errors.c: erroneous calls and error handlers.
 *
 * Every rank makes the same erroneous MPI_Allreduce / MPI_Reduce calls -
 * count -1, a root out of range, null datatype, operator and communicator,
 * an operator MPI does not define on the type, a predefined operator on a
 * derived datatype, sendbuf == recvbuf, recvbuf MPI_IN_PLACE, an
 * uncommitted datatype, MPI_REPLACE - and the like of the other functions
 * the layer runs (MPI_Reduce_scatter_block, MPI_Reduce_scatter with a
 * negative count, MPI_Scan, MPI_Exscan, MPI_Reduce_local) - on a
 * communicator whose handler is
 * MPI_ERRORS_RETURN and on one with a handler of our own, and rank 0
 * prints, per call, the error class returned and the classes the handler
 * saw.  run_layer.sh runs it with and without the layer: the two outputs
 * must be the same, line for line (the layer hands every erroneous call to
 * MPI untouched).
 *
 * With --deadline (layer only, TREDUCE_MPI_TIMEOUT=1): rank 1 enters an
 * allreduce 3 s after the others, so treduce's deadline passes on every
 * rank; each must see MPI_ERR_OTHER through the communicator's handler,
 * never a result, and the next allreduce on that communicator (passed to
 * MPI from then on) must be right. */
#include <string.h>
#include <unistd.h>

#include "layer_test.h"

static int handler_calls, handler_class = -1;

static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

static void report(const char *what, int rc)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (t_rank == 0)
        printf("%-34s returned class %2d; handler calls %d, last class %d\n", what,
               rc == MPI_SUCCESS ? 0 : cls, handler_calls, handler_class);
    handler_calls = 0;
    handler_class = -1;
}

static void user_sum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        ((int *)io)[k] += ((int *)in)[k];
}

/* The same for the other functions the layer runs (pair: MPI_INT x 2,
 * loose: never committed). */
static void other_calls(MPI_Comm comm, MPI_Datatype pair, MPI_Datatype loose)
{
    size_t n = 4 * (size_t)t_size;
    int *in = calloc(n, sizeof *in), *out = calloc(n, sizeof *out);
    int *counts = malloc((size_t)t_size * sizeof *counts), *ones = malloc(n * sizeof *ones);
    for (int r = 0; r < t_size; r++) {
        counts[r] = r == t_size - 1 ? -1 : 1;
        ones[r] = 1;
    }
#ifndef MPICH /* as count -1 above */
    report("reduce-scatter-block count -1",
           MPI_Reduce_scatter_block(in, out, -1, MPI_INT, MPI_SUM, comm));
    report("reduce-scatter recvcounts -1",
           MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm));
    report("reduce-local count -1", MPI_Reduce_local(in, out, -1, MPI_INT, MPI_SUM));
#endif
    report("reduce-scatter-block send == recv",
           MPI_Reduce_scatter_block(in, in, 1, MPI_INT, MPI_SUM, comm));
    report("reduce-scatter MPI_OP_NULL",
           MPI_Reduce_scatter(in, out, ones, MPI_INT, MPI_OP_NULL, comm));
    report("scan recvbuf MPI_IN_PLACE", MPI_Scan(in, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, comm));
    report("scan MPI_SUM on a derived datatype", MPI_Scan(in, out, 2, pair, MPI_SUM, comm));
    report("exscan MPI_DATATYPE_NULL",
           MPI_Exscan(in, out, 1, MPI_DATATYPE_NULL, MPI_SUM, comm));
    report("exscan uncommitted datatype", MPI_Exscan(in, out, 2, loose, MPI_SUM, comm));
    report("reduce-local MPI_OP_NULL", MPI_Reduce_local(in, out, 4, MPI_INT, MPI_OP_NULL));
    report("reduce-local MPI_SUM on a derived",
           MPI_Reduce_local(in, out, 2, pair, MPI_SUM));
    free(in);
    free(out);
    free(counts);
    free(ones);
}

static void erroneous_calls(MPI_Comm comm, const char *name)
{
    int in[4] = {1, 2, 3, 4}, out[4], buf[4] = {1, 2, 3, 4};
#ifndef MPICH
    double din[4] = {1, 2, 3, 4}, dout[4];
#endif
    MPI_Datatype pair, loose;
    MPI_Op usum;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */
    MPI_Op_create(user_sum, 1, &usum);
    if (t_rank == 0)
        printf("-- %s\n", name);
#ifndef MPICH /* MPICH 4.0.2 crashes on these two, with or without the layer */
    report("count -1", MPI_Allreduce(in, out, -1, MPI_INT, MPI_SUM, comm));
    report("MPI_LAND on MPI_DOUBLE", MPI_Allreduce(din, dout, 4, MPI_DOUBLE, MPI_LAND, comm));
#endif
    report("reduce root = size", MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, t_size, comm));
    report("reduce root = -1", MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, -1, comm));
    report("MPI_DATATYPE_NULL", MPI_Allreduce(in, out, 1, MPI_DATATYPE_NULL, MPI_SUM, comm));
    report("MPI_OP_NULL", MPI_Allreduce(in, out, 1, MPI_INT, MPI_OP_NULL, comm));
    report("MPI_SUM on a derived datatype", MPI_Allreduce(in, out, 2, pair, MPI_SUM, comm));
    report("sendbuf == recvbuf", MPI_Allreduce(buf, buf, 4, MPI_INT, MPI_SUM, comm));
    report("recvbuf MPI_IN_PLACE", MPI_Allreduce(in, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, comm));
    report("uncommitted datatype", MPI_Allreduce(in, out, 2, loose, usum, comm));
    report("MPI_REPLACE", MPI_Reduce(in, out, 4, MPI_INT, MPI_REPLACE, 0, comm));
    other_calls(comm, pair, loose);
    MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, comm);
    CHECK(out[3] == 4 * t_size, "a correct call after the erroneous ones: %d", out[3]);
    MPI_Type_free(&pair);
    MPI_Type_free(&loose);
    MPI_Op_free(&usum);
}

/* treduce's deadline passes in the middle of a call. */
static void deadline(MPI_Comm comm)
{
    double in[8], out[8];
    for (int k = 0; k < 8; k++)
        in[k] = t_rank + k;
    MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, comm); /* treduce set up on comm */
    if (t_rank == 1)
        sleep(3);
    int rc = MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, comm), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER && handler_calls == 1 && handler_class == MPI_ERR_OTHER,
          "a passed deadline: class %d, handler calls %d (class %d)", cls, handler_calls,
          handler_class);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, comm);
    CHECK(rc == MPI_SUCCESS && out[7] == t_size * (t_size - 1) / 2.0 + 7.0 * t_size,
          "the call after the failure: rc %d, %g", rc, out[7]);
}

int main(int argc, char **argv)
{
    MPI_Comm ret, custom;
    MPI_Errhandler eh;
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &ret);
    MPI_Comm_dup(MPI_COMM_WORLD, &custom);
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(custom, eh);
    if (argc > 1 && !strcmp(argv[1], "--deadline")) {
        deadline(custom);
    } else {
        erroneous_calls(ret, "MPI_ERRORS_RETURN");
        erroneous_calls(custom, "a handler of the program's");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
        int in = 1, out;
        report("MPI_COMM_NULL (world's handler)",
               MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    }
    MPI_Comm_free(&ret);
    MPI_Comm_free(&custom);
    MPI_Errhandler_free(&eh);
    return t_finish("layer_errors");
}

/* layer_stats.c: a fixed mix of calls, so that run_layer.sh can check the
 * exact TREDUCE_MPI_STATS lines, TREDUCE_MPI=off, TREDUCE_MPI_VERBOSE and
 * the messages about malformed TREDUCE_MPI* values.  Per process:
 *   MPI_Allreduce: 3 run by treduce (MPI_SUM on doubles), 1 on an
 *     intercommunicator, 1 predefined operator on a derived datatype
 *     (erroneous: MPI decides), 1 user operator on a datatype whose data
 *     starts before its lower bound (the layer cannot cut its buffer);
 *   MPI_Reduce: 1 run by treduce, 2 erroneous (root out of range), 1 on MPI_INTEGER
 *     (a Fortran type the layer has no kernel for), 1 MPI_REPLACE;
 *   MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Exscan: 1 each run
 *     by treduce; MPI_Scan: 1 run by treduce, 1 predefined operator on a
 *     derived datatype;
 *   MPI_Reduce_local: 1 run by the layer, 1 on MPI_INTEGER, 1 MPI_REPLACE.
 * Every call that MPI or treduce completes is checked.  With --threads the
 * program asks for MPI_THREAD_MULTIPLE and rank 0 prints the level it got
 * ("provided multiple" or "provided less"). */
#include <string.h>

#include "layer_test.h"

/* Elements 8 bytes apart, each an int 4 bytes before the element. */
static void early_sum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        *(int *)((char *)io + 8 * k - 4) += *(int *)((char *)in + 8 * k - 4);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--threads")) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &t_size);
        if (t_rank == 0)
            printf("provided %s\n", provided == MPI_THREAD_MULTIPLE ? "multiple" : "less");
    } else {
        t_init(&argc, &argv);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double d[3] = {1, 2, 3}, dsum[3];
    for (int i = 0; i < 3; i++) {
        MPI_Allreduce(d, dsum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CHECK(dsum[2] == 3.0 * t_size, "allreduce: %g", dsum[2]);
    }

    MPI_Comm half, inter;
    int low = t_rank < t_size / 2, one = 1, got = 0;
    MPI_Comm_split(MPI_COMM_WORLD, low, t_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? t_size / 2 : 0, 7, &inter);
    MPI_Allreduce(&one, &got, 1, MPI_INT, MPI_SUM, inter);
    CHECK(got == (low ? t_size - t_size / 2 : t_size / 2), "intercommunicator: %d", got);

    int pair_in[4] = {1, 2, 3, 4}, pair_out[4];
    MPI_Datatype pair, early, early_r;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Allreduce(pair_in, pair_out, 2, pair, MPI_SUM, MPI_COMM_WORLD); /* MPI decides */

    /* one int, 4 bytes before the element's address, elements 8 bytes apart */
    int blk = 1, early_in[2] = {5, 0}, early_out[2] = {0, 0};
    MPI_Aint disp = -(MPI_Aint)sizeof(int);
    MPI_Op usum;
    MPI_Type_create_hindexed(1, &blk, &disp, MPI_INT, &early);
    MPI_Type_create_resized(early, 0, 2 * sizeof(int), &early_r);
    MPI_Type_commit(&early_r);
    MPI_Op_create(early_sum, 1, &usum);
    MPI_Allreduce(early_in + 1, early_out + 1, 1, early_r, usum, MPI_COMM_WORLD);
    CHECK(early_out[0] == 5 * t_size, "user operator before the lower bound: %d", early_out[0]);

    MPI_Reduce(d, dsum, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    CHECK(t_rank != 0 || dsum[2] == 3.0 * t_size, "reduce: %g", dsum[2]);
    for (int i = 0; i < 2; i++)
        MPI_Reduce(d, dsum, 3, MPI_DOUBLE, MPI_SUM, t_size, MPI_COMM_WORLD);
    MPI_Fint fin[2] = {1, 2}, fout[2] = {0, 0};
    MPI_Reduce(fin, fout, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD);
    CHECK(t_rank != 0 || fout[1] == 2 * t_size, "MPI_INTEGER reduce: %d", (int)fout[1]);
    MPI_Reduce(fin, fout, 2, MPI_INTEGER, MPI_REPLACE, 0, MPI_COMM_WORLD);

    double scan[3] = {0, 0, 0};
    MPI_Scan(d, scan, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(scan[2] == 3.0 * (t_rank + 1), "scan: %g", scan[2]);
    MPI_Scan(pair_in, pair_out, 2, pair, MPI_SUM, MPI_COMM_WORLD); /* MPI decides */
    MPI_Exscan(d, scan, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(t_rank == 0 || scan[2] == 3.0 * t_rank, "exscan: %g", scan[2]);
    int *ones = malloc((size_t)t_size * sizeof *ones), part = 0;
    for (int r = 0; r < t_size; r++)
        ones[r] = 1;
    MPI_Reduce_scatter_block(ones, &part, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(part == t_size, "reduce-scatter-block: %d", part);
    part = 0;
    MPI_Reduce_scatter(ones, &part, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(part == t_size, "reduce-scatter: %d", part);
    free(ones);
    dsum[2] = 10;
    MPI_Reduce_local(d, dsum, 3, MPI_DOUBLE, MPI_SUM);
    CHECK(dsum[2] == 13.0, "reduce-local: %g", dsum[2]);
    MPI_Reduce_local(fin, fout, 2, MPI_INTEGER, MPI_SUM);
    MPI_Reduce_local(fin, fout, 2, MPI_INTEGER, MPI_REPLACE);

    MPI_Op_free(&usum);
    MPI_Type_free(&pair);
    MPI_Type_free(&early);
    MPI_Type_free(&early_r);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    return t_finish("layer_stats");
}

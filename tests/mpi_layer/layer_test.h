/* layer_test.h: what the MPI layer's test programs share.  The programs
 * are ordinary MPI programs (mpi.h and the C library only), run with and
 * without libtreduce_mpi.so by run_layer.sh; they check their own results
 * against a sequential fold over the ranks and exit 1 on any difference. */
#ifndef LAYER_TEST_H
#define LAYER_TEST_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int t_rank, t_size, t_errors;

/* A failed check: counted, named with its line (the first few). */
#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            if (t_errors++ < 20) {                                                 \
                fprintf(stderr, "rank %d: %s:%d: ", t_rank, __FILE__, __LINE__);  \
                fprintf(stderr, __VA_ARGS__);                                      \
                fputc('\n', stderr);                                               \
            }                                                                      \
        }                                                                          \
    } while (0)

static inline void t_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
}

/* Every rank's error count summed (MPI_Gather: not a call the layer
 * runs), rank 0 says ok; exit status 1 on any error. */
static inline int t_finish(const char *name)
{
    int *all = malloc((size_t)t_size * sizeof *all), total = 0;
    MPI_Gather(&t_errors, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; t_rank == 0 && r < t_size; r++)
        total += all[r];
    MPI_Bcast(&total, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    if (t_rank == 0)
        printf("%s: %s (%d ranks)\n", name, total ? "FAILED" : "ok", t_size);
    MPI_Finalize();
    return total ? 1 : 0;
}

/* The communicator a call runs on: its members' world ranks in its rank
 * order (MPI_Allgather: not a call the layer runs); t_on_free frees them. */
typedef struct on {
    MPI_Comm comm;
    const char *name;
    int me, n;
    int *members;
} on;

static inline on t_on(MPI_Comm comm, const char *name)
{
    on x = {.comm = comm, .name = name};
    int w = t_rank;
    MPI_Comm_rank(comm, &x.me);
    MPI_Comm_size(comm, &x.n);
    x.members = malloc((size_t)x.n * sizeof *x.members);
    MPI_Allgather(&w, 1, MPI_INT, x.members, 1, MPI_INT, comm);
    return x;
}

static inline void t_on_free(on *x) { free(x->members); }

/* MPICH 4.0.2 asserts in its pack (typerep_yaksa_pack.c) on an
 * MPI_Reduce_scatter or MPI_Ireduce_scatter in place whose parts are of
 * about 50000 elements, unequal: with or without the layer, so the tests
 * make no such call there. */
static inline bool t_mpich_breaks_rs_in_place(bool in_place, bool uneven, int64_t total)
{
#ifdef MPICH
    return in_place && uneven && total > 10000;
#else
    (void)in_place, (void)uneven, (void)total;
    return false;
#endif
}

/* A hash of (a, b, c): element values that differ by rank and index. */
static inline uint64_t t_hash(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^
                 (c + 1) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    return x ^ (x >> 32);
}

/* A non-commutative operator that catches a lost, duplicated or reordered
 * contribution: the product of 2x2 matrices mod 65521, each packed in one
 * uint64 (16 bits an entry, MPI_UINT64_T), inoutvec = invec x inoutvec. */
#define T_P16 65521u
static inline uint64_t t_mat16(uint64_t w, uint64_t i)
{
    uint64_t m = 0;
    for (int e = 0; e < 4; e++)
        m |= (t_hash(w, i, (uint64_t)e + 100) % T_P16) << (16 * e);
    return m;
}

/* x * y mod 65521 */
static inline uint64_t t_mat16_mul(uint64_t x, uint64_t y)
{
    uint64_t a[4], b[4];
    for (int e = 0; e < 4; e++) {
        a[e] = x >> (16 * e) & 0xffff;
        b[e] = y >> (16 * e) & 0xffff;
    }
    uint64_t r[4] = {(a[0] * b[0] + a[1] * b[2]) % T_P16, (a[0] * b[1] + a[1] * b[3]) % T_P16,
                     (a[2] * b[0] + a[3] * b[2]) % T_P16, (a[2] * b[1] + a[3] * b[3]) % T_P16};
    return r[0] | r[1] << 16 | r[2] << 32 | r[3] << 48;
}

static inline void t_mat16_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        ((uint64_t *)inout)[k] = t_mat16_mul(((uint64_t *)in)[k], ((uint64_t *)inout)[k]);
}

/* One call of the kinds the communicator tests mix: 0 an allreduce and 1 a
 * reduce to root of 2x2 matrices (mat_op, non-commutative), 2 an allreduce
 * of doubles with MPI_SUM. */
static inline void t_mixed_call(int kind, uint64_t *in, uint64_t *out, double *din,
                                double *dout, int count, int root, MPI_Op mat_op, MPI_Comm comm)
{
    if (kind == 0)
        MPI_Allreduce(in, out, count, MPI_UINT64_T, mat_op, comm);
    else if (kind == 1)
        MPI_Reduce(in, out, count, MPI_UINT64_T, mat_op, root, comm);
    else
        MPI_Allreduce(din, dout, count, MPI_DOUBLE, MPI_SUM, comm);
}

#endif

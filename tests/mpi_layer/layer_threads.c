/* layer_threads.c: an MPI_THREAD_MULTIPLE program whose threads reduce at
 * once, each on communicators of its own (MPI-3.1 Sec. 12.4.3 allows
 * collectives on distinct communicators from several threads; on one
 * communicator they would be erroneous).
 *
 * THREADS threads per process, each with a duplicate of MPI_COMM_WORLD
 * made before they start (thread t's the t-th, the same on every rank),
 * run ITERS reductions - allreduce and reduce of 2x2 matrices (a
 * non-commutative user operator: a contribution lost, duplicated,
 * reordered or taken from another thread's communicator changes the
 * product) and sums of doubles, of 1 to 3000 elements, each checked
 * against the fold in rank order - and every 50th iteration duplicate
 * their communicator, reduce on the copy and free it, while the other
 * threads reduce.  Where MPI provides less than MPI_THREAD_MULTIPLE the
 * program says so and runs one thread.  Usage: layer_threads [ITERS]
 * (default 2000). */
#include <pthread.h>
#include <string.h>

#include "layer_test.h"

#define THREADS 4
#define MAXCOUNT 3000

static MPI_Op mat_op;

typedef struct job {
    int id, iters;
    MPI_Comm comm;
    int errors;
} job;

/* One reduction on comm, its contributions tagged with (thread, iter):
 * kind 0 allreduce of matrices, 1 reduce of matrices to root, 2 allreduce
 * of doubles. */
static int reduce_once(MPI_Comm comm, int kind, int count, int root, uint64_t tag,
                       uint64_t *in, uint64_t *out)
{
    int n, me, bad = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me); /* the world's order: every copy is a duplicate */
    double *din = (double *)in, *dout = (double *)out;
    for (int i = 0; i < count; i++) {
        if (kind == 2)
            din[i] = (double)(t_hash((uint64_t)me, tag, (uint64_t)i) % 1000);
        else
            in[i] = t_mat16((uint64_t)me ^ tag << 8, (uint64_t)i);
        out[i] = 0;
    }
    t_mixed_call(kind, in, out, din, dout, count, root, mat_op, comm);
    for (int i = 0; i < count && (kind != 1 || me == root); i++) {
        uint64_t want = t_mat16(tag << 8, (uint64_t)i);
        double dwant = 0;
        for (int r = 0; r < n; r++) {
            if (r > 0)
                want = t_mat16_mul(want, t_mat16((uint64_t)r ^ tag << 8, (uint64_t)i));
            dwant += (double)(t_hash((uint64_t)r, tag, (uint64_t)i) % 1000);
        }
        bad += kind == 2 ? dout[i] != dwant : out[i] != want;
    }
    return bad;
}

static void *thread_main(void *arg)
{
    job *j = arg;
    uint64_t *in = malloc(MAXCOUNT * sizeof *in), *out = malloc(MAXCOUNT * sizeof *out);
    static const int counts[] = {1, 64, 3000, 7};
    for (int it = 0; it < j->iters; it++) {
        uint64_t tag = (uint64_t)j->id << 32 | (uint64_t)it;
        int kind = it % 3, count = counts[(it / 3) % 4], root = it % t_size;
        int bad = reduce_once(j->comm, kind, count, root, tag, in, out);
        if (it % 50 == 49) { /* a copy made, used and freed beside the other threads */
            MPI_Comm copy;
            MPI_Comm_dup(j->comm, &copy);
            bad += reduce_once(copy, 0, 64, 0, tag | 1u << 31, in, out);
            MPI_Comm_free(&copy);
        }
        if (bad && j->errors++ < 5)
            fprintf(stderr, "rank %d thread %d iteration %d: %d elements wrong (kind %d, %d "
                    "elements)\n", t_rank, j->id, it, bad, kind, count);
    }
    free(in);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    int nthreads = provided == MPI_THREAD_MULTIPLE ? THREADS : 1;
    if (t_rank == 0)
        printf("provided %s: %d threads\n", nthreads > 1 ? "multiple" : "less", nthreads);
    MPI_Op_create(t_mat16_fn, 0, &mat_op);
    job jobs[THREADS];
    pthread_t tid[THREADS];
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = (job){.id = t, .iters = iters};
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_create(&tid[t], NULL, thread_main, &jobs[t]);
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tid[t], NULL);
        t_errors += jobs[t].errors;
        MPI_Comm_free(&jobs[t].comm);
    }
    MPI_Op_free(&mat_op);
    return t_finish("layer_threads");
}

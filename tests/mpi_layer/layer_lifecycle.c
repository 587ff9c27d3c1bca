/* layer_lifecycle.c: communicators made, used and freed over and over
 * while ranks arrive late, as Python ranks and loaded nodes do.
 *
 *   rounds   MPI_COMM_WORLD duplicated, three reductions on the duplicate
 *            (each rank waits a random 0-50 ms, or not, before the first
 *            and in some rounds another), a
 *            duplicate of MPI_COMM_SELF used in between, both freed (in
 *            either order);
 *   splits   two splits of the world and a communicator of all ranks but
 *            the last (MPI_Comm_create_group), each used once, then freed
 *            in a different order on even and odd ranks;
 *   slow     a reduce whose root arrives 30 ms late: the other ranks leave
 *            it, free the communicator and start on the next one while the
 *            root is still in the reduce;
 *   idup     a communicator made by MPI_Comm_idup, which the layer does
 *            not see made (its reductions go to MPI);
 *   attrs    an attribute of the program's whose copy and delete
 *            callbacks count their calls: as many as MPI alone makes
 *            (the layer's own communicators copy none of it).
 *
 * Every reduction is checked against the fold in the communicator's rank
 * order: the product of 2x2 matrices (non-commutative: a contribution
 * lost, duplicated, reordered or taken from another communicator changes
 * it) and a sum of doubles.  Usage: layer_lifecycle [ROUNDS] (default
 * 100). */
#define _POSIX_C_SOURCE 200809L /* nanosleep, rand_r */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "layer_test.h"

static MPI_Op mat_op;
static unsigned seed;

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, us % 1000000 * 1000};
    nanosleep(&t, NULL);
}

/* Half the calls: a random wait of up to max_us first. */
static void maybe_late(int max_us)
{
    if (rand_r(&seed) % 2)
        sleep_us(rand_r(&seed) % max_us);
}

/* The world ranks of comm's ranks, in its order (n of them). */
static int *members_of(MPI_Comm comm, int *n)
{
    MPI_Group g, world;
    MPI_Comm_size(comm, n);
    int *in = malloc((size_t)*n * sizeof *in), *out = malloc((size_t)*n * sizeof *out);
    for (int r = 0; r < *n; r++)
        in[r] = r;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(g, *n, in, world, out);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    free(in);
    return out;
}

/* One reduction on comm (kind 0: allreduce of matrices, 1: reduce of
 * matrices to root, 2: allreduce of a sum), its contributions tagged with
 * `salt` so that a message of another round cannot pass for this one. */
static void reduce_once(MPI_Comm comm, int kind, int count, int root, uint64_t salt,
                        const char *what)
{
    int n, me, *m = members_of(comm, &n);
    MPI_Comm_rank(comm, &me);
    uint64_t *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out);
    double *din = malloc((size_t)count * sizeof *din), *dout = malloc((size_t)count * sizeof *dout);
    for (int i = 0; i < count; i++) {
        in[i] = t_mat16((uint64_t)m[me] + salt, (uint64_t)i);
        din[i] = (double)(t_hash((uint64_t)m[me], salt, (uint64_t)i) % 1000);
        out[i] = 0;
    }
    t_mixed_call(kind, in, out, din, dout, count, root, mat_op, comm);
    int bad = 0;
    for (int i = 0; i < count && (kind != 1 || me == root); i++) {
        uint64_t want = t_mat16((uint64_t)m[0] + salt, (uint64_t)i);
        double dwant = 0;
        for (int r = 0; r < n; r++) {
            if (r > 0)
                want = t_mat16_mul(want, t_mat16((uint64_t)m[r] + salt, (uint64_t)i));
            dwant += (double)(t_hash((uint64_t)m[r], salt, (uint64_t)i) % 1000);
        }
        bad += kind == 2 ? dout[i] != dwant : out[i] != want;
    }
    CHECK(bad == 0, "%s: %d of %d elements wrong (kind %d, %d ranks)", what, bad, count, kind,
          n);
    free(in);
    free(out);
    free(din);
    free(dout);
    free(m);
}

static const int counts[] = {1, 100, 5000};

static void rounds(int nrounds)
{
    for (int r = 0; r < nrounds; r++) {
        MPI_Comm c, s;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        for (int k = 0; k < 3; k++) {
            if (k == 0 || r % 4 == k)
                maybe_late(50000);
            reduce_once(c, k, counts[(r + k) % 3], r % t_size, (uint64_t)r << 20, "rounds");
            if (k == 1) {
                MPI_Comm_dup(MPI_COMM_SELF, &s);
                reduce_once(s, 0, 10, 0, (uint64_t)r << 20 | 1, "rounds, a copy of SELF");
            }
        }
        if (r % 2) {
            MPI_Comm_free(&s);
            MPI_Comm_free(&c);
        } else {
            MPI_Comm_free(&c);
            MPI_Comm_free(&s);
        }
    }
}

static void splits(int nrounds)
{
    for (int r = 0; r < nrounds; r++) {
        MPI_Comm a, b, g = MPI_COMM_NULL;
        MPI_Group world, most;
        int last = t_size - 1;
        MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &a);
        MPI_Comm_split(MPI_COMM_WORLD, t_rank < t_size / 2, -t_rank, &b); /* reversed */
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_excl(world, 1, &last, &most);
        if (t_rank != last)
            MPI_Comm_create_group(MPI_COMM_WORLD, most, 7, &g);
        MPI_Group_free(&most);
        MPI_Group_free(&world);
        uint64_t salt = (uint64_t)r << 20 | 2;
        maybe_late(20000);
        reduce_once(a, r % 3, counts[r % 3], 0, salt, "splits, by parity");
        maybe_late(20000);
        reduce_once(b, (r + 1) % 3, counts[(r + 1) % 3], 0, salt, "splits, reversed halves");
        if (g != MPI_COMM_NULL) {
            maybe_late(20000);
            reduce_once(g, (r + 2) % 3, counts[(r + 2) % 3], 0, salt, "create_group");
        }
        MPI_Comm *order[3] = {&a, &b, &g};
        for (int i = 0; i < 3; i++) {
            MPI_Comm *f = order[t_rank % 2 ? 2 - i : i];
            if (*f != MPI_COMM_NULL)
                MPI_Comm_free(f);
        }
    }
}

static void slow(int nrounds)
{
    for (int r = 0; r < nrounds; r++) {
        MPI_Comm c, d;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (t_rank == 0)
            sleep_us(30000);
        reduce_once(c, 1, counts[r % 3], 0, (uint64_t)r << 20 | 3, "slow root");
        MPI_Comm_free(&c);
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        reduce_once(d, 0, counts[(r + 1) % 3], 0, (uint64_t)r << 20 | 4, "after the slow root");
        MPI_Comm_free(&d);
    }
}

static void idup(void)
{
    MPI_Comm c;
    MPI_Request req;
    MPI_Comm_idup(MPI_COMM_WORLD, &c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++)
        reduce_once(c, k, counts[k], 0, 5, "idup");
    MPI_Comm_free(&c);
}

static int copies, deletes;

static int count_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)key;
    (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)key;
    (void)value;
    (void)extra;
    int size;
    MPI_Comm_size(comm, &size); /* a callback may call MPI */
    deletes++;
    return MPI_SUCCESS;
}

static void attrs(void)
{
    int key;
    MPI_Comm a, b;
    MPI_Comm_create_keyval(count_copy, count_delete, &key, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_attr(a, key, &copies);
    MPI_Comm_dup(a, &b); /* one copy */
    reduce_once(a, 0, 100, 0, 6, "attrs");
    reduce_once(b, 1, 100, 0, 7, "attrs, a copy");
    MPI_Comm_free(&b); /* two deletes */
    MPI_Comm_free(&a);
    MPI_Comm_free_keyval(&key);
    CHECK(copies == 1 && deletes == 2, "the program's attribute callbacks ran %d copies and "
          "%d deletes, not 1 and 2", copies, deletes);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 100;
    seed = (unsigned)t_rank * 7919u + 17u;
    MPI_Op_create(t_mat16_fn, 0, &mat_op);
    rounds(n);
    splits(n / 2);
    slow(n / 10 + 1);
    idup();
    attrs();
    MPI_Op_free(&mat_op);
    return t_finish("layer_lifecycle");
}

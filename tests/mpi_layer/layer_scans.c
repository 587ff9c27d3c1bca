/* layer_scans.c: MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan,
 * MPI_Exscan and MPI_Reduce_local, each result compared byte for byte with
 * an oracle the program computes itself: every rank's input is a function
 * of its world rank, the element's index and the call, so each rank
 * regenerates the inputs of the ranks before it (or of all) and folds them
 * with a plain loop in the communicator's rank order.  Communicators: the
 * world and a split of it whose ranks run in reverse world order (a fold
 * in world order fails there).
 *
 * Operators: MPI_SUM on MPI_INT and on MPI_DOUBLE (small integers: exact
 * in any order), a commutative user sum on MPI_INT (the layer may run
 * commutative algorithms with it), and the product of 2x2 matrices mod
 * 2^31 - 1 (MPI_Op_create(fn, 0, &op): non-commutative; a lost,
 * duplicated or reordered contribution changes it) on a contiguous type of
 * 4 MPI_INT and on a vector of 4 MPI_INT with a stride (its gaps must keep
 * their bytes: the layer stages such a layout).  Every user function
 * checks that it is called with the caller's datatype handle.  Each call
 * with sendbuf and with MPI_IN_PLACE, at counts 0, 1, 7, 1000 and 100000
 * (MPI_Reduce_scatter: parts of uneven sizes, some of them 0, all of them
 * at count 0).  MPI_Exscan: rank 0's recvbuf is filled with a sentinel
 * and must keep it (in place: its input).  MPI_Reduce_local: inoutbuf =
 * inbuf (+) inoutbuf, and MPI_MAXLOC on MPI_DOUBLE_INT, whose padding
 * bytes must keep theirs.
 *
 * --quick: MPI_COMM_WORLD and counts up to 1000 (layer_test.sh runs it
 * under every reduce-scatter and scan algorithm). */
#include <stdbool.h>
#include <string.h>

#include "layer_test.h"

#define P31 2147483647u
#define GAP 0xEE
#define SENTINEL 0x5A

enum { INT_SUM, DOUBLE_SUM, USER_SUM, MATRIX, STRIDED, NCASES };
typedef struct scase {
    const char *name;
    size_t extent;
} scase;
static const scase cases[NCASES] = {
    [INT_SUM] = {"MPI_SUM, MPI_INT", sizeof(int)},
    [DOUBLE_SUM] = {"MPI_SUM, MPI_DOUBLE", sizeof(double)},
    [USER_SUM] = {"commutative user sum, MPI_INT", sizeof(int)},
    [MATRIX] = {"matrix product, 4 contiguous MPI_INT", 4 * sizeof(int)},
    [STRIDED] = {"matrix product, 4 MPI_INT with a stride", 8 * sizeof(int)},
};
static MPI_Datatype types[NCASES];
static MPI_Op ops[NCASES];
static MPI_Datatype expected_dt; /* what the next user function call must see */
static int bad_handles;
static int salt; /* the call: the same sequence on every rank */

/* One element: a sum's value in v[0], or a matrix [[v0, v1], [v2, v3]]. */
typedef struct val {
    int64_t v[4];
} val;

static bool is_matrix(int c) { return c == MATRIX || c == STRIDED; }

/* x (+) y, x from the lower ranks */
static val combine(int c, val x, val y)
{
    if (!is_matrix(c))
        return (val){{x.v[0] + y.v[0], 0, 0, 0}};
    uint64_t a[4], b[4]; /* entries below 2^31: a sum of two products fits */
    for (int e = 0; e < 4; e++)
        a[e] = (uint64_t)x.v[e], b[e] = (uint64_t)y.v[e];
    return (val){{(int64_t)((a[0] * b[0] + a[1] * b[2]) % P31),
                  (int64_t)((a[0] * b[1] + a[1] * b[3]) % P31),
                  (int64_t)((a[2] * b[0] + a[3] * b[2]) % P31),
                  (int64_t)((a[2] * b[1] + a[3] * b[3]) % P31)}};
}

/* Element i of world rank w's input to call s. */
static val gen(int c, int w, int64_t i, int s)
{
    val x = {{0, 0, 0, 0}};
    for (int e = 0; e < (is_matrix(c) ? 4 : 1); e++) {
        uint64_t h = t_hash((uint64_t)w, (uint64_t)i, (uint64_t)s * 4 + (uint64_t)e);
        x.v[e] = is_matrix(c) ? (int64_t)(h % P31) : (int64_t)(h % 1000) - 500;
    }
    return x;
}

static int *entry(int c, unsigned char *buf, int64_t k, int e)
{
    return (int *)(buf + (size_t)k * cases[c].extent) + (c == STRIDED ? 2 * e : e);
}

static val get(int c, unsigned char *buf, int64_t k)
{
    val x = {{0, 0, 0, 0}};
    if (c == DOUBLE_SUM)
        x.v[0] = (int64_t)((double *)buf)[k];
    else
        for (int e = 0; e < (is_matrix(c) ? 4 : 1); e++)
            x.v[e] = *entry(c, buf, k, e);
    return x;
}

static void put(int c, unsigned char *buf, int64_t k, val x)
{
    if (c == DOUBLE_SUM)
        ((double *)buf)[k] = (double)x.v[0];
    else
        for (int e = 0; e < (is_matrix(c) ? 4 : 1); e++)
            *entry(c, buf, k, e) = (int)x.v[e];
}

/* inoutvec = invec (+) inoutvec, as MPI calls a user function */
static void user_fn(int c, void *in, void *io, int *len, MPI_Datatype *dt)
{
    if (*dt != expected_dt || *len < 0) /* Open MPI passes len 0 for an empty part */
        bad_handles++;
    for (int k = 0; k < *len; k++)
        put(c, io, k, combine(c, get(c, in, k), get(c, io, k)));
}
static void fn_sum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_fn(USER_SUM, in, io, len, dt);
}
static void fn_matrix(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_fn(MATRIX, in, io, len, dt);
}
static void fn_strided(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_fn(STRIDED, in, io, len, dt);
}

/* A buffer of n elements (at least one: never NULL), its gaps GAP. */
static unsigned char *alloc(int c, int64_t n)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * cases[c].extent;
    unsigned char *b = malloc(bytes);
    memset(b, GAP, bytes);
    return b;
}

/* n elements of comm rank r's input, from element `first`. */
static void fill(int c, unsigned char *buf, int64_t n, const on *x, int r, int64_t first)
{
    for (int64_t k = 0; k < n; k++)
        put(c, buf, k, gen(c, x->members[r], first + k, salt));
}

/* The fold over comm ranks lo..hi of n elements from element `first`. */
static void oracle(int c, unsigned char *buf, int64_t n, const on *x, int lo, int hi,
                   int64_t first)
{
    for (int64_t k = 0; k < n; k++) {
        val acc = gen(c, x->members[lo], first + k, salt);
        for (int r = lo + 1; r <= hi; r++)
            acc = combine(c, acc, gen(c, x->members[r], first + k, salt));
        put(c, buf, k, acc);
    }
}

/* The first n elements of got are want's, gaps included. */
static void same(int c, unsigned char *got, unsigned char *want, int64_t n, const char *fn,
                 bool in_place, int count, const on *x)
{
    CHECK(!memcmp(got, want, (size_t)n * cases[c].extent), "%s%s, %s, count %d, on %s: wrong",
          fn, in_place ? " in place" : "", cases[c].name, count, x->name);
}

/* Part r of MPI_Reduce_scatter: sizes from count with zeros among them,
 * all zero at count 0. */
static int part_of(int count, int r)
{
    static const int share[5] = {2, 0, 3, 1, 0};
    int s = share[(r + count) % 5];
    return s && count ? count * s / 2 + r : 0;
}

/* A reduce-scatter whose parts are counts[0..n) (block: all `count`),
 * with sendbuf and in place. */
static void reduce_scatter(int c, const on *x, int count, bool block)
{
    int *counts = malloc((size_t)x->n * sizeof *counts);
    int64_t total = 0, first = 0;
    for (int r = 0; r < x->n; r++) {
        counts[r] = block ? count : part_of(count, r);
        first += r < x->me ? counts[r] : 0;
        total += counts[r];
    }
    int64_t mine = counts[x->me];
    const char *fn = block ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter";
    for (int in_place = 0; in_place < 2; in_place++, salt++) {
        if (t_mpich_breaks_rs_in_place(in_place, !block, total))
            continue;
        unsigned char *in = alloc(c, total), *out = alloc(c, in_place ? total : mine),
                      *want = alloc(c, mine), *again = alloc(c, total);
        fill(c, in_place ? out : in, total, x, x->me, 0);
        oracle(c, want, mine, x, 0, x->n - 1, first);
        expected_dt = types[c];
        const void *send = in_place ? MPI_IN_PLACE : in;
        if (block)
            MPI_Reduce_scatter_block(send, out, count, types[c], ops[c], x->comm);
        else
            MPI_Reduce_scatter(send, out, counts, types[c], ops[c], x->comm);
        same(c, out, want, mine, fn, in_place, count, x);
        fill(c, again, total, x, x->me, 0);
        CHECK(in_place || !memcmp(in, again, (size_t)total * cases[c].extent),
              "%s, %s, count %d: sendbuf changed", fn, cases[c].name, count);
        free(in);
        free(out);
        free(want);
        free(again);
    }
    free(counts);
}

/* MPI_Scan or MPI_Exscan, with sendbuf and in place. */
static void scan(int c, const on *x, int count, bool exclusive)
{
    const char *fn = exclusive ? "MPI_Exscan" : "MPI_Scan";
    int hi = exclusive ? x->me - 1 : x->me;
    for (int in_place = 0; in_place < 2; in_place++, salt++) {
        unsigned char *in = alloc(c, count), *out = alloc(c, count), *want = alloc(c, count);
        size_t bytes = (size_t)(count > 0 ? count : 1) * cases[c].extent;
        fill(c, in, count, x, x->me, 0);
        if (in_place)
            memcpy(out, in, bytes);
        else
            memset(out, SENTINEL, bytes);
        memcpy(want, out, bytes); /* rank 0 of an exscan: recvbuf as it was */
        if (hi >= 0)
            oracle(c, want, count, x, 0, hi, 0);
        expected_dt = types[c];
        if (exclusive)
            MPI_Exscan(in_place ? MPI_IN_PLACE : in, out, count, types[c], ops[c], x->comm);
        else
            MPI_Scan(in_place ? MPI_IN_PLACE : in, out, count, types[c], ops[c], x->comm);
        if (hi >= 0)
            same(c, out, want, count, fn, in_place, count, x);
        else
            CHECK(!memcmp(out, want, bytes), "%s%s, %s, count %d, on %s: rank 0's recvbuf "
                  "written", fn, in_place ? " in place" : "", cases[c].name, count, x->name);
        free(in);
        free(out);
        free(want);
    }
}

/* MPI_Reduce_local: inoutbuf = inbuf (+) inoutbuf. */
static void reduce_local(int c, int count)
{
    unsigned char *in = alloc(c, count), *io = alloc(c, count), *want = alloc(c, count);
    for (int k = 0; k < count; k++) {
        val a = gen(c, t_rank, k, salt), b = gen(c, t_rank + 1000, k, salt);
        put(c, in, k, a);
        put(c, io, k, b);
        put(c, want, k, combine(c, a, b));
    }
    salt++;
    expected_dt = types[c];
    MPI_Reduce_local(in, io, count, types[c], ops[c]);
    CHECK(!memcmp(io, want, (size_t)(count > 0 ? count : 1) * cases[c].extent),
          "MPI_Reduce_local, %s, count %d: wrong", cases[c].name, count);
    free(in);
    free(io);
    free(want);
}

/* MPI_MAXLOC on MPI_DOUBLE_INT, whose elements have padding: the better
 * value, on equal values the lower index; the padding keeps its bytes. */
static void reduce_local_pairs(int count)
{
    typedef struct {
        double v;
        int i;
    } di;
    size_t bytes = (size_t)(count > 0 ? count : 1) * sizeof(di);
    di *in = malloc(bytes), *io = malloc(bytes), *want = malloc(bytes);
    memset(in, GAP, bytes);
    memset(io, GAP, bytes);
    memset(want, GAP, bytes);
    for (int k = 0; k < count; k++) {
        in[k].v = (double)(t_hash(1, (uint64_t)k, (uint64_t)salt) % 8);
        io[k].v = (double)(t_hash(2, (uint64_t)k, (uint64_t)salt) % 8);
        in[k].i = (int)(t_hash(3, (uint64_t)k, (uint64_t)salt) % 100);
        io[k].i = (int)(t_hash(4, (uint64_t)k, (uint64_t)salt) % 100);
        bool left = in[k].v > io[k].v || (in[k].v == io[k].v && in[k].i < io[k].i);
        want[k].v = left ? in[k].v : io[k].v;
        want[k].i = left ? in[k].i : io[k].i;
    }
    salt++;
    MPI_Reduce_local(in, io, count, MPI_DOUBLE_INT, MPI_MAXLOC);
    CHECK(!memcmp(io, want, bytes), "MPI_Reduce_local, MPI_MAXLOC on MPI_DOUBLE_INT, count "
          "%d: wrong (or a padding byte written)", count);
    free(in);
    free(io);
    free(want);
}

static void run_all(MPI_Comm comm, const char *name, const int *counts, int ncounts)
{
    on x = t_on(comm, name);
    for (int i = 0; i < ncounts; i++)
        for (int c = 0; c < NCASES; c++) {
            reduce_scatter(c, &x, counts[i], true);
            reduce_scatter(c, &x, counts[i], false);
            scan(c, &x, counts[i], false);
            scan(c, &x, counts[i], true);
        }
    t_on_free(&x);
}

static void make_types(void)
{
    MPI_Datatype v;
    types[INT_SUM] = types[USER_SUM] = MPI_INT;
    types[DOUBLE_SUM] = MPI_DOUBLE;
    MPI_Type_contiguous(4, MPI_INT, &types[MATRIX]);
    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)cases[STRIDED].extent, &types[STRIDED]);
    MPI_Type_free(&v);
    MPI_Type_commit(&types[MATRIX]);
    MPI_Type_commit(&types[STRIDED]);
    ops[INT_SUM] = ops[DOUBLE_SUM] = MPI_SUM;
    MPI_Op_create(fn_sum, 1, &ops[USER_SUM]);
    MPI_Op_create(fn_matrix, 0, &ops[MATRIX]);
    MPI_Op_create(fn_strided, 0, &ops[STRIDED]);
}

static void free_types(void)
{
    MPI_Type_free(&types[MATRIX]);
    MPI_Type_free(&types[STRIDED]);
    MPI_Op_free(&ops[USER_SUM]);
    MPI_Op_free(&ops[MATRIX]);
    MPI_Op_free(&ops[STRIDED]);
}

int main(int argc, char **argv)
{
    static const int counts[] = {0, 1, 7, 1000, 100000};
    bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    int ncounts = quick ? 4 : 5;
    t_init(&argc, &argv);
    make_types();
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_size - t_rank, &reversed);
    run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD", counts, ncounts);
    if (!quick)
        run_all(reversed, "a split in reverse order", counts, ncounts);
    for (int i = 0; i < ncounts; i++) {
        for (int c = 0; c < NCASES; c++)
            reduce_local(c, counts[i]);
        reduce_local_pairs(counts[i]);
    }
    CHECK(bad_handles == 0, "%d user function calls saw another datatype handle", bad_handles);
    MPI_Comm_free(&reversed);
    free_types();
    return t_finish("layer_scans");
}

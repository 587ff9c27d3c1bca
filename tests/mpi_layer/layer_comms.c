/* layer_comms.c: MPI_Allreduce and MPI_Reduce on communicators other than
 * MPI_COMM_WORLD, with user operators - non-commutative and commutative -
 * on predefined and derived datatypes.
 *
 * Communicators: MPI_COMM_WORLD, a duplicate, the two halves of a split,
 * the world in reverse rank order (a split keyed backwards), MPI_COMM_SELF,
 * the even ranks through MPI_Comm_create_group, and the intercommunicator
 * between the halves (the layer passes it to MPI; its result is checked
 * all the same).  Every contribution depends on the process's WORLD rank,
 * and every expected value is the fold in the communicator's rank order,
 * so a reduction in world order, or in any order but the communicator's,
 * fails.
 *
 * Non-commutative operators: the product of 2x2 matrices mod 2^31 - 1,
 * each matrix four uint32 laid out by a derived datatype - contiguous, a
 * vector with a stride (resized), a struct with holes, an indexed type
 * with a hole (resized) - and mod 65521 packed in one MPI_UINT64_T (a
 * predefined type).  Where the layout has holes, recvbuf's bytes there
 * must stay as they were.  Every user function checks that it is called
 * with the caller's own datatype handle.  A non-commutative operator on
 * MPI_INT that keeps its left operand and checks that it is below the
 * right one (as MPICH's allred6 test does): it must never be called on
 * operands the program did not give, nor out of rank order.  A
 * commutative user sum on MPI_INT, and the predefined MPI_SUM on MPI_INT and on MPI_DOUBLE (small
 * integers: exact in any order).  (Predefined operators on derived
 * datatypes are erroneous in MPI; layer_stats.c checks that the layer
 * passes them to MPI.)
 *
 * --quick: MPI_COMM_WORLD only (layer_test.sh runs it under every
 * algorithm). */
#include <stdbool.h>
#include <string.h>

#include "layer_test.h"

#define COUNT 64
#define P31 2147483647u
#define P16 65521u
#define GAP 0xEE

enum { CONTIG, VECTOR, STRUCT, INDEXED, PACKED, NLAYOUTS };
/* Where a matrix's four entries lie (uint32 units) in each layout, and
 * the element's extent; PACKED: 16-bit entries of one uint64. */
static const int entry_at[NLAYOUTS][4] = {
    {0, 1, 2, 3}, {0, 2, 4, 6}, {0, 1, 3, 5}, {0, 1, 3, 4}, {0, 0, 0, 0}};
static const int extent32[NLAYOUTS] = {4, 8, 6, 6, 2};
static const uint32_t modulus[NLAYOUTS] = {P31, P31, P31, P31, P16};

static MPI_Datatype mat_type[NLAYOUTS];
static MPI_Op mat_op[NLAYOUTS], op_isum, op_keep_left;
static MPI_Datatype expected_dt; /* what the next user function call must see */
static int bad_handles, bad_operands;

/* Matrix i of world rank w: four entries mod p. */
static void mat_of(int w, int i, uint32_t p, uint32_t m[4])
{
    for (int e = 0; e < 4; e++)
        m[e] = (uint32_t)(t_hash((uint64_t)w, (uint64_t)i, (uint64_t)e) % p);
}

/* y = x * y mod p */
static void mat_mul(const uint32_t x[4], uint32_t y[4], uint32_t p)
{
    uint64_t a = ((uint64_t)x[0] * y[0] + (uint64_t)x[1] * y[2]) % p;
    uint64_t b = ((uint64_t)x[0] * y[1] + (uint64_t)x[1] * y[3]) % p;
    uint64_t c = ((uint64_t)x[2] * y[0] + (uint64_t)x[3] * y[2]) % p;
    uint64_t d = ((uint64_t)x[2] * y[1] + (uint64_t)x[3] * y[3]) % p;
    y[0] = (uint32_t)a, y[1] = (uint32_t)b, y[2] = (uint32_t)c, y[3] = (uint32_t)d;
}

static void check_handle(MPI_Datatype *dt, int *len)
{
    if (*dt != expected_dt || *len < 1)
        bad_handles++;
}

static void get(const void *buf, int k, int layout, uint32_t m[4])
{
    const uint32_t *b = (const uint32_t *)buf + k * extent32[layout];
    for (int e = 0; e < 4; e++)
        m[e] = layout == PACKED ? (uint32_t)(((const uint64_t *)buf)[k] >> (16 * e) & 0xffff)
                                : b[entry_at[layout][e]];
}

static void put(void *buf, int k, int layout, const uint32_t m[4])
{
    uint32_t *b = (uint32_t *)buf + k * extent32[layout];
    if (layout == PACKED)
        ((uint64_t *)buf)[k] = (uint64_t)m[0] | (uint64_t)m[1] << 16 | (uint64_t)m[2] << 32 |
                               (uint64_t)m[3] << 48;
    else
        for (int e = 0; e < 4; e++)
            b[entry_at[layout][e]] = m[e];
}

static void mat_fn(void *in, void *inout, int *len, MPI_Datatype *dt, int layout)
{
    check_handle(dt, len);
    for (int k = 0; k < *len; k++) {
        uint32_t x[4], y[4];
        get(in, k, layout, x);
        get(inout, k, layout, y);
        mat_mul(x, y, modulus[layout]);
        put(inout, k, layout, y);
    }
}
#define MAT_FN(L)                                                        \
    static void fn_##L(void *in, void *io, int *len, MPI_Datatype *dt) \
    {                                                                  \
        mat_fn(in, io, len, dt, L);                                    \
    }
MAT_FN(CONTIG)
MAT_FN(VECTOR)
MAT_FN(STRUCT)
MAT_FN(INDEXED)
MAT_FN(PACKED)
static MPI_User_function *const mat_fns[NLAYOUTS] = {fn_CONTIG, fn_VECTOR, fn_STRUCT,
                                                     fn_INDEXED, fn_PACKED};
/* inoutvec = invec: the lowest rank's values, which rise with the rank;
 * an operand that does not (zeros from a measurement, a reversed order)
 * is counted. */
static void fn_keep_left(void *in, void *io, int *len, MPI_Datatype *dt)
{
    check_handle(dt, len);
    for (int k = 0; k < *len; k++) {
        if (!(((int *)in)[k] < ((int *)io)[k]))
            bad_operands++;
        ((int *)io)[k] = ((int *)in)[k];
    }
}

static void fn_isum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    check_handle(dt, len);
    for (int k = 0; k < *len; k++)
        ((int *)io)[k] += ((int *)in)[k];
}

/* One reduction test: a datatype, an operator, how to fill and fold. */
enum { USER_SUM = -1, INT_SUM = -2, DOUBLE_SUM = -3, KEEP_LEFT = -4 };
typedef struct rcase {
    const char *name;
    int layout; /* a matrix layout, or one of the sums */
    size_t extent;
} rcase;

static const rcase cases[] = {
    {"matrix product, contiguous type", CONTIG, 16},
    {"matrix product, vector type with a stride", VECTOR, 32},
    {"matrix product, struct type with holes", STRUCT, 24},
    {"matrix product, indexed type with a hole", INDEXED, 24},
    {"matrix product, MPI_UINT64_T", PACKED, 8},
    {"commutative user sum, MPI_INT", USER_SUM, 4},
    {"keep the left operand, MPI_INT", KEEP_LEFT, 4},
    {"MPI_SUM, MPI_INT", INT_SUM, 4},
    {"MPI_SUM, MPI_DOUBLE", DOUBLE_SUM, 8},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Element values of world rank w, comm rank r. */
static void fill(const rcase *c, void *b, int w, int r)
{
    for (int k = 0; k < COUNT; k++) {
        uint32_t m[4];
        int v = (int)(t_hash((uint64_t)w, (uint64_t)k, 9) % 1000) - 500;
        if (c->layout == DOUBLE_SUM)
            ((double *)b)[k] = v;
        if (c->layout == USER_SUM || c->layout == INT_SUM)
            ((int *)b)[k] = v;
        if (c->layout == KEEP_LEFT)
            ((int *)b)[k] = r * COUNT + k;
        if (c->layout < 0)
            continue;
        mat_of(w, k, modulus[c->layout], m);
        put(b, k, c->layout, m);
    }
}

/* acc = acc (+) in, acc holding the lower ranks */
static void fold(const rcase *c, void *acc, const void *in)
{
    for (int k = 0; k < COUNT; k++) {
        uint32_t x[4], y[4];
        if (c->layout == DOUBLE_SUM)
            ((double *)acc)[k] += ((const double *)in)[k];
        if (c->layout == USER_SUM || c->layout == INT_SUM)
            ((int *)acc)[k] += ((const int *)in)[k];
        if (c->layout < 0) /* KEEP_LEFT: acc stays */
            continue;
        get(acc, k, c->layout, x);
        get(in, k, c->layout, y);
        mat_mul(x, y, modulus[c->layout]);
        put(acc, k, c->layout, y);
    }
}

/* One case on communicator comm whose members (world ranks, in comm rank
 * order) are members[0..n). */
static void run_case(const rcase *c, MPI_Comm comm, const int *members, int n,
                     const char *cname)
{
    int me, root = n - 1;
    MPI_Comm_rank(comm, &me);
    size_t bytes = COUNT * c->extent;
    unsigned char *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes),
                  *tmp = malloc(bytes), *gaps = malloc(bytes);
    MPI_Datatype dt = c->layout == DOUBLE_SUM ? MPI_DOUBLE
                      : c->layout < 0     ? MPI_INT
                                          : mat_type[c->layout];
    MPI_Op op = c->layout == USER_SUM    ? op_isum
                : c->layout == KEEP_LEFT ? op_keep_left
                : c->layout < 0          ? MPI_SUM
                                         : mat_op[c->layout];
    memset(want, GAP, bytes);
    fill(c, want, members[0], 0);
    for (int r = 1; r < n; r++) {
        memset(tmp, GAP, bytes);
        fill(c, tmp, members[r], r);
        fold(c, want, tmp);
    }
    memset(in, GAP, bytes);
    fill(c, in, members[me], me);
    memset(gaps, GAP, bytes);
    expected_dt = dt;

    memset(out, GAP, bytes);
    MPI_Allreduce(in, out, COUNT, dt, op, comm);
    /* outside the type map recvbuf keeps its bytes: GAP, as in want */
    CHECK(!memcmp(out, want, bytes), "%s on %s: allreduce wrong (or wrote a gap)", c->name,
          cname);

    memset(out, GAP, bytes);
    fill(c, out, members[me], me);
    MPI_Allreduce(MPI_IN_PLACE, out, COUNT, dt, op, comm);
    CHECK(!memcmp(out, want, bytes), "%s on %s: allreduce in place wrong", c->name, cname);

    memset(out, GAP, bytes);
    MPI_Reduce(in, out, COUNT, dt, op, root, comm);
    CHECK(me == root ? !memcmp(out, want, bytes) : !memcmp(out, gaps, bytes),
          "%s on %s: reduce to %d: %s", c->name, cname, root,
          me == root ? "wrong result" : "recvbuf written on a non-root rank");

    memset(out, GAP, bytes);
    fill(c, out, members[me], me);
    MPI_Reduce(me == 0 ? MPI_IN_PLACE : out, me == 0 ? out : NULL, COUNT, dt, op, 0, comm);
    CHECK(me != 0 || !memcmp(out, want, bytes), "%s on %s: reduce in place wrong", c->name,
          cname);
    memset(tmp, GAP, bytes);
    fill(c, tmp, members[me], me);
    CHECK(!memcmp(in, tmp, bytes), "%s on %s: sendbuf changed", c->name, cname);
    free(in);
    free(out);
    free(want);
    free(tmp);
    free(gaps);
}

static void run_all(MPI_Comm comm, const char *cname)
{
    int n, wr = t_rank;
    MPI_Comm_size(comm, &n);
    int *members = malloc((size_t)n * sizeof *members);
    MPI_Allgather(&wr, 1, MPI_INT, members, 1, MPI_INT, comm);
    for (size_t c = 0; c < NCASES; c++)
        run_case(&cases[c], comm, members, n, cname);
    free(members);
}

/* The intercommunicator between the halves: each side gets the sum of the
 * other side's contributions (MPI-3.1 Sec. 5.9.6). */
static void run_intercomm(MPI_Comm half, int low)
{
    MPI_Comm inter;
    int in[COUNT], out[COUNT], want[COUNT] = {0}, half_size = t_size / 2;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? half_size : 0, 77, &inter);
    for (int k = 0; k < COUNT; k++)
        in[k] = t_rank * 100 + k;
    for (int w = low ? half_size : 0; w < (low ? t_size : half_size); w++)
        for (int k = 0; k < COUNT; k++)
            want[k] += w * 100 + k;
    MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, inter);
    CHECK(!memcmp(out, want, sizeof out), "intercommunicator allreduce wrong");
    MPI_Comm_free(&inter);
}

static void make_types(void)
{
    MPI_Datatype v;
    int bl[3] = {2, 1, 1}, idx_bl[2] = {2, 2}, idx_disp[2] = {0, 3};
    MPI_Aint disp[3] = {0, 12, 20};
    MPI_Datatype u32[3] = {MPI_UINT32_T, MPI_UINT32_T, MPI_UINT32_T};
    MPI_Type_contiguous(4, MPI_UINT32_T, &mat_type[CONTIG]);
    MPI_Type_vector(4, 1, 2, MPI_UINT32_T, &v);
    MPI_Type_create_resized(v, 0, 32, &mat_type[VECTOR]);
    MPI_Type_free(&v);
    MPI_Type_create_struct(3, bl, disp, u32, &mat_type[STRUCT]);
    MPI_Type_indexed(2, idx_bl, idx_disp, MPI_UINT32_T, &v);
    MPI_Type_create_resized(v, 0, 24, &mat_type[INDEXED]);
    MPI_Type_free(&v);
    mat_type[PACKED] = MPI_UINT64_T;
    for (int l = 0; l < NLAYOUTS; l++) {
        if (l != PACKED)
            MPI_Type_commit(&mat_type[l]);
        MPI_Op_create(mat_fns[l], 0, &mat_op[l]);
    }
    MPI_Op_create(fn_isum, 1, &op_isum);
    MPI_Op_create(fn_keep_left, 0, &op_keep_left);
}

static void free_types(void)
{
    for (int l = 0; l < NLAYOUTS; l++) {
        if (l != PACKED)
            MPI_Type_free(&mat_type[l]);
        MPI_Op_free(&mat_op[l]);
    }
    MPI_Op_free(&op_isum);
    MPI_Op_free(&op_keep_left);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    make_types();
    MPI_Comm dup, half, reversed, evens = MPI_COMM_NULL;
    int low = t_rank < t_size / 2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, low, t_rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - 1 - t_rank, &reversed);
    MPI_Group world_group, even_group;
    int neven = (t_size + 1) / 2, *even = malloc((size_t)neven * sizeof *even);
    for (int i = 0; i < neven; i++)
        even[i] = 2 * i;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, neven, even, &even_group);
    if (t_rank % 2 == 0)
        MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 5, &evens);

    bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    if (!quick) {
        run_all(reversed, "the reversed world");
        run_all(dup, "a duplicate");
        run_all(half, "a half");
        run_all(MPI_COMM_SELF, "MPI_COMM_SELF");
        if (evens != MPI_COMM_NULL)
            run_all(evens, "the even ranks (MPI_Comm_create_group)");
        if (t_size >= 2)
            run_intercomm(half, low);
    }
    CHECK(bad_handles == 0, "%d user function calls saw another datatype handle", bad_handles);
    CHECK(bad_operands == 0, "%d user function calls saw operands out of rank order (or "
          "not from the program)", bad_operands);

    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    MPI_Comm_free(&reversed);
    if (evens != MPI_COMM_NULL)
        MPI_Comm_free(&evens);
    MPI_Group_free(&even_group);
    MPI_Group_free(&world_group);
    free(even);
    free_types();
    return t_finish("layer_comms");
}

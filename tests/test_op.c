/* test_op.c: data types and reduction operators (treduce.h, docs/OPERATORS.md):
 * each (type, op) against a reference computed here, plus anchors; refused
 * pairs and parse errors; count 0; user ops and ctx; combine LEFT/RIGHT; the
 * checkers catch a swapped, missing or duplicated contribution in a fold of 9
 * ranks and a misplaced segment; bad arguments give TRD_EINVAL, no crash. */
#include "testutil.h"

#include "runtime/op.h"

#define P ((uint64_t)TRD_MATRIX_P)

static bool is_int(trd_type t) { return t <= TRD_UINT64; }

/* The word truncated to t's width (then sign-extended for int32). */
static uint64_t norm(trd_type t, uint64_t u)
{
    return t == TRD_INT32 ? (uint64_t)(int64_t)(int32_t)(uint32_t)u : u;
}

/* Element i of a buffer of type t, written from a word u (integers) or a double f
 * (floats); read back as a word (int32 sign-extended) or a double. */
typedef struct { uint64_t u; double f; } elem;

static void store(trd_type t, void *buf, size_t i, uint64_t u, double f)
{
    int32_t i32 = (int32_t)(uint32_t)u;
    float f32 = (float)f;
    const void *src = t == TRD_INT32 ? (void *)&i32 : t == TRD_FLOAT ? (void *)&f32
                    : t == TRD_DOUBLE ? (void *)&f : (void *)&u;
    memcpy((char *)buf + trd_type_size(t) * i, src, trd_type_size(t));
}

static elem load(trd_type t, const void *buf, size_t i)
{
    union { int32_t i32; float f32; uint64_t u; double f; } v = {.u = 0};
    memcpy(&v, (const char *)buf + trd_type_size(t) * i, trd_type_size(t));
    return t == TRD_INT32 ? (elem){(uint64_t)(int64_t)v.i32, 0}
         : t == TRD_FLOAT ? (elem){0, v.f32} : (elem){v.u, v.f};
}

/* The reference: a (+) b for integer words of type t. */
static uint64_t ref_int(trd_op_kind k, trd_type t, uint64_t a, uint64_t b)
{
    bool less = t == TRD_UINT64 ? a < b : (int64_t)a < (int64_t)b;
    switch (k) {
    case TRD_OP_SUM: return norm(t, a + b);
    case TRD_OP_PROD: return norm(t, a * b);
    case TRD_OP_MIN: return less ? a : b;
    case TRD_OP_MAX: return less ? b : a;
    case TRD_OP_LAND: return a != 0 && b != 0;
    case TRD_OP_LOR: return a != 0 || b != 0;
    case TRD_OP_BAND: return a & b;
    case TRD_OP_BOR: return a | b;
    case TRD_OP_BXOR: return norm(t, a ^ b);
    }
    return 0xdead;
}

/* Special values (as words or doubles) paired all-with-all, then NRAND
 * random pairs (a quarter of the integers zero, floats in [-100, 100)). */
static const uint64_t int_special[] = {0, 1, (uint64_t)-1, 2, (uint64_t)-2, 7, (uint64_t)-3,
                                       INT32_MAX, (uint64_t)INT32_MIN, INT64_MAX,
                                       (uint64_t)INT64_MIN, 0x5555555555555555u,
                                       0xfffffffe00000001u, (uint64_t)1 << 32};
static const double float_special[] = {0.0, -0.0, 1.0, -1.0, 0.5,
                                       -2.5, 3.25, 1e-3, 1e30, -1e30};
#define NINT_SPECIAL (sizeof int_special / sizeof int_special[0])
#define NFLOAT_SPECIAL (sizeof float_special / sizeof float_special[0])
#define NRAND 1000

static size_t fill_inputs(trd_type t, void *in, void *io)
{
    size_t n = 0, ns = is_int(t) ? NINT_SPECIAL : NFLOAT_SPECIAL;
    for (size_t i = 0; i < ns; i++)
        for (size_t j = 0; j < ns; j++, n++) {
            store(t, in, n, norm(t, int_special[i]), float_special[i % NFLOAT_SPECIAL]);
            store(t, io, n, norm(t, int_special[j]), float_special[j % NFLOAT_SPECIAL]);
        }
    uint64_t s = 42 + (uint64_t)t;
    for (size_t r = 0; r < NRAND; r++, n++)
        for (int side = 0; side < 2; side++) {
            s = s * 6364136223846793005u + 1442695040888963407u; /* an LCG */
            uint64_t u = s >> 11, v = s >> 40;
            uint64_t w = v % 4 == 0 ? 0 : v % 3 == 0 ? u % 1000 - 500 : u * 0x9e3779b9u;
            store(t, side ? io : in, n, norm(t, w), (double)(u % 200000) / 1000.0 - 100.0);
        }
    return n;
}

/* Element i of io after applying k on t, against the reference. */
static void check_element(trd_op_kind k, trd_type t, const void *in, const void *io0,
                          const void *io, size_t i)
{
    elem a = load(t, in, i), b = load(t, io0, i), got = load(t, io, i);
    const char *tn = trd_type_name(t), *kn = trd_op_kind_name(k);
    if (is_int(t)) {
        uint64_t want = ref_int(k, t, a.u, b.u);
        TU_CHECK(got.u == want, "%s %s [%zu]: %#llx (+) %#llx = %#llx, want %#llx", kn, tn,
                 i, (unsigned long long)a.u, (unsigned long long)b.u,
                 (unsigned long long)got.u, (unsigned long long)want);
    } else {
        /* in double (exact for + and * of two floats), rounded back to t */
        double x = a.f, y = b.f, want = k == TRD_OP_SUM ? x + y : k == TRD_OP_PROD ? x * y
                                      : k == TRD_OP_MIN ? (x < y ? x : y) : (x > y ? x : y);
        want = t == TRD_FLOAT ? (double)(float)want : want;
        TU_CHECK(memcmp(&got.f, &want, sizeof want) == 0 && !isnan(want),
                 "%s %s [%zu]: %g (+) %g = %g, want %g", kn, tn, i, a.f, b.f, got.f, want);
    }
}

static void builtin_matches_reference(void **state)
{
    (void)state;
    enum { CAP = NINT_SPECIAL * NINT_SPECIAL + NRAND };
    static uint64_t in[CAP], io[CAP], in0[CAP], io0[CAP];
    int tested = 0;
    for (int ti = 0; ti < TRD_TYPE_COUNT; ti++)
        for (int ki = 0; ki < TRD_OP_KIND_COUNT; ki++) {
            trd_type t = (trd_type)ti;
            trd_op_kind k = (trd_op_kind)ki;
            trd_op *op = NULL;
            if (!is_int(t) && k >= TRD_OP_LAND)
                continue;
            TU_CHECK(trd_op_builtin(&op, k, t) == TRD_OK, "%s", trd_errmsg());
            assert_true(trd_op_is_commutative(op));
            assert_int_equal(trd_op_elem_size(op), trd_type_size(t));
            size_t n = fill_inputs(t, in, io);
            memcpy(in0, in, sizeof in);
            memcpy(io0, io, sizeof io);
            assert_int_equal(trd_op_apply(op, in, io, (int64_t)n), TRD_OK);
            assert_memory_equal(in, in0, sizeof in); /* in is only read */
            for (size_t i = 0; i < n; i++)
                check_element(k, t, in0, io0, io, i);
            trd_op_free(op);
            tested++;
        }
    assert_int_equal(tested, 3 * 9 + 2 * 4);
}

static void integer_anchors(void **state)
{
    (void)state;
    /* (op, type, in, inout, result); -1 stands for UINT64_MAX on uint64 */
#define R(k, t, a, b, want) {TRD_OP_##k, TRD_##t, a, b, want}
    static const struct { trd_op_kind k; trd_type t; int64_t a, b, want; } rows[] = {
        R(SUM, INT32, INT32_MAX, 1, INT32_MIN), R(PROD, INT32, 1 << 16, 1 << 16, 0),
        R(PROD, INT32, INT32_MIN, -1, INT32_MIN), R(SUM, INT64, INT64_MAX, 1, INT64_MIN),
        R(PROD, INT64, (int64_t)1 << 62, 4, 0), R(SUM, UINT64, -1, 2, 1),
        R(PROD, UINT64, -1, -1, 1), R(MAX, UINT64, -1, 1, -1), R(MIN, INT32, -5, 3, -5),
        R(MAX, INT64, -5, -9, -5), R(LAND, INT64, -4, 8, 1), R(LAND, INT32, 5, 0, 0),
        R(LOR, INT32, 0, 0, 0), R(LOR, UINT64, 0, (int64_t)1 << 40, 1),
        R(BXOR, INT32, -1, 0xff, -256)};
#undef R
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        uint64_t in[1], io[1];
        trd_op *op = NULL;
        assert_int_equal(trd_op_builtin(&op, rows[r].k, rows[r].t), TRD_OK);
        store(rows[r].t, in, 0, (uint64_t)rows[r].a, 0);
        store(rows[r].t, io, 0, (uint64_t)rows[r].b, 0);
        assert_int_equal(trd_op_apply(op, in, io, 1), TRD_OK);
        TU_CHECK(load(rows[r].t, io, 0).u == (uint64_t)rows[r].want, "row %zu", r);
        trd_op_free(op);
    }
}

static void names_parse_and_mismatch(void **state)
{
    (void)state;
    static const size_t sizes[] = {4, 8, 8, 4, 8};
    static const char *const tn[] = {"int32", "int64", "uint64", "float", "double"};
    static const char *const on[] = {"sum", "prod", "min", "max", "land",
                                     "lor", "band", "bor", "bxor"};
    static int dummy;
    assert_true(TRD_TYPE_COUNT == 5 && TRD_OP_KIND_COUNT == 9);
    for (int t = 0; t < TRD_TYPE_COUNT; t++) {
        trd_type got = (trd_type)99;
        assert_int_equal(trd_type_size((trd_type)t), sizes[t]);
        assert_string_equal(trd_type_name((trd_type)t), tn[t]);
        assert_true(trd_type_parse(tn[t], &got) == TRD_OK && got == (trd_type)t);
        assert_int_equal(trd_type_parse("int16", &got), TRD_EINVAL); /* lists all */
        assert_int_equal(got, t);
        TU_CHECK(strstr(trd_errmsg(), "'int16'") && strstr(trd_errmsg(), tn[t]), "%s",
                 trd_errmsg());
    }
    for (int k = 0; k < TRD_OP_KIND_COUNT; k++) {
        trd_op_kind got = (trd_op_kind)99;
        assert_string_equal(trd_op_kind_name((trd_op_kind)k), on[k]);
        assert_true(trd_op_parse(on[k], &got) == TRD_OK && got == (trd_op_kind)k);
        assert_int_equal(trd_op_parse("SUM", &got), TRD_EINVAL);
        assert_int_equal(got, k);
        TU_CHECK(strstr(trd_errmsg(), "'SUM'") && strstr(trd_errmsg(), on[k]), "%s",
                 trd_errmsg());
        for (int t = TRD_FLOAT; k >= TRD_OP_LAND && t <= TRD_DOUBLE; t++) {
            trd_op *op = (trd_op *)(void *)&dummy;
            assert_int_equal(trd_op_builtin(&op, (trd_op_kind)k, (trd_type)t), TRD_EINVAL);
            assert_null(op);
            char a[32], b[32];
            snprintf(a, sizeof a, "operator '%s'", on[k]);
            snprintf(b, sizeof b, "type '%s'", tn[t]);
            TU_CHECK(strstr(trd_errmsg(), a) && strstr(trd_errmsg(), b), "%s",
                     trd_errmsg());
        }
    }
    assert_null(trd_type_name((trd_type)5));
    assert_null(trd_op_kind_name((trd_op_kind)-1));
    assert_int_equal(trd_type_size((trd_type)-1), 0);
}

struct scale_ctx {
    int64_t factor, calls, elems;
};

/* inout = factor * in + inout on int64 elements. */
static void scale_add(const void *in, void *inout, int64_t count, void *ctx)
{
    struct scale_ctx *c = ctx;
    const int64_t *a = in;
    int64_t *b = inout;
    c->calls++;
    c->elems += count;
    for (int64_t i = 0; i < count; i++)
        b[i] += c->factor * a[i];
}

static void count_zero_and_user_ctx(void **state)
{
    (void)state;
    struct scale_ctx ctx = {3, 0, 0};
    trd_op *user = NULL, *sum = NULL;
    assert_int_equal(trd_op_user(&user, scale_add, 8, false, &ctx), TRD_OK);
    assert_int_equal(trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE), TRD_OK);
    assert_true(!trd_op_is_commutative(user) && trd_op_elem_size(user) == 8);
    int64_t in[4] = {1, 2, 3, -4}, io[4] = {10, 20, 30, 40}, want[4] = {13, 26, 39, 28};
    for (int side = 0; side < 2; side++) { /* count 0: no call, nothing written */
        assert_int_equal(trd_op_apply(user, NULL, NULL, 0), TRD_OK);
        assert_int_equal(trd_op_apply(sum, in, io, 0), TRD_OK);
        assert_int_equal(trd_op_combine(user, (trd_side)side, io, in, 0), TRD_OK);
        assert_int_equal(trd_op_combine(sum, (trd_side)side, NULL, NULL, 0), TRD_OK);
    }
    assert_true(ctx.calls == 0 && io[0] == 10 && in[0] == 1);
    assert_int_equal(trd_op_apply(user, in, io, 4), TRD_OK);
    assert_true(ctx.calls == 1 && ctx.elems == 4);
    assert_memory_equal(io, want, sizeof want);
    trd_op_free(user);
    assert_int_equal(trd_op_user(&user, scale_add, 8, true, &ctx), TRD_OK);
    assert_true(trd_op_is_commutative(user));
    trd_op_free(user), trd_op_free(sum);
}

/* The test's own 2x2 product mod p. */
static trd_matrix2x2 naive_mul(trd_matrix2x2 x, trd_matrix2x2 y)
{
    uint64_t a = x.a, b = x.b, c = x.c, d = x.d;
    return (trd_matrix2x2){(uint32_t)((a * y.a % P + b * y.c % P) % P),
                           (uint32_t)((a * y.b % P + b * y.d % P) % P),
                           (uint32_t)((c * y.a % P + d * y.c % P) % P),
                           (uint32_t)((c * y.b % P + d * y.d % P) % P)};
}

static void combine_on_matrices(void **state)
{
    (void)state;
    trd_op *op = NULL;
    assert_int_equal(trd_op_matrix2x2(&op), TRD_OK);
    enum { N = 5000 }; /* 80 kB: more than one chunk of a RIGHT combine */
    trd_matrix2x2 *m3 = tu_alloc(N, sizeof *m3), *m4 = tu_alloc(N, sizeof *m4);
    trd_matrix2x2 *acc = tu_alloc(N, sizeof *acc), *in = tu_alloc(N, sizeof *in);
    assert_int_equal(trd_matrix2x2_fill(m3, N, 3), TRD_OK);
    assert_int_equal(trd_matrix2x2_fill(m4, N, 4), TRD_OK);
    for (int side = 0; side < 2; side++) { /* M3 x M4 both ways */
        memcpy(acc, side == TRD_SIDE_LEFT ? m4 : m3, N * sizeof *acc);
        memcpy(in, side == TRD_SIDE_LEFT ? m3 : m4, N * sizeof *in);
        assert_int_equal(trd_op_combine(op, (trd_side)side, acc, in, N), TRD_OK);
        for (int i = 0; i < N; i++) {
            trd_matrix2x2 want = naive_mul(m3[i], m4[i]), wrong = naive_mul(m4[i], m3[i]);
            TU_CHECK(memcmp(&acc[i], &want, sizeof want) == 0, "side %d [%d]", side, i);
            TU_CHECK(memcmp(&want, &wrong, sizeof want) != 0, "M3, M4 commute at [%d]", i);
        }
        if (side == TRD_SIDE_LEFT) /* LEFT only reads in */
            assert_memory_equal(in, m3, N * sizeof *in);
    }
    free(m3), free(m4), free(acc), free(in);
    trd_op_free(op);
}

/* x (+) y = 2x + y on elements of BIG int64: non-commutative, and larger
 * than a RIGHT-combine chunk. */
enum { BIG = 5000 };
static void twice_plus(const void *in, void *inout, int64_t count, void *ctx)
{
    (void)ctx;
    const int64_t *a = in;
    int64_t *b = inout;
    for (int64_t i = 0; i < count * BIG; i++)
        b[i] = 2 * a[i] + b[i];
}

static void combine_big_elements_and_builtins(void **state)
{
    (void)state;
    trd_op *op = NULL, *prod = NULL, *isum = NULL;
    assert_int_equal(trd_op_user(&op, twice_plus, BIG * 8, false, NULL), TRD_OK);
    assert_int_equal(trd_op_builtin(&prod, TRD_OP_PROD, TRD_DOUBLE), TRD_OK);
    assert_int_equal(trd_op_builtin(&isum, TRD_OP_SUM, TRD_INT64), TRD_OK);
    int64_t *acc = tu_alloc(2 * BIG, 8), *in = tu_alloc(2 * BIG, 8);
    for (int side = 0; side < 2; side++) {
        for (int64_t i = 0; i < 2 * BIG; i++)
            acc[i] = i, in[i] = 7 * i + 1;
        assert_int_equal(trd_op_combine(op, (trd_side)side, acc, in, 2), TRD_OK);
        for (int64_t i = 0; i < 2 * BIG; i++) /* LEFT: 2 in + acc; RIGHT: 2 acc + in */
            TU_CHECK(acc[i] == (side == TRD_SIDE_LEFT ? 15 * i + 2 : 9 * i + 1),
                     "side %d [%lld] = %lld", side, (long long)i, (long long)acc[i]);
        double da[3] = {1.5, -2, 1e10}, db[3] = {4, 0.25, 3e-7};
        int64_t ia[2] = {INT64_MAX, -8}, ib[2] = {2, 5};
        assert_int_equal(trd_op_combine(prod, (trd_side)side, da, db, 3), TRD_OK);
        assert_int_equal(trd_op_combine(isum, (trd_side)side, ia, ib, 2), TRD_OK);
        assert_true(da[0] == 6.0 && da[1] == -0.5 && da[2] == 1e10 * 3e-7);
        assert_true(ia[0] == INT64_MIN + 1 && ia[1] == -3);
    }
    trd_op_free(op), trd_op_free(prod), trd_op_free(isum);
    free(acc), free(in);
}

#define NEL 3 /* elements per buffer in the checker tests */

/* The checker's values: rank first's fill when first == last, else the
 * expected result of first..last. */
static void values(bool matrix, void *buf, int64_t count, int64_t first, int64_t last)
{
    trd_status st = first == last
                        ? (matrix ? trd_matrix2x2_fill(buf, count, first)
                                  : trd_interval_fill(buf, count, first))
                        : (matrix ? trd_matrix2x2_expected(buf, count, first, last)
                                  : trd_interval_expected(buf, count, first, last));
    assert_int_equal(st, TRD_OK);
}

/* A sequential fold of the ranks order[0..n) in that order, NEL elements:
 * from the back with LEFT combines, or from the front with RIGHT ones. */
static void fold(const trd_op *op, bool matrix, const int64_t *order, int n, bool right,
                 void *acc)
{
    int64_t in[NEL * 2];
    for (int k = 0; k < n; k++) {
        int64_t r = order[right ? k : n - 1 - k];
        values(matrix, k == 0 ? acc : (void *)in, NEL, r, r);
        trd_side side = right ? TRD_SIDE_RIGHT : TRD_SIDE_LEFT;
        if (k > 0)
            assert_int_equal(trd_op_combine(op, side, acc, in, NEL), TRD_OK);
    }
}

static void checker_detects(bool matrix)
{
    trd_op *op = NULL;
    assert_int_equal(matrix ? trd_op_matrix2x2(&op) : trd_op_interval(&op), TRD_OK);
    assert_false(trd_op_is_commutative(op));
    assert_int_equal(trd_op_elem_size(op), 16);
    int64_t want[NEL * 2], got[NEL * 2];
    trd_matrix2x2 m[NEL], p[NEL]; /* expected(0, 8): the product of the fills... */
    values(matrix, want, NEL, 0, 8);
    values(true, p, NEL, 0, 0);
    for (int r = 1; r < 9; r++) {
        values(true, m, NEL, r, r);
        for (int i = 0; i < NEL; i++)
            p[i] = naive_mul(p[i], m[i]);
    }
    for (int64_t i = 0; i < NEL; i++) /* ... or [i 2^32, 8 + i 2^32] */
        TU_CHECK(matrix ? memcmp(&p[i], (const char *)want + 16 * i, 16) == 0
                        : want[2 * i] == (i << 32) && want[2 * i + 1] == 8 + (i << 32),
                 "expected [%lld]", (long long)i);
    static const int64_t good[] = {0, 1, 2, 3, 4, 5, 6, 7, 8},
                         swapped[] = {0, 1, 2, 4, 3, 5, 6, 7, 8},
                         missing[] = {0, 1, 2, 3, 4, 6, 7, 8},
                         duplicated[] = {0, 1, 2, 3, 4, 5, 5, 6, 7, 8};
    static const struct { const int64_t *order; int n; bool ok; } cases[] = {
        {good, 9, true}, {swapped, 9, false}, {missing, 8, false}, {duplicated, 10, false}};
    for (size_t c = 0; c < 4; c++)
        for (int right = 0; right < 2; right++) {
            fold(op, matrix, cases[c].order, cases[c].n, right, got);
            bool same = memcmp(got, want, sizeof got) == 0;
            TU_CHECK(same == cases[c].ok, "%s case %zu right %d",
                     matrix ? "matrix" : "interval", c, right);
            for (int i = 0; !matrix && !cases[c].ok && i < 2 * NEL; i++)
                TU_CHECK(got[i] == TRD_INTERVAL_POISON, "case %zu [%d] not poison", c, i);
        }
    /* a misplaced segment: rank 3's element 0 against rank 4's element 1 */
    int64_t a[NEL * 2], b[NEL * 2], ab[2];
    values(matrix, a, NEL, 3, 3);
    values(matrix, b, NEL, 4, 4);
    values(matrix, ab, 1, 3, 4);
    assert_int_equal(trd_op_apply(op, a, b + 2, 1), TRD_OK);
    assert_memory_not_equal(b + 2, ab, 16);
    assert_int_equal(trd_op_apply(op, a, b, 1), TRD_OK);
    assert_memory_equal(b, ab, 16);
    trd_op_free(op);
}

static void matrix_checker(void **state) { (void)state, checker_detects(true); }
static void interval_checker(void **state) { (void)state, checker_detects(false); }

static void interval_semantics(void **state)
{
    (void)state;
    trd_op *op = NULL;
    assert_int_equal(trd_op_interval(&op), TRD_OK);
    assert_true(TRD_INTERVAL_POISON == -1);
    static const struct { trd_interval in, io, want; } cases[] = {
        {{0, 3}, {4, 9}, {0, 9}},    {{5, 5}, {6, 6}, {5, 6}},    /* adjacent */
        {{0, 3}, {5, 9}, {-1, -1}},  {{0, 4}, {4, 9}, {-1, -1}},  /* gap, overlap */
        {{4, 9}, {0, 3}, {-1, -1}},  {{3, 2}, {3, 4}, {-1, -1}},  /* reversed, lo > hi */
        {{-1, -1}, {0, 3}, {-1, -1}}, {{0, 3}, {-1, -1}, {-1, -1}}, /* poison stays */
        {{-1, -1}, {-1, -1}, {-1, -1}}, {{-2, -2}, {-1, -1}, {-1, -1}},
        {{0, INT64_MAX}, {INT64_MIN, 0}, {-1, -1}}}; /* no overflow at b + 1 */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trd_interval io = cases[c].io;
        assert_int_equal(trd_op_apply(op, &cases[c].in, &io, 1), TRD_OK);
        TU_CHECK(io.lo == cases[c].want.lo && io.hi == cases[c].want.hi,
                 "case %zu: [%lld, %lld]", c, (long long)io.lo, (long long)io.hi);
    }
    trd_op_free(op);
}

/* Expects TRD_EINVAL with a message containing needle. */
#define EXPECT_EINVAL(call, needle)                                                    \
    do {                                                                               \
        trd_status st_ = (call);                                                       \
        TU_CHECK(st_ == TRD_EINVAL && strstr(trd_errmsg(), needle), "%s: status %d, "  \
                 "message '%s' (want '%s')", #call, st_, trd_errmsg(), needle);        \
    } while (0)

/* A user operator is called once per combine, whatever the size and the
 * side, also when the accumulator is read from another buffer
 * (trd_op_combine_into: the runtime's lazy input): an operator may cost
 * per call (an offloaded combine; the bench's sleep-sum). */
typedef struct counting {
    int64_t calls;
} counting;

static void counted_sub(const void *in, void *inout, int64_t count, void *ctx)
{
    const double *a = in;
    double *b = inout;
    ((counting *)ctx)->calls++;
    for (int64_t i = 0; i < count; i++)
        b[i] = a[i] - b[i]; /* non-commutative: in (+) inout = in - inout */
}

static void user_op_one_call_per_combine(void **state)
{
    (void)state;
    enum { N = 100000 }; /* 800 KB: many built-in chunks */
    static double acc[N], in[N], out[N];
    counting k = {0};
    trd_op *op = NULL;
    assert_int_equal(trd_op_user(&op, counted_sub, sizeof(double), false, &k), TRD_OK);
    for (int side = TRD_SIDE_LEFT; side <= TRD_SIDE_RIGHT; side++)
        for (int into = 0; into < 2; into++) {
            for (int i = 0; i < N; i++) {
                acc[i] = 3.0 * i;
                in[i] = 1.0 * i;
            }
            k.calls = 0;
            if (into)
                assert_int_equal(trd_op_combine_into(op, (trd_side)side, out, acc, in, N), TRD_OK);
            else
                assert_int_equal(trd_op_combine(op, (trd_side)side, acc, in, N), TRD_OK);
            const double *res = into ? out : acc;
            /* left: in (+) acc = i - 3i; right: acc (+) in = 3i - i */
            double sign = side == TRD_SIDE_LEFT ? -1.0 : 1.0;
            TU_CHECK(k.calls == 1, "side %d into %d: %lld calls", side, into,
                     (long long)k.calls);
            TU_CHECK(res[N - 1] == sign * 2.0 * (N - 1) && res[7] == sign * 14.0,
                     "side %d into %d: wrong value %g", side, into, res[N - 1]);
            TU_CHECK(!into || acc[N - 1] == 3.0 * (N - 1), "combine_into wrote acc");
        }
    trd_op_free(op);
}

static void bad_arguments(void **state)
{
    (void)state;
    static int dummy;
    trd_op *ops[3] = {(void *)&dummy, (void *)&dummy, (void *)&dummy}, *sum = NULL;
    double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    trd_matrix2x2 m[2];
    trd_interval iv[2];
    trd_type t;
    trd_op_kind k;
    EXPECT_EINVAL(trd_op_builtin(NULL, TRD_OP_SUM, TRD_INT32), "out");
    EXPECT_EINVAL(trd_op_builtin(&ops[0], (trd_op_kind)9, TRD_INT32), "kind = 9");
    EXPECT_EINVAL(trd_op_builtin(&ops[1], TRD_OP_SUM, (trd_type)-1), "type = -1");
    EXPECT_EINVAL(trd_op_user(&ops[2], NULL, 8, true, NULL), "fn");
    assert_true(!ops[0] && !ops[1] && !ops[2]);
    EXPECT_EINVAL(trd_op_user(&ops[0], scale_add, 0, true, NULL), "elem_size = 0");
    EXPECT_EINVAL(trd_op_user(NULL, scale_add, 8, true, NULL), "out");
    EXPECT_EINVAL(trd_op_matrix2x2(NULL), "out");
    EXPECT_EINVAL(trd_op_interval(NULL), "out");
    EXPECT_EINVAL(trd_type_parse(NULL, &t), "(null)");
    EXPECT_EINVAL(trd_type_parse("int32", NULL), "out");
    EXPECT_EINVAL(trd_op_parse(NULL, &k), "(null)");
    EXPECT_EINVAL(trd_op_parse("sum", NULL), "out");
    assert_int_equal(trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE), TRD_OK);
    EXPECT_EINVAL(trd_op_apply(NULL, a, b, 4), "op");
    EXPECT_EINVAL(trd_op_apply(sum, NULL, b, 4), "in");
    EXPECT_EINVAL(trd_op_apply(sum, a, NULL, 4), "inout");
    EXPECT_EINVAL(trd_op_apply(sum, a, b, -1), "count = -1");
    EXPECT_EINVAL(trd_op_apply(sum, a, b, INT64_MAX), "overflow");
    EXPECT_EINVAL(trd_op_apply(sum, a, a + 1, 2), "overlap");
    EXPECT_EINVAL(trd_op_combine(NULL, TRD_SIDE_LEFT, a, b, 4), "op");
    EXPECT_EINVAL(trd_op_combine(sum, TRD_SIDE_RIGHT, NULL, b, 4), "NULL buffer");
    EXPECT_EINVAL(trd_op_combine(sum, TRD_SIDE_RIGHT, a, NULL, 4), "NULL buffer");
    EXPECT_EINVAL(trd_op_combine(sum, (trd_side)2, a, b, 4), "side = 2");
    EXPECT_EINVAL(trd_op_combine(sum, TRD_SIDE_LEFT, a, a, 4), "overlap");
    assert_true(a[0] == 1 && a[3] == 4 && b[0] == 5 && b[3] == 8); /* nothing written */
    EXPECT_EINVAL(trd_matrix2x2_fill(NULL, 2, 0), "buf");
    EXPECT_EINVAL(trd_matrix2x2_fill(m, -1, 0), "count = -1");
    EXPECT_EINVAL(trd_matrix2x2_fill(m, 2, -3), "-3");
    EXPECT_EINVAL(trd_matrix2x2_expected(m, 2, 5, 4), "5..4");
    EXPECT_EINVAL(trd_interval_fill(NULL, 2, 0), "buf");
    EXPECT_EINVAL(trd_interval_fill(iv, 2, (int64_t)1 << 32), "4294967296");
    EXPECT_EINVAL(trd_interval_fill(iv, (int64_t)1 << 31, 0), "2147483648");
    EXPECT_EINVAL(trd_interval_expected(iv, 2, -1, 3), "-1..3");
    assert_int_equal(trd_matrix2x2_fill(NULL, 0, 0), TRD_OK); /* count 0 */
    assert_int_equal(trd_interval_expected(NULL, 0, 2, 2), TRD_OK);
    assert_true(!trd_op_is_commutative(NULL) && trd_op_elem_size(NULL) == 0);
    trd_op_free(NULL);
    trd_op_free(sum);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_parse_and_mismatch),
        cmocka_unit_test(builtin_matches_reference),
        cmocka_unit_test(integer_anchors),
        cmocka_unit_test(count_zero_and_user_ctx),
        cmocka_unit_test(combine_on_matrices),
        cmocka_unit_test(combine_big_elements_and_builtins),
        cmocka_unit_test(matrix_checker),
        cmocka_unit_test(interval_checker),
        cmocka_unit_test(interval_semantics),
        cmocka_unit_test(user_op_one_call_per_combine),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

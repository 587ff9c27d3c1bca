/* layer_types.c: every predefined C datatype with every predefined operator
 * MPI-3.1 Sec. 5.9.2 defines on it, through MPI_Allreduce and MPI_Reduce.
 *
 * For each (type, operator): allreduce into another buffer (the result
 * checked against the rank-order fold computed here, and bitwise the same
 * on every rank), allreduce MPI_IN_PLACE, reduce to the last rank (the
 * other ranks' recvbuf untouched), reduce MPI_IN_PLACE at rank 0 with
 * recvbuf NULL elsewhere, count 0 (nothing written) and count 1; the send
 * buffers are checked unchanged.  The values are small integers, so every
 * result is exact in every type and any combine order; unsigned types see
 * the negative ones modulo 2^bits (MIN of 64-bit values above 2^63).
 * MINLOC / MAXLOC values tie across ranks, with indices that fall as ranks
 * rise, so "the lower index wins" is not "the lower rank wins".
 *
 * Run without the layer (argument --plain), the MPI library's own results
 * are checked the same way, except where this MPI is known to be wrong (the
 * table below): those are reported, not failed.  With the layer, nothing is
 * tolerated.
 *
 * Then rounding: an allreduce of random doubles, bitwise the same on every
 * rank and within 1e-12 of the fold; MIN and MAX of doubles with -0, +0 and
 * NaNs of several payloads, bitwise the same on every rank.  Rank 0 prints
 * a checksum of the random sum's bits (run_layer.sh compares two runs
 * under TREDUCE_MPI_REPRODUCIBLE=1). */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "layer_test.h"

#define COUNT 7
#define RANDOM_COUNT 1000

enum { SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC, NOPS };
static const char *const op_name[NOPS] = {"SUM",  "PROD", "MIN",  "MAX",    "LAND",  "LOR",
                                          "LXOR", "BAND", "BOR",  "BXOR",   "MINLOC", "MAXLOC"};

static MPI_Op op_handle(int k)
{
    const MPI_Op h[NOPS] = {MPI_SUM,  MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND,   MPI_LOR,
                            MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    return h[k];
}

#define M(k) (1u << (k))
#define OPS_INT (M(SUM) | M(PROD) | M(MIN) | M(MAX) | M(LAND) | M(LOR) | M(LXOR) | M(BAND) | \
                 M(BOR) | M(BXOR))
#define OPS_MULTI (M(SUM) | M(PROD) | M(MIN) | M(MAX) | M(BAND) | M(BOR) | M(BXOR))
#define OPS_FLOAT (M(SUM) | M(PROD) | M(MIN) | M(MAX))
#define OPS_COMPLEX (M(SUM) | M(PROD))
#define OPS_BOOL (M(LAND) | M(LOR) | M(LXOR))
#define OPS_BYTE (M(BAND) | M(BOR) | M(BXOR))
#define OPS_PAIR (M(MINLOC) | M(MAXLOC))

/* Element i of rank r for operator k. */
static long long ival(int r, int i, int k)
{
    static const int factors[5] = {-2, -1, 1, 2, 3}; /* products stay exact */
    switch (k) {
    case PROD: return factors[(r * 3 + i * 2) % 5];
    case LAND: case LOR: case LXOR: return (r + i) % 3 == 0 ? 0 : r + 2 * i + 1;
    case BAND: case BOR: case BXOR: return (long long)(t_hash((uint64_t)r, (uint64_t)i, 7) & 0x7f);
    default: return (r * 7 + i * 5) % 13 - 6;
    }
}

/* The bytes of an element that hold its value (not padding). */
typedef struct tcase {
    const char *name;
    MPI_Datatype dt;
    size_t size;
    unsigned ops;
    void (*fill)(void *buf, int n, int r, int k);
    void (*fold)(void *acc, const void *in, int n, int k);
    struct { unsigned char off, len; } sig[2];
} tcase;

#define INT_FOLD(x, y, k)                                                              \
    (k == SUM    ? (T)((uint64_t)(x) + (uint64_t)(y))                                   \
     : k == PROD ? (T)((uint64_t)(x) * (uint64_t)(y))                                   \
     : k == MIN ? ((x) < (y) ? (x) : (y)) : k == MAX ? ((x) > (y) ? (x) : (y))           \
     : k == LAND ? (T)((x) && (y)) : k == LOR ? (T)((x) || (y))                         \
     : k == LXOR ? (T)(!(x) != !(y)) : k == BAND ? (T)((x) & (y))                        \
     : k == BOR ? (T)((x) | (y)) : (T)((x) ^ (y)))
#define FLOAT_FOLD(x, y, k)                                                            \
    (k == SUM ? (x) + (y) : k == PROD ? (x) * (y) : k == MIN ? ((x) < (y) ? (x) : (y))  \
                                                  : ((x) > (y) ? (x) : (y)))

#define COMPLEX_FOLD(x, y, k) (k == SUM ? (x) + (y) : (x) * (y))
#define BOOL_FOLD(x, y, k) (k == LAND ? (x) && (y) : k == LOR ? (x) || (y) : !(x) != !(y))

#define SCALAR(NAME, TYPE, FOLD, VALUE)                                                \
    static void fill_##NAME(void *b, int n, int r, int k)                              \
    {                                                                                  \
        typedef TYPE T;                                                                \
        T *x = b;                                                                      \
        for (int i = 0; i < n; i++)                                                    \
            x[i] = VALUE;                                                              \
    }                                                                                  \
    static void fold_##NAME(void *a_, const void *b_, int n, int k)                    \
    {                                                                                  \
        typedef TYPE T;                                                                \
        T *a = a_;                                                                     \
        const T *b = b_;                                                               \
        for (int i = 0; i < n; i++)                                                    \
            a[i] = FOLD(a[i], b[i], k);                                                \
    }
#define PAIR(NAME, V)                                                                  \
    typedef struct { V v; int i; } NAME##_t;                                           \
    static void fill_##NAME(void *b, int n, int r, int k)                              \
    {                                                                                  \
        NAME##_t *x = b;                                                               \
        (void)k;                                                                       \
        for (int i = 0; i < n; i++)                                                    \
            x[i] = (NAME##_t){(V)((r + i) % 2), 100 - r};                              \
    }                                                                                  \
    static void fold_##NAME(void *a_, const void *b_, int n, int k)                    \
    {                                                                                  \
        NAME##_t *a = a_;                                                              \
        const NAME##_t *b = b_;                                                        \
        for (int i = 0; i < n; i++) {                                                  \
            bool better = k == MINLOC ? b[i].v < a[i].v : b[i].v > a[i].v;             \
            if (better || (b[i].v == a[i].v && b[i].i < a[i].i))                       \
                a[i] = b[i];                                                           \
        }                                                                              \
    }

#define IVAL(T) (T)ival(r, i, k)
#define CVAL(T) (T)ival(r, i, k) + (T)ival(r + 1, i + 3, k) * I
SCALAR(schar, signed char, INT_FOLD, IVAL(T))
SCALAR(uchar, unsigned char, INT_FOLD, IVAL(T))
SCALAR(short, short, INT_FOLD, IVAL(T))
SCALAR(ushort, unsigned short, INT_FOLD, IVAL(T))
SCALAR(int, int, INT_FOLD, IVAL(T))
SCALAR(uint, unsigned, INT_FOLD, IVAL(T))
SCALAR(long, long, INT_FOLD, IVAL(T))
SCALAR(ulong, unsigned long, INT_FOLD, IVAL(T))
SCALAR(llong, long long, INT_FOLD, IVAL(T))
SCALAR(ullong, unsigned long long, INT_FOLD, IVAL(T))
SCALAR(i8, int8_t, INT_FOLD, IVAL(T))
SCALAR(i16, int16_t, INT_FOLD, IVAL(T))
SCALAR(i32, int32_t, INT_FOLD, IVAL(T))
SCALAR(i64, int64_t, INT_FOLD, IVAL(T))
SCALAR(u8, uint8_t, INT_FOLD, IVAL(T))
SCALAR(u16, uint16_t, INT_FOLD, IVAL(T))
SCALAR(u32, uint32_t, INT_FOLD, IVAL(T))
SCALAR(u64, uint64_t, INT_FOLD, IVAL(T))
SCALAR(aint, MPI_Aint, INT_FOLD, IVAL(T))
SCALAR(offset, MPI_Offset, INT_FOLD, IVAL(T))
SCALAR(count, MPI_Count, INT_FOLD, IVAL(T))
SCALAR(bool, _Bool, BOOL_FOLD, IVAL(T))
SCALAR(byte, unsigned char, INT_FOLD, IVAL(T))
SCALAR(float, float, FLOAT_FOLD, IVAL(T))
SCALAR(double, double, FLOAT_FOLD, IVAL(T))
SCALAR(ldouble, long double, FLOAT_FOLD, IVAL(T))
SCALAR(cfloat, float _Complex, COMPLEX_FOLD, CVAL(float))
SCALAR(cdouble, double _Complex, COMPLEX_FOLD, CVAL(double))
SCALAR(cldouble, long double _Complex, COMPLEX_FOLD, CVAL(long double))
PAIR(float_int, float)
PAIR(double_int, double)
PAIR(long_int, long)
PAIR(int_int, int)
PAIR(short_int, short)
PAIR(ldouble_int, long double)

#define LD 10 /* bytes of an x86 long double's value */
#define ONE(t) {{0, sizeof(t)}, {0, 0}}
#define LD_SIG {{0, LD}, {0, 0}}
#define CLD_SIG {{0, LD}, {sizeof(long double), LD}}
#define CASE(name, dt, T, ops, sig) {#dt, dt, sizeof(T), ops, fill_##name, fold_##name, sig}
#define PAIR_SIG(name, vlen) {{0, vlen}, {offsetof(name##_t, i), sizeof(int)}}
static const tcase cases[] = {
    CASE(schar, MPI_SIGNED_CHAR, signed char, OPS_INT, ONE(char)),
    CASE(uchar, MPI_UNSIGNED_CHAR, unsigned char, OPS_INT, ONE(char)),
    CASE(short, MPI_SHORT, short, OPS_INT, ONE(short)),
    CASE(ushort, MPI_UNSIGNED_SHORT, unsigned short, OPS_INT, ONE(short)),
    CASE(int, MPI_INT, int, OPS_INT, ONE(int)),
    CASE(uint, MPI_UNSIGNED, unsigned, OPS_INT, ONE(int)),
    CASE(long, MPI_LONG, long, OPS_INT, ONE(long)),
    CASE(ulong, MPI_UNSIGNED_LONG, unsigned long, OPS_INT, ONE(long)),
    CASE(llong, MPI_LONG_LONG, long long, OPS_INT, ONE(long long)),
    CASE(llong, MPI_LONG_LONG_INT, long long, OPS_INT, ONE(long long)),
    CASE(ullong, MPI_UNSIGNED_LONG_LONG, unsigned long long, OPS_INT, ONE(long long)),
    CASE(i8, MPI_INT8_T, int8_t, OPS_INT, ONE(int8_t)),
    CASE(i16, MPI_INT16_T, int16_t, OPS_INT, ONE(int16_t)),
    CASE(i32, MPI_INT32_T, int32_t, OPS_INT, ONE(int32_t)),
    CASE(i64, MPI_INT64_T, int64_t, OPS_INT, ONE(int64_t)),
    CASE(u8, MPI_UINT8_T, uint8_t, OPS_INT, ONE(uint8_t)),
    CASE(u16, MPI_UINT16_T, uint16_t, OPS_INT, ONE(uint16_t)),
    CASE(u32, MPI_UINT32_T, uint32_t, OPS_INT, ONE(uint32_t)),
    CASE(u64, MPI_UINT64_T, uint64_t, OPS_INT, ONE(uint64_t)),
    CASE(aint, MPI_AINT, MPI_Aint, OPS_MULTI, ONE(MPI_Aint)),
    CASE(offset, MPI_OFFSET, MPI_Offset, OPS_MULTI, ONE(MPI_Offset)),
    CASE(count, MPI_COUNT, MPI_Count, OPS_MULTI, ONE(MPI_Count)),
    CASE(bool, MPI_C_BOOL, _Bool, OPS_BOOL, ONE(_Bool)),
    CASE(byte, MPI_BYTE, unsigned char, OPS_BYTE, ONE(char)),
    CASE(float, MPI_FLOAT, float, OPS_FLOAT, ONE(float)),
    CASE(double, MPI_DOUBLE, double, OPS_FLOAT, ONE(double)),
    CASE(ldouble, MPI_LONG_DOUBLE, long double, OPS_FLOAT, LD_SIG),
    CASE(cfloat, MPI_C_FLOAT_COMPLEX, float _Complex, OPS_COMPLEX, ONE(float _Complex)),
    CASE(cfloat, MPI_C_COMPLEX, float _Complex, OPS_COMPLEX, ONE(float _Complex)),
    CASE(cdouble, MPI_C_DOUBLE_COMPLEX, double _Complex, OPS_COMPLEX, ONE(double _Complex)),
    CASE(cldouble, MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, OPS_COMPLEX, CLD_SIG),
    CASE(float_int, MPI_FLOAT_INT, float_int_t, OPS_PAIR, PAIR_SIG(float_int, sizeof(float))),
    CASE(double_int, MPI_DOUBLE_INT, double_int_t, OPS_PAIR, PAIR_SIG(double_int, sizeof(double))),
    CASE(long_int, MPI_LONG_INT, long_int_t, OPS_PAIR, PAIR_SIG(long_int, sizeof(long))),
    CASE(int_int, MPI_2INT, int_int_t, OPS_PAIR, PAIR_SIG(int_int, sizeof(int))),
    CASE(short_int, MPI_SHORT_INT, short_int_t, OPS_PAIR, PAIR_SIG(short_int, sizeof(short))),
    CASE(ldouble_int, MPI_LONG_DOUBLE_INT, ldouble_int_t, OPS_PAIR, PAIR_SIG(ldouble_int, LD)),
};
#define NCASES (sizeof cases / sizeof cases[0])

/* (type, operator) pairs this MPI computes wrongly, MIN and MAX compared
 * with the other signedness (measured: Open MPI 4.1.4 on 64-bit unsigned
 * long and MPI_OFFSET; MPICH 4.0.2 on every unsigned integer type). */
#define MINMAX(type) {type, MIN}, {type, MAX}
static const struct {
    const char *type;
    int op;
} known_bugs[] = {
#if defined(OPEN_MPI)
    MINMAX("MPI_UNSIGNED_LONG"), MINMAX("MPI_OFFSET"),
#elif defined(MPICH)
    MINMAX("MPI_UNSIGNED_CHAR"), MINMAX("MPI_UNSIGNED_SHORT"), MINMAX("MPI_UNSIGNED"),
    MINMAX("MPI_UNSIGNED_LONG"), MINMAX("MPI_UNSIGNED_LONG_LONG"), MINMAX("MPI_UINT8_T"),
    MINMAX("MPI_UINT16_T"), MINMAX("MPI_UINT32_T"), MINMAX("MPI_UINT64_T"),
#endif
    {NULL, 0}};
static bool plain; /* run without the layer */

static bool tolerated(const tcase *t, int k)
{
    for (int i = 0; plain && known_bugs[i].type; i++)
        if (!strcmp(known_bugs[i].type, t->name) && known_bugs[i].op == k)
            return true;
    return false;
}

static bool same(const tcase *t, const void *a, const void *b, int n)
{
    const unsigned char *x = a, *y = b;
    for (int e = 0; e < n; e++)
        for (int s = 0; s < 2; s++) {
            size_t at = (size_t)e * t->size + t->sig[s].off;
            if (t->sig[s].len && memcmp(x + at, y + at, t->sig[s].len))
                return false;
        }
    return true;
}

/* The same result, bit for bit, on every rank. */
static bool identical(const tcase *t, const void *out, int n)
{
    size_t bytes = (size_t)n * t->size;
    unsigned char *all = malloc(bytes * (size_t)t_size);
    int ok = 1;
    MPI_Gather(out, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int r = 1; t_rank == 0 && r < t_size; r++)
        ok &= same(t, all, all + (size_t)r * bytes, n);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    return ok;
}

static void run_case(const tcase *t, int k)
{
    size_t bytes = COUNT * t->size;
    unsigned char *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes),
                  *tmp = malloc(bytes), *orig = malloc(bytes);
    MPI_Op op = op_handle(k);
    int last = t_size - 1;
    const char *what = op_name[k];
    t->fill(want, COUNT, 0, k);
    for (int r = 1; r < t_size; r++) { /* the rank-order fold */
        t->fill(tmp, COUNT, r, k);
        t->fold(want, tmp, COUNT, k);
    }
    t->fill(in, COUNT, t_rank, k);
    memcpy(orig, in, bytes);
    bool tol = tolerated(t, k);

    memset(out, 0xA5, bytes);
    MPI_Allreduce(in, out, COUNT, t->dt, op, MPI_COMM_WORLD);
    if (tol && t_rank == 0 && !same(t, out, want, COUNT))
        printf("plain MPI: %s %s is wrong (a known bug of this MPI, tolerated)\n", t->name, what);
    CHECK(tol || same(t, out, want, COUNT), "%s %s: allreduce result differs from the fold",
          t->name, what);
    CHECK(identical(t, out, COUNT), "%s %s: allreduce differs between ranks", t->name, what);

    t->fill(out, COUNT, t_rank, k);
    MPI_Allreduce(MPI_IN_PLACE, out, COUNT, t->dt, op, MPI_COMM_WORLD);
    CHECK(tol || same(t, out, want, COUNT), "%s %s: allreduce in place differs", t->name, what);

    memset(out, 0xA5, bytes);
    memset(tmp, 0xA5, bytes);
    MPI_Reduce(in, out, COUNT, t->dt, op, last, MPI_COMM_WORLD);
    CHECK(t_rank == last ? tol || same(t, out, want, COUNT) : !memcmp(out, tmp, bytes),
          "%s %s: reduce to %d: %s", t->name, what, last,
          t_rank == last ? "wrong result" : "recvbuf written on a non-root rank");

    if (t_rank == 0) {
        t->fill(out, COUNT, 0, k);
        MPI_Reduce(MPI_IN_PLACE, out, COUNT, t->dt, op, 0, MPI_COMM_WORLD);
        CHECK(tol || same(t, out, want, COUNT), "%s %s: reduce in place differs", t->name, what);
    } else {
        MPI_Reduce(in, NULL, COUNT, t->dt, op, 0, MPI_COMM_WORLD);
    }

    memset(out, 0xA5, bytes);
    MPI_Allreduce(in, out, 0, t->dt, op, MPI_COMM_WORLD);
    CHECK(!memcmp(out, tmp, bytes), "%s %s: count 0 wrote recvbuf", t->name, what);
    MPI_Allreduce(in, out, 1, t->dt, op, MPI_COMM_WORLD);
    CHECK((tol || same(t, out, want, 1)) && !memcmp(out + t->size, tmp + t->size, bytes - t->size),
          "%s %s: count 1 wrong or wrote past its element", t->name, what);
    CHECK(!memcmp(in, orig, bytes), "%s %s: sendbuf changed", t->name, what);
    free(in);
    free(out);
    free(want);
    free(tmp);
    free(orig);
}

/* Rounding: random doubles summed, bitwise the same on every rank. */
static void check_random_sum(void)
{
    static const tcase t = {"random", MPI_DOUBLE, sizeof(double), 0, NULL, NULL, ONE(double)};
    double in[RANDOM_COUNT], out[RANDOM_COUNT], want[RANDOM_COUNT] = {0};
    uint64_t sum = 0;
    for (int r = 0; r < t_size; r++)
        for (int i = 0; i < RANDOM_COUNT; i++) {
            double v = (double)(t_hash((uint64_t)r, (uint64_t)i, 1) >> 11) / 0x1p53 - 0.3;
            want[i] += v;
            if (r == t_rank)
                in[i] = v;
        }
    MPI_Allreduce(in, out, RANDOM_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < RANDOM_COUNT; i++) {
        CHECK(fabs(out[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])), "random sum %d: %.17g, "
              "fold %.17g", i, out[i], want[i]);
        uint64_t bits;
        memcpy(&bits, &out[i], sizeof bits);
        sum = t_hash(sum, bits, (uint64_t)i);
    }
    CHECK(identical(&t, out, RANDOM_COUNT), "random sum differs between ranks");
    if (t_rank == 0)
        printf("checksum %016llx\n", (unsigned long long)sum);
}

/* -0, +0 and NaNs of several payloads through MIN and MAX. */
static void check_signed_zeros_nans(void)
{
    static const tcase t = {"zeros", MPI_DOUBLE, sizeof(double), 0, NULL, NULL, ONE(double)};
    double in[4], out[4];
    uint64_t nan_bits = 0x7ff8000000000000ull | (uint64_t)(t_rank + 1);
    in[0] = t_rank % 2 ? -0.0 : 0.0;
    memcpy(&in[1], &nan_bits, sizeof in[1]);
    in[2] = t_rank == 1 ? in[1] : (double)t_rank;
    in[3] = t_rank % 2 ? 0.0 : -0.0;
    for (int k = MIN; k <= MAX; k++) {
        MPI_Allreduce(in, out, 4, MPI_DOUBLE, op_handle(k), MPI_COMM_WORLD);
        CHECK(identical(&t, out, 4), "%s of signed zeros and NaNs differs between ranks",
              op_name[k]);
        CHECK(out[0] == 0 && isnan(out[1]), "%s of zeros / NaNs: %g %g", op_name[k], out[0],
              out[1]);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    plain = argc > 1 && !strcmp(argv[1], "--plain");
    for (size_t c = 0; c < NCASES; c++)
        for (int k = 0; k < NOPS; k++)
            if (cases[c].ops & M(k))
                run_case(&cases[c], k);
    check_random_sum();
    check_signed_zeros_nans();
    return t_finish("layer_types");
}

/* kernels.c: the predefined MPI operators on every predefined C datatype,
 * as treduce operators: inout[i] = in[i] (+) inout[i].
 *
 * Where libtreduce has a built-in kernel with exactly MPI's meaning it is
 * used (its vectorised loops): integer sum, prod, land, lor, band, bor,
 * bxor on 32 and 64 bits (a 32-bit unsigned sum has the bits of the signed
 * one), min and max on int32, int64 and uint64 (unsigned compares: correct
 * above 2^63), and float / double sum and prod.  The rest are the layer's
 * own loops, written to give the same bits whichever operand comes first:
 * treduce may combine a pair in either order when an operator is
 * commutative (recursive doubling does, on the two ranks of a pair), and an
 * allreduce must end with the same bits on every rank.  So
 *   - min and max on floating types follow IEEE 754-2019 minimum and
 *     maximum: -0 < +0, a NaN wins, of two NaNs the smaller bit pattern;
 *   - MINLOC / MAXLOC (MPI-3.1 Sec. 5.9.4): the better value, on equal
 *     values the lower index, and on equal indices (which MPI leaves open)
 *     the smaller bit pattern; a NaN counts as the better value;
 *   - long double results have their padding bytes zeroed, so that every
 *     byte MPI moves (sizeof(long double)) is determined.
 * Integer arithmetic wraps modulo 2^bits (done in uint64_t: no undefined
 * overflow, not even from promotion to int). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "layer.h"

/* The bytes of a long double that hold its value (x86: 80 of 128 bits). */
#if LDBL_MANT_DIG == 64
#define LDBL_BYTES 10
#else
#define LDBL_BYTES sizeof(long double)
#endif

typedef struct { float v; int i; } float_int;
typedef struct { double v; int i; } double_int;
typedef struct { long v; int i; } long_int;
typedef struct { int v; int i; } int_int;
typedef struct { short v; int i; } short_int;
typedef struct { long double v; int i; } ldouble_int;

static const size_t type_size[TML_NTYPES] = {
    [TML_I8] = 1, [TML_U8] = 1, [TML_I16] = 2, [TML_U16] = 2, [TML_I32] = 4, [TML_U32] = 4,
    [TML_I64] = 8, [TML_U64] = 8, [TML_BOOL] = 1, [TML_F32] = sizeof(float),
    [TML_F64] = sizeof(double), [TML_F80] = sizeof(long double),
    [TML_C32] = sizeof(float _Complex), [TML_C64] = sizeof(double _Complex),
    [TML_C80] = sizeof(long double _Complex), [TML_FLOAT_INT] = sizeof(float_int),
    [TML_DOUBLE_INT] = sizeof(double_int), [TML_LONG_INT] = sizeof(long_int),
    [TML_2INT] = sizeof(int_int), [TML_SHORT_INT] = sizeof(short_int),
    [TML_LDOUBLE_INT] = sizeof(ldouble_int)};

size_t tml_type_size(tml_type t) { return type_size[t]; }

static void store_ld(long double *p, long double v)
{
    unsigned char bytes[sizeof(long double)] = {0};
    memcpy(bytes, &v, LDBL_BYTES);
    memcpy(p, bytes, sizeof bytes);
}

/* ---- Element expressions: a = in[i] (left), b = inout[i] ---- */

#define I_SUM(T, a, b) ((T)((uint64_t)(a) + (uint64_t)(b)))
#define I_PROD(T, a, b) ((T)((uint64_t)(a) * (uint64_t)(b)))
#define I_MIN(T, a, b) ((a) < (b) ? (a) : (b))
#define I_MAX(T, a, b) ((a) > (b) ? (a) : (b))
#define I_LAND(T, a, b) ((T)((a) != 0 && (b) != 0))
#define I_LOR(T, a, b) ((T)((a) != 0 || (b) != 0))
#define I_LXOR(T, a, b) ((T)(((a) != 0) != ((b) != 0)))
#define I_BAND(T, a, b) ((T)((a) & (b)))
#define I_BOR(T, a, b) ((T)((a) | (b)))
#define I_BXOR(T, a, b) ((T)((a) ^ (b)))

/* Which of two NaNs, or the NaN of a NaN and a number: the same whatever
 * the order of a and b. */
#define NAN_PICK(a, b, nbytes) \
    ((a) != (a) && (b) != (b) ? (memcmp(&(a), &(b), nbytes) <= 0 ? (a) : (b)) \
                              : (a) != (a) ? (a) : (b))
#define F_MIN(a, b, nbytes)                                                        \
    ((a) < (b) ? (a) : (b) < (a) ? (b) : (a) == (b) ? (signbit(a) ? (a) : (b))   \
                                                     : NAN_PICK(a, b, nbytes))
#define F_MAX(a, b, nbytes)                                                        \
    ((a) > (b) ? (a) : (b) > (a) ? (b) : (a) == (b) ? (signbit(a) ? (b) : (a))   \
                                                     : NAN_PICK(a, b, nbytes))

/* ---- Loops ---- */

#define LOOP(name, T, body)                                                     \
    static void name(const void *in_, void *io_, int64_t n, void *ctx)          \
    {                                                                           \
        const T *in = in_;                                                      \
        T *io = io_;                                                            \
        (void)ctx;                                                              \
        for (int64_t i = 0; i < n; i++) {                                       \
            T a = in[i], b = io[i];                                             \
            body;                                                               \
        }                                                                       \
    }

/* Every integer operator on the 8- and 16-bit types; lxor on all; unsigned
 * 32-bit min and max (libtreduce has the others). */
#define INT_OPS(X, id, T)                                                       \
    X(SUM, id, T, I_SUM) X(PROD, id, T, I_PROD) X(MIN, id, T, I_MIN)            \
    X(MAX, id, T, I_MAX) X(LAND, id, T, I_LAND) X(LOR, id, T, I_LOR)            \
    X(LXOR, id, T, I_LXOR) X(BAND, id, T, I_BAND) X(BOR, id, T, I_BOR)          \
    X(BXOR, id, T, I_BXOR)
#define INT_KERNELS(X)                                                          \
    INT_OPS(X, I8, int8_t) INT_OPS(X, U8, uint8_t) INT_OPS(X, I16, int16_t)     \
    INT_OPS(X, U16, uint16_t) X(LXOR, I32, int32_t, I_LXOR)                     \
    X(LXOR, U32, uint32_t, I_LXOR) X(LXOR, I64, int64_t, I_LXOR)                \
    X(LXOR, U64, uint64_t, I_LXOR) X(MIN, U32, uint32_t, I_MIN)                 \
    X(MAX, U32, uint32_t, I_MAX) X(LAND, BOOL, uint8_t, I_LAND)                 \
    X(LOR, BOOL, uint8_t, I_LOR) X(LXOR, BOOL, uint8_t, I_LXOR)
#define DEFINE_INT(op, id, T, expr) LOOP(k_##op##_##id, T, io[i] = expr(T, a, b))
INT_KERNELS(DEFINE_INT)

LOOP(k_MIN_F32, float, io[i] = F_MIN(a, b, sizeof a))
LOOP(k_MAX_F32, float, io[i] = F_MAX(a, b, sizeof a))
LOOP(k_MIN_F64, double, io[i] = F_MIN(a, b, sizeof a))
LOOP(k_MAX_F64, double, io[i] = F_MAX(a, b, sizeof a))
LOOP(k_SUM_F80, long double, store_ld(&io[i], a + b))
LOOP(k_PROD_F80, long double, store_ld(&io[i], a * b))
LOOP(k_MIN_F80, long double, store_ld(&io[i], F_MIN(a, b, LDBL_BYTES)))
LOOP(k_MAX_F80, long double, store_ld(&io[i], F_MAX(a, b, LDBL_BYTES)))
LOOP(k_SUM_C32, float _Complex, io[i] = a + b)
LOOP(k_PROD_C32, float _Complex, io[i] = a * b)
LOOP(k_SUM_C64, double _Complex, io[i] = a + b)
LOOP(k_PROD_C64, double _Complex, io[i] = a * b)

static void store_lc(long double _Complex *p, long double _Complex v)
{
    long double *parts = (long double *)p; /* C11 6.2.5: an array of two */
    store_ld(&parts[0], creall(v));
    store_ld(&parts[1], cimagl(v));
}
LOOP(k_SUM_C80, long double _Complex, store_lc(&io[i], a + b))
LOOP(k_PROD_C80, long double _Complex, store_lc(&io[i], a * b))

/* ---- MINLOC and MAXLOC ---- */

/* < 0: value x is better, > 0: y is, 0: neither.  A NaN is better than a
 * number (it propagates, as through MIN and MAX). */
#define BETTER_INT(x, y, less) (less(x, y) ? -1 : less(y, x) ? 1 : 0)
#define BETTER_FLOAT(x, y, less)                                                \
    ((x) != (x) ? ((y) != (y) ? 0 : -1) : (y) != (y) ? 1 : BETTER_INT(x, y, less))
#define LESS(x, y) ((x) < (y))
#define MORE(x, y) ((x) > (y))

#define LOC(name, T, better, less, vbytes)                                      \
    LOOP(name, T, {                                                             \
        int c = better(a.v, b.v, less);                                         \
        if (c == 0)                                                             \
            c = a.i < b.i ? -1 : a.i > b.i ? 1 : memcmp(&a.v, &b.v, vbytes);    \
        if (c < 0)                                                              \
            io[i] = a;                                                          \
    })
#define LOC_PAIR(id, T, better, vbytes)                                         \
    LOC(k_MINLOC_##id, T, better, LESS, vbytes)                                 \
    LOC(k_MAXLOC_##id, T, better, MORE, vbytes)
LOC_PAIR(FLOAT_INT, float_int, BETTER_FLOAT, sizeof(float))
LOC_PAIR(DOUBLE_INT, double_int, BETTER_FLOAT, sizeof(double))
LOC_PAIR(LDOUBLE_INT, ldouble_int, BETTER_FLOAT, LDBL_BYTES)
LOC_PAIR(LONG_INT, long_int, BETTER_INT, sizeof(long))
LOC_PAIR(2INT, int_int, BETTER_INT, sizeof(int))
LOC_PAIR(SHORT_INT, short_int, BETTER_INT, sizeof(short))

/* ---- The table ---- */

#define INT_ENTRY(op, id, T, expr) [TML_##op][TML_##id] = k_##op##_##id,
#define ENTRY(op, id) [TML_##op][TML_##id] = k_##op##_##id,
static const trd_user_fn kernel[TML_NOPS][TML_NTYPES] = {
    INT_KERNELS(INT_ENTRY)
    ENTRY(MIN, F32) ENTRY(MAX, F32) ENTRY(MIN, F64) ENTRY(MAX, F64)
    ENTRY(SUM, F80) ENTRY(PROD, F80) ENTRY(MIN, F80) ENTRY(MAX, F80)
    ENTRY(SUM, C32) ENTRY(PROD, C32) ENTRY(SUM, C64) ENTRY(PROD, C64)
    ENTRY(SUM, C80) ENTRY(PROD, C80)
    ENTRY(MINLOC, FLOAT_INT) ENTRY(MAXLOC, FLOAT_INT) ENTRY(MINLOC, DOUBLE_INT)
    ENTRY(MAXLOC, DOUBLE_INT) ENTRY(MINLOC, LDOUBLE_INT) ENTRY(MAXLOC, LDOUBLE_INT)
    ENTRY(MINLOC, LONG_INT) ENTRY(MAXLOC, LONG_INT) ENTRY(MINLOC, 2INT)
    ENTRY(MAXLOC, 2INT) ENTRY(MINLOC, SHORT_INT) ENTRY(MAXLOC, SHORT_INT)
};

/* libtreduce's built-in kernels with MPI's meaning, by (operator, type):
 * kind + 1 (0: none) and the library's type. */
typedef struct builtin {
    int kind_plus1;
    trd_type type;
} builtin;
#define B(op, type) {TRD_OP_##op + 1, type}
#define INT_BUILTINS(id, t)                                                      \
    [TML_SUM][id] = B(SUM, t), [TML_PROD][id] = B(PROD, t), [TML_LAND][id] = B(LAND, t), \
    [TML_LOR][id] = B(LOR, t), [TML_BAND][id] = B(BAND, t), [TML_BOR][id] = B(BOR, t),   \
    [TML_BXOR][id] = B(BXOR, t)
static const builtin builtins[TML_NOPS][TML_NTYPES] = {
    INT_BUILTINS(TML_I32, TRD_INT32), INT_BUILTINS(TML_U32, TRD_INT32),
    INT_BUILTINS(TML_I64, TRD_INT64), INT_BUILTINS(TML_U64, TRD_UINT64),
    [TML_MIN][TML_I32] = B(MIN, TRD_INT32), [TML_MAX][TML_I32] = B(MAX, TRD_INT32),
    [TML_MIN][TML_I64] = B(MIN, TRD_INT64), [TML_MAX][TML_I64] = B(MAX, TRD_INT64),
    [TML_MIN][TML_U64] = B(MIN, TRD_UINT64), [TML_MAX][TML_U64] = B(MAX, TRD_UINT64),
    [TML_SUM][TML_F32] = B(SUM, TRD_FLOAT), [TML_PROD][TML_F32] = B(PROD, TRD_FLOAT),
    [TML_SUM][TML_F64] = B(SUM, TRD_DOUBLE), [TML_PROD][TML_F64] = B(PROD, TRD_DOUBLE),
};

/* Made on first use, shared by the process's threads: the lock guards the
 * making, the atomic pointers the reading. */
static _Atomic(trd_op *) made[TML_NOPS][TML_NTYPES];
static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;

const trd_op *tml_kernel(tml_opkind k, tml_type t)
{
    trd_op *op = atomic_load_explicit(&made[k][t], memory_order_acquire);
    if (op)
        return op;
    pthread_mutex_lock(&making);
    op = atomic_load_explicit(&made[k][t], memory_order_relaxed);
    const builtin *b = &builtins[k][t];
    if (!op && b->kind_plus1)
        trd_op_builtin(&op, (trd_op_kind)(b->kind_plus1 - 1), b->type);
    else if (!op && kernel[k][t])
        trd_op_user(&op, kernel[k][t], type_size[t], true, NULL);
    atomic_store_explicit(&made[k][t], op, memory_order_release);
    pthread_mutex_unlock(&making);
    return op;
}

bool tml_kernel_exact(tml_opkind k, tml_type t)
{
    bool arithmetic = k == TML_SUM || k == TML_PROD;
    bool floating = t == TML_F32 || t == TML_F64 || t == TML_F80 || t == TML_C32 ||
                    t == TML_C64 || t == TML_C80;
    return !(arithmetic && floating); /* rounding depends on the order */
}

void tml_kernels_finish(void)
{
    for (int k = 0; k < TML_NOPS; k++)
        for (int t = 0; t < TML_NTYPES; t++)
            trd_op_free(atomic_exchange(&made[k][t], NULL));
}

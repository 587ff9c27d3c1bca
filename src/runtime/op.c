/* op.c: element types and reduction operators with MPI semantics
 * (treduce.h, docs/OPERATORS.md).
 *
 * The built-in kernels come from one X-macro table: each (operator, type)
 * pair the table allows gets one simple loop over restrict pointers,
 * inout[i] = in[i] (+) inout[i], which the compiler vectorises.  Integer
 * arithmetic is done in the unsigned type of the same width, so signed
 * overflow wraps instead of being undefined.  Pairs the table leaves out
 * (logical and bitwise operators on floating types, as in MPI) have no
 * kernel, and trd_op_builtin refuses them by name.
 *
 * Also here: user operators, the schedule IR's COMBINE (left or right
 * operand, non-commutative operators included), and the two checker
 * operators (2x2 matrices mod 2^31 - 1, interval concatenation). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/stream.h"
#include "core/splitmix.h"
#include "runtime/op.h"

typedef void (*kernel_fn)(const void *restrict in, void *restrict inout, int64_t count);
typedef void (*kernel3_fn)(const void *restrict in, const void *restrict acc,
                           void *restrict out, int64_t count);

struct trd_op {
    kernel_fn kernel; /* built-in operators */
    kernel3_fn kernel3; /* ...the same into another buffer */
    trd_user_fn user; /* user operators (kernel == NULL) */
    void *ctx;
    size_t elem_size;
    bool commutative;
    uint64_t serial; /* trd_op_serial */
    const char *kind, *type; /* trd_op_names */
};

/* ---- The kernel table: ANY_OPS x (INT_TYPES + FLOAT_TYPES), INT_OPS x INT_TYPES ---- */

/* Types: enum, C type T, type U the arithmetic is done in (the unsigned
 * twin for integers, so overflow wraps without undefined behaviour). */
#define INT_TYPES(X, kind, expr)                 \
    X(TRD_INT32, int32_t, uint32_t, kind, expr)  \
    X(TRD_INT64, int64_t, uint64_t, kind, expr)  \
    X(TRD_UINT64, uint64_t, uint64_t, kind, expr)
#define FLOAT_TYPES(X, kind, expr)         \
    X(TRD_FLOAT, float, float, kind, expr) \
    X(TRD_DOUBLE, double, double, kind, expr)

/* Element expressions: a = in[i] (left operand), b = inout[i]. */
#define E_SUM(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define E_PROD(T, U, a, b) ((T)((U)(a) * (U)(b)))
#define E_MIN(T, U, a, b) ((a) < (b) ? (a) : (b))
#define E_MAX(T, U, a, b) ((a) > (b) ? (a) : (b))
#define E_LAND(T, U, a, b) ((T)(((a) != 0) & ((b) != 0)))
#define E_LOR(T, U, a, b) ((T)(((a) != 0) | ((b) != 0)))
#define E_BAND(T, U, a, b) ((T)((U)(a) & (U)(b)))
#define E_BOR(T, U, a, b) ((T)((U)(a) | (U)(b)))
#define E_BXOR(T, U, a, b) ((T)((U)(a) ^ (U)(b)))

/* Operators: ANY_OPS take every type, INT_OPS integer types only. */
#define ANY_OPS(X)                                                          \
    X(TRD_OP_SUM, E_SUM) X(TRD_OP_PROD, E_PROD) X(TRD_OP_MIN, E_MIN)        \
    X(TRD_OP_MAX, E_MAX)
#define INT_OPS(X)                                                          \
    X(TRD_OP_LAND, E_LAND) X(TRD_OP_LOR, E_LOR) X(TRD_OP_BAND, E_BAND)      \
    X(TRD_OP_BOR, E_BOR) X(TRD_OP_BXOR, E_BXOR)

/* The one loop, instantiated once per allowed (operator, type).  Blocks of
 * KERNEL_BLOCK elements have a known trip count, so even gcc -O2's
 * "very cheap" vectoriser takes them; the tail is done one by one.  Each
 * block is unrolled whole: left as a loop of a few vector instructions,
 * its speed depended on where the linker placed it (whether the loop
 * crossed a 64-byte line; docs/BENCHMARKS.md, "bench/op"). */
#define KERNEL_BLOCK 16
#define UNROLLED_BLOCK _Pragma("GCC unroll 16") for (int j = 0; j < KERNEL_BLOCK; j++)
/* On x86-64 each kernel is also compiled for AVX2, picked at load time
 * where the CPU has it (as Open MPI's op/avx does): twice the elements per
 * instruction, which pays where the data is in cache (docs/BENCHMARKS.md,
 * "bench/op"). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
/* ThreadSanitizer instruments the clones' resolvers, which the loader runs
 * before the sanitizer's runtime has started (a crash at load time) */
#define KERNEL_NO_CLONES
#endif
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(KERNEL_NO_CLONES)
#if __has_attribute(target_clones)
#define KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef KERNEL_CLONES
#define KERNEL_CLONES
#endif
#define KERNEL(type, T, U, kind, expr)                                          \
    KERNEL_CLONES static void k_##kind##_##type(                                \
        const void *restrict in_, void *restrict io_, int64_t count)            \
    {                                                                           \
        const T *restrict in = in_;                                             \
        T *restrict io = io_;                                                   \
        int64_t i = 0;                                                          \
        for (; i + KERNEL_BLOCK <= count; i += KERNEL_BLOCK)                    \
            UNROLLED_BLOCK                                                      \
                io[i + j] = expr(T, U, in[i + j], io[i + j]);                   \
        for (; i < count; i++)                                                  \
            io[i] = expr(T, U, in[i], io[i]);                                   \
    }
/* The same with the accumulator read from one buffer and the result
 * written to another, out[i] = in[i] (+) acc[i]: the runtime's combine of
 * a received block with the caller's sendbuf into the result buffer
 * (trd_op_combine_into) streams three buffers once instead of copying
 * acc first. */
#define KERNEL3(type, T, U, kind, expr)                                          \
    KERNEL_CLONES static void k3_##kind##_##type(                                \
        const void *restrict in_, const void *restrict acc_, void *restrict out_, \
        int64_t count)                                                           \
    {                                                                            \
        const T *restrict in = in_, *restrict acc = acc_;                        \
        T *restrict out = out_;                                                  \
        int64_t i = 0;                                                           \
        for (; i + KERNEL_BLOCK <= count; i += KERNEL_BLOCK)                     \
            UNROLLED_BLOCK                                                       \
                out[i + j] = expr(T, U, in[i + j], acc[i + j]);                  \
        for (; i < count; i++)                                                   \
            out[i] = expr(T, U, in[i], acc[i]);                                  \
    }
#define KERNELS_ANY(kind, expr) \
    INT_TYPES(KERNEL, kind, expr) FLOAT_TYPES(KERNEL, kind, expr) \
    INT_TYPES(KERNEL3, kind, expr) FLOAT_TYPES(KERNEL3, kind, expr)
#define KERNELS_INT(kind, expr) INT_TYPES(KERNEL, kind, expr) INT_TYPES(KERNEL3, kind, expr)
ANY_OPS(KERNELS_ANY)
INT_OPS(KERNELS_INT)

#define ENTRY(type, T, U, kind, expr) [kind][type] = k_##kind##_##type,
#define ENTRIES_ANY(kind, expr) INT_TYPES(ENTRY, kind, expr) FLOAT_TYPES(ENTRY, kind, expr)
#define ENTRIES_INT(kind, expr) INT_TYPES(ENTRY, kind, expr)
static const kernel_fn kernels[TRD_OP_KIND_COUNT][TRD_TYPE_COUNT] = {
    ANY_OPS(ENTRIES_ANY) INT_OPS(ENTRIES_INT)};
#define ENTRY3(type, T, U, kind, expr) [kind][type] = k3_##kind##_##type,
#define ENTRIES3_ANY(kind, expr) INT_TYPES(ENTRY3, kind, expr) FLOAT_TYPES(ENTRY3, kind, expr)
#define ENTRIES3_INT(kind, expr) INT_TYPES(ENTRY3, kind, expr)
static const kernel3_fn kernels3[TRD_OP_KIND_COUNT][TRD_TYPE_COUNT] = {
    ANY_OPS(ENTRIES3_ANY) INT_OPS(ENTRIES3_INT)};

#define SIZE_ENTRY(type, T, U, kind, expr) [type] = sizeof(T),
static const size_t type_sizes[TRD_TYPE_COUNT] = {
    INT_TYPES(SIZE_ENTRY, 0, 0) FLOAT_TYPES(SIZE_ENTRY, 0, 0)};

/* Every public type and operator (treduce.h's lists) is in the table. */
#define COUNT_ONE(...) +1
_Static_assert(0 INT_TYPES(COUNT_ONE, 0, 0) FLOAT_TYPES(COUNT_ONE, 0, 0) == TRD_TYPE_COUNT,
               "a type of TRD_TYPE_LIST is missing from INT_TYPES/FLOAT_TYPES");
_Static_assert(0 ANY_OPS(COUNT_ONE) INT_OPS(COUNT_ONE) == TRD_OP_KIND_COUNT,
               "an operator of TRD_OP_KIND_LIST is missing from ANY_OPS/INT_OPS");

#define NAME_ENTRY(name, value, text) [name] = text,
static const char *const type_names[TRD_TYPE_COUNT] = {TRD_TYPE_LIST(NAME_ENTRY)};
static const char *const op_names[TRD_OP_KIND_COUNT] = {TRD_OP_KIND_LIST(NAME_ENTRY)};

/* ---- Names ---- */

size_t trd_type_size(trd_type type)
{
    return (unsigned)type < TRD_TYPE_COUNT ? type_sizes[type] : 0;
}

const char *trd_type_name(trd_type type)
{
    return (unsigned)type < TRD_TYPE_COUNT ? type_names[type] : NULL;
}

const char *trd_op_kind_name(trd_op_kind kind)
{
    return (unsigned)kind < TRD_OP_KIND_COUNT ? op_names[kind] : NULL;
}

/* names[0..n) joined by ", " into list (always terminated). */
static void join_names(char *list, size_t cap, const char *const *names, size_t n)
{
    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strncat(list, i ? ", " : "", cap - strlen(list) - 1);
        strncat(list, names[i], cap - strlen(list) - 1);
    }
}

/* Index of `name` in names[0..n), or TRD_EINVAL listing them. */
static trd_status parse_name(const char *fn, const char *what, const char *const *names,
                             size_t n, const char *name, int *out)
{
    if (!out)
        return trd_fail(TRD_EINVAL, "%s: NULL argument (out)", fn);
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0) {
            *out = (int)i;
            return TRD_OK;
        }
    char list[256];
    join_names(list, sizeof list, names, n);
    return trd_fail(TRD_EINVAL, "unknown %s '%s'; valid names: %s", what,
                    name ? name : "(null)", list);
}

trd_status trd_type_parse(const char *name, trd_type *out)
{
    int i = 0;
    trd_status st = parse_name("trd_type_parse", "type", type_names, TRD_TYPE_COUNT, name,
                               out ? &i : NULL);
    if (st == TRD_OK)
        *out = (trd_type)i;
    return st;
}

trd_status trd_op_parse(const char *name, trd_op_kind *out)
{
    int i = 0;
    trd_status st = parse_name("trd_op_parse", "operator", op_names, TRD_OP_KIND_COUNT,
                               name, out ? &i : NULL);
    if (st == TRD_OK)
        *out = (trd_op_kind)i;
    return st;
}

/* ---- Creating operators ---- */

static trd_status new_op(trd_op **out, kernel_fn kernel, trd_user_fn user, void *ctx,
                         size_t elem_size, bool commutative)
{
    static _Atomic uint64_t made; /* operators may be created on any thread */
    trd_op *op = malloc(sizeof *op);
    if (!op)
        return trd_fail(TRD_ENOMEM, "out of memory allocating an operator");
    *op = (trd_op){.kernel = kernel, .user = user, .ctx = ctx, .elem_size = elem_size,
                   .commutative = commutative, .serial = ++made};
    *out = op;
    return TRD_OK;
}

/* TRD_EINVAL for a (kind, type) pair with no kernel, listing what works. */
static trd_status mismatch(trd_op_kind kind, trd_type type)
{
    const char *ok_ops[TRD_OP_KIND_COUNT];
    const char *ok_types[TRD_TYPE_COUNT];
    size_t nops = 0, ntypes = 0;
    for (int k = 0; k < TRD_OP_KIND_COUNT; k++)
        if (kernels[k][type])
            ok_ops[nops++] = op_names[k];
    for (int t = 0; t < TRD_TYPE_COUNT; t++)
        if (kernels[kind][t])
            ok_types[ntypes++] = type_names[t];
    char ops[256], types[256];
    join_names(ops, sizeof ops, ok_ops, nops);
    join_names(types, sizeof types, ok_types, ntypes);
    return trd_fail(TRD_EINVAL,
                    "operator '%s' is not defined on type '%s' (as in MPI): '%s' takes %s; "
                    "'%s' takes %s",
                    op_names[kind], type_names[type], op_names[kind], types,
                    type_names[type], ops);
}

trd_status trd_op_builtin(trd_op **out, trd_op_kind kind, trd_type type)
{
    if (!out)
        return trd_fail(TRD_EINVAL, "trd_op_builtin: NULL argument (out)");
    *out = NULL;
    if ((unsigned)kind >= TRD_OP_KIND_COUNT)
        return trd_fail(TRD_EINVAL, "operator kind = %d is out of range [0, %d)",
                        (int)kind, TRD_OP_KIND_COUNT);
    if ((unsigned)type >= TRD_TYPE_COUNT)
        return trd_fail(TRD_EINVAL, "type = %d is out of range [0, %d)", (int)type,
                        TRD_TYPE_COUNT);
    if (!kernels[kind][type])
        return mismatch(kind, type);
    trd_status st = new_op(out, kernels[kind][type], NULL, NULL, type_sizes[type], true);
    if (st == TRD_OK) {
        (*out)->kernel3 = kernels3[kind][type];
        (*out)->kind = op_names[kind];
        (*out)->type = type_names[type];
    }
    return st;
}

trd_status trd_op_user(trd_op **out, trd_user_fn fn, size_t elem_size, bool commutative,
                       void *ctx)
{
    if (!out)
        return trd_fail(TRD_EINVAL, "trd_op_user: NULL argument (out)");
    *out = NULL;
    if (!fn)
        return trd_fail(TRD_EINVAL, "trd_op_user: NULL argument (fn)");
    if (elem_size == 0)
        return trd_fail(TRD_EINVAL, "trd_op_user: elem_size = 0: elements need >= 1 byte");
    return new_op(out, NULL, fn, ctx, elem_size, commutative);
}

void trd_op_free(trd_op *op) { free(op); }

bool trd_op_is_commutative(const trd_op *op) { return op && op->commutative; }

size_t trd_op_elem_size(const trd_op *op) { return op ? op->elem_size : 0; }

uint64_t trd_op_serial(const trd_op *op) { return op ? op->serial : 0; }

void trd_op_names(const trd_op *op, const char **kind, const char **type)
{
    *kind = op ? op->kind : NULL;
    *type = op ? op->type : NULL;
}

/* ---- Applying operators ---- */

/* Checks the arguments of apply/combine: `fn` names the caller, name[0]
 * and name[1] its two buffers. */
static trd_status check_args(const char *fn, const char *const name[2], const trd_op *op,
                             const void *in, const void *inout, int64_t count)
{
    if (!op)
        return trd_fail(TRD_EINVAL, "%s: NULL argument (op)", fn);
    if (count < 0)
        return trd_fail(TRD_EINVAL, "%s: count = %lld is negative", fn, (long long)count);
    if (count == 0)
        return TRD_OK;
    if (!in || !inout)
        return trd_fail(TRD_EINVAL, "%s: NULL buffer (%s) with count = %lld", fn,
                        in ? name[1] : name[0], (long long)count);
    if ((uint64_t)count > SIZE_MAX / op->elem_size)
        return trd_fail(TRD_EINVAL, "%s: count = %lld elements of %zu bytes overflow "
                        "size_t", fn, (long long)count, op->elem_size);
    size_t bytes = (size_t)count * op->elem_size;
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)inout;
    if (a < b + bytes && b < a + bytes)
        return trd_fail(TRD_EINVAL, "%s: buffers %s and %s overlap (%zu bytes at %p and "
                        "%p)", fn, name[0], name[1], bytes, in, inout);
    return TRD_OK;
}

static void run(const trd_op *op, const void *in, void *inout, int64_t count)
{
    if (op->kernel)
        op->kernel(in, inout, count);
    else
        op->user(in, inout, count, op->ctx);
}

trd_status trd_op_apply(const trd_op *op, const void *in, void *inout, int64_t count)
{
    static const char *const name[2] = {"in", "inout"};
    trd_status st = check_args("trd_op_apply", name, op, in, inout, count);
    if (st == TRD_OK && count > 0)
        run(op, in, inout, count);
    return st;
}

/* Bytes per chunk of a built-in combine that needs a copy (right side, or
 * out != acc): copy and operator alternate chunk by chunk, so the second
 * of them reads what the first just wrote (in cache).  User operators get
 * one call per combine. */
#define CHUNK_BYTES ((size_t)32 * 1024)

/* out = in (+) acc (left) or acc (+) in (right), chunk by chunk; acc is
 * only read (it may be out), in is clobbered on the right. */
static void combine_into(const trd_op *op, trd_side side, char *out, const char *acc, char *in,
                         int64_t count)
{
    bool left = side == TRD_SIDE_LEFT || op->commutative;
    if (left && out == acc) {
        run(op, in, out, count); /* acc = in (+) acc (= acc (+) in if commutative) */
        return;
    }
    if (left && op->kernel3) {
        op->kernel3(in, acc, out, count);
        return;
    }
    size_t es = op->elem_size;
    /* a user operator may cost per call (offloaded, or a sleep): one call */
    int64_t chunk = op->kernel ? (int64_t)(CHUNK_BYTES / es) : count;
    if (chunk < 1)
        chunk = 1;
    for (int64_t off = 0; off < count; off += chunk) {
        int64_t n = count - off < chunk ? count - off : chunk;
        size_t at = (size_t)off * es;
        if (left) { /* out = acc, then out = in (+) out: the copy is in cache */
            memcpy(out + at, acc + at, (size_t)n * es);
            run(op, in + at, out + at, n);
        } else {    /* in = acc (+) in, then out = in */
            run(op, acc + at, in + at, n);
            memcpy(out + at, in + at, (size_t)n * es);
        }
    }
}

/* Bytes per piece of a combine written to two places (trd_op_combine_piece):
 * small enough that its loads and its streamed stores alternate quickly,
 * which the memory keeps busy with both; pieces of 32 KiB made a 64 MiB
 * allreduce on 2 threads markedly slower, of 1 KiB no faster
 * (docs/RUNTIME_INTERNALS.md, "Memory traffic of large buffers"). */
#define PIECE_BYTES ((size_t)4 * 1024)

int64_t trd_op_piece(const trd_op *op, trd_side side)
{
    bool left = side == TRD_SIDE_LEFT || op->commutative;
    return left && op->kernel3 ? (int64_t)(PIECE_BYTES / op->elem_size) : 0;
}

void trd_op_combine_piece(const trd_op *op, void *out, void *copy, const void *acc,
                          const void *in, int64_t count, bool stream)
{
    size_t bytes = (size_t)count * op->elem_size;
    if (!stream) { /* out first, then the copy from cache */
        if (out == acc)
            op->kernel(in, out, count);
        else
            op->kernel3(in, acc, out, count);
        memcpy(copy, out, bytes);
        return;
    }
    _Alignas(64) unsigned char piece[PIECE_BYTES];
    op->kernel3(in, acc, piece, count);
    trd_stream_copy(out, piece, bytes);
    trd_stream_copy(copy, piece, bytes);
}

static trd_status check_side(const char *fn, trd_side side)
{
    if (side != TRD_SIDE_LEFT && side != TRD_SIDE_RIGHT)
        return trd_fail(TRD_EINVAL, "%s: side = %d is neither LEFT (%d) nor RIGHT (%d)", fn,
                        (int)side, TRD_SIDE_LEFT, TRD_SIDE_RIGHT);
    return TRD_OK;
}

trd_status trd_op_combine(const trd_op *op, trd_side side, void *acc, void *in,
                          int64_t count)
{
    static const char *const name[2] = {"in", "acc"};
    trd_status st = check_args("trd_op_combine", name, op, in, acc, count);
    if (st == TRD_OK)
        st = check_side("trd_op_combine", side);
    if (st == TRD_OK && count > 0)
        combine_into(op, side, acc, acc, in, count);
    return st;
}

trd_status trd_op_combine_into(const trd_op *op, trd_side side, void *out, const void *acc,
                               void *in, int64_t count)
{
    static const char *const name_in[2] = {"in", "out"}, *const name_acc[2] = {"acc", "out"};
    trd_status st = check_args("trd_op_combine_into", name_in, op, in, out, count);
    if (st == TRD_OK && acc != out)
        st = check_args("trd_op_combine_into", name_acc, op, acc, out, count);
    if (st == TRD_OK)
        st = check_side("trd_op_combine_into", side);
    if (st == TRD_OK && count > 0)
        combine_into(op, side, out, acc, in, count);
    return st;
}

/* ---- Checker: 2x2 matrices mod p = 2^31 - 1 ---- */


/* x (*) y: entries < 2^31, so each sum of two products is < 2^63. */
static trd_matrix2x2 mat_mul(trd_matrix2x2 x, trd_matrix2x2 y)
{
    const uint64_t p = TRD_MATRIX_P;
    return (trd_matrix2x2){
        (uint32_t)(((uint64_t)x.a * y.a + (uint64_t)x.b * y.c) % p),
        (uint32_t)(((uint64_t)x.a * y.b + (uint64_t)x.b * y.d) % p),
        (uint32_t)(((uint64_t)x.c * y.a + (uint64_t)x.d * y.c) % p),
        (uint32_t)(((uint64_t)x.c * y.b + (uint64_t)x.d * y.d) % p)};
}

static void matrix_fn(const void *in_, void *inout_, int64_t count, void *ctx)
{
    (void)ctx;
    const trd_matrix2x2 *in = in_;
    trd_matrix2x2 *io = inout_;
    for (int64_t i = 0; i < count; i++)
        io[i] = mat_mul(in[i], io[i]);
}

/* Rank r's element i: [[1, x], [0, 1]] (*) [[1, 0], [y, 1]] with x, y in
 * [1, p) from a hash of (r, i): determinant 1, never the identity. */
static trd_matrix2x2 rank_matrix(int64_t rank, int64_t i)
{
    const uint64_t p = TRD_MATRIX_P;
    const uint64_t golden = TRD_GOLDEN64; /* keeps trd_mix64 away from trd_mix64(0) = 0 */
    uint64_t h = trd_mix64(trd_mix64((uint64_t)rank + golden) + (2 * (uint64_t)i + 1) * golden);
    uint64_t x = 1 + h % (p - 1), y = 1 + trd_mix64(h + golden) % (p - 1);
    return (trd_matrix2x2){(uint32_t)((1 + x * y) % p), (uint32_t)x, (uint32_t)y, 1};
}

trd_status trd_op_matrix2x2(trd_op **out)
{
    trd_status st = trd_op_user(out, matrix_fn, sizeof(trd_matrix2x2), false, NULL);
    if (st == TRD_OK)
        (*out)->kind = "matrix2x2";
    return st;
}

/* Common checks of the fill/expected helpers. */
static trd_status check_fill(const char *fn, const void *buf, int64_t count, int64_t first,
                             int64_t last, int64_t max_rank, int64_t max_count)
{
    if (count < 0 || count > max_count)
        return trd_fail(TRD_EINVAL, "%s: count = %lld is out of range [0, %lld]", fn,
                        (long long)count, (long long)max_count);
    if (!buf && count > 0)
        return trd_fail(TRD_EINVAL, "%s: NULL argument (buf) with count = %lld", fn,
                        (long long)count);
    if (first < 0 || last > max_rank || first > last)
        return trd_fail(TRD_EINVAL, "%s: ranks %lld..%lld are out of range: need "
                        "0 <= first <= last <= %lld", fn, (long long)first,
                        (long long)last, (long long)max_rank);
    return TRD_OK;
}

trd_status trd_matrix2x2_fill(trd_matrix2x2 *buf, int64_t count, int64_t rank)
{
    trd_status st = check_fill("trd_matrix2x2_fill", buf, count, rank, rank, INT64_MAX,
                               (int64_t)(SIZE_MAX / sizeof *buf / 2));
    for (int64_t i = 0; st == TRD_OK && i < count; i++)
        buf[i] = rank_matrix(rank, i);
    return st;
}

trd_status trd_matrix2x2_expected(trd_matrix2x2 *buf, int64_t count, int64_t first,
                                  int64_t last)
{
    trd_status st = check_fill("trd_matrix2x2_expected", buf, count, first, last,
                               INT64_MAX, (int64_t)(SIZE_MAX / sizeof *buf / 2));
    for (int64_t i = 0; st == TRD_OK && i < count; i++) {
        trd_matrix2x2 acc = rank_matrix(first, i);
        for (int64_t r = first; r < last;) /* r + 1 <= last: no overflow */
            acc = mat_mul(acc, rank_matrix(++r, i));
        buf[i] = acc;
    }
    return st;
}

/* ---- Checker: interval concatenation ---- */

#define INTERVAL_RANKS ((int64_t)1 << 32)  /* ranks lie in [0, 2^32) */
#define INTERVAL_COUNT ((int64_t)INT32_MAX) /* elements per buffer, at most */

static void interval_fn(const void *in_, void *inout_, int64_t count, void *ctx)
{
    (void)ctx;
    const trd_interval *in = in_;
    trd_interval *io = inout_;
    for (int64_t i = 0; i < count; i++) {
        trd_interval x = in[i], y = io[i];
        bool ok = x.lo >= 0 && x.lo <= x.hi && x.hi < INT64_MAX && x.hi + 1 == y.lo &&
                  y.lo <= y.hi;
        io[i] = ok ? (trd_interval){x.lo, y.hi}
                   : (trd_interval){TRD_INTERVAL_POISON, TRD_INTERVAL_POISON};
    }
}

trd_status trd_op_interval(trd_op **out)
{
    trd_status st = trd_op_user(out, interval_fn, sizeof(trd_interval), false, NULL);
    if (st == TRD_OK)
        (*out)->kind = "interval";
    return st;
}

static trd_status interval_fill(const char *fn, trd_interval *buf, int64_t count,
                                int64_t first, int64_t last)
{
    trd_status st = check_fill(fn, buf, count, first, last, INTERVAL_RANKS - 1,
                               INTERVAL_COUNT);
    for (int64_t i = 0; st == TRD_OK && i < count; i++)
        buf[i] = (trd_interval){first + i * INTERVAL_RANKS, last + i * INTERVAL_RANKS};
    return st;
}

trd_status trd_interval_fill(trd_interval *buf, int64_t count, int64_t rank)
{
    return interval_fill("trd_interval_fill", buf, count, rank, rank);
}

trd_status trd_interval_expected(trd_interval *buf, int64_t count, int64_t first,
                                 int64_t last)
{
    return interval_fill("trd_interval_expected", buf, count, first, last);
}

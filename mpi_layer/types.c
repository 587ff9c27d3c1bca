/* types.c: MPI datatypes as the layer runs them.
 *
 * Predefined datatypes map to the kernels' element types (the table
 * below); MPI-3.1 Sec. 5.9.2 says which operators each group takes,
 * and Sec. 5.9.1 that predefined operators work only with these types: a
 * predefined operator on a derived datatype is an erroneous call, which
 * goes to MPI (Open MPI 4.1 and MPICH 4.0 both refuse it).  User
 * operators take any datatype.  Whether treduce can work in the caller's
 * buffers is a matter of layout: "dense" elements lie back to back with no
 * gap, so count elements are count * size bytes from the buffer's start.
 * Any other layout (a vector with a stride, MPI_DOUBLE_INT's padding, a
 * struct with holes) is staged: copied by MPI_Pack and MPI_Unpack into a
 * scratch buffer with the datatype's own layout, and back, which writes
 * only the bytes of the caller's type map. */
#include <stdlib.h>

#include "layer.h"

/* The kernel types of a signed and an unsigned C integer type, by size. */
#define S_OF(T) \
    (sizeof(T) == 1 ? TML_I8 : sizeof(T) == 2 ? TML_I16 : sizeof(T) == 4 ? TML_I32 : TML_I64)
#define U_OF(T) \
    (sizeof(T) == 1 ? TML_U8 : sizeof(T) == 2 ? TML_U16 : sizeof(T) == 4 ? TML_U32 : TML_U64)
_Static_assert(sizeof(long long) == 8 && sizeof(MPI_Aint) <= 8 && sizeof(MPI_Offset) <= 8 &&
                   sizeof(MPI_Count) <= 8 && sizeof(_Bool) == 1,
               "the integer kernels cover 1 to 8 bytes");

#define NAMED(h, type, group) {h, type, group, #h}
static const tml_named named[] = {
    NAMED(MPI_DOUBLE, TML_F64, TML_G_FLOAT),
    NAMED(MPI_FLOAT, TML_F32, TML_G_FLOAT),
    NAMED(MPI_INT, S_OF(int), TML_G_INT),
    NAMED(MPI_LONG, S_OF(long), TML_G_INT),
    NAMED(MPI_UNSIGNED, U_OF(unsigned), TML_G_INT),
    NAMED(MPI_UNSIGNED_LONG, U_OF(unsigned long), TML_G_INT),
    NAMED(MPI_LONG_LONG_INT, S_OF(long long), TML_G_INT),
    NAMED(MPI_LONG_LONG, S_OF(long long), TML_G_INT),
    NAMED(MPI_UNSIGNED_LONG_LONG, U_OF(unsigned long long), TML_G_INT),
    NAMED(MPI_SHORT, S_OF(short), TML_G_INT),
    NAMED(MPI_UNSIGNED_SHORT, U_OF(unsigned short), TML_G_INT),
    NAMED(MPI_SIGNED_CHAR, TML_I8, TML_G_INT),
    NAMED(MPI_UNSIGNED_CHAR, TML_U8, TML_G_INT),
    NAMED(MPI_INT8_T, TML_I8, TML_G_INT),
    NAMED(MPI_INT16_T, TML_I16, TML_G_INT),
    NAMED(MPI_INT32_T, TML_I32, TML_G_INT),
    NAMED(MPI_INT64_T, TML_I64, TML_G_INT),
    NAMED(MPI_UINT8_T, TML_U8, TML_G_INT),
    NAMED(MPI_UINT16_T, TML_U16, TML_G_INT),
    NAMED(MPI_UINT32_T, TML_U32, TML_G_INT),
    NAMED(MPI_UINT64_T, TML_U64, TML_G_INT),
    NAMED(MPI_AINT, S_OF(MPI_Aint), TML_G_MULTI),
    NAMED(MPI_OFFSET, S_OF(MPI_Offset), TML_G_MULTI),
    NAMED(MPI_COUNT, S_OF(MPI_Count), TML_G_MULTI),
    NAMED(MPI_C_BOOL, TML_BOOL, TML_G_LOGICAL),
    NAMED(MPI_LONG_DOUBLE, TML_F80, TML_G_FLOAT),
    NAMED(MPI_C_COMPLEX, TML_C32, TML_G_COMPLEX),
    NAMED(MPI_C_FLOAT_COMPLEX, TML_C32, TML_G_COMPLEX),
    NAMED(MPI_C_DOUBLE_COMPLEX, TML_C64, TML_G_COMPLEX),
    NAMED(MPI_C_LONG_DOUBLE_COMPLEX, TML_C80, TML_G_COMPLEX),
    NAMED(MPI_BYTE, TML_U8, TML_G_BYTE),
    NAMED(MPI_FLOAT_INT, TML_FLOAT_INT, TML_G_PAIR),
    NAMED(MPI_DOUBLE_INT, TML_DOUBLE_INT, TML_G_PAIR),
    NAMED(MPI_LONG_INT, TML_LONG_INT, TML_G_PAIR),
    NAMED(MPI_2INT, TML_2INT, TML_G_PAIR),
    NAMED(MPI_SHORT_INT, TML_SHORT_INT, TML_G_PAIR),
    NAMED(MPI_LONG_DOUBLE_INT, TML_LDOUBLE_INT, TML_G_PAIR),
};
#define NNAMED (sizeof named / sizeof named[0])

const tml_named *tml_named_find(MPI_Datatype dt)
{
    for (size_t i = 0; i < NNAMED; i++)
        if (named[i].handle == dt)
            return &named[i];
    return NULL;
}

static bool is_named(MPI_Datatype dt)
{
    int ni, na, nd, combiner;
    return PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED;
}

/* A zero-count MPI_Pack: MPI refuses an uncommitted datatype. */
static bool packable(MPI_Datatype dt)
{
    char in[1], out[1];
    int pos = 0;
    return PMPI_Pack(in, 0, dt, out, (int)sizeof out, &pos, tml_g.self) == MPI_SUCCESS;
}

tml_reason tml_dtype_of(MPI_Datatype dt, tml_dtype *out)
{
    MPI_Aint lb;
    *out = (tml_dtype){0};
    if (PMPI_Type_size(dt, &out->size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &lb, &out->extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &out->true_lb, &out->true_extent) != MPI_SUCCESS)
        return TML_INVALID;
    out->dense = out->size == out->extent && out->true_lb == 0 &&
                 out->true_extent == out->extent;
    const tml_named *n = tml_named_find(dt);
    /* a predefined type the kernels run when its layout is theirs */
    out->leaf = n && out->extent == (MPI_Aint)tml_type_size(n->type) ? n : NULL;
    out->named = n || is_named(dt);
    return out->named || packable(dt) ? TML_OK : TML_INVALID;
}

int tml_copy(const void *src, void *dst, int count, MPI_Datatype dt, tml_scratch *packed)
{
    int size = 0, pos = 0, used;
    int rc = PMPI_Pack_size(count, dt, tml_g.self, &size);
    void *buf = rc == MPI_SUCCESS ? tml_scratch_get(packed, size > 0 ? (size_t)size : 1) : NULL;
    if (rc == MPI_SUCCESS && !buf)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Pack(src, count, dt, buf, size, &pos, tml_g.self);
    used = pos;
    pos = 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Unpack(buf, used, &pos, dst, count, dt, tml_g.self);
    return rc;
}

void *tml_scratch_get(tml_scratch *s, size_t bytes)
{
    if (bytes > s->size) {
        void *grown = realloc(s->p, bytes);
        if (!grown)
            return NULL;
        s->p = grown;
        s->size = bytes;
    }
    return s->p;
}

void tml_scratch_free(tml_scratch *s)
{
    free(s->p);
    *s = (tml_scratch){NULL, 0};
}

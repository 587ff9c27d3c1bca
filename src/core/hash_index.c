/* hash_index.c: linear probing at a load of at most one half (hash_index.h). */
#include "core/hash_index.h"

#include <stdlib.h>

#include "core/error.h"
#include "core/splitmix.h"

int32_t trd_index_find(const trd_index *ix, uint64_t h, trd_index_same same, const void *ctx)
{
    if (ix->cap == 0)
        return -1;
    for (size_t i = (size_t)h & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
        const trd_index_slot *s = &ix->slots[i];
        if (s->id < 0)
            return -1;
        if (s->hash == h && same(ctx, s->id))
            return s->id;
    }
}

static void put(trd_index_slot *slots, size_t cap, uint64_t h, int32_t id)
{
    size_t i = (size_t)h & (cap - 1);
    while (slots[i].id >= 0)
        i = (i + 1) & (cap - 1);
    slots[i] = (trd_index_slot){h, id};
}

static trd_status grow(trd_index *ix, const char *what)
{
    size_t cap = ix->cap ? 2 * ix->cap : 16;
    trd_index_slot *slots = cap <= SIZE_MAX / sizeof *slots ? malloc(cap * sizeof *slots) : NULL;
    if (!slots)
        return trd_fail(TRD_ENOMEM, "no memory to index %zu %s", ix->count, what);
    for (size_t i = 0; i < cap; i++)
        slots[i].id = -1;
    for (size_t i = 0; i < ix->cap; i++)
        if (ix->slots[i].id >= 0)
            put(slots, cap, ix->slots[i].hash, ix->slots[i].id);
    free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
    return TRD_OK;
}

trd_status trd_index_add(trd_index *ix, uint64_t h, int32_t id, const char *what)
{
    if (2 * (ix->count + 1) > ix->cap) {
        trd_status st = grow(ix, what);
        if (st != TRD_OK)
            return st;
    }
    put(ix->slots, ix->cap, h, id);
    ix->count++;
    return TRD_OK;
}

void trd_index_free(trd_index *ix)
{
    free(ix->slots);
    *ix = (trd_index){0};
}

uint64_t trd_hash_text(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

uint64_t trd_hash_pair(int32_t a, int32_t b)
{
    return trd_mix64(((uint64_t)(uint32_t)a << 32) | (uint32_t)b);
}

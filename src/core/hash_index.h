/* hash_index.h: an open-addressing hash index from keys to int32 ids, for
 * the loaders' lookups by name (platform nodes, SimGrid links) and by
 * pair (a link's ends): a file of n items is then read in O(n), not
 * O(n^2).  The keys stay with their owner: the index keeps each id's hash
 * and asks the owner whether an id holds the key looked up. */
#ifndef TRD_CORE_HASH_INDEX_H
#define TRD_CORE_HASH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/treduce.h"

typedef struct trd_index_slot {
    uint64_t hash;
    int32_t id; /* -1: empty */
} trd_index_slot;

typedef struct trd_index {
    trd_index_slot *slots;
    size_t cap; /* a power of two, or 0 before the first add */
    size_t count;
} trd_index;

/* Whether id holds the key looked up (ctx: the owner and the key). */
typedef bool (*trd_index_same)(const void *ctx, int32_t id);

/* The id under hash h for which same(ctx, id) holds, or -1. */
int32_t trd_index_find(const trd_index *ix, uint64_t h, trd_index_same same, const void *ctx);
/* Adds id under hash h (the caller has checked that the key is new);
 * TRD_ENOMEM naming `what` when the index cannot grow. */
trd_status trd_index_add(trd_index *ix, uint64_t h, int32_t id, const char *what);
void trd_index_free(trd_index *ix);

/* FNV-1a of a string, and splitmix64's mix of a pair of ids. */
uint64_t trd_hash_text(const char *s);
uint64_t trd_hash_pair(int32_t a, int32_t b);

#endif

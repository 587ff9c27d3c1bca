/* fifo.h: a growing FIFO of completions (step id, sender), the queue both
 * the runtime's local steps (src/runtime/exec.c) and the threads wire's
 * mailboxes (src/wire/threads.c) hand finished steps through.
 * Header-only: two small functions, inlined where they are used. */
#ifndef TRD_CORE_FIFO_H
#define TRD_CORE_FIFO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"

typedef struct trd_completion {
    int32_t id, from; /* from: the sender of a receive, else -1 */
} trd_completion;

typedef struct trd_fifo {
    trd_completion *items; /* a ring: items[head], then on modulo cap */
    size_t head, len, cap;
} trd_fifo;

/* Appends (id, from), doubling the ring when full. */
static inline trd_status trd_fifo_push(trd_fifo *f, int32_t id, int32_t from)
{
    if (f->len == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        trd_completion *grown = malloc(cap * sizeof *grown);
        if (!grown)
            return trd_fail(TRD_ENOMEM, "out of memory for %zu completions", cap);
        for (size_t i = 0; i < f->len; i++)
            grown[i] = f->items[(f->head + i) % f->cap];
        free(f->items);
        f->items = grown;
        f->head = 0;
        f->cap = cap;
    }
    f->items[(f->head + f->len++) % f->cap] = (trd_completion){id, from};
    return TRD_OK;
}

/* Takes the oldest completion; false when empty. */
static inline bool trd_fifo_pop(trd_fifo *f, trd_completion *out)
{
    if (f->len == 0)
        return false;
    *out = f->items[f->head];
    f->head = (f->head + 1) % f->cap;
    f->len--;
    return true;
}

#endif

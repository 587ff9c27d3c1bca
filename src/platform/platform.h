/* platform.h: the platform graph of Legrand, Marchal and Robert (Sec. 2),
 * inside the library.  A directed graph: nodes compute (speed = tasks per
 * time unit, a task takes 1/speed) or are routers (compute nothing); a link
 * e = (from, to) carries a message of size m in m * cost(e) time units.
 * Every number is an exact rational (GMP), because the steady-state LPs are
 * solved exactly (src/steady/).
 *
 * The public face is include/treduce/platform.h (opaque trd_platform,
 * loaders, generator, accessors); src/steady/ reads the struct directly. */
#ifndef TRD_PLATFORM_PLATFORM_H
#define TRD_PLATFORM_PLATFORM_H

#include <gmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/hash_index.h"

#include "treduce/platform.h"

typedef struct trd_pnode {
    char *name;    /* unique, non-empty */
    bool router;   /* routers compute nothing and take part in no operation */
    mpq_t speed;   /* > 0 for a computing node, 0 for a router or a node
                      whose file gives none (scatters and gossips compute
                      nothing; a reduce refuses it, steady.c) */
    int32_t cores; /* ranks a testbed host runs (1 unless the file says;
                      0 for a router) */
} trd_pnode;

typedef struct trd_plink {
    int32_t from, to; /* node indices, from != to */
    mpq_t cost;       /* > 0: time per unit of message size */
} trd_plink;

struct trd_platform {
    int32_t n_nodes, n_links;
    trd_pnode *nodes;
    trd_plink *links;
    int32_t cap_nodes, cap_links; /* allocated lengths of nodes and links */
    trd_index by_name, by_ends;   /* nodes by name, links by (from, to) */
};

/* Adds a node (name copied; refused when empty or already used; speed > 0
 * unless router, in which case speed is ignored and stored as 0; NULL for
 * a computing node whose speed is not given, stored as 0). */
trd_status trd_platform_add_node(trd_platform *pf, const char *name, bool router,
                                 const mpq_t speed, int32_t *id);
/* Sets the cores of computing node `node` (1 to TRD_PLATFORM_CORES_MAX;
 * refused for a router or a number out of range, naming the node). */
trd_status trd_platform_set_cores(trd_platform *pf, int32_t node, int64_t cores);
/* Adds the directed link from -> to (cost > 0, from != to, both existing;
 * a second link with the same ends is refused). */
trd_status trd_platform_add_link(trd_platform *pf, int32_t from, int32_t to, const mpq_t cost);
/* Index of the link from -> to, or -1. */
int32_t trd_platform_link(const trd_platform *pf, int32_t from, int32_t to);

/* Parses an exact non-negative rational: an integer "3", a decimal "0.25"
 * or "1e-3", or a fraction "2/3".  Refuses anything else (sign, NaN,
 * "1/0", trailing text) with a message naming `what` and the text. */
trd_status trd_rational_parse(const char *text, const char *what, mpq_t out);

#endif

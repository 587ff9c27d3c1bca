/* treduce/platform.h: heterogeneous platform graphs (Legrand, Marchal and
 * Robert 2004, Sec. 2) and the steady-state problems solved on them; in
 * libtreduce_steady (pkg-config treduce-steady), with steady.h and
 * steady_series.h.
 *
 * A platform is a directed graph of nodes (compute speed in tasks per time
 * unit, or routers that compute nothing) and links (time per unit of
 * message size).  Every number is exact: files give integers, decimals or
 * fractions "p/q", and the accessors print them back as exact fractions.
 * File formats: docs/PLATFORMS.md. */
#ifndef TREDUCE_PLATFORM_H
#define TREDUCE_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "treduce/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct trd_platform trd_platform;

/* An empty platform (add nodes and links through the loaders). */
trd_status trd_platform_create(trd_platform **out);
void trd_platform_free(trd_platform *pf);

/* Loads the JSON format of docs/PLATFORMS.md.  Errors name the file and
 * what is wrong (unknown node in a link, zero or negative cost, ...). */
trd_status trd_platform_load_json(const char *path, trd_platform **out);
/* Imports a SimGrid platform XML file (hosts with speed, links with
 * bandwidth and latency, routes between hosts); docs/PLATFORMS.md says how
 * SimGrid's units become costs and speeds. */
trd_status trd_platform_load_simgrid(const char *path, trd_platform **out);
/* Either loader, chosen by the file's content (XML or JSON). */
trd_status trd_platform_load(const char *path, trd_platform **out);
/* Writes the platform as JSON (exact numbers as strings). */
trd_status trd_platform_write_json(const trd_platform *pf, FILE *out);

/* A random hierarchical platform in the spirit of Tiers (Sec. 4.7): a WAN
 * of routers, MANs hanging from it, `lans` LANs (1 to TRD_PLATFORM_LANS_MAX)
 * whose hosts are the computing nodes; random bandwidths and speeds drawn
 * from `seed` only. */
#define TRD_PLATFORM_LANS_MAX 1000
trd_status trd_platform_generate(uint64_t seed, int32_t lans, trd_platform **out);

int32_t trd_platform_node_count(const trd_platform *pf);
int32_t trd_platform_link_count(const trd_platform *pf);
/* Index of the node called `name`, or -1. */
int32_t trd_platform_find(const trd_platform *pf, const char *name);
const char *trd_platform_node_name(const trd_platform *pf, int32_t node);
int trd_platform_node_is_router(const trd_platform *pf, int32_t node);
/* How many ranks a computing node runs at once - its cores, sharing its
 * memory (1 unless the file says: JSON "cores", SimGrid "core"); 0 for a
 * router or an index out of range.  `treduce testbed run` places that many
 * ranks on the host (docs/TESTBED.md); the steady-state problems ignore it
 * (a node's speed is its whole compute rate). */
#define TRD_PLATFORM_CORES_MAX 1000000
int32_t trd_platform_node_cores(const trd_platform *pf, int32_t node);
/* Ends of link number `link` (0 <= link < trd_platform_link_count), or -1
 * when out of range. */
int32_t trd_platform_link_from(const trd_platform *pf, int32_t link);
int32_t trd_platform_link_to(const trd_platform *pf, int32_t link);
/* The exact speed of a node ("0" for a router) or cost of a link as text,
 * "3" or "2/3", in *text, which the caller frees with free(); TRD_EINVAL
 * for an index out of range. */
trd_status trd_platform_node_speed(const trd_platform *pf, int32_t node, char **text);
trd_status trd_platform_link_cost(const trd_platform *pf, int32_t link, char **text);

#ifdef __cplusplus
}
#endif

#endif

/* testbed_internal.h: what the parts of the testbed module (testbed.h)
 * share and nothing outside it sees: diagnostics, names and addresses,
 * routes, the state folder, child processes, namespaces. */
#ifndef TRD_TESTBED_INTERNAL_H
#define TRD_TESTBED_INTERNAL_H

#include "testbed.h"

#if defined(__GNUC__)
#define TB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TB_PRINTF(a, b)
#endif

/* Says a printf-style line of kind `kind` through r; returns `status`, so
 * that callers write `return tb_say(r, TB_SAY_USAGE, TB_REFUSED, ...)`. */
tb_status tb_say(const tb_report *r, tb_say_kind kind, tb_status status, const char *fmt, ...)
    TB_PRINTF(4, 5);
/* Says what a failed library call left in trd_errmsg() (its status's text
 * when empty); bad input is a refusal, anything else a failure. */
tb_status tb_say_lib(const tb_report *r, trd_status status);

/* The layout of platform pf (loaded from path) for a testbed called name;
 * says why when the platform cannot be built (too many nodes, hosts that
 * cannot reach each other, a rate out of range). */
tb_status tb_layout_make(const tb_report *r, const trd_platform *pf, const char *path,
                         const char *name, double unit_bytes, double time_unit,
                         tb_layout *out);
/* Fills t->pair from t->links; false when out of memory. */
bool tb_layout_index(tb_layout *t);
/* Index of the link between u and v (either order), or -1. */
int32_t tb_link_between(const tb_layout *t, int32_t u, int32_t v);
/* Rate of the directed hop u -> v (bit/s; 0 if none). */
double tb_hop_rate(const tb_layout *t, int32_t u, int32_t v);
/* The smallest rate along the route from u to d (bit/s); 0 when none. */
double tb_route_rate(const tb_layout *t, int32_t u, int32_t d);
/* Hops on the route from u to d; -1 when none. */
int32_t tb_route_hops(const tb_layout *t, int32_t u, int32_t d);

/* Names and addresses (buffers of at least 64 bytes). */
void tb_ns_name(const tb_layout *t, int32_t node, char *buf); /* node -1: management */
void tb_mgmt_addr(int32_t node, char *buf);                   /* node -1: mpirun's */
void tb_host_addr(int32_t node, char *buf);
/* Address of node's end of link k (node must be one of its ends). */
void tb_link_addr(const tb_layout *t, int32_t k, int32_t node, char *buf);
/* Interface in node u towards neighbour v ("n<v>"). */
void tb_ifname(int32_t v, char *buf);

/* The state folder of testbed name. */
void tb_state_dir(const char *name, char *buf, size_t size);
/* Saves t as state.json in its state folder (written whole). */
tb_status tb_state_save(const tb_report *r, const tb_layout *t);

/* A file written whole: into a temporary beside it (dir/.NAME.tmp-PID)
 * that tb_file_close renames over it, so that no reader - a job starting
 * beside another - sees half of it.  A temporary that a killed process
 * leaves is in the state folder, which `down` removes. */
typedef struct tb_file {
    char path[600], tmp[640];
    FILE *f;
} tb_file;
/* Opens dir/name's temporary; NULL (said) on failure. */
FILE *tb_file_open(const tb_report *r, tb_file *o, const char *dir, const char *name);
/* Closes it and, when ok, renames it over the file; else removes it.
 * Whether the file now holds what was written (a failure said). */
bool tb_file_close(const tb_report *r, tb_file *o, bool ok);
/* Creates folder dir if missing; says why and returns false on failure. */
bool tb_make_dir(const tb_report *r, const char *dir);
/* Removes path and everything under it (false: something remained). */
bool tb_remove_tree(const char *path);

/* Whether this process may make and enter namespaces (CAP_NET_ADMIN and
 * CAP_SYS_ADMIN); else says so in one line. */
bool tb_privileged(const tb_report *r);
/* Builds everything of t (already saved); on failure removes it again. */
tb_status tb_build(const tb_report *r, const tb_layout *t);
/* Enters network namespace ns (this process). */
bool tb_enter(const tb_report *r, const char *ns);
/* Makes this process a node of its own, as a host's processes are on a
 * real cluster: its own mounts with a fresh tmpfs on /dev/shm, and its
 * own host name (the first 64 bytes of hostname); its children share
 * them.  Says why and returns false when it cannot. */
bool tb_enter_node(const tb_report *r, const char *hostname);

#endif

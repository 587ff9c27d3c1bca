/* testbed.h: `treduce testbed` (docs/TESTBED.md), an emulated cluster of
 * Linux network namespaces built from a platform file, in four parts:
 *   testbed_layout.c  the platform checked and laid out: nodes, links and
 *                     their rates, addresses, names, routes (no system call);
 *   testbed_state.c   the layout saved under /run/treduce/testbed/NAME and
 *                     read back (show, run, down), and `show`;
 *   testbed_build.c   the namespaces, veth pairs, tc and routes made with
 *                     `ip` and `tc` (child processes, no shell), and removed;
 *   testbed_run.c     `run` (mpirun across the hosts) and its rsh agent.
 * cmd_testbed.c reads the options. */
#ifndef TRD_TOOLS_TESTBED_H
#define TRD_TOOLS_TESTBED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "treduce/platform.h"

/* Longest testbed name: names of namespaces are "trd-NAME.I". */
#define TB_NAME_MAX 16
/* Most nodes: one management and one host address per node in a /24. */
#define TB_NODES_MAX 250
/* Rates a tc token bucket emulates faithfully (bit/s). */
#define TB_RATE_MIN 8000.0
#define TB_RATE_MAX 40e9
/* MTU of the emulated links (jumbo frames: less header per byte). */
#define TB_MTU 9000
/* Where testbeds keep their state. */
#define TB_STATE_ROOT "/run/treduce/testbed"
/* The management network (mpirun's daemons), the hosts' own addresses
 * (MPI data) and the links' point-to-point /31 subnets: all in the
 * benchmarking range 198.18.0.0/15 (RFC 2544). */
#define TB_MGMT_NET "198.19.0.0/24"
#define TB_HOST_NET "198.19.1.0/24"

typedef struct tb_node {
    char *name;  /* the platform's */
    bool router; /* computes nothing; forwards */
} tb_node;

/* One veth pair between nodes a < b: a platform link a -> b, b -> a or
 * both.  rate[0] is a -> b, rate[1] b -> a, in bit/s; 0 where the
 * platform has no link that way (nothing is routed there). */
typedef struct tb_link {
    int32_t a, b;
    double rate[2];
} tb_link;

typedef struct tb_layout {
    char name[TB_NAME_MAX + 1];
    char *platform;    /* the file it was built from (absolute path) */
    double unit_bytes; /* bytes in one unit of message size */
    double time_unit;  /* seconds in one time unit of the platform */
    int32_t n_nodes, n_hosts, n_links;
    tb_node *nodes;
    tb_link *links;
    int32_t *next; /* n_nodes^2: next[u * n + d] = the node after u on the
                      route from u to d (d when adjacent, u when u = d, -1
                      when d cannot be reached) */
    int32_t *pair; /* n_nodes^2: the link between u and v, or -1 (tb_layout_index) */
    bool complete; /* state only: the build finished */
} tb_layout;

/* Whether name is a valid testbed name; else prints why (returns false). */
bool tb_name_ok(const char *cmd, const char *name);

/* The layout of platform pf (loaded from path) for a testbed called name;
 * prints why and returns a CLI status when the platform cannot be built
 * (too many nodes, hosts that cannot reach each other, a rate out of
 * range). */
int tb_layout_make(const trd_platform *pf, const char *path, const char *name,
                   double unit_bytes, double time_unit, tb_layout *out);
void tb_layout_free(tb_layout *t);

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

/* State: the folder of testbed name, and the layout saved there.  load
 * prints why and returns a CLI status when there is none. */
void tb_state_dir(const char *name, char *buf, size_t size);
int tb_state_save(const char *cmd, const tb_layout *t);
int tb_state_load(const char *cmd, const char *name, tb_layout *t);
/* `treduce testbed show` of a loaded layout. */
int tb_show(const tb_layout *t, bool json);

/* Whether this process may make namespaces; else prints one line why. */
bool tb_privileged(const char *cmd);
/* Builds everything of t (already saved); on failure removes it again. */
int tb_build(const char *cmd, const tb_layout *t);
/* Removes everything of testbed name: processes in its namespaces, the
 * namespaces (and so their links), the state.  `missing_ok` false: an
 * error when there is nothing of that name. */
int tb_remove(const char *cmd, const char *name, bool missing_ok);
/* Runs argv[0] with argv, its standard input fed from `input` (NULL: none),
 * and waits: 0 when it exited 0, else prints what failed (returns -1). */
int tb_spawn(const char *cmd, char *const argv[], const char *input);
/* Removes path and everything under it (false: something remained). */
bool tb_remove_tree(const char *path);
/* Enters network namespace ns (this process). */
bool tb_enter(const char *cmd, const char *ns);

/* `treduce testbed run`: mpirun COMMAND across the hosts (or every node). */
typedef struct tb_run_args {
    const char *name, *mpirun;
    int64_t np;       /* 0: one rank per host (per node with all_nodes) */
    bool all_nodes;   /* one slot per node, routers included, rank i on node i */
    char **command;   /* NULL-terminated */
} tb_run_args;
int tb_run(const tb_run_args *a);
/* The rsh agent: `treduce testbed agent NAME JOBDIR HOST COMMAND...`. */
int tb_agent(int argc, char **argv);

#endif

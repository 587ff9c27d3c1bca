/* testbed.h: the testbed module (docs/TESTBED.md), an emulated cluster of
 * Linux network namespaces built from a platform file, and MPI jobs run
 * across it: libtreduce_testbed, a static library internal to the tool
 * (not installed: it needs root, iproute2 and Open MPI's launcher, and is
 * no API a program links), under `treduce testbed` (tools/cmd_testbed.c,
 * which reads the options and turns statuses into exit codes).  Its parts:
 *   layout.c  the platform checked and laid out: nodes, links and their
 *             rates, addresses, names, routes (no system call);
 *   up.c      `up` as a whole: the layout, its state claimed, saved, built;
 *   state.c   the layout saved under TB_STATE_ROOT/NAME and read back
 *             (show, run, down), and written for `show`;
 *   build.c   the namespaces, veth pairs, tc and routes made with `ip` and
 *             `tc` (child processes, no shell), setns, privileges;
 *   remove.c  everything of a testbed removed, found by name;
 *   run.c     a job: mpirun across the hosts, and its rsh agent.
 * Every address is in 198.18.0.0/15 (RFC 2544's benchmarking range), every
 * name carries the testbed's, and whatever fails, what was made is removed.
 *
 * Diagnostics go to the caller's tb_report, one line each; a call returns
 * TB_OK, TB_FAILED (the system, memory: exit status 1) or TB_REFUSED (its
 * input: exit status 2). */
#ifndef TRD_TESTBED_TESTBED_H
#define TRD_TESTBED_TESTBED_H

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

typedef enum tb_status { TB_OK = 0, TB_FAILED, TB_REFUSED } tb_status;

/* What a diagnostic is about: a failure or a refusal (TB_SAY_ERROR), a
 * refusal that the command's usage explains (TB_SAY_USAGE: the command
 * line may point to its help), a failure of the rsh agent's own
 * (TB_SAY_AGENT). */
typedef enum tb_say_kind { TB_SAY_ERROR, TB_SAY_USAGE, TB_SAY_AGENT } tb_say_kind;
/* say gets each diagnostic as one line of text, without a newline. */
typedef struct tb_report {
    void (*say)(void *ctx, tb_say_kind kind, const char *text);
    void *ctx;
} tb_report;

typedef struct tb_node {
    char *name;    /* the platform's */
    bool router;   /* computes nothing; forwards */
    int32_t cores; /* a host's ranks, sharing its memory (the platform's
                      "cores"); 0 for a router */
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
    int64_t n_cores; /* of all hosts: the default number of ranks */
    tb_node *nodes;
    tb_link *links;
    int32_t *next; /* n_nodes^2: next[u * n + d] = the node after u on the
                      route from u to d (d when adjacent, u when u = d, -1
                      when d cannot be reached) */
    int32_t *pair; /* n_nodes^2: the link between u and v, or -1 */
    bool complete; /* state only: the build finished */
} tb_layout;

/* Whether name is a valid testbed name (1 to TB_NAME_MAX of a-z, 0-9 and
 * '-', not starting with '-'); else says why.  Every call below checks
 * its name so (a name is a path and a prefix of namespaces). */
bool tb_name_ok(const tb_report *r, const char *name);

/* up, down and run need root (CAP_NET_ADMIN and CAP_SYS_ADMIN: namespaces
 * are made and entered): without it they fail, said in one line, before
 * anything else. */

/* `up`: testbed `name` built from the platform file at path, a link of
 * cost c carrying unit_bytes / (c x time_unit) bytes per second; its
 * layout in *t (release with tb_layout_free, also after a failure).
 * Refused before anything is made for a platform that does not load or
 * cannot be built (too many nodes, no host, hosts that cannot reach each
 * other, a rate out of range) and for a name that exists; whatever fails
 * later, what was made is removed again. */
tb_status tb_up(const tb_report *r, const char *path, const char *name, double unit_bytes,
                double time_unit, tb_layout *t);
/* The layout of testbed `name` read from its state (refused when there is
 * none); release with tb_layout_free. */
tb_status tb_load(const tb_report *r, const char *name, tb_layout *t);
void tb_layout_free(tb_layout *t);
/* `show`: nodes, addresses, link rates and routes as text, or as JSON. */
void tb_write(const tb_layout *t, bool json, FILE *out);
/* `down`: removes everything of testbed name - processes in its
 * namespaces, the namespaces (and so their links), the state.  With
 * missing_ok false, refused when there is nothing of that name. */
tb_status tb_down(const tb_report *r, const char *name, bool missing_ok);

/* A job across the hosts of a testbed (`run`). */
typedef struct tb_run_args {
    const char *name, *mpirun; /* mpirun NULL: the one on the PATH */
    int64_t np;       /* 0: one rank per core of every host (per node with
                         all_nodes) */
    bool all_nodes;   /* one slot per node, routers included, rank i on node i */
    bool round_robin; /* rank i on host i mod hosts, not consecutive ranks on
                         each host up to its cores (block, mpirun's default) */
    char **command;   /* NULL-terminated */
} tb_run_args;
/* Replaces this process by Open MPI's mpirun, in the management namespace,
 * running a->command across the hosts; returns only when it cannot. */
tb_status tb_run(const tb_report *r, const tb_run_args *a);
/* The rsh agent mpirun calls where it would call ssh (tb_run gives it
 * "TOOL testbed agent NAME JOBDIR"): replaces this process by /bin/sh -c
 * running command[0..] (the words joined, as sshd would) in the namespace
 * of the host whose management address is `host`; returns only when it
 * cannot. */
tb_status tb_agent(const tb_report *r, const char *name, const char *jobdir, const char *host,
                   char **command);

#endif

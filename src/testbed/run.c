/* run.c: `treduce testbed run -- COMMAND...` starts an MPI job on a
 * testbed's hosts, and `treduce testbed agent` is the rsh agent it gives
 * Open MPI.
 *
 * mpirun runs in the management namespace; its hostfile names each host by
 * its management address, and the agent - called as `agent NAME HOST
 * COMMAND...` where ssh would be - enters HOST's namespace and runs the
 * daemon's command line with /bin/sh -c, as sshd would.  So the daemons
 * talk to mpirun over the management bridge (oob_tcp_if_include), while
 * the ranks' messages go between the hosts' own addresses
 * (btl_tcp_if_include), which are routed over the shaped links; Open MPI
 * sees one node per host, so shared memory (vader) joins only ranks on one
 * host.  A host runs as many ranks as it has cores (the platform's
 * "cores"), consecutive ranks on each host (block, as mpirun places them
 * on a real cluster) or round-robin.  Open MPI only: the options are its
 * MCA parameters.
 *
 * The ranks of one host share what a real node's processes share, and
 * nothing more: the agent gives each host's daemon, and so its ranks, a
 * mount namespace with a /dev/shm of its own (a fresh tmpfs) and a UTS
 * namespace with the node's name as its host name.  On the one /dev/shm
 * and host name of this machine, Open MPI's shared-memory segments - named
 * by host name, job and local rank - were the same files on every host,
 * so host A's local rank 1 read what host B's wrote into them (SIGSEGV in
 * vader's poll, as soon as two hosts had two ranks each).
 *
 * Each host also gets a temporary folder of its own for each job (TMPDIR:
 * STATE/jobs/PID/I, mpirun's STATE/jobs/PID/m), as separate machines
 * would: Open MPI's daemons keep their session folders there, and on one
 * shared /tmp the daemons of a job that just ended remove folders that
 * those of the next are creating (a daemon that dies so, after it left
 * its agent, leaves mpirun waiting for it forever). */
#define _GNU_SOURCE /* environ */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testbed_internal.h"

/* The hostfile: one line per chosen node, its management address, its
 * cores as slots (one with all_nodes); written whole (tb_file), so that
 * runs starting at once never read half a file. */
static tb_status write_hostfile(const tb_report *r, const tb_layout *t, bool all_nodes,
                                char *path, size_t size)
{
    char dir[512], addr[64];
    tb_file out;
    tb_state_dir(t->name, dir, sizeof dir);
    FILE *f = tb_file_open(r, &out, dir, all_nodes ? "hostfile-nodes" : "hostfile-hosts");
    for (int32_t i = 0; f && i < t->n_nodes; i++) {
        tb_mgmt_addr(i, addr);
        if (all_nodes || !t->nodes[i].router)
            fprintf(f, "%s slots=%d\n", addr, all_nodes ? 1 : (int)t->nodes[i].cores);
    }
    if (!f || !tb_file_close(r, &out, true) || strlen(out.path) >= size)
        return TB_FAILED;
    memcpy(path, out.path, strlen(out.path) + 1);
    return TB_OK;
}

/* The variables a job can read: the testbed, and its units (the
 * steady-state run converts the LP's throughput with them). */
static void export_units(const tb_layout *t)
{
    char v[64];
    setenv("TRD_TESTBED", t->name, 1);
    snprintf(v, sizeof v, "%.17g", t->unit_bytes);
    setenv("TRD_TESTBED_UNIT_BYTES", v, 1);
    snprintf(v, sizeof v, "%.17g", t->time_unit);
    setenv("TRD_TESTBED_TIME_UNIT", v, 1);
    setenv("TRD_MPI_CROWDED", "1", 1); /* the hosts share this machine's cores */
    if (geteuid() == 0) { /* a testbed needs root: Open MPI must be told that is meant */
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
}

#define ARGS_MAX 64

/* mpirun's arguments up to the command (argv holds ARGS_MAX). */
static int mpirun_args(const tb_run_args *a, const char *hostfile,
                       int64_t slots, char *agent, char *np, char **argv)
{
    static const char *const mca[][2] = {
        {"plm_rsh_no_tree_spawn", "1"},        /* mpirun starts every daemon itself */
        {"oob_tcp_if_include", TB_MGMT_NET},   /* daemons: the management bridge */
        {"pml", "ob1"},                        /* MPI data through the BTLs below */
        {"btl", "self,vader,tcp"},             /* vader within a host only */
        {"btl_tcp_if_include", TB_HOST_NET},   /* between hosts: their own addresses */
        {"mpi_yield_when_idle", "1"},          /* many ranks share this machine's cores */
    };
    int n = 0;
    argv[n++] = (char *)(a->mpirun ? a->mpirun : "mpirun");
    argv[n++] = "--hostfile";
    argv[n++] = (char *)hostfile;
    argv[n++] = "-np";
    argv[n++] = np;
    argv[n++] = "--map-by";
    argv[n++] = a->all_nodes || a->round_robin ? "node" : "slot"; /* slot: block */
    if (a->np > slots)
        argv[n++] = "--oversubscribe";
    argv[n++] = "--mca";
    argv[n++] = "plm_rsh_agent";
    argv[n++] = agent;
    for (size_t i = 0; i < sizeof mca / sizeof mca[0]; i++) {
        argv[n++] = "--mca";
        argv[n++] = (char *)mca[i][0];
        argv[n++] = (char *)mca[i][1];
    }
    static const char *const vars[] = {"TRD_TESTBED", "TRD_TESTBED_UNIT_BYTES",
                                       "TRD_TESTBED_TIME_UNIT", "TRD_MPI_CROWDED"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        argv[n++] = "-x";
        argv[n++] = (char *)vars[i];
    }
    return n;
}

/* The folder of this job's temporary folders, STATE/jobs/PID (made);
 * those of earlier jobs whose mpirun is gone are removed first. */
static tb_status job_dir(const tb_report *r, const tb_layout *t, char *buf, size_t size)
{
    char jobs[600];
    tb_state_dir(t->name, jobs, sizeof jobs);
    strncat(jobs, "/jobs", sizeof jobs - strlen(jobs) - 1);
    DIR *d = opendir(jobs);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char *end, old[1024];
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == EPERM))
            continue;
        if (kill((pid_t)pid, 0) != 0) {
            snprintf(old, sizeof old, "%s/%s", jobs, e->d_name);
            tb_remove_tree(old);
        }
    }
    if (d)
        closedir(d);
    snprintf(buf, size, "%s/%ld", jobs, (long)getpid());
    if ((mkdir(jobs, 0755) != 0 && errno != EEXIST) || mkdir(buf, 0755) != 0)
        return tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot create %s: %s", buf, strerror(errno));
    return TB_OK;
}

/* dir/sub, made, as TMPDIR. */
static bool set_tmpdir(const tb_report *r, const char *dir, const char *sub)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot create %s: %s", path, strerror(errno));
        return false;
    }
    return setenv("TMPDIR", path, 1) == 0;
}

/* The rsh agent's command line: this very program (the tool, whose
 * `testbed agent` calls tb_agent). */
static tb_status agent_line(const tb_report *r, const tb_layout *t, const char *jobs, char *buf,
                            size_t size)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot find this program: %s",
                      strerror(errno));
    self[len] = '\0';
    if (strchr(self, ' ') || strchr(self, '\t')) /* Open MPI splits the agent at spaces */
        return tb_say(r, TB_SAY_ERROR, TB_FAILED, "this program's path '%s' has a space: Open "
                      "MPI cannot use it as its rsh agent", self);
    snprintf(buf, size, "%s testbed agent %s %s", self, t->name, jobs);
    return TB_OK;
}

tb_status tb_run(const tb_report *r, const tb_run_args *a)
{
    tb_layout t;
    if (!tb_privileged(r))
        return TB_FAILED;
    tb_status rc = tb_load(r, a->name, &t);
    if (rc != TB_OK)
        return rc;
    char hostfile[sizeof ((tb_file *)0)->path], jobs[700], agent[5000], np[32], ns[64],
        *argv[ARGS_MAX + 1024];
    int64_t slots = a->all_nodes ? t.n_nodes : t.n_cores;
    tb_run_args args = *a;
    args.np = a->np > 0 ? a->np : slots;
    size_t ncmd = 0;
    while (a->command[ncmd])
        ncmd++;
    if (!t.complete)
        rc = tb_say(r, TB_SAY_USAGE, TB_REFUSED, "testbed '%s' is incomplete (its 'up' failed "
                    "or still runs): 'treduce testbed down --name %s'", t.name, t.name);
    else if (ncmd == 0 || ncmd > 1000)
        rc = tb_say(r, TB_SAY_USAGE, TB_REFUSED, "run needs a command after '--' (at most "
                    "1000 words)");
    if (rc == TB_OK)
        rc = write_hostfile(r, &t, a->all_nodes, hostfile, sizeof hostfile);
    if (rc == TB_OK)
        rc = job_dir(r, &t, jobs, sizeof jobs);
    if (rc == TB_OK)
        rc = agent_line(r, &t, jobs, agent, sizeof agent);
    if (rc == TB_OK && !set_tmpdir(r, jobs, "m"))
        rc = TB_FAILED;
    if (rc != TB_OK) {
        tb_layout_free(&t);
        return rc;
    }
    snprintf(np, sizeof np, "%lld", (long long)args.np);
    int n = mpirun_args(&args, hostfile, slots, agent, np, argv);
    memcpy(argv + n, a->command, (ncmd + 1) * sizeof *argv);
    export_units(&t);
    tb_ns_name(&t, -1, ns);
    tb_layout_free(&t);
    fflush(NULL);
    if (!tb_enter(r, ns))
        return TB_FAILED;
    execvp(argv[0], argv);
    return tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot run %s: %s%s", argv[0], strerror(errno),
                  errno == ENOENT ? " (install openmpi-bin, or give --mpirun)" : "");
}

/* The node whose management address is host, or -1. */
static int32_t node_of(const tb_layout *t, const char *host)
{
    char addr[64];
    for (int32_t i = 0; i < t->n_nodes; i++) {
        tb_mgmt_addr(i, addr);
        if (!strcmp(addr, host))
            return i;
    }
    return -1;
}

tb_status tb_agent(const tb_report *r, const char *name, const char *jobdir, const char *host,
                   char **command)
{
    tb_layout t;
    tb_status rc = tb_load(r, name, &t);
    if (rc != TB_OK)
        return rc;
    int32_t node = node_of(&t, host);
    size_t len = 1;
    for (char **w = command; *w; w++)
        len += strlen(*w) + 1;
    char ns[64], *line = calloc(len, 1);
    if (node < 0 || !line) {
        tb_say(r, TB_SAY_AGENT, TB_FAILED, "'%s' is no host of testbed '%s'", host, t.name);
        tb_layout_free(&t);
        free(line);
        return TB_FAILED;
    }
    for (char **w = command; *w; w++) { /* ssh's way: the words joined, for the remote shell */
        strcat(line, *w);
        strcat(line, w[1] ? " " : "");
    }
    tb_ns_name(&t, node, ns);
    setenv("TRD_TESTBED_NODE", t.nodes[node].name, 1);
    char sub[32];
    snprintf(sub, sizeof sub, "%d", (int)node);
    bool tmp = set_tmpdir(r, jobdir, sub);
    bool entered = tmp && tb_enter(r, ns) && tb_enter_node(r, t.nodes[node].name);
    tb_layout_free(&t);
    if (!entered) {
        free(line);
        return TB_FAILED;
    }
    execl("/bin/sh", "sh", "-c", line, (char *)NULL);
    tb_say(r, TB_SAY_AGENT, TB_FAILED, "cannot run /bin/sh: %s", strerror(errno));
    free(line);
    return TB_FAILED;
}

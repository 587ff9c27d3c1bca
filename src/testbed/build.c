/* build.c: makes a testbed's namespaces, links, rates and routes (the
 * layout of layout.c) with iproute2: `ip` and `tc` run as child processes
 * (posix_spawn, arguments as a vector, no shell), one batch of commands
 * per namespace on their standard input, so a testbed of n nodes costs
 * about 5n processes, not one per route.  Kernel settings (forwarding,
 * reverse-path filter) are written from a child that entered the
 * namespace.  Whatever fails, everything made is removed (remove.c).
 * Also what the other verbs need of the system: the privileges, and setns
 * into one of a testbed's namespaces. */
#define _GNU_SOURCE /* setns */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testbed_internal.h"

extern char **environ;

/* A growing text: the batch of commands for one namespace. */
typedef struct batch {
    char *text;
    size_t len, cap;
    bool failed;
} batch;

static void add(batch *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add(batch *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->text ? b->text + b->len : NULL, b->text ? b->cap - b->len : 0,
                          fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->text && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *t = realloc(b->text, cap);
        if (!t) {
            b->failed = true;
            return;
        }
        b->text = t;
        b->cap = cap;
    }
}

/* Writes all of text to fd (the child may exit early: EPIPE, no signal). */
static void feed(int fd, const char *text)
{
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    for (size_t len = strlen(text), done = 0; done < len;) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    signal(SIGPIPE, old);
}

/* Runs argv[0] with argv, its standard input fed from `input` (NULL:
 * none), and waits: 0 when it exited 0, else -1, said unless quiet (the
 * child's standard error then goes to /dev/null too). */
static int spawn(const tb_report *r, char *const argv[], const char *input, bool quiet)
{
    int fds[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (input && pipe(fds) == 0) {
        posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        posix_spawn_file_actions_addclose(&fa, fds[1]);
    }
    if (quiet)
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int err = input && fds[0] < 0 ? errno : posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (fds[0] >= 0)
        close(fds[0]);
    if (err == 0 && input)
        feed(fds[1], input);
    if (fds[1] >= 0)
        close(fds[1]);
    int status = 0;
    if (err == 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            continue;
    if (err == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (!quiet && err)
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot run %s: %s%s", argv[0], strerror(err),
               err == ENOENT ? " (install iproute2)" : "");
    else if (!quiet)
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "'%s %s %s ...' failed (exit status %d)", argv[0],
               argv[1] ? argv[1] : "", argv[1] && argv[2] ? argv[2] : "",
               WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return -1;
}

/* `tool [-n ns] -batch -` with b's commands; ns NULL: this namespace. */
static int run_batch(const tb_report *r, const char *tool, const char *ns, batch *b, bool quiet)
{
    if (b->failed) {
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "out of memory");
        return -1;
    }
    char *argv[] = {(char *)tool, "-n", (char *)ns, "-batch", "-", NULL};
    int rc = b->len == 0 ? 0
             : ns        ? spawn(r, argv, b->text, quiet)
                         : spawn(r, (char *[]){(char *)tool, "-batch", "-", NULL}, b->text,
                                 quiet);
    b->len = 0;
    if (b->text)
        b->text[0] = '\0';
    return rc;
}

bool tb_privileged(const tb_report *r)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long caps = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", &caps) == 1)
            break;
    if (f)
        fclose(f);
    bool ok = (caps >> 12 & 1) && (caps >> 21 & 1); /* CAP_NET_ADMIN, CAP_SYS_ADMIN */
    if (!ok)
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "network namespaces need root (CAP_NET_ADMIN and "
               "CAP_SYS_ADMIN): run this as root");
    return ok;
}

bool tb_enter(const tb_report *r, const char *ns)
{
    char path[128];
    snprintf(path, sizeof path, "/run/netns/%s", ns);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool ok = fd >= 0 && setns(fd, CLONE_NEWNET) == 0;
    if (!ok)
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot enter network namespace %s: %s", ns,
               strerror(errno));
    if (fd >= 0)
        close(fd);
    return ok;
}

bool tb_enter_node(const tb_report *r, const char *hostname)
{
    char name[65];
    snprintf(name, sizeof name, "%s", hostname); /* HOST_NAME_MAX */
    const char *step = "unshare(CLONE_NEWNS | CLONE_NEWUTS)";
    bool ok = unshare(CLONE_NEWNS | CLONE_NEWUTS) == 0;
    /* private: the tmpfs below must not propagate back to this machine's /dev/shm */
    if (ok && !(ok = mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0))
        step = "making the mounts private";
    if (ok && !(ok = mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0))
        step = "mounting a tmpfs on /dev/shm";
    if (ok && !(ok = sethostname(name, strlen(name)) == 0))
        step = "sethostname";
    if (!ok)
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot give host '%s' a node of its own: %s: %s",
               hostname, step, strerror(errno));
    return ok;
}

/* Writes value into /proc/sys/<key> inside namespace ns (a child enters
 * it: a sysctl under net/ belongs to the namespace of whoever opens it).
 * Keys that do not exist (no IPv6) are skipped. */
static int set_sysctls(const tb_report *r, const char *ns)
{
    static const char *const keys[][2] = {
        {"net/ipv4/ip_forward", "1"},
        {"net/ipv4/conf/all/rp_filter", "0"}, /* routes may be asymmetric */
        {"net/ipv4/conf/default/rp_filter", "0"},
        {"net/ipv6/conf/all/disable_ipv6", "1"}, /* no router solicitations on the links */
        {"net/ipv6/conf/default/disable_ipv6", "1"},
    };
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = !tb_enter(r, ns);
        for (size_t i = 0; !bad && i < sizeof keys / sizeof keys[0]; i++) {
            char path[128];
            snprintf(path, sizeof path, "/proc/sys/%s", keys[i][0]);
            int fd = open(path, O_WRONLY);
            if (fd < 0 && errno == ENOENT)
                continue;
            bad = fd < 0 || write(fd, keys[i][1], 1) != 1;
            if (bad)
                tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot set %s in %s: %s", keys[i][0], ns,
                       strerror(errno));
            if (fd >= 0)
                close(fd);
        }
        _exit(bad);
    }
    int status = 1;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        continue;
    return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The device that holds a node's own address: a dummy, or where the kernel
 * has no dummy driver an ifb (any device that is up will do: the address
 * is local to the namespace whatever carries it). */
static const char *host_device_type(const tb_report *r, const tb_layout *t)
{
    char ns[64];
    tb_ns_name(t, 0, ns);
    char *argv[] = {"ip", "-n", ns, "link", "add", "name", "trdprobe", "type", "dummy", NULL};
    if (spawn(r, argv, NULL, true) != 0)
        return "ifb";
    char *del[] = {"ip", "-n", ns, "link", "del", "trdprobe", NULL};
    spawn(r, del, NULL, true);
    return "dummy";
}

/* Node i's devices: loopback, its own address's device, the management
 * veth (its peer m<i> into the management namespace), and a veth to each
 * neighbour of larger index (the peer into the neighbour's namespace). */
static void create_devices(const tb_layout *t, int32_t i, const char *host_type, batch *b)
{
    char mns[64], peer_ns[64], ifn[64], peer_if[64];
    tb_ns_name(t, -1, mns);
    add(b, "link set lo up\nlink add name trdh type %s\n", host_type);
    add(b, "link add name trdm type veth peer name m%d netns %s\n", (int)i, mns);
    for (int32_t k = 0; k < t->n_links; k++) {
        if (t->links[k].a != i)
            continue;
        tb_ns_name(t, t->links[k].b, peer_ns);
        tb_ifname(t->links[k].b, ifn);
        tb_ifname(i, peer_if);
        add(b, "link add name %s mtu %d type veth peer name %s mtu %d netns %s\n", ifn, TB_MTU,
            peer_if, TB_MTU, peer_ns);
    }
}

static void configure(const tb_layout *t, int32_t i, batch *b)
{
    char addr[64], ifn[64];
    tb_host_addr(i, addr);
    add(b, "addr add %s/32 dev trdh\nlink set trdh up\n", addr);
    tb_mgmt_addr(i, addr);
    add(b, "addr add %s/24 dev trdm\nlink set trdm up\n", addr);
    for (int32_t k = 0; k < t->n_links; k++) {
        const tb_link *l = &t->links[k];
        if (l->a != i && l->b != i)
            continue;
        tb_link_addr(t, k, i, addr);
        tb_ifname(l->a == i ? l->b : l->a, ifn);
        add(b, "addr add %s/31 dev %s\nlink set %s up\n", addr, ifn, ifn);
    }
}

/* Node u's route to every other node's own address, from its own. */
static void routes(const tb_layout *t, int32_t u, batch *b)
{
    char dst[64], via[64], src[64];
    tb_host_addr(u, src);
    for (int32_t d = 0; d < t->n_nodes; d++) {
        int32_t v = t->next[u * t->n_nodes + d];
        if (d == u || v < 0)
            continue;
        tb_host_addr(d, dst);
        tb_link_addr(t, tb_link_between(t, u, v), v, via);
        add(b, "route add %s/32 via %s src %s\n", dst, via, src);
    }
}

/* A token bucket on each of node u's links that the platform has: the
 * bucket holds 1 ms of traffic (two jumbo frames at least) and the queue
 * 100 ms (256 KiB at least), so a transfer's rate is the link's within a
 * fraction of a per cent and TCP rarely loses a segment. */
static void shape(const tb_layout *t, int32_t u, batch *b)
{
    char ifn[64];
    for (int32_t k = 0; k < t->n_links; k++) {
        const tb_link *l = &t->links[k];
        double rate = l->a == u ? l->rate[0] : l->b == u ? l->rate[1] : 0;
        if (rate <= 0)
            continue;
        double bytes = rate / 8, burst = bytes / 1000, limit = bytes / 10;
        burst = burst < 2 * (TB_MTU + 14) ? 2 * (TB_MTU + 14) : burst;
        limit = limit < 262144 ? 262144 : limit;
        tb_ifname(l->a == u ? l->b : l->a, ifn);
        add(b, "qdisc add dev %s root tbf rate %.0fbit burst %.0f limit %.0f\n", ifn, rate,
            burst, limit);
    }
}

/* The management namespace: a bridge joining every node's trdm. */
static void management(const tb_layout *t, batch *b)
{
    char addr[64];
    tb_mgmt_addr(-1, addr);
    add(b, "link set lo up\nlink add name trdbr type bridge\n");
    add(b, "addr add %s/24 dev trdbr\nlink set trdbr up\n", addr);
    for (int32_t i = 0; i < t->n_nodes; i++)
        add(b, "link set m%d master trdbr\nlink set m%d up\n", (int)i, (int)i);
}

/* One pass over every node: per-node batches of `tool`. */
static int each_node(const tb_report *r, const tb_layout *t, const char *tool, batch *b,
                     void (*fill)(const tb_layout *, int32_t, batch *))
{
    char ns[64];
    for (int32_t i = 0; i < t->n_nodes; i++) {
        fill(t, i, b);
        tb_ns_name(t, i, ns);
        if (run_batch(r, tool, ns, b, false) != 0)
            return -1;
    }
    return 0;
}

static int make_namespaces(const tb_report *r, const tb_layout *t, batch *b)
{
    char ns[64];
    for (int32_t i = -1; i < t->n_nodes; i++) {
        tb_ns_name(t, i, ns);
        add(b, "netns add %s\n", ns);
    }
    if (run_batch(r, "ip", NULL, b, false) != 0)
        return -1;
    for (int32_t i = -1; i < t->n_nodes; i++) {
        tb_ns_name(t, i, ns);
        if (set_sysctls(r, ns) != 0)
            return -1;
    }
    return 0;
}

static int build(const tb_report *r, const tb_layout *t, batch *b)
{
    char ns[64];
    if (make_namespaces(r, t, b) != 0)
        return -1;
    const char *host_type = host_device_type(r, t);
    for (int32_t i = 0; i < t->n_nodes; i++) {
        create_devices(t, i, host_type, b);
        tb_ns_name(t, i, ns);
        if (run_batch(r, "ip", ns, b, false) != 0)
            return -1;
    }
    if (each_node(r, t, "ip", b, configure) != 0)
        return -1;
    management(t, b);
    tb_ns_name(t, -1, ns);
    if (run_batch(r, "ip", ns, b, false) != 0)
        return -1;
    if (each_node(r, t, "ip", b, routes) != 0)
        return -1;
    return each_node(r, t, "tc", b, shape);
}

tb_status tb_build(const tb_report *r, const tb_layout *t)
{
    batch b = {0};
    int rc = build(r, t, &b);
    free(b.text);
    if (rc == 0)
        return TB_OK;
    tb_say(r, TB_SAY_ERROR, TB_FAILED, "building testbed '%s' failed: removing what was made",
           t->name);
    tb_down(r, t->name, true);
    return TB_FAILED;
}

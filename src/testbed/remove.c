/* remove.c: `treduce testbed down`, also what a failed `up` runs:
 * removes everything of a testbed, found by name rather than by its state
 * (which a build killed half-way may not have finished): the processes
 * that still run in its namespaces (a killed `testbed run` leaves its
 * daemons and ranks there), the namespaces "trd-NAME.*" - which takes
 * their veth pairs, queues and routes with them - and the state folder
 * (with the jobs' temporary folders, run.c).
 * A namespace is removed as `ip netns del` does: its bind mount detached,
 * its file unlinked. */
#define _GNU_SOURCE /* umount2's MNT_DETACH */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testbed_internal.h"

#define NETNS_DIR "/run/netns"
#define MAX_NS (TB_NODES_MAX + 1)

/* The namespaces whose names start with "trd-NAME." (a name has no '.',
 * so no other testbed's match), at most MAX_NS. */
static int list_namespaces(const char *name, char (*out)[64])
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "trd-%s.", name);
    DIR *d = opendir(NETNS_DIR);
    int n = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e && n < MAX_NS; e = readdir(d))
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && strlen(e->d_name) < 64)
            snprintf(out[n++], 64, "%s", e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* Signals every process whose network namespace is one of ns[0..n) (the
 * inode of /proc/PID/ns/net is the namespace's); returns how many. */
static int signal_members(char (*ns)[64], int n, int sig)
{
    struct stat want[MAX_NS];
    int known = 0, hit = 0;
    for (int i = 0; i < n; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%.63s", NETNS_DIR, ns[i]);
        if (stat(path, &want[known]) == 0)
            known++;
    }
    DIR *d = opendir("/proc");
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char *end, path[300];
        long pid = strtol(e->d_name, &end, 10);
        struct stat st;
        if (*end || pid <= 0 || pid == (long)getpid())
            continue;
        snprintf(path, sizeof path, "/proc/%ld/ns/net", pid);
        if (stat(path, &st) != 0)
            continue;
        for (int i = 0; i < known; i++)
            if (st.st_ino == want[i].st_ino && st.st_dev == want[i].st_dev) {
                hit += kill((pid_t)pid, sig) == 0;
                break;
            }
    }
    if (d)
        closedir(d);
    return hit;
}

/* SIGTERM, up to a second for them to go, then SIGKILL. */
static void stop_members(char (*ns)[64], int n)
{
    if (signal_members(ns, n, SIGTERM) == 0)
        return;
    for (int i = 0; i < 20 && signal_members(ns, n, 0) > 0; i++)
        nanosleep(&(struct timespec){0, 50000000}, NULL);
    signal_members(ns, n, SIGKILL);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT ? 0 : -1;
}

bool tb_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 || errno == ENOENT;
}

tb_status tb_down(const tb_report *r, const char *name, bool missing_ok)
{
    static char ns[MAX_NS][64];
    char dir[512];
    struct stat st;
    if (!tb_name_ok(r, name)) /* a name is a path and a prefix: never another's */
        return TB_REFUSED;
    if (!tb_privileged(r))
        return TB_FAILED;
    tb_state_dir(name, dir, sizeof dir);
    int n = list_namespaces(name, ns);
    bool state = stat(dir, &st) == 0;
    if (n == 0 && !state)
        return missing_ok ? TB_OK
                          : tb_say(r, TB_SAY_ERROR, TB_REFUSED, "no testbed named '%s': "
                                   "nothing to remove", name);
    stop_members(ns, n);
    tb_status rc = TB_OK;
    for (int i = 0; i < n; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%.63s", NETNS_DIR, ns[i]);
        umount2(path, MNT_DETACH);
        if (unlink(path) != 0 && errno != ENOENT)
            rc = tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot remove namespace %s: %s", ns[i],
                        strerror(errno));
    }
    if (state && !tb_remove_tree(dir))
        rc = tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot remove %s: %s", dir, strerror(errno));
    if (list_namespaces(name, ns) > 0)
        rc = tb_say(r, TB_SAY_ERROR, TB_FAILED, "namespaces of '%s' remain (%s...)", name,
                    ns[0]);
    return rc;
}

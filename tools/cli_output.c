/* cli_output.c: every file a command writes is written whole or not at
 * all (cli.h, cli_out_begin).  It goes to a temporary file beside the
 * final one - same folder, so the rename cannot cross file systems; same
 * extension, since the figure writers choose the format by it - and is
 * renamed over the final name once complete.  A failure removes the
 * temporary, and so do SIGINT, SIGTERM and SIGHUP (then the signal's
 * default action ends the process): an interrupted command leaves the
 * earlier file as it was and nothing else.  A path that is not a regular
 * file (/dev/stdout, a pipe, a symbolic link) is written in place. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporaries being written, for the signal handler: a slot is busy
 * while tmp[slot][0] != 0 (set before the file exists, cleared after it is
 * renamed or removed). */
#define SLOTS 16
static char tmp_paths[SLOTS][sizeof ((cli_out *)0)->tmp];
static volatile sig_atomic_t busy[SLOTS];
static const int fatal[] = {SIGINT, SIGTERM, SIGHUP};

static void remove_temporaries(int sig)
{
    for (int i = 0; i < SLOTS; i++)
        if (busy[i])
            unlink(tmp_paths[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Once per process; a signal the process was started ignoring (nohup, a
 * background job) stays ignored. */
static void install_handlers(void)
{
    static bool installed;
    if (installed)
        return;
    installed = true;
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old, sa = {.sa_handler = remove_temporaries};
        sigemptyset(&sa.sa_mask);
        for (size_t k = 0; k < sizeof fatal / sizeof fatal[0]; k++)
            sigaddset(&sa.sa_mask, fatal[k]);
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(fatal[i], &sa, NULL);
    }
}

/* dir/.name-without-extension.tmp-PID-K.extension */
static bool temp_name(cli_out *o, int k)
{
    const char *slash = strrchr(o->path, '/');
    const char *base = slash ? slash + 1 : o->path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = base + strlen(base);
    int len = snprintf(o->tmp, sizeof o->tmp, "%.*s.%.*s.tmp-%ld-%d%s", (int)(base - o->path),
                       o->path, (int)(dot - base), base, (long)getpid(), k, dot);
    return len > 0 && (size_t)len < sizeof o->tmp;
}

/* Reserves a temporary name (created empty, exclusively) in a free slot. */
static bool reserve(const char *cmd, cli_out *o)
{
    int slot = -1;
    for (int i = 0; i < SLOTS && slot < 0; i++)
        if (!busy[i])
            slot = i;
    if (slot < 0) {
        fprintf(stderr, "treduce %s: cannot write %s: more than %d files at once\n", cmd,
                o->path, SLOTS);
        return false;
    }
    install_handlers();
    for (int k = 0; k < 100; k++) {
        if (!temp_name(o, k)) {
            fprintf(stderr, "treduce %s: cannot write %s: the path is too long\n", cmd,
                    o->path);
            return false;
        }
        memcpy(tmp_paths[slot], o->tmp, sizeof o->tmp);
        busy[slot] = 1; /* before the file exists: a signal removes it */
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0) {
            close(fd);
            o->slot = slot;
            return true;
        }
        busy[slot] = 0;
        if (errno != EEXIST)
            break;
    }
    fprintf(stderr, "treduce %s: cannot write %s: %s\n", cmd, o->path, strerror(errno));
    return false;
}

bool cli_out_begin(const char *cmd, cli_out *o, const char *dir, const char *name)
{
    *o = (cli_out){.slot = -1};
    int len = dir ? snprintf(o->path, sizeof o->path, "%s/%s", dir, name)
                  : snprintf(o->path, sizeof o->path, "%s", name);
    if (len < 0 || (size_t)len >= sizeof o->path) {
        fprintf(stderr, "treduce %s: cannot write %s/%s: the path is too long\n", cmd,
                dir ? dir : ".", name);
        return false;
    }
    struct stat sb;
    if (lstat(o->path, &sb) == 0 && !S_ISREG(sb.st_mode)) { /* written in place */
        memcpy(o->tmp, o->path, sizeof o->tmp);
        return true;
    }
    return reserve(cmd, o);
}

FILE *cli_out_open(const char *cmd, cli_out *o, const char *dir, const char *name)
{
    if (!cli_out_begin(cmd, o, dir, name))
        return NULL;
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        fprintf(stderr, "treduce %s: cannot write %s: %s\n", cmd, o->path, strerror(errno));
        cli_out_end(cmd, o, false);
    }
    return o->f;
}

/* Done with the slot: the temporary is gone or has the final name. */
static void release(cli_out *o)
{
    if (o->slot >= 0)
        busy[o->slot] = 0;
    o->slot = -1;
}

bool cli_out_end(const char *cmd, cli_out *o, bool ok)
{
    if (o->f) {
        bool written = !ferror(o->f);
        if (fclose(o->f) != 0 || !written) {
            if (ok)
                fprintf(stderr, "treduce %s: cannot write %s: %s\n", cmd, o->path,
                        strerror(errno));
            ok = false;
        }
        o->f = NULL;
    }
    if (o->slot < 0) /* in place, or never begun */
        return ok;
    if (ok && rename(o->tmp, o->path) != 0) {
        fprintf(stderr, "treduce %s: cannot write %s: %s\n", cmd, o->path, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(o->tmp);
    release(o);
    return ok;
}

int cli_out_finish(const char *cmd, cli_out *o, trd_status st)
{
    if (st == TRD_OK)
        return cli_out_end(cmd, o, true) ? CLI_OK : CLI_FAILED;
    const char *m = cli_errmsg(st), *at = o->slot >= 0 ? strstr(m, o->tmp) : NULL;
    if (at)
        fprintf(stderr, "treduce %s: %.*s%s%s\n", cmd, (int)(at - m), m, o->path,
                at + strlen(o->tmp));
    else
        fprintf(stderr, "treduce %s: %s\n", cmd, m);
    cli_out_end(cmd, o, false);
    return cli_lib_error_status(st);
}

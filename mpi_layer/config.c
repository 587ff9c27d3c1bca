/* config.c: the TREDUCE_MPI* environment variables (docs/MPI_LAYER.md),
 * read once at MPI_Init on world rank 0 and broadcast, so every process
 * runs with the same values whatever its own environment says: a process
 * that took the fast path while another passed the same call to MPI would
 * leave both waiting for each other.  A malformed value (or a misspelt
 * TREDUCE_MPI_ name) gives one message on rank 0, and the layer steps aside
 * for the whole run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"

extern char **environ;

tml_global tml_g = {.state = TML_OUT, .world = MPI_COMM_NULL, .self = MPI_COMM_NULL};
_Thread_local bool tml_busy;

#define MSG_MAX 512
#define DEFAULT_TIMEOUT 1e6 /* seconds: the longest treduce accepts (~11.6 days) */

static const char *const known[] = {"TREDUCE_MPI", "TREDUCE_MPI_ALGO", "TREDUCE_MPI_STATS",
                                    "TREDUCE_MPI_VERBOSE", "TREDUCE_MPI_REPRODUCIBLE",
                                    "TREDUCE_MPI_TIMEOUT"};
#define NKNOWN (sizeof known / sizeof known[0])

/* A variable whose name starts with TREDUCE_MPI but is none of ours. */
static bool unknown_variable(char *msg)
{
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TREDUCE_MPI", 11) != 0)
            continue;
        size_t len = strcspn(*e, "=");
        bool found = false;
        for (size_t i = 0; i < NKNOWN && !found; i++)
            found = strlen(known[i]) == len && strncmp(*e, known[i], len) == 0;
        if (!found) {
            snprintf(msg, MSG_MAX, "%.*s is not a variable of the layer (TREDUCE_MPI, "
                     "TREDUCE_MPI_ALGO, TREDUCE_MPI_STATS, TREDUCE_MPI_VERBOSE, "
                     "TREDUCE_MPI_REPRODUCIBLE, TREDUCE_MPI_TIMEOUT)", (int)len, *e);
            return true;
        }
    }
    return false;
}

/* A 0/1 switch (TREDUCE_MPI also takes on/off); unset: dflt. */
static bool parse_switch(const char *name, bool dflt, bool words, bool *out, char *msg)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v)
        return true;
    if (!strcmp(v, "1") || (words && !strcmp(v, "on")))
        *out = true;
    else if (!strcmp(v, "0") || (words && !strcmp(v, "off")))
        *out = false;
    else {
        snprintf(msg, MSG_MAX, "%s=%s is not %s", name, v, words ? "on, off, 1 or 0" : "0 or 1");
        return false;
    }
    return true;
}

static bool parse_timeout(double *out, char *msg)
{
    const char *v = getenv("TREDUCE_MPI_TIMEOUT");
    *out = DEFAULT_TIMEOUT;
    if (!v)
        return true;
    char *end = NULL;
    double s = strtod(v, &end);
    if (end == v || *end || !isfinite(s) || !(s > 0) || s > DEFAULT_TIMEOUT) {
        snprintf(msg, MSG_MAX, "TREDUCE_MPI_TIMEOUT=%s is not a number of seconds in (0, 1e6]",
                 v);
        return false;
    }
    *out = s;
    return true;
}

static bool parse_algo(char *out, char *msg)
{
    const char *v = getenv("TREDUCE_MPI_ALGO");
    size_t index;
    snprintf(out, TML_ALGO_MAX, "auto");
    if (!v || !strcmp(v, "auto"))
        return true;
    if (strlen(v) >= TML_ALGO_MAX || trd_algo_find(v, &index) != TRD_OK) {
        snprintf(msg, MSG_MAX, "TREDUCE_MPI_ALGO=%.64s: %s (or auto)", v, trd_errmsg());
        return false;
    }
    snprintf(out, TML_ALGO_MAX, "%s", v);
    return true;
}

/* This process's values; false with *msg set when one is malformed. */
static bool read_config(tml_config *c, char *msg)
{
    return !unknown_variable(msg) && parse_switch("TREDUCE_MPI", true, true, &c->on, msg) &&
           parse_switch("TREDUCE_MPI_STATS", false, false, &c->stats, msg) &&
           parse_switch("TREDUCE_MPI_VERBOSE", false, false, &c->verbose, msg) &&
           parse_switch("TREDUCE_MPI_REPRODUCIBLE", false, false, &c->reproducible, msg) &&
           parse_timeout(&c->timeout_s, msg) && parse_algo(c->algo, msg);
}

static void dup_private(MPI_Comm of, MPI_Comm *out)
{
    if (PMPI_Comm_dup(of, out) == MPI_SUCCESS)
        PMPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    else
        *out = MPI_COMM_NULL;
}

/* The layer starts: its keyval, the nodes, the predefined communicators. */
static tml_state start_active(void)
{
    if (!tml_comm_start())
        return TML_ASIDE;
    tml_g.state = TML_ACTIVE;
    if (!tml_nodes_start() && tml_g.world_rank == 0) /* the same on every rank */
        fprintf(stderr, "treduce-mpi: cannot tell which processes share a node; treduce runs "
                "without shared-memory rings\n");
    /* Whether a nonblocking call runs on a progress thread must be decided
     * alike on every rank: by the lowest level any process got. */
    int level = MPI_THREAD_SINGLE, lowest = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    tml_g.progress = PMPI_Allreduce(&level, &lowest, 1, MPI_INT, MPI_MIN, tml_g.world) ==
                         MPI_SUCCESS && lowest == MPI_THREAD_MULTIPLE;
    tml_comm_created(MPI_COMM_WORLD);
    tml_comm_created(MPI_COMM_SELF);
    return TML_ACTIVE;
}

void tml_config_start(void)
{
    struct {
        int ok;
        tml_config cfg;
    } agreed = {0};
    char msg[MSG_MAX] = "";
    PMPI_Comm_rank(MPI_COMM_WORLD, &tml_g.world_rank);
    dup_private(MPI_COMM_WORLD, &tml_g.world);
    dup_private(MPI_COMM_SELF, &tml_g.self);
    if (tml_g.world == MPI_COMM_NULL || tml_g.self == MPI_COMM_NULL) {
        tml_g.state = TML_ASIDE; /* the same on every rank: a failed dup raises on all */
        return;
    }
    if (tml_g.world_rank == 0)
        agreed.ok = read_config(&agreed.cfg, msg);
    PMPI_Bcast(&agreed, (int)sizeof agreed, MPI_BYTE, 0, tml_g.world);
    tml_g.cfg = agreed.cfg;
    if (!agreed.ok) {
        if (tml_g.world_rank == 0)
            fprintf(stderr, "treduce-mpi: %s; the layer steps aside: every MPI_Reduce and "
                    "MPI_Allreduce goes to MPI unchanged\n", msg);
        tml_g.state = TML_ASIDE;
    } else if (!agreed.cfg.on) {
        tml_g.state = TML_PASSING;
        tml_g.passing = TML_OFF;
    } else {
        tml_g.state = start_active();
    }
}

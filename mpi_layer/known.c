/* known.c: what was measured of sets of processes.
 *
 * Measuring a platform is the slowest thing the layer does (a few hundred
 * milliseconds, choose.c), and programs make many communicators of the
 * same processes: duplicates, splits, copies made and freed in a loop.
 * Each measurement is kept here with the world ranks it was made on, and a
 * new communicator takes the last one made on a set that holds all its
 * processes: a duplicate or a subset of a measured communicator measures
 * nothing.  Only rank 0 of the new communicator looks (comm.c sends its
 * answer to the others at creation), so the ranks need not have the same
 * entries here - they differ, since each process keeps what its own
 * communicators measured.  Shared by the threads of the process: one
 * mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"

#define KNOWN_MAX 16 /* sets kept, the oldest forgotten first */

typedef struct entry {
    int *world; /* sorted */
    int n;
    tml_known known;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry entries[KNOWN_MAX];
static int next;

static int by_rank(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Whether every rank of world[0..n) is in the sorted set e. */
static bool holds(const entry *e, const int *world, int n)
{
    for (int i = 0; i < n; i++)
        if (!bsearch(&world[i], e->world, (size_t)e->n, sizeof *e->world, by_rank))
            return false;
    return true;
}

bool tml_known_find(const int *world, int n, tml_known *out)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (int k = 1; k <= KNOWN_MAX && !found && world; k++) { /* the newest first */
        const entry *e = &entries[(next - k + KNOWN_MAX) % KNOWN_MAX];
        if (e->world && e->n >= n && holds(e, world, n)) {
            *out = e->known;
            found = true;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void tml_known_add(const int *world, int n, const tml_known *k)
{
    int *sorted = world ? malloc((size_t)n * sizeof *sorted) : NULL;
    if (!sorted)
        return; /* not kept: measured again where needed */
    memcpy(sorted, world, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, by_rank);
    pthread_mutex_lock(&lock);
    entry *e = &entries[next];
    free(e->world);
    *e = (entry){.world = sorted, .n = n, .known = *k};
    next = (next + 1) % KNOWN_MAX;
    pthread_mutex_unlock(&lock);
}

void tml_known_learn(tml_comm *c)
{
    double rings, mpi;
    if (c->known.probe[1] > 0 || !c->tc || !trd_comm_shm_probe(c->tc, &rings, &mpi))
        return;
    c->known.probe[0] = rings;
    c->known.probe[1] = mpi;
    tml_known_add(c->world, c->size, &c->known);
}

void tml_known_finish(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < KNOWN_MAX; i++) {
        free(entries[i].world);
        entries[i] = (entry){0};
    }
    next = 0;
    pthread_mutex_unlock(&lock);
}

/* mpi_pool.c: the rings of closed wires, kept for the next wire over the
 * same processes.
 *
 * A segment of rings costs its allocation and the first touch of every
 * page (shm.c: milliseconds for two ranks), which a program that makes a
 * communicator, reduces on it a few times and frees it would pay at each
 * one's first call.  So a wire that closes cleanly (mpi_close.c: every
 * rank closed it, nothing pending anywhere) leaves its rings here, under
 * the world ranks of its processes in its rank order; when a wire over the
 * same processes in the same order sets up (mpi_node.c), rank 0 offers
 * the segment it holds by name, every rank takes its own end of that same
 * segment, and the rings go on where they stood: every message the last
 * wire sent through them was read.  A rank whose end is still closing
 * waits for that close (rank 0 holding its end means every rank voted,
 * so it completes); one that no longer has it says so, and the wire gets
 * a new segment.  At most POOL_MAX segments and POOL_BYTES are kept, the
 * oldest unmapped first, the rest at MPI_Finalize. */
#include "wire_mpi/mpi_wire.h"

#ifdef TRD_HAVE_MPI

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "wire_mpi/mpi_internal.h"

#define POOL_MAX 4
#define POOL_BYTES ((size_t)128 << 20)

typedef struct pooled {
    int *world; /* the wire's processes, in its rank order */
    int n, me;
    char name[64];
    trd_shm *shm;
} pooled;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pooled pool[POOL_MAX]; /* the newest last */
static int npool;

static size_t bytes_of(const trd_shm *s)
{
    size_t frag;
    return trd_shm_size(s, &frag);
}

static void drop_at(int i)
{
    trd_shm_free(pool[i].shm);
    free(pool[i].world);
    memmove(&pool[i], &pool[i + 1], (size_t)(npool - i - 1) * sizeof pool[0]);
    npool--;
}

static bool same_processes(const pooled *e, const mpi_wire *w)
{
    return e->n == w->size && e->me == w->rank &&
           !memcmp(e->world, w->world, (size_t)w->size * sizeof *w->world);
}

void trd_mpi_pool_put(mpi_wire *w)
{
    int *world = malloc((size_t)w->size * sizeof *world);
    if (!world || !w->world) {
        free(world);
        return; /* freed with the wire */
    }
    memcpy(world, w->world, (size_t)w->size * sizeof *world);
    pthread_mutex_lock(&lock);
    size_t total = bytes_of(w->shm);
    for (int i = 0; i < npool; i++)
        total += bytes_of(pool[i].shm);
    while (npool > 0 && (npool == POOL_MAX || total > POOL_BYTES)) {
        total -= bytes_of(pool[0].shm);
        drop_at(0);
    }
    pool[npool] = (pooled){.world = world, .n = w->size, .me = w->rank, .shm = w->shm};
    memcpy(pool[npool].name, w->shm_name, sizeof pool[npool].name);
    npool++;
    w->shm = NULL;
    pthread_mutex_unlock(&lock);
}

/* The pooled segment for w's processes with slots of frag bytes (name
 * NULL: the newest; else the one called so), taken out; NULL if none. */
static trd_shm *take(const mpi_wire *w, size_t frag, const char *name, char out[64])
{
    trd_shm *s = NULL;
    pthread_mutex_lock(&lock);
    for (int i = npool - 1; i >= 0 && !s && w->world; i--) {
        size_t f;
        trd_shm_size(pool[i].shm, &f);
        if (same_processes(&pool[i], w) && f == frag && (!name || !strcmp(name, pool[i].name))) {
            s = pool[i].shm;
            memcpy(out, pool[i].name, 64);
            pool[i].shm = NULL;
            free(pool[i].world);
            memmove(&pool[i], &pool[i + 1], (size_t)(npool - i - 1) * sizeof pool[0]);
            npool--;
        }
    }
    pthread_mutex_unlock(&lock);
    return s;
}

trd_shm *trd_mpi_pool_take_any(const mpi_wire *w, size_t frag, char name[64])
{
    return take(w, frag, NULL, name);
}

trd_shm *trd_mpi_pool_take(mpi_wire *w, const char *name, size_t frag, double deadline)
{
    char got[64];
    trd_shm *s = take(w, frag, name, got);
    while (!s && trd_mpi_closing_holds(name) && PMPI_Wtime() < deadline) {
        trd_mpi_reap();
        sched_yield();
        s = take(w, frag, name, got);
    }
    return s;
}

void trd_mpi_pool_finish(void)
{
    pthread_mutex_lock(&lock);
    while (npool > 0)
        drop_at(npool - 1);
    pthread_mutex_unlock(&lock);
}

#endif

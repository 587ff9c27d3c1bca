/* comm.c: the layer's state of each communicator, made with it and cached
 * on it with an attribute (MPI-3.1 Sec. 6.7).
 *
 * Made where the program makes the communicator: the layer interposes the
 * calls that create intracommunicators (entry.c) and, on every rank that
 * gets the new communicator, right after MPI made it, makes one of the
 * same group for treduce (PMPI_Comm_create: a context of treduce's own,
 * so no message of the layer or of treduce can match a receive of the
 * program, and none of the program's attributes copied) and agrees
 * with one allreduce over it whether every rank could set up and what rank
 * 0 knows of these processes (known.c: a measured platform, the path of
 * long messages).  Both are collectives of the program's own creation
 * call, over the new communicator, whose every rank is inside that call:
 * none is made inside a reduction, where ranks of other communicators may
 * be creating theirs (a context-id agreement there can deadlock).
 * treduce's communicator itself is made without communicating
 * (trd_comm_mpi_create_with: the private communicator is its own, the node's ranks
 * counted from the group, node.c; its rings set up by the first call,
 * through its own messages).  A communicator the layer did not see made
 * (MPI_Comm_idup, an intercommunicator, one made before MPI_Init went
 * through the layer) has no state: its reductions go to MPI.
 *
 * Released with it: the keyval's delete callback, which MPI runs in
 * MPI_Comm_free, MPI_Comm_disconnect and MPI_Finalize, only moves the
 * state to a list (MPI calls inside MPI's callback are best avoided), and
 * the layer's wrapper of that call releases it once MPI has returned.
 * treduce's communicator then closes without blocking (ranks free in any
 * order) and frees its private communicator once no message can reach it
 * (src/wire_mpi/mpi_close.c): after MPI_Comm_free returns nothing of the
 * caller's communicator is touched.  The copy callback is
 * MPI_COMM_NULL_COPY_FN, so a duplicate never shares a state. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"

static int keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tml_comm *live;     /* every state attached to a communicator */
static tml_comm *detached; /* detached by MPI, to release (tml_comm_release) */
static atomic_uint generation; /* bumped at each detach: the lookups' caches */

/* This thread's last lookup (a handle may be reused once freed: the
 * generation tells). */
static _Thread_local struct {
    MPI_Comm comm;
    tml_comm *state;
    unsigned generation;
} last = {MPI_COMM_NULL, NULL, 0};

static void unlink_live(tml_comm *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        live = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static int detach_state(MPI_Comm comm, int kv, void *state, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    tml_comm *c = state;
    pthread_mutex_lock(&lock);
    unlink_live(c);
    c->next = detached;
    detached = c;
    atomic_fetch_add(&generation, 1);
    pthread_mutex_unlock(&lock);
    return MPI_SUCCESS;
}

static void free_state(tml_comm *c)
{
    trd_comm_free(c->tc);
    tml_scratch_free(&c->staged);
    tml_scratch_free(&c->packed);
    tml_scratch_free(&c->parts);
    free(c->world);
    free(c);
}

void tml_comm_release(void)
{
    pthread_mutex_lock(&lock);
    tml_comm *c = detached;
    detached = NULL;
    pthread_mutex_unlock(&lock);
    while (c) {
        tml_comm *next = c->next;
        free_state(c);
        c = next;
    }
}

bool tml_comm_start(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, detach_state, &keyval, NULL) ==
           MPI_SUCCESS;
}

void tml_comm_finish(void)
{
    for (;;) {
        pthread_mutex_lock(&lock);
        tml_comm *c = live;
        pthread_mutex_unlock(&lock);
        if (!c)
            break;
        if (PMPI_Comm_delete_attr(c->user, keyval) != MPI_SUCCESS) /* detaches it */
            detach_state(c->user, keyval, c, NULL);
    }
    tml_comm_release();
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
}

void tml_comm_drain_all(void)
{
    pthread_mutex_lock(&lock);
    for (tml_comm *c = live; c; c = c->next)
        if (c->tc)
            trd_comm_drain(c->tc);
    pthread_mutex_unlock(&lock);
}

tml_comm *tml_comm_of(MPI_Comm comm)
{
    unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (comm == last.comm && last.state && gen == last.generation)
        return last.state;
    void *state = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &state, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    last.comm = comm;
    last.state = state;
    last.generation = gen;
    return state;
}

/* The agreement at creation: whether every rank is set up, and rank 0's
 * knowledge, in one max-allreduce of doubles (the others send -1: every
 * value known is >= 0). */
enum { A_FAILED, A_PLATFORM, A_PROBE = A_PLATFORM + 8, A_STREAMS = A_PROBE + 2,
       A_COUNT = A_STREAMS + TRD_STREAMS_MAX };

static void pack_known(const tml_known *k, double *v)
{
    const trd_profile *p = &k->platform;
    const double platform[8] = {p->latency, p->per_byte, p->combine_fixed, p->per_element,
                                p->flight, p->parallelism, p->recv_combine_saving,
                                (double)p->streams};
    for (int i = 0; i < 8; i++)
        v[A_PLATFORM + i] = k->have_platform ? platform[i] : -1;
    v[A_PROBE] = k->probe[0];
    v[A_PROBE + 1] = k->probe[1];
    for (int i = 0; i < TRD_STREAMS_MAX; i++)
        v[A_STREAMS + i] = k->have_platform && i < p->streams ? p->stream_bw[i] : -1;
}

static void unpack_known(const double *v, tml_known *k)
{
    trd_profile *p = &k->platform;
    *k = (tml_known){.have_platform = v[A_PLATFORM] >= 0,
                     .probe = {v[A_PROBE] > 0 ? v[A_PROBE] : 0,
                               v[A_PROBE + 1] > 0 ? v[A_PROBE + 1] : 0}};
    if (!k->have_platform)
        return;
    *p = (trd_profile){.latency = v[A_PLATFORM], .per_byte = v[A_PLATFORM + 1],
                       .combine_fixed = v[A_PLATFORM + 2], .per_element = v[A_PLATFORM + 3],
                       .flight = v[A_PLATFORM + 4], .parallelism = v[A_PLATFORM + 5],
                       .recv_combine_saving = v[A_PLATFORM + 6],
                       .streams = (int32_t)v[A_PLATFORM + 7]};
    for (int i = 0; i < p->streams && i < TRD_STREAMS_MAX; i++)
        p->stream_bw[i] = v[A_STREAMS + i];
}

/* A communicator of c->user's group for treduce alone: MPI_Comm_create,
 * not MPI_Comm_dup, which would copy the program's attributes (and run
 * their callbacks - and their delete callbacks when treduce frees it:
 * mpi4py's, for one, call back into MPI). */
static bool make_private(tml_comm *c, MPI_Comm *priv)
{
    MPI_Group group;
    if (PMPI_Comm_group(c->user, &group) != MPI_SUCCESS)
        return false;
    int rc = PMPI_Comm_create(c->user, group, priv);
    PMPI_Group_free(&group);
    return rc == MPI_SUCCESS && *priv != MPI_COMM_NULL;
}

/* treduce on a private communicator of c->user's group, made without
 * communicating: false when it cannot be (the private one is freed with
 * it). */
static bool make_treduce(tml_comm *c, int node_ranks)
{
    MPI_Comm priv;
    if (!make_private(c, &priv))
        return false;
    trd_mpi_opts o;
    trd_mpi_opts_init(&o);
    o.timeout_s = tml_g.cfg.timeout_s;
    o.own_comm = true;
    o.node_ranks = node_ranks;
    o.node_procs = tml_node_procs();
    o.deferred = true;
    o.shm_probe = c->known.probe; /* read at the set-up: filled in by the agreement */
    if (trd_comm_mpi_create_with(&c->tc, &priv, &o) != TRD_OK) {
        fprintf(stderr, "treduce-mpi: rank %d of a communicator of %d: cannot set up treduce "
                "(%s); its MPI_Reduce and MPI_Allreduce calls go to MPI\n", c->rank, c->size,
                trd_errmsg());
        return false;
    }
    /* The nodes, from the world's map learnt at MPI_Init: no communication.
     * Without them (a process not of the world) every rank is a node. */
    int32_t *nodes = tml_node_map(c->world, c->size);
    bool ok = !nodes || trd_comm_set_nodes(c->tc, nodes) == TRD_OK;
    free(nodes);
    return ok;
}

/* Every rank set up, and what rank 0 knows, agreed: false when some rank
 * could not (then none runs treduce here). */
static bool agree(tml_comm *c, bool ok)
{
    double mine[A_COUNT], all[A_COUNT];
    tml_known k = {0};
    for (int i = 0; i < A_COUNT; i++)
        mine[i] = -1;
    if (c->rank == 0 && tml_known_find(c->world, c->size, &k))
        pack_known(&k, mine);
    mine[A_FAILED] = ok ? 0 : 1;
    if (PMPI_Allreduce(mine, all, A_COUNT, MPI_DOUBLE, MPI_MAX, c->user) != MPI_SUCCESS ||
        all[A_FAILED] > 0)
        return false;
    unpack_known(all, &c->known);
    return true;
}

static void attach(tml_comm *c)
{
    pthread_mutex_lock(&lock);
    c->next = live;
    if (live)
        live->prev = c;
    live = c;
    pthread_mutex_unlock(&lock);
    if (PMPI_Comm_set_attr(c->user, keyval, c) != MPI_SUCCESS) {
        pthread_mutex_lock(&lock);
        unlink_live(c);
        pthread_mutex_unlock(&lock);
        free_state(c);
    }
}

void tml_comm_created(MPI_Comm comm)
{
    int inter = 0, node_ranks = 1;
    if (tml_g.state != TML_ACTIVE || comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return; /* an intercommunicator: the layer does not run its calls */
    tml_comm *c = calloc(1, sizeof *c);
    int size = 0;
    if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        free(c);
        return;
    }
    if (size > 1) { /* one rank communicates nothing: no agreement, no treduce */
        bool ok = c != NULL;
        if (ok) {
            c->user = comm;
            c->size = size;
            PMPI_Comm_rank(comm, &c->rank);
            c->world = tml_world_ranks(comm, &size, &node_ranks);
            ok = make_treduce(c, node_ranks);
        }
        if (!c) {
            tml_comm none = {.user = comm};
            agree(&none, false); /* the others must hear of it */
            return;
        }
        if (!agree(c, ok)) {
            trd_comm_free(c->tc);
            c->tc = NULL;
            c->setup_failed = true;
        }
    } else if (c) {
        c->user = comm;
        c->size = 1;
    }
    if (c)
        attach(c);
}

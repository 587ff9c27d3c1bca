/* comm.c: the layer's state of each communicator, cached on the caller's
 * communicator with an attribute (MPI-3.1 Sec. 6.7).
 *
 * A state is made, without communicating, on the first call on a
 * communicator; treduce's own communicator is set up on the first call the
 * layer runs there (collective).  It lives on a new communicator of the
 * same group (MPI_Comm_create, not MPI_Comm_dup: a dup would run the
 * copy callbacks of the caller's own attributes), which treduce then
 * duplicates for its messages: no message of the layer or of treduce can
 * match a receive of the caller.  The keyval's copy callback is
 * MPI_COMM_NULL_COPY_FN, so a duplicate of the caller's communicator gets
 * a state of its own; its delete callback releases the state when the
 * caller frees the communicator, and MPI_Finalize releases the rest. */
#include <stdio.h>
#include <stdlib.h>

#include "layer.h"

static int keyval = MPI_KEYVAL_INVALID;
static tml_comm *live;                   /* every state, for MPI_Finalize */
static MPI_Comm last_comm = MPI_COMM_NULL; /* the last lookup, its state in last */
static tml_comm *last;

static void free_state(tml_comm *c)
{
    if (last == c) {
        last = NULL;
        last_comm = MPI_COMM_NULL;
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        live = c->next;
    if (c->next)
        c->next->prev = c->prev;
    trd_comm_free(c->tc);
    if (c->priv != MPI_COMM_NULL)
        PMPI_Comm_free(&c->priv);
    free(c);
}

static int delete_state(MPI_Comm comm, int kv, void *state, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    free_state(state);
    return MPI_SUCCESS;
}

bool tml_comm_start(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval, NULL) ==
           MPI_SUCCESS;
}

void tml_comm_finish(void)
{
    while (live) /* the delete callback unlinks it */
        if (PMPI_Comm_delete_attr(live->user, keyval) != MPI_SUCCESS)
            free_state(live);
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
}

static tml_comm *new_state(MPI_Comm comm)
{
    int inter = 0;
    tml_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->user = comm;
    c->priv = MPI_COMM_NULL;
    PMPI_Comm_test_inter(comm, &inter);
    c->inter = inter;
    if (!inter) {
        PMPI_Comm_rank(comm, &c->rank);
        PMPI_Comm_size(comm, &c->size);
    }
    if (PMPI_Comm_set_attr(comm, keyval, c) != MPI_SUCCESS) {
        free(c);
        return NULL;
    }
    c->next = live;
    if (live)
        live->prev = c;
    live = c;
    return c;
}

tml_comm *tml_comm_of(MPI_Comm comm)
{
    if (comm == last_comm && last)
        return last;
    void *state = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &state, &flag) != MPI_SUCCESS)
        return NULL;
    tml_comm *c = flag ? state : new_state(comm);
    if (c) {
        last_comm = comm;
        last = c;
    }
    return c;
}

/* The private communicator: the caller's group, errors returned. */
static bool make_private(tml_comm *c)
{
    MPI_Group group;
    if (PMPI_Comm_group(c->user, &group) != MPI_SUCCESS)
        return false;
    int rc = PMPI_Comm_create(c->user, group, &c->priv);
    PMPI_Group_free(&group);
    if (rc != MPI_SUCCESS || c->priv == MPI_COMM_NULL) {
        c->priv = MPI_COMM_NULL;
        return false;
    }
    PMPI_Comm_set_errhandler(c->priv, MPI_ERRORS_RETURN);
    return true;
}

tml_reason tml_comm_ready(tml_comm *c)
{
    if (c->tc)
        return TML_OK;
    if (c->setup_failed || !make_private(c)) {
        c->setup_failed = true; /* a failed MPI_Comm_create fails on every rank */
        return TML_SETUP;
    }
    trd_status st = trd_comm_mpi_create(&c->tc, &c->priv, tml_g.cfg.timeout_s);
    int ok = st == TRD_OK, all = 0;
    if (!ok)
        fprintf(stderr, "treduce-mpi: rank %d of a communicator of %d: cannot set up treduce "
                "(%s); its MPI_Reduce and MPI_Allreduce calls go to MPI\n", c->rank, c->size,
                trd_errmsg());
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->priv) != MPI_SUCCESS || !all) {
        trd_comm_free(c->tc);
        c->tc = NULL;
        PMPI_Comm_free(&c->priv);
        c->setup_failed = true;
        return TML_SETUP;
    }
    return TML_OK;
}

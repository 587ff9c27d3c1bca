/* entry.c: the MPI functions libtreduce_mpi.so defines in front of the MPI
 * library's (the PMPI profiling interface, MPI-3.1 Sec. 14.2), whether it
 * is preloaded (LD_PRELOAD) or linked before the MPI library: MPI_Init,
 * MPI_Finalize, the reductions (MPI_Reduce, MPI_Allreduce,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan, MPI_Exscan,
 * MPI_Reduce_local), the operators' creation, and the calls that make and
 * free intracommunicators (comm.c sets treduce up with each, inside the
 * program's own call).  Everything else the program calls goes to MPI
 * untouched, the nonblocking and persistent variants of the reductions
 * (MPI_Ireduce, MPI_Iscan, MPI_Allreduce_init, ...) and the large-count
 * ones (MPI_Reduce_c) too. */
#include "layer.h"

static void finish(void)
{
    if (tml_g.state == TML_ACTIVE || tml_g.state == TML_PASSING) {
        if (tml_g.state == TML_ACTIVE)
            tml_comm_drain_all(); /* a freed request's call may still run */
        if (tml_g.cfg.stats)
            tml_stats_report();
        if (tml_g.state == TML_ACTIVE) {
            tml_comm_finish(); /* treduce's communicators, before MPI goes */
            tml_nodes_finish();
            tml_known_finish();
        }
        tml_kernels_finish();
        tml_ops_finish();
    }
    if (tml_g.world != MPI_COMM_NULL)
        PMPI_Comm_free(&tml_g.world);
    if (tml_g.self != MPI_COMM_NULL)
        PMPI_Comm_free(&tml_g.self);
    tml_g.state = TML_DONE;
}

TML_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        tml_config_start();
    return rc;
}

TML_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        tml_config_start();
    return rc;
}

TML_EXPORT int MPI_Finalize(void)
{
    finish();
    return PMPI_Finalize();
}

TML_EXPORT int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    int rc = PMPI_Op_create(fn, commute, op);
    if (rc == MPI_SUCCESS && tml_g.state == TML_ACTIVE && fn)
        tml_ops_record(*op, fn);
    return rc;
}

TML_EXPORT int MPI_Op_free(MPI_Op *op)
{
    if (op && tml_g.state == TML_ACTIVE)
        tml_ops_forget(*op);
    return PMPI_Op_free(op);
}

TML_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, int root, MPI_Comm comm)
{
    tml_args a = {.fn = TML_F_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .root = root, .comm = comm};
    return tml_collective(&a);
}

TML_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    tml_args a = {.fn = TML_F_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf,
                  .count = count, .dt = datatype, .op = op, .comm = comm};
    return tml_collective(&a);
}

TML_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    tml_args a = {.fn = TML_F_REDUCE_SCATTER_BLOCK, .sendbuf = sendbuf, .recvbuf = recvbuf,
                  .count = recvcount, .dt = datatype, .op = op, .comm = comm};
    return tml_collective(&a);
}

TML_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    tml_args a = {.fn = TML_F_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
                  .recvcounts = recvcounts, .dt = datatype, .op = op, .comm = comm};
    return tml_collective(&a);
}

TML_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    tml_args a = {.fn = TML_F_SCAN, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .comm = comm};
    return tml_collective(&a);
}

TML_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    tml_args a = {.fn = TML_F_EXSCAN, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .comm = comm};
    return tml_collective(&a);
}

TML_EXPORT int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
                                MPI_Datatype datatype, MPI_Op op)
{
    tml_args a = {.fn = TML_F_REDUCE_LOCAL, .sendbuf = inbuf, .recvbuf = inoutbuf,
                  .count = count, .dt = datatype, .op = op, .comm = MPI_COMM_NULL};
    return tml_reduce_local(&a);
}

/* ---- Nonblocking reductions (nonblocking.c) ---- */

TML_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    tml_args a = {.fn = TML_F_IREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .root = root, .comm = comm};
    return tml_icollective(&a, request);
}

TML_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
    tml_args a = {.fn = TML_F_IALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf,
                  .count = count, .dt = datatype, .op = op, .comm = comm};
    return tml_icollective(&a, request);
}

TML_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                         MPI_Request *request)
{
    tml_args a = {.fn = TML_F_IREDUCE_SCATTER_BLOCK, .sendbuf = sendbuf, .recvbuf = recvbuf,
                  .count = recvcount, .dt = datatype, .op = op, .comm = comm};
    return tml_icollective(&a, request);
}

TML_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                   MPI_Request *request)
{
    tml_args a = {.fn = TML_F_IREDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
                  .recvcounts = recvcounts, .dt = datatype, .op = op, .comm = comm};
    return tml_icollective(&a, request);
}

TML_EXPORT int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    tml_args a = {.fn = TML_F_ISCAN, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .comm = comm};
    return tml_icollective(&a, request);
}

TML_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    tml_args a = {.fn = TML_F_IEXSCAN, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .comm = comm};
    return tml_icollective(&a, request);
}

/* ---- Communicators: set up with the program's creation, released with its free. ---- */

/* rc of the call that made *made: treduce set up on it where it was made. */
static int made(int rc, const MPI_Comm *comm)
{
    if (rc == MPI_SUCCESS && comm && tml_g.state == TML_ACTIVE && !tml_busy)
        tml_comm_created(*comm);
    return rc;
}

TML_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return made(PMPI_Comm_dup(comm, newcomm), newcomm);
}

TML_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return made(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

TML_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return made(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

TML_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                                   MPI_Comm *newcomm)
{
    return made(PMPI_Comm_split_type(comm, type, key, info, newcomm), newcomm);
}

TML_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    return made(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

TML_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    return made(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

TML_EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    return made(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

TML_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                               int reorder, MPI_Comm *comm_cart)
{
    return made(PMPI_Cart_create(comm, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

TML_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    return made(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

TML_EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                                int reorder, MPI_Comm *comm_graph)
{
    return made(PMPI_Graph_create(comm, nnodes, index, edges, reorder, comm_graph), comm_graph);
}

TML_EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                     const int degrees[], const int destinations[],
                                     const int weights[], MPI_Info info, int reorder,
                                     MPI_Comm *newcomm)
{
    return made(PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                       reorder, newcomm),
                newcomm);
}

TML_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                              const int sourceweights[], int outdegree,
                                              const int destinations[],
                                              const int destweights[], MPI_Info info,
                                              int reorder, MPI_Comm *newcomm)
{
    return made(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights,
                                                outdegree, destinations, destweights, info,
                                                reorder, newcomm),
                newcomm);
}

TML_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    int rc = PMPI_Comm_free(comm); /* MPI detaches the state (comm.c) */
    if (tml_g.state == TML_ACTIVE)
        tml_comm_release();
    return rc;
}

TML_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm)
{
    int rc = PMPI_Comm_disconnect(comm);
    if (tml_g.state == TML_ACTIVE)
        tml_comm_release();
    return rc;
}

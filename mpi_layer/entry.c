/* entry.c: the MPI functions libtreduce_mpi.so defines in front of the MPI
 * library's (the PMPI profiling interface, MPI-3.1 Sec. 14.2), whether it
 * is preloaded (LD_PRELOAD) or linked before the MPI library.  Everything
 * else the program calls goes to MPI untouched, the nonblocking and
 * persistent variants of the two collectives (MPI_Ireduce,
 * MPI_Allreduce_init, ...) and the large-count ones (MPI_Reduce_c) too. */
#include "layer.h"

static void finish(void)
{
    if (tml_g.state == TML_ACTIVE || tml_g.state == TML_PASSING) {
        if (tml_g.cfg.stats)
            tml_stats_report();
        if (tml_g.state == TML_ACTIVE)
            tml_comm_finish(); /* treduce's communicators, before MPI goes */
        tml_kernels_finish();
        tml_ops_finish();
        tml_types_finish();
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
    tml_args a = {.allreduce = false, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .root = root, .comm = comm};
    return tml_collective(&a);
}

TML_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    tml_args a = {.allreduce = true, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                  .dt = datatype, .op = op, .root = 0, .comm = comm};
    return tml_collective(&a);
}

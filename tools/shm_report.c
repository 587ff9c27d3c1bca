/* shm_report.c: how an MPI communicator's rings' limit was chosen
 * (trd_comm_shm_probe), in the reports of calibrate and bench. */
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

cli_shm cli_shm_of(const trd_comm *comm)
{
    cli_shm s = {.max = trd_comm_shm_max(comm)};
    s.probed = trd_comm_shm_probe(comm, &s.rings_s, &s.mpi_s);
    return s;
}

json_t *cli_shm_probe_json(const cli_shm *s)
{
    return s->probed ? json_pack("{s:f, s:f}", "rings", 1e6 * s->rings_s, "mpi", 1e6 * s->mpi_s)
                     : json_null();
}

void cli_shm_probe_print(const cli_shm *s, const char *indent)
{
    if (s->probed)
        printf("%sa 64 KiB reduce took %.1f us through the rings and %.1f us through MPI\n"
               "%sat creation: %s\n", indent, 1e6 * s->rings_s, 1e6 * s->mpi_s, indent,
               s->max > 16384 ? "the rings take every message"
                              : "messages above 16 KiB go through MPI");
}

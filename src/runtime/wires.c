/* wires.c: the wire registry - every real point-to-point backend, by name,
 * with the function that makes communicators over it and what a tool asks
 * about it (launched or not, most ranks, what a rank is).  Adding a wire
 * is a src/wire/ implementation of wire.h, its communicator constructor,
 * and one row here; the CLI finds it by name (--wire / --transport) and
 * treats it by those fields, never by its name. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "treduce/treduce.h"
#include "wire/threads.h"

static trd_status create_threads(trd_comm **comm, int32_t p, double timeout_s)
{
    trd_threads_opts o;
    trd_threads_opts_init(&o);
    o.timeout_s = timeout_s;
    return trd_comm_threads_create(comm, p, &o);
}

static trd_status create_mpi(trd_comm **comm, int32_t p, double timeout_s)
{
    (void)p; /* the launcher's */
    return trd_comm_mpi_create(comm, NULL, timeout_s); /* MPI_COMM_WORLD */
}

static const trd_wire_info wires[] = {
    {.name = "threads", .summary = "one thread per rank in this process", .launched = false,
     .p_max = TRD_THREADS_MAX, .create = create_threads, .ranks = "threads"},
    {.name = "mpi",
     .summary = "one MPI process per rank (mpirun -np P); shared-memory rings on one node",
     .launched = true, .p_max = 1, .create = create_mpi, .ranks = "MPI processes"},
};
#define WIRES (sizeof wires / sizeof wires[0])

size_t trd_wire_count(void) { return WIRES; }

const trd_wire_info *trd_wire_at(size_t i) { return i < WIRES ? &wires[i] : NULL; }

trd_status trd_wire_find(const char *name, const trd_wire_info **out)
{
    if (!out)
        return trd_fail(TRD_EINVAL, "trd_wire_find: NULL argument (out)");
    *out = NULL;
    for (size_t i = 0; name && i < WIRES; i++)
        if (!strcmp(wires[i].name, name)) {
            *out = &wires[i];
            return TRD_OK;
        }
    char list[256] = "";
    for (size_t i = 0, at = 0; i < WIRES && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "",
                               wires[i].name);
    return trd_fail(TRD_EINVAL, "unknown wire '%s': %s", name ? name : "(null)", list);
}

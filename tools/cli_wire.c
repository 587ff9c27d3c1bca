/* cli_wire.c: --wire NAME (and its older spelling --transport NAME) looked
 * up in the library's wire registry (trd_wire_find), so that no command
 * knows the wires by name. */
#include "cli.h"

int cli_wire(const char *cmd, const char *name, const trd_wire_info **out)
{
    return trd_wire_find(name, out) == TRD_OK ? CLI_OK : cli_usage_error(cmd, "%s", trd_errmsg());
}

int cli_wire_ranks(const char *cmd, const trd_wire_info *wire, int64_t p)
{
    if (wire->launched || (p >= 1 && p <= wire->p_max))
        return CLI_OK;
    return cli_usage_error(cmd, "invalid -p %lld: need 1 <= p <= %ld for %s (-p is required)",
                           (long long)p, (long)wire->p_max, wire->name);
}

const trd_wire_info *cli_comm_wire(const trd_comm *comm)
{
    const trd_wire_info *wire = NULL;
    trd_wire_find(trd_comm_wire(comm), &wire); /* a communicator's wire is a row */
    return wire;
}

/* test_hooks.c: the test hooks of test_hooks.h, kept out of the public
 * options so that a user's communicator never carries them. */
#include "runtime/test_hooks.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runtime/comm.h"
#include "wire/threads.h"

void trd_test_hooks_init(trd_test_hooks *hooks)
{
    *hooks = (trd_test_hooks){.delay_max_us = 0.0, .delay_seed = 1, .dead_rank = -1,
                              .profile_timeout_s = 0.0};
}

/* comm's test state, made on first use with the defaults. */
static trd_comm_test *test_of(trd_comm *comm)
{
    if (!comm->test && (comm->test = calloc(1, sizeof *comm->test)))
        comm->test->profile_timeout_s = TRD_PROFILE_TIMEOUT;
    return comm->test;
}

trd_status trd_test_log_steps(trd_comm *comm, trd_exec_log *log)
{
    if (!comm)
        return trd_fail(TRD_EINVAL, "trd_test_log_steps: NULL communicator");
    if (!test_of(comm))
        return trd_fail(TRD_ENOMEM, "trd_test_log_steps: out of memory");
    comm->test->log = log;
    return TRD_OK;
}

trd_status trd_test_hooks_set(trd_comm *comm, const trd_test_hooks *hooks)
{
    if (!comm || !hooks)
        return trd_fail(TRD_EINVAL, "trd_test_hooks_set: NULL argument (%s)",
                        !comm ? "comm" : "hooks");
    double max = hooks->delay_max_us;
    if (!(max >= 0) || max > 1e6)
        return trd_fail(TRD_EINVAL, "injected delay = %g us is invalid: need 0 to 1e6", max);
    if (!(hooks->profile_timeout_s >= 0) || hooks->profile_timeout_s > 1e6)
        return trd_fail(TRD_EINVAL, "profile timeout = %g s is invalid: need 0 to 1e6",
                        hooks->profile_timeout_s);
    bool threads = !strcmp(comm->wire.name, "threads");
    if (max > 0 && !threads)
        return trd_fail(TRD_EUNSUPPORTED, "injected delay: the %s wire has none (threads only)",
                        comm->wire.name);
    if (!test_of(comm))
        return trd_fail(TRD_ENOMEM, "trd_test_hooks_set: out of memory");
    if (threads)
        trd_wire_threads_delay(&comm->wire, max, hooks->delay_seed);
    comm->test->dead = hooks->dead_rank == comm->wire.rank;
    comm->test->profile_timeout_s =
        hooks->profile_timeout_s > 0 ? hooks->profile_timeout_s : TRD_PROFILE_TIMEOUT;
    return TRD_OK;
}

trd_status trd_test_hooks_set_all(trd_comm **comm, int32_t p, const trd_test_hooks *hooks)
{
    trd_status st = TRD_OK;
    for (int32_t r = 0; st == TRD_OK && r < p; r++)
        st = trd_test_hooks_set(comm ? comm[r] : NULL, hooks);
    return st;
}

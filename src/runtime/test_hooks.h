/* test_hooks.h: fault and timing injection for the tests and for
 * `treduce run --inject-delay / --dead-rank` (docs/RUNTIME.md, "Test
 * hooks").  Compiled into libtreduce but not part of its public API: no
 * installed header declares them, and nothing here may change without
 * notice to users. */
#ifndef TRD_RUNTIME_TEST_HOOKS_H
#define TRD_RUNTIME_TEST_HOOKS_H

#include <stdint.h>

#include "treduce/runtime.h"

/* runtime/exec.h's record of the completed steps, by name only: the hooks'
 * module gives this header alone to its users (treduce_test_hooks). */
typedef struct trd_exec_log trd_exec_log;

typedef struct trd_test_hooks {
    double delay_max_us; /* threads wire: a random delay in [0, max) before
                            each send (0: none; at most 1e6) */
    uint64_t delay_seed; /* seed of those delays (each rank its own stream) */
    int32_t dead_rank;   /* this rank's collective calls return TRD_EIO at
                            once, as if it had died (-1: none) */
    double profile_timeout_s; /* trd_comm_profile's deadline once every rank
                            is in (0: TRD_PROFILE_TIMEOUT) */
} trd_test_hooks;

/* No delay (seed 1), no dead rank. */
void trd_test_hooks_init(trd_test_hooks *hooks);

/* Applies hooks to one rank's handle, before its first call and from the
 * thread that owns it (or before the rank threads start): the rank is
 * dead when dead_rank is its rank, and delays its sends as above.
 * TRD_EINVAL naming the bad value (a delay out of range, a NULL
 * argument); TRD_EUNSUPPORTED for a delay on another wire than threads. */
trd_status trd_test_hooks_set(trd_comm *comm, const trd_test_hooks *hooks);

/* Every completed step of comm's calls from now on is written to log
 * (runtime/exec.h trd_exec_log; NULL: no more), for the tests that
 * compare a run with its simulation.  TRD_ENOMEM, or TRD_OK. */
trd_status trd_test_log_steps(trd_comm *comm, trd_exec_log *log);

/* trd_test_hooks_set on comm[0..p-1] (the handles of one
 * trd_comm_threads_create), stopping at the first failure. */
trd_status trd_test_hooks_set_all(trd_comm **comm, int32_t p, const trd_test_hooks *hooks);

#endif

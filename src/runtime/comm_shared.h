/* comm_shared.h: the plan, engine and dynamic policy of a call, shared by
 * the ranks of one address space (comm_shared.c). */
#ifndef TRD_RUNTIME_COMM_SHARED_H
#define TRD_RUNTIME_COMM_SHARED_H

#include "engine/engine.h"
#include "ir/policy.h"
#include "treduce/treduce.h"

typedef struct trd_comm trd_comm;
typedef struct trd_comm_key trd_comm_key;

/* What every rank of a group reads of a call, built once: the plan (a
 * static algorithm) or the policy (a dynamic one), and the engine over it.
 * The engine's per-run state is per rank (each rank touches only its own
 * steps: engine.c), the plan is never written after it is made, and the
 * policy is the one state a group's decisions share (the threads wire
 * lends one rank's copy to all: threads_sync.c), so one copy serves every
 * rank of a threads world: p ranks hold O(p) between them, not p plans of
 * O(p) each. */
typedef struct trd_shared_call trd_shared_call;

/* The shared structures of key for rank c of its group: found, or built
 * (by the first rank that asks: the others of its group wait for it and
 * take a reference).  A wire without a group (MPI: one rank per process)
 * gets a copy of its own.  On failure *out is NULL and every rank that
 * asks gets the same error. */
trd_status trd_shared_get(trd_comm *c, const trd_comm_key *key, trd_shared_call **out);
/* Drops c's reference (NULL: none); the last one frees everything. */
void trd_shared_put(trd_shared_call *s, const trd_comm *c);
/* TRD_ENOMEM naming the sizes when a call of key (`bytes` per rank) would
 * need more than 80 % of this machine's memory over the ranks of c's
 * node (trd_wire.node_size): their send and receive buffers (the
 * caller's: they exist), their scratch slots and copies of the input,
 * their run state, and the plans and engines (one per group of ranks, one
 * per process without).  Checked before the scratch is allocated: Linux
 * overcommits, so an allocation alone would not fail, and the OOM killer
 * would end the run.  The same answer on every rank of a node. */
trd_status trd_shared_check_memory(const trd_shared_call *s, const trd_comm *c, size_t bytes);
const trd_plan *trd_shared_plan(const trd_shared_call *s);
trd_engine *trd_shared_engine(const trd_shared_call *s);
/* The policy decisions go to (NULL for a static algorithm). */
trd_policy *trd_shared_policy(trd_shared_call *s);

#endif

/* engine.h: the schedule interpreter shared by simulation and execution
 * (docs/ARCHITECTURE.md: one algorithm, three ways to run it - planned,
 * simulated, executed).
 *
 * An engine holds the programs of n ranks (from a plan, or built at run time
 * by a dynamic policy), posts each step to a transport once its
 * dependencies have completed, and runs until every rank is done. */
#ifndef TRD_ENGINE_ENGINE_H
#define TRD_ENGINE_ENGINE_H

#include "ir/policy.h"
#include "engine/run_static.h"
#include "engine/transport.h"

typedef struct trd_engine trd_engine;

/* An engine for the static programs of `plan` (policy NULL), or for a
 * dynamic policy over n ranks (plan NULL; the engine does not own it). */
trd_status trd_engine_create(trd_engine **out, const trd_plan *plan, int32_t n,
                             const trd_policy *policy);
void trd_engine_free(trd_engine *engine);

/* Runs every rank's program to completion over `transport`; *rank_done
 * (optional) gets the rank holding the result.  Reusable: each call starts
 * afresh. */
trd_status trd_engine_run(trd_engine *engine, const trd_transport *transport,
                          int32_t *result_rank);

/* Runs the program of `rank` alone (the runtime: one rank per thread or
 * process, each with its own transport that reports that rank's steps
 * only).  Ranks of one engine may run concurrently in different threads:
 * each touches only its own entries.  A dynamic engine asks its policy,
 * which must then be shared safely (the runtime wraps it); the policy is
 * not reset here.  *holds_result: this rank ends with the reduced value
 * (the plan's result rank, or DONE from the policy). */
trd_status trd_engine_run_rank(trd_engine *engine, const trd_transport *transport,
                               int32_t rank, bool *holds_result);

/* What the engine hands a transport's attach before its first post
 * (transport.h); it lives as long as the engine. */
const trd_layout *trd_engine_layout(const trd_engine *engine);

/* The engine's static programs, for a transport that runs them itself:
 * its attach with trd_engine_layout, then trd_run_static_loop
 * (run_static.h); false for a dynamic policy.  The view lives as long as
 * the engine. */
bool trd_engine_static(trd_engine *engine, trd_static_program *out);

/* The id (transport.h) of step 0 of rank's static program: step i of it
 * is posted as id first + i. */
int32_t trd_engine_first_id(const trd_engine *engine, int32_t rank);

/* Number of SEND steps of the static programs (0 for a policy). */
int64_t trd_engine_send_count(const trd_engine *engine);

#endif

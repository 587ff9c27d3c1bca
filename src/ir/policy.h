/* policy.h: dynamic algorithms (benoit-canon-marchal Sec. 3.2) decide at run
 * time whom an idle rank pairs with.  A rank is idle when it holds a partial
 * result, has no step left to run and has not sent.  The policy answers:
 *   SEND peer   - send the partial result to `peer`, which combines it;
 *   WAIT        - post a receive from any rank and combine what arrives;
 *   DONE        - this rank holds the final result.
 * The shared state lives behind this interface: a plain struct in the
 * simulator (one thread), atomics or MPI one-sided operations in the
 * runtime. */
#ifndef TRD_IR_POLICY_H
#define TRD_IR_POLICY_H

#include <stdint.h>

#include "treduce/treduce.h"

/* A RECV from any rank (dynamic policies: the waiting rank does not know
 * who will send). */
#define TRD_ANY_RANK (-2)

/* TRD_ACT_ERROR: the shared state could not be reached (a runtime wrapper
 * over a wire; trd_errmsg says why). */
typedef enum trd_action { TRD_ACT_SEND, TRD_ACT_WAIT, TRD_ACT_DONE, TRD_ACT_ERROR } trd_action;

typedef struct trd_policy {
    void *state;
    /* Called once per rank becoming idle; sets *peer for TRD_ACT_SEND. */
    trd_action (*idle)(void *state, int32_t rank, int32_t *peer);
    /* Forget every decision (a new run on the same ranks). */
    void (*reset)(void *state);
    void (*destroy)(void *state);
} trd_policy;

/* The dynamic algorithms' policies are declared from registry.def
 * (plan/algorithms.h): the engine names no algorithm. */

#endif

/* algorithms.h: every algorithm's entry point, declared from its row of
 * registry.def (the row's kind says the signature).  An algorithm's file
 * includes this header, so a definition that does not match its row does
 * not compile. */
#ifndef TRD_PLAN_ALGORITHMS_H
#define TRD_PLAN_ALGORITHMS_H

#include "ir/policy.h"
#include "ir/tree.h"

#define TRD_TREE(name, build, bound, source, flags, text) \
    trd_status build(const trd_params *params, trd_tree *tree);
#define TRD_PIPELINED(name, build, segments, flags, text)      \
    trd_status build(const trd_params *params, trd_tree *tree); \
    int64_t segments(const trd_params *params);
#define TRD_EXCHANGE(name, schedule, flags, text) trd_status schedule(trd_plan *plan);
#define TRD_DYNAMIC(name, policy, bound, source, flags, text) \
    trd_status policy(int32_t n, trd_policy *out);
#define TRD_REDUCE_SCATTER(name, schedule, flags, text) trd_status schedule(trd_plan *plan);
#define TRD_SCAN(name, schedule, flags, text) trd_status schedule(trd_plan *plan);
#include "plan/registry.def" /* which undefines the row macros */

#endif

/* faults_calls.h: what the fault-injection tests (test_faults.c over
 * threads, mpi/test_faults_mpi.c over MPI) share: the mismatches rank 0
 * makes (header only, like testutil.h). */
#ifndef TRD_TESTS_FAULTS_CALLS_H
#define TRD_TESTS_FAULTS_CALLS_H

#include <stdbool.h>
#include <string.h>

#include "treduce/plan.h"

/* How rank 0's call differs from the others': another kind (reduce or
 * allreduce), root, count, algorithm or operator (of the same element
 * size). */
typedef enum mism { M_NONE, M_KIND, M_ROOT, M_COUNT, M_ALGO, M_OP } mism;
static const char *const mism_names[] = {"", "kind", "root", "count", "algorithm", "operator"};

/* An algorithm of the same collective as algo that rank 0 calls instead. */
static inline const char *other_algo(const char *algo, trd_collective coll)
{
    if (coll == TRD_COLL_ALLREDUCE)
        return strcmp(algo, "recursive-doubling") ? "recursive-doubling" : "rabenseifner";
    if (coll == TRD_COLL_REDUCE)
        return strcmp(algo, "binomial") ? "binomial" : "chain";
    for (size_t i = 0; i < trd_algo_count(); i++) /* another row of the collective */
        if (trd_algo_runs(i, coll) && strcmp(trd_algo_name(i), algo))
            return trd_algo_name(i);
    return algo;
}

#endif

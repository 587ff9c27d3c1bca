/* faults_calls.h: what the fault-injection tests (test_faults.c over
 * threads, mpi/test_faults_mpi.c over MPI) share: the mismatches rank 0
 * makes (header only, like testutil.h). */
#ifndef TRD_TESTS_FAULTS_CALLS_H
#define TRD_TESTS_FAULTS_CALLS_H

#include <stdbool.h>
#include <string.h>

/* How rank 0's call differs from the others': another kind (reduce or
 * allreduce), root, count, algorithm or operator (of the same element
 * size). */
typedef enum mism { M_NONE, M_KIND, M_ROOT, M_COUNT, M_ALGO, M_OP } mism;
static const char *const mism_names[] = {"", "kind", "root", "count", "algorithm", "operator"};

/* An algorithm of the same kind as algo that rank 0 calls instead. */
static inline const char *other_algo(const char *algo, bool allreduce)
{
    if (allreduce)
        return strcmp(algo, "recursive-doubling") ? "recursive-doubling" : "rabenseifner";
    return strcmp(algo, "binomial") ? "binomial" : "chain";
}

#endif

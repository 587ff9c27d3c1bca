/*
 * treduce.h: the whole public API of treduce, one header per area:
 * status.h (status codes, errors), plan.h (parameters, registry, plans,
 * the schedule IR), simulate.h (cost models, simulation), runtime.h
 * (operators, communicators, collectives) and star.h (star graphs), in
 * libtreduce; mpi.h (communicators over MPI), in libtreduce_wire_mpi;
 * platform.h, steady.h and steady_series.h (platforms, steady state), in
 * libtreduce_steady; figures.h, in libtreduce_figures.
 *
 * Conventions (libuv style): opaque handles, functions named
 * trd_<object>_<verb>, and every fallible call returns a trd_status
 * (0 = TRD_OK, negative = error).  After an error, trd_errmsg() gives a
 * human-readable message that names the bad value; trd_strerror() gives the
 * generic text of a code.  Bad input never crashes and never yields silently
 * wrong numbers.
 *
 * Example: plan the optimal reduction of 64 ranks and print its makespan.
 *
 *     trd_params p;
 *     trd_params_init(&p);
 *     p.n = 64; p.d = 1.0; p.c = 0.5;
 *     trd_plan *plan;
 *     if (trd_plan_create(&plan, "greedy", &p) != TRD_OK) {
 *         fprintf(stderr, "%s\n", trd_errmsg());
 *         return 1;
 *     }
 *     printf("%g\n", trd_plan_makespan(plan));
 *     trd_plan_free(plan);
 */
#ifndef TREDUCE_TREDUCE_H
#define TREDUCE_TREDUCE_H

#include "treduce/version.h"
#include "treduce/status.h"
#include "treduce/plan.h"
#include "treduce/simulate.h"
#include "treduce/runtime.h"
#include "treduce/mpi.h"
#include "treduce/platform.h"
#include "treduce/star.h"
#include "treduce/steady.h"
#include "treduce/steady_series.h"
#include "treduce/figures.h"

#endif

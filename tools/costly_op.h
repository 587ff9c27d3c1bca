/* costly_op.h: the costly user operators of `treduce run` and `treduce
 * bench` (tools/costly_op.c). */
#ifndef TRD_TOOLS_COSTLY_OP_H
#define TRD_TOOLS_COSTLY_OP_H

#include <stdbool.h>

#include "treduce/treduce.h"

/* Whether name is "sleep-sum" or "spin-sum". */
bool cli_costly_name(const char *name);
/* A sum on doubles that also takes cost_us microseconds per call:
 * "sleep-sum" sleeps (a combine offloaded to another device: no core is
 * taken), "spin-sum" spins on the clock (a compute-bound combine).  User
 * operators (commutative), so they exercise that path; results stay
 * exact.  TRD_EINVAL for another name or a cost < 0. */
trd_status cli_costly_op(const char *name, double cost_us, trd_op **op);
/* What each call adds: sleep (timer slack lowered to 1 ns, else a 200 us
 * sleep overshoots by ~50 us) or spin for `seconds`. */
void cli_costly_wait(double seconds, bool sleep);

#endif

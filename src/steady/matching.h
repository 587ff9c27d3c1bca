/* matching.h: the communication schedule of one period (Legrand, Marchal
 * and Robert, Sec. 3.3): the bipartite graph of senders and receivers,
 * one edge per transfer weighted by its duration, cut into weighted
 * matchings (weighted bipartite edge colouring, Schrijver vol. A ch. 20),
 * so that inside a matching every node sends at most once and receives at
 * most once, and the matchings' total duration is the largest weighted
 * degree of the graph (<= the period when the one-port constraints hold).
 * Used by every steady-state problem (scatter, gossip, reduce). */
#ifndef TRD_STEADY_MATCHING_H
#define TRD_STEADY_MATCHING_H

#include <gmp.h>
#include <stdint.h>

#include "treduce/treduce.h"

/* One transfer of a period: `amount` messages of type `label` (a problem's
 * own numbering: a target for scatters, a (source, target) pair for
 * gossips, a partial result v[k,m] for reduces) sent on the link
 * from -> to, busy for `duration` time units (> 0). */
typedef struct trd_xfer {
    int32_t from, to, label;
    mpq_t amount, duration;
} trd_xfer;

/* A set of transfers that run at the same time for `duration`: each node
 * sends on one link and receives on one link at most.  The input's
 * transfers on one link (from, to) form one edge of the colouring, so
 * several of them may share a matching: they then run one after the other
 * in the order listed (input order), and the parts on a link add up to
 * `duration` exactly.  A transfer of the input may be split over several
 * matchings; its parts' amounts and durations add up to the whole (amount
 * split in proportion to duration).  No matching is empty. */
typedef struct trd_matching {
    mpq_t duration;
    int32_t count;
    trd_xfer *xfers;
} trd_matching;

typedef struct trd_matchings {
    int32_t count;
    trd_matching *list;
    mpq_t total; /* sum of the durations = the largest weighted degree */
} trd_matchings;

/* Decomposes the transfers (nodes numbered 0 .. n_nodes-1) into matchings.
 * At most (number of distinct sender/receiver pairs) + 2 n_nodes matchings.
 * Refuses n_nodes <= 0, ends out of range, from == to, durations <= 0,
 * amounts < 0 (TRD_EINVAL).  *out is initialised in every case (left with
 * no matching and total 0 on failure): call trd_matchings_free once after
 * every call with a non-NULL out. */
trd_status trd_matchings_build(const trd_xfer *xfers, int32_t count, int32_t n_nodes,
                               trd_matchings *out);
void trd_matchings_free(trd_matchings *m);

/* Initialises / clears the mpq fields of one transfer. */
void trd_xfer_init(trd_xfer *x);
void trd_xfer_clear(trd_xfer *x);

#endif

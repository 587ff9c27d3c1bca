/* tune.h: "auto" with trd_coll_opts.tune > 0 - the model's best candidates
 * timed on the first calls with the same arguments, the fastest kept
 * (src/select/tune.c). */
#ifndef TRD_SELECT_TUNE_H
#define TRD_SELECT_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/comm.h" /* trd_call_args */
#include "treduce/treduce.h"

typedef struct trd_tune_entry {
    bool used;
    trd_call_args key;
    int32_t n;                                    /* candidates, model's order */
    const char *algo[TRD_TUNE_MAX + 1];
    /* the candidate's long messages take the path the communicator's probe
     * did not keep (trd_comm_long_path): the model's first, once more */
    bool other[TRD_TUNE_MAX + 1];
    double t[TRD_TUNE_MAX + 1][TRD_TUNE_CALLS - 1]; /* this rank's times (round 0 untimed) */
    double measured[TRD_TUNE_MAX + 1];              /* agreed: the slowest rank's medians */
    int32_t calls;                                /* timed so far */
    int32_t chosen;                               /* index in algo; -1 while timing */
} trd_tune_entry;

/* The arguments tuned on one communicator, the oldest replaced first. */
typedef struct trd_tune_table {
    trd_tune_entry entry[TRD_TUNE_KEYS];
    int32_t next;
} trd_tune_table;

/* The entry of these arguments, or NULL. */
trd_tune_entry *trd_tune_find(trd_tune_table *t, const trd_call_args *key);
/* A new entry: the first key->opts.tune of `ranked` (trd_comm_explain's
 * order) that can run the call, and with other_path the first of them
 * again with its long messages the other way; decided at once when there
 * is one candidate. */
trd_tune_entry *trd_tune_start(trd_tune_table *t, const trd_call_args *key,
                               const trd_candidate *ranked, size_t n, bool other_path);
/* What the next call with these arguments runs, and *other whether its
 * long messages take the other path; *timed: whether it is a tuning call
 * (then pass its time to trd_tune_record). */
const char *trd_tune_next(const trd_tune_entry *e, bool *timed, bool *other);
/* Records this rank's time of a tuning call; after the last one, agrees
 * with the other ranks (collective: every rank is at the same call) and
 * keeps the candidate with the smallest slowest-rank median. */
trd_status trd_tune_record(trd_comm *c, trd_tune_entry *e, double seconds);
/* Puts the kept candidate first in `ranked` and fills the timed ones'
 * measured times; nothing before the choice is made. */
void trd_tune_explain(const trd_tune_entry *e, trd_candidate *ranked, size_t n);

#endif

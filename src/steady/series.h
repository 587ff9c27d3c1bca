/* series.h: the periodic schedule of a Series of Reduces compiled into one
 * plan (Legrand, Marchal and Robert 2004, Sec. 4.3-4.5).  series_period.c
 * works out the period (its message slots) and each tree's activities;
 * series.c writes the plan; series_sim.c simulates it. */
#ifndef TRD_STEADY_SERIES_H
#define TRD_STEADY_SERIES_H

#include "steady/steady_internal.h"
#include "treduce/steady_series.h"

/* The compiled series: the plan, the step that completes each operation,
 * and the period. */
typedef struct trd_series {
    trd_plan *plan;
    int64_t ops;
    int32_t target;
    int32_t *done_step; /* per operation: the step of the target's program that
                           leaves its result in slot 0 */
    double period;      /* P = L * T */
    int64_t period_ops; /* W = L * TP * T operations enter per period */
    int32_t depth;      /* levels of the deepest tree: periods an operation spans */
} trd_series;

/* Compiles operations 0 .. ops-1 (arguments as trd_steady_series_plan). */
trd_status trd_series_build(const trd_steady *st, const trd_platform *pf, int64_t ops,
                            trd_series *out);
void trd_series_free(trd_series *s);

/* --- series_period.c --- */

/* The period of the schedule: the matchings of one period T stretched by
 * the least L that makes every message count of every matching an integer
 * (Sec. 3.3: "multiplicating again by the least common multiple of all
 * denominators"), so P = L * T and W = L * TP * T operations enter per
 * period.  Send entry s (a link and a message type) owns the message slots
 * first[s] .. first[s + 1] - 1 of a period, in time order. */
typedef struct trd_sr_period {
    int64_t stretch;      /* L */
    double length;        /* P */
    int64_t ops;          /* W */
    int64_t *share;       /* per tree: L * w(tree) of the W operations */
    int32_t *first;       /* CSR over st->sends */
    double *start, *len;  /* per slot: offset in the period, duration */
} trd_sr_period;

trd_status trd_sr_period_make(const trd_steady *st, trd_sr_period *p);
void trd_sr_period_free(trd_sr_period *p);

enum { TRD_SR_OWN = -1 }; /* an input that is v[i,i] on its owner */

/* One activity of a tree: a task T_{k,l,m} computed on `node`, or a hop of
 * a message from `node` to `to` (send entry `send`). */
typedef struct trd_sr_act {
    bool hop;
    int32_t node, to, send;
    int32_t in[2];      /* acts producing the inputs (task: v[k,l], v[l+1,m];
                           hop: the message), or TRD_SR_OWN; hops use in[0] */
    int32_t slot_in[2]; /* their slots on `node` */
    int32_t slot;       /* the result's slot (task: on node; hop: on to) */
    bool join;          /* a task of two received inputs: COPY the left one into
                           `slot` first (a step has two deps) */
    int32_t level;      /* 0 if every input is own, else 1 + the inputs' largest */
    int32_t ring;       /* hop: the next hop of the tree on the same link (a
                           ring; itself when alone) */
    double cost;        /* model time: hop size * cost(e), task size / speed */
} trd_sr_act;

/* A tree as activities: its tasks, then its hops (the tree's order). */
typedef struct trd_sr_tree {
    int32_t n;
    trd_sr_act *acts;
    int32_t *order;  /* the acts by level: producers before their consumers */
    int32_t final;   /* the act that leaves v[0,N] on the target */
    int32_t touch0;  /* the last act that reads or writes slot 0 on the target
                        (-1 when the target takes no part) */
    int32_t depth;   /* 1 + the largest level */
    int32_t slots;   /* slots used on any node, slot 0 included */
} trd_sr_tree;

trd_status trd_sr_tree_make(const trd_steady *st, const trd_platform *pf,
                            const trd_sd_tree *tree, trd_sr_tree *out);
void trd_sr_tree_free(trd_sr_tree *t);

#endif

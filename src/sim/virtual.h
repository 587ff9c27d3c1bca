/* virtual.h: the virtual-time transport: the engine's steps run in
 * simulated time under a port model and a cost model. */
#ifndef TRD_SIM_VIRTUAL_H
#define TRD_SIM_VIRTUAL_H

#include "core/hash_index.h"
#include "core/xoshiro.h"
#include "engine/engine.h"
#include "ir/costs.h"
#include "sim/event_queue.h"

/* A posted step, by id (transport.h). */
typedef struct trd_vstep {
    double ready;    /* SEND: max(post time, release) */
    double planned;  /* SEND: the plan's start time (ties in ready) */
    int32_t rank;    /* whose step it is (not kept for a RECV) */
    int32_t peer;    /* SEND: receiver; RECV: sender or TRD_ANY_RANK */
    int32_t next;    /* RECV: next posted receive */
    int32_t next_out; /* SEND, once started: its RECV */
} trd_vstep;

/* A posted SEND's place among the waiting ones, by id. */
typedef struct trd_vsend {
    uint32_t seq;       /* posting order in this run: ties in (ready, planned) */
    int32_t pair;       /* its (sender, receiver) pair (trd_vpair) */
    int32_t prev, next; /* the pair's unstarted sends, in posting order */
} trd_vsend;

/* A binary heap of ids (sends by their order, or pairs by their first),
 * its items at trd_virtual.arena + off: every heap of the simulator lies
 * in one array, close to the others of its rank and its pairs (allocated
 * one by one, they spread over the cache and doubled the misses of a
 * small simulation). */
typedef struct trd_vheap {
    uint32_t off;
    int32_t len, cap;
} trd_vheap;

/* The sends of one rank to one receiver that have not started.  All of
 * them are in first..last (posting order); those the receiver may take
 * now (released, their receive posted or none to wait for) are also in
 * `ready`, by order: the receiver's queue of senders is the merge of its
 * pairs' `ready` heaps (its pair heap, by their first), so skipping a
 * sender whose port is busy skips its pair at once.  A sender's pairs are
 * listed by their last send, the most recent first (up, down): the order
 * in which a rank with new sends tries their receivers. */
typedef struct trd_vpair {
    int32_t from, to;
    uint32_t run;         /* the run that last touched it: older state is stale */
    int32_t at;           /* position in `to`'s pair heap; -1: not in it */
    int32_t first, last;  /* unstarted sends, -1: none */
    int32_t up, down;     /* neighbours in from's list of pairs */
    trd_vheap ready;
} trd_vpair;

/* Per rank. */
typedef struct trd_vrank {
    int32_t waiting;   /* posted sends to this rank that have not started */
    int32_t out_first; /* the pair of its most recent unstarted send, -1: none */
    int32_t recv_head; /* posted receives without a partner, in posting order
                          (static plans give every receive a partner, so
                          this short list only holds receives from any
                          rank: no tail pointer, which would cost the 16-byte
                          record its power-of-two size) */
    uint8_t busy;      /* port bits in use (trd_virtual.send_bits, recv_bits) */
    uint8_t dirty;     /* in `dirty`: to try once the instant has settled */
} trd_vrank;

/* Per receiver: its pairs with sends it may take now (by their first
 * send), its sends released later than now (by release time) that no
 * wake-up was asked for yet, and those it was (later, woken).  While it
 * may take only one send now, that send is in `solo` instead of the heaps
 * (-1: none), which stay empty. */
typedef struct trd_vqueues {
    trd_vheap pairs, later, woken;
    int32_t solo;
    int32_t room; /* waiting sends its heaps and trd_virtual.aside have room for */
} trd_vqueues;

typedef struct trd_virtual {
    int32_t n;
    trd_port port;
    uint8_t send_bits, recv_bits; /* port bits a transfer takes on each side */
    bool random;             /* costs are drawn (not TRD_DIST_CONST) */
    const trd_costs *costs;
    bool plain;              /* homogeneous constant costs: mean_d and mean_c, */
    double mean_d, mean_c;   /* read at each reset */
    bool draw_c;             /* combines have a drawn part (random, c not 0) */
    trd_xoshiro rng_d, rng_c; /* common random numbers: one stream per kind */
    double now;
    trd_event_queue events;
    trd_vrank *ranks;
    trd_vrank *idle;         /* n idle ranks: what reset copies into ranks */
    double *cpu_free;        /* by rank: when its last combine ends (a rank
                                combines one thing at a time) */
    int32_t *dirty;          /* ranks whose transfers may start once the current */
    int32_t ndirty;          /* instant has settled (ties follow the plan) */
    trd_vstep *st;           /* by id */
    trd_vsend *sd;           /* by id: SENDs */
    uint8_t *flag;           /* by id: posted RECV matched by partner, parked SEND */
    int32_t cap;             /* ids below cap have room */
    const int32_t *partner;  /* the engine's partners, or no_partner */
    const float *scale;      /* the engine's shares of the buffer, or NULL */
    int32_t *no_partner;     /* -1 for every id: not attached, or no partners */
    int32_t *tag;            /* by id: the step's first block (message tag) */
    int32_t held[3];         /* a completion to hand out next: rank, id, from */
    bool holding;
    double *started;         /* by id, once trd_virtual_trace asked for it: when
                                the step began (a transfer: both its steps and a
                                RECV_COMBINE's combine; a combine: once its rank
                                was free); NULL: not traced */
    trd_vqueues *queues;     /* by rank */
    trd_vpair *pairs;        /* every (sender, receiver) seen, found through */
    trd_index pair_index;    /* pair_index */
    int32_t npairs, pairs_cap;
    uint32_t run;            /* numbers the resets: a pair of another run is stale */
    uint32_t posts;          /* SENDs posted in this run */
    int32_t *aside;          /* try_receiver's skipped pairs and sends */
    int32_t naside, aside_cap;
    int32_t *arena;          /* the heaps' items (trd_vheap) */
    size_t arena_used, arena_cap;
    /* Nodes (trd_virtual_set_nodes; NULL: none): a transfer between two
     * nodes also takes its sender node's link out and its receiver node's
     * link in (node_busy bits LINK_OUT, LINK_IN, by node), one transfer
     * each at a time; node k's ranks are node_member[node_first[k] ..
     * node_first[k + 1]). */
    const int32_t *node_of;
    uint8_t *node_busy;
    int32_t *node_first, *node_member;
    bool far;                /* transfers between nodes cost far_latency + */
    double far_latency, far_base; /* far_base times their share */
} trd_virtual;

/* Records from now on when each posted step begins, in v->started[id]
 * (read it when the step completes: a dynamic engine reuses its ids). */
trd_status trd_virtual_trace(trd_virtual *v);

/* Allocates a transport for n ranks; seeds come from trd_virtual_reset. */
trd_status trd_virtual_init(trd_virtual *v, int32_t n, trd_port port, const trd_costs *costs);
/* The node of each rank (trd_params.node_of, values in [0, n); borrowed:
 * it must outlive v): from the next reset on, the ranks of one node share
 * one link to the network in each direction, as the ports of the port
 * model are shared by one rank's transfers (none under TRD_PORT_MULTI);
 * NULL: every rank a node of its own, its ports its links.  far_d > 0
 * (trd_params.far_d, far_latency): a whole-buffer transfer between two
 * nodes costs that, far_latency of it per message, instead of the costs'
 * (homogeneous costs only: bases d[i][j] say it themselves). */
trd_status trd_virtual_set_nodes(trd_virtual *v, const int32_t *node_of, double far_d,
                                 double far_latency);
void trd_virtual_destroy(trd_virtual *v);
/* Starts run `run` of `seed` at time 0 with its own cost streams. */
void trd_virtual_reset(trd_virtual *v, uint64_t seed, int64_t run);
/* The vtable over v. */
trd_transport trd_virtual_transport(trd_virtual *v);
/* Runs `engine` over v, as trd_engine_run over the vtable does (static
 * programs faster: the transport's calls are inlined into the loop). */
trd_status trd_virtual_run(trd_virtual *v, trd_engine *engine, int32_t *result_rank);

#endif

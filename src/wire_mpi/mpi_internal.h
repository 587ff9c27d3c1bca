/* mpi_internal.h: the state of the MPI wire, shared by mpi.c (the data
 * path), mpi_control.c (the coordinator, barriers and agreements),
 * mpi_node.c (the rings of one node and the path of long messages),
 * mpi_create.c (creation and release) and mpi_fail.c (its failures, the
 * notices that tell the peers, and the call signature in the tags).  Only
 * built with MPI. */
#ifndef TRD_WIRE_MPI_INTERNAL_H
#define TRD_WIRE_MPI_INTERNAL_H

#include <mpi.h>
#include <stdbool.h>

#include "core/fifo.h"
#include "wire_mpi/mpi_wire.h"
#include "wire_mpi/shm.h"

#define CTRL_TAG 0x100000       /* first tag of the wire's own messages */
#define SIG_SHIFT 21            /* the call signature's bits in a tag start here (mpi_fail.c) */
#define SIG_BITS_MAX 10
#define SIG_HISTORY 8           /* calls whose signatures a rank remembers (mpi_fail.c) */

enum { K_SEND, K_RECV };
/* Offsets from ctrl_tag: decision request and reply, barrier arrival and
 * release, a peer's failure, the call a stalled peer waits in, the
 * deferred set-up (mpi_node.c). */
enum { T_REQ, T_REP, T_ARRIVE, T_RELEASE, T_ABORT, T_CALL, T_SETUP, T_COUNT };
/* The wire's own requests.  Rank 0: the two receives always posted; other
 * ranks: their decision request and reply, their barrier arrival and
 * release; every rank: the receives of a failed peer's notice and of a
 * stalled peer's call. */
enum {
    C_REQ_IN,
    C_ARRIVE_IN,
    C_REQ_OUT,
    C_REP_IN,
    C_ARRIVE_OUT,
    C_RELEASE_IN,
    C_ABORT_IN,
    C_CALL_IN,
    C_COUNT
};

typedef struct op_info {
    int32_t id, kind, peer, tag;
    size_t bytes;
} op_info;

/* A decision request rank 0 holds until it enters that call. */
typedef struct held_req {
    int32_t src, rank;
    int64_t call;
} held_req;

/* A barrier's arrival or release, with the values it agrees on (agree):
 * 16 + 8 n bytes of it travel. */
typedef struct agree_msg {
    int64_t seq, n;
    double v[TRD_WIRE_AGREE_MAX];
} agree_msg;

/* A failed rank's notice to its peers. */
typedef struct fail_msg {
    int32_t code, rank;
    char text[496];
} fail_msg;

typedef struct mpi_wire {
    trd_wire wire; /* first: the wire and its ctx are one allocation */
    MPI_Comm comm;
    int rank, size, ctrl_tag;
    int node_ranks;   /* ranks of comm on this rank's node (MPI_COMM_TYPE_SHARED) */
    int *world;       /* the world ranks of its ranks (NULL: not all in the world) */
    bool deferred;    /* ready comes with the first message (trd_wire_mpi_setup) */
    bool ready;       /* the rings and the long messages' path are set up
                         (trd_mpi_prepare: at creation, or deferred to the
                         first message) */
    bool choose_path; /* prepare chooses the path of long messages */
    const double *probe_given; /* ...by this probe, read then (NULL: measured) */
    double timeout;
    long empty_polls; /* back-off state */
    bool crowded;     /* more ranks on this node than cores: idle waits sleep */
    /* Where the split counted them (node_ranks of them, else NULL): the
     * ranks of this node, ascending (trd_wire.node_ranks), and their
     * processes (trd_mpi_silent: the dead ones). */
    int32_t *node_list, *node_pids;
    long clock_polls; /* polls since the clock was last read (past) */
    long ctrl_polls;  /* polls of a send or receive's wait (wire_wait) */
    /* Posted sends and receives (MPI_Testsome wants the requests contiguous). */
    int n, cap;
    MPI_Request *reqs;
    op_info *info;
    int *idx;
    MPI_Status *st;
    trd_fifo done; /* completions not handed out yet */
    /* The small messages' rings when the whole communicator is on one
     * node (shm.h); NULL otherwise. */
    trd_shm *shm;
    char shm_name[64]; /* its segment's (mpi_pool.c) */
    size_t shm_below; /* messages shorter than this go through them (0: none) */
    bool shm_choice;  /* the limit is the default where every rank has a core:
                         the path of long messages may be measured (mpi_node.c) */
    double probe[2];  /* that measure's medians (seconds; rings, MPI), 0: none */
    bool long_other;  /* long messages now take the path the probe did not keep */
    /* The wire's own messages and their buffers. */
    MPI_Request ctrl[C_COUNT];
    int64_t req_in[2], req_out[2];
    agree_msg arrive_in, arrive_out, release_in;
    int32_t rep_in[2];
    bool replied, released;
    int64_t barrier_seq; /* barriers passed so far */
    /* Rank 0, the coordinator. */
    const trd_policy *policy; /* of the call being served; NULL between calls */
    int64_t call;             /* the call being served */
    int32_t terminals;        /* SEND or DONE decisions given in this call */
    int32_t arrivals;         /* barrier arrivals not consumed yet */
    int64_t *arrived;         /* rank 0, by rank: 1 + the barrier it last arrived at */
    int64_t *decided;         /* rank 0, by rank: 1 + the call of its last terminal decision */
    int32_t agreed;           /* ...and contributions in acc (this rank's too) */
    int64_t acc_n;
    double acc[TRD_WIRE_AGREE_MAX]; /* the largest values contributed so far */
    held_req *held;
    int nheld;
    int32_t (*reply)[2];
    MPI_Request *reply_req;
    agree_msg *release_out;
    MPI_Request *release_req;
    /* Calls and failures (mpi_fail.c). */
    const trd_call_sig *call_sig; /* wire.h set_call */
    int sig_bits;                 /* of the tags (0: none fit) */
    trd_status fail_code;         /* TRD_OK while the wire is ok */
    int fail_rank;
    bool withdrawn;   /* abort took this rank's requests back */
    fail_msg fail;    /* the first failure; sent to the peers when it is ours */
    fail_msg fail_in; /* a peer's notice (C_ABORT_IN) */
    MPI_Request *fail_req; /* the notices sent, one per peer */
    /* The calls stalled waits announce to the peers they wait for, and
     * those announced here, per peer (trd_mpi_find_mismatch). */
    uint64_t call_in;
    uint64_t *heard, *told, *tell;
    MPI_Request *tell_req;
    bool heard_new;               /* heard[] changed since it was last checked */
    uint64_t past[SIG_HISTORY];   /* the signatures of this rank's last calls, by number */
    /* Closing (mpi_close.c): freed by its owner, the wire lives on until
     * no message can still reach its communicator. */
    int close_stage;
    int close_dirty, close_any_dirty; /* the closing agreement: in, out */
    MPI_Request close_req;
    struct mpi_wire *close_next;
} mpi_wire;

/* mpi.c: the data path */
trd_status trd_mpi_error(trd_status code, int rc, const char *what, int rank);
trd_status trd_mpi_poll_once(mpi_wire *w, bool ctrl, bool *progress);
void trd_mpi_back_off(mpi_wire *w, bool progress);
/* Whether the deadline has passed, as far as a due clock read says. */
bool trd_mpi_past(mpi_wire *w, double deadline);
/* Tests one request of the wire's own until it completes. */
trd_status trd_mpi_finish(mpi_wire *w, MPI_Request *r, double deadline);
/* wire.h's isend, irecv, wait and now. */
trd_status trd_mpi_isend(void *ctx, int32_t peer, int32_t tag, const void *buf, size_t bytes,
                         int32_t id);
trd_status trd_mpi_irecv(void *ctx, int32_t peer, int32_t tag, void *buf, size_t bytes,
                         int32_t id);
trd_status trd_mpi_wait(void *ctx, double timeout_s, int32_t *id, int32_t *from);
double trd_mpi_now(void *ctx);
/* MPI_Testsome on the wire's requests with the world's handler set to
 * return (MPICH raises completion errors there). */
int trd_mpi_testsome(int n, MPI_Request *reqs, int *count, int *idx, MPI_Status *st);
/* Drops the completed (null) requests, keeping the others in posting order. */
void trd_mpi_compact(mpi_wire *w);

/* mpi_control.c: the wire's own messages */
/* Serves the wire's own messages that have come (*progress: any). */
trd_status trd_mpi_poll_ctrl(mpi_wire *w, bool *progress);
/* Rank 0's standing receives (C_REQ_IN, C_ARRIVE_IN), reposted as soon as
 * one completes. */
trd_status trd_mpi_post_standing(mpi_wire *w, int slot);
/* wire.h's decide, end_dynamic, barrier and agree. */
trd_status trd_mpi_decide(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                          trd_action *action, int32_t *peer);
trd_status trd_mpi_end_dynamic(void *ctx, const trd_policy *policy, int64_t call);
trd_status trd_mpi_barrier(void *ctx, double deadline);
trd_status trd_mpi_agree(void *ctx, double *v, int32_t n, double deadline);

/* mpi_node.c: the rings of one node */
/* w->node_ranks, counted by MPI_Comm_split_type unless known, and
 * w->crowded (from procs, the node's processes, if > 0); an MPI error
 * code. */
int trd_mpi_count_node(mpi_wire *w, int32_t known, int32_t procs);
/* Appends to buf (at *at, of size) what a deadline's message can say of
 * silent ranks: "; rank 2 (pid 4711) is dead" for every rank of this node
 * whose process has ended, where the node's processes are known (counted
 * by the split at creation: mpi_node.c).  Of ranks on other nodes nothing
 * can be known but that they sent nothing. */
void trd_mpi_silent(const mpi_wire *w, char *buf, size_t size, size_t *at);
/* The rings, when the node holds the whole communicator, and the path of
 * long messages: run by every rank before its first message (deferred
 * from creation, or at its end), through the wire's own messages.
 * TRD_OK at once when ready. */
trd_status trd_mpi_prepare(mpi_wire *w);
/* What every operation of the wire calls first: TRD_OK, or the wire's
 * failure (the set-up's too). */
trd_status trd_mpi_ready(mpi_wire *w);
/* wire.h's long_choice and long_path (trd_wire_mpi_long_choice, _path). */
bool trd_mpi_long_choice(void *ctx, size_t bytes);
trd_status trd_mpi_long_path(void *ctx, bool other);

/* mpi_close.c: releasing a wire */
/* Starts closing w (its owner freed it): w is released once every rank
 * has closed it and no message can reach its communicator any more. */
void trd_mpi_close(mpi_wire *w);
/* Advances the wires being closed (cheap when there are none). */
void trd_mpi_reap(void);
/* Frees w's memory and, when clean, its communicator (the last step). */
void trd_mpi_destroy(mpi_wire *w, bool free_comm);
/* Stops closing w: its receives cancelled, its communicator kept. */
void trd_mpi_give_up(mpi_wire *w);
/* Registers, once, the release at MPI_Finalize of what is still closing. */
void trd_mpi_close_at_finalize(void);
/* Whether a wire being closed holds the rings of segment `name`. */
bool trd_mpi_closing_holds(const char *name);

/* mpi_pool.c: the rings of closed wires, for the next over the same processes */
/* Keeps w->shm (quiet, its wire closed cleanly everywhere); w->shm NULL. */
void trd_mpi_pool_put(mpi_wire *w);
/* Rank 0: a kept segment for w's processes and slots of frag bytes (its
 * name in name), taken out of the pool; NULL if none. */
trd_shm *trd_mpi_pool_take_any(const mpi_wire *w, size_t frag, char name[64]);
/* The other ranks: their end of the segment rank 0 offers, waiting until
 * the deadline for a close of theirs that holds it; NULL if none. */
trd_shm *trd_mpi_pool_take(mpi_wire *w, const char *name, size_t frag, double deadline);
/* MPI_Finalize: every kept segment unmapped. */
void trd_mpi_pool_finish(void);

/* mpi_create.c */
/* wire.h's free: closes the wire (mpi_close.c). */
void trd_mpi_free(void *ctx);
/* Cancels (receives) or abandons (sends) a request of the wire's. */
void trd_mpi_drop(MPI_Request *r, bool cancel);
/* Whether w is an MPI wire (its ctx an mpi_wire). */
bool trd_mpi_is_wire(const trd_wire *w);

/* mpi_fail.c */
/* s (returned): when not TRD_OK, the wire's first failure if it has none
 * yet, told to the peers. */
trd_status trd_mpi_broke(mpi_wire *w, trd_status s);
/* TRD_OK, or the failure (the wire's own or a peer's) as a call's status. */
trd_status trd_mpi_check_usable(const mpi_wire *w);
/* A peer's notice arrived (C_ABORT_IN): the wire is failed with it. */
trd_status trd_mpi_on_notice(mpi_wire *w, int src);
/* The standing receives of a peer's failure notice (C_ABORT_IN) and of a
 * stalled peer's call (C_CALL_IN), posted (again); MPI error codes. */
int trd_mpi_post_notice_in(mpi_wire *w);
int trd_mpi_post_call_in(mpi_wire *w);
/* Posts the receives of the peers' notices and calls; sets sig_bits from
 * the tags. */
trd_status trd_mpi_setup_faults(mpi_wire *w, int tag_ub);
/* The signature of the current call, which the wire remembers
 * (trd_mpi_find_mismatch): what every send and receive calls first. */
uint64_t trd_mpi_call_now(mpi_wire *w);
/* The MPI tag of a message with the wire's tag `tag` in the current call. */
int trd_mpi_tag(const mpi_wire *w, int32_t tag);
/* TRD_EIO when a peer is known to be in another call than this rank's
 * current one (a stalled wait's look: mpi_fail.c). */
trd_status trd_mpi_find_mismatch(mpi_wire *w);
/* A stalled peer announced the call it waits for a message of ours in
 * (C_CALL_IN). */
trd_status trd_mpi_on_call(mpi_wire *w, int src);
/* What peers announced since it was last checked, against this rank's
 * calls (cheap when nothing came: every wait starts with it). */
trd_status trd_mpi_check_heard(mpi_wire *w);
void trd_mpi_abort(void *ctx, trd_status code, const char *why);
trd_status trd_mpi_failed(void *ctx);
void trd_mpi_set_call(void *ctx, const trd_call_sig *call);

#endif

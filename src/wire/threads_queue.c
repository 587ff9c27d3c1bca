/* threads_queue.c: a mailbox's queue of waiting sends or posted receives
 * (threads_world.h): records in arrival order, taken from anywhere in
 * O(1), and found in O(1) however long the queue.
 *
 * A queue is a doubly linked list of nodes in arrival order.  While it is
 * short (QUEUE_SCAN records at most, the common case: a collective keeps
 * a few messages in flight) a search walks it from the front, as the
 * matching rules read (wire.h: per sender and tag in arrival order, a
 * receive from TRD_ANY_RANK accepting any sender).  Once longer, every
 * record is also linked into the list of its channel (peer, tag) and of
 * its peer, whose heads a hash table keeps: the first record matching
 * (peer, tag) is the earlier of the heads of (peer, tag) and (TRD_ANY_RANK,
 * tag), and a record of that peer from another call (trd_queue_find's
 * *other) is found through the peer's list.  Both give what the walk
 * gives: a pipeline of 65 536 segments posts 65 536 receives at once, and
 * a walk (with an array's memmove to take from its front) made every
 * message cost the length of the queue.  The index is dropped when the
 * queue empties.  Every function here runs with the box's lock held. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/hash_index.h"
#include "wire/threads_world.h"

/* Records a queue holds before it keeps an index: a walk of a few records
 * costs less than keeping one. */
#define QUEUE_SCAN 8
/* The tag of a peer's own list in the hash table (no block is negative). */
#define TAG_PEER (-1)

static trd_status out_of_memory(void)
{
    return trd_fail(TRD_ENOMEM, "threads wire: out of memory");
}

/* Whether record a arrived before record b (the count wraps). */
static bool earlier(const queue *q, int32_t a, int32_t b)
{
    return (int32_t)(q->node[a].seq - q->node[b].seq) < 0;
}

/* --- the hash table of lists ---------------------------------------------- */

static uint32_t home(const queue *q, int32_t peer, int32_t tag)
{
    return (uint32_t)trd_hash_pair(peer, tag) & (q->slots - 1);
}

/* The slot of list (peer, tag), or of the empty slot where it would go. */
static uint32_t probe(const queue *q, int32_t peer, int32_t tag)
{
    uint32_t i = home(q, peer, tag);
    while (q->slot[i].used && (q->slot[i].peer != peer || q->slot[i].tag != tag))
        i = (i + 1) & (q->slots - 1);
    return i;
}

static qlist *list_of(const queue *q, int32_t peer, int32_t tag)
{
    uint32_t i = probe(q, peer, tag);
    return q->slot[i].used ? &q->slot[i].list : NULL;
}

/* Room for `lists` lists at a load of at most one half, in a new empty
 * table if the old one is too small (index_build fills it). */
static bool table_room(queue *q, uint32_t lists)
{
    uint32_t want = 16;
    while (want < 2 * lists)
        want *= 2;
    if (want <= q->slots)
        return true;
    qslot *slot = calloc(want, sizeof *slot);
    if (!slot)
        return false;
    free(q->slot);
    q->slot = slot;
    q->slots = want;
    return true;
}

/* Removes slot i, shifting back the slots of its probe run (linear
 * probing without tombstones). */
static void slot_remove(queue *q, uint32_t i)
{
    uint32_t mask = q->slots - 1;
    for (uint32_t j = (i + 1) & mask; q->slot[j].used; j = (j + 1) & mask) {
        uint32_t h = home(q, q->slot[j].peer, q->slot[j].tag);
        /* j's entry may fill the hole at i unless its home lies in (i, j] */
        bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            q->slot[i] = q->slot[j];
            i = j;
        }
    }
    q->slot[i].used = false;
    q->lists--;
}

/* Node id joins the tail of list (peer, tag), made if new (room made). */
static void list_append(queue *q, int32_t peer, int32_t tag, int32_t id, bool by_peer)
{
    uint32_t i = probe(q, peer, tag);
    qslot *s = &q->slot[i];
    qnode *n = &q->node[id];
    int32_t *prev = by_peer ? &n->pprev : &n->cprev, *next = by_peer ? &n->pnext : &n->cnext;
    if (!s->used) {
        *s = (qslot){.used = true, .peer = peer, .tag = tag, .list = {id, id}};
        q->lists++;
        *prev = *next = -1;
        return;
    }
    *prev = s->list.tail;
    *next = -1;
    qnode *t = &q->node[s->list.tail];
    if (by_peer)
        t->pnext = id;
    else
        t->cnext = id;
    s->list.tail = id;
}

static void list_unlink(queue *q, int32_t peer, int32_t tag, int32_t id, bool by_peer)
{
    uint32_t i = probe(q, peer, tag);
    qlist *l = &q->slot[i].list;
    qnode *n = &q->node[id];
    int32_t prev = by_peer ? n->pprev : n->cprev, next = by_peer ? n->pnext : n->cnext;
    if (prev >= 0)
        *(by_peer ? &q->node[prev].pnext : &q->node[prev].cnext) = next;
    else
        l->head = next;
    if (next >= 0)
        *(by_peer ? &q->node[next].pprev : &q->node[next].cprev) = prev;
    else
        l->tail = prev;
    if (l->head < 0)
        slot_remove(q, i);
}

/* Node id into its channel's list and its peer's. */
static void index_add(queue *q, int32_t id)
{
    const pending *p = &q->node[id].p;
    list_append(q, p->peer, p->tag, id, false);
    list_append(q, p->peer, TAG_PEER, id, true);
}

/* Every record into the index, in arrival order (room for 2 lists per
 * record, and for those to come until the queue is twice as long). */
static bool index_build(queue *q)
{
    if (!table_room(q, 4 * (uint32_t)q->len))
        return false;
    for (int32_t id = q->head; id >= 0; id = q->node[id].next)
        index_add(q, id);
    q->indexed = true;
    return true;
}

static void index_drop(queue *q)
{
    if (q->slot)
        memset(q->slot, 0, q->slots * sizeof *q->slot);
    q->lists = 0;
    q->indexed = false;
}

/* --- records --------------------------------------------------------------- */

trd_status trd_queue_push(queue *q, const pending *p)
{
    if (q->spare < 0) {
        int32_t cap = q->cap ? 2 * q->cap : 16;
        qnode *node = realloc(q->node, (size_t)cap * sizeof *node);
        if (!node)
            return out_of_memory();
        for (int32_t k = q->cap; k < cap; k++)
            node[k].next = k + 1 < cap ? k + 1 : -1;
        q->node = node;
        q->spare = q->cap;
        q->cap = cap;
    }
    if (q->indexed && 2 * (q->lists + 2) > q->slots)
        index_drop(q); /* the table grows: rebuilt below */
    int32_t id = q->spare;
    qnode *n = &q->node[id];
    q->spare = n->next;
    *n = (qnode){.p = *p, .prev = q->tail, .next = -1, .seq = q->seq++};
    if (q->tail >= 0)
        q->node[q->tail].next = id;
    else
        q->head = id;
    q->tail = id;
    q->len++;
    if (q->indexed)
        index_add(q, id);
    else if (q->len > QUEUE_SCAN && !index_build(q))
        index_drop(q); /* no memory for an index: the walk still finds every record */
    return TRD_OK;
}

pending trd_queue_take(queue *q, int32_t id)
{
    qnode *n = &q->node[id];
    pending p = n->p;
    if (q->indexed) {
        list_unlink(q, p.peer, p.tag, id, false);
        list_unlink(q, p.peer, TAG_PEER, id, true);
    }
    if (n->prev >= 0)
        q->node[n->prev].next = n->next;
    else
        q->head = n->next;
    if (n->next >= 0)
        q->node[n->next].prev = n->prev;
    else
        q->tail = n->prev;
    n->next = q->spare;
    q->spare = id;
    if (--q->len == 0 && q->indexed)
        index_drop(q);
    return p;
}

void trd_queue_clear(queue *q)
{
    while (q->head >= 0)
        trd_queue_take(q, q->head);
}

void trd_queue_drop_peer(queue *q, int32_t peer)
{
    for (int32_t id = q->head, next; id >= 0; id = next) {
        next = q->node[id].next;
        if (q->node[id].p.peer == peer)
            trd_queue_take(q, id);
    }
}

void trd_queue_free(queue *q)
{
    free(q->node);
    free(q->slot);
    *q = (queue){.head = -1, .tail = -1, .spare = -1};
}

/* --- matching --------------------------------------------------------------- */

/* The walk of the rules (wire.h), as the index answers it. */
static int32_t walk_find(const queue *q, int32_t peer, int32_t tag, uint64_t sig, int32_t *other)
{
    for (int32_t id = q->head; id >= 0; id = q->node[id].next) {
        const pending *p = &q->node[id].p;
        if (p->peer == peer && peer != TRD_ANY_RANK && p->sig != sig) {
            *other = id;
            return -1;
        }
        bool who = p->peer == peer || p->peer == TRD_ANY_RANK || peer == TRD_ANY_RANK;
        if (who && p->tag == tag)
            return id;
    }
    return -1;
}

/* The first record of the peer's list with another signature than sig,
 * or -1: the peer's records are in its calls' order, so they come as runs
 * of one signature each (a later call has another number: callsig.h).
 * The walk through a first run of sig is short: a box holds the records
 * of a receiver's earlier call only when its sender has finished that
 * call, so they are eager sends, complete when posted (at most a ring's
 * and EAGER_QUEUE of them, threads.c). */
static int32_t other_of(const queue *q, const qlist *mine, uint64_t sig)
{
    if (!mine || (q->node[mine->tail].p.sig == sig && q->node[mine->head].p.sig == sig))
        return -1;
    int32_t id = mine->head;
    while (q->node[id].p.sig == sig)
        id = q->node[id].pnext;
    return id;
}

int32_t trd_queue_find(const queue *q, int32_t peer, int32_t tag, uint64_t sig, int32_t *other)
{
    *other = -1;
    if (!q->indexed || peer == TRD_ANY_RANK) /* any sender: the records of every channel */
        return walk_find(q, peer, tag, sig, other);
    const qlist *exact = list_of(q, peer, tag), *any = list_of(q, TRD_ANY_RANK, tag);
    int32_t match = exact ? exact->head : -1;
    if (any && (match < 0 || earlier(q, any->head, match)))
        match = any->head;
    int32_t odd = other_of(q, list_of(q, peer, TAG_PEER), sig);
    if (odd >= 0 && (match < 0 || odd == match || earlier(q, odd, match))) {
        *other = odd;
        return -1;
    }
    return match;
}

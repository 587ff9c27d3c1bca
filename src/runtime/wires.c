/* wires.c: the wire registry - every real point-to-point backend, by name,
 * with the function that makes communicators over it: the threads wire's
 * row, and those a program registers (trd_wire_register; the MPI wire's is
 * trd_wire_mpi(), in its own library), and what a tool asks about each
 * (launched or not, most ranks, what a rank is).  The CLI finds a wire by
 * name (--wire) and treats it by those fields, never by its name. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "treduce/treduce.h"
#include "wire/threads.h"

static trd_status create_threads(trd_comm **comm, int32_t p, double timeout_s)
{
    trd_threads_opts o;
    trd_threads_opts_init(&o);
    o.timeout_s = timeout_s;
    return trd_comm_threads_create(comm, p, &o);
}

/* The built-in rows, then the registered ones (trd_wire_register): the MPI
 * wire is its own library above the core (libtreduce_wire_mpi), which the
 * core cannot name. */
static const trd_wire_info threads_wire = {
    "threads", "one thread per rank in this process", false, TRD_THREADS_MAX, create_threads,
    "threads"};

#define WIRES_MAX 8
static const trd_wire_info *wires[WIRES_MAX] = {&threads_wire};
/* Readers take no lock: a row is written before the count that shows it is
 * published (release), and rows are never removed. */
static _Atomic size_t wire_count = 1;
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

size_t trd_wire_count(void) { return atomic_load_explicit(&wire_count, memory_order_acquire); }

const trd_wire_info *trd_wire_at(size_t i) { return i < trd_wire_count() ? wires[i] : NULL; }

static bool wire_row_valid(const trd_wire_info *w)
{
    return w && w->name && w->name[0] && w->summary && w->create && w->p_max >= 1 &&
           w->ranks && w->ranks[0];
}

static trd_status register_locked(const trd_wire_info *wire)
{
    size_t n = atomic_load_explicit(&wire_count, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        if (wires[i] == wire)
            return TRD_OK; /* the same row again */
        if (!strcmp(wires[i]->name, wire->name))
            return trd_fail(TRD_EINVAL, "trd_wire_register: a wire '%s' is registered already",
                            wire->name);
    }
    if (n == WIRES_MAX)
        return trd_fail(TRD_ENOMEM, "trd_wire_register: the registry holds %d wires at most",
                        WIRES_MAX);
    wires[n] = wire;
    atomic_store_explicit(&wire_count, n + 1, memory_order_release);
    return TRD_OK;
}

trd_status trd_wire_register(const trd_wire_info *wire)
{
    if (!wire_row_valid(wire))
        return trd_fail(TRD_EINVAL, "trd_wire_register: %s",
                        wire ? "a row needs a name, a summary, create and p_max >= 1"
                             : "NULL argument (wire)");
    pthread_mutex_lock(&register_lock);
    trd_status st = register_locked(wire);
    pthread_mutex_unlock(&register_lock);
    return st;
}

trd_status trd_wire_find(const char *name, const trd_wire_info **out)
{
    if (!out)
        return trd_fail(TRD_EINVAL, "trd_wire_find: NULL argument (out)");
    *out = NULL;
    size_t n = trd_wire_count();
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(wires[i]->name, name)) {
            *out = wires[i];
            return TRD_OK;
        }
    char list[256] = "";
    for (size_t i = 0, at = 0; i < n && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "",
                               wires[i]->name);
    return trd_fail(TRD_EINVAL, "unknown wire '%s': %s", name ? name : "(null)", list);
}

/* threads_park.c: how a rank of the threads wire waits for another: for
 * an event on a word (trd_park_*) and for a lock (trd_lock_*).
 *
 * A small message's whole call through the memory the ranks share takes
 * a fraction of what a wake-up through the kernel (futex, condition
 * variable) takes; so a waiting rank first polls the
 * word it waits on, without any system call, as the MPI wire's rings do
 * (mpi.c, trd_mpi_back_off).  That is right only while the rank it waits
 * for has a core of its own: with more ranks than cores the spin would
 * hold the very core the other rank needs.  So the ranks of every live
 * world of the process are counted against the cores it may run on; when
 * they outnumber them, a wait goes straight to a short phase of yields
 * (which hands the core to a rank that has work) and then sleeps on a
 * futex, so that an oversubscribed run does not burn the machine.  A rank
 * that changes the word makes a system call only when somebody sleeps.
 *
 * How long to spin depends on the machine: where the ranks really run at
 * once, a spin of tens of microseconds catches every small message; on a
 * loaded machine the rank waited for is often not running, a long spin
 * only delays the sleep, and a rank woken from a futex runs sooner than
 * one that spun or yielded (the scheduler favours a woken task): there a
 * spin of SPIN_MAX_NS on every wait made small reduces markedly slower.
 * So each word keeps its own spin
 * budget: doubled when a spin caught its event, halved when it had to
 * sleep. */
#define _GNU_SOURCE
#include "wire/threads_world.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SPIN_MIN_NS 2000   /* a wait with a core of its own spins between these... */
#define SPIN_MAX_NS 50000  /* ...adapting to the waits before it (trd_park_spin) */
#define CROWDED_YIELD_S 20e-6 /* where ranks outnumber cores: yields this long */
#define CLOCK_POLLS 64     /* polls between two reads of the clock */
#define CROWDED_POLLS 16   /* polls before yielding where ranks outnumber cores */
#define LOCK_POLLS 4096    /* a held lock's waiter with a core of its own polls this often */

/* Process-wide, on purpose: the ranks of every live world of the process
 * compete for its cores, so whether a wait may spin depends on all of
 * them, not on its own world's size (a program may hold several worlds
 * at once, each of trd_comm_threads_create's calls making one, and run
 * them side by side).  Counted by trd_threads_ranks_add as worlds are
 * made and freed; relaxed: a heuristic, which a world made a moment ago
 * may miss without harm. */
static _Atomic int64_t live_ranks;
/* The cores this process may run on, read once (a system call) when the
 * first world is made and kept for the process's life: a later change of
 * its affinity is not followed. */
static _Atomic long cores;

static long affinity_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

void trd_threads_ranks_add(int64_t n)
{
    if (n > 0 && atomic_load_explicit(&cores, memory_order_relaxed) == 0)
        atomic_store_explicit(&cores, affinity_cores(), memory_order_relaxed);
    atomic_fetch_add_explicit(&live_ranks, n, memory_order_relaxed);
}

static bool crowded(void)
{
    return atomic_load_explicit(&live_ranks, memory_order_relaxed) >
           atomic_load_explicit(&cores, memory_order_relaxed);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

bool trd_spin_until(bool (*done)(const void *), const void *arg, double seconds)
{
    if (crowded())
        return done(arg);
    double end = 0;
    for (unsigned i = 0;; i++) {
        if (done(arg))
            return true;
        if (i % 64 == 0) { /* the clock is read seldom: a read costs many polls */
            double now = trd_threads_now();
            end = end > 0 ? end : now + seconds;
            if (now >= end)
                return false;
        }
        cpu_relax();
    }
}

static bool changed(trd_park *pk, uint32_t seen)
{
    return atomic_load_explicit(&pk->seq, memory_order_acquire) != seen;
}

/* The spin budget after a spin that did or did not catch its event
 * (relaxed: a heuristic, which concurrent waiters of a barrier may race
 * on harmlessly). */
static void adapt(trd_park *pk, uint32_t budget, bool caught)
{
    uint32_t next = caught ? budget * 2 : budget / 2;
    next = next < SPIN_MIN_NS ? SPIN_MIN_NS : next > SPIN_MAX_NS ? SPIN_MAX_NS : next;
    atomic_store_explicit(&pk->spin_ns, next, memory_order_relaxed);
}

/* A wait slept and its event came `slept` seconds into the sleep (as its
 * bumper stamped it: the wake-up itself, which from an idle core can take
 * far longer than the message, is not the wait's): had the spin lasted
 * that long too it would have caught the event without the wake-up.
 * Halving alone (adapt) let the budget sink to SPIN_MIN_NS under waits a
 * little longer than that, and every wait then slept: `treduce calibrate
 * -p 2` then timed its messages at the wake-up's cost, tens of times the
 * message's, in several runs of forty.  So the budget grows to twice the
 * whole wait, when that fits under SPIN_MAX_NS. */
static void stretch(trd_park *pk, double slept)
{
    uint32_t budget = atomic_load_explicit(&pk->spin_ns, memory_order_relaxed);
    double want = 2.0 * (1e-9 * budget + (slept > 0 ? slept : 0)) * 1e9;
    if (want > budget && want <= SPIN_MAX_NS)
        atomic_store_explicit(&pk->spin_ns, (uint32_t)want, memory_order_relaxed);
}

bool trd_park_spin(trd_park *pk, uint32_t seen)
{
    bool free_core = !crowded();
    uint32_t budget = atomic_load_explicit(&pk->spin_ns, memory_order_relaxed);
    budget = budget ? budget : SPIN_MAX_NS;
    long polls = free_core ? CLOCK_POLLS : CROWDED_POLLS;
    for (long i = 0; i < polls; i++) { /* most waits end here: no clock read */
        if (changed(pk, seen))
            return true;
        cpu_relax();
    }
    double start = trd_threads_now(), spin_s = free_core ? 1e-9 * budget : 0, t = 0;
    double yield_s = free_core ? 0 : CROWDED_YIELD_S;
    for (long i = 1;; i++) {
        if (changed(pk, seen)) {
            if (free_core)
                adapt(pk, budget, true);
            return true;
        }
        if (t < spin_s && i % CLOCK_POLLS) {
            cpu_relax();
            continue;
        }
        t = trd_threads_now() - start;
        if (t > spin_s + yield_s) {
            if (free_core)
                adapt(pk, budget, false);
            return false;
        }
        if (t >= spin_s)
            sched_yield();
        else
            cpu_relax();
    }
}

/* Drepper's futex mutex ("Futexes are tricky", mutex 2), with a spin
 * first: a holder keeps the lock for a few hundred instructions, while a
 * sleep and its wake-up are two system calls - with the pthread mutex,
 * which sleeps at once, those sleeps were most of the system calls of a
 * small allreduce of 2 ranks (both post into each other's box at once).
 * With more ranks than cores the holder may have lost its core: then
 * only a few polls, and sleep. */
void trd_lock_take(trd_lock *l)
{
    uint32_t c = 0;
    if (atomic_compare_exchange_strong_explicit(&l->state, &c, 1, memory_order_acquire,
                                                memory_order_relaxed))
        return;
    long polls = crowded() ? CROWDED_POLLS : LOCK_POLLS;
    for (long i = 0; i < polls; i++) {
        cpu_relax();
        c = atomic_load_explicit(&l->state, memory_order_relaxed);
        if (c == 0 && atomic_compare_exchange_weak_explicit(&l->state, &c, 1,
                                                            memory_order_acquire,
                                                            memory_order_relaxed))
            return;
    }
    /* Marked 2 before sleeping: the holder's give then wakes a sleeper. */
    c = atomic_exchange_explicit(&l->state, 2, memory_order_acquire);
    while (c != 0) {
        syscall(SYS_futex, (uint32_t *)&l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange_explicit(&l->state, 2, memory_order_acquire);
    }
}

void trd_lock_give(trd_lock *l)
{
    if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2)
        syscall(SYS_futex, (uint32_t *)&l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void trd_park_sleep(trd_park *pk, uint32_t seen, double seconds)
{
    if (!(seconds > 0))
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    /* Counted before seq is read again: a bump either sees the sleeper
     * (and wakes it) or changes seq before this read (no sleep). */
    atomic_fetch_add_explicit(&pk->sleepers, 1, memory_order_seq_cst);
    double start = trd_threads_now();
    if (atomic_load_explicit(&pk->seq, memory_order_seq_cst) == seen)
        syscall(SYS_futex, (uint32_t *)&pk->seq, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    atomic_fetch_sub_explicit(&pk->sleepers, 1, memory_order_relaxed);
    if (changed(pk, seen) && !crowded())
        stretch(pk, 1e-9 * (double)atomic_load_explicit(&pk->woke_ns, memory_order_relaxed) -
                        start);
}

bool trd_park_advance(trd_park *pk)
{
    atomic_fetch_add_explicit(&pk->seq, 1, memory_order_seq_cst);
    bool asleep = atomic_load_explicit(&pk->sleepers, memory_order_seq_cst) > 0;
    if (asleep) /* when the event came, for the sleeper's stretch */
        atomic_store_explicit(&pk->woke_ns, (uint64_t)(1e9 * trd_threads_now()),
                              memory_order_relaxed);
    return asleep;
}

void trd_park_wake(trd_park *pk)
{
    syscall(SYS_futex, (uint32_t *)&pk->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void trd_park_bump(trd_park *pk)
{
    if (trd_park_advance(pk))
        trd_park_wake(pk);
}

bool trd_park_until(trd_park *pk, bool (*done)(const void *), const void *arg,
                    double deadline, double slice)
{
    bool spun = false;
    for (;;) {
        uint32_t seen = atomic_load_explicit(&pk->seq, memory_order_acquire);
        if (done(arg))
            return true;
        if (!spun) {
            spun = true;
            trd_park_spin(pk, seen);
            continue;
        }
        double now = trd_threads_now();
        if (now >= deadline)
            return false;
        trd_park_sleep(pk, seen, deadline - now < slice ? deadline - now : slice);
    }
}

/* stats.c: what ran where.  Every call the layer sees is counted, per MPI
 * function, as handled (treduce ran it) or passed (MPI did) with its
 * reason.  With TREDUCE_MPI_STATS=1, MPI_Finalize sums the counts over
 * every process of MPI_COMM_WORLD (a call on p processes counts p times)
 * and world rank 0 prints one line per function, in the order of
 * TML_FN_LIST, every function's even where it was never called:
 *   treduce-mpi: MPI_Allreduce handled=N passed=M [reason=K ...]
 * the reasons in the order of TML_REASON_LIST, those with K > 0 only.
 * Calls made while the layer is running (treduce's set-up, a user
 * function calling MPI) go to MPI and are not counted. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "layer.h"

#define TML_REASON_NAME(name, text) text,
static const char *const reason_names[] = {TML_REASON_LIST(TML_REASON_NAME)};
#undef TML_REASON_NAME

const char *tml_reason_name(tml_reason r) { return reason_names[r]; }

#define TML_FN_NAME(name, text, coll, base) text,
#define TML_FN_COLL(name, text, coll, base) coll,
#define TML_FN_BASE(name, text, coll, base) base,
static const char *const fn_names[] = {TML_FN_LIST(TML_FN_NAME)};
static const trd_collective fn_colls[] = {TML_FN_LIST(TML_FN_COLL)};
static const tml_fn fn_bases[] = {TML_FN_LIST(TML_FN_BASE)};
#undef TML_FN_NAME
#undef TML_FN_COLL
#undef TML_FN_BASE

const char *tml_fn_name(tml_fn f) { return fn_names[f]; }
trd_collective tml_fn_coll(tml_fn f) { return fn_colls[f]; }
tml_fn tml_fn_base(tml_fn f) { return fn_bases[f]; }

/* [function][reason]; TML_OK: handled.  Counted by every thread. */
static atomic_llong counts[TML_FNS][TML_REASONS];

void tml_stats_count(tml_fn fn, tml_reason r)
{
    atomic_fetch_add_explicit(&counts[fn][r], 1, memory_order_relaxed);
}

static void report_line(const char *fn, const long long *n)
{
    long long passed = 0;
    for (int r = TML_OK + 1; r < TML_REASONS; r++)
        passed += n[r];
    char line[512];
    int len = snprintf(line, sizeof line, "treduce-mpi: %s handled=%lld passed=%lld", fn,
                       n[TML_OK], passed);
    for (int r = TML_OK + 1; r < TML_REASONS; r++)
        if (n[r] > 0 && len < (int)sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s=%lld", reason_names[r],
                            n[r]);
    fprintf(stderr, "%s\n", line);
}

void tml_stats_report(void)
{
    long long mine[TML_FNS][TML_REASONS], total[TML_FNS][TML_REASONS];
    for (int f = 0; f < TML_FNS; f++)
        for (int r = 0; r < TML_REASONS; r++)
            mine[f][r] = atomic_load(&counts[f][r]);
    if (PMPI_Reduce(mine, total, TML_FNS * TML_REASONS, MPI_LONG_LONG, MPI_SUM, 0,
                    tml_g.world) != MPI_SUCCESS ||
        tml_g.world_rank != 0)
        return;
    for (int f = 0; f < TML_FNS; f++)
        report_line(fn_names[f], total[f]);
    fflush(stderr);
}

/* Why choice's algorithm: forced, or the model's times of it and the next. */
static void reason(const tml_choice *ch, char *buf, size_t size)
{
    if (strcmp(tml_g.cfg.algo, "auto"))
        snprintf(buf, size, " (TREDUCE_MPI_ALGO)");
    else if (ch->next[0])
        snprintf(buf, size, " (predicted %.4g us; next %s, %.4g us)", 1e6 * ch->predicted,
                 ch->next, 1e6 * ch->next_predicted);
    else
        snprintf(buf, size, " (predicted %.4g us; the only one that runs it)",
                 1e6 * ch->predicted);
}

void tml_verbose(const tml_args *a, int64_t count, int rank, tml_reason why,
                 const tml_choice *choice, const char *otherwise)
{
    if ((rank >= 0 ? rank : tml_g.world_rank) != 0)
        return;
    char type[MPI_MAX_OBJECT_NAME] = "", n[32] = "";
    int len = 0;
    tml_op o;
    if (a->dt != MPI_DATATYPE_NULL)
        PMPI_Type_get_name(a->dt, type, &len);
    if (count >= 0)
        snprintf(n, sizeof n, "%lld x ", (long long)count);
    const char *op = a->op != MPI_OP_NULL && tml_op_find(a->op, &o) ? o.name
                                                                    : "an unknown operator";
    char because[160] = "";
    if (why == TML_OK && choice)
        reason(choice, because, sizeof because);
    if (why == TML_OK)
        fprintf(stderr, "treduce-mpi: %s of %s%s, %s: %s%s\n", fn_names[a->fn], n,
                len > 0 ? type : "a derived datatype", op, choice ? choice->algo : otherwise,
                because);
    else
        fprintf(stderr, "treduce-mpi: %s of %s%s, %s: passed to MPI (%s)\n", fn_names[a->fn],
                n, len > 0 ? type : "a derived datatype", op, tml_reason_name(why));
}

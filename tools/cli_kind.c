/* cli_kind.c: the collective a command computes (--kind, --allreduce its
 * older spelling) and what `treduce run` and `treduce bench` share about
 * one: the call that runs it, its input's size, and which ranks' inputs
 * make each rank's result (cli.h). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cli_take_kind(const char *cmd, const char *name, cli_kind *k)
{
    trd_collective c;
    if (trd_collective_parse(name, &c) != TRD_OK)
        return cli_usage_error(cmd, "invalid --kind: %s", trd_errmsg());
    /* --allreduce --kind scan would run one of them silently */
    if (k->set && c != k->coll)
        return cli_usage_error(cmd, "--kind %s contradicts the earlier --kind %s (or "
                               "--allreduce): give one", name, trd_collective_name(k->coll));
    k->coll = c;
    k->set = true;
    return CLI_OK;
}

int cli_kind_root(const char *cmd, const cli_kind *k, bool tree_root)
{
    bool rooted = k->coll == TRD_COLL_REDUCE || (tree_root && k->coll == TRD_COLL_ALLREDUCE);
    if (!k->root_set || rooted)
        return CLI_OK;
    const char *name = trd_collective_name(k->coll);
    return cli_usage_error(cmd, "--root is the rank a reduce's result goes to%s: a%s %s has "
                           "none (leave --root out)",
                           tree_root ? " (or the root of an allreduce's tree)" : "",
                           strchr("aeiou", name[0]) ? "n" : "", name);
}

trd_collective cli_algo_first_kind(size_t algo)
{
    for (int c = TRD_COLL_REDUCE; c <= TRD_COLL_EXSCAN; c++)
        if (trd_algo_runs(algo, (trd_collective)c))
            return (trd_collective)c;
    return TRD_COLL_REDUCE;
}

int64_t cli_kind_input(trd_collective kind, int64_t count, int64_t p)
{
    return kind == TRD_COLL_REDUCE_SCATTER ? p * count : count;
}

trd_status cli_kind_call(trd_comm *comm, trd_collective kind, const void *in, void *out,
                         int64_t count, const trd_op *op, int32_t root, const trd_coll_opts *o)
{
    switch (kind) {
    case TRD_COLL_ALLREDUCE: return trd_allreduce(comm, in, out, count, op, o);
    case TRD_COLL_REDUCE_SCATTER: return trd_reduce_scatter_block(comm, in, out, count, op, o);
    case TRD_COLL_SCAN: return trd_scan(comm, in, out, count, op, o);
    case TRD_COLL_EXSCAN: return trd_exscan(comm, in, out, count, op, o);
    default: return trd_reduce(comm, in, out, count, op, root, o);
    }
}

cli_kind_result cli_kind_result_of(trd_collective kind, int64_t rank, int64_t p, int64_t count,
                                   int64_t root)
{
    cli_kind_result r = {.gets = true, .ranks = p};
    switch (kind) {
    case TRD_COLL_REDUCE: r.gets = rank == root; break;
    case TRD_COLL_REDUCE_SCATTER: r.offset = rank * count; break;
    case TRD_COLL_SCAN: r.ranks = rank + 1; break;
    case TRD_COLL_EXSCAN: r.gets = rank > 0; r.ranks = rank; break;
    default: break;
    }
    return r;
}

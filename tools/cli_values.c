/* cli_values.c: the inputs every rank reduces in `treduce run` and
 * `treduce bench` (cli.h, cli_run_value). */
#include "cli.h"

#include <string.h>

#include "costly_op.h"

int64_t cli_run_value(const char *op, int64_t r, int64_t i)
{
    uint64_t h = (uint64_t)(r * 1000003 + i) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    if (!strcmp(op, "sum") || cli_costly_name(op))
        return (int64_t)(h % 17) - 8;
    if (!strcmp(op, "prod"))
        return h % 5 == 0 ? -2 : h % 3 == 0 ? 2 : 1;
    if (!strcmp(op, "land") || !strcmp(op, "lor"))
        return (int64_t)(h % 4 != 0);
    return (int64_t)(h % 2001) - 1000;
}

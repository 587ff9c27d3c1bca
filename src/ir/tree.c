/* tree.c: helpers on the internal reduction tree. */
#include "ir/tree.h"

#include <stdlib.h>

#include "core/error.h"

trd_status trd_tree_add_release(trd_tree *tree)
{
    tree->release = calloc((size_t)tree->n, sizeof *tree->release);
    if (!tree->release)
        return trd_fail(TRD_ENOMEM, "tree: cannot allocate release times for n = %ld",
                        (long)tree->n);
    return TRD_OK;
}

trd_status trd_tree_add_seq(trd_tree *tree)
{
    tree->seq = malloc((size_t)tree->n * sizeof *tree->seq);
    if (!tree->seq)
        return trd_fail(TRD_ENOMEM, "tree: cannot allocate receive orders for n = %ld",
                        (long)tree->n);
    return TRD_OK;
}

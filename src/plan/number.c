/* number.c: positions -> ranks.
 *
 * The non-commutative numbering is a pre-order walk that lays each subtree
 * on a contiguous range: a node takes the first rank of its range and its
 * inputs follow in arrival order, so every input is adjacent to the
 * interval accumulated so far and is combined on the RIGHT.  Only the root
 * may also take inputs on its LEFT, which is how it can sit on any rank R:
 * the subtrees placed to its left must hold exactly R ranks, a bounded
 * subset-sum over the root's subtree sizes solved by dynamic programming on
 * the distinct sizes (O(#distinct sizes * R), and #distinct <= sqrt(2n)). */
#include "plan/number.h"

#include <stdlib.h>

#include "core/error.h"

/* Subtree sizes, children before parents (reverse breadth-first order). */
static void subtree_sizes(const trd_timing *t, int32_t *size)
{
    for (int32_t i = t->n - 1; i >= 0; i--) {
        int32_t v = t->order[i];
        size[v] = 1;
        for (int32_t e = t->first[v]; e < t->first[v + 1]; e++)
            size[v] += size[t->child[e]];
    }
}

/* Marks left[e] = 1 for root inputs whose sizes sum to target.  reach[s]
 * is the first size class that made s reachable, used[s] how many inputs of
 * that class it took; walking back from target recovers a solution. */
static trd_status choose_left(const trd_timing *t, const int32_t *size,
                              int64_t target, char *left)
{
    int32_t lo = t->first[0], m = t->first[1] - lo;
    int32_t *reach = malloc((size_t)(target + 1) * sizeof *reach);
    int32_t *used = malloc((size_t)(target + 1) * sizeof *used);
    trd_status st = TRD_OK;
    if (!reach || !used) {
        st = trd_fail(TRD_ENOMEM, "noncommutative numbering: out of memory");
        goto done;
    }
    for (int64_t s = 0; s <= target; s++)
        reach[s] = s == 0 ? m : -1;
    for (int32_t k = 0; k < m; k++) {
        int32_t w = size[t->child[lo + k]], count = 0, seen = 0;
        for (int32_t j = 0; j < m; j++) {
            int32_t wj = size[t->child[lo + j]];
            count += wj == w;
            seen |= wj == w && j < k; /* class already handled at its first input */
        }
        if (seen)
            continue;
        for (int64_t s = 0; s <= target; s++) {
            if (reach[s] != -1 && reach[s] != k)
                used[s] = 0;
            else if (s >= w && reach[s - w] != -1 && (reach[s - w] != k || used[s - w] < count)) {
                reach[s] = k;
                used[s] = reach[s - w] == k ? used[s - w] + 1 : 1;
            }
        }
    }
    if (reach[target] == -1) {
        st = trd_fail(TRD_EUNSUPPORTED,
                      "noncommutative: this tree cannot put its root on rank %lld "
                      "(its root's subtrees cannot fill exactly %lld ranks on its left); "
                      "root 0 and root %ld always work",
                      (long long)target, (long long)target, (long)(t->n - 1));
        goto done;
    }
    for (int64_t s = target; s > 0;) {
        int32_t w = size[t->child[lo + reach[s]]];
        for (int32_t j = 0; j < m; j++) /* take any unused input of class w */
            if (!left[j] && size[t->child[lo + j]] == w) {
                left[j] = 1;
                break;
            }
        s -= w;
    }
done:
    free(reach);
    free(used);
    return st;
}

static trd_status interval_numbering(const trd_timing *t, int64_t root, int32_t *rank)
{
    int32_t n = t->n, lo = t->first[0], m = t->first[1] - lo;
    int32_t *size = malloc((size_t)n * sizeof *size);
    char *left = calloc((size_t)m + 1, 1);
    trd_status st = TRD_OK;
    if (!size || !left) {
        st = trd_fail(TRD_ENOMEM, "noncommutative numbering: out of memory");
        goto done;
    }
    subtree_sizes(t, size);
    if (root > 0 && (st = choose_left(t, size, root, left)) != TRD_OK)
        goto done;
    rank[0] = (int32_t)root;
    int64_t next_right = root + 1, next_left = root;
    for (int32_t j = 0; j < m; j++) {
        int32_t ch = t->child[lo + j];
        if (left[j]) {
            next_left -= size[ch];
            rank[ch] = (int32_t)next_left;
        } else {
            rank[ch] = (int32_t)next_right;
            next_right += size[ch];
        }
    }
    for (int32_t i = 1; i < n; i++) { /* parents before children */
        int32_t v = t->order[i], next = rank[v] + 1;
        for (int32_t e = t->first[v]; e < t->first[v + 1]; e++) {
            rank[t->child[e]] = next;
            next += size[t->child[e]];
        }
    }
done:
    free(size);
    free(left);
    return st;
}

trd_status trd_number_ranks(const trd_timing *t, int64_t root, bool noncommutative,
                            int32_t *rank)
{
    if (noncommutative)
        return interval_numbering(t, root, rank);
    for (int32_t pos = 0; pos < t->n; pos++)
        rank[pos] = (int32_t)((pos + root) % t->n);
    return TRD_OK;
}

/* test_noncommutative.c: the non-commutative numbering (canon-antoniu
 * Sec. 4.1: machines may be permuted so each combine joins adjacent ranges).
 *
 * For every registered planner (K in {1, 3} for the K-limited ones), n in
 * 1..70, (d, c) in {(1,1), (1,0), (0,1), (2,1), (1,3)} and roots 0, n-1, n/2
 * (every root when n <= 12), with params.noncommutative set:
 *   - the plan succeeds, or fails with TRD_EUNSUPPORTED whose trd_errmsg()
 *     names the root; roots 0 and n-1 always succeed (unsupported cases are
 *     counted and printed);
 *   - the root of the parent array is rank params.root;
 *   - every subtree covers a contiguous rank range;
 *   - replaying the schedule IR with interval concatenation as the
 *     operator (rank r starts with [r, r]; RECV gets the sender's slot 0
 *     as sent after all its combines; COMBINE LEFT needs in.hi + 1 ==
 *     acc.lo, RIGHT needs acc.hi + 1 == in.lo) runs to completion and
 *     leaves [0, n-1] at the root.
 * The expected values are the definitions themselves: no oracle needed. */
#include <ctype.h>

#include "testutil.h"

#define N_LAST 70

typedef struct ival {
    int32_t lo, hi; /* lo = -1: slot not written yet */
} ival;

typedef struct replay {
    int32_t n;
    const trd_plan *plan;
    size_t *pc;      /* next step of each rank */
    ival *slot;      /* rank r's slots: slot[r * nslots + s] */
    int32_t nslots;
    ival *sent;      /* what each rank sent, once its SEND ran */
    int32_t *sent_to; /* -1 until then */
    int32_t *taken;  /* how many RECVs took each rank's send */
} replay;

static const char *context; /* printed with every failure */

/* Runs rank r's program as far as it can go; returns the steps done. */
static size_t advance(replay *rp, int32_t r)
{
    size_t done = 0, count = trd_plan_step_count(rp->plan, r);
    ival *slot = rp->slot + (size_t)r * (size_t)rp->nslots;
    for (; rp->pc[r] < count; rp->pc[r]++, done++) {
        const trd_step *s = trd_plan_step(rp->plan, r, rp->pc[r]);
        TU_CHECK(s->buf >= 0 && s->buf < rp->nslots, "%s rank %d step %zu: slot %d",
                 context, r, rp->pc[r], s->buf);
        bool fused = s->kind == TRD_STEP_RECV_COMBINE; /* a RECV into src, then a COMBINE */
        if (s->kind == TRD_STEP_RECV || fused) {
            int32_t p = s->peer;
            TU_CHECK(p >= 0 && p < rp->n && p != r, "%s rank %d RECV peer %d", context, r, p);
            if (rp->sent_to[p] < 0)
                break; /* the sender is not done yet */
            TU_CHECK(rp->sent_to[p] == r, "%s rank %d receives from %d, which sent to %d",
                     context, r, p, rp->sent_to[p]);
            slot[fused ? s->src : s->buf] = rp->sent[p];
            rp->taken[p]++;
        }
        if (s->kind == TRD_STEP_RECV) {
        } else if (s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT) {
            TU_CHECK(slot[s->buf].lo >= 0, "%s rank %d sends an empty slot", context, r);
            TU_CHECK(rp->sent_to[r] < 0, "%s rank %d sends twice", context, r);
            /* the input: [r, r] */
            rp->sent[r] = s->kind == TRD_STEP_SEND ? slot[s->buf] : (ival){r, r};
            rp->sent_to[r] = s->peer;
        } else if (s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_COPY || fused) {
            TU_CHECK(s->src >= 0 && s->src < rp->nslots && slot[s->src].lo >= 0,
                     "%s rank %d step %zu reads slot %d", context, r, rp->pc[r], s->src);
            ival in = slot[s->src], *acc = &slot[s->buf];
            if (s->kind == TRD_STEP_COPY) {
                *acc = in;
                continue;
            }
            TU_CHECK(acc->lo >= 0, "%s rank %d combines into an empty slot", context, r);
            if (s->side == TRD_SIDE_LEFT) {
                TU_CHECK(in.hi + 1 == acc->lo, "%s rank %d: [%d,%d] (+) [%d,%d] on the left",
                         context, r, in.lo, in.hi, acc->lo, acc->hi);
                acc->lo = in.lo;
            } else {
                TU_CHECK(s->side == TRD_SIDE_RIGHT && acc->hi + 1 == in.lo,
                         "%s rank %d: [%d,%d] (+) [%d,%d] on side %d", context, r, acc->lo,
                         acc->hi, in.lo, in.hi, s->side);
                acc->hi = in.hi;
            }
        } else {
            TU_CHECK(0, "%s rank %d: unknown step kind %d", context, r, s->kind);
        }
    }
    return done;
}

static void replay_intervals(const trd_plan *plan, int32_t n, int32_t root)
{
    replay rp = {.n = n, .plan = plan, .nslots = 1};
    for (int32_t r = 0; r < n; r++) {
        int32_t need = (int32_t)trd_plan_step_count(plan, r) + 1;
        rp.nslots = need > rp.nslots ? need : rp.nslots;
    }
    rp.pc = tu_alloc((size_t)n, sizeof *rp.pc);
    rp.slot = tu_alloc((size_t)n * (size_t)rp.nslots, sizeof *rp.slot);
    rp.sent = tu_alloc((size_t)n, sizeof *rp.sent);
    rp.sent_to = tu_alloc((size_t)n, sizeof *rp.sent_to);
    rp.taken = tu_alloc((size_t)n, sizeof *rp.taken);
    for (int32_t r = 0; r < n; r++) {
        rp.sent_to[r] = -1;
        for (int32_t s = 0; s < rp.nslots; s++)
            rp.slot[(size_t)r * (size_t)rp.nslots + (size_t)s] = (ival){-1, -1};
        rp.slot[(size_t)r * (size_t)rp.nslots] = (ival){r, r};
    }
    for (size_t progress = 1; progress > 0;) { /* until a fixpoint */
        progress = 0;
        for (int32_t r = 0; r < n; r++)
            progress += advance(&rp, r);
    }
    for (int32_t r = 0; r < n; r++) {
        TU_CHECK(rp.pc[r] == trd_plan_step_count(plan, r),
                 "%s rank %d is stuck at step %zu (waits for a send)", context, r, rp.pc[r]);
        TU_CHECK(r == root || (rp.sent_to[r] == trd_plan_parent(plan, r) && rp.taken[r] == 1),
                 "%s rank %d sent to %d (parent %d), received %d times", context, r,
                 rp.sent_to[r], trd_plan_parent(plan, r), rp.taken[r]);
    }
    ival final = rp.slot[(size_t)root * (size_t)rp.nslots];
    TU_CHECK(rp.sent_to[root] < 0 && final.lo == 0 && final.hi == n - 1,
             "%s root %d ends with [%d, %d]", context, root, final.lo, final.hi);
    free(rp.pc);
    free(rp.slot);
    free(rp.sent);
    free(rp.sent_to);
    free(rp.taken);
}

/* Every subtree (walked up from each rank) covers a contiguous range. */
static void check_contiguous(const trd_plan *plan, int32_t n)
{
    int32_t *lo = tu_alloc((size_t)n, sizeof *lo), *hi = tu_alloc((size_t)n, sizeof *hi);
    int32_t *size = tu_alloc((size_t)n, sizeof *size);
    for (int32_t v = 0; v < n; v++)
        lo[v] = hi[v] = v;
    for (int32_t v = 0; v < n; v++) {
        int32_t steps = 0;
        for (int32_t u = v; u >= 0; u = trd_plan_parent(plan, u)) {
            TU_CHECK(++steps <= n, "%s: cycle through rank %d", context, v);
            size[u]++;
            lo[u] = v < lo[u] ? v : lo[u];
            hi[u] = v > hi[u] ? v : hi[u];
        }
    }
    for (int32_t v = 0; v < n; v++)
        TU_CHECK(hi[v] - lo[v] + 1 == size[v],
                 "%s: subtree of rank %d has %d ranks spread over [%d, %d]", context, v,
                 size[v], lo[v], hi[v]);
    free(lo);
    free(hi);
    free(size);
}

/* Whether msg contains the number x as a whole token. */
static bool names_number(const char *msg, int64_t x)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", (long long)x);
    size_t len = strlen(digits);
    for (const char *p = strstr(msg, digits); p; p = strstr(p + 1, digits))
        if ((p == msg || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[len]))
            return true;
    return false;
}

/* One plan; returns 1 when it was (acceptably) unsupported. */
static int check_root(const char *algo, int64_t K, int32_t n, double d, double c,
                      int32_t root)
{
    char where[160];
    snprintf(where, sizeof where, "%s K=%lld n=%d d=%g c=%g root=%d:", algo,
             (long long)K, n, d, c, root);
    context = where;
    trd_params p = tu_params(n, d, c, K);
    p.root = root;
    p.noncommutative = true;
    trd_plan *plan = NULL;
    trd_status st = trd_plan_create(&plan, algo, &p);
    if (st == TRD_EUNSUPPORTED) {
        TU_CHECK(plan == NULL && root != 0 && root != n - 1 &&
                 strstr(trd_errmsg(), "root") && names_number(trd_errmsg(), root),
                 "%s unsupported: %s", where, trd_errmsg());
        return 1;
    }
    TU_CHECK(st == TRD_OK, "%s %s", where, trd_errmsg());
    TU_CHECK(trd_plan_params(plan)->root == root && trd_plan_parent(plan, root) == -1,
             "%s the root rank has parent %d", where, trd_plan_parent(plan, root));
    check_contiguous(plan, n);
    replay_intervals(plan, n, root);
    trd_plan_free(plan);
    return 0;
}

static void planner_noncommutative(void **state)
{
    size_t index = *(size_t *)*state, unsupported = 0, total = 0;
    const char *algo = trd_algo_name(index);
    static const int64_t ks[] = {1, 3};
    size_t nk = trd_algo_uses_k(index) ? 2 : 1;
    for (size_t k = 0; k < nk; k++)
        for (int32_t n = 1; n <= N_LAST; n++)
            for (size_t i = 0; i < TU_NPAIRS; i++)
                for (int32_t root = 0; root < n; root++) {
                    if (n > 12 && root != 0 && root != n - 1 && root != n / 2)
                        continue;
                    total++;
                    unsupported += (size_t)check_root(algo, trd_algo_uses_k(index) ? ks[k] : 0,
                                                      n, tu_pairs[i][0], tu_pairs[i][1], root);
                }
    print_message("%s: %zu of %zu (n, d, c, root) cases unsupported\n", algo, unsupported,
                  total);
}

int main(void)
{
    return tu_run_per_planner(&(struct tu_per_planner){.group = "noncommutative",
                                                       .fn = planner_noncommutative});
}

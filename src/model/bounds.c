/* bounds.c: closed-form makespan bounds (canon-antoniu Sec. 5-7).
 *
 * Lemma 5 bounds every schedule from below.  The upper bounds are those the
 * papers prove for one algorithm each (the registry names which): Prop. 6
 * for the optimum (greedy) and the binomial layouts (Theorem 18 proof),
 * Prop. 8 / Corollary 11 corrected (docs/MODEL.md) for the K-limited
 * greedy algorithms, Theorem 19 (twice Lemma 5) for the Fibonacci strategy,
 * Prop. 16 for the truncated Fibonacci layout, and the exact lengths of the
 * chain and the flat tree. */
#include "model/bounds.h"


static double max2(double a, double b) { return a > b ? a : b; }

int trd_ceil_log2(int64_t n)
{
    int k = 0;
    while (((int64_t)1 << k) < n)
        k++;
    return k;
}

/* F(0) = 0, F(1) = 1, ... ; F(46) > 2^31 bounds every order we need. */
int64_t trd_fibonacci(int k)
{
    int64_t a = 0, b = 1;
    for (int i = 0; i < k; i++) {
        int64_t next = a + b;
        a = b;
        b = next;
    }
    return a;
}

int trd_fibonacci_order(int64_t n)
{
    int k = 0;
    while (trd_fibonacci(k + 2) < n)
        k++;
    return k;
}

static int floor_log2(int64_t n)
{
    int k = 0;
    while (((int64_t)2 << k) <= n)
        k++;
    return k;
}

double trd_bound_lemma5(const trd_params *p)
{
    return trd_ceil_log2(p->n) * max2(p->d, p->c);
}

double trd_bound_prop6(const trd_params *p)
{
    return trd_ceil_log2(p->n) * (p->d + p->c);
}

/* Prop. 8 as printed is false for K not a power of two; corrected
 * (docs/MODEL.md, "Reading of the paper and choices made"):
 * (floor(log2 K) + 1 + ceil((n - 2^(floor(log2 K)+1)) / K)) (d+c)
 * for K <= floor(n/2).  A larger K cannot make the optimum longer, so it is
 * evaluated at min(K, floor(n/2)). */
double trd_bound_prop8_corrected(const trd_params *p)
{
    if (p->n < 2)
        return 0.0;
    int64_t k = p->K < p->n / 2 ? p->K : p->n / 2;
    int lk = floor_log2(k);
    int64_t rest = p->n - ((int64_t)1 << (lk + 1));
    int64_t steps = lk + 1 + (rest + k - 1) / k;
    return (double)steps * (p->d + p->c);
}

double trd_bound_theorem19(const trd_params *p)
{
    return 2.0 * trd_bound_lemma5(p);
}

/* Prop. 16 with k the smallest order covering n; removing leaves never
 * lengthens a schedule in this model, so it bounds the truncated layout. */
double trd_bound_prop16(const trd_params *p)
{
    if (p->n < 2)
        return 0.0;
    int k = trd_fibonacci_order(p->n);
    return p->d + (k - 1) * max2(p->d, p->c) + p->c;
}

double trd_bound_chain(const trd_params *p)
{
    return (double)(p->n - 1) * (p->d + p->c);
}

double trd_bound_flat(const trd_params *p)
{
    if (p->n < 2)
        return 0.0;
    return p->d + (double)(p->n - 2) * max2(p->d, p->c) + p->c;
}

/* pipeline.c: the segmented linear pipeline of reduce-parallel-pattern
 * Sec. 3.  The shape is the chain (src/plan/chain.c): rank i+1 sends to
 * rank i; the buffer is cut into m segments so that every rank forwards
 * segment k while it receives segment k+1.  In the paper's BSP model each
 * of the p + m - 2 steps costs T_start + (n/m) T_byte, so
 *   T(m) = (T_start + (n/m) T_byte)(p + m - 2),
 * minimal for m = sqrt(n (p - 2) T_byte / T_start).  Here T_start is what
 * a step pays whatever its size, latency + combine_fixed, and n T_byte the
 * size-dependent work of one step on the whole buffer,
 * (d - latency) + (c - combine_fixed). */
#include <math.h>

#include "plan/algorithms.h"

int64_t trd_segments_clamp(double m)
{
    if (!(m >= 1.0))
        return 1;
    return m >= (double)TRD_SEGMENTS_CHOSEN_MAX ? TRD_SEGMENTS_CHOSEN_MAX : (int64_t)llround(m);
}

double trd_segment_start(const trd_params *p)
{
    return p->latency + p->combine_fixed;
}

double trd_segment_work(const trd_params *p)
{
    return (p->d - p->latency) + (p->c - p->combine_fixed);
}

int64_t trd_segments_pipeline(const trd_params *p)
{
    double work = trd_segment_work(p), start = trd_segment_start(p);
    if (p->n <= 2 || work <= 0)
        return 1; /* p + m - 2 = m steps: one segment is optimal */
    if (start <= 0)
        return TRD_SEGMENTS_DEFAULT_MAX; /* no per-segment cost: as fine as allowed */
    return trd_segments_clamp(sqrt(work * (double)(p->n - 2) / start));
}

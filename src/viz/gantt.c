/* gantt.c: the schedule of a plan drawn like Figure 1 of canon-antoniu:
 * one row per rank (rank 0 at the top) over model time.  Each row has two
 * lanes, because the model overlaps transfers with combines: the upper lane
 * holds the rank's transfers (SEND and RECV, blue), the lower lane its local
 * work (COMBINE orange, COPY grey).  A dashed red line marks the makespan.
 * The times are those of the run the makespan ends (trd_plan_step_times):
 * a segmented or exchange plan's steps are drawn where the simulator runs
 * them.
 * The page grows with the number of ranks so rows stay readable; beyond
 * GANTT_MAX_RANKS only the first ranks are drawn and the title says so. */
#include "viz/plot.h"

#include "core/error.h"

#include <plplot/plplot.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

enum {
    GANTT_MAX_RANKS = 256, /* ranks drawn at most */
    GANTT_WIDTH = 1200,    /* page width, pixels */
    GANTT_ROW_PX = 14,     /* height of one rank's row, pixels */
    GANTT_TOP_PX = 100,    /* title and legend, pixels */
    GANTT_LEFT_PX = 90,    /* rank axis, pixels */
    GANTT_RIGHT_PX = 30,
    GANTT_BOTTOM_PX = 70,  /* x axis, pixels */
    GANTT_MIN_HEIGHT = 400,
    GANTT_MAX_HEIGHT = 4000,
    GANTT_TRANSFER = TRD_PLOT_SERIES + 0, /* blue */
    GANTT_COMBINE = TRD_PLOT_SERIES + 1,  /* orange */
    GANTT_MAKESPAN = TRD_PLOT_SERIES + 3, /* red */
    GANTT_COPY = TRD_PLOT_SERIES + 7      /* grey */
};

/* What the drawing needs besides the plan. */
typedef struct gantt {
    double *start, *end; /* every step's times (trd_plan_step_times) */
    int32_t nshow;   /* ranks drawn: 0 .. nshow-1 */
    double xmin;     /* time axis */
    double xmax;
    double makespan;
    bool has_copy;   /* a COPY step is drawn (legend entry) */
    double vp_height; /* height of the plot area, pixels */
    char title[512];
} gantt;

/* The times of every step (those of the run the makespan ends: a
 * segmented or exchange plan's steps carry none themselves). */
static trd_status gantt_times(const trd_plan *plan, gantt *g)
{
    size_t total = trd_plan_total_steps(plan);
    g->start = malloc((total + 1) * sizeof *g->start);
    g->end = malloc((total + 1) * sizeof *g->end);
    if (!g->start || !g->end)
        return trd_fail(TRD_ENOMEM, "gantt: out of memory for %zu steps", total);
    return trd_plan_step_times(plan, g->start, g->end);
}

static void gantt_free(gantt *g)
{
    free(g->start);
    free(g->end);
}

/* Checks the steps of the ranks to draw and finds the time range. */
static trd_status gantt_scan(const trd_plan *plan, gantt *g)
{
    g->xmin = 0.0;
    g->xmax = g->makespan;
    g->has_copy = false;
    for (int32_t r = 0; r < g->nshow; r++) {
        size_t count = trd_plan_step_count(plan, r);
        for (size_t i = 0; i < count; i++) {
            const trd_step *s = trd_plan_step(plan, r, i);
            size_t k = trd_plan_step_offset(plan, r) + i;
            double t0 = g->start[k], t1 = g->end[k];
            if (s == NULL || s->kind < TRD_STEP_SEND || s->kind > TRD_STEP_SEND_INPUT)
                return trd_fail(TRD_EINVAL, "rank %d step %zu of the plan "
                                "is missing or of unknown kind", (int)r, i);
            if (!isfinite(t0) || !isfinite(t1) || t1 < t0)
                return trd_fail(TRD_EINVAL, "rank %d step %zu spans [%g, %g]:"
                                " times must be finite and in order",
                                (int)r, i, t0, t1);
            g->xmin = fmin(g->xmin, t0);
            g->xmax = fmax(g->xmax, t1);
            g->has_copy |= s->kind == TRD_STEP_COPY;
        }
    }
    if (!(g->xmax - g->xmin > 0.0)) /* n = 1, makespan 0, no steps */
        g->xmax = g->xmin + 1.0;
    return TRD_OK;
}

static void gantt_title(const trd_plan *plan, const trd_params *p, gantt *g)
{
    char algo[128];
    trd_plot_escape(trd_plan_algo(plan), algo, sizeof algo);
    int len = snprintf(g->title, sizeof g->title,
                       "%s plan: n=%lld, d=%g, c=%g, makespan %g", algo,
                       (long long)p->n, p->d, p->c, g->makespan);
    if ((int64_t)g->nshow < p->n && len > 0 && (size_t)len < sizeof g->title)
        snprintf(g->title + len, sizeof g->title - (size_t)len,
                 " (first %d ranks shown)", (int)g->nshow);
}

/* Spacing of the rank labels: the first of 1, 2, 5, 10, ... that leaves
 * room for the text and gives at most ~50 labels. */
static int32_t rank_tick(int32_t nshow, double row_px)
{
    static const int32_t steps[] = {1, 2, 5, 10, 20, 50, 100};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * row_px >= 1.7 * TRD_PLOT_TEXT_PX &&
            nshow / steps[i] <= 52)
            return steps[i];
    return 100;
}

/* Axes: time to the right, ranks downwards; light lines between rows. */
static void gantt_axes(const gantt *g, const trd_plot *plot)
{
    double x0 = g->xmin, x1 = g->xmax + 0.03 * (g->xmax - g->xmin);
    plwind(x0, x1, g->nshow - 0.5, -0.5);
    plcol0(TRD_PLOT_LIGHT);
    for (int32_t r = 1; r < g->nshow; r++) {
        PLFLT xs[2] = {x0, x1}, ys[2] = {r - 0.5, r - 0.5};
        plline(2, xs, ys);
    }
    plcol0(TRD_PLOT_BLACK);
    /* Time ticks point down, out of the rows; ranks get labels, no ticks. */
    plbox("binst", 0.0, 0, "", 0.0, 0);
    trd_plot_ticks(plot, false);
    int32_t tick = rank_tick(g->nshow, g->vp_height / g->nshow);
    plbox("c", 0.0, 0, "bcntv", (PLFLT)tick, 1);
    trd_plot_ticks(plot, true);
    plmtex("b", 3.2, 0.5, 0.5, "time (model units)");
    plmtex("l", 4.0, 0.5, 0.5, "rank");
}

/* A filled bar with a thin black outline. */
static void draw_bar(double x0, double x1, double y0, double y1, int colour)
{
    PLFLT xs[5] = {x0, x1, x1, x0, x0}, ys[5] = {y0, y0, y1, y1, y0};
    plcol0(colour);
    plfill(4, xs, ys);
    plcol0(TRD_PLOT_BLACK);
    plline(5, xs, ys);
}

static void gantt_bars(const trd_plan *plan, const gantt *g)
{
    plwidth(0.5);
    for (int32_t r = 0; r < g->nshow; r++) {
        size_t count = trd_plan_step_count(plan, r);
        for (size_t i = 0; i < count; i++) {
            const trd_step *s = trd_plan_step(plan, r, i);
            size_t k = trd_plan_step_offset(plan, r) + i;
            double t0 = g->start[k], t1 = g->end[k];
            if (!(t1 > t0))
                continue;
            /* A receive-and-combine spans its transfer and its combine (the
             * plan keeps one interval for the step): drawn in both rows. */
            bool fused = s->kind == TRD_STEP_RECV_COMBINE;
            bool moves = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_RECV ||
                         s->kind == TRD_STEP_SEND_INPUT;
            if (moves || fused)
                draw_bar(t0, t1, r - 0.42, r - 0.02, GANTT_TRANSFER);
            if (fused)
                draw_bar(t0, t1, r + 0.02, r + 0.42, GANTT_COMBINE);
            else if (!moves)
                draw_bar(t0, t1, r + 0.02, r + 0.42,
                         s->kind == TRD_STEP_COMBINE ? GANTT_COMBINE
                                                     : GANTT_COPY);
        }
    }
    plwidth(1.0);
}

static void gantt_makespan(const gantt *g)
{
    PLFLT xs[2] = {g->makespan, g->makespan};
    PLFLT ys[2] = {-0.5, g->nshow - 0.5};
    plcol0(GANTT_MAKESPAN);
    pllsty(2);
    plwidth(2.0);
    plline(2, xs, ys);
    pllsty(1);
    plwidth(1.0);
    plcol0(TRD_PLOT_BLACK);
}

/* One row above the plot: transfer, combine, [copy,] makespan. */
static void gantt_legend(const gantt *g)
{
    const char *text[4] = {"transfer (upper lane)", "combine (lower lane)",
                           "copy", "makespan"};
    PLINT opt[4] = {PL_LEGEND_COLOR_BOX, PL_LEGEND_COLOR_BOX,
                    PL_LEGEND_COLOR_BOX, PL_LEGEND_LINE};
    PLINT colours[4] = {GANTT_TRANSFER, GANTT_COMBINE, GANTT_COPY,
                        GANTT_MAKESPAN};
    PLINT black[4] = {TRD_PLOT_BLACK, TRD_PLOT_BLACK, TRD_PLOT_BLACK,
                      TRD_PLOT_BLACK};
    PLINT patterns[4] = {0, 0, 0, 0}, styles[4] = {1, 1, 1, 2};
    PLFLT scales[4] = {0.8, 0.8, 0.8, 0.8}, widths[4] = {1, 1, 1, 2};
    if (!g->has_copy) { /* drop the copy entry */
        text[2] = text[3];
        opt[2] = opt[3];
        colours[2] = colours[3];
        styles[2] = styles[3];
        widths[2] = widths[3];
    }
    PLINT n = g->has_copy ? 4 : 3;
    /* pllegend measures the text offset in character heights but applies
     * it across, in viewport fractions: undo the viewport's aspect. */
    PLFLT w, h, offset =
        0.8 * g->vp_height / (GANTT_WIDTH - GANTT_LEFT_PX - GANTT_RIGHT_PX);
    pllegend(&w, &h, 0, PL_POSITION_TOP | PL_POSITION_OUTSIDE, 0.0,
             6.0 / g->vp_height, 0.05, TRD_PLOT_WHITE, TRD_PLOT_BLACK, 1,
             1, n, n, opt, offset, 1.0, 2.0, 0.0, black, text, colours,
             patterns, scales, widths, colours, styles, widths, NULL, NULL,
             NULL, NULL);
}

static int gantt_height(int32_t nshow)
{
    int h = GANTT_TOP_PX + GANTT_BOTTOM_PX + GANTT_ROW_PX * (int)nshow;
    if (h < GANTT_MIN_HEIGHT)
        return GANTT_MIN_HEIGHT;
    return h > GANTT_MAX_HEIGHT ? GANTT_MAX_HEIGHT : h;
}

trd_status trd_plan_write_gantt(const trd_plan *plan, const char *path)
{
    if (plan == NULL)
        return trd_fail(TRD_EINVAL, "plan is NULL: no schedule to draw");
    if (path == NULL)
        return trd_fail(TRD_EINVAL, "figure path is NULL");
    const trd_params *p = trd_plan_params(plan);
    gantt g = {0};
    g.makespan = trd_plan_makespan(plan);
    if (p == NULL || p->n < 1)
        return trd_fail(TRD_EINVAL, "plan has %lld ranks: nothing to draw",
                        p == NULL ? 0LL : (long long)p->n);
    if (!isfinite(g.makespan) || g.makespan < 0)
        return trd_fail(TRD_EINVAL, "plan makespan %g is not a finite time "
                        ">= 0", g.makespan);
    g.nshow = (int32_t)(p->n < GANTT_MAX_RANKS ? p->n : GANTT_MAX_RANKS);
    trd_status st = gantt_times(plan, &g);
    if (st == TRD_OK)
        st = gantt_scan(plan, &g);
    trd_plot plot;
    if (st == TRD_OK) {
        gantt_title(plan, p, &g);
        st = trd_plot_begin(&plot, path, GANTT_WIDTH, gantt_height(g.nshow));
    }
    if (st != TRD_OK) {
        gantt_free(&g);
        return st;
    }
    g.vp_height = plot.height - GANTT_BOTTOM_PX - GANTT_TOP_PX;
    trd_plot_viewport_px(&plot, GANTT_LEFT_PX, GANTT_RIGHT_PX, GANTT_BOTTOM_PX,
                         GANTT_TOP_PX);
    gantt_axes(&g, &plot);
    gantt_bars(plan, &g);
    gantt_makespan(&g);
    gantt_legend(&g);
    trd_plot_text_px(&plot, 1.2 * TRD_PLOT_TEXT_PX);
    plmtex("t", 4.2, 0.5, 0.5, g.title);
    gantt_free(&g);
    return trd_plot_end(&plot);
}

/* lineplot.c: a line plot of several series against one x column, the
 * form of the papers' ratio and Monte-Carlo figures.  Series get distinct
 * colours (and, past ten series, distinct dash patterns); short series also
 * get markers.  Axis ranges come from the data with a small margin; a
 * constant range is widened so it still shows.  The legend sits outside the
 * plot, to the right, so it never covers a line. */
#include "viz/plot.h"

#include "core/error.h"

#include <plplot/plplot.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum {
    LINEPLOT_WIDTH = 1000, /* page, pixels */
    LINEPLOT_HEIGHT = 650,
    LINEPLOT_MARKERS_UPTO = 40, /* series this short get markers */
    LINEPLOT_LABEL_MAX = 256    /* bytes of a label drawn */
};

static const char *const markers[] = {"●", "■", "▲", "◆", "▼"};
#define NMARKERS (sizeof markers / sizeof markers[0])

static trd_status check_values(const char *what, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return trd_fail(TRD_EINVAL, "line plot: %s[%zu] = %g is not "
                            "finite", what, i, v[i]);
    return TRD_OK;
}

static trd_status lineplot_check(const trd_lineplot *plot)
{
    if (plot == NULL)
        return trd_fail(TRD_EINVAL, "line plot is NULL");
    if (plot->title == NULL || plot->xlabel == NULL || plot->ylabel == NULL)
        return trd_fail(TRD_EINVAL, "line plot: title, xlabel and ylabel "
                        "must not be NULL");
    if (plot->x == NULL || plot->y == NULL || plot->series_labels == NULL)
        return trd_fail(TRD_EINVAL, "line plot '%s': x, y and series_labels "
                        "must not be NULL", plot->title);
    if (plot->nseries == 0 || plot->npoints == 0)
        return trd_fail(TRD_EINVAL, "line plot '%s' has %zu series of %zu "
                        "points: both must be >= 1", plot->title,
                        plot->nseries, plot->npoints);
    if (plot->nseries > SIZE_MAX / sizeof(double) / plot->npoints ||
        plot->npoints > INT32_MAX)
        return trd_fail(TRD_EINVAL, "line plot '%s': %zu series of %zu "
                        "points is too many", plot->title, plot->nseries,
                        plot->npoints);
    for (size_t s = 0; s < plot->nseries; s++)
        if (plot->series_labels[s] == NULL)
            return trd_fail(TRD_EINVAL, "line plot '%s': series_labels[%zu] "
                            "is NULL", plot->title, s);
    trd_status st = check_values("x", plot->x, plot->npoints);
    if (st != TRD_OK)
        return st;
    return check_values("y", plot->y, plot->nseries * plot->npoints);
}

/* [lo, hi] of v[0..n-1] widened by `margin` of its span on each side; a
 * (nearly) constant range is widened around its value instead. */
static trd_status data_range(const char *axis, const double *v, size_t n,
                             double margin, double range[2])
{
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    double span = hi - lo, scale = fmax(fabs(lo), fabs(hi));
    if (span <= 1e-9 * scale || span == 0.0) {
        double pad = scale > 0.0 ? 0.1 * scale : 1.0;
        range[0] = lo - pad;
        range[1] = hi + pad;
    } else {
        range[0] = lo - margin * span;
        range[1] = hi + margin * span;
    }
    if (!isfinite(range[1] - range[0]))
        return trd_fail(TRD_EINVAL, "line plot: %s values span [%g, %g], too "
                        "wide a range to plot", axis, lo, hi);
    return TRD_OK;
}

/* Characters (not bytes) of a UTF-8 string. */
static size_t utf8_chars(const char *text)
{
    size_t n = 0;
    for (; *text != '\0'; text++)
        n += ((unsigned char)*text & 0xC0) != 0x80;
    return n;
}

/* Width in pixels the legend needs: the longest label (PLplot has no public
 * text metric, so a generous 0.75 character height per character), plus the
 * line sample and gaps; at most a third of the page. */
static int legend_px(const trd_lineplot *plot, const trd_plot *fig)
{
    size_t longest = 0;
    for (size_t s = 0; s < plot->nseries; s++) {
        size_t len = utf8_chars(plot->series_labels[s]);
        longest = len > longest ? len : longest;
    }
    PLFLT def, ht, x0, x1, y0, y1;
    plgchr(&def, &ht);
    plgspa(&x0, &x1, &y0, &y1);
    double px_per_mm = fig->width / (x1 - x0);
    double mm = (0.75 * (double)longest + 4.0) * ht;
    int px = (int)(mm * px_per_mm) + 90;
    return px < fig->width / 3 ? px : fig->width / 3;
}

static void draw_series(const trd_lineplot *plot, size_t s)
{
    const PLFLT *y = plot->y + s * plot->npoints;
    PLINT n = (PLINT)plot->npoints;
    plcol0(trd_plot_series_colour(s));
    pllsty((PLINT)(1 + (s / TRD_PLOT_NSERIES) % 8));
    plwidth(2.0);
    if (n > 1)
        plline(n, plot->x, y);
    pllsty(1);
    plwidth(1.0);
    if (plot->npoints <= LINEPLOT_MARKERS_UPTO || n == 1)
        plstring(n, plot->x, y, markers[s % NMARKERS]);
}

static void draw_legend(const trd_lineplot *plot)
{
    enum { MAXLEG = 64 }; /* entries beyond this would not fit anyway */
    PLINT n = (PLINT)(plot->nseries < MAXLEG ? plot->nseries : MAXLEG);
    PLINT opt[MAXLEG], colour[MAXLEG], style[MAXLEG], black[MAXLEG];
    PLFLT width[MAXLEG], scale[MAXLEG];
    PLINT nsym[MAXLEG];
    const char *text[MAXLEG], *sym[MAXLEG];
    char labels[MAXLEG][LINEPLOT_LABEL_MAX];
    bool marks = plot->npoints <= LINEPLOT_MARKERS_UPTO;
    for (PLINT s = 0; s < n; s++) {
        trd_plot_escape(plot->series_labels[s], labels[s], sizeof labels[s]);
        text[s] = labels[s];
        opt[s] = PL_LEGEND_LINE | (marks ? PL_LEGEND_SYMBOL : 0);
        colour[s] = trd_plot_series_colour((size_t)s);
        style[s] = 1 + (s / TRD_PLOT_NSERIES) % 8;
        black[s] = TRD_PLOT_BLACK;
        width[s] = 2.0;
        scale[s] = 1.0;
        nsym[s] = 1;
        sym[s] = markers[s % NMARKERS];
    }
    PLFLT w, h;
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_TOP | PL_POSITION_OUTSIDE, 0.02,
             0.0, 0.08, TRD_PLOT_WHITE, TRD_PLOT_BLACK, 1, n, 1, n, opt, 1.0,
             1.0, 2.0, 0.0, black, text, NULL, NULL, NULL, NULL, colour,
             style, width, colour, scale, nsym, sym);
}

static void draw_frame(const trd_lineplot *plot, const double xr[2],
                       const double yr[2])
{
    char text[LINEPLOT_LABEL_MAX];
    plwind(xr[0], xr[1], yr[0], yr[1]);
    plcol0(TRD_PLOT_BLACK);
    plbox("bcnst", 0.0, 0, "bcnstv", 0.0, 0);
    trd_plot_escape(plot->xlabel, text, sizeof text);
    plmtex("b", 3.0, 0.5, 0.5, text);
    trd_plot_escape(plot->ylabel, text, sizeof text);
    plmtex("l", 5.0, 0.5, 0.5, text);
    trd_plot_escape(plot->title, text, sizeof text);
    plmtex("t", 1.5, 0.5, 0.5, text);
}

trd_status trd_lineplot_write(const trd_lineplot *plot, const char *path)
{
    double xr[2], yr[2];
    trd_status st = lineplot_check(plot);
    if (st == TRD_OK)
        st = data_range("x", plot->x, plot->npoints, 0.03, xr);
    if (st == TRD_OK)
        st = data_range("y", plot->y, plot->nseries * plot->npoints, 0.05,
                        yr);
    if (st != TRD_OK)
        return st;
    trd_plot fig;
    st = trd_plot_begin(&fig, path, LINEPLOT_WIDTH, LINEPLOT_HEIGHT);
    if (st != TRD_OK)
        return st;
    trd_plot_viewport_px(&fig, 100, legend_px(plot, &fig), 70, 50);
    draw_frame(plot, xr, yr);
    for (size_t s = 0; s < plot->nseries; s++)
        draw_series(plot, s);
    draw_legend(plot);
    return trd_plot_end(&fig);
}

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
    LINEPLOT_LEFT_PX = 100, /* margins around the plot area, pixels */
    LINEPLOT_BOTTOM_PX = 70,
    LINEPLOT_TOP_PX = 70,
    LINEPLOT_SAMPLE_PX = 40,    /* line sample in the legend, pixels */
    LINEPLOT_MARKERS_UPTO = 25, /* series this short get markers */
    LINEPLOT_LEGEND_MAX = 64,   /* legend entries at most */
    LINEPLOT_LABEL_MAX = 256    /* bytes of a label drawn */
};

static const char *const markers[] = {"●", "■", "▲", "◆", "▼"};
#define LINEPLOT_MARKER_SCALE 0.8 /* marker size, in text heights */
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

/* Where things go on the page, in pixels. */
typedef struct layout {
    int right;      /* right margin: room for the legend */
    double vp_w;    /* plot area */
    double vp_h;
    PLINT nrow;     /* legend grid */
    PLINT ncol;
} layout;

/* Sizes the legend from its longest label (PLplot has no public text
 * metric, so ~0.65 text height per character) and its rows (in columns
 * when the series do not fit in one), and the plot area from that. */
static layout lineplot_layout(const trd_lineplot *plot)
{
    layout L;
    size_t longest = 1;
    for (size_t s = 0; s < plot->nseries; s++) {
        size_t len = utf8_chars(plot->series_labels[s]);
        longest = len > longest ? len : longest;
    }
    L.vp_h = LINEPLOT_HEIGHT - LINEPLOT_BOTTOM_PX - LINEPLOT_TOP_PX;
    size_t fit = (size_t)(L.vp_h / (2.0 * TRD_PLOT_TEXT_PX));
    size_t n = plot->nseries < LINEPLOT_LEGEND_MAX ? plot->nseries
                                                   : LINEPLOT_LEGEND_MAX;
    L.ncol = (PLINT)((n + fit - 1) / fit);
    L.nrow = (PLINT)((n + (size_t)L.ncol - 1) / (size_t)L.ncol);
    double column = 0.65 * TRD_PLOT_TEXT_PX * (double)longest +
                    LINEPLOT_SAMPLE_PX + 2 * TRD_PLOT_TEXT_PX;
    int px = (int)(L.ncol * column) + 40;
    L.right = px < LINEPLOT_WIDTH / 2 ? px : LINEPLOT_WIDTH / 2;
    L.vp_w = LINEPLOT_WIDTH - LINEPLOT_LEFT_PX - L.right;
    return L;
}

/* Dash pattern of series s: solid for the first ten, then PLplot's other
 * styles, so colours that repeat are still told apart. */
static PLINT line_style(size_t s)
{
    return (PLINT)(1 + (s / TRD_PLOT_NSERIES) % 8);
}

static void draw_series(const trd_lineplot *plot, const trd_plot *fig,
                        size_t s)
{
    const PLFLT *y = plot->y + s * plot->npoints;
    PLINT n = (PLINT)plot->npoints;
    plcol0(trd_plot_series_colour(s));
    pllsty(line_style(s));
    plwidth(2.0);
    if (n > 1)
        plline(n, plot->x, y);
    pllsty(1);
    plwidth(1.0);
    if (plot->npoints <= LINEPLOT_MARKERS_UPTO) {
        trd_plot_text_px(fig, LINEPLOT_MARKER_SCALE * TRD_PLOT_TEXT_PX);
        plstring(n, plot->x, y, markers[s % NMARKERS]);
        trd_plot_text_px(fig, TRD_PLOT_TEXT_PX);
    }
}

/* The legend, outside the plot to the right, top-aligned with it. */
static void draw_legend(const trd_lineplot *plot, const layout *L)
{
    enum { M = LINEPLOT_LEGEND_MAX };
    size_t n = plot->nseries < M ? plot->nseries : M;
    PLINT opt[M], colour[M], style[M], black[M], nsym[M];
    PLFLT width[M], scale[M];
    const char *text[M], *sym[M];
    char labels[M][LINEPLOT_LABEL_MAX];
    bool marks = plot->npoints <= LINEPLOT_MARKERS_UPTO;
    for (size_t s = 0; s < n; s++) {
        trd_plot_escape(plot->series_labels[s], labels[s], sizeof labels[s]);
        text[s] = labels[s];
        opt[s] = PL_LEGEND_LINE | (marks ? PL_LEGEND_SYMBOL : 0);
        colour[s] = trd_plot_series_colour(s);
        style[s] = line_style(s);
        black[s] = TRD_PLOT_BLACK;
        width[s] = 2.0;
        scale[s] = LINEPLOT_MARKER_SCALE;
        nsym[s] = 1;
        sym[s] = markers[s % NMARKERS];
    }
    /* pllegend takes the text offset in character heights but applies it
     * across, in viewport fractions: undo the viewport's aspect. */
    PLFLT w, h, offset = 0.8 * L->vp_h / L->vp_w;
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE,
             1.0 + 15.0 / L->vp_w, 0.0, LINEPLOT_SAMPLE_PX / L->vp_w,
             TRD_PLOT_WHITE, TRD_PLOT_BLACK, 1, L->nrow, L->ncol,
             (PLINT)n, opt, offset, 1.0, 2.0, 0.0, black, text, NULL, NULL,
             NULL, NULL, colour, style, width, colour, scale, nsym, sym);
}

static void draw_frame(const trd_lineplot *plot, const trd_plot *fig,
                       const double xr[2], const double yr[2])
{
    char text[LINEPLOT_LABEL_MAX];
    plwind(xr[0], xr[1], yr[0], yr[1]);
    plcol0(TRD_PLOT_BLACK);
    plbox("bcnst", 0.0, 0, "bcnstv", 0.0, 0);
    trd_plot_escape(plot->xlabel, text, sizeof text);
    plmtex("b", 3.2, 0.5, 0.5, text);
    trd_plot_escape(plot->ylabel, text, sizeof text);
    plmtex("l", 5.0, 0.5, 0.5, text);
    trd_plot_escape(plot->title, text, sizeof text);
    trd_plot_text_px(fig, 1.2 * TRD_PLOT_TEXT_PX);
    plmtex("t", 1.2, 0.5, 0.5, text);
    trd_plot_text_px(fig, TRD_PLOT_TEXT_PX);
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
    layout L = lineplot_layout(plot);
    trd_plot fig;
    st = trd_plot_begin(&fig, path, LINEPLOT_WIDTH, LINEPLOT_HEIGHT);
    if (st != TRD_OK)
        return st;
    trd_plot_viewport_px(&fig, LINEPLOT_LEFT_PX, L.right, LINEPLOT_BOTTOM_PX,
                         LINEPLOT_TOP_PX);
    draw_frame(plot, &fig, xr, yr);
    for (size_t s = 0; s < plot->nseries; s++)
        draw_series(plot, &fig, s);
    draw_legend(plot, &L);
    return trd_plot_end(&fig);
}

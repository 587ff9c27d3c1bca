/* lineplot.c: a line plot of several series against one x column, the
 * form of the papers' ratio and Monte-Carlo figures.  Series get distinct
 * colours (and, past ten series, distinct dash patterns); short series also
 * get markers.  Axis ranges come from the data with a small margin; a
 * constant range is widened so it still shows; either axis may be in log10
 * scale (the data is then drawn, and the legend placed, in log10 space).
 * A series may have a band (e.g. quantiles) drawn translucent in its
 * colour under the lines.  The plot area takes most of the page.  The
 * legend (legend.c) goes inside it, in the first corner (upper right, lower
 * right, upper left, lower left) that no line, marker or band crosses,
 * else centred below the plot area, in as many columns as fit.  Texts too
 * wide for their room are drawn smaller, then cut with an ellipsis, so
 * nothing is clipped. */
#include "viz/legend.h"
#include "viz/plot.h"

#include "core/error.h"

#include <plplot/plplot.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum {
    LINEPLOT_WIDTH = 1000, /* page, pixels */
    LINEPLOT_HEIGHT = 650,
    LINEPLOT_LEFT_PX = 100, /* margins around the plot area, pixels */
    LINEPLOT_RIGHT_PX = 40, /* room for the x axis' "(x10^k)" */
    LINEPLOT_MARKERS_UPTO = 25 /* series this short get markers */
};

static const char *const markers[] = {"●", "■", "▲", "◆", "▼"};
#define LINEPLOT_MARKER_SCALE 0.8 /* marker size, in text heights */
#define NMARKERS (sizeof markers / sizeof markers[0])
#define LINE_WIDTH 2.0            /* pen width of the series' lines */

static trd_status check_values(const char *what, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return trd_fail(TRD_EINVAL, "line plot: %s[%zu] = %g is not "
                            "finite", what, i, v[i]);
    return TRD_OK;
}

/* On a log y axis, every v[i] of y, ylo or yhi (`what`) must be > 0. */
static trd_status check_log_y(const trd_lineplot *plot, const char *what,
                              const double *v)
{
    size_t n = plot->npoints, total = plot->nseries * n;
    for (size_t i = 0; plot->logy && i < total; i++)
        if (!(v[i] > 0.0))
            return trd_fail(TRD_EINVAL, "line plot '%s': %s[%zu] = %g "
                            "(series %zu, point %zu), but a log y axis "
                            "needs every %s > 0", plot->title, what, i, v[i],
                            i / n, i % n, what);
    return TRD_OK;
}

/* The bands, when there are: both bounds set, finite, ylo <= yhi. */
static trd_status check_bands(const trd_lineplot *plot)
{
    if (plot->ylo == NULL && plot->yhi == NULL)
        return TRD_OK;
    if (plot->ylo == NULL || plot->yhi == NULL)
        return trd_fail(TRD_EINVAL, "line plot '%s': ylo and yhi go "
                        "together (both set, or both NULL for no bands)",
                        plot->title);
    if (plot->npoints > SIZE_MAX / (5 * sizeof(double)))
        return trd_fail(TRD_EINVAL, "line plot '%s': %zu points is too many "
                        "for bands", plot->title, plot->npoints);
    size_t total = plot->nseries * plot->npoints;
    trd_status st;
    if ((st = check_values("ylo", plot->ylo, total)) != TRD_OK ||
        (st = check_values("yhi", plot->yhi, total)) != TRD_OK)
        return st;
    for (size_t i = 0; i < total; i++)
        if (!(plot->ylo[i] <= plot->yhi[i]))
            return trd_fail(TRD_EINVAL, "line plot '%s': ylo[%zu] = %g > "
                            "yhi[%zu] = %g (series %zu, point %zu)",
                            plot->title, i, plot->ylo[i], i, plot->yhi[i],
                            i / plot->npoints, i % plot->npoints);
    if ((st = check_log_y(plot, "ylo", plot->ylo)) != TRD_OK)
        return st;
    return check_log_y(plot, "yhi", plot->yhi);
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
    /* on a log y axis, data_prepare holds up to 8 doubles a value */
    size_t most = SIZE_MAX / sizeof(double) / (plot->logy ? 8 : 1);
    if (plot->nseries > most / plot->npoints || plot->npoints > INT32_MAX)
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
    if (plot->logx)
        for (size_t i = 0; i < plot->npoints; i++)
            if (!(plot->x[i] > 0.0))
                return trd_fail(TRD_EINVAL, "line plot '%s': x[%zu] = %g, "
                                "but a log x axis needs every x > 0",
                                plot->title, i, plot->x[i]);
    st = check_values("y", plot->y, plot->nseries * plot->npoints);
    if (st == TRD_OK)
        st = check_log_y(plot, "y", plot->y);
    if (st == TRD_OK)
        st = check_bands(plot);
    return st;
}

/* Widens [lo, hi] to the values of v[0..n-1]. */
static void extend_range(const double *v, size_t n, double *lo, double *hi)
{
    for (size_t i = 0; i < n; i++) {
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
}

/* [lo, hi] widened by `margin` of its span on each side; a (nearly)
 * constant range is widened around its value instead, by `flat` when it is
 * > 0, else by a tenth of the value (1 around 0).  On a log axis (values
 * in log10), a range that would label fewer than two powers of ten is
 * widened to whole decades. */
static trd_status data_range(const char *axis, double lo, double hi,
                             double margin, bool log, double range[2])
{
    double span = hi - lo, scale = fmax(fabs(lo), fabs(hi));
    double flat = log ? 0.5 : 0.0;
    if (span <= 1e-9 * scale || span == 0.0) {
        double pad = flat > 0.0 ? flat : scale > 0.0 ? 0.1 * scale : 1.0;
        range[0] = lo - pad;
        range[1] = hi + pad;
    } else {
        range[0] = lo - margin * span;
        range[1] = hi + margin * span;
    }
    if (!isfinite(range[1] - range[0]))
        return trd_fail(TRD_EINVAL, "line plot: %s values span [%g, %g], too "
                        "wide a range to plot", axis, lo, hi);
    if (log && floor(range[1]) - ceil(range[0]) < 1.0) {
        range[0] = floor(range[0]);
        range[1] = ceil(range[1]);
    }
    return TRD_OK;
}

/* The data as plotted (log10 on a log axis) and both axis ranges. */
typedef struct data {
    const double *x;
    const double *y, *ylo, *yhi; /* ylo, yhi: NULL without bands */
    double *owned; /* what had to be computed: x, y, ylo, yhi, then poly */
    double *poly;  /* with bands: room for the 2 * npoints corners (x, then
                      y) of one band's polygon */
    double xr[2];
    double yr[2];
} data;

/* log10 of v[0..n-1] into out; returns out. */
static const double *log10_of(const double *v, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = log10(v[i]);
    return out;
}

static trd_status data_prepare(const trd_lineplot *plot, data *D)
{
    size_t n = plot->npoints, total = plot->nseries * n;
    bool bands = plot->ylo != NULL;
    size_t nx = plot->logx ? n : 0, npoly = bands ? 4 * n : 0;
    size_t ny = plot->logy ? (bands ? 3 : 1) * total : 0;
    *D = (data){.x = plot->x, .y = plot->y, .ylo = plot->ylo,
                .yhi = plot->yhi};
    if (nx + ny + npoly > 0) {
        D->owned = malloc((nx + ny + npoly) * sizeof *D->owned);
        if (D->owned == NULL)
            return trd_fail(TRD_ENOMEM, "line plot '%s': no memory for %zu "
                            "points", plot->title, plot->npoints);
    }
    double *next = D->owned;
    if (plot->logx) {
        D->x = log10_of(plot->x, n, next);
        next += n;
    }
    if (plot->logy) {
        D->y = log10_of(plot->y, total, next);
        next += total;
        if (bands) {
            D->ylo = log10_of(plot->ylo, total, next);
            D->yhi = log10_of(plot->yhi, total, next + total);
            next += 2 * total;
        }
    }
    D->poly = npoly > 0 ? next : NULL;
    double lo = D->x[0], hi = D->x[0];
    extend_range(D->x, n, &lo, &hi);
    trd_status st = data_range("x", lo, hi, 0.03, plot->logx, D->xr);
    lo = hi = D->y[0];
    extend_range(D->y, total, &lo, &hi);
    if (bands) { /* the bands show whole */
        extend_range(D->ylo, total, &lo, &hi);
        extend_range(D->yhi, total, &lo, &hi);
    }
    if (st == TRD_OK)
        st = data_range("y", lo, hi, 0.05, plot->logy, D->yr);
    if (st != TRD_OK)
        free(D->owned);
    return st;
}

/* Where things go on the page, in pixels, and the texts as drawn. */
typedef struct layout {
    double bottom, top;  /* margins (left and right are fixed) */
    double vp_w, vp_h;   /* plot area */
    trd_plot_labels lab; /* title, axis labels, caption */
    trd_legend legend;
} layout;

/* What the legend's placement tests against. */
typedef struct covers_ctx {
    const trd_lineplot *plot;
    const data *D;
    const layout *L;
} covers_ctx;

/* Whether any line, marker or band of the plot meets the box b (pixels
 * from the plot area's lower left corner); a trd_legend_covers. */
static bool box_covers_data(const void *ctx, const double b[4])
{
    const covers_ctx *C = ctx;
    const data *D = C->D;
    trd_legend_map m = {.x0 = D->xr[0], .y0 = D->yr[0],
                        .sx = C->L->vp_w / (D->xr[1] - D->xr[0]),
                        .sy = C->L->vp_h / (D->yr[1] - D->yr[0])};
    size_t n = C->plot->npoints;
    for (size_t s = 0; s < C->plot->nseries; s++) {
        if (trd_legend_line_hits(&m, D->x, D->y + s * n, n, b))
            return true;
        if (D->ylo != NULL && trd_legend_band_hits(&m, D->x, D->ylo + s * n,
                                                   D->yhi + s * n, n, b))
            return true;
    }
    return false;
}

/* Margins, texts as drawn and the legend's place. */
static void lineplot_layout(const trd_lineplot *plot, const data *D,
                            layout *L)
{
    const double W = LINEPLOT_WIDTH, H = LINEPLOT_HEIGHT;
    L->vp_w = W - LINEPLOT_LEFT_PX - LINEPLOT_RIGHT_PX;
    double centre = LINEPLOT_LEFT_PX + 0.5 * L->vp_w;
    double avail = 2.0 * fmin(centre, W - centre) - 2.0 * TRD_PLOT_PAD_PX;

    /* a "(x10^k)" of a linear y axis: the title stays clear of it, and
     * above the plot area there is room for it; room for the "(x10^k)"
     * that PLplot may write at the right end of a linear x axis */
    bool yexp = !plot->logy && trd_plot_y_exponent(D->yr);
    trd_plot_labels_fit(&L->lab, plot->title,
                        yexp ? 2.0 * (0.5 * L->vp_w - TRD_PLOT_PAD_PX)
                             : avail,
                        yexp, plot->xlabel,
                        plot->logx ? L->vp_w : L->vp_w - 160.0, plot->note,
                        avail);
    L->top = L->lab.top;
    double below = L->lab.below;

    trd_legend_init(&L->legend, plot->series_labels, plot->nseries, W, H);
    L->bottom = round(below + TRD_PLOT_PAD_PX);
    L->vp_h = H - L->top - L->bottom;
    /* markers reach this far past the lines */
    double pad = 3.0 + (plot->npoints <= LINEPLOT_MARKERS_UPTO
                            ? 0.5 * LINEPLOT_MARKER_SCALE * TRD_PLOT_TEXT_PX
                            : 0.0);
    covers_ctx ctx = {plot, D, L};
    if (!trd_legend_inside(&L->legend, L->vp_w, L->vp_h, pad,
                           box_covers_data, &ctx)) {
        double h = trd_legend_below(&L->legend, below + 10.0, avail);
        L->bottom = round(below + 10.0 + h + TRD_PLOT_PAD_PX);
        L->vp_h = H - L->top - L->bottom;
    }
    trd_plot_labels_fit_y(&L->lab, plot->ylabel, L->vp_h);
}

/* Dash pattern of series s: solid for the first ten, then PLplot's other
 * styles, so colours that repeat are still told apart. */
static PLINT line_style(size_t s)
{
    return (PLINT)(1 + (s / TRD_PLOT_NSERIES) % 8);
}

/* The band of series s, translucent in its colour: the polygon along ylo
 * and back along yhi (for a single point, a vertical bar). */
static void draw_band(const trd_lineplot *plot, const data *D, size_t s)
{
    size_t n = plot->npoints;
    const double *lo = D->ylo + s * n, *hi = D->yhi + s * n;
    double *px = D->poly, *py = D->poly + 2 * n;
    for (size_t k = 0; k < n; k++) {
        px[k] = px[2 * n - 1 - k] = D->x[k];
        py[k] = lo[k];
        py[2 * n - 1 - k] = hi[k];
    }
    if (n == 1) {
        plcol0(trd_plot_series_colour(s));
        plwidth(6.0);
        plline(2, px, py);
        plwidth(1.0);
        return;
    }
    plcol0(trd_plot_band_colour(s));
    plpsty(0);
    plfill((PLINT)(2 * n), px, py);
}

static void draw_series(const trd_lineplot *plot, const data *D,
                        const trd_plot *fig, size_t s)
{
    const PLFLT *y = D->y + s * plot->npoints;
    PLINT n = (PLINT)plot->npoints;
    plcol0(trd_plot_series_colour(s));
    pllsty(line_style(s));
    plwidth(LINE_WIDTH);
    if (n > 1)
        plline(n, D->x, y);
    pllsty(1);
    plwidth(1.0);
    if (plot->npoints <= LINEPLOT_MARKERS_UPTO) {
        trd_plot_text_px(fig, LINEPLOT_MARKER_SCALE * TRD_PLOT_TEXT_PX);
        plstring(n, D->x, y, markers[s % NMARKERS]);
        trd_plot_text_px(fig, TRD_PLOT_TEXT_PX);
    }
}

/* The legend, where the layout put it: each series' line, marker and band
 * colour. */
static void draw_legend(const trd_lineplot *plot, const trd_plot *fig,
                        const layout *L)
{
    trd_legend_entry entry[TRD_LEGEND_MAX];
    bool marks = plot->npoints <= LINEPLOT_MARKERS_UPTO;
    for (size_t s = 0; s < L->legend.n; s++)
        entry[s] = (trd_legend_entry){
            .colour = trd_plot_series_colour(s),
            .style = line_style(s),
            .marker = marks ? markers[s % NMARKERS] : NULL,
            .band = plot->ylo != NULL ? trd_plot_band_colour(s) : -1};
    trd_legend_draw(&L->legend, fig, L->vp_w, L->vp_h, entry, LINE_WIDTH,
                    LINEPLOT_MARKER_SCALE);
}

static void draw_frame(const trd_lineplot *plot, const trd_plot *fig,
                       const data *D, const layout *L)
{
    plwind(D->xr[0], D->xr[1], D->yr[0], D->yr[1]);
    plcol0(TRD_PLOT_BLACK);
    plwidth(1.0);
    plbox(plot->logx ? "bcnstl" : "bcnst", 0.0, 0,
          plot->logy ? "bcnstlv" : "bcnstv", 0.0, 0);
    trd_plot_labels_draw(fig, &L->lab, LINEPLOT_LEFT_PX);
}

trd_status trd_lineplot_write(const trd_lineplot *plot, const char *path)
{
    trd_status st = lineplot_check(plot);
    if (st != TRD_OK)
        return st;
    data D;
    st = data_prepare(plot, &D);
    if (st != TRD_OK)
        return st;
    layout *L = malloc(sizeof *L);
    if (L == NULL) {
        free(D.owned);
        return trd_fail(TRD_ENOMEM, "line plot '%s': no memory for its "
                        "layout", plot->title);
    }
    lineplot_layout(plot, &D, L);
    trd_plot fig;
    st = trd_plot_begin(&fig, path, LINEPLOT_WIDTH, LINEPLOT_HEIGHT);
    if (st == TRD_OK) {
        trd_plot_viewport_px(&fig, LINEPLOT_LEFT_PX, LINEPLOT_RIGHT_PX,
                             (int)lround(L->bottom), (int)lround(L->top));
        draw_frame(plot, &fig, &D, L);
        if (plot->ylo != NULL) /* all bands under all lines */
            for (size_t s = 0; s < plot->nseries; s++)
                draw_band(plot, &D, s);
        for (size_t s = 0; s < plot->nseries; s++)
            draw_series(plot, &D, &fig, s);
        draw_legend(plot, &fig, L);
        st = trd_plot_end(&fig);
    }
    free(L);
    free(D.owned);
    return st;
}

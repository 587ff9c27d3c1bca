/* lineplot.c: a line plot of several series against one x column, the
 * form of the papers' ratio and Monte-Carlo figures.  Series get distinct
 * colours (and, past ten series, distinct dash patterns); short series also
 * get markers.  Axis ranges come from the data with a small margin; a
 * constant range is widened so it still shows; the x axis may be in log10
 * scale.  A series may have a band (e.g. quantiles) drawn translucent in its
 * colour under the lines.  The plot area takes most of the page.  The legend goes inside it,
 * in the first corner (upper right, lower right, upper left, lower left)
 * that no line or marker crosses, else centred below the plot area, in as
 * many columns as fit.  Texts too wide for their room are drawn smaller,
 * then cut with an ellipsis, so nothing is clipped. */
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
    LINEPLOT_MARKERS_UPTO = 25, /* series this short get markers */
    LINEPLOT_LEGEND_MAX = 64    /* legend entries at most */
};

/* Text heights and distances, pixels. */
#define SAMPLE_PX 40.0        /* line sample in the legend */
#define LEGEND_TEXT_GAP_PX 8.0 /* between sample and text */
#define LEGEND_SPACING 1.8    /* legend rows, in text heights */
#define LEGEND_INSET_PX 10.0  /* legend from the plot area's corner */
#define LEGEND_MAX_HEIGHT 0.3 /* of the page, for a legend below */
#define LEGEND_BOX_SCALE 0.8  /* band sample height, in text heights */

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
    if (plot->logx)
        for (size_t i = 0; i < plot->npoints; i++)
            if (!(plot->x[i] > 0.0))
                return trd_fail(TRD_EINVAL, "line plot '%s': x[%zu] = %g, "
                                "but a log x axis needs every x > 0",
                                plot->title, i, plot->x[i]);
    size_t total = plot->nseries * plot->npoints;
    st = check_values("y", plot->y, total);
    if (st != TRD_OK || (plot->ylo == NULL && plot->yhi == NULL))
        return st;
    if (plot->ylo == NULL || plot->yhi == NULL)
        return trd_fail(TRD_EINVAL, "line plot '%s': ylo and yhi go "
                        "together (both set, or both NULL for no bands)",
                        plot->title);
    if (plot->npoints > SIZE_MAX / (5 * sizeof(double)))
        return trd_fail(TRD_EINVAL, "line plot '%s': %zu points is too many "
                        "for bands", plot->title, plot->npoints);
    if ((st = check_values("ylo", plot->ylo, total)) != TRD_OK ||
        (st = check_values("yhi", plot->yhi, total)) != TRD_OK)
        return st;
    for (size_t i = 0; i < total; i++)
        if (!(plot->ylo[i] <= plot->yhi[i]))
            return trd_fail(TRD_EINVAL, "line plot '%s': ylo[%zu] = %g > "
                            "yhi[%zu] = %g (series %zu, point %zu)",
                            plot->title, i, plot->ylo[i], i, plot->yhi[i],
                            i / plot->npoints, i % plot->npoints);
    return TRD_OK;
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
 * > 0, else by a tenth of the value (1 around 0). */
static trd_status data_range(const char *axis, double lo, double hi,
                             double margin, double flat, double range[2])
{
    double span = hi - lo, scale = fmax(fabs(lo), fabs(hi));
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
    return TRD_OK;
}

/* The x values as plotted (log10 x on a log axis) and both axis ranges. */
typedef struct data {
    const double *x;
    double *owned; /* x when it had to be computed, then poly */
    double *poly;  /* with bands: room for the 2 * npoints corners (x, then
                      y) of one band's polygon */
    double xr[2];
    double yr[2];
} data;

static trd_status data_prepare(const trd_lineplot *plot, data *D)
{
    size_t n = plot->npoints, total = plot->nseries * n;
    size_t nx = plot->logx ? n : 0, npoly = plot->ylo != NULL ? 4 * n : 0;
    D->x = plot->x;
    D->owned = NULL;
    D->poly = NULL;
    if (nx + npoly > 0) {
        D->owned = malloc((nx + npoly) * sizeof *D->owned);
        if (D->owned == NULL)
            return trd_fail(TRD_ENOMEM, "line plot '%s': no memory for %zu "
                            "points", plot->title, plot->npoints);
        D->poly = npoly > 0 ? D->owned + nx : NULL;
    }
    if (plot->logx) {
        for (size_t i = 0; i < n; i++)
            D->owned[i] = log10(plot->x[i]);
        D->x = D->owned;
    }
    double lo = D->x[0], hi = D->x[0];
    extend_range(D->x, n, &lo, &hi);
    trd_status st = data_range("x", lo, hi, 0.03, plot->logx ? 0.5 : 0.0,
                               D->xr);
    if (st == TRD_OK && plot->logx &&
        floor(D->xr[1]) - ceil(D->xr[0]) < 1.0) {
        /* fewer than two powers of ten would be labelled: show whole
         * decades */
        D->xr[0] = floor(D->xr[0]);
        D->xr[1] = ceil(D->xr[1]);
    }
    lo = hi = plot->y[0];
    extend_range(plot->y, total, &lo, &hi);
    if (plot->ylo != NULL) { /* the bands show whole */
        extend_range(plot->ylo, total, &lo, &hi);
        extend_range(plot->yhi, total, &lo, &hi);
    }
    if (st == TRD_OK)
        st = data_range("y", lo, hi, 0.05, 0.0, D->yr);
    if (st != TRD_OK)
        free(D->owned);
    return st;
}

/* Where the legend goes. */
typedef enum legend_place {
    LEGEND_UPPER_RIGHT,
    LEGEND_LOWER_RIGHT,
    LEGEND_UPPER_LEFT,
    LEGEND_LOWER_LEFT,
    LEGEND_BELOW
} legend_place;

/* Where things go on the page, in pixels, and the texts as drawn. */
typedef struct layout {
    double bottom, top;  /* margins (left and right are fixed) */
    double vp_w, vp_h;   /* plot area */
    trd_plot_labels lab; /* title, axis labels, caption */
    /* legend */
    size_t nlegend;
    legend_place place;
    double legend_px;    /* its text height */
    double legend_top;   /* below: its top, below the plot area */
    double text_w;       /* estimated width of its longest text */
    PLINT nrow, ncol;
    char labels[LINEPLOT_LEGEND_MAX][TRD_PLOT_LABEL_MAX];
} layout;

/* Height of the page's text, in pixels, that is as wide as one pllegend
 * "character width" (which pllegend takes from the height, in normalised
 * page units, so it stretches with the page's aspect). */
static double legend_char_w(double text_px)
{
    return text_px * LINEPLOT_WIDTH / LINEPLOT_HEIGHT;
}

/* Legend size in pixels for ncol columns of nrow rows of text_w-wide text
 * of text height px (pllegend's own arithmetic). */
static void legend_size(double px, double text_w, PLINT nrow, PLINT ncol,
                        double *w, double *h)
{
    double cw = legend_char_w(px);
    double column = SAMPLE_PX + LEGEND_TEXT_GAP_PX + text_w;
    *w = 0.8 * cw + ncol * column + (ncol - 1) * 2.0 * cw;
    *h = nrow * LEGEND_SPACING * px;
}

/* Widest estimated legend text at text height px. */
static double legend_text_w(const trd_lineplot *plot, size_t n, double px)
{
    double w = 0.0;
    for (size_t s = 0; s < n; s++)
        w = fmax(w, trd_plot_text_width(plot->series_labels[s], px));
    return w * TRD_PLOT_WIDTH_SAFETY + 2.0;
}

/* Whether the segment (x0,y0)-(x1,y1) meets the box b = {x0, x1, y0, y1}
 * (Liang-Barsky clipping; a point when both ends are the same). */
static bool segment_hits(double x0, double y0, double x1, double y1,
                         const double b[4])
{
    double dx = x1 - x0, dy = y1 - y0, t0 = 0.0, t1 = 1.0;
    double p[4] = {-dx, dx, -dy, dy};
    double q[4] = {x0 - b[0], b[1] - x0, y0 - b[2], b[3] - y0};
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0.0) {
            if (q[i] < 0.0)
                return false;
            continue;
        }
        double r = q[i] / p[i];
        if (p[i] < 0.0) {
            if (r > t1)
                return false;
            t0 = fmax(t0, r);
        } else {
            if (r < t0)
                return false;
            t1 = fmin(t1, r);
        }
    }
    return true;
}

/* Whether the polyline y[0..n-1] against D->x crosses the box b (pixels
 * from the plot area's lower left corner); sx, sy: pixels per unit. */
static bool line_hits(const data *D, const double *y, size_t n, double sx,
                      double sy, const double b[4])
{
    for (size_t k = 0; k < n; k++) {
        size_t k1 = k + 1 < n ? k + 1 : k;
        if (k1 == k && n > 1)
            break;
        if (segment_hits((D->x[k] - D->xr[0]) * sx, (y[k] - D->yr[0]) * sy,
                         (D->x[k1] - D->xr[0]) * sx,
                         (y[k1] - D->yr[0]) * sy, b))
            return true;
    }
    return false;
}

/* Whether the point (px, py) (pixels) lies inside the band between lo and
 * hi over [x[k], x[k+1]] for some k. */
static bool inside_band(const data *D, const double *lo, const double *hi,
                        size_t n, double sx, double sy, double px, double py)
{
    double x = D->xr[0] + px / sx, y = D->yr[0] + py / sy;
    for (size_t k = 0; k + 1 < n; k++) {
        double x0 = D->x[k], x1 = D->x[k + 1];
        if (!(fmin(x0, x1) <= x && x <= fmax(x0, x1)))
            continue;
        double t = x1 != x0 ? (x - x0) / (x1 - x0) : 0.0;
        double ylo = lo[k] + t * (lo[k + 1] - lo[k]);
        double yhi = hi[k] + t * (hi[k + 1] - hi[k]);
        if (ylo <= y && y <= yhi)
            return true;
    }
    return false;
}

/* Whether any line, marker or band of the plot meets the box b (pixels
 * from the plot area's lower left corner). */
static bool box_covers_data(const trd_lineplot *plot, const data *D,
                            const layout *L, const double b[4])
{
    double sx = L->vp_w / (D->xr[1] - D->xr[0]);
    double sy = L->vp_h / (D->yr[1] - D->yr[0]);
    size_t n = plot->npoints;
    for (size_t s = 0; s < plot->nseries; s++) {
        if (line_hits(D, plot->y + s * n, n, sx, sy, b))
            return true;
        if (plot->ylo == NULL)
            continue;
        /* a band meets the box when its edges cross it or the box lies
         * inside the band (the band's vertical ends are short: their
         * crossings are the edges' or show as a corner inside) */
        const double *lo = plot->ylo + s * n, *hi = plot->yhi + s * n;
        if (line_hits(D, lo, n, sx, sy, b) || line_hits(D, hi, n, sx, sy, b))
            return true;
        for (int c = 0; c < 4; c++)
            if (inside_band(D, lo, hi, n, sx, sy, b[c & 1], b[2 + (c >> 1)]))
                return true;
        for (size_t k = 0; k < n; k += n > 1 ? n - 1 : 1) {
            double end[4] = {D->x[k], D->x[k], lo[k], hi[k]};
            if (segment_hits((end[0] - D->xr[0]) * sx,
                             (end[2] - D->yr[0]) * sy,
                             (end[1] - D->xr[0]) * sx,
                             (end[3] - D->yr[0]) * sy, b))
                return true;
        }
    }
    return false;
}

/* Legend inside the plot area, in the first free corner, if it is small
 * enough; false when it should go below. */
static bool legend_inside(const trd_lineplot *plot, const data *D,
                          layout *L)
{
    double px = TRD_PLOT_TEXT_PX;
    double text_w = legend_text_w(plot, L->nlegend, px), w = 0.0, h = 0.0;
    PLINT ncol = 1, nrow = (PLINT)L->nlegend;
    for (;; ncol++) {
        nrow = (PLINT)((L->nlegend + (size_t)ncol - 1) / (size_t)ncol);
        legend_size(px, text_w, nrow, ncol, &w, &h);
        if (h <= 0.4 * L->vp_h || (size_t)ncol >= L->nlegend)
            break;
    }
    if (h > 0.4 * L->vp_h || w > 0.7 * L->vp_w)
        return false;
    /* markers reach this far past the lines */
    double pad = 3.0 + (plot->npoints <= LINEPLOT_MARKERS_UPTO
                            ? 0.5 * LINEPLOT_MARKER_SCALE * TRD_PLOT_TEXT_PX
                            : 0.0);
    static const legend_place corners[] = {LEGEND_UPPER_RIGHT,
                                           LEGEND_LOWER_RIGHT,
                                           LEGEND_UPPER_LEFT,
                                           LEGEND_LOWER_LEFT};
    for (size_t c = 0; c < sizeof corners / sizeof corners[0]; c++) {
        bool right = corners[c] == LEGEND_UPPER_RIGHT ||
                     corners[c] == LEGEND_LOWER_RIGHT;
        bool upper = corners[c] == LEGEND_UPPER_RIGHT ||
                     corners[c] == LEGEND_UPPER_LEFT;
        double x0 = right ? L->vp_w - LEGEND_INSET_PX - w : LEGEND_INSET_PX;
        double y0 = upper ? L->vp_h - LEGEND_INSET_PX - h : LEGEND_INSET_PX;
        double b[4] = {x0 - pad, x0 + w + pad, y0 - pad, y0 + h + pad};
        if (!box_covers_data(plot, D, L, b)) {
            L->place = corners[c];
            L->legend_px = px;
            L->text_w = text_w;
            L->nrow = nrow;
            L->ncol = ncol;
            return true;
        }
    }
    return false;
}

/* Legend centred below the plot area: in as many columns as fit the page
 * (balanced), with smaller text or cut labels when it would be taller than
 * LEGEND_MAX_HEIGHT of the page.  Returns its height. */
static double legend_below(const trd_lineplot *plot, layout *L)
{
    double centre = LINEPLOT_LEFT_PX + 0.5 * L->vp_w;
    double avail = 2.0 * fmin(centre, LINEPLOT_WIDTH - centre) -
                   2.0 * TRD_PLOT_PAD_PX;
    size_t n = L->nlegend;
    double px = TRD_PLOT_TEXT_PX, text_w = 0.0, w, h;
    size_t ncol = 1;
    for (; px >= TRD_PLOT_MIN_TEXT_PX; px -= 1.0) {
        text_w = legend_text_w(plot, n, px);
        size_t max_rows = (size_t)(LEGEND_MAX_HEIGHT * LINEPLOT_HEIGHT /
                                   (LEGEND_SPACING * px));
        max_rows = max_rows > 0 ? max_rows : 1;
        size_t need = (n + max_rows - 1) / max_rows;
        for (ncol = 1; ncol < n; ncol++) {
            legend_size(px, text_w, 1, (PLINT)ncol + 1, &w, &h);
            if (w > avail)
                break;
        }
        if (ncol >= need)
            break;
        ncol = need; /* at TRD_PLOT_MIN_TEXT_PX: labels get cut to fit */
    }
    px = fmax(px, TRD_PLOT_MIN_TEXT_PX);
    size_t nrow = (n + ncol - 1) / ncol;
    ncol = (n + nrow - 1) / nrow; /* balanced */
    legend_size(px, 0.0, (PLINT)nrow, (PLINT)ncol, &w, &h);
    text_w = fmin(text_w, (avail - w) / (double)ncol);
    L->place = LEGEND_BELOW;
    L->legend_px = px;
    L->text_w = text_w;
    L->nrow = (PLINT)nrow;
    L->ncol = (PLINT)ncol;
    return h;
}

/* Margins, texts as drawn and the legend's place. */
static void lineplot_layout(const trd_lineplot *plot, const data *D,
                            layout *L)
{
    const double W = LINEPLOT_WIDTH, H = LINEPLOT_HEIGHT;
    L->vp_w = W - LINEPLOT_LEFT_PX - LINEPLOT_RIGHT_PX;
    double centre = LINEPLOT_LEFT_PX + 0.5 * L->vp_w;
    double avail = 2.0 * fmin(centre, W - centre) - 2.0 * TRD_PLOT_PAD_PX;

    /* a "(x10^k)" of the y axis: the title stays clear of it, and above
     * the plot area there is room for it; room for the "(x10^k)" that
     * PLplot may write at the right end of a linear x axis */
    bool yexp = trd_plot_y_exponent(D->yr);
    trd_plot_labels_fit(&L->lab, plot->title,
                        yexp ? 2.0 * (0.5 * L->vp_w - TRD_PLOT_PAD_PX)
                             : avail,
                        yexp, plot->xlabel,
                        plot->logx ? L->vp_w : L->vp_w - 160.0, plot->note,
                        avail);
    L->top = L->lab.top;
    double below = L->lab.below;

    L->nlegend = plot->nseries < LINEPLOT_LEGEND_MAX ? plot->nseries
                                                     : LINEPLOT_LEGEND_MAX;
    L->bottom = round(below + TRD_PLOT_PAD_PX);
    L->vp_h = H - L->top - L->bottom;
    if (!legend_inside(plot, D, L)) {
        L->legend_top = below + 10.0;
        L->bottom = round(L->legend_top + legend_below(plot, L) +
                          TRD_PLOT_PAD_PX);
        L->vp_h = H - L->top - L->bottom;
    }
    for (size_t s = 0; s < L->nlegend; s++)
        trd_plot_fit(plot->series_labels[s], L->legend_px * TRD_PLOT_WIDTH_SAFETY,
                     L->text_w, L->labels[s], sizeof L->labels[s]);
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
    const double *lo = plot->ylo + s * n, *hi = plot->yhi + s * n;
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
    const PLFLT *y = plot->y + s * plot->npoints;
    PLINT n = (PLINT)plot->npoints;
    plcol0(trd_plot_series_colour(s));
    pllsty(line_style(s));
    plwidth(2.0);
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

/* The legend, where the layout put it, on an opaque white background in a
 * thin frame. */
static void draw_legend(const trd_lineplot *plot, const trd_plot *fig,
                        const layout *L)
{
    enum { M = LINEPLOT_LEGEND_MAX };
    size_t n = L->nlegend;
    PLINT opt[M], colour[M], style[M], black[M], nsym[M], band[M], solid[M];
    PLFLT width[M], scale[M], box_scale[M], box_width[M];
    const char *text[M], *sym[M];
    bool marks = plot->npoints <= LINEPLOT_MARKERS_UPTO;
    for (size_t s = 0; s < n; s++) {
        text[s] = L->labels[s];
        opt[s] = PL_LEGEND_LINE | (marks ? PL_LEGEND_SYMBOL : 0) |
                 (plot->ylo != NULL ? PL_LEGEND_COLOR_BOX : 0);
        band[s] = trd_plot_band_colour(s);
        solid[s] = 0;
        box_scale[s] = LEGEND_BOX_SCALE;
        box_width[s] = 0.0;
        colour[s] = trd_plot_series_colour(s);
        style[s] = line_style(s);
        black[s] = TRD_PLOT_BLACK;
        width[s] = 2.0;
        scale[s] = LINEPLOT_MARKER_SCALE;
        nsym[s] = 1;
        sym[s] = markers[s % NMARKERS];
    }
    PLINT position = PL_POSITION_VIEWPORT;
    double x = LEGEND_INSET_PX / L->vp_w, y = LEGEND_INSET_PX / L->vp_h;
    switch (L->place) {
    case LEGEND_UPPER_RIGHT:
        position |= PL_POSITION_INSIDE | PL_POSITION_RIGHT | PL_POSITION_TOP;
        break;
    case LEGEND_LOWER_RIGHT:
        position |= PL_POSITION_INSIDE | PL_POSITION_RIGHT |
                    PL_POSITION_BOTTOM;
        break;
    case LEGEND_UPPER_LEFT:
        position |= PL_POSITION_INSIDE | PL_POSITION_LEFT | PL_POSITION_TOP;
        break;
    case LEGEND_LOWER_LEFT:
        position |= PL_POSITION_INSIDE | PL_POSITION_LEFT |
                    PL_POSITION_BOTTOM;
        break;
    case LEGEND_BELOW:
        position |= PL_POSITION_OUTSIDE | PL_POSITION_BOTTOM;
        x = 0.0;
        y = L->legend_top / L->vp_h;
        break;
    }
    /* pllegend counts the text offset in "character widths" */
    double offset = LEGEND_TEXT_GAP_PX / legend_char_w(L->legend_px);
    PLFLT w, h;
    trd_plot_text_px(fig, L->legend_px);
    plwidth(1.0);
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             position, x, y, SAMPLE_PX / L->vp_w, TRD_PLOT_WHITE,
             TRD_PLOT_BLACK, 1, L->nrow, L->ncol, (PLINT)n, opt, offset, 1.0,
             LEGEND_SPACING, 0.0, black, text, band, solid, box_scale,
             box_width,
             colour, style, width, colour, scale, nsym, sym);
    trd_plot_text_px(fig, TRD_PLOT_TEXT_PX);
}

static void draw_frame(const trd_lineplot *plot, const trd_plot *fig,
                       const data *D, const layout *L)
{
    plwind(D->xr[0], D->xr[1], D->yr[0], D->yr[1]);
    plcol0(TRD_PLOT_BLACK);
    plwidth(1.0);
    plbox(plot->logx ? "bcnstl" : "bcnst", 0.0, 0, "bcnstv", 0.0, 0);
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

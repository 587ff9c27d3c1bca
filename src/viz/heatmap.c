/* heatmap.c: a map of z over a grid of cells, the form of Figures 5 and 6
 * of benoit-canon-marchal.  Each cell is a filled rectangle around its
 * centre, its sides halfway between neighbouring centres (in log10 space on
 * a log axis), the outer cells reaching half a step past their centre; the
 * plot area is exactly the cells.  A continuous map gets a colour bar at the
 * right: a diverging blue-white-red scale centred on the contour level when
 * there is one (blue below, red above, the scale symmetric around it), else
 * the sequential "viridis" scale; the contour z = level is a thick black
 * line over the cells (linear interpolation between cell centres, in the
 * axes' plotted space), marked on the colour bar, and named in a key below
 * the bar when it crosses the map.  A categorical map colours each category
 * with its series colour and lists, in a key at the right, the categories
 * that occur (in index order). */
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
    HEATMAP_WIDTH = 1000, /* page, pixels */
    HEATMAP_HEIGHT = 700,
    HEATMAP_LEFT_PX = 100,      /* margin left of the plot area */
    HEATMAP_MAX_RIGHT_PX = 320, /* at most for the colour bar and key */
    HEATMAP_MAX_CELLS = 1 << 24 /* cells drawn at most */
};

/* Distances in pixels. */
#define GAP_PX 20.0        /* between the plot area and colour bar or key */
#define BAR_W_PX 22.0      /* colour bar width */
#define BAR_DIGITS 5       /* tick label length the right margin allows */
#define BAR_STRIPS 256     /* the colour bar's scale is drawn in strips */
#define CONTOUR_WIDTH 3.0  /* pen width of the contour line */

/* Checks an axis: n centres, finite, strictly increasing, > 0 on a log
 * axis. */
static trd_status check_axis(const trd_heatmap *map, const char *name,
                             const double *c, size_t n, bool log)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(c[i]))
            return trd_fail(TRD_EINVAL, "heat map '%s': %s[%zu] = %g is not "
                            "finite", map->title, name, i, c[i]);
        if (i > 0 && !(c[i] > c[i - 1]))
            return trd_fail(TRD_EINVAL, "heat map '%s': %s[%zu] = %.9g "
                            "after %s[%zu] = %.9g: cell centres must "
                            "increase",
                            map->title, name, i, c[i], name, i - 1,
                            c[i - 1]);
        if (log && !(c[i] > 0.0))
            return trd_fail(TRD_EINVAL, "heat map '%s': %s[%zu] = %g, but a "
                            "log %s axis needs every %s > 0", map->title,
                            name, i, c[i], name, name);
    }
    return TRD_OK;
}

static trd_status heatmap_check(const trd_heatmap *map)
{
    if (map == NULL)
        return trd_fail(TRD_EINVAL, "heat map is NULL");
    if (map->title == NULL || map->xlabel == NULL || map->ylabel == NULL)
        return trd_fail(TRD_EINVAL, "heat map: title, xlabel and ylabel "
                        "must not be NULL");
    if (map->x == NULL || map->y == NULL || map->z == NULL)
        return trd_fail(TRD_EINVAL, "heat map '%s': x, y and z must not be "
                        "NULL", map->title);
    if (map->nx == 0 || map->ny == 0)
        return trd_fail(TRD_EINVAL, "heat map '%s' has %zu x %zu cells: "
                        "both must be >= 1", map->title, map->nx, map->ny);
    if (map->nx > HEATMAP_MAX_CELLS / map->ny)
        return trd_fail(TRD_EINVAL, "heat map '%s': %zu x %zu cells is too "
                        "many (at most %d)", map->title, map->nx, map->ny,
                        HEATMAP_MAX_CELLS);
    trd_status st = check_axis(map, "x", map->x, map->nx, map->logx);
    if (st == TRD_OK)
        st = check_axis(map, "y", map->y, map->ny, map->logy);
    if (st != TRD_OK)
        return st;
    size_t ncell = map->nx * map->ny;
    if (map->categories == NULL) {
        if (map->zlabel == NULL)
            return trd_fail(TRD_EINVAL, "heat map '%s': zlabel must not be "
                            "NULL (it labels the colour bar)", map->title);
        if (isinf(map->contour))
            return trd_fail(TRD_EINVAL, "heat map '%s': contour = %g: give "
                            "a finite level, or NaN for none", map->title,
                            map->contour);
        for (size_t k = 0; k < ncell; k++)
            if (!isfinite(map->z[k]))
                return trd_fail(TRD_EINVAL, "heat map '%s': z[%zu] = %g "
                                "(x[%zu], y[%zu]) is not finite", map->title,
                                k, map->z[k], k % map->nx, k / map->nx);
        return TRD_OK;
    }
    if (map->ncategories == 0 || map->ncategories > TRD_PLOT_NSERIES)
        return trd_fail(TRD_EINVAL, "heat map '%s' has %zu categories: it "
                        "draws 1 to %d (one distinct colour each)",
                        map->title, map->ncategories, TRD_PLOT_NSERIES);
    for (size_t c = 0; c < map->ncategories; c++)
        if (map->categories[c] == NULL)
            return trd_fail(TRD_EINVAL, "heat map '%s': categories[%zu] is "
                            "NULL", map->title, c);
    for (size_t k = 0; k < ncell; k++) {
        double v = map->z[k];
        if (!(v >= 0.0 && v < (double)map->ncategories && v == floor(v)))
            return trd_fail(TRD_EINVAL, "heat map '%s': z[%zu] = %g (x[%zu],"
                            " y[%zu]) is not a category index: an integer "
                            "in [0, %zu)", map->title, k, v, k % map->nx,
                            k / map->nx, map->ncategories);
    }
    return TRD_OK;
}

/* What the drawing needs: coordinates as plotted, colours, layout. */
typedef struct heat {
    bool categorical;
    double *owned;     /* one block for the arrays below */
    double *xc, *yc;   /* centres as plotted (log10 on a log axis) */
    double *xe, *ye;   /* nx + 1 and ny + 1 cell edges, as plotted */
    double *fz;        /* contour grid: z transposed, fz[i * ny + j] */
    const double **f;  /* its rows, f[i] = fz + i * ny */
    double zr[2];      /* colour scale: zr[0] at 0, zr[1] at 1 */
    bool diverging;    /* blue-white-red around the contour level */
    bool contour;      /* the contour line is drawn (it crosses the map) */
    /* layout, pixels */
    double right, top, bottom, vp_w, vp_h;
    trd_key key; /* categories, or the contour (legend.c) */
    trd_plot_labels lab;
    char zlabel[TRD_PLOT_LABEL_MAX];
} heat;

/* Edges e[0..n] of cells centred at c[0..n-1]: halfway between centres,
 * the outer ones half a step out; a lone cell gets a width of `lone`. */
static void cell_edges(const double *c, size_t n, double lone, double *e)
{
    if (n == 1) {
        e[0] = c[0] - 0.5 * lone;
        e[1] = c[0] + 0.5 * lone;
        return;
    }
    for (size_t i = 1; i < n; i++)
        e[i] = 0.5 * (c[i - 1] + c[i]);
    e[0] = c[0] - 0.5 * (c[1] - c[0]);
    e[n] = c[n - 1] + 0.5 * (c[n - 1] - c[n - 2]);
}

/* Centres as plotted and cell edges of one axis. */
static void axis_prepare(const double *c, size_t n, bool log, double *pc,
                         double *e)
{
    for (size_t i = 0; i < n; i++)
        pc[i] = log ? log10(c[i]) : c[i];
    double lone = log ? 1.0 : fabs(pc[0]) > 0.0 ? 0.2 * fabs(pc[0]) : 1.0;
    cell_edges(pc, n, lone, e);
}

static trd_status heat_prepare(const trd_heatmap *map, heat *H)
{
    size_t nx = map->nx, ny = map->ny, ncell = nx * ny;
    H->categorical = map->categories != NULL;
    H->f = NULL;
    size_t ndouble = 2 * (nx + ny) + 2 + (H->categorical ? 0 : ncell);
    H->owned = malloc(ndouble * sizeof *H->owned);
    if (H->owned == NULL)
        return trd_fail(TRD_ENOMEM, "heat map '%s': no memory for %zu x %zu "
                        "cells", map->title, nx, ny);
    H->xc = H->owned;
    H->yc = H->xc + nx;
    H->xe = H->yc + ny;
    H->ye = H->xe + nx + 1;
    H->fz = H->ye + ny + 1;
    axis_prepare(map->x, nx, map->logx, H->xc, H->xe);
    axis_prepare(map->y, ny, map->logy, H->yc, H->ye);
    H->diverging = H->contour = false;
    if (H->categorical)
        return TRD_OK;

    double lo = map->z[0], hi = map->z[0];
    for (size_t k = 1; k < ncell; k++) {
        lo = fmin(lo, map->z[k]);
        hi = fmax(hi, map->z[k]);
    }
    double level = map->contour;
    if (!isnan(level)) {
        double d = fmax(fabs(hi - level), fabs(lo - level));
        if (!(d > 0.0))
            d = fabs(level) > 0.0 ? 0.1 * fabs(level) : 1.0;
        H->zr[0] = level - d;
        H->zr[1] = level + d;
        H->diverging = true;
        H->contour = nx >= 2 && ny >= 2 && lo < hi && lo <= level &&
                     level <= hi;
    } else if (hi > lo) {
        H->zr[0] = lo;
        H->zr[1] = hi;
    } else {
        double pad = fabs(lo) > 0.0 ? 0.1 * fabs(lo) : 1.0;
        H->zr[0] = lo - pad;
        H->zr[1] = hi + pad;
    }
    if (!isfinite(H->zr[1] - H->zr[0])) {
        free(H->owned);
        return trd_fail(TRD_EINVAL, "heat map '%s': z spans [%g, %g], too "
                        "wide a range to draw", map->title, lo, hi);
    }
    if (H->contour) {
        H->f = malloc(nx * sizeof *H->f);
        if (H->f == NULL) {
            free(H->owned);
            return trd_fail(TRD_ENOMEM, "heat map '%s': no memory for its "
                            "contour", map->title);
        }
        for (size_t i = 0; i < nx; i++) {
            H->f[i] = H->fz + i * ny;
            for (size_t j = 0; j < ny; j++)
                H->fz[i * ny + j] = map->z[j * nx + i];
        }
    }
    return TRD_OK;
}

static void heat_free(heat *H)
{
    free(H->f);
    free(H->owned);
}

/* The key's entries (the categories present, or the contour), fitted
 * into the right margin, and its size. */
static void key_prepare(const trd_heatmap *map, heat *H)
{
    const char *texts[TRD_KEY_MAX];
    int colours[TRD_KEY_MAX];
    char contour[TRD_PLOT_LABEL_MAX];
    size_t n = 0;
    if (H->categorical) {
        bool present[TRD_PLOT_NSERIES] = {false};
        for (size_t k = 0; k < map->nx * map->ny; k++)
            present[(size_t)map->z[k]] = true;
        for (size_t c = 0; c < map->ncategories; c++)
            if (present[c]) {
                texts[n] = map->categories[c];
                colours[n++] = trd_plot_series_colour(c);
            }
    } else if (H->contour) {
        if (map->zlabel[0] != '\0')
            snprintf(contour, sizeof contour, "contour: %s = %g",
                     map->zlabel, map->contour);
        else
            snprintf(contour, sizeof contour, "contour at %g",
                     map->contour);
        texts[n] = contour;
        colours[n++] = TRD_PLOT_BLACK;
    }
    H->key.swatches = H->categorical;
    H->key.line_width = CONTOUR_WIDTH;
    H->key.px = TRD_PLOT_TEXT_PX;
    trd_key_layout(&H->key, texts, colours, n,
                   HEATMAP_MAX_RIGHT_PX - GAP_PX - TRD_PLOT_PAD_PX);
}

/* Margins, texts as drawn, and where the key goes. */
static void heat_layout(const trd_heatmap *map, heat *H)
{
    const double W = HEATMAP_WIDTH, Hp = HEATMAP_HEIGHT;
    key_prepare(map, H);
    /* the colour bar: bar, tick labels, rotated z label */
    double bar = H->categorical
                     ? 0.0
                     : BAR_W_PX + 0.5 * TRD_PLOT_TEXT_PX +
                           0.87 * TRD_PLOT_TEXT_PX * BAR_DIGITS +
                           1.8 * TRD_PLOT_TEXT_PX;
    H->right = round(GAP_PX + fmax(bar, H->key.w) + TRD_PLOT_PAD_PX);
    H->vp_w = W - HEATMAP_LEFT_PX - H->right;

    double centre = HEATMAP_LEFT_PX + 0.5 * H->vp_w;
    double avail = 2.0 * fmin(centre, W - centre) - 2.0 * TRD_PLOT_PAD_PX;
    double yr[2] = {H->ye[0], H->ye[map->ny]};
    bool yexp = !map->logy && trd_plot_y_exponent(yr);
    trd_plot_labels_fit(&H->lab, map->title,
                        yexp ? 2.0 * (0.5 * H->vp_w - TRD_PLOT_PAD_PX)
                             : avail,
                        yexp, map->xlabel,
                        map->logx ? H->vp_w : H->vp_w - 160.0, map->note,
                        avail);
    H->top = H->lab.top;
    H->bottom = round(H->lab.below + TRD_PLOT_PAD_PX);
    H->vp_h = Hp - H->top - H->bottom;
    trd_plot_labels_fit_y(&H->lab, map->ylabel, H->vp_h);
    H->zlabel[0] = '\0';
    if (!H->categorical)
        trd_plot_fit_text(map->zlabel, TRD_PLOT_TEXT_PX,
                          TRD_PLOT_MIN_TEXT_PX, 0.8 * H->vp_h, H->zlabel,
                          sizeof H->zlabel);
    /* the key: at the top of the right margin for categories, below the
     * colour bar for the contour */
    H->key.x = W - H->right + GAP_PX;
    H->key.top = H->categorical ? Hp - H->top : H->bottom + H->key.h;
}

/* Colour map 1: blue-white-red (diverging) or viridis (sequential). */
static void set_scale(const heat *H)
{
    static const PLFLT div_at[] = {0.0, 1 / 6.0, 2 / 6.0, 0.5,
                                   4 / 6.0, 5 / 6.0, 1.0};
    static const PLINT div_rgb[][3] = {
        {33, 102, 172},  {67, 147, 195}, {146, 197, 222}, {247, 247, 247},
        {244, 165, 130}, {214, 96, 77},  {178, 24, 43}};
    static const PLFLT seq_at[] = {0.0, 0.25, 0.5, 0.75, 1.0};
    static const PLINT seq_rgb[][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98},
        {253, 231, 37}};
    const PLFLT *at = H->diverging ? div_at : seq_at;
    const PLINT(*rgb)[3] = H->diverging ? div_rgb : seq_rgb;
    PLINT n = H->diverging ? 7 : 5;
    PLFLT r[7], g[7], b[7];
    for (PLINT i = 0; i < n; i++) {
        r[i] = rgb[i][0] / 255.0;
        g[i] = rgb[i][1] / 255.0;
        b[i] = rgb[i][2] / 255.0;
    }
    plscmap1n(256);
    plscmap1l(1, n, at, r, g, b, NULL);
}

/* Position of z on colour map 1. */
static double scale_at(const heat *H, double z)
{
    double v = (z - H->zr[0]) / (H->zr[1] - H->zr[0]);
    return fmin(1.0, fmax(0.0, v));
}

/* The cells: each reaches a pixel into its upper and right neighbours
 * (drawn after it), so anti-aliasing leaves no seams between cells; none
 * reaches past the plot area (PLplot's clipping of a polygon that holds
 * the whole plot area loses it). */
static void draw_cells(const trd_heatmap *map, const heat *H)
{
    size_t nx = map->nx, ny = map->ny;
    double ox = (H->xe[nx] - H->xe[0]) / H->vp_w;
    double oy = (H->ye[ny] - H->ye[0]) / H->vp_h;
    plpsty(0);
    for (size_t j = 0; j < ny; j++)
        for (size_t i = 0; i < nx; i++) {
            double z = map->z[j * nx + i];
            if (H->categorical)
                plcol0(trd_plot_series_colour((size_t)z));
            else
                plcol1(scale_at(H, z));
            double x0 = H->xe[i], y0 = H->ye[j];
            double x1 = i + 1 < nx ? H->xe[i + 1] + ox : H->xe[nx];
            double y1 = j + 1 < ny ? H->ye[j + 1] + oy : H->ye[ny];
            PLFLT px[4] = {x0, x1, x1, x0}, py[4] = {y0, y0, y1, y1};
            plfill(4, px, py);
        }
}

static void draw_contour(const trd_heatmap *map, const heat *H)
{
    PLcGrid grid = {.xg = H->xc, .yg = H->yc, .zg = NULL,
                    .nx = (PLINT)map->nx, .ny = (PLINT)map->ny, .nz = 0};
    PLFLT level = map->contour;
    plcol0(TRD_PLOT_BLACK);
    pllsty(1);
    plwidth(CONTOUR_WIDTH);
    plcont(H->f, (PLINT)map->nx, (PLINT)map->ny, 1, (PLINT)map->nx, 1,
           (PLINT)map->ny, &level, 1, pltr1, &grid);
    plwidth(1.0);
}

/* The colour bar right of the plot area: the scale from zr[0] (bottom) to
 * zr[1], its ticks and labels at the right, the z label beyond them, and
 * the contour level marked across it. */
static void draw_colour_bar(const trd_heatmap *map, const trd_plot *fig,
                            const heat *H)
{
    int left = (int)lround(HEATMAP_WIDTH - H->right + GAP_PX);
    int right = (int)lround(H->right - GAP_PX - BAR_W_PX);
    double bottom = H->bottom + (H->key.n > 0 ? H->key.h + GAP_PX : 0.0);
    trd_plot_viewport_px(fig, left, right, (int)lround(bottom),
                         (int)lround(H->top));
    plwind(0.0, 1.0, H->zr[0], H->zr[1]);
    /* strips of the scale, each reaching a pixel into the next (plgradient
     * would be simpler, but PLplot's cairo driver leaks its pattern) */
    double dz = (H->zr[1] - H->zr[0]) / BAR_STRIPS;
    double over = (H->zr[1] - H->zr[0]) / (HEATMAP_HEIGHT - H->top - bottom);
    plpsty(0);
    for (int k = 0; k < BAR_STRIPS; k++) {
        double z0 = H->zr[0] + k * dz;
        double z1 = k + 1 < BAR_STRIPS ? z0 + dz + over : H->zr[1];
        PLFLT px[4] = {0.0, 1.0, 1.0, 0.0}, py[4] = {z0, z0, z1, z1};
        plcol1((k + 0.5) / BAR_STRIPS);
        plfill(4, px, py);
    }
    if (H->diverging) {
        PLFLT lx[2] = {0.0, 1.0}, ly[2] = {map->contour, map->contour};
        plcol0(TRD_PLOT_BLACK);
        plwidth(CONTOUR_WIDTH);
        plline(2, lx, ly);
        plwidth(1.0);
    }
    plcol0(TRD_PLOT_BLACK);
    plbox("bc", 0.0, 0, "bcmtv", 0.0, 0);
    trd_plot_side_text(fig, "r",
                       trd_plot_ylabel_offset(right - TRD_PLOT_PAD_PX),
                       TRD_PLOT_TEXT_PX, H->zlabel);
}

trd_status trd_heatmap_write(const trd_heatmap *map, const char *path)
{
    trd_status st = heatmap_check(map);
    if (st != TRD_OK)
        return st;
    heat *H = malloc(sizeof *H);
    if (H == NULL)
        return trd_fail(TRD_ENOMEM, "heat map '%s': no memory for its "
                        "layout", map->title);
    st = heat_prepare(map, H);
    if (st != TRD_OK) {
        free(H);
        return st;
    }
    heat_layout(map, H);
    trd_plot fig;
    st = trd_plot_begin(&fig, path, HEATMAP_WIDTH, HEATMAP_HEIGHT);
    if (st == TRD_OK) {
        if (!H->categorical)
            set_scale(H);
        trd_plot_viewport_px(&fig, HEATMAP_LEFT_PX, (int)lround(H->right),
                             (int)lround(H->bottom), (int)lround(H->top));
        plwind(H->xe[0], H->xe[map->nx], H->ye[0], H->ye[map->ny]);
        draw_cells(map, H);
        if (H->contour)
            draw_contour(map, H);
        plcol0(TRD_PLOT_BLACK);
        plwidth(1.0);
        plbox(map->logx ? "bcnstl" : "bcnst", 0.0, 0,
              map->logy ? "bcnstlv" : "bcnstv", 0.0, 0);
        trd_plot_labels_draw(&fig, &H->lab, HEATMAP_LEFT_PX);
        if (!H->categorical)
            draw_colour_bar(map, &fig, H);
        trd_key_draw(&H->key, &fig, HEATMAP_WIDTH, HEATMAP_HEIGHT);
        st = trd_plot_end(&fig);
    }
    heat_free(H);
    free(H);
    return st;
}

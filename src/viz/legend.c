/* legend.c: the legends of the figures of src/viz (see legend.h): the line
 * plot's, placed in a corner of the plot area that no data meets (tested
 * in pixels against lines and bands) or in columns below it, and drawn by
 * pllegend; and the heat map's key, drawn row by row. */
#include "viz/legend.h"

#include <plplot/plplot.h>

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* Distances in pixels. */
#define SAMPLE_PX 40.0     /* line sample of a legend */
#define INSET_PX 10.0      /* legend from the plot area's corner */
#define MAX_BELOW 0.3      /* of the page's height, for a legend below */
#define BOX_SCALE 0.8      /* band sample height, in text heights */
#define KEY_PAD_PX 8.0     /* inside a key's frame */
#define KEY_LINE_PX 30.0   /* line sample of a key */
#define KEY_SWATCH_PX 16.0 /* swatch of a key (a square) */

double trd_legend_text_w(const char *const *texts, size_t n, double px)
{
    double w = 0.0;
    for (size_t s = 0; s < n; s++)
        w = fmax(w, trd_plot_text_width(texts[s], px));
    return w * TRD_PLOT_WIDTH_SAFETY + 2.0;
}

void trd_legend_fit_texts(const char *const *texts, size_t n, double px,
                          double room, char (*out)[TRD_PLOT_LABEL_MAX])
{
    for (size_t s = 0; s < n; s++)
        trd_plot_fit(texts[s], px * TRD_PLOT_WIDTH_SAFETY, room, out[s],
                     sizeof out[s]);
}

void trd_legend_init(trd_legend *lg, const char *const *texts, size_t n,
                     double page_w, double page_h)
{
    lg->texts = texts;
    lg->n = n < TRD_LEGEND_MAX ? n : TRD_LEGEND_MAX;
    lg->page_w = page_w;
    lg->page_h = page_h;
    lg->place = TRD_LEGEND_UPPER_RIGHT;
    lg->px = TRD_PLOT_TEXT_PX;
    lg->top = 0.0;
    lg->text_w = 0.0;
    lg->nrow = lg->ncol = 1;
}

/* Width in pixels of one pllegend "character width" at text height
 * text_px (which pllegend takes from the height, in normalised page units,
 * so it stretches with the page's aspect). */
static double char_w(const trd_legend *lg, double text_px)
{
    return text_px * lg->page_w / lg->page_h;
}

/* Legend size in pixels for ncol columns of nrow rows of text_w-wide text
 * of text height px (pllegend's own arithmetic). */
static void legend_size(const trd_legend *lg, double px, double text_w,
                        int nrow, int ncol, double *w, double *h)
{
    double cw = char_w(lg, px);
    double column = SAMPLE_PX + TRD_LEGEND_TEXT_GAP_PX + text_w;
    *w = 0.8 * cw + ncol * column + (ncol - 1) * 2.0 * cw;
    *h = nrow * TRD_LEGEND_ROW * px;
}

/* Sets the legend's place and size, and fits its texts. */
static void legend_set(trd_legend *lg, trd_legend_place place, double px,
                       double text_w, int nrow, int ncol)
{
    lg->place = place;
    lg->px = px;
    lg->text_w = text_w;
    lg->nrow = nrow;
    lg->ncol = ncol;
    trd_legend_fit_texts(lg->texts, lg->n, px, text_w, lg->text);
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

bool trd_legend_line_hits(const trd_legend_map *m, const double *x,
                          const double *y, size_t n, const double b[4])
{
    for (size_t k = 0; k < n; k++) {
        size_t k1 = k + 1 < n ? k + 1 : k;
        if (k1 == k && n > 1)
            break;
        if (segment_hits((x[k] - m->x0) * m->sx, (y[k] - m->y0) * m->sy,
                         (x[k1] - m->x0) * m->sx, (y[k1] - m->y0) * m->sy,
                         b))
            return true;
    }
    return false;
}

/* Whether the point (px, py) (pixels) lies inside the band between lo and
 * hi over [x[k], x[k+1]] for some k. */
static bool inside_band(const trd_legend_map *m, const double *x,
                        const double *lo, const double *hi, size_t n,
                        double px, double py)
{
    double u = m->x0 + px / m->sx, v = m->y0 + py / m->sy;
    for (size_t k = 0; k + 1 < n; k++) {
        double x0 = x[k], x1 = x[k + 1];
        if (!(fmin(x0, x1) <= u && u <= fmax(x0, x1)))
            continue;
        double t = x1 != x0 ? (u - x0) / (x1 - x0) : 0.0;
        double ylo = lo[k] + t * (lo[k + 1] - lo[k]);
        double yhi = hi[k] + t * (hi[k + 1] - hi[k]);
        if (ylo <= v && v <= yhi)
            return true;
    }
    return false;
}

bool trd_legend_band_hits(const trd_legend_map *m, const double *x,
                          const double *lo, const double *hi, size_t n,
                          const double b[4])
{
    /* the band meets the box when its edges cross it or the box lies
     * inside the band (the band's vertical ends are short: their
     * crossings are the edges' or show as a corner inside) */
    if (trd_legend_line_hits(m, x, lo, n, b) ||
        trd_legend_line_hits(m, x, hi, n, b))
        return true;
    for (int c = 0; c < 4; c++)
        if (inside_band(m, x, lo, hi, n, b[c & 1], b[2 + (c >> 1)]))
            return true;
    for (size_t k = 0; k < n; k += n > 1 ? n - 1 : 1)
        if (segment_hits((x[k] - m->x0) * m->sx, (lo[k] - m->y0) * m->sy,
                         (x[k] - m->x0) * m->sx, (hi[k] - m->y0) * m->sy,
                         b))
            return true;
    return false;
}

bool trd_legend_inside(trd_legend *lg, double vp_w, double vp_h, double pad,
                       trd_legend_covers *covers, const void *ctx)
{
    double px = TRD_PLOT_TEXT_PX;
    double text_w = trd_legend_text_w(lg->texts, lg->n, px), w = 0.0,
           h = 0.0;
    int ncol = 1, nrow = (int)lg->n;
    for (;; ncol++) {
        nrow = (int)((lg->n + (size_t)ncol - 1) / (size_t)ncol);
        legend_size(lg, px, text_w, nrow, ncol, &w, &h);
        if (h <= 0.4 * vp_h || (size_t)ncol >= lg->n)
            break;
    }
    if (h > 0.4 * vp_h || w > 0.7 * vp_w)
        return false;
    static const trd_legend_place corners[] = {
        TRD_LEGEND_UPPER_RIGHT, TRD_LEGEND_LOWER_RIGHT,
        TRD_LEGEND_UPPER_LEFT, TRD_LEGEND_LOWER_LEFT};
    for (size_t c = 0; c < sizeof corners / sizeof corners[0]; c++) {
        bool right = corners[c] == TRD_LEGEND_UPPER_RIGHT ||
                     corners[c] == TRD_LEGEND_LOWER_RIGHT;
        bool upper = corners[c] == TRD_LEGEND_UPPER_RIGHT ||
                     corners[c] == TRD_LEGEND_UPPER_LEFT;
        double x0 = right ? vp_w - INSET_PX - w : INSET_PX;
        double y0 = upper ? vp_h - INSET_PX - h : INSET_PX;
        double b[4] = {x0 - pad, x0 + w + pad, y0 - pad, y0 + h + pad};
        if (!covers(ctx, b)) {
            legend_set(lg, corners[c], px, text_w, nrow, ncol);
            return true;
        }
    }
    return false;
}

double trd_legend_below(trd_legend *lg, double top, double avail)
{
    size_t n = lg->n;
    double px = TRD_PLOT_TEXT_PX, text_w = 0.0, w, h;
    size_t ncol = 1;
    for (; px >= TRD_PLOT_MIN_TEXT_PX; px -= 1.0) {
        text_w = trd_legend_text_w(lg->texts, n, px);
        size_t max_rows = (size_t)(MAX_BELOW * lg->page_h /
                                   (TRD_LEGEND_ROW * px));
        max_rows = max_rows > 0 ? max_rows : 1;
        size_t need = (n + max_rows - 1) / max_rows;
        for (ncol = 1; ncol < n; ncol++) {
            legend_size(lg, px, text_w, 1, (int)ncol + 1, &w, &h);
            if (w > avail)
                break;
        }
        if (ncol >= need)
            break;
        ncol = need; /* at TRD_PLOT_MIN_TEXT_PX: texts get cut to fit */
    }
    px = fmax(px, TRD_PLOT_MIN_TEXT_PX);
    size_t nrow = (n + ncol - 1) / ncol;
    ncol = (n + nrow - 1) / nrow; /* balanced */
    legend_size(lg, px, 0.0, (int)nrow, (int)ncol, &w, &h);
    text_w = fmin(text_w, (avail - w) / (double)ncol);
    lg->top = top;
    legend_set(lg, TRD_LEGEND_BELOW, px, text_w, (int)nrow, (int)ncol);
    return h;
}

/* pllegend's position of the legend and its offsets x, y from there, in
 * fractions of the viewport of vp_w x vp_h pixels. */
static PLINT legend_position(const trd_legend *lg, double vp_w, double vp_h,
                             double *x, double *y)
{
    *x = INSET_PX / vp_w;
    *y = INSET_PX / vp_h;
    switch (lg->place) {
    case TRD_LEGEND_UPPER_RIGHT:
        return PL_POSITION_VIEWPORT | PL_POSITION_INSIDE |
               PL_POSITION_RIGHT | PL_POSITION_TOP;
    case TRD_LEGEND_LOWER_RIGHT:
        return PL_POSITION_VIEWPORT | PL_POSITION_INSIDE |
               PL_POSITION_RIGHT | PL_POSITION_BOTTOM;
    case TRD_LEGEND_UPPER_LEFT:
        return PL_POSITION_VIEWPORT | PL_POSITION_INSIDE |
               PL_POSITION_LEFT | PL_POSITION_TOP;
    case TRD_LEGEND_LOWER_LEFT:
        return PL_POSITION_VIEWPORT | PL_POSITION_INSIDE |
               PL_POSITION_LEFT | PL_POSITION_BOTTOM;
    case TRD_LEGEND_BELOW:
        break;
    }
    *x = 0.0;
    *y = lg->top / vp_h;
    return PL_POSITION_VIEWPORT | PL_POSITION_OUTSIDE | PL_POSITION_BOTTOM;
}

void trd_legend_draw(const trd_legend *lg, const trd_plot *fig, double vp_w,
                     double vp_h, const trd_legend_entry *entry,
                     double line_width, double marker_scale)
{
    enum { M = TRD_LEGEND_MAX };
    size_t n = lg->n;
    PLINT opt[M], colour[M], style[M], black[M], nsym[M], band[M], solid[M];
    PLFLT width[M], scale[M], box_scale[M], box_width[M];
    const char *text[M], *sym[M];
    for (size_t s = 0; s < n; s++) {
        const trd_legend_entry *e = &entry[s];
        text[s] = lg->text[s];
        opt[s] = PL_LEGEND_LINE | (e->marker != NULL ? PL_LEGEND_SYMBOL : 0) |
                 (e->band >= 0 ? PL_LEGEND_COLOR_BOX : 0);
        band[s] = e->band >= 0 ? e->band : TRD_PLOT_WHITE;
        solid[s] = 0;
        box_scale[s] = BOX_SCALE;
        box_width[s] = 0.0;
        colour[s] = e->colour;
        style[s] = e->style;
        black[s] = TRD_PLOT_BLACK;
        width[s] = line_width;
        scale[s] = marker_scale;
        nsym[s] = 1;
        sym[s] = e->marker != NULL ? e->marker : "";
    }
    double x, y;
    PLINT position = legend_position(lg, vp_w, vp_h, &x, &y);
    /* pllegend counts the text offset in "character widths" */
    double offset = TRD_LEGEND_TEXT_GAP_PX / char_w(lg, lg->px);
    PLFLT w, h;
    trd_plot_text_px(fig, lg->px);
    plwidth(1.0);
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             position, x, y, SAMPLE_PX / vp_w, TRD_PLOT_WHITE,
             TRD_PLOT_BLACK, 1, lg->nrow, lg->ncol, (PLINT)n, opt, offset,
             1.0, TRD_LEGEND_ROW, 0.0, black, text, band, solid, box_scale,
             box_width, colour, style, width, colour, scale, nsym, sym);
    trd_plot_text_px(fig, TRD_PLOT_TEXT_PX);
}

void trd_key_layout(trd_key *key, const char *const *texts,
                    const int *colours, size_t n, double max_w)
{
    double sample = key->swatches ? KEY_SWATCH_PX : KEY_LINE_PX;
    double fixed = 2.0 * KEY_PAD_PX + sample + TRD_LEGEND_TEXT_GAP_PX;
    double room = max_w - fixed;
    key->n = n < TRD_KEY_MAX ? n : TRD_KEY_MAX;
    for (size_t r = 0; r < key->n; r++)
        key->colour[r] = colours[r];
    trd_legend_fit_texts(texts, key->n, key->px, room, key->text);
    double text_w = fmin(trd_legend_text_w(texts, key->n, key->px), room);
    key->w = key->n > 0 ? fixed + text_w : 0.0;
    key->h = key->n > 0 ? (double)key->n * TRD_LEGEND_ROW * key->px +
                              2.0 * KEY_PAD_PX - 0.6 * key->px
                        : 0.0;
    key->x = key->top = 0.0;
}

/* The sample of row r of the key, centred at height yc, from xs; returns
 * where its text starts. */
static double key_sample(const trd_key *key, size_t r, double xs, double yc)
{
    if (key->swatches) {
        double h = 0.5 * KEY_SWATCH_PX;
        PLFLT sx[5] = {xs, xs + KEY_SWATCH_PX, xs + KEY_SWATCH_PX, xs, xs};
        PLFLT sy[5] = {yc - h, yc - h, yc + h, yc + h, yc - h};
        plcol0(key->colour[r]);
        plfill(4, sx, sy);
        plcol0(TRD_PLOT_BLACK);
        plline(5, sx, sy);
        return xs + KEY_SWATCH_PX + TRD_LEGEND_TEXT_GAP_PX;
    }
    PLFLT lx[2] = {xs, xs + KEY_LINE_PX}, ly[2] = {yc, yc};
    plcol0(key->colour[r]);
    plwidth(key->line_width);
    plline(2, lx, ly);
    plwidth(1.0);
    return xs + KEY_LINE_PX + TRD_LEGEND_TEXT_GAP_PX;
}

void trd_key_draw(const trd_key *key, const trd_plot *fig, double page_w,
                  double page_h)
{
    if (key->n == 0)
        return;
    plvpor(0.0, 1.0, 0.0, 1.0);
    plwind(0.0, page_w, 0.0, page_h);
    double x0 = key->x, x1 = x0 + key->w;
    double y1 = key->top, y0 = y1 - key->h;
    PLFLT bx[5] = {x0, x1, x1, x0, x0}, by[5] = {y0, y0, y1, y1, y0};
    plcol0(TRD_PLOT_WHITE);
    plfill(4, bx, by);
    plcol0(TRD_PLOT_BLACK);
    plwidth(1.0);
    plline(5, bx, by);
    trd_plot_text_px(fig, key->px);
    double row = TRD_LEGEND_ROW * key->px;
    for (size_t r = 0; r < key->n; r++) {
        double yc = y1 - KEY_PAD_PX - 0.5 * key->px - (double)r * row;
        double xt = key_sample(key, r, x0 + KEY_PAD_PX, yc);
        plcol0(TRD_PLOT_BLACK);
        plptex(xt, yc, 1.0, 0.0, 0.0, key->text[r]);
    }
    trd_plot_text_px(fig, TRD_PLOT_TEXT_PX);
}

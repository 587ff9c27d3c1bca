/* legend.h: internal to src/viz: the legends of the figures.  The line
 * plot's legend (trd_legend) is placed inside the plot area, in the first
 * corner that the caller's test finds free of data, else centred below the
 * plot area in as many columns as fit, and drawn by pllegend.  The heat
 * map's key (trd_key) sits at a place on the page that the caller chooses,
 * one row per entry: a colour swatch or a line sample, then its text.  Both
 * share the text arithmetic: texts too wide for their room are cut with an
 * ellipsis (escaped for PLplot). */
#ifndef TRD_VIZ_LEGEND_H
#define TRD_VIZ_LEGEND_H

#include "viz/plot.h"

#include <stdbool.h>
#include <stddef.h>

#define TRD_LEGEND_ROW 1.8         /* row spacing, in text heights */
#define TRD_LEGEND_TEXT_GAP_PX 8.0 /* between an entry's sample and text */

/* Widest estimated width of texts[0..n-1] at text height px, pixels, with
 * the safety factor of TRD_PLOT_WIDTH_SAFETY and 2 pixels to spare. */
double trd_legend_text_w(const char *const *texts, size_t n, double px);

/* Escapes texts[0..n-1] into out[0..n-1], each cut to fit `room` pixels at
 * text height px (trd_plot_fit, with the safety factor). */
void trd_legend_fit_texts(const char *const *texts, size_t n, double px,
                          double room, char (*out)[TRD_PLOT_LABEL_MAX]);

/* ---- The line plot's legend, drawn by pllegend ---- */

enum { TRD_LEGEND_MAX = 64 }; /* entries at most */

typedef enum trd_legend_place {
    TRD_LEGEND_UPPER_RIGHT,
    TRD_LEGEND_LOWER_RIGHT,
    TRD_LEGEND_UPPER_LEFT,
    TRD_LEGEND_LOWER_LEFT,
    TRD_LEGEND_BELOW
} trd_legend_place;

/* A legend as laid out; sizes in pixels. */
typedef struct trd_legend {
    const char *const *texts; /* its entries' texts, as given */
    size_t n;                 /* entries */
    double page_w, page_h;    /* pllegend's character widths follow the
                                 page's aspect */
    trd_legend_place place;
    double px;     /* text height */
    double top;    /* below: its top, below the plot area */
    double text_w; /* room of its texts */
    int nrow, ncol;
    char text[TRD_LEGEND_MAX][TRD_PLOT_LABEL_MAX]; /* texts as drawn */
} trd_legend;

/* How an entry is drawn: its line (colour, pllsty style), its marker (NULL:
 * none) and the colour of a band sample behind them (< 0: none). */
typedef struct trd_legend_entry {
    int colour;
    int style;
    const char *marker;
    int band;
} trd_legend_entry;

/* Starts a legend of the first min(n, TRD_LEGEND_MAX) of texts (kept, not
 * copied) on a page of page_w x page_h pixels. */
void trd_legend_init(trd_legend *lg, const char *const *texts, size_t n,
                     double page_w, double page_h);

/* Whether the box b = {x0, x1, y0, y1}, in pixels from the plot area's
 * lower left corner, meets any of the figure's data. */
typedef bool trd_legend_covers(const void *ctx, const double b[4]);

/* Plot coordinates to pixels from the plot area's lower left corner:
 * ((x - x0) * sx, (y - y0) * sy), for the tests below. */
typedef struct trd_legend_map {
    double x0, y0, sx, sy;
} trd_legend_map;

/* Whether the polyline through (x[k], y[k]), k < n (a point when n is 1),
 * meets the box b = {x0, x1, y0, y1} in pixels. */
bool trd_legend_line_hits(const trd_legend_map *m, const double *x,
                          const double *y, size_t n, const double b[4]);

/* Whether the band between lo[k] and hi[k] over x[k], k < n (x monotonic),
 * meets the box b in pixels: its edges or end bars cross it, or it holds a
 * corner of b. */
bool trd_legend_band_hits(const trd_legend_map *m, const double *x,
                          const double *lo, const double *hi, size_t n,
                          const double b[4]);

/* Places the legend inside the plot area of vp_w x vp_h pixels, at text
 * height TRD_PLOT_TEXT_PX in as few columns as keep it within 40% of the
 * height, in the first corner (upper right, lower right, upper left, lower
 * left) where the legend's box grown by pad pixels does not meet the data;
 * and fits its texts.  False (nothing set) when it is too big (over 70% of
 * the width) or no corner is free: it should go below. */
bool trd_legend_inside(trd_legend *lg, double vp_w, double vp_h, double pad,
                       trd_legend_covers *covers, const void *ctx);

/* Places the legend centred below the plot area, its top `top` pixels
 * below it, in as many columns (balanced) as fit a width of avail pixels,
 * with smaller text or cut texts when it would be taller than 30% of the
 * page; and fits its texts.  Returns its height in pixels. */
double trd_legend_below(trd_legend *lg, double top, double avail);

/* Draws the legend where it was placed, on an opaque white background in a
 * thin frame, its entries as in entry[0..n-1] with lines of line_width and
 * markers of marker_scale text heights; vp_w x vp_h: the current viewport
 * (the plot area) in pixels. */
void trd_legend_draw(const trd_legend *lg, const trd_plot *fig, double vp_w,
                     double vp_h, const trd_legend_entry *entry,
                     double line_width, double marker_scale);

/* ---- A key drawn row by row on the page ---- */

enum { TRD_KEY_MAX = TRD_PLOT_NSERIES }; /* entries at most */

/* A key: set swatches, line_width and px, then lay it out
 * (trd_key_layout), place it (x, top) and draw it. */
typedef struct trd_key {
    bool swatches;     /* samples: squares of their colour in a thin frame;
                          else lines of their colour */
    double line_width; /* of line samples */
    double px;         /* text height */
    size_t n;          /* entries */
    double w, h;       /* size, pixels (0 x 0 without entries) */
    double x, top;     /* its upper left corner, pixels from the page's
                          lower left corner */
    int colour[TRD_KEY_MAX];
    char text[TRD_KEY_MAX][TRD_PLOT_LABEL_MAX]; /* texts as drawn */
} trd_key;

/* Takes the min(n, TRD_KEY_MAX) entries texts[r] in colours[r], their texts
 * fitted so the key is at most max_w pixels wide, and sets its size. */
void trd_key_layout(trd_key *key, const char *const *texts,
                    const int *colours, size_t n, double max_w);

/* Draws the key (nothing without entries) on a page of page_w x page_h
 * pixels: a white box in a thin frame, one row per entry.  Leaves the
 * viewport on the whole page. */
void trd_key_draw(const trd_key *key, const trd_plot *fig, double page_w,
                  double page_h);

#endif

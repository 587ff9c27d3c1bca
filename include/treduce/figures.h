/* treduce/figures.h: figures (Gantt charts of plans, line plots, heat
 * maps), in libtreduce_figures: a program that draws none links
 * libtreduce alone. */
#ifndef TREDUCE_FIGURES_H
#define TREDUCE_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Figures ---- */

/* Draws the schedule like Figure 1 of canon-antoniu: one row per rank,
 * transfers and combines as bars over model time.  The format follows the
 * file name: .png or .svg.  Every figure needs PLplot's cairo driver
 * (plplot-driver-cairo): without it, TRD_EBACKEND saying so, and no file
 * written. */
trd_status trd_plan_write_gantt(const trd_plan *plan, const char *path);

/* Writes a line plot of `nseries` series of `npoints` points each against
 * one x column: y[s * npoints + k] is series s at x[k]; labels name the
 * axes, the series and the title.  Format from the file name (.png or
 * .svg).  Fields after series_labels are optional: a zero-initialised one
 * keeps the default. */
typedef struct trd_lineplot {
    const char *title;
    const char *xlabel;
    const char *ylabel;
    size_t nseries;
    size_t npoints;
    const double *x;
    const double *y;
    const char *const *series_labels;
    bool logx;        /* x axis in log10 scale (ticks labelled 10^k); every
                         x must then be > 0, else TRD_EINVAL naming the
                         index.  false: linear */
    bool logy;        /* y axis in log10 scale (ticks labelled 10^k); every
                         y, and every ylo and yhi when set, must then be
                         > 0, else TRD_EINVAL naming the index.  false:
                         linear */
    const char *note; /* one-line caption drawn small under the x axis
                         label (e.g. the command that made the figure);
                         NULL: none */
    const double *ylo; /* optional bands, laid out like y: series s is
                          drawn as a translucent band in its colour between
                          ylo[s * npoints + k] and yhi[s * npoints + k]
                          under the lines (and shown behind its legend
                          sample); the y range includes them.  Both NULL:
                          no bands; only one set, a value not finite, or
                          ylo > yhi: TRD_EINVAL naming the index */
    const double *yhi;
} trd_lineplot;
trd_status trd_lineplot_write(const trd_lineplot *plot, const char *path);

/* A map of z over a grid of cells (Figures 5 and 6 of benoit-canon-marchal):
 * x[0..nx) and y[0..ny) are the cell centres, strictly increasing (> 0 on
 * a log axis); z[j * nx + i] is the value at (x[i], y[j]).  Cell sides lie
 * halfway between centres (in log space on a log axis).  With `categories`
 * set, z holds category indices 0..ncategories-1 (integers;
 * 1 <= ncategories <= 10) drawn in the line plots' series colours, with a
 * key listing the categories that occur; zlabel and contour are ignored.
 * Otherwise z (finite) is drawn on a colour scale with a colour bar
 * labelled zlabel (not NULL; "" for none): if `contour` is not NaN, a
 * blue-white-red scale centred on it and the line z = contour in thick
 * black, named in a key "contour: <zlabel> = <contour>"; if NaN, a
 * sequential (viridis) scale.  Note that a zero-initialised contour is 0,
 * a level: set contour = NAN for none (an infinite one is TRD_EINVAL).
 * note: optional caption under the x label.  Format from the file name
 * (.png or .svg). */
typedef struct trd_heatmap {
    const char *title;
    const char *xlabel;
    const char *ylabel;
    const char *zlabel;
    const char *note;   /* optional caption, NULL for none */
    size_t nx, ny;
    const double *x, *y, *z;
    bool logx, logy;
    double contour;
    const char *const *categories;
    size_t ncategories;
} trd_heatmap;
trd_status trd_heatmap_write(const trd_heatmap *map, const char *path);

#ifdef __cplusplus
}
#endif
#endif

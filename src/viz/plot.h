/* plot.h: internal helpers shared by the PLplot figures of src/viz: the
 * device chosen from the file name, the checks made before PLplot gets a
 * chance to prompt on stdin or exit(), a private plot stream with a white
 * background and a fixed palette, and its orderly end.
 *
 * Usage (every figure follows it):
 *
 *     trd_plot plot;
 *     trd_status st = trd_plot_begin(&plot, path, 1000, 650);
 *     if (st != TRD_OK)
 *         return st;              // nothing is open, nothing to end
 *     ... plvpor / plwind / plbox / plline ... on the current stream ...
 *     return trd_plot_end(&plot); // always, on every path after begin
 *
 * PLplot keeps process-wide state and is not thread-safe: begin takes a
 * process-wide lock that end releases, so figures drawn from several
 * threads are serialised.  Between begin and end the figure is the current
 * PLplot stream; end restores the stream that was current before. */
#ifndef TRD_VIZ_PLOT_H
#define TRD_VIZ_PLOT_H

#include "treduce/treduce.h"

#include <stdbool.h>

/* Colour map 0 of every figure (set before plinit). */
enum trd_plot_colour {
    TRD_PLOT_WHITE = 0,  /* background */
    TRD_PLOT_BLACK = 1,  /* axes, text, outlines */
    TRD_PLOT_LIGHT = 2,  /* light grey, for grid lines */
    TRD_PLOT_SERIES = 3, /* first of TRD_PLOT_NSERIES distinct colours
                            (blue, orange, green, red, purple, brown, pink,
                            grey, olive, cyan) */
    TRD_PLOT_NSERIES = 10,
    TRD_PLOT_BAND = TRD_PLOT_SERIES + TRD_PLOT_NSERIES /* first of NSERIES
                            translucent copies of the series colours (alpha
                            TRD_PLOT_BAND_ALPHA), for bands under lines */
};
#define TRD_PLOT_BAND_ALPHA 0.2

/* Index in colour map 0 of series colour k (cycles after NSERIES). */
int trd_plot_series_colour(size_t k);

/* Index in colour map 0 of the translucent band colour of series k. */
int trd_plot_band_colour(size_t k);

/* Copies text into out (of `size` bytes, truncating) with PLplot's text
 * escape character '#' doubled, so user text is drawn literally. */
void trd_plot_escape(const char *text, char *out, size_t size);

/* Estimated width in pixels of UTF-8 `text` (as given, before escaping)
 * drawn at a text height of px pixels.  PLplot has no public text metric:
 * this uses the advances of the ASCII characters in the font of the cairo
 * devices, and counts any other character as a wide one. */
double trd_plot_text_width(const char *text, double px);

/* trd_plot_escape, except that text whose estimated width at px exceeds
 * max_width pixels is cut at a character boundary and ended with an
 * ellipsis so that it fits. */
void trd_plot_fit(const char *text, double px, double max_width, char *out,
                  size_t size);

/* An open figure.  Fields are private to plot.c. */
typedef struct trd_plot {
    const char *path;
    int32_t prev_stream; /* PLplot stream current before begin */
    int32_t stream;      /* the figure's own stream */
    int width, height;   /* page size in pixels */
    int32_t errcode;     /* set by PLplot when it aborts an operation */
    char errmsg[1024];   /* PLplot's message then */
} trd_plot;

/* Device for path from its extension: "pngcairo" for .png, "svgcairo" for
 * .svg (case-insensitive).  TRD_EINVAL naming the path otherwise, and for
 * names PLplot would rewrite ("%n", "-"). */
trd_status trd_plot_device(const char *path, const char **device);

/* TRD_EIO with strerror when path cannot be created/truncated for writing
 * (checked with fopen "wb"; the file is left empty). */
trd_status trd_plot_check_writable(const char *path);

/* Validates path (above), checks that PLplot has the device, opens a new
 * stream of width x height pixels writing to path with a white background
 * and the palette of trd_plot_colour, initialises it and advances to its
 * only page, with colour TRD_PLOT_BLACK, a thin pen, text of
 * TRD_PLOT_TEXT_PX pixels and visible ticks.  On failure nothing stays
 * open (no end needed) and the previous stream is current again. */
trd_status trd_plot_begin(trd_plot *plot, const char *path, int width,
                          int height);

/* Closes the figure's stream (writing the file), makes the previous stream
 * current again and releases the lock.  TRD_EBACKEND when PLplot aborted an
 * operation meanwhile, TRD_EIO when the file came out empty. */
trd_status trd_plot_end(trd_plot *plot);

/* Height of text in pixels that begin sets (PLplot would otherwise scale
 * text with the page size). */
#define TRD_PLOT_TEXT_PX 15.0

/* Sets the height of the text drawn next to `px` pixels. */
void trd_plot_text_px(const trd_plot *plot, double px);

/* Tick marks of the axes drawn next: the usual fixed pixel lengths that
 * begin sets (visible), or none (so plbox writes labels without ticks). */
void trd_plot_ticks(const trd_plot *plot, bool visible);

/* Sets the viewport from margins in pixels of the figure's page (so the
 * room for labels neither shrinks nor grows with the page size). */
void trd_plot_viewport_px(const trd_plot *plot, int left, int right,
                          int bottom, int top);

/* ---- Texts around a plot area ---- */

/* Factor applied to estimated text widths, so that texts fitted to a room
 * fit it also where the estimate is a little short. */
#define TRD_PLOT_WIDTH_SAFETY 1.05
#define TRD_PLOT_TITLE_PX 18.0    /* title text height, pixels */
#define TRD_PLOT_NOTE_PX 11.0     /* caption text height */
#define TRD_PLOT_MIN_TEXT_PX 10.0 /* long texts shrink down to this, then
                                     get cut */
#define TRD_PLOT_MIN_NOTE_PX 9.0
#define TRD_PLOT_XLABEL_PX 48.0   /* x label's middle below the plot area */
#define TRD_PLOT_PAD_PX 10.0      /* between texts and the page's edges */
enum { TRD_PLOT_LABEL_MAX = 256 }; /* bytes of a text drawn */

/* Fits text into max_w pixels: at px if it fits, else smaller down to
 * min_px, else cut with an ellipsis; escaped into out.  Returns the text
 * height to draw it at. */
double trd_plot_fit_text(const char *text, double px, double min_px,
                         double max_w, char *out, size_t size);

/* Writes text centred along a side of the plot area ("t", "b", "l", "r"),
 * its middle `offset` pixels out from that side, at text height px (then
 * back to TRD_PLOT_TEXT_PX). */
void trd_plot_side_text(const trd_plot *plot, const char *side,
                        double offset, double px, const char *text);

/* Whether plbox will scale the labels of a linear y axis over yr and write
 * "(x10^k)" above the top left corner of the plot area, up to 60 pixels
 * up: the test of PLplot's pldprec (not public) with the y axis' default
 * digmax of 4, and a tick guessed small (a tenth of the range), so it errs
 * towards true. */
bool trd_plot_y_exponent(const double yr[2]);

/* Title, axis labels and optional one-line caption of a plot area, as
 * fitted to their room (escaped) and where they go. */
typedef struct trd_plot_labels {
    char title[TRD_PLOT_LABEL_MAX];
    char xlabel[TRD_PLOT_LABEL_MAX];
    char ylabel[TRD_PLOT_LABEL_MAX];
    char note[TRD_PLOT_LABEL_MAX]; /* "" when none */
    double title_px, note_px;      /* their text heights */
    double note_centre; /* the caption's middle, pixels below the plot area */
    double top;    /* pixels the title needs above the plot area */
    double below;  /* pixels the x label and caption take below it */
} trd_plot_labels;

/* Fits the title into title_w pixels (leaving room above the plot area for
 * a "(x10^k)" of the y axis when yexp), the x label into xlabel_w and the
 * note (NULL or "": none) into note_w.  The y label is fitted later, once
 * the plot area's height is known (trd_plot_labels_fit_y). */
void trd_plot_labels_fit(trd_plot_labels *lab, const char *title,
                         double title_w, bool yexp, const char *xlabel,
                         double xlabel_w, const char *note, double note_w);

/* Fits the y label into the plot area's height vp_h, pixels. */
void trd_plot_labels_fit_y(trd_plot_labels *lab, const char *ylabel,
                           double vp_h);

/* Pixels from the left side of the plot area to the middle of the y label,
 * just outside the widest tick label that the last plbox wrote, but at
 * most within a left margin of left_px. */
double trd_plot_ylabel_offset(double left_px);

/* Draws the texts around the current viewport; call after its plbox (the
 * y label goes outside its tick labels); left_px: the left margin. */
void trd_plot_labels_draw(const trd_plot *plot, const trd_plot_labels *lab,
                          double left_px);

#endif

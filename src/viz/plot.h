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
    TRD_PLOT_NSERIES = 10
};

/* Index in colour map 0 of series colour k (cycles after NSERIES). */
int trd_plot_series_colour(size_t k);

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

#endif

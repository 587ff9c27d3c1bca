/* plot.c: what every PLplot figure of treduce shares.  PLplot prompts on
 * stdin for a missing device or an unopenable file and calls exit() on some
 * errors, so everything it could trip on is checked before plinit: the
 * extension picks the device, the device's driver must be installed and
 * loadable, and only then is the file opened for writing (a figure that
 * cannot be drawn leaves no file).  Each figure gets its own stream
 * (plmkstrm), so a caller's stream is left alone, and PLplot's abort
 * messages go to the figure (plsError) instead of stderr.  A process-wide
 * lock serialises figures, since PLplot is not thread-safe. */
#include "viz/plot.h"

#include "core/error.h"

#include <plplot/plplot.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

_Static_assert(sizeof(PLINT) == sizeof(int32_t), "PLINT is 32-bit");

static once_flag lock_once = ONCE_FLAG_INIT;
static mtx_t lock;
static bool lock_ready;

static void lock_init(void)
{
    lock_ready = mtx_init(&lock, mtx_plain) == thrd_success;
}

static trd_status plot_lock(void)
{
    call_once(&lock_once, lock_init);
    if (!lock_ready || mtx_lock(&lock) != thrd_success)
        return trd_fail(TRD_EBACKEND, "cannot take the lock that serialises "
                                      "PLplot figures");
    return TRD_OK;
}

static void plot_unlock(void)
{
    mtx_unlock(&lock);
}

/* Whether `name` ends with `ext` (a lower-case ".xyz"), ignoring case. */
static bool has_extension(const char *name, const char *ext)
{
    size_t n = strlen(name), m = strlen(ext);
    if (n <= m)
        return false;
    for (size_t i = 0; i < m; i++) {
        char c = name[n - m + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != ext[i])
            return false;
    }
    return true;
}

trd_status trd_plot_device(const char *path, const char **device)
{
    if (path == NULL || device == NULL)
        return trd_fail(TRD_EINVAL, "figure path is NULL");
    if (strstr(path, "%n") != NULL)
        return trd_fail(TRD_EINVAL, "figure path '%s' contains \"%%n\", "
                        "which PLplot would replace", path);
    if (has_extension(path, ".png"))
        *device = "pngcairo";
    else if (has_extension(path, ".svg"))
        *device = "svgcairo";
    else
        return trd_fail(TRD_EINVAL, "figure path '%s' has an unsupported "
                        "extension: use .png or .svg", path);
    return TRD_OK;
}

trd_status trd_plot_check_writable(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return trd_fail(TRD_EIO, "cannot write %s: %s", path, strerror(errno));
    if (fclose(f) != 0)
        return trd_fail(TRD_EIO, "cannot write %s: %s", path, strerror(errno));
    return TRD_OK;
}

/* Whether the driver of `device` (pngcairo, svgcairo: PLplot's cairo
 * driver, Debian's plplot-driver-cairo) is installed.  PLplot loads its
 * drivers from a folder (PLPLOT_DRV_DIR, else the one it was built with),
 * the devices listed in each driver's .driver_info, and exits the process
 * when that folder has no driver at all (plgDevs, plinit): so the folder is
 * read here first.  A PLplot without that folder (static drivers) is left
 * to device_available. */
static trd_status check_driver(const char *device, const char *path)
{
#ifdef TRD_PLPLOT_DRV_DIR
    const char *dir = getenv("PLPLOT_DRV_DIR");
    if (dir == NULL || *dir == '\0')
        dir = TRD_PLPLOT_DRV_DIR;
    char info[4096], module[4096], line[256];
    snprintf(info, sizeof info, "%s/cairo.driver_info", dir);
    snprintf(module, sizeof module, "%s/cairo.so", dir);
    size_t n = strlen(device);
    bool listed = false;
    FILE *f = fopen(info, "r");
    while (f != NULL && !listed && fgets(line, sizeof line, f) != NULL)
        listed = strncmp(line, device, n) == 0 && line[n] == ':';
    if (f != NULL)
        fclose(f);
    if (!listed || access(module, R_OK) != 0)
        return trd_fail(TRD_EBACKEND, "cannot draw %s: PLplot's %s device is not "
                        "installed (%s %s; on Debian: apt-get install "
                        "plplot-driver-cairo)", path, device, listed ? module : info,
                        listed ? "is missing" : "does not list it");
#else
    (void)device;
    (void)path;
#endif
    return TRD_OK;
}

/* Whether PLplot can load `device` (else plinit would prompt on stdin). */
static bool device_available(const char *device)
{
    enum { MAX_DEVICES = 128 };
    const char *menu[MAX_DEVICES] = {0}, *names[MAX_DEVICES] = {0};
    const char **pmenu = menu, **pnames = names;
    int ndev = MAX_DEVICES;
    plgDevs(&pmenu, &pnames, &ndev);
    for (int i = 0; i < ndev && i < MAX_DEVICES; i++)
        if (names[i] != NULL && strcmp(names[i], device) == 0)
            return true;
    return false;
}

/* White background, black foreground, light grey, then the ten series
 * colours (the "tab10" palette of matplotlib, readable in print and by most
 * colour-blind readers), then the same ten translucent, for bands. */
static void set_palette(void)
{
    static const PLINT rgb[TRD_PLOT_SERIES + TRD_PLOT_NSERIES][3] = {
        {255, 255, 255}, {0, 0, 0},       {220, 220, 220},
        {31, 119, 180},  {255, 127, 14},
        {44, 160, 44},   {214, 39, 40},   {148, 103, 189}, {140, 86, 75},
        {227, 119, 194}, {127, 127, 127}, {188, 189, 34},  {23, 190, 207},
    };
    PLINT n = (PLINT)(sizeof rgb / sizeof rgb[0]);
    plscmap0n(n + TRD_PLOT_NSERIES);
    for (PLINT i = 0; i < n; i++)
        plscol0(i, rgb[i][0], rgb[i][1], rgb[i][2]);
    for (PLINT k = 0; k < TRD_PLOT_NSERIES; k++) {
        const PLINT *c = rgb[TRD_PLOT_SERIES + k];
        plscol0a(TRD_PLOT_BAND + k, c[0], c[1], c[2], TRD_PLOT_BAND_ALPHA);
    }
    plscolbg(255, 255, 255);
}

int trd_plot_series_colour(size_t k)
{
    return TRD_PLOT_SERIES + (int)(k % TRD_PLOT_NSERIES);
}

int trd_plot_band_colour(size_t k)
{
    return TRD_PLOT_BAND + (int)(k % TRD_PLOT_NSERIES);
}

/* PLplot's abort message without its trailing newlines. */
static const char *plplot_message(trd_plot *plot)
{
    size_t len = strlen(plot->errmsg);
    while (len > 0 && plot->errmsg[len - 1] == '\n')
        plot->errmsg[--len] = '\0';
    return plot->errmsg;
}

/* Ends the figure's stream and makes the previous one current again. */
static void close_stream(const trd_plot *plot)
{
    plend1(); /* frees the stream; PLplot switches to stream 0 */
    plsstrm(plot->prev_stream);
}

/* Bytes of the UTF-8 character that starts with byte c (1 if invalid). */
static size_t utf8_length(unsigned char c)
{
    if (c >= 0xF0 && c < 0xF8)
        return 4;
    if (c >= 0xE0)
        return c < 0xF0 ? 3 : 1;
    if (c >= 0xC0)
        return 2;
    return 1;
}

void trd_plot_escape(const char *text, char *out, size_t size)
{
    size_t j = 0;
    if (size == 0)
        return;
    for (size_t i = 0; text != NULL && text[i] != '\0';) {
        size_t len = utf8_length((unsigned char)text[i]);
        size_t k = 1;
        while (k < len && text[i + k] != '\0')
            k++;
        if (j + k + (text[i] == '#') >= size)
            break; /* never cut a character in two */
        if (text[i] == '#')
            out[j++] = '#';
        memcpy(out + j, text + i, k);
        j += k;
        i += k;
    }
    out[j] = '\0';
}

/* Advance widths in pixels of ASCII ' ' to '~' at a text height of
 * TRD_PLOT_TEXT_PX, as PLplot's cairo devices draw them (DejaVu Sans, the
 * "sans" font; measured with pllegend, which gets widths from the driver). */
static const unsigned char ascii_px[95] = {
    6,  8,  9,  17, 13, 19, 16, 5,  8,  8,  10, 17, 6,  7,  6,  7,
    13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 7,  7,  17, 17, 17, 11,
    20, 14, 14, 14, 15, 13, 12, 15, 15, 6,  6,  13, 11, 17, 15, 16,
    12, 16, 14, 13, 12, 15, 14, 20, 14, 12, 14, 8,  7,  8,  17, 10,
    10, 12, 13, 11, 13, 12, 7,  13, 13, 6,  6,  12, 6,  19, 13, 12,
    13, 13, 8,  10, 8,  13, 12, 16, 12, 12, 10, 13, 7,  13, 17};

/* Bytes (at most len, at least 1) of the character at text[0]. */
static size_t char_bytes(const char *text)
{
    size_t len = utf8_length((unsigned char)text[0]), k = 1;
    while (k < len && text[k] != '\0')
        k++;
    return k;
}

/* Width in pixels of the character at text[0] (of k bytes) at text height
 * px; a character outside ASCII counts as a wide one. */
static double char_width(const char *text, size_t k, double px)
{
    unsigned char c = (unsigned char)text[0];
    double w = k == 1 && c >= 32 && c < 127 ? ascii_px[c - 32] : 17.0;
    return w * px / TRD_PLOT_TEXT_PX;
}

double trd_plot_text_width(const char *text, double px)
{
    double w = 0.0;
    for (size_t i = 0; text != NULL && text[i] != '\0';) {
        size_t k = char_bytes(text + i);
        w += char_width(text + i, k, px);
        i += k;
    }
    return w;
}

void trd_plot_fit(const char *text, double px, double max_width, char *out,
                  size_t size)
{
    static const char ellipsis[] = "\u2026";
    if (size == 0)
        return;
    out[0] = '\0';
    if (text == NULL)
        return;
    bool whole = trd_plot_text_width(text, px) <= max_width;
    double room = whole ? max_width : max_width -
                  trd_plot_text_width(ellipsis, px);
    size_t reserve = whole ? 1 : sizeof ellipsis; /* for '\0' (+ ellipsis) */
    size_t i = 0, j = 0;
    double w = 0.0;
    while (text[i] != '\0') {
        size_t k = char_bytes(text + i), esc = text[i] == '#';
        double cw = char_width(text + i, k, px);
        if (w + cw > room || j + esc + k + reserve > size)
            break;
        if (esc)
            out[j++] = '#';
        memcpy(out + j, text + i, k);
        j += k;
        i += k;
        w += cw;
    }
    if (text[i] != '\0' && j + sizeof ellipsis <= size) {
        memcpy(out + j, ellipsis, sizeof ellipsis - 1);
        j += sizeof ellipsis - 1;
    }
    out[j] = '\0';
}

/* Opens the stream once the checks passed; the lock is held. */
static trd_status open_stream(trd_plot *plot, const char *device)
{
    PLINT prev = 0, strm = -1;
    plgstrm(&prev);
    plot->prev_stream = prev;
    plmkstrm(&strm);
    if (strm < 0) {
        plsstrm(prev);
        return trd_fail(TRD_EBACKEND, "PLplot cannot open another stream");
    }
    plot->stream = strm;
    plot->errcode = 0;
    plot->errmsg[0] = '\0';
    plsError(&plot->errcode, plot->errmsg);
    plsdev(device);
    plsfnam(plot->path);
    plspage(0.0, 0.0, plot->width, plot->height, 0, 0);
    set_palette();
    plinit();
    if (plot->errcode != 0) {
        close_stream(plot);
        return trd_fail(TRD_EBACKEND, "PLplot cannot start %s on %s: %s",
                        device, plot->path, plplot_message(plot));
    }
    pladv(0);
    plcol0(TRD_PLOT_BLACK);
    plwidth(1.0);
    trd_plot_text_px(plot, TRD_PLOT_TEXT_PX);
    trd_plot_ticks(plot, true);
    return TRD_OK;
}

trd_status trd_plot_begin(trd_plot *plot, const char *path, int width,
                          int height)
{
    const char *device = NULL;
    trd_status st = trd_plot_device(path, &device);
    if (st != TRD_OK)
        return st;
    if (plot == NULL || width < 1 || height < 1)
        return trd_fail(TRD_EINVAL, "bad figure for %s: %d x %d pixels",
                        path, width, height);
    st = check_driver(device, path);
    if (st != TRD_OK)
        return st;
    st = plot_lock();
    if (st != TRD_OK)
        return st;
    if (!device_available(device))
        st = trd_fail(TRD_EBACKEND, "PLplot has no %s device for %s "
                      "(is plplot-driver-cairo installed?)", device, path);
    else
        st = trd_plot_check_writable(path);
    if (st != TRD_OK) {
        plot_unlock();
        return st;
    }
    plot->path = path;
    plot->width = width;
    plot->height = height;
    st = open_stream(plot, device);
    if (st != TRD_OK)
        plot_unlock();
    return st;
}

/* Size of the file at path, or -1 when it cannot be read. */
static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    fclose(f);
    return size;
}

trd_status trd_plot_end(trd_plot *plot)
{
    close_stream(plot);
    plot_unlock();
    if (plot->errcode != 0)
        return trd_fail(TRD_EBACKEND, "PLplot failed drawing %s: %s",
                        plot->path, plplot_message(plot));
    if (file_size(plot->path) <= 0)
        return trd_fail(TRD_EIO, "PLplot wrote nothing to %s", plot->path);
    return TRD_OK;
}

void trd_plot_viewport_px(const trd_plot *plot, int left, int right,
                          int bottom, int top)
{
    double w = plot->width, h = plot->height;
    plvpor(left / w, 1.0 - right / w, bottom / h, 1.0 - top / h);
}

/* Millimetres PLplot gives to `px` pixels of the figure's page. */
static double px_to_mm(const trd_plot *plot, double px)
{
    PLFLT x0, x1, y0, y1;
    plgspa(&x0, &x1, &y0, &y1); /* page in mm */
    return px * (x1 - x0) / plot->width;
}

void trd_plot_text_px(const trd_plot *plot, double px)
{
    plschr(px_to_mm(plot, px), 1.0);
}

void trd_plot_ticks(const trd_plot *plot, bool visible)
{
    if (visible) {
        plsmaj(px_to_mm(plot, 9.0), 1.0);
        plsmin(px_to_mm(plot, 5.0), 1.0);
    } else { /* a length of 0 would mean "keep the default" */
        plsmaj(0.0, 0.0);
        plsmin(0.0, 0.0);
    }
}

double trd_plot_fit_text(const char *text, double px, double min_px,
                         double max_w, char *out, size_t size)
{
    double w = trd_plot_text_width(text, px) * TRD_PLOT_WIDTH_SAFETY;
    if (w > max_w)
        px = fmax(min_px, 0.999 * px * max_w / w);
    trd_plot_fit(text, px * TRD_PLOT_WIDTH_SAFETY, max_w, out, size);
    return px;
}

void trd_plot_side_text(const trd_plot *plot, const char *side,
                        double offset, double px, const char *text)
{
    trd_plot_text_px(plot, px);
    plmtex(side, offset / px, 0.5, 0.5, text);
    trd_plot_text_px(plot, TRD_PLOT_TEXT_PX);
}

bool trd_plot_y_exponent(const double yr[2])
{
    const int digmax = 4;
    double chosen = fabs(yr[1]) >= fabs(yr[0]) ? yr[1] : yr[0];
    double other = fabs(yr[1]) >= fabs(yr[0]) ? yr[0] : yr[1];
    double t0 = log10(fabs(chosen) > 0.0 ? fabs(chosen) : 1.0);
    int msd = (int)floor(t0);
    int other_msd = fabs(other) > 0.0 ? (int)floor(log10(fabs(other))) : msd;
    int digmin = msd >= 0 ? msd + 1 : -msd + 2;
    if (chosen < 0.0 || (other < 0.0 && (other_msd == msd || msd <= 0)))
        digmin++;
    if (digmin > digmax)
        return true;
    int np = (int)floor(log10((yr[1] - yr[0]) / 10.0));
    return t0 < 0.0 && digmax - 2 - (np < 0 ? -np : 0) < 0;
}

void trd_plot_labels_fit(trd_plot_labels *lab, const char *title,
                         double title_w, bool yexp, const char *xlabel,
                         double xlabel_w, const char *note, double note_w)
{
    lab->title_px = trd_plot_fit_text(title, TRD_PLOT_TITLE_PX,
                                      TRD_PLOT_MIN_TEXT_PX, title_w,
                                      lab->title, sizeof lab->title);
    lab->top = round(fmax(1.8 * lab->title_px + 12.0, yexp ? 72.0 : 0.0));
    trd_plot_fit_text(xlabel, TRD_PLOT_TEXT_PX, TRD_PLOT_TEXT_PX, xlabel_w,
                      lab->xlabel, sizeof lab->xlabel);
    lab->ylabel[0] = '\0';
    lab->below = TRD_PLOT_XLABEL_PX + 0.6 * TRD_PLOT_TEXT_PX;
    lab->note[0] = '\0';
    lab->note_px = TRD_PLOT_NOTE_PX;
    lab->note_centre = 0.0;
    if (note != NULL && note[0] != '\0') {
        lab->note_px = trd_plot_fit_text(note, TRD_PLOT_NOTE_PX,
                                         TRD_PLOT_MIN_NOTE_PX, note_w,
                                         lab->note, sizeof lab->note);
        lab->note_centre = lab->below + 6.0 + 0.5 * lab->note_px;
        lab->below = lab->note_centre + 0.6 * lab->note_px;
    }
}

void trd_plot_labels_fit_y(trd_plot_labels *lab, const char *ylabel,
                           double vp_h)
{
    trd_plot_fit_text(ylabel, TRD_PLOT_TEXT_PX, TRD_PLOT_MIN_TEXT_PX, vp_h,
                      lab->ylabel, sizeof lab->ylabel);
}

double trd_plot_ylabel_offset(double left_px)
{
    /* digits: the length of the widest y tick label, as plbox wrote it */
    PLINT digmax = 0, digits = 0;
    plgyax(&digmax, &digits);
    double offset = 0.5 * TRD_PLOT_TEXT_PX + 0.87 * TRD_PLOT_TEXT_PX *
                    (digits > 0 ? digits : 4) + 1.2 * TRD_PLOT_TEXT_PX;
    return fmin(offset, left_px - TRD_PLOT_PAD_PX - 0.6 * TRD_PLOT_TEXT_PX);
}

void trd_plot_labels_draw(const trd_plot *plot, const trd_plot_labels *lab,
                          double left_px)
{
    plcol0(TRD_PLOT_BLACK);
    trd_plot_side_text(plot, "l", trd_plot_ylabel_offset(left_px),
                       TRD_PLOT_TEXT_PX, lab->ylabel);
    trd_plot_side_text(plot, "b", TRD_PLOT_XLABEL_PX, TRD_PLOT_TEXT_PX,
                       lab->xlabel);
    if (lab->note[0] != '\0')
        trd_plot_side_text(plot, "b", lab->note_centre, lab->note_px,
                           lab->note);
    trd_plot_side_text(plot, "t", 1.2 * lab->title_px, lab->title_px,
                       lab->title);
}

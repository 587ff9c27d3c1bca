/* profile_file.c: a platform profile as a JSON file (docs/RUNTIME.md,
 * "Profiles"), what `treduce calibrate --out` writes and `treduce run
 * --profile` reads:
 *
 *   {"treduce_profile": 2, "wire": "threads", "p": 2, "op": "sum",
 *    "type": "double", "elem_size": 8, "latency_s": 6.3e-5, ...,
 *    "stream_bandwidth_Bps": [9.1e9, 1.3e10]}
 *
 * The reader is as strict as the platform files': every key known, every
 * value of its type and range, the first problem named with its key (or
 * line, for malformed JSON).  Keys that only restate another value
 * (bandwidth_GBps) must agree with it, so that editing the wrong one is an
 * error rather than silently ignored.  The wire was once called the
 * transport: "transport" is read as "wire"'s older name, in the files
 * written before the rename and in `treduce calibrate`'s report, which
 * keeps both. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "model/node.h"
#include "treduce/treduce.h"

/* Version 2 added the node's bandwidth curve (stream_bandwidth_Bps);
 * version 1 files are still read, without one (not modelled). */
#define FORMAT_VERSION 2
#define FORMAT_OLDEST 1

/* Every key a profile may hold; the informational ones are read only to
 * be checked (bandwidth_GBps) or skipped (shm_probe_us: the timing that
 * chose shm_max_bytes, in `treduce calibrate`'s own report). */
static const char *const known_keys[] = {
    "treduce_profile", "wire", "transport", "p", "op", "type", "elem_size", "latency_s",
    "flight_s", "seconds_per_byte", "bandwidth_GBps", "combine_fixed_s",
    "combine_seconds_per_element", "parallelism", "recv_combine_saving",
    "stream_bandwidth_Bps", "shm_max_bytes", "shm_probe_us", "far_latency_s",
    "far_seconds_per_byte", NULL};

/* A failure naming the file and the key. */
static trd_status TRD_PRINTF(3, 4) bad_key(const char *path, const char *key, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return trd_fail(TRD_EINVAL, "profile %s: \"%s\" %s", path, key, why);
}

static trd_status check_keys(json_t *root, const char *path)
{
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        size_t i = 0;
        while (known_keys[i] && strcmp(key, known_keys[i]) != 0)
            i++;
        if (!known_keys[i])
            return trd_fail(TRD_EINVAL, "profile %s: unknown key \"%s\" (a profile holds "
                            "treduce_profile, wire, p, op, type, elem_size, latency_s, "
                            "flight_s, seconds_per_byte, bandwidth_GBps, combine_fixed_s, "
                            "combine_seconds_per_element, parallelism, "
                            "recv_combine_saving, stream_bandwidth_Bps, shm_max_bytes, "
                            "far_latency_s, far_seconds_per_byte)",
                            path, key);
    }
    return TRD_OK;
}

/* A finite number >= 0 under key; *out = 0 when absent and optional. */
static trd_status read_seconds(json_t *root, const char *path, const char *key, bool required,
                               double *out)
{
    json_t *v = json_object_get(root, key);
    *out = 0.0;
    if (!v && !required)
        return TRD_OK;
    if (!v)
        return bad_key(path, key, "is missing (write a profile with treduce calibrate --out)");
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
        return bad_key(path, key, "must be a finite number >= 0");
    *out = json_number_value(v);
    return TRD_OK;
}

/* An integer in [lo, hi] under key; *out = 0 when absent and optional. */
static trd_status read_count(json_t *root, const char *path, const char *key, bool required,
                             json_int_t lo, json_int_t hi, json_int_t *out)
{
    json_t *v = json_object_get(root, key);
    *out = 0;
    if (!v && !required)
        return TRD_OK;
    if (!v)
        return bad_key(path, key, "is missing (write a profile with treduce calibrate --out)");
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return bad_key(path, key, "must be an integer from %lld to %lld", (long long)lo,
                       (long long)hi);
    *out = json_integer_value(v);
    return TRD_OK;
}

/* A non-empty string of fewer than TRD_PROFILE_NAME_MAX bytes under key. */
static trd_status read_name(json_t *root, const char *path, const char *key, char *out)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return bad_key(path, key, "is missing (write a profile with treduce calibrate --out)");
    const char *s = json_string_value(v);
    if (!s || !*s || strlen(s) >= TRD_PROFILE_NAME_MAX)
        return bad_key(path, key, "must be a name of 1 to %d characters",
                       TRD_PROFILE_NAME_MAX - 1);
    snprintf(out, TRD_PROFILE_NAME_MAX, "%s", s);
    return TRD_OK;
}

/* The wire under "wire", or under its older name "transport" (read alone
 * when "wire" is absent; when both are there they must agree). */
static trd_status read_wire(json_t *root, const char *path, char *out)
{
    bool has_old = json_object_get(root, "transport") != NULL;
    if (has_old && !json_object_get(root, "wire"))
        return read_name(root, path, "transport", out);
    char old[TRD_PROFILE_NAME_MAX];
    trd_status st = read_name(root, path, "wire", out);
    if (st == TRD_OK && has_old)
        st = read_name(root, path, "transport", old);
    if (st == TRD_OK && has_old && strcmp(old, out) != 0)
        st = bad_key(path, "transport", "= \"%s\" disagrees with \"wire\" = \"%s\": it is "
                     "wire's older name, so drop it or make it agree", old, out);
    return st;
}

static trd_status read_meta(json_t *root, const char *path, trd_profile_meta *m,
                            json_int_t *version)
{
    json_int_t p = 0, elem = 0, shm = 0;
    trd_status st = read_count(root, path, "treduce_profile", true, 0, INT32_MAX, version);
    if (st == TRD_OK && (*version < FORMAT_OLDEST || *version > FORMAT_VERSION))
        st = bad_key(path, "treduce_profile", "is %lld: this treduce reads versions %d to %d",
                     (long long)*version, FORMAT_OLDEST, FORMAT_VERSION);
    if (st == TRD_OK)
        st = read_wire(root, path, m->wire);
    if (st == TRD_OK)
        st = read_count(root, path, "p", true, 1, INT32_MAX, &p);
    if (st == TRD_OK)
        st = read_name(root, path, "op", m->op);
    if (st == TRD_OK)
        st = read_name(root, path, "type", m->type);
    if (st == TRD_OK)
        st = read_count(root, path, "elem_size", false, 1, 1 << 20, &elem);
    if (st == TRD_OK)
        st = read_count(root, path, "shm_max_bytes", false, 0, INT64_MAX, &shm);
    m->p = (int32_t)p;
    m->elem_size = (size_t)elem;
    m->shm_max = (size_t)shm;
    return st;
}

/* The bandwidth curve: an array of 1 to TRD_STREAMS_MAX numbers, each
 * > 0, non-decreasing, the k-th at most k times the first (what
 * trd_calibrate_streams writes); absent: not modelled (version 1 files
 * never hold it). */
static trd_status read_curve(json_t *root, const char *path, json_int_t version,
                             trd_profile *pr)
{
    const char *key = "stream_bandwidth_Bps";
    json_t *v = json_object_get(root, key);
    pr->streams = 0;
    if (!v)
        return TRD_OK;
    if (version < 2)
        return bad_key(path, key, "is a version 2 key: this file says version %lld",
                       (long long)version);
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n < 1 || n > TRD_STREAMS_MAX)
        return bad_key(path, key, "must be an array of 1 to %d numbers", TRD_STREAMS_MAX);
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(v, i);
        pr->stream_bw[i] = json_is_number(x) ? json_number_value(x) : NAN;
    }
    if (!trd_node_curve_valid(pr->stream_bw, (int32_t)n))
        return bad_key(path, key, "must hold finite numbers > 0 (bytes per second of k "
                       "streams at once), non-decreasing, the k-th at most k times the "
                       "first");
    pr->streams = (int32_t)n;
    return TRD_OK;
}

static trd_status read_values(json_t *root, const char *path, trd_profile *pr)
{
    double gbps;
    trd_status st = read_seconds(root, path, "latency_s", true, &pr->latency);
    if (st == TRD_OK)
        st = read_seconds(root, path, "seconds_per_byte", true, &pr->per_byte);
    if (st == TRD_OK)
        st = read_seconds(root, path, "combine_fixed_s", true, &pr->combine_fixed);
    if (st == TRD_OK)
        st = read_seconds(root, path, "combine_seconds_per_element", true, &pr->per_element);
    /* profiles written before flight, parallelism and the saving were
     * measured lack them */
    if (st == TRD_OK)
        st = read_seconds(root, path, "flight_s", false, &pr->flight);
    if (st == TRD_OK)
        st = read_seconds(root, path, "parallelism", false, &pr->parallelism);
    if (st == TRD_OK)
        st = read_seconds(root, path, "recv_combine_saving", false, &pr->recv_combine_saving);
    if (st == TRD_OK) /* measured between nodes only */
        st = read_seconds(root, path, "far_latency_s", false, &pr->far_latency);
    if (st == TRD_OK)
        st = read_seconds(root, path, "far_seconds_per_byte", false, &pr->far_per_byte);
    if (st == TRD_OK && pr->recv_combine_saving > 1)
        st = bad_key(path, "recv_combine_saving", "= %g is above 1: it is the share of a "
                     "transfer a receive-and-combine does not pay", pr->recv_combine_saving);
    if (st == TRD_OK)
        st = read_seconds(root, path, "bandwidth_GBps", false, &gbps);
    if (st == TRD_OK && pr->flight > pr->latency)
        st = bad_key(path, "flight_s", "= %g is above latency_s = %g: it is the part of the "
                     "latency spent in flight", pr->flight, pr->latency);
    double want = pr->per_byte > 0 ? 1e-9 / pr->per_byte : 0.0;
    if (st == TRD_OK && json_object_get(root, "bandwidth_GBps") &&
        fabs(gbps - want) > 1e-9 * want)
        st = bad_key(path, "bandwidth_GBps", "= %g disagrees with seconds_per_byte = %g "
                     "(%g GB/s): the model reads seconds_per_byte, so edit that one (and "
                     "drop or fix bandwidth_GBps)", gbps, pr->per_byte, want);
    return st;
}

trd_status trd_profile_load(const char *path, trd_profile *profile, trd_profile_meta *meta)
{
    if (!path || !profile)
        return trd_fail(TRD_EINVAL, "trd_profile_load: NULL argument");
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return trd_fail(TRD_EIO, "cannot read profile %s: it is a folder", path);
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!root && json_error_code(&err) == json_error_cannot_open_file)
        return trd_fail(TRD_EIO, "cannot read profile %s: %s", path, err.text);
    if (!root)
        return trd_fail(TRD_EINVAL, "profile %s:%d:%d: malformed JSON: %s", path, err.line,
                        err.column, err.text);
    trd_profile pr = {0};
    json_int_t version = 0;
    trd_profile_meta m;
    memset(&m, 0, sizeof m);
    trd_status st = json_is_object(root)
                        ? TRD_OK
                        : trd_fail(TRD_EINVAL, "profile %s: not a JSON object (write a profile "
                                   "with treduce calibrate --out)", path);
    if (st == TRD_OK)
        st = check_keys(root, path);
    if (st == TRD_OK)
        st = read_meta(root, path, &m, &version);
    if (st == TRD_OK)
        st = read_values(root, path, &pr);
    if (st == TRD_OK)
        st = read_curve(root, path, version, &pr);
    json_decref(root);
    if (st != TRD_OK)
        return st;
    *profile = pr;
    if (meta)
        *meta = m;
    return TRD_OK;
}

static bool valid_name(const char *s)
{
    return s && *s && strlen(s) < TRD_PROFILE_NAME_MAX;
}

static trd_status check_save(const trd_profile *pr, const trd_profile_meta *m)
{
    const double v[] = {pr->latency, pr->per_byte, pr->combine_fixed, pr->per_element,
                        pr->flight, pr->parallelism, pr->recv_combine_saving,
                        pr->far_latency, pr->far_per_byte};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            return trd_fail(TRD_EINVAL, "trd_profile_save: every value must be finite and "
                            ">= 0 (got %g)", v[i]);
    if (pr->flight > pr->latency)
        return trd_fail(TRD_EINVAL, "trd_profile_save: flight = %g is above latency = %g",
                        pr->flight, pr->latency);
    if (pr->recv_combine_saving > 1)
        return trd_fail(TRD_EINVAL, "trd_profile_save: recv_combine_saving = %g is above 1",
                        pr->recv_combine_saving);
    if (!trd_node_curve_valid(pr->stream_bw, pr->streams))
        return trd_fail(TRD_EINVAL, "trd_profile_save: stream_bw of %d streams: need 0 to %d, "
                        "finite, > 0, non-decreasing, the k-th at most k times the first",
                        (int)pr->streams, TRD_STREAMS_MAX);
    if (!valid_name(m->wire) || !valid_name(m->op) || !valid_name(m->type) || m->p < 1)
        return trd_fail(TRD_EINVAL, "trd_profile_save: the metadata needs a wire, an "
                        "operator and a type (1 to %d characters) and p >= 1",
                        TRD_PROFILE_NAME_MAX - 1);
    return TRD_OK;
}

trd_status trd_profile_save(const char *path, const trd_profile *pr, const trd_profile_meta *m)
{
    if (!path || !pr || !m)
        return trd_fail(TRD_EINVAL, "trd_profile_save: NULL argument");
    trd_status st = check_save(pr, m);
    if (st != TRD_OK)
        return st;
    json_t *o = json_pack("{s:i, s:s, s:i, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, "
                          "s:f, s:I}", "treduce_profile", FORMAT_VERSION, "wire", m->wire,
                          "p", (int)m->p, "op", m->op, "type", m->type, "elem_size",
                          (json_int_t)m->elem_size, "latency_s", pr->latency, "flight_s",
                          pr->flight, "seconds_per_byte", pr->per_byte, "bandwidth_GBps",
                          pr->per_byte > 0 ? 1e-9 / pr->per_byte : 0.0, "combine_fixed_s",
                          pr->combine_fixed, "combine_seconds_per_element", pr->per_element,
                          "parallelism", pr->parallelism, "recv_combine_saving",
                          pr->recv_combine_saving, "shm_max_bytes",
                          (json_int_t)m->shm_max);
    if (!o)
        return trd_fail(TRD_ENOMEM, "trd_profile_save: out of memory");
    if (m->elem_size == 0)
        json_object_del(o, "elem_size");
    if (pr->far_latency > 0 || pr->far_per_byte > 0) {
        json_object_set_new(o, "far_latency_s", json_real(pr->far_latency));
        json_object_set_new(o, "far_seconds_per_byte", json_real(pr->far_per_byte));
    }
    json_t *curve = pr->streams > 0 ? json_array() : NULL;
    for (int32_t k = 0; curve && k < pr->streams; k++)
        json_array_append_new(curve, json_real(pr->stream_bw[k]));
    if (curve)
        json_object_set_new(o, "stream_bandwidth_Bps", curve);
    errno = 0;
    int rc = json_dump_file(o, path, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    int why = errno; /* fopen's, or the write's */
    json_decref(o);
    if (rc != 0)
        return trd_fail(TRD_EIO, "cannot write profile %s: %s", path,
                        why ? strerror(why) : "write error");
    return TRD_OK;
}

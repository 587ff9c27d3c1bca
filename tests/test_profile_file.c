/* test_profile_file.c: trd_profile_save and trd_profile_load
 * (src/select/profile_file.c), the profile files of `treduce calibrate
 * --out` and `treduce run --profile`.  The oracle is the contract of
 * include/treduce/treduce.h:
 *   - what trd_profile_save writes, trd_profile_load reads back exactly
 *     (every value and the metadata: wire, ranks, operator, type,
 *     element size, rings' limit), and it names the wire "wire" only;
 *   - a file of the wire's older key, "transport", loads with that wire
 *     (profiles written before the rename), and one holding both (what
 *     `treduce calibrate --format json` prints) loads when they agree and
 *     is refused naming "transport" when they do not;
 *   - the bandwidth curve of k concurrent streams round-trips too, and a
 *     version 1 file (before it) loads without one (streams 0: not
 *     modelled), while a version 1 file holding the curve, a version
 *     above 2 and a curve that is not non-decreasing, positive and bounded
 *     by k times the first are refused naming the key;
 *   - a profile written before flight_s, parallelism and elem_size existed
 *     loads with 0 for them (and the informational shm_probe_us of
 *     `treduce calibrate`'s report is accepted);
 *   - every malformed file is refused with TRD_EINVAL naming the file and
 *     the key (or the line of malformed JSON); a missing file or a folder
 *     is TRD_EIO; *profile is left as it was;
 *   - trd_profile_save refuses values trd_profile_apply would refuse and
 *     missing metadata, and an unwritable path (TRD_EIO). */
#include "testutil.h"

static void temp_file(char *path, size_t size, const char *text)
{
    tu_temp_file(text, strlen(text), path, size);
}

static trd_profile_meta meta_of(const char *wire, int32_t p, const char *op,
                                const char *type, size_t elem, size_t shm)
{
    trd_profile_meta m;
    memset(&m, 0, sizeof m);
    snprintf(m.wire, sizeof m.wire, "%s", wire);
    snprintf(m.op, sizeof m.op, "%s", op);
    snprintf(m.type, sizeof m.type, "%s", type);
    m.p = p;
    m.elem_size = elem;
    m.shm_max = shm;
    return m;
}

static void save_then_load(void **state)
{
    (void)state;
    const trd_profile pr = {.latency = 6.25e-5, .per_byte = 1.0 / 3e10, .combine_fixed = 1e-7,
                            .per_element = 2.5e-10, .flight = 6e-5, .parallelism = 1.5,
                            .recv_combine_saving = 0.625, .streams = 3,
                            .stream_bw = {1e10 / 3, 6e9, 7.5e9}, .far_latency = 1.25e-4,
                            .far_per_byte = 8e-8};
    const trd_profile_meta m = meta_of("mpi", 16, "matrix", "double", 32, 16384);
    char path[64];
    temp_file(path, sizeof path, "");
    assert_int_equal(trd_profile_save(path, &pr, &m), TRD_OK);
    trd_profile got;
    trd_profile_meta gm;
    TU_CHECK(trd_profile_load(path, &got, &gm) == TRD_OK, "%s", trd_errmsg());
    char text[4096] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    unlink(path);
    TU_CHECK(strstr(text, "\"wire\": \"mpi\"") && !strstr(text, "\"transport\""),
             "the file does not name the wire \"wire\" alone:\n%s", text);
    TU_CHECK(got.latency == pr.latency && got.per_byte == pr.per_byte &&
                 got.combine_fixed == pr.combine_fixed && got.per_element == pr.per_element &&
                 got.flight == pr.flight && got.parallelism == pr.parallelism &&
                 got.recv_combine_saving == pr.recv_combine_saving && got.streams == 3 &&
                 !memcmp(got.stream_bw, pr.stream_bw, 3 * sizeof(double)) &&
                 got.far_latency == pr.far_latency && got.far_per_byte == pr.far_per_byte,
             "values differ after a round trip (latency %.17g, per_byte %.17g)", got.latency,
             got.per_byte);
    assert_string_equal(gm.wire, "mpi");
    assert_string_equal(gm.op, "matrix");
    assert_string_equal(gm.type, "double");
    assert_int_equal(gm.p, 16);
    assert_int_equal(gm.elem_size, 32);
    assert_int_equal(gm.shm_max, 16384);
    TU_CHECK(trd_profile_load(path, &got, NULL) == TRD_EIO && strstr(trd_errmsg(), path),
             "a missing file: %s", trd_errmsg());
}

static void older_profile_loads(void **state)
{
    (void)state;
    char path[64];
    temp_file(path, sizeof path,
              "{\"treduce_profile\": 1, \"transport\": \"threads\", \"p\": 2, \"op\": \"sum\", "
              "\"type\": \"double\", \"latency_s\": 1e-5, \"seconds_per_byte\": 2e-10, "
              "\"bandwidth_GBps\": 5.0, \"combine_fixed_s\": 0, "
              "\"combine_seconds_per_element\": 3e-10, \"shm_max_bytes\": 0, "
              "\"shm_probe_us\": null}");
    trd_profile pr;
    trd_profile_meta m;
    TU_CHECK(trd_profile_load(path, &pr, &m) == TRD_OK, "%s", trd_errmsg());
    unlink(path);
    assert_true(pr.flight == 0 && pr.parallelism == 0 && m.elem_size == 0 && pr.streams == 0 &&
                pr.far_latency == 0 && pr.far_per_byte == 0);
    assert_true(pr.latency == 1e-5 && pr.per_byte == 2e-10 && pr.per_element == 3e-10);
    assert_string_equal(m.wire, "threads"); /* under its older key */
}

/* `treduce calibrate --format json` names the wire under both keys. */
static void both_wire_keys_load(void **state)
{
    (void)state;
    char path[64];
    temp_file(path, sizeof path,
              "{\"treduce_profile\": 2, \"wire\": \"mpi\", \"transport\": \"mpi\", \"p\": 2, "
              "\"op\": \"sum\", \"type\": \"double\", \"latency_s\": 1e-5, "
              "\"seconds_per_byte\": 2e-10, \"combine_fixed_s\": 0, "
              "\"combine_seconds_per_element\": 3e-10}");
    trd_profile pr;
    trd_profile_meta m;
    TU_CHECK(trd_profile_load(path, &pr, &m) == TRD_OK, "%s", trd_errmsg());
    unlink(path);
    assert_string_equal(m.wire, "mpi");
}

/* The keys of a good profile, with `edit` applied: "key": "value" pairs
 * replacing or adding (value NULL: the key removed). */
static void load_fails(const char *const *edit, trd_status want, const char *needle,
                       const char *needle2)
{
    static const char *const base[][2] = {
        {"treduce_profile", "2"},         {"wire", "\"threads\""},
        {"p", "2"},                       {"op", "\"sum\""},
        {"type", "\"double\""},           {"elem_size", "8"},
        {"latency_s", "1e-5"},            {"flight_s", "5e-6"},
        {"seconds_per_byte", "1e-10"},    {"bandwidth_GBps", "10"},
        {"combine_fixed_s", "0"},         {"combine_seconds_per_element", "2e-10"},
        {"parallelism", "2"},             {"shm_max_bytes", "0"},
        {"stream_bandwidth_Bps", "[1e10, 1.5e10]"}};
    char text[2048] = "{";
    size_t n = sizeof base / sizeof base[0];
    bool used[8] = {false};
    for (size_t i = 0; i < n; i++) {
        const char *value = base[i][1];
        for (size_t e = 0; edit[e]; e += 2)
            if (!strcmp(edit[e], base[i][0])) {
                value = edit[e + 1];
                used[e / 2] = true;
            }
        if (value)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s\"%s\": %s",
                     strlen(text) > 1 ? ", " : "", base[i][0], value);
    }
    for (size_t e = 0; edit[e]; e += 2)
        if (!used[e / 2])
            snprintf(text + strlen(text), sizeof text - strlen(text), ", \"%s\": %s", edit[e],
                     edit[e + 1]);
    strcat(text, "}");
    char path[64];
    temp_file(path, sizeof path, text);
    trd_profile pr = {.latency = 42};
    trd_status st = trd_profile_load(path, &pr, NULL);
    unlink(path);
    TU_CHECK(st == want, "%s\n  status %d (%s), want %d", text, st, trd_errmsg(), want);
    TU_CHECK(strstr(trd_errmsg(), path), "message '%s' lacks the file", trd_errmsg());
    TU_CHECK(strstr(trd_errmsg(), needle), "%s\n  message '%s' lacks '%s'", text, trd_errmsg(),
             needle);
    TU_CHECK(!needle2 || strstr(trd_errmsg(), needle2), "message '%s' lacks '%s'", trd_errmsg(),
             needle2);
    TU_CHECK(pr.latency == 42, "*profile changed by a refused load");
}

#define EDIT(...) ((const char *const[]){__VA_ARGS__, NULL})

static void malformed_profiles(void **state)
{
    (void)state;
    load_fails(EDIT("latency_s", NULL), TRD_EINVAL, "\"latency_s\" is missing", "calibrate");
    load_fails(EDIT("wire", NULL), TRD_EINVAL, "\"wire\" is missing", NULL);
    load_fails(EDIT("wire", NULL, "transport", "7"), TRD_EINVAL, "\"transport\"",
               "1 to 31 characters");
    load_fails(EDIT("transport", "\"mpi\""), TRD_EINVAL, "\"transport\" = \"mpi\" disagrees",
               "\"wire\" = \"threads\"");
    load_fails(EDIT("transport", "7"), TRD_EINVAL, "\"transport\"", "1 to 31 characters");
    load_fails(EDIT("latency_s", "-1"), TRD_EINVAL, "\"latency_s\"", ">= 0");
    load_fails(EDIT("seconds_per_byte", "\"fast\""), TRD_EINVAL, "\"seconds_per_byte\"", NULL);
    load_fails(EDIT("flight_s", "-1"), TRD_EINVAL, "\"flight_s\"", NULL);
    load_fails(EDIT("far_latency_s", "-1"), TRD_EINVAL, "\"far_latency_s\"", ">= 0");
    load_fails(EDIT("far_seconds_per_byte", "\"slow\""), TRD_EINVAL,
               "\"far_seconds_per_byte\"", NULL);
    load_fails(EDIT("flight_s", "1"), TRD_EINVAL, "\"flight_s\"", "above latency_s");
    load_fails(EDIT("parallelism", "\"two\""), TRD_EINVAL, "\"parallelism\"", NULL);
    load_fails(EDIT("recv_combine_saving", "1.5"), TRD_EINVAL, "\"recv_combine_saving\"",
               "above 1");
    load_fails(EDIT("recv_combine_saving", "-0.5"), TRD_EINVAL, "\"recv_combine_saving\"",
               ">= 0");
    load_fails(EDIT("treduce_profile", "3"), TRD_EINVAL, "\"treduce_profile\" is 3",
               "versions 1 to 2");
    load_fails(EDIT("treduce_profile", "0"), TRD_EINVAL, "\"treduce_profile\" is 0", NULL);
    load_fails(EDIT("treduce_profile", "1"), TRD_EINVAL, "\"stream_bandwidth_Bps\"",
               "version 2 key");
    load_fails(EDIT("stream_bandwidth_Bps", "[]"), TRD_EINVAL, "\"stream_bandwidth_Bps\"",
               "array of 1 to 256");
    load_fails(EDIT("stream_bandwidth_Bps", "5e9"), TRD_EINVAL, "\"stream_bandwidth_Bps\"",
               "array");
    load_fails(EDIT("stream_bandwidth_Bps", "[1e10, 9e9]"), TRD_EINVAL,
               "\"stream_bandwidth_Bps\"", "non-decreasing");
    load_fails(EDIT("stream_bandwidth_Bps", "[1e10, 2.5e10]"), TRD_EINVAL,
               "\"stream_bandwidth_Bps\"", "at most k times");
    load_fails(EDIT("stream_bandwidth_Bps", "[0, 1e10]"), TRD_EINVAL,
               "\"stream_bandwidth_Bps\"", "> 0");
    load_fails(EDIT("stream_bandwidth_Bps", "[1e10, \"x\"]"), TRD_EINVAL,
               "\"stream_bandwidth_Bps\"", NULL);
    load_fails(EDIT("p", "0"), TRD_EINVAL, "\"p\"", "integer from 1");
    load_fails(EDIT("p", "2.5"), TRD_EINVAL, "\"p\"", NULL);
    load_fails(EDIT("op", "\"an-operator-name-longer-than-31-characters\""), TRD_EINVAL,
               "\"op\"", "1 to 31 characters");
    load_fails(EDIT("type", "7"), TRD_EINVAL, "\"type\"", NULL);
    load_fails(EDIT("colour", "1"), TRD_EINVAL, "unknown key \"colour\"", "latency_s");
    load_fails(EDIT("bandwidth_GBps", "1e300"), TRD_EINVAL, "\"bandwidth_GBps\"",
               "disagrees with seconds_per_byte");
    load_fails(EDIT("latency_s", "1e-5, \"latency_s\": 2e-5"), TRD_EINVAL, "malformed JSON",
               "duplicate");
    load_fails(EDIT("latency_s", "1e-5,\n\"x\" 1"), TRD_EINVAL, ":2:5: malformed JSON", NULL);
    char path[64];
    temp_file(path, sizeof path, "[1, 2]");
    trd_profile pr;
    TU_CHECK(trd_profile_load(path, &pr, NULL) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "not a JSON object"), "%s", trd_errmsg());
    unlink(path);
    TU_CHECK(trd_profile_load("/tmp", &pr, NULL) == TRD_EIO && strstr(trd_errmsg(), "folder"),
             "%s", trd_errmsg());
    assert_int_equal(trd_profile_load(NULL, &pr, NULL), TRD_EINVAL);
}

static void bad_saves(void **state)
{
    (void)state;
    trd_profile pr = {.latency = 1e-5, .per_byte = 1e-10, .per_element = 1e-9};
    trd_profile_meta m = meta_of("threads", 2, "sum", "double", 8, 0);
    pr.per_byte = NAN;
    TU_CHECK(trd_profile_save("/tmp/x.json", &pr, &m) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "finite"), "%s", trd_errmsg());
    pr.per_byte = 1e-10;
    pr.flight = 1;
    TU_CHECK(trd_profile_save("/tmp/x.json", &pr, &m) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "flight"), "%s", trd_errmsg());
    pr.flight = 0;
    pr.recv_combine_saving = 2;
    TU_CHECK(trd_profile_save("/tmp/x.json", &pr, &m) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "recv_combine_saving"), "%s", trd_errmsg());
    pr.recv_combine_saving = 0;
    pr.streams = 2, pr.stream_bw[0] = 1e10, pr.stream_bw[1] = 3e10; /* above 2 x the first */
    TU_CHECK(trd_profile_save("/tmp/x.json", &pr, &m) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "stream_bw"), "%s", trd_errmsg());
    pr.streams = 0;
    m.op[0] = '\0';
    TU_CHECK(trd_profile_save("/tmp/x.json", &pr, &m) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "metadata"), "%s", trd_errmsg());
    m = meta_of("threads", 2, "sum", "double", 8, 0);
    TU_CHECK(trd_profile_save("/nonexistent-dir/p.json", &pr, &m) == TRD_EIO &&
                 strstr(trd_errmsg(), "/nonexistent-dir/p.json"), "%s", trd_errmsg());
    assert_int_equal(trd_profile_save(NULL, &pr, &m), TRD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(save_then_load),
        cmocka_unit_test(older_profile_loads),
        cmocka_unit_test(both_wire_keys_load),
        cmocka_unit_test(malformed_profiles),
        cmocka_unit_test(bad_saves),
    };
    return cmocka_run_group_tests_name("profile_file", tests, NULL, NULL);
}

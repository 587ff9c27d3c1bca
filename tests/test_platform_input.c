/* test_platform_input.c: platform files a user may get wrong or make huge
 * (src/platform/).  The oracle is the contract of
 * include/treduce/platform.h and docs/PLATFORMS.md:
 *   - work is bounded: a 2,000,001-digit speed, SimGrid bandwidth or
 *     denominator is refused naming its length within a second of CPU
 *     (quadratic when digits were appended one by one); 40,000 nodes and
 *     links in JSON or SimGrid load within a few seconds (lookups by name
 *     were linear scans: minutes);
 *   - a computing node without "speed" loads (scatters and gossips compute
 *     nothing), prints back without one, and a reduce on it is refused;
 *   - encodings: a UTF-16 or UTF-32 file (byte-order mark) or one with NUL
 *     bytes is refused as such, not as "malformed JSON"; a UTF-8
 *     byte-order mark is accepted;
 *   - SimGrid is as strict as JSON: <platform> without version, with a
 *     version that is not 4.x, and an attribute treduce does not read on
 *     any element are refused naming the file, line and attribute. */
#include "testutil.h"

#include <time.h>

#include "treduce/platform.h"
#include "treduce/steady.h"

static int dummy;
#define NOT_NULL ((trd_platform *)(void *)&dummy)

/* Loads len bytes of text (either format); st and the CPU seconds it took. */
static trd_status load_text(const char *text, size_t len, trd_platform **pf, double *seconds)
{
    char path[64];
    tu_temp_file(text, len, path, sizeof path);
    clock_t t0 = clock();
    trd_status st = trd_platform_load(path, pf);
    if (seconds)
        *seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    unlink(path);
    return st;
}

static void load_fails(const char *text, size_t len, const char *needle, const char *needle2)
{
    trd_platform *pf = NOT_NULL;
    trd_status st = load_text(text, len, &pf, NULL);
    TU_CHECK(st == TRD_EINVAL && pf == NULL, "%.200s\n  status %d (%s)", text, st, trd_errmsg());
    TU_CHECK(strstr(trd_errmsg(), needle), "message '%s' lacks '%s'", trd_errmsg(), needle);
    TU_CHECK(!needle2 || strstr(trd_errmsg(), needle2), "message '%s' lacks '%s'",
             trd_errmsg(), needle2);
}

/* A string of `digits` ones between prefix and suffix (malloc'ed). */
static char *with_digits(const char *prefix, size_t digits, const char *suffix)
{
    size_t a = strlen(prefix), b = strlen(suffix);
    char *text = tu_alloc(a + digits + b + 1, 1);
    memcpy(text, prefix, a);
    memset(text + a, '1', digits);
    memcpy(text + a + digits, suffix, b + 1);
    return text;
}

static void long_numbers_bounded(void **state)
{
    (void)state;
    static const struct {
        const char *prefix, *suffix;
    } files[] = {
        {"{\"nodes\": [{\"name\": \"A\", \"speed\": \"", "\"}]}"},
        {"{\"nodes\": [{\"name\": \"A\", \"speed\": \"1/", "\"}]}"},
        {"{\"nodes\": [{\"name\": \"A\", \"speed\": \"0.", "\"}]}"},
        {"<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"a\" "
         "speed=\"1Gf\"/><link id=\"l\" bandwidth=\"", "Bps\"/></zone></platform>"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *text = with_digits(files[i].prefix, 2000001, files[i].suffix);
        trd_platform *pf = NOT_NULL;
        double seconds;
        trd_status st = load_text(text, strlen(text), &pf, &seconds);
        TU_CHECK(st == TRD_EINVAL && pf == NULL, "file %zu: status %d (%s)", i, st, trd_errmsg());
        TU_CHECK(strstr(trd_errmsg(), "200000") && strstr(trd_errmsg(), "digits (at most 1000)"),
                 "file %zu: message '%.300s' lacks the length", i, trd_errmsg());
        TU_CHECK(seconds < 1.0, "file %zu: refusing took %g s of CPU", i, seconds);
        free(text);
    }
    /* 1000 digits are read (a 1000-digit integer would overflow a double:
     * 0.111... is within range) */
    char *ok = with_digits("{\"nodes\": [{\"name\": \"A\", \"speed\": \"0.", 999, "\"}]}");
    trd_platform *pf = NULL;
    TU_CHECK(load_text(ok, strlen(ok), &pf, NULL) == TRD_OK, "1000 digits: %s", trd_errmsg());
    trd_platform_free(pf);
    free(ok);
}

/* A chain of n nodes: JSON, or SimGrid hosts with one link and route each. */
static char *chain_text(int n, bool simgrid)
{
    size_t size = (size_t)n * 160 + 256, len = 0;
    char *t = tu_alloc(size, 1);
    if (simgrid) {
        len += (size_t)snprintf(t, size, "<platform version=\"4.1\"><zone id=\"z\" "
                                         "routing=\"Full\">\n");
        for (int i = 0; i < n; i++)
            len += (size_t)snprintf(t + len, size - len, "<host id=\"n%d\" speed=\"1Gf\"/>\n", i);
        for (int i = 0; i + 1 < n; i++)
            len += (size_t)snprintf(t + len, size - len,
                                    "<link id=\"l%d\" bandwidth=\"1Bps\"/><route src=\"n%d\" "
                                    "dst=\"n%d\"><link_ctn id=\"l%d\"/></route>\n",
                                    i, i, i + 1, i);
        snprintf(t + len, size - len, "</zone></platform>\n");
        return t;
    }
    len += (size_t)snprintf(t, size, "{\"nodes\": [\n");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, size - len, "{\"name\": \"n%d\", \"speed\": 1}%s\n", i,
                                i + 1 < n ? "," : "");
    len += (size_t)snprintf(t + len, size - len, "], \"links\": [\n");
    for (int i = 0; i + 1 < n; i++)
        len += (size_t)snprintf(t + len, size - len,
                                "{\"from\": \"n%d\", \"to\": \"n%d\", \"cost\": 1}%s\n", i,
                                i + 1, i + 2 < n ? "," : "");
    snprintf(t + len, size - len, "]}\n");
    return t;
}

/* Forty thousand names, each found through the index (its load time is
 * libxml2's and the allocator's, not asserted here: a loaded machine or the
 * sanitizers would decide it). */
static void many_nodes_load(void **state)
{
    (void)state;
    for (int simgrid = 0; simgrid < 2; simgrid++) {
        char *text = chain_text(40000, simgrid);
        trd_platform *pf = NULL;
        trd_status st = load_text(text, strlen(text), &pf, NULL);
        TU_CHECK(st == TRD_OK, "%s: %s", simgrid ? "SimGrid" : "JSON", trd_errmsg());
        assert_int_equal(trd_platform_node_count(pf), 40000);
        assert_int_equal(trd_platform_link_count(pf), simgrid ? 2 * 39999 : 39999);
        assert_int_equal(trd_platform_find(pf, "n39999"), 39999);
        assert_int_equal(trd_platform_find(pf, "n40000"), -1);
        trd_platform_free(pf);
        free(text);
    }
}

static trd_status solve(const trd_platform *pf, trd_steady_problem problem)
{
    trd_steady_spec spec;
    trd_steady_spec_init(&spec);
    spec.problem = problem;
    spec.root = 0;
    trd_steady *st = NULL;
    trd_status s = trd_steady_solve(pf, &spec, &st);
    trd_steady_free(st);
    return s;
}

static void node_without_speed(void **state)
{
    (void)state;
    const char *text = "{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}],\n"
                       " \"links\": [{\"from\": \"a\", \"to\": \"b\", \"cost\": 1, \"both\": true},\n"
                       "           {\"from\": \"b\", \"to\": \"c\", \"cost\": 1, \"both\": true}]}";
    trd_platform *pf = NULL;
    TU_CHECK(load_text(text, strlen(text), &pf, NULL) == TRD_OK, "%s", trd_errmsg());
    char *speed = NULL;
    assert_int_equal(trd_platform_node_speed(pf, 1, &speed), TRD_OK);
    assert_string_equal(speed, "0");
    assert_false(trd_platform_node_is_router(pf, 1));
    free(speed);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_int_equal(trd_platform_write_json(pf, f), TRD_OK);
    fclose(f);
    TU_CHECK(!strstr(out, "speed") && strstr(out, "{\"name\": \"b\"}"), "written back:\n%s", out);
    trd_platform *back = NULL; /* and reads back */
    TU_CHECK(load_text(out, len, &back, NULL) == TRD_OK, "%s", trd_errmsg());
    assert_int_equal(trd_platform_node_count(back), 3);
    trd_platform_free(back);
    free(out);
    TU_CHECK(solve(pf, TRD_STEADY_SCATTER) == TRD_OK, "scatter: %s", trd_errmsg());
    TU_CHECK(solve(pf, TRD_STEADY_GOSSIP) == TRD_OK, "gossip: %s", trd_errmsg());
    TU_CHECK(solve(pf, TRD_STEADY_REDUCE) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "node 'a' gives no speed"),
             "reduce: %s", trd_errmsg());
    trd_platform_free(pf);
}

static void encodings(void **state)
{
    (void)state;
    static const char json[] = "{\"nodes\": [{\"name\": \"A\", \"speed\": 1}]}";
    static const char xml[] = "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
                              "<host id=\"a\" speed=\"1Gf\"/></zone></platform>";
    const char *texts[] = {json, xml};
    for (int k = 0; k < 2; k++) {
        const char *t = texts[k];
        size_t n = strlen(t);
        char *wide = tu_alloc(4 * n + 8, 1); /* UTF-16LE with its byte-order mark */
        wide[0] = (char)0xFF;
        wide[1] = (char)0xFE;
        for (size_t i = 0; i < n; i++)
            wide[2 + 2 * i] = t[i];
        load_fails(wide, 2 * n + 2, "UTF-16", "UTF-8");
        wide[0] = (char)0xFE; /* big-endian */
        wide[1] = (char)0xFF;
        load_fails(wide, 2 * n + 2, "UTF-16", NULL);
        memset(wide, 0, 4 * n + 8); /* UTF-32LE */
        wide[0] = (char)0xFF;
        wide[1] = (char)0xFE;
        for (size_t i = 0; i < n; i++)
            wide[4 + 4 * i] = t[i];
        load_fails(wide, 4 * n + 4, "UTF-32", NULL);
        load_fails(wide + 4, 4 * n, "NUL bytes", NULL); /* no byte-order mark */
        memcpy(wide, "\xEF\xBB\xBF", 3); /* UTF-8's mark: fine */
        memcpy(wide + 3, t, n);
        trd_platform *pf = NULL;
        TU_CHECK(load_text(wide, n + 3, &pf, NULL) == TRD_OK, "UTF-8 BOM: %s", trd_errmsg());
        trd_platform_free(pf);
        free(wide);
    }
}

/* A SimGrid file: <platform attrs> around one zone holding body. */
static void simgrid_fails(const char *platform_attrs, const char *body, const char *needle,
                          const char *needle2)
{
    char text[2048];
    snprintf(text, sizeof text, "<?xml version='1.0'?>\n<platform%s>\n<zone id=\"z\" "
             "routing=\"Full\">\n%s\n</zone>\n</platform>\n", platform_attrs, body);
    load_fails(text, strlen(text), needle, needle2);
}

static void simgrid_strict(void **state)
{
    (void)state;
    const char *host = "<host id=\"a\" speed=\"1Gf\"/>";
    simgrid_fails("", host, ":2: <platform>", "'version' is missing");
    simgrid_fails(" version=\"4.1abc\"", host, "version '4.1abc'", "not a version number");
    simgrid_fails(" version=\"four\"", host, "version 'four'", NULL);
    simgrid_fails(" version=\"\"", host, "version ''", NULL);
    simgrid_fails(" version=\"5.0\"", host, "version 5.0", "newer");
    simgrid_fails(" version=\"3.9\"", host, "version 3.9", "older than 4");
    simgrid_fails(" version=\"4.1\" colour=\"red\"", host, "<platform>", "attribute 'colour'");
    const char *v = " version=\"4.1\"";
    simgrid_fails(v, "<host id=\"a\" speed=\"1Gf\" availability_file=\"t\"/>",
                  ":4: <host id='a'>", "attribute 'availability_file' is not supported");
    simgrid_fails(v, "<host id=\"a\" speeed=\"1Gf\" speed=\"1Gf\"/>", "attribute 'speeed'",
                  "id, speed, core, pstate");
    simgrid_fails(v, "<router id=\"r\" speed=\"1Gf\"/>", "<router id='r'>", "'speed'");
    simgrid_fails(v, "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>"
                  "<link id=\"l\" bandwidth=\"1Bps\" bandwidth_file=\"t\"/>",
                  "<link id='l'>", "'bandwidth_file'");
    simgrid_fails(v, "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>"
                  "<link id=\"l\" bandwidth=\"1Bps\"/><route src=\"a\" dst=\"b\" "
                  "symetrical=\"NO\"><link_ctn id=\"l\"/></route>",
                  "<route src='a' dst='b'>", "'symetrical'");
    simgrid_fails(v, "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>"
                  "<link id=\"l\" bandwidth=\"1Bps\"/><route src=\"a\" dst=\"b\">"
                  "<link_ctn id=\"l\" weight=\"2\"/></route>", "<link_ctn id='l'>", "'weight'");
    simgrid_fails(v, "<zone id=\"y\" routing=\"Full\" colour=\"red\"/>", "<zone id='y'>",
                  "'colour'");
    /* what SimGrid 4 files say and treduce reads or safely ignores */
    const char *good = "<?xml version='1.0'?>\n<platform version=\"4\">\n<zone id=\"z\" "
                       "routing=\"Full\">\n<host id=\"a\" speed=\"1Gf\" core=\"2\" "
                       "coordinates=\"0 0 0\"/><host id=\"b\" speed=\"1Gf,2Gf\" pstate=\"1\"/>"
                       "<router id=\"r\" coordinates=\"1 1 1\"/><link id=\"l\" "
                       "bandwidth=\"1Bps\" latency=\"1ms\" sharing_policy=\"SPLITDUPLEX\"/>"
                       "<route src=\"a\" dst=\"b\" symmetrical=\"NO\"><link_ctn id=\"l\" "
                       "direction=\"UP\"/></route>\n</zone>\n</platform>\n";
    trd_platform *pf = NULL;
    TU_CHECK(load_text(good, strlen(good), &pf, NULL) == TRD_OK, "%s", trd_errmsg());
    assert_int_equal(trd_platform_link_count(pf), 1);
    trd_platform_free(pf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_numbers_bounded), cmocka_unit_test(many_nodes_load),
        cmocka_unit_test(node_without_speed),   cmocka_unit_test(encodings),
        cmocka_unit_test(simgrid_strict),
    };
    return cmocka_run_group_tests_name("platform_input", tests, NULL, NULL);
}

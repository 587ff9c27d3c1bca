/* test_version.c: the version a program compiles against and the one it
 * runs with are CMake's project(VERSION), the only place it is written:
 * TRD_VERSION_MAJOR, _MINOR, _PATCH and TRD_VERSION_STRING (treduce/version.h,
 * generated) and trd_version() (the library's copy), against the numbers
 * tests/CMakeLists.txt passes from the project. */
#include "testutil.h"

static void macros_are_the_project_version(void **state)
{
    (void)state;
    assert_int_equal(TRD_VERSION_MAJOR, TEST_VERSION_MAJOR);
    assert_int_equal(TRD_VERSION_MINOR, TEST_VERSION_MINOR);
    assert_int_equal(TRD_VERSION_PATCH, TEST_VERSION_PATCH);
    assert_string_equal(TRD_VERSION_STRING, TEST_PROJECT_VERSION);
    char parts[64];
    snprintf(parts, sizeof parts, "%d.%d.%d", TRD_VERSION_MAJOR, TRD_VERSION_MINOR,
             TRD_VERSION_PATCH);
    assert_string_equal(parts, TEST_PROJECT_VERSION);
}

static void library_reports_the_same(void **state)
{
    (void)state;
    assert_non_null(trd_version());
    assert_string_equal(trd_version(), TEST_PROJECT_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(macros_are_the_project_version),
        cmocka_unit_test(library_reports_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

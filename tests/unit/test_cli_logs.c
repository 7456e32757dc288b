/* The pure parts of gpupool logs (cli/logtext.h): --since as a duration or an RFC 3339 time,
 * the times of lines from the agent's times file, and the timestamps printed. */
#include "cli/logtext.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define NOW INT64_C(1777636800000) /* 2026-05-01T12:00:00Z */

static void expect_since(const char *s, int64_t want)
{
    int64_t got = -1;
    if (gp_logs_parse_since(s, NOW, &got) != 0 || got != want) {
        fail_msg("--since %s: %lld, expected %lld", s, (long long)got, (long long)want);
    }
}

static void test_since(void **state)
{
    (void)state;
    expect_since("10m", NOW - 600000);
    expect_since("90s", NOW - 90000);
    expect_since("90", NOW - 90000);
    expect_since("2h", NOW - 7200000);
    expect_since("3d", NOW - 3 * 86400000LL);
    expect_since("2026-05-01T12:00:00Z", NOW);
    expect_since("2026-05-01T11:59:59.25Z", NOW - 750);
    expect_since("2026-05-01T14:00:00+02:00", NOW);
    expect_since("2026-05-01t07:30:00-04:30", NOW);
    expect_since("1970-01-01T00:00:00Z", 0);
    expect_since("2024-02-29T00:00:00Z", INT64_C(1709164800000));
    static const char *const bad[] = {"",
                                      "0m",
                                      "-5m",
                                      "10x",
                                      "m",
                                      "10mm",
                                      "1e3",
                                      "2026-05-01",
                                      "2026-13-01T00:00:00Z",
                                      "2026-05-32T00:00:00Z",
                                      "2026-05-01T24:00:00Z",
                                      "2026-05-01T12:00:00",
                                      "2026-05-01T12:00:00.Z",
                                      "2026-05-01T12:00:00+0200",
                                      "yesterday",
                                      "99999999999999999999s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t v;
        if (gp_logs_parse_since(bad[i], NOW, &v) == 0) {
            fail_msg("--since \"%s\" accepted", bad[i]);
        }
    }
}

static void test_format_round_trip(void **state)
{
    (void)state;
    char buf[64];
    gp_logs_format_time(NOW + 250, buf, sizeof(buf));
    assert_string_equal(buf, "2026-05-01T12:00:00.250Z");
    gp_logs_format_time(0, buf, sizeof(buf));
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    for (int64_t ms = -86400000LL * 800; ms < 86400000LL * 40000; ms += 86399999LL + 7) {
        int64_t back;
        gp_logs_format_time(ms, buf, sizeof(buf));
        if (gp_logs_parse_since(buf, NOW, &back) != 0 || back != ms) {
            fail_msg("%lld formats as %s, which reads back as %lld", (long long)ms, buf,
                     (long long)back);
        }
    }
}

static void test_times(void **state)
{
    (void)state;
    gp_logs_times t = {0};
    const char *text = "0 1000\n7 2000\nbad line\n9 3000\n12 40";
    long used = gp_logs_times_add(&t, text, strlen(text));
    assert_int_equal(used, (long)strlen(text) - 5); /* "12 40" waits for its newline */
    assert_int_equal(t.n, 3);
    assert_int_equal(gp_logs_times_at(&t, 0), 1000);
    assert_int_equal(gp_logs_times_at(&t, 6), 1000);
    assert_int_equal(gp_logs_times_at(&t, 7), 2000);
    assert_int_equal(gp_logs_times_at(&t, 100), 3000);
    used = gp_logs_times_add(&t, "12 4000\n", 8);
    assert_int_equal(used, 8);
    assert_int_equal(gp_logs_times_at(&t, 12), 4000);
    gp_logs_times_fini(&t);
    assert_int_equal(gp_logs_times_at(&t, 5), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_since),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

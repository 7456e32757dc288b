/*
 * The proxy's HTTP pieces (src/ctl/proxy_http.c): response heads, the chunked coding fed in
 * every split, which Set-Cookie answers a job may give, the Cookie header without the proxy's
 * own cookie, and the path match the router uses.
 */
#include "ctl/proxy.h"
#include "ctl/proxy_http.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_head(void **state)
{
    (void)state;
    const char text[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: a=1\r\n"
                        "Set-Cookie:b=2 \r\n\r\nbody";
    size_t end = px_head_end(text, strlen(text));
    assert_int_equal(end, strlen(text) - 4);
    assert_int_equal(px_head_end(text, end - 1), 0);
    char buf[sizeof(text)];
    memcpy(buf, text, sizeof(text));
    px_head h;
    assert_int_equal(px_head_parse(buf, end, &h), 0);
    assert_int_equal(h.status, 200);
    assert_int_equal(h.minor, 1);
    assert_int_equal(h.nheaders, 3);
    assert_string_equal(px_head_get(&h, "content-type"), "text/html");
    assert_string_equal(h.value[2], "b=2");
    const char *bad[] = {
        "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nNo-Colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char b[128];
        snprintf(b, sizeof(b), "%s", bad[i]);
        assert_int_equal(px_head_parse(b, strlen(b), &h), -1);
    }
    char old[] = "HTTP/1.0 200 OK\r\n\r\n";
    assert_int_equal(px_head_parse(old, strlen(old), &h), 0);
    assert_int_equal(h.minor, 0);
}

/* The same coded body fed whole and split at every byte: the same data, done at the end. */
static void test_chunks(void **state)
{
    (void)state;
    const char coded[] = "5\r\nhello\r\n1;ext=1\r\n,\r\nA\r\n world!!!!\r\n0\r\nTrailer: x\r\n\r\n";
    const char want[] = "hello, world!!!!";
    size_t n = strlen(coded);
    for (size_t split = 0; split <= n; split++) {
        px_chunks c = {0};
        char out[64];
        long a = px_chunks_feed(&c, coded, split, out);
        assert_true(a >= 0);
        long b = px_chunks_feed(&c, coded + split, n - split, out + a);
        assert_true(b >= 0);
        assert_int_equal(a + b, (long)strlen(want));
        assert_memory_equal(out, want, strlen(want));
        assert_true(c.done);
        assert_int_equal(c.extra, 0);
    }
    /* bytes after the end are not the body's: counted (a tunnel with them is not reused) */
    px_chunks after = {0};
    char got[64], more[80];
    snprintf(more, sizeof(more), "%sHTTP/1.1", coded);
    assert_int_equal(px_chunks_feed(&after, more, strlen(more), got), (long)strlen(want));
    assert_true(after.done);
    assert_int_equal(after.extra, 8);
    const char *bad[] = {"x\r\n", "5\r\nhelloXX", "5\n", "11111111111111111\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        px_chunks c = {0};
        char out[64];
        assert_int_equal(px_chunks_feed(&c, bad[i], strlen(bad[i]), out), -1);
    }
}

/* What a Set-Cookie becomes: want NULL means dropped. */
static void scoped(const char *value, const char *want)
{
    char out[256];
    bool ok = px_set_cookie_scope(value, "/v1/jobs/7/proxy/", "gp_proxy", out, sizeof(out));
    if (!want) {
        assert_false(ok);
        return;
    }
    assert_true(ok);
    assert_string_equal(out, want);
}

static void test_set_cookie(void **state)
{
    (void)state;
    scoped("a=1", "a=1");
    scoped("a=1; Path=/v1/jobs/7/proxy/; HttpOnly", "a=1; Path=/v1/jobs/7/proxy/; HttpOnly");
    scoped("a=1;path=/v1/jobs/7/proxy/lab", "a=1; path=/v1/jobs/7/proxy/lab");
    scoped("a=1; Path=/v1/jobs/7/proxy", "a=1; Path=/v1/jobs/7/proxy");
    /* outside the job's prefix: scoped to it */
    scoped("_xsrf=2|ab; Path=/; Expires=Sun, 01 Jan 2040 00:00:00 GMT",
           "_xsrf=2|ab; Path=/v1/jobs/7/proxy/; Expires=Sun, 01 Jan 2040 00:00:00 GMT");
    scoped("a=1; Path=/v1/jobs/70/proxy/", "a=1; Path=/v1/jobs/7/proxy/");
    scoped("a=1; Path=/v1/jobs/7/pro", "a=1; Path=/v1/jobs/7/proxy/");
    scoped("a=1; Path=/v1/jobs/7/proxy/; Path=/", "a=1; Path=/v1/jobs/7/proxy/; "
                                                  "Path=/v1/jobs/7/proxy/");
    /* dropped */
    scoped("a=1; Domain=example.com", NULL);
    scoped("a=1; Path=/x; domain=.example.com", NULL);
    scoped("gp_proxy=forged; Path=/v1/jobs/7/proxy/", NULL);
    scoped("", NULL);
    scoped("novalue", NULL);
    char small[8];
    assert_false(
        px_set_cookie_scope("a=1; Path=/", "/v1/jobs/7/proxy/", "gp_proxy", small, sizeof(small)));
}

static void test_cookies(void **state)
{
    (void)state;
    char out[128];
    px_cookie_strip("a=1; gp_proxy=secret; b=2", "gp_proxy", out, sizeof(out));
    assert_string_equal(out, "a=1; b=2");
    px_cookie_strip("gp_proxy=secret", "gp_proxy", out, sizeof(out));
    assert_string_equal(out, "");
    px_cookie_strip("gp_proxy2=x;gp_proxy=y", "gp_proxy", out, sizeof(out));
    assert_string_equal(out, "gp_proxy2=x");
    assert_true(px_cookie_get("a=1; gp_proxy=secret; b=2", "gp_proxy", out, sizeof(out)));
    assert_string_equal(out, "secret");
    assert_false(px_cookie_get("a=1", "gp_proxy", out, sizeof(out)));
    assert_false(px_cookie_get("gp_proxy=0123456789", "gp_proxy", out, 5));
}

static void test_path(void **state)
{
    (void)state;
    char job[64];
    assert_true(px_path_match("/v1/jobs/7/proxy/", job, sizeof(job)));
    assert_string_equal(job, "7");
    assert_true(px_path_match("/v1/jobs/nb/proxy/api/kernels", job, sizeof(job)));
    assert_string_equal(job, "nb");
    assert_true(px_path_match("/v1/jobs/nb/proxy", job, sizeof(job)));
    assert_false(px_path_match("/v1/jobs/nb/proxy-session", job, sizeof(job)));
    assert_false(px_path_match("/v1/jobs/nb/logs", job, sizeof(job)));
    assert_false(px_path_match("/v1/jobs//proxy/", job, sizeof(job)));
    assert_true(px_hop_header("transfer-encoding"));
    assert_false(px_hop_header("Content-Type"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head),       cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_set_cookie), cmocka_unit_test(test_cookies),
        cmocka_unit_test(test_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Server lists and following the leader (net/servers.h): parsing and its refusals, origin
 * matching, the classification of answers, the failover choice step by step; then a client over
 * real HTTP servers on 127.0.0.1 (a dead port, a follower answering 307 or 503, a leader): it
 * reaches the leader, starts the next call there, and never sends anything (its token) to a
 * server a redirect names outside its list.
 */
#include "gpupool/error.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/servers.h"
#include "tests/unit/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_parse(void **state)
{
    (void)state;
    gp_servers s;
    gp_diag d;
    char out[2048];
    assert_int_equal(gp_servers_parse(" http://A.example:7070/ , 10.0.0.2:7070,"
                                      "https://[::1]:8443/api//",
                                      &s, &d),
                     0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.url[0], "http://a.example:7070");
    assert_string_equal(s.url[1], "http://10.0.0.2:7070");
    assert_string_equal(s.url[2], "https://[::1]:8443/api");
    assert_int_equal(gp_servers_format(&s, out, sizeof(out)), 0);
    assert_string_equal(out, "http://a.example:7070,http://10.0.0.2:7070,https://[::1]:8443/api");
    assert_int_equal(gp_servers_format(&s, out, 10), -1);
    assert_int_equal(gp_servers_parse("http://127.0.0.1:7070", &s, &d), 0);
    assert_int_equal(s.n, 1);
}

static void refused(const char *text, const char *want)
{
    gp_servers s;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_servers_parse(text, &s, &d), GP_EINVAL);
    assert_int_equal(s.n, 0);
    if (!strstr(d.msg, want)) {
        fail_msg("\"%s\": message \"%s\" lacks \"%s\"", text, d.msg, want);
    }
}

static void test_parse_refusals(void **state)
{
    (void)state;
    refused("", "entry 1 is empty");
    refused("http://a:1,,http://b:2", "entry 2 is empty");
    refused("http://a:1, ", "entry 2 is empty");
    refused("ftp://a:21", "entry 1 (ftp://a:21): the scheme must be http or https");
    refused("http://a:1,http://user:pw@b:2", "entry 2 (http://user:pw@b:2): user info");
    refused("http://:7070", "no host");
    refused("http://a:0", "the port must be 1 to 65535");
    refused("http://a:65536", "the port must be 1 to 65535");
    refused("http://a:70x", "the port must be 1 to 65535");
    refused("http://a:", "the port must be 1 to 65535");
    refused("http://a:1/x?y=1", "a query or fragment");
    refused("http://a b:1", "bad character in the host");
    refused("http://[::1:7070", "closing ']'");
    refused("http://a:80,http://A", "entry 2 (http://A) repeats entry 1");
    refused("https://a,https://a:443/other", "repeats entry 1");
    char many[512] = "";
    for (int i = 0; i <= GP_SERVERS_MAX; i++) {
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%shttp://h%d:1", i ? "," : "",
                 i);
    }
    refused(many, "more than 8 servers");
    char big[700];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    refused(big, "entry 1 is too long");
}

static void test_find(void **state)
{
    (void)state;
    gp_servers s;
    gp_diag d;
    assert_int_equal(gp_servers_parse("http://a:7070,https://b,http://c/prefix", &s, &d), 0);
    assert_int_equal(gp_servers_find(&s, "http://a:7070/v1/jobs?x=1"), 0);
    assert_int_equal(gp_servers_find(&s, "HTTP://A:7070"), 0);
    assert_int_equal(gp_servers_find(&s, "https://b:443/v1/jobs"), 1);
    assert_int_equal(gp_servers_find(&s, "http://c:80"), 2);
    assert_int_equal(gp_servers_find(&s, "http://b"), -1);      /* another scheme */
    assert_int_equal(gp_servers_find(&s, "http://a:7071"), -1); /* another port */
    assert_int_equal(gp_servers_find(&s, "http://evil:7070"), -1);
    assert_int_equal(gp_servers_find(&s, "http://a:7070@evil/"), -1); /* user info */
    assert_int_equal(gp_servers_find(&s, "a:7070"), -1);              /* not a URL */
    assert_int_equal(gp_servers_find(&s, "/v1/jobs"), -1);
    assert_int_equal(gp_servers_find(&s, NULL), -1);
}

static void test_classify(void **state)
{
    (void)state;
    gp_servers s;
    gp_diag d;
    int hint;
    assert_int_equal(gp_servers_parse("http://a:1,http://b:2", &s, &d), 0);
    assert_int_equal(gp_servers_classify(&s, 307, "http://b:2/v1/jobs", "", 0, &hint),
                     GP_SERVERS_NOT_LEADER);
    assert_int_equal(hint, 1);
    assert_int_equal(gp_servers_classify(&s, 307, "http://evil:2/v1/jobs", "", 0, &hint),
                     GP_SERVERS_NOT_LEADER);
    assert_int_equal(hint, -1);
    const char *lead = "{\"error\":{\"message\":\"not the leader\"},\"leader\":\"http://b:2\"}";
    assert_int_equal(gp_servers_classify(&s, 307, NULL, lead, strlen(lead), &hint),
                     GP_SERVERS_NOT_LEADER);
    assert_int_equal(hint, 1);
    assert_int_equal(gp_servers_classify(&s, 503, NULL, lead, strlen(lead), &hint),
                     GP_SERVERS_NOT_LEADER);
    assert_int_equal(hint, 1);
    const char *none = "{\"error\":{\"message\":\"no leader\"},\"leader\":null}";
    assert_int_equal(gp_servers_classify(&s, 503, NULL, none, strlen(none), &hint),
                     GP_SERVERS_NOT_LEADER);
    assert_int_equal(hint, -1);
    const char *other = "{\"error\":{\"message\":\"not ready\"}}";
    assert_int_equal(gp_servers_classify(&s, 503, NULL, other, strlen(other), &hint),
                     GP_SERVERS_ANSWER);
    assert_int_equal(gp_servers_classify(&s, 503, NULL, "<html>", 6, &hint), GP_SERVERS_ANSWER);
    assert_int_equal(gp_servers_classify(&s, 200, "http://b:2", lead, strlen(lead), &hint),
                     GP_SERVERS_ANSWER);
    assert_int_equal(hint, -1);
    assert_int_equal(gp_servers_classify(&s, 409, NULL, lead, strlen(lead), &hint),
                     GP_SERVERS_ANSWER);
}

static void test_request_safe(void **state)
{
    (void)state;
    const char *key[] = {"Content-Type: application/json", "idempotency-key: k1", NULL};
    const char *plain[] = {"Content-Type: application/json", NULL};
    assert_true(gp_servers_request_safe("GET", NULL));
    assert_true(gp_servers_request_safe("DELETE", NULL));
    assert_true(gp_servers_request_safe("PUT", plain));
    assert_false(gp_servers_request_safe("POST", NULL));
    assert_false(gp_servers_request_safe("POST", plain));
    assert_true(gp_servers_request_safe("POST", key));
    assert_false(gp_servers_request_safe("PATCH", plain));
}

static void test_failover_rounds(void **state)
{
    (void)state;
    gp_failover f;
    gp_failover_init(&f, 3);
    f.current = 1; /* B answered last */
    gp_failover_begin(&f);
    /* B, C, A refuse to connect: each tried once, then a round's backoff, and so on. */
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), 0);
    assert_int_equal(f.current, 2);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), 0);
    assert_int_equal(f.current, 0);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), 200);
    assert_int_equal(f.current, 1);
    int waits[] = {400, 800, 1600, 2000};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(gp_failover_after(&f, GP_SERVERS_NOT_LEADER, -1, 0), 0);
        assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), 0);
        assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), waits[r]);
    }
    /* the sixth round ends the call */
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), 0);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), 0);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 0), -1);
    /* an answer stops at once and the next call starts where it came from */
    gp_failover_begin(&f);
    int start = f.current;
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_ANSWER, -1, 0), -1);
    assert_int_equal(f.current, start);
}

static void test_failover_hints(void **state)
{
    (void)state;
    gp_failover f;
    gp_failover_init(&f, 3);
    gp_failover_begin(&f);
    /* A says C leads: straight to C, which answers and stays the start of later calls. */
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_NOT_LEADER, 2, 0), 0);
    assert_int_equal(f.current, 2);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_ANSWER, -1, 0), -1);
    assert_int_equal(f.current, 2);
    /* Two followers naming each other: bounded; the round goes on and ends. */
    gp_failover_begin(&f);
    int attempts = 0, wait = 0;
    while ((wait = gp_failover_after(&f, GP_SERVERS_NOT_LEADER, f.current == 0 ? 1 : 0, 0)) == 0) {
        attempts++;
        assert_true(attempts < 10);
    }
    assert_int_equal(wait, 200);
    /* A hint naming the server itself is no hint. */
    gp_failover_begin(&f);
    int at = f.current;
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_NOT_LEADER, at, 0), 0);
    assert_int_equal(f.current, (at + 1) % 3);
}

static void test_failover_unsafe_and_single(void **state)
{
    (void)state;
    gp_failover f;
    gp_failover_init(&f, 3);
    gp_failover_begin(&f);
    /* a POST lost after sending is not sent again; the next call starts at the next server */
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_MAYBE_SENT, -1, 0), -1);
    assert_int_equal(f.current, 1);
    gp_failover_begin(&f);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_MAYBE_SENT, -1, 1), 0);
    assert_int_equal(f.current, 2);
    /* one server: a transport failure is the caller's; "not the leader" waits and retries */
    gp_failover_init(&f, 1);
    gp_failover_begin(&f);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_UNSENT, -1, 1), -1);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_MAYBE_SENT, -1, 1), -1);
    gp_failover_begin(&f);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_NOT_LEADER, -1, 0), 200);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_NOT_LEADER, -1, 0), 400);
    assert_int_equal(f.current, 0);
    f.rounds = 2;
    gp_failover_begin(&f);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_NOT_LEADER, -1, 0), 200);
    assert_int_equal(gp_failover_after(&f, GP_SERVERS_NOT_LEADER, -1, 0), -1);
}

/* ---- over real HTTP ---- */

typedef enum role { LEADER, FOLLOWER_307, FOLLOWER_503, FOLLOWER_OUTSIDE } role;

typedef struct fake {
    role role;
    char leader[128];  /* the URL a follower names */
    atomic_int calls;  /* requests received */
    atomic_int authed; /* of which with the client's token */
    gp_http_server *srv;
    char url[64];
} fake;

static void fake_handler(void *ctx, const gp_http_request *req, gp_http_response *resp)
{
    fake *f = ctx;
    atomic_fetch_add(&f->calls, 1);
    const char *auth = gp_http_request_header(req, "Authorization");
    if (auth && strcmp(auth, "Bearer secret") == 0) {
        atomic_fetch_add(&f->authed, 1);
    }
    char body[512];
    int n;
    switch (f->role) {
    case LEADER:
        n = snprintf(body, sizeof(body), "{\"served_by\":\"%s\",\"path\":\"%s\"}", f->url,
                     req->path);
        gp_http_response_set_body(resp, 200, NULL, strdup(body), (size_t)n);
        return;
    case FOLLOWER_307:
    case FOLLOWER_OUTSIDE:
        snprintf(body, sizeof(body), "%s%s", f->leader, req->path);
        gp_http_response_add_header(resp, "Location", body);
        n = snprintf(body, sizeof(body),
                     "{\"error\":{\"code\":\"GP_EUNAVAIL\",\"message\":\"not the leader\"},"
                     "\"leader\":\"%s\"}",
                     f->leader);
        gp_http_response_set_body(resp, 307, NULL, strdup(body), (size_t)n);
        return;
    case FOLLOWER_503:
        n = snprintf(body, sizeof(body),
                     "{\"error\":{\"code\":\"GP_EUNAVAIL\",\"message\":\"no leader\"},"
                     "\"leader\":null}");
        gp_http_response_set_body(resp, 503, NULL, strdup(body), (size_t)n);
        return;
    }
}

static void fake_start(fake *f, role r, const char *leader)
{
    memset(f, 0, sizeof(*f));
    f->role = r;
    snprintf(f->leader, sizeof(f->leader), "%s", leader ? leader : "");
    gp_http_server_config cfg = {.host = "127.0.0.1", .port = 0, .max_body = 4096};
    gp_diag d;
    assert_int_equal(gp_http_server_start(&cfg, fake_handler, f, &f->srv, &d), 0);
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d", gp_http_server_port(f->srv));
}

/* A port nothing listens on: bound, then closed. */
static int dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

static char *get(gp_http_client *c, const char *method, int *status, int *rc)
{
    char *body = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    *rc = gp_http_call(c, method, "/v1/x", method[0] == 'P' ? "{}" : NULL, 2, NULL, status, &body,
                       NULL, &d);
    return body;
}

static void test_client_follows_leader(void **state)
{
    (void)state;
    fake leader, f307, f503;
    fake_start(&leader, LEADER, NULL);
    fake_start(&f307, FOLLOWER_307, leader.url);
    fake_start(&f503, FOLLOWER_503, NULL);
    char list[512];
    snprintf(list, sizeof(list), "http://127.0.0.1:%d,%s,%s,%s", dead_port(), f503.url, f307.url,
             leader.url);
    gp_http_client *c;
    gp_diag d;
    assert_int_equal(gp_http_client_new_servers(list, "secret", &c, &d), 0);
    gp_http_client_set_failover(c, 2, 10);
    int status = 0, rc = 0;
    /* dead port, then 503 (next), then 307 naming the leader (followed) */
    char *body = get(c, "POST", &status, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, leader.url));
    free(body);
    assert_int_equal(atomic_load(&f503.calls), 1);
    assert_int_equal(atomic_load(&f307.calls), 1);
    assert_int_equal(atomic_load(&leader.calls), 1);
    assert_int_equal(atomic_load(&leader.authed), 1);
    assert_string_equal(gp_http_client_server(c), leader.url);
    /* the next call goes to the leader straight away */
    body = get(c, "GET", &status, &rc);
    assert_int_equal(status, 200);
    free(body);
    assert_int_equal(atomic_load(&leader.calls), 2);
    assert_int_equal(atomic_load(&f307.calls) + atomic_load(&f503.calls), 2);
    gp_http_client_free(c);
    gp_http_server_stop(leader.srv);
    gp_http_server_stop(f307.srv);
    gp_http_server_stop(f503.srv);
}

static void test_client_never_leaves_list(void **state)
{
    (void)state;
    fake outside, follower, f503;
    fake_start(&outside, LEADER, NULL); /* answers anything: a host the user did not name */
    fake_start(&follower, FOLLOWER_OUTSIDE, outside.url);
    fake_start(&f503, FOLLOWER_503, NULL);
    char list[512];
    snprintf(list, sizeof(list), "%s,%s", follower.url, f503.url);
    gp_http_client *c;
    gp_diag d;
    assert_int_equal(gp_http_client_new_servers(list, "secret", &c, &d), 0);
    gp_http_client_set_failover(c, 2, 10);
    int status = 0, rc = 0;
    char *body = get(c, "GET", &status, &rc);
    /* no leader in the list: the last answer (the 503's) is the call's */
    assert_int_equal(rc, 0);
    assert_int_equal(status, 503);
    assert_non_null(strstr(body, "\"leader\":null"));
    free(body);
    assert_int_equal(atomic_load(&outside.calls), 0);
    assert_int_equal(atomic_load(&follower.calls), 2);
    assert_int_equal(atomic_load(&f503.calls), 2);
    gp_http_client_free(c);
    /* a client of one URL gets the 307 as is: curl follows nothing by itself */
    assert_int_equal(gp_http_client_new(follower.url, "secret", &c, &d), 0);
    body = get(c, "GET", &status, &rc);
    assert_int_equal(status, 307);
    free(body);
    assert_int_equal(atomic_load(&outside.calls), 0);
    gp_http_client_free(c);
    gp_http_server_stop(outside.srv);
    gp_http_server_stop(follower.srv);
    gp_http_server_stop(f503.srv);
}

static void test_client_all_dead(void **state)
{
    (void)state;
    char list[128];
    snprintf(list, sizeof(list), "http://127.0.0.1:%d,127.0.0.1:%d", dead_port(), dead_port());
    gp_http_client *c;
    gp_diag d;
    assert_int_equal(gp_http_client_new_servers(list, NULL, &c, &d), 0);
    gp_http_client_set_failover(c, 2, 1);
    int status = 0;
    char *body = NULL;
    gp_diag_clear(&d);
    assert_int_equal(gp_http_call(c, "GET", "/", NULL, 0, NULL, &status, &body, NULL, &d), GP_EIO);
    assert_null(body);
    assert_non_null(strstr(d.msg, "connect to http://127.0.0.1:"));
    gp_http_client_free(c);
    assert_int_equal(gp_http_client_new_servers("http://a,,http://b", NULL, &c, &d), GP_EINVAL);
    assert_null(c);
    assert_non_null(strstr(d.msg, "entry 2 is empty"));
}

int main(void)
{
    gp_http_client_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_request_safe),
        cmocka_unit_test(test_failover_rounds),
        cmocka_unit_test(test_failover_hints),
        cmocka_unit_test(test_failover_unsafe_and_single),
        cmocka_unit_test(test_client_follows_leader),
        cmocka_unit_test(test_client_never_leaves_list),
        cmocka_unit_test(test_client_all_dead),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gp_http_client_global_cleanup();
    return rc;
}

/*
 * Submits answered from the committer (router.c api_run_async, commit.c ctl_run_op_async): a
 * real gpupoold (ctl_start, its committer and HTTP API on 127.0.0.1 with ONE server thread,
 * SQLite in a temp dir). The test holds the committer in an op of its own, so submits stay
 * queued behind it for as long as it likes:
 *   - a queued submit holds no server thread: the one thread still answers other requests,
 *     and the submit is not answered before its group commits;
 *   - a submit whose op fails in the committer (a tenant quota it can never fit) is answered its
 *     4xx with the message; one refused before it is queued (a bad spec) too;
 *   - the server stops with submits still queued: it waits for the committer's answers (a 201
 *     for a job that is stored, never a 503 for it), then stops; nothing leaks.
 */
#include "ctl/server.h"
#include "net/http_client.h"

#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct pool {
    char dir[256];
    gp_ctl_config cfg;
    gpupoold g;
    gp_http_server *http;
    char base[64];
    char admin[256];
} pool;

static pool P;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void read_token(const char *name, char *buf, size_t cap)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", P.dir, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, (int)cap, f));
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

static void start(void)
{
    snprintf(P.dir, sizeof(P.dir), "/tmp/gp-intake.XXXXXX");
    assert_non_null(mkdtemp(P.dir));
    char *argv[] = {"gpupoold", "--data-dir", P.dir, "--scheduler-interval", "1h"};
    gp_ctl_cli cli;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(
        gp_ctl_config_load((int)(sizeof(argv) / sizeof(argv[0])), argv, NULL, &P.cfg, &cli, &d), 0);
    assert_int_equal(ctl_start(&P.g, &P.cfg, &d), 0);
    /* one server thread: a handler that held it would hold every other request */
    gp_http_server_config hc = {.host = "127.0.0.1", .port = 0, .threads = 1, .max_body = 1 << 20};
    assert_int_equal(gp_http_server_start(&hc, ctl_http_handle, &P.g, &P.http, &d), 0);
    snprintf(P.base, sizeof(P.base), "http://127.0.0.1:%d", gp_http_server_port(P.http));
    read_token("admin.token", P.admin, sizeof(P.admin));
}

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", P.dir);
    assert_int_equal(system(cmd), 0);
}

static void stop(void)
{
    gp_http_server_stop(P.http);
    P.http = NULL;
    ctl_stop(&P.g);
    remove_dir();
}

/* One call as the admin; *out (may be NULL) gets the answer's document. The status, or 0 when
 * no answer came (connection closed, timeout). */
static int call(const char *method, const char *path, const char *body, json_t **out)
{
    gp_http_client *c = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_http_client_new(P.base, P.admin, &c, &d), 0);
    gp_http_client_set_timeout(c, 20000, 5000);
    int status = 0;
    char *resp = NULL;
    int rc = gp_http_call(c, method, path, body, body ? strlen(body) : 0, NULL, &status, &resp,
                          NULL, &d);
    gp_http_client_free(c);
    if (out) {
        *out = rc == 0 && resp ? json_loads(resp, 0, NULL) : NULL;
    }
    free(resp);
    return rc == 0 ? status : 0;
}

static void setup_pool(void)
{
    char node[1024];
    snprintf(node, sizeof(node),
             "{\"name\":\"n0\",\"address\":\"127.0.0.1:0\",\"cpu_milli\":64000,"
             "\"memory_mib\":262144,\"gpus\":[{\"uuid\":\"GPU-n0-0\",\"model\":\"A100-80GB\","
             "\"memory_mib\":81920,\"numa\":0,\"nvlink\":[]},{\"uuid\":\"GPU-n0-1\","
             "\"model\":\"A100-80GB\",\"memory_mib\":81920,\"numa\":0,\"nvlink\":[]}]}");
    assert_int_equal(call("POST", "/v1/nodes", node, NULL), 201);
    assert_int_equal(call("POST", "/v1/tenants", "{\"name\":\"t1\",\"quota\":{\"gpus\":1}}", NULL),
                     201);
}

/* A submit made from a thread of its own. */
typedef struct submitter {
    pthread_t t;
    char body[256];
    int status;
    json_t *answer;
    _Atomic int done;
} submitter;

static void *submit_main(void *arg)
{
    submitter *s = arg;
    s->status = call("POST", "/v1/jobs", s->body, &s->answer);
    s->done = 1;
    return NULL;
}

static void submit_start(submitter *s, const char *name)
{
    snprintf(s->body, sizeof(s->body),
             "{\"name\":\"%s\",\"tenant\":\"t1\",\"command\":[\"true\"],"
             "\"resources\":{\"gpus\":1}}",
             name);
    assert_int_equal(pthread_create(&s->t, NULL, submit_main, s), 0);
}

/* The ops queued for the committer. */
static int queued(void)
{
    int n = 0;
    pthread_mutex_lock(&P.g.qlock);
    for (ctl_op *op = P.g.head; op; op = op->next) {
        n++;
    }
    pthread_mutex_unlock(&P.g.qlock);
    return n;
}

/* An op that holds the committer inside its group until released: the ops queued behind it
 * stay queued, countably. */
static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t block_cond = PTHREAD_COND_INITIALIZER;
static int block_state; /* 0 idle, 1 running (holds the committer), 2 released, 3 done */
static ctl_op block_op;

static int block_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    (void)g, (void)op, (void)d;
    pthread_mutex_lock(&block_lock);
    block_state = 1;
    pthread_cond_broadcast(&block_cond);
    while (block_state != 2) {
        pthread_cond_wait(&block_cond, &block_lock);
    }
    pthread_mutex_unlock(&block_lock);
    return 0;
}

static void block_done(ctl_op *op)
{
    assert_int_equal(op->rc, 0);
    pthread_mutex_lock(&block_lock);
    block_state = 3;
    pthread_cond_broadcast(&block_cond);
    pthread_mutex_unlock(&block_lock);
}

static void block_committer(void)
{
    block_op = (ctl_op){.run = block_run};
    block_state = 0;
    ctl_run_op_async(&P.g, &block_op, block_done);
    pthread_mutex_lock(&block_lock);
    while (block_state != 1) {
        pthread_cond_wait(&block_cond, &block_lock);
    }
    pthread_mutex_unlock(&block_lock);
}

static void release_committer(void)
{
    pthread_mutex_lock(&block_lock);
    block_state = 2;
    pthread_cond_broadcast(&block_cond);
    while (block_state != 3) {
        pthread_cond_wait(&block_cond, &block_lock);
    }
    pthread_mutex_unlock(&block_lock);
}

static void wait_queued(int n)
{
    for (int i = 0; i < 2000 && queued() < n; i++) {
        sleep_ms(5);
    }
    assert_int_equal(queued(), n);
}

static void test_queued_submit_holds_no_thread(void **state)
{
    (void)state;
    start();
    setup_pool();
    block_committer();
    submitter s = {0};
    submit_start(&s, "held");
    wait_queued(1);
    /* The one server thread answers while the submit waits for its commit. */
    json_t *doc = NULL;
    assert_int_equal(call("GET", "/healthz", NULL, &doc), 200);
    json_decref(doc);
    sleep_ms(100);
    assert_int_equal(s.done, 0); /* no answer before the commit */
    release_committer();
    pthread_join(s.t, NULL);
    assert_int_equal(s.status, 201);
    assert_string_equal(json_string_value(json_object_get(s.answer, "name")), "held");
    json_decref(s.answer);
    assert_int_equal(call("GET", "/v1/jobs/held", NULL, NULL), 200);
    stop();
}

static void test_failed_op_answers_its_error(void **state)
{
    (void)state;
    start();
    setup_pool();
    json_t *doc = NULL;
    /* refused by the committer's op: more GPUs than the tenant's quota can ever give */
    const char *greedy = "{\"name\":\"greedy\",\"tenant\":\"t1\",\"command\":[\"true\"],"
                         "\"resources\":{\"gpus\":2}}";
    assert_int_equal(call("POST", "/v1/jobs", greedy, &doc), 400);
    const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "quota"));
    json_decref(doc);
    /* refused before it is queued: a bad spec */
    const char *bad = "{\"name\":\"bad\",\"tenant\":\"t1\",\"command\":[\"true\"],"
                      "\"resources\":{\"gpus\":-1}}";
    assert_int_equal(call("POST", "/v1/jobs", bad, &doc), 400);
    msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "resources.gpus"));
    json_decref(doc);
    /* a name already active: the op's 409 */
    const char *one = "{\"name\":\"one\",\"tenant\":\"t1\",\"command\":[\"true\"],"
                      "\"resources\":{\"gpus\":1}}";
    assert_int_equal(call("POST", "/v1/jobs", one, NULL), 201);
    assert_int_equal(call("POST", "/v1/jobs", one, &doc), 409);
    msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "one"));
    json_decref(doc);
    stop();
}

#define INFLIGHT 6

static _Atomic int http_stopped;

static void *http_stop_main(void *arg)
{
    (void)arg;
    gp_http_server_stop(P.http);
    http_stopped = 1;
    return NULL;
}

static void test_stop_with_submits_in_flight(void **state)
{
    (void)state;
    start();
    setup_pool();
    block_committer();
    submitter s[INFLIGHT] = {0};
    for (int i = 0; i < INFLIGHT; i++) {
        char name[16];
        snprintf(name, sizeof(name), "f%d", i);
        submit_start(&s[i], name);
    }
    wait_queued(INFLIGHT);
    /* The server stops while the committer still holds every submit: it does not answer them
     * 503 (the committer will store them), it waits for their answers. */
    http_stopped = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, http_stop_main, NULL), 0);
    sleep_ms(200);
    assert_int_equal(http_stopped, 0);
    for (int i = 0; i < INFLIGHT; i++) {
        assert_int_equal(s[i].done, 0);
    }
    release_committer();
    pthread_join(t, NULL);
    P.http = NULL;
    for (int i = 0; i < INFLIGHT; i++) {
        pthread_join(s[i].t, NULL);
        assert_int_equal(s[i].status, 201); /* committed, and said so */
        json_decref(s[i].answer);
    }
    /* A submit after the stop finds no server. */
    assert_int_equal(call("POST", "/v1/jobs", s[0].body, NULL), 0);
    ctl_stop(&P.g);
    remove_dir();
}

int main(void)
{
    gp_http_client_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_submit_holds_no_thread),
        cmocka_unit_test(test_failed_op_answers_its_error),
        cmocka_unit_test(test_stop_with_submits_in_flight),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gp_http_client_global_cleanup();
    return rc;
}

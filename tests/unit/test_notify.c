/*
 * The controller's Alertmanager notifier (src/ctl/notify.c): the alert documents, the times,
 * the backoff schedule and the alerts.* settings; and the sender against an HTTP receiver in
 * this process that records what it is sent and answers as told (503s, a blocked handler), so
 * that retries, giving up and the full queue's drops are counted as documented. The active
 * alerts (alerts_active.h): one per label set, resolves and lapses, the bound, tenant scoping,
 * and that they are kept without any receiver, committed alerts only.
 */
#include "ctl/alerts_active.h"
#include "ctl/config.h"
#include "ctl/notify.h"
#include "net/http_server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* ---- pure parts ---- */

static void test_time(void **state)
{
    (void)state;
    char buf[40];
    ctl_notify_time(0, buf, sizeof(buf));
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    ctl_notify_time(INT64_C(1714564800250), buf, sizeof(buf));
    assert_string_equal(buf, "2024-05-01T12:00:00.250Z");
    ctl_notify_time(-1, buf, sizeof(buf));
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
}

static void test_backoff(void **state)
{
    (void)state;
    const int64_t want[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000};
    for (int i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++) {
        assert_int_equal(ctl_notify_backoff_ms(i + 1), want[i]);
    }
    assert_int_equal(ctl_notify_backoff_ms(1000), 60000);
    /* retry_max 0: the first failure is the last */
    assert_int_equal(ctl_notify_next_try(100, 1, 100, 0), -1);
    /* retry_max 5m from a first failure at 0: tries at 0, 1, 3, 7, 15, 31, 63, 123, 183, 243 s;
     * the next would be at 303 s, past it */
    int64_t first = 0, now = 0;
    int tries = 1;
    const int64_t at[] = {1000, 3000, 7000, 15000, 31000, 63000, 123000, 183000, 243000};
    for (;;) {
        int64_t next = ctl_notify_next_try(first, tries, now, 300000);
        if (next < 0) {
            break;
        }
        assert_true(tries - 1 < (int)(sizeof(at) / sizeof(at[0])));
        assert_int_equal(next, at[tries - 1]);
        now = next;
        tries++;
    }
    assert_int_equal(tries, 10);
}

static const char *label(json_t *doc, const char *name)
{
    return json_string_value(json_object_get(json_object_get(doc, "labels"), name));
}

static const char *field(json_t *doc, const char *name)
{
    return json_string_value(json_object_get(doc, name));
}

static void test_doc_gpu(void **state)
{
    (void)state;
    static ctl_node n;
    memset(&n, 0, sizeof(n));
    snprintf(n.name, sizeof(n.name), "gpu-07");
    n.ngpus = 4;
    snprintf(n.gpus[3].uuid, sizeof(n.gpus[3].uuid), "GPU-abc");
    snprintf(n.gpus[3].model, sizeof(n.gpus[3].model), "A100-80GB");
    ctl_alert a = {.name = "GpuDrained",
                   .node = &n,
                   .gpu = &n.gpus[3],
                   .summary = "GPU 3 drained",
                   .description = "XID 48",
                   .starts_ms = 1000};
    ctl_alert_ctx c = {
        .now_ms = 5000, .resolve_after_ms = 3600000, .external_url = "https://pool.example/"};
    json_t *doc = ctl_alert_doc(&a, &c);
    assert_non_null(doc);
    assert_string_equal(label(doc, "alertname"), "GpuDrained");
    assert_string_equal(label(doc, "severity"), "warning"); /* the default */
    assert_string_equal(label(doc, "source"), "gpupoold");
    assert_string_equal(label(doc, "Hostname"), "gpu-07");
    assert_string_equal(label(doc, "gpu"), "3");
    assert_string_equal(label(doc, "UUID"), "GPU-abc");
    assert_string_equal(label(doc, "model"), "A100-80GB");
    assert_null(label(doc, "tenant"));
    assert_null(label(doc, "gpupool_job"));
    assert_int_equal(json_object_size(json_object_get(doc, "labels")), 7);
    json_t *ann = json_object_get(doc, "annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "summary")), "GPU 3 drained");
    assert_string_equal(json_string_value(json_object_get(ann, "description")), "XID 48");
    assert_string_equal(field(doc, "startsAt"), "1970-01-01T00:00:01.000Z");
    assert_string_equal(field(doc, "endsAt"), "1970-01-01T01:00:01.000Z"); /* + resolve_after */
    assert_string_equal(field(doc, "generatorURL"), "https://pool.example/v1/nodes/gpu-07");
    json_decref(doc);

    /* resolved: ends now; a GPU pointer not among the node's gives no GPU labels */
    ctl_gpu_info other;
    memset(&other, 0, sizeof(other));
    a.gpu = &other;
    a.resolved = true;
    a.severity = "critical";
    c.external_url = "";
    doc = ctl_alert_doc(&a, &c);
    assert_string_equal(field(doc, "endsAt"), "1970-01-01T00:00:05.000Z");
    assert_string_equal(label(doc, "severity"), "critical");
    assert_null(label(doc, "gpu"));
    assert_null(label(doc, "UUID"));
    assert_null(json_object_get(doc, "generatorURL"));
    json_decref(doc);

    /* an end before the start is moved to the start (Alertmanager refuses it) */
    a.resolved = false;
    a.ends_ms = 10;
    doc = ctl_alert_doc(&a, &c);
    assert_string_equal(field(doc, "endsAt"), field(doc, "startsAt"));
    json_decref(doc);

    a.name = NULL;
    assert_null(ctl_alert_doc(&a, &c));
}

static void test_doc_job(void **state)
{
    (void)state;
    static ctl_job j;
    memset(&j, 0, sizeof(j));
    j.id = 42;
    snprintf(j.name, sizeof(j.name), "train");
    snprintf(j.spec.queue, sizeof(j.spec.queue), "research");
    /* a description cut inside a UTF-8 character still makes a document */
    char desc[] = "restarted after XID 79 \xc3";
    ctl_alert a = {.name = "JobRestartedAfterFault",
                   .job = &j,
                   .tenant = "ignored",
                   .summary = "s",
                   .description = desc,
                   .ends_ms = 99000};
    ctl_alert_ctx c = {.now_ms = 7000,
                       .resolve_after_ms = 1000,
                       .external_url = "http://c:7070",
                       .job_tenant = "team-a"};
    json_t *doc = ctl_alert_doc(&a, &c);
    assert_non_null(doc);
    assert_string_equal(label(doc, "gpupool_job"), "train");
    assert_string_equal(label(doc, "gpupool_job_id"), "42");
    assert_string_equal(label(doc, "queue"), "research");
    assert_string_equal(label(doc, "tenant"), "team-a"); /* the job's, not a->tenant */
    assert_null(label(doc, "Hostname"));
    assert_string_equal(field(doc, "startsAt"), "1970-01-01T00:00:07.000Z"); /* now */
    assert_string_equal(field(doc, "endsAt"), "1970-01-01T00:01:39.000Z");   /* ends_ms */
    assert_string_equal(field(doc, "generatorURL"), "http://c:7070/v1/jobs/42");
    json_t *ann = json_object_get(doc, "annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "description")),
                        "restarted after XID 79 ?");
    json_decref(doc);

    ctl_alert t = {.name = "TenantQuotaExhausted", .tenant = "team-b"};
    doc = ctl_alert_doc(&t, &c);
    assert_string_equal(label(doc, "tenant"), "team-b");
    assert_string_equal(field(doc, "generatorURL"), "http://c:7070/v1/tenants/team-b");
    assert_int_equal(json_object_size(json_object_get(doc, "annotations")), 0);
    json_decref(doc);
}

/* ---- the settings ---- */

static int load(gp_ctl_config *cfg, gp_diag *d, ...)
{
    char *argv[16] = {"gpupoold", "--data-dir", "/nonexistent"};
    int argc = 3;
    va_list ap;
    va_start(ap, d);
    for (char *s; argc < 15 && (s = va_arg(ap, char *));) {
        argv[argc++] = s;
    }
    va_end(ap);
    gp_ctl_cli cli;
    gp_diag_clear(d);
    return gp_ctl_config_load(argc, argv, NULL, cfg, &cli, d);
}

static void test_settings(void **state)
{
    (void)state;
    static gp_ctl_config cfg;
    gp_diag d;
    assert_int_equal(load(&cfg, &d, NULL), 0);
    assert_string_equal(cfg.alerts.alertmanager, "");
    assert_int_equal(cfg.alerts.retry_max_ms, 300000);
    assert_int_equal(cfg.alerts.resolve_after_ms, 3600000);
    assert_string_equal(cfg.alerts.external_url, "");
    assert_int_equal(load(&cfg, &d, "--alerts-alertmanager", "http://a:9093,https://b.example/am",
                          "--alerts-retry-max", "30s", "--alerts-resolve-after", "10m",
                          "--alerts-external-url", "https://gpupool.example", NULL),
                     0);
    assert_string_equal(cfg.alerts.alertmanager, "http://a:9093,https://b.example/am");
    assert_int_equal(cfg.alerts.retry_max_ms, 30000);
    assert_int_equal(cfg.alerts.resolve_after_ms, 600000);
    assert_string_equal(cfg.alerts.external_url, "https://gpupool.example");

    const struct {
        const char *flag, *value, *msg;
    } bad[] = {
        {"--alerts-alertmanager", "ftp://a", "ftp://a: expected an http:// or https:// URL"},
        {"--alerts-alertmanager", "http://", "expected an http:// or https:// URL"},
        {"--alerts-alertmanager", "http://a,,http://b", "an empty entry"},
        {"--alerts-alertmanager", "http://a b", "must not contain spaces"},
        {"--alerts-alertmanager",
         "http://1,http://2,http://3,http://4,http://5,http://6,"
         "http://7,http://8,http://9",
         "at most 8 URLs"},
        {"--alerts-external-url", "http://a,http://b", "at most 1 URL"},
        {"--alerts-resolve-after", "0", "between"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(load(&cfg, &d, bad[i].flag, bad[i].value, NULL), GP_EINVAL);
        if (!strstr(d.msg, bad[i].msg) || !strstr(d.msg, bad[i].flag)) {
            fail_msg("%s %s: %s (expected %s)", bad[i].flag, bad[i].value, d.msg, bad[i].msg);
        }
    }
}

/* ---- the sender against a receiver in this process ---- */

typedef struct receiver_state {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int fail_next; /* answer 503 to this many posts */
    int refuse;    /* answer 400 */
    bool block;    /* hold posts until cleared */
    bool inside;   /* a post is being held */
    int posts;
    int alerts;       /* alerts received in 2xx-answered posts */
    char first[64];   /* alertname of the first alert received */
    bool bad_request; /* not POST /api/v2/alerts with a JSON array */
} receiver_state;

static receiver_state rs;

static void handler(void *ctx, const gp_http_request *req, gp_http_response *resp)
{
    (void)ctx;
    json_t *body = json_loads(req->body, 0, NULL);
    pthread_mutex_lock(&rs.lock);
    rs.posts++;
    if (strcmp(req->method, "POST") != 0 || strcmp(req->path, "/api/v2/alerts") != 0 ||
        !json_is_array(body)) {
        rs.bad_request = true;
    }
    rs.inside = true;
    pthread_cond_broadcast(&rs.cond);
    while (rs.block) {
        pthread_cond_wait(&rs.cond, &rs.lock);
    }
    rs.inside = false;
    int status = 200;
    if (rs.fail_next > 0) {
        rs.fail_next--;
        status = 503;
    } else if (rs.refuse) {
        status = 400;
    } else {
        if (rs.alerts == 0 && json_array_size(body) > 0) {
            snprintf(rs.first, sizeof(rs.first), "%s",
                     json_string_value(json_object_get(
                         json_object_get(json_array_get(body, 0), "labels"), "alertname")));
        }
        rs.alerts += (int)json_array_size(body);
    }
    pthread_cond_broadcast(&rs.cond);
    pthread_mutex_unlock(&rs.lock);
    json_decref(body);
    gp_http_response_set_body(resp, status, NULL, NULL, 0);
}

/* Waits (up to a minute: a bound for a broken build, not a measurement) for what. */
#define WAIT_FOR(what)                                                                             \
    do {                                                                                           \
        struct timespec until_;                                                                    \
        clock_gettime(CLOCK_REALTIME, &until_);                                                    \
        until_.tv_sec += 60;                                                                       \
        pthread_mutex_lock(&rs.lock);                                                              \
        while (!(what) && pthread_cond_timedwait(&rs.cond, &rs.lock, &until_) == 0) {              \
        }                                                                                          \
        bool ok_ = (what);                                                                         \
        pthread_mutex_unlock(&rs.lock);                                                            \
        if (!ok_) {                                                                                \
            fail_msg("timed out waiting for " #what);                                              \
        }                                                                                          \
    } while (0)

static gpupoold g;
static gp_ctl_config cfg;
static gp_http_server *srv;

static void setup_sender(int64_t retry_max_ms, bool dead_first)
{
    memset(&rs, 0, sizeof(rs));
    pthread_mutex_init(&rs.lock, NULL);
    pthread_cond_init(&rs.cond, NULL);
    gp_http_server_config hc = {.port = 0, .threads = 2, .max_body = 16 << 20};
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_http_server_start(&hc, handler, NULL, &srv, &d), 0);
    gp_ctl_config_default(&cfg);
    if (dead_first) {
        /* a port nothing listens on (port 1 needs root to listen on) first */
        snprintf(cfg.alerts.alertmanager, sizeof(cfg.alerts.alertmanager),
                 "http://127.0.0.1:1,http://127.0.0.1:%d", gp_http_server_port(srv));
    } else {
        snprintf(cfg.alerts.alertmanager, sizeof(cfg.alerts.alertmanager), "http://127.0.0.1:%d",
                 gp_http_server_port(srv));
    }
    cfg.alerts.retry_max_ms = retry_max_ms;
    memset(&g, 0, sizeof(g));
    g.cfg = &cfg;
    atomic_init(&g.metrics.alerts_sent, 0);
    atomic_init(&g.metrics.alerts_failed, 0);
    assert_int_equal(ctl_notify_start(&g, &d), 0);
    assert_non_null(g.notify);
}

static void teardown_sender(void)
{
    ctl_notify_stop(&g);
    assert_null(g.notify);
    gp_http_server_stop(srv);
    assert_false(rs.bad_request);
}

static void raise_alert(const char *name)
{
    ctl_alert a = {.name = name, .tenant = "t", .summary = "s"};
    ctl_notify(&g, &a);
}

static long long sent(void)
{
    return atomic_load(&g.metrics.alerts_sent);
}

static long long failed(void)
{
    return atomic_load(&g.metrics.alerts_failed);
}

static void test_sender_retries(void **state)
{
    (void)state;
    setup_sender(300000, false);
    /* rolled back: never sent */
    size_t mark = ctl_notify_mark(&g);
    raise_alert("RolledBack");
    ctl_notify_rollback(&g, mark);
    pthread_mutex_lock(&rs.lock);
    rs.fail_next = 2; /* 503, 503, then taken: after 1 s and 2 s of backoff */
    pthread_mutex_unlock(&rs.lock);
    raise_alert("First");
    raise_alert("Second");
    ctl_notify_publish(&g);
    WAIT_FOR(rs.alerts == 2);
    teardown_sender(); /* the counters are final once the sender has stopped */
    assert_int_equal(rs.posts, 3);
    assert_string_equal(rs.first, "First");
    assert_int_equal(sent(), 2);
    assert_int_equal(failed(), 0);
}

static void test_sender_gives_up(void **state)
{
    (void)state;
    /* retry_max 0: a failure is final; the second receiver is unaffected by the first (down) */
    setup_sender(0, true);
    raise_alert("A");
    ctl_notify_publish(&g);
    WAIT_FOR(rs.alerts == 1);
    pthread_mutex_lock(&rs.lock);
    rs.refuse = 1;
    pthread_mutex_unlock(&rs.lock);
    raise_alert("B");
    ctl_notify_publish(&g);
    WAIT_FOR(rs.posts == 2);
    teardown_sender(); /* the sender has finished every batch when it stops */
    /* A: sent to the live receiver, failed at the dead one; B: refused (400) and failed */
    assert_int_equal(sent(), 1);
    assert_int_equal(failed(), 3);
}

static void test_sender_queue_full(void **state)
{
    (void)state;
    setup_sender(300000, false);
    pthread_mutex_lock(&rs.lock);
    rs.block = true;
    pthread_mutex_unlock(&rs.lock);
    raise_alert("Held");
    ctl_notify_publish(&g);
    WAIT_FOR(rs.inside);
    /* the ring holds the held alert (taken, not yet freed) and CTL_NOTIFY_QUEUE - 1 more */
    const int extra = 10;
    for (int i = 0; i < CTL_NOTIFY_QUEUE + extra; i++) {
        raise_alert(i < extra ? "Dropped" : "Kept");
    }
    ctl_notify_publish(&g);
    assert_int_equal(failed(), extra); /* the taken one is not counted */
    pthread_mutex_lock(&rs.lock);
    rs.block = false;
    pthread_cond_broadcast(&rs.cond);
    pthread_mutex_unlock(&rs.lock);
    WAIT_FOR(rs.alerts == 1 + CTL_NOTIFY_QUEUE);
    teardown_sender();
    assert_int_equal(sent(), 1 + CTL_NOTIFY_QUEUE);
    assert_int_equal(failed(), extra);
    assert_string_equal(rs.first, "Held");
}

/* ---- the active alerts ---- */

#define T0 INT64_C(1714564800000)

/* An Alertmanager document as JSON text (free it). */
static char *am_text(const char *name, const char *tenant, int64_t starts, int64_t ends,
                     bool resolved, int64_t now)
{
    ctl_alert a = {.name = name,
                   .tenant = tenant,
                   .summary = "sum",
                   .description = "desc",
                   .starts_ms = starts,
                   .ends_ms = ends,
                   .resolved = resolved};
    ctl_alert_ctx c = {.now_ms = now, .resolve_after_ms = 3600000};
    json_t *doc = ctl_alert_doc(&a, &c);
    assert_non_null(doc);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    assert_non_null(text);
    return text;
}

static void put(ctl_alerts_active *a, const char *name, const char *tenant, int64_t starts,
                int64_t ends, bool resolved, int64_t now)
{
    char *text = am_text(name, tenant, starts, ends, resolved, now);
    assert_int_equal(ctl_alerts_active_put(a, text, now), 0);
    free(text);
}

/* The names of the listed items, comma-separated. */
static void names(ctl_alerts_active *a, const char *tenant, int64_t now, char *buf, size_t cap)
{
    json_t *doc = ctl_alerts_active_list(a, tenant, now);
    assert_non_null(doc);
    buf[0] = '\0';
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(doc, "items"), i, item)
    {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, "%s%s", n ? "," : "",
                 json_string_value(json_object_get(item, "name")));
    }
    json_decref(doc);
}

static void test_active_list(void **state)
{
    (void)state;
    ctl_alerts_active *a;
    assert_int_equal(ctl_alerts_active_new(&a), 0);
    char buf[4096];
    put(a, "A", "t1", T0, 0, false, T0);         /* ends T0 + 1h */
    put(a, "B", NULL, T0, T0 + 1000, false, T0); /* lapses at T0 + 1s */
    put(a, "C", "t2", T0, T0 + 7200000, false, T0);
    names(a, NULL, T0, buf, sizeof(buf));
    assert_string_equal(buf, "C,B,A"); /* the most recently raised first */

    /* The item: name, severity, labels, texts, times. */
    json_t *doc = ctl_alerts_active_list(a, NULL, T0);
    json_t *c = json_array_get(json_object_get(doc, "items"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "severity")), "warning");
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "labels"), "tenant")),
                        "t2");
    assert_string_equal(json_string_value(json_object_get(c, "summary")), "sum");
    assert_string_equal(json_string_value(json_object_get(c, "description")), "desc");
    assert_int_equal(json_integer_value(json_object_get(c, "starts_ms")), T0);
    assert_int_equal(json_integer_value(json_object_get(c, "ends_ms")), T0 + 7200000);
    json_decref(doc);

    /* Users: their tenant's and those naming none. */
    names(a, "t1", T0, buf, sizeof(buf));
    assert_string_equal(buf, "B,A");
    names(a, "t2", T0, buf, sizeof(buf));
    assert_string_equal(buf, "C,B");
    names(a, "t3", T0, buf, sizeof(buf));
    assert_string_equal(buf, "B");

    /* The same labels again replace the alert (and make it the latest); a lapsed one is gone. */
    put(a, "A", "t1", T0, T0 + 9000000, false, T0 + 500);
    names(a, NULL, T0 + 500, buf, sizeof(buf));
    assert_string_equal(buf, "A,C,B");
    names(a, NULL, T0 + 1000, buf, sizeof(buf));
    assert_string_equal(buf, "A,C");
    /* Another tenant's label makes another alert; a resolve removes only its own. */
    put(a, "A", "t9", T0, 0, false, T0 + 2000);
    put(a, "A", "t1", T0, 0, true, T0 + 3000);
    names(a, NULL, T0 + 3000, buf, sizeof(buf));
    assert_string_equal(buf, "A,C");
    names(a, "t1", T0 + 3000, buf, sizeof(buf));
    assert_string_equal(buf, "");
    /* Not an alert document: refused, nothing changes. */
    assert_int_equal(ctl_alerts_active_put(a, "{\"labels\": {}}", T0), GP_EINVAL);
    assert_int_equal(ctl_alerts_active_put(a, "not json", T0), GP_EINVAL);
    names(a, NULL, T0 + 3000, buf, sizeof(buf));
    assert_string_equal(buf, "A,C");
    ctl_alerts_active_free(a);

    /* The bound: the least recently raised go first. */
    assert_int_equal(ctl_alerts_active_new(&a), 0);
    char name[32];
    for (int i = 0; i < CTL_ALERTS_ACTIVE_MAX + 3; i++) {
        snprintf(name, sizeof(name), "N%d", i);
        put(a, name, NULL, T0, 0, false, T0);
    }
    doc = ctl_alerts_active_list(a, NULL, T0);
    json_t *items = json_object_get(doc, "items");
    assert_int_equal(json_array_size(items), CTL_ALERTS_ACTIVE_MAX);
    snprintf(name, sizeof(name), "N%d", CTL_ALERTS_ACTIVE_MAX + 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(items, 0), "name")), name);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(items, CTL_ALERTS_ACTIVE_MAX - 1), "name")),
                        "N3");
    json_decref(doc);
    ctl_alerts_active_free(a);
    ctl_alerts_active_free(NULL);
}

/* Without receivers the notifier still keeps the active alerts, of committed changes only. */
static void test_active_without_receivers(void **state)
{
    (void)state;
    gp_ctl_config c;
    gp_ctl_config_default(&c);
    assert_string_equal(c.alerts.alertmanager, "");
    memset(&g, 0, sizeof(g));
    g.cfg = &c;
    atomic_init(&g.metrics.alerts_sent, 0);
    atomic_init(&g.metrics.alerts_failed, 0);
    json_t *doc = ctl_notify_active(&g, NULL, ctl_now_ms()); /* no notifier yet */
    assert_int_equal(json_array_size(json_object_get(doc, "items")), 0);
    json_decref(doc);
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(ctl_notify_start(&g, &d), 0);
    assert_non_null(g.notify);
    size_t mark = ctl_notify_mark(&g);
    raise_alert("RolledBack");
    ctl_notify_rollback(&g, mark);
    raise_alert("Kept");
    doc = ctl_notify_active(&g, NULL, ctl_now_ms());
    assert_int_equal(json_array_size(json_object_get(doc, "items")), 0); /* not committed yet */
    json_decref(doc);
    ctl_notify_publish(&g);
    doc = ctl_notify_active(&g, NULL, ctl_now_ms());
    json_t *items = json_object_get(doc, "items");
    assert_int_equal(json_array_size(items), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(items, 0), "name")),
                        "Kept");
    json_decref(doc);
    doc = ctl_notify_active(&g, "other", ctl_now_ms()); /* raise_alert labels tenant t */
    assert_int_equal(json_array_size(json_object_get(doc, "items")), 0);
    json_decref(doc);
    ctl_notify_stop(&g);
    assert_null(g.notify);
    assert_int_equal(sent() + failed(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_doc_gpu),
        cmocka_unit_test(test_doc_job),
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_sender_retries),
        cmocka_unit_test(test_sender_gives_up),
        cmocka_unit_test(test_sender_queue_full),
        cmocka_unit_test(test_active_list),
        cmocka_unit_test(test_active_without_receivers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The controller's counters (src/ctl/metrics.c): the reason class of every kind of reason the
 * scheduler and the controller write, XID severities from the fault table, the families the
 * counters write, and the bounds on labelled series (XIDs, request durations).
 */
#include "ctl/metrics.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

static const char *route_name(int route)
{
    static char buf[32];
    snprintf(buf, sizeof(buf), "/r/%d", route);
    return buf;
}

/* Samples of name in text (lines starting with name followed by '{' or ' '). */
static int count_samples(const char *text, const char *name)
{
    int n = 0;
    size_t len = strlen(name);
    for (const char *line = text; *line;) {
        if (strncmp(line, name, len) == 0 && (line[len] == '{' || line[len] == ' ')) {
            n++;
        }
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : line + strlen(line);
    }
    return n;
}

static void test_reason_classes(void **state)
{
    (void)state;
    static const struct {
        const char *reason, *cls;
    } cases[] = {
        {"quota: tenant a uses 2 of 2 GPUs; the job needs 1", "quota"},
        {"quota: tenant a uses 100 of 200 MiB GPU memory; the job needs 150 MiB", "quota"},
        {"quota: tenant a uses 120 of 128 GiB GPU memory; the job needs 16 GiB", "quota"},
        {"quota: tenant a has a quota of 1 GPUs; the job needs 2, more than it can ever get",
         "no-fit"},
        {"queue q: capability 4 GPUs, uses 4; the job needs 1", "queue"},
        {"borrowing: queue q would pass its guarantee (owed 1 GPUs, uses 2; the job needs 1) and "
         "the job is not preemptible",
         "queue"},
        {"capacity: no node has 1 GPU", "capacity"},
        {"capacity: no node has 1 GPU; holds the backfill reservation", "capacity"},
        {"capacity: no node has 8 GPUs; no node could hold it even when empty", "no-fit"},
        {"maintenance: n1 drains at 14:00 UTC and the job may run 2h", "maintenance"},
        {"maintenance: n1 drains at 14:00 UTC and the job sets no max runtime; holds the backfill "
         "reservation",
         "maintenance"},
        {"unschedulable: no node has model \"X\"; models in the pool: T4 (allowed to wait)",
         "no-fit"},
        {"unschedulable: the job needs 8 GPUs in all, more than tenant a's quota of 4 GPUs",
         "no-fit"},
        {"gang: needs 4 replicas of 8 GPUs; room for 2", "gang"},
        {"backfill: waiting behind job 7, which holds the reservation until 09:00 UTC", "backfill"},
        {"preempted by job 9 (priority class high, 100 > 0)", "priority"},
        {"reclaimed: queue q is owed 2 GPUs, uses 0 (job 4)", "reclaimed"},
        {"restarting after XID 48 (double-bit ECC error) on node n GPU 1 (restart 1)",
         "restarting"},
        {"restarting: replica 0 exited with code 1 (restart 1 of 3)", "restarting"},
        {"requeued by admin", "requeued"},
        {"requeued: node n1 drained by admin", "requeued"},
        {"waiting for the next scheduling cycle", "new"},
        {"invalid request: gpu_milli must be between 1 and 1000", "invalid"},
        {"queue gone: does not exist", "invalid"},
        {"", "other"},
        {"something new", "other"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = ctl_metrics_reason_class(cases[i].reason);
        if (strcmp(got, cases[i].cls) != 0) {
            fail_msg("\"%s\": class %s, expected %s", cases[i].reason, got, cases[i].cls);
        }
    }
}

static void test_xid_severity(void **state)
{
    (void)state;
    static const struct {
        int xid;
        const char *severity;
    } cases[] = {
        {13, "job"},   {31, "job"},   {109, "job"},  {43, "info"},  {45, "info"},   {92, "info"},
        {1, "info"},   {999, "info"}, {8, "fatal"},  {48, "fatal"}, {63, "fatal"},  {64, "fatal"},
        {74, "fatal"}, {79, "fatal"}, {94, "fatal"}, {95, "fatal"}, {119, "fatal"}, {154, "fatal"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = ctl_metrics_xid_severity(cases[i].xid);
        if (strcmp(got, cases[i].severity) != 0) {
            fail_msg("XID %d: %s, expected %s", cases[i].xid, got, cases[i].severity);
        }
    }
}

static void test_counters_written(void **state)
{
    (void)state;
    ctl_metrics m;
    ctl_metrics_init(&m);
    ctl_metrics_xid(&m, "n1", 0, 48);
    ctl_metrics_xid(&m, "n1", 0, 48);
    ctl_metrics_xid(&m, "n1", 1, 13);
    ctl_metrics_restart(&m, CTL_RESTART_NODE_LOST);
    ctl_metrics_restart(&m, CTL_RESTART_XID);
    ctl_metrics_restart(&m, CTL_RESTART_XID);
    ctl_metrics_cycle(&m, 1500); /* 1.5 ms */
    ctl_metrics_http(&m, 3, "GET", 200, 2000);
    ctl_metrics_http(&m, 3, "GET", 200, 4000);
    ctl_metrics_http(&m, -1, "BREW", 404, 100);
    atomic_fetch_add(&m.alerts_sent, 5);
    atomic_fetch_add(&m.alerts_failed, 1);
    gp_prom p;
    gp_prom_init(&p);
    ctl_metrics_write(&m, &p, route_name);
    const char *t = gp_prom_text(&p);
    assert_non_null(t);
    static const char *const want[] = {
        "gpupool_xid_errors_total{Hostname=\"n1\",gpu=\"0\",xid=\"48\",severity=\"fatal\"} 2\n",
        "gpupool_xid_errors_total{Hostname=\"n1\",gpu=\"1\",xid=\"13\",severity=\"job\"} 1\n",
        "gpupool_job_restarts_total{cause=\"xid\"} 2\n",
        "gpupool_job_restarts_total{cause=\"node-lost\"} 1\n",
        "gpupool_job_restarts_total{cause=\"hung\"} 0\n",
        "gpupool_scheduler_cycle_seconds_bucket{le=\"0.001\"} 0\n",
        "gpupool_scheduler_cycle_seconds_bucket{le=\"0.0025\"} 1\n",
        "gpupool_scheduler_cycle_seconds_sum 0.0015\n",
        "gpupool_http_request_duration_seconds_count{route=\"/r/3\",method=\"GET\",code=\"200\"} "
        "2\n",
        "gpupool_http_request_duration_seconds_sum{route=\"/r/3\",method=\"GET\",code=\"200\"} "
        "0.006\n",
        "gpupool_http_request_duration_seconds_count{route=\"unmatched\",method=\"OTHER\","
        "code=\"404\"} 1\n",
        "# TYPE gpupool_alerts_sent_total counter\ngpupool_alerts_sent_total 5\n",
        "gpupool_alerts_failed_total 1\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!strstr(t, want[i])) {
            fail_msg("missing: %s\nin:\n%s", want[i], t);
        }
    }
    gp_prom_fini(&p);
    ctl_metrics_fini(&m);
}

/* New label sets past the caps are dropped; the series already made keep counting. */
static void test_series_bounded(void **state)
{
    (void)state;
    ctl_metrics m;
    ctl_metrics_init(&m);
    for (int i = 0; i < CTL_METRICS_MAX_SERIES + 50; i++) {
        char host[32];
        snprintf(host, sizeof(host), "node-%d", i / 8);
        ctl_metrics_xid(&m, host, i % 8, 48);
    }
    ctl_metrics_xid(&m, "node-0", 0, 48); /* an old series still counts */
    for (int code = 100; code < 100 + CTL_METRICS_MAX_HTTP + 20; code++) {
        ctl_metrics_http(&m, 0, "GET", code, 10);
    }
    ctl_metrics_http(&m, 0, "GET", 100, 10);
    gp_prom p;
    gp_prom_init(&p);
    ctl_metrics_write(&m, &p, route_name);
    const char *t = gp_prom_text(&p);
    assert_non_null(t);
    assert_int_equal(count_samples(t, "gpupool_xid_errors_total"), CTL_METRICS_MAX_SERIES);
    assert_int_equal(count_samples(t, "gpupool_http_request_duration_seconds_count"),
                     CTL_METRICS_MAX_HTTP);
    assert_non_null(strstr(
        t, "gpupool_xid_errors_total{Hostname=\"node-0\",gpu=\"0\",xid=\"48\",severity=\"fatal\"} "
           "2\n"));
    assert_non_null(strstr(t, "gpupool_http_request_duration_seconds_count{route=\"/r/0\","
                              "method=\"GET\",code=\"100\"} 2\n"));
    gp_prom_fini(&p);
    ctl_metrics_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reason_classes),
        cmocka_unit_test(test_xid_severity),
        cmocka_unit_test(test_counters_written),
        cmocka_unit_test(test_series_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

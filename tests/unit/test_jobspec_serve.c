/*
 * The job spec's fields of notebooks and services (kind, port, idle_action, probes, autoscale,
 * update): their defaults, the checks across them with the field named, and probes' own codec.
 */
#include "gpupool/jobspec.h"
#include "tests/unit/harness.h"

#include <stdlib.h>
#include <string.h>

static void parse_ok(const char *text, gp_jobspec *s)
{
    gp_diag d;
    if (gp_jobspec_parse_json(text, strlen(text), s, &d) != 0) {
        fail_msg("%s: %s", text, d.msg);
    }
}

/* text is refused with GP_EINVAL and a message starting with want. */
static void refused(const char *text, const char *want)
{
    gp_jobspec s;
    gp_diag d;
    int rc = gp_jobspec_parse_json(text, strlen(text), &s, &d);
    if (rc == 0) {
        gp_jobspec_fini(&s);
        fail_msg("accepted: %s", text);
    }
    if (rc != GP_EINVAL || strncmp(d.msg, want, strlen(want)) != 0) {
        fail_msg("%s: got %d \"%s\", want \"%s...\"", text, rc, d.msg, want);
    }
}

static void test_notebook_defaults(void **state)
{
    (void)state;
    gp_jobspec s;
    parse_ok("{\"name\":\"nb\",\"kind\":\"notebook\",\"port\":8888}", &s);
    assert_int_equal(s.job_kind, GP_JOB_NOTEBOOK);
    assert_int_equal(s.port, 8888);
    assert_int_equal(s.network, GP_NETWORK_PRIVATE);
    assert_int_equal(s.idle_action, GP_IDLE_SUSPEND);
    assert_null(s.command); /* the controller's default command */
    assert_int_equal(s.readiness.type, GP_PROBE_NONE);
    gp_jobspec_fini(&s);
    parse_ok("{\"name\":\"b\",\"command\":[\"x\"]}", &s);
    assert_int_equal(s.job_kind, GP_JOB_BATCH);
    assert_int_equal(s.network, GP_NETWORK_HOST);
    assert_int_equal(s.port, 0);
    gp_jobspec_fini(&s);
}

static void test_service_defaults(void **state)
{
    (void)state;
    gp_jobspec s;
    parse_ok("{\"name\":\"svc\",\"kind\":\"service\",\"port\":80,\"command\":[\"x\"],"
             "\"readiness_probe\":{\"http_get\":{}},\"liveness_probe\":{\"tcp_socket\":{}},"
             "\"autoscale\":{\"min_replicas\":3,\"max_replicas\":5,\"metric\":"
             "\"gpu_utilization\",\"target\":70}}",
             &s);
    assert_int_equal(s.replicas, 3); /* raised to min_replicas */
    assert_int_equal(s.update.max_surge, 1);
    assert_int_equal(s.update.max_unavailable, 0);
    assert_int_equal(s.readiness.type, GP_PROBE_HTTP);
    assert_string_equal(s.readiness.path, "/");
    assert_int_equal(s.readiness.port, 80); /* the job's port */
    assert_int_equal(s.readiness.period_s, 10);
    assert_int_equal(s.readiness.timeout_s, 1);
    assert_int_equal(s.readiness.failure_threshold, 3);
    assert_int_equal(s.liveness.type, GP_PROBE_TCP);
    assert_int_equal(s.liveness.port, 80);
    assert_true(s.autoscale.enabled);
    assert_int_equal(s.autoscale.scale_up_window_s, 0);
    assert_int_equal(s.autoscale.scale_down_window_s, 300);
    assert_null(s.autoscale.metric_path);
    gp_jobspec_fini(&s);
    parse_ok("{\"name\":\"svc\",\"kind\":\"service\",\"port\":80,\"command\":[\"x\"],"
             "\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2,\"metric\":\"prometheus\","
             "\"target\":5,\"prometheus\":{\"name\":\"rps\"}}}",
             &s);
    assert_string_equal(s.autoscale.metric_path, "/metrics");
    assert_int_equal(s.autoscale.metric_port, 80);
    gp_jobspec_fini(&s);
}

#define SVC "{\"name\":\"s\",\"kind\":\"service\",\"port\":80,\"command\":[\"x\"],"
#define NB  "{\"name\":\"n\",\"kind\":\"notebook\",\"port\":80,"
#define JOB "{\"name\":\"j\",\"command\":[\"x\"],"

static void test_refused(void **state)
{
    (void)state;
    refused(JOB "\"port\":80}", "port: only for kind notebook or service");
    refused(JOB "\"readiness_probe\":{\"tcp_socket\":{\"port\":1}}}",
            "readiness_probe: only for kind notebook or service");
    refused(JOB "\"liveness_probe\":{\"tcp_socket\":{\"port\":1}}}",
            "liveness_probe: only for kind service");
    refused(JOB "\"autoscale\":{}}", "autoscale: only for kind service");
    refused(JOB "\"update\":{\"max_surge\":1}}", "update: only for kind service");
    refused(JOB "\"kind\":\"cron\"}", "kind: must be one of batch, notebook, service");
    refused("{\"name\":\"s\",\"kind\":\"service\",\"port\":0,\"command\":[\"x\"]}",
            "port: must be between 1 and 65535");
    refused("{\"name\":\"s\",\"kind\":\"service\",\"port\":65536,\"command\":[\"x\"]}",
            "port: must be between 1 and 65535");
    refused("{\"name\":\"s\",\"kind\":\"service\",\"command\":[\"x\"]}",
            "port: required for kind service");
    refused("{\"name\":\"s\",\"kind\":\"service\",\"port\":1}", "command: required");
    refused(NB "\"network\":\"host\"}", "network: a notebook runs in a network namespace");
    refused(NB "\"replicas\":2}", "replicas: a notebook has one replica");
    refused(NB "\"liveness_probe\":{\"tcp_socket\":{}}}", "liveness_probe: only for kind service");
    refused(SVC "\"idle_timeout\":\"1h\"}", "idle_timeout: not for kind service");
    refused(SVC "\"autoscale\":{\"min_replicas\":5,\"max_replicas\":2,\"target\":50}}",
            "autoscale.min_replicas: 5 is above max_replicas (2)");
    refused(SVC "\"autoscale\":{\"max_replicas\":2,\"target\":50}}",
            "autoscale.min_replicas: required");
    refused(SVC "\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2}}",
            "autoscale.target: required");
    refused(SVC "\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2,\"target\":150}}",
            "autoscale.target: a percentage");
    refused(SVC "\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2,\"target\":0}}",
            "autoscale.target: must be a number above 0");
    refused(SVC "\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2,\"target\":5,"
                "\"metric\":\"prometheus\"}}",
            "autoscale.prometheus: required with metric prometheus");
    refused(SVC "\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2,\"target\":5,"
                "\"metric\":\"prometheus\",\"prometheus\":{\"name\":\"9x\"}}}",
            "autoscale.prometheus.name: must be a metric name");
    refused(SVC "\"replicas\":4,\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2,"
                "\"target\":5}}",
            "replicas: 4 is above autoscale.max_replicas (2)");
    refused(SVC "\"autoscale\":{\"min_replicas\":1,\"max_replicas\":2,\"target\":5,"
                "\"scale_down_window\":\"2h\"}}",
            "autoscale.scale_down_window: must be seconds or a duration");
    refused(SVC "\"update\":{\"max_surge\":0}}", "update: max_surge and max_unavailable");
    refused(SVC "\"update\":{\"surge\":0}}", "update.surge: unknown field");
}

static void test_probes_refused(void **state)
{
    (void)state;
    refused(SVC "\"readiness_probe\":{}}", "readiness_probe: needs one of http_get");
    refused(SVC "\"readiness_probe\":{\"http_get\":{},\"exec\":{\"command\":[\"x\"]}}}",
            "readiness_probe: one of http_get, tcp_socket or exec");
    refused(SVC "\"readiness_probe\":{\"exec\":{}}}", "readiness_probe.exec.command: required");
    refused(SVC "\"readiness_probe\":{\"exec\":{\"command\":[]}}}",
            "readiness_probe.exec.command: must be a list of 1");
    refused(SVC "\"readiness_probe\":{\"http_get\":{\"path\":\"healthz\"}}}",
            "readiness_probe.http_get.path: must be an absolute path");
    refused(SVC "\"readiness_probe\":{\"http_get\":{\"port\":0}}}",
            "readiness_probe.http_get.port: must be between 1 and 65535");
    refused(SVC "\"readiness_probe\":{\"http_get\":{\"host\":\"x\"}}}",
            "readiness_probe.http_get.host: unknown field");
    refused(SVC "\"liveness_probe\":{\"tcp_socket\":{},\"period\":\"2s\",\"timeout\":\"5s\"}}",
            "liveness_probe.timeout: at most the period (2s)");
    refused(SVC "\"liveness_probe\":{\"tcp_socket\":{},\"failure_threshold\":0}}",
            "liveness_probe.failure_threshold: must be between 1 and 100");
    refused(SVC "\"liveness_probe\":{\"tcp_socket\":{},\"success_threshold\":2}}",
            "liveness_probe.success_threshold: must be 1");
    refused(SVC "\"readiness_probe\":{\"tcp_socket\":{},\"initial_delay\":\"-1s\"}}",
            "readiness_probe.initial_delay: must be seconds or a duration");
    refused(SVC "\"readiness_probe\":{\"tcp_socket\":{},\"period\":\"0s\"}}",
            "readiness_probe.period: must be seconds or a duration");
}

/* A probe's canonical JSON parses back to the same probe. */
static void test_probe_codec(void **state)
{
    (void)state;
    gp_jobspec s;
    parse_ok(SVC "\"readiness_probe\":{\"exec\":{\"command\":[\"cat\",\"/r\"]},\"initial_delay\":"
                 "\"1m\",\"period\":5,\"timeout\":2,\"success_threshold\":2}}",
             &s);
    json_t *j = gp_probe_to_json(&s.readiness);
    assert_non_null(j);
    gp_probe p;
    gp_diag d;
    assert_int_equal(gp_probe_parse(j, "probe", 0, &p, &d), 0);
    assert_int_equal(p.type, GP_PROBE_EXEC);
    assert_string_equal(p.command[1], "/r");
    assert_int_equal(p.initial_delay_s, 60);
    assert_int_equal(p.period_s, 5);
    assert_int_equal(p.timeout_s, 2);
    assert_int_equal(p.success_threshold, 2);
    assert_null(gp_probe_to_json(&s.liveness)); /* none */
    gp_probe_fini(&p);
    json_decref(j);
    gp_jobspec_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notebook_defaults), cmocka_unit_test(test_service_defaults),
        cmocka_unit_test(test_refused),           cmocka_unit_test(test_probes_refused),
        cmocka_unit_test(test_probe_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

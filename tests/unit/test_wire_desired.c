/*
 * The desired-replicas codec (src/net/wire_desired.h): the controller's full document (a gang,
 * a fraction, an image with credentials, volumes) decodes to the values sent and encodes back to
 * the same JSON; a fake controller's minimal replicas survive the same round trip; bad values
 * are refused naming their path and leave nothing behind; unknown members are ignored.
 */
#include "net/wire_desired.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

static char *read_corpus(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/wire_desired/%s", GP_SOURCE_DIR, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int decode(const char *text, gp_wire_desired *dd, gp_diag *d)
{
    json_t *doc = json_loads(text, JSON_ALLOW_NUL, NULL);
    assert_non_null(doc);
    gp_diag_clear(d);
    int rc = gp_wire_desired_decode(doc, dd, d);
    json_decref(doc);
    return rc;
}

static void same_json(const gp_wire_desired *dd, const char *text)
{
    json_t *out = gp_wire_desired_encode(dd, NULL), *in = json_loads(text, 0, NULL);
    if (!json_equal(out, in)) {
        char *got = json_dumps(out, JSON_SORT_KEYS), *want = json_dumps(in, JSON_SORT_KEYS);
        fail_msg("encoded\n%s\nwant\n%s", got, want);
    }
    json_decref(in);
    json_decref(out);
}

static void test_full(void **state)
{
    (void)state;
    const char *text = read_corpus("full.json");
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode(text, &dd, &d), 0);
    assert_string_equal(dd.node, "n1");
    assert_int_equal(dd.version, 7);
    assert_int_equal(dd.check_seq, 2);
    assert_int_equal(dd.nreplicas, 2);
    const gp_wire_desired_replica *g = &dd.replicas[0], *f = &dd.replicas[1];
    assert_int_equal(g->job, 12);
    assert_int_equal(g->ngpus, 2);
    assert_string_equal(g->gpus[1].uuid, "GPU-0001");
    assert_int_equal(g->network, GP_NETWORK_PRIVATE);
    assert_int_equal(g->pull_policy, GP_PULL_IF_NOT_PRESENT);
    assert_string_equal(g->auth_password, "p");
    assert_int_equal(g->nvolumes, 1);
    assert_true(g->volumes[0].read_only);
    assert_int_equal(g->nhosts, 2);
    assert_string_equal(g->hosts[1].name, "host-b");
    assert_int_equal(g->hosts[1].slots, 2);
    assert_int_equal(g->master_port, 29512);
    assert_int_equal(g->tenant_id, 3);
    assert_true(f->share.given);
    assert_int_equal(f->share.core_percent, 25);
    assert_int_equal(f->share.policy, GP_COMPUTE_STRICT);
    assert_int_equal(f->gpus[0].milli, 250);
    same_json(&dd, text); /* the wire is unchanged */
    gp_wire_desired_fini(&dd);
}

/* A job array's child and /dev/shm's size: typed, and the wire unchanged; bounds refused. */
static void test_array_shm(void **state)
{
    (void)state;
    const char *text = read_corpus("array.json");
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode(text, &dd, &d), 0);
    const gp_wire_desired_replica *r = &dd.replicas[0];
    assert_int_equal(r->array_index, 7);
    assert_int_equal(r->array_job, 40);
    assert_int_equal(r->shm_size_mib, 2048);
    same_json(&dd, text);
    gp_wire_desired_fini(&dd);
    const char *bad = "{\"version\":2,\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":1,"
                      "\"shm_size_mib\":0}]}";
    assert_int_equal(decode(bad, &dd, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "desired[0].shm_size_mib"));
    bad = "{\"version\":2,\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":1,"
          "\"array_index\":-1}]}";
    assert_int_equal(decode(bad, &dd, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "desired[0].array_index"));
}

/* A privileged replica: typed, the wire unchanged; false is left out; not a boolean refused. */
static void test_privileged(void **state)
{
    (void)state;
    const char *text = read_corpus("privileged.json");
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode(text, &dd, &d), 0);
    assert_true(dd.replicas[0].privileged);
    same_json(&dd, text);
    dd.replicas[0].privileged = false;
    json_t *out = gp_wire_desired_encode(&dd, NULL);
    assert_null(json_object_get(json_array_get(json_object_get(out, "desired"), 0), "privileged"));
    json_decref(out);
    gp_wire_desired_fini(&dd);
    const char *off = "{\"version\":2,\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":1,"
                      "\"privileged\":false}]}";
    assert_int_equal(decode(off, &dd, &d), 0);
    assert_false(dd.replicas[0].privileged);
    gp_wire_desired_fini(&dd);
    const char *bad = "{\"version\":2,\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":1,"
                      "\"privileged\":\"yes\"}]}";
    assert_int_equal(decode(bad, &dd, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "desired[0].privileged: must be true or false"));
}

/* A fake controller's replicas (tests/integ/ctl/fakectl.py) give few members: absent ones stay
 * absent, and the MIG profile is read out of the spec. */
static void test_minimal(void **state)
{
    (void)state;
    const char *text = read_corpus("fakectl.json");
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode(text, &dd, &d), 0);
    const gp_wire_desired_replica *r = &dd.replicas[1];
    assert_int_equal(r->restart_count, -1);
    assert_int_equal(r->tenant_id, -1);
    assert_int_equal(r->gpus[0].milli, -1);
    assert_null(r->image);
    assert_false(r->share.given);
    assert_string_equal(r->mig_profile, "1g.10gb");
    json_t *in = json_loads(text, 0, NULL);
    /* the one member encoding adds: a GPU's mig_start, -1 (not a slice) when absent */
    json_object_set_new(
        json_array_get(json_object_get(json_array_get(json_object_get(in, "desired"), 1), "gpus"),
                       0),
        "mig_start", json_integer(-1));
    json_object_set_new(in, "cordoned", json_false());
    json_object_set_new(in, "check_seq", json_integer(0));
    char *want = json_dumps(in, 0);
    same_json(&dd, want);
    free(want);
    json_decref(in);
    gp_wire_desired_fini(&dd);
}

static void refused(const char *replica, const char *msg)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"version\":2,\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":1},%s]}", replica);
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode(text, &dd, &d), GP_EINVAL);
    if (!strstr(d.msg, msg)) {
        fail_msg("%s: got \"%s\", want \"%s\"", replica, d.msg, msg);
    }
    assert_null(dd.replicas);
    assert_int_equal(dd.nreplicas, 0);
}

#define R "\"job\":2,\"replica\":0,\"epoch\":1"

static void test_refused(void **state)
{
    (void)state;
    refused("{\"replica\":0,\"epoch\":1}", "desired[1].job: required");
    refused("{\"job\":0,\"replica\":0,\"epoch\":1}", "desired[1].job: must be an integer");
    refused("{" R ",\"gpus\":[{\"index\":0,\"milli\":2000}]}",
            "desired[1].gpus[0].milli: must be an integer between 0 and 1000");
    refused("{" R ",\"gpus\":[{\"index\":64}]}", "desired[1].gpus[0].index");
    refused("{" R ",\"gpus\":[3]}", "desired[1].gpus[0]: must be an object");
    refused("{" R ",\"spec\":[1]}", "desired[1].spec: must be an object");
    refused("{" R ",\"spec\":{\"resources\":{\"mig_profile\":7}}}",
            "desired[1].spec.resources.mig_profile");
    refused("{" R ",\"network\":\"bridge\"}", "desired[1].network: must be host or private");
    refused("{" R ",\"image_pull_policy\":\"Sometimes\"}", "desired[1].image_pull_policy");
    refused("{" R ",\"registry_auth\":{\"registry\":\"r\",\"username\":\"u\"}}",
            "desired[1].registry_auth.password: required");
    refused("{" R ",\"gpu_share\":{\"core_percent\":0}}", "desired[1].gpu_share.core_percent");
    refused("{" R ",\"gpu_share\":{\"core_policy\":\"lax\"}}",
            "desired[1].gpu_share.core_policy: must be shared or strict");
    refused("{" R ",\"volumes\":[{\"name\":\"v\",\"path\":\"rel\"}]}",
            "desired[1].volumes[0]: must have a name and an absolute path");
    refused("{" R ",\"volumes\":[{\"name\":\"v\",\"path\":\"/p\",\"read_only\":1}]}",
            "desired[1].volumes[0].read_only: must be true or false");
    refused("{" R ",\"world_size\":2,\"rank\":2}", "desired[1].rank: must be an integer between 0");
    refused("{" R ",\"hostfile\":[\"a slots=0\"]}", "desired[1].hostfile[0]: must be");
    refused("{" R ",\"hostfile\":[\"a\\nb slots=1\"]}", "desired[1].hostfile[0]: must be");
    refused("{" R ",\"master_port\":70000}", "desired[1].master_port");
    refused("{" R ",\"name\":\"a\\u0000b\"}", "desired[1].name: must be a string");

    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode("{\"desired\":{}}", &dd, &d), GP_EINVAL);
    assert_string_equal(d.msg, "desired: must be a list");
    assert_int_equal(decode("{\"version\":-1}", &dd, &d), GP_EINVAL);
    assert_string_equal(d.msg, "version: must be an integer between 0 and 9223372036854775807");
    assert_int_equal(decode("[]", &dd, &d), GP_EINVAL);
}

/* A newer controller's members are ignored: the agent still converges. */
static void test_unknown_ignored(void **state)
{
    (void)state;
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode("{\"version\":1,\"later\":true,\"desired\":[{" R
                            ",\"later\":{\"x\":1},\"gpus\":[{\"index\":0,\"later\":2}]}]}",
                            &dd, &d),
                     0);
    assert_int_equal(dd.nreplicas, 1);
    json_t *out = gp_wire_desired_encode(&dd, NULL);
    assert_null(json_object_get(json_array_get(json_object_get(out, "desired"), 0), "later"));
    json_decref(out);
    gp_wire_desired_fini(&dd);
}

/* A hostfile line may also come as {host, slots}; it is encoded as the controller sends it. */
/* A service's replica: its kind, port and probes, typed, and the same JSON back. */
static void test_service(void **state)
{
    (void)state;
    const char *text = read_corpus("service.json");
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode(text, &dd, &d), 0);
    const gp_wire_desired_replica *r = &dd.replicas[0];
    assert_int_equal(r->kind, GP_JOB_SERVICE);
    assert_int_equal(r->port, 8000);
    assert_int_equal(r->readiness.type, GP_PROBE_HTTP);
    assert_string_equal(r->readiness.path, "/ready");
    assert_int_equal(r->readiness.initial_delay_s, 5);
    assert_int_equal(r->readiness.failure_threshold, 2);
    assert_int_equal(r->liveness.type, GP_PROBE_EXEC);
    assert_string_equal(r->liveness.command[1], "/tmp/alive");
    same_json(&dd, text);
    gp_wire_desired_fini(&dd);
    const char *bad[][2] = {
        {"{\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":0,\"kind\":\"cron\"}]}",
         "desired[0].kind: must be batch, notebook or service"},
        {"{\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":0,\"port\":0}]}", "desired[0].port: "},
        {"{\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":0,\"port\":80,"
         "\"liveness_probe\":{\"tcp_socket\":{},\"period\":\"0s\"}}]}",
         "desired[0].liveness_probe.period: "},
        {"{\"desired\":[{\"job\":1,\"replica\":0,\"epoch\":0,"
         "\"readiness_probe\":{\"tcp_socket\":{}}}]}",
         "desired[0].readiness_probe: needs a port"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(decode(bad[i][0], &dd, &d), GP_EINVAL);
        if (strncmp(d.msg, bad[i][1], strlen(bad[i][1])) != 0) {
            fail_msg("%s: got %s", bad[i][0], d.msg);
        }
    }
}

static void test_host_object(void **state)
{
    (void)state;
    gp_wire_desired dd;
    gp_diag d;
    assert_int_equal(decode("{\"desired\":[{" R ",\"world_size\":2,\"hostfile\":[{\"host\":"
                            "\"h1\",\"slots\":4},\"h2 x slots=1\"]}]}",
                            &dd, &d),
                     0);
    assert_string_equal(dd.replicas[0].hosts[0].name, "h1");
    assert_int_equal(dd.replicas[0].hosts[0].slots, 4);
    assert_string_equal(dd.replicas[0].hosts[1].name, "h2 x");
    json_t *out = gp_wire_desired_replica_encode(&dd.replicas[0]);
    json_t *hf = json_object_get(out, "hostfile");
    assert_string_equal(json_string_value(json_array_get(hf, 0)), "h1 slots=4");
    json_decref(out);
    gp_wire_desired_fini(&dd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_minimal),
        cmocka_unit_test(test_array_shm),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_unknown_ignored),
        cmocka_unit_test(test_host_object),
        cmocka_unit_test(test_service),
        cmocka_unit_test(test_privileged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

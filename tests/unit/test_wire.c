/*
 * The heartbeat codec (src/net/wire.h): a full heartbeat decodes to the values sent and encodes
 * back to the same JSON; each measured bad value (utilisation -5 and 1e308, negative memory,
 * XID 0 and -7, an unknown member, a string where a number goes) is refused with its path; the
 * node check refuses GPU indices past the node and memory past a GPU's total.
 */
#include "net/wire.h"
#include "tests/unit/harness.h"

#include <string.h>

static const char *full =
    "{\"replicas\":[{\"job\":7,\"replica\":0,\"epoch\":3,\"state\":\"Running\",\"exit_code\":0,"
    "\"idle_ms\":1200,\"util\":55,\"gpu_mem_mib\":20480},{\"job\":9,\"replica\":1,\"epoch\":2,"
    "\"state\":\"Running\","
    "\"phase\":\"Pulling\",\"pull\":{\"image\":\"r/x:1\",\"done_bytes\":10,\"total_bytes\":100}}],"
    "\"gpus\":[{\"index\":0,\"utilization\":97,\"memory_used_mib\":1024,\"temperature_c\":61,"
    "\"power_w\":312.5,\"sm_clock_mhz\":1410,\"memory_clock_mhz\":1593,\"ecc_uncorrected\":0}],"
    "\"events\":[{\"gpu\":0,\"xid\":79}],\"health\":{\"seq\":3,\"at_ms\":1700000000000,"
    "\"conditions\":[{\"check\":\"driver\",\"gpu\":-1,\"severity\":\"fatal\",\"message\":\"no "
    "driver\"},{\"check\":\"ecc_errors\",\"gpu\":1,\"severity\":\"warning\",\"message\":\"\"}]},"
    "\"images\":[{\"ref\":\"r/x:1\",\"id\":\"sha256:ab\",\"size_bytes\":3400000000,"
    "\"last_used_ms\":1700000000000}]}";

/* A GPU in MIG mode: its instances, idle defaulting to true and held to false. */
static const char *mig =
    "{\"gpus\":[{\"index\":1,\"mig_instances\":[{\"profile\":\"3g.40gb\",\"start\":4,"
    "\"idle\":false,\"held\":true},{\"profile\":\"1g.10gb+me\",\"start\":0}]},{\"index\":0,"
    "\"mig_instances\":[]},{\"index\":2}]}";

static int decode(const char *text, gp_wire_heartbeat *hb, gp_diag *d)
{
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    int rc = gp_wire_heartbeat_decode(doc, hb, d);
    json_decref(doc);
    return rc;
}

static void test_roundtrip(void **state)
{
    (void)state;
    gp_wire_heartbeat hb;
    gp_diag d;
    assert_int_equal(decode(full, &hb, &d), 0);
    assert_int_equal(hb.nreplicas, 2);
    assert_int_equal(hb.replicas[0].job, 7);
    assert_int_equal(hb.replicas[0].util, 55);
    assert_int_equal(hb.replicas[0].mem_mib, 20480);
    assert_int_equal(hb.replicas[1].mem_mib, -1);
    assert_true(hb.replicas[1].pulling);
    assert_string_equal(hb.replicas[1].pull_image, "r/x:1");
    assert_int_equal(hb.ngpus, 1);
    assert_int_equal(hb.gpus[0].memory_used_mib, 1024);
    assert_int_equal(hb.events[0].xid, 79);
    assert_true(hb.has_health);
    assert_int_equal(hb.health.seq, 3);
    assert_int_equal(hb.health.at_ms, 1700000000000);
    assert_int_equal(hb.health.nconditions, 2);
    assert_int_equal(hb.health.conditions[0].gpu, -1);
    assert_int_equal(hb.health.conditions[0].severity, GP_WIRE_FATAL);
    assert_string_equal(hb.health.conditions[0].message, "no driver");
    assert_int_equal(hb.health.conditions[1].severity, GP_WIRE_WARNING);
    assert_true(hb.has_images);
    assert_int_equal(hb.nimages, 1);
    assert_string_equal(hb.images[0].id, "sha256:ab");
    assert_int_equal(hb.images[0].size_bytes, 3400000000);
    json_t *out = gp_wire_heartbeat_encode(&hb);
    json_t *in = json_loads(full, 0, NULL);
    assert_true(json_equal(out, in)); /* the wire is unchanged */
    json_decref(in);
    json_decref(out);
    gp_wire_heartbeat_fini(&hb);
}

static void test_mig(void **state)
{
    (void)state;
    gp_wire_heartbeat hb;
    gp_diag d;
    assert_int_equal(decode(mig, &hb, &d), 0);
    assert_int_equal(hb.ngpus, 3);
    assert_true(hb.gpus[0].has_mig);
    assert_int_equal(hb.gpus[0].nmig, 2);
    assert_string_equal(hb.gpus[0].mig[0].profile, "3g.40gb");
    assert_int_equal(hb.gpus[0].mig[0].start, 4);
    assert_false(hb.gpus[0].mig[0].idle);
    assert_true(hb.gpus[0].mig[0].held);
    assert_true(hb.gpus[0].mig[1].idle); /* the defaults */
    assert_false(hb.gpus[0].mig[1].held);
    assert_true(hb.gpus[1].has_mig); /* an empty list: the GPU has none */
    assert_int_equal(hb.gpus[1].nmig, 0);
    assert_false(hb.gpus[2].has_mig); /* absent: nothing said */
    assert_false(hb.has_health);
    assert_false(hb.has_images);
    json_t *out = gp_wire_heartbeat_encode(&hb);
    gp_wire_heartbeat again;
    assert_int_equal(gp_wire_heartbeat_decode(out, &again, &d), 0);
    assert_int_equal(again.gpus[0].nmig, 2);
    assert_true(again.gpus[1].has_mig && !again.gpus[2].has_mig);
    assert_memory_equal(again.gpus[0].mig, hb.gpus[0].mig, 2 * sizeof(hb.gpus[0].mig[0]));
    gp_wire_heartbeat_fini(&again);
    json_decref(out);
    gp_wire_heartbeat_fini(&hb);
}

static void refused(const char *text, const char *msg)
{
    gp_wire_heartbeat hb;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(decode(text, &hb, &d), GP_EINVAL);
    if (!strstr(d.msg, msg)) {
        fail_msg("%s: got \"%s\", want \"%s\"", text, d.msg, msg);
    }
    assert_null(hb.gpus);
}

static void test_refused(void **state)
{
    (void)state;
    refused("{\"gpus\":[{\"index\":0},{\"index\":1},{\"index\":2},{\"index\":3,"
            "\"utilization\":-5}]}",
            "gpus[3].utilization: must be a number between 0 and 100");
    refused("{\"gpus\":[{\"index\":0,\"utilization\":1e308}]}", "gpus[0].utilization");
    refused("{\"gpus\":[{\"index\":0,\"memory_used_mib\":-1}]}", "gpus[0].memory_used_mib");
    refused("{\"gpus\":[{\"index\":0,\"memory_used_mib\":1e308}]}",
            "gpus[0].memory_used_mib: must be an integer");
    refused("{\"gpus\":[{\"index\":0,\"temperature_c\":400}]}", "gpus[0].temperature_c");
    refused("{\"gpus\":[{\"index\":0,\"power_w\":-3}]}", "gpus[0].power_w");
    refused("{\"events\":[{\"gpu\":0,\"xid\":0}]}", "events[0].xid: must be an integer between 1");
    refused("{\"events\":[{\"gpu\":0,\"xid\":-7}]}", "events[0].xid");
    refused("{\"events\":[{\"gpu\":0,\"xid\":1000}]}", "events[0].xid");
    refused("{\"events\":[{\"gpu\":-1,\"xid\":79}]}", "events[0].gpu");
    refused("{\"gpus\":[{\"index\":0,\"fan\":3}]}", "gpus[0].fan: unknown field");
    refused("{\"bogus\":1}", "bogus: unknown field");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\","
            "\"phase\":\"Pulling\",\"pull\":{\"image\":\"r/x:1\"}}]}",
            "replicas[0].pull.done_bytes: required");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Lost\"}]}",
            "replicas[0].state: must be Running, Succeeded or Failed");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"state\":\"Running\"}]}",
            "replicas[0].epoch: required");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\","
            "\"idle_ms\":-4}]}",
            "replicas[0].idle_ms");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\","
            "\"util\":\"5\"}]}",
            "replicas[0].util");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\","
            "\"gpu_mem_mib\":-1}]}",
            "replicas[0].gpu_mem_mib");
    refused("{\"gpus\":{}}", "gpus: must be a list");
    refused("{\"health\":[]}", "health: must be an object");
    /* health */
    refused("{\"health\":{}}", "health.seq: required");
    refused("{\"health\":{\"seq\":-1}}", "health.seq: must be an integer between 0");
    refused("{\"health\":{\"seq\":1,\"at_ms\":1e308}}", "health.at_ms: must be an integer");
    refused("{\"health\":{\"seq\":1,\"extra\":1}}", "health.extra: unknown field");
    refused("{\"health\":{\"seq\":1,\"conditions\":{}}}", "health.conditions: must be a list");
    refused("{\"health\":{\"seq\":1,\"conditions\":[{\"check\":\"x\",\"gpu\":0,"
            "\"severity\":\"fatal\",\"message\":\"m\"},{\"check\":\"x\",\"gpu\":-2,"
            "\"severity\":\"fatal\"}]}}",
            "health.conditions[1].gpu: must be an integer between -1 and 63");
    refused("{\"health\":{\"seq\":1,\"conditions\":[{\"check\":\"x\",\"gpu\":0,"
            "\"severity\":\"bad\"}]}}",
            "health.conditions[0].severity: must be fatal or warning");
    refused("{\"health\":{\"seq\":1,\"conditions\":[{\"check\":\"\",\"gpu\":0,"
            "\"severity\":\"fatal\"}]}}",
            "health.conditions[0].check: must not be empty");
    refused("{\"health\":{\"seq\":1,\"conditions\":[{\"gpu\":0,\"severity\":\"fatal\"}]}}",
            "health.conditions[0].check: required");
    refused("{\"health\":{\"seq\":1,\"conditions\":[{\"check\":\"x\",\"gpu\":0,"
            "\"severity\":\"fatal\",\"message\":7}]}}",
            "health.conditions[0].message: must be a string");
    /* images */
    refused("{\"images\":{}}", "images: must be a list");
    refused("{\"images\":[{\"ref\":\"x\",\"size_bytes\":-1}]}", "images[0].size_bytes");
    refused("{\"images\":[{\"ref\":\"x\",\"size_bytes\":1125899906842625}]}",
            "images[0].size_bytes: must be an integer between 0 and 1125899906842624");
    refused("{\"images\":[{\"ref\":\"x\"},{\"size_bytes\":1}]}", "images[1]: needs ref or id");
    refused("{\"images\":[{\"ref\":\"x\",\"extra\":1}]}", "images[0].extra: unknown field");
    refused("{\"images\":[7]}", "images[0]: must be an object");
    refused("{\"images\":[{\"id\":\"x\",\"last_used_ms\":-3}]}", "images[0].last_used_ms");
    /* gpus[].mig_instances */
    refused("{\"gpus\":[{\"index\":0,\"mig_instances\":\"1g.10gb\"}]}",
            "gpus[0].mig_instances: must be a list of at most 8 instances");
    refused("{\"gpus\":[{\"index\":0,\"mig_instances\":[{\"profile\":\"1g.10gb\",\"start\":8}]}]}",
            "gpus[0].mig_instances[0].start: must be an integer between 0 and 7");
    refused("{\"gpus\":[{\"index\":0,\"mig_instances\":[{\"start\":1}]}]}",
            "gpus[0].mig_instances[0]: profile and start are required");
    refused("{\"gpus\":[{\"index\":0,\"mig_instances\":[{\"profile\":\"1g.10gb\",\"start\":0,"
            "\"size\":1}]}]}",
            "gpus[0].mig_instances[0].size: unknown field");
    refused("{\"gpus\":[{\"index\":0,\"mig_instances\":[{\"profile\":\"1g.10gb\",\"start\":0,"
            "\"idle\":1}]}]}",
            "gpus[0].mig_instances[0].idle: must be true or false");
    refused("[]", "body: must be an object");
}

static void test_node_check(void **state)
{
    (void)state;
    int64_t mem[2] = {81920, 40960};
    gp_wire_node_gpus node = {.ngpus = 2, .memory_mib = mem};
    gp_wire_heartbeat hb;
    gp_diag d;
    assert_int_equal(decode("{\"gpus\":[{\"index\":1,\"memory_used_mib\":40961}]}", &hb, &d), 0);
    assert_int_equal(gp_wire_heartbeat_check_node(&hb, &node, &d), 0); /* 1 MiB of rounding */
    gp_wire_heartbeat_fini(&hb);
    assert_int_equal(decode("{\"gpus\":[{\"index\":1,\"memory_used_mib\":40962}]}", &hb, &d), 0);
    assert_int_equal(gp_wire_heartbeat_check_node(&hb, &node, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "gpus[0].memory_used_mib: 40962, more than the GPU's 40960"));
    gp_wire_heartbeat_fini(&hb);
    assert_int_equal(decode("{\"gpus\":[{\"index\":2}]}", &hb, &d), 0);
    assert_int_equal(gp_wire_heartbeat_check_node(&hb, &node, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "gpus[0].index: 2, the node has 2 GPUs"));
    gp_wire_heartbeat_fini(&hb);
    assert_int_equal(decode("{\"events\":[{\"gpu\":5,\"xid\":79}]}", &hb, &d), 0);
    assert_int_equal(gp_wire_heartbeat_check_node(&hb, &node, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "events[0].gpu: 5"));
    gp_wire_heartbeat_fini(&hb);
    assert_int_equal(decode("{\"health\":{\"seq\":1,\"conditions\":[{\"check\":\"x\",\"gpu\":-1,"
                            "\"severity\":\"fatal\"},{\"check\":\"x\",\"gpu\":2,"
                            "\"severity\":\"warning\"}]}}",
                            &hb, &d),
                     0);
    assert_int_equal(gp_wire_heartbeat_check_node(&hb, &node, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "health.conditions[1].gpu: 2, the node has 2 GPUs"));
    gp_wire_heartbeat_fini(&hb);
}

/* A service replica's readiness and scraped metric: absent, false, true; a metric round trips;
 * a readiness that is not a boolean and a metric out of range or not a number are refused. */
static void test_service_fields(void **state)
{
    (void)state;
    const char *text =
        "{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\"},"
        "{\"job\":1,\"replica\":1,\"epoch\":1,\"state\":\"Running\",\"ready\":false},"
        "{\"job\":1,\"replica\":2,\"epoch\":1,\"state\":\"Running\",\"ready\":true,"
        "\"metric\":12.5}]}";
    gp_wire_heartbeat hb;
    gp_diag d;
    assert_int_equal(decode(text, &hb, &d), 0);
    assert_int_equal(hb.replicas[0].ready, -1);
    assert_false(hb.replicas[0].has_metric);
    assert_int_equal(hb.replicas[1].ready, 0);
    assert_int_equal(hb.replicas[2].ready, 1);
    assert_true(hb.replicas[2].has_metric);
    assert_true(hb.replicas[2].metric == 12.5);
    json_t *back = gp_wire_replica_encode(&hb.replicas[0]);
    assert_null(json_object_get(back, "ready"));
    assert_null(json_object_get(back, "metric"));
    json_decref(back);
    back = gp_wire_replica_encode(&hb.replicas[1]);
    assert_true(json_is_false(json_object_get(back, "ready")));
    json_decref(back);
    back = gp_wire_replica_encode(&hb.replicas[2]);
    assert_true(json_is_true(json_object_get(back, "ready")));
    assert_true(json_real_value(json_object_get(back, "metric")) == 12.5);
    json_decref(back);
    gp_wire_heartbeat_fini(&hb);
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\","
            "\"ready\":1}]}",
            "replicas[0].ready: must be true or false");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\","
            "\"metric\":1e300}]}",
            "replicas[0].metric: must be a number");
    refused("{\"replicas\":[{\"job\":1,\"replica\":0,\"epoch\":1,\"state\":\"Running\","
            "\"metric\":\"3\"}]}",
            "replicas[0].metric: must be a number");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),  cmocka_unit_test(test_service_fields),
        cmocka_unit_test(test_mig),        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_node_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

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
    "\"idle_ms\":1200,\"util\":55},{\"job\":9,\"replica\":1,\"epoch\":2,\"state\":\"Running\","
    "\"phase\":\"Pulling\",\"pull\":{\"image\":\"r/x:1\",\"done_bytes\":10,\"total_bytes\":100}}],"
    "\"gpus\":[{\"index\":0,\"utilization\":97,\"memory_used_mib\":1024,\"temperature_c\":61,"
    "\"power_w\":312.5,\"sm_clock_mhz\":1410,\"memory_clock_mhz\":1593,\"ecc_uncorrected\":0}],"
    "\"events\":[{\"gpu\":0,\"xid\":79}],\"health\":{\"seq\":3}}";

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
    assert_true(hb.replicas[1].pulling);
    assert_string_equal(hb.replicas[1].pull_image, "r/x:1");
    assert_int_equal(hb.ngpus, 1);
    assert_int_equal(hb.gpus[0].memory_used_mib, 1024);
    assert_int_equal(hb.events[0].xid, 79);
    json_t *out = gp_wire_heartbeat_encode(&hb);
    json_t *in = json_loads(full, 0, NULL);
    assert_true(json_equal(out, in)); /* the wire is unchanged */
    json_decref(in);
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
    refused("{\"gpus\":{}}", "gpus: must be a list");
    refused("{\"health\":[]}", "health: must be an object");
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_node_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

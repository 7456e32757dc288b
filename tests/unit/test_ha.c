/*
 * The controller's role (ctl/ha.h): which routes a follower answers itself, the Location and
 * body of its redirect, and the real router of a gpupoold (SQLite, a temp directory) over HTTP:
 * as the leader /readyz says so and writes are served; turned follower, reads are still served,
 * writes and the agents' long-poll answer 307 to the leader (503 {"leader": null} with none),
 * before any token is asked for, and a client given both servers (net/servers.h) ends at the
 * leader.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "ctl/api.h"
#include "ctl/config.h"
#include "ctl/ha.h"
#include "ctl/server.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "tests/unit/harness.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_follower_serves(void **state)
{
    (void)state;
    int reads = 0, writes = 0;
    for (const api_route *r = api_routes; r->method; r++) {
        bool serves = ctl_ha_follower_serves(r->method, r->pattern);
        if (strcmp(r->method, "GET") != 0) {
            assert_false(serves);
            writes++;
        } else if (strcmp(r->pattern, "/v1/nodes/{node}/desired") == 0 ||
                   strstr(r->pattern, "}/metrics")) { /* the history: the leader's alone */
            assert_false(serves);
        } else {
            assert_true(serves);
            reads++;
        }
    }
    assert_true(reads > 10 && writes > 10);
    assert_false(ctl_ha_follower_serves("PATCH", "/v1/jobs"));
    assert_true(ctl_ha_follower_serves("HEAD", "/v1/jobs"));
}

static void test_location(void **state)
{
    (void)state;
    char out[128];
    assert_int_equal(
        ctl_ha_location("http://b:7070", "/v1/jobs/a b%/cancel", NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "http://b:7070/v1/jobs/a%20b%25/cancel");
    assert_int_equal(ctl_ha_location("http://b:7070", "/v1/\r\n", "", out, sizeof(out)), 0);
    assert_string_equal(out, "http://b:7070/v1/%0D%0A");
    assert_int_equal(ctl_ha_location("http://b:7070", "/v1/jobs", NULL, out, 16), -1);
    /* the query as sent is kept (a proxy session's one-time code); spaces and controls encoded */
    assert_int_equal(ctl_ha_location("http://b:7070", "/v1/jobs/7/proxy/",
                                     "gp_code=gpc_x%2By&a=b c\r", out, sizeof(out)),
                     0);
    assert_string_equal(out, "http://b:7070/v1/jobs/7/proxy/?gp_code=gpc_x%2By&a=b%20c%0D");
    assert_int_equal(ctl_ha_location("http://b:7070", "/v1/jobs", "state=Pending", out, 30), -1);
}

static void test_role(void **state)
{
    (void)state;
    ctl_ha h;
    char leader[64];
    ctl_ha_init(&h);
    assert_int_equal(ctl_ha_get(&h, leader, sizeof(leader)), CTL_HA_LEADER);
    assert_string_equal(leader, "");
    ctl_ha_set(&h, CTL_HA_FOLLOWER, "http://b:7070");
    assert_int_equal(ctl_ha_get(&h, leader, sizeof(leader)), CTL_HA_FOLLOWER);
    assert_string_equal(leader, "http://b:7070");
    ctl_ha_set(&h, CTL_HA_LEADER, "http://ignored");
    assert_int_equal(ctl_ha_get(&h, leader, sizeof(leader)), CTL_HA_LEADER);
    assert_string_equal(leader, "");
    assert_string_equal(ctl_ha_role_name(CTL_HA_FOLLOWER), "follower");
    ctl_ha_fini(&h);
}

/* ---- a real gpupoold's router ---- */

typedef struct ctld {
    char dir[64];
    gp_ctl_config cfg;
    gpupoold g;
    gp_http_server *srv;
    char url[64];
    char admin[128];
} ctld;

static void ctld_start(ctld *dm)
{
    snprintf(dm->dir, sizeof(dm->dir), "/tmp/gpupool-ha.XXXXXX");
    assert_non_null(mkdtemp(dm->dir));
    gp_ctl_config_default(&dm->cfg);
    snprintf(dm->cfg.data_dir, sizeof(dm->cfg.data_dir), "%s", dm->dir);
    gp_diag d;
    gp_diag_clear(&d);
    if (ctl_start(&dm->g, &dm->cfg, &d) != 0) {
        fail_msg("ctl_start: %s", d.msg);
    }
    gp_http_server_config hc = {.host = "127.0.0.1", .max_body = 1 << 20};
    assert_int_equal(gp_http_server_start(&hc, ctl_http_handle, &dm->g, &dm->srv, &d), 0);
    snprintf(dm->url, sizeof(dm->url), "http://127.0.0.1:%d", gp_http_server_port(dm->srv));
    char path[128];
    snprintf(path, sizeof(path), "%s/admin.token", dm->dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(dm->admin, sizeof(dm->admin), f));
    fclose(f);
    dm->admin[strcspn(dm->admin, "\n")] = '\0';
}

static void ctld_stop(ctld *dm)
{
    gp_http_server_stop(dm->srv);
    ctl_stop(&dm->g);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dm->dir);
    assert_int_equal(system(cmd), 0);
}

/* One call; the status, the body parsed (caller decrefs) and the Location into loc. */
static json_t *call(const char *servers, const char *token, const char *method, const char *path,
                    const char *body, int *status)
{
    gp_http_client *c;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_http_client_new_servers(servers, token, &c, &d), 0);
    gp_http_client_set_failover(c, 1, 0);
    char *text = NULL;
    if (gp_http_call(c, method, path, body, body ? strlen(body) : 0, NULL, status, &text, NULL,
                     &d) != 0) {
        fail_msg("%s %s: %s", method, path, d.msg);
    }
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    gp_http_client_free(c);
    return doc;
}

static void test_router_roles(void **state)
{
    (void)state;
    ctld a, b;
    ctld_start(&a);
    ctld_start(&b);
    int status = 0;
    json_t *doc = call(a.url, NULL, "GET", "/readyz", NULL, &status);
    assert_int_equal(status, 200);
    assert_string_equal(json_string_value(json_object_get(doc, "role")), "leader");
    assert_null(json_object_get(doc, "leader"));
    json_decref(doc);

    /* a follower of b: reads served, writes sent to b */
    ctl_ha_set(&a.g.ha, CTL_HA_FOLLOWER, b.url);
    doc = call(a.url, NULL, "GET", "/readyz", NULL, &status);
    assert_int_equal(status, 200);
    assert_string_equal(json_string_value(json_object_get(doc, "role")), "follower");
    assert_string_equal(json_string_value(json_object_get(doc, "leader")), b.url);
    json_decref(doc);
    doc = call(a.url, a.admin, "GET", "/v1/queues", NULL, &status);
    assert_int_equal(status, 200);
    assert_true(json_array_size(json_object_get(doc, "items")) >= 1);
    json_decref(doc);
    const char *tenant = "{\"name\":\"t1\"}";
    doc = call(a.url, NULL, "POST", "/v1/tenants", tenant, &status);
    assert_int_equal(status, 307); /* before authentication */
    assert_string_equal(json_string_value(json_object_get(doc, "leader")), b.url);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "error"), "code")),
                        "GP_EUNAVAIL");
    json_decref(doc);
    doc = call(a.url, NULL, "GET", "/v1/nodes/n1/desired", NULL, &status);
    assert_int_equal(status, 307);
    json_decref(doc);

    /* a client given both ends at the leader b, which stores the tenant */
    char both[160];
    snprintf(both, sizeof(both), "%s,%s", a.url, b.url);
    doc = call(both, b.admin, "POST", "/v1/tenants", tenant, &status);
    assert_int_equal(status, 201);
    json_decref(doc);
    doc = call(b.url, b.admin, "GET", "/v1/tenants/t1", NULL, &status);
    assert_int_equal(status, 200);
    json_decref(doc);
    doc = call(a.url, a.admin, "GET", "/v1/tenants/t1", NULL, &status);
    assert_int_equal(status, 404); /* a's own store never saw it */
    json_decref(doc);

    /* no leader known: 503 with leader null */
    ctl_ha_set(&a.g.ha, CTL_HA_FOLLOWER, NULL);
    doc = call(a.url, NULL, "DELETE", "/v1/tokens/x", NULL, &status);
    assert_int_equal(status, 503);
    assert_true(json_is_null(json_object_get(doc, "leader")));
    json_decref(doc);
    doc = call(a.url, NULL, "GET", "/readyz", NULL, &status);
    assert_true(json_is_null(json_object_get(doc, "leader")));
    json_decref(doc);
    ctld_stop(&a);
    ctld_stop(&b);
}

int main(void)
{
    gp_http_client_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follower_serves),
        cmocka_unit_test(test_location),
        cmocka_unit_test(test_role),
        cmocka_unit_test(test_router_roles),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gp_http_client_global_cleanup();
    return rc;
}

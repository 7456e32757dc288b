/*
 * gpupool nodes taint NODE TAINT...: adds and removes a node's taints in kubectl's syntax, in one
 * request (POST /v1/nodes/{node}/taints: all or nothing):
 *
 *   key=value:Effect   add (replacing the taint of the same key and effect)
 *   key:Effect         add, with an empty value
 *   key=value:Effect-, key:Effect-   remove the taint of that key and effect
 *   key-               remove every taint of the key
 *
 * Effect: NoSchedule, PreferNoSchedule or NoExecute. The server checks keys and values and
 * names the one it refuses (add[0].key); a NoExecute taint requeues the jobs on the node that do
 * not tolerate it.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/resource.h"

#include <stdio.h>
#include <string.h>

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec taint_spec = {
    "nodes taint",
    "nodes taint NODE key=value:Effect|key:Effect|key:Effect-|key- [...]",
    "Adds or removes taints of a node (kubectl's syntax; Effect: NoSchedule, PreferNoSchedule, "
    "NoExecute). Only jobs that tolerate a taint are placed on the node; NoExecute also requeues "
    "the jobs on it that do not.",
    no_opts,
    GP_CLI_CONN,
    2,
    -1,
};

/* Appends the taint arg says to add or remove; -1 when malformed. */
static int one(const char *arg, json_t *add, json_t *remove)
{
    char buf[512];
    size_t n = strlen(arg);
    if (n == 0 || n >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, arg, n + 1);
    bool removing = buf[n - 1] == '-';
    if (removing) {
        buf[--n] = '\0';
    }
    char *colon = strrchr(buf, ':');
    if (!colon && !removing) {
        return -1; /* an added taint needs its effect */
    }
    const char *effect = NULL;
    if (colon) {
        *colon = '\0';
        effect = colon + 1;
    }
    char *eq = strchr(buf, '=');
    const char *value = "";
    if (eq) {
        *eq = '\0';
        value = eq + 1;
    }
    if (!buf[0]) {
        return -1;
    }
    if (removing) {
        json_t *r = json_pack("{s:s}", "key", buf);
        if (effect) {
            json_object_set_new(r, "effect", json_string(effect));
        }
        return json_array_append_new(remove, r);
    }
    return json_array_append_new(
        add, json_pack("{s:s, s:s, s:s}", "key", buf, "value", value, "effect", effect));
}

int gp_cli_nodes_taint(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&taint_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    json_t *add = json_array(), *remove = json_array();
    for (int i = 1; rc == GP_CLI_CONTINUE && i < a.npos; i++) {
        if (one(a.pos[i], add, remove) < 0) {
            rc = gp_cli_usage_error(&taint_spec,
                                    "%s: a taint is key=value:Effect or key:Effect, and ends "
                                    "with - to remove it (key- removes every effect)",
                                    a.pos[i]);
        }
    }
    json_t *body = json_pack("{s:o, s:o}", "add", add, "remove", remove);
    char path[1200];
    if (rc == GP_CLI_CONTINUE &&
        gp_cli_path(path, sizeof(path), "/v1/nodes", a.pos[0], "taints") < 0) {
        rc = gp_cli_usage_error(&taint_spec, "node name too long");
    }
    gp_cli_conn *c = NULL;
    json_t *node = NULL;
    if (rc == GP_CLI_CONTINUE && (rc = gp_cli_connect(&a, &c)) == 0) {
        rc = gp_cli_call(c, "POST", path, body, &node);
    }
    if (rc == 0) {
        char taints[2048];
        gp_cli_node_taints(node, taints, sizeof(taints));
        printf("node %s tainted: %s\n", a.pos[0], taints[0] ? taints : "no taints");
    }
    json_decref(node);
    json_decref(body);
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    return rc;
}

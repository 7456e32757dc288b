/*
 * gpupool nodes cordon|drain|uncordon NODE...: stop placing work on nodes, also requeue the
 * jobs on them (drain, now or at a maintenance deadline), or let work be placed again;
 * gpupool nodes check NODE...: ask the nodes' agents for a health check;
 * gpupool nodes gpu-drain|gpu-undrain NODE GPU: take one GPU out of service or return it;
 * gpupool nodes readmit NODE [--agent-token-file FILE]: give a known node a new agent token
 * (admin); gpupool nodes taint NODE TAINT... (cmd_taint.c). Listing is `gpupool get nodes`.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/secretfile.h"
#include "gpupool/model.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec cordon_spec = {
    "nodes cordon",
    "nodes cordon NODE [NODE...]",
    "Stops placing new work on the nodes.",
    no_opts,
    GP_CLI_CONN,
    1,
    -1,
};

static const gp_cli_opt drain_opts[] = {
    {"in", 0, "DURATION",
     "drain at a maintenance deadline this far ahead (3600, 90s, 30m, 2h): until then only jobs "
     "whose max runtime ends before it start there"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec drain_spec = {
    "nodes drain",
    "nodes drain NODE [NODE...] [--in DURATION]",
    "Cordons the nodes and puts the jobs running on them back in their queues (with --in: at "
    "that deadline, signalling them to checkpoint first).",
    drain_opts,
    GP_CLI_CONN,
    1,
    -1,
};

static const gp_cli_spec uncordon_spec = {
    "nodes uncordon",
    "nodes uncordon NODE [NODE...]",
    "Lets work be placed on the nodes again.",
    no_opts,
    GP_CLI_CONN,
    1,
    -1,
};

static const gp_cli_spec check_spec = {
    "nodes check",
    "nodes check NODE [NODE...]",
    "Asks the nodes' agents for a health check now; drained GPUs waiting for one return to "
    "service when it passes.",
    no_opts,
    GP_CLI_CONN,
    1,
    -1,
};

static int act(const gp_cli_spec *spec, int argc, char **argv, const char *verb, const char *done)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    json_t *body = NULL;
    const char *in = spec == &drain_spec ? gp_cli_arg(&a, "in") : NULL;
    int64_t seconds = 0;
    if (in && gp_cli_parse_seconds(in, &seconds) < 0) {
        gp_cli_args_fini(&a);
        return gp_cli_usage_error(spec, "--in %s: must be seconds or a duration (90s, 30m, 2h)",
                                  in);
    }
    if (in) {
        body = json_pack("{s:I}", "in_s", (json_int_t)seconds);
    }
    gp_cli_conn *c = NULL;
    rc = gp_cli_connect(&a, &c);
    for (int i = 0; rc == 0 && i < a.npos; i++) {
        char path[1200];
        if (gp_cli_path(path, sizeof(path), "/v1/nodes", a.pos[i], verb) < 0) {
            rc = gp_cli_usage_error(spec, "node name too long");
            break;
        }
        rc = gp_cli_call(c, "POST", path, body, NULL);
        if (rc == 0) {
            printf("node %s %s%s%s\n", a.pos[i], done, in ? " in " : "", in ? in : "");
        }
    }
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    json_decref(body);
    return rc;
}

static int cordon(int argc, char **argv)
{
    return act(&cordon_spec, argc, argv, "cordon", "cordoned");
}

static int drain(int argc, char **argv)
{
    return act(&drain_spec, argc, argv, "drain", "drained");
}

static int uncordon(int argc, char **argv)
{
    return act(&uncordon_spec, argc, argv, "uncordon", "uncordoned");
}

static int check(int argc, char **argv)
{
    return act(&check_spec, argc, argv, "check", "asked for a health check");
}

/* ---- one GPU ---- */

static const gp_cli_opt gpu_drain_opts[] = {
    {"reason", 0, "TEXT", "why (shown with the node)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec gpu_drain_spec = {
    "nodes gpu-drain",
    "nodes gpu-drain NODE GPU [--reason TEXT]",
    "Takes GPU number GPU of NODE out of service: nothing new is placed on it; what runs there "
    "keeps running. It returns by gpu-undrain only.",
    gpu_drain_opts,
    GP_CLI_CONN,
    2,
    2,
};

static const gp_cli_spec gpu_undrain_spec = {
    "nodes gpu-undrain",
    "nodes gpu-undrain NODE GPU",
    "Returns a drained GPU to service (also one retired after recurring faults).",
    no_opts,
    GP_CLI_CONN,
    2,
    2,
};

static int gpu_act(const gp_cli_spec *spec, int argc, char **argv, const char *verb,
                   const char *done)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    int64_t gpu;
    char node[600], path[800];
    if (gp_cli_parse_int(a.pos[1], 0, GP_MAX_GPUS_PER_NODE - 1, &gpu) < 0) {
        rc = gp_cli_usage_error(spec, "GPU %s: must be a GPU number, 0..%d", a.pos[1],
                                GP_MAX_GPUS_PER_NODE - 1);
    } else if (gp_cli_escape(a.pos[0], node, sizeof(node)) < 0) {
        rc = gp_cli_usage_error(spec, "node name too long");
    }
    if (rc != GP_CLI_CONTINUE) {
        gp_cli_args_fini(&a);
        return rc;
    }
    snprintf(path, sizeof(path), "/v1/nodes/%s/gpus/%d/%s", node, (int)gpu, verb);
    const char *reason = gp_cli_arg(&a, "reason");
    json_t *body = reason ? json_pack("{s:s}", "reason", reason) : NULL;
    gp_cli_conn *c = NULL;
    rc = gp_cli_connect(&a, &c);
    if (rc == 0) {
        rc = gp_cli_call(c, "POST", path, body, NULL);
    }
    if (rc == 0) {
        printf("node %s GPU %d %s\n", a.pos[0], (int)gpu, done);
    }
    json_decref(body);
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    return rc;
}

static int gpu_drain(int argc, char **argv)
{
    return gpu_act(&gpu_drain_spec, argc, argv, "drain", "drained");
}

static int gpu_undrain(int argc, char **argv)
{
    return gpu_act(&gpu_undrain_spec, argc, argv, "undrain", "back in service");
}

static const gp_cli_opt readmit_opts[] = {
    {"agent-token-file", 0, "FILE",
     "write the new token to FILE (0600; the node's STATE_DIR/agent.token) instead of printing "
     "it"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec readmit_spec = {
    "nodes readmit",
    "nodes readmit NODE [--agent-token-file FILE]",
    "Re-admits a known node (admin): a new agent token for it, every older one revoked at once. "
    "The node's agent registers with the token from its STATE_DIR/agent.token when it starts.",
    readmit_opts,
    GP_CLI_CONN,
    1,
    1,
};

static int readmit(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&readmit_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    const char *file = gp_cli_arg(&a, "agent-token-file");
    char path[1200];
    gp_cli_conn *c = NULL;
    json_t *resp = NULL;
    if (gp_cli_path(path, sizeof(path), "/v1/nodes", a.pos[0], "credential") < 0) {
        rc = gp_cli_usage_error(&readmit_spec, "node name too long");
    } else if ((rc = gp_cli_connect(&a, &c)) == 0) {
        rc = gp_cli_call(c, "POST", path, NULL, &resp);
    }
    const char *token = rc == 0 ? json_string_value(json_object_get(resp, "token")) : NULL;
    if (rc == 0 && !token) {
        fprintf(stderr, "gpupool: nodes readmit: the answer has no token\n");
        rc = 1;
    } else if (rc == 0 && file && gp_cli_write_secret(file, token) < 0) {
        fprintf(stderr,
                "gpupool: nodes readmit: --agent-token-file %s: %s (the node's older tokens are "
                "revoked: run it again)\n",
                file, strerror(errno));
        rc = 1;
    } else if (rc == 0 && file) {
        printf("node %s re-admitted: its new agent token is in %s\n", a.pos[0], file);
    } else if (rc == 0) {
        printf("%s\n", token);
    }
    json_decref(resp);
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    return rc;
}

static const gp_cli_sub subs[] = {
    {"cordon", cordon, "stop placing new work on nodes"},
    {"drain", drain, "cordon nodes and requeue their jobs (now or at a deadline)"},
    {"uncordon", uncordon, "let work be placed on nodes again"},
    {"check", check, "ask the nodes' agents for a health check"},
    {"gpu-drain", gpu_drain, "take one GPU out of service"},
    {"gpu-undrain", gpu_undrain, "return a drained GPU to service"},
    {"readmit", readmit, "give a known node a new agent token (admin)"},
    {"taint", gp_cli_nodes_taint, "add or remove a node's taints (kubectl's syntax)"},
    {NULL, NULL, NULL},
};

int gp_cli_nodes(int argc, char **argv)
{
    return gp_cli_dispatch("nodes", subs, argc, argv);
}

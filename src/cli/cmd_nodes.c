/*
 * gpupool nodes cordon|drain|uncordon NODE...: stop placing work on nodes, also requeue the
 * jobs on them (drain), or let work be placed again. Listing is `gpupool get nodes`.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"

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

static const gp_cli_spec drain_spec = {
    "nodes drain",
    "nodes drain NODE [NODE...]",
    "Cordons the nodes and puts the jobs running on them back in their queues.",
    no_opts,
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

static int act(const gp_cli_spec *spec, int argc, char **argv, const char *verb, const char *done)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    gp_cli_conn *c = NULL;
    rc = gp_cli_connect(&a, &c);
    for (int i = 0; rc == 0 && i < a.npos; i++) {
        char path[1200];
        if (gp_cli_path(path, sizeof(path), "/v1/nodes", a.pos[i], verb) < 0) {
            rc = gp_cli_usage_error(spec, "node name too long");
            break;
        }
        rc = gp_cli_call(c, "POST", path, NULL, NULL);
        if (rc == 0) {
            printf("node %s %s\n", a.pos[i], done);
        }
    }
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
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

static const gp_cli_sub subs[] = {
    {"cordon", cordon, "stop placing new work on nodes"},
    {"drain", drain, "cordon nodes and requeue their jobs"},
    {"uncordon", uncordon, "let work be placed on nodes again"},
    {NULL, NULL, NULL},
};

int gp_cli_nodes(int argc, char **argv)
{
    return gp_cli_dispatch("nodes", subs, argc, argv);
}

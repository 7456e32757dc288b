/*
 * gpupool: the command-line program. main() handles the global flags (--help, --version) and
 * hands everything from the command name on to the command's function, found in one table, so
 * that adding a command is one line here and one file beside this one. main() is the only place
 * that ends the process: it returns the command's exit status.
 */
#include "cli/cli.h"

#include "net/http_client.h"

#include <stdio.h>
#include <string.h>

#ifndef GP_VERSION
#define GP_VERSION "0.0.0"
#endif

static int cmd_help(int argc, char **argv);

static const gp_cli_command commands[] = {
    {"submit", gp_cli_submit, 1, "submit a job (from a file or from flags and a command)", NULL},
    {"sbatch", gp_cli_sbatch, 1, "submit a Slurm batch script (#SBATCH lines, sbatch's options)",
     NULL},
    {"apply", gp_cli_apply, 1, "create or update jobs, queues, tenants from Kubernetes manifests",
     NULL},
    {"delete", gp_cli_delete, 1, "delete what apply -f made of Kubernetes manifests", NULL},
    {"get", gp_cli_get, 1, "list jobs, nodes, queues, tenants, priorityclasses, volumes, tokens",
     "kind"},
    {"describe", gp_cli_describe, 1, "show a job (placement, events) or a node in detail", "kind"},
    {"cancel", gp_cli_cancel, 1, "cancel jobs", "job"},
    {"requeue", gp_cli_requeue, 1, "stop jobs and put them back in their queue", "job"},
    {"logs", gp_cli_logs, 1, "print a job's output (-f to follow it)", "job"},
    {"top", gp_cli_top, 1, "show GPU use now per node or per running job", "top"},
    {"notebook", gp_cli_notebook, 1, "open a notebook: print a one-time URL for a browser", NULL},
    {"nodes", gp_cli_nodes, 1, "cordon, drain or uncordon nodes", "node"},
    {"queue", gp_cli_queue, 1, "create, change or delete queues", NULL},
    {"tenant", gp_cli_tenant, 1, "create, change or delete tenants and their quotas", NULL},
    {"priorityclass", gp_cli_priorityclass, 1, "create, change or delete priority classes", NULL},
    {"volume", gp_cli_volume, 1, "register, change or delete volumes (host directories)", NULL},
    {"token", gp_cli_token, 1, "create, list or revoke API tokens", NULL},
    {"audit", gp_cli_audit, 1, "show the audit log: who changed what, and when (admin)", NULL},
    {"usage", gp_cli_usage, 1, "show metered GPU-hours and cost (table, csv, xlsx, json)", NULL},
    {"login", gp_cli_login, 1, "check a server and token and save them for later commands", NULL},
    {"whoami", gp_cli_whoami, 1, "show the role and tenant of the token in use", NULL},
    {"config", gp_cli_config_cmd, 0, "contexts for several clusters: set-context, use-context, ...",
     NULL},
    {"up", gp_cli_up, 1, "start a local pool: gpupoold and agents with simulated GPUs", NULL},
    {"down", gp_cli_down, 0, "stop a pool started by gpupool up", NULL},
    {"sim", gp_cli_sim, 0, "replay pod traces through the placement policies", NULL},
    {"completion", gp_cli_completion, 0, "print a bash or zsh completion script", NULL},
    {"help", cmd_help, 0, "show this help, or a command's (gpupool help COMMAND)", NULL},
    {"__complete", gp_cli_complete, 1, NULL, NULL},
};

#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void usage(FILE *f)
{
    fputs("usage: gpupool [--help] [--version] COMMAND [ARGS...]\n\ncommands:\n", f);
    for (int i = 0; i < NCOMMANDS; i++) {
        if (commands[i].help) {
            fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].help);
        }
    }
    fputs("\nRun 'gpupool COMMAND --help' for a command's options. The server commands find\n"
          "gpupoold with --server URL, GPUPOOL_SERVER or the file 'gpupool login' writes, and\n"
          "the token likewise (--token, --token-file, GPUPOOL_TOKEN), or both from a context\n"
          "(--context NAME, GPUPOOL_CONTEXT, 'gpupool config use-context'). Exit status: 0 done,\n"
          "1 refused by the server or cannot reach it, 2 bad usage.\n",
          f);
}

const gp_cli_command *gp_cli_command_table(int *n)
{
    *n = NCOMMANDS;
    return commands;
}

static const gp_cli_command *find_command(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++) {
        if (strcmp(commands[i].name, name) == 0) {
            return &commands[i];
        }
    }
    return NULL;
}

/* `gpupool help [COMMAND]`: the program's usage, or COMMAND --help. */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return GP_EXIT_OK;
    }
    const gp_cli_command *c = find_command(argv[1]);
    if (!c || c->run == cmd_help) {
        fprintf(stderr, "gpupool help: unknown command \"%s\"\n", argv[1]);
        return GP_EXIT_USAGE;
    }
    char flag[] = "--help";
    char *args[] = {argv[1], flag, NULL};
    return c->run(2, args);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GP_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return GP_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        puts("gpupool " GP_VERSION);
        return GP_EXIT_OK;
    }
    const gp_cli_command *c = find_command(name);
    if (!c) {
        fprintf(stderr, "gpupool: unknown command \"%s\"\n\n", name);
        usage(stderr);
        return GP_EXIT_USAGE;
    }
    if (c->net && gp_http_client_global_init() < 0) {
        fprintf(stderr, "gpupool: cannot initialise the HTTP client library\n");
        return GP_EXIT_FAILURE;
    }
    int status = c->run(argc - 1, argv + 1);
    if (c->net) {
        gp_http_client_global_cleanup();
    }
    if (fflush(stdout) != 0 && status == GP_EXIT_OK) {
        fprintf(stderr, "gpupool: cannot write to standard output\n");
        status = GP_EXIT_FAILURE;
    }
    return status;
}

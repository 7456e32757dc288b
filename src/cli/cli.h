/*
 * The gpupool command-line program: one function per command, dispatched by main() from a table
 * of (name, function, one-line help).
 *
 * A command function gets the arguments from its own name on (argv[0] is the command name) and
 * returns the process exit status; it prints its own output and its error messages (one line on
 * stderr, prefixed "gpupool <command>: "), and never exits: main() returns what it returns.
 */
#ifndef GP_CLI_CLI_H
#define GP_CLI_CLI_H

/* Exit statuses of gpupool. */
enum {
    GP_EXIT_OK = 0,      /* success, --help */
    GP_EXIT_FAILURE = 1, /* internal failure (out of memory, cannot write the output); the
                            server refused (4xx, 5xx) or cannot be reached */
    GP_EXIT_USAGE = 2,   /* bad input: usage, option values, input files */
};

typedef int gp_cli_fn(int argc, char **argv);

typedef struct gp_cli_command {
    const char *name;
    gp_cli_fn *run;
    int net;          /* talks to gpupoold: main() sets up the HTTP client library first */
    const char *help; /* one line, for `gpupool --help`; NULL: hidden (not listed) */
    /* What its positional arguments are, for shell completion: NULL nothing known, "kind" a
     * kind of `get` then a name of it, "job" job names, "node" a subcommand then node names,
     * "top" nodes|jobs. */
    const char *complete;
} gp_cli_command;

/* The command table of main.c (*n entries). */
const gp_cli_command *gp_cli_command_table(int *n);

/* `gpupool sim`: replays pod traces through the placement policies (cmd_sim.c). */
int gp_cli_sim(int argc, char **argv);

/* The commands that talk to gpupoold, one file each (cmd_NAME.c). Server commands print the
 * server's refusals as "gpupool: MESSAGE" and return GP_EXIT_FAILURE for them and for transport
 * failures; bad usage is GP_EXIT_USAGE. */
int gp_cli_submit(int argc, char **argv);
/* gpupool sbatch: a Slurm batch script as a job (cmd_sbatch.c, sbatch.h). */
int gp_cli_sbatch(int argc, char **argv);
int gp_cli_get(int argc, char **argv);
int gp_cli_describe(int argc, char **argv);
int gp_cli_cancel(int argc, char **argv);
int gp_cli_requeue(int argc, char **argv);
/* gpupool notebook open JOB (cmd_notebook.c). */
int gp_cli_notebook(int argc, char **argv);
int gp_cli_nodes(int argc, char **argv);
/* gpupool nodes taint (cmd_taint.c). */
int gp_cli_nodes_taint(int argc, char **argv);
int gp_cli_queue(int argc, char **argv);
int gp_cli_tenant(int argc, char **argv);
/* `gpupool tenant registry set|list|delete` (cmd_registry.c); argv[0] is "registry". */
int gp_cli_tenant_registry(int argc, char **argv);
int gp_cli_priorityclass(int argc, char **argv);
int gp_cli_volume(int argc, char **argv);
int gp_cli_token(int argc, char **argv);
int gp_cli_audit(int argc, char **argv);
int gp_cli_usage(int argc, char **argv);
int gp_cli_login(int argc, char **argv);
int gp_cli_whoami(int argc, char **argv);
int gp_cli_up(int argc, char **argv);
int gp_cli_logs(int argc, char **argv);
/* gpupool apply -f / delete -f: Kubernetes manifests (cmd_apply.c, k8s.h). */
int gp_cli_apply(int argc, char **argv);
int gp_cli_delete(int argc, char **argv);
int gp_cli_down(int argc, char **argv);
/* gpupool top nodes|jobs (cmd_top.c). */
int gp_cli_top(int argc, char **argv);
/* gpupool completion bash|zsh, and the hidden gpupool __complete WORDS... CUR the scripts
 * call (completion.c). */
int gp_cli_completion(int argc, char **argv);
int gp_cli_complete(int argc, char **argv);
/* gpupool config get-contexts|use-context|... (cmd_config.c). */
int gp_cli_config_cmd(int argc, char **argv);

#endif

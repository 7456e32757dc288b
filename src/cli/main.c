/*
 * gpupool: the command-line program. main() handles the global flags (--help, --version) and
 * hands everything from the command name on to the command's function, found in one table, so
 * that adding a command is one line here and one file beside this one. main() is the only place
 * that ends the process: it returns the command's exit status.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#ifndef GP_VERSION
#define GP_VERSION "0.0.0"
#endif

static int cmd_help(int argc, char **argv);

static const gp_cli_command commands[] = {
    {"sim", gp_cli_sim, "replay pod traces through the placement policies"},
    {"help", cmd_help, "show this help, or a command's (gpupool help COMMAND)"},
};

#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void usage(FILE *f)
{
    fputs("usage: gpupool [--help] [--version] COMMAND [ARGS...]\n\ncommands:\n", f);
    for (int i = 0; i < NCOMMANDS; i++) {
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    }
    fputs("\nRun 'gpupool COMMAND --help' for a command's options.\n", f);
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
    int status = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 && status == GP_EXIT_OK) {
        fprintf(stderr, "gpupool: cannot write to standard output\n");
        status = GP_EXIT_FAILURE;
    }
    return status;
}

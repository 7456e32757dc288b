/*
 * Table-driven options of the server commands (submit, get, describe, ...): each command gives
 * a gp_cli_spec (synopsis, about, a table of options, how many positional arguments) and the
 * one table drives getopt_long, the --help text and the lookups, so they cannot disagree.
 *
 * Every spec also takes --help/-h, and, by its flags, the connection options (--server, --token,
 * --token-file) and the output option (-o/--output FORMAT). Values point into argv (borrowed for
 * the life of the process); the arrays that hold them are the gp_cli_args' own (gp_cli_args_fini).
 */
#ifndef GP_CLI_ARGS_H
#define GP_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

typedef struct gp_cli_opt {
    const char *name;    /* long name, without "--"; NULL ends a table */
    char shortname;      /* 0: none */
    const char *metavar; /* NULL: a flag without a value; "[=X]": a value that may be left out
                            (--name, or --name=X in the same word) */
    const char *help;
} gp_cli_opt;

enum {
    GP_CLI_CONN = 1,         /* takes --server, --token, --token-file */
    GP_CLI_OUTPUT = 2,       /* takes -o/--output table|wide|json|yaml */
    GP_CLI_IN_ORDER = 4,     /* options end at the first positional argument (submit's COMMAND) */
    GP_CLI_OUTPUT_FORMS = 8, /* with GP_CLI_OUTPUT: its help names get's forms too (view.h) */
};

typedef struct gp_cli_spec {
    const char *name;     /* "submit", "queue create": prefixes messages */
    const char *synopsis; /* after "usage: gpupool " */
    const char *about;    /* printed by --help under the usage line; may be NULL */
    const gp_cli_opt *opts;
    unsigned flags;
    int min_pos, max_pos; /* positional arguments; max_pos -1: any number */
} gp_cli_spec;

typedef struct gp_cli_vals {
    const char **v;
    int n;
} gp_cli_vals;

typedef struct gp_cli_args {
    const gp_cli_spec *spec;
    const gp_cli_opt **opts; /* the spec's options, then the common ones */
    gp_cli_vals *vals;       /* per option, in command-line order */
    int nopts;
    char **pos; /* positional arguments (argv's) */
    int npos;
} gp_cli_args;

/* Parse results other than an exit status. */
#define GP_CLI_CONTINUE (-1)

/* Parses argv (argv[0] is the command's name) by spec into *a. Returns GP_CLI_CONTINUE when
 * the command should run (free *a with gp_cli_args_fini), or else an exit status after having
 * printed the help (0) or a usage error (2); *a is then already freed. */
int gp_cli_parse(const gp_cli_spec *spec, int argc, char **argv, gp_cli_args *a);
void gp_cli_args_fini(gp_cli_args *a);

/* The last value of option name (a flag's value is ""), or NULL when not given. */
const char *gp_cli_arg(const gp_cli_args *a, const char *name);
/* All the values of option name, in order (n = 0 when not given). */
gp_cli_vals gp_cli_arg_all(const gp_cli_args *a, const char *name);
/* Whether any option of the spec's own table was given (not the common ones). */
int gp_cli_any_own(const gp_cli_args *a);

/* Prints "gpupool NAME: MESSAGE" and the synopsis on stderr; returns GP_EXIT_USAGE. */
int gp_cli_usage_error(const gp_cli_spec *spec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints the help of spec (usage, about, options) to f. */
void gp_cli_help(const gp_cli_spec *spec, FILE *f);

/* Value parsers of option values; each returns 0, or -1 for a malformed or out-of-range value.
 * An integer lo..hi, decimal digits with an optional '-'. */
int gp_cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* A decimal with at most 3 fraction digits ("2", "0.5", "1.25"), in thousandths, 0..hi. */
int gp_cli_parse_milli(const char *s, int64_t hi, int64_t *milli);
/* A size in MiB: "1024" (MiB), "512Mi", "10Gi", "1Ti" (also MiB, GiB, TiB), > 0. */
int gp_cli_parse_mib(const char *s, int64_t *mib);
/* A duration in seconds: "3600", "90s", "30m", "2h", "30d", > 0. */
int gp_cli_parse_seconds(const char *s, int64_t *seconds);

/* Shell completion (completion.c) asks the tables themselves: while a list sink is set,
 * gp_cli_parse writes the spec's options to it, one a line ("flag --NAME [METAVAR]", and
 * "flag -X [METAVAR]" for a short form), and returns GP_EXIT_OK without parsing;
 * gp_cli_dispatch (and the object commands) given no subcommand write "sub NAME" lines and
 * return GP_EXIT_OK. NULL (the default) turns this off. The one piece of process state of the
 * CLI's parsing: set only by `gpupool __complete`. */
void gp_cli_set_list_sink(FILE *f);
FILE *gp_cli_list_sink(void);

/* A subcommand: `gpupool queue create ...`. */
typedef struct gp_cli_sub {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} gp_cli_sub;

/* Runs the subcommand named by argv[1] from subs (NULL-name terminated); prints the list of
 * subcommands for --help or no subcommand. Returns the exit status. */
int gp_cli_dispatch(const char *cmd, const gp_cli_sub *subs, int argc, char **argv);

#endif

/*
 * The CLI's config file as data: the server and token `gpupool login` saves, and named contexts
 * for several clusters (`gpupool config set-context|use-context|...`). Parsing and formatting
 * only (pure: no I/O); client.c reads and writes the file.
 *
 * The file is "key: value" lines; '#' starts a comment line; unknown keys are ignored (so an
 * older gpupool reads a newer file, and the reverse):
 *
 *   server: URL                      what `gpupool login` saved (used without a context)
 *   token: TOKEN
 *   current-context: NAME            the context used when --context and GPUPOOL_CONTEXT
 *                                    name none
 *   context.NAME.server: URL
 *   context.NAME.token-file: PATH    the token of that context, in a file of its own (0600)
 *   context.NAME.cacert: PATH        CA certificates for an https server
 *
 * A context NAME is 1..63 of letters, digits, '-' and '_'. Values are kept as written, without
 * surrounding blanks; a value may not hold a newline.
 */
#ifndef GP_CLI_CLICONFIG_H
#define GP_CLI_CLICONFIG_H

#include "gpupool/error.h"

#include <stddef.h>

#define GP_CLI_MAX_CONTEXTS     32
#define GP_CLI_CONTEXT_NAME_MAX 64

typedef struct gp_cli_context {
    char name[GP_CLI_CONTEXT_NAME_MAX];
    char server[1024];
    char token_file[1024]; /* "" = none */
    char cacert[1024];     /* "" = none */
} gp_cli_context;

typedef struct gp_cli_config {
    char server[1024]; /* "" = none */
    char token[512];   /* "" = none */
    char current[GP_CLI_CONTEXT_NAME_MAX];
    gp_cli_context ctx[GP_CLI_MAX_CONTEXTS];
    int nctx;
} gp_cli_config;

/* Empties cfg: no server, token, current context or context. Only the fields that say so are
 * written, not the whole (large) struct: a process that reads the file pays for the bytes it
 * uses (gp_cli_config_add clears the context slot it takes). */
void gp_cli_config_clear(gp_cli_config *cfg);
/* Parses text into *cfg. A value too long, a bad context name or too many contexts is
 * GP_EINVAL with d naming the line ("line 3: context.x!.server: bad context name"). */
int gp_cli_config_parse(const char *text, gp_cli_config *cfg, gp_diag *d);
/* Copies s[0, len) without surrounding blanks (spaces, tabs, CR, LF) into out (cap bytes). 0, or
 * -1 when it does not fit. */
int gp_cli_trimmed(const char *s, size_t len, char *out, size_t cap);

/* Writes cfg as the file's text into buf. The length, or -1 when it does not fit. Parsing the
 * text gives cfg back. */
int gp_cli_config_format(const gp_cli_config *cfg, char *buf, size_t cap);

/* Whether name is a valid context name. */
int gp_cli_context_name_ok(const char *name);
/* The context named name, or NULL. */
gp_cli_context *gp_cli_config_find(gp_cli_config *cfg, const char *name);
/* The context named name, added (empty) when missing. NULL when there are already
 * GP_CLI_MAX_CONTEXTS or the name is bad. */
gp_cli_context *gp_cli_config_add(gp_cli_config *cfg, const char *name);
/* Removes the context named name (and current-context when it named it). 0, or -1 when there
 * is none. */
int gp_cli_config_remove(gp_cli_config *cfg, const char *name);

#endif

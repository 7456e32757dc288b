/*
 * The server commands' side of the API: where gpupoold is and which token to show it, one call
 * with its error mapping, and the config file that `gpupool login` writes.
 *
 * Server, token and CA file are each taken from the first of: the flags (--server, --token or
 * --token-file, --cacert), the environment (GPUPOOL_SERVER, GPUPOOL_TOKEN), the config file
 * ($XDG_CONFIG_HOME/gpupool/config, else ~/.config/gpupool/config; cliconfig.h): the context
 * named by --context, GPUPOOL_CONTEXT or current-context (its server, token file and CA file),
 * else the server and token `gpupool login` saved; the server defaults to
 * http://127.0.0.1:7070. An unknown context is a usage error. A server may be a
 * comma-separated list of the controllers of one pool ("http://a:7070,http://b:7070"): calls
 * follow the leader among them (net/http_client.h, gp_http_client_new_servers). The config
 * file's token (and CA file) is used only when every server named is one of the config file's
 * (the context's), so a --server given for another cluster never receives it.
 *
 * Errors: every function here prints its own message on stderr ("gpupool: MESSAGE", the
 * server's error message as is) and returns the exit status for it: GP_EXIT_FAILURE for a
 * refusal by the server or a transport failure, GP_EXIT_USAGE for bad local input (an unreadable
 * token file). 0 is success.
 */
#ifndef GP_CLI_CLIENT_H
#define GP_CLI_CLIENT_H

#include "cli/args.h"
#include "cli/cliconfig.h"
#include "net/http_client.h"

#include "gpupool/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GP_CLI_DEFAULT_SERVER "http://127.0.0.1:7070"

typedef struct gp_cli_target {
    char server[1024];
    char token[512];   /* "" = none */
    char cacert[1024]; /* CA certificates (PEM) for https; "" = the system's */
    char context[64];  /* the context it came from; "" = none */
} gp_cli_target;

typedef struct gp_cli_conn gp_cli_conn;

/* Resolves server and token as above into *t. 0, or an exit status (message printed). */
int gp_cli_resolve(const gp_cli_args *a, gp_cli_target *t);
/* An HTTP client for t (its servers, token and CA file). 0 and *out, or an exit status
 * (message printed). */
int gp_cli_http_new(const gp_cli_target *t, gp_http_client **out);
/* Makes a connection to t (copied). 0 and *out, or an exit status (message printed). */
int gp_cli_connect_to(const gp_cli_target *t, gp_cli_conn **out);
/* gp_cli_resolve, then gp_cli_connect_to. */
int gp_cli_connect(const gp_cli_args *a, gp_cli_conn **out);
void gp_cli_conn_free(gp_cli_conn *c);
/* The server URL of c (borrowed). */
const char *gp_cli_server(const gp_cli_conn *c);

/* One call with a JSON body (borrowed; NULL: none). On a 2xx answer returns 0 and, when resp
 * is not NULL, *resp (a new reference; JSON null for an empty body). Else prints the error and
 * returns GP_EXIT_FAILURE; *resp is then NULL. */
int gp_cli_call(gp_cli_conn *c, const char *method, const char *path, const json_t *body,
                json_t **resp);
/* The message of the server's refusal ({"error": {"message"}}) of the last call on c, printed by
 * it; "" when the last call was not refused that way. Valid until the next call. */
const char *gp_cli_last_refusal(const gp_cli_conn *c);
/* The HTTP status of the last call's answer on c; 0 when there was no answer. */
int gp_cli_last_status(const gp_cli_conn *c);
/* Until the next gp_cli_quiet_status, a refusal with this HTTP status is not printed by the calls
 * on c (0: every refusal is printed): the caller reads it with gp_cli_last_status and
 * gp_cli_last_refusal, and prints it with gp_cli_print_refusal if it does not handle it. */
void gp_cli_quiet_status(gp_cli_conn *c, int status);
/* Whether the POSTs on c ask for a minimal answer (Prefer: return=minimal, RFC 7240): a submit
 * is then answered with the job's id, name and state only, not its whole document, for a command
 * that prints no more (less for the server to build and for the CLI to parse). */
void gp_cli_prefer_minimal(gp_cli_conn *c, bool minimal);
/* Prints the last call's refusal as the call would have ("gpupool: MESSAGE"). */
void gp_cli_print_refusal(const gp_cli_conn *c);
/* GETs the list at path+query (query "" or "?a=b&..."), appending its "items" to items; with
 * all, follows the "next" cursors (after=) to the end. *more tells whether a later page was left.
 * 0 or gp_cli_call's error. */
int gp_cli_get_pages(gp_cli_conn *c, const char *path, const char *query, int all, json_t *items,
                     int *more);
/* The same with a raw body of the given Content-Type, and an Idempotency-Key (NULL: none). */
int gp_cli_call_raw(gp_cli_conn *c, const char *method, const char *path, const char *body,
                    size_t len, const char *content_type, const char *idempotency_key,
                    json_t **resp);

/* Percent-encodes s as one path segment or query value into out. 0, or -1 if it does not
 * fit. */
int gp_cli_escape(const char *s, char *out, size_t cap);
/* Appends "?key=value" (q empty) or "&key=value" to the query q, value percent-encoded. 0, or -1
 * when it does not fit. */
int gp_cli_query_add(char *q, size_t cap, const char *key, const char *value);

/* Builds "BASE/NAME[/SUFFIX]" into buf with NAME percent-encoded (suffix NULL: none). 0, or
 * -1 when it does not fit. */
int gp_cli_path(char *buf, size_t cap, const char *base, const char *name, const char *suffix);
/* GET of BASE/NAME into *doc; prints the error and returns the exit status on failure. */
int gp_cli_get_doc(gp_cli_conn *c, const char *base, const char *name, json_t **doc);

/* The config file's path into buf. 0, or -1 when neither XDG_CONFIG_HOME nor HOME is set. */
int gp_cli_config_path(char *buf, size_t cap);
/* The most bytes of a config file. */
#define GP_CLI_CONFIG_MAX (256 * 1024)
/* Reads the config file at path into *cfg (cliconfig.h); a missing file is an empty config.
 * 0, or a negative GP_E* code with d set (naming the path and the line). */
int gp_cli_config_load(const char *path, gp_cli_config *cfg, gp_diag *d);
/* Writes cfg to the config file at path (mode 0600, its directory made 0700 when missing),
 * replacing it atomically. 0, or a negative GP_E* code with d set. */
int gp_cli_config_save(const char *path, const gp_cli_config *cfg, gp_diag *d);
/* Sets the server and token `gpupool login` saves in the config file at path, keeping its
 * contexts. 0, or a negative GP_E* code with d set. */
int gp_cli_config_write(const char *path, const gp_cli_target *t, gp_diag *d);

#endif

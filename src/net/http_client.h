/*
 * HTTP client: a thin wrapper over libcurl for the CLI, the agent, tests and benchmarks.
 *
 * A client talks to one base URL ("http://127.0.0.1:7070" or "https://..."), holds one curl
 * easy handle and so reuses its connection between calls. It sends `Authorization: Bearer TOKEN`
 * when made with a token, and `Content-Type: application/json` with a body unless the caller
 * gives another Content-Type. Any HTTP status is a success at this layer: the caller reads the
 * status and the API's error body. Transport failures (connect, TLS, timeout) are GP_EIO with a
 * message naming the URL and the cause, e.g. "connect to http://127.0.0.1:7070: Connection
 * refused".
 *
 * Process setup: gp_http_client_global_init() must be called once by main() before any client
 * exists and before threads start (libcurl's global state: TLS library, DNS); its counterpart
 * gp_http_client_global_cleanup() once at exit, after every client is freed.
 *
 * Threads: a client is used by one thread at a time; different clients may be used by different
 * threads at once. Ownership: the client copies the base URL, token and CA path; response bodies
 * are the caller's (free()).
 */
#ifndef GP_NET_HTTP_CLIENT_H
#define GP_NET_HTTP_CLIENT_H

#include "gpupool/error.h"

#include <stddef.h>

typedef struct gp_http_client gp_http_client;

/* Initialises libcurl for the process. 0, or GP_EIO. Call once from main(). */
int gp_http_client_global_init(void);
/* Releases libcurl's process state. Call once at exit, after the last gp_http_client_free. */
void gp_http_client_global_cleanup(void);

/* Makes a client for base_url (scheme, host, port, optional path prefix, no trailing '/'
 * needed); token NULL sends no Authorization header. Defaults: 30 s timeout per call, 10 s to
 * connect, the system's CA store. 0 and *out, or GP_EINVAL (empty or non-http(s) URL, token
 * with CR/LF), GP_ENOMEM; *out is then NULL. */
int gp_http_client_new(const char *base_url, const char *token, gp_http_client **out, gp_diag *d);
/* Frees the client and closes its connection. Accepts NULL. */
void gp_http_client_free(gp_http_client *c);

/* Trusts the CA certificates in this PEM file instead of the system's store (NULL: the system's
 * again). 0, or GP_ENOMEM. The file is read at each TLS handshake. */
int gp_http_client_set_ca_file(gp_http_client *c, const char *path);
/* Limits each whole call to timeout_ms (0: no limit) and its connect phase to connect_ms. */
void gp_http_client_set_timeout(gp_http_client *c, long timeout_ms, long connect_ms);

/* Performs one request: method ("GET", "POST", ...), path_and_query appended to the base URL
 * ("/v1/jobs?state=running"; already percent-encoded), body of len bytes or NULL, extra_headers
 * a NULL-terminated array of "Name: value" strings or NULL. On success (any HTTP status) returns
 * 0 with *status, *resp_body (malloc'd, NUL-terminated, the caller's) and *resp_len (may be
 * NULL). Else GP_EIO (transport, message names the URL), GP_EINVAL, GP_ENOMEM; *resp_body is then
 * NULL. */
int gp_http_call(gp_http_client *c, const char *method, const char *path_and_query,
                 const char *body, size_t len, const char *const *extra_headers, int *status,
                 char **resp_body, size_t *resp_len, gp_diag *d);

#endif

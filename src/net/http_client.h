/*
 * HTTP client for the CLI, the agent, tests and benchmarks. Each request goes through a transport
 * (http_client_impl.h): libcurl for every URL in libgpnet; in the gpupool program libevent's
 * evhttp for plain http:// and libcurl, loaded on first use, for https:// (and for plain HTTP
 * through a proxy set in the environment). What follows holds for both.
 *
 * A client talks to one base URL ("http://127.0.0.1:7070" or "https://..."), or to a list of
 * servers of which one is the leader (gp_http_client_new_servers), and reuses its connection
 * between calls while they go to the same server. It sends `Authorization: Bearer TOKEN`
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

/* Initialises the transports' process state (libcurl's; in the gpupool program libcurl's is set
 * up when a call first needs it instead). 0, or GP_EIO. Call once from main(). */
int gp_http_client_global_init(void);
/* Releases the transports' process state. Call once at exit, after the last
 * gp_http_client_free. */
void gp_http_client_global_cleanup(void);

/* Makes a client for base_url (scheme, host, port, optional path prefix, no trailing '/'
 * needed); token NULL sends no Authorization header. Defaults: 30 s timeout per call, 10 s to
 * connect, the system's CA store. 0 and *out, or GP_EINVAL (empty or non-http(s) URL, token
 * with CR/LF), GP_ENOMEM; *out is then NULL. */
int gp_http_client_new(const char *base_url, const char *token, gp_http_client **out, gp_diag *d);
/* Makes a client for a list of servers, "URL[,URL...]" (servers.h: at most GP_SERVERS_MAX, a
 * bare host:port gets http://), all sent the same token. A call goes to the server that
 * answered the last call; a connection failure, or a "not the leader" answer (a 307, or a 503
 * whose JSON has a "leader" member), makes it try the server the answer names when that one is
 * in the list, else the next, in rounds with a backoff (default 6 rounds, 200 ms doubling to
 * 2 s); a server not in the list is never sent anything. A request that may have been
 * processed before its connection was lost is sent again only when it is safe to repeat
 * (GET, HEAD, PUT, DELETE, OPTIONS, or one with an Idempotency-Key header). The call's result
 * is its last attempt's. 0 and *out, or GP_EINVAL (the list; d names the entry), GP_ENOMEM. */
int gp_http_client_new_servers(const char *servers, const char *token, gp_http_client **out,
                               gp_diag *d);
/* Sets the failover of a client made by gp_http_client_new_servers: at most rounds rounds per
 * call (>= 1), backoff_ms before the second one. No effect on other clients. */
void gp_http_client_set_failover(gp_http_client *c, int rounds, int backoff_ms);
/* The base URL the next call goes to first (borrowed; valid until the next call or free). */
const char *gp_http_client_server(const gp_http_client *c);
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

/*
 * Inside the HTTP client (http_client.h): the transports that carry one attempt of a call.
 *
 * http_client.c owns the public interface, the checks of its arguments, the headers every
 * request carries and the failover over a server list; a transport sends one request to one
 * base URL and returns its answer or why there is none. Two transports exist:
 *
 * - libcurl (http_client_curl.c): any http:// or https:// URL;
 * - libevent's evhttp (http_client_ev.c): plain http:// only, without a proxy.
 *
 * Which one an attempt takes is decided by gp__http_transport_for(), defined in one of two
 * files: http_client_pick.c (in libgpnet: libcurl for everything, its global state set up by
 * gp_http_client_global_init; the agent, gpupoold, tests and benchmarks) and
 * http_client_pick_ev.c (an object library linked into the gpupool program, whose own definition
 * keeps libgpnet's http_client_pick.o out of the link: evhttp for plain http://, libcurl for the
 * rest, set up on its first use so that a program that never needs it never touches it).
 * Linking both is a duplicate-symbol error, never a silent choice.
 */
#ifndef GP_NET_HTTP_CLIENT_IMPL_H
#define GP_NET_HTTP_CLIENT_IMPL_H

#include "gpupool/error.h"
#include "net/servers.h"

#include <stddef.h>

/* A response larger than this is refused rather than exhausting memory. */
#define GP_HTTP_RESP_MAX ((size_t)1 << 30)

/* What every attempt of a call sends. headers: NULL-terminated "Name: value" lines, checked
 * (one line each, with a ':'), the caller's first, then Authorization and Content-Type. */
typedef struct gp_http_req {
    const char *method, *path;
    const char *body; /* NULL: none */
    size_t len;
    const char *const *headers;
    long timeout_ms, connect_ms; /* the whole call (0: no limit), its connect phase */
    const char *ca_file;         /* NULL: the system's store */
} gp_http_req;

/* The answer of one attempt: status, body (malloc'd, NUL-terminated) and the absolute URL a
 * Location header names (malloc'd or NULL); or a transport failure (GP_EIO with d set), outcome
 * telling whether the request may have been processed. */
typedef struct gp_http_resp {
    int status;
    char *body;
    size_t len;
    char *location;
    gp_servers_outcome outcome;
} gp_http_resp;

typedef struct gp_http_transport {
    const char *name;
    int slot; /* index of this transport's per-client state in gp_http_conns */
    /* One attempt to base (no trailing '/'). *state is this transport's per-client state: NULL
     * at first, made by the attempt, kept between attempts and freed by close. 0 with *out
     * filled, or GP_EIO (transport; out->outcome set, d names the URL), GP_EINVAL, GP_ENOMEM;
     * out->body and out->location are NULL on failure. */
    int (*attempt)(void **state, const char *base, const gp_http_req *rq, gp_http_resp *out,
                   gp_diag *d);
    void (*close)(void *state); /* accepts NULL */
} gp_http_transport;

#define GP_HTTP_TRANSPORTS 2

extern const gp_http_transport gp__http_curl;
extern const gp_http_transport gp__http_ev;

/* The transport for an attempt of method to base (http_client_pick*.c). */
const gp_http_transport *gp__http_transport_for(const char *base, const char *method);
/* Whether the evhttp transport can carry method to base: http://, a method evhttp knows (GET,
 * POST, HEAD, PUT, DELETE, OPTIONS, PATCH). */
int gp__http_ev_handles(const char *base, const char *method);
/* gp_http_client_global_init / _cleanup of the chosen pick file. */
int gp__http_transports_init(void);
void gp__http_transports_cleanup(void);

/* The libcurl transport's process state, for pick files that set it up on first use. */
int gp__http_curl_global_init(void);
void gp__http_curl_global_cleanup(void);

#endif

/*
 * Several controller URLs and the choice among them: the list a client is given
 * ("http://a:7070,http://b:7070"), which of them a leader hint names, and what to try next after
 * an answer or a failure. Pure: no I/O, no clock; http_client.c does the calls and the sleeps.
 *
 * A list holds 1 to GP_SERVERS_MAX entries, each "scheme://host[:port][/prefix]" with scheme
 * http or https ("host:port" alone gets "http://"), without user info, query or fragment, and
 * without a trailing '/'. The same origin (scheme, host and port, the default port filled in)
 * may appear once.
 *
 * Failover, for one call: it starts at the server that answered last (f->current). After an
 * attempt the caller classifies the result (gp_servers_outcome) and asks gp_failover_after()
 * what to do: stop and give this result to the caller, or try f->current again after a delay.
 * A leader hint (a 307 Location or the JSON "leader" of a 503) moves to the server it names
 * only when that server is in the list, so a token never goes to a host the user did not name;
 * a hint naming another host is not followed. Otherwise the next server is tried; once every
 * server has been tried in a round, the next round waits (backoff) and at most `rounds` rounds
 * are made. A failure after which the request may have been processed (a timeout, a connection
 * lost after sending) is retried only when the request is safe to repeat (GET, HEAD, PUT,
 * DELETE, or an Idempotency-Key); else the call stops, and the next call starts at the next
 * server. With one server a transport failure is not retried (the caller has its own loop); a
 * "not the leader" answer is (one URL in front of a load balancer during a failover).
 */
#ifndef GP_NET_SERVERS_H
#define GP_NET_SERVERS_H

#include "gpupool/error.h"

#include <stddef.h>

#define GP_SERVERS_MAX     8
#define GP_SERVERS_URL_MAX 512

typedef struct gp_servers {
    int n;
    char url[GP_SERVERS_MAX][GP_SERVERS_URL_MAX]; /* normalised as above */
} gp_servers;

/* Parses a comma-separated list (blanks around entries ignored) into *out. 0, or GP_EINVAL with
 * d naming the entry and what is wrong (empty entry, scheme, host, port, user info, query,
 * duplicate, too many, too long); *out is then empty. */
int gp_servers_parse(const char *text, gp_servers *out, gp_diag *d);
/* The list as "URL,URL" into buf. 0, or -1 when it does not fit. */
int gp_servers_format(const gp_servers *s, char *buf, size_t cap);
/* The index of the entry with the same origin as url (any http(s) URL, path ignored; host
 * compared without case, default ports filled in), or -1 when none has or url is not one. */
int gp_servers_find(const gp_servers *s, const char *url);

/* How an attempt ended, as the caller saw it. */
typedef enum gp_servers_outcome {
    GP_SERVERS_ANSWER,     /* an answer to give to the caller (any other status) */
    GP_SERVERS_NOT_LEADER, /* 307, or 503 with a "leader" member: this one does not take it */
    GP_SERVERS_UNSENT,     /* no connection: the request never left (connect, resolve, TLS) */
    GP_SERVERS_MAYBE_SENT, /* lost after sending began: the server may have acted on it */
} gp_servers_outcome;

typedef struct gp_failover {
    int n;          /* servers in the list */
    int current;    /* where the next attempt goes; kept between calls */
    int rounds;     /* at most this many rounds per call (>= 1) */
    int backoff_ms; /* wait before the second round; doubles, up to backoff_max_ms */
    int backoff_max_ms;
    /* per call (gp_failover_begin) */
    int tried, round, hops;
} gp_failover;

/* A failover state for n servers starting at the first: 6 rounds, 200 ms doubling to 2 s. */
void gp_failover_init(gp_failover *f, int n);
/* Starts a call: from f->current, no attempt yet. */
void gp_failover_begin(gp_failover *f);
/* After an attempt at f->current: hint is the index of the server a leader hint names (-1:
 * none or not in the list); safe tells whether the request may be repeated. Returns -1: stop
 * (the attempt's result is the call's), or the milliseconds to wait before the next attempt,
 * which goes to the (updated) f->current. */
int gp_failover_after(gp_failover *f, gp_servers_outcome o, int hint, int safe);

/* Whether a request of method with these extra headers may be sent twice: GET, HEAD, PUT,
 * DELETE, OPTIONS, or any with an "Idempotency-Key:" header. */
int gp_servers_request_safe(const char *method, const char *const *extra_headers);
/* Classifies an HTTP answer: 307 is NOT_LEADER with *hint the server its Location names, else
 * the one its JSON body's "leader" names; 503 whose JSON body has a "leader" member (a URL, or
 * null while there is no leader) is NOT_LEADER with *hint the server a string leader names;
 * anything else is ANSWER. *hint is -1 unless the URL named is in s. */
gp_servers_outcome gp_servers_classify(const gp_servers *s, int status, const char *location,
                                       const char *body, size_t len, int *hint);

#endif

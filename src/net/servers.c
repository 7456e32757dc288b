/*
 * Server lists and the failover choice (see servers.h). An origin is compared as (scheme,
 * lower-case host, port with the scheme's default filled in), so "http://A:80" and "http://a"
 * are one server and a leader hint matches however the leader spells its advertised URL.
 */
#include "net/servers.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct origin {
    int https;
    char host[256];
    int port; /* effective: the default when none was given */
    int port_given;
    const char *path; /* the rest of the URL, "" or "/..." */
} origin;

/* Splits url into o. 0, or -1 with *why naming what is wrong. */
static int split(const char *url, origin *o, const char **why)
{
    memset(o, 0, sizeof(*o));
    const char *p = url;
    if (strncasecmp(p, "https://", 8) == 0) {
        o->https = 1;
        p += 8;
    } else if (strncasecmp(p, "http://", 7) == 0) {
        p += 7;
    } else if (strstr(p, "://")) {
        *why = "the scheme must be http or https";
        return -1;
    }
    size_t alen = strcspn(p, "/?#");
    if (memchr(p, '@', alen)) {
        *why = "user info (user@) is not allowed";
        return -1;
    }
    const char *host = p, *end = p + alen, *colon;
    size_t hlen;
    if (*p == '[') {
        const char *close = memchr(p, ']', alen);
        if (!close) {
            *why = "an IPv6 address needs a closing ']'";
            return -1;
        }
        hlen = (size_t)(close - p) + 1;
        colon = close + 1 < end ? close + 1 : NULL;
        if (colon && *colon != ':') {
            *why = "bad host";
            return -1;
        }
    } else {
        colon = memchr(p, ':', alen);
        hlen = colon ? (size_t)(colon - p) : alen;
    }
    if (hlen == 0 || hlen >= sizeof(o->host)) {
        *why = hlen ? "the host is too long" : "no host";
        return -1;
    }
    for (size_t i = 0; i < hlen; i++) {
        unsigned char ch = (unsigned char)host[i];
        if (!isalnum(ch) && !strchr(".-_[]:", ch)) {
            *why = "bad character in the host";
            return -1;
        }
        o->host[i] = (char)tolower(ch);
    }
    o->port = o->https ? 443 : 80;
    if (colon) {
        long port = 0;
        const char *q = colon + 1;
        for (; q < end && isdigit((unsigned char)*q) && port <= 65535; q++) {
            port = port * 10 + (*q - '0');
        }
        if (q != end || q == colon + 1 || port < 1 || port > 65535) {
            *why = "the port must be 1 to 65535";
            return -1;
        }
        o->port = (int)port;
        o->port_given = 1;
    }
    o->path = end;
    if (strpbrk(end, "?#")) {
        *why = "a query or fragment is not allowed";
        return -1;
    }
    for (const char *q = end; *q; q++) {
        if ((unsigned char)*q <= ' ' || *q == 0x7f || *q == ',') {
            *why = "bad character in the path";
            return -1;
        }
    }
    return 0;
}

static int same_origin(const origin *a, const origin *b)
{
    return a->https == b->https && a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* Adds one entry (len bytes at s, blanks trimmed) to out. 0, or GP_EINVAL with d set. */
static int add_entry(gp_servers *out, const char *s, size_t len, int pos, gp_diag *d)
{
    while (len > 0 && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1])) {
        len--;
    }
    if (len == 0) {
        return gp_diag_set(d, GP_EINVAL, "server list: entry %d is empty", pos);
    }
    if (out->n >= GP_SERVERS_MAX) {
        return gp_diag_set(d, GP_EINVAL, "server list: more than %d servers", GP_SERVERS_MAX);
    }
    char raw[GP_SERVERS_URL_MAX];
    if (len >= sizeof(raw) - 8) {
        return gp_diag_set(d, GP_EINVAL, "server list: entry %d is too long", pos);
    }
    memcpy(raw, s, len);
    raw[len] = '\0';
    origin o, other;
    const char *why = NULL;
    if (split(raw, &o, &why) < 0) {
        return gp_diag_set(d, GP_EINVAL, "server list: entry %d (%.80s): %s", pos, raw, why);
    }
    for (int i = 0; i < out->n; i++) {
        if (split(out->url[i], &other, &why) == 0 && same_origin(&o, &other)) {
            return gp_diag_set(d, GP_EINVAL, "server list: entry %d (%.80s) repeats entry %d", pos,
                               raw, i + 1);
        }
    }
    size_t plen = strlen(o.path);
    while (plen > 0 && o.path[plen - 1] == '/') {
        plen--;
    }
    char port[16] = "";
    if (o.port_given) {
        snprintf(port, sizeof(port), ":%d", o.port);
    }
    snprintf(out->url[out->n++], GP_SERVERS_URL_MAX, "%s://%s%s%.*s", o.https ? "https" : "http",
             o.host, port, (int)plen, o.path);
    return 0;
}

int gp_servers_parse(const char *text, gp_servers *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    if (!text) {
        return gp_diag_set(d, GP_EINVAL, "server list: empty");
    }
    int pos = 1;
    for (const char *p = text;; pos++) {
        size_t len = strcspn(p, ",");
        int rc = add_entry(out, p, len, pos, d);
        if (rc < 0) {
            memset(out, 0, sizeof(*out));
            return rc;
        }
        if (!p[len]) {
            return 0;
        }
        p += len + 1;
    }
}

int gp_servers_format(const gp_servers *s, char *buf, size_t cap)
{
    size_t used = 0;
    if (cap == 0) {
        return -1;
    }
    buf[0] = '\0';
    for (int i = 0; i < s->n; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s", i ? "," : "", s->url[i]);
        if (n < 0 || (size_t)n >= cap - used) {
            return -1;
        }
        used += (size_t)n;
    }
    return 0;
}

int gp_servers_find(const gp_servers *s, const char *url)
{
    origin want, have;
    const char *why;
    if (!url || (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)) {
        return -1;
    }
    /* A Location may carry a query: only the origin matters here. */
    char head[GP_SERVERS_URL_MAX];
    snprintf(head, sizeof(head), "%.*s", (int)strcspn(url, "?#"), url);
    if (split(head, &want, &why) < 0) {
        return -1;
    }
    for (int i = 0; i < s->n; i++) {
        if (split(s->url[i], &have, &why) == 0 && same_origin(&want, &have)) {
            return i;
        }
    }
    return -1;
}

void gp_failover_init(gp_failover *f, int n)
{
    memset(f, 0, sizeof(*f));
    f->n = n < 1 ? 1 : n;
    f->rounds = 6;
    f->backoff_ms = 200;
    f->backoff_max_ms = 2000;
}

void gp_failover_begin(gp_failover *f)
{
    f->tried = 0;
    f->round = 0;
    f->hops = 0;
    if (f->current < 0 || f->current >= f->n) {
        f->current = 0;
    }
}

/* The wait before round r (1 = the second round). */
static int backoff(const gp_failover *f, int r)
{
    long ms = f->backoff_ms;
    for (int i = 1; i < r && ms < f->backoff_max_ms; i++) {
        ms *= 2;
    }
    return (int)(ms < f->backoff_max_ms ? ms : f->backoff_max_ms);
}

int gp_failover_after(gp_failover *f, gp_servers_outcome o, int hint, int safe)
{
    if (o == GP_SERVERS_ANSWER) {
        return -1;
    }
    if (o == GP_SERVERS_UNSENT && f->n == 1) {
        return -1; /* one server: the caller's own loop retries */
    }
    if (o == GP_SERVERS_MAYBE_SENT && (!safe || f->n == 1)) {
        f->current = (f->current + 1) % f->n; /* the next call starts elsewhere */
        return -1;
    }
    /* A hint to another listed server is followed at once, a few times per round. */
    if (o == GP_SERVERS_NOT_LEADER && hint >= 0 && hint < f->n && hint != f->current &&
        f->hops < f->n) {
        f->hops++;
        f->current = hint;
        return 0;
    }
    f->current = (f->current + 1) % f->n;
    if (++f->tried < f->n) {
        return 0;
    }
    f->tried = 0;
    f->hops = 0;
    if (++f->round >= f->rounds) {
        return -1;
    }
    return backoff(f, f->round);
}

int gp_servers_request_safe(const char *method, const char *const *extra_headers)
{
    static const char *const safe[] = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS"};
    for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++) {
        if (strcmp(method, safe[i]) == 0) {
            return 1;
        }
    }
    for (size_t i = 0; extra_headers && extra_headers[i]; i++) {
        if (strncasecmp(extra_headers[i], "Idempotency-Key:", 16) == 0) {
            return 1;
        }
    }
    return 0;
}

gp_servers_outcome gp_servers_classify(const gp_servers *s, int status, const char *location,
                                       const char *body, size_t len, int *hint)
{
    *hint = -1;
    if (status == 307 && (*hint = gp_servers_find(s, location)) >= 0) {
        return GP_SERVERS_NOT_LEADER;
    }
    if ((status != 503 && status != 307) || !body || len == 0) {
        return status == 307 ? GP_SERVERS_NOT_LEADER : GP_SERVERS_ANSWER;
    }
    json_t *doc = json_loadb(body, len, 0, NULL);
    json_t *leader = json_object_get(doc, "leader");
    gp_servers_outcome o = leader || status == 307 ? GP_SERVERS_NOT_LEADER : GP_SERVERS_ANSWER;
    if (json_is_string(leader)) {
        *hint = gp_servers_find(s, json_string_value(leader));
    }
    json_decref(doc);
    return o;
}

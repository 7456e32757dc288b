/*
 * The controller's role and a follower's answers (see ha.h).
 */
#include "ctl/ha.h"

#include "gpupool/error.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_ha_init(ctl_ha *h)
{
    memset(h, 0, sizeof(*h));
    pthread_mutex_init(&h->lock, NULL);
    h->role = CTL_HA_LEADER;
}

void ctl_ha_fini(ctl_ha *h)
{
    pthread_mutex_destroy(&h->lock);
}

void ctl_ha_set(ctl_ha *h, ctl_ha_role role, const char *leader)
{
    pthread_mutex_lock(&h->lock);
    h->role = role;
    snprintf(h->leader, sizeof(h->leader), "%s", role == CTL_HA_FOLLOWER && leader ? leader : "");
    pthread_mutex_unlock(&h->lock);
}

ctl_ha_role ctl_ha_get(ctl_ha *h, char *leader, size_t cap)
{
    pthread_mutex_lock(&h->lock);
    ctl_ha_role role = h->role;
    if (cap > 0) {
        snprintf(leader, cap, "%s", h->leader);
    }
    pthread_mutex_unlock(&h->lock);
    return role;
}

const char *ctl_ha_role_name(ctl_ha_role role)
{
    return role == CTL_HA_LEADER ? "leader" : "follower";
}

bool ctl_ha_follower_serves(const char *method, const char *pattern)
{
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        return false;
    }
    /* the history (history.h) lives in the leader's memory only: a follower has none */
    static const char *const leaders[] = {"/v1/nodes/{node}/desired", "/v1/jobs/{job}/metrics",
                                          "/v1/tenants/{tenant}/metrics"};
    for (size_t i = 0; i < sizeof(leaders) / sizeof(leaders[0]); i++) {
        if (strcmp(pattern, leaders[i]) == 0) {
            return false;
        }
    }
    return true;
}

/* Appends text to out[*used..cap), each byte for which keep() is false percent-encoded. */
static int append_encoded(char *out, size_t cap, size_t *used, const char *text,
                          bool (*keep)(unsigned char))
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        bool plain = keep(*p);
        if (*used + (plain ? 1 : 3) >= cap) {
            return -1;
        }
        if (plain) {
            out[(*used)++] = (char)*p;
        } else {
            out[(*used)++] = '%';
            out[(*used)++] = hex[*p >> 4];
            out[(*used)++] = hex[*p & 15];
        }
    }
    out[*used] = '\0';
    return 0;
}

static bool path_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("-._~/", c));
}

static bool query_byte(unsigned char c)
{
    return c > ' ' && c < 0x7f; /* as sent: already encoded where it needed to be */
}

int ctl_ha_location(const char *leader, const char *path, const char *query, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s", leader);
    if (n < 0 || (size_t)n >= cap) {
        return -1;
    }
    size_t used = (size_t)n;
    if (append_encoded(out, cap, &used, path, path_byte) < 0) {
        return -1;
    }
    if (query && query[0]) {
        if (used + 2 >= cap) {
            return -1;
        }
        out[used++] = '?';
        out[used] = '\0';
        return append_encoded(out, cap, &used, query, query_byte);
    }
    return 0;
}

void ctl_ha_redirect(const char *leader, const char *path, const char *target,
                     gp_http_response *resp)
{
    char location[CTL_HA_URL_MAX + 2 * 8192], msg[CTL_HA_URL_MAX + 64];
    const char *q = target ? strchr(target, '?') : NULL;
    bool known = leader && leader[0] &&
                 ctl_ha_location(leader, path, q ? q + 1 : NULL, location, sizeof(location)) == 0;
    if (known) {
        snprintf(msg, sizeof(msg), "not the leader: send writes to %s", leader);
    } else {
        snprintf(msg, sizeof(msg), "no leader yet: retry in a moment");
    }
    json_t *doc = json_pack("{s:{s:s,s:s},s:o}", "error", "code", gp_strerror_name(GP_EUNAVAIL),
                            "message", msg, "leader", known ? json_string(leader) : json_null());
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) {
        gp_http_respond_error(resp, GP_ENOMEM, "out of memory");
        return;
    }
    gp_http_response_set_body(resp, known ? 307 : 503, "application/json", text, strlen(text));
    if (known) {
        gp_http_response_add_header(resp, "Location", location);
    } else {
        gp_http_response_add_header(resp, "Retry-After", "1");
    }
}

/*
 * The proxy's memory (contract in proxy_state.h): small arrays under one lock. Lookups scan
 * them; they hold at most a few thousand live entries in practice, and the scan compares
 * hashes, never the secrets themselves.
 */
#include "ctl/proxy_state.h"
#include "ctl/proxy_pool.h"

#include "gpupool/error.h"
#include "net/token.h"

#include <pthread.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

typedef struct px_secret {
    char hash[GP_TOKEN_HASH_HEX];
    int64_t tenant, job;
    int64_t expires_ms;
} px_secret;

typedef struct px_seen {
    int64_t job, ms;
} px_seen;

struct ctl_proxy {
    pthread_mutex_t lock;
    pthread_cond_t idle; /* workers dropped to 0 */
    px_secret *codes, *sessions;
    int ncodes, nsessions;
    px_seen *seen;
    int nseen, capseen;
    int workers;
    int fds[PX_MAX_WORKERS]; /* per worker slot: the socket it waits on, -1 */
    int64_t tenants[PX_MAX_WORKERS];
    bool used[PX_MAX_WORKERS];
    bool stopping;
    px_pool *tunnels; /* idle upstream tunnels (proxy_pool.h) */
};

ctl_proxy *ctl_proxy_new(void)
{
    ctl_proxy *p = calloc(1, sizeof(*p));
    if (p) {
        p->codes = calloc(PX_MAX_CODES, sizeof(px_secret));
        p->sessions = calloc(PX_MAX_SESSIONS, sizeof(px_secret));
        p->tunnels = px_pool_new();
    }
    if (!p || !p->codes || !p->sessions || !p->tunnels) {
        if (p) {
            free(p->codes);
            free(p->sessions);
            px_pool_free(p->tunnels);
            free(p);
        }
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->idle, NULL);
    return p;
}

void ctl_proxy_free(ctl_proxy *p)
{
    if (!p) {
        return;
    }
    ctl_proxy_stop(p);
    pthread_mutex_lock(&p->lock);
    while (p->workers > 0) {
        pthread_cond_wait(&p->idle, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->idle);
    free(p->codes);
    free(p->sessions);
    free(p->seen);
    px_pool_free(p->tunnels);
    free(p);
}

/* Adds a secret to a table of cap entries: expired ones go first, then the oldest. */
static void table_add(px_secret *t, int *n, int cap, const px_secret *s, int64_t now)
{
    int k = 0;
    for (int i = 0; i < *n; i++) {
        if (t[i].expires_ms > now) {
            t[k++] = t[i];
        }
    }
    *n = k;
    if (*n == cap) { /* all live: the one that expires first goes */
        memmove(t, t + 1, (size_t)(cap - 1) * sizeof(*t));
        (*n)--;
    }
    t[(*n)++] = *s;
}

static int table_find(px_secret *t, int n, const char *secret, int64_t now)
{
    char hash[GP_TOKEN_HASH_HEX];
    if (!secret || gp_token_hash(secret, hash) < 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (t[i].expires_ms > now && gp_token_hash_equal(t[i].hash, hash)) {
            return i;
        }
    }
    return -1;
}

static int make(ctl_proxy *p, bool code, int64_t tenant, int64_t job, int64_t now, char *out)
{
    px_secret s = {.tenant = tenant,
                   .job = job,
                   .expires_ms = now + (code ? PX_CODE_TTL_MS : PX_SESSION_TTL_MS)};
    if (gp_token_generate(code ? "gpc" : "gps", out, PX_SECRET_MAX) < 0 ||
        gp_token_hash(out, s.hash) < 0) {
        out[0] = '\0';
        return GP_EIO;
    }
    pthread_mutex_lock(&p->lock);
    if (code) {
        table_add(p->codes, &p->ncodes, PX_MAX_CODES, &s, now);
    } else {
        table_add(p->sessions, &p->nsessions, PX_MAX_SESSIONS, &s, now);
    }
    pthread_mutex_unlock(&p->lock);
    return 0;
}

int ctl_proxy_code_make(ctl_proxy *p, int64_t tenant, int64_t job, int64_t now_ms, char *code)
{
    return make(p, true, tenant, job, now_ms, code);
}

int ctl_proxy_session_make(ctl_proxy *p, int64_t tenant, int64_t job, int64_t now_ms, char *cookie)
{
    return make(p, false, tenant, job, now_ms, cookie);
}

bool ctl_proxy_code_take(ctl_proxy *p, const char *code, int64_t now_ms, int64_t *tenant,
                         int64_t *job)
{
    pthread_mutex_lock(&p->lock);
    int i = table_find(p->codes, p->ncodes, code, now_ms);
    if (i >= 0) {
        *tenant = p->codes[i].tenant;
        *job = p->codes[i].job;
        p->codes[i] = p->codes[--p->ncodes];
    }
    pthread_mutex_unlock(&p->lock);
    return i >= 0;
}

bool ctl_proxy_session_find(ctl_proxy *p, const char *cookie, int64_t now_ms, int64_t *tenant,
                            int64_t *job)
{
    pthread_mutex_lock(&p->lock);
    int i = table_find(p->sessions, p->nsessions, cookie, now_ms);
    if (i >= 0) {
        *tenant = p->sessions[i].tenant;
        *job = p->sessions[i].job;
    }
    pthread_mutex_unlock(&p->lock);
    return i >= 0;
}

void ctl_proxy_touch(ctl_proxy *p, int64_t job, int64_t now_ms)
{
    pthread_mutex_lock(&p->lock);
    int i = 0;
    while (i < p->nseen && p->seen[i].job != job) {
        i++;
    }
    if (i == p->nseen) {
        if (p->nseen == p->capseen) {
            int cap = p->capseen ? p->capseen * 2 : 64;
            px_seen *n = realloc(p->seen, (size_t)cap * sizeof(*n));
            if (!n) {
                pthread_mutex_unlock(&p->lock);
                return;
            }
            p->seen = n;
            p->capseen = cap;
        }
        p->seen[p->nseen++] = (px_seen){job, 0};
    }
    if (now_ms > p->seen[i].ms) {
        p->seen[i].ms = now_ms;
    }
    pthread_mutex_unlock(&p->lock);
}

int64_t ctl_proxy_last_seen(ctl_proxy *p, int64_t job)
{
    int64_t ms = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nseen; i++) {
        if (p->seen[i].job == job) {
            ms = p->seen[i].ms;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return ms;
}

bool ctl_proxy_worker_enter(ctl_proxy *p, int64_t tenant, int *slot)
{
    pthread_mutex_lock(&p->lock);
    int i = -1, mine = 0;
    for (int k = 0; k < PX_MAX_WORKERS; k++) {
        if (!p->used[k] && i < 0) {
            i = k;
        }
        mine += p->used[k] && p->tenants[k] == tenant;
    }
    bool ok = !p->stopping && i >= 0 && mine < PX_MAX_PER_TENANT;
    if (ok) {
        p->used[i] = true;
        p->tenants[i] = tenant;
        p->fds[i] = -1;
        p->workers++;
        *slot = i;
    }
    pthread_mutex_unlock(&p->lock);
    return ok;
}

void ctl_proxy_worker_socket(ctl_proxy *p, int slot, int fd)
{
    pthread_mutex_lock(&p->lock);
    p->fds[slot] = fd;
    if (p->stopping && fd >= 0) {
        shutdown(fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&p->lock);
}

void ctl_proxy_worker_leave(ctl_proxy *p, int slot)
{
    pthread_mutex_lock(&p->lock);
    p->used[slot] = false;
    p->fds[slot] = -1;
    if (--p->workers == 0) {
        pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->lock);
}

void ctl_proxy_stop(ctl_proxy *p)
{
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    for (int i = 0; i < PX_MAX_WORKERS; i++) {
        if (p->used[i] && p->fds[i] >= 0) {
            shutdown(p->fds[i], SHUT_RDWR);
        }
    }
    pthread_mutex_unlock(&p->lock);
    px_pool_stop(p->tunnels);
}

px_pool *ctl_proxy_tunnels(ctl_proxy *p)
{
    return p->tunnels;
}

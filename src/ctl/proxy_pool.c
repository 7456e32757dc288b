/*
 * The proxy's idle upstream tunnels (see proxy_pool.h): a fixed table of PX_POOL_MAX entries
 * under one lock, scanned linearly (it is small). Sockets to close are collected under the lock
 * and closed after it.
 */
#include "ctl/proxy_pool.h"

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct idle_tunnel {
    bool used;
    px_pool_key key;
    int fd;
    int64_t since_ms; /* kept since */
} idle_tunnel;

struct px_pool {
    pthread_mutex_t lock;
    idle_tunnel t[PX_POOL_MAX];
    bool stopped;
};

/* Sockets to close once the lock is released. */
typedef struct closing {
    int fd[PX_POOL_MAX + 2];
    int n;
} closing;

static void drop(idle_tunnel *e, closing *c)
{
    c->fd[c->n++] = e->fd;
    e->used = false;
    e->fd = -1;
}

static void close_all(closing *c)
{
    for (int i = 0; i < c->n; i++) {
        close(c->fd[i]);
    }
}

static bool same_replica(const px_pool_key *a, const px_pool_key *b)
{
    return a->tenant == b->tenant && a->job == b->job && a->replica == b->replica &&
           strcmp(a->agent, b->agent) == 0;
}

static bool same_target(const px_pool_key *a, const px_pool_key *b)
{
    return same_replica(a, b) && a->epoch == b->epoch && a->port == b->port;
}

/* Whether an idle tunnel is still usable: nothing to read (no end of stream, no stray bytes,
 * no error) without waiting. */
static bool quiet(int fd)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    return poll(&pf, 1, 0) == 0;
}

/* Closes what is expired, and the tunnels of an older epoch of key's replica (key may be NULL). */
static void sweep_locked(px_pool *p, const px_pool_key *key, int64_t now_ms, bool check, closing *c)
{
    for (int i = 0; i < PX_POOL_MAX; i++) {
        idle_tunnel *e = &p->t[i];
        if (!e->used) {
            continue;
        }
        bool stale_epoch = key && same_replica(&e->key, key) && e->key.epoch < key->epoch;
        if (stale_epoch || now_ms - e->since_ms >= PX_POOL_IDLE_MS || (check && !quiet(e->fd))) {
            drop(e, c);
        }
    }
}

px_pool *px_pool_new(void)
{
    px_pool *p = calloc(1, sizeof(*p));
    if (p) {
        pthread_mutex_init(&p->lock, NULL);
    }
    return p;
}

void px_pool_free(px_pool *p)
{
    if (!p) {
        return;
    }
    px_pool_stop(p);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int px_pool_take(px_pool *p, const px_pool_key *key, int64_t now_ms)
{
    closing c = {.n = 0};
    int fd = -1;
    pthread_mutex_lock(&p->lock);
    sweep_locked(p, key, now_ms, false, &c);
    while (fd < 0) {
        idle_tunnel *best = NULL;
        for (int i = 0; i < PX_POOL_MAX; i++) {
            idle_tunnel *e = &p->t[i];
            if (e->used && same_target(&e->key, key) && (!best || e->since_ms > best->since_ms)) {
                best = e;
            }
        }
        if (!best) {
            break;
        }
        if (quiet(best->fd)) {
            fd = best->fd;
            best->used = false;
            best->fd = -1;
        } else {
            drop(best, &c); /* closed by its upstream meanwhile */
        }
    }
    pthread_mutex_unlock(&p->lock);
    close_all(&c);
    return fd;
}

void px_pool_put(px_pool *p, const px_pool_key *key, int fd, int64_t now_ms)
{
    if (!p) {
        close(fd);
        return;
    }
    closing c = {.n = 0};
    pthread_mutex_lock(&p->lock);
    sweep_locked(p, key, now_ms, false, &c);
    idle_tunnel *free_slot = NULL, *oldest = NULL, *oldest_target = NULL;
    int of_target = 0;
    bool newer_epoch = false;
    for (int i = 0; i < PX_POOL_MAX; i++) {
        idle_tunnel *e = &p->t[i];
        if (!e->used) {
            free_slot = free_slot ? free_slot : e;
            continue;
        }
        newer_epoch = newer_epoch || (same_replica(&e->key, key) && e->key.epoch > key->epoch);
        oldest = !oldest || e->since_ms < oldest->since_ms ? e : oldest;
        if (same_target(&e->key, key)) {
            of_target++;
            oldest_target =
                !oldest_target || e->since_ms < oldest_target->since_ms ? e : oldest_target;
        }
    }
    if (p->stopped || newer_epoch) { /* the replica restarted since this tunnel was taken */
        c.fd[c.n++] = fd;
    } else {
        idle_tunnel *slot = of_target >= PX_POOL_PER_TARGET ? oldest_target
                            : free_slot                     ? free_slot
                                                            : oldest;
        if (slot->used) {
            drop(slot, &c);
        }
        *slot = (idle_tunnel){.used = true, .key = *key, .fd = fd, .since_ms = now_ms};
    }
    pthread_mutex_unlock(&p->lock);
    close_all(&c);
}

void px_pool_sweep(px_pool *p, int64_t now_ms)
{
    closing c = {.n = 0};
    pthread_mutex_lock(&p->lock);
    sweep_locked(p, NULL, now_ms, true, &c);
    pthread_mutex_unlock(&p->lock);
    close_all(&c);
}

void px_pool_stop(px_pool *p)
{
    closing c = {.n = 0};
    pthread_mutex_lock(&p->lock);
    p->stopped = true;
    for (int i = 0; i < PX_POOL_MAX; i++) {
        if (p->t[i].used) {
            drop(&p->t[i], &c);
        }
    }
    pthread_mutex_unlock(&p->lock);
    close_all(&c);
}

int px_pool_count(px_pool *p)
{
    int n = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < PX_POOL_MAX; i++) {
        n += p->t[i].used;
    }
    pthread_mutex_unlock(&p->lock);
    return n;
}

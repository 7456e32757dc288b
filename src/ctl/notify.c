/*
 * Alerts to Alertmanager (see notify.h): the documents, the pending list the committer fills,
 * the conditions it watches, and the sender thread with its queue.
 *
 * The queue is a ring of alerts, as JSON text, numbered by sequence: entries head..tail-1 are
 * held. Each receiver has next, the first entry it has not taken; the sender takes a batch (at
 * most CTL_NOTIFY_BATCH entries from next, copied into one request body) and moves next past it,
 * so the batch is the receiver's alone while it is posted and retried, and the ring frees an
 * entry once every receiver has taken it. A full ring drops its oldest entry, counting it failed
 * for each receiver that had not taken it yet.
 *
 * Locks: the pending list and the conditions belong to the committer (the state lock); the
 * ring, the receivers' next, the drop count and stop are under n->lock, which is only held to
 * move pointers, copy text and count, never during I/O, so the committer never waits on a post.
 * Only text crosses between the threads: jansson's reference counts are not meant to be shared
 * (json_decref reads the count before its atomic decrement).
 */
#include "ctl/notify.h"

#include "base/clock.h"
#include "base/log.h"
#include "ctl/alerts_active.h"
#include "ctl/metrics.h"
#include "net/http_client.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS   60000
#define POST_TIMEOUT_MS  10000
#define CONNECT_MS       5000
#define STOP_TIMEOUT_MS  2000 /* the last try at stop */

typedef struct receiver {
    char url[GP_CTL_PATH_MAX];
    gp_http_client *http;            /* the sender thread's */
    uint64_t next;                   /* under n->lock */
    char *body;                      /* the batch being delivered: a JSON array; NULL: none */
    size_t count;                    /* alerts in body */
    int attempt;                     /* failed tries of body */
    int64_t first_fail_ms, retry_ms; /* monotonic */
} receiver;

/* A condition being told (a lost node, a tenant blocked by its quota). */
typedef struct condition {
    char kind;              /* 'n' node, 't' tenant */
    char name[GP_NAME_MAX]; /* the node's or tenant's */
    int64_t since_ms;       /* wall clock: startsAt */
    int64_t sent_ms;        /* wall clock: last sent */
    json_t *doc;            /* as last sent; for the resolve */
    bool seen;              /* still true at this look */
    int count;              /* tenants: jobs waiting for the quota */
    char example[256];      /* tenants: one of their reasons */
    int64_t example_job;
} condition;

struct ctl_notifier {
    const gp_ctl_config *cfg;
    atomic_llong *sent, *failed;
    ctl_alerts_active *active; /* what GET /v1/alerts shows */
    int nrcv;                  /* 0: no receivers, no sender thread */
    receiver rcv[CTL_NOTIFY_URLS];
    /* the committer's (state lock) */
    char **pending; /* JSON text */
    size_t npending, cappending;
    condition *conds;
    int nconds, capconds;
    /* the queue (lock) */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    char *ring[CTL_NOTIFY_QUEUE]; /* JSON text */
    uint64_t head, tail;
    uint64_t dropped;
    bool stop;
    pthread_t thread;
};

/* ---- the documents (pure) ---- */

void ctl_notify_time(int64_t ms, char *buf, size_t cap)
{
    time_t s = (time_t)(ms / 1000);
    int frac = (int)(ms % 1000);
    if (frac < 0) {
        s--;
        frac += 1000;
    }
    struct tm tm;
    gmtime_r(&s, &tm);
    char date[24];
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03dZ", date, frac);
}

/* obj[key] = s when s is not empty; text that is not UTF-8 (a reason cut inside a character)
 * has its non-ASCII bytes replaced by '?'. */
static void set_text(json_t *obj, const char *key, const char *s)
{
    if (!s || !s[0]) {
        return;
    }
    json_t *v = json_string(s);
    if (!v) {
        char *copy = strdup(s);
        for (char *p = copy; p && *p; p++) {
            *p = (unsigned char)*p >= 0x80 ? '?' : *p;
        }
        v = copy ? json_string(copy) : NULL;
        free(copy);
    }
    json_object_set_new(obj, key, v);
}

static void set_int(json_t *obj, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64, v);
    set_text(obj, key, buf);
}

/* The link to the alert's object in the API, under the external URL. */
static void generator_url(const ctl_alert *a, const ctl_alert_ctx *c, json_t *doc)
{
    const char *base = c->external_url;
    if (!base || !base[0]) {
        return;
    }
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/') {
        n--;
    }
    char url[GP_CTL_PATH_MAX + 128];
    if (a->job) {
        snprintf(url, sizeof(url), "%.*s/v1/jobs/%" PRId64, (int)n, base, a->job->id);
    } else if (a->node) {
        snprintf(url, sizeof(url), "%.*s/v1/nodes/%s", (int)n, base, a->node->name);
    } else if (a->tenant && a->tenant[0]) {
        snprintf(url, sizeof(url), "%.*s/v1/tenants/%s", (int)n, base, a->tenant);
    } else {
        snprintf(url, sizeof(url), "%.*s/", (int)n, base);
    }
    set_text(doc, "generatorURL", url);
}

json_t *ctl_alert_doc(const ctl_alert *a, const ctl_alert_ctx *c)
{
    if (!a->name || !a->name[0]) {
        return NULL;
    }
    json_t *labels = json_object(), *ann = json_object(), *doc = json_object();
    if (!labels || !ann || !doc) {
        json_decref(labels);
        json_decref(ann);
        json_decref(doc);
        return NULL;
    }
    set_text(labels, "alertname", a->name);
    set_text(labels, "severity", a->severity ? a->severity : "warning");
    set_text(labels, "source", "gpupoold");
    if (a->node) {
        set_text(labels, "Hostname", a->node->name);
        int k = 0; /* which of the node's GPUs (pointers into another array do not compare) */
        while (a->gpu && k < a->node->ngpus && &a->node->gpus[k] != a->gpu) {
            k++;
        }
        if (a->gpu && k < a->node->ngpus) {
            set_int(labels, "gpu", (int64_t)k);
            set_text(labels, "UUID", a->gpu->uuid);
            set_text(labels, "model", a->gpu->model);
        }
    }
    if (a->job) {
        set_text(labels, "gpupool_job", a->job->name);
        set_int(labels, "gpupool_job_id", a->job->id);
        set_text(labels, "queue", a->job->spec.queue);
        set_text(labels, "tenant", c->job_tenant);
    } else {
        set_text(labels, "tenant", a->tenant);
    }
    set_text(ann, "summary", a->summary);
    set_text(ann, "description", a->description);
    int64_t starts = a->starts_ms ? a->starts_ms : c->now_ms;
    int64_t ends = a->resolved ? c->now_ms : a->ends_ms ? a->ends_ms : starts + c->resolve_after_ms;
    if (ends < starts) {
        ends = starts; /* Alertmanager refuses an end before the start */
    }
    char t[40];
    json_object_set_new(doc, "labels", labels);
    json_object_set_new(doc, "annotations", ann);
    ctl_notify_time(starts, t, sizeof(t));
    json_object_set_new(doc, "startsAt", json_string(t));
    ctl_notify_time(ends, t, sizeof(t));
    json_object_set_new(doc, "endsAt", json_string(t));
    generator_url(a, c, doc);
    return doc;
}

int64_t ctl_notify_backoff_ms(int attempt)
{
    int64_t ms = BACKOFF_FIRST_MS;
    for (int i = 1; i < attempt && ms < BACKOFF_MAX_MS; i++) {
        ms *= 2;
    }
    return ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS;
}

int64_t ctl_notify_next_try(int64_t first_ms, int attempt, int64_t now_ms, int64_t retry_max_ms)
{
    int64_t at = now_ms + ctl_notify_backoff_ms(attempt);
    return at - first_ms > retry_max_ms ? -1 : at;
}

/* ---- the queue ---- */

/* Appends doc (JSON text, taken) to the ring, dropping the oldest entry when it is full. Under
 * n->lock. */
static void ring_push(ctl_notifier *n, char *doc)
{
    if (n->tail - n->head == CTL_NOTIFY_QUEUE) {
        uint64_t old = n->head++;
        for (int i = 0; i < n->nrcv; i++) {
            if (n->rcv[i].next <= old) {
                n->rcv[i].next = old + 1;
                atomic_fetch_add(n->failed, 1);
            }
        }
        free(n->ring[old % CTL_NOTIFY_QUEUE]);
        n->ring[old % CTL_NOTIFY_QUEUE] = NULL;
        n->dropped++;
    }
    n->ring[n->tail++ % CTL_NOTIFY_QUEUE] = doc;
}

/* Frees the entries every receiver has taken. Under n->lock. */
static void ring_trim(ctl_notifier *n)
{
    uint64_t low = n->tail;
    for (int i = 0; i < n->nrcv; i++) {
        low = n->rcv[i].next < low ? n->rcv[i].next : low;
    }
    while (n->head < low) {
        free(n->ring[n->head % CTL_NOTIFY_QUEUE]);
        n->ring[n->head++ % CTL_NOTIFY_QUEUE] = NULL;
    }
}

/* Gives r the next batch from the ring, if it has none and something is waiting. Under
 * n->lock. */
static void take_batch(ctl_notifier *n, receiver *r)
{
    if (r->body || r->next >= n->tail) {
        return;
    }
    if (r->next < n->head) {
        r->next = n->head;
    }
    uint64_t end = r->next + CTL_NOTIFY_BATCH < n->tail ? r->next + CTL_NOTIFY_BATCH : n->tail;
    size_t len = 3;
    for (uint64_t s = r->next; s < end; s++) {
        len += strlen(n->ring[s % CTL_NOTIFY_QUEUE]) + 1;
    }
    char *body = malloc(len);
    if (!body) {
        return; /* out of memory: tried again at the next wake */
    }
    size_t used = 0;
    body[used++] = '[';
    for (uint64_t s = r->next; s < end; s++) {
        const char *doc = n->ring[s % CTL_NOTIFY_QUEUE];
        size_t k = strlen(doc);
        if (s > r->next) {
            body[used++] = ',';
        }
        memcpy(body + used, doc, k);
        used += k;
    }
    body[used++] = ']';
    body[used] = '\0';
    r->body = body;
    r->count = (size_t)(end - r->next);
    r->next = end;
    r->attempt = 0;
    r->retry_ms = 0;
}

/* ---- the sender ---- */

/* Ends r's batch: count is added to failed (ok false) or sent. */
static void batch_done(ctl_notifier *n, receiver *r, bool ok)
{
    atomic_fetch_add(ok ? n->sent : n->failed, (long long)r->count);
    free(r->body);
    r->body = NULL;
    r->count = 0;
    r->attempt = 0;
}

/* Posts r's batch once. final: at stop, no retry. Returns whether r took it. Outside
 * n->lock. */
static bool post(ctl_notifier *n, receiver *r, bool final)
{
    size_t count = r->count;
    gp_diag d;
    gp_diag_clear(&d);
    int status = 0;
    char *resp = NULL;
    int rc = gp_http_call(r->http, "POST", "/api/v2/alerts", r->body, strlen(r->body), NULL,
                          &status, &resp, NULL, &d);
    if (rc == 0 && status >= 200 && status < 300) {
        if (r->attempt > 0) {
            GP_LOG(GP_LOG_INFO, "notify", "alertmanager=%s delivered alerts=%zu after tries=%d",
                   r->url, count, r->attempt + 1);
        }
        batch_done(n, r, true);
        free(resp);
        return true;
    } else if (rc == 0 && status >= 400 && status < 500) {
        GP_LOG(GP_LOG_ERROR, "notify", "alertmanager=%s refused alerts=%zu status=%d: %.200s",
               r->url, count, status, resp ? resp : "");
        batch_done(n, r, false);
    } else {
        char why[300];
        if (rc == 0) {
            snprintf(why, sizeof(why), "status %d", status);
        } else {
            snprintf(why, sizeof(why), "%.280s", d.msg);
        }
        int64_t now = gp_mono_ms();
        if (r->attempt++ == 0) {
            r->first_fail_ms = now;
        }
        int64_t at = final ? -1
                           : ctl_notify_next_try(r->first_fail_ms, r->attempt, now,
                                                 n->cfg->alerts.retry_max_ms);
        if (at < 0) {
            GP_LOG(GP_LOG_ERROR, "notify", "alertmanager=%s gave up alerts=%zu tries=%d: %s",
                   r->url, count, r->attempt, why);
            batch_done(n, r, false);
        } else {
            GP_LOG(r->attempt == 1 ? GP_LOG_WARN : GP_LOG_DEBUG, "notify",
                   "alertmanager=%s failed alerts=%zu try=%d: %s; retrying in %lldms", r->url,
                   count, r->attempt, why, (long long)(at - now));
            r->retry_ms = at;
        }
    }
    free(resp);
    return false;
}

static void wait_until(ctl_notifier *n, int64_t due_mono)
{
    if (due_mono == INT64_MAX) {
        pthread_cond_wait(&n->wake, &n->lock);
        return;
    }
    int64_t wait = due_mono - gp_mono_ms();
    if (wait <= 0) {
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += wait / 1000;
    ts.tv_nsec += (wait % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&n->wake, &n->lock, &ts);
}

/* One pass over the receivers: each with a batch due is posted once. Returns when the next
 * retry is due (INT64_MAX: none) in *due, and whether anything was posted. Under n->lock,
 * released around the posts. */
static bool pass(ctl_notifier *n, bool final, int64_t *due)
{
    bool posted = false;
    *due = INT64_MAX;
    for (int i = 0; i < n->nrcv; i++) {
        receiver *r = &n->rcv[i];
        take_batch(n, r);
        if (!r->body) {
            continue;
        }
        if (!final && r->retry_ms > gp_mono_ms()) {
            *due = r->retry_ms < *due ? r->retry_ms : *due;
            continue;
        }
        pthread_mutex_unlock(&n->lock);
        bool ok = post(n, r, final);
        pthread_mutex_lock(&n->lock);
        posted = true;
        if (final && !ok && r->next < n->tail) {
            /* at stop a receiver that failed gets nothing more: the rest fails with it */
            uint64_t from = r->next > n->head ? r->next : n->head;
            atomic_fetch_add(n->failed, (long long)(n->tail - from));
            r->next = n->tail;
        }
    }
    ring_trim(n);
    return posted;
}

static void *sender_main(void *arg)
{
    ctl_notifier *n = arg;
    uint64_t dropped_told = 0;
    pthread_mutex_lock(&n->lock);
    while (!n->stop) {
        if (n->dropped != dropped_told) {
            uint64_t now_dropped = n->dropped;
            pthread_mutex_unlock(&n->lock);
            GP_LOG(GP_LOG_WARN, "notify", "queue full: dropped the oldest alerts=%llu total=%llu",
                   (unsigned long long)(now_dropped - dropped_told),
                   (unsigned long long)now_dropped);
            dropped_told = now_dropped;
            pthread_mutex_lock(&n->lock);
        }
        int64_t due;
        if (!pass(n, false, &due) && !n->stop && n->dropped == dropped_told) {
            wait_until(n, due);
        }
    }
    /* Stopping: one last try of everything taken or queued, without retries. */
    for (int i = 0; i < n->nrcv; i++) {
        gp_http_client_set_timeout(n->rcv[i].http, STOP_TIMEOUT_MS, STOP_TIMEOUT_MS);
    }
    int64_t due;
    while (pass(n, true, &due)) {
    }
    pthread_mutex_unlock(&n->lock);
    return NULL;
}

/* ---- start and stop ---- */

static void notifier_free(ctl_notifier *n)
{
    for (int i = 0; i < n->nrcv; i++) {
        gp_http_client_free(n->rcv[i].http);
        free(n->rcv[i].body);
    }
    for (uint64_t s = n->head; s < n->tail; s++) {
        free(n->ring[s % CTL_NOTIFY_QUEUE]);
    }
    for (size_t i = 0; i < n->npending; i++) {
        free(n->pending[i]);
    }
    for (int i = 0; i < n->nconds; i++) {
        json_decref(n->conds[i].doc);
    }
    free(n->pending);
    free(n->conds);
    ctl_alerts_active_free(n->active);
    pthread_cond_destroy(&n->wake);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

int ctl_notify_start(gpupoold *g, gp_diag *d)
{
    g->notify = NULL;
    const char *list = g->cfg->alerts.alertmanager;
    ctl_notifier *n = calloc(1, sizeof(*n));
    if (!n || ctl_alerts_active_new(&n->active) < 0) {
        free(n);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    n->cfg = g->cfg;
    n->sent = &g->metrics.alerts_sent;
    n->failed = &g->metrics.alerts_failed;
    pthread_mutex_init(&n->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->wake, &ca);
    pthread_condattr_destroy(&ca);
    int rc = 0;
    for (const char *p = list; rc == 0 && *p && n->nrcv < CTL_NOTIFY_URLS;) {
        size_t len = strcspn(p, ",");
        receiver *r = &n->rcv[n->nrcv++];
        snprintf(r->url, sizeof(r->url), "%.*s", (int)len, p);
        rc = gp_http_client_new(r->url, NULL, &r->http, d);
        if (rc == 0) {
            gp_http_client_set_timeout(r->http, POST_TIMEOUT_MS, CONNECT_MS);
        }
        p += len + (p[len] == ',');
    }
    if (rc == 0 && n->nrcv > 0 && pthread_create(&n->thread, NULL, sender_main, n) != 0) {
        rc = gp_diag_set(d, GP_EIO, "cannot start the alert sender thread");
    }
    if (rc < 0) {
        notifier_free(n);
        return rc;
    }
    g->notify = n;
    if (n->nrcv > 0) {
        GP_LOG(GP_LOG_INFO, "notify", "alerts to receivers=%d: %s", n->nrcv, list);
    }
    return 0;
}

void ctl_notify_stop(gpupoold *g)
{
    ctl_notifier *n = g->notify;
    if (!n) {
        return;
    }
    if (n->nrcv > 0) {
        pthread_mutex_lock(&n->lock);
        n->stop = true;
        pthread_cond_signal(&n->wake);
        pthread_mutex_unlock(&n->lock);
        pthread_join(n->thread, NULL);
    }
    notifier_free(n);
    g->notify = NULL;
}

/* ---- the committer's side ---- */

/* Adds doc (a reference taken) to the pending list, as JSON text. */
static void pend(ctl_notifier *n, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text && n->npending == n->cappending) {
        size_t cap = n->cappending ? n->cappending * 2 : 16;
        char **p = realloc(n->pending, cap * sizeof(*p));
        if (!p) {
            free(text);
            text = NULL;
        } else {
            n->pending = p;
            n->cappending = cap;
        }
    }
    if (!text) {
        atomic_fetch_add(n->failed, n->nrcv); /* out of memory */
        return;
    }
    n->pending[n->npending++] = text;
}

static json_t *make_doc(gpupoold *g, const ctl_alert *a, int64_t now)
{
    const ctl_tenant *t = a->job ? ctl_tenant_by_id(&g->st, a->job->tenant_id) : NULL;
    ctl_alert_ctx c = {.now_ms = now,
                       .resolve_after_ms = g->cfg->alerts.resolve_after_ms,
                       .external_url = g->cfg->alerts.external_url,
                       .job_tenant = t ? t->lim.name : NULL};
    return ctl_alert_doc(a, &c);
}

void ctl_notify(gpupoold *g, const ctl_alert *a)
{
    if (g->notify) {
        pend(g->notify, make_doc(g, a, ctl_now_ms()));
    }
}

size_t ctl_notify_mark(gpupoold *g)
{
    return g->notify ? g->notify->npending : 0;
}

void ctl_notify_rollback(gpupoold *g, size_t mark)
{
    ctl_notifier *n = g->notify;
    while (n && n->npending > mark) {
        free(n->pending[--n->npending]);
    }
}

void ctl_notify_publish(gpupoold *g)
{
    ctl_notifier *n = g->notify;
    if (!n || n->npending == 0) {
        return;
    }
    int64_t now = ctl_now_ms();
    for (size_t i = 0; i < n->npending; i++) {
        if (ctl_alerts_active_put(n->active, n->pending[i], now) < 0) {
            GP_LOG(GP_LOG_WARN, "notify", "an alert is missing from /v1/alerts: out of memory");
        }
    }
    if (n->nrcv == 0) {
        for (size_t i = 0; i < n->npending; i++) {
            free(n->pending[i]);
        }
        n->npending = 0;
        return;
    }
    pthread_mutex_lock(&n->lock);
    for (size_t i = 0; i < n->npending; i++) {
        ring_push(n, n->pending[i]);
    }
    pthread_cond_signal(&n->wake);
    pthread_mutex_unlock(&n->lock);
    n->npending = 0;
}

json_t *ctl_notify_active(gpupoold *g, const char *tenant, int64_t now_ms)
{
    if (!g->notify) {
        return json_pack("{s:[]}", "items");
    }
    return ctl_alerts_active_list(g->notify->active, tenant, now_ms);
}

/* ---- events ---- */

void ctl_notify_gpu_drained(gpupoold *g, const ctl_node *n, int gpu, bool resolved,
                            int64_t since_ms)
{
    if (!g->notify) {
        return;
    }
    const ctl_gpu_info *gi = &n->gpus[gpu];
    char summary[256], desc[1024];
    if (resolved) {
        snprintf(summary, sizeof(summary), "GPU %d of node %s is back in service", gpu, n->name);
        snprintf(desc, sizeof(desc), "GPU %d (%s, %s) of node %s takes work again.", gpu, gi->uuid,
                 gi->model, n->name);
    } else {
        snprintf(summary, sizeof(summary), "GPU %d of node %s drained: %.150s", gpu, n->name,
                 gi->drain_reason);
        snprintf(desc, sizeof(desc),
                 "GPU %d (%s, %s) of node %s was taken out of service: %s. Nothing new is placed "
                 "on it. %s",
                 gpu, gi->uuid, gi->model, n->name, gi->drain_reason,
                 gi->retired ? "It is retired: only `gpupool nodes gpu-undrain` returns it."
                 : gi->drain_auto
                     ? "It returns once a health check of the node passes (faults.recheck_after "
                       "after the drain; `gpupool nodes check` asks for one now)."
                     : "It returns by `gpupool nodes gpu-undrain`.");
    }
    ctl_alert a = {.name = "GpuDrained",
                   .severity = "warning",
                   .node = n,
                   .gpu = gi,
                   .summary = summary,
                   .description = desc,
                   .starts_ms = since_ms,
                   .resolved = resolved};
    ctl_notify(g, &a);
}

void ctl_notify_job_restarted(gpupoold *g, const ctl_job *j, const char *cause)
{
    if (!g->notify) {
        return;
    }
    char summary[256], desc[1024];
    snprintf(summary, sizeof(summary), "Job %s (%lld) restarted after a fault", j->name,
             (long long)j->id);
    snprintf(desc, sizeof(desc),
             "Job %s (%lld) was stopped and put back in its queue to run elsewhere: %s. This is "
             "its restart %d; `gpupool describe job %lld` shows its events.",
             j->name, (long long)j->id, cause, j->restarts, (long long)j->id);
    ctl_alert a = {.name = "JobRestartedAfterFault",
                   .severity = "warning",
                   .job = j,
                   .summary = summary,
                   .description = desc};
    ctl_notify(g, &a);
}

void ctl_notify_job_idle(gpupoold *g, const ctl_job *j, const char *node, const char *why)
{
    if (!g->notify) {
        return;
    }
    char summary[256], desc[1024];
    snprintf(summary, sizeof(summary), "Job %s (%lld) stopped for being idle", j->name,
             (long long)j->id);
    snprintf(desc, sizeof(desc),
             "Job %s (%lld)%s%s was stopped and its GPUs freed: %s (its idle_timeout). Submit it "
             "again to continue; `gpupool describe job %lld` shows its events.",
             j->name, (long long)j->id, node[0] ? " on node " : "", node, why, (long long)j->id);
    ctl_alert a = {.name = "JobIdleStopped",
                   .severity = "info",
                   .job = j,
                   .summary = summary,
                   .description = desc};
    ctl_notify(g, &a);
}

/* ---- conditions ---- */

static condition *cond_find(ctl_notifier *n, char kind, const char *name)
{
    for (int i = 0; i < n->nconds; i++) {
        if (n->conds[i].kind == kind && strcmp(n->conds[i].name, name) == 0) {
            return &n->conds[i];
        }
    }
    return NULL;
}

/* The condition kind/name, added (not seen yet, since now) when new; NULL when out of
 * memory. */
static condition *cond_get(ctl_notifier *n, char kind, const char *name, int64_t now)
{
    condition *c = cond_find(n, kind, name);
    if (c) {
        return c;
    }
    if (n->nconds == n->capconds) {
        int cap = n->capconds ? n->capconds * 2 : 8;
        condition *p = realloc(n->conds, (size_t)cap * sizeof(*p));
        if (!p) {
            return NULL;
        }
        n->conds = p;
        n->capconds = cap;
    }
    c = &n->conds[n->nconds++];
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->since_ms = now;
    return c;
}

/* Sends c's alert again when it is new or half of resolve_after has passed since it was sent;
 * doc is its current document (taken). */
static void cond_fire(ctl_notifier *n, condition *c, json_t *doc, int64_t now)
{
    if (c->sent_ms && now - c->sent_ms < n->cfg->alerts.resolve_after_ms / 2) {
        json_decref(doc);
        return;
    }
    if (!doc) {
        atomic_fetch_add(n->failed, n->nrcv);
        return;
    }
    json_decref(c->doc);
    c->doc = json_incref(doc);
    c->sent_ms = now;
    pend(n, doc);
}

/* Resolves and forgets the conditions of kind not seen at this look. */
static void cond_sweep(ctl_notifier *n, char kind, int64_t now)
{
    for (int i = 0; i < n->nconds;) {
        condition *c = &n->conds[i];
        if (c->kind != kind || c->seen) {
            i++;
            continue;
        }
        json_t *doc = c->doc ? json_deep_copy(c->doc) : NULL;
        if (doc) {
            char t[40];
            ctl_notify_time(now, t, sizeof(t));
            json_object_set_new(doc, "endsAt", json_string(t));
            pend(n, doc);
        }
        json_decref(c->doc);
        n->conds[i] = n->conds[--n->nconds];
    }
}

void ctl_notify_nodes(gpupoold *g, int64_t now)
{
    ctl_notifier *n = g->notify;
    if (!n) {
        return;
    }
    for (int i = 0; i < n->nconds; i++) {
        n->conds[i].seen &= n->conds[i].kind != 'n';
    }
    for (int i = 0; i < g->st.nnodes; i++) {
        const ctl_node *nd = &g->st.nodes[i];
        int64_t silent = now - nd->heartbeat_ms;
        if (nd->ready || silent <= g->cfg->nodes.lost_timeout_ms) {
            continue;
        }
        condition *c = cond_get(n, 'n', nd->name, now);
        if (!c) {
            continue;
        }
        c->seen = true;
        char summary[256], desc[1024];
        snprintf(summary, sizeof(summary), "Node %s is lost", nd->name);
        snprintf(desc, sizeof(desc),
                 "Node %s has not been heard from since %llds ago (nodes.lost_timeout %llds): "
                 "the jobs it ran are restarted elsewhere or fail by their restart policy, and "
                 "it takes no new work until its agent reports again.",
                 nd->name, (long long)(silent / 1000),
                 (long long)(g->cfg->nodes.lost_timeout_ms / 1000));
        ctl_alert a = {.name = "NodeLost",
                       .severity = "critical",
                       .node = nd,
                       .summary = summary,
                       .description = desc,
                       .starts_ms = c->since_ms,
                       .ends_ms = now + g->cfg->alerts.resolve_after_ms};
        cond_fire(n, c, make_doc(g, &a, now), now);
    }
    cond_sweep(n, 'n', now);
}

void ctl_notify_quota(gpupoold *g, const gp_sched_wait *waiting, int nwaiting, int64_t now)
{
    ctl_notifier *n = g->notify;
    if (!n) {
        return;
    }
    for (int i = 0; i < n->nconds; i++) {
        if (n->conds[i].kind == 't') {
            n->conds[i].seen = false;
            n->conds[i].count = 0;
        }
    }
    for (int i = 0; i < nwaiting; i++) {
        /* waiting for its tenant's quota (not a job the quota can never hold: "no-fit") */
        if (strcmp(ctl_metrics_reason_class(waiting[i].reason), "quota") != 0) {
            continue;
        }
        const ctl_job *j = ctl_job_by_id(&g->st, waiting[i].job_id);
        const ctl_tenant *t = j ? ctl_tenant_by_id(&g->st, j->tenant_id) : NULL;
        condition *c = t ? cond_get(n, 't', t->lim.name, now) : NULL;
        if (!c) {
            continue;
        }
        if (!c->seen) {
            snprintf(c->example, sizeof(c->example), "%s", waiting[i].reason);
            c->example_job = j->id;
        }
        c->seen = true;
        c->count++;
    }
    for (int i = 0; i < n->nconds; i++) {
        condition *c = &n->conds[i];
        if (c->kind != 't' || !c->seen) {
            continue;
        }
        char summary[256], desc[1024];
        snprintf(summary, sizeof(summary), "Tenant %s has jobs waiting for its quota", c->name);
        snprintf(desc, sizeof(desc),
                 "%d pending job%s of tenant %s wait%s because the tenant uses its quota; job "
                 "%lld: %s. They start as the tenant's running jobs end, or once its quota is "
                 "raised (`gpupool tenant set %s --quota-gpus N`).",
                 c->count, c->count == 1 ? "" : "s", c->name, c->count == 1 ? "s" : "",
                 (long long)c->example_job, c->example, c->name);
        ctl_alert a = {.name = "TenantQuotaExhausted",
                       .severity = "warning",
                       .tenant = c->name,
                       .summary = summary,
                       .description = desc,
                       .starts_ms = c->since_ms,
                       .ends_ms = now + g->cfg->alerts.resolve_after_ms};
        cond_fire(n, c, make_doc(g, &a, now), now);
    }
    cond_sweep(n, 't', now);
}

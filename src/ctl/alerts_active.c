/*
 * The active alerts (see alerts_active.h). The entries are an array in the order they were last
 * raised, oldest first: a replaced alert moves to the end, eviction takes the first, the list
 * reads it backwards. Each entry keeps its labels as canonical JSON text (keys sorted: the
 * identity) and the item the API shows, as JSON text.
 */
#include "ctl/alerts_active.h"

#include "gpupool/error.h"
#include "gpupool/meter.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *key;    /* the labels, compact with sorted keys */
    char *item;   /* the API's item */
    char *tenant; /* the tenant label; NULL: none */
    int64_t ends_ms;
} entry;

struct ctl_alerts_active {
    pthread_mutex_t lock;
    entry v[CTL_ALERTS_ACTIVE_MAX];
    int n;
};

int ctl_alerts_active_new(ctl_alerts_active **out)
{
    *out = calloc(1, sizeof(**out));
    if (!*out) {
        return GP_ENOMEM;
    }
    pthread_mutex_init(&(*out)->lock, NULL);
    return 0;
}

static void entry_fini(entry *e)
{
    free(e->key);
    free(e->item);
    free(e->tenant);
}

void ctl_alerts_active_free(ctl_alerts_active *a)
{
    if (!a) {
        return;
    }
    for (int i = 0; i < a->n; i++) {
        entry_fini(&a->v[i]);
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
}

/* Removes entry i, keeping the order. Under the lock. */
static void remove_at(ctl_alerts_active *a, int i)
{
    entry_fini(&a->v[i]);
    memmove(&a->v[i], &a->v[i + 1], sizeof(entry) * (size_t)(a->n - i - 1));
    a->n--;
}

static const char *text_of(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* The entry of an Alertmanager document: 0 with e filled (its strings malloc'd), GP_EINVAL or
 * GP_ENOMEM. */
static int entry_of(const char *doc, entry *e)
{
    memset(e, 0, sizeof(*e));
    json_t *am = json_loads(doc, 0, NULL);
    json_t *labels = json_object_get(am, "labels");
    json_t *ann = json_object_get(am, "annotations");
    int64_t starts = 0, ends = 0;
    const char *name = json_string_value(json_object_get(labels, "alertname"));
    if (!name || gp_meter_parse_time(text_of(am, "startsAt"), &starts) < 0 ||
        gp_meter_parse_time(text_of(am, "endsAt"), &ends) < 0) {
        json_decref(am);
        return GP_EINVAL;
    }
    const char *severity = json_string_value(json_object_get(labels, "severity"));
    const char *tenant = json_string_value(json_object_get(labels, "tenant"));
    json_t *item = json_pack("{s:s, s:s?, s:O, s:s, s:s, s:I, s:I}", "name", name, "severity",
                             severity, "labels", labels, "summary", text_of(ann, "summary"),
                             "description", text_of(ann, "description"), "starts_ms",
                             (json_int_t)starts, "ends_ms", (json_int_t)ends);
    e->key = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
    e->item = item ? json_dumps(item, JSON_COMPACT) : NULL;
    e->tenant = tenant ? strdup(tenant) : NULL;
    e->ends_ms = ends;
    json_decref(item);
    json_decref(am);
    if (!e->key || !e->item || (tenant && !e->tenant)) {
        entry_fini(e);
        return GP_ENOMEM;
    }
    return 0;
}

int ctl_alerts_active_put(ctl_alerts_active *a, const char *doc, int64_t now_ms)
{
    entry e;
    int rc = entry_of(doc, &e);
    if (rc < 0) {
        return rc;
    }
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < a->n;) {
        if (a->v[i].ends_ms <= now_ms || strcmp(a->v[i].key, e.key) == 0) {
            remove_at(a, i); /* lapsed, or replaced by e */
        } else {
            i++;
        }
    }
    if (e.ends_ms > now_ms) {
        if (a->n == CTL_ALERTS_ACTIVE_MAX) {
            remove_at(a, 0);
        }
        a->v[a->n++] = e;
    } else {
        entry_fini(&e); /* resolved */
    }
    pthread_mutex_unlock(&a->lock);
    return 0;
}

json_t *ctl_alerts_active_list(ctl_alerts_active *a, const char *tenant, int64_t now_ms)
{
    json_t *items = json_array();
    bool ok = items != NULL;
    pthread_mutex_lock(&a->lock);
    for (int i = a->n - 1; ok && i >= 0; i--) {
        const entry *e = &a->v[i];
        if (e->ends_ms <= now_ms || (tenant && e->tenant && strcmp(e->tenant, tenant) != 0)) {
            continue;
        }
        json_t *item = json_loads(e->item, 0, NULL);
        ok = item && json_array_append_new(items, item) == 0;
    }
    pthread_mutex_unlock(&a->lock);
    json_t *doc = ok ? json_object() : NULL;
    if (!doc) {
        json_decref(items);
        return NULL;
    }
    if (json_object_set_new(doc, "items", items) < 0) { /* items is freed with the failure */
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/*
 * The node's image cache (contract in images.h).
 */
#include "agent/images.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cmd.h"
#include "agent/replica_dir.h"
#include "base/log.h"

/* Image ids marked in use this round, at most. */
#define IMAGES_MAX_IN_USE 256

struct gp_images {
    char state_dir[1024];
    int64_t cap;
    json_t *record; /* {"sha256:ID": last used ms} */
    gp_image *list; /* podman's, as last listed */
    int n;
    int64_t listed_ms; /* when; 0: never */
    char in_use[IMAGES_MAX_IN_USE][80], in_use_before[IMAGES_MAX_IN_USE][80];
    int nin_use, nin_use_before;
    bool changed; /* the record changed since it was saved */
};

int gp_images_evict_plan(const gp_image *imgs, int n, int64_t cap, int *out)
{
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        total += imgs[i].size_bytes;
    }
    int k = 0;
    while (cap > 0 && total > cap) {
        int oldest = -1;
        for (int i = 0; i < n; i++) {
            bool taken = false;
            for (int j = 0; j < k && !taken; j++) {
                taken = out[j] == i;
            }
            const gp_image *g = &imgs[i];
            if (taken || g->last_used_ms <= 0 || g->containers > 0 || g->in_use) {
                continue;
            }
            if (oldest < 0 || g->last_used_ms < imgs[oldest].last_used_ms) {
                oldest = i;
            }
        }
        if (oldest < 0) {
            break; /* nothing more may go */
        }
        out[k++] = oldest;
        total -= imgs[oldest].size_bytes;
    }
    return k;
}

int gp_images_parse(const char *json_text, gp_image **out, int *n)
{
    *out = NULL;
    *n = 0;
    json_t *a = json_loads(json_text, 0, NULL);
    if (!json_is_array(a)) {
        json_decref(a);
        return GP_EPARSE;
    }
    gp_image *list = calloc(json_array_size(a) + 1, sizeof(*list));
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e)
    {
        const char *id = NULL;
        json_int_t size = 0;
        int containers = 0;
        if (!list || json_unpack(e, "{s:s, s?I, s?i}", "Id", &id, "Size", &size, "Containers",
                                 &containers) != 0) {
            continue;
        }
        gp_image *g = &list[(*n)++];
        snprintf(g->id, sizeof(g->id), "%s%s", strncmp(id, "sha256:", 7) ? "sha256:" : "", id);
        g->size_bytes = size > 0 ? size : 0;
        g->containers = containers;
        json_t *names = json_object_get(e, "Names");
        const char *ref = json_string_value(json_array_get(names, 0));
        snprintf(g->ref, sizeof(g->ref), "%s", ref ? ref : "");
    }
    json_decref(a);
    *out = list;
    return list ? 0 : GP_ENOMEM;
}

gp_images *gp_images_new(const char *state_dir, int64_t cap_bytes)
{
    gp_images *im = calloc(1, sizeof(*im));
    if (!im) {
        return NULL;
    }
    snprintf(im->state_dir, sizeof(im->state_dir), "%s", state_dir);
    im->cap = cap_bytes;
    gp_diag d;
    if (gp_rdir_read_json(state_dir, "images.json", 1 << 20, &im->record, &d) < 0 ||
        !json_is_object(im->record)) {
        json_decref(im->record);
        im->record = json_object();
    }
    if (!im->record) {
        free(im);
        return NULL;
    }
    return im;
}

void gp_images_free(gp_images *im)
{
    if (im) {
        json_decref(im->record);
        free(im->list);
        free(im);
    }
}

void gp_images_used(gp_images *im, const char *id, int64_t when_ms, bool running)
{
    if (!id || strncmp(id, "sha256:", 7) != 0) {
        return;
    }
    json_t *v = json_object_get(im->record, id);
    if (!v || json_integer_value(v) < when_ms) {
        json_object_set_new(im->record, id, json_integer(when_ms));
        im->changed = true;
    }
    for (int i = 0; running && i < im->nin_use; i++) {
        if (strcmp(im->in_use[i], id) == 0) {
            return;
        }
    }
    if (running && im->nin_use < IMAGES_MAX_IN_USE) {
        snprintf(im->in_use[im->nin_use++], sizeof(im->in_use[0]), "%s", id);
    }
}

/* podman images; 0 with the list replaced, else logged. */
static int list_images(gp_images *im, const gp_runtime *rt)
{
    char *argv[] = {(char *)rt->podman, "images", "--format", "json", NULL};
    gp_cmd_result r;
    gp_diag d;
    int rc = gp_cmd_run(argv, NULL, 60000, 16 << 20, &r, &d);
    gp_image *list = NULL;
    int n = 0;
    if (rc == 0 && r.status == 0 && r.out && gp_images_parse(r.out, &list, &n) == 0) {
        free(im->list);
        im->list = list;
        im->n = n;
    } else {
        char line[300];
        gp_cmd_last_line(r.err, line, sizeof(line));
        GP_LOG(GP_LOG_WARN, "agent", "podman images: %s", rc < 0 ? d.msg : line);
        rc = -1;
    }
    gp_cmd_result_fini(&r);
    return rc;
}

static void evict(gp_images *im, const gp_runtime *rt)
{
    int *plan = calloc((size_t)im->n + 1, sizeof(int));
    int k = plan ? gp_images_evict_plan(im->list, im->n, im->cap, plan) : 0;
    for (int i = 0; i < k; i++) {
        gp_image *g = &im->list[plan[i]];
        char *argv[] = {(char *)rt->podman, "rmi", g->id, NULL};
        gp_cmd_result r;
        gp_diag d;
        if (gp_cmd_run(argv, NULL, 60000, 0, &r, &d) == 0 && r.status == 0) {
            GP_LOG(GP_LOG_INFO, "agent", "image cache: evicted %s (%s, %lld bytes)", g->ref, g->id,
                   (long long)g->size_bytes);
            json_object_del(im->record, g->id);
            im->changed = true;
            g->size_bytes = -1; /* gone: left out of the list below */
        } else {
            char line[300];
            gp_cmd_last_line(r.err, line, sizeof(line));
            GP_LOG(GP_LOG_WARN, "agent", "image cache: podman rmi %s: %s", g->id, line);
        }
        gp_cmd_result_fini(&r);
    }
    int j = 0;
    for (int i = 0; i < im->n; i++) {
        if (im->list[i].size_bytes >= 0) {
            im->list[j++] = im->list[i];
        }
    }
    im->n = j;
    free(plan);
}

/* Whether the images in use now are those of the last refresh. */
static bool same_in_use(const gp_images *im)
{
    if (im->nin_use != im->nin_use_before) {
        return false;
    }
    for (int i = 0; i < im->nin_use; i++) {
        bool found = false;
        for (int k = 0; k < im->nin_use_before && !found; k++) {
            found = strcmp(im->in_use[i], im->in_use_before[k]) == 0;
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

void gp_images_refresh(gp_images *im, const gp_runtime *rt, int64_t now_ms, bool force, bool hold)
{
    bool due = im->listed_ms == 0 || now_ms - im->listed_ms >= GP_IMAGES_REFRESH_MS;
    force = force || !same_in_use(im);
    if (rt && rt->ok && (due || force) && list_images(im, rt) == 0) {
        im->listed_ms = now_ms;
        for (int i = 0; i < im->n; i++) {
            gp_image *g = &im->list[i];
            json_t *v = json_object_get(im->record, g->id);
            g->last_used_ms = v ? json_integer_value(v) : 0;
            g->in_use = false;
            for (int k = 0; k < im->nin_use && !g->in_use; k++) {
                g->in_use = strcmp(im->in_use[k], g->id) == 0;
            }
        }
        if (!hold) {
            evict(im, rt);
        }
    }
    memcpy(im->in_use_before, im->in_use, sizeof(im->in_use));
    im->nin_use_before = im->nin_use;
    im->nin_use = 0;
    if (im->changed) {
        char *text = json_dumps(im->record, JSON_COMPACT | JSON_SORT_KEYS);
        gp_diag d;
        if (text &&
            gp_rdir_write_atomic(im->state_dir, "images.json", text, strlen(text), &d) < 0) {
            GP_LOG(GP_LOG_WARN, "agent", "image cache: %s", d.msg);
        }
        im->changed = text == NULL;
        free(text);
    }
}

json_t *gp_images_doc(const gp_images *im)
{
    json_t *a = json_array();
    for (int i = 0; a && i < im->n; i++) {
        const gp_image *g = &im->list[i];
        json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:I}", "ref", g->ref, "id", g->id,
                                           "size_bytes", (json_int_t)g->size_bytes, "last_used_ms",
                                           (json_int_t)g->last_used_ms));
    }
    return a;
}

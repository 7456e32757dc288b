/*
 * Polling watch of a list (see watch.h). The last rendering of each object is kept in a JSON
 * object keyed by the object's id (or name), so a poll is a list fetch and one comparison per
 * object.
 */
#include "cli/watch.h"

#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The key of item: its id, else its name. */
static void item_key(const json_t *item, char *buf, size_t cap)
{
    const json_t *id = json_object_get(item, "id");
    if (id) {
        gp_out_number(id, buf, cap);
    } else {
        snprintf(buf, cap, "%s", gp_out_str(item, "name"));
    }
}

/* What v prints for item alone, without a table header, into a new string (NULL: failure). */
static char *render(const gp_view *v, const gp_cli_kind *k, const json_t *item)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        return NULL;
    }
    int rc = gp_view_print(v, k, NULL, item, 0, f);
    if (fclose(f) != 0 || rc < 0) {
        free(text);
        return NULL;
    }
    return text;
}

static int fetch(gp_cli_conn *c, const gp_cli_kind *k, const char *query, json_t **items)
{
    int more = 0;
    *items = json_array();
    int rc = *items ? gp_cli_get_pages(c, k->path, query, 1, *items, &more) : GP_EXIT_FAILURE;
    if (rc != 0) {
        json_decref(*items);
        *items = NULL;
    }
    return rc;
}

/* Prints item (one object) when what it shows differs from seen[key]; records it. */
static int show_if_changed(const gp_view *v, const gp_view *cmp, const gp_cli_kind *k,
                           const json_t *item, json_t *seen, json_t *now_keys)
{
    char key[256];
    item_key(item, key, sizeof(key));
    char *text = render(cmp, k, item);
    if (!text) {
        return GP_EXIT_FAILURE;
    }
    const char *old = json_string_value(json_object_get(seen, key));
    int rc = 0;
    if (!old || strcmp(old, text) != 0) {
        rc = gp_view_print(v, k, NULL, item, 0, stdout) < 0 ? GP_EXIT_FAILURE : 0;
        fflush(stdout);
    }
    json_object_set_new(seen, key, json_string(text));
    json_object_set_new(now_keys, key, json_true());
    free(text);
    return rc;
}

/* Objects of seen that are not in now_keys left the list: show each as it is now, forget it. */
static int show_gone(gp_cli_conn *c, const gp_view *v, const gp_cli_kind *k, json_t *seen,
                     const json_t *now_keys)
{
    const char *key;
    json_t *val, *tmp;
    int rc = 0;
    json_object_foreach_safe(seen, tmp, key, val)
    {
        if (json_object_get(now_keys, key)) {
            continue;
        }
        json_t *doc = NULL;
        if (gp_cli_kind_get(c, k, key, &doc) == 0) {
            rc = gp_view_print(v, k, NULL, doc, 0, stdout) < 0 ? GP_EXIT_FAILURE : rc;
            fflush(stdout);
        }
        json_decref(doc);
        json_object_del(seen, key);
    }
    return rc;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int gp_cli_watch(gp_cli_conn *c, const gp_cli_kind *k, const char *query, const gp_view *v,
                 int64_t interval_ms)
{
    gp_view cmp = *v;
    cmp.now_ms = gp_out_now_ms();
    json_t *seen = json_object(), *items = NULL;
    int rc = seen ? fetch(c, k, query, &items) : GP_EXIT_FAILURE;
    if (rc == 0) {
        rc = gp_view_print(v, k, items, NULL, 1, stdout) < 0 ? GP_EXIT_FAILURE : 0;
        fflush(stdout);
    }
    for (int first = 1; rc == 0; first = 0) {
        json_t *now_keys = json_object();
        size_t i;
        const json_t *item;
        json_array_foreach(items, i, item)
        {
            char key[256];
            char *text = first ? render(&cmp, k, item) : NULL;
            item_key(item, key, sizeof(key));
            if (first) {
                json_object_set_new(seen, key, json_string(text ? text : ""));
                json_object_set_new(now_keys, key, json_true());
                free(text);
            } else if ((rc = show_if_changed(v, &cmp, k, item, seen, now_keys)) != 0) {
                break;
            }
        }
        if (rc == 0 && !first) {
            rc = show_gone(c, v, k, seen, now_keys);
        }
        json_decref(now_keys);
        json_decref(items);
        items = NULL;
        if (rc == 0) {
            sleep_ms(interval_ms);
            rc = fetch(c, k, query, &items);
        }
    }
    json_decref(items);
    json_decref(seen);
    return rc;
}

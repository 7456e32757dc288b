/*
 * -o of gpupool get (see view.h): which form, and printing a list or one object in it.
 */
#include "cli/view.h"

#include <stdlib.h>
#include <string.h>

int gp_view_parse(const char *arg, gp_view *v, gp_diag *d)
{
    *v = (gp_view){0};
    gp_diag sub;
    gp_diag_clear(&sub);
    if (gp_out_format_parse(arg, &v->format) == 0) {
        v->kind = GP_VIEW_FORMAT;
        return 0;
    }
    if (strcmp(arg, "name") == 0) {
        v->kind = GP_VIEW_NAME;
        return 0;
    }
    if (strncmp(arg, "jsonpath=", 9) == 0) {
        v->kind = GP_VIEW_JSONPATH;
        if (gp_jsonpath_compile(arg + 9, &v->tmpl, &sub) < 0) {
            gp_diag_set(d, GP_EINVAL, "-o jsonpath: %s", sub.msg);
            return -1;
        }
        return 0;
    }
    if (strncmp(arg, "custom-columns=", 15) == 0) {
        v->kind = GP_VIEW_COLUMNS;
        if (gp_columns_parse(arg + 15, &v->cols, &sub) < 0) {
            gp_diag_set(d, GP_EINVAL, "-o custom-columns: %s", sub.msg);
            return -1;
        }
        return 0;
    }
    gp_diag_set(d, GP_EINVAL,
                "-o: must be table, wide, json, yaml, name, jsonpath=TEMPLATE or "
                "custom-columns=SPEC");
    return -1;
}

void gp_view_fini(gp_view *v)
{
    gp_jsonpath_free(v->tmpl);
    gp_columns_free(v->cols);
    *v = (gp_view){0};
}

void gp_view_object_name(const gp_cli_kind *k, const json_t *item, char *buf, size_t cap)
{
    const char *name = gp_out_str(item, "name");
    char id[32];
    if (!name[0]) {
        gp_out_number(json_object_get(item, "id"), id, sizeof(id));
        name = id;
    }
    snprintf(buf, cap, "%s/%s", k->singular, name);
}

static int print_columns(const gp_columns *cols, const json_t *items, int header, FILE *f)
{
    int n = gp_columns_count(cols), rc = 0;
    const char *headers[GP_COLUMNS_MAX];
    char *cells[GP_COLUMNS_MAX];
    for (int c = 0; c < n; c++) {
        headers[c] = gp_columns_header(cols, c);
    }
    gp_out_table *t = gp_out_table_new(headers, n);
    size_t i;
    const json_t *item;
    json_array_foreach(items, i, item)
    {
        for (int c = 0; c < n; c++) {
            cells[c] = gp_columns_cell(cols, c, item);
            rc |= cells[c] ? 0 : -1;
        }
        rc |= t && rc == 0 ? gp_out_table_add(t, (const char *const *)cells) : -1;
        for (int c = 0; c < n; c++) {
            free(cells[c]);
        }
    }
    if (rc == 0 && t) {
        (header ? gp_out_table_print : gp_out_table_print_body)(t, f, 0);
    }
    gp_out_table_free(t);
    return t ? rc : -1;
}

static int print_jsonpath(const gp_jsonpath *tmpl, json_t *items, const json_t *one, FILE *f)
{
    json_t *doc = one ? json_incref((json_t *)one) : json_pack("{s:O}", "items", items);
    char *out = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = doc ? gp_jsonpath_run(tmpl, doc, &out, &d) : GP_ENOMEM;
    json_decref(doc);
    if (rc < 0) {
        fprintf(stderr, "gpupool: -o jsonpath: %s\n", doc ? d.msg : "out of memory");
        return -1;
    }
    fputs(out, f);
    free(out);
    return 0;
}

int gp_view_print(const gp_view *v, const gp_cli_kind *k, json_t *items, const json_t *one,
                  int header, FILE *f)
{
    json_t *list = one ? json_pack("[O]", one) : json_incref(items);
    int rc = list ? 0 : -1;
    if (rc == 0 && v->kind == GP_VIEW_JSONPATH) {
        rc = print_jsonpath(v->tmpl, items, one, f);
    } else if (rc == 0 && v->kind == GP_VIEW_COLUMNS) {
        rc = print_columns(v->cols, list, header, f);
    } else if (rc == 0 && v->kind == GP_VIEW_NAME) {
        size_t i;
        const json_t *item;
        json_array_foreach(list, i, item)
        {
            char name[512];
            gp_view_object_name(k, item, name, sizeof(name));
            fprintf(f, "%s\n", name);
        }
    } else if (rc == 0 && v->format <= GP_OUT_WIDE) {
        int show = (v->format == GP_OUT_WIDE ? GP_COL_WIDE : 0) | (v->labels ? GP_COL_LABELS : 0);
        rc = gp_cli_kind_table(k, show, list, header, v->now_ms, f);
    } else if (rc == 0 && one) {
        rc = gp_out_doc(f, v->format, one);
    } else if (rc == 0) {
        rc = gp_cli_kind_print(k, v->format, items, f);
    }
    json_decref(list);
    return rc;
}

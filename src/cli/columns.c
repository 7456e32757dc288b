/*
 * Custom columns (see columns.h): the SPEC split at the commas outside brackets and quotes,
 * each part split at its first ':' into the header and a path compiled by jsonpath.c.
 */
#include "cli/columns.h"

#include "cli/jsonpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct column {
    char *header;
    gp_jsonpath *path;
} column;

struct gp_columns {
    column col[GP_COLUMNS_MAX];
    int n;
};

void gp_columns_free(gp_columns *c)
{
    if (!c) {
        return;
    }
    for (int i = 0; i < c->n; i++) {
        free(c->col[i].header);
        gp_jsonpath_free(c->col[i].path);
    }
    free(c);
}

/* The end of the column starting at s[from]: the next ',' outside brackets and quotes. */
static size_t column_end(const char *s, size_t from)
{
    char q = 0;
    int depth = 0;
    size_t i = from;
    for (; s[i]; i++) {
        char c = s[i];
        if (q && c == '\\' && s[i + 1]) {
            i++;
        } else if (q && c == q) {
            q = 0;
        } else if (!q && (c == '\'' || c == '"')) {
            q = c;
        } else if (!q && (c == '[' || c == '{')) {
            depth++;
        } else if (!q && (c == ']' || c == '}')) {
            depth--;
        } else if (!q && depth <= 0 && c == ',') {
            break;
        }
    }
    return i;
}

/* Compiles the path s[from, to) (braces added when it has none) into col. */
static int column_path(const char *spec, size_t from, size_t to, int num, column *col, gp_diag *d)
{
    size_t len = to - from;
    int braced = len > 0 && spec[from] == '{';
    char *text = malloc(len + 3);
    if (!text) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    snprintf(text, len + 3, "%s%.*s%s", braced ? "" : "{", (int)len, spec + from,
             braced ? "" : "}");
    gp_diag pd;
    gp_diag_clear(&pd);
    int rc = gp_jsonpath_compile(text, &col->path, &pd);
    unsigned long pos = 0;
    if (rc == GP_EINVAL && sscanf(pd.msg, "position %lu", &pos) == 1) {
        /* position in text to position in spec */
        pos = pos - (braced ? 0 : 1) + from;
        const char *what = strstr(pd.msg, ": ");
        rc = gp_diag_set(d, GP_EINVAL, "column %d (%s): position %lu: %s", num, col->header,
                         pos < from + 1 ? from + 1
                         : pos > to     ? to
                                        : pos,
                         what ? what + 2 : "");
    } else if (rc < 0) {
        rc = gp_diag_set(d, rc, "column %d (%s): %s", num, col->header, pd.msg);
    } else if (!gp_jsonpath_is_path(col->path)) {
        rc = gp_diag_set(d, GP_EINVAL,
                         "column %d (%s): position %zu: one path expected, "
                         "not text or a range",
                         num, col->header, from + 1);
    }
    free(text);
    return rc;
}

static int parse_column(const char *spec, size_t from, size_t to, gp_columns *c, gp_diag *d)
{
    int num = c->n + 1;
    if (c->n == GP_COLUMNS_MAX) {
        return gp_diag_set(d, GP_EINVAL, "column %d: more than %d columns", num, GP_COLUMNS_MAX);
    }
    const char *colon = memchr(spec + from, ':', to - from);
    if (!colon) {
        return gp_diag_set(d, GP_EINVAL, "column %d: position %zu: expected HEADER:PATH", num,
                           from + 1);
    }
    size_t hlen = (size_t)(colon - (spec + from));
    if (hlen == 0) {
        return gp_diag_set(d, GP_EINVAL, "column %d: position %zu: empty header", num, from + 1);
    }
    size_t bad = strcspn(spec + from, ",[]{}'\"");
    if (bad < hlen) {
        return gp_diag_set(d, GP_EINVAL, "column %d: position %zu: a header may not hold %c", num,
                           from + bad + 1, spec[from + bad]);
    }
    column *col = &c->col[c->n];
    if (!(col->header = strndup(spec + from, hlen))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    c->n++;
    return column_path(spec, from + hlen + 1, to, num, col, d);
}

int gp_columns_parse(const char *spec, gp_columns **out, gp_diag *d)
{
    *out = NULL;
    gp_columns *c = calloc(1, sizeof(*c));
    if (!c) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (!spec[0]) {
        gp_columns_free(c);
        return gp_diag_set(d, GP_EINVAL, "no columns: expected HEADER:PATH[,HEADER:PATH...]");
    }
    for (size_t from = 0;;) {
        size_t to = column_end(spec, from);
        int rc = parse_column(spec, from, to, c, d);
        if (rc < 0) {
            gp_columns_free(c);
            return rc;
        }
        if (!spec[to]) {
            break;
        }
        from = to + 1;
    }
    *out = c;
    return 0;
}

int gp_columns_count(const gp_columns *c)
{
    return c->n;
}

const char *gp_columns_header(const gp_columns *c, int i)
{
    return c->col[i].header;
}

char *gp_columns_cell(const gp_columns *c, int i, const json_t *item)
{
    char **vals;
    int n;
    if (gp_jsonpath_values(c->col[i].path, item, &vals, &n) < 0) {
        return NULL;
    }
    size_t len = 0;
    for (int k = 0; k < n; k++) {
        len += strlen(vals[k]) + 1;
    }
    char *cell = malloc(n ? len : sizeof("<none>"));
    if (cell) {
        strcpy(cell, n ? "" : "<none>");
        for (int k = 0; k < n; k++) {
            strcat(k ? strcat(cell, ",") : cell, vals[k]);
        }
    }
    for (int k = 0; k < n; k++) {
        free(vals[k]);
    }
    free(vals);
    return cell;
}

char *gp_columns_format(const gp_columns *c)
{
    size_t cap = 1;
    char **paths = calloc((size_t)c->n, sizeof(*paths));
    int ok = paths != NULL;
    for (int i = 0; ok && i < c->n; i++) {
        ok = (paths[i] = gp_jsonpath_format(c->col[i].path)) != NULL;
        cap += ok ? strlen(c->col[i].header) + strlen(paths[i]) + 2 : 0;
    }
    char *out = ok ? malloc(cap) : NULL;
    if (out) {
        out[0] = '\0';
        for (int i = 0; i < c->n; i++) {
            strcat(strcat(strcat(out, i ? "," : ""), c->col[i].header), ":");
            strcat(out, paths[i]);
        }
    }
    for (int i = 0; paths && i < c->n; i++) {
        free(paths[i]);
    }
    free(paths);
    return out;
}

/*
 * YAML event stream -> jansson tree, recursively, one node per call of build().
 */
#include "net/yaml_json.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define NO_PATH ((size_t)-1)

typedef struct reader {
    yaml_parser_t parser;
    gp_diag *d;
    json_t *lines; /* NULL unless key lines are wanted */
    char path[512];
    size_t plen; /* NO_PATH while below a path too long to record */
} reader;

static int fail_at(reader *r, const yaml_mark_t *m, const char *what)
{
    return gp_diag_set(r->d, GP_EPARSE, "line %zu, column %zu: %s", m->line + 1, m->column + 1,
                       what);
}

static int next(reader *r, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&r->parser, ev)) {
        const yaml_parser_t *p = &r->parser;
        return gp_diag_set(r->d, GP_EPARSE, "line %zu, column %zu: %s", p->problem_mark.line + 1,
                           p->problem_mark.column + 1, p->problem ? p->problem : "syntax error");
    }
    return 0;
}

/* Appends ".key" ("key" at the top) or, for key NULL, "[index]" to the path of the node being
 * built; returns the length to restore with path_pop. */
static size_t path_push(reader *r, const char *key, size_t index)
{
    size_t old = r->plen;
    if (!r->lines || old == NO_PATH) {
        return old;
    }
    size_t room = sizeof(r->path) - old;
    int n = key ? snprintf(r->path + old, room, "%s%s", old ? "." : "", key)
                : snprintf(r->path + old, room, "[%zu]", index);
    r->plen = n >= 0 && (size_t)n < room ? old + (size_t)n : NO_PATH;
    return old;
}

static void path_pop(reader *r, size_t old)
{
    r->plen = old;
    if (old != NO_PATH) {
        r->path[old] = '\0';
    }
}

static int record_line(reader *r, const yaml_mark_t *m)
{
    if (!r->lines || r->plen == NO_PATH) {
        return 0;
    }
    if (json_object_set_new(r->lines, r->path, json_integer((json_int_t)m->line + 1)) != 0) {
        return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
    }
    return 0;
}

static json_t *plain_scalar(const char *s, size_t len)
{
    if (len == 0 || strcmp(s, "null") == 0 || strcmp(s, "~") == 0) {
        return json_null();
    }
    if (strcmp(s, "true") == 0) {
        return json_true();
    }
    if (strcmp(s, "false") == 0) {
        return json_false();
    }
    char *end;
    errno = 0;
    long long i = strtoll(s, &end, 10);
    if (*end == '\0' && errno == 0 && (isdigit((unsigned char)s[len - 1]))) {
        return json_integer(i);
    }
    errno = 0;
    double f = strtod(s, &end);
    if (*end == '\0' && errno == 0 && strspn(s, "+-0123456789.eE") == len) {
        return json_real(f);
    }
    return json_stringn(s, len);
}

static int build(reader *r, yaml_event_t *ev, int depth, json_t **out);

static int build_children(reader *r, json_t *container, int is_map, int depth)
{
    for (size_t index = 0;; index++) {
        yaml_event_t ev;
        int rc = next(r, &ev);
        if (rc < 0) {
            return rc;
        }
        if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        json_t *key = NULL, *val = NULL;
        if (is_map && ev.type != YAML_SCALAR_EVENT) {
            rc = fail_at(r, &ev.start_mark, "mapping keys must be plain strings");
            yaml_event_delete(&ev);
            return rc;
        }
        yaml_mark_t key_mark = ev.start_mark;
        if (is_map) {
            key = json_stringn((const char *)ev.data.scalar.value, ev.data.scalar.length);
            rc = key ? 0 : fail_at(r, &ev.start_mark, "invalid UTF-8 in a key");
        } else {
            size_t saved = path_push(r, NULL, index);
            rc = build(r, &ev, depth + 1, &val);
            path_pop(r, saved);
        }
        yaml_event_delete(&ev);
        if (rc == 0 && is_map) {
            size_t saved = path_push(r, json_string_value(key), 0);
            yaml_event_t vev;
            rc = record_line(r, &key_mark);
            rc = rc == 0 ? next(r, &vev) : rc;
            if (rc == 0) {
                yaml_mark_t mark = vev.start_mark;
                rc = build(r, &vev, depth + 1, &val);
                yaml_event_delete(&vev);
                if (rc == 0 && json_object_get(container, json_string_value(key))) {
                    rc = fail_at(r, &mark, "duplicate key");
                }
            }
            path_pop(r, saved);
        }
        if (rc == 0) {
            rc = is_map ? json_object_set_new(container, json_string_value(key), val)
                        : json_array_append_new(container, val);
            rc = rc == 0 ? 0 : gp_diag_set(r->d, GP_ENOMEM, "out of memory");
            val = NULL;
        }
        json_decref(key);
        json_decref(val);
        if (rc < 0) {
            return rc;
        }
    }
}

/* Builds the node that starts with ev; depth is the number of collections around it. */
static int build(reader *r, yaml_event_t *ev, int depth, json_t **out)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        const char *v = (const char *)ev->data.scalar.value;
        size_t n = ev->data.scalar.length;
        if (ev->data.scalar.anchor) {
            return fail_at(r, &ev->start_mark, "anchors are not supported");
        }
        *out = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain_scalar(v, n)
                                                                : json_stringn(v, n);
        return *out ? 0 : fail_at(r, &ev->start_mark, "invalid UTF-8 in a string");
    }
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
        if (depth >= GP_JSON_MAX_DEPTH) {
            char what[64];
            snprintf(what, sizeof(what), "nested deeper than %d levels", GP_JSON_MAX_DEPTH);
            return fail_at(r, &ev->start_mark, what);
        }
        int is_map = ev->type == YAML_MAPPING_START_EVENT;
        *out = is_map ? json_object() : json_array();
        int rc = build_children(r, *out, is_map, depth);
        if (rc < 0) {
            json_decref(*out);
            *out = NULL;
        }
        return rc;
    }
    case YAML_ALIAS_EVENT:
        return fail_at(r, &ev->start_mark, "aliases are not supported");
    default:
        return fail_at(r, &ev->start_mark, "unexpected YAML event");
    }
}

/* Skips to the document's root node event; *ev receives it. */
static int root_event(reader *r, yaml_event_t *ev)
{
    for (;;) {
        int rc = next(r, ev);
        if (rc < 0) {
            return rc;
        }
        if (ev->type == YAML_STREAM_START_EVENT || ev->type == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(ev);
            continue;
        }
        if (ev->type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(ev);
            return gp_diag_set(r->d, GP_EPARSE, "line 1, column 1: empty document");
        }
        return 0;
    }
}

/* After the root node: the document must end and no second one may follow. */
static int expect_end(reader *r)
{
    for (;;) {
        yaml_event_t ev;
        int rc = next(r, &ev);
        if (rc < 0) {
            return rc;
        }
        yaml_event_type_t t = ev.type;
        yaml_mark_t m = ev.start_mark;
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT) {
            return 0;
        }
        if (t != YAML_DOCUMENT_END_EVENT) {
            return fail_at(r, &m, "only one YAML document is allowed");
        }
    }
}

int gp_yaml_to_json(const char *text, size_t len, json_t **out, gp_diag *d)
{
    return gp_yaml_to_json_lines(text, len, out, NULL, d);
}

int gp_yaml_to_json_lines(const char *text, size_t len, json_t **out, json_t **lines, gp_diag *d)
{
    *out = NULL;
    reader r = {.d = d};
    if (lines) {
        *lines = NULL;
        r.lines = json_object();
        if (!r.lines) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
    }
    if (!yaml_parser_initialize(&r.parser)) {
        json_decref(r.lines);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    yaml_event_t ev;
    json_t *root = NULL;
    int rc = root_event(&r, &ev);
    if (rc == 0) {
        rc = build(&r, &ev, 0, &root);
        yaml_event_delete(&ev);
    }
    if (rc == 0) {
        rc = expect_end(&r);
    }
    yaml_parser_delete(&r.parser);
    if (rc < 0) {
        json_decref(root);
        json_decref(r.lines);
        return rc;
    }
    *out = root;
    if (lines) {
        *lines = r.lines;
    }
    return 0;
}

/* The documents of a stream: at each DOCUMENT_START, its root node, until STREAM_END. */
static int build_all(reader *r, json_t *docs)
{
    for (;;) {
        yaml_event_t ev;
        int rc = next(r, &ev);
        if (rc < 0) {
            return rc;
        }
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
            t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        json_t *root = NULL;
        rc = build(r, &ev, 0, &root);
        yaml_event_delete(&ev);
        if (rc < 0) {
            return rc;
        }
        if (json_is_null(root)) {
            json_decref(root);
        } else if (json_array_append_new(docs, root) < 0) {
            return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
        }
    }
}

int gp_yaml_to_json_all(const char *text, size_t len, json_t **out, gp_diag *d)
{
    *out = NULL;
    reader r = {.d = d};
    json_t *docs = json_array();
    if (!docs || !yaml_parser_initialize(&r.parser)) {
        json_decref(docs);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    int rc = build_all(&r, docs);
    yaml_parser_delete(&r.parser);
    if (rc < 0) {
        json_decref(docs);
        return rc;
    }
    *out = docs;
    return 0;
}

int gp_json_check_depth(const char *text, size_t len, int max, gp_diag *d)
{
    int depth = 0;
    bool in_string = false, escaped = false;
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n') {
            line++;
            line_start = i + 1;
        }
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max) {
                return gp_diag_set(d, GP_EPARSE,
                                   "line %zu, column %zu: nested deeper than %d levels", line,
                                   i - line_start + 1, max);
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return 0;
}

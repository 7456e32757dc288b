/*
 * Label selectors (gpupool/selector.h): a hand-written scanner over kubectl's grammar, the
 * canonical text, and matching. Pure.
 */
#include "gpupool/selector.h"

#include <stdio.h>
#include <string.h>

typedef struct scan {
    const char *p;
    gp_diag *d;
} scan;

static void skip_space(scan *s)
{
    while (*s->p == ' ' || *s->p == '\t') {
        s->p++;
    }
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '/';
}

/* A run of label characters into dst (cap bytes); its length (0: none), or -1 when too long. */
static int word(scan *s, char *dst, size_t cap)
{
    size_t n = 0;
    while (word_char(s->p[n])) {
        n++;
    }
    if (n >= cap) {
        return -1;
    }
    memcpy(dst, s->p, n);
    dst[n] = '\0';
    s->p += n;
    return (int)n;
}

static int bad(scan *s, const char *key, const char *why)
{
    return gp_diag_set(s->d, GP_EINVAL, "selector: %.64s%s%s", key, *key ? ": " : "", why);
}

static int value(scan *s, gp_sel_req *r, int i)
{
    skip_space(s);
    if (word(s, r->values[i], sizeof(r->values[i])) < 0 || !gp_label_value_ok(r->values[i])) {
        return bad(s, r->key, "a value is at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends");
    }
    return 0;
}

/* "(a, b, c)" after in / notin. */
static int set(scan *s, gp_sel_req *r)
{
    skip_space(s);
    if (*s->p != '(') {
        return bad(s, r->key, "a set of values in parentheses must follow in / notin");
    }
    s->p++;
    for (;;) {
        if (r->nvalues == GP_SELECTOR_MAX_VALUES) {
            return bad(s, r->key, "at most 16 values in a set");
        }
        int rc = value(s, r, r->nvalues++);
        if (rc < 0) {
            return rc;
        }
        skip_space(s);
        if (*s->p == ')') {
            s->p++;
            return 0;
        }
        if (*s->p != ',') {
            return bad(s, r->key, "values in a set are separated by commas and end with )");
        }
        s->p++;
    }
}

/* The operator and its operands after the key. */
static int rest(scan *s, gp_sel_req *r)
{
    skip_space(s);
    if (s->p[0] == '!' && s->p[1] == '=') {
        s->p += 2;
        r->op = GP_SEL_NE;
    } else if (s->p[0] == '=') {
        s->p += s->p[1] == '=' ? 2 : 1;
        r->op = GP_SEL_EQ;
    } else if (strncmp(s->p, "notin", 5) == 0 && !word_char(s->p[5])) {
        s->p += 5;
        r->op = GP_SEL_NOTIN;
        return set(s, r);
    } else if (strncmp(s->p, "in", 2) == 0 && !word_char(s->p[2])) {
        s->p += 2;
        r->op = GP_SEL_IN;
        return set(s, r);
    } else {
        r->op = GP_SEL_EXISTS;
        return 0;
    }
    r->nvalues = 1;
    return value(s, r, 0);
}

static int requirement(scan *s, gp_sel_req *r)
{
    memset(r, 0, sizeof(*r));
    skip_space(s);
    bool absent = *s->p == '!';
    s->p += absent;
    skip_space(s);
    if (word(s, r->key, sizeof(r->key)) < 0 || !gp_label_key_ok(r->key)) {
        return bad(s, "", "a requirement starts with a label key ([prefix/]name)");
    }
    if (absent) {
        r->op = GP_SEL_ABSENT;
        return 0;
    }
    return rest(s, r);
}

int gp_selector_parse(const char *text, gp_selector *out, gp_diag *d)
{
    scan s = {text, d};
    out->n = 0;
    skip_space(&s);
    if (!*s.p) {
        return 0;
    }
    for (;;) {
        if (out->n == GP_SELECTOR_MAX) {
            return gp_diag_set(d, GP_EINVAL, "selector: at most %d requirements", GP_SELECTOR_MAX);
        }
        gp_sel_req *r = &out->req[out->n++];
        int rc = requirement(&s, r);
        if (rc < 0) {
            return rc;
        }
        skip_space(&s);
        if (!*s.p) {
            return 0;
        }
        if (*s.p != ',') {
            return bad(&s, r->key, "requirements are separated by commas");
        }
        s.p++;
    }
}

int gp_selector_format(const gp_selector *s, char *buf, size_t cap)
{
    static const char *const ops[] = {"=", "!=", "", "", " in ", " notin "};
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->n; i++) {
        const gp_sel_req *r = &s->req[i];
        bool isset = r->op == GP_SEL_IN || r->op == GP_SEL_NOTIN;
        int k = snprintf(buf + len, cap - len, "%s%s%s%s%s", i ? "," : "",
                         r->op == GP_SEL_ABSENT ? "!" : "", r->key, ops[r->op], isset ? "(" : "");
        for (int v = 0; k >= 0 && (size_t)k < cap - len && v < r->nvalues; v++) {
            k += snprintf(buf + len + k, cap - len - (size_t)k, "%s%s", v ? "," : "", r->values[v]);
        }
        if (k >= 0 && (size_t)k < cap - len && isset) {
            k += snprintf(buf + len + k, cap - len - (size_t)k, ")");
        }
        if (k < 0 || (size_t)k >= cap - len) {
            return GP_ERANGE;
        }
        len += (size_t)k;
    }
    return 0;
}

static const char *lookup(const gp_kv *labels, int n, const char *key)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(labels[i].key, key) == 0) {
            return labels[i].value;
        }
    }
    return NULL;
}

static bool in_set(const gp_sel_req *r, const char *v)
{
    for (int i = 0; i < r->nvalues; i++) {
        if (strcmp(r->values[i], v) == 0) {
            return true;
        }
    }
    return false;
}

bool gp_selector_matches(const gp_selector *s, const gp_kv *labels, int n)
{
    for (int i = 0; i < s->n; i++) {
        const gp_sel_req *r = &s->req[i];
        const char *v = lookup(labels, n, r->key);
        bool ok = r->op == GP_SEL_EQ       ? v && strcmp(v, r->values[0]) == 0
                  : r->op == GP_SEL_NE     ? !v || strcmp(v, r->values[0]) != 0
                  : r->op == GP_SEL_EXISTS ? v != NULL
                  : r->op == GP_SEL_ABSENT ? v == NULL
                  : r->op == GP_SEL_IN     ? v && in_set(r, v)
                                           : !v || !in_set(r, v);
        if (!ok) {
            return false;
        }
    }
    return true;
}

bool gp_selector_equal(const gp_selector *a, const gp_selector *b)
{
    if (a->n != b->n) {
        return false;
    }
    for (int i = 0; i < a->n; i++) {
        const gp_sel_req *x = &a->req[i], *y = &b->req[i];
        if (x->op != y->op || x->nvalues != y->nvalues || strcmp(x->key, y->key) != 0) {
            return false;
        }
        for (int v = 0; v < x->nvalues; v++) {
            if (strcmp(x->values[v], y->values[v]) != 0) {
                return false;
            }
        }
    }
    return true;
}

/*
 * JSONPath templates (see jsonpath.h): a recursive-descent compiler into a tree of nodes (text,
 * literal, path, range with its body), a formatter that writes the tree back in one canonical
 * spelling, and an evaluator over jansson documents.
 *
 * Invariants: a compiled template is immutable; a range's body is a node list of its own, at
 * most GP_JSONPATH_MAX_DEPTH deep; text nodes never contain '{' or '}' (the compiler stops at
 * them), so the formatter can write text as is and literals in {"..."}.
 */
#include "cli/jsonpath.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SEG_FIELD, SEG_WILD, SEG_INDEX } seg_kind;

typedef struct seg {
    seg_kind kind;
    char *name;      /* SEG_FIELD */
    long long index; /* SEG_INDEX */
} seg;

typedef enum { NODE_TEXT, NODE_LITERAL, NODE_PATH, NODE_RANGE } node_kind;

typedef struct node node;

typedef struct nodes {
    node *v;
    int n, cap;
} nodes;

typedef struct path {
    int absolute; /* $: from the document; else from the current value */
    seg *segs;
    int nsegs;
} path;

struct node {
    node_kind kind;
    char *text; /* NODE_TEXT, NODE_LITERAL */
    path path;  /* NODE_PATH, NODE_RANGE */
    nodes body; /* NODE_RANGE */
};

struct gp_jsonpath {
    nodes top;
};

/* ---- growable string ---- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom, over;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom || b->over) {
        return;
    }
    if (b->len + n > GP_JSONPATH_MAX_OUTPUT) {
        b->over = 1;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* ---- freeing ---- */

static void path_fini(path *p)
{
    for (int i = 0; i < p->nsegs; i++) {
        free(p->segs[i].name);
    }
    free(p->segs);
}

static void nodes_fini(nodes *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].text);
        path_fini(&l->v[i].path);
        nodes_fini(&l->v[i].body);
    }
    free(l->v);
}

void gp_jsonpath_free(gp_jsonpath *p)
{
    if (p) {
        nodes_fini(&p->top);
        free(p);
    }
}

/* ---- compiler ---- */

typedef struct parser {
    const char *s; /* the whole template */
    size_t i;      /* next byte */
    gp_diag *d;
} parser;

static int perr(parser *p, size_t at, const char *what)
{
    return gp_diag_set(p->d, GP_EINVAL, "position %zu: %s", at + 1, what);
}

static int oom(parser *p)
{
    return gp_diag_set(p->d, GP_ENOMEM, "out of memory");
}

static node *nodes_push(nodes *l)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        node *v = realloc(l->v, sizeof(*v) * (size_t)cap);
        if (!v) {
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    node *n = &l->v[l->n++];
    *n = (node){0};
    return n;
}

static seg *segs_push(path *pa)
{
    seg *v = realloc(pa->segs, sizeof(*v) * (size_t)(pa->nsegs + 1));
    if (!v) {
        return NULL;
    }
    pa->segs = v;
    v[pa->nsegs] = (seg){0};
    return &v[pa->nsegs++];
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* A quoted string at s[*i] (quote q), with \\, \q, \t, \n, \r escapes; *i after the quote. */
static int quoted(parser *p, size_t *i, char q, char **out)
{
    size_t start = *i;
    sbuf b = {0};
    sb_add(&b, "", 0);
    for ((*i)++; p->s[*i] != q; (*i)++) {
        char c = p->s[*i];
        if (c == '\0') {
            free(b.s);
            return perr(p, start, "unterminated string");
        }
        if (c == '\\') {
            char e = p->s[++(*i)];
            c = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
            if (e != '\\' && e != q && e != 't' && e != 'n' && e != 'r') {
                free(b.s);
                return perr(p, *i - 1, "unknown escape in a string");
            }
        }
        sb_add(&b, &c, 1);
    }
    (*i)++;
    if (b.oom || !b.s) {
        free(b.s);
        return oom(p);
    }
    if (strlen(b.s) != b.len) {
        free(b.s);
        return perr(p, start, "a string may not hold a NUL byte");
    }
    *out = b.s;
    return 0;
}

/* One [...] segment at s[*i] == '['. */
static int bracket(parser *p, size_t *i, seg *sg)
{
    size_t at = *i;
    char c = p->s[++(*i)];
    if (c == '*') {
        sg->kind = SEG_WILD;
        (*i)++;
    } else if (c == '\'' || c == '"') {
        sg->kind = SEG_FIELD;
        int rc = quoted(p, i, c, &sg->name);
        if (rc < 0) {
            return rc;
        }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        errno = 0;
        sg->kind = SEG_INDEX;
        sg->index = strtoll(p->s + *i, &end, 10);
        if (errno || end == p->s + *i || (c == '-' && end == p->s + *i + 1)) {
            return perr(p, *i, "bad index");
        }
        *i = (size_t)(end - p->s);
    } else if (c == '?') {
        return perr(p, at, "filters ([?(...)]) are not supported");
    } else {
        return perr(p, *i, "expected *, an index or a quoted name after '['");
    }
    if (p->s[*i] == ':' || p->s[*i] == ',') {
        return perr(p, *i, "slices and unions ([a:b], [a,b]) are not supported");
    }
    if (p->s[*i] != ']') {
        return perr(p, *i, "expected ']'");
    }
    (*i)++;
    return 0;
}

/* One .NAME, .* or [...] segment at s[*i]. */
static int segment(parser *p, size_t *i, path *pa)
{
    seg *sg = segs_push(pa);
    if (!sg) {
        return oom(p);
    }
    if (p->s[*i] == '[') {
        return bracket(p, i, sg);
    }
    size_t at = (*i)++; /* the '.' */
    if (p->s[*i] == '*') {
        sg->kind = SEG_WILD;
        (*i)++;
        return 0;
    }
    if (p->s[*i] == '.') {
        return perr(p, at, "recursive descent (..) is not supported");
    }
    size_t start = *i;
    while (is_name_char(p->s[*i])) {
        (*i)++;
    }
    if (*i == start) {
        return perr(p, start, "expected a name after '.'");
    }
    sg->kind = SEG_FIELD;
    sg->name = strndup(p->s + start, *i - start);
    return sg->name ? 0 : oom(p);
}

/* A path in s[from, to), without blanks around it. */
static int parse_path(parser *p, size_t from, size_t to, path *pa)
{
    size_t i = from;
    if (from == to) {
        return perr(p, from, "empty expression");
    }
    if (p->s[i] == '$' || p->s[i] == '@') {
        pa->absolute = p->s[i] == '$';
        i++;
    } else if (p->s[i] == '.' && i + 1 == to) {
        return 0; /* "{.}": the current value */
    }
    while (i < to) {
        if (p->s[i] != '.' && p->s[i] != '[') {
            return perr(p, i, "expected '.' or '['");
        }
        int rc = segment(p, &i, pa);
        if (rc < 0) {
            return rc;
        }
        if (i > to) {
            return perr(p, to, "unexpected end of expression");
        }
    }
    return 0;
}

/* The end of the expression opened at s[open] == '{': the index of its '}', skipping quoted
 * strings. */
static int expr_end(parser *p, size_t open, size_t *close)
{
    char q = 0;
    for (size_t i = open + 1; p->s[i]; i++) {
        char c = p->s[i];
        if (q && c == '\\' && p->s[i + 1]) {
            i++;
        } else if (q && c == q) {
            q = 0;
        } else if (!q && (c == '\'' || c == '"')) {
            q = c;
        } else if (!q && c == '{') {
            return perr(p, i, "'{' inside an expression");
        } else if (!q && c == '}') {
            *close = i;
            return 0;
        }
    }
    return perr(p, open, "'{' without its '}'");
}

static int parse_seq(parser *p, nodes *out, int depth, size_t opened);

/* The expression s(from, to) (inside the braces) into a node of out; *ended when it is {end}. */
static int expression(parser *p, size_t from, size_t to, nodes *out, int depth, int *ended)
{
    while (from < to && (p->s[from] == ' ' || p->s[from] == '\t')) {
        from++;
    }
    while (to > from && (p->s[to - 1] == ' ' || p->s[to - 1] == '\t')) {
        to--;
    }
    size_t len = to - from;
    if (len == 3 && strncmp(p->s + from, "end", 3) == 0) {
        *ended = 1;
        return 0;
    }
    node *n = nodes_push(out);
    if (!n) {
        return oom(p);
    }
    if (p->s[from] == '"' || p->s[from] == '\'') {
        size_t i = from;
        n->kind = NODE_LITERAL;
        int rc = quoted(p, &i, p->s[from], &n->text);
        return rc < 0 ? rc : i != to ? perr(p, i, "text after a string") : 0;
    }
    if (len > 6 && strncmp(p->s + from, "range", 5) == 0 &&
        (p->s[from + 5] == ' ' || p->s[from + 5] == '\t')) {
        size_t start = from + 6;
        while (p->s[start] == ' ' || p->s[start] == '\t') {
            start++;
        }
        if (depth >= GP_JSONPATH_MAX_DEPTH) {
            return perr(p, from, "ranges nested too deep");
        }
        n->kind = NODE_RANGE;
        int rc = parse_path(p, start, to, &n->path);
        if (rc < 0) {
            return rc;
        }
        /* n may move when out grows: the body is parsed into a local list first. */
        nodes body = {0};
        size_t at = from - 1;
        rc = parse_seq(p, &body, depth + 1, at);
        out->v[out->n - 1].body = body;
        return rc;
    }
    n->kind = NODE_PATH;
    return parse_path(p, from, to, &n->path);
}

/* Nodes up to the end of the template, or up to {end} when inside a range opened at opened. */
static int parse_seq(parser *p, nodes *out, int depth, size_t opened)
{
    while (p->s[p->i]) {
        size_t start = p->i;
        if (p->s[start] == '}') {
            return perr(p, start, "'}' without its '{' (write {\"}\"})");
        }
        if (p->s[start] != '{') {
            while (p->s[p->i] && p->s[p->i] != '{' && p->s[p->i] != '}') {
                p->i++;
            }
            node *n = nodes_push(out);
            if (!n || !(n->text = strndup(p->s + start, p->i - start))) {
                return oom(p);
            }
            n->kind = NODE_TEXT;
            continue;
        }
        size_t close = 0;
        int rc = expr_end(p, start, &close), ended = 0;
        if (rc < 0) {
            return rc;
        }
        p->i = close + 1;
        rc = expression(p, start + 1, close, out, depth, &ended);
        if (rc < 0) {
            return rc;
        }
        if (ended) {
            return depth > 0 ? 0 : perr(p, start, "{end} without its {range}");
        }
    }
    return depth > 0 ? perr(p, opened, "{range} without its {end}") : 0;
}

int gp_jsonpath_compile(const char *text, gp_jsonpath **out, gp_diag *d)
{
    *out = NULL;
    gp_jsonpath *jp = calloc(1, sizeof(*jp));
    if (!jp) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    parser p = {text, 0, d};
    int rc = parse_seq(&p, &jp->top, 0, 0);
    if (rc < 0) {
        gp_jsonpath_free(jp);
        return rc;
    }
    *out = jp;
    return 0;
}

/* ---- formatter ---- */

static void format_quoted(sbuf *b, const char *s, char q)
{
    sb_add(b, &q, 1);
    for (; *s; s++) {
        const char *e = *s == '\t' ? "\\t" : *s == '\n' ? "\\n" : *s == '\r' ? "\\r" : NULL;
        if (e) {
            sb_str(b, e);
            continue;
        }
        if (*s == '\\' || *s == q) {
            sb_add(b, "\\", 1);
        }
        sb_add(b, s, 1);
    }
    sb_add(b, &q, 1);
}

static void format_path(sbuf *b, const path *pa)
{
    if (pa->absolute) {
        sb_str(b, "$");
    } else if (pa->nsegs == 0) {
        sb_str(b, "@");
    }
    for (int i = 0; i < pa->nsegs; i++) {
        const seg *sg = &pa->segs[i];
        if (sg->kind == SEG_WILD) {
            sb_str(b, "[*]");
        } else if (sg->kind == SEG_INDEX) {
            char num[32];
            snprintf(num, sizeof(num), "[%lld]", sg->index);
            sb_str(b, num);
        } else if (sg->name[0] && strspn(sg->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                                                   "TUVWXYZ0123456789_-") == strlen(sg->name)) {
            sb_str(b, ".");
            sb_str(b, sg->name);
        } else {
            sb_str(b, "[");
            format_quoted(b, sg->name, '\'');
            sb_str(b, "]");
        }
    }
}

static void format_nodes(sbuf *b, const nodes *l)
{
    for (int i = 0; i < l->n; i++) {
        const node *n = &l->v[i];
        switch (n->kind) {
        case NODE_TEXT:
            sb_str(b, n->text);
            break;
        case NODE_LITERAL:
            sb_str(b, "{");
            format_quoted(b, n->text, '"');
            sb_str(b, "}");
            break;
        case NODE_PATH:
            sb_str(b, "{");
            format_path(b, &n->path);
            sb_str(b, "}");
            break;
        case NODE_RANGE:
            sb_str(b, "{range ");
            format_path(b, &n->path);
            sb_str(b, "}");
            format_nodes(b, &n->body);
            sb_str(b, "{end}");
            break;
        }
    }
}

char *gp_jsonpath_format(const gp_jsonpath *p)
{
    sbuf b = {0};
    sb_add(&b, "", 0);
    format_nodes(&b, &p->top);
    if (b.oom || b.over) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- evaluator ---- */

typedef struct vals {
    const json_t **v;
    int n, cap;
    int oom;
} vals;

static void vals_push(vals *l, const json_t *j)
{
    if (l->oom || !j) {
        return;
    }
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        const json_t **v = realloc(l->v, sizeof(*v) * (size_t)cap);
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = j;
}

/* What seg selects from j, appended to out. */
static void step(const seg *sg, const json_t *j, vals *out)
{
    if (sg->kind == SEG_FIELD) {
        vals_push(out, json_is_object(j) ? json_object_get(j, sg->name) : NULL);
    } else if (sg->kind == SEG_INDEX && json_is_array(j)) {
        long long n = (long long)json_array_size(j), k = sg->index < 0 ? n + sg->index : sg->index;
        vals_push(out, k >= 0 && k < n ? json_array_get(j, (size_t)k) : NULL);
    } else if (sg->kind == SEG_WILD && json_is_array(j)) {
        for (size_t k = 0; k < json_array_size(j); k++) {
            vals_push(out, json_array_get(j, k));
        }
    } else if (sg->kind == SEG_WILD && json_is_object(j)) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)j, key, v)
        {
            vals_push(out, v);
        }
    }
}

/* The values pa selects (root: the document; cur: the current value) into *out. 0 or -1. */
static int select_path(const path *pa, const json_t *root, const json_t *cur, vals *out)
{
    vals a = {0};
    vals_push(&a, pa->absolute ? root : cur);
    for (int i = 0; i < pa->nsegs && !a.oom; i++) {
        vals b = {0};
        for (int k = 0; k < a.n; k++) {
            step(&pa->segs[i], a.v[k], &b);
        }
        free(a.v);
        a = b;
    }
    *out = a;
    return a.oom ? -1 : 0;
}

/* The text of one value: strings as is, numbers shortest, others as compact JSON. */
static void value_text(sbuf *b, const json_t *v)
{
    char num[64];
    if (json_is_string(v)) {
        sb_add(b, json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        sb_str(b, num);
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(num, sizeof(num), "%.*g", prec, x);
            if (strtod(num, NULL) == x) {
                break;
            }
        }
        sb_str(b, num);
    } else if (json_is_boolean(v) || json_is_null(v)) {
        sb_str(b, json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null");
    } else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!s) {
            b->oom = 1;
            return;
        }
        sb_str(b, s);
        free(s);
    }
}

static void run_nodes(const nodes *l, const json_t *root, const json_t *cur, sbuf *b)
{
    for (int i = 0; i < l->n && !b->oom && !b->over; i++) {
        const node *n = &l->v[i];
        if (n->kind == NODE_TEXT || n->kind == NODE_LITERAL) {
            sb_str(b, n->text);
            continue;
        }
        vals v;
        if (select_path(&n->path, root, cur, &v) < 0) {
            b->oom = 1;
            free(v.v);
            return;
        }
        for (int k = 0; k < v.n; k++) {
            if (n->kind == NODE_RANGE) {
                run_nodes(&n->body, root, v.v[k], b);
                continue;
            }
            if (k > 0) {
                sb_str(b, " ");
            }
            value_text(b, v.v[k]);
        }
        free(v.v);
    }
}

int gp_jsonpath_run(const gp_jsonpath *p, const json_t *doc, char **out, gp_diag *d)
{
    sbuf b = {0};
    *out = NULL;
    sb_add(&b, "", 0);
    run_nodes(&p->top, doc, doc, &b);
    if (b.oom || b.over) {
        free(b.s);
        return b.oom ? gp_diag_set(d, GP_ENOMEM, "out of memory")
                     : gp_diag_set(d, GP_ERANGE, "the output passes %u bytes",
                                   GP_JSONPATH_MAX_OUTPUT);
    }
    *out = b.s;
    return 0;
}

int gp_jsonpath_is_path(const gp_jsonpath *p)
{
    return p->top.n == 1 && p->top.v[0].kind == NODE_PATH;
}

int gp_jsonpath_values(const gp_jsonpath *p, const json_t *doc, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!gp_jsonpath_is_path(p)) {
        return GP_EINVAL;
    }
    vals v;
    if (select_path(&p->top.v[0].path, doc, doc, &v) < 0) {
        free(v.v);
        return GP_ENOMEM;
    }
    char **strs = v.n ? calloc((size_t)v.n, sizeof(*strs)) : NULL;
    int rc = v.n && !strs ? GP_ENOMEM : 0;
    for (int k = 0; rc == 0 && k < v.n; k++) {
        sbuf b = {0};
        sb_add(&b, "", 0);
        value_text(&b, v.v[k]);
        strs[k] = b.s;
        rc = b.oom || b.over ? GP_ENOMEM : 0;
    }
    free(v.v);
    if (rc < 0) {
        for (int k = 0; strs && k < v.n; k++) {
            free(strs[k]);
        }
        free(strs);
        return rc;
    }
    *out = strs;
    *n = v.n;
    return 0;
}

/*
 * The price table file (see prices.h), read with libyaml's document API: scalars keep the text
 * the file has, so "0.15" is 150000 micro-units exactly, and every node knows its line for the
 * messages. Anchors and aliases are refused (a node reached twice), as in every other YAML input
 * of gpupool.
 */
#include "ctl/prices.h"

#include "gpupool/mig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define FILE_MAX (1024 * 1024)

typedef struct pctx {
    const char *name;
    yaml_document_t *doc;
    unsigned char *seen; /* per node id: visited */
    int nnodes;
    gp_diag *d;
} pctx;

static int line_of(const yaml_node_t *n)
{
    return n ? (int)n->start_mark.line + 1 : 0;
}

/* "NAME:LINE: PATH: WHY" (GP_EINVAL). */
static int bad(pctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(pctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return gp_diag_set(c->d, GP_EINVAL, "%s:%d: %s%s%s", c->name, line_of(n), path,
                       path[0] ? ": " : "", why);
}

/* The node id names, marked visited: NULL after answering when it was reached before (an
 * alias). */
static yaml_node_t *visit(pctx *c, int id, const char *path, int *rc)
{
    yaml_node_t *n = yaml_document_get_node(c->doc, id);
    if (!n || id < 1 || id > c->nnodes) {
        *rc = gp_diag_set(c->d, GP_EINVAL, "%s: %s: missing", c->name, path);
        return NULL;
    }
    if (c->seen[id]) {
        *rc = bad(c, n, path, "anchors and aliases are not allowed");
        return NULL;
    }
    c->seen[id] = 1;
    return n;
}

/* A scalar's text (NUL-terminated, without NULs inside); NULL after answering otherwise. */
static const char *scalar(pctx *c, const yaml_node_t *n, const char *path, const char *what,
                          int *rc)
{
    if (n->type != YAML_SCALAR_NODE ||
        strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        *rc = bad(c, n, path, "must be %s", what);
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

#define DECIMAL_WHY "a decimal number >= 0 with at most 6 fraction digits"

static int decimal(pctx *c, const yaml_node_t *n, const char *path, int64_t max_micro, int64_t *out)
{
    int rc = 0;
    const char *s = scalar(c, n, path, DECIMAL_WHY, &rc);
    if (!s) {
        return rc;
    }
    if (gp_meter_parse_micro(s, out) < 0) {
        return bad(c, n, path, "must be " DECIMAL_WHY);
    }
    if (*out > max_micro) {
        return bad(c, n, path, "must be at most %lld", (long long)(max_micro / 1000000));
    }
    return 0;
}

/* ---- mappings ---- */

typedef int (*field_fn)(pctx *c, void *obj, int field, yaml_node_t *v, const char *path);

/* Walks mapping n (at path): every key must be one of fields (NULL-terminated), given once;
 * each value goes to fn with its index. *given gets a bit per field given. */
static int walk(pctx *c, yaml_node_t *n, const char *path, const char *const *fields, field_fn fn,
                void *obj, unsigned *given)
{
    if (n->type != YAML_MAPPING_NODE) {
        return bad(c, n, path, "must be a mapping");
    }
    *given = 0;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        int rc = 0;
        yaml_node_t *k = visit(c, p->key, path, &rc);
        const char *key = k ? scalar(c, k, path, "a mapping with plain keys", &rc) : NULL;
        if (!key) {
            return rc;
        }
        char sub[256];
        snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", key);
        int f = 0;
        while (fields[f] && strcmp(fields[f], key) != 0) {
            f++;
        }
        if (!fields[f]) {
            return bad(c, k, "", "unknown key %s", sub);
        }
        if (*given & (1u << f)) {
            return bad(c, k, sub, "given twice");
        }
        *given |= 1u << f;
        yaml_node_t *v = visit(c, p->value, sub, &rc);
        if (!v || (rc = fn(c, obj, f, v, sub)) < 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- one entry ---- */

typedef struct entry_ctx {
    gp_meter_price *p;
    gp_meter_cost_model cost;
} entry_ctx;

static const char *const cost_fields[] = {
    "purchase", "depreciation_months", "power_w", "electricity_kwh", "overhead", NULL};
enum { C_PURCHASE, C_MONTHS, C_POWER, C_ELECTRICITY, C_OVERHEAD };

#define MICRO(x) ((int64_t)(x)*1000000)

static int cost_field(pctx *c, void *obj, int f, yaml_node_t *v, const char *path)
{
    gp_meter_cost_model *m = obj;
    if (f == C_MONTHS) {
        int rc = 0;
        const char *s = scalar(c, v, path, "a whole number of months, 1 to 1200", &rc);
        char *end;
        long long months = s ? strtoll(s, &end, 10) : 0;
        if (!s || s[0] < '0' || s[0] > '9' || *end || months < 1 || months > 1200) {
            return s ? bad(c, v, path, "must be a whole number of months, 1 to 1200") : rc;
        }
        m->depreciation_months = months;
        return 0;
    }
    int64_t *dst = f == C_PURCHASE      ? &m->purchase_micro
                   : f == C_POWER       ? &m->power_w_micro
                   : f == C_ELECTRICITY ? &m->electricity_kwh_micro
                                        : &m->overhead_micro;
    return decimal(c, v, path, f == C_PURCHASE ? MICRO(100000000) : MICRO(1000000), dst);
}

static int mig_prices(pctx *c, gp_meter_price *p, yaml_node_t *n, const char *path)
{
    if (n->type != YAML_MAPPING_NODE) {
        return bad(c, n, path, "must be a mapping of MIG profile to price (1g.10gb: 0.5)");
    }
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
        int rc = 0;
        yaml_node_t *k = visit(c, q->key, path, &rc);
        const char *profile = k ? scalar(c, k, path, "a mapping with plain keys", &rc) : NULL;
        if (!profile) {
            return rc;
        }
        char sub[256];
        snprintf(sub, sizeof(sub), "%s.%s", path, profile);
        if (!gp_mig_name_valid(profile) || strlen(profile) >= sizeof(p->mig[0].profile)) {
            return bad(c, k, sub, "not a MIG profile name (like 1g.10gb)");
        }
        for (int i = 0; i < p->nmig; i++) {
            if (strcmp(p->mig[i].profile, profile) == 0) {
                return bad(c, k, sub, "given twice");
            }
        }
        if (p->nmig >= GP_METER_MIG_MAX) {
            return bad(c, k, path, "at most %d profiles", GP_METER_MIG_MAX);
        }
        gp_meter_mig_price *mp = &p->mig[p->nmig];
        yaml_node_t *v = visit(c, q->value, sub, &rc);
        if (!v || (rc = decimal(c, v, sub, MICRO(1000000), &mp->hourly_micro)) < 0) {
            return rc;
        }
        snprintf(mp->profile, sizeof(mp->profile), "%s", profile);
        p->nmig++;
    }
    return 0;
}

static const char *const entry_fields[] = {"model", "from", "hourly", "fraction_hourly",
                                           "mig",   "cost", NULL};
enum { E_MODEL, E_FROM, E_HOURLY, E_FRACTION, E_MIG, E_COST };

static int entry_field(pctx *c, void *obj, int f, yaml_node_t *v, const char *path)
{
    entry_ctx *e = obj;
    gp_meter_price *p = e->p;
    int rc = 0;
    const char *s;
    unsigned given;
    switch (f) {
    case E_MODEL:
        s = scalar(c, v, path, "a GPU model name", &rc);
        if (s && (!s[0] || strlen(s) >= sizeof(p->model))) {
            return bad(c, v, path, "must be a GPU model name of 1 to %d bytes",
                       (int)sizeof(p->model) - 1);
        }
        if (s) {
            snprintf(p->model, sizeof(p->model), "%s", s);
        }
        return rc;
    case E_FROM:
        s = scalar(c, v, path, "a date or time", &rc);
        if (s && gp_meter_parse_time(s, &p->from_ms) < 0) {
            return bad(c, v, path,
                       "must be a date (2024-05-01) or an RFC 3339 time (2024-05-01T12:00:00Z)");
        }
        return rc;
    case E_HOURLY:
        return decimal(c, v, path, MICRO(1000000), &p->hourly_micro);
    case E_FRACTION:
        return decimal(c, v, path, MICRO(1000000), &p->fraction_hourly_micro);
    case E_MIG:
        return mig_prices(c, p, v, path);
    default:
        rc = walk(c, v, path, cost_fields, cost_field, &e->cost, &given);
        if (rc == 0 && !(given & (1u << C_PURCHASE))) {
            return bad(c, v, path, "purchase: required");
        }
        if (rc == 0 && !(given & (1u << C_MONTHS))) {
            return bad(c, v, path, "depreciation_months: required");
        }
        if (rc == 0 && gp_meter_cost_hourly(&e->cost, &p->hourly_micro) < 0) {
            return bad(c, v, path, "the hourly price it gives is out of range");
        }
        return rc;
    }
}

static int parse_entry(pctx *c, yaml_node_t *n, const char *path, gp_meter_price *p)
{
    memset(p, 0, sizeof(*p));
    p->fraction_hourly_micro = GP_METER_NONE_PRICE;
    entry_ctx e = {p, {0}};
    unsigned given;
    int rc = walk(c, n, path, entry_fields, entry_field, &e, &given);
    if (rc < 0) {
        return rc;
    }
    if (!(given & (1u << E_MODEL))) {
        return bad(c, n, path, "model: required");
    }
    if (!(given & (1u << E_FROM))) {
        return bad(c, n, path, "from: required");
    }
    bool hourly = given & (1u << E_HOURLY), cost = given & (1u << E_COST);
    if (hourly == cost) {
        return bad(c, n, path, "give either hourly or cost (a cost model)");
    }
    return 0;
}

/* ---- the table ---- */

static const char *const top_fields[] = {"currency",        "shared_discount", "cpu_core_hour",
                                         "memory_gib_hour", "prices",          NULL};
enum { T_CURRENCY, T_DISCOUNT, T_CPU, T_MEMORY, T_PRICES };

static int parse_list(pctx *c, ctl_prices *t, yaml_node_t *n, const char *path)
{
    if (n->type != YAML_SEQUENCE_NODE) {
        return bad(c, n, path, "must be a list of prices");
    }
    int count = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (count > CTL_PRICES_MAX) {
        return bad(c, n, path, "at most %d entries", CTL_PRICES_MAX);
    }
    t->list = calloc((size_t)count + 1, sizeof(*t->list));
    if (!t->list) {
        return gp_diag_set(c->d, GP_ENOMEM, "%s: out of memory", c->name);
    }
    for (int i = 0; i < count; i++) {
        char sub[64];
        snprintf(sub, sizeof(sub), "%s[%d]", path, i);
        int rc = 0;
        yaml_node_t *e = visit(c, n->data.sequence.items.start[i], sub, &rc);
        if (!e || (rc = parse_entry(c, e, sub, &t->list[i])) < 0) {
            return rc;
        }
        for (int k = 0; k < i; k++) {
            if (strcmp(t->list[k].model, t->list[i].model) == 0 &&
                t->list[k].from_ms == t->list[i].from_ms) {
                return bad(c, e, sub, "prices[%d] has the same model and from", k);
            }
        }
        t->p.nentries = i + 1;
    }
    t->p.entries = t->list;
    return 0;
}

static int top_field(pctx *c, void *obj, int f, yaml_node_t *v, const char *path)
{
    ctl_prices *t = obj;
    int rc = 0;
    switch (f) {
    case T_CURRENCY: {
        const char *s = scalar(c, v, path, "a currency code (USD)", &rc);
        bool ok = s && s[0] && strlen(s) < sizeof(t->p.currency);
        for (const char *q = s; ok && *q; q++) {
            ok = (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9');
        }
        if (s && !ok) {
            return bad(c, v, path, "must be a currency code of 1 to %d letters or digits (USD)",
                       (int)sizeof(t->p.currency) - 1);
        }
        if (s) {
            snprintf(t->p.currency, sizeof(t->p.currency), "%s", s);
        }
        return rc;
    }
    case T_DISCOUNT:
        return decimal(c, v, path, MICRO(1), &t->p.shared_discount_ppm);
    case T_CPU:
        return decimal(c, v, path, MICRO(1000000), &t->p.cpu_core_hour_micro);
    case T_MEMORY:
        return decimal(c, v, path, MICRO(1000000), &t->p.memory_gib_hour_micro);
    default:
        return parse_list(c, t, v, path);
    }
}

void ctl_prices_free(ctl_prices *p)
{
    if (p) {
        free(p->list);
        free(p);
    }
}

static int parse_doc(pctx *c, ctl_prices *t)
{
    int rc = 0;
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root) {
        return gp_diag_set(c->d, GP_EINVAL, "%s: empty: currency and prices expected", c->name);
    }
    root = visit(c, 1, "", &rc);
    if (!root) {
        return rc;
    }
    unsigned given;
    rc = walk(c, root, "", top_fields, top_field, t, &given);
    if (rc == 0 && !(given & (1u << T_CURRENCY))) {
        rc = bad(c, root, "currency", "required (USD, EUR, ...)");
    }
    return rc;
}

int ctl_prices_parse(const char *name, const char *text, size_t len, ctl_prices **out, gp_diag *d)
{
    *out = NULL;
    ctl_prices *t = calloc(1, sizeof(*t));
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!t || !yaml_parser_initialize(&parser)) {
        free(t);
        return gp_diag_set(d, GP_ENOMEM, "%s: out of memory", name);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = gp_diag_set(d, parser.error == YAML_MEMORY_ERROR ? GP_ENOMEM : GP_EPARSE, "%s:%d: %s",
                         name, (int)parser.problem_mark.line + 1,
                         parser.problem ? parser.problem : "malformed YAML");
        yaml_parser_delete(&parser);
        free(t);
        return rc;
    }
    pctx c = {name, &doc, NULL, (int)(doc.nodes.top - doc.nodes.start), d};
    c.seen = calloc((size_t)c.nnodes + 2, 1);
    rc = c.seen ? parse_doc(&c, t) : gp_diag_set(d, GP_ENOMEM, "%s: out of memory", name);
    free(c.seen);
    yaml_document_delete(&doc);
    if (rc == 0) {
        /* A second document would be ignored silently: refused. */
        yaml_document_t more;
        if (!yaml_parser_load(&parser, &more)) {
            rc = gp_diag_set(d, GP_EPARSE, "%s:%d: %s", name, (int)parser.problem_mark.line + 1,
                             parser.problem ? parser.problem : "malformed YAML");
        } else {
            if (yaml_document_get_root_node(&more)) {
                rc = gp_diag_set(d, GP_EINVAL, "%s:%d: one YAML document only", name,
                                 (int)more.start_mark.line + 1);
            }
            yaml_document_delete(&more);
        }
    }
    yaml_parser_delete(&parser);
    if (rc < 0) {
        ctl_prices_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int ctl_prices_load(const char *path, ctl_prices **out, gp_diag *d)
{
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        int e = errno;
        return gp_diag_set(d, e == ENOENT ? GP_ENOENT : GP_EIO, "%s: %s", path, strerror(e));
    }
    char *buf = malloc(FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, FILE_MAX + 1, fp) : 0;
    int failed = ferror(fp);
    fclose(fp);
    int rc = 0;
    if (!buf) {
        rc = gp_diag_set(d, GP_ENOMEM, "%s: out of memory", path);
    } else if (failed) {
        rc = gp_diag_set(d, GP_EIO, "%s: read error", path);
    } else if (n > FILE_MAX) {
        rc = gp_diag_set(d, GP_EINVAL, "%s: larger than %d bytes", path, FILE_MAX);
    } else {
        buf[n] = '\0';
        rc = ctl_prices_parse(path, buf, n, out, d);
    }
    free(buf);
    return rc;
}

/*
 * Tables, JSON and YAML output, and formatters (see output.h).
 */
#include "cli/output.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

int gp_out_format_parse(const char *s, gp_out_format *out)
{
    static const char *const names[] = {"table", "wide", "json", "yaml"};
    if (!s) {
        *out = GP_OUT_TABLE;
        return 0;
    }
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (gp_out_format)i;
            return 0;
        }
    }
    return -1;
}

/* The shortest text that reads back as x. */
static void real_text(double x, char *buf, size_t cap)
{
    if (!isfinite(x)) {
        snprintf(buf, cap, "%s", isnan(x) ? ".nan" : x > 0 ? ".inf" : "-.inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) {
            break;
        }
    }
    if (!strpbrk(buf, ".eEn")) {
        strncat(buf, ".0", cap - strlen(buf) - 1);
    }
}

/* Whether a plain YAML scalar with this text would read back as something but a string. */
static int needs_quotes(const char *s)
{
    static const char *const words[] = {"null", "Null",  "NULL",  "~",     "true", "True",
                                        "TRUE", "false", "False", "FALSE", "yes",  "Yes",
                                        "YES",  "no",    "No",    "NO",    "on",   "On",
                                        "ON",   "off",   "Off",   "OFF",   "y",    "n"};
    if (!*s) {
        return 1;
    }
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcmp(s, words[i]) == 0) {
            return 1;
        }
    }
    char *end;
    (void)strtod(s, &end);
    return *end == '\0' || s[0] == '.' || strspn(s, "0123456789-+_:.oxXeE") == strlen(s);
}

static int emit_scalar(yaml_emitter_t *e, const char *text, int quoted)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1, 1,
                                 quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
    return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int emit_node(yaml_emitter_t *e, const json_t *v);

static int emit_object(yaml_emitter_t *e, const json_t *v)
{
    yaml_event_t ev;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
    if (!yaml_emitter_emit(e, &ev)) {
        return -1;
    }
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        if (emit_scalar(e, key, needs_quotes(key)) < 0 || emit_node(e, item) < 0) {
            return -1;
        }
    }
    yaml_mapping_end_event_initialize(&ev);
    return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int emit_array(yaml_emitter_t *e, const json_t *v)
{
    yaml_event_t ev;
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
    if (!yaml_emitter_emit(e, &ev)) {
        return -1;
    }
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        if (emit_node(e, item) < 0) {
            return -1;
        }
    }
    yaml_sequence_end_event_initialize(&ev);
    return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int emit_node(yaml_emitter_t *e, const json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return emit_object(e, v);
    case JSON_ARRAY:
        return emit_array(e, v);
    case JSON_STRING:
        return emit_scalar(e, json_string_value(v), needs_quotes(json_string_value(v)));
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(e, buf, 0);
    case JSON_REAL:
        real_text(json_real_value(v), buf, sizeof(buf));
        return emit_scalar(e, buf, 0);
    case JSON_TRUE:
        return emit_scalar(e, "true", 0);
    case JSON_FALSE:
        return emit_scalar(e, "false", 0);
    default:
        return emit_scalar(e, "null", 0);
    }
}

static int print_yaml(FILE *f, const json_t *doc)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e)) {
        return -1;
    }
    yaml_emitter_set_output_file(&e, f);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    int rc = 0;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    rc |= !yaml_emitter_emit(&e, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    rc |= rc || !yaml_emitter_emit(&e, &ev);
    rc |= rc || emit_node(&e, doc) < 0;
    yaml_document_end_event_initialize(&ev, 1);
    rc |= rc || !yaml_emitter_emit(&e, &ev);
    yaml_stream_end_event_initialize(&ev);
    rc |= rc || !yaml_emitter_emit(&e, &ev);
    yaml_emitter_delete(&e);
    return rc ? -1 : 0;
}

int gp_out_doc(FILE *f, gp_out_format format, const json_t *doc)
{
    if (format == GP_OUT_YAML) {
        return print_yaml(f, doc);
    }
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    if (!text) {
        return -1;
    }
    fprintf(f, "%s\n", text);
    free(text);
    return 0;
}

/* ---- tables ---- */

struct gp_out_table {
    int ncols, nrows, cap;
    char **cells; /* row-major; row 0 holds the headers */
};

gp_out_table *gp_out_table_new(const char *const *headers, int ncols)
{
    gp_out_table *t = calloc(1, sizeof(*t));
    if (!t) {
        return NULL;
    }
    t->ncols = ncols;
    if (gp_out_table_add(t, headers) < 0) {
        gp_out_table_free(t);
        return NULL;
    }
    return t;
}

void gp_out_table_free(gp_out_table *t)
{
    if (!t) {
        return;
    }
    for (int i = 0; i < t->nrows * t->ncols; i++) {
        free(t->cells[i]);
    }
    free(t->cells);
    free(t);
}

int gp_out_table_add(gp_out_table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        int ncap = t->cap ? t->cap * 2 : 16;
        char **p = realloc(t->cells, sizeof(*p) * (size_t)ncap * (size_t)t->ncols);
        if (!p) {
            return -1;
        }
        t->cells = p;
        t->cap = ncap;
    }
    char **row = t->cells + (size_t)t->nrows * (size_t)t->ncols;
    for (int c = 0; c < t->ncols; c++) {
        row[c] = strdup(cells[c] && cells[c][0] ? cells[c] : "-");
        if (!row[c]) {
            while (c-- > 0) {
                free(row[c]);
            }
            return -1;
        }
    }
    t->nrows++;
    return 0;
}

static void print_rows(const gp_out_table *t, FILE *f, int indent, int from)
{
    size_t width[64] = {0};
    int ncols = t->ncols < 64 ? t->ncols : 64;
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < ncols; c++) {
            size_t n = strlen(t->cells[r * t->ncols + c]);
            width[c] = n > width[c] ? n : width[c];
        }
    }
    for (int r = from; r < t->nrows; r++) {
        fprintf(f, "%*s", indent, "");
        for (int c = 0; c < ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            if (c + 1 == ncols) {
                fprintf(f, "%s\n", cell);
            } else {
                fprintf(f, "%-*s   ", (int)width[c], cell);
            }
        }
    }
}

void gp_out_table_print(const gp_out_table *t, FILE *f, int indent)
{
    print_rows(t, f, indent, 0);
}

void gp_out_table_print_body(const gp_out_table *t, FILE *f, int indent)
{
    print_rows(t, f, indent, 1);
}

/* ---- formatters ---- */

int64_t gp_out_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void gp_out_age(int64_t now_ms, int64_t then_ms, char *buf, size_t cap)
{
    if (then_ms <= 0 || then_ms > now_ms + 1000) {
        snprintf(buf, cap, "-");
        return;
    }
    int64_t s = (now_ms - then_ms) / 1000;
    if (s < 120) {
        snprintf(buf, cap, "%llds", (long long)s);
    } else if (s < 2 * 3600) {
        snprintf(buf, cap, "%lldm", (long long)(s / 60));
    } else if (s < 2 * 86400) {
        snprintf(buf, cap, "%lldh", (long long)(s / 3600));
    } else {
        snprintf(buf, cap, "%lldd", (long long)(s / 86400));
    }
}

void gp_out_until(int64_t now_ms, int64_t then_ms, char *buf, size_t cap)
{
    if (then_ms <= 0) {
        snprintf(buf, cap, "-");
    } else if (then_ms <= now_ms) {
        snprintf(buf, cap, "now");
    } else {
        char left[32];
        gp_out_age(then_ms, now_ms, left, sizeof(left)); /* the age of now, seen from then */
        snprintf(buf, cap, "in %s", left);
    }
}

void gp_out_time(int64_t ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (ms <= 0 || !gmtime_r(&t, &tm) || strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
        snprintf(buf, cap, "-");
    }
}

void gp_out_mib(int64_t mib, char *buf, size_t cap)
{
    static const char *const units[] = {"Mi", "Gi", "Ti", "Pi"};
    double x = (double)mib;
    int u = 0;
    while (u < 3 && fabs(x) >= 1024 && (fmod(x, 1024) == 0 || fabs(x) >= 1024 * 10)) {
        x /= 1024;
        u++;
    }
    if (x == floor(x)) {
        snprintf(buf, cap, "%.0f%s", x, units[u]);
    } else {
        snprintf(buf, cap, "%.1f%s", x, units[u]);
    }
}

void gp_out_milli(int64_t milli, char *buf, size_t cap)
{
    int64_t a = milli < 0 ? -milli : milli;
    if (a % 1000 == 0) {
        snprintf(buf, cap, "%lld", (long long)(milli / 1000));
        return;
    }
    int frac = (int)(a % 1000), digits = 3;
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, cap, "%s%lld.%0*d", milli < 0 ? "-" : "", (long long)(a / 1000), digits, frac);
}

void gp_out_number(const json_t *v, char *buf, size_t cap)
{
    if (json_is_integer(v)) {
        snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else if (json_is_real(v)) {
        gp_out_milli((int64_t)llround(json_real_value(v) * 1000.0), buf, cap);
    } else {
        snprintf(buf, cap, "-");
    }
}

const char *gp_out_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

int64_t gp_out_int(const json_t *obj, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(obj, key));
}

#define DIGEST_KEEP 12 /* hex digits of a digest a table keeps, as podman shows image ids */

/* ref without the Docker Hub prefixes and with its digest shortened, into buf. */
static void image_plain(const char *ref, char *buf, size_t cap)
{
    if (strncmp(ref, "docker.io/library/", 18) == 0) {
        ref += 18;
    } else if (strncmp(ref, "docker.io/", 10) == 0) {
        ref += 10;
    }
    snprintf(buf, cap, "%s", ref);
    char *at = strchr(buf, '@');
    char *colon = at ? strchr(at, ':') : NULL;
    if (colon && strlen(colon + 1) > DIGEST_KEEP) {
        colon[1 + DIGEST_KEEP] = '\0';
    }
}

void gp_out_image(const char *ref, size_t max, char *buf, size_t cap)
{
    char plain[1024];
    if (cap == 0) {
        return;
    }
    buf[0] = '\0';
    if (!ref || !ref[0]) {
        return;
    }
    image_plain(ref, plain, sizeof(plain));
    if (max + 1 > cap) {
        max = cap - 1;
    }
    if (strlen(plain) <= max || max < 4) {
        snprintf(buf, cap, "%.*s", (int)max, plain);
        return;
    }
    /* The longest tail after a '/' that fits with ".../" before it. */
    for (const char *p = strchr(plain, '/'); p; p = strchr(p + 1, '/')) {
        if (strlen(p) + 3 <= max) {
            snprintf(buf, cap, "...%s", p);
            return;
        }
    }
    /* Not even the last component fits with ".../": its end goes. */
    const char *last = strrchr(plain, '/');
    const char *lead = last && max >= 16 ? ".../" : "";
    last = last && lead[0] ? last + 1 : plain;
    snprintf(buf, cap, "%s%.*s...", lead, (int)(max - strlen(lead) - 3), last);
}

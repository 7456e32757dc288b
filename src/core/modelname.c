/*
 * The GPU model name resolver (gpupool/modelname.h): words, the family, memory words.
 */
#include "gpupool/modelname.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#define NAME_BYTES 128 /* longer names match only exactly */
#define MAX_WORDS  16

typedef struct words {
    char buf[NAME_BYTES];
    const char *w[MAX_WORDS];
    int n;
} words;

static const char *const brands[] = {"nvidia", "tesla", "geforce", "quadro", "rtx", "gtx"};

static bool is_brand(const char *w)
{
    for (size_t i = 0; i < sizeof(brands) / sizeof(brands[0]); i++) {
        if (strcmp(w, brands[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* Lower-cased words of s without the brand words; false when s is too long or too many. */
static bool split(const char *s, words *out)
{
    size_t len = strlen(s);
    out->n = 0;
    if (len >= sizeof(out->buf)) {
        return false;
    }
    for (size_t i = 0; i <= len; i++) {
        char ch = s[i];
        out->buf[i] = (ch == ' ' || ch == '-' || ch == '_' || ch == '/' || ch == '\t')
                          ? '\0'
                          : (char)tolower((unsigned char)ch);
    }
    for (size_t i = 0; i < len; i++) {
        bool start = out->buf[i] && (i == 0 || !out->buf[i - 1]);
        if (!start || is_brand(out->buf + i)) {
            continue;
        }
        if (out->n == MAX_WORDS) {
            return false;
        }
        out->w[out->n++] = out->buf + i;
    }
    return true;
}

/* The size a memory word names, in GB ("80gb", "80g"); 0 when w is not one. */
static int64_t memory_word(const char *w)
{
    int64_t gb = 0;
    const char *p = w;
    for (; isdigit((unsigned char)*p) && gb < 100000; p++) {
        gb = gb * 10 + (*p - '0');
    }
    if (p == w || gb == 0 || (strcmp(p, "gb") != 0 && strcmp(p, "g") != 0)) {
        return 0;
    }
    return gb;
}

static bool has_word(const words *m, const char *w)
{
    for (int i = 0; i < m->n; i++) {
        if (strcmp(m->w[i], w) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether a memory word of gb names model m (its words, its memory). */
static bool memory_matches(const words *m, int64_t gb, int64_t mem_mib)
{
    bool named = false;
    for (int i = 0; i < m->n; i++) {
        int64_t own = memory_word(m->w[i]);
        if (own == gb) {
            return true;
        }
        named |= own > 0;
    }
    if (named || mem_mib <= 0) {
        return false; /* the name gives another size, or nothing tells */
    }
    int64_t want = gb * 1024, diff = mem_mib > want ? mem_mib - want : want - mem_mib;
    return diff * 10 <= want;
}

int gp_model_name_match(const char *name, const char *model, int64_t mem_mib)
{
    if (!name || !model || !*name || !*model) {
        return 0;
    }
    if (strcasecmp(name, model) == 0) {
        return GP_MODEL_MATCH_EXACT;
    }
    words a, m;
    if (!split(name, &a) || !split(model, &m) || a.n == 0 || m.n == 0) {
        return 0;
    }
    /* The family: the first word that is not a memory word, on both sides. */
    int fa = 0, fm = 0;
    while (fa < a.n && memory_word(a.w[fa]) > 0) {
        fa++;
    }
    while (fm < m.n && memory_word(m.w[fm]) > 0) {
        fm++;
    }
    if (fa == a.n || fm == m.n || strcmp(a.w[fa], m.w[fm]) != 0) {
        return 0;
    }
    for (int i = 0; i < a.n; i++) {
        int64_t gb = memory_word(a.w[i]);
        bool ok = i == fa || (gb > 0 ? memory_matches(&m, gb, mem_mib) : has_word(&m, a.w[i]));
        if (!ok) {
            return 0;
        }
    }
    return a.n; /* 1 for the family alone, one more per word */
}

uint64_t gp_cluster_models_named(const gp_cluster *c, const char *name)
{
    uint64_t set = 0;
    int n = gp_cluster_model_count(c);
    for (int m = 0; m < n && m < 64; m++) {
        const gp_gpu_model *info = gp_cluster_model_info(c, m);
        if (gp_model_name_match(name, info->name, info->mem_mib) > 0) {
            set |= 1ull << m;
        }
    }
    return set;
}

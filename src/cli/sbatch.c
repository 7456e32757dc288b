/*
 * The sbatch front end's translation (sbatch.h): #SBATCH lines and sbatch's options into a job
 * spec whose command runs the script.
 */
#include "cli/sbatch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the options ---- */

enum {
    O_GRES,
    O_GPUS_PER_NODE,
    O_NODES,
    O_NTASKS_PER_NODE,
    O_CPUS_PER_TASK,
    O_MEM,
    O_TIME,
    O_JOB_NAME,
    O_OUTPUT,
    O_ERROR,
    O_PARTITION,
    O_ARRAY,
    O_DEPENDENCY,
    O_EXPORT,
    O_CHDIR,
    NOPTS
};

static const struct {
    const char *name;
    char shortname;
} known[NOPTS] = {
    [O_GRES] = {"gres", 0},
    [O_GPUS_PER_NODE] = {"gpus-per-node", 0},
    [O_NODES] = {"nodes", 'N'},
    [O_NTASKS_PER_NODE] = {"ntasks-per-node", 0},
    [O_CPUS_PER_TASK] = {"cpus-per-task", 'c'},
    [O_MEM] = {"mem", 0},
    [O_TIME] = {"time", 't'},
    [O_JOB_NAME] = {"job-name", 'J'},
    [O_OUTPUT] = {"output", 'o'},
    [O_ERROR] = {"error", 'e'},
    [O_PARTITION] = {"partition", 'p'},
    [O_ARRAY] = {"array", 'a'},
    [O_DEPENDENCY] = {"dependency", 'd'},
    [O_EXPORT] = {"export", 0},
    [O_CHDIR] = {"chdir", 'D'},
};

/* sbatch's short options that take no value (the others do). */
static const char flag_shorts[] = "hHkOQsvVW";

/* The options' values (last wins) and where each came from. */
typedef struct opts {
    const char *val[NOPTS];
    char where[NOPTS][32];
    json_t *warnings;
    bool strict;
    char *err;
    size_t cap;
} opts;

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* An option sbatch has and gpupool does not honour: a warning, or with strict an error. */
static int unsupported(opts *o, const char *opt, const char *where)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "%.64s: not supported, ignored (%s)", opt, where);
    if (o->strict) {
        return fail(o->err, o->cap, "%.64s: not supported (%s; without --strict it is ignored)",
                    opt, where);
    }
    json_array_append_new(o->warnings, json_string(msg));
    return 0;
}

static int find_long(const char *name, size_t n)
{
    for (int i = 0; i < NOPTS; i++) {
        if (strlen(known[i].name) == n && strncmp(known[i].name, name, n) == 0) {
            return i;
        }
    }
    return -1;
}

static int find_short(char c)
{
    for (int i = 0; i < NOPTS; i++) {
        if (known[i].shortname == c) {
            return i;
        }
    }
    return -1;
}

bool gp_sbatch_takes_next(const char *w)
{
    if (w[0] != '-' || !w[1]) {
        return false;
    }
    if (w[1] == '-') {
        return !strchr(w, '=') && find_long(w + 2, strlen(w + 2)) >= 0;
    }
    return !w[2] && !strchr(flag_shorts, w[1]);
}

/* Reads words[*i] (and its value, the next word, when separate), advancing *i. */
static int one_option(opts *o, char **words, int n, int *i, const char *where)
{
    const char *w = words[*i];
    const char *value = NULL;
    int k;
    char label[80];
    if (w[0] == '-' && w[1] == '-' && w[2]) {
        const char *eq = strchr(w + 2, '=');
        size_t len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
        k = find_long(w + 2, len);
        snprintf(label, sizeof(label), "--%.*s", (int)(len < 64 ? len : 64), w + 2);
        if (k < 0) {
            return unsupported(o, label, where); /* --name alone: taken as a flag */
        }
        value = eq ? eq + 1 : (*i + 1 < n ? words[++*i] : NULL);
    } else if (w[0] == '-' && w[1] && w[1] != '-') {
        k = find_short(w[1]);
        snprintf(label, sizeof(label), "-%c", w[1]);
        bool flag = strchr(flag_shorts, w[1]) != NULL;
        if (k < 0 && (flag || w[2] || *i + 1 >= n)) {
            return unsupported(o, label, where);
        }
        if (k < 0) {
            ++*i; /* its value */
            return unsupported(o, label, where);
        }
        snprintf(label, sizeof(label), "--%s", known[k].name);
        value = w[2] ? w + 2 : (*i + 1 < n ? words[++*i] : NULL);
    } else {
        return fail(o->err, o->cap, "%s: \"%.64s\" is not an option", where, w);
    }
    if (!value || !*value) {
        return fail(o->err, o->cap, "%s: a value is required (%s)", label, where);
    }
    o->val[k] = value;
    snprintf(o->where[k], sizeof(o->where[k]), "%s", where);
    return 0;
}

static int read_options(opts *o, char **words, int n, const char *where)
{
    for (int i = 0; i < n; i++) {
        if (one_option(o, words, n, &i, where) < 0) {
            return -1;
        }
    }
    return 0;
}

/* ---- #SBATCH lines ---- */

/* Splits s into words (quotes '...' and "..." group; a word starting with '#' ends the line)
 * appended to out. -1 for an unterminated quote. */
static int split_words(const char *s, size_t len, json_t *out)
{
    char word[4096];
    size_t i = 0;
    while (i < len) {
        while (i < len && isspace((unsigned char)s[i])) {
            i++;
        }
        if (i >= len || s[i] == '#') {
            break;
        }
        size_t n = 0;
        while (i < len && !isspace((unsigned char)s[i])) {
            char q = s[i];
            if (q == '\'' || q == '"') {
                const char *end = memchr(s + i + 1, q, len - i - 1);
                if (!end) {
                    return -1;
                }
                size_t m = (size_t)(end - (s + i + 1));
                if (n + m < sizeof(word)) {
                    memcpy(word + n, s + i + 1, m);
                    n += m;
                }
                i += m + 2;
            } else {
                if (n + 1 < sizeof(word)) {
                    word[n++] = q;
                }
                i++;
            }
        }
        json_array_append_new(out, json_stringn(word, n));
    }
    return 0;
}

int gp_sbatch_directives(const char *script, json_t **out, char *err, size_t cap)
{
    json_t *list = json_array();
    const char *p = script;
    for (int line = 1; list && *p; line++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        size_t lead = 0;
        while (lead < len && (p[lead] == ' ' || p[lead] == '\t' || p[lead] == '\r')) {
            lead++;
        }
        const char *t = p + lead;
        size_t tl = len - lead;
        if (tl >= 7 && strncmp(t, "#SBATCH", 7) == 0 && (tl == 7 || isspace((unsigned char)t[7]))) {
            json_t *words = json_array();
            if (split_words(t + 7, tl - 7, words) < 0) {
                json_decref(words);
                json_decref(list);
                return fail(err, cap, "line %d: an unterminated quote", line);
            }
            json_t *entry = json_pack("{s:i, s:o}", "line", line, "words", words);
            json_array_append_new(list, entry);
        } else if (tl > 0 && t[0] != '#') {
            break; /* the first command: sbatch reads no further */
        }
        p = eol ? eol + 1 : p + len;
    }
    if (!list) {
        return fail(err, cap, "out of memory");
    }
    *out = list;
    return 0;
}

/* ---- values ---- */

int64_t gp_sbatch_time(const char *s)
{
    if (strcmp(s, "UNLIMITED") == 0 || strcmp(s, "INFINITE") == 0 || strcmp(s, "unlimited") == 0 ||
        strcmp(s, "infinite") == 0) {
        return 0;
    }
    int64_t f[4] = {0};
    int nf = 0;
    int64_t days = -1;
    const char *p = s;
    const char *dash = strchr(s, '-');
    if (dash) {
        days = 0;
        if (dash == s) {
            return -1;
        }
        for (; p < dash; p++) {
            if (!isdigit((unsigned char)*p) || days > 100000) {
                return -1;
            }
            days = days * 10 + (*p - '0');
        }
        p++;
    }
    for (;;) {
        if (!isdigit((unsigned char)*p) || nf == 3) {
            return -1;
        }
        int64_t v = 0;
        for (int d = 0; isdigit((unsigned char)*p); p++, d++) {
            if (d >= 9) {
                return -1;
            }
            v = v * 10 + (*p - '0');
        }
        f[nf++] = v;
        if (*p == '\0') {
            break;
        }
        if (*p++ != ':') {
            return -1;
        }
    }
    if (days >= 0) { /* D-HH, D-HH:MM, D-HH:MM:SS */
        return days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
    }
    switch (nf) {
    case 1: /* MM */
        return f[0] * 60;
    case 2: /* MM:SS */
        return f[0] * 60 + f[1];
    default: /* HH:MM:SS */
        return f[0] * 3600 + f[1] * 60 + f[2];
    }
}

static int bad(opts *o, int k, const char *why)
{
    return fail(o->err, o->cap, "--%s: bad value \"%.64s\" (%s; %s)", known[k].name, o->val[k], why,
                o->where[k]);
}

/* A positive count of at most hi, all digits. */
static int count(const char *s, int hi)
{
    int v = 0;
    if (!*s) {
        return -1;
    }
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s) || v > hi) {
            return -1;
        }
        v = v * 10 + (*s - '0');
    }
    return v >= 1 && v <= hi ? v : -1;
}

/* Job names: [a-z0-9-], alphanumeric at both ends, at most 40 characters (an array's children
 * add -INDEX). */
static void job_name(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < cap && n < 40; p++) {
        char c = (char)tolower((unsigned char)*p);
        out[n++] = isalnum((unsigned char)c) ? c : '-';
    }
    out[n] = '\0';
    while (n > 0 && out[n - 1] == '-') {
        out[--n] = '\0';
    }
    size_t lead = strspn(out, "-");
    memmove(out, out + lead, n - lead + 1);
    if (!out[0]) {
        snprintf(out, cap, "sbatch");
    }
}

/* gpu[:TYPE]:N (or gpu alone: 1) into res; other generic resources are warned about. */
static int gres(opts *o, json_t *res)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", o->val[O_GRES]);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (strncmp(item, "gpu", 3) != 0 || (item[3] && item[3] != ':')) {
            char what[96];
            snprintf(what, sizeof(what), "--gres=%.64s", item);
            if (unsupported(o, what, o->where[O_GRES]) < 0) {
                return -1;
            }
            continue;
        }
        char *n = item[3] ? item + 4 : (char *)"1";
        char *type = NULL, *colon = strchr(n, ':');
        if (colon) {
            *colon = '\0';
            type = n;
            n = colon + 1;
        }
        int v = count(n, 32);
        if (v < 0 || (type && !*type)) {
            return bad(o, O_GRES, "gpu[:TYPE]:N with N from 1 to 32");
        }
        json_object_set_new(res, "gpus", json_integer(v));
        if (type) {
            json_object_set_new(res, "gpu_models", json_pack("[s]", type));
        }
    }
    return 0;
}

/* [TYPE:]N into res. */
static int gpus_per_node(opts *o, json_t *res)
{
    const char *v = o->val[O_GPUS_PER_NODE], *colon = strrchr(v, ':');
    int n = count(colon ? colon + 1 : v, 32);
    if (n < 0 || colon == v) {
        return bad(o, O_GPUS_PER_NODE, "[TYPE:]N with N from 1 to 32");
    }
    json_object_set_new(res, "gpus", json_integer(n));
    if (colon) {
        json_object_set_new(res, "gpu_models", json_pack("[s#]", v, (int)(colon - v)));
    }
    return 0;
}

/* SIZE[K|M|G|T] (default M) into MiB; -1 when malformed. */
static int64_t mem_mib(const char *s)
{
    char *end;
    if (!isdigit((unsigned char)*s)) {
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (v > (1ull << 40)) {
        return -1;
    }
    int64_t n = (int64_t)v;
    switch (toupper((unsigned char)*end)) {
    case '\0':
    case 'M':
        break;
    case 'K':
        n = (n + 1023) / 1024;
        break;
    case 'G':
        n *= 1024;
        break;
    case 'T':
        n *= 1024 * 1024;
        break;
    default:
        return -1;
    }
    return *end && end[1] && !(toupper((unsigned char)end[1]) == 'B' && !end[2]) ? -1 : n;
}

static int resources(opts *o, json_t *spec)
{
    json_t *res = json_object();
    json_object_set_new(spec, "resources", res);
    if (o->val[O_GRES] && gres(o, res) < 0) {
        return -1;
    }
    if (o->val[O_GPUS_PER_NODE] && gpus_per_node(o, res) < 0) {
        return -1;
    }
    int tasks = 1;
    if (o->val[O_NTASKS_PER_NODE] && (tasks = count(o->val[O_NTASKS_PER_NODE], 4096)) < 0) {
        return bad(o, O_NTASKS_PER_NODE, "a count from 1 to 4096");
    }
    if (o->val[O_CPUS_PER_TASK]) {
        int c = count(o->val[O_CPUS_PER_TASK], 4096);
        if (c < 0) {
            return bad(o, O_CPUS_PER_TASK, "a count from 1 to 4096");
        }
        json_object_set_new(res, "cpu_milli", json_integer((json_int_t)c * tasks * 1000));
    }
    if (o->val[O_MEM]) {
        int64_t m = mem_mib(o->val[O_MEM]);
        if (m < 0) {
            return bad(o, O_MEM, "SIZE with K, M, G or T; M when none");
        }
        json_object_set_new(res, "memory_mib", json_integer(m));
    }
    return 0;
}

/* afterok:ID[:ID...] items, comma-separated (all must hold), into after_ok. */
static int dependency(opts *o, json_t *spec)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", o->val[O_DEPENDENCY]);
    if (strchr(buf, '?')) {
        return bad(o, O_DEPENDENCY, "'?' (any of) is not supported; ',' (all of) is");
    }
    json_t *list = json_array();
    json_object_set_new(spec, "after_ok", list);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *ids = strchr(item, ':');
        if (!ids || strncmp(item, "afterok", (size_t)(ids - item)) != 0 || ids - item != 7) {
            char what[96];
            snprintf(what, sizeof(what), "--dependency=%.64s", item);
            if (unsupported(o, what, o->where[O_DEPENDENCY]) < 0) {
                return -1;
            }
            continue;
        }
        char *s2 = NULL;
        for (char *id = strtok_r(ids + 1, ":", &s2); id; id = strtok_r(NULL, ":", &s2)) {
            json_array_append_new(list, json_string(id));
        }
    }
    if (json_array_size(list) == 0) {
        json_object_del(spec, "after_ok");
    }
    return 0;
}

/* ALL | NONE | [ALL,]VAR[=VALUE],... into env. */
static int export_env(opts *o, const gp_sbatch_in *in, json_t *env)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", o->val[O_EXPORT]);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (strcmp(item, "NONE") == 0 || strcmp(item, "ALL") == 0) {
            continue; /* the submitting environment is never copied whole */
        }
        char *eq = strchr(item, '=');
        if (eq) {
            *eq = '\0';
        }
        const char *value = eq ? eq + 1 : in->getenv ? in->getenv(item) : NULL;
        if (!*item) {
            return bad(o, O_EXPORT, "ALL, NONE or VAR[=VALUE] items");
        }
        if (value) {
            json_object_set_new(env, item, json_string(value));
        }
    }
    return 0;
}

/* An output pattern as a double-quoted shell word: %j job id, %x name, %A array id, %a index,
 * %N node, %u user, %n node rank, %% '%'. */
static int out_word(opts *o, int k, const char *name, char *dst, size_t cap)
{
    size_t n = 0;
    const char *v = o->val[k];
    dst[n++] = '"';
    for (const char *p = v; *p; p++) {
        char piece[64] = {*p, 0};
        if (*p == '%') {
            char c = *++p;
            const char *rep = c == 'j'   ? "${GPUPOOL_JOB_ID}"
                              : c == 'x' ? name
                              : c == 'A' ? "${SLURM_ARRAY_JOB_ID:-$GPUPOOL_JOB_ID}"
                              : c == 'a' ? "${SLURM_ARRAY_TASK_ID:-4294967294}"
                              : c == 'N' ? "$(uname -n)"
                              : c == 'u' ? "${USER}"
                              : c == 'n' ? "${GPUPOOL_NODE_RANK}"
                              : c == '%' ? "%"
                                         : NULL;
            if (!rep) {
                return bad(o, k, "patterns: %j %x %A %a %N %u %n %%");
            }
            snprintf(piece, sizeof(piece), "%s", rep);
        } else if (strchr("\"$`\\", *p)) {
            piece[0] = '\\';
            piece[1] = *p;
            piece[2] = '\0';
        }
        size_t m = strlen(piece);
        if (n + m + 2 >= cap) {
            return bad(o, k, "too long");
        }
        memcpy(dst + n, piece, m);
        n += m;
    }
    dst[n++] = '"';
    dst[n] = '\0';
    return 0;
}

/* Appends text to a growing buffer; false when out of memory. */
typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static bool put(buf *b, const char *s, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        size_t cap = (b->n + len + 1) * 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            return false;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
    return true;
}

static bool puts_(buf *b, const char *s)
{
    return put(b, s, strlen(s));
}

/* s single-quoted for the shell. */
static bool put_quoted(buf *b, const char *s)
{
    bool ok = puts_(b, "'");
    for (const char *p = s; ok && *p; p++) {
        ok = *p == '\'' ? puts_(b, "'\\''") : put(b, p, 1);
    }
    return ok && puts_(b, "'");
}

/* A heredoc delimiter that is no line of the script. */
static void delimiter(const char *script, char *out, size_t cap)
{
    for (int i = 0;; i++) {
        snprintf(out, cap, "GPUPOOL_SBATCH_EOF_%d", i);
        size_t n = strlen(out);
        bool found = false;
        for (const char *p = script; p && *p && !found; p = strchr(p, '\n'), p = p ? p + 1 : p) {
            found = strncmp(p, out, n) == 0 && (p[n] == '\n' || p[n] == '\0' || p[n] == '\r');
        }
        if (!found) {
            return;
        }
    }
}

/* The shell program the job runs: Slurm's usual variables, the script written to a private
 * file and run (by its #! line, else /bin/sh) with the arguments, its output where -o and -e
 * say. NULL on a bad pattern (o->err set) or out of memory. */
static char *wrapper(opts *o, const gp_sbatch_in *in, const char *name, const char *submit_dir)
{
    char out[2048] = "", errw[2048] = "", delim[64];
    if ((o->val[O_OUTPUT] && out_word(o, O_OUTPUT, name, out, sizeof(out)) < 0) ||
        (o->val[O_ERROR] && out_word(o, O_ERROR, name, errw, sizeof(errw)) < 0)) {
        return NULL;
    }
    delimiter(in->script, delim, sizeof(delim));
    buf b = {0};
    bool ok = puts_(&b, "export SLURM_JOB_ID=\"$GPUPOOL_JOB_ID\" SLURM_JOBID=\"$GPUPOOL_JOB_ID\" "
                        "SLURM_NNODES=\"$GPUPOOL_NNODES\" SLURM_JOB_NUM_NODES=\"$GPUPOOL_NNODES\" "
                        "SLURM_NODEID=\"$GPUPOOL_NODE_RANK\" SLURM_JOB_NAME=") &&
              put_quoted(&b, name) && puts_(&b, " SLURM_SUBMIT_DIR=") &&
              put_quoted(&b, submit_dir) &&
              /* mktemp makes the file itself (O_EXCL, 0600): no name another process could have
               * prepared (a link in a shared /tmp) */
              puts_(&b, "\ns=$(mktemp \"${TMPDIR:-/tmp}/gpupool-sbatch.XXXXXXXX\") || exit 1\n"
                        "cat >\"$s\" <<'") &&
              puts_(&b, delim) && puts_(&b, "'\n") && puts_(&b, in->script);
    size_t len = strlen(in->script);
    ok = ok && (len == 0 || in->script[len - 1] == '\n' || puts_(&b, "\n"));
    ok = ok && puts_(&b, delim) && puts_(&b, "\nchmod 700 \"$s\"\n");
    if (out[0] || errw[0]) {
        ok = ok && puts_(&b, "exec");
        ok = ok && (!out[0] || (puts_(&b, " >") && puts_(&b, out)));
        ok = ok && (errw[0] ? puts_(&b, " 2>") && puts_(&b, errw) : puts_(&b, " 2>&1"));
        ok = ok && puts_(&b, "\n");
    }
    bool shebang = strncmp(in->script, "#!", 2) == 0;
    ok = ok && puts_(&b, shebang ? "\"$s\" \"$@\"" : "/bin/sh \"$s\" \"$@\"") &&
         puts_(&b, "\nrc=$?\nrm -f \"$s\"\nexit $rc\n");
    if (!ok) {
        free(b.p);
        fail(o->err, o->cap, "out of memory");
        return NULL;
    }
    return b.p;
}

/* The directives, then the command line, into o. */
static int gather(opts *o, const gp_sbatch_in *in, json_t **dirs)
{
    if (gp_sbatch_directives(in->script, dirs, o->err, o->cap) < 0) {
        return -1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(*dirs, i, e)
    {
        json_t *words = json_object_get(e, "words");
        int n = (int)json_array_size(words);
        const char **w = calloc((size_t)n + 1, sizeof(char *));
        if (!w) {
            return fail(o->err, o->cap, "out of memory");
        }
        for (int k = 0; k < n; k++) {
            w[k] = json_string_value(json_array_get(words, (size_t)k));
        }
        char where[32];
        snprintf(where, sizeof(where), "line %d",
                 (int)json_integer_value(json_object_get(e, "line")));
        int rc = read_options(o, (char **)w, n, where);
        free(w);
        if (rc < 0) {
            return -1;
        }
    }
    return read_options(o, in->opts, in->nopts, "command line");
}

/* The spec's simple members: name, replicas, max_runtime, queue, array, working_dir. */
static int members(opts *o, const gp_sbatch_in *in, json_t *spec, char *name, size_t cap, char *dir,
                   size_t dcap)
{
    const char *base = strrchr(in->script_name, '/');
    base = base ? base + 1 : in->script_name;
    char stem[256];
    snprintf(stem, sizeof(stem), "%s", base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) {
        *dot = '\0';
    }
    job_name(o->val[O_JOB_NAME] ? o->val[O_JOB_NAME] : stem, name, cap);
    json_object_set_new(spec, "name", json_string(name));
    if (o->val[O_NODES]) {
        char nodes[32];
        snprintf(nodes, sizeof(nodes), "%s", o->val[O_NODES]);
        char *dash = strchr(nodes, '-');
        if (dash) {
            *dash = '\0'; /* MIN-MAX: a gang of MIN */
        }
        int n = count(nodes, 4096);
        if (n < 0) {
            return bad(o, O_NODES, "a count from 1 to 4096, or MIN-MAX");
        }
        json_object_set_new(spec, "replicas", json_integer(n));
    }
    if (o->val[O_TIME]) {
        int64_t t = gp_sbatch_time(o->val[O_TIME]);
        if (t < 0) {
            return bad(o, O_TIME, "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
        }
        if (t > 0) {
            json_object_set_new(spec, "max_runtime", json_integer(t));
        }
    }
    if (o->val[O_PARTITION]) {
        json_object_set_new(spec, "queue", json_string(o->val[O_PARTITION]));
    }
    if (o->val[O_ARRAY]) {
        json_object_set_new(spec, "array", json_string(o->val[O_ARRAY]));
    }
    const char *d = o->val[O_CHDIR];
    if (d && d[0] != '/') {
        snprintf(dir, dcap, "%s/%s", in->cwd, d);
    } else {
        snprintf(dir, dcap, "%s", d ? d : in->cwd);
    }
    json_object_set_new(spec, "working_dir", json_string(dir));
    return 0;
}

static int fill(opts *o, const gp_sbatch_in *in, json_t *spec)
{
    char name[64], dir[4096];
    if (members(o, in, spec, name, sizeof(name), dir, sizeof(dir)) < 0 || resources(o, spec) < 0 ||
        (o->val[O_DEPENDENCY] && dependency(o, spec) < 0)) {
        return -1;
    }
    json_t *env = json_object();
    json_object_set_new(spec, "env", env);
    if (o->val[O_EXPORT] && export_env(o, in, env) < 0) {
        return -1;
    }
    if (o->val[O_NTASKS_PER_NODE]) {
        json_object_set_new(env, "SLURM_NTASKS_PER_NODE", json_string(o->val[O_NTASKS_PER_NODE]));
    }
    if (o->val[O_CPUS_PER_TASK]) {
        json_object_set_new(env, "SLURM_CPUS_PER_TASK", json_string(o->val[O_CPUS_PER_TASK]));
    }
    char *w = wrapper(o, in, name, in->cwd);
    if (!w) {
        return -1;
    }
    json_t *cmd = json_pack("[s, s, s]", "/bin/sh", "-c", w);
    free(w);
    json_t *args = json_array();
    json_array_append_new(args, json_string(name)); /* $0 of the wrapper */
    for (int i = 0; i < in->nargs; i++) {
        json_array_append_new(args, json_string(in->args[i]));
    }
    json_object_set_new(spec, "command", cmd);
    json_object_set_new(spec, "args", args);
    return 0;
}

int gp_sbatch_build(const gp_sbatch_in *in, json_t **spec, json_t **warnings, char *err, size_t cap)
{
    *spec = *warnings = NULL;
    opts o = {.warnings = json_array(), .strict = in->strict, .err = err, .cap = cap};
    json_t *s = json_object(), *dirs = NULL;
    int rc = o.warnings && s ? gather(&o, in, &dirs) : fail(err, cap, "out of memory");
    rc = rc < 0 ? rc : fill(&o, in, s);
    json_decref(dirs);
    if (rc < 0) {
        json_decref(s);
        json_decref(o.warnings);
        return -1;
    }
    *spec = s;
    *warnings = o.warnings;
    return 0;
}

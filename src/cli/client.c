/*
 * Server and token resolution, API calls and the config file (see client.h).
 *
 * The config file is a few "key: value" lines; '#' starts a comment line and unknown keys are
 * ignored, so that later versions can add keys. It holds a secret: it is written 0600 through
 * a temporary file in the same directory and renamed over the old one, so a reader never sees
 * half a file and the secret is never readable by others, not even for a moment.
 */
#include "cli/client.h"

#include "cli/cli.h"
#include "cli/cliconfig.h"
#include "net/http_client.h"
#include "net/servers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct gp_cli_conn {
    gp_http_client *http;
    gp_cli_target t;
    char refusal[1024]; /* the last call's refusal message; "" none */
    int status;         /* the last call's HTTP status; 0: no answer */
    int quiet;          /* a refusal with this status is not printed (0: none) */
    bool minimal;       /* POSTs send Prefer: return=minimal */
    char raw[512];      /* the last refusal without a message: "SERVER answered HTTP N: BODY" */
};

/* Reads a whole small text file into buf. 0, or -1 with errno. */
static int read_small(const char *path, char *buf, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return -1;
    }
    *len = fread(buf, 1, cap - 1, f);
    int err = ferror(f);
    fclose(f);
    buf[*len] = '\0';
    if (err) {
        errno = EIO;
        return -1;
    }
    return 0;
}

int gp_cli_config_path(char *buf, size_t cap)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') {
        n = snprintf(buf, cap, "%s/gpupool/config", xdg);
    } else if (home && home[0]) {
        n = snprintf(buf, cap, "%s/.config/gpupool/config", home);
    } else {
        return -1;
    }
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* A server list as used: each entry normalised (servers.h: a bare host:port gets "http://",
 * trailing '/' go). 0, or GP_EXIT_USAGE with the message printed. An empty list stays empty. */
static int normalize_servers(char *list, size_t cap, const char *what)
{
    gp_servers s;
    gp_diag d;
    gp_diag_clear(&d);
    if (!list[0]) {
        return 0;
    }
    if (gp_servers_parse(list, &s, &d) < 0) {
        fprintf(stderr, "gpupool: %s: %s\n", what, d.msg);
        return GP_EXIT_USAGE;
    }
    if (gp_servers_format(&s, list, cap) < 0) {
        fprintf(stderr, "gpupool: %s: too long\n", what);
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* Whether every server of list is one of those of cfg (both normalised). */
static int servers_within(const char *list, const char *cfg)
{
    gp_servers a, b;
    if (gp_servers_parse(list, &a, NULL) < 0 || gp_servers_parse(cfg, &b, NULL) < 0) {
        return 0;
    }
    for (int i = 0; i < a.n; i++) {
        if (gp_servers_find(&b, a.url[i]) < 0) {
            return 0;
        }
    }
    return 1;
}

/* Reads the config file into *cfg; no file is an empty config. 0, or GP_EXIT_USAGE (message
 * printed) for a file that does not parse. */
static int read_config(gp_cli_config *cfg)
{
    char path[1024];
    gp_diag d;
    gp_diag_clear(&d);
    gp_cli_config_clear(cfg);
    if (gp_cli_config_path(path, sizeof(path)) < 0) {
        return 0;
    }
    if (gp_cli_config_load(path, cfg, &d) < 0) {
        fprintf(stderr, "gpupool: %s\n", d.msg);
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* Reads the token in the file at path into t->token; what names the file in messages. */
static int token_from_file(const char *path, const char *what, gp_cli_target *t)
{
    char text[1024];
    size_t len;
    if (read_small(path, text, sizeof(text), &len) < 0) {
        fprintf(stderr, "gpupool: %s %s: %s\n", what, path, strerror(errno));
        return GP_EXIT_USAGE;
    }
    size_t line = strcspn(text, "\r\n");
    if (gp_cli_trimmed(text, line, t->token, sizeof(t->token)) < 0 || !t->token[0]) {
        fprintf(stderr, "gpupool: %s %s: no token in the file\n", what, path);
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* Sets one field from a string; a value too long is a usage error. */
static int set_field(char *out, size_t cap, const char *value, const char *what)
{
    if (gp_cli_trimmed(value, strlen(value), out, cap) < 0) {
        fprintf(stderr, "gpupool: %s: too long\n", what);
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* The defaults the config file gives: the context's (--context, GPUPOOL_CONTEXT, then
 * current-context), or else what login saved. base->token is left empty for a context: its
 * token file is named in *token_file, read only when the token is used. */
static int config_base(const gp_cli_args *a, gp_cli_target *base, char *token_file, size_t cap)
{
    gp_cli_config *cfg = malloc(sizeof(*cfg)); /* read_config clears what it uses */
    const char *flag = gp_cli_arg(a, "context"), *env = getenv("GPUPOOL_CONTEXT");
    int rc = cfg ? read_config(cfg) : GP_EXIT_FAILURE;
    *base = (gp_cli_target){0};
    token_file[0] = '\0';
    const char *want = flag                     ? flag
                       : env && env[0]          ? env
                       : cfg && cfg->current[0] ? cfg->current
                                                : NULL;
    const gp_cli_context *ctx = rc == 0 && want ? gp_cli_config_find(cfg, want) : NULL;
    if (rc == 0 && want && !ctx) {
        fprintf(stderr, "gpupool: %s: no context \"%s\" (see 'gpupool config get-contexts')\n",
                flag            ? "--context"
                : env && env[0] ? "GPUPOOL_CONTEXT"
                                : "current-context",
                want);
        rc = GP_EXIT_USAGE;
    } else if (rc == 0 && ctx) {
        snprintf(base->server, sizeof(base->server), "%s", ctx->server);
        snprintf(base->cacert, sizeof(base->cacert), "%s", ctx->cacert);
        snprintf(token_file, cap, "%s", ctx->token_file);
        snprintf(base->context, sizeof(base->context), "%s", ctx->name);
    } else if (rc == 0) {
        snprintf(base->server, sizeof(base->server), "%s", cfg->server);
        snprintf(base->token, sizeof(base->token), "%s", cfg->token);
    }
    free(cfg);
    return rc;
}

int gp_cli_resolve(const gp_cli_args *a, gp_cli_target *t)
{
    *t = (gp_cli_target){0};
    const char *server = gp_cli_arg(a, "server"), *token = gp_cli_arg(a, "token");
    const char *file = gp_cli_arg(a, "token-file"), *cacert = gp_cli_arg(a, "cacert");
    int rc = 0;
    if (token && file) {
        return gp_cli_usage_error(a->spec, "--token and --token-file exclude each other");
    }
    if (!server && (server = getenv("GPUPOOL_SERVER")) && !server[0]) {
        server = NULL;
    }
    if (!token && !file && (token = getenv("GPUPOOL_TOKEN")) && !token[0]) {
        token = NULL;
    }
    if (server) {
        rc = set_field(t->server, sizeof(t->server), server, "server URL");
    }
    if (rc == 0 && file) {
        rc = token_from_file(file, "--token-file", t);
    } else if (rc == 0 && token) {
        rc = set_field(t->token, sizeof(t->token), token, "token");
    }
    if (rc == 0 && cacert) {
        rc = set_field(t->cacert, sizeof(t->cacert), cacert, "--cacert");
    }
    if (rc != 0) {
        return rc;
    }
    /* The config file's token (and CA) go only to the config file's server (the context's):
     * never hand a secret to a server named on the command line for another purpose. */
    gp_cli_target cfg;
    char cfg_token_file[1024];
    if ((rc = config_base(a, &cfg, cfg_token_file, sizeof(cfg_token_file))) ||
        (rc = normalize_servers(cfg.server, sizeof(cfg.server), "the config file's server")) ||
        (rc = normalize_servers(t->server, sizeof(t->server), "server"))) {
        return rc;
    }
    if (!t->server[0]) {
        snprintf(t->server, sizeof(t->server), "%s",
                 cfg.server[0] ? cfg.server : GP_CLI_DEFAULT_SERVER);
    }
    int same = cfg.server[0] && servers_within(t->server, cfg.server);
    snprintf(t->context, sizeof(t->context), "%s", same ? cfg.context : "");
    if (!file && !token && same && cfg_token_file[0]) {
        rc = token_from_file(cfg_token_file, "the context's token-file", t);
    } else if (!file && !token && same && cfg.token[0]) {
        snprintf(t->token, sizeof(t->token), "%s", cfg.token);
    }
    if (!cacert && same) {
        snprintf(t->cacert, sizeof(t->cacert), "%s", cfg.cacert);
    }
    return rc;
}

int gp_cli_connect_to(const gp_cli_target *t, gp_cli_conn **out)
{
    *out = NULL;
    gp_cli_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        fprintf(stderr, "gpupool: out of memory\n");
        return GP_EXIT_FAILURE;
    }
    c->t = *t;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_cli_http_new(&c->t, &c->http);
    if (rc != 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int gp_cli_connect(const gp_cli_args *a, gp_cli_conn **out)
{
    gp_cli_target t;
    *out = NULL;
    int rc = gp_cli_resolve(a, &t);
    return rc != 0 ? rc : gp_cli_connect_to(&t, out);
}

int gp_cli_http_new(const gp_cli_target *t, gp_http_client **out)
{
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_http_client_new_servers(t->server, t->token[0] ? t->token : NULL, out, &d);
    if (rc < 0) {
        fprintf(stderr, "gpupool: server %s: %s\n", t->server, d.msg);
        return rc == GP_EINVAL ? GP_EXIT_USAGE : GP_EXIT_FAILURE;
    }
    if (t->cacert[0] && access(t->cacert, R_OK) < 0) {
        fprintf(stderr, "gpupool: --cacert %s: %s\n", t->cacert, strerror(errno));
        gp_http_client_free(*out);
        *out = NULL;
        return GP_EXIT_USAGE;
    }
    if (t->cacert[0] && gp_http_client_set_ca_file(*out, t->cacert) < 0) {
        fprintf(stderr, "gpupool: out of memory\n");
        gp_http_client_free(*out);
        *out = NULL;
        return GP_EXIT_FAILURE;
    }
    return 0;
}

void gp_cli_conn_free(gp_cli_conn *c)
{
    if (c) {
        gp_http_client_free(c->http);
        free(c);
    }
}

const char *gp_cli_server(const gp_cli_conn *c)
{
    return c->t.server;
}

/* Records the refusal of a call (the API's {"error": {"message"}}, or what there is) and
 * prints it unless its status is the quiet one. */
static void refused(gp_cli_conn *c, int status, const char *body, size_t len)
{
    json_t *doc = json_loadb(body, len, 0, NULL);
    json_t *msg = json_object_get(json_object_get(doc, "error"), "message");
    if (json_is_string(msg)) {
        snprintf(c->refusal, sizeof(c->refusal), "%s", json_string_value(msg));
    } else {
        snprintf(c->raw, sizeof(c->raw), "%s answered HTTP %d: %.200s",
                 gp_http_client_server(c->http), status, len ? body : "(no body)");
    }
    json_decref(doc);
    if (status != c->quiet) {
        gp_cli_print_refusal(c);
    }
}

void gp_cli_print_refusal(const gp_cli_conn *c)
{
    fprintf(stderr, "gpupool: %s\n", c->refusal[0] ? c->refusal : c->raw);
    if (c->status == 401 && !c->t.token[0]) {
        fputs("gpupool: no token: give --token or --token-file, set GPUPOOL_TOKEN, or run "
              "'gpupool login'\n",
              stderr);
    }
}

int gp_cli_call_raw(gp_cli_conn *c, const char *method, const char *path, const char *body,
                    size_t len, const char *content_type, const char *idempotency_key,
                    json_t **resp)
{
    char ctype[128], key[300];
    const char *headers[4] = {NULL, NULL, NULL, NULL};
    int nh = 0;
    if (c->minimal && strcmp(method, "POST") == 0) {
        headers[nh++] = "Prefer: return=minimal";
    }
    if (content_type) {
        snprintf(ctype, sizeof(ctype), "Content-Type: %s", content_type);
        headers[nh++] = ctype;
    }
    if (idempotency_key) {
        snprintf(key, sizeof(key), "Idempotency-Key: %s", idempotency_key);
        headers[nh++] = key;
    }
    if (resp) {
        *resp = NULL;
    }
    c->refusal[0] = '\0';
    c->raw[0] = '\0';
    c->status = 0;
    gp_diag d;
    gp_diag_clear(&d);
    int status = 0;
    char *text = NULL;
    size_t tlen = 0;
    if (gp_http_call(c->http, method, path, body, len, headers, &status, &text, &tlen, &d) < 0) {
        fprintf(stderr, "gpupool: %s\n", d.msg);
        return GP_EXIT_FAILURE;
    }
    int rc = GP_EXIT_OK;
    c->status = status;
    if (status < 200 || status > 299) {
        refused(c, status, text, tlen);
        rc = GP_EXIT_FAILURE;
    } else if (resp) {
        json_error_t err;
        *resp = tlen ? json_loadb(text, tlen, 0, &err) : json_null();
        if (!*resp) {
            fprintf(stderr, "gpupool: %s%s: invalid JSON in the answer: %s\n",
                    gp_http_client_server(c->http), path, err.text);
            rc = GP_EXIT_FAILURE;
        }
    }
    free(text);
    return rc;
}

const char *gp_cli_last_refusal(const gp_cli_conn *c)
{
    return c->refusal;
}

int gp_cli_last_status(const gp_cli_conn *c)
{
    return c->status;
}

void gp_cli_prefer_minimal(gp_cli_conn *c, bool minimal)
{
    c->minimal = minimal;
}

void gp_cli_quiet_status(gp_cli_conn *c, int status)
{
    c->quiet = status;
}

int gp_cli_call(gp_cli_conn *c, const char *method, const char *path, const json_t *body,
                json_t **resp)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (body && !text) {
        fprintf(stderr, "gpupool: out of memory\n");
        return GP_EXIT_FAILURE;
    }
    int rc = gp_cli_call_raw(c, method, path, text, text ? strlen(text) : 0,
                             text ? "application/json" : NULL, NULL, resp);
    free(text);
    return rc;
}

int gp_cli_escape(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || strchr("-._~", ch);
        if (n + (plain ? 1 : 3) >= cap) {
            return -1;
        }
        if (plain) {
            out[n++] = (char)ch;
        } else {
            out[n++] = '%';
            out[n++] = hex[ch >> 4];
            out[n++] = hex[ch & 15];
        }
    }
    if (cap == 0) {
        return -1;
    }
    out[n] = '\0';
    return 0;
}

int gp_cli_path(char *buf, size_t cap, const char *base, const char *name, const char *suffix)
{
    char esc[1024];
    if (gp_cli_escape(name, esc, sizeof(esc)) < 0) {
        return -1;
    }
    int n = snprintf(buf, cap, "%s/%s%s%s", base, esc, suffix ? "/" : "", suffix ? suffix : "");
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int gp_cli_get_doc(gp_cli_conn *c, const char *base, const char *name, json_t **doc)
{
    char path[1200];
    *doc = NULL;
    if (gp_cli_path(path, sizeof(path), base, name, NULL) < 0) {
        fprintf(stderr, "gpupool: name too long: %.40s...\n", name);
        return GP_EXIT_USAGE;
    }
    return gp_cli_call(c, "GET", path, NULL, doc);
}

/* mkdir -p of the parent directories of path, mode 0700. */
static int make_parents(const char *path, gp_diag *d)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
            return gp_diag_set(d, GP_EIO, "cannot create %s: %s", dir, strerror(errno));
        }
        *p = '/';
    }
    return 0;
}

int gp_cli_config_load(const char *path, gp_cli_config *cfg, gp_diag *d)
{
    char *text = malloc(GP_CLI_CONFIG_MAX);
    size_t len;
    gp_cli_config_clear(cfg);
    if (!text) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = 0;
    if (read_small(path, text, GP_CLI_CONFIG_MAX, &len) < 0) {
        rc = errno == ENOENT ? 0 : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    } else if (gp_cli_config_parse(text, cfg, d) < 0) {
        char msg[sizeof(d->msg)];
        snprintf(msg, sizeof(msg), "%s", d->msg);
        rc = gp_diag_set(d, GP_EINVAL, "%s: %s", path, msg);
    }
    free(text);
    return rc;
}

int gp_cli_config_save(const char *path, const gp_cli_config *cfg, gp_diag *d)
{
    char tmp[1100];
    if (strlen(path) >= 1024) {
        return gp_diag_set(d, GP_EINVAL, "config path too long");
    }
    char *text = malloc(GP_CLI_CONFIG_MAX);
    int len = text ? gp_cli_config_format(cfg, text, GP_CLI_CONFIG_MAX) : -1;
    int rc = len < 0 ? gp_diag_set(d, GP_ENOMEM, "the config does not fit") : make_parents(path, d);
    if (rc < 0) {
        free(text);
        return rc;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        free(text);
        return gp_diag_set(d, GP_EIO, "cannot create %s: %s", tmp, strerror(errno));
    }
    int bad = fchmod(fd, 0600) < 0 || write(fd, text, (size_t)len) != len || fsync(fd) < 0;
    bad |= close(fd) != 0;
    free(text);
    if (bad || rename(tmp, path) < 0) {
        rc = gp_diag_set(d, GP_EIO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return rc;
    }
    return 0;
}

int gp_cli_config_write(const char *path, const gp_cli_target *t, gp_diag *d)
{
    gp_cli_config *cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = gp_cli_config_load(path, cfg, d);
    if (rc == 0) {
        snprintf(cfg->server, sizeof(cfg->server), "%s", t->server);
        snprintf(cfg->token, sizeof(cfg->token), "%s", t->token);
        rc = gp_cli_config_save(path, cfg, d);
    }
    free(cfg);
    return rc;
}

int gp_cli_get_pages(gp_cli_conn *c, const char *path, const char *query, int all, json_t *items,
                     int *more)
{
    char url[1400], cursor[64] = "";
    *more = 0;
    for (;;) {
        snprintf(url, sizeof(url), "%s%s%s%s%s", path, query,
                 cursor[0] ? (query[0] ? "&" : "?") : "", cursor[0] ? "after=" : "", cursor);
        json_t *page;
        int rc = gp_cli_call(c, "GET", url, NULL, &page);
        if (rc != 0) {
            return rc;
        }
        json_array_extend(items, json_object_get(page, "items"));
        const char *next = json_string_value(json_object_get(page, "next"));
        *more = next != NULL;
        if (next) {
            snprintf(cursor, sizeof(cursor), "%.40s", next);
        }
        json_decref(page);
        if (!next || !all) {
            return 0;
        }
    }
}

int gp_cli_query_add(char *q, size_t cap, const char *key, const char *value)
{
    char esc[512];
    size_t used = strlen(q);
    if (gp_cli_escape(value, esc, sizeof(esc)) < 0) {
        return -1;
    }
    int n = snprintf(q + used, cap - used, "%s%s=%s", used ? "&" : "?", key, esc);
    return n > 0 && (size_t)n < cap - used ? 0 : -1;
}

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
};

/* Copies s into out without surrounding blanks. 0, or -1 when it does not fit. */
static int copy_trimmed(const char *s, size_t len, char *out, size_t cap)
{
    while (len > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len > 0 && strchr(" \t\r\n", s[len - 1])) {
        len--;
    }
    if (len >= cap) {
        return -1;
    }
    memcpy(out, s, len);
    out[len] = '\0';
    return 0;
}

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

/* Reads the config file into *cfg (fields left empty when absent); no file is no error. */
static void read_config(gp_cli_target *cfg)
{
    char path[1024], text[8192];
    size_t len;
    *cfg = (gp_cli_target){0};
    if (gp_cli_config_path(path, sizeof(path)) < 0 ||
        read_small(path, text, sizeof(text), &len) < 0) {
        return;
    }
    for (char *save, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':');
        if (line[0] == '#' || !colon) {
            continue;
        }
        const char *value = colon + 1;
        size_t klen = (size_t)(colon - line);
        if (klen == 6 && strncmp(line, "server", 6) == 0) {
            copy_trimmed(value, strlen(value), cfg->server, sizeof(cfg->server));
        } else if (klen == 5 && strncmp(line, "token", 5) == 0) {
            copy_trimmed(value, strlen(value), cfg->token, sizeof(cfg->token));
        }
    }
}

static int token_from_file(const char *path, gp_cli_target *t)
{
    char text[1024];
    size_t len;
    if (read_small(path, text, sizeof(text), &len) < 0) {
        fprintf(stderr, "gpupool: --token-file %s: %s\n", path, strerror(errno));
        return GP_EXIT_USAGE;
    }
    size_t line = strcspn(text, "\r\n");
    if (copy_trimmed(text, line, t->token, sizeof(t->token)) < 0 || !t->token[0]) {
        fprintf(stderr, "gpupool: --token-file %s: no token in the file\n", path);
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* Sets one field from a string; a value too long is a usage error. */
static int set_field(char *out, size_t cap, const char *value, const char *what)
{
    if (copy_trimmed(value, strlen(value), out, cap) < 0) {
        fprintf(stderr, "gpupool: %s: too long\n", what);
        return GP_EXIT_USAGE;
    }
    return 0;
}

int gp_cli_resolve(const gp_cli_args *a, gp_cli_target *t)
{
    *t = (gp_cli_target){0};
    const char *server = gp_cli_arg(a, "server"), *token = gp_cli_arg(a, "token");
    const char *file = gp_cli_arg(a, "token-file");
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
        rc = token_from_file(file, t);
    } else if (rc == 0 && token) {
        rc = set_field(t->token, sizeof(t->token), token, "token");
    }
    if (rc != 0) {
        return rc;
    }
    /* The config file's token goes only to the config file's server: never hand a secret to
     * a server named on the command line for another purpose. */
    gp_cli_target cfg;
    read_config(&cfg);
    if ((rc = normalize_servers(cfg.server, sizeof(cfg.server), "the config file's server")) ||
        (rc = normalize_servers(t->server, sizeof(t->server), "server"))) {
        return rc;
    }
    if (!t->server[0]) {
        snprintf(t->server, sizeof(t->server), "%s",
                 cfg.server[0] ? cfg.server : GP_CLI_DEFAULT_SERVER);
    }
    if (!file && !token && cfg.token[0] && servers_within(t->server, cfg.server)) {
        snprintf(t->token, sizeof(t->token), "%s", cfg.token);
    }
    return 0;
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
    int rc =
        gp_http_client_new_servers(c->t.server, c->t.token[0] ? c->t.token : NULL, &c->http, &d);
    if (rc < 0) {
        fprintf(stderr, "gpupool: server %s: %s\n", c->t.server, d.msg);
        free(c);
        return rc == GP_EINVAL ? GP_EXIT_USAGE : GP_EXIT_FAILURE;
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

/* Prints the error of a refused call: the API's {"error": {"message"}}, or what there is. */
static void print_refusal(const gp_cli_conn *c, int status, const char *body, size_t len)
{
    json_t *doc = json_loadb(body, len, 0, NULL);
    json_t *msg = json_object_get(json_object_get(doc, "error"), "message");
    if (json_is_string(msg)) {
        fprintf(stderr, "gpupool: %s\n", json_string_value(msg));
    } else {
        fprintf(stderr, "gpupool: %s answered HTTP %d: %.200s\n", gp_http_client_server(c->http),
                status, len ? body : "(no body)");
    }
    if (status == 401 && !c->t.token[0]) {
        fputs("gpupool: no token: give --token or --token-file, set GPUPOOL_TOKEN, or run "
              "'gpupool login'\n",
              stderr);
    }
    json_decref(doc);
}

int gp_cli_call_raw(gp_cli_conn *c, const char *method, const char *path, const char *body,
                    size_t len, const char *content_type, const char *idempotency_key,
                    json_t **resp)
{
    char ctype[128], key[300];
    const char *headers[3] = {NULL, NULL, NULL};
    int nh = 0;
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
    if (status < 200 || status > 299) {
        print_refusal(c, status, text, tlen);
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

int gp_cli_config_write(const char *path, const gp_cli_target *t, gp_diag *d)
{
    char tmp[1100];
    if (strlen(path) >= 1024) {
        return gp_diag_set(d, GP_EINVAL, "config path too long");
    }
    int rc = make_parents(path, d);
    if (rc < 0) {
        return rc;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return gp_diag_set(d, GP_EIO, "cannot create %s: %s", tmp, strerror(errno));
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return gp_diag_set(d, GP_EIO, "cannot write %s: %s", tmp, strerror(errno));
    }
    fprintf(f, "# written by gpupool login\nserver: %s\ntoken: %s\n", t->server, t->token);
    int bad = fchmod(fd, 0600) < 0 || fflush(f) != 0 || fsync(fd) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) < 0) {
        rc = gp_diag_set(d, GP_EIO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return rc;
    }
    return 0;
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

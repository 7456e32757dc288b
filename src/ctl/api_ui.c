/*
 * The web dashboard's static files: GET /ui/ answers index.html and GET /ui/{path...} a file of
 * the directory ui.dir names (by default the installed layout beside the executable,
 * BINDIR/../share/gpupool/ui, which is where the build puts the dashboard: BUILD/bin/gpupoold
 * finds BUILD/share/gpupool/ui). GET / and GET /ui redirect to /ui/.
 *
 * No token is needed: the files are the same for everyone and hold no data; the page asks the
 * API for everything it shows, with the user's token.
 *
 * What a path may name: a regular file under the directory, after every symbolic link is
 * resolved (realpath). A path with "..", a backslash, a control character, an empty segment or
 * a segment starting with '.' is refused without looking at the disk, and so is anything that
 * resolves outside the directory or is not a regular file: all answer the same 404. A path that
 * names nothing and whose last segment has no '.' ("/ui/jobs/42": a page of the dashboard, not
 * a file) answers index.html, so that a page reloaded or opened from a link works; a missing
 * file with an extension is a 404.
 *
 * Every answer carries X-Content-Type-Options: nosniff, X-Frame-Options: DENY, Referrer-Policy:
 * no-referrer and a Content-Security-Policy that lets the page load scripts, styles, images,
 * fonts and API calls from this origin only (images also as data: URLs), and nothing inline.
 * index.html is sent with Cache-Control: no-cache; a file whose name carries a content hash
 * (see hashed()) may be cached for a year; others are revalidated (no-cache).
 *
 * The directory is looked up on every request (a realpath and a stat): a dashboard built or
 * replaced while gpupoold runs is served at once, and nothing is cached in the controller.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "ctl/api.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UI_MAX_FILE (64 * 1024 * 1024) /* bytes: a larger file is refused (500) */

#define UI_CSP                                                                                     \
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "                    \
    "form-action 'self'; frame-ancestors 'none'"

typedef struct ui_type {
    const char *ext; /* with its dot */
    const char *type;
} ui_type;

static const ui_type ui_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".webmanifest", "application/manifest+json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},
    {".webp", "image/webp"},
    {".ico", "image/x-icon"},
    {".woff2", "font/woff2"},
    {".woff", "font/woff"},
    {".ttf", "font/ttf"},
    {".txt", "text/plain; charset=utf-8"},
    {".wasm", "application/wasm"},
    {NULL, NULL},
};

/* The content type of a file name, by its extension (case-sensitive, as build tools write
 * them); application/octet-stream when unknown. */
static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    for (const ui_type *t = ui_types; dot && t->ext; t++) {
        if (strcmp(dot, t->ext) == 0) {
            return t->type;
        }
    }
    return "application/octet-stream";
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Whether a file name carries a content hash, as bundlers name their output
 * ("index-B7x_3a9Q.js", "app.3f9a2c1b.css"): before the extension, after a '-' or '.', at least
 * 8 characters of letters, digits, '_' and '-' with at least one digit and one letter. A name
 * like "gpupool-dashboard.json" does not (no digit): when unsure, the file is revalidated. */
static bool hashed(const char *base)
{
    const char *ext = strrchr(base, '.');
    if (!ext || ext == base) {
        return false;
    }
    for (const char *p = base; p < ext; p++) {
        if (*p != '-' && *p != '.') {
            continue;
        }
        size_t n = 0;
        bool digit = false, letter = false, ok = true;
        for (const char *q = p + 1; q < ext && ok; q++, n++) {
            ok = is_alnum(*q) || *q == '_' || *q == '-';
            digit |= *q >= '0' && *q <= '9';
            letter |= (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z');
        }
        if (ok && n >= 8 && digit && letter) {
            return true;
        }
    }
    return false;
}

/* Whether rel (the path under /ui/, already percent-decoded) may name a file: relative, no
 * "..", no backslash or control character, no empty segment, no segment starting with '.'. */
static bool safe_rel(const char *rel)
{
    if (!rel[0] || strstr(rel, "..")) {
        return false;
    }
    bool seg_start = true;
    for (const unsigned char *p = (const unsigned char *)rel; *p; p++) {
        if (*p == '\\' || *p < 0x20 || *p == 0x7f) {
            return false;
        }
        if (seg_start && (*p == '/' || *p == '.')) {
            return false; /* an empty segment ("//", a leading '/') or a hidden name */
        }
        seg_start = *p == '/';
    }
    return true;
}

static void security_headers(gp_http_response *resp)
{
    gp_http_response_add_header(resp, "X-Content-Type-Options", "nosniff");
    gp_http_response_add_header(resp, "X-Frame-Options", "DENY");
    gp_http_response_add_header(resp, "Referrer-Policy", "no-referrer");
    gp_http_response_add_header(resp, "Content-Security-Policy", UI_CSP);
}

static void not_found(api_req *rq, const char *why)
{
    api_error(rq, GP_ENOENT, "%s", why);
    security_headers(rq->resp);
    gp_http_response_add_header(rq->resp, "Cache-Control", "no-cache");
}

int api_ui_dir(const gp_ctl_config *cfg, char *dir, size_t cap, char *why, size_t whycap)
{
    const char *conf = cfg->ui.dir;
    if (strcmp(conf, "none") == 0) {
        snprintf(why, whycap, "the dashboard is off (ui.dir: none)");
        return GP_ENOENT;
    }
    char base[PATH_MAX + 32];
    if (conf[0]) {
        snprintf(base, sizeof(base), "%s", conf);
    } else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0) {
            snprintf(why, whycap, "the dashboard is not built: cannot find gpupoold's directory");
            return GP_ENOENT;
        }
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
        }
        snprintf(base, sizeof(base), "%s/../share/gpupool/ui", exe);
    }
    char *real = realpath(base, NULL);
    struct stat sb;
    char index[PATH_MAX + 16];
    if (real) {
        snprintf(index, sizeof(index), "%s/index.html", real);
    }
    if (!real || stat(index, &sb) != 0 || !S_ISREG(sb.st_mode) || strlen(real) >= cap) {
        snprintf(why, whycap,
                 "the dashboard is not built: no index.html in %s (build it with CMake where npm "
                 "is installed, or set ui.dir)",
                 base);
        free(real);
        return GP_ENOENT;
    }
    snprintf(dir, cap, "%s", real);
    free(real);
    return 0;
}

/* Reads the regular file at path (a real path) into a malloc'd buffer. 0, GP_ENOENT (missing,
 * not a regular file, unreadable), GP_ETOOBIG or GP_ENOMEM. */
static int read_file(const char *path, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (fd >= 0) {
            close(fd);
        }
        return GP_ENOENT;
    }
    if (sb.st_size > UI_MAX_FILE) {
        close(fd);
        return GP_ETOOBIG;
    }
    size_t size = (size_t)sb.st_size, used = 0;
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return GP_ENOMEM;
    }
    while (used < size) {
        ssize_t n = read(fd, buf + used, size - used);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; /* shrunk while read: what was there is sent */
        }
        used += (size_t)n;
    }
    close(fd);
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return 0;
}

/* Answers the file at real (under the dashboard's directory), named name for its type. */
static void send_file(api_req *rq, const char *real, const char *name, bool index)
{
    char *body = NULL;
    size_t len = 0;
    int rc = read_file(real, &body, &len);
    if (rc == GP_ENOENT) {
        not_found(rq, "no such file in the dashboard");
        return;
    }
    if (rc < 0) {
        api_error(rq, rc == GP_ETOOBIG ? GP_EINTERNAL : rc, "%s: cannot be sent (%s)", name,
                  rc == GP_ETOOBIG ? "larger than 64 MiB" : "out of memory");
        security_headers(rq->resp);
        return;
    }
    gp_http_response_set_body(rq->resp, 200, content_type(name), body, len);
    security_headers(rq->resp);
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    gp_http_response_add_header(rq->resp, "Cache-Control",
                                !index && hashed(base) ? "public, max-age=31536000, immutable"
                                                       : "no-cache");
}

static void send_index(api_req *rq, const char *dir)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/index.html", dir);
    send_file(rq, path, "index.html", true);
}

static void redirect(api_req *rq, int status)
{
    gp_http_response_set_body(rq->resp, status, NULL, NULL, 0);
    gp_http_response_add_header(rq->resp, "Location", "/ui/");
}

void api_ui_root(api_req *rq)
{
    if (strcmp(rq->g->cfg->ui.dir, "none") == 0) {
        api_error(rq, GP_ENOENT, "/: the dashboard is off (ui.dir: none); the API is under /v1");
        return;
    }
    redirect(rq, 302);
}

void api_ui_redirect(api_req *rq)
{
    redirect(rq, 301);
}

void api_ui_index(api_req *rq)
{
    char dir[PATH_MAX], why[PATH_MAX + 128];
    if (api_ui_dir(rq->g->cfg, dir, sizeof(dir), why, sizeof(why)) < 0) {
        not_found(rq, why);
        return;
    }
    send_index(rq, dir);
}

void api_ui_file(api_req *rq)
{
    const char *rel = rq->params[0];
    char dir[PATH_MAX], why[PATH_MAX + 128];
    if (!safe_rel(rel)) {
        not_found(rq, "no such file in the dashboard");
        return;
    }
    if (api_ui_dir(rq->g->cfg, dir, sizeof(dir), why, sizeof(why)) < 0) {
        not_found(rq, why);
        return;
    }
    char path[PATH_MAX * 2];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    char *real = realpath(path, NULL);
    if (!real) {
        const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
        if ((errno == ENOENT || errno == ENOTDIR) && !strchr(base, '.')) {
            send_index(rq, dir); /* a page of the dashboard: its script shows it */
        } else {
            not_found(rq, "no such file in the dashboard");
        }
        return;
    }
    size_t n = strlen(dir);
    if (strncmp(real, dir, n) != 0 || real[n] != '/') {
        not_found(rq, "no such file in the dashboard"); /* a link out of the directory */
    } else {
        send_file(rq, real, rel, false);
    }
    free(real);
}

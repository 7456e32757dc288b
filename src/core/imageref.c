/*
 * OCI image references (gpupool/imageref.h): a hand-written recogniser of the grammar docker's
 * reference package defines, without regular expressions, and the normal form.
 *
 * The text is split from the right: the digest after the first '@' (no other part may hold
 * one), the tag after the last ':' that follows the last '/', and what is left is the name. The
 * name's first component is the registry only when it looks like a host (a '.' or a ':', or
 * "localhost"), so "team/img" is a Docker Hub path and "127.0.0.1:5000/team/img" is not.
 */
#include "gpupool/imageref.h"

#include <stdio.h>
#include <string.h>

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool hex_lower(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* A path component: lower-case alphanumerics, separated inside by '.', '_', "__" or a run of
 * '-'. */
static bool path_component_ok(const char *s, size_t n)
{
    if (n == 0 || !lower_alnum(s[0])) {
        return false;
    }
    size_t i = 0;
    while (i < n) {
        if (lower_alnum(s[i])) {
            i++;
            continue;
        }
        size_t j = i + 1;
        if (s[i] == '_' && j < n && s[j] == '_') {
            j++;
        } else if (s[i] == '-') {
            while (j < n && s[j] == '-') {
                j++;
            }
        } else if (s[i] != '.' && s[i] != '_') {
            return false;
        }
        if (j >= n || !lower_alnum(s[j])) {
            return false;
        }
        i = j;
    }
    return true;
}

/* A DNS label: letters and digits, with inner '-'. */
static bool label_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !alnum(s[0]) || !alnum(s[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!alnum(s[i]) && s[i] != '-') {
            return false;
        }
    }
    return true;
}

/* A host name of labels, or an IPv6 address in brackets (hex digits, ':' and '.'). */
static bool host_ok(const char *s, size_t n)
{
    if (n >= 2 && s[0] == '[') {
        if (s[n - 1] != ']' || n < 4) {
            return false;
        }
        int colons = 0;
        for (size_t i = 1; i + 1 < n; i++) {
            char c = s[i];
            bool ok = hex_lower(c) || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
            if (!ok) {
                return false;
            }
            colons += c == ':';
        }
        return colons >= 2;
    }
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!label_ok(s + start, i - start)) {
                return false;
            }
            start = i + 1;
        }
    }
    return true;
}

/* HOST[:PORT] with PORT 1..65535. */
static bool registry_ok(const char *s, size_t n)
{
    size_t host = n;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        host = close ? (size_t)(close - s) + 1 : n;
    } else {
        const char *colon = memchr(s, ':', n);
        host = colon ? (size_t)(colon - s) : n;
    }
    if (!host_ok(s, host)) {
        return false;
    }
    if (host == n) {
        return true;
    }
    if (s[host] != ':' || n - host - 1 < 1 || n - host - 1 > 5) {
        return false;
    }
    long port = 0;
    for (size_t i = host + 1; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        port = port * 10 + (s[i] - '0');
    }
    return port >= 1 && port <= 65535;
}

/* The normal form of a valid registry of n bytes into out (GP_IMAGE_REGISTRY_MAX bytes). */
static void registry_normal(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (; k < n && k + 1 < GP_IMAGE_REGISTRY_MAX; k++) {
        char c = s[k];
        out[k] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    out[k] = '\0';
    if (strcmp(out, "index.docker.io") == 0 || strcmp(out, "registry-1.docker.io") == 0) {
        snprintf(out, GP_IMAGE_REGISTRY_MAX, "%s", GP_IMAGE_DOCKER_HUB);
    }
}

static bool tag_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > GP_IMAGE_TAG_MAX || !(alnum(s[0]) || s[0] == '_')) {
        return false;
    }
    for (size_t i = 1; i < n; i++) {
        if (!alnum(s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-') {
            return false;
        }
    }
    return true;
}

static bool digest_ok(const char *s)
{
    size_t want = strncmp(s, "sha256:", 7) == 0 ? 64 : strncmp(s, "sha512:", 7) == 0 ? 128 : 0;
    if (want == 0 || strlen(s + 7) != want) {
        return false;
    }
    for (const char *p = s + 7; *p; p++) {
        if (!hex_lower(*p)) {
            return false;
        }
    }
    return true;
}

/* Whether the first component of a name (n bytes, a '/' after it) is a registry. */
static bool looks_like_registry(const char *s, size_t n)
{
    return memchr(s, '.', n) || memchr(s, ':', n) || (n == 9 && strncmp(s, "localhost", 9) == 0);
}

/* Checks the '/'-separated components of path. */
static int check_path(const char *path, const char *field, gp_diag *d)
{
    const char *p = path;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (!path_component_ok(p, n)) {
            if (n == 0) {
                return gp_diag_set(d, GP_EINVAL, "%s: the path has an empty component", field);
            }
            return gp_diag_set(d, GP_EINVAL,
                               "%s: path component \"%.*s\" must be lower-case letters and digits, "
                               "separated by '.', '_', '__' or '-'",
                               field, (int)(n > 64 ? 64 : n), p);
        }
        if (!slash) {
            return 0;
        }
        p = slash + 1;
    }
}

/* The name (registry and path) of buf into r. */
static int parse_name(char *buf, const char *field, gp_image_ref *r, gp_diag *d)
{
    const char *path = buf;
    char *first = strchr(buf, '/');
    if (first && looks_like_registry(buf, (size_t)(first - buf))) {
        size_t n = (size_t)(first - buf);
        if (n >= GP_IMAGE_REGISTRY_MAX || !registry_ok(buf, n)) {
            return gp_diag_set(d, GP_EINVAL,
                               "%s: registry \"%.*s\" must be a host name or address, with an "
                               "optional :PORT",
                               field, (int)(n > 64 ? 64 : n), buf);
        }
        registry_normal(buf, n, r->registry);
        path = first + 1;
    } else {
        snprintf(r->registry, sizeof(r->registry), "%s", GP_IMAGE_DOCKER_HUB);
    }
    if (!*path) {
        return gp_diag_set(d, GP_EINVAL, "%s: the image's path is missing", field);
    }
    int rc = check_path(path, field, d);
    if (rc < 0) {
        return rc;
    }
    bool library = strcmp(r->registry, GP_IMAGE_DOCKER_HUB) == 0 && !strchr(path, '/');
    size_t total = strlen(r->registry) + 1 + (library ? 8 : 0) + strlen(path);
    if (total > GP_IMAGE_NAME_MAX) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s: the name (registry and path) is longer than %d characters", field,
                           GP_IMAGE_NAME_MAX);
    }
    size_t off = library ? 8 : 0; /* total bounds both: they fit */
    memcpy(r->path, "library/", off);
    memcpy(r->path + off, path, strlen(path) + 1);
    return 0;
}

int gp_image_ref_parse(const char *text, const char *field, gp_image_ref *out, gp_diag *d)
{
    size_t len = strlen(text);
    if (len == 0 || len >= GP_IMAGE_REF_MAX) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be 1 to %d characters", field,
                           GP_IMAGE_REF_MAX - 1);
    }
    gp_image_ref r;
    memset(&r, 0, sizeof(r));
    char buf[GP_IMAGE_REF_MAX];
    memcpy(buf, text, len + 1);
    char *at = strchr(buf, '@');
    if (at) {
        *at = '\0';
        if (!digest_ok(at + 1)) {
            return gp_diag_set(d, GP_EINVAL,
                               "%s: the digest after '@' must be sha256: and 64 lower-case hex "
                               "digits (or sha512: and 128)",
                               field);
        }
        snprintf(r.digest, sizeof(r.digest), "%s", at + 1);
    }
    char *slash = strrchr(buf, '/');
    char *colon = strrchr(slash ? slash : buf, ':');
    if (colon) {
        *colon = '\0';
        if (!tag_ok(colon + 1)) {
            return gp_diag_set(d, GP_EINVAL,
                               "%s: the tag after ':' must be a letter, digit or '_', then at most "
                               "%d letters, digits, '_', '.' or '-'",
                               field, GP_IMAGE_TAG_MAX - 1);
        }
        snprintf(r.tag, sizeof(r.tag), "%s", colon + 1);
        r.tag_given = true;
    }
    int rc = parse_name(buf, field, &r, d);
    if (rc < 0) {
        return rc;
    }
    if (!r.tag_given && !r.digest[0]) {
        snprintf(r.tag, sizeof(r.tag), "latest");
    }
    *out = r;
    return 0;
}

int gp_image_ref_format(const gp_image_ref *r, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/%s%s%s%s%s", r->registry, r->path, r->tag[0] ? ":" : "", r->tag,
                     r->digest[0] ? "@" : "", r->digest);
    if (n < 0 || (size_t)n >= cap) {
        if (cap > 0) {
            buf[0] = '\0';
        }
        return GP_ERANGE;
    }
    return n;
}

int gp_image_ref_normalize(const char *text, const char *field, char *buf, size_t cap, gp_diag *d)
{
    gp_image_ref r;
    int rc = gp_image_ref_parse(text, field, &r, d);
    if (rc == 0 && gp_image_ref_format(&r, buf, cap) < 0) {
        rc = gp_diag_set(d, GP_ERANGE, "%s: longer than %zu characters once normalised", field,
                         cap - 1);
    }
    return rc;
}

int gp_image_registry_normalize(const char *text, const char *field, char *buf, size_t cap,
                                gp_diag *d)
{
    size_t n = strlen(text);
    if (n == 0 || n >= GP_IMAGE_REGISTRY_MAX || !registry_ok(text, n)) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s: must be a registry's host name or address, with an optional "
                           ":PORT (as in 127.0.0.1:5000 or registry.example.com)",
                           field);
    }
    char normal[GP_IMAGE_REGISTRY_MAX];
    registry_normal(text, n, normal);
    if (strlen(normal) >= cap) {
        return gp_diag_set(d, GP_ERANGE, "%s: longer than %zu characters", field, cap - 1);
    }
    memcpy(buf, normal, strlen(normal) + 1);
    return 0;
}

gp_pull_policy gp_image_ref_default_pull(const gp_image_ref *r)
{
    return strcmp(r->tag, "latest") == 0 && !r->digest[0] ? GP_PULL_ALWAYS : GP_PULL_IF_NOT_PRESENT;
}

static const char *const pull_names[] = {"Always", "IfNotPresent", "Never"};

const char *gp_pull_policy_name(gp_pull_policy p)
{
    return p >= GP_PULL_ALWAYS && p <= GP_PULL_NEVER ? pull_names[p] : NULL;
}

gp_pull_policy gp_pull_policy_parse(const char *name)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, pull_names[i]) == 0) {
            return (gp_pull_policy)i;
        }
    }
    return GP_PULL_DEFAULT;
}

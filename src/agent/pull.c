/*
 * Image pulls (contract in pull.h): the pure decisions and the small podman/skopeo questions.
 * The pull itself runs inside the supervisor's loop (sup_podman.c), which takes stop signals
 * while it goes.
 */
#define _DEFAULT_SOURCE /* DT_DIR */

#include "agent/pull.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <jansson.h>

#include "agent/cmd.h"

bool gp_pull_needed(gp_run_pull policy, bool present)
{
    return policy == GP_RUN_PULL_ALWAYS || (policy == GP_RUN_PULL_IF_NOT_PRESENT && !present);
}

void gp_pull_message(const char *text, char *buf, size_t cap)
{
    const char *best = NULL, *p = text;
    while ((p = strstr(p, "Error: "))) {
        if (p == text || p[-1] == '\n') {
            best = p + strlen("Error: ");
        }
        p++;
    }
    if (best) {
        size_t len = strcspn(best, "\r\n");
        snprintf(buf, cap, "%.*s", (int)len, best);
    } else {
        gp_cmd_last_line(text, buf, cap);
    }
    if (!buf[0]) {
        snprintf(buf, cap, "no message");
    }
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Base64 of n bytes of in into a new string. */
static char *base64(const unsigned char *in, size_t n)
{
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    for (size_t i = 0; out && i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? b64[v & 63] : '=';
    }
    if (out) {
        *o = '\0';
    }
    return out;
}

char *gp_pull_authfile_text(const gp_run_spec *s)
{
    if (!s->auth_registry || !s->auth_username || !s->auth_password) {
        return NULL;
    }
    size_t n = strlen(s->auth_username) + strlen(s->auth_password) + 2;
    char *pair = malloc(n);
    if (!pair) {
        return NULL;
    }
    snprintf(pair, n, "%s:%s", s->auth_username, s->auth_password);
    char *enc = base64((const unsigned char *)pair, n - 1);
    memset(pair, 0, n);
    free(pair);
    json_t *doc = enc ? json_pack("{s:{s:{s:s}}}", "auths", s->auth_registry, "auth", enc) : NULL;
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    if (enc) {
        memset(enc, 0, strlen(enc));
    }
    free(enc);
    json_decref(doc);
    return text;
}

int64_t gp_pull_manifest_bytes(const char *raw, const char *arch, char *digest, size_t cap)
{
    json_t *o = json_loads(raw, 0, NULL);
    int64_t total = 0;
    size_t i;
    json_t *e;
    digest[0] = '\0';
    if (json_is_array(json_object_get(o, "manifests"))) {
        json_array_foreach(json_object_get(o, "manifests"), i, e)
        {
            const char *os = "", *a = "", *dg = "";
            json_unpack(e, "{s?s, s?{s?s, s?s}}", "digest", &dg, "platform", "os", &os,
                        "architecture", &a);
            if (!digest[0] && strcmp(os, "linux") == 0 && strcmp(a, arch) == 0) {
                snprintf(digest, cap, "%s", dg);
            }
        }
        json_decref(o);
        return -1;
    }
    json_t *config = json_object_get(json_object_get(o, "config"), "size");
    total =
        json_is_integer(config) && json_integer_value(config) > 0 ? json_integer_value(config) : 0;
    json_array_foreach(json_object_get(o, "layers"), i, e)
    {
        json_t *size = json_object_get(e, "size");
        total +=
            json_is_integer(size) && json_integer_value(size) > 0 ? json_integer_value(size) : 0;
    }
    json_decref(o);
    return total;
}

static int64_t dir_bytes(const char *dir, int depth)
{
    DIR *d = depth < 8 ? opendir(dir) : NULL;
    int64_t total = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
            continue;
        }
        char path[4200];
        struct stat sb;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (lstat(path, &sb) != 0) {
            continue;
        }
        total += S_ISDIR(sb.st_mode)   ? dir_bytes(path, depth + 1)
                 : S_ISREG(sb.st_mode) ? (int64_t)sb.st_size
                                       : 0;
    }
    if (d) {
        closedir(d);
    }
    return total;
}

int64_t gp_pull_dir_bytes(const char *dir)
{
    return dir_bytes(dir, 0);
}

bool gp_pull_present(const char *podman, const char *image)
{
    char *argv[] = {(char *)podman, "image", "exists", (char *)image, NULL};
    gp_cmd_result r;
    gp_diag d;
    bool yes = gp_cmd_run(argv, NULL, 60000, 0, &r, &d) == 0 && r.status == 0;
    gp_cmd_result_fini(&r);
    return yes;
}

void gp_pull_image_id(const char *podman, const char *image, char *buf, size_t cap)
{
    char *argv[] = {(char *)podman, "image", "inspect", "--format", "{{.Id}}", (char *)image, NULL};
    gp_cmd_result r;
    gp_diag d;
    buf[0] = '\0';
    if (gp_cmd_run(argv, NULL, 60000, 256, &r, &d) == 0 && r.status == 0 && r.out) {
        size_t len = strcspn(r.out, "\r\n");
        if (len > 0) {
            snprintf(buf, cap, "%s%.*s", strncmp(r.out, "sha256:", 7) ? "sha256:" : "", (int)len,
                     r.out);
        }
    }
    gp_cmd_result_fini(&r);
}

/* skopeo inspect --raw of ref; the manifest's text (malloc'd) or NULL. */
static char *raw_manifest(const char *ref, const char *authfile)
{
    char *argv[10] = {"skopeo", "inspect", "--raw"};
    int n = 3;
    const char *conf = getenv("CONTAINERS_REGISTRIES_CONF"); /* podman's; skopeo has a flag */
    if (conf && conf[0]) {
        argv[n++] = "--registries-conf";
        argv[n++] = (char *)conf;
    }
    if (authfile) {
        argv[n++] = "--authfile";
        argv[n++] = (char *)authfile;
    }
    argv[n++] = (char *)ref;
    argv[n] = NULL;
    gp_cmd_result r;
    gp_diag d;
    char *text = NULL;
    if (gp_cmd_run(argv, NULL, 30000, 4 << 20, &r, &d) == 0 && r.status == 0 && r.out) {
        text = r.out;
        r.out = NULL;
    }
    gp_cmd_result_fini(&r);
    return text;
}

/* This machine's architecture as OCI names it. */
static const char *oci_arch(void)
{
    struct utsname u;
    if (uname(&u) != 0) {
        return "amd64";
    }
    return strcmp(u.machine, "x86_64") == 0    ? "amd64"
           : strcmp(u.machine, "aarch64") == 0 ? "arm64"
           : strcmp(u.machine, "ppc64le") == 0 ? "ppc64le"
                                               : "amd64";
}

int64_t gp_pull_remote_bytes(const char *image, const char *authfile)
{
    char ref[1200], digest[200];
    snprintf(ref, sizeof(ref), "docker://%s", image);
    char *raw = raw_manifest(ref, authfile);
    int64_t total = raw ? gp_pull_manifest_bytes(raw, oci_arch(), digest, sizeof(digest)) : 0;
    free(raw);
    if (total < 0 && digest[0]) {
        /* the platform's manifest, by digest in the same repository */
        char repo[1200];
        snprintf(repo, sizeof(repo), "%s", ref);
        char *at = strchr(repo, '@'), *slash = strrchr(repo, '/'), *colon = strrchr(repo, ':');
        if (at) {
            *at = '\0';
        } else if (colon && slash && colon > slash) {
            *colon = '\0';
        }
        snprintf(ref, sizeof(ref), "%.990s@%.200s", repo, digest);
        raw = raw_manifest(ref, authfile);
        total = raw ? gp_pull_manifest_bytes(raw, oci_arch(), digest, sizeof(digest)) : 0;
        free(raw);
    }
    return total > 0 ? total : 0;
}

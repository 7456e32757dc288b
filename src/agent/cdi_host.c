/*
 * The agent's CDI spec on the host (see cdi_host.h): the driver's files, the MIG capability
 * table, and the spec written atomically into STATE/cdi (and a publish directory).
 */
#define _DEFAULT_SOURCE /* realpath */
#include "agent/cdi_host.h"
#include "agent/cdi_driver.h"

#include "base/log.h"
#include "base/textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most read from the ld cache listing and the MIG table. */
#define MAX_TEXT (8 << 20)

/* ---- reading ---- */

/* The first 64 bytes of path into hdr; how many (0 when it cannot be read). */
static size_t elf_header(const char *path, unsigned char *hdr)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t n = fd < 0 ? -1 : read(fd, hdr, 64);
    if (fd >= 0) {
        close(fd);
    }
    return n > 0 ? (size_t)n : 0;
}

/* What `ldconfig -p -C cache` prints; NULL when it cannot be run. */
static char *ldcache_listing(const char *cache)
{
    static const char *const tools[] = {"/sbin/ldconfig", "/usr/sbin/ldconfig", NULL};
    const char *tool = NULL;
    for (int i = 0; tools[i] && !tool; i++) {
        tool = access(tools[i], X_OK) == 0 ? tools[i] : NULL;
    }
    int fds[2];
    if (!tool || pipe(fds) != 0) {
        return NULL;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(fds[1], 1);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        execl(tool, "ldconfig", "-p", "-C", cache, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char *text = pid > 0 ? gp_text_read_fd(fds[0], MAX_TEXT, NULL) : NULL;
    close(fds[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return text;
}

/* ---- the driver's files ---- */

typedef struct found {
    gp_cdi_mount *out;
    int cap, n;
    unsigned char own[64]; /* the agent's own ELF header */
    size_t nown;
    bool overflow;
} found;

/* Adds host (resolved) at container unless container is there already. */
static void add(found *f, const char *host, const char *container)
{
    for (int i = 0; i < f->n; i++) {
        if (strcmp(f->out[i].container, container) == 0) {
            return;
        }
    }
    if (f->n == f->cap) {
        f->overflow = true;
        return;
    }
    if (strlen(host) < GP_CDI_PATH_MAX && strlen(container) < GP_CDI_PATH_MAX) {
        snprintf(f->out[f->n].host, GP_CDI_PATH_MAX, "%s", host);
        snprintf(f->out[f->n].container, GP_CDI_PATH_MAX, "%s", container);
        f->n++;
    }
}

/* A file at path for the agent's machine: its resolved path into real. */
static bool usable(const found *f, const char *path, char *real)
{
    unsigned char hdr[64];
    struct stat st;
    if (path[0] != '/' || !realpath(path, real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        return false;
    }
    size_t n = elf_header(real, hdr);
    return gp_cdi_elf_same(hdr, n, f->own, f->nown);
}

static void libraries_of_cache(found *f, const char *ld_cache, const char *version)
{
    char *text = ldcache_listing(ld_cache);
    const char *cur = text;
    char name[256], path[PATH_MAX], real[PATH_MAX];
    while (text && gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)) == 1) {
        if (gp_cdi_driver_link(name) && usable(f, path, real) &&
            gp_cdi_driver_library(gp_cdi_basename(real), version)) {
            add(f, real, path);
        }
    }
    free(text);
}

static void programs_of_path(found *f)
{
    const char *env = getenv("PATH");
    char *dirs = strdup(env && *env ? env : "/usr/bin:/usr/sbin:/bin:/sbin");
    for (int p = 0; dirs && gp_cdi_driver_programs[p]; p++) {
        char *save = NULL, path[PATH_MAX], real[PATH_MAX];
        char *copy = strdup(dirs);
        for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
             dir = strtok_r(NULL, ":", &save)) {
            int len = snprintf(path, sizeof(path), "%s/%s", dir, gp_cdi_driver_programs[p]);
            if (len > 0 && (size_t)len < sizeof(path) && access(path, X_OK) == 0 &&
                usable(f, path, real)) {
                add(f, real, path);
                break;
            }
        }
        free(copy);
    }
    free(dirs);
}

int gp_cdi_driver_mounts(const gp_nvml *h, const char *driver_version, const char *ld_cache,
                         gp_cdi_mount *out, int cap, int *n, char *why, size_t why_cap, gp_diag *d)
{
    *n = 0;
    char loaded[PATH_MAX], real[PATH_MAX];
    found f = {out, cap, 0, {0}, 0, false};
    f.nown = elf_header("/proc/self/exe", f.own);
    int lrc = gp_nvml_loaded_file(h, loaded, sizeof(loaded));
    if (lrc == 0 && loaded[0] != '/' && getcwd(real, sizeof(real))) {
        /* a relative path given: the same name from the agent's directory */
        char rel[PATH_MAX];
        snprintf(rel, sizeof(rel), "%s", strncmp(loaded, "./", 2) == 0 ? loaded + 2 : loaded);
        lrc = snprintf(loaded, sizeof(loaded), "%s/%s", real, rel) < (int)sizeof(loaded) ? 0 : -1;
    }
    if (lrc < 0 || !usable(&f, loaded, real) ||
        strncmp(gp_cdi_basename(real), "libnvidia-ml.so.", 16) != 0 ||
        !gp_cdi_driver_library(gp_cdi_basename(real), driver_version)) {
        if (why) {
            snprintf(why, why_cap,
                     "the NVML library loaded (%s) is not the driver's libnvidia-ml.so.%s",
                     gp_nvml_path(h), driver_version);
        }
        return 0;
    }
    add(&f, real, loaded);
    libraries_of_cache(&f, ld_cache && *ld_cache ? ld_cache : GP_CDI_LD_CACHE, driver_version);
    programs_of_path(&f);
    *n = f.n;
    if (f.overflow) {
        return gp_diag_set(d, GP_ERANGE, "more than %d driver files to mount", cap);
    }
    return 0;
}

/* ---- writing ---- */

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Opens dir (made 0755 when missing): a directory owned by us, not a link, without group or
 * other write permission. The descriptor, or -1 with d set. */
static int open_dir(const char *dir, gp_diag *d)
{
    bool made = mkdir(dir, 0755) == 0;
    if (!made && errno != EEXIST) {
        gp_diag_set(d, GP_EIO, "%s: %s", dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        gp_diag_set(d, GP_EIO, "%s: %s", dir, strerror(errno));
    } else if (st.st_uid != geteuid()) {
        gp_diag_set(d, GP_EIO, "%s: owned by uid %ld, not the agent's", dir, (long)st.st_uid);
    } else if ((made || (st.st_mode & 022)) &&
               fchmod(fd, made ? 0755 : (st.st_mode & 07755)) != 0) {
        gp_diag_set(d, GP_EIO, "%s: chmod: %s", dir, strerror(errno));
    } else {
        return fd;
    }
    if (fd >= 0) {
        close(fd);
    }
    return -1;
}

int gp_cdi_write(const char *dir, const char *text, gp_diag *d)
{
    int dfd = open_dir(dir, d);
    if (dfd < 0) {
        return GP_EIO;
    }
    char tmp[64];
    snprintf(tmp, sizeof(tmp), ".%s.tmp.%ld", GP_CDI_FILE, (long)getpid());
    unlinkat(dfd, tmp, 0);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd < 0 || fchmod(fd, 0644) != 0 || write_all(fd, text, strlen(text)) != 0 ||
        fsync(fd) != 0) {
        rc = gp_diag_set(d, GP_EIO, "%s/%s: %s", dir, tmp, strerror(errno));
    }
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        rc = gp_diag_set(d, GP_EIO, "%s/%s: %s", dir, tmp, strerror(errno));
    }
    if (rc == 0 && renameat(dfd, tmp, dfd, GP_CDI_FILE) != 0) {
        rc = gp_diag_set(d, GP_EIO, "%s/%s: %s", dir, GP_CDI_FILE, strerror(errno));
    }
    if (rc < 0) {
        unlinkat(dfd, tmp, 0);
    } else if (fsync(dfd) != 0) {
        rc = gp_diag_set(d, GP_EIO, "%s: fsync: %s", dir, strerror(errno));
    }
    close(dfd);
    return rc;
}

/* Removes DIR/GP_CDI_FILE; a missing one is fine. */
static int remove_spec(const char *dir, gp_diag *d)
{
    char path[GP_CDI_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", dir, GP_CDI_FILE);
    if (unlink(path) != 0 && errno != ENOENT) {
        return gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    }
    return 0;
}

/* ---- the writer ---- */

struct gp_cdi_writer {
    char dir[GP_CDI_PATH_MAX];     /* STATE/cdi */
    char publish[GP_CDI_PATH_MAX]; /* "" none */
    char dev_root[GP_CDI_PATH_MAX];
    char mig_minors[GP_CDI_PATH_MAX];
    gp_cdi_mount mounts[GP_CDI_MAX_MOUNTS];
    int nmounts;
    char *text;    /* the spec last written; NULL none yet */
    char *skipped; /* the devices left out last time, as logged */
    json_t *names; /* {name: true} of the spec last written */
    gp_nvml_inv *inv;
};

static const char *or_default(const char *v, const char *def)
{
    return v && *v ? v : def;
}

/* The publish directory of option publish, given whether NVML is the driver's. */
static int publish_dir(const char *publish, bool driver, char *out, gp_diag *d)
{
    publish = or_default(publish, "auto");
    if (strcmp(publish, "auto") == 0) {
        snprintf(out, GP_CDI_PATH_MAX, "%s", driver ? GP_CDI_PUBLISH_DIR : "");
    } else if (strcmp(publish, "none") == 0) {
        out[0] = '\0';
    } else if (publish[0] != '/' || strlen(publish) >= GP_CDI_PATH_MAX) {
        return gp_diag_set(d, GP_EINVAL,
                           "cdi publish: auto, none or an absolute directory, not \"%s\"", publish);
    } else {
        snprintf(out, GP_CDI_PATH_MAX, "%s", publish);
    }
    return 0;
}

int gp_cdi_writer_new(const gp_cdi_options *o, const char *state_dir, const gp_nvml *h,
                      const gp_nvml_inv *inv, gp_cdi_writer **out, gp_diag *d)
{
    *out = NULL;
    const char *dev_root = or_default(o->dev_root, GP_CDI_DEV_ROOT);
    if (dev_root[0] != '/' || strlen(dev_root) > GP_CDI_PATH_MAX - 64) {
        return gp_diag_set(d, GP_EINVAL, "dev root: an absolute directory, not \"%s\"", dev_root);
    }
    gp_cdi_writer *w = calloc(1, sizeof(*w));
    if (!w || !(w->names = json_object())) {
        free(w);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    char abs[PATH_MAX]; /* absolute: podman's --cdi-spec-dir takes it from any directory */
    const char *base = realpath(state_dir, abs) ? abs : state_dir;
    size_t len = strlen(base);
    if (len + sizeof("/cdi") > sizeof(w->dir)) {
        gp_cdi_writer_free(w);
        return gp_diag_set(d, GP_ERANGE, "state dir: longer than %d bytes", GP_CDI_PATH_MAX - 8);
    }
    memcpy(w->dir, base, len);
    memcpy(w->dir + len, "/cdi", sizeof("/cdi"));
    snprintf(w->dev_root, sizeof(w->dev_root), "%s", dev_root);
    snprintf(w->mig_minors, sizeof(w->mig_minors), "%s",
             or_default(o->mig_minors, GP_CDI_MIG_MINORS));
    char why[GP_CDI_PATH_MAX + 128] = "";
    gp_diag md;
    gp_diag_clear(&md);
    if (gp_cdi_driver_mounts(h, inv->driver_version, o->ld_cache, w->mounts, GP_CDI_MAX_MOUNTS,
                             &w->nmounts, why, sizeof(why), &md) < 0) {
        GP_LOG(GP_LOG_WARN, "cdi", "driver files: %s (the first %d are mounted)", md.msg,
               w->nmounts);
    }
    if (why[0]) {
        GP_LOG(GP_LOG_INFO, "cdi", "no driver files mounted: %s", why);
    }
    int rc = publish_dir(o->publish, why[0] == '\0', w->publish, d);
    if (rc < 0) {
        gp_cdi_writer_free(w);
        return rc;
    }
    for (int i = 0; i < w->nmounts; i++) {
        GP_LOG(GP_LOG_DEBUG, "cdi", "mount %s at %s", w->mounts[i].host, w->mounts[i].container);
    }
    *out = w;
    return 0;
}

void gp_cdi_writer_free(gp_cdi_writer *w)
{
    if (w) {
        free(w->text);
        free(w->skipped);
        json_decref(w->names);
        free(w->inv);
        free(w);
    }
}

static const char *reason_of(json_t *skipped, size_t i)
{
    return json_string_value(json_object_get(json_array_get(skipped, i), "reason"));
}

/* The devices of skipped[i..] left out for skipped[i]'s reason, comma-separated, into names;
 * false when an earlier entry has that reason (its line names them already). */
static bool devices_for(json_t *skipped, size_t i, char *names, size_t cap)
{
    const char *reason = reason_of(skipped, i);
    for (size_t k = 0; k < i; k++) {
        if (strcmp(reason_of(skipped, k), reason) == 0) {
            return false;
        }
    }
    size_t len = 0;
    names[0] = '\0';
    for (size_t k = i; k < json_array_size(skipped) && len < cap; k++) {
        if (strcmp(reason_of(skipped, k), reason) == 0) {
            const char *dev =
                json_string_value(json_object_get(json_array_get(skipped, k), "device"));
            len += (size_t)snprintf(names + len, cap - len, "%s%s", len ? "," : "", dev);
        }
    }
    return true;
}

/* Logs the devices left out, one line per reason, when the list changed since last time. */
static void log_skipped(gp_cdi_writer *w, json_t *skipped)
{
    char *text = json_dumps(skipped, JSON_COMPACT);
    if (!text || (w->skipped && strcmp(text, w->skipped) == 0)) {
        free(text);
        return;
    }
    char names[2048];
    for (size_t i = 0; i < json_array_size(skipped); i++) {
        if (devices_for(skipped, i, names, sizeof(names))) {
            GP_LOG(GP_LOG_WARN, "cdi", "left out of the spec: reason=\"%s\" devices=%s",
                   reason_of(skipped, i), names);
        }
    }
    free(w->skipped);
    w->skipped = text;
}

/* Writes (or, without devices, removes) the spec in STATE/cdi and the publish directory. */
static int store(const gp_cdi_writer *w, const char *text, bool empty, gp_diag *d)
{
    int rc = empty ? remove_spec(w->dir, d) : gp_cdi_write(w->dir, text, d);
    if (rc == 0 && w->publish[0]) {
        rc = empty ? remove_spec(w->publish, d) : gp_cdi_write(w->publish, text, d);
    }
    return rc;
}

/* Remembers what was written: its text, its device names, the inventory. */
static int remember(gp_cdi_writer *w, char *text, json_t *devices, const gp_nvml_inv *inv)
{
    if (!w->inv && !(w->inv = malloc(sizeof(*w->inv)))) {
        free(text);
        return GP_ENOMEM;
    }
    *w->inv = *inv;
    free(w->text);
    w->text = text;
    json_object_clear(w->names);
    size_t i;
    json_t *dev;
    json_array_foreach(devices, i, dev)
    {
        json_object_set_new(w->names, json_string_value(json_object_get(dev, "name")), json_true());
    }
    return 0;
}

/* The spec of inv with the MIG capability table read now from mig_minors. */
static int make_spec(const char *dev_root, const char *mig_minors, const gp_cdi_mount *mounts,
                     int nmounts, const gp_nvml_inv *inv, json_t **spec, json_t **skipped,
                     gp_diag *d)
{
    gp_cdi_mig_caps *caps = malloc(sizeof(*caps));
    char *table = caps ? gp_text_read(mig_minors, MAX_TEXT, NULL) : NULL;
    bool have_caps = table && gp_cdi_mig_caps_parse(table, caps) > 0;
    free(table);
    gp_cdi_host host = {dev_root, have_caps ? caps : NULL, mounts, nmounts};
    int rc = caps ? gp_cdi_spec(inv, &host, spec, skipped, d)
                  : gp_diag_set(d, GP_ENOMEM, "out of memory");
    free(caps);
    return rc;
}

int gp_cdi_writer_update(gp_cdi_writer *w, const gp_nvml_inv *inv, gp_diag *d)
{
    json_t *spec = NULL, *skipped = NULL;
    int rc = make_spec(w->dev_root, w->mig_minors, w->mounts, w->nmounts, inv, &spec, &skipped, d);
    if (rc < 0) {
        return rc;
    }
    log_skipped(w, skipped);
    json_decref(skipped);
    json_t *devices = json_object_get(spec, "devices");
    bool empty = json_array_size(devices) == 0;
    char *text = json_dumps(spec, JSON_INDENT(2));
    if (!text) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    } else if (w->text && strcmp(w->text, text) == 0) {
        free(text);
        *w->inv = *inv;
    } else if ((rc = store(w, text, empty, d)) == 0) {
        GP_LOG(GP_LOG_INFO, "cdi", "spec=%s/%s devices=%zu mounts=%d%s%s", w->dir, GP_CDI_FILE,
               json_array_size(devices), w->nmounts, w->publish[0] ? " published=" : "",
               w->publish);
        rc = remember(w, text, devices, inv) == 0 ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
    } else {
        free(text);
    }
    json_decref(spec);
    return rc;
}

bool gp_cdi_writer_has(const gp_cdi_writer *w, const char *name)
{
    return w && w->text && json_object_get(w->names, name) != NULL;
}

const gp_nvml_inv *gp_cdi_writer_inventory(const gp_cdi_writer *w)
{
    return w ? w->inv : NULL;
}

const char *gp_cdi_writer_dir(const gp_cdi_writer *w)
{
    return w->dir;
}

const char *gp_cdi_writer_published(const gp_cdi_writer *w)
{
    return w->publish;
}

/* ---- gpupool-agent cdi ---- */

/* The spec of the host as the agent would write it, into out_dir or printed to out. */
static int generate_with(const gp_cdi_options *o, const gp_nvml *h, const char *out_dir, FILE *out,
                         gp_diag *d)
{
    gp_nvml_inv *inv = malloc(sizeof(*inv));
    gp_cdi_mount *mounts = calloc(GP_CDI_MAX_MOUNTS, sizeof(*mounts));
    int rc = inv && mounts ? gp_nvml_inventory(h, inv, d) : gp_diag_set(d, GP_ENOMEM, "no memory");
    int n = 0;
    char why[GP_CDI_PATH_MAX + 128] = "";
    if (rc == 0) {
        rc = gp_cdi_driver_mounts(h, inv->driver_version, o->ld_cache, mounts, GP_CDI_MAX_MOUNTS,
                                  &n, why, sizeof(why), d);
    }
    json_t *spec = NULL, *skipped = NULL;
    if (rc == 0) {
        rc = make_spec(or_default(o->dev_root, GP_CDI_DEV_ROOT),
                       or_default(o->mig_minors, GP_CDI_MIG_MINORS), mounts, n, inv, &spec,
                       &skipped, d);
    }
    char *text = rc == 0 ? json_dumps(spec, JSON_INDENT(2)) : NULL;
    if (rc == 0 && !text) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    } else if (rc == 0 && out_dir) {
        rc = gp_cdi_write(out_dir, text, d);
    } else if (rc == 0 && (fputs(text, out) == EOF || fputc('\n', out) == EOF)) {
        rc = gp_diag_set(d, GP_EIO, "cannot write the spec");
    }
    size_t i;
    json_t *sk;
    json_array_foreach(skipped, i, sk)
    {
        fprintf(stderr, "gpupool-agent cdi: left out %s: %s\n",
                json_string_value(json_object_get(sk, "device")),
                json_string_value(json_object_get(sk, "reason")));
    }
    if (rc == 0 && why[0]) {
        fprintf(stderr, "gpupool-agent cdi: no driver files mounted: %s\n", why);
    }
    free(text);
    json_decref(spec);
    json_decref(skipped);
    free(mounts);
    free(inv);
    return rc;
}

int gp_cdi_generate(const gp_cdi_options *o, const char *nvml_library, const char *out_dir,
                    FILE *out, gp_diag *d)
{
    const char *root = or_default(o->dev_root, GP_CDI_DEV_ROOT);
    if (root[0] != '/') {
        return gp_diag_set(d, GP_EINVAL, "--dev-root: an absolute directory, not \"%s\"", root);
    }
    if (out_dir && out_dir[0] != '/') {
        return gp_diag_set(d, GP_EINVAL, "--output-dir: an absolute directory, not \"%s\"",
                           out_dir);
    }
    gp_nvml *h = NULL;
    int rc = gp_nvml_open(nvml_library, &h, d);
    if (rc == 0) {
        rc = generate_with(o, h, out_dir, out, d);
        gp_nvml_close(h);
    }
    return rc;
}

/*
 * Jobs' secret environment values (secrets.h): the key file, sealing at submission, and what
 * an answer shows of them.
 */
#include "ctl/secrets.h"
#include "ctl/txn.h"

#include "base/log.h"
#include "net/seal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK_KEY  "secret_key_check"
#define CHECK_AD   "gpupool secret key check"
#define CHECK_TEXT "gpupool"

/* The associated data binding a sealed env value to its tenant, job and variable. */
static void env_ad(char *buf, size_t cap, int64_t tenant_id, const char *job, const char *var)
{
    snprintf(buf, cap, "gpupool env v1\ntenant=%lld\njob=%s\nvar=%s", (long long)tenant_id, job,
             var);
}

static void key_path(const gp_ctl_config *cfg, char *buf, size_t cap)
{
    if (cfg->secrets.key_file[0]) {
        snprintf(buf, cap, "%s", cfg->secrets.key_file);
    } else {
        snprintf(buf, cap, "%s/secret.key", cfg->data_dir);
    }
}

/* Reads the key of path: 0, GP_ENOENT (no file), or GP_EIO/GP_EINVAL naming it. */
static int read_key(const char *path, unsigned char *key, gp_diag *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT
                   ? GP_ENOENT
                   : gp_diag_set(d, GP_EIO, "secrets.key_file %s: %s", path, strerror(errno));
    }
    char text[160];
    ssize_t n = read(fd, text, sizeof(text) - 1);
    struct stat sb;
    bool open_to_others = fstat(fd, &sb) == 0 && (sb.st_mode & 077);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    int rc =
        n > 0 && gp_seal_key_parse(text, key) == 0
            ? 0
            : gp_diag_set(d, GP_EINVAL,
                          "secrets.key_file %s: must hold 64 hexadecimal digits (the key)", path);
    gp_seal_wipe(text, sizeof(text));
    if (rc == 0 && open_to_others) {
        GP_LOG(GP_LOG_WARN, "ctl", "secrets.key_file %s: readable by others; chmod 600 it", path);
    }
    return rc;
}

/* Creates path with a new key (0600; never over an existing file). */
static int create_key(const char *path, unsigned char *key, gp_diag *d)
{
    char hex[GP_SEAL_KEY_HEX + 1];
    if (gp_seal_key_generate(hex) < 0) {
        return gp_diag_set(d, GP_EIO, "secrets.key_file %s: no random key", path);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        gp_seal_wipe(hex, sizeof(hex));
        return gp_diag_set(d, GP_EIO, "secrets.key_file %s: %s", path, strerror(errno));
    }
    strcat(hex, "\n");
    bool ok = write(fd, hex, strlen(hex)) == (ssize_t)strlen(hex) && fsync(fd) == 0;
    ok &= close(fd) == 0;
    int rc = ok ? gp_seal_key_parse(hex, key) : GP_EIO;
    gp_seal_wipe(hex, sizeof(hex));
    if (rc < 0) {
        unlink(path);
        return gp_diag_set(d, GP_EIO, "secrets.key_file %s: cannot write it", path);
    }
    GP_LOG(GP_LOG_INFO, "ctl", "secrets.key_file %s: created a new key", path);
    return 0;
}

static int put_check(ctl_txn *tx, void *arg, gp_diag *d)
{
    return gp_store_meta_set(tx->store, CHECK_KEY, arg, d);
}

/* Stores the check value of key (the pool's first start with a key). */
static int store_check(gpupoold *g, const unsigned char *key, gp_diag *d)
{
    char *sealed = NULL;
    int rc = gp_seal(key, CHECK_AD, CHECK_TEXT, strlen(CHECK_TEXT), &sealed, d);
    if (rc == 0) {
        rc = ctl_txn_run(g, "the secrets key's check value", CTL_TXN_STORE, put_check, sealed, NULL,
                         d);
    }
    free(sealed);
    return rc;
}

/* The key of the pool (see ctl_secrets_start); with may_write false, a missing key file is not
 * created and a pool without a check value gets none. */
static int secrets_open(gpupoold *g, bool may_write, gp_diag *d)
{
    char path[GP_CTL_PATH_MAX + 32], check[256];
    key_path(g->cfg, path, sizeof(path));
    int have = gp_store_meta_get(g->store, CHECK_KEY, check, sizeof(check), d);
    if (have < 0 && have != GP_ENOENT) {
        return have;
    }
    gp_diag_clear(d);
    int rc = read_key(path, g->secret_key, d);
    if (rc == GP_ENOENT && have == 0) {
        return gp_diag_set(d, GP_EIO,
                           "secrets.key_file %s: missing, and this pool's secret values are "
                           "sealed with a key: copy the pool's key file there (every controller "
                           "of a pool uses the same one)",
                           path);
    }
    if (rc == GP_ENOENT && !may_write) {
        gp_diag_clear(d);
        return 0; /* a new pool: its leader makes the key */
    }
    if (rc == GP_ENOENT) {
        rc = create_key(path, g->secret_key, d);
    }
    if (rc < 0) {
        return rc;
    }
    if (have == 0) {
        char *plain = NULL;
        size_t len = 0;
        gp_diag od;
        rc = gp_unseal(g->secret_key, CHECK_AD, check, &plain, &len, &od);
        free(plain);
        if (rc < 0) {
            return gp_diag_set(d, GP_EPERM,
                               "secrets.key_file %s: not the key this pool's secret values were "
                               "sealed with (%s)",
                               path, od.msg);
        }
    } else if (may_write) {
        rc = store_check(g, g->secret_key, d);
    }
    g->st.secret_key = rc == 0 && may_write ? g->secret_key : NULL;
    return rc;
}

int ctl_secrets_start(gpupoold *g, gp_diag *d)
{
    return secrets_open(g, true, d);
}

int ctl_secrets_verify(gpupoold *g, gp_diag *d)
{
    return secrets_open(g, false, d);
}

int ctl_secrets_check_submitted(const gp_jobspec *s, gp_diag *d)
{
    for (int i = 0; i < s->nenv; i++) {
        if (s->env[i].sealed) {
            return gp_diag_set(d, GP_EINVAL,
                               "env.%.64s.sealed: set by gpupool only; give the value as "
                               "{value: ..., secret: true}",
                               s->env[i].name);
        }
    }
    return 0;
}

int ctl_secrets_seal(const unsigned char *key, int64_t tenant_id, json_t *doc, gp_jobspec *s,
                     gp_diag *d)
{
    json_t *env = json_object_get(doc, "env");
    for (int i = 0; i < s->nenv; i++) {
        gp_env_var *v = &s->env[i];
        if (!json_is_object(json_object_get(env, v->name))) {
            continue;
        }
        if (!v->secret) {
            if (json_object_set_new(env, v->name, json_string(v->value)) < 0) {
                return gp_diag_set(d, GP_ENOMEM, "out of memory");
            }
            continue;
        }
        if (!key) {
            return gp_diag_set(d, GP_EUNAVAIL, "env.%.64s: no key to seal it", v->name);
        }
        char ad[512], *sealed = NULL;
        env_ad(ad, sizeof(ad), tenant_id, s->name, v->name);
        int rc = gp_seal(key, ad, v->value, strlen(v->value), &sealed, d);
        if (rc < 0) {
            return gp_diag_set(d, rc, "env.%.64s: %s", v->name, d->msg);
        }
        /* The submitted plaintext, wiped in the document before it goes (jansson's strings are
         * const to callers; this one is about to be freed). */
        json_t *given = json_object_get(json_object_get(env, v->name), "value");
        char *text = (char *)json_string_value(given);
        gp_seal_wipe(text, text ? json_string_length(given) : 0);
        json_t *entry = json_pack("{s:b, s:s}", "secret", 1, "sealed", sealed);
        if (!entry || json_object_set_new(env, v->name, entry) < 0) {
            free(sealed);
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
        gp_seal_wipe(v->value, strlen(v->value));
        free(v->value);
        v->value = sealed;
        v->sealed = true;
    }
    return 0;
}

void ctl_secrets_show(json_t *spec, const unsigned char *key, int64_t tenant_id, const char *job)
{
    json_t *env = json_object_get(spec, "env");
    const char *name;
    json_t *v;
    json_object_foreach(env, name, v)
    {
        const char *sealed = json_string_value(json_object_get(v, "sealed"));
        if (!json_is_object(v)) {
            continue;
        }
        if (!key || !sealed) {
            json_object_set_new(env, name, json_pack("{s:b}", "secret", 1));
            continue;
        }
        char ad[512], *plain = NULL;
        size_t len = 0;
        gp_diag d;
        env_ad(ad, sizeof(ad), tenant_id, job, name);
        if (gp_unseal(key, ad, sealed, &plain, &len, &d) == 0) {
            json_object_set_new(env, name, json_stringn(plain, len));
            gp_seal_wipe(plain, len);
        } else {
            GP_LOG(GP_LOG_ERROR, "ctl", "job=%s env=%s secret value refused: %s", job, name, d.msg);
            json_object_set_new(env, name, json_pack("{s:b, s:s}", "secret", 1, "refused", d.msg));
        }
        free(plain);
    }
}

json_t *ctl_job_spec_doc(const ctl_state *st, const ctl_job *j, bool secrets)
{
    json_t *spec = gp_jobspec_to_json(&j->spec); /* the canonical form, from the parsed spec */
    if (spec) {
        ctl_secrets_show(spec, secrets ? st->secret_key : NULL, j->tenant_id, j->name);
    }
    return spec;
}

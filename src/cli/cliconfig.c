/*
 * The config file's text to and from gp_cli_config (see cliconfig.h).
 */
#include "cli/cliconfig.h"

#include <stdio.h>
#include <string.h>

int gp_cli_context_name_ok(const char *name)
{
    size_t n = strlen(name);
    return n > 0 && n < GP_CLI_CONTEXT_NAME_MAX &&
           strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == n;
}

gp_cli_context *gp_cli_config_find(gp_cli_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->nctx; i++) {
        if (strcmp(cfg->ctx[i].name, name) == 0) {
            return &cfg->ctx[i];
        }
    }
    return NULL;
}

gp_cli_context *gp_cli_config_add(gp_cli_config *cfg, const char *name)
{
    gp_cli_context *c = gp_cli_config_find(cfg, name);
    if (c || !gp_cli_context_name_ok(name) || cfg->nctx == GP_CLI_MAX_CONTEXTS) {
        return c;
    }
    c = &cfg->ctx[cfg->nctx++];
    *c = (gp_cli_context){0};
    snprintf(c->name, sizeof(c->name), "%s", name);
    return c;
}

int gp_cli_config_remove(gp_cli_config *cfg, const char *name)
{
    gp_cli_context *c = gp_cli_config_find(cfg, name);
    if (!c) {
        return -1;
    }
    int i = (int)(c - cfg->ctx);
    memmove(&cfg->ctx[i], &cfg->ctx[i + 1], sizeof(cfg->ctx[0]) * (size_t)(cfg->nctx - i - 1));
    cfg->nctx--;
    if (strcmp(cfg->current, name) == 0) {
        cfg->current[0] = '\0';
    }
    return 0;
}

int gp_cli_trimmed(const char *s, size_t len, char *out, size_t cap)
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

/* The field of a context that "context.NAME.FIELD" names; *cfield NULL for an unknown field. */
static int context_key(gp_cli_config *cfg, const char *key, size_t klen, char **field, size_t *cap,
                       int line, gp_diag *d)
{
    static const char *const names[] = {"server", "token-file", "cacert"};
    const char *dot = memchr(key + 8, '.', klen - 8);
    char name[GP_CLI_CONTEXT_NAME_MAX];
    *field = NULL;
    if (!dot || (size_t)(dot - key - 8) >= sizeof(name)) {
        return gp_diag_set(d, GP_EINVAL, "line %d: %.*s: bad context name", line, (int)klen, key);
    }
    snprintf(name, sizeof(name), "%.*s", (int)(dot - key - 8), key + 8);
    size_t flen = klen - (size_t)(dot + 1 - key);
    for (int i = 0; i < 3; i++) {
        if (strlen(names[i]) == flen && strncmp(dot + 1, names[i], flen) == 0) {
            gp_cli_context *c = gp_cli_context_name_ok(name) ? gp_cli_config_add(cfg, name) : NULL;
            if (!c) {
                return gp_diag_set(d, GP_EINVAL, "line %d: %.*s: %s", line, (int)klen, key,
                                   gp_cli_context_name_ok(name) ? "more than 32 contexts"
                                                                : "bad context name");
            }
            *field = i == 0 ? c->server : i == 1 ? c->token_file : c->cacert;
            *cap = sizeof(c->server);
        }
    }
    return 0;
}

static int parse_line(gp_cli_config *cfg, const char *s, size_t len, int line, gp_diag *d)
{
    const char *colon = memchr(s, ':', len);
    if (len == 0 || s[0] == '#' || !colon) {
        return 0;
    }
    size_t klen = (size_t)(colon - s);
    char *field = NULL;
    size_t cap = 0;
    if (klen == 6 && strncmp(s, "server", 6) == 0) {
        field = cfg->server, cap = sizeof(cfg->server);
    } else if (klen == 5 && strncmp(s, "token", 5) == 0) {
        field = cfg->token, cap = sizeof(cfg->token);
    } else if (klen == 15 && strncmp(s, "current-context", 15) == 0) {
        field = cfg->current, cap = sizeof(cfg->current);
    } else if (klen > 8 && strncmp(s, "context.", 8) == 0) {
        int rc = context_key(cfg, s, klen, &field, &cap, line, d);
        if (rc < 0) {
            return rc;
        }
    }
    if (field) {
        memset(field, 0, cap); /* a key given twice: the last value, nothing of the first */
    }
    if (field && gp_cli_trimmed(colon + 1, len - klen - 1, field, cap) < 0) {
        return gp_diag_set(d, GP_EINVAL, "line %d: %.*s: value too long", line, (int)klen, s);
    }
    return 0;
}

void gp_cli_config_clear(gp_cli_config *cfg)
{
    cfg->server[0] = cfg->token[0] = cfg->current[0] = '\0';
    cfg->nctx = 0;
}

int gp_cli_config_parse(const char *text, gp_cli_config *cfg, gp_diag *d)
{
    gp_cli_config_clear(cfg);
    int line = 1;
    for (const char *s = text; *s; line++) {
        size_t len = strcspn(s, "\n");
        int rc = parse_line(cfg, s, len, line, d);
        if (rc < 0) {
            gp_cli_config_clear(cfg);
            return rc;
        }
        s += len + (s[len] == '\n');
    }
    return 0;
}

int gp_cli_config_format(const gp_cli_config *cfg, char *buf, size_t cap)
{
    size_t used = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int n_ = snprintf(buf + used, cap - used, __VA_ARGS__);                                    \
        if (n_ < 0 || (size_t)n_ >= cap - used) {                                                  \
            return -1;                                                                             \
        }                                                                                          \
        used += (size_t)n_;                                                                        \
    } while (0)
    if (cap == 0) {
        return -1;
    }
    buf[0] = '\0';
    PUT("# gpupool's settings: written by gpupool login and gpupool config\n");
    if (cfg->server[0]) {
        PUT("server: %s\n", cfg->server);
    }
    if (cfg->token[0]) {
        PUT("token: %s\n", cfg->token);
    }
    if (cfg->current[0]) {
        PUT("current-context: %s\n", cfg->current);
    }
    for (int i = 0; i < cfg->nctx; i++) {
        const gp_cli_context *c = &cfg->ctx[i];
        PUT("context.%s.server: %s\n", c->name, c->server);
        if (c->token_file[0]) {
            PUT("context.%s.token-file: %s\n", c->name, c->token_file);
        }
        if (c->cacert[0]) {
            PUT("context.%s.cacert: %s\n", c->name, c->cacert);
        }
    }
#undef PUT
    return (int)used;
}

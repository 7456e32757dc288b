/*
 * The podman options that give a container exactly its CDI devices (see cdi.h). Pure.
 */
#include "agent/cdi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A NULL-terminated list of up to cap strings. */
typedef struct list {
    char **v;
    int n, cap;
} list;

static int push(list *l, const char *s)
{
    char *c = l->n < l->cap ? strdup(s) : NULL;
    if (!c) {
        return GP_ENOMEM;
    }
    l->v[l->n++] = c;
    l->v[l->n] = NULL;
    return 0;
}

static void free_list(char **v)
{
    for (int i = 0; v && v[i]; i++) {
        free(v[i]);
    }
    free(v);
}

void gp_cdi_args_fini(gp_cdi_args *a)
{
    if (a) {
        free_list(a->global);
        free_list(a->run);
        a->global = a->run = NULL;
    }
}

static bool seen_before(const char *const *names, int i)
{
    for (int k = 0; k < i; k++) {
        if (strcmp(names[k], names[i]) == 0) {
            return true;
        }
    }
    return false;
}

static int validate(const char *spec_dir, const char *const *names, int n, gp_diag *d)
{
    if (spec_dir && spec_dir[0] != '/') {
        return gp_diag_set(d, GP_EINVAL, "cdi spec dir: an absolute directory, not \"%s\"",
                           spec_dir);
    }
    if (n < 0 || (n > 0 && !names)) {
        return gp_diag_set(d, GP_EINVAL, "gpus: %d names", n);
    }
    for (int i = 0; i < n; i++) {
        if (!gp_cdi_name_valid(names[i])) {
            return gp_diag_set(d, GP_EINVAL, "gpus[%d]: \"%.100s\" is not a CDI device name", i,
                               names[i] ? names[i] : "");
        }
    }
    return 0;
}

int gp_cdi_podman_args(const char *spec_dir, const char *const *names, int n, gp_cdi_args *out,
                       gp_diag *d)
{
    out->global = out->run = NULL;
    int rc = validate(spec_dir, names, n, d);
    if (rc < 0) {
        return rc;
    }
    list g = {calloc(3, sizeof(char *)), 0, 2};
    list r = {calloc((size_t)(2 * n + 1), sizeof(char *)), 0, 2 * n};
    out->global = g.v;
    out->run = r.v;
    rc = g.v && r.v ? 0 : GP_ENOMEM;
    if (rc == 0 && spec_dir && n > 0) {
        rc = push(&g, "--cdi-spec-dir");
        rc = rc ? rc : push(&g, spec_dir);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        char dev[300];
        if (seen_before(names, i)) {
            continue;
        }
        snprintf(dev, sizeof(dev), "%s=%s", GP_CDI_KIND, names[i]);
        rc = push(&r, "--device");
        rc = rc ? rc : push(&r, dev);
    }
    if (rc < 0) {
        gp_cdi_args_fini(out);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    return 0;
}

bool gp_cdi_podman_takes_spec_dir(const char *help_text)
{
    /* The option as podman's help lists it: "  --cdi-spec-dir stringArray ..." */
    for (const char *p = help_text ? strstr(help_text, "--cdi-spec-dir") : NULL; p;
         p = strstr(p + 1, "--cdi-spec-dir")) {
        char after = p[strlen("--cdi-spec-dir")];
        if ((p == help_text || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n') &&
            (after == ' ' || after == '=' || after == '\t' || after == '\n' || after == '\0')) {
            return true;
        }
    }
    return false;
}

bool gp_cdi_podman_reads(const char *dir)
{
    static const char *const dirs[] = {"/etc/cdi", "/var/run/cdi", "/run/cdi"};
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/') {
        n--;
    }
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        if (n == strlen(dirs[i]) && strncmp(dir, dirs[i], n) == 0) {
            return true;
        }
    }
    return false;
}

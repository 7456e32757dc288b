/*
 * Reading manifests (apply_io.h). A file is JSON when its name ends in .json or its first
 * non-blank character is '{' (so `kubectl get -o json` output on stdin works); YAML otherwise.
 */
#include "cli/apply_io.h"

#include "base/textfile.h"
#include "net/yaml_json.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Parses text (of file name) and appends its documents. */
static int parse_text(const char *name, const char *text, size_t len, json_t *docs, json_t *files,
                      gp_diag *d)
{
    size_t i = strspn(text, " \t\r\n");
    json_t *parsed = NULL;
    gp_diag pd;
    gp_diag_clear(&pd);
    int rc;
    if (ends_with(name, ".json") || text[i] == '{') {
        json_error_t e;
        rc = gp_json_check_depth(text, len, GP_JSON_MAX_DEPTH, &pd);
        json_t *one = rc == 0 ? json_loadb(text, len, JSON_REJECT_DUPLICATES, &e) : NULL;
        if (rc == 0 && !one) {
            rc = gp_diag_set(&pd, GP_EPARSE, "line %d, column %d: %s", e.line, e.column, e.text);
        }
        parsed = one ? json_pack("[o]", one) : NULL;
    } else {
        rc = gp_yaml_to_json_all(text, len, &parsed, &pd);
    }
    if (rc < 0) {
        return gp_diag_set(d, rc, "%s: %s", name, pd.msg);
    }
    size_t k;
    json_t *doc;
    json_array_foreach(parsed, k, doc)
    {
        json_array_append(docs, doc);
        json_array_append_new(files, json_string(name));
    }
    json_decref(parsed);
    return 0;
}

static int read_file(const char *path, json_t *docs, json_t *files, gp_diag *d)
{
    size_t len = 0;
    char *text = strcmp(path, "-") == 0 ? gp_text_read_fd(STDIN_FILENO, GP_APPLY_MAX_FILE, &len)
                                        : gp_text_read(path, GP_APPLY_MAX_FILE, &len);
    if (!text) {
        return gp_diag_set(d, GP_EINVAL, "%s: %s", path,
                           errno == EFBIG ? "larger than 8 MiB" : strerror(errno));
    }
    int rc = parse_text(path, text, len, docs, files, d);
    free(text);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The manifests of a directory, in name order. */
static int read_dir(const char *path, json_t *docs, json_t *files, gp_diag *d)
{
    DIR *dir = opendir(path);
    if (!dir) {
        return gp_diag_set(d, GP_EINVAL, "%s: %s", path, strerror(errno));
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(dir))) {
        if (e->d_name[0] == '.' ||
            !(ends_with(e->d_name, ".yaml") || ends_with(e->d_name, ".yml") ||
              ends_with(e->d_name, ".json"))) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(names, cap * sizeof(*p));
            if (!p) {
                rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
                break;
            }
            names = p;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) {
            rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
            break;
        }
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(dir);
    if (n > 0) {
        qsort(names, n, sizeof(*names), cmp_names);
    }
    for (size_t i = 0; i < n; i++) {
        rc = rc < 0 ? rc : read_file(names[i], docs, files, d);
        free(names[i]);
    }
    free(names);
    return rc;
}

int gp_apply_read(const char *const *paths, int npaths, json_t **docs, json_t **files, gp_diag *d)
{
    *docs = json_array();
    *files = json_array();
    int rc = *docs && *files ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < npaths; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") != 0 && stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = read_dir(paths[i], *docs, *files, d);
        } else {
            rc = read_file(paths[i], *docs, *files, d);
        }
    }
    if (rc < 0) {
        json_decref(*docs);
        json_decref(*files);
        *docs = *files = NULL;
    }
    return rc;
}

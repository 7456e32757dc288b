/*
 * The translator's plumbing: diagnostics, paths, typed member access and the check that names
 * every field a manifest has that gpupool does not read. Probes live here too, as the one
 * structure Pod and Deployment share below the container.
 */
#include "cli/k8s_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) {
        memcpy(p, s, n);
    }
    return p;
}

void k8s_diag(k8s_tr *t, gp_k8s_severity s, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (s == GP_K8S_ERROR) {
        t->errors++;
    }
    gp_k8s_result *r = t->res;
    gp_k8s_diag *d = realloc(r->diags, (r->ndiags + 1) * sizeof(*d));
    if (!d) {
        r->oom = true;
        return;
    }
    r->diags = d;
    d += r->ndiags;
    *d = (gp_k8s_diag){.severity = s, .source = t->source};
    d->where = dup_str(t->where);
    d->path = dup_str(path ? path : "");
    d->message = dup_str(msg);
    if (!d->where || !d->path || !d->message) {
        free(d->where);
        free(d->path);
        free(d->message);
        r->oom = true;
        return;
    }
    r->ndiags++;
}

const char *k8s_join(char *buf, const char *path, const char *key)
{
    char tmp[K8S_PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s%s%s", path, path[0] ? "." : "", key);
    memcpy(buf, tmp, sizeof(tmp));
    return buf;
}

const char *k8s_index(char *buf, const char *path, size_t i)
{
    char tmp[K8S_PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s[%zu]", path, i);
    memcpy(buf, tmp, sizeof(tmp));
    return buf;
}

void k8s_set(k8s_tr *t, json_t *o, const char *key, json_t *v)
{
    if (!v || json_object_set_new(o, key, v) < 0) {
        t->res->oom = true;
    }
}

void k8s_check_keys(k8s_tr *t, const json_t *obj, const char *path, const k8s_key *keys)
{
    const char *k;
    json_t *v;
    char q[K8S_PATH_MAX];
    json_object_foreach((json_t *)obj, k, v)
    {
        const k8s_key *e = keys;
        while (e->name && strcmp(e->name, k) != 0) {
            e++;
        }
        if (!e->name) {
            k8s_warn(t, k8s_join(q, path, k), "not supported by gpupool; left out");
        } else if (e->ignored) {
            k8s_warn(t, k8s_join(q, path, k), "%s", e->ignored);
        }
    }
}

static const json_t *typed(k8s_tr *t, const json_t *o, const char *path, const char *key,
                           json_type type, const char *what)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        return NULL;
    }
    if (json_typeof(v) != type) {
        char q[K8S_PATH_MAX];
        k8s_error(t, k8s_join(q, path, key), "must be %s", what);
        return NULL;
    }
    return v;
}

const json_t *k8s_obj(k8s_tr *t, const json_t *o, const char *path, const char *key)
{
    return typed(t, o, path, key, JSON_OBJECT, "an object");
}

const json_t *k8s_arr(k8s_tr *t, const json_t *o, const char *path, const char *key)
{
    return typed(t, o, path, key, JSON_ARRAY, "a list");
}

const char *k8s_str(k8s_tr *t, const json_t *o, const char *path, const char *key)
{
    return json_string_value(typed(t, o, path, key, JSON_STRING, "a string"));
}

/* A probe's port: a number, or the name of one of the container's ports. */
static int probe_port(k8s_tr *t, const json_t *v, const char *path, const json_t *ports)
{
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= 65535) {
        return (int)json_integer_value(v);
    }
    const char *name = json_string_value(v);
    size_t i;
    const json_t *p;
    json_array_foreach((json_t *)ports, i, p)
    {
        const char *n = json_string_value(json_object_get(p, "name"));
        if (name && n && strcmp(n, name) == 0) {
            return (int)json_integer_value(json_object_get(p, "containerPort"));
        }
    }
    k8s_error(t, path, "must be a port number or the name of one of the container's ports");
    return 0;
}

/* The check itself: http_get, tcp_socket or exec. */
static json_t *probe_check(k8s_tr *t, const json_t *probe, const char *path, const json_t *ports)
{
    char q[K8S_PATH_MAX], q2[K8S_PATH_MAX];
    const json_t *h = k8s_obj(t, probe, path, "httpGet");
    const json_t *s = k8s_obj(t, probe, path, "tcpSocket");
    const json_t *e = k8s_obj(t, probe, path, "exec");
    if (h) {
        k8s_join(q, path, "httpGet");
        static const k8s_key keys[] = {{"path", NULL},
                                       {"port", NULL},
                                       {"scheme", NULL},
                                       {"host", "not honoured: the replica is probed"},
                                       {"httpHeaders", "not supported: probes send no headers"},
                                       {NULL, NULL}};
        k8s_check_keys(t, h, q, keys);
        const char *scheme = json_string_value(json_object_get(h, "scheme"));
        if (scheme && strcmp(scheme, "HTTP") != 0) {
            k8s_error(t, k8s_join(q2, q, "scheme"), "not supported: probes speak plain HTTP");
        }
        const char *p = k8s_str(t, h, q, "path");
        json_t *o = json_pack("{s:s}", "path", p ? p : "/");
        int port = probe_port(t, json_object_get(h, "port"), k8s_join(q2, q, "port"), ports);
        json_object_set_new(o, "port", json_integer(port));
        return json_pack("{s:o}", "http_get", o);
    }
    if (s) {
        k8s_join(q, path, "tcpSocket");
        int port = probe_port(t, json_object_get(s, "port"), k8s_join(q2, q, "port"), ports);
        return json_pack("{s:{s:i}}", "tcp_socket", "port", port);
    }
    if (e) {
        const json_t *cmd = k8s_arr(t, e, k8s_join(q, path, "exec"), "command");
        if (!cmd || json_array_size(cmd) == 0) {
            k8s_error(t, k8s_join(q, q, "command"), "required");
            return NULL;
        }
        return json_pack("{s:{s:O}}", "exec", "command", cmd);
    }
    k8s_error(t, path, "needs httpGet, tcpSocket or exec (grpc is not supported)");
    return NULL;
}

json_t *k8s_probe(k8s_tr *t, const json_t *probe, const char *path, const json_t *ports)
{
    static const k8s_key keys[] = {
        {"httpGet", NULL},
        {"tcpSocket", NULL},
        {"exec", NULL},
        {"initialDelaySeconds", NULL},
        {"periodSeconds", NULL},
        {"timeoutSeconds", NULL},
        {"failureThreshold", NULL},
        {"successThreshold", NULL},
        {"terminationGracePeriodSeconds", "not honoured: the agent's grace period applies"},
        {NULL, NULL},
    };
    static const char *const timings[][2] = {{"initialDelaySeconds", "initial_delay"},
                                             {"periodSeconds", "period"},
                                             {"timeoutSeconds", "timeout"}};
    static const char *const counts[][2] = {{"failureThreshold", "failure_threshold"},
                                            {"successThreshold", "success_threshold"}};
    k8s_check_keys(t, probe, path, keys);
    int before = t->errors;
    json_t *o = probe_check(t, probe, path, ports);
    if (!o || t->errors > before) {
        json_decref(o);
        return NULL;
    }
    for (size_t i = 0; i < 3; i++) {
        const json_t *v = json_object_get(probe, timings[i][0]);
        if (json_is_integer(v)) {
            k8s_set(t, o, timings[i][1], json_sprintf("%llds", (long long)json_integer_value(v)));
        }
    }
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(probe, counts[i][0]);
        if (json_is_integer(v)) {
            k8s_set(t, o, counts[i][1], json_integer(json_integer_value(v)));
        }
    }
    return o;
}

/*
 * The job spec's fields of notebooks and services (jobspec.h: kind, port, idle_action, probes,
 * autoscale, update): parsing with their paths named, the checks across them, the canonical
 * form and equality. jobspec.c calls in through jobspec_impl.h.
 */
#include "net/jobspec_impl.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"batch", "notebook", "service"};
static const char *const idle_names[] = {"stop", "suspend"};
static const char *const metric_names[] = {"gpu_utilization", "gpu_memory_utilization",
                                           "prometheus"};

#define PROBE_MAX_S   3600
#define WINDOW_MAX_S  3600
#define DEFAULT_DOWN  300
#define DEFAULT_PATH  "/metrics"
#define MAX_THRESHOLD 100

const char *gp_job_kind_name(gp_job_kind k)
{
    return k >= GP_JOB_BATCH && k <= GP_JOB_SERVICE ? kind_names[k] : "batch";
}

const char *gp_scale_metric_name(gp_scale_metric m)
{
    return m >= GP_SCALE_GPU_UTIL && m <= GP_SCALE_PROMETHEUS ? metric_names[m] : "";
}

/* An absolute path (with its query) of at most 1024 bytes, printable ASCII without spaces. */
static int get_path(json_t *v, const char *path, char **out, gp_diag *d)
{
    char buf[1025];
    int rc = js_text(v, path, buf, sizeof(buf), d);
    if (rc < 0) {
        return rc;
    }
    for (const char *p = buf; *p; p++) {
        if (!isgraph((unsigned char)*p)) {
            return gp_diag_set(d, GP_EINVAL, "%s: must be printable without spaces", path);
        }
    }
    if (buf[0] != '/') {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an absolute path", path);
    }
    free(*out);
    *out = strdup(buf);
    return *out ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

static int get_port(json_t *v, const char *path, int *out, gp_diag *d)
{
    return js_int32(v, path, 1, 65535, out, d);
}

/* Refuses keys of o other than those in names (a NULL-terminated list). */
static int only_keys(json_t *o, const char *path, const char *const *names, gp_diag *d)
{
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val)
    {
        const char *const *n = names;
        while (*n && strcmp(*n, key) != 0) {
            n++;
        }
        if (!*n) {
            return gp_diag_set(d, GP_EINVAL, "%s.%.64s: unknown field", path, key);
        }
    }
    return 0;
}

/* ---- probes ---- */

static int probe_action(json_t *v, const char *path, const char *key, int default_port, gp_probe *p,
                        gp_diag *d)
{ /* a port left out stays default_port; 0: the spec's, resolved by js_serve_finish */
    static const char *const http_keys[] = {"path", "port", NULL};
    static const char *const tcp_keys[] = {"port", NULL};
    static const char *const exec_keys[] = {"command", NULL};
    char sub[300];
    snprintf(sub, sizeof(sub), "%s.%s", path, key);
    if (!json_is_object(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", sub);
    }
    bool http = strcmp(key, "http_get") == 0, tcp = strcmp(key, "tcp_socket") == 0;
    int rc = only_keys(v, sub, http ? http_keys : tcp ? tcp_keys : exec_keys, d);
    json_t *x;
    char f[320];
    if (rc == 0 && (http || tcp)) {
        p->type = http ? GP_PROBE_HTTP : GP_PROBE_TCP;
        p->port = default_port;
        snprintf(f, sizeof(f), "%s.port", sub);
        if ((x = json_object_get(v, "port")) != NULL && !json_is_null(x)) {
            rc = get_port(x, f, &p->port, d);
        }
    }
    if (rc == 0 && http) {
        snprintf(f, sizeof(f), "%s.path", sub);
        x = json_object_get(v, "path");
        rc = x && !json_is_null(x) ? get_path(x, f, &p->path, d)
                                   : ((p->path = strdup("/")) ? 0 : GP_ENOMEM);
    }
    if (rc == 0 && !http && !tcp) {
        p->type = GP_PROBE_EXEC;
        snprintf(f, sizeof(f), "%s.command", sub);
        x = json_object_get(v, "command");
        rc = x ? js_strings(x, f, 1, &p->command, d)
               : gp_diag_set(d, GP_EINVAL, "%s: required (a non-empty list)", f);
    }
    return rc;
}

/* One timing field of a probe. */
static int probe_timing(json_t *v, const char *path, const char *key, gp_probe *p, gp_diag *d)
{
    char sub[300];
    snprintf(sub, sizeof(sub), "%s.%s", path, key);
    if (strcmp(key, "initial_delay") == 0) {
        return js_duration_in(v, sub, 0, PROBE_MAX_S, &p->initial_delay_s, d);
    }
    if (strcmp(key, "period") == 0) {
        return js_duration_in(v, sub, 1, PROBE_MAX_S, &p->period_s, d);
    }
    if (strcmp(key, "timeout") == 0) {
        return js_duration_in(v, sub, 1, PROBE_MAX_S, &p->timeout_s, d);
    }
    if (strcmp(key, "failure_threshold") == 0) {
        return js_int32(v, sub, 1, MAX_THRESHOLD, &p->failure_threshold, d);
    }
    return js_int32(v, sub, 1, MAX_THRESHOLD, &p->success_threshold, d);
}

int gp_probe_parse(json_t *v, const char *path, int default_port, gp_probe *out, gp_diag *d)
{
    static const char *const keys[] = {
        "http_get",          "tcp_socket",        "exec", "initial_delay", "period", "timeout",
        "failure_threshold", "success_threshold", NULL};
    if (!json_is_object(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", path);
    }
    gp_probe p = {.period_s = 10, .timeout_s = 1, .failure_threshold = 3, .success_threshold = 1};
    int rc = only_keys(v, path, keys, d), nactions = 0;
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val)
    {
        if (rc < 0 || json_is_null(val)) {
            continue;
        }
        bool action = strcmp(key, "http_get") == 0 || strcmp(key, "tcp_socket") == 0 ||
                      strcmp(key, "exec") == 0;
        nactions += action;
        rc = action
                 ? (nactions > 1
                        ? gp_diag_set(d, GP_EINVAL, "%s: one of http_get, tcp_socket or exec", path)
                        : probe_action(val, path, key, default_port, &p, d))
                 : probe_timing(val, path, key, &p, d);
    }
    if (rc == 0 && nactions == 0) {
        rc = gp_diag_set(d, GP_EINVAL, "%s: needs one of http_get, tcp_socket or exec", path);
    }
    if (rc == 0 && p.timeout_s > p.period_s) {
        rc = gp_diag_set(d, GP_EINVAL, "%s.timeout: at most the period (%llds)", path,
                         (long long)p.period_s);
    }
    if (rc < 0) {
        gp_probe_fini(&p);
        return rc;
    }
    *out = p;
    return 0;
}

void gp_probe_fini(gp_probe *p)
{
    free(p->path);
    for (char **c = p->command; c && *c; c++) {
        free(*c);
    }
    free(p->command);
    p->path = NULL;
    p->command = NULL;
    p->type = GP_PROBE_NONE;
}

json_t *gp_probe_to_json(const gp_probe *p)
{
    if (p->type == GP_PROBE_NONE) {
        return NULL;
    }
    enc e = {false};
    json_t *o = json_object(), *a = json_object();
    if (p->type == GP_PROBE_HTTP) {
        js_put(&e, a, "path", json_string(p->path ? p->path : "/"));
    }
    if (p->type != GP_PROBE_EXEC) {
        js_put(&e, a, "port", json_integer(p->port));
    } else {
        js_put(&e, a, "command", js_string_list(&e, p->command));
    }
    js_put(&e, o,
           p->type == GP_PROBE_HTTP  ? "http_get"
           : p->type == GP_PROBE_TCP ? "tcp_socket"
                                     : "exec",
           a);
    js_put(&e, o, "initial_delay", js_duration_json(p->initial_delay_s));
    js_put(&e, o, "period", js_duration_json(p->period_s));
    js_put(&e, o, "timeout", js_duration_json(p->timeout_s));
    js_put(&e, o, "failure_threshold", json_integer(p->failure_threshold));
    js_put(&e, o, "success_threshold", json_integer(p->success_threshold));
    if (e.failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static bool same_probe(const gp_probe *a, const gp_probe *b)
{
    bool same = a->type == b->type && a->port == b->port &&
                a->initial_delay_s == b->initial_delay_s && a->period_s == b->period_s &&
                a->timeout_s == b->timeout_s && a->failure_threshold == b->failure_threshold &&
                a->success_threshold == b->success_threshold &&
                (a->path == NULL) == (b->path == NULL) && (!a->path || !strcmp(a->path, b->path));
    size_t i = 0;
    for (; same && a->command && b->command && a->command[i] && b->command[i]; i++) {
        same = strcmp(a->command[i], b->command[i]) == 0;
    }
    return same && !(a->command && a->command[i]) && !(b->command && b->command[i]);
}

/* ---- top-level fields ---- */

static int f_kind(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, kind_names, 3, &x, d);
    s->job_kind = (gp_job_kind)x;
    return rc;
}

static int f_port(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return get_port(v, path, &s->port, d);
}

static int f_idle_action(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, idle_names, 2, &x, d);
    s->idle_action = rc == 0 ? (gp_idle_action)x : s->idle_action;
    return rc;
}

static int f_readiness(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    gp_probe_fini(&s->readiness);
    return gp_probe_parse(v, path, 0, &s->readiness, d);
}

static int f_liveness(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    gp_probe_fini(&s->liveness);
    return gp_probe_parse(v, path, 0, &s->liveness, d);
}

static int a_min(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 1, GP_JOB_MAX_REPLICAS, &s->autoscale.min_replicas, d);
}

static int a_max(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 1, GP_JOB_MAX_REPLICAS, &s->autoscale.max_replicas, d);
}

static int a_metric(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, metric_names, 3, &x, d);
    s->autoscale.metric = (gp_scale_metric)x;
    return rc;
}

static int a_target(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    double x = json_is_number(v) ? json_number_value(v) : -1;
    if (!(x > 0) || !isfinite(x) || x > 1e12) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a number above 0", path);
    }
    s->autoscale.target = x;
    return 0;
}

static int a_prometheus(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    static const char *const keys[] = {"name", "path", "port", NULL};
    gp_autoscale *a = &s->autoscale;
    char sub[300];
    if (!json_is_object(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", path);
    }
    int rc = only_keys(v, path, keys, d);
    json_t *x = json_object_get(v, "name");
    snprintf(sub, sizeof(sub), "%s.name", path);
    rc = rc < 0 ? rc
         : !x   ? gp_diag_set(d, GP_EINVAL, "%s: required", sub)
                : js_text(x, sub, a->metric_name, sizeof(a->metric_name), d);
    for (const char *p = a->metric_name; rc == 0 && *p; p++) {
        bool ok = isalpha((unsigned char)*p) || *p == '_' || *p == ':' ||
                  (p > a->metric_name && isdigit((unsigned char)*p));
        rc = ok ? 0
                : gp_diag_set(d, GP_EINVAL, "%s: must be a metric name [a-zA-Z_:][a-zA-Z0-9_:]*",
                              sub);
    }
    if (rc == 0 && (x = json_object_get(v, "path")) != NULL && !json_is_null(x)) {
        snprintf(sub, sizeof(sub), "%s.path", path);
        rc = get_path(x, sub, &a->metric_path, d);
    }
    if (rc == 0 && (x = json_object_get(v, "port")) != NULL && !json_is_null(x)) {
        snprintf(sub, sizeof(sub), "%s.port", path);
        rc = get_port(x, sub, &a->metric_port, d);
    }
    return rc;
}

static int a_up(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_duration_in(v, path, 0, WINDOW_MAX_S, &s->autoscale.scale_up_window_s, d);
}

static int a_down(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_duration_in(v, path, 0, WINDOW_MAX_S, &s->autoscale.scale_down_window_s, d);
}

static const field autoscale_fields[] = {
    {"min_replicas", a_min},       {"max_replicas", a_max},      {"metric", a_metric},
    {"target", a_target},          {"prometheus", a_prometheus}, {"scale_up_window", a_up},
    {"scale_down_window", a_down},
};

static int f_autoscale(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    s->autoscale.enabled = true;
    s->autoscale.scale_down_window_s = DEFAULT_DOWN;
    s->autoscale.target = -1;
    return js_walk1(v, path, JS_TABLE(autoscale_fields), s, d);
}

static int u_surge(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 0, GP_JOB_MAX_REPLICAS, &s->update.max_surge, d);
}

static int u_unavailable(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 0, GP_JOB_MAX_REPLICAS, &s->update.max_unavailable, d);
}

static const field update_fields[] = {
    {"max_surge", u_surge},
    {"max_unavailable", u_unavailable},
};

static int f_update(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_walk1(v, path, JS_TABLE(update_fields), s, d);
}

const field js_serve_fields[] = {
    {"kind", f_kind},
    {"port", f_port},
    {"idle_action", f_idle_action},
    {"readiness_probe", f_readiness},
    {"liveness_probe", f_liveness},
    {"autoscale", f_autoscale},
    {"update", f_update},
};
const int js_serve_nfields = (int)(sizeof(js_serve_fields) / sizeof(js_serve_fields[0]));

void js_serve_defaults(gp_jobspec *s)
{
    s->network = JS_NETWORK_UNSET;
    s->idle_action = JS_IDLE_UNSET;
    s->update.max_surge = -1;
    s->update.max_unavailable = -1;
}

/* A batch job: none of the interactive fields. */
static int finish_batch(gp_jobspec *s, gp_diag *d)
{
    const char *what = s->port                ? "port: only for kind notebook or service"
                       : s->readiness.type    ? "readiness_probe: only for kind notebook or service"
                       : s->liveness.type     ? "liveness_probe: only for kind service"
                       : s->autoscale.enabled ? "autoscale: only for kind service"
                       : s->update.max_surge >= 0 || s->update.max_unavailable >= 0
                           ? "update: only for kind service"
                       : s->idle_action == GP_IDLE_SUSPEND
                           ? "idle_action: suspend is only for kind "
                             "notebook"
                           : NULL;
    if (what) {
        return gp_diag_set(d, GP_EINVAL, "%s", what);
    }
    s->network = s->network == JS_NETWORK_UNSET ? GP_NETWORK_HOST : s->network;
    s->idle_action = GP_IDLE_STOP;
    s->update.max_surge = s->update.max_unavailable = 0;
    return 0;
}

static int finish_autoscale(gp_jobspec *s, gp_diag *d)
{
    gp_autoscale *a = &s->autoscale;
    bool percent = a->metric != GP_SCALE_PROMETHEUS;
    const char *what = !a->min_replicas             ? "autoscale.min_replicas: required"
                       : !a->max_replicas           ? "autoscale.max_replicas: required"
                       : a->target < 0              ? "autoscale.target: required"
                       : percent && a->target > 100 ? "autoscale.target: a percentage: at most 100"
                       : !percent && !a->metric_name[0]
                           ? "autoscale.prometheus: required with metric prometheus"
                       : percent && (a->metric_name[0] || a->metric_path || a->metric_port)
                           ? "autoscale.prometheus: only with metric prometheus"
                           : NULL;
    if (what) {
        return gp_diag_set(d, GP_EINVAL, "%s", what);
    }
    if (a->min_replicas > a->max_replicas) {
        return gp_diag_set(d, GP_EINVAL, "autoscale.min_replicas: %d is above max_replicas (%d)",
                           a->min_replicas, a->max_replicas);
    }
    if (s->replicas > a->max_replicas) {
        return gp_diag_set(d, GP_EINVAL, "replicas: %d is above autoscale.max_replicas (%d)",
                           s->replicas, a->max_replicas);
    }
    s->replicas = s->replicas < a->min_replicas ? a->min_replicas : s->replicas;
    if (!percent) {
        a->metric_port = a->metric_port ? a->metric_port : s->port;
        a->metric_path = a->metric_path ? a->metric_path : strdup(DEFAULT_PATH);
        if (!a->metric_path) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
    }
    return 0;
}

static int finish_service(gp_jobspec *s, gp_diag *d)
{
    if (s->idle_timeout_s > 0 || s->idle_action != JS_IDLE_UNSET) {
        return gp_diag_set(d, GP_EINVAL, "%s: not for kind service (it scales instead)",
                           s->idle_timeout_s > 0 ? "idle_timeout" : "idle_action");
    }
    s->idle_action = GP_IDLE_STOP;
    gp_update *u = &s->update;
    u->max_surge = u->max_surge < 0 ? 1 : u->max_surge;
    u->max_unavailable = u->max_unavailable < 0 ? 0 : u->max_unavailable;
    if (u->max_surge == 0 && u->max_unavailable == 0) {
        return gp_diag_set(d, GP_EINVAL,
                           "update: max_surge and max_unavailable cannot both be 0 (a rolling "
                           "update could never start)");
    }
    if (s->liveness.type && s->liveness.success_threshold != 1) {
        return gp_diag_set(d, GP_EINVAL, "liveness_probe.success_threshold: must be 1");
    }
    return s->autoscale.enabled ? finish_autoscale(s, d) : 0;
}

static int finish_notebook(gp_jobspec *s, gp_diag *d)
{
    const char *what = s->replicas != 1       ? "replicas: a notebook has one replica"
                       : s->liveness.type     ? "liveness_probe: only for kind service"
                       : s->autoscale.enabled ? "autoscale: only for kind service"
                       : s->update.max_surge >= 0 || s->update.max_unavailable >= 0
                           ? "update: only for kind service"
                           : NULL;
    if (what) {
        return gp_diag_set(d, GP_EINVAL, "%s", what);
    }
    s->idle_action = s->idle_action == JS_IDLE_UNSET ? GP_IDLE_SUSPEND : s->idle_action;
    s->update.max_surge = s->update.max_unavailable = 0;
    return 0;
}

/* A probe's port left out is the job's. */
static void probe_port(gp_probe *p, int port)
{
    if ((p->type == GP_PROBE_HTTP || p->type == GP_PROBE_TCP) && p->port == 0) {
        p->port = port;
    }
}

int js_serve_finish(gp_jobspec *s, gp_diag *d)
{
    if (s->job_kind == GP_JOB_BATCH) {
        return finish_batch(s, d);
    }
    const char *kind = kind_names[s->job_kind];
    if (s->network == GP_NETWORK_HOST) {
        return gp_diag_set(d, GP_EINVAL,
                           "network: a %s runs in a network namespace of its own, reached "
                           "through the controller; host is refused",
                           kind);
    }
    s->network = GP_NETWORK_PRIVATE;
    if (!s->port) {
        return gp_diag_set(d, GP_EINVAL, "port: required for kind %s (the port it serves on)",
                           kind);
    }
    probe_port(&s->readiness, s->port);
    probe_port(&s->liveness, s->port);
    return s->job_kind == GP_JOB_SERVICE ? finish_service(s, d) : finish_notebook(s, d);
}

void js_serve_encode(enc *e, json_t *o, const gp_jobspec *s)
{
    if (s->port) {
        js_put(e, o, "port", json_integer(s->port));
    }
    if (s->readiness.type) {
        js_put(e, o, "readiness_probe", gp_probe_to_json(&s->readiness));
    }
    if (s->liveness.type) {
        js_put(e, o, "liveness_probe", gp_probe_to_json(&s->liveness));
    }
    const gp_autoscale *a = &s->autoscale;
    if (a->enabled) {
        json_t *x = json_object();
        js_put(e, x, "min_replicas", json_integer(a->min_replicas));
        js_put(e, x, "max_replicas", json_integer(a->max_replicas));
        js_put(e, x, "metric", json_string(metric_names[a->metric]));
        js_put(e, x, "target", json_real(a->target));
        if (a->metric == GP_SCALE_PROMETHEUS) {
            js_put(e, x, "prometheus",
                   json_pack("{s:s, s:s, s:i}", "name", a->metric_name, "path", a->metric_path,
                             "port", a->metric_port));
        }
        js_put(e, x, "scale_up_window", js_duration_json(a->scale_up_window_s));
        js_put(e, x, "scale_down_window", js_duration_json(a->scale_down_window_s));
        js_put(e, o, "autoscale", x);
    }
    if (s->job_kind == GP_JOB_SERVICE) {
        js_put(e, o, "update",
               json_pack("{s:i, s:i}", "max_surge", s->update.max_surge, "max_unavailable",
                         s->update.max_unavailable));
    }
}

bool js_serve_equal(const gp_jobspec *a, const gp_jobspec *b)
{
    const gp_autoscale *x = &a->autoscale, *y = &b->autoscale;
    return a->job_kind == b->job_kind && a->port == b->port && a->idle_action == b->idle_action &&
           same_probe(&a->readiness, &b->readiness) && same_probe(&a->liveness, &b->liveness) &&
           x->enabled == y->enabled && x->min_replicas == y->min_replicas &&
           x->max_replicas == y->max_replicas && x->metric == y->metric && x->target == y->target &&
           strcmp(x->metric_name, y->metric_name) == 0 &&
           (x->metric_path == NULL) == (y->metric_path == NULL) &&
           (!x->metric_path || strcmp(x->metric_path, y->metric_path) == 0) &&
           x->metric_port == y->metric_port && x->scale_up_window_s == y->scale_up_window_s &&
           x->scale_down_window_s == y->scale_down_window_s &&
           a->update.max_surge == b->update.max_surge &&
           a->update.max_unavailable == b->update.max_unavailable;
}

void js_serve_fini(gp_jobspec *s)
{
    gp_probe_fini(&s->readiness);
    gp_probe_fini(&s->liveness);
    free(s->autoscale.metric_path);
    s->autoscale.metric_path = NULL;
}

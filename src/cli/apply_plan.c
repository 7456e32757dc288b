/*
 * Planning and applying (apply_plan.h). Jobs are found by name among the active jobs (of the
 * manifest's namespace's tenant when it names one); named objects in their kind's list. An
 * existing object is updated by its whole document (the server's, with the manifest's fields
 * over it), so what the manifest does not say (a tenant's grants) stays as it is.
 */
#include "cli/apply_plan.h"

#include "cli/cli.h"
#include "cli/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const paths[] = {"/v1/jobs", "/v1/tenants", "/v1/queues", "/v1/priorityclasses"};
/* Members of answers only (not part of a document sent back). */
static const char *const answer_only[] = {"usage", "pending", NULL};

const char *gp_apply_kind(const gp_k8s_object *o)
{
    static const char *const names[] = {"job", "tenant", "queue", "priorityclass"};
    const char *k = json_string_value(json_object_get(o->doc, "kind"));
    if (o->target == GP_K8S_JOB && k && strcmp(k, "service") == 0) {
        return "service";
    }
    return names[o->target];
}

/* Apply order: what jobs name exists before them. */
static int rank(gp_k8s_target t)
{
    return t == GP_K8S_PCLASS ? 0 : t == GP_K8S_QUEUE ? 1 : t == GP_K8S_TENANT ? 2 : 3;
}

/* The active job named in o's doc (of its tenant when given): *job, a new reference, or NULL. */
static int find_job(gp_cli_conn *c, const gp_k8s_object *o, json_t **job)
{
    char q[512] = "";
    const char *tenant = json_string_value(json_object_get(o->doc, "tenant"));
    *job = NULL;
    if (gp_cli_query_add(q, sizeof(q), "name", o->name) < 0 ||
        gp_cli_query_add(q, sizeof(q), "state", "Pending,Scheduled,Running") < 0 ||
        (tenant && gp_cli_query_add(q, sizeof(q), "tenant", tenant) < 0)) {
        return GP_EXIT_FAILURE;
    }
    json_t *items = json_array();
    int more = 0;
    int rc = gp_cli_get_pages(c, "/v1/jobs", q, 1, items, &more);
    if (rc == 0 && json_array_size(items) > 0) {
        *job = json_incref(json_array_get(items, json_array_size(items) - 1));
    }
    json_decref(items);
    return rc;
}

/* The named object of o's kind: *cur (answer-only members removed), or NULL. */
static int find_object(gp_cli_conn *c, const gp_k8s_object *o, json_t **cur)
{
    *cur = NULL;
    json_t *items = json_array();
    int more = 0;
    int rc = gp_cli_get_pages(c, paths[o->target], "", 1, items, &more);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        const char *n = json_string_value(json_object_get(it, "name"));
        if (rc == 0 && n && strcmp(n, o->name) == 0) {
            *cur = json_deep_copy(it);
            for (const char *const *k = answer_only; *k; k++) {
                json_object_del(*cur, *k);
            }
            break;
        }
    }
    json_decref(items);
    return rc;
}

static int plan_job(gp_cli_conn *c, gp_apply_step *s)
{
    const gp_k8s_object *o = s->obj;
    json_t *job = NULL;
    int rc = find_job(c, o, &job);
    int service = strcmp(gp_apply_kind(o), "service") == 0;
    const char *q = job && service ? "?dry_run=true&update=true" : "?dry_run=true";
    char path[64];
    snprintf(path, sizeof(path), "/v1/jobs%s", q);
    s->body = json_incref(o->doc);
    rc = rc ? rc : gp_cli_call(c, "POST", path, s->body, &s->dry);
    if (rc != 0 && o->privileged_at[0] &&
        strncmp(gp_cli_last_refusal(c), "privileged: ", 12) == 0) {
        /* the server's field is the manifest's: name it there */
        fprintf(stderr, "gpupool apply: %s: %s: refused by the server: %s\n", o->source_kind,
                o->privileged_at, gp_cli_last_refusal(c) + 12);
    }
    if (rc != 0) {
        json_decref(job);
        return rc;
    }
    if (!job) {
        s->action = GP_APPLY_CREATE;
    } else if (json_equal(json_object_get(job, "spec"), json_object_get(s->dry, "spec"))) {
        s->action = GP_APPLY_UNCHANGED;
    } else if (service) {
        s->action = GP_APPLY_UPDATE;
    } else {
        fprintf(stderr,
                "gpupool apply: job/%s: refused: job %lld (%s) of that name is active with "
                "another spec; a batch job's spec cannot change: delete it first (gpupool "
                "delete -f, or gpupool cancel %lld) and apply again\n",
                o->name, (long long)json_integer_value(json_object_get(job, "id")),
                json_string_value(json_object_get(job, "state")),
                (long long)json_integer_value(json_object_get(job, "id")));
        rc = GP_EXIT_FAILURE;
    }
    json_decref(job);
    return rc;
}

static int plan_object(gp_cli_conn *c, gp_apply_step *s)
{
    const gp_k8s_object *o = s->obj;
    json_t *cur = NULL;
    int rc = find_object(c, o, &cur);
    if (rc != 0) {
        return rc;
    }
    char path[256];
    if (!cur) {
        s->action = GP_APPLY_CREATE;
        s->body = json_incref(o->doc);
        snprintf(path, sizeof(path), "%s?dry_run=true", paths[o->target]);
        return gp_cli_call(c, "POST", path, s->body, &s->dry);
    }
    s->body = json_deep_copy(cur);
    json_object_update(s->body, o->doc);
    if (gp_cli_path(path, sizeof(path) - 16, paths[o->target], o->name, NULL) < 0) {
        json_decref(cur);
        return GP_EXIT_FAILURE;
    }
    strcat(path, "?dry_run=true");
    rc = gp_cli_call(c, "PUT", path, s->body, &s->dry);
    if (rc == 0) {
        for (const char *const *k = answer_only; *k; k++) {
            json_object_del(s->dry, *k);
        }
        s->action = json_equal(s->dry, cur) ? GP_APPLY_UNCHANGED : GP_APPLY_UPDATE;
    }
    json_decref(cur);
    return rc;
}

/* Whether the job of step s names an object that an earlier step creates. */
static int names_new(const gp_apply_step *steps, const gp_apply_step *s)
{
    static const char *const fields[] = {"priority_class", "queue", "tenant"};
    for (const gp_apply_step *p = steps; p < s && rank(p->obj->target) < 3; p++) {
        const char *field = fields[rank(p->obj->target)];
        const char *v = json_string_value(json_object_get(s->obj->doc, field));
        if (p->action == GP_APPLY_CREATE && v && strcmp(v, p->obj->name) == 0) {
            return 1;
        }
    }
    return 0;
}

static int by_rank(const void *a, const void *b)
{
    const gp_apply_step *x = a, *y = b;
    int d = rank(x->obj->target) - rank(y->obj->target);
    return d ? d : (x->obj < y->obj ? -1 : x->obj > y->obj);
}

int gp_apply_plan(gp_cli_conn *c, const gp_k8s_result *r, gp_apply_step **steps)
{
    *steps = NULL;
    gp_apply_step *s = calloc(r->nobjects ? r->nobjects : 1, sizeof(*s));
    if (!s) {
        fprintf(stderr, "gpupool apply: out of memory\n");
        return GP_EXIT_FAILURE;
    }
    for (size_t i = 0; i < r->nobjects; i++) {
        s[i].obj = &r->objects[i];
    }
    qsort(s, r->nobjects, sizeof(*s), by_rank);
    int failed = 0;
    for (size_t i = 0; i < r->nobjects; i++) {
        if (s[i].obj->target == GP_K8S_JOB && names_new(s, &s[i])) {
            s[i].deferred = 1;
            continue;
        }
        int rc = s[i].obj->target == GP_K8S_JOB ? plan_job(c, &s[i]) : plan_object(c, &s[i]);
        if (rc != 0) {
            fprintf(stderr, "gpupool apply: %s/%s (from %s): refused by the server (above)\n",
                    gp_apply_kind(s[i].obj), s[i].obj->name, s[i].obj->source_kind);
            failed = 1;
        }
    }
    if (failed) {
        gp_apply_steps_free(s, r->nobjects);
        fprintf(stderr, "gpupool apply: nothing applied\n");
        return GP_EXIT_FAILURE;
    }
    *steps = s;
    return 0;
}

/* One step; *resp the server's answer (a new reference; the dry run's for an unchanged one). */
static int run_step(gp_cli_conn *c, gp_apply_step *s, json_t **resp)
{
    const gp_k8s_object *o = s->obj;
    char path[256];
    int rc = 0;
    *resp = NULL;
    if (s->action == GP_APPLY_UNCHANGED) {
        *resp = json_incref(s->dry);
        return 0;
    }
    if (o->target == GP_K8S_JOB) {
        snprintf(path, sizeof(path), "/v1/jobs%s",
                 s->action == GP_APPLY_UPDATE ? "?update=true" : "");
        rc = gp_cli_call(c, "POST", path, s->body, resp);
    } else if (s->action == GP_APPLY_CREATE) {
        rc = gp_cli_call(c, "POST", paths[o->target], s->body, resp);
    } else if (gp_cli_path(path, sizeof(path), paths[o->target], o->name, NULL) < 0) {
        rc = GP_EXIT_FAILURE;
    } else {
        rc = gp_cli_call(c, "PUT", path, s->body, resp);
    }
    return rc;
}

/* Plans the deferred jobs, now that what they name exists. */
static int plan_deferred(gp_cli_conn *c, gp_apply_step *steps, size_t n)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (steps[i].deferred && plan_job(c, &steps[i]) != 0) {
            fprintf(stderr, "gpupool apply: job/%s: refused by the server (above)\n",
                    steps[i].obj->name);
            failed = 1;
        }
    }
    if (failed) {
        fprintf(stderr, "gpupool apply: the priority classes, queues and tenants above were "
                        "applied; no job was\n");
    }
    return failed ? GP_EXIT_FAILURE : 0;
}

/* One step's line, or its entry in items (-o json|yaml). */
static void report(const gp_apply_step *s, const char *out, json_t *resp, json_t *items)
{
    static const char *const said[] = {"unchanged", "created", "configured"};
    const char *kind = gp_apply_kind(s->obj);
    if (items) {
        json_array_append_new(items,
                              json_pack("{s:s, s:s, s:s, s:O?}", "kind", kind, "name", s->obj->name,
                                        "action", said[s->action], "server", resp));
    } else if (out) {
        printf("%s/%s\n", kind, s->obj->name);
    } else {
        printf("%s/%s %s\n", kind, s->obj->name, said[s->action]);
    }
}

int gp_apply_run(gp_cli_conn *c, gp_apply_step *steps, size_t n, const char *out)
{
    gp_out_format f = GP_OUT_JSON;
    json_t *items =
        out && strcmp(out, "name") != 0 && gp_out_format_parse(out, &f) == 0 ? json_array() : NULL;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (steps[i].obj->target == GP_K8S_JOB &&
            (i == 0 || steps[i - 1].obj->target != GP_K8S_JOB)) {
            rc = plan_deferred(c, steps, n);
            if (rc != 0) {
                break;
            }
        }
        json_t *resp = NULL;
        rc = run_step(c, &steps[i], &resp);
        if (rc != 0) {
            fprintf(stderr,
                    "gpupool apply: %s/%s: failed (above); the objects listed before it "
                    "were applied\n",
                    gp_apply_kind(steps[i].obj), steps[i].obj->name);
        } else {
            report(&steps[i], out, resp, items);
        }
        json_decref(resp);
    }
    if (items) {
        json_t *doc = json_pack("{s:o}", "items", items);
        if (!doc || gp_out_doc(stdout, f, doc) < 0) {
            rc = rc ? rc : GP_EXIT_FAILURE;
        }
        json_decref(doc);
    }
    return rc;
}

void gp_apply_steps_free(gp_apply_step *steps, size_t n)
{
    for (size_t i = 0; steps && i < n; i++) {
        json_decref(steps[i].body);
        json_decref(steps[i].dry);
    }
    free(steps);
}

/* One object deleted (quota_only: a tenant's quota removed). 0, 1 (not found) or an error. */
static int delete_one(gp_cli_conn *c, const gp_k8s_object *o, int quota_only)
{
    json_t *cur = NULL, *resp = NULL;
    char path[256];
    int rc = o->target == GP_K8S_JOB ? find_job(c, o, &cur) : find_object(c, o, &cur);
    if (rc != 0 || !cur) {
        return rc ? rc : 1;
    }
    if (o->target == GP_K8S_JOB) {
        snprintf(path, sizeof(path), "/v1/jobs/%lld/cancel",
                 (long long)json_integer_value(json_object_get(cur, "id")));
        rc = gp_cli_call(c, "POST", path, NULL, &resp);
    } else if (gp_cli_path(path, sizeof(path), paths[o->target], o->name, NULL) < 0) {
        rc = GP_EXIT_FAILURE;
    } else if (quota_only) {
        json_object_del(cur, "quota");
        rc = gp_cli_call(c, "PUT", path, cur, &resp);
    } else {
        rc = gp_cli_call(c, "DELETE", path, NULL, &resp);
    }
    json_decref(resp);
    json_decref(cur);
    return rc;
}

int gp_apply_delete(gp_cli_conn *c, const gp_k8s_result *r)
{
    int failed = 0;
    for (int want = 3; want >= 0; want--) {
        for (size_t i = 0; i < r->nobjects; i++) {
            const gp_k8s_object *o = &r->objects[i];
            if (rank(o->target) != want) {
                continue;
            }
            int quota_only = strncmp(o->source_kind, "ResourceQuota/", 14) == 0;
            int rc = delete_one(c, o, quota_only);
            if (rc == 1) {
                fprintf(stderr, "gpupool delete: %s/%s: not found\n", gp_apply_kind(o), o->name);
            } else if (rc == 0) {
                printf("%s/%s %s\n", gp_apply_kind(o), o->name,
                       o->target == GP_K8S_JOB ? "cancelled"
                       : quota_only            ? "quota removed"
                                               : "deleted");
            }
            failed |= rc != 0;
        }
    }
    return failed ? GP_EXIT_FAILURE : 0;
}

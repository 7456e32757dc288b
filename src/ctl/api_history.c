/*
 * GET /v1/jobs/{job}/metrics and GET /v1/tenants/{tenant}/metrics: the history the controller
 * keeps (history.h) as points over a range.
 *
 * Query: from and to (a time: "now", relative "-1h" or "now-15m", unix seconds, a date or an
 * RFC 3339 time; default: the hour up to now, or up to the end of a job that ended), step (a
 * duration, "30s"; default: the smallest step of the tier that gives at most 300 points). The
 * answer's step is a whole multiple of the step of the tier that holds from (10 s, 2 min or
 * 30 min), and its points are aligned to multiples of it; a point without samples is null.
 * Bad input answers 400 naming the parameter; a job or tenant the caller may not see, 404.
 */
#include "ctl/api.h"
#include "ctl/history.h"

#include "gpupool/history.h"
#include "gpupool/meter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HOUR_MS INT64_C(3600000)

/* One of from and to into *ms (left alone when absent). 0, or GP_EINVAL after answering. */
static int time_param(api_req *rq, const char *key, int64_t now, int64_t *ms)
{
    const char *v = gp_http_request_query(rq->http, key);
    if (v && gp_hist_parse_time(v, now, ms) != 0) {
        api_error(rq, GP_EINVAL,
                  "%s: must be now, a time relative to now (-1h, now-15m), unix seconds, a date "
                  "(2024-05-01) or an RFC 3339 time (2024-05-01T12:00:00Z)",
                  key);
        return GP_EINVAL;
    }
    return 0;
}

/* The plan of the request's range; end: the newest time with data (now, or the job's end).
 * 0, or GP_EINVAL after answering 400. */
static int read_plan(api_req *rq, int64_t now, int64_t end, gp_hist_plan *p)
{
    int64_t to = end, from, step = 0;
    if (time_param(rq, "to", now, &to) < 0) {
        return GP_EINVAL;
    }
    from = to - HOUR_MS;
    if (time_param(rq, "from", now, &from) < 0) {
        return GP_EINVAL;
    }
    const char *v = gp_http_request_query(rq->http, "step");
    if (v && gp_hist_parse_duration(v, &step) != 0) {
        api_error(rq, GP_EINVAL, "step: must be a duration above 0 (10s, 5m, 1h)");
        return GP_EINVAL;
    }
    if (from < 0 || to < 0) {
        api_error(rq, GP_EINVAL, "%s: must not be before 1970", from < 0 ? "from" : "to");
        return GP_EINVAL;
    }
    int rc = gp_hist_plan_make(end, from, to, step, p);
    if (rc == GP_EINVAL) {
        api_error(rq, rc, "from: must not be after to");
    } else if (rc == GP_ERANGE) {
        api_error(rq, rc,
                  "step: too small for the range: at most %d points (a step of at least %llds)",
                  GP_HIST_MAX_POINTS, (long long)((to - from) / GP_HIST_MAX_POINTS / 1000 + 1));
    }
    return rc < 0 ? GP_EINVAL : 0;
}

static json_t *number(double v)
{
    return json_real(round(v * 1000) / 1000);
}

/* {"metric", "unit", ["replica"], "mean", "min", "max"}: a point without samples is null. */
static json_t *series_doc(const char *metric, const char *unit, int replica,
                          const gp_hist_point *pts, int n)
{
    json_t *mean = json_array(), *min = json_array(), *max = json_array();
    for (int i = 0; i < n; i++) {
        bool any = pts[i].n > 0;
        json_array_append_new(mean, any ? number(gp_hist_point_mean(&pts[i])) : json_null());
        json_array_append_new(min, any ? number(pts[i].min) : json_null());
        json_array_append_new(max, any ? number(pts[i].max) : json_null());
    }
    json_t *doc = json_pack("{s:s, s:s, s:o, s:o, s:o}", "metric", metric, "unit", unit, "mean",
                            mean, "min", min, "max", max);
    if (doc && replica >= 0) {
        json_object_set_new(doc, "replica", json_integer(replica));
    }
    return doc;
}

/* The frame of an answer: from, to (of the points), step_s, times (each point's start, unix
 * seconds) and an empty series list. */
static json_t *frame(const gp_hist_plan *p)
{
    char from[40], to[40];
    gp_meter_time_text(p->first_ms, from, sizeof(from));
    gp_meter_time_text(p->first_ms + (int64_t)p->npoints * p->step_ms, to, sizeof(to));
    json_t *times = json_array();
    for (int i = 0; i < p->npoints; i++) {
        json_array_append_new(times, json_integer((p->first_ms + i * p->step_ms) / 1000));
    }
    return json_pack("{s:s, s:s, s:I, s:o, s:[]}", "from", from, "to", to, "step_s",
                     (json_int_t)(p->step_ms / 1000), "times", times, "series");
}

/* Appends the series of metric m of job id (replica < 0: the job's) to doc's series. */
static int add_job_series(api_req *rq, json_t *doc, int64_t id, int replica, ctl_hist_metric m,
                          const gp_hist_plan *p)
{
    gp_hist_point *pts = calloc((size_t)p->npoints, sizeof(*pts));
    if (!pts) {
        return GP_ENOMEM;
    }
    ctl_history_fill(rq->g, &id, 1, replica, m, p, pts);
    json_t *s =
        series_doc(ctl_hist_metric_name(m), ctl_hist_metric_unit(m), replica, pts, p->npoints);
    free(pts);
    return s && json_array_append_new(json_object_get(doc, "series"), s) == 0 ? 0 : GP_ENOMEM;
}

void api_jobs_metrics(api_req *rq)
{
    int64_t now = ctl_now_ms();
    ctl_read_lock(rq->g);
    ctl_job *j = ctl_job_find(&rq->g->st, rq->params[0], api_scope(rq));
    int64_t id = j ? j->id : 0, end = now;
    int nreplicas = j ? j->spec.replicas : 0;
    char name[GP_NAME_MAX] = "";
    if (j) {
        snprintf(name, sizeof(name), "%s", j->name);
        end = ctl_job_state_final(j->state) && j->end_ms > 0 && j->end_ms < now ? j->end_ms : now;
    }
    ctl_read_unlock(rq->g);
    if (!j) {
        api_error(rq, GP_ENOENT, "job %s: not found", rq->params[0]);
        return;
    }
    gp_hist_plan p;
    if (read_plan(rq, now, end, &p) < 0) {
        return;
    }
    json_t *doc = frame(&p);
    int rc = doc ? 0 : GP_ENOMEM;
    if (rc == 0) {
        json_object_set_new(doc, "job", json_integer(id));
        json_object_set_new(doc, "name", json_string(name));
    }
    unsigned own = ctl_history_replicas(rq->g, id, nreplicas);
    for (int m = 0; rc == 0 && m < CTL_HIST_NJOB; m++) {
        rc = add_job_series(rq, doc, id, -1, (ctl_hist_metric)m, &p);
        for (int r = 0; rc == 0 && r < CTL_HISTORY_REPLICAS && r < nreplicas; r++) {
            rc = (own >> r) & 1 ? add_job_series(rq, doc, id, r, (ctl_hist_metric)m, &p) : 0;
        }
    }
    if (rc < 0) {
        json_decref(doc);
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    api_reply(rq, 200, doc);
}

void api_tenants_metrics(api_req *rq)
{
    int64_t now = ctl_now_ms();
    ctl_read_lock(rq->g);
    ctl_tenant *t = ctl_tenant_by_name(&rq->g->st, rq->params[0]);
    if (t && api_scope(rq) && t->id != api_scope(rq)) {
        t = NULL;
    }
    int64_t id = t ? t->id : 0;
    ctl_read_unlock(rq->g);
    if (!id) {
        api_error(rq, GP_ENOENT, "tenant %s: not found", rq->params[0]);
        return;
    }
    gp_hist_plan p;
    if (read_plan(rq, now, now, &p) < 0) {
        return;
    }
    json_t *doc = frame(&p);
    gp_hist_point *pts = calloc((size_t)p.npoints, sizeof(*pts));
    int rc = doc && pts ? 0 : GP_ENOMEM;
    if (rc == 0) {
        json_object_set_new(doc, "tenant", json_string(rq->params[0]));
    }
    for (int m = 0; rc == 0 && m < CTL_HIST_NTENANT; m++) {
        memset(pts, 0, (size_t)p.npoints * sizeof(*pts));
        ctl_history_tenant_fill(rq->g, id, (ctl_hist_tenant_metric)m, &p, pts);
        json_t *s =
            series_doc(ctl_hist_tenant_metric_name((ctl_hist_tenant_metric)m),
                       ctl_hist_tenant_metric_unit((ctl_hist_tenant_metric)m), -1, pts, p.npoints);
        rc = s && json_array_append_new(json_object_get(doc, "series"), s) == 0 ? 0 : GP_ENOMEM;
    }
    free(pts);
    if (rc < 0) {
        json_decref(doc);
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    api_reply(rq, 200, doc);
}

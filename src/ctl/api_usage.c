/*
 * GET /v1/usage: the metering report (docs/billing.md) — GPU-hours allocated and used, CPU
 * core-hours, memory GiB-hours and cost, grouped by tenant, queue, node, job or GPU model and
 * split into UTC days, ISO weeks or calendar months, over [from, to) (default: this month).
 *
 * Admins and operators see every tenant; a user's report covers only the rows of its own tenant,
 * whatever the grouping. The rows come from the usage ledger through the store's second
 * connection; open rows run to now, with the used figure memory has for them. The math is
 * libgpcore's (gpupool/meter.h): cost is exact to the cent and the rows add up to the total.
 *
 * format=csv or xlsx answers the same report as a file to download (net/usage_doc.h, the
 * writer of `gpupool usage -o csv|xlsx`), with Content-Disposition: attachment and a file name
 * naming the grouping and the range; so does an explicit format=json. The workbook goes
 * through a temporary file in data_dir, removed before the answer.
 */
#include "ctl/api.h"
#include "ctl/meter.h"
#include "net/usage_doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct usage_row {
    gp_usage_rec rec;
    char job[24];
} usage_row;

typedef struct usage_rows {
    usage_row *v;
    int n, cap;
} usage_rows;

static int collect(void *ctx, const gp_usage_rec *r)
{
    usage_rows *u = ctx;
    if (u->n == u->cap) {
        int ncap = u->cap ? u->cap * 2 : 256;
        usage_row *nv = realloc(u->v, sizeof(*nv) * (size_t)ncap);
        if (!nv) {
            return GP_ENOMEM;
        }
        u->v = nv;
        u->cap = ncap;
    }
    u->v[u->n].rec = *r;
    snprintf(u->v[u->n].job, sizeof(u->v[u->n].job), "%lld", (long long)r->job_id);
    u->n++;
    return 0;
}

static int parse_query(api_req *rq, gp_meter_query *q, int64_t now)
{
    const char *by = gp_http_request_query(rq->http, "by");
    const char *period = gp_http_request_query(rq->http, "period");
    if (by && gp_meter_by_parse(by, &q->by) < 0) {
        api_error(rq, GP_EINVAL, "by: must be tenant, queue, node, job or model");
        return GP_EINVAL;
    }
    if (period && gp_meter_period_parse(period, &q->period) < 0) {
        api_error(rq, GP_EINVAL, "period: must be day, week, month or none");
        return GP_EINVAL;
    }
    q->from_ms = gp_meter_period_start(now, GP_METER_MONTH);
    q->to_ms = gp_meter_period_next(q->from_ms, GP_METER_MONTH);
    if (api_time_param(rq, "from", &q->from_ms) < 0 || api_time_param(rq, "to", &q->to_ms) < 0) {
        return GP_EINVAL;
    }
    if (q->from_ms >= q->to_ms) {
        api_error(rq, GP_EINVAL, "from: must be before to");
        return GP_EINVAL;
    }
    return 0;
}

#define MILLI_MS_PER_HOUR 3.6e9 /* milli x ms in one unit-hour */

static json_t *row_doc(const gp_meter_row *r, bool priced, bool with_key)
{
    char buf[40];
    json_t *doc = json_object();
    if (with_key) {
        gp_meter_time_text(r->period_start_ms, buf, sizeof(buf));
        json_object_set_new(doc, "key", json_string(r->key));
        json_object_set_new(doc, "period_start", json_string(buf));
    }
    json_object_set_new(doc, "gpu_hours", json_real((double)r->gpu_milli_ms / MILLI_MS_PER_HOUR));
    json_object_set_new(doc, "gpu_hours_used",
                        json_real((double)r->used_milli_ms / MILLI_MS_PER_HOUR));
    json_object_set_new(doc, "cpu_core_hours",
                        json_real((double)r->cpu_milli_ms / MILLI_MS_PER_HOUR));
    json_object_set_new(doc, "memory_gib_hours",
                        json_real((double)r->memory_mib_ms / (1024.0 * 3.6e6)));
    if (priced) {
        gp_meter_cents_text(r->cost_cents, buf, sizeof(buf));
        json_object_set_new(doc, "cost", json_string(buf));
        json_object_set_new(doc, "gpu_hours_unpriced",
                            json_real((double)r->unpriced_milli_ms / MILLI_MS_PER_HOUR));
    } else {
        json_object_set_new(doc, "cost", json_null());
    }
    return doc;
}

static json_t *report_doc(const gp_meter_query *q, const gp_meter_report *r,
                          const gp_meter_prices *prices, int64_t now)
{
    char from[40], to[40], as_of[40];
    gp_meter_time_text(q->from_ms, from, sizeof(from));
    gp_meter_time_text(q->to_ms, to, sizeof(to));
    gp_meter_time_text(now, as_of, sizeof(as_of));
    json_t *rows = json_array();
    for (int i = 0; i < r->nrows; i++) {
        json_array_append_new(rows, row_doc(&r->rows[i], r->priced, true));
    }
    return json_pack("{s:s, s:s, s:I, s:I, s:s, s:o, s:s, s:s, s:o, s:o}", "from", from, "to", to,
                     "from_ms", (json_int_t)q->from_ms, "to_ms", (json_int_t)q->to_ms, "as_of",
                     as_of, "currency", prices ? json_string(prices->currency) : json_null(), "by",
                     gp_meter_by_name(q->by), "period", gp_meter_period_name(q->period), "rows",
                     rows, "total", row_doc(&r->total, r->priced, false));
}

typedef enum usage_format { U_JSON, U_CSV, U_XLSX } usage_format;

static const char *const format_names[] = {"json", "csv", "xlsx"};
static const char *const format_types[] = {
    "application/json", "text/csv; charset=utf-8",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"};

/* The format query parameter: 0 with *f set (json when absent), or GP_EINVAL answered. */
static int parse_format(api_req *rq, usage_format *f, bool *download)
{
    const char *v = gp_http_request_query(rq->http, "format");
    *f = U_JSON;
    *download = v != NULL;
    for (int i = 0; v && i < 3; i++) {
        if (strcmp(v, format_names[i]) == 0) {
            *f = (usage_format)i;
            return 0;
        }
    }
    if (v) {
        api_error(rq, GP_EINVAL, "format: must be json, csv or xlsx");
        return GP_EINVAL;
    }
    return 0;
}

/* Answers the report doc (taken) as a file of format f to download. */
static void reply_file(api_req *rq, json_t *doc, usage_format f)
{
    char *body = NULL;
    size_t len = 0;
    int rc = 0;
    if (f == U_JSON) {
        body = json_dumps(doc, JSON_COMPACT);
        len = body ? strlen(body) : 0;
        rc = body ? 0 : GP_ENOMEM;
    } else if (f == U_CSV) {
        FILE *m = open_memstream(&body, &len);
        rc = m ? gp_usage_csv(doc, m) : GP_ENOMEM;
        if (m && fclose(m) != 0 && rc == 0) {
            rc = GP_ENOMEM;
        }
    } else {
        rc = gp_usage_xlsx(doc, rq->g->cfg->data_dir, &body, &len);
    }
    if (rc < 0) {
        free(body);
        json_decref(doc);
        api_error(rq, rc, "usage as %s: %s", format_names[f],
                  rc == GP_ENOMEM ? "out of memory" : "cannot write the file in data_dir");
        return;
    }
    char name[160], disposition[200];
    gp_usage_filename(doc, format_names[f], name, sizeof(name));
    snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s\"", name);
    json_decref(doc);
    gp_http_response_set_body(rq->resp, 200, format_types[f], body, len);
    gp_http_response_add_header(rq->resp, "Content-Disposition", disposition);
}

void api_usage(api_req *rq)
{
    gpupoold *g = rq->g;
    int64_t now = ctl_now_ms();
    gp_meter_query q = {0, 0, GP_METER_BY_TENANT, GP_METER_NONE};
    usage_format format;
    bool download;
    if (parse_format(rq, &format, &download) < 0 || parse_query(rq, &q, now) < 0) {
        return;
    }
    usage_rows u = {NULL, 0, 0};
    gp_usage_filter f = {.from_ms = q.from_ms, .to_ms = q.to_ms, .tenant_id = api_scope(rq)};
    gp_diag d;
    gp_diag_clear(&d);
    pthread_mutex_lock(&g->reader_lock);
    int rc = gp_store_usage_each(g->reader, &f, collect, &u, &d);
    pthread_mutex_unlock(&g->reader_lock);
    if (rc == GP_ENOMEM) {
        gp_diag_set(&d, rc, "out of memory");
    }
    gp_meter_interval *iv = rc == 0 ? calloc((size_t)u.n + 1, sizeof(*iv)) : NULL;
    if (rc == 0 && !iv) {
        rc = gp_diag_set(&d, GP_ENOMEM, "out of memory");
    }
    ctl_read_lock(g); /* the used figures of open rows are the committer's */
    for (int i = 0; rc == 0 && i < u.n; i++) {
        gp_usage_rec *r = &u.v[i].rec;
        if (!r->end_ms) {
            r->used_gpu_milli_ms =
                ctl_meter_used(g, r->job_id, r->replica, r->epoch, r->used_gpu_milli_ms);
        }
        /* The model's memory, so a price named by size finds it (gpupool/modelname.h). */
        int m = gp_cluster_find_model(g->st.cluster, r->model);
        iv[i].model_mem_mib = m >= 0 ? gp_cluster_model_info(g->st.cluster, m)->mem_mib : 0;
    }
    ctl_read_unlock(g);
    for (int i = 0; rc == 0 && i < u.n; i++) {
        const gp_usage_rec *r = &u.v[i].rec;
        gp_meter_kind kind = GP_METER_WHOLE;
        gp_meter_kind_parse(r->kind, &kind);
        int64_t mem = iv[i].model_mem_mib;
        iv[i] = (gp_meter_interval){
            .tenant = r->tenant,
            .queue = r->queue,
            .node = r->node,
            .job = u.v[i].job,
            .model = r->model,
            .kind = kind,
            .gpus = r->gpus,
            .milli = r->milli,
            .mig_profile = r->mig_profile,
            .cpu_milli = r->cpu_milli,
            .memory_mib = r->memory_mib,
            .start_ms = r->start_ms,
            .end_ms = r->end_ms ? r->end_ms : (now > r->start_ms ? now : r->start_ms),
            .used_milli_ms = r->used_gpu_milli_ms,
            .model_mem_mib = mem,
        };
    }
    gp_meter_report rep;
    const gp_meter_prices *prices = ctl_meter_prices(g);
    if (rc == 0) {
        rc = gp_meter_report_build(iv, u.n, prices, &q, &rep, &d);
    }
    if (rc < 0) {
        api_diag(rq, &d);
    } else {
        json_t *doc = report_doc(&q, &rep, prices, now);
        gp_meter_report_fini(&rep);
        if (download && doc) {
            reply_file(rq, doc, format);
        } else {
            api_reply(rq, 200, doc);
        }
    }
    free(iv);
    free(u.v);
}

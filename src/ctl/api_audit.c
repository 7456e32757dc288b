/*
 * GET /v1/audit: the audit log (see audit.h), admins only, oldest first, with filters and the
 * same pagination as GET /v1/jobs (limit, after=NEXT).
 *
 * Read through the store's second connection (the committer's is busy writing); WAL lets the
 * read run beside a group's transaction and see only what is committed.
 */
#include "ctl/api.h"

#include <stdlib.h>
#include <string.h>

static int read_filter(api_req *rq, gp_audit_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->limit = 100;
    if (api_page(rq, "a record id", &f->limit, &f->after) < 0) {
        return GP_EINVAL;
    }
    if (api_time_param(rq, "since", &f->since_ms) < 0 ||
        api_time_param(rq, "until", &f->until_ms) < 0) {
        return GP_EINVAL;
    }
    f->actor = gp_http_request_query(rq->http, "actor");
    f->tenant = gp_http_request_query(rq->http, "tenant");
    f->action = gp_http_request_query(rq->http, "action");
    f->object = gp_http_request_query(rq->http, "object");
    return 0;
}

typedef struct page {
    json_t *items;
    int limit;
    bool more;
    int64_t last;
} page;

static int add_rec(void *ctx, const gp_audit_rec *r)
{
    page *pg = ctx;
    if ((int)json_array_size(pg->items) == pg->limit) {
        pg->more = true;
        return 1; /* one past the page: there is a next one */
    }
    json_t *detail = json_loads(r->detail, 0, NULL);
    json_array_append_new(pg->items, json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:o}", "id",
                                               (json_int_t)r->id, "time_ms", (json_int_t)r->time_ms,
                                               "actor", r->actor, "role", r->role, "tenant",
                                               r->tenant, "action", r->action, "object", r->object,
                                               "detail", detail ? detail : json_string(r->detail)));
    pg->last = r->id;
    return 0;
}

void api_audit_list(api_req *rq)
{
    gp_audit_filter f;
    if (read_filter(rq, &f) < 0) {
        return;
    }
    page pg = {.items = json_array(), .limit = f.limit};
    f.limit++;
    gp_diag d;
    gp_diag_clear(&d);
    pthread_mutex_lock(&rq->g->reader_lock);
    int rc = gp_store_audit_each(rq->g->reader, &f, add_rec, &pg, &d);
    pthread_mutex_unlock(&rq->g->reader_lock);
    if (rc < 0) {
        json_decref(pg.items);
        api_diag(rq, &d);
        return;
    }
    api_reply(rq, 200,
              json_pack("{s:o, s:o}", "items", pg.items, "next",
                        pg.more ? json_sprintf("%lld", (long long)pg.last) : json_null()));
}

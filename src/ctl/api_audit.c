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

/* n decimal digits at *p into *out, advancing *p. */
static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9') {
            return false;
        }
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static int64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int era = (y >= 0 ? y : y - 399) / 400;
    int yoe = y - era * 400;
    int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int64_t)era * 146097 + doe - 719468;
}

static int month_days(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* An RFC 3339 date-time ("2024-05-01T12:00:00Z", "2024-05-01T14:00:00.250+02:00") as
 * milliseconds since the epoch. 0, or -1 when s is not one. */
static int parse_rfc3339(const char *s, int64_t *ms)
{
    int y, mo, d, h, mi, sec, oh = 0, om = 0;
    const char *p = s;
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' ')) {
        return -1;
    }
    p++;
    if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
        !digits(&p, 2, &sec)) {
        return -1;
    }
    int frac = 0;
    if (*p == '.') {
        p++;
        int n = 0;
        for (; *p >= '0' && *p <= '9'; p++, n++) {
            frac = n < 3 ? frac * 10 + (*p - '0') : frac;
        }
        for (int k = n; k < 3; k++) {
            frac *= 10;
        }
        if (n == 0) {
            return -1;
        }
    }
    int sign = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p++ == '+' ? 1 : -1;
        if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59) {
            return -1;
        }
    } else {
        return -1;
    }
    if (*p || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 || mi > 59 ||
        sec > 60) {
        return -1;
    }
    int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    t -= sign * (oh * 3600 + om * 60);
    *ms = t * 1000 + frac;
    return 0;
}

/* A time query parameter: milliseconds since the epoch, or RFC 3339. */
static int parse_time(api_req *rq, const char *key, int64_t *ms)
{
    const char *v = gp_http_request_query(rq->http, key);
    if (!v) {
        return 0;
    }
    char *end;
    long long n = strtoll(v, &end, 10);
    if (v[0] >= '0' && v[0] <= '9' && !*end && n >= 0) {
        *ms = n;
        return 0;
    }
    if (parse_rfc3339(v, ms) == 0 && *ms > 0) {
        return 0;
    }
    api_error(rq, GP_EINVAL,
              "%s: must be milliseconds since the epoch or an RFC 3339 time "
              "(2024-05-01T12:00:00Z)",
              key);
    return GP_EINVAL;
}

static int read_filter(api_req *rq, gp_audit_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->limit = 100;
    if (api_page(rq, "a record id", &f->limit, &f->after) < 0) {
        return GP_EINVAL;
    }
    if (parse_time(rq, "since", &f->since_ms) < 0 || parse_time(rq, "until", &f->until_ms) < 0) {
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

/*
 * store_bench: the store's backends alone, through the public store API (store.h), on the URL
 * given (sqlite:PATH or postgresql://...; the store must be empty). It measures what the
 * controller asks of the store:
 *   - submits: J transactions of one job each (insert with an idempotency key, an event and an
 *     audit record), committed one by one;
 *   - a cycle: one transaction placing P of those jobs (placement, job update, event and usage
 *     row each), as a scheduling cycle commits its decisions;
 *   - a walk: every job read back (gp_store_job_each), as a start loads them.
 * Prints one machine-readable line per measure:
 *   store_bench backend=postgresql op=submit n=20000 seconds=... per_s=...
 * Usage: store_bench --url URL [--jobs 20000] [--place 10000]
 */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check(int rc, const char *what, const gp_diag *d)
{
    if (rc != 0) {
        fprintf(stderr, "store_bench: %s: %s\n", what, d->msg);
        exit(1);
    }
}

static void report(const gp_store *s, const char *op, int n, double seconds)
{
    printf("store_bench backend=%s op=%s n=%d seconds=%.3f per_s=%.0f\n", gp_store_backend(s), op,
           n, seconds, n / seconds);
    fflush(stdout);
}

static int count_job(void *ctx, const gp_job_rec *r, const char *spec, const char *status)
{
    (void)r, (void)spec, (void)status;
    (*(int *)ctx)++;
    return 0;
}

/* J submits, each its own transaction; the jobs' ids in ids. */
static void submits(gp_store *s, int64_t tenant, int jobs, int64_t *ids)
{
    gp_diag d;
    static const char spec[] = "{\"command\":[\"sleep\",\"3600\"],\"resources\":{\"gpu_milli\":250,"
                               "\"gpu_memory_mib\":10240,\"cpu_milli\":1000,\"memory_mib\":4096}}";
    double t0 = now_s();
    for (int j = 0; j < jobs; j++) {
        gp_job_rec rec = {.tenant_id = tenant, .submit_time_ms = 1000 + j};
        snprintf(rec.name, sizeof(rec.name), "job-%d", j);
        snprintf(rec.idempotency_key, sizeof(rec.idempotency_key), "bench-%d", j);
        int created;
        check(gp_store_begin(s, &d), "begin", &d);
        check(gp_store_job_insert(s, &rec, spec, NULL, &created, &d), "job insert", &d);
        gp_event_rec ev = {.job_id = rec.id, .time_ms = rec.submit_time_ms};
        snprintf(ev.type, sizeof(ev.type), "Submitted");
        snprintf(ev.message, sizeof(ev.message), "submitted by bench");
        check(gp_store_event_add(s, &ev, &d), "event add", &d);
        gp_audit_rec a = {.time_ms = rec.submit_time_ms,
                          .actor = "bench",
                          .role = "user",
                          .tenant = "bench",
                          .action = "job.submit",
                          .object = rec.name};
        check(gp_store_audit_add(s, &a, &d), "audit add", &d);
        check(gp_store_commit(s, &d), "commit", &d);
        ids[j] = rec.id;
    }
    report(s, "submit", jobs, now_s() - t0);
}

/* One transaction placing the first P jobs on the nodes. */
static void cycle(gp_store *s, int64_t tenant, const int64_t *ids, int place, const int64_t *nodes,
                  int nnodes)
{
    gp_diag d;
    double t0 = now_s();
    check(gp_store_begin(s, &d), "begin", &d);
    int64_t epoch;
    for (int j = 0; j < place; j++) {
        check(gp_store_next_epoch(s, &epoch, &d), "epoch", &d);
        gp_placement_rec p = {
            .job_id = ids[j], .replica = 0, .node_id = nodes[j % nnodes], .epoch = epoch};
        check(gp_store_placement_put(s, &p, "{\"gpus\":[0],\"milli\":250}", &d), "placement", &d);
        check(gp_store_job_update(s, ids[j], "Scheduled", "{\"placed\":true}", &d), "job update",
              &d);
        gp_event_rec ev = {.job_id = ids[j], .time_ms = 5000};
        snprintf(ev.type, sizeof(ev.type), "Scheduled");
        snprintf(ev.message, sizeof(ev.message), "placed by bench");
        check(gp_store_event_add(s, &ev, &d), "event add", &d);
        gp_usage_rec u = {.job_id = ids[j],
                          .epoch = epoch,
                          .tenant_id = tenant,
                          .tenant = "bench",
                          .queue = "default",
                          .node_id = nodes[j % nnodes],
                          .node = "node",
                          .kind = "fraction",
                          .gpus = 1,
                          .milli = 250,
                          .start_ms = 5000};
        check(gp_store_usage_open(s, &u, &d), "usage open", &d);
    }
    check(gp_store_commit(s, &d), "commit", &d);
    report(s, "cycle", place, now_s() - t0);
}

int main(int argc, char **argv)
{
    const char *url = NULL;
    int jobs = 20000, place = 10000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--url")) {
            url = argv[i + 1];
        } else if (!strcmp(argv[i], "--jobs")) {
            jobs = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--place")) {
            place = atoi(argv[i + 1]);
        } else {
            fprintf(stderr, "store_bench: unknown flag %s\n", argv[i]);
            return 2;
        }
    }
    if (!url || jobs < 1 || place < 0 || place > jobs) {
        fprintf(stderr, "usage: store_bench --url URL [--jobs J] [--place P <= J]\n");
        return 2;
    }
    gp_diag d;
    gp_store *s = NULL;
    check(gp_store_open_url(url, &s, &d), "open", &d);
    int64_t tenant = 0, nodes[100];
    check(gp_store_begin(s, &d), "begin", &d);
    check(gp_store_obj_put(s, GP_OBJ_TENANT, &tenant, "bench", "{}", &d), "tenant", &d);
    for (int n = 0; n < 100; n++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%d", n);
        nodes[n] = 0;
        check(gp_store_obj_put(s, GP_OBJ_NODE, &nodes[n], name, "{}", &d), "node", &d);
    }
    check(gp_store_commit(s, &d), "commit", &d);
    int64_t *ids = calloc((size_t)jobs, sizeof(*ids));
    submits(s, tenant, jobs, ids);
    if (place > 0) {
        cycle(s, tenant, ids, place, nodes, 100);
    }
    int seen = 0;
    double t0 = now_s();
    check(gp_store_job_each(s, count_job, &seen, &d), "job walk", &d);
    report(s, "walk", seen, now_s() - t0);
    free(ids);
    gp_store_close(s);
    return seen == jobs ? 0 : 1;
}

/*
 * The controller's rollback paths under fault injection: a real gpupoold (ctl_start_with, its
 * committer and HTTP API on 127.0.0.1, SQLite in a temp dir) whose committer's store is wrapped
 * in store_fault.h's wrapper. For each kind of transaction — API changes (a submit, a cancel that
 * ends a placement), a scheduling cycle's placements, a usage flush, the recovery tick and the
 * first start — the Nth store call fails, for every N until the transaction runs with no call
 * left to fail. After each run: memory equals a fresh load from the store (jobs and their states,
 * placements, the cluster model's allocations, nodes, objects, tokens, open usage rows); a failed
 * API change answered 5xx; and the next transaction of the same kind works. With the wrapper
 * counting every call, heartbeats that change nothing the store keeps make none (applied in
 * memory), while each kind that writes goes through a committer group.
 *
 * test_ctl_txn_faults runs on SQLite, test_ctl_txn_faults_pg with the store on PostgreSQL (the pg
 * fixture's server, a database of its own created again for each start: tests/unit/testdb.h).
 *
 * Scheduling cycles never run by themselves here (the committer's next cycle is pushed a day
 * away): the test runs them, so the count of store calls is the same on every run.
 */
#include "ctl/meter.h"
#include "ctl/recovery.h"
#include "ctl/server.h"
#include "net/http_client.h"
#include "store/store_fault.h"
#include "tests/unit/testdb.h"

#include "base/clock.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define MAX_N 1000

typedef struct pool {
    char dir[256];
    gp_ctl_config cfg;
    gpupoold g;
    gp_http_server *http;
    gp_http_client *admin;
    char base[64];
    gp_testdb db; /* the store (store.url) */
} pool;

static pool P;

/* ---- the pool ---- */

static int wrap(void *ctx, gp_store **s, gp_diag *d)
{
    gp_store *w = NULL;
    int rc = gp_store_fault_wrap(*s, ctx, &w, d);
    if (rc == 0) {
        *s = w;
    }
    return rc;
}

static void arm(uint64_t nth)
{
    gp_store_fault_plan plan = {.count = GP_STORE_FAULT_ANY, .nth = nth};
    assert_int_equal(gp_store_fault_arm(P.g.store, &plan), 0);
}

static void read_token(const char *name, char *buf, size_t cap)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", P.dir, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, (int)cap, f));
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

/* How often an elected controller (PostgreSQL, leader.h) renews its lease and a follower tries
 * it again. The sweeps of transactions want no renewal while they run (every store call is the
 * test's); the first-start sweep wants a start that failed at its fault to try again soon. */
static const char *renew_interval = "5m";

static void load_config(void)
{
    char *argv[] = {"gpupoold",
                    "--data-dir",
                    P.dir,
                    "--store-url",
                    P.db.url,
                    "--scheduler-interval",
                    "1h",
                    "--nodes-heartbeat-timeout",
                    "1h",
                    "--nodes-lost-timeout",
                    "1h",
                    "--billing-used-flush-interval",
                    "1h",
                    "--ha-lease-ttl",
                    "10m",
                    "--ha-renew-interval",
                    (char *)renew_interval};
    gp_ctl_cli cli;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(
        gp_ctl_config_load((int)(sizeof(argv) / sizeof(argv[0])), argv, NULL, &P.cfg, &cli, &d), 0);
}

/* On PostgreSQL: waits until this controller leads (a lead that failed at an injected fault
 * gives the lease up and takes it again at the next try). */
static void wait_leader(void)
{
    for (int i = 0; i < 400; i++) {
        char leader[256];
        if (ctl_ha_get(&P.g.ha, leader, sizeof(leader)) == CTL_HA_LEADER) {
            return;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fail_msg("no leadership within 20 s");
}

/* Starts gpupoold on P.dir with the store failing its nth call (0: none). Returns ctl_start's
 * result; on success the API listens and P.admin holds the admin token. */
static int start(uint64_t nth, uint64_t *injected)
{
    load_config();
    gp_store_fault_plan plan = {.count = GP_STORE_FAULT_ANY, .nth = nth};
    gp_diag d;
    gp_diag_clear(&d);
    int rc = ctl_start_with(&P.g, &P.cfg, wrap, &plan, &d);
    if (rc < 0) {
        assert_true(d.msg[0] != 0);
        *injected = 1;
        return rc;
    }
    if (P.db.pg) {
        wait_leader(); /* the election runs beside: the first start's writes are its */
    }
    *injected = gp_store_fault_injected(P.g.store);
    arm(0);
    /* No cycle by itself: the test runs them. */
    pthread_mutex_lock(&P.g.qlock);
    P.g.last_cycle_ms = gp_mono_ms() + 86400000;
    pthread_mutex_unlock(&P.g.qlock);
    gp_http_server_config hc = {.host = "127.0.0.1", .port = 0, .threads = 2, .max_body = 1 << 20};
    assert_int_equal(gp_http_server_start(&hc, ctl_http_handle, &P.g, &P.http, &d), 0);
    snprintf(P.base, sizeof(P.base), "http://127.0.0.1:%d", gp_http_server_port(P.http));
    char tok[256];
    read_token("admin.token", tok, sizeof(tok));
    assert_int_equal(gp_http_client_new(P.base, tok, &P.admin, &d), 0);
    return 0;
}

static void stop(void)
{
    gp_http_client_free(P.admin);
    P.admin = NULL;
    gp_http_server_stop(P.http);
    P.http = NULL;
    ctl_stop(&P.g);
}

static void make_dir(void)
{
    snprintf(P.dir, sizeof(P.dir), "/tmp/gp-txn-faults.XXXXXX");
    assert_non_null(mkdtemp(P.dir));
    char err[256];
    if (gp_testdb_init(&P.db, P.dir, "gpupool.db", err, sizeof(err)) < 0) {
        fail_msg("%s", err);
    }
}

static void remove_dir(void)
{
    gp_testdb_fini(&P.db);
    DIR *dp = opendir(P.dir);
    assert_non_null(dp);
    for (struct dirent *e; (e = readdir(dp));) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char path[600];
            snprintf(path, sizeof(path), "%s/%s", P.dir, e->d_name);
            unlink(path);
        }
    }
    closedir(dp);
    rmdir(P.dir);
}

/* ---- HTTP ---- */

/* Calls the API as c (NULL: the admin) with body (stolen; NULL: none); *out (may be NULL) gets
 * the answer. Returns the status. */
static int call(gp_http_client *c, const char *method, const char *path, json_t *body, json_t **out)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    int status = 0;
    char *resp = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_http_call(c ? c : P.admin, method, path, text, text ? strlen(text) : 0, NULL,
                          &status, &resp, NULL, &d);
    free(text);
    if (rc < 0) {
        fail_msg("%s %s: %s", method, path, d.msg);
    }
    json_t *doc = json_loads(resp, 0, NULL);
    free(resp);
    if (out) {
        *out = doc;
    } else {
        json_decref(doc);
    }
    return status;
}

static json_t *node_body(const char *name)
{
    json_t *gpus = json_array();
    for (int i = 0; i < 4; i++) {
        json_array_append_new(gpus, json_pack("{s:s+, s:s, s:i, s:i, s:[]}", "uuid", "GPU-", name,
                                              "model", "A100-80GB", "memory_mib", 81920, "numa", 0,
                                              "nvlink"));
        json_t *u = json_object_get(json_array_get(gpus, (size_t)i), "uuid");
        char uuid[64];
        snprintf(uuid, sizeof(uuid), "GPU-%s-%d", name, i);
        json_string_set(u, uuid);
    }
    return json_pack("{s:s, s:s, s:i, s:i, s:o}", "name", name, "address", "127.0.0.1:0",
                     "cpu_milli", 64000, "memory_mib", 262144, "gpus", gpus);
}

static void setup_pool(void)
{
    char tok[256];
    read_token("join.token", tok, sizeof(tok));
    gp_http_client *join = NULL;
    gp_diag d;
    assert_int_equal(gp_http_client_new(P.base, tok, &join, &d), 0);
    assert_int_equal(call(join, "POST", "/v1/nodes", node_body("n0"), NULL), 201);
    assert_int_equal(call(join, "POST", "/v1/nodes", node_body("n1"), NULL), 201);
    gp_http_client_free(join);
    assert_int_equal(call(NULL, "POST", "/v1/tenants", json_pack("{s:s}", "name", "t1"), NULL),
                     201);
}

/* A fresh data directory, gpupoold started on it with no fault, its two nodes and tenant. */
static void open_pool(void)
{
    make_dir();
    uint64_t injected;
    assert_int_equal(start(0, &injected), 0);
    setup_pool();
}

/* Submits a one-GPU job; its id, or -1 when the answer was not 201 (*status). */
static int64_t submit(int *status)
{
    static int seq;
    char name[32];
    snprintf(name, sizeof(name), "j%d", ++seq);
    json_t *res = NULL;
    *status = call(NULL, "POST", "/v1/jobs",
                   json_pack("{s:s, s:s, s:[s], s:{s:i}}", "name", name, "tenant", "t1", "command",
                             "true", "resources", "gpus", 1),
                   &res);
    int64_t id = *status == 201 ? json_integer_value(json_object_get(res, "id")) : -1;
    json_decref(res);
    return id;
}

static int64_t submit_ok(void)
{
    int status;
    int64_t id = submit(&status);
    assert_int_equal(status, 201);
    return id;
}

static int cancel(int64_t id)
{
    char path[64];
    snprintf(path, sizeof(path), "/v1/jobs/%lld/cancel", (long long)id);
    return call(NULL, "POST", path, json_object(), NULL);
}

static int schedule(void)
{
    gp_diag d;
    gp_diag_clear(&d);
    pthread_mutex_lock(&P.g.st.lock);
    int rc = ctl_schedule(&P.g, &d);
    ctl_desired_publish(&P.g.st);
    pthread_mutex_unlock(&P.g.st.lock);
    return rc;
}

static ctl_job_state job_state(int64_t id)
{
    pthread_mutex_lock(&P.g.st.lock);
    ctl_job *j = ctl_job_by_id(&P.g.st, id);
    ctl_job_state s = j ? j->state : CTL_NSTATES;
    pthread_mutex_unlock(&P.g.st.lock);
    return s;
}

/* Cancels every job that has not ended (faults off). Ids may have gaps: PostgreSQL's sequences
 * do not hand back the ids of rolled-back inserts. */
static void cancel_all(void)
{
    pthread_mutex_lock(&P.g.st.lock);
    int n = P.g.st.njobs;
    int64_t *ids = calloc((size_t)n + 1, sizeof(*ids));
    assert_non_null(ids);
    for (int i = 0; i < n; i++) {
        ids[i] = ctl_job_state_final(P.g.st.jobs[i]->state) ? 0 : P.g.st.jobs[i]->id;
    }
    pthread_mutex_unlock(&P.g.st.lock);
    for (int i = 0; i < n; i++) {
        if (ids[i] && !ctl_job_state_final(job_state(ids[i]))) {
            assert_int_equal(cancel(ids[i]), 200);
        }
    }
    free(ids);
}

/* ---- memory against the store ---- */

static json_t *cluster_doc(const ctl_state *st, const ctl_node *n)
{
    const gp_node *cn = gp_cluster_node(st->cluster, n->cl);
    json_t *gpus = json_array();
    for (int k = 0; k < cn->ngpus; k++) {
        const gp_gpu *gg = gp_cluster_gpu(st->cluster, n->cl, k);
        json_array_append_new(gpus,
                              json_pack("{s:i, s:I, s:i, s:i, s:i, s:i, s:i, s:i}", "milli_free",
                                        gg->milli_free, "mem_free", (json_int_t)gg->mem_free_mib,
                                        "holders", gg->holders, "mode", gg->mode, "mig_mem",
                                        gg->mig_mem_used, "mig_cmp", gg->mig_compute_used,
                                        "mig_inst", gg->mig_instances, "avail", gg->avail));
    }
    return json_pack("{s:I, s:I, s:o}", "cpu_free", (json_int_t)cn->cpu_free, "mem_free",
                     (json_int_t)cn->mem_free, "gpus", gpus);
}

static json_t *job_doc(const ctl_job *j)
{
    json_t *reps = json_array();
    for (int r = 0; j->replicas && r < j->spec.replicas; r++) {
        json_array_append_new(reps, json_pack("{s:I, s:I, s:o}", "node",
                                              (json_int_t)j->replicas[r].node_id, "epoch",
                                              (json_int_t)j->replicas[r].epoch, "a",
                                              ctl_assignment_doc(&j->replicas[r].a)));
    }
    json_t *doc = json_pack("{s:I, s:I, s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:I, s:o, s:o}", "id",
                            (json_int_t)j->id, "tenant", (json_int_t)j->tenant_id, "name", j->name,
                            "state", ctl_job_state_name(j->state), "reason", j->reason, "restarts",
                            j->restarts, "exit", j->exit_code, "submit", (json_int_t)j->submit_ms,
                            "start", (json_int_t)j->start_ms, "end", (json_int_t)j->end_ms, "spec",
                            gp_jobspec_to_json(&j->spec), "replicas", reps);
    /* services (service.h) */
    json_object_set_new(doc, "service",
                        json_pack("{s:I, s:i, s:i, s:i, s:I}", "owner", (json_int_t)j->owner,
                                  "revision", j->revision, "replicas", j->svc_replicas, "next",
                                  j->svc_next, "rollout", (json_int_t)j->svc_rollout_ms));
    /* arrays and dependencies (array.h) */
    json_t *after = json_array();
    for (int i = 0; i < j->nafter; i++) {
        json_array_append_new(after, json_integer(j->after_ids[i]));
    }
    json_object_set_new(doc, "batch",
                        json_pack("{s:o, s:b, s:i, s:i}", "after", after, "in_array", j->in_array,
                                  "index", j->in_array ? j->array_index : 0, "made",
                                  j->array_made));
    return doc;
}

/* What must be the same in memory and in the store. Memory-only fields (heartbeats, readiness,
 * fencing) are left out: a reload resets them on purpose. */
static json_t *state_doc(ctl_state *st)
{
    json_t *doc = json_object(), *a;
    json_object_set_new(doc, "tenants", a = json_array());
    for (int i = 0; i < st->ntenants; i++) {
        json_array_append_new(a, ctl_tenant_doc(st, &st->tenants[i]));
    }
    json_object_set_new(doc, "queues", a = json_array());
    for (int i = 0; i < st->nqueues; i++) {
        json_array_append_new(a, ctl_queue_doc(&st->queues[i]));
    }
    json_object_set_new(doc, "classes", a = json_array());
    for (int i = 0; i < st->npclasses; i++) {
        json_array_append_new(a, ctl_pclass_doc(&st->pclasses[i]));
    }
    json_object_set_new(doc, "nodes", a = json_array());
    for (int i = 0; i < st->nnodes; i++) {
        const ctl_node *n = &st->nodes[i];
        json_t *nd = ctl_node_doc(n);
        json_object_set_new(nd, "id", json_integer(n->id));
        json_object_set_new(nd, "cordoned", json_boolean(n->cordoned));
        json_object_set_new(nd, "draining", json_boolean(n->draining));
        json_object_set_new(nd, "cluster", cluster_doc(st, n));
        json_object_set_new(nd, "agent_token_id", json_integer(n->agent_token_id));
        json_object_set_new(nd, "older_agent_tokens", json_boolean(n->older_agent_tokens));
        json_array_append_new(a, nd);
    }
    json_object_set_new(doc, "jobs", a = json_array());
    for (int i = 0; i < st->njobs; i++) {
        json_array_append_new(a, job_doc(st->jobs[i]));
    }
    json_object_set_new(doc, "tokens", a = json_array());
    for (int i = 0; i < st->ntokens; i++) {
        const gp_token_rec *t = &st->tokens[i];
        json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s, s:i}", "id", (json_int_t)t->id,
                                           "name", t->name, "role", t->role, "hash", t->hash,
                                           "revoked", t->revoked));
    }
    json_object_set_new(doc, "pending", json_integer(st->npending));
    return doc;
}

static int collect_open(void *ctx, const gp_usage_rec *r)
{
    char key[96];
    snprintf(key, sizeof(key), "%lld/%d/%lld", (long long)r->job_id, r->replica,
             (long long)r->epoch);
    json_array_append_new(ctx, json_string(key));
    return 0;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys in arr, sorted, as one string (the caller frees it). */
static char *sorted_keys(json_t *arr)
{
    size_t n = json_array_size(arr);
    const char **v = calloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        v[i] = json_string_value(json_array_get(arr, i));
    }
    qsort(v, n, sizeof(*v), by_text);
    size_t cap = 16 + n * 96;
    char *out = calloc(1, cap);
    for (size_t i = 0; i < n; i++) {
        strcat(out, v[i]);
        strcat(out, " ");
    }
    free(v);
    return out;
}

/* Prints the first difference of two documents below what (cmocka's messages are short: the
 * differing part, not the whole state). */
static void print_difference(const char *what, json_t *mem, json_t *disk)
{
    if (json_is_object(mem) && json_is_object(disk) &&
        json_object_size(mem) == json_object_size(disk)) {
        const char *k;
        json_t *v;
        json_object_foreach(mem, k, v)
        {
            if (!json_equal(v, json_object_get(disk, k))) {
                char sub[256];
                snprintf(sub, sizeof(sub), "%s.%s", what, k);
                print_difference(sub, v, json_object_get(disk, k));
                return;
            }
        }
    }
    if (json_is_array(mem) && json_is_array(disk) &&
        json_array_size(mem) == json_array_size(disk)) {
        for (size_t i = 0; i < json_array_size(mem); i++) {
            if (!json_equal(json_array_get(mem, i), json_array_get(disk, i))) {
                char sub[256];
                snprintf(sub, sizeof(sub), "%s[%zu]", what, i);
                print_difference(sub, json_array_get(mem, i), json_array_get(disk, i));
                return;
            }
        }
    }
    char *m = json_dumps(mem, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    char *s = json_dumps(disk, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    print_error("%s\nmemory: %.700s\nstore:  %.700s\n", what, m ? m : "(none)", s ? s : "(none)");
    free(m);
    free(s);
}

static void expect_equal(const char *what, json_t *mem, json_t *disk)
{
    if (!json_equal(mem, disk)) {
        print_error("%s: memory differs from the store\n", what);
        print_difference("state", mem, disk);
        fail();
    }
}

/* Memory equals a fresh load from the store (a new connection: committed data only), and the
 * open usage rows are the live placements. */
static void check_consistent(const char *what)
{
    pthread_mutex_lock(&P.g.st.lock);
    assert_false(P.g.stale);
    json_t *mem = state_doc(&P.g.st);
    json_t *live = json_array();
    for (int i = 0; i < P.g.st.njobs; i++) {
        const ctl_job *j = P.g.st.jobs[i];
        for (int r = 0; j->replicas && r < j->spec.replicas; r++) {
            char key[96];
            snprintf(key, sizeof(key), "%lld/%d/%lld", (long long)j->id, r,
                     (long long)j->replicas[r].epoch);
            json_array_append_new(live, json_string(key));
        }
    }
    pthread_mutex_unlock(&P.g.st.lock);

    gp_store *s = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_store_open_url(P.db.url, &s, &d), 0);
    static ctl_state fresh;
    memset(&fresh, 0, sizeof(fresh));
    assert_int_equal(ctl_state_load(&fresh, s, &d), 0);
    json_t *disk = state_doc(&fresh);
    ctl_state_clear(&fresh);
    json_t *open = json_array();
    gp_usage_filter f = {.open_only = 1};
    assert_int_equal(gp_store_usage_each(s, &f, collect_open, open, &d), 0);
    gp_store_close(s);

    expect_equal(what, mem, disk);
    char *a = sorted_keys(live), *b = sorted_keys(open);
    if (strcmp(a, b) != 0) {
        print_error("%s: live placements [%s], open usage rows [%s]\n", what, a, b);
        fail();
    }
    free(a);
    free(b);
    json_decref(mem);
    json_decref(disk);
    json_decref(live);
    json_decref(open);
}

/* ---- the sweeps ---- */

/* One kind of transaction: prepare (faults off), act with the Nth call failing (returns 0 when
 * the change was made, else the failure: an HTTP status or a negative code), and check that the
 * next one works (faults off). */
typedef struct sweep {
    const char *name;
    void (*prepare)(void);
    int (*act)(void);
    void (*next)(void);
} sweep;

static void run_sweep(const sweep *s)
{
    int failed = 0;
    uint64_t n = 1;
    for (; n < MAX_N; n++) {
        s->prepare();
        arm(n);
        int rc = s->act();
        uint64_t injected = gp_store_fault_injected(P.g.store);
        arm(0);
        char what[128];
        snprintf(what, sizeof(what), "%s, call %llu failing", s->name, (unsigned long long)n);
        if (rc != 0) {
            failed++;
            if (!(rc < 0 || rc >= 500)) {
                fail_msg("%s: answered %d, not a 5xx", what, rc);
            }
            assert_true(injected > 0);
        }
        check_consistent(what);
        s->next();
        check_consistent(what);
        if (injected == 0) {
            break;
        }
    }
    assert_true(n < MAX_N);
    assert_true(failed > 0);
    print_message("%s: %llu store calls, %d runs failed, memory equal to the store after each\n",
                  s->name, (unsigned long long)(n - 1), failed);
}

/* A submit (job, event, audit record). */
static void nothing(void)
{
}

static int act_submit(void)
{
    int status;
    submit(&status);
    return status == 201 ? 0 : status;
}

static void next_submit(void)
{
    submit_ok();
}

/* A cancel ending a placement (placement, job, event, usage row, audit records). */
static int64_t victim;

static void prepare_cancel(void)
{
    cancel_all();
    victim = submit_ok();
    assert_int_equal(schedule(), 0);
    assert_int_equal(job_state(victim), CTL_SCHEDULED);
}

static int act_cancel(void)
{
    int status = cancel(victim);
    return status == 200 ? 0 : status;
}

static void next_cancel(void)
{
    ctl_job_state s = job_state(victim);
    if (!ctl_job_state_final(s)) {
        assert_int_equal(cancel(victim), 200);
    }
    assert_int_equal(job_state(victim), CTL_CANCELLED);
}

/* A scheduling cycle placing two jobs. */
static int64_t cyc[2];

static void prepare_cycle(void)
{
    cancel_all();
    cyc[0] = submit_ok();
    cyc[1] = submit_ok();
}

static int act_cycle(void)
{
    return schedule();
}

static void next_cycle(void)
{
    assert_int_equal(schedule(), 0);
    assert_int_equal(job_state(cyc[0]), CTL_SCHEDULED);
    assert_int_equal(job_state(cyc[1]), CTL_SCHEDULED);
}

/* A usage flush: a running replica reported busy, its used figure written. */
static int64_t flush_ms;

static void heartbeat_busy(int64_t id)
{
    pthread_mutex_lock(&P.g.st.lock);
    ctl_job *j = ctl_job_by_id(&P.g.st, id);
    assert_non_null(j->replicas);
    int64_t epoch = j->replicas[0].epoch;
    ctl_node *n = ctl_node_by_id(&P.g.st, j->replicas[0].node_id);
    char path[128];
    snprintf(path, sizeof(path), "/v1/nodes/%s/heartbeat", n->name);
    pthread_mutex_unlock(&P.g.st.lock);
    struct timespec ts = {0, 3000000};
    nanosleep(&ts, NULL); /* some time in use to count */
    json_t *body =
        json_pack("{s:[{s:I, s:i, s:I, s:s, s:i}]}", "replicas", "job", (json_int_t)id, "replica",
                  0, "epoch", (json_int_t)epoch, "state", "Running", "util", 50);
    assert_int_equal(call(NULL, "POST", path, body, NULL), 200);
}

static void prepare_flush(void)
{
    if (job_state(victim) != CTL_RUNNING) {
        cancel_all();
        victim = submit_ok();
        assert_int_equal(schedule(), 0);
        heartbeat_busy(victim); /* Running */
    }
    heartbeat_busy(victim);
}

static int act_flush(void)
{
    gp_diag d;
    gp_diag_clear(&d);
    pthread_mutex_lock(&P.g.st.lock);
    flush_ms += 2 * P.cfg.billing.used_flush_ms;
    int rc = ctl_meter_tick(&P.g, flush_ms, &d);
    pthread_mutex_unlock(&P.g.st.lock);
    return rc;
}

static int find_used(void *ctx, const gp_usage_rec *r)
{
    if (r->job_id == victim) {
        *(int64_t *)ctx = r->used_gpu_milli_ms;
    }
    return 0;
}

static void next_flush(void)
{
    assert_int_equal(act_flush(), 0);
    int64_t stored = -1;
    gp_diag d;
    gp_usage_filter f = {.open_only = 1};
    assert_int_equal(gp_store_usage_each(P.g.reader, &f, find_used, &stored, &d), 0);
    pthread_mutex_lock(&P.g.st.lock);
    int64_t epoch = ctl_job_by_id(&P.g.st, victim)->replicas[0].epoch;
    int64_t mem = ctl_meter_used(&P.g, victim, 0, epoch, stored);
    pthread_mutex_unlock(&P.g.st.lock);
    assert_true(stored > 0);
    assert_int_equal(stored, mem); /* what memory counted is what the ledger says */
}

/* The recovery tick: the node of a placed job is lost, the job restarted elsewhere. */
static void lose(int64_t id, bool *ended)
{
    pthread_mutex_lock(&P.g.st.lock);
    ctl_job *j = ctl_job_by_id(&P.g.st, id);
    assert_non_null(j->replicas);
    ctl_node *n = ctl_node_by_id(&P.g.st, j->replicas[0].node_id);
    int64_t now = ctl_now_ms();
    n->ready = false;
    n->heartbeat_ms = now - P.cfg.nodes.lost_timeout_ms - 1000;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = ctl_recovery_tick(&P.g, now, 0, &d);
    pthread_mutex_unlock(&P.g.st.lock);
    *ended = rc == 0;
}

/* Every node reports in with nothing running (unfenced, ready). */
static void nodes_report(void)
{
    assert_int_equal(
        call(NULL, "POST", "/v1/nodes/n0/heartbeat", json_pack("{s:[]}", "replicas"), NULL), 200);
    assert_int_equal(
        call(NULL, "POST", "/v1/nodes/n1/heartbeat", json_pack("{s:[]}", "replicas"), NULL), 200);
}

static void prepare_recovery(void)
{
    cancel_all();
    nodes_report();
    victim = submit_ok();
    assert_int_equal(schedule(), 0);
    assert_int_equal(job_state(victim), CTL_SCHEDULED);
}

static int act_recovery(void)
{
    bool ended;
    lose(victim, &ended);
    return ended ? 0 : -1;
}

static void next_recovery(void)
{
    if (job_state(victim) == CTL_SCHEDULED) {
        bool ended;
        lose(victim, &ended);
        assert_true(ended);
    }
    /* its placement ended with the node (failed: its restart policy is Never) */
    assert_false(ctl_job_state_holds(job_state(victim)));
}

/* A re-registration by the node's own agent (a new agent token, the older ones but the
 * caller's revoked, the node's document) and an admin's re-admission (a new token, every older
 * one revoked). */
static char agent_tok[256];

static int reregister(void);

/* n1's agent holds agent_tok and has re-registered with it once without using the answer's
 * token (a crash before saving it): that token is live too, and the next re-registration
 * revokes it after making its own (a store write after memory has the new token). */
static void prepare_reregister(void)
{
    json_t *res = NULL;
    assert_int_equal(call(NULL, "POST", "/v1/nodes/n1/credential", json_object(), &res), 201);
    snprintf(agent_tok, sizeof(agent_tok), "%s", json_string_value(json_object_get(res, "token")));
    json_decref(res);
    assert_int_equal(reregister(), 200);
}

static int reregister(void)
{
    gp_http_client *c = NULL;
    gp_diag d;
    assert_int_equal(gp_http_client_new(P.base, agent_tok, &c, &d), 0);
    json_t *res = NULL;
    int status = call(c, "POST", "/v1/nodes", node_body("n1"), &res);
    if (status != 200 && status < 500) {
        char *text = json_dumps(res, JSON_COMPACT);
        print_message("re-registration answered %d: %s\n", status, text ? text : "");
        free(text);
    }
    json_decref(res);
    gp_http_client_free(c);
    return status;
}

static int act_reregister(void)
{
    int status = reregister();
    return status == 200 ? 0 : status;
}

static void next_reregister(void)
{
    assert_int_equal(reregister(), 200);
}

static int act_readmit(void)
{
    int status = call(NULL, "POST", "/v1/nodes/n0/credential", json_object(), NULL);
    return status == 201 ? 0 : status;
}

static void next_readmit(void)
{
    assert_int_equal(act_readmit(), 0);
}

/* Services (service.h): a submission storing the service Running; the cycle that creates its
 * replica jobs; a cancel that takes them along. */
static int64_t service_id;

static int64_t submit_service(int *status)
{
    static int seq;
    char name[32];
    snprintf(name, sizeof(name), "svc%d", ++seq);
    json_t *res = NULL;
    *status = call(NULL, "POST", "/v1/jobs",
                   json_pack("{s:s, s:s, s:s, s:i, s:i, s:[s], s:{s:i}}", "name", name, "tenant",
                             "t1", "kind", "service", "port", 8080, "replicas", 2, "command",
                             "true", "resources", "gpus", 1),
                   &res);
    int64_t id = *status == 201 ? json_integer_value(json_object_get(res, "id")) : -1;
    json_decref(res);
    return id;
}

static int act_service_submit(void)
{
    int status;
    submit_service(&status);
    return status == 201 ? 0 : status;
}

static void next_service_submit(void)
{
    int status;
    service_id = submit_service(&status);
    assert_int_equal(status, 201);
    assert_int_equal(job_state(service_id), CTL_RUNNING);
}

/* The service's replica jobs that are not over. */
static int replica_jobs(int64_t svc)
{
    pthread_mutex_lock(&P.g.st.lock);
    int n = 0;
    for (int i = 0; i < P.g.st.njobs; i++) {
        n += P.g.st.jobs[i]->owner == svc && !ctl_job_state_final(P.g.st.jobs[i]->state);
    }
    pthread_mutex_unlock(&P.g.st.lock);
    return n;
}

static void prepare_service_tick(void)
{
    cancel_all();
    int status;
    service_id = submit_service(&status);
    assert_int_equal(status, 201);
}

static int act_service_tick(void)
{
    int rc = schedule();
    return rc == 0 && replica_jobs(service_id) == 2 ? 0 : rc < 0 ? rc : -1;
}

static void next_service_tick(void)
{
    assert_int_equal(schedule(), 0);
    assert_int_equal(replica_jobs(service_id), 2);
    /* Once nothing is left to change, a cycle makes no store call for the service. */
    assert_int_equal(schedule(), 0);
    arm(1);
    assert_int_equal(schedule(), 0);
    uint64_t injected = gp_store_fault_injected(P.g.store);
    arm(0);
    assert_int_equal(injected, 0);
}

static void prepare_service_cancel(void)
{
    prepare_service_tick();
    assert_int_equal(schedule(), 0);
    assert_int_equal(replica_jobs(service_id), 2);
}

static int act_service_cancel(void)
{
    int status = cancel(service_id);
    return status == 200 ? 0 : status;
}

static void next_service_cancel(void)
{
    if (!ctl_job_state_final(job_state(service_id))) {
        assert_int_equal(cancel(service_id), 200);
    }
    assert_int_equal(replica_jobs(service_id), 0);
}

/* Arrays and dependencies (array.h): a submission naming a dependency; the cycle that makes
 * an array's children (%2 of 3); the cycle that cancels a job whose dependency failed. */
static int64_t array_id, dependent_id;

static int64_t submit_spec(json_t *spec, int *status)
{
    json_t *res = NULL;
    *status = call(NULL, "POST", "/v1/jobs", spec, &res);
    int64_t id = *status == 201 ? json_integer_value(json_object_get(res, "id")) : -1;
    json_decref(res);
    return id;
}

static int64_t submit_array(int *status)
{
    static int seq;
    char name[32];
    snprintf(name, sizeof(name), "arr%d", ++seq);
    return submit_spec(json_pack("{s:s, s:s, s:s, s:[s], s:{s:i}}", "name", name, "tenant", "t1",
                                 "array", "0-2%2", "command", "true", "resources", "gpus", 1),
                       status);
}

static int64_t submit_after(int64_t dep, int *status)
{
    static int seq;
    char name[32], ref[32];
    snprintf(name, sizeof(name), "after%d", ++seq);
    snprintf(ref, sizeof(ref), "%lld", (long long)dep);
    return submit_spec(json_pack("{s:s, s:s, s:[s], s:[s], s:{s:i}}", "name", name, "tenant", "t1",
                                 "after_ok", ref, "command", "true", "resources", "gpus", 1),
                       status);
}

static int children(int64_t arr)
{
    pthread_mutex_lock(&P.g.st.lock);
    int n = 0;
    for (int i = 0; i < P.g.st.njobs; i++) {
        n += P.g.st.jobs[i]->owner == arr && P.g.st.jobs[i]->in_array;
    }
    pthread_mutex_unlock(&P.g.st.lock);
    return n;
}

static void prepare_after_submit(void)
{
    cancel_all();
    victim = submit_ok();
}

static int act_after_submit(void)
{
    int status;
    dependent_id = submit_after(victim, &status);
    return status == 201 ? 0 : status;
}

static void next_after_submit(void)
{
    int status;
    dependent_id = submit_after(victim, &status);
    assert_int_equal(status, 201);
}

static void prepare_array_tick(void)
{
    cancel_all();
    int status;
    array_id = submit_array(&status);
    assert_int_equal(status, 201);
}

static int act_array_tick(void)
{
    int rc = schedule();
    return rc == 0 && children(array_id) == 2 ? 0 : rc < 0 ? rc : -1;
}

static void next_array_tick(void)
{
    assert_int_equal(schedule(), 0);
    assert_int_equal(children(array_id), 2); /* %2: the third waits */
    assert_int_equal(job_state(array_id), CTL_RUNNING);
    /* Once nothing is left to change, a cycle makes no store call for the array. */
    assert_int_equal(schedule(), 0);
    arm(1);
    assert_int_equal(schedule(), 0);
    uint64_t injected = gp_store_fault_injected(P.g.store);
    arm(0);
    assert_int_equal(injected, 0);
}

static void prepare_dependency_failed(void)
{
    cancel_all();
    victim = submit_ok();
    int status;
    dependent_id = submit_after(victim, &status);
    assert_int_equal(status, 201);
    assert_int_equal(cancel(victim), 200);
}

static int act_dependency_failed(void)
{
    int rc = schedule();
    return rc == 0 && job_state(dependent_id) == CTL_CANCELLED ? 0 : rc < 0 ? rc : -1;
}

static void next_dependency_failed(void)
{
    assert_int_equal(schedule(), 0);
    assert_int_equal(job_state(dependent_id), CTL_CANCELLED);
}

static const sweep sweeps[] = {
    {"submit", nothing, act_submit, next_submit},
    {"cancel of a placed job", prepare_cancel, act_cancel, next_cancel},
    {"scheduling cycle", prepare_cycle, act_cycle, next_cycle},
    {"usage flush", prepare_flush, act_flush, next_flush},
    {"recovery tick", prepare_recovery, act_recovery, next_recovery},
    {"re-registration by the node's agent", prepare_reregister, act_reregister, next_reregister},
    {"re-admission of a node", nothing, act_readmit, next_readmit},
    {"submit of a service", nothing, act_service_submit, next_service_submit},
    {"a cycle creating a service's replica jobs", prepare_service_tick, act_service_tick,
     next_service_tick},
    {"cancel of a service", prepare_service_cancel, act_service_cancel, next_service_cancel},
    {"submit of a job after another", prepare_after_submit, act_after_submit, next_after_submit},
    {"a cycle making an array's children", prepare_array_tick, act_array_tick, next_array_tick},
    {"a cycle cancelling a job whose dependency ended", prepare_dependency_failed,
     act_dependency_failed, next_dependency_failed},
};

static void test_transactions(void **state)
{
    (void)state;
    open_pool();
    flush_ms = ctl_now_ms();
    check_consistent("the start");
    for (size_t i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); i++) {
        run_sweep(&sweeps[i]);
    }
    stop();
    remove_dir();
}

/* The store away for a while (a dead disk, PostgreSQL restarting): a group whose commit fails
 * cannot reload memory either, so the controller is stale. Callers must then get 503 (retry),
 * never 401 from an authentication table built from the unloaded state; once the store is back,
 * a scheduling cycle or the next request reloads memory and everything works again. */
static void test_store_outage(void **state)
{
    (void)state;
    open_pool();
    int64_t before = submit_ok();
    /* A submit makes 7 store calls, its commit the 7th (the sweep above): from there on every
     * call fails, the reload after the failed commit too. */
    gp_store_fault_plan dead = {.count = GP_STORE_FAULT_ANY, .nth = 7, .sticky = 1};
    assert_int_equal(gp_store_fault_arm(P.g.store, &dead), 0);
    int status;
    assert_int_equal(submit(&status), -1);
    assert_true(status >= 500);
    assert_true(P.g.stale);
    for (int i = 0; i < 3; i++) {
        json_t *who = NULL;
        status = call(NULL, "POST", "/v1/tenants", json_pack("{s:s}", "name", "during"), &who);
        json_decref(who);
        if (status == 401) {
            fail_msg("request %d while the store is away: 401, not 503", i);
        }
        assert_true(status >= 500);
    }
    assert_int_equal(schedule(), GP_EUNAVAIL); /* a cycle cannot reload either */
    arm(0);                                    /* the store is back */
    assert_int_equal(schedule(), 0);           /* the cycle reloads memory */
    json_t *who = NULL;
    assert_int_equal(call(NULL, "GET", "/v1/whoami", NULL, &who), 200);
    json_decref(who);
    int64_t after = submit_ok();
    assert_true(after > before);
    check_consistent("after the outage");
    stop();
    remove_dir();
}

/* The first start: its defaults and tokens in one transaction. A start failing at any call
 * stores nothing half-way: the next start completes, memory equals the store, and the admin
 * token it wrote works. */
static void test_first_start(void **state)
{
    (void)state;
    renew_interval = "200ms";
    uint64_t n = 1, failed = 0;
    for (; n < MAX_N; n++) {
        make_dir();
        uint64_t injected = 0;
        int rc = start(n, &injected);
        if (rc < 0) {
            failed++;
            uint64_t none;
            assert_int_equal(start(0, &none), 0);
        } else if (P.db.pg && injected) {
            failed++; /* the elected start failed at the fault, gave the lease up, led next */
        }
        check_consistent("first start");
        json_t *who = NULL;
        assert_int_equal(call(NULL, "GET", "/v1/whoami", NULL, &who), 200);
        assert_string_equal(json_string_value(json_object_get(who, "role")), "admin");
        json_decref(who);
        pthread_mutex_lock(&P.g.st.lock);
        assert_int_equal(P.g.st.nqueues, 1);
        assert_int_equal(P.g.st.npclasses, 3);
        assert_int_equal(P.g.st.ntokens, 2);
        pthread_mutex_unlock(&P.g.st.lock);
        stop();
        remove_dir();
        if (injected == 0) {
            break;
        }
    }
    assert_true(n < MAX_N);
    assert_true(failed > 0);
    print_message("first start: %llu store calls, %llu starts failed\n",
                  (unsigned long long)(n - 1), (unsigned long long)failed);
}

/* ---- heartbeats applied in memory ---- */

/* Submits a one-GPU job with extra spec members (stolen), places it; its id. */
static int64_t submit_placed(json_t *extra)
{
    static int seq;
    char name[32];
    snprintf(name, sizeof(name), "hb%d", ++seq);
    json_t *spec = json_pack("{s:s, s:s, s:[s], s:{s:i}}", "name", name, "tenant", "t1", "command",
                             "true", "resources", "gpus", 1);
    json_object_update(spec, extra);
    json_decref(extra);
    json_t *res = NULL;
    assert_int_equal(call(NULL, "POST", "/v1/jobs", spec, &res), 201);
    int64_t id = json_integer_value(json_object_get(res, "id"));
    json_decref(res);
    assert_int_equal(schedule(), 0);
    assert_int_equal(job_state(id), CTL_SCHEDULED);
    return id;
}

/* The heartbeat path of job id's node (replica 0), and the replica's epoch. */
static void placed_on(int64_t id, char *path, size_t cap, int64_t *epoch)
{
    pthread_mutex_lock(&P.g.st.lock);
    ctl_job *j = ctl_job_by_id(&P.g.st, id);
    assert_non_null(j->replicas);
    *epoch = j->replicas[0].epoch;
    snprintf(path, cap, "/v1/nodes/%s/heartbeat",
             ctl_node_by_id(&P.g.st, j->replicas[0].node_id)->name);
    pthread_mutex_unlock(&P.g.st.lock);
}

/* A heartbeat reporting job id's replica 0 in state with more members (stolen; NULL: none) and
 * the heartbeat's own (stolen; NULL: none): answered 200, and through the store (stored: a
 * committer group, store calls, counted path="store") or in memory (no store call of any kind,
 * no group, counted path="memory"). */
static void beat_job(int64_t id, const char *state, json_t *rep, json_t *top, bool stored)
{
    char path[128];
    int64_t epoch;
    placed_on(id, path, sizeof(path), &epoch);
    json_t *r = json_pack("{s:I, s:i, s:I, s:s}", "job", (json_int_t)id, "replica", 0, "epoch",
                          (json_int_t)epoch, "state", state);
    if (rep) {
        json_object_update(r, rep);
        json_decref(rep);
    }
    json_t *body = top ? top : json_object();
    json_object_set_new(body, "replicas", json_pack("[o]", r));
    long long mem = atomic_load(&P.g.metrics.heartbeats_memory);
    long long sto = atomic_load(&P.g.metrics.heartbeats_store);
    long long groups = atomic_load(&P.g.stats.groups);
    arm(0); /* counts every store call from here on, reads included */
    assert_int_equal(call(NULL, "POST", path, body, NULL), 200);
    uint64_t calls = gp_store_fault_calls(P.g.store);
    if (stored) {
        assert_true(calls > 0);
        assert_int_equal(atomic_load(&P.g.stats.groups), groups + 1);
        assert_int_equal(atomic_load(&P.g.metrics.heartbeats_store), sto + 1);
        assert_int_equal(atomic_load(&P.g.metrics.heartbeats_memory), mem);
    } else {
        assert_int_equal(calls, 0);
        assert_int_equal(atomic_load(&P.g.stats.groups), groups);
        assert_int_equal(atomic_load(&P.g.metrics.heartbeats_memory), mem + 1);
        assert_int_equal(atomic_load(&P.g.metrics.heartbeats_store), sto);
    }
}

static json_t *util(int u)
{
    return json_pack("{s:i}", "util", u);
}

/* Heartbeats that change nothing the store keeps make no store call and run no committer group;
 * each kind of heartbeat that writes still goes through the committer (and so into the store). */
static void test_heartbeats_in_memory(void **state)
{
    (void)state;
    open_pool();
    nodes_report();
    int64_t id = submit_placed(json_object());
    beat_job(id, "Running", util(50), NULL, true); /* Scheduled -> Running */
    for (int i = 0; i < 20; i++) {                 /* the same state, new readings */
        beat_job(id, "Running", util(40 + i),
                 json_pack("{s:[{s:i, s:i}], s:{s:i, s:[{s:s, s:i, s:s, s:s}]}}", "gpus", "index",
                           0, "utilization", 40 + i, "health", "seq", 0, "conditions", "check",
                           "ecc_mode", "gpu", -1, "severity", "warning", "message", "pending"),
                 false);
    }
    pthread_mutex_lock(&P.g.st.lock);
    ctl_node *n = ctl_node_by_id(&P.g.st, ctl_job_by_id(&P.g.st, id)->replicas[0].node_id);
    assert_true(n->ready);
    assert_non_null(n->health); /* what a memory heartbeat carries is applied */
    int gpu = ctl_job_by_id(&P.g.st, id)->replicas[0].a.shares[0].gpu;
    n->ready = false; /* silent past nodes.heartbeat_timeout */
    pthread_mutex_unlock(&P.g.st.lock);
    pthread_mutex_lock(&P.g.qlock);
    P.g.kicked = false;
    pthread_mutex_unlock(&P.g.qlock);
    beat_job(id, "Running", util(50), NULL, false); /* back: Ready, in memory, a cycle asked */
    pthread_mutex_lock(&P.g.st.lock);
    assert_true(n->ready);
    pthread_mutex_unlock(&P.g.st.lock);
    pthread_mutex_lock(&P.g.qlock);
    assert_true(P.g.kicked);
    pthread_mutex_unlock(&P.g.qlock);
    /* a health check's fatal finding drains another GPU: the store */
    int other = gpu == 0 ? 1 : 0;
    beat_job(id, "Running", util(50),
             json_pack("{s:{s:i, s:[{s:s, s:i, s:s, s:s}]}}", "health", "seq", 0, "conditions",
                       "check", "remapped_rows", "gpu", other, "severity", "fatal", "message",
                       "row remap failed"),
             true);
    /* the same finding again: already drained, memory */
    beat_job(id, "Running", util(50),
             json_pack("{s:{s:i, s:[{s:s, s:i, s:s, s:s}]}}", "health", "seq", 0, "conditions",
                       "check", "remapped_rows", "gpu", other, "severity", "fatal", "message",
                       "row remap failed"),
             false);
    /* XIDs, even one only counted (unknown): always the committer's */
    beat_job(id, "Running", util(50),
             json_pack("{s:[{s:i, s:i}]}", "events", "gpu", gpu, "xid", 999), true);
    /* the job ends: the store */
    beat_job(id, "Succeeded", json_pack("{s:i}", "exit_code", 0), NULL, true);
    assert_int_equal(job_state(id), CTL_SUCCEEDED);

    /* a hung replica: its report past hang_timeout is acted on through the store, once */
    id = submit_placed(json_pack("{s:s, s:s}", "hang_timeout", "1m", "restart_policy", "never"));
    beat_job(id, "Running", json_pack("{s:i}", "idle_ms", 1000), NULL, true); /* Running */
    beat_job(id, "Running", json_pack("{s:i}", "idle_ms", 2000), NULL, false);
    beat_job(id, "Running", json_pack("{s:i}", "idle_ms", 61000), NULL, true);  /* Hung */
    beat_job(id, "Running", json_pack("{s:i}", "idle_ms", 62000), NULL, false); /* once */
    assert_int_equal(cancel(id), 200);

    /* an idle job: its clock runs in memory; stopped through the store */
    id = submit_placed(json_pack("{s:s}", "idle_timeout", "1s"));
    beat_job(id, "Running", util(0), NULL, true); /* Running; the clock starts */
    beat_job(id, "Running", util(1), NULL, false);
    struct timespec ts = {1, 100000000};
    nanosleep(&ts, NULL);
    beat_job(id, "Running", util(0), NULL, true); /* idle for 1 s: stopped */
    assert_int_equal(job_state(id), CTL_CANCELLED);

    /* an image pull: the first progress event is stored, the same step again is not, and the
     * end of the pull is */
    id = submit_placed(json_object());
    json_t *pull = json_pack("{s:s, s:{s:s, s:i, s:i}}", "phase", "Pulling", "pull", "image",
                             "registry.example/app:1", "done_bytes", 10, "total_bytes", 1000);
    beat_job(id, "Running", json_deep_copy(pull), NULL, true);
    beat_job(id, "Running", pull, NULL, false);
    beat_job(id, "Running", util(50), NULL, true); /* Pulled, Running */
    beat_job(id, "Running", util(50), NULL, false);
    assert_int_equal(job_state(id), CTL_RUNNING);
    check_consistent("after the heartbeats");
    stop();
    remove_dir();
}

/* The recovery tick past its deadline (a leader on a shared store gets one: the lease's renewal
 * waits for the tick's transaction): it handles one lost node, says nodes are left, and the next
 * tick handles the rest; memory equals the store after each. */
static void test_recovery_deadline(void **state)
{
    (void)state;
    open_pool();
    nodes_report();
    int64_t a = submit_placed(json_pack("{s:{s:i}}", "resources", "gpus", 4)); /* a node each */
    int64_t b = submit_placed(json_pack("{s:{s:i}}", "resources", "gpus", 4));
    pthread_mutex_lock(&P.g.st.lock);
    int64_t now = ctl_now_ms();
    for (int i = 0; i < P.g.st.nnodes; i++) {
        P.g.st.nodes[i].ready = false;
        P.g.st.nodes[i].heartbeat_ms = now - P.cfg.nodes.lost_timeout_ms - 1000;
    }
    gp_diag d;
    gp_diag_clear(&d);
    int rc = ctl_recovery_tick(&P.g, now, gp_mono_ms() - 1, &d); /* its time already spent */
    pthread_mutex_unlock(&P.g.st.lock);
    assert_int_equal(rc, 1);
    int held = ctl_job_state_holds(job_state(a)) + ctl_job_state_holds(job_state(b));
    assert_int_equal(held, 1); /* one node handled, the other left due */
    check_consistent("a tick cut at its deadline");
    pthread_mutex_lock(&P.g.st.lock);
    rc = ctl_recovery_tick(&P.g, now, gp_mono_ms() - 1, &d);
    pthread_mutex_unlock(&P.g.st.lock);
    assert_int_equal(rc, 0); /* the last one: nothing left */
    assert_false(ctl_job_state_holds(job_state(a)));
    assert_false(ctl_job_state_holds(job_state(b)));
    check_consistent("the next tick");
    stop();
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transactions),      cmocka_unit_test(test_store_outage),
        cmocka_unit_test(test_first_start),       cmocka_unit_test(test_heartbeats_in_memory),
        cmocka_unit_test(test_recovery_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * gpupool describe KIND NAME: a summary for people. A job shows its fields, its placement per
 * replica (node, GPU index and uuid, the share taken) and its event history
 * (GET /v1/jobs/{job}/events); a node what keeps work off it (cordon, drain now or at a
 * maintenance deadline, fence, a failed health check), its capacity, allocation, container
 * runtime, per-GPU state and holders, its drained GPUs with why and how they return, and its
 * image cache (the list for admins and operators, the totals for users); other kinds their
 * document as YAML.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/resource.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const gp_cli_opt describe_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec describe_spec = {
    "describe",
    "describe job ID|NAME | describe node NAME | describe KIND NAME",
    "Shows one object for people: a job with its placement and events, a node with its GPUs\n"
    "and who holds them.",
    describe_opts,
    GP_CLI_CONN,
    2,
    2,
};

#define FIELD "%-14s "

static void field(const char *label, const char *value)
{
    printf(FIELD "%s\n", label, value && value[0] ? value : "-");
}

/* "2024-05-01T12:00:00Z (5m ago)" or "-". */
static void when(const char *label, int64_t ms, int64_t now)
{
    char t[64], age[32];
    gp_out_time(ms, t, sizeof(t));
    gp_out_age(now, ms, age, sizeof(age));
    if (ms > 0) {
        printf(FIELD "%s (%s ago)\n", label, t, age);
    } else {
        field(label, "-");
    }
}

/* The words of a JSON string list, space-separated, appended to buf. */
static void join_words(const json_t *list, char *buf, size_t cap)
{
    size_t i, used = strlen(buf);
    const json_t *w;
    json_array_foreach(list, i, w)
    {
        int n = snprintf(buf + used, cap - used, "%s%s", used ? " " : "", json_string_value(w));
        if (n < 0 || (size_t)n >= cap - used) {
            return;
        }
        used += (size_t)n;
    }
}

static void job_request(const json_t *job)
{
    const json_t *spec = json_object_get(job, "spec");
    const json_t *res = json_object_get(spec, "resources");
    char gpus[64], buf[512] = "";
    gp_cli_job_gpus(job, gpus, sizeof(gpus));
    snprintf(buf, sizeof(buf), "%s", gpus);
    const json_t *models = json_object_get(res, "gpu_models");
    if (json_array_size(models) > 0) {
        strncat(buf, " of ", sizeof(buf) - strlen(buf) - 1);
        char m[256] = "";
        join_words(models, m, sizeof(m));
        strncat(buf, m, sizeof(buf) - strlen(buf) - 1);
    }
    field("GPUs:", buf);
    field("Topology:", json_string_value(json_object_get(spec, "topology")));
    char cpu[32] = "-", mem[32] = "-";
    if (json_object_get(res, "cpu_milli")) {
        gp_out_milli(gp_out_int(res, "cpu_milli"), cpu, sizeof(cpu));
    }
    if (json_object_get(res, "memory_mib")) {
        gp_out_mib(gp_out_int(res, "memory_mib"), mem, sizeof(mem));
    }
    printf(FIELD "cpu %s, memory %s\n", "Per replica:", cpu, mem);
    const char *image = json_string_value(json_object_get(spec, "image"));
    if (image) {
        snprintf(buf, sizeof(buf), "%s (pull %s)", image,
                 gp_out_str(spec, "image_pull_policy")[0] ? gp_out_str(spec, "image_pull_policy")
                                                          : "default");
    } else {
        snprintf(buf, sizeof(buf), "none: the host's root filesystem, read-only");
    }
    field("Image:", buf);
    field("Network:", gp_out_str(spec, "network")[0] ? gp_out_str(spec, "network") : "host");
    buf[0] = '\0';
    join_words(json_object_get(spec, "command"), buf, sizeof(buf));
    join_words(json_object_get(spec, "args"), buf, sizeof(buf));
    field("Command:", buf);
    field("Working dir:", json_string_value(json_object_get(spec, "working_dir")));
    buf[0] = '\0';
    const char *key;
    const json_t *v;
    json_object_foreach(json_object_get(spec, "env"), key, v)
    {
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof(buf) - used, "%s%s=%s", used ? " " : "", key,
                 json_string_value(v));
    }
    field("Env:", buf);
    buf[0] = '\0';
    size_t i;
    json_array_foreach(json_object_get(spec, "volumes"), i, v)
    {
        size_t used = strlen(buf);
        const json_t *ro = json_is_object(v) ? json_object_get(v, "read_only") : NULL;
        const char *name = json_string_value(json_is_object(v) ? json_object_get(v, "name") : v);
        snprintf(buf + used, sizeof(buf) - used, "%s%s%s", used ? ", " : "", name ? name : "?",
                 ro ? (json_is_true(ro) ? ":ro" : ":rw") : "");
    }
    field("Volumes:", buf);
}

/* An object of strings as "k=v,k2=v2" into buf. */
static void map_text(const json_t *obj, char *buf, size_t cap)
{
    const char *k;
    const json_t *v;
    size_t used = 0;
    buf[0] = '\0';
    json_object_foreach((json_t *)obj, k, v)
    {
        int n = snprintf(buf + used, cap - used, "%s%s=%s", used ? "," : "", k,
                         json_string_value(v) ? json_string_value(v) : "");
        if (n < 0 || (size_t)n >= cap - used) {
            return;
        }
        used += (size_t)n;
    }
}

/* Labels, annotations and where the replicas may go. */
static void job_placement_fields(const json_t *spec)
{
    char buf[2048];
    map_text(json_object_get(spec, "labels"), buf, sizeof(buf));
    field("Labels:", buf);
    map_text(json_object_get(spec, "annotations"), buf, sizeof(buf));
    field("Annotations:", buf);
    map_text(json_object_get(spec, "node_selector"), buf, sizeof(buf));
    field("Node-Selector:", buf);
    size_t i, used = 0;
    const json_t *t;
    buf[0] = '\0';
    json_array_foreach(json_object_get(spec, "tolerations"), i, t)
    {
        /* kubectl's form: key=value:Effect, key:Effect (Exists), :Effect or * for every key */
        const char *key = gp_out_str(t, "key"), *effect = gp_out_str(t, "effect");
        bool equal = strcmp(gp_out_str(t, "operator"), "Equal") == 0;
        int n = snprintf(buf + used, sizeof(buf) - used, "%s%s%s%s%s%s", used ? "," : "",
                         *key ? key : "*", equal ? "=" : "", equal ? gp_out_str(t, "value") : "",
                         *effect ? ":" : "", effect);
        if (n < 0 || (size_t)n >= sizeof(buf) - used) {
            break;
        }
        used += (size_t)n;
    }
    field("Tolerations:", buf);
    used = 0;
    buf[0] = '\0';
    json_array_foreach(json_object_get(spec, "spread"), i, t)
    {
        int n = snprintf(buf + used, sizeof(buf) - used, "%s%s max skew %lld", used ? ", " : "",
                         gp_out_str(t, "topology_key"), (long long)gp_out_int(t, "max_skew"));
        if (n < 0 || (size_t)n >= sizeof(buf) - used) {
            break;
        }
        used += (size_t)n;
    }
    field("Spread:", buf);
    field("Anti-affinity:",
          json_is_true(json_object_get(spec, "anti_affinity")) ? "one replica per node" : "-");
}

static void job_fields(const json_t *job, int64_t now)
{
    char buf[256];
    field("Name:", gp_out_str(job, "name"));
    gp_out_number(json_object_get(job, "id"), buf, sizeof(buf));
    field("ID:", buf);
    field("Tenant:", gp_out_str(job, "tenant"));
    field("Queue:", gp_out_str(job, "queue"));
    printf(FIELD "%s (%lld)\n", "Priority:", gp_out_str(job, "priority_class"),
           (long long)gp_out_int(job, "priority"));
    field("State:", gp_out_str(job, "state"));
    field("Reason:", gp_out_str(job, "reason"));
    gp_out_number(json_object_get(job, "replicas"), buf, sizeof(buf));
    field("Replicas:", buf);
    job_request(job);
    const json_t *spec = json_object_get(job, "spec");
    job_placement_fields(spec);
    field("Preemptible:", json_is_true(json_object_get(spec, "preemptible")) ? "true" : "false");
    const char *policy = json_string_value(json_object_get(spec, "restart_policy"));
    printf(FIELD "%s (%lld restarts so far)\n", "Restart:", policy ? policy : "never",
           (long long)gp_out_int(job, "restarts"));
    when("Submitted:", gp_out_int(job, "submit_time_ms"), now);
    when("Started:", gp_out_int(job, "start_time_ms"), now);
    when("Ended:", gp_out_int(job, "end_time_ms"), now);
    if (gp_out_int(job, "end_time_ms") > 0) {
        gp_out_number(json_object_get(job, "exit_code"), buf, sizeof(buf));
        field("Exit code:", buf);
    }
}

/* A GPU share: "whole", "0.5, 10Gi" or "MIG 1g.10gb at 0". */
static void share_text(const json_t *g, char *buf, size_t cap)
{
    char milli[32], mem[32];
    const char *mig = gp_out_str(g, "mig_profile");
    if (mig[0]) {
        snprintf(buf, cap, "MIG %s at slice %lld", mig, (long long)gp_out_int(g, "mig_start"));
        return;
    }
    if (gp_out_int(g, "milli") >= 1000) {
        snprintf(buf, cap, "whole");
        return;
    }
    gp_out_milli(gp_out_int(g, "milli"), milli, sizeof(milli));
    gp_out_mib(gp_out_int(g, "memory_mib"), mem, sizeof(mem));
    snprintf(buf, cap, "%s GPU, %s", milli, mem);
}

static int job_placement(const json_t *job)
{
    static const char *const head[] = {"REPLICA", "NODE", "STATE", "GPU", "MODEL", "UUID", "SHARE"};
    const json_t *placement = json_object_get(job, "placement");
    printf("\nPlacement:%s\n", json_array_size(placement) ? "" : " none");
    gp_out_table *t = gp_out_table_new(head, 7);
    size_t i, k;
    const json_t *r, *g;
    json_array_foreach(placement, i, r)
    {
        char rep[24], index[24], share[96];
        snprintf(rep, sizeof(rep), "%zu", i);
        json_array_foreach(json_object_get(r, "gpus"), k, g)
        {
            snprintf(index, sizeof(index), "%lld", (long long)gp_out_int(g, "index"));
            share_text(g, share, sizeof(share));
            const char *row[] = {rep,   gp_out_str(r, "node"),  gp_out_str(r, "state"),
                                 index, gp_out_str(g, "model"), gp_out_str(g, "uuid"),
                                 share};
            if (!t || gp_out_table_add(t, row) < 0) {
                gp_out_table_free(t);
                return -1;
            }
        }
    }
    if (t && json_array_size(placement)) {
        gp_out_table_print(t, stdout, 2);
    }
    gp_out_table_free(t);
    return t ? 0 : -1;
}

static int job_events(const json_t *events)
{
    static const char *const head[] = {"TIME", "TYPE", "MESSAGE"};
    const json_t *items = json_object_get(events, "items");
    printf("\nEvents:%s\n", json_array_size(items) ? "" : " none");
    gp_out_table *t = gp_out_table_new(head, 3);
    size_t i;
    const json_t *ev;
    json_array_foreach(items, i, ev)
    {
        char time[64];
        gp_out_time(gp_out_int(ev, "time_ms"), time, sizeof(time));
        const char *row[] = {time, gp_out_str(ev, "type"), gp_out_str(ev, "message")};
        if (!t || gp_out_table_add(t, row) < 0) {
            gp_out_table_free(t);
            return -1;
        }
    }
    if (t && json_array_size(items)) {
        gp_out_table_print(t, stdout, 2);
    }
    gp_out_table_free(t);
    return t ? 0 : -1;
}

static int describe_job(gp_cli_conn *c, const char *ref)
{
    json_t *job = NULL, *events = NULL;
    int rc = gp_cli_get_doc(c, "/v1/jobs", ref, &job);
    char path[1200];
    if (rc == 0) {
        /* By id: the name could have been reused between the two calls. */
        snprintf(path, sizeof(path), "/v1/jobs/%lld/events", (long long)gp_out_int(job, "id"));
        rc = gp_cli_call(c, "GET", path, NULL, &events);
    }
    if (rc == 0) {
        job_fields(job, gp_out_now_ms());
        rc = job_placement(job) < 0 || job_events(events) < 0 ? GP_EXIT_FAILURE : 0;
    }
    json_decref(job);
    json_decref(events);
    return rc;
}

/* A GPU's service state: "in service", "spare" (held back for restarts after faults),
 * "drained" or "retired". */
static const char *gpu_state(const json_t *g)
{
    const json_t *dr = json_object_get(g, "drained");
    if (json_is_object(dr)) {
        return json_is_true(json_object_get(dr, "retired")) ? "retired" : "drained";
    }
    return json_is_true(json_object_get(g, "spare")) ? "spare" : "in service";
}

/* Its holders: "train/0,(other tenant)/1". */
static void gpu_holders(const json_t *g, char *buf, size_t cap)
{
    size_t k;
    const json_t *h;
    buf[0] = '\0';
    json_array_foreach(json_object_get(g, "holders"), k, h)
    {
        size_t used = strlen(buf);
        const char *name = gp_out_str(h, "name");
        snprintf(buf + used, cap - used, "%s%s/%lld", used ? "," : "",
                 name[0] ? name : "(other tenant)", (long long)gp_out_int(h, "replica"));
    }
}

static int node_gpus(const json_t *node)
{
    static const char *const head[] = {"INDEX", "MODEL",     "UUID", "MEMORY", "NUMA",
                                       "STATE", "ALLOCATED", "UTIL", "HOLDERS"};
    gp_out_table *t = gp_out_table_new(head, 9);
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(node, "gpus"), i, g)
    {
        char index[24], mem[32], numa[16], alloc[32], util[16] = "-", holders[512];
        snprintf(index, sizeof(index), "%zu", i);
        gp_out_mib(gp_out_int(g, "memory_mib"), mem, sizeof(mem));
        snprintf(numa, sizeof(numa), "%lld", (long long)gp_out_int(g, "numa"));
        gp_out_milli(gp_out_int(g, "allocated_milli"), alloc, sizeof(alloc));
        if (json_is_number(json_object_get(g, "utilization"))) {
            snprintf(util, sizeof(util), "%.0f%%",
                     json_number_value(json_object_get(g, "utilization")));
        }
        gpu_holders(g, holders, sizeof(holders));
        const char *row[] = {index,
                             gp_out_str(g, "model"),
                             gp_out_str(g, "uuid"),
                             mem,
                             numa,
                             gpu_state(g),
                             alloc,
                             util,
                             holders};
        if (!t || gp_out_table_add(t, row) < 0) {
            gp_out_table_free(t);
            return -1;
        }
    }
    if (t) {
        gp_out_table_print(t, stdout, 2);
    }
    gp_out_table_free(t);
    return t ? 0 : -1;
}

/* How a drained GPU returns to service (docs/api.md, Faults). */
static const char *drain_return(const json_t *dr)
{
    if (json_is_true(json_object_get(dr, "retired"))) {
        return "retired: only by gpu-undrain";
    }
    return json_is_true(json_object_get(dr, "auto")) ? "when a health check passes"
                                                     : "by gpu-undrain";
}

/* The drained GPUs with why, since when and how they return; nothing when none is. */
static int node_drained(const json_t *node, int64_t now)
{
    static const char *const head[] = {"GPU", "SINCE", "RETURNS", "REASON"};
    gp_out_table *t = gp_out_table_new(head, 4);
    size_t i;
    const json_t *g;
    int rows = 0;
    json_array_foreach(json_object_get(node, "gpus"), i, g)
    {
        const json_t *dr = json_object_get(g, "drained");
        if (!json_is_object(dr)) {
            continue;
        }
        char index[24], t0[64], age[32], since[112];
        snprintf(index, sizeof(index), "%zu", i);
        gp_out_time(gp_out_int(dr, "since_ms"), t0, sizeof(t0));
        gp_out_age(now, gp_out_int(dr, "since_ms"), age, sizeof(age));
        snprintf(since, sizeof(since), "%s (%s ago)", t0, age);
        const char *row[] = {index, since, drain_return(dr), gp_out_str(dr, "reason")};
        if (!t || gp_out_table_add(t, row) < 0) {
            gp_out_table_free(t);
            return -1;
        }
        rows++;
    }
    if (t && rows) {
        printf("\nDrained GPUs:\n");
        gp_out_table_print(t, stdout, 2);
    }
    gp_out_table_free(t);
    return t ? 0 : -1;
}

/* What keeps work off the node: cordon, drain now or at a deadline, fence, a failed check. */
static void node_marks(const json_t *n, int64_t now)
{
    field("State:", gp_out_str(n, "state"));
    field("Schedulable:", json_is_true(json_object_get(n, "schedulable")) ? "true" : "false");
    field("Cordoned:", json_is_true(json_object_get(n, "cordoned")) ? "true" : "false");
    field("Draining:", json_is_true(json_object_get(n, "draining")) ? "true" : "false");
    int64_t at = gp_out_int(n, "drain_deadline_ms");
    if (at > 0) {
        char t[64], left[32];
        gp_out_time(at, t, sizeof(t));
        gp_out_until(now, at, left, sizeof(left));
        printf(FIELD "drains at %s (%s); until then it takes only jobs whose max runtime ends "
                     "before it\n",
               "Maintenance:", t, left);
    } else {
        field("Maintenance:", "-");
    }
    field("Fenced:", json_is_true(json_object_get(n, "fenced"))
                         ? "true (lost; takes work again once its agent runs none of the "
                           "replicas that moved)"
                         : "false");
    field("Unhealthy:", gp_out_str(n, "unhealthy"));
}

/* Bytes as the tables write sizes ("1.5Gi"; at least "1Mi" when not 0). */
static void fmt_bytes(int64_t bytes, char *buf, size_t cap)
{
    int64_t mib = (bytes + 1048575) / 1048576;
    if (bytes == 0) {
        snprintf(buf, cap, "0");
    } else {
        gp_out_mib(mib, buf, cap);
    }
}

/* The container runtime and the image cache's totals. */
static void node_runtime(const json_t *n)
{
    const json_t *rt = json_object_get(n, "runtime");
    char buf[256], size[32];
    if (json_is_object(rt)) {
        snprintf(buf, sizeof(buf), "%s %s (%s, cgroups %s)", gp_out_str(rt, "engine"),
                 gp_out_str(rt, "version"), gp_out_str(rt, "oci_runtime"),
                 gp_out_str(rt, "cgroups"));
        field("Runtime:", buf);
    } else {
        field("Runtime:", "none: runs no job from an image");
    }
    const json_t *im = json_object_get(n, "images");
    fmt_bytes(gp_out_int(im, "size_bytes"), size, sizeof(size));
    printf(FIELD "%lld (%s)\n", "Images:", (long long)gp_out_int(im, "count"), size);
}

/* The image cache, for admins and operators (users are shown only its totals). */
static int node_images(const json_t *n, int64_t now)
{
    const json_t *items = json_object_get(json_object_get(n, "images"), "items");
    if (json_array_size(items) == 0) {
        return 0;
    }
    static const char *const head[] = {"REF", "ID", "SIZE", "LAST-USED"};
    gp_out_table *t = gp_out_table_new(head, 4);
    size_t i;
    const json_t *e;
    json_array_foreach(items, i, e)
    {
        char size[32], age[32], id[24];
        fmt_bytes(gp_out_int(e, "size_bytes"), size, sizeof(size));
        gp_out_age(now, gp_out_int(e, "last_used_ms"), age, sizeof(age));
        const char *full = gp_out_str(e, "id");
        snprintf(id, sizeof(id), "%.19s", strncmp(full, "sha256:", 7) == 0 ? full + 7 : full);
        const char *row[] = {gp_out_str(e, "ref"), id, size, age};
        if (!t || gp_out_table_add(t, row) < 0) {
            gp_out_table_free(t);
            return -1;
        }
    }
    printf("\nImages:\n");
    gp_out_table_print(t, stdout, 2);
    gp_out_table_free(t);
    return 0;
}

static int describe_node(gp_cli_conn *c, const char *name)
{
    json_t *n;
    int rc = gp_cli_get_doc(c, "/v1/nodes", name, &n);
    if (rc != 0) {
        return rc;
    }
    int64_t now = gp_out_now_ms();
    const json_t *alloc = json_object_get(n, "allocated");
    char a[32], b[32];
    field("Name:", gp_out_str(n, "name"));
    node_marks(n, now);
    field("Address:", gp_out_str(n, "address"));
    char text[2048];
    map_text(json_object_get(n, "labels"), text, sizeof(text));
    field("Labels:", text);
    gp_cli_node_taints(n, text, sizeof(text));
    field("Taints:", text);
    gp_out_milli(gp_out_int(n, "cpu_milli"), a, sizeof(a));
    gp_out_milli(gp_out_int(alloc, "cpu_milli"), b, sizeof(b));
    printf(FIELD "%s (allocated %s)\n", "CPU:", a, b);
    gp_out_mib(gp_out_int(n, "memory_mib"), a, sizeof(a));
    gp_out_mib(gp_out_int(alloc, "memory_mib"), b, sizeof(b));
    printf(FIELD "%s (allocated %s)\n", "Memory:", a, b);
    gp_out_number(json_object_get(alloc, "gpus"), a, sizeof(a));
    printf(FIELD "%zu (allocated %s)\n", "GPUs:", json_array_size(json_object_get(n, "gpus")), a);
    when("Registered:", gp_out_int(n, "registered_ms"), now);
    when("Heartbeat:", gp_out_int(n, "heartbeat_ms"), now);
    node_runtime(n);
    printf("\nGPUs:\n");
    rc = node_gpus(n) < 0 || node_drained(n, now) < 0 || node_images(n, now) < 0 ? GP_EXIT_FAILURE
                                                                                 : 0;
    json_decref(n);
    return rc;
}

static int describe_other(gp_cli_conn *c, const gp_cli_kind *k, const char *name)
{
    json_t *doc;
    int rc = gp_cli_kind_get(c, k, name, &doc);
    if (rc == 0) {
        rc = gp_out_doc(stdout, GP_OUT_YAML, doc) < 0 ? GP_EXIT_FAILURE : 0;
    }
    json_decref(doc);
    return rc;
}

static int run(const gp_cli_args *a)
{
    const gp_cli_kind *k = gp_cli_kind_find(a->pos[0]);
    if (!k) {
        return gp_cli_usage_error(a->spec, "unknown kind \"%s\" (one of %s)", a->pos[0],
                                  gp_cli_kind_list());
    }
    gp_cli_conn *c;
    int rc = gp_cli_connect(a, &c);
    if (rc != 0) {
        return rc;
    }
    if (strcmp(k->singular, "job") == 0) {
        rc = describe_job(c, a->pos[1]);
    } else if (strcmp(k->singular, "node") == 0) {
        rc = describe_node(c, a->pos[1]);
    } else {
        rc = describe_other(c, k, a->pos[1]);
    }
    gp_cli_conn_free(c);
    return rc;
}

int gp_cli_describe(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&describe_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = run(&a);
    gp_cli_args_fini(&a);
    return rc;
}

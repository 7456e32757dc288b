/*
 * gpupool cancel JOB... and gpupool requeue JOB...: POST /v1/jobs/{job}/cancel or /requeue for
 * each job given by id or name, or (-l SELECTOR) for each active job the caller sees whose labels
 * match (the server selects: GET /v1/jobs?selector=). Every job is tried; the exit status is 1
 * when any failed.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"

static const gp_cli_opt opts[] = {
    {"selector", 'l', "SELECTOR",
     "the active jobs whose labels match (app=web,tier!=db,gpu,!debug,env in (a,b)) instead of "
     "JOBs"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec cancel_spec = {
    "cancel",
    "cancel JOB [JOB...] | -l SELECTOR",
    "Cancels jobs (by id or name, or those a label selector matches): their replicas are stopped "
    "and their GPUs freed.",
    opts,
    GP_CLI_CONN,
    0,
    -1,
};

static const gp_cli_spec requeue_spec = {
    "requeue",
    "requeue JOB [JOB...] | -l SELECTOR",
    "Stops jobs (by id or name, or those a label selector matches) and puts them back in their "
    "queue, Pending.",
    opts,
    GP_CLI_CONN,
    0,
    -1,
};

/* The ids of the active jobs sel matches, as strings, into *ids (a JSON array). */
static int selected(gp_cli_conn *c, const char *sel, json_t **ids)
{
    char query[2048] = "";
    json_t *items = json_array();
    int more = 0, rc = 0;
    if (gp_cli_query_add(query, sizeof(query), "selector", sel) < 0 ||
        gp_cli_query_add(query, sizeof(query), "state",
                         "Pending,Scheduled,Running,Preempted,Suspended") < 0) {
        fprintf(stderr, "gpupool: -l: selector too long\n");
        rc = GP_EXIT_USAGE;
    }
    rc = rc ? rc : gp_cli_get_pages(c, "/v1/jobs", query, 1, items, &more);
    *ids = json_array();
    size_t i;
    json_t *job;
    json_array_foreach(items, i, job)
    {
        json_array_append_new(*ids, json_sprintf("%lld", (long long)gp_out_int(job, "id")));
    }
    json_decref(items);
    return rc;
}

static int change(const gp_cli_args *a, const char *verb, const char *done)
{
    const char *sel = gp_cli_arg(a, "selector");
    if ((sel != NULL) == (a->npos > 0)) {
        return gp_cli_usage_error(a->spec, "give JOBs or -l SELECTOR (one of them)");
    }
    gp_cli_conn *c;
    int rc = gp_cli_connect(a, &c);
    if (rc != 0) {
        return rc;
    }
    json_t *ids = NULL;
    if (sel && (rc = selected(c, sel, &ids)) != 0) {
        json_decref(ids);
        gp_cli_conn_free(c);
        return rc;
    }
    if (sel && json_array_size(ids) == 0) {
        printf("no active job matches %s\n", sel);
    }
    int n = sel ? (int)json_array_size(ids) : a->npos;
    int status = GP_EXIT_OK;
    for (int i = 0; i < n; i++) {
        const char *name = sel ? json_string_value(json_array_get(ids, (size_t)i)) : a->pos[i];
        char path[1200];
        json_t *job = NULL;
        if (gp_cli_path(path, sizeof(path), "/v1/jobs", name, verb) < 0) {
            fprintf(stderr, "gpupool: job %.40s...: name too long\n", name);
            status = GP_EXIT_FAILURE;
            continue;
        }
        rc = gp_cli_call(c, "POST", path, NULL, &job);
        if (rc == 0) {
            printf("job %s (%lld) %s\n", gp_out_str(job, "name"), (long long)gp_out_int(job, "id"),
                   done);
        } else {
            status = rc;
        }
        json_decref(job);
    }
    json_decref(ids);
    gp_cli_conn_free(c);
    return status;
}

static int run(const gp_cli_spec *spec, int argc, char **argv, const char *verb, const char *done)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = change(&a, verb, done);
    gp_cli_args_fini(&a);
    return rc;
}

int gp_cli_cancel(int argc, char **argv)
{
    return run(&cancel_spec, argc, argv, "cancel", "cancelled");
}

int gp_cli_requeue(int argc, char **argv)
{
    return run(&requeue_spec, argc, argv, "requeue", "requeued");
}

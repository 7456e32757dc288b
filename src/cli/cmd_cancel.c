/*
 * gpupool cancel JOB... and gpupool requeue JOB...: POST /v1/jobs/{job}/cancel or /requeue for
 * each job given by id or name. Every job is tried; the exit status is 1 when any failed.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec cancel_spec = {
    "cancel",
    "cancel JOB [JOB...]",
    "Cancels jobs (by id or name): their replicas are stopped and their GPUs freed.",
    no_opts,
    GP_CLI_CONN,
    1,
    -1,
};

static const gp_cli_spec requeue_spec = {
    "requeue",
    "requeue JOB [JOB...]",
    "Stops jobs (by id or name) and puts them back in their queue, Pending.",
    no_opts,
    GP_CLI_CONN,
    1,
    -1,
};

static int change(const gp_cli_args *a, const char *verb, const char *done)
{
    gp_cli_conn *c;
    int rc = gp_cli_connect(a, &c);
    if (rc != 0) {
        return rc;
    }
    int status = GP_EXIT_OK;
    for (int i = 0; i < a->npos; i++) {
        char path[1200];
        json_t *job = NULL;
        if (gp_cli_path(path, sizeof(path), "/v1/jobs", a->pos[i], verb) < 0) {
            fprintf(stderr, "gpupool: job %.40s...: name too long\n", a->pos[i]);
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

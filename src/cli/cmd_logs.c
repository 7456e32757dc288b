/*
 * gpupool logs JOB [--replica N] [--stderr] [-f]: a replica's output, through the controller
 * from the agent of its node (GET /v1/jobs/{job}/logs). With -f it keeps asking for what came
 * after what it printed, until the job has ended and nothing more comes.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"
#include "net/http_client.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const gp_cli_opt logs_opts[] = {
    {"replica", 'r', "N", "the replica (default 0)"},
    {"stderr", 'e', NULL, "its stderr instead of its stdout"},
    {"follow", 'f', NULL, "keep printing new output until the job ends"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec logs_spec = {
    "logs",
    "logs JOB [--replica N] [--stderr] [-f]",
    "Prints a replica's output (by job id or name), fetched from its node.",
    logs_opts,
    GP_CLI_CONN,
    1,
    1,
};

/* The job's state ("" when it cannot be read). */
static void job_state(gp_http_client *c, const char *job, char *state, size_t cap)
{
    char path[300];
    int status = 0;
    char *body = NULL;
    gp_diag d;
    state[0] = 0;
    snprintf(path, sizeof(path), "/v1/jobs/%s", job);
    if (gp_http_call(c, "GET", path, NULL, 0, NULL, &status, &body, NULL, &d) == 0 &&
        status == 200) {
        json_t *doc = json_loads(body, 0, NULL);
        snprintf(state, cap, "%s", gp_out_str(doc, "state"));
        json_decref(doc);
    }
    free(body);
}

static bool ended(const char *state)
{
    return !strcmp(state, "Succeeded") || !strcmp(state, "Failed") || !strcmp(state, "Cancelled");
}

int gp_cli_logs(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&logs_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    int64_t replica = 0;
    if (gp_cli_arg(&a, "replica") &&
        gp_cli_parse_int(gp_cli_arg(&a, "replica"), 0, 4095, &replica) < 0) {
        gp_cli_args_fini(&a);
        return gp_cli_usage_error(&logs_spec, "--replica: must be 0..4095");
    }
    gp_cli_target t;
    char job[256];
    snprintf(job, sizeof(job), "%s", a.pos[0]);
    bool follow = gp_cli_arg(&a, "follow") != NULL;
    const char *stream = gp_cli_arg(&a, "stderr") ? "stderr" : "stdout";
    rc = gp_cli_resolve(&a, &t);
    gp_cli_args_fini(&a);
    if (rc != 0) {
        return rc;
    }
    gp_http_client *c;
    gp_diag d;
    if ((rc = gp_cli_http_new(&t, &c)) != 0) {
        return rc;
    }
    long long offset = 0;
    for (;;) {
        char path[512];
        snprintf(path, sizeof(path), "/v1/jobs/%s/logs?replica=%lld&stream=%s&offset=%lld", job,
                 (long long)replica, stream, offset);
        int status = 0;
        char *body = NULL;
        size_t len = 0;
        if (gp_http_call(c, "GET", path, NULL, 0, NULL, &status, &body, &len, &d) < 0) {
            fprintf(stderr, "gpupool: %s\n", d.msg);
            rc = GP_EXIT_FAILURE;
            break;
        }
        if (status != 200) {
            json_t *err = json_loads(body ? body : "", 0, NULL);
            const char *msg = NULL;
            json_unpack(err, "{s:{s:s}}", "error", "message", &msg);
            fprintf(stderr, "gpupool: %s\n", msg ? msg : "the server refused");
            json_decref(err);
            free(body);
            rc = GP_EXIT_FAILURE;
            break;
        }
        fwrite(body, 1, len, stdout);
        fflush(stdout);
        free(body);
        offset += (long long)len;
        if (!follow) {
            break;
        }
        if (len == 0) {
            char state[32];
            job_state(c, job, state, sizeof(state));
            if (ended(state)) {
                break;
            }
            struct timespec ts = {0, 500 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    gp_http_client_free(c);
    return rc;
}

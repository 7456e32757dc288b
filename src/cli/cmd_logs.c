/*
 * gpupool logs JOB [--replica N] [--stderr] [-f] [--tail N] [--since T] [--timestamps]: a job's
 * output, through the controller from the agent of each replica's node (GET
 * /v1/jobs/{job}/logs). Without --replica a job of several replicas shows them all, each line
 * prefixed "[replica N] " and the replicas' lines merged in the order they were written.
 *
 * Times: the agent records when each line was written (agent/logcap.h: a times file beside the
 * log, fetched with times=1); --timestamps prints that time before each line, --since keeps the
 * lines written since then (lines whose time is unknown, from an agent that kept none, are
 * left out). --tail N keeps each replica's last N lines. With -f it keeps asking each replica for
 * what came after what it printed, printing whole lines, until the job has ended and nothing
 * more comes.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/logtext.h"
#include "cli/output.h"
#include "net/http_client.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (1 << 20)
/* The first line of a times file (agent/logcap.h, GP_LOGCAP_TIMES_MAGIC). */
#define TIMES_MAGIC "# gpupool log times v1\n"

static const gp_cli_opt logs_opts[] = {
    {"replica", 'r', "N", "only this replica (default: all of them, each line prefixed)"},
    {"stderr", 'e', NULL, "its stderr instead of its stdout"},
    {"follow", 'f', NULL, "keep printing new output until the job ends"},
    {"tail", 0, "N", "only the last N lines (of each replica)"},
    {"since", 0, "DURATION|TIME", "only lines written since: 10m, 2h, or an RFC 3339 time"},
    {"timestamps", 0, NULL, "print the time each line was written before it"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec logs_spec = {
    "logs",
    "logs JOB [--replica N] [--stderr] [-f] [--tail N] [--since 10m|TIME] [--timestamps]",
    "Prints a job's output (by job id or name), fetched from its nodes; every replica's, each\n"
    "line prefixed \"[replica N] \", unless --replica picks one.",
    logs_opts,
    GP_CLI_CONN,
    1,
    1,
};

typedef struct opts {
    char job[700]; /* percent-encoded */
    const char *stream;
    bool follow, stamps, prefix, want_times;
    int64_t tail;  /* -1: all */
    int64_t since; /* ms; 0: all */
} opts;

/* What is known of one replica's log. */
typedef struct rlog {
    int replica;
    long long off, toff; /* next byte of the log, of its times file */
    bool no_times;       /* the agent keeps none (an older one answers the log itself) */
    char *part;          /* a line not ended yet, starting at part_start */
    size_t plen;
    long long part_start;
    gp_logs_times times;
} rlog;

typedef struct line {
    int replica;
    int64_t ms;
    char *text; /* without its newline */
    size_t len;
    size_t seq; /* order of arrival, for a stable merge */
} line;

typedef struct lines {
    line *v;
    size_t n, cap;
} lines;

/* GET of one piece of a replica's log (times: of its times file) from offset. 0 with *body
 * (free it) and *len, or an exit status (message printed). */
static int fetch(gp_http_client *c, const opts *o, int replica, bool times, long long offset,
                 char **body, size_t *len)
{
    char path[1024];
    int status = 0;
    gp_diag d;
    gp_diag_clear(&d);
    snprintf(path, sizeof(path), "/v1/jobs/%s/logs?replica=%d&stream=%s&offset=%lld&limit=%d%s",
             o->job, replica, o->stream, offset, CHUNK, times ? "&times=1" : "");
    *body = NULL;
    if (gp_http_call(c, "GET", path, NULL, 0, NULL, &status, body, len, &d) < 0) {
        fprintf(stderr, "gpupool: %s\n", d.msg);
        return GP_EXIT_FAILURE;
    }
    if (status != 200) {
        json_t *err = json_loadb(*body ? *body : "", *body ? *len : 0, 0, NULL);
        const char *msg = NULL;
        json_unpack(err, "{s:{s:s}}", "error", "message", &msg);
        fprintf(stderr, "gpupool: %s\n", msg ? msg : "the server refused");
        json_decref(err);
        free(*body);
        *body = NULL;
        return GP_EXIT_FAILURE;
    }
    return 0;
}

static int add_line(lines *out, int replica, int64_t ms, const char *text, size_t len)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 256;
        line *v = realloc(out->v, cap * sizeof(*v));
        if (!v) {
            return -1;
        }
        out->v = v;
        out->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        return -1;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    out->v[out->n] = (line){replica, ms, copy, len, out->n};
    out->n++;
    return 0;
}

/* Splits r's pending bytes into lines (the last one too when final), appended to out. */
static int split(rlog *r, bool final, lines *out)
{
    size_t start = 0;
    for (size_t i = 0; i < r->plen; i++) {
        if (r->part[i] == '\n') {
            int64_t ms = gp_logs_times_at(&r->times, r->part_start + (long long)start);
            if (add_line(out, r->replica, ms, r->part + start, i - start) < 0) {
                return -1;
            }
            start = i + 1;
        }
    }
    if (final && start < r->plen) {
        int64_t ms = gp_logs_times_at(&r->times, r->part_start + (long long)start);
        if (add_line(out, r->replica, ms, r->part + start, r->plen - start) < 0) {
            return -1;
        }
        start = r->plen;
    }
    if (start > 0) { /* r->part is NULL until something came */
        memmove(r->part, r->part + start, r->plen - start);
        r->plen -= start;
        r->part_start += (long long)start;
    }
    return 0;
}

/* Reads what is new of r's log (and its times) and appends its whole lines to out; *got tells
 * whether anything came. 0 or an exit status. */
static int read_new(gp_http_client *c, const opts *o, rlog *r, bool final, lines *out, bool *got)
{
    for (int times = o->want_times && !r->no_times ? 1 : 0; times >= 0; times--) {
        for (;;) {
            char *body;
            size_t len = 0;
            int rc = fetch(c, o, r->replica, times, times ? r->toff : r->off, &body, &len);
            if (rc != 0) {
                return rc;
            }
            if (times && r->toff == 0 && len > 0 &&
                (len < sizeof(TIMES_MAGIC) - 1 ||
                 memcmp(body, TIMES_MAGIC, sizeof(TIMES_MAGIC) - 1) != 0)) {
                r->no_times = true; /* not a times file: no times for this replica */
                free(body);
                break;
            }
            if (times) {
                long used = gp_logs_times_add(&r->times, body ? body : "", len);
                r->toff += used > 0 ? used : 0;
            } else if (len > 0) {
                char *p = realloc(r->part, r->plen + len);
                if (!p) {
                    free(body);
                    return GP_EXIT_FAILURE;
                }
                memcpy(p + r->plen, body, len);
                r->part = p;
                r->plen += len;
                r->off += (long long)len;
                *got = true;
            }
            free(body);
            if (len < CHUNK) {
                break;
            }
        }
    }
    return split(r, final, out) < 0 ? GP_EXIT_FAILURE : 0;
}

static int by_time(const void *pa, const void *pb)
{
    const line *a = pa, *b = pb;
    if (a->ms != b->ms) {
        return a->ms < b->ms ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Prints the lines of out kept by --since and --tail (tail: only when applying it), merged by
 * time when several replicas show, and empties out. */
static void print_lines(const opts *o, lines *out, bool tail, int nrep, const int *reps)
{
    for (size_t i = 0; i < out->n; i++) {
        line *l = &out->v[i];
        if (o->since && (l->ms == 0 || l->ms < o->since)) {
            l->replica = -1;
        }
    }
    for (int k = 0; tail && o->tail >= 0 && k < nrep; k++) {
        int64_t keep = o->tail;
        for (size_t i = out->n; i-- > 0;) {
            if (out->v[i].replica == reps[k] && keep-- <= 0) {
                out->v[i].replica = -1;
            }
        }
    }
    if (nrep > 1) {
        qsort(out->v, out->n, sizeof(*out->v), by_time);
    }
    for (size_t i = 0; i < out->n; i++) {
        line *l = &out->v[i];
        if (l->replica >= 0) {
            char when[48];
            if (o->prefix) {
                printf("[replica %d] ", l->replica);
            }
            if (o->stamps) {
                if (l->ms) {
                    gp_logs_format_time(l->ms, when, sizeof(when));
                }
                printf("%s ", l->ms ? when : "-");
            }
            fwrite(l->text, 1, l->len, stdout);
            putchar('\n');
        }
        free(l->text);
    }
    out->n = 0;
    fflush(stdout);
}

/* The job's state and replica count (state "" when it cannot be read). */
static int job_info(gp_http_client *c, const opts *o, char *state, size_t cap, int *replicas)
{
    char path[800];
    int status = 0;
    char *body = NULL;
    size_t len = 0;
    gp_diag d;
    gp_diag_clear(&d);
    snprintf(path, sizeof(path), "/v1/jobs/%s", o->job);
    state[0] = 0;
    if (gp_http_call(c, "GET", path, NULL, 0, NULL, &status, &body, &len, &d) < 0) {
        fprintf(stderr, "gpupool: %s\n", d.msg);
        return GP_EXIT_FAILURE;
    }
    json_t *doc = json_loadb(body ? body : "", body ? len : 0, 0, NULL);
    int rc = 0;
    if (status != 200) {
        const char *msg = NULL;
        json_unpack(doc, "{s:{s:s}}", "error", "message", &msg);
        fprintf(stderr, "gpupool: %s\n", msg ? msg : "the server refused");
        rc = GP_EXIT_FAILURE;
    } else {
        snprintf(state, cap, "%s", gp_out_str(doc, "state"));
        *replicas = (int)gp_out_int(doc, "replicas");
    }
    json_decref(doc);
    free(body);
    return rc;
}

static bool ended(const char *state)
{
    return !strcmp(state, "Succeeded") || !strcmp(state, "Failed") || !strcmp(state, "Cancelled");
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Prints the logs of the replicas reps[0, n) as o says. */
static int show(gp_http_client *c, const opts *o, const int *reps, int n)
{
    rlog *r = calloc((size_t)n, sizeof(*r));
    lines out = {0};
    int rc = r ? 0 : GP_EXIT_FAILURE;
    bool got = false;
    for (int i = 0; rc == 0 && i < n; i++) {
        r[i].replica = reps[i];
        rc = read_new(c, o, &r[i], !o->follow, &out, &got);
    }
    if (rc == 0) {
        print_lines(o, &out, true, n, reps);
    }
    for (bool done = !o->follow; rc == 0 && !done;) {
        char state[32];
        int nrep;
        bool fin = false;
        if (!got && (rc = job_info(c, o, state, sizeof(state), &nrep)) == 0 && ended(state)) {
            fin = done = true;
        }
        got = false;
        for (int i = 0; rc == 0 && i < n; i++) {
            rc = read_new(c, o, &r[i], fin, &out, &got);
        }
        if (rc == 0) {
            print_lines(o, &out, false, n, reps);
        }
        if (rc == 0 && !done && !got) {
            sleep_ms(500);
        }
    }
    print_lines(o, &out, false, 0, reps); /* frees what an error left */
    for (int i = 0; r && i < n; i++) {
        free(r[i].part);
        gp_logs_times_fini(&r[i].times);
    }
    free(r);
    free(out.v);
    return rc;
}

/* The options into *o; 0 or the usage error's exit status. */
static int read_opts(const gp_cli_args *a, opts *o, int64_t *replica)
{
    const char *rep = gp_cli_arg(a, "replica"), *tail = gp_cli_arg(a, "tail");
    const char *since = gp_cli_arg(a, "since");
    *o = (opts){.stream = gp_cli_arg(a, "stderr") ? "stderr" : "stdout",
                .follow = gp_cli_arg(a, "follow") != NULL,
                .stamps = gp_cli_arg(a, "timestamps") != NULL,
                .tail = -1};
    *replica = -1;
    if (rep && gp_cli_parse_int(rep, 0, 4095, replica) < 0) {
        return gp_cli_usage_error(a->spec, "--replica: must be 0..4095");
    }
    if (tail && gp_cli_parse_int(tail, 0, INT32_MAX, &o->tail) < 0) {
        return gp_cli_usage_error(a->spec, "--tail: must be a whole number of lines, 0 or more");
    }
    if (since && gp_logs_parse_since(since, gp_out_now_ms(), &o->since) < 0) {
        return gp_cli_usage_error(a->spec, "--since: must be a duration (90s, 10m, 2h, 3d) or "
                                           "an RFC 3339 time (2026-05-01T12:00:00Z)");
    }
    if (gp_cli_escape(a->pos[0], o->job, sizeof(o->job)) < 0) {
        return gp_cli_usage_error(a->spec, "JOB: too long");
    }
    return 0;
}

static int run(const gp_cli_args *a)
{
    opts o;
    int64_t replica;
    gp_cli_target t;
    int rc = read_opts(a, &o, &replica);
    if (rc == 0) {
        rc = gp_cli_resolve(a, &t);
    }
    gp_http_client *c = NULL;
    if (rc == 0) {
        rc = gp_cli_http_new(&t, &c);
    }
    int nrep = 1, reps[4096];
    char state[32];
    if (rc == 0 && replica < 0) {
        rc = job_info(c, &o, state, sizeof(state), &nrep);
    }
    if (rc == 0) {
        nrep = replica >= 0 ? 1 : nrep < 1 ? 1 : nrep > 4096 ? 4096 : nrep;
        for (int i = 0; i < nrep; i++) {
            reps[i] = replica >= 0 ? (int)replica : i;
        }
        o.prefix = nrep > 1;
        o.want_times = o.stamps || o.since || nrep > 1;
        rc = show(c, &o, reps, nrep);
    }
    gp_http_client_free(c);
    return rc;
}

int gp_cli_logs(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&logs_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = run(&a);
    gp_cli_args_fini(&a);
    return rc;
}

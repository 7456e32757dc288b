/*
 * gpupool get KIND [NAME]: lists the objects of a kind, or shows one, as a table or as the
 * server's documents in JSON or YAML. Jobs take filters (--state, --queue, --tenant, --name)
 * that the server applies, and come in pages: --all follows the "next" cursor to the end;
 * without it a table that has more says so on stderr. A job list shows the active jobs
 * (Pending, Scheduled, Running, Preempted, Suspended), newest first, unless --state or --all-states
 * asks for others and --order asc for the oldest first.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/resource.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const gp_cli_opt get_opts[] = {
    {"state", 0, "S[,S...]", "jobs: only in these states (pending, scheduled, running, ...)"},
    {"queue", 0, "Q", "jobs: only in queue Q"},
    {"tenant", 0, "T", "jobs: only of tenant T"},
    {"name", 0, "NAME", "jobs: only named NAME"},
    {"limit", 0, "N", "jobs: at most N per page (1..1000; default 100)"},
    {"all", 0, NULL, "jobs: every page, not only the first"},
    {"all-states", 0, NULL, "jobs: finished ones too (default: only active ones)"},
    {"order", 0, "asc|desc", "jobs: oldest or newest first (default desc)"},
    {"selector", 'l', "SELECTOR",
     "jobs: only those whose labels match (app=web,tier!=db,gpu,!debug,env in (a,b))"},
    {"show-labels", 0, NULL, "jobs: a LABELS column"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec get_spec = {
    "get",
    "get KIND [NAME] [-o table|wide|json|yaml] [--state S | --all-states] [--queue Q] "
    "[--tenant T] [--limit N] [--all] [--order asc|desc] [-l SELECTOR] [--show-labels]",
    "Lists the objects of a kind, or shows the one named NAME (a job by its id or name).\n"
    "KIND: jobs, nodes, queues, tenants, priorityclasses (pc), volumes (vol), tokens; singular "
    "works too.\nJobs: the active ones (pending, scheduled, running, preempted), newest first, "
    "unless --state, --all-states or --order say otherwise.",
    get_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT,
    1,
    2,
};

/* The state list as the server spells it: "pending,running" becomes "Pending,Running". */
static void capitalize_states(const char *in, char *out, size_t cap)
{
    snprintf(out, cap, "%s", in);
    for (char *p = out; *p; p++) {
        int first = p == out || p[-1] == ',';
        *p = (char)(first ? toupper((unsigned char)*p) : tolower((unsigned char)*p));
    }
}

/* The states a job list shows without --state or --all-states: those of jobs not yet over. */
#define ACTIVE_STATES "Pending,Scheduled,Running,Preempted,Suspended"

/* The query of a job list from the filters, without the cursor. */
static int job_query(const gp_cli_args *a, char *q, size_t cap)
{
    static const char *const keys[] = {"queue", "tenant", "name", "limit", "selector"};
    const char *state = gp_cli_arg(a, "state"), *order = gp_cli_arg(a, "order");
    q[0] = '\0';
    int64_t limit;
    const char *lim = gp_cli_arg(a, "limit");
    if (lim && gp_cli_parse_int(lim, 1, 1000, &limit) < 0) {
        return gp_cli_usage_error(a->spec, "--limit: must be an integer between 1 and 1000");
    }
    if (state && gp_cli_arg(a, "all-states")) {
        return gp_cli_usage_error(a->spec, "--state and --all-states do not go together");
    }
    if (order && strcmp(order, "asc") != 0 && strcmp(order, "desc") != 0) {
        return gp_cli_usage_error(a->spec, "--order: must be asc (oldest first) or desc (newest "
                                           "first)");
    }
    char states[256] = ACTIVE_STATES;
    if (state) {
        capitalize_states(state, states, sizeof(states));
    }
    if (!gp_cli_arg(a, "all-states") && gp_cli_query_add(q, cap, "state", states) < 0) {
        return gp_cli_usage_error(a->spec, "--state: too long");
    }
    if (gp_cli_query_add(q, cap, "order", order ? order : "desc") < 0) {
        return gp_cli_usage_error(a->spec, "--order: too long");
    }
    for (int i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++) {
        const char *v = gp_cli_arg(a, keys[i]);
        if (v && gp_cli_query_add(q, cap, keys[i], v) < 0) {
            return gp_cli_usage_error(a->spec, "--%s: too long", keys[i]);
        }
    }
    return 0;
}

/* Whether an option that filters a list is given (--show-labels does not filter). */
static bool filters_given(const gp_cli_args *a)
{
    for (const gp_cli_opt *o = get_opts; o->name; o++) {
        if (strcmp(o->name, "show-labels") != 0 && gp_cli_arg(a, o->name)) {
            return true;
        }
    }
    return false;
}

static int print_items(const gp_cli_kind *k, gp_out_format format, json_t *items, bool labels)
{
    if (gp_cli_kind_print_labels(k, format, items, labels, stdout) < 0) {
        fprintf(stderr, "gpupool get: out of memory\n");
        return GP_EXIT_FAILURE;
    }
    return 0;
}

static int get_one(gp_cli_conn *c, const gp_cli_kind *k, const char *name, gp_out_format format,
                   bool labels)
{
    json_t *doc;
    int rc = gp_cli_kind_get(c, k, name, &doc);
    if (rc != 0) {
        return rc;
    }
    if (format == GP_OUT_JSON || format == GP_OUT_YAML) {
        rc = gp_out_doc(stdout, format, doc) < 0 ? GP_EXIT_FAILURE : 0;
    } else {
        json_t *items = json_pack("[O]", doc);
        rc = items ? print_items(k, format, items, labels) : GP_EXIT_FAILURE;
        json_decref(items);
    }
    json_decref(doc);
    return rc;
}

static int get_list(gp_cli_conn *c, const gp_cli_kind *k, const gp_cli_args *a,
                    gp_out_format format)
{
    char query[1024] = "";
    int rc = k->paged ? job_query(a, query, sizeof(query)) : 0;
    json_t *items = json_array();
    int more = 0;
    if (rc == 0) {
        rc = gp_cli_get_pages(c, k->path, query, gp_cli_arg(a, "all") != NULL && k->paged, items,
                              &more);
    }
    if (rc == 0) {
        rc = print_items(k, format, items, gp_cli_arg(a, "show-labels") != NULL);
    }
    if (rc == 0 && more && format <= GP_OUT_WIDE) {
        fprintf(stderr, "gpupool get: more %s on later pages: add --all\n", k->plural);
    }
    json_decref(items);
    return rc;
}

static int run(const gp_cli_args *a)
{
    const gp_cli_kind *k = gp_cli_kind_find(a->pos[0]);
    gp_out_format format;
    if (!k) {
        return gp_cli_usage_error(a->spec, "unknown kind \"%s\" (one of %s)", a->pos[0],
                                  gp_cli_kind_list());
    }
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0) {
        return gp_cli_usage_error(a->spec, "-o: must be table, wide, json or yaml");
    }
    if (!k->paged && gp_cli_any_own(a)) {
        return gp_cli_usage_error(a->spec, "--state, --all-states, --queue, --tenant, --name, "
                                           "--limit, --all, --order, -l and --show-labels are "
                                           "for jobs only");
    }
    if (a->npos == 2 && filters_given(a)) {
        return gp_cli_usage_error(a->spec, "filters do not go with a NAME");
    }
    gp_cli_conn *c;
    int rc = gp_cli_connect(a, &c);
    if (rc != 0) {
        return rc;
    }
    rc = a->npos == 2 ? get_one(c, k, a->pos[1], format, gp_cli_arg(a, "show-labels") != NULL)
                      : get_list(c, k, a, format);
    gp_cli_conn_free(c);
    return rc;
}

int gp_cli_get(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&get_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = run(&a);
    gp_cli_args_fini(&a);
    return rc;
}

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
#include "cli/view.h"
#include "cli/watch.h"

#include <ctype.h>
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
    {"watch", 'w', NULL, "jobs, nodes: after the list, a line per change until interrupted"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec get_spec = {
    "get",
    "get KIND [NAME] [-o table|wide|json|yaml|name|jsonpath=TEMPLATE|custom-columns=SPEC] [-w]\n"
    "           [--state S | --all-states] [--queue Q] [--tenant T] [--limit N] [--all] "
    "[--order asc|desc]\n           [-l SELECTOR] [--show-labels]",
    "Lists the objects of a kind, or shows the one named NAME (a job by its id or name).\n"
    "KIND: jobs, nodes, queues, tenants, priorityclasses (pc), volumes (vol), tokens; singular "
    "works too.\nJobs: the active ones (pending, scheduled, running, preempted), newest first, "
    "unless --state, --all-states or --order say otherwise.\n"
    "-o name prints KIND/NAME; -o jsonpath='{.items[*].name}' (a list is {\"items\": [...]}, "
    "one object itself);\n-o custom-columns=NAME:.name,GPUS:.spec.resources.gpus. --watch (-w) "
    "polls "
    "every second.",
    get_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT | GP_CLI_OUTPUT_FORMS,
    1,
    2,
};

/* Whether a job filter (any option of the table but --watch) was given. */
/* Whether a jobs-only option is given; with filters_only, one that filters the list (not
 * --show-labels). --watch is not one. */
static int has_job_filter(const gp_cli_args *a, int filters_only)
{
    for (const gp_cli_opt *o = get_opts; o->name; o++) {
        if (strcmp(o->name, "watch") != 0 &&
            !(filters_only && strcmp(o->name, "show-labels") == 0) && gp_cli_arg(a, o->name)) {
            return 1;
        }
    }
    return 0;
}

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

static int get_one(gp_cli_conn *c, const gp_cli_kind *k, const char *name, const gp_view *v)
{
    json_t *doc;
    int rc = gp_cli_kind_get(c, k, name, &doc);
    if (rc != 0) {
        return rc;
    }
    rc = gp_view_print(v, k, NULL, doc, 1, stdout) < 0 ? GP_EXIT_FAILURE : 0;
    json_decref(doc);
    return rc;
}

static int get_list(gp_cli_conn *c, const gp_cli_kind *k, const gp_cli_args *a, const gp_view *v)
{
    char query[1024] = "";
    int rc = k->paged ? job_query(a, query, sizeof(query)) : 0;
    if (rc == 0 && gp_cli_arg(a, "watch")) {
        return gp_cli_watch(c, k, query, v, 1000);
    }
    json_t *items = json_array();
    int more = 0;
    if (rc == 0) {
        rc = gp_cli_get_pages(c, k->path, query, gp_cli_arg(a, "all") != NULL && k->paged, items,
                              &more);
    }
    if (rc == 0) {
        rc = gp_view_print(v, k, items, NULL, 1, stdout) < 0 ? GP_EXIT_FAILURE : 0;
    }
    if (rc == 0 && more && v->kind == GP_VIEW_FORMAT && v->format <= GP_OUT_WIDE) {
        fprintf(stderr, "gpupool get: more %s on later pages: add --all\n", k->plural);
    }
    json_decref(items);
    return rc;
}

/* Checks the flags against the kind and NAME. 0, or the usage error's exit status. */
static int check_flags(const gp_cli_args *a, const gp_cli_kind *k)
{
    int watch = gp_cli_arg(a, "watch") != NULL;
    if (watch && strcmp(k->plural, "jobs") != 0 && strcmp(k->plural, "nodes") != 0) {
        return gp_cli_usage_error(a->spec, "--watch: for jobs and nodes only");
    }
    if (watch && a->npos == 2) {
        return gp_cli_usage_error(a->spec, "--watch: watches a list, not a NAME");
    }
    if (watch && gp_cli_arg(a, "all")) {
        return gp_cli_usage_error(a->spec, "--watch: always reads every page; leave out --all");
    }
    if (!k->paged && has_job_filter(a, 0)) {
        return gp_cli_usage_error(a->spec, "--state, --all-states, --queue, --tenant, --name, "
                                           "--limit, --all, --order, -l and --show-labels are "
                                           "for jobs only");
    }
    if (a->npos == 2 && has_job_filter(a, 1)) {
        return gp_cli_usage_error(a->spec, "filters do not go with a NAME");
    }
    return 0;
}

static int run(const gp_cli_args *a)
{
    const gp_cli_kind *k = gp_cli_kind_find(a->pos[0]);
    if (!k) {
        return gp_cli_usage_error(a->spec, "unknown kind \"%s\" (one of %s)", a->pos[0],
                                  gp_cli_kind_list());
    }
    gp_view v;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = check_flags(a, k);
    if (rc != 0) {
        return rc;
    }
    if (gp_view_parse(gp_cli_arg(a, "output"), &v, &d) < 0) {
        return gp_cli_usage_error(a->spec, "%s", d.msg);
    }
    v.labels = gp_cli_arg(a, "show-labels") != NULL;
    gp_cli_conn *c;
    rc = gp_cli_connect(a, &c);
    if (rc == 0) {
        rc = a->npos == 2 ? get_one(c, k, a->pos[1], &v) : get_list(c, k, a, &v);
        gp_cli_conn_free(c);
    }
    gp_view_fini(&v);
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

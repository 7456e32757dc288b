/*
 * gpupool usage: the metering report (GET /v1/usage) as a table, CSV (RFC 4180), an Excel
 * workbook (xlsx, through libxlsxwriter) or the server's JSON document.
 *
 * The numbers are the server's: cost is the decimal string it sends (exact to the cent; the rows
 * add up to the total), hours are printed with six decimals in tables and CSV. CSV has a header
 * line and one line per row, no total (a program summing a column would count it twice); the
 * table and the workbook end with the total. The workbook has one sheet: a header row, typed
 * cells (dates for period starts, numbers for amounts, a currency format for cost) and a total
 * row of SUM formulas that carry the server's totals as their values. An xlsx file is written to
 * --output FILE, or to stdout when stdout is not a terminal (a pipe or a redirect); a workbook
 * is never dumped on a terminal. CSV and the workbook are net/usage_doc.c's, the writer behind
 * GET /v1/usage?format=csv|xlsx too.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"
#include "gpupool/meter.h"
#include "net/usage_doc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const gp_cli_opt usage_opts[] = {
    {"by", 0, "WHAT", "rows by tenant (default), queue, node, job or model"},
    {"period", 0, "P", "split into day, week or month (UTC; default: none)"},
    {"from", 0, "DATE", "from DATE: 2024-05-01, an RFC 3339 time or ms (default: month start)"},
    {"to", 0, "DATE", "until DATE, excluded (default: the end of this month)"},
    {"format", 'o', "FORMAT", "table (default), csv, xlsx or json"},
    {"output", 0, "FILE", "write to FILE instead of stdout (xlsx: needed on a terminal)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec usage_spec = {
    "usage",
    "usage [--by tenant|queue|node|job|model] [--period day|week|month] [--from DATE] "
    "[--to DATE] [-o table|csv|xlsx|json] [--output FILE]",
    "Shows metered usage: GPU-hours allocated and used, CPU core-hours, memory GiB-hours and\n"
    "cost, by tenant, queue, node, job or GPU model (users see their own tenant only).",
    usage_opts,
    GP_CLI_CONN,
    0,
    0,
};

typedef enum fmt { F_TABLE, F_CSV, F_XLSX, F_JSON } fmt;

/* ---- table ---- */

static void hours(const json_t *row, const char *key, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.6f", json_number_value(json_object_get(row, key)));
}

static const char *cost_of(const json_t *row)
{
    const char *c = json_string_value(json_object_get(row, "cost"));
    return c ? c : "";
}

static int print_table(const json_t *doc, FILE *f)
{
    const char *by = gp_out_str(doc, "by");
    char key[32], cost[48];
    snprintf(key, sizeof(key), "%s", by);
    for (char *p = key; *p; p++) {
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    }
    const char *currency = json_string_value(json_object_get(doc, "currency"));
    snprintf(cost, sizeof(cost), "COST%s%s", currency ? " " : "", currency ? currency : "");
    const char *headers[] = {key,         "PERIOD",        "GPU-HOURS", "USED",
                             "CPU-HOURS", "MEM-GIB-HOURS", cost};
    gp_out_table *t = gp_out_table_new(headers, 7);
    if (!t) {
        return -1;
    }
    int rc = 0;
    size_t i;
    const json_t *row;
    char cells[GP_USAGE_NAMOUNTS][32], period[40];
    const char *c[7];
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        snprintf(period, sizeof(period), "%s", gp_out_str(row, "period_start"));
        c[0] = gp_out_str(row, "key");
        c[1] = period;
        for (int k = 0; k < GP_USAGE_NAMOUNTS; k++) {
            hours(row, gp_usage_amount_keys[k], cells[k], sizeof(cells[k]));
            c[2 + k] = cells[k];
        }
        c[6] = cost_of(row);
        rc = rc < 0 ? rc : gp_out_table_add(t, c);
    }
    const json_t *total = json_object_get(doc, "total");
    c[0] = "TOTAL";
    c[1] = "";
    for (int k = 0; k < GP_USAGE_NAMOUNTS; k++) {
        hours(total, gp_usage_amount_keys[k], cells[k], sizeof(cells[k]));
        c[2 + k] = cells[k];
    }
    c[6] = cost_of(total);
    rc = rc < 0 ? rc : gp_out_table_add(t, c);
    if (rc == 0) {
        fprintf(f, "usage from %s to %s (as of %s)\n", gp_out_str(doc, "from"),
                gp_out_str(doc, "to"), gp_out_str(doc, "as_of"));
        gp_out_table_print(t, f, 0);
    }
    gp_out_table_free(t);
    return rc;
}

/* The workbook to stdout (not a terminal): written to a temporary file, then copied. */
static int xlsx_stdout(const json_t *doc)
{
    const char *dir = getenv("TMPDIR");
    char *buf = NULL;
    size_t len = 0;
    int rc = gp_usage_xlsx(doc, dir && dir[0] ? dir : "/tmp", &buf, &len);
    if (rc == 0 && fwrite(buf, 1, len, stdout) != len) {
        rc = -1;
    }
    free(buf);
    return rc | (fflush(stdout) == 0 ? 0 : -1);
}

/* ---- JSON: the server's document, every number as it came (17 significant digits) ---- */

static int print_json(const json_t *doc, FILE *f)
{
    char *text = json_dumps(doc, JSON_INDENT(2));
    if (!text) {
        return -1;
    }
    fprintf(f, "%s\n", text);
    free(text);
    return ferror(f) ? -1 : 0;
}

/* ---- the command ---- */

static int parse_format(const char *s, fmt *out)
{
    static const char *const names[] = {"table", "csv", "xlsx", "json"};
    for (int i = 0; i < 4; i++) {
        if (!s || strcmp(s, names[i]) == 0) {
            *out = s ? (fmt)i : F_TABLE;
            return 0;
        }
    }
    return -1;
}

static int build_query(const gp_cli_args *a, char *q, size_t cap)
{
    static const char *const keys[] = {"by", "period", "from", "to"};
    gp_meter_by by;
    gp_meter_period period;
    const char *v = gp_cli_arg(a, "by");
    if (v && gp_meter_by_parse(v, &by) < 0) {
        return gp_cli_usage_error(a->spec, "--by: must be tenant, queue, node, job or model");
    }
    v = gp_cli_arg(a, "period");
    if (v && gp_meter_period_parse(v, &period) < 0) {
        return gp_cli_usage_error(a->spec, "--period: must be day, week, month or none");
    }
    q[0] = '\0';
    for (int i = 0; i < 4; i++) {
        v = gp_cli_arg(a, keys[i]);
        if (v && gp_cli_query_add(q, cap, keys[i], v) < 0) {
            return gp_cli_usage_error(a->spec, "--%s: too long", keys[i]);
        }
    }
    return 0;
}

static int emit(const json_t *doc, fmt format, const char *output)
{
    if (format == F_XLSX) {
        return output ? gp_usage_xlsx_file(doc, output) : xlsx_stdout(doc);
    }
    FILE *f = output ? fopen(output, "w") : stdout;
    if (!f) {
        return -1;
    }
    int rc = format == F_TABLE ? print_table(doc, f)
             : format == F_CSV ? gp_usage_csv(doc, f)
                               : print_json(doc, f);
    if (output) {
        rc |= fclose(f) == 0 ? 0 : -1;
    } else {
        rc |= fflush(f) == 0 ? 0 : -1;
    }
    return rc;
}

static int run(const gp_cli_args *a)
{
    fmt format;
    if (parse_format(gp_cli_arg(a, "format"), &format) < 0) {
        return gp_cli_usage_error(a->spec, "-o: must be table, csv, xlsx or json");
    }
    const char *output = gp_cli_arg(a, "output");
    if (output && !output[0]) {
        return gp_cli_usage_error(a->spec, "--output: a file name is needed");
    }
    if (format == F_XLSX && !output && isatty(STDOUT_FILENO)) {
        return gp_cli_usage_error(a->spec,
                                  "-o xlsx: give --output FILE (or redirect stdout to a file)");
    }
    char query[1024], path[1100];
    int rc = build_query(a, query, sizeof(query));
    if (rc != 0) {
        return rc;
    }
    snprintf(path, sizeof(path), "/v1/usage%s", query);
    gp_cli_conn *c;
    rc = gp_cli_connect(a, &c);
    if (rc != 0) {
        return rc;
    }
    json_t *doc = NULL;
    rc = gp_cli_call(c, "GET", path, NULL, &doc);
    gp_cli_conn_free(c);
    if (rc == 0 && emit(doc, format, output) < 0) {
        fprintf(stderr, "gpupool usage: cannot write %s: %s\n", output ? output : "the output",
                errno ? strerror(errno) : "failed");
        rc = GP_EXIT_FAILURE;
    }
    json_decref(doc);
    return rc;
}

int gp_cli_usage(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&usage_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = run(&a);
    gp_cli_args_fini(&a);
    return rc;
}

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
 * is never dumped on a terminal.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"
#include "gpupool/meter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xlsxwriter.h>

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

/* The amounts of a row, in column order after KEY and PERIOD. */
static const char *const amount_keys[] = {"gpu_hours", "gpu_hours_used", "cpu_core_hours",
                                          "memory_gib_hours"};
#define NAMOUNTS 4

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
    char cells[NAMOUNTS][32], period[40];
    const char *c[7];
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        snprintf(period, sizeof(period), "%s", gp_out_str(row, "period_start"));
        c[0] = gp_out_str(row, "key");
        c[1] = period;
        for (int k = 0; k < NAMOUNTS; k++) {
            hours(row, amount_keys[k], cells[k], sizeof(cells[k]));
            c[2 + k] = cells[k];
        }
        c[6] = cost_of(row);
        rc = rc < 0 ? rc : gp_out_table_add(t, c);
    }
    const json_t *total = json_object_get(doc, "total");
    c[0] = "TOTAL";
    c[1] = "";
    for (int k = 0; k < NAMOUNTS; k++) {
        hours(total, amount_keys[k], cells[k], sizeof(cells[k]));
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

/* ---- CSV (RFC 4180: CRLF, fields with a comma, quote or line break quoted, quotes doubled) ----
 */

static void csv_field(FILE *f, const char *s, bool last)
{
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', f);
        for (const char *p = s; *p; p++) {
            if (*p == '"') {
                fputc('"', f);
            }
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputs(last ? "\r\n" : ",", f);
}

static int print_csv(const json_t *doc, FILE *f)
{
    csv_field(f, gp_out_str(doc, "by"), false);
    csv_field(f, "period_start", false);
    for (int k = 0; k < NAMOUNTS; k++) {
        csv_field(f, amount_keys[k], false);
    }
    csv_field(f, "cost", false);
    csv_field(f, "currency", true);
    const char *currency = json_string_value(json_object_get(doc, "currency"));
    size_t i;
    const json_t *row;
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        char cell[32];
        csv_field(f, gp_out_str(row, "key"), false);
        csv_field(f, gp_out_str(row, "period_start"), false);
        for (int k = 0; k < NAMOUNTS; k++) {
            hours(row, amount_keys[k], cell, sizeof(cell));
            csv_field(f, cell, false);
        }
        csv_field(f, cost_of(row), false);
        csv_field(f, currency ? currency : "", true);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- xlsx ---- */

static lxw_datetime datetime_of(const char *rfc3339)
{
    lxw_datetime t = {1970, 1, 1, 0, 0, 0};
    int64_t ms = 0;
    if (gp_meter_parse_time(rfc3339, &ms) == 0) {
        time_t s = (time_t)(ms / 1000);
        struct tm tm;
        if (gmtime_r(&s, &tm)) {
            t = (lxw_datetime){tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                               tm.tm_hour,        tm.tm_min,     (double)tm.tm_sec};
        }
    }
    return t;
}

/* "A".."Z" for the columns used here. */
static char col_letter(int col)
{
    return (char)('A' + col);
}

static int write_xlsx(const json_t *doc, const char *path)
{
    lxw_workbook *wb = workbook_new(path);
    lxw_worksheet *ws = wb ? workbook_add_worksheet(wb, "usage") : NULL;
    if (!ws) {
        workbook_close(wb);
        return -1;
    }
    lxw_format *bold = workbook_add_format(wb);
    format_set_bold(bold);
    lxw_format *date = workbook_add_format(wb);
    format_set_num_format(date, "yyyy-mm-dd hh:mm");
    lxw_format *num = workbook_add_format(wb);
    format_set_num_format(num, "0.000000");
    lxw_format *money = workbook_add_format(wb);
    const char *currency = json_string_value(json_object_get(doc, "currency"));
    char money_fmt[64];
    snprintf(money_fmt, sizeof(money_fmt), "%s%s%s#,##0.00", currency ? "[$" : "",
             currency ? currency : "", currency ? "] " : "");
    format_set_num_format(money, money_fmt);
    lxw_format *total_num = workbook_add_format(wb);
    format_set_bold(total_num);
    format_set_num_format(total_num, "0.000000");
    lxw_format *total_money = workbook_add_format(wb);
    format_set_bold(total_money);
    format_set_num_format(total_money, money_fmt);

    const char *headers[] = {gp_out_str(doc, "by"), "period_start", amount_keys[0], amount_keys[1],
                             amount_keys[2],        amount_keys[3], "cost"};
    for (int c = 0; c < 7; c++) {
        worksheet_write_string(ws, 0, (lxw_col_t)c, headers[c], bold);
    }
    worksheet_set_column(ws, 0, 0, 24, NULL);
    worksheet_set_column(ws, 1, 1, 18, NULL);
    worksheet_set_column(ws, 2, 6, 16, NULL);
    size_t i;
    const json_t *row;
    lxw_row_t r = 1;
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        worksheet_write_string(ws, r, 0, gp_out_str(row, "key"), NULL);
        lxw_datetime dt = datetime_of(gp_out_str(row, "period_start"));
        worksheet_write_datetime(ws, r, 1, &dt, date);
        for (int k = 0; k < NAMOUNTS; k++) {
            worksheet_write_number(ws, r, (lxw_col_t)(2 + k),
                                   json_number_value(json_object_get(row, amount_keys[k])), num);
        }
        if (json_is_string(json_object_get(row, "cost"))) {
            worksheet_write_number(ws, r, 6, strtod(cost_of(row), NULL), money);
        }
        r++;
    }
    /* The total: SUM formulas, with the server's totals as their values. */
    const json_t *total = json_object_get(doc, "total");
    worksheet_write_string(ws, r, 0, "Total", bold);
    for (int c = 2; c <= 6; c++) {
        char formula[64];
        snprintf(formula, sizeof(formula), "=SUM(%c2:%c%u)", col_letter(c), col_letter(c),
                 (unsigned)(r > 1 ? r : 2));
        double v = c < 6 ? json_number_value(json_object_get(total, amount_keys[c - 2]))
                         : strtod(cost_of(total), NULL);
        if (c < 6 || json_is_string(json_object_get(total, "cost"))) {
            worksheet_write_formula_num(ws, r, (lxw_col_t)c, formula,
                                        c < 6 ? total_num : total_money, v);
        }
    }
    return workbook_close(wb) == LXW_NO_ERROR ? 0 : -1;
}

/* The workbook to stdout (not a terminal): written to a temporary file, then copied. */
static int xlsx_stdout(const json_t *doc)
{
    const char *dir = getenv("TMPDIR");
    char path[1024];
    snprintf(path, sizeof(path), "%s/gpupool-usage.XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        return -1;
    }
    close(fd);
    int rc = write_xlsx(doc, path);
    FILE *in = rc == 0 ? fopen(path, "rb") : NULL;
    rc = in ? 0 : -1;
    char buf[65536];
    size_t n;
    while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
        rc |= fwrite(buf, 1, n, stdout) == n ? 0 : -1;
    }
    if (in) {
        rc |= ferror(in) ? -1 : 0;
        fclose(in);
    }
    unlink(path);
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
        return output ? write_xlsx(doc, output) : xlsx_stdout(doc);
    }
    FILE *f = output ? fopen(output, "w") : stdout;
    if (!f) {
        return -1;
    }
    int rc = format == F_TABLE ? print_table(doc, f)
             : format == F_CSV ? print_csv(doc, f)
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

/*
 * The usage report as CSV and xlsx (see usage_doc.h). The numbers are the report's: cost is the
 * decimal string the controller computed (exact to the cent, the rows add up to the total);
 * hours are printed with six decimals in CSV and stored as doubles in the workbook.
 */
#include "net/usage_doc.h"

#include "gpupool/error.h"
#include "gpupool/meter.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xlsxwriter.h>

const char *const gp_usage_amount_keys[GP_USAGE_NAMOUNTS] = {"gpu_hours", "gpu_hours_used",
                                                             "cpu_core_hours", "memory_gib_hours"};

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static void hours(const json_t *row, const char *key, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.6f", json_number_value(json_object_get(row, key)));
}

/* ---- CSV ---- */

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

int gp_usage_csv(const json_t *doc, FILE *f)
{
    csv_field(f, str(doc, "by"), false);
    csv_field(f, "period_start", false);
    for (int k = 0; k < GP_USAGE_NAMOUNTS; k++) {
        csv_field(f, gp_usage_amount_keys[k], false);
    }
    csv_field(f, "cost", false);
    csv_field(f, "currency", true);
    const char *currency = json_string_value(json_object_get(doc, "currency"));
    size_t i;
    const json_t *row;
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        char cell[32];
        csv_field(f, str(row, "key"), false);
        csv_field(f, str(row, "period_start"), false);
        for (int k = 0; k < GP_USAGE_NAMOUNTS; k++) {
            hours(row, gp_usage_amount_keys[k], cell, sizeof(cell));
            csv_field(f, cell, false);
        }
        csv_field(f, str(row, "cost"), false);
        csv_field(f, currency ? currency : "", true);
    }
    return ferror(f) ? GP_EIO : 0;
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

/* The formats of the sheet. */
typedef struct sheet_formats {
    lxw_format *bold, *date, *num, *money, *total_num, *total_money;
} sheet_formats;

static void make_formats(lxw_workbook *wb, const json_t *doc, sheet_formats *fm)
{
    fm->bold = workbook_add_format(wb);
    format_set_bold(fm->bold);
    fm->date = workbook_add_format(wb);
    format_set_num_format(fm->date, "yyyy-mm-dd hh:mm");
    fm->num = workbook_add_format(wb);
    format_set_num_format(fm->num, "0.000000");
    fm->money = workbook_add_format(wb);
    const char *currency = json_string_value(json_object_get(doc, "currency"));
    char money_fmt[64];
    snprintf(money_fmt, sizeof(money_fmt), "%s%s%s#,##0.00", currency ? "[$" : "",
             currency ? currency : "", currency ? "] " : "");
    format_set_num_format(fm->money, money_fmt);
    fm->total_num = workbook_add_format(wb);
    format_set_bold(fm->total_num);
    format_set_num_format(fm->total_num, "0.000000");
    fm->total_money = workbook_add_format(wb);
    format_set_bold(fm->total_money);
    format_set_num_format(fm->total_money, money_fmt);
}

/* The total row r: SUM formulas, with the report's totals as their values. */
static void write_total(lxw_worksheet *ws, const json_t *doc, lxw_row_t r, const sheet_formats *fm)
{
    const json_t *total = json_object_get(doc, "total");
    worksheet_write_string(ws, r, 0, "Total", fm->bold);
    for (int c = 2; c <= 6; c++) {
        char formula[64];
        snprintf(formula, sizeof(formula), "=SUM(%c2:%c%u)", col_letter(c), col_letter(c),
                 (unsigned)(r > 1 ? r : 2));
        double v = c < 6 ? json_number_value(json_object_get(total, gp_usage_amount_keys[c - 2]))
                         : strtod(str(total, "cost"), NULL);
        if (c < 6 || json_is_string(json_object_get(total, "cost"))) {
            worksheet_write_formula_num(ws, r, (lxw_col_t)c, formula,
                                        c < 6 ? fm->total_num : fm->total_money, v);
        }
    }
}

/* Writes doc to path; libxlsxwriter's own temporary files go in tmpdir (NULL: its default). */
static int write_xlsx(const json_t *doc, const char *path, const char *tmpdir)
{
    lxw_workbook_options opt = {.constant_memory = LXW_FALSE, .tmpdir = (char *)tmpdir};
    lxw_workbook *wb = tmpdir ? workbook_new_opt(path, &opt) : workbook_new(path);
    lxw_worksheet *ws = wb ? workbook_add_worksheet(wb, "usage") : NULL;
    if (!ws) {
        workbook_close(wb);
        return GP_EIO;
    }
    sheet_formats fm;
    make_formats(wb, doc, &fm);
    const char *headers[] = {str(doc, "by"),
                             "period_start",
                             gp_usage_amount_keys[0],
                             gp_usage_amount_keys[1],
                             gp_usage_amount_keys[2],
                             gp_usage_amount_keys[3],
                             "cost"};
    for (int c = 0; c < 7; c++) {
        worksheet_write_string(ws, 0, (lxw_col_t)c, headers[c], fm.bold);
    }
    worksheet_set_column(ws, 0, 0, 24, NULL);
    worksheet_set_column(ws, 1, 1, 18, NULL);
    worksheet_set_column(ws, 2, 6, 16, NULL);
    size_t i;
    const json_t *row;
    lxw_row_t r = 1;
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        worksheet_write_string(ws, r, 0, str(row, "key"), NULL);
        lxw_datetime dt = datetime_of(str(row, "period_start"));
        worksheet_write_datetime(ws, r, 1, &dt, fm.date);
        for (int k = 0; k < GP_USAGE_NAMOUNTS; k++) {
            worksheet_write_number(ws, r, (lxw_col_t)(2 + k),
                                   json_number_value(json_object_get(row, gp_usage_amount_keys[k])),
                                   fm.num);
        }
        if (json_is_string(json_object_get(row, "cost"))) {
            worksheet_write_number(ws, r, 6, strtod(str(row, "cost"), NULL), fm.money);
        }
        r++;
    }
    write_total(ws, doc, r, &fm);
    return workbook_close(wb) == LXW_NO_ERROR ? 0 : GP_EIO;
}

int gp_usage_xlsx_file(const json_t *doc, const char *path)
{
    return write_xlsx(doc, path, NULL);
}

/* Reads the whole file at path. 0, GP_EIO or GP_ENOMEM. */
static int slurp(const char *path, char **out, size_t *len)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        return GP_EIO;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : GP_ENOMEM;
    while (rc == 0) {
        if (n == cap) {
            char *more = realloc(buf, cap * 2);
            if (!more) {
                rc = GP_ENOMEM;
                break;
            }
            buf = more;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, in);
        n += got;
        if (got == 0) {
            rc = ferror(in) ? GP_EIO : 0;
            break;
        }
    }
    fclose(in);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

int gp_usage_xlsx(const json_t *doc, const char *tmpdir, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/gpupool-usage.XXXXXX", tmpdir);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        return GP_EIO;
    }
    int fd = mkstemp(path);
    if (fd < 0) {
        return GP_EIO;
    }
    close(fd);
    int rc = write_xlsx(doc, path, tmpdir);
    if (rc == 0) {
        rc = slurp(path, out, len);
    }
    unlink(path);
    return rc;
}

/* "2024-05-01T00:00:00Z" -> "2024-05-01"; "2024-05-01T12:30:00Z" -> "2024-05-01T123000Z". */
static void time_part(const char *t, char *buf, size_t cap)
{
    size_t n = 0;
    bool midnight = strcmp(t + strcspn(t, "T"), "T00:00:00Z") == 0;
    for (const char *p = t; *p && n + 1 < cap; p++) {
        if (midnight && *p == 'T') {
            break;
        }
        if (*p != ':') {
            buf[n++] = *p;
        }
    }
    buf[n] = '\0';
}

void gp_usage_filename(const json_t *doc, const char *ext, char *buf, size_t cap)
{
    char from[48], to[48];
    time_part(str(doc, "from"), from, sizeof(from));
    time_part(str(doc, "to"), to, sizeof(to));
    snprintf(buf, cap, "gpupool-usage-%s-%s-%s.%s", str(doc, "by"), from, to, ext);
}

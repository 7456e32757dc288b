/*
 * The metering report (GET /v1/usage's JSON document, docs/billing.md) as files a person opens:
 * CSV and an Excel workbook. One writer for both places that make them, `gpupool usage -o
 * csv|xlsx` and GET /v1/usage?format=csv|xlsx, so that they give the same file for the same
 * report.
 *
 * CSV (RFC 4180: CRLF line ends; a field with a comma, quote or line break quoted, quotes
 * doubled): a header line, then one line per row — KEY (the grouping, e.g. "tenant"),
 * period_start, gpu_hours, gpu_hours_used, cpu_core_hours, memory_gib_hours (six decimals),
 * cost (the server's decimal string; empty without prices) and currency. No total line: a
 * program summing a column would count it twice.
 *
 * The workbook has one sheet, "usage": a bold header row, typed cells (a date for period_start,
 * numbers for the amounts, a currency format for cost) and a total row of SUM formulas that
 * carry the report's totals as their values. libxlsxwriter writes workbooks to files only, so
 * the in-memory form goes through a temporary file in a directory the caller names.
 *
 * Ownership: doc is borrowed. Nothing here keeps state; every function may run on any thread.
 */
#ifndef GP_NET_USAGE_DOC_H
#define GP_NET_USAGE_DOC_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define GP_USAGE_NAMOUNTS 4

/* The amounts of a row, in column order after KEY and period_start. */
extern const char *const gp_usage_amount_keys[GP_USAGE_NAMOUNTS];

/* Writes doc as CSV to f. 0, or GP_EIO when f reports an error. */
int gp_usage_csv(const json_t *doc, FILE *f);

/* Writes doc as a workbook at path (created or replaced). 0, or GP_EIO. */
int gp_usage_xlsx_file(const json_t *doc, const char *path);

/* The workbook in memory: *out (malloc'd, the caller frees it) of *len bytes. Its temporary
 * files go in tmpdir and are removed before returning. 0, GP_EIO or GP_ENOMEM (*out NULL). */
int gp_usage_xlsx(const json_t *doc, const char *tmpdir, char **out, size_t *len);

/* The file name a download of doc is offered under: "gpupool-usage-BY-FROM-TO.EXT", FROM and
 * TO as dates (2024-05-01) when they are midnights, else as compact UTC times
 * (2024-05-01T120000Z); ext without its dot ("csv"). */
void gp_usage_filename(const json_t *doc, const char *ext, char *buf, size_t cap);

#endif

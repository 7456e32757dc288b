/*
 * libxlsxwriter, loaded by the first call into it (lazylib.h): gpupool usage -o xlsx, through
 * net/usage_doc.c. One row per function the program uses.
 */
#pragma GCC visibility push(hidden)
#include <xlsxwriter.h>
#pragma GCC visibility pop

#include "cli/lazylib.h"

#include <string.h>

#ifndef GP_XLSXWRITER_SONAME
#error "GP_XLSXWRITER_SONAME (the soname of libxlsxwriter) must be defined"
#endif

static gp_cli_lazylib xlsx = {.soname = GP_XLSXWRITER_SONAME};

#define NOLIB LXW_ERROR_MEMORY_MALLOC_FAILED

#pragma GCC visibility push(hidden)

GP_CLI_LAZY_FN(xlsx, workbook_new, lxw_workbook *, (const char *filename), (filename), NULL)
GP_CLI_LAZY_FN(xlsx, workbook_new_opt, lxw_workbook *,
               (const char *filename, lxw_workbook_options *options), (filename, options), NULL)
GP_CLI_LAZY_FN(xlsx, workbook_add_worksheet, lxw_worksheet *,
               (lxw_workbook * workbook, const char *sheetname), (workbook, sheetname), NULL)
GP_CLI_LAZY_FN(xlsx, workbook_add_format, lxw_format *, (lxw_workbook * workbook), (workbook), NULL)
GP_CLI_LAZY_FN(xlsx, workbook_close, lxw_error, (lxw_workbook * workbook), (workbook), NOLIB)
GP_CLI_LAZY_VOID(xlsx, format_set_bold, (lxw_format * format), (format))
GP_CLI_LAZY_VOID(xlsx, format_set_num_format, (lxw_format * format, const char *num_format),
                 (format, num_format))
GP_CLI_LAZY_FN(xlsx, worksheet_set_column, lxw_error,
               (lxw_worksheet * worksheet, lxw_col_t first_col, lxw_col_t last_col, double width,
                lxw_format *format),
               (worksheet, first_col, last_col, width, format), NOLIB)
GP_CLI_LAZY_FN(xlsx, worksheet_write_string, lxw_error,
               (lxw_worksheet * worksheet, lxw_row_t row, lxw_col_t col, const char *string,
                lxw_format *format),
               (worksheet, row, col, string, format), NOLIB)
GP_CLI_LAZY_FN(xlsx, worksheet_write_number, lxw_error,
               (lxw_worksheet * worksheet, lxw_row_t row, lxw_col_t col, double number,
                lxw_format *format),
               (worksheet, row, col, number, format), NOLIB)
GP_CLI_LAZY_FN(xlsx, worksheet_write_datetime, lxw_error,
               (lxw_worksheet * worksheet, lxw_row_t row, lxw_col_t col, lxw_datetime *datetime,
                lxw_format *format),
               (worksheet, row, col, datetime, format), NOLIB)
GP_CLI_LAZY_FN(xlsx, worksheet_write_formula_num, lxw_error,
               (lxw_worksheet * worksheet, lxw_row_t row, lxw_col_t col, const char *formula,
                lxw_format *format, double result),
               (worksheet, row, col, formula, format, result), NOLIB)

#pragma GCC visibility pop

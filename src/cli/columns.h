/*
 * kubectl's custom columns for `gpupool get -o custom-columns=SPEC`: SPEC is
 * "HEADER:PATH[,HEADER:PATH...]", each PATH a JSONPath expression with or without its braces
 * (".name", "{.resources.gpus}", ".labels['app']"; see jsonpath.h). A cell is the values its
 * path selects, joined by ","; "<none>" when there are none. Pure: no I/O, no globals.
 *
 * Errors: gp_columns_parse sets d to "column N: ..." and, for a bad path, "column N (HEADER):
 * position P: ..." with P counted in SPEC from 1, and returns GP_EINVAL (GP_ENOMEM when out of
 * memory).
 */
#ifndef GP_CLI_COLUMNS_H
#define GP_CLI_COLUMNS_H

#include "gpupool/error.h"

#include <jansson.h>

typedef struct gp_columns gp_columns;

/* The most columns a SPEC may have. */
#define GP_COLUMNS_MAX 64

/* Parses spec into *out (free with gp_columns_free). 0, or a negative GP_E* code, d set and
 * *out NULL. */
int gp_columns_parse(const char *spec, gp_columns **out, gp_diag *d);
void gp_columns_free(gp_columns *c);

/* The number of columns, and the header of column i (borrowed). */
int gp_columns_count(const gp_columns *c);
const char *gp_columns_header(const gp_columns *c, int i);

/* The cell of column i for item (a new string to free; NULL when out of memory). */
char *gp_columns_cell(const gp_columns *c, int i, const json_t *item);

/* The canonical SPEC of c (a new string; NULL when out of memory): parsing it gives columns
 * with the same headers and paths, which format to the same text. */
char *gp_columns_format(const gp_columns *c);

#endif

/*
 * How `gpupool get` shows what it fetched: -o table|wide|json|yaml (resource.h's tables and the
 * documents), and kubectl's -o name ("job/train-1"), -o jsonpath=TEMPLATE (jsonpath.h) and
 * -o custom-columns=SPEC (columns.h). One parsed view is used for a list, for one object and
 * for the lines of --watch.
 *
 * A list is shown to jsonpath as {"items": [...]} (what -o json prints), one object as itself,
 * so that {.items[*].name} and {.name} read as they do in kubectl.
 */
#ifndef GP_CLI_VIEW_H
#define GP_CLI_VIEW_H

#include "cli/columns.h"
#include "cli/jsonpath.h"
#include "cli/output.h"
#include "cli/resource.h"

#include <jansson.h>
#include <stdio.h>

typedef enum gp_view_kind {
    GP_VIEW_FORMAT,   /* table, wide, json, yaml: format */
    GP_VIEW_NAME,     /* KIND/NAME per line */
    GP_VIEW_JSONPATH, /* the template's output */
    GP_VIEW_COLUMNS,  /* a table of the custom columns */
} gp_view_kind;

typedef struct gp_view {
    gp_view_kind kind;
    gp_out_format format;
    gp_jsonpath *tmpl;
    gp_columns *cols;
    int64_t now_ms; /* tables: ages as at this time; 0: the current time */
    int labels;     /* tables: with the LABELS column (--show-labels); 0 after gp_view_parse */
} gp_view;

/* Parses the -o value (NULL: table) into *v. 0, or -1 with d naming what is wrong ("-o
 * jsonpath: position 3: ..."); *v then holds nothing to free. */
int gp_view_parse(const char *arg, gp_view *v, gp_diag *d);
void gp_view_fini(gp_view *v);

/* Prints items (an array of documents of kind k), or, with one set, the single document one
 * (items then ignored; tables show it as a one-row list). header: whether a table prints its
 * header line (--watch prints it once). 0, or -1 (out of memory, or an output too large:
 * message printed). */
int gp_view_print(const gp_view *v, const gp_cli_kind *k, json_t *items, const json_t *one,
                  int header, FILE *f);

/* The name -o name prints for item of kind k: its "name", else its "id" (into buf). */
void gp_view_object_name(const gp_cli_kind *k, const json_t *item, char *buf, size_t cap);

#endif

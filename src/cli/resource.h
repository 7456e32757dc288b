/*
 * The kinds of objects `gpupool get` shows: their names on the command line, their API path and
 * their table columns, one table of data (resource.c). A column is a header, whether only
 * `-o wide` shows it, and a function that formats one cell from the server's document.
 */
#ifndef GP_CLI_RESOURCE_H
#define GP_CLI_RESOURCE_H

#include "cli/output.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef void gp_cli_cell_fn(const json_t *item, int64_t now_ms, char *buf, size_t cap);

/* gp_cli_column.wide: when a column shows. */
#define GP_COL_WIDE   1 /* with -o wide */
#define GP_COL_LABELS 2 /* with --show-labels */

typedef struct gp_cli_column {
    const char *header; /* NULL ends a table */
    int wide;           /* 0: always; else GP_COL_WIDE or GP_COL_LABELS */
    gp_cli_cell_fn *cell;
} gp_cli_column;

typedef struct gp_cli_kind {
    const char *singular, *plural, *alias; /* "job", "jobs", NULL */
    const char *path;                      /* "/v1/jobs" */
    int paged;                             /* the list has a "next" cursor */
    int list_only;                         /* no GET PATH/NAME: found in the list by id or name */
    const gp_cli_column *cols;
} gp_cli_kind;

/* The kind a word names (singular, plural or alias), or NULL. */
const gp_cli_kind *gp_cli_kind_find(const char *word);
/* The plural names, comma-separated, for messages and help. */
const char *gp_cli_kind_list(void);

/* Prints items (a JSON array of documents of kind k) as a table (-o table or wide), or as
 * {"items": [...]} in JSON or YAML. 0, or -1 (out of memory). */
int gp_cli_kind_print(const gp_cli_kind *k, gp_out_format format, json_t *items, FILE *f);
/* The same, with the GP_COL_LABELS columns when labels. */
int gp_cli_kind_print_labels(const gp_cli_kind *k, gp_out_format format, json_t *items, bool labels,
                             FILE *f);

/* The table alone, with the columns show (GP_COL_* bits) adds to the plain ones, with or without
 * its header line, ages as at now_ms (0: the current time). 0, or -1 (out of memory). */
int gp_cli_kind_table(const gp_cli_kind *k, int show, const json_t *items, int header,
                      int64_t now_ms, FILE *f);

/* Fetches the object of kind k named name (or with that id) into *doc. 0, or an exit status
 * (message printed). */
struct gp_cli_conn;
int gp_cli_kind_get(struct gp_cli_conn *c, const gp_cli_kind *k, const char *name, json_t **doc);

/* A job's GPU request, as the tables show it: "2" whole GPUs, "0.5" of one, "1g.10gb" (MIG),
 * "0.5/10Gi"; "4x2" for 4 replicas of 2. */
void gp_cli_job_gpus(const json_t *job, char *buf, size_t cap);
/* A node's taints as kubectl writes them, comma-separated: "dedicated=ml:NoSchedule,spot:
 * PreferNoSchedule" ("" for none). */
void gp_cli_node_taints(const json_t *node, char *buf, size_t cap);

#endif

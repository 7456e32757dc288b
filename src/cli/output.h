/*
 * Output of the server commands: aligned tables, JSON and YAML documents, and the small
 * formatters the tables use (ages, sizes, GPU amounts, times).
 *
 * YAML is written by libyaml's emitter from the JSON tree, strings quoted whenever YAML would
 * read them back as something else ("true", "10", ""), so `-o yaml` round-trips through
 * gp_yaml_to_json to the same document as `-o json`.
 */
#ifndef GP_CLI_OUTPUT_H
#define GP_CLI_OUTPUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum gp_out_format {
    GP_OUT_TABLE = 0,
    GP_OUT_WIDE = 1,
    GP_OUT_JSON = 2,
    GP_OUT_YAML = 3,
} gp_out_format;

/* Parses table|wide|json|yaml (NULL: table). 0, or -1 for another word. */
int gp_out_format_parse(const char *s, gp_out_format *out);

/* Prints doc as indented JSON or as YAML (by f), then a newline. 0, or -1 (out of memory). */
int gp_out_doc(FILE *f, gp_out_format format, const json_t *doc);

/* A table of strings, printed with its columns aligned (the last one unpadded). */
typedef struct gp_out_table gp_out_table;

/* A table with these column headers (copied); NULL when out of memory. */
gp_out_table *gp_out_table_new(const char *const *headers, int ncols);
void gp_out_table_free(gp_out_table *t);
/* Appends a row of ncols cells (copied; NULL or "" prints "-"). 0, or -1 (out of memory). */
int gp_out_table_add(gp_out_table *t, const char *const *cells);
/* Prints the table, each line indented by indent spaces. */
void gp_out_table_print(const gp_out_table *t, FILE *f, int indent);
/* The same without the header line (the widths still count it, so rows line up with it). */
void gp_out_table_print_body(const gp_out_table *t, FILE *f, int indent);

/* The current time in milliseconds since the epoch. */
int64_t gp_out_now_ms(void);
/* An age such as 42s, 5m, 3h, 12d ("-" for 0 or the future). */
void gp_out_age(int64_t now_ms, int64_t then_ms, char *buf, size_t cap);
/* Time left until then_ms: "in 2h", "in 90s" (the units of gp_out_age); "now" once it has
 * come; "-" for 0. */
void gp_out_until(int64_t now_ms, int64_t then_ms, char *buf, size_t cap);
/* A UTC time as 2024-05-01T12:00:00Z ("-" for 0). */
void gp_out_time(int64_t ms, char *buf, size_t cap);
/* MiB as 80Gi, 512Mi, 1.5Ti. */
void gp_out_mib(int64_t mib, char *buf, size_t cap);
/* Thousandths as a decimal: 2000 is 2, 500 is 0.5, 1250 is 1.25. */
void gp_out_milli(int64_t milli, char *buf, size_t cap);
/* A JSON number as the shortest text (2, 0.5); "-" for anything else. */
void gp_out_number(const json_t *v, char *buf, size_t cap);
/* An image reference as a table shows it, in at most max bytes (and cap - 1): the Docker Hub
 * prefixes the normal form adds are dropped ("docker.io/library/ubuntu:22.04" is
 * "ubuntu:22.04", "docker.io/team/x:1" "team/x:1"), a digest keeps 12 hex digits
 * ("x@sha256:0123456789ab"), and a reference still too long loses its leading path components
 * (".../team/pytorch:2.1"), and when its last one is too long even so, that one's end too
 * (".../pytorch:23.10-py3-cuda12.2-cudnn8..."). NULL or "" gives "". */
void gp_out_image(const char *ref, size_t max, char *buf, size_t cap);
/* The string at obj[key], or "" when absent or not a string. */
const char *gp_out_str(const json_t *obj, const char *key);
/* The integer at obj[key], or 0. */
int64_t gp_out_int(const json_t *obj, const char *key);

#endif

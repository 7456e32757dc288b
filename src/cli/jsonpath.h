/*
 * The subset of kubectl's JSONPath templates that `gpupool get -o jsonpath=...` and
 * `-o custom-columns=...` take, compiled once and run over the server's JSON documents. Pure:
 * no I/O, no globals; the output is a string.
 *
 * A template is text with expressions in braces:
 *   text            copied as is (neither '{' nor '}': write {"{"} for one)
 *   {PATH}          the values PATH selects, separated by one space
 *   {"LITERAL"}     a string with the escapes \t \n \r \\ \" (e.g. {"\t"})
 *   {range PATH}...{end}
 *                   the part between, once per value of PATH, with PATH relative to that value
 * A PATH is "$" (the document) or "@" / "." (the current value, the document outside a range),
 * then any number of .NAME (letters, digits, '_', '-'), ['NAME'] or ["NAME"] (any key), [*] or
 * .* (every element or member), [N] (an index; negative counts from the end). A name that is
 * absent selects nothing: the expression prints nothing. Strings print as they are, numbers as
 * the shortest decimal, true/false/null as words, objects and arrays as compact JSON.
 * Not supported (refused at compile time, with the position): filters [?(...)], recursive
 * descent (..), slices [a:b], unions [a,b].
 *
 * Errors: gp_jsonpath_compile sets d to "position N: WHAT" (N counts bytes from 1) and returns
 * GP_EINVAL; GP_ENOMEM when out of memory.
 */
#ifndef GP_CLI_JSONPATH_H
#define GP_CLI_JSONPATH_H

#include "gpupool/error.h"

#include <jansson.h>

typedef struct gp_jsonpath gp_jsonpath;

/* The most {range} blocks inside each other a template may have. */
#define GP_JSONPATH_MAX_DEPTH 8
/* The most bytes one run may output (a range over a large list stays well under). */
#define GP_JSONPATH_MAX_OUTPUT (16u << 20)

/* Compiles text into *out (free with gp_jsonpath_free). 0, or a negative GP_E* code with d set
 * and *out NULL. */
int gp_jsonpath_compile(const char *text, gp_jsonpath **out, gp_diag *d);
void gp_jsonpath_free(gp_jsonpath *p);

/* The canonical text of p (a new string to free; NULL when out of memory): compiling it gives
 * a template that does the same and formats to the same text. */
char *gp_jsonpath_format(const gp_jsonpath *p);

/* Runs p over doc (borrowed). *out: a new string to free. 0, or GP_ENOMEM, or GP_ERANGE when
 * the output would pass GP_JSONPATH_MAX_OUTPUT (d set; *out NULL). */
int gp_jsonpath_run(const gp_jsonpath *p, const json_t *doc, char **out, gp_diag *d);

/* Whether p is one {PATH} and nothing else (what gp_jsonpath_values takes). */
int gp_jsonpath_is_path(const gp_jsonpath *p);

/* The values one PATH-only template (a single {PATH}) selects in doc, as gp_jsonpath_run would
 * print them but each apart: *n values in *vals (strings to free with their array; *vals NULL
 * when there are none). Used by custom columns. 0 or GP_ENOMEM. */
int gp_jsonpath_values(const gp_jsonpath *p, const json_t *doc, char ***vals, int *n);

#endif

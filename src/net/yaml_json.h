/*
 * YAML to JSON: reads one YAML document (libyaml) into a jansson tree, so that YAML and JSON
 * inputs go through one validator. Scalars follow the YAML 1.2 core schema: quoted scalars are
 * strings; plain ones are null (null, ~, empty), booleans (true, false), integers, floats, or
 * else strings. Anchors and aliases are refused (they serve no purpose in a spec and allow
 * exponential expansion), as are more than one document and nesting deeper than
 * GP_JSON_MAX_DEPTH. The depth is checked while the tree is built, node by node, so a deep
 * document is refused before it can use much stack or memory.
 *
 * JSON text gets the same depth limit from gp_json_check_depth, a scan that runs before a parser
 * builds anything.
 */
#ifndef GP_NET_YAML_JSON_H
#define GP_NET_YAML_JSON_H

#include "gpupool/error.h"

#include <jansson.h>
#include <stddef.h>

/* The deepest nesting of arrays and objects accepted in YAML and in API bodies: the outermost
 * array or object is at depth 1, so {"a": [1]} is 2 deep. Scalars do not count. */
#define GP_JSON_MAX_DEPTH 64

/* Parses text into *out (a new reference). 0, or GP_EPARSE with line and column in d (also for
 * nesting deeper than GP_JSON_MAX_DEPTH: "line 3, column 9: nested deeper than 64 levels"). */
int gp_yaml_to_json(const char *text, size_t len, json_t **out, gp_diag *d);

/* The same, and also sets *lines (a new reference) to an object mapping the path of every
 * mapping key to the 1-based line the key is on, so that a validator can name the line of a bad
 * value: keys of nested mappings are joined with '.' and sequence items add "[i]", as in
 * "scheduler.node_policy" or "a.b[2].c". Paths longer than 511 bytes are left out. On failure
 * both *out and *lines are NULL. */
int gp_yaml_to_json_lines(const char *text, size_t len, json_t **out, json_t **lines, gp_diag *d);

/* Parses every document of a YAML stream (documents separated by "---") into *out, a new JSON
 * array holding each document's root in order; empty documents (null) are left out, so a
 * trailing "---" adds nothing. The same scalars, limits and errors as gp_yaml_to_json, each
 * error naming its line in the whole stream. On failure *out is NULL. */
int gp_yaml_to_json_all(const char *text, size_t len, json_t **out, gp_diag *d);

/* Checks that JSON text nests arrays and objects at most max deep, without parsing it: brackets
 * inside strings (escapes included) are skipped; anything else malformed is left to the parser.
 * 0, or GP_EPARSE with d naming the line and column of the first bracket too deep:
 * "line 1, column 65: nested deeper than 64 levels". */
int gp_json_check_depth(const char *text, size_t len, int max, gp_diag *d);

#endif

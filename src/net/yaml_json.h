/*
 * YAML to JSON: reads one YAML document (libyaml) into a jansson tree, so that YAML and JSON
 * inputs go through one validator. Scalars follow the YAML 1.2 core schema: quoted scalars are
 * strings; plain ones are null (null, ~, empty), booleans (true, false), integers, floats, or
 * else strings. Anchors and aliases are refused (they serve no purpose in a spec and allow
 * exponential expansion), as are nesting deeper than 32 and more than one document.
 */
#ifndef GP_NET_YAML_JSON_H
#define GP_NET_YAML_JSON_H

#include "gpupool/error.h"

#include <jansson.h>
#include <stddef.h>

/* Parses text into *out (a new reference). 0, or GP_EPARSE with line and column in d. */
int gp_yaml_to_json(const char *text, size_t len, json_t **out, gp_diag *d);

/* The same, and also sets *lines (a new reference) to an object mapping the path of every
 * mapping key to the 1-based line the key is on, so that a validator can name the line of a bad
 * value: keys of nested mappings are joined with '.' and sequence items add "[i]", as in
 * "scheduler.node_policy" or "a.b[2].c". Paths longer than 511 bytes are left out. On failure
 * both *out and *lines are NULL. */
int gp_yaml_to_json_lines(const char *text, size_t len, json_t **out, json_t **lines, gp_diag *d);

#endif

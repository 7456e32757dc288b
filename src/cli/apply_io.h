/*
 * The manifests `gpupool apply -f` and `delete -f` read: files, directories (their *.yaml,
 * *.yml and *.json files, in name order, not recursively) and standard input ("-"). YAML may
 * hold several documents ("---"); JSON is one object (a `kind: List` holds several).
 */
#ifndef GP_CLI_APPLY_IO_H
#define GP_CLI_APPLY_IO_H

#include "gpupool/error.h"

#include <jansson.h>

/* Most bytes read from one file. */
#define GP_APPLY_MAX_FILE (8 << 20)

/* Reads every path in order into *docs (a new array of the documents) and *files (a new array
 * of the same length: the file each document came from, "-" for standard input). 0, or
 * GP_EPARSE / GP_EINVAL / GP_ENOMEM with d naming the file (and line); both NULL then. */
int gp_apply_read(const char *const *paths, int npaths, json_t **docs, json_t **files, gp_diag *d);

#endif

/*
 * The strict JSON readers every wire codec uses (wire.c, wire_desired.c): one place that judges
 * a member's type and range and names its path in the error. Internal to libgpnet.
 *
 * Paths: path is the object's own ("replicas[2]", "" for the document); an error names
 * "path.key", or "key" at the top ("gpus[3].utilization: must be a number between 0 and 100").
 * An absent member, or a null one, leaves *out untouched and is an error only when required.
 */
#ifndef GP_NET_WIRE_READ_H
#define GP_NET_WIRE_READ_H

#include "gpupool/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* o must be an object whose members are all in names (NULL-terminated). */
int gp__wire_members(json_t *o, const char *path, const char *const *names, gp_diag *d);
/* o must be an object (its members are not judged: a reader that ignores unknown ones). */
int gp__wire_object(json_t *o, const char *path, gp_diag *d);
/* An integer in lo..hi. */
int gp__wire_int(json_t *o, const char *path, const char *key, int64_t lo, int64_t hi,
                 bool required, int64_t *out, gp_diag *d);
int gp__wire_i(json_t *o, const char *path, const char *key, int lo, int hi, bool required,
               int *out, gp_diag *d);
/* A finite number in lo..hi. */
int gp__wire_num(json_t *o, const char *path, const char *key, double lo, double hi, double *out,
                 gp_diag *d);
/* A string without NUL of at most cap - 1 bytes, copied into out. */
int gp__wire_str(json_t *o, const char *path, const char *key, bool required, char *out, size_t cap,
                 gp_diag *d);
/* The same, at most max bytes, as a new heap copy in *out (caller frees). */
int gp__wire_strdup(json_t *o, const char *path, const char *key, bool required, size_t max,
                    char **out, gp_diag *d);
/* A boolean. */
int gp__wire_bool(json_t *o, const char *path, const char *key, bool *out, gp_diag *d);
/* The list member key of o: NULL in *out when absent or null; at most max entries. */
int gp__wire_list(json_t *o, const char *path, const char *key, size_t max, json_t **out,
                  gp_diag *d);

#endif

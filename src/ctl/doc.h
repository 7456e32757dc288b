/*
 * Reading JSON documents strictly: every field known, every value checked, errors naming the
 * field's path (`quota.gpus: must be a number between 0 and 1000000`).
 *
 * A document is read by walking its members against a table of field names; a member not in
 * the table is refused (`quota.gpu: unknown field`). Readers write only into the caller's
 * struct, so a failed read leaves whatever the caller stored untouched.
 */
#ifndef GP_CTL_DOC_H
#define GP_CTL_DOC_H

#include "gpupool/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Refuses a value that is not an object, and any member whose name is not in names
 * (NULL-terminated). path: "" for the top level. */
int doc_check_fields(json_t *obj, const char *path, const char *const *names, gp_diag *d);

/* Each reader: member key of obj (absent: keeps *out and returns 0; JSON null counts as absent).
 * path is the object's path ("" at the top). */
int doc_int(json_t *obj, const char *path, const char *key, int64_t lo, int64_t hi, int64_t *out,
            gp_diag *d);
int doc_num(json_t *obj, const char *path, const char *key, double lo, double hi, double *out,
            gp_diag *d);
int doc_bool(json_t *obj, const char *path, const char *key, bool *out, gp_diag *d);
int doc_str(json_t *obj, const char *path, const char *key, char *out, size_t cap, gp_diag *d);
/* A name: [a-z0-9-], 1..63 characters, starting and ending alphanumeric. */
int doc_name(json_t *obj, const char *path, const char *key, char *out, size_t cap, gp_diag *d);
bool doc_name_valid(const char *s);
/* GPU count given as a number (may be fractional: 0.5) → milli-GPU. */
int doc_gpus(json_t *obj, const char *path, const char *key, int64_t *milli, gp_diag *d);

/* The full path of key under path ("quota" + "gpus" → "quota.gpus"). */
void doc_path(char *buf, size_t cap, const char *path, const char *key);

/* A GPU count in milli-GPU as a JSON number: integer when whole (16), else decimal (0.5). */
json_t *doc_gpus_value(int64_t milli);

#endif

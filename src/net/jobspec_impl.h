/*
 * What the job spec's parser and encoder share between their files (jobspec.c: the batch
 * fields and the entry points; jobspec_serve.c: the fields of notebooks and services). Not a
 * public interface.
 *
 * The getters check one value's type and bounds and name path in the error (GP_EINVAL) they
 * set in d; they write their output only on success. js_walk walks an object with tables of
 * fields (a key is looked up in each in turn: the top level has one per file) and refuses unknown
 * keys; null values are skipped (the default).
 */
#ifndef GP_NET_JOBSPEC_IMPL_H
#define GP_NET_JOBSPEC_IMPL_H

#include "gpupool/jobspec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The longest duration a spec takes (365 days). */
#define JS_DURATION_MAX ((int64_t)365 * 86400)

typedef int (*field_fn)(json_t *v, const char *path, gp_jobspec *s, gp_diag *d);

typedef struct field {
    const char *name;
    field_fn parse;
} field;

/* One table of fields; JS_TABLE(array) makes one from an array. */
typedef struct field_table {
    const field *fields;
    int n;
} field_table;
#define JS_TABLE(a) ((field_table){(a), (int)(sizeof(a) / sizeof((a)[0]))})

int js_int(json_t *v, const char *path, int64_t lo, int64_t hi, int64_t *out, gp_diag *d);
int js_int32(json_t *v, const char *path, int lo, int hi, int *out, gp_diag *d);
/* A string of 1 to cap - 1 bytes without NUL. */
int js_text(json_t *v, const char *path, char *dst, size_t cap, gp_diag *d);
/* A DNS-label-like identifier: [a-z0-9-], alphanumeric at both ends. */
int js_ident(json_t *v, const char *path, char *dst, size_t cap, gp_diag *d);
/* One of names[0..n); *out its index. */
int js_enum(json_t *v, const char *path, const char *const *names, int n, int *out, gp_diag *d);
/* A NULL-terminated copy of a list of min to 4096 strings. */
int js_strings(json_t *v, const char *path, int min, char ***out, gp_diag *d);
int js_walk(json_t *v, const char *path, const field_table *tables, int ntables, gp_jobspec *s,
            gp_diag *d);
/* js_walk with one table. */
int js_walk1(json_t *v, const char *path, field_table t, gp_jobspec *s, gp_diag *d);
/* Seconds, or a number with a unit (90s, 30m, 2h, 1d), between lo and hi seconds. */
int js_duration_in(json_t *v, const char *path, int64_t lo, int64_t hi, int64_t *out, gp_diag *d);
/* js_duration_in from 1 s to JS_DURATION_MAX. */
int js_duration(json_t *v, const char *path, int64_t *out, gp_diag *d);

/* Whether two NULL-terminated lists are the same (NULL and an empty list are). */
bool js_same_list(char **a, char **b);

/* A builder that remembers the first failure, so an encoder reads as a list of members. */
typedef struct enc {
    bool failed;
} enc;

/* Sets o[key] = v (taking v); a NULL v or o, or a failed set, marks e failed. */
void js_put(enc *e, json_t *o, const char *key, json_t *v);
/* A JSON array of a NULL-terminated list (NULL: empty). */
json_t *js_string_list(enc *e, char **list);
/* Seconds in the largest unit that divides them exactly: "2h", "90m", "45s", "1d", "0s". */
json_t *js_duration_json(int64_t secs);

/* ---- jobspec_serve.c ---- */

/* network and idle_action before js_serve_finish when the spec does not give them. */
#define JS_NETWORK_UNSET ((gp_network)-1)
#define JS_IDLE_UNSET    ((gp_idle_action)-1)

/* Marks the kind fields "not given" in a spec about to be parsed (js_serve_finish resolves). */
void js_serve_defaults(gp_jobspec *s);

/* The top-level fields of notebooks and services, in the parser's field-table form. */
extern const field js_serve_fields[];
extern const int js_serve_nfields;
/* Checks the kind fields together (after every field is parsed, before the batch checks that
 * read them) and fills in their defaults; names the field on error. */
int js_serve_finish(gp_jobspec *s, gp_diag *d);
/* Adds the kind fields' canonical members to o. */
void js_serve_encode(enc *e, json_t *o, const gp_jobspec *s);
/* Whether the kind fields of a and b are the same. */
bool js_serve_equal(const gp_jobspec *a, const gp_jobspec *b);
/* Frees what the kind fields own. */
void js_serve_fini(gp_jobspec *s);

/* ---- jobspec_place.c: labels, annotations and where replicas may go ---- */

extern const field js_place_fields[];
extern const int js_place_nfields;
/* Adds the placement fields' canonical members to o (each only when set). */
void js_place_encode(enc *e, json_t *o, const gp_jobspec *s);
bool js_place_equal(const gp_jobspec *a, const gp_jobspec *b);
void js_place_fini(gp_jobspec *s);

/* ---- jobspec_batch.c: array, after_ok, shm_size_mib ---- */

int js_f_array(json_t *v, const char *path, gp_jobspec *s, gp_diag *d);
int js_f_after_ok(json_t *v, const char *path, gp_jobspec *s, gp_diag *d);
int js_f_shm_size(json_t *v, const char *path, gp_jobspec *s, gp_diag *d);
/* Checks them against the rest of the spec (after js_serve_finish). */
int js_batch_finish(const gp_jobspec *s, gp_diag *d);
void js_batch_encode(enc *e, json_t *o, const gp_jobspec *s);
bool js_batch_equal(const gp_jobspec *a, const gp_jobspec *b);
void js_batch_fini(gp_jobspec *s);
/* Frees after_ok (NULL after). */
void js_batch_fini_after_ok(gp_jobspec *s);

#endif

/*
 * Label selectors, in kubectl's syntax: requirements separated by commas, all of which must hold.
 *
 *   app=web  app==web   the label is present with that value
 *   tier!=db            absent, or another value
 *   gpu                 present (any value)
 *   !debug              absent
 *   env in (prod,qa)    present with one of the values
 *   env notin (dev)     absent, or none of the values
 *
 * Keys and values follow the label syntax (gpupool/constraint.h); spaces around the parts are
 * allowed. An empty text selects everything. gp_selector_format writes the canonical text
 * ("=" for equality, " in (a,b)" for sets, no other spaces; set values in the order given) that
 * parses back to an equal selector; GP_SELECTOR_TEXT_MAX bytes always hold it. Pure.
 */
#ifndef GPUPOOL_SELECTOR_H
#define GPUPOOL_SELECTOR_H

#include "gpupool/constraint.h"
#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>

#define GP_SELECTOR_MAX        16 /* requirements */
#define GP_SELECTOR_MAX_VALUES 16 /* values of one set */
#define GP_SELECTOR_TEXT_MAX                                                                       \
    (GP_SELECTOR_MAX * (GP_LABEL_KEY_MAX + GP_SELECTOR_MAX_VALUES * GP_LABEL_VALUE_MAX + 16))

typedef enum gp_sel_op {
    GP_SEL_EQ = 0,
    GP_SEL_NE = 1,
    GP_SEL_EXISTS = 2,
    GP_SEL_ABSENT = 3,
    GP_SEL_IN = 4,
    GP_SEL_NOTIN = 5,
} gp_sel_op;

typedef struct gp_sel_req {
    char key[GP_LABEL_KEY_MAX];
    gp_sel_op op;
    int nvalues; /* EQ, NE: 1; IN, NOTIN: 1..GP_SELECTOR_MAX_VALUES; else 0 */
    char values[GP_SELECTOR_MAX_VALUES][GP_LABEL_VALUE_MAX];
} gp_sel_req;

typedef struct gp_selector {
    int n;
    gp_sel_req req[GP_SELECTOR_MAX];
} gp_selector;

/* Parses text (NUL-terminated) into *out. 0, or GP_EINVAL with d naming the requirement that is
 * wrong ("selector: tier!: a value must follow !="); *out is then unspecified. */
int gp_selector_parse(const char *text, gp_selector *out, gp_diag *d);
/* The canonical text of s into buf (cap bytes). 0, or GP_ERANGE when it does not fit. */
int gp_selector_format(const gp_selector *s, char *buf, size_t cap);
/* Whether labels[0..n) (keys distinct) meet every requirement of s. */
bool gp_selector_matches(const gp_selector *s, const gp_kv *labels, int n);
bool gp_selector_equal(const gp_selector *a, const gp_selector *b);

#endif

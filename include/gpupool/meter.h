/*
 * Metering math: from usage intervals (one per replica placement, as the controller records
 * them) and a price table, the report of GPU-hours allocated and used, CPU core-hours, memory
 * GiB-hours and cost, grouped by tenant, queue, node, job or GPU model and split into UTC days,
 * ISO weeks or calendar months.
 *
 * Pure: no clock (the caller closes open intervals at its own "now"), no I/O, no globals.
 *
 * Exactness. Every quantity is an integer: GPU-milli x ms, CPU-milli x ms, MiB x ms, and for
 * money an exact numerator over one common denominator (micro-currency per hour x milli-GPU x
 * ms, and the scales of the discount and of MiB per GiB), summed in 128 bits. The grand total of
 * money is rounded to the cent once (half up); the cents of the rows are their numerators'
 * floors plus one cent each for the rows with the largest remainders until the rows add up to
 * the total (the largest-remainder method; ties go to the earlier row). So the rows of any
 * grouping sum to the same total, to the cent: by tenant, by node and by model agree. Intervals
 * are split at period boundaries and at price changes, never in a way that depends on the
 * grouping, so the quantities agree across groupings too.
 *
 * Ownership: gp_meter_report_build fills a report whose rows it allocates; their keys point
 * into the caller's intervals (borrowed: keep the intervals while the report is used).
 * gp_meter_report_fini frees the rows.
 */
#ifndef GPUPOOL_METER_H
#define GPUPOOL_METER_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a replica holds of its GPUs. */
typedef enum gp_meter_kind {
    GP_METER_WHOLE = 0, /* whole GPUs: milli 1000 each */
    GP_METER_FRACTION,  /* a share of a GPU (milli < 1000) */
    GP_METER_MIG,       /* a MIG instance: milli is its compute slices x 1000 / 7 */
} gp_meter_kind;

/* "whole", "fraction", "mig"; GP_EINVAL for another name. */
const char *gp_meter_kind_name(gp_meter_kind k);
int gp_meter_kind_parse(const char *s, gp_meter_kind *out);

typedef enum gp_meter_by {
    GP_METER_BY_TENANT = 0,
    GP_METER_BY_QUEUE,
    GP_METER_BY_NODE,
    GP_METER_BY_JOB,
    GP_METER_BY_MODEL,
} gp_meter_by;

typedef enum gp_meter_period {
    GP_METER_NONE = 0, /* one period: [from, to) */
    GP_METER_DAY,      /* UTC days */
    GP_METER_WEEK,     /* ISO weeks: Monday 00:00 UTC */
    GP_METER_MONTH,    /* calendar months, UTC */
} gp_meter_period;

/* Names ("tenant", "month", ...) and their parsers (GP_EINVAL for another name). */
const char *gp_meter_by_name(gp_meter_by b);
int gp_meter_by_parse(const char *s, gp_meter_by *out);
const char *gp_meter_period_name(gp_meter_period p);
int gp_meter_period_parse(const char *s, gp_meter_period *out);

/* One placement of one replica over [start_ms, end_ms). The strings are borrowed; model is ""
 * for a replica without GPUs. */
typedef struct gp_meter_interval {
    const char *tenant, *queue, *node, *job, *model;
    gp_meter_kind kind;
    int gpus;                /* GPUs (or MIG instances) held */
    int milli;               /* per GPU: 1000 whole, 1..999 fraction, MIG as above */
    const char *mig_profile; /* MIG: "1g.10gb"; NULL or "" otherwise */
    int64_t cpu_milli, memory_mib;
    int64_t start_ms, end_ms; /* end <= start: nothing */
    /* GPU-milli x ms in use over the whole interval (more than gpus x milli x length counts as
     * that much): a part of the interval gets its share in proportion to its length, rounded
     * down. */
    int64_t used_milli_ms;
    /* Memory of one GPU of model, MiB (0: unknown): lets a price named by its size ("H100-80GB")
     * find a model whose name gives none ("NVIDIA H100 PCIe"). */
    int64_t model_mem_mib;
} gp_meter_interval;

#define GP_METER_NAME_MAX   64
#define GP_METER_MIG_MAX    16
#define GP_METER_NONE_PRICE (-1)

typedef struct gp_meter_mig_price {
    char profile[32];     /* "1g.10gb" */
    int64_t hourly_micro; /* per instance-hour */
} gp_meter_mig_price;

/* One price of one GPU model, in force from from_ms until the next entry of the same model. All
 * money is in micro-units of the currency (1e-6). model is a name as gpupool/modelname.h
 * resolves it: an interval's GPUs pay the prices of the most specific name that names their
 * model ("NVIDIA A100-SXM4-80GB" before "A100-80GB" before "A100"; of equally specific names,
 * the one that sorts first). */
typedef struct gp_meter_price {
    char model[GP_METER_NAME_MAX];
    int64_t from_ms;
    int64_t hourly_micro;          /* per whole GPU-hour */
    int64_t fraction_hourly_micro; /* per whole-GPU-equivalent hour of a shared GPU;
                                      GP_METER_NONE_PRICE: (1 - discount) x hourly */
    int nmig;
    gp_meter_mig_price mig[GP_METER_MIG_MAX]; /* MIG instances not listed pay hourly x milli */
} gp_meter_price;

typedef struct gp_meter_prices {
    char currency[16];
    int64_t shared_discount_ppm; /* 0..1000000: 0.2 is 200000 */
    int64_t cpu_core_hour_micro;
    int64_t memory_gib_hour_micro;
    const gp_meter_price *entries; /* any order; borrowed */
    int nentries;
} gp_meter_prices;

/* The cost model of a GPU: hourly = (purchase / (months x 730) + power_w / 1000 x
 * electricity_kwh) x (1 + overhead); every value in micro-units (30000 is 30000000000, 0.15 is
 * 150000). Rounded half up to a micro-unit. GP_EINVAL for months < 1 or a negative value,
 * GP_ERANGE when too large. */
typedef struct gp_meter_cost_model {
    int64_t purchase_micro;
    int64_t depreciation_months;
    int64_t power_w_micro;
    int64_t electricity_kwh_micro;
    int64_t overhead_micro;
} gp_meter_cost_model;

int gp_meter_cost_hourly(const gp_meter_cost_model *m, int64_t *hourly_micro);

/* One row of a report (or its total): sums over the parts of intervals that fall in it. */
typedef struct gp_meter_row {
    const char *key;         /* the group's name (borrowed from an interval); NULL in the total */
    int64_t period_start_ms; /* the period's start (UTC); from for GP_METER_NONE */
    int64_t gpu_milli_ms;    /* allocated */
    int64_t used_milli_ms;   /* used */
    int64_t cpu_milli_ms;
    int64_t memory_mib_ms;
    int64_t unpriced_milli_ms; /* allocated GPU time of models without a price then */
    int64_t cost_cents;
} gp_meter_row;

typedef struct gp_meter_report {
    gp_meter_row *rows; /* by key, then period; owned */
    int nrows;
    gp_meter_row total;
    bool priced; /* a price table was given */
} gp_meter_report;

typedef struct gp_meter_query {
    int64_t from_ms, to_ms; /* [from, to); from < to */
    gp_meter_by by;
    gp_meter_period period;
} gp_meter_query;

/* Builds the report of the intervals n over q, with prices (NULL: no cost, all 0). 0, or
 * GP_EINVAL (from >= to, a bad interval: negative amounts, milli above 1000), GP_ERANGE
 * (sums beyond 64 bits, money beyond 128) or GP_ENOMEM, with d saying which; *out is then
 * empty. */
int gp_meter_report_build(const gp_meter_interval *iv, int n, const gp_meter_prices *prices,
                          const gp_meter_query *q, gp_meter_report *out, gp_diag *d);
void gp_meter_report_fini(gp_meter_report *r);

/* The start of the period holding t (UTC), and the start of the next one. GP_METER_NONE has no
 * boundaries: start is INT64_MIN and next INT64_MAX. */
int64_t gp_meter_period_start(int64_t t, gp_meter_period p);
int64_t gp_meter_period_next(int64_t start, gp_meter_period p);

/* ---- text ---- */

/* A UTC time: "2024-05-01" (YYYY-MM-DD: its midnight) or RFC 3339 ("2024-05-01T12:00:00Z",
 * "2024-05-01T14:00:00.250+02:00") as ms since the epoch. 0, or GP_EINVAL. */
int gp_meter_parse_time(const char *s, int64_t *ms);
/* t as "2024-05-01T12:00:00Z" (milliseconds shown when not 0). */
void gp_meter_time_text(int64_t t, char *buf, size_t cap);
/* A decimal ("12", "0.15"; "1e3" and "-1" are refused) in micro-units: at most 6 fraction
 * digits, at most 1000000000. 0, or GP_EINVAL. */
int gp_meter_parse_micro(const char *s, int64_t *out);
/* Cents as "12.34" ("-0.05" for negatives). */
void gp_meter_cents_text(int64_t cents, char *buf, size_t cap);

#endif

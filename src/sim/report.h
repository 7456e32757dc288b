/*
 * Reports of a simulation run (`gpupool sim`): the results CSV rows, and the --out directory
 * with summary.md (mean ± sd over seeds per trace and policy), curves.csv (one row per arrival),
 * results.csv (the same rows as the CSV on stdout) and one chart per trace, alloc-<trace>.svg
 * (allocated % against arrived %, one line per policy, mean over seeds).
 *
 * A run is a grid of replays: traces x policies x seeds. gp_report.runs holds them in that order
 * (trace-major, then policy in the given order, then seed ascending), which is also the row order
 * of every file. Statistics skip NaN values (e.g. unalloc_at_130 of a replay whose arrivals never
 * reached 130%); a cell with no value left reads "n/a".
 *
 * Ownership: everything is borrowed; nothing here keeps a pointer after returning.
 */
#ifndef GP_SIM_REPORT_H
#define GP_SIM_REPORT_H

#include "gpupool/error.h"
#include "sim/replay.h"

#include <stdint.h>
#include <stdio.h>

/* One replay of the grid and its outcome. */
typedef struct gp_sim_run {
    const char *trace;  /* trace name, e.g. "default" */
    const char *policy; /* policy name */
    uint64_t seed;
    int64_t wall_ms; /* wall time of gp_replay_run, CLOCK_MONOTONIC */
    gp_replay_result result;
} gp_sim_run;

typedef struct gp_report {
    const char *nodes_path;    /* for the summary's heading */
    const char *const *traces; /* trace names, distinct */
    int ntraces;
    const char *const *policies; /* policy names, distinct */
    int npolicies;
    const uint64_t *seeds; /* ascending, distinct */
    int nseeds;
    double inflate;
    const gp_sim_run *runs; /* ntraces * npolicies * nseeds, in grid order */
} gp_report;

/* The header line of the results CSV, newline included. */
void gp_report_print_header(FILE *f);
/* One results row: trace,policy,seed,unalloc_pct_at_100,unalloc_pct_at_130,placed,failed,wall_ms.
 * Percentages have two decimals; NaN prints as "nan". Write errors stay on f (ferror). */
void gp_report_print_row(FILE *f, const gp_sim_run *run);

/*
 * Creates dir (and its missing parents) and writes summary.md, results.csv, curves.csv and
 * alloc-<trace>.svg into it, replacing files of those names. curves.csv and the charts need the
 * curves (gp_replay_params.keep_curve); runs without one contribute no rows or points.
 * 0, or GP_EIO (cannot create or write; d names the path) or GP_ENOMEM.
 */
int gp_report_write(const gp_report *r, const char *dir, gp_diag *d);

#endif

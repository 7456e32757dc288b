/*
 * Writing the results of a simulation grid: CSV rows, the Markdown summary, the per-arrival
 * curves and one SVG chart per trace.
 *
 * Every file is written whole through stdio and checked once at the end (ferror + fclose), so a
 * full disk or a vanished directory surfaces as one GP_EIO naming the file. The chart of a trace
 * samples each replay's allocation curve on a common grid of arrived % (every GRID_STEP points):
 * the value at grid point g is the allocated % after the last arrival whose arrived % is <= g.
 * A policy's line is the mean over its seeds and ends at the last grid point every seed reaches,
 * so that no point averages fewer seeds than the others (which would make the line jump).
 */
#include "sim/report.h"

#include "sim/svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GRID_STEP 0.5
#define PATH_CAP  4096

/* Writes s as one CSV field, quoted when it holds a separator, a quote or a line break. */
static void put_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') {
            fputc('"', f);
        }
        fputc(*s, f);
    }
    fputc('"', f);
}

static void put_pct(FILE *f, double v)
{
    if (isnan(v)) {
        fputs("nan", f);
    } else {
        if (v < 0.0 && v > -0.005) {
            v = 0.0; /* "-0.00" from rounding noise around 100% allocated */
        }
        fprintf(f, "%.2f", v);
    }
}

void gp_report_print_header(FILE *f)
{
    fputs("trace,policy,seed,unalloc_pct_at_100,unalloc_pct_at_130,placed,failed,wall_ms\n", f);
}

void gp_report_print_row(FILE *f, const gp_sim_run *run)
{
    put_csv_field(f, run->trace);
    fputc(',', f);
    put_csv_field(f, run->policy);
    fprintf(f, ",%llu,", (unsigned long long)run->seed);
    put_pct(f, run->result.unalloc_at_100);
    fputc(',', f);
    put_pct(f, run->result.unalloc_at_130);
    fprintf(f, ",%d,%d,%lld\n", run->result.placed, run->result.failed, (long long)run->wall_ms);
}

/* mkdir -p: creates dir and its missing parents. */
static int make_dirs(const char *dir, gp_diag *d)
{
    char buf[PATH_CAP];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof(buf)) {
        return gp_diag_set(d, GP_EIO, "--out: unusable directory name \"%s\"", dir);
    }
    memcpy(buf, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') {
            continue;
        }
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            return gp_diag_set(d, GP_EIO, "%s: cannot create directory: %s", buf, strerror(errno));
        }
        buf[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return gp_diag_set(d, GP_EIO, "%s: not a directory", dir);
    }
    return 0;
}

/* An output file being written: its path (for errors) and its stream. */
typedef struct out_file {
    char path[PATH_CAP];
    FILE *f;
} out_file;

static int out_open(out_file *o, const char *dir, const char *prefix, const char *name,
                    const char *suffix, gp_diag *d)
{
    int n = snprintf(o->path, sizeof(o->path), "%s/%s%s%s", dir, prefix, name, suffix);
    if (n < 0 || (size_t)n >= sizeof(o->path)) {
        return gp_diag_set(d, GP_EIO, "%s/%s%s%s: path too long", dir, prefix, name, suffix);
    }
    o->f = fopen(o->path, "w");
    if (!o->f) {
        return gp_diag_set(d, GP_EIO, "%s: cannot create: %s", o->path, strerror(errno));
    }
    return 0;
}

/* Closes o; GP_EIO when any write (or the close) failed. */
static int out_close(out_file *o, gp_diag *d)
{
    int bad = ferror(o->f);
    int err = bad ? errno : 0;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    o->f = NULL;
    if (bad) {
        return gp_diag_set(d, GP_EIO, "%s: write error: %s", o->path,
                           err ? strerror(err) : "unknown");
    }
    return 0;
}

static int run_count(const gp_report *r)
{
    return r->ntraces * r->npolicies * r->nseeds;
}

static const gp_sim_run *run_at(const gp_report *r, int trace, int policy, int seed)
{
    return &r->runs[((size_t)trace * (size_t)r->npolicies + (size_t)policy) * (size_t)r->nseeds +
                    (size_t)seed];
}

static int write_results(const gp_report *r, const char *dir, gp_diag *d)
{
    out_file o;
    int rc = out_open(&o, dir, "", "results", ".csv", d);
    if (rc < 0) {
        return rc;
    }
    gp_report_print_header(o.f);
    for (int i = 0; i < run_count(r); i++) {
        gp_report_print_row(o.f, &r->runs[i]);
    }
    return out_close(&o, d);
}

static int write_curves(const gp_report *r, const char *dir, gp_diag *d)
{
    out_file o;
    int rc = out_open(&o, dir, "", "curves", ".csv", d);
    if (rc < 0) {
        return rc;
    }
    fputs("trace,policy,seed,arrival,arrived_pct,allocated_pct\n", o.f);
    for (int i = 0; i < run_count(r); i++) {
        const gp_sim_run *run = &r->runs[i];
        if (!run->result.curve) {
            continue;
        }
        for (int k = 0; k < run->result.arrivals; k++) {
            put_csv_field(o.f, run->trace);
            fputc(',', o.f);
            put_csv_field(o.f, run->policy);
            fprintf(o.f, ",%llu,%d,%.4f,%.4f\n", (unsigned long long)run->seed, k + 1,
                    (double)run->result.curve[k].arrived_pct,
                    (double)run->result.curve[k].allocated_pct);
        }
    }
    return out_close(&o, d);
}

/* Running mean and variance (Welford); NaN values are skipped. */
typedef struct acc {
    int n;
    double mean, m2;
} acc;

static void acc_add(acc *a, double v)
{
    if (isnan(v)) {
        return;
    }
    a->n++;
    double delta = v - a->mean;
    a->mean += delta / a->n;
    a->m2 += delta * (v - a->mean);
}

/* Sample standard deviation (n - 1); 0 for a single value. */
static double acc_sd(const acc *a)
{
    return a->n > 1 ? sqrt(a->m2 / (a->n - 1)) : 0.0;
}

static void put_mean_sd(FILE *f, const acc *a)
{
    if (a->n == 0) {
        fputs(" n/a |", f);
    } else {
        fprintf(f, " %.2f ± %.2f |", a->mean, acc_sd(a));
    }
}

static void put_mean(FILE *f, const acc *a, int decimals)
{
    if (a->n == 0) {
        fputs(" n/a |", f);
    } else {
        fprintf(f, " %.*f |", decimals, a->mean);
    }
}

/* Writes s as a Markdown table cell's text ('|' escaped). */
static void put_md(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') {
            fputc('\\', f);
        }
        fputc(*s, f);
    }
}

/* Writes ascending seeds compactly: "42-51", "1,3,5-7". */
static void put_seeds(FILE *f, const uint64_t *seeds, int n)
{
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && seeds[j + 1] == seeds[j] + 1) {
            j++;
        }
        fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)seeds[i]);
        if (j > i) {
            fprintf(f, "-%llu", (unsigned long long)seeds[j]);
        }
        i = j + 1;
    }
}

static void summary_row(FILE *f, const gp_report *r, int t, int p)
{
    acc u100 = {0}, u130 = {0}, win = {0}, placed = {0}, failed = {0}, wall = {0};
    for (int s = 0; s < r->nseeds; s++) {
        const gp_sim_run *run = run_at(r, t, p, s);
        acc_add(&u100, run->result.unalloc_at_100);
        acc_add(&u130, run->result.unalloc_at_130);
        acc_add(&win, run->result.window_unalloc_100);
        acc_add(&placed, run->result.placed);
        acc_add(&failed, run->result.failed);
        acc_add(&wall, (double)run->wall_ms);
    }
    fputs("| ", f);
    put_md(f, r->traces[t]);
    fputs(" | ", f);
    put_md(f, r->policies[p]);
    fputs(" |", f);
    put_mean_sd(f, &u100);
    put_mean_sd(f, &u130);
    put_mean(f, &win, 2);
    put_mean(f, &placed, 1);
    put_mean(f, &failed, 1);
    put_mean(f, &wall, 0);
    fputc('\n', f);
}

static int write_summary(const gp_report *r, const char *dir, gp_diag *d)
{
    out_file o;
    int rc = out_open(&o, dir, "", "summary", ".md", d);
    if (rc < 0) {
        return rc;
    }
    FILE *f = o.f;
    fputs("# gpupool sim: summary\n\n- nodes: `", f);
    fputs(r->nodes_path ? r->nodes_path : "?", f);
    fputs("`\n- seeds: ", f);
    put_seeds(f, r->seeds, r->nseeds);
    fprintf(f, " (%d)\n- inflate: %g\n\n", r->nseeds, r->inflate);
    fputs(
        "Unallocated GPU in % of the cluster's GPU capacity (100 - allocated %) at the first\n"
        "arrival where the arrived GPU request reaches 100% (@100) and 130% (@130) of the\n"
        "capacity: mean ± sample sd over seeds. window@100: mean over seeds of 100 - the mean\n"
        "allocated % over arrivals with arrived % in [99.5, 100.5), the aggregation of the\n"
        "published figures. placed, failed (pods) and wall ms (one replay): means over seeds.\n\n",
        f);
    fputs("| trace | policy | unalloc @100 | unalloc @130 | window @100 | placed | failed | "
          "wall ms |\n|---|---|---:|---:|---:|---:|---:|---:|\n",
          f);
    for (int t = 0; t < r->ntraces; t++) {
        for (int p = 0; p < r->npolicies; p++) {
            summary_row(f, r, t, p);
        }
    }
    return out_close(&o, d);
}

/* The largest arrived % any replay of trace t reaches (0 without curves). */
static double trace_max_arrived(const gp_report *r, int t)
{
    double mx = 0.0;
    for (int p = 0; p < r->npolicies; p++) {
        for (int s = 0; s < r->nseeds; s++) {
            const gp_replay_result *res = &run_at(r, t, p, s)->result;
            if (res->curve && res->arrivals > 0 && res->curve[res->arrivals - 1].arrived_pct > mx) {
                mx = res->curve[res->arrivals - 1].arrived_pct;
            }
        }
    }
    return mx;
}

/* Adds one replay's curve, sampled on the grid, into sum/cnt. */
static void grid_add(const gp_replay_result *res, int npoints, double *sum, int *cnt)
{
    if (!res->curve || res->arrivals <= 0) {
        return;
    }
    double reach = res->curve[res->arrivals - 1].arrived_pct, last = 0.0;
    int j = 0;
    for (int k = 0; k < npoints; k++) {
        double g = k * GRID_STEP;
        if (reach < g - 1e-6) {
            break;
        }
        while (j < res->arrivals && res->curve[j].arrived_pct <= g + 1e-6) {
            last = res->curve[j].allocated_pct;
            j++;
        }
        sum[k] += last;
        cnt[k]++;
    }
}

/* Draws policy p's mean curve over the grid (x, and y/cnt as scratch). */
static void chart_policy(gp_svg_chart *c, const gp_report *r, int t, int p, int npoints,
                         const double *x, double *y, int *cnt)
{
    memset(y, 0, sizeof(*y) * (size_t)npoints);
    memset(cnt, 0, sizeof(*cnt) * (size_t)npoints);
    int curves = 0;
    for (int s = 0; s < r->nseeds; s++) {
        const gp_replay_result *res = &run_at(r, t, p, s)->result;
        curves += res->curve && res->arrivals > 0;
        grid_add(res, npoints, y, cnt);
    }
    for (int k = 0; k < npoints; k++) {
        y[k] = curves && cnt[k] == curves ? y[k] / cnt[k] : NAN;
    }
    gp_svg_add_series(c, &(gp_svg_series){.label = r->policies[p], .x = x, .y = y, .n = npoints});
}

static void chart_body(FILE *f, const gp_report *r, int t, double xmax, int npoints, double *x,
                       double *y, int *cnt)
{
    char title[256];
    snprintf(title, sizeof(title), "GPU allocation vs arrival: %s (mean of %d seed%s)",
             r->traces[t], r->nseeds, r->nseeds == 1 ? "" : "s");
    gp_svg_chart c;
    gp_svg_begin(&c, f,
                 &(gp_svg_axes){.title = title,
                                .xlabel = "arrived GPU request (% of GPU capacity)",
                                .ylabel = "allocated GPU (% of GPU capacity)",
                                .xmin = 0.0,
                                .xmax = xmax,
                                .ymin = 0.0,
                                .ymax = 100.0});
    double end = c.xmax > 100.0 ? c.xmax : 100.0;
    double ix[3] = {0.0, 100.0, end}, iy[3] = {0.0, 100.0, 100.0};
    gp_svg_add_series(
        &c, &(gp_svg_series){
                .label = "ideal", .x = ix, .y = iy, .n = 3, .color = "#999999", .dashed = 1});
    for (int k = 0; k < npoints; k++) {
        x[k] = k * GRID_STEP;
    }
    for (int p = 0; p < r->npolicies; p++) {
        chart_policy(&c, r, t, p, npoints, x, y, cnt);
    }
    gp_svg_end(&c);
}

static int write_chart(const gp_report *r, int t, const char *dir, gp_diag *d)
{
    double xmax = trace_max_arrived(r, t);
    int npoints = (int)floor(xmax / GRID_STEP + 1e-9) + 1;
    double *x = malloc(sizeof(*x) * (size_t)npoints);
    double *y = malloc(sizeof(*y) * (size_t)npoints);
    int *cnt = malloc(sizeof(*cnt) * (size_t)npoints);
    out_file o;
    int rc = 0;
    if (!x || !y || !cnt) {
        rc = gp_diag_set(d, GP_ENOMEM, "chart of %s: out of memory", r->traces[t]);
    }
    if (rc == 0 && (rc = out_open(&o, dir, "alloc-", r->traces[t], ".svg", d)) == 0) {
        chart_body(o.f, r, t, xmax, npoints, x, y, cnt);
        rc = out_close(&o, d);
    }
    free(x);
    free(y);
    free(cnt);
    return rc;
}

int gp_report_write(const gp_report *r, const char *dir, gp_diag *d)
{
    int rc = make_dirs(dir, d);
    if (rc == 0) {
        rc = write_results(r, dir, d);
    }
    if (rc == 0) {
        rc = write_summary(r, dir, d);
    }
    if (rc == 0) {
        rc = write_curves(r, dir, d);
    }
    for (int t = 0; rc == 0 && t < r->ntraces; t++) {
        rc = write_chart(r, t, dir, d);
    }
    return rc;
}

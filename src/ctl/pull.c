/*
 * Image pulls as the agents report them in their replica reports, turned into job events:
 *
 *   {"job", "replica", "epoch", "state": "Running", "phase": "Pulling",
 *    "pull": {"image": REF, "done_bytes": N, "total_bytes": N}}      (total 0: unknown)
 *
 * While a replica pulls it has not started: the report changes neither its state nor its idle
 * and usage figures. The job's events say how far the pull is, at most one event per tenth of
 * the total (or, with the total unknown, one per PULL_EVENT_GAP_MS), and "Pulled REF in S s"
 * once a report without the phase comes (the time from the first Pulling report the controller
 * saw). The bookkeeping is memory only (ctl_replica's pull_* fields): after a restart of the
 * controller the next report starts it again.
 *
 * A replica that ends with exit code 125 and a reason starting "ImagePullFailed: " (the
 * registry's message after it) could not get its image: report_one fails the job with that
 * reason and does not restart it (it would only fail the same way).
 */
#include "ctl/changes.h"

#include <stdio.h>
#include <string.h>

#define PULL_EVENT_GAP_MS 5000
#define PULL_FAILED       "ImagePullFailed: "

bool ctl_pull_failed(int exit_code, const char *reason)
{
    return exit_code == 125 && reason && strncmp(reason, PULL_FAILED, strlen(PULL_FAILED)) == 0;
}

void ctl_pull_failed_reason(const ctl_job *j, int replica, const char *reason, char *buf,
                            size_t cap)
{
    char suffix[32] = "";
    if (j->spec.replicas > 1) {
        snprintf(suffix, sizeof(suffix), " (replica %d)", replica);
    }
    snprintf(buf, cap, "%.200s%s", reason, suffix);
    for (char *p = buf; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            *p = ' '; /* a registry's message on one line */
        }
    }
}

/* "1.2 of 3.4 GB", or "1.2 GB so far" when the total is unknown. */
static void fmt_progress(char *buf, size_t cap, int64_t done, int64_t total)
{
    int64_t scale = done > total ? done : total;
    double unit = scale >= 1000000000 ? 1e9 : scale >= 1000000 ? 1e6 : scale >= 1000 ? 1e3 : 1;
    const char *name = unit == 1e9 ? "GB" : unit == 1e6 ? "MB" : unit == 1e3 ? "kB" : "B";
    int prec = unit == 1 ? 0 : 1;
    if (total > 0) {
        snprintf(buf, cap, "%.*f of %.*f %s", prec, (double)done / unit, prec, (double)total / unit,
                 name);
    } else {
        snprintf(buf, cap, "%.*f %s so far", prec, (double)done / unit, name);
    }
}

/* Whether the progress event of Pulling report w of replica r is due at now; *step: the tenth
 * of the image pulled (-1: its size is unknown). */
static bool progress_due(const ctl_replica *r, const gp_wire_replica *w, int64_t now, int *step)
{
    int64_t done = w->pull_done_bytes, total = w->pull_total_bytes;
    *step = total > 0 ? (int)((done > total ? total : done) * 10 / total) : -1;
    return r->pull_event_ms == 0 ||
           (total > 0 ? *step > r->pull_step : now - r->pull_event_ms >= PULL_EVENT_GAP_MS);
}

/* The pull's progress of a Pulling report, decoded and checked by the wire codec (net/wire.h). */
static int pulling(gpupoold *g, ctl_job *j, int replica, const gp_wire_replica *w, int64_t now,
                   gp_diag *d)
{
    const char *image = w->pull_image[0] ? w->pull_image : NULL;
    int64_t done = w->pull_done_bytes, total = w->pull_total_bytes;
    ctl_replica *r = &j->replicas[replica];
    int step;
    if (progress_due(r, w, now, &step)) {
        char progress[64], prefix[32] = "", msg[GP_IMAGE_REF_MAX + 128];
        if (j->spec.replicas > 1) {
            snprintf(prefix, sizeof(prefix), "replica %d: ", replica);
        }
        fmt_progress(progress, sizeof(progress), done, total);
        snprintf(msg, sizeof(msg), "%sPulling %s (%s)", prefix,
                 j->spec.image ? j->spec.image
                 : image       ? image
                               : "the image",
                 progress);
        int rc = ctl_job_event_at(g, j->id, now, "Pulling", msg, d);
        if (rc < 0) {
            return rc;
        }
        r->pull_event_ms = now;
        r->pull_step = step;
    }
    if (r->pull_start_ms == 0) {
        r->pull_start_ms = now;
    }
    return 1;
}

int ctl_pull_report(gpupoold *g, ctl_job *j, int replica, const gp_wire_replica *w,
                    bool pull_failed, int64_t now, gp_diag *d)
{
    if (w->state == GP_WIRE_RUNNING && w->pulling) {
        return pulling(g, j, replica, w, now, d);
    }
    ctl_replica *r = &j->replicas[replica];
    if (r->pull_start_ms == 0) {
        return 0;
    }
    if (!pull_failed) {
        char prefix[32] = "", msg[GP_IMAGE_REF_MAX + 96];
        if (j->spec.replicas > 1) {
            snprintf(prefix, sizeof(prefix), "replica %d: ", replica);
        }
        snprintf(msg, sizeof(msg), "%sPulled %s in %.1f s", prefix,
                 j->spec.image ? j->spec.image : "the image",
                 (double)(now - r->pull_start_ms) / 1000.0);
        int rc = ctl_job_event_at(g, j->id, now, "Pulled", msg, d);
        if (rc < 0) {
            return rc;
        }
    }
    r->pull_start_ms = r->pull_event_ms = 0;
    return 0;
}

bool ctl_pull_report_writes(const ctl_job *j, int replica, const gp_wire_replica *w,
                            bool pull_failed, int64_t now)
{
    const ctl_replica *r = &j->replicas[replica];
    int step;
    if (w->state == GP_WIRE_RUNNING && w->pulling) {
        return progress_due(r, w, now, &step);
    }
    return r->pull_start_ms != 0 && !pull_failed;
}

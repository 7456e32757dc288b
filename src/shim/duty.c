/*
 * The compute limit's controller (see duty.h): pure arithmetic on times passed in.
 */
#include "shim/duty.h"

#include <string.h>

/* The smallest cost a launch is assumed to have once anything was measured (1 us). */
#define MIN_EST_NS 1000.0

void gp_duty_init(gp_duty *d, uint32_t percent, uint64_t period_ns)
{
    memset(d, 0, sizeof(*d));
    if (percent == 0 || percent > 100) {
        percent = 100;
    }
    d->target = percent / 100.0;
    d->rate = d->target;
    d->period_ns = period_ns ? period_ns : GP_DUTY_PERIOD_NS;
}

static double budget(const gp_duty *d)
{
    return d->rate * (double)d->period_ns;
}

int gp_duty_admit(const gp_duty *d, uint64_t now)
{
    if (d->launches == 0 || d->rate >= 1.0) {
        return 1;
    }
    if (d->est_ns <= 0 || d->restart) {
        return 0; /* one launch per phase until a launch has been measured */
    }
    return d->charged < budget(d) && (double)(now - d->start) < budget(d);
}

void gp_duty_launched(gp_duty *d, uint64_t now)
{
    if (d->launches == 0) {
        d->start = now;
    }
    d->last = now;
    d->launches++;
    d->charged += d->est_ns;
}

static uint64_t pause_after(const gp_duty *d, uint64_t busy)
{
    return d->rate >= 1.0 ? 0 : (uint64_t)((double)busy * (1.0 / d->rate - 1.0));
}

uint64_t gp_duty_close(gp_duty *d, uint64_t sync_start, uint64_t sync_end)
{
    if (d->restart) {
        d->restart = 0;
        d->closed = 1;
        d->closed_start = d->closed_end = d->reopen = sync_end;
        return d->reopen;
    }
    uint64_t end;
    int drained = sync_end >= sync_start + GP_DUTY_DRAINED_NS;
    if (drained) {
        end = sync_end; /* the GPU was busy until the sync returned */
    } else {
        /* It went idle before the sync: at the latest then, and probably once the last launch
         * had run. */
        end = d->last + (uint64_t)d->est_ns;
        end = end > sync_start ? sync_start : end;
        end = end < d->last ? d->last : end;
    }
    uint64_t start = d->launches ? d->start : end;
    uint64_t busy = end > start ? end - start : 0;
    if (d->launches) {
        if (drained) {
            double sample = (double)busy / d->launches;
            d->est_ns = d->est_ns > 0 ? (d->est_ns + sample) / 2 : sample;
        } else {
            double bound = (double)(sync_start - start) / d->launches;
            bound = bound < MIN_EST_NS ? MIN_EST_NS : bound;
            d->est_ns = d->est_ns > 0 && d->est_ns < bound ? d->est_ns : bound;
        }
        if (d->est_ns < MIN_EST_NS) {
            d->est_ns = MIN_EST_NS;
        }
    }
    d->closed_start = start;
    d->closed_end = end;
    d->reopen = end + pause_after(d, busy);
    d->closed = 1;
    d->cycles++;
    return d->reopen;
}

uint64_t gp_duty_extend(gp_duty *d, uint64_t end)
{
    if (end > d->closed_end) {
        d->closed_end = end;
        uint64_t r = end + pause_after(d, end - d->closed_start);
        d->reopen = r > d->reopen ? r : d->reopen;
    }
    return d->reopen;
}

void gp_duty_open(gp_duty *d)
{
    d->launches = 0;
    d->charged = 0;
    d->start = d->last = 0;
    d->closed = 0;
}

void gp_duty_restart(gp_duty *d)
{
    gp_duty_open(d);
    d->restart = 1;
}

void gp_duty_feedback(gp_duty *d, uint64_t now, double measured, unsigned int share)
{
    double err = d->target - measured;
    if (err < 0 || d->waited || (d->closed && now < d->reopen)) {
        d->rate += GP_DUTY_GAIN * err / (share ? share : 1);
    }
    double lo = d->target / 4;
    d->rate = d->rate < lo ? lo : d->rate > 1.0 ? 1.0 : d->rate;
    d->waited = 0;
}

/*
 * The controller's active alerts, for GET /v1/alerts: what the notifier published (notify.h)
 * whose endsAt is still ahead, one per label set, as Alertmanager would hold them. It is kept
 * whether or not alerts.alertmanager names receivers, so that the dashboard shows alerts without
 * an Alertmanager.
 *
 * An alert is identified by its labels (as in Alertmanager): a later alert with the same labels
 * (a condition sent again, a GPU drained again) replaces it, and one whose endsAt is not after
 * the time it is put (a resolve) removes it. Events lapse at their endsAt (start plus
 * alerts.resolve_after). At most CTL_ALERTS_ACTIVE_MAX are kept: a new alert beyond that evicts
 * the one raised least recently. Memory only: a restarted controller knows the conditions still
 * true again after its first cycles, but not the events raised before it stopped.
 *
 * Threads: put runs in the committer (ctl_notify_publish), list in request handlers; the list
 * has its own lock, held only to copy text. Only JSON text is kept, so no jansson value is
 * shared between threads.
 */
#ifndef GP_CTL_ALERTS_ACTIVE_H
#define GP_CTL_ALERTS_ACTIVE_H

#include <jansson.h>
#include <stdint.h>

#define CTL_ALERTS_ACTIVE_MAX 256

typedef struct ctl_alerts_active ctl_alerts_active;

/* 0 and *out, or GP_ENOMEM (*out NULL). */
int ctl_alerts_active_new(ctl_alerts_active **out);
/* Accepts NULL. */
void ctl_alerts_active_free(ctl_alerts_active *a);

/* Takes one published alert: doc is its Alertmanager API v2 document as JSON text
 * ({"labels", "annotations", "startsAt", "endsAt"}; borrowed). Adds or replaces the alert of
 * those labels, or removes it when endsAt <= now_ms; drops alerts that lapsed. 0, GP_EINVAL
 * (not such a document: nothing changes) or GP_ENOMEM. */
int ctl_alerts_active_put(ctl_alerts_active *a, const char *doc, int64_t now_ms);

/* The alerts active at now_ms (endsAt after it), the most recently raised first:
 * {"items": [{"name", "severity", "labels", "summary", "description", "starts_ms",
 * "ends_ms"}]}. tenant not NULL: only alerts without a tenant label or with that tenant (a
 * user's view). New reference, or NULL when out of memory. */
json_t *ctl_alerts_active_list(ctl_alerts_active *a, const char *tenant, int64_t now_ms);

#endif

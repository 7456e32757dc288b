/*
 * The price table of billing (billing.price_table; docs/billing.md): a YAML file read once at
 * start, turned into the gp_meter_prices that libgpcore's metering math takes.
 *
 *   currency: USD
 *   shared_discount: 0.2        # shared GPUs pay (1 - discount) x milli / 1000 x the price
 *   cpu_core_hour: 0.04         # optional
 *   memory_gib_hour: 0.005      # optional
 *   prices:
 *     - model: A100-80GB
 *       from: 2024-01-01        # UTC; in force until the model's next entry
 *       hourly: 2.50            # per whole GPU-hour
 *       fraction_hourly: 2.00   # optional: per whole-GPU-equivalent hour when shared
 *       mig: {1g.10gb: 0.45, 3g.40gb: 1.20}   # optional: per instance-hour
 *     - model: H100-80GB
 *       from: 2024-01-01T00:00:00Z
 *       cost: {purchase: 30000, depreciation_months: 36, power_w: 700,
 *              electricity_kwh: 0.15, overhead: 0.1}
 *
 * Amounts are decimals with at most 6 fraction digits, kept exactly (as micro-units, read from
 * the text the file has, never through a float). A cost model gives hourly = (purchase /
 * (depreciation_months x 730) + power_w / 1000 x electricity_kwh) x (1 + overhead).
 *
 * Errors name the file, the line and the field: "prices.yaml:7: prices[1].hourly: must be a
 * decimal number >= 0 with at most 6 fraction digits".
 *
 * Ownership: ctl_prices_load and ctl_prices_parse give the caller a table freed by
 * ctl_prices_free (accepts NULL); prices->p points into it.
 */
#ifndef GP_CTL_PRICES_H
#define GP_CTL_PRICES_H

#include "gpupool/error.h"
#include "gpupool/meter.h"

#include <stddef.h>

#define CTL_PRICES_MAX 4096 /* entries of one table */

typedef struct ctl_prices {
    gp_meter_prices p;    /* entries point into list */
    gp_meter_price *list; /* owned */
} ctl_prices;

/* Parses the table in text (len bytes); name is the file's name for messages. 0, or GP_EINVAL
 * (a bad field, named with its line), GP_EPARSE (YAML syntax) or GP_ENOMEM with d set. */
int ctl_prices_parse(const char *name, const char *text, size_t len, ctl_prices **out, gp_diag *d);
/* Reads and parses the file at path (at most 1 MiB). ctl_prices_parse's errors, and GP_ENOENT
 * or GP_EIO when it cannot be read. */
int ctl_prices_load(const char *path, ctl_prices **out, gp_diag *d);
void ctl_prices_free(ctl_prices *p);

#endif

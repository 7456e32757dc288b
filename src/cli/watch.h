/*
 * `gpupool get jobs|nodes --watch`: the list, then one line (or block, by the view) per object
 * that changed, appeared or left the list, until interrupted. gpupoold has no event stream for
 * lists, so this polls: every interval it fetches the whole list again and compares what the
 * view would print for each object (tables with their ages as at the start, so that a growing
 * age alone is no change). An object that left the list (a job that ended) is fetched by its id
 * and printed as it is now.
 */
#ifndef GP_CLI_WATCH_H
#define GP_CLI_WATCH_H

#include "cli/client.h"
#include "cli/resource.h"
#include "cli/view.h"

#include <stdint.h>

/* Watches the list of k at k->path + query (query "" or "?..."), printing by v on stdout.
 * Returns only on an error: the exit status (message printed). */
int gp_cli_watch(gp_cli_conn *c, const gp_cli_kind *k, const char *query, const gp_view *v,
                 int64_t interval_ms);

#endif

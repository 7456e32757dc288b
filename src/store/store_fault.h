/*
 * A store that fails on purpose: wraps any store and makes its Nth call fail with GP_EIO, so
 * that tests can drive every path a failed write, savepoint or commit takes (SQLite's
 * fault injection at the OS boundary, one level up).
 *
 * The wrapper counts calls of a class (every operation that can fail, only those that change
 * something, or only commits); the plan's Nth counted call fails without reaching the wrapped
 * store, and with sticky set every counted call from the Nth on fails too, as a dead disk
 * would. An injected failure of commit rolls the wrapped store's transaction back, so that,
 * as the contract of gp_store_commit says, nothing of it is stored. The diag names the
 * operation and N: "store: injected fault: commit (call 3)".
 *
 * rollback, savepoint_rollback, version and close are passed through and never counted: they
 * cannot fail.
 *
 * Ownership: gp_store_fault_wrap takes the wrapped store on success (gp_store_close closes
 * both); on failure the caller keeps it. The plan may be changed while another thread uses the
 * store (the counters are atomic); one thread at a time still uses the store itself.
 */
#ifndef GP_STORE_STORE_FAULT_H
#define GP_STORE_STORE_FAULT_H

#include "store/store.h"

#include <stdint.h>

/* Which calls the wrapper counts. */
typedef enum gp_store_fault_count {
    GP_STORE_FAULT_ANY = 0, /* every operation that can fail, reads included */
    GP_STORE_FAULT_WRITES,  /* writes, begin, savepoints and commit */
    GP_STORE_FAULT_COMMITS, /* commit only */
} gp_store_fault_count;

typedef struct gp_store_fault_plan {
    gp_store_fault_count count;
    uint64_t nth; /* the counted call that fails, 1 for the first; 0: none fails */
    int sticky;   /* non-zero: every counted call from the nth on fails */
} gp_store_fault_plan;

/* Wraps inner in a store that follows plan (NULL: fails nothing until armed). GP_ENOMEM. */
int gp_store_fault_wrap(gp_store *inner, const gp_store_fault_plan *plan, gp_store **out,
                        gp_diag *d);
/* Replaces the plan of a wrapper and restarts its count at 0. GP_EINVAL when s is not one. */
int gp_store_fault_arm(gp_store *s, const gp_store_fault_plan *plan);
/* Calls counted since the last arm, and failures injected since then (0 when s is not a
 * wrapper). */
uint64_t gp_store_fault_calls(const gp_store *s);
uint64_t gp_store_fault_injected(const gp_store *s);

#endif

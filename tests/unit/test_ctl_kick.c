/*
 * When the committer runs its next scheduling cycle (ctl_cycle_due_ms, src/ctl/commit.c): soon
 * after a kick, no sooner than the kick gap after the last cycle; kicks that keep finding nothing
 * to place coalesce into fewer cycles (the gap doubles per cycle in a row that changed nothing,
 * up to a second), and a cycle that placed something brings the gap back. A simulated second of
 * flapping nodes (a kick every 5 ms, no job that can be placed) runs a handful of cycles, not
 * one per gap. How long a cycle's transaction may write on a shared store
 * (ctl_cycle_txn_budget_ms): the lease's renewal, waiting for it, still comes in time.
 */
#include "ctl/server.h"
#include "ctl/txn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int64_t due(int64_t interval_ms, int64_t last_us, int futile, bool kicked)
{
    ctl_cycle_clock c = {.last_ms = 10000,
                         .interval_ms = interval_ms,
                         .last_us = last_us,
                         .futile = futile,
                         .kicked = kicked};
    return ctl_cycle_due_ms(&c) - 10000;
}

static void test_due(void **state)
{
    (void)state;
    assert_int_equal(due(1000, 1000, 0, false), 1000); /* no kick: the interval */
    assert_int_equal(due(1000, 1000, 0, true), CTL_KICK_GAP_MS);
    assert_int_equal(due(1000, 100000, 0, true), 400); /* 4 times a 100 ms cycle */
    assert_int_equal(due(1000, 1000, 1, true), 100);   /* doubled per futile cycle */
    assert_int_equal(due(1000, 1000, 3, true), 400);
    assert_int_equal(due(3600000, 1000, 30, true), CTL_KICK_GAP_FUTILE_MS); /* at most 1 s */
    assert_int_equal(due(300, 1000, 30, true), 300);       /* never later than the interval */
    assert_int_equal(due(3600000, 500000, 5, true), 2000); /* a long cycle's gap stays */
    assert_int_equal(due(3600000, 1000, 0, false), 3600000);
}

/* The committer's loop over simulated time: a kick every kick_ms; a cycle costs cost_ms and
 * places something only when placing(t). Returns the cycles run in [0, until_ms). */
static int simulate(int64_t until_ms, int64_t kick_ms, int64_t cost_ms, bool (*placing)(int64_t),
                    bool coalesce)
{
    ctl_cycle_clock c = {.last_ms = 0, .interval_ms = 1000, .last_us = cost_ms * 1000};
    int cycles = 0;
    for (int64_t t = 0; t < until_ms; t++) {
        c.kicked |= t % kick_ms == 0;
        if (t >= ctl_cycle_due_ms(&c)) {
            cycles++;
            c.kicked = false;
            t += cost_ms;
            c.last_ms = t;
            c.futile = placing(t) || !coalesce ? 0 : c.futile + 1;
        }
    }
    return cycles;
}

static bool never(int64_t t)
{
    (void)t;
    return false;
}

static bool after_5s(int64_t t)
{
    return t >= 5000;
}

static void test_flapping_nodes_coalesce(void **state)
{
    (void)state;
    int before = simulate(10000, 5, 2, never, false); /* every kick gap: about 190 */
    int now = simulate(10000, 5, 2, never, true);
    print_message("cycles in 10 s of kicks placing nothing: %d, without coalescing %d\n", now,
                  before);
    assert_true(before > 150);
    assert_true(now <= 10 + 6); /* about one a second, after the gap has grown */
    /* Once cycles place again, the kicks are answered at the kick gap again. */
    int placing = simulate(10000, 5, 2, after_5s, true);
    print_message("with cycles placing from 5 s on: %d\n", placing);
    assert_true(placing > now + 80); /* about 5 s / (50 ms + 2 ms) more */
}

/* A change other than a node's own report (a quota raised, a node uncordoned, a submit, a job's
 * end) is answered at the kick gap however many cycles before found nothing: it may be what lets
 * the held work run. A node's report after the same run of futile cycles waits. */
static void test_change_does_not_wait(void **state)
{
    (void)state;
    ctl_cycle_clock c = {
        .last_ms = 10000, .interval_ms = 3600000, .last_us = 1000, .futile = 30, .kicked = true};
    assert_int_equal(ctl_cycle_due_ms(&c) - 10000, CTL_KICK_GAP_FUTILE_MS);
    c.by_change = true;
    assert_int_equal(ctl_cycle_due_ms(&c) - 10000, CTL_KICK_GAP_MS);
    c.last_us = 100000; /* a long cycle keeps its share of the committer */
    assert_int_equal(ctl_cycle_due_ms(&c) - 10000, 400);
    c.kicked = c.by_change = false;
    assert_int_equal(ctl_cycle_due_ms(&c) - 10000, 3600000);
}

/* A cycle's transaction on a shared store leaves the lease's renewal room: a quarter of what
 * the lease gives beyond one renewal interval; no bound on a store of its own. */
static void test_txn_budget(void **state)
{
    (void)state;
    assert_int_equal(ctl_cycle_txn_budget_ms(3000, 1000, true), 500); /* the defaults */
    assert_int_equal(ctl_cycle_txn_budget_ms(800, 200, true), 150);
    assert_int_equal(ctl_cycle_txn_budget_ms(3000, 1000, false), 0);
    assert_int_equal(ctl_cycle_txn_budget_ms(103, 100, true), 1); /* never "no bound" */
    /* the renewal that waits for a whole transaction still comes within the lease */
    for (int64_t ttl = 100; ttl <= 600000; ttl = ttl * 3 / 2) {
        for (int64_t renew = 10; renew < ttl; renew = renew * 2 + 7) {
            int64_t b = ctl_cycle_txn_budget_ms(ttl, renew, true);
            assert_true(b >= 1);
            assert_true(renew + 2 * b <= ttl || b == 1);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_due),
        cmocka_unit_test(test_flapping_nodes_coalesce),
        cmocka_unit_test(test_change_does_not_wait),
        cmocka_unit_test(test_txn_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The agent's convergence plan: what to start, stop, report and forget, epochs fencing old
 * placements, stops before starts, the same plan from the same facts, and the state a replica
 * directory's records give (also records a job has garbled); the watch of replicas started and
 * not yet reported up (starts.h). */
#include "agent/converge.h"
#include "agent/starts.h"
#include "tests/unit/harness.h"

#include <stdlib.h>

#include <string.h>

static int count(const gp_action *a, int n, gp_action_kind k)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        c += a[i].kind == k;
    }
    return c;
}

static int find(const gp_action *a, int n, gp_action_kind k, int index)
{
    for (int i = 0; i < n; i++) {
        if (a[i].kind == k && a[i].index == index) {
            return i;
        }
    }
    return -1;
}

static void test_start_and_keep(void **state)
{
    (void)state;
    gp_replica_key want[] = {{1, 0, 5}, {2, 0, 6}};
    gp_local_replica have[] = {{{1, 0, 5}, GP_LOCAL_RUNNING, 0}};
    gp_action plan[8];
    int n = gp_converge(want, 2, have, 1, plan);
    assert_int_equal(count(plan, n, GP_ACT_START), 1);
    assert_true(find(plan, n, GP_ACT_START, 1) >= 0);  /* job 2 is new */
    assert_true(find(plan, n, GP_ACT_REPORT, 0) >= 0); /* job 1 runs: reported */
    assert_int_equal(count(plan, n, GP_ACT_STOP), 0);
}

static void test_epoch_fences_old_placement(void **state)
{
    (void)state;
    /* Job 1 replica 0 was placed again (epoch 7): the epoch-5 process must stop, a new start. */
    gp_replica_key want[] = {{1, 0, 7}};
    gp_local_replica have[] = {{{1, 0, 5}, GP_LOCAL_RUNNING, 0}};
    gp_action plan[8];
    int n = gp_converge(want, 1, have, 1, plan);
    int stop = find(plan, n, GP_ACT_STOP, 0), start = find(plan, n, GP_ACT_START, 0);
    assert_true(stop >= 0 && start >= 0);
    assert_true(stop < start); /* GPUs freed before they are taken */
}

static void test_final_states(void **state)
{
    (void)state;
    gp_replica_key want[] = {{1, 0, 1}, {3, 0, 3}};
    gp_local_replica have[] = {
        {{1, 0, 1}, GP_LOCAL_EXITED, 3}, /* desired and ended: report until the controller knows */
        {{2, 0, 2}, GP_LOCAL_EXITED, 0}, /* ended, no longer desired: forget */
        {{3, 0, 3}, GP_LOCAL_LOST, 0},   /* supervisor gone: report Failed, kill the group */
        {{4, 0, 4}, GP_LOCAL_KILLED, 0}, /* stopped on purpose, not desired: forget */
    };
    gp_action plan[16];
    int n = gp_converge(want, 2, have, 4, plan);
    assert_true(find(plan, n, GP_ACT_REPORT, 0) >= 0);
    assert_string_equal(gp_local_report_state(&have[0]), "Failed");
    assert_true(find(plan, n, GP_ACT_FORGET, 1) >= 0);
    assert_true(find(plan, n, GP_ACT_REPORT, 2) >= 0);
    assert_true(find(plan, n, GP_ACT_KILL_GROUP, 2) >= 0);
    assert_string_equal(gp_local_report_state(&have[2]), "Failed");
    assert_true(find(plan, n, GP_ACT_FORGET, 3) >= 0);
    assert_null(gp_local_report_state(&have[3]));
    assert_int_equal(count(plan, n, GP_ACT_START), 0); /* nothing desired is missing */
}

static void test_starting_is_not_restarted(void **state)
{
    (void)state;
    gp_replica_key want[] = {{1, 0, 1}};
    gp_local_replica have[] = {{{1, 0, 1}, GP_LOCAL_STARTING, 0}};
    gp_action plan[8];
    int n = gp_converge(want, 1, have, 1, plan);
    assert_int_equal(n, 0); /* neither started twice nor reported */
    want[0].epoch = 2;
    n = gp_converge(want, 1, have, 1, plan);
    assert_true(find(plan, n, GP_ACT_STOP, 0) >= 0);
}

static void test_idempotent(void **state)
{
    (void)state;
    gp_replica_key want[] = {{1, 0, 1}, {2, 1, 2}, {2, 0, 2}};
    gp_local_replica have[] = {{{1, 0, 1}, GP_LOCAL_RUNNING, 0}, {{9, 0, 9}, GP_LOCAL_RUNNING, 0}};
    gp_action a[16], b[16];
    int na = gp_converge(want, 3, have, 2, a), nb = gp_converge(want, 3, have, 2, b);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, sizeof(gp_action) * (size_t)na);
    assert_int_equal(count(a, na, GP_ACT_START), 2);
    assert_true(find(a, na, GP_ACT_STOP, 1) >= 0);
}

/* What a directory's records say, as the probe reports them. */
static gp_rdir_view view(gp_rdir_state record, bool unreadable, bool supervisor)
{
    gp_rdir_view v;
    memset(&v, 0, sizeof(v));
    v.status.state = unreadable ? GP_RDIR_NONE : record;
    v.status_unreadable = unreadable;
    v.supervisor_alive = supervisor;
    return v;
}

static void test_local_state_of(void **state)
{
    (void)state;
    struct {
        gp_rdir_state record;
        bool unreadable, supervisor, young;
        gp_local_state want;
    } cases[] = {
        {GP_RDIR_EXITED, false, false, false, GP_LOCAL_EXITED},
        {GP_RDIR_KILLED, false, true, false, GP_LOCAL_KILLED},
        {GP_RDIR_RUNNING, false, true, false, GP_LOCAL_RUNNING},
        {GP_RDIR_RUNNING, false, false, true, GP_LOCAL_LOST},
        {GP_RDIR_NONE, false, true, false, GP_LOCAL_STARTING},
        {GP_RDIR_NONE, false, false, true, GP_LOCAL_STARTING},
        {GP_RDIR_NONE, false, false, false, GP_LOCAL_LOST},
        /* status.json garbled by the job: running while the supervisor lives, even when young;
         * lost once it is gone, never "starting" (that would hide it from a stop). */
        {GP_RDIR_NONE, true, true, false, GP_LOCAL_RUNNING},
        {GP_RDIR_NONE, true, true, true, GP_LOCAL_RUNNING},
        {GP_RDIR_NONE, true, false, true, GP_LOCAL_LOST},
        {GP_RDIR_NONE, true, false, false, GP_LOCAL_LOST},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gp_rdir_view v = view(cases[i].record, cases[i].unreadable, cases[i].supervisor);
        gp_local_state got = gp_local_state_of(&v, cases[i].young);
        if (got != cases[i].want) {
            fail_msg("case %zu: state %d, want %d", i, (int)got, (int)cases[i].want);
        }
    }
}

/* A replica whose status.json cannot be read, its supervisor alive: never started a second time
 * while desired (reported Running), stopped through its supervisor once it is not. */
static void test_unreadable_record(void **state)
{
    (void)state;
    gp_rdir_view v = view(GP_RDIR_NONE, true, true);
    gp_replica_key want[] = {{4, 0, 2}};
    gp_local_replica have[] = {{{4, 0, 2}, gp_local_state_of(&v, false), 0}};
    gp_action plan[8];
    int n = gp_converge(want, 1, have, 1, plan);
    assert_int_equal(count(plan, n, GP_ACT_START), 0);
    assert_true(find(plan, n, GP_ACT_REPORT, 0) >= 0);
    assert_string_equal(gp_local_report_state(&have[0]), "Running");
    n = gp_converge(want, 0, have, 1, plan); /* cancelled */
    assert_int_equal(n, 1);
    assert_true(find(plan, n, GP_ACT_STOP, 0) >= 0);
    /* Its supervisor gone: lost, reported Failed, whatever is left of the job killed. */
    v = view(GP_RDIR_NONE, true, false);
    have[0].state = gp_local_state_of(&v, false);
    n = gp_converge(want, 1, have, 1, plan);
    assert_int_equal(count(plan, n, GP_ACT_START), 0);
    assert_true(find(plan, n, GP_ACT_KILL_GROUP, 0) >= 0);
    assert_string_equal(gp_local_report_state(&have[0]), "Failed");
}

/* A heartbeat is due once a started replica is no longer starting, not before; what it reported
 * up is forgotten, the rest watched on; the watch ends after GP_STARTS_WATCH_MS. */
static void test_starts_watch(void **state)
{
    (void)state;
    gp_starts *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    assert_int_equal(gp_starts_due(s, NULL, 0, 0), -1); /* nothing started */
    gp_replica_key k1 = {1, 0, 7}, k2 = {2, 0, 8}, k3 = {3, 1, 9};
    gp_starts_add(s, &k1, 1000);
    gp_starts_add(s, &k2, 1000);
    gp_starts_add(s, &k1, 1000); /* once */
    assert_int_equal(s->n, 2);
    /* k1's directory not made yet, k2 starting: still starting */
    gp_local_replica local[3] = {{.key = k2, .state = GP_LOCAL_STARTING}};
    assert_int_equal(gp_starts_due(s, local, 1, 1010), 0);
    /* k2 runs: due; a heartbeat reporting that forgets k2 and keeps k1 */
    local[0].state = GP_LOCAL_RUNNING;
    local[1] = (gp_local_replica){.key = k1, .state = GP_LOCAL_STARTING};
    assert_int_equal(gp_starts_due(s, local, 2, 1020), 1);
    gp_starts_reported(s, local, 2);
    assert_int_equal(s->n, 1);
    assert_int_equal(gp_starts_due(s, local, 2, 1030), 0);
    /* k1 ends at once (exited): due as well; reported, nothing is left */
    local[1].state = GP_LOCAL_EXITED;
    assert_int_equal(gp_starts_due(s, local, 2, 1040), 1);
    gp_starts_reported(s, local, 2);
    assert_int_equal(gp_starts_due(s, local, 2, 1050), -1);
    /* a replica that never comes up is watched GP_STARTS_WATCH_MS from its start, no longer */
    gp_starts_add(s, &k3, 2000);
    local[2] = (gp_local_replica){.key = k3, .state = GP_LOCAL_STARTING};
    assert_int_equal(gp_starts_due(s, local, 3, 2000 + GP_STARTS_WATCH_MS - 1), 0);
    assert_int_equal(gp_starts_due(s, local, 3, 2000 + GP_STARTS_WATCH_MS), -1);
    assert_int_equal(s->n, 0);
    /* at most GP_STARTS_MAX watched */
    for (int i = 0; i < GP_STARTS_MAX + 5; i++) {
        gp_replica_key k = {100 + i, 0, 1};
        gp_starts_add(s, &k, 3000);
    }
    assert_int_equal(s->n, GP_STARTS_MAX);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_and_keep),    cmocka_unit_test(test_epoch_fences_old_placement),
        cmocka_unit_test(test_final_states),      cmocka_unit_test(test_starting_is_not_restarted),
        cmocka_unit_test(test_idempotent),        cmocka_unit_test(test_local_state_of),
        cmocka_unit_test(test_unreadable_record), cmocka_unit_test(test_starts_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

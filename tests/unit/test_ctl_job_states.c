/*
 * The jobs by state (ctl_jobs_next, src/ctl/job_states.c): on random jobs moved between random
 * states, the jobs it finds from any position, either way, for any set of states, are those a
 * walk over every job finds, in the same order; a list of one page per call (GET /v1/jobs?state=
 * with limit and after) pages through the same jobs as the walk. A job not yet added is indexed
 * when it is, and a reload (ctl_state_clear) empties the index.
 */
#include "ctl/ctl.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static uint64_t rnd_state;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void add_job(ctl_state *st, int64_t id, ctl_job_state s)
{
    ctl_job *j = calloc(1, sizeof(*j));
    assert_non_null(j);
    j->id = id;
    j->state = s;
    assert_int_equal(ctl_state_add_job(st, j), 0);
}

/* What ctl_jobs_next answers, found by a walk. */
static int walk(const ctl_state *st, unsigned states, int from, int step)
{
    for (int i = from; i >= 0 && i < st->njobs; i += step) {
        if (!states || (states & (1u << st->jobs[i]->state))) {
            return i;
        }
    }
    return -1;
}

static void same_everywhere(const ctl_state *st, unsigned states)
{
    for (int from = -1; from <= st->njobs; from++) {
        assert_int_equal(ctl_jobs_next(st, states, from, 1), walk(st, states, from, 1));
        assert_int_equal(ctl_jobs_next(st, states, from, -1), walk(st, states, from, -1));
    }
}

/* Pages of limit jobs after the cursor, as api_jobs_list does, through the index and through
 * the walk: the same ids, page by page. */
static void same_pages(const ctl_state *st, unsigned states, int limit)
{
    int64_t after = 0;
    for (;;) {
        int lo = 0;
        while (lo < st->njobs && st->jobs[lo]->id <= after) {
            lo++;
        }
        int n = 0, i = ctl_jobs_next(st, states, lo, 1), k = walk(st, states, lo, 1);
        for (; n < limit && i >= 0; n++) {
            assert_int_equal(i, k);
            after = st->jobs[i]->id;
            i = ctl_jobs_next(st, states, i + 1, 1);
            k = walk(st, states, k + 1, 1);
        }
        assert_int_equal(i, k);
        if (i < 0) {
            return;
        }
    }
}

static void test_index_equals_walk(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        rnd_state = seed * 0x9e3779b97f4a7c15ull;
        print_message("seed %llu\n", (unsigned long long)seed);
        ctl_state st;
        memset(&st, 0, sizeof(st));
        int64_t id = 0;
        for (int round = 0; round < 30; round++) {
            for (int k = (int)(rnd() % 400); k > 0; k--) {
                id += 1 + (int64_t)(rnd() % 3); /* ids ascend, with gaps */
                add_job(&st, id, (ctl_job_state)(rnd() % CTL_NSTATES));
            }
            for (int k = (int)(rnd() % 300); k > 0 && st.njobs > 0; k--) {
                ctl_job *j = st.jobs[rnd() % (uint64_t)st.njobs];
                ctl_job_set_state(&st, j, (ctl_job_state)(rnd() % CTL_NSTATES));
            }
            int pending = 0;
            for (int i = 0; i < st.njobs; i++) {
                pending += ctl_job_state_waits(st.jobs[i]->state);
            }
            assert_int_equal(st.npending, pending);
            unsigned states = (unsigned)(rnd() % (1u << CTL_NSTATES));
            same_everywhere(&st, states);
            same_everywhere(&st, 1u << CTL_PENDING);
            same_pages(&st, states, 1 + (int)(rnd() % 50));
            same_pages(&st, 1u << CTL_RUNNING, 100);
        }
        assert_false(st.by_state_lost);
        ctl_state_clear(&st);
        assert_int_equal(ctl_jobs_next(&st, 1u << CTL_PENDING, 0, 1), -1);
    }
}

/* A job whose state is set before it is added (a child made Pending, then added) is indexed in
 * the state it has when added. */
static void test_set_before_add(void **state)
{
    (void)state;
    ctl_state st;
    memset(&st, 0, sizeof(st));
    add_job(&st, 1, CTL_RUNNING);
    ctl_job *j = calloc(1, sizeof(*j));
    assert_non_null(j);
    j->id = 2;
    j->state = CTL_RUNNING;
    ctl_job_set_state(&st, j, CTL_PENDING);
    assert_int_equal(ctl_state_add_job(&st, j), 0);
    assert_int_equal(ctl_jobs_next(&st, 1u << CTL_PENDING, 0, 1), 1);
    assert_int_equal(ctl_jobs_next(&st, 1u << CTL_RUNNING, 1, -1), 0);
    assert_int_equal(ctl_jobs_next(&st, 1u << CTL_RUNNING, 1, 1), -1);
    ctl_state_clear(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_equals_walk),
        cmocka_unit_test(test_set_before_add),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

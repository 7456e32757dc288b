/*
 * The jobs by state (ctl.h: ctl_state.by_state): for each state, the set of positions in
 * st->jobs of the jobs in that state. Positions never move (jobs are only appended, and a reload
 * builds the state anew), so a job's position is its place in the id order: walking a set in
 * position order walks those jobs in id order, which is how lists are ordered and paged.
 */
#include "ctl/ctl.h"

#include <stdlib.h>
#include <string.h>

/* Room for position pos; GP_ENOMEM. */
static int grow(ctl_posset *s, int pos)
{
    if (pos / 64 < s->nw) {
        return 0;
    }
    int nw = s->nw ? s->nw : 64;
    while (pos / 64 >= nw) {
        nw *= 2;
    }
    uint64_t *w = realloc(s->w, sizeof(*w) * (size_t)nw);
    if (!w) {
        return GP_ENOMEM;
    }
    s->w = w;
    uint64_t *sum = realloc(s->sum, sizeof(*sum) * (size_t)(nw / 64));
    if (!sum) {
        return GP_ENOMEM; /* w grown, nw not: still consistent */
    }
    s->sum = sum;
    memset(w + s->nw, 0, sizeof(*w) * (size_t)(nw - s->nw));
    memset(sum + s->nw / 64, 0, sizeof(*sum) * (size_t)((nw - s->nw) / 64));
    s->nw = nw;
    return 0;
}

static void put(ctl_posset *s, int pos, bool on)
{
    int k = pos / 64;
    if (on) {
        s->w[k] |= 1ull << (pos % 64);
    } else if (k < s->nw) {
        s->w[k] &= ~(1ull << (pos % 64));
    } else {
        return;
    }
    if (s->w[k]) {
        s->sum[k / 64] |= 1ull << (k % 64);
    } else {
        s->sum[k / 64] &= ~(1ull << (k % 64));
    }
}

/* Bits at and above bit b of a word; bits at and below it. */
static uint64_t from_bit(int b)
{
    return ~0ull << b;
}

static uint64_t upto_bit(int b)
{
    return b == 63 ? ~0ull : (1ull << (b + 1)) - 1;
}

/* The first member at or after from (>= 0), or -1. */
static int next_member(const ctl_posset *s, int from)
{
    int k = from / 64;
    if (k >= s->nw) {
        return -1;
    }
    uint64_t m = s->w[k] & from_bit(from % 64);
    if (m) {
        return k * 64 + __builtin_ctzll(m);
    }
    if (++k >= s->nw) {
        return -1;
    }
    int q = k / 64;
    uint64_t sm = s->sum[q] & from_bit(k % 64);
    while (!sm) {
        if (++q >= s->nw / 64) {
            return -1;
        }
        sm = s->sum[q];
    }
    k = q * 64 + __builtin_ctzll(sm);
    return k * 64 + __builtin_ctzll(s->w[k]);
}

/* The last member at or before from (>= 0), or -1. */
static int prev_member(const ctl_posset *s, int from)
{
    if (s->nw == 0) {
        return -1;
    }
    if (from / 64 >= s->nw) {
        from = s->nw * 64 - 1;
    }
    int k = from / 64;
    uint64_t m = s->w[k] & upto_bit(from % 64);
    if (m) {
        return k * 64 + 63 - __builtin_clzll(m);
    }
    if (--k < 0) {
        return -1;
    }
    int q = k / 64;
    uint64_t sm = s->sum[q] & upto_bit(k % 64);
    while (!sm) {
        if (--q < 0) {
            return -1;
        }
        sm = s->sum[q];
    }
    k = q * 64 + 63 - __builtin_clzll(sm);
    return k * 64 + 63 - __builtin_clzll(s->w[k]);
}

/* The position of job j in st->jobs (by its id), or -1 when it is not there yet. */
static int position(const ctl_state *st, const ctl_job *j)
{
    int lo = 0, hi = st->njobs - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (st->jobs[mid]->id == j->id) {
            return st->jobs[mid] == j ? mid : -1;
        }
        if (st->jobs[mid]->id < j->id) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return -1;
}

void ctl_jobs_index_add(ctl_state *st, int pos)
{
    ctl_posset *s = &st->by_state[st->jobs[pos]->state];
    if (st->by_state_lost || grow(s, pos) < 0) {
        st->by_state_lost = true;
        return;
    }
    put(s, pos, true);
}

void ctl_jobs_index_move(ctl_state *st, const ctl_job *j, ctl_job_state from, ctl_job_state to)
{
    int pos = from == to || st->by_state_lost ? -1 : position(st, j);
    if (pos < 0) {
        return; /* unchanged, lost, or not added yet (ctl_state_add_job indexes it) */
    }
    put(&st->by_state[from], pos, false);
    if (grow(&st->by_state[to], pos) < 0) {
        st->by_state_lost = true;
        return;
    }
    put(&st->by_state[to], pos, true);
}

void ctl_jobs_index_fini(ctl_state *st)
{
    for (int s = 0; s < CTL_NSTATES; s++) {
        free(st->by_state[s].w);
        free(st->by_state[s].sum);
        memset(&st->by_state[s], 0, sizeof(st->by_state[s]));
    }
    st->by_state_lost = false;
}

int ctl_jobs_next(const ctl_state *st, unsigned states, int from, int step)
{
    if (from < 0 || from >= st->njobs) {
        return -1;
    }
    if (!states || st->by_state_lost) { /* a walk */
        for (int i = from; i >= 0 && i < st->njobs; i += step) {
            if (!states || (states & (1u << st->jobs[i]->state))) {
                return i;
            }
        }
        return -1;
    }
    int best = -1;
    for (int s = 0; s < CTL_NSTATES; s++) {
        if (!(states & (1u << s))) {
            continue;
        }
        int p =
            step > 0 ? next_member(&st->by_state[s], from) : prev_member(&st->by_state[s], from);
        if (p >= 0 && (best < 0 || (step > 0 ? p < best : p > best))) {
            best = p;
        }
    }
    return best < st->njobs ? best : -1;
}

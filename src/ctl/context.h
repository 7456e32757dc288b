/*
 * The controller's context: what every change reaches — the configuration, the store, the state,
 * the scheduler, metering, alerts and the op being run — and the op a change runs as (ctl_op).
 *
 * This header sits at the bottom of the controller's upper layers (see tests/layers.sh): the
 * changes (jobs, nodes, tokens, audit, meter, recovery, alerts) and the transaction runner
 * (txn.h) include it; the committer and the scheduling loop (server.h) and the API on top of them
 * build on it. It declares data and the clock only; no behaviour of the committer or the API.
 *
 * Ownership: a gpupoold is set up by ctl_start and torn down by ctl_stop (server.h); everything
 * it points to is its own unless said otherwise.
 */
#ifndef GP_CTL_CONTEXT_H
#define GP_CTL_CONTEXT_H

#include "ctl/auth.h"
#include "ctl/config.h"
#include "ctl/ctl.h"
#include "ctl/ha.h"
#include "ctl/metrics.h"
#include "net/http_server.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

typedef struct gpupoold gpupoold;
typedef struct ctl_notifier ctl_notifier;
typedef struct ctl_op ctl_op;

/* Runs inside the group's transaction, under the state lock: checks the change against memory,
 * writes it to the store and applies it to memory. 0, or an error with d set; on error the
 * committer rolls the store back to the op's savepoint, so the op must not have changed memory
 * (check everything first, change memory last). */
typedef int (*ctl_op_fn)(gpupoold *g, ctl_op *op, gp_diag *d);

/* What the audit log needs to know of an API change (audit.h): set by api_run from the request
 * before the op is queued. After run succeeds the committer appends the change's record in the
 * op's savepoint, so the change and its record are stored together or not at all. */
typedef struct ctl_op_audit {
    const ctl_principal *who; /* the caller; NULL: not an API request */
    const char *action;       /* "job.cancel"; NULL: no record of the request itself */
    const char *kind;         /* the object's kind: "job" */
    bool by_id;               /* the object is named by its id ("job/42"), else by its name */
    bool created_only;        /* recorded only when run answers 201: a retried submit changes
                                 nothing */
    const char *ref, *ref2;   /* the path's parameters ("gpu-01", "3" for a GPU); NULL: none */
    const char *method, *path;
    const char *body; /* the body of a change to an existing object (a PUT's document, a drain's
                         reason: JSON text, body_len bytes), shown in the record */
    size_t body_len;
    char action_buf[64]; /* action, when derived from a route the audit table lacks */
    int64_t time_ms;     /* the time of the op's records, taken by the first: they share it */
    bool failed; /* set when a record of the op could not be written: memory may hold part of
                    the change, so the committer reloads it */
} ctl_op_audit;

struct ctl_op {
    ctl_op_fn run;
    void *arg;      /* the op's input; owned by the caller */
    json_t *result; /* set by run: the answer's document (a new reference) */
    int status;     /* set by run: the HTTP status of success (default 200) */
    bool kick;      /* set by run: the change may let the scheduler place something */
    bool node_kick; /* set by run with kick: the change is a node's own report (a heartbeat, a
                       registration), whose kick may wait out cycles that found nothing to do
                       (ctl_cycle_due_ms); any other kick is answered at the kick gap */
    bool dirty;     /* set by run before it changes memory in a way a later failure of the same
                       run cannot undo: when run fails, the committer reloads memory */
    ctl_op_audit audit;
    /* set by ctl_run_op_async: called once the op's group is committed (or failed) */
    void (*on_done)(ctl_op *op);
    /* filled by the committer */
    int rc;
    gp_diag diag;
    bool done;
    ctl_op *next;
};

typedef struct ctl_stats {
    atomic_llong cycles;
    atomic_llong cycle_us_last;
    atomic_llong groups;
    atomic_llong ops;
    atomic_llong placed;
    atomic_llong evicted;
} ctl_stats;

struct gpupoold {
    const gp_ctl_config *cfg;
    unsigned char secret_key[32]; /* secrets.key_file's (secrets.h); st.secret_key points here */
    gp_store *store;              /* the committer's */
    gp_store *reader;             /* for events; under reader_lock */
    pthread_mutex_t reader_lock;
    ctl_state st;
    gp_scheduler *sched;
    struct ctl_cycle_buf *cycbuf; /* the scheduler's input buffers (schedloop.c) */
    struct ctl_meter *meter;      /* metering: prices and used figures (meter.h) */
    struct ctl_history *history;  /* per-job and per-tenant history (history.h); owned */
    gp_http_server *http;
    gp_http_server *https;
    bool ready;
    /* Memory could not be reloaded from the store after a rollback: it may hold what the store
     * lost, so no transaction runs until a reload succeeds (txn.h). The committer's. */
    bool stale;
    /* the tokens, for authentication (auth.h): caught up by the committer after a group changed
     * them; readers hold auth_lock */
    pthread_mutex_t auth_lock;
    ctl_auth_table auth;
    /* the committer */
    pthread_t committer;
    pthread_mutex_t qlock;
    pthread_cond_t qcond;    /* work queued, a kick, or stop */
    pthread_cond_t donecond; /* ops done */
    ctl_op *head, *tail;
    ctl_op *op_now; /* the op being run, NULL between ops: who acts, for the audit log */
    bool stop, kicked, running;
    int64_t last_cycle_ms;
    int futile_cycles;     /* cycles in a row that placed and evicted nothing (ctl_cycle_due_ms) */
    bool kicked_by_change; /* a kick since the last cycle started was not a node's own report */
    ctl_stats stats;
    ctl_metrics metrics;     /* for /metrics (metrics.h); set up by ctl_start */
    ctl_notifier *notify;    /* alerts: the active list and the Alertmanager sender (notify.h) */
    int datalock;            /* the data directory's lock (datalock.h), held from start to stop */
    ctl_ha ha;               /* leader or follower (ha.h); a single gpupoold is the leader */
    struct ctl_proxy *proxy; /* the proxy's sessions and activity (proxy_state.h) */
    struct ctl_services *services; /* the autoscalers' memory (service.h); NULL: none yet */
    /* The election on a shared store (leader.h); unused on SQLite. */
    struct {
        pthread_t thread;
        bool running;
        bool stop;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        char holder[128];    /* the lease's holder: "ADVERTISE_URL HOST:PID" */
        atomic_bool leading; /* this process took the lease and leads */
        atomic_bool deposed; /* it lost the lease: stopping, exit CTL_EXIT_DEPOSED */
    } elect;
};

/* Milliseconds since the epoch (the wall clock; times the controller stores). */
int64_t ctl_now_ms(void);

/* The state lock, for readers (request handlers copying what they answer). */
void ctl_read_lock(gpupoold *g);
void ctl_read_unlock(gpupoold *g);
/* The same on a state: every thread but the committer takes the state lock through these, so
 * that the committer, which runs group after group while changes stream in, lets a waiting
 * thread in between two groups rather than taking the lock again at once (a mutex is not fair:
 * a reader, the long-poll answers or the lease's renewal could wait indefinitely). */
void ctl_state_lock(ctl_state *st);
void ctl_state_unlock(ctl_state *st);

#endif

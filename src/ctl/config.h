/*
 * gpupoold's configuration: one table of options (src/ctl/config.c) drives parsing, validation,
 * --dump-config, --help and docs/config.md, so that a setting cannot exist in one and be missing
 * from another.
 *
 * Sources, lowest precedence first: the defaults of the table; the YAML file named by
 * --config FILE (or else GPUPOOL_CONFIG); GPUPOOL_* environment variables; command-line flags.
 * Every option has a key in the file ("scheduler.node_policy"), an environment variable
 * (GPUPOOL_SCHEDULER_NODE_POLICY) and a flag (--scheduler-node-policy VALUE or
 * --scheduler-node-policy=VALUE). A later source replaces a value as a whole (also
 * scheduler.model_cost: the map is not merged).
 *
 * Value syntax, the same in every source:
 *   durations  integer seconds, or a number with ms, s, m, h or d: 500ms, 1.5s, 30m; stored as ms
 *   sizes      bytes, or a number with B, K, Ki, KiB, M, Mi or MiB (all powers of 1024)
 *   booleans   true/false, yes/no, on/off, 1/0 (any case); a bool flag alone means true
 *   HOST:PORT  name or IPv4 address, or [IPv6]; port 0..65535
 *   URLs       http:// or https:// URLs separated by commas (alerts.alertmanager)
 *   model_cost in the file a mapping {A100-80GB: 2.5}; in env and flags "A100-80GB=2.5,H100=4"
 *
 * Errors name where the bad value came from: `config.yaml:7: scheduler.node_policy: must be one
 * of binpack, spread`, `config.yaml:3: unknown key scheduler.nod_policy`,
 * `GPUPOOL_HTTP_THREADS: must be between 1 and 256`, `--listen: expected HOST:PORT`,
 * `--frobnicate: unknown flag`. Unknown keys in the file and unknown flags are refused; unknown
 * GPUPOOL_* environment variables are ignored, since the gpupool CLI and jobs have their own.
 *
 * Ownership: gp_ctl_config holds no pointers and nothing on the heap; it is a value, copied
 * freely, and needs no fini. Once loaded it is treated as immutable and passed as
 * const gp_ctl_config *. No globals; the environment is passed in (envp), never read.
 */
#ifndef GP_CTL_CONFIG_H
#define GP_CTL_CONFIG_H

#include "base/log.h"
#include "gpupool/error.h"
#include "gpupool/jobspec.h"
#include "gpupool/model.h"
#include "gpupool/sched.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GP_CTL_PATH_MAX 1024 /* bytes of a path option, with its NUL */
#define GP_CTL_HOST_MAX 256  /* bytes of a host name, with its NUL */

/* An address to listen on. host "" means not set (tls.listen: TLS off). IPv6 hosts are stored
 * without their brackets. */
typedef struct gp_ctl_addr {
    char host[GP_CTL_HOST_MAX];
    int port; /* 0..65535; 0 = any free port */
} gp_ctl_addr;

typedef enum gp_ctl_log_format {
    GP_CTL_LOG_TEXT = 0,
    GP_CTL_LOG_JSON = 1,
} gp_ctl_log_format;

typedef struct gp_ctl_model_cost {
    char model[GP_NAME_MAX]; /* GPU model name, as the nodes report it */
    double price;            /* per GPU-hour, >= 0 */
} gp_ctl_model_cost;

typedef struct gp_ctl_cost_map {
    int n; /* entries used, 0..GP_MAX_MODELS; names distinct */
    gp_ctl_model_cost entry[GP_MAX_MODELS];
} gp_ctl_cost_map;

typedef struct gp_ctl_config {
    char data_dir[GP_CTL_PATH_MAX];  /* required */
    char store_url[GP_CTL_PATH_MAX]; /* "" = sqlite:<data_dir>/gpupool.db */
    gp_ctl_addr listen;              /* default 127.0.0.1:7070 */
    struct {
        char advertise_url[GP_CTL_PATH_MAX]; /* "" = http://LISTEN */
        int64_t lease_ttl_ms;                /* default 3s */
        int64_t renew_interval_ms;           /* default 1s; < lease_ttl_ms */
    } ha;
    struct {
        gp_ctl_addr listen;         /* host "" = TLS off (default) */
        char cert[GP_CTL_PATH_MAX]; /* both set when listen is */
        char key[GP_CTL_PATH_MAX];
    } tls;
    struct {
        gp_log_level level; /* debug, info (default), warn, error */
        gp_ctl_log_format format;
    } log;
    struct {
        int threads;              /* 1..256, default 8 */
        int64_t max_body;         /* bytes, 1KiB..64MiB, default 1MiB */
        int64_t timeout_ms;       /* default 30s */
        int64_t max_header_bytes; /* bytes, 1KiB..64KiB, default 16KiB */
    } http;
    struct {
        double rate_limit;       /* requests/s per tenant (user tokens); 0 = none; default 100 */
        int rate_burst;          /* 1..1000000, default 200 */
        double token_rate_limit; /* requests/s per admin, operator or join token; 0 = none
                                    (default) */
        int token_rate_burst;    /* 1..1000000, default 1000 */
    } api;
    struct {
        int64_t interval_ms; /* 10ms..1h, default 1s */
        gp_node_policy node_policy;
        gp_gpu_policy gpu_policy; /* never GP_GPU_DEFAULT */
        bool backfill;
        double util_threshold; /* percent, 0..100 */
        double util_weight;    /* >= 0 */
        double cost_weight;    /* >= 0 */
        int max_preemptions;   /* 0..100000 */
        gp_ctl_cost_map model_cost;
    } scheduler;
    struct {
        int64_t heartbeat_timeout_ms;          /* default 40s */
        int64_t lost_timeout_ms;               /* default 2m */
        char join_token_file[GP_CTL_PATH_MAX]; /* "" = DATA_DIR/join.token */
    } nodes;
    struct {
        char default_queue[GP_NAME_MAX];          /* default "default" */
        char default_priority_class[GP_NAME_MAX]; /* default "normal" */
        int max_pending_per_tenant;               /* default 100000 */
        char checkpoint_root[GP_CTL_PATH_MAX];    /* "" = a directory on the node */
        gp_compute_policy compute_policy;         /* never GP_COMPUTE_DEFAULT; default shared */
        bool allow_host_rootfs;                   /* jobs without an image may run (default true) */
        int max_array_size;                       /* indices of a job array; default 10000 */
    } jobs;
    struct {
        char image[GP_CTL_PATH_MAX];   /* "" = a notebook must name its image */
        char command[GP_CTL_PATH_MAX]; /* run as /bin/sh -c COMMAND by a notebook naming none */
    } notebooks;
    struct {
        int64_t progress_deadline_ms; /* a rollout with no new replica ready by then stalls */
    } services;
    struct {
        int64_t max_body; /* bytes, 1KiB..1GiB, default 64MiB: a request body through the proxy */
        int64_t max_body_total; /* bytes, default 1GiB: large bodies in progress at once; 0: any */
    } proxy;
    struct {
        int restart_limit;         /* restarts after faults per window, default 10 */
        int64_t restart_window_ms; /* default 1h */
        double spare_fraction;     /* 0..0.5, default 0 */
        int64_t recheck_after_ms;  /* default 10m */
    } faults;
    struct {
        char alertmanager[GP_CTL_PATH_MAX]; /* comma-separated base URLs; "" = no alerts */
        int64_t retry_max_ms;               /* default 5m */
        int64_t resolve_after_ms;           /* default 1h */
        char external_url[GP_CTL_PATH_MAX]; /* generatorURL base; "" = none */
    } alerts;
    struct {
        bool auth; /* /metrics and /v1/sd/prometheus need a scraper token; default true */
    } metrics;
    struct {
        char price_table[GP_CTL_PATH_MAX]; /* YAML file (docs/billing.md); "" = no prices */
        int64_t used_flush_ms;             /* default 1m */
    } billing;
    struct {
        char dir[GP_CTL_PATH_MAX]; /* the dashboard's files; "" = the installed layout beside
                                      the executable; "none" = no dashboard */
    } ui;
    struct {
        char key_file[GP_CTL_PATH_MAX]; /* "" = DATA_DIR/secret.key */
    } secrets;
    struct {
        int max_jobs;    /* jobs with a history kept (history.h), 0..1000000, default 500 */
        int max_tenants; /* tenants with a history kept, 0..1000000, default 1000 */
    } history;
} gp_ctl_config;

/* What the command line asked for besides settings. */
typedef struct gp_ctl_cli {
    bool help;                         /* --help, -h */
    bool version;                      /* --version, -V */
    bool dump_config;                  /* --dump-config */
    char config_file[GP_CTL_PATH_MAX]; /* the file read: --config or GPUPOOL_CONFIG; "" = none */
} gp_ctl_cli;

/* Sets *out to the defaults of the table (data_dir empty: it has none). */
void gp_ctl_config_default(gp_ctl_config *out);

/*
 * Loads the effective configuration: defaults < file < env < flags. argv[0] is the program
 * name; envp is a NULL-terminated "NAME=VALUE" array (may be NULL: no environment).
 *
 * With --help or --version anywhere in argv, nothing else is read or checked: *cli says which,
 * *out holds the defaults, and 0 is returned, so they work without a data_dir.
 *
 * Returns 0 with *out and *cli filled. On failure returns GP_EINVAL (a bad value, key or flag;
 * a missing required setting), GP_EPARSE (YAML syntax), GP_ENOENT or GP_EIO (the file cannot be
 * read) or GP_ENOMEM, with the place named in d, and leaves *out and *cli untouched.
 */
int gp_ctl_config_load(int argc, char **argv, char **envp, gp_ctl_config *out, gp_ctl_cli *cli,
                       gp_diag *d);

/* Writes cfg as a YAML document that gp_ctl_config_load reads back to an equal config. Every
 * option is written, defaults included. 0, or GP_EIO when writing fails. */
int gp_ctl_config_dump(const gp_ctl_config *cfg, FILE *f);

/* The --help text: usage line, sources, then every option's flag, env variable, default and
 * meaning, from the table. */
void gp_ctl_config_usage(FILE *f);

/* docs/config.md's table, in Markdown: key, flag, env, type, default, meaning. */
void gp_ctl_config_doc(FILE *f);

/* The scheduler's settings as gp_sched_config (model_cost excluded: it is per cluster model
 * index, built by the caller from cfg->scheduler.model_cost). */
void gp_ctl_config_sched(const gp_ctl_config *cfg, gp_sched_config *out);

#endif

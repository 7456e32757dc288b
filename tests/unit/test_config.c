/* gpupoold's configuration: defaults < file < env < flags, every error names its place, a dump
 * loads back to the same config, and a failed load changes nothing. */
#include "ctl/config.h"
#include "net/yaml_json.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/gp-test-config-XXXXXX";

/* Loads with argv = {"gpupoold", args..., NULL}. */
static int load_args(const char **args, const char **env, gp_ctl_config *out, gp_ctl_cli *cli,
                     gp_diag *d)
{
    int argc = 0;
    while (args[argc]) {
        argc++;
    }
    return gp_ctl_config_load(argc, (char **)args, (char **)env, out, cli, d);
}

#define ARGS(...) ((const char *[]){"gpupoold", __VA_ARGS__, NULL})
#define ENV(...)  ((const char *[]){__VA_ARGS__, NULL})
#define NOENV     ((const char *[]){NULL})

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Runs a load that must fail with code and a message containing needle, and checks that it left
 * *out and *cli untouched. */
static void expect_fail(const char **args, const char **env, int code, const char *needle)
{
    gp_ctl_config out;
    gp_ctl_cli cli;
    memset(&out, 0x5a, sizeof(out));
    memset(&cli, 0xa5, sizeof(cli));
    gp_ctl_config out0 = out;
    gp_ctl_cli cli0 = cli;
    gp_diag d;
    int rc = load_args(args, env, &out, &cli, &d);
    if (rc != code || !strstr(d.msg, needle)) {
        fail_msg("returned %s \"%s\", expected %s with \"%s\"", gp_strerror_name(rc), d.msg,
                 gp_strerror_name(code), needle);
    }
    assert_memory_equal(&out, &out0, sizeof(out));
    assert_memory_equal(&cli, &cli0, sizeof(cli));
}

static void expect_ok(const char **args, const char **env, gp_ctl_config *out)
{
    gp_ctl_cli cli;
    gp_diag d;
    int rc = load_args(args, env, out, &cli, &d);
    if (rc != 0) {
        fail_msg("load failed: %s \"%s\"", gp_strerror_name(rc), d.msg);
    }
}

static void test_defaults(void **state)
{
    (void)state;
    gp_ctl_config c;
    gp_ctl_cli cli;
    gp_diag d;
    assert_int_equal(load_args(ARGS("--data-dir", "/var/lib/gp"), NOENV, &c, &cli, &d), 0);
    assert_string_equal(c.data_dir, "/var/lib/gp");
    assert_string_equal(c.listen.host, "127.0.0.1");
    assert_int_equal(c.listen.port, 7070);
    assert_string_equal(c.tls.listen.host, "");
    assert_string_equal(c.tls.cert, "");
    assert_string_equal(c.tls.key, "");
    assert_int_equal(c.log.level, GP_LOG_INFO);
    assert_int_equal(c.log.format, GP_CTL_LOG_TEXT);
    assert_int_equal(c.http.threads, 8);
    assert_int_equal(c.http.max_body, 1024 * 1024);
    assert_int_equal(c.http.timeout_ms, 30000);
    assert_int_equal(c.scheduler.interval_ms, 1000);
    assert_int_equal(c.scheduler.node_policy, GP_NODE_BINPACK);
    assert_int_equal(c.scheduler.gpu_policy, GP_GPU_FRAGMENTATION);
    assert_true(c.scheduler.backfill);
    assert_true(c.scheduler.util_threshold == 80.0);
    assert_true(c.scheduler.util_weight == 1.0);
    assert_true(c.scheduler.cost_weight == 1.0);
    assert_int_equal(c.scheduler.max_preemptions, 64);
    assert_int_equal(c.scheduler.model_cost.n, 0);
    assert_int_equal(c.nodes.heartbeat_timeout_ms, 40000);
    assert_string_equal(c.nodes.join_token_file, "");
    assert_string_equal(c.jobs.default_queue, "default");
    assert_string_equal(c.jobs.default_priority_class, "normal");
    assert_int_equal(c.jobs.max_pending_per_tenant, 100000);
    assert_false(cli.help || cli.version || cli.dump_config);
    assert_string_equal(cli.config_file, "");

    /* The scheduler's part matches the scheduler's own defaults (sched.h). */
    gp_sched_config s;
    gp_ctl_config_sched(&c, &s);
    assert_int_equal(s.node_policy, GP_NODE_BINPACK);
    assert_int_equal(s.gpu_policy, GP_GPU_FRAGMENTATION);
    assert_true(s.backfill);
    assert_true(s.util_threshold == 80.0);
    assert_int_equal(s.max_preemptions, 64);

    gp_ctl_config def;
    gp_ctl_config_default(&def);
    assert_string_equal(def.data_dir, "");
    assert_int_equal(def.http.threads, 8);
}

static void test_precedence(void **state)
{
    (void)state;
    write_file("prec.yaml", "data_dir: /from/file\n"
                            "http:\n"
                            "  threads: 4\n"
                            "scheduler:\n"
                            "  node_policy: spread\n");
    gp_ctl_config c;
    /* file only */
    expect_ok(ARGS("--config", "prec.yaml"), NOENV, &c);
    assert_string_equal(c.data_dir, "/from/file");
    assert_int_equal(c.http.threads, 4);
    assert_int_equal(c.scheduler.node_policy, GP_NODE_SPREAD);
    /* env beats the file */
    expect_ok(ARGS("--config", "prec.yaml"), ENV("GPUPOOL_HTTP_THREADS=5", "OTHER=1"), &c);
    assert_int_equal(c.http.threads, 5);
    assert_string_equal(c.data_dir, "/from/file");
    /* flags beat env, both spellings */
    expect_ok(ARGS("--config", "prec.yaml", "--http-threads", "6"), ENV("GPUPOOL_HTTP_THREADS=5"),
              &c);
    assert_int_equal(c.http.threads, 6);
    expect_ok(ARGS("--config=prec.yaml", "--http-threads=7", "--data-dir=/from/flag"),
              ENV("GPUPOOL_HTTP_THREADS=5", "GPUPOOL_DATA_DIR=/from/env"), &c);
    assert_int_equal(c.http.threads, 7);
    assert_string_equal(c.data_dir, "/from/flag");
    /* the file named by GPUPOOL_CONFIG; --config beats it */
    gp_ctl_cli cli;
    gp_diag d;
    assert_int_equal(
        load_args(ARGS("--dump-config"), ENV("GPUPOOL_CONFIG=prec.yaml"), &c, &cli, &d), 0);
    assert_int_equal(c.http.threads, 4);
    assert_string_equal(cli.config_file, "prec.yaml");
    assert_true(cli.dump_config);
    expect_fail(ARGS("--config", "absent.yaml"), ENV("GPUPOOL_CONFIG=prec.yaml"), GP_ENOENT,
                "absent.yaml");
    /* a file of comments only, and empty sections, leave the defaults */
    write_file("prec.yaml", "# nothing set here\n\n   # indented comment\n");
    expect_ok(ARGS("--config", "prec.yaml", "--data-dir", "/d"), NOENV, &c);
    assert_int_equal(c.http.threads, 8);
    write_file("prec.yaml", "data_dir: /d\ntls:\nhttp: {}\n");
    expect_ok(ARGS("--config", "prec.yaml"), NOENV, &c);
    assert_int_equal(c.http.threads, 8);
    /* unknown GPUPOOL_* variables belong to others (the CLI, jobs) and are ignored */
    expect_ok(ARGS("--data-dir", "/d"), ENV("GPUPOOL_SERVER=http://x", "GPUPOOL_JOB_ID=3"), &c);
}

static void test_error_messages(void **state)
{
    (void)state;
    write_file("config.yaml", "data_dir: /d\n"
                              "listen: 127.0.0.1:7070\n"
                              "http:\n"
                              "  threads: 8\n"
                              "scheduler:\n"
                              "  interval: 1s\n"
                              "  node_policy: fullest\n");
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EINVAL,
                "config.yaml:7: scheduler.node_policy: must be one of binpack, spread");
    write_file("config.yaml", "data_dir: /d\n"
                              "scheduler:\n"
                              "  nod_policy: spread\n");
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EINVAL,
                "config.yaml:3: unknown key scheduler.nod_policy");
    write_file("config.yaml", "data_dir: /d\ncolour: red\n");
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EINVAL,
                "config.yaml:2: unknown key colour");
    write_file("config.yaml", "scheduler.interval: 1s\n"); /* dotted keys are not a spelling */
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EINVAL,
                "config.yaml:1: unknown key scheduler.interval");
    write_file("config.yaml", "http: 8\n");
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EINVAL,
                "config.yaml:1: http: must be a mapping");
    write_file("config.yaml", "listen: [a, b]\n");
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EINVAL,
                "config.yaml:1: listen: must be a single value");
    write_file("config.yaml", "- a\n- b\n");
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EINVAL,
                "config.yaml: must be a mapping");
    write_file("config.yaml", "data_dir: /d\nhttp:\n  threads: [1\n");
    expect_fail(ARGS("--config", "config.yaml"), NOENV, GP_EPARSE, "config.yaml: line ");
    expect_fail(ARGS("--config", "missing.yaml"), NOENV, GP_ENOENT, "missing.yaml");

    expect_fail(ARGS("--data-dir", "/d"), ENV("GPUPOOL_HTTP_THREADS=0"), GP_EINVAL,
                "GPUPOOL_HTTP_THREADS: must be between 1 and 256");
    expect_fail(ARGS("--data-dir", "/d"), ENV("GPUPOOL_HTTP_THREADS=eight"), GP_EINVAL,
                "GPUPOOL_HTTP_THREADS: must be an integer");
    expect_fail(ARGS("--data-dir", "/d", "--listen", "localhost"), NOENV, GP_EINVAL,
                "--listen: expected HOST:PORT");
    expect_fail(ARGS("--data-dir", "/d", "--listen=:80"), NOENV, GP_EINVAL,
                "--listen: expected HOST:PORT");
    expect_fail(ARGS("--data-dir", "/d", "--listen", "::1:80"), NOENV, GP_EINVAL,
                "--listen: expected HOST:PORT");
    expect_fail(ARGS("--data-dir", "/d", "--listen", "h:65536"), NOENV, GP_EINVAL,
                "--listen: port must be between 0 and 65535");
    expect_fail(ARGS("--data-dir", "/d", "--listen", "h:-1"), NOENV, GP_EINVAL,
                "--listen: port must be between 0 and 65535");
    expect_fail(ARGS("--data-dir", "/d", "--frobnicate"), NOENV, GP_EINVAL,
                "--frobnicate: unknown flag");
    expect_fail(ARGS("--data-dir", "/d", "--frobnicate=1"), NOENV, GP_EINVAL,
                "--frobnicate: unknown flag");
    expect_fail(ARGS("--data-dir", "/d", "-x"), NOENV, GP_EINVAL, "-x: unknown flag");
    expect_fail(ARGS("--data-dir", "/d", "stray"), NOENV, GP_EINVAL, "stray: unexpected argument");
    expect_fail(ARGS("--data-dir", "/d", "--http-threads"), NOENV, GP_EINVAL,
                "--http-threads: requires a value");
    expect_fail(ARGS("--config"), NOENV, GP_EINVAL, "--config: requires a value");
    expect_fail(ARGS("--dump-config=yes", "--data-dir", "/d"), NOENV, GP_EINVAL,
                "--dump-config: takes no value");
    expect_fail(ARGS("--dump-config"), NOENV, GP_EINVAL,
                "data_dir: required (--data-dir, GPUPOOL_DATA_DIR or data_dir in the config "
                "file)");
    expect_fail(ARGS("--data-dir="), NOENV, GP_EINVAL, "--data-dir: must not be empty");
    /* A bad flag is reported before the file is read. */
    expect_fail(ARGS("--config", "missing.yaml", "--frobnicate"), NOENV, GP_EINVAL,
                "--frobnicate: unknown flag");
    /* TLS settings go together. */
    expect_fail(ARGS("--data-dir", "/d", "--tls-listen", "0.0.0.0:7443"), NOENV, GP_EINVAL,
                "tls.cert: required when tls.listen is set (--tls-cert, GPUPOOL_TLS_CERT");
    expect_fail(ARGS("--data-dir", "/d", "--tls-listen", "0.0.0.0:7443", "--tls-cert", "c.pem"),
                NOENV, GP_EINVAL, "tls.key: required when tls.listen is set");
    expect_fail(ARGS("--data-dir", "/d", "--tls-listen", "127.0.0.1:7070", "--tls-cert", "c",
                     "--tls-key", "k"),
                NOENV, GP_EINVAL, "tls.listen: must differ from listen");
    gp_ctl_config c;
    expect_ok(ARGS("--data-dir", "/d", "--tls-listen", "[::]:7443", "--tls-cert", "c.pem",
                   "--tls-key", "k.pem"),
              NOENV, &c);
    assert_string_equal(c.tls.listen.host, "::");
    assert_int_equal(c.tls.listen.port, 7443);
}

static void test_bounds(void **state)
{
    (void)state;
    gp_ctl_config c;
    expect_ok(ARGS("--data-dir", "/d", "--http-threads", "1", "--scheduler-max-preemptions", "0",
                   "--scheduler-util-threshold", "0"),
              NOENV, &c);
    assert_int_equal(c.http.threads, 1);
    assert_int_equal(c.scheduler.max_preemptions, 0);
    expect_ok(ARGS("--data-dir", "/d", "--http-threads", "256", "--scheduler-max-preemptions",
                   "100000", "--scheduler-util-threshold", "100", "--scheduler-util-weight", "0",
                   "--scheduler-cost-weight", "1e6", "--listen", "h:0"),
              NOENV, &c);
    assert_int_equal(c.http.threads, 256);
    assert_true(c.scheduler.util_threshold == 100.0);
    assert_true(c.scheduler.cost_weight == 1e6);
    assert_int_equal(c.listen.port, 0);
    expect_fail(ARGS("--data-dir", "/d", "--http-threads", "257"), NOENV, GP_EINVAL,
                "--http-threads: must be between 1 and 256");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-max-preemptions", "-1"), NOENV, GP_EINVAL,
                "must be between 0 and 100000");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-util-threshold", "100.5"), NOENV, GP_EINVAL,
                "--scheduler-util-threshold: must be a number between 0 and 100");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-util-weight", "-0.5"), NOENV, GP_EINVAL,
                "--scheduler-util-weight: must be a number >= 0");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-cost-weight", "inf"), NOENV, GP_EINVAL,
                "must be a number >= 0");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-interval", "9ms"), NOENV, GP_EINVAL,
                "--scheduler-interval: must be between 10ms and 1h");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-interval", "61m"), NOENV, GP_EINVAL,
                "must be between 10ms and 1h");
    expect_fail(ARGS("--data-dir", "/d", "--http-max-body", "1023"), NOENV, GP_EINVAL,
                "--http-max-body: must be between 1KiB and 64MiB");
    expect_fail(ARGS("--data-dir", "/d", "--http-max-body", "65MiB"), NOENV, GP_EINVAL,
                "must be between 1KiB and 64MiB");
    expect_fail(ARGS("--data-dir", "/d", "--jobs-max-pending-per-tenant", "0"), NOENV, GP_EINVAL,
                "--jobs-max-pending-per-tenant: must be between 1 and");
    expect_fail(ARGS("--data-dir", "/d", "--log-level", "verbose"), NOENV, GP_EINVAL,
                "--log-level: must be one of debug, info, warn, error");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-gpu-policy", "best"), NOENV, GP_EINVAL,
                "must be one of packing, spread, topology, fragmentation");
    expect_fail(ARGS("--data-dir", "/d", "--jobs-default-queue", ""), NOENV, GP_EINVAL,
                "--jobs-default-queue: must not be empty");
    char longname[100];
    memset(longname, 'q', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    expect_fail(ARGS("--data-dir", "/d", "--jobs-default-queue", longname), NOENV, GP_EINVAL,
                "--jobs-default-queue: longer than 63 bytes");
}

static void test_durations_sizes_bools(void **state)
{
    (void)state;
    gp_ctl_config c;
    expect_ok(ARGS("--data-dir", "/d", "--scheduler-interval", "500ms", "--http-timeout", "90",
                   "--nodes-heartbeat-timeout", "1d", "--http-max-body", "512K"),
              NOENV, &c);
    assert_int_equal(c.scheduler.interval_ms, 500);
    assert_int_equal(c.http.timeout_ms, 90000);
    assert_int_equal(c.nodes.heartbeat_timeout_ms, 86400000);
    assert_int_equal(c.http.max_body, 512 * 1024);
    expect_ok(ARGS("--data-dir", "/d", "--scheduler-interval", "1.5s", "--http-timeout", "2m",
                   "--nodes-heartbeat-timeout", "1h", "--http-max-body", "1.5MiB"),
              NOENV, &c);
    assert_int_equal(c.scheduler.interval_ms, 1500);
    assert_int_equal(c.http.timeout_ms, 120000);
    assert_int_equal(c.nodes.heartbeat_timeout_ms, 3600000);
    assert_int_equal(c.http.max_body, 1536 * 1024);
    const char *sizes[][2] = {{"2048", "2048"},   {"2048B", "2048"}, {"4Ki", "4096"},
                              {"4KiB", "4096"},   {"2M", "2097152"}, {"2Mi", "2097152"},
                              {"2MiB", "2097152"}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        expect_ok(ARGS("--data-dir", "/d", "--http-max-body", sizes[i][0]), NOENV, &c);
        assert_int_equal(c.http.max_body, atoll(sizes[i][1]));
    }
    const char *bad_durations[] = {"1x", "s", "-1s", "1 s", "1.0001ms", "", "1e3s", "0x10"};
    for (size_t i = 0; i < sizeof(bad_durations) / sizeof(bad_durations[0]); i++) {
        expect_fail(ARGS("--data-dir", "/d", "--http-timeout", bad_durations[i]), NOENV, GP_EINVAL,
                    "--http-timeout: must be a duration");
    }
    expect_fail(ARGS("--data-dir", "/d", "--http-max-body", "1GB"), NOENV, GP_EINVAL,
                "--http-max-body: must be a size");
    /* Durations from YAML: integers are seconds, strings carry units. */
    write_file("dur.yaml", "data_dir: /d\nhttp: {timeout: 45, max_body: 2MiB}\n"
                           "scheduler: {interval: 0.25}\n");
    expect_ok(ARGS("--config", "dur.yaml"), NOENV, &c);
    assert_int_equal(c.http.timeout_ms, 45000);
    assert_int_equal(c.http.max_body, 2 * 1024 * 1024);
    assert_int_equal(c.scheduler.interval_ms, 250);
    /* Booleans. */
    const char *no[] = {"false", "no", "off", "0", "FALSE", "Off"};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        expect_ok(ARGS("--data-dir", "/d", "--scheduler-backfill", no[i]), NOENV, &c);
        assert_false(c.scheduler.backfill);
    }
    expect_ok(ARGS("--scheduler-backfill=no", "--data-dir", "/d"), NOENV, &c);
    assert_false(c.scheduler.backfill);
    expect_ok(ARGS("--data-dir", "/d", "--scheduler-backfill"), ENV("GPUPOOL_SCHEDULER_BACKFILL=0"),
              &c);
    assert_true(c.scheduler.backfill);
    expect_ok(ARGS("--scheduler-backfill", "--data-dir", "/d"), ENV("GPUPOOL_SCHEDULER_BACKFILL=0"),
              &c);
    assert_true(c.scheduler.backfill);
    expect_ok(ARGS("--data-dir", "/d"), ENV("GPUPOOL_SCHEDULER_BACKFILL=yes"), &c);
    assert_true(c.scheduler.backfill);
    write_file("bool.yaml", "data_dir: /d\nscheduler:\n  backfill: off\n");
    expect_ok(ARGS("--config", "bool.yaml"), NOENV, &c);
    assert_false(c.scheduler.backfill);
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-backfill", "maybe"), NOENV, GP_EINVAL,
                "--scheduler-backfill: must be true or false");
}

static void test_model_cost(void **state)
{
    (void)state;
    write_file("cost.yaml", "data_dir: /d\n"
                            "scheduler:\n"
                            "  cost_weight: 2\n"
                            "  model_cost:\n"
                            "    A100-80GB: 2.5\n"
                            "    H100-80GB: 4\n"
                            "    \"NVIDIA L4\": 0\n");
    gp_ctl_config c;
    expect_ok(ARGS("--config", "cost.yaml"), NOENV, &c);
    assert_int_equal(c.scheduler.model_cost.n, 3);
    assert_string_equal(c.scheduler.model_cost.entry[0].model, "A100-80GB");
    assert_true(c.scheduler.model_cost.entry[0].price == 2.5);
    assert_string_equal(c.scheduler.model_cost.entry[1].model, "H100-80GB");
    assert_true(c.scheduler.model_cost.entry[1].price == 4.0);
    assert_string_equal(c.scheduler.model_cost.entry[2].model, "NVIDIA L4");
    assert_true(c.scheduler.model_cost.entry[2].price == 0.0);
    /* env replaces the file's map as a whole */
    expect_ok(ARGS("--config", "cost.yaml"),
              ENV("GPUPOOL_SCHEDULER_MODEL_COST=A100-80GB=2.5, H100-80GB = 4.25"), &c);
    assert_int_equal(c.scheduler.model_cost.n, 2);
    assert_string_equal(c.scheduler.model_cost.entry[1].model, "H100-80GB");
    assert_true(c.scheduler.model_cost.entry[1].price == 4.25);
    /* and a flag replaces env's; an empty value empties it */
    expect_ok(ARGS("--config", "cost.yaml", "--scheduler-model-cost", "T4=0.35"),
              ENV("GPUPOOL_SCHEDULER_MODEL_COST=A100-80GB=2.5"), &c);
    assert_int_equal(c.scheduler.model_cost.n, 1);
    assert_string_equal(c.scheduler.model_cost.entry[0].model, "T4");
    expect_ok(ARGS("--config", "cost.yaml", "--scheduler-model-cost="), NOENV, &c);
    assert_int_equal(c.scheduler.model_cost.n, 0);
    /* as a string in the file too */
    write_file("cost2.yaml", "data_dir: /d\nscheduler: {model_cost: \"A=1,B=2\"}\n");
    expect_ok(ARGS("--config", "cost2.yaml"), NOENV, &c);
    assert_int_equal(c.scheduler.model_cost.n, 2);

    write_file("cost.yaml", "data_dir: /d\n"
                            "scheduler:\n"
                            "  model_cost:\n"
                            "    A100-80GB: 2.5\n"
                            "    H100-80GB: -4\n");
    expect_fail(ARGS("--config", "cost.yaml"), NOENV, GP_EINVAL,
                "cost.yaml:5: scheduler.model_cost.H100-80GB: price of H100-80GB must be a "
                "number >= 0");
    write_file("cost.yaml", "data_dir: /d\nscheduler:\n  model_cost:\n    A100: [1]\n");
    expect_fail(ARGS("--config", "cost.yaml"), NOENV, GP_EINVAL,
                "cost.yaml:4: scheduler.model_cost.A100: must be a number >= 0");
    expect_fail(ARGS("--data-dir", "/d"), ENV("GPUPOOL_SCHEDULER_MODEL_COST=A100:2.5"), GP_EINVAL,
                "GPUPOOL_SCHEDULER_MODEL_COST: expected MODEL=PRICE[,MODEL=PRICE...]");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-model-cost", "A=1,,B=2"), NOENV, GP_EINVAL,
                "--scheduler-model-cost: expected MODEL=PRICE");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-model-cost", "A=1,A=2"), NOENV, GP_EINVAL,
                "--scheduler-model-cost: model A given twice");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-model-cost", "A=cheap"), NOENV, GP_EINVAL,
                "--scheduler-model-cost: price of A must be a number >= 0");
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-model-cost", "=1"), NOENV, GP_EINVAL,
                "--scheduler-model-cost: a model name is empty");
    char many[64 * 8 + 16] = "";
    for (int i = 0; i <= GP_MAX_MODELS; i++) {
        size_t used = strlen(many);
        snprintf(many + used, sizeof(many) - used, "%sm%d=1", i ? "," : "", i);
    }
    expect_fail(ARGS("--data-dir", "/d", "--scheduler-model-cost", many), NOENV, GP_EINVAL,
                "more than 64 models");
}

/* Dumps c to a string (malloc'd). */
static char *dump_text(const gp_ctl_config *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(gp_ctl_config_dump(c, f), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Dumps a, loads the dump back, and checks that the result dumps the same and equals a. */
static void round_trip(const gp_ctl_config *a)
{
    char *text = dump_text(a);
    write_file("dump.yaml", text);
    gp_ctl_config b;
    memset(&b, 0, sizeof(b));
    expect_ok(ARGS("--config", "dump.yaml"), NOENV, &b);
    char *again = dump_text(&b);
    assert_string_equal(text, again);
    assert_string_equal(a->data_dir, b.data_dir);
    assert_string_equal(a->tls.listen.host, b.tls.listen.host);
    assert_int_equal(a->tls.listen.port, b.tls.listen.port);
    assert_int_equal(a->scheduler.model_cost.n, b.scheduler.model_cost.n);
    for (int i = 0; i < a->scheduler.model_cost.n; i++) {
        assert_string_equal(a->scheduler.model_cost.entry[i].model,
                            b.scheduler.model_cost.entry[i].model);
        assert_true(a->scheduler.model_cost.entry[i].price ==
                    b.scheduler.model_cost.entry[i].price);
    }
    assert_true(a->scheduler.util_threshold == b.scheduler.util_threshold);
    assert_true(a->scheduler.util_weight == b.scheduler.util_weight);
    assert_true(a->scheduler.cost_weight == b.scheduler.cost_weight);
    assert_int_equal(a->scheduler.interval_ms, b.scheduler.interval_ms);
    assert_int_equal(a->http.max_body, b.http.max_body);
    assert_int_equal(a->log.level, b.log.level);
    assert_int_equal(a->log.format, b.log.format);
    assert_int_equal(a->scheduler.gpu_policy, b.scheduler.gpu_policy);
    assert_int_equal(a->scheduler.backfill, b.scheduler.backfill);
    assert_string_equal(a->jobs.default_priority_class, b.jobs.default_priority_class);
    free(text);
    free(again);
}

static void test_dump_round_trip(void **state)
{
    (void)state;
    gp_ctl_config c;
    expect_ok(ARGS("--data-dir", "/var/lib/gpupool"), NOENV, &c);
    round_trip(&c);
    /* Every option away from its default, with awkward text. */
    expect_ok(ARGS("--data-dir", "/srv/with \"quote\" and \\ and: colon #hash", "--listen",
                   "0.0.0.0:80", "--tls-listen", "[fe80::1]:443", "--tls-cert", "/etc/c.pem",
                   "--tls-key", "/etc/k.pem", "--log-level", "debug", "--log-format", "json",
                   "--http-threads", "3", "--http-max-body", "1536KiB", "--http-timeout", "45m",
                   "--scheduler-interval", "1.25s", "--scheduler-node-policy", "spread",
                   "--scheduler-gpu-policy", "topology", "--scheduler-backfill", "false",
                   "--scheduler-util-threshold", "33.3", "--scheduler-util-weight", "0.1",
                   "--scheduler-cost-weight", "1e-3", "--scheduler-max-preemptions", "7",
                   "--scheduler-model-cost", "A100-80GB=2.5,NVIDIA L4=0.1,x'y=3",
                   "--nodes-heartbeat-timeout", "23h", "--nodes-join-token-file", "/etc/token",
                   "--jobs-default-queue", "null", "--jobs-default-priority-class", "true",
                   "--jobs-max-pending-per-tenant", "12"),
              NOENV, &c);
    assert_string_equal(c.tls.listen.host, "fe80::1");
    round_trip(&c);
    /* The dump is YAML with sections, as a person would write it. */
    char *text = dump_text(&c);
    assert_non_null(strstr(text, "scheduler:\n  interval: 1250ms\n"));
    assert_non_null(strstr(text, "  node_policy: spread\n"));
    assert_non_null(strstr(text, "  model_cost:\n    \"A100-80GB\": 2.5\n"));
    assert_non_null(strstr(text, "  timeout: 45m\n"));
    assert_non_null(strstr(text, "  heartbeat_timeout: 23h\n"));
    free(text);
}

static void test_help_version(void **state)
{
    (void)state;
    gp_ctl_config c;
    gp_ctl_cli cli;
    gp_diag d;
    /* No data_dir needed, and nothing else is read. */
    assert_int_equal(load_args(ARGS("--help", "--config", "missing.yaml"), NOENV, &c, &cli, &d), 0);
    assert_true(cli.help);
    assert_int_equal(c.http.threads, 8);
    assert_int_equal(load_args(ARGS("-V"), NOENV, &c, &cli, &d), 0);
    assert_true(cli.version);
    assert_false(cli.help);
    assert_int_equal(load_args(ARGS("--data-dir", "/d", "--dump-config"), NOENV, &c, &cli, &d), 0);
    assert_true(cli.dump_config);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gp_ctl_config_usage(f);
    fclose(f);
    assert_non_null(strstr(buf, "--scheduler-node-policy binpack|spread"));
    assert_non_null(strstr(buf, "GPUPOOL_SCHEDULER_NODE_POLICY; default binpack"));
    assert_non_null(strstr(buf, "--data-dir PATH"));
    assert_non_null(strstr(buf, "GPUPOOL_DATA_DIR; required"));
    assert_non_null(strstr(buf, "--dump-config"));
    free(buf);

    f = open_memstream(&buf, &len);
    gp_ctl_config_doc(f);
    fclose(f);
    assert_non_null(strstr(buf, "| Key | Flag | Environment | Type | Default | Meaning |"));
    assert_non_null(strstr(buf, "| `http.threads` | `--http-threads` | `GPUPOOL_HTTP_THREADS` |"
                                " integer 1..256 | `8` |"));
    assert_non_null(strstr(buf, "| `scheduler.interval` | `--scheduler-interval` |"
                                " `GPUPOOL_SCHEDULER_INTERVAL` | duration 10ms..1h | `1s` |"));
    assert_non_null(strstr(buf, "| `data_dir` | `--data-dir` | `GPUPOOL_DATA_DIR` | path |"
                                " required |"));
    int rows = 0;
    for (const char *p = buf; (p = strstr(p, "\n| `")); p++) {
        rows++;
    }
    assert_int_equal(rows, 58); /* one per option */
    free(buf);
}

/* The key lines that gp_yaml_to_json_lines adds to the YAML reader. */
static void test_yaml_lines(void **state)
{
    (void)state;
    const char *y = "a: 1\n"
                    "b:\n"
                    "  c: x\n"
                    "  d:\n"
                    "    - e: 1\n"
                    "      f: 2\n";
    json_t *root, *lines;
    gp_diag d;
    assert_int_equal(gp_yaml_to_json_lines(y, strlen(y), &root, &lines, &d), 0);
    assert_int_equal(json_integer_value(json_object_get(lines, "a")), 1);
    assert_int_equal(json_integer_value(json_object_get(lines, "b")), 2);
    assert_int_equal(json_integer_value(json_object_get(lines, "b.c")), 3);
    assert_int_equal(json_integer_value(json_object_get(lines, "b.d[0].f")), 6);
    assert_int_equal(json_object_size(lines), 6);
    json_decref(root);
    json_decref(lines);
    lines = (json_t *)&d; /* must be reset to NULL on failure */
    assert_int_equal(gp_yaml_to_json_lines("a: [1\n", 6, &root, &lines, &d), GP_EPARSE);
    assert_null(root);
    assert_null(lines);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir) || chdir(tmpdir) != 0) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    const char *files[] = {"prec.yaml", "config.yaml", "dur.yaml", "bool.yaml",
                           "cost.yaml", "cost2.yaml",  "dump.yaml"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        unlink(files[i]);
    }
    return chdir("/") == 0 && rmdir(tmpdir) == 0 ? 0 : -1;
}

/* ha.*: defaults, the --advertise-url flag (not derived from the key), its env name, and a
 * renew interval that must be shorter than the lease. */
static void test_ha(void **state)
{
    (void)state;
    gp_ctl_config c;
    expect_ok(ARGS("--data-dir", "/d"), NOENV, &c);
    assert_string_equal(c.ha.advertise_url, "");
    assert_int_equal(c.ha.lease_ttl_ms, 3000);
    assert_int_equal(c.ha.renew_interval_ms, 1000);
    expect_ok(ARGS("--data-dir", "/d", "--advertise-url", "http://10.0.0.5:7070", "--ha-lease-ttl",
                   "5s", "--ha-renew-interval", "500ms"),
              NOENV, &c);
    assert_string_equal(c.ha.advertise_url, "http://10.0.0.5:7070");
    assert_int_equal(c.ha.lease_ttl_ms, 5000);
    assert_int_equal(c.ha.renew_interval_ms, 500);
    expect_ok(ARGS("--data-dir", "/d"), ENV("GPUPOOL_HA_ADVERTISE_URL=https://c1:7443"), &c);
    assert_string_equal(c.ha.advertise_url, "https://c1:7443");
    expect_fail(ARGS("--data-dir", "/d", "--ha-advertise-url", "http://x:1"), NOENV, GP_EINVAL,
                "--ha-advertise-url: unknown flag");
    expect_fail(ARGS("--data-dir", "/d", "--advertise-url", "ftp://x:1"), NOENV, GP_EINVAL,
                "--advertise-url");
    expect_fail(ARGS("--data-dir", "/d", "--ha-renew-interval", "3s"), NOENV, GP_EINVAL,
                "ha.renew_interval: must be shorter than ha.lease_ttl");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_durations_sizes_bools),
        cmocka_unit_test(test_model_cost),
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_help_version),
        cmocka_unit_test(test_yaml_lines),
        cmocka_unit_test(test_ha),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

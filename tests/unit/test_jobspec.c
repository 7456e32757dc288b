/* Job spec parsing: JSON and YAML give the same spec; every bad field is named. */
#include "gpupool/jobspec.h"
#include "gpupool/placement.h"
#include "tests/unit/harness.h"

#include <string.h>

static const char *full_yaml = "name: train-bert\n"
                               "tenant: team-a\n"
                               "queue: research\n"
                               "priority_class: high\n"
                               "replicas: 4\n"
                               "resources:\n"
                               "  gpus: 8\n"
                               "  gpu_models: [A100-80GB, H100-80GB]\n"
                               "  cpu_milli: 64000\n"
                               "  memory_mib: 262144\n"
                               "topology: require-nvlink\n"
                               "preemptible: true\n"
                               "command: [torchrun, train.py]\n"
                               "args: [--epochs, \"3\"]\n"
                               "env: {HF_HOME: /data/hf, SEED: \"7\"}\n"
                               "working_dir: /workspace\n"
                               "max_runtime: 2h\n"
                               "idle_timeout: 30m\n"
                               "idle_utilization: 7.5\n"
                               "restart_policy: on-failure\n"
                               "max_restarts: 3\n";

static const char *full_json =
    "{\"name\": \"train-bert\", \"tenant\": \"team-a\", \"queue\": \"research\","
    " \"priority_class\": \"high\", \"replicas\": 4,"
    " \"resources\": {\"gpus\": 8, \"gpu_models\": [\"A100-80GB\", \"H100-80GB\"],"
    "   \"cpu_milli\": 64000, \"memory_mib\": 262144},"
    " \"topology\": \"require-nvlink\", \"preemptible\": true,"
    " \"command\": [\"torchrun\", \"train.py\"], \"args\": [\"--epochs\", \"3\"],"
    " \"env\": {\"HF_HOME\": \"/data/hf\", \"SEED\": \"7\"}, \"working_dir\": \"/workspace\","
    " \"max_runtime\": 7200, \"idle_timeout\": \"30m\", \"idle_utilization\": 7.5,"
    " \"restart_policy\": \"on-failure\", \"max_restarts\": 3}";

static void check_full(const gp_jobspec *s)
{
    assert_string_equal(s->name, "train-bert");
    assert_string_equal(s->tenant, "team-a");
    assert_string_equal(s->queue, "research");
    assert_string_equal(s->priority_class, "high");
    assert_int_equal(s->replicas, 4);
    assert_int_equal(s->kind, GP_REQ_WHOLE);
    assert_int_equal(s->gpus, 8);
    assert_int_equal(s->ngpu_models, 2);
    assert_string_equal(s->gpu_models[1], "H100-80GB");
    assert_int_equal(s->cpu_milli, 64000);
    assert_int_equal(s->memory_mib, 262144);
    assert_int_equal(s->topology, GP_TOPO_REQUIRE_NVLINK);
    assert_true(s->preemptible);
    assert_string_equal(s->command[0], "torchrun");
    assert_null(s->command[2]);
    assert_string_equal(s->args[1], "3");
    assert_int_equal(s->nenv, 2);
    assert_string_equal(s->working_dir, "/workspace");
    assert_int_equal(s->max_runtime_s, 7200);
    assert_int_equal(s->idle_timeout_s, 1800);
    assert_true(s->idle_utilization == 7.5);
    assert_int_equal(s->restart_policy, GP_RESTART_ON_FAILURE);
    assert_int_equal(s->max_restarts, 3);
}

static void test_same_in_json_and_yaml(void **state)
{
    (void)state;
    gp_jobspec a, b;
    gp_diag d;
    assert_int_equal(gp_jobspec_parse_yaml(full_yaml, strlen(full_yaml), &a, &d), 0);
    assert_int_equal(gp_jobspec_parse_json(full_json, strlen(full_json), &b, &d), 0);
    check_full(&a);
    check_full(&b);
    gp_jobspec_fini(&a);
    gp_jobspec_fini(&b);
}

static void test_defaults_and_kinds(void **state)
{
    (void)state;
    gp_jobspec s;
    gp_diag d;
    const char *y = "name: n1\ncommand: [sleep, \"1\"]\nresources: {gpu_milli: 250, "
                    "cores_percent: 30}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_string_equal(s.queue, "default");
    assert_int_equal(s.replicas, 1);
    assert_int_equal(s.kind, GP_REQ_FRACTION);
    assert_int_equal(s.cores_percent, 30);
    assert_int_equal(s.restart_policy, GP_RESTART_NEVER);
    assert_int_equal(s.max_restarts, 0);
    assert_int_equal(s.gpu_policy, GP_GPU_DEFAULT);
    assert_int_equal(s.idle_timeout_s, 0);
    gp_cluster *c = gp_cluster_new();
    gp_request r;
    gp_jobspec_request(&s, c, &r);
    assert_int_equal(r.kind, GP_REQ_FRACTION);
    assert_int_equal(r.gpu_milli, 250);
    assert_int_equal(gp_request_check(&r, NULL), 0);
    gp_cluster_free(c);
    gp_jobspec_fini(&s);
    y = "name: n2\ncommand: [x]\nresources: {mig_profile: 1g.10gb}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_int_equal(s.kind, GP_REQ_MIG);
    gp_jobspec_fini(&s);
    y = "name: n4\ncommand: [x]\nrestart_policy: always\ngpu_policy: spread\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_int_equal(s.max_restarts, GP_JOB_DEFAULT_RESTARTS); /* a policy alone restarts */
    assert_int_equal(s.gpu_policy, GP_GPU_SPREAD);
    gp_jobspec_fini(&s);
    y = "name: n3\ncommand: [x]\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_int_equal(s.kind, GP_REQ_NONE);
    assert_int_equal(s.nvolumes, 0);
    gp_jobspec_fini(&s);
    /* Volumes in each of their forms. */
    y = "name: n5\ncommand: [x]\nvolumes: [imagenet, \"ckpt:rw\", \"models:ro\",\n"
        "  {name: scratch}, {name: logs, read_only: false}, {name: ref, read_only: true}]\n";
    if (gp_jobspec_parse_yaml(y, strlen(y), &s, &d) != 0) {
        fail_msg("volumes: %s", d.msg);
    }
    assert_int_equal(s.nvolumes, 6);
    static const char *const names[] = {"imagenet", "ckpt", "models", "scratch", "logs", "ref"};
    static const gp_volume_mode modes[] = {GP_VOLUME_DEFAULT, GP_VOLUME_RW, GP_VOLUME_RO,
                                           GP_VOLUME_DEFAULT, GP_VOLUME_RW, GP_VOLUME_RO};
    for (int i = 0; i < 6; i++) {
        assert_string_equal(s.volumes[i].name, names[i]);
        assert_int_equal(s.volumes[i].mode, modes[i]);
    }
    gp_jobspec_fini(&s);
}

/* Each bad input must fail with the field (or position) named in the message. */
static void expect_error(const char *yaml, int code, const char *needle)
{
    gp_jobspec s;
    memset(&s, 0x5a, sizeof(s));
    gp_jobspec before = s;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_jobspec_parse_yaml(yaml, strlen(yaml), &s, &d);
    if (rc != code || !strstr(d.msg, needle)) {
        fail_msg("input:\n%s\nreturned %s \"%s\", expected %s naming \"%s\"", yaml,
                 gp_strerror_name(rc), d.msg, gp_strerror_name(code), needle);
    }
    assert_memory_equal(&s, &before, sizeof(s)); /* untouched on failure */
}

static void test_errors_name_the_field(void **state)
{
    (void)state;
    expect_error("name: a\ncommand: [x]\nreplicas: 5000\n", GP_EINVAL,
                 "replicas: must be between 1 and 4096");
    expect_error("name: a\ncommand: [x]\nresources: {gpu_mili: 5}\n", GP_EINVAL,
                 "resources.gpu_mili: unknown field");
    expect_error("name: a\ncommand: [x]\ncolour: red\n", GP_EINVAL, "colour: unknown field");
    expect_error("command: [x]\n", GP_EINVAL, "name: required");
    expect_error("name: a\n", GP_EINVAL, "command: required");
    expect_error("name: Bad_Name\ncommand: [x]\n", GP_EINVAL, "name:");
    expect_error("name: a\ncommand: []\n", GP_EINVAL, "command:");
    expect_error("name: a\ncommand: [x]\nresources: {gpus: 2, gpu_milli: 300}\n", GP_EINVAL,
                 "resources: ask for one of");
    expect_error("name: a\ncommand: [x]\nresources: {gpus: 0}\n", GP_EINVAL, "resources.gpus");
    expect_error("name: a\ncommand: [x]\nresources: {gpu_milli: 1001}\n", GP_EINVAL,
                 "resources.gpu_milli: must be between 1 and 1000");
    expect_error("name: a\ncommand: [x]\nresources: {mig_profile: big}\n", GP_EINVAL,
                 "resources.mig_profile");
    expect_error("name: a\ncommand: [x]\nresources: {gpus: 1, cores_percent: 50}\n", GP_EINVAL,
                 "resources.cores_percent");
    expect_error("name: a\ncommand: [x]\nresources: {gpus: two}\n", GP_EINVAL,
                 "resources.gpus: must be an integer");
    expect_error("name: a\ncommand: [x]\nenv: {CUDA_VISIBLE_DEVICES: \"0\"}\n", GP_EINVAL,
                 "env.CUDA_VISIBLE_DEVICES: set by gpupool");
    expect_error("name: a\ncommand: [x]\nenv: {GPUPOOL_JOB_ID: \"1\"}\n", GP_EINVAL,
                 "env.GPUPOOL_JOB_ID");
    expect_error("name: a\ncommand: [x]\nenv: {1BAD: x}\n", GP_EINVAL, "env.1BAD");
    expect_error("name: a\ncommand: [x]\nworking_dir: rel/dir\n", GP_EINVAL, "working_dir");
    expect_error("name: a\ncommand: [x]\nmax_runtime: 2 weeks\n", GP_EINVAL, "max_runtime");
    expect_error("name: a\ncommand: [x]\nresources: {gpus: 1}\nidle_utilization: 3\n", GP_EINVAL,
                 "idle_utilization: only with idle_timeout");
    expect_error("name: a\ncommand: [x]\nresources: {gpus: 1}\nidle_timeout: 1m\n"
                 "idle_utilization: 101\n",
                 GP_EINVAL, "idle_utilization");
    expect_error("name: a\ncommand: [x]\nidle_timeout: 1m\n", GP_EINVAL,
                 "idle_timeout: the job asks for no GPU");
    expect_error("name: a\ncommand: [x]\nrestart_policy: sometimes\n", GP_EINVAL,
                 "restart_policy: must be one of never, on-failure, always");
    expect_error("name: a\ncommand: [x]\npreemptible: maybe\n", GP_EINVAL, "preemptible");
    expect_error("name: a\ncommand: [x]\ngpu_policy: clever\n", GP_EINVAL,
                 "gpu_policy: must be one of packing, spread, topology, fragmentation");
    expect_error("- a\n- b\n", GP_EINVAL, "spec: must be an object");
    expect_error("name: a\ncommand: [x]\nvolumes: data\n", GP_EINVAL, "volumes: must be a list");
    expect_error("name: a\ncommand: [x]\nvolumes: [\"d:rx\"]\n", GP_EINVAL,
                 "volumes[0]: the mode after ':' must be ro or rw");
    expect_error("name: a\ncommand: [x]\nvolumes: [Data]\n", GP_EINVAL, "volumes[0]: must be");
    expect_error("name: a\ncommand: [x]\nvolumes: [d, e, d]\n", GP_EINVAL,
                 "volumes[2]: volume d is listed twice");
    expect_error("name: a\ncommand: [x]\nvolumes: [{name: d, mode: ro}]\n", GP_EINVAL,
                 "volumes[0].mode: unknown field");
    expect_error("name: a\ncommand: [x]\nvolumes: [{read_only: true}]\n", GP_EINVAL,
                 "volumes[0].name: required");
    expect_error("name: a\ncommand: [x]\nvolumes: [{name: d, read_only: yes}]\n", GP_EINVAL,
                 "volumes[0].read_only: must be true or false");
    /* Syntax errors name line and column. */
    expect_error("name: a\ncommand: [x\n", GP_EPARSE, "line ");
    expect_error("name: &x a\ncommand: [*x]\n", GP_EPARSE, "not supported");
    expect_error("name: a\nname: b\ncommand: [x]\n", GP_EPARSE, "duplicate key");
    expect_error("name: a\ncommand: [x]\n---\nname: b\n", GP_EPARSE, "one YAML document");
}

static void test_json_errors(void **state)
{
    (void)state;
    gp_jobspec s;
    gp_diag d;
    const char *j = "{\"name\": \"a\",\n \"command\": [\"x\"], }";
    assert_int_equal(gp_jobspec_parse_json(j, strlen(j), &s, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "line 2"));
    j = "{\"name\": \"a\", \"name\": \"b\", \"command\": [\"x\"]}";
    assert_int_equal(gp_jobspec_parse_json(j, strlen(j), &s, &d), GP_EPARSE);
    j = "{\"name\": \"a\", \"command\": [\"x\"], \"replicas\": 0}";
    assert_int_equal(gp_jobspec_parse_json(j, strlen(j), &s, &d), GP_EINVAL);
    assert_string_equal(d.msg, "replicas: must be between 1 and 4096");
}

/* The launchers' variables are gpupool's in a gang, the job's own otherwise. */
static void test_gang_env(void **state)
{
    (void)state;
    expect_error("name: a\ncommand: [x]\nreplicas: 2\nenv: {PET_NPROC_PER_NODE: \"1\"}\n",
                 GP_EINVAL, "env.PET_NPROC_PER_NODE: set by gpupool for a job of more than one");
    expect_error("name: a\ncommand: [x]\nreplicas: 2\nenv: {WORLD_SIZE: \"2\"}\n", GP_EINVAL,
                 "env.WORLD_SIZE");
    gp_jobspec s;
    gp_diag d;
    const char *y = "name: a\ncommand: [x]\nenv: {WORLD_SIZE: \"2\", PET_NNODES: \"1\"}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_int_equal(s.nenv, 2);
    gp_jobspec_fini(&s);
}

/* image (kept in its normal form), its pull policy (Kubernetes' default) and the network. */
static void test_image(void **state)
{
    (void)state;
    gp_jobspec s;
    gp_diag d;
    const char *y = "name: a\ncommand: [x]\nimage: 127.0.0.1:5000/team/pytorch:2.1\n"
                    "resources: {gpus: 1}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_string_equal(s.image, "127.0.0.1:5000/team/pytorch:2.1");
    assert_int_equal(s.image_pull_policy, GP_PULL_IF_NOT_PRESENT);
    assert_int_equal(s.network, GP_NETWORK_HOST);
    gp_cluster *c = gp_cluster_new();
    gp_request r;
    gp_jobspec_request(&s, c, &r);
    assert_int_equal(r.needs, GP_CAP_IMAGES);
    gp_jobspec_fini(&s);
    assert_null(s.image);
    const char *j = "{\"name\": \"a\", \"command\": [\"x\"], \"image\": \"ubuntu\","
                    " \"network\": \"private\"}";
    assert_int_equal(gp_jobspec_parse_json(j, strlen(j), &s, &d), 0);
    assert_string_equal(s.image, "docker.io/library/ubuntu:latest");
    assert_int_equal(s.image_pull_policy, GP_PULL_ALWAYS);
    assert_int_equal(s.network, GP_NETWORK_PRIVATE);
    assert_string_equal(gp_network_name(s.network), "private");
    gp_jobspec_fini(&s);
    y = "name: a\ncommand: [x]\nimage_pull_policy: Never\nimage: r.io/x:latest\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_int_equal(s.image_pull_policy, GP_PULL_NEVER); /* given: whatever the order */
    gp_jobspec_fini(&s);
    y = "name: a\ncommand: [x]\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_null(s.image);
    assert_int_equal(s.image_pull_policy, GP_PULL_DEFAULT);
    gp_jobspec_request(&s, c, &r);
    assert_int_equal(r.needs, 0);
    gp_jobspec_fini(&s);
    gp_cluster_free(c);

    expect_error("name: a\ncommand: [x]\nimage: Team/img\n", GP_EINVAL,
                 "image: path component \"Team\" must be lower-case");
    expect_error("name: a\ncommand: [x]\nimage: \"r.io:99999/x\"\n", GP_EINVAL, "image: registry");
    expect_error("name: a\ncommand: [x]\nimage: \"x@sha256:12\"\n", GP_EINVAL, "image: the digest");
    expect_error("name: a\ncommand: [x]\nimage: 5\n", GP_EINVAL, "image: must be a string");
    expect_error("name: a\ncommand: [x]\nimage_pull_policy: Always\n", GP_EINVAL,
                 "image_pull_policy: only with image");
    expect_error("name: a\ncommand: [x]\nimage: x\nimage_pull_policy: always\n", GP_EINVAL,
                 "image_pull_policy: must be one of Always, IfNotPresent, Never");
    expect_error("name: a\ncommand: [x]\nnetwork: none\n", GP_EINVAL,
                 "network: must be one of host, private");
}

/* privileged: parsed for every kind, in the canonical form only when true, compared. */
static void test_privileged(void **state)
{
    (void)state;
    gp_jobspec s, t;
    gp_diag d;
    const char *y = "name: a\ncommand: [x]\nimage: r.io/x:1\nprivileged: true\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_true(s.privileged);
    json_t *o = gp_jobspec_to_json(&s);
    assert_true(json_is_true(json_object_get(o, "privileged")));
    char *text = json_dumps(o, JSON_COMPACT);
    assert_int_equal(gp_jobspec_parse_json(text, strlen(text), &t, &d), 0);
    assert_true(gp_jobspec_equal(&s, &t));
    t.privileged = false;
    assert_false(gp_jobspec_equal(&s, &t));
    free(text);
    json_decref(o);
    gp_jobspec_fini(&s);
    gp_jobspec_fini(&t);
    y = "name: nb\nkind: notebook\nport: 8888\nimage: r.io/x:1\nprivileged: true\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_true(s.privileged);
    gp_jobspec_fini(&s);
    y = "name: a\ncommand: [x]\nprivileged: false\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_false(s.privileged);
    o = gp_jobspec_to_json(&s); /* false: left out, so every other job's form is unchanged */
    assert_null(json_object_get(o, "privileged"));
    json_decref(o);
    gp_jobspec_fini(&s);
    expect_error("name: a\ncommand: [x]\nprivileged: \"yes\"\n", GP_EINVAL,
                 "privileged: must be true or false");
    expect_error("{\"name\": \"a\", \"command\": [\"x\"], \"privileged\": 1}", GP_EINVAL,
                 "privileged: must be true or false");
}

/* Secret env values: {value, secret}, the stored sealed form, and what is refused. */
static void test_secret_env(void **state)
{
    (void)state;
    gp_jobspec s;
    gp_diag d;
    const char *y = "name: a\ncommand: [x]\nenv: {P: plain, S: {value: pw, secret: true},\n"
                    "  F: {value: v, secret: false}, Q: {value: q},\n"
                    "  Z: {secret: true, sealed: gps1.AAAA}}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_int_equal(s.nenv, 5);
    for (int i = 0; i < s.nenv; i++) {
        const gp_env_var *v = &s.env[i];
        bool secret = strcmp(v->name, "S") == 0 || strcmp(v->name, "Z") == 0;
        assert_int_equal(v->secret, secret);
        assert_int_equal(v->sealed, strcmp(v->name, "Z") == 0);
        if (strcmp(v->name, "S") == 0) {
            assert_string_equal(v->value, "pw");
        } else if (strcmp(v->name, "Z") == 0) {
            assert_string_equal(v->value, "gps1.AAAA");
        }
    }
    gp_jobspec_fini(&s);
    expect_error("name: a\ncommand: [x]\nenv: {S: {secret: true}}\n", GP_EINVAL,
                 "env.S.value: required");
    expect_error("name: a\ncommand: [x]\nenv: {S: {value: 3, secret: true}}\n", GP_EINVAL,
                 "env.S.value: must be a string");
    expect_error("name: a\ncommand: [x]\nenv: {S: {value: v, secret: 1}}\n", GP_EINVAL,
                 "env.S.secret: must be true or false");
    expect_error("name: a\ncommand: [x]\nenv: {S: {value: v, shown: no}}\n", GP_EINVAL,
                 "env.S.shown: unknown field");
    expect_error("name: a\ncommand: [x]\nenv: {S: {value: v, sealed: x, secret: true}}\n",
                 GP_EINVAL, "env.S.value: required");
    expect_error("name: a\ncommand: [x]\nenv: {S: {sealed: x}}\n", GP_EINVAL,
                 "env.S.sealed: only with secret: true");
    expect_error("name: a\ncommand: [x]\nenv: {S: [x]}\n", GP_EINVAL,
                 "env.S: must be a string or {value, secret}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_env),
        cmocka_unit_test(test_same_in_json_and_yaml),
        cmocka_unit_test(test_defaults_and_kinds),
        cmocka_unit_test(test_errors_name_the_field),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_gang_env),
        cmocka_unit_test(test_image),
        cmocka_unit_test(test_privileged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

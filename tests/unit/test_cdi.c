/* The CDI spec of the node's GPUs (src/agent/cdi.c): one device per GPU and per MIG device with
 * exactly their nodes, the nodes and driver files every device shares, devices that cannot be
 * named left out with the reason; the MIG capability table; the podman options that give a
 * container its devices (src/agent/cdi_podman.c); and which files are the driver's
 * (src/agent/cdi_driver.c). */
#include "agent/cdi.h"
#include "agent/cdi_driver.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver's table for GPUs 0..1 as the driver writes it: 9 minors per GPU instance (its own
 * and 8 compute instances'), 15 GPU instances per GPU, after config (1) and monitor (2). */
static char *mig_minors_text(void)
{
    static char text[1 << 16];
    size_t len = (size_t)snprintf(text, sizeof(text), "config 1\nmonitor 2\n");
    for (int gpu = 0; gpu < 2; gpu++) {
        for (int gi = 0; gi < 15; gi++) {
            int base = 3 + gpu * 135 + gi * 9;
            len += (size_t)snprintf(text + len, sizeof(text) - len, "gpu%d/gi%d/access %d\n", gpu,
                                    gi, base);
            for (int ci = 0; ci < 8; ci++) {
                len += (size_t)snprintf(text + len, sizeof(text) - len,
                                        "gpu%d/gi%d/ci%d/access %d\n", gpu, gi, ci, base + 1 + ci);
            }
        }
    }
    return text;
}

static void add_gpu(gp_nvml_inv *inv, const char *uuid, int minor)
{
    gp_nvml_gpu *g = &inv->gpus[inv->ngpus];
    memset(g, 0, sizeof(*g));
    g->index = inv->ngpus++;
    snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
    g->minor = minor;
    g->mig_mode = -1;
}

static void add_mig(gp_nvml_gpu *g, const char *uuid, int gi, int ci)
{
    gp_nvml_mig *m = &g->mig[g->nmig++];
    memset(m, 0, sizeof(*m));
    snprintf(m->uuid, sizeof(m->uuid), "%s", uuid);
    m->gpu_instance = gi;
    m->compute_instance = ci;
    g->mig_mode = 1;
}

static json_t *device_named(json_t *spec, const char *name)
{
    size_t i;
    json_t *dev;
    json_array_foreach(json_object_get(spec, "devices"), i, dev)
    {
        if (strcmp(json_string_value(json_object_get(dev, "name")), name) == 0) {
            return dev;
        }
    }
    return NULL;
}

/* The device's nodes as "path=hostPath" joined by spaces. */
static const char *nodes_of(json_t *edits_owner)
{
    static char out[2048];
    out[0] = '\0';
    size_t i;
    json_t *n;
    json_array_foreach(
        json_object_get(json_object_get(edits_owner, "containerEdits"), "deviceNodes"), i, n)
    {
        size_t len = strlen(out);
        snprintf(out + len, sizeof(out) - len, "%s%s=%s", len ? " " : "",
                 json_string_value(json_object_get(n, "path")),
                 json_string_value(json_object_get(n, "hostPath")));
    }
    return out;
}

/* The skipped list as "device: reason" lines. */
static const char *skipped_text(json_t *skipped)
{
    static char out[4096];
    out[0] = '\0';
    size_t i;
    json_t *s;
    json_array_foreach(skipped, i, s)
    {
        size_t len = strlen(out);
        snprintf(out + len, sizeof(out) - len, "%s: %s\n",
                 json_string_value(json_object_get(s, "device")),
                 json_string_value(json_object_get(s, "reason")));
    }
    return out;
}

static json_t *make(const gp_nvml_inv *inv, const gp_cdi_host *host, json_t **skipped)
{
    json_t *spec = NULL;
    gp_diag d;
    int rc = gp_cdi_spec(inv, host, &spec, skipped, &d);
    if (rc != 0) {
        fail_msg("gp_cdi_spec: %s \"%s\"", gp_strerror_name(rc), d.msg);
    }
    return spec;
}

/* Whole GPUs: one device per UUID with its own node under dev_root; the shared edits. */
static void test_gpus(void **state)
{
    (void)state;
    static gp_nvml_inv inv;
    memset(&inv, 0, sizeof(inv));
    add_gpu(&inv, "GPU-aaaa-0", 0);
    add_gpu(&inv, "GPU-bbbb-1", 3); /* minors need not follow indexes */
    gp_cdi_host host = {"/tmp/fake/dev/", NULL, NULL, 0};
    json_t *skipped = NULL, *spec = make(&inv, &host, &skipped);
    assert_string_equal(json_string_value(json_object_get(spec, "cdiVersion")), "0.5.0");
    assert_string_equal(json_string_value(json_object_get(spec, "kind")), "nvidia.com/gpu");
    assert_int_equal(json_array_size(json_object_get(spec, "devices")), 2);
    assert_string_equal(nodes_of(device_named(spec, "GPU-aaaa-0")),
                        "/dev/nvidia0=/tmp/fake/dev/nvidia0");
    assert_string_equal(nodes_of(device_named(spec, "GPU-bbbb-1")),
                        "/dev/nvidia3=/tmp/fake/dev/nvidia3");
    assert_string_equal(nodes_of(spec), "/dev/nvidiactl=/tmp/fake/dev/nvidiactl "
                                        "/dev/nvidia-uvm=/tmp/fake/dev/nvidia-uvm "
                                        "/dev/nvidia-uvm-tools=/tmp/fake/dev/nvidia-uvm-tools");
    json_t *edits = json_object_get(spec, "containerEdits");
    assert_string_equal(json_string_value(json_array_get(json_object_get(edits, "env"), 0)),
                        "NVIDIA_VISIBLE_DEVICES=void");
    assert_null(json_object_get(edits, "mounts")); /* no driver files: none (the mock) */
    assert_int_equal(json_array_size(skipped), 0);
    json_decref(spec);
    json_decref(skipped);

    /* On a real node the host paths are the container paths. */
    host.dev_root = "/dev";
    spec = make(&inv, &host, NULL);
    assert_string_equal(nodes_of(device_named(spec, "GPU-bbbb-1")), "/dev/nvidia3=/dev/nvidia3");
    json_decref(spec);
}

/* MIG devices: the parent's node and the capability nodes of their GPU and compute instances,
 * from the driver's table; the parent GPU keeps its own device. */
static void test_mig(void **state)
{
    (void)state;
    static gp_nvml_inv inv;
    memset(&inv, 0, sizeof(inv));
    add_gpu(&inv, "GPU-plain-0", 0);
    add_gpu(&inv, "GPU-mig-1", 1);
    add_mig(&inv.gpus[1], "MIG-one", 1, 0);
    add_mig(&inv.gpus[1], "MIG-two", 2, 1);
    gp_cdi_mig_caps caps;
    assert_int_equal(gp_cdi_mig_caps_parse(mig_minors_text(), &caps), 2 * 15 * 9);
    gp_cdi_host host = {"/d", &caps, NULL, 0};
    json_t *skipped = NULL, *spec = make(&inv, &host, &skipped);
    assert_int_equal(json_array_size(json_object_get(spec, "devices")), 4);
    assert_string_equal(nodes_of(device_named(spec, "GPU-mig-1")), "/dev/nvidia1=/d/nvidia1");
    /* gpu1/gi1/access = 3 + 135 + 9 = 147, gpu1/gi1/ci0/access = 148 */
    assert_string_equal(nodes_of(device_named(spec, "MIG-one")),
                        "/dev/nvidia1=/d/nvidia1 "
                        "/dev/nvidia-caps/nvidia-cap147=/d/nvidia-caps/nvidia-cap147 "
                        "/dev/nvidia-caps/nvidia-cap148=/d/nvidia-caps/nvidia-cap148");
    /* gpu1/gi2/access = 156, gpu1/gi2/ci1/access = 158 */
    assert_string_equal(nodes_of(device_named(spec, "MIG-two")),
                        "/dev/nvidia1=/d/nvidia1 "
                        "/dev/nvidia-caps/nvidia-cap156=/d/nvidia-caps/nvidia-cap156 "
                        "/dev/nvidia-caps/nvidia-cap158=/d/nvidia-caps/nvidia-cap158");
    assert_int_equal(json_array_size(skipped), 0);
    json_decref(spec);
    json_decref(skipped);
}

/* A device whose nodes cannot be named is left out, with the reason: never a device with fewer
 * nodes than it needs, nor another's. */
static void test_left_out(void **state)
{
    (void)state;
    static gp_nvml_inv inv;
    memset(&inv, 0, sizeof(inv));
    add_gpu(&inv, "GPU-nominor", -1);
    add_mig(&inv.gpus[0], "MIG-orphan", 1, 0);
    add_gpu(&inv, "GPU-ok", 1);
    add_mig(&inv.gpus[1], "MIG-noids", -1, -1);
    add_mig(&inv.gpus[1], "MIG-notintable", 14, 7);
    add_mig(&inv.gpus[1], "MIG-fine", 3, 0);
    add_gpu(&inv, "GPU-bad,name", 2);
    gp_cdi_mig_caps caps;
    gp_cdi_mig_caps_parse("gpu1/gi3/access 30\ngpu1/gi3/ci0/access 31\n", &caps);
    gp_cdi_host host = {"/dev", &caps, NULL, 0};
    json_t *skipped = NULL, *spec = make(&inv, &host, &skipped);
    assert_string_equal(skipped_text(skipped),
                        "GPU-nominor: NVML does not tell its minor number\n"
                        "MIG-orphan: NVML does not tell its GPU's minor number\n"
                        "MIG-noids: NVML does not tell its GPU instance and compute instance ids\n"
                        "MIG-notintable: its capability minors are not in the MIG capability "
                        "table\n"
                        "GPU 2: its UUID is not a CDI device name\n");
    assert_int_equal(json_array_size(json_object_get(spec, "devices")), 2);
    assert_non_null(device_named(spec, "GPU-ok"));
    assert_string_equal(nodes_of(device_named(spec, "MIG-fine")),
                        "/dev/nvidia1=/dev/nvidia1 "
                        "/dev/nvidia-caps/nvidia-cap30=/dev/nvidia-caps/nvidia-cap30 "
                        "/dev/nvidia-caps/nvidia-cap31=/dev/nvidia-caps/nvidia-cap31");
    json_decref(spec);
    json_decref(skipped);

    /* Without the driver's table no MIG device can be named. */
    host.caps = NULL;
    spec = make(&inv, &host, &skipped);
    assert_null(device_named(spec, "MIG-fine"));
    assert_non_null(strstr(skipped_text(skipped),
                           "MIG-fine: no MIG capability table (/proc/driver/nvidia-caps/"
                           "mig-minors)\n"));
    json_decref(spec);
    json_decref(skipped);
}

/* The driver's files: read-only bind mounts every device shares; bad host descriptions refused. */
static void test_mounts_and_refusals(void **state)
{
    (void)state;
    static gp_nvml_inv inv;
    memset(&inv, 0, sizeof(inv));
    add_gpu(&inv, "GPU-0", 0);
    gp_cdi_mount m[2];
    snprintf(m[0].host, sizeof(m[0].host), "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15");
    snprintf(m[0].container, sizeof(m[0].container), "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    snprintf(m[1].host, sizeof(m[1].host), "/usr/bin/nvidia-smi");
    snprintf(m[1].container, sizeof(m[1].container), "/usr/bin/nvidia-smi");
    gp_cdi_host host = {"/dev", NULL, m, 2};
    json_t *spec = make(&inv, &host, NULL);
    json_t *mounts = json_object_get(json_object_get(spec, "containerEdits"), "mounts");
    assert_int_equal(json_array_size(mounts), 2);
    char *text = json_dumps(json_array_get(mounts, 0), JSON_COMPACT);
    assert_string_equal(text, "{\"hostPath\":\"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\","
                              "\"containerPath\":\"/usr/lib/x86_64-linux-gnu/libcuda.so.1\","
                              "\"options\":[\"ro\",\"nosuid\",\"nodev\",\"bind\"]}");
    free(text);
    /* The devices carry only their nodes: the files come once, with any device. */
    assert_null(
        json_object_get(json_object_get(device_named(spec, "GPU-0"), "containerEdits"), "mounts"));
    json_decref(spec);

    gp_diag d;
    json_t *out = (json_t *)1, *sk = (json_t *)1;
    host.dev_root = "dev";
    assert_int_equal(gp_cdi_spec(&inv, &host, &out, &sk, &d), GP_EINVAL);
    assert_null(out);
    assert_null(sk);
    assert_string_equal(d.msg, "dev_root: an absolute directory, not \"dev\"");
    host.dev_root = "/dev";
    snprintf(m[1].host, sizeof(m[1].host), "nvidia-smi");
    assert_int_equal(gp_cdi_spec(&inv, &host, &out, NULL, &d), GP_EINVAL);
    assert_string_equal(d.msg, "mounts[1]: absolute paths needed, not nvidia-smi -> "
                               "/usr/bin/nvidia-smi");
}

/* The driver's table: its own lines taken, anything else ignored. */
static void test_caps_parse(void **state)
{
    (void)state;
    gp_cdi_mig_caps c;
    assert_int_equal(gp_cdi_mig_caps_parse("config 1\nmonitor 2\n"
                                           "gpu0/gi1/access 12\n"
                                           "gpu0/gi1/ci0/access 13\n"
                                           "gpu31/gi14/ci7/access 4322\n"
                                           "gpu32/gi0/access 9\n"    /* beyond the table */
                                           "gpu0/gi15/access 9\n"    /* likewise */
                                           "gpu0/gi2/ci8/access 9\n" /* likewise */
                                           "gpu0/gi2/access\n"       /* no minor */
                                           "gpu0/gi3/access 5 x\n"   /* trailing text */
                                           "gpux/gi4/access 6\n"     /* no number */
                                           " gpu0/gi5/access 7\n",   /* leading space */
                                           &c),
                     3);
    assert_int_equal(c.gi[0][1], 12);
    assert_int_equal(c.ci[0][1][0], 13);
    assert_int_equal(c.ci[31][14][7], 4322);
    assert_int_equal(c.gi[0][2], -1);
    assert_int_equal(c.gi[0][3], -1);
    assert_int_equal(c.gi[0][5], -1);
    assert_int_equal(c.ci[0][1][1], -1);
    assert_int_equal(gp_cdi_mig_caps_parse("", &c), 0);
    assert_int_equal(gp_cdi_mig_caps_parse("gpu0/gi0/access 3", &c), 1); /* no final newline */
    assert_int_equal(c.gi[0][0], 3);
}

static void expect_args(char **got, const char *const *want)
{
    int i = 0;
    for (; want[i]; i++) {
        assert_non_null(got[i]);
        assert_string_equal(got[i], want[i]);
    }
    assert_null(got[i]);
}

/* podman's options: exactly the replica's devices; the spec directory where podman takes one. */
static void test_podman_args(void **state)
{
    (void)state;
    gp_cdi_args a;
    gp_diag d;
    const char *names[] = {"GPU-aaaa", "MIG-bbbb", "GPU-aaaa"};
    assert_int_equal(gp_cdi_podman_args("/var/lib/gpupool/agent/cdi", names, 3, &a, &d), 0);
    expect_args(a.global, (const char *[]){"--cdi-spec-dir", "/var/lib/gpupool/agent/cdi", NULL});
    expect_args(a.run, (const char *[]){"--device", "nvidia.com/gpu=GPU-aaaa", "--device",
                                        "nvidia.com/gpu=MIG-bbbb", NULL});
    gp_cdi_args_fini(&a);
    assert_null(a.global);

    /* podman 4.3: no --cdi-spec-dir; the spec is where podman reads it already. */
    assert_int_equal(gp_cdi_podman_args(NULL, names, 1, &a, &d), 0);
    expect_args(a.global, (const char *[]){NULL});
    expect_args(a.run, (const char *[]){"--device", "nvidia.com/gpu=GPU-aaaa", NULL});
    gp_cdi_args_fini(&a);

    /* No GPU: nothing to add. */
    assert_int_equal(gp_cdi_podman_args("/s/cdi", NULL, 0, &a, &d), 0);
    expect_args(a.global, (const char *[]){NULL});
    expect_args(a.run, (const char *[]){NULL});
    gp_cdi_args_fini(&a);

    /* A name that could smuggle another device, or an option, is refused. */
    const char *bad[] = {"GPU-aaaa", "GPU-a,nvidia.com/gpu=GPU-b"};
    assert_int_equal(gp_cdi_podman_args(NULL, bad, 2, &a, &d), GP_EINVAL);
    assert_string_equal(d.msg, "gpus[1]: \"GPU-a,nvidia.com/gpu=GPU-b\" is not a CDI device name");
    assert_null(a.global);
    assert_null(a.run);
    const char *opt[] = {"--privileged"};
    assert_int_equal(gp_cdi_podman_args(NULL, opt, 1, &a, &d), GP_EINVAL);
    const char *empty[] = {""};
    assert_int_equal(gp_cdi_podman_args(NULL, empty, 1, &a, &d), GP_EINVAL);
    assert_int_equal(gp_cdi_podman_args("cdi", names, 1, &a, &d), GP_EINVAL);
    assert_string_equal(d.msg, "cdi spec dir: an absolute directory, not \"cdi\"");
    gp_cdi_args_fini(&a);
}

static void test_names(void **state)
{
    (void)state;
    assert_true(gp_cdi_name_valid("GPU-e1a2b3c4-d5e6-4f70-8a91-b2c3d4e5f601"));
    assert_true(gp_cdi_name_valid("MIG-GPU-e1a2b3c4/1/0") == false);
    assert_true(gp_cdi_name_valid("0:1"));
    assert_true(gp_cdi_name_valid("a_b.c"));
    assert_false(gp_cdi_name_valid("GPU-"));
    assert_false(gp_cdi_name_valid("-x"));
    assert_false(gp_cdi_name_valid("a b"));
    assert_false(gp_cdi_name_valid("a=b"));
    assert_false(gp_cdi_name_valid(NULL));
    char longname[300];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_false(gp_cdi_name_valid(longname));
}

static void test_podman_reads(void **state)
{
    (void)state;
    assert_true(gp_cdi_podman_reads("/etc/cdi"));
    assert_true(gp_cdi_podman_reads("/var/run/cdi"));
    assert_true(gp_cdi_podman_reads("/run/cdi/"));
    assert_false(gp_cdi_podman_reads("/var/lib/gpupool/cdi")); /* --cdi-publish DIR */
    assert_false(gp_cdi_podman_reads("/etc/cdi2"));
    assert_false(gp_cdi_podman_reads("/etc"));
    assert_false(gp_cdi_podman_reads(""));
    assert_false(gp_cdi_podman_reads(NULL));
}

static void test_help(void **state)
{
    (void)state;
    assert_true(gp_cdi_podman_takes_spec_dir(
        "Options:\n      --cdi-spec-dir stringArray   Set the CDI spec directory path\n"));
    assert_true(gp_cdi_podman_takes_spec_dir("  --cdi-spec-dir=path\n"));
    /* podman 4.3's help has no such option */
    assert_false(gp_cdi_podman_takes_spec_dir(
        "Options:\n      --cgroup-manager string   Cgroup manager to use\n"));
    assert_false(gp_cdi_podman_takes_spec_dir("  --cdi-spec-directory x\n"));
    assert_false(gp_cdi_podman_takes_spec_dir("  x--cdi-spec-dir y\n"));
    assert_false(gp_cdi_podman_takes_spec_dir(NULL));
}

/* Which files are the driver's: its compute and utility libraries at the running version. */
static void test_driver_files(void **state)
{
    (void)state;
    const char *v = "550.54.15";
    assert_true(gp_cdi_driver_library("libcuda.so.550.54.15", v));
    assert_true(gp_cdi_driver_library("libnvidia-ml.so.550.54.15", v));
    assert_true(gp_cdi_driver_library("libnvidia-pkcs11-openssl3.so.550.54.15", v));
    assert_true(gp_cdi_driver_library("libcudadebugger.so.550.54.15", v));
    assert_false(gp_cdi_driver_library("libcuda.so.535.104.05", v));  /* an older driver */
    assert_false(gp_cdi_driver_library("libcuda.so.550.54.15.1", v)); /* not the version */
    assert_false(gp_cdi_driver_library("libcuda.so.550.54.1", v));
    assert_false(gp_cdi_driver_library("libnvidia-glcore.so.550.54.15", v)); /* graphics */
    assert_false(gp_cdi_driver_library("libcudart.so.550.54.15", v));        /* the toolkit's */
    assert_false(gp_cdi_driver_library("libcuda.so.1", v));
    assert_false(gp_cdi_driver_library("libgpupool-nvml-mock.so", v));
    assert_false(gp_cdi_driver_library("libcuda.so.550.54.15", ""));
    assert_true(gp_cdi_driver_link("libcuda.so.1"));
    assert_true(gp_cdi_driver_link("libcuda.so"));
    assert_true(gp_cdi_driver_link("libnvidia-nvvm.so.4"));
    assert_false(gp_cdi_driver_link("libcudart.so.12"));
    assert_false(gp_cdi_driver_link("libcuda_x.so.1"));
    assert_false(gp_cdi_driver_link("libnvidia-egl-wayland.so.1"));
    assert_string_equal(gp_cdi_basename("/usr/lib/libcuda.so.1"), "libcuda.so.1");
    assert_string_equal(gp_cdi_basename("libcuda.so.1"), "libcuda.so.1");
    int n = 0;
    for (const char *const *p = gp_cdi_driver_programs; *p; p++) {
        n += strcmp(*p, "nvidia-smi") == 0;
    }
    assert_int_equal(n, 1);
}

static void test_ldcache(void **state)
{
    (void)state;
    const char *text =
        "5 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
        "\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n"
        "\tlibz.so.1 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libz.so.1\n"
        "\tgarbage line\n"
        "\tlibx.so (libc6,x86-64, hwcap: 0x0000000000000002) => /opt/lib/libx.so\n"
        "Cache generated by: ldconfig (GNU libc) stable release version 2.36";
    const char *cur = text;
    char name[64], path[128];
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)), 1);
    assert_string_equal(name, "libcuda.so.1");
    assert_string_equal(path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)), 1);
    assert_string_equal(path, "/usr/lib/i386-linux-gnu/libcuda.so.1");
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)), 1);
    assert_string_equal(name, "libz.so.1");
    assert_string_equal(path, "/lib/x86_64-linux-gnu/libz.so.1");
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)), 1);
    assert_string_equal(name, "libx.so");
    assert_string_equal(path, "/opt/lib/libx.so");
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)), 0);
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)), 0);
    /* an entry too long for the buffers is skipped, not cut */
    cur = "\tlibcuda.so.1 (libc6,x86-64) => /a/very/long/path/libcuda.so.1\n";
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, 10), 0);
    cur = NULL;
    assert_int_equal(gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)), 0);
}

static void test_elf(void **state)
{
    (void)state;
    unsigned char x86_64[20] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    unsigned char i386[20] = {0x7f, 'E', 'L', 'F', 1, 1, 1};
    unsigned char arm64[20] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    x86_64[18] = 62;
    i386[18] = 3;
    arm64[18] = 183;
    unsigned char other[20];
    memcpy(other, x86_64, sizeof(other));
    assert_true(gp_cdi_elf_same(x86_64, 20, other, 20));
    assert_false(gp_cdi_elf_same(x86_64, 20, i386, 20));
    assert_false(gp_cdi_elf_same(x86_64, 20, arm64, 20));
    assert_false(gp_cdi_elf_same(x86_64, 19, other, 20)); /* too short */
    other[0] = '#';                                       /* a script */
    assert_false(gp_cdi_elf_same(x86_64, 20, other, 20));
}

static void test_mig_same(void **state)
{
    (void)state;
    static gp_nvml_inv inv;
    memset(&inv, 0, sizeof(inv));
    add_gpu(&inv, "GPU-0", 0);
    add_mig(&inv.gpus[0], "MIG-a", 1, 0);
    add_mig(&inv.gpus[0], "MIG-b", 2, 0);
    gp_nvml_mig_reading now[3];
    memset(now, 0, sizeof(now));
    snprintf(now[0].uuid, sizeof(now[0].uuid), "MIG-b");
    snprintf(now[1].uuid, sizeof(now[1].uuid), "MIG-a");
    assert_true(gp_cdi_mig_same(&inv.gpus[0], now, 2)); /* any order */
    assert_false(gp_cdi_mig_same(&inv.gpus[0], now, 1));
    snprintf(now[1].uuid, sizeof(now[1].uuid), "MIG-c");
    assert_false(gp_cdi_mig_same(&inv.gpus[0], now, 2));
    snprintf(now[1].uuid, sizeof(now[1].uuid), "MIG-a");
    snprintf(now[2].uuid, sizeof(now[2].uuid), "MIG-c");
    assert_false(gp_cdi_mig_same(&inv.gpus[0], now, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpus),         cmocka_unit_test(test_mig),
        cmocka_unit_test(test_left_out),     cmocka_unit_test(test_mounts_and_refusals),
        cmocka_unit_test(test_caps_parse),   cmocka_unit_test(test_podman_args),
        cmocka_unit_test(test_names),        cmocka_unit_test(test_help),
        cmocka_unit_test(test_driver_files), cmocka_unit_test(test_ldcache),
        cmocka_unit_test(test_elf),          cmocka_unit_test(test_mig_same),
        cmocka_unit_test(test_podman_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

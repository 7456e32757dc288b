/*
 * libFuzzer target for what an agent sends the controller: a heartbeat. A real controller runs
 * in this process (its store in a temporary directory, its HTTP server on 127.0.0.1, a node with
 * four GPUs and a job placed on it); each input is POSTed as the node's heartbeat. Any bytes
 * must be answered 200 or a 4xx naming what is wrong, never a crash, a 500 or undefined
 * behaviour (replica reports, GPU readings, XID events and health checks are all acted on).
 */
#define _GNU_SOURCE
#include "base/log.h"
#include "ctl/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gpupoold g;
static gp_ctl_config cfg;
static int port;
static char admin[256], join[256];

/* One request with Connection: close; returns the status (0: no answer). */
static int call(const char *token, const char *method, const char *path, const char *body,
                size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        if (fd >= 0) {
            close(fd);
        }
        return 0;
    }
    char head[1024];
    int n = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     method, path, token, len);
    int status = 0;
    if (write(fd, head, (size_t)n) == n && (len == 0 || write(fd, body, len) == (ssize_t)len)) {
        char buf[4096];
        ssize_t got = read(fd, buf, sizeof(buf) - 1);
        if (got > 12) {
            buf[got] = '\0';
            status = atoi(buf + 9);
        }
        while (got > 0) {
            got = read(fd, buf, sizeof(buf));
        }
    }
    close(fd);
    return status;
}

static void read_token(const char *dir, const char *name, char *out, size_t cap)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(out, (int)cap, f)) {
        fprintf(stderr, "fuzz_heartbeat: cannot read %s\n", path);
        abort();
    }
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
}

static void must(int status, int want, const char *what)
{
    if (status != want) {
        fprintf(stderr, "fuzz_heartbeat: %s: status %d, expected %d\n", what, status, want);
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static char dir[] = "/tmp/gpupool-fuzz-heartbeat-XXXXXX";
    if (!mkdtemp(dir)) {
        abort();
    }
    char *av[] = {
        "gpupoold", "--data-dir",           dir,    "--listen", "127.0.0.1:0", "--api-rate-limit",
        "0",        "--scheduler-interval", "10ms", NULL};
    gp_ctl_cli cli;
    gp_diag d;
    gp_diag_clear(&d);
    gp_log_set_level(GP_LOG_OFF);
    gp_http_server_config hc = {.host = "127.0.0.1", .threads = 2, .max_body = 1 << 20};
    if (gp_ctl_config_load(9, av, NULL, &cfg, &cli, &d) < 0 || ctl_start(&g, &cfg, &d) < 0 ||
        gp_http_server_start(&hc, ctl_http_handle, &g, &g.http, &d) < 0) {
        fprintf(stderr, "fuzz_heartbeat: %s\n", d.msg);
        abort();
    }
    port = gp_http_server_port(g.http);
    read_token(dir, "admin.token", admin, sizeof(admin));
    read_token(dir, "join.token", join, sizeof(join));
    static const char node[] =
        "{\"name\": \"n0\", \"cpu_milli\": 64000, \"memory_mib\": 262144, \"gpus\": ["
        "{\"uuid\": \"GPU-0\", \"model\": \"A100-80GB\", \"memory_mib\": 81920, \"nvlink\": [1]},"
        "{\"uuid\": \"GPU-1\", \"model\": \"A100-80GB\", \"memory_mib\": 81920, \"nvlink\": [0]},"
        "{\"uuid\": \"GPU-2\", \"model\": \"A100-80GB\", \"memory_mib\": 81920},"
        "{\"uuid\": \"GPU-3\", \"model\": \"A100-80GB\", \"memory_mib\": 81920}]}";
    must(call(join, "POST", "/v1/nodes", node, strlen(node)), 201, "register");
    static const char tenant[] = "{\"name\": \"t\"}";
    must(call(admin, "POST", "/v1/tenants", tenant, strlen(tenant)), 201, "tenant");
    static const char job[] = "{\"name\": \"j\", \"tenant\": \"t\", \"command\": [\"x\"], "
                              "\"restart_policy\": \"always\", \"max_restarts\": 1000, "
                              "\"hang_timeout\": 5, \"resources\": {\"gpus\": 2}}";
    must(call(admin, "POST", "/v1/jobs", job, strlen(job)), 201, "job");
    usleep(100000); /* a scheduling cycle places it */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int status = call(admin, "POST", "/v1/nodes/n0/heartbeat", (const char *)data, size);
    if (status != 200 && (status < 400 || status > 499)) {
        fprintf(stderr, "fuzz_heartbeat: a heartbeat was answered %d\n", status);
        abort();
    }
    return 0;
}

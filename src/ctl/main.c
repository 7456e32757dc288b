/*
 * gpupoold: the controller daemon. Loads the configuration, starts the controller and its HTTP
 * listeners, and runs until SIGINT or SIGTERM. Exit codes: 0 after a clean stop, 1 when it
 * cannot start (store, listen address), 2 for a bad configuration or usage, 3
 * (CTL_EXIT_DEPOSED) after it lost the leadership of a shared store (leader.h).
 */
#include "ctl/api.h"
#include "ctl/leader.h"
#include "ctl/server.h"

#include "base/log.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

extern char **environ;

static int listen_on(gpupoold *g, const gp_ctl_addr *addr, const char *cert, const char *key,
                     gp_http_server **out, gp_diag *d)
{
    gp_http_server_config hc = {.host = addr->host,
                                .port = addr->port,
                                .threads = g->cfg->http.threads,
                                .max_body = (size_t)g->cfg->http.max_body,
                                /* each connection's buffer is max_header + 16 KiB, zeroed
                                 * after each request: the configured limit, not 64 KiB */
                                .max_header = (size_t)g->cfg->http.max_header_bytes,
                                .max_header_setting = "http.max_header_bytes",
                                .body_limit = ctl_http_body_limit,
                                .max_large_bodies = (size_t)g->cfg->proxy.max_body_total,
                                .timeout_s = (unsigned)(g->cfg->http.timeout_ms / 1000),
                                .tls_cert_file = cert,
                                .tls_key_file = key};
    int rc = gp_http_server_start(&hc, ctl_http_handle, g, out, d);
    if (rc == 0) {
        /* The first line a supervisor or test waits for; names the port actually bound. */
        GP_LOG(GP_LOG_INFO, "http", "listening=%s:%d tls=%s", addr->host, gp_http_server_port(*out),
               cert ? "on" : "off");
    }
    return rc;
}

int main(int argc, char **argv)
{
    gp_ctl_config cfg;
    gp_ctl_cli cli;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_ctl_config_load(argc, argv, environ, &cfg, &cli, &d) < 0) {
        fprintf(stderr, "gpupoold: %s\n", d.msg);
        fprintf(stderr, "gpupoold: see gpupoold --help\n");
        return 2;
    }
    if (cli.help) {
        gp_ctl_config_usage(stdout);
        return 0;
    }
    if (cli.version) {
        printf("gpupoold %s\n", GP_VERSION);
        return 0;
    }
    if (cli.dump_config) {
        return gp_ctl_config_dump(&cfg, stdout) == 0 ? 0 : 1;
    }
    gp_log_set_level(cfg.log.level);
    gp_log_set_json(cfg.log.format == GP_CTL_LOG_JSON);

    /* Signals are taken by sigwait below; every thread started later inherits the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    static gpupoold g;
    if (ctl_start(&g, &cfg, &d) < 0) {
        fprintf(stderr, "gpupoold: %s\n", d.msg);
        return 1;
    }
    char ui[GP_CTL_PATH_MAX], why[GP_CTL_PATH_MAX + 128];
    if (api_ui_dir(&cfg, ui, sizeof(ui), why, sizeof(why)) == 0) {
        GP_LOG(GP_LOG_INFO, "ui", "dashboard=/ui/ dir=%s", ui);
    } else {
        GP_LOG(GP_LOG_INFO, "ui", "no dashboard at /ui/: %s", why);
    }
    int rc = listen_on(&g, &cfg.listen, NULL, NULL, &g.http, &d);
    if (rc == 0 && cfg.tls.listen.host[0]) {
        rc = listen_on(&g, &cfg.tls.listen, cfg.tls.cert, cfg.tls.key, &g.https, &d);
    }
    if (rc < 0) {
        fprintf(stderr, "gpupoold: %s\n", d.msg);
        gp_http_server_stop(g.http);
        ctl_stop(&g);
        return 1;
    }
    int sig = 0;
    sigwait(&set, &sig);
    bool deposed = ctl_deposed(&g); /* the election thread signalled: it lost the lease */
    if (!deposed) {
        GP_LOG(GP_LOG_INFO, "ctl", "signal=%s stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    }
    gp_http_server_stop(g.https);
    gp_http_server_stop(g.http);
    ctl_stop(&g);
    if (deposed) {
        GP_LOG(GP_LOG_ERROR, "ctl", "exiting with status %d: no longer the leader",
               CTL_EXIT_DEPOSED);
        return CTL_EXIT_DEPOSED;
    }
    return 0;
}

/*
 * The transport of each attempt of the HTTP client in the gpupool program
 * (http_client_impl.h): libevent's evhttp for plain http:// URLs, libcurl for https:// (TLS and
 * its CA checks), for a method evhttp does not know, and for plain http:// when a proxy is set
 * in the environment (http_proxy, all_proxy, ALL_PROXY: libcurl honours them and no_proxy, as it
 * did for every URL before). libcurl's global state is set up when it is first picked, so a
 * command that talks plain HTTP never touches it; the program calls the HTTP client from one
 * thread only, which is what makes that late set-up safe.
 */
#include "net/http_client_impl.h"

#include <stdlib.h>

static int curl_ready; /* gp__http_curl_global_init done (process state, like libcurl's own) */

static int proxy_set(void)
{
    static const char *const vars[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            return 1;
        }
    }
    return 0;
}

const gp_http_transport *gp__http_transport_for(const char *base, const char *method)
{
    if (gp__http_ev_handles(base, method) && !proxy_set()) {
        return &gp__http_ev;
    }
    if (!curl_ready) {
        /* On failure curl_easy_init retries it and the attempt reports it. */
        curl_ready = gp__http_curl_global_init() == 0;
    }
    return &gp__http_curl;
}

int gp__http_transports_init(void)
{
    return 0;
}

void gp__http_transports_cleanup(void)
{
    if (curl_ready) {
        gp__http_curl_global_cleanup();
        curl_ready = 0;
    }
}

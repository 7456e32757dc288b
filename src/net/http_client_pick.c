/*
 * The transport of every attempt of the HTTP client in libgpnet: libcurl, for http:// and
 * https:// alike, its global state set up by gp_http_client_global_init() before any thread
 * starts (http_client_impl.h; the gpupool program links http_client_pick_ev.c instead).
 */
#include "net/http_client_impl.h"

const gp_http_transport *gp__http_transport_for(const char *base, const char *method)
{
    (void)base;
    (void)method;
    return &gp__http_curl;
}

int gp__http_transports_init(void)
{
    return gp__http_curl_global_init();
}

void gp__http_transports_cleanup(void)
{
    gp__http_curl_global_cleanup();
}

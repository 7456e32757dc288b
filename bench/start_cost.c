/*
 * An empty program, for what starting one costs (bench/slurm.sh): built as start_curl, linked
 * with libcurl (and so every library Debian's libcurl needs), as start_evhttp, linked with
 * jansson and libevent's evhttp (libevent_core, libevent_extra), as gpupool is, and as
 * start_plain, linked with jansson only. It takes the address of one function of each library,
 * so that the library is needed and its symbol bound at start, and calls nothing: the measure is
 * the loading alone.
 */
#ifdef GP_START_CURL
#include <curl/curl.h>
static char *(*volatile fn)(void) = curl_version;
#elif defined(GP_START_EVHTTP)
#include <event2/event.h>
#include <event2/http.h>
#include <jansson.h>
static json_t *(*volatile fn)(void) = json_object;
static struct event_base *(*volatile fn_core)(void) = event_base_new;
static struct evhttp_request *(*volatile fn_extra)(void (*)(struct evhttp_request *, void *),
                                                   void *) = evhttp_request_new;
#else
#include <jansson.h>
static json_t *(*volatile fn)(void) = json_object;
#endif

int main(void)
{
#ifdef GP_START_EVHTTP
    return fn && fn_core && fn_extra ? 0 : 1;
#else
    return fn ? 0 : 1;
#endif
}

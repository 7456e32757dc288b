/*
 * libcurl, loaded by the first call into it (lazylib.h): https:// pools, and plain http:// ones
 * when a proxy is set (src/net/http_client_pick_ev.c). One row per function the program uses
 * (src/net/http_client_curl.c); curl_easy_setopt and curl_easy_getinfo take a variable argument
 * and are written out: setopt passes it on by the type its option number says (libcurl's own
 * rule: long, object pointer, function pointer, curl_off_t, blob), getinfo always a pointer.
 */
#define CURL_DISABLE_TYPECHECK /* the forwarders below define the functions themselves */
#pragma GCC visibility push(hidden)
#include <curl/curl.h>
#pragma GCC visibility pop

#include "cli/lazylib.h"

#include <stdarg.h>
#include <string.h>

#ifndef GP_CURL_SONAME
#error "GP_CURL_SONAME (the soname of libcurl, e.g. libcurl.so.4) must be defined"
#endif

static gp_cli_lazylib curl = {.soname = GP_CURL_SONAME};

#pragma GCC visibility push(hidden)

GP_CLI_LAZY_FN(curl, curl_global_init, CURLcode, (long flags), (flags), CURLE_FAILED_INIT)
GP_CLI_LAZY_VOID(curl, curl_global_cleanup, (void), ())
GP_CLI_LAZY_FN(curl, curl_easy_init, CURL *, (void), (), NULL)
GP_CLI_LAZY_VOID(curl, curl_easy_cleanup, (CURL * h), (h))
GP_CLI_LAZY_VOID(curl, curl_easy_reset, (CURL * h), (h))
GP_CLI_LAZY_FN(curl, curl_easy_perform, CURLcode, (CURL * h), (h), CURLE_FAILED_INIT)
GP_CLI_LAZY_FN(curl, curl_easy_strerror, const char *, (CURLcode code), (code),
               "libcurl could not be loaded")
GP_CLI_LAZY_FN(curl, curl_slist_append, struct curl_slist *,
               (struct curl_slist * list, const char *s), (list, s), NULL)
GP_CLI_LAZY_VOID(curl, curl_slist_free_all, (struct curl_slist * list), (list))

typedef void (*any_fn)(void);

CURLcode curl_easy_setopt(CURL *h, CURLoption option, ...)
{
    static CURLcode (*fn)(CURL *, CURLoption, ...);
    if (!fn) {
        void *p = gp_cli_lazy_sym(&curl, "curl_easy_setopt");
        if (!p) {
            return CURLE_FAILED_INIT;
        }
        memcpy(&fn, &p, sizeof(p));
    }
    va_list ap;
    va_start(ap, option);
    CURLcode rc;
    if (option < CURLOPTTYPE_OBJECTPOINT) {
        rc = fn(h, option, va_arg(ap, long));
    } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
        rc = fn(h, option, va_arg(ap, void *));
    } else if (option < CURLOPTTYPE_OFF_T) {
        rc = fn(h, option, va_arg(ap, any_fn));
    } else if (option < CURLOPTTYPE_BLOB) {
        rc = fn(h, option, va_arg(ap, curl_off_t));
    } else {
        rc = fn(h, option, va_arg(ap, void *));
    }
    va_end(ap);
    return rc;
}

CURLcode curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
    static CURLcode (*fn)(CURL *, CURLINFO, ...);
    if (!fn) {
        void *p = gp_cli_lazy_sym(&curl, "curl_easy_getinfo");
        if (!p) {
            return CURLE_FAILED_INIT;
        }
        memcpy(&fn, &p, sizeof(p));
    }
    va_list ap;
    va_start(ap, info);
    CURLcode rc = fn(h, info, va_arg(ap, void *));
    va_end(ap);
    return rc;
}

#pragma GCC visibility pop

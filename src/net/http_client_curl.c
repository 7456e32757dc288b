/*
 * The libcurl transport of the HTTP client (http_client_impl.h): any http:// or https:// URL,
 * TLS with the system's CA store or a CA file. Its per-client state is one easy handle, made by
 * the first attempt; each attempt resets the handle's options (curl_easy_reset keeps live
 * connections, the DNS cache and TLS sessions) and sets them all again, so nothing from one
 * call's method or body leaks into the next while the connection is still reused.
 */
#include "net/http_client_impl.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct resp_buf {
    char *data;
    size_t len, cap;
    int too_big;
} resp_buf;

int gp__http_curl_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : GP_EIO;
}

void gp__http_curl_global_cleanup(void)
{
    curl_global_cleanup();
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    resp_buf *b = userdata;
    size_t n = size * nmemb;
    if (n > GP_HTTP_RESP_MAX - b->len) {
        b->too_big = 1;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (!p) {
            return 0;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

/* The request's headers as a curl list, with "Expect:" (no waiting for 100 Continue before
 * larger bodies: a round trip). NULL on allocation failure. */
static struct curl_slist *curl_headers(const char *const *headers)
{
    struct curl_slist *list = curl_slist_append(NULL, "Expect:"), *next;
    for (size_t i = 0; list && headers && headers[i]; i++) {
        if (!(next = curl_slist_append(list, headers[i]))) {
            curl_slist_free_all(list);
            return NULL;
        }
        list = next;
    }
    return list;
}

static void set_method(CURL *h, const char *method, const char *body, size_t len)
{
    int sends_body = body || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
                     strcmp(method, "PATCH") == 0;
    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (sends_body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
        if (strcmp(method, "POST") != 0) {
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        }
    } else if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
}

static int transport_error(CURL *h, const char *base, CURLcode cc, const char *method,
                           const char *url, const char *errbuf, const resp_buf *b, gp_diag *d)
{
    if (cc == CURLE_COULDNT_CONNECT) {
        long os_errno = 0;
        curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
        return gp_diag_set(d, GP_EIO, "connect to %s: %s", base,
                           os_errno ? strerror((int)os_errno)
                                    : (errbuf[0] ? errbuf : curl_easy_strerror(cc)));
    }
    if (b->too_big) {
        return gp_diag_set(d, GP_EIO, "%s %s: response larger than %zu bytes", method, url,
                           GP_HTTP_RESP_MAX);
    }
    return gp_diag_set(d, GP_EIO, "%s %s: %s", method, url,
                       errbuf[0] ? errbuf : curl_easy_strerror(cc));
}

/* Whether a failed transfer may have reached the server's handler: nothing of the request was
 * sent when the connection (or its TLS handshake) never came up. */
static gp_servers_outcome failure_outcome(CURL *h, CURLcode cc)
{
    long sent = 0;
    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
        cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_PEER_FAILED_VERIFICATION) {
        return GP_SERVERS_UNSENT;
    }
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
    return sent > 0 ? GP_SERVERS_MAYBE_SENT : GP_SERVERS_UNSENT;
}

static void set_options(CURL *h, const char *url, const gp_http_req *rq, struct curl_slist *hl,
                        char *errbuf, resp_buf *b)
{
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, rq->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, rq->connect_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    if (rq->ca_file) {
        curl_easy_setopt(h, CURLOPT_CAINFO, rq->ca_file);
    }
    set_method(h, rq->method, rq->body, rq->len);
}

static int curl_attempt(void **state, const char *base, const gp_http_req *rq, gp_http_resp *out,
                        gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    if (!*state && !(*state = curl_easy_init())) {
        return gp_diag_set(d, GP_ENOMEM, "http client: cannot start libcurl");
    }
    CURL *h = *state;
    size_t n = strlen(base) + strlen(rq->path) + 1;
    char *url = malloc(n);
    struct curl_slist *hl = curl_headers(rq->headers);
    if (!url || !hl) {
        free(url);
        curl_slist_free_all(hl);
        return gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    snprintf(url, n, "%s%s", base, rq->path);
    char errbuf[CURL_ERROR_SIZE] = "";
    resp_buf b = {0};
    set_options(h, url, rq, hl, errbuf, &b);

    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    char *loc = NULL;
    if (cc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
    }
    int rc = 0;
    if (cc != CURLE_OK) {
        out->outcome = b.too_big ? GP_SERVERS_ANSWER : failure_outcome(h, cc);
        rc = transport_error(h, base, cc, rq->method, url, errbuf, &b, d);
        free(b.data);
        b.data = NULL;
    } else if ((!b.data && !(b.data = calloc(1, 1))) || (loc && !(out->location = strdup(loc)))) {
        free(b.data);
        b.data = NULL;
        rc = gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    /* The handle must not keep pointers to what is freed here. */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
    curl_slist_free_all(hl);
    out->status = (int)code;
    out->body = b.data;
    out->len = b.data ? b.len : 0;
    free(url);
    return rc;
}

static void curl_close(void *state)
{
    if (state) {
        curl_easy_cleanup(state);
    }
}

const gp_http_transport gp__http_curl = {"libcurl", 0, curl_attempt, curl_close};

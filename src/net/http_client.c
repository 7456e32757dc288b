/*
 * HTTP client over libcurl. Each call resets the easy handle's options (curl_easy_reset keeps
 * live connections, the DNS cache and TLS sessions) and sets them all again, so nothing from one
 * call's method or body leaks into the next while the connection is still reused.
 */
#include "net/http_client.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A response larger than this is refused rather than exhausting memory. */
#define RESP_MAX ((size_t)1 << 30)

struct gp_http_client {
    CURL *h;
    char *base;    /* without trailing '/' */
    char *auth;    /* "Authorization: Bearer TOKEN" or NULL */
    char *ca_file; /* or NULL: the system's store */
    long timeout_ms, connect_ms;
};

typedef struct resp_buf {
    char *data;
    size_t len, cap;
    int too_big;
} resp_buf;

int gp_http_client_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : GP_EIO;
}

void gp_http_client_global_cleanup(void)
{
    curl_global_cleanup();
}

int gp_http_client_new(const char *base_url, const char *token, gp_http_client **out, gp_diag *d)
{
    *out = NULL;
    if (!base_url ||
        (strncasecmp(base_url, "http://", 7) != 0 && strncasecmp(base_url, "https://", 8) != 0)) {
        return gp_diag_set(d, GP_EINVAL, "url %s: must start with http:// or https://",
                           base_url ? base_url : "(null)");
    }
    if (token && (!*token || strpbrk(token, "\r\n"))) {
        return gp_diag_set(d, GP_EINVAL, "token: must be non-empty, one line");
    }
    gp_http_client *c = calloc(1, sizeof(*c));
    if (!c) {
        return gp_diag_set(d, GP_ENOMEM, "http client: out of memory");
    }
    c->timeout_ms = 30000;
    c->connect_ms = 10000;
    c->base = strdup(base_url);
    c->h = curl_easy_init();
    if (token) {
        size_t n = strlen(token) + sizeof("Authorization: Bearer ");
        c->auth = malloc(n);
        if (c->auth) {
            snprintf(c->auth, n, "Authorization: Bearer %s", token);
        }
    }
    if (!c->base || !c->h || (token && !c->auth)) {
        gp_http_client_free(c);
        return gp_diag_set(d, GP_ENOMEM, "http client: out of memory");
    }
    size_t n = strlen(c->base);
    while (n > 0 && c->base[n - 1] == '/') {
        c->base[--n] = '\0';
    }
    *out = c;
    return 0;
}

void gp_http_client_free(gp_http_client *c)
{
    if (!c) {
        return;
    }
    if (c->h) {
        curl_easy_cleanup(c->h);
    }
    free(c->base);
    free(c->auth);
    free(c->ca_file);
    free(c);
}

int gp_http_client_set_ca_file(gp_http_client *c, const char *path)
{
    char *p = NULL;
    if (path && !(p = strdup(path))) {
        return GP_ENOMEM;
    }
    free(c->ca_file);
    c->ca_file = p;
    return 0;
}

void gp_http_client_set_timeout(gp_http_client *c, long timeout_ms, long connect_ms)
{
    c->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
    c->connect_ms = connect_ms < 0 ? 0 : connect_ms;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    resp_buf *b = userdata;
    size_t n = size * nmemb;
    if (n > RESP_MAX - b->len) {
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

/* Builds the header list; NULL with *rc set on failure. */
static struct curl_slist *build_headers(const gp_http_client *c, const char *body,
                                        const char *const *extra, int *rc)
{
    struct curl_slist *list = NULL, *next;
    int has_type = 0;
    *rc = 0;
    for (size_t i = 0; extra && extra[i]; i++) {
        if (strpbrk(extra[i], "\r\n") || !strchr(extra[i], ':')) {
            *rc = GP_EINVAL;
            break;
        }
        has_type |= strncasecmp(extra[i], "Content-Type:", 13) == 0;
        if (!(next = curl_slist_append(list, extra[i]))) {
            *rc = GP_ENOMEM;
            break;
        }
        list = next;
    }
    /* "Expect:" stops curl from waiting for 100 Continue before larger bodies: a round trip. */
    const char *fixed[] = {"Expect:", c->auth,
                           body && !has_type ? "Content-Type: application/json" : NULL};
    for (size_t i = 0; *rc == 0 && i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (fixed[i] && !(next = curl_slist_append(list, fixed[i]))) {
            *rc = GP_ENOMEM;
        } else if (fixed[i]) {
            list = next;
        }
    }
    if (*rc != 0) {
        curl_slist_free_all(list);
        return NULL;
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

static int transport_error(const gp_http_client *c, CURLcode cc, const char *method,
                           const char *url, const char *errbuf, const resp_buf *b, gp_diag *d)
{
    if (cc == CURLE_COULDNT_CONNECT) {
        long os_errno = 0;
        curl_easy_getinfo(c->h, CURLINFO_OS_ERRNO, &os_errno);
        return gp_diag_set(d, GP_EIO, "connect to %s: %s", c->base,
                           os_errno ? strerror((int)os_errno)
                                    : (errbuf[0] ? errbuf : curl_easy_strerror(cc)));
    }
    if (b->too_big) {
        return gp_diag_set(d, GP_EIO, "%s %s: response larger than %zu bytes", method, url,
                           RESP_MAX);
    }
    return gp_diag_set(d, GP_EIO, "%s %s: %s", method, url,
                       errbuf[0] ? errbuf : curl_easy_strerror(cc));
}

int gp_http_call(gp_http_client *c, const char *method, const char *path_and_query,
                 const char *body, size_t len, const char *const *extra_headers, int *status,
                 char **resp_body, size_t *resp_len, gp_diag *d)
{
    *resp_body = NULL;
    if (!method || !*method || strpbrk(method, " \r\n") || !path_and_query ||
        strpbrk(path_and_query, " \r\n")) {
        return gp_diag_set(d, GP_EINVAL, "http call: bad method or path");
    }
    size_t n = strlen(c->base) + strlen(path_and_query) + 1;
    char *url = malloc(n);
    int rc = 0;
    struct curl_slist *headers = url ? build_headers(c, body, extra_headers, &rc) : NULL;
    if (!url || rc != 0) {
        free(url);
        return rc == GP_EINVAL ? gp_diag_set(d, rc, "http call: bad extra header")
                               : gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    snprintf(url, n, "%s%s", c->base, path_and_query);

    char errbuf[CURL_ERROR_SIZE] = "";
    resp_buf b = {0};
    CURL *h = c->h;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    if (c->ca_file) {
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    }
    set_method(h, method, body, len);

    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    if (cc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    }
    /* The handle must not keep pointers to what is freed below. */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_slist_free_all(headers);
    if (cc != CURLE_OK) {
        rc = transport_error(c, cc, method, url, errbuf, &b, d);
        free(url);
        free(b.data);
        return rc;
    }
    free(url);
    if (!b.data && !(b.data = calloc(1, 1))) {
        return gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    *status = (int)code;
    *resp_body = b.data;
    if (resp_len) {
        *resp_len = b.len;
    }
    return 0;
}

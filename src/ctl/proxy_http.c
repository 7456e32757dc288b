/*
 * HTTP/1.1 pieces of the proxy (contract in proxy_http.h). Pure: no I/O, no clock.
 */
#include "ctl/proxy_http.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t px_head_end(const char *buf, size_t len)
{
    for (size_t i = 0; i + 3 < len; i++) {
        if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
            return i + 4;
        }
    }
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
        s[--n] = '\0';
    }
    return s;
}

int px_head_parse(char *head, size_t len, px_head *out)
{
    memset(out, 0, sizeof(*out));
    if (len < 4 || memchr(head, '\0', len)) {
        return -1;
    }
    head[len - 2] = '\0'; /* the final CRLF of the empty line */
    char *save = NULL;
    char *line = strtok_r(head, "\r\n", &save);
    int status = 0;
    if (!line || strncmp(line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)line[7]) ||
        line[8] != ' ' || sscanf(line + 9, "%3d", &status) != 1 || status < 100 || status > 599) {
        return -1;
    }
    out->status = status;
    out->minor = line[7] - '0';
    while ((line = strtok_r(NULL, "\r\n", &save)) != NULL) {
        char *colon = strchr(line, ':');
        if (line[0] == ' ' || line[0] == '\t' || !colon || colon == line ||
            out->nheaders >= PX_MAX_HEADERS) {
            return -1;
        }
        *colon = '\0';
        for (char *p = line; *p; p++) {
            if (*p == ' ' || *p == '\t') {
                return -1; /* no space before the colon */
            }
        }
        out->name[out->nheaders] = line;
        out->value[out->nheaders] = trim(colon + 1);
        out->nheaders++;
    }
    return 0;
}

const char *px_head_get(const px_head *h, const char *name)
{
    for (int i = 0; i < h->nheaders; i++) {
        if (strcasecmp(h->name[i], name) == 0) {
            return h->value[i];
        }
    }
    return NULL;
}

bool px_hop_header(const char *name)
{
    static const char *const hop[] = {"Connection",
                                      "Keep-Alive",
                                      "Proxy-Connection",
                                      "Proxy-Authenticate",
                                      "Proxy-Authorization",
                                      "TE",
                                      "Trailer",
                                      "Transfer-Encoding",
                                      "Upgrade",
                                      "Content-Length"};
    for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++) {
        if (strcasecmp(name, hop[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* The next "name=value" item of a cookie list (separated by ';'): its bounds, trimmed. */
static const char *next_item(const char *p, const char **start, size_t *len)
{
    while (*p == ' ' || *p == '\t' || *p == ';') {
        p++;
    }
    *start = p;
    const char *end = strchr(p, ';');
    if (!end) {
        end = p + strlen(p);
    }
    size_t n = (size_t)(end - p);
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
        n--;
    }
    *len = n;
    return end;
}

static bool item_named(const char *item, size_t len, const char *name)
{
    size_t n = strlen(name);
    const char *eq = memchr(item, '=', len);
    size_t key = eq ? (size_t)(eq - item) : len;
    while (key > 0 && (item[key - 1] == ' ' || item[key - 1] == '\t')) {
        key--;
    }
    return key == n && strncasecmp(item, name, n) == 0;
}

/* Whether the Path attribute's value (vn bytes) lies under prefix. */
static bool path_under(const char *v, size_t vn, const char *prefix)
{
    size_t plen = strlen(prefix);
    return (vn >= plen && strncmp(v, prefix, plen) == 0) ||
           (vn == plen - 1 && strncmp(v, prefix, plen - 1) == 0);
}

/* Appends the n bytes of s to out (len so far); false when they do not fit. */
static bool put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len + n + 1 > cap) {
        return false;
    }
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
    return true;
}

bool px_set_cookie_scope(const char *value, const char *prefix, const char *reserved, char *out,
                         size_t cap)
{
    const char *item;
    size_t len, used = 0;
    const char *p = next_item(value, &item, &len);
    size_t rn = strlen(reserved);
    if (cap == 0 || len == 0 || !memchr(item, '=', len) ||
        (len > rn && strncmp(item, reserved, rn) == 0 && item[rn] == '=') ||
        !put(out, cap, &used, item, len)) {
        return false;
    }
    while (*p) {
        p = next_item(p, &item, &len);
        if (len == 0) {
            continue;
        }
        if (item_named(item, len, "Domain")) {
            return false;
        }
        bool ok = put(out, cap, &used, "; ", 2);
        if (item_named(item, len, "Path")) {
            const char *eq = memchr(item, '=', len);
            const char *v = eq ? eq + 1 : item + len;
            size_t vn = (size_t)(item + len - v);
            while (vn > 0 && (*v == ' ' || *v == '\t')) {
                v++, vn--;
            }
            if (!path_under(v, vn, prefix)) {
                if (!ok || !put(out, cap, &used, "Path=", 5) ||
                    !put(out, cap, &used, prefix, strlen(prefix))) {
                    return false;
                }
                continue;
            }
        }
        if (!ok || !put(out, cap, &used, item, len)) {
            return false;
        }
    }
    return true;
}

size_t px_cookie_strip(const char *value, const char *name, char *out, size_t cap)
{
    size_t n = 0;
    if (cap == 0) {
        return 0;
    }
    out[0] = '\0';
    for (const char *p = value; *p;) {
        const char *item;
        size_t len;
        p = next_item(p, &item, &len);
        if (len == 0 || item_named(item, len, name)) {
            continue;
        }
        size_t need = len + (n ? 2 : 0);
        if (n + need + 1 > cap) {
            continue;
        }
        if (n) {
            memcpy(out + n, "; ", 2);
            n += 2;
        }
        memcpy(out + n, item, len);
        n += len;
        out[n] = '\0';
    }
    return n;
}

bool px_cookie_get(const char *value, const char *name, char *out, size_t cap)
{
    for (const char *p = value; p && *p;) {
        const char *item;
        size_t len;
        p = next_item(p, &item, &len);
        if (len == 0 || !item_named(item, len, name)) {
            continue;
        }
        const char *eq = memchr(item, '=', len);
        size_t vn = eq ? (size_t)(item + len - eq - 1) : 0;
        if (!eq || vn + 1 > cap) {
            return false;
        }
        memcpy(out, eq + 1, vn);
        out[vn] = '\0';
        return true;
    }
    return false;
}

enum {
    CH_SIZE,
    CH_EXT,
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER,
    CH_TRAILER_LF,
    CH_LINE,
    CH_LINE_LF,
    CH_DONE
};

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* One byte of the chunk coding outside data; 0, or -1 when malformed. */
static int chunk_byte(px_chunks *c, char b)
{
    switch (c->state) {
    case CH_SIZE:
        if (hexval(b) >= 0) {
            if (++c->digits > 15) {
                return -1;
            }
            c->left = c->left * 16 + (unsigned)hexval(b);
            return 0;
        }
        if (c->digits == 0) {
            return -1;
        }
        c->state = b == '\r' ? CH_SIZE_LF : b == ';' || b == ' ' || b == '\t' ? CH_EXT : -1;
        return c->state < 0 ? -1 : 0;
    case CH_EXT:
        if (b == '\r') {
            c->state = CH_SIZE_LF;
        }
        return b == '\n' ? -1 : 0;
    case CH_SIZE_LF:
        if (b != '\n') {
            return -1;
        }
        c->digits = 0;
        c->state = c->left ? CH_DATA : CH_TRAILER;
        return 0;
    case CH_DATA_CR:
        c->state = CH_DATA_LF;
        return b == '\r' ? 0 : -1;
    case CH_DATA_LF:
        c->state = CH_SIZE;
        return b == '\n' ? 0 : -1;
    case CH_TRAILER: /* the start of a trailer line, or the empty line that ends it all */
        c->state = b == '\r' ? CH_TRAILER_LF : CH_LINE;
        return 0;
    case CH_TRAILER_LF:
        if (b != '\n') {
            return -1;
        }
        c->state = CH_DONE;
        c->done = true;
        return 0;
    case CH_LINE:
        if (b == '\r') {
            c->state = CH_LINE_LF;
        }
        return 0;
    case CH_LINE_LF:
        c->state = CH_TRAILER;
        return b == '\n' ? 0 : -1;
    default:
        return 0;
    }
}

long px_chunks_feed(px_chunks *c, const char *in, size_t n, char *out)
{
    size_t w = 0, i = 0;
    while (i < n && !c->done) {
        if (c->state == CH_DATA) {
            size_t take = n - i < c->left ? n - i : (size_t)c->left;
            memcpy(out + w, in + i, take);
            w += take;
            i += take;
            c->left -= take;
            if (c->left == 0) {
                c->state = CH_DATA_CR;
            }
            continue;
        }
        if (chunk_byte(c, in[i++]) < 0) {
            return -1;
        }
    }
    c->extra += n - i; /* past the end (done), or 0 */
    return (long)w;
}

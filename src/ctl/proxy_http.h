/*
 * The HTTP/1.1 pieces the controller's proxy (proxy.c) needs to pass a request to a notebook or
 * service and its answer back, without I/O: reading a response head, decoding a chunked body,
 * which headers are the connection's own (never passed on), which Set-Cookie answers a job may
 * give, and the Cookie header less the proxy's own cookie.
 */
#ifndef GP_CTL_PROXY_HTTP_H
#define GP_CTL_PROXY_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#define PX_MAX_HEADERS 64

/* A response head parsed in place (names and values point into the text given, which the
 * parser modifies: it ends each with a NUL). */
typedef struct px_head {
    int status;
    int minor; /* HTTP/1.minor */
    int nheaders;
    char *name[PX_MAX_HEADERS];
    char *value[PX_MAX_HEADERS];
} px_head;

/* The length of the head at the start of buf (through its empty line), 0 when it is not all
 * there yet. */
size_t px_head_end(const char *buf, size_t len);
/* Parses a response head of len bytes (as px_head_end measured it; "HTTP/1.x NNN reason" and
 * header fields, obsolete line folding refused). 0, or -1 when malformed (or past
 * PX_MAX_HEADERS fields). */
int px_head_parse(char *head, size_t len, px_head *out);
/* The value of header name (case-insensitive), NULL if absent; the first one. */
const char *px_head_get(const px_head *h, const char *name);

/* Whether a header belongs to one connection only (RFC 9110 7.6.1 and the like: Connection,
 * Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade) or is framing the proxy redoes
 * itself (Content-Length): never passed on as it is. */
bool px_hop_header(const char *name);

/* The Set-Cookie value the client may get, into out (cap bytes): value with every Path
 * attribute outside prefix (not prefix, prefix without its last '/', or a path below it)
 * replaced by Path=prefix, so that a job sets cookies for its own paths only (a web app that
 * sets Path=/, as Jupyter's XSRF cookie does, keeps working). Returns false when it must be
 * dropped: a Domain attribute (cookies for other hosts), the reserved name (the proxy's own
 * cookie), no name, or no room in out. prefix ends with '/'. */
bool px_set_cookie_scope(const char *value, const char *prefix, const char *reserved, char *out,
                         size_t cap);

/* Copies a Cookie header value into out (cap bytes) without the cookies named name. Returns the
 * length written (a cookie that does not fit is left out). */
size_t px_cookie_strip(const char *value, const char *name, char *out, size_t cap);
/* The value of cookie name in a Cookie header value into out; false if absent or too long. */
bool px_cookie_get(const char *value, const char *name, char *out, size_t cap);

/* A chunked body decoder. */
typedef struct px_chunks {
    int state;               /* private */
    int digits;              /* private */
    unsigned long long left; /* bytes of the current chunk still to come */
    bool done;               /* the last chunk and the trailer were read */
    size_t extra;            /* bytes fed after the end (not the body's) */
} px_chunks;

/* Decodes n bytes of a chunked body from in, appending the data to out (which has room for n
 * bytes: data is never longer than its coding). Returns the data bytes written, or -1 when the
 * coding is malformed. Bytes after the end (done) are ignored, counted in extra. */
long px_chunks_feed(px_chunks *c, const char *in, size_t n, char *out);

#endif

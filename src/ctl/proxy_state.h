/*
 * The proxy's memory (the leader's only; nothing of it is stored): one-time codes and session
 * cookies that open a job's proxy in a browser, the time of each job's last proxied traffic (the
 * notebooks' idle stop reads it), and the proxy's worker threads.
 *
 * Codes and cookies are random tokens (net/token.h); only their hashes are kept. A code is good
 * for one exchange within PX_CODE_TTL_MS; a session for PX_SESSION_TTL_MS. Each is bound to a
 * tenant and a job. At most PX_MAX_CODES codes and PX_MAX_SESSIONS sessions are kept: past
 * that, expired ones are dropped and then the oldest. All functions are thread-safe; times are
 * the caller's wall clock in milliseconds. It also owns the pool of idle upstream tunnels
 * (proxy_pool.h).
 */
#ifndef GP_CTL_PROXY_STATE_H
#define GP_CTL_PROXY_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PX_CODE_TTL_MS    (60 * 1000)
#define PX_SESSION_TTL_MS (12 * 3600 * 1000LL)
#define PX_MAX_CODES      4096
#define PX_MAX_SESSIONS   65536
#define PX_SECRET_MAX     80 /* a code's or cookie's text, with its NUL */
#define PX_MAX_WORKERS    512
#define PX_MAX_PER_TENANT 128 /* one tenant's open WebSockets cannot take every worker */

typedef struct ctl_proxy ctl_proxy;

/* NULL when out of memory. */
ctl_proxy *ctl_proxy_new(void);
/* Stops (ctl_proxy_stop), waits until no worker is left, then frees. Accepts NULL. */
void ctl_proxy_free(ctl_proxy *p);

/* A new one-time code for (tenant, job) into code (PX_SECRET_MAX bytes). 0, or GP_EIO when no
 * random bytes could be had. */
int ctl_proxy_code_make(ctl_proxy *p, int64_t tenant, int64_t job, int64_t now_ms, char *code);
/* Takes the code (it cannot be used again): true with its tenant and job when it is known and
 * not expired. */
bool ctl_proxy_code_take(ctl_proxy *p, const char *code, int64_t now_ms, int64_t *tenant,
                         int64_t *job);
/* A new session for (tenant, job); its cookie value into cookie (PX_SECRET_MAX bytes). */
int ctl_proxy_session_make(ctl_proxy *p, int64_t tenant, int64_t job, int64_t now_ms, char *cookie);
/* Whether cookie names a live session; its tenant and job. */
bool ctl_proxy_session_find(ctl_proxy *p, const char *cookie, int64_t now_ms, int64_t *tenant,
                            int64_t *job);

/* Records traffic for job now; the last time recorded (0: never since the start). */
void ctl_proxy_touch(ctl_proxy *p, int64_t job, int64_t now_ms);
int64_t ctl_proxy_last_seen(ctl_proxy *p, int64_t job);

/* Counts a worker thread of tenant in (false past PX_MAX_WORKERS, past PX_MAX_PER_TENANT of
 * the tenant's, or once stopping) and out. A worker names the socket it waits on (-1: none) so
 * that ctl_proxy_stop can end the wait. */
bool ctl_proxy_worker_enter(ctl_proxy *p, int64_t tenant, int *slot);
void ctl_proxy_worker_socket(ctl_proxy *p, int slot, int fd);
void ctl_proxy_worker_leave(ctl_proxy *p, int slot);
/* No new workers; the sockets of those running are shut down (their reads end), and the idle
 * tunnels closed. */
void ctl_proxy_stop(ctl_proxy *p);
/* The idle upstream tunnels (proxy_pool.h), owned by p. */
struct px_pool *ctl_proxy_tunnels(ctl_proxy *p);

#endif

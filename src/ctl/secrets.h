/*
 * Jobs' secret environment values (env entries {value, secret: true} in the job spec).
 *
 * At submission each secret value is sealed (net/seal.h: AES-256-GCM, a random nonce per
 * value) under the pool's key, with associated data naming the tenant id, the job's name and
 * the variable, and stored as {"secret": true, "sealed": TEXT}: the store never holds the
 * plaintext. Every answer that shows a spec (jobs, lists, the dashboard, a desired document
 * read by anyone but the node's own agent) shows {"secret": true}; only the desired replicas
 * sent to the agent of the node that runs the replica carry the value, opened there. A sealed
 * value that does not open (changed, moved to another job, tenant or variable, or another key)
 * is never sent: the entry becomes {"secret": true, "refused": WHY}, which the agent refuses to
 * run with.
 *
 * The key: secrets.key_file (default DATA_DIR/secret.key), 64 hex digits, created 0600 at the
 * first start when missing; the same file for every controller of a pool. The store keeps a
 * check value sealed with the key (meta "secret_key_check"), so a controller started with
 * another key, or without its file, stops at start naming the file instead of failing to
 * open values later. Rotating the key is not supported.
 */
#ifndef GP_CTL_SECRETS_H
#define GP_CTL_SECRETS_H

#include "ctl/context.h"

#include <jansson.h>

/* Reads (or on a pool's first start creates) the key file into g->secret_key and checks it
 * against the store; sets g->st.secret_key. Runs at start, before the committer. 0, or
 * GP_EINVAL/GP_EIO/GP_EPERM with d naming the file. */
int ctl_secrets_start(gpupoold *g, gp_diag *d);

/* A follower's check at start, reading only: the key file, when the pool already has a check
 * value, must be there and be the pool's key, so a controller that could not lead says so when
 * it starts, not when it takes over. A missing file on a pool without one is fine (its leader
 * makes it). Same errors as ctl_secrets_start. */
int ctl_secrets_verify(gpupoold *g, gp_diag *d);

/* Refuses a submitted spec that carries a sealed value (only gpupoold seals): GP_EINVAL naming
 * env.NAME.sealed. */
int ctl_secrets_check_submitted(const gp_jobspec *s, gp_diag *d);

/* Seals, in the submitted document doc and in its parsed spec s, every secret env value for
 * the job named job of tenant tenant_id; a {value, secret: false} entry becomes its plain
 * string. The plaintexts are wiped. 0, or GP_ETOOBIG/GP_ENOMEM/GP_EIO naming the variable. */
int ctl_secrets_seal(const unsigned char *key, int64_t tenant_id, json_t *doc, gp_jobspec *s,
                     gp_diag *d);

/* In a spec document in the stored form (borrowed; changed in place): every secret entry of "env"
 * becomes
 * {"secret": true} (hidden), or with key (the node's own agent) its value opened for the job
 * named job of tenant tenant_id. */
void ctl_secrets_show(json_t *spec, const unsigned char *key, int64_t tenant_id, const char *job);

/* The spec of job j as an answer shows it (a new reference; NULL when out of memory): its
 * canonical form, encoded from the parsed spec (gp_jobspec_to_json; the stored text is read only
 * at load), with every secret env value {"secret": true}, or with secrets (the desired replicas
 * of the node's own agent) opened. */
json_t *ctl_job_spec_doc(const ctl_state *st, const ctl_job *j, bool secrets);

#endif

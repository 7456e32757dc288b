/*
 * Pulling a replica's image before its container starts (gpupool-run; sandbox.h).
 *
 *   policy        Always: pull; IfNotPresent: pull unless podman has the image; Never: podman
 *                 must have it (else the pull fails without asking a registry).
 *   credentials   registry_auth (run_spec.h) becomes podman's auth file (`{"auths": {REGISTRY:
 *                 {"auth": base64(USER:PASSWORD)}}}`), mode 0600 in the replica's directory (the
 *                 job never sees it), given with --authfile and removed once the pull is over:
 *                 the password is never on a command line.
 *   progress      the image's size comes from its manifest (`skopeo inspect --raw`, with the
 *                 registries configuration podman reads: its layers and config; for an index
 *                 the manifest of this machine's platform; 0, unknown, without skopeo or when
 *                 it fails); what has arrived is the
 *                 size of the blobs podman writes into its temporary directory (TMPDIR, a
 *                 directory of the replica's own), measured while the pull runs and written to
 *                 pull.json (replica_dir.h).
 *   failure       the message of podman's last "Error: " line, which carries the registry's
 *                 ("manifest unknown", "unauthorized: ...", "connection refused"); the replica
 *                 ends with exit code 125 and reason "ImagePullFailed: MESSAGE".
 */
#ifndef GP_AGENT_PULL_H
#define GP_AGENT_PULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/run_spec.h"
#include "gpupool/error.h"

#define GP_PULL_REASON_PREFIX "ImagePullFailed: "

/* Whether to pull, given the policy and whether podman has the image. Pure. */
bool gp_pull_needed(gp_run_pull policy, bool present);

/* The message of a failed podman or skopeo command: its last line starting with "Error: "
 * (without that), else its last line. Pure. */
void gp_pull_message(const char *stderr_text, char *buf, size_t cap);

/* podman's auth file for the credentials of s (registry_auth), as a new string; NULL when out of
 * memory or s has none. Pure. */
char *gp_pull_authfile_text(const gp_run_spec *s);

/* The size of an image from its raw manifest (skopeo inspect --raw): its layers' and config's
 * sizes summed (0: not a manifest it understands). An index (a manifest list) names one
 * manifest per platform: then -1, and digest (cap bytes) the one for linux/arch (arch as OCI
 * names it: amd64, arm64), "" when it has none. Pure. */
int64_t gp_pull_manifest_bytes(const char *raw, const char *arch, char *digest, size_t cap);

/* The bytes of the regular files under dir (what podman has downloaded). */
int64_t gp_pull_dir_bytes(const char *dir);

/* Whether podman has the image (`podman image exists`). */
bool gp_pull_present(const char *podman, const char *image);

/* The image's id ("sha256:..."; "" when podman does not know it) into buf. */
void gp_pull_image_id(const char *podman, const char *image, char *buf, size_t cap);

/* The image's size from its registry (skopeo inspect, with the auth file when given; 0:
 * unknown). */
int64_t gp_pull_remote_bytes(const char *image, const char *authfile);

#endif

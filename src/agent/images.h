/*
 * The node's image cache: what podman holds, reported in heartbeats ("images": [{ref, id,
 * size_bytes, last_used_ms}]), and a size cap kept by evicting the least recently used images no
 * replica uses.
 *
 * When an image was last used is the agent's own record, STATE/images.json ({"sha256:ID":
 * wall-clock ms}): each round sets it to now for the images of running replicas and to their
 * end for replicas that are over. Only images in that record are ever evicted (they came for
 * gpupool's jobs; the operator's own images are left alone), and never one a container uses
 * (podman's count) or a running replica's. The list is asked of podman at most every
 * GP_IMAGES_REFRESH_MS, or sooner when the images in use change; an eviction is `podman rmi ID`
 * (never forced), oldest first, until the cache fits the cap.
 */
#ifndef GP_AGENT_IMAGES_H
#define GP_AGENT_IMAGES_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "agent/runtime.h"
#include "gpupool/error.h"

#define GP_IMAGES_REFRESH_MS 30000

typedef struct gp_image {
    char ref[512]; /* its first name ("" for an image without one) */
    char id[80];   /* "sha256:..." */
    int64_t size_bytes;
    int64_t last_used_ms; /* 0: never used by a replica here (not in the record) */
    int containers;       /* containers that use it (podman) */
    bool in_use;          /* a running replica's */
} gp_image;

/* Which images to evict so that the cache fits cap bytes: indexes into imgs, oldest first,
 * into out (room for n); returns how many. Only images with last_used_ms > 0, no containers and
 * not in use are candidates; cap <= 0 evicts nothing. Pure. */
int gp_images_evict_plan(const gp_image *imgs, int n, int64_t cap, int *out);

/* podman images --format json into a new array (*out, *n). 0, or GP_EPARSE. Pure. */
int gp_images_parse(const char *json_text, gp_image **out, int *n);

typedef struct gp_images gp_images;

/* The cache of a node whose agent keeps its files in state_dir. cap_bytes 0: no cap. NULL when
 * out of memory. */
gp_images *gp_images_new(const char *state_dir, int64_t cap_bytes);
void gp_images_free(gp_images *im);

/* An image a replica used: running (until now) or over (ended at when_ms). */
void gp_images_used(gp_images *im, const char *id, int64_t when_ms, bool running);

/* Lists podman's images again when due (or when force), marks those of running replicas (the
 * ids given to gp_images_used with running since the last call), evicts past the cap unless
 * hold (a replica is starting: its image may be pulled but not yet in use), saves the record.
 * Errors are logged; the last list stays. */
void gp_images_refresh(gp_images *im, const gp_runtime *rt, int64_t now_ms, bool force, bool hold);

/* The heartbeat's "images". A new reference. */
json_t *gp_images_doc(const gp_images *im);

#endif

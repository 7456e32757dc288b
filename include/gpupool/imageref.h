/*
 * OCI image references, as docker and podman take them, parsed and normalised:
 *
 *   [REGISTRY[:PORT]/]PATH[:TAG][@ALGORITHM:HEX]
 *
 * REGISTRY is the first '/'-separated component when it holds a '.' or a ':' or is "localhost";
 * else the image is on Docker Hub ("docker.io"), where a path of one component lies under
 * "library/" (docker also takes a first component with an upper-case letter for a registry; here
 * it is a path component, refused for its case, which is what such a reference usually means). A
 * registry is a host name
 * ('.'-separated labels of letters, digits and inner '-'; an IPv4 address is one), or an IPv6
 * address in brackets, with an optional :PORT (1..65535).
 * PATH: '/'-separated components of lower-case letters and digits, separated inside by '.', '_',
 * "__" or a run of '-'.
 * TAG: a letter, digit or '_', then at most 127 letters, digits, '_', '.' or '-'.
 * Digest: sha256 with 64 lower-case hex digits, or sha512 with 128.
 * The name (registry, '/', path) is at most 255 characters.
 *
 * The normal form lower-cases the registry, writes Docker Hub's aliases (index.docker.io,
 * registry-1.docker.io) as docker.io, puts its one-component paths under library/, and adds
 * ":latest" when neither a tag nor a digest is given: "ubuntu" is
 * "docker.io/library/ubuntu:latest". Normalising a normal form gives it back unchanged.
 *
 * Pure: no I/O, no globals. Errors are GP_EINVAL with d naming the field the caller gives.
 */
#ifndef GPUPOOL_IMAGEREF_H
#define GPUPOOL_IMAGEREF_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>

/* Bytes of a reference, its NUL included: room for the longest valid one in normal form (a
 * name of 255, a tag of 128 and a sha512 digest, with their separators). */
#define GP_IMAGE_REF_MAX      640
#define GP_IMAGE_NAME_MAX     255 /* characters of registry/path */
#define GP_IMAGE_REGISTRY_MAX 256
#define GP_IMAGE_TAG_MAX      128
#define GP_IMAGE_DOCKER_HUB   "docker.io"

typedef struct gp_image_ref {
    char registry[GP_IMAGE_REGISTRY_MAX]; /* normalised: "docker.io", "127.0.0.1:5000" */
    char path[GP_IMAGE_NAME_MAX + 1];     /* "library/ubuntu", "team/pytorch" */
    char tag[GP_IMAGE_TAG_MAX + 1];       /* "" when only a digest is given */
    char digest[140];                     /* "sha256:..."; "" = none */
    bool tag_given;                       /* false: tag is the implied "latest" (or none) */
} gp_image_ref;

/* When a node pulls a job's image before starting it (as Kubernetes' imagePullPolicy). */
typedef enum gp_pull_policy {
    GP_PULL_DEFAULT = -1,       /* not given: gp_image_ref_default_pull */
    GP_PULL_ALWAYS = 0,         /* every start */
    GP_PULL_IF_NOT_PRESENT = 1, /* only when the node does not hold it */
    GP_PULL_NEVER = 2,          /* never: the node must hold it */
} gp_pull_policy;

/* Parses text (NUL-terminated) into *out. 0, or GP_EINVAL with d saying what is wrong, as
 * "FIELD: ..."; *out is written only on success. */
int gp_image_ref_parse(const char *text, const char *field, gp_image_ref *out, gp_diag *d);

/* The normal form of r into buf (cap bytes, NUL-terminated). Its length, or GP_ERANGE when it
 * does not fit (buf then holds ""). */
int gp_image_ref_format(const gp_image_ref *r, char *buf, size_t cap);

/* gp_image_ref_parse then gp_image_ref_format: the normal form of text into buf. 0, or
 * GP_EINVAL / GP_ERANGE with d. */
int gp_image_ref_normalize(const char *text, const char *field, char *buf, size_t cap, gp_diag *d);

/* A registry on its own (HOST[:PORT], as the credentials of a tenant name it) in normal form
 * into buf: lower-case, Docker Hub's aliases as docker.io. 0, or GP_EINVAL / GP_ERANGE with d. */
int gp_image_registry_normalize(const char *text, const char *field, char *buf, size_t cap,
                                gp_diag *d);

/* Kubernetes' default: Always when the tag is "latest" (given or implied) and there is no
 * digest, else IfNotPresent. */
gp_pull_policy gp_image_ref_default_pull(const gp_image_ref *r);

/* The wire names: "Always", "IfNotPresent", "Never"; NULL for GP_PULL_DEFAULT. */
const char *gp_pull_policy_name(gp_pull_policy p);
/* GP_PULL_* for a wire name; GP_PULL_DEFAULT when it is none of them. */
gp_pull_policy gp_pull_policy_parse(const char *name);

#endif

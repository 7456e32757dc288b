/*
 * MIG profile tables of A100-40GB, A100-80GB and H100-80GB, and the placement rule.
 * Invariant of every table: legal_starts + memory_slices never run past slice 8. Also the
 * layout of a GPU's instances in its 8-byte form (gp_mig_layout_encode).
 */
#include "gpupool/mig.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define STARTS(...) (uint8_t)(__VA_ARGS__)
#define S(n)        (1u << (n))

static const gp_mig_profile a100_40[] = {
    {"7g.40gb", 0, 7, 8, 1, STARTS(S(0))},
    {"4g.20gb", 5, 4, 4, 1, STARTS(S(0))},
    {"3g.20gb", 9, 3, 4, 2, STARTS(S(0) | S(4))},
    {"2g.10gb", 14, 2, 2, 3, STARTS(S(0) | S(2) | S(4))},
    {"1g.10gb", 15, 1, 2, 4, STARTS(S(0) | S(2) | S(4) | S(6))},
    {"1g.5gb", 19, 1, 1, 7, STARTS(S(0) | S(1) | S(2) | S(3) | S(4) | S(5) | S(6))},
};

static const gp_mig_profile a100_80[] = {
    {"7g.80gb", 0, 7, 8, 1, STARTS(S(0))},
    {"4g.40gb", 5, 4, 4, 1, STARTS(S(0))},
    {"3g.40gb", 9, 3, 4, 2, STARTS(S(0) | S(4))},
    {"2g.20gb", 14, 2, 2, 3, STARTS(S(0) | S(2) | S(4))},
    {"1g.20gb", 15, 1, 2, 4, STARTS(S(0) | S(2) | S(4) | S(6))},
    {"1g.10gb", 19, 1, 1, 7, STARTS(S(0) | S(1) | S(2) | S(3) | S(4) | S(5) | S(6))},
};

/* H100-80GB has the same profiles, ids and placements as A100-80GB: one table serves both. */

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *gp_mig_geometry_name(gp_mig_geometry g)
{
    switch (g) {
    case GP_MIG_A100_40GB:
        return "A100-40GB";
    case GP_MIG_A100_80GB:
        return "A100-80GB";
    case GP_MIG_H100_80GB:
        return "H100-80GB";
    default:
        return "none";
    }
}

/* Case-insensitive substring search. */
static int contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) {
            i++;
        }
        if (i == n) {
            return 1;
        }
    }
    return 0;
}

gp_mig_geometry gp_mig_geometry_of_model(const char *model)
{
    if (!model) {
        return GP_MIG_NONE;
    }
    if (contains(model, "A100")) {
        return contains(model, "80G") ? GP_MIG_A100_80GB : GP_MIG_A100_40GB;
    }
    if (contains(model, "H100") && contains(model, "80G")) {
        return GP_MIG_H100_80GB;
    }
    return GP_MIG_NONE;
}

const gp_mig_profile *gp_mig_profiles(gp_mig_geometry g, int *count)
{
    switch (g) {
    case GP_MIG_A100_40GB:
        *count = COUNT(a100_40);
        return a100_40;
    case GP_MIG_A100_80GB:
        *count = COUNT(a100_80);
        return a100_80;
    case GP_MIG_H100_80GB:
        *count = COUNT(a100_80);
        return a100_80;
    default:
        *count = 0;
        return NULL;
    }
}

const gp_mig_profile *gp_mig_find(gp_mig_geometry g, const char *name)
{
    int n;
    const gp_mig_profile *p = gp_mig_profiles(g, &n);
    for (int i = 0; i < n; i++) {
        if (strcmp(p[i].name, name) == 0) {
            return &p[i];
        }
    }
    return NULL;
}

int gp_mig_name_valid(const char *name)
{
    const char *s = name;
    if (!isdigit((unsigned char)*s)) {
        return 0;
    }
    while (isdigit((unsigned char)*s)) {
        s++;
    }
    if (*s++ != 'g' || *s++ != '.' || !isdigit((unsigned char)*s)) {
        return 0;
    }
    while (isdigit((unsigned char)*s)) {
        s++;
    }
    return strcmp(s, "gb") == 0;
}

int gp_mig_choose_start(const gp_mig_profile *p, uint8_t mem_used, int compute_used)
{
    if (compute_used + p->compute_slices > GP_MIG_COMPUTE_SLICES) {
        return -1;
    }
    for (int s = GP_MIG_MEMORY_SLICES - 1; s >= 0; s--) {
        if ((p->legal_starts & (1u << s)) && (gp_mig_mask(p, s) & mem_used) == 0) {
            return s;
        }
    }
    return -1;
}

const gp_mig_profile *gp_mig_slot_profile(gp_mig_geometry g, uint8_t slot)
{
    int n;
    const gp_mig_profile *p = gp_mig_profiles(g, &n);
    int k = (slot & GP_MIG_SLOT_PROFILE) - 1;
    return k >= 0 && k < n ? &p[k] : NULL;
}

/* "0, 4" into buf: the legal starts of p. */
static const char *legal_starts(const gp_mig_profile *p, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int s = 0; s < GP_MIG_MEMORY_SLICES; s++) {
        if ((p->legal_starts & (1u << s)) && len < cap) {
            len += (size_t)snprintf(buf + len, cap - len, "%s%d", len ? ", " : "", s);
        }
    }
    return buf;
}

int gp_mig_layout_encode(gp_mig_geometry g, const gp_mig_instance *in, int n, uint8_t *out,
                         gp_diag *d)
{
    int count;
    const gp_mig_profile *table = gp_mig_profiles(g, &count);
    if (n < 0 || n > GP_MIG_MEMORY_SLICES) {
        return gp_diag_set(d, GP_EINVAL, "at most %d instances", GP_MIG_MEMORY_SLICES);
    }
    uint8_t slots[GP_MIG_MEMORY_SLICES] = {0}, used = 0;
    int compute = 0;
    for (int i = 0; i < n; i++) {
        const gp_mig_profile *p = count ? gp_mig_find(g, in[i].profile) : NULL;
        if (!p) {
            return gp_diag_set(d, GP_EINVAL, "[%d].profile: %s has no MIG profile \"%.15s\"", i,
                               gp_mig_geometry_name(g), in[i].profile);
        }
        char legal[32];
        if (in[i].start < 0 || in[i].start >= GP_MIG_MEMORY_SLICES ||
            !(p->legal_starts & (1u << in[i].start))) {
            return gp_diag_set(d, GP_EINVAL,
                               "[%d].start: %s cannot start at memory slice %d (legal: %s)", i,
                               p->name, in[i].start, legal_starts(p, legal, sizeof(legal)));
        }
        uint8_t mask = gp_mig_mask(p, in[i].start);
        if (mask & used) {
            return gp_diag_set(d, GP_EINVAL,
                               "[%d]: %s at memory slice %d shares memory slices with another "
                               "instance",
                               i, p->name, in[i].start);
        }
        used |= mask;
        compute += p->compute_slices;
        if (compute > GP_MIG_COMPUTE_SLICES) {
            return gp_diag_set(d, GP_EINVAL, "[%d]: the instances take more than %d compute slices",
                               i, GP_MIG_COMPUTE_SLICES);
        }
        slots[in[i].start] = (uint8_t)((p - table) + 1) | (in[i].blocked ? GP_MIG_SLOT_BLOCKED : 0);
    }
    if (out) {
        memcpy(out, slots, sizeof(slots));
    }
    return 0;
}

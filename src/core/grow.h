/*
 * Growing an array by doubling: one helper for every growable array of libgpcore.
 */
#ifndef GP_CORE_GROW_H
#define GP_CORE_GROW_H

#include "gpupool/error.h"

#include <stdlib.h>

/* Makes *p (of *cap elements of size bytes) hold at least need elements, doubling from first.
 * 0, or GP_ENOMEM with *p and *cap unchanged. */
static inline int gp_grow(void **p, int *cap, int need, size_t size, int first)
{
    if (need <= *cap) {
        return 0;
    }
    int ncap = *cap ? *cap : first;
    while (ncap < need) {
        ncap *= 2;
    }
    void *q = realloc(*p, size * (size_t)ncap);
    if (!q) {
        return GP_ENOMEM;
    }
    *p = q;
    *cap = ncap;
    return 0;
}

#endif

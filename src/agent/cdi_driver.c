/*
 * The driver's user-space files containers need (see cdi_driver.h). Pure.
 */
#include "agent/cdi_driver.h"

#include <stdio.h>
#include <string.h>

static const char *const libraries[] = {
    /* utility */
    "libnvidia-ml", "libnvidia-cfg", "libnvidia-nscq",
    /* compute */
    "libcuda", "libcudadebugger", "libnvidia-opencl", "libnvidia-ptxjitcompiler",
    "libnvidia-fatbinaryloader", "libnvidia-allocator", "libnvidia-compiler", "libnvidia-nvvm",
    "libnvidia-gpucomp", "libnvidia-pkcs11", "libnvidia-pkcs11-openssl3", NULL};

const char *const gp_cdi_driver_programs[] = {
    "nvidia-smi", "nvidia-debugdump", "nvidia-cuda-mps-control", "nvidia-cuda-mps-server", NULL};

const char *gp_cdi_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The library of libraries[] that name starts with, followed by ".so": the rest after ".so";
 * NULL when none. "libnvidia-pkcs11-openssl3.so.1" is not libnvidia-pkcs11's. */
static const char *library_rest(const char *name)
{
    for (int i = 0; libraries[i]; i++) {
        size_t n = strlen(libraries[i]);
        if (strncmp(name, libraries[i], n) == 0 && strncmp(name + n, ".so", 3) == 0) {
            return name + n + 3;
        }
    }
    return NULL;
}

bool gp_cdi_driver_library(const char *file, const char *version)
{
    const char *rest = file && version && *version ? library_rest(file) : NULL;
    return rest && rest[0] == '.' && strcmp(rest + 1, version) == 0;
}

bool gp_cdi_driver_link(const char *name)
{
    const char *rest = name ? library_rest(name) : NULL;
    return rest && (rest[0] == '\0' || rest[0] == '.');
}

/* Copies [s, e) into out (cap bytes); false when it does not fit or is empty. */
static bool take(const char *s, const char *e, char *out, size_t cap)
{
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= cap) {
        return false;
    }
    memcpy(out, s, n);
    out[n] = '\0';
    return true;
}

/* One line [s, e): "\tNAME (FLAGS) => PATH". */
static bool entry(const char *s, const char *e, char *name, size_t name_cap, char *path,
                  size_t path_cap)
{
    while (s < e && (*s == ' ' || *s == '\t')) {
        s++;
    }
    const char *sp = memchr(s, ' ', (size_t)(e - s));
    const char *arrow = NULL;
    for (const char *p = sp; p && p + 4 <= e && !arrow; p++) {
        arrow = strncmp(p, " => ", 4) == 0 ? p : NULL;
    }
    if (!sp || !arrow || sp[1] != '(' || !take(s, sp, name, name_cap) ||
        !take(arrow + 4, e, path, path_cap)) {
        return false;
    }
    return true;
}

int gp_cdi_ldcache_next(const char **cursor, char *name, size_t name_cap, char *path,
                        size_t path_cap)
{
    const char *s = *cursor;
    while (s && *s) {
        const char *nl = strchr(s, '\n');
        const char *e = nl ? nl : s + strlen(s);
        *cursor = nl ? nl + 1 : e;
        if (entry(s, e, name, name_cap, path, path_cap)) {
            return 1;
        }
        s = *cursor;
    }
    return 0;
}

bool gp_cdi_elf_same(const unsigned char *a, size_t na, const unsigned char *b, size_t nb)
{
    static const unsigned char magic[4] = {0x7f, 'E', 'L', 'F'};
    if (na < 20 || nb < 20 || memcmp(a, magic, 4) != 0 || memcmp(b, magic, 4) != 0) {
        return false;
    }
    /* e_ident[EI_CLASS] (4) and [EI_DATA] (5); e_machine at 18..19 in both classes */
    return a[4] == b[4] && a[5] == b[5] && a[18] == b[18] && a[19] == b[19];
}

/*
 * Loading a library on its first use (lazylib.h).
 */
#include "cli/lazylib.h"

#include <dlfcn.h>
#include <stdio.h>

void *gp_cli_lazy_sym(gp_cli_lazylib *lib, const char *name)
{
    if (!lib->handle && !lib->failed) {
        lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
        if (!lib->handle) {
            const char *why = dlerror();
            fprintf(stderr, "gpupool: cannot load %s: %s\n", lib->soname,
                    why ? why : "unknown error");
            lib->failed = 1;
        }
    }
    if (!lib->handle) {
        return NULL;
    }
    void *p = dlsym(lib->handle, name);
    if (!p) {
        fprintf(stderr, "gpupool: %s lacks %s\n", lib->soname, name);
    }
    return p;
}

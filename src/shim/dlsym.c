/*
 * The function table generated from hooks.h, and the dlsym override.
 *
 * Programs and the CUDA runtime that dlopen("libcuda.so.1") and look functions up with dlsym
 * get our hooks: a lookup of a hooked name that the handle provides returns the hook.
 *
 * Everything else is passed to libc's dlsym as a tail call, so that libc sees the original
 * caller's return address: dlsym(RTLD_NEXT, ...) searches after the caller's object, not after
 * ours. Clang guarantees the tail call (musttail); GCC makes it at -O2, which CMake forces on
 * this file. tests/shim checks it (dlsym(RTLD_NEXT, "dlsym") from the test program is ours).
 *
 * This file is built without sanitizer instrumentation: a sanitizer runtime linked into the
 * program resolves its interceptors with dlsym before it has set up its shadow memory, and that
 * lookup lands here. So nothing here may call instrumented code or libc string functions on the
 * path every lookup takes.
 */
#define _GNU_SOURCE
#include "shim/shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(musttail)
#define GP_TAILCALL __attribute__((musttail))
#endif
#endif
#ifndef GP_TAILCALL
#define GP_TAILCALL
#endif

#define GP_HOOKED_HOOK       1
#define GP_HOOKED_CALL       0
#define GP_HOOKFN_HOOK(name) (gp_voidfn) name
#define GP_HOOKFN_CALL(name) NULL

const gp_fn_info gp_shim_fns[GP_FN_COUNT] = {
#define GP_X(lib, kind, ret, name, gpname, minver, flags, params)                                  \
    {#name, gpname, minver, GP_LIB_##lib, GP_HOOKED_##kind, (flags) == GP_PTDS},
    GP_SHIM_FUNCTIONS(GP_X)
#undef GP_X
};

const gp_voidfn gp_shim_hooks[GP_FN_COUNT] = {
#define GP_X(lib, kind, ret, name, gpname, minver, flags, params) GP_HOOKFN_##kind(name),
    GP_SHIM_FUNCTIONS(GP_X)
#undef GP_X
};

static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static gp_dlsym_fn real_dlsym;

static void find_real_dlsym(void)
{
    /* glibc 2.34 moved dlsym into libc with a new version; older ones have only the first. */
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) {
        p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    }
    real_dlsym = (gp_dlsym_fn)(uintptr_t)p;
}

gp_dlsym_fn gp_shim_real_dlsym(void)
{
    pthread_once(&real_once, find_real_dlsym);
    return real_dlsym;
}

static int same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static int candidate(const char *name)
{
    return (name[0] == 'c' && name[1] == 'u') ||
           (name[0] == 'n' && name[1] == 'v' && name[2] == 'm' && name[3] == 'l');
}

static int library_loaded(int lib)
{
    void *h =
        dlopen(lib == GP_LIB_CUDA ? "libcuda.so.1" : "libnvidia-ml.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        dlclose(h);
    }
    return h != NULL;
}

/* Decides lookups of hooked names: 1 with the answer in *out, 0 to let libc answer. */
static int hooked_answer(gp_dlsym_fn real, void *handle, const char *name, void **out)
{
    for (int i = 0; i < GP_FN_COUNT; i++) {
        if (!gp_shim_fns[i].hooked || !same(gp_shim_fns[i].name, name)) {
            continue;
        }
        void *found = real(handle, name);
        void *hook = (void *)(uintptr_t)gp_shim_hooks[i];
        if (!found) {
            return 0; /* the handle does not have it: libc's answer, with its dlerror() */
        }
        /* RTLD_DEFAULT finds our own export even where the real library is absent; answer as if
         * we were not there. */
        *out = found == hook && !library_loaded(gp_shim_fns[i].lib) ? NULL : hook;
        return 1;
    }
    return 0;
}

GP_EXPORT void *dlsym(void *restrict handle, const char *restrict name)
{
    gp_dlsym_fn real = gp_shim_real_dlsym();
    if (!real) {
        return NULL;
    }
    /* name is declared nonnull (glibc dereferences it too). */
    if (candidate(name)) {
        void *answer;
        if (hooked_answer(real, handle, name, &answer)) {
            return answer;
        }
    }
    GP_TAILCALL return real(handle, name);
}

/*
 * The function table generated from hooks.h, and the dynamic-linking functions the library
 * interposes: dlsym, dlvsym, dlopen and dlmopen.
 *
 * Programs and the CUDA runtime that dlopen("libcuda.so.1") and look functions up with dlsym or
 * dlvsym get our hooks: a lookup of a hooked name that the handle provides returns the hook. A
 * lookup of dlsym, dlvsym, dlopen or dlmopen themselves (in libc's handle, with RTLD_NEXT, at a
 * version) returns ours, so libc's own lookup is never handed out: through it a program would
 * reach the driver's real functions.
 *
 * While a limit applies (gp_shim_confine_loading): dlmopen into another namespace than the base
 * one is refused (a new namespace does not have this library, and a driver loaded there would
 * be unlimited), and RTLD_DEEPBIND is dropped from dlopen and dlmopen (an object opened with it
 * binds its own dependencies first: a library linked against libcuda would call the real driver
 * functions, and libc's dlsym).
 *
 * Everything else is passed to libc as a tail call, so that libc sees the original caller's
 * return address: dlsym(RTLD_NEXT, ...) searches after the caller's object, not after ours, and
 * dlopen takes the caller's RUNPATH and namespace. Clang guarantees the tail call (musttail); GCC
 * makes it at -O2, which CMake forces on this file. tests/shim checks it for dlsym
 * (dlsym(RTLD_NEXT, "dlsym") from the test program is ours).
 *
 * libc's functions are found in the loaded objects' symbol tables (elfsym.h): calling dlvsym
 * from here would call our own.
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

#include "shim/elfsym.h"

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

typedef void *(*gp_dlvsym_fn)(void *handle, const char *name, const char *version);
typedef void *(*gp_dlmopen_fn)(Lmid_t lmid, const char *file, int mode);

static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static gp_dlsym_fn real_dlsym;
static gp_dlvsym_fn real_dlvsym;
static gp_dlopen_fn real_dlopen;
static gp_dlmopen_fn real_dlmopen;

static void find_real(void)
{
    real_dlsym = (gp_dlsym_fn)(uintptr_t)gp_elf_find_glibc("dlsym");
    real_dlvsym = (gp_dlvsym_fn)(uintptr_t)gp_elf_find_glibc("dlvsym");
    real_dlopen = (gp_dlopen_fn)(uintptr_t)gp_elf_find_glibc("dlopen");
    real_dlmopen = (gp_dlmopen_fn)(uintptr_t)gp_elf_find_glibc("dlmopen");
}

gp_dlsym_fn gp_shim_real_dlsym(void)
{
    pthread_once(&real_once, find_real);
    return real_dlsym;
}

gp_dlopen_fn gp_shim_real_dlopen(void)
{
    pthread_once(&real_once, find_real);
    return real_dlopen;
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
    return (name[0] == 'c' && name[1] == 'u') || (name[0] == 'd' && name[1] == 'l') ||
           (name[0] == 'n' && name[1] == 'v' && name[2] == 'm' && name[3] == 'l');
}

static int library_loaded(int lib)
{
    gp_dlopen_fn open_fn = gp_shim_real_dlopen();
    void *h = open_fn ? open_fn(lib == GP_LIB_CUDA ? "libcuda.so.1" : "libnvidia-ml.so.1",
                                RTLD_LAZY | RTLD_NOLOAD)
                      : NULL;
    if (h) {
        dlclose(h);
    }
    return h != NULL;
}

/* One lookup: libc's dlvsym with a version, else its dlsym. */
typedef struct query {
    void *handle;
    const char *name, *version;
} query;

static void *ask_libc(const query *q)
{
    return q->version ? real_dlvsym(q->handle, q->name, q->version)
                      : real_dlsym(q->handle, q->name);
}

/* The exported dynamic-linking functions are aliases of these, so that the library refers to its
 * own by address: a reference to "dlopen" from here would bind to the first definition in the
 * process (a sanitizer runtime's interceptor in the program), and handing that out for "dlopen"
 * would make the interceptor call itself. */
static void *shim_dlsym(void *restrict handle, const char *restrict name);
static void *shim_dlvsym(void *restrict handle, const char *restrict name,
                         const char *restrict version);
static void *shim_dlopen(const char *file, int mode);
static void *shim_dlmopen(Lmid_t lmid, const char *file, int mode);

GP_EXPORT void *dlsym(void *restrict handle, const char *restrict name)
    __attribute__((alias("shim_dlsym")));
GP_EXPORT void *dlvsym(void *restrict handle, const char *restrict name,
                       const char *restrict version) __attribute__((alias("shim_dlvsym")));
GP_EXPORT void *dlopen(const char *file, int mode) __attribute__((alias("shim_dlopen")));
GP_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
    __attribute__((alias("shim_dlmopen")));

/* Our own dynamic-linking functions, answered for their names. */
static void *own_function(const char *name)
{
    static const struct {
        const char *name;
        gp_voidfn fn;
    } own[] = {{"dlsym", (gp_voidfn)shim_dlsym},
               {"dlvsym", (gp_voidfn)shim_dlvsym},
               {"dlopen", (gp_voidfn)shim_dlopen},
               {"dlmopen", (gp_voidfn)shim_dlmopen}};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        if (same(own[i].name, name)) {
            return (void *)(uintptr_t)own[i].fn;
        }
    }
    return NULL;
}

/* Decides lookups of hooked names and of the dynamic-linking functions: 1 with the answer in
 * *out, 0 to let libc answer. */
static int hooked_answer(const query *q, void **out)
{
    void *mine = own_function(q->name);
    if (mine) {
        if (!ask_libc(q)) {
            return 0; /* the handle does not have it: libc's answer, with its dlerror() */
        }
        *out = mine;
        return 1;
    }
    for (int i = 0; i < GP_FN_COUNT; i++) {
        if (!gp_shim_fns[i].hooked || !same(gp_shim_fns[i].name, q->name)) {
            continue;
        }
        void *found = ask_libc(q);
        void *hook = (void *)(uintptr_t)gp_shim_hooks[i];
        if (!found) {
            return 0;
        }
        /* RTLD_DEFAULT finds our own export even where the real library is absent; answer as if
         * we were not there. */
        *out = found == hook && !library_loaded(gp_shim_fns[i].lib) ? NULL : hook;
        return 1;
    }
    return 0;
}

static void *shim_dlsym(void *restrict handle, const char *restrict name)
{
    gp_dlsym_fn real = gp_shim_real_dlsym();
    if (!real) {
        return NULL;
    }
    /* name is declared nonnull (glibc dereferences it too). */
    if (candidate(name)) {
        query q = {handle, name, NULL};
        void *answer;
        if (hooked_answer(&q, &answer)) {
            return answer;
        }
    }
    GP_TAILCALL return real(handle, name);
}

static void *shim_dlvsym(void *restrict handle, const char *restrict name,
                         const char *restrict version)
{
    gp_shim_real_dlsym();
    gp_dlvsym_fn real = real_dlvsym;
    if (!real || !real_dlsym) {
        return NULL;
    }
    if (candidate(name)) { /* version is declared nonnull */
        query q = {handle, name, version};
        void *answer;
        if (hooked_answer(&q, &answer)) {
            return answer;
        }
    }
    GP_TAILCALL return real(handle, name, version);
}

static void *shim_dlopen(const char *file, int mode)
{
    gp_dlopen_fn real = gp_shim_real_dlopen();
    if (!real) {
        return NULL;
    }
    if ((mode & RTLD_DEEPBIND) && gp_shim_confine_loading()) {
        gp_shim_log_once(GP_EV_DEEPBIND, "event=deepbind_dropped");
        mode &= ~RTLD_DEEPBIND;
    }
    GP_TAILCALL return real(file, mode);
}

/* A refused dlmopen: NULL, with a dlerror() that says why (libc's own message about a file of
 * that name, which cannot exist: it is the only way to set dlerror from outside libc). */
static void *refuse_dlmopen(void)
{
    gp_shim_log_once(GP_EV_DLMOPEN, "event=dlmopen_refused");
    gp_dlopen_fn real = gp_shim_real_dlopen();
    return real ? real("/libgpushare: dlmopen into a new namespace is refused while a GPU limit "
                       "applies",
                       RTLD_LAZY)
                : NULL;
}

static void *shim_dlmopen(Lmid_t lmid, const char *file, int mode)
{
    gp_shim_real_dlsym();
    gp_dlmopen_fn real = real_dlmopen;
    if (!real) {
        return NULL;
    }
    if (lmid != LM_ID_BASE || (mode & RTLD_DEEPBIND)) {
        if (gp_shim_confine_loading()) {
            if (lmid != LM_ID_BASE) {
                return refuse_dlmopen();
            }
            gp_shim_log_once(GP_EV_DEEPBIND, "event=deepbind_dropped");
            mode &= ~RTLD_DEEPBIND;
        }
    }
    GP_TAILCALL return real(lmid, file, mode);
}

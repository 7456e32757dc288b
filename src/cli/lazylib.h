/*
 * Libraries the gpupool program loads only in the commands that call into them. libyaml (YAML
 * output and manifests), libxlsxwriter (gpupool usage -o xlsx) and libcurl (https:// pools; plain
 * http:// goes through evhttp, src/net/http_client_pick_ev.c) are not among the program's
 * DT_NEEDED libraries: every function of theirs the program uses is defined in lazy_yaml.c,
 * lazy_xlsx.c and lazy_curl.c (one row per function) as a forwarder that loads the library on its
 * first call, so a command that needs none of them (gpupool submit, get, cancel, ... against an
 * http:// pool) does not pay for mapping and relocating them at every start. A function of one of
 * these libraries called without a row of its own links the library again:
 * tests/integ/ctl/ctl_cli_lean.py fails then.
 *
 * A library that cannot be loaded is reported once on stderr ("gpupool: cannot load LIB: WHY")
 * and its forwarders return the library's own failure value (0 from the yaml_*_initialize and
 * emit/parse functions, NULL from workbook_new, LXW_ERROR_MEMORY_MALLOC_FAILED from the writers,
 * NULL from curl_easy_init, CURLE_FAILED_INIT from the other curl functions), so the command
 * fails as it would on any other error of that library.
 */
#ifndef GP_CLI_LAZYLIB_H
#define GP_CLI_LAZYLIB_H

typedef struct gp_cli_lazylib {
    const char *soname; /* what dlopen loads, e.g. "libyaml-0.so.2" */
    void *handle;       /* NULL until loaded */
    int failed;         /* the load failed (reported once) */
} gp_cli_lazylib;

/* The address of the function NAME in lib, loading lib on the first call (RTLD_NOW |
 * RTLD_LOCAL: its symbols do not leak into the program's scope). NULL, reported on stderr once
 * per library or symbol, when the library or the symbol cannot be loaded. Not thread-safe: the
 * CLI calls these libraries from its main thread only. */
void *gp_cli_lazy_sym(gp_cli_lazylib *lib, const char *name);

/* A forwarder: the function NAME with the library's own prototype (its header is included
 * first), which looks the real one up in LIB on its first call and passes ARGS on; FAIL is what
 * it returns when the library cannot be loaded. The _VOID form for functions returning nothing.
 * Defined in a file that includes the library's header under `#pragma GCC visibility
 * push(hidden)`, so the forwarders stay out of the program's dynamic symbol table and the loaded
 * library's own calls never reach them. */
#define GP_CLI_LAZY_FN(lib, name, ret, params, args, fail)                                         \
    ret name params                                                                                \
    {                                                                                              \
        static ret(*fn) params;                                                                    \
        if (!fn) {                                                                                 \
            void *p = gp_cli_lazy_sym(&(lib), #name);                                              \
            if (!p) {                                                                              \
                return fail;                                                                       \
            }                                                                                      \
            memcpy(&fn, &p, sizeof(p)); /* POSIX: function pointers convert through memcpy */      \
        }                                                                                          \
        return fn args;                                                                            \
    }

#define GP_CLI_LAZY_VOID(lib, name, params, args)                                                  \
    void name params                                                                               \
    {                                                                                              \
        static void(*fn) params;                                                                   \
        if (!fn) {                                                                                 \
            void *p = gp_cli_lazy_sym(&(lib), #name);                                              \
            if (!p) {                                                                              \
                return;                                                                            \
            }                                                                                      \
            memcpy(&fn, &p, sizeof(p));                                                            \
        }                                                                                          \
        fn args;                                                                                   \
    }

#endif

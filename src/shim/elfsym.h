/*
 * Finding glibc's own dynamic-linking functions without asking the dynamic linker.
 *
 * libgpushare.so exports dlsym, dlvsym, dlopen and dlmopen, so within the library a call to any
 * of them binds to its own export, and asking for libc's through them would go round in a circle.
 * This walks the objects of the base namespace (the dynamic linker's _r_debug list: no function
 * call, so it is safe while a sanitizer runtime is still initialising and resolving its own
 * interceptors through our dlsym) and reads their dynamic symbol tables: the first definition of
 * the name whose default version is a GLIBC_* version (libc.so.6 since glibc 2.34, libdl.so.2
 * before). Our exports are unversioned, and a sanitizer's interceptors too, so neither matches.
 *
 * Never instrumented (see dlsym.c); no libc string functions.
 */
#ifndef GP_SHIM_ELFSYM_H
#define GP_SHIM_ELFSYM_H

/* The address of glibc's default version of the function name; NULL when no loaded object
 * defines one. */
void *gp_elf_find_glibc(const char *name);

#endif

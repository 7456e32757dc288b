/*
 * glibc's dynamic-linking functions from the loaded objects' symbol tables (see elfsym.h).
 *
 * For each object of _r_debug's list: its dynamic section gives the symbol and string tables,
 * the symbol versions (DT_VERSYM, DT_VERDEF) and a hash table (DT_GNU_HASH, else DT_HASH) that
 * leads to the symbols of a name. glibc relocates the table addresses in place when it loads an
 * object, except where the dynamic section is read-only (the vDSO): an address below the
 * object's load address is an offset still to add. Every walk is bounded, so a malformed object
 * cannot hold us in a loop.
 */
#define _GNU_SOURCE
#include "shim/elfsym.h"

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_CHAIN  100000 /* symbols looked at in one hash chain, at most */
#define MAX_VERDEF 1000   /* version definitions looked at, at most */

typedef struct tables {
    uintptr_t base;
    const ElfW(Sym) * sym;
    const char *str;
    const ElfW(Half) * versym;
    const ElfW(Verdef) * verdef;
    const uint32_t *gnu_hash;
    const uint32_t *sysv_hash;
} tables;

static int same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static int glibc_version(const char *v)
{
    const char *p = "GLIBC_";
    while (*p && *v == *p) {
        p++;
        v++;
    }
    return *p == '\0';
}

static uintptr_t address(uintptr_t base, ElfW(Addr) v)
{
    return v < base ? base + v : v;
}

static int read_tables(const struct link_map *m, tables *t)
{
    *t = (tables){.base = m->l_addr};
    for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
        uintptr_t a = address(t->base, d->d_un.d_ptr);
        switch (d->d_tag) {
        case DT_SYMTAB:
            t->sym = (const ElfW(Sym) *)a;
            break;
        case DT_STRTAB:
            t->str = (const char *)a;
            break;
        case DT_VERSYM:
            t->versym = (const ElfW(Half) *)a;
            break;
        case DT_VERDEF:
            t->verdef = (const ElfW(Verdef) *)a;
            break;
        case DT_GNU_HASH:
            t->gnu_hash = (const uint32_t *)a;
            break;
        case DT_HASH:
            t->sysv_hash = (const uint32_t *)a;
            break;
        default:
            break;
        }
    }
    return t->sym && t->str && t->versym && t->verdef && (t->gnu_hash || t->sysv_hash);
}

/* The name of version index ndx, or NULL. */
static const char *version_name(const tables *t, unsigned ndx)
{
    const ElfW(Verdef) *v = t->verdef;
    for (int i = 0; v && i < MAX_VERDEF; i++) {
        if (v->vd_ndx == ndx && v->vd_aux) {
            const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)v + v->vd_aux);
            return t->str + a->vda_name;
        }
        if (!v->vd_next) {
            break;
        }
        v = (const ElfW(Verdef) *)((const char *)v + v->vd_next);
    }
    return NULL;
}

/* Symbol i, if it defines name at glibc's default version: its address. */
static void *match(const tables *t, uint32_t i, const char *name)
{
    const ElfW(Sym) *s = &t->sym[i];
    if (s->st_shndx == SHN_UNDEF || (s->st_info & 0xf) != STT_FUNC ||
        !same(t->str + s->st_name, name) || (t->versym[i] & 0x8000)) {
        return NULL;
    }
    const char *v = version_name(t, t->versym[i] & 0x7fff);
    return v && glibc_version(v) ? (void *)(t->base + s->st_value) : NULL;
}

static void *lookup_gnu(const tables *t, const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h = h * 33 + *p;
    }
    const uint32_t *ht = t->gnu_hash;
    uint32_t nbuckets = ht[0], symoffset = ht[1], bloom_size = ht[2];
    if (nbuckets == 0) {
        return NULL;
    }
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(ht + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset) {
        return NULL;
    }
    for (int n = 0; n < MAX_CHAIN; n++, i++) {
        uint32_t h2 = chain[i - symoffset];
        void *f = (h | 1) == (h2 | 1) ? match(t, i, name) : NULL;
        if (f) {
            return f;
        }
        if (h2 & 1) {
            break;
        }
    }
    return NULL;
}

static void *lookup_sysv(const tables *t, const char *name)
{
    uint32_t h = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h = (h << 4) + *p;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    const uint32_t *ht = t->sysv_hash;
    uint32_t nbucket = ht[0], nchain = ht[1];
    if (nbucket == 0) {
        return NULL;
    }
    const uint32_t *bucket = ht + 2, *chain = bucket + nbucket;
    uint32_t i = bucket[h % nbucket];
    for (int n = 0; i != 0 && i < nchain && n < MAX_CHAIN; n++, i = chain[i]) {
        void *f = match(t, i, name);
        if (f) {
            return f;
        }
    }
    return NULL;
}

void *gp_elf_find_glibc(const char *name)
{
    int n = 0;
    for (const struct link_map *m = _r_debug.r_map; m && n < MAX_VERDEF; m = m->l_next, n++) {
        tables t;
        if (!read_tables(m, &t)) {
            continue;
        }
        void *f = t.gnu_hash ? lookup_gnu(&t, name) : lookup_sysv(&t, name);
        if (f) {
            return f;
        }
    }
    return NULL;
}

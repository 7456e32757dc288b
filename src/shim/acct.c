/*
 * Accounting: which allocation holds how many bytes of which device, and the charges against
 * the region.
 *
 * Frees do not carry sizes, so every tracked allocation is recorded in a hash table keyed by
 * (kind, pointer or handle): open addressing, linear probing, deletion by backward shift (no
 * tombstones), at most half full. One mutex guards it; it is never held across a driver call nor
 * while the region's lock is taken.
 *
 * Protocol of an allocation: admit (reserve in the region: the check and the charge are one step
 * under the region's lock, so concurrent threads and processes cannot both pass), call the
 * driver, settle (record, or give the reservation back). Of a free: take the record out, call the
 * driver, finish (release the usage, or put the record back). The usage therefore never drops
 * before the driver has freed the memory, and a new allocation at a just-freed address finds the
 * key free.
 *
 * Devices whose limit is GP_SHARE_UNLIMITED are neither charged nor recorded.
 */
#include "shim/shim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim/region.h"

typedef struct entry {
    uint64_t key;
    uint64_t bytes;
    uint64_t aux;
    int32_t dev;
    uint8_t kind; /* 0: empty */
    uint8_t released;
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry *tab;
static size_t cap, count;

/* ---- the table (under mu) ---- */

static uint64_t hash(gp_key_kind kind, uint64_t key)
{
    uint64_t z = key ^ ((uint64_t)kind << 58);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static long find(gp_key_kind kind, uint64_t key)
{
    if (!tab) {
        return -1;
    }
    size_t mask = cap - 1;
    for (size_t i = hash(kind, key) & mask;; i = (i + 1) & mask) {
        if (tab[i].kind == 0) {
            return -1;
        }
        if (tab[i].kind == kind && tab[i].key == key) {
            return (long)i;
        }
    }
}

static void place(entry *t, size_t c, const entry *e)
{
    size_t mask = c - 1;
    size_t i = hash(e->kind, e->key) & mask;
    while (t[i].kind != 0) {
        i = (i + 1) & mask;
    }
    t[i] = *e;
}

static int grow(void)
{
    size_t ncap = cap ? cap * 2 : 256;
    entry *nt = calloc(ncap, sizeof(*nt));
    if (!nt) {
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < cap; i++) {
        if (tab[i].kind != 0) {
            place(nt, ncap, &tab[i]);
        }
    }
    free(tab);
    tab = nt;
    cap = ncap;
    return 0;
}

static void erase(size_t i)
{
    size_t mask = cap - 1;
    for (size_t j = (i + 1) & mask; tab[j].kind != 0; j = (j + 1) & mask) {
        size_t home = hash(tab[j].kind, tab[j].key) & mask;
        /* Move j back into the hole at i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            tab[i] = tab[j];
            i = j;
        }
    }
    tab[i].kind = 0;
    count--;
}

/* Inserts e; an existing record with the same key is replaced and returned in *old (the driver
 * reused an address whose free we did not see, e.g. after cuCtxDestroy). */
static int insert(const entry *e, entry *old)
{
    old->kind = 0;
    long at = find(e->kind, e->key);
    if (at >= 0) {
        *old = tab[at];
        tab[at] = *e;
        return 0;
    }
    if ((count + 1) * 2 > cap && grow() != 0) {
        return GP_ENOMEM;
    }
    place(tab, cap, e);
    count++;
    return 0;
}

/* ---- region charges ---- */

int gp_acct_limited(int dev, uint64_t *limit)
{
    if (gp_shim_mode() != GP_MODE_ON) {
        return 0;
    }
    gp_share_region *r = gp_shim_region();
    if (!r) {
        return 0;
    }
    uint64_t l = gp_share_region_limit(r, dev);
    if (l == GP_SHARE_UNLIMITED) {
        return 0;
    }
    *limit = l;
    return 1;
}

static void release(int dev, uint64_t bytes)
{
    int slot = gp_shim_slot();
    if (slot >= 0 && bytes > 0) {
        gp_share_region_release(gp_shim_region(), slot, dev, bytes);
    }
}

/* Enforcement failed for this call: the policy decides. */
static int on_failure(gp_charge *c)
{
    c->tracked = 0;
    return gp_shim_fail_closed() ? GP_ENOSPC : 0;
}

int gp_acct_admit(int dev, uint64_t bytes, gp_charge *c)
{
    c->dev = dev;
    c->bytes = bytes;
    c->tracked = 0;
    int m = gp_shim_mode();
    if (m == GP_MODE_OFF) {
        return 0;
    }
    if (m == GP_MODE_FAILED) {
        gp_shim_report_failure();
        return on_failure(c);
    }
    uint64_t limit;
    if (dev < 0 || dev >= GP_SHARE_MAX_DEVICES) {
        gp_shim_log_once(GP_EV_DEVICE, "event=device_out_of_range dev=%d", dev);
        return on_failure(c);
    }
    if (!gp_acct_limited(dev, &limit)) {
        return 0;
    }
    int slot = gp_shim_slot();
    if (slot < 0) {
        return on_failure(c);
    }
    int rc = gp_share_region_reserve(gp_shim_region(), slot, dev, bytes);
    if (rc == GP_ESTATE) {
        /* Our slot was taken for a dead process's (another pid namespace?): claim a new one. */
        gp_shim_slot_lost(slot);
        slot = gp_shim_slot();
        rc = slot < 0 ? GP_ESTATE : gp_share_region_reserve(gp_shim_region(), slot, dev, bytes);
    }
    if (rc == GP_ENOSPC) {
        if (gp_shim_log_wanted(GP_EV_REFUSED)) {
            uint64_t used = 0;
            gp_share_region_usage(gp_shim_region(), dev, &used);
            gp_shim_log_once(
                GP_EV_REFUSED, "event=alloc_refused dev=%d size=%llu usage=%llu limit=%llu", dev,
                (unsigned long long)bytes, (unsigned long long)used, (unsigned long long)limit);
        }
        return GP_ENOSPC;
    }
    if (rc != 0) {
        gp_shim_log_once(GP_EV_LOCK, "event=region_error error=%d policy=%s", rc,
                         gp_shim_fail_closed() ? "closed" : "open");
        return on_failure(c);
    }
    c->tracked = 1;
    return 0;
}

int gp_acct_grow(gp_charge *c, uint64_t total)
{
    if (!c->tracked || total <= c->bytes) {
        if (c->tracked && total < c->bytes) {
            release(c->dev, c->bytes - total);
            c->bytes = total;
        }
        return 0;
    }
    gp_charge extra;
    int rc = gp_acct_admit(c->dev, total - c->bytes, &extra);
    if (rc == 0 && extra.tracked) {
        c->bytes = total;
    }
    return rc;
}

/* Puts e into the table; an entry it replaces (the driver reused the key: its free went past
 * us) gives its bytes back. 0, or GP_ENOMEM when the table is full (logged once). */
static int record(const entry *e)
{
    entry old;
    pthread_mutex_lock(&mu);
    int rc = insert(e, &old);
    pthread_mutex_unlock(&mu);
    if (old.kind != 0) {
        release(old.dev, old.bytes);
    }
    if (rc != 0) {
        gp_shim_log_once(GP_EV_TABLE, "event=table_full policy=%s",
                         gp_shim_fail_closed() ? "closed" : "open");
        return GP_ENOMEM;
    }
    return 0;
}

int gp_acct_settle(gp_charge *c, int ok, gp_key_kind kind, uint64_t key)
{
    if (!c->tracked) {
        return 0;
    }
    if (!ok) {
        release(c->dev, c->bytes);
        c->tracked = 0;
        return 0;
    }
    entry e = {.key = key, .bytes = c->bytes, .dev = c->dev, .kind = (uint8_t)kind};
    int rc = record(&e);
    if (rc != 0) {
        if (gp_shim_fail_closed()) {
            release(c->dev, c->bytes);
            c->tracked = 0;
            return GP_ENOMEM;
        }
        /* Open: the bytes stay charged until the process exits (we cannot see their free). */
    }
    return 0;
}

void gp_acct_take(gp_key_kind kind, uint64_t key, gp_taken *t)
{
    memset(t, 0, sizeof(*t));
    if (gp_shim_mode() != GP_MODE_ON) {
        return;
    }
    pthread_mutex_lock(&mu);
    long at = find(kind, key);
    if (at >= 0) {
        t->found = 1;
        t->kind = kind;
        t->key = key;
        t->bytes = tab[at].bytes;
        t->aux = tab[at].aux;
        t->dev = tab[at].dev;
        erase((size_t)at);
    }
    pthread_mutex_unlock(&mu);
}

void gp_acct_finish(gp_taken *t, int ok)
{
    if (!t->found) {
        return;
    }
    if (ok) {
        release(t->dev, t->bytes);
        return;
    }
    entry e = {
        .key = t->key, .bytes = t->bytes, .aux = t->aux, .dev = t->dev, .kind = (uint8_t)t->kind};
    record(&e);
}

/* ---- pools ---- */

void gp_acct_pool_set(CUmemoryPool pool, int dev)
{
    if (gp_shim_mode() != GP_MODE_ON || !pool) {
        return;
    }
    entry e = {.key = (uint64_t)(uintptr_t)pool, .dev = dev, .kind = GP_KEY_POOL};
    entry old;
    pthread_mutex_lock(&mu);
    insert(&e, &old); /* a pool we cannot record is charged to its stream's device */
    pthread_mutex_unlock(&mu);
}

int gp_acct_pool_device(CUmemoryPool pool, int *dev)
{
    int rc = -1;
    pthread_mutex_lock(&mu);
    long at = find(GP_KEY_POOL, (uint64_t)(uintptr_t)pool);
    if (at >= 0) {
        *dev = tab[at].dev;
        rc = 0;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* ---- virtual memory management ---- */

static void unref(uint64_t h, uint64_t freed[GP_SHARE_MAX_DEVICES]);
static void release_all(const uint64_t freed[GP_SHARE_MAX_DEVICES]);

void gp_acct_vmm_map(CUmemGenericAllocationHandle h, CUdeviceptr ptr, size_t size)
{
    if (gp_shim_mode() != GP_MODE_ON) {
        return;
    }
    uint64_t freed[GP_SHARE_MAX_DEVICES] = {0};
    pthread_mutex_lock(&mu);
    if (find(GP_KEY_VMM, h) >= 0) {
        entry m = {.key = ptr, .bytes = size, .aux = h, .kind = GP_KEY_MAP};
        entry old;
        /* Count the mapping only once it is recorded, so an unmap always finds what it undoes. */
        if (insert(&m, &old) == 0) {
            tab[find(GP_KEY_VMM, h)].aux++; /* looked up again: insert may move the table */
        }
        if (old.kind == GP_KEY_MAP) {
            unref(old.aux, freed); /* a mapping whose unmap we did not see */
        }
    }
    pthread_mutex_unlock(&mu);
    release_all(freed);
}

/* Drops one mapping of handle h; a released handle without mappings is then freed: its bytes
 * are added to *freed (per device). */
static void unref(uint64_t h, uint64_t freed[GP_SHARE_MAX_DEVICES])
{
    long at = find(GP_KEY_VMM, h);
    if (at < 0) {
        return;
    }
    if (tab[at].aux > 0) {
        tab[at].aux--;
    }
    if (tab[at].aux == 0 && tab[at].released) {
        int dev = tab[at].dev;
        if (dev >= 0 && dev < GP_SHARE_MAX_DEVICES) {
            freed[dev] += tab[at].bytes;
        }
        erase((size_t)at);
    }
}

static void release_all(const uint64_t freed[GP_SHARE_MAX_DEVICES])
{
    for (int d = 0; d < GP_SHARE_MAX_DEVICES; d++) {
        release(d, freed[d]);
    }
}

void gp_acct_vmm_unmap(CUdeviceptr ptr, size_t size)
{
    if (gp_shim_mode() != GP_MODE_ON) {
        return;
    }
    uint64_t freed[GP_SHARE_MAX_DEVICES] = {0};
    uint64_t end = size > UINT64_MAX - ptr ? UINT64_MAX : ptr + size;
    pthread_mutex_lock(&mu);
    /* One unmap may cover several adjacent mappings; walk them from the start. */
    for (uint64_t p = ptr; p < end;) {
        long at = find(GP_KEY_MAP, p);
        if (at < 0) {
            break;
        }
        uint64_t len = tab[at].bytes, h = tab[at].aux;
        erase((size_t)at);
        unref(h, freed);
        if (len == 0) {
            break;
        }
        p = len > UINT64_MAX - p ? UINT64_MAX : p + len;
    }
    pthread_mutex_unlock(&mu);
    release_all(freed);
}

void gp_acct_vmm_release_begin(CUmemGenericAllocationHandle h, gp_taken *t)
{
    memset(t, 0, sizeof(*t));
    if (gp_shim_mode() != GP_MODE_ON) {
        return;
    }
    pthread_mutex_lock(&mu);
    long at = find(GP_KEY_VMM, h);
    if (at >= 0) {
        t->kind = GP_KEY_VMM;
        t->key = h;
        if (tab[at].aux > 0) {
            /* Still mapped: the memory lives on until the last unmap, and stays charged. */
            tab[at].released = 1;
            t->aux = 1; /* marked, not taken */
        } else {
            t->found = 1;
            t->bytes = tab[at].bytes;
            t->dev = tab[at].dev;
            erase((size_t)at);
        }
    }
    pthread_mutex_unlock(&mu);
}

void gp_acct_vmm_release_end(gp_taken *t, int ok)
{
    if (t->found) {
        gp_acct_finish(t, ok);
        return;
    }
    if (t->aux && !ok) {
        pthread_mutex_lock(&mu);
        long at = find(GP_KEY_VMM, t->key);
        if (at >= 0) {
            tab[at].released = 0;
        }
        pthread_mutex_unlock(&mu);
    }
}

/* ---- reporting ---- */

int gp_acct_usage(int dev, uint64_t *usage)
{
    gp_share_region *r = gp_shim_region();
    if (!r) {
        return GP_ESTATE;
    }
    return gp_share_region_usage(r, dev, usage);
}

/* ---- fork ---- */

void gp_acct_atfork_prepare(void)
{
    pthread_mutex_lock(&mu);
}

void gp_acct_atfork_parent(void)
{
    pthread_mutex_unlock(&mu);
}

void gp_acct_atfork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    free(tab);
    tab = NULL;
    cap = count = 0;
}

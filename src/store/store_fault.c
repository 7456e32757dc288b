/*
 * The fault-injecting wrapper (store_fault.h). Its operations are generated from the rows of
 * GP_STORE_OPS: each counts the call by its class, fails it when the plan says so, and
 * otherwise hands it to the wrapped store.
 */
#include "store/store_fault.h"
#include "store/store_ops.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef struct fault_store {
    gp_store base;
    gp_store *inner;
    _Atomic int count; /* gp_store_fault_count */
    _Atomic uint64_t nth;
    _Atomic int sticky;
    _Atomic uint64_t calls, injected;
} fault_store;

static const gp_store_ops fault_ops;

static fault_store *as_fault(const gp_store *s)
{
    return s && s->ops == &fault_ops ? (fault_store *)s : NULL;
}

static int counted(int count, gp_store_op_class cls)
{
    switch (count) {
    case GP_STORE_FAULT_WRITES:
        return cls != GP_STORE_OP_READ;
    case GP_STORE_FAULT_COMMITS:
        return cls == GP_STORE_OP_COMMIT;
    default:
        return 1;
    }
}

/* Counts a call of op; GP_EIO with d naming op and its number when the plan fails it. */
static int hit(fault_store *f, gp_store_op_class cls, const char *op, gp_diag *d)
{
    if (!counted(atomic_load(&f->count), cls)) {
        return 0;
    }
    uint64_t n = atomic_fetch_add(&f->calls, 1) + 1, nth = atomic_load(&f->nth);
    if (nth == 0 || n < nth || (n > nth && !atomic_load(&f->sticky))) {
        return 0;
    }
    atomic_fetch_add(&f->injected, 1);
    if (cls == GP_STORE_OP_COMMIT) {
        f->inner->ops->rollback(f->inner); /* a failed commit stores nothing */
    }
    return gp_diag_set(d, GP_EIO, "store: injected fault: %s (call %llu)", op,
                       (unsigned long long)n);
}

/* Each interposer counts its call, then passes it on with s the wrapped store. */
#define FAULT_OP(cls, name, params, args)                                                          \
    static int fault_##name params                                                                 \
    {                                                                                              \
        fault_store *fault_ = (fault_store *)s;                                                    \
        int rc = hit(fault_, GP_STORE_OP_##cls, #name, d);                                         \
        if (rc < 0) {                                                                              \
            return rc;                                                                             \
        }                                                                                          \
        s = fault_->inner;                                                                         \
        return s->ops->name args;                                                                  \
    }
GP_STORE_OPS(FAULT_OP)
#undef FAULT_OP

static int fault_version(gp_store *s)
{
    gp_store *in = ((fault_store *)s)->inner;
    return in->ops->version(in);
}

static void fault_rollback(gp_store *s)
{
    gp_store *in = ((fault_store *)s)->inner;
    in->ops->rollback(in);
}

static void fault_savepoint_rollback(gp_store *s)
{
    gp_store *in = ((fault_store *)s)->inner;
    in->ops->savepoint_rollback(in);
}

static void fault_close(gp_store *s)
{
    fault_store *f = (fault_store *)s;
    f->inner->ops->close(f->inner);
    free(f);
}

static const gp_store_ops fault_ops = {
    .name = "fault",
#define FAULT_MEMBER(cls, name, params, args) .name = fault_##name,
    GP_STORE_OPS(FAULT_MEMBER)
#undef FAULT_MEMBER
        .version = fault_version,
    .rollback = fault_rollback,
    .savepoint_rollback = fault_savepoint_rollback,
    .close = fault_close,
};

int gp_store_fault_wrap(gp_store *inner, const gp_store_fault_plan *plan, gp_store **out,
                        gp_diag *d)
{
    *out = NULL;
    fault_store *f = calloc(1, sizeof(*f));
    if (!f) {
        return gp_diag_set(d, GP_ENOMEM, "store: out of memory");
    }
    f->base.ops = &fault_ops;
    f->inner = inner;
    gp_store_fault_arm(&f->base, plan);
    *out = &f->base;
    return 0;
}

int gp_store_fault_arm(gp_store *s, const gp_store_fault_plan *plan)
{
    fault_store *f = as_fault(s);
    if (!f) {
        return GP_EINVAL;
    }
    static const gp_store_fault_plan none;
    plan = plan ? plan : &none;
    atomic_store(&f->nth, 0); /* no failure while the plan changes */
    atomic_store(&f->count, (int)plan->count);
    atomic_store(&f->sticky, plan->sticky != 0);
    atomic_store(&f->calls, 0);
    atomic_store(&f->injected, 0);
    atomic_store(&f->nth, plan->nth);
    return 0;
}

uint64_t gp_store_fault_calls(const gp_store *s)
{
    fault_store *f = as_fault(s);
    return f ? atomic_load(&f->calls) : 0;
}

uint64_t gp_store_fault_injected(const gp_store *s)
{
    fault_store *f = as_fault(s);
    return f ? atomic_load(&f->injected) : 0;
}

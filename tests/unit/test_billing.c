/*
 * Billing's inputs: the price table file (src/ctl/prices.c) — a good table read exactly, and bad
 * ones refused with the file, the line and the field — and the usage ledger of the store
 * (src/store/sqlite_usage.c): one row per placement, closed once, never deleted or changed after
 * closing, found by range and tenant.
 */
#include "ctl/prices.h"
#include "store/store.h"
#include "tests/unit/harness.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the price table ---- */

static const char good[] = "# prices\n"
                           "currency: USD\n"
                           "shared_discount: 0.2\n"
                           "cpu_core_hour: 0.04\n"
                           "memory_gib_hour: 0.005\n"
                           "prices:\n"
                           "  - model: A100-80GB\n"
                           "    from: 2024-01-01\n"
                           "    hourly: 2.50\n"
                           "    fraction_hourly: 2\n"
                           "    mig: {1g.10gb: 0.45, 3g.40gb: 1.2}\n"
                           "  - model: A100-80GB\n"
                           "    from: 2024-06-01T00:00:00Z\n"
                           "    hourly: \"3\"\n"
                           "  - model: H100-80GB\n"
                           "    from: 2024-01-01\n"
                           "    cost: {purchase: 30000, depreciation_months: 36, power_w: 700,\n"
                           "           electricity_kwh: 0.15}\n";

static void test_good_table(void **state)
{
    (void)state;
    ctl_prices *t = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = ctl_prices_parse("p.yaml", good, strlen(good), &t, &d);
    if (rc != 0) {
        fail_msg("%s", d.msg);
    }
    assert_string_equal(t->p.currency, "USD");
    assert_int_equal(t->p.shared_discount_ppm, 200000);
    assert_int_equal(t->p.cpu_core_hour_micro, 40000);
    assert_int_equal(t->p.memory_gib_hour_micro, 5000);
    assert_int_equal(t->p.nentries, 3);
    const gp_meter_price *e = t->p.entries;
    int64_t jan, jun;
    assert_int_equal(gp_meter_parse_time("2024-01-01", &jan), 0);
    assert_int_equal(gp_meter_parse_time("2024-06-01", &jun), 0);
    assert_string_equal(e[0].model, "A100-80GB");
    assert_int_equal(e[0].from_ms, jan);
    assert_int_equal(e[0].hourly_micro, 2500000);
    assert_int_equal(e[0].fraction_hourly_micro, 2000000);
    assert_int_equal(e[0].nmig, 2);
    assert_string_equal(e[0].mig[0].profile, "1g.10gb");
    assert_int_equal(e[0].mig[0].hourly_micro, 450000);
    assert_int_equal(e[0].mig[1].hourly_micro, 1200000);
    assert_int_equal(e[1].from_ms, jun);
    assert_int_equal(e[1].hourly_micro, 3000000);
    assert_int_equal(e[1].fraction_hourly_micro, GP_METER_NONE_PRICE);
    /* 30000 / (36 x 730) + 0.7 x 0.15 = 1.246552... */
    assert_int_equal(e[2].hourly_micro, 1246553);
    ctl_prices_free(t);
}

typedef struct bad_case {
    const char *text;
    int code;
    const char *msg; /* the message contains it */
} bad_case;

#define HEAD "currency: USD\nprices:\n  - model: A100\n    from: 2024-01-01\n"

static const bad_case bad_cases[] = {
    {HEAD "    hourly: -2\n", GP_EINVAL,
     "t.yaml:5: prices[0].hourly: must be a decimal number >= 0 with at most 6 fraction digits"},
    {HEAD "    hourly: 0.1234567\n", GP_EINVAL, "t.yaml:5: prices[0].hourly: must be a decimal"},
    {HEAD "    hourly: 2e3\n", GP_EINVAL, "t.yaml:5: prices[0].hourly: must be a decimal"},
    {HEAD "    hourly: [1]\n", GP_EINVAL, "t.yaml:5: prices[0].hourly: must be a decimal"},
    {"currency: USD\nprices:\n  - model: A100\n    hourly: 2\n", GP_EINVAL,
     "t.yaml:3: prices[0]: from: required"},
    {"currency: USD\nprices:\n  - from: 2024-01-01\n    hourly: 2\n", GP_EINVAL,
     "t.yaml:3: prices[0]: model: required"},
    {HEAD, GP_EINVAL, "t.yaml:3: prices[0]: give either hourly or cost"},
    {HEAD "    hourly: 2\n    cost: {purchase: 1, depreciation_months: 1}\n", GP_EINVAL,
     "t.yaml:3: prices[0]: give either hourly or cost"},
    {HEAD "    hourly: 2\n    colour: red\n", GP_EINVAL, "t.yaml:6: unknown key prices[0].colour"},
    {"currency: USD\nprices:\n  - model: A100\n    from: 2024-02-30\n    hourly: 2\n", GP_EINVAL,
     "t.yaml:4: prices[0].from: must be a date (2024-05-01) or an RFC 3339 time"},
    {HEAD "    hourly: 2\n    mig: {big: 1}\n", GP_EINVAL,
     "t.yaml:6: prices[0].mig.big: not a MIG profile name"},
    {HEAD "    hourly: 2\n    mig: [1]\n", GP_EINVAL,
     "t.yaml:6: prices[0].mig: must be a mapping of MIG profile to price"},
    {HEAD "    cost: {purchase: 1, depreciation_months: 0}\n", GP_EINVAL,
     "t.yaml:5: prices[0].cost.depreciation_months: must be a whole number of months"},
    {HEAD "    cost: {depreciation_months: 36}\n", GP_EINVAL,
     "t.yaml:5: prices[0].cost: purchase: required"},
    {HEAD "    cost: {purchase: 1, depreciation_months: 3, overhead: x}\n", GP_EINVAL,
     "t.yaml:5: prices[0].cost.overhead: must be a decimal"},
    {"currency: USD\nshared_discount: 1.5\n", GP_EINVAL,
     "t.yaml:2: shared_discount: must be at most 1"},
    {"prices: []\n", GP_EINVAL, "t.yaml:1: currency: required"},
    {"currency: US$\n", GP_EINVAL, "t.yaml:1: currency: must be a currency code"},
    {"currency: USD\ncurrency: EUR\n", GP_EINVAL, "t.yaml:2: currency: given twice"},
    {"currency: USD\nprices: {model: A100}\n", GP_EINVAL,
     "t.yaml:2: prices: must be a list of prices"},
    {HEAD "    hourly: 2\n  - model: A100\n    from: 2024-01-01T00:00:00Z\n    hourly: 3\n",
     GP_EINVAL, "t.yaml:6: prices[1]: prices[0] has the same model and from"},
    {"currency: &c USD\ncpu_core_hour: *c\n", GP_EINVAL,
     "cpu_core_hour: anchors and aliases are not allowed"},
    {"currency: USD\nprices: [\n", GP_EPARSE, "t.yaml:"},
    {"", GP_EINVAL, "t.yaml: empty"},
    {"- 1\n", GP_EINVAL, "t.yaml:1: must be a mapping"},
    {"currency: USD\n---\ncurrency: EUR\n", GP_EINVAL, "t.yaml:2: one YAML document only"},
};

static void test_bad_tables(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const bad_case *c = &bad_cases[i];
        ctl_prices *t = (ctl_prices *)&t; /* must come back NULL */
        gp_diag d;
        gp_diag_clear(&d);
        int rc = ctl_prices_parse("t.yaml", c->text, strlen(c->text), &t, &d);
        if (rc != c->code || t != NULL || !strstr(d.msg, c->msg)) {
            fail_msg("case %zu: got %s \"%s\", want %s \"%s\"", i, gp_strerror_name(rc), d.msg,
                     gp_strerror_name(c->code), c->msg);
        }
    }
    ctl_prices *t;
    gp_diag d;
    assert_int_equal(ctl_prices_load("/nonexistent/prices.yaml", &t, &d), GP_ENOENT);
    assert_null(t);
}

static void test_load_file(void **state)
{
    (void)state;
    char path[] = "/tmp/gpupool-prices.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, good, strlen(good)), (ssize_t)strlen(good));
    close(fd);
    ctl_prices *t = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = ctl_prices_load(path, &t, &d);
    unlink(path);
    if (rc != 0) {
        fail_msg("%s", d.msg);
    }
    assert_int_equal(t->p.nentries, 3);
    ctl_prices_free(t);
}

/* ---- the ledger ---- */

typedef struct seen {
    int n;
    int64_t ids[16];
    gp_usage_rec last;
} seen;

static int see(void *ctx, const gp_usage_rec *r)
{
    seen *s = ctx;
    if (s->n < 16) {
        s->ids[s->n] = r->id;
    }
    s->n++;
    s->last = *r;
    return 0;
}

static gp_usage_rec row(int64_t job, int replica, int64_t epoch, int64_t tenant, int64_t start)
{
    gp_usage_rec r;
    memset(&r, 0, sizeof(r));
    r.job_id = job;
    r.replica = replica;
    r.epoch = epoch;
    r.tenant_id = tenant;
    snprintf(r.tenant, sizeof(r.tenant), "t%lld", (long long)tenant);
    snprintf(r.queue, sizeof(r.queue), "default");
    r.node_id = 1;
    snprintf(r.node, sizeof(r.node), "n0");
    snprintf(r.model, sizeof(r.model), "A100");
    snprintf(r.kind, sizeof(r.kind), "fraction");
    r.gpus = 1;
    r.milli = 500;
    r.cpu_milli = 2000;
    r.memory_mib = 4096;
    r.start_ms = start;
    return r;
}

static void test_ledger(void **state)
{
    (void)state;
    char dir[] = "/tmp/gpupool-ledger.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/state.db", dir);
    gp_store *s;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_store_open(path, &s, &d), 0);

    assert_int_equal(gp_store_begin(s, &d), 0);
    gp_usage_rec a = row(1, 0, 5, 1, 1000), b = row(2, 0, 6, 2, 3000);
    assert_int_equal(gp_store_usage_open(s, &a, &d), 0);
    assert_true(a.id > 0);
    assert_int_equal(gp_store_usage_open(s, &b, &d), 0);
    gp_usage_rec again = row(1, 0, 5, 1, 2000);
    assert_int_equal(gp_store_usage_open(s, &again, &d), GP_EEXIST); /* one row per placement */
    assert_int_equal(gp_store_usage_set_used(s, 1, 0, 5, 700, &d), 0);
    assert_int_equal(gp_store_usage_set_used(s, 1, 0, 5, 300, &d), 0); /* never lowered */
    assert_int_equal(gp_store_usage_close(s, 1, 0, 5, 5000, 500, &d), 0);
    assert_int_equal(gp_store_usage_close(s, 1, 0, 5, 6000, 900, &d), GP_ENOENT); /* once */
    assert_int_equal(gp_store_usage_set_used(s, 1, 0, 5, 900, &d), 0);            /* closed: kept */
    assert_int_equal(gp_store_usage_close(s, 2, 0, 7, 6000, 0, &d), GP_ENOENT);   /* no such */
    assert_int_equal(gp_store_commit(s, &d), 0);

    /* Range [from, to): a row counts when it starts before to and ends after from (or is open). */
    seen x = {0};
    gp_usage_filter f = {.from_ms = 0, .to_ms = 2000};
    assert_int_equal(gp_store_usage_each(s, &f, see, &x, &d), 0);
    assert_int_equal(x.n, 1);
    assert_int_equal(x.last.end_ms, 5000);
    assert_int_equal(x.last.used_gpu_milli_ms, 700);
    assert_string_equal(x.last.kind, "fraction");
    assert_int_equal(x.last.milli, 500);
    assert_int_equal(x.last.memory_mib, 4096);
    x = (seen){0};
    f = (gp_usage_filter){.from_ms = 5000, .to_ms = INT64_MAX};
    assert_int_equal(gp_store_usage_each(s, &f, see, &x, &d), 0);
    assert_int_equal(x.n, 1); /* a ends at 5000: not in [5000, ...) */
    assert_int_equal(x.ids[0], b.id);
    assert_int_equal(x.last.end_ms, 0);
    x = (seen){0};
    f = (gp_usage_filter){.from_ms = 0, .to_ms = INT64_MAX, .tenant_id = 1};
    assert_int_equal(gp_store_usage_each(s, &f, see, &x, &d), 0);
    assert_int_equal(x.n, 1);
    assert_int_equal(x.ids[0], a.id);
    x = (seen){0};
    f = (gp_usage_filter){.open_only = 1};
    assert_int_equal(gp_store_usage_each(s, &f, see, &x, &d), 0);
    assert_int_equal(x.n, 1);
    assert_int_equal(x.ids[0], b.id);

    /* An end before the start is taken as the start. */
    assert_int_equal(gp_store_begin(s, &d), 0);
    assert_int_equal(gp_store_usage_close(s, 2, 0, 6, 10, 0, &d), 0);
    assert_int_equal(gp_store_commit(s, &d), 0);
    x = (seen){0};
    f = (gp_usage_filter){.from_ms = 0, .to_ms = INT64_MAX, .tenant_id = 2};
    assert_int_equal(gp_store_usage_each(s, &f, see, &x, &d), 0);
    assert_int_equal(x.last.end_ms, 3000);
    gp_store_close(s);

    /* Whoever opens the database: closed rows are final and rows are never deleted. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db, "UPDATE usage SET end_ms = end_ms + 1", NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db, "DELETE FROM usage", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_table),
        cmocka_unit_test(test_bad_tables),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_ledger),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

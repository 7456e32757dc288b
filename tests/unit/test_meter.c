/*
 * The metering math of libgpcore (gpupool/meter.h), on a controlled clock: every time is a
 * parameter, so each expectation is exact to the millisecond and to the cent.
 *
 * Fixed cases check clipping, splitting at month, week and day ends, price changes inside an
 * interval, the shared-GPU discount and fraction prices, MIG prices, CPU and memory prices and
 * the cost model. Randomized cases (seeded; GP_TEST_SEED=S runs one seed, every seed is printed)
 * check that every grouping and period gives rows that add up to the same total, to the cent,
 * and compare the totals with a naive minute-by-minute computation.
 */
#include "gpupool/meter.h"
#include "gpupool/rng.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define MIN  INT64_C(60000)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)

static int64_t at(const char *s)
{
    int64_t t = 0;
    if (gp_meter_parse_time(s, &t) != 0) {
        fail_msg("bad time %s", s);
    }
    return t;
}

static int64_t micro(const char *s)
{
    int64_t v = 0;
    if (gp_meter_parse_micro(s, &v) != 0) {
        fail_msg("bad decimal %s", s);
    }
    return v;
}

static gp_meter_interval whole(const char *tenant, const char *node, int gpus, int64_t start,
                               int64_t end)
{
    return (gp_meter_interval){.tenant = tenant,
                               .queue = "default",
                               .node = node,
                               .job = "1",
                               .model = "A100",
                               .kind = GP_METER_WHOLE,
                               .gpus = gpus,
                               .milli = 1000,
                               .start_ms = start,
                               .end_ms = end};
}

static gp_meter_report report(const gp_meter_interval *iv, int n, const gp_meter_prices *p,
                              int64_t from, int64_t to, gp_meter_by by, gp_meter_period period)
{
    gp_meter_query q = {from, to, by, period};
    gp_meter_report r;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_meter_report_build(iv, n, p, &q, &r, &d);
    if (rc != 0) {
        fail_msg("report: %s", d.msg);
    }
    return r;
}

/* ---- text and the calendar ---- */

static void test_time(void **state)
{
    (void)state;
    assert_int_equal(at("1970-01-01"), 0);
    assert_int_equal(at("2024-02-29"), INT64_C(1709164800000));
    assert_int_equal(at("2024-05-01T14:00:00.250+02:00"), at("2024-05-01T12:00:00Z") + 250);
    int64_t t;
    assert_int_equal(gp_meter_parse_time("2023-02-29", &t), GP_EINVAL);
    assert_int_equal(gp_meter_parse_time("2024-13-01", &t), GP_EINVAL);
    assert_int_equal(gp_meter_parse_time("2024-05-01T12:00:00", &t), GP_EINVAL); /* no zone */
    assert_int_equal(gp_meter_parse_time("2024-05-01x", &t), GP_EINVAL);
    assert_int_equal(gp_meter_parse_time("", &t), GP_EINVAL);
    char buf[64];
    gp_meter_time_text(at("2024-02-29T23:59:59Z"), buf, sizeof(buf));
    assert_string_equal(buf, "2024-02-29T23:59:59Z");
    gp_meter_time_text(at("1969-12-31T23:00:00.5Z"), buf, sizeof(buf));
    assert_string_equal(buf, "1969-12-31T23:00:00.500Z");

    /* Months (leap February), ISO weeks from Monday, days; before 1970 too. */
    int64_t mid = at("2024-02-15T10:00:00Z");
    assert_int_equal(gp_meter_period_start(mid, GP_METER_MONTH), at("2024-02-01"));
    assert_int_equal(gp_meter_period_next(at("2024-02-01"), GP_METER_MONTH), at("2024-03-01"));
    assert_int_equal(gp_meter_period_next(at("2023-02-01"), GP_METER_MONTH), at("2023-03-01"));
    assert_int_equal(gp_meter_period_next(at("2023-12-01"), GP_METER_MONTH), at("2024-01-01"));
    assert_int_equal(gp_meter_period_start(at("2024-05-01T08:00:00Z"), GP_METER_WEEK),
                     at("2024-04-29")); /* a Wednesday: its Monday */
    assert_int_equal(gp_meter_period_start(at("2024-04-29"), GP_METER_WEEK), at("2024-04-29"));
    assert_int_equal(gp_meter_period_start(at("2024-05-05T23:59:59Z"), GP_METER_WEEK),
                     at("2024-04-29")); /* Sunday */
    assert_int_equal(gp_meter_period_start(mid, GP_METER_DAY), at("2024-02-15"));
    assert_int_equal(gp_meter_period_start(at("1969-12-31T23:00:00Z"), GP_METER_DAY),
                     at("1969-12-31"));
    assert_int_equal(gp_meter_period_start(at("1969-12-31T23:00:00Z"), GP_METER_MONTH),
                     at("1969-12-01"));
    assert_int_equal(gp_meter_period_start(at("1970-01-01T05:00:00Z"), GP_METER_WEEK),
                     at("1969-12-29"));
}

static void test_decimals(void **state)
{
    (void)state;
    assert_int_equal(micro("0.15"), 150000);
    assert_int_equal(micro("12"), 12000000);
    assert_int_equal(micro("0.000001"), 1);
    assert_int_equal(micro("1000000000"), INT64_C(1000000000000000));
    int64_t v;
    const char *bad[] = {
        "0.1234567", "-1", "1e3", ".5", "5.", "", "1,5", "1000000000.5", "99999999999999999999",
        NULL};
    for (int i = 0; bad[i]; i++) {
        if (gp_meter_parse_micro(bad[i], &v) != GP_EINVAL) {
            fail_msg("%s was accepted", bad[i]);
        }
    }
    char buf[32];
    gp_meter_cents_text(1234, buf, sizeof(buf));
    assert_string_equal(buf, "12.34");
    gp_meter_cents_text(5, buf, sizeof(buf));
    assert_string_equal(buf, "0.05");
    gp_meter_cents_text(-5, buf, sizeof(buf));
    assert_string_equal(buf, "-0.05");
    gp_meter_kind k;
    assert_int_equal(gp_meter_kind_parse("mig", &k), 0);
    assert_int_equal(k, GP_METER_MIG);
    gp_meter_by by;
    assert_int_equal(gp_meter_by_parse("model", &by), 0);
    assert_int_equal(by, GP_METER_BY_MODEL);
    assert_int_equal(gp_meter_by_parse("colour", &by), GP_EINVAL);
    gp_meter_period p;
    assert_int_equal(gp_meter_period_parse("week", &p), 0);
    assert_int_equal(p, GP_METER_WEEK);
}

/* ---- fixed cases ---- */

static gp_meter_price price(const char *model, int64_t from, const char *hourly)
{
    gp_meter_price p;
    memset(&p, 0, sizeof(p));
    snprintf(p.model, sizeof(p.model), "%s", model);
    p.from_ms = from;
    p.hourly_micro = micro(hourly);
    p.fraction_hourly_micro = GP_METER_NONE_PRICE;
    return p;
}

static void test_clipping(void **state)
{
    (void)state;
    int64_t from = at("2024-05-01"), to = at("2024-06-01");
    gp_meter_price e = price("A100", 0, "2");
    gp_meter_prices p = {.currency = "USD", .entries = &e, .nentries = 1};
    gp_meter_interval iv[] = {
        whole("a", "n0", 1, from - HOUR, from + HOUR),         /* half before from */
        whole("a", "n0", 2, to - 30 * MIN, to + 5 * HOUR),     /* mostly after to */
        whole("b", "n1", 1, from - 2 * HOUR, from - HOUR),     /* wholly before */
        whole("b", "n1", 1, to, to + HOUR),                    /* wholly after: to is excluded */
        whole("b", "n1", 1, from + 5 * HOUR, from + 5 * HOUR), /* empty */
    };
    iv[0].used_milli_ms = 1000 * HOUR; /* all of its 2 h: 1 h of it falls in the range */
    gp_meter_report r = report(iv, 5, &p, from, to, GP_METER_BY_TENANT, GP_METER_NONE);
    assert_int_equal(r.nrows, 1);
    assert_string_equal(r.rows[0].key, "a");
    assert_int_equal(r.rows[0].period_start_ms, from);
    assert_int_equal(r.rows[0].gpu_milli_ms, 1000 * HOUR + 2000 * 30 * MIN);
    assert_int_equal(r.rows[0].used_milli_ms, 1000 * HOUR / 2);
    assert_int_equal(r.rows[0].cost_cents, 200 + 200); /* 1 GPU-hour + 2 x 0.5 GPU-hour at $2 */
    assert_int_equal(r.total.cost_cents, 400);
    assert_true(r.priced);
    gp_meter_report_fini(&r);

    /* Without prices: amounts, no cost. */
    r = report(iv, 5, NULL, from, to, GP_METER_BY_TENANT, GP_METER_NONE);
    assert_false(r.priced);
    assert_int_equal(r.total.cost_cents, 0);
    assert_int_equal(r.total.gpu_milli_ms, 2000 * HOUR);
    gp_meter_report_fini(&r);

    gp_meter_query q = {to, from, GP_METER_BY_TENANT, GP_METER_NONE};
    gp_diag d;
    assert_int_equal(gp_meter_report_build(iv, 5, NULL, &q, &r, &d), GP_EINVAL);
}

static void test_periods(void **state)
{
    (void)state;
    /* 36 hours from 2024-01-31T12:00Z: 12 h in January, 24 h in February (one day of which is
     * Thursday 2024-02-01, in the ISO week of Monday 2024-01-29). */
    int64_t s = at("2024-01-31T12:00:00Z"), e = s + 36 * HOUR;
    gp_meter_interval iv = whole("a", "n0", 1, s, e);
    iv.cpu_milli = 2000;
    iv.memory_mib = 1024;
    int64_t from = at("2024-01-01"), to = at("2024-03-01");
    gp_meter_report r = report(&iv, 1, NULL, from, to, GP_METER_BY_TENANT, GP_METER_MONTH);
    assert_int_equal(r.nrows, 2);
    assert_int_equal(r.rows[0].period_start_ms, at("2024-01-01"));
    assert_int_equal(r.rows[0].gpu_milli_ms, 1000 * 12 * HOUR);
    assert_int_equal(r.rows[0].cpu_milli_ms, 2000 * 12 * HOUR);
    assert_int_equal(r.rows[1].period_start_ms, at("2024-02-01"));
    assert_int_equal(r.rows[1].gpu_milli_ms, 1000 * 24 * HOUR);
    assert_int_equal(r.rows[1].memory_mib_ms, 1024 * 24 * HOUR);
    gp_meter_report_fini(&r);

    /* By day: it ends on midnight, so February 2 has nothing. */
    r = report(&iv, 1, NULL, from, to, GP_METER_BY_TENANT, GP_METER_DAY);
    assert_int_equal(r.nrows, 2);
    assert_int_equal(r.rows[0].period_start_ms, at("2024-01-31"));
    assert_int_equal(r.rows[0].gpu_milli_ms, 1000 * 12 * HOUR);
    assert_int_equal(r.rows[1].period_start_ms, at("2024-02-01"));
    assert_int_equal(r.rows[1].gpu_milli_ms, 1000 * 24 * HOUR);
    gp_meter_report_fini(&r);

    r = report(&iv, 1, NULL, from, to, GP_METER_BY_TENANT, GP_METER_WEEK);
    assert_int_equal(r.nrows, 1);
    assert_int_equal(r.rows[0].period_start_ms, at("2024-01-29"));
    assert_int_equal(r.rows[0].gpu_milli_ms, 1000 * 36 * HOUR);
    gp_meter_report_fini(&r);

    /* December into January: the year changes too. */
    iv = whole("a", "n0", 2, at("2023-12-31T23:00:00Z"), at("2024-01-01T02:00:00Z"));
    r = report(&iv, 1, NULL, at("2023-12-01"), at("2024-02-01"), GP_METER_BY_NODE, GP_METER_MONTH);
    assert_int_equal(r.nrows, 2);
    assert_string_equal(r.rows[0].key, "n0");
    assert_int_equal(r.rows[0].period_start_ms, at("2023-12-01"));
    assert_int_equal(r.rows[0].gpu_milli_ms, 2000 * HOUR);
    assert_int_equal(r.rows[1].gpu_milli_ms, 2000 * 2 * HOUR);
    gp_meter_report_fini(&r);
}

static void test_price_changes(void **state)
{
    (void)state;
    /* $2 until noon, $3 from noon; the interval runs 06:00 to 18:00: 6 h at each. Another model
     * has a price only from 12:00: its morning is unpriced. */
    gp_meter_price e[] = {
        price("A100", at("2024-01-01T12:00:00Z"), "3"),
        price("A100", at("2023-01-01"), "2"),
        price("H100", at("2024-01-01T12:00:00Z"), "10"),
    };
    gp_meter_prices p = {.currency = "USD", .entries = e, .nentries = 3};
    gp_meter_interval iv[] = {
        whole("a", "n0", 1, at("2024-01-01T06:00:00Z"), at("2024-01-01T18:00:00Z")),
        whole("b", "n1", 1, at("2024-01-01T06:00:00Z"), at("2024-01-01T18:00:00Z")),
        whole("c", "n2", 1, at("2024-01-01T06:00:00Z"), at("2024-01-01T18:00:00Z")),
    };
    iv[1].model = "H100";
    iv[2].model = "T4"; /* no price at all */
    gp_meter_report r =
        report(iv, 3, &p, at("2024-01-01"), at("2024-01-02"), GP_METER_BY_TENANT, GP_METER_NONE);
    assert_int_equal(r.nrows, 3);
    assert_int_equal(r.rows[0].cost_cents, 6 * 200 + 6 * 300);
    assert_int_equal(r.rows[0].unpriced_milli_ms, 0);
    assert_int_equal(r.rows[1].cost_cents, 6 * 1000);
    assert_int_equal(r.rows[1].unpriced_milli_ms, 1000 * 6 * HOUR);
    assert_int_equal(r.rows[2].cost_cents, 0);
    assert_int_equal(r.rows[2].unpriced_milli_ms, 1000 * 12 * HOUR);
    assert_int_equal(r.total.cost_cents, 3000 + 6000);
    assert_int_equal(r.total.unpriced_milli_ms, 1000 * 18 * HOUR);
    gp_meter_report_fini(&r);
}

static void test_fractions_and_mig(void **state)
{
    (void)state;
    gp_meter_price e[] = {price("A100", 0, "4"), price("H100", 0, "8")};
    e[1].fraction_hourly_micro = micro("6"); /* overrides the discount */
    e[0].nmig = 1;
    snprintf(e[0].mig[0].profile, sizeof(e[0].mig[0].profile), "1g.10gb");
    e[0].mig[0].hourly_micro = micro("0.5");
    gp_meter_prices p = {.currency = "USD",
                         .shared_discount_ppm = micro("0.2"),
                         .cpu_core_hour_micro = micro("0.05"),
                         .memory_gib_hour_micro = micro("0.01"),
                         .entries = e,
                         .nentries = 2};
    int64_t s = at("2024-01-01");
    gp_meter_interval iv[5];
    /* Half an A100 for 10 h: 4 x 0.8 x 0.5 x 10 = $16. */
    iv[0] = whole("frac", "n0", 1, s, s + 10 * HOUR);
    iv[0].kind = GP_METER_FRACTION;
    iv[0].milli = 500;
    /* Half an H100 for 10 h at the fraction price: 6 x 0.5 x 10 = $30. */
    iv[1] = iv[0];
    iv[1].tenant = "frac-h";
    iv[1].model = "H100";
    /* Two 1g.10gb instances for 4 h: 2 x 0.5 x 4 = $4. */
    iv[2] = whole("mig", "n0", 2, s, s + 4 * HOUR);
    iv[2].kind = GP_METER_MIG;
    iv[2].milli = 1000 / 7;
    iv[2].mig_profile = "1g.10gb";
    /* An unlisted profile (3g.40gb, 3/7 of a GPU: milli 428) for 1 h pays hourly x milli:
     * 4 x 0.428 = $1.712, so 171.2 cents. */
    iv[3] = iv[2];
    iv[3].tenant = "mig-other";
    iv[3].gpus = 1;
    iv[3].milli = 3000 / 7;
    iv[3].mig_profile = "3g.40gb";
    iv[3].end_ms = s + HOUR;
    /* CPU and memory only: 4 cores and 8 GiB for 2 h: 0.05 x 4 x 2 + 0.01 x 8 x 2 = $0.56. */
    iv[4] = whole("cpu", "n0", 0, s, s + 2 * HOUR);
    iv[4].model = "";
    iv[4].cpu_milli = 4000;
    iv[4].memory_mib = 8192;
    gp_meter_report r = report(iv, 5, &p, s, s + DAY, GP_METER_BY_TENANT, GP_METER_NONE);
    assert_int_equal(r.nrows, 5);
    assert_string_equal(r.rows[0].key, "cpu");
    assert_int_equal(r.rows[0].cost_cents, 56);
    assert_int_equal(r.rows[0].gpu_milli_ms, 0);
    assert_int_equal(r.rows[0].unpriced_milli_ms, 0);
    assert_string_equal(r.rows[1].key, "frac");
    assert_int_equal(r.rows[1].cost_cents, 1600);
    assert_string_equal(r.rows[2].key, "frac-h");
    assert_int_equal(r.rows[2].cost_cents, 3000);
    assert_string_equal(r.rows[3].key, "mig");
    assert_int_equal(r.rows[3].cost_cents, 400);
    assert_string_equal(r.rows[4].key, "mig-other");
    /* 0.2 of a cent goes to the row with the largest remainder: 56 + 1600 + 3000 + 400 + 171.2
     * = 5227.2, so the total is 5227 and every row keeps its floor. */
    assert_int_equal(r.rows[4].cost_cents, 171);
    assert_int_equal(r.total.cost_cents, 5227);
    gp_meter_report_fini(&r);
}

static void test_cost_model(void **state)
{
    (void)state;
    /* 30000 / (36 x 730) + 700 / 1000 x 0.15 = 1.141552511... + 0.105 = 1.246552511... */
    gp_meter_cost_model m = {micro("30000"), 36, micro("700"), micro("0.15"), 0};
    int64_t h;
    assert_int_equal(gp_meter_cost_hourly(&m, &h), 0);
    assert_int_equal(h, 1246553);
    m.overhead_micro = micro("0.1"); /* x 1.1 = 1.371207762... */
    assert_int_equal(gp_meter_cost_hourly(&m, &h), 0);
    assert_int_equal(h, 1371208);
    m = (gp_meter_cost_model){micro("730"), 1, 0, 0, 0};
    assert_int_equal(gp_meter_cost_hourly(&m, &h), 0);
    assert_int_equal(h, 1000000); /* exactly 1 per hour */
    m.depreciation_months = 0;
    assert_int_equal(gp_meter_cost_hourly(&m, &h), GP_EINVAL);
}

static void test_largest_remainder(void **state)
{
    (void)state;
    /* Three tenants each use 20 minutes of a GPU at $0.01 per hour: a third of a cent each.
     * The total rounds to 1 cent, which goes to the first row of the tie. */
    gp_meter_price e = price("A100", 0, "0.01");
    gp_meter_prices p = {.currency = "USD", .entries = &e, .nentries = 1};
    int64_t s = at("2024-01-01");
    gp_meter_interval iv[] = {
        whole("a", "n0", 1, s, s + 20 * MIN),
        whole("b", "n1", 1, s, s + 20 * MIN),
        whole("c", "n2", 1, s, s + 20 * MIN),
    };
    gp_meter_report r = report(iv, 3, &p, s, s + DAY, GP_METER_BY_TENANT, GP_METER_NONE);
    assert_int_equal(r.total.cost_cents, 1);
    assert_int_equal(r.rows[0].cost_cents + r.rows[1].cost_cents + r.rows[2].cost_cents, 1);
    assert_int_equal(r.rows[0].cost_cents, 1);
    gp_meter_report_fini(&r);
    /* Two of them: 2/3 of a cent rounds to 1; by node, the larger remainder wins. */
    iv[1].end_ms = s + 25 * MIN;
    r = report(iv + 0, 2, &p, s, s + DAY, GP_METER_BY_NODE, GP_METER_NONE);
    assert_int_equal(r.total.cost_cents, 1);
    assert_int_equal(r.rows[0].cost_cents, 0);
    assert_int_equal(r.rows[1].cost_cents, 1);
    gp_meter_report_fini(&r);
}

/* ---- randomized: every grouping adds up to the same total ---- */

static const char *const tenants[] = {"t0", "t1", "t2", "t3"};
static const char *const queues[] = {"default", "research", "batch"};
static const char *const nodes[] = {"n0", "n1", "n2", "n3", "n4"};
static const char *const models[] = {"A100", "H100", "T4"};
static const char *const jobs[] = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"};
static const char *const profiles[] = {"1g.10gb", "3g.40gb"};

#define NIV    60
#define NPRICE 7

typedef struct world {
    gp_meter_interval iv[NIV];
    gp_meter_price pe[NPRICE];
    gp_meter_prices prices;
    int64_t from, to;
} world;

#define PICK(rng, a) (a)[gp_rng_below(rng, sizeof(a) / sizeof((a)[0]))]

static void random_world(gp_rng *rng, world *w)
{
    memset(w, 0, sizeof(*w));
    int64_t base = at("2024-01-29"); /* a Monday, two days before a month ends */
    for (int i = 0; i < NPRICE; i++) {
        /* Prices change on minute boundaries within the first week; some models have none
         * at first. */
        gp_meter_price *p = &w->pe[i];
        snprintf(p->model, sizeof(p->model), "%s", models[i % 2]);
        p->from_ms = base - DAY + (int64_t)gp_rng_below(rng, 8 * 24 * 60) * MIN;
        p->hourly_micro = (int64_t)gp_rng_below(rng, 9000000) + 1;
        p->fraction_hourly_micro =
            gp_rng_below(rng, 2) ? GP_METER_NONE_PRICE : (int64_t)gp_rng_below(rng, 9000000);
        p->nmig = 1;
        snprintf(p->mig[0].profile, sizeof(p->mig[0].profile), "1g.10gb");
        p->mig[0].hourly_micro = (int64_t)gp_rng_below(rng, 2000000);
    }
    w->prices = (gp_meter_prices){.currency = "USD",
                                  .shared_discount_ppm = (int64_t)gp_rng_below(rng, 1000001),
                                  .cpu_core_hour_micro = (int64_t)gp_rng_below(rng, 100000),
                                  .memory_gib_hour_micro = (int64_t)gp_rng_below(rng, 50000),
                                  .entries = w->pe,
                                  .nentries = NPRICE};
    for (int i = 0; i < NIV; i++) {
        gp_meter_interval *v = &w->iv[i];
        v->tenant = PICK(rng, tenants);
        v->queue = PICK(rng, queues);
        v->node = PICK(rng, nodes);
        v->job = PICK(rng, jobs);
        v->model = PICK(rng, models);
        v->kind = (gp_meter_kind)gp_rng_below(rng, 3);
        v->gpus = v->kind == GP_METER_FRACTION ? 1 : 1 + (int)gp_rng_below(rng, 8);
        v->milli = v->kind == GP_METER_WHOLE      ? 1000
                   : v->kind == GP_METER_FRACTION ? 1 + (int)gp_rng_below(rng, 999)
                                                  : 1000 / 7;
        v->mig_profile = v->kind == GP_METER_MIG ? PICK(rng, profiles) : NULL;
        v->cpu_milli = (int64_t)gp_rng_below(rng, 64000);
        v->memory_mib = (int64_t)gp_rng_below(rng, 512 * 1024);
        v->start_ms = base - DAY + (int64_t)gp_rng_below(rng, 6 * 24 * 60) * MIN;
        v->end_ms = v->start_ms + (int64_t)gp_rng_below(rng, 3 * 24 * 60) * MIN;
        int64_t alloc = (int64_t)v->gpus * v->milli * (v->end_ms - v->start_ms);
        v->used_milli_ms = alloc ? (int64_t)gp_rng_below(rng, (uint64_t)alloc + 1) : 0;
    }
    w->from = base + (int64_t)gp_rng_below(rng, 24 * 60) * MIN;
    w->to = w->from + (int64_t)gp_rng_below(rng, 5 * 24 * 60) * MIN + MIN;
}

/* The price of model at t (the latest entry from at or before t), by a plain scan. */
static const gp_meter_price *naive_price(const world *w, const char *model, int64_t t)
{
    const gp_meter_price *best = NULL;
    for (int i = 0; i < NPRICE; i++) {
        const gp_meter_price *p = &w->pe[i];
        if (strcmp(p->model, model) == 0 && p->from_ms <= t &&
            (!best || p->from_ms > best->from_ms)) {
            best = p;
        }
    }
    return best;
}

/* The money of one minute of v starting at t, over the same denominator as the core's (micro
 * per hour x milli x ms x ppm x MiB per GiB), computed from the formulas in meter.h. */
static u128 naive_minute(const world *w, const gp_meter_interval *v, int64_t t)
{
    const gp_meter_price *p = naive_price(w, v->model, t);
    const gp_meter_prices *pr = &w->prices;
    u128 m = (u128)MIN;
    u128 money = (u128)pr->cpu_core_hour_micro * 1000000 * 1024 * (u128)v->cpu_milli * m +
                 (u128)pr->memory_gib_hour_micro * 1000000 * 1000 * (u128)v->memory_mib * m;
    if (!p) {
        return money;
    }
    u128 gm = (u128)v->gpus * (u128)v->milli * m;
    if (v->kind == GP_METER_MIG && strcmp(v->mig_profile, "1g.10gb") == 0) {
        money += (u128)p->mig[0].hourly_micro * 1000 * 1000000 * 1024 * (u128)v->gpus * m;
    } else if (v->kind == GP_METER_FRACTION && p->fraction_hourly_micro >= 0) {
        money += (u128)p->fraction_hourly_micro * 1000000 * 1024 * gm;
    } else if (v->kind == GP_METER_FRACTION) {
        money += (u128)p->hourly_micro * (u128)(1000000 - pr->shared_discount_ppm) * 1024 * gm;
    } else {
        money += (u128)p->hourly_micro * 1000000 * 1024 * gm;
    }
    return money;
}

static int64_t naive_cents(u128 num)
{
    u128 den = (u128)10000 * 1000 * 3600000 * 1000000 * 1024;
    return (int64_t)((num + den / 2) / den);
}

static void check_seed(uint64_t seed)
{
    printf("meter: seed %llu\n", (unsigned long long)seed);
    gp_rng rng;
    gp_rng_seed(&rng, seed);
    world *w = malloc(sizeof(*w));
    assert_non_null(w);
    random_world(&rng, w);

    /* The naive total: minute by minute over [from, to) (every time is on a minute). */
    u128 num = 0;
    int64_t gpu = 0;
    u128 by_tenant[4] = {0};
    for (int i = 0; i < NIV; i++) {
        const gp_meter_interval *v = &w->iv[i];
        for (int64_t t = v->start_ms; t < v->end_ms; t += MIN) {
            if (t >= w->from && t < w->to) {
                u128 x = naive_minute(w, v, t);
                num += x;
                by_tenant[v->tenant[1] - '0'] += x;
                gpu += (int64_t)v->gpus * v->milli * MIN;
            }
        }
    }
    int64_t want = naive_cents(num);

    gp_meter_row first;
    memset(&first, 0, sizeof(first));
    for (int period = GP_METER_NONE; period <= GP_METER_MONTH; period++) {
        for (int by = GP_METER_BY_TENANT; by <= GP_METER_BY_MODEL; by++) {
            gp_meter_report r = report(w->iv, NIV, &w->prices, w->from, w->to, (gp_meter_by)by,
                                       (gp_meter_period)period);
            int64_t cents = 0, g = 0, cpu = 0, mem = 0, used = 0, unpriced = 0;
            for (int k = 0; k < r.nrows; k++) {
                cents += r.rows[k].cost_cents;
                g += r.rows[k].gpu_milli_ms;
                cpu += r.rows[k].cpu_milli_ms;
                mem += r.rows[k].memory_mib_ms;
                used += r.rows[k].used_milli_ms;
                unpriced += r.rows[k].unpriced_milli_ms;
                assert_true(r.rows[k].used_milli_ms <= r.rows[k].gpu_milli_ms);
                if (k > 0) {
                    int c = strcmp(r.rows[k - 1].key, r.rows[k].key);
                    assert_true(c < 0 || (c == 0 && r.rows[k - 1].period_start_ms <
                                                        r.rows[k].period_start_ms));
                }
            }
            if (cents != r.total.cost_cents || g != r.total.gpu_milli_ms ||
                cpu != r.total.cpu_milli_ms || mem != r.total.memory_mib_ms ||
                used != r.total.used_milli_ms || unpriced != r.total.unpriced_milli_ms) {
                fail_msg("seed %llu by %s period %s: rows add up to %lld cents, the total is "
                         "%lld",
                         (unsigned long long)seed, gp_meter_by_name((gp_meter_by)by),
                         gp_meter_period_name((gp_meter_period)period), (long long)cents,
                         (long long)r.total.cost_cents);
            }
            if (r.total.cost_cents != want || r.total.gpu_milli_ms != gpu) {
                fail_msg("seed %llu by %s period %s: total %lld cents %lld milli-ms; the naive "
                         "sum %lld cents %lld milli-ms",
                         (unsigned long long)seed, gp_meter_by_name((gp_meter_by)by),
                         gp_meter_period_name((gp_meter_period)period),
                         (long long)r.total.cost_cents, (long long)r.total.gpu_milli_ms,
                         (long long)want, (long long)gpu);
            }
            if (period == GP_METER_NONE && by == GP_METER_BY_TENANT) {
                first = r.total;
                /* Each tenant's cents are its exact share rounded down or up. */
                for (int k = 0; k < r.nrows; k++) {
                    u128 den = (u128)10000 * 1000 * 3600000 * 1000000 * 1024;
                    u128 mine = by_tenant[r.rows[k].key[1] - '0'];
                    int64_t lo = (int64_t)(mine / den);
                    assert_true(r.rows[k].cost_cents == lo || r.rows[k].cost_cents == lo + 1);
                }
            } else {
                /* The same cluster, the same total, whatever the grouping and period (used is
                 * shared out by length, rounded down per part, so it only agrees within the
                 * same period). */
                assert_int_equal(r.total.cost_cents, first.cost_cents);
                assert_int_equal(r.total.gpu_milli_ms, first.gpu_milli_ms);
                assert_int_equal(r.total.cpu_milli_ms, first.cpu_milli_ms);
                assert_int_equal(r.total.memory_mib_ms, first.memory_mib_ms);
                assert_int_equal(r.total.unpriced_milli_ms, first.unpriced_milli_ms);
                if (period == GP_METER_NONE) {
                    assert_int_equal(r.total.used_milli_ms, first.used_milli_ms);
                }
            }
            gp_meter_report_fini(&r);
        }
    }
    free(w);
}

static void test_random_groupings(void **state)
{
    (void)state;
    const char *one = getenv("GP_TEST_SEED");
    if (one) {
        check_seed(strtoull(one, NULL, 10));
        return;
    }
    for (uint64_t seed = 1; seed <= 40; seed++) {
        check_seed(seed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_decimals),
        cmocka_unit_test(test_clipping),
        cmocka_unit_test(test_periods),
        cmocka_unit_test(test_price_changes),
        cmocka_unit_test(test_fractions_and_mig),
        cmocka_unit_test(test_cost_model),
        cmocka_unit_test(test_largest_remainder),
        cmocka_unit_test(test_random_groupings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

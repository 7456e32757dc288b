/* The CLI's config file (cli/cliconfig.h): what `gpupool login` wrote before contexts existed
 * still reads; contexts parse, format and parse back; bad names and long values name the line. */
#include "cli/cliconfig.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_legacy_file(void **state)
{
    (void)state;
    static gp_cli_config cfg;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_cli_config_parse("# written by gpupool login\nserver: http://a:7070\n"
                                         "token:  s3cret \nfuture-key: x\n",
                                         &cfg, &d),
                     0);
    assert_string_equal(cfg.server, "http://a:7070");
    assert_string_equal(cfg.token, "s3cret");
    assert_int_equal(cfg.nctx, 0);
    assert_string_equal(cfg.current, "");
}

static void test_contexts_round_trip(void **state)
{
    (void)state;
    static gp_cli_config cfg, again;
    static char text[8192], text2[8192];
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_cli_config_parse("server: http://a:7070\ntoken: t\ncurrent-context: prod\n"
                                         "context.prod.server: https://p:7443\n"
                                         "context.prod.token-file: /home/u/.p.token\n"
                                         "context.prod.cacert: /etc/p.pem\n"
                                         "context.dev-1.server: http://d:7070\n"
                                         "context.prod.unknown: x\n",
                                         &cfg, &d),
                     0);
    assert_int_equal(cfg.nctx, 2);
    assert_string_equal(cfg.current, "prod");
    gp_cli_context *p = gp_cli_config_find(&cfg, "prod");
    assert_non_null(p);
    assert_string_equal(p->server, "https://p:7443");
    assert_string_equal(p->token_file, "/home/u/.p.token");
    assert_string_equal(p->cacert, "/etc/p.pem");
    assert_string_equal(cfg.ctx[1].name, "dev-1");
    assert_true(gp_cli_config_format(&cfg, text, sizeof(text)) > 0);
    assert_int_equal(gp_cli_config_parse(text, &again, &d), 0);
    assert_true(gp_cli_config_format(&again, text2, sizeof(text2)) > 0);
    assert_string_equal(text, text2);
    assert_int_equal(memcmp(&cfg, &again, sizeof(cfg)), 0);
    assert_int_equal(gp_cli_config_format(&cfg, text, 40), -1);

    assert_int_equal(gp_cli_config_remove(&cfg, "prod"), 0);
    assert_string_equal(cfg.current, "");
    assert_int_equal(cfg.nctx, 1);
    assert_int_equal(gp_cli_config_remove(&cfg, "prod"), -1);
}

static void expect_error(const char *text, const char *want)
{
    static gp_cli_config cfg;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_cli_config_parse(text, &cfg, &d), GP_EINVAL);
    if (strcmp(d.msg, want) != 0) {
        fail_msg("\"%s\", expected \"%s\"", d.msg, want);
    }
    assert_int_equal(cfg.nctx, 0);
}

static void test_errors_name_the_line(void **state)
{
    (void)state;
    expect_error("server: x\ncontext.a/b.server: y\n",
                 "line 2: context.a/b.server: bad context name");
    expect_error("context..server: y\n", "line 1: context..server: bad context name");
    char big[3000];
    snprintf(big, sizeof(big), "\n\ntoken: %02000d\n", 7);
    expect_error(big, "line 3: token: value too long");
    static char many[8192];
    many[0] = '\0';
    for (int i = 0; i <= GP_CLI_MAX_CONTEXTS; i++) {
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "context.c%d.server: x\n", i);
    }
    expect_error(many, "line 33: context.c32.server: more than 32 contexts");
    assert_false(gp_cli_context_name_ok(""));
    assert_false(gp_cli_context_name_ok("a.b"));
    assert_true(gp_cli_context_name_ok("prod_2-eu"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legacy_file),
        cmocka_unit_test(test_contexts_round_trip),
        cmocka_unit_test(test_errors_name_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

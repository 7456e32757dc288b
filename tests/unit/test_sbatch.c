/* The sbatch front end's translation (cli/sbatch.h): Slurm's time formats, #SBATCH lines, the
 * options' mapping onto a job spec, and the errors and warnings that name the option. */
#include "cli/sbatch.h"
#include "tests/unit/harness.h"

#include <string.h>

static void test_time_formats(void **state)
{
    (void)state;
    assert_int_equal(gp_sbatch_time("30"), 30 * 60);          /* MM */
    assert_int_equal(gp_sbatch_time("30:15"), 30 * 60 + 15);  /* MM:SS */
    assert_int_equal(gp_sbatch_time("2:00:05"), 7205);        /* HH:MM:SS */
    assert_int_equal(gp_sbatch_time("1-2"), 86400 + 7200);    /* D-HH */
    assert_int_equal(gp_sbatch_time("1-2:30"), 86400 + 9000); /* D-HH:MM */
    assert_int_equal(gp_sbatch_time("1-0:0:9"), 86400 + 9);   /* D-HH:MM:SS */
    assert_int_equal(gp_sbatch_time("UNLIMITED"), 0);
    assert_int_equal(gp_sbatch_time("infinite"), 0);
    const char *bad[] = {"",   "x",  "1:2:3:4", "-1",         "1-", "1-2:3:4:5",
                         "1:", ":1", "1h",      "1234567890", "1-x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (gp_sbatch_time(bad[i]) != -1) {
            fail_msg("\"%s\" was taken", bad[i]);
        }
    }
}

static void test_directives(void **state)
{
    (void)state;
    const char *script = "#!/bin/bash\n"
                         "\n"
                         "# a comment\n"
                         "#SBATCH --job-name=\"my job\" -N 2 # trailing comment\n"
                         "  #SBATCH --time=10\n"
                         "#SBATCHX --not-one\n"
                         "echo hi\n"
                         "#SBATCH --after-the-command\n";
    json_t *d = NULL;
    char err[256];
    assert_int_equal(gp_sbatch_directives(script, &d, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(d), 2);
    json_t *first = json_array_get(d, 0);
    assert_int_equal(json_integer_value(json_object_get(first, "line")), 4);
    json_t *w = json_object_get(first, "words");
    assert_int_equal(json_array_size(w), 3);
    assert_string_equal(json_string_value(json_array_get(w, 0)), "--job-name=my job");
    assert_string_equal(json_string_value(json_array_get(w, 1)), "-N");
    json_decref(d);
    assert_int_equal(gp_sbatch_directives("#SBATCH -J 'x\n", &d, err, sizeof(err)), -1);
    assert_string_equal(err, "line 1: an unterminated quote");
}

/* Builds script with the command-line options opts (NULL-terminated). */
static int build(const char *script, char **opts, bool strict, json_t **spec, json_t **warn,
                 char *err)
{
    int n = 0;
    while (opts && opts[n]) {
        n++;
    }
    char *args[] = {"a1", "a 2"};
    gp_sbatch_in in = {.script = script,
                       .script_name = "dir/train.sh",
                       .args = args,
                       .nargs = 2,
                       .opts = opts,
                       .nopts = n,
                       .cwd = "/home/u/proj",
                       .getenv = NULL,
                       .strict = strict};
    return gp_sbatch_build(&in, spec, warn, err, 256);
}

static const char *sget(json_t *o, const char *path)
{
    return json_string_value(json_object_get(o, path));
}

static void test_mapping(void **state)
{
    (void)state;
    const char *script = "#!/bin/sh\n"
                         "#SBATCH --gres=gpu:a100:2\n"
                         "#SBATCH -N 2 --ntasks-per-node=4 -c 2 --mem=16G\n"
                         "#SBATCH -t 1-00:30 -J Train_BERT -p research\n"
                         "#SBATCH --array=0-9%2 --dependency=afterok:12:prep,afterok:13\n"
                         "#SBATCH -o logs/%x-%A_%a.out --export=NONE,MODE=fast -D out\n"
                         "#SBATCH --mail-type=END\n"
                         "echo run\n";
    char *opts[] = {"--time=5", "-pgpu", NULL}; /* the command line wins */
    json_t *spec, *warn;
    char err[256] = "";
    assert_int_equal(build(script, opts, false, &spec, &warn, err), 0);
    assert_string_equal(sget(spec, "name"), "train-bert");
    assert_int_equal(json_integer_value(json_object_get(spec, "replicas")), 2);
    assert_int_equal(json_integer_value(json_object_get(spec, "max_runtime")), 300);
    assert_string_equal(sget(spec, "queue"), "gpu");
    assert_string_equal(sget(spec, "array"), "0-9%2");
    assert_string_equal(sget(spec, "working_dir"), "/home/u/proj/out");
    json_t *res = json_object_get(spec, "resources");
    assert_int_equal(json_integer_value(json_object_get(res, "gpus")), 2);
    assert_string_equal(json_string_value(json_array_get(json_object_get(res, "gpu_models"), 0)),
                        "a100");
    assert_int_equal(json_integer_value(json_object_get(res, "cpu_milli")), 8000);
    assert_int_equal(json_integer_value(json_object_get(res, "memory_mib")), 16384);
    json_t *after = json_object_get(spec, "after_ok");
    assert_int_equal(json_array_size(after), 3);
    assert_string_equal(json_string_value(json_array_get(after, 1)), "prep");
    json_t *env = json_object_get(spec, "env");
    assert_string_equal(sget(env, "MODE"), "fast");
    assert_string_equal(sget(env, "SLURM_NTASKS_PER_NODE"), "4");
    json_t *cmd = json_object_get(spec, "command");
    assert_string_equal(json_string_value(json_array_get(cmd, 0)), "/bin/sh");
    const char *w = json_string_value(json_array_get(cmd, 2));
    assert_non_null(strstr(w, "echo run\n"));
    assert_non_null(strstr(w, "exec >\"logs/train-bert-${SLURM_ARRAY_JOB_ID:-$GPUPOOL_JOB_ID}_"
                              "${SLURM_ARRAY_TASK_ID:-4294967294}.out\" 2>&1\n"));
    assert_non_null(strstr(w, "\"$s\" \"$@\"")); /* by its #! line */
    json_t *args = json_object_get(spec, "args");
    assert_string_equal(json_string_value(json_array_get(args, 0)), "train-bert");
    assert_string_equal(json_string_value(json_array_get(args, 2)), "a 2");
    assert_int_equal(json_array_size(warn), 1);
    assert_string_equal(json_string_value(json_array_get(warn, 0)),
                        "--mail-type: not supported, ignored (line 7)");
    json_decref(spec);
    json_decref(warn);
    /* strict: the same option refused */
    assert_int_equal(build(script, opts, true, &spec, &warn, err), -1);
    assert_non_null(strstr(err, "--mail-type: not supported (line 7"));
    assert_null(spec);
}

static void expect_error(const char *script, const char *needle)
{
    json_t *spec, *warn;
    char err[256] = "";
    if (build(script, NULL, false, &spec, &warn, err) != -1 || !strstr(err, needle)) {
        fail_msg("%s: got \"%s\", want \"%s\"", script, err, needle);
    }
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("#SBATCH -t soon\n", "--time: bad value \"soon\" (MM, MM:SS");
    expect_error("#SBATCH --gres=gpu:0\n", "--gres: bad value \"gpu:0\"");
    expect_error("#SBATCH -N 0\n", "--nodes: bad value \"0\"");
    expect_error("#SBATCH --mem=12Q\n", "--mem: bad value \"12Q\"");
    expect_error("\n#SBATCH -c x\n", "(a count from 1 to 4096; line 2)");
    expect_error("#SBATCH --dependency=afterok:1?afterok:2\n", "'?' (any of) is not supported");
    expect_error("#SBATCH -o out-%q.log\n", "--output: bad value \"out-%q.log\"");
    expect_error("#SBATCH -J\n", "--job-name: a value is required (line 1)");
    expect_error("#SBATCH hello\n", "line 1: \"hello\" is not an option");
}

/* No shebang: /bin/sh runs it; no -o: no redirection; a dollar in a pattern stays literal. */
static void test_plain_script(void **state)
{
    (void)state;
    json_t *spec, *warn;
    char err[256] = "";
    assert_int_equal(build("echo x", NULL, false, &spec, &warn, err), 0);
    const char *w = json_string_value(json_array_get(json_object_get(spec, "command"), 2));
    assert_non_null(strstr(w, "/bin/sh \"$s\" \"$@\""));
    assert_null(strstr(w, "exec >"));
    /* the script's file is made by mktemp, never a name guessed beforehand */
    assert_non_null(
        strstr(w, "s=$(mktemp \"${TMPDIR:-/tmp}/gpupool-sbatch.XXXXXXXX\") || exit 1\n"));
    assert_non_null(strstr(w, "echo x\nGPUPOOL_SBATCH_EOF_0\n"));
    assert_string_equal(sget(spec, "name"), "train");
    assert_string_equal(sget(spec, "working_dir"), "/home/u/proj");
    json_decref(spec);
    json_decref(warn);
    /* a script holding the delimiter gets another */
    assert_int_equal(build("echo x\nGPUPOOL_SBATCH_EOF_0\n", NULL, false, &spec, &warn, err), 0);
    w = json_string_value(json_array_get(json_object_get(spec, "command"), 2));
    assert_non_null(strstr(w, "<<'GPUPOOL_SBATCH_EOF_1'"));
    json_decref(spec);
    json_decref(warn);
    char *opts[] = {"-e", "e$HOME\"`.log", NULL};
    assert_int_equal(build("echo x\n", opts, false, &spec, &warn, err), 0);
    w = json_string_value(json_array_get(json_object_get(spec, "command"), 2));
    assert_non_null(strstr(w, "exec 2>\"e\\$HOME\\\"\\`.log\"\n"));
    json_decref(spec);
    json_decref(warn);
}

/* Which command-line words take the next one as their value. */
static void test_takes_next(void **state)
{
    (void)state;
    assert_true(gp_sbatch_takes_next("-D"));
    assert_true(gp_sbatch_takes_next("--time"));
    assert_true(gp_sbatch_takes_next("-A")); /* unknown, and sbatch's -A takes one */
    assert_false(gp_sbatch_takes_next("--time=5"));
    assert_false(gp_sbatch_takes_next("-t5"));
    assert_false(gp_sbatch_takes_next("-H")); /* a flag */
    assert_false(gp_sbatch_takes_next("--exclusive"));
    assert_false(gp_sbatch_takes_next("script.sh"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_formats), cmocka_unit_test(test_directives),
        cmocka_unit_test(test_mapping),      cmocka_unit_test(test_errors),
        cmocka_unit_test(test_plain_script), cmocka_unit_test(test_takes_next),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

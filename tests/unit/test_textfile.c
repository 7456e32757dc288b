/* Whole text files into one string (base/textfile.h): sizes below, at and past the bound, an
 * empty file, a missing one, a pipe. */
#include "base/textfile.h"
#include "tests/unit/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void put(size_t n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) {
        fputc('a' + (int)(i % 26), f);
    }
    fclose(f);
}

static void test_sizes(void **state)
{
    (void)state;
    snprintf(path, sizeof(path), "/tmp/gp-textfile.%d", (int)getpid());
    size_t sizes[] = {0, 1, 65535, 65536, 65537, 200000};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        put(sizes[k]);
        size_t len = 7;
        char *t = gp_text_read(path, 200000, &len);
        assert_non_null(t);
        assert_int_equal(len, sizes[k]);
        assert_int_equal(strlen(t), sizes[k]);
        assert_true(sizes[k] == 0 || t[sizes[k] - 1] == 'a' + (int)((sizes[k] - 1) % 26));
        free(t);
    }
    put(200001); /* one past the bound */
    errno = 0;
    assert_null(gp_text_read(path, 200000, NULL));
    assert_int_equal(errno, EFBIG);
    put(10);
    assert_null(gp_text_read(path, 9, NULL));
    assert_int_equal(errno, EFBIG);
    char *t = gp_text_read(path, 10, NULL);
    assert_string_equal(t, "abcdefghij");
    free(t);
    unlink(path);
    errno = 0;
    assert_null(gp_text_read(path, 100, NULL));
    assert_int_equal(errno, ENOENT);
}

static void test_pipe(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "line\n", 5), 5);
    close(fds[1]);
    size_t len = 0;
    char *t = gp_text_read_fd(fds[0], 100, &len);
    close(fds[0]);
    assert_string_equal(t, "line\n");
    assert_int_equal(len, 5);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

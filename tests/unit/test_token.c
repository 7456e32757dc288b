/* API tokens: format, uniqueness, SHA-256 known vectors, constant-time hash comparison. */
#include "gpupool/error.h"
#include "net/token.h"
#include "tests/unit/harness.h"

#include <stdlib.h>
#include <string.h>

#define NTOKENS 1000

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_format(void **state)
{
    (void)state;
    char buf[GP_TOKEN_MAX];
    assert_int_equal(gp_token_generate("gpu", buf, sizeof(buf)), 0);
    assert_int_equal(strlen(buf), 4 + GP_TOKEN_RANDOM_LEN);
    assert_memory_equal(buf, "gpu_", 4);
    assert_int_equal(strspn(buf + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                     "0123456789-_"),
                     GP_TOKEN_RANDOM_LEN);

    /* Longest prefix in the smallest buffer that fits; one byte less is refused. */
    const char *p16 = "abcdefghij012345";
    assert_int_equal(gp_token_generate(p16, buf, sizeof(buf)), 0);
    assert_int_equal(strlen(buf), sizeof(buf) - 1);
    assert_int_equal(gp_token_generate("ab", buf, 3 + GP_TOKEN_RANDOM_LEN + 1), 0);
    assert_int_equal(gp_token_generate("ab", buf, 3 + GP_TOKEN_RANDOM_LEN), GP_ERANGE);
    assert_string_equal(buf, "");
}

static void test_bad_prefix(void **state)
{
    (void)state;
    char buf[GP_TOKEN_MAX];
    assert_int_equal(gp_token_generate("", buf, sizeof(buf)), GP_EINVAL);
    assert_int_equal(gp_token_generate(NULL, buf, sizeof(buf)), GP_EINVAL);
    assert_int_equal(gp_token_generate("GPU", buf, sizeof(buf)), GP_EINVAL);
    assert_int_equal(gp_token_generate("a_b", buf, sizeof(buf)), GP_EINVAL);
    assert_int_equal(gp_token_generate("abcdefghij0123456", buf, sizeof(buf)), GP_EINVAL);
}

static void test_unique(void **state)
{
    (void)state;
    char **t = calloc(NTOKENS, sizeof(*t));
    assert_non_null(t);
    for (int i = 0; i < NTOKENS; i++) {
        t[i] = malloc(GP_TOKEN_MAX);
        assert_non_null(t[i]);
        assert_int_equal(gp_token_generate("gpu", t[i], GP_TOKEN_MAX), 0);
    }
    qsort(t, NTOKENS, sizeof(*t), cmp_str);
    for (int i = 1; i < NTOKENS; i++) {
        assert_string_not_equal(t[i - 1], t[i]);
    }
    /* Every base64url character shows up somewhere in 1000 random tokens (43k draws). */
    int seen[256] = {0};
    for (int i = 0; i < NTOKENS; i++) {
        for (const char *p = t[i] + 4; *p; p++) {
            seen[(unsigned char)*p] = 1;
        }
        free(t[i]);
    }
    free(t);
    int distinct = 0;
    for (int i = 0; i < 256; i++) {
        distinct += seen[i];
    }
    assert_int_equal(distinct, 64);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    char h[GP_TOKEN_HASH_HEX];
    assert_int_equal(gp_token_hash("abc", h), 0);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(gp_token_hash("", h), 0);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(gp_token_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h),
                     0);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_hash_equal(void **state)
{
    (void)state;
    char a[GP_TOKEN_HASH_HEX], b[GP_TOKEN_HASH_HEX], tok[GP_TOKEN_MAX];
    assert_int_equal(gp_token_generate("gpu", tok, sizeof(tok)), 0);
    assert_int_equal(gp_token_hash(tok, a), 0);
    assert_int_equal(gp_token_hash(tok, b), 0);
    assert_true(gp_token_hash_equal(a, b));
    b[63] = b[63] == '0' ? '1' : '0';
    assert_false(gp_token_hash_equal(a, b));
    b[63] = a[63];
    b[0] = b[0] == '0' ? '1' : '0';
    assert_false(gp_token_hash_equal(a, b));
    assert_false(gp_token_hash_equal(a, "abc"));
    assert_false(gp_token_hash_equal("", ""));
    assert_false(gp_token_hash_equal(a, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),     cmocka_unit_test(test_bad_prefix),
        cmocka_unit_test(test_unique),     cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_hash_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Sealed values (net/seal.h): round trip, a fresh nonce each time, and refusal of a changed
 * value, another key, other associated data and malformed text; the key file's form. */
#include "gpupool/error.h"
#include "net/seal.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void new_key(unsigned char key[GP_SEAL_KEY_LEN])
{
    char hex[GP_SEAL_KEY_HEX];
    assert_int_equal(gp_seal_key_generate(hex), 0);
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(gp_seal_key_parse(hex, key), 0);
}

static char *seal(const unsigned char *key, const char *ad, const char *plain)
{
    char *out = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_seal(key, ad, plain, strlen(plain), &out, &d), 0);
    assert_non_null(out);
    assert_true(gp_seal_is_sealed(out));
    if (strlen(plain) >= 6) { /* shorter ones may turn up in base64 by chance */
        assert_null(strstr(out, plain));
    }
    return out;
}

static int open_rc(const unsigned char *key, const char *ad, const char *sealed)
{
    char *plain = (char *)1;
    size_t len = 7;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_unseal(key, ad, sealed, &plain, &len, &d);
    if (rc == 0) {
        free(plain);
    } else {
        assert_null(plain);
        assert_int_equal(len, 0);
        assert_int_equal(d.code, rc);
    }
    return rc;
}

static void test_round_trip(void **state)
{
    (void)state;
    unsigned char key[GP_SEAL_KEY_LEN];
    new_key(key);
    const char *values[] = {"", "x", "hunter2", "a value with spaces, = and \xc3\xa9",
                            "0123456789ab"};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char *s = seal(key, "t=1 job=a var=X", values[i]);
        char *plain = NULL;
        size_t len = 0;
        gp_diag d;
        assert_int_equal(gp_unseal(key, "t=1 job=a var=X", s, &plain, &len, &d), 0);
        assert_int_equal(len, strlen(values[i]));
        assert_string_equal(plain, values[i]);
        free(plain);
        free(s);
    }
    /* The nonce is random: the same value sealed twice differs. */
    char *a = seal(key, "ad", "same"), *b = seal(key, "ad", "same");
    assert_string_not_equal(a, b);
    free(a);
    free(b);
    /* Up to the bound, and no further. */
    char *big = malloc(GP_SEAL_MAX_TEXT + 2);
    assert_non_null(big);
    memset(big, 'v', GP_SEAL_MAX_TEXT + 1);
    big[GP_SEAL_MAX_TEXT + 1] = '\0';
    char *out = NULL;
    gp_diag d;
    assert_int_equal(gp_seal(key, "ad", big, GP_SEAL_MAX_TEXT + 1, &out, &d), GP_ETOOBIG);
    assert_null(out);
    assert_int_equal(gp_seal(key, "ad", big, GP_SEAL_MAX_TEXT, &out, &d), 0);
    assert_int_equal(open_rc(key, "ad", out), 0);
    free(out);
    free(big);
}

static void test_tamper(void **state)
{
    (void)state;
    unsigned char key[GP_SEAL_KEY_LEN];
    new_key(key);
    char *s = seal(key, "ad", "the secret");
    size_t n = strlen(s);
    /* Every character of the body changed, one at a time: never opens. The change flips the
     * top bit of the character's 6 (its low bits may be padding the decoder drops). */
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 5; i < n; i++) {
        char saved = s[i];
        const char *at = strchr(b64, saved);
        if (saved == '=' || !at) {
            continue;
        }
        s[i] = b64[(at - b64) ^ 32];
        int rc = open_rc(key, "ad", s);
        assert_true(rc == GP_EPERM || rc == GP_EPARSE);
        s[i] = saved;
    }
    assert_int_equal(open_rc(key, "ad", s), 0);
    /* Cut short, or nothing after the prefix: not a sealed value. */
    s[n - 8] = '\0';
    assert_int_not_equal(open_rc(key, "ad", s), 0);
    assert_int_equal(open_rc(key, "ad", "gps1."), GP_EPARSE);
    assert_int_equal(open_rc(key, "ad", "gps1.AAAA"), GP_EPARSE);
    assert_int_equal(open_rc(key, "ad", "plain text"), GP_EPARSE);
    assert_int_equal(open_rc(key, "ad", "gps1.!!!!"), GP_EPARSE);
    assert_int_equal(open_rc(key, "ad", "gps1.A=AA"), GP_EPARSE);
    free(s);
}

static void test_wrong_key(void **state)
{
    (void)state;
    unsigned char key[GP_SEAL_KEY_LEN], other[GP_SEAL_KEY_LEN];
    new_key(key);
    new_key(other);
    char *s = seal(key, "ad", "the secret");
    assert_int_equal(open_rc(other, "ad", s), GP_EPERM);
    key[31] ^= 1;
    assert_int_equal(open_rc(key, "ad", s), GP_EPERM);
    key[31] ^= 1;
    assert_int_equal(open_rc(key, "ad", s), 0);
    free(s);
}

static void test_wrong_ad(void **state)
{
    (void)state;
    unsigned char key[GP_SEAL_KEY_LEN];
    new_key(key);
    char *s = seal(key, "tenant=1 job=train var=DB_PASSWORD", "the secret");
    assert_int_equal(open_rc(key, "tenant=2 job=train var=DB_PASSWORD", s), GP_EPERM);
    assert_int_equal(open_rc(key, "tenant=1 job=other var=DB_PASSWORD", s), GP_EPERM);
    assert_int_equal(open_rc(key, "tenant=1 job=train var=OTHER", s), GP_EPERM);
    assert_int_equal(open_rc(key, "", s), GP_EPERM);
    assert_int_equal(open_rc(key, "tenant=1 job=train var=DB_PASSWORD", s), 0);
    free(s);
}

static void test_key_text(void **state)
{
    (void)state;
    unsigned char key[GP_SEAL_KEY_LEN];
    const char *hex = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F";
    assert_int_equal(gp_seal_key_parse(hex, key), 0);
    assert_int_equal(key[0], 0);
    assert_int_equal(key[26], 0x1a);
    assert_int_equal(key[31], 0x1f);
    char buf[80];
    snprintf(buf, sizeof(buf), "%s\n", hex);
    assert_int_equal(gp_seal_key_parse(buf, key), 0);
    snprintf(buf, sizeof(buf), "%s\r\n", hex);
    assert_int_equal(gp_seal_key_parse(buf, key), 0);
    snprintf(buf, sizeof(buf), "%s\n\n", hex);
    assert_int_equal(gp_seal_key_parse(buf, key), GP_EINVAL);
    snprintf(buf, sizeof(buf), "%s0", hex);
    assert_int_equal(gp_seal_key_parse(buf, key), GP_EINVAL);
    assert_int_equal(gp_seal_key_parse("0011", key), GP_EINVAL);
    assert_int_equal(gp_seal_key_parse("", key), GP_EINVAL);
    snprintf(buf, sizeof(buf), "%.63sg", hex);
    assert_int_equal(gp_seal_key_parse(buf, key), GP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_tamper),
        cmocka_unit_test(test_wrong_key),  cmocka_unit_test(test_wrong_ad),
        cmocka_unit_test(test_key_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

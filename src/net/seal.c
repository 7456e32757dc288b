/*
 * Sealed values (seal.h): AES-256-GCM through OpenSSL's EVP interface, base64 through
 * EVP_EncodeBlock/EVP_DecodeBlock.
 */
#include "net/seal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX     "gps1."
#define PREFIX_LEN 5
#define NONCE_LEN  12
#define TAG_LEN    16

void gp_seal_wipe(void *p, size_t n)
{
    if (p && n) {
        OPENSSL_cleanse(p, n);
    }
}

int gp_seal_key_generate(char hex[GP_SEAL_KEY_HEX])
{
    unsigned char key[GP_SEAL_KEY_LEN];
    if (RAND_bytes(key, (int)sizeof(key)) != 1) {
        hex[0] = '\0';
        return GP_EIO;
    }
    for (size_t i = 0; i < sizeof(key); i++) {
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    }
    gp_seal_wipe(key, sizeof(key));
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int gp_seal_key_parse(const char *text, unsigned char key[GP_SEAL_KEY_LEN])
{
    for (int i = 0; i < GP_SEAL_KEY_LEN; i++) {
        int hi = hexval(text[2 * i]), lo = hi < 0 ? -1 : hexval(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            gp_seal_wipe(key, GP_SEAL_KEY_LEN);
            return GP_EINVAL;
        }
        key[i] = (unsigned char)(hi << 4 | lo);
    }
    const char *rest = text + 2 * GP_SEAL_KEY_LEN;
    if (strcmp(rest, "") != 0 && strcmp(rest, "\n") != 0 && strcmp(rest, "\r\n") != 0) {
        gp_seal_wipe(key, GP_SEAL_KEY_LEN);
        return GP_EINVAL;
    }
    return 0;
}

int gp_seal_is_sealed(const char *s)
{
    return s && strncmp(s, PREFIX, PREFIX_LEN) == 0;
}

/* Runs AES-256-GCM one way over in (n bytes) into out; enc: 1 seal, 0 open (tag checked). */
static int gcm(int enc, const unsigned char *key, const unsigned char *nonce, const char *ad,
               const unsigned char *in, int n, unsigned char *out, unsigned char *tag)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int len = 0, ok = c != NULL;
    ok = ok && EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL, enc) == 1;
    ok = ok && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) == 1;
    ok = ok && EVP_CipherInit_ex(c, NULL, NULL, key, nonce, enc) == 1;
    ok = ok && EVP_CipherUpdate(c, NULL, &len, (const unsigned char *)ad, (int)strlen(ad)) == 1;
    ok = ok && (n == 0 || EVP_CipherUpdate(c, out, &len, in, n) == 1);
    if (ok && !enc) {
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag) == 1;
    }
    ok = ok && EVP_CipherFinal_ex(c, out + (n ? len : 0), &len) == 1;
    if (ok && enc) {
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) == 1;
    }
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : -1;
}

int gp_seal(const unsigned char key[GP_SEAL_KEY_LEN], const char *ad, const char *plain, size_t len,
            char **out, gp_diag *d)
{
    *out = NULL;
    if (len > GP_SEAL_MAX_TEXT) {
        return gp_diag_set(d, GP_ETOOBIG, "a secret value is longer than %d bytes",
                           GP_SEAL_MAX_TEXT);
    }
    size_t raw_len = NONCE_LEN + len + TAG_LEN;
    unsigned char *raw = malloc(raw_len);
    char *text = malloc(PREFIX_LEN + 4 * ((raw_len + 2) / 3) + 1);
    if (!raw || !text) {
        free(raw);
        free(text);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = RAND_bytes(raw, NONCE_LEN) == 1 ? 0 : gp_diag_set(d, GP_EIO, "no random nonce");
    if (rc == 0 && gcm(1, key, raw, ad, (const unsigned char *)plain, (int)len, raw + NONCE_LEN,
                       raw + NONCE_LEN + len) < 0) {
        rc = gp_diag_set(d, GP_EIO, "AES-256-GCM: cannot seal");
    }
    if (rc == 0) {
        memcpy(text, PREFIX, PREFIX_LEN);
        EVP_EncodeBlock((unsigned char *)text + PREFIX_LEN, raw, (int)raw_len);
        *out = text;
        text = NULL;
    }
    gp_seal_wipe(raw, raw_len);
    free(raw);
    free(text);
    return rc;
}

/* Decodes the base64 after the prefix into a new buffer; -1 when malformed. */
static int decode(const char *b64, unsigned char **raw, size_t *raw_len)
{
    size_t n = strlen(b64);
    if (n == 0 || n % 4 != 0 ||
        strspn(b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789+/=") != n) {
        return -1;
    }
    size_t pad = (b64[n - 1] == '=') + (b64[n - 2] == '=');
    const char *eq = strchr(b64, '=');
    if (eq && eq < b64 + n - pad) {
        return -1; /* padding only at the end */
    }
    *raw = malloc(n / 4 * 3);
    if (!*raw) {
        return -2;
    }
    int got = EVP_DecodeBlock(*raw, (const unsigned char *)b64, (int)n);
    if (got < 0 || (size_t)got < pad) {
        free(*raw);
        *raw = NULL;
        return -1;
    }
    *raw_len = (size_t)got - pad;
    return 0;
}

int gp_unseal(const unsigned char key[GP_SEAL_KEY_LEN], const char *ad, const char *sealed,
              char **plain, size_t *len, gp_diag *d)
{
    *plain = NULL;
    *len = 0;
    unsigned char *raw = NULL;
    size_t raw_len = 0;
    int dec = gp_seal_is_sealed(sealed) ? decode(sealed + PREFIX_LEN, &raw, &raw_len) : -1;
    if (dec == -2) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (dec < 0 || raw_len < NONCE_LEN + TAG_LEN) {
        free(raw);
        return gp_diag_set(d, GP_EPARSE, "not a sealed value");
    }
    size_t n = raw_len - NONCE_LEN - TAG_LEN;
    char *text = malloc(n + 1);
    if (!text) {
        free(raw);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc =
        gcm(0, key, raw, ad, raw + NONCE_LEN, (int)n, (unsigned char *)text, raw + NONCE_LEN + n);
    free(raw);
    if (rc < 0) {
        gp_seal_wipe(text, n + 1);
        free(text);
        return gp_diag_set(d, GP_EPERM,
                           "a sealed value does not open: another key, or it was changed or "
                           "moved from where it was sealed");
    }
    text[n] = '\0';
    *plain = text;
    *len = n;
    return 0;
}

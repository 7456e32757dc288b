/*
 * API tokens with OpenSSL's libcrypto: RAND_bytes for the secret, EVP for SHA-256,
 * CRYPTO_memcmp for a comparison whose time does not leak where two hashes differ.
 */
#include "net/token.h"

#include "gpupool/error.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#define RANDOM_BYTES 32

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Unpadded base64url of n bytes into out (4 * ceil(n / 3) + 1 bytes suffice); returns length. */
static size_t encode_b64url(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        size_t left = n - i;
        if (left > 1) {
            v |= (unsigned)in[i + 1] << 8;
        }
        if (left > 2) {
            v |= in[i + 2];
        }
        out[o++] = b64url[(v >> 18) & 63];
        out[o++] = b64url[(v >> 12) & 63];
        if (left > 1) {
            out[o++] = b64url[(v >> 6) & 63];
        }
        if (left > 2) {
            out[o++] = b64url[v & 63];
        }
    }
    out[o] = '\0';
    return o;
}

int gp_token_generate(const char *prefix, char *buf, size_t cap)
{
    if (buf && cap > 0) {
        buf[0] = '\0';
    }
    size_t plen = prefix ? strlen(prefix) : 0;
    if (plen == 0 || plen > GP_TOKEN_PREFIX_MAX ||
        strspn(prefix, "abcdefghijklmnopqrstuvwxyz"
                       "0123456789") != plen) {
        return GP_EINVAL;
    }
    if (!buf || cap < plen + 1 + GP_TOKEN_RANDOM_LEN + 1) {
        return GP_ERANGE;
    }
    unsigned char rnd[RANDOM_BYTES];
    if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
        return GP_EIO;
    }
    memcpy(buf, prefix, plen);
    buf[plen] = '_';
    encode_b64url(rnd, sizeof(rnd), buf + plen + 1);
    OPENSSL_cleanse(rnd, sizeof(rnd));
    return 0;
}

int gp_token_hash(const char *token, char out_hex[GP_TOKEN_HASH_HEX])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    out_hex[0] = '\0';
    if (!token || EVP_Digest(token, strlen(token), md, &mdlen, EVP_sha256(), NULL) != 1 ||
        mdlen != 32) {
        return GP_EIO;
    }
    for (unsigned i = 0; i < mdlen; i++) {
        out_hex[2 * i] = hex[md[i] >> 4];
        out_hex[2 * i + 1] = hex[md[i] & 15];
    }
    out_hex[64] = '\0';
    return 0;
}

int gp_token_hash_equal(const char *a_hex, const char *b_hex)
{
    if (!a_hex || !b_hex || strnlen(a_hex, 65) != 64 || strnlen(b_hex, 65) != 64) {
        return 0;
    }
    return CRYPTO_memcmp(a_hex, b_hex, 64) == 0;
}

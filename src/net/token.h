/*
 * API tokens: generation, hashing and comparison.
 *
 * A token is PREFIX "_" followed by 32 random bytes (OpenSSL's RAND_bytes) in unpadded
 * base64url (43 characters of A-Z a-z 0-9 - _), e.g. "gpu_3q2-7wX...". The prefix tells a
 * reader (and a secret scanner) what the token is for. The controller stores only
 * gp_token_hash() of a token, the lowercase hex SHA-256 of its text, and compares hashes with
 * gp_token_hash_equal(), whose time does not depend on where two hashes differ.
 *
 * Pure functions of their arguments (plus OpenSSL's thread-safe RNG); callers own all buffers.
 */
#ifndef GP_NET_TOKEN_H
#define GP_NET_TOKEN_H

#include <stddef.h>

#define GP_TOKEN_PREFIX_MAX 16 /* prefix length limit */
#define GP_TOKEN_RANDOM_LEN 43 /* base64url characters of the 32 random bytes */
/* Buffer size that holds any token with its NUL. */
#define GP_TOKEN_MAX      (GP_TOKEN_PREFIX_MAX + 1 + GP_TOKEN_RANDOM_LEN + 1)
#define GP_TOKEN_HASH_HEX 65 /* 64 hex digits and a NUL */

/* Writes a new token into buf (cap bytes). prefix: 1 to GP_TOKEN_PREFIX_MAX characters of
 * [a-z0-9]. Returns 0, GP_EINVAL (bad prefix), GP_ERANGE (cap too small) or GP_EIO (the RNG
 * failed); buf holds "" on failure. */
int gp_token_generate(const char *prefix, char *buf, size_t cap);
/* Writes the lowercase hex SHA-256 of token's text into out_hex. 0 or GP_EIO. */
int gp_token_hash(const char *token, char out_hex[GP_TOKEN_HASH_HEX]);
/* 1 if the two hashes are equal, else 0; constant time over the hash length. Strings that are
 * not 64 characters long are never equal. */
int gp_token_hash_equal(const char *a_hex, const char *b_hex);

#endif

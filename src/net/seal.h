/*
 * Sealed values: secrets kept encrypted at rest (a job's secret environment values).
 *
 * AES-256-GCM (OpenSSL EVP) with a random 96-bit nonce per value and a 128-bit tag. A sealed
 * value is text: "gps1." followed by the standard base64 of nonce || ciphertext || tag. The
 * associated data (ad) binds a value to where it belongs (for a secret env value: the tenant
 * id, the job's name and the variable's name): unsealing under any other ad, a changed byte or
 * another key fails, so a sealed value copied into another job, tenant or variable is refused
 * rather than decrypted there.
 *
 * The key is 32 bytes; its file form is 64 hexadecimal digits (a newline after them allowed).
 *
 * Pure functions of their arguments (plus OpenSSL's thread-safe RNG). Output strings are heap
 * copies the caller frees; a plaintext returned is NUL-terminated (callers that hold secrets
 * wipe them with gp_seal_wipe before freeing).
 */
#ifndef GP_NET_SEAL_H
#define GP_NET_SEAL_H

#include "gpupool/error.h"

#include <stddef.h>

#define GP_SEAL_KEY_LEN  32
#define GP_SEAL_KEY_HEX  (2 * GP_SEAL_KEY_LEN + 1) /* hex digits and a NUL */
#define GP_SEAL_MAX_TEXT 65536                     /* the longest plaintext sealed */

/* A new random key in hex (64 digits and a NUL). 0 or GP_EIO (the RNG failed). */
int gp_seal_key_generate(char hex[GP_SEAL_KEY_HEX]);
/* The key of text: 64 hex digits, optionally followed by one newline ("\n" or "\r\n"). 0 or
 * GP_EINVAL. */
int gp_seal_key_parse(const char *text, unsigned char key[GP_SEAL_KEY_LEN]);

/* Seals plain (len bytes, at most GP_SEAL_MAX_TEXT) under key with associated data ad (a
 * NUL-terminated string). 0 and *out (heap), or GP_ETOOBIG, GP_ENOMEM or GP_EIO; d says why. */
int gp_seal(const unsigned char key[GP_SEAL_KEY_LEN], const char *ad, const char *plain, size_t len,
            char **out, gp_diag *d);
/* Opens sealed under key and ad. 0 and *plain (heap, NUL-terminated, *len bytes before the NUL);
 * GP_EPARSE when it is not a sealed value; GP_EPERM when it does not open (another key, another
 * ad, or changed); GP_ENOMEM. */
int gp_unseal(const unsigned char key[GP_SEAL_KEY_LEN], const char *ad, const char *sealed,
              char **plain, size_t *len, gp_diag *d);
/* Whether s has the form of a sealed value (the prefix). */
int gp_seal_is_sealed(const char *s);
/* Overwrites n bytes at p with zeros in a way the compiler keeps (OPENSSL_cleanse). */
void gp_seal_wipe(void *p, size_t n);

#endif

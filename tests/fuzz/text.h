/*
 * What every fuzz target of a text parser starts with: the fuzzer's bytes as a NUL-terminated
 * string (a copy to free; NULL when out of memory, which the target skips).
 */
#ifndef GP_FUZZ_TEXT_H
#define GP_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = '\0';
    }
    return text;
}

#endif

/*
 * Generated job names (jobname.h).
 */
#include "cli/jobname.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define BASE_MAX   57 /* 63 less "-" and the 5-character suffix */
#define SUFFIX_LEN 5

static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

void gp_cli_job_name(const char *command, uint64_t rnd, char *out, size_t cap)
{
    const char *base = strrchr(command, '/') ? strrchr(command, '/') + 1 : command;
    char name[BASE_MAX + 1];
    size_t n = 0;
    for (const char *p = base; *p && n < BASE_MAX; p++) {
        char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (ok) {
            name[n++] = ch;
        } else if (n > 0 && name[n - 1] != '-') {
            name[n++] = '-';
        }
    }
    while (n > 0 && name[n - 1] == '-') {
        n--;
    }
    name[n] = '\0';
    char suffix[SUFFIX_LEN + 1];
    for (int i = 0; i < SUFFIX_LEN; i++) {
        suffix[i] = alphabet[rnd % (sizeof(alphabet) - 1)];
        rnd /= sizeof(alphabet) - 1;
    }
    suffix[SUFFIX_LEN] = '\0';
    snprintf(out, cap, "%s-%s", n ? name : "job", suffix);
}

/* 64 random bits: getrandom, else the clock and the pid (a name only needs to differ). */
static uint64_t random_bits(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15u ^ (uint64_t)ts.tv_sec ^
            ((uint64_t)getpid() << 32);
    }
    return r;
}

void gp_cli_job_name_new(const char *command, char *out, size_t cap)
{
    gp_cli_job_name(command, random_bits(), out, cap);
}

/*
 * libFuzzer target for gpupoold's configuration file: any bytes as the YAML file given with
 * --config must give a configuration or one clear error, never a crash, a leak or undefined
 * behaviour. The file is an in-memory file (memfd) named through /proc/self/fd.
 */
#define _GNU_SOURCE
#include "ctl/config.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("gpupool-config", MFD_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        char *argv[] = {"gpupoold", "--config", path, "--data-dir", "/nonexistent", NULL};
        gp_ctl_config cfg;
        gp_ctl_cli cli;
        gp_diag d;
        gp_ctl_config_load(5, argv, NULL, &cfg, &cli, &d);
    }
    close(fd);
    return 0;
}

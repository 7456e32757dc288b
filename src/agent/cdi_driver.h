/*
 * Which files on a node are the NVIDIA driver's user-space part that containers need (mounted
 * read-only by the CDI spec, cdi.h). Pure decisions on names and bytes; cdi_host.c feeds them
 * what it finds on the host.
 *
 * What is included (the driver's "compute" and "utility" parts, as the NVIDIA container toolkit
 * names them; no graphics, video or display libraries):
 *   libraries  libnvidia-ml, libnvidia-cfg, libnvidia-nscq (utility); libcuda, libcudadebugger,
 *              libnvidia-opencl, libnvidia-ptxjitcompiler, libnvidia-fatbinaryloader,
 *              libnvidia-allocator, libnvidia-compiler, libnvidia-nvvm, libnvidia-gpucomp,
 *              libnvidia-pkcs11, libnvidia-pkcs11-openssl3 (compute) — those the node has;
 *   programs   nvidia-smi, nvidia-debugdump, nvidia-cuda-mps-control, nvidia-cuda-mps-server.
 * A library counts only when its real file (symbolic links resolved) is named
 * "<library>.so.<driver version>" — the version NVML reports — and is built for the agent's own
 * machine (ELF class, byte order and machine): a leftover of an older driver, or the 32-bit
 * copy, is never mounted.
 */
#ifndef GP_AGENT_CDI_DRIVER_H
#define GP_AGENT_CDI_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

/* The driver's programs above; NULL-terminated. */
extern const char *const gp_cdi_driver_programs[];

/* True when a file whose (resolved) base name is file is one of the libraries above at driver
 * version version ("libcuda.so.550.54.15" at "550.54.15"). */
bool gp_cdi_driver_library(const char *file, const char *version);

/* True when name (a link name from the ld cache: "libcuda.so.1", "libcuda.so") names one of the
 * libraries above, in any version. */
bool gp_cdi_driver_link(const char *name);

/* The base name of path (after its last '/'). */
const char *gp_cdi_basename(const char *path);

/*
 * One entry of the text `ldconfig -p` prints ("\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/...")
 * at *cursor, which is advanced past the line: 1 and name and path filled (name the link name,
 * path the file the cache points at), 0 at the end of the text. Lines of another shape (the
 * header "N libs found in cache") are skipped; a name or path longer than its buffer skips the
 * entry.
 */
int gp_cdi_ldcache_next(const char **cursor, char *name, size_t name_cap, char *path,
                        size_t path_cap);

/* True when the ELF headers a (na bytes) and b (nb bytes) are both ELF headers (at least 20
 * bytes) for the same class, byte order and machine. */
bool gp_cdi_elf_same(const unsigned char *a, size_t na, const unsigned char *b, size_t nb);

#endif

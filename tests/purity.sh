#!/usr/bin/env bash
# Fails when an object of libgpcore (or the pure error table it links) references a symbol that
# does I/O, reads a clock, draws randomness or reads the environment. The list is of libc and
# POSIX entry points; anything undefined outside the allowed set is reported by name.
set -euo pipefail
forbidden='^(open|open64|openat|creat|close|read|write|pread|pwrite|readv|writev|lseek|fopen|fopen64|fdopen|freopen|fclose|fread|fwrite|fgets|fputs|fputc|fgetc|getc|putc|getchar|putchar|puts|printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|scanf|fscanf|sscanf_unused|perror|getline|getdelim|fflush|setvbuf|stat|fstat|lstat|stat64|fstat64|mmap|munmap|socket|connect|bind|listen|accept|accept4|send|recv|sendto|recvfrom|sendmsg|recvmsg|select|poll|epoll_wait|ioctl|fcntl|dup|dup2|pipe|unlink|rename|mkdir|rmdir|opendir|readdir|time|clock|clock_gettime|gettimeofday|localtime|localtime_r|gmtime|gmtime_r|mktime|nanosleep|sleep|usleep|rand|rand_r|srand|random|srandom|drand48|erand48|lrand48|srand48|getrandom|arc4random|getenv|secure_getenv|setenv|putenv|system|popen|fork|execve|execvp|exit|_exit|abort|syslog|dlopen|dlsym|pthread_create|__printf_chk|__fprintf_chk|__vfprintf_chk|__read_chk|__fread_chk|__fgets_chk|stdout|stderr|stdin)$'
status=0
for lib in "$@"; do
    syms=$(nm -u --format=posix "$lib" | awk '{print $1}' | sed 's/@.*//' | sort -u)
    bad=$(printf '%s\n' "$syms" | grep -E "$forbidden" || true)
    if [ -n "$bad" ]; then
        echo "purity: $(basename "$lib") references forbidden symbols:" $bad >&2
        status=1
    fi
    # Writable data: symbols in .data or .bss sections (.data.rel.ro is read-only after load).
    defined_globals=$(nm --defined-only --format=sysv "$lib" |
        awk -F'|' '{gsub(/ /, "", $1); gsub(/ /, "", $7)} $7 ~ /^\.(data|bss)/ && $7 !~ /^\.data\.rel\.ro/ && $1 !~ /^(\.|__)/ {print $1}')
    if [ -n "$defined_globals" ]; then
        echo "purity: $(basename "$lib") defines mutable globals:" $defined_globals >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "purity: $(printf '%s ' "$@" | wc -w) libraries clean"
exit $status

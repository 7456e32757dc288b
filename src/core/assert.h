/*
 * Defensive checks of libgpcore, after SQLite's ALWAYS()/NEVER().
 *
 * GP_ALWAYS(x) states an invariant the code guarantees. Debug and sanitizer builds abort when it
 * is false (through __builtin_trap, which needs no I/O); release builds evaluate it and go on.
 */
#ifndef GP_CORE_ASSERT_H
#define GP_CORE_ASSERT_H

#ifdef NDEBUG
#define GP_ALWAYS(x) ((void)(x))
#else
#define GP_ALWAYS(x)                                                                               \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            __builtin_trap();                                                                      \
        }                                                                                          \
    } while (0)
#endif

#endif

/*
 * Common includes of the unit tests: cmocka needs these system headers before its own.
 */
#ifndef GP_TESTS_HARNESS_H
#define GP_TESTS_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#endif

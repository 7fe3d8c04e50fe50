/*
 * compat.h - the standard headers and compiler attributes every kiln source uses.
 *
 * Included first by util/util.h, so every .c file gets the same view of libc. It ends by
 * including banned.h, which turns unsafe libc calls into compile errors.
 */
#ifndef KILN_UTIL_COMPAT_H
#define KILN_UTIL_COMPAT_H

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define KILN_MUST_CHECK __attribute__((warn_unused_result))
#define KILN_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define KILN_NORETURN __attribute__((noreturn))
#define KILN_UNUSED __attribute__((unused))
#define KILN_LIKELY(x) __builtin_expect(!!(x), 1)
#define KILN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KILN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include "util/banned.h"

#endif

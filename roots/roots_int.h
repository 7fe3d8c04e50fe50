/*
 * roots_int.h - what the files of roots/ share and nothing else sees.
 */
#ifndef KILN_ROOTS_INT_H
#define KILN_ROOTS_INT_H

#include "util/util.h"

/* The administrator's root configurations, searched before kiln's own. */
#define ROOTS_ETC_DIR "/etc/kiln/roots"

/* Parentheses a rich dependency may nest (rpm itself allows far fewer in practice). */
#define ROOTS_RICH_MAX_DEPTH 64

/* Letters, digits and the characters of extra; 1 to 128 bytes. */
bool roots_name_ok(struct kiln_str s, const char *extra);

struct roots_lock;
struct roots_lock_pkg;
/* Append a copy of pkg (strings copied into l's arena) to l. */
KILN_MUST_CHECK kiln_rc roots_lock_add(struct roots_lock *l, const struct roots_lock_pkg *pkg,
                                       struct kiln_err *err);

#endif

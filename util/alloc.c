/*
 * alloc.c - heap allocation with optional fault injection.
 *
 * With -DKILN_FAULT_INJECTION (the check-oom build) the allocation whose ordinal equals
 * $KILN_FAIL_ALLOC fails, so tests can prove every path reports KILN_ENOMEM without leaking.
 * The counter is the one piece of mutable state here; it exists only in that build.
 */
#include "util/util.h"

#ifdef KILN_FAULT_INJECTION
#include <stdatomic.h>

static atomic_long alloc_count;

static bool alloc_should_fail(void)
{
	static long fail_at = -1;
	const char *s;
	long n;

	if (fail_at < 0) {
		s = getenv("KILN_FAIL_ALLOC");
		fail_at = s ? strtol(s, NULL, 10) : 0;
	}
	n = atomic_fetch_add(&alloc_count, 1) + 1;
	return fail_at > 0 && n == fail_at;
}
#else
static bool alloc_should_fail(void)
{
	return false;
}
#endif

void *kiln_malloc(size_t size)
{
	return alloc_should_fail() ? NULL : malloc(size ? size : 1);
}

void *kiln_calloc(size_t n, size_t size)
{
	return alloc_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *kiln_realloc(void *ptr, size_t size)
{
	return alloc_should_fail() ? NULL : realloc(ptr, size ? size : 1);
}

void *kiln_reallocarray(void *ptr, size_t n, size_t size)
{
	size_t total;

	if (!util_mul_ok(n, size, &total))
		return NULL;
	return kiln_realloc(ptr, total);
}

char *kiln_strndup(const char *s, size_t len)
{
	char *p = kiln_malloc(len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *kiln_strdup(const char *s)
{
	return kiln_strndup(s, strlen(s));
}

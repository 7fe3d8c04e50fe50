/*
 * alloc.c - heap allocation with optional fault injection.
 *
 * With -DKILN_FAULT_INJECTION (the check-oom build) the allocation whose ordinal equals
 * $KILN_FAIL_ALLOC fails, so tests can prove every path reports KILN_ENOMEM without leaking.
 * The counter is the one piece of mutable state here; it exists only in that build.
 */
#include "util/util.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* util_bigmem: a block of UTIL_BIGMEM_MIN or more gets its own mapping, aligned to and sized
 * in huge pages, with MADV_HUGEPAGE. A 16-byte-aligned header in front of what the caller
 * gets says how the block was made: its mapping's length, or 0 for malloc. */
#define BIGMEM_HDR 64
#define BIGMEM_HUGE UTIL_BIGMEM_MIN /* the threshold is the x86-64 huge page size */

static void *bigmem_map(size_t size)
{
	size_t len, span, head;
	char *p, *base;

	if (!util_add_ok(size, BIGMEM_HDR + BIGMEM_HUGE - 1, &len))
		return NULL;
	len &= ~(BIGMEM_HUGE - 1);
	/* One huge page more than needed, then the unaligned ends go back: the kernel only
	 * backs aligned 2 MiB ranges with huge pages. */
	if (!util_add_ok(len, BIGMEM_HUGE, &span))
		return NULL;
	base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	head = (BIGMEM_HUGE - (uintptr_t)base % BIGMEM_HUGE) % BIGMEM_HUGE;
	p = base + head;
	if (head)
		munmap(base, head);
	if (span - head > len)
		munmap(p + len, span - head - len);
	/* Advice only: without transparent huge pages this is ordinary memory. */
	(void)madvise(p, len, MADV_HUGEPAGE);
	memcpy(p, &len, sizeof(len));
	return p + BIGMEM_HDR;
}

void util_prefault(void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)p + len) & ~(page - 1);

#ifdef MADV_POPULATE_WRITE
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
#else
	(void)start;
	(void)end;
#endif
}

void *util_bigmem_alloc(size_t size)
{
	size_t zero = 0, total;
	char *p;

	if (alloc_should_fail())
		return NULL;
	if (size >= UTIL_BIGMEM_MIN)
		return bigmem_map(size);
	if (!util_add_ok(size, BIGMEM_HDR, &total) || !(p = malloc(total)))
		return NULL;
	memcpy(p, &zero, sizeof(zero));
	return p + BIGMEM_HDR;
}

void util_bigmem_free(void *ptr)
{
	char *p;
	size_t len;

	if (!ptr)
		return;
	p = (char *)ptr - BIGMEM_HDR;
	memcpy(&len, p, sizeof(len));
	if (len)
		munmap(p, len);
	else
		free(p);
}

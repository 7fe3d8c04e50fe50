#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(arena_allocates_aligned_zeroed)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB * 16);
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char *p;
	int i;

	for (i = 0; i < 1000; i++) {
		p = kiln_arena_alloc(&a, (size_t)i + 1);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		assert_int_equal(p[i], 0);
		memset(p, 0xff, (size_t)i + 1);
	}
	assert_ok(kiln_arena_finish(&a, &err), &err);
	kiln_arena_release(&a);
}

KILN_TEST(arena_raw_allocations_are_aligned_apart_and_bounded)
{
	struct kiln_arena a = KILN_ARENA_INIT(100 * 1024);
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char *p = kiln_arena_alloc_raw(&a, 3), *q = kiln_arena_alloc_raw(&a, 40);

	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal((uintptr_t)p % 16, 0);
	assert_int_equal((uintptr_t)q % 16, 0);
	assert_true(q - p >= 16); /* p's 3 bytes rounded up, q after them */
	memset(p, 0xaa, 3);
	memset(q, 0xbb, 40);
	assert_int_equal(p[2], 0xaa);
	/* the zeroing allocation after raw ones still zeroes */
	p = kiln_arena_alloc(&a, 64);
	assert_int_equal(p[63], 0);
	assert_null(kiln_arena_alloc_raw(&a, 200 * 1024));
	assert_int_equal(kiln_arena_finish(&a, &err), KILN_ELIMIT);
	kiln_arena_release(&a);
}

KILN_TEST(arena_big_allocation_keeps_current_block)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB * 16);
	char *small1 = kiln_arena_strdup(&a, "one");
	char *big = kiln_arena_alloc(&a, 1000000);
	char *small2 = kiln_arena_strdup(&a, "two");

	assert_non_null(big);
	assert_string_equal(small1, "one");
	assert_string_equal(small2, "two");
	/* The small allocations share the first block. */
	assert_true(small2 - small1 > 0 && small2 - small1 < 64);
	kiln_arena_release(&a);
}

KILN_TEST(arena_limit_is_an_error)
{
	struct kiln_arena a = KILN_ARENA_INIT(100 * 1024);
	struct kiln_err err = KILN_ERR_INIT;

	assert_non_null(kiln_arena_alloc(&a, 10));
	assert_null(kiln_arena_alloc(&a, 200 * 1024));
	assert_null(kiln_arena_alloc(&a, 1));
	assert_int_equal(kiln_arena_finish(&a, &err), KILN_ELIMIT);
	assert_null(kiln_arena_array(&a, SIZE_MAX, 2));
	kiln_arena_release(&a);
}

KILN_TEST(arena_printf_and_strndup)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);

	assert_string_equal(kiln_arena_printf(&a, "%s-%d", "x", 7), "x-7");
	assert_string_equal(kiln_arena_strndup(&a, "abcdef", 3), "abc");
	kiln_arena_release(&a);
	kiln_arena_release(&a);
}

/* The string list keeps every entry in order across the doublings, and stops (appending
 * nothing) once the arena's limit is reached. */
KILN_TEST(arena_strv_add_grows_and_stops_at_the_limit)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_arena small = KILN_ARENA_INIT(64);
	const char **v = NULL;
	size_t n = 0, cap = 0, i;
	char name[16];

	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "s%zu", i);
		assert_true(kiln_arena_strv_add(&a, &v, &n, &cap, kiln_arena_strdup(&a, name)));
	}
	assert_int_equal(n, 100);
	assert_true(cap >= 100);
	assert_string_equal(v[0], "s0");
	assert_string_equal(v[99], "s99");
	v = NULL;
	n = cap = 0;
	assert_false(kiln_arena_strv_add(&small, &v, &n, &cap, "x"));
	assert_int_equal(n, 0);
	assert_int_equal(kiln_arena_finish(&small, NULL), KILN_ELIMIT);
	kiln_arena_release(&small);
	kiln_arena_release(&a);
}

/* A prefaulting arena hands out the same zeroed memory, and keeps prefaulting after a
 * release; util_prefault takes any range, unaligned and empty ones included. */
KILN_TEST(arena_prefault_blocks)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB * 16);
	struct kiln_err err = KILN_ERR_INIT;
	char stack[100];
	unsigned char *p;
	int round, i;

	a.prefault = true;
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 100; i++) {
			p = kiln_arena_alloc(&a, 10000);
			assert_non_null(p);
			assert_int_equal(p[0] | p[9999], 0);
			memset(p, 0xff, 10000);
		}
		assert_ok(kiln_arena_finish(&a, &err), &err);
		kiln_arena_release(&a);
		assert_true(a.prefault);
	}
	util_prefault(stack + 1, sizeof(stack) - 1);
	util_prefault(stack, 0);
}

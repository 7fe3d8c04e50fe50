#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(alloc_wrappers)
{
	char *s = kiln_strdup("abc");
	char *t = kiln_strndup("abcdef", 2);
	int *a = kiln_calloc(4, sizeof(*a));

	assert_string_equal(s, "abc");
	assert_string_equal(t, "ab");
	assert_int_equal(a[3], 0);
	a = kiln_reallocarray(a, 8, sizeof(*a));
	assert_non_null(a);
	assert_null(kiln_reallocarray(NULL, SIZE_MAX, 2));
	free(s);
	free(t);
	free(a);
}

/* Small and large blocks: usable to the last byte, 16-byte aligned, each freed the way it
 * was made (ASan and valgrind would see a malloc block given to munmap or the reverse). */
KILN_TEST(bigmem_small_and_large_blocks)
{
	static const size_t sizes[] = {1, 4096, UTIL_BIGMEM_MIN - 1, UTIL_BIGMEM_MIN,
	                               3 * UTIL_BIGMEM_MIN + 12345};
	unsigned char *p[KILN_ARRAY_SIZE(sizes)];
	size_t i, j;

	for (i = 0; i < KILN_ARRAY_SIZE(sizes); i++) {
		p[i] = util_bigmem_alloc(sizes[i]);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % 16, 0);
		memset(p[i], (int)i + 1, sizes[i]);
	}
	for (i = 0; i < KILN_ARRAY_SIZE(sizes); i++) {
		for (j = 0; j < sizes[i]; j += 4093)
			assert_int_equal(p[i][j], i + 1);
		assert_int_equal(p[i][sizes[i] - 1], i + 1);
		util_bigmem_free(p[i]);
	}
	util_bigmem_free(NULL);
	assert_null(util_bigmem_alloc(SIZE_MAX - 8));
}

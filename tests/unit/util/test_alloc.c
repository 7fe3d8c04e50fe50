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

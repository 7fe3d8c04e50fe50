#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(num_parses_within_range)
{
	struct kiln_err err = KILN_ERR_INIT;
	int64_t v = 0;
	uint64_t u = 0;
	int i = 0;

	assert_ok(util_parse_i64("-42", 3, 10, -100, 100, &v, &err), &err);
	assert_int_equal(v, -42);
	assert_ok(util_parse_u64("ff", 2, 16, UINT64_MAX, &u, &err), &err);
	assert_int_equal(u, 255);
	assert_ok(util_parse_u64("0755", 4, 8, 07777, &u, &err), &err);
	assert_int_equal(u, 0755);
	assert_ok(util_parse_int("2147483647", INT_MIN, INT_MAX, &i, &err), &err);
	assert_int_equal(i, INT_MAX);
	/* Only the given length is read. */
	assert_ok(util_parse_i64("12abc", 2, 10, 0, 100, &v, &err), &err);
	assert_int_equal(v, 12);
}

KILN_TEST(num_rejects_junk_and_range)
{
	struct kiln_err err = KILN_ERR_INIT;
	int64_t v = 7;
	uint64_t u = 7;

	assert_int_equal(util_parse_i64("", 0, 10, 0, 9, &v, &err), KILN_ESYNTAX);
	assert_int_equal(util_parse_i64("12x", 3, 10, 0, 99, &v, NULL), KILN_ESYNTAX);
	assert_int_equal(util_parse_i64(" 1", 2, 10, 0, 99, &v, NULL), KILN_ESYNTAX);
	assert_int_equal(util_parse_i64("+1", 2, 10, 0, 99, &v, NULL), KILN_ESYNTAX);
	/* Found by fuzzing: strtoll skips any leading white space, not just blanks. */
	assert_int_equal(util_parse_i64("\r 9", 3, 10, 0, 99, &v, NULL), KILN_ESYNTAX);
	assert_int_equal(util_parse_i64("\v9", 2, 10, 0, 99, &v, NULL), KILN_ESYNTAX);
	assert_int_equal(util_parse_i64("100", 3, 10, 0, 99, &v, NULL), KILN_ELIMIT);
	assert_int_equal(
	    util_parse_i64("99999999999999999999", 20, 10, INT64_MIN, INT64_MAX, &v, NULL),
	    KILN_ELIMIT);
	assert_int_equal(util_parse_u64("-1", 2, 10, 9, &u, NULL), KILN_ESYNTAX);
	assert_int_equal(util_parse_u64("1\0", 2, 10, 9, &u, NULL), KILN_ESYNTAX);
	assert_int_equal(v, 7);
	assert_int_equal(u, 7);
	assert_int_equal(err.code, KILN_ESYNTAX);
}

KILN_TEST(num_overflow_helpers)
{
	size_t r;

	assert_true(util_add_ok(1, 2, &r));
	assert_int_equal(r, 3);
	assert_false(util_add_ok(SIZE_MAX, 1, &r));
	assert_false(util_mul_ok(SIZE_MAX / 2 + 1, 2, &r));
	assert_true(util_mul_ok(1000, 1000, &r));
}

/* The text must be printf's. */
KILN_TEST(num_fmt_int_matches_printf)
{
	static const long long vals[] = {0,
	                                 1,
	                                 9,
	                                 10,
	                                 99,
	                                 100,
	                                 -1,
	                                 -9,
	                                 -10,
	                                 2147483647LL,
	                                 -2147483647LL - 1,
	                                 9223372036854775807LL,
	                                 -9223372036854775807LL - 1};
	char want[32];
	char got[UTIL_INT_MAX_TEXT];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(vals); i++) {
		snprintf(want, sizeof(want), "%lld", vals[i]);
		assert_int_equal(util_fmt_int(got, vals[i]), strlen(want));
		assert_string_equal(got, want);
	}
}

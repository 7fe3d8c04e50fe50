#include "util/util.h"

#include "tests/unit/harness.h"
#include "api/api.h"

static void check(const char *h, uint64_t size, enum api_range want, uint64_t off, uint64_t len)
{
	uint64_t o = 99, l = 99;

	assert_int_equal(api_range_parse(h, size, &o, &l), want);
	if (want == API_RANGE_PARTIAL) {
		assert_int_equal(o, off);
		assert_int_equal(l, len);
	}
}

KILN_TEST(range_one_range_of_each_form)
{
	check("bytes=0-9", 100, API_RANGE_PARTIAL, 0, 10);
	check("bytes=5-14", 100, API_RANGE_PARTIAL, 5, 10);
	check(" bytes=90-", 100, API_RANGE_PARTIAL, 90, 10);
	check("bytes=90-1000", 100, API_RANGE_PARTIAL, 90, 10); /* clamped to the end */
	check("bytes=-7", 100, API_RANGE_PARTIAL, 93, 7);
	check("bytes=-700", 100, API_RANGE_PARTIAL, 0, 100);
	check("bytes=99-99", 100, API_RANGE_PARTIAL, 99, 1);
}

KILN_TEST(range_unsatisfiable_and_ignored)
{
	check("bytes=100-", 100, API_RANGE_UNSATISFIABLE, 0, 0);
	check("bytes=0-", 0, API_RANGE_UNSATISFIABLE, 0, 0);
	check("bytes=-0", 100, API_RANGE_UNSATISFIABLE, 0, 0);
	/* the whole file: another unit, several ranges, malformed, reversed, overflowing */
	check("items=0-9", 100, API_RANGE_NONE, 0, 0);
	check("bytes=0-1,5-6", 100, API_RANGE_NONE, 0, 0);
	check("bytes=a-b", 100, API_RANGE_NONE, 0, 0);
	check("bytes=9-2", 100, API_RANGE_NONE, 0, 0);
	check("bytes=5", 100, API_RANGE_NONE, 0, 0);
	check("bytes=1-2x", 100, API_RANGE_NONE, 0, 0);
	check("bytes=99999999999999999999-", 100, API_RANGE_NONE, 0, 0);
}

KILN_TEST(range_etag_match)
{
	assert_true(api_etag_match("\"a-1\"", "\"a-1\""));
	assert_true(api_etag_match("\"x\", W/\"a-1\"", "\"a-1\""));
	assert_true(api_etag_match("*", "\"a-1\""));
	assert_false(api_etag_match("\"a-2\"", "\"a-1\""));
	assert_false(api_etag_match("a-1", "\"a-1\""));
	assert_false(api_etag_match("", "\"a-1\""));
}

KILN_TEST(range_etag_match_lists_weak_and_star)
{
	const char *tag = "\"0123456789abcdef\"";

	assert_true(api_etag_match("\"0123456789abcdef\"", tag));
	assert_true(api_etag_match("W/\"0123456789abcdef\"", tag));
	assert_true(api_etag_match("\"x\", \"0123456789abcdef\"", tag));
	assert_true(api_etag_match("\"x\",W/\"0123456789abcdef\" , \"y\"", tag));
	assert_true(api_etag_match("*", tag));
	assert_false(api_etag_match("", tag));
	assert_false(api_etag_match("\"0123456789abcde\"", tag));
	assert_false(api_etag_match("\"0123456789abcdef0\"", tag));
	assert_false(api_etag_match("\"0123456789abcdef\"x", tag));
	assert_false(api_etag_match("0123456789abcdef", tag));
	assert_false(api_etag_match(",,, ", tag));
}

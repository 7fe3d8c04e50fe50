#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(clock_source_date_epoch)
{
	struct kiln_err err = KILN_ERR_INIT;
	int64_t t = 0;

	unsetenv("SOURCE_DATE_EPOCH");
	assert_int_equal(util_clock_source_date_epoch(&t, &err), KILN_ENOTFOUND);
	setenv("SOURCE_DATE_EPOCH", "1704067200", 1);
	assert_ok(util_clock_source_date_epoch(&t, &err), &err);
	assert_int_equal(t, 1704067200);
	setenv("SOURCE_DATE_EPOCH", "soon", 1);
	assert_int_equal(util_clock_source_date_epoch(&t, &err), KILN_ESYNTAX);
	assert_non_null(strstr(err.msg, "SOURCE_DATE_EPOCH"));
	unsetenv("SOURCE_DATE_EPOCH");
}

KILN_TEST(clock_format_and_monotonic)
{
	char out[64];
	int64_t a = util_clock_mono_ns();
	int64_t b = util_clock_mono_ns();

	assert_string_equal(
	    util_clock_format_utc(1704067200, "%a %b %d %Y %H:%M", out, sizeof(out)),
	    "Mon Jan 01 2024 00:00");
	assert_true(b >= a);
	assert_true(util_clock_wall() > 1700000000);
	assert_true(util_clock_wall_ms() / 1000 >= util_clock_wall() - 1);
}

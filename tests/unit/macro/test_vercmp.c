#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

/* Cases from rpm's documented comparison rules (rpm-version(7)). */
KILN_TEST(vercmp_rules)
{
	static const struct {
		const char *a, *b;
		int want;
	} cases[] = {
	    {"1.0", "1.0", 0},
	    {"1.0", "2.0", -1},
	    {"2.0", "1.0", 1},
	    {"2.0.1", "2.0.1", 0},
	    {"2.0", "2.0.1", -1},
	    {"2.0.1a", "2.0.1", 1},
	    {"5.5p1", "5.5p2", -1},
	    {"5.5p10", "5.5p1", 1},
	    {"10xyz", "10.1xyz", -1},
	    {"xyz10", "xyz10.1", -1},
	    {"xyz.4", "8", -1},
	    {"xyz.4", "2", -1},
	    {"5.5p2", "5.6p1", -1},
	    {"6.0", "6.0.rc1", -1},
	    {"10a2", "10b2", -1},
	    {"1.0aa", "1.0a", 1},
	    {"10.0001", "10.1", 0},
	    {"10.0001", "10.0039", -1},
	    {"4.999.9", "5.0", -1},
	    {"20101121", "20101122", -1},
	    {"2_0", "2_0", 0},
	    {"2.0", "2_0", 0},
	    {"a", "a", 0},
	    {"a+", "a_", 0},
	    {"+a", "_a", 0},
	    {"1.0~rc1", "1.0", -1},
	    {"1.0~rc1", "1.0~rc2", -1},
	    {"1.0~rc1~git123", "1.0~rc1", -1},
	    {"1.0^", "1.0", 1},
	    {"1.0^git1", "1.0^git2", -1},
	    {"1.0^git1", "1.01", -1},
	    {"1.0^20160101", "1.0.1", -1},
	    {"1.0~rc1^git1", "1.0~rc1", 1},
	    {"1.0^git1~pre", "1.0^git1", -1},
	    {"", "", 0},
	    {"1", "", 1},
	};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(cases); i++) {
		int got = macro_vercmp(cases[i].a, cases[i].b);

		if (got != cases[i].want)
			print_error("vercmp(%s, %s) = %d\n", cases[i].a, cases[i].b, got);
		assert_int_equal(got, cases[i].want);
		assert_int_equal(macro_vercmp(cases[i].b, cases[i].a), -cases[i].want);
	}
}

KILN_TEST(evr_parse_and_compare)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_evr a;
	struct macro_evr b;

	assert_ok(macro_evr_parse("2:1.0-3.fc40", &a, &err), &err);
	assert_string_equal(a.epoch, "2");
	assert_string_equal(a.version, "1.0");
	assert_string_equal(a.release, "3.fc40");
	assert_ok(macro_evr_parse("1.0", &b, &err), &err);
	assert_null(b.epoch);
	assert_null(b.release);
	/* Epoch decides; a missing release on one side matches any release. */
	assert_int_equal(macro_evr_cmp(&a, &b), 1);
	macro_evr_release(&a);
	assert_ok(macro_evr_parse("1.0-7", &a, &err), &err);
	assert_int_equal(macro_evr_cmp(&a, &b), 0);
	macro_evr_release(&a);
	assert_ok(macro_evr_parse(":1.0", &a, &err), &err);
	assert_string_equal(a.epoch, "0");
	macro_evr_release(&a);
	assert_ok(macro_evr_parse("a:b-c-d", &a, &err), &err);
	assert_null(a.epoch);
	assert_string_equal(a.version, "a:b-c");
	assert_string_equal(a.release, "d");
	macro_evr_release(&a);
	macro_evr_release(&b);
	macro_evr_release(&b);
}

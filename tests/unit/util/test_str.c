#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(str_trim_and_compare)
{
	struct kiln_str s = kiln_str_from("  \tname value \n");

	s = kiln_str_trim(s);
	assert_true(kiln_str_eq_cstr(s, "name value"));
	assert_true(kiln_str_starts(s, "name"));
	assert_true(kiln_str_ends(s, "value"));
	assert_false(kiln_str_starts(s, "value"));
	assert_int_equal(kiln_str_chr(s, ' '), 4);
	assert_int_equal(kiln_str_chr(s, '#'), -1);
	assert_true(kiln_str_eq(kiln_str_trim(kiln_str_from("   ")), kiln_str_make("", 0)));
}

KILN_TEST(str_split)
{
	struct kiln_str head;
	struct kiln_str rest;
	bool found;

	rest = kiln_str_split(kiln_str_from("a:b:c"), ':', &head, &found);
	assert_true(found);
	assert_true(kiln_str_eq_cstr(head, "a"));
	assert_true(kiln_str_eq_cstr(rest, "b:c"));
	rest = kiln_str_split(kiln_str_from("abc"), ':', &head, &found);
	assert_false(found);
	assert_true(kiln_str_eq_cstr(head, "abc"));
	assert_int_equal(rest.len, 0);
}

KILN_TEST(str_dup_copies)
{
	char *d = kiln_str_dup(kiln_str_make("hello", 4));

	assert_string_equal(d, "hell");
	free(d);
	d = kiln_str_dup(kiln_str_make(NULL, 0));
	assert_string_equal(d, "");
	free(d);
}

/* FNV-1a, 32 bits: the published test vectors */
KILN_TEST(str_hash_is_fnv1a)
{
	assert_int_equal(util_hash_str(""), 0x811c9dc5u);
	assert_int_equal(util_hash_str("a"), 0xe40c292cu);
	assert_int_equal(util_hash_str("foobar"), 0xbf9cf968u);
}

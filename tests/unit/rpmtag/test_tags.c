#include "util/util.h"

#include "rpmtag/rpmtag.h"
#include "tests/unit/harness.h"

KILN_TEST(tags_by_number_and_name)
{
	const struct rpmtag_info *t = rpmtag_by_num(RPMTAG_NAME);

	assert_non_null(t);
	assert_string_equal(t->name, "NAME");
	assert_int_equal(t->type, RPMTAG_TYPE_STRING);
	assert_ptr_equal(rpmtag_by_name("name", 4), t);
	assert_ptr_equal(rpmtag_by_name("RPMTAG_NaMe", 11), t);
	assert_null(rpmtag_by_name("NAMEX", 5));
	assert_null(rpmtag_by_num(4242));
	/* rpm 4.18's names of renamed tags still work. */
	assert_int_equal(rpmtag_by_name("PAYLOADDIGEST", 13)->num, RPMTAG_PAYLOADSHA256);
	assert_true(rpmtag_by_num(RPMTAG_FILENAMES)->flags & RPMTAG_F_EXT);
	assert_true(rpmtag_by_num(RPMTAG_FILEMODES)->flags & RPMTAG_F_ARRAY);
}

KILN_TEST(tags_table_is_sorted)
{
	size_t n, i;
	const struct rpmtag_info *t = rpmtag_table(&n);

	assert_true(n > 200);
	for (i = 1; i < n; i++)
		assert_true(t[i - 1].num < t[i].num);
}

KILN_TEST(tags_shortnames)
{
	char b[64];

	assert_string_equal(rpmtag_shortname(RPMTAG_SHA256HEADER, b, sizeof(b)), "Sha256header");
	assert_string_equal(rpmtag_shortname(RPMTAG_HEADERI18NTABLE, b, sizeof(b)),
	                    "Headeri18ntable");
	assert_string_equal(rpmtag_shortname(4242, b, sizeof(b)), "[4242]");
}

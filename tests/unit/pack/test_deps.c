#include "util/util.h"

#include "pack/pack.h"
#include "tests/unit/harness.h"

KILN_TEST(deps_sorted_and_deduplicated)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header h;
	const struct pack_entry *n, *f;

	pack_header_init(&h);
	assert_ok(pack_deps_add(&h, PACK_DEP_REQUIRE, "zlib", "", 0, &err), &err);
	assert_ok(pack_deps_add(&h, PACK_DEP_REQUIRE, "/bin/sh", "", 1024, &err), &err);
	assert_ok(pack_deps_add(&h, PACK_DEP_REQUIRE, "/bin/sh", "", 256, &err), &err);
	assert_ok(pack_deps_add(&h, PACK_DEP_REQUIRE, "bash", "4", 12, &err), &err);
	assert_ok(pack_deps_add(&h, PACK_DEP_REQUIRE, "bash", "4", 12, &err), &err);
	n = pack_header_get(&h, RPMTAG_REQUIRENAME);
	f = pack_header_get(&h, RPMTAG_REQUIREFLAGS);
	assert_int_equal(n->count, 4);
	assert_string_equal(((const char *const *)n->data)[0], "/bin/sh");
	assert_int_equal(((const uint32_t *)f->data)[0], 256);
	assert_int_equal(((const uint32_t *)f->data)[1], 1024);
	assert_string_equal(((const char *const *)n->data)[2], "bash");
	assert_string_equal(((const char *const *)n->data)[3], "zlib");
	assert_int_equal(pack_deps_add(&h, PACK_DEP_REQUIRE, "", "", 0, &err), KILN_EINVAL);
	pack_header_release(&h);
}

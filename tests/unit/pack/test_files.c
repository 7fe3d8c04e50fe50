#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"
#include "tests/unit/harness.h"

KILN_TEST(files_from_dirs_and_errors)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_file_list fl;
	struct pack_header h;
	const char *base[] = {"a", "b"}, *dirs[] = {"/x/", "/y/"};
	uint32_t idx[] = {1, 0}, bad[] = {0, 7}, sizes[] = {10, 20};

	pack_header_init(&h);
	assert_ok(pack_header_put_strings(&h, RPMTAG_BASENAMES, base, 2, &err), &err);
	assert_ok(pack_header_put_strings(&h, RPMTAG_DIRNAMES, dirs, 2, &err), &err);
	assert_ok(pack_header_put(&h, RPMTAG_DIRINDEXES, RPMTAG_TYPE_INT32, idx, 2, &err), &err);
	assert_ok(pack_header_put(&h, RPMTAG_FILESIZES, RPMTAG_TYPE_INT32, sizes, 2, &err), &err);
	assert_ok(pack_file_list_init(&fl, &h, &err), &err);
	assert_string_equal(fl.names[0], "/y/a");
	assert_string_equal(fl.names[1], "/x/b");
	assert_int_equal(fl.sizes[1], 20);
	pack_file_list_release(&fl);
	assert_ok(pack_header_put(&h, RPMTAG_DIRINDEXES, RPMTAG_TYPE_INT32, bad, 2, &err), &err);
	assert_int_equal(pack_file_list_init(&fl, &h, &err), KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "dirindex 7 out of range"));
	pack_file_list_release(&fl);
	pack_header_release(&h);
}

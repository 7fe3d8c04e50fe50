#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/scheduler_int.h"

KILN_TEST(datadir_blobs_are_content_addressed)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct scheduler s = {0};
	char dir[512], tmp[512], sha[65];

	snprintf(dir, sizeof(dir), "%s/blobs", kiln_test_tmpdir());
	snprintf(tmp, sizeof(tmp), "%s/tmp", kiln_test_tmpdir());
	assert_ok(util_mkdir_p(dir, 0755, &err), &err);
	assert_ok(util_mkdir_p(tmp, 0755, &err), &err);
	s.blob_dir = dir, s.tmp_dir = tmp;
	assert_ok(scheduler_blob_put_mem(&s, "abc", 3, sha, &err), &err);
	assert_string_equal(sha,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_true(scheduler_blob_exists(&s, sha));
	scheduler_blob_path(&s, sha, &p);
	assert_non_null(strstr(p.ptr, "/blobs/ba/ba7816bf"));
	/* storing the same bytes again is a no-op */
	assert_ok(scheduler_blob_put_mem(&s, "abc", 3, sha, &err), &err);
	assert_false(scheduler_blob_exists(&s,
	                                   "ffffffffffffffffffffffffffffffffffffffffffffffffffff"
	                                   "ffffffffffff"));
	kiln_buf_release(&p);
}

#include "util/util.h"

#include "tests/unit/harness.h"
#include "scheduler/http_int.h"

KILN_TEST(gitpin_commit_ids)
{
	assert_true(scheduler_git_commit_valid("0123456789abcdef0123456789abcdef01234567"));
	assert_true(scheduler_git_commit_valid(
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	assert_false(scheduler_git_commit_valid("0123456789ABCDEF0123456789abcdef01234567"));
	assert_false(scheduler_git_commit_valid("0123456789abcdef0123456789abcdef0123456"));
	assert_false(scheduler_git_commit_valid("main"));
	assert_false(scheduler_git_commit_valid(""));
	assert_false(scheduler_git_commit_valid(NULL));
}

KILN_TEST(gitpin_commit_from_the_manifest)
{
	char c[65];

	scheduler_git_commit_get("{\"git\":{\"commit\":\"" /* pinned */
	                         "1111111111111111111111111111111111111111\",\"ref\":\"main\"}}",
	                         c);
	assert_string_equal(c, "1111111111111111111111111111111111111111");
	scheduler_git_commit_get("{\"git\":{\"commit\":null,\"ref\":\"main\"}}", c);
	assert_string_equal(c, "");
	scheduler_git_commit_get("{\"git\":null,\"spec\":{}}", c);
	assert_string_equal(c, "");
	scheduler_git_commit_get("{\"git\":{\"commit\":\"../x\"}}", c);
	assert_string_equal(c, "");
	scheduler_git_commit_get("not json", c);
	assert_string_equal(c, "");
}

/* The key a job had when submitted: its manifest with the commit back to what the ref says. */
KILN_TEST(gitpin_submitted_key)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	char key[65], want[65];
	const char *unpinned = "{\"git\":{\"commit\":null,\"ref\":\"main\"},\"z\":1}";
	const char *full = "{\"git\":{\"commit\":\"2222222222222222222222222222222222222222\","
	                   "\"ref\":\"2222222222222222222222222222222222222222\"}}";

	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, unpinned, strlen(unpinned), want, &err),
	          &err);
	j.manifest = "{\"git\":{\"commit\":\"1111111111111111111111111111111111111111\","
	             "\"ref\":\"main\"},\"z\":1}";
	assert_ok(scheduler_git_submitted_key(&j, key, &err), &err);
	assert_string_equal(key, want);
	/* a ref that is a commit id was pinned at submission: the key is the stored one */
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, full, strlen(full), want, &err), &err);
	j.manifest = full;
	memcpy(j.content_key, want, 65);
	assert_ok(scheduler_git_submitted_key(&j, key, &err), &err);
	assert_string_equal(key, want);
	/* not a git job: the stored key */
	j.manifest = "{\"git\":null}";
	memcpy(j.content_key, "ab", 3);
	assert_ok(scheduler_git_submitted_key(&j, key, &err), &err);
	assert_string_equal(key, "ab");
}

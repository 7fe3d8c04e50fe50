#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(configdir_env_override)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	setenv("KILN_CONFIGDIR", "/some/where", 1);
	assert_ok(util_configdir_find(&b, &err), &err);
	assert_string_equal(b.ptr, "/some/where");
	unsetenv("KILN_CONFIGDIR");
	kiln_buf_release(&b);
}

KILN_TEST(configdir_found_from_build_tree)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf exe = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	/* The test binary lives in build/tests/, so neither ../configs nor ../lib/kiln
	 * holds a macros file there: the lookup must fail with a message naming the binary. */
	unsetenv("KILN_CONFIGDIR");
	assert_ok(util_self_exe(&exe, &err), &err);
	assert_true(exe.ptr[0] == '/');
	assert_int_equal(util_configdir_find(&b, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "KILN_CONFIGDIR"));
	kiln_buf_release(&b);
	kiln_buf_release(&exe);
}

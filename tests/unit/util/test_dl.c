#include "util/util.h"

#include "tests/unit/harness.h"

/* zlib is always there (kiln links it), so it stands in for the libraries opened late. */
struct zfns {
	const char *(*fn_zlibVersion)(void);
};

KILN_TEST(dl_fills_the_table_once)
{
	static const struct util_dl_sym syms[] = {
	    {"zlibVersion", offsetof(struct zfns, fn_zlibVersion)}};
	struct zfns z = {0};
	struct util_dl dl = UTIL_DL_INIT("libz.so.1", syms, z);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_dl_ready(&dl, &err), &err);
	assert_non_null(z.fn_zlibVersion);
	assert_int_equal(z.fn_zlibVersion()[0], '1');
	assert_ok(util_dl_ready(&dl, &err), &err);
}

KILN_TEST(dl_reports_a_missing_library_or_symbol_every_time)
{
	static const struct util_dl_sym nosym[] = {
	    {"zlibVersion", offsetof(struct zfns, fn_zlibVersion)},
	    {"kiln_no_such_symbol", offsetof(struct zfns, fn_zlibVersion)}};
	struct zfns z = {0};
	struct util_dl missing_lib = UTIL_DL_INIT("libkiln-no-such-library.so.0", nosym, z);
	struct util_dl missing_sym = UTIL_DL_INIT("libz.so.1", nosym, z);
	struct kiln_err err = KILN_ERR_INIT;
	int i;

	for (i = 0; i < 2; i++) {
		kiln_err_clear(&err);
		assert_int_equal(util_dl_ready(&missing_lib, &err), KILN_ENOTFOUND);
		assert_non_null(strstr(err.msg, "cannot load libkiln-no-such-library.so.0"));
		kiln_err_clear(&err);
		assert_int_equal(util_dl_ready(&missing_sym, &err), KILN_ENOTFOUND);
		assert_non_null(strstr(err.msg, "libz.so.1 has no kiln_no_such_symbol"));
	}
}

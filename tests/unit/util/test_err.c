#include "util/util.h"

#include "tests/unit/harness.h"

static kiln_rc fails_inner(struct kiln_err *err)
{
	return kiln_err_set(err, KILN_ESYNTAX, "unknown tag '%s'", "Foo");
}

KILN_TEST(err_first_error_wins)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_int_equal(fails_inner(&err), KILN_ESYNTAX);
	assert_int_equal(kiln_err_set(&err, KILN_EIO, "later"), KILN_EIO);
	assert_int_equal(err.code, KILN_ESYNTAX);
	assert_string_equal(err.msg, "unknown tag 'Foo'");
	assert_non_null(strstr(err.src_file, "test_err.c"));
	assert_true(err.src_line > 0);
}

KILN_TEST(err_wrap_prepends_context)
{
	struct kiln_err err = KILN_ERR_INIT;
	char out[1024];

	fails_inner(&err);
	kiln_err_wrap(&err, "while parsing %s", "preamble");
	assert_string_equal(err.msg, "while parsing preamble: unknown tag 'Foo'");
	kiln_err_locate(&err, "foo.spec", 12, 0);
	kiln_err_locate(&err, "other.spec", 99, 1);
	assert_string_equal(kiln_err_format(&err, out, sizeof(out)),
	                    "foo.spec:12: while parsing preamble: unknown tag 'Foo'");
	assert_int_equal(err.code, KILN_ESYNTAX);
}

KILN_TEST(err_wrap_on_clear_error_is_noop)
{
	struct kiln_err err = KILN_ERR_INIT;

	kiln_err_wrap(&err, "context");
	assert_int_equal(err.code, KILN_OK);
	assert_string_equal(err.msg, "");
	kiln_err_wrap(NULL, "context");
	assert_int_equal(kiln_err_set(NULL, KILN_EIO, "x"), KILN_EIO);
}

KILN_TEST(err_sys_records_errno)
{
	struct kiln_err err = KILN_ERR_INIT;

	errno = ENOENT;
	kiln_err_sys(&err, KILN_EIO, "cannot open '%s'", "x");
	assert_int_equal(err.sys_errno, ENOENT);
	assert_string_equal(err.msg, "cannot open 'x': No such file or directory");
}

KILN_TEST(err_format_variants_and_merge)
{
	struct kiln_err a = KILN_ERR_INIT;
	struct kiln_err b = KILN_ERR_INIT;
	char out[1024];

	kiln_err_set(&a, KILN_ELIMIT, "too deep");
	assert_string_equal(kiln_err_format(&a, out, sizeof(out)), "too deep");
	a.line = 3;
	assert_string_equal(kiln_err_format(&a, out, sizeof(out)), "line 3: too deep");
	kiln_err_merge(&b, &a);
	assert_int_equal(b.code, KILN_ELIMIT);
	kiln_err_clear(&a);
	assert_int_equal(a.code, KILN_OK);
	assert_string_equal(kiln_rc_str(KILN_ENOMEM), "out of memory");
	assert_string_equal(kiln_rc_str((kiln_rc)999), "unknown error");
}

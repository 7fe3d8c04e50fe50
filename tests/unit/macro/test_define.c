#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

KILN_TEST(define_body_rules)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect(ctx, "%define x a\\b\n[%x]", "[ab]");
	expect(ctx, "%define x a\\\\b\n[%x]", "[a\\b]");
	expect(ctx, "%define x  {a b} \n[%x]", " \n[a b]");
	expect(ctx, "%define x a %{\nb} c\n[%x]", "[a %{\nb} c]");
	expect(ctx, "%define x a\\\nb\n[%x]", "[a\nb]");
	expect(ctx, "%define x() {body}x\n[%x]", "x\n[body]");
	expect(ctx, "%define z zz\n\n[%z]", "[zz]");
	macro_ctx_free(ctx);
}

KILN_TEST(define_name_and_body_errors)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect_error(ctx, "%define x   \n", KILN_ESYNTAX, "Macro %x has empty body");
	expect_error(ctx, "%define _ a\n", KILN_ESYNTAX, "Macro %_ has illegal name (%define)");
	expect_error(ctx, "%define 1a b\n", KILN_ESYNTAX, "Macro %1a has illegal name");
	expect_error(ctx, "%define x(ab b\n", KILN_ESYNTAX, "Macro %x has unterminated opts");
	expect_error(ctx, "%define x %{ open\n", KILN_ESYNTAX, "Macro %x has unterminated body");
	expect_error(ctx, "%global x %{error:no}\n", KILN_EMACRO, "no");
	macro_ctx_free(ctx);
}

KILN_TEST(define_warns_about_missing_whitespace)
{
	struct diag_log d;
	struct macro_ctx *ctx = ctx_new(&d);

	define(ctx, "a-b x");
	assert_non_null(strstr(d.text.ptr, "Macro %a needs whitespace before body"));
	expect(ctx, "%a", "-b x");
	kiln_buf_release(&d.text);
	macro_ctx_free(ctx);
}

KILN_TEST(define_global_expands_once)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "v 1");
	expect(ctx, "%global g %v\n%define d %v\n%define v 2\n%g %d", "1 2");
	macro_ctx_free(ctx);
}

KILN_TEST(define_api)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);

	assert_ok(macro_define(ctx, "p", "ab:", "[%*]", MACRO_LEVEL_GLOBAL, &err), &err);
	expect(ctx, "%p -a x", "[x]");
	assert_true(macro_is_defined(ctx, "p"));
	assert_true(macro_is_defined(ctx, "basename"));
	assert_string_equal(macro_body_get(ctx, "p"), "[%*]");
	assert_null(macro_body_get(ctx, "basename"));
	assert_int_equal(macro_define(ctx, "9x", NULL, "b", 0, &err), KILN_ESYNTAX);
	kiln_err_clear(&err);
	assert_int_equal(macro_define(ctx, "lua", NULL, "b", 0, &err), KILN_EPRIV);
	kiln_err_clear(&err);
	assert_ok(macro_undefine(ctx, "p", &err), &err);
	assert_false(macro_is_defined(ctx, "p"));
	assert_ok(macro_undefine(ctx, "never_defined", &err), &err);
	assert_int_equal(macro_undefine(ctx, "lua", &err), KILN_EPRIV);
	macro_ctx_free(ctx);
}

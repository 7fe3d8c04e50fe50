#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

static void eval(struct macro_ctx *ctx, const char *e, unsigned flags, const char *want)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_expr_eval(ctx, e, strlen(e), flags, &out, &err), &err);
	assert_string_equal(out.ptr, want);
	kiln_buf_release(&out);
}

static void eval_err(struct macro_ctx *ctx, const char *e, const char *msg)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	assert_int_equal(macro_expr_eval(ctx, e, strlen(e), MACRO_EXPR_EXPAND, &out, &err),
	                 KILN_ESYNTAX);
	if (strncmp(err.msg, msg, strlen(msg)))
		print_error("got '%s'\n", err.msg);
	assert_int_equal(strncmp(err.msg, msg, strlen(msg)), 0);
	kiln_buf_release(&out);
}

KILN_TEST(expr_arithmetic_and_precedence)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	eval(ctx, "1+2*3", 0, "7");
	eval(ctx, "(1+2)*3", 0, "9");
	eval(ctx, "10 - 2 - 3", 0, "5");
	eval(ctx, "-7 / 2", 0, "-3");
	eval(ctx, "2147483647+1", 0, "-2147483648");
	eval(ctx, "99999999999", 0, "1215752191");
	eval(ctx, "!0 + !5", 0, "1");
	macro_ctx_free(ctx);
}

KILN_TEST(expr_logic_returns_operands)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	eval(ctx, "2 || 3", 0, "2");
	eval(ctx, "0 || 3", 0, "3");
	eval(ctx, "2 && 3", 0, "3");
	eval(ctx, "\"\" || \"foo\"", 0, "foo");
	eval(ctx, "0 && 1/0", 0, "0");
	eval(ctx, "1 || 0 && 0", 0, "0");
	eval(ctx, "1 ? 2 : 0 ? 3 : 4", 0, "2");
	eval(ctx, "0 ? 1/0 : 4", 0, "4");
	macro_ctx_free(ctx);
}

KILN_TEST(expr_strings_and_versions)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	eval(ctx, "\"a\" + \"b\"", 0, "ab");
	eval(ctx, "\"a\" < \"b\"", 0, "1");
	eval(ctx, "v\"1.0~rc\" < v\"1.0\"", 0, "1");
	eval(ctx, "v\"1.0-rc\" > v\"1.0\"", 0, "1");
	eval(ctx, "v\"1.0^post\" > v\"1.0\"", 0, "1");
	eval(ctx, "v\"2:1\" > v\"1:9\"", 0, "1");
	eval(ctx, "v\"1:2-3\"", 0, "1:2-3");
	macro_ctx_free(ctx);
}

KILN_TEST(expr_expanded_terms)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "two 2");
	define(ctx, "s abc");
	eval(ctx, "3 + 4 * (1 + %two)", MACRO_EXPR_EXPAND, "15");
	eval(ctx, "0%{?fedora} > 10", MACRO_EXPR_EXPAND, "0");
	eval(ctx, "%{two}0 + 1", MACRO_EXPR_EXPAND, "21");
	eval(ctx, "\"%s\" == \"abc\"", MACRO_EXPR_EXPAND, "1");
	eval(ctx, "\"%s\"", 0, "%s");
	macro_ctx_free(ctx);
}

KILN_TEST(expr_errors_use_rpm_wording)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "sum 1 + 2");
	define(ctx, "s abc");
	eval_err(ctx, "1 + \"a\"", "types must match");
	eval_err(ctx, "\"a\" - \"b\"", "- not supported for strings");
	eval_err(ctx, "\"a\" * \"b\"", "* and / not supported for strings");
	eval_err(ctx, "v\"1\" + v\"2\"", "+ and - not supported for versions");
	eval_err(ctx, "1/0", "division by zero");
	eval_err(ctx, "-\"a\"", "- only on numbers");
	eval_err(ctx, "foo", "bare words are no longer supported");
	eval_err(ctx, "%sum", "macro expansion did not return an integer");
	eval_err(ctx, "%s", "macro expansion returned a bare word");
	eval_err(ctx, "(1", "unmatched (");
	eval_err(ctx, "1 2", "syntax error in expression");
	eval_err(ctx, "", "unexpected end of expression");
	eval_err(ctx, "\" open", "unterminated string in expression");
	eval_err(ctx, "v\"\"", "invalid version");
	macro_ctx_free(ctx);
}

KILN_TEST(expr_bool_and_depth_limit)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	struct kiln_err err = KILN_ERR_INIT;
	char deep[2048];
	bool b = false;
	size_t i;

	assert_ok(macro_expr_bool(ctx, "\"x\"", 3, 0, &b, &err), &err);
	assert_true(b);
	assert_ok(macro_expr_bool(ctx, "v\"1\"", 4, 0, &b, &err), &err);
	assert_false(b);
	for (i = 0; i < 1000; i++)
		deep[i] = '(';
	deep[1000] = '1';
	deep[1001] = '\0';
	assert_int_equal(macro_expr_bool(ctx, deep, strlen(deep), 0, &b, &err), KILN_ESYNTAX);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	macro_ctx_free(ctx);
}

KILN_TEST(expr_lua_call)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	eval(ctx, "lua:string.upper(\"x\")", 0, "X");
	eval(ctx, "lua:string.rep(\"ab\", 2)", 0, "abab");
	macro_ctx_free(ctx);
}

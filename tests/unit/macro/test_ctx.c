#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

KILN_TEST(ctx_contexts_are_independent)
{
	struct macro_ctx *a = ctx_new(NULL);
	struct macro_ctx *b = ctx_new(NULL);

	define(a, "only_a 1");
	expect(a, "%{?only_a}", "1");
	expect(b, "%{?only_a}", "");
	macro_ctx_free(a);
	macro_ctx_free(b);
	macro_ctx_free(NULL);
}

static kiln_rc fake_shell(void *data, const char *cmd, struct kiln_buf *out, struct kiln_err *err)
{
	(void)err;
	(*(int *)data)++;
	kiln_buf_addf(out, "<%s>\n", cmd);
	return KILN_OK;
}

KILN_TEST(ctx_shell_is_pluggable)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	int calls = 0;

	macro_ctx_set_shell(ctx, fake_shell, &calls);
	expect(ctx, "%(uname -n)", "<uname -n>");
	assert_int_equal(calls, 1);
	macro_ctx_set_shell(ctx, NULL, NULL);
	expect(ctx, "%(echo host)", "host");
	macro_ctx_free(ctx);
}

KILN_TEST(ctx_expand_str)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);
	char *s = NULL;

	define(ctx, "x y");
	assert_ok(macro_expand_str(ctx, "[%x]", &s, &err), &err);
	assert_string_equal(s, "[y]");
	free(s);
	assert_int_equal(macro_expand_str(ctx, "%{error:no}", &s, &err), KILN_EMACRO);
	macro_ctx_free(ctx);
}

KILN_TEST(ctx_restricted_mode)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	macro_ctx_set_restricted(ctx, true);
	expect_error(ctx, "%(echo no)", KILN_EPRIV, "shell expansion is disabled");
	expect_error(ctx, "%{load:/etc/passwd}", KILN_EPRIV, "%{load:} is disabled");
	expect(ctx, "%{lua:print(io, os, posix, rpm.execute, string.upper('ok'))}",
	       "nil\tnil\tnil\tnil\tOK");
	expect_error(ctx, "%{lua:dofile('/etc/passwd')}", KILN_EMACRO, "lua script failed");
	macro_ctx_free(ctx);
}

KILN_TEST(ctx_expansion_limit)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB * 64);
	struct kiln_err err = KILN_ERR_INIT;
	const char *src = "%{len:%b10}";

	define(ctx, "b0 0123456789abcdef");
	define(ctx, "b1 %b0%b0%b0%b0");
	define(ctx, "b2 %b1%b1%b1%b1");
	define(ctx, "b3 %b2%b2%b2%b2");
	define(ctx, "b4 %b3%b3%b3%b3");
	define(ctx, "b5 %b4%b4%b4%b4");
	define(ctx, "b6 %b5%b5%b5%b5");
	define(ctx, "b7 %b6%b6%b6%b6");
	define(ctx, "b8 %b7%b7%b7%b7");
	define(ctx, "b9 %b8%b8%b8%b8");
	define(ctx, "b10 %b9%b9%b9%b9");
	macro_ctx_set_limit(ctx, 4096);
	/* The argument of %len is an intermediate buffer; it hits the limit too. */
	assert_int_equal(macro_expand(ctx, src, strlen(src), &out, &err), KILN_ELIMIT);
	kiln_buf_release(&out);
	macro_ctx_free(ctx);
}

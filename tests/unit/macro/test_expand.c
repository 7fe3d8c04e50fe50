#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

KILN_TEST(expand_plain_text_and_percent)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect(ctx, "no macros here", "no macros here");
	expect(ctx, "100%", "100%");
	expect(ctx, "%%", "%");
	expect(ctx, "%%%", "%%");
	expect(ctx, "a%%{b}", "a%{b}");
	expect(ctx, "%/x %|", "%/x %|");
	expect(ctx, "", "");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_simple_forms)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "a b");
	expect(ctx, "%a %{a} %{a}x %ax", "b b bx %ax");
	expect(ctx, "%{undefined} %undefined", "%{undefined} %undefined");
	expect(ctx, "%{}", "%{}");
	/* Text after an unknown %{ is scanned again, so macros in it still expand. */
	expect(ctx, "%{zz %a}", "%{zz b}");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_conditionals)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "on yes");
	expect(ctx, "%{?on}|%{?off}|%{!?off:N}|%{!?on:N}|%{?on:T}|%{?off:T}", "yes||N||T|");
	expect(ctx, "%?on|%!?on|%!?off", "yes||");
	expect(ctx, "%{!on}|%{!off}", "yes|%{!off}");
	expect(ctx, "%{??on}|%{!!?on}", "yes|yes");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_parametric_options_and_args)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "pm(ab:) <%{-a}|%{-b*}|%*|%#|%0|%**>");
	expect(ctx, "%pm -a -b x y z", "<-a|x|y z|2|pm|-a -b x y z>");
	expect(ctx, "%{pm -a -b x y z}", "<-a|x|y z|2|pm|-a -b x y z>");
	expect(ctx, "%pm", "<|||0|pm|>");
	/* GNU getopt permutes: options after operands still count. */
	expect(ctx, "%pm y -a z", "<-a||y z|2|pm|y -a z>");
	expect(ctx, "%pm -- -a", "<||-a|1|pm|-- -a>");
	expect(ctx, "%{?pm}", "<||%*|%#|%0|%**>");
	expect(ctx, "%{-a}%{?-a:x}", "");
	define(ctx, "dash(-) [%*|%#]");
	expect(ctx, "%dash -a -- b", "[-a -- b|3]");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_parametric_errors)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	struct diag_log d;

	macro_ctx_free(ctx);
	ctx = ctx_new(&d);
	define(ctx, "pm(ab:) x");
	expect_error(ctx, "%pm -c", KILN_ESYNTAX, "Unknown option c in pm(ab:)");
	expect_error(ctx, "%pm -b", KILN_ESYNTAX, "Unknown option b in pm(ab:)");
	assert_non_null(strstr(d.text.ptr, "option requires an argument -- 'b'"));
	kiln_buf_release(&d.text);
	macro_ctx_free(ctx);
}

KILN_TEST(expand_unbraced_call_takes_the_line)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "f() [%1|%2]");
	expect(ctx, "%f a b\nc", "[a|b]\nc");
	expect(ctx, "%f a\\\nb", "[a\\|%2]b");
	expect(ctx, "%{f:a b}", "[a b|%2]");
	expect(ctx, "%f", "[%1|%2]");
	/* Arguments are literal: %% in them stays a single %. */
	expect(ctx, "%f %%x", "[%x|%2]");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_scopes)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	struct diag_log d;

	macro_ctx_free(ctx);
	ctx = ctx_new(&d);
	define(ctx, "c1() [%#:%*]");
	define(ctx, "c2() %c1 %2 %1");
	expect(ctx, "%c2 a b", "[2:b a]");
	/* A local definition vanishes with its call and is reported when unused. */
	define(ctx, "loc() %define inner I%1\n");
	expect(ctx, "%{loc x}[%{?inner}]", "[]");
	assert_non_null(strstr(d.text.ptr, "Macro %inner defined but not used within scope"));
	define(ctx, "glob() %global gg G%1\n");
	expect(ctx, "%{glob 7}[%gg]", "[G7]");
	kiln_buf_release(&d.text);
	macro_ctx_free(ctx);
}

KILN_TEST(expand_recursion_limit)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "rec %rec");
	expect_error(ctx, "%rec", KILN_ELIMIT, "Too many levels of recursion");
	define(ctx, "r1 %r2");
	define(ctx, "r2 %r1");
	expect_error(ctx, "x%r1", KILN_ELIMIT, "Too many levels of recursion");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_unterminated)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect_error(ctx, "%{a", KILN_ESYNTAX, "Unterminated {: {a");
	expect_error(ctx, "%(echo", KILN_ESYNTAX, "Unterminated (: (echo");
	expect_error(ctx, "%[1", KILN_ESYNTAX, "Unterminated [: [1");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_shell)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "w world");
	expect(ctx, "%(echo hello %w)", "hello world");
	expect(ctx, "[%(printf 'a\\n\\n')]", "[a]");
	expect(ctx, "[%(printf ' a ')]", "[ a ]");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_self_undefining_macro_is_safe)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(macro_define(ctx, "once", NULL, "%undefine once\nran", 0, &err), &err);
	expect(ctx, "%once|%once", "\nran|%once");
	macro_ctx_free(ctx);
}

KILN_TEST(expand_output_limit)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	struct kiln_buf out = KILN_BUF_INIT(64);
	struct kiln_err err = KILN_ERR_INIT;

	define(ctx, "x 0123456789");
	define(ctx, "y %x%x%x%x%x%x%x%x%x%x");
	assert_int_equal(macro_expand(ctx, "%y", 2, &out, &err), KILN_ELIMIT);
	assert_int_equal(out.len, 0);
	kiln_buf_release(&out);
	macro_ctx_free(ctx);
}

/* rpmExpand's semantics: an error stops the expansion and the text before it stays (rpm's
 * %setup -n with an unterminated %{ prints "rm -rf 'a"); macro_expand() keeps nothing. */
KILN_TEST(expand_partial_keeps_text_before_an_error)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	static const char src[] = "x%{d}y";

	assert_ok(macro_define(ctx, "d", NULL, "a%{b", MACRO_LEVEL_GLOBAL, &err), &err);
	assert_int_equal(macro_expand_partial(ctx, src, strlen(src), &out, &err), KILN_ESYNTAX);
	assert_string_equal(out.ptr, "xa");
	assert_non_null(strstr(err.msg, "Unterminated {: {b"));
	kiln_buf_reset(&out);
	kiln_err_clear(&err);
	assert_int_equal(macro_expand(ctx, src, strlen(src), &out, &err), KILN_ESYNTAX);
	assert_string_equal(out.ptr, "");
	kiln_buf_release(&out);
	macro_ctx_free(ctx);
}

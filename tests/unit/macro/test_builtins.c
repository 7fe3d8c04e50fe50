#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

KILN_TEST(builtins_paths)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	/* rpm 4.20: POSIX basename(3) and dirname(3) (4.18 cut at the last '/'). */
	expect(ctx, "%{basename:/a/b/c.tar.gz}|%{basename:/a/b/}|%{basename:c}", "c.tar.gz|b|c");
	expect(ctx, "%{basename:/}|%{basename:}|%{basename:a//}", "/|.|a");
	expect(ctx, "%{dirname:/a/b/c}|%{dirname:/foo/}|%{dirname:dir}|%{dirname:/a}",
	       "/a/b|/|.|/");
	expect(ctx, "%{dirname:/}|%{dirname:}|%{dirname:a/b//}|%{dirname:../}", "/|.|a|.");
	expect(ctx, "%{suffix:foo.tar.gz}|%{suffix:a}|%{suffix:a.b/c}", "gz||b/c");
	expect(ctx, "%{url2path:http://x/y/z.tgz}|%{u2p:http://host}|%{url2path:file:///a/b}",
	       "/y/z.tgz|/|/a/b");
	expect(ctx, "%{url2path:/plain/path}", "/plain/path");
	expect(ctx, "%{exists:/}|%{exists:/nonexistent/x}", "1|0");
	macro_ctx_free(ctx);
}

KILN_TEST(builtins_strings)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect(ctx, "[%{shrink:  a   b  }]", "[a b]");
	expect(ctx, "%{shescape:a b}|%{shescape:it's}", "'a b'|'it'\\''s'");
	/* rpm 4.20: the marks only where the text is split into arguments. */
	expect(ctx, "%{quote:a b}|%{shrink:%{quote:a  b} c}", "a b|a b c");
	define(ctx, "c1() [%#:%1]");
	expect(ctx, "%{c1 %{quote:a b} c}|%{c1 %{shrink:%{quote:a b}  c}}", "[2:a b]|[2:a b]");
	expect(ctx, "%global q %{quote:x y}\n%{c1 %q z}|%q", "[2:x y]|x y");
	expect(ctx, "%{len:abc}|%{upper:abc}|%{lower:ABC}|%{reverse:abc}", "3|ABC|abc|cba");
	expect(ctx, "%{gsub aaa a b 2}|%{rep ai 3}|%{sub cd6317ba 1 7}", "bba|aiaiai|cd6317b");
	/* The unbraced form takes the first word only. */
	expect(ctx, "%shescape a b", "'a'");
	macro_ctx_free(ctx);
}

KILN_TEST(builtins_expand_expr_macrobody)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "x %y");
	define(ctx, "y Y");
	define(ctx, "sum 1 + 2");
	expect(ctx, "%{expand:%%{x}}|%{macrobody:x}|%{expr:%sum}", "Y|%y|3");
	expect(ctx, "%{expand:%%global g 42}%{g}", "42");
	expect_error(ctx, "%{macrobody:nope}", KILN_ENOTFOUND, "no such macro: 'nope'");
	macro_ctx_free(ctx);
}

KILN_TEST(builtins_argument_checks)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect_error(ctx, "%{basename}", KILN_ESYNTAX, "%basename: argument expected");
	expect_error(ctx, "%{lua}", KILN_ESYNTAX, "%lua: argument expected");
	expect_error(ctx, "%{dump x}", KILN_ESYNTAX, "%dump: unexpected argument");
	expect_error(ctx, "%{?basename}", KILN_ESYNTAX, "%basename: argument expected");
	expect(ctx, "%{?basename:yes}|%{!?basename:no}", "yes|");
	macro_ctx_free(ctx);
}

KILN_TEST(builtins_output_and_errors)
{
	struct diag_log d;
	struct macro_ctx *ctx = ctx_new(&d);

	expect(ctx, "%{warn:careful}x%{echo:said}", "x");
	assert_string_equal(d.text.ptr, "warning: careful\ninfo: said\n");
	expect_error(ctx, "a%{error:boom}b", KILN_EMACRO, "boom");
	kiln_buf_release(&d.text);
	macro_ctx_free(ctx);
}

KILN_TEST(builtins_define_undefine_dnl)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect(ctx, "%define x 1\n%{x}%undefine x\n[%{?x}]", "1\n[]");
	expect(ctx, "%{define:q w}%q|%{define q2 w2}%q2", "w|w2");
	expect(ctx, "a%dnl dropped %{error:not expanded}\nb", "ab");
	expect(ctx, "%{dnl dropped}kept", "kept");
	expect_error(ctx, "%define getenv x\n", KILN_EPRIV, "Macro %getenv is a built-in");
	expect_error(ctx, "%undefine basename", KILN_EPRIV, "is a built-in");
	macro_ctx_free(ctx);
}

KILN_TEST(builtins_sources_verbose_getncpus)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "SOURCE1 src.tgz");
	expect(ctx, "%{S:1}|%{P:2}", "src.tgz|%PATCH2");
	expect(ctx, "%verbose|[%{verbose:v}]", "0|[]");
	macro_ctx_set_verbose(ctx, true);
	expect(ctx, "%verbose|[%{verbose:v}]", "1|[v]");
	expect(ctx, "%[%{getncpus} >= 1]|%[%{getncpus proc} <= %{getncpus}]", "1|1");
	expect_error(ctx, "%{getncpus bogus}", KILN_ESYNTAX, "invalid argument");
	expect(ctx, "%{rpmversion}", "4.20.1");
	macro_ctx_free(ctx);
}

KILN_TEST(builtins_getenv_confdir_uncompress)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = ctx_new(NULL);

	setenv("KILN_TEST_VAR", "v1", 1);
	expect(ctx, "%{getenv:KILN_TEST_VAR}|%{getenv:KILN_NOT_SET_VAR}", "v1|");
	/* %getconfdir is rpm's directory whatever kiln's is (which %_kiln_confdir names). */
	assert_ok(macro_ctx_set_confdir(ctx, "/conf", &err), &err);
	expect(ctx, "%getconfdir|%_kiln_confdir", "/usr/lib/rpm|/conf");
	define(ctx, "__rpmuncompress /u");
	expect(ctx, "%{uncompress:a.gz}", "/u a.gz");
	macro_ctx_free(ctx);
}

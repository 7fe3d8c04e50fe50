#include "util/util.h"

#include "tests/unit/macro/macro_test.h"

KILN_TEST(lua_print_and_return)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect(ctx, "[%{lua:print(1)}]", "[1]");
	expect(ctx, "[%{lua:print(1) print(2)}]", "[12]");
	expect(ctx, "[%{lua:print(1, 2)}]", "[1\t2]");
	/* Numbers print as luaL_tolstring formats them, a __tostring metamethod included. */
	expect(ctx, "%{lua:print(1.5, 2^53, 1e100, -0.0, 3//1, math.mininteger, 1/0)}",
	       "1.5\t9.007199254741e+15\t1e+100\t-0.0\t3\t-9223372036854775808\tinf");
	expect(ctx,
	       "%{lua:debug.setmetatable(0, {__tostring = function() return 'N' end})}"
	       "%{lua:print(1, 2.5)}%{lua:debug.setmetatable(0, nil)}",
	       "N\tN");
	expect(ctx, "[%{lua:return 1, 'a'}]", "[1\ta]");
	expect(ctx, "%{lua:x = 5}%{lua:print(x)}", "5");
	macro_ctx_free(ctx);
}

KILN_TEST(lua_rpm_module)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "two 2");
	expect(ctx, "%{lua:print(rpm.expand('%two'))}", "2");
	expect(ctx, "%{lua:rpm.define('zz 5')}%zz", "5");
	expect(ctx, "%{lua:rpm.undefine('zz')}%zz", "%zz");
	expect(ctx, "%{lua:print(rpm.isdefined('two'))}", "true\tfalse");
	expect(ctx, "%{lua:print(rpm.vercmp('1.0', '1.1'), rpm.vercmp('1.0-2', '1.0'))}", "-1\t1");
	expect(ctx, "%{lua:local v = rpm.ver('1:2-3') print(v, v.e, v.v, v.r)}", "1:2-3\t1\t2\t3");
	expect(ctx, "%{lua:print(rpm.ver('1.0') < rpm.ver('1.1'))}", "true");
	expect(ctx, "%{lua:print(rpm.execute('true'))}", "0.0");
	expect(ctx, "%{lua:print(rpm.b64encode('hi'))}", "aGk=\n");
	expect(ctx, "%{lua:print(rpm.b64decode('aGk='))}", "hi");
	expect(ctx, "%{lua:print(#rpm.splitargs('a b  c'))}", "3");
	macro_ctx_free(ctx);
}

KILN_TEST(lua_macros_table)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "two 2");
	define(ctx, "pm(ab:) <%{-a}|%*>");
	expect(ctx, "%{lua:print(macros.two, macros.nosuch)}", "2\tnil");
	expect(ctx, "%{lua:macros.q = 'Q'}%q%{lua:macros.q = nil}[%{?q}]", "Q[]");
	expect(ctx, "%{lua:print(macros.pm({'-a', 'q'}), macros.pm('-a r s'))}",
	       "<-a|q>\t<-a|r s>");
	expect(ctx, "%{lua:print(macros.shescape({'a b'}))}", "'a b'");
	macro_ctx_free(ctx);
}

KILN_TEST(lua_opt_and_arg_in_parametric_macros)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "lm(ab:) %{lua:print(opt.a, opt.b, #arg, arg[1], arg[2])}");
	expect(ctx, "%lm -a -b x y z", "\tx\t2\ty\tz");
	expect(ctx, "%{lua:print(#arg, type(opt))}", "0\ttable");
	macro_ctx_free(ctx);
}

KILN_TEST(lua_posix_subset)
{
	struct macro_ctx *ctx = ctx_new(NULL);
	char src[512];
	char want[512];
	const char *dir = kiln_test_tmpdir();

	expect(ctx, "%{lua:print(posix.access('/'))}", "0.0");
	expect(ctx, "%{lua:print(posix.stat('/', 'type'))}", "directory");
	snprintf(src, sizeof(src), "%%{lua:print(posix.mkdir('%s/d'), posix.stat('%s/d').type)}",
	         dir, dir);
	expect(ctx, src, "0.0\tdirectory");
	snprintf(src, sizeof(src), "%%{lua:print(posix.mkdir('%s/d'))}", dir);
	snprintf(want, sizeof(want), "nil\t%s/d: File exists\t17.0", dir);
	expect(ctx, src, want);
	setenv("KILN_LUA_T", "yes", 1);
	expect(ctx, "%{lua:print(posix.getenv('KILN_LUA_T'))}", "yes");
	macro_ctx_free(ctx);
}

KILN_TEST(lua_errors_become_macro_errors)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	expect_error(ctx, "%{lua:x=}", KILN_ESYNTAX, "invalid syntax in lua script:");
	expect_error(ctx, "%{lua:error('boom')}", KILN_EMACRO, "lua script failed:");
	expect_error(ctx, "%{lua:error('boom')}", KILN_EMACRO, "boom");
	/* The first error wins: the inner macro error is what is reported. */
	expect_error(ctx, "%{lua:rpm.expand('%{error:inner}')}", KILN_EMACRO, "inner");
	macro_ctx_free(ctx);
}

KILN_TEST(lua_states_are_per_context)
{
	struct macro_ctx *a = ctx_new(NULL);
	struct macro_ctx *b = ctx_new(NULL);

	expect(a, "%{lua:shared = 1}", "");
	expect(b, "%{lua:print(shared)}", "nil");
	macro_ctx_free(a);
	macro_ctx_free(b);
}

/* Chunks that never name opt or arg compile without the prologue that declares them; they
 * must behave as if it were there. */
KILN_TEST(lua_chunks_with_and_without_the_prologue)
{
	struct macro_ctx *ctx = ctx_new(NULL);

	define(ctx, "lm(a) %{lua:print(select('#', ...), type(...), #select(2, ...))}");
	expect(ctx, "%lm -a x", "2\ttable\t1");
	expect(ctx, "%{lua:print(select('#', ...))}", "2");
	/* Named, the locals are there; seen through debug.getlocal too. */
	expect(ctx, "%{lua:print(type(opt), type(arg))}", "table\ttable");
	expect(ctx, "%{lua:print(debug.getlocal(1, 1), (debug.getlocal(1, 2)))}", "opt\targ");
	expect(ctx, "%{lua:local n = 0 for i = 1, 200 do n = n + 1 end print(n)}", "200");
	/* A chunk that does not compile alone is compiled after the prologue: its error is
	 * the one it always gave, and text that continues the prologue's "..." still does. */
	expect_error(ctx, "%{lua:= 1}", KILN_ESYNTAX,
	             "[string \"<lua>\"]:1: unexpected symbol near '='");
	expect_error(ctx, "%{lua:.. 1}", KILN_EMACRO, "attempt to concatenate a table value");
	macro_ctx_free(ctx);
}

/*
 * test_depline.c - worker/depline.c: generator output read as rpmbuild reads it. Expected
 * values and messages are Debian rpm 4.18's (rpmdeps on scripts whose #! line carries the
 * text; tests/integration/test_autodeps.py runs the same comparison).
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "worker/autodeps_int.h"
#include "tests/unit/harness.h"

struct got {
	char text[4096];
	size_t len;
	char log[1024];
	size_t loglen;
	struct kiln_err err;
	kiln_rc rc;
};

static kiln_rc add(void *data, const char *name, const char *evr, uint32_t flags,
                   struct kiln_err *err)
{
	struct got *g = data;
	int n = snprintf(g->text + g->len, sizeof(g->text) - g->len, "%s|%s|%" PRIu32 "\n", name,
	                 evr, flags);

	(void)err;
	if (n > 0 && (size_t)n < sizeof(g->text) - g->len)
		g->len += (size_t)n;
	return KILN_OK;
}

static void diag(void *data, enum kiln_log_level level, const char *msg)
{
	struct got *g = data;
	int n =
	    snprintf(g->log + g->loglen, sizeof(g->log) - g->loglen, "%d %s\n", (int)level, msg);

	if (n > 0 && (size_t)n < sizeof(g->log) - g->loglen)
		g->loglen += (size_t)n;
}

static struct got *parsen(const char *text, size_t len, bool provides, bool terminate)
{
	static struct got g;
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = macro_ctx_new(&err);
	struct worker_depline p = {"/f", provides, terminate, ctx, add, &g};

	assert_non_null(ctx);
	memset(&g, 0, sizeof(g));
	macro_ctx_set_diag(ctx, diag, &g);
	g.rc = worker_depline_parse(&p, text, len, &g.err);
	macro_ctx_free(ctx);
	return &g;
}

static struct got *parse(const char *text, bool provides, bool terminate)
{
	return parsen(text, strlen(text), provides, terminate);
}

static void ok(const char *text, bool provides, const char *want)
{
	struct got *g = parse(text, provides, true);

	assert_ok(g->rc, &g->err);
	assert_string_equal(g->text, want);
}

static void bad(const char *text, bool provides, const char *msg)
{
	struct got *g = parse(text, provides, true);

	assert_int_equal(g->rc, KILN_ESYNTAX);
	assert_string_equal(g->err.msg, msg);
}

KILN_TEST(depline_items)
{
	ok("libc.so.6()(64bit)\nrtld(GNU_HASH)\n", false,
	   "libc.so.6()(64bit)||16384\nrtld(GNU_HASH)||16384\n");
	ok("a = 1, b >= 2 c\r d < 3\n\n", true, "a|1|32776\nb|2|32780\nc||32768\nd|3|32770\n");
	ok("a => 1 b =< 2 c == 3 e > 4 f < 5", false,
	   "a|1|16396\nb|2|16394\nc|3|16392\ne|4|16388\nf|5|16386\n");
	/* a NUL ends a line; names are not checked past their first character */
	assert_int_equal(parsen("x!y\0z\n", 6, false, true)->rc, KILN_OK);
	assert_string_equal(parsen("x!y\0z\n", 6, false, true)->text, "x!y||16384\nz||16384\n");
	ok("\xc3\xa9t\xc3\xa9", false, "\xc3\xa9t\xc3\xa9||16384\n");
	ok("", false, "");
	bad("d <3", false, "/f: Dependency tokens must begin with alpha-numeric, '_' or '/': <3");
}

KILN_TEST(depline_item_errors)
{
	bad("/usr/bin/foo -x", false,
	    "/f: Dependency tokens must begin with alpha-numeric, '_' or '/': -x");
	bad("/usr/bin/foo >= 3 z", false,
	    "/f: Versioned file name not permitted: /usr/bin/foo >= 3 z");
	bad("p = ", false, "/f: Version required: p = ");
	bad("p(x) >= 1.0@x", false, "/f: Illegal char '@' (0x40) in: 1.0@x");
	bad("p = 1\xe9", false, "/f: Illegal char '?' (0xffffffe9) in: 1\xe9");
	bad("p = 1..2", false, "/f: Illegal sequence \"..\" in: 1..2");
	bad("p = 1-2-3", false, "/f: Invalid version (double separator '-'): 1-2-3: p = 1-2-3");
	bad("p = 1:2:3", false, "/f: Invalid version (double separator ':'): 1:2:3: p = 1:2:3");
	bad("p = e:1", false, "/f: Invalid version (epoch must be unsigned integer): e:1: p = e:1");
	bad("(a) = 1", true, "/f: No rich dependencies allowed for this type: (a) = 1");
}

KILN_TEST(depline_version_warnings)
{
	struct got *g = parse("p = 1-2-3 q = %{x}", false, false);

	assert_ok(g->rc, &g->err);
	assert_string_equal(g->text, "p|1-2-3|16392\nq|%{x}|16392\n");
	assert_string_equal(g->log, "1 /f: Invalid version (double separator '-'): 1-2-3: "
	                            "p = 1-2-3 q = %{x}\n"
	                            "1 /f: Possible unexpanded macro in: %{x}\n");
}

KILN_TEST(depline_rich)
{
	ok("(c >= 1 or (d))", false, "(c >= 1 or (d))||16384\n");
	ok("( c  =>  1 )b", false, "(c >= 1)||16384\nb||16384\n");
	ok("(a if b else c) (a with b) (pkgconfig(x) >= 2)", false,
	   "(a if b else c)||16384\n(a with b)||16384\n(pkgconfig(x) >= 2)||16384\n");
	ok("(any) 4", false, "(any)||16384\n4||16384\n");
}

KILN_TEST(depline_rich_errors)
{
	bad("(a,b)", false, "/f: Unknown rich dependency op 'b': (a,b)");
	bad("()", false, "/f: Empty rich dependency: ()");
	bad("(a", false, "/f: Unterminated rich dependency: (a: (a");
	bad("(a or (b", false, "/f: Unterminated rich dependency: (b: (a or (b");
	bad("(", false, "/f: Name required: (");
	bad("(a or b and c)", false, "/f: Cannot chain different ops: (a or b and c)");
	bad("(a if b if c)", false, "/f: Can only chain and/or/with ops: (a if b if c)");
	bad("(a or)", false, "/f: Missing argument to rich dependency op: (a or)");
	bad("(a >=)", false, "/f: Version required: (a >=)");
	bad("((a and b) with c)", false, "/f: Illegal ops in with/without: ((a and b) with c)");
	bad("((a unless b) and c)", false,
	    "/f: Illegal context for 'unless', please use 'or' instead: ((a unless b) and c)");
	/* the tag's own check comes after the dependency was read: rpm shows what follows */
	bad("(a unless b) c", false,
	    "/f: Illegal context for 'unless', please use 'or' instead:  c");
	bad("(/f >= 1)", false, "/f: Versioned file name not permitted: (/f >= 1)");
	bad("(a >= 1.0@x)", false, "/f: Illegal char '@' (0x40) in: 1.0@x");
}

KILN_TEST(depline_rich_depth_is_bounded)
{
	char text[2 * (KILN_LIMIT_EXPR_DEPTH + 10) + 2];
	size_t i, n = KILN_LIMIT_EXPR_DEPTH + 10;

	for (i = 0; i < n; i++)
		text[i] = '(';
	text[n] = 'a';
	for (i = 0; i < n; i++)
		text[n + 1 + i] = ')';
	text[2 * n + 1] = '\0';
	assert_int_equal(parse(text, false, true)->rc, KILN_ESYNTAX);
	/* The bound is the spec's: KILN_LIMIT_EXPR_DEPTH levels are read, one more is not. */
	n = KILN_LIMIT_EXPR_DEPTH;
	for (i = 0; i < n; i++)
		text[i] = '(';
	text[n] = 'a';
	for (i = 0; i < n; i++)
		text[n + 1 + i] = ')';
	text[2 * n + 1] = '\0';
	assert_int_equal(parse(text, false, true)->rc, KILN_OK);
	memmove(text + 1, text, 2 * n + 2);
	text[2 * n + 2] = ')';
	text[2 * n + 3] = '\0';
	assert_int_equal(parse(text, false, true)->rc, KILN_ESYNTAX);
	assert_non_null(strstr(parse(text, false, true)->err.msg,
	                       "/f: rich dependency nested too deeply: (((("));
}

/* What a callback returns stops the parse. */
static kiln_rc stop(void *data, const char *name, const char *evr, uint32_t flags,
                    struct kiln_err *err)
{
	(void)data;
	(void)evr;
	(void)flags;
	return kiln_err_set(err, KILN_ELIMIT, "stop at %s", name);
}

KILN_TEST(depline_callback_errors_stop)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_depline p = {"/f", false, true, NULL, stop, NULL};

	assert_int_equal(worker_depline_parse(&p, "a b", 3, &err), KILN_ELIMIT);
	assert_string_equal(err.msg, "stop at a");
}

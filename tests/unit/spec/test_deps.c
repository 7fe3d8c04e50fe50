/*
 * test_deps.c - spec/deps.c: dependency lists, comparisons and versions, rich dependencies
 * (spelling, operator chains, contexts, errors), rpmlib() names, qualifiers, sorted sets.
 *
 * Expected sets and messages come from Debian's rpmspec 4.18 (`rpmspec -q --qf
 * '[%{REQUIRENAME}|%{REQUIREFLAGS}|%{REQUIREVERSION};]'` with rpm's macro files). rpm's
 * macros set %_wrong_version_format_terminate_build to 1; the tests say when they do.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

/* A dependency set as "name|flags|evr;..." in set order. */
static const char *deps_str(const struct spec_deps *d, char *dst, size_t size)
{
	size_t len = 0;
	size_t i;

	dst[0] = '\0';
	for (i = 0; i < d->n && len < size; i++) {
		int n = snprintf(dst + len, size - len, "%s|%u|%s;", d->v[i].name,
		                 (unsigned)d->v[i].flags, d->v[i].evr);

		if (n < 0)
			break;
		len += (size_t)n;
	}
	return dst;
}

/* The spec text for one preamble line (line 6). */
static void spec_with(char *dst, size_t size, const char *line)
{
	snprintf(dst, size, PT_HEAD "%s\n%%description\nd\n", line);
}

/* line parses; the main package's (or the spec's build) dependencies of kind are want. */
static void expect_deps(struct pt *t, const char *line, enum spec_dep_kind kind, const char *want)
{
	char text[2048];
	char got[2048];
	struct spec *s;

	spec_with(text, sizeof(text), line);
	s = pt_ok(t, text);
	deps_str(&s->packages[0]->deps[kind], got, sizeof(got));
	if (strcmp(got, want))
		print_error("%s\ngot:  %s\nwant: %s\n", line, got, want);
	assert_string_equal(got, want);
}

static void expect_requires(const char *line, const char *want)
{
	struct pt t;

	pt_init(&t);
	expect_deps(&t, line, SPEC_DEPS_REQUIRES, want);
	pt_release(&t);
}

/* line fails on line 6 with msg. strict defines %_wrong_version_format_terminate_build 1,
 * as rpm's macros do. */
static void expect_dep_error(const char *line, bool strict, const char *msg)
{
	char text[2048];
	struct pt t;

	pt_init(&t);
	if (strict)
		pt_define(&t, "_wrong_version_format_terminate_build 1");
	spec_with(text, sizeof(text), line);
	pt_fail(&t, text, KILN_ESYNTAX, 6, msg);
	pt_release(&t);
}

KILN_TEST(deps_plain_items_and_separators)
{
	expect_requires("Requires: a >= 1, b, c <= 2:3-4", "a|12|1;b|0|;c|10|2:3-4;");
	expect_requires("Requires: a b c", "a|0|;b|0|;c|0|;");
	expect_requires("Requires: a,b", "a|0|;b|0|;");
	expect_requires("Requires: a, , b", "a|0|;b|0|;");
	/* Commas count as blanks everywhere, even between a name and its comparison. */
	expect_requires("Requires: a, >= 1", "a|12|1;");
	expect_requires("Requires: a >= , 1", "a|12|1;");
	expect_requires("Requires: a >= 1 , b", "a|12|1;b|0|;");
	/* A comparison is a word of its own. */
	expect_requires("Requires: a>=1", "a>=1|0|;");
	expect_requires("Requires: a=> 1", "1|0|;a=>|0|;");
	expect_requires("Requires: a(x86-64) >= 1", "a(x86-64)|12|1;");
	/* Only ASCII first characters are judged. */
	expect_requires("Requires: \xc3\xa9", "\xc3\xa9|0|;");
	expect_requires("Requires: a%{x}", "a%{x}|0|;");
}

KILN_TEST(deps_comparison_operators)
{
	expect_requires("Requires: a < 1", "a|2|1;");
	expect_requires("Requires: a <= 1", "a|10|1;");
	expect_requires("Requires: a =< 1", "a|10|1;");
	expect_requires("Requires: a = 1", "a|8|1;");
	expect_requires("Requires: a == 1", "a|8|1;");
	expect_requires("Requires: a >= 1", "a|12|1;");
	expect_requires("Requires: a => 1", "a|12|1;");
	expect_requires("Requires: a > 1", "a|4|1;");
	/* What rpm's version check lets through. */
	expect_requires("Requires: a >= 1~2^3", "a|12|1~2^3;");
	expect_requires("Requires: a >= 1-", "a|12|1-;");
	expect_requires("Requires: a >= -1", "a|12|-1;");
	expect_requires("Requires: a > :1", "a|4|:1;");
	expect_requires("Requires: a > 1:", "a|4|1:;");
	expect_requires("Requires: a > 2:1.0_3+x-4", "a|4|2:1.0_3+x-4;");
}

KILN_TEST(deps_sets_are_sorted_without_duplicates)
{
	expect_requires("Requires: b, a, a > 2, a > 1, a > 1, a >= 1",
	                "a|0|;a|4|1;a|12|1;a|4|2;b|0|;");
	/* The same name with other qualifiers is another dependency. */
	expect_requires("Requires: a\nRequires(pre): a\nRequires(pre): a", "a|0|;a|512|;");
}

KILN_TEST(deps_item_errors)
{
	static const char tokens[] = "Dependency tokens must begin with alpha-numeric, '_' or '/'";
	static const char *const bad_start[] = {
	    "Requires: -a",    "Requires: .a",     "Requires: a,>1",
	    "Requires: a >=1", "Requires: a <> 1", "Requires: %{x}",
	};
	char msg[256];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(bad_start); i++) {
		snprintf(msg, sizeof(msg), "%s: %s", tokens, bad_start[i]);
		expect_dep_error(bad_start[i], false, msg);
	}
	/* Items are checked in order. */
	expect_dep_error("Requires: a > 1-2-3, -b", true,
	                 "Invalid version (double separator '-'): 1-2-3: Requires: a > 1-2-3, -b");
	expect_dep_error("Requires: a > 1-2-3, -b", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Requires: a > 1-2-3, -b");
	expect_dep_error("Requires: a =", false, "Version required: Requires: a =");
	expect_dep_error("Requires: a >", false, "Version required: Requires: a >");
	expect_dep_error("Requires: a > ,", false, "Version required: Requires: a > ,");
	expect_dep_error("Requires: /bin/sh > 1", false,
	                 "Versioned file name not permitted: Requires: /bin/sh > 1");
	expect_requires("Requires: /bin/sh", "/bin/sh|0|;");
}

KILN_TEST(deps_version_characters)
{
	expect_dep_error("Requires: a > 1@2", false,
	                 "Illegal char '@' (0x40) in: Requires: a > 1@2");
	/* rpm names the last bad character, and looks for ".." only when there is none. */
	expect_dep_error("Requires: a > 1@2#3", false,
	                 "Illegal char '#' (0x23) in: Requires: a > 1@2#3");
	expect_dep_error("Requires: a > 1@2..3", false,
	                 "Illegal char '@' (0x40) in: Requires: a > 1@2..3");
	expect_dep_error("Requires: a > 1..2", false,
	                 "Illegal sequence \"..\" in: Requires: a > 1..2");
	expect_dep_error("Requires: a > 1\xc3\xa9", false,
	                 "Illegal char '?' (0xffffffa9) in: Requires: a > 1\xc3\xa9");
	expect_dep_error("Provides: a > 1@2", false,
	                 "Illegal char '@' (0x40) in: Provides: a > 1@2");
}

KILN_TEST(deps_unexpanded_macros_warn_once_per_version)
{
	struct pt t;
	char text[512];

	pt_init(&t);
	expect_deps(&t, "Requires: a > %{x}, b > %{y}", SPEC_DEPS_REQUIRES, "a|4|%{x};b|4|%{y};");
	assert_string_equal(
	    t.log, "warning: line 6: Possible unexpanded macro in: Requires: a > %{x}, b > %{y}\n"
	           "warning: line 6: Possible unexpanded macro in: Requires: a > %{x}, b > "
	           "%{y}\n");
	expect_deps(&t, "Requires: a > 1}", SPEC_DEPS_REQUIRES, "a|4|1};");
	assert_string_equal(t.log,
	                    "warning: line 6: Possible unexpanded macro in: Requires: a > 1}\n");
	/* Names are not looked at. */
	expect_deps(&t, "Requires: a%{x} > 1", SPEC_DEPS_REQUIRES, "a%{x}|4|1;");
	assert_string_equal(t.log, "");
	/* The warning comes before the version's error. */
	pt_define(&t, "_wrong_version_format_terminate_build 1");
	spec_with(text, sizeof(text), "Requires: a > x:%{y}");
	pt_fail(&t, text, KILN_ESYNTAX, 6,
	        "Invalid version (epoch must be unsigned integer): x:%{y}: Requires: a > x:%{y}");
	assert_string_equal(
	    t.log, "warning: line 6: Possible unexpanded macro in: Requires: a > x:%{y}\n");
	pt_release(&t);
}

KILN_TEST(deps_version_format_is_an_error_with_rpms_macros)
{
	expect_dep_error("Requires: a > 1-2-3", true,
	                 "Invalid version (double separator '-'): 1-2-3: Requires: a > 1-2-3");
	expect_dep_error("Requires: a > 1:2:3", true,
	                 "Invalid version (double separator ':'): 1:2:3: Requires: a > 1:2:3");
	expect_dep_error(
	    "Requires: a > x:1", true,
	    "Invalid version (epoch must be unsigned integer): x:1: Requires: a > x:1");
	expect_dep_error("Provides: a > 1:2:3", true,
	                 "Invalid version (double separator ':'): 1:2:3: Provides: a > 1:2:3");
	expect_dep_error("Obsoletes: a > 1-2-3", true,
	                 "Invalid version (double separator '-'): 1-2-3: Obsoletes: a > 1-2-3");
	expect_dep_error("Requires: (a > 1:2:3)", true,
	                 "Invalid version (double separator ':'): 1:2:3: Requires: (a > 1:2:3)");
}

KILN_TEST(deps_version_format_warns_without_rpms_macros)
{
	struct pt t;

	pt_init(&t);
	/* rpmspec --define '_wrong_version_format_terminate_build 0': one warning at the end
	 * of the line, about the last version that deserves it. */
	expect_deps(&t, "Requires: a > 1-2-3, b", SPEC_DEPS_REQUIRES, "a|4|1-2-3;b|0|;");
	assert_string_equal(t.log,
	                    "warning: line 6: Invalid version (double separator '-'): 1-2-3: "
	                    "Requires: a > 1-2-3, b\n");
	expect_deps(&t, "Requires: a > 1-2-3, b > x:1", SPEC_DEPS_REQUIRES, "a|4|1-2-3;b|4|x:1;");
	assert_string_equal(
	    t.log, "warning: line 6: Invalid version (epoch must be unsigned integer): x:1: "
	           "Requires: a > 1-2-3, b > x:1\n");
	expect_deps(&t, "Requires: (a > 1:2:3 or b)", SPEC_DEPS_REQUIRES, "(a > 1:2:3 or b)|0|;");
	assert_string_equal(t.log,
	                    "warning: line 6: Invalid version (double separator ':'): 1:2:3: "
	                    "Requires: (a > 1:2:3 or b)\n");
	/* "no" and 0 are off, like an undefined macro. */
	pt_define(&t, "_wrong_version_format_terminate_build no");
	expect_deps(&t, "Requires: a > 1-2-3", SPEC_DEPS_REQUIRES, "a|4|1-2-3;");
	pt_define(&t, "_wrong_version_format_terminate_build yes");
	pt_fail(&t, PT_HEAD "Requires: a > 1-2-3\n%description\nd\n", KILN_ESYNTAX, 6,
	        "Invalid version (double separator '-'): 1-2-3: Requires: a > 1-2-3");
	pt_release(&t);
}

KILN_TEST(deps_rpmlib_names)
{
	struct pt t;
	struct spec *s;
	char got[512];

	pt_init(&t);
	/* A requirement on rpm itself gets the RPMLIB sense (1 << 24). */
	expect_deps(&t, "Requires: rpmlib(Foo) <= 1", SPEC_DEPS_REQUIRES,
	            "rpmlib(Foo)|16777226|1;");
	expect_deps(&t, "Requires(pre): rpmlib(x)", SPEC_DEPS_REQUIRES, "rpmlib(x)|16777728|;");
	expect_deps(&t, "Conflicts: rpmlib(x)", SPEC_DEPS_CONFLICTS, "rpmlib(x)|16777216|;");
	expect_deps(&t, "Recommends: rpmlib(x)", SPEC_DEPS_RECOMMENDS, "rpmlib(x)|16777216|;");
	expect_deps(&t, "Supplements: rpmlib(x)", SPEC_DEPS_SUPPLEMENTS, "rpmlib(x)|16777216|;");
	expect_deps(&t, "OrderWithRequires: rpmlib(x)", SPEC_DEPS_ORDER, "rpmlib(x)|16777216|;");
	/* Inside a rich dependency the name is the expression's. */
	expect_deps(&t, "Requires: (rpmlib(x) or b)", SPEC_DEPS_REQUIRES, "(rpmlib(x) or b)|0|;");
	s = pt_ok(&t, PT_HEAD
	          "BuildRequires: rpmlib(x) > 1\nBuildConflicts: rpmlib(y)\n%description\nd\n");
	assert_string_equal(deps_str(&s->buildrequires, got, sizeof(got)), "rpmlib(x)|16777220|1;");
	assert_string_equal(deps_str(&s->buildconflicts, got, sizeof(got)), "rpmlib(y)|16777216|;");
	/* Trigger conditions keep their trigger sense only. */
	s = pt_ok(&t, PT_MAIN "%triggerin -- rpmlib(x)\n:\n");
	assert_string_equal(deps_str(&s->packages[0]->scripts[0].conds, got, sizeof(got)),
	                    "rpmlib(x)|65536|;");
	pt_release(&t);
	expect_dep_error("Provides: rpmlib(x)", false, "invalid dependency: Provides: rpmlib(x)");
	/* rpm also says "Only package names are allowed in Obsoletes"; this is its first. */
	expect_dep_error("Obsoletes: rpmlib(x)", false,
	                 "Illegal char ')' (0x29) in: Obsoletes: rpmlib(x)");
}

KILN_TEST(deps_obsoletes_names_are_checked_item_by_item)
{
	expect_dep_error("Obsoletes: a/b, -c", false,
	                 "Illegal char '/' (0x2f) in: Obsoletes: a/b, -c");
	expect_dep_error("Obsoletes: -c, a/b", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Obsoletes: -c, a/b");
}

KILN_TEST(deps_qualifiers_apply_to_every_item)
{
	expect_requires("Requires(post): a, (b or c)", "(b or c)|1024|;a|1024|;");
	expect_requires("Requires(pre,postun): a > 1", "a|4612|1;");
	expect_requires("Requires(meta): a", "a|536870912|;");
}

KILN_TEST(deps_rich_spelling)
{
	/* rpm stores the expression rebuilt from its parts. */
	expect_requires("Requires: (a or b)", "(a or b)|0|;");
	expect_requires("Requires: (a  or  b)", "(a or b)|0|;");
	expect_requires("Requires: ( a or b )", "(a or b)|0|;");
	expect_requires("Requires: (a, or b)", "(a or b)|0|;");
	expect_requires("Requires: (a => 1 or b == 2 or c =< 3)",
	                "(a >= 1 or b = 2 or c <= 3)|0|;");
	expect_requires("Requires: (a>=1 or b)", "(a>=1 or b)|0|;");
	expect_requires("Requires: (a(x86-64) >= 1 or b)", "(a(x86-64) >= 1 or b)|0|;");
	expect_requires("Requires: (a)", "(a)|0|;");
	expect_requires("Requires: ((a))", "((a))|0|;");
	/* After an expression a new item begins. */
	expect_requires("Requires: (a or b) c", "(a or b)|0|;c|0|;");
	expect_requires("Requires: c (a or b)", "(a or b)|0|;c|0|;");
	expect_requires("Requires: (a or b) , c", "(a or b)|0|;c|0|;");
	expect_requires("Requires: (a or b)(c)", "(a or b)|0|;(c)|0|;");
	expect_requires("Requires: (a or b) or c", "(a or b)|0|;c|0|;or|0|;");
}

KILN_TEST(deps_rich_operator_chains)
{
	expect_requires("Requires: (a or b or c)", "(a or b or c)|0|;");
	expect_requires("Requires: (a and b and c)", "(a and b and c)|0|;");
	expect_requires("Requires: (a with b with c)", "(a with b with c)|0|;");
	expect_requires("Requires: (a without b)", "(a without b)|0|;");
	expect_requires("Requires: (a if b else c)", "(a if b else c)|0|;");
	expect_requires("Requires: (a if b else (c or d))", "(a if b else (c or d))|0|;");
	expect_requires("Requires: (a or (b and c))", "(a or (b and c))|0|;");
	expect_requires("Requires: ((a or b) with c)", "((a or b) with c)|0|;");
	expect_requires("Requires: (a with (b or c))", "(a with (b or c))|0|;");
	expect_requires("Requires: (a if (b with c))", "(a if (b with c))|0|;");
	expect_requires("Requires: (a > 1 with b)", "(a > 1 with b)|0|;");
	expect_dep_error("Requires: (a or b and c)", false,
	                 "Cannot chain different ops: Requires: (a or b and c)");
	expect_dep_error("Requires: (a with b or c)", false,
	                 "Cannot chain different ops: Requires: (a with b or c)");
	expect_dep_error("Requires: (a if b else c if d)", false,
	                 "Cannot chain different ops: Requires: (a if b else c if d)");
	expect_dep_error("Requires: (a if b if c)", false,
	                 "Can only chain and/or/with ops: Requires: (a if b if c)");
	expect_dep_error("Requires: (a without b without c)", false,
	                 "Can only chain and/or/with ops: Requires: (a without b without c)");
	expect_dep_error("Requires: (a with (b and c))", false,
	                 "Illegal ops in with/without: Requires: (a with (b and c))");
	expect_dep_error("Requires: (a xor b)", false,
	                 "Unknown rich dependency op 'xor': Requires: (a xor b)");
	expect_dep_error("Requires: (a or(b))", false,
	                 "Unknown rich dependency op 'or(b': Requires: (a or(b))");
}

KILN_TEST(deps_rich_syntax_errors)
{
	expect_dep_error("Requires: (a or b", false,
	                 "Unterminated rich dependency: (a or b: Requires: (a or b");
	expect_dep_error("Requires: (a or (b", false,
	                 "Unterminated rich dependency: (b: Requires: (a or (b");
	expect_dep_error("Requires: (a or)", false,
	                 "Missing argument to rich dependency op: Requires: (a or)");
	expect_dep_error("Requires: ()", false, "Empty rich dependency: Requires: ()");
	expect_dep_error("Requires: (a >)", false, "Version required: Requires: (a >)");
	expect_dep_error("Requires: (a or b))", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Requires: (a or b))");
	expect_dep_error("Requires: (-a or b)", false,
	                 "Dependency tokens must begin with alpha-numeric, '_' or '/': "
	                 "Requires: (-a or b)");
	expect_dep_error("Requires: (/a > 1 or b)", false,
	                 "Versioned file name not permitted: Requires: (/a > 1 or b)");
	expect_dep_error("Requires: (a > 1@2 or b)", false,
	                 "Illegal char '@' (0x40) in: Requires: (a > 1@2 or b)");
	expect_dep_error(
	    "Requires: (a > 1-2-3 or b)", true,
	    "Invalid version (double separator '-'): 1-2-3: Requires: (a > 1-2-3 or b)");
}

KILN_TEST(deps_rich_contexts)
{
	struct pt t;
	struct spec *s;
	char got[256];

	/* Requirement-like tags refuse a top-level "unless", conflict-like ones an "if";
	 * an "if"/"unless" inside and/or counts as top level. */
	expect_dep_error(
	    "Requires: (a unless b)", false,
	    "Illegal context for 'unless', please use 'or' instead: Requires: (a unless b)");
	expect_dep_error("Requires: (a unless b else c)", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "Requires: (a unless b else c)");
	expect_dep_error("Requires: (a and (b unless c))", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "Requires: (a and (b unless c))");
	expect_dep_error("Recommends: (a unless b)", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "Recommends: (a unless b)");
	expect_dep_error("Requires: (a or (b if c))", false,
	                 "Illegal context for 'if', please use 'and' instead: "
	                 "Requires: (a or (b if c))");
	expect_dep_error("Conflicts: (a if b)", false,
	                 "Illegal context for 'if', please use 'and' instead: Conflicts: (a if b)");
	expect_dep_error(
	    "Supplements: (a if b)", false,
	    "Illegal context for 'if', please use 'and' instead: Supplements: (a if b)");
	expect_dep_error("BuildConflicts: (a if b)", false,
	                 "Illegal context for 'if', please use 'and' instead: "
	                 "BuildConflicts: (a if b)");
	expect_dep_error("BuildRequires: (a unless b)", false,
	                 "Illegal context for 'unless', please use 'or' instead: "
	                 "BuildRequires: (a unless b)");
	pt_init(&t);
	expect_deps(&t, "Conflicts: (a unless b)", SPEC_DEPS_CONFLICTS, "(a unless b)|0|;");
	expect_deps(&t, "Enhances: (a unless b)", SPEC_DEPS_ENHANCES, "(a unless b)|0|;");
	expect_deps(&t, "Suggests: (a if b)", SPEC_DEPS_SUGGESTS, "(a if b)|0|;");
	s = pt_ok(&t, PT_HEAD
	          "BuildRequires: (a if b)\nBuildConflicts: (a unless b)\n%description\nd\n");
	assert_string_equal(deps_str(&s->buildrequires, got, sizeof(got)), "(a if b)|0|;");
	assert_string_equal(deps_str(&s->buildconflicts, got, sizeof(got)), "(a unless b)|0|;");
	pt_release(&t);
	/* Some tags take none at all. */
	expect_dep_error("Provides: (a or b)", false,
	                 "No rich dependencies allowed for this type: Provides: (a or b)");
	expect_dep_error("OrderWithRequires: (a or b)", false,
	                 "No rich dependencies allowed for this type: OrderWithRequires: (a or b)");
}

KILN_TEST(deps_rich_nesting_is_limited)
{
	char line[2048];
	char text[2400];
	struct pt t;
	size_t n = 0;
	int i;

	n += (size_t)snprintf(line, sizeof(line), "Requires: ");
	for (i = 0; i < KILN_LIMIT_EXPR_DEPTH + 1; i++)
		line[n++] = '(';
	line[n++] = 'a';
	for (i = 0; i < KILN_LIMIT_EXPR_DEPTH + 1; i++)
		line[n++] = ')';
	line[n] = '\0';
	spec_with(text, sizeof(text), line);
	pt_init(&t);
	assert_int_equal(pt_run(&t, text, 0), KILN_ELIMIT);
	assert_non_null(strstr(t.err.msg, "rich dependency nested too deeply"));
	/* One level less is fine. */
	memmove(line + 10, line + 11, strlen(line + 11) + 1);
	line[strlen(line) - 1] = '\0';
	spec_with(text, sizeof(text), line);
	pt_ok(&t, text);
	assert_int_equal(t.spec->packages[0]->deps[SPEC_DEPS_REQUIRES].n, 1);
	pt_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* spec_deps_scan, the grammar the spec's tags and generator output (worker/depline.c)
 * share: items and complaints as the scanner reports them, before either caller words
 * them. */

struct scanned {
	char text[2048]; /* "I name|evr|sense|rich;" and "E/W/V code quote-kind msg: [quote];" */
	size_t len;
	kiln_rc bad_version_rc; /* what the note callback answers to a bad version format */
	int items_left;         /* the item callback fails when it reaches 0; -1: never */
};

static void scanned_add(struct scanned *g, const char *fmt, ...) KILN_PRINTF(2, 3);
static void scanned_add(struct scanned *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(g->text + g->len, sizeof(g->text) - g->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(g->text) - g->len)
		g->len += (size_t)n;
}

static kiln_rc scan_item(void *ctx, const struct spec_deps_item *it, struct kiln_err *err)
{
	struct scanned *g = ctx;

	if (g->items_left == 0)
		return kiln_err_set(err, KILN_EINVAL, "refused %s", it->name);
	if (g->items_left > 0)
		g->items_left--;
	scanned_add(g, "I %s|%s|%u|%d;", it->name, it->evr ? it->evr : "(null)",
	            (unsigned)it->sense, (int)it->rich);
	return KILN_OK;
}

static kiln_rc scan_note(void *ctx, const struct spec_deps_note *n, struct kiln_err *err)
{
	static const char kinds[] = {[SPEC_DEPS_NOTE_ERROR] = 'E',
	                             [SPEC_DEPS_NOTE_WARNING] = 'W',
	                             [SPEC_DEPS_NOTE_BAD_VERSION] = 'V'};
	static const char quotes[] = {[SPEC_DEPS_QUOTE_REST] = 'r',
	                              [SPEC_DEPS_QUOTE_FIELD] = 'f',
	                              [SPEC_DEPS_QUOTE_NAME] = 'n'};
	struct scanned *g = ctx;

	(void)err;
	scanned_add(g, "%c %d %c %s: [%.*s];", kinds[n->kind], (int)n->code, quotes[n->quote_kind],
	            n->msg, (int)n->quote_len, n->quote);
	return n->kind == SPEC_DEPS_NOTE_BAD_VERSION ? g->bad_version_rc : KILN_OK;
}

static kiln_rc scan_len(struct scanned *g, const char *text, size_t len, unsigned flags)
{
	static const struct spec_deps_scan_ops ops = {scan_item, scan_note};
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc;

	memset(g, 0, sizeof(*g));
	g->items_left = -1;
	rc = spec_deps_scan(text, len, flags, &ops, g, &err);
	if (rc && err.code)
		scanned_add(g, "err %s;", err.msg);
	return rc;
}

/* text scans with flags to want, with the result rc. */
static void expect_scan(const char *text, unsigned flags, kiln_rc rc, const char *want)
{
	struct scanned g;

	assert_int_equal(scan_len(&g, text, strlen(text), flags), rc);
	if (strcmp(g.text, want))
		print_error("%s\ngot:  %s\nwant: %s\n", text, g.text, want);
	assert_string_equal(g.text, want);
}

/* The flags each caller passes: the spec's tags by their sense, generator output by kind. */
#define SCAN_REQUIRES SPEC_DEPS_SCAN_RICH /* Requires:, BuildRequires:, generated requires */
#define SCAN_CONFLICTS (SPEC_DEPS_SCAN_RICH | SPEC_DEPS_SCAN_NEGATIVE)
#define SCAN_PROVIDES 0u /* Provides:, triggers, generated provides */
#define SCAN_FILE_TRIGGER SPEC_DEPS_SCAN_PATHS

KILN_TEST(deps_scan_items_and_separators)
{
	expect_scan("a >= 1, b,c <= 2:3-4", SCAN_PROVIDES, KILN_OK,
	            "I a|1|12|0;I b|(null)|0|0;I c|2:3-4|10|0;");
	/* Commas are blanks even between a name and its comparison; a comparison is a word. */
	expect_scan("a, >= , 1 b>=1 c =>\t2\r\n", SCAN_REQUIRES, KILN_OK,
	            "I a|1|12|0;I b>=1|(null)|0|0;I c|2|12|0;");
	expect_scan(" , ", SCAN_REQUIRES, KILN_OK, "");
}

KILN_TEST(deps_scan_stops_at_len_and_nul)
{
	struct scanned g;

	assert_int_equal(scan_len(&g, "a b", 1, SCAN_PROVIDES), KILN_OK);
	assert_string_equal(g.text, "I a|(null)|0|0;");
	assert_int_equal(scan_len(&g, "a >= 1\0 b", 9, SCAN_PROVIDES), KILN_OK);
	assert_string_equal(g.text, "I a|1|12|0;");
	/* "a >=" at the end of the text wants its version, whatever follows the end. */
	assert_int_equal(scan_len(&g, "a >= 1", 4, SCAN_PROVIDES), KILN_ESYNTAX);
	assert_string_equal(g.text, "E 3 r Version required: [a >=];");
	/* An expression cut by the end is unterminated. */
	assert_int_equal(scan_len(&g, "(a or b)", 7, SCAN_REQUIRES), KILN_ESYNTAX);
	assert_string_equal(g.text, "E 3 r Unterminated rich dependency: (a or b: [(a or b];");
	assert_int_equal(scan_len(&g, "(a or (", 7, SCAN_REQUIRES), KILN_ESYNTAX);
	assert_string_equal(g.text, "E 3 r Name required: [(a or (];");
}

KILN_TEST(deps_scan_checks_quote_the_rest_or_the_version)
{
	/* parseRCPOT's messages quote the text from the item on ... */
	expect_scan("x /bin/sh > 1 y", SCAN_PROVIDES, KILN_ESYNTAX,
	            "I x|(null)|0|0;E 3 r Versioned file name not permitted: [/bin/sh > 1 y];");
	expect_scan("x -y", SCAN_REQUIRES, KILN_ESYNTAX,
	            "I x|(null)|0|0;E 3 r Dependency tokens must begin with alpha-numeric, '_' or "
	            "'/': [-y];");
	/* ... rpmCharCheck's the version, after its warning about a macro. */
	expect_scan("p = %{x}@1..2", SCAN_PROVIDES, KILN_ESYNTAX,
	            "W 3 f Possible unexpanded macro in: [%{x}@1..2];"
	            "E 3 f Illegal char '@' (0x40) in: [%{x}@1..2];");
	expect_scan("p = 1..2", SCAN_PROVIDES, KILN_ESYNTAX,
	            "E 3 f Illegal sequence \"..\" in: [1..2];");
	expect_scan("p = 1\xc3\xa9", SCAN_PROVIDES, KILN_ESYNTAX,
	            "E 3 f Illegal char '?' (0xffffffa9) in: [1\xc3\xa9];");
	/* Only the first character of a name is judged, and only when it is ASCII. */
	expect_scan("\xc3\xa9 a!b", SCAN_PROVIDES, KILN_OK,
	            "I \xc3\xa9|(null)|0|0;I a!b|(null)|0|0;");
}

KILN_TEST(deps_scan_bad_versions_are_the_callers_call)
{
	struct scanned g;
	static const struct spec_deps_scan_ops ops = {scan_item, scan_note};
	struct kiln_err err = KILN_ERR_INIT;

	/* Answered with KILN_OK (a warning), the scan goes on ... */
	expect_scan("p = 1-2-3 q = e:1, r = 1:2:3", SCAN_REQUIRES, KILN_OK,
	            "V 3 r Invalid version (double separator '-'): 1-2-3: [p = 1-2-3 q = e:1, r = "
	            "1:2:3];I p|1-2-3|8|0;"
	            "V 3 r Invalid version (epoch must be unsigned integer): e:1: [q = e:1, r = "
	            "1:2:3];I q|e:1|8|0;"
	            "V 3 r Invalid version (double separator ':'): 1:2:3: [r = 1:2:3];"
	            "I r|1:2:3|8|0;");
	/* ... answered with an error, it stops there. */
	memset(&g, 0, sizeof(g));
	g.items_left = -1;
	g.bad_version_rc = KILN_ESYNTAX;
	assert_int_equal(spec_deps_scan("(a > 1-2-3 or b) c", 18, SCAN_REQUIRES, &ops, &g, &err),
	                 KILN_ESYNTAX);
	assert_string_equal(
	    g.text, "V 3 r Invalid version (double separator '-'): 1-2-3: [(a > 1-2-3 or b) c];");
}

KILN_TEST(deps_scan_rich_spelling_and_contexts)
{
	expect_scan("( a  =>  1 or b)c (d)", SCAN_REQUIRES, KILN_OK,
	            "I (a >= 1 or b)|(null)|0|1;I c|(null)|0|0;I (d)|(null)|0|1;");
	expect_scan("(a(x86-64) with (b or c))", SCAN_CONFLICTS, KILN_OK,
	            "I (a(x86-64) with (b or c))|(null)|0|1;");
	/* The tag's sense: requirement-like refuses a top-level "unless", conflict-like an
	 * "if"; that check comes once the expression was read, quoting what follows it. */
	expect_scan("(a unless b) c", SCAN_REQUIRES, KILN_ESYNTAX,
	            "E 3 r Illegal context for 'unless', please use 'or' instead: [ c];");
	expect_scan("(a unless b) c", SCAN_CONFLICTS, KILN_OK,
	            "I (a unless b)|(null)|0|1;I c|(null)|0|0;");
	expect_scan("(a if b)", SCAN_CONFLICTS, KILN_ESYNTAX,
	            "E 3 r Illegal context for 'if', please use 'and' instead: [];");
	/* Errors inside quote the whole expression on. */
	expect_scan("x ((a unless b) and c)", SCAN_CONFLICTS, KILN_ESYNTAX,
	            "I x|(null)|0|0;E 3 r Illegal context for 'unless', please use 'or' instead: "
	            "[((a unless b) and c)];");
	expect_scan("(a or b and c)", SCAN_REQUIRES, KILN_ESYNTAX,
	            "E 3 r Cannot chain different ops: [(a or b and c)];");
	expect_scan("(a,b)", SCAN_REQUIRES, KILN_ESYNTAX,
	            "E 3 r Unknown rich dependency op 'b': [(a,b)];");
	expect_scan("(a > 1@2)", SCAN_REQUIRES, KILN_ESYNTAX,
	            "E 3 f Illegal char '@' (0x40) in: [1@2];");
	expect_scan("a (b)", SCAN_PROVIDES, KILN_ESYNTAX,
	            "I a|(null)|0|0;E 3 r No rich dependencies allowed for this type: [(b)];");
}

KILN_TEST(deps_scan_file_trigger_conditions)
{
	expect_scan("/usr/lib /etc,/var", SCAN_FILE_TRIGGER, KILN_OK,
	            "I /usr/lib|(null)|0|0;I /etc|(null)|0|0;I /var|(null)|0|0;");
	/* The path check comes before checkDep and quotes the name alone. */
	expect_scan("/a -b > 1@2 c", SCAN_FILE_TRIGGER, KILN_ESYNTAX,
	            "I /a|(null)|0|0;E 3 n file trigger condition must begin with '/': [-b];");
	expect_scan("/a > 1", SCAN_FILE_TRIGGER, KILN_ESYNTAX,
	            "E 3 r Versioned file name not permitted: [/a > 1];");
	expect_scan("(/a)", SCAN_FILE_TRIGGER, KILN_ESYNTAX,
	            "E 3 r No rich dependencies allowed for this type: [(/a)];");
}

KILN_TEST(deps_scan_rich_depth_is_bounded)
{
	char text[2 * KILN_LIMIT_EXPR_DEPTH + 8];
	struct scanned g;
	size_t i, n = KILN_LIMIT_EXPR_DEPTH;

	for (i = 0; i < n; i++)
		text[i] = '(';
	text[n] = 'a';
	for (i = 0; i < n; i++)
		text[n + 1 + i] = ')';
	assert_int_equal(scan_len(&g, text, 2 * n + 1, SCAN_REQUIRES), KILN_OK);
	assert_int_equal(g.text[0], 'I');
	memmove(text + 1, text, 2 * n + 1);
	text[2 * n + 2] = ')';
	assert_int_equal(scan_len(&g, text, 2 * n + 3, SCAN_REQUIRES), KILN_ELIMIT);
	assert_non_null(strstr(g.text, "E 4 r rich dependency nested too deeply: [(((("));
}

KILN_TEST(deps_scan_callbacks_stop_it)
{
	struct scanned g;
	static const struct spec_deps_scan_ops ops = {scan_item, scan_note};
	struct kiln_err err = KILN_ERR_INIT;

	memset(&g, 0, sizeof(g));
	g.items_left = 1;
	assert_int_equal(spec_deps_scan("a (b) c", 7, SCAN_REQUIRES, &ops, &g, &err), KILN_EINVAL);
	assert_string_equal(err.msg, "refused (b)");
	assert_string_equal(g.text, "I a|(null)|0|0;");
}
